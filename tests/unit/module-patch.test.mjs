// patchRubyWasm (js/ruby/module-patch.mjs) on every installed ruby.wasm
// build: memset and mmap found and rewritten in place, the module still
// valid; anything else left as it was. (What the patched VMs do:
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

test('every installed ruby.wasm build: memset and mmap rewritten in place, the module valid, twice does nothing', () => {
  let seen = 0;
  for (const version of VERSIONS) {
    for (const file of BUILDS) {
      const path = pkgFile(version, file);
      if (!path) continue;
      seen++;
      const stock = readFileSync(path);
      const bytes = Buffer.from(stock);
      assert.deepEqual(patchRubyWasm(bytes), { memset: true, mmap: true }, `${version} ${file}`);
      assert.equal(bytes.length, stock.length);
      // two function bodies changed, nothing else: the runs of changed bytes lie
      // within at most two spans of less than 420 bytes
      const runs = changedRuns(stock, bytes);
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
      assert.deepEqual(patchRubyWasm(again), { memset: false, mmap: false });
      assert.ok(again.equals(bytes));
      // memset only
      const only = Buffer.from(stock);
      assert.deepEqual(patchRubyWasm(only, { mmap: false }), { memset: true, mmap: false });
      assert.ok(WebAssembly.validate(only));
      assert.equal(changedRuns(stock, only).length > 0, true);
    }
  }
  assert.ok(seen >= 10, `ruby.wasm builds found: ${seen}`);
});

test('an ArrayBuffer or a view of a larger buffer is patched where it lies', () => {
  const stock = readFileSync(pkgFile('4.0', 'ruby.wasm'));
  const ab = new Uint8Array(stock).buffer;
  assert.deepEqual(patchRubyWasm(ab), { memset: true, mmap: true });
  const padded = new Uint8Array(stock.length + 16);
  padded.set(stock, 8);
  const view = new DataView(padded.buffer, 8, stock.length);
  assert.deepEqual(patchRubyWasm(view), { memset: true, mmap: true });
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
    assert.deepEqual(patchRubyWasm(copy), { memset: false, mmap: false }, what);
    assert.ok(copy.equals(Buffer.from(bytes)), what);
  }
  for (const bad of ['ruby.wasm', null, 42, [0, 0x61, 0x73, 0x6d]]) {
    assert.throws(() => patchRubyWasm(bad), { name: 'TypeError', message: /^patchRubyWasm: bytes must be a Uint8Array, an ArrayBuffer or a view of one, not (string|null|number|object)$/ });
  }
  // one byte changed in memset's body: neither is patched (mmap's rewrite
  // stands on the memset it calls)
  const stock = readFileSync(pkgFile('4.0', 'ruby.wasm'));
  const memsetOnly = Buffer.from(stock);
  patchRubyWasm(memsetOnly, { mmap: false });
  const at = changedRuns(stock, memsetOnly)[0][0] + 20;
  const bent = Buffer.from(stock);
  bent[at] ^= 1;
  const before = Buffer.from(bent);
  assert.deepEqual(patchRubyWasm(bent), { memset: false, mmap: false });
  assert.ok(bent.equals(before));
});

test('sha256 agrees with node:crypto', () => {
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 408, 414, 1000]) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    assert.equal(Buffer.from(sha256(data)).toString('hex'), createHash('sha256').update(data).digest('hex'), `${n} bytes`);
  }
});
