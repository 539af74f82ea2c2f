// The browser transport: each request the codec writes becomes one fetch(),
// and each response HTTP/1.1 bytes for the same parser. Browsers have no
// sockets; the page's origin must be allowed by the server (CORS).
import { Conn } from '../conn.mjs';
import { isForbiddenRequestHeader } from '../../fetch.mjs';
import { concatAll } from '../../response-parser.mjs';

const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });



// A "connection" that turns each request the codec writes into one fetch()
// and each response into HTTP/1.1 bytes for the same parser. The browser
// decodes gzip itself: a response it decoded loses Content-Encoding and
// Content-Length and is framed by the end of the stream.
class FetchConn extends Conn {
  constructor(bridge, fetchFn, scheme, host, port) {
    super(bridge);
    this.fetch = fetchFn;
    this.base = `${scheme}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
    this.pending = [];
    this.busy = false;
    this.aborter = null;
  }

  write(bytes) {
    if (this.closed) return false;
    this.pending.push(bytes);
    this.tryRequest();
    return true;
  }

  tryRequest() {
    if (this.busy) return;
    const all = concatAll(this.pending);
    const req = splitRequest(all);
    if (!req) return; // head or body not complete yet
    this.pending = req.rest.length ? [req.rest] : [];
    this.busy = true;
    this.run(req).finally(() => {
      this.busy = false;
    });
  }

  async run(req) {
    const headers = new Headers();
    const dropped = [];
    for (const [name, value] of req.headers) {
      const lower = name.toLowerCase();
      if (isForbiddenRequestHeader(lower)) {
        dropped.push(name);
        continue;
      }
      try {
        headers.append(name, value);
      } catch {
        dropped.push(name);
      }
    }
    this.bridge.droppedHeaders = dropped;
    // Net::HTTP has no cache: every request goes to the server (and an
    // aborted request is not sent again by the browser's cache layer)
    const init = { method: req.method, headers, redirect: 'manual', cache: 'no-store' };
    if (req.body && req.body.length && req.method !== 'GET' && req.method !== 'HEAD') init.body = req.body;
    if (typeof AbortController === 'function') {
      this.aborter = new AbortController();
      init.signal = this.aborter.signal;
    }
    let res;
    try {
      res = await this.fetch(this.base + req.target, init);
    } catch (e) {
      if (this.closed) return;
      this.onError('NetHttpWasm::FetchError', `fetch failed: ${e && e.message ? e.message : String(e)} (a network error, or a response CORS does not let the page read)`);
      return;
    }
    if (this.closed) return;
    if (res.type === 'opaqueredirect') {
      this.onError('NetHttpWasm::FetchError', 'fetch failed: the server answered with a redirect, which a page cannot read (Net::HTTP does not follow redirects)');
      return;
    }
    const decoded = res.headers.has('content-encoding') && !/^\s*(identity|none)?\s*$/i.test(res.headers.get('content-encoding'));
    let head = `HTTP/1.1 ${res.status} ${res.statusText || ''}\r\n`;
    res.headers.forEach((value, name) => {
      if (decoded && (name === 'content-encoding' || name === 'content-length')) return;
      if (name === 'transfer-encoding') return;
      // fetch joins repeated fields with ", " (set-cookie is never visible)
      head += `${name}: ${value}\r\n`;
    });
    head += '\r\n';
    this.onData(encoder.encode(head));
    if (res.body && req.method !== 'HEAD') {
      const reader = res.body.getReader();
      for (;;) {
        let r;
        try {
          r = await reader.read();
        } catch (e) {
          if (!this.closed) this.onError('Errno::ECONNRESET', '');
          return;
        }
        if (this.closed) return;
        if (r.done) break;
        if (r.value && r.value.length) this.onData(r.value);
      }
    }
    // each fetch is a message on its own "connection": the stream ends here
    this.onEnd();
  }

  destroy() {
    if (this.aborter) this.aborter.abort();
  }
}

// Splits the bytes the codec wrote back into method, target, headers, body.
function splitRequest(bytes) {
  let end = -1;
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      end = i;
      break;
    }
  }
  if (end < 0) return null;
  const lines = utf8.decode(bytes.subarray(0, end)).split('\r\n');
  const [method, target] = lines[0].split(' ');
  const headers = [];
  let length = 0;
  for (let i = 1; i < lines.length; i++) {
    const k = lines[i].indexOf(':');
    const name = lines[i].slice(0, k);
    const value = lines[i].slice(k + 1).trim();
    headers.push([name, value]);
    if (name.toLowerCase() === 'content-length') length = Number(value) || 0;
  }
  if (bytes.length < end + 4 + length) return null;
  return {
    method,
    target,
    headers,
    body: bytes.slice(end + 4, end + 4 + length),
    rest: bytes.subarray(end + 4 + length),
  };
}

export function fetchTransport(fetchFn) {
  return {
    blocking: false,
    open(bridge, spec) {
      if (!fetchFn) return Promise.resolve('IOError\nfetch() is not available');
      const conn = new FetchConn(bridge, fetchFn, spec.tls ? 'https' : 'http', spec.host, spec.port);
      return Promise.resolve({ conn, info: 'AF_INET\n0.0.0.0\n0' });
    },
    close() {},
  };
}
