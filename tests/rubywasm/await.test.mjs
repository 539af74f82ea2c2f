// The program's own JS::Object#await in a VM Net::HTTP is installed in
// (NetHttpWasm::ProgramAwait, ruby/net_http_wasm.rb): it waits as the
// package's waits do. ruby.wasm's own await lets the collector run while
// the fiber is switched out, so `[1, 2, 3].map { |x| promise.await }` lost
// the Array map fills (a VM dead of "memory access out of bounds" or
// "[BUG] try to mark T_NONE object" under GC.stress), and it resumes the
// fiber from a promise's reaction, where a VM that died took the Node
// process with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { bootVM, rbJSON, rbUnderGCStress, VERSIONS } from '../support/rubywasm.mjs';

// Awaits of fulfilled and rejected promises, each as "value" or "Class: first line".
const OUTCOMES = `
def outcome
  yield
rescue JS::Error => e
  "#{e.class}: #{e.message.lines.first.chomp}"
end
[
  outcome { JS.eval("return 42").await.to_i },
  outcome { JS.eval("return { a: 'b' }").await[:a].to_s },
  outcome { JS.eval("return undefined").await.to_s },
  outcome { JS.eval("return null").await.to_s },
  outcome { JS.eval("return new Promise((r) => setTimeout(() => r('later'), 20))").await.to_s },
  outcome { JS.eval("return Promise.reject(new TypeError('boom'))").await },
  outcome { JS.eval("return Promise.reject('plain')").await },
]`;

// JS::Object#await where nothing can wait (vm.eval): ruby.wasm's message.
const MISPLACED = `begin; JS.eval('return 1').await; rescue => e; "#{e.class}: #{e.message.lines.first.chomp}"; end`;

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: under GC.stress, JS::Object#await inside Array#map and Array#select keeps what they fill`, async () => {
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    const got = await rbUnderGCStress(vm, `
      doubled = [1, 2, 3].map { |x| [JS.global[:Promise].call(:resolve, x).await.to_i * 2] }
      even = (1..6).to_a.select { |x| JS.global[:Promise].call(:resolve, x).await.to_i.even? }
      { doubled: doubled, even: even }`);
    assert.deepEqual(got, { doubled: [[2], [4], [6]], even: [2, 4, 6], on: true });
    assert.equal(handle.bridge.outcomes.size, 0);
    await handle.uninstall();
  });

  test(`ruby.wasm ${version}: JS::Object#await gives the values and raises the errors ruby.wasm's own await does`, async () => {
    const plain = await bootVM(version);
    const expected = await rbJSON(plain, OUTCOMES);
    assert.deepEqual(expected, [42, 'b', 'undefined', 'null', 'later', 'JS::Error: TypeError: boom', 'JS::Error: plain']);
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    assert.deepEqual(await rbJSON(vm, OUTCOMES), expected);
    assert.equal(String(vm.eval(MISPLACED)), String(plain.eval(MISPLACED)));
    assert.match(String(vm.eval(MISPLACED)), /^RuntimeError: JS::Object#await can be called only from RubyVM#evalAsync/);
    assert.equal(handle.bridge.outcomes.size, 0);
    await handle.uninstall();
  });

  test(`ruby.wasm ${version}: threads that await JS promises wait as for Net::HTTP; Thread#kill and Timeout end such a wait`, async () => {
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    const got = await rbJSON(vm, `
      require 'timeout'
      order = []
      # the first waits longest: each answers once its promise does, the others running meanwhile
      threads = Array.new(3) do |i|
        Thread.new do
          v = JS.eval("return new Promise((r) => setTimeout(() => r(#{i}), #{(3 - i) * 40}))").await.to_i
          order << v
          v
        end
      end
      values = threads.map(&:value)
      never = -> { JS.eval('return new Promise(() => {})').await }
      killed = Thread.new { never.call }
      sleep 0.05
      killed.kill
      killed.join
      timeout = begin
        Timeout.timeout(0.05) { never.call }
      rescue Timeout::Error => e
        e.class.name
      end
      in_thread = Thread.new do
        Timeout.timeout(0.05) { never.call }
      rescue Timeout::Error => e
        e.class.name
      end.value
      { values: values, order: order, killed: killed.status, timeout: timeout, in_thread: in_thread }`);
    assert.deepEqual(got, { values: [0, 1, 2], order: [2, 1, 0], killed: false, timeout: 'Timeout::Error', in_thread: 'Timeout::Error' });
    // (what the given-up waits kept is let go)
    assert.equal(handle.bridge.outcomes.size, 0);
    await handle.uninstall();
  });
}
