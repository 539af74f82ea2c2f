// Waiting, for the calls Ruby makes (Bridge extends Waits): a waiting
// transport's fiber parks on a promise and is woken when it settles; under
// NetHttpWasm::Scheduler many fibers wait on one promise (collect,
// whenSettled), and over a blocking transport a call that would wait is
// made without blocking and kept as a Pending until it is over (deferred,
// idle). The calls Ruby makes here are declared in schema/bridge.mjs.
import { Pending } from './pending.mjs';
import { WAITING_CALLS, settledLines, settledList } from './constants.mjs';

export class Waits {
  constructor(transport, wake, roomCheck = () => {}) {
    this.transport = transport;
    this.wake = wake;
    this.roomCheck = roomCheck; // (headroom.mjs: at each wait, each scheduler's turn, each thread's start)
    this.settled = '';
    this.lastPoll = 0; // when Ruby last came back from the event loop
    this.settledList = [];
    this.onSettled = null;
    this.pendings = new Map(); // token → Pending (a blocking transport under the scheduler)
    this.outcomes = new Map(); // token → { value } (JS::Object#await: outcome)
    this.evaluation = ''; // lines.evaluation: vm.evalAsync's code, for NetHttpWasm.__eval_async
    this.onEvalSettled = null; // (token, ok, value): rubywasm-internals.mjs evaluator's
  }

  // Ruby: vm.evalAsync's evaluation `token` is over (NetHttpWasm::EvalFuture):
  // ok 1 with the code's value, 0 with its exception (RbValues).
  // Over a blocking transport that made connections since Node's event
  // loop last turned (node-blocking.mjs: it lets go of their handles only
  // then), the promise settles after a turn of the loop: awaited
  // vm.evalAsync calls one after another do not turn it otherwise.
  evalSettled(token, ok, value) {
    if (!this.onEvalSettled) return;
    if (this.transport.heldUntilTurn && this.transport.heldUntilTurn()) setImmediate(() => this.onEvalSettled(token, ok, value));
    else this.onEvalSettled(token, ok, value);
  }

  // -- waiting transports: Ruby parks its fiber, the bridge resumes it --

  // Ruby: resumes waiter `token` once the promise settles: wake() calls
  // NetHttpWasm.__wake, which reads `settled` (lines.settled; the value is
  // a number or a string; a promise that rejects, a defect of the host's,
  // raises NetHttpWasm::HostError where the fiber waits). (Passing it as an
  // argument would need vm.wrap, whose objects ruby.wasm never frees.)
  park(promise, token) {
    this.roomCheck();
    whenSettled(promise, (failed, value) => {
      this.lastPoll = performance.now();
      this.settled = settledLines({ token, failed, value });
      this.wake();
    });
  }

  // Ruby (JS::Object#await, NetHttpWasm.await_js): a promise of the
  // program's as one of the bridge's, which never rejects and settles with
  // a number (1: it fulfilled, 0: it rejected), so that Ruby waits for it
  // as for its own (park or collect); the value or reason is kept for
  // outcomeValue. (ruby.wasm's own await resumes the fiber from a Ruby proc
  // called as a promise's reaction: a VM that dies there rejects a promise
  // no one handles, which ends a Node process.)
  outcome(promise, token) {
    const box = { value: undefined };
    this.outcomes.set(token, box);
    const keep = (ok) => (v) => {
      box.value = v;
      return ok;
    };
    return Promise.resolve(promise).then(keep(1), keep(0));
  }

  // Ruby: the value (or reason) outcome kept for token, let go of here
  // (undefined: not settled, the wait given up).
  outcomeValue(token) {
    const box = this.outcomes.get(token);
    this.outcomes.delete(token);
    return box ? box.value : undefined;
  }

  // Ruby: a fiber of NetHttpWasm::Scheduler's starts (a thread's first
  // allocations come in bursts: headroom.mjs).
  headroom() {
    this.roomCheck();
    return 0;
  }

  // -- NetHttpWasm::Scheduler: many fibers wait on one promise --

  // Ruby: notes `token` and the promise's value once it settles.
  collect(promise, token) {
    whenSettled(promise, (failed, value) => {
      this.settledList.push({ token, failed, value });
      const w = this.onSettled;
      if (w) {
        this.onSettled = null;
        w();
      }
    });
  }

  // Ruby: what settled since the last call (lists.settled).
  takeSettled() {
    this.roomCheck();
    this.pollPendings();
    if (!this.settledList.length) return '';
    const s = settledList(this.settledList);
    this.settledList = [];
    return s;
  }

  // Ruby: a promise that resolves when something has settled, or after ms
  // milliseconds (ms < 0: no limit).
  whenSettled(ms) {
    if (this.settledList.length) return Promise.resolve(1);
    return new Promise((resolve) => {
      const timer = ms >= 0 ? setTimeout(() => {
        this.onSettled = null;
        resolve(0);
      }, ms) : null;
      this.onSettled = () => {
        if (timer) clearTimeout(timer);
        resolve(1);
      };
    });
  }

  // -- NetHttpWasm::Scheduler over a blocking transport --

  // Ruby: bridge call `name` (one that may wait for the network) made
  // without blocking; its value is noted for `token` (takeSettled) at once,
  // or, when it must wait, once its Pending is over (idle, takeSettled).
  deferred(token, name, ...args) {
    if (!WAITING_CALLS.has(name)) throw new TypeError(`not a deferrable call: ${name}`);
    const r = this.transport.deferred(() => this[name](...args));
    if (r instanceof Pending) this.pendings.set(token, r);
    else this.settledList.push({ token, failed: false, value: r });
    return 0;
  }

  // Ruby: a fiber waiting for `token` was given up (an exception raised in
  // it): its wait is dropped before it can write into Ruby's memory.
  forget(token) {
    this.pendings.delete(token);
  }

  // Ruby, when every fiber waits: blocks until the I/O thread's events end
  // a Pending (1), or for ms milliseconds (0; ms < 0: no limit).
  idle(ms) {
    const end = ms < 0 ? Infinity : performance.now() + ms;
    let room = false;
    const conns = new Set();
    for (const p of this.pendings.values()) {
      room ||= p.room;
      if (p.conn) conns.add(p.conn);
    }
    const until = () => {
      let t = end;
      for (const p of this.pendings.values()) if (p.deadline < t) t = p.deadline;
      return t;
    };
    // (the transport takes the events and reads the connections itself)
    return this.transport.idle(() => this.pollPendings(false) > 0, until, room, [...conns]) ? 1 : 0;
  }

  // Moves the values of the Pendings that are over to settledList, after
  // taking what came for them (`look`).
  pollPendings(look = true) {
    if (this.pendings.size) {
      if (look) for (const p of this.pendings.values()) this.transport.pump(p.conn);
      const now = performance.now();
      for (const [token, p] of this.pendings) {
        const v = p.poll(now);
        if (v !== undefined) {
          this.pendings.delete(token);
          this.settledList.push({ token, failed: false, value: v });
        }
      }
    }
    return this.settledList.length;
  }
}

// Calls f(false, value) once a bridge promise fulfils, or f(true, the
// reason's text) if it rejects (NetHttpWasm::HostError's message).
function whenSettled(promise, f) {
  promise.then((v) => f(false, v), (e) => f(true, e instanceof Error ? `${e.name}: ${e.message}` : String(e)));
}

// Resolves with true when ready() holds, or false when ms milliseconds pass
// with nothing arriving (each arrival restarts the clock, as BufferedIO's
// read_timeout applies to each wait for data; `once`: the clock does not
// restart, as IO#wait_readable's timeout; `room`: a wait for room to write,
// whose clock each write the OS took restarts too, as each write(2) does
// write_timeout's). The timer is armed only when there is nothing to read.
export function waitFor(conn, ready, ms, once = false, room = false) {
  if (ready()) return Promise.resolve(true);
  // (a connection read on its fd alone until now is watched by the loop)
  if (conn.watch) conn.watch();
  return new Promise((resolve) => {
    let timer = null;
    const arm = () => {
      if (ms == null) return;
      if (timer) {
        if (once) return;
        clearTimeout(timer);
      }
      timer = setTimeout(() => {
        conn.waiter = null;
        resolve(false);
      }, ms);
    };
    const waiter = (flushed) => {
      if (ready()) {
        if (timer) clearTimeout(timer);
        resolve(true);
      } else {
        conn.waiter = waiter;
        if (!flushed || room) arm();
      }
    };
    conn.waiter = waiter;
    arm();
  });
}
