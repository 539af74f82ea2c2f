// Runs response-parse cases through MRI (see response_runner.rb for the case
// and result format):
//   '4.0', '3.4'  ruby.wasm, in VMs booted by rubyvm.mjs
//   'native'      the system ruby (3.1, net-http 0.2.0): the oracle for
//                 content decoding, which crashes ruby.wasm
//
//   import { runResponseCases } from './response.mjs';
//   const results = await runResponseCases('4.0', cases);
//
// ruby.wasm 3.4.1 leaks on non-local exits and read_body_0 does one per body
// (`return` from inside the inflater block), so a 3.4 VM is replaced every
// SAFE_34 cases, and a VM that reports itself broken is replaced and the case
// run again.
import { writeFileSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootVM } from './rubyvm.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SAFE_34 = Number(process.env.NETHTTP_RUBY34_CASES_PER_VM || 150);
const BATCH = 300;
const vms = new Map();

async function vmFor(version, need) {
  let v = vms.get(version);
  if (v && version === '3.4' && v.used + need > SAFE_34) {
    drop(version);
    v = undefined;
  }
  if (!v) {
    v = await bootVM(version);
    v.vm.eval(`load '/oracle/response_runner.rb'; nil`);
    vms.set(version, v);
  }
  return v;
}

function drop(version) {
  const v = vms.get(version);
  if (!v) return;
  vms.delete(version);
  try { rmSync(v.io, { recursive: true, force: true }); } catch {}
}

function runBatch(v, cases) {
  writeFileSync(join(v.io, 'rin.json'), JSON.stringify(cases));
  v.vm.eval(`NetHttpResponseOracle.run_file('/io/rin.json', '/io/rout.json')`);
  v.used += cases.length;
  return JSON.parse(readFileSync(join(v.io, 'rout.json'), 'utf8'));
}

function runNative(cases) {
  const dir = mkdtempSync(join(tmpdir(), 'nethttp-native-'));
  try {
    writeFileSync(join(dir, 'in.json'), JSON.stringify(cases));
    const r = spawnSync('ruby', [join(here, 'response_runner.rb'), join(dir, 'in.json'), join(dir, 'out.json')], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`native ruby failed: ${r.stderr || r.error}`);
    return JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 1 if a native ruby is installed (the decoding oracle). */
export function haveNativeRuby() {
  const r = spawnSync('ruby', ['-rnet/http', '-rzlib', '-e', 'print Net::HTTP::VERSION'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : null;
}

/** Results of `cases` in MRI `version` ('4.0', '3.4' or 'native'), in order. */
export async function runResponseCases(version, cases) {
  if (version === 'native') return runNative(cases);
  const results = [];
  let i = 0;
  let retriedAt = -1;
  while (i < cases.length) {
    const size = Math.min(version === '3.4' ? SAFE_34 : BATCH, cases.length - i);
    const v = await vmFor(version, size);
    let out;
    try {
      out = runBatch(v, cases.slice(i, i + size));
    } catch (e) {
      out = [{ broken: `${e && e.message}` }];
    }
    const last = out[out.length - 1];
    if (last && last.broken !== undefined) {
      out.pop();
      results.push(...out);
      i += out.length;
      drop(version);
      if (retriedAt === i) {
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

export function shutdownResponseVMs() {
  for (const v of [...vms.keys()]) drop(v);
}
