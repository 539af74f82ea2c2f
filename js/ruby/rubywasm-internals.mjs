// The internals of ruby.wasm (@ruby/wasm-wasi 2.10) the bridge relies on,
// all of them here, and why. Every call ruby.wasm's public API makes into
// the VM keeps something for good (below), and the waiting transport makes
// one per wake, a program one per vm.evalAsync: so the wake and evalAsync
// use the VM's own export with what they pass made once. Where any piece
// is missing they fall back to the public API.
//
//   vm.instance.exports['rb-funcallv-protect: …']  the guest's funcall export
//   vm.guest._resource0_slab                        its table of value handles
//   vm.eval's error's class                         RbError, for vm.evalAsync's (evaluator)
//   vm.guest.rbIntern, rbErrinfo, rbClearErrinfo    a method's ID; an error's
//   vm.interfaceState.hasJSFrameAfterRbFrame        a call nested in Ruby's
//   vm.privateObject().exceptionFormatter           errors worded as vm.eval's
//   vm.guest's methods, vm.guest._registry0         a dead VM's calls refused, its
//                                                   handles' finalizers let go (vm-guard.mjs)

import { evaluationLines } from './constants.mjs';

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

// A call of method `name` of mod (the RbValue of a Ruby module) with no
// arguments, through the VM's funcall export with the receiver's handle
// and the method's ID made once: () → its value's handle (an RbAbiValue,
// to drop or to wrap), or it throws what vm.eval would (made by
// `error(message)`, worded by ruby.wasm's formatter). null where a piece is
// missing.
function noArgCall(vm, mod, name, error = (message) => new Error(message)) {
  const guest = vm.guest;
  const exports = vm.instance && vm.instance.exports;
  const funcall = exports && exports[FUNCALL];
  const slab = guest && guest._resource0_slab;
  const priv = typeof vm.privateObject === 'function' ? vm.privateObject() : null;
  const usable = typeof funcall === 'function' && slab && typeof slab.insert === 'function' && vm.interfaceState && priv && priv.exceptionFormatter;
  if (!usable || !mod.inner || typeof mod.inner.clone !== 'function') return null;
  const recv = slab.insert(mod.inner.clone());
  const mid = guest.rbIntern(`${name}\0`);
  const memory = exports.memory;
  let view = new DataView(memory.buffer);
  return () => {
    const at = funcall(recv, mid, 0, 0) >>> 0; // (an address: unsigned)
    if (view.buffer !== memory.buffer) view = new DataView(memory.buffer);
    const result = slab.remove(view.getInt32(at, true));
    const tag = view.getInt32(at + 4, true);
    if ((tag & 0xf) === 0) return result;
    const raised = new mod.constructor(guest.rbErrinfo(), vm, priv);
    guest.rbClearErrinfo();
    throw error(priv.exceptionFormatter.format(raised, vm, priv));
  };
}

export function waker(vm, mod) {
  const viaEval = () => vm.eval('NetHttpWasm.__wake');
  const call = noArgCall(vm, mod, '__wake');
  if (!call) return viaEval;
  const state = vm.interfaceState;
  return () => (state.hasJSFrameAfterRbFrame ? viaEval() : call().drop());
}

// vm.evalAsync without what ruby.wasm's keeps for every call (its three
// vm.eval, the code and the promise's callbacks made JS values of Ruby's,
// which the VM never lets go of: 4 Ruby objects and ~2 KB of JS heap a
// call, for good): the code goes to NetHttpWasm.__eval_async as the
// bridge's `evaluation` (lines.evaluation), which runs it as ruby.wasm's
// does (a fiber of JS.__async, Kernel.eval at the top level, file
// "eval_async"), and the bridge's evalSettled settles the promise: with the
// value's RbValue, or an RbError worded as ruby.wasm words it. Nested in a
// call from Ruby (a JS function Ruby called), `original` (ruby.wasm's own,
// which refuses what cannot be done there). RbError is the class of
// ruby.wasm's own errors, taken from the first vm.eval that fails. null
// where a piece is missing: ruby.wasm's own evalAsync stays.
export function evaluator(vm, mod, bridge, original) {
  let RbError = null;
  const call = noArgCall(vm, mod, '__eval_async', (message) => new RbError(message));
  if (!call || typeof original !== 'function') return null;
  const state = vm.interfaceState;
  const priv = vm.privateObject();
  const pending = new Map(); // token → { resolve, reject }
  let last = 0;
  bridge.onEvalSettled = (token, ok, value) => {
    const p = pending.get(token);
    if (!p) return;
    pending.delete(token);
    if (ok) p.resolve(value);
    else p.reject(new RbError(priv.exceptionFormatter.format(value, vm, priv)));
  };
  return (code) => {
    if (state.hasJSFrameAfterRbFrame) return original.call(vm, code);
    RbError ||= errorClass(vm);
    const token = ++last;
    let settle;
    const promise = new Promise((resolve, reject) => (settle = { resolve, reject }));
    pending.set(token, settle);
    bridge.evaluation = evaluationLines({ token, code: String(code) });
    try {
      call().drop();
    } catch (e) {
      pending.delete(token);
      throw e;
    } finally {
      bridge.evaluation = '';
    }
    return promise;
  };
}

// The class of ruby.wasm's errors (RbError): what vm.eval throws for a
// Ruby exception.
function errorClass(vm) {
  try {
    vm.eval("raise 'net-http-wasm: RbError'");
  } catch (e) {
    if (e instanceof Error) return e.constructor;
  }
  return Error;
}
