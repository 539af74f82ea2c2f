// net-http-wasm/ruby: Ruby's own Net::HTTP inside ruby.wasm, with sockets
// from the host and the byte work done by this package's codec.
//
//   import { installNetHttp } from 'net-http-wasm/ruby';
//   const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
//   installNetHttp(vm);
//   await vm.evalAsync(`require 'net/http'; puts Net::HTTP.get(URI('http://127.0.0.1:8080/'))`);
//
// Ruby side: ruby/net_http_wasm.rb (evaluated in the VM by installNetHttp).
// It keeps net/http's own logic (Net::HTTP#request, transport_request,
// keep-alive, retries, timeouts, body encodings) and replaces three things:
//   - Net::HTTP#connect opens a host socket through this file (node:net /
//     node:tls in Node; a virtual connection over fetch() in browsers);
//   - Net::HTTPGenericRequest#exec hands the request (method, path, header
//     hash, body) to the codec's Request, which writes the bytes;
//   - Net::HTTPResponse.read_new / #read_body_0 take the response from the
//     codec's incremental ResponseParser fed with the socket's bytes.
// With { codec: false } the socket adapter stays and net/http's own Ruby code
// does the byte work (used by the benchmark as the baseline).
//
// Blocking calls are JS promises awaited with a fiber switch (JS::Object#await
// semantics), so Net::HTTP must run inside vm.evalAsync / RbValue#callAsync.
// A ruby.wasm limit to know (2.10.1, Ruby 4.0 and 3.4, with or without this
// package): after such a fiber switch inside a block run by a C-implemented
// iterator (Array#map, Hash#each, each_with_index, ...), raising and
// rescuing an exception corrupts the VM ("[BUG] vm_call_cfunc: cfp
// consistency error", "memory access out of bounds"). Net::HTTP raises inside
// (retries, timeouts, errors the caller rescues), so loop over requests with
// Array#each, Integer#times, loop or while, which are Ruby code there.
//
// Bytes cross between Ruby and JS through the Ruby VM's linear memory: Ruby
// passes the address of a String's bytes (Array#pack('p')) and its length; JS
// reads them, or writes into a String Ruby allocated. No base64, no per-byte
// loops, one copy each way.
import { Request } from './index.mjs';
import { ResponseParser, Response, rsConcatAll as concatAll } from './response.mjs';

const isNode = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;

let nodeNet = null;
let nodeTls = null;
let nodeFs = null;
let rubySource = null;

// The Ruby side is shipped as a plain .rb file next to js/: read it once here
// (top-level await), so installNetHttp itself stays synchronous.
const RUBY_FILE = new URL('../ruby/net_http_wasm.rb', import.meta.url);
if (isNode) {
  [nodeNet, nodeTls, nodeFs] = await Promise.all([import('node:net'), import('node:tls'), import('node:fs')]);
  try {
    rubySource = nodeFs.readFileSync(RUBY_FILE, 'utf8');
  } catch {
    rubySource = null;
  }
} else if (typeof fetch === 'function') {
  try {
    const r = await fetch(RUBY_FILE);
    if (r.ok) rubySource = await r.text();
  } catch {
    rubySource = null;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

// The parser replaces a response's head block when decoding a body changes
// its fields (Response#_setHead, js/response.mjs). Keeping the block it
// replaces gives the fields as read, with one feed per chunk. Without that
// hook (another response.mjs), Conn#feedMessage feeds up to the end of the
// head first instead.
let SNAPSHOT = Response && Response.prototype && typeof Response.prototype._setHead === 'function';
if (SNAPSHOT && !Response.prototype._setHead.__nhwSnapshot) {
  const setHead = Response.prototype._setHead;
  const wrapped = function (head) {
    if (this._head !== undefined && this._asRead === undefined) this._asRead = this._head;
    return setHead.call(this, head);
  };
  wrapped.__nhwSnapshot = true;
  Response.prototype._setHead = wrapped;
}
const encoder = new TextEncoder();

// Record types written into Ruby's receive buffer (see ruby/net_http_wasm.rb).
const R_HEAD = 1, R_BODY = 2, R_END = 3, R_ERROR = 4;
// Return codes of recv / readNow.
const RC_ERROR = -1, RC_TIMEOUT = -2, RC_WOULD_BLOCK = -4, RC_EOF = -5;
// A recv that cannot place the next head record returns -(NEED_BASE + size).
const NEED_BASE = 16;

// Pause a socket while this much received data waits for Ruby.
const HIGH_WATER = 8 << 20;
const LOW_WATER = 1 << 20;

const NL = 10;

function rubyErrorPayload(cls, message) {
  return encoder.encode(`${cls}\n${message}`);
}

// Node error codes → the Errno class MRI raises and the detail it appends.
function errnoOf(err) {
  const code = err && err.code;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return code;
  return null;
}

// ---- connections ----

// A connection: a byte stream from the host, read either raw (net/http's
// own BufferedIO over read_nonblock) or through a ResponseParser (codec mode).
class Conn {
  constructor(bridge) {
    this.bridge = bridge;
    this.raw = []; // received chunks not yet read (raw mode), or before a message starts
    this.rawBytes = 0;
    this.records = []; // [type, Uint8Array] waiting for Ruby (codec mode)
    this.recordBytes = 0;
    this.parser = null; // ResponseParser of the current message
    this.codec = false; // current message read in codec mode
    this.msgDone = true;
    this.eof = false;
    this.error = null; // [class, message] of a socket error
    this.closed = false;
    this.waiter = null;
    this.paused = false;
  }

  // -- from the transport --
  onData(chunk) {
    if (this.closed) return;
    if (this.codec && !this.msgDone) this.feedMessage(chunk);
    else {
      this.raw.push(chunk);
      this.rawBytes += chunk.length;
    }
    this.flow();
    this.wake();
  }

  onEnd() {
    if (this.eof) return;
    this.eof = true;
    if (this.codec && !this.msgDone) this.feed(null, true);
    this.wake();
  }

  onError(cls, message) {
    if (this.error) return;
    this.error = [cls, message];
    if (this.codec && !this.msgDone) {
      this.pushRecord(R_ERROR, rubyErrorPayload(cls, message));
      this.msgDone = true;
    }
    this.wake();
  }

  wake() {
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w();
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

  pushRecord(type, payload) {
    this.records.push([type, payload]);
    this.recordBytes += payload.length + 5;
  }

  // Until the head is read, feeds the parser up to each place where the
  // head may end (a line holding only whitespace), so that the 'head' event
  // is handled before any body byte is parsed: its fields are then as read
  // (decoding a body changes them by 'end').
  feedMessage(chunk) {
    if (SNAPSHOT || !this.decode) {
      this.feed(chunk, false);
      return;
    }
    let start = 0;
    while (!this.headSeen && !this.msgDone) {
      const end = this.headEnd(chunk, start);
      if (end < 0) break;
      this.feed(chunk.subarray(start, end), false);
      start = end;
    }
    if (this.msgDone) {
      if (start < chunk.length) this.keepRaw(chunk.subarray(start));
    } else if (start < chunk.length || chunk.length === 0) {
      this.feed(start ? chunk.subarray(start) : chunk, false);
    }
  }

  // The index after the next blank line ("\n", blanks, "\n") from start, or
  // -1; this.scanNL carries "after a newline, only blanks so far" across chunks.
  headEnd(chunk, start) {
    let i = start;
    let nl = this.scanNL;
    const n = chunk.length;
    while (i < n) {
      if (nl) {
        const c = chunk[i];
        if (c === 10) {
          this.scanNL = false;
          return i + 1;
        }
        if (c === 32 || c === 9 || c === 13 || c === 11 || c === 12) {
          i++;
          continue;
        }
        nl = false;
      }
      const j = chunk.indexOf(10, i);
      if (j < 0) {
        i = n;
        break;
      }
      nl = true;
      i = j + 1;
    }
    this.scanNL = nl;
    return -1;
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
      const msg = e && e.messageBytes ? e.messageBytes : encoder.encode(e && e.message ? e.message : String(e));
      const head = encoder.encode(`${cls}\n`);
      const payload = new Uint8Array(head.length + msg.length);
      payload.set(head);
      payload.set(msg, head.length);
      this.pushRecord(R_ERROR, payload);
      this.msgDone = true;
      return;
    }
    for (const ev of events) {
      if (ev.type === 'body') this.pushRecord(R_BODY, ev.data);
      else if (ev.type === 'head') {
        this.headSeen = true;
        const res = ev.response;
        const asRead = res._asRead;
        const head = headPayload(res, this.decode, asRead);
        // only decoding changes the fields by the end of the message
        this.headBlock = head.inflate ? asRead || res._head : null;
        this.headFields = head.inflate && !this.headBlock ? res.rawHeaderEntries() : null;
        this.pushRecord(R_HEAD, head.payload);
      } else if (ev.type === 'end') {
        // MRI rewrites the fields while decoding (content-encoding removed,
        // content-length set to the decoded size): send the final ones then.
        let payload = EMPTY;
        const res = ev.response;
        if (this.headBlock) {
          if (res._head !== this.headBlock) payload = fieldsPayload(res);
        } else if (this.headFields) {
          const fields = res.rawHeaderEntries();
          if (!sameFields(fields, this.headFields)) payload = fieldsPayload(res);
        }
        this.pushRecord(R_END, payload);
        this.headFields = null;
        this.headBlock = null;
        this.msgDone = true;
        const rest = p.takePending();
        if (rest.length) {
          this.raw.unshift(rest);
          this.rawBytes += rest.length;
        }
      }
    }
  }

  // -- from Ruby --

  // Starts reading the next message with the codec.
  beginMessage(options) {
    if (!this.parser) this.parser = new this.bridge.ResponseParser(options);
    else {
      this.parser.takePending();
      this.parser.reset(options);
    }
    this.records.length = 0;
    this.recordBytes = 0;
    this.headFields = null;
    this.headBlock = null;
    this.decode = !!options.decodeContent;
    this.headSeen = false;
    this.scanNL = false;
    this.codec = true;
    this.msgDone = false;
    if (this.error) {
      this.onErrorAgain();
      return;
    }
    const raw = this.raw;
    this.raw = [];
    this.rawBytes = 0;
    for (const chunk of raw) {
      if (this.msgDone) this.keepRaw(chunk);
      else this.feedMessage(chunk);
    }
    if (this.eof && !this.msgDone) this.feed(null, true);
  }

  onErrorAgain() {
    const [cls, message] = this.error;
    this.pushRecord(R_ERROR, rubyErrorPayload(cls, message));
    this.msgDone = true;
  }

  beginRaw() {
    if (this.codec) {
      this.codec = false;
      this.records.length = 0;
      this.recordBytes = 0;
      this.msgDone = true;
    }
  }

  hasRecords() {
    return this.records.length > 0;
  }

  // Writes whole records into Ruby's buffer at addr (cap bytes); a body
  // record is split to fit. Returns the bytes written, or -(NEED_BASE + n)
  // when the next record is a head that needs n bytes.
  fillRecords(addr, cap) {
    const mem = this.bridge.mem();
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
      writeRecord(mem, p, type, payload);
      p += 5 + payload.length;
      this.recordBytes -= payload.length + 5;
      i++;
    }
    if (i) recs.splice(0, i);
    if (this.paused) this.flow();
    return p - addr;
  }

  // Raw read for read_nonblock: up to cap bytes into Ruby memory.
  readRaw(addr, cap) {
    if (this.rawBytes === 0) {
      if (this.error) return RC_ERROR;
      if (this.eof) return RC_EOF;
      return RC_WOULD_BLOCK;
    }
    const mem = this.bridge.mem();
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
    if (this.parser && this.codec && !this.msgDone && this.parser.pending.length) return 1;
    if (this.eof || this.error || this.closed) return 2;
    return 0;
  }

  // Resolves when state() != 0 or after ms milliseconds (null: no limit).
  waitReadable(ms) {
    if (this.state() !== 0) return Promise.resolve(1);
    return new Promise((resolve) => {
      let timer = null;
      this.waiter = () => {
        if (timer) clearTimeout(timer);
        resolve(1);
      };
      if (ms != null && ms >= 0)
        timer = setTimeout(() => {
          this.waiter = null;
          resolve(0);
        }, ms);
    });
  }

  // Resolves with 1 when codec records are ready, 0 when ms milliseconds
  // pass with no data arriving (each arrival restarts the clock, as
  // BufferedIO's read_timeout applies to each wait for data).
  waitRecords(ms) {
    if (this.records.length) return Promise.resolve(1);
    return new Promise((resolve) => {
      let timer = null;
      const arm = () => {
        if (ms == null || ms < 0) return;
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => {
          this.waiter = null;
          resolve(0);
        }, ms);
      };
      const waiter = () => {
        if (this.records.length || this.closed) {
          if (timer) clearTimeout(timer);
          resolve(1);
        } else {
          this.waiter = waiter;
          arm();
        }
      };
      this.waiter = waiter;
      arm();
    });
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.parser) {
      this.parser.close();
      this.parser = null;
    }
    this.raw = [];
    this.records = [];
    this.wake();
    this.destroy();
  }

  destroy() {}
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

const EMPTY = new Uint8Array(0);

// A byte builder for "\n"-separated records.
class Bytes {
  constructor(size) {
    this.u8 = new Uint8Array(size);
    this.n = 0;
  }
  grow(k) {
    if (this.n + k <= this.u8.length) return;
    const u = new Uint8Array(Math.max(this.u8.length * 2, this.n + k));
    u.set(this.u8.subarray(0, this.n));
    this.u8 = u;
  }
  bytes(b) {
    this.grow(b.length + 1);
    this.u8.set(b, this.n);
    this.n += b.length;
    this.u8[this.n++] = NL;
  }
  range(src, a, b) {
    this.grow(b - a + 1);
    if (b - a < 32) {
      const u8 = this.u8;
      let n = this.n;
      for (let i = a; i < b; i++) u8[n++] = src[i];
      this.n = n;
    } else {
      this.u8.set(src.subarray(a, b), this.n);
      this.n += b - a;
    }
    this.u8[this.n++] = NL;
  }
  text(s) {
    this.grow(s.length * 3 + 1);
    let ascii = true;
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) ascii = false;
    if (ascii) {
      const u8 = this.u8;
      for (let i = 0; i < s.length; i++) u8[this.n + i] = s.charCodeAt(i);
      this.n += s.length;
    } else this.n += encoder.encodeInto(s, this.u8.subarray(this.n)).written;
    this.u8[this.n++] = NL;
  }
  int(v) {
    this.text(String(v));
  }
  done() {
    return this.u8.subarray(0, this.n);
  }
}

function rd32(u8, p) {
  return (u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24)) >>> 0;
}

// The codec's head block (Response#_head in js/response.mjs): u8 flags, four
// length-prefixed strings (class name, version, code, message), u32 field
// count, then per field its name and u32 value count and values, all
// length-prefixed (u32 LE). Returns [[start, end] of the 4 strings, fields as
// [nameStart, nameEnd, [valueStart, valueEnd, ...]]], or null when the block
// is not in that shape (then the public API is used).
function scanBlock(u8) {
  if (!(u8 instanceof Uint8Array) || u8.length < 21) return null;
  let p = 1;
  const strs = [];
  for (let i = 0; i < 4; i++) {
    if (p + 4 > u8.length) return null;
    const n = rd32(u8, p);
    strs.push(p + 4, p + 4 + n);
    p += 4 + n;
  }
  if (p + 4 > u8.length) return null;
  const count = rd32(u8, p);
  p += 4;
  const fields = [];
  for (let i = 0; i < count; i++) {
    if (p + 4 > u8.length) return null;
    const nl = rd32(u8, p);
    const ns = p + 4;
    p = ns + nl;
    if (p + 4 > u8.length) return null;
    const m = rd32(u8, p);
    p += 4;
    const vals = [];
    for (let k = 0; k < m; k++) {
      if (p + 4 > u8.length) return null;
      const vl = rd32(u8, p);
      vals.push(p + 4, p + 4 + vl);
      p += 4 + vl;
    }
    if (p > u8.length) return null;
    fields.push(ns, ns + nl, vals);
  }
  return p === u8.length ? [strs, fields] : null;
}

const CE = [99, 111, 110, 116, 101, 110, 116, 45, 101, 110, 99, 111, 100, 105, 110, 103]; // content-encoding
const CR = [99, 111, 110, 116, 101, 110, 116, 45, 114, 97, 110, 103, 101]; // content-range

function isName(u8, a, b, name) {
  if (b - a !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (u8[a + i] !== name[i]) return false;
  return true;
}

// What Net::HTTPResponse#inflater will do with this head, for decode_content:
// 4: inflate (content-encoding deflate/gzip/x-gzip: deleted, and the body
// destination becomes binary), 8: only delete content-encoding (none,
// identity), 0: nothing.
function inflateFlags(encoding, hasRange, decode) {
  if (!decode || hasRange || encoding == null) return 0;
  const v = encoding.toLowerCase();
  if (v === 'deflate' || v === 'gzip' || v === 'x-gzip') return 4;
  if (v === 'none' || v === 'identity') return 8;
  return 0;
}

// className \n version \n code \n flags \n message \n fields...
// flags: bit 0 http_version is set, bit 1 message is set, bits 2-3: see
// inflateFlags. fields: name \n count \n value \n ... (none of them holds a
// "\n": the codec read them line by line).
// Returns { payload, inflate } (inflate: the fields will change by 'end').
function headPayload(res, decode, asRead) {
  const u8 = asRead || res._head;
  const scan = scanBlock(u8);
  const b = new Bytes(u8 && u8.length ? u8.length + 64 : 256);
  let flags = (res.httpVersion != null ? 1 : 0) | (res.message != null ? 2 : 0);
  if (scan) {
    const [s, fields] = scan;
    let enc = null;
    let range = false;
    for (let i = 0; i < fields.length; i += 3) {
      if (isName(u8, fields[i], fields[i + 1], CE)) {
        const v = fields[i + 2];
        const parts = [];
        for (let k = 0; k < v.length; k += 2) parts.push(utf8.decode(u8.subarray(v[k], v[k + 1])));
        enc = parts.join(', ');
      } else if (isName(u8, fields[i], fields[i + 1], CR)) range = true;
    }
    flags |= inflateFlags(enc, range, decode);
    b.range(u8, s[0], s[1]);
    b.range(u8, s[2], s[3]);
    b.range(u8, s[4], s[5]);
    b.int(flags);
    b.range(u8, s[6], s[7]);
    writeBlockFields(b, u8, fields);
  } else {
    SNAPSHOT = false; // not the block this file reads: split feeds from now on
    flags |= inflateFlags(res.get('content-encoding'), res.has('content-range'), decode);
    b.text(res.className);
    b.text(res.httpVersion == null ? '' : res.httpVersion);
    b.text(res.code);
    b.int(flags);
    const mb = res.messageBytes;
    b.bytes(mb == null ? EMPTY : mb);
    writeFields(b, res.rawHeaderEntries());
  }
  return { payload: b.done(), inflate: (flags & 12) !== 0 };
}

function fieldsPayload(res) {
  const b = new Bytes(256);
  const scan = scanBlock(res._head);
  if (scan) writeBlockFields(b, res._head, scan[1]);
  else writeFields(b, res.rawHeaderEntries());
  return b.done();
}

// The fields, laid out so that Ruby builds its hash with a few C calls:
// count \n extras \n names... \n first values... \n then (field index,
// value) for each value after a field's first (Set-Cookie twice, ...).
function writeBlockFields(b, u8, fields) {
  const n = fields.length / 3;
  let extras = 0;
  for (let i = 2; i < fields.length; i += 3) extras += (fields[i].length >> 1) - 1;
  b.int(n);
  b.int(extras);
  for (let i = 0; i < fields.length; i += 3) b.range(u8, fields[i], fields[i + 1]);
  for (let i = 2; i < fields.length; i += 3) b.range(u8, fields[i][0], fields[i][1]);
  if (extras)
    for (let i = 2, f = 0; i < fields.length; i += 3, f++) {
      const v = fields[i];
      for (let k = 2; k < v.length; k += 2) {
        b.int(f);
        b.range(u8, v[k], v[k + 1]);
      }
    }
}

function writeFields(b, fields) {
  let extras = 0;
  for (const [, values] of fields) extras += values.length - 1;
  b.int(fields.length);
  b.int(extras);
  for (const [name] of fields) b.bytes(name);
  for (const [, values] of fields) b.bytes(values[0]);
  if (extras)
    fields.forEach(([, values], f) => {
      for (let k = 1; k < values.length; k++) {
        b.int(f);
        b.bytes(values[k]);
      }
    });
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameFields(a, b) {
  if (!b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!sameBytes(a[i][0], b[i][0]) || a[i][1].length !== b[i][1].length) return false;
    for (let k = 0; k < a[i][1].length; k++) if (!sameBytes(a[i][1][k], b[i][1][k])) return false;
  }
  return true;
}

// ---- Node transport: node:net / node:tls ----

class NodeConn extends Conn {
  constructor(bridge, socket) {
    super(bridge);
    this.socket = socket;
    socket.on('data', (c) => this.onData(c));
    socket.on('end', () => this.onEnd());
    socket.on('close', () => this.onEnd());
    socket.on('error', (e) => {
      const code = errnoOf(e);
      if (code) this.onError(`Errno::${code}`, '');
      else this.onError('IOError', e && e.message ? e.message : String(e));
    });
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

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

function nodeOpen(bridge, host, port, tls, timeoutMs) {
  return new Promise((resolve) => {
    let done = false;
    let socket = null;
    let timer = null;
    const finish = (value) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      resolve(value);
    };
    const fail = (text) => {
      if (socket) socket.destroy();
      finish(`!${text}`);
    };
    const isIp = IPV4.test(host) || host.includes(':');
    const connectHost = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    const opts = { host: connectHost, port, noDelay: true };
    let event = 'connect';
    try {
      if (tls) {
        event = 'secureConnect';
        const o = Object.assign({}, opts, {
          rejectUnauthorized: tls.verify,
          ALPNProtocols: ['http/1.1'],
        });
        if (!isIp) o.servername = connectHost;
        const ca = [];
        if (tls.ca) ca.push(...tls.ca);
        for (const f of tls.caFiles || []) {
          try {
            ca.push(nodeFs.readFileSync(f, 'utf8'));
          } catch (e) {
            finish(`!Errno::ENOENT\n${f}`);
            return;
          }
        }
        if (ca.length) o.ca = tls.defaultPaths ? [...nodeTls.rootCertificates, ...ca] : ca;
        if (tls.cert) o.cert = tls.cert;
        if (tls.key) o.key = tls.key;
        if (tls.verify && tls.verifyHostname === false) o.checkServerIdentity = () => undefined;
        if (tls.minVersion) o.minVersion = tls.minVersion;
        if (tls.maxVersion) o.maxVersion = tls.maxVersion;
        if (tls.ciphers) o.ciphers = tls.ciphers;
        socket = nodeTls.connect(o);
      } else {
        socket = nodeNet.connect(opts);
      }
    } catch (e) {
      fail(`IOError\n${e && e.message}`);
      return;
    }
    // MRI times the TCP connect and the TLS handshake separately; the
    // handshake's timeout is a bare Net::OpenTimeout
    let tcpUp = false;
    socket.once('connect', () => {
      tcpUp = true;
    });
    if (timeoutMs != null && timeoutMs >= 0) timer = setTimeout(() => fail(tls && tcpUp ? 'ssltimeout\n' : 'timeout\n'), timeoutMs);
    const onError = (e) => {
      const code = errnoOf(e);
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA' || code === 'EAI_NONAME') {
        fail(`resolve\n${code}`);
      } else if (tls && socket && socket.connecting === false && !socket.authorized && e && e.code && !/^E[A-Z]+$/.test(e.code)) {
        fail(`ssl\n${sslMessage(e, host, port, socket)}`);
      } else if (code) {
        fail(`errno\n${code}`);
      } else if (tls) {
        fail(`ssl\n${sslMessage(e, host, port, socket)}`);
      } else {
        fail(`IOError\n${e && e.message}`);
      }
    };
    socket.once('error', onError);
    socket.once(event, () => {
      if (done) {
        socket.destroy();
        return;
      }
      socket.removeListener('error', onError);
      const conn = new NodeConn(bridge, socket);
      const id = bridge.add(conn);
      const family = socket.localAddress && socket.localAddress.includes(':') ? 'AF_INET6' : 'AF_INET';
      finish(`${id}\n${family}\n${socket.localAddress || ''}\n${socket.localPort || 0}`);
    });
  });
}

// OpenSSL's wording for what Node reports while verifying a certificate.
const VERIFY_TEXT = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in certificate chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unable to get local issuer certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'unable to get issuer certificate',
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  CERT_REVOKED: 'certificate revoked',
  CERT_UNTRUSTED: 'certificate not trusted',
  CERT_REJECTED: 'certificate rejected',
};

function sslMessage(e, host, port, socket) {
  const code = e && e.code;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `hostname "${host}" does not match the server certificate`;
  }
  const peer = `peeraddr=${host}:${port}`;
  if (code && VERIFY_TEXT[code]) {
    return `SSL_connect returned=1 errno=0 ${peer} state=error: certificate verify failed (${VERIFY_TEXT[code]})`;
  }
  const reason = (e && e.reason) || (e && e.message) || String(e);
  return `SSL_connect returned=1 errno=0 ${peer} state=error: ${reason}`;
}

// ---- fetch transport (browsers) ----

// Request headers a page may not set (the Fetch standard's forbidden request
// headers); fetch() would drop them anyway. Host comes from the URL.
const FORBIDDEN = new Set([
  'accept-charset', 'accept-encoding', 'access-control-request-headers', 'access-control-request-method',
  'connection', 'content-length', 'cookie', 'cookie2', 'date', 'dnt', 'expect', 'host', 'keep-alive',
  'origin', 'referer', 'set-cookie', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'via',
]);

function forbidden(name) {
  return FORBIDDEN.has(name) || name.startsWith('proxy-') || name.startsWith('sec-');
}

// A "connection" that turns each request the codec writes into one fetch()
// and each response into HTTP/1.1 bytes for the same parser. The browser
// decodes gzip itself: a response it decoded loses Content-Encoding and
// Content-Length and is framed by the end of the stream.
class FetchConn extends Conn {
  constructor(bridge, scheme, host, port) {
    super(bridge);
    this.base = `${scheme}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
    this.pending = [];
    this.busy = false;
    this.aborter = null;
  }

  write(bytes) {
    if (this.closed) return false;
    this.pending.push(bytes);
    this.tryRequest();
    return true;
  }

  tryRequest() {
    if (this.busy) return;
    const all = concatAll(this.pending);
    const req = splitRequest(all);
    if (!req) return; // head or body not complete yet
    this.pending = req.rest.length ? [req.rest] : [];
    this.busy = true;
    this.run(req).finally(() => {
      this.busy = false;
    });
  }

  async run(req) {
    const headers = new Headers();
    const dropped = [];
    for (const [name, value] of req.headers) {
      const lower = name.toLowerCase();
      if (forbidden(lower)) {
        dropped.push(name);
        continue;
      }
      try {
        headers.append(name, value);
      } catch {
        dropped.push(name);
      }
    }
    this.bridge.droppedHeaders = dropped;
    const init = { method: req.method, headers, redirect: 'manual' };
    if (req.body && req.body.length && req.method !== 'GET' && req.method !== 'HEAD') init.body = req.body;
    if (typeof AbortController === 'function') {
      this.aborter = new AbortController();
      init.signal = this.aborter.signal;
    }
    let res;
    try {
      res = await this.bridge.fetch(this.base + req.target, init);
    } catch (e) {
      if (this.closed) return;
      this.onError('NetHttpWasm::FetchError', `fetch failed: ${e && e.message ? e.message : String(e)} (a network error, or a response CORS does not let the page read)`);
      return;
    }
    if (this.closed) return;
    if (res.type === 'opaqueredirect') {
      this.onError('NetHttpWasm::FetchError', 'fetch failed: the server answered with a redirect, which a page cannot read (Net::HTTP does not follow redirects)');
      return;
    }
    const decoded = res.headers.has('content-encoding') && !/^\s*(identity|none)?\s*$/i.test(res.headers.get('content-encoding'));
    let head = `HTTP/1.1 ${res.status} ${res.statusText || ''}\r\n`;
    res.headers.forEach((value, name) => {
      if (decoded && (name === 'content-encoding' || name === 'content-length')) return;
      if (name === 'transfer-encoding') return;
      // fetch joins repeated fields with ", " (set-cookie is never visible)
      head += `${name}: ${value}\r\n`;
    });
    head += '\r\n';
    this.onData(encoder.encode(head));
    if (res.body && req.method !== 'HEAD') {
      const reader = res.body.getReader();
      for (;;) {
        let r;
        try {
          r = await reader.read();
        } catch (e) {
          if (!this.closed) this.onError('Errno::ECONNRESET', '');
          return;
        }
        if (this.closed) return;
        if (r.done) break;
        if (r.value && r.value.length) this.onData(r.value);
      }
    }
    // each fetch is a message on its own "connection": the stream ends here
    this.onEnd();
  }

  destroy() {
    if (this.aborter) this.aborter.abort();
  }
}

// Splits the bytes the codec wrote back into method, target, headers, body.
function splitRequest(bytes) {
  let end = -1;
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      end = i;
      break;
    }
  }
  if (end < 0) return null;
  const lines = utf8.decode(bytes.subarray(0, end)).split('\r\n');
  const [method, target] = lines[0].split(' ');
  const headers = [];
  let length = 0;
  for (let i = 1; i < lines.length; i++) {
    const k = lines[i].indexOf(':');
    const name = lines[i].slice(0, k);
    const value = lines[i].slice(k + 1).trim();
    headers.push([name, value]);
    if (name.toLowerCase() === 'content-length') length = Number(value) || 0;
  }
  if (bytes.length < end + 4 + length) return null;
  return {
    method,
    target,
    headers,
    body: bytes.slice(end + 4, end + 4 + length),
    rest: bytes.subarray(end + 4 + length),
  };
}

// ---- the bridge Ruby calls ----

class Bridge {
  constructor(vm, memory, options) {
    this.vm = vm;
    this.memory = memory;
    this.options = options;
    this.profile = options.profile;
    // not MRI: responses are read in the codec's strict mode (RFC 9112)
    this.strictResponses = !!options.strictResponses;
    this.conns = new Map();
    this.nextId = 1;
    this.lastError = '';
    this.droppedHeaders = [];
    this.ResponseParser = ResponseParser;
    this.transport = options.transport;
    this.fetch = options.fetch || (typeof fetch === 'function' ? fetch.bind(globalThis) : null);
    this.requestOptions = { profile: this.profile };
    if (options.codecInstance) this.requestOptions.codec = options.codecInstance;
    this._u8 = null;
  }

  mem() {
    const buf = this.memory.buffer;
    if (!this._u8 || this._u8.buffer !== buf) this._u8 = new Uint8Array(buf);
    return this._u8;
  }

  add(conn) {
    const id = this.nextId++;
    conn.id = id;
    this.conns.set(id, conn);
    return id;
  }

  // Ruby: NetHttpWasm::Socket.open. Resolves to "id\nfamily\naddr\nport", or
  // "!kind\ndetail" (kind: timeout, errno, resolve, ssl, or a class name).
  open(host, port, tlsJson, timeoutMs) {
    host = String(host);
    port = Number(port);
    const tls = tlsJson == null ? null : JSON.parse(String(tlsJson));
    const ms = timeoutMs == null || timeoutMs < 0 ? null : Number(timeoutMs);
    if (this.transport === 'fetch') {
      if (!this.fetch) return Promise.resolve('!IOError\nfetch() is not available');
      const conn = new FetchConn(this, tls ? 'https' : 'http', host, port);
      const id = this.add(conn);
      return Promise.resolve(`${id}\nAF_INET\n0.0.0.0\n0`);
    }
    if (typeof this.transport === 'function') {
      return Promise.resolve(this.transport({ host, port, tls, timeoutMs: ms })).then(
        (stream) => {
          const conn = new StreamConn(this, stream);
          return `${this.add(conn)}\nAF_INET\n0.0.0.0\n0`;
        },
        (e) => `!${errnoOf(e) ? `errno\n${errnoOf(e)}` : `IOError\n${e && e.message}`}`,
      );
    }
    if (tls && this.options.tls) {
      const t = this.options.tls;
      if (t.ca) tls.ca = [...(tls.ca || []), ...[].concat(t.ca).map(String)];
      if (t.rejectUnauthorized === false) tls.verify = false;
    }
    return nodeOpen(this, host, port, tls, ms);
  }

  // Ruby: codec write of a request. hdr: "METHOD\npath\nversion\nflags\n"
  // then "name\ncount\nvalue\n..." per field, or with flags bit 3, when every
  // field has one value, "name\nvalue" pairs. flags: bit 0 body present,
  // bit 1 response has a body, bit 2 decode_content. Returns 0 (or 1 when
  // records are ready already), or -1 with lastError "Class\nmessage".
  send(id, hdrAddr, hdrLen, bodyAddr, bodyLen) {
    const conn = this.conns.get(id);
    if (!conn || conn.closed) {
      this.lastError = 'IOError\nclosed stream';
      return RC_ERROR;
    }
    const mem = this.mem();
    const parts = utf8.decode(mem.subarray(hdrAddr, hdrAddr + hdrLen)).split('\n');
    const method = parts[0];
    const flags = parts[3] | 0;
    let bytes;
    try {
      const req = new Request(method, { path: parts[1] }, null, this.requestOptions);
      req.delete('accept-encoding');
      req.delete('accept');
      req.delete('user-agent');
      const n = parts.length;
      if (flags & 8) {
        // every field has one value: name \n value pairs
        for (let i = 4; i + 1 < n; i += 2) req.set(parts[i], parts[i + 1]);
      } else {
        for (let i = 4; i + 1 < n; ) {
          const name = parts[i];
          const count = parts[i + 1] | 0;
          req.set(name, count === 1 ? parts[i + 2] : parts.slice(i + 2, i + 2 + count));
          i += 2 + count;
        }
      }
      if (flags & 1) req.body = mem.subarray(bodyAddr, bodyAddr + bodyLen);
      bytes = req.toBytes(parts[2]);
    } catch (e) {
      this.lastError = `${e && e.rubyClass ? e.rubyClass : 'ArgumentError'}\n${e && e.message}`;
      return RC_ERROR;
    }
    conn.beginMessage({
      requestMethod: method,
      responseHasBody: (flags & 2) !== 0,
      decodeContent: (flags & 4) !== 0,
      skipInterim: true,
      strict: this.strictResponses,
      profile: this.profile,
      codec: this.requestOptions.codec,
    });
    conn.write(bytes);
    // 1: the response's first records are here already (a transport that
    // answers synchronously): Ruby can take them without waiting
    return conn.records.length ? 1 : 0;
  }

  // Ruby: the next records of the current message into its buffer.
  recvNow(id, addr, cap) {
    const conn = this.conns.get(id);
    if (!conn) {
      this.lastError = 'IOError\nclosed stream';
      return RC_ERROR;
    }
    if (!conn.records.length) return RC_WOULD_BLOCK;
    return conn.fillRecords(addr, cap);
  }

  recv(id, addr, cap, timeoutMs) {
    const conn = this.conns.get(id);
    if (!conn) {
      this.lastError = 'IOError\nclosed stream';
      return Promise.resolve(RC_ERROR);
    }
    if (conn.records.length) return Promise.resolve(conn.fillRecords(addr, cap));
    const ms = timeoutMs == null || timeoutMs < 0 ? null : timeoutMs;
    return conn.waitRecords(ms).then((ok) => {
      if (!ok) return RC_TIMEOUT;
      if (conn.closed && !conn.records.length) {
        this.lastError = 'IOError\nclosed stream';
        return RC_ERROR;
      }
      return conn.fillRecords(addr, cap);
    });
  }

  // Ruby: raw write (net/http's own request writing).
  write(id, addr, len) {
    const conn = this.conns.get(id);
    if (!conn || conn.closed) {
      this.lastError = 'IOError\nclosed stream';
      return RC_ERROR;
    }
    if (conn.error) {
      this.lastError = `${conn.error[0]}\n${conn.error[1]}`;
      return RC_ERROR;
    }
    conn.beginRaw();
    conn.write(this.mem().slice(addr, addr + len));
    return len;
  }

  // Ruby: read_nonblock.
  readNow(id, addr, cap) {
    const conn = this.conns.get(id);
    if (!conn) {
      this.lastError = 'IOError\nclosed stream';
      return RC_ERROR;
    }
    conn.beginRaw();
    const n = conn.readRaw(addr, cap);
    if (n === RC_ERROR) this.lastError = `${conn.error[0]}\n${conn.error[1]}`;
    return n;
  }

  // Ruby: IO#wait_readable(timeout) → 1 ready, 0 timed out.
  wait(id, timeoutMs) {
    const conn = this.conns.get(id);
    if (!conn) return Promise.resolve(1);
    return conn.waitReadable(timeoutMs == null || timeoutMs < 0 ? null : timeoutMs);
  }

  state(id) {
    const conn = this.conns.get(id);
    return conn ? conn.state() : 2;
  }

  close(id) {
    const conn = this.conns.get(id);
    if (conn) {
      this.conns.delete(id);
      conn.close();
    }
    return 0;
  }

  error() {
    return this.lastError;
  }

  readHostFile(path) {
    if (!nodeFs) return null;
    try {
      return nodeFs.readFileSync(String(path), 'utf8');
    } catch {
      return null;
    }
  }
}

// A connection over a user-supplied duplex: { write(u8), close(), onData, onEnd, onError }.
class StreamConn extends Conn {
  constructor(bridge, stream) {
    super(bridge);
    this.stream = stream;
    stream.onData = (c) => this.onData(c);
    stream.onEnd = () => this.onEnd();
    stream.onError = (e) => this.onError(errnoOf(e) ? `Errno::${errnoOf(e)}` : 'IOError', errnoOf(e) ? '' : String(e && e.message));
  }
  write(bytes) {
    this.stream.write(bytes);
    return true;
  }
  destroy() {
    if (this.stream.close) this.stream.close();
  }
}

function rubyProfile(vm) {
  const v = vm.eval('RUBY_VERSION').toString();
  const [major, minor] = v.split('.').map(Number);
  return major >= 4 ? '4.0' : major === 3 && minor >= 0 ? '3.4' : '3.4';
}

function findMemory(vm) {
  const inst = vm && vm.instance;
  const mem = inst && inst.exports && inst.exports.memory;
  if (mem instanceof WebAssembly.Memory) return mem;
  return null;
}

/**
 * Makes `require 'net/http'` work in a ruby.wasm VM and routes Net::HTTP
 * through host sockets (Node) or fetch() (browsers), with this package's
 * codec writing requests and reading responses.
 *
 * Options:
 *   transport  'node' (default in Node), 'fetch' (default elsewhere), or a
 *              function ({ host, port, tls, timeoutMs }) → Promise<stream>
 *   codec      true (default): the codec does the byte work; false: net/http's
 *              own Ruby code does, over the same sockets
 *   profile    '4.0' or '3.4' (default: from the VM's RUBY_VERSION)
 *   tls        { ca: string | string[], rejectUnauthorized: boolean }: extra
 *              trusted certificates (PEM) / verification off, for every HTTPS
 *              connection (Net::HTTP's ca_file, cert_store, verify_mode and
 *              verify_hostname are honoured too)
 *   strictResponses  true: read responses in the codec's strict mode
 *              (RFC 9112 rejections raise Net::HTTPBadResponse; not MRI);
 *              also settable later as handle.bridge.strictResponses
 *   source     the Ruby side's source text (default: ruby/net_http_wasm.rb)
 *   fetch      the fetch function to use (transport 'fetch')
 * Returns a handle: { bridge, uninstall() } (uninstall closes open sockets).
 */
export function installNetHttp(vm, options = {}) {
  if (!vm || typeof vm.eval !== 'function') throw new TypeError('installNetHttp: vm must be a RubyVM');
  const memory = findMemory(vm);
  if (!memory)
    throw new Error('installNetHttp: the VM exposes no linear memory (vm.instance.exports.memory); use RubyVM.instantiateModule or DefaultRubyVM');
  const source = options.source != null ? String(options.source) : rubySource;
  if (source == null)
    throw new Error(`installNetHttp: could not load the Ruby side from ${RUBY_FILE}; pass { source } (the text of ruby/net_http_wasm.rb)`);
  const profile = options.profile || rubyProfile(vm);
  if (profile !== '4.0' && profile !== '3.4') throw new TypeError(`profile must be '4.0' or '3.4', not ${profile}`);
  let transport = options.transport;
  if (transport == null) transport = isNode ? 'node' : 'fetch';
  if (transport === 'node' && !isNode) throw new Error("installNetHttp: transport 'node' needs Node.js");
  const bridge = new Bridge(vm, memory, { ...options, profile, transport });
  vm.eval(source);
  const config = JSON.stringify({
    codec: options.codec !== false,
    profile,
    transport: typeof transport === 'function' ? 'custom' : transport,
  });
  vm.eval('NetHttpWasm').call('__install', vm.wrap(bridge), vm.wrap(config));
  return {
    bridge,
    uninstall() {
      for (const id of [...bridge.conns.keys()]) bridge.close(id);
    },
  };
}

/** The Ruby side's source text (ruby/net_http_wasm.rb), or null where it could not be read. */
export function rubySourceText() {
  return rubySource;
}
