// The WebAssembly module and the packaging around it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { builds } from '../support/builds.mjs';
import * as esm from '../../js/index.mjs';

const root = new URL('../../', import.meta.url);

test('both builds import nothing and export memory, an allocator and the entry points', () => {
  for (const b of builds) {
    const mod = new WebAssembly.Module(readFileSync(new URL(b.file, root)));
    assert.deepEqual(WebAssembly.Module.imports(mod), [], b.name);
    const names = WebAssembly.Module.exports(mod).map((e) => e.name);
    for (const n of ['memory', 'nh_alloc', 'nh_free', 'nh_ctx_new', 'nh_wasm_request', 'nh_wasm_encode_www_form',
      'nh_wasm_decode_www_form', 'nh_wasm_each_capitalized'])
      assert.ok(names.includes(n), `${b.name} exports ${n}`);
  }
});

test('the embedded bytes are wasm/nethttp.wasm', () => {
  const shipped = readFileSync(new URL('wasm/nethttp.wasm', root));
  assert.deepEqual(Buffer.from(esm.wasmBytes()), shipped);
  assert.equal(esm.wasmSha256, createHash('sha256').update(shipped).digest('hex'));
});

test('CommonJS entry exposes the same API and produces the same bytes', () => {
  const cjs = createRequire(import.meta.url)('../../js/index.cjs');
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort(), 'index.cjs and index.mjs export the same names');
  const make = (m) => {
    const r = new m.Request('POST', m.URI('http://h/p'), { 'X-A': '1' });
    r.setFormData({ a: 'b c' });
    return Buffer.from(r.toBytes()).toString('latin1');
  };
  assert.equal(make(cjs), make(esm));
  assert.ok(cjs.NetHttpError.prototype instanceof Error);
});

test('index.d.ts declares exactly the values the entry points export', () => {
  const file = fileURLToPath(new URL('../../js/index.d.ts', import.meta.url));
  const program = ts.createProgram([file], { noEmit: true });
  const checker = program.getTypeChecker();
  const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)));
  const values = exported.filter((s) => s.flags & ts.SymbolFlags.Value).map((s) => s.name);
  assert.deepEqual(values.sort(), Object.keys(esm).sort());
});

test('init() compiles asynchronously and keeps the API working', async () => {
  await esm.init();
  assert.equal(esm.encodeWwwFormComponent('a b~'), 'a+b%7E');
  await esm.init(await WebAssembly.compile(esm.wasmBytes()));
  assert.equal(esm.capitalize('x-y'), 'X-Y');
});

test('an error leaves the instance usable and memory does not grow with repeated work', () => {
  for (const { name, api } of builds) {
    const run = () => {
      const r = new api.Request('PUT', api.URI('https://example.com:8443/a?b=c'), { Accept: 'x' });
      r.set('x-list', ['1', '2']);
      r.setFormData([['k', 'v'], ['n', null]]);
      r.toBytes();
      assert.throws(() => new api.Request('GET', api.URI('http://exa mple/')), api.NetHttpError);
      assert.throws(() => api.decodeWwwFormComponent('%'), api.NetHttpError);
      api.decodeWwwForm('a=1&b=2');
      api.eachCapitalized([['a-b', 'c']]);
    };
    for (let i = 0; i < 2000; i++) run();
    const before = api.codec.memorySize();
    for (let i = 0; i < 20000; i++) run();
    assert.equal(api.codec.memorySize(), before, `${name}: memory grew`);
  }
});

test('a large body grows the buffers and still round-trips', () => {
  for (const { api } of builds) {
    const body = new Uint8Array(5 << 20).map((_, i) => i & 255);
    const r = new api.Request('POST', '/upload');
    r.body = body;
    const out = r.toBytes();
    assert.deepEqual(out.subarray(out.length - body.length), body);
    assert.match(Buffer.from(out.subarray(0, 200)).toString('latin1'), /Content-Length: 5242880\r\n/);
  }
});

test('a trap inside the module leaves the instance and the API working', () => {
  for (const { name, api } of builds) {
    const ok = () => {
      assert.equal(api.encodeWwwFormComponent('a b'), 'a+b', name);
      assert.equal(Buffer.from(api.parseResponse(new TextEncoder().encode('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')).body).toString(), 'ok');
      const p = new api.ResponseParser();
      assert.equal(p.feed(new TextEncoder().encode('HTTP/1.1 204 No Content\r\n\r\n'))[0].type, 'head');
      p.close();
    };
    ok();
    // a parser address far outside memory: the module traps on its first read
    const c = api.codec;
    c.begin(0);
    assert.throws(() => c.x.nh_wasm_resp_feed(c.ctx, 0, 0xfffffff0, 0), WebAssembly.RuntimeError);
    ok();
    // a trap with a large input written (memory grown for it)
    const before = c.memorySize();
    const big = new Uint8Array(before + (1 << 20));
    c.begin(big.length);
    c.u8.set(big, c.inPtr);
    assert.throws(() => c.x.nh_wasm_resp_feed(c.ctx, 0, 0xfffffff0, 0), WebAssembly.RuntimeError);
    assert.ok(c.memorySize() > before);
    ok();
  }
});
