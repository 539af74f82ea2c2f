// The browser transport: each request the codec writes becomes one fetch(),
// and each response HTTP/1.1 bytes for the same parser. Browsers have no
// sockets; the page's origin must be allowed by the server (CORS).
import { Conn, NO_LOCAL_END } from '../conn.mjs';
import { failureLines } from '../constants.mjs';
import { chunkFrame, CHUNK_END } from '../../body-stream.mjs';
import { RequestBytes, requestFields, requestBody, responseHead, framing, CHUNKED, fetchFailed, origin, REDIRECTED } from './fetch-map.mjs';

// A "connection" that turns each request the codec writes into one fetch()
// and each response into HTTP/1.1 bytes for the same parser. A response
// its head frames (a Content-Length, chunks, or no body) leaves the
// connection open for the next request, as a kept-alive one; one framed by
// the stream's end ends it. The browser decodes gzip itself: a response it
// decoded loses Content-Encoding and Content-Length.
class FetchConn extends Conn {
  constructor(bridge, fetchFn, scheme, host, port) {
    super(bridge);
    this.fetch = fetchFn;
    this.base = origin(scheme, host, port);
    this.pending = new RequestBytes();
    this.queued = []; // whole requests written while one was out
    this.busy = false; // a response is coming
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
    // over(): this response is over, the next request may go (called
    // before the last bytes are handed over when the head frames the
    // message: Ruby, woken by them, may check the connection or close it)
    let done = false;
    const over = () => {
      if (done) return;
      done = true;
      this.busy = false;
      // (nothing left to abort: an abort costs a page a tenth of a millisecond)
      this.aborter = null;
    };
    this.run(req, over).finally(() => {
      over();
      this.tryRequest();
    });
  }

  // IO#wait_readable(0) (Bridge#settle): with no response coming, nothing
  // can arrive, and the state is current.
  peek() {
    return !this.busy;
  }

  async run(req, over) {
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
    const framed = framing(req.method, res.status, res.headers);
    const chunked = framed === CHUNKED;
    // What has already arrived is handed over together, the head with it:
    // Ruby is woken once for it, not once for each piece (up to HAND_OVER
    // bytes of body: then the parser's flow control has its say).
    const ready = [responseHead(res.status, res.statusText, (each) => res.headers.forEach((value, name) => each(name, value)), chunked)];
    let readyBytes = 0;
    const handOver = () => {
      for (const bytes of ready) this.onData(bytes);
      ready.length = readyBytes = 0;
    };
    const add = (bytes) => {
      ready.push(bytes);
      if ((readyBytes += bytes.length) >= HAND_OVER) handOver();
    };
    let left = typeof framed === 'number' ? framed : Infinity;
    if (left === 0) over();
    if (res.body && left > 0) {
      // read as it arrives (each piece to the parser at once), but not
      // while Ruby has more than conn.mjs's high water to read
      const reader = res.body.getReader();
      for (;;) {
        if (this.held) {
          handOver();
          await this.held;
        }
        if (this.closed) return;
        let r;
        try {
          const read = reader.read();
          r = await Promise.race([read, STILL_PENDING]);
          if (r === PENDING) {
            handOver();
            r = await read;
          }
        } catch (e) {
          if (this.closed) return;
          handOver();
          this.onError('Errno::ECONNRESET', '');
          return;
        }
        if (this.closed) return;
        if (r.done) break;
        if (!r.value || !r.value.length) continue;
        if (chunked) {
          add(chunkFrame(r.value));
          continue;
        }
        left -= r.value.length;
        // the message is whole: the stream's end, which comes later,
        // brings nothing (the browser holds a body to its length)
        if (left <= 0) {
          over();
          ready.push(r.value);
          handOver();
          drain(reader);
          return;
        }
        add(r.value);
      }
    }
    over();
    if (chunked) ready.push(CHUNK_END);
    handOver();
    // a message the stream's end frames (or that ended short of the length
    // its head gave, if a browser lets it) ends the connection
    if (!chunked && left > 0) this.onEnd();
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
      if (!fetchFn) return failureLines({ kind: 'IOError', detail: 'fetch() is not available' });
      // (nothing to wait for: a fetch() opens the browser's connections)
      return { conn: new FetchConn(bridge, fetchFn, spec.tls ? 'https' : 'http', spec.host, spec.port), info: NO_LOCAL_END };
    },
    close() {},
  };
}

// Promise.race([p, STILL_PENDING]) is PENDING unless p has settled already
// (a settled promise's reaction is queued first).
const PENDING = Symbol('pending');
const STILL_PENDING = Promise.resolve(PENDING);

// The most of a body kept to hand over with what comes next.
const HAND_OVER = 64 * 1024;

// Reads what is left of a stream, for nothing (its end).
function drain(reader) {
  reader.read().then((r) => r.done || drain(reader), () => {});
}
