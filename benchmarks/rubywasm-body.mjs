// A large body read whole with Net::HTTP.get: native MRI and ruby.wasm 4.0
// (createRubyVM, blocking and waiting transports) side by side, each
// client a fresh process per pass, against one server in another process.
//
//   node benchmarks/rubywasm-body.mjs [--mb 100] [--passes 3] [--ruby 4.0]
//
// Per client, the median of the passes (min–max): the time of the
// Net::HTTP.get, its throughput, the process's resident memory once it is
// ready (after a small request), its peak (VmHWM) by the end of the body,
// and what the body cost over the idle process, in bodies: (peak − idle) ÷
// the body's size.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const SERVER = `
const http = require('node:http');
const chunk = Buffer.alloc(1 << 20, 120);
const s = http.createServer((req, res) => {
  const n = Number(req.url.slice(1));
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': n });
  let left = n;
  const more = () => {
    while (left > 0) {
      const k = Math.min(left, chunk.length);
      left -= k;
      if (!res.write(k === chunk.length ? chunk : chunk.subarray(0, k))) return void res.once('drain', more);
    }
    res.end();
  };
  more();
});
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

// What each client runs: idle RSS once ready, then the body, then the peak.
const RUBY = `
def nhw_kib(field) = File.read('/proc/self/status')[/^#{field}:\\s+(\\d+)/, 1].to_i
def nhw_body(base, n)
  Net::HTTP.get(URI("#{base}/1000"))
  GC.start
  idle = nhw_kib('VmRSS')
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  got = Net::HTTP.get(URI("#{base}/#{n}")).bytesize
  ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 1000
  raise "read #{got} bytes of #{n}" unless got == n
  [ms, idle, nhw_kib('VmHWM')].join(',')
end`;

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '100' },
    passes: { type: 'string', default: '3' },
    ruby: { type: 'string', default: '4.0' },
    child: { type: 'string' },
    base: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  process.stdout.write(`${text.slice(0, text.indexOf('\nimport')).replace(/^\/\/ ?/gm, '')}\n`);
  process.exit(0);
}

const n = Math.round(Number(values.mb) * 1e6);

if (values.child) {
  // a ruby.wasm client: the VM's own process (RSS is the process's: the
  // VM's memory, and the JS around it; /proc is the host's, read from JS)
  const { createRubyVM } = await import('../js/ruby/node.mjs');
  const blocking = values.child === 'blocking';
  const { vm, dispose } = await createRubyVM({ ruby: values.ruby, blocking });
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  const run = (code) => (blocking ? vm.eval(code) : vm.evalAsync(code));
  await run(`require 'net/http'; Net::HTTP.get(URI("${values.base}/1000")); GC.start; nil`);
  const idle = kib('VmRSS');
  const t = performance.now();
  const got = Number((await run(`Net::HTTP.get(URI("${values.base}/${n}")).bytesize`)).toString());
  const ms = performance.now() - t;
  if (got !== n) throw new Error(`read ${got} bytes of ${n}`);
  console.log([ms, idle, kib('VmHWM')].join(','));
  await dispose();
  process.exit(0);
}

const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
const base = `http://127.0.0.1:${port}`;
const here = fileURLToPath(import.meta.url);
const clients = [
  ['MRI native', () => spawnSync('ruby', ['-rnet/http', '-e', `${RUBY}\nputs nhw_body(${JSON.stringify(base)}, ${n})`], { encoding: 'utf8' })],
  [`ruby.wasm ${values.ruby} blocking`, () => spawnSync(process.execPath, [here, '--child', 'blocking', '--base', base, '--mb', values.mb, '--ruby', values.ruby], { encoding: 'utf8' })],
  [`ruby.wasm ${values.ruby} waiting`, () => spawnSync(process.execPath, [here, '--child', 'waiting', '--base', base, '--mb', values.mb, '--ruby', values.ruby], { encoding: 'utf8' })],
];
const rows = new Map(clients.map(([name]) => [name, []]));
try {
  for (let pass = 0; pass < Number(values.passes); pass++) {
    for (const [name, run] of clients) {
      const r = run();
      if (r.status !== 0) throw new Error(`${name}: ${r.stderr}`);
      const [ms, idle, peak] = r.stdout.trim().split('\n').pop().split(',').map(Number);
      rows.get(name).push({ ms, mbs: n / 1e6 / (ms / 1000), idle: idle / 1024, peak: peak / 1024, bodies: ((peak - idle) * 1024) / n });
    }
  }
} finally {
  server.kill();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cell = (xs, digits = 0) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
const ruby = spawnSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' }).stdout;
console.log(`A ${values.mb} MB body read with Net::HTTP.get — ${new Date().toISOString()}`);
console.log(`machine: ${os.cpus()[0].model.trim()} (${os.cpus().length} CPUs), Node ${process.version}, MRI ${ruby}; ${values.passes} passes, each client a fresh process; median (min–max)\n`);
console.log('| client | time, ms | MB/s | idle RSS, MiB | peak RSS, MiB | (peak − idle) ÷ body |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, r] of rows) {
  const col = (k, d) => cell(r.map((x) => x[k]), d);
  console.log(`| ${name} | ${col('ms')} | ${col('mbs')} | ${col('idle')} | ${col('peak')} | ${col('bodies', 2)} |`);
}
