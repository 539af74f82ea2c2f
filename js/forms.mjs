// URI.encode_www_form & co, Net::HTTPHeader#capitalize / each_capitalized,
// and Ruby's to_s of the values JS code passes.
import { NetHttpError } from './errors.mjs';
import { codecOf, decoder, profileId } from './core.mjs';
import { Request } from './request.mjs';

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
export function toRubyString(v, what) {
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

export function pairsOf(params, what) {
  if (params == null) throw new TypeError(`${what} must be an array of pairs, an object or a Map`);
  if (Array.isArray(params)) return params;
  if (params instanceof Map || (typeof params === 'object' && typeof params[Symbol.iterator] === 'function'))
    return Array.from(params);
  if (typeof params === 'object') return Object.entries(params);
  throw new TypeError(`${what} must be an array of pairs, an object or a Map`);
}

// ---- form pairs ----
export function writePairs(c, params) {
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

// Flattens a header value into the strings Net::HTTPHeader stores; with
// crlf, refuses CR and LF in them as 4.0's net-http does (head's checks
// each value's length first: the module does both).
export function headerValues(v, out, crlf = true) {
  if (Array.isArray(v)) {
    for (const x of v) headerValues(x, out, crlf);
  } else {
    const s = v == null ? '' : toRubyString(v, 'header value');
    if (crlf && (s.includes('\r') || s.includes('\n')))
      throw new NetHttpError('ArgumentError', 'header field value cannot include CR/LF');
    out.push(s);
  }
  return out;
}

export function headerName(key) {
  if (typeof key !== 'string') throw new TypeError('header name must be a string');
  return key;
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
