// N threads (Thread.new { Net::HTTP.get_response(...) }, then
// threads.map(&:value)) each fetching a route that answers after D ms, in
// ruby.wasm (threads are NetHttpWasm::Scheduler's fibers) and in native MRI
// (Debian's ruby, real threads), the server in another process. Every pass
// is a fresh VM (and a fresh MRI process) running R rounds: the first round
// is what a new program sees, the others the warm state. Memory: the wasm
// memory's size (it never shrinks) and Ruby's heap after each round, MRI's
// resident set.
//
//   node benchmarks/rubywasm-threads.mjs [-n 100] [--delay 50] [--rounds 5]
//     [--passes 5] [--ruby 4.0|3.4] [--blocking] [--baseline] [--no-mri] [--env K=V]...
//
// --baseline makes the VMs with createRubyVM's tierUp: false (V8 runs
// ruby.wasm in its baseline code only: --liftoff-only, for this process).
// --env sets a variable of the VM's environment (RUBY_FIBER_VM_STACK_SIZE,
// RUBY_FIBER_MACHINE_STACK_SIZE: Ruby reads them at boot). Prints one line
// per pass and the medians; --json prints them as JSON too.
import { spawn, spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createRubyVM } from '../js/ruby/node.mjs';

const HELP = `usage: node benchmarks/rubywasm-threads.mjs [options]
  -n N           threads per round (default 100)
  --delay MS     the route answers after MS ms (default 50)
  --rounds R     rounds per pass, the first in a fresh VM (default 5)
  --passes P     passes, each a fresh VM and a fresh MRI process (default 5)
  --ruby V       ruby.wasm version: 4.0 (default) or 3.4
  --blocking     the blocking transport (vm.eval) instead of the waiting one
  --baseline     createRubyVM's tierUp: false (V8's baseline code only)
  --no-mri       skip native MRI
  --env K=V      a variable of the VM's environment (repeatable)
  --json         print the results as JSON too`;

let parsed;
try {
  parsed = parseArgs({
    options: {
      n: { type: 'string', short: 'n', default: '100' },
      delay: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '5' },
      passes: { type: 'string', default: '5' },
      ruby: { type: 'string', default: '4.0' },
      blocking: { type: 'boolean', default: false },
      baseline: { type: 'boolean', default: false },
      'no-mri': { type: 'boolean', default: false },
      env: { type: 'string', multiple: true, default: [] },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
} catch (e) {
  process.stderr.write(`${e.message}\n\n${HELP}\n`);
  process.exit(2);
}
const opt = parsed.values;
if (opt.help) {
  console.log(HELP);
  process.exit(0);
}
const n = Number(opt.n);
const delay = Number(opt.delay);
const rounds = Number(opt.rounds);
const passes = Number(opt.passes);
const { ruby, blocking, baseline } = opt;
const mri = !opt['no-mri'];
const env = {};
for (const kv of opt.env) {
  const [k, ...v] = kv.split('=');
  env[k] = v.join('=');
}

const SERVER = `
const http = require('node:http');
const s = http.createServer((req, res) => setTimeout(() => res.end(req.url), ${delay}));
s.keepAliveTimeout = 1000;
s.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => console.log(s.address().port));`;

// One round; the same code in both Rubies. Its value: [ms, answered].
const ROUND = `
def __round(n, base)
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  threads = Array.new(n) { |i| Thread.new { Net::HTTP.get_response(URI("#{base}?#{i}")) } }
  res = threads.map(&:value)
  ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 1000
  [ms, res.each_with_index.count { |r, i| r.code == '200' && r.body == "/delay/${delay}?#{i}" }]
end`;

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f1 = (x) => x.toFixed(1);
const mib = (b) => b / 1048576;

async function wasmPass(base) {
  const { vm, dispose } = await createRubyVM({ ruby, tmp: false, blocking, env, ...(baseline ? { tierUp: false } : {}) });
  const memory = vm.instance.exports.memory;
  const run = async (code) => String(blocking ? vm.eval(code) : await vm.evalAsync(code));
  try {
    await run(`require 'net/http'; require 'json'; ${ROUND}; nil`);
    const heap = () => run('GC.start; [GC.stat(:heap_live_slots), GC.count].to_json').then(JSON.parse);
    const mem0 = memory.buffer.byteLength;
    const [slots0] = await heap();
    const out = [];
    for (let r = 0; r < rounds; r++) {
      const [ms, ok] = JSON.parse(await run(`__round(${n}, '${base}/delay/${delay}').to_json`));
      const mem = memory.buffer.byteLength;
      const gcs = Number(await run('GC.count'));
      const [slots] = await heap();
      out.push({ ms, ok, memMiB: mib(mem - mem0), slots: slots - slots0, gcs });
    }
    return { mem0MiB: mib(mem0), rounds: out };
  } finally {
    await dispose();
  }
}

function mriPass(base) {
  const code = `require 'net/http'; require 'json'; ${ROUND}
rss = -> { File.read('/proc/self/statm').split[1].to_i * 4096 }
r0 = rss.()
out = ${rounds}.times.map { ms, ok = __round(${n}, '${base}/delay/${delay}'); { ms: ms, ok: ok, rssMiB: (rss.() - r0) / 1048576.0 } }
print({ rounds: out }.to_json)`;
  const r = spawnSync('ruby', ['-e', code], { encoding: 'utf8', timeout: 600000 });
  if (r.status !== 0) throw new Error(`ruby: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const base = `http://127.0.0.1:${port}`;
const label = `ruby.wasm ${ruby}${blocking ? ' blocking' : ''}${baseline ? ' tierUp: false' : ''}${Object.keys(env).length ? ` ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`;
const results = { n, delay, rounds, passes, wasm: [], mri: [] };
try {
  for (let p = 0; p < passes; p++) {
    // interleaved: MRI, then ruby.wasm, in each pass
    if (mri) {
      const m = mriPass(base);
      results.mri.push(m);
      const warm = m.rounds.slice(1).map((x) => x.ms);
      console.log(`pass ${p + 1} MRI ${RUBY_VERSION()}: first ${f1(m.rounds[0].ms)} ms, warm median ${f1(median(warm))} ms, answered ${m.rounds.map((x) => x.ok).join('/')}, RSS +${f1(m.rounds.at(-1).rssMiB)} MiB`);
    }
    const w = await wasmPass(base);
    results.wasm.push(w);
    const warm = w.rounds.slice(1).map((x) => x.ms);
    console.log(
      `pass ${p + 1} ${label}: first ${f1(w.rounds[0].ms)} ms, warm median ${f1(median(warm))} ms, answered ${w.rounds.map((x) => x.ok).join('/')}, ` +
        `memory ${f1(w.mem0MiB)} MiB +${w.rounds.map((x) => f1(x.memMiB)).join('/')} MiB, live slots +${w.rounds.map((x) => x.slots).join('/')}, GCs ${w.rounds.at(-1).gcs}`,
    );
  }
  const sum = (rs) => ({
    first: median(rs.map((x) => x.rounds[0].ms)),
    warm: median(rs.map((x) => median(x.rounds.slice(1).map((y) => y.ms)))),
  });
  const w = sum(results.wasm);
  let line = `${n} threads × /delay/${delay}, medians of ${passes} passes: ${label} first ${f1(w.first)} ms, warm ${f1(w.warm)} ms` +
    `, memory growth by the last round ${f1(median(results.wasm.map((x) => x.rounds.at(-1).memMiB)))} MiB`;
  if (mri) {
    const m = sum(results.mri);
    line += `; MRI first ${f1(m.first)} ms, warm ${f1(m.warm)} ms (ruby.wasm/MRI: first ${(w.first / m.first).toFixed(2)}×, warm ${(w.warm / m.warm).toFixed(2)}×)`;
  }
  console.log(line);
  if (opt.json) console.log(JSON.stringify(results));
} finally {
  child.kill();
}

function RUBY_VERSION() {
  return spawnSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' }).stdout;
}
