// The pages of benchmarks/browser-page.mjs and browser-sync.mjs run in a
// Chromium no DevTools client drives (benchmarks/browser-bench.mjs
// runDetached): what the page reports comes back, its error is raised here,
// neither its profile folder nor its processes are left behind, and an
// isolated page is cross-origin isolated (the streamed Worker transport
// needs it).
//
// Needs Debian's `chromium` (skipped without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { skip } from '../support/chromium.mjs';
import { runDetached, median } from '../../benchmarks/browser-bench.mjs';

const profiles = () => readdirSync(tmpdir()).filter((n) => n.startsWith('nhw-chromium-')).sort();
const chromiums = () => {
  try {
    return execFileSync('pgrep', ['-f', 'nhw-chromium-'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
  } catch {
    return 0; // (pgrep: nothing found)
  }
};

test('runDetached: a page with no DevTools client reports its value, or its error, and leaves nothing behind', { skip, timeout: 120000 }, async () => {
  const before = profiles();
  const got = await runDetached(async ({ s }, { api }) => {
    const text = await (await fetch(`${api}/text?s=${s}`)).text();
    return { text, median: median([3, 1, 2]), automated: navigator.webdriver };
  }, { s: 'hi' }, { helpers: { median } });
  assert.deepEqual(got, { text: 'hi', median: 2, automated: false });
  await assert.rejects(runDetached(() => {
    throw new RangeError('no such thing');
  }, null), /in the page: RangeError: no such thing/);
  assert.deepEqual(profiles(), before);
  for (let i = 0; i < 50 && chromiums(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(chromiums(), 0);
});

test('runDetached with isolated: the page is cross-origin isolated (SharedArrayBuffer), and one without is not', { skip, timeout: 120000 }, async () => {
  const look = () => ({ isolated: crossOriginIsolated, shared: typeof SharedArrayBuffer === 'function' });
  assert.deepEqual(await runDetached(look, null, { isolated: true }), { isolated: true, shared: true });
  assert.deepEqual(await runDetached(look, null), { isolated: false, shared: false });
});
