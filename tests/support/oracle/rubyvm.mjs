// Boots MRI (ruby.wasm 4.0 or 3.4; 3.3, 3.2 or head too) inside Node and runs oracle cases in it.
//
//   import { runCases } from './rubyvm.mjs';
//   const results = await runCases('4.0', cases);
//
// The VM sees this folder as /oracle (stubs/ holds the stand-ins for the
// `socket` and `io/wait` extensions that ruby.wasm lacks, runner.rb the Ruby
// side) and a private temporary folder as /io, through which each batch of
// cases goes in and its results come out as JSON files: one eval per batch.
//
// ruby.wasm 3.4.1 leaks on non-local exits (Net::BufferedIO#write does one per
// call) and breaks after a few thousand; each also costs ~3.6 ms there.  The
// runner therefore hands exec a plain write sink on 3.4 (see WriteSink in
// runner.rb), and a 3.4 VM is still replaced every SAFE_34 cases.  A VM that
// reports itself broken (or traps) is replaced too, and the batch goes on from
// the case it broke on, in the fresh VM.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSIONS, ALL_VERSIONS, PROFILE_OF, versionList, bootVM as bootRubyVM } from '../rubywasm.mjs';

const here = dirname(fileURLToPath(import.meta.url));

export { VERSIONS, ALL_VERSIONS, PROFILE_OF };
// The VMs the differential tests compare with: one per profile by default
// ('4.0', '3.4'); NETHTTP_ORACLE_VERSIONS=3.2,3.3,head runs the same cases
// through those, each compared with the codec under the profile it picks
// (PROFILE_OF).
export const ORACLE_VERSIONS = versionList(process.env.NETHTTP_ORACLE_VERSIONS, ['4.0', '3.4'], 'NETHTTP_ORACLE_VERSIONS');
// The VMs older than 4.0 leak on non-local exits; they are replaced every SAFE_34 cases.
export const leaky = (version) => version !== '4.0' && version !== 'head';
const SAFE_34 = Number(process.env.NETHTTP_RUBY34_CASES_PER_VM || 3000);
// Cases per eval.  ruby.wasm gets much slower when one eval runs thousands of
// cases (6000 in one eval: 70 s on 3.4; in evals of 200: under 2 s).
const BATCH = 200;
const DEBUG = !!process.env.NETHTTP_ORACLE_DEBUG;

const live = new Map(); // version -> { vm, io, used }
const tempDirs = new Set();

/** Boots a fresh VM with net/http loaded and the runner defined. */
export async function bootVM(version) {
  if (!ALL_VERSIONS.includes(version)) throw new Error(`unknown Ruby version ${version} (known: ${ALL_VERSIONS.join(', ')})`);
  const io = mkdtempSync(join(tmpdir(), `nethttp-oracle-${version}-`));
  tempDirs.add(io);
  const vm = await bootRubyVM(version, { '/oracle': here, '/io': io });
  vm.eval(`$VERBOSE = nil
$LOAD_PATH.unshift '/oracle/stubs'
load '/oracle/runner.rb'
NetHttpOracle.use_buffered_io = true if ${process.env.NETHTTP_ORACLE_BUFFEREDIO === '1'}
nil`);
  return { vm, io, used: 0, version };
}

/** Drops the pooled VM of `version` (a fresh one is booted when next needed). */
export function dropVM(version) {
  const v = live.get(version);
  if (!v) return;
  live.delete(version);
  try { rmSync(v.io, { recursive: true, force: true }); } catch {}
  tempDirs.delete(v.io);
}

/**
 * The pooled VM of `version`: one per version, shared by every oracle here
 * (runner.rb's cases and response_runner.rb's). A 3.4 VM is replaced before
 * `need` more cases would take it past `limit` (what the caller's cases can
 * safely run in one VM).
 */
export async function vmFor(version, need, limit = SAFE_34) {
  let v = live.get(version);
  if (v && leaky(version) && v.used + need > limit) {
    dropVM(version);
    v = undefined;
  }
  if (!v) {
    v = await bootVM(version);
    live.set(version, v);
  }
  return v;
}

function runBatch(v, cases) {
  const inPath = join(v.io, 'in.json');
  const outPath = join(v.io, 'out.json');
  writeFileSync(inPath, JSON.stringify(cases));
  v.vm.eval(`NetHttpOracle.run_file('/io/in.json', '/io/out.json')`);
  v.used += cases.length;
  return JSON.parse(readFileSync(outPath, 'utf8'));
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Ruby cannot receive a lone surrogate as a String: such a case compares nothing. */
function checkCase(c) {
  const walk = (v) => {
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) throw new Error(`case ${c.id} holds a lone surrogate; Ruby strings cannot`);
    } else if (v && typeof v === 'object') {
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(c);
}

/**
 * Runs cases through MRI `version` ('4.0' or '3.4'); returns one result per
 * case, in order.  A case whose "profile" differs from version is still run
 * on `version` (the caller groups by profile).
 */
export async function runCases(version, cases) {
  cases.forEach(checkCase);
  const results = [];
  let i = 0;
  let retriedAt = -1;
  while (i < cases.length) {
    const size = Math.min(BATCH, cases.length - i);
    const t0 = DEBUG ? Date.now() : 0;
    const v = await vmFor(version, size);
    const t1 = DEBUG ? Date.now() : 0;
    let out;
    try {
      out = runBatch(v, cases.slice(i, i + size));
      if (DEBUG) console.error(`ruby ${version}: ${size} cases from ${i}: vm ${t1 - t0} ms, run ${Date.now() - t1} ms`);
    } catch (e) {
      // A wasm trap means the VM itself died: treat it like a broken VM.  A Ruby
      // exception escaping the runner is a bug in the oracle: fail loudly.
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      out = [{ broken: `${e.message}` }];
    }
    const last = out[out.length - 1];
    if (last && last.broken !== undefined) {
      out.pop();
      results.push(...out);
      i += out.length;
      dropVM(version);
      if (retriedAt === i) {
        // A fresh VM breaks on the same case: report it as the case's result.
        results.push({ oracleBroken: last.broken });
        i += 1;
      } else {
        retriedAt = i;
      }
      continue;
    }
    results.push(...out);
    i += out.length;
  }
  return results;
}

/** Groups cases by profile, runs each group on its Ruby, returns results in case order. */
export async function runByProfile(cases) {
  const results = new Array(cases.length);
  for (const version of ['4.0', '3.4', 'head']) {
    const idx = [];
    cases.forEach((c, j) => { if ((c.profile || '4.0') === version) idx.push(j); });
    if (!idx.length) continue;
    const out = await runCases(version, idx.map((j) => cases[j]));
    idx.forEach((j, k) => { results[j] = out[k]; });
  }
  const other = cases.findIndex((c, j) => results[j] === undefined);
  if (other >= 0) throw new Error(`case ${other} has unknown profile ${cases[other].profile}`);
  return results;
}

/**
 * The cases of the profile `version` picks (PROFILE_OF), run on `version`:
 * { cases, results } in case order.
 */
export async function runOnVersion(version, cases) {
  if (!ALL_VERSIONS.includes(version)) throw new Error(`unknown Ruby version ${version} (known: ${ALL_VERSIONS.join(', ')})`);
  const sel = cases.filter((c) => (c.profile || '4.0') === PROFILE_OF[version]);
  return { cases: sel, results: await runCases(version, sel) };
}

/** Releases the cached VMs (they are garbage then) and their temporary folders. */
export function shutdown() {
  for (const version of [...live.keys()]) dropVM(version);
  for (const d of tempDirs) { try { rmSync(d, { recursive: true, force: true }); } catch {} }
  tempDirs.clear();
}

process.on('exit', () => {
  for (const d of tempDirs) { try { rmSync(d, { recursive: true, force: true }); } catch {} }
});
