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
    this.base = origin(scheme, host, port);
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
    this.bridge.droppedHeaders = requestFields(req, (name, value) => headers.append(name, value));
    // Net::HTTP has no cache: every request goes to the server (and an
    // aborted request is not sent again by the browser's cache layer)
    const init = { method: req.method, headers, redirect: 'manual', cache: 'no-store' };
    const body = requestBody(req);
    if (body) init.body = body;
    if (typeof AbortController === 'function') {
      this.aborter = new AbortController();
      init.signal = this.aborter.signal;
    }
    let res;
    try {
      res = await this.fetch(this.base + req.target, init);
    } catch (e) {
      if (this.closed) return;
      this.onError('NetHttpWasm::FetchError', fetchFailed(e));
      return;
    }
    if (this.closed) return;
    if (res.type === 'opaqueredirect') {
      this.onError('NetHttpWasm::FetchError', REDIRECTED);
      return;
    }
    const head = responseHead(res.status, res.statusText, (each) => res.headers.forEach((value, name) => each(name, value)));
    this.onData(head);
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

// What the request mapping of fetch() and of XMLHttpRequest (xhr-sync.mjs)
// share: the request's fields given to append(name, value) but those a page
// may not set (and those the browser refuses): the names of the fields
// left out (Bridge#droppedHeaders).
export function requestFields(req, append) {
  const dropped = [];
  for (const [name, value] of req.headers) {
    if (isForbiddenRequestHeader(name.toLowerCase())) {
      dropped.push(name);
      continue;
    }
    try {
      append(name, value);
    } catch {
      dropped.push(name);
    }
  }
  return dropped;
}

// The head of an HTTP/1.1 response, as bytes, from what the browser gives:
// its status and fields (forEach(each) calls each(lowercased name, value)).
// A body the browser decoded (gzip) loses Content-Encoding and
// Content-Length and is framed by the end of the stream.
export function responseHead(status, statusText, forEach) {
  const fields = [];
  forEach((name, value) => fields.push([name, value]));
  const enc = fields.find(([name]) => name === 'content-encoding');
  const decoded = enc != null && !/^\s*(identity|none)?\s*$/i.test(enc[1]);
  let head = `HTTP/1.1 ${status} ${statusText || ''}\r\n`;
  for (const [name, value] of fields) {
    if (decoded && (name === 'content-encoding' || name === 'content-length')) continue;
    if (name === 'transfer-encoding') continue;
    // the browser joins repeated fields with ", " (set-cookie is never visible)
    head += `${name}: ${value}\r\n`;
  }
  return encoder.encode(`${head}\r\n`);
}

// The URL's start for a connection to host:port (an IPv6 address in brackets).
export function origin(scheme, host, port) {
  return `${scheme}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

// The body the browser sends (none for GET and HEAD, which may not have one).
export function requestBody(req) {
  return req.body && req.body.length && req.method !== 'GET' && req.method !== 'HEAD' ? req.body : null;
}

// NetHttpWasm::FetchError's messages: the browser's request failed, or was redirected.
export function fetchFailed(e) {
  return `fetch failed: ${e && e.message ? e.message : String(e)} (a network error, or a response CORS does not let the page read)`;
}
export const REDIRECTED = 'fetch failed: the server answered with a redirect, which a page cannot read (Net::HTTP does not follow redirects)';

// Splits the bytes the codec wrote back into method, target, headers, body
// (null until the head and the body of its Content-Length are all there).
export function splitRequest(bytes) {
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
