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
