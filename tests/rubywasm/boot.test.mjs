// What a fresh VM does at boot: createRubyVM's rubygems option ('lazy', the
// default, loads rubygems when a program first needs it, and then behaves as
// `rubygems: true` does), installNetHttp's and createRubyVM's malloc
// reserve, and createRubyVM's tierUp: false (last: it sets a V8 flag for
// the whole process).
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRubyVM, installNetHttp } from '../../js/ruby/node.mjs';
import { bootVM } from '../support/rubywasm.mjs';

const loaded = "$LOADED_FEATURES.any? { |f| f.end_with?('/rubygems.rb') }";

test("rubygems: 'lazy' (ruby.wasm 4.0): not loaded at boot; Gem constants, Gem methods, Kernel#gem and bundled gems load it", async () => {
  const cases = [
    // [what a program does, its value]
    ['Gem::Version.new("1.10") > Gem::Version.new("1.9")', 'true'],
    ['Gem.win_platform?', 'false'],
    ['Gem.respond_to?(:loaded_specs)', 'true'],
    ["require 'base64'; Base64.strict_encode64('hi')", 'aGk='],
    ["gem 'base64'; Gem.loaded_specs['base64'].name", 'base64'],
  ];
  for (const [code, want] of cases) {
    const { vm, dispose } = await createRubyVM();
    try {
      assert.equal(vm.eval(loaded).toString(), 'false', 'rubygems is not loaded at boot');
      // defined? sees Gem's constants as rubygems: true does, without loading it
      assert.equal(vm.eval('defined?(Gem::Specification).inspect').toString(), '"constant"');
      assert.equal(vm.eval(loaded).toString(), 'false');
      assert.equal(vm.eval(code).toString(), want, code);
      assert.equal(vm.eval(loaded).toString(), 'true', `${code} loads rubygems`);
      // rubygems' own Kernel#gem and Gem methods are in place, the stand-ins gone
      assert.match(vm.eval('Kernel.instance_method(:gem).source_location.first').toString(), /rubygems\/core_ext\/kernel_gem\.rb$/);
      assert.equal(vm.eval('sc = Gem.singleton_class; (sc.instance_methods(false) + sc.private_instance_methods(false)).intersect?(%i[method_missing const_missing respond_to_missing?])').toString(), 'false');
      assert.match(vm.eval('Gem::VERSION').toString(), /^\d+\.\d+\.\d+/);
    } finally {
      await dispose();
    }
  }
});

test("rubygems: 'lazy': a require nothing satisfies raises LoadError without loading rubygems; require 'rubygems' loads it", async () => {
  const { vm, dispose } = await createRubyVM();
  try {
    assert.equal(vm.eval("begin; require 'no_such_feature_x'; rescue LoadError => e; e.message; end").toString(), 'cannot load such file -- no_such_feature_x');
    assert.equal(vm.eval(loaded).toString(), 'false');
    assert.equal(vm.eval("require 'rubygems'").toString(), 'true');
    assert.equal(vm.eval(loaded).toString(), 'true');
    assert.equal(vm.eval("require 'rubygems'").toString(), 'false');
    assert.equal(vm.eval("begin; require 'no_such_feature_x'; rescue LoadError => e; e.message; end").toString(), 'cannot load such file -- no_such_feature_x');
    // Net::HTTP works either way
    assert.equal(vm.eval('Net::HTTP.name').toString(), 'Net::HTTP');
  } finally {
    await dispose();
  }
});

test('rubygems: true loads it at once, false not at all; a bad value is an error', async () => {
  const eager = await createRubyVM({ rubygems: true });
  try {
    assert.equal(eager.vm.eval(loaded).toString(), 'true');
  } finally {
    await eager.dispose();
  }
  const none = await createRubyVM({ rubygems: false });
  try {
    assert.equal(none.vm.eval(loaded).toString(), 'false');
    assert.equal(none.vm.eval('defined?(Gem::Specification).inspect').toString(), 'nil');
    assert.equal(none.vm.eval("begin; require 'base64'; rescue LoadError => e; e.message; end").toString(), 'cannot load such file -- base64');
  } finally {
    await none.dispose();
  }
  await assert.rejects(createRubyVM({ rubygems: 'yes' }), { message: "createRubyVM: rubygems must be true, false or 'lazy', not yes" });
});

test("the malloc reserve: createRubyVM's boot and installNetHttp on a VM made by hand take it at once", async () => {
  const { vm, dispose } = await createRubyVM();
  try {
    // the reserve is free memory that malloc takes from: 16 MiB of Strings
    // do not grow the VM's memory
    const memory = vm.instance.exports.memory;
    const before = memory.buffer.byteLength;
    vm.eval('$keep = Array.new(16) { "x" * (1 << 20) }; nil');
    assert.equal(memory.buffer.byteLength, before);
  } finally {
    await dispose();
  }
  const vm2 = await bootVM('4.0');
  const memory = vm2.instance.exports.memory;
  const before = memory.buffer.byteLength;
  const handle = installNetHttp(vm2, { blocking: true });
  try {
    assert.ok(memory.buffer.byteLength >= before + (32 << 20), 'installNetHttp grew the memory by its reserve at once');
    const after = memory.buffer.byteLength;
    vm2.eval('$keep = Array.new(16) { "x" * (1 << 20) }; nil');
    assert.equal(memory.buffer.byteLength, after);
  } finally {
    await handle.uninstall();
  }
  assert.throws(() => installNetHttp(vm2, { reserve: -1 }), { message: 'installNetHttp: reserve must be a number of bytes from 0 to 1073741824, not -1' });
});

test('tierUp: false: a VM of baseline code only makes requests as any other; a bad value is an error', async () => {
  await assert.rejects(createRubyVM({ tierUp: 'no' }), { message: 'createRubyVM: tierUp must be true or false, not no' });
  const http = await import('node:http');
  const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  // (the waiting transport: the server runs in this thread)
  const { vm, dispose } = await createRubyVM({ tierUp: false });
  try {
    const got = (await vm.evalAsync(`Net::HTTP.get(URI('http://127.0.0.1:${server.address().port}/x'))`)).toString();
    assert.equal(got, 'hello /x');
  } finally {
    await dispose();
    server.close();
  }
});
