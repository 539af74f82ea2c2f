// Reading and writing a plain TCP connection's file descriptor directly
// (read(2) and write(2) through node:fs), as MRI does, without a turn of
// the event loop: both Node transports poll a connection this way for a
// quick answer (node-blocking.mjs from the VM's thread, node-async.mjs in
// the loop's thread) before they wait for one.
import { readSync, writeSync } from 'node:fs';
import { socketError } from './node-errors.mjs';
import { socketFd, tcpFd, setNoDelayNow } from './node-internals.mjs';

// How long a wait polls a connection before it sleeps: an answer from a
// near, quick server comes within that. A connection whose last answer
// took longer than SLOW_MS is not polled; after a poll that came back
// empty, the next waits are not polled either: 1 after one such poll, 2
// after two in a row, and so on up to SKIP_AFTER_MISS (a slow server, or
// one in the same thread, which cannot answer while this one polls); an
// answer a poll took (a hit, counted by the waiting transport, for which
// a miss costs a fiber switch and a turn of the loop, and by the blocking
// one on a connection its own thread made, for which a miss costs a sleep)
// starts the count over (a quick server that was late once, as for a
// connection it had to accept first).
export const POLL_MS = 0.25;
const SLOW_MS = 1;
const SKIP_AFTER_MISS = 16;

/** Whether a connection's next wait polls (see POLL_MS). */
class PollPolicy {
  constructor() {
    this.lastWait = 0;
    this.skip = 0;
    this.misses = 0; // polls in a row that came back empty
  }
  shouldPoll() {
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    return this.lastWait < SLOW_MS;
  }
  /** The answer came after ms. */
  answered(ms) {
    this.lastWait = ms;
  }
  /** The answer came within a poll: the server is quick. */
  hit() {
    this.misses = 0;
  }
  /** A poll came back empty. */
  missed() {
    this.skip = Math.min(2 ** this.misses, SKIP_AFTER_MISS);
    this.misses++;
  }
}

// One policy per server (host and port) a connection goes to, so that a
// new connection starts from what the last ones learned.
const policies = new Map();
const POLICIES_KEPT = 64;

/** The polling policy of connections to spec's host and port. */
export function pollPolicy(spec) {
  const key = `${spec.host}:${spec.port}`;
  let p = policies.get(key);
  if (p) return p;
  if (policies.size >= POLICIES_KEPT) policies.delete(policies.keys().next().value);
  p = new PollPolicy();
  policies.set(key, p);
  return p;
}
// Reads land in one buffer (the caller copies what it keeps); a large body
// is read read after read while they fill it, up to READ_MAX at a time.
const READ_SIZE = 256 * 1024;
const READ_MAX = 1024 * 1024;
let readBuf = null;

/** The fd of a connected plain TCP socket of node:net, or -1 (TLS, a pipe, Windows). */
export const fdOf = socketFd;

// A system call: its result, or 'EAGAIN' when the kernel has nothing to
// give or no room now, or the error.
function sys(f) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return f();
  } catch (e) {
    return e && (e.code === 'EAGAIN' || e.code === 'EINTR') ? 'EAGAIN' : e;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * One read(2) into the shared buffer: [n, bytes] with n > 0 the bytes read
 * (a view of the buffer, valid until the next read), [0] when there is
 * nothing now, [-1] at the end of the stream, [-1, error] on an error.
 */
export function readFd(fd) {
  const buf = readBuf || (readBuf = new Uint8Array(READ_SIZE));
  const r = sys(() => readSync(fd, buf, 0, READ_SIZE, null));
  if (r === 'EAGAIN') return [0];
  if (typeof r !== 'number') return [-1, r];
  return r === 0 ? [-1] : [r, buf.subarray(0, r)];
}

const EMPTY = new Uint8Array(0);
// what a write says of a connection whose handshake goes on (Linux:
// EAGAIN; BSDs: ENOTCONN)
const STILL_CONNECTING = new Set(['ENOTCONN', 'EINPROGRESS', 'EALREADY']);

/**
 * Whether a node:net socket whose connect(2) was made is connected now,
 * before its event loop reports it: true; null when it cannot tell yet
 * (the handshake goes on, or not a plain socket); else the error of the
 * failed connection (ECONNREFUSED...), which the socket then no longer
 * reports itself.
 */
export function connectedNow(socket) {
  const now = connectedFd(fdOf(socket));
  // (Node sets TCP_NODELAY once it sees the connection up: now)
  if (now === true) setNoDelayNow(socket);
  return now;
}

/**
 * connectedNow of a TCP socket's fd whose connect(2) was made (-1: null).
 * A write(2) of no bytes tells, and sends nothing.
 */
export function connectedFd(fd) {
  if (fd < 0) return null;
  const r = sys(() => writeSync(fd, EMPTY));
  if (r === 0) return true;
  if (typeof r === 'number' || r === 'EAGAIN' || STILL_CONNECTING.has(r && r.code)) return null;
  return r;
}

/**
 * The error of a connection whose stream Node reports ended when a reset
 * (RST), not a close, ended it; else null. A reset that comes with bytes
 * still unread is reported by libuv as the end of the stream (it reads the
 * bytes, sees the peer hang up and reads no more), where read(2), and so
 * MRI, says ECONNRESET; a write(2) of no bytes still says it, and says
 * nothing after a close (FIN). To be called before Node's own handling of
 * the end writes to the connection (a TLS close_notify would take the
 * error): socket.prependListener('end', ...).
 */
export function resetAtEnd(socket) {
  const fd = tcpFd(socket);
  if (fd < 0) return null;
  const r = sys(() => writeSync(fd, EMPTY));
  return r && r.code === 'ECONNRESET' ? r : null;
}

/** write(2) of bytes until the kernel takes no more: [bytes taken, error or null]. */
export function writeFd(fd, bytes) {
  let off = 0;
  while (off < bytes.length) {
    const r = sys(() => writeSync(fd, bytes, off, bytes.length - off));
    if (r === 'EAGAIN') break;
    if (typeof r !== 'number') return [off, r];
    off += r;
  }
  return [off, null];
}

/** What writeFd gave, handed to a Conn: the bytes taken, or -1 (the error is the Conn's). */
export function deliverWrite(conn, [n, err]) {
  if (!err) return n;
  conn.onError(...socketError(err));
  return -1;
}

/** What readFd gave, handed to a Conn (js/ruby/conn.mjs): returns n. */
export function deliverRead(conn, [n, x]) {
  if (n > 0) conn.onData(x, true);
  else if (n < 0 && x) conn.onError(...socketError(x));
  else if (n < 0) conn.onEnd();
  return n;
}

/**
 * Reads with readOnce() (the bytes it read, 0 for nothing now, -1 at the
 * end or on an error) while reads fill the buffer, up to READ_MAX, and
 * while conn does not hold (Conn#holdReads: a large body is better read
 * when Ruby waits for it): the bytes read, or -1 when the stream ended or
 * failed.
 */
export function readBurst(readOnce, conn) {
  let total = 0;
  while (total < READ_MAX) {
    const n = readOnce();
    if (n < 0) return -1;
    total += n;
    if (n < READ_SIZE || conn.holdReads()) break;
  }
  return total;
}
