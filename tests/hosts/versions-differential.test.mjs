// The recorded differential cases (tests/fixtures/cases, the response cases
// of tests/support/oracle/response.mjs) run through the own net/http of
// ruby.wasm 3.2, 3.3 and head, each compared with the codec under the
// profile createRubyVM gives that version (3.2 and 3.3: '3.4'; head: '4.0').
//
// 3.2 and 3.3 bundle net-http 0.4.1 with the Ruby and uri of their day:
// request bytes, fields and parsed responses are the same as the codec's;
// only messages that Ruby itself or uri words differ, and the test maps
// those words (ODD_WORDS) before comparing, so any other difference fails.
// head's net/http (VERSION "0.9.1", newer than 4.0's) checks fields that
// 4.0's does not: HEAD_CHECKS lists the cases where it raises and the codec
// (the '4.0' profile) does not, each with its message, as a run showed them
// on 2026-12-02. Inside a head VM the request side of these checks runs in
// head's own Ruby (Net::HTTPHeader#[]= and initialize_http_header) before
// the codec writes anything; the response side does not (see
// docs/fidelity.md).
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

const CTL = 'header field name cannot include control characters or colon: ';
const HEAD_CHECKS = {
  request: {
    'headers-056@4.0': 'header X-A has too long field value: 70000 bytes (limit 65536)',
    'headers-057@4.0': /^too long \(2000 bytes\) header: "k+"\.\.\.$/,
    'headers-089@4.0': CTL,
    'headers-090@4.0': CTL,
    'headers-091@4.0': CTL,
    'helpers-247@4.0': 'header field value cannot include CR/LF',
    'helpers-248@4.0': 'header field value cannot include CR/LF',
    // 4.0's words, then " bytes (limit 65536)"
    'initheader-045@4.0': / bytes \(limit 65536\)$/,
    'initheader-046@4.0': / bytes \(limit 65536\)$/,
    'initheader-049@4.0': / bytes \(limit 65536\)$/,
    'initheader-050@4.0': / bytes \(limit 65536\)$/,
  },
  response: {
    'headers-023-hdr': CTL,
    'headers-029-hdr': CTL,
    'headers-030-hdr': CTL,
    'hostile-020-bare-cr-name': CTL,
    'hostile-023-nul-in-name': CTL,
    'headers-058-long-value': /too long field value/,
    'headers-059-long-name': /^too long \(\d+ bytes\) header/,
  },
};

const build = builds[0];
const responseApi = { ...bindResponse(build.api.codec), NetHttpError, codec: build.api.codec };

/** Each case whose result differs: id → [the VM's, ours]. */
async function differences(ruby) {
  const request = new Map();
  const all = loadCaseFiles().flatMap((f) => f.cases);
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

test("ruby.wasm head's own net/http against the codec's '4.0' profile: differs only where head checks fields that 4.0 does not", { skip: installed('head') ? false : '@ruby/head-wasm-wasi is not installed', timeout: 300000 }, async () => {
  const { request, response } = await differences('head');
  for (const [kind, diffs] of [['request', request], ['response', response]]) {
    const known = HEAD_CHECKS[kind];
    assert.deepEqual([...diffs.keys()].sort(), Object.keys(known).sort(), `${kind} cases that differ`);
    for (const [id, [vm]] of diffs) {
      assert.equal(vm.error?.class, 'ArgumentError', `${kind} case ${id}: ${JSON.stringify(vm).slice(0, 200)}`);
      const want = known[id];
      if (want instanceof RegExp) assert.match(vm.error.message, want, `${kind} case ${id}`);
      else assert.ok(vm.error.message.startsWith(want), `${kind} case ${id}: ${vm.error.message}`);
    }
  }
});
