// The client benchmark: HTTP clients of ruby.wasm 4.0 (Net::HTTP through
// net-http-wasm/ruby), native MRI and Node, each in its own process, making
// the same GETs against the same server; seed 001's table (TCPSocket vs
// Net::HTTP vs Net::HTTP::Persistent) from the same run.
//
//   npm run bench:clients -- [-n N] [-p] [-c K] [--client NAME[,NAME…]] [--passes P]
//                            [--warmup W] [--tls] [--json FILE] [--quick] [--wasm-n M]
//                            [--ca FILE] [URL]
//
//   -n N        requests per client and pass (default 1000; ruby.wasm: --wasm-n, default N)
//   -p          each client's persistent mode (default: its one-off mode)
//   -c K        K requests at a time (lanes: threads in MRI and in ruby.wasm,
//               promises in Node); default 1
//   --client    ids (node-fetch), runtimes (mri, rubywasm, node) or client names (net-http)
//   --passes P  timed passes (default 5); clients interleaved, a different one first each pass
//   --warmup W  untimed requests per client before the first pass (default 300)
//   --tls       the server's HTTPS port
//   --json FILE also write the JSON there
//   --quick     CI: 20 requests, 1 pass, every mode of every client; exits 1
//               unless every available client is "All OK"
//   --ca FILE   certificate to trust for an https URL of another server
//   URL         default: http(s)://127.0.0.1:PORT/bytes/2048 on a server this
//               starts (server.mjs); another server's URL is timed as given,
//               and connections are counted if it answers /__stats
//
// Writes benchmarks/results/clients-<mode>.{md,json,svg} and clients-latest.*
// (--quick: build/bench/clients-quick.*).
import { spawn, fork, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync, writeFileSync, copyFileSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import http from 'node:http';
import https from 'node:https';
import { expected, digest, DEFAULT_SIZE } from './bodies.mjs';
import { report } from './report.mjs';
import { rubyWasmPath } from '../../tests/support/rubywasm.mjs';

const here = new URL('./', import.meta.url).pathname;
const root = new URL('../../', import.meta.url).pathname;
const require = createRequire(import.meta.url);

// ---- options ----
const OPTIONS = {
  number: { type: 'string', short: 'n' },
  concurrent: { type: 'string', short: 'c' },
  persistent: { type: 'boolean', short: 'p' },
  client: { type: 'string' },
  passes: { type: 'string' },
  warmup: { type: 'string' },
  'wasm-n': { type: 'string' },
  tls: { type: 'boolean' },
  json: { type: 'string' },
  ca: { type: 'string' },
  quick: { type: 'boolean' },
};

function options(args) {
  const { values: v, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  if (positionals.length > 1) throw new Error(`one URL at most, not ${positionals.join(' ')}`);
  const num = (x) => (x === undefined ? null : Number(x));
  const o = {
    n: num(v.number),
    c: num(v.concurrent) ?? 1,
    p: !!v.persistent,
    clients: v.client === undefined ? null : v.client.split(',').filter(Boolean),
    passes: num(v.passes),
    warmup: num(v.warmup),
    tls: !!v.tls,
    json: v.json ?? null,
    quick: !!v.quick,
    wasmN: num(v['wasm-n']),
    ca: v.ca ?? null,
    url: positionals[0] ?? null,
  };
  o.n ??= o.quick ? 20 : 1000;
  o.wasmN ??= o.n;
  o.passes ??= o.quick ? 1 : 5;
  o.warmup ??= o.quick ? 5 : 300;
  for (const [k, flag] of [['n', '-n'], ['c', '-c'], ['passes', '--passes'], ['wasmN', '--wasm-n']]) {
    if (!(Number.isInteger(o[k]) && o[k] >= 1)) throw new Error(`${flag} must be a whole number ≥ 1`);
  }
  if (!(Number.isInteger(o.warmup) && o.warmup >= 0)) throw new Error('--warmup must be a whole number ≥ 0');
  return o;
}

// ---- the clients ----
const RUNTIMES = {
  rubywasm: { title: 'ruby.wasm 4.0' },
  mri: { title: 'native MRI' },
  node: { title: 'Node' },
};
const RUBY_CLIENTS = [
  ['net-http', 'Net::HTTP', { oneoff: 'Net::HTTP.get_response', persistent: 'Net::HTTP.start block' }],
  ['net-http-nocodec', 'Net::HTTP, codec off', { oneoff: 'Net::HTTP.get_response', persistent: 'Net::HTTP.start block' }, ['rubywasm']],
  ['net-http-blocking', 'Net::HTTP, blocking transport', { oneoff: 'Net::HTTP.get_response', persistent: 'Net::HTTP.start block' }, ['rubywasm']],
  ['net-http-persistent', 'net-http-persistent', { persistent: 'Net::HTTP::Persistent#request' }],
  ['faraday', 'Faraday', { oneoff: 'net_http adapter', persistent: 'net_http_persistent adapter' }],
  ['open-uri', 'open-uri', { oneoff: 'URI.open' }],
  ['tcpsocket', 'TCPSocket (raw)', { oneoff: 'socket per request', persistent: 'one socket' }],
  ['excon', 'Excon', { oneoff: 'Excon.get', persistent: 'Excon.new(persistent: true)' }],
  ['httpclient', 'httpclient', { oneoff: 'HTTPClient per request', persistent: 'one HTTPClient' }],
  ['httprb', 'http.rb', { oneoff: 'HTTP.get', persistent: 'HTTP.persistent' }],
];
const CLIENTS = [
  ...['rubywasm', 'mri'].flatMap((rt) =>
    RUBY_CLIENTS.filter(([, , , only]) => !only || only.includes(rt)).map(([name, title, modes]) => ({ id: `${rt}-${name}`, runtime: rt, name, title, modes })),
  ),
  { id: 'node-http', runtime: 'node', name: 'http', title: 'node:http', modes: { oneoff: 'agent: false', persistent: 'keep-alive Agent' } },
  { id: 'node-undici', runtime: 'node', name: 'undici', title: 'undici request (Pool)', modes: { oneoff: 'reset: true', persistent: 'Pool' } },
  { id: 'node-fetch', runtime: 'node', name: 'fetch', title: 'fetch', modes: { oneoff: 'Connection: close', persistent: 'global dispatcher' } },
  { id: 'node-net', runtime: 'node', name: 'net', title: 'net socket (raw)', modes: { oneoff: 'socket per request', persistent: 'one socket' } },
];
// seed 001: TCPSocket vs Net::HTTP (reconnecting) vs Net::HTTP::Persistent, plus Net::HTTP.start
const SEED_ROWS = [
  ['tcpsocket', 'persistent', 'TCPSocket, one socket'],
  ['net-http', 'oneoff', 'Net::HTTP.get_response (reconnects)'],
  ['net-http', 'persistent', 'Net::HTTP.start (one connection)'],
  ['net-http-persistent', 'persistent', 'Net::HTTP::Persistent'],
];

function selectClients(names) {
  if (!names) return CLIENTS;
  const picked = CLIENTS.filter((c) => names.some((n) => c.id === n || c.runtime === n || c.name === n));
  const unknown = names.filter((n) => !CLIENTS.some((c) => c.id === n || c.runtime === n || c.name === n));
  if (unknown.length) throw new Error(`unknown client ${unknown.join(', ')}; known: ${CLIENTS.map((c) => c.id).join(', ')}`);
  return picked;
}

// The rows: each client in its one-off mode (-p: persistent), or its only
// mode; --quick: every mode; plus seed 001's rows when every client runs.
function planRows(opts, clients) {
  const rows = [];
  const add = (client, mode, extra) => {
    if (!rows.some((r) => r.client === client && r.mode === mode)) rows.push({ client, mode, extra });
  };
  const want = opts.p ? 'persistent' : 'oneoff';
  for (const c of clients) {
    const modes = Object.keys(c.modes);
    if (opts.quick) modes.forEach((m) => add(c, m, false));
    else add(c, c.modes[want] ? want : modes[0], false);
  }
  if (!opts.clients) {
    for (const [name, mode] of SEED_ROWS) {
      for (const c of clients.filter((x) => x.name === name && x.runtime !== 'node')) add(c, mode, true);
    }
  }
  return rows;
}

// ---- processes ----

/** A client process speaking worker.mjs's protocol (answers on fd 3). */
class Worker {
  constructor(client, env) {
    const js = (file, flags = []) => [process.execPath, [...flags, `${here}${file}`, client.name]];
    const [cmd, args] = {
      node: () => js('node-client.mjs'),
      rubywasm: () => js('rubywasm-client.mjs'),
      mri: () => ['ruby', [`${here}mri-client.rb`, client.name]],
    }[client.runtime]();
    this.log = '';
    this.dead = null;
    this.pending = null;
    this.proc = spawn(cmd, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_NO_WARNINGS: '1', ...env } });
    const keep = (d) => (this.log = (this.log + d).slice(-4000));
    this.proc.stdout.on('data', keep);
    this.proc.stderr.on('data', keep);
    this.proc.on('error', (e) => this.end(e.code === 'ENOENT' ? `${cmd} is not installed` : e.message));
    this.proc.on('exit', (code, sig) => this.end(`the client process ended (${sig || `exit ${code}`}): ${this.log.trim().split('\n').slice(-3).join(' | ')}`));
    this.proc.stdin.on('error', () => {});
    createInterface({ input: this.proc.stdio[3] }).on('line', (line) => {
      const p = this.pending;
      this.pending = null;
      if (p) p.resolve(JSON.parse(line));
    });
  }

  end(why) {
    if (!this.dead) this.dead = why;
    const p = this.pending;
    this.pending = null;
    if (p) p.reject(new Error(this.dead));
  }

  ask(cmd, timeoutMs) {
    if (this.dead) return Promise.reject(new Error(this.dead));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.end(`no answer within ${Math.round(timeoutMs / 1000)} s`);
        this.proc.kill('SIGKILL');
      }, timeoutMs);
      const done = (f) => (v) => {
        clearTimeout(timer);
        f(v);
      };
      this.pending = { resolve: done(resolve), reject: done(reject) };
      this.proc.stdin.write(`${JSON.stringify(cmd)}\n`);
    });
  }

  close() {
    if (!this.dead) this.proc.stdin.end();
  }
}

// Why a runtime cannot run here at all (before starting its processes).
function runtimeMissing(runtime) {
  if (runtime === 'mri') {
    const r = spawnSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' });
    return r.status === 0 ? null : 'ruby is not installed';
  }
  if (runtime === 'rubywasm') {
    for (const [pkg, find] of [['@ruby/4.0-wasm-wasi', () => rubyWasmPath('4.0')], ['@ruby/wasm-wasi', () => require.resolve('@ruby/wasm-wasi')]]) {
      try {
        find();
      } catch {
        return `npm package ${pkg} is not installed`;
      }
    }
  }
  return null;
}

let stopping = false;
function startServer() {
  return new Promise((resolve, reject) => {
    const child = fork(`${here}server.mjs`, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (info) => resolve({ ...info, child }));
    child.once('exit', (code, signal) => {
      const why = `the server exited (${signal || `exit ${code}`})`;
      if (!stopping) console.error(`# ${why}`);
      reject(new Error(why));
    });
  });
}

// GET without Accept-Encoding (so the body as sent): { status, body }.
function get(url, ca) {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.get(url, { agent: false, ca, timeout: 10000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

// ---- statistics ----
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN);

function summarize(row) {
  const ps = row.passes;
  const n = row.n;
  const lat = ps.flatMap((p) => p.latMs).sort((a, b) => a - b);
  const errors = {};
  for (const p of [...ps, ...(row.warm ? [row.warm] : [])]) for (const [k, v] of Object.entries(p.errors)) errors[k] = (errors[k] || 0) + v;
  const totals = ps.map((p) => p.wallMs);
  const total = median(totals);
  const conns = ps.map((p) => p.conns).filter((x) => x != null);
  return {
    averageMs: total / n,
    totalMs: total,
    totalMinMs: Math.min(...totals),
    totalMaxMs: Math.max(...totals),
    p50Ms: quantile(lat, 0.5),
    p99Ms: quantile(lat, 0.99),
    reqPerS: n / (total / 1000),
    cpuPerReqMs: median(ps.map((p) => p.cpuMs)) / n,
    conns: conns.length ? median(conns) : null,
    connsMin: conns.length ? Math.min(...conns) : null,
    connsMax: conns.length ? Math.max(...conns) : null,
    ok: ps.reduce((a, p) => a + p.ok, 0),
    requests: ps.length * n,
    errors,
    allOk: ps.length > 0 && ps.every((p) => p.ok === n) && Object.keys(errors).length === 0,
  };
}

// ---- main ----
async function main() {
  const opts = options(process.argv.slice(2));
  const clients = selectClients(opts.clients);
  const rows = planRows(opts, clients);

  let server = null;
  let url = opts.url;
  let ca = opts.ca;
  if (!url) {
    server = await startServer();
    if (opts.tls && !server.https) throw new Error(`--tls: no HTTPS server (${server.tlsError})`);
    url = `${opts.tls ? server.https : server.http}/bytes/${DEFAULT_SIZE}`;
    ca = server.ca;
  } else if (opts.tls && !url.startsWith('https:')) {
    throw new Error('--tls goes with an https URL (or none)');
  }
  const target = new URL(url);
  const caPem = ca ? readFileSync(ca) : undefined;
  const statsUrl = server ? `${server.http}/__stats` : `${target.origin}/__stats`;
  const stats = async (mark) => {
    try {
      const r = await get(mark ? `${statsUrl}?mark` : statsUrl, caPem);
      return r.status === 200 ? JSON.parse(r.body.toString()) : null;
    } catch {
      return null;
    }
  };

  // what every client must read
  let expect = server ? expected(target.pathname) : null;
  if (!expect) {
    const r = await get(url, caPem);
    if (r.status !== 200) throw new Error(`${url} answers ${r.status}; the benchmark needs a 200`);
    expect = digest(r.body);
  }
  const haveStats = (await stats()) != null;

  const cpu = cpus();
  const machine = `${cpu[0].model.trim()}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const date = spawnSync('date', [], { encoding: 'utf8' }).stdout.trim() || new Date().toString();
  console.log(`# client benchmark — ${date}\n# ${machine}\n# ${url}: ${expect.len} bytes, sha256 ${expect.sha256.slice(0, 16)}…`);

  // one process per client, booted one after the other
  const env = ca ? { NODE_EXTRA_CA_CERTS: ca, SSL_CERT_FILE: ca } : {};
  const workers = new Map();
  const missing = {};
  for (const rt of new Set(rows.map((r) => r.client.runtime))) missing[rt] = runtimeMissing(rt);
  for (const c of new Set(rows.map((r) => r.client))) {
    const modes = rows.filter((r) => r.client === c).map((r) => r.mode);
    const w = { reasons: {}, version: null, bootMs: null, proc: null };
    workers.set(c, w);
    if (missing[c.runtime]) {
      for (const m of modes) w.reasons[m] = missing[c.runtime];
      continue;
    }
    const t0 = performance.now();
    w.proc = new Worker(c, env);
    try {
      const r = await w.proc.ask({ op: 'setup', url, modes, ca: ca || null }, 120000);
      if (r.fatal) throw new Error(r.fatal);
      Object.assign(w, { reasons: r.modes, version: r.version, bootMs: performance.now() - t0 });
    } catch (e) {
      w.setupError = e.message;
    }
    console.log(`# ${c.id}: ${w.setupError ? `setup failed: ${w.setupError}` : `${w.version}, started in ${Math.round(w.bootMs)} ms`}`);
  }

  for (const r of rows) {
    const w = workers.get(r.client);
    r.n = r.client.runtime === 'rubywasm' ? opts.wasmN : opts.n;
    r.reason = w.reasons[r.mode] || null;
    r.passes = [];
    r.version = w.version;
    r.bootMs = w.bootMs;
  }
  const live = rows.filter((r) => !r.reason);
  const counts = (n) => {
    const k = Math.min(opts.c, n);
    return Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));
  };
  const runOnce = async (r, n) => {
    const w = workers.get(r.client);
    const timeoutMs = 120000 + Math.ceil(n / opts.c) * 200;
    const before = haveStats ? await stats(true) : null;
    let res;
    try {
      if (w.setupError) throw new Error(w.setupError);
      res = await w.proc.ask({ op: 'run', mode: r.mode, counts: counts(n), expect }, timeoutMs);
      if (res.fatal) throw new Error(res.fatal);
    } catch (e) {
      res = { ok: 0, errors: { [e.message.slice(0, 200)]: n }, latMs: [], wallMs: NaN, cpuMs: NaN };
    }
    const after = haveStats ? await stats() : null;
    res.conns = after ? after.used : null;
    res.newConns = before && after ? after.connections - before.connections : null;
    return res;
  };

  // warm-up, then the passes, each starting with another client
  if (opts.warmup > 0) {
    for (const r of live) r.warm = await runOnce(r, opts.warmup);
    console.log(`# warmed up: ${opts.warmup} requests per client`);
  }
  for (let p = 0; p < opts.passes; p++) {
    const t0 = performance.now();
    for (let i = 0; i < live.length; i++) {
      const r = live[(i + p) % live.length];
      const res = await runOnce(r, r.n);
      r.passes.push({ wallMs: res.wallMs, cpuMs: res.cpuMs, ok: res.ok, errors: res.errors, conns: res.conns, newConns: res.newConns, latMs: res.latMs });
    }
    console.log(`# pass ${p + 1}/${opts.passes}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  for (const w of workers.values()) if (w.proc) w.proc.close();
  stopping = true;
  if (server) server.child.disconnect();

  for (const r of live) r.summary = summarize(r);
  const run = {
    date,
    machine,
    url,
    expect,
    n: opts.n,
    wasmN: opts.wasmN,
    concurrency: opts.c,
    persistent: opts.p,
    passes: opts.passes,
    warmup: opts.warmup,
    connectionsCounted: haveStats,
    quick: opts.quick,
    rows: rows.map((r) => ({
      id: r.client.id,
      runtime: RUNTIMES[r.client.runtime].title,
      client: r.client.title,
      mode: r.mode,
      how: r.client.modes[r.mode],
      seedOnly: r.extra,
      version: r.version,
      bootMs: r.bootMs,
      n: r.n,
      available: !r.reason,
      reason: r.reason,
      summary: r.summary || null,
      passes: r.passes.map(({ latMs, ...p }) => p),
    })),
  };

  const { md, svg } = report(run, SEED_ROWS);
  const slug = (s) => s.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();
  const tag = [
    opts.p ? 'persistent' : 'oneoff',
    target.protocol === 'https:' ? 'tls' : '',
    opts.c > 1 ? `c${opts.c}` : '',
    target.pathname === `/bytes/${DEFAULT_SIZE}` ? '' : slug(target.pathname),
    opts.clients ? slug(opts.clients.join('-')) : '',
  ].filter(Boolean).join('-');
  const outDir = opts.quick ? `${root}build/bench` : `${root}benchmarks/results`;
  const stem = `${outDir}/clients-${opts.quick ? 'quick' : tag}`;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(`${stem}.md`, md);
  writeFileSync(`${stem}.json`, `${JSON.stringify(run, null, 1)}\n`);
  writeFileSync(`${stem}.svg`, svg);
  if (!opts.quick) for (const ext of ['md', 'json', 'svg']) copyFileSync(`${stem}.${ext}`, `${outDir}/clients-latest.${ext}`);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(run, null, 1)}\n`);
  console.log(`\n${md}`);
  console.log(`written: ${stem}.{md,json,svg}`);

  const bad = run.rows.filter((r) => r.available && !r.summary.allOk);
  if (bad.length) console.log(`not All OK: ${bad.map((r) => `${r.id} (${r.mode})`).join(', ')}`);
  if (opts.quick && bad.length) process.exit(1);
  process.exit(0);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(2);
});
