// Synchronous Net::HTTP on a page's main thread with JavaScript Promise
// Integration: createRubyVM({ ..., jspi: true }) in headless Chromium,
// Ruby run by evalJspi (js/ruby/transports/jspi.mjs), each request a
// fetch() whose waits suspend the VM: requests inside Array#map with one
// refused (raised and rescued there, many rounds: what evalAsync cannot
// do), JS::Object#await inside a block, read_body's chunks as they arrive
// (a request made inside the block lets the rest of the body go), a read
// timeout, the page's event loop running while Ruby waits (with a nested
// vm.eval from a timer), and evalJspi calls run one after the other.
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWorkerServers } from '../support/browser/worker-server.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';

describe('browser: synchronous Net::HTTP on the main thread with JSPI (Chromium)', { skip, timeout: 300000 }, () => {
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
      const made = await createRubyVM({ ruby, RubyVM, wasi, jspi: true, print: false });
      window.vm = made.vm;
      window.evalJspi = made.evalJspi;
      made.vm.eval("require 'net/http'; require 'json'");
      window.rbJSON = async (code) => JSON.parse((await made.evalJspi(`(begin\n${code}\nend).to_json`)).toString());
    });
  });
  after(async () => {
    await browser?.close();
    await servers?.close();
  });

  test('[u1, u2, u3].map { |u| Net::HTTP.get(URI(u)) } with u2 refused, 20 rounds, rescued inside and raised out of map', async () => {
    const urls = [`${servers.api}/text?s=one`, servers.refused, `${servers.api}/text?s=three`];
    const r = await rbJSON(`
      urls = ${JSON.stringify(urls)}
      inside = 20.times.map { urls.map { |u| Net::HTTP.get(URI(u)) rescue $!.class.name } }.uniq
      outside = 20.times.map { begin; urls.map { |u| Net::HTTP.get(URI(u)) }; rescue => e; e.class.name; end }.uniq
      { inside: inside, outside: outside, conns: NetHttpWasm.bridge[:conns][:size].to_i, after: [1, 2, 3].sum }`);
    assert.deepEqual(r, { inside: [['one', 'NetHttpWasm::FetchError', 'three']], outside: ['NetHttpWasm::FetchError'], conns: 0, after: 6 }, logs.join('\n'));
  });

  test('JS::Object#await inside a block; a rejection is JS::Error', async () => {
    const r = await rbJSON(`
      values = [1, 2, 3].map { |i| JS.eval("return new Promise((ok) => setTimeout(() => ok(#{i} * 10), 5))").await.to_i }
      err = begin; JS.eval("return Promise.reject(new Error('no'))").await; rescue JS::Error => e; e.message; end
      { values: values, err: err }`);
    assert.deepEqual(r.values, [10, 20, 30]);
    assert.match(r.err, /no/);
  });

  test('read_body gets chunks while the body is still coming; a read timeout is Net::ReadTimeout', async () => {
    const r = await rbJSON(`
      api = '${servers.api}'
      release = nil
      got = 0
      uri = URI(api + '/held?n=1048576&id=jspi')
      Net::HTTP.start(uri.host, uri.port) do |http|
        http.request_get(uri.request_uri) do |res|
          res.read_body do |chunk|
            got += chunk.bytesize
            release ||= JSON.parse(Net::HTTP.get(URI(api + '/release?id=jspi'))).merge('had' => got)
          end
        end
      end
      h = Net::HTTP.new('127.0.0.1', ${new URL(servers.api).port})
      h.read_timeout = 0.3
      h.max_retries = 0
      timeout = begin; h.get('/slow?ms=3000'); rescue => e; e.class.name; end
      { got: got, release: release, timeout: timeout }`);
    assert.equal(r.got, 1048576);
    assert.equal(r.release.waiting, true);
    assert.ok(r.release.had <= 65536, JSON.stringify(r.release));
    assert.equal(r.timeout, 'Net::ReadTimeout');
  });

  test("the page's event loop runs while Ruby waits; a vm.eval from a timer meanwhile is a nested call; evalJspi calls run in turn", async () => {
    const r = await page.evaluate(async (api) => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      let nested = null;
      setTimeout(() => {
        try {
          nested = window.vm.eval('[40, 2].sum').toString();
        } catch (e) {
          nested = `error: ${e.message}`;
        }
      }, 100);
      const order = [];
      const a = window.evalJspi(`Net::HTTP.get(URI('${api}/slow?ms=400')); 'a'`).then((v) => order.push(v.toString()));
      const b = window.evalJspi(`'b'`).then((v) => order.push(v.toString()));
      await Promise.all([a, b]);
      clearInterval(timer);
      return { ticks, nested, order };
    }, servers.api);
    assert.ok(r.ticks >= 10, `${r.ticks} ticks while Ruby waited 400 ms`);
    assert.equal(r.nested, '42');
    assert.deepEqual(r.order, ['a', 'b']);
  });

  test('ruby.wasm 3.4 too: requests inside Array#map, one refused', async () => {
    const r = await page.evaluate(async ({ api, refused }) => {
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { createRubyVM } = await import('/js/ruby/browser.mjs');
      const ruby = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/3.4-wasm-wasi/dist/ruby+stdlib.wasm'));
      const { vm, evalJspi } = await createRubyVM({ ruby, RubyVM, wasi, jspi: true, print: false });
      vm.eval("require 'net/http'; require 'json'");
      return JSON.parse((await evalJspi(`[RUBY_VERSION[0, 3], 5.times.map { [URI('${api}/text?s=a'), URI('${refused}')].map { |u| Net::HTTP.get(u) rescue $!.class.name } }.uniq].to_json`)).toString());
    }, { api: servers.api, refused: servers.refused });
    assert.deepEqual(r, ['3.4', [['a', 'NetHttpWasm::FetchError']]]);
  });

  test('{ jspi: true, blocking: true } is refused', async () => {
    const r = await page.evaluate(async () => {
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { createRubyVM } = await import('/js/ruby/browser.mjs');
      const ruby = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      try {
        await createRubyVM({ ruby, RubyVM, wasi, jspi: true, blocking: true });
        return 'no error';
      } catch (e) {
        return `${e.name}: ${e.message}`;
      }
    });
    assert.equal(r, 'TypeError: createRubyVM: { jspi: true } waits over fetch() by suspending the VM: it takes no { blocking: true }');
  });
});
