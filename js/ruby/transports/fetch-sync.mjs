// The browser transport that blocks and streams: in a dedicated Worker of
// a cross-origin isolated page (SharedArrayBuffer and Atomics.wait), each
// request the codec writes becomes one fetch() made by a helper Worker
// (fetch-sync-worker.mjs), which writes the response into a ring of shared
// memory as it arrives; this thread sleeps on a doorbell (Atomics.wait)
// while Ruby waits, as a Ruby thread waits in read(2) natively. So
// Net::HTTP works from vm.eval, inside any block and from a Ruby Proc
// called by JS, with no fiber switch, and, unlike a synchronous
// XMLHttpRequest (xhr-sync.mjs):
// - read_body's chunks come as they arrive, and a body is held by the
//   helper a ring (RING bytes) at most: a large one never whole;
// - read_timeout is the limit of each wait (each arrival restarts it), as
//   natively: a body that keeps coming does not time out;
// - a failed fetch() is NetHttpWasm::FetchError (a SocketError, not
//   retried), a body that fails after its head Errno::ECONNRESET (a GET
//   retried once), as with the waiting fetch() transport (fetch-async.mjs);
// - under NetHttpWasm::Scheduler the fibers' requests run at once (a wait
//   is handed back as a Pending, Bridge#deferred).
// The request goes out as soon as it is whole (its body whole: fetch()
// streams request bodies only over HTTP/2). The request and response are
// mapped as the other browser transports map them (fetch-map.mjs); the
// page's origin must be allowed by the server (CORS).
import { Conn, NO_LOCAL_END } from '../conn.mjs';
import { readFailureLines } from '../constants.mjs';
import { Pending } from '../pending.mjs';
import { RequestBytes, requestFields, requestBody, origin } from './fetch-map.mjs';
import { xhrSyncTransport } from './xhr-sync.mjs';
import { RING, MASK, W, R, HELPER, CANCEL, F_PAD, F_DATA, F_END, F_ERROR, F_OVER, BELL, READY } from './fetch-sync-layout.mjs';

const HELPER_URL = new URL('./fetch-sync-worker.mjs', import.meta.url);
const utf8 = new TextDecoder();
// Rings kept for the next requests.
const IDLE_MAX = 4;
// Frames are taken from the ring while less than this waits for Ruby: the
// rest waits in the ring, and the helper (then the browser's socket) for
// room in it.
const TAKE_MAX = 256 * 1024;
// How long a wait waits for the helper Worker to start (with no
// XMLHttpRequest to fall back on).
const START_MS = 10000;

/** Whether this thread can use the streaming transport: a Worker of a cross-origin isolated page. */
export function canStream() {
  return typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated === true && typeof Worker === 'function' &&
    typeof Atomics.waitAsync === 'function' && typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope;
}

class StreamConn extends Conn {
  constructor(bridge, io, scheme, host, port) {
    super(bridge);
    this.io = io;
    this.base = origin(scheme, host, port);
    this.pending = new RequestBytes();
    this.ring = null; // the response's ring, from the request on
    this.id = 0;
    this.taken = 0; // bytes of the ring read (R)
    this.held = false; // paused: Ruby has conn.mjs's high water to read
    this.queued = null; // a next request written before the response's last frame was taken
  }

  write(bytes) {
    if (this.closed) return false;
    // (the response read to its end, its last frame not taken yet: the next
    // request goes once it is)
    if (this.ring) {
      (this.queued ||= []).push(bytes.slice());
      return true;
    }
    const req = this.pending.push(bytes);
    if (!req) return true;
    this.pending = null;
    const headers = [];
    this.bridge.droppedHeaders = requestFields(req, (name, value) => {
      // (what Headers refuses is left out, as fetch() would refuse it)
      new Headers([[name, value]]);
      headers.push([name, value]);
    });
    this.ring = this.io.acquire();
    this.id = this.io.nextId++;
    this.io.conns.add(this);
    const body = requestBody(req);
    this.io.post({ op: 'fetch', id: this.id, url: this.base + req.target, method: req.method, headers, body, buffer: this.ring.buffer }, body ? [body.buffer] : []);
    return true;
  }

  // Takes the frames the helper wrote (while Ruby has room for them, and
  // little else to read).
  take() {
    const ring = this.ring;
    if (!ring || this.held) return;
    const { ctl, u8, dv } = ring;
    while (!this.closed && !this.holdReads() && this.recordBytes + this.rawBytes < TAKE_MAX) {
      const r = this.taken;
      const w = Atomics.load(ctl, W) >>> 0;
      if (r === w) return;
      const pos = r & MASK;
      const tail = RING - pos;
      if (tail < 5 || u8[pos] === F_PAD) {
        this.advance(tail);
        continue;
      }
      const type = u8[pos];
      const n = dv.getUint32(pos + 1, true);
      const payload = u8.subarray(pos + 5, pos + 5 + n);
      // (onData copies what it keeps: the ring's bytes are the helper's again after advance)
      if (type === F_DATA) this.onData(payload, true);
      else if (type === F_ERROR) {
        const { kind, detail } = readFailureLines(utf8.decode(payload.slice()));
        this.onError(kind, detail || '');
      } else if (type === F_END) this.onEnd();
      this.advance(5 + n);
      if (type !== F_DATA) {
        this.release(true);
        // a response its head framed: the connection takes the next request
        if (type === F_OVER) {
          this.ring = null;
          this.taken = 0;
          this.pending = new RequestBytes();
          const queued = this.queued;
          this.queued = null;
          if (queued) for (const b of queued) this.write(b);
        } else this.queued = null;
        return;
      }
    }
  }

  advance(n) {
    this.taken = (this.taken + n) >>> 0;
    Atomics.store(this.ring.ctl, R, this.taken | 0);
    Atomics.notify(this.ring.ctl, R);
  }

  // The response is over (its last frame read), or the connection let go
  // of before: the ring goes back (the helper told to stop).
  release(over = false) {
    const ring = this.ring;
    if (!ring || ring.done) return;
    ring.done = true;
    this.io.conns.delete(this);
    if (!over && Atomics.load(ring.ctl, HELPER)) {
      Atomics.store(ring.ctl, CANCEL, 1);
      Atomics.notify(ring.ctl, R);
      this.io.post({ op: 'abort', id: this.id });
    }
    this.io.giveBack(ring);
  }

  pause() {
    this.held = true;
  }

  resume() {
    this.held = false;
  }

  destroy() {
    this.release();
  }
}

class StreamIO {
  constructor() {
    this.bell = new Int32Array(new SharedArrayBuffer(8));
    this.worker = new Worker(HELPER_URL, { type: 'module' });
    this.ready = new Promise((resolve, reject) => {
      this.worker.addEventListener('message', (e) => e.data && e.data.ready && resolve(), { once: true });
      this.worker.addEventListener('error', (e) => reject(new Error(`the fetch() helper Worker failed: ${e.message || 'it did not load'}`)), { once: true });
    });
    this.ready.catch(() => {});
    this.worker.postMessage({ op: 'init', bell: this.bell });
    this.conns = new Set(); // the connections whose response is coming
    this.idleRings = [];
    this.draining = []; // rings let go of, the helper not yet done with them
    this.nextId = 1;
    this.deferring = false;
  }

  post(msg, transfer) {
    this.worker.postMessage(msg, transfer);
  }

  acquire() {
    for (let i = 0; i < this.draining.length; i++) {
      const d = this.draining[i];
      if (!Atomics.load(d.ctl, HELPER)) {
        this.draining.splice(i--, 1);
        if (this.idleRings.length < IDLE_MAX) this.idleRings.push(d);
      }
    }
    let ring = this.idleRings.pop();
    if (!ring) {
      const buffer = new SharedArrayBuffer(16 + RING);
      ring = { buffer, ctl: new Int32Array(buffer, 0, 4), u8: new Uint8Array(buffer, 16, RING), dv: new DataView(buffer, 16, RING) };
    }
    ring.ctl.fill(0);
    Atomics.store(ring.ctl, HELPER, 1);
    ring.done = false;
    return ring;
  }

  giveBack(ring) {
    if (Atomics.load(ring.ctl, HELPER)) {
      if (this.draining.length < IDLE_MAX) this.draining.push(ring);
    } else if (this.idleRings.length < IDLE_MAX) this.idleRings.push(ring);
  }

  pump() {
    for (const c of this.conns) c.take();
  }

  // Waits until ready() holds (true), or ms milliseconds pass with nothing
  // arriving on conn (false; each arrival restarts the clock unless
  // `once`). While `deferring` (under NetHttpWasm::Scheduler), a wait that
  // cannot end at once is handed back as a Pending.
  block(conn, ready, ms, once = false) {
    this.pump();
    if (ready()) return true;
    const p = new Pending(conn, ready, ms, once);
    if (this.deferring) return p;
    return this.idle(() => p.poll(performance.now()) !== undefined, () => p.deadline) && ready();
  }

  // Sleeps on the doorbell, taking frames as they come, until done() holds
  // (true) or the time until() gives has come (false).
  idle(done, until) {
    if (!Atomics.load(this.bell, READY)) this.waitForHelper();
    for (;;) {
      const tick = Atomics.load(this.bell, BELL);
      this.pump();
      if (done()) return true;
      const left = until() - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.bell, BELL, tick, left === Infinity ? undefined : left);
    }
  }

  // (createRubyVM waits for the helper to start; installNetHttp alone
  // may be followed at once by a request)
  waitForHelper() {
    const end = performance.now() + START_MS;
    while (!Atomics.load(this.bell, READY)) {
      const left = end - performance.now();
      if (left <= 0) throw new Error('the fetch() helper Worker did not start (its script must come from the page\'s origin, with the page\'s Cross-Origin-Embedder-Policy)');
      Atomics.wait(this.bell, BELL, Atomics.load(this.bell, BELL), left);
    }
  }

  close() {
    for (const c of [...this.conns]) c.release();
    this.idleRings = this.draining = [];
    this.worker.terminate();
  }
}

/**
 * The streaming transport (browser.mjs, { blocking: true } where canStream()).
 * Its `ready` promise settles when the helper Worker runs. A nested Worker
 * starts only once this thread's event loop turns: a request made before
 * (installNetHttp, then vm.eval at once) goes as a synchronous
 * XMLHttpRequest (xhr-sync.mjs); createRubyVM waits for `ready`.
 */
export function fetchSyncTransport() {
  const io = new StreamIO();
  const xhr = typeof XMLHttpRequest === 'function' ? xhrSyncTransport(XMLHttpRequest) : null;
  const started = () => !xhr || Atomics.load(io.bell, READY) === 1;
  // (an XMLHttpRequest's connection sends its request when first waited for)
  const viaXhr = (conn) => conn && typeof conn.exchange === 'function';
  return {
    blocking: true,
    streaming: true,
    ready: io.ready,
    open(bridge, spec) {
      if (!started()) return xhr.open(bridge, spec);
      return { conn: new StreamConn(bridge, io, spec.tls ? 'https' : 'http', spec.host, spec.port), info: NO_LOCAL_END };
    },
    block: (conn, ready, ms, once) => (viaXhr(conn) ? xhr.block(conn, ready, ms) : io.block(conn, ready, ms, once)),
    blockForRoom: (conn, ready, ms) => (viaXhr(conn) ? xhr.block(conn, ready, ms) : io.block(conn, ready, ms)),
    pump: () => io.pump(),
    deferred(fn) {
      io.deferring = true;
      try {
        return fn();
      } finally {
        io.deferring = false;
      }
    },
    idle: (done, until) => (started() ? io.idle(done, until) : xhr.idle(done, until)),
    close: () => io.close(),
  };
}
