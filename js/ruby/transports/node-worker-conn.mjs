// What the blocking Node transport (node-blocking.mjs) holds in this
// thread for a socket of the I/O thread (node-io-worker.mjs): a connection
// (WorkerConn: a plain TCP one is also read and written here, on its file
// descriptor), a TCPServer's listening socket (WorkerListener), and how the
// I/O thread's events reach a connection (deliver).
import { Conn } from '../conn.mjs';
import { readBurst, readFd, writeFd, deliverRead, deliverWrite } from './node-fd.mjs';

/** A copy of bytes that can be handed to the other thread without another copy. */
function own(bytes) {
  return bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length && !(bytes.buffer instanceof SharedArrayBuffer) ? bytes : bytes.slice();
}

export class WorkerConn extends Conn {
  constructor(bridge, io, id, fd = -1, lock = null, polls = null) {
    super(bridge);
    this.io = io;
    this.wid = id;
    this.fd = fd; // ≥ 0: a direct connection (lock: see node-io-worker.mjs)
    this.lock = lock;
    this.watching = false; // the I/O thread reads it once for us
    this.watchedReads = 0; // the reads it made so, received here
    this.polls = polls; // when fd ≥ 0: see node-fd.mjs
  }
  write(bytes) {
    if (this.closed) return false;
    let data = bytes;
    // straight to the kernel, unless earlier bytes still wait in the I/O thread
    if (this.fd >= 0 && this.unsent === 0) {
      const n = this.writeDirect(bytes);
      if (n === bytes.length || n < 0) return true;
      data = bytes.subarray(n);
    }
    data = own(data);
    this.unsent += data.length;
    this.io.post({ op: 'write', id: this.wid, data }, [data.buffer]);
    return true;
  }
  // The bytes the kernel took (an error is the connection's: -1).
  writeDirect(bytes) {
    if (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) return 0; // closed: the I/O thread reports it
    let r;
    try {
      r = writeFd(this.fd, bytes);
    } finally {
      this.unlock();
    }
    return deliverWrite(this, r);
  }
  // Takes what the kernel holds for a direct connection (a large body: read
  // after read while they fill the buffer, up to a MiB: readBurst): true when
  // something happened (data, its end, an error).
  readDirect() {
    return readBurst(() => this.readOnce(), this) !== 0;
  }
  // Takes what the kernel holds now (Bridge#bodyNow).
  readNow() {
    this.io.pump(this);
  }
  // One read(2): the bytes read, 0 when there was nothing, -1 at the end
  // of the stream or on an error.
  readOnce() {
    if (this.fd < 0 || this.watching || this.eof || this.error || this.closed) return 0;
    if (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) return 0;
    let r;
    try {
      r = readFd(this.fd);
    } finally {
      this.unlock();
    }
    return deliverRead(this, r);
  }
  unlock() {
    Atomics.store(this.lock, 0, 0);
    Atomics.notify(this.lock, 0);
  }
  // Asks the I/O thread for one read (an event wakes this thread).
  watch() {
    if (this.watching) return;
    this.watching = true;
    this.io.post({ op: 'watch', id: this.wid });
  }
  // (a direct connection is read only when Ruby asks: nothing to pause)
  pause() {
    if (this.fd < 0) this.io.post({ op: 'pause', id: this.wid });
  }
  resume() {
    if (this.fd < 0) this.io.post({ op: 'resume', id: this.wid });
  }
  // (after the writes posted before it)
  shutdown() {
    this.io.post({ op: 'end', id: this.wid });
  }
  setOption(name, on) {
    this.io.post({ op: 'sockopt', id: this.wid, name, on });
  }
  destroy() {
    this.fd = -1;
    this.io.conns.delete(this.wid);
    this.io.post({ op: 'close', id: this.wid });
  }
}

// A TCPServer's socket in the I/O thread: how many connections wait there.
export class WorkerListener {
  constructor(io, id) {
    this.io = io;
    this.wid = id;
    this.count = 0;
    this.closed = false;
  }
  state() {
    if (this.closed) return 2;
    return this.count > 0 ? 1 : 0;
  }
  close() {
    if (this.closed) return;
    this.closed = true;
    this.io.listeners.delete(this.wid);
    this.io.post({ op: 'unlisten', id: this.wid });
  }
}

export function deliver(conn, ev) {
  if (ev.watched) {
    conn.watching = false;
    conn.watchedReads++;
  }
  if (ev.t === 'data') conn.onData(ev.data);
  else if (ev.t === 'flushed') conn.onFlushed(ev.n);
  else if (ev.t === 'end') conn.onEnd();
  else if (ev.t === 'error') conn.onError(ev.cls, ev.message);
  else if (ev.t === 'session') conn.session = ev.der;
}
