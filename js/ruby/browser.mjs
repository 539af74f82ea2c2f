// net-http-wasm/ruby in browsers: Ruby's own Net::HTTP inside a ruby.wasm VM,
// each request sent with fetch() (see transports/fetch-async.mjs), or, with { blocking: true }
// in a dedicated Worker, with fetch() in a helper Worker streaming into shared
// memory where the page is cross-origin isolated (fetch-sync.mjs), else with a
// synchronous XMLHttpRequest (xhr-sync.mjs).
// Call `await init()` from net-http-wasm first where the page may not
// compile the codec synchronously (createRubyVM does it).
import { install, prepare } from './install.mjs';
import { init } from '../index.mjs';
import { xhrSyncTransport } from './transports/xhr-sync.mjs';
import { fetchSyncTransport, canStream } from './transports/fetch-sync.mjs';
import { hasJspi, jspiState, jspiImports, jspiEval } from './transports/jspi.mjs';
import { guardVM } from './vm-guard.mjs';
import { patchRubyWasm, reserveBeside, BOOT_BESIDE } from './module-patch.mjs';

const host = { defaultTransport: 'fetch', blockingFetch };

function blockingFetch(options) {
  // a synchronous XMLHttpRequest gives bytes and keeps a timeout only in a
  // Worker (and a page's main thread must not block)
  const inWorker = typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope;
  if (!inWorker || typeof XMLHttpRequest !== 'function')
    throw new TypeError('installNetHttp: { blocking: true } in a browser needs a dedicated Worker (synchronous XMLHttpRequest); on a page use the default (fetch(), awaited in vm.evalAsync)');
  // (SharedArrayBuffer and Atomics.wait: a cross-origin isolated page)
  if (options.stream !== false && canStream()) return fetchSyncTransport();
  if (options.stream === true) throw new TypeError('installNetHttp: { stream: true } needs a dedicated Worker of a cross-origin isolated page (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp): SharedArrayBuffer, Atomics.wait');
  return xhrSyncTransport(XMLHttpRequest);
}

/**
 * Makes `require 'net/http'` work in a ruby.wasm VM, over fetch(). Options:
 * transport ('fetch', or a function ({ host, port, tls, timeoutMs }) →
 * Promise<stream>), codec, profile, strictResponses, fetch (the function to
 * use): as in Node (js/ruby/node.mjs). blocking: true (in a dedicated
 * Worker only): Net::HTTP works from vm.eval, inside any block and in a
 * Ruby Proc that JS calls. Where the page is cross-origin isolated, each
 * request is a fetch() in a helper Worker, streamed through shared memory
 * (transports/fetch-sync.mjs: bodies as they arrive, read_timeout per
 * wait); else (or with stream: false) a synchronous XMLHttpRequest (see
 * transports/xhr-sync.mjs for what it cannot do: the timeout covers the
 * whole exchange, the body comes whole, any failure is
 * NetHttpWasm::FetchError). stream: true refuses the fallback.
 * Returns { bridge, uninstall() }. From then on a trap of the VM's
 * WebAssembly code kills the VM: the pending vm.evalAsync calls reject and
 * every later call fails at once with ERR_RUBY_VM_DEAD (vm-guard.mjs).
 */
export function installNetHttp(vm, options = {}) {
  return install(vm, options, host);
}

// (patch the bytes before WebAssembly.compile: js/ruby/module-patch.mjs)
export { patchRubyWasm };

/**
 * A ruby.wasm VM ready for the network in a page, in one call, as Node's
 * createRubyVM: WASI with a writable /tmp and the given gems, the
 * environment, rubygems loaded, the codec initialized, Net::HTTP installed.
 * This package has no dependencies: pass what the page loaded.
 *   ruby     a ruby.wasm build with its standard library: the Response of
 *            its fetch() or a promise of it (`fetch('…/@ruby/4.0-wasm-wasi/
 *            dist/ruby+stdlib.wasm')`), or its bytes (copied), which are
 *            patched (lazyZeroing) and compiled; or a compiled
 *            WebAssembly.Module, used as it is
 *   lazyZeroing  true (default): the module's bytes are patched before they
 *            are compiled (patchRubyWasm): a fresh VM does not write the
 *            ~256 MiB Ruby 3.4+ maps at boot; false: compiled as they are
 *   RubyVM   the RubyVM class of @ruby/wasm-wasi
 *   wasi     the module @bjorn3/browser_wasi_shim (import * as wasi from …)
 *   gems     { name: { 'lib/name.rb': text or bytes, … } }: files put (read
 *            only) at /gems/<name>/…; the gem's lib/ goes on $LOAD_PATH when
 *            it has one, else /gems/<name>
 *   tmp      true (default): an empty writable /tmp in memory; false: none
 *   env      { NAME: 'value' } (default: none)
 *   rubygems true (default): `require 'rubygems'`
 *   print    (text, fd) => …: Ruby's $stdout (fd 1) and $stderr (fd 2), line
 *            by line (default: console.log / console.warn; false: dropped)
 *   jspi     true: the VM made for JavaScript Promise Integration (where the
 *            engine has WebAssembly.Suspending): evalJspi(code) runs Ruby
 *            whose waits suspend the VM (transports/jspi.mjs)
 * The other options go to installNetHttp. Returns { vm, handle, wasi (the
 * WASI instance), evalJspi (with jspi), dispose() }. Once the VM's
 * WebAssembly code traps (it is then left half-way through a call), the VM is
 * dead: the pending vm.evalAsync (and evalJspi) calls reject, and every later
 * call fails at once, with an Error of code 'ERR_RUBY_VM_DEAD'
 * (js/ruby/vm-guard.mjs; installNetHttp guards the VM, whoever made it).
 */
export async function createRubyVM(options = {}) {
  const { ruby, RubyVM, wasi: shim, gems = {}, tmp = true, env = {}, rubygems = true, print, jspi = false, lazyZeroing = true, ...netHttp } = options;
  if (typeof lazyZeroing !== 'boolean') throw new TypeError(`createRubyVM: lazyZeroing must be true or false, not ${String(lazyZeroing)}`);
  if (!RubyVM || typeof RubyVM.instantiateModule !== 'function') throw new TypeError("createRubyVM: RubyVM must be @ruby/wasm-wasi's RubyVM");
  if (!shim || typeof shim.WASI !== 'function') throw new TypeError('createRubyVM: wasi must be the module @bjorn3/browser_wasi_shim');
  if (jspi && !hasJspi()) throw new TypeError('createRubyVM: { jspi: true } needs JavaScript Promise Integration (WebAssembly.Suspending; Chromium 137 or later)');
  if (jspi && netHttp.blocking) throw new TypeError('createRubyVM: { jspi: true } waits over fetch() by suspending the VM: it takes no { blocking: true }');
  const [{ module, lazy }] = await Promise.all([rubyModule(ruby, lazyZeroing), init()]);
  const { WASI, File, Directory, OpenFile, PreopenDirectory, ConsoleStdout } = shim;
  const out = print === undefined ? (text, fd) => (fd === 1 ? console.log(text) : console.warn(text)) : print;
  const stream = (fd) => (out ? ConsoleStdout.lineBuffered((line) => out(line, fd)) : new OpenFile(new File([])));
  const fds = [new OpenFile(new File([])), stream(1), stream(2)];
  // the shim's directories report no rights, and Ruby asks for them
  // (File.writable?, as Dir.tmpdir does, checks the rights files opened
  // under a directory may have): /tmp may do anything, /gems read
  if (tmp) fds.push(withRights(new PreopenDirectory('/tmp', new Map()), 0x1fffffffn));

  const loadPath = [];
  const names = Object.keys(gems);
  if (names.length) {
    const root = new Map();
    for (const name of names) {
      root.set(name, tree(gems[name], File, Directory));
      loadPath.push(Object.keys(gems[name]).some((p) => p.startsWith('lib/')) ? `/gems/${name}/lib` : `/gems/${name}`);
    }
    fds.push(withRights(new PreopenDirectory('/gems', root), READ));
  }
  const vars = { ...env };
  if (tmp && vars.TMPDIR == null) vars.TMPDIR = '/tmp';
  const wasi = new WASI(['ruby'], Object.entries(vars).map(([k, v]) => `${k}=${v}`), fds, { debug: false });
  const state = jspi ? jspiState() : null;
  // (a patched module's boot: its small allocations from a block beside
  // malloc's top, so that its mmaps grow the memory and are not zeroed)
  if (lazy) {
    const initialize = wasi.initialize;
    wasi.initialize = function (instance) {
      const r = initialize.call(this, instance);
      reserveBeside(instance.exports, BOOT_BESIDE);
      return r;
    };
  }
  const { vm } = await RubyVM.instantiateModule({ module, wasip1: wasi, ...(state && { addToImports: jspiImports(state) }) });
  prepare(vm, { loadPath, rubygems });
  const handle = installNetHttp(vm, netHttp);
  // (the streaming transport's helper Worker, started)
  if (handle.bridge.transport.ready) await handle.bridge.transport.ready;
  return {
    vm,
    handle,
    wasi,
    ...(state && { evalJspi: guardedJspi(jspiEval(vm, state), guardVM(vm)) }),
    async dispose() {
      await handle.uninstall();
    },
  };
}

// createRubyVM's module from `ruby`: a Module as it is; bytes (copied), a
// Response or a promise of either read, patched (lazyZeroing) and compiled.
// lazy: mmap was patched.
async function rubyModule(ruby, lazyZeroing) {
  const source = await ruby;
  if (source instanceof WebAssembly.Module) return { module: source, lazy: false };
  let bytes;
  if (source instanceof ArrayBuffer) bytes = new Uint8Array(source.slice(0));
  else if (ArrayBuffer.isView(source)) bytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength).slice();
  else if (source && typeof source.arrayBuffer === 'function' && typeof source.ok === 'boolean') {
    if (!source.ok) throw new Error(`createRubyVM: ruby's response is ${source.status} ${source.statusText || ''}${source.url ? ` (${source.url})` : ''}`.trimEnd());
    bytes = new Uint8Array(await source.arrayBuffer());
  } else {
    throw new TypeError("createRubyVM: ruby must be ruby.wasm's Response (fetch(url)), its bytes or a compiled WebAssembly.Module");
  }
  const lazy = lazyZeroing && patchRubyWasm(bytes).mmap;
  return { module: await WebAssembly.compile(bytes), lazy };
}

// evalJspi calls the VM's export itself (not through ruby.wasm's calls, which
// the guard watches): a trap there kills the VM too, and the calls queued
// behind it, or made later, fail at once.
function guardedJspi(evalJspi, guard) {
  const fault = (e) => e instanceof WebAssembly.RuntimeError || e instanceof RangeError || (typeof WebAssembly.SuspendError === 'function' && e instanceof WebAssembly.SuspendError);
  let queue = Promise.resolve();
  return (code) => {
    const next = queue.then(() => {
      if (guard.dead()) throw guard.dead();
      return evalJspi(code).catch((e) => {
        throw guard.dead() || (fault(e) ? guard.die(e) : e);
      });
    });
    queue = next.catch(() => {});
    return next;
  };
}

// WASI's rights: reading a file (fd_read, seek, tell, stat) and a directory (readdir, open, stat).
const READ = BigInt((1 << 1) | (1 << 2) | (1 << 5) | (1 << 13) | (1 << 14) | (1 << 15) | (1 << 18) | (1 << 21));

// The preopened directory, reporting `rights` for what is opened under it.
function withRights(dir, rights) {
  const stat = dir.fd_fdstat_get.bind(dir);
  dir.fd_fdstat_get = () => {
    const r = stat();
    if (r.fdstat) r.fdstat.fs_rights_base = r.fdstat.fs_rights_inherited = rights;
    return r;
  };
  return dir;
}

// { 'lib/a/b.rb': text or bytes } → a Directory of read-only Files (made
// from the leaves up: a Directory links its subdirectories when made).
function tree(files, File, Directory) {
  const top = new Map();
  const encoder = new TextEncoder();
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split('/').filter(Boolean);
    let dir = top;
    for (const part of parts.slice(0, -1)) {
      if (!dir.has(part)) dir.set(part, new Map());
      dir = dir.get(part);
    }
    const data = typeof content === 'string' ? encoder.encode(content) : content;
    dir.set(parts[parts.length - 1], new File(data, { readonly: true }));
  }
  const make = (map) => new Directory(new Map([...map].map(([k, v]) => [k, v instanceof Map ? make(v) : v])));
  return make(top);
}
