// The I/O thread of the blocking Node transport (node-blocking.mjs): owns
// the sockets, runs their event loop, and posts what happens to the Ruby
// thread, bumping the shared counter it sleeps on.
import { workerData } from 'node:worker_threads';
import { lookup } from 'node:dns';
import { connect, socketError, WRITE_PIECE } from './node-connect.mjs';

const { port, ctl } = workerData;
const sockets = new Map();

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

function wire(id, socket) {
  const on = {};
  listeners.set(socket, on);
  socket.on('data', on.data =  (chunk) => {
    const data = chunk.byteOffset === 0 && chunk.buffer.byteLength === chunk.length ? chunk : new Uint8Array(chunk);
    post({ t: 'data', id, data }, [data.buffer]);
  });
  socket.on('end', on.end = () => post({ t: 'end', id }));
  socket.on('close', on.close = () => {
    sockets.delete(id);
    listeners.delete(socket);
    post({ t: 'end', id });
  });
  socket.on('error', on.error = (e) => {
    const [cls, message] = socketError(e);
    post({ t: 'error', id, cls, message });
  });
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
          if (s) {
            sockets.set(m.id, s);
            wire(m.id, s);
          }
          post({ t: 'open', id: m.id, ok: !!s, info });
        });
      } catch (e) {
        post({ t: 'open', id: m.id, ok: false, info: `IOError\n${e && e.message}` });
      }
      break;
    case 'starttls': {
      // TLS over connection m.old, which becomes m.id
      const old = sockets.get(m.old);
      if (!old || old.destroyed) {
        post({ t: 'open', id: m.id, ok: false, info: 'IOError\nclosed stream' });
        break;
      }
      sockets.delete(m.old);
      unwire(old);
      old.resume();
      connect({ ...m.spec, socket: old }, (s, info) => {
        if (s) {
          sockets.set(m.id, s);
          wire(m.id, s);
        }
        post({ t: 'open', id: m.id, ok: !!s, info });
      });
      break;
    }
    case 'lookup':
      lookup(m.host, (err, address) => post({ t: 'lookup', id: m.id, info: err ? `!${err.code}` : address }));
      break;
    case 'write':
      // in pieces, each reported when the OS has taken it
      for (let i = 0; i < m.data.length; i += WRITE_PIECE) {
        const piece = m.data.subarray(i, i + WRITE_PIECE);
        if (socket && !socket.destroyed) socket.write(piece, () => flushed(m.id, piece.length));
        else flushed(m.id, piece.length);
      }
      break;
    case 'pause':
      if (socket) socket.pause();
      break;
    case 'resume':
      if (socket) socket.resume();
      break;
    case 'close':
      if (socket) {
        sockets.delete(m.id);
        listeners.delete(socket);
        socket.destroy();
      }
      break;
  }
});
