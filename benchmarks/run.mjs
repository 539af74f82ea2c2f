// The comparative benchmark: every runtime does the same operations on the
// same inputs; outputs are checked by sha256 against ours before anything is
// timed. Writes benchmarks/results/{latest.md,latest.json,latest.svg}.
//
//   npm run bench [-- --ops request,response --runtimes mri,wasm-clang --passes 7 --min-ms 200]
//   npm run bench -- --quick      (CI: the sha256 gate and one short pass of every column)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync, readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { inputs } from './inputs.mjs';
import { options } from './options.mjs';

const here = new URL('./', import.meta.url).pathname;
const root = new URL('../', import.meta.url).pathname;
const args = options(import.meta.url, { valued: ['ops', 'runtimes', 'passes', 'min-ms'], flags: ['quick'] });
const opt = args.get;
const quick = args.has('quick');
const ALL_OPS = ['request', 'response', 'formEncode', 'formDecode', 'canonicalize', 'incremental'];
const OP_TITLES = {
  request: 'request-serialize', response: 'response-parse', formEncode: 'form-encode',
  formDecode: 'form-decode', canonicalize: 'header-canonicalize', incremental: 'incremental 1 MiB / 16 KiB',
};
const ops = opt('ops', ALL_OPS.join(',')).split(',');
const passes = Number(opt('passes', quick ? 1 : 7));
const minNs = Math.round(Number(opt('min-ms', quick ? 1 : 200)) * 1e6);

const tmp = `${root}build/bench`;
mkdirSync(tmp, { recursive: true });
const inputsJson = `${tmp}/inputs.json`;
writeFileSync(inputsJson, JSON.stringify(inputs));

// The native driver's inputs: length-prefixed fields.
function nativeInputs() {
  const parts = [];
  const f = (s) => {
    const b = Buffer.from(String(s));
    parts.push(Buffer.from(`${b.length}:`), b, Buffer.from('\n'));
  };
  const { uri, header, form } = inputs.request;
  f(uri); f(header[0]); f(header[1]);
  f(form.length);
  for (const [k, v] of form) { f(k); f(v); }
  f(inputs.formPairs.length);
  for (const [k, v] of inputs.formPairs) {
    f(k);
    if (v == null) { f(0); f(0); } else if (Array.isArray(v)) { f(2); f(v.length); v.forEach(f); } else { f(1); f(1); f(v); }
  }
  f(inputs.formString);
  f(inputs.fields.length);
  for (const [k, v] of inputs.fields) { f(k); f(v); }
  f(inputs.response); f(inputs.bigResponse); f(inputs.feedSize);
  writeFileSync(`${tmp}/inputs.txt`, Buffer.concat(parts));
  return `${tmp}/inputs.txt`;
}

function buildNative() {
  const exe = `${tmp}/bench-native`;
  // the codec's C without the wasm ABI
  const src = readdirSync(`${root}src`).filter((f) => f.endsWith('.c')).sort().map((f) => `${root}src/${f}`);
  const r = spawnSync('cc', ['-std=c11', '-O2', '-o', exe, `${here}native/bench.c`, `${here}native/bench_response.c`, ...src], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`native build failed:\n${r.stderr}`);
  return exe;
}

const RUNTIMES = {
  'wasm-clang': { title: 'net-http-wasm (clang/wasi-libc), JS API', cmd: () => ['node', [`${here}js-driver.mjs`, 'wasm-clang']] },
  'wasm-emcc': { title: 'net-http-wasm (Emscripten), JS API', cmd: () => ['node', [`${here}js-driver.mjs`, 'wasm-emcc']] },
  'native-c': { title: 'same C, native -O2', cmd: () => [buildNative(), [nativeInputs()]] },
  mri: { title: 'MRI native (Debian ruby)', cmd: () => ['ruby', [`${here}ruby/bench.rb`, inputsJson]], b64: true },
  'mri-yjit': { title: 'MRI native --yjit', cmd: () => ['ruby', ['--yjit', `${here}ruby/bench.rb`, inputsJson]], b64: true },
  'rubywasm-4.0': { title: 'ruby.wasm 4.0 net/http in Node', cmd: () => ['node', [`${here}rubywasm-driver.mjs`, inputsJson]], b64: true },
  floor: { title: 'marshalling floor (copy in/out, no work)', cmd: () => ['node', [`${here}js-driver.mjs`, 'floor']], peer: true },
  'wasm-calls': { title: "the JS API's calls into the module alone (clang)", cmd: () => ['node', [`${here}js-driver.mjs`, 'wasm-calls']], peer: true },
  'js-peers': { title: 'JS built-ins: URLSearchParams, Headers, node llhttp', cmd: () => ['node', [`${here}js-driver.mjs`, 'js-peers']], peer: true },
  'undici-llhttp': { title: "undici's llhttp (wasm)", cmd: () => ['node', [`${here}js-driver.mjs`, 'undici-llhttp']], peer: true },
};
// the Emscripten build exists once `bash build.sh` has run (it is not committed)
const haveEmcc = existsSync(`${root}wasm/nethttp.emcc.wasm`);
if (!haveEmcc) console.error('wasm/nethttp.emcc.wasm is not built (bash build.sh): its column is left out');
const runtimes = opt('runtimes', Object.keys(RUNTIMES).filter((n) => n !== 'wasm-emcc' || haveEmcc).join(',')).split(',');

function run(name, mode) {
  const [cmd, args] = RUNTIMES[name].cmd();
  const r = spawnSync(cmd, [...args, ops.join(','), String(passes), String(minNs), mode], {
    encoding: 'utf8', maxBuffer: 1 << 28, cwd: root, env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  if (r.status !== 0) throw new Error(`${name} ${mode} failed (${r.status}):\n${r.stderr.slice(-2000)}`);
  const out = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^(\w+) (.*)$/.exec(line);
    if (m && ops.includes(m[1])) out[m[1]] = m[2];
  }
  return out;
}

const sha = (b) => createHash('sha256').update(b).digest('hex');
const machine = `${cpus()[0].model.trim()}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
console.log(`# ${machine}`);

// 1. the gate
const gate = {};
for (const name of runtimes) {
  const g = run(name, 'gate');
  gate[name] = {};
  for (const op of ops) {
    const v = g[op];
    if (v === undefined || v === '-') gate[name][op] = 'n/a';
    else if (v === 'nocheck') gate[name][op] = 'nocheck';
    else gate[name][op] = RUNTIMES[name].b64 || name === 'native-c' ? sha(Buffer.from(v, 'base64')) : v;
  }
}
const reference = gate['wasm-clang'] || run('wasm-clang', 'gate');
const status = {};
let gateFailed = false;
for (const name of runtimes) {
  status[name] = {};
  for (const op of ops) {
    const g = gate[name][op];
    if (g === 'n/a') status[name][op] = 'n/a';
    else if (RUNTIMES[name].peer) status[name][op] = 'different output';
    else if (g === reference[op]) status[name][op] = 'ok';
    else {
      status[name][op] = 'MISMATCH';
      if (name.startsWith('wasm') || name === 'native-c') gateFailed = true;
      console.log(`gate: ${name} ${op} output differs from ours (${g.slice(0, 12)} vs ${reference[op]?.slice(0, 12)}); not timed`);
    }
  }
}

// 2. timing
const results = {};
for (const name of runtimes) {
  const timed = ops.filter((op) => status[name][op] === 'ok' || status[name][op] === 'different output');
  if (timed.length === 0) continue;
  const t = run(name, 'time');
  results[name] = {};
  for (const op of timed) {
    if (!t[op] || t[op] === '-') continue;
    const samples = t[op].split(',').map(Number).sort((a, b) => a - b);
    results[name][op] = { best: samples[0], median: samples[Math.floor(samples.length / 2)], samples };
  }
  console.log(`timed ${name}`);
}

// 3. report
const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
const base = results.mri || {};
let md = `# net-http-wasm benchmark\n\n${new Date().toISOString().slice(0, 10)} — ${machine}.\n`;
md += `${passes} passes per cell, each a loop of at least ${minNs / 1e6} ms; best and median ns/op; ratio = median / MRI native median.\n\n`;
md += `| runtime | ${ops.map((o) => OP_TITLES[o]).join(' | ')} |\n|---|${ops.map(() => '---').join('|')}|\n`;
const row = (name) => {
  const cells = ops.map((op) => {
    const r = results[name]?.[op];
    const s = status[name][op];
    if (!r) return s === 'MISMATCH' ? 'output differs' : '—';
    const ratio = base[op] ? ` (${(r.median / base[op].median).toFixed(3)}×)` : '';
    return `${fmt(r.median)}${ratio}<br>best ${fmt(r.best)}`;
  });
  return `| ${RUNTIMES[name].title} | ${cells.join(' | ')} |\n`;
};
for (const name of runtimes.filter((n) => !RUNTIMES[n].peer)) md += row(name);
const peers = runtimes.filter((n) => RUNTIMES[n].peer);
if (peers.length) {
  md += `\nComparable work, different output (not checked against MRI; listed for scale):\n\n`;
  md += `| runtime | ${ops.map((o) => OP_TITLES[o]).join(' | ')} |\n|---|${ops.map(() => '---').join('|')}|\n`;
  for (const name of peers) md += row(name);
}
md += `\nGate (sha256 of each output against net-http-wasm's): ${runtimes.map((n) => `${n}: ${ops.map((o) => status[n][o]).join('/')}`).join('; ')}\n`;

// SVG: log-scale horizontal bars of median ns/op, one group per operation.
function svg() {
  const names = runtimes.filter((n) => results[n]);
  const rowsH = 16;
  const groupH = names.length * rowsH + 28;
  const width = 900;
  const left = 300;
  const all = names.flatMap((n) => ops.map((o) => results[n][o]?.median).filter(Boolean));
  const lo = Math.log10(Math.min(...all)) - 0.2;
  const hi = Math.log10(Math.max(...all)) + 0.2;
  const x = (v) => left + ((Math.log10(v) - lo) / (hi - lo)) * (width - left - 90);
  const colors = ['#1f77b4', '#aec7e8', '#2ca02c', '#d62728', '#ff9896', '#9467bd', '#7f7f7f', '#bcbd22', '#17becf'];
  let y = 30;
  let body = '';
  for (const op of ops) {
    body += `<text x="10" y="${y + 12}" font-weight="bold">${OP_TITLES[op]}</text>`;
    y += 18;
    names.forEach((n, i) => {
      const r = results[n][op];
      body += `<text x="20" y="${y + 11}" font-size="11">${RUNTIMES[n].title}</text>`;
      if (r) {
        body += `<rect x="${left}" y="${y + 2}" width="${Math.max(1, x(r.median) - left).toFixed(1)}" height="${rowsH - 4}" fill="${colors[i % colors.length]}"/>`;
        body += `<text x="${(x(r.median) + 4).toFixed(1)}" y="${y + 11}" font-size="11">${fmt(r.median)}</text>`;
      }
      y += rowsH;
    });
    y += 10;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 10}" font-family="sans-serif" font-size="12">` +
    `<text x="10" y="16">median ns/op, log scale — ${machine}</text>${body}</svg>\n`;
}

const outDir = `${here}results`;
mkdirSync(outDir, { recursive: true });
const stem = quick ? 'quick' : 'latest';
writeFileSync(`${outDir}/${stem}.md`, md);
writeFileSync(`${outDir}/${stem}.json`, `${JSON.stringify({ date: new Date().toISOString(), machine, passes, minNs, ops, gate, status, results }, null, 1)}\n`);
if (Object.keys(results).length) writeFileSync(`${outDir}/${stem}.svg`, svg());
console.log(md);
if (gateFailed) {
  console.error('net-http-wasm output differs between builds: failing');
  process.exit(1);
}
