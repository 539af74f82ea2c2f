// installNetHttp's work, whatever the host: checks the VM, picks the
// transport, evaluates the Ruby side and hands it the bridge. The host
// entries (node.mjs, browser.mjs) say which transports exist there.
import { Bridge } from './bridge.mjs';
import { getDefaultCodec } from '../index.mjs';
import { PROFILES } from '../schema.mjs';
import { rubySources } from './source.mjs';
import { fetchTransport } from './transports/fetch.mjs';
import { streamTransport } from './transports/stream.mjs';
import { waker } from './rubywasm-internals.mjs';

function rubyProfile(vm) {
  const [major] = vm.eval('RUBY_VERSION').toString().split('.').map(Number);
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
  const profile = options.profile || rubyProfile(vm);
  if (!(profile in PROFILES)) throw new TypeError(`profile must be ${Object.keys(PROFILES).map((p) => `'${p}'`).join(' or ')}, not ${profile}`);
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

  // the codec every bridge shares (the package's embedded module, compiled
  // on first use), unless one is given
  const codecInstance = options.codecInstance || getDefaultCodec();
  let wake = null; // (NetHttpWasm is not defined yet)
  const bridge = new Bridge(memory, { ...options, profile, codecInstance }, transport, () => wake());
  const load = vm.eval('proc { |src, name| TOPLEVEL_BINDING.eval(src.to_s, name.to_s); nil }');
  for (const [name, text] of rubySources) load.call('call', vm.wrap(text), vm.wrap(name));
  const config = JSON.stringify({
    codec: options.codec !== false,
    profile,
    transport: typeof kind === 'function' ? 'custom' : kind,
    blocking: transport.blocking,
  });
  const mod = vm.eval('NetHttpWasm');
  wake = waker(vm, mod);
  mod.call('__install', vm.wrap(bridge), vm.wrap(config));
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
  const add = vm.eval('proc { |dirs| dirs.to_s.split("\\n").each { |d| $LOAD_PATH << d unless $LOAD_PATH.include?(d) }; nil }');
  vm.eval('$stdout.sync = true; $stderr.sync = true; nil');
  // first: a folder on $LOAD_PATH (Debian's vendor_ruby) may hold rubygems/defaults/operating_system.rb
  if (rubygems) vm.eval("require 'rubygems'; nil");
  add.call('call', vm.wrap(loadPath.join('\n')));
}

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
