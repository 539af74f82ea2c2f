// patchRubyWasm (js/ruby/module-patch.mjs) on every installed ruby.wasm
// build: memset and mmap found and rewritten in place, and malloc's growth
// step, the module still valid; anything else left as it was. (What the patched VMs do:
// tests/rubywasm/boot.test.mjs.)
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { patchRubyWasm } from '../../js/ruby/node.mjs';
import { mmapBody } from '../../js/ruby/module-patch.mjs';
import { sha256, lebBytes } from '../../js/ruby/wasm-binary.mjs';

const require = createRequire(import.meta.url);
const VERSIONS = ['3.2', '3.3', '3.4', '4.0', 'head'];
const BUILDS = ['ruby.wasm', 'ruby+stdlib.wasm', 'ruby.debug+stdlib.wasm'];

function pkgFile(version, file) {
  try {
    return require.resolve(`@ruby/${version}-wasm-wasi/dist/${file}`);
  } catch {
    return null;
  }
}

// The code section's bodies that differ between two versions of a module:
// [byte offset, length] of each changed run.
function changedRuns(a, b) {
  const runs = [];
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    const start = i;
    while (i < a.length && a[i] !== b[i]) i++;
    runs.push([start, i - start]);
  }
  return runs;
}

test('every installed ruby.wasm build: memset, mmap and the growth step rewritten in place, the module valid, twice does nothing', () => {
  let seen = 0;
  for (const version of VERSIONS) {
    for (const file of BUILDS) {
      const path = pkgFile(version, file);
      if (!path) continue;
      seen++;
      const stock = readFileSync(path);
      const bytes = Buffer.from(stock);
      assert.deepEqual(patchRubyWasm(bytes), { memset: true, mmap: true, growth: true }, `${version} ${file}`);
      assert.equal(bytes.length, stock.length);
      // the growth step: malloc_params' granularity, 64 KiB → 4 MiB, in its
      // data segment (one byte of the little-endian word) and in the two
      // inlined init_mparams (the high word of an i64.const: two bytes of
      // its LEB128 each)
      const bodies = Buffer.from(stock);
      assert.deepEqual(patchRubyWasm(bodies, { growth: false }), { memset: true, mmap: true, growth: false });
      const growth = changedRuns(bodies, bytes);
      assert.deepEqual(growth.map(([, n]) => n).sort(), [1, 2, 2], `${version} ${file}: ${JSON.stringify(growth)}`);
      const data = growth.find(([, n]) => n === 1)[0];
      assert.deepEqual([...stock.subarray(data - 10, data + 10)].slice(4, 20), [0, 0, 1, 0, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], `${version} ${file}: page_size, granularity, the thresholds`);
      assert.deepEqual([...bytes.subarray(data - 2, data + 2)], [0, 0, 0x40, 0]);
      for (const [at] of growth.filter(([, n]) => n === 2)) {
        assert.deepEqual([...stock.subarray(at - 7, at + 4)], [0x42, 0x80, 0x80, 0x84, 0x80, 0x80, 0x80, 0xc0, 0x00, 0x37, 0x02]);
        assert.deepEqual([...bytes.subarray(at - 7, at + 4)], [0x42, 0x80, 0x80, 0x84, 0x80, 0x80, 0x80, 0x80, 0x20, 0x37, 0x02]);
      }
      // besides, two function bodies changed, nothing else: the runs of changed
      // bytes lie within at most two spans of less than 420 bytes
      const runs = changedRuns(stock, bodies);
      const spans = [];
      for (const [at, n] of runs) {
        const last = spans[spans.length - 1];
        if (last && at - (last[0] + last[1]) < 420) last[1] = at + n - last[0];
        else spans.push([at, n]);
      }
      assert.ok(spans.length <= 2 && spans.every(([, n]) => n <= 420), `${version} ${file}: ${JSON.stringify(spans)}`);
      assert.ok(WebAssembly.validate(bytes), `${version} ${file} validates`);
      // a patched module is not a known build any more
      const again = Buffer.from(bytes);
      assert.deepEqual(patchRubyWasm(again), { memset: false, mmap: false, growth: false });
      assert.ok(again.equals(bytes));
      // memset only
      const only = Buffer.from(stock);
      assert.deepEqual(patchRubyWasm(only, { mmap: false, growth: false }), { memset: true, mmap: false, growth: false });
      assert.ok(WebAssembly.validate(only));
      assert.equal(changedRuns(stock, only).length > 0, true);
    }
  }
  assert.ok(seen >= 10, `ruby.wasm builds found: ${seen}`);
});

test('an ArrayBuffer or a view of a larger buffer is patched where it lies', () => {
  const stock = readFileSync(pkgFile('4.0', 'ruby.wasm'));
  const ab = new Uint8Array(stock).buffer;
  assert.deepEqual(patchRubyWasm(ab), { memset: true, mmap: true, growth: true });
  const padded = new Uint8Array(stock.length + 16);
  padded.set(stock, 8);
  const view = new DataView(padded.buffer, 8, stock.length);
  assert.deepEqual(patchRubyWasm(view), { memset: true, mmap: true, growth: true });
  assert.deepEqual(new Uint8Array(padded.buffer, 8, stock.length), new Uint8Array(ab));
  assert.deepEqual([...padded.subarray(0, 8), ...padded.subarray(8 + stock.length)], new Array(16).fill(0));
});

test('bytes that are not a known ruby.wasm build are left as they are', () => {
  const cases = {
    'the codec module': readFileSync(new URL('../../wasm/nethttp.wasm', import.meta.url)),
    'empty': new Uint8Array(0),
    'text': Buffer.from('not a wasm module at all'),
    'a truncated ruby.wasm': readFileSync(pkgFile('4.0', 'ruby.wasm')).subarray(0, 5_000_000),
    'a wasm header only': Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0),
  };
  for (const [what, bytes] of Object.entries(cases)) {
    const copy = Buffer.from(bytes);
    assert.deepEqual(patchRubyWasm(copy), { memset: false, mmap: false, growth: false }, what);
    assert.ok(copy.equals(Buffer.from(bytes)), what);
  }
  for (const bad of ['ruby.wasm', null, 42, [0, 0x61, 0x73, 0x6d]]) {
    assert.throws(() => patchRubyWasm(bad), { name: 'TypeError', message: /^patchRubyWasm: bytes must be a Uint8Array, an ArrayBuffer or a view of one, not (string|null|number|object)$/ });
  }
  // one byte changed in memset's body: neither is patched (mmap's rewrite
  // stands on the memset it calls)
  const stock = readFileSync(pkgFile('4.0', 'ruby.wasm'));
  const memsetOnly = Buffer.from(stock);
  patchRubyWasm(memsetOnly, { mmap: false, growth: false });
  const at = changedRuns(stock, memsetOnly)[0][0] + 20;
  const bent = Buffer.from(stock);
  bent[at] ^= 1;
  const before = Buffer.from(bent);
  assert.deepEqual(patchRubyWasm(bent), { memset: false, mmap: false, growth: false });
  assert.ok(bent.equals(before));
});

// A module of the patched mmap alone: malloc and pread are the host's
// (imports 0 and 1), errno at ERRNO of the imported memory.
const ERRNO = 16;
function mmapModule(host) {
  const vec = (items) => [...lebBytes(items.length), ...items.flat()];
  const section = (id, bytes) => [id, ...lebBytes(bytes.length), ...bytes];
  const name = (s) => vec([...Buffer.from(s)]);
  const I32 = 0x7f;
  const I64 = 0x7e;
  const code = [...mmapBody(0, 1, ERRNO), 0x0b];
  const bytes = Uint8Array.from([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec([[0x60, 1, I32, 1, I32], [0x60, 4, I32, I32, I32, I64, 1, I32], [0x60, 6, I32, I32, I32, I32, I32, I64, 1, I32]])),
    ...section(2, vec([[...name('h'), ...name('malloc'), 0, 0], [...name('h'), ...name('pread'), 0, 1], [...name('h'), ...name('memory'), 2, 0, 1]])),
    ...section(3, vec([[2]])),
    ...section(7, vec([[...name('mmap'), 0, 2]])),
    ...section(10, vec([[...lebBytes(code.length), ...code]])),
  ]);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes), { h: host }).exports.mmap;
}

test("the patched mmap: wasi-libc's checks, header and errors; an anonymous mapping zeroed where the memory held bytes before, a MAP_STACK one left as it is", () => {
  const PAGE = 65536;
  const MAP_PRIVATE = 2;
  const MAP_ANONYMOUS = 0x20;
  const MAP_STACK = 0x20000;
  const PROT_RW = 3;
  const memory = new WebAssembly.Memory({ initial: 2 });
  let next = 1024; // malloc's answer; a growth by `grow` pages first
  let grow = 0;
  const reads = [];
  const mmap = mmapModule({
    memory,
    malloc(n) {
      if (grow) memory.grow(grow);
      const p = next;
      next += n;
      return p;
    },
    pread(fd, dst, n, offset) {
      reads.push([fd, n, offset]);
      const m = Math.min(n, 100);
      new Uint8Array(memory.buffer, dst, m).fill(fd);
      return m;
    },
  });
  const mem = () => new Uint8Array(memory.buffer);
  const dirty = () => mem().fill(0xaa, 1024, 2 * PAGE);
  const header = (block) => {
    const v = new DataView(memory.buffer, block - 24, 24);
    return { prot: v.getInt32(0, true), flags: v.getInt32(4, true), offset: v.getBigInt64(8, true), length: v.getInt32(16, true) };
  };

  // anonymous, over bytes malloc had handed out before: all zeroed
  dirty();
  let block = mmap(0, 4000, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0n);
  assert.equal(block, 1024 + 24);
  assert.deepEqual(header(block), { prot: PROT_RW, flags: MAP_PRIVATE | MAP_ANONYMOUS, offset: 0n, length: 4000 });
  assert.ok(mem().subarray(block, block + 4000).every((b) => b === 0));
  assert.equal(mem()[block + 4000], 0xaa);

  // MAP_STACK: the same header, the bytes left as they were
  next = 1024;
  dirty();
  block = mmap(0, 4000, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0n);
  assert.equal(block, 1024 + 24);
  assert.deepEqual(header(block), { prot: PROT_RW, flags: MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, offset: 0n, length: 4000 });
  assert.ok(mem().subarray(block, block + 4000).every((b) => b === 0xaa));

  // malloc grew the memory: zeroed up to the old end (past it, the memory
  // is fresh from the growth)
  next = 2 * PAGE - 1000;
  grow = 1;
  dirty();
  block = mmap(0, 5000, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0n);
  grow = 0;
  assert.equal(memory.buffer.byteLength, 3 * PAGE);
  assert.ok(mem().subarray(block, 2 * PAGE).every((b) => b === 0));

  // a file: pread until the length is read, at the offsets asked
  next = 1024;
  block = mmap(0, 250, 1, MAP_PRIVATE, 7, 40n);
  assert.deepEqual(reads, [[7, 250, 40n], [7, 150, 140n], [7, 50, 240n]]);
  assert.ok(mem().subarray(block, block + 250).every((b) => b === 7));

  // refused: EINVAL (28) for MAP_FIXED, no MAP_PRIVATE/MAP_SHARED, PROT_NONE,
  // PROT_EXEC, a length of 0; ENOMEM (48) when malloc has nothing
  const errno = () => new DataView(memory.buffer).getInt32(ERRNO, true);
  for (const [prot, flags, length] of [[PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS | 0x10, 10], [PROT_RW, MAP_ANONYMOUS, 10], [0, MAP_PRIVATE | MAP_ANONYMOUS, 10], [7, MAP_PRIVATE | MAP_ANONYMOUS, 10], [PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS, 0]]) {
    new DataView(memory.buffer).setInt32(ERRNO, 0, true);
    assert.equal(mmap(0, length, prot, flags, -1, 0n), -1, `prot ${prot} flags ${flags} length ${length}`);
    assert.equal(errno(), 28);
  }
  next = 0;
  assert.equal(mmap(0, 10, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0n), -1);
  assert.equal(errno(), 48);
  assert.equal(mmap(0, -8, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0n), -1); // length + header overflows
  assert.equal(errno(), 48);
});

test('sha256 agrees with node:crypto', () => {
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 408, 414, 1000]) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    assert.equal(Buffer.from(sha256(data)).toString('hex'), createHash('sha256').update(data).digest('hex'), `${n} bytes`);
  }
});
