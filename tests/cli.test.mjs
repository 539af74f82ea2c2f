// The command line: bin/net-http-wasm.mjs, and the packed package running it
// from a fresh install.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Request, URI, parseResponse } from '../js/index.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'net-http-wasm.mjs');
const cli = (args, input) => spawnSync(process.execPath, [bin, ...args], { input, encoding: 'latin1' });
const latin1 = (u8) => Buffer.from(u8).toString('latin1');

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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
