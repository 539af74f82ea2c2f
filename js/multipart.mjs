// The body Net::HTTPGenericRequest#encode_multipart_form_data writes for
// req.set_form(params, 'multipart/form-data', { boundary:, charset: }).
//
// Values, as Ruby would see them: a string is a Ruby String (UTF-8); a
// Uint8Array is an IO over those bytes (a StringIO: read, size); a Blob read
// into { bytes, name } is a File (its name is the default filename, as
// File#to_path gives it). Bytes read from an IO are binary (ASCII-8BIT)
// strings, and MRI appends String values and IO contents to one UTF-8
// buffer, so a binary value with bytes >= 0x80 after non-ASCII text raises
// Encoding::CompatibilityError there: so does this.

const MP_ENCODER = new TextEncoder();
const MP_UTF8 = 'UTF-8';
const MP_BINARY = 'BINARY (ASCII-8BIT)';

class MpError extends Error {
  constructor(rubyClass, message) {
    super(message);
    this.rubyClass = rubyClass;
  }
}

// A piece of a Ruby string: bytes, its encoding, whether any byte >= 0x80.
function mpPiece(bytes, enc) {
  let high = false;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0x80) { high = true; break; }
  return { bytes, enc, high };
}
const mpText = (s) => mpPiece(MP_ENCODER.encode(s), MP_UTF8);

// Encodings Ruby can transcode a key or filename to (str.encode(charset,
// fallback: ->(c) { '&#%d;' % c.ord })): the code point limit of each.
const MP_CHARSETS = { 'UTF-8': [MP_UTF8, Infinity], 'US-ASCII': ['US-ASCII', 0x7f], ASCII: ['US-ASCII', 0x7f],
  'ISO-8859-1': ['ISO-8859-1', 0xff], 'ISO8859-1': ['ISO-8859-1', 0xff] };

// quote_string(str, charset): str.gsub(/[\\"]/, '\\\\\&') after the encoding
// (and head's CR/LF check, by crlf)
function mpQuote(str, charset, crlf) {
  const q = (s) => s.replace(/[\\"]/g, '\\$&');
  const cs = charset == null ? null : MP_CHARSETS[String(charset).toUpperCase()];
  if (charset != null && !cs) throw new MpError('NetHttpWasm::UnsupportedError', `charset ${charset} is not supported (UTF-8, US-ASCII, ISO-8859-1 are)`);
  crlf(str, 'multipart field name or filename');
  if (charset == null) return mpText(q(str));
  const [enc, max] = cs;
  if (enc === MP_UTF8) return mpText(q(str));
  const out = [];
  for (const ch of q(str)) {
    const c = ch.codePointAt(0);
    if (c <= max) out.push(c);
    else for (const b of MP_ENCODER.encode(`&#${c};`)) out.push(b);
  }
  return mpPiece(Uint8Array.from(out), enc);
}

// "a#{b}c": the encoding of an interpolation of pieces (ASCII-only pieces
// take any encoding), or Encoding::CompatibilityError.
function mpJoin(pieces) {
  let enc = null;
  for (const p of pieces) {
    if (!p.high) continue;
    if (enc === null) enc = p.enc;
    else if (enc !== p.enc) throw new MpError('Encoding::CompatibilityError', `incompatible character encodings: ${enc} and ${p.enc}`);
  }
  const n = pieces.reduce((a, p) => a + p.bytes.length, 0);
  const bytes = new Uint8Array(n);
  let o = 0;
  for (const p of pieces) {
    bytes.set(p.bytes, o);
    o += p.bytes.length;
  }
  return { bytes, enc: enc || MP_UTF8, high: enc !== null };
}

// File.basename
function mpBasename(path) {
  const s = path.replace(/\/+$/, '');
  if (s === '' && path !== '') return '/';
  return s.slice(s.lastIndexOf('/') + 1);
}

/** A random boundary as SecureRandom.urlsafe_base64(40) makes one. */
export function randomBoundary() {
  const b = new Uint8Array(40);
  globalThis.crypto.getRandomValues(b);
  let bin = '';
  for (const x of b) bin += String.fromCharCode(x);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A form value that is a Blob (File) not yet read. */
export function isBlob(v) {
  return typeof Blob === 'function' && v instanceof Blob;
}

/**
 * The multipart body for params [[key, value, { filename, contentType }], ...]
 * with `boundary`, `charset` and, when the request is chunked, MRI's chunk
 * framing (flush_buffer and the IO parts as chunks of their own).
 * Throws { rubyClass, message } errors as MRI raises them.
 */
export function multipartBody(params, { boundary, charset, chunked, checkCrLf }) {
  // head's encode_multipart_form_data refuses CR/LF in the boundary, a
  // key, a filename and a content type (checkCrLf); 4.0's writes them
  const crlf = (s, what) => {
    if (checkCrLf && /[\r\n]/.test(s)) throw new MpError('ArgumentError', `${what} cannot include CR/LF`);
  };
  crlf(String(boundary), 'multipart boundary');
  const out = [];
  let buf = [];
  const hex = (n) => MP_ENCODER.encode(`${n.toString(16)}\r\n`);
  const CRLF = MP_ENCODER.encode('\r\n');
  // buf << piece
  let bufEnc = null;
  const append = (p) => {
    if (p.high) {
      if (bufEnc === null) bufEnc = p.enc;
      else if (bufEnc !== p.enc) throw new MpError('Encoding::CompatibilityError', `incompatible character encodings: ${bufEnc} and ${p.enc}`);
    }
    buf.push(p.bytes);
  };
  const flush = () => {
    const n = buf.reduce((a, b) => a + b.length, 0);
    if (chunked) out.push(hex(n));
    out.push(...buf);
    if (chunked) out.push(CRLF);
    buf = [];
    bufEnc = null;
  };
  const b = mpText(String(boundary));
  for (const entry of params) {
    const [rawKey, value, h = {}] = entry;
    if (typeof rawKey !== 'string') throw new TypeError('form keys must be strings');
    const isIO = value instanceof Uint8Array || (value && typeof value === 'object' && value.bytes instanceof Uint8Array);
    if (!isIO && typeof value !== 'string') throw new TypeError('form values must be strings, Uint8Arrays or Blobs');
    const bytes = isIO ? (value instanceof Uint8Array ? value : value.bytes) : null;
    const key = mpQuote(rawKey, charset, crlf);
    let filename = null;
    if (h && Object.prototype.hasOwnProperty.call(h, 'filename')) filename = h.filename;
    else if (isIO && typeof value.name === 'string') filename = mpBasename(value.name);
    append(mpJoin([mpText('--'), b, mpText('\r\n')]));
    if (filename != null && filename !== false) {
      const fn = mpQuote(String(filename), charset, crlf);
      const typeText = h && h.contentType ? String(h.contentType) : 'application/octet-stream';
      crlf(typeText, 'field content type');
      const type = mpText(typeText);
      append(mpJoin([mpText('Content-Disposition: form-data; name="'), key, mpText('"; filename="'), fn,
        mpText('"\r\nContent-Type: '), type, mpText('\r\n\r\n')]));
      if (!isIO) append(mpText(value));
      else {
        // the IO is copied to the output as it is, after the buffer
        flush();
        if (chunked) out.push(hex(bytes.length));
        out.push(bytes);
        if (chunked) out.push(CRLF);
      }
    } else {
      append(mpJoin([mpText('Content-Disposition: form-data; name="'), key, mpText('"\r\n\r\n')]));
      append(isIO ? mpPiece(bytes, MP_BINARY) : mpText(value));
    }
    append(mpText('\r\n'));
  }
  append(mpJoin([mpText('--'), b, mpText('--\r\n')]));
  flush();
  if (chunked) out.push(MP_ENCODER.encode('0\r\n\r\n'));
  const n = out.reduce((a, x) => a + x.length, 0);
  const body = new Uint8Array(n);
  let o = 0;
  for (const x of out) {
    body.set(x, o);
    o += x.length;
  }
  return body;
}
