// vm.evalAsync of a VM made by createRubyVM (Net::HTTP installed: the code
// goes through NetHttpWasm.__eval_async) against ruby.wasm's own evalAsync
// (RubyVM.prototype.evalAsync, called on the same kind of VM), as a program
// that hands Ruby work from JS call by call (a page's events, a server's
// requests) uses it: each pass starts one fresh process per kind,
// interleaved, which makes --warmup calls and then --calls more, timed.
// Per call: µs (one call after another, awaited), the Ruby objects still
// alive after GC.start, the JS heap still used after a full collection,
// and the VM's memory grown.
//
//   node benchmarks/rubywasm-evalasync.mjs [--passes 3] [--calls 5000] [--warmup 2000] [--code 'nil']
//                                          [--out benchmarks/results/rubywasm-evalasync]
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { cpus } from 'node:os';
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const { values: opt } = parseArgs({
  options: {
    passes: { type: 'string', default: '3' },
    calls: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '2000' },
    code: { type: 'string', default: 'nil' },
    out: { type: 'string', default: 'benchmarks/results/rubywasm-evalasync' },
    child: { type: 'string' }, // (the kind the process runs)
  },
  strict: true,
});
const count = (name) => {
  const n = Number(opt[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number above 0, not ${opt[name]}`);
  return n;
};
const KINDS = { installed: 'createRubyVM: vm.evalAsync', own: "ruby.wasm's own evalAsync" };

if (opt.child) {
  const { createRubyVM } = await import('../js/ruby/node.mjs');
  const { vm, dispose } = await createRubyVM({ tmp: false });
  const run = opt.child === 'own' ? (code) => Object.getPrototypeOf(vm).evalAsync.call(vm, code) : (code) => vm.evalAsync(code);
  const gc = async () => {
    for (let i = 0; i < 3; i++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return process.memoryUsage().heapUsed;
  };
  const live = () => Number(vm.eval('GC.start; GC.stat(:heap_live_slots)').toString());
  const memory = vm.instance.exports.memory;
  for (let i = 0; i < count('warmup'); i++) await run(opt.code);
  const n = count('calls');
  const [objects0, heap0, mem0] = [live(), await gc(), memory.buffer.byteLength];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await run(opt.code);
  const us = ((performance.now() - t0) * 1000) / n;
  const objects = (live() - objects0) / n;
  const heap = ((await gc()) - heap0) / n;
  const grown = (memory.buffer.byteLength - mem0) / 2 ** 20;
  await dispose();
  console.log(JSON.stringify({ us, objects, heap, grown }));
} else {
  const passes = count('passes');
  const rows = Object.fromEntries(Object.keys(KINDS).map((k) => [k, []]));
  for (let p = 0; p < passes; p++) {
    for (const kind of p % 2 ? Object.keys(KINDS).reverse() : Object.keys(KINDS)) {
      const args = ['--expose-gc', fileURLToPath(import.meta.url), '--child', kind, '--calls', opt.calls, '--warmup', opt.warmup, '--code', opt.code];
      const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${kind}: ${r.stderr}`);
      rows[kind].push(JSON.parse(r.stdout.trim().split('\n').pop()));
      process.stderr.write(`pass ${p + 1} ${kind} done\n`);
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)];
  const range = (a) => `${Math.min(...a).toFixed(1)}–${Math.max(...a).toFixed(1)}`;
  const cell = (k, f, d = 1) => `${median(rows[k].map((r) => r[f])).toFixed(d)} (${range(rows[k].map((r) => r[f]))})`;
  const lines = [
    `# vm.evalAsync: createRubyVM's against ruby.wasm's own`,
    '',
    `${new Date().toUTCString()} — ${cpus()[0].model.trim()} (${cpus().length} CPUs), Node ${process.version}; ${passes} passes, each a fresh process per kind, ${opt.warmup} calls and then ${opt.calls} timed of \`${opt.code}\`; medians (min–max)`,
    '',
    '| | µs a call | Ruby objects kept a call | JS heap kept a call, bytes | the VM\'s memory grown, MiB |',
    '|---|---:|---:|---:|---:|',
    ...Object.entries(KINDS).map(([k, title]) => `| ${title} | ${cell(k, 'us')} | ${cell(k, 'objects', 2)} | ${cell(k, 'heap', 0)} | ${cell(k, 'grown', 0)} |`),
    '',
    '```sh',
    `node benchmarks/rubywasm-evalasync.mjs --passes ${passes} --calls ${opt.calls} --warmup ${opt.warmup}`,
    '```',
    '',
  ];
  const text = lines.join('\n');
  console.log(text);
  if (opt.out) {
    mkdirSync(dirname(opt.out), { recursive: true });
    writeFileSync(`${opt.out}.md`, text);
    writeFileSync(`${opt.out}.json`, JSON.stringify({ date: new Date().toISOString(), machine: cpus()[0].model.trim(), cpus: cpus().length, node: process.version, options: { passes, calls: opt.calls, warmup: opt.warmup, code: opt.code }, rows }, null, 1));
  }
}
