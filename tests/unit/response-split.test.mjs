// ResponseParser fed in pieces gives what parseResponse gives for the whole
// input (which tests/unit/response.test.mjs checks against MRI), for every case
// of tests/fixtures/cases/response_*.json and for seeded random responses:
//   - every single split point and byte-by-byte feeding, for inputs up to
//     SMALL bytes; every pair of split points for inputs up to TINY bytes;
//   - random partitions and fixed 16 KiB / 4 KiB / 1000-byte pieces for all;
//   - one parser reused (reset) across all cases.
// Plus: memory stays bounded while a large body streams through.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { builds } from '../support/builds.mjs';
import { prng } from '../support/prng.mjs';
import { bindResponse } from '../../js/response-parser.mjs';
import { NetHttpError } from '../../js/errors.mjs';
import { loadResponseCases, oursOneShot, oursIncremental, caseBytes, randomResponseCases, randomDecodeCases } from '../support/oracle/response.mjs';

const apis = builds.map((b) => ({ name: b.name, api: { ...bindResponse(b.api.codec), NetHttpError } }));
const cases = loadResponseCases().flatMap((f) => f.cases);
const SMALL = Number(process.env.NETHTTP_SPLIT_ALL_MAX || 600);
const TINY = 40;
const RANDOM = Number(process.env.NETHTTP_RANDOM_CASES || 300);

function plans(n, seed, full) {
  const out = [];
  if (n > 1) {
    if (full && n <= SMALL) {
      for (let i = 1; i < n; i++) out.push([i]);
      out.push(Array.from({ length: n - 1 }, (_, i) => i + 1));
    }
    if (full && n <= TINY) for (let i = 1; i < n; i++) for (let j = i + 1; j < n; j++) out.push([i, j]);
    for (const size of [16384, 4096, 1000, 7]) {
      if (size >= n || (size === 7 && n > 20000)) continue;
      const p = [];
      for (let i = size; i < n; i += size) p.push(i);
      out.push(p);
    }
    const r = prng(seed);
    for (let k = 0; k < (n > SMALL ? 12 : 4); k++) {
      const cuts = new Set();
      const m = 1 + Math.floor(r() * Math.min(n - 1, 40));
      for (let i = 0; i < m; i++) cuts.add(1 + Math.floor(r() * (n - 1)));
      out.push([...cuts].sort((a, b) => a - b));
    }
  }
  out.push([]);
  return out;
}

function check(api, list, profiles, full, label) {
  const diffs = [];
  let runs = 0;
  const shared = new api.ResponseParser();
  try {
    list.forEach((c, idx) => {
      const n = caseBytes(c).length;
      for (const profile of profiles) {
        const want = oursOneShot(api, c, profile);
        const ps = plans(n, idx + 1, full);
        for (const cuts of ps) {
          runs++;
          const got = oursIncremental(api, c, cuts, profile);
          if (!isDeepStrictEqual(got, want)) {
            diffs.push({ id: c.id, cuts, want, got });
            break;
          }
        }
        // the same parser, reset between messages of different cases
        runs++;
        const got = oursIncremental(api, c, ps[ps.length - 2] || [], profile, shared);
        if (!isDeepStrictEqual(got, want)) diffs.push({ id: `${c.id} (shared parser)`, cuts: [], want, got });
      }
    });
  } finally {
    shared.close();
  }
  const show = diffs
    .slice(0, 4)
    .map((d) => `${d.id} cuts=${JSON.stringify(d.cuts).slice(0, 80)}\n  one-shot ${JSON.stringify(d.want).slice(0, 500)}\n  pieces   ${JSON.stringify(d.got).slice(0, 500)}`)
    .join('\n');
  assert.equal(diffs.length, 0, `${label}: ${diffs.length} cases differ (of ${runs} runs):\n${show}`);
  if (process.env.NETHTTP_VERBOSE) console.log(`# ${label}: ${list.length} cases, ${runs} incremental runs`);
  return runs;
}

for (const { name, api } of apis) {
  describe(`${name}: split-point equivalence`, () => {
    const full = name === 'clang'; // every split point on one build, sampled on the other
    test(`fixed cases (${cases.length})`, () => {
      check(api, cases, ['4.0', '3.4'], full, 'fixed');
    });
    test(`random responses (${RANDOM})`, () => {
      check(api, randomResponseCases(7, RANDOM), ['4.0'], full, 'random');
    });
    test(`random compressed bodies (${Math.ceil(RANDOM / 4)})`, async () => {
      check(api, await randomDecodeCases(11, Math.ceil(RANDOM / 4)), ['4.0'], false, 'decode');
    });
  });

  describe(`${name}: memory stays bounded`, () => {
    test('a 64 MiB chunked body through 16 KiB feeds', () => {
      const p = new api.ResponseParser();
      const chunk = new Uint8Array(16384 + 8);
      const hdr = Buffer.from('4000\r\n');
      chunk.set(hdr, 0);
      chunk.fill(120, hdr.length, hdr.length + 16384);
      chunk.set(Buffer.from('\r\n'), hdr.length + 16384);
      p.feed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'));
      const before = api.parseResponse.length >= 0 ? apis.find((a) => a.api === api) : null;
      const mem0 = builds.find((b) => b.name === name).api.codec.memorySize();
      let total = 0;
      for (let i = 0; i < 4096; i++) for (const e of p.feed(chunk.subarray(0, hdr.length + 16386))) total += e.data.length;
      const ev = p.feed(Buffer.from('0\r\n\r\n'));
      assert.equal(ev[ev.length - 1].type, 'end');
      assert.equal(total, 64 << 20);
      const grown = builds.find((b) => b.name === name).api.codec.memorySize() - mem0;
      assert.ok(grown <= 1 << 20, `wasm memory grew by ${grown} bytes`);
      assert.ok(before);
      p.close();
    });

    test('a 32 MiB gzip body (decoded) through 16 KiB feeds', async () => {
      const zlib = await import('node:zlib');
      const plain = Buffer.alloc(32 << 20, 'abcdefgh');
      const gz = zlib.gzipSync(plain, { level: 1 });
      const p = new api.ResponseParser({ decodeContent: true });
      p.feed(Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`));
      const mem0 = builds.find((b) => b.name === name).api.codec.memorySize();
      let total = 0;
      let ended = false;
      for (let i = 0; i < gz.length; i += 16384) {
        for (const e of p.feed(gz.subarray(i, i + 16384))) {
          if (e.type === 'body') total += e.data.length;
          if (e.type === 'end') ended = e.response.get('content-length') === String(plain.length);
        }
      }
      assert.ok(ended);
      assert.equal(total, plain.length);
      const grown = builds.find((b) => b.name === name).api.codec.memorySize() - mem0;
      assert.ok(grown <= 8 << 20, `wasm memory grew by ${grown} bytes`);
      p.close();
    });
  });
}
