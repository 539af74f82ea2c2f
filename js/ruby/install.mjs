// installNetHttp's work, whatever the host: checks the VM, picks the
// transport, evaluates the Ruby side and hands it the bridge. The host
// entries (node.mjs, browser.mjs) say which transports exist there.
import { Bridge } from './bridge.mjs';
import { getDefaultCodec } from '../index.mjs';
import { PROFILES } from '../schema.mjs';
import { rubySources } from './source.mjs';
import { fetchTransport } from './transports/fetch-async.mjs';
import { streamTransport } from './transports/stream.mjs';
import { waker, evaluator } from './rubywasm-internals.mjs';
import { guardVM } from './vm-guard.mjs';
import { headroom } from './headroom.mjs';

// 3.2 and 3.3's net-http (0.4.1) reads and writes as 3.4's; 4.1 (head)
// checks fields and the response head's size as 4.0 does not
function rubyProfile(vm) {
  const [major, minor] = vm.eval('RUBY_VERSION').toString().split('.').map(Number);
  if (major > 4 || (major === 4 && minor >= 1)) return 'head';
  return major >= 4 ? '4.0' : '3.4';
}

function findMemory(vm) {
  const inst = vm && vm.instance;
  const mem = inst && inst.exports && inst.exports.memory;
  return mem instanceof WebAssembly.Memory ? mem : null;
}

/**
 * host: { defaultTransport: 'node' | 'fetch', node?: (blocking) => transport,
 *   blockingFetch?: (options) => transport (the browser's { blocking: true }) }
 */
export function install(vm, options, host) {
  if (!vm || typeof vm.eval !== 'function') throw new TypeError('installNetHttp: vm must be a RubyVM');
  const memory = findMemory(vm);
  if (!memory)
    throw new Error('installNetHttp: the VM exposes no linear memory (vm.instance.exports.memory); use RubyVM.instantiateModule or DefaultRubyVM');
  // a trap kills the VM (it is left half-way through a call): from now on,
  // whoever made it, the evalAsync calls waiting on it reject and every later
  // call fails at once, rather than hang (vm-guard.mjs)
  const guard = guardVM(vm);
  const profile = options.profile || rubyProfile(vm);
  if (!(profile in PROFILES)) throw new TypeError(`profile must be ${Object.keys(PROFILES).map((p) => `'${p}'`).join(', ')}, not ${profile}`);
  const kind = options.transport == null ? host.defaultTransport : options.transport;
  let transport;
  if (typeof kind === 'function') transport = streamTransport(kind);
  // (a browser's { blocking: true }: synchronous XMLHttpRequest in a Worker)
  else if (kind === 'fetch' && options.blocking && host.blockingFetch) transport = host.blockingFetch(options);
  else if (kind === 'fetch') transport = fetchTransport(options.fetch || (typeof fetch === 'function' ? fetch.bind(globalThis) : null));
  else if (kind === 'node') {
    if (!host.node) throw new Error("installNetHttp: transport 'node' needs Node.js (import net-http-wasm/ruby there)");
    transport = host.node(!!options.blocking);
  } else throw new TypeError(`installNetHttp: unknown transport ${String(kind)}`);
  if (options.blocking && !transport.blocking) throw new TypeError("installNetHttp: { blocking: true } needs transport 'node', or 'fetch' from net-http-wasm/ruby/browser");
  if (kind === 'node' && options.tls) transport = withTls(transport, options.tls);

  // malloc's share of the memory, grown once now: malloc grows a wasm
  // memory 64 KiB at a time, and V8 may follow each growth with a full
  // garbage collection (always, once the memory is large and incremental
  // marking is off), so without it loading Net::HTTP and the first
  // requests pay for dozens of them (createRubyVM gives its own)
  const reserve = options.reserve == null ? RESERVE : options.reserve;
  if (!(typeof reserve === 'number' && reserve >= 0 && reserve <= MAX_RESERVE)) throw new TypeError(`installNetHttp: reserve must be a number of bytes from 0 to ${MAX_RESERVE}, not ${String(reserve)}`);
  if (reserve > 0) reserveMalloc(vm, reserve);

  // the module every bridge shares (the package's embedded one, compiled on
  // first use)
  const wasmCodec = getDefaultCodec();
  let wake = null; // (NetHttpWasm is not defined yet)
  // compiled Ruby kept from one VM to the next (compile-cache.mjs), where
  // the host keeps it
  if (!host.compileCache && !(options.compileCache == null || typeof options.compileCache === 'boolean')) throw new TypeError('installNetHttp: compileCache can name a folder in Node only');
  const compileCache = host.compileCache ? host.compileCache(options.compileCache) : null;
  const bridge = new Bridge(memory, { ...options, profile, wasmCodec, compileCache, headroom: headroom(vm.instance.exports) }, transport, () => wake());
  guard.watch(bridge);
  // (the first, compile_cache.rb, loads the others through the cache)
  const [[firstName, firstText], ...rest] = rubySources;
  vm.eval('proc { |src, name| TOPLEVEL_BINDING.eval(src.to_s, name.to_s); nil }').call('call', vm.wrap(firstText), vm.wrap(firstName));
  if (compileCache) vm.eval('NetHttpWasm::CompileCache').call('start', vm.wrap(bridge));
  const load = vm.eval('proc { |src, name| NetHttpWasm::CompileCache.eval_source(src.to_s, name.to_s) }');
  for (const [name, text] of rest) load.call('call', vm.wrap(text), vm.wrap(name));
  const config = JSON.stringify({
    codec: options.codec !== false,
    profile,
    transport: typeof kind === 'function' ? 'custom' : kind,
    blocking: transport.blocking,
  });
  const mod = vm.eval('NetHttpWasm');
  wake = waker(vm, mod);
  mod.call('__install', vm.wrap(bridge), vm.wrap(config));
  // vm.evalAsync through this bridge, keeping nothing in the VM
  // (rubywasm-internals.mjs evaluator)
  guard.useEvalAsync((original) => evaluator(vm, mod, bridge, original));
  return {
    bridge,
    uninstall() {
      bridge.connections.closeAll();
      return transport.close();
    },
  };
}

// installNetHttp's default reserve, and the largest one taken.
const RESERVE = 32 << 20;
const MAX_RESERVE = 1 << 30;

/**
 * Gives malloc `bytes` of a VM's memory in one growth (wasm memory pages
 * that are never touched cost no RAM): allocated and given back at once,
 * the freed block is where malloc takes from later. Through the module's
 * own realloc export when it has one (no Ruby object, no Ruby GC: usable
 * before Ruby starts, given the instance's exports), else with a Ruby String.
 */
export function reserveMalloc(target, bytes) {
  const n = Math.floor(bytes);
  const exports = target && target.instance ? target.instance.exports : target;
  const realloc = exports && exports.cabi_realloc;
  if (typeof realloc === 'function') {
    const p = realloc(0, 0, 8, n);
    realloc(p, n, 8, 8); // shrunk in place: the rest is free
  } else if (target && typeof target.eval === 'function') {
    target.eval(`String.new(capacity: ${n}).clear; nil`);
  }
}

/**
 * What a VM made for the network needs before Net::HTTP (createRubyVM):
 * stdout/stderr synced, folders added to $LOAD_PATH, rubygems loaded.
 */
export function prepare(vm, { loadPath = [], rubygems = true } = {}) {
  if (!(rubygems === true || rubygems === false || rubygems === 'lazy')) throw new TypeError(`createRubyVM: rubygems must be true, false or 'lazy', not ${String(rubygems)}`);
  // (a folder a call: no format to share with Ruby)
  const add = vm.eval('proc { |dir| d = dir.to_s; $LOAD_PATH << d unless $LOAD_PATH.include?(d); nil }');
  vm.eval('$stdout.sync = true; $stderr.sync = true; nil');
  // first: a folder on $LOAD_PATH (Debian's vendor_ruby) may hold rubygems/defaults/operating_system.rb
  if (rubygems === true) vm.eval("require 'rubygems'; nil");
  else if (rubygems === 'lazy') vm.eval('proc { |src| TOPLEVEL_BINDING.eval(src.to_s, "net_http_wasm/lazy_rubygems.rb"); nil }').call('call', vm.wrap(LAZY_RUBYGEMS));
  for (const dir of loadPath) add.call('call', vm.wrap(dir));
}

// rubygems: 'lazy'. ruby.wasm 4.0 starts without rubygems (3.4 loads it at
// boot; then this does nothing; head has no Gem module at all), and loading it takes long in a fresh VM:
// it is loaded when first needed, with $LOAD_PATH as it was at boot (as
// rubygems: true loads it): a Gem constant (defined? sees the usual ones)
// or method, Kernel#gem, or a require that $LOAD_PATH cannot satisfy but a
// gem can (a bundled gem of the gem directories: base64, csv... in 4.0).
const LAZY_RUBYGEMS = `
unless defined?(::Gem) && ::Gem.const_defined?(:VERSION, false)
  module Gem
    module LazyLoad
      BOOT_LOAD_PATH = $LOAD_PATH.dup.freeze
      NAMES = %i[BasicSpecification CommandLineError ConfigFile ConflictError Dependency DependencyError
                 DependencyList Deprecate DocumentError Exception FilePermissionError FormatException
                 GemNotFoundException InstallError Installer InvalidSpecificationException Licenses List
                 LoadError MissingSpecError MissingSpecVersionError NameTuple OperationNotSupportedError
                 PathSupport Platform PlatformMismatch RemoteError RequestSet Requirement Resolver
                 RubyVersionMismatch Source SourceList SpecFetcher Specification StubSpecification
                 SystemExitException UninstallError Util VERSION Version].freeze
      @loaded = false

      # Loads rubygems once (the autoloads above may have loaded it) and
      # takes these stand-ins away; false if that was done already.
      def self.load
        return false if @loaded
        @loaded = true
        sc = ::Gem.singleton_class
        %i[const_missing method_missing respond_to_missing?].each { |m| sc.send(:remove_method, m) }
        ::Kernel.send(:remove_method, :gem) if ::Kernel.instance_method(:gem) == GEM
        return true if $LOADED_FEATURES.any? { |f| f.end_with?('/rubygems.rb') }
        path = $LOAD_PATH.dup
        begin
          $LOAD_PATH.replace(path & BOOT_LOAD_PATH)
          ::Kernel.require 'rubygems'
        ensure
          $LOAD_PATH.replace(path | $LOAD_PATH)
        end
        true
      end

      # Whether a gem of the gem directories has this feature in its lib/.
      def self.gem_feature?(path)
        path = path.to_s
        return false if path.empty? || path.start_with?('/', './', '../')
        require 'rbconfig'
        dirs = [File.join(RbConfig::CONFIG['rubylibprefix'], 'gems', RbConfig::CONFIG['ruby_version'])]
        dirs.concat(ENV['GEM_PATH'].to_s.split(File::PATH_SEPARATOR)) << ENV['GEM_HOME'].to_s
        name = path.end_with?('.rb', '.so') ? path : "#{path}.rb"
        dirs.any? { |d| !d.empty? && !Dir.glob(File.join(d, 'gems', '*', 'lib', name)).empty? }
      end
    end

    LazyLoad::NAMES.each { |n| autoload(n, 'rubygems') }

    def self.const_missing(name)
      LazyLoad.load ? const_get(name) : super
    end

    def self.method_missing(name, ...)
      LazyLoad.load ? public_send(name, ...) : super
    end

    def self.respond_to_missing?(name, include_private = false)
      LazyLoad.load ? respond_to?(name, include_private) : super
    end
  end

  module Kernel
    alias_method :__require_before_rubygems, :require
    private :__require_before_rubygems

    def require(path)
      return Gem::LazyLoad.load || __require_before_rubygems(path) if path == 'rubygems'
      __require_before_rubygems(path)
    rescue ::LoadError
      raise unless Gem::LazyLoad.gem_feature?(path) && Gem::LazyLoad.load
      require(path)
    end
    private :require

    def gem(...)
      Gem::LazyLoad.load
      gem(...)
    end
    private :gem
  end
  Gem::LazyLoad.const_set(:GEM, Kernel.instance_method(:gem))
end
nil
`;

// installNetHttp's { tls: { ca, rejectUnauthorized } }: for every HTTPS connection.
function withTls(transport, t) {
  const extra = t.ca == null ? [] : [].concat(t.ca).map(String);
  return Object.assign(Object.create(transport), {
    open(bridge, spec) {
      if (spec.tls) {
        if (extra.length) spec.tls.ca = [...(spec.tls.ca || []), ...extra];
        if (t.rejectUnauthorized === false) spec.tls.verify = false;
      }
      return transport.open(bridge, spec);
    },
  });
}
