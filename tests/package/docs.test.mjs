// Every code block of README.md and docs/*.md, run as a reader would run it,
// from the packed package installed into a new project:
//   ```js       an ES module, run with node in the project
//   ```ruby     Ruby, run in a ruby.wasm VM (createRubyVM, vm.evalAsync)
//   ```sh       shell lines, run with bash in the project; `npm install`
//               installs the packed tarball for net-http-wasm
//   ```sh dev   commands for a checkout of the repository (building,
//               benchmarks): each names an npm script or a file that exists
//   ```html     a page, served from the project's folder (its node_modules
//               at /node_modules) and opened in headless Chromium; what it
//               prints is the text of its element #out once it has some
//   ```text     what the block before it prints, exactly (CRLF read as LF)
// Anything else (json, c, http...) is shown, not run. The examples'
// server is http://localhost:8080 (it answers every request with
// "hello METHOD PATH", and the body after ": " when there is one; it lets
// any origin read it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { installPackage } from '../support/installed.mjs';
import { skip as noChromium, launchChromium, newLoggedPage } from '../support/chromium.mjs';

const root = new URL('../../', import.meta.url);
const PORT = 8080;

/** The fenced blocks of a Markdown file: { lang, tag, code, line, output }. */
function codeBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`line ${start + 1}: a code block is not closed`);
    blocks.push({ lang: open[1], tag: open[2], code: body.join('\n') + '\n', line: start + 1 });
  }
  // a text block right after a runnable one is what it prints
  for (let k = 0; k + 1 < blocks.length; k++) {
    if (blocks[k].lang !== 'text' && blocks[k + 1].lang === 'text') blocks[k].output = blocks[k + 1].code;
  }
  return blocks;
}

const docs = ['README.md', ...(existsSync(new URL('docs/', root)) ? readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`) : [])];
const all = docs.flatMap((file) => codeBlocks(readFileSync(new URL(file, root), 'utf8')).map((b) => ({ ...b, file })));
const runnable = (b) => ['js', 'ruby', 'sh', 'html'].includes(b.lang);
const needsPackage = all.some((b) => runnable(b) && b.tag !== 'dev');

let pkg;
let server;
let n = 0;
before(async () => {
  if (!needsPackage) return;
  server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c)).on('end', () => {
      const body = Buffer.concat(chunks).toString();
      res.setHeader('content-type', 'text/plain');
      res.setHeader('access-control-allow-origin', '*');
      res.end(`hello ${req.method} ${req.url}${body ? `: ${body}` : ''}`);
    });
  });
  // (another test may hold the port for a few seconds: tests/browser/playground.test.mjs
  // checks what the example servers do when 8080 is taken)
  for (let tries = 0; ; tries++) {
    const e = await new Promise((resolve) => {
      server.once('error', resolve);
      server.listen(PORT, 'localhost', () => resolve(null));
    });
    if (!e) break;
    if (e.code !== 'EADDRINUSE' || tries === 60) throw new Error(`the examples' server needs port ${PORT}: ${e.message}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  pkg = installPackage();
});
let pages; // the static server of html blocks, started on first use
let browser;
after(async () => {
  server?.close();
  pages?.close();
  await browser?.close();
  pkg?.remove();
});

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
async function pageOrigin() {
  if (!pages) {
    pages = createServer((req, res) => {
      const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
      const file = join(pkg.dir, path);
      if (!file.startsWith(pkg.dir) || !existsSync(file)) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' }).end(readFileSync(file));
    });
    await new Promise((r) => pages.listen(0, '127.0.0.1', r));
    browser = await launchChromium();
  }
  return `http://127.0.0.1:${pages.address().port}`;
}

async function runPage(b) {
  const name = `page-${++n}.html`;
  writeFileSync(join(pkg.dir, name), b.code);
  const { page, logs } = await newLoggedPage(browser || (await pageOrigin(), browser));
  try {
    await page.goto(`${await pageOrigin()}/${name}`);
    await page.waitForFunction(() => document.getElementById('out')?.textContent.trim(), null, { timeout: 120000 })
      .catch((e) => { throw new Error(`${e.message}\n${logs.join('\n')}`); });
    const text = await page.textContent('#out');
    if (b.output !== undefined) assert.equal(text.trimEnd(), b.output.trimEnd(), logs.join('\n'));
  } finally {
    await page.close();
  }
}

const scripts = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts;

async function runBlock(b) {
  const file = join(pkg.dir, `block-${++n}`);
  let r;
  let left = [];
  if (b.lang === 'js' || b.lang === 'ruby') {
    // a temporary folder of the block's own (TMPDIR): what the block leaves
    // there, a reader who runs it leaves in theirs
    const tmp = mkdtempSync(join(tmpdir(), 'nhw-docs-tmp-'));
    try {
      r = await runNode(b, file, { ...process.env, TMPDIR: tmp });
      left = readdirSync(tmp);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  } else {
    // npm install lines install the packed package (its name stands for the tarball)
    const lines = b.code.split('\n').map((l) => {
      const m = /^npm install (.*)$/.exec(l.trim());
      if (!m) return l;
      pkg.npmInstall(...m[1].split(/\s+/).filter((a) => !a.startsWith('-')));
      return '';
    });
    writeFileSync(`${file}.sh`, `set -euo pipefail\n${lines.join('\n')}`);
    r = await pkg.run('bash', [`${file}.sh`]);
  }
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal || ''}\n${r.stdout}\n${r.stderr}`);
  if (b.output !== undefined) assert.equal(r.stdout.replaceAll('\r\n', '\n').trimEnd(), b.output.trimEnd());
  assert.deepEqual(left, [], 'what the block left in its temporary folder');
}

// A js block as an ES module, a ruby block in a VM of createRubyVM's.
function runNode(b, file, env) {
  if (b.lang === 'js') {
    writeFileSync(`${file}.mjs`, b.code);
    return pkg.run('node', [`${file}.mjs`], { env });
  } else {
    writeFileSync(`${file}.rb`, b.code);
    writeFileSync(`${file}.mjs`, `import { readFileSync } from 'node:fs';
import { createRubyVM } from 'net-http-wasm/ruby';
const { vm, dispose } = await createRubyVM();
try { await vm.evalAsync(readFileSync(${JSON.stringify(`${file}.rb`)}, 'utf8') + '\\n$stdout.flush'); } finally { await dispose(); }\n`);
    return pkg.run('node', [`${file}.mjs`], { env });
  }
}

// a developer's command: the npm script or the file it runs exists
function checkDevLine(line) {
  const l = line.trim();
  if (!l || l.startsWith('#')) return;
  let m;
  if ((m = /^npm (?:run )?([\w:-]+)/.exec(l))) {
    if (['ci', 'install', 'test', 'pack'].includes(m[1])) return;
    assert.ok(scripts[m[1]], `npm script ${m[1]} (${l})`);
  } else if ((m = /^(?:node|bash|ruby)(?: --?[\w-]+(?:=\S+)?)* ([\w./-]+)/.exec(l))) {
    assert.ok(existsSync(new URL(m[1], root)), `${m[1]} exists (${l})`);
  }
}

for (const b of all) {
  if (!runnable(b)) continue;
  const name = `${b.file}:${b.line} (${b.lang}${b.tag ? ` ${b.tag}` : ''})`;
  if (b.tag === 'dev') test(name, () => b.code.split('\n').forEach(checkDevLine));
  else if (b.lang === 'html') test(name, { skip: noChromium, timeout: 240000 }, () => runPage(b));
  else test(name, { timeout: 240000 }, () => runBlock(b));
}

test('every block is closed and every text block follows a runnable one', () => {
  assert.ok(all.length > 0);
  all.forEach((b, i) => {
    if (b.lang === 'text') assert.ok(i > 0 && all[i - 1].file === b.file && runnable(all[i - 1]), `${b.file}:${b.line}: a text block with nothing before it`);
  });
});
