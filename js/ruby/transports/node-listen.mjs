// Listening sockets (Ruby's TCPServer) with node:net, for both Node
// transports: the event-loop one keeps the Listener in this thread, the
// blocking one in its I/O thread (node-io-worker.mjs). Node accepts each
// connection as it comes; it waits in the Listener's queue until Ruby's
// accept takes it (unread with `paused`; else what Node's stream reads of it
// meanwhile comes first).
import net from 'node:net';
import { errnoOf, resolveCodeOf } from './errno.mjs';
import { failureLines } from '../constants.mjs';

export class Listener {
  constructor(server) {
    this.server = server;
    this.queue = []; // accepted sockets Ruby has not taken
    this.waiter = null; // (as Conn's: called when one comes, see waitFor)
    this.closed = false;
    this.onQueue = null; // called with the queue's length when it changes
    server.on('connection', (socket) => {
      if (this.closed) return socket.destroy();
      // (a connection reset before Ruby takes it reports it when read)
      socket.on('error', () => {});
      this.queue.push(socket);
      if (this.onQueue) this.onQueue(this.queue.length);
      this.wake();
      return undefined;
    });
  }

  wake() {
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w();
    }
  }

  // 1: a connection waits, 2: closed, 0: none yet (as Conn#state).
  state() {
    if (this.closed) return 2;
    return this.queue.length ? 1 : 0;
  }

  take() {
    const s = this.queue.shift() || null;
    if (s && this.onQueue) this.onQueue(this.queue.length);
    return s;
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.queue) s.destroy();
    this.queue = [];
    this.server.close();
    this.wake();
  }
}

/**
 * Listens on spec.host:spec.port (host '' : every address) with
 * spec.backlog; `done(listener, { family, address, port })` (the values
 * of listen's reply after the id, schema/bridge.mjs lines.listening), or
 * `done(null, failure)` (lines.failure, kind errno). Accepted connections may be half-closed
 * by the peer and still written (allowHalfOpen), as a socket of MRI's;
 * `paused`: Node does not read them (their bytes stay in the kernel)
 * until their stream is resumed.
 */
export function listen(spec, done, paused = false) {
  const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: paused });
  // (a name: Node resolves it first, as getaddrinfo(3) does for bind(2))
  const failed = (e) => done(null, failureLines(resolveCodeOf(e) ? { kind: 'resolve', detail: resolveCodeOf(e) } : { kind: 'errno', detail: errnoOf(e) || 'EADDRNOTAVAIL' }));
  server.once('error', failed);
  const o = { port: spec.port, backlog: spec.backlog > 0 ? spec.backlog : 511 };
  if (spec.host) o.host = spec.host;
  try {
    server.listen(o, () => {
      server.removeListener('error', failed);
      server.on('error', () => {});
      const a = server.address();
      done(new Listener(server), { family: a.family === 'IPv6' ? 'AF_INET6' : 'AF_INET', address: a.address, port: a.port });
    });
  } catch (e) {
    done(null, failureLines({ kind: 'errno', detail: errnoOf(e) || 'EINVAL' }));
  }
}

// An accepted socket's ends: the values of accept's reply after the id
// (schema/bridge.mjs lines.accepted).
export function acceptedInfo(socket) {
  const family = socket.localAddress && socket.localAddress.includes(':') ? 'AF_INET6' : 'AF_INET';
  return { family, address: socket.localAddress || '', port: socket.localPort || 0, peerAddress: socket.remoteAddress || '', peerPort: socket.remotePort || 0 };
}
