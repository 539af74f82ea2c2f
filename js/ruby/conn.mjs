// A connection as the bridge sees it: the bytes a transport received,
// buffered for Ruby and read either raw (net/http's own BufferedIO over
// read_nonblock) or through the codec's ResponseParser, whose events become
// records written straight into Ruby's receive buffer. Transports subclass
// Conn (write, destroy, pause, resume) and call onData / onEnd / onError.
import { R_HEAD, R_BODY, R_END, R_ERROR, R_SIZE, R_LAST, RC_ERROR, RC_WOULD_BLOCK, RC_EOF, NEED_BASE, BODY_DIRECT, failureLines } from './constants.mjs';
import { keepBody } from '../response.mjs';

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

// Pause a transport while this much received data waits for Ruby.
const HIGH_WATER = 8 << 20;
const LOW_WATER = 1 << 20;

// The local end open reports for a connection the host has no socket of
// its own for (fetch(), XMLHttpRequest, a stream): values of lines.open.
export const NO_LOCAL_END = Object.freeze({ family: 'AF_INET', address: '0.0.0.0', port: 0 });

// An R_ERROR record's payload (lines.failure), the message a String or bytes.
export function errorPayload(cls, message) {
  const head = encoder.encode(failureLines({ kind: cls, detail: '' }));
  const msg = typeof message === 'string' ? encoder.encode(message) : message;
  const out = new Uint8Array(head.length + msg.length);
  out.set(head);
  out.set(msg, head.length);
  return out;
}

export class Conn {
  constructor(bridge) {
    this.bridge = bridge;
    this.raw = []; // received chunks not yet read (raw mode), or before a message starts
    this.rawBytes = 0;
    this.records = []; // [type, Uint8Array] waiting for Ruby (codec mode)
    this.recordBytes = 0;
    this.parser = null; // ResponseParser of the current message
    this.inCodec = false; // current message read in codec mode
    this.msgDone = true;
    this.eof = false;
    this.error = null; // [class, message] of a socket error
    this.closed = false;
    this.waiter = null; // waiter(flushed): on every arrival, and each write the OS took (async transports)
    this.arrivals = 0; // counts arrivals (blocking transports restart read timeouts on each)
    this.flushes = 0; // counts writes the OS took (and restart waits for room)
    this.paused = false;
    this.unsent = 0; // bytes written and not yet taken by the OS (see Bridge#write)
    this.lastActivity = performance.now(); // the last arrival or flush
    // Ruby's String that body bytes go to straight from the parser while a
    // bridge call waits for them (Bridge#body): { at, end } addresses
    this.sink = null;
    this.sizeQueued = false; // an R_SIZE record waits for Ruby (holdReads)
    this.options = null; // the current message's parser options
    this.timedOut = false; // Bridge#requestWait's wait timed out
    // Ruby's buffers (Bridge#bind): where records go, and request records come from
    this.rbuf = 0;
    this.rcap = 0;
    this.hbuf = 0;
    this.session = ''; // the TLS session last received (transports that tell: the blocking one's I/O thread)
  }

  /** The TLS session to resume that the connection last received, DER in base64 ("" if none). */
  tlsSession() { return this.session; }

  // -- from the transport --
  // (transient: the chunk's memory is reused after the call; the parser
  // copies what it reads, raw data is kept as a copy)
  onData(chunk, transient = false) {
    if (this.closed) return;
    if (this.inCodec && !this.msgDone) this.feed(chunk, false);
    else this.keepRaw(transient ? chunk.slice() : chunk);
    this.flow();
    this.wake();
  }

  // n bytes written went to the OS: a writer waiting for room goes on (not
  // an arrival: a wait for data does not restart its clock)
  onFlushed(n) {
    this.unsent -= n;
    this.wake(true);
  }

  onEnd() {
    if (this.eof) return;
    this.eof = true;
    if (this.inCodec && !this.msgDone) this.feed(null, true);
    this.wake();
  }

  onError(cls, message) {
    if (this.error) return;
    this.error = [cls, message];
    if (this.inCodec && !this.msgDone) {
      this.pushRecord(R_ERROR, errorPayload(cls, message));
      this.msgDone = true;
    }
    this.wake();
  }

  wake(flushed = false) {
    if (flushed) this.flushes++;
    else this.arrivals++;
    this.lastActivity = performance.now();
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w(flushed);
    }
  }

  flow() {
    const queued = this.rawBytes + this.recordBytes;
    if (!this.paused && queued > HIGH_WATER) {
      this.paused = true;
      this.pause();
    } else if (this.paused && queued < LOW_WATER) {
      this.paused = false;
      this.resume();
    }
  }

  pause() {}
  resume() {}
  destroy() {}
  // (the write side's end: close_write)
  shutdown() {}
  // setsockopt: 'nodelay' or 'keepalive', on or off (where the transport can)
  setOption() {}
  // (a transport that reads without being asked: readNow takes what the
  // kernel holds now)
  readNow() {}

  // Whether a burst of reads stops (the rest stays with the kernel): a large
  // body's head is queued, and Ruby will read the body straight into its
  // String (Bridge#body), or that String is full.
  holdReads() {
    const s = this.sink;
    return s ? s.at >= s.end : this.sizeQueued;
  }

  pushRecord(type, payload) {
    this.records.push([type, payload]);
    this.recordBytes += payload.length + 5;
  }

  keepRaw(chunk) {
    this.raw.push(chunk);
    this.rawBytes += chunk.length;
  }

  // Feeds the parser; turns its events into records.
  feed(chunk, eof) {
    const p = this.parser;
    let events;
    try {
      events = eof ? p.finish() : p.feed(chunk);
    } catch (e) {
      const cls = e && e.rubyClass ? e.rubyClass : 'RuntimeError';
      this.pushRecord(R_ERROR, errorPayload(cls, e && e.messageBytes ? e.messageBytes : String(e && e.message ? e.message : e)));
      this.msgDone = true;
      return;
    }
    // (the parser gives heads as the records Ruby reads: bridgeRecords)
    for (const ev of events) {
      if (ev.type === 'body') this.bodyBytes(ev.data);
      else if (ev.type === 'head') {
        this.pushRecord(R_HEAD, ev.record);
        // a large body of known length: Ruby may take it straight into its
        // String (length: -1 when it ends in this feed, is decoded or has
        // no length)
        if (ev.length >= BODY_DIRECT) {
          this.pushRecord(R_SIZE, encoder.encode(String(ev.length)));
          this.sizeQueued = true;
        }
      } else if (ev.type === 'end') {
        // MRI rewrites the fields while decoding (content-encoding removed,
        // content-length set to the decoded size): the final ones, when
        // they changed
        this.pushRecord(R_END, ev.fields || EMPTY);
        this.msgDone = true;
        // the next message's first bytes (the parser keeps them too: taken)
        if (ev.rest.length) {
          const rest = p.takePending();
          this.raw.unshift(rest);
          this.rawBytes += rest.length;
        }
      }
    }
  }

  // Body bytes from the parser (a view, valid until its next call): into
  // the sink while it has room and nothing is queued before them, else
  // queued as a copy.
  bodyBytes(data) {
    let d = data;
    const s = this.sink;
    if (s && this.records.length === 0 && s.at < s.end) {
      const k = Math.min(d.length, s.end - s.at);
      this.bridge.mem().set(k === d.length ? d : d.subarray(0, k), s.at);
      s.at += k;
      if (k === d.length) return;
      d = d.subarray(k);
    }
    this.pushRecord(R_BODY, this.ownBody(d));
  }

  // Body bytes the parser gave, as bytes of their own: a view of the
  // codec's memory copied out (a small one into the bodies' slab), a copy
  // (a decoding parser's) kept.
  ownBody(d) {
    const c = this.bridge.wasmCodec;
    return c && d.buffer === c.buffer ? keepBody(c.buffer, d.byteOffset, d.byteOffset + d.byteLength) : d;
  }

  // -- from Ruby (through the bridge) --

  // Starts reading the next message with the codec.
  beginMessage(options) {
    // (the parser holds no bytes of its own here: feed takes the rest
    // after each message's end)
    if (!this.parser) this.parser = this.bridge.connections.takeParser(options);
    // (the same options: the parser keeps its configuration)
    else this.parser.reset(options === this.options ? undefined : options);
    this.options = options;
    this.timedOut = false;
    this.records.length = 0;
    this.recordBytes = 0;
    this.sizeQueued = false;
    this.inCodec = true;
    this.msgDone = false;
    if (this.error) {
      this.pushRecord(R_ERROR, errorPayload(this.error[0], this.error[1]));
      this.msgDone = true;
      return;
    }
    const raw = this.raw;
    this.raw = [];
    this.rawBytes = 0;
    for (const chunk of raw) {
      if (this.msgDone) this.keepRaw(chunk);
      else this.feed(chunk, false);
    }
    if (this.eof && !this.msgDone) this.feed(null, true);
  }

  beginRaw() {
    if (this.inCodec) {
      this.inCodec = false;
      this.records.length = 0;
      this.recordBytes = 0;
      this.sizeQueued = false;
      this.msgDone = true;
    }
  }

  // Writes whole records (u8 type, u32 length, payload) into Ruby's buffer
  // at addr (cap bytes), up to an R_SIZE record (Ruby may take the body
  // after it with fillBody) or the message's end; a body record is split to
  // fit, and its last one merged with an empty end (R_LAST). Returns the
  // bytes written, or -(NEED_BASE + n) when the next record is a head that
  // needs n.
  fillRecords(mem, addr, cap) {
    let p = addr;
    const end = addr + cap;
    const recs = this.records;
    let i = 0;
    while (i < recs.length) {
      const [type, payload] = recs[i];
      const room = end - p - 5;
      if (room < payload.length) {
        if (type === R_BODY && room > 0) {
          writeRecord(mem, p, type, payload.subarray(0, room));
          p += 5 + room;
          recs[i] = [type, payload.subarray(room)];
          this.recordBytes -= room;
        } else if (p === addr) {
          return -(NEED_BASE + payload.length + 5);
        }
        break;
      }
      // a body's last bytes and its end with the fields unchanged: one record
      const last = type === R_BODY && i + 1 < recs.length && recs[i + 1][0] === R_END && recs[i + 1][1].length === 0;
      writeRecord(mem, p, last ? R_LAST : type, payload);
      p += 5 + payload.length;
      this.recordBytes -= payload.length + 5;
      i++;
      if (last) {
        this.recordBytes -= 5;
        i++;
        break;
      }
      if (type === R_SIZE) {
        this.sizeQueued = false;
        break;
      }
    }
    if (i) recs.splice(0, i);
    if (this.paused) this.flow();
    return p - addr;
  }

  // Writes the bytes of the body records at the head of the queue into
  // Ruby's memory at addr (cap bytes), with no record framing; a record is
  // split to fit. Returns the bytes written: 0 when the next record is not
  // body bytes.
  fillBody(mem, addr, cap) {
    let p = addr;
    const end = addr + cap;
    const recs = this.records;
    let i = 0;
    while (i < recs.length && p < end) {
      const [type, payload] = recs[i];
      if (type !== R_BODY) break;
      const room = end - p;
      if (payload.length > room) {
        mem.set(payload.subarray(0, room), p);
        p += room;
        recs[i] = [type, payload.subarray(room)];
        this.recordBytes -= room;
        break;
      }
      mem.set(payload, p);
      p += payload.length;
      this.recordBytes -= payload.length + 5;
      i++;
    }
    if (i) recs.splice(0, i);
    if (this.paused) this.flow();
    return p - addr;
  }

  // Raw read for read_nonblock: up to cap bytes into Ruby memory.
  readRaw(mem, addr, cap) {
    if (this.rawBytes === 0) {
      if (this.error) return RC_ERROR;
      if (this.eof) return RC_EOF;
      return RC_WOULD_BLOCK;
    }
    let p = addr;
    let left = cap;
    while (left > 0 && this.raw.length) {
      const c = this.raw[0];
      if (c.length <= left) {
        mem.set(c, p);
        p += c.length;
        left -= c.length;
        this.raw.shift();
      } else {
        mem.set(c.subarray(0, left), p);
        p += left;
        this.raw[0] = c.subarray(left);
        left = 0;
      }
    }
    const n = p - addr;
    this.rawBytes -= n;
    if (this.paused) this.flow();
    return n;
  }

  // 0: nothing to read yet; 1: data to read; 2: end of stream or error.
  state() {
    if (this.rawBytes > 0) return 1;
    // (the end record of a message without a body, which Ruby does not
    // read, is not data)
    if (this.records.length > 0 && !(this.msgDone && this.records.length === 1 && this.records[0][0] === R_END)) return 1;
    if (this.parser && this.inCodec && !this.msgDone && this.parser.pending.length) return 1;
    if (this.ended()) return 2;
    return 0;
  }

  // The stream ended, failed, or was closed: nothing more comes.
  ended() { return this.eof || this.error !== null || this.closed; }

  hasRecords() { return this.records.length > 0 || this.closed; }

  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.parser) {
      this.bridge.connections.releaseParser(this.parser);
      this.parser = null;
    }
    this.raw = [];
    this.records = [];
    this.wake();
    this.destroy();
  }
}

function writeRecord(mem, p, type, payload) {
  const n = payload.length;
  mem[p] = type;
  mem[p + 1] = n;
  mem[p + 2] = n >>> 8;
  mem[p + 3] = n >>> 16;
  mem[p + 4] = n >>> 24;
  mem.set(payload, p + 5);
}
