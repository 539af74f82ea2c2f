// The differential fuzzer (tests/support/oracle/fuzz.mjs): its shrinker, and a
// seeded sample run against ruby.wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { shrink } from '../support/oracle/fuzz.mjs';

test('the shrinker cuts a case down to what keeps the difference', async () => {
  const bytes = Buffer.from('xxxxHTTP/1.1 200 OK\r\nyyyy');
  const start = {
    pairs: [['aaaa', 'bbbb'], ['key~', 'v'], ['c', 'd']],
    body: { base64: bytes.toString('base64') },
    note: 'drop me',
    op: 'encode_www_form',
  };
  // "fails" while a '~' is in some pair and the bytes hold "200"
  const fails = (c) =>
    c.op === 'encode_www_form' &&
    Array.isArray(c.pairs) && c.pairs.some((p) => Array.isArray(p) && p.some((s) => typeof s === 'string' && s.includes('~'))) &&
    c.body && Buffer.from(c.body.base64, 'base64').includes('200');
  assert.ok(fails(start));
  const { value, calls } = await shrink(start, fails, { keep: (k) => k === 'op' });
  assert.deepEqual(value, { pairs: [['~']], body: { base64: Buffer.from('200').toString('base64') }, op: 'encode_www_form' });
  assert.ok(calls > 0 && calls <= 1500);
});

test('the shrinker stops at its budget', async () => {
  let n = 0;
  const { calls } = await shrink({ s: 'z'.repeat(5000) }, () => { n++; return false; }, { budget: 50 });
  assert.equal(calls, 50);
  assert.equal(n, 50);
});

test('a seeded sample of 900 codec and response cases matches ruby.wasm', { skip: process.env.NETHTTP_SKIP_LIVE === '1' && 'NETHTTP_SKIP_LIVE=1' }, () => {
  const script = fileURLToPath(new URL('../support/oracle/fuzz.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--cases', '900', '--seed', '424242', '--batch', '900'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const summary = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1));
  assert.equal(summary.cases, 900);
  assert.equal(summary.differences, 0);
  assert.equal(summary.oracleBroken, 0);
  assert.ok(summary.byOperation['response@4.0'] >= 300, 'responses are in the sample');
  assert.ok(summary.byOperation['request@4.0'] > 0 && summary.byOperation['request@3.4'] > 0, 'requests in both profiles');
});
