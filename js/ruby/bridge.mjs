// The object Ruby calls (NetHttpWasm.bridge, ruby/net_http_wasm/): opens
// connections through a transport, hands requests to the codec and gives
// Ruby the response as records, and the raw bytes for net/http's own code.
// Bytes cross through the Ruby VM's linear memory: Ruby passes the address
// and length of a String's bytes, the bridge reads them or writes into a
// String Ruby allocated. One copy each way.
//
// A transport is either waiting (open/recv/wait return Promises, which Ruby
// awaits with a fiber switch: vm.evalAsync only) or blocking (they return
// the value: the JS thread waits, as a Ruby thread does natively; under
// NetHttpWasm::Scheduler a wait is handed back as a Pending, see deferred).
import { keepBody } from '../response.mjs';
import { profileId } from '../core.mjs';
import { Connections } from './connections.mjs';
import { Conn } from './conn.mjs';
import { then } from './pending.mjs';
import { waitFor } from './waits.mjs';
import { SocketCalls } from './socket-calls.mjs';
import { CLOSED, RC_ERROR, RC_TIMEOUT, RC_WOULD_BLOCK, SEND_BODY, S_EMPTY, S_END, S_UNSETTLED, TLS_SETTINGS, failureLines, openLines, readLocalLines, upgradedLines } from './constants.mjs';

// A body up to this size goes out with the head in one write.
const ONE_WRITE = 64 * 1024;
// How long a waiting transport's connection may sit unpolled before its
// state is taken as current (see settle).
const SETTLE_AFTER_MS = 1;
// Calls f once the host's event loop has taken the I/O events that were
// ready: in Node, Deno and Bun the second setImmediate comes after a full
// turn, through the poll phase; a page has no setImmediate, and a timer's
// task comes after the network's tasks that were queued.
const afterIo = (f) => (typeof setImmediate === 'function' ? setImmediate(() => setImmediate(f)) : setTimeout(f, 0));

export class Bridge extends SocketCalls {
  // wake: calls NetHttpWasm.__wake in the VM, keeping nothing there or
  // here (a waiting transport's promise settled; see Waits#park)
  constructor(memory, options, transport, wake = null) {
    super(transport, wake, options.headroom);
    this.memory = memory;
    this.profile = options.profile;
    this.profileId = profileId(options);
    // not MRI: responses are read in the codec's strict mode (RFC 9112)
    this.strictResponses = !!options.strictResponses;
    this.blocking = !!transport.blocking;
    this.wasmCodec = options.wasmCodec;
    this.connections = new Connections({ profile: this.profile, wasmCodec: this.wasmCodec });
    this.conns = this.connections.conns; // id → Conn
    this.lastError = '';
    this.listeners = new Map(); // id → a transport's listener (TCPServer)
    this.droppedHeaders = []; // (the fetch transport: the fields fetch() refused)
    this.compileCache = options.compileCache || null; // (a CompileCache: compiled)
    this.compiledName = null;
    this.found = null;
    this._u8 = null;
  }

  // -- calls from Ruby: connections and messages (the socket API's in socket-calls.mjs) --

  // NetHttpWasm::Socket.open: lines.open (schema/bridge.mjs), or "!" and
  // lines.failure; a Promise of it from a waiting transport (unless it
  // could answer at once). `tlsJson`: the TLS settings (NetHttpWasm.tls_params;
  // '' or null: a plain connection); `local` (lines.local) is the end to
  // bind the connection to (Net::HTTP#local_host / local_port; '' or null:
  // any); `upgrade` true: TLS will start over the connection (starttls:
  // HTTPS through a proxy).
  open(host, port, tlsJson, timeoutMs, local, upgrade) {
    let tls = null;
    try {
      if (tlsJson != null && tlsJson !== '') tls = readTlsSettings(tlsJson);
    } catch (e) {
      return this.refuse(failureLines({ kind: 'ArgumentError', detail: e.message }));
    }
    const spec = {
      host: String(host),
      port: Number(port),
      tls,
      timeoutMs: timeoutMs == null || timeoutMs < 0 ? null : Number(timeoutMs),
      upgrade: !!upgrade,
    };
    if (local != null && local !== '') {
      const end = readLocalLines(local);
      if (end.host) spec.localAddress = end.host;
      if (end.port) spec.localPort = end.port;
    }
    const done = (r) => {
      if (typeof r === 'string') return `!${r}`;
      r.conn.peer = spec;
      return openLines({ id: this.connections.add(r.conn), ...r.info });
    };
    return then(this.transport.open(this, spec), done);
  }

  // NetHttpWasm::Socket#start_tls: a TLS handshake over connection id (a
  // tunnel through a proxy); the connection keeps its id. lines.upgraded,
  // or "!" and lines.failure as open's (a Promise of it from a waiting transport).
  starttls(id, tlsJson, timeoutMs) {
    const conn = this.conns.get(id);
    if (!conn || conn.closed || !this.transport.upgrade) return this.refuse(CLOSED);
    let tls;
    try {
      tls = readTlsSettings(tlsJson);
    } catch (e) {
      return this.refuse(failureLines({ kind: 'ArgumentError', detail: e.message }));
    }
    const spec = {
      host: conn.peer.host,
      port: conn.peer.port,
      tls,
      timeoutMs: timeoutMs == null || timeoutMs < 0 ? null : Number(timeoutMs),
    };
    // bytes that came and were not read (a client's first TLS bytes, to a
    // server): the handshake reads them first
    if (conn.rawBytes) {
      spec.head = new Uint8Array(conn.rawBytes);
      let at = 0;
      for (const c of conn.raw) {
        spec.head.set(c, at);
        at += c.length;
      }
      conn.raw = [];
      conn.rawBytes = 0;
    }
    const done = (r) => {
      if (typeof r === 'string') {
        this.close(id);
        return `!${r}`;
      }
      // the old Conn gives up its socket: nothing of it is read any more
      conn.closed = true;
      if (conn.parser) {
        this.connections.releaseParser(conn.parser);
        conn.parser = null;
      }
      r.conn.id = id;
      r.conn.peer = conn.peer;
      r.conn.rbuf = conn.rbuf;
      r.conn.rcap = conn.rcap;
      r.conn.hbuf = conn.hbuf;
      this.conns.set(id, r.conn);
      return upgradedLines(r.info);
    };
    return then(this.transport.upgrade(this, conn, spec), done);
  }

  // Ruby's buffers of connection id (NetHttpWasm::BufferedIO, bound once and
  // again when they are replaced): the receive buffer the records are
  // written into (bufAddr, bufCap bytes: request, recv, recvNow) and the
  // buffer request records are read from (hdrAddr).
  bind(id, bufAddr, bufCap, hdrAddr) {
    const conn = this.conn(id);
    if (!conn) return RC_ERROR;
    conn.rbuf = bufAddr;
    conn.rcap = bufCap;
    conn.hbuf = hdrAddr;
    return 0;
  }

  // The codec writes a request: the request record of schema/bridge.mjs
  // (METHOD, path, version, then the fields; each line ends in "\n"),
  // hdrLen bytes in the bound buffer (or at hdrAddr), with its SEND_* flags;
  // the body after it on the wire. Returns the bytes of the response's records already written
  // into the receive buffer (a transport that answers at once, or a quick
  // poll), 0 when there are none yet, -(NEED_BASE + n) when the first does
  // not fit, or RC_ERROR.
  request(id, hdrLen, flags, bodyAddr = 0, bodyLen = 0, hdrAddr = null) {
    const conn = this.conn(id);
    if (!conn || conn.closed) return this.fail(CLOSED);
    const mem = this.mem();
    const at = hdrAddr == null ? conn.hbuf : hdrAddr;
    const c = this.wasmCodec;
    c.begin(hdrLen);
    c.u8.set(mem.subarray(at, at + hdrLen), c.inPtr);
    c.pos = hdrLen;
    try {
      c.call('nh_wasm_write_header', flags, this.profileId);
    } catch (e) {
      return this.fail(failureLines({ kind: e && e.rubyClass ? e.rubyClass : 'ArgumentError', detail: e && e.message }));
    }
    // the head and body, copied out before the parser (which shares the
    // codec) is started
    const p = c.outPtr();
    const n = c.outLen();
    const body = flags & SEND_BODY ? bodyLen : 0;
    let bytes;
    let rest = null;
    if (body === 0) {
      // (a small copy goes into a shared slab: see keepBody)
      bytes = keepBody(c.buffer, p, p + n);
    } else if (body <= ONE_WRITE) {
      // head and body in one write: fewer segments on the wire, the same bytes
      bytes = new Uint8Array(n + body);
      bytes.set(c.u8.subarray(p, p + n));
      if (body) bytes.set(mem.subarray(bodyAddr, bodyAddr + body), n);
    } else {
      bytes = c.u8.slice(p, p + n);
      rest = mem.slice(bodyAddr, bodyAddr + body);
    }
    conn.beginMessage(this.connections.messageOptions(flags, !!this.strictResponses));
    conn.write(bytes);
    if (rest) conn.write(rest);
    // a quick answer, taken before Ruby would wait for it
    if (!this.blocking && !rest && conn.poll) conn.poll();
    // the response's first records, when they are here already: Ruby takes
    // them without another call
    return conn.records.length ? conn.fillRecords(this.mem(), conn.rbuf, conn.rcap) : 0;
  }

  // request() of a GET's record in the bound buffer, over a blocking
  // transport: the response's first records waited for in the same call,
  // as Ruby's recv would next (waitMs: its read timeout, -1: none). A wait
  // that timed out is told by the recv that follows (0 here).
  requestWait(id, hdrLen, flags, waitMs) {
    const rc = this.request(id, hdrLen, flags);
    if (rc !== 0 || !this.blocking) return rc;
    const conn = this.conns.get(id);
    if (!this.transport.block(conn, () => conn.hasRecords(), waitMs < 0 ? null : waitMs)) {
      conn.timedOut = true;
      return 0;
    }
    // (closed with nothing to read: recv reports it)
    return conn.records.length ? conn.fillRecords(this.mem(), conn.rbuf, conn.rcap) : 0;
  }

  // The next records of the current message into Ruby's bound buffer,
  // waiting up to timeoutMs for each arrival (a Promise from a waiting
  // transport).
  recv(id, timeoutMs) {
    const conn = this.conn(id);
    if (!conn) return this.reply(RC_ERROR);
    if (conn.records.length) return this.reply(conn.fillRecords(this.mem(), conn.rbuf, conn.rcap));
    // (requestWait waited already)
    if (conn.timedOut) {
      conn.timedOut = false;
      return this.reply(RC_TIMEOUT);
    }
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    const after = (ok) => {
      if (!ok) return RC_TIMEOUT;
      if (conn.closed && !conn.records.length) return this.fail(CLOSED);
      return conn.fillRecords(this.mem(), conn.rbuf, conn.rcap);
    };
    if (this.blocking) return then(this.transport.block(conn, () => conn.hasRecords(), ms), after);
    return waitFor(conn, () => conn.hasRecords(), ms).then(after);
  }

  // What is there now (RC_WOULD_BLOCK when nothing).
  recvNow(id) {
    const conn = this.conn(id);
    if (!conn) return RC_ERROR;
    if (this.blocking) this.transport.pump(conn);
    if (!conn.records.length) return RC_WOULD_BLOCK;
    return conn.fillRecords(this.mem(), conn.rbuf, conn.rcap);
  }

  // After an R_SIZE record: the body bytes that follow it straight into a
  // String of Ruby's at addr (cap bytes), with no record framing, as recv
  // waits for records: the bytes written, or 0 when the next record is not
  // body bytes (Ruby reads it with recv). What a blocking wait reads goes
  // from the parser into the String (Conn#sink).
  body(id, addr, cap, timeoutMs) {
    const conn = this.conn(id);
    if (!conn) return this.reply(RC_ERROR);
    if (conn.records.length) return this.reply(conn.fillBody(this.mem(), addr, cap));
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    const after = (ok) => {
      if (!ok) return RC_TIMEOUT;
      if (conn.closed && !conn.records.length) return this.fail(CLOSED);
      return conn.fillBody(this.mem(), addr, cap);
    };
    if (!this.blocking) return waitFor(conn, () => conn.hasRecords(), ms).then(after);
    // (under the scheduler the wait is a Pending: the sink is gone before
    // anything is read for it, and the records are taken when it is over)
    const sink = { at: addr, end: addr + cap };
    conn.sink = sink;
    let r;
    try {
      r = this.transport.block(conn, () => conn.hasRecords() || sink.at > addr, ms);
    } finally {
      conn.sink = null;
    }
    return then(r, (ok) => (sink.at > addr ? sink.at - addr : after(ok)));
  }

  // body() of what is there now: the body records queued, then what the
  // connection reads now, straight into the String (RC_WOULD_BLOCK when
  // nothing).
  bodyNow(id, addr, cap) {
    const conn = this.conn(id);
    if (!conn) return RC_ERROR;
    let n = 0;
    if (conn.records.length) {
      n = conn.fillBody(this.mem(), addr, cap);
      if (n === 0 || n === cap || conn.records.length) return n;
    }
    const sink = { at: addr + n, end: addr + cap };
    conn.sink = sink;
    try {
      conn.readNow();
    } finally {
      conn.sink = null;
    }
    n = sink.at - addr;
    if (n === 0 && !conn.records.length) return RC_WOULD_BLOCK;
    // (what did not fit, or did not follow at once, waits as records)
    return n > 0 ? n : conn.fillBody(this.mem(), addr, cap);
  }

  // IO#wait_readable(0) (Net::HTTP's check for a connection the server
  // closed, before each request): the state, S_EMPTY..S_END. A blocking
  // transport has looked at the socket (or reads it now): the state is
  // current. A waiting transport's event loop has not polled since Ruby last
  // waited; when that was SETTLE_AFTER_MS ago or more (a `sleep`, other
  // work) and nothing is there, S_UNSETTLED: Ruby then awaits settleLater
  // (unless the transport can read a plain connection's fd now: peek).
  // Right after a response the state is taken as it is: a close that comes
  // in the same instant races with the next request here as it does in MRI.
  settle(id) {
    const s = this.state(id);
    if (s !== S_EMPTY || this.blocking) return s;
    const conn = this.conns.get(id);
    // a plain connection's fd read now tells the kernel's state
    if (conn.peek && conn.peek()) return conn.state();
    return performance.now() - Math.max(this.lastPoll, conn.lastActivity) < SETTLE_AFTER_MS ? s : S_UNSETTLED;
  }

  // A promise of the state once the event loop has polled (afterIo).
  settleLater(id) {
    return new Promise((resolve) => afterIo(() => resolve(this.state(id))));
  }

  state(id) {
    const conn = this.conns.get(id);
    if (!conn) return S_END;
    if (this.blocking) this.transport.pump(conn);
    return conn.state();
  }

  // The TLS session connection id last received, to resume in a later
  // connection (DER in base64; "" if none).
  session(id) {
    const conn = this.conns.get(id);
    if (!conn) return '';
    if (this.blocking) this.transport.pump(conn);
    return conn.tlsSession();
  }

  close(id) {
    const conn = this.conns.get(id);
    if (conn) {
      this.conns.delete(id);
      conn.close();
    }
    return 0;
  }

  // -- calls from Ruby: compiled Ruby kept (ruby/net_http_wasm/compile_cache.rb, compile-cache.mjs) --

  // The size of what is kept for the key at keyAddr (0: nothing), which
  // compiledCopy then writes; keepCompiled keeps bytes for that key.
  compiled(keyAddr, keyLen) {
    const cache = this.compileCache;
    if (!cache) return 0;
    this.compiledName = cache.name(this.mem().subarray(keyAddr, keyAddr + keyLen));
    this.found = cache.find(this.compiledName);
    return this.found ? this.found.length : 0;
  }

  compiledCopy(addr) {
    if (this.found) this.mem().set(this.found, addr);
    this.found = null;
    return 0;
  }

  keepCompiled(addr, len) {
    if (this.compileCache && this.compiledName) this.compileCache.keep(this.compiledName, this.mem().slice(addr, addr + len));
    this.compiledName = null;
    return 0;
  }
}


// The TLS settings of open and starttls (schema/bridge.mjs tlsSettings)
// from their JSON; a key or a type not declared there throws.
function readTlsSettings(json) {
  const settings = JSON.parse(String(json));
  for (const [k, v] of Object.entries(settings)) {
    const type = TLS_SETTINGS[k];
    const ok = type === 'string[]' ? Array.isArray(v) && v.every((x) => typeof x === 'string') : typeof v === type;
    if (!ok) throw new TypeError(type ? `TLS setting ${k}: a ${type}, not ${JSON.stringify(v)}` : `${k} is not a TLS setting`);
  }
  return settings;
}
