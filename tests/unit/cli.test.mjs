// The command line: bin/net-http-wasm.mjs, and the packed package running it
// from a fresh install.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Request, URI, parseResponse } from '../../js/index.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'net-http-wasm.mjs');
const cli = (args, input) => spawnSync(process.execPath, [bin, ...args], { input, encoding: 'latin1' });
const latin1 = (u8) => Buffer.from(u8).toString('latin1');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('request: headers and a multipart form with a file give the API\'s bytes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nhw-cli-'));
  try {
    const file = join(dir, 'photo.png');
    writeFileSync(file, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]));
    const r = cli(['request', 'POST', 'http://example.com:8080/up?x=1', '-H', 'X-Trace: abc', '-H', 'x-trace: def',
      '-F', 'name=Zoë', '-F', `file=@${file};type=image/png`, '--boundary', 'B0undary']);
    assert.equal(r.status, 0, r.stderr);
    const req = new Request('POST', URI('http://example.com:8080/up?x=1'));
    req.addField('X-Trace', 'abc').addField('x-trace', 'def');
    req.setForm([['name', 'Zoë'], ['file', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]), { filename: 'photo.png', contentType: 'image/png' }]],
      'multipart/form-data', { boundary: 'B0undary' });
    assert.equal(r.stdout, latin1(req.toBytes()));
    assert.match(r.stdout, /\r\nX-Trace: abc, def\r\n/);
    assert.match(r.stdout, /filename="photo.png"\r\nContent-Type: image\/png\r\n\r\n\x89PNG\xff\x00\r\n--B0undary--\r\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('request: -F fields without files are urlencoded; -d and --profile 3.4', () => {
  const r = cli(['request', 'post', 'http://h/p', '-F', 'a=1 2', '-F', 'b=~']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^POST \/p HTTP\/1\.1\r\n/);
  assert.match(r.stdout, /Content-Type: application\/x-www-form-urlencoded\r\nContent-Length: 11\r\n\r\na=1\+2&b=%7E$/);
  const d40 = cli(['request', 'PUT', 'http://h/p', '-d', 'raw']);
  const d34 = cli(['request', 'PUT', 'http://h/p', '-d', 'raw', '--profile', '3.4']);
  assert.doesNotMatch(d40.stdout, /Content-Type/);
  assert.match(d34.stdout, /Content-Length: 3\r\nContent-Type: application\/x-www-form-urlencoded\r\n\r\nraw$/);
});

test('response: what Net::HTTP reads, lenient and --strict, from stdin or a file', () => {
  const bytes = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\nSet-Cookie: a\r\nSet-Cookie: b\r\n\r\nhi!';
  const r = cli(['response'], bytes);
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  const res = parseResponse(Buffer.from(bytes, 'latin1'));
  assert.deepEqual(got.headers, res.headerEntries());
  assert.equal(got.className, 'Net::HTTPOK');
  assert.equal(got.body, 'hi');
  assert.equal(got.rest, '!');
  const s = cli(['response', '-', '--strict'], bytes);
  assert.equal(s.status, 1);
  assert.equal(s.stderr, 'Net::HTTPBadResponse: conflicting Content-Length values (strict)\n');
  const bad = cli(['response'], 'HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^ArgumentError: header field value cannot include CR\/LF\n$/);
});

test('forms, capitalize, errors and --help', () => {
  assert.equal(cli(['form', 'encode', 'q=a b', 'flag', 't=~']).stdout, 'q=a+b&flag&t=%7E\n');
  assert.deepEqual(JSON.parse(Buffer.from(cli(['form', 'decode', 'a=1;b=%E2%9C%93']).stdout, 'latin1').toString()), [['a', '1;b=✓']]);
  assert.equal(cli(['capitalize', 'content-type', 'x-']).stdout, 'Content-Type\nX\n');
  const e = cli(['request', 'GET', 'http://ex ample/']);
  assert.equal(e.status, 1);
  assert.equal(e.stderr, 'URI::InvalidURIError: bad URI (is not URI?): "http://ex ample/"\n');
  const f = cli(['request', 'GET', '/p', '-H', 'X: a\nb']);
  assert.equal(f.status, 1);
  assert.equal(f.stderr, 'ArgumentError: header field value cannot include CR/LF\n');
  const h = cli(['--help']);
  assert.equal(h.status, 0);
  assert.match(h.stdout, /^Usage: net-http-wasm <command>/);
  assert.equal(cli(['nope']).status, 2);
  assert.equal(cli(['request', 'GET', '/', '--profile', '3.5']).status, 2);
});

test('--version prints the package\'s version, before any command runs', () => {
  for (const args of [['--version'], ['request', 'GET', 'http://ex ample/', '--version']]) {
    const r = cli(args);
    assert.deepEqual([r.status, r.stdout, r.stderr], [0, `${version}\n`, ''], args.join(' '));
  }
  assert.match(version, /^\d+\.\d+\.\d+/);
  assert.match(cli(['--help']).stdout, /\n {2}--version {22}the package's version\n/);
});

test('options: = or a separate value, values that start with -, -- ends the options', () => {
  const joined = cli(['request', 'POST', 'http://h/p', '--header=X-A: 1', '-HX-B: 2', '--data=-1', '--http-version=1.0']);
  const apart = cli(['request', 'POST', 'http://h/p', '--header', 'X-A: 1', '-H', 'X-B: 2', '-d', '-1', '--http-version', '1.0']);
  assert.equal(joined.status, 0, joined.stderr);
  const req = new Request('POST', URI('http://h/p'));
  req.addField('X-A', '1').addField('X-B', '2');
  req.body = '-1';
  assert.equal(joined.stdout, latin1(req.toBytes('1.0')));
  assert.equal(apart.stdout, joined.stdout);
  assert.equal(cli(['capitalize', '--', '--profile', 'x-y']).stdout, '--Profile\nX-Y\n');
  assert.equal(cli(['form', 'encode', '--profile=3.4', 'a=~']).stdout, 'a=%7E\n');
});

test('usage errors: the reason, then the usage on stderr, exit status 2, nothing on stdout', () => {
  const cases = [
    [['request', 'GET', '/', '-H'], '-H needs a value'],
    [['request', 'GET', '/', '--boundary'], '--boundary needs a value'],
    [['response', '--method'], '--method needs a value'],
    [['request', 'GET', '/', '--frobnicate'], 'unknown option --frobnicate'],
    [['request', 'GET', '/', '--nope=1'], 'unknown option --nope'],
    [['request', 'GET', '/', '-Z'], 'unknown option -Z'],
    [['response', '--strict=yes'], '--strict takes no value'],
    [['request', 'GET', '/', '--strict'], '--strict is an option of response, not of request'],
    [['response', '-F', 'a=b'], '-F is an option of request, not of response'],
    [['form', 'encode', '--decode'], '--decode is an option of response, not of form'],
    [['request', 'GET'], 'request needs METHOD and URL'],
    [['request', 'GET', 'http://h/', 'X-A:', 'b'], 'request takes METHOD and URL, then options; unexpected X-A:'],
    [['request', 'GET', '/', '-H', 'no colon'], "-H wants 'Name: value', not no colon"],
    [['request', 'POST', '/', '-d', 'x', '-F', 'a=b'], 'use either -d or -F'],
    [['request', 'POST', '/', '-F', 'novalue'], '-F wants name=value, not novalue'],
    [['response', 'a.bin', 'b.bin'], 'response reads one FILE (or - for stdin); unexpected b.bin'],
    [['form'], 'form wants encode or decode'],
    [['form', 'decode', 'a', 'b'], 'form decode takes one string'],
    [['nope'], 'unknown command nope'],
    [['request', 'GET', '/', '--profile', '3.5'], '--profile must be 4.0, 3.4, head, not 3.5'],
  ];
  for (const [args, reason] of cases) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' '));
    assert.ok(r.stderr.startsWith(`${reason}\n\nUsage: net-http-wasm <command> [options]\n`), `${args.join(' ')}: ${r.stderr}`);
  }
  // no command: the usage on stdout, status 2
  const none = cli([]);
  assert.deepEqual([none.status, none.stderr], [2, '']);
  assert.match(none.stdout, /^Usage: net-http-wasm <command>/);
  // -h gives the usage whatever else the line holds (known options)
  const help = cli(['request', '--strict', '-h']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: net-http-wasm <command>/);
});

test('npm pack ships the CLI and it runs from a fresh install of the tarball', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nhw-pack-'));
  try {
    const npm = (args, cwd) => spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
    const p = npm(['pack', '--pack-destination', dir], root);
    assert.equal(p.status, 0, p.stderr);
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    const app = join(dir, 'app');
    spawnSync('mkdir', [app]);
    writeFileSync(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}\n');
    const i = npm(['install', '--offline', '--no-package-lock', join(dir, tgz)], app);
    assert.equal(i.status, 0, i.stderr);
    const x = spawnSync('npx', ['--offline', 'net-http-wasm', 'request', 'GET', 'http://example.com/'], { cwd: app, encoding: 'utf8' });
    assert.equal(x.status, 0, x.stderr);
    assert.equal(x.stdout, latin1(new Request('GET', URI('http://example.com/')).toBytes()));
    const y = spawnSync('npx', ['--offline', 'net-http-wasm', 'capitalize', 'www-authenticate'], { cwd: app, encoding: 'utf8' });
    assert.equal(y.stdout, 'Www-Authenticate\n');

    // the commands the command line's documentation shows (a file attached
    // with -F, a body from a file, a response from a file and from a pipe,
    // forms, names, an error), through the installed bin in a shell, as a
    // person types them (npm exec puts node_modules/.bin on PATH)
    writeFileSync(join(app, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    writeFileSync(join(app, 'body.json'), '{"a":1}');
    writeFileSync(join(app, 'reply.bin'), 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi');
    const sh = (line, input) => spawnSync('npm', ['exec', '--offline', '--', 'sh', '-c', line], { cwd: app, input, encoding: 'latin1' });
    const v = sh('net-http-wasm --version');
    assert.deepEqual([v.status, v.stdout], [0, `${version}\n`], v.stderr);
    const up = sh("net-http-wasm request POST http://example.com/up -H 'X-A: b' -F name=value -F file=@photo.png\\;type=image/png");
    assert.equal(up.status, 0, up.stderr);
    assert.match(up.stdout, /^POST \/up HTTP\/1\.1\r\n[^]*\r\nHost: example\.com\r\nX-A: b\r\nContent-Type: multipart\/form-data; boundary=/);
    assert.match(up.stdout, /name="file"; filename="photo.png"\r\nContent-Type: image\/png\r\n\r\n\x89PNG\r\n/);
    const put = sh('net-http-wasm request PUT http://example.com/p -d @body.json --profile 3.4');
    const want = new Request('PUT', URI('http://example.com/p'), null, { profile: '3.4' });
    want.body = '{"a":1}';
    assert.equal(put.stdout, latin1(want.toBytes()), put.stderr);
    const strict = sh('net-http-wasm response reply.bin --strict');
    assert.equal(strict.status, 0, strict.stderr);
    assert.deepEqual(JSON.parse(strict.stdout).body, 'hi');
    const piped = sh('cat reply.bin | net-http-wasm response --decode');
    assert.equal(piped.stdout, strict.stdout, piped.stderr);
    assert.equal(sh("net-http-wasm form encode 'q=a b' flag").stdout, 'q=a+b&flag\n');
    assert.equal(Buffer.from(sh("net-http-wasm form decode 'a=1&b=%E2%9C%93'").stdout, 'latin1').toString(), '[["a","1"],["b","✓"]]\n');
    assert.equal(sh('net-http-wasm capitalize content-type').stdout, 'Content-Type\n');
    const bad = sh("net-http-wasm request GET 'http://ex ample/'");
    assert.deepEqual([bad.status, bad.stderr], [1, 'URI::InvalidURIError: bad URI (is not URI?): "http://ex ample/"\n']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a reader that goes away ends the output quietly (| head)', () => {
  // more output than a pipe holds, read by a head that stops after 10 bytes
  const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${bin}" form encode $(seq -f 'k%g=v' 1 20000) | head -c 10`], { encoding: 'utf8' });
  assert.equal(r.stdout, 'k1=v&k2=v&');
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
});
