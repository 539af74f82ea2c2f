// Net::HTTP over fetch() on a page's main thread (the waiting transport,
// js/ruby/transports/fetch-async.mjs, vm.evalAsync) with bodies that
// stream: read_body's chunks come while the body is still coming (the
// server holds the rest of a body until a request made inside read_body's
// block lets it go), and request bodies from body_stream, with a
// Content-Length and chunked, reach the server whole (Chromium streams a
// fetch() upload only over HTTP/2: the transport sends the body in one).
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorkerServers } from '../support/browser/worker-server.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';
import { haveNativeRuby } from '../support/browser/harness.mjs';
import { readKeptAlive } from '../support/browser/kept-alive.mjs';

const PATTERN_RB = '(0..255).map(&:chr).join.b';
const MiB = 1 << 20;

describe('browser: streamed bodies over fetch() on the main thread (Chromium)', { skip, timeout: 300000 }, () => {
  let servers;
  let browser;
  let page;
  let logs;
  const rbJSON = (code) => page.evaluate((code) => window.rbJSON(code), code);

  before(async () => {
    servers = await startWorkerServers();
    browser = await launchChromium();
    ({ page, logs } = await newLoggedPage(browser));
    await page.goto(`${servers.origin}/blank`);
    await page.evaluate(async () => {
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { createRubyVM } = await import('/js/ruby/browser.mjs');
      const ruby = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      const { vm } = await createRubyVM({ ruby, RubyVM, wasi, print: false });
      window.vm = vm;
      vm.eval("require 'net/http'; require 'json'; require 'stringio'");
      window.rbJSON = async (code) => JSON.parse((await vm.evalAsync(`(begin\n${code}\nend).to_json`)).toString());
    });
  });
  after(async () => {
    await browser?.close();
    await servers?.close();
  });

  test('read_body gets chunks while the body is still coming: a request made inside the block lets the rest go', async () => {
    const n = 4 * MiB;
    const r = await rbJSON(`
      api = '${servers.api}'
      sizes = []
      release = nil
      got = 0
      uri = URI(api + '/held?n=${n}&id=main')
      Net::HTTP.start(uri.host, uri.port) do |http|
        http.request_get(uri.request_uri) do |res|
          res.read_body do |chunk|
            got += chunk.bytesize
            sizes << chunk.bytesize
            release ||= JSON.parse(Net::HTTP.get(URI(api + '/release?id=main'))).merge('had' => got)
          end
        end
      end
      { count: sizes.size, total: sizes.sum, release: release }`);
    assert.equal(r.total, n, logs.join('\n'));
    assert.ok(r.count > 1, `${r.count} chunks`);
    assert.equal(r.release.waiting, true);
    assert.ok(r.release.had <= 65536, JSON.stringify(r.release));
  });

  test("IO#wait_readable(0) on a connection with nothing to read, after Ruby was busy (Net::HTTP's check of a kept-alive connection), is nil", async () => {
    // (the connection unpolled for a while: the bridge lets the page's event
    // loop run once before it answers, which once asked for setImmediate)
    const r = await rbJSON(`
      api = '${servers.api}'
      got = 0
      seen = nil
      uri = URI(api + '/held?n=131072&id=unpolled')
      Net::HTTP.start(uri.host, uri.port) do |http|
        http.request_get(uri.request_uri) do |res|
          res.read_body do |chunk|
            got += chunk.bytesize
            next unless got == 65536
            t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
            nil until Process.clock_gettime(Process::CLOCK_MONOTONIC) - t > 0.01
            seen = http.instance_variable_get(:@socket).io.wait_readable(0).inspect
            Net::HTTP.get(URI(api + '/release?id=unpolled'))
          end
        end
      end
      [got, seen]`);
    assert.deepEqual(r, [131072, 'nil'], logs.join('\n'));
  });

  test('a 4 MiB body sent in 16 pieces comes in chunks as they arrive', async () => {
    const r = await rbJSON(`
      times = []
      total = 0
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      uri = URI('${servers.api}/stream?n=${4 * MiB}&piece=262144&ms=40')
      Net::HTTP.start(uri.host, uri.port) do |http|
        http.request_get(uri.request_uri) do |res|
          res.read_body { |c| total += c.bytesize; times << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t }
        end
      end
      { count: times.size, total: total, span: times.last - times.first }`);
    assert.equal(r.total, 4 * MiB);
    // (what arrived while Ruby was busy comes together)
    assert.ok(r.count >= 4, `${r.count} chunks`);
    assert.ok(r.span >= 0.4, JSON.stringify(r));
  });

  test('what has arrived is handed to Ruby at once, head and pieces together; what has not is not waited for', async () => {
    // (a fetch() of the page's own whose bodies are streams made here: the
    // pieces of the first two are all there when the response is; the
    // third's second piece comes only once Ruby has read the first)
    const got = await page.evaluate(async () => {
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { createRubyVM } = await import('/js/ruby/browser.mjs');
      const ruby = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      const bytes = (s) => new TextEncoder().encode(s);
      let release = null;
      window.releaseRest = () => release && release();
      const bodies = {
        '/chunked': { headers: { 'transfer-encoding': 'chunked' }, start: (c) => ['he', 'l', 'lo'].forEach((p) => c.enqueue(bytes(p))) || c.close() },
        '/length': { headers: { 'content-length': '5' }, start: (c) => ['hel', 'lo'].forEach((p) => c.enqueue(bytes(p))) || c.close() },
        '/later': {
          headers: { 'transfer-encoding': 'chunked' },
          start: (c) => {
            c.enqueue(bytes('first'));
            release = () => {
              c.enqueue(bytes('second'));
              c.close();
            };
          },
        },
      };
      const fakeFetch = async (url) => {
        const b = bodies[new URL(url).pathname];
        return new Response(new ReadableStream({ start: b.start }), { status: 200, headers: { 'content-type': 'text/plain', ...b.headers } });
      };
      const { vm, handle, dispose } = await createRubyVM({ ruby, RubyVM, wasi, print: false, fetch: fakeFetch });
      let wakes = 0;
      const wake = handle.bridge.wake;
      handle.bridge.wake = () => (wakes++, wake());
      const out = {};
      for (const path of ['/chunked', '/length']) {
        wakes = 0;
        out[path] = { body: (await vm.evalAsync(`Net::HTTP.get(URI('http://example.test${path}'))`)).toString(), wakes };
      }
      out.later = JSON.parse((await vm.evalAsync(`
        got = []
        Net::HTTP.start('example.test', 80, read_timeout: 5) do |http|
          http.request_get('/later') { |res| res.read_body { |c| got << c; JS.global.call(:releaseRest) if got.size == 1 } }
        end
        got.to_json`)).toString());
      await dispose();
      return out;
    });
    assert.deepEqual(got, { '/chunked': { body: 'hello', wakes: 1 }, '/length': { body: 'hello', wakes: 1 }, later: ['first', 'second'] }, logs.join('\n'));
  });

  test('a request that waits inside Array#map keeps the Array map fills while Ruby allocates meanwhile', async () => {
    // (the page runs Ruby that allocates 300,000 Strings while the eval waits
    // for /slow inside Array#map: before the collector was held off, a
    // collection then freed the Array)
    const got = await page.evaluate(async ({ slow, text }) => {
      const done = window.vm.evalAsync(`[${JSON.stringify(slow)}, ${JSON.stringify(text)}].map { |u| Net::HTTP.get(URI(u)).class.name }.inspect`);
      await new Promise((ok) => setTimeout(ok, 200));
      const gcs = Number(window.vm.eval("n = GC.count; kept = []; 300_000.times { kept << 'x' * 8 }; GC.count - n").toString());
      return { value: (await done).toString(), gcs };
    }, { slow: `${servers.api}/slow?ms=1500`, text: `${servers.api}/text?s=abc` });
    assert.deepEqual(got, { value: '["String", "String"]', gcs: 0 }, logs.join('\n'));
  });

  test("the page's own JS::Object#await inside Array#map keeps the Array map fills while Ruby allocates meanwhile", async () => {
    // (`urls.map { |u| JS.global.fetch(u).await }`: ruby.wasm's own await
    // let a collection run while the fiber waited)
    const got = await page.evaluate(async ({ slow, text }) => {
      const done = window.vm.evalAsync(`[${JSON.stringify(slow)}, ${JSON.stringify(text)}].map { |u| JS.global.fetch(u).await.text.await.to_s }.then { |a| [a.size, a[0].empty?, a[1]] }.inspect`);
      await new Promise((ok) => setTimeout(ok, 200));
      const gcs = Number(window.vm.eval("n = GC.count; kept = []; 300_000.times { kept << 'x' * 8 }; GC.count - n").toString());
      return { value: (await done).toString(), gcs };
    }, { slow: `${servers.api}/slow?ms=1500`, text: `${servers.api}/text?s=abc` });
    assert.deepEqual(got, { value: '[2, false, "abc"]', gcs: 0 }, logs.join('\n'));
  });

  test('request bodies from body_stream, with a Content-Length and chunked, arrive whole', async () => {
    const from = servers.requests.length;
    const r = await rbJSON(`
      bin = ${PATTERN_RB} * 1024
      uri = URI('${servers.api}/echo')
      Net::HTTP.start(uri.host, uri.port) do |http|
        [true, false].map do |sized|
          req = Net::HTTP::Post.new(uri, 'Content-Type' => 'application/octet-stream')
          req.body_stream = StringIO.new(bin)
          if sized then req.content_length = bin.bytesize else req['Transfer-Encoding'] = 'chunked' end
          res = http.request(req)
          echo = JSON.parse(res.body)
          [res.code, echo['length'], echo['hex'] == bin.unpack1('H*')]
        end
      end`);
    assert.deepEqual(r, [['200', 262144, true], ['200', 262144, true]], logs.join('\n'));
    assert.deepEqual(servers.requests.slice(from).filter((q) => q.method === 'POST').map((q) => `${q.url} ${q.length}`), ['/echo 262144', '/echo 262144']);
  });

  test('POSTs one after another in one Net::HTTP.start are each answered, and sent once', async () => {
    // (a request written before the previous fetch's end had come was lost
    // with that end: an EOFError, which Net::HTTP does not retry for a POST)
    const from = servers.requests.length;
    const r = await rbJSON(`
      uri = URI('${servers.api}/echo?kept')
      Net::HTTP.start(uri.host, uri.port) do |http|
        Array.new(50) do |i|
          JSON.parse(http.post(uri.request_uri, "n=#{i}").body)['hex'] == "n=#{i}".unpack1('H*')
        rescue => e
          e.class.name
        end.tally
      end`);
    assert.deepEqual(r, { true: 50 }, logs.join('\n'));
    assert.equal(servers.requests.slice(from).filter((q) => q.method === 'POST').length, 50);
  });

  test('a started Net::HTTP keeps its connection over responses their heads frame, and reads each as native Ruby does', { skip: !haveNativeRuby() && 'no native ruby' }, async () => {
    // (before, each response ended its connection, and the next request
    // opened another; the browser takes a chunked body's chunks off, and
    // the transport frames it with chunks again)
    const { browser, native } = await readKeptAlive(servers.api, rbJSON);
    assert.deepEqual(native.kept, [true, true, true, true, true]);
    assert.deepEqual(browser, native, logs.join('\n'));
  });
});
