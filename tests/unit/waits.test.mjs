// The clocks of a connection's waits (js/ruby/waits.mjs waitFor for the
// waiting transports, js/ruby/pending.mjs for a blocking transport under
// the scheduler): as BufferedIO's read_timeout, each arrival of data
// restarts a wait for data, and a write the OS took does not; a wait for
// room to write (write_timeout) restarts on each write the OS took.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Conn } from '../../js/ruby/conn.mjs';
import { waitFor } from '../../js/ruby/waits.mjs';
import { Pending } from '../../js/ruby/pending.mjs';

// A Conn with no transport under it: what arrives and what is flushed is
// told to it by the test.
function conn() {
  const c = new Conn({});
  c.pause = () => {};
  c.resume = () => {};
  return c;
}

// The outcome of a promise by now: 'pending', or its value.
async function outcome(p) {
  const marker = Symbol('pending');
  const v = await Promise.race([p, new Promise((r) => setImmediate(() => r(marker)))]);
  return v === marker ? 'pending' : v;
}

test('waitFor: a write the OS took does not restart a wait for data; an arrival does', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const c = conn();
  const flushedOnly = waitFor(c, () => false, 100);
  t.mock.timers.tick(60);
  c.unsent = 10;
  c.onFlushed(10);
  t.mock.timers.tick(40);
  assert.equal(await outcome(flushedOnly), false, 'timed out 100 ms after it started');

  const c2 = conn();
  const arrived = waitFor(c2, () => false, 100);
  t.mock.timers.tick(60);
  c2.onData(new Uint8Array([1]));
  t.mock.timers.tick(40);
  assert.equal(await outcome(arrived), 'pending', 'the arrival at 60 ms restarted the clock');
  t.mock.timers.tick(60);
  assert.equal(await outcome(arrived), false);
});

test('waitFor: a wait for room restarts on each write the OS took, and ends once there is room', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const c = conn();
  c.unsent = 3;
  const room = waitFor(c, () => c.unsent === 0, 100, false, true);
  t.mock.timers.tick(60);
  c.onFlushed(1);
  t.mock.timers.tick(60);
  assert.equal(await outcome(room), 'pending', 'the flush at 60 ms restarted the clock');
  c.onFlushed(2);
  assert.equal(await outcome(room), true);
});

test('Pending: a blocking wait for data restarts on arrivals only; a wait for room on writes too', () => {
  const c = conn();
  const read = new Pending(c, () => false, 100);
  const room = new Pending(c, () => false, 100, false, true);
  const t0 = read.deadline - 100;
  c.onFlushed(0);
  assert.equal(read.poll(t0 + 50), undefined);
  assert.equal(room.poll(t0 + 50), undefined);
  // the read wait's deadline stayed; the room wait's moved to 50 + 100
  assert.equal(read.poll(t0 + 120), false);
  assert.equal(room.poll(t0 + 120), undefined);
  assert.equal(room.poll(t0 + 151), false);

  const again = new Pending(c, () => false, 100);
  const t1 = again.deadline - 100;
  c.onData(new Uint8Array([1]));
  assert.equal(again.poll(t1 + 50), undefined);
  assert.equal(again.poll(t1 + 120), undefined, 'the arrival seen at 50 ms moved the deadline to 150 ms');
  assert.equal(again.poll(t1 + 151), false);
});
