// ruby.wasm 3.2, 3.3 and head (Ruby 4.1), as createRubyVM({ ruby }) loads
// them: each picks the profile of its net-http (3.2 and 3.3 bundle net-http
// 0.4.1, whose messages are 3.4's; head bundles 4.0's 0.9.1 with newer
// checks) and does a GET on both transports; where head's net/http raises an
// error of its own (a response head over 1 MiB, a response field value over
// 64 KiB; a request field value over 64 KiB or a name over 1 KiB), the codec
// (profile 'head') raises the same error as head's own code
// (NetHttpWasm.codec = false) in the same VM; threads that each
// wait many times run to their end. Each VM runs in a
// process of its own, so that the blocking transport's server (this
// file's) can answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rubyWasmInstalled as installed } from '../support/rubywasm.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// ruby, RUBY_VERSION's start, the profile, net-http
const VERSIONS = [
  ['3.2', '3.2.', '3.4', '0.4.1'],
  ['3.3', '3.3.', '3.4', '0.4.1'],
  ['head', '4.1.', 'head', '0.9.1'],
];
const LIMIT = ['NetHttpWasm::LimitError', 'the response head exceeds the limit of 1048576 bytes'];
const TOO_LARGE = ['Net::HTTPBadResponse', 'response header too large'];
const LONG_NAME = ['ArgumentError', `too long (1100 bytes) header: "${'X'.repeat(30)}"...`];

let server;
let base;

before(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/long-value') {
      res.writeHead(200, { 'X-Long': 'v'.repeat(70000) });
      res.end('long');
      return;
    }
    if (req.url === '/big-head') {
      // 28 fields of 40 KiB: 1.1 MiB of header lines
      const fields = {};
      for (let i = 0; i < 28; i++) fields[`X-Big-${i}`] = 'b'.repeat(40 * 1024);
      res.writeHead(200, fields);
      res.end('big');
      return;
    }
    res.end(`ok ${req.method}`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

function runVersion(ruby) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(ROOT, 'tests/support/hosts/versions.mjs'), ruby, base], { cwd: ROOT, timeout: 300000 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { message: `${err.message}\n${stderr}` }));
      else resolve({ out: JSON.parse(stdout), stderr });
    });
  });
}

for (const [ruby, version, profile, netHttp] of VERSIONS) {
  const skip = installed(ruby) ? false : `@ruby/${ruby}-wasm-wasi is not installed`;
  test(`ruby.wasm ${ruby}: profile '${profile}', a GET on both transports, errors as its own net/http raises them`, { skip, timeout: 320000 }, async () => {
    const { out, stderr } = await runVersion(ruby);
    assert.equal(stderr, '');
    for (const transport of ['waiting', 'blocking']) {
      const r = out[transport];
      assert.ok(r.version.startsWith(version), `${transport}: RUBY_VERSION ${r.version}`);
      assert.equal(r.net_http, netHttp, transport);
      assert.equal(r.profile, profile, transport);
      assert.deepEqual(r.get, ['200', 'ok GET'], transport);
      assert.deepEqual(r.threads, { 'ok GET': 20 }, transport);
    }
    const w = out.waiting;
    const b = out.blocking;
    // [through the codec, through net/http's own code]
    if (ruby === 'head') {
      assert.deepEqual(w.big_head, [TOO_LARGE]);
      assert.deepEqual(b.big_head, [TOO_LARGE, TOO_LARGE]);
      const longResponse = ['ArgumentError', 'header X-Long has too long field value: 70000 bytes (limit 65536)'];
      assert.deepEqual(w.long_response_value, [longResponse]);
      assert.deepEqual(b.long_response_value, [longResponse, longResponse]);
      const longValue = ['ArgumentError', 'header X-Long has too long field value: 70000 bytes (limit 65536)'];
      assert.deepEqual(b.long_value, [longValue, longValue]);
    } else {
      // net-http 0.4.1 reads any head, which the codec's bound refuses
      assert.deepEqual(w.big_head, [LIMIT]);
      assert.deepEqual(b.big_head, [LIMIT, '200']);
      assert.deepEqual(w.long_response_value, ['200']);
      assert.deepEqual(b.long_response_value, ['200', '200']);
      // net-http 0.4.1 refuses a long field value too, in words of its own
      const longValue = ['ArgumentError', 'header X-Long has too long field value: 70000'];
      assert.deepEqual(b.long_value, [longValue, longValue]);
    }
    assert.deepEqual(b.long_name, [LONG_NAME, LONG_NAME]);
  });
}
