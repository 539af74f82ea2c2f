// The waiting transport resumes a parked fiber by calling NetHttpWasm.__wake
// in the VM once per settled promise (js/ruby/rubywasm-internals.mjs): a
// wake keeps nothing in the VM's memory (ruby.wasm 2.10's vm.eval keeps the
// code's bytes, ~16 bytes a call), resumes the fiber with its value, and
// falls back to vm.eval where ruby.wasm's internals are not there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { waker } from '../../js/ruby/rubywasm-internals.mjs';
import { bootVM, rb, rbJSON, VERSIONS } from '../support/rubywasm.mjs';

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: 100,000 wakes keep nothing in the VM's memory, and a parked fiber gets its value`, async () => {
    const vm = await bootVM(version);
    const handle = installNetHttp(vm, { transport: async () => ({ write() {}, close() {} }) });
    const { bridge } = handle;
    const memory = vm.instance.exports.memory;
    // a token no fiber waits on: __wake reads it and resumes nothing
    bridge.settled = '0:0';
    for (let i = 0; i < 10000; i++) bridge.wake();
    const before = memory.buffer.byteLength;
    for (let i = 0; i < 100000; i++) bridge.wake();
    // (vm.eval, as before: +1.6 MB here)
    assert.equal(memory.buffer.byteLength, before, `the VM's memory grew by ${memory.buffer.byteLength - before} bytes`);
    // a fiber parked on a promise is resumed with the value it settles with
    const got = await rb(vm, 'NetHttpWasm.await(JS.global[:Promise].call(:resolve, 42)).to_s');
    assert.equal(got, '42');
    await handle.uninstall();
  });
}

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: a bridge promise that rejects raises NetHttpWasm::HostError where the fiber waits, alone and in threads`, async () => {
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    // (a defect of the host's side: its promises never reject)
    handle.bridge.settleLater = () => Promise.reject(new ReferenceError('setImmediate is not defined'));
    const got = await rbJSON(vm, `
      def attempt
        NetHttpWasm.call_wait('settleLater', 0)
      rescue NetHttpWasm::HostError => e
        "#{e.class}: #{e.message}"
      end
      [attempt, *Array.new(2) { Thread.new { attempt } }.map(&:value)]`);
    const message = "NetHttpWasm::HostError: net-http-wasm: a promise of the host's rejected: ReferenceError: setImmediate is not defined";
    assert.deepEqual(got, [message, message, message]);
    await handle.uninstall();
  });
}

test('without ruby.wasm internals the wake is vm.eval', () => {
  const calls = [];
  const vm = { eval: (code) => calls.push(code), guest: {}, instance: { exports: {} } };
  const wake = waker(vm, {});
  wake();
  assert.deepEqual(calls, ['NetHttpWasm.__wake']);
});
