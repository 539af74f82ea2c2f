// Reading the case files in tests/fixtures/cases/ and their recorded MRI results.
import { readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const casesDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'cases');

/** The ops that runner.rb / ours.mjs know (tests/fixtures/cases/ also holds response_*.json,
 * run by tests/support/oracle/response.mjs, with results of another shape). */
export const OPS = new Set(['request', 'encode_www_form', 'encode_www_form_component', 'decode_www_form',
  'decode_www_form_component', 'each_capitalized', 'capitalize', 'response_header']);

/** [{ name, cases }] for every tests/fixtures/cases/<name>.json whose cases are all of OPS, sorted by name. */
export function loadCaseFiles() {
  return readdirSync(casesDir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json') && !f.startsWith('response_'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.json'.length);
      const cases = JSON.parse(readFileSync(join(casesDir, f), 'utf8'));
      const seen = new Set();
      for (const c of cases) {
        if (!c.id || seen.has(c.id)) throw new Error(`${f}: missing or duplicate id ${c.id}`);
        if (!c.profile) throw new Error(`${f}: case ${c.id} has no profile`);
        seen.add(c.id);
      }
      return { name, cases };
    })
    .filter(({ cases }) => cases.every((c) => OPS.has(c.op)));
}

export const expectedPath = (name) => join(casesDir, `${name}.expected.json`);

/** Map id -> recorded result, or null when the file has no fixture. */
export function loadExpected(name) {
  const p = expectedPath(name);
  if (!existsSync(p)) return null;
  const m = new Map();
  for (const { id, result } of JSON.parse(readFileSync(p, 'utf8'))) m.set(id, result);
  return m;
}

/** One entry per line, so that a change in MRI's output shows as a small diff. */
export function writeExpected(name, cases, results) {
  const lines = cases.map((c, i) => JSON.stringify({ id: c.id, result: results[i] }));
  writeFileSync(expectedPath(name), `[\n${lines.join(',\n')}\n]\n`);
}
