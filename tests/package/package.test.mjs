// The packed tarball, installed into a new project as README's install lines
// say, in a folder whose name has a space and a '#', used as a user uses it:
// what it holds, the command line, the ES and CommonJS entries, and the ruby
// entry (first without the ruby.wasm packages, then with them, from an ES
// module and from CommonJS) against a local server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { installPackage } from '../support/installed.mjs';

let pkg;
let server;
let url;
before(async () => {
  pkg = installPackage({ app: 'my app #1' });
  server = createServer((req, res) => res.end(`hello ${req.method} ${req.url}`));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${server.address().port}/hi`;
});
after(() => {
  server?.close();
  pkg?.remove();
});

const installedDir = () => join(pkg.dir, 'node_modules', 'net-http-wasm');
const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
const ok = (r) => {
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

test('the tarball holds the JS, the generated files and the module once, and no C', () => {
  for (const f of ['package.json', 'LICENSE', 'README.md', 'CHANGELOG.md', 'bin/net-http-wasm.mjs', 'js/index.mjs', 'js/index.cjs',
    'js/wasm-bytes.mjs', 'js/schema.mjs', 'js/ruby/source.mjs', 'js/ruby/constants.mjs', 'js/ruby/node.mjs', 'js/ruby/browser.mjs'])
    assert.ok(pkg.files.includes(f), `${f} is in the tarball`);
  for (const f of pkg.files) assert.doesNotMatch(f, /\.(c|h|wasm|rb)$|^src\/|^schema\/|^tests\//, `${f} is not shipped`);
  // the module's base64 appears in exactly one file
  const module = readFileSync(new URL('../../wasm/nethttp.wasm', import.meta.url));
  const probe = module.subarray(3 * 341, 3 * 341 + 96).toString('base64');
  const holders = walk(installedDir()).filter((f) => readFileSync(f, 'latin1').includes(probe));
  assert.deepEqual(holders.map((f) => f.slice(installedDir().length + 1)), ['js/wasm-bytes.mjs']);
  assert.ok(pkg.size < 300 * 1024, `tarball ${pkg.size} bytes`);
});

test('the command line from the installed package', async () => {
  const out = ok(await pkg.run('npx', ['--no-install', 'net-http-wasm', 'request', 'GET', 'http://example.com/', '-H', 'X-Trace: abc']));
  assert.equal(out, 'GET / HTTP/1.1\r\nAccept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3\r\n'
    + 'Accept: */*\r\nUser-Agent: Ruby\r\nHost: example.com\r\nX-Trace: abc\r\n\r\n');
  const bad = await pkg.run('npx', ['--no-install', 'net-http-wasm', 'request', 'GET', 'http://example.com/', '-H', 'X-Bad: a\rb']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^ArgumentError: header field value cannot include CR\/LF/);
});

test('the ES module and CommonJS entries give the same API and bytes', async () => {
  const body = `const req = new Request('POST', URI('http://example.com/up')); req.body = 'a=1';
    console.log(JSON.stringify([Object.keys(api).sort(), Buffer.from(req.toBytes()).toString('latin1'), api.parseResponse('HTTP/1.1 204 No Content\\r\\n\\r\\n').code]));`;
  const esm = ok(await pkg.run('node', ['--input-type=module', '-e', `import * as api from 'net-http-wasm'; const { Request, URI } = api; ${body}`]));
  const cjs = ok(await pkg.run('node', ['-e', `const api = require('net-http-wasm'); const { Request, URI } = api; ${body}`]));
  assert.equal(cjs, esm);
  const [names, bytes, code] = JSON.parse(esm);
  assert.ok(names.includes('Request') && names.includes('parseResponse'), names.join());
  assert.match(bytes, /^POST \/up HTTP\/1\.1\r\n/);
  assert.match(bytes, /\r\n\r\na=1$/);
  assert.equal(code, '204');
});

test('the ruby entry without the ruby.wasm packages names the ones to install', async () => {
  const r = await pkg.run('node', ['--input-type=module', '-e', `import { createRubyVM } from 'net-http-wasm/ruby'; await createRubyVM();`]);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /createRubyVM needs the package @ruby\/wasm-wasi: npm install @ruby\/wasm-wasi/);
});

test("the ruby entry with README's packages: Net::HTTP over both transports", { timeout: 240000 }, async () => {
  pkg.npmInstall('@ruby/wasm-wasi', '@ruby/4.0-wasm-wasi');
  const script = `import { createRubyVM } from 'net-http-wasm/ruby';
    const url = process.env.URL;
    const a = await createRubyVM();
    console.log((await a.vm.evalAsync(\`require 'net/http'; Net::HTTP.get(URI('\${url}'))\`)).toString());
    await a.dispose();
    const b = await createRubyVM({ blocking: true });
    console.log(b.vm.eval(\`require 'net/http'; Net::HTTP.post(URI('\${url}'), 'x').body\`).toString());
    await b.dispose();`;
  const out = ok(await pkg.run('node', ['--input-type=module', '-e', script], { env: { ...process.env, URL: url } }));
  assert.equal(out, 'hello GET /hi\nhello POST /hi\n');
  // the package's own files are loaded from under that folder (the blocking
  // transport's I/O thread too), not through a link elsewhere
  assert.match(realpathSync(installedDir()), /\/my app #1\/node_modules\/net-http-wasm$/);
  const cjs = `const { createRubyVM } = require('net-http-wasm/ruby');
    (async () => {
      const { vm, dispose } = await createRubyVM({ blocking: true });
      console.log(vm.eval(\`require 'net/http'; Net::HTTP.get(URI('\${process.env.URL}'))\`).toString());
      await dispose();
    })();`;
  assert.equal(ok(await pkg.run('node', ['-e', cjs], { env: { ...process.env, URL: url } })), 'hello GET /hi\n');
});
