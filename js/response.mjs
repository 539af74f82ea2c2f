// net-http-wasm: reading HTTP responses as Ruby's Net::HTTP does.
//
//   parseResponse(bytes, options)  → Response     one crossing into WebAssembly
//   new ResponseParser(options)                   incremental: feed(chunk) → events
//
// Both reproduce, byte for byte and error for error, what MRI gives for
//   res = Net::HTTPResponse.read_new(sock)        # (looped over 1xx with skipInterim)
//   res.decode_content = decodeContent
//   res.reading_body(sock, requestMethod != 'HEAD') {}
// over sock = Net::BufferedIO.new(StringIO.new(bytes)): Ruby 4.0 (net-http
// 0.9.1) by default, profile '3.4' for net-http 0.6.0 (they agree on all of it).
//
// Strings: MRI's header names and values are binary strings. Here they are
// JS strings decoded as UTF-8 (an invalid sequence becomes U+FFFD); the exact
// bytes are available from rawHeaderEntries(), body and rest are bytes.
//
import { NetHttpError, getDefaultCodec, decodeUtf8 } from './core.mjs';
import {
  CLASS_NAMES, PROFILES, ERROR as RS_ERROR, NOMEM as RS_NOMEM,
  EV_HEAD as RS_EV_HEAD, EV_BODY as RS_EV_BODY, EV_END as RS_EV_END, EV_INTERIM as RS_EV_INTERIM, EV_FINAL as RS_EV_FINAL,
  HEAD_VERSION as RS_F_VERSION, HEAD_MESSAGE as RS_F_MESSAGE, HEAD_BODY as RS_F_BODY, HEAD_ASCII as RS_F_ASCII,
  CFG_SKIP_INTERIM, CFG_STRICT, CONFIG_LEN as RS_CONFIG_LEN, MAX_HEADER_BYTES, MAX_HEADER_FIELDS,
  ONESHOT_MAX_INFLATED as RS_ONESHOT_MAX_INFLATED, DECODE_SLICE as RS_DECODE_SLICE,
} from './schema.mjs';
import { headerReaders } from './header-helpers.mjs';

const RS_EMPTY = new Uint8Array(0);

const rsDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
const rsEncoder = new TextEncoder();
// windows-1252 (what 'latin1' means to TextDecoder): one UTF-16 unit per byte,
// so byte offsets are string offsets; used on ASCII text only.
const rsSingle = new TextDecoder('latin1');

function rsRd32(u8, p) {
  return (u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24)) >>> 0;
}

// ---- the codec: default instance and calls ----

function rsCodecOf(options) {
  return (options && options.codec) || getDefaultCodec();
}

function rsToBytes(b, what) {
  if (b instanceof Uint8Array) return b;
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (typeof b === 'string') return rsEncoder.encode(b);
  throw new TypeError(`${what} must be a Uint8Array, an ArrayBuffer or a string`);
}

// ---- options ----

// parseResponse holds the whole decoded body in memory, so it bounds it by
// default (ONESHOT_MAX_INFLATED); ResponseParser hands the body over feed by
// feed and has no bound, but feeds compressed input in DECODE_SLICE slices,
// so that the module's memory stays bounded (deflate expands at most about
// 1032:1) whatever the size of a feed.

const RS_DEFAULTS = {
  maxHeaderBytes: MAX_HEADER_BYTES,
  maxHeaderFields: MAX_HEADER_FIELDS,
  maxBodyBytes: Infinity,
  maxInflatedBytes: Infinity,
};

function rsLimit(options, name) {
  const v = options && options[name] != null ? options[name] : RS_DEFAULTS[name];
  if (v === Infinity) return v;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < (name === 'maxInflatedBytes' ? 1 : 0))
    throw new TypeError(`${name} must be a non-negative integer or Infinity`);
  return v;
}

function rsOffset(v) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new TypeError('streamOffset must be a non-negative integer');
  return v;
}

let rsDefaultConfig = null;

function rsConfig(options) {
  if (options == null || (options.codec && Object.keys(options).length === 1)) {
    if (!rsDefaultConfig) rsDefaultConfig = Object.freeze(rsMakeConfig({}));
    return rsDefaultConfig;
  }
  return rsMakeConfig(options);
}

function rsMakeConfig(o) {
  const profile = o.profile == null ? '4.0' : o.profile;
  const profileId = PROFILES[profile];
  if (profileId === undefined) throw new TypeError(`profile must be '4.0' or '3.4', not ${String(profile)}`);
  const method = o.requestMethod == null ? 'GET' : o.requestMethod;
  if (typeof method !== 'string') throw new TypeError('requestMethod must be a string');
  // reading_body(sock, method != 'HEAD'): as Net::HTTP#send_request decides
  // it, a literal comparison ('head' gets a body read)
  const bodyAllowed = o.responseHasBody != null ? !!o.responseHasBody : method !== 'HEAD';
  return {
    profile: profileId,
    bodyAllowed,
    decode: !!o.decodeContent,
    skipInterim: !!o.skipInterim,
    expectContinue: !!o.expectContinue,
    strict: !!o.strict,
    maxHeaderBytes: rsLimit(o, 'maxHeaderBytes'),
    maxHeaderFields: rsLimit(o, 'maxHeaderFields'),
    maxBodyBytes: rsLimit(o, 'maxBodyBytes'),
    maxInflatedBytes: rsLimit(o, 'maxInflatedBytes'),
    streamOffset: o.streamOffset == null ? Infinity : rsOffset(o.streamOffset), // Infinity: 0 / keep
  };
}

// The configuration for a message's first response: with expectContinue,
// read_new reads exactly one, so no 1xx is skipped.
function rsFirstConfig(cfg) {
  return cfg.expectContinue && cfg.skipInterim ? { ...cfg, skipInterim: false } : cfg;
}

let rsDefaultConfigBytes = null;

function rsWriteConfig(c, cfg) {
  c.ensure(RS_CONFIG_LEN);
  const u8 = c.u8;
  let p = c.inPtr + c.pos;
  if (cfg === rsDefaultConfig) {
    if (rsDefaultConfigBytes === null) {
      // written once the long way, then copied
      rsDefaultConfigBytes = new Uint8Array(RS_CONFIG_LEN);
      rsWriteConfigBytes(rsDefaultConfigBytes, 0, cfg);
    }
    u8.set(rsDefaultConfigBytes, p);
  } else {
    rsWriteConfigBytes(u8, p, cfg);
  }
  c.pos += RS_CONFIG_LEN;
}

function rsWriteConfigBytes(u8, p, cfg) {
  u8[p++] = cfg.profile;
  u8[p++] = cfg.bodyAllowed ? 1 : 0;
  u8[p++] = cfg.decode ? 1 : 0;
  u8[p++] = (cfg.skipInterim ? CFG_SKIP_INTERIM : 0) | (cfg.strict ? CFG_STRICT : 0);
  for (const v of [cfg.maxHeaderBytes, cfg.maxHeaderFields, cfg.maxBodyBytes, cfg.maxInflatedBytes, cfg.streamOffset]) {
    const lo = v === Infinity ? 0xffffffff : v % 4294967296;
    const hi = v === Infinity ? 0xffffffff : Math.floor(v / 4294967296);
    u8[p] = lo;
    u8[p + 1] = lo >>> 8;
    u8[p + 2] = lo >>> 16;
    u8[p + 3] = lo >>> 24;
    u8[p + 4] = hi;
    u8[p + 5] = hi >>> 8;
    u8[p + 6] = hi >>> 16;
    u8[p + 7] = hi >>> 24;
    p += 8;
  }
}

// ---- Response ----

// Net::HTTPHeader#capitalize on a downcased binary name: split('-') drops
// trailing empty parts, String#capitalize upcases an ASCII first letter.
function rsCapitalizeName(name) {
  const parts = name.split('-');
  while (parts.length && parts[parts.length - 1] === '') parts.pop();
  for (let i = 0; i < parts.length; i++) {
    const s = parts[i];
    const c = s.charCodeAt(0);
    if (c >= 97 && c <= 122) parts[i] = String.fromCharCode(c - 32) + s.slice(1);
  }
  return parts.join('-');
}

/**
 * A response as MRI's Net::HTTPResponse holds it. Every field comes from one
 * head block copied out of WebAssembly memory; strings are decoded on first use.
 *
 *   httpVersion  "1.1", or null where MRI's http_version is nil (no "/x.y")
 *   code         "200" (a string, as MRI); status: the same as a number
 *   message      the reason phrase, or null where MRI's message is nil
 *   className    "Net::HTTPOK", ... (res.class.name)
 *   headers      to_hash: { downcased name: [values] } in a null-prototype
 *                object. Its key order is MRI's except that JS lists names
 *                that are array indices ("123") first; headerEntries() keeps
 *                MRI's order exactly.
 *   body         Uint8Array, or null where MRI's body is nil (HEAD, 1xx, 204,
 *                205, 304, 305). Responses from ResponseParser stream their
 *                body as events: body is undefined there.
 *   hasBody      whether MRI read a body (body is a String, not nil)
 *   rest         the bytes after this message (parseResponse only)
 */
export class Response {
  constructor(head, body, rest) {
    this._setHead(head);
    this.body = body;
    this.rest = rest;
    this.interim = undefined;
  }

  _setHead(head) {
    // the head as read_new returned it, kept when decoding the body changes
    // the fields (the ruby.wasm bridge hands Ruby both)
    if (this._head !== undefined && this._asRead === undefined) this._asRead = this._head;
    this._head = head;
    const u8 = head;
    const flags = u8[0];
    // An all-ASCII block is decoded once by a one-byte-per-character decoder
    // and its strings are slices of that text.
    this._text = flags & RS_F_ASCII ? rsSingle.decode(head) : null;
    let p = 1;
    const str = () => {
      const n = rsRd32(u8, p);
      const s = this._str(p + 4, p + 4 + n);
      p += 4 + n;
      return s;
    };
    this.className = str();
    const version = str();
    this.code = str();
    this._msgAt = p;
    const message = str();
    this.httpVersion = flags & RS_F_VERSION ? version : null;
    this.message = flags & RS_F_MESSAGE ? message : null;
    this.hasBody = (flags & RS_F_BODY) !== 0;
    this.status = Number(this.code);
    this._fieldsAt = p;
    this._fields = null; // see _table()
    this._vals = null;
    this._names = null;
    this._headers = null;
  }

  _str(a, b) {
    return this._text !== null ? this._text.slice(a, b) : decodeUtf8(this._head, a, b);
  }

  /** The reason phrase's exact bytes (MRI's message is a binary string), or null. */
  get messageBytes() {
    if (this.message === null) return null;
    const n = rsRd32(this._head, this._msgAt);
    return this._head.slice(this._msgAt + 4, this._msgAt + 4 + n);
  }

  // The field table, read once from the head block: per field i,
  // t[4i] name start, t[4i+1] name end, t[4i+2] first value's index in v,
  // t[4i+3] number of values; v holds [start, end] pairs of value bytes.
  _table() {
    if (this._fields) return this._fields;
    const u8 = this._head;
    let p = this._fieldsAt;
    const n = rsRd32(u8, p);
    p += 4;
    const t = new Array(4 * n);
    const v = [];
    for (let i = 0; i < n; i++) {
      const nl = rsRd32(u8, p);
      const ns = p + 4;
      p = ns + nl;
      const m = rsRd32(u8, p);
      p += 4;
      t[4 * i] = ns;
      t[4 * i + 1] = ns + nl;
      t[4 * i + 2] = v.length;
      t[4 * i + 3] = m;
      for (let k = 0; k < m; k++) {
        const vl = rsRd32(u8, p);
        v.push(p + 4, p + 4 + vl);
        p += 4 + vl;
      }
    }
    this._fields = t;
    this._vals = v;
    return t;
  }

  _nameList() {
    if (this._names) return this._names;
    const t = this._table();
    const names = new Array(t.length >> 2);
    for (let i = 0; i < names.length; i++) names[i] = this._str(t[4 * i], t[4 * i + 1]);
    this._names = names;
    return names;
  }

  _values(i) {
    const t = this._table();
    const v = this._vals;
    const out = new Array(t[4 * i + 3]);
    for (let k = 0, j = t[4 * i + 2]; k < out.length; k++, j += 2) out[k] = this._str(v[j], v[j + 1]);
    return out;
  }

  _find(name) {
    if (typeof name !== 'string') throw new TypeError('header name must be a string');
    return this._nameList().indexOf(name.toLowerCase());
  }

  /** `to_hash`: { name: [values] } (null prototype; see the class comment on key order). */
  get headers() {
    if (!this._headers) {
      // filled as an ordinary object and given a null prototype after
      // (V8 keeps it in fast mode; Object.create(null) starts as a
      // dictionary); a "__proto__" field is defined, never assigned
      const h = {};
      const names = this._nameList();
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        if (name === '__proto__') Object.defineProperty(h, name, { value: this._values(i), writable: true, enumerable: true, configurable: true });
        else h[name] = this._values(i);
      }
      this._headers = Object.setPrototypeOf(h, null);
    }
    return this._headers;
  }

  /** `to_hash.to_a`: [[name, [values]], ...] in MRI's order. */
  headerEntries() {
    return this._nameList().map((n, i) => [n, this._values(i)]);
  }

  /** The exact bytes: [[name, [value, ...]], ...] as Uint8Arrays, in MRI's order. */
  rawHeaderEntries() {
    const u8 = this._head;
    const t = this._table();
    const v = this._vals;
    const out = new Array(t.length >> 2);
    for (let i = 0; i < out.length; i++) {
      const vals = new Array(t[4 * i + 3]);
      for (let k = 0, j = t[4 * i + 2]; k < vals.length; k++, j += 2) vals[k] = u8.slice(v[j], v[j + 1]);
      out[i] = [u8.slice(t[4 * i], t[4 * i + 1]), vals];
    }
    return out;
  }

  /** `res[name]`: the values joined with ", ", or null. */
  get(name) {
    const i = this._find(name);
    return i < 0 ? null : this._values(i).join(', ');
  }

  /** `res.get_fields(name)`: a fresh array of the values, or null. */
  getFields(name) {
    const i = this._find(name);
    return i < 0 ? null : this._values(i);
  }

  // The header helpers' seam (js/header-helpers.mjs): a typed reader run
  // by the codec over this response's fields, as binary strings.
  _query(kind, arg = '') {
    const c = this._codec || getDefaultCodec();
    const t = this._table();
    const v = this._vals;
    const h = this._head;
    c.begin(h.length + 64);
    c.u8w(this._profile || 0);
    c.u8w(kind);
    c.strw(arg);
    c.u32w(t.length >> 2);
    for (let i = 0; i < t.length; i += 4) {
      c.bytesw(h.subarray(t[i], t[i + 1]));
      c.u32w(t[i + 3]);
      for (let k = 0, j = t[i + 2]; k < t[i + 3]; k++, j += 2) c.bytesw(h.subarray(v[j], v[j + 1]));
    }
    c.call('nh_wasm_header_query');
    return c.outQuery();
  }

  /** `res.key?(name)` */
  has(name) {
    return this._find(name) >= 0;
  }

  /** `each_capitalized`: [[Capitalized-Name, "v1, v2"], ...] */
  eachCapitalized() {
    return this._nameList().map((n, i) => [rsCapitalizeName(n), this._values(i).join(', ')]);
  }

  /** The body decoded as UTF-8 (U+FFFD for invalid bytes), or null. */
  bodyText() {
    return this.body == null ? null : rsDecoder.decode(this.body);
  }

  toJSON() {
    return {
      className: this.className,
      httpVersion: this.httpVersion,
      code: this.code,
      message: this.message,
      headers: this.headerEntries(),
      body: this.body == null ? this.body : this.bodyText(),
    };
  }
}

for (const [name, fn] of Object.entries(headerReaders({ NetHttpError })))
  if (!(name in Response.prototype)) Response.prototype[name] = fn;

// ---- events ----

// Reads the events of the last call. `sink(type, a, b)`: head-type events
// get the head block (a copy), END the rest offset; body pieces are collected
// as [address, length] pairs in `pieces`.
function rsReadEvents(c, onHead, pieces) {
  const u8 = c.u8;
  let p = c.outPtr();
  const inBase = rsRd32(u8, p);
  const dataBase = rsRd32(u8, p + 4);
  p += 8;
  let end = -1;
  for (;;) {
    const t = u8[p++];
    if (t === 0) break;
    if (t === RS_EV_BODY) {
      const src = u8[p];
      const off = rsRd32(u8, p + 1);
      const len = rsRd32(u8, p + 5);
      p += 9;
      if (pieces.length && pieces.src !== src) pieces.mixed = true;
      pieces.src = src;
      pieces.push((src ? dataBase : inBase) + off, len);
    } else if (t === RS_EV_END) {
      end = inBase + rsRd32(u8, p);
      p += 4;
    } else {
      const n = rsRd32(u8, p);
      onHead(t, u8.slice(p + 4, p + 4 + n), pieces.length);
      p += 4 + n;
    }
  }
  return end;
}

/** The arrays of `list` as one (the array itself when there is one). */
export function rsConcatAll(list) {
  if (list.length === 1) return list[0];
  let n = 0;
  for (const x of list) n += x.length;
  const out = new Uint8Array(n);
  let p = 0;
  for (const x of list) {
    out.set(x, p);
    p += x.length;
  }
  return out;
}

function rsConcat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// Body pieces [address, length, ...] from `from` to `to` as one new array.
// Pieces of one message lie in one buffer (the input, or the decoded data),
// in order; the ones in the input are compacted in place (the bytes between
// them are chunk framing this call has consumed) and copied out once.
function rsGather(u8, pieces, from, to) {
  if (to - from === 2) return u8.slice(pieces[from], pieces[from] + pieces[from + 1]);
  const start = pieces[from];
  let ordered = !pieces.mixed;
  for (let i = from + 2; ordered && i < to; i += 2) ordered = pieces[i] >= pieces[i - 2] + pieces[i - 1];
  if (ordered) {
    let dst = start;
    for (let i = from; i < to; i += 2) {
      const src = pieces[i];
      const len = pieces[i + 1];
      if (src !== dst) u8.copyWithin(dst, src, src + len);
      dst += len;
    }
    return u8.slice(start, dst);
  }
  let total = 0;
  for (let i = from; i < to; i += 2) total += pieces[i + 1];
  const out = new Uint8Array(total);
  let o = 0;
  for (let i = from; i < to; i += 2) {
    out.set(u8.subarray(pieces[i], pieces[i] + pieces[i + 1]), o);
    o += pieces[i + 1];
  }
  return out;
}

/**
 * Parses one response from `bytes` (the stream ends after them):
 * `parseResponse(bytes, { requestMethod: 'GET', decodeContent: false,
 * skipInterim: false, profile: '4.0', maxHeaderBytes: 1 MiB,
 * maxHeaderFields: 10000, maxBodyBytes: Infinity, maxInflatedBytes: 256 MiB, strict: false })`.
 *
 * A 1xx response is returned as it is (MRI's read_new does that); with
 * `skipInterim: true` they are read and skipped as Net::HTTP#request does
 * (all of 1xx, 101 included) and listed in `response.interim`.
 * `streamOffset`: where `bytes` start in the connection's stream (for the
 * next message of a keep-alive connection, the bytes read before it). Only
 * decoding uses it: a compressed body cut short loses the output that Ruby's
 * zlib had not yet yielded, and that depends on where Net::BufferedIO's
 * 16 KiB reads fall.
 * `strict: true` (not MRI) rejects what RFC 9112 says a recipient must
 * reject, with Net::HTTPBadResponse (see README, "Strict response parsing").
 * Errors: NetHttpError with MRI's class (`rubyClass`) and message.
 */
export function parseResponse(bytes, options) {
  const data = rsToBytes(bytes, 'bytes');
  let cfg = rsConfig(options);
  if (cfg.decode && cfg.maxInflatedBytes === Infinity && (options == null || options.maxInflatedBytes == null))
    cfg = { ...cfg, maxInflatedBytes: RS_ONESHOT_MAX_INFLATED };
  const c = rsCodecOf(options);
  c.begin(RS_CONFIG_LEN + data.length);
  rsWriteConfig(c, cfg);
  c.u8.set(data, c.inPtr + c.pos);
  c.pos += data.length;
  c.call('nh_wasm_resp_parse');
  let head = null;
  let bodyFrom = 0;
  const interim = cfg.skipInterim ? [] : undefined;
  const pieces = [];
  const end = rsReadEvents(
    c,
    (t, block, at) => {
      if (t === RS_EV_INTERIM) interim.push(new Response(block, null, undefined));
      else {
        head = block;
        if (t === RS_EV_HEAD) bodyFrom = at;
      }
    },
    pieces,
  );
  if (head === null || end < 0) throw new Error('net-http-wasm: the response parser stopped short');
  const u8 = c.u8;
  const hasBody = (head[0] & RS_F_BODY) !== 0;
  const body = hasBody ? (pieces.length > bodyFrom ? rsGather(u8, pieces, bodyFrom, pieces.length) : new Uint8Array(0)) : null;
  const restStart = end - c.inPtr - RS_CONFIG_LEN;
  const res = new Response(head, body, restStart < data.length ? data.slice(restStart) : RS_EMPTY);
  res._codec = c;
  res._profile = cfg.profile;
  if (interim) res.interim = interim;
  if (data.length > 1 << 24) c.call('nh_wasm_resp_trim');
  return res;
}

const rsRegistry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry(({ codec, ptr }) => {
        try {
          codec.begin(0);
          codec.call('nh_wasm_resp_free', ptr);
        } catch {
          // the instance is gone or broken: nothing to give back
        }
      })
    : null;

/**
 * An incremental response parser. Feed it the bytes as they arrive, in
 * pieces of any size:
 *
 *   const parser = new ResponseParser({ requestMethod: 'GET', decodeContent: true });
 *   for (const ev of parser.feed(chunk)) ...   // then parser.finish() at EOF
 *
 * Events, in order:
 *   { type: 'continue', response }  with expectContinue: a 100 Continue came
 *                                   first; send the body, the final response
 *                                   follows (any other first response is the
 *                                   final one: do not send the body)
 *   { type: 'interim', response }   a 1xx skipped under skipInterim
 *   { type: 'head', response }      the head is complete (fields as read; MRI
 *                                   changes them while reading the body when
 *                                   decoding, and so does this object by 'end')
 *   { type: 'body', data }          body bytes (decoded with decodeContent);
 *                                   one event per feed at most
 *   { type: 'end', response, rest } the message is complete; `rest` holds the
 *                                   bytes after it (a copy)
 * finish() says the stream ended: read-to-EOF bodies end there, a truncated
 * message raises MRI's EOFError. Errors are thrown as NetHttpError and thrown
 * again by later calls until reset().
 *
 * After 'end' the parser keeps the bytes after the message (and any fed
 * later: feed() then returns no events) as the start of the next one; call
 * reset(options) to read it: the kept bytes are read first by the next
 * feed() (feed(new Uint8Array(0)) reads them alone) or finish().
 * Memory: in the module, the longest head line, the header store, one
 * feed's input and (decoding) what 4 KiB of it inflate to; in JS, the feed's
 * body event; never the whole body. close() frees the WebAssembly side (a
 * FinalizationRegistry does it too if you forget).
 */
export class ResponseParser {
  constructor(options) {
    this._codec = rsCodecOf(options);
    this._cfg = rsConfig(options);
    const c = this._codec;
    c.begin(RS_CONFIG_LEN);
    rsWriteConfig(c, rsFirstConfig(this._cfg));
    c.call('nh_wasm_resp_new');
    this._awaitContinue = this._cfg.expectContinue;
    this._ptr = rsRd32(c.u8, c.outPtr());
    this._token = {};
    if (rsRegistry) rsRegistry.register(this, { codec: c, ptr: this._ptr }, this._token);
    this._response = null;
    this._pending = null;
    this._done = false;
    this._plain = false; // the current message's body is not inflated
  }

  _run(chunk, eof) {
    if (!this._ptr) throw new Error('ResponseParser: closed');
    if (this._done) {
      // the next message's bytes: kept until reset()
      if (chunk.length) this._pending = this._pending ? rsConcat(this._pending, chunk) : chunk.slice();
      return [];
    }
    let data = chunk;
    if (this._pending) {
      data = chunk.length ? rsConcat(this._pending, chunk) : this._pending;
      this._pending = null;
    }
    if (!this._cfg.decode || data.length <= RS_DECODE_SLICE) return this._feedOnce(data, eof);
    // decoding: slice by slice (the result does not depend on how the
    // stream is cut), one body event for the whole feed; once the body shows
    // it is not being inflated, the rest goes in at once
    const events = [];
    const bodies = [];
    for (let off = 0, to = 0; off < data.length; off = to) {
      to = this._plain ? data.length : Math.min(off + RS_DECODE_SLICE, data.length);
      for (const e of this._feedOnce(data.subarray(off, to), eof && to === data.length)) {
        if (e.type === 'body') {
          bodies.push(e.data);
          continue;
        }
        if (e.type === 'end') {
          if (bodies.length) events.push({ type: 'body', data: rsConcatAll(bodies) });
          bodies.length = 0;
          if (to < data.length) {
            // the next message's bytes: this slice's rest and the slices after it
            e.rest = rsConcat(e.rest, data.subarray(to));
            this._pending = e.rest;
          }
          events.push(e);
          return events;
        }
        events.push(e);
      }
    }
    if (bodies.length) events.push({ type: 'body', data: rsConcatAll(bodies) });
    return events;
  }

  _feedOnce(data, eof) {
    const c = this._codec;
    c.begin(data.length);
    c.u8.set(data, c.inPtr);
    c.pos = data.length;
    c.call('nh_wasm_resp_feed', this._ptr, eof ? 1 : 0);
    const events = [];
    const pieces = [];
    const flush = (at) => {
      if (at > 0) events.push({ type: 'body', data: rsGather(c.u8, pieces, 0, at) });
      pieces.length = 0;
    };
    const end = rsReadEvents(
      c,
      (t, block) => {
        if (t === RS_EV_FINAL) this._response._setHead(block);
        else {
          const res = new Response(block, undefined, undefined);
          if (t === RS_EV_HEAD) this._response = res;
          events.push({ type: t === RS_EV_HEAD ? 'head' : 'interim', response: res });
        }
      },
      pieces,
    );
    // body bytes straight from the input: this message is not inflated
    if (pieces.length && !pieces.mixed && pieces.src === 0) this._plain = true;
    flush(pieces.length);
    if (end >= 0) {
      const rest = c.u8.slice(end, c.inPtr + data.length);
      this._done = true;
      this._pending = rest.length ? rest : null;
      events.push({ type: 'end', response: this._response, rest });
    }
    if (data.length > 1 << 24) c.call('nh_wasm_resp_trim');
    return events;
  }

  /** Feeds the next bytes of the stream; returns the events they complete. */
  feed(chunk) {
    return this._continued(this._run(rsToBytes(chunk, 'chunk'), false), false);
  }

  /** The stream ended: returns the last events, or throws MRI's EOFError. */
  finish() {
    return this._continued(this._run(RS_EMPTY, true), true);
  }

  // expectContinue: Net::HTTPGenericRequest#wait_for_continue reads one
  // response with read_new; a 100 (Net::HTTPContinue) becomes a 'continue'
  // event and the final response is read next; any other response is the
  // final one (the body is not sent), a 1xx included (throw :response).
  _continued(events, eof) {
    if (!this._awaitContinue) return events;
    const head = events.find((e) => e.type === 'head');
    if (!head) return events;
    this._awaitContinue = false;
    if (head.response.className !== 'Net::HTTPContinue') return events;
    // a 100 has no body: its head and end are in these events
    const out = [{ type: 'continue', response: head.response }];
    this._rearm(this._cfg);
    return out.concat(this._run(RS_EMPTY, eof));
  }

  _rearm(cfg) {
    const c = this._codec;
    c.begin(RS_CONFIG_LEN);
    rsWriteConfig(c, cfg);
    c.call('nh_wasm_resp_reset', this._ptr);
    this._response = null;
    this._done = false;
    this._plain = false;
  }

  /**
   * Starts the next message on the same stream (options as the
   * constructor's; default: the same). The stream position carries on, as
   * the next message follows this one; `{ streamOffset: 0 }` starts a new
   * stream (better: a new parser per connection).
   */
  reset(options) {
    if (!this._ptr) throw new Error('ResponseParser: closed');
    if (options !== undefined) this._cfg = rsConfig(options);
    const cfg = rsFirstConfig(this._cfg);
    this._rearm(options && options.streamOffset != null ? cfg : { ...cfg, streamOffset: Infinity });
    this._awaitContinue = this._cfg.expectContinue;
  }

  /** The bytes after the completed message that the next message will start with. */
  get pending() {
    return this._pending ? this._pending.slice() : new Uint8Array(0);
  }

  /** Removes the kept bytes and returns them (to hand the stream to something else). */
  takePending() {
    const p = this._pending || new Uint8Array(0);
    this._pending = null;
    return p;
  }

  /** Frees the WebAssembly side; the parser cannot be used after. */
  close() {
    if (!this._ptr) return;
    if (rsRegistry) rsRegistry.unregister(this._token);
    const c = this._codec;
    c.begin(0);
    c.call('nh_wasm_resp_free', this._ptr);
    this._ptr = 0;
  }
}

/** The response API bound to one codec (merged into createNetHttp's result). */
export function bindResponse(codec) {
  const bind = (options) => Object.assign({}, options, { codec });
  class BoundResponseParser extends ResponseParser {
    constructor(options) {
      super(bind(options));
    }
  }
  return {
    parseResponse: (bytes, options) => parseResponse(bytes, bind(options)),
    ResponseParser: BoundResponseParser,
    Response,
  };
}

