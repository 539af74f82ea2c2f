// Net::HTTP in a page's main thread (ruby.wasm made by createRubyVM of the
// browser entry, the waiting transport: one fetch() per request) against a
// bare fetch() from the same page, in headless Chromium (Debian's chromium,
// through playwright-core); GETs of a small body (2 bytes) from a local
// cross-origin server (tests/support/browser/worker-server.mjs, CORS):
//
//   fetch      a bare fetch() and its body, awaited
//   get        await vm.evalAsync("Net::HTTP.get(uri)") (a new Net::HTTP each time)
//   start      await vm.evalAsync("http.get(path).body"), http a started Net::HTTP kept
//
// The VM is made from the module's fetch(), which createRubyVM reads,
// patches and compiles, as README shows (--module fetch, the default), or
// from a module the page compiled with WebAssembly.compileStreaming
// (--module compiled). Printed first: the time from the page's start until
// createRubyVM resolved, and the most the page's renderer process had
// resident during the whole run (Linux: /proc, sampled every 20 ms).
//
// First a fresh VM's first --first get requests, one after another (what
// a page that has just booted its VM sees), each timed; then --warmup
// rounds, then --passes passes of --n rounds, a round being one request of
// each client in an order that changes each pass, so that a machine busy
// with other work slows them alike. Printed: the first requests' median
// and mean, then each client's median of the passes' medians with min and
// max, and the ratios. The server is in this process (Node), the browser
// in others; no DevTools client drives the page (it runs the whole
// benchmark and reports), as no DevTools client is attached to a user's.
//
//   node benchmarks/browser-page.mjs [--ruby 4.0|3.4] [--module fetch|compiled] [--first 100] [--n 200] [--passes 7] [--warmup 300] [--json FILE]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { options } from './options.mjs';
import { counts, runDetached, takeTurns, median } from './browser-bench.mjs';

const opt = options(import.meta.url, { valued: ['ruby', 'module', 'first', 'n', 'passes', 'warmup', 'json'] });
const ruby = opt.get('ruby', '4.0');
const jsonFile = opt.get('json', null);
if (!['4.0', '3.4'].includes(ruby)) throw new Error(`--ruby must be 4.0 or 3.4, not ${ruby}`);
const moduleFrom = opt.get('module', 'fetch');
if (!['fetch', 'compiled'].includes(moduleFrom)) throw new Error(`--module must be fetch or compiled, not ${moduleFrom}`);
const { first, n, passes, warmup } = counts(opt, { first: 100, n: 200, passes: 7, warmup: 300 });

// (runs in the page)
async function pageBench({ ruby, moduleFrom, first, n, passes, warmup }, { api }) {
  const url = `${api}/text?s=ok`;
  const port = new URL(api).port;
  const wasi = await import('/node_modules/@bjorn3/browser_wasi_shim/dist/index.js');
  const { RubyVM } = await import('/node_modules/@ruby/wasm-wasi/dist/esm/index.js');
  const { createRubyVM } = await import('/js/ruby/browser.mjs');
  const wasmUrl = `/node_modules/@ruby/${ruby}-wasm-wasi/dist/ruby+stdlib.wasm`;
  const module = moduleFrom === 'fetch' ? fetch(wasmUrl) : await WebAssembly.compileStreaming(fetch(wasmUrl));
  const { vm } = await createRubyVM({ ruby: module, RubyVM, wasi });
  const ready = performance.now();
  // a fresh VM, then its first requests
  await vm.evalAsync(`$bench_uri = URI('${url}'); nil`);
  const times = [];
  for (let i = 0; i < first; i++) {
    const t = performance.now();
    const body = (await vm.evalAsync('Net::HTTP.get($bench_uri)')).toString();
    times.push(performance.now() - t);
    if (body !== 'ok') throw new Error(`get: wrong body ${JSON.stringify(body)}`);
  }
  await vm.evalAsync(`$bench_http = Net::HTTP.start('127.0.0.1', ${port}); nil`);
  const clients = {
    fetch: async () => {
      const r = await fetch(url, { cache: 'no-store' });
      if ((await r.arrayBuffer()).byteLength !== 2) throw new Error('fetch: short body');
    },
    get: async () => {
      if ((await vm.evalAsync('Net::HTTP.get($bench_uri)')).toString() !== 'ok') throw new Error('get: wrong body');
    },
    start: async () => {
      if ((await vm.evalAsync("$bench_http.get('/text?s=ok').body")).toString() !== 'ok') throw new Error('start: wrong body');
    },
  };
  // `count` rounds, each a request of every client (in `order`): the
  // median ms per request of each
  const run = async (count, order) => {
    const t = Object.fromEntries(order.map((k) => [k, []]));
    for (let i = 0; i < count; i++) {
      for (const k of order) {
        const s = performance.now();
        await clients[k]();
        t[k].push(performance.now() - s);
      }
    }
    return Object.fromEntries(order.map((k) => [k, median(t[k])]));
  };
  return { ready, times, turns: await takeTurns(['fetch', 'get', 'start'], run, { n, passes, warmup }) };
}

// The most any renderer process of Chromium had resident (MiB) while the
// benchmark ran, sampled every 20 ms (the processes looked for every 500
// ms); null where /proc cannot tell.
function rendererPeak() {
  const renderers = new Set();
  let peak = null;
  const look = () => {
    let pids = [];
    try {
      pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
    } catch {
      return;
    }
    for (const pid of pids) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) renderers.add(pid);
      } catch {
        // (a process that ended meanwhile)
      }
    }
  };
  const sample = () => {
    for (const pid of renderers) {
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (kb) peak = Math.max(peak ?? 0, Number(kb[1]) / 1024);
      } catch {
        renderers.delete(pid);
      }
    }
  };
  const timers = [setInterval(look, 500), setInterval(sample, 20)];
  return () => {
    for (const t of timers) clearInterval(t);
    return peak;
  };
}
const stopSampling = rendererPeak();
let result;
let peakRss = null;
try {
  result = await runDetached(pageBench, { ruby, moduleFrom, first, n, passes, warmup }, { helpers: { median, takeTurns } });
} finally {
  peakRss = stopSampling();
}
const { ready, times: firstTimes, turns } = result;
const { rows, by, per } = turns;
const firstMedian = median(firstTimes);
const firstMean = firstTimes.reduce((a, b) => a + b, 0) / firstTimes.length;
console.log(`ruby.wasm ${ruby} in a page's main thread (createRubyVM, fetch()), headless Chromium, no DevTools client`);
console.log(`the VM (--module ${moduleFrom}) ready ${ready.toFixed(0)} ms after the page's start; the renderer at most ${peakRss == null ? 'n/a' : `${peakRss.toFixed(0)} MiB`} resident`);
console.log(`a fresh VM's first ${first} Net::HTTP.get: median ${firstMedian.toFixed(3)} ms, mean ${firstMean.toFixed(3)} ms (${(firstMean / by.get).toFixed(2)}× the warm get)`);
console.log(`${passes} passes of ${n} rounds (after ${warmup}); ms per request, the median of the passes' medians`);
console.log('client   median     min     max  ×fetch');
for (const r of rows) {
  console.log(`${r.client.padEnd(6)} ${r.median.toFixed(3).padStart(8)} ${r.min.toFixed(3).padStart(7)} ${r.max.toFixed(3).padStart(7)} ${(r.median / by.fetch).toFixed(2).padStart(7)}`);
}
if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ ruby, module: moduleFrom, readyMs: ready, rendererPeakMiB: peakRss, first: { n: first, median: firstMedian, mean: firstMean, times: firstTimes }, n, passes, warmup, rows, perPass: per }, null, 2)}\n`);
