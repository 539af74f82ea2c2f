// Thread in ruby.wasm (ruby/net_http_wasm/thread.rb): threaded Ruby
// programs (tests/support/threads/scenarios.mjs) run in native MRI
// (Debian's ruby, run live here: 3.1.2 on this machine) and in ruby.wasm
// 4.0 and 3.4 made by createRubyVM, over the waiting transport (vm.evalAsync)
// and the blocking one (vm.eval), and print the same. The VMs run in a
// worker thread, the servers on this one. Then what MRI cannot be asked:
// 1,000 threads at once, the host's event loop running while Ruby waits
// with no scheduler asked for, threads in vm.eval with a waiting transport.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync } from 'node:fs';
import { createRubyVM } from '../../js/ruby/node.mjs';
import { VERSIONS, listen, closeServer, captureServer, runNative, haveNativeRuby } from '../support/browser/harness.mjs';
import { SCENARIOS, program } from '../support/threads/scenarios.mjs';
import { workerVM } from '../support/rubywasm.mjs';

// Debian bookworm: ruby-net-http-persistent (vendor_ruby), ruby-connection-pool
const GEMS = ['/usr/lib/ruby/vendor_ruby', '/usr/share/rubygems-integration/all/gems/connection_pool-2.2.5'];
const missing = GEMS.filter((d) => !existsSync(d));
const skipGems = missing.length ? `not installed: ${missing.join(', ')} (apt-get install ruby-net-http-persistent ruby-connection-pool)` : false;
const skip = skipGems || (haveNativeRuby() ? false : 'no native ruby (apt-get install ruby)');

// /delay/N: answers its own URL after N ms; /conn: the number of the
// connection it came on; /together/KEY/N: see scenarios.mjs
let server;
let base;
const sockets = new Set();
before(async () => {
  const groups = new Map();
  let conns = 0;
  server = http.createServer((req, res) => {
    const parts = new URL(req.url, 'http://x').pathname.split('/');
    if (parts[1] === 'delay') return void setTimeout(() => res.end(req.url), Number(parts[2]) || 0);
    if (parts[1] === 'conn') return void res.end(String(req.socket.number));
    if (parts[1] === 'together') {
      const [, , key, n] = parts;
      const group = groups.get(key) || [];
      groups.set(key, group);
      group.push(res);
      if (group.length === Number(n)) {
        groups.delete(key);
        for (const r of group) r.end('met');
      } else {
        setTimeout(() => group.includes(res) && (group.splice(group.indexOf(res), 1), res.end('alone')), 5000);
      }
      return undefined;
    }
    res.statusCode = 404;
    return void res.end();
  });
  server.on('connection', (s) => {
    s.number = ++conns;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  base = `http://127.0.0.1:${await listen(server)}`;
});
after(() => closeServer(server, sockets));

// The environment of a VM that runs hundreds of threads at once: on 3.2,
// createRubyVM's 2 MiB fiber stacks would take the memory past what
// ruby.wasm's glue can address (2 GiB), so the smaller stack
// docs/ruby-wasm.md gives for so many threads.
function manyThreads(version) {
  return version === '3.2' ? { RUBY_FIBER_MACHINE_STACK_SIZE: String(1 << 20) } : undefined;
}

let runs = 0;
const mri = new Map(); // scenario name → what native MRI printed

describe('threaded programs print what they print in MRI', { skip, timeout: 900000 }, () => {
  before(async () => {
    for (const s of SCENARIOS) {
      const out = await runNative(`${program(s.code, { base, key: `mri${++runs}` })}\nprint $__out.string`, { timeout: 60000 });
      mri.set(s.name, out);
    }
  });

  test('native MRI ran every scenario to its end', () => {
    for (const s of SCENARIOS) {
      const out = mri.get(s.name);
      assert.ok(out.trim().length > 0, `${s.name}: printed nothing`);
      assert.doesNotMatch(out, /uncaught/, `${s.name}: ${out}`);
    }
  });

  for (const version of VERSIONS) {
    for (const [transport, blocking] of [['waiting transport, vm.evalAsync', false], ['blocking transport, vm.eval', true]]) {
      describe(`ruby.wasm ${version}, ${transport}`, () => {
        let vm;
        before(async () => {
          vm = await workerVM({ ruby: version, blocking, gems: GEMS });
        });
        after(() => vm.close());

        for (const s of SCENARIOS) {
          test(s.name, async () => {
            const out = await vm.run(program(s.code, { base, key: `vm${++runs}` }), !blocking);
            assert.equal(out, mri.get(s.name));
          });
        }

        test('afterwards no thread is left, and the collector is on again', async () => {
          assert.equal(await vm.run('[Thread.list.size, GC.disable, GC.enable].inspect', !blocking), '[1, false, true]');
        });
      });
    }
  }
});

describe('1,000 threads', { timeout: 600000 }, () => {
  for (const version of VERSIONS) {
    for (const [transport, blocking] of [['waiting transport', false], ['blocking transport', true]]) {
      test(`ruby.wasm ${version}, ${transport}: 1,000 threads each fetching /delay/50 all answer`, async () => {
        const vm = await workerVM({ ruby: version, blocking, env: manyThreads(version) });
        try {
          const out = await vm.run(`
            require 'json'
            threads = Array.new(1000) { |i| Thread.new { Net::HTTP.get_response(URI("${base}/delay/50?#{i}")) } }
            res = threads.map(&:value)
            [res.map(&:code).tally, res.each_with_index.count { |r, i| r.body == "/delay/50?#{i}" }, Thread.list.size].to_json`, !blocking);
          assert.deepEqual(JSON.parse(out), [{ 200: 1000 }, 1000, 1]);
        } finally {
          await vm.close();
        }
      });
    }
  }
});

// ruby.wasm switches fibers with Asyncify: a fiber switched out keeps its
// C locals where the collector does not look. The collector runs while
// threads live, from the fiber that runs the scheduler, and waits while a
// thread is inside a C method that may hold such objects (scheduler.rb
// `add`). Each program here lost objects, or killed the VM, when the
// collector ran by itself meanwhile, or without that wait.
const COLLECTOR = `
  require 'json'
  def churn(n) = n.times { "garbage" * 10; [1, 2, 3] }
  out = {}
  g = GC.count
  # the program is inside Array#map (a C method) while the threads run
  threads = Array.new(20) { |i| Thread.new { 5.times { sleep 0.001; churn(20_000) }; "v#{i}" + "x" * 40 } }
  r = threads.map(&:value)
  out[:map_of_values] = r.each_with_index.all? { |s, i| s == "v#{i}" + "x" * 40 }
  out[:collected_meanwhile] = GC.count > g
  # threads inside Array#map and Hash#select when they wait
  threads = Array.new(10) do |i|
    Thread.new { [[1, 2, 3].map { |j| sleep 0.001; churn(20_000); "v#{i}.#{j}" }, { a: 1, b: 2 }.select { |k, _| sleep 0.001; churn(20_000); k == :a }] }
  end
  out[:maps_in_threads] = threads.map(&:value).each_with_index.all? { |(a, h), i| a == [1, 2, 3].map { |j| "v#{i}.#{j}" } && h == { a: 1 } }
  # a thread that lives long, waiting often, keeps the heap small
  live = GC.stat(:heap_live_slots)
  peak = Thread.new { m = 0; 60.times { sleep 0.001; churn(20_000); m = [m, GC.stat(:heap_live_slots)].max }; m }.value
  out[:long_lived_bounded] = peak - live < 600_000 ? true : peak - live
  out[:on_again] = [GC.disable, GC.enable]
  out.to_json`;

describe('the collector runs while threads live', { timeout: 600000 }, () => {
  for (const version of VERSIONS) {
    for (const [transport, blocking] of [['waiting transport', false], ['blocking transport', true]]) {
      test(`ruby.wasm ${version}, ${transport}: values held by C methods survive, a long-lived thread's garbage is collected`, async () => {
        const vm = await workerVM({ ruby: version, blocking });
        try {
          const out = JSON.parse(await vm.run(COLLECTOR, !blocking));
          assert.deepEqual(out, { map_of_values: true, collected_meanwhile: true, maps_in_threads: true, long_lived_bounded: true, on_again: [false, true] });
        } finally {
          await vm.close();
        }
      });
    }
  }
});

// What many threads hold while they live (each fiber's struct, ~123 KiB of
// malloc'd memory in ruby.wasm) makes no collection due by itself: 400
// threads started at once made three, each marking every fiber's stacks.
// Garbage the program makes meanwhile still is collected.
const MANY_ALIVE = `
  out = {}
  GC.start
  g = GC.count
  ts = Array.new(400) { Thread.new { sleep 0.05 } }
  Thread.pass
  out[:collections_at_start] = GC.count - g
  ts.each(&:join)
  ts = Array.new(400) { Thread.new { sleep 5 } }
  Thread.pass
  g = GC.count
  96.times { "x" * (1 << 20); Thread.pass }
  out[:collected_meanwhile] = GC.count > g
  ts.each(&:kill).each(&:join)
  out.inspect`;

describe('many threads alive at once', { timeout: 600000 }, () => {
  for (const version of VERSIONS) {
    for (const [transport, blocking] of [['waiting transport', false], ['blocking transport', true]]) {
      test(`ruby.wasm ${version}, ${transport}: 400 threads start with no collection; the program's garbage meanwhile is collected`, async () => {
        const vm = await workerVM({ ruby: version, blocking });
        try {
          assert.equal(await vm.run(MANY_ALIVE, !blocking), '{collections_at_start: 0, collected_meanwhile: true}');
          assert.equal(await vm.run('[Thread.list.size, GC.disable, GC.enable].inspect', !blocking), '[1, false, true]');
        } finally {
          await vm.close();
        }
      });
    }
  }
});

// Ruby < 3.4 names a C frame's method but not its class ("times"): such a
// frame is judged by every C method of that name Ruby has (the verdicts
// above on 3.2 and 3.3 rest on it; here on any version, by name).
test('a C frame known by its name alone: safe when every C method of that name is, and looked at again after a require', async () => {
  const { vm, dispose } = await createRubyVM({ ruby: VERSIONS[0] });
  try {
    const out = JSON.parse(String(await vm.evalAsync(`
      require 'json'
      f = NetHttpWasm::Collector::Frames
      names = %w[times catch loop yield resume synchronize each map select reverse_each]
      before = names.to_h { |n| [n, f.bare_holding?(n)] }
      # a C method of a library loaded later (StringIO's alone is so named):
      # a name that no C method had is one that may hold objects
      unloaded = !defined?(StringIO)
      was = f.bare_holding?('closed_read?')
      require 'stringio'
      { before: before, odd: [f.bare_holding?('#<Class:0x1>#x'), f.bare_holding?('no_such_method_anywhere')], later: [unloaded, was, f.bare_holding?('closed_read?')] }.to_json`)));
    // head (4.1) has one more C method named yield (with call, [] and === on
    // the singleton class of an object that has no name), not one of SAFE
    const yieldHolds = VERSIONS[0] === 'head';
    assert.deepEqual(out.before, { times: false, catch: false, loop: false, yield: yieldHolds, resume: false, synchronize: false, each: true, map: true, select: true, reverse_each: true });
    assert.deepEqual(out.odd, [true, false]);
    assert.deepEqual(out.later, [true, false, true]);
  } finally {
    await dispose();
  }
});

describe('timers', { timeout: 300000 }, () => {
  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}: 300 threads' sleeps end, none before its deadline, with 300 timeouts set and cancelled meanwhile`, async () => {
      const vm = await workerVM({ ruby: version, blocking: false, env: manyThreads(version) });
      try {
        const out = JSON.parse(await vm.run(`
          require 'json'
          order = []
          now = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
          ds = (1..300).map { |i| (i * 7919 % 300) * 0.0002 }
          go = Queue.new
          base = nil
          deadlines = []
          sleepers = ds.each_with_index.map do |d, i|
            Thread.new { go.pop; s = [base + d - now.(), 0].max; deadlines[i] = now.() + s; sleep s; order << i if now.() >= deadlines[i] }
          end
          cancelled = Array.new(300) { |i| Thread.new { go.pop; Timeout.timeout(30 + i) { sleep 0.001 }; :ok } }
          Thread.pass until (sleepers + cancelled).all?(&:stop?)
          base = now.() + 2 # (the deadlines, whenever each thread goes on; on a busy machine some come late)
          go.close
          sleepers.each(&:join)
          [order.sort == (0...300).to_a, cancelled.map(&:value).uniq].to_json`, true));
        assert.deepEqual(out, [true, ['ok']]);
      } finally {
        await vm.close();
      }
    });
  }
});

describe('the waiting transport lets the host run while Ruby waits, with no scheduler asked for', { timeout: 300000 }, () => {
  for (const version of VERSIONS) {
    test(`ruby.wasm ${version}: sleep, IO.select, Queue#pop, Thread#join, Mutex#lock, ConditionVariable#wait`, async () => {
      const { vm, dispose } = await createRubyVM({ ruby: version });
      // a timer of this thread's: how often it ran during each wait
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      try {
        vm.eval(`$ticks = -> { JS.global.call(:__ticks).to_i }; nil`);
        globalThis.__ticks = () => ticks;
        const out = (await vm.evalAsync(`
          require 'json'
          seen = {}
          measure = ->(name, &work) { t = $ticks.call; work.call; seen[name] = $ticks.call - t }
          q = Queue.new
          m = Mutex.new
          cv = ConditionVariable.new
          measure.(:sleep) { sleep 0.2 }
          measure.(:select) { IO.select(nil, nil, nil, 0.2) }
          measure.(:pop) { Thread.new { sleep 0.2; q << 1 }; q.pop }
          measure.(:join) { Thread.new { sleep 0.2 }.join }
          measure.(:lock) { Thread.new { m.synchronize { sleep 0.2 } }; Thread.pass; m.synchronize {} }
          measure.(:wait) { Thread.new { sleep 0.2; m.synchronize { cv.signal } }; m.synchronize { cv.wait(m) } }
          seen.to_json`)).toString();
        for (const [name, n] of Object.entries(JSON.parse(out))) assert.ok(n >= 5, `${name}: the host's timer ran ${n} times in 200 ms`);
      } finally {
        clearInterval(timer);
        delete globalThis.__ticks;
        await dispose();
      }
    });

    test(`ruby.wasm ${version}: a POST after the server closed the kept-alive connection during sleep goes on a new connection`, async () => {
      const srv = await captureServer((req, conn, i, socket) => {
        const body = `${req.method} ${req.target} conn=${conn}`;
        if (req.target === '/idle') setTimeout(() => socket.end(), 50);
        return `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      });
      const { vm, dispose } = await createRubyVM({ ruby: version });
      try {
        const out = (await vm.evalAsync(`
          require 'json'
          Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
            a = h.get('/idle').body
            sleep 0.3 # the server closes the connection meanwhile
            [a, h.post('/after', 'x=1').body]
          end.to_json`)).toString();
        assert.deepEqual(JSON.parse(out), ['GET /idle conn=0', 'POST /after conn=1']);
        assert.equal(srv.conns[0].requests.length, 1, 'nothing was written to the closed connection');
      } finally {
        await dispose();
        await srv.close();
      }
    });

    test(`ruby.wasm ${version}: vm.eval with the waiting transport runs threads that sleep and wait on each other (the host cannot run there)`, async () => {
      const { vm, dispose } = await createRubyVM({ ruby: version });
      try {
        const out = vm.eval(`
          require 'json'
          q = Queue.new
          a = Thread.new { sleep 0.02; q << :a; :done_a }
          b = Thread.new { [q.pop, Thread.current.status] }
          m = Mutex.new
          c = Thread.new { m.synchronize { sleep 0.01; :c } }
          [a.value, b.value, m.synchronize { c.value }, Thread.list.size, (Thread.new { Thread.current.report_on_exception = false; Net::HTTP.get(URI('${base}/delay/1')) }.value rescue $!.class)].to_json`).toString();
        assert.deepEqual(JSON.parse(out), ['done_a', ['a', 'run'], 'c', 1, 'FiberError']);
      } finally {
        await dispose();
      }
    });
  }
});
