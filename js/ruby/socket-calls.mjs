// The calls Ruby's socket API makes on the bridge (TCPSocket, TCPServer,
// IO.select: ruby/net_http_wasm/tcp_socket.rb, and net/http's own reads and
// writes when the codec does not do the byte work), and what every call of
// the bridge shares: the VM's memory, the connection of an id, the error
// convention. Bridge (bridge.mjs) adds the calls for connections and
// messages; it sets up what these read (memory, conns, listeners,
// blocking, lastError).
import { Conn } from './conn.mjs';
import { then } from './pending.mjs';
import { Waits, waitFor } from './waits.mjs';
import { CLOSED, RC_ERROR, RC_WOULD_BLOCK, UNSENT_MAX, failureLines, listeningLines, acceptedLines } from './constants.mjs';

// The failure of a connection's error ([Ruby class, message]).
const failureOf = (error) => failureLines({ kind: error[0], detail: error[1] });

export class SocketCalls extends Waits {
  mem() {
    const buf = this.memory.buffer;
    if (!this._u8 || this._u8.buffer !== buf) this._u8 = new Uint8Array(buf);
    return this._u8;
  }

  conn(id) {
    const c = this.conns.get(id);
    if (!c) this.lastError = CLOSED;
    return c;
  }

  error() {
    return this.lastError;
  }

  // A call failed: RC_ERROR, and error() says why (failure: lines.failure).
  fail(failure) {
    this.lastError = failure;
    return RC_ERROR;
  }

  // A call whose reply says it failed: "!" and the failure.
  refuse(failure) {
    return this.reply(`!${failure}`);
  }

  reply(v) {
    return this.blocking ? v : Promise.resolve(v);
  }

  // -- calls from Ruby: the socket API --

  // IPSocket.getaddress, Resolv: the addresses, one a line, or "!" and a
  // failure of kind resolve (a Promise of it from a waiting transport).
  resolve(host) {
    if (!this.transport.resolve) return this.refuse(failureLines({ kind: 'resolve', detail: 'EAI_NONAME' }));
    return this.transport.resolve(String(host));
  }

  // Raw write (net/http's own request writing), as write_nonblock: what fits
  // under UNSENT_MAX bytes not yet taken by the OS (the bytes taken),
  // RC_WOULD_BLOCK when nothing does.
  write(id, addr, len) {
    const conn = this.conn(id);
    if (!conn || conn.closed) return this.fail(CLOSED);
    if (conn.error) return this.fail(failureOf(conn.error));
    if (this.blocking) this.transport.pump();
    const n = Math.min(len, UNSENT_MAX - conn.unsent);
    if (n <= 0 && len > 0) return RC_WOULD_BLOCK;
    conn.beginRaw();
    conn.write(this.mem().slice(addr, addr + n));
    return n;
  }

  // IO#wait_writable(timeout) → 1 when there is room (fewer than UNSENT_MAX
  // bytes not yet taken by the OS) or the connection is done, 0 when
  // timeoutMs passed with none of them taken (a Promise from a waiting
  // transport). Each piece taken restarts the clock, as each write(2)
  // does for BufferedIO's write_timeout.
  drain(id, timeoutMs) {
    const conn = this.conns.get(id);
    if (!conn) return this.reply(1);
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    const ready = () => conn.unsent < UNSENT_MAX || conn.closed || conn.eof || !!conn.error;
    if (this.blocking) return then(this.transport.blockForRoom(conn, ready, ms), (ok) => (ok ? 1 : 0));
    return waitFor(conn, ready, ms, false, true).then((ok) => (ok ? 1 : 0));
  }

  // read_nonblock.
  readNow(id, addr, cap) {
    const conn = this.conn(id);
    if (!conn) return RC_ERROR;
    if (this.blocking) this.transport.pump(conn);
    // (a waiting transport's connection read on its fd alone until now: its
    // stream reads from here on, as Ruby's raw reads expect of the loop)
    else if (conn.watch) conn.watch();
    conn.beginRaw();
    const n = conn.readRaw(this.mem(), addr, cap);
    if (n === RC_ERROR) this.lastError = failureOf(conn.error);
    return n;
  }

  // IO#wait_readable(timeout) → 1 ready, 0 timed out (a Promise from a
  // waiting transport).
  wait(id, timeoutMs) {
    const conn = this.conns.get(id);
    if (!conn) return this.reply(1);
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    const ready = () => conn.state() !== 0;
    if (this.blocking) return then(this.transport.block(conn, ready, ms, true), (ok) => (ok ? 1 : 0));
    return waitFor(conn, ready, ms, true).then((ok) => (ok ? 1 : 0));
  }

  // IO.select over sockets (ids: "1,2,s3": connections, and listeners
  // with an s): 1 when one of them has something to read, its end, or a
  // connection to accept; 0 when timeoutMs passed (a Promise from a
  // waiting transport).
  waitAny(ids, timeoutMs) {
    const conns = [];
    for (const id of String(ids).split(',')) {
      const c = id.startsWith('s') ? this.listeners.get(Number(id.slice(1))) : this.conns.get(Number(id));
      if (!c) return this.reply(1);
      conns.push(c);
    }
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    if (!this.blocking) return waitForAny(conns, () => conns.some((c) => c.state() !== 0), ms).then((ok) => (ok ? 1 : 0));
    // the first connection is waited on; the I/O thread is asked to report
    // the others' data (and says when a listener has a connection)
    const plain = conns.filter((c) => c instanceof Conn);
    const ready = () => {
      let any = false;
      for (const c of conns) {
        if (c instanceof Conn) this.transport.pump(c);
        if (c.state() !== 0) any = true;
      }
      if (!any) for (let i = 1; i < plain.length; i++) if (plain[i].fd >= 0 && plain[i].watch) plain[i].watch();
      return any;
    };
    return then(this.transport.block(plain[0] || null, ready, ms, true), (ok) => (ok ? 1 : 0));
  }

  // TCPServer.new: lines.listening, or "!" and a failure (a Promise of it
  // from a waiting transport).
  listen(host, port, backlog) {
    if (!this.transport.listen) return this.refuse(failureLines({ kind: 'errno', detail: 'EOPNOTSUPP' }));
    const spec = { host: String(host), port: Number(port), backlog: Number(backlog) };
    return then(this.transport.listen(this, spec), (r) => {
      if (typeof r === 'string') return `!${r}`;
      // (among the connections too: uninstall closes it with them)
      const id = this.connections.add(r.listener);
      this.listeners.set(id, r.listener);
      return listeningLines({ id, ...r.info });
    });
  }

  // TCPServer#accept: the next connection, waiting up to timeoutMs for one:
  // lines.accepted, "" when the time passed, or "!" and CLOSED.
  accept(id, timeoutMs) {
    const l = this.listeners.get(id);
    if (!l) return this.refuse(CLOSED);
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    const take = (ok) => {
      if (l.closed) return `!${CLOSED}`;
      const r = ok ? this.transport.accept(this, l) : null;
      if (!r) return '';
      r.conn.peer = { host: r.info.peerAddress, port: r.info.peerPort };
      return acceptedLines({ id: this.connections.add(r.conn), ...r.info });
    };
    const ready = () => l.state() !== 0;
    if (this.blocking) return then(this.transport.block(null, () => (this.transport.pump(), ready()), ms, true), take);
    return waitFor(l, ready, ms, true).then(take);
  }

  // TCPServer#accept_nonblock: 1 when a connection waits, else 0.
  acceptable(id) {
    const l = this.listeners.get(id);
    if (!l) return 1;
    if (this.blocking) this.transport.pump();
    return l.state() !== 0 ? 1 : 0;
  }

  // TCPServer#close.
  unlisten(id) {
    const l = this.listeners.get(id);
    if (l) {
      this.listeners.delete(id);
      this.conns.delete(id);
      l.close();
    }
    return 0;
  }

  // BasicSocket#setsockopt of an option the host honours (name: 'nodelay'
  // or 'keepalive').
  sockopt(id, name, on) {
    const conn = this.conns.get(id);
    if (conn && !conn.closed && conn.setOption) conn.setOption(String(name), !!on);
    return 0;
  }

  // BasicSocket#close_write: the peer reads the end of the stream; this end
  // still reads.
  shutdown(id) {
    const conn = this.conns.get(id);
    if (conn && !conn.closed) conn.shutdown();
    return 0;
  }
}

// waitFor over several connections: true when ready() holds after an
// arrival on any of them, false when ms milliseconds have passed.
function waitForAny(conns, ready, ms) {
  if (ready()) return Promise.resolve(true);
  for (const c of conns) if (c.watch) c.watch();
  return new Promise((resolve) => {
    let timer = null;
    const clear = () => {
      for (const c of conns) if (c.waiter === waiter) c.waiter = null;
    };
    const waiter = () => {
      if (!ready()) {
        for (const c of conns) c.waiter = waiter;
        return;
      }
      clear();
      if (timer) clearTimeout(timer);
      resolve(true);
    };
    for (const c of conns) c.waiter = waiter;
    if (ms != null) {
      timer = setTimeout(() => {
        clear();
        resolve(false);
      }, ms);
    }
  });
}
