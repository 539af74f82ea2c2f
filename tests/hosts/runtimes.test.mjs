// The package under every JavaScript runtime a user may have: Node 22, 24
// and 26, Bun and Deno (installed from npm into build/hosts by .ci/run), and
// the Node running this file. Each runs, in a fresh project where the packed
// tarball of this checkout and the ruby.wasm packages were installed with
// npm (tests/support/installed.mjs; packed once for the file), in a folder
// whose path holds spaces and a '#', the JS API from an ES module and from CommonJS, and a
// ruby.wasm VM made by createRubyVM doing a Net::HTTP GET against this
// file's server on both transports (waiting: vm.evalAsync; blocking:
// vm.eval) and HTTPS connections to servers that answer with TLS alerts,
// whose errors must read as native MRI's against the same servers, whatever
// TLS library the runtime links; and prints nothing else. A runtime that is
// not installed is skipped here, and fails the run under CI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPackage } from '../support/installed.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = join(ROOT, 'tests/support/hosts');
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

// every TLS alert (RFC 8446, 6; and those of earlier versions)
const ALERTS = [10, 20, 21, 22, 30, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 60, 70, 71, 80, 86, 90, 100, 109, 110, 111, 112, 113, 114, 115, 116, 120];
const haveRuby = (() => {
  try {
    execFileSync('ruby', ['-e', '0'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let pkg;
let project;
let server;
let url;
const alertServers = [];
let alertPorts = [];
let mriAlerts = null;

before(async () => {
  // a user's project: the tarball and the ruby.wasm packages (from npm's
  // cache) installed by npm, under a path with spaces and a '#'
  pkg = installPackage({ app: 'hosts # my app' });
  pkg.npmInstall('@ruby/wasm-wasi', '@ruby/4.0-wasm-wasi');
  project = pkg.dir;
  // (installed, not linked: the package's folder is a real one of the project)
  assert.equal(lstatSync(join(project, 'node_modules/net-http-wasm')).isSymbolicLink(), false);
  for (const f of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, f), join(project, f));
  server = http.createServer((req, res) => {
    res.setHeader('X-Server', 'hosts');
    res.end(`hello ${req.method} ${req.url}`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/from-ruby`;
  for (const code of ALERTS) {
    // answers the ClientHello with a fatal alert, then closes
    const s = net.createServer((c) => {
      c.on('error', () => {});
      c.once('data', () => c.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, code])));
    });
    await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
    alertServers.push(s);
  }
  alertPorts = alertServers.map((s) => s.address().port);
  if (haveRuby) {
    const script = `require 'net/http'; ${JSON.stringify(alertPorts)}.each { |port| begin; Net::HTTP.start('127.0.0.1', port, use_ssl: true, verify_mode: OpenSSL::SSL::VERIFY_NONE, open_timeout: 5) { }; puts 'connected'; rescue => e; puts "#{e.class}: #{e.message}"; end }`;
    mriAlerts = await new Promise((resolve, reject) => {
      execFile('ruby', ['-e', script], (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n').filter(Boolean))));
    });
  }
});

after(async () => {
  await new Promise((resolve) => server.close(resolve));
  for (const s of alertServers) await new Promise((resolve) => s.close(resolve));
  pkg?.remove();
});

function run(bin, args, script, extra = []) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, NO_COLOR: '1', NETHTTP_ALERT_PORTS: JSON.stringify(alertPorts) };
    execFile(bin, [...args, script, ...extra], { cwd: project, timeout: 600000, env }, (err, stdout, stderr) => {
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
  test(`${name}: createRubyVM, a GET on the waiting and the blocking transport, TLS alerts as MRI words them, nothing printed`, { skip, timeout: 660000 }, async () => {
    const { stdout, stderr } = await run(bin, args, 'vm.mjs', [url]);
    const line = '4.0.0 200 hosts hello GET /from-ruby';
    const { alerts, ...rest } = JSON.parse(stdout);
    assert.deepEqual(rest, { ruby: '4.0', waiting: line, blocking: line, left: [] });
    assert.equal(stderr, '');
    assert.equal(alerts.length, ALERTS.length);
    if (mriAlerts) assert.deepEqual(alerts, mriAlerts);
    else for (const a of alerts) assert.match(a, /^OpenSSL::SSL::SSLError: SSL_connect returned=1 errno=0 peeraddr=127\.0\.0\.1:\d+ state=error: /);
  });
}
