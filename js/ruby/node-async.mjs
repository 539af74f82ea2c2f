// The Node transport that waits on the event loop: sockets from node:net /
// node:tls in this thread; Ruby awaits each wait with a fiber switch
// (vm.evalAsync). Servers and other work in the same thread go on meanwhile.
import { readFileSync } from 'node:fs';
import { lookup } from 'node:dns';
import { connect, socketError } from './node-connect.mjs';
import { Conn } from './conn.mjs';

class NodeConn extends Conn {
  constructor(bridge, socket) {
    super(bridge);
    this.socket = socket;
    this.listeners = {
      data: (c) => this.onData(c),
      end: () => this.onEnd(),
      close: () => this.onEnd(),
      error: (e) => this.onError(...socketError(e)),
    };
    for (const [ev, f] of Object.entries(this.listeners)) socket.on(ev, f);
  }
  // The socket, no longer listened to (TLS is started over it).
  detach() {
    for (const [ev, f] of Object.entries(this.listeners)) this.socket.removeListener(ev, f);
    if (this.paused) this.socket.resume();
    return this.socket;
  }
  pause() {
    this.socket.pause();
  }
  resume() {
    this.socket.resume();
  }
  write(bytes) {
    if (this.closed || this.socket.destroyed) return false;
    this.socket.write(bytes);
    return true;
  }
  destroy() {
    this.socket.destroy();
  }
}

export function nodeAsyncTransport() {
  return {
    blocking: false,
    open(bridge, spec) {
      return new Promise((resolve) => {
        connect(spec, (socket, info) => resolve(socket ? { conn: new NodeConn(bridge, socket), info } : info));
      });
    },
    upgrade(bridge, conn, spec) {
      const socket = conn.detach();
      return new Promise((resolve) => {
        connect({ ...spec, socket }, (s, info) => resolve(s ? { conn: new NodeConn(bridge, s), info } : info));
      });
    },
    resolve(host) {
      return new Promise((done) => lookup(host, (err, address) => done(err ? `!${err.code}` : address)));
    },
    readFile(path) {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return null;
      }
    },
    close() {},
  };
}
