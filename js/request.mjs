// Net::HTTPGenericRequest and URI(): the JS Request keeps the log of the
// calls made on it (the request record, wasm/request_record.c) and replays it
// in the module for each result.
import { NetHttpError } from './errors.mjs';
import { OutReader, codecOf, decodeUtf8, profileId } from './core.mjs';
import { encodeWwwForm, headerName, headerValues, pairsOf, rubyNumberToString, toRubyString, writePairs } from './forms.mjs';
import { headerReaders, headerWriters } from './header-helpers.mjs';
import { isBlob, multipartBody, randomBoundary } from './multipart.mjs';
import { requestToFetch } from './fetch.mjs';
import { checkSource, framedReads, isSyncSource, sourcePieces, sourcePiecesSync, streamEnd } from './body-stream.mjs';
import { HEAD_FIELD_MAX, HEAD_KEY_MAX, OP_ADD, OP_BODY, OP_DELETE, OP_DUMP, OP_END, OP_EXEC, OP_EXEC_STREAM, OP_FORM, OP_GET, OP_QUERY, OP_SET, OP_SET_RAW, PROFILES } from './schema.mjs';

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
// The bytes head's validate_field_name refuses in a name
const NAME_CTL = /[\x00-\x1f\x7f:]/;

// Whether head's set_field / add_field could refuse name or values: a
// string of n UTF-16 units takes at most 3n bytes in UTF-8.
function headRisk(name, values) {
  if (name.length * 3 > HEAD_KEY_MAX || NAME_CTL.test(name)) return true;
  return values.some((v) => v.length * 3 > HEAD_FIELD_MAX || CRLF.test(v));
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
        if (k.length > 1024 || NON_ASCII.test(k) || NAME_CTL.test(k)) return false;
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
    if (final === OP_EXEC || final === OP_EXEC_STREAM || final === OP_GET) c.strw(arg);
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
    else this._store(OP_SET, name, value);
    if (name.length === 15 && name.toLowerCase() === 'accept-encoding') this.decodeContent = false;
    else if (NON_ASCII.test(name)) this._run(OP_END);
    return this;
  }

  // []= and add_field: the values checked as the profile's net-http checks
  // them, here or (head's name and length checks) in the module at once.
  _store(op, name, value) {
    const head = this._profile === PROFILES.head;
    const values = headerValues(value, [], !head);
    if (this._strict) this._strictField(name, values);
    this._ops.push([op, name, values]);
    if (head && headRisk(name, values)) {
      try {
        this._run(OP_END);
      } catch (e) {
        this._ops.pop();
        throw e;
      }
    }
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
    this._store(OP_ADD, name, value);
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
      const type = `${ct}; boundary=${boundary}`;
      // set_content_type(content_type, boundary:): head's checks the value
      // (set_field) before the body is made
      const head = this._profile === PROFILES.head;
      extra = [head ? [OP_SET, 'Content-Type', [type]] : [OP_SET_RAW, 'content-type', type]];
      if (head) {
        this._ops.push(extra[0]);
        try {
          this._run(OP_END);
        } finally {
          this._ops.pop();
        }
      }
      const chunked = this.isChunked();
      for (const p of list) if (isBlob(p[1])) throw new TypeError('a Blob value must be read first: use await req.toBytesAsync()');
      try {
        body = multipartBody(list, { boundary, charset: opts.charset, chunked, checkCrLf: head });
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
    this._run(OP_EXEC_STREAM, httpVersion);
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
