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
          const ruby = await WebAssembly.compileStreaming(fetch(`/node_modules/@ruby/${version}-wasm-wasi/dist/ruby+stdlib.wasm`));
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
});
