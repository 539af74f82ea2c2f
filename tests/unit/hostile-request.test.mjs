// Hostile input on the request side: what MRI does, and what strict mode adds.
// (MRI's own outcomes for these shapes are pinned by tests/fixtures/cases/headers.json,
// request_line.json and initheader.json in the differential suite.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builds } from '../support/builds.mjs';

const text = (b) => Buffer.from(b).toString('latin1');

for (const { name, api } of builds) {
  const { Request, URI } = api;

  test(`${name}: CR/LF in the method, path or version is refused as MRI refuses it`, () => {
    for (const [m, p, v] of [['GET\r\nX: y', '/', '1.1'], ['GET', '/a\nb', '1.1'], ['GET', '/', '1.1\r\nX: y']]) {
      assert.throws(() => new Request(m, p).toBytes(v), { rubyClass: 'ArgumentError', message: 'A Request-Line must not contain CR or LF' });
    }
  });

  test(`${name}: a header name with CR/LF goes through by default (as in MRI) and is refused in strict mode`, () => {
    const lax = new Request('GET', '/');
    lax.set('X\r\nInjected', 'v');
    assert.match(text(lax.toBytes()), /\r\nX\r\ninjected: v\r\n/);
    const strict = new Request('GET', '/', null, { strict: true });
    assert.throws(() => strict.set('X\r\nInjected', 'v'), { rubyClass: 'ArgumentError', message: /strict: header name/ });
    assert.throws(() => strict.set('X-A', 'a\u0000b'), { message: /strict: header value/ });
    assert.throws(() => new Request('GE T', '/', null, { strict: true }), { message: /strict: method/ });
    assert.throws(() => new Request('GET', { path: '/a b' }, null, { strict: true }).toBytes(), { message: /strict: request target/ });
    assert.throws(() => new Request('GET', '/', { 'Bad Name': 'v' }, { strict: true }), { message: /strict: header name/ });
    const ok = new Request('POST', URI('http://h/p'), { 'X-Ok': 'v' }, { strict: true });
    ok.setFormData({ a: 'b' });
    assert.match(text(ok.toBytes()), /^POST \/p HTTP\/1.1\r\n/);
  });

  test(`${name}: NUL and other control bytes in values are written as MRI writes them`, () => {
    const r = new Request('GET', '/');
    r.set('X-A', 'a\u0000b\u0001');
    assert.ok(text(r.toBytes()).includes('X-A: a\u0000b\u0001\r\n'));
  });

  test(`${name}: a lone surrogate from a JS string becomes U+FFFD`, () => {
    const r = new Request('GET', '/');
    r.set('X-A', 'a\ud800b');
    assert.ok(Buffer.from(r.toBytes()).includes(Buffer.from('X-A: a\uFFFDb\r\n')));
    assert.equal(api.encodeWwwFormComponent('\udc00'), '%EF%BF%BD');
  });

  test(`${name}: 100,000 fields and a 1 MiB value are handled in linear time`, () => {
    const r = new Request('GET', '/');
    for (let i = 0; i < 100_000; i++) r.addField(`x-f${i % 50_000}`, 'v');
    r.set('x-big', 'v'.repeat(1 << 20));
    const t0 = performance.now();
    const out = r.toBytes();
    const ms = performance.now() - t0;
    assert.equal(text(out).split('\r\n').length, 50_000 + 1 /* big */ + 3 /* defaults */ + 1 /* request line */ + 2);
    assert.ok(ms < 5000, `took ${ms} ms`);
  });

  test(`${name}: initheader limits: keys over 1024 bytes and values over 65536 bytes`, () => {
    assert.throws(() => new Request('GET', '/', { ['k'.repeat(1025)]: 'v' }), { rubyClass: 'ArgumentError', message: /^too long \(1025 bytes\) header: "k{30}"\.\.\.$/ });
    assert.throws(() => new Request('GET', '/', { K: 'v'.repeat(65537) }), { rubyClass: 'ArgumentError', message: 'header K has too long field value: 65537' });
  });
}

// CR, LF and NUL injected into every part of a request, in both profiles:
// our bytes and errors must be MRI's (ruby.wasm, live).
test('injected CR, LF and NUL: every build matches MRI in 4.0 and 3.4', { skip: process.env.NETHTTP_SKIP_LIVE === '1' && 'NETHTTP_SKIP_LIVE=1' }, async () => {
  const { runByProfile, shutdown } = await import('../support/oracle/rubyvm.mjs');
  const { runOurs } = await import('../support/oracle/ours.mjs');
  const bad = ['\r', '\n', '\r\n', '\u0000', '\r\nX-Injected: 1', '\u0000\r\n'];
  const cases = [];
  let n = 0;
  const add = (c) => {
    for (const profile of ['4.0', '3.4']) cases.push({ id: `inject-${n}@${profile}`, profile, op: 'request', version: '1.1', ops: [], init: null, ...c });
    n++;
  };
  for (const b of bad) {
    add({ method: `GET${b}`, target: { path: '/' } });
    add({ method: `PO${b}ST`, target: { path: '/' } });
    add({ method: 'GET', target: { path: `/a${b}b` } });
    add({ method: 'GET', target: { uri: `http://h/a${b}b` } });
    add({ method: 'GET', target: { path: '/' }, version: `1.1${b}` });
    add({ method: 'GET', target: { path: '/' }, init: [[`X${b}A`, 'v']] });
    add({ method: 'GET', target: { path: '/' }, init: [['X-A', `v${b}w`]] });
    add({ method: 'GET', target: { path: '/' }, ops: [['set', `X${b}A`, 'v']] });
    add({ method: 'GET', target: { path: '/' }, ops: [['add', 'X-A', `v${b}w`]] });
    add({ method: 'POST', target: { path: '/' }, ops: [['form', [[`k${b}`, `v${b}`]], null]] });
    add({ method: 'POST', target: { path: '/' }, ops: [['body', `a${b}b`]] });
  }
  const mri = await runByProfile(cases);
  shutdown();
  const raised = mri.filter((r) => r.error).length;
  assert.ok(raised > 0 && raised < cases.length, 'some injections raise in MRI and some go through');
  for (const { name, api } of builds) {
    const diffs = [];
    cases.forEach((c, i) => {
      const got = runOurs(api, c);
      if (JSON.stringify(got) !== JSON.stringify(mri[i])) diffs.push(`${c.id} ${JSON.stringify(c)}\n  MRI  ${JSON.stringify(mri[i])}\n  ours ${JSON.stringify(got)}`);
    });
    assert.equal(diffs.length, 0, `${name}: ${diffs.length} of ${cases.length} differ\n${diffs.slice(0, 5).join('\n')}`);
  }
});
