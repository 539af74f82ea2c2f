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

/**
 * Watches `vm` (a RubyVM) and `bridge` (installNetHttp's, or null). Returns
 * { dead() → the error once the VM died, else null }.
 */
export function guardVM(vm, bridge = null) {
  const guest = vm.guest;
  let dead = null;
  const pending = new Set(); // reject() of each evalAsync not yet settled
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
    if (bridge && bridge.connections) bridge.connections.closeAll();
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

  const evalAsync = vm.evalAsync;
  if (typeof evalAsync === 'function') {
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
          settle(reject)(dead || e);
          return;
        }
        p.then(settle(resolve), (e) => settle(reject)(dead || e));
      });
    };
  }

  if (bridge && typeof bridge.wake === 'function') {
    const wake = bridge.wake;
    // (a Ruby exception in the woken fiber is the waker's Error, as before)
    const fault = (e) => !(e instanceof Error) || e instanceof WebAssembly.RuntimeError || e instanceof RangeError || isDeadVMError(e);
    bridge.wake = () => {
      if (dead) return undefined;
      try {
        return wake();
      } catch (e) {
        if (!fault(e)) throw e;
        die(e);
        return undefined;
      }
    };
  }

  return { dead: () => dead };
}
