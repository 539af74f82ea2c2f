// Byte arrays joined: for the codec's wrappers and the transports (it
// imports nothing, so a helper Worker can take it alone).

/** The arrays of `list` as one (the array itself when there is one). */
export function concatAll(list) {
  if (list.length === 1) return list[0];
  let n = 0;
  for (const x of list) n += x.length;
  const out = new Uint8Array(n);
  let p = 0;
  for (const x of list) {
    out.set(x, p);
    p += x.length;
  }
  return out;
}
