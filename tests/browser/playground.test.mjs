// The playground page (playground/) in headless Chromium: typing into the
// request form changes the bytes shown for 4.0 and 3.4, which are the bytes
// the package writes in Node for the same request; a pasted response is read
// leniently and strictly; Run evaluates the Ruby box in ruby.wasm 4.0 (its
// Net::HTTP talks to the local API server) and shows what it printed. Writes a screenshot to build/playground.png
// (NETHTTP_SCREENSHOT=path puts it elsewhere).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startExampleServers } from '../../examples/browser/serve.mjs';
import { skip, launchChromium, newLoggedPage } from '../support/chromium.mjs';
import { Request, URI, parseResponse } from '../../js/index.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SHOT = process.env.NETHTTP_SCREENSHOT || fileURLToPath(new URL('../../build/playground.png', import.meta.url));
const text = (u8) => Buffer.from(u8).toString('latin1');

test('playground: live request bytes for 4.0 and 3.4, a response read leniently and strictly, Ruby run in ruby.wasm', { skip, timeout: 240000 }, async () => {
  const servers = await startExampleServers();
  const browser = await launchChromium();
  try {
    const { page, logs } = await newLoggedPage(browser, { width: 1400, height: 1000 });
    await page.goto(`${servers.origin}/playground/?api=${encodeURIComponent(servers.apiUrl)}`);
    await page.waitForSelector('body[data-ready]', { timeout: 60000 });
    assert.equal(await page.getAttribute('body', 'data-ready'), '1', logs.join('\n'));
    const shown = async (id) => page.textContent(`[id="${id}"]`);
    const bytesOf = async (profile) => {
      const r = await page.evaluate((p) => {
        const x = window.__playground.request[p];
        return x.bytes ? { bytes: Array.from(x.bytes) } : x;
      }, profile);
      assert.ok(r.bytes, JSON.stringify(r));
      return Uint8Array.from(r.bytes);
    };

    // the initial form: a urlencoded POST
    const first = await shown('req-4.0');
    assert.match(first, /^POST \/signup\?ref=home HTTP\/1\.1\\r\nX-Trace: abc\\r\n/);
    assert.match(first, /name=Zo%C3%AB&langs=ruby&tilde=%7E$/);

    // typing a URL, a header and a raw body changes both columns
    await page.selectOption('#method', 'PUT');
    await page.fill('#url', 'http://[::1]:8080/items/7');
    await page.fill('#headers', 'X-Trace: typed');
    await page.check('input[name=bodykind][value=raw]');
    await page.fill('#raw', 'hello');
    for (const profile of ['4.0', '3.4']) {
      const want = new Request('PUT', URI('http://[::1]:8080/items/7'), [['X-Trace', 'typed']], { profile });
      want.body = 'hello';
      assert.equal(text(await bytesOf(profile)), text(want.toBytes()), profile);
    }
    const v40 = await shown('req-4.0');
    const v34 = await shown('req-3.4');
    assert.match(v40, /^PUT \/items\/7 HTTP\/1\.1\\r\nX-Trace: typed\\r\n/);
    assert.match(v40, /Host: \[::1\]:8080\\r\n/); // 4.0 brackets an IPv6 host
    assert.match(v34, /Host: ::1:8080\\r\n/);
    assert.ok(!v40.includes('Content-Type')); // 4.0 adds no default Content-Type
    assert.match(v34, /Content-Type: application\/x-www-form-urlencoded\\r\n/);
    assert.notEqual(v40, first);

    // a file: a multipart form with the typed boundary, as Node writes it
    await page.selectOption('#method', 'POST');
    await page.fill('#url', 'http://example.com/upload');
    await page.fill('#boundary', 'XyZ');
    await page.fill('#fields', 'name=Zoë');
    const fileBytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0xff]);
    await page.setInputFiles('#file', { name: 'cat.png', mimeType: 'image/png', buffer: fileBytes });
    await page.waitForFunction(() => document.getElementById('req-4.0').textContent.includes('cat.png'));
    for (const profile of ['4.0', '3.4']) {
      const want = new Request('POST', URI('http://example.com/upload'), [['X-Trace', 'typed']], { profile });
      want.setForm([['name', 'Zoë'], ['file', new Uint8Array(fileBytes), { filename: 'cat.png', contentType: 'image/png' }]], 'multipart/form-data', { boundary: 'XyZ' });
      assert.equal(text(await bytesOf(profile)), text(want.toBytes()), profile);
    }
    const mp = await shown('req-4.0');
    assert.match(mp, /Content-Type: multipart\/form-data; boundary=XyZ\\r\n/);
    assert.ok(mp.includes('filename="cat.png"\\r\nContent-Type: image/png\\r\n\\r\n\\x89PNG\\r\n\\x1a\n\\x00\\xff\\r\n--XyZ--\\r\n'), mp);

    // an error Ruby raises is shown as Class: message
    await page.fill('#url', 'http://exa mple.com/');
    assert.match(await shown('req-4.0'), /^URI::InvalidURIError: bad URI/);
    await page.fill('#url', 'http://example.com/upload');

    // the response: MRI reads chunked over Content-Length; strict refuses both
    const smuggle = 'HTTP/1.1 200 OK\nContent-Length: 3\nTransfer-Encoding: chunked\nX-A: 1\n\n2\nhi\n0\n\n';
    await page.fill('#response', smuggle);
    const lenient = await shown('res-lenient');
    const want = parseResponse(Buffer.from(smuggle.replace(/\n/g, '\r\n')));
    assert.ok(lenient.startsWith('Net::HTTPOK\nHTTP/1.1 200 OK\n\nContent-Length: 3\nTransfer-Encoding: chunked\nX-A: 1\n\nbody (2 bytes):\nhi'), lenient);
    assert.deepEqual(await page.evaluate(() => window.__playground.response.lenient), JSON.parse(JSON.stringify(want.toJSON())));
    assert.match(await shown('res-strict'), /^Net::HTTPBadResponse: .*\(strict\)$/);
    // HEAD: no body
    await page.selectOption('#res-method', 'HEAD');
    assert.match(await shown('res-lenient'), /\nbody: nil\n\n\(12 bytes after the message: the next response\)$/);
    await page.selectOption('#res-method', 'GET');
    await page.fill('#response', 'HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 5\n\nhello');
    assert.match(await shown('res-strict'), /^Net::HTTPOK\n[^]*body \(5 bytes\):\nhello$/);

    // Ruby: Run evaluates the box in ruby.wasm 4.0, whose Net::HTTP reaches
    // the local API server through the package; the page shows what it printed
    const run = async () => {
      await page.click('#run-ruby');
      await page.waitForSelector('body[data-ruby]', { timeout: 90000 });
      assert.equal(await page.getAttribute('body', 'data-ruby'), 'done', `${await shown('ruby-out')}\n${logs.join('\n')}`);
      return shown('ruby-out');
    };
    assert.match(await page.inputValue('#ruby'), new RegExp(`URI\\("${servers.apiUrl}/hello\\?from=ruby"\\)`));
    let seen = servers.requests.length;
    const [cls, type, body] = (await run()).split('\n');
    assert.equal(cls, 'Net::HTTPOK');
    assert.equal(type, 'application/json; charset=utf-8');
    assert.ok(body.startsWith('{"method":"GET","url":"/hello?from=ruby","headers":['), body); // the echo, cut at 400 bytes
    assert.equal(body.length, 400);
    assert.deepEqual(servers.requests.slice(seen).map((q) => `${q.method} ${q.url}`), ['GET /hello?from=ruby']);

    // code typed into the box: a form POST, stderr, then an exception shown
    // as Class: message (nothing listens on port 9)
    seen = servers.requests.length;
    await page.fill('#ruby', `res = Net::HTTP.post_form(URI('${servers.apiUrl}/form'), 'name' => 'Zoë', 'q' => 'a b')
puts res.code, JSON.parse(res.body)['body']
warn 'to stderr'
Net::HTTP.get(URI('http://127.0.0.1:9/'))
puts 'not reached'`);
    const typed = await run();
    assert.match(typed, /^200\nname=Zo%C3%AB&q=a\+b\nto stderr\nNetHttpWasm::FetchError: fetch failed: .+\n$/, typed);
    assert.deepEqual(servers.requests.slice(seen).map((q) => `${q.method} ${q.url} ${q.body}`), ['POST /form name=Zo%C3%AB&q=a+b']);

    mkdirSync(dirname(SHOT), { recursive: true });
    await page.screenshot({ path: SHOT, fullPage: true });
    assert.ok(statSync(SHOT).size > 20000, 'a screenshot was written');
    assert.deepEqual(logs.filter((l) => l.startsWith('pageerror')), []);
  } finally {
    await browser.close();
    await servers.close();
  }
});

// Holds 127.0.0.1:port for the test (a port someone else holds is as busy).
async function occupy(port) {
  const server = net.createServer((c) => c.destroy());
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    return server;
  } catch (e) {
    if (e.code !== 'EADDRINUSE') throw e;
    return null;
  }
}

// Runs a command line as a person types it (`npm run playground`, `node
// examples/browser/serve.mjs`), in a process group of its own (npm runs the
// script in a shell: stop() ends the whole group); resolves with the first
// `open <url>` line and what was printed before it, or with the exit status
// and stderr when the process ends first.
function startScript(argv, env) {
  const child = spawn(argv[0] === 'node' ? process.execPath : argv[0], argv.slice(1), {
    cwd: root,
    env: { ...process.env, PORT: '', API_PORT: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const printed = new Promise((resolve) => {
    child.stdout.on('data', () => {
      const m = /^open (\S+)$/m.exec(out);
      if (m) resolve({ url: m[1], out });
    });
    child.once('exit', (code) => resolve({ code, out, err }));
  });
  return { child, printed };
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  process.kill(-child.pid, 'SIGTERM');
  await exited;
}

for (const [argv, path, title] of [
  [['npm', 'run', '--silent', 'playground'], '/playground/', /<title>net-http-wasm playground/],
  [['node', 'examples/browser/serve.mjs'], '/', /<title>net-http-wasm: Net::HTTP in ruby\.wasm, in the browser/],
]) {
  const script = argv.join(' ');
  test(`${script}: with 8080 and 8081 in use it serves on free ports and says so; PORT set to a busy port is a one-line error`, { timeout: 60000 }, async () => {
    const held = [await occupy(8080), await occupy(8081)];
    const children = [];
    try {
      const a = startScript(argv, {});
      children.push(a.child);
      const r = await a.printed;
      assert.ok(r.url, `no URL printed: ${JSON.stringify(r)}`);
      const page = new URL(r.url);
      const api = new URL(page.searchParams.get('api'));
      assert.notEqual(page.port, '8080');
      assert.notEqual(api.port, '8081');
      assert.equal(r.out, `port 8080 is in use: serving on ${page.port} instead (PORT=<port> chooses one)\n`
        + `port 8081 is in use: serving on ${api.port} instead (API_PORT=<port> chooses one)\n`
        + `open ${r.url}\n`);
      assert.equal(page.pathname, path);
      const res = await fetch(r.url);
      assert.equal(res.status, 200);
      assert.match(await res.text(), title);
      const hello = await fetch(new URL('/hello?x=1', api));
      assert.equal(hello.headers.get('access-control-allow-origin'), '*');
      assert.equal((await hello.json()).url, '/hello?x=1');

      // a port chosen by PORT is kept: in use, the server says which variable to change
      const b = startScript(argv, { PORT: '8080', API_PORT: '0' });
      children.push(b.child);
      const e = await b.printed;
      assert.equal(e.code, 1, JSON.stringify(e));
      assert.equal(e.out, '');
      assert.equal(e.err, 'cannot listen on 127.0.0.1:8080: the port is in use (PORT=8080); set PORT to another port, or PORT=0 for any free one\n');
      const c = startScript(argv, { PORT: 'eighty' });
      children.push(c.child);
      const bad = await c.printed;
      assert.deepEqual([bad.code, bad.err], [1, 'PORT must be a port number (0 to 65535, 0 for any free port), not "eighty"\n']);

      // PORT and API_PORT set to free ports: served there, no note
      const d = startScript(argv, { PORT: '0', API_PORT: '0' });
      children.push(d.child);
      const any = await d.printed;
      assert.match(any.out, /^open http:\/\/127\.0\.0\.1:\d+\//);
      assert.equal((await fetch(any.url)).status, 200);
    } finally {
      for (const c of children) await stop(c);
      for (const h of held) if (h) await new Promise((r) => h.close(r));
    }
  });
}
