// Net::HTTP request/response cycles inside ruby.wasm 4.0, with the codec ON
// (net-http-wasm writes requests and reads responses) vs OFF (net/http's own
// Ruby code does, over the same socket adapter).
//
//   node benchmarks/rubywasm-nethttp.mjs [--runs 7] [--requests 2000] [--quick] [--json out.json]
//
// Three measurements, each the median of --runs runs (ON and OFF alternate):
//   tcp      full cycles against a keep-alive node:net server on 127.0.0.1
//            (one connection, Net::HTTP.start { N.times { http.request(req) } })
//   memory   the same cycles over an in-process transport that answers at once
//            (no kernel, no event-loop wait: the cost of Ruby + crossings + bytes)
//   bytes    only the byte work inside those cycles: the time spent in
//            Net::HTTPGenericRequest#exec, Net::HTTPResponse.read_new and
//            #read_body_0 (over the in-process transport, so no waiting)
// The request: a POST with set_form_data and 3 extra headers; the response:
// 200 with 8 header fields and a 1 KiB body (and a chunked variant).
import v8 from 'node:v8';
import os from 'node:os';
import net from 'node:net';
import { writeFileSync } from 'node:fs';
import { installNetHttp } from '../js/ruby/node.mjs';
import { bootVM, rb, takeRequest } from '../support/rubywasm.mjs';

v8.setFlagsFromString('--no-incremental-marking');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const quick = args.includes('--quick');
const RUNS = Number(opt('runs', quick ? 3 : 7));
const N = Number(opt('requests', quick ? 300 : 2000));
const jsonOut = opt('json', null);

const BODY = 'x'.repeat(1024);
const RESPONSES = {
  length: Buffer.from(
    'HTTP/1.1 200 OK\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nServer: bench\r\nContent-Type: text/plain; charset=utf-8\r\n' +
      'Cache-Control: no-cache\r\nX-Request-Id: 0123456789abcdef\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2; Path=/\r\n' +
      `Content-Length: ${BODY.length}\r\n\r\n${BODY}`,
  ),
  chunked: Buffer.from(
    'HTTP/1.1 200 OK\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nServer: bench\r\nContent-Type: text/plain; charset=utf-8\r\n' +
      'Cache-Control: no-cache\r\nX-Request-Id: 0123456789abcdef\r\nSet-Cookie: a=1; Path=/\r\nSet-Cookie: b=2; Path=/\r\n' +
      `Transfer-Encoding: chunked\r\n\r\n200\r\n${BODY.slice(0, 512)}\r\n200\r\n${BODY.slice(512)}\r\n0\r\n\r\n`,
  ),
};

// Answers each complete request with the response named by its path.
function responder() {
  let buf = Buffer.alloc(0);
  return (chunk, reply) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
    for (;;) {
      const req = takeRequest(buf);
      if (!req) break;
      buf = Buffer.from(req.rest);
      reply(req.target.includes('chunked') ? RESPONSES.chunked : RESPONSES.length);
    }
  };
}

async function tcpServer() {
  const sockets = new Set();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.setNoDelay(true);
    const on = responder();
    s.on('data', (d) => on(d, (r) => s.write(r)));
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

// installNetHttp's custom transport: a duplex that answers at once.
function memoryTransport() {
  const stream = {
    onData: null,
    onEnd: null,
    onError: null,
    write(bytes) {
      on(bytes, (r) => stream.onData(new Uint8Array(r.buffer, r.byteOffset, r.length)));
    },
    close() {},
  };
  const on = responder();
  return stream;
}

const RUBY_SETUP = `
$nhw_t = Hash.new(0.0)
module NhwTimeExec
  def exec(*a)
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC); super
  ensure
    $nhw_t[:bytes] += Process.clock_gettime(Process::CLOCK_MONOTONIC) - t if $nhw_timing
  end
end
module NhwTimeReadNew
  def read_new(*a)
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC); super
  ensure
    $nhw_t[:bytes] += Process.clock_gettime(Process::CLOCK_MONOTONIC) - t if $nhw_timing
  end
end
module NhwTimeReadBody
  private def read_body_0(*a)
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC); super
  ensure
    $nhw_t[:bytes] += Process.clock_gettime(Process::CLOCK_MONOTONIC) - t if $nhw_timing
  end
end
Net::HTTPGenericRequest.prepend(NhwTimeExec)
Net::HTTPResponse.singleton_class.prepend(NhwTimeReadNew)
Net::HTTPResponse.prepend(NhwTimeReadBody)

def nhw_cycles(host, port, n, path, codec, timing)
  NetHttpWasm.codec = codec
  $nhw_timing = timing
  $nhw_t[:bytes] = 0.0
  bytes = 0
  t0 = nil
  Net::HTTP.start(host, port) do |http|
    i = 0
    while i < n + 50
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC) if i == 50 # 50 warm-up cycles
      $nhw_t[:bytes] = 0.0 if i == 50
      req = Net::HTTP::Post.new(path, 'X-Trace' => 'abc', 'Accept-Language' => 'en')
      req['X-Count'] = i.to_s
      req.set_form_data('name' => 'Zoë', 'langs' => ['ruby', 'c'], 'q' => 'a b&c')
      res = http.request(req)
      bytes += res.body.bytesize + res['content-type'].bytesize
      i += 1
    end
  end
  total = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  raise "bad body total #{bytes}" unless bytes == (n + 50) * (1024 + 25)
  [total / n * 1e6, $nhw_t[:bytes] / n * 1e6]
ensure
  NetHttpWasm.codec = true
  $nhw_timing = false
end
`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function measure(vm, host, port, path, codec, timing) {
  const r = await rb(vm, `nhw_cycles(${JSON.stringify(host)}, ${port}, ${N}, ${JSON.stringify(path)}, ${codec}, ${timing}).join(',')`);
  return r.split(',').map(Number);
}

async function main() {
  const tcp = await tcpServer();
  const vmTcp = await bootVM('4.0');
  installNetHttp(vmTcp);
  await rb(vmTcp, RUBY_SETUP);
  const vmMem = await bootVM('4.0');
  const { bridge } = installNetHttp(vmMem, { transport: async () => memoryTransport() });
  await rb(vmMem, RUBY_SETUP);
  // JS-side time of the bridge calls (codec ON: the codec's own work, in
  // JS and its WebAssembly module, plus the records' copy into Ruby memory)
  const js = { t: 0 };
  for (const m of ['send', 'recvNow', 'recv', 'write', 'readNow', 'state']) {
    const f = bridge[m].bind(bridge);
    bridge[m] = (...a) => {
      const t0 = performance.now();
      const r = f(...a);
      js.t += performance.now() - t0;
      return r;
    };
  }

  const rows = [];
  for (const path of ['/length', '/chunked']) {
    const samples = { tcp: { on: [], off: [] }, memory: { on: [], off: [] }, bytes: { on: [], off: [] }, bridge: { on: [], off: [] } };
    // one untimed pass each to warm up the JIT tiers
    for (const codec of [true, false]) {
      await measure(vmTcp, '127.0.0.1', tcp.port, path, codec, false);
      await measure(vmMem, 'memory.test', 80, path, codec, true);
    }
    for (let run = 0; run < RUNS; run++) {
      for (const codec of run % 2 ? [false, true] : [true, false]) {
        const k = codec ? 'on' : 'off';
        samples.tcp[k].push((await measure(vmTcp, '127.0.0.1', tcp.port, path, codec, false))[0]);
        js.t = 0;
        const [cycle, bytes] = await measure(vmMem, 'memory.test', 80, path, codec, true);
        samples.bridge[k].push((js.t * 1000) / (N + 50));
        samples.memory[k].push(cycle);
        samples.bytes[k].push(bytes);
      }
    }
    for (const what of ['tcp', 'memory', 'bytes', 'bridge']) {
      const on = median(samples[what].on);
      const off = median(samples[what].off);
      const ratios = samples[what].on.map((x, i) => samples[what].off[i] / x);
      rows.push({
        response: path.slice(1),
        what,
        on_us: +on.toFixed(1),
        off_us: +off.toFixed(1),
        speedup: +(off / on).toFixed(2),
        paired_speedup: +median(ratios).toFixed(2),
        on_runs: samples[what].on.map((x) => +x.toFixed(1)),
        off_runs: samples[what].off.map((x) => +x.toFixed(1)),
      });
    }
  }
  await tcp.close();

  const cpus = os.cpus();
  const machine = `${cpus[0].model.trim()} (${cpus.length} CPUs), ${os.platform()} ${os.release()}, Node ${process.version}`;
  console.log(`Net::HTTP in ruby.wasm 4.0: µs per request/response cycle, median of ${RUNS} runs × ${N} cycles (ON and OFF alternate)`);
  console.log(`machine: ${machine}`);
  console.log('');
  console.log('| response | measured | codec ON µs | codec OFF µs | OFF/ON (medians) | OFF/ON (median of paired runs) |');
  console.log('|---|---|---:|---:|---:|---:|');
  const label = {
    tcp: 'cycle, TCP keep-alive',
    memory: 'cycle, in-process transport',
    bytes: 'byte work: exec + read_new + read_body_0',
    bridge: 'of which in JS (bridge calls)',
  };
  for (const r of rows) console.log(`| ${r.response} | ${label[r.what]} | ${r.on_us} | ${r.off_us} | ${r.speedup}× | ${r.paired_speedup}× |`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ machine, runs: RUNS, requests: N, rows }, null, 2));
  process.exit(0);
}

await main();
