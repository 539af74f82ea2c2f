// Differential tests: every case in tests/fixtures/cases/*.json goes through MRI
// (ruby.wasm 4.0 or 3.4, per the case's profile) and through each of our
// builds, and the results must be identical: request bytes, form strings,
// header pairs, and errors (Ruby exception class, message, failing step).
//
// MRI's results are also recorded in tests/fixtures/cases/<name>.expected.json
// (node tests/support/oracle/record.mjs).  Ours must match both; a live MRI result
// that differs from the recorded one fails the "oracle" subtest, since it
// means the oracle itself changed.
//
// NETHTTP_LIVE_RUBY=0 skips the live MRI run and compares with the recorded
// results only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCaseFiles, loadExpected } from '../support/oracle/cases.mjs';
import { runByProfile, shutdown } from '../support/oracle/rubyvm.mjs';
import { runOurs } from '../support/oracle/ours.mjs';
import { builds } from '../support/builds.mjs';
import { mismatches, describe } from '../support/oracle/report.mjs';

const LIVE = process.env.NETHTTP_LIVE_RUBY !== '0';
const files = loadCaseFiles();

// One Ruby run for the whole process, shared by every build.
let liveAll = null;
if (LIVE) {
  const all = files.flatMap((f) => f.cases);
  const results = await runByProfile(all);
  shutdown();
  liveAll = new Map(all.map((c, i) => [c.id, results[i]]));
}

for (const { name, cases } of files) {
  const expected = loadExpected(name);
  const profiles = [...new Set(cases.map((c) => c.profile))];
  for (const profile of profiles) {
    const sel = cases.filter((c) => c.profile === profile);
    const fixture = expected ? sel.map((c) => expected.get(c.id)) : null;
    const live = liveAll ? sel.map((c) => liveAll.get(c.id)) : null;

    test(`oracle ${name} @${profile}: live MRI matches tests/fixtures/cases/${name}.expected.json`, { skip: !LIVE && 'NETHTTP_LIVE_RUBY=0' }, () => {
      assert.ok(fixture, `no tests/fixtures/cases/${name}.expected.json: run node tests/support/oracle/record.mjs`);
      const broken = live.filter((r) => r && r.oracleBroken !== undefined).length;
      assert.equal(broken, 0, `${broken} cases broke the Ruby VM`);
      const bad = mismatches(fixture, live);
      assert.ok(bad.length === 0, `MRI output changed (re-record if intended):\n${describe(sel, bad, fixture, live, { expectedLabel: 'recorded', gotLabel: 'live MRI' })}`);
    });

    for (const build of builds) {
      test(`${build.name} ${name} @${profile}: ${sel.length} cases match MRI`, () => {
        const ours = sel.map((c) => runOurs(build.api, c));
        const problems = [];
        if (live) {
          const bad = mismatches(live, ours);
          if (bad.length) problems.push(`against live MRI: ${describe(sel, bad, live, ours, { gotLabel: build.name })}`);
        }
        if (fixture) {
          const bad = mismatches(fixture, ours);
          if (bad.length) problems.push(`against recorded MRI: ${describe(sel, bad, fixture, ours, { expectedLabel: 'recorded', gotLabel: build.name })}`);
        } else {
          problems.push(`no tests/fixtures/cases/${name}.expected.json: run node tests/support/oracle/record.mjs`);
        }
        assert.ok(problems.length === 0, problems.join('\n\n'));
      });
    }
  }
}
