#!/usr/bin/env node
// Runs every case file in tests/fixtures/cases/ through MRI (ruby.wasm 4.0 / 3.4, per
// case profile) and writes the results next to it as <name>.expected.json.
// These fixtures are committed: tests/differential/recorded.test.mjs checks both that
// our builds match them and that the live MRI still produces them.
//
//   node tests/support/oracle/record.mjs [name ...]
import { loadCaseFiles, writeExpected } from './cases.mjs';
import { runByProfile, shutdown } from './rubyvm.mjs';

const only = process.argv.slice(2);
const t0 = Date.now();
let total = 0;
for (const { name, cases } of loadCaseFiles()) {
  if (only.length && !only.includes(name)) continue;
  const results = await runByProfile(cases);
  const broken = results.filter((r) => r.oracleBroken !== undefined).length;
  if (broken) console.error(`${name}: ${broken} cases broke the Ruby VM`);
  writeExpected(name, cases, results);
  total += cases.length;
  const errors = results.filter((r) => r.error).length;
  console.log(`${name}: ${cases.length} cases (${errors} raise in MRI)`);
}
shutdown();
console.log(`recorded ${total} cases in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
