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
    socket.on('data', (c) => this.onData(c));
    socket.on('end', () => this.onEnd());
    socket.on('close', () => this.onEnd());
    socket.on('error', (e) => this.onError(...socketError(e)));
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
