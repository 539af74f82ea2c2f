// The client benchmark's report: markdown tables (the seed's Average / Total /
// All OK and more; seed 001's TCPSocket vs Net::HTTP vs Net::HTTP::Persistent)
// and an SVG chart, from run.mjs's JSON.

const MODE = { oneoff: 'one-off', persistent: 'persistent' };

export function ms(x) {
  if (x == null || !Number.isFinite(x)) return '—';
  if (x >= 100) return `${x.toFixed(0)} ms`;
  if (x >= 10) return `${x.toFixed(1)} ms`;
  if (x >= 1) return `${x.toFixed(2)} ms`;
  return `${x.toFixed(3)} ms`;
}

const esc = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function status(row) {
  if (!row.available) return `not available (${esc(row.reason)})`;
  const s = row.summary;
  if (s.allOk) return 'All OK';
  const errs = Object.entries(s.errors).sort((a, b) => b[1] - a[1]);
  const n = errs.reduce((a, [, v]) => a + v, 0);
  return `${n} errors: ${errs.slice(0, 2).map(([k, v]) => `${esc(k)} (×${v})`).join('; ')}`;
}

function conns(s) {
  if (s.conns == null) return '—';
  return s.connsMin === s.connsMax ? String(s.conns) : `${s.conns} (${s.connsMin}–${s.connsMax})`;
}

function describe(run) {
  const mode = run.quick ? 'every mode of every client' : run.persistent ? "each client's persistent mode (-p)" : "each client's one-off mode";
  const n = run.wasmN !== run.n ? `N = ${run.n} requests per client and pass (ruby.wasm: ${run.wasmN})` : `N = ${run.n} requests per client and pass`;
  return (
    `${run.date} — ${run.machine}.\n\n` +
    `GET ${run.url} (${run.expect.len}-byte body), ${mode}, ${run.concurrency} at a time; ${n}, ` +
    `${run.passes} passes after ${run.warmup} warm-up requests per client, clients interleaved (each pass starts with another). ` +
    'Each client runs in its own process. Average = median Total ÷ N; Total = median (min–max) over passes; ' +
    'p50/p99 over every timed request; CPU = the client process\'s CPU time per request (median pass); ' +
    `connections = connections the server saw carrying requests per pass${run.connectionsCounted ? '' : ' (not counted: the server has no /__stats)'}. ` +
    '"All OK": every request, warm-up included, got status 200 and the exact body (length and sha256).\n'
  );
}

function mainTable(run) {
  let md = '| runtime | client | mode | N | Average | Total (min–max) | All OK | connections | p50 | p99 | req/s | CPU/req |\n';
  md += '|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n';
  for (const r of run.rows.filter((x) => !x.seedOnly)) {
    const mode = `${MODE[r.mode]}: ${r.how}`;
    if (!r.available) {
      md += `| ${r.runtime} | ${r.client} | ${mode} | ${r.n} | — | — | ${status(r)} | — | — | — | — | — |\n`;
      continue;
    }
    const s = r.summary;
    md += `| ${r.runtime} | ${r.client} | ${mode} | ${r.n} | ${ms(s.averageMs)} | ${ms(s.totalMs)} (${ms(s.totalMinMs)}–${ms(s.totalMaxMs)}) | ${status(r)} | ${conns(s)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${Number.isFinite(s.reqPerS) ? Math.round(s.reqPerS) : '—'} | ${ms(s.cpuPerReqMs)} |\n`;
  }
  return md;
}

function seedTable(run, seedRows) {
  const runtimes = ['native MRI', 'ruby.wasm 4.0'].filter((rt) => run.rows.some((r) => r.runtime === rt));
  const find = (rt, name, mode) => run.rows.find((r) => r.runtime === rt && r.id.endsWith(`-${name}`) && r.mode === mode);
  if (!runtimes.length || !seedRows.every(([name, mode]) => runtimes.some((rt) => find(rt, name, mode)))) return '';
  const avg = (r) => (r && r.available && r.summary.allOk ? r.summary.averageMs : null);
  const ratio = (a, b) => (a != null && b != null ? `${(a / b).toFixed(2)}×` : '—');
  let md = `| runtime | ${seedRows.map(([, , title]) => title).join(' | ')} | Persistent ÷ TCPSocket | get_response ÷ Persistent | get_response ÷ start |\n`;
  md += `|---|${seedRows.map(() => '---:').join('|')}|---:|---:|---:|\n`;
  const notes = [];
  for (const rt of runtimes) {
    const cells = seedRows.map(([name, mode]) => {
      const r = find(rt, name, mode);
      if (!r) return '—';
      if (!r.available) {
        notes.push(`${rt}, ${r.client}: not available (${esc(r.reason)})`);
        return 'not available';
      }
      const s = r.summary;
      return s.allOk ? `${ms(s.averageMs)} (${conns(s)} conn.)` : status(r);
    });
    const [raw, oneoff, start, pers] = seedRows.map(([name, mode]) => avg(find(rt, name, mode)));
    md += `| ${rt} | ${cells.join(' | ')} | ${ratio(pers, raw)} | ${ratio(oneoff, pers)} | ${ratio(oneoff, start)} |\n`;
  }
  for (const n of notes) md += `\n${n}`;
  return `${md}\n`;
}

export function report(run, seedRows) {
  let md = `# HTTP clients: ruby.wasm, native MRI, Node\n\n${describe(run)}\n${mainTable(run)}`;
  const seed = seedTable(run, seedRows);
  if (seed) {
    md += `\n## Seed 001: TCPSocket vs Net::HTTP vs Net::HTTP::Persistent\n\nAverage per request (connections per pass), from the same run and the same server.\n\n${seed}`;
  }
  const versions = run.rows.filter((r) => r.version).map((r) => `${r.id}: ${r.version}${r.bootMs != null ? ` (process started and set up in ${Math.round(r.bootMs)} ms)` : ''}`);
  md += `\nVersions: ${[...new Set(versions)].join('; ')}.\n`;
  return { md, svg: svg(run) };
}

// Horizontal bars, log scale: Average per request with the passes' min–max.
function svg(run) {
  const rows = run.rows.filter((r) => !r.seedOnly && r.available && Number.isFinite(r.summary.averageMs));
  const colors = { 'ruby.wasm 4.0': '#d62728', 'native MRI': '#1f77b4', Node: '#2ca02c' };
  const width = 900;
  const left = 360;
  const rowH = 18;
  const top = 40;
  const vals = rows.flatMap((r) => [r.summary.totalMinMs / r.n, r.summary.totalMaxMs / r.n]).filter((v) => v > 0);
  const lo = Math.log10(Math.min(...vals, 1)) - 0.1;
  const hi = Math.log10(Math.max(...vals, 1)) + 0.1;
  const x = (v) => left + ((Math.log10(v) - lo) / (hi - lo)) * (width - left - 80);
  let body = '';
  for (let d = Math.ceil(lo); d <= Math.floor(hi); d++) {
    const gx = x(10 ** d).toFixed(1);
    body += `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${top + rows.length * rowH}" stroke="#ddd"/><text x="${gx}" y="${top - 10}" font-size="10" text-anchor="middle">${ms(10 ** d)}</text>`;
  }
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const s = r.summary;
    const label = `${r.runtime} · ${r.client} (${MODE[r.mode]})`.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    body += `<text x="10" y="${y + 12}" font-size="11">${label}</text>`;
    body += `<rect x="${left}" y="${y + 3}" width="${Math.max(1, x(s.averageMs) - left).toFixed(1)}" height="${rowH - 6}" fill="${colors[r.runtime] || '#7f7f7f'}"/>`;
    body += `<line x1="${x(s.totalMinMs / r.n).toFixed(1)}" y1="${y + rowH / 2}" x2="${x(s.totalMaxMs / r.n).toFixed(1)}" y2="${y + rowH / 2}" stroke="#000"/>`;
    body += `<text x="${(x(Math.max(s.averageMs, s.totalMaxMs / r.n)) + 4).toFixed(1)}" y="${y + 12}" font-size="10">${ms(s.averageMs)}${s.allOk ? '' : ' (errors)'}</text>`;
  });
  const title = `Average per request, log scale (line: min–max over passes) — ${run.url}, ${run.persistent ? 'persistent' : 'one-off'}, ${run.concurrency} at a time`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${top + rows.length * rowH + 20}" font-family="sans-serif" font-size="12">` +
    `<text x="10" y="16">${title.replace(/&/g, '&amp;')}</text>${body}</svg>\n`
  );
}
