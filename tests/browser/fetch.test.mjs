// The fetch() bridge in headless Chromium: a request built with the package
// (a multipart form with a File read by toFetchAsync) sent with the page's
// fetch() to a cross-origin server with CORS, and fetched responses read back
// with responseFromFetch. The server records the bytes it received; they
// must be the body the codec writes for the same request in Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startExampleServers } from '../../examples/browser/serve.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';
import { Request, URI } from '../../js/index.mjs';

const latin1 = (u8) => Buffer.from(u8).toString('latin1');

test('browser: req.toFetchAsync() and responseFromFetch() with Chromium\'s fetch()', { skip, timeout: 120000 }, async () => {
  const servers = await startExampleServers();
  const browser = await launchChromium();
  try {
    const { page, logs } = await newLoggedPage(browser);
    await page.goto(`${servers.origin}/blank`);
    const got = await page.evaluate(async (api) => {
      const m = await import('/js/index.mjs');
      await m.init();
      const out = {};
      // a multipart POST with a File, and a header the page may set
      const file = new File([new Uint8Array([0, 1, 2, 0xfe, 0xff, 13, 10])], 'dir/b.bin');
      const req = new m.Request('POST', m.URI(`${api}/form?x=1`), { 'X-Trace': 'page' });
      req.setForm([['name', 'Zoë'], ['f', file]], 'multipart/form-data', { boundary: 'BB' });
      req.basicAuth('user', 'pw');
      const { url, init, dropped } = await req.toFetchAsync();
      out.post = { url, dropped, method: init.method, headers: init.headers, body: Array.from(init.body) };
      const res = await m.responseFromFetch(await fetch(url, init), { requestMethod: req.method });
      out.postRes = { className: res.className, code: res.code, type: res.contentType(), params: { ...res.typeParams() },
        served: res.getFields('X-Served'), caps: res.eachCapitalized(), echo: JSON.parse(res.bodyText()), length: res.contentLength() };
      // gzip: decoded by the browser, read without Content-Encoding
      const g = await m.responseFromFetch(await fetch(`${api}/gzip`));
      out.gzip = { className: g.className, encoding: g.get('content-encoding'), served: g.get('x-served'), url: JSON.parse(g.bodyText()).url };
      // a 404 and a HEAD (no body, as Net::HTTP reads one)
      const nf = new m.Request('GET', m.URI(`${api}/status/404`)).toFetch();
      const r404 = await m.responseFromFetch(await fetch(nf.url, nf.init));
      out.notFound = { className: r404.className, code: r404.code, message: r404.message, dropped: nf.dropped };
      const h = new m.Request('HEAD', m.URI(`${api}/hello`)).toFetch();
      const rh = await m.responseFromFetch(await fetch(h.url, h.init), { requestMethod: 'HEAD' });
      out.head = { className: rh.className, body: rh.body, hasBody: 'body' in h.init };
      return out;
    }, servers.apiUrl);
    assert.ok(got, logs.join('\n'));

    // what the page built is what Node builds for the same request
    const same = new Request('POST', URI(`${servers.apiUrl}/form?x=1`), { 'X-Trace': 'page' });
    same.setForm([['name', 'Zoë'], ['f', new Uint8Array([0, 1, 2, 0xfe, 0xff, 13, 10]), { filename: 'b.bin' }]], 'multipart/form-data', { boundary: 'BB' });
    same.basicAuth('user', 'pw');
    const ref = same.toFetch();
    assert.equal(got.post.url, `${servers.apiUrl}/form?x=1`);
    assert.equal(got.post.method, 'POST');
    assert.deepEqual(got.post.dropped, ['Accept-Encoding', 'Host', 'Content-Length']);
    assert.deepEqual(got.post.headers, ref.init.headers);
    assert.deepEqual(got.post.body, Array.from(ref.init.body));

    // the server received those bytes and fields
    const seen = servers.requests.find((r) => r.method === 'POST' && r.url === '/form?x=1');
    assert.ok(seen, JSON.stringify(servers.requests.map((r) => `${r.method} ${r.url}`)));
    assert.equal(seen.body, latin1(ref.init.body));
    assert.ok(seen.body.includes('filename="b.bin"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02\xfe\xff\r\n\r\n--BB--\r\n'));
    const h = {};
    for (let i = 0; i < seen.headers.length; i += 2) h[seen.headers[i].toLowerCase()] = seen.headers[i + 1];
    assert.equal(h['x-trace'], 'page');
    assert.equal(h.authorization, 'Basic dXNlcjpwdw==');
    assert.equal(h['content-type'], 'multipart/form-data; boundary=BB');
    assert.equal(h.accept, '*/*');
    assert.equal(h['content-length'], String(ref.init.body.length));

    // the responses, as Net::HTTP reads them
    assert.equal(got.postRes.className, 'Net::HTTPOK');
    assert.equal(got.postRes.type, 'application/json');
    assert.deepEqual(got.postRes.params, { charset: 'utf-8' });
    assert.deepEqual(got.postRes.served, ['plain']);
    assert.ok(got.postRes.caps.some(([k, v]) => k === 'X-Served' && v === 'plain'));
    assert.ok(got.postRes.caps.some(([k]) => k === 'Content-Type'));
    assert.equal(got.postRes.echo.method, 'POST');
    assert.equal(got.postRes.length, Buffer.byteLength(JSON.stringify(got.postRes.echo)));
    assert.deepEqual(got.gzip, { className: 'Net::HTTPOK', encoding: null, served: 'gzip', url: '/gzip' });
    assert.deepEqual(got.notFound, { className: 'Net::HTTPNotFound', code: '404', message: 'Status Test', dropped: ['Accept-Encoding', 'Host'] });
    assert.deepEqual(got.head, { className: 'Net::HTTPOK', body: null, hasBody: false });
  } finally {
    await browser.close();
    await servers.close();
  }
});
