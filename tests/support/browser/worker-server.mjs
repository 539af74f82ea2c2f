// Two local servers for pages that run ruby.wasm in a Worker (the Worker's
// script must come from the page's origin), both on 127.0.0.1:
//
//   page server  /blank (an empty page) and the files a Worker imports: the
//                package's js/, tests/support/browser/, ruby.wasm 4.0 and
//                3.4, @ruby/wasm-wasi, @bjorn3/browser_wasi_shim; /script
//                a page running the module text set with setScript(text),
//                which reports a JSON value with POST /report (onReport)
//   API server   another origin, with CORS headers; records every request:
//                GET|POST /echo        { method, url, type, length, hex } of
//                                      what it received (hex: the body's bytes)
//                GET /bytes?n=N        N bytes: 0, 1, ..., 255, 0, 1, ...
//                GET /slow?ms=M        /echo's answer after M ms
//                GET /redirect         302 to /echo
//                GET /text?s=S         S as text/plain
//                GET /gzip?s=S         S, gzipped (Content-Encoding: gzip)
//                GET /stream?n=N&piece=P&ms=M
//                                      /bytes?n=N's body, P bytes every M ms
//                GET /held?n=N&id=K    /bytes?n=N's body: 64 KiB of it, the
//                                      rest once /release?id=K is asked for
//                GET /release?id=K     { sent, waiting } (the bytes of the
//                                      body /held?id=K had sent, and whether
//                                      it was there), and lets it go on
//
// startWorkerServers({ isolated }) → { origin, api, refused (a URL whose
// port takes no connection), requests, setScript(text), onReport(f),
// close() }; isolated: the page server makes its pages cross-origin
// isolated (COOP and COEP on every response).
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { createReadStream, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, normalize, extname, sep } from 'node:path';

const root = normalize(fileURLToPath(new URL('../../../', import.meta.url)));

const TYPES = { '.mjs': 'text/javascript; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.html': 'text/html; charset=utf-8' };

const ALLOWED = [
  join(root, 'js') + sep,
  join(root, 'tests', 'support', 'browser') + sep,
  join(root, 'node_modules', '@ruby', 'wasm-wasi') + sep,
  join(root, 'node_modules', '@ruby', '4.0-wasm-wasi') + sep,
  join(root, 'node_modules', '@ruby', '3.4-wasm-wasi') + sep,
  join(root, 'node_modules', '@bjorn3', 'browser_wasi_shim') + sep,
];

function pageServer(isolated) {
  const server = http.createServer((req, res) => {
    if (isolated) {
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    }
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/blank') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>blank</title>');
      return;
    }
    if (path === '/script') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' })
        .end(`<!doctype html><title>script</title><script type="module">\n${server.script}\n</script>`);
      return;
    }
    if (path === '/report' && req.method === 'POST') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(204).end();
        let value;
        try {
          value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch (e) {
          value = { error: `a report that is not JSON: ${e.message}` };
        }
        if (server.onReport) server.onReport(value);
      });
      return;
    }
    const file = normalize(join(root, path));
    let st = null;
    try {
      st = ALLOWED.some((dir) => file.startsWith(dir)) ? statSync(file) : null;
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
  server.script = '';
  server.onReport = null;
  return server;
}

const PATTERN = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function pattern(n) {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i += 256) PATTERN.copy(out, i, 0, Math.min(256, n - i));
  return out;
}

function apiServer(requests) {
  const timers = new Set();
  const held = new Map(); // id → { sent, go() }
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url, 'http://x');
      requests.push({ method: req.method, url: req.url, headers: req.rawHeaders, length: body.length });
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', '*');
      res.setHeader('Cache-Control', 'no-store');
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, PATCH, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] || '*');
        res.setHeader('Access-Control-Max-Age', '600');
        res.writeHead(204).end();
        return;
      }
      const echo = () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ method: req.method, url: req.url, type: req.headers['content-type'] ?? null, length: body.length, hex: body.toString('hex') }));
      };
      if (url.pathname === '/bytes') {
        const n = Number(url.searchParams.get('n')) || 0;
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': n }).end(pattern(n));
      } else if (url.pathname === '/stream') {
        const out = pattern(Number(url.searchParams.get('n')) || 0);
        const piece = Number(url.searchParams.get('piece')) || 65536;
        const ms = Number(url.searchParams.get('ms')) || 0;
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': out.length });
        let at = 0;
        const next = () => {
          if (res.destroyed) return;
          res.write(out.subarray(at, at + piece));
          at += piece;
          if (at >= out.length) {
            res.end();
            return;
          }
          const t = setTimeout(() => {
            timers.delete(t);
            next();
          }, ms);
          timers.add(t);
        };
        next();
      } else if (url.pathname === '/held') {
        const out = pattern(Number(url.searchParams.get('n')) || 0);
        const first = Math.min(out.length, 65536);
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': out.length });
        res.write(out.subarray(0, first));
        held.set(url.searchParams.get('id'), { sent: first, go: () => res.end(out.subarray(first)) });
      } else if (url.pathname === '/release') {
        const h = held.get(url.searchParams.get('id'));
        held.delete(url.searchParams.get('id'));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ sent: h ? h.sent : 0, waiting: !!h }));
        if (h) h.go();
      } else if (url.pathname === '/slow') {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) echo();
        }, Number(url.searchParams.get('ms')) || 0);
        timers.add(t);
      } else if (url.pathname === '/redirect') {
        res.writeHead(302, { Location: '/echo?redirected' }).end();
      } else if (url.pathname === '/text') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(url.searchParams.get('s') ?? '');
      } else if (url.pathname === '/gzip') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Encoding': 'gzip' }).end(zlib.gzipSync(url.searchParams.get('s') ?? ''));
      } else echo();
    });
  });
  server.clearTimers = () => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
  };
  return server;
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

// A port nothing listens on (taken, then let go).
async function closedPort() {
  const s = net.createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

export async function startWorkerServers({ isolated = false } = {}) {
  const requests = [];
  const page = pageServer(isolated);
  const api = apiServer(requests);
  const pagePort = await listen(page);
  const apiPort = await listen(api);
  return {
    origin: `http://127.0.0.1:${pagePort}`,
    api: `http://127.0.0.1:${apiPort}`,
    refused: `http://127.0.0.1:${await closedPort()}/`,
    requests,
    setScript(text) {
      page.script = text;
    },
    onReport(f) {
      page.onReport = f;
    },
    async close() {
      api.clearTimers();
      for (const s of [page, api]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(() => r()));
      }
    },
  };
}
