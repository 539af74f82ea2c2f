// The I/O thread of the blocking Node transport (node-blocking.mjs): owns
// the sockets, runs their event loop, and posts what happens to the Ruby
// thread, bumping the shared counter it sleeps on.
import { workerData } from 'node:worker_threads';
import { lookup } from 'node:dns';
import { connect, socketError } from './node-connect.mjs';

const { port, ctl } = workerData;
const sockets = new Map();

function post(msg, transfer) {
  try {
    port.postMessage(msg, transfer);
  } catch {
    port.postMessage(msg); // a buffer that cannot be transferred is copied
  }
  Atomics.add(ctl, 0, 1);
  Atomics.notify(ctl, 0);
}

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
      if (socket && !socket.destroyed) socket.write(m.data);
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
