// The package under every JavaScript runtime a user may have: Node 22, 24
// and 26, Bun and Deno (installed from npm into build/hosts by .ci/run), and
// the Node running this file. Each runs, in a project that depends on
// net-http-wasm, the JS API from an ES module and from CommonJS, and a
// ruby.wasm VM made by createRubyVM doing a Net::HTTP GET against this
// file's server on both transports (waiting: vm.evalAsync; blocking:
// vm.eval), and prints nothing else. A runtime that is not installed is
// skipped here, and fails the run under CI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, copyFileSync, existsSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = join(ROOT, 'tests/fixtures/hosts');
const HOSTS = join(process.env.NETHTTP_HOSTS_DIR || join(ROOT, 'build/hosts'), 'node_modules');

// name, binary, arguments before the script
const RUNTIMES = [
  [`Node ${process.versions.node} (this one)`, process.execPath, []],
  ['Node 22', join(HOSTS, 'node22/bin/node'), []],
  ['Node 24', join(HOSTS, 'node24/bin/node'), []],
  ['Node 26', join(HOSTS, 'node26/bin/node'), []],
  ['Bun', join(HOSTS, '@oven/bun-linux-x64/bin/bun'), []],
  ['Deno', join(HOSTS, '@deno/linux-x64-glibc/deno'), ['run', '--allow-all']],
];

const REQUEST =
  'POST /signup HTTP/1.1\r\nX-Trace: abc\r\nAccept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3\r\n' +
  'Accept: */*\r\nUser-Agent: Ruby\r\nHost: example.com:8080\r\nContent-Length: 3\r\n\r\na=1';

let project;
let server;
let url;

before(async () => {
  // a user's project: net-http-wasm in node_modules, under a path with a
  // space and a '#'
  project = mkdtempSync(join(tmpdir(), 'hosts #'));
  const dir = join(project, 'my app');
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module', dependencies: { 'net-http-wasm': '*' } }));
  symlinkSync(ROOT, join(dir, 'node_modules/net-http-wasm'), 'dir');
  for (const f of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, f), join(dir, f));
  project = dir;
  server = http.createServer((req, res) => {
    res.setHeader('X-Server', 'hosts');
    res.end(`hello ${req.method} ${req.url}`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/from-ruby`;
});

after(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dirname(project), { recursive: true, force: true });
});

function run(bin, args, script, extra = []) {
  return new Promise((resolve, reject) => {
    execFile(bin, [...args, script, ...extra], { cwd: project, timeout: 600000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { message: `${err.message}\n${stderr}` }));
      else resolve({ stdout, stderr });
    });
  });
}

for (const [name, bin, args] of RUNTIMES) {
  const present = existsSync(bin);
  const skip = present ? false : `${bin} is not installed (.ci/run installs it)`;
  if (!present && process.env.CI) {
    test(`${name} is installed`, () => assert.fail(`${bin} is missing: .ci/run installs the runtimes into build/hosts`));
    continue;
  }
  test(`${name}: the JS API from an ES module and from CommonJS`, { skip, timeout: 120000 }, async () => {
    for (const script of ['api.mjs', 'api.cjs']) {
      const { stdout, stderr } = await run(bin, args, script);
      assert.deepEqual(JSON.parse(stdout), { request: REQUEST, code: '200', body: 'hi' }, script);
      assert.equal(stderr, '', `${script} printed on stderr`);
    }
  });
  test(`${name}: createRubyVM, a GET on the waiting and the blocking transport, nothing printed`, { skip, timeout: 660000 }, async () => {
    const { stdout, stderr } = await run(bin, args, 'vm.mjs', [url]);
    const line = '4.0.0 200 hosts hello GET /from-ruby';
    assert.deepEqual(JSON.parse(stdout), { ruby: '4.0', waiting: line, blocking: line, left: [] });
    assert.equal(stderr, '');
  });
}
