// Ruby's garbage collector and fibers that wait for the host. ruby.wasm
// keeps a switched-out fiber's C locals where the collector does not look,
// so a collection made while vm.evalAsync's fiber waits inside a C method's
// block (Array#map, Array#select) freed the Array that method fills: under
// GC.stress `[u, u].map { |x| Net::HTTP.get(x) }` gave back a String of the
// bridge's, and Excon's IO.select ended in "[BUG] try to mark T_NONE
// object". The collector is held off from each park to its wake
// (ruby/net_http_wasm/collector.rb).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { installNetHttp } from '../../js/ruby/node.mjs';
import { bootVM, rb, rbJSON, rbUnderGCStress, VERSIONS } from '../support/rubywasm.mjs';

let server;
let base;
const held = []; // answers to /hold, sent when a test says so

before(async () => {
  server = http.createServer((req, res) => {
    const answer = () => res.end('x'.repeat(2048));
    if (req.url.startsWith('/hold')) held.push(answer);
    else if (req.url.startsWith('/slow')) {
      const t = setTimeout(answer, 300);
      res.on('close', () => clearTimeout(t));
    } else answer();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});

// Runs waiting (an eval that waits for /hold) and, meanwhile, an eval
// that makes 20 requests allocating 600,000 Strings; then lets the first
// go. { value: the first's, collected: collections made by the second }.
async function whileOneWaits(vm, waiting) {
  const first = rb(vm, waiting);
  const { collected } = await rbJSON(vm, `
    u = URI(${JSON.stringify(base)})
    gcs = GC.count
    kept = []
    i = 0
    while i < 20
      Net::HTTP.get(u)
      30_000.times { kept << "x" * 8 }
      kept.clear
      i += 1
    end
    { collected: GC.count - gcs }`);
  assert.equal(held.length, 1);
  held.shift()();
  return { value: await first, collected };
}

for (const version of VERSIONS) {
  test(`ruby.wasm ${version}: under GC.stress, requests that wait inside Array#map and Array#select keep what those methods fill`, async () => {
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    const got = await rbUnderGCStress(vm, `
      u = URI(${JSON.stringify(base)})
      sizes = [u, u].map { |x| Net::HTTP.get(x).bytesize }
      timeouts = [1, 2].map do |i|
        Net::HTTP.start(u.host, u.port, read_timeout: 0.02, max_retries: 0) { |h| h.get("/slow/#{i}") }
      rescue Net::ReadTimeout => e
        e.class.name
      end
      writable = [u].select { |x| IO.select(nil, [TCPSocket.new(x.host, x.port)], nil, 1) }.map(&:class)
      { sizes: sizes, timeouts: timeouts, writable: writable.map(&:name) }`);
    assert.deepEqual(got, { sizes: [2048, 2048], timeouts: ['Net::ReadTimeout', 'Net::ReadTimeout'], writable: ['URI::HTTP'], on: true });
    await handle.uninstall();
  });

  test(`ruby.wasm ${version}: while one eval waits inside Integer#times, another's collections go on, unless it waits inside Array#map; a program's own GC.disable is kept`, async () => {
    const vm = await bootVM(version);
    const handle = installNetHttp(vm);
    // A waits inside Integer#times (a C method that holds nothing, by its
    // name alone too, as 3.2's and 3.3's backtraces give it) until B is done
    const a = await whileOneWaits(vm, `1.times { Net::HTTP.get(URI(${JSON.stringify(`${base}/hold`)})) }`);
    assert.equal(a.value, '1');
    // (3.2 and 3.3 name the waiting eval's Kernel.eval and Fiber#transfer
    // frames "eval" and "transfer", as every C method of those names:
    // Binding#eval, RubyVM::InstructionSequence#eval, JS.eval, IO::Buffer#transfer)
    assert.ok(a.collected > 0, `no collection in 20 requests and 600,000 Strings while another eval waited (${JSON.stringify(a)})`);
    // ...but not while it waits inside Array#map, whose Array only a C local holds
    const a2 = await whileOneWaits(vm, `[URI(${JSON.stringify(`${base}/hold`)})].map { |x| Net::HTTP.get(x).bytesize }.inspect`);
    assert.deepEqual(a2, { value: '[2048]', collected: 0 });
    const off = await rbJSON(vm, `
      GC.disable
      Net::HTTP.get(URI(${JSON.stringify(base)}))
      still = GC.disable
      GC.enable
      { still_off: still }`);
    assert.deepEqual(off, { still_off: true });
    await handle.uninstall();
  });
}
