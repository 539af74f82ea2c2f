// A wait of a blocking transport made without blocking: under
// NetHttpWasm::Scheduler a fiber that would wait for the network (a
// connection, records, room to write) yields instead, and the scheduler,
// when every fiber waits, blocks until the I/O thread reports something,
// then polls every Pending (Bridge#idle). The clock is block()'s:
// `ready()` holds → done with true; `ms` milliseconds pass with nothing
// arriving on `conn` → done with false (each arrival restarts the clock
// unless `once`, and for a wait for `room` each write the OS took too; ms
// null: no limit).
export class Pending {
  constructor(conn, ready, ms, once = false, room = false) {
    this.conn = conn;
    this.ready = ready;
    this.limit = ms == null ? Infinity : ms;
    this.deadline = performance.now() + this.limit;
    this.once = once;
    this.room = room; // a wait for room to write: the I/O thread must report writes
    this.seen = this.events();
    this.steps = [];
  }

  // f(value) gives the value once the wait is over (steps run in order).
  map(f) {
    this.steps.push(f);
    return this;
  }

  // What restarts the clock, counted.
  events() {
    const c = this.conn;
    return !c ? 0 : this.room ? c.arrivals + c.flushes : c.arrivals;
  }

  // The value when the wait is over, else undefined.
  poll(now) {
    let ok = true;
    if (!this.ready()) {
      if (this.conn && !this.once && this.events() !== this.seen) {
        this.seen = this.events();
        this.deadline = now + this.limit;
      }
      if (now < this.deadline) return undefined;
      ok = false;
    }
    let v = ok;
    for (const f of this.steps) v = f(v);
    return v;
  }
}

// f applied to a value, to a Pending's value or to a promise's.
export function then(v, f) {
  if (v instanceof Pending) return v.map(f);
  return v && typeof v.then === 'function' ? v.then(f) : f(v);
}
