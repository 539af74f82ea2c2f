// createRubyVM in a browser (the package's browser entry, js/ruby/browser.mjs)
// in headless Chromium, for ruby.wasm 4.0 and 3.4: the page passes the
// ruby.wasm module, @ruby/wasm-wasi's RubyVM and @bjorn3/browser_wasi_shim
// (loaded from local node_modules by the example's page server); the VM has
// a gem's files on $LOAD_PATH, a writable /tmp (Tempfile), the environment,
// rubygems and Ruby's output, and makes a real Net::HTTP GET over fetch() to
// a local cross-origin server (with CORS).
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startExampleServers } from '../../examples/browser/serve.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';

describe('browser: createRubyVM', { skip, timeout: 240000 }, () => {
  let servers;
  let browser;
  before(async () => {
    servers = await startExampleServers();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await servers?.close();
  });

  for (const version of ['4.0', '3.4']) {
    test(`ruby.wasm ${version}: gems, /tmp, env, rubygems, output, then Net::HTTP.get_response over fetch()`, async () => {
      const { page, logs } = await newLoggedPage(browser);
      await page.goto(`${servers.origin}/blank`);
      const seen = servers.requests.length;
      const out = await page.evaluate(
        async ({ version, api }) => {
          const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
          const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
          const { createRubyVM } = await import('/js/ruby/browser.mjs');
          // (4.0 as README shows it: the module's fetch(), which createRubyVM
          // reads, patches and compiles; 3.4 a module the page compiled)
          const url = `/node_modules/@ruby/${version}-wasm-wasi/dist/ruby+stdlib.wasm`;
          const ruby = version === '4.0' ? fetch(url) : await WebAssembly.compileStreaming(fetch(url));
          const lines = [];
          const { vm, handle, dispose } = await createRubyVM({
            ruby,
            RubyVM,
            wasi,
            env: { GREETING: 'hello from env' },
            gems: { greeter: { 'lib/greeter.rb': 'module Greeter; def self.greet = ENV["GREETING"]; end', 'lib/greeter/version.rb': 'module Greeter; VERSION = "1.2.3"; end' } },
            print: (text, fd) => lines.push([fd, text]),
          });
          const r = await vm.evalAsync(`
            require 'json'
            require 'greeter'
            require 'greeter/version'
            require 'tempfile'
            tmp = Tempfile.create('nhw') { |f| f.write('in /tmp'); f.flush; [File.dirname(f.path), File.read(f.path)] }
            res = Net::HTTP.get_response(URI('${api}/hello?from=createRubyVM'))
            puts 'to stdout'
            warn 'to stderr'
            {
              greet: Greeter.greet, gem: Greeter::VERSION, tmp: tmp,
              rubygems: [defined?(Gem::Version).to_s, Gem::Version.new('1.10') > Gem::Version.new('1.9')],
              ruby: RUBY_VERSION, code: res.code, cls: res.class.name, served: res['x-served'],
              url: JSON.parse(res.body)['url'], method: JSON.parse(res.body)['method'],
            }.to_json`);
          const conns = handle.bridge.conns.size;
          await dispose();
          return { r: JSON.parse(r.toString()), lines, conns };
        },
        { version, api: servers.apiUrl },
      );
      assert.equal(out.r.ruby.slice(0, 3), version === '4.0' ? '4.0' : '3.4', logs.join('\n'));
      assert.deepEqual(
        { ...out.r, ruby: undefined },
        {
          greet: 'hello from env', gem: '1.2.3', tmp: ['/tmp', 'in /tmp'], rubygems: ['constant', true],
          ruby: undefined, code: '200', cls: 'Net::HTTPOK', served: 'plain', url: '/hello?from=createRubyVM', method: 'GET',
        },
      );
      assert.deepEqual(out.lines, [[1, 'to stdout'], [2, 'to stderr']]);
      assert.equal(out.conns, 0);
      assert.deepEqual(servers.requests.slice(seen).map((q) => `${q.method} ${q.url}`), ['GET /hello?from=createRubyVM']);
    });
  }

  test('ruby given as its fetch() or its bytes is patched before it is compiled (malloc grows the memory 4 MiB at a time), not with lazyZeroing: false or as a compiled module; the bytes given are left as they were; a failed response or anything else is an error naming it', async () => {
    const { page, logs } = await newLoggedPage(browser);
    await page.goto(`${servers.origin}/blank`);
    const out = await page.evaluate(async () => {
      const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
      const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
      const { createRubyVM } = await import('/js/ruby/browser.mjs');
      const url = '/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm';
      // the memory's growths during a burst of small allocations with no turn of the host
      const growths = async (ruby, options = {}) => {
        const { vm, dispose } = await createRubyVM({ ruby, RubyVM, wasi, print: false, ...options });
        const sizes = [];
        const memory = vm.instance.exports.memory;
        window.__noteMemory = () => sizes.push(memory.buffer.byteLength);
        vm.eval("require 'js'; $keep = []; 200.times { 500.times { $keep << ('x' * 200) }; JS.global.call(:__noteMemory) }; $keep.size");
        await dispose();
        const steps = [];
        for (let i = 1; i < sizes.length; i++) if (sizes[i] !== sizes[i - 1]) steps.push((sizes[i] - sizes[i - 1]) / (1 << 20));
        return steps;
      };
      const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
      const before = Array.from(bytes.subarray(0, 4096)).join() + bytes.reduce((a, b) => (a + b) % 1000003, 0);
      const failed = async (ruby) => createRubyVM({ ruby, RubyVM, wasi }).then(() => 'made', (e) => `${e.constructor.name}: ${e.message}`);
      return {
        fetched: await growths(fetch(url)),
        fromBytes: await growths(bytes),
        bytesUnchanged: before === Array.from(bytes.subarray(0, 4096)).join() + bytes.reduce((a, b) => (a + b) % 1000003, 0),
        notPatched: await growths(fetch(url), { lazyZeroing: false }),
        compiled: await growths(await WebAssembly.compile(bytes)),
        missing: await failed(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/no-such.wasm')),
        wrong: await failed('ruby+stdlib.wasm'),
        badOption: await createRubyVM({ ruby: bytes, RubyVM, wasi, lazyZeroing: 'yes' }).then(() => 'made', (e) => `${e.constructor.name}: ${e.message}`),
      };
    });
    const big = (steps) => steps.length >= 2 && steps.every((n) => n >= 4);
    assert.ok(big(out.fetched), `fetch(): growths (MiB) ${out.fetched.join(' ')}\n${logs.join('\n')}`);
    assert.ok(big(out.fromBytes), `bytes: growths (MiB) ${out.fromBytes.join(' ')}`);
    assert.equal(out.bytesUnchanged, true);
    for (const stock of [out.notPatched, out.compiled]) {
      assert.ok(stock.length > 2 * out.fetched.length && stock.some((n) => n < 4), `stock module's growths (MiB): ${stock.join(' ')}`);
    }
    assert.match(out.missing, /^Error: createRubyVM: ruby's response is 404 Not Found \(http:\/\/127\.0\.0\.1:\d+\/node_modules\/@ruby\/4\.0-wasm-wasi\/dist\/no-such\.wasm\)$/);
    assert.equal(out.wrong, "TypeError: createRubyVM: ruby must be ruby.wasm's Response (fetch(url)), its bytes or a compiled WebAssembly.Module");
    assert.equal(out.badOption, 'TypeError: createRubyVM: lazyZeroing must be true or false, not yes');
  });
});
