// The fetch() bridge in Node: req.toFetch() sent with Node's fetch() to a
// local server, and the fetched Response read back with responseFromFetch().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Request, URI, responseFromFetch, parseResponse } from '../../js/index.mjs';

async function withServer(fn) {
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.rawHeaders, body: Buffer.concat(chunks) });
      if (req.url === '/gzip') {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip', 'Set-Cookie': ['a=1', 'b=2'] });
        res.end(gzipSync('hello gzip'));
      } else {
        res.writeHead(201, 'Made', { 'Content-Type': 'application/json; charset=utf-8', 'X-Multi': 'one', 'Connection': 'keep-alive' });
        res.end(JSON.stringify({ ok: true }));
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await fn(`http://127.0.0.1:${server.address().port}`, seen);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test('toFetch: the fields Net::HTTP writes minus the forbidden ones, and the body', async () => {
  await withServer(async (base, seen) => {
    const req = new Request('POST', URI(`${base}/form?x=1`), { 'X-Trace': 'abc' });
    req.setForm([['name', 'Zoë'], ['f', new Uint8Array([0, 255]), { filename: 'b.bin' }]], 'multipart/form-data', { boundary: 'BB' });
    req.basicAuth('user', 'pw');
    const { url, init, dropped } = req.toFetch();
    assert.equal(url, `${base}/form?x=1`);
    assert.deepEqual(dropped, ['Accept-Encoding', 'Host', 'Content-Length']);
    const res = await fetch(url, init);
    assert.equal(res.status, 201);
    const got = seen[0];
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/form?x=1');
    const h = {};
    for (let i = 0; i < got.headers.length; i += 2) h[got.headers[i].toLowerCase()] = got.headers[i + 1];
    assert.equal(h['x-trace'], 'abc');
    assert.equal(h['user-agent'], 'Ruby');
    assert.equal(h.authorization, 'Basic dXNlcjpwdw==');
    assert.equal(h['content-type'], 'multipart/form-data; boundary=BB');
    const wire = Buffer.from(req.toBytes());
    const body = wire.subarray(wire.indexOf('\r\n\r\n') + 4);
    assert.deepEqual(got.body, body);
    assert.equal(h['content-length'], String(body.length));
  });
});

test('toFetch: a path needs a URL; a GET has no body; a chunked body is refused', () => {
  assert.throws(() => new Request('GET', '/p').toFetch(), TypeError);
  const g = new Request('GET', '/p').toFetch('http://h/p');
  assert.equal(g.init.body, undefined);
  assert.equal(g.init.method, 'GET');
  const c = new Request('POST', URI('http://h/p'));
  c.setForm([['a', '1']], 'multipart/form-data', { boundary: 'B' });
  c.set('Transfer-Encoding', 'chunked');
  assert.throws(() => c.toFetch(), /chunked/);
});

test('responseFromFetch: class, fields, Set-Cookie kept apart, decoded body', async () => {
  await withServer(async (base) => {
    const a = await responseFromFetch(await fetch(`${base}/json`));
    assert.equal(a.className, 'Net::HTTPCreated');
    assert.equal(a.code, '201');
    assert.equal(a.message, 'Made');
    assert.equal(a.get('Content-Type'), 'application/json; charset=utf-8');
    assert.equal(a.contentType(), 'application/json');
    assert.deepEqual({ ...a.typeParams() }, { charset: 'utf-8' });
    assert.equal(a.isConnectionKeepAlive(), true);
    assert.equal(a.bodyText(), '{"ok":true}');
    assert.equal(a.contentLength(), 11);
    const b = await responseFromFetch(await fetch(`${base}/gzip`));
    assert.equal(b.className, 'Net::HTTPOK');
    assert.deepEqual(b.getFields('set-cookie'), ['a=1', 'b=2']);
    assert.equal(b.get('content-encoding'), null);
    assert.equal(b.bodyText(), 'hello gzip');
    const caps = b.eachCapitalized().map(([k]) => k);
    assert.ok(caps.includes('Set-Cookie') && caps.includes('Content-Type'));
    // the same as parsing what fetch() gave, written out
    const same = parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nset-cookie: a=1\r\nset-cookie: b=2\r\ncontent-length: 10\r\n\r\nhello gzip'));
    assert.deepEqual(b.headers['set-cookie'], same.headers['set-cookie']);
  });
});
