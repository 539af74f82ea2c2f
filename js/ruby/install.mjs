// installNetHttp's work, whatever the host: checks the VM, picks the
// transport, evaluates the Ruby side and hands it the bridge. The host
// entries (node.mjs, browser.mjs) say which transports exist there.
import { Bridge } from './bridge.mjs';
import { PROFILES } from '../schema.mjs';
import { rubySources } from './source.mjs';
import { fetchTransport } from './fetch.mjs';
import { streamTransport } from './stream.mjs';

// What the bridge evaluates to resume a fiber that waits on a promise (a
// waiting transport; Bridge#park). Not a Ruby proc called from JS: each
// RbValue#call of ruby.wasm 2.10 leaves the handles it passes (the receiver,
// the arguments) in its JS-side table for good, ~50 bytes of JS heap a call,
// and a proc handed to JS as a function makes five such calls and more
// (~1 KB a call). vm.eval passes no handle; it keeps only the code's bytes
// in the VM's memory (one 24-byte block for this code).
const WAKE = 'NetHttpWasm.__wake';

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

  const bridge = new Bridge(memory, { ...options, profile }, transport, () => vm.eval(WAKE));
  const load = vm.eval('proc { |src, name| TOPLEVEL_BINDING.eval(src.to_s, name.to_s); nil }');
  for (const [name, text] of rubySources) load.call('call', vm.wrap(text), vm.wrap(name));
  const config = JSON.stringify({
    codec: options.codec !== false,
    profile,
    transport: typeof kind === 'function' ? 'custom' : kind,
    blocking: transport.blocking,
  });
  vm.eval('NetHttpWasm').call('__install', vm.wrap(bridge), vm.wrap(config));
  return {
    bridge,
    uninstall() {
      for (const id of [...bridge.conns.keys()]) bridge.close(id);
      for (const p of bridge.parsers.splice(0)) p.close();
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
