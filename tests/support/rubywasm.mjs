// ruby.wasm VMs for the tests and the benchmarks (imported by
// tests/support/browser/harness.mjs and benchmarks/rubywasm-nethttp.mjs), and
// the framing of captured request bytes.
import v8 from 'node:v8';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Node 20 crashes in the GC while wasm memory grows unless incremental
// marking is off (see /work/shared/notes/oracles.md).
v8.setFlagsFromString('--no-incremental-marking');

const require = createRequire(import.meta.url);
// Every ruby.wasm the tests know, and the codec profile each one's net/http
// gets from createRubyVM / install (3.2 and 3.3 bundle net-http 0.4.1, head
// 4.0's 0.9.1 with more checks).
export const ALL_VERSIONS = ['4.0', '3.4', '3.3', '3.2', 'head'];
export const PROFILE_OF = Object.freeze({ '4.0': '4.0', '3.4': '3.4', '3.3': '3.4', '3.2': '3.4', head: 'head' });
// Net::HTTP::VERSION and RUBY_VERSION's start in each (head: the net-http of
// its day, which still says 0.9.1)
export const NET_HTTP_OF = Object.freeze({ '4.0': '0.9.1', '3.4': '0.6.0', '3.3': '0.4.1', '3.2': '0.4.1', head: '0.9.1' });
export const RUBY_OF = Object.freeze({ '4.0': '4.0.', '3.4': '3.4.', '3.3': '3.3.', '3.2': '3.2.', head: '4.1.' });

/** A comma-separated list of versions (an env variable's value), checked; `fallback` when unset or empty. */
export function versionList(text, fallback, name = 'the version list') {
  if (text == null || !text.trim()) return [...fallback];
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const v of list) {
    if (!ALL_VERSIONS.includes(v)) throw new Error(`${name}: unknown ruby.wasm version '${v}' (known: ${ALL_VERSIONS.join(', ')})`);
  }
  return [...new Set(list)];
}

/**
 * Why a test that parses certificates in Ruby cannot run on this VM over a
 * waiting transport (its code runs in fibers), or false. ruby.wasm 3.2 and
 * 3.3 ship Rubies (3.2.4, 3.3.3) from before Ruby aligned a fiber's stack
 * pointer to 16 bytes (ruby/ruby#9737, backported later): in a fiber,
 * OpenSSL::X509::Certificate.new can then trap the VM (memory access out of
 * bounds; a plain VM does it too: Fiber.new(blocking: true) { ... }).
 */
export function fiberCertTrap(version, blocking) {
  return !blocking && (version === '3.2' || version === '3.3') ? `ruby.wasm ${version} can trap parsing a certificate in a fiber (docs/ruby-wasm.md)` : false;
}

// The versions the ruby.wasm suites iterate: ['4.0', '3.4'] unless
// NETHTTP_RUBYWASM_VERSIONS lists others (e.g. 3.2,3.3,head).
export const VERSIONS = versionList(process.env.NETHTTP_RUBYWASM_VERSIONS, ['4.0', '3.4'], 'NETHTTP_RUBYWASM_VERSIONS');

let WASI = null;
let RubyVM = null;
const modules = new Map();

async function deps() {
  if (!WASI) {
    const emit = process.emitWarning;
    process.emitWarning = (w, ...rest) => {
      const text = typeof w === 'string' ? w : w && w.message;
      if (typeof text === 'string' && text.includes('WASI')) return;
      return emit.call(process, w, ...rest);
    };
    try {
      ({ WASI } = await import('node:wasi'));
    } finally {
      process.emitWarning = emit;
    }
  }
  if (!RubyVM) ({ RubyVM } = await import('@ruby/wasm-wasi'));
}

export function rubyWasmPath(version) {
  return require.resolve(`@ruby/${version}-wasm-wasi/dist/${process.env.NETHTTP_RUBY_DEBUG_WASM ? 'ruby.debug+stdlib.wasm' : 'ruby+stdlib.wasm'}`);
}

/** Whether @ruby/<version>-wasm-wasi is installed (its ruby+stdlib.wasm resolves). */
export function rubyWasmInstalled(version) {
  try {
    require.resolve(`@ruby/${version}-wasm-wasi/dist/ruby+stdlib.wasm`);
    return true;
  } catch {
    return false;
  }
}

/** A fresh ruby.wasm VM (any of ALL_VERSIONS); `preopens` maps host folders. */
export async function bootVM(version, preopens = {}) {
  await deps();
  if (!modules.has(version)) modules.set(version, WebAssembly.compile(readFileSync(rubyWasmPath(version))));
  const module = await modules.get(version);
  // (3.2: the fiber stack createRubyVM gives it: js/ruby/node.mjs FIBER_STACK_32)
  const env = version === '3.2' ? { RUBY_FIBER_MACHINE_STACK_SIZE: String(2 << 20) } : {};
  const wasip1 = new WASI({ version: 'preview1', returnOnExit: true, args: ['ruby'], env, preopens });
  const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
  vm.eval('$stdout.sync = true; $stderr.sync = true; nil');
  return vm;
}

/** Runs Ruby code in evalAsync (or in a thread VM: tests/support/browser/harness.mjs bootThreadVM) and returns its value's to_s. */
export async function rb(vm, code) {
  if (typeof vm.rb === 'function') return vm.rb(code);
  const v = await vm.evalAsync(code);
  return v.toString();
}

/** Runs Ruby code whose last value is a JSON string; returns it parsed. */
export async function rbJSON(vm, code) {
  return JSON.parse(await rb(vm, `require 'json'\n(begin\n${code}\nend).to_json`));
}

/**
 * Runs Ruby code (its last value a Hash) under GC.stress, then adds `on`:
 * whether the collector runs by itself again afterwards (GC.disable answers
 * false), as it must once nothing waits. Returns the Hash, as rbJSON.
 */
export async function rbUnderGCStress(vm, code) {
  return rbJSON(vm, `
    GC.stress = true
    begin
      got = begin
${code}
      end
    ensure
      GC.stress = false
    end
    on = !GC.disable
    GC.enable
    got.merge(on: on)`);
}

// Splits complete requests (head + Content-Length body) off a byte buffer.
export function takeRequest(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.subarray(0, end).toString('latin1');
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  const len = m ? Number(m[1]) : 0;
  if (buf.length < end + 4 + len) return null;
  const lines = head.split('\r\n');
  const [method, target] = lines[0].split(' ');
  return { method, target, head, raw: buf.subarray(0, end + 4 + len), body: buf.subarray(end + 4, end + 4 + len), rest: buf.subarray(end + 4 + len) };
}

/**
 * Calls into a worker thread that answers { id, ... } messages with
 * { id, value } or { id, error }, once it has posted { ready: true }:
 * { send(message) → a promise of its value, worker }.
 */
export async function workerCalls(url, workerData) {
  const worker = new Worker(url, { workerData });
  const waiting = new Map();
  let next = 0;
  worker.on('message', (m) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error != null) w.reject(new Error(m.error));
    else w.resolve(m.value);
  });
  await new Promise((resolve, reject) => {
    worker.once('message', (m) => (m && m.ready ? resolve() : reject(new Error('the worker did not start'))));
    worker.once('error', reject);
  });
  const send = (msg) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...msg });
    });
  return { send, worker };
}

/**
 * A VM made by createRubyVM(options) in a worker thread
 * (tests/support/threads/vm-worker.mjs), so that servers on the test's
 * thread answer while the VM's thread waits (a blocking transport blocks
 * it): { run(code, async) → its to_s, close() }.
 */
export async function workerVM(options) {
  const { send, worker } = await workerCalls(new URL('./threads/vm-worker.mjs', import.meta.url), options);
  return {
    run: (code, async) => send({ code, async }),
    async close() {
      await send({ close: true });
      await worker.terminate();
    },
  };
}
