// The browser transport: each request the codec writes becomes one fetch(),
// and each response HTTP/1.1 bytes for the same parser. Browsers have no
// sockets; the page's origin must be allowed by the server (CORS).
import { Conn, NO_LOCAL_END } from '../conn.mjs';
import { failureLines } from '../constants.mjs';
import { RequestBytes, requestFields, requestBody, responseHead, framedByHead, fetchFailed, origin, REDIRECTED } from './fetch-map.mjs';

// A "connection" that turns each request the codec writes into one fetch()
// and each response into HTTP/1.1 bytes for the same parser. The browser
// decodes gzip itself: a response it decoded loses Content-Encoding and
// Content-Length and is framed by the end of the stream.
class FetchConn extends Conn {
  constructor(bridge, fetchFn, scheme, host, port) {
    super(bridge);
    this.fetch = fetchFn;
    this.base = origin(scheme, host, port);
    this.pending = new RequestBytes();
    this.queued = []; // whole requests written while one was out
    this.busy = false;
    this.aborter = null;
    this.held = null; // while paused: a promise resume() settles
    this.release = null;
  }

  write(bytes) {
    if (this.closed) return false;
    const req = this.pending.push(bytes);
    if (req) this.queued.push(req);
    this.tryRequest();
    return true;
  }

  tryRequest() {
    if (this.busy || !this.queued.length || this.ended()) return;
    const req = this.queued.shift();
    this.busy = true;
    this.run(req).finally(() => {
      this.busy = false;
      this.tryRequest();
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
      // read as it arrives (each piece to the parser at once), but not
      // while Ruby has more than conn.mjs's high water to read
      const reader = res.body.getReader();
      for (;;) {
        if (this.held) await this.held;
        if (this.closed) return;
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
    // (and there is nothing left to abort: an abort costs a page a tenth of
    // a millisecond), unless Ruby, having read a message its head frames,
    // wrote the next request before this end came: that one goes on, as over
    // a kept-alive connection (an end then would be an EOFError where
    // nothing was closed)
    this.aborter = null;
    if (this.queued.length && framedByHead(req.method, res.status, res.headers)) return;
    this.onEnd();
  }

  pause() {
    if (!this.held) this.held = new Promise((resolve) => (this.release = resolve));
  }

  resume() {
    const release = this.release;
    this.held = this.release = null;
    if (release) release();
  }

  destroy() {
    if (this.aborter) this.aborter.abort();
    this.resume();
  }
}

export function fetchTransport(fetchFn) {
  return {
    blocking: false,
    open(bridge, spec) {
      if (!fetchFn) return Promise.resolve(failureLines({ kind: 'IOError', detail: 'fetch() is not available' }));
      const conn = new FetchConn(bridge, fetchFn, spec.tls ? 'https' : 'http', spec.host, spec.port);
      return Promise.resolve({ conn, info: NO_LOCAL_END });
    },
    close() {},
  };
}
