// Runs response-parse cases through MRI (see response_runner.rb for the case
// and result format):
//   '4.0', '3.4'  ruby.wasm, in the VMs of rubyvm.mjs's pool (one per version)
//   'native'      the system ruby (3.1, net-http 0.2.0): the oracle for
//                 content decoding, which crashes ruby.wasm
//
//   import { runResponseCases } from './response.mjs';
//   const results = await runResponseCases('4.0', cases);
//
// ruby.wasm 3.4.1 leaks on non-local exits and read_body_0 does one per body
// (`return` from inside the inflater block), so a 3.4 VM is replaced every
// SAFE_34 cases, and a VM that reports itself broken is replaced and the case
// run again.
import { writeFileSync, readFileSync, mkdtempSync, rmSync, readdirSync, existsSync, cpSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { dropVM as drop, vmFor as pooledVM, leaky, ALL_VERSIONS } from './rubyvm.mjs';
import { prng } from '../prng.mjs';
import { HQ_EACH_CAPITALIZED } from '../../../js/schema.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SAFE_34 = Number(process.env.NETHTTP_RUBY34_CASES_PER_VM || 150);
const BATCH = 300;

// The VM of `version` from the oracle's pool, with the response runner loaded.
async function vmFor(version, need) {
  const v = await pooledVM(version, need, SAFE_34);
  if (!v.responseRunner) {
    v.vm.eval(`load '/oracle/response_runner.rb'; nil`);
    v.responseRunner = true;
  }
  return v;
}

function runBatch(v, cases) {
  writeFileSync(join(v.io, 'rin.json'), JSON.stringify(cases));
  v.vm.eval(`NetHttpResponseOracle.run_file('/io/rin.json', '/io/rout.json')`);
  v.used += cases.length;
  return JSON.parse(readFileSync(join(v.io, 'rout.json'), 'utf8'));
}

// The net/http sources of a ruby.wasm version, copied out of its VM, so that
// the native ruby can run them: native Ruby 3.1 with net-http 0.9.1 (or
// 0.6.0) is the oracle for content decoding, which ruby.wasm itself cannot
// run once the decoded body passes 1 KiB (see the case files' comment).
const sourceDirs = new Map();
const tempDirs = new Set();
async function netHttpSources(version) {
  if (sourceDirs.has(version)) return sourceDirs.get(version);
  const v = await vmFor(version, 0);
  v.vm.eval(`
    require 'fileutils'
    $LOADED_FEATURES.grep(%r{/net/(http|protocol)(/|\\.rb\\z)}).each do |f|
      rel = f[%r{net/.*\\z}]
      dst = File.join('/io/nhsrc', rel)
      FileUtils.mkdir_p(File.dirname(dst))
      File.write(dst, File.read(f))
    end
    nil`);
  const dir = mkdtempSync(join(tmpdir(), `nethttp-src-${version}-`));
  tempDirs.add(dir);
  cpSync(join(v.io, 'nhsrc'), dir, { recursive: true });
  sourceDirs.set(version, dir);
  return dir;
}

process.on('exit', () => {
  for (const d of tempDirs) {
    try { rmSync(d, { recursive: true, force: true }); } catch {}
  }
});

function runNative(cases, libDir) {
  const dir = mkdtempSync(join(tmpdir(), 'nethttp-native-'));
  try {
    writeFileSync(join(dir, 'in.json'), JSON.stringify(cases));
    const args = libDir ? ['-I', libDir] : [];
    const r = spawnSync('ruby', [...args, join(here, 'response_runner.rb'), join(dir, 'in.json'), join(dir, 'out.json')], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`native ruby failed: ${r.stderr || r.error}`);
    return JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export { haveNativeRuby } from '../native-ruby.mjs';

/**
 * Results of `cases` in MRI, in order. `version`: '4.0' and '3.4' (ruby.wasm),
 * 'native' (the system ruby with its own net-http 0.2.0), 'native-4.0' and
 * 'native-3.4' (the system ruby running ruby.wasm 4.0's / 3.4's net/http).
 */
export async function runResponseCases(version, cases) {
  if (version === 'native') return runNative(cases);
  if (version.startsWith('native-')) return runNative(cases, await netHttpSources(version.slice(7)));
  const results = [];
  let i = 0;
  let single = false; // after a trap: one case per eval, to pin it down
  while (i < cases.length) {
    const size = single ? 1 : Math.min(leaky(version) ? SAFE_34 : BATCH, cases.length - i);
    const v = await vmFor(version, size);
    let out;
    try {
      out = runBatch(v, cases.slice(i, i + size));
    } catch (e) {
      // the VM trapped (ruby.wasm's zlib, for one): its results are lost
      drop(version);
      if (single) {
        results.push({ oracleBroken: `${e && e.message}` });
        i += 1;
      }
      single = true;
      continue;
    }
    const last = out[out.length - 1];
    if (last && last.broken !== undefined) {
      // the VM says it is no longer trustworthy (3.4's leak): the rest again in a fresh one
      out.pop();
      results.push(...out);
      i += out.length;
      drop(version);
      if (!out.length) {
        if (single) {
          results.push({ oracleBroken: last.broken });
          i += 1;
        }
        single = true;
      }
      continue;
    }
    results.push(...out);
    i += out.length;
    single = false;
  }
  return results;
}

export function shutdownResponseVMs() {
  for (const v of ALL_VERSIONS) drop(v);
}

// ---------------------------------------------------------------------------
// Comparing: our results in the runner's format
// ---------------------------------------------------------------------------

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder('utf-8', { ignoreBOM: true });
const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');

/** The runner's `str`: a string for valid UTF-8, else { b64 }. */
export function str(u8) {
  if (u8 == null) return null;
  try {
    return fatal.decode(u8);
  } catch {
    return { b64: b64(u8) };
  }
}

/** A case's bytes. */
export function caseBytes(c) {
  if (c.base64 != null) return new Uint8Array(Buffer.from(c.base64, 'base64'));
  return new Uint8Array(Buffer.from(c.text, 'latin1'));
}

/** What our parser options are for a case. */
export function caseOptions(c, profile) {
  const o = { profile: profile || c.profile || '4.0' };
  if (c.method != null) o.requestMethod = c.method;
  if (c.decode) o.decodeContent = true;
  if (c.skipInterim) o.skipInterim = true;
  return o;
}

const rd32 = (u8, p) => (u8[p] | (u8[p + 1] << 8) | (u8[p + 2] << 16) | (u8[p + 3] << 24)) >>> 0;

/**
 * each_capitalized as the codec computes it for `res`, in exact bytes (the
 * header query's result record, read from the module's output), once the
 * public eachCapitalized() has been checked to say the same.
 */
function capitalizedResult(res) {
  const pairs = res.eachCapitalized();
  res._query(HQ_EACH_CAPITALIZED);
  const out = res._codec.outBytes();
  const parts = [];
  for (let i = 0, n = rd32(out, 1), p = 5; i < n; i++) {
    const len = rd32(out, p);
    parts.push(out.subarray(p + 4, p + 4 + len));
    p += 4 + len;
  }
  const result = [];
  const seen = [];
  for (let i = 0; i < parts.length; i += 2) {
    result.push([str(parts[i]), str(parts[i + 1])]);
    seen.push([lossy.decode(parts[i]), lossy.decode(parts[i + 1])]);
  }
  if (!isDeepStrictEqual(pairs, seen)) throw new Error(`eachCapitalized() ${JSON.stringify(pairs)} is not the codec's ${JSON.stringify(seen)}`);
  return result;
}

/** One Response in the runner's format (exact bytes from rawHeaderEntries). */
export function responseResult(res, body) {
  const raw = res.rawHeaderEntries();
  return {
    class: res.className,
    code: res.code,
    message: str(res.messageBytes),
    httpVersion: res.httpVersion,
    headers: raw.map(([k, vs]) => [str(k), vs.map(str)]),
    capitalized: capitalizedResult(res),
    body: body === undefined ? str(res.body) : body,
  };
}

function errorResult(api, e, index) {
  if (e instanceof api.NetHttpError || (e && e.rubyClass)) {
    return { class: e.rubyClass, message: e.messageBytes ? str(e.messageBytes) : e.message, index };
  }
  return { class: `JS ${e && e.name}`, message: `${e && e.message}`, index };
}

/** A case through parseResponse (messages > 1: parse the rest again). */
export function oursOneShot(api, c, profile) {
  const out = { responses: [] };
  let bytes = caseBytes(c);
  const total = bytes.length;
  const n = c.messages || 1;
  const opts = caseOptions(c, profile);
  for (let i = 0; i < n; i++) {
    try {
      const res = api.parseResponse(bytes, { ...opts, streamOffset: total - bytes.length });
      out.responses.push(responseResult(res));
      bytes = res.rest;
    } catch (e) {
      out.error = errorResult(api, e, i);
      break;
    }
  }
  if (!out.error) out.rest = str(bytes);
  return out;
}

/**
 * A case through a ResponseParser fed in pieces cut at `cuts` (sorted
 * offsets); every feed goes in whole, so the pieces after a message's end
 * are kept by the parser and given back as the next message's bytes.
 */
export function oursIncremental(api, c, cuts, profile, parser) {
  const bytes = caseBytes(c);
  const opts = caseOptions(c, profile);
  const p = parser || new api.ResponseParser(opts);
  if (parser) {
    // a new connection for every case
    p.takePending();
    p.reset({ ...opts, streamOffset: 0 });
  }
  const out = { responses: [] };
  const n = c.messages || 1;
  let idx = 0;
  let res = null;
  let body = [];
  let rest = null;
  const pieces = [];
  let prev = 0;
  for (const k of cuts) {
    pieces.push(bytes.subarray(prev, k));
    prev = k;
  }
  pieces.push(bytes.subarray(prev));
  const onEvents = (evs) => {
    for (const ev of evs) {
      if (ev.type === 'head') {
        res = ev.response;
        body = [];
      } else if (ev.type === 'body') body.push(ev.data);
      else if (ev.type === 'end') {
        if (ev.response !== res) throw new Error('end.response is not the head response');
        const b = res.hasBody ? str(new Uint8Array(Buffer.concat(body))) : null;
        out.responses.push(responseResult(res, b));
        rest = ev.rest;
        idx++;
      }
    }
  };
  try {
    let k = 0;
    for (; k < pieces.length; k++) {
      onEvents(p.feed(pieces[k]));
      while (rest && idx < n) {
        rest = null;
        p.reset(opts);
        onEvents(p.feed(new Uint8Array(0)));
      }
      if (idx >= n) break;
    }
    if (idx < n) {
      onEvents(p.finish());
      while (rest !== null && idx < n) {
        rest = null;
        p.reset(opts);
        onEvents(p.finish());
      }
    }
    // the bytes after the last message: what the parser kept plus the pieces not fed
    const tail = [p.pending, ...pieces.slice(k + 1)];
    out.rest = str(new Uint8Array(Buffer.concat(tail)));
  } catch (e) {
    out.error = errorResult(api, e, idx);
  } finally {
    if (!parser) p.close();
  }
  return out;
}

/** Strings of a result as a JS API user sees them (invalid UTF-8 → U+FFFD). */
export function lossyView(r) {
  return JSON.parse(JSON.stringify(r), (k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof v.b64 === 'string'
      ? lossy.decode(Buffer.from(v.b64, 'base64'))
      : v,
  );
}

/**
 * Native MRI here is Ruby 3.1 with net-http 0.2.0. The one difference from
 * 0.6.0 / 0.9.1 on the decoding cases: after a successful decode, 0.6.0 and
 * 0.9.1 rewrite a Content-Length field to the decoded size
 * (Inflater#bytes_inflated), 0.2.0 keeps the wire value. This blanks the
 * Content-Length values so that the results compare.
 */
export function withoutContentLength(r) {
  if (!r || !r.responses) return r;
  const out = JSON.parse(JSON.stringify(r));
  for (const res of out.responses) {
    for (const h of res.headers) if (h[0] === 'content-length') h[1] = ['*'];
    for (const h of res.capitalized) if (h[0] === 'Content-Length') h[1] = '*';
  }
  return out;
}

// ---------------------------------------------------------------------------
// The case files: tests/fixtures/cases/response_<group>.json (generated once by
// `node tests/support/oracle/response.mjs generate`, then data), and their MRI results
// in response_<group>.expected.json (`node tests/support/oracle/response.mjs record`).
//
// Case: { id, op: 'response', profile: '4.0', text (latin1) | base64,
//         method?, decode?, skipInterim?, messages?, oracle? }
// Every case runs on both profiles. A fixture entry holds
//   result, result34      ruby.wasm 4.0 / 3.4          (oracle absent or 'both')
//   native40, native34    ruby 3.1 running 4.0's / 3.4's net/http
//   native                ruby 3.1 with its net-http 0.2.0   (oracle 'both' or 'native')
// Cases that inflate a body use oracle 'both', or 'native' when the decoded
// body passes 1 KiB: ruby.wasm's zlib traps ("null function or function
// signature mismatch") as soon as Zlib::Inflate#inflate, given a block, grows
// its output buffer past the first 1024 bytes.
// ---------------------------------------------------------------------------

const ZLIB_RB = `
require 'zlib'; require 'json'; require 'stringio'
def gz(s, level: Zlib::DEFAULT_COMPRESSION, name: nil, comment: nil)
  io = StringIO.new(+''.b)
  w = Zlib::GzipWriter.new(io, level)
  w.orig_name = name if name
  w.comment = comment if comment
  w.mtime = 0
  w.write(s); w.close
  io.string
end
def raw(s)
  d = Zlib::Deflate.new(Zlib::DEFAULT_COMPRESSION, -Zlib::MAX_WBITS)
  d.deflate(s, Zlib::FINISH)
end
big = (0...1200).map { |i| "line #{i}: the quick brown fox jumps over the lazy dog\\n" }.join
rnd = Random.new(42).bytes(20000)
d = Zlib::Deflate.new; d.set_dictionary('hello'); dict = d.deflate('hello hello hello', Zlib::FINISH)
out = {
  'gz_hello' => gz('hello world'),
  'gz_empty' => gz(''),
  'gz_utf8' => gz('héllo wörld ✓'),
  'gz_bin' => gz((0..255).map(&:chr).join * 4),
  'gz_big' => gz(big),
  'gz_rnd' => gz(rnd),
  'gz_l0' => gz('stored block ' * 50, level: 0),
  'gz_l9' => gz('best compression ' * 200, level: 9),
  'gz_named' => gz('with a name', name: 'file.txt', comment: 'a comment'),
  'zl_hello' => Zlib::Deflate.deflate('hello deflate'),
  'zl_big' => Zlib::Deflate.deflate(big),
  'zl_empty' => Zlib::Deflate.deflate(''),
  'raw_hello' => raw('raw deflate data'),
  'dict' => dict,
  # decoded sizes at and around zlib's 16 KiB yield buffer
  'gz_b16k' => gz('abcdefg' * 2340 + 'abcd', level: 1),
  'gz_b32k' => gz('abcdefg' * 4681 + 'a', level: 1),
  'gz_b16k1' => gz('abcdefg' * 2340 + 'abcde', level: 9),
  'gz_b16k1_stored' => gz(Random.new(7).bytes(16385), level: 0),
  'gz_skewed' => gz((r = Random.new(3); (0...60000).map { (97 + (r.rand * r.rand * 26).to_i).chr }.join), level: 1),
}
out = out.transform_values { |v| [v].pack('m0') }
out['big_len'] = big.bytesize
print JSON.generate(out)
`;

function rubyZlib() {
  const r = spawnSync('ruby', ['-e', ZLIB_RB], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`ruby: ${r.stderr}`);
  const j = JSON.parse(r.stdout);
  const z = {};
  for (const [k, v] of Object.entries(j)) z[k] = typeof v === 'string' ? Buffer.from(v, 'base64') : v;
  return z;
}

const L = (s) => Buffer.from(s, 'latin1');
const cat = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? L(p) : Buffer.from(p))));
const chunkedOf = (data, size) => {
  const parts = [];
  for (let i = 0; i < data.length; i += size) {
    const piece = data.subarray(i, i + size);
    parts.push(L(piece.length.toString(16) + '\r\n'), piece, L('\r\n'));
  }
  parts.push(L('0\r\n\r\n'));
  return Buffer.concat(parts);
};

function statusCases() {
  const out = [];
  const codes = [
    100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308,
    400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 423, 424,
    426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
  ];
  for (const code of codes) out.push({ name: `code-${code}`, bytes: L(`HTTP/1.1 ${code} Reason\r\nContent-Length: 2\r\n\r\nhiREST`) });
  for (const code of ['000', '099', '150', '199', '209', '250', '299', '306', '309', '399', '418', '499', '509', '599', '600', '700', '999'])
    out.push({ name: `code-${code}`, bytes: L(`HTTP/1.1 ${code} Reason\r\nContent-Length: 2\r\n\r\nhiREST`) });
  const lines = [
    'HTTP 200 OK', 'http/1.1 200 ok', 'hTtP/1.0 200 OK', 'HTTP/1.0 200 OK', 'HTTP/2.0 200 OK', 'HTTP/10.25 200 OK',
    'HTTP/1 200 OK', 'HTTP/1. 200 OK', 'HTTP/.1 200 OK', 'HTTP/1.1.1 200 OK', 'HTTP/1.1  200  OK  ', 'HTTP/1.1\t200\tOK',
    'HTTP/1.1\v200\fOK', 'HTTP/1.1 200', 'HTTP/1.1 200 ', 'HTTP/1.1 200\t', 'HTTP/1.1 2000 OK', 'HTTP/1.1 20 OK',
    'HTTP/1.1 2a0 OK', ' HTTP/1.1 200 OK', 'HTTP/1.1 200OK', 'XHTTP/1.1 200 OK', 'HTTPS/1.1 200 OK', 'ICY 200 OK',
    'HTTP/1.1 200 OK\r', 'HTTP/1.1 200 \xff\xfe', 'HTTP/1.1 200 Ok\x00', 'HTTP/1.1 200 \u00c3\u0087a va',
    'HTTP/1.1 2x0 "#{x}" \\ #$y #@z #', 'HTTP/1.1 2x0 \x00\x07\x1b\x7f\x80\xff', 'HTTP/1.1 2x0 \u00c3\u00a9 \u00e2\u009c\u0093',
    'HTTP/1.1 200 OK OK OK', 'HTTP/1.1 200 \r\r', 'HTTP/1.1 200 a\rb', 'HTTP/ 200 OK', 'HTTP/1.1 -200 OK', 'HTTP/1.1 +200 OK',
    'HTTP/1.1 \uff12\uff10\uff10 OK', 'HTTP\t200', 'HTTP  200 x', 'HTTP/01.01 200 OK', 'HTTP/1.1 200 ' + 'x'.repeat(300),
    'Http/1.1 404 Not Found', 'HTTP/1.1 ', 'HTTP', 'garbage', '\x00\x01\x02', 'HTTP/1.1 200 \u00ff' + 'y'.repeat(40),
  ];
  for (const l of lines) out.push({ name: 'line', bytes: L(`${l}\r\nContent-Length: 4\r\n\r\nbody`) });
  out.push({ name: 'lf-only', bytes: L('HTTP/1.1 200 OK\nContent-Length: 4\n\nbody') });
  out.push({ name: 'crcrlf', bytes: L('HTTP/1.1 200 OK\r\r\nContent-Length: 4\r\n\r\nbody') });
  out.push({ name: 'empty', bytes: L('') });
  out.push({ name: 'crlf-only', bytes: L('\r\n') });
  out.push({ name: 'no-newline', bytes: L('HTTP/1.1 200 OK') });
  out.push({ name: 'cr-at-eof', bytes: L('HTTP/1.1 200 OK\r') });
  out.push({ name: 'blank-then-status', bytes: L('\r\nHTTP/1.1 200 OK\r\n\r\n') });
  out.push({ name: 'long-bad', bytes: L('HTTP/1.1 xyz ' + 'é'.repeat(2000) + '\r\n\r\n') });
  return out;
}

function headerCases() {
  const H = (h, body = '', extra = {}) => ({ name: 'hdr', bytes: L(`HTTP/1.1 200 OK\r\n${h}\r\n${body}`), ...extra });
  const out = [
    H('Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n'),
    H('X-A: 1\r\nx-a: 2\r\nX-a: 3\r\nY: 4\r\nx-A: 5\r\n'),
    H('123: a\r\nb: c\r\n1: d\r\n0: e\r\n4294967295: f\r\n-1: g\r\n01: h\r\n'),
    H('X:\r\n'), H('X: \r\n'), H(':\r\n'), H(': v\r\n'), H('X : v\r\n'), H('X\t:\tv\r\n'), H('X:v\r\n'), H('X:  v  \r\n'),
    H(' X: v\r\n'), H('\tX: v\r\n'), H('X: a\r\n b\r\n'), H('X: a\r\n\tb\r\n'), H('X: a\r\n b\r\n  c  \r\n\t d\r\n'),
    H('X: a\r\n \r\nY: b\r\n', 'body'), H('X: a\r\n\t\r\nY: b\r\n', 'body'), H('X:\r\n b\r\n'), H('X: \r\n  b c\r\n'),
    H('X: a\r\n  \x00\r\nY: b\r\n'), H('X: a\r\n \x00b\x00 \r\n'), H('X: a\rb\r\n'), H('X\rA: ab\r\n'), H('X: a\r\r\n'),
    H('X: a\r \r\n'), H('X: \x00 v \x00\r\nY: \x00\r\n'), H('\x00X: v\r\n'), H(' \x00X: v\r\n'), H('X\x00: v\r\n'),
    H('X \x00: v\r\n'), H('Foo\r\n'), H('X: 1\r\nFoo\r\nY: 2\r\n'), H('\x00\r\n'), H('X: 1\r\nFoo', '', {}),
    H('X: 1\r\n\x0bY: 2\r\n'), H('X:\x0b v\x0c\r\n'), H('Location: http://example.com:8080/a?b=c\r\n'),
    H('X Y: v\r\n'), H('X_Y: v\r\nx.y: w\r\nx-: a\r\n-x: b\r\na--b: c\r\n--: d\r\n-: e\r\n'),
    H('content-TYPE: text/html\r\nWWW-AUTHENTICATE: Basic\r\nx-\u00c3\u0084\u00c3\u0096: v\r\nX-\u00ff\u00fe: w\r\n'),
    H('X: \u00c3\u00a9t\u00c3\u00a9\r\nY: \u00ff\u00fe\r\n'), H('X: a:b:c\r\n'), H('X:: v\r\n'), H('X :: v\r\n'),
    H('X: v1\r\nX: v2\r\n v3\r\n'), H('Set-Cookie: a\r\nContent-Length: 2\r\nset-cookie: b\r\n', 'hiREST'),
    H('X: 1\nY: 2\n', 'body'), H('X: 1\r\nY: 2\n\r\n', 'body'), H('X: 1\n\n', 'body'), H('X: 1\r\n\n', 'body'),
    { name: 'eof-headers', bytes: L('HTTP/1.1 200 OK\r\nX: 1\r\nY: 2') },
    { name: 'eof-headers-crlf', bytes: L('HTTP/1.1 200 OK\r\nX: 1\r\n') },
    { name: 'eof-headers-cont', bytes: L('HTTP/1.1 200 OK\r\nX: 1\r\n 2') },
    { name: 'eof-headers-ws', bytes: L('HTTP/1.1 200 OK\r\nX: 1\r\n  ') },
    { name: 'eof-after-status', bytes: L('HTTP/1.1 200 OK\r\n') },
    { name: 'eof-bad-line', bytes: L('HTTP/1.1 200 OK\r\nbad') },
    { name: 'many', bytes: L(`HTTP/1.1 200 OK\r\n${Array.from({ length: 400 }, (_, i) => `X-H${i % 150}: v${i}\r\n`).join('')}\r\n`) },
    { name: 'long-value', bytes: L(`HTTP/1.1 200 OK\r\nX: ${'v'.repeat(70000)}\r\nContent-Length: 1\r\n\r\nzz`) },
    { name: 'long-name', bytes: L(`HTTP/1.1 200 OK\r\n${'N'.repeat(5000)}: v\r\n\r\n`) },
    { name: 'folded-long', bytes: L(`HTTP/1.1 200 OK\r\nX: a\r\n${' b\r\n'.repeat(500)}\r\n`) },
    H('X: a\r\n\r\n', 'BODY\r\nY: b\r\n'),
  ];
  return out;
}

function framingCases() {
  const R = (h, body, extra = {}) => ({ name: 'frame', bytes: L(`HTTP/1.1 200 OK\r\n${h}\r\n${body}`), ...extra });
  const out = [];
  for (const cl of ['3', '0', '10', '5', 'abc12def', '-5', '+5', ' 5 ', '5, 6', '0x10', '99999999999999999999999999', 'x', '', '00003', '3.9', '1e3'])
    out.push(R(`Content-Length: ${cl}\r\n`, 'abcdefNEXT'));
  out.push(R('Content-Length: 2\r\nContent-Length: 4\r\n', 'abcdef'));
  out.push(R('Content-Length: x\r\nContent-Length: 4\r\n', 'abcdef'));
  out.push(R('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\nREST'));
  out.push(R('X: no framing\r\n', 'read all of this\r\n\r\nHTTP/1.1 200 OK\r\n'));
  out.push(R('', ''));
  const ranges = ['bytes 0-4/10', 'bytes 0-9/100', 'bytes 5-4/100', 'bytes 10-5/100', 'bytes 3-3/*', 'Bytes 0-2/*', 'items 0-1/2',
    '  bytes   0-4/10', 'bytes 0-4', 'bytes 0-4/x', 'bytes=0-4/10', 'bytes 0 -4/10', 'bytes -0-4/10', 'bytes\t1-3/*junk',
    'bytes 100000000000000000000000000-100000000000000000000000002/*', 'bytes 0-99999999999999999999999/*', '', 'x'];
  for (const cr of ranges) out.push(R(`Content-Range: ${cr}\r\n`, 'abcdefghijNEXT'));
  out.push(R('Content-Range: bytes 0-4/10\r\nContent-Length: 2\r\n', 'abcdef'));
  out.push(R('Content-Range: bytes 0-4/10\r\nTransfer-Encoding: chunked\r\n', '2\r\nab\r\n0\r\n\r\nR'));
  out.push(R('Content-Range: bytes 0-4/10\r\nContent-Range: bytes 0-1/10\r\n', 'abcdef'));
  const tes = ['chunked', 'Chunked', 'CHUNKED', 'gzip, chunked', 'chunked, gzip', 'xchunked', 'chunked-x', 'chunked_', 'x-chunked',
    '(chunked)', 'chunked;q=1', 'identity', 'chunked2', ' chunked', 'gzip,chunked', 'x chunked y', '\u00ffchunked', 'x_chunked', 'chunke'];
  for (const te of tes) out.push(R(`Transfer-Encoding: ${te}\r\n`, '3\r\nabc\r\n0\r\n\r\nREST'));
  out.push(R('Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\nREST'));
  out.push(R('Transfer-Encoding: identity\r\nContent-Length: 3\r\n', 'abcREST'));
  for (const m of ['HEAD', 'head', 'GET', 'POST', 'OPTIONS']) {
    out.push(R('Content-Length: 3\r\n', 'abcHTTP/1.1 200 OK\r\n', { method: m }));
    out.push(R('Transfer-Encoding: chunked\r\n', '3\r\nabc\r\n0\r\n\r\n', { method: m }));
  }
  out.push(R('', 'after head', { method: 'HEAD' }));
  for (const code of [100, 101, 102, 103, 150, 199]) {
    const b = L(`HTTP/1.1 ${code} Info\r\nX-I: ${code}\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiREST`);
    out.push({ name: `interim-${code}`, bytes: b });
    out.push({ name: `interim-${code}-skip`, bytes: b, skipInterim: true });
  }
  const multi = L('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nxy');
  out.push({ name: 'interims', bytes: multi, skipInterim: true });
  out.push({ name: 'interims-noskip', bytes: multi, messages: 4 });
  out.push({ name: 'interim-eof', bytes: L('HTTP/1.1 100 Continue\r\n\r\n'), skipInterim: true });
  out.push({ name: 'interim-eof-headers', bytes: L('HTTP/1.1 100 Continue\r\nX: 1'), skipInterim: true });
  out.push({ name: 'interim-bad-next', bytes: L('HTTP/1.1 100 Continue\r\n\r\nnope\r\n'), skipInterim: true });
  out.push({ name: 'interim-head', bytes: L('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi'), skipInterim: true, method: 'HEAD' });
  for (const code of [204, 205, 304, 305]) {
    out.push({ name: `nobody-${code}`, bytes: L(`HTTP/1.1 ${code} X\r\nContent-Length: 3\r\n\r\nabcREST`) });
    out.push({ name: `nobody-${code}-chunked`, bytes: L(`HTTP/1.1 ${code} X\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`) });
  }
  const ka = L('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 404 NF\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\nHTTP/1.1 304 NM\r\n\r\nHTTP/1.0 200 OK\r\n\r\nto the end');
  out.push({ name: 'keepalive', bytes: ka, messages: 4 });
  out.push({ name: 'keepalive-2', bytes: ka, messages: 2 });
  out.push({ name: 'keepalive-eof', bytes: ka, messages: 5 });
  out.push({ name: 'keepalive-head', bytes: L('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nHTTP/1.1 200 OK\r\n\r\n'), messages: 2, method: 'HEAD' });
  return out;
}

function chunkedCases() {
  const C = (body, extra = {}) => ({ name: 'chunked', bytes: cat('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', body), ...extra });
  const out = [
    C('3\r\nabc\r\n0\r\n\r\n'), C('3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\nREST'), C('A\r\n0123456789\r\n0\r\n\r\n'), C('a\r\n0123456789\r\n0\r\n\r\n'),
    C('0003\r\nabc\r\n000\r\n\r\n'), C('3;x=y\r\nabc\r\n0;last\r\n\r\n'), C('3;name="a;b"\r\nabc\r\n0\r\n\r\n'), C('zz3zz\r\nabc\r\n0\r\n\r\n'),
    C(';name=abc\r\n0123456789\r\n0\r\n\r\n'), C('0x5\r\nabcde\r\n0\r\n\r\n'), C('-5\r\nabcde\r\n0\r\n\r\n'), C(' 5\r\nabcde\r\n0\r\n\r\n'),
    C('5 \r\nabcde\r\n0\r\n\r\n'), C('5\t;\t\r\nabcde\r\n0\r\n\r\n'), C('zz\r\n'), C('\r\n'), C('\n'), C('\r\r\n'), C('g\r\nabc'),
    C('z\xffz\r\n'), C('\u00c3\u00a9\r\n'), C('3\r\nabcXY0\r\n\r\n'), C('3\r\nabc\n4\r\nabcd\r\n0\r\n\r\n'), C('3\r\nabc\r\n0\r\nX: 1\r\nY: 2\r\n\r\nREST'),
    C('3\r\nabc\r\n0\r\nX: 1\n\nREST'), C('3\r\nabc\r\n0\r\n\r\r\n\r\nREST'), C('3\r\nabc\r\n0\r\n \r\n\r\nREST'), C('3\r\nabc\r\n0\r\n\n'),
    C('3\r\nabc\r\n0\r\nX: 1\r\n'), C('3\r\nabc\r\n0\r\n'), C('3\r\nabc\r\n0'), C('3\r\nabc\r\n'), C('3\r\nabc\r'), C('3\r\nabc'),
    C('3\r\nab'), C('3\r\n'), C('3'), C(''), C('ffffffffffffffffffff\r\nabc'), C('7fffffff\r\nabc'), C('3\n\nabc\n0\n\n'),
    C('3\r\nabc\r\n0\r\n\r\n', { method: 'HEAD' }), C('1\r\na\r\n'.repeat(300) + '0\r\n\r\nREST'),
    C(chunkedOf(Buffer.from(Array.from({ length: 256 }, (_, i) => i)), 7)), C(chunkedOf(L('x'.repeat(40000)), 9000)),
    C(chunkedOf(L('0123456789abcdef'.repeat(2500)), 40000)), C('3\r\na\r\n\r\n0\r\n\r\n'), C('3\r\n\r\n\r\n\r\n0\r\n\r\n'),
    C('3\r\nabc\r\n0\r\nTrailer: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz', { messages: 2 }),
    C('2\r\nab\r\n1\r\nc\r\n0\r\n\r\n\r\n'), C('3\r\nabc\r\n0 \r\n\r\n'), C('3\r\nabc\r\n00000\r\n\r\n'), C('3\r\nabc\r\nx0\r\n\r\n'),
    C('3\r\nabc\r\n;0\r\n'), C('1\r\n\n\r\n0\r\n\r\n'), C('3\r\nabc\r\n0\r\n\x00\r\n\r\n'),
  ];
  return out;
}

function decodeCases(z) {
  const out = [];
  const D = (name, head, body, extra = {}) =>
    out.push({ name, bytes: cat(`HTTP/1.1 200 OK\r\n${head}\r\n`, body), decode: true, ...extra });
  const inflating = (ce) => ['gzip', 'x-gzip', 'deflate'].includes(ce.toLowerCase());
  for (const [key, ce] of [['gz_hello', 'gzip'], ['gz_hello', 'x-gzip'], ['gz_hello', 'GZIP'], ['gz_hello', 'Gzip'], ['zl_hello', 'deflate'],
    ['zl_hello', 'DEFLATE'], ['gz_hello', 'deflate'], ['zl_hello', 'gzip'], ['gz_utf8', 'gzip'], ['gz_bin', 'gzip'], ['gz_l0', 'gzip'],
    ['gz_l9', 'gzip'], ['gz_named', 'gzip'], ['gz_empty', 'gzip'], ['zl_empty', 'deflate'], ['gz_big', 'gzip'], ['zl_big', 'deflate'], ['gz_rnd', 'gzip']]) {
    const b = z[key];
    D(`${key}-${ce}-cl`, `Content-Encoding: ${ce}\r\nContent-Length: ${b.length}\r\n`, cat(b, 'NEXT'), { inflates: inflating(ce) });
    D(`${key}-${ce}-eof`, `Content-Encoding: ${ce}\r\n`, b, { inflates: inflating(ce) });
  }
  for (const key of ['gz_hello', 'gz_big', 'zl_big', 'gz_bin']) {
    D(`${key}-chunked`, 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n', cat(chunkedOf(z[key], 1000), 'REST'), { inflates: true });
    D(`${key}-chunked1`, 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', chunkedOf(z[key].subarray(0, 300), 1), { inflates: true });
  }
  const g = z.gz_hello;
  D('trailing-garbage', 'Content-Encoding: gzip\r\n', cat(g, 'garbage'), { inflates: true });
  D('two-members', 'Content-Encoding: gzip\r\n', cat(g, z.gz_utf8), { inflates: true });
  D('truncated', 'Content-Encoding: gzip\r\n', g.subarray(0, g.length - 5), { inflates: true });
  D('truncated-header', 'Content-Encoding: gzip\r\n', g.subarray(0, 5), { inflates: true });
  D('truncated-cl', `Content-Encoding: gzip\r\nContent-Length: ${g.length}\r\n`, g.subarray(0, 12), { inflates: true });
  const bad = Buffer.from(g);
  bad[12] ^= 0xff;
  D('corrupt', 'Content-Encoding: gzip\r\n', bad, { inflates: true });
  const badcrc = Buffer.from(g);
  badcrc[badcrc.length - 6] ^= 1;
  D('bad-crc', 'Content-Encoding: gzip\r\n', badcrc, { inflates: true });
  D('not-gzip', 'Content-Encoding: gzip\r\nContent-Length: 5\r\n', 'hello', { inflates: true });
  D('raw-deflate', 'Content-Encoding: deflate\r\n', z.raw_hello, { inflates: true });
  D('need-dict', 'Content-Encoding: deflate\r\n', z.dict, { inflates: true });
  D('empty-body', 'Content-Encoding: gzip\r\nContent-Length: 0\r\n', '', { inflates: true });
  D('chunked-corrupt', 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', cat(chunkedOf(bad, 8), 'REST'), { inflates: true });
  D('chunked-corrupt-eof', 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', cat(`${bad.length.toString(16)}\r\n`, bad, '\r'), { inflates: true });
  D('chunked-truncated', 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', chunkedOf(g.subarray(0, 15), 4), { inflates: true });
  D('chunked-eof-in-data', 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', cat('ff\r\n', g), { inflates: true });
  D('range', 'Content-Encoding: gzip\r\nContent-Range: bytes 0-4/10\r\n', cat(g), {});
  D('range-cl', `Content-Encoding: gzip\r\nContent-Range: bytes 0-4/10\r\nContent-Length: ${g.length}\r\n`, g, {});
  D('head', `Content-Encoding: gzip\r\nContent-Length: ${g.length}\r\n`, g, { method: 'HEAD' });
  out.push({ name: '204', bytes: cat('HTTP/1.1 204 No Content\r\nContent-Encoding: gzip\r\n\r\n', g), decode: true });
  D('two-ce', 'Content-Encoding: gzip\r\nContent-Encoding: gzip\r\n', g);
  D('ce-list', 'Content-Encoding: gzip, identity\r\n', g);
  D('ce-br', 'Content-Encoding: br\r\nContent-Length: 3\r\n', 'abc');
  for (const ce of ['identity', 'IDENTITY', 'none', 'None', 'compress', '', 'gzip2', 'identity, none'])
    D(`ce-${ce}`, `Content-Encoding: ${ce}\r\nContent-Length: 3\r\nX-After: 1\r\n`, 'abcREST');
  D('no-decode-flag', `Content-Encoding: gzip\r\nContent-Length: ${g.length}\r\n`, g, { decode: false });
  D('gzip-chunked-head-skip', 'Content-Encoding: gzip\r\n', g, { skipInterim: true, bytes: cat('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n', g), inflates: true });
  D('keepalive', `Content-Encoding: gzip\r\nContent-Length: ${g.length}\r\n`, cat(g, `HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: ${z.zl_hello.length}\r\n\r\n`, z.zl_hello, 'tail'), { messages: 2, inflates: true });
  // cut short near zlib's 16 KiB yield buffer: what Ruby yields depends on
  // where BufferedIO's 16 KiB reads and the chunks fall
  for (const key of ['gz_b16k', 'gz_b32k', 'gz_b16k1', 'gz_b16k1_stored']) {
    for (const cut of key.endsWith('stored') ? [0, 8] : [0, 4, 8, 9]) {
      const b = z[key].subarray(0, z[key].length - cut);
      D(`${key}-cut${cut}-cl`, `Content-Encoding: gzip\r\nContent-Length: ${z[key].length}\r\n`, b, { inflates: true });
      D(`${key}-cut${cut}-chunked`, 'Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', chunkedOf(b, key === 'gz_b16k' ? 7 : 100000), { inflates: true });
      if (!key.endsWith('stored')) D(`${key}-cut${cut}-eof`, 'Content-Encoding: gzip\r\n', b, { inflates: true });
    }
  }
  // an inflate error inside a chunk that spans BufferedIO's 16 KiB reads,
  // the stream cut short after it: read_chunked's `read 2` reads right after
  // the piece that failed, so where the stream ends decides between
  // Zlib::DataError and EOFError
  {
    const bad = Buffer.from(z.gz_skewed);
    bad[20] ^= 0xff;
    bad[21] ^= 0x55;
    for (const size of [bad.length, 10000]) {
      const head = L('HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n');
      const full = Buffer.concat([head, chunkedOf(bad, size)]);
      for (const cut of [16381, 16385, 16386, 32770, full.length])
        out.push({ name: `gz_skewed-corrupt-chunk${size}-cut${cut}`, bytes: full.subarray(0, cut), decode: true, inflates: true });
    }
  }
  // ruby.wasm runs the cases whose decoded body stays under 1 KiB
  for (const c of out) {
    if (c.inflates) c.oracle = /gz_big|zl_big|gz_rnd|gz_l9|gz_b\d|gz_skewed/.test(c.name) ? 'native' : 'both';
    delete c.inflates;
  }
  return out;
}

function miscCases() {
  const out = [];
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  out.push({ name: 'binary-cl', bytes: cat(`HTTP/1.1 200 OK\r\nContent-Length: ${all.length}\r\n\r\n`, all, 'REST') });
  out.push({ name: 'binary-eof', bytes: cat('HTTP/1.1 200 OK\r\n\r\n', all, all) });
  out.push({ name: 'nul-body', bytes: cat('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n\x00\x00\x00\x00\x00') });
  out.push({ name: 'crlf-body', bytes: L('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n\r\n\r\n\r\n\r\nX') });
  out.push({ name: 'big-cl', bytes: cat('HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n', L('y'.repeat(40000)), 'REST') });
  out.push({ name: 'big-eof', bytes: cat('HTTP/1.1 200 OK\r\n\r\n', L('z'.repeat(33000))) });
  out.push({ name: 'big-range', bytes: cat('HTTP/1.1 206 Partial\r\nContent-Range: bytes 0-35999/99999\r\n\r\n', L('r'.repeat(36000)), 'REST') });
  out.push({ name: 'big-range-short', bytes: cat('HTTP/1.1 206 Partial\r\nContent-Range: bytes 0-35999/99999\r\n\r\n', L('r'.repeat(35999))) });
  // heads around BufferedIO's 16 KiB reads
  for (const pad of [16300, 16360, 16366, 16370, 16384, 16400]) {
    const head = `HTTP/1.1 200 OK\r\nX-Pad: ${'p'.repeat(pad - 40)}\r\nContent-Length: 3\r\n\r\n`;
    out.push({ name: `pad-${pad}`, bytes: cat(head, 'abcREST') });
  }
  out.push({ name: 'status-16k', bytes: L(`HTTP/1.1 200 ${'m'.repeat(17000)}\r\n\r\nbody`) });
  out.push({ name: 'utf8-everywhere', bytes: L('HTTP/1.1 200 \u00c3\u00a9\r\nX-\u00c3\u00a9: \u00c3\u00a9\r\nContent-Length: 2\r\n\r\n\u00c3\u00a9') });
  out.push({ name: 'invalid-utf8-everywhere', bytes: L('HTTP/1.1 200 \xc3\r\nX-\xff: \xfe\xc3\r\nContent-Length: 2\r\n\r\n\xff\xfe') });
  out.push({ name: 'http09ish', bytes: L('<html>hello</html>') });
  out.push({ name: 'req-not-resp', bytes: L('GET / HTTP/1.1\r\nHost: x\r\n\r\n') });
  out.push({ name: 'keepalive-binary', bytes: cat(`HTTP/1.1 200 OK\r\nContent-Length: 256\r\n\r\n`, all, 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n\xff'), messages: 2 });
  out.push({ name: 'keepalive-chunked-3', bytes: L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n'.repeat(3)), messages: 3 });
  out.push({ name: 'keepalive-mixed-eof', bytes: L('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort'), messages: 2 });
  out.push({ name: 'keepalive-error-2nd', bytes: L('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nb'), messages: 2 });
  return out;
}

// Request-smuggling and response-splitting shapes, and other hostile input:
// what MRI does with each is recorded; tests/unit/hostile-response.test.mjs also
// pins what strict mode does with them, by name.
export function hostileCases() {
  const H = (name, head, body = '', extra = {}) => ({ name, bytes: cat(head, body), ...extra });
  const ok = 'HTTP/1.1 200 OK\r\n';
  const chunk5 = '5\r\nhello\r\n0\r\n\r\nREST';
  return [
    H('cl-and-te', `${ok}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n`, chunk5),
    H('te-and-cl', `${ok}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n`, chunk5),
    H('two-cl-different', `${ok}Content-Length: 3\r\nContent-Length: 5\r\n\r\n`, 'abcdefgh'),
    H('cl-list-different', `${ok}Content-Length: 5, 3\r\n\r\n`, 'abcdefgh'),
    H('two-cl-same', `${ok}Content-Length: 5\r\nContent-Length: 5\r\n\r\n`, 'abcdefgh'),
    H('cl-list-same', `${ok}Content-Length: 5,5 , 05\r\n\r\n`, 'abcdefgh'),
    H('te-chunked-not-last', `${ok}Transfer-Encoding: chunked, identity\r\n\r\n`, chunk5),
    H('te-chunked-twice', `${ok}Transfer-Encoding: chunked, chunked\r\n\r\n`, chunk5),
    H('te-two-fields', `${ok}Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n`, chunk5),
    H('te-percent-chunked', `${ok}Transfer-Encoding: %chunked\r\n\r\n`, chunk5),
    H('te-chunked-param', `${ok}Transfer-Encoding: chunked;q=1\r\n\r\n`, chunk5),
    H('te-uppercase', `${ok}Transfer-Encoding: CHUNKED\r\n\r\n`, chunk5),
    H('te-empty', `${ok}Transfer-Encoding: \r\n\r\n`, 'abc'),
    H('te-http10', 'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', chunk5),
    H('obs-fold', `${ok}X-A: a\r\n b\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('obs-fold-tab', `${ok}X-A: a\r\n\tb\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('fold-before-first-field', `${ok} X-A: a\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('fold-into-content-length', `${ok}Content-Length: 1\r\n 0\r\n\r\n`, '0123456789REST'),
    H('bare-cr-status', 'HTTP/1.1 200 OK\rX-A: b\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('bare-cr-value', `${ok}X-A: a\rb\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('bare-cr-name', `${ok}X\rContent-Length: 2\r\n\r\n`, 'okREST'),
    H('bare-lf', 'HTTP/1.1 200 OK\nContent-Length: 2\n\n', 'okREST'),
    H('nul-in-value', `${ok}X-A: a\0b\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('nul-in-name', `${ok}X\0A: b\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('ctl-in-value', `${ok}X-A: a\x01b\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('space-before-colon', `${ok}Content-Length : 2\r\n\r\n`, 'okREST'),
    H('tab-before-colon', `${ok}Transfer-Encoding\t: chunked\r\n\r\n`, chunk5),
    H('empty-name', `${ok}: x\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('no-colon', `${ok}X-A\r\nContent-Length: 2\r\n\r\n`, 'okREST'),
    H('chunk-size-65-bits', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '10000000000000000\r\nabc'),
    H('chunk-size-96-bits', `${ok}Transfer-Encoding: chunked\r\n\r\n`, 'ffffffffffffffffffffffff\r\nabc'),
    H('chunk-size-leading-zeros', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '000000000000000000000005\r\nhello\r\n0\r\n\r\nREST'),
    H('chunk-size-leading-space', `${ok}Transfer-Encoding: chunked\r\n\r\n`, ' 5\r\nhello\r\n0\r\n\r\nREST'),
    H('chunk-size-0x', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '0x5\r\nhello\r\n0\r\n\r\nREST'),
    H('chunk-size-negative', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '-5\r\nhello\r\n0\r\n\r\nREST'),
    H('chunk-ext', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5 ; a=b;c\r\nhello\r\n0;x\r\n\r\nREST'),
    H('chunk-ext-ctl', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5;\x01\r\nhello\r\n0\r\n\r\nREST'),
    H('chunk-size-bare-lf', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\nhello\r\n0\r\n\r\nREST'),
    H('chunk-data-no-crlf', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\r\nhelloXY0\r\n\r\nREST'),
    H('chunk-data-lf-only', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\r\nhello\n0\r\n\r\nREST'),
    H('trailer', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\r\nhello\r\n0\r\nX-T: 1\r\n\r\nREST'),
    H('trailer-fold', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\r\nhello\r\n0\r\nX-T: 1\r\n 2\r\n\r\nREST'),
    H('trailer-no-colon', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\r\nhello\r\n0\r\nnot a field\r\n\r\nREST'),
    H('trailer-smuggled-response', `${ok}Transfer-Encoding: chunked\r\n\r\n`, '5\r\nhello\r\n0\r\nHTTP/1.1 200 OK\r\n\r\nREST'),
    H('cl-negative', `${ok}Content-Length: -5\r\n\r\n`, 'abcdefgh'),
    H('cl-plus', `${ok}Content-Length: +5\r\n\r\n`, 'abcdefgh'),
    H('cl-hex', `${ok}Content-Length: 0x5\r\n\r\n`, 'abcdefgh'),
    H('cl-enormous', `${ok}Content-Length: 99999999999999999999999999\r\n\r\n`, 'abcdefgh'),
    H('cl-2-pow-64', `${ok}Content-Length: 18446744073709551616\r\n\r\n`, 'abcdefgh'),
    H('cl-short-body', `${ok}Content-Length: 1000000\r\n\r\n`, 'abcdefgh'),
    H('cl-empty', `${ok}Content-Length: \r\n\r\n`, 'abcdefgh'),
    H('head-cut-short', `${ok}X-A: b`),
    H('head-no-empty-line', `${ok}X-A: b\r\n`),
    H('status-no-version', 'HTTP 200 OK\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-lowercase', 'http/1.1 200 OK\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-two-spaces', 'HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-tab', 'HTTP/1.1\t200\tOK\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-no-reason', 'HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-empty-reason', 'HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-ctl-reason', 'HTTP/1.1 200 O\x01K\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('status-version-10-digits', 'HTTP/10.10 200 OK\r\nContent-Length: 2\r\n\r\n', 'okREST'),
    H('range-frames-body', 'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-2/10\r\n\r\n', 'abcREST'),
    H('response-splitting-cl0', `${ok}Content-Length: 0\r\n\r\n`, 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil', { messages: 2 }),
    H('head-request-with-te', `${ok}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n`, 'REST', { method: 'HEAD' }),
    H('no-content-with-cl', 'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n', 'REST'),
  ];
}

/** All fixed cases, by group. */
export function generateCases() {
  const z = rubyZlib();
  const groups = {
    status: statusCases(),
    headers: headerCases(),
    framing: framingCases(),
    chunked: chunkedCases(),
    decode: decodeCases(z),
    misc: miscCases(),
    hostile: hostileCases(),
  };
  const files = {};
  for (const [g, list] of Object.entries(groups)) {
    files[g] = list.map((c, i) => toCase(`${g}-${String(i).padStart(3, '0')}-${c.name}`, c));
  }
  return files;
}

function toCase(id, c) {
  const bytes = Buffer.from(c.bytes);
  const o = { id, op: 'response', profile: '4.0' };
  let odd = 0;
  for (const b of bytes) if ((b < 32 && b !== 13 && b !== 10 && b !== 9) || b >= 127) odd++;
  if (odd > bytes.length / 8 && bytes.length > 64) o.base64 = bytes.toString('base64');
  else o.text = bytes.toString('latin1');
  for (const k of ['method', 'decode', 'skipInterim', 'messages', 'oracle']) if (c[k] !== undefined && c[k] !== false) o[k] = c[k];
  return o;
}

/** The runner's case for one of ours. */
export function runnerCase(c) {
  const o = { bytes: Buffer.from(caseBytes(c)).toString('base64') };
  for (const k of ['method', 'decode', 'skipInterim', 'messages']) if (c[k] !== undefined) o[k] = c[k];
  return o;
}

// ---------------------------------------------------------------------------
// Seeded random responses, plausible and hostile
// ---------------------------------------------------------------------------

const rng = prng;

function gen(seed) {
  const r = rng(seed);
  const int = (n) => Math.floor(r() * n);
  const chance = (p) => r() < p;
  const pick = (a) => a[int(a.length)];
  const bytes = (n, alphabet) => {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = alphabet ? alphabet.charCodeAt(int(alphabet.length)) : int(256);
    return out;
  };
  const EOL = () => (chance(0.85) ? '\r\n' : pick(['\n', '\r\r\n', ' \r\n', '\t\n']));
  const TOK = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.';
  const VAL = TOK + ' ,;=/:"()\t';
  const codes = ['100', '101', '103', '200', '201', '204', '205', '206', '301', '304', '305', '404', '500', '299', '600', '099', '418'];
  const statusLine = () => {
    const code = chance(0.9) ? pick(codes) : pick(['20', '2000', '2x0', 'abc', '']);
    const ver = chance(0.9) ? `/1.${int(2)}` : pick(['', '/2', '/1.1.1', '/10.0', '/']);
    const http = chance(0.9) ? 'HTTP' : pick(['http', 'Http', 'HTTPS', ' HTTP', 'ICY']);
    const sep = chance(0.9) ? ' ' : pick(['  ', '\t', '\v', '']);
    const msg = chance(0.85) ? pick([' OK', ' Not Found', ' ', '', '  Spaced  ', ' \xff\xfe', ' a\rb', ' \u00c3\u00a9']) : ` ${bytes(int(8), VAL)}`;
    return `${http}${ver}${sep}${code}${msg}${EOL()}`;
  };
  const name = () =>
    chance(0.7)
      ? pick(['Content-Type', 'X-A', 'x-a', 'Set-Cookie', 'set-cookie', 'Date', 'Connection', 'Location', 'ETag', '123', 'X-\xff'])
      : bytes(1 + int(10), chance(0.9) ? TOK : undefined).toString('latin1').replace(/[\r\n:]/g, '_');
  const value = () => {
    if (chance(0.8)) return bytes(int(20), VAL).toString('latin1');
    return pick(['', ' ', '\x00', 'a\rb', 'a\x00b', '\u00c3\u00a9', '\xff', ' x ', 'a:b', '\tv\t']);
  };
  const field = () => {
    const sep = chance(0.8) ? ': ' : pick([':', ' : ', '\t:\t', ' :', '::', '']);
    let s = `${name()}${sep}${value()}${EOL()}`;
    if (chance(0.08)) s += `${pick([' ', '\t', '  '])}${value()}${EOL()}`;
    if (chance(0.02)) s = pick(['   \r\n', 'garbage\r\n', '\x00\r\n', ' lead: x\r\n']);
    return s;
  };
  const bodyBytes = (n) => (chance(0.7) ? bytes(n, TOK + ' \r\n') : bytes(n));
  const chunked = (data) => {
    let s = '';
    let i = 0;
    const parts = [];
    while (i < data.length) {
      const n = Math.min(data.length - i, 1 + int(chance(0.8) ? 10 : 3000));
      let size = n.toString(16);
      if (chance(0.1)) size = size.toUpperCase();
      if (chance(0.05)) size = '00' + size;
      let ext = chance(0.1) ? pick([';a=b', '; x', ';q="1;2"', ' ']) : '';
      if (chance(0.02)) { size = pick(['zz', '', 'g', '-']); ext = ''; }
      parts.push(L(`${size}${ext}${chance(0.95) ? '\r\n' : '\n'}`), data.subarray(i, i + n), L(chance(0.95) ? '\r\n' : pick(['XY', '\n', ''])));
      i += n;
    }
    s = `0${chance(0.1) ? ';end' : ''}\r\n`;
    if (chance(0.2)) s += `${name()}: ${value()}\r\n`;
    s += chance(0.9) ? '\r\n' : pick(['', '\n', '\r\r\n\r\n', 'X']);
    parts.push(L(s));
    return Buffer.concat(parts);
  };
  const response = () => {
    let head = statusLine();
    const nf = int(6);
    for (let i = 0; i < nf; i++) head += field();
    const data = bodyBytes(chance(0.8) ? int(40) : int(5000));
    let body;
    const kind = int(10);
    if (kind < 3) {
      const cl = chance(0.8) ? data.length : pick([0, data.length - 1, data.length + 5, 'x', ' 3 ', '-1', `${data.length}, 2`]);
      head += `Content-Length: ${cl}\r\n`;
      body = data;
    } else if (kind < 6) {
      head += `Transfer-Encoding: ${chance(0.9) ? 'chunked' : pick(['Chunked', 'gzip, chunked', 'xchunked', 'chunked-x'])}\r\n`;
      if (chance(0.1)) head += 'Content-Length: 3\r\n';
      body = chunked(data);
    } else if (kind < 7) {
      const a = int(5);
      const b = chance(0.8) ? a + data.length - 1 : a + int(10) - 5;
      head += `Content-Range: ${chance(0.9) ? 'bytes' : pick(['Bytes', 'items', ''])} ${a}-${b}/${chance(0.5) ? '*' : 100}\r\n`;
      body = data;
    } else {
      body = data;
    }
    if (chance(0.1)) head += `Content-Encoding: ${pick(['identity', 'none', 'br', 'IDENTITY'])}\r\n`;
    head += chance(0.95) ? '\r\n' : pick(['', '\n', ' \r\n']);
    return Buffer.concat([L(head), body]);
  };
  return { int, chance, pick, response, bytes };
}

/** `count` random cases from `seed` (the same seed gives the same cases). */
export function randomResponseCases(seed, count) {
  const out = [];
  for (let k = 0; k < count; k++) {
    const g = gen(seed * 100003 + k);
    let b = g.response();
    const c = { name: 'random' };
    if (g.chance(0.1)) b = Buffer.concat([L(`HTTP/1.1 1${g.int(10)}${g.int(10)} Info\r\n${g.chance(0.5) ? 'X: 1\r\n' : ''}\r\n`), b]);
    if (g.chance(0.5)) c.skipInterim = true;
    if (g.chance(0.25)) {
      b = Buffer.concat([b, g.response()]);
      c.messages = 2;
    }
    if (g.chance(0.15)) b = b.subarray(0, g.int(b.length + 1));
    if (g.chance(0.1)) {
      b = Buffer.from(b);
      const at = g.int(b.length + 1);
      b = Buffer.concat([b.subarray(0, at), g.bytes(1 + g.int(3)), b.subarray(at)]);
    }
    if (g.chance(0.1)) c.method = 'HEAD';
    if (g.chance(0.15)) c.decode = true;
    c.bytes = b;
    out.push(toCase(`random-${seed}-${k}`, c));
  }
  return out;
}

/** Random gzip/deflate responses (node:zlib), for the native oracle. */
export async function randomDecodeCases(seed, count) {
  const zlib = await import('node:zlib');
  const out = [];
  for (let k = 0; k < count; k++) {
    const g = gen(seed * 7919 + k);
    const small = g.chance(0.6);
    const edge = !small && g.chance(0.5); // decoded size at zlib's 16 KiB yield buffer
    const size = small ? g.int(1001) : edge ? 16384 * (1 + g.int(2)) + g.int(3) - 1 : 1000 + g.int(40000);
    const plain = g.chance(0.5) ? g.bytes(size, 'abc def\n') : g.bytes(size);
    const ce = g.pick(['gzip', 'x-gzip', 'deflate', 'GZIP']);
    let z = ce === 'deflate' ? zlib.deflateSync(plain, { level: g.int(10) }) : zlib.gzipSync(plain, { level: g.int(10) });
    const mut = g.int(10);
    if (edge && g.chance(0.7)) z = z.subarray(0, z.length - g.int(14));
    else if (mut === 0) z = z.subarray(0, g.int(z.length));
    else if (mut === 1) {
      z = Buffer.from(z);
      z[g.int(z.length)] ^= 1 << g.int(8);
    } else if (mut === 2) z = Buffer.concat([z, g.bytes(g.int(20))]);
    let head = `HTTP/1.1 200 OK\r\nContent-Encoding: ${ce}\r\n`;
    let body;
    const framing = g.int(3);
    if (framing === 0) {
      head += `Content-Length: ${z.length}\r\n`;
      body = Buffer.concat([z, L('NEXT')]);
    } else if (framing === 1) {
      head += 'Transfer-Encoding: chunked\r\n';
      const parts = [];
      for (let i = 0; i < z.length;) {
        const n = Math.min(z.length - i, 1 + g.int(600));
        parts.push(L(`${n.toString(16)}\r\n`), z.subarray(i, i + n), L('\r\n'));
        i += n;
      }
      parts.push(L('0\r\n\r\nNEXT'));
      body = Buffer.concat(parts);
      if (g.chance(0.2)) body = body.subarray(0, g.int(body.length));
    } else {
      body = z;
    }
    out.push(toCase(`rdecode-${seed}-${k}`, { name: 'rdecode', bytes: Buffer.concat([L(head + '\r\n'), body]), decode: true, oracle: small ? 'both' : 'native' }));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Case files and fixtures
// ---------------------------------------------------------------------------

const casesDir = join(here, '..', '..', 'fixtures', 'cases');

/** [{ group, file, cases, expected: Map(id → entry) | null }] */
export function loadResponseCases() {
  return readdirSync(casesDir)
    .filter((f) => /^response_[a-z0-9]+\.json$/.test(f))
    .sort()
    .map((f) => {
      const cases = JSON.parse(readFileSync(join(casesDir, f), 'utf8'));
      const ef = join(casesDir, f.replace(/\.json$/, '.expected.json'));
      let expected = null;
      if (existsSync(ef)) expected = new Map(JSON.parse(readFileSync(ef, 'utf8')).map((e) => [e.id, e]));
      return { group: f.slice(9, -5), file: f, cases, expected };
    });
}

/** Runs cases in MRI: one fixture entry each (see above). */
export async function recordCases(cases) {
  const entries = cases.map((c) => ({ id: c.id }));
  const run = async (version, key, pick) => {
    const idx = [];
    cases.forEach((c, i) => { if (pick(c)) idx.push(i); });
    if (!idx.length) return;
    const res = await runResponseCases(version, idx.map((i) => runnerCase(cases[i])));
    idx.forEach((i, k) => { entries[i][key] = res[k]; });
  };
  const wasm = (c) => c.oracle !== 'native';
  const native = (c) => c.oracle === 'native' || c.oracle === 'both';
  await run('4.0', 'result', wasm);
  await run('3.4', 'result34', wasm);
  await run('native-4.0', 'native40', native);
  await run('native-3.4', 'native34', native);
  await run('native', 'native', native);
  return entries;
}

/**
 * Fixtures keep long strings (bodies, long fields) as their SHA-256 and
 * length; compare a live result to a fixture through compact() too.
 */
export function compact(r) {
  return JSON.parse(JSON.stringify(r), (k, v) => {
    let bytes = null;
    if (typeof v === 'string' && v.length > 2048) bytes = Buffer.from(v, 'utf8');
    else if (v && typeof v === 'object' && typeof v.b64 === 'string' && v.b64.length > 2048) bytes = Buffer.from(v.b64, 'base64');
    if (!bytes) return v;
    return { sha256: createHash('sha256').update(bytes).digest('hex'), length: bytes.length };
  });
}

const lines = (arr) => `[\n${arr.map((x) => JSON.stringify(x)).join(',\n')}\n]\n`;

async function cli(cmd) {
  if (cmd === 'generate') {
    for (const [g, cases] of Object.entries(generateCases())) {
      writeFileSync(join(casesDir, `response_${g}.json`), lines(cases));
      console.log(`response_${g}.json: ${cases.length} cases`);
    }
  } else if (cmd === 'record') {
    // record [group ...]: all groups by default
    const only = process.argv.slice(3);
    for (const { group, file, cases } of loadResponseCases()) {
      if (only.length && !only.includes(group)) continue;
      const t0 = Date.now();
      const entries = (await recordCases(cases)).map(compact);
      writeFileSync(join(casesDir, file.replace(/\.json$/, '.expected.json')), lines(entries));
      console.log(`${file}: ${cases.length} cases recorded in ${Date.now() - t0} ms`);
    }
    shutdownResponseVMs();
  } else {
    console.error('usage: node tests/support/oracle/response.mjs generate | record [group ...]');
    process.exitCode = 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await cli(process.argv[2]);
