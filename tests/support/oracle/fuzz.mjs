// Differential fuzzing against MRI: seeded random cases (requests, URIs,
// forms, header names from random.mjs; responses from response.mjs) through
// ruby.wasm's own net/http and uri and through each build of ours. Any
// difference in bytes, values or error class and message is a failure; it is
// printed with a reproducer shrunk while the difference persists.
//
//   node tests/support/oracle/fuzz.mjs [--cases 100000] [--seed 1] [--batch 1500]
//                              [--kinds codec,response[,decode]] [--out summary.json]
//
// Every batch of --batch cases is shared out as codec cases (two shares, both
// profiles), responses (ruby.wasm 4.0 and, every fourth batch, 3.4) and,
// with `decode`, compressed bodies (the system ruby running ruby.wasm's
// net/http sources, as ruby.wasm's zlib traps past 1 KiB); each response is
// also fed to a ResponseParser cut at a random point. Exits 1 on a difference.
import { isDeepStrictEqual } from 'node:util';
import { writeFileSync } from 'node:fs';
import { generate } from './random.mjs';
import { prng } from '../prng.mjs';
import { runByProfile, shutdown } from './rubyvm.mjs';
import { runOurs } from './ours.mjs';
import { builds } from '../builds.mjs';
import {
  randomResponseCases, randomDecodeCases, runResponseCases, runnerCase, oursOneShot, oursIncremental, caseBytes,
  shutdownResponseVMs, haveNativeRuby,
} from './response.mjs';

/**
 * Shrinks `value` (JSON: arrays, objects, strings, numbers) while
 * `stillFails(candidate)` holds: drops array elements and object keys (but
 * not the top-level keys that `keep` names), cuts strings and byte strings
 * (`{ base64 }`) down by halves, then single characters. At most `budget`
 * calls.
 */
export async function shrink(value, stillFails, { budget = 1500, keep = () => false } = {}) {
  let best = value;
  let calls = 0;
  const attempt = async (cand) => {
    if (calls >= budget) return false;
    calls++;
    if (await stillFails(cand)) {
      best = cand;
      return true;
    }
    return false;
  };
  // every path to a shrinkable leaf or list, in the current best
  const paths = (v, at = []) => {
    const out = [];
    if (Array.isArray(v)) {
      out.push({ at, kind: 'array', len: v.length });
      v.forEach((x, i) => out.push(...paths(x, [...at, i])));
    } else if (v && typeof v === 'object') {
      if (typeof v.base64 === 'string' && Object.keys(v).length === 1) out.push({ at, kind: 'bytes' });
      else
        for (const k of Object.keys(v)) {
          if (!(at.length === 0 && keep(k))) out.push({ at: [...at, k], kind: 'key' });
          out.push(...paths(v[k], [...at, k]));
        }
    } else if (typeof v === 'string') out.push({ at, kind: 'string' });
    return out;
  };
  const get = (v, at) => at.reduce((o, k) => o[k], v);
  const set = (v, at, x) => {
    if (!at.length) return x;
    const c = Array.isArray(v) ? v.slice() : { ...v };
    c[at[0]] = set(v[at[0]], at.slice(1), x);
    return c;
  };
  const del = (v, at) => {
    const parent = get(v, at.slice(0, -1));
    const c = { ...parent };
    delete c[at[at.length - 1]];
    return set(v, at.slice(0, -1), c);
  };
  // cut pieces out of a sequence (array, string, bytes), largest first
  const cutSeq = async (at, kind) => {
    const read = (v) => {
      const x = get(v, at);
      return kind === 'bytes' ? Buffer.from(x.base64, 'base64') : x;
    };
    const write = (v, seq) =>
      set(v, at, kind === 'bytes' ? { base64: Buffer.from(seq).toString('base64') } : kind === 'string' ? seq : seq);
    const sliceOut = (seq, a, b) =>
      kind === 'string' ? [...seq].slice(0, a).concat([...seq].slice(b)).join('')
        : kind === 'bytes' ? Buffer.concat([seq.subarray(0, a), seq.subarray(b)]) : seq.slice(0, a).concat(seq.slice(b));
    const len = (seq) => (kind === 'string' ? [...seq].length : seq.length);
    let changed = false;
    for (let size = len(read(best)); size >= 1; size = Math.floor(size / 2)) {
      for (let a = 0; a + size <= len(read(best)); ) {
        if (await attempt(write(best, sliceOut(read(best), a, a + size)))) changed = true;
        else a += size;
        if (calls >= budget) return changed;
      }
    }
    return changed;
  };
  let progress = true;
  while (progress && calls < budget) {
    progress = false;
    for (const p of paths(best)) {
      if (calls >= budget) break;
      // earlier cuts in this pass may have removed or changed what a path names
      let v;
      try { v = get(best, p.at.slice(0, -1)); } catch { continue; }
      if (p.at.length && (v == null || typeof v !== 'object' || !(p.at[p.at.length - 1] in v))) continue;
      const x = get(best, p.at);
      const kindNow = Array.isArray(x) ? 'array' : typeof x === 'string' ? 'string'
        : x && typeof x === 'object' && typeof x.base64 === 'string' ? 'bytes' : 'other';
      if (p.kind !== 'key' && p.kind !== kindNow) continue;
      if (p.kind === 'key') progress = (await attempt(del(best, p.at))) || progress;
      else if (p.kind === 'array' || p.kind === 'string' || p.kind === 'bytes') progress = (await cutSeq(p.at, p.kind)) || progress;
    }
  }
  return { value: best, calls };
}

function parseArgs(argv) {
  const o = { cases: 100000, seed: 1, batch: 1500, kinds: ['codec', 'response'], out: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--cases') o.cases = Number(v);
    else if (a === '--seed') o.seed = Number(v) >>> 0;
    else if (a === '--batch') o.batch = Number(v);
    else if (a === '--kinds') o.kinds = v.split(',');
    else if (a === '--out') o.out = v;
    else throw new Error(`unknown option ${a}`);
    i++;
  }
  return o;
}

// How a difference looks: which error class each side raised (or none). A
// shrunk case must keep it, so that shrinking does not wander off to another
// difference (an invalid case, say).
const signature = (want, got) => JSON.stringify([want.error && want.error.class, got.error && got.error.class]);

// A codec case: MRI's result vs the build's, with the same signature.
async function codecDiffers(build, c, sig) {
  const [want] = await runByProfile([c]);
  if (want.oracleBroken !== undefined) return false;
  const got = runOurs(build.api, c);
  return !isDeepStrictEqual(got, want) && signature(want, got) === sig;
}

// The profile of ours that an oracle version stands for ('native-4.0': the
// system ruby running ruby.wasm 4.0's net/http).
const profileOf = (version) => version.replace(/^native-/, '');

// A response case: MRI's result vs the build's, whole or cut, with the same signature.
async function responseDiffers(build, c, version, cut, split, sig) {
  const [want] = await runResponseCases(version, [runnerCase(c)]);
  if (want.oracleBroken !== undefined) return false;
  const profile = profileOf(version);
  const got = split ? oursIncremental(build.api, c, [Math.min(cut, caseBytes(c).length)], profile) : oursOneShot(build.api, c, profile);
  return !isDeepStrictEqual(got, want) && signature(want, got) === sig;
}

// Response cases against MRI `version`: failures pushed, counts kept.
async function responseBatch(builds, cases, version, bseed, kind, tally) {
  const want = await runResponseCases(version, cases.map(runnerCase));
  const profile = profileOf(version);
  const rand = prng(bseed);
  cases.forEach((c, i) => {
    if (want[i].oracleBroken !== undefined) {
      tally.oracleBroken++;
      return;
    }
    tally.count(`${kind}@${version}`);
    if (want[i].error) tally.raised++;
    const cut = Math.floor(rand() * (caseBytes(c).length + 1));
    for (const b of builds) {
      const whole = oursOneShot(b.api, c, profile);
      const split = oursIncremental(b.api, c, [cut], profile);
      if (!isDeepStrictEqual(whole, want[i])) tally.failures.push({ kind: 'response', build: b.name, c, version, cut, want: want[i], got: whole });
      else if (!isDeepStrictEqual(split, want[i])) tally.failures.push({ kind: 'response', build: b.name, c, version, cut, want: want[i], got: split, split: true });
    }
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.kinds.includes('decode') && !haveNativeRuby()) throw new Error('--kinds decode needs the system ruby (the decoding oracle)');

  const t0 = Date.now();
  const counts = {};
  const failures = [];
  let done = 0;
  let oracleBroken = 0;
  let raised = 0;
  const count = (op, n = 1) => { counts[op] = (counts[op] || 0) + n; };
  for (let batch = 0; done < o.cases && failures.length === 0; batch++) {
    const bseed = (o.seed * 1000003 + batch) >>> 0;
    const size = Math.min(o.batch, o.cases - done);
    // shares: codec 2, response 1, decode 1; the remainder goes to the first kind chosen
    const shares = [['codec', 2], ['response', 1], ['decode', 1]].filter(([k]) => o.kinds.includes(k));
    if (!shares.length) throw new Error('--kinds: codec, response, decode');
    const total = shares.reduce((a, [, w]) => a + w, 0);
    const n = Object.fromEntries(shares.map(([k, w]) => [k, Math.floor((size * w) / total)]));
    n[shares[0][0]] += size - Object.values(n).reduce((a, b) => a + b, 0);
    const nCodec = n.codec || 0;
    const nResp = n.response || 0;
    const nDecode = n.decode || 0;
    if (nCodec) {
      const cases = generate(bseed, nCodec);
      const mri = await runByProfile(cases);
      cases.forEach((c, i) => {
        if (mri[i].oracleBroken !== undefined) {
          oracleBroken++;
          return;
        }
        count(`${c.op}@${c.profile}`);
        if (mri[i].error) raised++;
        for (const b of builds) {
          const got = runOurs(b.api, c);
          if (!isDeepStrictEqual(got, mri[i])) failures.push({ kind: 'codec', build: b.name, c, want: mri[i], got });
        }
      });
    }
    const tally = { failures, count, oracleBroken: 0, raised: 0 };
    if (nResp) await responseBatch(builds, randomResponseCases(bseed, nResp), batch % 4 === 3 ? '3.4' : '4.0', bseed, 'response', tally);
    // compressed bodies: the system ruby running ruby.wasm's net/http (ruby.wasm's own zlib traps past 1 KiB)
    if (nDecode) await responseBatch(builds, await randomDecodeCases(bseed, nDecode), batch % 4 === 3 ? 'native-3.4' : 'native-4.0', bseed, 'decode', tally);
    oracleBroken += tally.oracleBroken;
    raised += tally.raised;
    done += size;
    const s = (Date.now() - t0) / 1000;
    console.log(`${done} cases, ${failures.length} differences, ${(done / s).toFixed(0)} cases/s`);
  }
  const seconds = (Date.now() - t0) / 1000;
  // shrink and print the first few differences
  const seen = new Set();
  const distinct = failures.filter((f) => !seen.has(f.c.id) && seen.add(f.c.id));
  for (const f of distinct.slice(0, 3)) {
    let small;
    const build = builds.find((b) => b.name === f.build);
    const sig = signature(f.want, f.got);
    if (f.kind === 'codec') {
      const { id, profile, op, ...rest } = f.c;
      const r = await shrink(rest, (cand) => codecDiffers(build, { id, profile, op, ...cand }, sig));
      small = { id, profile, op, ...r.value };
      const [want] = await runByProfile([small]);
      console.log(`\nDIFFERENCE (${f.build}, ${f.c.id}); shrunk in ${r.calls} runs to:\n  case: ${JSON.stringify(small)}\n  MRI:  ${JSON.stringify(want)}\n  ours: ${JSON.stringify(runOurs(build.api, small))}`);
    } else {
      const { id, text, base64, op, profile, ...opts } = f.c;
      const bytes = { base64: Buffer.from(caseBytes(f.c)).toString('base64') };
      const r = await shrink({ bytes, ...opts }, (cand) => {
        const { bytes: b, ...o2 } = cand;
        return responseDiffers(build, { id, op, base64: b.base64, ...o2 }, f.version, f.cut, f.split, sig);
      }, { keep: (k) => k === 'bytes' || k === 'method' });
      const { bytes: b, ...o2 } = r.value;
      small = { id, op, base64: b.base64, ...o2 };
      const [want] = await runResponseCases(f.version, [runnerCase(small)]);
      console.log(`\nDIFFERENCE (${f.build}, ${f.c.id}, MRI ${f.version}${f.split ? `, fed cut at ${f.cut}` : ''}); shrunk in ${r.calls} runs to:\n  bytes: ${JSON.stringify(Buffer.from(b.base64, 'base64').toString('latin1'))}\n  options: ${JSON.stringify(o2)}\n  MRI:  ${JSON.stringify(want)}\n  ours: ${JSON.stringify(f.split ? oursIncremental(build.api, small, [f.cut], profileOf(f.version)) : oursOneShot(build.api, small, profileOf(f.version)))}`);
    }
  }
  const summary = {
    seed: o.seed, cases: done, builds: builds.map((b) => b.name), differences: failures.length, oracleBroken, raised,
    seconds: Math.round(seconds), byOperation: counts,
  };
  console.log(JSON.stringify(summary, null, 1));
  if (o.out) writeFileSync(o.out, `${JSON.stringify(summary, null, 1)}\n`);
  shutdown();
  shutdownResponseVMs();
  process.exitCode = failures.length ? 1 : 0;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) await main();
