// Synchronous Net::HTTP in a browser Worker: createRubyVM({ ..., blocking:
// true }) from the package's browser entry, in a dedicated Worker of a page
// in headless Chromium (fixtures/browser/sync-worker.mjs, driven by
// worker-driver.mjs), each request a synchronous XMLHttpRequest to a local
// cross-origin server (fixtures/browser/worker-server.mjs, with CORS). Ruby
// runs with vm.eval, never vm.evalAsync: GET, POST with a binary body, a
// gzipped body and a HEAD, NetHttpWasm::Scheduler's fibers, a read
// timeout, a refused connection, a redirect, a 1 MiB body, requests inside
// Array#map with one refused (many rounds, ruby.wasm 4.0 and 3.4),
// a Ruby block called by a JS message listener that makes a request, the
// fetch transport's fault scenarios (tests/browser/faults.test.mjs) against
// the chaos server, and the VM working afterwards. On a page's main thread
// { blocking: true } is a clear error.
//
// And Ruby in a page in one tag: ruby.wasm's own <script type="text/ruby">
// loader (browser.script.iife.js) with Net::HTTP installed as the loader
// makes its VM (fixtures/browser/script-tag.html, the packages' jsDelivr
// URLs served from this checkout and node_modules).
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startWorkerServers } from '../support/browser/worker-server.mjs';
import { startChaos } from '../support/chaos/index.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';
import { runFault } from '../support/browser/faults.mjs';
import { haveNativeRuby } from '../support/browser/harness.mjs';
import { readKeptAlive } from '../support/browser/kept-alive.mjs';

const DRIVER = '/tests/support/browser/worker-driver.mjs';

// The same 256 bytes, n / 256 times (what /bytes?n= answers).
const PATTERN_RB = '(0..255).map(&:chr).join.b';

describe('browser: synchronous Net::HTTP in a Worker (Chromium)', { skip, timeout: 600000 }, () => {
  let servers;
  let chaos;
  let browser;
  let page;
  let logs;
  // vm.eval(code).to_s in the Worker's VM of `ruby` (a Worker per version, started on first use)
  const started = new Set();
  const rb = async (code, ruby = '4.0') => {
    if (!started.has(ruby)) {
      await page.evaluate(
        async ({ driver, ruby }) => {
          const { startSyncWorker } = await import(driver);
          window.workers = window.workers || {};
          window.workers[ruby] = await startSyncWorker(ruby);
        },
        { driver: DRIVER, ruby },
      );
      started.add(ruby);
    }
    return page.evaluate(({ code, ruby }) => window.workers[ruby].rb(code), { code, ruby });
  };
  const rbJSON = async (code, ruby) => JSON.parse(await rb(`(begin\n${code}\nend).to_json`, ruby));
  const seen = () => servers.requests.map((q) => `${q.method} ${q.url}`);

  before(async () => {
    servers = await startWorkerServers();
    chaos = await startChaos({ tls: false, cors: true });
    browser = await launchChromium();
    ({ page, logs } = await newLoggedPage(browser));
    await page.goto(`${servers.origin}/blank`);
  });
  after(async () => {
    await browser?.close();
    chaos?.close();
    await servers?.close();
  });

  test('GET, POST with a binary body, a 1 MiB body, from vm.eval', async () => {
    const from = servers.requests.length;
    const r = await rbJSON(`
      get = Net::HTTP.get_response(URI('${servers.api}/echo?q=1'))
      bin = ${PATTERN_RB} * 4
      post = Net::HTTP.post(URI('${servers.api}/echo'), bin, 'Content-Type' => 'application/octet-stream')
      big = Net::HTTP.get(URI('${servers.api}/bytes?n=1048576'))
      {
        get: [get.code, get.class.name, get['content-type'], JSON.parse(get.body).values_at('method', 'url', 'length')],
        post: [post.code, JSON.parse(post.body).values_at('method', 'type', 'length'), JSON.parse(post.body)['hex'] == bin.unpack1('H*')],
        big: [big.bytesize, big.encoding.name, big == ${PATTERN_RB} * 4096],
        dropped: NetHttpWasm.bridge[:droppedHeaders].to_a.map(&:to_s),
        conns: NetHttpWasm.bridge[:conns][:size].to_i,
      }`);
    assert.deepEqual(r, {
      get: ['200', 'Net::HTTPOK', 'application/json', ['GET', '/echo?q=1', 0]],
      post: ['200', ['POST', 'application/octet-stream', 1024], true],
      big: [1048576, 'ASCII-8BIT', true],
      // the fields a page may not set, as over fetch(), and User-Agent,
      // which Chromium's XMLHttpRequest refuses
      dropped: ['Accept-Encoding', 'User-Agent', 'Host'],
      conns: 0,
    }, logs.join('\n'));
    // (the POST's binary type asks for a CORS preflight)
    assert.deepEqual(seen().slice(from), ['GET /echo?q=1', 'OPTIONS /echo', 'POST /echo', 'GET /bytes?n=1048576']);
  });

  test('a gzipped body comes decoded (by the browser), its fields as over fetch(); a HEAD has no body', async () => {
    const r = await rbJSON(`
      h = Net::HTTP.new('127.0.0.1', ${new URL(servers.api).port})
      res = h.get('/gzip?s=' + 'squeezed-' * 100)
      head = h.head('/text?s=abc')
      { body: [res.body.bytesize, res.body[0, 9]], enc: res['content-encoding'], len: res['content-length'],
        head: [head.code, head.body, head['content-type']] }`);
    assert.deepEqual(r, { body: [900, 'squeezed-'], enc: null, len: null, head: ['200', null, 'text/plain; charset=utf-8'] });
  });

  test('a started Net::HTTP keeps its connection over responses their heads frame, and reads each as native Ruby does', { skip: !haveNativeRuby() && 'no native ruby' }, async () => {
    // (before, each response ended its connection; the chunked bodies are
    // framed with chunks again, as over fetch())
    const { browser, native } = await readKeptAlive(servers.api, rbJSON);
    assert.deepEqual(native.kept, [true, true, true, true, true]);
    assert.deepEqual(browser, native, logs.join('\n'));
  });

  test('NetHttpWasm::Scheduler: its fibers\' requests, timers and a Timeout, one request at a time', async () => {
    const r = await rbJSON(`
      bodies = []
      NetHttpWasm::Scheduler.run do
        3.times { |i| Fiber.schedule { bodies << Net::HTTP.get(URI("${servers.api}/text?s=#{i}")) } }
        Fiber.schedule do
          Timeout.timeout(0.05) { sleep 1 }
        rescue Timeout::Error => e
          bodies << e.class.name
        end
        Fiber.schedule { sleep 0.01; bodies << 'slept' }
      end
      bodies.sort`);
    assert.deepEqual(r, ['0', '1', '2', 'Timeout::Error', 'slept']);
  });

  test('a read timeout is Net::ReadTimeout after read_timeout (a GET tried again once), then the object works again', async () => {
    const from = servers.requests.length;
    const r = await rbJSON(`
      h = Net::HTTP.new('127.0.0.1', ${new URL(servers.api).port})
      h.read_timeout = 0.5
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      err = begin; h.get('/slow?ms=4000'); nil; rescue => e; [e.class.name, e.message, e.is_a?(Timeout::Error)]; end
      took = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t
      { err: err, took: took, again: h.get('/slow?ms=10').code }`);
    assert.deepEqual(r.err, ['Net::ReadTimeout', 'Net::ReadTimeout with #<TCPSocket:(closed)>', true]);
    assert.ok(r.took >= 0.9 && r.took < 3.5, `two tries of 0.5 s each took ${r.took} s`);
    assert.equal(r.again, '200');
    assert.deepEqual(seen().slice(from), ['GET /slow?ms=4000', 'GET /slow?ms=4000', 'GET /slow?ms=10']);
  });

  test('a refused connection and a redirect are NetHttpWasm::FetchError (a SocketError)', async () => {
    const from = servers.requests.length;
    const r = await rbJSON(`
      [URI('${servers.refused}'), URI('${servers.api}/redirect')].map do |u|
        Net::HTTP.get(u)
      rescue => e
        [e.class.name, e.message, e.is_a?(SocketError)]
      end`);
    assert.equal(r[0][0], 'NetHttpWasm::FetchError');
    assert.match(r[0][1], /^fetch failed: .*Failed to load 'http:\/\/127\.0\.0\.1:\d+\/'/);
    assert.equal(r[0][2], true);
    assert.deepEqual(r[1], ['NetHttpWasm::FetchError', 'fetch failed: the server answered with a redirect, which a page cannot read (Net::HTTP does not follow redirects)', true]);
    // the browser followed the redirect itself
    assert.deepEqual(seen().slice(from), ['GET /redirect', 'GET /echo?redirected']);
  });

  for (const ruby of ['4.0', '3.4']) {
    test(`ruby.wasm ${ruby}: [u1, u2, u3].map { |u| Net::HTTP.get(URI(u)) } with u2 refused, 100 rounds, then the VM works`, async () => {
      const urls = [`${servers.api}/text?s=one`, servers.refused, `${servers.api}/text?s=three`];
      const r = await rbJSON(`
        urls = ${JSON.stringify(urls)}
        # rescued inside the block, and raised out of map
        inside = 100.times.map { urls.map { |u| Net::HTTP.get(URI(u)) rescue $!.class.name } }.uniq
        outside = 100.times.map { begin; urls.map { |u| Net::HTTP.get(URI(u)) }; rescue => e; e.class.name; end }.uniq
        { inside: inside, outside: outside, conns: NetHttpWasm.bridge[:conns][:size].to_i }`, ruby);
      assert.deepEqual(r, { inside: [['one', 'NetHttpWasm::FetchError', 'three']], outside: ['NetHttpWasm::FetchError'], conns: 0 }, logs.join('\n'));
      const after = await rbJSON(`[RUBY_VERSION[0, 3], [1, 2, 3].sum, Net::HTTP.get(URI('${servers.api}/text?s=after'))]`, ruby);
      assert.deepEqual(after, [ruby, 6, 'after']);
    });
  }

  test('a Ruby block called by a JS message listener makes a request, synchronously', async () => {
    // the block is a JS function the Worker calls for each message: it
    // cannot await (ruby.wasm's Proc-to-function), a blocking request can
    const installed = await rb(`
      JS.global.addEventListener('message') do |event|
        url = event[:data][:fetchFor]
        next if url.typeof != 'string'
        reply = begin
          res = Net::HTTP.get_response(URI(url.to_s))
          { code: res.code, body: res.body }
        rescue => e
          { error: e.class.name }
        end
        JS.global.postMessage(reply.to_json)
      end
      :listening`);
    assert.equal(installed, 'listening');
    const replies = await page.evaluate(async (urls) => {
      const w = window.workers['4.0'];
      const out = [];
      for (const u of urls) {
        w.post({ fetchFor: u });
        out.push(JSON.parse(await w.nextString()));
      }
      return out;
    }, [`${servers.api}/text?s=from-listener`, servers.refused]);
    assert.deepEqual(replies, [{ code: '200', body: 'from-listener' }, { error: 'NetHttpWasm::FetchError' }]);
    assert.equal(await rb(`NetHttpWasm.bridge[:conns][:size].to_i`), '0');
  });

  test("the fetch transport's fault scenarios (chaos server): the errors, the retries, the same object working after", async () => {
    // as tests/browser/faults.test.mjs, over synchronous XMLHttpRequest
    const run = (method, path) => runFault(chaos, rbJSON, method, path);
    // no answer, garbage: a SocketError, not retried (Chromium itself sends a
    // POST again after a reset on a reused connection), as over fetch()
    for (const [m, path, sent] of [['GET', '/reset', 1], ['POST', '/reset', 2], ['GET', '/garbage', 1], ['POST', '/garbage', 1]]) {
      const [r, what] = await run(m, path);
      assert.equal(r.error[0], 'NetHttpWasm::FetchError', what);
      assert.match(r.error[1], /^fetch failed: Failed to execute 'send' on 'XMLHttpRequest': /, what);
      assert.equal(r.socketError, true, what);
      assert.equal(r.requests, sent, what);
    }
    // a body that fails: over fetch() the body's stream fails after the head
    // (Errno::ECONNRESET, a GET retried); a synchronous XMLHttpRequest
    // fails whole: NetHttpWasm::FetchError, not retried
    for (const path of ['/reset-body', '/fin-body', '/reset-chunked']) {
      for (const m of ['GET', 'POST']) {
        const [r, what] = await run(m, path);
        assert.equal(r.error[0], 'NetHttpWasm::FetchError', what);
        assert.equal(r.requests, 1, what);
      }
    }
    // a stall after the head and before it: Net::ReadTimeout, a GET retried once
    for (const path of ['/stall-body', '/silent']) {
      for (const m of ['GET', 'POST']) {
        const [r, what] = await run(m, path);
        assert.deepEqual(r.error, ['Net::ReadTimeout', 'Net::ReadTimeout with #<TCPSocket:(closed)>'], what);
        assert.equal(r.timeoutError, true, what);
        const tries = m === 'GET' ? 2 : 1;
        assert.equal(r.requests, tries, what);
        assert.ok(r.seconds >= tries * 0.5 * 0.9 && r.seconds < tries * 0.5 + 3, what);
      }
    }
  });

  test('on a page (not a Worker) { blocking: true } is a clear error', async () => {
    const message = await page.evaluate(async () => {
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { createRubyVM } = await import('/js/ruby/browser.mjs');
      const ruby = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      try {
        await createRubyVM({ ruby, RubyVM, wasi, blocking: true });
        return 'no error';
      } catch (e) {
        return `${e.name}: ${e.message}`;
      }
    });
    assert.equal(message, 'TypeError: installNetHttp: { blocking: true } in a browser needs a dedicated Worker (synchronous XMLHttpRequest); on a page use the default (fetch(), awaited in vm.evalAsync)');
  });
});

describe('browser: <script type="text/ruby"> with ruby.wasm\'s loader and Net::HTTP (Chromium)', { skip, timeout: 300000 }, () => {
  test('the page of the docs: a Ruby script tag makes a request over fetch()', async () => {
    const servers = await startWorkerServers();
    const browser = await launchChromium();
    try {
      const { page, logs } = await newLoggedPage(browser);
      // jsDelivr's URLs of the packages, answered from here
      const root = fileURLToPath(new URL('../../', import.meta.url));
      const CDN = /^https:\/\/cdn\.jsdelivr\.net\/npm\/(net-http-wasm@[^/]+|@ruby\/4\.0-wasm-wasi@2\.10\.1)\/(.+)$/;
      const served = [];
      await page.route('https://cdn.jsdelivr.net/**', (route) => {
        const m = CDN.exec(route.request().url());
        if (!m) return route.fulfill({ status: 404, body: 'not here' });
        served.push(`${m[1]}/${m[2]}`);
        const path = m[1].startsWith('net-http-wasm') ? `${root}${m[2]}` : `${root}node_modules/@ruby/4.0-wasm-wasi/${m[2]}`;
        const type = path.endsWith('.wasm') ? 'application/wasm' : 'text/javascript';
        return route.fulfill({ status: 200, headers: { 'content-type': type, 'access-control-allow-origin': '*' }, body: readFileSync(path) });
      });
      await page.goto(`${servers.origin}/tests/support/browser/script-tag.html?api=${servers.api}`);
      await page.waitForFunction(() => document.getElementById('out').textContent.trim(), null, { timeout: 240000 });
      assert.equal(await page.textContent('#out'), '200 Net::HTTPOK from a script tag', logs.join('\n'));
      assert.deepEqual(servers.requests.map((q) => `${q.method} ${q.url}`), ['GET /text?s=from+a+script+tag']);
      const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
      // the page names this package's version, and the loader took ruby.wasm from there too
      assert.ok(served.includes(`net-http-wasm@${version}/js/ruby/browser.mjs`), served.join('\n'));
      assert.ok(served.includes('@ruby/4.0-wasm-wasi@2.10.1/dist/ruby+stdlib.wasm'), served.join('\n'));
    } finally {
      await browser.close();
      await servers.close();
    }
  });
});
