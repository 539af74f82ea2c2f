// The few pieces of the WebAssembly binary format and of SHA-256 that
// patchRubyWasm (module-patch.mjs) reads and writes a module's code with:
// LEB128 integers, the sections it looks into, and the digest that
// recognises a function body. Plain
// JS, no node: module (crypto.subtle is asynchronous, and the patch runs
// in browsers too).

export function leb(buf, r) {
  let v = 0;
  let shift = 0;
  let b;
  do {
    b = buf[r.p++];
    v += (b & 0x7f) * 2 ** shift;
    shift += 7;
  } while (b & 0x80 && shift < 35);
  return v;
}

export function sleb(buf, r) {
  let v = 0;
  let shift = 0;
  let b;
  do {
    b = buf[r.p++];
    v |= (b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80 && shift < 35);
  if (shift < 32 && b & 0x40) v |= -1 << shift;
  return v | 0;
}

export function lebBytes(v) {
  const o = [];
  do {
    let x = v & 0x7f;
    v >>>= 7;
    if (v) x |= 0x80;
    o.push(x);
  } while (v);
  return o;
}

export function slebBytes(v) {
  const o = [];
  for (;;) {
    const x = v & 0x7f;
    v >>= 7;
    if ((v === 0 && !(x & 0x40)) || (v === -1 && x & 0x40)) {
      o.push(x);
      return o;
    }
    o.push(x | 0x80);
  }
}

export function hex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

// SHA-256 (FIPS 180-4), for the few short bodies compared here.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

export function sha256(data) {
  const n = data.length;
  const padded = new Uint8Array(((n + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[n] = 0x80;
  const dv = new DataView(padded.buffer);
  dv.setUint32(padded.length - 8, Math.floor(n / 0x20000000));
  dv.setUint32(padded.length - 4, (n << 3) >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rot = (x, k) => (x >>> k) | (x << (32 - k));
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      w[i] = w[i - 16] + (rot(a, 7) ^ rot(a, 18) ^ (a >>> 3)) + w[i - 7] + (rot(b, 17) ^ rot(b, 19) ^ (b >>> 10));
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setUint32(i * 4, h[i]);
  return out;
}

/** A signed LEB128 of a BigInt (an i64.const). */
export function slebBytes64(v) {
  const o = [];
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    if ((v === 0n && !(b & 0x40)) || (v === -1n && b & 0x40)) {
      o.push(b);
      return o;
    }
    o.push(b | 0x80);
  }
}

/**
 * What patchRubyWasm reads of a module: its function types, each defined
 * function's type, the code section's place, its data segments (active, at
 * a constant offset), and the places of the code bodies whose size
 * wanted(size) takes ({ index, start, size, end }); null if these bytes are
 * not a wasm module.
 */
export function scanModule(buf, wanted) {
  if (buf.length < 8 || buf[0] !== 0 || buf[1] !== 0x61 || buf[2] !== 0x73 || buf[3] !== 0x6d || buf[4] !== 1) return null;
  const r = { p: 8 };
  const u = () => leb(buf, r);
  const types = [];
  let funcType = null;
  let nImports = 0;
  let candidates = null;
  let code = null;
  const data = []; // active segments at a constant offset: { offset, start, size }
  while (r.p < buf.length) {
    const id = buf[r.p++];
    const size = u();
    const end = r.p + size;
    if (end > buf.length) return null;
    if (id === 1) {
      for (let n = u(), i = 0; i < n; i++) {
        if (buf[r.p++] !== 0x60) return null;
        const params = [];
        for (let k = u(); k > 0; k--) params.push(buf[r.p++]);
        const results = [];
        for (let k = u(); k > 0; k--) results.push(buf[r.p++]);
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = u(), i = 0; i < n; i++) {
        for (let k = 0; k < 2; k++) {
          const len = u(); // module and field names
          r.p += len;
        }
        const kind = buf[r.p++];
        if (kind === 0) {
          u();
          nImports++;
        } else if (kind === 1 || kind === 2) {
          if (kind === 1) r.p++; // reftype
          const limits = buf[r.p++];
          u();
          if (limits & 1) u();
        } else if (kind === 3) r.p += 2;
        else if (kind === 4) {
          r.p++;
          u();
        } else return null;
      }
    } else if (id === 3) {
      const n = u();
      funcType = new Uint32Array(n);
      let p = r.p;
      for (let i = 0; i < n; i++) {
        let t = buf[p++];
        if (t & 0x80) {
          t &= 0x7f;
          let shift = 7;
          let b;
          do {
            b = buf[p++];
            t += (b & 0x7f) * 2 ** shift;
            shift += 7;
          } while (b & 0x80 && shift < 35);
        }
        funcType[i] = t;
      }
    } else if (id === 10) {
      code = { start: r.p, end };
      candidates = [];
      const n = u();
      if (!funcType || n !== funcType.length) return null;
      // (a hot loop over ~18,000 bodies: LEB sizes read inline)
      let p = r.p;
      for (let i = 0; i < n; i++) {
        let sz = buf[p++];
        if (sz & 0x80) {
          sz &= 0x7f;
          let shift = 7;
          let b;
          do {
            b = buf[p++];
            sz += (b & 0x7f) * 2 ** shift;
            shift += 7;
          } while (b & 0x80 && shift < 35);
        }
        if (wanted(sz)) candidates.push({ index: i + nImports, start: p, size: sz, end: p + sz });
        p += sz;
      }
      if (p !== end) return null;
    } else if (id === 11) {
      for (let n = u(), i = 0; i < n; i++) {
        const flags = u();
        let offset = null;
        if (flags === 0 || flags === 2) {
          if (flags === 2) u();
          if (buf[r.p] === 0x41 && buf[r.p + 1] !== undefined) {
            r.p++;
            offset = sleb(buf, r) >>> 0;
            if (buf[r.p++] !== 0x0b) offset = null;
          }
          if (offset === null) while (r.p < end && buf[r.p++] !== 0x0b); // another constant expression
        } else if (flags !== 1) return null;
        const size = u();
        if (offset !== null) data.push({ offset, start: r.p, size });
        r.p += size;
      }
    }
    r.p = end;
  }
  if (!candidates) return null;
  return { types, funcType, nImports, candidates, code, data };
}

/** Whether function type t takes params and returns results (value type bytes). */
export function sameType(t, params, results) {
  return !!t && t.params.length === params.length && t.results.length === results.length && t.params.every((v, i) => v === params[i]) && t.results.every((v, i) => v === results[i]);
}
