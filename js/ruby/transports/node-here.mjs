// The blocking Node transport's connections to a loopback address
// (node-blocking.mjs): made and owned by the VM's thread, read and written
// on their fd from there.
import { Conn } from '../conn.mjs';
import { socketError } from './node-errors.mjs';
import { writeFd, deliverWrite, readBurst, readFd, deliverRead } from './node-fd.mjs';

// A plain connection to a loopback address owned by this thread
// (connectHere): read and written on its fd; what the kernel does not take
// of a write waits here and is written as the kernel takes it (flush: at
// each read, and in the slices of a wait).
export class HereConn extends Conn {
  constructor(bridge, socket, fd, polls) {
    super(bridge);
    this.socket = socket; // node:net's Socket, or a bare handle with its methods used here
    if (socket.bare) socket.onConnectError = (code) => this.onError(...socketError({ code }));
    this.fd = fd;
    this.here = true;
    this.watching = false;
    this.polls = polls;
    this.queue = []; // bytes written and not yet taken by the kernel
  }
  write(bytes) {
    if (this.closed || this.fd < 0) return false;
    let data = bytes;
    if (this.queue.length === 0) {
      const n = deliverWrite(this, writeFd(this.fd, bytes));
      if (n < 0 || n === bytes.length) return true;
      data = bytes.subarray(n);
    }
    // (a copy: the caller's bytes may be a view of memory it reuses)
    this.queue.push(data.slice());
    this.unsent += data.length;
    return true;
  }
  // Writes what waits while the kernel takes it.
  flush() {
    while (this.queue.length && this.fd >= 0 && !this.error) {
      const head = this.queue[0];
      const n = deliverWrite(this, writeFd(this.fd, head));
      if (n < 0) {
        this.queue = [];
        return;
      }
      if (n > 0) this.onFlushed(n);
      if (n < head.length) {
        this.queue[0] = head.subarray(n);
        return;
      }
      this.queue.shift();
    }
  }
  readDirect() {
    this.flush();
    return readBurst(() => this.readOnce(), this) !== 0;
  }
  readNow() {
    this.readDirect();
  }
  readOnce() {
    if (this.fd < 0 || this.eof || this.error || this.closed) return 0;
    return deliverRead(this, readFd(this.fd));
  }
  watch() {}
  setOption(name, on) {
    if (name === 'nodelay') this.socket.setNoDelay(on);
    else if (name === 'keepalive') this.socket.setKeepAlive(on);
  }
  // (shutdown(2) happens when this thread's event loop next turns)
  shutdown() {
    this.flush();
    if (!this.socket.destroyed) this.socket.end();
  }
  destroy() {
    this.fd = -1;
    this.queue = [];
    this.socket.destroy();
  }
}
