// The chaos server: a child process (tests/support/chaos/index.mjs starts
// it) that misbehaves on purpose, on 127.0.0.1 only. The first segment of a
// request's path picks what it does with that request (and, for some, with
// the connection after it); separate ports stall or fail the TLS handshake.
// It counts the connections it accepts and the requests it reads; the
// parent asks for the counts, and resets them, over IPC.
//
// Run in its own process so that a client that blocks its JS thread (the
// blocking transport, native Ruby) still gets answers.
import net from 'node:net';
import tls from 'node:tls';
import zlib from 'node:zlib';

// cors: every head it writes lets any origin read the response (for pages),
// and a preflight (OPTIONS) gets a plain permission
const { key, cert, cors } = JSON.parse(process.argv[2] || '{}');
const CORS = cors ? ['Access-Control-Allow-Origin: *'] : [];

let stats = { connections: 0, requests: [] };
const live = new Set();

// Gaps long enough that the client has read what was sent before the fault
// (a reset may otherwise discard bytes still queued for the client).
const GAP = 60;

function head(status, fields) {
  return `HTTP/1.1 ${status}\r\n${[...fields, ...CORS].map((f) => `${f}\r\n`).join('')}\r\n`;
}

function ok(body = 'ok', fields = []) {
  const b = Buffer.from(body);
  return Buffer.concat([Buffer.from(head('200 OK', [`Content-Length: ${b.length}`, ...fields])), b]);
}

function chunked(parts) {
  return head('200 OK', ['Transfer-Encoding: chunked']) + parts.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('') + '0\r\n\r\n';
}

// A TCP reset (RST), not a close; for TLS, of the TCP socket under it.
function reset(s) {
  if (s.destroyed) return;
  try {
    s.resetAndDestroy();
  } catch {
    const raw = s._parent || s._parentWrap;
    if (raw && typeof raw.resetAndDestroy === 'function') raw.resetAndDestroy();
    s.destroy();
  }
}

function later(s, fn, ms = GAP) {
  const cancel = () => clearTimeout(t);
  const t = setTimeout(() => {
    s.off('close', cancel); // (a drip arms one per byte)
    if (!s.destroyed) fn();
  }, ms);
  s.once('close', cancel);
}

// Sends bytes one at a time, `ms` apart.
function drip(s, bytes, ms) {
  let i = 0;
  const next = () => {
    if (s.destroyed || i >= bytes.length) return;
    s.write(bytes.subarray(i, ++i));
    later(s, next, ms);
  };
  later(s, next, ms);
}

// What each path does: (socket, request, index of the request on its connection).
const BEHAVIOURS = {
  ok: (s, req) => s.write(ok(req.query.get('body') ?? 'ok')),
  // the request body's size and a digest of it, and the method
  echo: (s, req) => s.write(ok(`${req.method} ${req.body.length} ${sum(req.body)}`)),
  gzip: (s, req) => {
    const body = zlib.gzipSync(Buffer.from('gzipped '.repeat(Number(req.query.get('n') || 64))));
    s.write(Buffer.concat([Buffer.from(head('200 OK', ['Content-Encoding: gzip', `Content-Length: ${body.length}`])), body]));
  },
  chunked: (s, req) => s.write(chunked(Array.from({ length: Number(req.query.get('n') || 3) }, (_, i) => `chunk ${i};`))),
  big: (s, req) => s.write(ok('x'.repeat(Number(req.query.get('n') || 100000)))),
  // no answer, the connection reset or closed
  reset: (s) => reset(s),
  fin: (s) => s.end(),
  'reset-status': (s) => {
    s.write('HTTP/1.1 200 OK\r\n');
    later(s, () => reset(s));
  },
  'fin-status': (s) => s.end('HTTP/1.1 200 OK\r\n'),
  'reset-head': (s) => {
    s.write(head('200 OK', ['Content-Length: 10']));
    later(s, () => reset(s));
  },
  // the head and the reset at once: the reset comes before the client has
  // read the head
  'reset-head-now': (s) => {
    s.write(head('200 OK', ['Content-Length: 10']));
    reset(s);
  },
  'reset-body': (s) => {
    s.write(head('200 OK', ['Content-Length: 100']) + 'x'.repeat(50));
    later(s, () => reset(s));
  },
  // closes without a TLS close_notify
  'drop-body': (s) => {
    s.write(head('200 OK', ['Content-Length: 100']) + 'x'.repeat(50));
    later(s, () => s.destroy());
  },
  'fin-body': (s) => s.end(head('200 OK', ['Content-Length: 100']) + 'x'.repeat(50)),
  'reset-chunked': (s) => {
    s.write(head('200 OK', ['Transfer-Encoding: chunked']) + '5\r\nhello\r\n');
    later(s, () => reset(s));
  },
  'fin-chunked': (s) => s.end(head('200 OK', ['Transfer-Encoding: chunked']) + '5\r\nhello\r\n'),
  // keep-alive answers, then the server closes the idle connection
  'idle-close': (s) => {
    s.write(ok('first'));
    later(s, () => s.end(), 100);
  },
  // the same without a TLS close_notify (the TCP connection just closes)
  'idle-drop': (s) => {
    s.write(ok('first'));
    later(s, () => s.destroy(), 100);
  },
  // the close comes right behind the response (before the next request)
  'close-after': (s) => {
    s.end(ok('first'));
    s.destroy();
  },
  // the next request on the connection is read, then the connection closes
  'close-on-next': (s, req, i) => {
    if (i === 0) s.write(ok('first'));
    else s.destroy();
  },
  'reset-on-next': (s, req, i) => {
    if (i === 0) s.write(ok('first'));
    else reset(s);
  },
  // the head, then nothing (past read_timeout)
  'stall-body': (s) => s.write(head('200 OK', ['Content-Length: 10']) + 'abc'),
  // reads the request, never answers
  silent: () => {},
  'drip': (s, req) => drip(s, Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndrip'), Number(req.query.get('ms') || 20)),
  garbage: (s) => s.write('\x00\x01garbage \xff\r\n\r\n'),
  'garbage-after': (s) => s.write(Buffer.concat([ok('first'), Buffer.from('\x16\x03\x01 not http\r\n\r\n')])),
  glued: (s) => s.write(Buffer.concat([ok('first'), ok('glued')])),
  'flood-1xx': (s, req) => {
    const n = Number(req.query.get('n') || 1000);
    s.write(head('102 Processing', []).repeat(n) + head('103 Early Hints', ['Link: </a>; rel=preload']).repeat(3));
    s.write(ok('after 1xx'));
  },
  'close-more': (s) => {
    s.end(Buffer.concat([ok('closing', ['Connection: close']), Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra')]));
  },
};

function preflight(s) {
  s.write(head('204 No Content', ['Access-Control-Allow-Methods: GET, POST', 'Access-Control-Allow-Headers: *', 'Access-Control-Max-Age: 600']));
}

function sum(buf) {
  let h = 0;
  for (const b of buf) h = (h * 31 + b) >>> 0;
  return h.toString(16);
}

// Counts a connection and keeps it while it is open (for the stats and "drop").
function track(s) {
  stats.connections++;
  live.add(s);
  s.on('close', () => live.delete(s));
  s.on('error', () => {});
}

// Reads requests (head, and a Content-Length or chunked body) off a socket.
function serve(s) {
  track(s);
  let buf = Buffer.alloc(0);
  let index = 0;
  s.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    for (;;) {
      const req = takeRequest(buf);
      if (!req) break;
      buf = req.rest;
      stats.requests.push(`${req.method} ${req.path}`);
      const name = req.path.split('/')[1] || 'ok';
      const b = cors && req.method === 'OPTIONS' ? preflight : BEHAVIOURS[name] || BEHAVIOURS.ok;
      b(s, req, index++);
      if (s.destroyed) break;
    }
  });
}

function takeRequest(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const text = buf.subarray(0, end).toString('latin1');
  const [line, ...fields] = text.split('\r\n');
  const [method, target] = line.split(' ');
  let len = 0;
  let isChunked = false;
  for (const f of fields) {
    const m = /^([^:]+):\s*(.*)$/.exec(f);
    if (!m) continue;
    const k = m[1].toLowerCase();
    if (k === 'content-length') len = Number(m[2]);
    if (k === 'transfer-encoding' && /chunked/i.test(m[2])) isChunked = true;
  }
  let body;
  let rest;
  if (isChunked) {
    const parts = [];
    let p = end + 4;
    for (;;) {
      const eol = buf.indexOf('\r\n', p);
      if (eol < 0) return null;
      const n = parseInt(buf.subarray(p, eol).toString('latin1'), 16);
      if (n === 0) {
        const fin = buf.indexOf('\r\n', eol + 2);
        if (fin < 0) return null;
        rest = buf.subarray(fin + 2);
        break;
      }
      if (buf.length < eol + 2 + n + 2) return null;
      parts.push(buf.subarray(eol + 2, eol + 2 + n));
      p = eol + 2 + n + 2;
    }
    body = Buffer.concat(parts);
  } else {
    if (buf.length < end + 4 + len) return null;
    body = buf.subarray(end + 4, end + 4 + len);
    rest = buf.subarray(end + 4 + len);
  }
  const url = new URL(target, 'http://x');
  return { method, path: url.pathname, query: url.searchParams, body, rest: Buffer.from(rest) };
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

const servers = [];
const plain = net.createServer(serve);
servers.push(plain);
const ports = { plain: await listen(plain) };
if (key && cert) {
  const secure = tls.createServer({ key, cert }, serve);
  secure.on('tlsClientError', () => {});
  servers.push(secure);
  ports.tls = await listen(secure);
}
// accepts the TCP connection and never answers the ClientHello
const stall = net.createServer(track);
servers.push(stall);
ports.stall = await listen(stall);
// answers the ClientHello with a fatal handshake_failure alert, then closes
const alert = net.createServer((s) => {
  track(s);
  s.once('data', () => s.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])));
});
servers.push(alert);
ports.alert = await listen(alert);

process.on('message', (m) => {
  if (m.op === 'stats') {
    process.send({ id: m.id, stats: { ...stats, open: live.size } });
    if (m.reset) stats = { connections: 0, requests: [] };
  } else if (m.op === 'drop') {
    // closes every connection (between scenarios)
    for (const s of live) s.destroy();
    process.send({ id: m.id });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true, ports });
