// The helper Worker of fetch-sync.mjs: it makes the fetch() calls of a
// VM's Worker that blocks, and streams each response into the ring (a
// SharedArrayBuffer) the VM's thread reads as it sleeps on the doorbell
// (Atomics.wait). Frames: u8 type, u32 length (little-endian), payload;
// a frame never wraps (see fetch-sync.mjs for the layout). When the ring
// is full this Worker waits (Atomics.waitAsync) for the VM's thread to
// read: a body is held here a ring at most, however large. A response its
// head frames (fetch-map.mjs framing: a length, no body, or chunks the
// browser took off, put back here) ends with F_OVER, which leaves the
// connection to its next request; one its end frames, with F_END.
import { responseHead, fetchFailed, framing, CHUNKED, REDIRECTED } from './fetch-map.mjs';
import { chunkFrame, CHUNK_END } from '../../body-stream.mjs';
import { failureLines } from '../constants.mjs';
import { RING, MASK, W, R, HELPER, CANCEL, FRAME_MAX, F_PAD, F_DATA, F_END, F_ERROR, F_OVER, BELL, READY } from './fetch-sync-layout.mjs';

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);
let bell = null;
const jobs = new Map(); // id → AbortController

self.addEventListener('message', (e) => {
  const m = e.data;
  if (m.op === 'init') {
    bell = m.bell;
    Atomics.store(bell, READY, 1);
    ring(bell);
    postMessage({ ready: true });
  } else if (m.op === 'fetch') run(m);
  else if (m.op === 'abort') jobs.get(m.id)?.abort();
});

function ring(b) {
  Atomics.add(b, BELL, 1);
  Atomics.notify(b, BELL);
}

async function run({ id, url, method, headers, body, buffer }) {
  const ctl = new Int32Array(buffer, 0, 4);
  const out = { ctl, u8: new Uint8Array(buffer, 16, RING), dv: new DataView(buffer, 16, RING) };
  const aborter = new AbortController();
  jobs.set(id, aborter);
  try {
    let res;
    try {
      // Net::HTTP has no cache, and does not follow redirects
      res = await fetch(url, { method, headers, body, redirect: 'manual', cache: 'no-store', signal: aborter.signal });
    } catch (e) {
      await put(out, F_ERROR, encoder.encode(failureLines({ kind: 'NetHttpWasm::FetchError', detail: fetchFailed(e) })));
      return;
    }
    if (res.type === 'opaqueredirect') {
      await put(out, F_ERROR, encoder.encode(failureLines({ kind: 'NetHttpWasm::FetchError', detail: REDIRECTED })));
      return;
    }
    const framed = framing(method, res.status, res.headers);
    const chunked = framed === CHUNKED;
    const head = responseHead(res.status, res.statusText, (each) => res.headers.forEach((value, name) => each(name, value)), chunked);
    if (!(await put(out, F_DATA, head))) return;
    let left = typeof framed === 'number' ? framed : Infinity;
    if (res.body && left > 0) {
      const reader = res.body.getReader();
      for (;;) {
        let r;
        try {
          r = await reader.read();
        } catch {
          await put(out, F_ERROR, encoder.encode(failureLines({ kind: 'Errno::ECONNRESET', detail: '' })));
          return;
        }
        if (r.done) break;
        if (!r.value.length) continue;
        if (!chunked) left -= r.value.length;
        if (!(await put(out, F_DATA, chunked ? chunkFrame(r.value) : r.value))) return;
      }
    }
    if (chunked && !(await put(out, F_DATA, CHUNK_END))) return;
    // (a body shorter than its length, if a browser hands one over, ends
    // the connection: Ruby reads the short body as natively)
    await put(out, chunked || left <= 0 ? F_OVER : F_END, EMPTY);
  } finally {
    jobs.delete(id);
    aborter.abort();
    // the ring is the VM thread's again
    Atomics.store(ctl, HELPER, 0);
    ring(bell);
  }
}

// Writes a frame (a data frame in as many as the room takes), waiting for
// room: false when the VM's thread let go of the connection.
async function put(out, type, bytes) {
  const { ctl, u8, dv } = out;
  let off = 0;
  for (;;) {
    if (Atomics.load(ctl, CANCEL)) return false;
    const left = bytes.length - off;
    const w = Atomics.load(ctl, W) >>> 0;
    const r = Atomics.load(ctl, R) >>> 0;
    const free = RING - ((w - r) >>> 0);
    const pos = w & MASK;
    const tail = RING - pos;
    const whole = type !== F_DATA;
    // (the ring's end too near for a header, or for a frame not split: from its start)
    const skip = tail < 5 || (whole && tail < 5 + left) ? tail : 0;
    if (free < skip + 5 + (whole ? left : 1)) {
      const wait = Atomics.waitAsync(ctl, R, r | 0);
      if (wait.async) await wait.value;
      continue;
    }
    if (skip) {
      if (tail >= 5) u8[pos] = F_PAD;
      Atomics.store(ctl, W, (w + skip) | 0);
      continue;
    }
    const n = Math.min(left, free - 5, tail - 5, whole ? left : FRAME_MAX);
    u8[pos] = type;
    dv.setUint32(pos + 1, n, true);
    u8.set(n === bytes.length ? bytes : bytes.subarray(off, off + n), pos + 5);
    off += n;
    Atomics.store(ctl, W, (w + 5 + n) | 0);
    ring(bell);
    if (off >= bytes.length) return true;
  }
}
