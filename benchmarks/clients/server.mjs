// The client benchmark's server: HTTP/1.1 over plain TCP and over TLS (a
// certificate for 127.0.0.1 and localhost made at start with openssl), on
// 127.0.0.1, keep-alive timeout 5 s.
//
//   node benchmarks/clients/server.mjs [--port P] [--tls-port Q]
//
// prints one JSON line, {"http":"http://127.0.0.1:P","https":"https://127.0.0.1:Q","ca":"/path/cert.pem"}
// ("https": null and "tlsError" when openssl is missing), and serves until
// stopped. Started by run.mjs as a child process, it also exits with it.
//
// Routes (bodies from bodies.mjs):
//   /bytes/:n    n bytes, Content-Length (the default URL: /bytes/2048)
//   /chunked/:n  the same bytes, Transfer-Encoding: chunked, 1 KiB chunks
//   /gzip/:n     the same bytes gzip-encoded when the request accepts gzip
//   /delay/:ms   the 2 KiB body after ms milliseconds
//   /close       the 2 KiB body with Connection: close
//   /flaky       the 2 KiB body; after every 4th response on a connection the
//                server closes it once it has been idle for 1 ms, without warning
//   /__stats     {"connections":…,"used":…,"requests":…,"cpuMs":…} as JSON:
//                connections that carried at least one request to the other
//                routes; "used": how many distinct connections carried
//                requests since the last /__stats?mark
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { makeCerts, haveOpenssl } from '../../tests/support/certs.mjs';
import { bytes, route } from './bodies.mjs';

const KEEP_ALIVE_MS = 5000;
const CHUNK = 1024;
const FLAKY_EVERY = 4;
const FLAKY_IDLE_MS = 1;

const stats = { connections: 0, used: 0, requests: 0 };
let epoch = 0;
const seen = Symbol('counted');
const gzipped = new Map();

function handle(req, res) {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/__stats') {
    if (url.searchParams.has('mark')) {
      epoch++;
      stats.used = 0;
    }
    const cpu = process.cpuUsage();
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Connection', 'close');
    res.end(JSON.stringify({ ...stats, cpuMs: (cpu.user + cpu.system) / 1000 }));
    return;
  }
  const r = route(url.pathname);
  if (!r) {
    res.statusCode = 404;
    res.end('not found\n');
    return;
  }
  const sock = req.socket;
  if (!sock[seen]) {
    sock[seen] = { responses: 0, busy: 0, epoch: -1 };
    stats.connections++;
  }
  stats.requests++;
  const state = sock[seen];
  if (state.epoch !== epoch) {
    state.epoch = epoch;
    stats.used++;
  }
  state.busy++;
  res.on('finish', () => {
    state.busy--;
    state.responses++;
    if (r.kind === 'flaky' && state.responses % FLAKY_EVERY === 0) {
      setTimeout(() => {
        if (state.busy === 0) sock.end();
      }, FLAKY_IDLE_MS);
    }
  });
  const body = bytes(r.size);
  res.setHeader('Content-Type', 'application/octet-stream');
  if (r.kind === 'close') res.setHeader('Connection', 'close');
  if (r.kind === 'delay') {
    const t = setTimeout(() => send(res, body), r.delayMs);
    res.on('close', () => clearTimeout(t));
  } else if (r.kind === 'chunked') {
    for (let i = 0; i < body.length; i += CHUNK) res.write(body.subarray(i, i + CHUNK));
    res.end();
  } else if (r.kind === 'gzip' && /\bgzip\b/.test(req.headers['accept-encoding'] || '')) {
    let z = gzipped.get(r.size);
    if (!z) gzipped.set(r.size, (z = zlib.gzipSync(body)));
    res.setHeader('Content-Encoding', 'gzip');
    send(res, z);
  } else {
    send(res, body);
  }
}

function send(res, body) {
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

function configure(server) {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1000;
  server.requestTimeout = 0;
  server.on('clientError', (err, socket) => socket.destroy());
  return server;
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server.address().port));
  });
}

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};

const plain = configure(http.createServer(handle));
const info = { http: `http://127.0.0.1:${await listen(plain, Number(opt('port', 0)))}`, https: null, ca: null };
let certs = null;
if (haveOpenssl()) {
  certs = makeCerts();
  const secure = configure(https.createServer({ key: certs.key, cert: certs.cert }, handle));
  info.https = `https://127.0.0.1:${await listen(secure, Number(opt('tls-port', 0)))}`;
  info.ca = certs.certPath;
} else {
  info.tlsError = 'openssl is not installed';
}

const stop = () => {
  if (certs) certs.cleanup();
  process.exit(0);
};
if (process.send) {
  // Run by run.mjs: it stops the server by closing the channel (so does its
  // own end); a stray signal sent by name to "server.mjs" processes does not.
  process.on('disconnect', stop);
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  process.send(info);
} else {
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  console.log(JSON.stringify(info));
}
