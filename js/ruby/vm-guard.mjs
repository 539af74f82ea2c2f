// A VM whose WebAssembly code stopped in the middle of a call (a trap:
// `unreachable`, a memory access out of bounds, the call stack exhausted;
// or an exit from WASI) is left half-way through some C function of Ruby's,
// and the fiber that was running never comes back: an evalAsync waiting for
// it would wait for ever. guardVM marks such a VM dead: the evalAsync calls
// still pending reject, and every later call into the VM (vm.eval,
// vm.evalAsync, an RbValue's methods, the bridge's wakes) fails at once,
// with an error that says so (code 'ERR_RUBY_VM_DEAD', the trap as its cause).
//
// It wraps the calls ruby.wasm makes into the VM (vm.guest's methods, named
// in rubywasm-internals.mjs with vm.guest._registry0), as no exception is
// meant to leave them: ruby.wasm turns Ruby's into return codes and the JS
// exceptions of the functions Ruby calls into Ruby's; and the bridge's wake,
// which calls the VM's export itself.

// (the guest's methods that only make the VM)
const BOOT = new Set(['constructor', 'setInstance', 'addToImports', 'instantiate']);

/** Whether an error is a VM's death (guardVM's). */
export const isDeadVMError = (e) => e instanceof Error && e.code === 'ERR_RUBY_VM_DEAD';

// (each VM's guard: a VM is guarded once, however many times Net::HTTP is
// installed in it)
const guards = new WeakMap();

/**
 * Watches `vm` (a RubyVM) and `bridge` (installNetHttp's, or null); installNetHttp
 * calls it, so that a VM made by createRubyVM or by the user, in Node or in a
 * browser, is guarded alike. A VM already guarded keeps its guard, which then
 * watches `bridge` too. Returns { dead() → the error once the VM died, else
 * null; watch(bridge): watch that bridge too; die(cause) → marks the VM dead
 * (for calls into it made elsewhere, e.g. evalJspi), the error;
 * useEvalAsync(make): vm.evalAsync runs make(ruby.wasm's)'s function }.
 */
export function guardVM(vm, bridge = null) {
  const known = guards.get(vm);
  if (known) {
    if (bridge) known.watch(bridge);
    return known;
  }
  const guest = vm.guest;
  let dead = null;
  const pending = new Set(); // reject() of each evalAsync not yet settled
  const bridges = new Set();
  const die = (cause) => {
    if (dead) return dead;
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    dead = new Error(`net-http-wasm: the Ruby VM is dead: its WebAssembly code stopped in the middle of a call (${why}); make a new VM`, { cause });
    dead.code = 'ERR_RUBY_VM_DEAD';
    for (const reject of pending) reject(dead);
    pending.clear();
    // ruby.wasm frees a value's handle in the VM when the JS object holding
    // it is collected (a FinalizationRegistry calling the VM's export), which
    // in a dead VM traps again, as an uncaught error that ends the process:
    // the registry is let go (a registry that is collected calls nothing)
    if (guest && guest._registry0) guest._registry0 = { register() {}, unregister() {} };
    // its connections are of no more use (dispose() still ends the rest)
    for (const b of bridges) if (b.connections) b.connections.closeAll();
    return dead;
  };

  if (guest) {
    const names = new Set();
    for (let o = guest; o && o !== Object.prototype; o = Object.getPrototypeOf(o))
      for (const k of Object.getOwnPropertyNames(o)) if (!BOOT.has(k) && typeof guest[k] === 'function') names.add(k);
    for (const name of names) {
      const fn = guest[name];
      guest[name] = name === 'rbVmBugreport'
        // (ruby.wasm's report of an unexpected error: nothing more to ask a dead VM)
        ? (...args) => (dead ? undefined : fn.apply(guest, args))
        : (...args) => {
          if (dead) throw dead;
          try {
            return fn.apply(guest, args);
          } catch (e) {
            throw die(e);
          }
        };
    }
  }

  // (a fault is the VM's death: a trap, the call stack exhausted, a call
  // refused because the VM is dead)
  const fault = (e) => !(e instanceof Error) || e instanceof WebAssembly.RuntimeError || e instanceof RangeError || isDeadVMError(e);

  // ruby.wasm's evalAsync, or what useEvalAsync put in its place
  const original = vm.evalAsync;
  let evalAsync = original;
  if (typeof original === 'function') {
    vm.evalAsync = (code) => {
      if (dead) return Promise.reject(dead);
      return new Promise((resolve, reject) => {
        pending.add(reject);
        const settle = (f) => (v) => {
          pending.delete(reject);
          f(v);
        };
        let p;
        try {
          p = evalAsync.call(vm, code);
        } catch (e) {
          settle(reject)(dead || (evalAsync !== original && fault(e) ? die(e) : e));
          return;
        }
        p.then(settle(resolve), (e) => settle(reject)(dead || e));
      });
    };
  }

  // (a Ruby exception in the woken fiber is the waker's Error, as before)
  const watch = (b) => {
    if (!b || bridges.has(b)) return;
    bridges.add(b);
    if (dead && b.connections) b.connections.closeAll();
    if (typeof b.wake !== 'function') return;
    const wake = b.wake;
    b.wake = () => {
      if (dead) return undefined;
      try {
        return wake.call(b);
      } catch (e) {
        if (!fault(e)) throw e;
        die(e);
        return undefined;
      }
    };
  };
  watch(bridge);

  // make(original) → a function to run vm.evalAsync's code with in place
  // of ruby.wasm's (which it may call), or null to keep ruby.wasm's
  const useEvalAsync = (make) => {
    const f = typeof original === 'function' ? make(original) : null;
    if (f) evalAsync = f;
  };

  const guard = { dead: () => dead, watch, die, useEvalAsync };
  guards.set(vm, guard);
  return guard;
}
