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
import { sha256 } from '../../js/ruby/wasm-binary.mjs';

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

test('sha256 agrees with node:crypto', () => {
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 408, 414, 1000]) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    assert.equal(Buffer.from(sha256(data)).toString('hex'), createHash('sha256').update(data).digest('hex'), `${n} bytes`);
  }
});
