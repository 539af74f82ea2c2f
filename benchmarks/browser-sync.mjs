// Synchronous Net::HTTP in a browser Worker against the bare browser APIs,
// in headless Chromium (Debian's chromium): from
// one dedicated Worker (tests/support/browser/sync-worker.mjs, ruby.wasm
// with { blocking: true }), GETs of a small body (2 bytes) from a local
// cross-origin server (tests/support/browser/worker-server.mjs, CORS):
//
//   xhr        a bare synchronous XMLHttpRequest (responseType arraybuffer)
//   fetch      a bare fetch() and its body, awaited
//   get        Net::HTTP.get(uri) in vm.eval (a new Net::HTTP each time)
//   start      http.get(path) in vm.eval, http a started Net::HTTP kept
//
// The clients take turns, request by request (a round: one request of
// each, in an order that changes each pass), so that a machine busy with
// other work slows them alike. --warmup rounds first (ruby.wasm's first few
// hundred requests are slower), then --passes passes of --n rounds: a pass
// gives each client's median time per request; printed: the median of the
// passes with min and max, and the ratios of the medians. The server is in
// this process (Node), the browser in others; no DevTools client drives the
// page (it runs the whole benchmark and reports), as no DevTools client is
// attached to a user's. With --isolated the page is
// cross-origin isolated, and the VM's requests are fetch() calls in a helper
// Worker streamed through shared memory (js/ruby/transports/fetch-sync.mjs).
//
//   node benchmarks/browser-sync.mjs [--ruby 4.0|3.4] [--n 200] [--passes 7] [--warmup 300] [--isolated] [--json FILE]
import { writeFileSync } from 'node:fs';
import { options } from './options.mjs';
import { counts, runDetached, takeTurns, median } from './browser-bench.mjs';

const opt = options(import.meta.url, { valued: ['ruby', 'n', 'passes', 'warmup', 'json'], flags: ['isolated'] });
const isolated = opt.has('isolated');
const ruby = opt.get('ruby', '4.0');
const jsonFile = opt.get('json', null);
if (!['4.0', '3.4'].includes(ruby)) throw new Error(`--ruby must be 4.0 or 3.4, not ${ruby}`);
const { n, passes, warmup } = counts(opt, { n: 200, passes: 7, warmup: 300 });

// (runs in the page: the Worker runs the rounds)
async function workerBench({ ruby, n, passes, warmup }, { api }) {
  const url = `${api}/text?s=ok`;
  const port = new URL(api).port;
  const { startSyncWorker } = await import('/tests/support/browser/worker-driver.mjs');
  const w = await startSyncWorker(ruby);
  // each client: JavaScript run in the Worker for one request (awaited when it is a promise)
  const clients = {
    xhr: `() => {
      const x = new XMLHttpRequest();
      x.open('GET', ${JSON.stringify(url)}, false);
      x.responseType = 'arraybuffer';
      x.send();
      if (x.response.byteLength !== 2) throw new Error('xhr: short body');
    }`,
    fetch: `async () => {
      const r = await fetch(${JSON.stringify(url)}, { cache: 'no-store' });
      if ((await r.arrayBuffer()).byteLength !== 2) throw new Error('fetch: short body');
    }`,
    get: `() => {
      if (self.rubyVM.eval("Net::HTTP.get($bench_uri)").toString() !== 'ok') throw new Error('get: wrong body');
    }`,
    start: `() => {
      if (self.rubyVM.eval("$bench_http.get('/text?s=ok').body").toString() !== 'ok') throw new Error('start: wrong body');
    }`,
  };
  const names = Object.keys(clients);
  // `count` rounds, each a request of every client (in `order`): the median
  // ms per request of each
  const round = (count, order) => `
    self.rubyVM.eval("$bench_uri = URI('${url}'); $bench_http ||= Net::HTTP.start('127.0.0.1', ${port}); nil");
    const fns = { ${names.map((k) => `${k}: ${clients[k]}`).join(',\n')} };
    const order = ${JSON.stringify(order)};
    const times = Object.fromEntries(order.map((k) => [k, []]));
    for (let i = 0; i < ${count}; i++) {
      for (const k of order) {
        const t = performance.now();
        const v = fns[k]();
        if (v && v.then) await v;
        times[k].push(performance.now() - t);
      }
    }
    const med = ${median};
    return Object.fromEntries(order.map((k) => [k, med(times[k])]));`;
  try {
    return await takeTurns(names, (count, order) => w.js(round(count, order)), { n, passes, warmup });
  } finally {
    w.terminate();
  }
}

const { rows, by, per } = await runDetached(workerBench, { ruby, n, passes, warmup }, { helpers: { median, takeTurns }, isolated });
console.log(`ruby.wasm ${ruby} in a Worker${isolated ? ' of an isolated page (streamed fetch())' : ''}, headless Chromium, no DevTools client; ${passes} passes of ${n} rounds (after ${warmup}); ms per request, the median of the passes' medians`);
console.log('client   median     min     max   ×xhr  ×fetch');
for (const r of rows) {
  console.log(`${r.client.padEnd(6)} ${r.median.toFixed(3).padStart(8)} ${r.min.toFixed(3).padStart(7)} ${r.max.toFixed(3).padStart(7)} ${(r.median / by.xhr).toFixed(2).padStart(6)} ${(r.median / by.fetch).toFixed(2).padStart(7)}`);
}
if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ ruby, isolated, n, passes, warmup, rows, perPass: per }, null, 2)}\n`);
