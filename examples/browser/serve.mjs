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
//
// tests/browser.test.mjs starts the same servers and drives the page with
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
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server.address().port));
  });
}

/** Starts both servers: { origin, pageUrl, apiUrl, requests, close() }. */
export async function startExampleServers({ pagePort = 0, apiPort = 0 } = {}) {
  const requests = [];
  const page = pageServer();
  const api = apiServer(requests);
  const p = await listen(page, pagePort);
  const a = await listen(api, apiPort);
  const apiUrl = `http://127.0.0.1:${a}`;
  return {
    origin: `http://127.0.0.1:${p}`,
    pageUrl: `http://127.0.0.1:${p}/?api=${encodeURIComponent(apiUrl)}`,
    apiUrl,
    requests,
    close: async () => {
      for (const s of [page, api]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(() => r()));
      }
    },
  };
}

if (process.argv[1] && normalize(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const s = await startExampleServers({ pagePort: Number(process.env.PORT || 8080), apiPort: Number(process.env.API_PORT || 8081) });
  console.log(`open ${s.pageUrl}`);
}
