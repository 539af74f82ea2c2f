// The I/O thread of the blocking Node transport (node-blocking.mjs): owns
// the sockets, runs their event loop, and posts what happens to the Ruby
// thread, bumping the shared counter it sleeps on.
//
// A plain TCP connection is handed to the Ruby thread for direct use: this
// thread connects, then never reads it unless asked ('watch': read once,
// post what came, stop), and the Ruby thread reads and writes its file
// descriptor itself. The fd is closed only here; its lock word keeps a
// close from happening while the Ruby thread is inside a read or write
// (0 free, 1 in use by the Ruby thread, 2 closed).
import { workerData } from 'node:worker_threads';
import { connect, resolveName, tlsSession, WRITE_PIECE } from './node-connect.mjs';
import { socketError } from './node-errors.mjs';
import { fdOf, resetAtEnd } from './node-fd.mjs';
import { listen, acceptedInfo } from './node-listen.mjs';
import { CLOSED, failureLines } from '../constants.mjs';
import { stopStreamReads, guardDestroy, restoreStream, readStop, readStart } from './node-internals.mjs';

const { port, ctl } = workerData;
const sockets = new Map();
const servers = new Map(); // listener id → Listener (TCPServer)

// Posts an event and wakes the Ruby thread; `wake` false: it is taken at
// the next pump (ctl[1] says the Ruby thread waits for room to write, so
// that a write's report wakes it only then, not on every request).
function post(msg, transfer, wake = true) {
  try {
    port.postMessage(msg, transfer);
  } catch {
    port.postMessage(msg); // a buffer that cannot be transferred is copied
  }
  if (!wake) return;
  Atomics.add(ctl, 0, 1);
  Atomics.notify(ctl, 0);
}

const flushed = (id, n) => post({ t: 'flushed', id, n }, undefined, Atomics.load(ctl, 1) !== 0);

const listeners = new Map(); // socket → its listeners, removed before TLS starts over it
// socket → [watched reads posted, a copy of the last]: TLS that starts over
// a direct connection takes a read the Ruby thread had not received yet
const watched = new WeakMap();
const direct = new Map(); // socket → its lock word, for connections used directly
const ignore = () => {};

// Hands the socket to the Ruby thread: Node's stream no longer starts
// reads, and destroying it waits for the lock.
function makeDirect(socket) {
  const lock = new Int32Array(new SharedArrayBuffer(4));
  stopStreamReads(socket);
  guardDestroy(
    socket,
    () => {
      while (Atomics.compareExchange(lock, 0, 0, 2) === 1) Atomics.wait(lock, 0, 1, 5);
    },
    () => direct.delete(socket),
  );
  direct.set(socket, lock);
  return lock;
}

// Back to a socket Node's stream reads (before TLS starts over it).
function unmakeDirect(socket) {
  if (!direct.has(socket)) return;
  direct.delete(socket);
  restoreStream(socket);
}

// A watched read came (or the socket ended): stop reading until asked again.
function unwatch(socket) {
  if (direct.has(socket)) readStop(socket);
}

function wire(id, socket) {
  const on = {};
  listeners.set(socket, on);
  socket.on('data', on.data = (chunk) => {
    const data = chunk.byteOffset === 0 && chunk.buffer.byteLength === chunk.length ? chunk : new Uint8Array(chunk);
    if (direct.has(socket)) {
      unwatch(socket);
      watched.set(socket, [(watched.get(socket)?.[0] ?? 0) + 1, Buffer.from(data)]);
      post({ t: 'data', id, data, watched: true }, [data.buffer]);
    } else post({ t: 'data', id, data }, [data.buffer]);
  });
  socket.prependListener('end', on.end = () => {
    const reset = resetAtEnd(socket);
    if (!reset) return post({ t: 'end', id });
    const [cls, message] = socketError(reset);
    post({ t: 'error', id, cls, message });
  });
  socket.on('close', on.close = () => {
    sockets.delete(id);
    listeners.delete(socket);
    post({ t: 'end', id });
  });
  socket.on('error', on.error = (e) => {
    const [cls, message] = socketError(e);
    post({ t: 'error', id, cls, message });
  });
  // each TLS session to resume that comes after the handshake (see sendSession)
  socket.on('session', on.session = () => sendSession(id, socket));
}

// The TLS session to resume that socket last received (taken by the Ruby
// thread at its next pump): after an open's answer, and on each new one.
function sendSession(id, socket) {
  const der = tlsSession(socket);
  if (der) post({ t: 'session', id, der }, undefined, false);
}

function unwire(socket) {
  for (const [ev, f] of Object.entries(listeners.get(socket) || {})) socket.removeListener(ev, f);
  listeners.delete(socket);
}

port.on('message', (m) => {
  const socket = sockets.get(m.id);
  switch (m.op) {
    case 'open':
      try {
        connect(m.spec, (s, info) => {
          let fd = -1;
          let lock = null;
          if (s) {
            sockets.set(m.id, s);
            fd = m.direct ? fdOf(s) : -1;
            if (fd >= 0) lock = makeDirect(s);
            wire(m.id, s);
          }
          post({ t: 'open', id: m.id, ok: !!s, info, fd, lock });
          if (s) sendSession(m.id, s);
        });
      } catch (e) {
        post({ t: 'open', id: m.id, ok: false, info: failureLines({ kind: 'IOError', detail: e && e.message }) });
      }
      break;
    case 'starttls': {
      // TLS over connection m.old, which becomes m.id
      const old = sockets.get(m.old);
      if (!old || old.destroyed) {
        post({ t: 'open', id: m.id, ok: false, info: CLOSED });
        break;
      }
      sockets.delete(m.old);
      unwire(old);
      unmakeDirect(old);
      // (one holding bytes is paused: see NodeConn#detach in node-async.mjs)
      if (old.readableLength) old.pause();
      else old.resume();
      // (libuv's reads were off while the Ruby thread read it: a server's
      // handshake starts with the client's bytes)
      if (!old.connecting) readStart(old); // (one still connecting starts reading once it is)
      // first the bytes the Ruby thread had and did not read, then one it
      // had not received (a client's first TLS bytes, to a server)
      // (paused: a flowing stream would hand them to no one before TLS reads them)
      const [posted = 0, last] = watched.get(old) || [];
      if ((posted > m.received && last) || m.spec.head) old.pause();
      if (posted > m.received && last) old.unshift(last);
      if (m.spec.head) old.unshift(Buffer.from(m.spec.head));
      connect({ ...m.spec, socket: old }, (s, info) => {
        if (s) {
          sockets.set(m.id, s);
          wire(m.id, s);
        }
        post({ t: 'open', id: m.id, ok: !!s, info });
        if (s) sendSession(m.id, s);
      });
      break;
    }
    case 'lookup':
      resolveName(m.host, (info) => post({ t: 'lookup', id: m.id, info }));
      break;
    case 'write':
      // in pieces, each reported when the OS has taken it
      for (let i = 0; i < m.data.length; i += WRITE_PIECE) {
        const piece = m.data.subarray(i, i + WRITE_PIECE);
        if (socket && !socket.destroyed) socket.write(piece, () => flushed(m.id, piece.length));
        else flushed(m.id, piece.length);
      }
      break;
    case 'watch':
      // one read of a direct connection, posted; then reads stop again
      if (socket) readStart(socket);
      break;
    case 'listen':
      // (accepted connections unread until taken: the Ruby thread reads
      // their fds, and what Node read would come after what it reads)
      listen(
        m.spec,
        (l, info) => {
          if (l) {
            servers.set(m.id, l);
            // the Ruby thread learns how many connections wait
            l.onQueue = (n) => post({ t: 'pending', id: m.id, n });
          }
          post({ t: 'open', id: m.id, ok: !!l, info });
        },
        true,
      );
      break;
    case 'accept': {
      // the next connection of listener m.sid becomes connection m.id
      const l = servers.get(m.sid);
      const s = l && l.take();
      if (!s) {
        post({ t: 'open', id: m.id, ok: false, info: CLOSED });
        break;
      }
      sockets.set(m.id, s);
      const fd = fdOf(s);
      const lock = fd >= 0 ? makeDirect(s) : null;
      wire(m.id, s);
      s.resume(); // (its reads: the Ruby thread's, or watched, with a direct one)
      post({ t: 'open', id: m.id, ok: true, info: acceptedInfo(s), fd, lock });
      break;
    }
    case 'unlisten':
      servers.get(m.id)?.close();
      servers.delete(m.id);
      break;
    case 'end':
      if (socket && !socket.destroyed) socket.end();
      break;
    case 'sockopt':
      if (socket && !socket.destroyed) {
        if (m.name === 'nodelay') socket.setNoDelay(m.on);
        else if (m.name === 'keepalive') socket.setKeepAlive(m.on);
      }
      break;
    case 'pause':
      if (socket) socket.pause();
      break;
    case 'resume':
      if (socket) socket.resume();
      break;
    case 'close':
      // (closed by the Ruby thread, which has forgotten it: no events)
      if (socket) {
        sockets.delete(m.id);
        unwire(socket);
        socket.on('error', ignore);
        socket.destroy();
      }
      break;
  }
});
