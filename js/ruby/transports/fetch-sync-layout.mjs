// The memory fetch-sync.mjs shares with its helper Worker
// (fetch-sync-worker.mjs).
//
// The doorbell: an Int32Array of 2 over a SharedArrayBuffer. BELL counts
// the helper's writes (the VM's thread sleeps on it); READY is 1 once the
// helper runs.
export const BELL = 0;
export const READY = 1;

// A response's ring: 16 bytes of Int32 counters, then RING bytes of frames.
// W and R count the bytes written and read (modulo 2^32; each frame starts
// at W & MASK); HELPER is 1 while the helper may still write; CANCEL is set
// by the VM's thread when it lets go of the connection.
export const RING = 1 << 20;
export const MASK = RING - 1;
export const W = 0;
export const R = 1;
export const HELPER = 2;
export const CANCEL = 3;
// The most bytes a data frame holds (a larger piece of a body is split):
// what the VM's thread takes from the ring at a time.
export const FRAME_MAX = 64 * 1024;

// Frame types: F_PAD (the rest of the ring up to its end is skipped),
// F_DATA (bytes of the response: its head as HTTP/1.1, then its body),
// F_END (the body is whole, and its end framed it: the connection ends),
// F_ERROR (lines.failure of schema/bridge.mjs), F_OVER (the body is whole,
// as its head framed it: the connection stays for the next request).
export const F_PAD = 0;
export const F_DATA = 1;
export const F_END = 2;
export const F_ERROR = 3;
export const F_OVER = 4;
