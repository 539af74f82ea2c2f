// The browser transport under connection faults: Net::HTTP in ruby.wasm 4.0
// in headless Chromium, each request a fetch(), against the chaos server
// (tests/support/chaos/server.mjs, with CORS) misbehaving in the ways a
// fetch() can show: a reset before any byte and mid-body, a body cut short
// by a close, a stall past read_timeout (after the head, and before it),
// garbage. What fetch() cannot tell apart, the transport cannot either:
// a failed fetch() is a NetHttpWasm::FetchError (a SocketError, not
// retried), a body that fails while it is read is Errno::ECONNRESET, a stall
// is Net::ReadTimeout (both retried once for a GET, as Net::HTTP does). After
// each fault the bridge holds no connection, the browser has closed the
// faulted socket (an aborted fetch() is not sent again) and the same
// Net::HTTP object works again. The README's "Faults" section lists how this
// differs from native MRI.
//
// Needs Debian's `chromium` and playwright-core (skipped without them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startExampleServers } from '../../examples/browser/serve.mjs';
import { startChaos } from '../support/chaos/index.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';
import { READ_TIMEOUT, runFault } from '../support/browser/faults.mjs';

test('browser: Net::HTTP over fetch() under connection faults (Chromium, ruby.wasm 4.0)', { skip, timeout: 90000 }, async () => {
  const servers = await startExampleServers();
  const chaos = await startChaos({ tls: false, cors: true });
  const browser = await launchChromium();
  try {
    const { page, logs } = await newLoggedPage(browser);
    await page.goto(`${servers.origin}/blank`);
    // ruby.wasm's browser entry imports the WASI shim by its bare name
    await page.setContent('<!doctype html><script type="importmap">{ "imports": { "@bjorn3/browser_wasi_shim": "/node_modules/@bjorn3/browser_wasi_shim/dist/index.js" } }</script>');
    await page.evaluate(async () => {
      const { DefaultRubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/browser.js');
      const { init } = await import('/js/index.mjs');
      const { installNetHttp } = await import('/js/ruby/browser.mjs');
      await init();
      const module = await WebAssembly.compileStreaming(fetch('/node_modules/@ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm'));
      const { vm } = await DefaultRubyVM(module, { consolePrint: false });
      installNetHttp(vm);
      vm.eval("require 'net/http'; require 'json'; require 'js'");
      window.__rb = async (code) => JSON.parse((await vm.evalAsync(`(begin\n${code}\nend).to_json`)).toString());
    });

    // Each scenario starts with the connection the last one kept alive
    // (the first with none): Chromium reuses it for the next fetch().
    const run = async (method, path) => {
      const rb = (code) =>
        Promise.race([page.evaluate((c) => window.__rb(c), code), sleep(15000).then(() => ({ hung: true }))]).then((r) => {
          assert.ok(!r.hung, `${method} ${path} hung\n${logs.join('\n')}`);
          return r;
        });
      return (await runFault(chaos, rb, method, path))[0];
    };

    // reset before any byte, and garbage instead of a status line (Chromium
    // refuses it): fetch() fails, a SocketError that Net::HTTP does not retry.
    // On a reused connection (POST here) Chromium itself sends the request
    // again on a new one, as it does after any reset before a response.
    for (const [m, path, sent] of [['GET', '/reset', 1], ['POST', '/reset', 2], ['GET', '/garbage', 1], ['POST', '/garbage', 1]]) {
      const r = await run(m, path);
      const what = `${m} ${path}: ${JSON.stringify(r)}`;
      assert.equal(r.error[0], 'NetHttpWasm::FetchError', what);
      assert.match(r.error[1], /^fetch failed: Failed to fetch /, what);
      assert.equal(r.socketError, true, what);
      assert.equal(r.requests, sent, what);
    }
    // a reset mid-body, and a close with the body short of its Content-Length:
    // the body's stream fails, which reads as a reset (a GET retried once)
    for (const path of ['/reset-body', '/fin-body', '/reset-chunked']) {
      for (const m of ['GET', 'POST']) {
        const r = await run(m, path);
        const what = `${m} ${path}: ${JSON.stringify(r)}`;
        assert.deepEqual(r.error, ['Errno::ECONNRESET', 'Connection reset by peer'], what);
        assert.equal(r.requests, m === 'GET' ? 2 : 1, what);
      }
    }
    // a stall past read_timeout, after the head and before it: Net::ReadTimeout
    // (a GET retried once, as Net::HTTP does), each fetch() aborted
    for (const path of ['/stall-body', '/silent']) {
      for (const m of ['GET', 'POST']) {
        const r = await run(m, path);
        const what = `${m} ${path}: ${JSON.stringify(r)}`;
        assert.deepEqual(r.error, ['Net::ReadTimeout', 'Net::ReadTimeout with #<TCPSocket:(closed)>'], what);
        assert.equal(r.timeoutError, true, what);
        const tries = m === 'GET' ? 2 : 1;
        assert.equal(r.requests, tries, what);
        assert.ok(r.seconds >= tries * READ_TIMEOUT * 0.9 && r.seconds < tries * READ_TIMEOUT + 2, what);
      }
    }
  } finally {
    await browser.close();
    chaos.close();
    await servers.close();
  }
});
