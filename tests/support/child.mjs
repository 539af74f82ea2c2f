// Node scripts run in child processes, for what only a fresh process shows.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// fn(file) with file a script holding text, in a temporary folder removed after.
export async function withScript(text, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'nhw-script-'));
  const file = join(dir, 'script.mjs');
  writeFileSync(file, text);
  try {
    return await fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Node run on args in a child process, while this one's event loop serves:
// { status, out, err }. options: spawn's (env...).
export function runNode(args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (status) => resolve({ status, out, err }));
  });
}
