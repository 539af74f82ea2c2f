// Synchronous Net::HTTP in a browser Worker against the bare browser APIs,
// in headless Chromium (Debian's chromium, through playwright-core): from
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
// this process (Node), the browser in others. With --isolated the page is
// cross-origin isolated, and the VM's requests are fetch() calls in a helper
// Worker streamed through shared memory (js/ruby/transports/fetch-sync.mjs).
//
//   node benchmarks/browser-sync.mjs [--ruby 4.0|3.4] [--n 200] [--passes 7] [--warmup 300] [--isolated] [--json FILE]
import { writeFileSync } from 'node:fs';
import { options } from './options.mjs';
import { counts, openBenchPage, takeTurns } from './browser-bench.mjs';

const opt = options(import.meta.url, { valued: ['ruby', 'n', 'passes', 'warmup', 'json'], flags: ['isolated'] });
const isolated = opt.has('isolated');
const ruby = opt.get('ruby', '4.0');
const jsonFile = opt.get('json', null);
if (!['4.0', '3.4'].includes(ruby)) throw new Error(`--ruby must be 4.0 or 3.4, not ${ruby}`);
const { n, passes, warmup } = counts(opt, { n: 200, passes: 7, warmup: 300 });

const { url, port, inPage, close } = await openBenchPage({ isolated });
try {
  await inPage(async (ruby) => {
    const { startSyncWorker } = await import('/tests/support/browser/worker-driver.mjs');
    window.w = await startSyncWorker(ruby);
  }, ruby);
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
    const med = (a) => { const s = [...a].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
    return Object.fromEntries(order.map((k) => [k, med(times[k])]));`;
  const run = (count, order) => inPage((js) => window.w.js(js), round(count, order));
  const { rows, by, per } = await takeTurns(names, run, { n, passes, warmup });
  console.log(`ruby.wasm ${ruby} in a Worker${isolated ? ' of an isolated page (streamed fetch())' : ''}, headless Chromium; ${passes} passes of ${n} rounds (after ${warmup}); ms per request, the median of the passes' medians`);
  console.log('client   median     min     max   ×xhr  ×fetch');
  for (const r of rows) {
    console.log(`${r.client.padEnd(6)} ${r.median.toFixed(3).padStart(8)} ${r.min.toFixed(3).padStart(7)} ${r.max.toFixed(3).padStart(7)} ${(r.median / by.xhr).toFixed(2).padStart(6)} ${(r.median / by.fetch).toFixed(2).padStart(7)}`);
  }
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ ruby, isolated, n, passes, warmup, rows, perPass: per }, null, 2)}\n`);
} finally {
  await close();
}
