// The fault tests' helpers: the net/http sources that ruby.wasm bundles
// (read out of the VM at run time, never committed) for native MRI to run,
// and the scenarios' Ruby runner (scenarios.rb) in native MRI. The chaos
// server they run against is tests/support/chaos/ (shared with the benchmarks).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { bootVM, rb, runNative } from '../browser/harness.mjs';

export const SCENARIOS_RB = readFileSync(new URL('./scenarios.rb', import.meta.url), 'utf8');

/**
 * The net/http sources of the ruby.wasm version given ('4.0' or '3.4'),
 * read out of its VM and written under a temporary folder: returns the
 * folder (for `ruby -I`) and a cleanup.
 */
export async function netHttpSources(version) {
  const vm = await bootVM(version);
  const json = await rb(
    vm,
    `require 'json'
     dir = $LOAD_PATH.find { |p| File.exist?(File.join(p, 'net/http.rb')) }
     files = Dir.glob(File.join(dir, 'net/{http.rb,protocol.rb,http/*.rb}'))
     JSON.generate(files.to_h { |f| [f.delete_prefix(dir + '/'), File.read(f)] })`,
  );
  const root = mkdtempSync(join(tmpdir(), `nethttp-src-${version}-`));
  for (const [path, text] of Object.entries(JSON.parse(json))) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return { dir: root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Runs one scenario in native MRI with the net/http sources under `srcDir`;
 * resolves with the runner's result (see scenarios.rb).
 */
export async function runMri(srcDir, name, env, { timeout = 30000 } = {}) {
  const code = `${SCENARIOS_RB}\nputs JSON.generate(NhwFaults.run(${JSON.stringify(name)}, JSON.parse(ARGV[0])))`;
  const text = await runNative(code, { timeout, load: [srcDir], argv: [JSON.stringify(env)] });
  return JSON.parse(text.trim().split('\n').pop());
}

/** The Net::HTTP version a native run with `srcDir` loads. */
export function mriVersion(srcDir) {
  return new Promise((resolve) => {
    const child = spawn('ruby', ['-I', srcDir, '-rnet/http', '-e', 'print Net::HTTP::VERSION'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let s = '';
    child.stdout.on('data', (d) => (s += d));
    child.on('close', () => resolve(s));
  });
}

/**
 * Loads the scenarios' runner into a VM that has Net::HTTP installed, and
 * returns run(name, env) → the runner's result (vm.eval when the transport
 * blocks, vm.evalAsync when it waits).
 */
export function wasmRunner(vm, blocking) {
  vm.eval(`require 'net/http'; require 'json'\n${SCENARIOS_RB}\nnil`);
  return async (name, env) => {
    const code = `JSON.generate(NhwFaults.run(${JSON.stringify(name)}, JSON.parse(${JSON.stringify(JSON.stringify(env))})))`;
    const v = blocking ? vm.eval(code) : await vm.evalAsync(code);
    return JSON.parse(v.toString());
  };
}

/** The scenarios' names, as scenarios.rb lists them. */
export function scenarioNames() {
  return new Promise((resolve, reject) => {
    const child = spawn('ruby', ['-rjson', '-e', `${SCENARIOS_RB}\nputs JSON.generate(NhwFaults.names)`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    child.stdout.on('data', (d) => (s += d));
    child.on('close', (status) => (status === 0 ? resolve(JSON.parse(s)) : reject(new Error(`ruby exited with ${status}`))));
  });
}

/** A result with what varies between runs (file descriptor numbers) masked. */
export function normalize(result) {
  return JSON.parse(JSON.stringify(result).replace(/fd \d+/g, 'fd N'));
}
