// vm.evalAsync on a VM Net::HTTP is installed in runs the code through
// NetHttpWasm.__eval_async (js/ruby/rubywasm-internals.mjs evaluator): what
// it gives and raises is what ruby.wasm's own evalAsync gives and raises,
// and a call keeps nothing (ruby.wasm 2.10's own keeps 4 Ruby objects and
// ~2 KB of JS heap a call, for good).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { evaluator } from '../../js/ruby/rubywasm-internals.mjs';
import { bootVM, VERSIONS } from '../support/rubywasm.mjs';

// [code, what both evalAsync give: its value's to_s, or the first line of the error]
const CASES = [
  ['1 + 2', '3'],
  ['"h\u00e9llo " * 2', 'h\u00e9llo h\u00e9llo '],
  ['nil', ''],
  ['[1, "a", :b].inspect', '[1, "a", :b]'],
  ['__FILE__', 'eval_async'],
  ['self.to_s', 'main'],
  // each call's code runs in a fiber of its own
  ['Thread.current[:nhw_count] = (Thread.current[:nhw_count] || 0) + 1', '1'],
  ['Thread.current[:nhw_count] = (Thread.current[:nhw_count] || 0) + 1', '1'],
  // at the top level: a local of one call is there in the next
  ['nhw_local = 5', '5'],
  ['nhw_local * 2', '10'],
  ['JS.global[:Promise].call(:resolve, 7).await.to_i + 1', '8'],
  ["x = 1\n\ny = 2\nx + y", '3'],
  ['raise ArgumentError, "boom"', "eval_async:1:in '<main>': boom (ArgumentError)"],
  ['nhw_no_such_method', null],
  ['1 +', null],
];

const firstLine = (s) => String(s).split('\n')[0];

async function outcome(vm, code) {
  try {
    return { value: (await vm.evalAsync(code)).toString() };
  } catch (e) {
    return { error: firstLine(e.message), class: e.constructor };
  }
}

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: vm.evalAsync gives and raises what ruby.wasm's own does, its errors of ruby.wasm's RbError`, async () => {
    const plain = await bootVM(version);
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    for (const [code, expected] of CASES) {
      const mine = await outcome(vm, code);
      const theirs = await outcome(plain, code);
      assert.deepEqual(mine, theirs, code);
      if (expected === null) assert.ok(mine.error, `${code}: an error`);
      else if (mine.error) assert.equal(mine.error.replace(/`<main>'/, "'<main>'"), expected, code);
      else assert.equal(mine.value, expected, code);
    }
    // (the same class as vm.eval's errors)
    let evalError = null;
    try {
      vm.eval('raise "x"');
    } catch (e) {
      evalError = e;
    }
    const rejected = await outcome(vm, 'raise "x"');
    assert.equal(rejected.class, evalError.constructor);
    // an exception that is not a StandardError rejects too
    assert.match((await outcome(vm, 'raise Exception, "not standard"')).error, /not standard \(Exception\)/);
    await handle.uninstall();
  });
}

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: vm.evalAsync calls in flight at once settle each with its own value, a Net::HTTP request among them`, async () => {
    const server = http.createServer((req, res) => setTimeout(() => res.end(`got ${req.url}`), 30));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address();
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    try {
      const got = await Promise.all([
        vm.evalAsync('sleep 0.05; :first'),
        vm.evalAsync(`require 'net/http'; Net::HTTP.get(URI('http://127.0.0.1:${port}/second'))`),
        vm.evalAsync(':third'),
        vm.evalAsync('sleep 0.01; raise IOError, "fourth"').catch((e) => firstLine(e.message)),
      ]);
      assert.deepEqual(got.slice(0, 3).map(String), ['first', 'got /second', 'third']);
      assert.match(got[3], /^eval_async:1:in .<main>': fourth \(IOError\)$/);
    } finally {
      await handle.uninstall();
      server.close();
    }
  });
}

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: 3,000 vm.evalAsync calls keep no Ruby object (ruby.wasm's own keeps 4 a call)`, async () => {
    const live = (vm) => Number(vm.eval('GC.start; GC.stat(:heap_live_slots)').toString());
    const kept = async (vm, n) => {
      for (let i = 0; i < 200; i++) await vm.evalAsync('nil');
      const before = live(vm);
      for (let i = 0; i < n; i++) await vm.evalAsync('nil');
      return (live(vm) - before) / n;
    };
    const plain = await bootVM(version);
    assert.ok((await kept(plain, 500)) >= 1, "ruby.wasm's own evalAsync keeps objects (this test measures what it should)");
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    const perCall = await kept(vm, 3000);
    assert.ok(perCall < 0.05, `${perCall} Ruby objects kept a call`);
    await handle.uninstall();
  });
}

test(`ruby.wasm ${VERSIONS[0]}: vm.evalAsync from a JS function Ruby calls is ruby.wasm's own, which refuses it`, async () => {
  const nested = async (target) => {
    let inner = null;
    globalThis.nhwNested = () => {
      inner = target.evalAsync('40 + 2').then(String, (e) => e.message);
    };
    try {
      await target.evalAsync('JS.global.call(:nhwNested); nil').catch(() => {});
    } finally {
      delete globalThis.nhwNested;
    }
    return inner;
  };
  const vm = await bootVM(VERSIONS[0]);
  const handle = installNetHttp(vm);
  const plain = await bootVM(VERSIONS[0]);
  for (const target of [vm, plain]) assert.match(await nested(target), /prohibited under nested VM operation/);
  await handle.uninstall();
});

test('without ruby.wasm internals, ruby.wasm\'s own evalAsync stays', () => {
  const vm = { eval() {}, guest: {}, instance: { exports: {} } };
  assert.equal(evaluator(vm, {}, {}, () => {}), null);
});
