// 10 Net::HTTP.get calls in fibers (NetHttpWasm::Scheduler) to a route that
// answers after 50 ms, inside ruby.wasm (4.0 by default; `node
// benchmarks/rubywasm-fibers.mjs 3.4`; `--blocking` for the blocking
// transport), the server in another process. Each round opens 10 new
// connections.
//
// It measures the steady state: the first round (printed apart) loads
// net/http's code paths, and for the first seconds V8 compiles ruby.wasm's
// hot functions again with its optimizing compiler, in the background (on a
// 2-core machine, alongside the rounds). Warm-up rounds run for WARMUP_S
// seconds (default 3), then PASSES rounds (default 7) are timed: median,
// min and max.
import { spawn } from 'node:child_process';
import { createRubyVM } from '../js/ruby/node.mjs';

const SERVER = `
const http = require('node:http');
const s = http.createServer((req, res) => setTimeout(() => res.end('ok'), 50));
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

const args = process.argv.slice(2);
const blocking = args.includes('--blocking');
const version = args.find((a) => !a.startsWith('--')) || '4.0';
const passes = Number(process.env.PASSES || 7);
const warmup = Number(process.env.WARMUP_S ?? 3);
const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const { vm, dispose } = await createRubyVM({ ruby: version, tmp: false, blocking });
try {
  const code = `
    require 'json'
    def round10
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      NetHttpWasm::Scheduler.run do
        10.times { Fiber.schedule { Net::HTTP.get(URI('http://127.0.0.1:${port}/delay/50')) } }
      end
      (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 1000
    end
    first = round10
    warm = 0
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    while warm < 2 || Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < ${warmup}
      round10
      warm += 1
    end
    out = [] # (Integer#times, not Array#map: no waiting inside C iterators' blocks)
    ${passes}.times { out << round10 }
    { first: first, warm: warm, passes: out }.to_json`;
  const r = JSON.parse((blocking ? vm.eval(code) : await vm.evalAsync(code)).toString());
  const ms = r.passes.sort((a, b) => a - b);
  console.log(
    `ruby.wasm ${version}${blocking ? ' blocking' : ''}: 10 requests to /delay/50 in fibers: median ${ms[ms.length >> 1].toFixed(1)} ms ` +
      `(min ${ms[0].toFixed(1)}, max ${ms[ms.length - 1].toFixed(1)}, ${passes} passes; first round ${r.first.toFixed(1)} ms, then ${r.warm} warm-up rounds in ${warmup} s)`,
  );
} finally {
  await dispose();
  child.kill();
}
