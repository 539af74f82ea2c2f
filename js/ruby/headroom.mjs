// Room for malloc ahead of need. malloc grows a wasm memory by what one
// allocation lacks (a 64 KiB page or a few; 4 MiB at least in a module
// that patchRubyWasm rewrote, module-patch.mjs), and V8 may follow every
// growth with a full garbage collection: on Node 20 and 22, whose
// incremental marking createRubyVM turns off, 5-10 ms each, after each of
// the hundreds of small growths of a fresh VM's first bursts (Ruby's heap
// pages, 64 KiB each, while NetHttpWasm::Scheduler holds the collector
// off). Whenever the memory has grown since it last looked, the check
// gives malloc a block at once (reserveBeside: small allocations come from
// it; the large mmaps of fiber stacks still grow the memory, unzeroed), a
// thirty-second of the memory and at least STEP (below the fiber pool's
// larger expansions, which so stay unzeroed): the growths of a burst are
// then a few large ones. Pages never touched take no RAM.
import { reserveBeside } from './module-patch.mjs';

const STEP = 8 << 20;

/**
 * A function to call where the host runs between pieces of Ruby work (a
 * wait, a scheduler's turn): it does nothing while the memory keeps its
 * size, and nothing at all for a module without cabi_realloc, nor once
 * the memory could not grow by a block (Ruby's own allocations then meet
 * the limit as they would have without it).
 */
export function headroom(exports) {
  const memory = exports && exports.memory;
  if (!(memory instanceof WebAssembly.Memory) || typeof exports.cabi_realloc !== 'function') return () => {};
  let seen = memory.buffer.byteLength;
  let full = false; // the memory could not grow by a block: from then on malloc grows it alone
  return () => {
    const size = memory.buffer.byteLength;
    if (size === seen || full) return;
    full = !reserveBeside(exports, Math.max(STEP, size / 32));
    seen = memory.buffer.byteLength;
  };
}
