// 10 Net::HTTP.get calls in fibers (NetHttpWasm::Scheduler) to a route that
// answers after 50 ms, inside ruby.wasm (4.0 by default; `node
// benchmarks/rubywasm-fibers.mjs 3.4`), the server in another process.
// Prints the median, min and max of several passes after a warm-up.
import { spawn } from 'node:child_process';
import { createRubyVM } from '../js/ruby/node.mjs';

const SERVER = `
const http = require('node:http');
const s = http.createServer((req, res) => setTimeout(() => res.end('ok'), 50));
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

const version = process.argv[2] || '4.0';
const passes = Number(process.env.PASSES || 7);
const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const { vm, dispose } = await createRubyVM({ ruby: version, tmp: false });
try {
  const ms = JSON.parse((await vm.evalAsync(`
    require 'json'
    def round10
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      NetHttpWasm::Scheduler.run do
        10.times { Fiber.schedule { Net::HTTP.get(URI('http://127.0.0.1:${port}/delay/50')) } }
      end
      (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 1000
    end
    3.times { round10 } # warm-up
    out = [] # (Integer#times, not Array#map: no waiting inside C iterators' blocks)
    ${passes}.times { out << round10 }
    out.to_json`)).toString()).sort((a, b) => a - b);
  console.log(`ruby.wasm ${version}: 10 requests to /delay/50 in fibers: median ${ms[ms.length >> 1].toFixed(1)} ms (min ${ms[0].toFixed(1)}, max ${ms[ms.length - 1].toFixed(1)}, ${passes} passes)`);
} finally {
  await dispose();
  child.kill();
}
