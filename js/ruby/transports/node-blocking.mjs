// The Node transport that blocks: sockets live in an I/O thread
// (node-io-worker.mjs, node:net / node:tls) and this thread waits for them
// with Atomics.wait, as a Ruby thread waits in read(2) natively. Ruby then
// never switches fibers to wait, so Net::HTTP works from vm.eval as well as
// vm.evalAsync, at any depth of blocks; the JS thread does nothing else
// while Ruby waits (a server in the same thread cannot answer it).
//
// The I/O thread posts each event (opened, data, end, error) on a
// MessagePort and bumps a counter in shared memory; this thread takes the
// events with receiveMessageOnPort whenever Ruby calls in (pump) and sleeps
// on the counter when Ruby must wait (block). Under NetHttpWasm::Scheduler
// a wait is handed back as a Pending instead, and the scheduler sleeps on
// the counter when every fiber waits (idle; Bridge#deferred, Bridge#idle).
//
// A plain TCP connection is read and written from this thread, on its file
// descriptor, as MRI does: a write goes to the kernel at once (what does not
// fit goes through the I/O thread), a read takes what the kernel holds. A
// wait first polls the socket for a short while (an answer on a fast
// network comes within that), then asks the I/O thread to watch it and
// sleeps: no thread hop on the way out, none on the way back when the
// answer is quick.
//
// A plain connection to a loopback address is made and owned by this
// thread (HereConn): connect(2) and close(2) happen in Ruby's calls, with
// no thread hop at all. Its waits poll, then sleep in slices (SLICE_*
// below), reading the fd after each: no thread can be asked to watch a
// socket it does not own.
import { Worker, MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { connectHere } from './node-connect.mjs';
import { HereConn } from './node-here.mjs';
import { POLL_MS, pollPolicy } from './node-fd.mjs';
import { WorkerConn, WorkerListener, deliver } from './node-worker-conn.mjs';
import { Pending, then } from '../pending.mjs';

const WORKER = new URL('./node-io-worker.mjs', import.meta.url);

// A wait on a HereConn that the poll did not end sleeps a slice, reads the
// fd, and so on: a slice is half the time waited so far, at least
// SLICE_MIN ms and at most the larger of SLICE_MAX ms and a twentieth of
// the time waited, never more than SLICE_CAP ms: an answer is seen at most
// half as late again as it came, at most 2 ms or 5% late, and never more
// than 20 ms late (a wait of a second wakes about 100 times).
const SLICE_MIN = 0.05;
const SLICE_MAX = 2;
const SLICE_CAP = 20;

function sliceAfter(waited) {
  return Math.max(SLICE_MIN, Math.min(waited / 2, Math.min(SLICE_CAP, Math.max(SLICE_MAX, waited / 20))));
}

// A connection's handle is let go only by its thread's event loop (its
// close, and the connect it never waited for, complete there), and this
// thread's loop does not turn while Ruby runs in vm.eval (a vm.evalAsync
// that made HereConns settles after a turn: Waits#evalSettled): once
// HereConns made since it last turned hold about MADE_HERE_BYTES, new
// connections go through the I/O thread, so that Ruby making connection
// after connection holds a bounded amount of memory. A bare handle holds about 2 KB until then, a
// node:net Socket about 6 KB (node-internals.mjs bareConnect; measured on
// Node 20, Linux).
const MADE_HERE_BYTES = 8 << 20;
const heldBy = (socket) => (socket.bare ? 2048 : 6144);

class BlockingIO {
  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.ctl = new Int32Array(new SharedArrayBuffer(8)); // [events posted, waiting for room]
    this.port = port1;
    this.workerPort = port2;
    this.worker = null; // started by the first message (connections to loopback addresses need none)
    this.conns = new Map(); // I/O thread's connection id → WorkerConn
    this.opened = new Map(); // id → the I/O thread's answer to 'open'
    this.early = new Map(); // id → events that came with the answer
    this.nextId = 1;
    this.listeners = new Map(); // id → WorkerListener (TCPServer)
    this.madeHere = 0; // bytes held by HereConns made since this thread's event loop last turned
    this.deferring = false;
  }

  post(msg, transfer) {
    if (!this.worker) {
      const port = this.workerPort;
      this.worker = new Worker(WORKER, { workerData: { port, ctl: this.ctl }, transferList: [port] });
      this.worker.unref();
    }
    this.port.postMessage(msg, transfer);
  }

  // Hands every event the I/O thread has posted to its connection; then
  // takes what the kernel holds for conn when it is a direct connection.
  pump(conn) {
    this.drainEvents();
    if (conn) conn.readDirect();
  }

  drainEvents() {
    for (;;) {
      const m = receiveMessageOnPort(this.port);
      if (!m) return;
      const ev = m.message;
      if (ev.t === 'open' || ev.t === 'lookup') {
        this.opened.set(ev.id, ev);
        continue;
      }
      if (ev.t === 'pending') {
        const l = this.listeners.get(ev.id);
        if (l) l.count = ev.n;
        continue;
      }
      const c = this.conns.get(ev.id);
      if (c) deliver(c, ev);
      else if (this.opened.has(ev.id)) this.early.get(ev.id)?.push(ev) ?? this.early.set(ev.id, [ev]);
    }
  }

  // Waits until ready() holds (true), or ms milliseconds pass with nothing
  // arriving on conn (false); each arrival restarts the clock unless `once`.
  // A direct connection is polled for POLL_MS, then watched. While
  // `deferring` (a call under NetHttpWasm::Scheduler, Bridge#deferred), a
  // wait that cannot end at once is handed back as a Pending instead.
  block(conn, ready, ms, once = false, room = false) {
    if (ready()) return true;
    const p = new Pending(conn, ready, ms, once, room);
    if (this.deferring) return p;
    const start = performance.now();
    const poll = conn && conn.fd >= 0 && !conn.watching && conn.polls.shouldPoll() ? POLL_MS : 0;
    if (!this.idle(() => p.poll(performance.now()) !== undefined, () => p.deadline, room, conn ? [conn] : [], poll) || !ready()) return false;
    const took = performance.now() - start;
    if (conn && conn.polls) conn.polls.answered(took);
    // An answer the poll took on a HereConn is a hit: a missed poll costs
    // it a sleep in slices, the first of which (50 µs asked) ends ~120 µs
    // later on Linux. (Not on a connection the I/O thread watches: on a
    // busy machine this thread's polls delay the server more than the
    // watch costs, so after a few misses each one skips SKIP_AFTER_MISS
    // waits, see node-fd.mjs.)
    if (poll && took < poll && conn.here) conn.polls.hit();
    return true;
  }

  // block() for room to write: the I/O thread wakes this one with each
  // write it reports only meanwhile.
  blockForRoom(conn, ready, ms) {
    return this.block(conn, ready, ms, false, true);
  }

  // Sleeps on the counter of events, taking them as they come and reading
  // the direct connections of `conns`, until done() holds (true) or the time
  // until() gives has come (false). A direct connection is polled for `poll`
  // ms, then watched by the I/O thread. `room`: the I/O thread also wakes
  // this one with each write it reports. (The I/O thread's answer to an
  // open is not polled for: on a busy machine, this thread's spinning
  // delays it more than the wake costs.)
  idle(done, until, room = false, conns = [], poll = 0) {
    const start = performance.now();
    let sliced = false; // (a HereConn's missed poll is counted once)
    if (room) Atomics.store(this.ctl, 1, 1);
    try {
      for (;;) {
        const tick = Atomics.load(this.ctl, 0);
        this.drainEvents();
        for (const c of conns) c.readDirect();
        if (done()) return true;
        const now = performance.now();
        const left = until() - now;
        if (left <= 0) return false;
        let polling = false;
        let slice = Infinity;
        for (const c of conns) {
          if (c.fd < 0 || c.watching || c.eof || c.error) continue;
          if (now - start < poll) polling = true;
          else if (c.here) {
            if (poll && !sliced) c.polls.missed();
            slice = sliceAfter(now - start);
          } else {
            if (poll) c.polls.missed();
            c.watch();
          }
        }
        if (polling) continue;
        if (slice !== Infinity) sliced = true;
        Atomics.wait(this.ctl, 0, tick, Math.min(left, slice));
      }
    } finally {
      if (room) Atomics.store(this.ctl, 1, 0);
    }
  }

  open(bridge, spec, old = null) {
    if (!old && !spec.upgrade && this.madeHere < MADE_HERE_BYTES) {
      const r = connectHere(spec);
      if (typeof r === 'string') return r;
      if (r) {
        if (this.madeHere === 0) setImmediate(() => (this.madeHere = 0)).unref();
        this.madeHere += heldBy(r.socket);
        return { conn: new HereConn(bridge, r.socket, r.fd, pollPolicy(spec)), info: r.info };
      }
    }
    const id = this.nextId++;
    if (old) {
      this.conns.delete(old.wid);
      old.fd = -1; // (read by the I/O thread from now on)
      this.post({ op: 'starttls', id, old: old.wid, spec, received: old.watchedReads });
    } else {
      this.post({ op: 'open', id, spec, direct: !spec.upgrade }); // (TLS starts over an upgrade's in the I/O thread)
    }
    return then(this.block(null, () => this.opened.has(id), null), () => {
      const answer = this.opened.get(id);
      this.opened.delete(id);
      const early = this.early.get(id) || [];
      this.early.delete(id);
      if (!answer.ok) return answer.info;
      const fd = answer.fd ?? -1;
      const conn = new WorkerConn(bridge, this, id, fd, answer.lock, fd >= 0 ? pollPolicy(spec) : null);
      this.conns.set(id, conn);
      for (const ev of early) deliver(conn, ev);
      return { conn, info: answer.info };
    });
  }

  // An answer of the I/O thread to a message naming id, waited for even
  // under NetHttpWasm::Scheduler (it comes at once).
  answer(id) {
    const deferring = this.deferring;
    this.deferring = false;
    try {
      this.block(null, () => this.opened.has(id), null);
    } finally {
      this.deferring = deferring;
    }
    const a = this.opened.get(id);
    this.opened.delete(id);
    return a;
  }

  // TCPServer: a socket listening in the I/O thread.
  listen(bridge, spec) {
    const id = this.nextId++;
    this.post({ op: 'listen', id, spec });
    return then(this.block(null, () => this.opened.has(id), null), () => {
      const a = this.opened.get(id);
      this.opened.delete(id);
      if (!a.ok) return a.info;
      const l = new WorkerListener(this, id);
      this.listeners.set(id, l);
      return { listener: l, info: a.info };
    });
  }

  // The next connection listener l holds, as a direct connection: { conn, info } or null.
  accept(bridge, l) {
    if (!l.count || l.closed) return null;
    const id = this.nextId++;
    l.count--;
    this.post({ op: 'accept', id, sid: l.wid });
    const a = this.answer(id);
    const early = this.early.get(id) || [];
    this.early.delete(id);
    if (!a.ok) return null;
    const fd = a.fd ?? -1;
    const { peerAddress: host, peerPort: port } = a.info;
    const conn = new WorkerConn(bridge, this, id, fd, a.lock, fd >= 0 ? pollPolicy({ host, port }) : null);
    this.conns.set(id, conn);
    for (const ev of early) deliver(conn, ev);
    return { conn, info: a.info };
  }

  // IPSocket.getaddress, Resolv: the addresses, one a line, or "!" and a failure (kind resolve).
  resolve(host) {
    const id = this.nextId++;
    this.post({ op: 'lookup', id, host });
    return then(this.block(null, () => this.opened.has(id), null), () => {
      const answer = this.opened.get(id);
      this.opened.delete(id);
      return answer.info;
    });
  }

  close() {
    this.port.close();
    if (this.worker) return this.worker.terminate();
    this.workerPort.close();
    return Promise.resolve();
  }
}

export function nodeBlockingTransport() {
  let io = null;
  const get = () => io || (io = new BlockingIO());
  return {
    blocking: true,
    // whether connections made here hold handles until the event loop turns
    heldUntilTurn: () => !!io && io.madeHere > 0,
    open: (bridge, spec) => get().open(bridge, spec),
    upgrade: (bridge, conn, spec) => get().open(bridge, spec, conn),
    pump: (conn) => io && io.pump(conn),
    resolve: (host) => get().resolve(host),
    listen: (bridge, spec) => get().listen(bridge, spec),
    accept: (bridge, l) => get().accept(bridge, l),
    block: (conn, ready, ms, once) => get().block(conn, ready, ms, once),
    blockForRoom: (conn, ready, ms) => get().blockForRoom(conn, ready, ms),
    // fn() with its waits handed back as Pendings (Bridge#deferred)
    deferred(fn) {
      const t = get();
      t.deferring = true;
      try {
        return fn();
      } finally {
        t.deferring = false;
      }
    },
    // Bridge#idle: see BlockingIO#idle; with no I/O thread yet, nothing can
    // arrive: a sleep until then.
    idle(done, until, room, conns) {
      if (io) return io.idle(done, until, room, conns);
      if (done()) return true;
      const left = until() - performance.now();
      if (left > 0 && left < Infinity) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, left);
      return done();
    },
    close() {
      if (!io) return undefined;
      const t = io;
      io = null;
      return t.close();
    },
  };
}
