// Runs the native C tests (tests/c/test_*.c) under ASan/UBSan/LSan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test('native C tests pass under AddressSanitizer and UndefinedBehaviorSanitizer', { timeout: 600_000 }, () => {
  const r = spawnSync('bash', [new URL('./c/run.sh', import.meta.url).pathname], { encoding: 'utf8' });
  process.stdout.write(r.stdout.replace(/^/gm, '# '));
  assert.equal(r.status, 0, `native tests failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /\d+ passed, 0 failed/);
});
