// Soak: many requests from Net::HTTP in one ruby.wasm 4.0 VM against the
// chaos server (tests/support/chaos/server.mjs, its own process), kept-alive
// first, then one new connection per request; a mix of methods, request
// bodies, gzip and chunked responses and a share of faults (resets, closes,
// garbage). Every response is checked. At each checkpoint, after a forced
// GC in Ruby and in JS: the VM's linear memory, Ruby's heap (GC.stat), the
// JS heap, the connections the bridge holds and the sockets open on either
// side. Memory must stay flat after the warm-up.
//
//   node --expose-gc benchmarks/soak.mjs [--keepalive 100000] [--fresh 10000]
//        [--every 10000] [--blocking] [--json]
//
// --json prints one JSON object (checkpoints, errors, mismatches) instead of
// the table.
import v8 from 'node:v8';
import os from 'node:os';
import { installNetHttp } from '../js/ruby/node.mjs';
import { bootVM } from '../tests/support/rubywasm.mjs';
import { startChaos } from '../tests/support/chaos/index.mjs';

v8.setFlagsFromString('--no-incremental-marking');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const KEEPALIVE = opt('keepalive', 100000);
const FRESH = opt('fresh', 10000);
const EVERY = opt('every', 10000);
const blocking = args.includes('--blocking');
const asJson = args.includes('--json');

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc');
  process.exit(2);
}

// The client: `batch` makes n requests (kept-alive on one Net::HTTP, or a
// new Net::HTTP per request) and counts rescued errors and wrong answers.
const RUBY = `
require 'net/http'
require 'zlib'
module NhwSoak
  GZIPPED = 'gzipped ' * 64
  CHUNKED = 'chunk 0;chunk 1;chunk 2;'
  @errors = Hash.new(0)
  @wrong = 0
  @done = 0
  @samples = []
  class << self
    attr_reader :errors, :wrong, :done
  end

  def self.sum(body)
    h = 0
    body.each_byte { |b| h = (h * 31 + b) & 0xffffffff }
    h.to_s(16)
  end

  # the i-th request: [request, expected body or nil (a fault)]
  def self.request(i)
    case i % 20
    when 0, 1, 2, 3, 4, 19 then [Net::HTTP::Get.new("/ok?body=r#{i}"), "r#{i}"]
    when 6, 7, 8
      body = "p=#{i}&" + ('v' * (i % 700))
      r = Net::HTTP::Post.new('/echo')
      r.body = body
      [r, "POST #{body.bytesize} #{sum(body)}"]
    when 9
      r = Net::HTTP::Put.new('/echo', 'Content-Type' => 'application/octet-stream')
      r.body = (i.to_s * 50).b
      [r, "PUT #{r.body.bytesize} #{sum(r.body)}"]
    when 10, 11, 12 then [Net::HTTP::Get.new('/gzip'), GZIPPED]
    when 13, 14 then [Net::HTTP::Get.new('/chunked'), CHUNKED]
    when 15 then [Net::HTTP::Delete.new("/ok?body=d#{i}"), "d#{i}"]
    when 16 then [Net::HTTP::Get.new('/big?n=20000'), 'x' * 20000]
    when 17 then [Net::HTTP::Get.new('/glued'), 'first'] # leaves a response queued: the next answer is off by one
    when 18
      # faults, in turn: reset (retried, raised), close mid-body, garbage, close after the response
      [Net::HTTP::Get.new(%w[/reset /fin-chunked /garbage /close-after /reset-body][(i / 20) % 5]), nil]
    else # 5 (not after a fault: a close just before a write fails a PATCH in MRI too)
      r = Net::HTTP::Patch.new('/echo')
      r.body = '{"i":%d}' % i
      [r, "PATCH #{r.body.bytesize} #{sum(r.body)}"]
    end
  end

  def self.one(h, i)
    req, want = request(i)
    begin
      res = h.request(req)
      got = res.body.to_s
      if want && got != want
        @wrong += 1
        @samples = (@samples << [i, want[0, 40], got[0, 40]]).last(5)
      end
      # /glued left a second response queued: MRI would hand it to the next
      # request on this connection, so start a new one
      h.finish if i % 20 == 17 && h.started?
    rescue StandardError => e
      @errors[e.class.name] += 1
      if want
        @wrong += 1
        @samples = (@samples << [i, e.class.name, e.message[0, 60]]).last(5)
      end
    end
    @done += 1
  end

  def self.batch(port, from, n, fresh)
    i = from
    stop = from + n
    if fresh
      while i < stop
        h = Net::HTTP.new('127.0.0.1', port)
        h.read_timeout = 5
        h.start
        one(h, i)
        h.finish if h.started?
        i += 1
      end
    else
      @http ||= Net::HTTP.new('127.0.0.1', port).tap { |h| h.read_timeout = 5 }
      while i < stop
        @http.start unless @http.started?
        one(@http, i)
        i += 1
      end
    end
    nil
  end

  def self.close
    @http.finish if @http && @http.started?
    @http = nil
  end

  def self.stats
    GC.start
    s = GC.stat
    JSON.generate('heap_live_slots' => s[:heap_live_slots], 'heap_pages' => s[:heap_allocated_pages] || s[:heap_eden_pages],
                  'errors' => @errors, 'wrong' => @wrong, 'done' => @done, 'samples' => @samples)
  end
end
`;

export async function soak({ keepalive = KEEPALIVE, fresh = FRESH, every = EVERY, blockingMode = blocking, log = () => {} } = {}) {
  const chaos = await startChaos({ tls: false });
  const vm = await bootVM('4.0');
  const handle = installNetHttp(vm, { blocking: blockingMode });
  vm.eval(`require 'json'\n${RUBY}\nnil`);
  const memory = vm.instance.exports.memory;
  const run = async (code) => (blockingMode ? vm.eval(code) : await vm.evalAsync(code)).toString();
  const checkpoints = [];
  let serverConnections = 0;
  const t0 = performance.now();
  const checkpoint = async (phase, requests) => {
    // JS first: its finalizers release the Ruby objects JS held
    for (let k = 0; k < 3; k++) {
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    const ruby = JSON.parse(vm.eval('NhwSoak.stats').toString());
    globalThis.gc();
    // measured before the server's answer arrives (and the server's counts
    // are reset at each checkpoint: it would send every request it read)
    const jsHeap = process.memoryUsage().heapUsed;
    const server = await chaos.stats(true);
    serverConnections += server.connections;
    const cp = {
      phase,
      requests,
      seconds: Math.round((performance.now() - t0) / 100) / 10,
      wasmMemoryMiB: memory.buffer.byteLength / 2 ** 20,
      rubyLiveSlots: ruby.heap_live_slots,
      rubyHeapPages: ruby.heap_pages,
      jsHeapMiB: Math.round((jsHeap / 2 ** 20) * 10) / 10,
      bridgeConns: handle.bridge.conns.size,
      serverOpen: server.open,
      serverConnections,
      errors: ruby.errors,
      wrong: ruby.wrong,
      samples: ruby.samples,
    };
    checkpoints.push(cp);
    log(cp);
  };
  const phase = async (name, total, isFresh) => {
    let done = 0;
    while (done < total) {
      const n = Math.min(every, total - done);
      await run(`NhwSoak.batch(${chaos.ports.plain}, ${done}, ${n}, ${isFresh})`);
      done += n;
      if (!isFresh && done === total) vm.eval('NhwSoak.close');
      await new Promise((r) => setTimeout(r, 50)); // let closes reach the server
      await checkpoint(name, done);
    }
  };
  try {
    await checkpoint('start', 0);
    await phase('keep-alive', keepalive, false);
    await phase('new connections', fresh, true);
  } finally {
    await handle.uninstall();
    chaos.close();
  }
  return { machine: `${os.cpus()[0].model}, ${os.cpus().length} cores, Node ${process.version}`, blocking: blockingMode, checkpoints };
}

function fmt(cp) {
  const errs = Object.entries(cp.errors).map(([k, v]) => `${k}:${v}`).join(' ');
  return `| ${cp.phase} | ${cp.requests} | ${cp.seconds} | ${cp.wasmMemoryMiB} | ${cp.rubyLiveSlots} | ${cp.rubyHeapPages} | ${cp.jsHeapMiB} | ${cp.bridgeConns} | ${cp.serverOpen} | ${cp.serverConnections} | ${cp.wrong} | ${errs} |`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!asJson) {
    console.log(`soak: ${KEEPALIVE} kept-alive + ${FRESH} new-connection requests, ruby.wasm 4.0, ${blocking ? 'blocking' : 'waiting'} transport`);
    console.log('| phase | requests | s | wasm memory MiB | Ruby live slots | Ruby heap pages | JS heap MiB | bridge conns | server open sockets | server conns | wrong answers | errors |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  }
  const result = await soak({ log: asJson ? () => {} : (cp) => console.log(fmt(cp)) });
  if (asJson) console.log(JSON.stringify(result));
  else console.log(result.machine);
  process.exit(0);
}
