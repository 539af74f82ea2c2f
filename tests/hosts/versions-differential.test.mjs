// The recorded differential cases (tests/fixtures/cases, the response cases
// of tests/support/oracle/response.mjs) run through the own net/http of
// ruby.wasm 3.2, 3.3 and head, each compared with the codec under the
// profile createRubyVM gives that version (3.2 and 3.3: '3.4'; head: 'head').
//
// 3.2 and 3.3 bundle net-http 0.4.1 with the Ruby and uri of their day:
// request bytes, fields and parsed responses are the same as the codec's;
// only messages that Ruby itself or uri words differ, and the test maps
// those words (ODD_WORDS) before comparing, so any other difference fails.
// head's net/http (VERSION "0.9.1", newer than 4.0's) checks field names and
// sizes and the response head's size as 4.0's does not: every '4.0' case
// and every 'head' case runs through it and must give what the codec gives
// under 'head', word for word.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { loadCaseFiles } from '../support/oracle/cases.mjs';
import { runOnVersion, PROFILE_OF, shutdown } from '../support/oracle/rubyvm.mjs';
import { runOurs } from '../support/oracle/ours.mjs';
import { builds } from '../support/builds.mjs';
import { loadResponseCases, runResponseCases, runnerCase, oursOneShot, shutdownResponseVMs } from '../support/oracle/response.mjs';
import { bindResponse } from '../../js/response-parser.mjs';
import { NetHttpError } from '../../js/errors.mjs';
import { rubyWasmInstalled as installed } from '../support/rubywasm.mjs';

// Ruby 3.2/3.3 and uri 0.12/0.13 words → Ruby 3.4's
const ODD_WORDS = [
  [/^bad URI\(is not URI\?\)/, 'bad URI (is not URI?)'],
  [/undefined method `([^']*)' for nil(:NilClass)?/, "undefined method '$1' for nil"],
  // Encoding::BINARY's name in messages, "BINARY (ASCII-8BIT)" since 3.4
  [/(?<!\()\bASCII-8BIT\b(?!\))/g, 'BINARY (ASCII-8BIT)'],
];
const reword = (v) => {
  if (typeof v === 'string') return ODD_WORDS.reduce((s, [re, to]) => s.replace(re, to), v);
  if (Array.isArray(v)) return v.map(reword);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reword(x)]));
  return v;
};

const build = builds[0];
const responseApi = { ...bindResponse(build.api.codec), NetHttpError, codec: build.api.codec };

/** Each case whose result differs: id → [the VM's, ours]. head runs the
 * '4.0' cases as well as its own. */
async function differences(ruby) {
  const request = new Map();
  let all = loadCaseFiles().flatMap((f) => f.cases);
  if (PROFILE_OF[ruby] === 'head') all = all.filter((c) => c.profile === '4.0' || c.profile === 'head').map((c) => ({ ...c, profile: 'head' }));
  const { cases, results } = await runOnVersion(ruby, all);
  assert.ok(cases.length > 1000, `${cases.length} request cases`);
  cases.forEach((c, i) => {
    const ours = runOurs(build.api, c);
    if (!isDeepStrictEqual(ours, results[i])) request.set(c.id, [results[i], ours]);
  });
  shutdown();
  const response = new Map();
  const rc = loadResponseCases().flatMap((f) => f.cases).filter((c) => c.oracle !== 'native');
  assert.ok(rc.length > 400, `${rc.length} response cases`);
  const got = await runResponseCases(ruby, rc.map(runnerCase));
  rc.forEach((c, i) => {
    const ours = oursOneShot(responseApi, c, PROFILE_OF[ruby]);
    if (!isDeepStrictEqual(ours, got[i])) response.set(c.id, [got[i], ours]);
  });
  shutdownResponseVMs();
  return { request, response };
}

after(() => {
  shutdown();
  shutdownResponseVMs();
});

for (const ruby of ['3.2', '3.3']) {
  const skip = installed(ruby) ? false : `@ruby/${ruby}-wasm-wasi is not installed`;
  test(`ruby.wasm ${ruby}'s own net/http against the codec's '3.4' profile: the same bytes, fields and errors (Ruby's older words mapped)`, { skip, timeout: 300000 }, async () => {
    const { request, response } = await differences(ruby);
    for (const [kind, diffs] of [['request', request], ['response', response]]) {
      for (const [id, [vm, ours]] of diffs) {
        assert.deepEqual(reword(vm), ours, `${kind} case ${id}`);
      }
    }
    // the mapping is needed: these Rubies do word some messages otherwise
    assert.ok(request.size > 0, 'no request case differs before mapping');
  });
}

test("ruby.wasm head's own net/http against the codec's 'head' profile: the same bytes, fields and errors", { skip: installed('head') ? false : '@ruby/head-wasm-wasi is not installed', timeout: 300000 }, async () => {
  const { request, response } = await differences('head');
  for (const [kind, diffs] of [['request', request], ['response', response]]) {
    for (const [id, [vm, ours]] of diffs) assert.deepEqual(ours, vm, `${kind} case ${id}`);
  }
});
