// The blocking transport (installNetHttp(vm, { blocking: true })): Net::HTTP
// waits as it does natively, with no fiber switch, so it runs from vm.eval,
// inside blocks of C-implemented iterators, and sees a connection the server
// closed while Ruby slept; under NetHttpWasm::Scheduler, fibers' requests
// overlap. The VM runs in a worker thread (vm-thread.mjs): the servers stay
// on this thread's event loop.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { VERSIONS, bootThreadVM, rbJSON, captureServer, listen, closeServer } from '../support/browser/harness.mjs';
import { withScript, runNode } from '../support/child.mjs';

// 3 MiB that differ at every offset (a byte copied from the wrong place shows)
const BIG = Buffer.alloc(3 << 20);
for (let i = 0; i < BIG.length; i += 4) BIG.writeUInt32LE((i * 2654435761) >>> 0, i);

for (const version of VERSIONS) {
  describe(`blocking transport, ruby.wasm ${version}`, { timeout: 120000 }, () => {
    let vm;
    let srv;
    before(async () => {
      vm = await bootThreadVM(version);
      srv = await captureServer((req, conn, i, socket) => {
        const body = `${req.method} ${req.target} conn=${conn}`;
        if (req.target === '/idle') setTimeout(() => socket.end(), 50);
        if (req.target === '/boom') return 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n';
        if (req.target === '/big') {
          // written in pieces, so that the client's reads end at many places
          for (let off = 0; off < BIG.length; off += 100000) setTimeout(() => socket.write(BIG.subarray(off, off + 100000)), off / 100000);
          return `HTTP/1.1 200 OK\r\nContent-Length: ${BIG.length}\r\n\r\n`;
        }
        return `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      });
    });
    after(async () => {
      await srv.close();
      await vm.close();
    });

    test("a TCPServer's connections whose bytes and end came before Ruby's accept: each read whole", async () => {
      const port = await rbJSON(vm, `require 'socket'; $early = TCPServer.new('127.0.0.1', 0); $early.addr[1]`);
      const got = [];
      for (let i = 0; i < 10; i++) {
        const answered = new Promise((resolve, reject) => {
          const c = net.connect(port, '127.0.0.1', () => c.end(`hello #${i}`));
          let out = '';
          c.on('data', (d) => (out += d));
          c.on('error', reject);
          c.on('close', () => resolve(out));
        });
        // (long enough for the bytes and the end to reach the I/O thread)
        await new Promise((resolve) => setTimeout(resolve, 50));
        const read = await rbJSON(vm, `a = $early.accept; x = a.read; a.write "got #{x.bytesize}"; a.close; x`);
        got.push([read, await answered]);
      }
      await rbJSON(vm, `$early.close; $early.closed?`);
      assert.deepEqual(got, Array.from({ length: 10 }, (_, i) => [`hello #${i}`, `got ${`hello #${i}`.length}`]));
    });

    test('requests from vm.eval inside Array#map and Hash#each blocks, raising and rescuing there', async () => {
      const r = await rbJSON(vm, `
        u = "http://127.0.0.1:${srv.port}"
        a = %w[/m1 /boom /m2].map do |path|
          begin
            Net::HTTP.get(URI(u + path))
          rescue => e
            e.class.name
          end
        end
        h = {}
        { 'x' => '/h1', 'y' => '/boom' }.each do |k, path|
          h[k] = begin
            Net::HTTP.get_response(URI(u + path)).code
          rescue => e
            e.class.name
          end
        end
        [a, h, Fiber.current.alive?, Thread.list.size, NetHttpWasm.blocking?]`);
      assert.deepEqual(r[0], ['GET /m1 conn=0', 'Net::HTTPHeaderSyntaxError', 'GET /m2 conn=2']);
      assert.deepEqual(r[1], { x: '200', y: 'Net::HTTPHeaderSyntaxError' });
      assert.deepEqual(r.slice(2), [true, 1, true]);
    });

    test('large bodies arrive whole, with the codec and with net/http reading them itself', async () => {
      const r = await rbJSON(vm, `
        require 'digest'
        out = []
        [true, false].each do |codec|
          NetHttpWasm.codec = codec
          Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
            2.times { b = h.get('/big').body; out << [b.bytesize, Digest::SHA256.hexdigest(b)] }
          end
        ensure
          NetHttpWasm.codec = true
        end
        out`);
      const want = [BIG.length, createHash('sha256').update(BIG).digest('hex')];
      assert.deepEqual(r, [want, want, want, want]);
    });

    test('a long eval making connection after connection: past 4096 since the event loop last turned, they go through the I/O thread', async () => {
      // (a handle made in the VM's thread is let go by that thread's event
      // loop only, about 2 KB of it; the count starts over once it has turned)
      const here = `NetHttpWasm.bridge[:conns].call(:get, $h.instance_variable_get(:@socket).io.id)[:here].to_s`;
      const r = await rbJSON(vm, `
        u = URI("http://127.0.0.1:${srv.port}/n")
        codes = Array.new(4100) { Net::HTTP.get_response(u).code }.tally
        $h = Net::HTTP.new('127.0.0.1', ${srv.port})
        $h.start
        [codes, $h.get('/last').code, ${here}]`);
      assert.deepEqual(r, [{ 200: 4100 }, '200', 'undefined']);
      // (time for the VM's thread to finish with its messages and turn its loop)
      await new Promise((resolve) => setTimeout(resolve, 50));
      const r2 = await rbJSON(vm, `
        $h.finish
        $h = Net::HTTP.new('127.0.0.1', ${srv.port})
        $h.start
        [$h.get('/next').code, ${here}].tap { $h.finish }`);
      assert.deepEqual(r2, ['200', 'true']);
    });

    test('a POST after the server closed the kept-alive connection during sleep goes on a new connection', async () => {
      const before = srv.conns.length;
      const r = await rbJSON(vm, `
        Net::HTTP.start('127.0.0.1', ${srv.port}) do |h|
          a = h.get('/idle').body
          sleep 0.3 # the server closes the connection meanwhile
          [a, h.post('/after', 'x=1').body]
        end`);
      assert.deepEqual(r, [`GET /idle conn=${before}`, `POST /after conn=${before + 1}`]);
      assert.equal(srv.conns[before].requests.length, 1, 'nothing was written to the closed connection');
    });

    describe('NetHttpWasm::Scheduler', () => {
      // /delay/N answers after N ms; /barrier holds each request until 10
      // are there (then answers them all), or for 3 s
      let server;
      let port;
      let held = [];
      let maxHeld = 0;
      const sockets = new Set();
      before(async () => {
        server = http.createServer((req, res) => {
          const path = new URL(req.url, 'http://x').pathname;
          if (path === '/barrier') {
            held.push(res);
            maxHeld = Math.max(maxHeld, held.length);
            if (held.length === 10) for (const r of held.splice(0)) r.end('met');
            else setTimeout(() => held.includes(res) && (held.splice(held.indexOf(res), 1), res.end('alone')), 3000);
            return;
          }
          setTimeout(() => res.end(req.url), Number(path.split('/')[2]) || 0);
        });
        server.on('connection', (s) => {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
        });
        port = await listen(server);
      });
      after(() => closeServer(server, sockets));

      test('requests in fibers overlap: 10 at once at the server; 10 to /delay/50 well under 10 × 50 ms', async () => {
        const r = await rbJSON(vm, `
          u = "http://127.0.0.1:${port}"
          # a first round loads net/http's code paths (not timed)
          NetHttpWasm::Scheduler.run { 10.times { Fiber.schedule { Net::HTTP.get(URI(u + '/delay/0')) } } }
          met = []
          NetHttpWasm::Scheduler.run { 10.times { Fiber.schedule { met << Net::HTTP.get(URI(u + '/barrier')) } } }
          out = []
          t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
          NetHttpWasm::Scheduler.run do
            10.times { |i| Fiber.schedule { out << Net::HTTP.get(URI(u + "/delay/50?#{i}")) } }
          end
          [met, out.sort, (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 1000]`);
        assert.deepEqual(r[0], Array(10).fill('met'), 'the server held all 10 requests at once');
        assert.equal(maxHeld, 10);
        assert.deepEqual(r[1], Array.from({ length: 10 }, (_, i) => `/delay/50?${i}`));
        assert.ok(r[2] < 400, `10 requests to /delay/50 took ${r[2].toFixed(1)} ms (one after another: 500 ms or more)`);
      });

      test('sleep, a request of the fiber that runs the scheduler, Timeout.timeout, read_timeout and Queue', async () => {
        const r = await rbJSON(vm, `
          u = "http://127.0.0.1:${port}"
          order = []
          main = nil
          NetHttpWasm::Scheduler.run do
            Fiber.schedule { sleep 0.4; order << :slept }
            Fiber.schedule { order << Net::HTTP.get(URI(u + '/delay/250')) }
            # not a scheduled fiber: it runs the others while it waits
            main = Net::HTTP.get(URI(u + '/delay/50'))
            order << :main
          end
          to = rt = nil
          NetHttpWasm::Scheduler.run do
            Fiber.schedule do
              Timeout.timeout(0.05) { Net::HTTP.get(URI(u + '/delay/2000')) }
            rescue Timeout::Error => e
              to = [e.class.name, e.message]
            end
            Fiber.schedule do
              Net::HTTP.start('127.0.0.1', ${port}) { |h| h.read_timeout = 0.05; h.max_retries = 0; h.get('/delay/2000') }
            rescue Net::ReadTimeout => e
              rt = e.class.name
            end
          end
          q = Thread::Queue.new
          got = []
          NetHttpWasm::Scheduler.run do
            Fiber.schedule { got << q.pop }
            Fiber.schedule { sleep 0.01; q << Net::HTTP.get(URI(u + '/delay/10')) }
          end
          [order, main, to, rt, got, NetHttpWasm.bridge[:pendings][:size].to_i]`);
        const [order, main, ...rest] = r;
        // one after another, the fiber's /delay/250 (scheduled first) would end before main's /delay/50
        assert.deepEqual([order, main], [['main', '/delay/250', 'slept'], '/delay/50']);
        // the waits given up (Timeout, read_timeout) left nothing behind in the bridge
        assert.deepEqual(rest, [['Timeout::Error', 'execution expired'], 'Net::ReadTimeout', ['/delay/10'], 0]);
      });
    });
  });
}

test('the I/O thread does not hold the process: a script that used the blocking transport exits', { timeout: 60000 }, async () => {
  const script = `import { bootVM } from ${JSON.stringify(new URL('../support/browser/harness.mjs', import.meta.url).href)};
    import { installNetHttp } from ${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)};
    const vm = await bootVM('4.0');
    const handle = installNetHttp(vm, { blocking: true });
    const r = vm.eval("require 'net/http'; begin; Net::HTTP.get(URI('http://127.0.0.1:1/')); rescue => e; e.class.name; end").toString();
    await handle.uninstall();
    console.log(r);`;
  await withScript(script, (file) => {
    const out = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 50000 });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'Errno::ECONNREFUSED');
  });
});

test('a loopback connection is a bare TCP handle on Node, and a node:net Socket under --pending-deprecation, which then warns of nothing', { timeout: 60000 }, async () => {
  const server = http.createServer((req, res) => res.end(`hi ${req.url}`));
  const port = await listen(server);
  const script = `import { bootVM } from ${JSON.stringify(new URL('../support/browser/harness.mjs', import.meta.url).href)};
    import { installNetHttp } from ${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)};
    const vm = await bootVM('4.0');
    const handle = installNetHttp(vm, { blocking: true });
    console.log(vm.eval(\`require 'net/http'
      h = Net::HTTP.new('127.0.0.1', ${port})
      h.start
      r = [h.get('/a').body, h.get('/b').body, NetHttpWasm.bridge[:conns].call(:get, h.instance_variable_get(:@socket).io.id)[:socket][:bare].to_s]
      h.finish
      r.join(',')\`).toString());
    await handle.uninstall();`;
  try {
    await withScript(script, async (file) => {
      const bare = await runNode([file]);
      assert.equal(bare.status, 0, bare.err);
      assert.equal(bare.out.trim(), 'hi /a,hi /b,true');
      const pending = await runNode(['--pending-deprecation', file]);
      assert.equal(pending.status, 0, pending.err);
      assert.equal(pending.out.trim(), 'hi /a,hi /b,undefined');
      assert.doesNotMatch(pending.err, /DeprecationWarning/);
    });
  } finally {
    await closeServer(server);
  }
});

test('awaited vm.evalAsync calls one after another, each making connections, let the event loop turn: past 4096 connections they are still made in the VM\'s thread', { timeout: 120000 }, async () => {
  const server = http.createServer((req, res) => res.end('ok'));
  const port = await listen(server);
  const script = `import { createRubyVM } from ${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)};
    const { vm, dispose } = await createRubyVM({ blocking: true });
    await vm.evalAsync(\`require 'net/http'
      def nc(n) = Array.new(n) { Net::HTTP.get_response(URI('http://127.0.0.1:${port}/')).code }.tally
      def here
        h = Net::HTTP.new('127.0.0.1', ${port})
        h.start
        NetHttpWasm.bridge[:conns].call(:get, h.instance_variable_get(:@socket).io.id)[:here].to_s.tap { h.finish }
      end\`);
    const out = [];
    for (let i = 0; i < 10; i++) out.push((await vm.evalAsync('nc(500)[\\'200\\']')).toString());
    out.push(vm.eval('here').toString());
    console.log(out.join(','));
    await dispose();`;
  try {
    const r = await withScript(script, (file) => runNode([file]));
    assert.equal(r.status, 0, r.err);
    assert.equal(r.out.trim(), `${Array(10).fill('500').join(',')},true`);
  } finally {
    await closeServer(server);
  }
});
