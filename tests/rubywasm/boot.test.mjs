// What a fresh VM does at boot: createRubyVM's rubygems option ('lazy', the
// default, loads rubygems when a program first needs it, and then behaves as
// `rubygems: true` does), installNetHttp's and createRubyVM's malloc
// reserve, and createRubyVM's tierUp: false (last: it sets a V8 flag for
// the whole process).
import test from 'node:test';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import assert from 'node:assert/strict';
import { createRubyVM, installNetHttp } from '../../js/ruby/node.mjs';
import { bootVM } from '../support/rubywasm.mjs';
import { reserveBeside } from '../../js/ruby/module-patch.mjs';
import { headroom } from '../../js/ruby/headroom.mjs';

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

test("malloc's room ahead of need: threads starting in a burst grow the memory a few times, not at each start", async () => {
  const { vm, dispose } = await createRubyVM();
  try {
    const memory = vm.instance.exports.memory;
    globalThis.__memorySize = () => memory.buffer.byteLength;
    // 200 threads, each allocating 2,000 small Strings as it starts (the
    // collector is held off while they live): the memory's size seen after
    // each start. Allocated a page at a time, it grows at most starts (178
    // times of 200, measured); with room given at each start, a few times.
    const [growths, grownMiB, answers] = JSON.parse(
      String(
        await vm.evalAsync(`
          require 'js'; require 'json'
          size = -> { JS.global.call(:__memorySize).to_i }
          seen = [size.()]
          threads = Array.new(200) { |i| Thread.new { a = Array.new(2000) { 'x' * 100 }; seen << size.(); sleep 0.001; a.size + i } }
          values = threads.map(&:value)
          [seen.each_cons(2).count { |a, b| b > a }, (seen.last - seen.first) >> 20, values == Array.new(200) { |i| 2000 + i }].to_json`),
      ),
    );
    assert.ok(grownMiB > 64, `the threads took ${grownMiB} MiB: more than any reserve given at boot`);
    assert.ok(growths <= 40, `the memory grew at ${growths} of 200 thread starts`);
    assert.equal(answers, true);
  } finally {
    delete globalThis.__memorySize;
    await dispose();
  }
});

test("malloc's room ahead of need: a block is given with one growth of the memory, small allocations come from it, larger ones from past it", async () => {
  const { vm, dispose } = await createRubyVM();
  try {
    const { memory, cabi_realloc: realloc } = vm.instance.exports;
    // (the growths a call made: the buffer is replaced at each)
    const growths = [];
    const watched = { memory, cabi_realloc: (...args) => { const b = memory.buffer, size = b.byteLength; const r = realloc(...args); if (memory.buffer !== b) growths.push(memory.buffer.byteLength - size); return r; } };
    // malloc's free memory used up, but for what is left of its last growth
    // (under 4 MiB, its step): its top chunk starts past the last block
    let last = 0;
    for (const b = memory.buffer; memory.buffer === b; ) last = realloc(0, 0, 8, 1 << 16);
    const top = last + (1 << 16);
    const block = 8 << 20;
    assert.equal(reserveBeside(watched, block), true);
    assert.equal(growths.length, 1, `the memory grew ${growths.length} times: ${growths}`);
    assert.ok(growths[0] >= block - (4 << 20) && growths[0] <= block + (4 << 20), `it grew by ${growths[0]} bytes`);
    const small = realloc(0, 0, 8, 1 << 20);
    assert.ok(small >= top && small + (1 << 20) <= top + block, `a MiB at ${small}, the block from ${top}`);
    const large = realloc(0, 0, 8, 16 << 20);
    assert.ok(large >= small + block, `16 MiB at ${large}, past the block's end (${small} + ${block})`);
  } finally {
    await dispose();
  }
});

test("malloc's room ahead of need, where the memory cannot grow by a block: nothing is reserved, nothing raised, the VM goes on", async () => {
  const { vm, dispose } = await createRubyVM();
  try {
    const exports = vm.instance.exports;
    // (ruby.wasm's cabi_realloc traps when malloc has nothing to give)
    assert.throws(() => exports.cabi_realloc(0, 0, 8, 0xf0000000), WebAssembly.RuntimeError);
    const before = exports.memory.buffer.byteLength;
    assert.equal(reserveBeside(exports, 0xf0000000), false);
    assert.equal(exports.memory.buffer.byteLength, before);
    // a memory whose every growth fails: the check asks once, then no more
    let asked = 0;
    const memory = new WebAssembly.Memory({ initial: 1 });
    const check = headroom({ memory, cabi_realloc: () => { asked++; throw new WebAssembly.RuntimeError('unreachable'); } });
    memory.grow(1);
    check();
    memory.grow(1);
    check();
    assert.equal(asked, 1);
    assert.equal(String(vm.eval('Array.new(1000) { "x" * 1000 }.size')), '1000');
  } finally {
    await dispose();
  }
});

// What Ruby relies on being zero, and being kept: Strings and Arrays of
// zeros, objects of many shapes (the shape tree and its cache are the boot's
// mmaps), fibers (each pool of stacks an mmap), a full GC, Net::HTTP.
const ZEROS = `
n = 3_000_000
z = "\\0" * n
raise 'zeros' unless z.count("\\0") == n && z.bytesize == n
raise 'array' unless Array.new(n, 0).sum == 0 && Array.new(100_000).compact.empty?
s = String.new(capacity: 1 << 22)
raise 'capacity' unless s.empty? && s.encoding == Encoding::BINARY
s << "x" * 100
classes = 300.times.map { |i| Class.new { define_method(:fill) { (i % 40 + 1).times { |k| instance_variable_set("@v#{k}", k) }; self } } }
objs = classes.map { |c| c.new.fill }
raise 'shapes' unless objs.each_with_index.all? { |o, i| o.instance_variables.size == i % 40 + 1 && o.instance_variable_get(:@v0) == 0 }
fibers = 400.times.map { |i| Fiber.new { Fiber.yield i; i * 2 } }
raise 'fibers' unless fibers.map(&:resume).sum == (0...400).sum && fibers.map(&:resume).sum == (0...400).sum * 2
GC.start
raise 'after GC' unless z.count("\\0") == n && objs.last.instance_variable_get(:@v1) == 1 && ("a" * 1_000_000).count("a") == 1_000_000
[RUBY_VERSION, s.bytesize, objs.size].join(' ')
`;

test('lazyZeroing (default): every installed ruby.wasm version boots from its patched module and runs Ruby, Net::HTTP included', async () => {
  const http = await import('node:http');
  const server = http.createServer((req, res) => res.end(`hello ${req.url}`));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    for (const ruby of ['3.2', '3.3', '3.4', '4.0', 'head']) {
      const { vm, dispose } = await createRubyVM({ ruby });
      try {
        assert.match(vm.eval(ZEROS).toString(), /^\d\.\d\.\d\S* 100 300$/, ruby);
        const got = (await vm.evalAsync(`Net::HTTP.get(URI('http://127.0.0.1:${server.address().port}/${ruby}'))`)).toString();
        assert.equal(got, `hello /${ruby}`);
      } finally {
        await dispose();
      }
    }
  } finally {
    server.close();
  }
  await assert.rejects(createRubyVM({ lazyZeroing: 'yes' }), { message: 'createRubyVM: lazyZeroing must be true or false, not yes' });
});

test('lazyZeroing: a fresh VM keeps far less memory resident than with the stock module, and more fibers do not write their stacks twice', async () => {
  // each in a fresh process: the resident set after createRubyVM, and after
  // 600 more fibers (the fiber pool grows by mmaps of 14 to 112 MiB)
  const measure = (lazyZeroing) => {
    const code = `
      const { createRubyVM } = await import(${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)});
      const { vm, dispose } = await createRubyVM({ lazyZeroing: ${lazyZeroing} });
      const booted = process.memoryUsage().rss;
      const memory = vm.instance.exports.memory.buffer.byteLength;
      const check = vm.eval(${JSON.stringify(ZEROS)}).toString();
      vm.eval('$f = 600.times.map { Fiber.new { Fiber.yield 1 } }; $f.each(&:resume); nil');
      console.log(JSON.stringify({ booted, memory, fibers: process.memoryUsage().rss, check }));
      await dispose();`;
    const r = spawnSync(process.execPath, ['--no-warnings', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  };
  const stock = measure(false);
  const lazy = measure(true);
  const MiB = 1 << 20;
  assert.match(lazy.check, / 100 300$/);
  // the boot's 256 MiB of shape cache, its 12 MiB shape list and its 14 MiB
  // fiber pool stay untouched
  assert.ok(lazy.booted < stock.booted - 200 * MiB, `resident after boot: ${lazy.booted / MiB} MiB patched, ${stock.booted / MiB} MiB stock`);
  assert.ok(lazy.memory <= stock.memory, `linear memory: ${lazy.memory / MiB} MiB patched, ${stock.memory / MiB} MiB stock`);
  assert.ok(lazy.fibers - lazy.booted < stock.fibers - stock.booted - 256 * MiB, `600 fibers: +${(lazy.fibers - lazy.booted) / MiB} MiB patched, +${(stock.fibers - stock.booted) / MiB} MiB stock`);
});

test('lazyZeroing (default): malloc grows the memory 4 MiB at a time, where the stock module grows it a page or a few', async () => {
  // a burst of small allocations with no turn of the host, the memory's
  // size noted after every 500 Strings: each growth seen is at least 4 MiB
  // (V8 may follow every growth with a full collection)
  const growths = async (lazyZeroing) => {
    const { vm, dispose } = await createRubyVM({ lazyZeroing });
    const sizes = [];
    const memory = vm.instance.exports.memory;
    globalThis.__noteMemory = () => sizes.push(memory.buffer.byteLength);
    try {
      vm.eval(`require 'js'; $keep = []; 200.times { 500.times { $keep << ('x' * 200) }; JS.global.call(:__noteMemory) }; $keep.size`);
    } finally {
      delete globalThis.__noteMemory;
      await dispose();
    }
    const steps = [];
    for (let i = 1; i < sizes.length; i++) if (sizes[i] !== sizes[i - 1]) steps.push(sizes[i] - sizes[i - 1]);
    return steps;
  };
  const MiB = 1 << 20;
  const patched = await growths(true);
  assert.ok(patched.length >= 2 && patched.every((n) => n >= 4 * MiB), `growths (MiB): ${patched.map((n) => n / MiB).join(' ')}`);
  const stock = await growths(false);
  assert.ok(stock.length > 2 * patched.length && stock.some((n) => n < 4 * MiB), `stock module's growths (MiB): ${stock.map((n) => n / MiB).join(' ')}`);
});

test('tierUpTasks: V8 optimizes no more functions at once than leave Ruby a CPU (4 CPUs or fewer), as given, or as V8 would; the command line\'s choice kept; tierUpFull: the full register allocator for huge functions where V8 has a fallback (V8 11); a bad value is an error', async () => {
  for (const bad of [0, 1.5, '2', 129]) {
    await assert.rejects(createRubyVM({ tierUpTasks: bad }), { message: `createRubyVM: tierUpTasks must be null or an integer from 1 to 128, not ${bad}` });
  }
  for (const bad of [1, 'yes', null]) {
    await assert.rejects(createRubyVM({ tierUpFull: bad }), { message: `createRubyVM: tierUpFull must be true or false, not ${bad}` });
  }
  // each in a fresh process: the V8 flags createRubyVM sets, and some Ruby run
  const flagsSet = (options, nodeArgs = []) => {
    const code = `
      import { createRequire, syncBuiltinESMExports } from 'node:module';
      const v8 = createRequire(import.meta.url)('node:v8');
      const set = [];
      const setFlags = v8.setFlagsFromString;
      v8.setFlagsFromString = (f) => { set.push(f); setFlags(f); };
      syncBuiltinESMExports();
      const { createRubyVM } = await import(${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)});
      const { vm, dispose } = await createRubyVM(${JSON.stringify(options)});
      const v = vm.eval("require 'net/http'; [1, 2].sum").toString();
      await dispose();
      console.log(JSON.stringify({ v, set: set.filter((f) => f.includes('compilation') || f.includes('regalloc')) }));`;
    const r = spawnSync(process.execPath, [...nodeArgs, '--no-warnings', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.v, '3');
    return out.set;
  };
  const cpus = availableParallelism();
  const byDefault = cpus <= 4 ? [`--wasm-num-compilation-tasks=${Math.max(1, cpus - 1)}`] : [];
  assert.deepEqual(flagsSet({ tmp: false }), byDefault, `default, ${cpus} CPUs`);
  assert.deepEqual(flagsSet({ tmp: false, tierUpTasks: 3 }), ['--wasm-num-compilation-tasks=3']);
  assert.deepEqual(flagsSet({ tmp: false, tierUpTasks: null }), []);
  assert.deepEqual(flagsSet({ tmp: false, tierUpTasks: 3 }, ['--wasm-num-compilation-tasks=2']), []);
  // (V8 11 is Node 20's; Node 22's V8 12.4 has no such fallback, nor the flag)
  const v8Major = Number(process.versions.v8.split('.')[0]);
  assert.deepEqual(flagsSet({ tmp: false, tierUpTasks: null, tierUpFull: true }), v8Major < 12 ? ['--no-turbo-use-mid-tier-regalloc-for-huge-functions'] : []);
  assert.deepEqual(flagsSet({ tmp: false, tierUpTasks: null, tierUpFull: false }), []);
});

test("createRubyVM keeps Node's event loop alive while it awaits V8: a program with nothing else on the loop goes on from the loop, not from Node's drain step", () => {
  // Node runs a task V8 settles (WebAssembly.compile's) with nothing on
  // the loop from its drain step, which ends by waiting for every background
  // task of V8 (in a fresh process, the optimizing of ruby.wasm: the first
  // response then came 1-2 s late); a promise that V8 settles by a delayed
  // task of its own, once the loop is empty, is never settled: the process
  // exits with the top-level await unsettled (13). Here the compile is
  // followed by such a wait.
  const code = `
    const { createRubyVM } = await import(${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)});
    const compile = WebAssembly.compile;
    const cell = new Int32Array(new SharedArrayBuffer(4));
    WebAssembly.compile = async (...args) => {
      const module = await compile.apply(WebAssembly, args);
      await Atomics.waitAsync(cell, 0, 0, 20).value;
      return module;
    };
    const { vm, dispose } = await createRubyVM({ tmp: false });
    console.log(vm.eval("require 'net/http'; Net::HTTP.name").toString());
    await dispose();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'Net::HTTP\n');
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
