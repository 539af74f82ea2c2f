// The browser transport that blocks: in a dedicated Worker, each request
// the codec writes becomes one synchronous XMLHttpRequest, and its response
// HTTP/1.1 bytes for the same parser. The Worker's thread waits in send(),
// as a Ruby thread waits in read(2) natively: Net::HTTP then works from
// vm.eval, inside any block and from a Ruby Proc called by JS, with no
// fiber switch. The request and response are mapped as the fetch()
// transport maps them (fetch-map.mjs: the same fields left out, and
// User-Agent, which Chromium refuses here; the same head); the page's origin
// must be allowed by the server (CORS).
//
// What a synchronous XMLHttpRequest cannot do, and what the transport does
// instead:
// - the request is sent when Ruby first waits for its response (then its
//   read timeout is known): xhr.timeout is Net::HTTP's read_timeout (nil:
//   its open_timeout; both nil: no limit), for the whole exchange, connect
//   included (a body that keeps coming but takes longer in all also times
//   out). A timeout is Net::ReadTimeout (a GET tried again once, as
//   Net::HTTP does).
// - the response comes whole: a body is held in memory once before Ruby
//   reads it, and a failure anywhere (no connection, a reset, a body cut
//   short) is NetHttpWasm::FetchError: the browser does not say whether
//   the head had come.
// - the browser follows redirects itself: a response from another URL is
//   NetHttpWasm::FetchError, as fetch()'s opaque redirect is (the server
//   was asked for the other URL).
// - there is no cache mode: a response the browser's cache may give
//   (Cache-Control, Expires) can come from there.
import { Conn, NO_LOCAL_END } from '../conn.mjs';
import { failureLines } from '../constants.mjs';
import { chunkFrame, CHUNK_END } from '../../body-stream.mjs';
import { concatAll } from '../../bytes.mjs';
import { splitRequest, requestFields, requestBody, responseHead, framing, CHUNKED, BY_END, fetchFailed, origin, REDIRECTED } from './fetch-map.mjs';

// A body up to this size is given to the parser with its head.
const JOIN_MAX = 16 * 1024;

class XhrConn extends Conn {
  constructor(bridge, XHR, scheme, host, port, openMs) {
    super(bridge);
    this.XHR = XHR;
    this.base = origin(scheme, host, port);
    this.openMs = openMs; // Net::HTTP's open_timeout (ms), or null
    this.pending = [];
    this.sent = false; // the request written went out (its response not read yet)
  }

  write(bytes) {
    if (this.closed) return false;
    this.pending.push(bytes);
    return true;
  }

  // Sends the request written so far, when it is whole, waiting for its
  // response: false when it timed out, else true (the response, or its
  // error, is then on the connection). readMs: the wait's limit (null: none).
  exchange(readMs) {
    if (this.sent || this.closed) return true;
    const req = splitRequest(concatAll(this.pending));
    if (!req) return true; // (not whole yet: nothing to wait for)
    this.sent = true;
    this.pending = [];
    const url = this.base + req.target;
    const xhr = new this.XHR();
    try {
      xhr.open(req.method, url, false);
      xhr.responseType = 'arraybuffer';
      const ms = readMs ?? this.openMs;
      xhr.timeout = ms == null ? 0 : Math.max(1, Math.ceil(ms));
    } catch (e) {
      // (a synchronous request with a response type and a timeout: Workers only)
      this.onError('IOError', `XMLHttpRequest: ${e && e.message ? e.message : String(e)} (the blocking transport needs a dedicated Worker)`);
      return true;
    }
    this.bridge.droppedHeaders = requestFields(req, (name, value) => {
      // (Chromium refuses it, and says so on the console: a third of a
      // millisecond a request)
      if (name.length === 10 && name.toLowerCase() === 'user-agent') throw new TypeError('refused');
      xhr.setRequestHeader(name, value);
    });
    try {
      xhr.send(requestBody(req));
    } catch (e) {
      // (its later waits time out at once: nothing more comes)
      if (e && e.name === 'TimeoutError') return false;
      this.onError('NetHttpWasm::FetchError', fetchFailed(e));
      return true;
    }
    const at = xhr.responseURL;
    if (at && at !== url && at !== new URL(url).href) {
      this.onError('NetHttpWasm::FetchError', REDIRECTED);
      return true;
    }
    const framed = framing(req.method, xhr.status, { get: (name) => xhr.getResponseHeader(name) });
    const head = responseHead(xhr.status, xhr.statusText, (each) => eachField(xhr.getAllResponseHeaders(), each), framed === CHUNKED);
    let body = framed !== 0 && xhr.response && xhr.response.byteLength ? new Uint8Array(xhr.response) : null;
    if (framed === CHUNKED) body = body ? concatAll([chunkFrame(body), CHUNK_END]) : CHUNK_END;
    // (a small body with its head: one feed of the parser)
    if (body && body.length <= JOIN_MAX) {
      const all = new Uint8Array(head.length + body.length);
      all.set(head);
      all.set(body, head.length);
      this.onData(all);
    } else {
      this.onData(head);
      if (body) this.onData(body);
    }
    // a response its head frames leaves the connection open for the next
    // request (as fetch-async.mjs); one framed by its end ends it
    if (framed === BY_END) this.onEnd();
    else this.sent = false;
    return true;
  }
}

// getAllResponseHeaders(): "name: value\r\n" lines, names lowercased.
function eachField(all, each) {
  for (const line of all.split('\r\n')) {
    const k = line.indexOf(':');
    if (k > 0) each(line.slice(0, k).trim().toLowerCase(), line.slice(k + 1).trim());
  }
}

/**
 * The synchronous XMLHttpRequest transport (browser.mjs, { blocking: true }).
 * XHR: the XMLHttpRequest class to use.
 */
export function xhrSyncTransport(XHR) {
  return {
    blocking: true,
    open(bridge, spec) {
      if (!XHR) return failureLines({ kind: 'IOError', detail: 'XMLHttpRequest is not available (the blocking transport needs a dedicated Worker)' });
      return { conn: new XhrConn(bridge, XHR, spec.tls ? 'https' : 'http', spec.host, spec.port, spec.timeoutMs), info: NO_LOCAL_END };
    },
    // Every wait sends the request, if it has not gone, and has its answer:
    // what has not come then never will.
    block(conn, ready, ms) {
      if (ready()) return true;
      if (conn && !conn.exchange(ms)) return false;
      return ready();
    },
    blockForRoom(conn, ready, ms) {
      return this.block(conn, ready, ms);
    },
    pump() {},
    // (a wait never outlives its call: nothing is handed back as a Pending)
    deferred: (fn) => fn(),
    // NetHttpWasm::Scheduler with every fiber waiting for a timer only: a
    // sleep until then (Atomics.wait where the page may share memory, else
    // the time spent in a loop).
    idle(done, until) {
      if (done()) return true;
      const left = until() - performance.now();
      if (left > 0 && left < Infinity) sleepMs(left);
      return done();
    },
    close() {},
  };
}

function sleepMs(ms) {
  if (typeof SharedArrayBuffer === 'function') {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    return;
  }
  const end = performance.now() + ms;
  while (performance.now() < end);
}
