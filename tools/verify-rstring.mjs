#!/usr/bin/env node
// Checks src/rstring.c and src/casemap.c byte for byte against real Ruby.
//
//   node tools/verify-rstring.mjs [--seed N] [--count N] [--profile 4.0|3.4] [--quick]
//
// Builds a native driver around the C functions with gcc or clang
// (-fsanitize=address,undefined), then, for Ruby 4.0 (profile 0) and Ruby
// 3.4 (profile 1) run as ruby.wasm under Node:
//   * every Unicode scalar value as a one-character string;
//   * --count random strings (default 30000): ASCII, controls, quotes,
//     backslashes, '#{' '#$' '#@', whitespace and NUL, cased letters of many
//     scripts, astral characters, characters new in recent Unicode versions,
//     and invalid UTF-8 (stray bytes, truncated, overlong, surrogate and
//     out-of-range sequences);
// each through String#inspect, #dump (as UTF-8 and as binary), #scrub,
// #valid_encoding?, #strip, #downcase and #capitalize (UTF-8 and binary);
// and nh_unicode_printable for every code point.  Prints the mismatch counts
// and exits non-zero on any mismatch.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

process.removeAllListeners('warning'); // node:wasi is "experimental"
const { WASI } = await import('node:wasi');
const v8 = await import('node:v8');
v8.setFlagsFromString('--no-incremental-marking');
const { RubyVM } = await import(join(ROOT, 'node_modules/@ruby/wasm-wasi/dist/esm/index.js'));

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const SEED = +opt('--seed', 12345);
const COUNT = +opt('--count', 30000);
const ONLY = opt('--profile', null);
const QUICK = args.includes('--quick'); // skip the every-code-point pass

// Evaluates `code` in a fresh Ruby VM of version `ver` with `dir` as /io.
async function runRuby(ver, code, dir) {
  const mod = await WebAssembly.compile(
    readFileSync(join(ROOT, `node_modules/@ruby/${ver}-wasm-wasi/dist/ruby+stdlib.wasm`)));
  const wasi = new WASI({ version: 'preview1', returnOnExit: true, preopens: { '/io': dir } });
  const { vm } = await RubyVM.instantiateModule({ module: mod, wasip1: wasi });
  return vm.eval(code).toString();
}

const FIELDS = ['inspect', 'inspect(binary)', 'dump', 'dump(binary)', 'scrub', 'valid_encoding?',
                'strip', 'downcase', 'capitalize', 'downcase(binary)', 'capitalize(binary)', 'strip(binary)'];

// Input: records u32le length + bytes.  Output: per record, FIELDS.length
// records u32le length + bytes.  Ruby raises ArgumentError for strip,
// downcase and capitalize of invalid UTF-8; those fields are "!" then
// (strip: the binary string's strip) and the C side is expected to match
// that convention.  No block exits: ruby.wasm 3.4 dislikes them in long loops.
const RUBY_RECORDS = String.raw`
data = File.binread("/io/in.bin")
f = File.open("/io/ruby.bin", "wb")
pos = 0
total = data.bytesize
while pos < total
  len = data.unpack1("L<", offset: pos)
  s = data.byteslice(pos + 4, len).force_encoding(Encoding::UTF_8)
  pos += 4 + len
  b = s.b
  v = s.valid_encoding?
  r = [s.inspect, b.inspect, s.dump, b.dump, s.scrub, v ? "1" : "0",
       v ? s.strip : b.strip, v ? s.downcase : "!", v ? s.capitalize : "!",
       b.downcase, b.capitalize, b.strip]
  buf = "".b
  k = 0
  while k < r.size
    x = r[k].b
    buf << [x.bytesize].pack("L<") << x
    k += 1
  end
  f.write(buf)
end
f.close
# printability of every code point, as transitions
out = []
prev = nil
cp = 0
while cp <= 0x10FFFF
  if cp < 0xD800 || cp > 0xDFFF
    c = cp.chr(Encoding::UTF_8)
    i = c.inspect
    pr = (i == "\"" + c + "\"" || c == "\"" || c == "\\") ? 1 : 0
    if pr != prev
      out << ("%X %d" % [cp, pr])
      prev = pr
    end
  end
  cp += 1
end
File.write("/io/ruby-print.txt", out.join("\n") + "\n")
# the exceptions the C side cannot report
e = []
["a\xff ", " \xe3\x81", "\xc0\x80"].each do |t|
  begin
    t.strip
    e << "strip: no error"
  rescue StandardError => x
    e << "strip: " + x.class.name + ": " + x.message
  end
  begin
    t.downcase
    e << "downcase: no error"
  rescue StandardError => x
    e << "downcase: " + x.class.name + ": " + x.message
  end
end
e.uniq.join("; ")
`;

const DRIVER = String.raw`
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nethttp.h"

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (!p || fread(p, 1, (size_t)sz, f) != (size_t)sz) { perror(path); exit(2); }
    fclose(f);
    *n = (size_t)sz;
    return p;
}

static void emit(FILE *o, const void *p, size_t n)
{
    uint8_t l[4] = { (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24) };
    fwrite(l, 1, 4, o);
    fwrite(p, 1, n, o);
}

static void emit_buf(FILE *o, nh_buf *b, int rc)
{
    if (rc != NH_OK) { fprintf(stderr, "rc %d\n", rc); exit(3); }
    emit(o, b->data, b->len);
    nh_buf_free(b);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int profile = atoi(argv[2]);
    if (!strcmp(argv[1], "print")) {
        int prev = -1;
        for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
            if (cp >= 0xD800 && cp <= 0xDFFF) continue;
            int p = nh_unicode_printable(cp, profile);
            if (p != prev) printf("%X %d\n", (unsigned)cp, p);
            prev = p;
        }
        return 0;
    }
    size_t n, pos = 0;
    uint8_t *d = slurp(argv[3], &n);
    FILE *o = fopen(argv[4], "wb");
    if (!o) return 2;
    while (pos + 4 <= n) {
        size_t len = (size_t)d[pos] | (size_t)d[pos + 1] << 8 | (size_t)d[pos + 2] << 16 | (size_t)d[pos + 3] << 24;
        /* a private exact-size copy so that ASan sees any over-read */
        uint8_t *s = malloc(len ? len : 1);
        memcpy(s, d + pos + 4, len);
        pos += 4 + len;
        nh_buf b = {0};
        int v = nh_utf8_valid(s, len);
        size_t a, e;
        emit_buf(o, &b, nh_inspect(&b, s, len, 1, profile));
        emit_buf(o, &b, nh_inspect(&b, s, len, 0, profile));
        emit_buf(o, &b, nh_dump(&b, s, len, 1));
        emit_buf(o, &b, nh_dump(&b, s, len, 0));
        emit_buf(o, &b, nh_scrub_utf8(&b, s, len));
        emit(o, v ? "1" : "0", 1);
        nh_strip(s, len, &a, &e);
        emit(o, s + a, e - a);
        if (v) emit_buf(o, &b, nh_utf8_downcase(&b, s, len, profile)); else emit(o, "!", 1);
        if (v) emit_buf(o, &b, nh_utf8_capitalize(&b, s, len, profile)); else emit(o, "!", 1);
        emit_buf(o, &b, nh_ascii_downcase(&b, s, len));
        emit_buf(o, &b, nh_ascii_capitalize(&b, s, len));
        nh_strip(s, len, &a, &e);
        emit(o, s + a, e - a);
        free(s);
    }
    fclose(o);
    free(d);
    return 0;
}
`;

// ---- random input ------------------------------------------------------
function mulberry32(a) {
  return () => {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(SEED);
const ri = (n) => Math.floor(rnd() * n);
const pick = (a) => a[ri(a.length)];
const enc = (cp) => [...Buffer.from(String.fromCodePoint(cp), 'utf8')];
const randScalar = (lo, hi) => { for (;;) { const c = lo + ri(hi - lo + 1); if (c < 0xD800 || c > 0xDFFF) return c; } };

const CASED = [0x41, 0x5A, 0x61, 0x7A, 0xB5, 0xC0, 0xDF, 0xE0, 0xFF, 0x100, 0x101, 0x130, 0x131, 0x149, 0x178,
  0x17F, 0x1C4, 0x1C5, 0x1C6, 0x1F0, 0x212, 0x345, 0x390, 0x391, 0x3A3, 0x3C2, 0x3C3, 0x3F4, 0x400, 0x410,
  0x430, 0x531, 0x587, 0x10A0, 0x10D0, 0x13A0, 0x13F8, 0x1C80, 0x1C89, 0x1C90, 0x1E9E, 0x1F80, 0x1F88, 0x1FB3,
  0x1FBC, 0x2126, 0x212A, 0x212B, 0x2160, 0x24B6, 0x2C00, 0xA640, 0xA7CB, 0xA7DC, 0xAB70, 0xFB00, 0xFB13,
  0xFF21, 0xFF41, 0x10400, 0x10428, 0x104B0, 0x10570, 0x10C80, 0x10D50, 0x10D70, 0x118A0, 0x16E40, 0x16EA0,
  0x1E900, 0x1E922];
const ODD = [0x80, 0x85, 0x9F, 0xA0, 0xAD, 0x34F, 0x378, 0x61C, 0x6DD, 0x70F, 0x180E, 0x1680, 0x200B, 0x200C,
  0x200D, 0x200E, 0x2028, 0x2029, 0x202E, 0x2060, 0x2066, 0x3000, 0xD7FF, 0xE000, 0xF8FF, 0xFEFF, 0xFFF9,
  0xFFFC, 0xFFFD, 0xFFFE, 0xFFFF, 0x1F600, 0x1F9FF, 0x1FAE9, 0x1FBFA, 0xE0001, 0xE0020, 0xE007F, 0xE0100,
  0xEFFFF, 0xF0000, 0xFFFFD, 0xFFFFE, 0x100000, 0x10FFFD, 0x10FFFF, 0x10D40, 0x10EC2, 0x11380, 0x16D40,
  0x1CC00, 0x1F8B0, 0x2B73A, 0x31350, 0x323B0];
const BADSEQ = [[0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xDF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
  [0xE0, 0xA0], [0xE3, 0x81], [0xE3, 0x41], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xED, 0x9F], [0xEF, 0xBF],
  [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90], [0xF0, 0x90, 0x80], [0xF0, 0x90, 0x41],
  [0xF0, 0x90, 0x80, 0x41], [0xF4, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF], [0xF5, 0x80, 0x80, 0x80],
  [0xF7, 0xBF, 0xBF, 0xBF], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFC], [0xFE], [0xFF], [0xC3, 0xC3],
  [0xE2, 0x82, 0xE2, 0x82, 0xAC]];

function piece() {
  switch (ri(16)) {
    case 0: return [0x20 + ri(95)];
    case 1: return [...Buffer.from(pick(['#', '{', '$', '@', '"', '\\', '#{', '#$', '#@', '#}', '##{', '\\#{', '"#', "'", '#']))];
    case 2: return [pick([0, 7, 8, 9, 10, 11, 12, 13, 27, 31, 127, 1, 0x1A])];
    case 3: return [pick([0, 9, 10, 11, 12, 13, 32, 32, 32])];
    case 4: return enc(randScalar(0x80, 0x7FF));
    case 5: return enc(randScalar(0x800, 0xFFFF));
    case 6: return enc(randScalar(0x10000, 0x10FFFF));
    case 7: return enc(randScalar(0x10000, 0x3FFFF));
    case 8: case 9: return enc(pick(CASED) + ri(3));
    case 10: return enc(pick(ODD));
    case 11: return [0x80 + ri(128)];
    case 12: return pick(BADSEQ);
    case 13: { const e = enc(randScalar(0x80, 0x10FFFF)); return e.slice(0, 1 + ri(e.length - 1)); }
    case 14: return [...Buffer.from(pick(['Content-Type', 'x-Ab', 'ÉTÉ', 'İstanbul', 'ǆemal', 'ßtraße', 'ŉ', 'ΣΑΣ']))];
    default: return [ri(256)];
  }
}

function randomInputs(count) {
  const recs = [[], [0], [0x20], [0x23], [0x23, 0x7B], [0xC3], [0xE3, 0x81], [0xF0, 0x90, 0x80, 0x78]];
  while (recs.length < count) {
    const n = ri(4) === 0 ? ri(40) : ri(10);
    let r = [];
    for (let i = 0; i < n; i++) r = r.concat(piece());
    recs.push(r);
  }
  return recs;
}

function allScalars() {
  const recs = [];
  for (let cp = 0; cp <= 0x10FFFF; cp++) if (cp < 0xD800 || cp > 0xDFFF) recs.push(enc(cp));
  return recs;
}

function pack(recs) {
  let size = 0;
  for (const r of recs) size += 4 + r.length;
  const b = Buffer.alloc(size);
  let o = 0;
  for (const r of recs) { b.writeUInt32LE(r.length, o); o += 4; for (const x of r) b[o++] = x; }
  return b;
}

function show(bytes) {
  return JSON.stringify(Buffer.from(bytes).toString('latin1')).replace(/[\u0080-\u00ff]/g, (c) => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'));
}

// ---- main --------------------------------------------------------------
const work = mkdtempSync(join(tmpdir(), 'verify-rstring-'));
let failed = false;
try {
  const cc = (() => { for (const c of [process.env.CC, 'clang', 'gcc']) { if (!c) continue; try { execFileSync(c, ['--version'], { stdio: 'ignore' }); return c; } catch { /* next */ } } throw new Error('no C compiler'); })();
  writeFileSync(join(work, 'driver.c'), DRIVER);
  const exe = join(work, 'driver');
  execFileSync(cc, ['-std=c11', '-O1', '-g', '-Wall', '-Wextra', '-Werror', '-fsanitize=address,undefined',
    '-fno-sanitize-recover=all', '-fno-omit-frame-pointer', `-I${join(ROOT, 'src')}`, '-o', exe, join(work, 'driver.c'),
    join(ROOT, 'src/rstring.c'), join(ROOT, 'src/casemap.c'), join(ROOT, 'src/buf.c')], { stdio: 'inherit' });
  console.log(`driver built with ${cc} -fsanitize=address,undefined`);

  const sets = [['every code point', allScalars()], [`${COUNT} random strings (seed ${SEED})`, randomInputs(COUNT)]]
    .slice(QUICK ? 1 : 0);
  const profiles = [['4.0', 0], ['3.4', 1]].filter(([v]) => !ONLY || ONLY === v);
  for (const [ver, prof] of profiles) {
    let rubyId = null;
    for (const [name, recs] of sets) {
      writeFileSync(join(work, 'in.bin'), pack(recs));
      const note = await runRuby(ver, RUBY_RECORDS, work);
      rubyId ??= note;
      execFileSync(exe, ['rec', String(prof), join(work, 'in.bin'), join(work, 'c.bin')], { stdio: 'inherit', maxBuffer: 1 << 26 });
      const rb = readFileSync(join(work, 'ruby.bin'));
      const cb = readFileSync(join(work, 'c.bin'));
      const counts = FIELDS.map(() => 0);
      const examples = [];
      let ro = 0, co = 0, i = 0;
      for (; ro < rb.length && co < cb.length; i++) {
        const rn = rb.readUInt32LE(ro), cn = cb.readUInt32LE(co);
        const rv = rb.subarray(ro + 4, ro + 4 + rn), cv = cb.subarray(co + 4, co + 4 + cn);
        ro += 4 + rn;
        co += 4 + cn;
        if (rn !== cn || Buffer.compare(rv, cv) !== 0) {
          const f = i % FIELDS.length, r = Math.floor(i / FIELDS.length);
          counts[f]++;
          if (examples.length < 10) examples.push(`  ${FIELDS[f]} of ${show(recs[r])}: ruby ${show(rv)}, C ${show(cv)}`);
        }
      }
      if (i !== recs.length * FIELDS.length || ro !== rb.length || co !== cb.length)
        throw new Error(`record count: got ${i}, want ${recs.length * FIELDS.length}`);
      const total = counts.reduce((a, b) => a + b, 0);
      console.log(`Ruby ${ver} (profile ${prof}), ${name}: ${recs.length * FIELDS.length} comparisons, ${total} mismatches` +
                  (total ? ' [' + FIELDS.map((f, k) => `${f}: ${counts[k]}`).join(', ') + ']' : ''));
      for (const e of examples) console.log(e);
      if (total) failed = true;
      if (name === 'every code point') {
        // nh_unicode_printable over every code point
        const expand = (txt) => {
          const t = txt.trim().split('\n').map((l) => l.split(' ')).map(([c, v]) => [parseInt(c, 16), +v]);
          const a = new Uint8Array(0x110000);
          for (let k = 0; k < t.length; k++) a.fill(t[k][1], t[k][0], k + 1 < t.length ? t[k + 1][0] : 0x110000);
          return a;
        };
        const rp = expand(readFileSync(join(work, 'ruby-print.txt'), 'utf8'));
        const cp = expand(execFileSync(exe, ['print', String(prof)], { maxBuffer: 1 << 26 }).toString());
        let bad = 0, n = 0;
        for (let c = 0; c <= 0x10FFFF; c++) {
          if (c >= 0xD800 && c <= 0xDFFF) continue;
          n++;
          if (rp[c] !== cp[c]) { if (bad < 5) console.log(`  printable U+${c.toString(16)}: ruby ${rp[c]}, C ${cp[c]}`); bad++; }
        }
        console.log(`Ruby ${ver} (profile ${prof}), nh_unicode_printable: ${n} code points, ${bad} mismatches`);
        if (bad) failed = true;
      }
    }
    console.log(`Ruby ${ver} on invalid UTF-8 (C leaves these to the caller): ${rubyId}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(failed ? 'FAIL' : 'OK: no mismatches');
process.exit(failed ? 1 : 0);
