// The Node transport that waits on the event loop: sockets from node:net /
// node:tls in this thread; Ruby awaits each wait with a fiber switch
// (vm.evalAsync). Servers and other work in the same thread go on meanwhile.
// Right after a request, a plain TCP connection is polled on its fd for a
// quick answer (node-fd.mjs): one that comes within POLL_MS is taken with
// no fiber switch and no turn of the loop.
import { connect, connectBare, resolveName, tlsSession, WRITE_PIECE } from './node-connect.mjs';
import { socketError } from './node-errors.mjs';
import { Conn } from '../conn.mjs';
import { listen, acceptedInfo } from './node-listen.mjs';
import { POLL_MS, pollPolicy, fdOf, readFd, writeFd, readBurst, deliverRead, deliverWrite, resetAtEnd } from './node-fd.mjs';

class NodeConn extends Conn {
  // socket: a node:net Socket, or a bare handle (node-internals.mjs
  // BareSocket, of a loopback connection made at once) whose Socket is
  // made only when the connection is waited for on the event loop (watch)
  // or needs the stream (a write the kernel did not take whole, TLS,
  // shutdown): until then it is read and written on its fd alone.
  constructor(bridge, socket, spec, fd = fdOf(socket)) {
    super(bridge);
    this.bare = socket.bare ? socket : null;
    this._socket = this.bare ? null : socket;
    this.listeners = {
      data: (c) => this.onData(c),
      end: () => {
        const reset = resetAtEnd(this._socket);
        if (reset) this.onError(...socketError(reset));
        else this.onEnd();
      },
      close: () => this.onEnd(),
      error: (e) => this.onError(...socketError(e)),
    };
    if (this._socket) this.listen(socket);
    else this.bare.onConnectError = (code) => this.onError(...socketError({ code }));
    this.fd = fd;
    this.sentAt = 0; // when the request now answered was written
    this.polls = this.fd >= 0 ? pollPolicy(spec) : null;
  }
  listen(socket) {
    // (before Node's own 'end' handling: see resetAtEnd)
    for (const [ev, f] of Object.entries(this.listeners)) (ev === 'end' ? socket.prependListener(ev, f) : socket.on(ev, f));
  }
  /** The connection's node:net Socket (made over a bare handle now if need be). */
  get socket() {
    return this._socket || this.stream();
  }
  stream() {
    this._socket = this.bare.stream(true);
    this.listen(this._socket);
    if (this.paused) this._socket.pause();
    return this._socket;
  }
  // A wait on the event loop (waits.mjs waitFor): the stream must read.
  watch() {
    if (!this._socket && !this.bare.destroyed) this.stream();
  }
  onData(chunk, transient) {
    if (this.sentAt && this.polls) {
      this.polls.answered(performance.now() - this.sentAt);
      this.sentAt = 0;
    }
    super.onData(chunk, transient);
  }
  // Whether the fd can be read now: a plain connection, with no bytes
  // waiting in the socket's stream (the loop does not run meanwhile, so
  // the kernel's bytes come next).
  fdReadable() {
    return this.fd >= 0 && !this.paused && !(this._socket && this._socket.readableLength) && !this.eof && !this.error && !this.closed;
  }
  // Takes what the kernel holds now (the stale-connection check): true
  // when the fd could be read.
  peek() {
    if (!this.fdReadable()) return false;
    deliverRead(this, readFd(this.fd));
    return true;
  }
  // Takes what the kernel holds now (Bridge#bodyNow).
  readNow() {
    if (this.fdReadable()) readBurst(() => deliverRead(this, readFd(this.fd)), this);
  }
  // Polls the fd for up to POLL_MS after a request (see PollPolicy).
  poll() {
    if (!this.fdReadable() || !this.polls.shouldPoll()) return;
    const start = performance.now();
    do {
      if (readBurst(() => deliverRead(this, readFd(this.fd)), this) !== 0) {
        this.polls.hit();
        return;
      }
    } while (performance.now() - start < POLL_MS);
    this.polls.missed();
  }
  tlsSession() {
    return this._socket ? tlsSession(this._socket) : '';
  }
  // The socket, no longer listened to (TLS is started over it). One that
  // holds bytes is paused: TLS reads a paused stream's bytes first, and a
  // flowing one would hand them to no one (a client's hello, to a server
  // that accepted the connection in this turn of the loop).
  detach() {
    this.fd = -1;
    for (const [ev, f] of Object.entries(this.listeners)) this.socket.removeListener(ev, f);
    if (this.socket.readableLength) this.socket.pause();
    else if (this.paused) this.socket.resume();
    return this.socket;
  }
  pause() {
    if (this._socket) this._socket.pause();
  }
  resume() {
    if (this._socket) this._socket.resume();
  }
  write(bytes) {
    if (this.closed || (this._socket || this.bare).destroyed) return false;
    this.sentAt = performance.now();
    // straight to the kernel when nothing waits in the socket's stream (as
    // for a connection made at once, which the stream does not know is up
    // yet); what the kernel does not take goes through the stream
    if (this.fd >= 0 && this.unsent === 0 && !(this._socket && this._socket.writableLength)) {
      const n = deliverWrite(this, writeFd(this.fd, bytes));
      if (n < 0 || n === bytes.length) return true;
      bytes = bytes.subarray(n);
    }
    // in pieces, so that a writer waiting for room sees each one go
    for (let i = 0; i < bytes.length; i += WRITE_PIECE) {
      const piece = bytes.subarray(i, i + WRITE_PIECE);
      this.unsent += piece.length;
      this.socket.write(piece, () => this.onFlushed(piece.length));
    }
    return true;
  }
  shutdown() {
    if (!this.socket.destroyed) this.socket.end();
  }
  setOption(name, on) {
    const s = this._socket || this.bare;
    if (name === 'nodelay') s.setNoDelay(on);
    else if (name === 'keepalive') s.setKeepAlive(on);
  }
  destroy() {
    this.fd = -1;
    (this._socket || this.bare).destroy();
  }
}

export function nodeAsyncTransport() {
  return {
    blocking: false,
    // The connection, or a promise of it when it is not made at once (a
    // plain one to an IP address on this host is: node-connect.mjs).
    open(bridge, spec) {
      const bare = spec.upgrade ? null : connectBare(spec);
      if (typeof bare === 'string') return bare;
      if (bare) return { conn: new NodeConn(bridge, bare.socket, spec, bare.fd), info: bare.info };
      let now = null;
      const later = new Promise((resolve) => {
        connect(spec, (socket, info) => resolve((now = socket ? { conn: new NodeConn(bridge, socket, spec), info } : info)));
      });
      return now ?? later;
    },
    upgrade(bridge, conn, spec) {
      const socket = conn.detach();
      if (spec.head) {
        // (paused: a flowing stream would hand them to no one before TLS reads them)
        socket.pause();
        socket.unshift(Buffer.from(spec.head));
      }
      return new Promise((resolve) => {
        connect({ ...spec, socket }, (s, info) => resolve(s ? { conn: new NodeConn(bridge, s), info } : info));
      });
    },
    resolve(host) {
      return new Promise((done) => resolveName(host, done));
    },
    // TCPServer: { listener, info }, or a failure (a promise of it)
    listen(bridge, spec) {
      return new Promise((resolve) => listen(spec, (l, info) => resolve(l ? { listener: l, info } : info)));
    },
    // The next connection the listener holds: { conn, info }, or null
    accept(bridge, listener) {
      const socket = listener.take();
      if (!socket) return null;
      return { conn: new NodeConn(bridge, socket, { host: socket.remoteAddress, port: socket.remotePort }), info: acceptedInfo(socket) };
    },
    close() {},
  };
}
