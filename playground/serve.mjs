// `npm run playground`: serves the playground (and the package files it
// imports) on 127.0.0.1, with the browser example's CORS echo server as an
// endpoint for the optional Ruby part, and prints the page's URL.
//   npm run playground                   # 8080 and 8081, or free ports if those are in use
//   PORT=9000 API_PORT=9001 npm run playground
import { serveFromCommandLine } from '../examples/browser/serve.mjs';

await serveFromCommandLine((s) => `${s.origin}/playground/?api=${encodeURIComponent(s.apiUrl)}`);
