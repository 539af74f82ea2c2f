// What the browser benchmarks (browser-sync.mjs, browser-page.mjs) share:
// their counts checked, a page of the local servers in headless Chromium
// that runs on its own as a user's page runs, the clients' turns and the
// median.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWorkerServers } from '../tests/support/browser/worker-server.mjs';
import { skip, CHROMIUM, CHROMIUM_ARGS } from '../tests/support/chromium.mjs';

/**
 * The whole-number options of opt (benchmarks/options.mjs) by name, with
 * their defaults; --warmup may be 0, the others at least 1. Exits with a
 * message when Chromium cannot run.
 */
export function counts(opt, defaults) {
  const out = {};
  for (const [name, dflt] of Object.entries(defaults)) {
    const v = Number(opt.get(name, dflt));
    if (!Number.isInteger(v) || v < (name === 'warmup' ? 0 : 1)) throw new Error(`--${name} must be a whole number${name === 'warmup' ? '' : ' above 0'}, not ${opt.get(name)}`);
    out[name] = v;
  }
  if (skip) {
    console.error(`cannot run: ${skip}`);
    process.exit(1);
  }
  return out;
}

/**
 * Runs fn(arg, { api }) in a page of the local servers (tests/support/
 * browser/worker-server.mjs; api: the API server's origin) in a headless
 * Chromium that no DevTools client drives, as a user's page runs (a
 * DevTools client makes each fetch() record the JavaScript stack that made
 * it, which costs more the deeper the stack: a fetch() called from inside
 * Ruby's), and returns its value. fn is sent as source text, with
 * `helpers` (name → a function of its own) defined before it; isolated:
 * the page is cross-origin isolated (COOP and COEP). Rejects with the
 * page's error, or after timeoutMs.
 */
export async function runDetached(fn, arg, { helpers = {}, timeoutMs = 600000, isolated = false } = {}) {
  const servers = await startWorkerServers({ isolated });
  const dir = mkdtempSync(join(tmpdir(), 'nhw-chromium-'));
  let child = null;
  try {
    const defs = Object.entries(helpers).map(([name, f]) => `const ${name} = ${f};`).join('\n');
    servers.setScript(`${defs}
const report = (v) => fetch('/report', { method: 'POST', body: JSON.stringify(v) });
try {
  await report({ value: await (${fn})(${JSON.stringify(arg)}, ${JSON.stringify({ api: servers.api })}) });
} catch (e) {
  await report({ error: String((e && e.stack) || e) });
}`);
    const got = new Promise((resolve, reject) => {
      servers.onReport(resolve);
      child = spawn(CHROMIUM, [...CHROMIUM_ARGS, `--user-data-dir=${dir}`, `${servers.origin}/script`], { stdio: 'ignore', detached: true });
      child.on('error', reject);
      child.on('exit', (code, signal) => reject(new Error(`Chromium exited (${signal || code}) before the page reported`)));
      setTimeout(() => reject(new Error(`the page reported nothing within ${timeoutMs} ms`)), timeoutMs).unref();
    });
    const r = await got;
    if (r.error) throw new Error(`in the page: ${r.error}`);
    return r.value;
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-child.pid, 'SIGKILL'); // (its renderer and other processes too)
      } catch {
        child.kill('SIGKILL');
      }
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    await servers.close();
  }
}

export function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * The clients (names) taking turns: run(count, order) makes `count` rounds
 * of one request of each, in order, and gives each one's median ms; after
 * `warmup` rounds, `passes` passes of `n` rounds, the order turned each
 * pass. Returns { rows: [{ client, median, min, max }] (of the passes'
 * medians), by (client → median), per (client → the passes' medians) }.
 */
export async function takeTurns(names, run, { n, passes, warmup }) {
  if (warmup) await run(warmup, names);
  const per = Object.fromEntries(names.map((k) => [k, []]));
  for (let p = 0; p < passes; p++) {
    const order = names.map((_, i) => names[(i + p) % names.length]);
    const got = await run(n, order);
    for (const k of names) per[k].push(got[k]);
  }
  const rows = names.map((client) => ({ client, median: median(per[client]), min: Math.min(...per[client]), max: Math.max(...per[client]) }));
  return { rows, by: Object.fromEntries(rows.map((r) => [r.client, r.median])), per };
}
