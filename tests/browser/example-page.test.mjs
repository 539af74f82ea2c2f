// The browser example (examples/browser/) in headless Chromium: ruby.wasm 4.0
// loaded from local node_modules, Net::HTTP over fetch() against a local
// cross-origin API server with CORS headers, and the codec's JS API on its own.
//
// Needs Debian's `chromium` (/usr/bin/chromium, or NETHTTP_CHROMIUM) and the
// playwright-core devDependency; skipped without them. NETHTTP_SCREENSHOT=path
// keeps the page's screenshot there (otherwise it goes to a temporary folder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExampleServers } from '../../examples/browser/serve.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';

test('browser: Net::HTTP in ruby.wasm 4.0 over fetch(), and the JS API with fetch()', { skip, timeout: 180000 }, async () => {
  const servers = await startExampleServers();
  const browser = await launchChromium();
  const dir = mkdtempSync(join(tmpdir(), 'nethttp-browser-'));
  try {
    const { page, logs } = await newLoggedPage(browser, { width: 1100, height: 1600 });
    await page.goto(servers.pageUrl);
    await page.waitForSelector('body[data-done]', { timeout: 150000 });
    const results = await page.evaluate(() => window.__results);
    const shot = process.env.NETHTTP_SCREENSHOT || join(dir, 'page.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 10000, 'a screenshot was taken');
    assert.equal(results.error, undefined, `${results.error}\n${logs.join('\n')}`);

    // 1. GET through fetch(): Ruby sees the response as MRI would
    const get = results['ruby-get'];
    assert.equal(get.code, '200');
    assert.equal(get.class, 'Net::HTTPOK');
    assert.equal(get.content_type, 'application/json; charset=utf-8');
    assert.equal(get.x_served, 'plain');
    assert.equal(get.body.method, 'GET');
    assert.equal(get.body.url, '/hello?lang=ruby');
    const seen = Object.fromEntries(
      get.body.headers.reduce((a, v, i, all) => (i % 2 ? a : [...a, [all[i].toLowerCase(), all[i + 1]]]), []),
    );
    assert.equal(seen.accept, '*/*'); // the header Net::HTTP wrote, passed on by fetch()
    assert.ok(!('connection' in seen) || seen.connection !== 'close');
    // forbidden headers were dropped from what the codec wrote (the browser sets its own)
    assert.ok(results.droppedAfterGet.includes('Host'));
    assert.ok(results.droppedAfterGet.includes('Accept-Encoding'));

    // 2. the form POST: Ruby's form encoding, Content-Type from set_form_data
    const form = results['ruby-form'];
    assert.equal(form.code, '200');
    assert.equal(form.sent_body, 'name=Zo%C3%AB&langs=ruby&langs=c&q=a+b%26c');
    assert.equal(form.echo.body, 'name=Zo%C3%AB&langs=ruby&langs=c&q=a+b%26c');
    const formSeen = servers.requests.find((r) => r.method === 'POST' && r.url === '/form');
    const formHeaders = formSeen.headers.map((h) => h.toLowerCase());
    assert.equal(formHeaders[formHeaders.indexOf('content-type') + 1], 'application/x-www-form-urlencoded');

    // 3. gzip: decoded by the browser; Content-Encoding gone, as with decode_content
    assert.deepEqual(results['ruby-gzip'], { code: '200', content_encoding: null, body: '/gzip' });

    // 4. a failed fetch() is a SocketError subclass
    const err = results['ruby-error'];
    assert.equal(err.class, 'NetHttpWasm::FetchError');
    assert.ok(err.ancestors.includes('SocketError'));

    // 5. JS only: the bytes the codec wrote, sent with fetch()
    const js = results['js-form'];
    assert.equal(js.status, 200);
    assert.equal(js.echo.body, 'name=Zo%C3%AB&langs=ruby&langs=c&tilde=%7E');
    assert.match(js.wire, /^POST \/form\?from=js HTTP\/1\.1\r\nX-Trace: page\r\nAccept-Encoding: gzip;q=1\.0,deflate;q=0\.6,identity;q=0\.3\r\nAccept: \*\/\*\r\nUser-Agent: Ruby\r\nHost: 127\.0\.0\.1:\d+\r\nContent-Type: application\/x-www-form-urlencoded\r\nContent-Length: 42\r\n\r\n/);
  } finally {
    await browser.close();
    await servers.close();
    if (!process.env.NETHTTP_SCREENSHOT) rmSync(dir, { recursive: true, force: true });
  }
});
