// The head of a response as Ruby reads it (NetHttpWasm::BufferedIO#build_response,
// ruby/net_http_wasm/buffered_io.rb): a flags byte, then "\n"-separated text
// Ruby splits once, built from the codec's head block (Response#_head,
// js/response.mjs).
import { H_VERSION, H_MESSAGE, H_INFLATE, H_DROP_ENCODING, H_EXTRAS } from './constants.mjs';
import { keepBody } from '../response.mjs';

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);
const NL = 10;

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
  byte(v) {
    this.grow(1);
    this.u8[this.n++] = v;
  }
  // the bytes written but the last "\n" (Ruby's split then gives each line
  // and nothing after), copied out (a small record into a shared slab: an
  // ArrayBuffer per record costs more than building it), and the builder
  // emptied for the next record
  take() {
    const n = this.n > 0 && this.u8[this.n - 1] === NL ? this.n - 1 : this.n;
    this.n = 0;
    return keepBody(this.u8.buffer, 0, n);
  }
}

// The builder of head records (one at a time; made by the first).
let builder = null;

function rd32(u8, p) {
  return (u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24)) >>> 0;
}

// The codec's head block (Response#_head in js/response.mjs): u8 flags, four
// length-prefixed strings (class name, version, code, message), u32 field
// count, then per field a u8 name id, its name and u32 value count and
// values, all length-prefixed (u32 LE). Returns [[start, end] of the 4 strings, fields as
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
    if (p + 5 > u8.length) return null;
    const nl = rd32(u8, p + 1);
    const ns = p + 5;
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

// flags byte, then version \n code \n message \n fields (writeBlockFields;
// with H_EXTRAS their count first). flags: H_VERSION, H_MESSAGE, H_EXTRAS,
// and what Net::HTTPResponse#inflater will do for decode_content
// (H_INFLATE, H_DROP_ENCODING: the codec's head flags, decided with the
// parser's decodeContent). No line holds a "\n": the codec read them line
// by line.
// Returns { payload, inflate, inflated, block } (inflate: the fields will
// change by 'end'; inflated: the body is inflated (H_INFLATE); block: read
// from the head block, not through the public API).
export function headRecord(res, decode) {
  const u8 = res._asRead || res._head;
  const scan = scanBlock(u8);
  const b = builder || (builder = new Bytes(1024));
  let flags = (res.httpVersion != null ? H_VERSION : 0) | (res.message != null ? H_MESSAGE : 0);
  if (scan) {
    const [s, fields] = scan;
    const extras = blockExtras(fields);
    flags |= (u8[0] & (H_INFLATE | H_DROP_ENCODING)) | (extras ? H_EXTRAS : 0);
    b.byte(flags);
    b.range(u8, s[2], s[3]);
    b.range(u8, s[4], s[5]);
    b.range(u8, s[6], s[7]);
    writeBlockFields(b, u8, fields, extras, extras > 0);
  } else {
    const fields = res.rawHeaderEntries();
    const extras = entryExtras(fields);
    if (u8 instanceof Uint8Array && u8.length) flags |= u8[0] & (H_INFLATE | H_DROP_ENCODING);
    if (extras) flags |= H_EXTRAS;
    b.byte(flags);
    b.text(res.httpVersion == null ? '' : res.httpVersion);
    b.text(res.code);
    const mb = res.messageBytes;
    b.bytes(mb == null ? EMPTY : mb);
    writeFields(b, fields, extras, extras > 0);
  }
  return { payload: b.take(), inflate: (flags & (H_INFLATE | H_DROP_ENCODING)) !== 0, inflated: (flags & H_INFLATE) !== 0, block: scan != null };
}

// The fields after decoding (an R_END record): their count, then as
// writeBlockFields.
export function fieldsRecord(res) {
  const b = builder || (builder = new Bytes(1024));
  const scan = scanBlock(res._head);
  if (scan) writeBlockFields(b, res._head, scan[1], blockExtras(scan[1]), true);
  else {
    const fields = res.rawHeaderEntries();
    writeFields(b, fields, entryExtras(fields), true);
  }
  return b.take();
}

function blockExtras(fields) {
  let extras = 0;
  for (let i = 2; i < fields.length; i += 3) extras += (fields[i].length >> 1) - 1;
  return extras;
}

function entryExtras(fields) {
  let extras = 0;
  for (const [, values] of fields) extras += values.length - 1;
  return extras;
}

// The fields, laid out so that Ruby builds its hash with a few calls:
// (count \n when asked) names... \n first values... \n then (field index \n
// value) for each value after a field's first (Set-Cookie twice, ...).
// Without the count, Ruby takes it from the number of lines.
function writeBlockFields(b, u8, fields, extras, count) {
  if (count) b.int(fields.length / 3);
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

function writeFields(b, fields, extras, count) {
  if (count) b.int(fields.length);
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

export function sameFields(a, b) {
  if (!b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!sameBytes(a[i][0], b[i][0]) || a[i][1].length !== b[i][1].length) return false;
    for (let k = 0; k < a[i][1].length; k++) if (!sameBytes(a[i][1][k], b[i][1][k])) return false;
  }
  return true;
}
