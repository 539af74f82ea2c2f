// The internals of ruby.wasm (@ruby/wasm-wasi 2.10) the bridge relies on,
// all of them here, and why. Every call ruby.wasm's public API makes into
// the VM keeps something for good (below), and the waiting transport makes
// one per wake: so the wake uses the VM's own export with what it passes
// made once. Where any piece is missing it falls back to the public vm.eval.
//
//   vm.instance.exports['rb-funcallv-protect: …']  the guest's funcall export
//   vm.guest._resource0_slab                        its table of value handles
//   vm.guest.rbIntern, rbErrinfo, rbClearErrinfo    a method's ID; an error's
//   vm.interfaceState.hasJSFrameAfterRbFrame        a call nested in Ruby's
//   vm.privateObject().exceptionFormatter           errors worded as vm.eval's
//   vm.guest's methods, vm.guest._registry0         a dead VM's calls refused, its
//                                                   handles' finalizers let go (vm-guard.mjs)

// How the bridge resumes a fiber that waits on a promise (a waiting
// transport; Waits#park, waits.mjs): it calls NetHttpWasm.__wake. ruby.wasm 2.10 keeps
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

export function waker(vm, mod) {
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
    const at = funcall(recv, mid, 0, 0) >>> 0; // (an address: unsigned)
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
