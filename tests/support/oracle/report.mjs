// Formats mismatches between two result lists for test failure messages.
import { isDeepStrictEqual } from 'node:util';

const MAX_REPORTED = Number(process.env.NETHTTP_MAX_REPORTED || 40);
const clip = (s, n = 600) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** A result with its bytes shown as an escaped binary string as well. */
function show(r) {
  if (r === undefined) return 'undefined';
  if (r && typeof r.bytes === 'string') {
    const text = Buffer.from(r.bytes, 'base64').toString('latin1');
    return clip(`bytes ${JSON.stringify(text)}`);
  }
  if (r && typeof r.base64 === 'string') {
    return clip(`base64 ${r.base64} = ${JSON.stringify(Buffer.from(r.base64, 'base64').toString('latin1'))}`);
  }
  return clip(JSON.stringify(r));
}

/** Indices where a[i] and b[i] differ. */
export function mismatches(a, b) {
  const out = [];
  for (let i = 0; i < a.length; i++) if (!isDeepStrictEqual(a[i], b[i])) out.push(i);
  return out;
}

/** "N of M cases differ" plus the first few, with input, expected and got. */
export function describe(cases, idx, expected, got, { expectedLabel = 'MRI', gotLabel = 'ours' } = {}) {
  const lines = [`${idx.length} of ${cases.length} cases differ`];
  for (const i of idx.slice(0, MAX_REPORTED)) {
    const { id, ...input } = cases[i];
    lines.push(`- ${id}`);
    lines.push(`    input:    ${clip(JSON.stringify(input), 800)}`);
    lines.push(`    ${expectedLabel.padEnd(9)} ${show(expected[i])}`);
    lines.push(`    ${gotLabel.padEnd(9)} ${show(got[i])}`);
  }
  if (idx.length > MAX_REPORTED) lines.push(`… and ${idx.length - MAX_REPORTED} more (NETHTTP_MAX_REPORTED raises the limit)`);
  return lines.join('\n');
}
