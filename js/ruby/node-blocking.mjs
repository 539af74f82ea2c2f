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
import { Worker, MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { Conn } from './conn.mjs';
import { Pending, then } from './pending.mjs';

const WORKER = new URL('./node-io-worker.mjs', import.meta.url);

/** A copy of bytes that can be handed to the other thread without another copy. */
function own(bytes) {
  return bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length && !(bytes.buffer instanceof SharedArrayBuffer) ? bytes : bytes.slice();
}

class WorkerConn extends Conn {
  constructor(bridge, io, id) {
    super(bridge);
    this.io = io;
    this.wid = id;
  }
  write(bytes) {
    if (this.closed) return false;
    const data = own(bytes);
    this.unsent += data.length;
    this.io.post({ op: 'write', id: this.wid, data }, [data.buffer]);
    return true;
  }
  pause() {
    this.io.post({ op: 'pause', id: this.wid });
  }
  resume() {
    this.io.post({ op: 'resume', id: this.wid });
  }
  destroy() {
    this.io.conns.delete(this.wid);
    this.io.post({ op: 'close', id: this.wid });
  }
}

class BlockingIO {
  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.ctl = new Int32Array(new SharedArrayBuffer(8)); // [events posted, waiting for room]
    this.port = port1;
    this.worker = new Worker(WORKER, { workerData: { port: port2, ctl: this.ctl }, transferList: [port2] });
    this.worker.unref();
    this.conns = new Map(); // I/O thread's connection id → WorkerConn
    this.opened = new Map(); // id → the I/O thread's answer to 'open'
    this.early = new Map(); // id → events that came with the answer
    this.nextId = 1;
    this.deferring = false;
  }

  post(msg, transfer) {
    this.port.postMessage(msg, transfer);
  }

  // Hands every event the I/O thread has posted to its connection.
  pump() {
    for (;;) {
      const m = receiveMessageOnPort(this.port);
      if (!m) return;
      const ev = m.message;
      if (ev.t === 'open' || ev.t === 'lookup') {
        this.opened.set(ev.id, ev);
        continue;
      }
      const c = this.conns.get(ev.id);
      if (c) deliver(c, ev);
      else if (this.opened.has(ev.id)) this.early.get(ev.id)?.push(ev) ?? this.early.set(ev.id, [ev]);
    }
  }

  // Waits until ready() holds (true), or ms milliseconds pass with nothing
  // arriving on conn (false); each arrival restarts the clock unless `once`.
  // While `deferring` (a call under NetHttpWasm::Scheduler, Bridge#deferred),
  // a wait that cannot end at once is handed back as a Pending instead.
  block(conn, ready, ms, once = false, room = false) {
    if (ready()) return true;
    const p = new Pending(conn, ready, ms, once, room);
    if (this.deferring) return p;
    return this.idle(() => p.poll(performance.now()) !== undefined, () => p.deadline, room) && ready();
  }

  // block() for room to write: the I/O thread wakes this one with each
  // write it reports only meanwhile.
  blockForRoom(conn, ready, ms) {
    return this.block(conn, ready, ms, false, true);
  }

  // Sleeps on the counter of events, taking them as they come, until done()
  // holds (true) or the time until() gives has come (false). `room`: the
  // I/O thread also wakes this one with each write it reports.
  idle(done, until, room = false) {
    if (room) Atomics.store(this.ctl, 1, 1);
    try {
      for (;;) {
        const tick = Atomics.load(this.ctl, 0);
        this.pump();
        if (done()) return true;
        const left = until() - performance.now();
        if (left <= 0) return false;
        Atomics.wait(this.ctl, 0, tick, left);
      }
    } finally {
      if (room) Atomics.store(this.ctl, 1, 0);
    }
  }

  open(bridge, spec, old = null) {
    const id = this.nextId++;
    if (old) {
      this.conns.delete(old.wid);
      this.post({ op: 'starttls', id, old: old.wid, spec });
    } else {
      this.post({ op: 'open', id, spec });
    }
    return then(this.block(null, () => this.opened.has(id), null), () => {
      const answer = this.opened.get(id);
      this.opened.delete(id);
      const early = this.early.get(id) || [];
      this.early.delete(id);
      if (!answer.ok) return answer.info;
      const conn = new WorkerConn(bridge, this, id);
      this.conns.set(id, conn);
      for (const ev of early) deliver(conn, ev);
      return { conn, info: answer.info };
    });
  }

  // IPSocket.getaddress: an address or "!CODE".
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
    return this.worker.terminate();
  }
}

function deliver(conn, ev) {
  if (ev.t === 'data') conn.onData(ev.data);
  else if (ev.t === 'flushed') conn.onFlushed(ev.n);
  else if (ev.t === 'end') conn.onEnd();
  else if (ev.t === 'error') conn.onError(ev.cls, ev.message);
}

export function nodeBlockingTransport() {
  let io = null;
  const get = () => io || (io = new BlockingIO());
  return {
    blocking: true,
    open: (bridge, spec) => get().open(bridge, spec),
    upgrade: (bridge, conn, spec) => get().open(bridge, spec, conn),
    pump: () => io && io.pump(),
    resolve: (host) => get().resolve(host),
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
    idle(done, until, room) {
      if (io) return io.idle(done, until, room);
      if (done()) return true;
      const left = until() - performance.now();
      if (left > 0 && left < Infinity) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, left);
      return done();
    },
    readFile(path) {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return null;
      }
    },
    close() {
      if (!io) return undefined;
      const t = io;
      io = null;
      return t.close();
    },
  };
}
