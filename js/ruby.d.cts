// Type declarations for net-http-wasm/ruby: Net::HTTP inside ruby.wasm, for
// both module systems (ruby.d.ts re-exports them), with the host's classes
// taken from the globals the project declares (no DOM or @types/node needed).

/** The host's WebAssembly.Module and Memory, and fetch(), where the project's libraries declare them. */
type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : object;
type WasmMemory = typeof globalThis extends { WebAssembly: { Memory: { prototype: infer T } } } ? T : object;
type HostFetch = typeof globalThis extends { fetch: infer F } ? F : (input: string, init?: object) => Promise<unknown>;

/** The parts of @ruby/wasm-wasi's RubyVM this module uses. */
export interface RubyVMLike {
  eval(code: string): { toString(): string; call(name: string, ...args: unknown[]): unknown };
  wrap(value: unknown): unknown;
  /** The WebAssembly instance (set by RubyVM.instantiateModule and DefaultRubyVM). */
  instance?: { exports: { memory?: WasmMemory } } | null;
}

/** TLS settings the host connection gets (from Net::HTTP's settings, as JSON). */
export interface TlsParams {
  /** verify_mode != VERIFY_NONE */
  verify: boolean;
  /** trusted certificates, PEM (ca_file / ca_path / cert_store read in the VM) */
  ca: string[];
  /** paths of CA files the VM could not read: read from the host's file system */
  caFiles: string[];
  /** trust the default roots as well (no cert_store, or one with set_default_paths) */
  defaultPaths: boolean;
  verifyHostname?: false;
  cert?: string;
  key?: string;
  minVersion?: string;
  maxVersion?: string;
  ciphers?: string;
  /** Net::HTTP#address: the name sent as SNI and checked in the certificate */
  servername?: string;
}

/** A byte stream for the `transport` option: the bridge sets the callbacks. */
export interface NetHttpStream {
  write(bytes: Uint8Array): void;
  close?(): void;
  onData?: ((chunk: Uint8Array) => void) | null;
  onEnd?: (() => void) | null;
  /** an error with a `code` such as 'ECONNRESET' becomes Errno::ECONNRESET */
  onError?: ((error: unknown) => void) | null;
}

export interface ConnectOptions {
  host: string;
  port: number;
  /** null for http */
  tls: TlsParams | null;
  /** Net::HTTP#open_timeout in milliseconds, or null */
  timeoutMs: number | null;
}

export interface InstallOptions {
  /**
   * 'node' (the default in Node.js): node:net / node:tls sockets;
   * 'fetch' (the default elsewhere): one fetch() per request;
   * or a function that opens a connection.
   */
  transport?: 'node' | 'fetch' | ((options: ConnectOptions) => Promise<NetHttpStream>);
  /**
   * Net::HTTP blocks this JS thread while it waits, as it blocks a Ruby
   * thread natively, and then works from `vm.eval` and inside any block.
   * Node.js (transport 'node'): the sockets live in an I/O worker thread and
   * this thread sleeps in Atomics.wait; the fastest; a server in this same
   * thread cannot answer it (run the VM in a worker thread, or the server
   * elsewhere). A browser's dedicated Worker: each request is a synchronous
   * XMLHttpRequest (the body arrives whole; read_timeout bounds the whole
   * exchange); a page's main thread refuses it. Default false: waits are
   * promises awaited with a fiber switch inside `vm.evalAsync`, and the
   * event loop runs meanwhile.
   */
  blocking?: boolean;
  /**
   * true (default): the codec writes requests and reads responses;
   * false: net/http's own Ruby code does, over the same connections.
   * Ruby can switch it at run time: `NetHttpWasm.codec = false`.
   */
  codec?: boolean;
  /** Which net/http the codec reproduces; default: from the VM's RUBY_VERSION ('head' from 4.1 on). */
  profile?: '4.0' | '3.4' | 'head';
  /** For every HTTPS connection: extra trusted certificates (PEM), or no verification. */
  tls?: { ca?: string | string[]; rejectUnauthorized?: boolean };
  /**
   * Read responses in the codec's strict mode (not MRI): what RFC 9112 says a
   * recipient must reject (conflicting framing, obs-fold, bare CR, ...)
   * raises Net::HTTPBadResponse. Default false. Codec mode only.
   */
  strictResponses?: boolean;
  /** The fetch() to use for transport 'fetch'. */
  fetch?: HostFetch;
  /** bytes of the VM's memory given to malloc at once, before Net::HTTP loads (default 32 MiB; 0: none) */
  reserve?: number;
  /**
   * Node: compiled Ruby (this package's, and every file `require` loads)
   * kept from one VM to the next, in this process's memory and in a folder
   * for later processes. true (default): net-http-wasm in the user's cache
   * folder (~/.cache), private to the user; a path: that folder; false: none, and Ruby is
   * parsed and compiled in every VM (for a VM that runs Ruby you do not
   * trust: what it keeps, later VMs load). Browsers: none.
   */
  compileCache?: boolean | string;
}

export interface NetHttpBridge {
  /** Header names the fetch transport dropped from the last request (forbidden in browsers). */
  droppedHeaders: string[];
  readonly profile: '4.0' | '3.4' | 'head';
  /** Strict response parsing for the next requests (see InstallOptions.strictResponses). */
  strictResponses: boolean;
}

export interface InstallHandle {
  bridge: NetHttpBridge;
  /** Closes every connection the VM has open and stops the blocking transport's I/O thread. */
  uninstall(): Promise<unknown> | undefined;
}

/**
 * Makes `require 'net/http'` work in a ruby.wasm VM: Net::HTTP gets its
 * connections from the host and this package's codec does the byte work.
 * With `{ blocking: true }` (Node, or a browser's Worker) Net::HTTP waits as it does natively and
 * runs from `vm.eval`. Otherwise it waits by awaiting promises: run it with
 * `vm.evalAsync(...)` (or `RbValue#callAsync`), and do not make requests
 * inside blocks of C-implemented iterators (Array#map, Hash#each, ...): in
 * ruby.wasm an exception raised and rescued after a fiber switch there
 * corrupts the VM; Array#each, times, loop, while are fine.
 * In browsers call `await init()` (from 'net-http-wasm') first.
 */
export function installNetHttp(vm: RubyVMLike, options?: InstallOptions): InstallHandle;

/**
 * Rewrites, in place, the memset and mmap of a ruby.wasm module's bytes
 * (ruby.wasm 2.10's builds, Ruby 3.2 to head), and malloc's growth step:
 * memset as memory.fill, mmap zeroing only memory that was in use before
 * its malloc, malloc growing the memory 4 MiB at a time. Compile the same
 * bytes afterwards. Bytes of any other module are left as they are (all
 * false); anything but bytes is a TypeError. `{ mmap: false }`: mmap left
 * as it is; `{ growth: false }`: the growth step.
 */
export function patchRubyWasm(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: { mmap?: boolean; growth?: boolean }): { memset: boolean; mmap: boolean; growth: boolean };

/** createRubyVM's options (Node.js); the others are installNetHttp's. */
export interface CreateRubyVMOptions extends InstallOptions {
  /** '4.0' (default), '3.4', '3.3', '3.2' or 'head': the @ruby/<v>-wasm-wasi package; or a compiled ruby.wasm module */
  ruby?: '4.0' | '3.4' | '3.3' | '3.2' | 'head' | WasmModule;
  /** host folders mounted read-only at /gems/<name> and added to $LOAD_PATH (a gem root: its lib/) */
  gems?: string | string[];
  /** more folders: { guestPath: hostPath } */
  mounts?: Record<string, string>;
  /** true (default): a fresh writable /tmp, removed by dispose(); a host path; false: none */
  tmp?: boolean | string;
  /** false (default): empty; true: process.env (proxies included); an object: exactly that */
  env?: boolean | Record<string, string>;
  /** 'lazy' (default): rubygems loaded when first needed (a Gem constant or method, Kernel#gem, a require only a gem satisfies); true: at once; false: not at all */
  rubygems?: boolean | 'lazy';
  /** bytes of the VM's memory given to malloc at once beyond what its boot takes (default 32 MiB; 0: none, not even the boot's): each later growth of a wasm memory can cost V8 a full GC */
  reserve?: number;
  /** false: turn V8's incremental marking off for the whole process (default false on Node 20 and 22, which need it with ruby.wasm; true elsewhere) */
  incrementalMarking?: boolean;
  /** true (default): V8 optimizes ruby.wasm's hot functions; false: baseline code only (--liftoff-only, process-wide): a fresh VM is fast sooner; once warm, interpreted Ruby no slower, C-heavy Ruby (Hash, String, Regexp work) 1.2-1.8x slower */
  tierUp?: boolean;
  /** how many functions V8 optimizes at once in background threads (--wasm-num-compilation-tasks, process-wide), or null: V8's own number. Default: one fewer than the CPUs where there are 4 or fewer (so that Ruby's thread keeps a CPU while V8 optimizes ruby.wasm), else null */
  tierUpTasks?: number | null;
  /** true: on Node 20 (V8 11), V8 optimizes ruby.wasm's largest functions (the interpreter's loop among them) with its full register allocator (--no-turbo-use-mid-tier-regalloc-for-huge-functions, process-wide): once warm, a kept-alive request ~20% faster and object-heavy Ruby 1.1-1.6x, at the cost of ~8 s more background optimizing, up to ~260 MB while a function compiles, and a program's end may wait seconds for it. false (default): V8's choice. No effect on later V8s, which optimize them fully already */
  tierUpFull?: boolean;
  /** true (default): the module's memset and mmap are patched before it is compiled (patchRubyWasm): memory fresh from memory.grow is not zeroed again, so a fresh VM does not write the ~256 MiB that Ruby 3.4+ maps at boot, and malloc grows the memory 4 MiB at a time; false: the module as it is (a compiled module passed as ruby is used as it is) */
  lazyZeroing?: boolean;
}

/** What createRubyVM reads of a fetch() Response (the DOM's Response fits). */
interface ResponseLike {
  ok: boolean;
  status: number;
  statusText?: string;
  url?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** createRubyVM's options in browsers (the package's browser entry): what the page loaded is passed in; the others are installNetHttp's. */
export interface CreateBrowserRubyVMOptions extends InstallOptions {
  /** a ruby.wasm build with its standard library (e.g. @ruby/4.0-wasm-wasi/dist/ruby+stdlib.wasm): its fetch() (a Response or a promise of one) or its bytes (copied), read, patched (lazyZeroing) and compiled; or a compiled module, used as it is */
  ruby: WasmModule | ArrayBuffer | ArrayBufferView | ResponseLike | PromiseLike<WasmModule | ArrayBuffer | ArrayBufferView | ResponseLike>;
  /** true (default): the module's bytes are patched before they are compiled (patchRubyWasm), so a fresh VM does not write the ~256 MiB Ruby 3.4+ maps at boot; false: compiled as they are (a compiled module is used as it is) */
  lazyZeroing?: boolean;
  /** the RubyVM class of @ruby/wasm-wasi */
  RubyVM: { instantiateModule(options: { module: WasmModule; wasip1: any }): Promise<{ vm: any }> };
  /** the module @bjorn3/browser_wasi_shim (`import * as wasi from '@bjorn3/browser_wasi_shim'`) */
  wasi: { WASI: new (...args: any[]) => any; File: any; Directory: any; OpenFile: any; PreopenDirectory: any; ConsoleStdout: any };
  /** { name: { 'lib/name.rb': text or bytes } }: read-only files at /gems/<name>/, its lib/ (else the folder) on $LOAD_PATH */
  gems?: Record<string, Record<string, string | Uint8Array>>;
  /** true (default): an empty writable /tmp in memory; false: none */
  tmp?: boolean;
  /** the environment (default: none) */
  env?: Record<string, string>;
  /** true (default): require 'rubygems' */
  rubygems?: boolean;
  /** Ruby's $stdout (fd 1) and $stderr (fd 2), line by line (default: console.log / console.warn; false: dropped) */
  print?: false | ((text: string, fd: 1 | 2) => void);
  /** with blocking: true in a dedicated Worker of a cross-origin isolated page, each request a fetch() streamed through shared memory (default where possible); false: a synchronous XMLHttpRequest; true: the streamed one or a TypeError */
  stream?: boolean;
  /** true: the VM made for JavaScript Promise Integration (WebAssembly.Suspending): the result's evalJspi(code) runs Ruby whose waits suspend the VM (no blocking: true) */
  jspi?: boolean;
}

/** A ruby.wasm VM with gem files, /tmp, the environment, rubygems and Net::HTTP over fetch() (browsers). */
export function createRubyVM(options: CreateBrowserRubyVMOptions): Promise<{
  vm: RubyVMLike & { evalAsync(code: string): Promise<{ toString(): string }> };
  handle: InstallHandle;
  wasi: any;
  /** with jspi: true: runs code, its waits suspending the VM; one call at a time */
  evalJspi?: (code: string) => Promise<{ toString(): string }>;
  dispose(): Promise<void>;
}>;

/**
 * A ruby.wasm VM with folders mounted, /tmp, the environment, rubygems and Net::HTTP (Node.js).
 * Once its WebAssembly code traps (deep recursion in Ruby's C code, say), the VM is dead: the
 * pending `vm.evalAsync` calls reject and every later call fails at once, with an Error whose
 * `code` is 'ERR_RUBY_VM_DEAD' (the trap is its `cause`); `dispose()` still cleans up.
 */
export function createRubyVM(options?: CreateRubyVMOptions): Promise<{
  vm: RubyVMLike & { evalAsync(code: string): Promise<{ toString(): string }> };
  handle: InstallHandle;
  tmp: string | null;
  dispose(): Promise<void>;
}>;

// (only what is marked export is exported)
export {};
