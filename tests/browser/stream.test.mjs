// Synchronous Net::HTTP in a Worker of a cross-origin isolated page:
// createRubyVM({ ..., blocking: true }) in a dedicated Worker
// (support/browser/sync-worker.mjs) of a page served with COOP and COEP
// (support/browser/worker-server.mjs, { isolated: true }), where
// SharedArrayBuffer is there: each request a fetch() in a helper Worker,
// its response streamed through shared memory (js/ruby/transports/
// fetch-sync.mjs). Ruby runs with vm.eval: read_body's chunks come while
// the body is still coming (the server holds the rest of a body until a
// request made from inside read_body's block lets it go, which a
// synchronous XMLHttpRequest could never serve), a 4 MiB body read in
// chunks leaves the VM's memory short of its size, the fibers of
// NetHttpWasm::Scheduler wait together, and the fault scenarios of the
// chaos server give the errors of the fetch() transport
// (tests/browser/faults.test.mjs). The same page not isolated falls back to
// synchronous XMLHttpRequest, and { stream: true } there is a clear error.
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorkerServers } from '../support/browser/worker-server.mjs';
import { startChaos } from '../support/chaos/index.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';
import { runFault } from '../support/browser/faults.mjs';
import { haveNativeRuby } from '../support/browser/harness.mjs';
import { readKeptAlive } from '../support/browser/kept-alive.mjs';

const DRIVER = '/tests/support/browser/worker-driver.mjs';
const PATTERN_RB = '(0..255).map(&:chr).join.b';
const MiB = 1 << 20;

// GET url in vm.eval, its body read with read_body's block, each chunk
// dropped once counted: { count, total, first, last (seconds after the
// request), queued (the most bytes the bridge held for Ruby, seen from the
// block) }.
const readInChunks = (rbJSON, url) => rbJSON(`
  queued = JS.eval('return () => { let n = 0; for (const c of self.netHttp.bridge.conns.values()) n += c.recordBytes + c.rawBytes; return n; }')
  sizes = []
  times = []
  peak = 0
  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  uri = URI('${url}')
  Net::HTTP.start(uri.host, uri.port) do |http|
    http.request_get(uri.request_uri) do |res|
      res.read_body do |chunk|
        sizes << chunk.bytesize
        times << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t
        peak = [peak, queued.call(:call).to_i].max
        chunk.clear
      end
    end
  end
  { count: sizes.size, total: sizes.sum, first: times.first, last: times.last, queued: peak }`);

describe('browser: Net::HTTP streamed in a Worker of a cross-origin isolated page (Chromium)', { skip, timeout: 600000 }, () => {
  let servers;
  let chaos;
  let browser;
  let page;
  let logs;
  const rb = (code) => page.evaluate((code) => window.w.rb(code), code);
  const js = (code) => page.evaluate((code) => window.w.js(code), code);
  const rbJSON = async (code) => JSON.parse(await rb(`(begin\n${code}\nend).to_json`));
  const seen = () => servers.requests.map((q) => `${q.method} ${q.url}`);
  const memory = () => js('return self.rubyVM.instance.exports.memory.buffer.byteLength');

  before(async () => {
    servers = await startWorkerServers({ isolated: true });
    chaos = await startChaos({ tls: false, cors: true });
    browser = await launchChromium();
    ({ page, logs } = await newLoggedPage(browser));
    await page.goto(`${servers.origin}/blank`);
    await page.evaluate(async (driver) => {
      const { startSyncWorker } = await import(driver);
      window.w = await startSyncWorker('4.0');
    }, DRIVER);
  });
  after(async () => {
    await browser?.close();
    chaos?.close();
    await servers?.close();
  });

  test('a started Net::HTTP keeps its connection over responses their heads frame, and reads each as native Ruby does', { skip: !haveNativeRuby() && 'no native ruby' }, async () => {
    // (as over synchronous XMLHttpRequest and over fetch() in a page: the
    // helper frames a chunked body with chunks again)
    const { browser, native } = await readKeptAlive(servers.api, rbJSON);
    assert.deepEqual(native.kept, [true, true, true, true, true]);
    assert.deepEqual(browser, native, logs.join('\n'));
  });

  test('the page is isolated and the VM streams (fetch() in a helper Worker)', async () => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.deepEqual(await js('return [crossOriginIsolated, self.netHttp.bridge.transport.streaming]'), [true, true]);
    const r = await rbJSON(`
      get = Net::HTTP.get_response(URI('${servers.api}/echo?q=1'))
      bin = ${PATTERN_RB} * 4
      post = Net::HTTP.post(URI('${servers.api}/echo'), bin, 'Content-Type' => 'application/octet-stream')
      dropped = NetHttpWasm.bridge[:droppedHeaders].to_a.map(&:to_s)
      h = Net::HTTP.new('127.0.0.1', ${new URL(servers.api).port})
      # a body_stream framed chunked: sent as its joined bytes
      require 'stringio'
      req = Net::HTTP::Post.new('/echo', 'Content-Type' => 'application/octet-stream', 'Transfer-Encoding' => 'chunked')
      req.body_stream = StringIO.new(bin * 64)
      chunked = JSON.parse(h.request(req).body).then { |e| [e['length'], e['hex'] == (bin * 64).unpack1('H*')] }
      gz = h.get('/gzip?s=' + 'squeezed-' * 100)
      head = h.head('/text?s=abc')
      {
        get: [get.code, get.class.name, get['content-type'], JSON.parse(get.body).values_at('method', 'url', 'length')],
        post: [post.code, JSON.parse(post.body).values_at('method', 'type', 'length'), JSON.parse(post.body)['hex'] == bin.unpack1('H*')],
        gz: [gz.body.bytesize, gz['content-encoding'], gz['content-length']],
        head: [head.code, head.body],
        chunked: chunked,
        dropped: dropped,
        conns: NetHttpWasm.bridge[:conns][:size].to_i,
      }`);
    assert.deepEqual(r, {
      get: ['200', 'Net::HTTPOK', 'application/json', ['GET', '/echo?q=1', 0]],
      post: ['200', ['POST', 'application/octet-stream', 1024], true],
      gz: [900, null, null],
      head: ['200', null],
      chunked: [65536, true],
      // the fields a page may not set, as over fetch()
      dropped: ['Accept-Encoding', 'Host', 'Content-Length'],
      conns: 0,
    }, logs.join('\n'));
  });

  test('read_body gets chunks while the body is still coming: a request made inside the block lets the rest go', async () => {
    const n = 4 * MiB;
    const from = servers.requests.length;
    const r = await rbJSON(`
      api = '${servers.api}'
      sizes = []
      release = nil
      got = 0
      ok = true
      pat = ${PATTERN_RB} * 4097
      uri = URI(api + '/held?n=${n}&id=a')
      Net::HTTP.start(uri.host, uri.port) do |http|
        http.request_get(uri.request_uri) do |res|
          res.read_body do |chunk|
            # (the bytes repeat every 256: each chunk, of 1 MiB at most, is where it starts in them)
            ok &&= chunk.bytesize <= 1048576 && chunk == pat[got % 256, chunk.bytesize]
            got += chunk.bytesize
            sizes << chunk.bytesize
            # the server sends the rest only when asked, from here
            release ||= JSON.parse(Net::HTTP.get(URI(api + '/release?id=a'))).merge('had' => got)
          end
        end
      end
      { count: sizes.size, total: sizes.sum, release: release, ok: ok }`);
    if (process.env.NETHTTP_STREAM_LOG) console.log('held', JSON.stringify(r));
    assert.equal(r.total, n, logs.join('\n'));
    assert.ok(r.count > 1, `${r.count} chunks`);
    assert.equal(r.ok, true);
    // when the first chunk came, the server had sent 64 KiB and held the rest
    assert.deepEqual(r.release, { sent: 65536, waiting: true, had: r.release.had });
    assert.ok(r.release.had <= 65536, JSON.stringify(r.release));
    assert.deepEqual(seen().slice(from), [`GET /held?n=${n}&id=a`, 'GET /release?id=a']);
  });

  test('a 4 MiB body read in chunks as they arrive, each dropped: neither the VM nor the Worker holds it whole', async () => {
    const n = 4 * MiB;
    // (warm: the buffers Net::HTTP and the bridge keep)
    await readInChunks(rbJSON, `${servers.api}/stream?n=${MiB}&piece=65536&ms=1`);
    const before = await memory();
    // 16 pieces of 256 KiB, 40 ms apart
    const r = await readInChunks(rbJSON, `${servers.api}/stream?n=${n}&piece=262144&ms=40`);
    const grown = (await memory()) - before;
    if (process.env.NETHTTP_STREAM_LOG) console.log('4 MiB in chunks', JSON.stringify({ ...r, grown }));
    assert.equal(r.total, n);
    assert.ok(r.count >= 16, `${r.count} chunks`);
    // the first chunk came long before the last was sent (15 × 40 ms later)
    assert.ok(r.last - r.first >= 0.4, JSON.stringify(r));
    // what waited for Ruby in the Worker's JavaScript (taken from the ring
    // while less than 256 KiB waits, 64 KiB a frame; the ring holds 1 MiB
    // more), and the VM's memory
    assert.ok(r.queued < 384 * 1024, `${r.queued} bytes queued for Ruby at most`);
    assert.ok(grown < n / 2, `the VM's memory grew by ${grown} bytes for a ${n}-byte body`);
  });

  test('installNetHttp alone, then a request at once: a synchronous XMLHttpRequest until the helper Worker runs, streamed after', async () => {
    const r = await js(`
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { installNetHttp } = await import('/js/ruby/browser.mjs');
      const module = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      const none = () => new wasi.OpenFile(new wasi.File([]));
      const { vm } = await RubyVM.instantiateModule({ module, wasip1: new wasi.WASI(['ruby'], [], [none(), none(), none()]) });
      const handle = installNetHttp(vm, { blocking: true });
      // (the helper Worker cannot start before this thread's event loop turns)
      const first = vm.eval("require 'net/http'; require 'json'; Net::HTTP.get(URI('${servers.api}/text?s=at-once'))").toString();
      await handle.bridge.transport.ready;
      const held = vm.eval(\`
        api = '${servers.api}'
        release = nil
        uri = URI(api + '/held?n=262144&id=later')
        Net::HTTP.start(uri.host, uri.port, read_timeout: 5) do |http|
          http.request_get(uri.request_uri) do |res|
            res.read_body { release ||= JSON.parse(Net::HTTP.get(URI(api + '/release?id=later')))['waiting'] }
          end
        end
        release\`).toString();
      await handle.uninstall();
      return [first, held];`);
    assert.deepEqual(r, ['at-once', 'true'], logs.join('\n'));
  });

  test('NetHttpWasm::Scheduler: its fibers\' slow requests wait together', async () => {
    const r = await rbJSON(`
      bodies = []
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      NetHttpWasm::Scheduler.run do
        4.times { |i| Fiber.schedule { bodies << JSON.parse(Net::HTTP.get(URI("${servers.api}/slow?ms=400&i=#{i}")))['url'] } }
      end
      { bodies: bodies.sort, took: Process.clock_gettime(Process::CLOCK_MONOTONIC) - t }`);
    assert.deepEqual(r.bodies, [0, 1, 2, 3].map((i) => `/slow?ms=400&i=${i}`));
    // (one after the other they would take 1.6 s)
    assert.ok(r.took < 1.4, `took ${r.took} s`);
  });

  test('a refused connection and a redirect are NetHttpWasm::FetchError; read_timeout is per wait', async () => {
    const r = await rbJSON(`
      errs = [URI('${servers.refused}'), URI('${servers.api}/redirect')].map do |u|
        Net::HTTP.get(u)
      rescue => e
        [e.class.name, e.message, e.is_a?(SocketError)]
      end
      h = Net::HTTP.new('127.0.0.1', ${new URL(servers.api).port})
      h.read_timeout = 0.5
      # 8 pieces 200 ms apart: 1.4 s in all, no wait longer than the timeout
      body = h.get('/stream?n=8192&piece=1024&ms=200').body
      { errs: errs, streamed: body.bytesize }`);
    assert.equal(r.errs[0][0], 'NetHttpWasm::FetchError');
    assert.match(r.errs[0][1], /^fetch failed: Failed to fetch /);
    assert.deepEqual(r.errs[1], ['NetHttpWasm::FetchError', 'fetch failed: the server answered with a redirect, which a page cannot read (Net::HTTP does not follow redirects)', true]);
    assert.equal(r.streamed, 8192);
  });

  test("the chaos server's faults: the fetch() transport's errors, the same object working after", async () => {
    const run = (method, path) => runFault(chaos, rbJSON, method, path);
    for (const [m, path, sent] of [['GET', '/reset', 1], ['POST', '/reset', 2], ['GET', '/garbage', 1], ['POST', '/garbage', 1]]) {
      const [r, what] = await run(m, path);
      assert.equal(r.error[0], 'NetHttpWasm::FetchError', what);
      assert.match(r.error[1], /^fetch failed: Failed to fetch /, what);
      assert.equal(r.socketError, true, what);
      assert.equal(r.requests, sent, what);
    }
    // the body's stream fails after the head: a reset (a GET retried once)
    for (const path of ['/reset-body', '/fin-body', '/reset-chunked']) {
      for (const m of ['GET', 'POST']) {
        const [r, what] = await run(m, path);
        assert.deepEqual(r.error, ['Errno::ECONNRESET', 'Connection reset by peer'], what);
        assert.equal(r.requests, m === 'GET' ? 2 : 1, what);
      }
    }
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
});

describe('browser: a Worker of a page that is not isolated (Chromium)', { skip, timeout: 300000 }, () => {
  test('{ blocking: true } falls back to synchronous XMLHttpRequest (a body comes whole); { stream: true } is a clear error', async () => {
    const servers = await startWorkerServers();
    const browser = await launchChromium();
    try {
      const { page, logs } = await newLoggedPage(browser);
      await page.goto(`${servers.origin}/blank`);
      const read = await readInChunks((code) => code, `${servers.api}/stream?n=${4 * MiB}&piece=262144&ms=40`);
      const r = await page.evaluate(async ({ driver, read }) => {
        const { startSyncWorker } = await import(driver);
        const w = await startSyncWorker('4.0');
        const out = {
          isolated: await w.js('return crossOriginIsolated'),
          chunks: JSON.parse(await w.rb(`(begin\n${read}\nend).to_json`)),
          streaming: await w.js('return !!self.netHttp.bridge.transport.streaming'),
          refused: await w.js(`
            const { installNetHttp } = await import('/js/ruby/browser.mjs');
            try { installNetHttp(self.rubyVM, { blocking: true, stream: true }); return 'no error'; } catch (e) { return e.name + ': ' + e.message; }`),
        };
        w.terminate();
        return out;
      }, { driver: DRIVER, read });
      // the whole body, in the Worker, before Ruby's first chunk
      assert.equal(r.chunks.total, 4 * MiB);
      assert.ok(r.chunks.queued >= 4 * MiB - 65536, JSON.stringify(r.chunks));
      delete r.chunks;
      assert.deepEqual(r, {
        isolated: false,
        streaming: false,
        refused: 'TypeError: installNetHttp: { stream: true } needs a dedicated Worker of a cross-origin isolated page (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp): SharedArrayBuffer, Atomics.wait',
      }, logs.join('\n'));
    } finally {
      await browser.close();
      await servers.close();
    }
  });
});
