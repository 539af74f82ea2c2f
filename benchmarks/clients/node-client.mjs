// Node's HTTP clients, one per process (run.mjs starts `node node-client.mjs NAME`):
//   http     node:http — one-off: a new connection per request (agent: false);
//            persistent: an Agent with keepAlive
//   undici   undici's request() over a Pool — one-off: reset (Connection: close)
//   fetch    the global fetch — one-off: Connection: close
//   net      a raw node:net / node:tls socket: writes a GET, reads the
//            response by Content-Length (one-off: Connection: close and a new socket)
// -c K: K lanes in flight at once. TLS trust comes from NODE_EXTRA_CA_CERTS
// (set by run.mjs), so every client here trusts the server the same way.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { createRequire } from 'node:module';
import { serve, Tally } from './worker.mjs';

const require = createRequire(import.meta.url);

function readAll(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

const CLIENTS = {
  http: {
    version: () => `node ${process.version}`,
    setup(url) {
      this.mod = url.protocol === 'https:' ? https : http;
      this.agent = new this.mod.Agent({ keepAlive: true });
    },
    session(url, persistent) {
      const agent = persistent ? this.agent : false;
      return {
        get: () =>
          new Promise((resolve, reject) => {
            const req = this.mod.get(url, { agent }, (res) => {
              readAll(res).then((body) => resolve({ status: res.statusCode, body }), reject);
            });
            req.on('error', reject);
          }),
      };
    },
  },

  undici: {
    version: () => `undici ${require('undici/package.json').version}`,
    setup(url) {
      const { Pool } = require('undici');
      this.pool = new Pool(url.origin);
    },
    session(url, persistent) {
      const opts = { path: url.pathname + url.search, method: 'GET', reset: !persistent };
      return {
        get: async () => {
          const r = await this.pool.request(opts);
          return { status: r.statusCode, body: Buffer.from(await r.body.arrayBuffer()) };
        },
      };
    },
  },

  fetch: {
    version: () => `node ${process.version} (undici ${process.versions.undici})`,
    setup() {},
    session(url, persistent) {
      const init = persistent ? undefined : { headers: { connection: 'close' } };
      return {
        get: async () => {
          const r = await fetch(url, init);
          return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
        },
      };
    },
  },

  net: {
    version: () => `node ${process.version}`,
    setup() {},
    session(url, persistent) {
      return rawSession(url, persistent);
    },
  },
};

// seed 001's raw socket: one GET written, the response read by its
// Content-Length; persistent: the socket stays for the next request.
function rawSession(url, persistent) {
  const request = Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${persistent ? '' : 'Connection: close\r\n'}\r\n`, 'latin1');
  const secure = url.protocol === 'https:';
  const port = Number(url.port) || (secure ? 443 : 80);
  let sock = null;
  let buf = Buffer.alloc(0);
  let ended = false;
  let failure = null;
  let wake = null;
  const signal = () => {
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const connect = () =>
    new Promise((resolve, reject) => {
      buf = Buffer.alloc(0);
      ended = false;
      failure = null;
      const s = secure
        ? tls.connect({ host: url.hostname, port, servername: net.isIP(url.hostname) ? undefined : url.hostname })
        : net.connect({ host: url.hostname, port });
      s.setNoDelay(true);
      s.once(secure ? 'secureConnect' : 'connect', () => resolve(s));
      s.on('data', (d) => {
        buf = buf.length ? Buffer.concat([buf, d]) : d;
        signal();
      });
      s.on('end', () => {
        ended = true;
        signal();
      });
      s.on('error', (e) => {
        failure = e;
        reject(e);
        signal();
      });
    });
  const response = async () => {
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = buf.toString('latin1', 0, end);
        const m = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
        if (!m) throw new Error('no Content-Length in the response');
        const total = end + 4 + Number(m[1]);
        if (buf.length >= total) {
          const body = buf.subarray(end + 4, total);
          buf = buf.subarray(total);
          return { status: Number(head.slice(9, 12)), body };
        }
      }
      if (failure) throw failure;
      if (ended) throw new Error('the server closed the connection before the response was complete');
      await new Promise((r) => (wake = r));
    }
  };
  return {
    get: async () => {
      if (!sock || ended || failure) {
        if (sock) sock.destroy();
        sock = await connect();
      }
      sock.write(request);
      try {
        return await response();
      } finally {
        if (!persistent) {
          sock.destroy();
          sock = null;
        }
      }
    },
    close: () => sock && sock.destroy(),
  };
}

const name = process.argv[2];
const client = CLIENTS[name];
if (!client) {
  console.error(`unknown Node client ${name}; known: ${Object.keys(CLIENTS).join(', ')}`);
  process.exit(2);
}

let target = null;
serve({
  setup(url, modes) {
    target = new URL(url);
    client.setup(target);
    return { modes: Object.fromEntries(modes.map((m) => [m, null])), version: client.version() };
  },
  async run(mode, counts, expect) {
    const tally = new Tally(expect);
    await Promise.all(
      counts.map(async (count) => {
        const s = client.session(target, mode === 'persistent');
        for (let i = 0; i < count; i++) {
          const t0 = performance.now();
          try {
            const r = await s.get();
            tally.answer(r.status, r.body, performance.now() - t0);
          } catch (e) {
            tally.error(e, performance.now() - t0);
          }
        }
        if (s.close) s.close();
      }),
    );
    return tally.result();
  },
});
