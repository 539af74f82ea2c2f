// The examples as a person runs them: `npm run demo` and
// `node examples/ruby-node.mjs [3.4]` in this checkout (where Node resolves
// the package's own name to itself), then the same files copied unchanged
// into a new project that installed the packed package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Request, URI } from '../../js/index.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = (cmd, args, cwd = root) => spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 120000 });

// What examples/demo.mjs prints: its request (CRLF shown as ␍␊), then the forms and names.
function checkDemo(r) {
  assert.equal(r.status, 0, r.stderr);
  const req = new Request('POST', URI('http://example.com:8080/signup?ref=demo'), { 'X-Trace': 'abc123' });
  req.setFormData({ name: 'Zoë Smith', langs: ['ruby', 'c'], note: '50% off ~ today' });
  const bytes = req.toBytes();
  const shown = new TextDecoder().decode(bytes).replace(/\r\n/g, '\u240d\u240a\n');
  assert.ok(r.stdout.includes(`# Net::HTTP::Post, ${bytes.length} bytes on the wire:\n${shown}\n\n`), r.stdout);
  assert.ok(r.stdout.endsWith([
    '# URI.encode_www_form([["q", "a b"], ["tilde", "~"], ["flag", nil]])', 'q=a+b&tilde=%7E&flag',
    '# URI.decode_www_form("a=1&b=%E2%9C%93&c")', '[["a","1"],["b","✓"],["c",""]]',
    '# each_capitalized after add_field', '[["Content-Type","text/plain"],["X-Forwarded-For","10.0.0.1, 10.0.0.2"]]', '',
  ].join('\n')), r.stdout);
}

// What examples/ruby-node.mjs prints: a one-off GET, three GETs and a form
// POST on one kept-alive connection, then the refused connection's error.
function checkRubyNode(r) {
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.deepEqual(lines.slice(0, 2), ['200', 'text/plain; charset=utf-8']);
  const first = /^GET \/hello on connection (\d+)$/.exec(lines[2]);
  assert.ok(first, r.stdout);
  const kept = /^GET \/n0 on connection (\d+)$/.exec(lines[3]);
  assert.ok(kept, r.stdout);
  assert.notEqual(kept[1], first[1], 'Net::HTTP.get_response closes its connection');
  assert.deepEqual(lines.slice(3), [
    `GET /n0 on connection ${kept[1]}`,
    `GET /n1 on connection ${kept[1]}`,
    `GET /n2 on connection ${kept[1]}`,
    `POST /f on connection ${kept[1]} with a=b+c`,
    'Errno::ECONNREFUSED: Failed to open TCP connection to 127.0.0.1:9 (Connection refused - connect(2) for "127.0.0.1" port 9)',
    '',
  ]);
}

test('npm run demo', () => {
  const r = run('npm', ['run', '--silent', 'demo']);
  checkDemo(r);
});

for (const version of [[], ['3.4']]) {
  test(`node examples/ruby-node.mjs ${version.join(' ')}`.trim(), { timeout: 120000 }, () => {
    checkRubyNode(run(process.execPath, [join(root, 'examples', 'ruby-node.mjs'), ...version]));
  });
}

test('the examples copied into a project that installed the package run unchanged', { timeout: 180000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nhw-examples-'));
  try {
    // --ignore-scripts: the checkout's generated files are already there
    const p = run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir]);
    assert.equal(p.status, 0, p.stderr);
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true,"type":"module"}\n');
    const i = run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', join(dir, tgz)], app);
    assert.equal(i.status, 0, i.stderr);
    // the ruby.wasm packages (about 100 MB each) as this checkout has them,
    // where `npm install @ruby/wasm-wasi @ruby/4.0-wasm-wasi` puts them
    mkdirSync(join(app, 'node_modules', '@ruby'));
    for (const name of ['wasm-wasi', '4.0-wasm-wasi']) symlinkSync(join(root, 'node_modules', '@ruby', name), join(app, 'node_modules', '@ruby', name), 'dir');
    for (const f of ['demo.mjs', 'ruby-node.mjs']) copyFileSync(join(root, 'examples', f), join(app, f));
    checkDemo(run(process.execPath, ['demo.mjs'], app));
    checkRubyNode(run(process.execPath, ['ruby-node.mjs'], app));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
