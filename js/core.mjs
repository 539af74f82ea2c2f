// net-http-wasm: the JS side of the codec. One call into WebAssembly per
// operation; inputs are written as UTF-8 records straight into wasm memory,
// results are read as views over it and copied out once.

import { headerReaders, headerWriters } from './header-helpers.mjs';
import { multipartBody, randomBoundary, isBlob } from './multipart.mjs';
import { requestToFetch } from './fetch.mjs';
import { CLASS_NAMES, PROFILES, ERROR as NH_ERROR, NOMEM as NH_NOMEM, OP_END, OP_SET, OP_ADD, OP_DELETE, OP_FORM, OP_BODY, OP_EXEC, OP_GET, OP_DUMP, OP_QUERY, OP_SET_RAW } from './schema.mjs';
import { checkSource, isSyncSource, sourcePieces, sourcePiecesSync, framedReads, streamEnd } from './body-stream.mjs';

/** An exception MRI would raise: `rubyClass` names its class, `message` is MRI's text. */
export class NetHttpError extends Error {
  constructor(rubyClass, message) {
    super(message);
    this.name = 'NetHttpError';
    this.rubyClass = rubyClass;
  }
}

function profileId(options) {
  const p = options == null || options.profile == null ? '4.0' : options.profile;
  const id = PROFILES[p];
  if (id === undefined) throw new TypeError(`profile must be '4.0' or '3.4', not ${String(p)}`);
  return id;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** Integer#to_s / Float#to_s of a JS number, as Ruby prints it. */
export function rubyNumberToString(n) {
  if (typeof n === 'bigint') return n.toString();
  if (Number.isInteger(n)) return Number.isSafeInteger(n) ? String(n === 0 ? 0 : n) : BigInt(n).toString();
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  const sign = n < 0 ? '-' : '';
  const [mant, e] = Math.abs(n).toExponential().split('e');
  const digits = mant.replace('.', '');
  const decpt = Number(e) + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
    const int = digits.slice(0, decpt).padEnd(decpt, '0');
    const frac = digits.slice(decpt) || '0';
    return `${sign}${int}.${frac}`;
  }
  const exp = decpt - 1;
  const abs = Math.abs(exp);
  return `${sign}${digits[0]}.${digits.slice(1) || '0'}e${exp < 0 ? '-' : '+'}${abs < 10 ? '0' : ''}${abs}`;
}

// `to_s` of a value Ruby code would pass (String, Integer, Float, true/false).
function toRubyString(v, what) {
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'bigint':
      return rubyNumberToString(v);
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      throw new TypeError(`${what} must be a string, number or boolean, not ${v === null ? 'null' : typeof v}`);
  }
}

function pairsOf(params, what) {
  if (params == null) throw new TypeError(`${what} must be an array of pairs, an object or a Map`);
  if (Array.isArray(params)) return params;
  if (params instanceof Map || (typeof params === 'object' && typeof params[Symbol.iterator] === 'function'))
    return Array.from(params);
  if (typeof params === 'object') return Object.entries(params);
  throw new TypeError(`${what} must be an array of pairs, an object or a Map`);
}

/** A URI to build a request from, as Ruby's `URI(str)`. */
export class URIReference {
  constructor(href) {
    if (typeof href !== 'string') throw new TypeError('uri must be a string');
    this.href = href;
    Object.freeze(this);
  }
  toString() {
    return this.href;
  }
}

/** `URI(str)`: marks a string as a URI for `new Request(method, URI(str))`. */
export function URI(str) {
  return new URIReference(typeof str === 'object' && str !== null && 'href' in str ? String(str.href) : str);
}

// The methods Net::HTTP defines: [request has body, response has body].
const METHODS = {
  GET: [false, true], HEAD: [false, false], POST: [true, true], PUT: [true, true],
  DELETE: [false, true], OPTIONS: [false, true], TRACE: [false, true], PATCH: [true, true],
  PROPFIND: [true, true], PROPPATCH: [true, true], MKCOL: [true, true], COPY: [false, true],
  MOVE: [false, true], LOCK: [true, true], UNLOCK: [true, true],
};

// http(s) URIs whose request target can be read off without escaping and
// that URI() accepts: host of reg-name characters, digits for a port, path
// and query of characters that need no %-escape check or escaping.
const SIMPLE_URI =
  /^https?:\/\/[A-Za-z0-9\-._~!$&'()*+,;=]+(?::[0-9]*)?(\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)?(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@/?]*))?$/i;
const NON_ASCII = /[^\x00-\x7f]/;
// RFC 9110 token, and field-value characters (no CTLs but HTAB).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\uffff]*$/;
const TARGET = /^[\x21-\x7e\x80-\uffff]+$/;

function strictCheck(what, value, re) {
  if (!re.test(value)) throw new NetHttpError('ArgumentError', `strict: ${what} not allowed by RFC 9112: ${JSON.stringify(value)}`);
}
const CRLF = /[\r\n]/;

/** One instance of the WebAssembly module and its call context. */
export class Codec {
  constructor(source) {
    let module = source;
    if (!(source instanceof WebAssembly.Module)) {
      if (!(source instanceof Uint8Array || source instanceof ArrayBuffer))
        throw new TypeError('source must be a WebAssembly.Module, Uint8Array or ArrayBuffer');
      module = new WebAssembly.Module(source);
    }
    const instance = new WebAssembly.Instance(module, {});
    this.x = instance.exports;
    this.memory = this.x.memory;
    if (typeof this.x._initialize === 'function') this.x._initialize();
    this.ctx = this.x.nh_ctx_new();
    if (!this.ctx) throw new NetHttpError('NoMemoryError', 'failed to allocate memory');
    this.buffer = null;
    this.refresh();
    this.inPtr = 0;
    this.inCap = 0;
    this.pos = 0;
  }

  refresh() {
    if (this.buffer !== this.memory.buffer) {
      this.buffer = this.memory.buffer;
      this.u8 = new Uint8Array(this.buffer);
      this.u32 = new Uint32Array(this.buffer);
    }
  }

  // ---- writing an input record ----
  begin(estimate) {
    this.pos = 0;
    this.ensure(estimate);
  }

  ensure(extra) {
    if (this.pos + extra <= this.inCap) return;
    const cap = Math.max(this.pos + extra, this.inCap * 2, 1024);
    const ptr = this.x.nh_ctx_input(this.ctx, cap);
    if (!ptr) throw new NetHttpError('NoMemoryError', 'failed to allocate memory');
    this.inPtr = ptr;
    this.inCap = cap;
    this.refresh();
  }

  u8w(v) {
    this.ensure(1);
    this.u8[this.inPtr + this.pos++] = v;
  }

  u32w(v) {
    this.ensure(4);
    const p = this.inPtr + this.pos;
    const u8 = this.u8;
    u8[p] = v;
    u8[p + 1] = v >>> 8;
    u8[p + 2] = v >>> 16;
    u8[p + 3] = v >>> 24;
    this.pos += 4;
  }

  // A UTF-8 string preceded by its byte length.
  strw(s) {
    const n = s.length;
    this.ensure(4 + n * 3);
    const start = this.inPtr + this.pos + 4;
    const u8 = this.u8;
    let len = 0;
    if (n < 64) {
      for (; len < n; len++) {
        const c = s.charCodeAt(len);
        if (c >= 0x80) break;
        u8[start + len] = c;
      }
    }
    if (len < n) len += encoder.encodeInto(len ? s.slice(len) : s, u8.subarray(start + len, start + n * 3)).written;
    const p = start - 4;
    u8[p] = len;
    u8[p + 1] = len >>> 8;
    u8[p + 2] = len >>> 16;
    u8[p + 3] = len >>> 24;
    this.pos += 4 + len;
  }

  bytesw(b) {
    this.ensure(4 + b.length);
    this.u32w(b.length);
    this.u8.set(b, this.inPtr + this.pos);
    this.pos += b.length;
  }

  // ---- calling and reading ----
  call(name, ...args) {
    let rc;
    try {
      rc = this.x[name](this.ctx, this.pos, ...args);
    } finally {
      // memory may have grown before a trap too: the views must follow
      this.refresh();
    }
    if (rc < 0) this.fail(rc);
    return rc;
  }

  // The one mapping of a status to an exception.
  fail(rc) {
    if (rc === NH_NOMEM) throw new NetHttpError('NoMemoryError', 'failed to allocate memory');
    if (rc !== NH_ERROR) throw new Error(`net-http-wasm: unexpected status ${rc}`);
    const cls = this.u32[(this.ctx >>> 2) + 3];
    const bytes = this.outBytes();
    const e = new NetHttpError(CLASS_NAMES[cls] || 'StandardError', decodeUtf8(bytes, 0, bytes.length));
    // MRI's message is a binary string; it can hold bytes that are not UTF-8
    // ("wrong chunk size line: \xFF").
    e.messageBytes = bytes;
    throw e;
  }

  outPtr() {
    return this.u32[this.ctx >>> 2];
  }

  outLen() {
    return this.u32[(this.ctx >>> 2) + 1];
  }

  outText() {
    const p = this.outPtr();
    return decodeUtf8(this.u8, p, p + this.outLen());
  }

  outBytes() {
    const p = this.outPtr();
    return this.u8.slice(p, p + this.outLen());
  }

  // A text table: u32 n, n u32 UTF-16 lengths, then the text.
  outTable() {
    const p = this.outPtr();
    const u8 = this.u8;
    const n = u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24);
    const textAt = p + 4 + 4 * n;
    const text = decodeUtf8(u8, textAt, p + this.outLen());
    const out = new Array(n);
    let off = 0;
    for (let i = 0, q = p + 4; i < n; i++, q += 4) {
      const len = (u8[q] | (u8[q + 1] << 8) | (u8[q + 2] << 16) | (u8[q + 3] << 24)) >>> 0;
      out[i] = text.slice(off, off + len);
      off += len;
    }
    return out;
  }

  /** A header query's result (src/header_fields.c): { tag, parts }. */
  outQuery() {
    const r = new OutReader(this.u8, this.outPtr());
    const tag = r.u8();
    const parts = new Array(r.u32());
    for (let i = 0; i < parts.length; i++) parts[i] = r.str();
    return { tag, parts };
  }

  /** The wasm memory's size in bytes. */
  memorySize() {
    return this.memory.buffer.byteLength;
  }
}

// Reads a result record: u8, little-endian u32, u32-length-prefixed UTF-8.
class OutReader {
  constructor(u8, p) {
    this.b = u8;
    this.p = p;
  }

  u8() {
    return this.b[this.p++];
  }

  u32() {
    const b = this.b;
    const p = this.p;
    this.p += 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
  }

  str() {
    const n = this.u32();
    const s = decodeUtf8(this.b, this.p, this.p + n);
    this.p += n;
    return s;
  }
}

/** UTF-8 bytes u8[start, end) as a string (short ASCII runs without TextDecoder). */
export function decodeUtf8(u8, start, end) {
  if (end - start < 48) {
    let s = '';
    for (let i = start; i < end; i++) {
      const c = u8[i];
      if (c >= 0x80) return decoder.decode(u8.subarray(start, end));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return decoder.decode(u8.subarray(start, end));
}

// ---- form pairs ----
function writePairs(c, params) {
  const pairs = pairsOf(params, 'params');
  c.u32w(pairs.length);
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length < 1) throw new TypeError('each form pair must be [key, value]');
    const k = pair[0] == null ? '' : toRubyString(pair[0], 'form key');
    const v = pair[1];
    c.strw(k);
    if (v == null) {
      c.u8w(0);
    } else if (Array.isArray(v)) {
      c.u8w(2);
      c.u32w(v.length);
      for (const w of v) {
        if (w == null) c.u8w(0);
        else {
          c.u8w(1);
          c.strw(toRubyString(w, 'form value'));
        }
      }
    } else {
      c.u8w(1);
      c.strw(toRubyString(v, 'form value'));
    }
  }
}

// Flattens a header value into the strings Net::HTTPHeader stores.
function headerValues(v, out) {
  if (Array.isArray(v)) {
    for (const x of v) headerValues(x, out);
  } else {
    const s = v == null ? '' : toRubyString(v, 'header value');
    if (s.includes('\r') || s.includes('\n'))
      throw new NetHttpError('ArgumentError', 'header field value cannot include CR/LF');
    out.push(s);
  }
  return out;
}

function headerName(key) {
  if (typeof key !== 'string') throw new TypeError('header name must be a string');
  return key;
}

let defaultCodec = null;
let defaultLoader = null;

/** Used by the entry modules: how to get the default module synchronously. */
export function setDefaultLoader(fn) {
  defaultLoader = fn;
}

/** Uses `codec` for everything made without an explicit one. */
export function setDefaultCodec(codec) {
  defaultCodec = codec;
}

/** The codec the API uses when none is given (created on first use). */
export function getDefaultCodec() {
  return getDefault();
}

function getDefault() {
  if (!defaultCodec) {
    if (!defaultLoader) throw new Error('net-http-wasm: no WebAssembly module loaded; call init() first');
    defaultCodec = new Codec(defaultLoader());
  }
  return defaultCodec;
}

function codecOf(options) {
  return (options && options.codec) || getDefault();
}

/**
 * A request as Net::HTTP builds it: `new Request('POST', URI('http://h/p'), { 'X-A': '1' })`.
 * A string target is a path unless it starts with http:// or https://; pass
 * `{ path }` to force a path, `URI(str)` (or a URL) to force a URI.
 */
export class Request {
  constructor(method, uriOrPath, initHeader, options) {
    if (typeof method !== 'string') throw new TypeError('method must be a string');
    this._codec = codecOf(options);
    this._profile = profileId(options);
    this._strict = !!(options && options.strict);
    const upper = method.toUpperCase();
    const flags = METHODS[upper];
    this.method = flags ? upper : method;
    this._resbody = flags ? flags[1] : !(options && options.responseHasBody === false);
    this.requestBodyPermitted = flags ? flags[0] : !(options && options.requestHasBody === false);
    this.responseBodyPermitted = this._resbody;
    if (uriOrPath instanceof URIReference || (typeof URL !== 'undefined' && uriOrPath instanceof URL)) {
      this._isUri = true;
      this._target = String(uriOrPath.href);
    } else if (typeof uriOrPath === 'string') {
      this._isUri = /^https?:\/\//i.test(uriOrPath);
      this._target = uriOrPath;
    } else if (uriOrPath && typeof uriOrPath === 'object' && typeof uriOrPath.path === 'string') {
      this._isUri = false;
      this._target = uriOrPath.path;
    } else {
      throw new TypeError('uriOrPath must be a path string, URI(str), a URL or { path }');
    }
    this._init = null;
    if (initHeader != null) {
      const m = new Map(); // a Ruby Hash: a repeated key keeps its first place
      for (const pair of pairsOf(initHeader, 'initHeader')) {
        if (!Array.isArray(pair)) throw new TypeError('initHeader entries must be [name, value]');
        const v = pair[1];
        if (v != null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'bigint')
          throw new TypeError('initHeader values must be strings, numbers or null');
        m.set(headerName(pair[0]), v == null ? null : toRubyString(v, 'header value'));
      }
      this._init = m;
    }
    this._ops = [];
    this._body = null;
    this._form = null;
    this._bodyStream = null;
    if (this._strict) {
      strictCheck('method', this.method, TOKEN);
      if (this._init) for (const [k, v] of this._init) this._strictField(k, v === null ? [] : [v]);
    }
    // Constructor arguments that cannot make Ruby raise are taken as they
    // are; anything else is checked by the codec now, as Ruby would.
    if (!this._simpleConstruction()) this._run(OP_END);
  }

  // Sets path and decodeContent without a call into wasm when no error is
  // possible: a non-empty path or a plain http(s) URI, and initial headers
  // whose keys are short ASCII and whose values hold no CR/LF.
  _simpleConstruction() {
    let path;
    if (this._isUri) {
      const m = SIMPLE_URI.exec(this._target);
      if (!m) return false;
      path = (m[1] || '/') + (m[2] !== undefined ? `?${m[2]}` : '');
    } else {
      if (this._target === '') return false;
      path = this._target;
    }
    let decode = this._resbody;
    if (this._init !== null) {
      let defaults = true;
      for (const [k, v] of this._init) {
        if (k.length > 1024 || NON_ASCII.test(k)) return false;
        if (v !== null && (v.length > 21845 || CRLF.test(v))) return false;
        const lk = k.toLowerCase();
        if (lk === 'accept-encoding' || lk === 'range') defaults = false;
      }
      if (!defaults) decode = false;
    }
    this.path = path;
    this.decodeContent = decode;
    return true;
  }

  _write(final, arg) {
    const c = this._codec;
    c.begin(256);
    c.u8w(this._profile);
    c.u8w(this._resbody ? 1 : 0);
    c.strw(this.method);
    c.u8w(this._isUri ? 1 : 0);
    c.strw(this._target);
    if (this._init === null) c.u32w(0xffffffff);
    else {
      c.u32w(this._init.size);
      for (const [k, v] of this._init) {
        c.strw(k);
        if (v === null) c.u8w(0);
        else {
          c.u8w(1);
          c.strw(v);
        }
      }
    }
    for (const op of this._ops) {
      c.u8w(op[0]);
      switch (op[0]) {
        case OP_SET:
        case OP_ADD:
          c.strw(op[1]);
          c.u32w(op[2].length);
          for (const v of op[2]) c.strw(v);
          break;
        case OP_DELETE:
          c.strw(op[1]);
          c.u8w(op[2] ? 1 : 0);
          break;
        case OP_FORM:
          writePairs(c, op[1]);
          if (op[2] === '&') c.u8w(0);
          else {
            c.u8w(1);
            c.strw(op[2]);
          }
          break;
        case OP_SET_RAW:
          c.strw(op[1]);
          c.strw(op[2]);
          break;
        case OP_BODY:
          if (op[1] === null) c.u8w(0);
          else {
            c.u8w(1);
            if (typeof op[1] === 'string') c.strw(op[1]);
            else c.bytesw(op[1]);
          }
          break;
      }
    }
    c.u8w(final);
    if (final === OP_EXEC || final === OP_GET) c.strw(arg);
    else if (final === OP_QUERY) {
      c.u8w(arg[0]);
      c.strw(arg[1]);
    }
  }

  _run(final, arg) {
    this._write(final, arg);
    this._codec.call('nh_wasm_request');
    if (final === OP_END) {
      const c = this._codec;
      const p = c.outPtr();
      this.decodeContent = c.u8[p] === 1;
      if (this.path === undefined) this.path = decodeUtf8(c.u8, p + 1, p + c.outLen());
    }
  }

  _strictField(name, values) {
    strictCheck('header name', name, TOKEN);
    for (const v of values) strictCheck('header value', v, FIELD_VALUE);
  }

  // The header helpers' seams (js/header-helpers.mjs).
  _query(kind, arg = '') {
    this._run(OP_QUERY, [kind, arg]);
    return this._codec.outQuery();
  }

  _setRaw(lkey, value) {
    if (this._strict) this._strictField(lkey, [value]);
    this._ops.push([OP_SET_RAW, lkey, value]);
  }

  _deleteRaw(lkey) {
    this._ops.push([OP_DELETE, lkey, false]);
  }

  /** `req[name] = value`; null deletes the field. */
  set(name, value) {
    headerName(name);
    if (value == null) this._ops.push([OP_DELETE, name, true]);
    else {
      const values = headerValues(value, []);
      if (this._strict) this._strictField(name, values);
      this._ops.push([OP_SET, name, values]);
    }
    if (name.length === 15 && name.toLowerCase() === 'accept-encoding') this.decodeContent = false;
    else if (/[^\x00-\x7f]/.test(name)) this._run(OP_END);
    return this;
  }

  /** `req[name]`: the values joined with ", ", or null. */
  get(name) {
    headerName(name);
    this._run(OP_GET, name);
    const c = this._codec;
    const p = c.outPtr();
    return c.u8[p] ? decodeUtf8(c.u8, p + 1, p + c.outLen()) : null;
  }

  /** `req.add_field(name, value)` */
  addField(name, value) {
    headerName(name);
    const values = headerValues(value, []);
    if (this._strict) this._strictField(name, values);
    this._ops.push([OP_ADD, name, values]);
    return this;
  }

  /** `req.delete(name)` */
  delete(name) {
    headerName(name);
    this._ops.push([OP_DELETE, name, false]);
    return this;
  }

  /** `req.set_form_data(params, sep)` */
  setFormData(params, sep = '&') {
    if (typeof sep !== 'string') throw new TypeError('sep must be a string');
    const copy = pairsOf(params, 'params').map((p) => (Array.isArray(p) ? [p[0], Array.isArray(p[1]) ? p[1].slice() : p[1]] : p));
    this._ops.push([OP_FORM, copy, sep]);
    try {
      if (sep.includes('\\')) this._run(OP_END); // a replacement string can raise
      else {
        // validate the pairs now, as Ruby would
        const c = this._codec;
        c.begin(64);
        writePairs(c, copy);
      }
    } catch (e) {
      this._ops.pop();
      throw e;
    }
    this._body = null;
    this._form = null;
    this._bodyStream = null;
    return this;
  }

  /**
   * `req.set_form(params, enctype, { boundary, charset })`: params are
   * [key, value] or [key, value, { filename, contentType }] (or an object);
   * a value is a string, a Uint8Array or a Blob/File (read by toBytesAsync).
   * The body is made when the request is written, as MRI does.
   */
  setForm(params, enctype = 'application/x-www-form-urlencoded', formOptions = {}) {
    if (typeof enctype !== 'string') throw new TypeError('enctype must be a string');
    const list = pairsOf(params, 'params').map((p) => {
      if (!Array.isArray(p)) throw new TypeError('each form entry must be [key, value, options?]');
      return p.slice();
    });
    if (!/^application\/x-www-form-urlencoded$/i.test(enctype) && !/^multipart\/form-data$/i.test(enctype))
      throw new NetHttpError('ArgumentError', `invalid enctype: ${enctype}`);
    this._setRaw('content-type', enctype);
    this._ops.push([OP_BODY, null]);
    this._body = null;
    this._bodyStream = null;
    this._form = { list, opts: Object.assign({}, formOptions) };
    return this;
  }

  // Net::HTTPGenericRequest#send_request_with_body_data: the head with the
  // ops in `extra` applied for this write only, then the body.
  _formBytes(httpVersion) {
    const { list, opts } = this._form;
    const ct = this.contentType();
    let extra;
    let body = null;
    if (!/^multipart\/form-data$/i.test(ct === null ? '' : ct)) {
      const pairs = list.map((p) => [p[0], p[1]]);
      for (const [, v] of pairs) if (v instanceof Uint8Array || isBlob(v)) throw new TypeError('a urlencoded form takes no Uint8Array or Blob values');
      extra = [[OP_SET_RAW, 'content-type', 'application/x-www-form-urlencoded'], [OP_BODY, encodeWwwForm(pairs, '&', { codec: this._codec })]];
    } else {
      const boundary = opts.boundary != null ? String(opts.boundary) : randomBoundary();
      extra = [[OP_SET_RAW, 'content-type', `${ct}; boundary=${boundary}`]];
      const chunked = this.isChunked();
      for (const p of list) if (isBlob(p[1])) throw new TypeError('a Blob value must be read first: use await req.toBytesAsync()');
      try {
        body = multipartBody(list, { boundary, charset: opts.charset, chunked });
      } catch (e) {
        throw e && e.rubyClass ? new NetHttpError(e.rubyClass, e.message) : e;
      }
      if (!chunked) extra.push([OP_SET_RAW, 'content-length', String(body.length)]);
    }
    const n = this._ops.length;
    this._ops.push(...extra);
    try {
      this._run(OP_EXEC, httpVersion);
    } finally {
      this._ops.length = n;
    }
    const head = this._codec.outBytes();
    if (body === null) return head;
    const out = new Uint8Array(head.length + body.length);
    out.set(head);
    out.set(body, head.length);
    return out;
  }

  /**
   * What fetch() takes: `const { url, init, dropped } = req.toFetch(url?)`,
   * then `fetch(url, init)`; `dropped` lists the fields fetch() sets itself.
   */
  toFetch(url) {
    return requestToFetch(this, url, this.toBytes());
  }

  /** toFetch() after reading the Blob/File values of a form (setForm). */
  async toFetchAsync(url) {
    return requestToFetch(this, url, await this.toBytesAsync());
  }

  /** toBytes() after reading the Blob/File values of a form (setForm). */
  async toBytesAsync(httpVersion = '1.1') {
    if (this._bodyStream && !isSyncSource(this._bodyStream)) {
      const parts = [];
      for await (const bytes of this.stream(httpVersion)) parts.push(bytes);
      return concatBytes(parts);
    }
    if (this._form) {
      for (const p of this._form.list) {
        if (isBlob(p[1])) {
          const bytes = new Uint8Array(await p[1].arrayBuffer());
          p[1] = typeof p[1].name === 'string' ? { bytes, name: p[1].name } : bytes;
        }
      }
    }
    return this.toBytes(httpVersion);
  }

  /** `req.body = value` (a string, a Uint8Array or null). */
  set body(value) {
    if (value != null && typeof value !== 'string' && !(value instanceof Uint8Array))
      throw new TypeError('body must be a string, a Uint8Array or null');
    this._body = value == null ? null : value;
    this._form = null;
    this._bodyStream = null;
    this._ops.push([OP_BODY, this._body]);
  }

  get body() {
    return this._body;
  }

  /**
   * `req.body_stream = source`: a ReadableStream, an async iterable or an
   * iterable of Uint8Arrays (or strings, written as UTF-8), read when the
   * request is written (once: a stream cannot be read twice). The request
   * needs Content-Length or Transfer-Encoding: chunked, as in MRI.
   */
  set bodyStream(source) {
    if (source != null) checkSource(source);
    this._bodyStream = source == null ? null : source;
    this._body = null;
    this._form = null;
    this._ops.push([OP_BODY, null]);
  }

  get bodyStream() {
    return this._bodyStream;
  }

  // send_request_with_body_stream up to write_header: the head, and whether
  // the body is chunked.
  _streamHead(httpVersion) {
    const chunked = this.isChunked();
    if (!chunked && this.contentLength() === null)
      throw new NetHttpError('ArgumentError', "Content-Length not given and Transfer-Encoding is not `chunked'");
    // supply_default_content_type: net-http 0.6.0 (3.4) has it, 0.9.1 (4.0) not
    const n = this._ops.length;
    if (this._profile === PROFILES['3.4'] && this.contentType() === null) this._ops.push([OP_SET_RAW, 'content-type', 'application/x-www-form-urlencoded']);
    try {
      this._run(OP_EXEC, httpVersion);
    } finally {
      this._ops.length = n;
    }
    return { head: this._codec.outBytes(), chunked };
  }

  /**
   * What Net::HTTPGenericRequest#exec writes, piece by piece: the head, then
   * the body. With a bodyStream, one piece per read of at most 16 KiB
   * (IO.copy_stream's), framed as MRI's Chunker frames it when the request
   * is chunked, read from the source as the consumer asks for more: memory
   * holds one piece at a time.
   *   for await (const bytes of req.stream()) socket.write(bytes);
   */
  async *stream(httpVersion = '1.1') {
    if (this._bodyStream === null) {
      yield await this.toBytesAsync(httpVersion);
      return;
    }
    const source = this._bodyStream;
    const { head, chunked } = this._streamHead(httpVersion);
    yield head;
    for await (const piece of sourcePieces(source)) yield* framedReads(piece, chunked);
    yield* streamEnd(chunked);
  }

  // toBytes with a bodyStream: a sync iterable is read at once.
  _streamBytes(httpVersion) {
    if (!isSyncSource(this._bodyStream))
      throw new TypeError('the body stream is read asynchronously: use req.stream() or await req.toBytesAsync()');
    const { head, chunked } = this._streamHead(httpVersion);
    const parts = [head];
    for (const piece of sourcePiecesSync(this._bodyStream)) parts.push(...framedReads(piece, chunked));
    parts.push(...streamEnd(chunked));
    return concatBytes(parts);
  }

  /** Field names (downcased) and their values, as `to_hash`. */
  toHash() {
    this._run(OP_DUMP);
    const r = new OutReader(this._codec.u8, this._codec.outPtr());
    const out = {};
    for (let n = r.u32(); n > 0; n--) {
      const name = r.str();
      const vals = [];
      for (let m = r.u32(); m > 0; m--) vals.push(r.str());
      out[name] = vals;
    }
    return out;
  }

  /** The bytes `Net::HTTPGenericRequest#exec` writes. */
  toBytes(httpVersion = '1.1') {
    if (typeof httpVersion !== 'string') throw new TypeError('httpVersion must be a string');
    if (this._strict) {
      strictCheck('request target', this.path, TARGET);
      strictCheck('HTTP version', httpVersion, /^[0-9]\.[0-9]$/);
    }
    if (this._form) return this._formBytes(httpVersion);
    if (this._bodyStream) return this._streamBytes(httpVersion);
    this._run(OP_EXEC, httpVersion);
    return this._codec.outBytes();
  }
}

Object.assign(Request.prototype, headerReaders({ NetHttpError }), headerWriters({ NetHttpError, rubyNumberToString }));

function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** `URI.encode_www_form_component(str)` */
export function encodeWwwFormComponent(str, options) {
  const c = codecOf(options);
  rawStr(c, toRubyString(str, 'str'));
  c.call('nh_wasm_encode_www_form_component');
  return c.outText();
}

/** `URI.encode_www_form(params)`; with `sep`, joined as `set_form_data(params, sep)` would. */
export function encodeWwwForm(params, sep, options) {
  if (sep !== null && typeof sep === 'object' && options === undefined) {
    options = sep;
    sep = undefined;
  }
  const c = codecOf(options);
  c.begin(256);
  writePairs(c, params);
  c.call('nh_wasm_encode_www_form');
  const s = c.outText();
  if (sep === undefined || sep === '&') return s;
  if (typeof sep !== 'string') throw new TypeError('sep must be a string');
  if (!sep.includes('\\')) return s.split('&').join(sep);
  const r = new Request('POST', '/', null, { codec: c, profile: options && options.profile });
  r.setFormData(params, sep);
  const bytes = r.toBytes();
  const text = decoder.decode(bytes);
  return text.slice(text.indexOf('\r\n\r\n') + 4);
}

function rawStr(c, s) {
  c.begin(s.length * 3 + 4);
  c.strw(s);
  const n = c.pos - 4;
  c.u8.copyWithin(c.inPtr, c.inPtr + 4, c.inPtr + 4 + n);
  c.pos = n;
}

/** `URI.decode_www_form_component(str)`: a string, or with `{ encoding: 'binary' }` the raw bytes. */
export function decodeWwwFormComponent(str, options) {
  if (typeof str !== 'string') throw new TypeError('str must be a string');
  const c = codecOf(options);
  rawStr(c, str);
  c.call('nh_wasm_decode_www_form_component');
  if (options && options.encoding === 'binary') return c.outBytes();
  return c.outText();
}

/** `URI.decode_www_form(str, separator:)` → `[[key, value], ...]` */
export function decodeWwwForm(str, options) {
  if (typeof str !== 'string') throw new TypeError('str must be a string');
  const sep = options && options.separator != null ? options.separator : '&';
  if (typeof sep !== 'string') throw new TypeError('separator must be a string');
  const c = codecOf(options);
  c.begin(str.length * 3 + sep.length * 3 + 8);
  c.strw(str);
  c.strw(sep);
  c.call('nh_wasm_decode_www_form');
  const t = c.outTable();
  const out = new Array(t.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = [t[2 * i], t[2 * i + 1]];
  return out;
}

/**
 * `each_capitalized` over fields added with `add_field` in order:
 * `[[name, value], ...]` (or an object / Map; array values add each element)
 * → `[[Capitalized-Name, "v1, v2"], ...]`.
 */
export function eachCapitalized(fields, options) {
  const c = codecOf(options);
  const pid = profileId(options);
  const pairs = pairsOf(fields, 'fields');
  c.begin(pairs.length * 32 + 8);
  c.u32w(pairs.length);
  for (const pair of pairs) {
    if (!Array.isArray(pair)) throw new TypeError('fields entries must be [name, value]');
    c.strw(headerName(pair[0]));
    const vals = Array.isArray(pair[1]) ? headerValues(pair[1], []) : [pair[1] == null ? '' : toRubyString(pair[1], 'header value')];
    c.u32w(vals.length);
    for (const v of vals) c.strw(v);
  }
  c.call('nh_wasm_each_capitalized', pid);
  const t = c.outTable();
  const out = new Array(t.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = [t[2 * i], t[2 * i + 1]];
  return out;
}

/** `Net::HTTPHeader#capitalize(name)`: "content-type" → "Content-Type". */
export function capitalize(name, options) {
  const c = codecOf(options);
  const pid = profileId(options);
  rawStr(c, headerName(name));
  c.call('nh_wasm_capitalize', pid);
  return c.outText();
}

/** The request, form and header API bound to one codec (see createNetHttp in index.mjs). */
export function bindCore(source) {
  const codec = source instanceof Codec ? source : new Codec(source);
  const bind = (options) => Object.assign({}, options, { codec });
  class BoundRequest extends Request {
    constructor(method, uriOrPath, initHeader, options) {
      super(method, uriOrPath, initHeader, bind(options));
    }
  }
  return {
    codec,
    Request: BoundRequest,
    URI,
    URIReference,
    NetHttpError,
    rubyNumberToString,
    encodeWwwFormComponent: (s, o) => encodeWwwFormComponent(s, bind(o)),
    encodeWwwForm: (p, sep, o) =>
      sep !== null && typeof sep === 'object' ? encodeWwwForm(p, bind(sep)) : encodeWwwForm(p, sep, bind(o)),
    decodeWwwFormComponent: (s, o) => decodeWwwFormComponent(s, bind(o)),
    decodeWwwForm: (s, o) => decodeWwwForm(s, bind(o)),
    eachCapitalized: (f, o) => eachCapitalized(f, bind(o)),
    capitalize: (n, o) => capitalize(n, bind(o)),
  };
}
