// A VM of the browser entry's createRubyVM (js/ruby/browser.mjs) in headless
// Chromium whose WebAssembly code traps is dead, as in Node
// (tests/rubywasm/dead-vm.test.mjs): the page's evalAsync, pending across a
// Net::HTTP GET over fetch(), traps when resumed (Ruby's deep recursion in C)
// and rejects with ERR_RUBY_VM_DEAD, and the next vm.eval and vm.evalAsync
// fail at once with the same error.
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startExampleServers } from '../../examples/browser/serve.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';

// nests arrays deeper than the C stack: Array#inspect recurses in C
const DEEP = 'a = []; 300_000.times { a = [a] }; a.inspect.size';

describe('browser: a dead VM', { skip, timeout: 240000 }, () => {
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

  test('createRubyVM: a trap after a fetch() wait rejects that evalAsync; the next calls fail at once', async () => {
    const { page, logs } = await newLoggedPage(browser);
    await page.goto(`${servers.origin}/blank`);
    const out = await page.evaluate(
      async ({ api, deep }) => {
        const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
        const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
        const { createRubyVM } = await import('/js/ruby/browser.mjs');
        const ruby = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
        const { vm, dispose } = await createRubyVM({ ruby, RubyVM, wasi, print: false });
        const said = (e) => (e && e.code === 'ERR_RUBY_VM_DEAD' && /^net-http-wasm: the Ruby VM is dead: /.test(e.message) ? 'dead' : `other: ${e && e.message}`);
        const lines = [];
        const pending = vm.evalAsync(`require 'net/http'; Net::HTTP.get(URI('${api}/hello')); ${deep}`);
        const r = await Promise.race([pending.then(() => 'resolved', (e) => said(e)), new Promise((res) => setTimeout(() => res('still pending'), 60000))]);
        lines.push(`pending ${r}`);
        try {
          vm.eval('1');
          lines.push('eval worked');
        } catch (e) {
          lines.push(`eval ${said(e)}`);
        }
        lines.push(`evalAsync ${await vm.evalAsync('1').then(() => 'worked', (e) => said(e))}`);
        await dispose();
        return lines;
      },
      { api: servers.apiUrl, deep: DEEP },
    );
    assert.deepEqual(out, ['pending dead', 'eval dead', 'evalAsync dead'], logs.join('\n'));
  });
});
