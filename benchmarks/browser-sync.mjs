// Synchronous Net::HTTP in a browser Worker against the bare browser APIs,
// in headless Chromium (Debian's chromium, through playwright-core): from
// one dedicated Worker (tests/fixtures/browser/sync-worker.mjs, ruby.wasm
// with { blocking: true }), GETs of a small body (2 bytes) from a local
// cross-origin server (tests/fixtures/browser/worker-server.mjs, CORS):
//
//   xhr        a bare synchronous XMLHttpRequest (responseType arraybuffer)
//   fetch      a bare fetch() and its body, awaited
//   get        Net::HTTP.get(URI(url)) in vm.eval (a new Net::HTTP each time)
//   start      Net::HTTP.start(host, port) { |h| n.times { h.get(path) } }
//
// Each client is warmed up first (--warmup requests; ruby.wasm's first few
// hundred requests are slower), then --passes passes, each running the
// clients one after the other (in a new order each pass) for --n requests:
// per request, the median of the passes with min and max, and the ratios of
// the medians. The server is in this process (Node), the browser in others.
//
//   node benchmarks/browser-sync.mjs [--ruby 4.0|3.4] [--n 200] [--passes 7] [--warmup 300] [--json FILE]
import { writeFileSync } from 'node:fs';
import { options } from './options.mjs';
import { startWorkerServers } from '../tests/fixtures/browser/worker-server.mjs';
import { skip, launchChromium, newLoggedPage } from '../tests/support/chromium.mjs';

const opt = options(import.meta.url, { valued: ['ruby', 'n', 'passes', 'warmup', 'json'] });
const ruby = opt.get('ruby', '4.0');
const n = Number(opt.get('n', 200));
const passes = Number(opt.get('passes', 7));
const warmup = Number(opt.get('warmup', 300));
const jsonFile = opt.get('json', null);
if (!['4.0', '3.4'].includes(ruby)) throw new Error(`--ruby must be 4.0 or 3.4, not ${ruby}`);
for (const [name, v] of [['n', n], ['passes', passes], ['warmup', warmup]]) {
  if (!Number.isInteger(v) || v < (name === 'warmup' ? 0 : 1)) throw new Error(`--${name} must be a whole number${name === 'warmup' ? '' : ' above 0'}, not ${opt.get(name)}`);
}
if (skip) {
  console.error(`cannot run: ${skip}`);
  process.exit(1);
}

const servers = await startWorkerServers();
const browser = await launchChromium();
try {
  const { page, logs } = await newLoggedPage(browser);
  await page.goto(`${servers.origin}/blank`);
  const url = `${servers.api}/text?s=ok`;
  const { port } = new URL(servers.api);
  await page.evaluate(async (ruby) => {
    const { startSyncWorker } = await import('/tests/fixtures/browser/worker-driver.mjs');
    window.w = await startSyncWorker(ruby);
  }, ruby);
  // each client: JavaScript run in the Worker, timing `count` requests (ms in all)
  const clients = {
    xhr: (count) => `
      const t = performance.now();
      for (let i = 0; i < ${count}; i++) {
        const x = new XMLHttpRequest();
        x.open('GET', ${JSON.stringify(url)}, false);
        x.responseType = 'arraybuffer';
        x.send();
        if (x.response.byteLength !== 2) throw new Error('short body');
      }
      return performance.now() - t;`,
    fetch: (count) => `
      const t = performance.now();
      for (let i = 0; i < ${count}; i++) {
        const r = await fetch(${JSON.stringify(url)}, { cache: 'no-store' });
        if ((await r.arrayBuffer()).byteLength !== 2) throw new Error('short body');
      }
      return performance.now() - t;`,
    get: (count) => `
      const t = performance.now();
      const v = self.rubyVM.eval("u = URI('${url}'); ${count}.times.count { Net::HTTP.get(u) == 'ok' }").toString();
      if (v !== '${count}') throw new Error('a request failed: ' + v);
      return performance.now() - t;`,
    start: (count) => `
      const t = performance.now();
      const v = self.rubyVM.eval("Net::HTTP.start('127.0.0.1', ${port}) { |h| ${count}.times.count { h.get('/text?s=ok').body == 'ok' } }").toString();
      if (v !== '${count}') throw new Error('a request failed: ' + v);
      return performance.now() - t;`,
  };
  const names = Object.keys(clients);
  const timeIn = async (name, count) => {
    try {
      return await page.evaluate((js) => window.w.js(js), clients[name](count));
    } catch (e) {
      throw new Error(`${name}: ${e.message}\n${logs.join('\n')}`);
    }
  };
  for (const name of names) if (warmup) await timeIn(name, warmup);
  const per = Object.fromEntries(names.map((k) => [k, []]));
  for (let p = 0; p < passes; p++) {
    const order = names.map((_, i) => names[(i + p) % names.length]);
    for (const name of order) per[name].push((await timeIn(name, n)) / n);
  }
  const median = (a) => {
    const s = [...a].sort((x, y) => x - y);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const rows = names.map((name) => ({ client: name, median: median(per[name]), min: Math.min(...per[name]), max: Math.max(...per[name]) }));
  const by = Object.fromEntries(rows.map((r) => [r.client, r.median]));
  console.log(`ruby.wasm ${ruby} in a Worker, headless Chromium; ${passes} passes of ${n} GETs each (after ${warmup} per client); ms per request`);
  console.log('client   median     min     max   ×xhr  ×fetch');
  for (const r of rows) {
    console.log(`${r.client.padEnd(6)} ${r.median.toFixed(3).padStart(8)} ${r.min.toFixed(3).padStart(7)} ${r.max.toFixed(3).padStart(7)} ${(r.median / by.xhr).toFixed(2).padStart(6)} ${(r.median / by.fetch).toFixed(2).padStart(7)}`);
  }
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ ruby, n, passes, warmup, rows, perPass: per }, null, 2)}\n`);
} finally {
  await browser.close();
  await servers.close();
}
