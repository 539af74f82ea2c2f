// Net::HTTPResponse as MRI holds it, read from the codec's head block.
//
// Strings: MRI's header names and values are binary strings. Here they are
// JS strings decoded as UTF-8 (an invalid sequence becomes U+FFFD); the exact
// bytes are available from rawHeaderEntries(), body and rest are bytes.
import { NetHttpError } from './errors.mjs';
import { decodeUtf8, getDefaultCodec } from './core.mjs';
import { headerReaders } from './header-helpers.mjs';
import { COMMON_NAMES, HEAD_ASCII, HEAD_ASCII_BLOCK, HEAD_BODY, HEAD_MESSAGE, HEAD_VERSION, HQ_EACH_CAPITALIZED } from './schema.mjs';

export const EMPTY = new Uint8Array(0);

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });
// windows-1252 (what 'latin1' means to TextDecoder): one UTF-16 unit per byte,
// so byte offsets are string offsets; used on ASCII text only.
const single = new TextDecoder('latin1');

export function rd32(u8, p) {
  return (u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24)) >>> 0;
}

// Small copies out of WebAssembly memory share an ArrayBuffer (a slab), as
// small Buffers share Node's pool: allocating an ArrayBuffer per response
// costs more than parsing it.
class Slabs {
  constructor(size, max) {
    this.size = size;
    this.max = max;
    this.slab = null;
    this.buffer = null;
    this.at = size;
  }

  /** A copy of bytes [start, end) of `buffer` (WebAssembly memory's). */
  copy(buffer, start, end) {
    // views made with the constructor, of buffers at hand (subarray() and
    // the buffer getter of a view of WebAssembly memory cost several times
    // as much)
    const n = end - start;
    const src = new Uint8Array(buffer, start, n);
    if (n > this.max) return src.slice();
    let at = this.at;
    if (at + n > this.size) {
      this.slab = new Uint8Array(this.size);
      this.buffer = this.slab.buffer;
      at = 0;
    }
    this.slab.set(src, at);
    this.at = at + n;
    return new Uint8Array(this.buffer, at, n);
  }
}

// Head blocks are private to their Response and never written.
const heads = new Slabs(16384, 1024);
// A small body shares its ArrayBuffer with other responses' bodies (and
// the ruby.wasm bridge's small records and requests, which never change
// it); body.buffer is then not the body's alone (copy it with slice()
// before transferring it).
const bodies = new Slabs(16384, 4096);

/** A copy of bytes [start, end) of `buffer` for a Response's head block. */
export function keepBlock(buffer, start, end) {
  return heads.copy(buffer, start, end);
}

/** A copy of bytes [start, end) of `buffer` for a body. */
export function keepBody(buffer, start, end) {
  return bodies.copy(buffer, start, end);
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
    // every field first, in one order (one object shape for every response)
    this._head = undefined;
    this._asRead = undefined;
    this._text = null;
    this._msgAt = 0;
    this._fieldsAt = 0;
    this._fields = null;
    this._vals = null;
    this._names = null;
    this._headers = null;
    this._codec = undefined;
    this._profile = 0;
    this.className = '';
    this.httpVersion = null;
    this.code = '';
    this.message = null;
    this.hasBody = false;
    this.status = 0;
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
    // A block whose strings are ASCII is decoded once, one character a byte,
    // and its strings are slices of that text (by the UTF-8 decoder, the
    // faster, when its lengths are ASCII bytes too).
    this._text = flags & HEAD_ASCII_BLOCK ? utf8Decoder.decode(head) : flags & HEAD_ASCII ? single.decode(head) : null;
    // four strings: class name, version, code, message
    let n = rd32(u8, 1);
    this.className = this._str(5, 5 + n);
    let p = 5 + n;
    n = rd32(u8, p);
    const version = this._str(p + 4, p + 4 + n);
    p += 4 + n;
    n = rd32(u8, p);
    this.code = this._str(p + 4, p + 4 + n);
    p += 4 + n;
    this._msgAt = p;
    n = rd32(u8, p);
    const message = this._str(p + 4, p + 4 + n);
    p += 4 + n;
    this.httpVersion = flags & HEAD_VERSION ? version : null;
    this.message = flags & HEAD_MESSAGE ? message : null;
    this.hasBody = (flags & HEAD_BODY) !== 0;
    // (the status regex takes three digits: Number() of a short string
    // goes through the runtime and hashes it first)
    const code = this.code;
    this.status = code.length === 3 ? code.charCodeAt(0) * 100 + code.charCodeAt(1) * 10 + code.charCodeAt(2) - 5328 : Number(code);
    this._fieldsAt = p;
    this._fields = null; // see _table()
    this._vals = null;
    this._names = null;
    this._headers = null;
  }

  _str(a, b) {
    return this._text !== null ? this._text.slice(a, b) : decodeUtf8(this._head, a, b);
  }

  // A field's name: a common name (its id before its length) is a constant
  // (V8 keeps these strings internalized, so they make cheap property keys).
  _name(at) {
    const id = this._head[at];
    return id !== 0 ? COMMON_NAMES[id] : this._str(at + 5, at + 5 + rd32(this._head, at + 1));
  }

  /** The reason phrase's exact bytes (MRI's message is a binary string), or null. */
  get messageBytes() {
    if (this.message === null) return null;
    const n = rd32(this._head, this._msgAt);
    return this._head.slice(this._msgAt + 4, this._msgAt + 4 + n);
  }

  // The field table, read once from the head block: per field i,
  // t[4i] name start, t[4i+1] name end, t[4i+2] first value's index in v,
  // t[4i+3] number of values; v holds [start, end] pairs of value bytes.
  // (A name starts 5 bytes after its field: u8 id, u32 length.)
  _table() {
    if (this._fields) return this._fields;
    const u8 = this._head;
    let p = this._fieldsAt;
    const n = rd32(u8, p);
    p += 4;
    const t = new Array(4 * n);
    const v = [];
    for (let i = 0; i < n; i++) {
      const nl = rd32(u8, p + 1);
      const ns = p + 5;
      p = ns + nl;
      const m = rd32(u8, p);
      p += 4;
      t[4 * i] = ns;
      t[4 * i + 1] = ns + nl;
      t[4 * i + 2] = v.length;
      t[4 * i + 3] = m;
      for (let k = 0; k < m; k++) {
        const vl = rd32(u8, p);
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
    for (let i = 0; i < names.length; i++) names[i] = this._name(t[4 * i] - 5);
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
    if (this._headers === null) this._headers = readHeaders(this);
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
    const { parts } = this._query(HQ_EACH_CAPITALIZED);
    const out = new Array(parts.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = [parts[2 * i], parts[2 * i + 1]];
    return out;
  }

  /** The body decoded as UTF-8 (U+FFFD for invalid bytes), or null. */
  bodyText() {
    return this.body == null ? null : utf8Decoder.decode(this.body);
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

// `to_hash`, read straight from the block in one pass, into an empty object
// given a null prototype first (V8 keeps it in fast mode; Object.create(null)
// starts as a dictionary); a "__proto__" field is defined, never assigned.
function readHeaders(res) {
  const h = Object.setPrototypeOf({}, null);
  const u8 = res._head;
  let p = res._fieldsAt;
  const n = rd32(u8, p);
  p += 4;
  for (let i = 0; i < n; i++) {
    const name = res._name(p);
    p += 5 + rd32(u8, p + 1);
    const vals = new Array(rd32(u8, p));
    p += 4;
    for (let k = 0; k < vals.length; k++) {
      const vl = rd32(u8, p);
      vals[k] = res._str(p + 4, p + 4 + vl);
      p += 4 + vl;
    }
    if (name === '__proto__') Object.defineProperty(h, name, { value: vals, writable: true, enumerable: true, configurable: true });
    else h[name] = vals;
  }
  return h;
}

for (const [name, fn] of Object.entries(headerReaders({ NetHttpError })))
  if (!(name in Response.prototype)) Response.prototype[name] = fn;

// ---- events ----
