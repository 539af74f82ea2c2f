// From a fresh process to full speed: a ruby.wasm 4.0 VM's boot and its
// first requests, against native MRI doing the same, side by side in one
// run. Each pass starts every client in a fresh child process, against one
// local server in another (benchmarks/clients/server.mjs, 127.0.0.1).
//
//   node benchmarks/rubywasm-boot.mjs [--passes 5] [--transport blocking|waiting]
//                                     [--against DIR] [--out benchmarks/results/rubywasm-boot]
//                                     [--flags='--v8-flag ...']... [--zeroing] [--quick]
//
// Clients:
//   MRI            Debian's ruby, `ruby -rnet/http -e ...`
//   createRubyVM   net-http-wasm/ruby's createRubyVM (its defaults; --transport)
//   README         the README's first example: WebAssembly.compile of
//                  ruby+stdlib.wasm, RubyVM.instantiateModule, installNetHttp
// Figures (ms, or µs per request; median of the passes, min–max):
//   to Ruby        process start → the VM's first eval returns (MRI: the
//                  script's first line runs, net/http loaded); for README,
//                  also its parts: compile (read + WebAssembly.compile),
//                  instantiate (ruby.wasm's own init included), first eval
//   setup          createRubyVM from its call to its return (its own parts:
//                  compile, instantiate, `require 'rubygems'`); README:
//                  installNetHttp, then `require 'net/http'`
//   to response    process start → the first response read
//   CPU, GCs       the process's CPU time (all threads) until ready to make
//                  the first request, and V8's full garbage collections
//                  until then (from --trace-gc; each growth of a large wasm
//                  memory may cost one) and during the requests
//   then, the same Ruby in every client: the first request (a new
//   connection), the first 100 kept-alive requests, 300 more (warm-up),
//   1,000 kept-alive, 200 new connections, each a GET of 2 KiB.
//   exit           the process's last output → its end (it ends as a
//                  program does, when nothing is left to do)
// --against DIR: the ruby.wasm clients also run with another checkout's
// bridge (DIR/js/ruby/node.mjs, e.g. an older commit's `git archive` with
// node_modules linked), interleaved with this one's: before/after in one run.
// --flags: the ruby.wasm clients also run in node processes started with
// these flags (V8's among them), one more column each (repeatable).
// --zeroing: the ruby.wasm clients also run with the module as it is
// (createRubyVM's lazyZeroing: false; README: as written) and with only its
// memset patched (patchRubyWasm(bytes, { mmap: false }), the module passed
// compiled), and the README example with patchRubyWasm too.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { fork, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');

function usage() {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  return text.slice(0, text.indexOf('\nimport')).replace(/^\/\/ ?/gm, '');
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      passes: { type: 'string' },
      transport: { type: 'string', default: 'blocking' },
      against: { type: 'string' },
      out: { type: 'string' },
      flags: { type: 'string', multiple: true, default: [] },
      zeroing: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      child: { type: 'string' }, // (internal: one client's run, as JSON)
    },
    strict: true,
    allowPositionals: false,
  });
} catch (e) {
  process.stderr.write(`${e.message}\n\n${usage()}\n`);
  process.exit(2);
}
const opt = parsed.values;
if (opt.help) {
  process.stdout.write(`${usage()}\n`);
  process.exit(0);
}

// The same Ruby for native MRI and ruby.wasm: the durations (ms) of each
// step, the bodies checked.
const WORKLOAD = `
def nhw_now = Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_millisecond)
def nhw_check(res) = (raise "bad response #{res.code} #{res.body&.bytesize}" unless res.code == '200' && res.body.bytesize == 2048)
def nhw_ka(port, n) = Net::HTTP.start('127.0.0.1', port) { |h| i = 0; while i < n; nhw_check(h.request(Net::HTTP::Get.new('/bytes/2048'))); i += 1; end }
def nhw_nc(port, n) = (i = 0; while i < n; Net::HTTP.start('127.0.0.1', port) { |h| nhw_check(h.request(Net::HTTP::Get.new('/bytes/2048'))) }; i += 1; end)
def nhw_workload(port)
  out = []
  [[:nc, 1], [:ka, 100], [:ka, 300], [:ka, 1000], [:nc, 200]].each do |kind, n|
    t = nhw_now
    kind == :ka ? nhw_ka(port, n) : nhw_nc(port, n)
    out << (nhw_now - t)
  end
  out.join(',')
end
`;
const STEPS = [
  { id: 'first', label: 'first request (new connection), ms', n: 1, unit: 'ms' },
  { id: 'ka100', label: 'first 100 kept-alive, µs/request', n: 100 },
  { id: 'ka300', label: 'next 300 kept-alive, µs/request', n: 300 },
  { id: 'ka1000', label: '1,000 kept-alive (after 400), µs/request', n: 1000 },
  { id: 'nc200', label: '200 new connections, µs/request', n: 200 },
];

const now = () => performance.timeOrigin + performance.now();

// ---- a child: one client, from a fresh process ----

async function child(spec) {
  const out = { marks: {} };
  const mark = (k, v) => (out.marks[k] = v);
  // the clock starts where this process did
  const start = spec.spawnedAt;
  // what the VM holds once it is made: the process's resident set, the
  // VM's linear memory
  const booted = (vm) => {
    mark('rss', process.memoryUsage().rss / 2 ** 20);
    mark('memory', vm.instance.exports.memory.buffer.byteLength / 2 ** 20);
  };
  const ready = () => {
    const cpu = process.cpuUsage();
    mark('cpuReady', (cpu.user + cpu.system) / 1000);
    mark('readyAt', performance.now());
  };
  if (spec.kind === 'create') {
    const v8 = await import('node:v8');
    v8.setFlagsFromString('--no-incremental-marking');
    const { RubyVM } = await import(pathToFileURL(createRequireFrom(spec.dir).resolve('@ruby/wasm-wasi')).href);
    // createRubyVM's own parts, seen from outside it
    const compile = WebAssembly.compile;
    WebAssembly.compile = async (...a) => {
      const t = now();
      try {
        return await compile.apply(WebAssembly, a);
      } finally {
        mark('compile', now() - t);
      }
    };
    const instantiate = RubyVM.instantiateModule;
    RubyVM.instantiateModule = async (...a) => {
      const t = now();
      try {
        return await instantiate.apply(RubyVM, a);
      } finally {
        mark('instantiate', now() - t);
      }
    };
    const evalOrig = RubyVM.prototype.eval;
    RubyVM.prototype.eval = function (code) {
      const t = now();
      try {
        return evalOrig.call(this, code);
      } finally {
        if (/require 'rubygems'/.test(code)) mark('rubygems', (out.marks.rubygems || 0) + now() - t);
      }
    };
    const { createRubyVM, patchRubyWasm } = await import(pathToFileURL(`${spec.dir}/js/ruby/node.mjs`).href);
    const t = now();
    const zeroing = {};
    if (spec.zeroing === 'stock') zeroing.lazyZeroing = false;
    if (spec.zeroing === 'memset') {
      const bytes = readFileSync(createRequireFrom(spec.dir).resolve('@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      patchRubyWasm(bytes, { mmap: false });
      zeroing.ruby = await WebAssembly.compile(bytes);
    }
    const { vm, dispose } = await createRubyVM({ blocking: spec.blocking, ...zeroing });
    mark('setup', now() - t);
    booted(vm);
    // the first eval of a program
    vm.eval('nil');
    mark('toRuby', now() - start);
    ready();
    RubyVM.prototype.eval = evalOrig;
    out.steps = await workload(vm, spec, start, out);
    await dispose();
  } else {
    const v8 = await import('node:v8');
    v8.setFlagsFromString('--no-incremental-marking');
    const req = createRequireFrom(spec.dir);
    const { WASI } = await import('node:wasi');
    const { RubyVM } = await import(pathToFileURL(req.resolve('@ruby/wasm-wasi')).href);
    const { installNetHttp, patchRubyWasm } = await import(pathToFileURL(`${spec.dir}/js/ruby/node.mjs`).href);
    let t = now();
    const bytes = readFileSync(req.resolve('@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
    if (spec.zeroing === 'memset' || spec.zeroing === 'lazy') patchRubyWasm(bytes, { mmap: spec.zeroing === 'lazy' });
    const module = await WebAssembly.compile(bytes);
    mark('compile', now() - t);
    t = now();
    const wasip1 = new WASI({ version: 'preview1', returnOnExit: true, args: ['ruby'], env: {}, preopens: {} });
    const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
    mark('instantiate', now() - t);
    t = now();
    vm.eval('$stdout.sync = true; nil');
    mark('firstEval', now() - t);
    mark('toRuby', now() - start);
    t = now();
    const handle = installNetHttp(vm, { blocking: spec.blocking });
    mark('setup', now() - t);
    t = now();
    vm.eval("require 'net/http'");
    mark('requireNetHttp', now() - t);
    booted(vm);
    ready();
    out.steps = await workload(vm, spec, start, out);
    await handle.uninstall();
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// (packages as DIR's own node_modules resolve them)
function createRequireFrom(dir) {
  return createRequire(`${dir}/package.json`);
}

async function workload(vm, spec, start, out) {
  await vm.evalAsync(WORKLOAD);
  const t = now();
  const r = String(await vm.evalAsync(`nhw_workload(${spec.port})`)).split(',').map(Number);
  out.marks.toResponse = t - start + r[0];
  return r;
}

// ---- the parent ----

// A child's result: one line of JSON, its last output but for V8's traces
// of the collections made while it ends.
const RESULT = '{"marks":';

function runChild(args, input) {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(args[0], args.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    let text = '';
    let doneAt = null; // when its result came (its last line but --trace-gc's)
    p.stdout.on('data', (d) => {
      text += d;
      if (doneAt == null && text.split('\n').slice(0, -1).some((l) => l.startsWith(RESULT))) doneAt = now();
    });
    p.on('error', reject);
    p.on('close', (code) => {
      const exitMs = now() - doneAt;
      if (code !== 0) return reject(new Error(`${args.slice(0, 2).join(' ')}… exited with ${code}: ${text}`));
      const all = text.trim().split('\n');
      const at = all.findIndex((l) => l.startsWith(RESULT));
      if (at < 0) return reject(new Error(`${args.slice(0, 2).join(' ')}… gave no result: ${text}`));
      const r = JSON.parse(all[at]);
      const lines = all.slice(0, at);
      // --trace-gc's lines: V8's full collections until ready to request
      // (each growth of a large wasm memory may cost one)
      const full = lines.map((l) => /(\d+) ms: Mark-Compact .*?MB, ([\d.]+) \//.exec(l)).filter(Boolean);
      if (r.marks.readyAt != null) {
        const before = full.filter((m) => Number(m[1]) < r.marks.readyAt);
        r.marks.gcs = before.length;
        r.marks.gcMs = before.reduce((x, m) => x + Number(m[2]), 0);
        r.marks.gcsAfter = full.length - before.length;
      }
      r.marks.exitMs = exitMs;
      resolvePromise(r);
    });
    if (input) p.stdin.end(input);
    else p.stdin.end();
  });
}

function nativeClient() {
  const v = spawnSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' });
  if (v.status !== 0) return null;
  return {
    name: `MRI ${v.stdout}`,
    async run(srv) {
      const spawnedAt = now();
      const code = `nhw_t0 = Process.clock_gettime(Process::CLOCK_REALTIME, :float_millisecond)
nhw_cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :float_millisecond)
${WORKLOAD}
t = nhw_now
steps = nhw_workload(${srv.port}).split(',').map(&:to_f)
require 'json'
puts({ marks: { cpuReady: nhw_cpu, toRuby: nhw_t0 - ${spawnedAt}, toResponse: nhw_t0 - ${spawnedAt} + (nhw_now - t) + steps[0] }, steps: steps }.to_json)`;
      return runChild(['ruby', '-rnet/http', '-e', code]);
    },
  };
}

function wasmClient(kind, dir, label, flags = [], zeroing = null) {
  return {
    name: `${kind === 'create' ? 'createRubyVM' : 'README'}${label}${flags.length ? ` ${flags.join(' ')}` : ''}${zeroing ? ` (${ZEROING[kind][zeroing]})` : ''}`,
    async run(srv) {
      const spawnedAt = now();
      const spec = { kind, dir, port: srv.port, blocking: opt.transport !== 'waiting', spawnedAt, zeroing };
      return runChild([process.execPath, '--no-warnings', '--trace-gc', ...flags, fileURLToPath(import.meta.url), '--child', JSON.stringify(spec)]);
    },
  };
}

// --zeroing's columns
const ZEROING = {
  create: { stock: 'lazyZeroing: false', memset: 'memset patched only' },
  readme: { memset: 'memset patched only', lazy: 'patchRubyWasm' },
};

function startServer() {
  return new Promise((resolvePromise, reject) => {
    const c = fork(`${here}/clients/server.mjs`, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    c.once('message', (info) => resolvePromise({ ...info, port: Number(new URL(info.http).port), child: c }));
    c.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
}

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function main() {
  if (!['blocking', 'waiting'].includes(opt.transport)) {
    process.stderr.write(`--transport must be blocking or waiting, not ${opt.transport}\n`);
    process.exit(2);
  }
  const passes = Number(opt.passes ?? (opt.quick ? 1 : 5));
  if (!(Number.isInteger(passes) && passes > 0)) {
    process.stderr.write(`--passes must be a positive integer, not ${opt.passes}\n`);
    process.exit(2);
  }
  const out = opt.out ?? (opt.quick ? null : 'benchmarks/results/rubywasm-boot');
  const srv = await startServer();
  const clients = [];
  const mri = nativeClient();
  if (mri) clients.push(mri);
  for (const kind of ['create', 'readme']) {
    if (opt.against) clients.push(wasmClient(kind, resolve(opt.against), ` (${opt.against})`));
    clients.push(wasmClient(kind, root, ''));
    for (const f of opt.flags) clients.push(wasmClient(kind, root, '', f.split(/\s+/).filter(Boolean)));
    if (opt.zeroing) for (const z of Object.keys(ZEROING[kind])) clients.push(wasmClient(kind, root, '', [], z));
  }
  const runs = Object.fromEntries(clients.map((c) => [c.name, []]));
  for (let pass = 0; pass < passes; pass++) {
    for (const c of pass % 2 ? [...clients].reverse() : clients) runs[c.name].push(await c.run(srv));
    process.stderr.write(`pass ${pass + 1}/${passes} done\n`);
  }
  srv.child.kill();
  report(clients, runs, passes, out);
}

function report(clients, runs, passes, out) {
  const cpus = os.cpus();
  const machine = `${cpus[0].model.trim()} (${cpus.length} CPUs), ${os.platform()} ${os.release()}, Node ${process.version}`;
  const date = new Date().toISOString();
  const rows = [
    ['process start → first eval of Ruby, ms', (r) => r.marks.toRuby],
    ['  compile (read + WebAssembly.compile), ms', (r) => r.marks.compile],
    ['  instantiate (ruby.wasm init included), ms', (r) => r.marks.instantiate],
    ['  first eval, ms', (r) => r.marks.firstEval],
    ['setup (createRubyVM / installNetHttp), ms', (r) => r.marks.setup],
    ["  createRubyVM's require 'rubygems', ms", (r) => r.marks.rubygems],
    ["  then require 'net/http', ms", (r) => r.marks.requireNetHttp],
    ['process start → first response, ms', (r) => r.marks.toResponse],
    ['CPU time (all threads) until ready to request, ms', (r) => r.marks.cpuReady],
    ["V8's full GCs until then", (r) => r.marks.gcs],
    ['  their time, ms', (r) => r.marks.gcMs],
    ['resident memory once made (process RSS), MiB', (r) => r.marks.rss],
    ["  the VM's linear memory, MiB", (r) => r.marks.memory],
    ...STEPS.map((s, i) => [s.label, (r) => (s.unit === 'ms' ? r.steps[i] : (r.steps[i] / s.n) * 1000)]),
    ["V8's full GCs during the requests", (r) => r.marks.gcsAfter],
    ['process exit after its last output, ms', (r) => r.marks.exitMs],
  ];
  const base = clients[0].name;
  const lines = [];
  lines.push(`A fresh ruby.wasm 4.0 VM (${opt.transport} transport) against native MRI — ${date}`);
  lines.push(`machine: ${machine}; ${passes} passes, each client a fresh process; median (min–max), ratio to ${base}`);
  lines.push('');
  lines.push(`| | ${clients.map((c) => c.name).join(' | ')} |`);
  lines.push(`|---|${clients.map(() => '---:').join('|')}|`);
  const json = { date, machine, passes, transport: opt.transport, clients: {} };
  for (const [label, get] of rows) {
    const b = runs[base].map(get).filter((x) => x != null);
    const cells = clients.map((c) => {
      const v = runs[c.name].map(get).filter((x) => x != null);
      if (!v.length) return '';
      const m = median(v);
      ((json.clients[c.name] ||= {})[label.trim()] = { median: +m.toFixed(2), runs: v.map((x) => +x.toFixed(2)) });
      const ratio = b.length && c.name !== base ? ` ${(m / median(b)).toFixed(1)}×` : '';
      return `${m.toFixed(m < 10 ? 1 : 0)} (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})${ratio}`;
    });
    lines.push(`| ${label} | ${cells.join(' | ')} |`);
  }
  const text = lines.join('\n');
  console.log(text);
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(`${out}.md`, `${text}\n`);
    writeFileSync(`${out}.json`, `${JSON.stringify(json, null, 2)}\n`);
  }
}

// (a child ends as a program does, when nothing is left to do: Node then
// waits for V8's background work, ruby.wasm's optimizing included)
if (opt.child) await child(JSON.parse(opt.child));
else {
  await main();
  process.exit(0);
}
