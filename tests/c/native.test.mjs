// Runs the native C tests (tests/c/test_*.c) under ASan/UBSan/LSan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

test('native C tests pass under AddressSanitizer and UndefinedBehaviorSanitizer', { timeout: 600_000 }, () => {
  const r = spawnSync('bash', [new URL('./run.sh', import.meta.url).pathname], { encoding: 'utf8' });
  process.stdout.write(r.stdout.replace(/^/gm, '# '));
  assert.equal(r.status, 0, `native tests failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /\d+ passed, 0 failed/);
});

test('the native build is clean under valgrind memcheck: C tests and the fuzz corpora, no leaks', { timeout: 900_000 }, () => {
  const r = spawnSync('bash', [new URL('./valgrind.sh', import.meta.url).pathname], { encoding: 'utf8' });
  process.stdout.write(r.stdout.replace(/^/gm, '# '));
  assert.equal(r.status, 0, `valgrind found errors:\n${r.stdout}\n${r.stderr}`);
  assert.equal((r.stdout.match(/\d+ passed, 0 failed/g) || []).length, 3, 'the three C test programs ran');
  const harnesses = readdirSync(new URL('../../fuzz/', import.meta.url)).filter((f) => /^fuzz_.*\.c$/.test(f));
  assert.ok(harnesses.length >= 5, `harnesses: ${harnesses}`);
  assert.equal((r.stdout.match(/^\d+ inputs$/gm) || []).length, harnesses.length, `each harness replayed its corpus (${harnesses.join(', ')})`);
});
