// Net::HTTPHeader's helpers for Request and Response: the typed readers
// (range, contentLength, contentType, ...) run in the codec
// (src/header_fields.c); the writers that only format numbers and strings
// (basic_auth, set_range, set_content_type, content_length=) are here.
//
// A class gets them with Object.assign(prototype, headerReaders(deps)) and
// provides _query(kind, arg) → { tag, parts }; Request also gets
// headerWriters(deps) and provides _setRaw(downcasedKey, value) and
// _deleteRaw(downcasedKey) (header.rb writes @header directly there).
import * as S from './schema.mjs';

/** Query kinds (HQ_* in schema/codec.mjs). */
export const HQ = Object.freeze({
  RANGE: S.HQ_RANGE, CONTENT_RANGE: S.HQ_CONTENT_RANGE, CONTENT_LENGTH: S.HQ_CONTENT_LENGTH, CHUNKED: S.HQ_CHUNKED,
  CONTENT_TYPE: S.HQ_CONTENT_TYPE, MAIN_TYPE: S.HQ_MAIN_TYPE, SUB_TYPE: S.HQ_SUB_TYPE, TYPE_PARAMS: S.HQ_TYPE_PARAMS,
  CONNECTION_CLOSE: S.HQ_CONNECTION_CLOSE, KEEP_ALIVE: S.HQ_KEEP_ALIVE, FETCH: S.HQ_FETCH, GET_FIELDS: S.HQ_GET_FIELDS,
});

/** An Integer's decimal digits as a number, or a BigInt beyond 2^53. */
export function integerOf(s) {
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : BigInt(s);
}

// A null-prototype object from pairs (a "__proto__" key is defined, not assigned).
function hhHashOf(pairs) {
  const h = {};
  for (const [k, v] of pairs) Object.defineProperty(h, k, { value: v, writable: true, enumerable: true, configurable: true });
  return Object.setPrototypeOf(h, null);
}

/** The readers shared by Request and Response. */
export function headerReaders({ NetHttpError }) {
  return {
    /** `range`: [[begin, end], ...] (end -1: to the last byte; a negative begin: a suffix), or null. */
    range() {
      const { tag, parts } = this._query(HQ.RANGE);
      if (!tag) return null;
      const out = [];
      for (let i = 0; i < parts.length; i += 2) out.push([integerOf(parts[i]), integerOf(parts[i + 1])]);
      return out;
    },
    /** `content_range`: [first, last], or null. */
    contentRange() {
      const { tag, parts } = this._query(HQ.CONTENT_RANGE);
      return tag ? [integerOf(parts[0]), integerOf(parts[1])] : null;
    },
    /** `range_length`: last - first + 1 of contentRange(), or null. */
    rangeLength() {
      const { tag, parts } = this._query(HQ.CONTENT_RANGE);
      return tag ? integerOf(String(BigInt(parts[1]) - BigInt(parts[0]) + 1n)) : null;
    },
    /** `content_length`: a number (a BigInt beyond 2^53), or null. */
    contentLength() {
      const { tag, parts } = this._query(HQ.CONTENT_LENGTH);
      return tag ? integerOf(parts[0]) : null;
    },
    /** `chunked?` */
    isChunked() {
      return this._query(HQ.CHUNKED).tag === 1;
    },
    /** `content_type`: "main/sub", or null. */
    contentType() {
      const { tag, parts } = this._query(HQ.CONTENT_TYPE);
      return tag ? parts[0] : null;
    },
    /** `main_type` */
    mainType() {
      const { tag, parts } = this._query(HQ.MAIN_TYPE);
      return tag ? parts[0] : null;
    },
    /** `sub_type` */
    subType() {
      const { tag, parts } = this._query(HQ.SUB_TYPE);
      return tag ? parts[0] : null;
    },
    /** `type_params`: { name: value } (null prototype, MRI's order). */
    typeParams() {
      const { parts } = this._query(HQ.TYPE_PARAMS);
      const pairs = [];
      for (let i = 0; i < parts.length; i += 2) pairs.push([parts[i], parts[i + 1]]);
      return hhHashOf(pairs);
    },
    /** `connection_close?` */
    isConnectionClose() {
      return this._query(HQ.CONNECTION_CLOSE).tag === 1;
    },
    /** `connection_keep_alive?` */
    isConnectionKeepAlive() {
      return this._query(HQ.KEEP_ALIVE).tag === 1;
    },
    /** `get_fields(name)`: a fresh array of the values, or null. */
    getFields(name) {
      if (typeof name !== 'string') throw new TypeError('header name must be a string');
      const { tag, parts } = this._query(HQ.GET_FIELDS, name);
      return tag ? parts : null;
    },
    /**
     * `fetch(name)`, `fetch(name, default)`, `fetch(name) { |key| ... }`:
     * the joined value; else the default, or what `block(downcasedName)`
     * returns (an array is joined with ", " as MRI does); else KeyError.
     * A function as the second argument is the block.
     */
    fetch(name, ...rest) {
      if (typeof name !== 'string') throw new TypeError('header name must be a string');
      const { tag, parts } = this._query(HQ.FETCH, name);
      if (tag) return parts[0];
      let a;
      if (rest.length && typeof rest[0] === 'function') a = rest[0](parts[0]);
      else if (rest.length) a = rest[0];
      else throw new NetHttpError('KeyError', parts[1]);
      return Array.isArray(a) ? a.map((x) => (x == null ? '' : String(x))).join(', ') : a;
    },
  };
}

// ---- Ruby numbers, as the writers compute with them ----
// An Integer is { i: BigInt }, a Float { f: number } (a JS number with an
// integral value is an Integer, as everywhere in this package).
function hhNum(v, what) {
  if (typeof v === 'bigint') return { i: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { i: BigInt(v) } : { f: v };
  throw new TypeError(`${what} must be a number or a BigInt`);
}
const hhIsF = (a) => a.f !== undefined;
const hhFv = (a) => (hhIsF(a) ? a.f : Number(a.i));
const hhAdd = (a, b) => (hhIsF(a) || hhIsF(b) ? { f: hhFv(a) + hhFv(b) } : { i: a.i + b.i });
const hhNeg = (a) => (hhIsF(a) ? { f: -a.f } : { i: -a.i });
// a <=> b for Integer/Float (exact, as Ruby compares them); NaN compares as null
function hhCmp(a, b) {
  if (!hhIsF(a) && !hhIsF(b)) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  const x = hhIsF(a) ? a.f : a.i;
  const y = hhIsF(b) ? b.f : b.i;
  if (Number.isNaN(x) || Number.isNaN(y)) return null;
  return x < y ? -1 : x > y ? 1 : 0;
}
const HH_ZERO = { i: 0n };
const HH_MINUS_ONE = { i: -1n };

/** The writers of Request: they set @header[...] as header.rb does. */
export function headerWriters({ NetHttpError, rubyNumberToString }) {
  const toS = (a) => (hhIsF(a) ? rubyNumberToString(a.f) : a.i.toString());
  // Float#to_i
  const toI = (a) => {
    if (!hhIsF(a)) return a;
    if (!Number.isFinite(a.f)) throw new NetHttpError('FloatDomainError', rubyNumberToString(a.f));
    return { i: BigInt(Math.trunc(a.f)) };
  };
  // "#{x}" of a value JS code passes for a Ruby object
  const interp = (v, what) => {
    if (v == null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'bigint') return rubyNumberToString(v);
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    throw new TypeError(`${what} must be a string, number, boolean or null`);
  };
  const utf8 = new TextEncoder();
  const base64 = (s) => {
    const b = utf8.encode(s);
    let bin = '';
    for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
    return btoa(bin);
  };
  const basicEncode = (account, password) =>
    `Basic ${base64(`${interp(account, 'account')}:${interp(password, 'password')}`)}`;
  // String#to_i: optional whitespace and sign, then digits (single
  // underscores between them), else 0
  const strToI = (s) => {
    const m = /^[\t\n\v\f\r ]*([+-]?)((?:[0-9]+_?)*)/.exec(s);
    const digits = m[2].replace(/_+$/, '').replace(/_/g, '');
    if (!digits) return 0n;
    const v = BigInt(digits);
    return m[1] === '-' ? -v : v;
  };
  const syntax = (msg) => new NetHttpError('Net::HTTPHeaderSyntaxError', msg);

  return {
    /** `basic_auth(account, password)` */
    basicAuth(account, password) {
      this._setRaw('authorization', basicEncode(account, password));
      return this;
    },
    /** `proxy_basic_auth(account, password)` */
    proxyBasicAuth(account, password) {
      this._setRaw('proxy-authorization', basicEncode(account, password));
      return this;
    },
    /**
     * `set_range` / `range=`: setRange(n) (the first n bytes, or the last -n),
     * setRange(start, length), setRange({ begin, end, excludeEnd }) (a Ruby
     * Range; begin or end null for a beginless or endless one), setRange(null).
     */
    setRange(r, e) {
      if (r == null || r === false) {
        this._deleteRaw('range');
        return this;
      }
      let first;
      let last;
      let exclude;
      if (e != null && e !== false) {
        // r = (r...r+e)
        const a = hhNum(r, 'range start');
        first = a;
        last = hhAdd(a, hhNum(e, 'range length'));
        exclude = true;
        if (hhCmp(first, last) === null) throw new NetHttpError('ArgumentError', 'bad value for range');
      } else if (typeof r === 'number' || typeof r === 'bigint') {
        const n = toI(hhNum(r));
        const rangestr = n.i > 0n ? `0-${n.i - 1n}` : `-${-n.i}`;
        this._setRaw('range', `bytes=${rangestr}`);
        return this;
      } else if (typeof r === 'object' && ('begin' in r || 'end' in r)) {
        first = r.begin == null ? null : hhNum(r.begin, 'range begin');
        last = r.end == null ? null : hhNum(r.end, 'range end');
        exclude = !!r.excludeEnd;
        if (first && last && hhCmp(first, last) === null) throw new NetHttpError('ArgumentError', 'bad value for range');
      } else {
        throw new NetHttpError('TypeError', 'Range/Integer is required');
      }
      if (first === null) throw new NetHttpError('RangeError', 'cannot get the first element of beginless range');
      if (last === null) {
        if (exclude) throw new NetHttpError('NoMethodError', "undefined method '-' for nil");
      } else if (exclude) {
        last = hhAdd(last, HH_MINUS_ONE);
      }
      let rangestr;
      if (last !== null && hhCmp(last, HH_MINUS_ONE) === 0) {
        rangestr = hhCmp(first, HH_ZERO) > 0 ? `${toS(first)}-` : `-${toS(hhNeg(first))}`;
      } else {
        if (hhCmp(first, HH_ZERO) < 0) throw syntax('range.first is negative');
        if (last === null) throw new NetHttpError('NoMethodError', "undefined method '<' for nil");
        if (hhCmp(last, HH_ZERO) < 0) throw syntax('range.last is negative');
        if (hhCmp(first, last) > 0) throw syntax('must be .first < .last');
        rangestr = `${toS(first)}-${toS(last)}`;
      }
      this._setRaw('range', `bytes=${rangestr}`);
      return this;
    },
    /** `set_content_type(type, params)` / `content_type=`: params an object, Map or pairs. */
    setContentType(type, params) {
      if (typeof type !== 'string') throw new TypeError('type must be a string');
      let s = type;
      if (params != null) {
        const pairs = Array.isArray(params) ? params : params instanceof Map ? [...params] : Object.entries(params);
        for (const [k, v] of new Map(pairs)) s += `; ${interp(k, 'parameter name')}=${interp(v, 'parameter value')}`;
      }
      // head's set_content_type is set_field('Content-Type', ...), which
      // checks the value; 4.0's writes @header['content-type'] as it is
      if (this._profile === S.PROFILES.head) return this.set('Content-Type', s);
      this._setRaw('content-type', s);
      return this;
    },
    /** `content_length = len` (null deletes; a string is read as String#to_i). */
    setContentLength(len) {
      if (len == null || len === false) {
        this._deleteRaw('content-length');
        return this;
      }
      let n;
      if (typeof len === 'string') n = strToI(len);
      else n = toI(hhNum(len, 'content length')).i;
      this._setRaw('content-length', n.toString());
      return this;
    },
  };
}
