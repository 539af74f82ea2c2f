// What the browser benchmarks (browser-sync.mjs, browser-page.mjs) share:
// their counts checked, a page of the local servers in headless Chromium,
// the clients' turns and the median.
import { startWorkerServers } from '../tests/support/browser/worker-server.mjs';
import { skip, launchChromium, newLoggedPage } from '../tests/support/chromium.mjs';

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
 * The servers (tests/support/browser/worker-server.mjs) and a page at
 * their origin's /blank: { servers, page, url (a 2-byte text of the API
 * server), port (the API server's), inPage(fn, arg) (page.evaluate, its
 * error with the page's console), close() }.
 */
export async function openBenchPage({ isolated = false } = {}) {
  const servers = await startWorkerServers({ isolated });
  const browser = await launchChromium();
  const close = async () => {
    await browser.close();
    await servers.close();
  };
  try {
    const { page, logs } = await newLoggedPage(browser);
    await page.goto(`${servers.origin}/blank`);
    const inPage = async (fn, arg) => {
      try {
        return await page.evaluate(fn, arg);
      } catch (e) {
        throw new Error(`${e.message}\n${logs.join('\n')}`);
      }
    };
    return { servers, page, url: `${servers.api}/text?s=ok`, port: new URL(servers.api).port, inPage, close };
  } catch (e) {
    await close();
    throw e;
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
