// A fresh ruby.wasm VM without zeroing memory that is zero already.
//
// wasi-libc's mmap has no lazily-zeroed pages to give: it mallocs the
// mapping and memsets all of it, and Ruby 3.4 and later mmap ~256 MiB at
// boot (Init_default_shapes: the shape tree and its red-black cache), fiber
// pools more with each expansion. So a stock VM writes every page of that
// at boot (~0.8 s on a machine where the first touch of a page costs 3 µs)
// and keeps it resident, though Ruby touches little of it.
//
// patchRubyWasm rewrites two function bodies of a ruby.wasm module's bytes,
// and one constant, in place (each keeps its size: no section moves,
// nothing is copied):
//   memset  musl's byte and word loop → memory.fill
//   mmap    for MAP_ANONYMOUS, zeroes only the part of the mapping below the
//           memory's size before its malloc: memory that this malloc grew is
//           fresh from memory.grow, zero, and malloc writes its chunk
//           headers outside the block it returns; a MAP_STACK mapping (the
//           fiber pool's) not at all
//   growth  dlmalloc's granularity, 64 KiB → 4 MiB: malloc grows the memory
//           by at least 4 MiB at a time. V8 may follow every growth of a
//           wasm memory with a full garbage collection (each new buffer
//           counts as external memory the size of the whole memory; always
//           so under --no-incremental-marking, which Node 20 and 22 need
//           with ruby.wasm: 5-10 ms each), and a burst of allocations made
//           without a turn of the host (a hundred threads started, Ruby's
//           heap pages) grew it a page or two at a time, 37-55 collections
//           for 15 MiB (Node 20, ~400 MiB memory)
// Each is recognised by its exact code (known ruby.wasm 2.10 builds: Ruby
// 3.2 to head, with and without the standard library, debug builds too);
// anything else is left as it is. No dependency, no node: module: the same
// code runs in browsers.

import { leb, sleb, lebBytes, slebBytes, slebBytes64, hex, sha256, scanModule, sameType } from './wasm-binary.mjs';

/**
 * Patches ruby.wasm module bytes in place (a Uint8Array, Buffer or
 * ArrayBuffer: compile the same bytes afterwards); { mmap: false } leaves
 * mmap as it is, { growth: false } malloc's growth step. Returns
 * { memset, mmap, growth }: whether each was found and rewritten. Bytes
 * that are not a known ruby.wasm build (its memset), or not a wasm module,
 * are left untouched; anything but bytes is a TypeError.
 */
export function patchRubyWasm(bytes, { mmap: withMmap = true, growth: withGrowth = true } = {}) {
  let buf;
  if (bytes instanceof Uint8Array) buf = bytes;
  else if (ArrayBuffer.isView(bytes)) buf = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  else if (bytes instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && bytes instanceof SharedArrayBuffer)) buf = new Uint8Array(bytes);
  else throw new TypeError(`patchRubyWasm: bytes must be a Uint8Array, an ArrayBuffer or a view of one, not ${bytes === null ? 'null' : typeof bytes}`);
  const out = { memset: false, mmap: false, growth: false };
  let mod;
  try {
    // (the bodies of memset's sizes and of mmap's, 260 to 280 bytes)
    mod = scanModule(buf, (size) => MEMSET_SIZES.includes(size) || (size >= 260 && size <= 280));
  } catch {
    return out;
  }
  if (!mod) return out;
  const { candidates, types, funcType, nImports, code, data } = mod;
  const typeOf = (f) => types[funcType[f - nImports]];
  // memset: (i32, i32, i32) → i32, one of musl's two known bodies
  const memsets = candidates.filter((b) => MEMSET_SIZES.includes(b.size) && sameType(typeOf(b.index), [I32, I32, I32], [I32]) && MEMSET_SHA256.includes(hex(sha256(buf.subarray(b.start, b.end)))));
  if (memsets.length !== 1) return out;
  // mmap: (i32, i32, i32, i32, i32, i64) → i32, wasi-libc's, calling malloc,
  // pread and that memset
  const mmaps = [];
  for (const b of candidates) {
    if (MEMSET_SIZES.includes(b.size) || !sameType(typeOf(b.index), [I32, I32, I32, I32, I32, I64], [I32])) continue;
    const m = matchMmap(buf, b);
    if (m) mmaps.push({ ...m, body: b });
  }
  fill(buf, memsets[0], MEMSET_FILL);
  out.memset = true;
  const mmap = mmaps.length === 1 ? mmaps[0] : null;
  if (withMmap && mmap && mmap.calls[2] === memsets[0].index) {
    const [malloc, pread] = mmap.calls;
    if (malloc >= nImports && pread >= nImports && sameType(typeOf(malloc), [I32], [I32]) && sameType(typeOf(pread), [I32, I32, I32, I64], [I32])) {
      const body = mmapBody(malloc, pread, mmap.errno);
      if (body.length < mmap.body.size) { // (and the final end)
        fill(buf, mmap.body, body);
        out.mmap = true;
      }
    }
  }
  if (withGrowth) out.growth = patchGranularity(buf, code, data);
  return out;
}

// dlmalloc's malloc_params, { magic, page_size, granularity,
// mmap_threshold, trim_threshold, default_mflags }: the known builds are
// snapshots taken after malloc's first call, so the values are in a data
// segment (magic set, page_size and granularity 64 KiB, the thresholds
// MAX_SIZE_T), and init_mparams (inlined twice in dlmalloc) never runs;
// each of those ends with
//   i32.const &mmap_threshold  i64.const -1  i64.store align=4
//   i32.const &page_size  i64.const (65536 << 32 | 65536)  i64.store align=4
// which gives the struct's address. Both places are rewritten (the
// constant keeps its 8 bytes of LEB128: GRANULARITY < 8 MiB), or neither.
const GRANULARITY = 4 << 20;
const PAGE = 65536;
const INIT_STOCK = [0x42, ...slebBytes64((BigInt(PAGE) << 32n) | BigInt(PAGE)), 0x37, 0x02, 0x00];
const INIT_PATCHED = [0x42, ...slebBytes64((BigInt(GRANULARITY) << 32n) | BigInt(PAGE)), 0x37, 0x02, 0x00];
const MAX_THRESHOLDS = [0x42, 0x7f, 0x37, 0x02, 0x00];

function patchGranularity(buf, code, data) {
  if (!code || INIT_PATCHED.length !== INIT_STOCK.length) return false;
  const sites = [];
  let params = null; // &malloc_params
  for (let i = code.start; (i = find(buf, INIT_STOCK, i, code.end)) >= 0; i += INIT_STOCK.length) {
    const pageSize = constBefore(buf, i);
    const thresholds = pageSize && i - pageSize.len - 1 - MAX_THRESHOLDS.length;
    if (!pageSize || !matchAt(buf, thresholds, MAX_THRESHOLDS)) return false;
    const mmapThreshold = constBefore(buf, thresholds);
    if (!mmapThreshold || mmapThreshold.value !== pageSize.value + 8) return false;
    if (params !== null && params !== pageSize.value - 4) return false;
    params = pageSize.value - 4;
    sites.push(i);
  }
  if (params === null) return false;
  // the struct's initial bytes, where a data segment holds them
  let at = -1;
  for (const seg of data) {
    if (params < seg.offset || params + 20 > seg.offset + seg.size) continue;
    at = seg.start + (params - seg.offset);
    const word = (k) => (buf[at + k] | (buf[at + k + 1] << 8) | (buf[at + k + 2] << 16) | (buf[at + k + 3] << 24)) >>> 0;
    if (word(0) === 0 || word(4) !== PAGE || word(8) !== PAGE || word(12) !== 0xffffffff || word(16) !== 0xffffffff) return false;
  }
  for (const i of sites) buf.set(INIT_PATCHED, i);
  if (at >= 0) buf.set([GRANULARITY & 0xff, (GRANULARITY >>> 8) & 0xff, (GRANULARITY >>> 16) & 0xff, GRANULARITY >>> 24], at + 8);
  return true;
}

// The i32.const (1 to 5 bytes of LEB128) that ends right before `end`:
// { value, len } (len counts the LEB128 bytes), or null.
function constBefore(buf, end) {
  for (let k = 1; k <= 5; k++) {
    if (buf[end - k - 1] !== 0x41) continue;
    const r = { p: end - k };
    const value = sleb(buf, r);
    if (r.p === end) return { value, len: k };
  }
  return null;
}

// The first place of `pat` in buf[from, to), or -1 (Horspool: the code
// section is tens of MiB).
function find(buf, pat, from, to) {
  // (searched by its first 8 bytes, which end in a byte rarer than 0)
  const m = Math.min(pat.length, 8);
  const shift = new Uint8Array(256).fill(m);
  for (let j = 0; j < m - 1; j++) shift[pat[j]] = m - 1 - j;
  const last = pat[m - 1];
  for (let i = from; i + pat.length <= to; i += shift[buf[i + m - 1]]) {
    if (buf[i + m - 1] === last && matchAt(buf, i, pat)) return i;
  }
  return -1;
}

function matchAt(buf, at, bytes) {
  if (!(at >= 0)) return false;
  for (let j = 0; j < bytes.length; j++) if (buf[at + j] !== bytes[j]) return false;
  return true;
}

const I32 = 0x7f;
const I64 = 0x7e;

// musl's memset as ruby.wasm's builds compile it (release; debug)
const MEMSET_SIZES = [408, 414];
const MEMSET_SHA256 = [
  '32a340076e6db01fc1662a9c8640682097564c2d57cae4ec07aa06332ff173f0',
  '3c16272f2af4efab09d18561c1b831686e1600f622b0eecd8f16d7a8d6c61b1d',
];

// memset(dst, c, n) = dst, as memory.fill (which takes c's low byte);
// nothing at all for n = 0 (memory.fill would check dst's bounds)
const MEMSET_FILL = [
  0x00, // no locals
  0x20, 0x02, 0x04, 0x40, // if n
  0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfc, 0x0b, 0x00, // memory.fill dst c n
  0x0b,
  0x20, 0x00, // dst
];

// wasi-libc's mmap in every known build (ruby.wasm 2.10, Ruby 3.2 to head),
// with its call targets and errno's address taken out: the sha-256 of its
// instructions as canon() writes them
const MMAP_SHA256 = ['744ee1583fb361f7f107861471f4e4e4fba02e10d479d3ca4484ac0bdc812b49'];
const MMAP_FLAGS_MASK = 1327360; // the MAP_ flags it refuses, besides MAP_FIXED
const MAP_STACK = 0x20000;
const FENCE = 1 << 16; // reserveBeside's fence between its block and the top chunk

// Reads mmap's instructions: call targets and errno's address (an i32.const
// of 2^20 or more other than the flags mask, the same each time) are taken
// out of what is hashed. Returns { calls, errno } if it is the known mmap.
function matchMmap(buf, b) {
  const canon = [];
  const calls = [];
  let errno = null;
  const r = { p: b.start };
  const u = () => leb(buf, r);
  const s = () => sleb(buf, r);
  const nLocals = u();
  for (let i = 0; i < nLocals; i++) {
    canon.push(0xff, u() & 0xff, buf[r.p++]);
  }
  while (r.p < b.end) {
    const op = buf[r.p++];
    canon.push(op);
    switch (op) {
      case 0x02: case 0x03: case 0x04: // block, loop, if: empty type only
        if (buf[r.p++] !== 0x40) return null;
        break;
      case 0x0b: case 0x0f: case 0x1a: case 0x1b: case 0x45: case 0x46: case 0x47: case 0x48: case 0x49:
      case 0x6a: case 0x6b: case 0x71: case 0x7c: case 0xad:
        break;
      case 0x0c: case 0x0d: case 0x20: case 0x21: case 0x22:
        canon.push(u() & 0xff);
        break;
      case 0x10:
        calls.push(u());
        break;
      case 0x41: {
        const v = s();
        if (v >= 1 << 20 && v !== MMAP_FLAGS_MASK) {
          if (errno !== null && errno !== v) return null;
          errno = v;
        } else {
          canon.push(v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff);
        }
        break;
      }
      case 0x28: case 0x36: case 0x37: // i32.load, i32.store, i64.store
        canon.push(u() & 0xff, u() & 0xff);
        break;
      default:
        return null;
    }
  }
  if (r.p !== b.end || calls.length !== 3 || errno === null) return null;
  if (!MMAP_SHA256.includes(hex(sha256(Uint8Array.from(canon))))) return null;
  return { calls, errno };
}

// mmap(addr, length, prot, flags, fd, offset), as wasi-libc's (same checks,
// same errno values, same header before the block), except that an
// anonymous mapping is zeroed only below the memory's size before malloc
// (local 6) when malloc grew the memory, and not at all for MAP_STACK:
// Ruby's fiber pool maps its stacks so, and hands a stack back out with
// what the last fiber left in it (for WASI its stack_free does nothing;
// natively MADV_FREE keeps the pages as they were until the kernel takes
// them): so the pages a fiber never reaches are never written. Locals:
// 0 addr (then the header, then the block), 1 length, 2 prot, 3 flags,
// 4 fd, 5 offset. (Exported for its tests: the body of a function of type
// (i32, i32, i32, i32, i32, i64) → i32, without the final end, calling
// malloc and pread by those indices, errno at that address.)
export function mmapBody(malloc, pread, errno) {
  const E = [0x41, ...slebBytes(errno)];
  return [
    0x01, 0x01, I32, // local 6: the memory's size (pages) before malloc
    0x02, 0x40, // block $einval
    0x20, 0x03, 0x41, ...slebBytes(MMAP_FLAGS_MASK | 0x10), 0x71, 0x0d, 0x00, // those and MAP_FIXED
    0x20, 0x03, 0x41, 0x03, 0x71, 0x41, 0x01, 0x6b, 0x41, 0x02, 0x4f, 0x0d, 0x00, // not MAP_PRIVATE or MAP_SHARED alone
    0x20, 0x02, 0x41, 0x04, 0x71, 0x20, 0x02, 0x45, 0x72, 0x0d, 0x00, // PROT_EXEC, PROT_NONE
    0x20, 0x01, 0x45, 0x0d, 0x00, // length 0
    0x02, 0x40, // block $enomem
    0x20, 0x01, 0x41, 0x18, 0x6a, 0x22, 0x00, 0x20, 0x01, 0x49, 0x0d, 0x00, // length + header overflows
    0x3f, 0x00, 0x21, 0x06,
    0x20, 0x00, 0x10, ...lebBytes(malloc), 0x22, 0x00, 0x45, 0x0d, 0x00,
    0x20, 0x00, 0x20, 0x01, 0x36, 0x02, 0x10, // length
    0x20, 0x00, 0x20, 0x05, 0x37, 0x03, 0x08, // offset
    0x20, 0x00, 0x20, 0x03, 0x36, 0x02, 0x04, // flags
    0x20, 0x00, 0x20, 0x02, 0x36, 0x02, 0x00, // prot
    0x20, 0x00, 0x41, 0x18, 0x6a, 0x21, 0x00, // the block, after the header
    0x20, 0x03, 0x41, 0x20, 0x71, 0x04, 0x40, // MAP_ANONYMOUS
    0x20, 0x00, 0x41, 0x00,
    // room = (old size << 16) - block; n = min(room, length) if malloc grew the memory, else length
    0x20, 0x06, 0x41, 0x10, 0x74, 0x20, 0x00, 0x6b, 0x22, 0x02,
    0x20, 0x01, 0x20, 0x02, 0x20, 0x01, 0x49, 0x1b,
    0x20, 0x01, 0x3f, 0x00, 0x20, 0x06, 0x47, 0x1b,
    0x20, 0x03, 0x41, ...slebBytes(MAP_STACK), 0x71, 0x45, 0x6c, // none for a stack
    0xfc, 0x0b, 0x00,
    0x05,
    // a file's contents: pread until length bytes are read or the file ends
    0x20, 0x00, 0x21, 0x02,
    0x03, 0x40, // loop
    0x02, 0x40, // block $again
    0x20, 0x04, 0x20, 0x02, 0x20, 0x01, 0x20, 0x05, 0x10, ...lebBytes(pread), 0x22, 0x03, 0x41, 0x00, 0x48,
    0x04, 0x40, // failed: again on EINTR
    ...E, 0x28, 0x02, 0x00, 0x41, 0x1b, 0x46, 0x0d, 0x01,
    0x41, 0x7f, 0x0f,
    0x0b,
    0x20, 0x03, 0x45, 0x04, 0x40, 0x20, 0x00, 0x0f, 0x0b, // end of file
    0x20, 0x02, 0x20, 0x03, 0x6a, 0x21, 0x02,
    0x20, 0x01, 0x20, 0x03, 0x6b, 0x21, 0x01,
    0x20, 0x03, 0xad, 0x20, 0x05, 0x7c, 0x21, 0x05,
    0x0b,
    0x20, 0x01, 0x0d, 0x00,
    0x0b,
    0x0b,
    0x20, 0x00, 0x0f,
    0x0b,
    ...E, 0x41, 0x30, 0x36, 0x02, 0x00, 0x41, 0x7f, 0x0f, // ENOMEM
    0x0b,
    ...E, 0x41, 0x1c, 0x36, 0x02, 0x00, 0x41, 0x7f, // EINVAL
  ];
}

// Writes code over a function body (its locals and instructions, without
// the final end), nop-padded to the body's size.
function fill(buf, b, code) {
  buf.set(code, b.start);
  buf.fill(0x01, b.start + code.length, b.end - 1);
  buf[b.end - 1] = 0x0b;
}

// What reserveBeside gives a patched VM's boot (its allocations other than
// mmaps: ~3 MiB); createRubyVM gives its reserve after the boot.
export const BOOT_BESIDE = 8 << 20;

/**
 * Gives malloc `bytes` of a VM's memory before Ruby starts (given the
 * instance's exports, as reserveMalloc in install.mjs), as a free block
 * that is not malloc's top chunk: the block and a fence after it taken
 * at once (the memory grows once), the fence made its own small block
 * out of the block's tail, then the block given back. Ruby's small
 * allocations come from it; a request larger than it (the mmaps of the
 * shape tree and the fiber pool) grows the memory, so that a patched mmap
 * need not zero it. (The top chunk's free memory would serve those mmaps,
 * and be zeroed.) false when there was no memory to give (a memory at its
 * maximum).
 */
export function reserveBeside(exports, bytes) {
  const realloc = exports && exports.cabi_realloc;
  if (typeof realloc !== 'function' || !(bytes > 0)) return false;
  const n = Math.floor(bytes);
  const whole = n + FENCE + 64;
  // (ruby.wasm's cabi_realloc traps when malloc has no memory to give,
  // leaving malloc as it was: then nothing is reserved, or p alone, given
  // back below)
  let p;
  try {
    p = realloc(0, 0, 8, whole);
  } catch {
    return false;
  }
  realloc(p, whole, 8, n); // (shrunk where it is: its tail back to the top chunk)
  try {
    // (from the tail, unless a free block of its size comes first: then p
    // joins the top chunk, and still serves small allocations)
    const q = realloc(0, 0, 8, FENCE);
    realloc(q, FENCE, 8, 8); // 8 bytes kept between the block and the top
  } catch {
    // (p then joins the top chunk)
  }
  realloc(p, n, 8, 8);
  return true;
}
