// Synchronous Net::HTTP on a page's main thread with JavaScript Promise
// Integration (WebAssembly.Suspending / WebAssembly.promising): Ruby code
// run by evalJspi(code) waits for a promise by suspending the VM's wasm
// stack until it settles, with no fiber switch and no thread of its own:
// Net::HTTP over fetch() (the waiting transport, fetch-async.mjs) works
// inside any block (Array#map, Hash#each) and JS::Object#await works
// anywhere in that code. The page's event loop runs while Ruby waits.
//
// How: ruby.wasm 2.10.1 has no import of its own for this, so one of its
// JS imports is made the suspending one: js-value-strictly-equal (Ruby's
// JS::Object#strictly_eql?, which nothing in ruby.wasm's own Ruby code
// calls). A wait parks its promise here (ctl.park), then calls
// ctl.strictly_eql?(ctl): the import awaits the parked promise, and the
// wasm stack is suspended meanwhile. The VM's Ruby code is entered through
// rb-eval-string-protect wrapped by WebAssembly.promising. What follows:
// - strictly_eql? works only inside evalJspi (elsewhere it traps with a
//   SuspendError: a suspending import needs a promising entry);
// - while one evalJspi waits, a call into the VM from JS (vm.eval, a Ruby
//   block an event calls) runs as ruby.wasm's nested calls do (no fiber
//   switch, no GC) and its waits are not suspended (JS::Object#await
//   raises as under vm.eval); evalJspi calls run one after the other;
// - NetHttpWasm::Scheduler's waits are not suspended (use fibers of your
//   own, or evalAsync).
const STRICT_EQ = 'js-value-strictly-equal: func(lhs: handle<js-abi-value>, rhs: handle<js-abi-value>) -> bool';
const EVAL = 'rb-eval-string-protect: func(str: string) -> tuple<handle<rb-abi-value>, s32>';

/** Whether the engine has JSPI (Chromium 137 on, Node 24 on). */
export function hasJspi() {
  return typeof WebAssembly.Suspending === 'function' && typeof WebAssembly.promising === 'function';
}

// The waits' state, shared by the import and the Ruby side.
export function jspiState() {
  const state = {
    vm: null,
    running: false, // an evalJspi call is in the VM
    plain: 0, // calls into the VM made from JS meanwhile, not suspendable
    parked: null, // [promise, box] of the wait about to suspend
    queue: Promise.resolve(),
  };
  // What Ruby calls: park(promise) → a box the wait's outcome goes into, or
  // false when this code cannot suspend (then it waits as without JSPI).
  state.ctl = {
    park(promise) {
      if (!state.running || state.plain) return false;
      const box = { state: 'waiting', value: undefined };
      state.parked = [promise, box];
      return box;
    },
    active: () => state.running && !state.plain,
  };
  return state;
}

// RubyVM.instantiateModule's addToImports: the suspending import.
export function jspiImports(state) {
  return (imports) => {
    const host = imports['rb-js-abi-host'];
    const strictlyEqual = host[STRICT_EQ];
    if (typeof strictlyEqual !== 'function') throw new Error(`installNetHttp: this ruby.wasm has no import ${STRICT_EQ.split(':')[0]} (JSPI needs ruby.wasm 2.10)`);
    host[STRICT_EQ] = new WebAssembly.Suspending(async (lhs, rhs) => {
      const parked = state.parked;
      state.parked = null;
      if (parked) {
        const [promise, box] = parked;
        const vm = state.vm;
        // (a call into the VM meanwhile is a nested one, as JS → Ruby → JS → Ruby)
        const nested = vm.interfaceState.hasJSFrameAfterRbFrame;
        vm.interfaceState.hasJSFrameAfterRbFrame = true;
        try {
          box.value = await promise;
          box.state = 'ok';
        } catch (e) {
          box.value = e;
          box.state = 'failed';
        } finally {
          vm.interfaceState.hasJSFrameAfterRbFrame = nested;
        }
      }
      return strictlyEqual(lhs, rhs);
    });
  };
}

// Ruby's waits through ctl: JS::Object#await (JS.promise_scheduler) and
// the bridge's own (NetHttpWasm.await_host).
const RUBY = `proc do |ctl|
  JS.promise_scheduler.singleton_class.prepend(Module.new do
    define_method(:await) do |promise|
      box = ctl.call(:park, promise)
      next super(promise) unless box.typeof == 'object'
      ctl.strictly_eql?(ctl)
      raise JS::Error.new(box[:value]) if box[:state].to_s == 'failed'
      box[:value]
    end
  end)
  if defined?(NetHttpWasm)
    NetHttpWasm.singleton_class.prepend(Module.new do
      define_method(:await_host) do |promise|
        ctl.call(:active) == JS::True ? JS.promise_scheduler.await(promise) : super(promise)
      end
    end)
  end
  nil
end`;

/**
 * Sets a VM made with jspiImports(state) up for JSPI; returns evalJspi(code)
 * → Promise of the RbValue (an exception: an Error with Ruby's message).
 */
export function jspiEval(vm, state) {
  state.vm = vm;
  vm.eval(RUBY).call('call', vm.wrap(state.ctl));
  // calls into the VM from JS, counted (they are not suspendable)
  const guest = vm.guest;
  for (const key of Object.keys(guest)) {
    const fn = guest[key];
    if (typeof fn !== 'function' || key.startsWith('_')) continue;
    guest[key] = (...args) => {
      state.plain++;
      try {
        return fn(...args);
      } finally {
        state.plain--;
      }
    };
  }
  const ex = vm.instance.exports;
  const run = WebAssembly.promising(ex[EVAL]);
  const RbValue = vm.eval('nil').constructor;
  const encoder = new TextEncoder();
  const once = async (code) => {
    const bytes = encoder.encode(`${code}\0`);
    const ptr = ex.cabi_realloc(0, 0, 1, bytes.length);
    new Uint8Array(ex.memory.buffer, ptr, bytes.length).set(bytes);
    state.running = true;
    let ret;
    try {
      ret = await run(ptr, bytes.length);
    } finally {
      state.running = false;
      state.parked = null;
    }
    const dv = new DataView(ex.memory.buffer);
    const value = guest._resource0_slab.remove(dv.getInt32(ret, true));
    const status = dv.getInt32(ret + 4, true);
    if (status !== 0) {
      const error = new RbValue(guest.rbErrinfo(), vm, vm.privateObject());
      guest.rbClearErrinfo();
      const e = new Error(error.call('nil?').toString() === 'true' ? `Ruby code ended by a non-local exit (tag ${status})` : vm.exceptionFormatter.format(error, vm, vm.privateObject()));
      e.name = 'RbError';
      throw e;
    }
    return new RbValue(value, vm, vm.privateObject());
  };
  return (code) => {
    const next = state.queue.then(() => once(String(code)));
    state.queue = next.catch(() => {});
    return next;
  };
}
