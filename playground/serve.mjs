// `npm run playground`: serves the playground (and the package files it
// imports) on 127.0.0.1, with the browser example's CORS echo server as an
// endpoint for the optional Ruby part.
//   PORT=8080 API_PORT=8081 npm run playground
import { startExampleServers } from '../examples/browser/serve.mjs';

const s = await startExampleServers({ pagePort: Number(process.env.PORT || 8080), apiPort: Number(process.env.API_PORT || 8081) });
console.log(`open ${s.origin}/playground/?api=${encodeURIComponent(s.apiUrl)}`);
