// net-http-wasm/ruby in Node: Ruby's own Net::HTTP inside a ruby.wasm VM,
// over node:net / node:tls, with this package's codec doing the byte work.
//
//   import { installNetHttp } from 'net-http-wasm/ruby';
//   const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
//   installNetHttp(vm, { blocking: true });
//   vm.eval(`require 'net/http'; puts Net::HTTP.get(URI('http://127.0.0.1:8080/'))`);
import { mkdtempSync, mkdirSync, rmSync, existsSync, statSync, readFileSync } from 'node:fs';
import { tmpdir, availableParallelism } from 'node:os';
import { join, basename, resolve as resolvePath } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { install, prepare, reserveMalloc } from './install.mjs';
import { patchRubyWasm, reserveBeside, BOOT_BESIDE } from './module-patch.mjs';
import { nodeAsyncTransport } from './transports/node-async.mjs';
import { nodeBlockingTransport } from './transports/node-blocking.mjs';
import { nodeCompileCache } from './node-compile-store.mjs';

const host = {
  defaultTransport: 'node',
  node: (blocking) => (blocking ? nodeBlockingTransport() : nodeAsyncTransport()),
  compileCache: nodeCompileCache,
};

/**
 * Makes `require 'net/http'` work in a ruby.wasm VM and routes Net::HTTP
 * through host sockets, with this package's codec writing requests and
 * reading responses. Options:
 *   blocking   true: Net::HTTP blocks this thread while it waits, as it
 *              blocks a Ruby thread natively (sockets in an I/O thread,
 *              plain ones to loopback addresses in this thread):
 *              the fastest, and it works from vm.eval and inside any
 *              block; a server in this same thread cannot answer it.
 *              false (default): waits are promises, awaited by switching
 *              fibers inside vm.evalAsync; the event loop runs meanwhile.
 *   transport  'node' (default), 'fetch', or a function
 *              ({ host, port, tls, timeoutMs }) → Promise<stream>
 *   codec      true (default): the codec does the byte work; false: net/http's
 *              own Ruby code does, over the same sockets
 *   profile    '4.0', '3.4' or 'head' (default: from the VM's RUBY_VERSION)
 *   tls        { ca: string | string[], rejectUnauthorized: boolean }: extra
 *              trusted certificates (PEM) / verification off, for every HTTPS
 *              connection (Net::HTTP's ca_file, cert_store, verify_mode and
 *              verify_hostname are honoured too)
 *   strictResponses  true: read responses in the codec's strict mode
 *              (RFC 9112 rejections raise Net::HTTPBadResponse; not MRI);
 *              also settable later as handle.bridge.strictResponses
 *   fetch      the fetch function to use (transport 'fetch')
 *   reserve    bytes of the VM's memory given to malloc at once, before
 *              Net::HTTP loads (default 32 MiB; 0: none): see createRubyVM
 * Returns a handle: { bridge, uninstall() } (uninstall closes open sockets
 * and stops the I/O thread). From then on a trap of the VM's WebAssembly code
 * kills the VM, as createRubyVM's: the pending vm.evalAsync calls reject and
 * every later call fails at once with ERR_RUBY_VM_DEAD (vm-guard.mjs).
 */
export function installNetHttp(vm, options = {}) {
  return install(vm, options, host);
}

export { patchRubyWasm };

/**
 * A ruby.wasm VM ready for the network, in one call: WASI with the given
 * host folders mounted, a writable /tmp, the environment, rubygems (lazily),
 * Net::HTTP installed. Options (and installNetHttp's, passed through):
 *   ruby     '4.0' (default), '3.4', '3.3', '3.2' or 'head': the
 *            @ruby/<v>-wasm-wasi package to load; or a compiled
 *            WebAssembly.Module of a ruby.wasm build
 *   gems     host folders to mount at /gems/<name> (writable: node:wasi
 *            has no read-only mounts) and add to
 *            $LOAD_PATH (a gem's root: its lib/; any other folder: itself),
 *            e.g. a gem's unpacked source or /usr/lib/ruby/vendor_ruby
 *   mounts   { guestPath: hostPath } more folders, not on $LOAD_PATH
 *   tmp      true (default): a fresh host temporary folder as /tmp, removed
 *            by dispose(), or when the process ends without it; a path:
 *            that folder (kept); false: none
 *   env      false (default): an empty environment; true: this process's
 *            (http_proxy, no_proxy... included); an object: exactly that
 *   rubygems 'lazy' (default): rubygems loaded when first needed (a Gem
 *            constant or method, Kernel#gem, or a require that only a gem
 *            of the gem directories satisfies: base64, csv... in Ruby 4.0);
 *            true: `require 'rubygems'` now; false: neither (ruby.wasm 3.4
 *            loads it at boot whatever this says)
 *   reserve  bytes of the VM's memory given to malloc at once, beyond
 *            what the VM's own boot takes (320 MiB, given with it before
 *            Ruby starts; default 32 MiB; 0: none, not even the boot's).
 *            malloc grows a wasm memory 64 KiB at a time, and V8 may
 *            collect garbage after each growth (a full collection, 10-100
 *            ms, after every growth of a large memory with
 *            --no-incremental-marking): without the reserve the boot and
 *            the first requests of a VM pay for dozens of them. Pages
 *            never touched take no RAM.
 *   incrementalMarking  false: turn V8's incremental marking off for the
 *            whole process (--no-incremental-marking) before the VM is made,
 *            which the garbage collectors of Node 20 and 22 need with
 *            ruby.wasm (Node 22 crashes with a segmentation fault while
 *            createRubyVM starts Ruby otherwise); true: leave V8's flags
 *            alone. Default: false on Node 20 and 22; true on Node 24 and
 *            later, Bun and Deno.
 *   tierUp   true (default): V8 compiles ruby.wasm's hot functions again
 *            with its optimizing compiler, in background threads; false:
 *            baseline code only (--liftoff-only for the whole process, set
 *            before createRubyVM compiles the module; Node only): on a busy
 *            machine a fresh VM boots and reaches its steady request rate
 *            much sooner (benchmarks/rubywasm-boot.mjs); once warm, Ruby
 *            that runs in the interpreter's loop is no slower, Ruby whose
 *            time goes to C (Hash, String, Regexp work) 1.2-1.8x slower; every
 *            other WebAssembly module of the process runs baseline code too.
 *   tierUpTasks  how many functions V8 optimizes at once in its background
 *            threads (--wasm-num-compilation-tasks, for the whole process:
 *            every WebAssembly module's optimizing compiles, none of its
 *            code), or null: V8's setting left alone. Default: one fewer than the
 *            CPUs where there are 4 or fewer (Node's V8 runs 4 background
 *            threads: more would leave Ruby's thread without a CPU of its
 *            own while V8 optimizes ruby.wasm, most of a fresh VM's first
 *            seconds), else null. Unchanged where the process was started
 *            with --wasm-num-compilation-tasks; Node only.
 *   tierUpFull  true: on Node 20 (V8 11), V8 optimizes ruby.wasm's largest
 *            functions (the interpreter's loop, Prism's parser and compiler,
 *            the regular-expression matcher) as it does
 *            the others, with its full register allocator
 *            (--no-turbo-use-mid-tier-regalloc-for-huge-functions, for the
 *            whole process): once warm, Ruby that runs in the interpreter's
 *            loop runs up to twice as fast; but optimizing those few
 *            functions then takes ~8 s more of a background thread, up to
 *            ~260 MB while one compiles, and a program's end may wait
 *            seconds for it. For a long-running process. false (default):
 *            V8's own choice. Later V8s (Node 22 and later, Bun, Deno) have
 *            no such fallback: they optimize those functions fully already.
 *   lazyZeroing  true (default): the module's memset and mmap are patched
 *            before it is compiled (patchRubyWasm, module-patch.mjs): memory
 *            fresh from memory.grow is not zeroed again, so the boot does not
 *            write the ~256 MiB that Ruby 3.4+ maps for its shapes, nor a
 *            fiber pool's new stacks; and malloc grows the memory 4 MiB at
 *            a time, not 64 KiB (V8 may collect garbage after every growth);
 *            false: the module as it is. (A compiled module passed as ruby
 *            is used as it is.)
 * Returns { vm, handle, tmp, dispose() }. Once the VM's WebAssembly code
 * traps (it is then left half-way through a call), the VM is dead: the
 * pending vm.evalAsync calls reject, and every later call fails at once, with
 * an Error of code 'ERR_RUBY_VM_DEAD' (js/ruby/vm-guard.mjs).
 */
export async function createRubyVM(options = {}) {
  const release = holdEventLoop();
  try {
    return await makeRubyVM(options);
  } finally {
    release();
  }
}

async function makeRubyVM(options) {
  const { ruby = '4.0', gems = [], mounts = {}, tmp = true, env = false, rubygems = 'lazy', reserve = RESERVE, incrementalMarking = !OLD_V8, tierUp = true, tierUpTasks = TIER_UP_TASKS, tierUpFull = false, lazyZeroing = true, ...netHttp } = options;
  if (typeof incrementalMarking !== 'boolean') throw new TypeError(`createRubyVM: incrementalMarking must be true or false, not ${String(incrementalMarking)}`);
  if (typeof tierUp !== 'boolean') throw new TypeError(`createRubyVM: tierUp must be true or false, not ${String(tierUp)}`);
  if (typeof tierUpFull !== 'boolean') throw new TypeError(`createRubyVM: tierUpFull must be true or false, not ${String(tierUpFull)}`);
  if (typeof lazyZeroing !== 'boolean') throw new TypeError(`createRubyVM: lazyZeroing must be true or false, not ${String(lazyZeroing)}`);
  nodeCompileCache(netHttp.compileCache); // (checked before the module is compiled)
  if (!incrementalMarking) (await import('node:v8')).setFlagsFromString('--no-incremental-marking');
  await setTierUpTasks(tierUpTasks);
  if (tierUpFull && MID_TIER_FOR_HUGE) (await import('node:v8')).setFlagsFromString('--no-turbo-use-mid-tier-regalloc-for-huge-functions');
  if (!tierUp && !process.versions.bun && !process.versions.deno) (await import('node:v8')).setFlagsFromString('--liftoff-only');
  const { WASI } = await quietWasi();
  const require = createRequire(import.meta.url);
  const { RubyVM } = await import(pathToFileURL(installed(require, '@ruby/wasm-wasi', '@ruby/wasm-wasi')).href);
  let lazy = false; // mmap patched: zeroes only what was in use before
  let module = ruby;
  if (!(ruby instanceof WebAssembly.Module)) {
    const bytes = readFileSync(installed(require, `@ruby/${ruby}-wasm-wasi/dist/ruby+stdlib.wasm`, `@ruby/${ruby}-wasm-wasi`));
    if (lazyZeroing) lazy = patchRubyWasm(bytes).mmap;
    module = await WebAssembly.compile(bytes);
  }
  // One host temporary folder holds /tmp (tmp: true) and the skeleton of
  // /gems: Ruby's require takes the realpath of every file it loads, so
  // /gems itself must exist; each gem is mounted over /gems/<name> (the
  // longest matching mount wins).
  for (const [what, dir] of [...[].concat(gems).map((d) => ['gems', d]), ...Object.entries(mounts).map(([g, d]) => [`mounts['${g}']`, d])]) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`createRubyVM: ${what} names ${resolvePath(String(dir))}, which is not a folder`);
  }
  const base = mkdtempSync(join(tmpdir(), 'ruby-wasm-vm-'));
  try {
    const made = await makeVM(base, { module, RubyVM, WASI, gems, mounts, tmp, env, rubygems, reserve, lazy, netHttp, ruby });
    removeAtExit(base);
    return made;
  } catch (e) {
    rmSync(base, { recursive: true, force: true });
    throw e;
  }
}

// The host folders of VMs not disposed of: removed when the process (or the
// worker thread that made them) ends, as a program that never calls
// dispose() ends; one listener for all of them.
const folders = new Set();
let exitListener = false;

function removeAtExit(base) {
  folders.add(base);
  if (exitListener) return;
  exitListener = true;
  process.on('exit', () => {
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });
}

async function makeVM(base, { module, RubyVM, WASI, gems, mounts, tmp, env, rubygems, reserve, lazy, netHttp, ruby }) {
  if (!(typeof reserve === 'number' && reserve >= 0 && reserve <= MAX_RESERVE)) throw new TypeError(`createRubyVM: reserve must be a number of bytes from 0 to ${MAX_RESERVE}, not ${String(reserve)}`);
  const preopens = {};
  const loadPath = [];
  const names = new Set();
  for (const dir of [].concat(gems)) {
    const host = resolvePath(dir);
    let name = basename(host);
    for (let i = 2; names.has(name); i++) name = `${basename(host)}-${i}`;
    names.add(name);
    mkdirSync(join(base, 'gems', name), { recursive: true });
    preopens[`/gems/${name}`] = host;
    const lib = join(host, 'lib');
    loadPath.push(existsSync(lib) && statSync(lib).isDirectory() ? `/gems/${name}/lib` : `/gems/${name}`);
  }
  if (names.size) preopens['/gems'] = join(base, 'gems');
  Object.assign(preopens, mounts);
  let tmpDir = null;
  if (tmp) {
    tmpDir = tmp === true ? join(base, 'tmp') : resolvePath(tmp);
    mkdirSync(tmpDir, { recursive: true });
    preopens['/tmp'] = tmpDir;
  }
  const vars = env === true ? { ...process.env } : env || {};
  if (tmpDir && vars.TMPDIR == null) vars.TMPDIR = '/tmp';
  if (ruby === '3.2' && vars.RUBY_FIBER_MACHINE_STACK_SIZE == null) vars.RUBY_FIBER_MACHINE_STACK_SIZE = String(FIBER_STACK_32);
  const wasip1 = reactorWasi(quietly(() => new WASI({ version: 'preview1', returnOnExit: true, args: ['ruby'], env: vars, preopens })));
  // malloc's share in one growth, before Ruby starts (after the module's
  // own initialization): what ruby.wasm's boot takes, and `reserve` more.
  // With mmap patched, the boot's mmaps must grow the memory instead: its
  // other allocations get a block beside them, `reserve` comes after the boot
  if (reserve > 0) {
    const initialize = wasip1.initialize;
    wasip1.initialize = function (instance) {
      const r = initialize.call(this, instance);
      if (lazy) reserveBeside(instance.exports, BOOT_BESIDE);
      else reserveMalloc(instance.exports, BOOT + reserve);
      return r;
    };
  }
  const { vm } = await RubyVM.instantiateModule({ module, wasip1 });
  prepare(vm, { loadPath, rubygems });
  // (which guards the VM: a trap kills it, and what waits on it rejects
  // rather than hangs)
  const handle = installNetHttp(vm, { ...netHttp, reserve: lazy ? reserve : 0 });
  return {
    vm,
    handle,
    tmp: tmpDir,
    async dispose() {
      await handle.uninstall();
      rmSync(base, { recursive: true, force: true });
      folders.delete(base);
    },
  };
}

// While createRubyVM awaits what V8 settles from a task of its own
// (WebAssembly.compile), there may be nothing else on Node's event loop: Node
// then runs that task, and the program's code after it (the caller's first
// requests included), from its drain step, which ends by waiting for every
// background task of V8; the first wait on the loop after that (a socket's
// connect, its response) then lasts until V8 has optimized the hot functions
// ruby.wasm ran so far (1-2 s of a fresh process on 2 CPUs). A timer held
// meanwhile keeps the loop alive: the task, and the code after it, run from
// the loop. Returns what releases it.
function holdEventLoop() {
  const timer = setInterval(() => {}, 1 << 30);
  return () => clearInterval(timer);
}

// createRubyVM's default reserve, and what it adds for the boot of the
// VM itself (ruby.wasm 4.0's takes ~290 MiB: 36 MiB → 320 MiB at init).
// Ruby 3.2's setjmp takes much of a fiber's machine stack in ruby.wasm: with
// the default size (256 KiB), code as plain as
// `{ 'n' => [1] }.map { |k, v| v.map { } }` raises SystemStackError inside
// evalAsync (which runs in a fiber); with 1 MiB, Net::HTTP inside Array#map
// inside a thread does. createRubyVM gives each 3.2 fiber 2 MiB
// (RUBY_FIBER_MACHINE_STACK_SIZE), unless env sets it: as deep as the 8 MiB
// of ruby.wasm's own 3.2 script loader in a probe of nested blocks, and 400
// fibers at once stay far below 2 GiB of memory, past which ruby.wasm
// 2.10's JS glue reads its return areas at negative offsets (with 8 MiB
// they do not).
const FIBER_STACK_32 = 2 << 20;
const RESERVE = 32 << 20;
const BOOT = 320 << 20;
const MAX_RESERVE = 1 << 30;

// createRubyVM's tierUpTasks by default: V8's optimizing compiles and
// Ruby's thread, on a machine of 4 CPUs or fewer, no more than its CPUs
const CPUS = availableParallelism();
const TIER_UP_TASKS = CPUS <= 4 ? Math.max(1, CPUS - 1) : null;

// Sets V8's --wasm-num-compilation-tasks (tierUpTasks), unless null or
// given on the command line; Node only.
async function setTierUpTasks(n) {
  if (!(n === null || (Number.isInteger(n) && n >= 1 && n <= 128))) throw new TypeError(`createRubyVM: tierUpTasks must be null or an integer from 1 to 128, not ${String(n)}`);
  if (n === null || process.versions.bun || process.versions.deno || process.execArgv.some((a) => /^--wasm[-_]num[-_]compilation[-_]tasks(=|$)/.test(a))) return;
  (await import('node:v8')).setFlagsFromString(`--wasm-num-compilation-tasks=${n}`);
}

// Node 20 (V8 11.3) or 22 (V8 12.4); not Bun or Deno (which report a Node
// version too).
const OLD_V8 = !process.versions.bun && !process.versions.deno && Number(process.versions.node.split('.')[0]) < 24;

// V8 11 (Node 20) compiles a function too large for its full register
// allocator's limit with a cheaper one (its mid-tier allocator), whose code
// for ruby.wasm's interpreter loop runs slower than the baseline code
// (tierUpFull); V8 12 and later have no such fallback.
const MID_TIER_FOR_HUGE = !process.versions.bun && !process.versions.deno && Number(process.versions.v8.split('.')[0]) < 12;

// The path of an optional peer package's file, or an error naming the package.
function installed(require, file, pkg) {
  try {
    return require.resolve(file);
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND') {
      throw new Error(`createRubyVM needs the package ${pkg}: npm install ${pkg}${pkg === '@ruby/wasm-wasi' ? '' : ' @ruby/wasm-wasi'}`, { cause: e });
    }
    throw e;
  }
}

// node:wasi warns that it is experimental: Node's on import, Deno's when
// a WASI is made.
function quietWasi() {
  return quietly(() => import('node:wasi'));
}

function quietly(fn) {
  const emit = process.emitWarning;
  process.emitWarning = (w, ...rest) => {
    const text = typeof w === 'string' ? w : w && w.message;
    if (typeof text === 'string' && text.includes('WASI')) return undefined;
    return emit.call(process, w, ...rest);
  };
  let out;
  try {
    out = fn();
  } catch (e) {
    process.emitWarning = emit;
    throw e;
  }
  if (!(out instanceof Promise)) {
    process.emitWarning = emit;
    return out;
  }
  return out.finally(() => {
    process.emitWarning = emit;
  });
}

// RubyVM.instantiateModule calls wasip1.initialize(instance), which Bun's
// node:wasi lacks; its setMemory() and the module's _initialize() do the
// same work (its file system is the host's, as in Node).
function reactorWasi(wasi) {
  if (typeof wasi.initialize === 'function') return wasi;
  if (typeof wasi.setMemory !== 'function') {
    throw new Error('createRubyVM: this runtime\'s node:wasi has neither initialize() nor setMemory(); make the VM with RubyVM.instantiateModule and a WASI of your own (e.g. @bjorn3/browser_wasi_shim), then call installNetHttp');
  }
  wasi.initialize = (instance) => {
    wasi.setMemory(instance.exports.memory);
    if (typeof instance.exports._initialize === 'function') instance.exports._initialize();
  };
  return wasi;
}
