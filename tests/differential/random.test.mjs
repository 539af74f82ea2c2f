// Random differential tests: generate(seed, N) cases (tests/support/oracle/random.mjs)
// through MRI (ruby.wasm 4.0 / 3.4 per case profile) and through each build.
//
//   NETHTTP_RANDOM_SEED   seed (default below; printed either way)
//   NETHTTP_RANDOM_CASES  number of cases (default 2000)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from '../support/oracle/random.mjs';
import { runByProfile, shutdown } from '../support/oracle/rubyvm.mjs';
import { runOurs } from '../support/oracle/ours.mjs';
import { builds } from '../support/builds.mjs';
import { mismatches, describe } from '../support/oracle/report.mjs';

const DEFAULT_SEED = 20251130;
const seed = process.env.NETHTTP_RANDOM_SEED ? Number(process.env.NETHTTP_RANDOM_SEED) >>> 0 : DEFAULT_SEED;
const count = Number(process.env.NETHTTP_RANDOM_CASES || 2000);
console.log(`random differential cases: NETHTTP_RANDOM_SEED=${seed} NETHTTP_RANDOM_CASES=${count}`);

const cases = generate(seed, count);
const mri = await runByProfile(cases);
shutdown();

test(`oracle: MRI ran all ${count} random cases (seed ${seed})`, () => {
  const broken = mri.filter((r) => r.oracleBroken !== undefined).length;
  assert.equal(broken, 0, `${broken} cases broke the Ruby VM`);
  const odd = mri.filter((r) => JSON.stringify(r).includes('invalid_utf8_base64')).length;
  assert.equal(odd, 0, `${odd} results held strings that are not UTF-8`);
});

for (const profile of ['4.0', '3.4']) {
  const idx = cases.map((c, i) => (c.profile === profile ? i : -1)).filter((i) => i >= 0);
  const sel = idx.map((i) => cases[i]);
  const expected = idx.map((i) => mri[i]);
  for (const build of builds) {
    test(`${build.name} random @${profile}: ${sel.length} cases match MRI (seed ${seed})`, () => {
      const ours = sel.map((c) => runOurs(build.api, c));
      const bad = mismatches(expected, ours);
      assert.ok(bad.length === 0, `seed ${seed}: ${describe(sel, bad, expected, ours, { gotLabel: build.name })}`);
    });
  }
}
