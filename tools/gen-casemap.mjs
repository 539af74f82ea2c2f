#!/usr/bin/env node
// Generates src/casemap_tables.h from real Ruby.
//
//   node tools/gen-casemap.mjs            # write src/casemap_tables.h
//   node tools/gen-casemap.mjs --check    # fail if the file on disk differs
//
// Ruby 4.0 and Ruby 3.4 (ruby.wasm, from node_modules/@ruby/*-wasm-wasi) are
// run over every Unicode scalar value (0..0x10FFFF without surrogates).  For
// each one we record
//   D  String#downcase of the one-character string, when it changes it
//   T  String#capitalize of the one-character string (titlecase, full
//      mapping), when it changes it
//   P  whether String#inspect of a UTF-8 string shows it literally
// and the tool also checks that Ruby's downcase/capitalize of multi-character
// strings equal the per-code-point composition (Ruby applies no context rule,
// e.g. no final sigma), so that per-code-point tables are exact.
//
// The output is deterministic: it only depends on the two Ruby builds.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'src', 'casemap_tables.h');

process.removeAllListeners('warning'); // node:wasi is "experimental"
const { WASI } = await import('node:wasi');
const v8 = await import('node:v8');
v8.setFlagsFromString('--no-incremental-marking');
const { RubyVM } = await import(join(ROOT, 'node_modules/@ruby/wasm-wasi/dist/esm/index.js'));

// Evaluates `code` in a fresh Ruby VM of version `ver` ("4.0" / "3.4") with
// the host directory `dir` visible as /io.
async function runRuby(ver, code, dir) {
  const mod = await WebAssembly.compile(
    readFileSync(join(ROOT, `node_modules/@ruby/${ver}-wasm-wasi/dist/ruby+stdlib.wasm`)));
  const wasi = new WASI({ version: 'preview1', returnOnExit: true, preopens: { '/io': dir } });
  const { vm } = await RubyVM.instantiateModule({ module: mod, wasip1: wasi });
  return vm.eval(code).toString();
}

// Only while loops: ruby.wasm 3.4 can crash on non-local exits in long loops.
const RUBY = String.raw`
require 'rbconfig'
out = []
prev = nil
cands = []
cp = 0
while cp <= 0x10FFFF
  if cp < 0xD800 || cp > 0xDFFF
    c = cp.chr(Encoding::UTF_8)
    d = c.downcase
    k = c.capitalize
    i = c.inspect
    pr = (i == "\"" + c + "\"" || c == "\"" || c == "\\") ? 1 : 0
    if d != c
      out << ("D %X %s" % [cp, d.codepoints.map { |x| "%X" % x }.join(",")])
    end
    if k != c
      out << ("T %X %s" % [cp, k.codepoints.map { |x| "%X" % x }.join(",")])
    end
    cands << c if d != c || k != c || c.upcase != c
    if pr != prev
      out << ("P %X %d" % [cp, pr])
      prev = pr
    end
  end
  cp += 1
end
File.write("/io/cp.txt", out.join("\n") + "\n")

# Context check: does Ruby map a string as the concatenation of per-code-point
# mappings?  (downcase: every char downcased; capitalize: first char
# capitalized, the rest downcased.)
extra = [0x20, 0x2E, 0x27, 0x41, 0x61, 0x49, 0x69, 0x4A, 0x6A, 0x30, 0xAD, 0x300, 0x301, 0x307,
         0x308, 0x345, 0x3A3, 0x3C2, 0x3C3, 0x130, 0x131, 0xCC, 0xCD, 0x128, 0x12E, 0x1F88,
         0x200D, 0x2019, 0x5D0, 0x10D0, 0x1C90, 0xDF, 0x149, 0x1C4, 0x1C5, 0x1C6].map { |x| x.chr(Encoding::UTF_8) }
pool = cands + extra
bad = []
nchk = 0
check = lambda do |s|
  nchk += 1
  cs = s.chars
  dd = cs.map(&:downcase).join
  kk = cs[0].capitalize + cs[1..].map(&:downcase).join
  bad << [s, :downcase, s.downcase, dd] if s.downcase != dd
  bad << [s, :capitalize, s.capitalize, kk] if s.capitalize != kk
  nil
end
rng = Random.new(20240601)
n = 0
while n < 60000
  len = 1 + rng.rand(8)
  s = +""
  j = 0
  while j < len
    s << pool[rng.rand(pool.size)]
    j += 1
  end
  check.call(s)
  n += 1
end
# Every candidate in the usual context positions.
ctx = extra
a = 0
while a < pool.size
  c = pool[a]
  b = 0
  while b < ctx.size
    x = ctx[b]
    check.call(x + c)
    check.call(c + x)
    check.call(x + c + x)
    b += 1
  end
  a += 1
end
File.write("/io/ctx.txt", "#{nchk} #{bad.size}\n" + bad.first(20).map(&:inspect).join("\n") + "\n")
RUBY_VERSION + " " + RbConfig::CONFIG["UNICODE_VERSION"]
`;

const PROFILES = ['4.0', '3.4']; // index == nh_profile

async function collect(ver) {
  const dir = mkdtempSync(join(tmpdir(), 'gen-casemap-'));
  try {
    const id = await runRuby(ver, RUBY, dir);
    const ctx = readFileSync(join(dir, 'ctx.txt'), 'utf8');
    const [nchk, nbad] = ctx.split('\n')[0].split(' ');
    if (+nbad !== 0) {
      console.error(`Ruby ${ver}: ${nbad} context-dependent case mappings, e.g.\n` +
                    readFileSync(join(dir, 'ctx.txt'), 'utf8'));
      process.exit(1);
    }
    console.error(`Ruby ${id}: ${nchk} multi-character strings map per code point (no context rules)`);
    const D = new Map(), T = new Map(), P = [];
    for (const line of readFileSync(join(dir, 'cp.txt'), 'utf8').trimEnd().split('\n')) {
      const [k, a, b] = line.split(' ');
      const cp = parseInt(a, 16);
      if (k === 'D') D.set(cp, b.split(',').map((x) => parseInt(x, 16)));
      else if (k === 'T') T.set(cp, b.split(',').map((x) => parseInt(x, 16)));
      else P.push([cp, +b]);
    }
    return { id, D, T, P };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function utf8(cps) {
  return [...Buffer.from(String.fromCodePoint(...cps), 'utf8')];
}

// Builds the run table of one mapping kind from both profiles' maps.
// Every code point with a mapping in either profile lands in exactly one run;
// runs are disjoint and sorted.  A run has a start, a count, a stride (1 or
// 2), a profile mask (bit p set: the mapping exists in profile p) and either
// a delta (one code point -> one code point) or an index into the specials.
function buildRuns(maps, specials) {
  const cps = [...new Set(maps.flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
  const info = new Map();
  for (const cp of cps) {
    const vals = maps.map((m) => m.get(cp));
    const present = vals.filter((v) => v);
    const s0 = JSON.stringify(present[0]);
    if (present.some((v) => JSON.stringify(v) !== s0))
      throw new Error(`U+${cp.toString(16)} maps differently in the profiles; tables cannot share it`);
    let mask = 0;
    vals.forEach((v, p) => { if (v) mask |= 1 << p; });
    const v = present[0];
    let special = 0, val;
    if (v.length === 1) {
      val = v[0] - cp;
    } else {
      special = 1;
      const bytes = utf8(v);
      const key = bytes.join(',');
      let idx = specials.index.get(key);
      if (idx === undefined) {
        idx = specials.list.length;
        specials.index.set(key, idx);
        specials.list.push(bytes);
      }
      val = idx;
    }
    info.set(cp, { mask, special, val });
  }
  const same = (a, b) => a.mask === b.mask && a.special === b.special && a.val === b.val && !a.special;
  const runs = [];
  for (let i = 0; i < cps.length;) {
    const start = cps[i], inf = info.get(start);
    let count = 1, stride = 1;
    if (i + 1 < cps.length && same(inf, info.get(cps[i + 1]))) {
      const d = cps[i + 1] - start;
      if (d === 1 || d === 2) {
        stride = d;
        while (i + count < cps.length && count < 1024 &&
               cps[i + count] === start + count * stride && same(inf, info.get(cps[i + count])))
          count++;
      }
    }
    runs.push({ start, count, stride, ...inf });
    i += count;
  }
  return runs;
}

const BIAS = 0x200000;
function encodeRuns(runs) {
  const out = [];
  for (const r of runs) {
    if (r.start >= 1 << 21 || r.count > 1024 || r.val + BIAS < 0 || r.val + BIAS >= 1 << 29) throw new Error('run out of range');
    const e0 = ((r.start << 11) | ((r.stride - 1) << 10) | (r.count - 1)) >>> 0;
    const e1 = (((r.val + BIAS) << 3) | (r.special << 2) | r.mask) >>> 0;
    out.push(e0, e1);
  }
  return out;
}

function hexArray(words, perLine) {
  const lines = [];
  for (let i = 0; i < words.length; i += perLine)
    lines.push('    ' + words.slice(i, i + perLine).map((w) => '0x' + w.toString(16).padStart(8, '0') + 'u').join(', ') + ',');
  return lines.join('\n');
}

function cString(bytes) {
  let s = '', col = 0;
  const lines = [];
  for (const b of bytes) {
    s += '\\x' + b.toString(16).padStart(2, '0');
    if (++col === 24) { lines.push('    "' + s + '"'); s = ''; col = 0; }
  }
  if (s) lines.push('    "' + s + '"');
  return lines.join('\n');
}

const data = [];
for (const ver of PROFILES) data.push(await collect(ver));

const specials = { list: [], index: new Map() };
const dcRuns = buildRuns(data.map((d) => d.D), specials);
const tcRuns = buildRuns(data.map((d) => d.T), specials);

// Printability: merged transition list; state bit p = printable in profile p.
const points = [...new Set(data.flatMap((d) => d.P.map(([cp]) => cp)))].sort((a, b) => a - b);
const stateAt = (P, cp) => { let s = 0; for (const [c, v] of P) { if (c > cp) break; s = v; } return s; };
const prints = [];
let last = -1;
for (const cp of points) {
  let st = 0;
  data.forEach((d, p) => { st |= stateAt(d.P, cp) << p; });
  if (st !== last) { prints.push(((cp << 2) | st) >>> 0); last = st; }
}

let pool = [];
const specWords = [];
for (const bytes of specials.list) {
  if (pool.length >= 1 << 16 || bytes.length > 255) throw new Error('special out of range');
  specWords.push(((pool.length << 8) | bytes.length) >>> 0);
  pool = pool.concat(bytes);
}

const dcWords = encodeRuns(dcRuns), tcWords = encodeRuns(tcRuns);
const header = `/* Generated by tools/gen-casemap.mjs from ${data.map((d, p) => `Ruby ${d.id.replace(' ', ' (Unicode ')}) [profile ${p}]`).join(' and ')}.
 * Do not edit: rerun \`node tools/gen-casemap.mjs\`.
 *
 * Case-map runs: two words per run, sorted by start, disjoint.
 *   w0 = start << 11 | (stride - 1) << 10 | (count - 1)
 *   w1 = (value + ${'0x' + BIAS.toString(16)}) << 3 | special << 2 | profile mask
 * A run covers start, start + stride, ... (count code points).  Profile mask
 * bit p: the mapping exists in profile p.  special = 0: the code point maps to
 * cp + value; special = 1: it maps to the UTF-8 bytes of cm_specials[value],
 * each entry being offset << 8 | length into cm_special_bytes.
 *
 * cm_print: transitions of String#inspect printability, sorted; entry
 * cp << 2 | state, state bit p = printable in profile p, valid up to the next
 * transition.
 */
#ifndef NH_CASEMAP_TABLES_H
#define NH_CASEMAP_TABLES_H

#include <stdint.h>

#define CM_VALUE_BIAS 0x${BIAS.toString(16)}

/* String#downcase: ${dcRuns.length} runs */
static const uint32_t cm_downcase[${dcWords.length}] = {
${hexArray(dcWords, 6)}
};

/* String#capitalize, first character (titlecase): ${tcRuns.length} runs */
static const uint32_t cm_titlecase[${tcWords.length}] = {
${hexArray(tcWords, 6)}
};

/* multi-code-point results */
static const uint32_t cm_specials[${specWords.length}] = {
${hexArray(specWords, 6)}
};

static const char cm_special_bytes[${pool.length + 1}] =
${cString(pool)};

/* String#inspect printability: ${prints.length} transitions */
static const uint32_t cm_print[${prints.length}] = {
${hexArray(prints, 6)}
};

#endif
`;

if (process.argv.includes('--check')) {
  const cur = readFileSync(OUT, 'utf8');
  if (cur !== header) { console.error(`${OUT} is stale`); process.exit(1); }
  console.error(`${OUT} is up to date`);
} else {
  writeFileSync(OUT, header);
  console.error(`wrote ${OUT}: ${header.length} bytes; downcase ${dcRuns.length} runs, titlecase ${tcRuns.length} runs, ` +
                `${specials.list.length} specials (${pool.length} bytes), ${prints.length} print transitions; ` +
                `table data ${(dcWords.length + tcWords.length + specWords.length + prints.length) * 4 + pool.length + 1} bytes`);
}
