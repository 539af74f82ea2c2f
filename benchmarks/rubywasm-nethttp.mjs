// Net::HTTP inside ruby.wasm 4.0 against native MRI and node:http, side by
// side in one run, against one local server in another process
// (benchmarks/clients/server.mjs: plain and TLS on 127.0.0.1).
//
//   node benchmarks/rubywasm-nethttp.mjs [--passes 5] [--requests 1000] [--quick]
//                                        [--only ka,nc,...] [--warmup-ms 3000]
//                                        [--out benchmarks/results/rubywasm-nethttp]
//                                        [--against DIR] [--clients blocking,waiting,on,off]
//                                        [--vm-options '{"tierUpFull":true}']
//
// Scenarios (µs per request, median of the passes; clients interleaved,
// each warmed up by whole passes for --warmup-ms, and then until a pass is
// no faster than the fastest before it by 5% (V8 is then done optimizing
// ruby.wasm's hot code; on 2 CPUs that takes thousands of requests), for
// 10 × --warmup-ms at most):
//   ka        GET of 2 KiB, kept alive (Net::HTTP.start { N.times { request } })
//   nc        GET of 2 KiB, a new connection per request
//   ka-tls    ka over TLS          nc-tls   nc over TLS
//   chunked   GET of 64 KiB sent chunked (1 KiB chunks), kept alive
//   1mib      GET of 1 MiB, kept alive (also as MB/s)
// Clients: native MRI (Debian's ruby, its own net/http); ruby.wasm 4.0 made
// by createRubyVM (as README's first example), blocking and waiting
// transports, codec on and off;
// node:http (an agent with keepAlive for kept-alive scenarios, none for nc).
// Also the server's CPU time per request for each client (a client that is
// slower between its writes wakes the server more often: each wake costs it
// CPU, on the path of the next answer). For ruby.wasm, per request: bridge
// calls (Ruby→JS), event-loop turns (fiber parks), timers armed, bytes
// copied across the Ruby/JS boundary, time in JS (bridge, codec included),
// in the codec's C, waiting for the network, and in Ruby (the rest); and
// the byte work alone (exec + read_new + read_body_0, with no network) for
// MRI and ruby.wasm, codec on and off, and the whole kept-alive request over
// a socket that answers at once (the client's own cost per request).
// --against DIR: each ruby.wasm client (and the byte work) also runs with
// the createRubyVM of another checkout (DIR/js/ruby/node.mjs, e.g. an older
// commit's `git archive`), interleaved with this one's: before/after figures
// from one run.
// --clients: only the ruby.wasm clients whose name has all of these words
// (blocking / waiting, on / off).
// --vm-options: more createRubyVM options (JSON) for every ruby.wasm VM of
// the run; those that set V8 flags set them for the whole process, so a
// setting is compared with another run, each against MRI.
import os from 'node:os';
import http from 'node:http';
import https from 'node:https';
import { fork, spawnSync } from 'node:child_process';
import fs, { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRubyVM } from '../js/ruby/node.mjs';
import { getDefaultCodec } from '../js/core.mjs';
import { rb } from '../tests/support/rubywasm.mjs';
import { options } from './options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = options(import.meta.url, { valued: ['passes', 'requests', 'only', 'warmup-ms', 'out', 'against', 'clients', 'vm-options'], flags: ['quick'] });
const opt = args.get;
const quick = args.has('quick');
const PASSES = Number(opt('passes', quick ? 1 : 5));
const N = Number(opt('requests', quick ? 40 : 1000));
const OUT = opt('out', quick ? null : 'benchmarks/results/rubywasm-nethttp');
const WARMUP_MS = Number(opt('warmup-ms', quick ? 0 : 3000));
const AGAINST = opt('against', null);
const ONLY_CLIENTS = opt('clients', null);
const VM_OPTIONS = JSON.parse(opt('vm-options', '{}'));
const SCENARIOS = [
  { id: 'ka', path: '/bytes/2048', n: N, keep: true },
  { id: 'nc', path: '/bytes/2048', n: Math.ceil(N / 4), keep: false },
  { id: 'ka-tls', path: '/bytes/2048', n: N, keep: true, tls: true },
  { id: 'nc-tls', path: '/bytes/2048', n: Math.ceil(N / 10), keep: false, tls: true },
  { id: 'chunked', path: '/chunked/65536', n: Math.ceil(N / 4), keep: true },
  { id: '1mib', path: '/bytes/1048576', n: Math.max(4, Math.ceil(N / 50)), keep: true, bytes: 1 << 20 },
].filter((s) => !opt('only', null) || opt('only').split(',').includes(s.id));

// The same Ruby for native MRI and ruby.wasm: µs per request and µs of byte
// work per request; the body is checked.
const RUBY = `
$nhw_bytes = 0.0
def nhw_clock = Process.clock_gettime(Process::CLOCK_MONOTONIC)
module NhwTimeExec
  def exec(*) = (t = nhw_clock; begin; super; ensure; $nhw_bytes += nhw_clock - t; end)
end
module NhwTimeReadNew
  def read_new(*) = (t = nhw_clock; begin; super; ensure; $nhw_bytes += nhw_clock - t; end)
end
module NhwTimeReadBody
  private def read_body_0(*) = (t = nhw_clock; begin; super; ensure; $nhw_bytes += nhw_clock - t; end)
end
Net::HTTPGenericRequest.prepend(NhwTimeExec)
Net::HTTPResponse.singleton_class.prepend(NhwTimeReadNew)
Net::HTTPResponse.prepend(NhwTimeReadBody)

# The byte work alone, with no network: a request written into a StringIO and
# a response read from one (native MRI).
def nhw_bytes_only(n, resp)
  require 'stringio'
  $nhw_bytes = 0.0
  i = 0
  while i < n
    req = Net::HTTP::Get.new('/bytes/2048')
    req.exec(Net::BufferedIO.new(StringIO.new(+''.b)), '1.1', req.path)
    sock = Net::BufferedIO.new(StringIO.new(resp))
    res = Net::HTTPResponse.read_new(sock)
    res.reading_body(sock, true) {}
    raise 'bad body' unless res.body.bytesize == 2048
    i += 1
  end
  $nhw_bytes / n * 1e6
end

# The whole kept-alive request over a socket that answers at once (native
# MRI: Net::HTTP#connect gives Net::BufferedIO an IO that hands out the
# response after each request's head): the client's own cost per request.
class NhwInstantIO
  def initialize(resp)
    @resp = resp
    @due = 0
    @out = +''.b
    @closed = false
  end

  def write_nonblock(s, exception: true)
    @out << s
    if @out.include?("\\r\\n\\r\\n")
      @due += 1
      @out.clear
    end
    s.bytesize
  end

  def read_nonblock(_n, buf = nil, exception: true)
    return(exception ? raise(IO::EAGAINWaitReadable) : :wait_readable) if @due == 0
    @due -= 1
    buf ? buf.replace(@resp) : @resp.dup
  end

  def wait_readable(_t = nil) = @due > 0 ? self : nil
  def wait_writable(_t = nil) = self
  def to_io = self
  def closed? = @closed
  def close = @closed = true
end

def nhw_instant(n, resp)
  Net::HTTP.define_method(:connect) do
    @socket = Net::BufferedIO.new(NhwInstantIO.new(resp), read_timeout: @read_timeout,
                                  write_timeout: @write_timeout, continue_timeout: @continue_timeout)
    on_connect
  end
  Net::HTTP.send(:private, :connect)
  nhw_run(80, '/bytes/2048', n, true, false, nil, 2048).join(',')
end

def nhw_run(port, path, n, keep, tls, ca, size)
  opts = tls ? { use_ssl: true, ca_file: ca } : {}
  check = ->(res) { raise "bad response #{res.code} #{res.body&.bytesize}" unless res.code == '200' && res.body.bytesize == size }
  $nhw_bytes = 0.0
  t0 = nhw_clock
  if keep
    Net::HTTP.start('127.0.0.1', port, **opts) do |h|
      i = 0
      while i < n
        check.(h.request(Net::HTTP::Get.new(path)))
        i += 1
      end
    end
  else
    i = 0
    while i < n
      Net::HTTP.start('127.0.0.1', port, **opts) { |h| check.(h.request(Net::HTTP::Get.new(path))) }
      i += 1
    end
  end
  [(nhw_clock - t0) / n * 1e6, $nhw_bytes / n * 1e6]
end
`;

// The response of the byte-work measurement (as the server sends /bytes/2048).
const CANNED = Buffer.concat([
  Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nDate: Mon, 30 Nov 2026 00:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2048\r\n\r\n'),
  Buffer.alloc(2048, 120),
]);

// installNetHttp's custom transport answering every request at once, in
// the same call: no network and no waiting, only the byte work and the
// bridge. As NhwInstantIO for MRI, it does no more than it must: a copy of
// the response for each request head written (the requests are GETs, each
// written in one call), found by its "\r\n\r\n".
function memoryTransport() {
  let pending = null; // a head written in parts (none here)
  const stream = {
    write(bytes) {
      const b = pending ? Buffer.concat([pending, bytes]) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
      if (b.includes('\r\n\r\n')) {
        pending = null;
        stream.onData(new Uint8Array(CANNED));
      } else pending = Buffer.from(b);
    },
    close() {},
  };
  return stream;
}

function startServer() {
  return new Promise((resolve, reject) => {
    const child = fork(`${here}/clients/server.mjs`, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (info) => resolve({ ...info, child }));
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
}

// The server's CPU time so far (its own /__stats), in ms.
async function serverCpuMs(srv) {
  const res = await fetch(`${srv.http}/__stats`);
  return (await res.json()).cpuMs;
}

const sizeOf = (s) => s.bytes || Number(s.path.split('/').pop());
const portOf = (srv, s) => Number(new URL(s.tls ? srv.https : srv.http).port);
const rubyArgs = (srv, s) => `${portOf(srv, s)}, ${JSON.stringify(s.path)}, ${s.n}, ${s.keep}, ${!!s.tls}, ${JSON.stringify(srv.ca)}, ${sizeOf(s)}`;

// ---- clients ----

function nativeClient() {
  const v = spawnSync('ruby', ['-e', 'print RUBY_VERSION'], { encoding: 'utf8' });
  if (v.status !== 0) return null;
  return {
    name: `MRI ${v.stdout} native`,
    run(srv, s) {
      const r = spawnSync('ruby', ['-rnet/http', '-ropenssl', '-e', `${RUBY}\nputs nhw_run(${rubyArgs(srv, s)}).join(',')`], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      return r.stdout.trim().split(',').map(Number);
    },
  };
}

async function wasmClient(blocking, codec, make = createRubyVM, label = '') {
  const { vm, handle, dispose } = await make({ ...VM_OPTIONS, blocking, codec, tmp: false });
  await rb(vm, `require 'net/http'\n${RUBY}`);
  return {
    name: `ruby.wasm 4.0 ${blocking ? 'blocking' : 'waiting'}, codec ${codec ? 'on' : 'off'}${label}`,
    vm,
    handle,
    dispose,
    async run(srv, s) {
      return (await rb(vm, `nhw_run(${rubyArgs(srv, s)}).join(',')`)).split(',').map(Number);
    },
  };
}

function nodeClient() {
  return {
    name: 'node:http',
    async run(srv, s) {
      const mod = s.tls ? https : http;
      const agent = s.keep ? new mod.Agent({ keepAlive: true, maxSockets: 1 }) : false;
      const url = `${s.tls ? srv.https : srv.http}${s.path}`;
      const ca = s.tls ? readFileSync(srv.ca) : undefined;
      const size = sizeOf(s);
      const t0 = performance.now();
      for (let i = 0; i < s.n; i++) {
        const n = await new Promise((resolve, reject) => {
          mod
            .get(url, { agent, ca }, (res) => {
              let k = 0;
              res.on('data', (c) => (k += c.length));
              res.on('end', () => resolve(res.statusCode === 200 ? k : -1));
            })
            .on('error', reject);
        });
        if (n !== size) throw new Error(`bad response ${n}`);
      }
      const us = ((performance.now() - t0) / s.n) * 1000;
      if (agent) agent.destroy();
      return [us, null];
    },
  };
}

// ---- the byte work alone ----

async function byteWork(mri, other) {
  const rows = {};
  const n = Math.max(50, N);
  const canned = `${JSON.stringify(CANNED.toString('latin1'))}.b`;
  if (mri) {
    const row = { bytes: [], whole: [] };
    for (let pass = 0; pass < PASSES; pass++) {
      const r = spawnSync('ruby', ['-rnet/http', '-e', `${RUBY}\nputs nhw_bytes_only(${n}, ${canned})\nputs nhw_instant(${n}, ${canned})`], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      const [bytes, whole] = r.stdout.trim().split('\n');
      row.bytes.push(Number(bytes));
      row.whole.push(Number(whole.split(',')[0]));
    }
    rows[mri.name] = row;
  }
  // ruby.wasm, codec on and off (each also with the bridge of --against),
  // interleaved pass by pass
  const vms = [];
  for (const codec of [true, false])
    for (const [make, label] of other ? [[other, ` (${AGAINST})`], [createRubyVM, '']] : [[createRubyVM, '']]) {
      const { vm, handle, dispose } = await make({ ...VM_OPTIONS, codec, tmp: false, transport: async () => memoryTransport() });
      await rb(vm, `require 'net/http'\n${RUBY}`);
      vms.push({ name: `ruby.wasm 4.0, codec ${codec ? 'on' : 'off'}${label}`, vm, handle, dispose, bytes: [], whole: [] });
    }
  const run = async (x) => String(await rb(x.vm, `nhw_run(80, '/bytes/2048', ${n}, true, false, nil, 2048).join(',')`)).split(',').map(Number);
  // as for the clients: V8 tiers ruby.wasm's hot functions up during the
  // first seconds of a run
  for (const x of vms) await warmUp(async () => (await run(x))[0]);
  for (let pass = 0; pass < PASSES; pass++)
    for (const x of pass % 2 ? [...vms].reverse() : vms) {
      const [whole, bytes] = await run(x);
      x.whole.push(whole);
      x.bytes.push(bytes);
    }
  for (const x of vms) {
    rows[x.name] = { bytes: x.bytes, whole: x.whole };
    // where the whole request's time goes (instrumented: a few µs more)
    if (x.name.includes('codec on')) rows[x.name].breakdown = await breakdown({ name: x.name, handle: x.handle, run: () => run(x) }, null, { n });
    await x.dispose();
  }
  return rows;
}

// Runs pass() (its value: µs per request) for WARMUP_MS, then until a pass
// is no faster than 0.95 × the fastest before it, for 10 × WARMUP_MS at most.
async function warmUp(pass) {
  const t0 = performance.now();
  let best = Infinity;
  while (true) {
    const us = await pass();
    const elapsed = performance.now() - t0;
    if (elapsed >= 10 * WARMUP_MS || (elapsed >= WARMUP_MS && us >= 0.95 * best)) return;
    best = Math.min(best, us);
  }
}

// ---- the breakdown of a ruby.wasm request ----

async function breakdown(client, srv, s) {
  const bridge = client.handle.bridge;
  const transport = bridge.transport;
  const codec = getDefaultCodec();
  const c = { calls: 0, parks: 0, timers: 0, copied: 0, js: 0, c: 0, wait: 0, sys: 0 };
  const restore = [];
  const wrap = (obj, name, fn) => {
    const orig = obj[name];
    obj[name] = fn(orig);
    restore.push(() => (obj[name] = orig));
  };
  // (a call the bridge makes to itself, settle → state, counts as part of
  // the one Ruby made)
  let depth = 0;
  for (const m of ['open', 'send', 'request', 'requestWait', 'bind', 'recv', 'recvNow', 'body', 'bodyNow', 'write', 'readNow', 'wait', 'state', 'settle', 'settleLater', 'drain', 'close', 'park']) {
    if (typeof bridge[m] !== 'function') continue; // (an older bridge: --against)
    wrap(bridge, m, (orig) => function (...a) {
      const outer = depth === 0;
      if (outer) c.calls++;
      if (m === 'park') c.parks++;
      const t0 = performance.now();
      depth++;
      try {
        const r = orig.apply(this, a);
        if (!outer) return r;
        if (m === 'send') c.copied += a[2] + a[4];
        if (m === 'request') c.copied += a[1] + (a[3] || 0) + Math.max(r, 0);
        if (m === 'requestWait') c.copied += a[1] + Math.max(r, 0);
        if (m === 'recv' || m === 'recvNow' || m === 'body' || m === 'bodyNow' || m === 'readNow') {
          if (typeof r === 'number') c.copied += Math.max(r, 0);
          else r.then((v) => (c.copied += Math.max(v, 0)));
        }
        if (m === 'write') c.copied += a[2];
        return r;
      } finally {
        depth--;
        if (outer) c.js += performance.now() - t0;
      }
    });
  }
  let waiting = 0;
  const timed = (orig) => function (...a) {
    const t0 = performance.now();
    waiting++;
    try {
      return orig.apply(this, a);
    } finally {
      waiting--;
      c.wait += performance.now() - t0;
    }
  };
  // waiting for the network inside the bridge's calls: a blocking
  // transport's block(), and the waiting transport's poll of a connection's
  // fd right after a request (node-async.mjs), which spins until the answer
  // comes or its time is up
  if (transport.block) wrap(transport, 'block', timed);
  // the read(2)s and write(2)s of a connection's fd made in this thread (a
  // poll's included; node-fd.mjs imports them from node:fs, whose named
  // exports follow the module object once synced)
  for (const name of ['readSync', 'writeSync'])
    wrap(fs, name, (orig) => function (...a) {
      const t0 = performance.now();
      try {
        return orig.apply(this, a);
      } finally {
        if (!waiting) c.sys += performance.now() - t0;
      }
    });
  syncBuiltinESMExports();
  const timePoll = (opened) => {
    const conn = opened && opened.conn;
    if (conn && typeof conn.poll === 'function' && !Object.hasOwn(conn, 'poll')) conn.poll = timed(conn.poll);
  };
  if (typeof transport.open === 'function')
    wrap(transport, 'open', (orig) => function (...a) {
      const r = orig.apply(this, a);
      if (r && typeof r.then === 'function') r.then(timePoll, () => {});
      else timePoll(r);
      return r;
    });
  const x = codec.x;
  const exportsCopy = {};
  for (const k of Object.keys(x)) {
    if (typeof x[k] !== 'function') continue;
    const f = x[k];
    exportsCopy[k] = (...a) => {
      const t0 = performance.now();
      try {
        return f(...a);
      } finally {
        c.c += performance.now() - t0;
      }
    };
  }
  const origX = codec.x;
  codec.x = Object.assign(Object.create(null), origX, exportsCopy);
  restore.push(() => (codec.x = origX));
  wrap(globalThis, 'setTimeout', (orig) => (...a) => {
    c.timers++;
    return orig(...a);
  });
  const t0 = performance.now();
  try {
    await client.run(srv, s);
  } finally {
    for (const r of restore.reverse()) r();
    syncBuiltinESMExports();
  }
  const total = performance.now() - t0;
  const per = (v) => +(v / s.n).toFixed(2);
  const us = (v) => +((v * 1000) / s.n).toFixed(1);
  // (the waits counted are inside the bridge's calls; a waiting
  // transport's fiber parks are outside them)
  const jsOnly = c.js - c.wait - c.sys;
  const ruby = total - c.js;
  return {
    calls: per(c.calls), parks: per(c.parks), timers: per(c.timers), copied: per(c.copied),
    jsUs: us(jsOnly - c.c), cUs: us(c.c), sysUs: us(c.sys), waitUs: us(c.wait), rubyAndLoopUs: us(ruby),
  };
}

// ---- main ----

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function main() {
  const srv = await startServer();
  const clients = [];
  const mri = nativeClient();
  if (mri) clients.push(mri);
  const other = AGAINST ? (await import(pathToFileURL(`${AGAINST}/js/ruby/node.mjs`).href)).createRubyVM : null;
  for (const blocking of [true, false])
    for (const codec of [true, false]) {
      const words = [blocking ? 'blocking' : 'waiting', codec ? 'on' : 'off'];
      if (ONLY_CLIENTS && !ONLY_CLIENTS.split(',').every((w) => words.includes(w))) continue;
      if (other) clients.push(await wasmClient(blocking, codec, other, ` (${AGAINST})`));
      clients.push(await wasmClient(blocking, codec));
    }
  clients.push(nodeClient());
  const results = {};
  for (const s of SCENARIOS) {
    results[s.id] = {};
    // warm-up: whole passes each for WARMUP_MS at least (V8 tiers
    // ruby.wasm's functions up as they run: the first seconds of a large-body
    // scenario are an order of magnitude slower than the rest)
    for (const cl of clients) await warmUp(async () => (await cl.run(srv, s))[0]);
    for (let pass = 0; pass < PASSES; pass++) {
      const order = pass % 2 ? [...clients].reverse() : clients;
      for (const cl of order) {
        const cpu0 = await serverCpuMs(srv);
        const [us] = await cl.run(srv, s);
        const cpu = ((await serverCpuMs(srv)) - cpu0) * 1000 / s.n;
        const r = (results[s.id][cl.name] ||= { us: [], serverUs: [] });
        r.us.push(us);
        r.serverUs.push(cpu);
      }
    }
    process.stderr.write(`${s.id} done\n`);
  }
  const breakdowns = {};
  for (const s of SCENARIOS.filter((x) => ['ka', 'nc', 'ka-tls', '1mib'].includes(x.id)))
    for (const cl of clients.filter((x) => x.handle && x.name.includes('codec on')))
      breakdowns[`${s.id} ${cl.name}`] = await breakdown(cl, srv, s);
  for (const cl of clients) if (cl.dispose) await cl.dispose();
  srv.child.disconnect();
  const bytes = await byteWork(mri, other);
  report(clients, results, breakdowns, bytes);
}

function report(clients, results, breakdowns, bytes) {
  const cpus = os.cpus();
  const machine = `${cpus[0].model.trim()} (${cpus.length} CPUs), ${os.platform()} ${os.release()}, Node ${process.version}`;
  const date = spawnSync('date', [], { encoding: 'utf8' }).stdout.trim();
  const base = clients[0].name;
  const lines = [];
  lines.push(`Net::HTTP in ruby.wasm 4.0 vs native MRI and node:http — ${date}`);
  const vmOptions = Object.keys(VM_OPTIONS).length ? `; createRubyVM options ${JSON.stringify(VM_OPTIONS)}` : '';
  lines.push(`machine: ${machine}; ${PASSES} passes, median µs per request (min–max), ratio to ${base}${vmOptions}`);
  lines.push('');
  lines.push(`| scenario | ${clients.map((c) => c.name).join(' | ')} |`);
  lines.push(`|---|${clients.map(() => '---:').join('|')}|`);
  const json = { date, machine, passes: PASSES, requests: N, vmOptions: VM_OPTIONS, scenarios: {} };
  for (const s of SCENARIOS) {
    const row = [];
    const b = median(results[s.id][base].us);
    json.scenarios[s.id] = {};
    for (const c of clients) {
      const r = results[s.id][c.name];
      const m = median(r.us);
      const rate = s.bytes ? `, ${((s.bytes / m) * 1e6 / 1048576).toFixed(0)} MiB/s` : '';
      row.push(`${m.toFixed(0)} (${Math.min(...r.us).toFixed(0)}–${Math.max(...r.us).toFixed(0)}) ${(m / b).toFixed(2)}×${rate}`);
      json.scenarios[s.id][c.name] = { medianUs: +m.toFixed(1), runsUs: r.us.map((x) => +x.toFixed(1)) };
    }
    lines.push(`| ${s.id} (n=${s.n}) | ${row.join(' | ')} |`);
  }
  lines.push('');
  lines.push("The server's CPU time per request (µs, median of the passes; its own process, all threads):");
  lines.push('');
  lines.push(`| scenario | ${clients.map((c) => c.name).join(' | ')} |`);
  lines.push(`|---|${clients.map(() => '---:').join('|')}|`);
  for (const s of SCENARIOS) {
    lines.push(`| ${s.id} | ${clients.map((c) => median(results[s.id][c.name].serverUs).toFixed(0)).join(' | ')} |`);
    for (const c of clients) json.scenarios[s.id][c.name].serverCpuUs = +median(results[s.id][c.name].serverUs).toFixed(1);
  }
  lines.push('');
  lines.push('With no network, median µs (min–max): the byte work per request alone (exec + read_new + read_body_0 of a GET and its 2 KiB response; MRI over StringIO, ruby.wasm over a transport that answers at once), and the whole kept-alive request over a socket that answers at once (the client\'s own cost per request: MRI with an IO handing out the response, ruby.wasm with that transport):');
  lines.push('');
  const cell = (us) => `${median(us).toFixed(1)} (${Math.min(...us).toFixed(1)}–${Math.max(...us).toFixed(1)})`;
  lines.push(`| | ${Object.keys(bytes).join(' | ')} |`);
  lines.push(`|---|${Object.keys(bytes).map(() => '---:').join('|')}|`);
  lines.push(`| byte work | ${Object.values(bytes).map((r) => cell(r.bytes)).join(' | ')} |`);
  lines.push(`| whole request | ${Object.values(bytes).map((r) => cell(r.whole)).join(' | ')} |`);
  const stat = (us) => ({ medianUs: +median(us).toFixed(1), runsUs: us.map((x) => +x.toFixed(1)) });
  json.byteWork = Object.fromEntries(Object.entries(bytes).map(([k, r]) => [k, stat(r.bytes)]));
  json.instantRequest = Object.fromEntries(Object.entries(bytes).map(([k, r]) => [k, stat(r.whole)]));
  const parts = Object.entries(bytes).filter(([, r]) => r.breakdown);
  if (parts.length) {
    lines.push('');
    lines.push('Where the whole request goes with no network, ruby.wasm (codec on; one more instrumented run): bridge calls per request, and µs in JS (the bridge, without the codec), in the codec (C), and the rest (Ruby):');
    lines.push('');
    lines.push('| run | calls | JS µs | C µs | Ruby µs |');
    lines.push('|---|---:|---:|---:|---:|');
    for (const [k, r] of parts) lines.push(`| ${k} | ${r.breakdown.calls} | ${r.breakdown.jsUs} | ${r.breakdown.cUs} | ${r.breakdown.rubyAndLoopUs} |`);
    json.instantBreakdown = Object.fromEntries(parts.map(([k, r]) => [k, r.breakdown]));
  }
  if (Object.keys(breakdowns).length) {
    lines.push('');
    lines.push('Per request, ruby.wasm (codec on): bridge calls, event-loop turns (fiber parks), timers armed, bytes copied between Ruby and JS, µs in JS (bridge, without the codec and the system calls), in the codec (C), in read(2) and write(2) of a connection\'s fd made by this thread (outside waits), waiting for the network inside the bridge\'s calls (a blocking transport\'s wait, the waiting transport\'s poll of the connection right after a request), and the rest (Ruby, and for the waiting transport the event loop):');
    lines.push('');
    lines.push('| run | calls | turns | timers | bytes | JS µs | C µs | read/write µs | network wait µs | Ruby + loop µs |');
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [k, v] of Object.entries(breakdowns)) lines.push(`| ${k} | ${v.calls} | ${v.parks} | ${v.timers} | ${v.copied} | ${v.jsUs} | ${v.cUs} | ${v.sysUs} | ${v.waitUs} | ${v.rubyAndLoopUs} |`);
    json.breakdown = breakdowns;
  }
  const text = lines.join('\n');
  console.log(text);
  if (OUT) {
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(`${OUT}.md`, `${text}\n`);
    writeFileSync(`${OUT}.json`, `${JSON.stringify(json, null, 2)}\n`);
  }
}

await main();
process.exit(0);
