// Ruby's HTTP gems, unmodified, inside ruby.wasm 4.0 and 3.4: loaded from
// Debian's packages (mounted into the VM by createRubyVM, never copied into
// this repository) and run against local servers; the stand-ins they need;
// concurrency with NetHttpWasm::Scheduler (Fiber.schedule, sleep,
// Timeout.timeout, Queue).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRubyVM } from '../../js/ruby/node.mjs';
import { VERSIONS, listen, closeServer } from '../support/browser/harness.mjs';

const GEMS = '/usr/share/rubygems-integration/all/gems';
const VENDOR = '/usr/lib/ruby/vendor_ruby';
// Debian bookworm: ruby-net-http-persistent ruby-faraday ruby-httparty ruby-rest-client
const DEBIAN = [
  VENDOR, // net-http-persistent 3.1, rest-client and its dependencies, multi_xml
  'faraday-1.1.0', 'multipart-post-2.0.0', 'ruby2_keywords-0.0.5', 'httparty-0.21.0', 'mime-types-3.4.1',
  'mime-types-data-3.2022.0105', 'mini_mime-1.1.1', 'http-accept-2.2.0', 'connection_pool-2.2.5',
].map((g) => (g.startsWith('/') ? g : `${GEMS}/${g}`));
const missing = DEBIAN.filter((d) => !existsSync(d));
const skipGems = missing.length ? `not installed: ${missing.join(', ')} (apt-get install ruby-net-http-persistent ruby-faraday ruby-httparty ruby-rest-client)` : false;

async function rbJSON(vm, code) {
  return JSON.parse((await vm.evalAsync(`require 'json'\n(begin\n${code}\nend).to_json`)).toString());
}

let server;
let port;
let inFlight = 0;
let maxInFlight = 0;
const seen = [];
const sockets = new Set();
const big = 'x'.repeat(50000);

before(async () => {
  server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    seen.push(`${req.method} ${req.url} ${req.headers.host}`);
    if (u.pathname === '/delay/100') {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('finish', () => inFlight--);
    }
    if (u.pathname.startsWith('/delay/')) return setTimeout(() => res.end('slept'), Number(u.pathname.slice(7)));
    if (u.pathname === '/redirect') {
      res.writeHead(302, { location: '/big' });
      return res.end();
    }
    if (u.pathname === '/big') return res.end(big);
    if (u.pathname === '/short') {
      // Content-Length 10, 4 bytes, then the connection closes
      res.socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nabcd');
      return undefined;
    }
    if (u.pathname === '/json') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ ok: true, method: req.method }));
    }
    const body = [];
    req.on('data', (d) => body.push(d));
    req.on('end', () => {
      res.setHeader('content-type', 'text/plain');
      res.end(`${req.method} ${req.url} ${Buffer.concat(body)}`);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  port = await listen(server);
});
after(() => closeServer(server, sockets));

for (const version of VERSIONS) {
  describe(`gems in ruby.wasm ${version}`, { skip: skipGems, timeout: 300000 }, () => {
    let box;
    before(async () => {
      box = await createRubyVM({ ruby: version, gems: DEBIAN });
      box.vm.eval(`BASE = 'http://127.0.0.1:${port}'`);
    });
    after(() => box && box.dispose());

    test('net-http-persistent 3.1 keeps one connection for GET and POST', async () => {
      const before = seen.length;
      const r = await rbJSON(box.vm, `
        require 'net/http/persistent'
        h = Net::HTTP::Persistent.new(name: 'gems')
        a = h.request(URI("#{BASE}/json")).body
        post = Net::HTTP::Post.new('/echo'); post.body = 'hi'
        b = h.request(URI("#{BASE}/echo"), post).body
        conn = h.connection_for(URI(BASE)) { |c| c.http.object_id }
        h.shutdown
        [Net::HTTP::Persistent::VERSION, a, b, Net::HTTP::Persistent::DEFAULT_POOL_SIZE]`);
      assert.deepEqual(r, ['3.1.0', '{"ok":true,"method":"GET"}', 'POST /echo hi', 256]);
      assert.equal(seen.length - before, 2);
    });

    test('Faraday 1.x with its net_http adapter', async () => {
      const r = await rbJSON(box.vm, `
        require 'faraday'
        c = Faraday.new(url: BASE) { |f| f.request :url_encoded; f.adapter :net_http }
        g = c.get('/json')
        p = c.post('/form', { a: 1, b: 'x y' })
        [Faraday::VERSION, g.status, g.body, p.body, g.headers['content-type']]`);
      assert.deepEqual(r, ['1.1.0', 200, '{"ok":true,"method":"GET"}', 'POST /form a=1&b=x+y', 'application/json']);
    });

    test('open-uri follows a redirect to a large body (a Tempfile in /tmp)', async () => {
      const r = await rbJSON(box.vm, `
        require 'open-uri'
        io = URI.open("#{BASE}/redirect")
        [io.class.name, io.read.bytesize, io.base_uri.path, io.status]`);
      assert.deepEqual(r, ['Tempfile', 50000, '/big', ['200', 'OK']]);
    });

    test('HTTParty parses JSON', async () => {
      const r = await rbJSON(box.vm, `
        require 'httparty'
        res = HTTParty.get("#{BASE}/json")
        post = HTTParty.post("#{BASE}/echo", body: { q: 'a b' })
        [res.code, res.parsed_response, post.body]`);
      // HTTParty's own form encoding (native Ruby with HTTParty 0.21 sends the same)
      assert.deepEqual(r, [200, { ok: true, method: 'GET' }, 'POST /echo q=a%20b']);
    });

    test('rest-client GET and POST', async () => {
      const r = await rbJSON(box.vm, `
        require 'rest-client'
        g = RestClient.get("#{BASE}/json")
        p = RestClient.post("#{BASE}/echo", { a: 1 })
        [g.code, g.body, p.body]`);
      assert.deepEqual(r, [200, '{"ok":true,"method":"GET"}', 'POST /echo a=1']);
    });

    test('stand-ins: RLIMIT_NOFILE, socket options, IPSocket.getaddress, bigdecimal', async () => {
      const r = await rbJSON(box.vm, `
        bad = begin; IPSocket.getaddress('nhw-test.invalid'); rescue SocketError => e; e.message; end
        bd = begin; require 'bigdecimal'; BigDecimal('1').to_s; rescue NotImplementedError => e; e.class.name; end
        [Process.getrlimit(Process::RLIMIT_NOFILE).size, Socket::SOL_SOCKET, Socket::SO_KEEPALIVE, Socket::TCP_KEEPIDLE,
         IPSocket.getaddress('localhost'), IPSocket.getaddress('10.1.2.3'), bad, bd]`);
      // (3.2 and 3.3 include bigdecimal, a default gem there; the stand-in is
      // for the later Rubies, where it is a bundled gem ruby.wasm leaves out)
      const bd = version === '3.2' || version === '3.3' ? '0.1e1' : 'NotImplementedError';
      assert.deepEqual(r, [2, 1, 9, 4, '127.0.0.1', '10.1.2.3', 'getaddrinfo(3): Name or service not known', bd]);
    });

    test('a patch of Net::HTTP#connect made with alias_method runs', async () => {
      const r = await rbJSON(box.vm, `
        $connects = 0
        class Net::HTTP
          alias_method :connect_before_gems_test, :connect
          def connect
            $connects += 1
            connect_before_gems_test
          end
        end
        body = Net::HTTP.get(URI("#{BASE}/json"))
        [$connects, body]`);
      assert.deepEqual(r, [1, '{"ok":true,"method":"GET"}']);
    });

    test('ignore_eof = false: a short body raises EOFError; true (the default) returns it', async () => {
      const r = await rbJSON(box.vm, `
        strict = begin
          Net::HTTP.start('127.0.0.1', ${port}) { |h| h.ignore_eof = false; h.request(Net::HTTP::Post.new('/short')).body }
        rescue EOFError => e
          [e.class.name, e.message]
        end
        lax = Net::HTTP.start('127.0.0.1', ${port}) { |h| h.request(Net::HTTP::Post.new('/short')).body }
        [strict, lax]`);
      assert.deepEqual(r, [['EOFError', 'end of file reached'], 'abcd']);
    });

    test('unknown min_version / ssl_version raise as OpenSSL does', async () => {
      const r = await rbJSON(box.vm, `
        [:min_version, :max_version, :ssl_version].map do |k|
          h = Net::HTTP.new('127.0.0.1', ${port}); h.use_ssl = true
          h.public_send("#{k}=", k == :ssl_version ? :TLSv9 : :TLS1_4)
          begin; h.start; 'no error'; rescue ArgumentError => e; e.message; end
        end`);
      assert.deepEqual(r, ['unrecognized version "TLS1_4"', 'unrecognized version "TLS1_4"', "unknown SSL method `TLSv9'"]);
    });

    test('Fiber.schedule: 10 requests overlap, sleep and Timeout.timeout yield to the event loop', async () => {
      maxInFlight = 0;
      let ticks = 0;
      const timer = setInterval(() => ticks++, 5);
      try {
        const r = await rbJSON(box.vm, `
          out = []
          NetHttpWasm::Scheduler.run do
            10.times { |i| Fiber.schedule { out << Net::HTTP.get(URI("#{BASE}/delay/100?#{i}")) } }
          end
          order = []
          NetHttpWasm::Scheduler.run do
            start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
            [3, 1, 2].each { |n| Fiber.schedule { sleep [start + n * 0.15 - Process.clock_gettime(Process::CLOCK_MONOTONIC), 0].max; order << n } }
          end
          to = nil
          NetHttpWasm::Scheduler.run do
            Fiber.schedule do
              Timeout.timeout(0.05) { Net::HTTP.get(URI("#{BASE}/delay/2000")) }
            rescue Timeout::Error => e
              to = [e.class.name, e.message]
            end
          end
          q = Thread::Queue.new
          got = []
          NetHttpWasm::Scheduler.run do
            Fiber.schedule { got << q.pop }
            Fiber.schedule { sleep 0.01; q << 'item' }
          end
          [out.uniq, out.size, order, to, got]`);
        assert.deepEqual(r, [['slept'], 10, [1, 2, 3], ['Timeout::Error', 'execution expired'], ['item']]);
        assert.equal(maxInFlight, 10, 'the server saw all 10 requests at once');
        assert.ok(ticks > 5, `the event loop ran while Ruby slept (${ticks} ticks)`);
      } finally {
        clearInterval(timer);
      }
    });
  });
}

describe('the host environment', { timeout: 120000 }, () => {
  test('http_proxy from the environment: find_proxy resolves the name through the host', async () => {
    // a proxy that answers every request itself
    const got = [];
    const proxy = net.createServer((s) => {
      s.on('data', (d) => {
        got.push(d.toString('latin1').split('\r\n')[0]);
        s.end('HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nproxied');
      });
    });
    const proxyPort = await listen(proxy);
    const box = await createRubyVM({ ruby: '4.0', env: { http_proxy: `http://127.0.0.1:${proxyPort}` }, gems: [] });
    try {
      const r = await rbJSON(box.vm, `
        [ENV['http_proxy'].nil?, Net::HTTP.get(URI('http://nhw-test.invalid/x')), Net::HTTP.get(URI('http://127.0.0.1:${port}/json'))]`);
      assert.deepEqual(r, [false, 'proxied', '{"ok":true,"method":"GET"}']);
      assert.deepEqual(got, ['GET http://nhw-test.invalid/x HTTP/1.1']);
    } finally {
      await box.dispose();
      await closeServer(proxy);
    }
  });
});

test('createRubyVM: a gem or mount folder that does not exist is named, and nothing is left in the temporary folder', async () => {
  const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  // createRubyVM makes its folder in os.tmpdir(), which follows TMPDIR
  const saved = process.env.TMPDIR;
  const tmp = mkdtempSync(`${tmpdir()}/gems-test-`);
  process.env.TMPDIR = tmp;
  try {
    await assert.rejects(createRubyVM({ gems: ['./no-such-gem-1.0'] }), { message: `createRubyVM: gems names ${process.cwd()}/no-such-gem-1.0, which is not a folder` });
    await assert.rejects(createRubyVM({ mounts: { '/data': '/no/such/folder' } }), { message: "createRubyVM: mounts['/data'] names /no/such/folder, which is not a folder" });
    // a failure after the folder is made (a bad reserve) removes it
    await assert.rejects(createRubyVM({ reserve: 2 ** 40 }));
    assert.deepEqual(readdirSync(tmp), []);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('createRubyVM: a program that ends without dispose() leaves no temporary folder, its /tmp files included', async () => {
  const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const tmp = mkdtempSync(`${tmpdir()}/vm-exit-test-`);
  const code = `
    const { createRubyVM } = await import(${JSON.stringify(new URL('../../js/ruby/node.mjs', import.meta.url).href)});
    const a = await createRubyVM();
    const b = await createRubyVM();
    console.log(a.vm.eval("File.write('/tmp/kept.txt', 'x' * 10); Dir.children('/tmp').inspect").toString());
    await b.dispose();`;
  try {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 120000, env: { ...process.env, TMPDIR: tmp } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '["kept.txt"]\n');
    assert.deepEqual(readdirSync(tmp), []);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
