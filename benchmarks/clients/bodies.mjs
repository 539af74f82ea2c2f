// The bodies the client benchmark's server sends, and so the bodies every
// client must read back. Shared by server.mjs (which sends them) and run.mjs
// (which tells each client the length and sha256 to expect).
import { createHash } from 'node:crypto';

/** The body of /bytes/2048 and of the routes that take no size: seed 001's "2 KiB file". */
export const DEFAULT_SIZE = 2048;
/** Larger bodies are refused (the server is for benchmarks, not for filling memory). */
export const MAX_SIZE = 64 << 20;

// Every byte value occurs (a body that survives only as UTF-8 text fails),
// the same bytes on every call.
function pattern(n) {
  const b = Buffer.allocUnsafe(n);
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = (x >>> 0) & 0xff;
  }
  return b;
}

const cache = new Map();
/** The n bytes of /bytes/n (also /chunked/n and, decoded, /gzip/n). */
export function bytes(n) {
  let b = cache.get(n);
  if (!b) {
    b = pattern(n);
    if (cache.size < 64) cache.set(n, b);
  }
  return b;
}

/**
 * What a route answers, from the request's path: { kind, size, delayMs }, or
 * null for a path the server does not know. kind is one of bytes, chunked,
 * gzip, delay, close, flaky.
 */
export function route(pathname) {
  const m = /^\/(bytes|chunked|gzip|delay)(?:\/(\d+))?\/?$/.exec(pathname);
  if (m) {
    const arg = m[2] === undefined ? null : Number(m[2]);
    if (m[1] === 'delay') return { kind: 'delay', size: DEFAULT_SIZE, delayMs: arg ?? 0 };
    const size = arg ?? DEFAULT_SIZE;
    return size <= MAX_SIZE ? { kind: m[1], size, delayMs: 0 } : null;
  }
  if (pathname === '/close' || pathname === '/flaky') return { kind: pathname.slice(1), size: DEFAULT_SIZE, delayMs: 0 };
  return null;
}

/** { len, sha256 } of the body a client must read from this path (after decoding gzip), or null. */
export function expected(pathname) {
  const r = route(pathname);
  return r ? digest(bytes(r.size)) : null;
}

export function digest(body) {
  return { len: body.length, sha256: createHash('sha256').update(body).digest('hex') };
}
