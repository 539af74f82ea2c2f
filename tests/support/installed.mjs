// The package as a user gets it: `npm pack` of this checkout, installed into
// a new project in a temporary folder with `npm install`, as README's
// install lines say. The ruby.wasm packages come from npm's cache (npm ci
// put them there), so no network is needed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages;
/** The version of a dev dependency this checkout's lock file pins (npm's cache has it). */
export const pinned = (name) => lock[`node_modules/${name}`].version;

function sh(cmd, args, opts) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

/**
 * Packs this checkout and installs the tarball into a fresh project, in a
 * folder named `app`, or options.app (a user's may hold spaces and '#').
 * Returns { dir, tarball, files (the tarball's paths), size (bytes),
 * npmInstall(...specs), run(cmd, args, opts) → Promise<{ status, stdout,
 * stderr }> (the event loop keeps running: a server of the test's can
 * answer), remove() }.
 */
export function installPackage({ app: appName = 'app' } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'net-http-wasm-user-'));
  // --ignore-scripts: `prepare` already ran (npm ci), and re-running it here
  // would rewrite generated files other tests are reading
  const [packed] = JSON.parse(sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root }));
  const tarball = join(dir, packed.filename);
  const app = join(dir, appName);
  sh('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }, null, 2));
  // net-http-wasm is the tarball; a package this checkout pins is taken at
  // that version (so npm's cache has it)
  const spec = (s) => (s === 'net-http-wasm' ? tarball : lock[`node_modules/${s}`] ? `${s}@${pinned(s)}` : s);
  const npmInstall = (...specs) =>
    sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...specs.map(spec)], { cwd: app });
  npmInstall('net-http-wasm');
  return {
    dir: app,
    tarball,
    files: packed.files.map((f) => f.path),
    size: packed.size,
    npmInstall,
    run: (cmd, args, opts = {}) => run(cmd, args, { cwd: app, timeout: 120000, ...opts }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
