// Every internal of Node's sockets the Node transports rely on, and why:
// node:net's public API cannot read or write a connection from the thread
// that waits on it, as MRI does with read(2) and write(2), nor stop the
// stream's own reads while another thread reads the descriptor. Each helper
// degrades to "not available" (-1, false) where the internal is missing, and
// the transports then use the public stream API.
//
//   socket._handle.fd          the descriptor of a connected plain socket
//   socket._handle._parent.fd  ... under a TLS socket (its handle wraps the TCP one)
//   socket._handle.setNoDelay  TCP_NODELAY before Node has seen the connection up
//   socket._handle.readStop / readStart   libuv reads off / on, one read at a time
//   socket._read               replaced: the stream starts no read of its own
//   socket._destroy            wrapped: destroying waits for a read in progress
//   process.binding('tcp_wrap')  TCP and TCPConnectWrap: a bare handle for a
//                              connection the VM's thread makes to a loopback
//                              address and reads and writes on its fd
//                              (bareConnect): a node:net Socket costs several
//                              times as much to make, and is let go only when
//                              the event loop turns

import net from 'node:net';
import { getSystemErrorName } from 'node:util';

/** The fd of a connected plain TCP socket of node:net, or -1 (TLS, a pipe, Windows). */
export function socketFd(socket) {
  const h = socket && socket._handle;
  return !socket.encrypted && h && typeof h.fd === 'number' && h.fd >= 0 && process.platform !== 'win32' ? h.fd : -1;
}

/** The fd of the TCP connection under a socket, TLS or not, or -1. */
export function tcpFd(socket) {
  const h = socket._handle;
  const fd = !h ? -1 : typeof h.fd === 'number' ? h.fd : h._parent && typeof h._parent.fd === 'number' ? h._parent.fd : -1;
  return process.platform === 'win32' ? -1 : fd;
}

/** Sets TCP_NODELAY at once (Node sets it when it sees the connection up). */
export function setNoDelayNow(socket) {
  if (socket._handle && socket._handle.setNoDelay) socket._handle.setNoDelay(true);
}

const noRead = () => {};

/** The socket's stream starts no read of its own (its descriptor is read elsewhere). */
export function stopStreamReads(socket) {
  socket._read = noRead;
}

/**
 * Destroying the socket first waits while `busy()` (another thread reading
 * or writing its descriptor), then runs `after` and Node's own destroy.
 */
export function guardDestroy(socket, busy, after) {
  socket._destroy = function (err, cb) {
    busy();
    after();
    return Object.getPrototypeOf(this)._destroy.call(this, err, cb);
  };
}

/** Undoes stopStreamReads and guardDestroy: Node's stream reads the socket again. */
export function restoreStream(socket) {
  delete socket._read;
  delete socket._destroy;
}

// (the handle's `reading` is Node's record of whether libuv reads it: kept
// true to what was done, so that Node's stream starts or stops them again
// when it should, and a TLS socket over it too)

/** libuv's reads of the socket off (true when it could). */
export function readStop(socket) {
  if (!socket._handle) return false;
  socket._handle.readStop();
  socket._handle.reading = false;
  return true;
}

/** libuv's reads of the socket on (true when it could). */
export function readStart(socket) {
  if (socket.destroyed || !socket._handle) return false;
  socket._handle.readStart();
  socket._handle.reading = true;
  return true;
}

// tcp_wrap's binding: undefined until looked up, null where it is missing
// (Bun, Deno, Windows) or would warn (process.binding is deprecated, and
// says so under --pending-deprecation: node:net's sockets are used then).
let tcpWrap;

function tcpBinding() {
  if (tcpWrap !== undefined) return tcpWrap;
  tcpWrap = null;
  const warns = process.execArgv.includes('--pending-deprecation') || /--pending-deprecation/.test(process.env.NODE_OPTIONS || '');
  if (warns || process.versions.bun || globalThis.Deno || process.platform === 'win32' || typeof process.binding !== 'function') return null;
  try {
    const b = process.binding('tcp_wrap');
    if (typeof b.TCP === 'function' && typeof b.TCPConnectWrap === 'function' && typeof b.constants?.SOCKET === 'number') tcpWrap = b;
  } catch {
    // (not this runtime's to give)
  }
  return tcpWrap;
}

const noop = () => {};

/**
 * A plain connection's bare TCP handle, with the parts of node:net's Socket
 * a connection read and written on its fd uses: fd, setNoDelay,
 * setKeepAlive, end, destroy, destroyed; and stream(), a node:net Socket
 * over the handle, made when first asked for (to wait for the connection on
 * the event loop, or to shut it down: its shutdown(2) happens when the loop
 * turns). From then on the Socket is the connection.
 */
class BareSocket {
  constructor(handle) {
    this.handle = handle;
    this.socket = null; // the node:net Socket over the handle, once made
    this.destroyed = false;
    this.bare = true;
    // (code) → for a failure the connect request reports once the event
    // loop turns: libuv takes the socket's pending error (SO_ERROR) to
    // complete it, so a reset that came before is told only there
    this.onConnectError = null;
  }
  get fd() {
    return this.destroyed || typeof this.handle.fd !== 'number' ? -1 : this.handle.fd;
  }
  /** The local end: { address, family, port }. */
  local() {
    const out = {};
    if (!this.destroyed) this.handle.getsockname(out);
    return out;
  }
  /**
   * The node:net Socket over the handle (made at the first call): with
   * `reads`, its stream reads the connection once it has listeners for
   * 'data'; without, it never reads (its fd is read elsewhere).
   */
  stream(reads = false) {
    if (!this.socket) {
      this.socket = new net.Socket({ handle: this.handle, manualStart: !reads });
      if (!reads) {
        this.socket.on('error', noop);
        stopStreamReads(this.socket);
      }
    }
    return this.socket;
  }
  setNoDelay(on) {
    if (this.socket) this.socket.setNoDelay(on);
    else if (!this.destroyed) this.handle.setNoDelay(on);
  }
  setKeepAlive(on) {
    if (this.socket) this.socket.setKeepAlive(on);
    else if (!this.destroyed) this.handle.setKeepAlive(on, 0);
  }
  end() {
    if (!this.destroyed) this.stream().end();
  }
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.socket) this.socket.destroy();
    else this.handle.close();
  }
}

/**
 * Starts a plain connection to address (an IP address of this family, 4 or
 * 6) and port on a bare TCP handle: a BareSocket whose connect(2) has been
 * made (whether the kernel finished it is for the caller to ask of its fd);
 * { error: code } when connect(2) failed at once; null where bare handles
 * are not available (the caller uses node:net).
 */
export function bareConnect(address, port, family) {
  const b = tcpBinding();
  if (!b) return null;
  const handle = new b.TCP(b.constants.SOCKET);
  const socket = new BareSocket(handle);
  const req = new b.TCPConnectWrap();
  // (the kernel's answer is read on the fd; the request's completion, or
  // its cancellation by close, comes when the event loop turns)
  req.oncomplete = (status) => {
    if (status < 0 && !socket.destroyed && socket.onConnectError) socket.onConnectError(getSystemErrorName(status));
  };
  const err = family === 6 ? handle.connect6(req, address, port) : handle.connect(req, address, port);
  if (err) {
    handle.close();
    return { error: getSystemErrorName(err) };
  }
  if (socket.fd < 0) {
    socket.destroy();
    return null;
  }
  return socket;
}
