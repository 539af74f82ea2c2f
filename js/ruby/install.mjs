// installNetHttp's work, whatever the host: checks the VM, picks the
// transport, evaluates the Ruby side and hands it the bridge. The host
// entries (node.mjs, browser.mjs) say which transports exist there.
import { Bridge } from './bridge.mjs';
import { getDefaultCodec } from '../index.mjs';
import { PROFILES } from '../schema.mjs';
import { rubySources } from './source.mjs';
import { fetchTransport } from './transports/fetch.mjs';
import { streamTransport } from './transports/stream.mjs';

// How the bridge resumes a fiber that waits on a promise (a waiting
// transport; Bridge#park): it calls NetHttpWasm.__wake. ruby.wasm 2.10 keeps
// something for every call its API makes into the VM (the VM frees none of
// the strings and drops none of the handles it is passed): vm.eval the
// code's bytes in the VM's memory; RbValue#call the method name's bytes, an
// argument list and the receiver's handle in its JS-side table (~50 bytes
// of JS heap); a Ruby proc called as a JS function ~1 KB. So the wake calls
// the VM's rb-funcallv-protect export with what it passes made once (one
// handle of NetHttpWasm, the method's ID, no arguments) and gives the
// result's handle back at once. With another binding, or nested in a call
// from Ruby (RubyVM's wrapper guards those), it is vm.eval.
const FUNCALL = 'rb-funcallv-protect: func(recv: handle<rb-abi-value>, mid: u32, args: list<handle<rb-abi-value>>) -> tuple<handle<rb-abi-value>, s32>';

function waker(vm, mod) {
  const viaEval = () => vm.eval('NetHttpWasm.__wake');
  const guest = vm.guest;
  const exports = vm.instance.exports;
  const funcall = exports[FUNCALL];
  const slab = guest && guest._resource0_slab;
  const state = vm.interfaceState;
  const priv = typeof vm.privateObject === 'function' ? vm.privateObject() : null;
  const usable = typeof funcall === 'function' && slab && typeof slab.insert === 'function' && state && priv && priv.exceptionFormatter;
  if (!usable || !mod.inner || typeof mod.inner.clone !== 'function') return viaEval;
  const recv = slab.insert(mod.inner.clone());
  const mid = guest.rbIntern('__wake\0');
  const memory = exports.memory;
  let view = new DataView(memory.buffer);
  return () => {
    if (state.hasJSFrameAfterRbFrame) return viaEval();
    const at = funcall(recv, mid, 0, 0);
    if (view.buffer !== memory.buffer) view = new DataView(memory.buffer);
    const result = slab.remove(view.getInt32(at, true));
    const tag = view.getInt32(at + 4, true);
    if ((tag & 0xf) === 0) return result.drop();
    // as vm.eval reports it
    const error = new mod.constructor(guest.rbErrinfo(), vm, priv);
    guest.rbClearErrinfo();
    throw new Error(priv.exceptionFormatter.format(error, vm, priv));
  };
}

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
 * host: { defaultTransport: 'node' | 'fetch', node?: (blocking) => transport }
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
  else if (kind === 'fetch') transport = fetchTransport(options.fetch || (typeof fetch === 'function' ? fetch.bind(globalThis) : null));
  else if (kind === 'node') {
    if (!host.node) throw new Error("installNetHttp: transport 'node' needs Node.js (import net-http-wasm/ruby there)");
    transport = host.node(!!options.blocking);
  } else throw new TypeError(`installNetHttp: unknown transport ${String(kind)}`);
  if (options.blocking && !transport.blocking) throw new TypeError("installNetHttp: { blocking: true } needs transport 'node'");
  if (kind === 'node' && options.tls) transport = withTls(transport, options.tls);

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
