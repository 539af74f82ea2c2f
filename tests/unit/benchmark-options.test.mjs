// The benchmarks' entry points print their usage for --help and refuse an
// option they do not take, before anything runs or any result is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';

const root = new URL('../../', import.meta.url).pathname;
const run = (file, args) => spawnSync(process.execPath, [`${root}benchmarks/${file}`, ...args], { cwd: root, encoding: 'utf8', timeout: 20000 });

for (const [file, results, line] of [
  ['run.mjs', 'benchmarks/results/latest.json', 'npm run bench'],
  ['rubywasm-nethttp.mjs', 'benchmarks/results/rubywasm-nethttp.json', 'node benchmarks/rubywasm-nethttp.mjs'],
]) {
  test(`${file}: --help and an unknown option`, () => {
    const before = statSync(`${root}${results}`).mtimeMs;
    const help = run(file, ['--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.ok(help.stdout.includes(line), help.stdout);
    const bad = run(file, ['--passes', '3', '--no-such-option']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^unknown option: --no-such-option\n/);
    assert.ok(bad.stderr.includes(line));
    // a valued option without its value is refused too
    assert.equal(run(file, ['--passes']).status, 2);
    assert.equal(statSync(`${root}${results}`).mtimeMs, before);
  });
}
