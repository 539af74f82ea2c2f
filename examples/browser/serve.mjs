// The browser example's two local servers, both on 127.0.0.1:
//
//   page server  serves examples/browser/ at /, the playground at /playground/,
//                the package's js/, ruby/ and the node_modules files the pages
//                import (ruby.wasm 4.0 and 3.4, @ruby/wasm-wasi, @bjorn3/browser_wasi_shim),
//                and an empty page at /blank for tests that import the package
//   API server   another origin, with CORS headers: echoes what it received
//                (GET /hello, POST /form, GET /gzip, GET /status/404) and records
//                every request
//
//   node examples/browser/serve.mjs     # prints the page's URL; open it in a browser
//   PORT=9000 API_PORT=9001 node examples/browser/serve.mjs
//
// From the command line the servers take ports 8080 and 8081 when those are
// free and any free ports when they are not (the message says so); PORT and
// API_PORT choose them (0: any free port), and a chosen port that is in use
// is an error that names the variable.
//
// tests/browser/example-page.test.mjs starts the same servers and drives the page with
// headless Chromium.
import http from 'node:http';
import zlib from 'node:zlib';
import { createReadStream, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, normalize, extname, sep } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const root = normalize(join(here, '..', '..'));

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.rb': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.css': 'text/css',
};

// What the page may load: the example, the package, and these packages.
const ALLOWED = [
  join(root, 'examples', 'browser') + sep,
  join(root, 'playground') + sep,
  join(root, 'js') + sep,
  join(root, 'ruby') + sep,
  join(root, 'node_modules', '@ruby', 'wasm-wasi') + sep,
  join(root, 'node_modules', '@ruby', '4.0-wasm-wasi') + sep,
  join(root, 'node_modules', '@ruby', '3.4-wasm-wasi') + sep,
  join(root, 'node_modules', '@bjorn3', 'browser_wasi_shim') + sep,
];

function pageServer() {
  return http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let path = decodeURIComponent(url.pathname);
    if (path === '/') path = '/examples/browser/index.html';
    if (path === '/blank') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>blank</title>');
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(root, path));
    if (!ALLOWED.some((dir) => file.startsWith(dir))) {
      res.writeHead(404).end('not found');
      return;
    }
    let st;
    try {
      st = statSync(file);
    } catch {
      st = null;
    }
    if (!st || !st.isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] || 'application/octet-stream', 'Content-Length': st.size, 'Cache-Control': 'no-store' });
    createReadStream(file).pipe(res);
  });
}

function apiServer(requests) {
  return http.createServer((req, res) => {
    const body = [];
    req.on('data', (c) => body.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(body);
      const entry = { method: req.method, url: req.url, headers: req.rawHeaders, body: raw.toString('latin1') };
      requests.push(entry);
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', '*');
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, PATCH, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] || '*');
        res.setHeader('Access-Control-Max-Age', '600');
        res.writeHead(204).end();
        return;
      }
      const echo = JSON.stringify({ method: req.method, url: req.url, headers: req.rawHeaders, body: raw.toString('utf8') });
      if (req.url.startsWith('/gzip')) {
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('X-Served', 'gzip');
        res.end(zlib.gzipSync(echo));
        return;
      }
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('X-Served', 'plain');
      const status = /^\/status\/([1-5]\d\d)\b/.exec(req.url); // GET /status/404: that status
      if (status) res.writeHead(Number(status[1]), 'Status Test');
      res.end(echo);
    });
  });
}

function listen(server, port = 0) {
  return new Promise((resolve, reject) => {
    const onError = (e) => reject(e);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve(server.address().port);
    });
  });
}

// `port`, or (when `fallback` and it is in use) any free port
async function listenOrFallback(server, port, fallback) {
  try {
    return await listen(server, port);
  } catch (e) {
    if (!fallback || e.code !== 'EADDRINUSE') throw e;
    return listen(server, 0);
  }
}

/**
 * Starts both servers: { origin, pageUrl, apiUrl, pagePort, apiPort,
 * requests, close() }. pagePort, apiPort: 0 (default) for any free port.
 * fallback: { page, api } (or true for both): take any free port where the
 * one asked for is in use.
 */
export async function startExampleServers({ pagePort = 0, apiPort = 0, fallback = false } = {}) {
  const fb = typeof fallback === 'object' && fallback ? fallback : { page: !!fallback, api: !!fallback };
  const requests = [];
  const page = pageServer();
  const api = apiServer(requests);
  const listening = [];
  const close = async () => {
    for (const s of listening) {
      s.closeAllConnections();
      await new Promise((r) => s.close(() => r()));
    }
  };
  let p;
  let a;
  try {
    p = await listenOrFallback(page, pagePort, fb.page);
    listening.push(page);
    a = await listenOrFallback(api, apiPort, fb.api);
    listening.push(api);
  } catch (e) {
    await close();
    throw e;
  }
  const apiUrl = `http://127.0.0.1:${a}`;
  return {
    origin: `http://127.0.0.1:${p}`,
    pageUrl: `http://127.0.0.1:${p}/?api=${encodeURIComponent(apiUrl)}`,
    apiUrl,
    pagePort: p,
    apiPort: a,
    requests,
    close,
  };
}

// A port from the environment: undefined when the variable is unset or
// empty, else an integer 0..65535 (or an error naming the variable).
function envPort(name) {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`${name} must be a port number (0 to 65535, 0 for any free port), not ${JSON.stringify(v)}`);
  return Number(v);
}

/**
 * Starts the servers for a person at a terminal and prints `open <url>`
 * (urlOf(servers) gives the URL; the example's page by default). Ports: PORT
 * and API_PORT when set (a port in use is then an error naming the
 * variable), else 8080 and 8081, or any free ports where those are in use
 * (said in a line before the URL). On an error prints one line on stderr,
 * sets the exit status to 1 and returns null.
 */
export async function serveFromCommandLine(urlOf = (s) => s.pageUrl) {
  const wanted = [];
  try {
    for (const [name, dflt] of [['PORT', 8080], ['API_PORT', 8081]]) {
      const env = envPort(name);
      wanted.push({ name, port: env ?? dflt, fromEnv: env !== undefined });
    }
    const [page, api] = wanted;
    const s = await startExampleServers({
      pagePort: page.port,
      apiPort: api.port,
      fallback: { page: !page.fromEnv, api: !api.fromEnv },
    });
    for (const [w, got] of [[page, s.pagePort], [api, s.apiPort]]) {
      if (w.port !== 0 && got !== w.port) console.log(`port ${w.port} is in use: serving on ${got} instead (${w.name}=<port> chooses one)`);
    }
    console.log(`open ${urlOf(s)}`);
    return s;
  } catch (e) {
    let line = e && e.message ? e.message : String(e);
    if (e && (e.code === 'EADDRINUSE' || e.code === 'EACCES')) {
      const w = wanted.find((x) => x.port === e.port);
      line = `cannot listen on 127.0.0.1:${e.port}: ${e.code === 'EADDRINUSE' ? 'the port is in use' : 'permission denied'}`;
      if (w) line += ` (${w.name}=${e.port}); set ${w.name} to another port, or ${w.name}=0 for any free one`;
    }
    process.stderr.write(`${line}\n`);
    process.exitCode = 1;
    return null;
  }
}

if (process.argv[1] && normalize(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await serveFromCommandLine();
}
