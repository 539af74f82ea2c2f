// The WebAssembly module's instance and the calls into it: the only place
// that knows the module's memory layout (the call context: output buffer at
// offset 0, error class at offset 12; input records written into the
// context's input buffer), with one call() and one mapping of a status to an
// exception. Inputs are written as UTF-8 records straight into wasm memory,
// results are read as views over it and copied out once.
import { NetHttpError } from './errors.mjs';
import { CLASS_NAMES, ERROR as NH_ERROR, NOMEM as NH_NOMEM, PROFILES } from './schema.mjs';

export function profileId(options) {
  const p = options == null || options.profile == null ? '4.0' : options.profile;
  const id = PROFILES[p];
  if (id === undefined) throw new TypeError(`profile must be ${Object.keys(PROFILES).map((k) => `'${k}'`).join(', ')}, not ${String(p)}`);
  return id;
}

const encoder = new TextEncoder();
export const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

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
    this.u8 = null;
    this.u32 = null;
    this.refresh();
    this.inPtr = 0;
    this.inCap = 0;
    this.pos = 0;
  }

  // Growing the memory detaches its old ArrayBuffer, whose views then read
  // as empty: that is asked first (memory.buffer is a call into the host).
  refresh() {
    if (this.u8 !== null && this.u8.length !== 0) return;
    this.buffer = this.memory.buffer;
    this.u8 = new Uint8Array(this.buffer);
    this.u32 = new Uint32Array(this.buffer);
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
export class OutReader {
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

export function codecOf(options) {
  return (options && options.codec) || getDefault();
}
