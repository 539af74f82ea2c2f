// Ruby that computes, with no network, in a VM made by createRubyVM with
// its defaults (V8 optimizes ruby.wasm's hot functions, tierUpTasks at a
// time), with tierUpTasks: null (as many at a time as V8 chooses), with
// tierUpFull: true (on Node 20, the largest functions optimized with V8's
// full register allocator), and with baseline code only (tierUp: false,
// which sets --liftoff-only for its process): each pass starts one fresh
// process per setting, interleaved,
// and runs every workload R times in it; the first run is a fresh VM's,
// the best of the others the warm figure.
//
//   node benchmarks/rubywasm-cpu.mjs [--passes 3] [--runs 7] [--ruby 4.0|3.4]
//
// Workloads: fib (method calls in the interpreter's loop), objects (small
// objects made and read), hash (Hash and String building, sort), json
// (JSON.generate + JSON.parse), regexp (scan, gsub with a block), erb (a
// template rendered).
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

const { values: opt } = parseArgs({
  options: {
    passes: { type: 'string', default: '3' },
    runs: { type: 'string', default: '7' },
    ruby: { type: 'string', default: '4.0' },
    child: { type: 'string' }, // (a setting's name: the process that runs it)
  },
  strict: true,
});
const RUNS = Number(opt.runs);

const WORKLOADS = `require 'json'; require 'erb'
def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)
class Pt
  attr_reader :x, :y
  def initialize(x, y) = (@x = x; @y = y)
  def +(o) = Pt.new(x + o.x, y + o.y)
end
TEMPLATE = ERB.new("<ul><% items.each do |i| %><li class='<%= i[:c] %>'><%= i[:name].upcase %> (<%= i[:n] * 2 %>)</li><% end %></ul>")
ITEMS = (1..300).map { |i| { c: "c#{i % 7}", name: "item #{i}", n: i } }
DATA = { 'a' => (1..2000).map { |i| { 'x' => i, 's' => 'str' * 5, 'f' => i * 1.5 } } }
TEXT = 'abc def 123 ghi 456 ' * 2000
WORK = {
  fib: -> { fib(27) },
  objects: -> { a = Pt.new(0, 0); 300_000.times { |i| a += Pt.new(i, 1) }; a.x },
  hash: -> { h = {}; 100_000.times { |i| h["k#{i}"] = i.to_s * 3 }; h.map { |k, v| k + v }.sort.size },
  json: -> { 20.times { JSON.parse(JSON.generate(DATA)) } },
  regexp: -> { 20.times { TEXT.scan(/\\d+/).size; TEXT.gsub(/[aeiou]/) { |m| m.upcase } } },
  erb: -> { items = ITEMS; 200.times { TEMPLATE.result(binding) } },
}
def ms
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  yield
  (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 1000
end
WORK.to_h { |k, w| [k, ${RUNS}.times.map { ms(&w) }] }.to_json`;

// createRubyVM's options of each setting, by name
const SETTINGS = {
  'defaults': {},
  'tierUpTasks: null': { tierUpTasks: null },
  'tierUpFull: true': { tierUpFull: true },
  'tierUp: false': { tierUp: false },
};

if (opt.child) {
  const { createRubyVM } = await import('../js/ruby/node.mjs');
  const { vm, dispose } = await createRubyVM({ ruby: opt.ruby, tmp: false, ...SETTINGS[opt.child] });
  process.stdout.write(String(vm.eval(WORKLOADS)));
  await dispose();
  process.exit(0);
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const results = Object.fromEntries(Object.keys(SETTINGS).map((s) => [s, []]));
for (let p = 0; p < Number(opt.passes); p++) {
  for (const s of Object.keys(SETTINGS)) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', s, '--runs', String(RUNS), '--ruby', opt.ruby], { encoding: 'utf8', timeout: 600000 });
    if (r.status !== 0) throw new Error(`${s}: ${r.stderr}`);
    results[s].push(JSON.parse(r.stdout));
  }
  process.stderr.write(`pass ${p + 1} done\n`);
}
const names = Object.keys(results.defaults[0]);
const fig = (s, k) => ({
  first: median(results[s].map((r) => r[k][0])),
  warm: median(results[s].map((r) => Math.min(...r[k].slice(1)))),
});
console.log(`Ruby that computes in ruby.wasm ${opt.ruby}, createRubyVM's defaults, tierUpTasks: null, tierUpFull: true and tierUp: false — ${new Date().toISOString()}`);
console.log(`machine: ${cpus()[0].model.trim()} (${availableParallelism()} CPUs), Node ${process.version}; ${opt.passes} passes, a fresh process per setting each, ${RUNS} runs of each workload; ms, median of the passes (first: a fresh VM's first run; warm: the best run after it)\n`);
const cols = Object.keys(SETTINGS);
console.log(`| workload | ${cols.map((c) => `${c}, first`).join(' | ')} | ${cols.map((c) => `${c}, warm`).join(' | ')} |`);
console.log(`|---|${cols.map(() => '---:|---:|').join('')}`);
for (const k of names) {
  const f = cols.map((c) => fig(c, k));
  console.log(`| ${k} | ${f.map((x) => x.first.toFixed(0)).join(' | ')} | ${f.map((x) => x.warm.toFixed(0)).join(' | ')} |`);
}
