// The module's exported ABI (docs/abi.md) as a host without the JS API uses
// it: wasm/nethttp.wasm instantiated bare, records written and results read
// by the small readers below, which follow the page, not js/. The recorded
// MRI results (tests/fixtures/cases) are the oracle; the JS API is imported only to
// check that the same input gives it the same bytes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import * as schema from '../../schema/codec.mjs';
import { sendFlags } from '../../schema/bridge.mjs';
import { render } from '../../tools/gen-abi-doc.mjs';
import { Request, URI, encodeWwwForm } from '../../js/index.mjs';

const root = new URL('../../', import.meta.url);
const wasm = readFileSync(new URL('wasm/nethttp.wasm', root));
const docText = readFileSync(new URL('docs/abi.md', root), 'utf8');

// ---- the constants, from the schema the page's tables are written from ----
const K = {};
for (const g of [schema.status, schema.errorClasses, schema.requestOps, schema.headerQueries, schema.responseEvents, schema.headFlags, schema.configFlags, schema.limits, schema.profiles])
  for (const [name, [value]] of Object.entries(g)) K[name] = value;
K.CONFIG_LEN = schema.recordLayout(schema.records.config).len;
const CLASS_OF = Object.fromEntries(Object.values(schema.errorClasses).map(([v, , cls]) => [v, cls]));
const PROFILE = Object.fromEntries(Object.values(schema.profiles).map(([v, , s]) => [s, v]));
const ALL_ONES = 0xffffffff;

// ---- a host ----
const enc = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });
const bytesOf = (s) => (typeof s === 'string' ? enc.encode(s) : s);

function instantiate() {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(wasm), {});
  const x = instance.exports;
  x._initialize();
  return x;
}

class Host {
  constructor(x = instantiate()) {
    this.x = x;
    this.ctx = x.nh_ctx_new() >>> 0;
    assert.ok(this.ctx, 'nh_ctx_new');
  }
  u8() {
    return new Uint8Array(this.x.memory.buffer);
  }
  u32(addr) {
    return new DataView(this.x.memory.buffer).getUint32(addr, true);
  }
  // Writes `record` into the input buffer and makes the call; returns the
  // status, the output (a copy), its address, and the error class.
  call(name, record, ...args) {
    const p = this.x.nh_ctx_input(this.ctx, record.length) >>> 0;
    assert.ok(p, 'nh_ctx_input');
    this.u8().set(record, p);
    return this.callAgain(name, record.length, ...args);
  }
  callAgain(name, len, ...args) {
    const rc = this.x[name](this.ctx, len, ...args);
    const at = this.u32(this.ctx);
    const n = this.u32(this.ctx + 4);
    return { rc, at, out: this.u8().slice(at, at + n), cls: this.u32(this.ctx + 12) };
  }
  free() {
    this.x.nh_ctx_free(this.ctx);
  }
}

// A record: u8, u32, str (u32 length + bytes), u64 (low, high).
class Rec {
  constructor() {
    this.b = [];
  }
  u8(v) {
    this.b.push(v & 0xff);
    return this;
  }
  u32(v) {
    for (let i = 0; i < 4; i++) this.b.push((v >>> (8 * i)) & 0xff);
    return this;
  }
  u64(v) {
    return v === Infinity ? this.u32(ALL_ONES).u32(ALL_ONES) : this.u32(v % 2 ** 32).u32(Math.floor(v / 2 ** 32));
  }
  str(s) {
    const b = bytesOf(s);
    this.u32(b.length);
    for (const c of b) this.b.push(c);
    return this;
  }
  raw(s) {
    for (const c of bytesOf(s)) this.b.push(c);
    return this;
  }
  done() {
    return Uint8Array.from(this.b);
  }
}

// A result reader over bytes.
class Reader {
  constructor(b, p = 0) {
    this.b = b;
    this.p = p;
  }
  u8() {
    return this.b[this.p++];
  }
  u32() {
    const v = (this.b[this.p] | (this.b[this.p + 1] << 8) | (this.b[this.p + 2] << 16) | (this.b[this.p + 3] << 24)) >>> 0;
    this.p += 4;
    return v;
  }
  bytes(n) {
    const s = this.b.subarray(this.p, this.p + n);
    this.p += n;
    return s;
  }
  str() {
    return this.bytes(this.u32());
  }
}

// A text table: u32 n, n UTF-16 lengths, the UTF-8 text.
function textTable(out) {
  const r = new Reader(out);
  const n = r.u32();
  const lens = Array.from({ length: n }, () => r.u32());
  const text = utf8.decode(out.subarray(r.p));
  let off = 0;
  return lens.map((l) => text.slice(off, (off += l)));
}

const lenient = new TextDecoder();
const errorOf = (res) => ({ class: CLASS_OF[res.cls], message: lenient.decode(res.out) });
const ok = (res) => assert.equal(res.rc, K.OK, res.rc === K.ERROR ? `${CLASS_OF[res.cls]}: ${utf8.decode(res.out)}` : `status ${res.rc}`);

// ---- the recorded cases ----
const casesDir = new URL('tests/fixtures/cases/', root);
function load(prefix) {
  const out = [];
  for (const f of readdirSync(casesDir).filter((f) => f.startsWith(prefix) && f.endsWith('.json') && !f.endsWith('.expected.json'))) {
    const expected = new Map();
    for (const e of JSON.parse(readFileSync(new URL(f.replace(/\.json$/, '.expected.json'), casesDir), 'utf8'))) expected.set(e.id, e);
    for (const c of JSON.parse(readFileSync(new URL(f, casesDir), 'utf8'))) out.push({ c, e: expected.get(c.id) });
  }
  return out;
}
const requestCases = readdirSync(casesDir)
  .filter((f) => !f.startsWith('response') && !f.includes('expected') && f.endsWith('.json'))
  .flatMap((f) => load(f.replace(/\.json$/, '')));

// A case's value as the string Ruby's to_s gives, or undefined for one this
// host does not convert (floats, big integers).
function rubyString(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (v && typeof v === 'object' && typeof v.base64 === 'string') return Buffer.from(v.base64, 'base64');
  return undefined;
}
// Values of req[key]= / add_field (an Array gives each element).
function fieldValues(v) {
  const out = [];
  for (const x of Array.isArray(v) ? v.flat(Infinity) : [v]) {
    const s = rubyString(x);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}
// pairs: u32 n, n x (str key, u8 kind, ...)
function writePairs(r, pairs) {
  r.u32(pairs.length);
  for (const [k, v] of pairs) {
    const key = rubyString(k);
    if (key === undefined) return false;
    r.str(key);
    if (v === null) r.u8(0);
    else if (Array.isArray(v)) {
      r.u8(2).u32(v.length);
      for (const el of v) {
        if (el === null) r.u8(0);
        else {
          const s = rubyString(el);
          if (s === undefined) return false;
          r.u8(1).str(s);
        }
      }
    } else {
      const s = rubyString(v);
      if (s === undefined) return false;
      r.u8(1).str(s);
    }
  }
  return true;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PATCH', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'];

// The request record of a case, ending in NH_OP_EXEC, or null when the case
// uses a call this host leaves to the JS API (helpers, body streams, set_form).
function requestRecord(c) {
  if (c.op !== 'request' || c.queries) return null;
  const known = METHODS.includes(c.method.toUpperCase());
  const r = new Rec()
    .u8(PROFILE[c.profile])
    .u8(known && c.method.toUpperCase() === 'HEAD' ? 0 : 1)
    .str(known ? c.method.toUpperCase() : c.method);
  if ('uri' in c.target) r.u8(1).str(c.target.uri);
  else r.u8(0).str(c.target.path);
  if (c.init === null) r.u32(ALL_ONES);
  else {
    // a Hash: a repeated key keeps its first place and its last value
    const h = new Map();
    for (const [k, v] of c.init) {
      if (typeof k !== 'string' || (v !== null && typeof v !== 'string')) return null;
      h.set(k, v);
    }
    r.u32(h.size);
    for (const [k, v] of h) {
      r.str(k);
      if (v === null) r.u8(0);
      else r.u8(1).str(v);
    }
  }
  for (const op of c.ops) {
    if (op[0] === 'set' && op[2] === null) r.u8(K.OP_DELETE).str(op[1]).u8(1);
    else if (op[0] === 'set' || op[0] === 'add') {
      const vs = fieldValues(op[2]);
      if (!vs) return null;
      r.u8(op[0] === 'set' ? K.OP_SET : K.OP_ADD).str(op[1]).u32(vs.length);
      for (const v of vs) r.str(v);
    } else if (op[0] === 'delete') r.u8(K.OP_DELETE).str(op[1]).u8(0);
    else if (op[0] === 'body') {
      if (op[1] === null) r.u8(K.OP_BODY).u8(0);
      else {
        const s = rubyString(op[1]);
        if (s === undefined) return null;
        r.u8(K.OP_BODY).u8(1).str(s);
      }
    } else if (op[0] === 'form') {
      r.u8(K.OP_FORM);
      if (!writePairs(r, op[1])) return null;
      if (op[2] === null) r.u8(0);
      else r.u8(1).str(op[2]);
    } else return null;
  }
  return r.u8(K.OP_EXEC).str(c.version ?? '1.1').done();
}

// The same case through the JS API: its bytes, or its error.
function viaJsApi(c) {
  try {
    const target = 'uri' in c.target ? URI(c.target.uri) : { path: c.target.path };
    const req = new Request(c.method, target, c.init, { profile: c.profile });
    for (const op of c.ops) {
      if (op[0] === 'set') req.set(op[1], op[2]);
      else if (op[0] === 'add') req.addField(op[1], op[2]);
      else if (op[0] === 'delete') req.delete(op[1]);
      else if (op[0] === 'body') req.body = op[1] === null ? null : rubyString(op[1]);
      else if (op[0] === 'form') req.setFormData(op[1], op[2] === null ? undefined : op[2]);
    }
    return { bytes: Buffer.from(req.toBytes(c.version ?? '1.1')).toString('base64') };
  } catch (e) {
    return { error: { class: e.rubyClass, message: e.message } };
  }
}

describe('requests: nh_wasm_request', () => {
  test('the recorded MRI cases give MRI\'s bytes or its exception, and the JS API the same', () => {
    const h = new Host();
    let n = 0;
    const diffs = [];
    for (const { c, e } of requestCases) {
      const rec = requestRecord(c);
      if (!rec || !e || !e.result) continue;
      const res = h.call('nh_wasm_request', rec);
      let got;
      if (res.rc === K.OK) got = { bytes: Buffer.from(res.out).toString('base64') };
      else {
        assert.equal(res.rc, K.ERROR, c.id);
        got = { error: errorOf(res) };
      }
      const want = e.result.error ? { error: { class: e.result.error.class, message: e.result.error.message } } : { bytes: e.result.bytes };
      if (!isDeepStrictEqual(got, want)) diffs.push(`${c.id}: want ${JSON.stringify(want)} got ${JSON.stringify(got)}`);
      const js = viaJsApi(c);
      if (!isDeepStrictEqual(js, got)) diffs.push(`${c.id}: the JS API gives ${JSON.stringify(js)}, the module ${JSON.stringify(got)}`);
      n++;
    }
    h.free();
    assert.ok(n >= 600, `${n} cases`);
    assert.deepEqual(diffs, []);
  });

  test('the example of the page gives the output the page shows', () => {
    const block = docText.match(/An example: [\s\S]*?```\n([\s\S]*?)```\n\nand its output is `([^`]*)`/);
    assert.ok(block, 'the example is in docs/abi.md');
    const r = new Rec();
    for (const line of block[1].trim().split('\n')) {
      const bytes = line.match(/^((?:[0-9a-f]{2}|"[^"]*")(?: (?:[0-9a-f]{2}|"[^"]*"))*)/)[1];
      for (const t of bytes.match(/[0-9a-f]{2}|"[^"]*"/g)) t[0] === '"' ? r.raw(t.slice(1, -1)) : r.u8(parseInt(t, 16));
    }
    const h = new Host();
    const res = h.call('nh_wasm_request', r.done());
    ok(res);
    assert.equal(utf8.decode(res.out), block[2].replace(/\\r/g, '\r').replace(/\\n/g, '\n'));
    assert.deepEqual(res.out, new Request('GET', URI('http://example.com/')).toBytes('1.1'));
    h.free();
  });

  test('NH_OP_END, NH_OP_GET and NH_OP_DUMP give the layouts the page gives', () => {
    const h = new Host();
    const head = () =>
      new Rec().u8(0).u8(1).str('GET').u8(1).str('http://example.com/a?b').u32(1).str('X-A').u8(1).str('1')
        .u8(K.OP_ADD).str('x-a').u32(2).str('2').str('3');
    let res = h.call('nh_wasm_request', head().u8(K.OP_END).done());
    ok(res);
    assert.equal(res.out[0], 1, 'decode_content');
    assert.equal(utf8.decode(res.out.subarray(1)), '/a?b');
    res = h.call('nh_wasm_request', head().u8(K.OP_GET).str('X-a').done());
    ok(res);
    assert.equal(res.out[0], 1);
    assert.equal(utf8.decode(res.out.subarray(1)), '1, 2, 3');
    res = h.call('nh_wasm_request', head().u8(K.OP_GET).str('x-none').done());
    ok(res);
    assert.deepEqual([...res.out], [0]);
    res = h.call('nh_wasm_request', head().u8(K.OP_DUMP).done());
    ok(res);
    const r = new Reader(res.out);
    const fields = Array.from({ length: r.u32() }, () => [utf8.decode(r.str()), Array.from({ length: r.u32() }, () => utf8.decode(r.str()))]);
    assert.deepEqual(fields, [
      ['x-a', ['1', '2', '3']],
      ['accept-encoding', ['gzip;q=1.0,deflate;q=0.6,identity;q=0.3']],
      ['accept', ['*/*']],
      ['user-agent', ['Ruby']],
      ['host', ['example.com']],
    ]);
    assert.equal(r.p, res.out.length);
    h.free();
  });

  test('a record cut short anywhere, or with an unknown operation, is NH_E_TYPE "malformed request record"', () => {
    const h = new Host();
    const full = new Rec().u8(0).u8(1).str('POST').u8(0).str('/p').u32(1).str('a').u8(1).str('b')
      .u8(K.OP_SET).str('x').u32(1).str('y').u8(K.OP_BODY).u8(1).str('body').u8(K.OP_EXEC).str('1.1').done();
    ok(h.call('nh_wasm_request', full));
    for (let n = 0; n < full.length; n++) {
      const res = h.call('nh_wasm_request', full.subarray(0, n));
      assert.equal(res.rc, K.ERROR, `cut at ${n}`);
      assert.equal(res.cls, K.E_TYPE, `cut at ${n}`);
      assert.equal(utf8.decode(res.out), 'malformed request record');
    }
    const bad = new Rec().u8(0).u8(1).str('GET').u8(0).str('/').u32(ALL_ONES).u8(99).done();
    assert.deepEqual(errorOf(h.call('nh_wasm_request', bad)), { class: 'TypeError', message: 'malformed request record' });
    h.free();
  });

  test('Ruby\'s exceptions come with their class: CR/LF in a value, an invalid URI', () => {
    const h = new Host();
    let res = h.call('nh_wasm_request', new Rec().u8(0).u8(1).str('GET').u8(0).str('/').u32(ALL_ONES).u8(K.OP_SET).str('x').u32(1).str('a\r\nb').u8(K.OP_EXEC).str('1.1').done());
    assert.equal(res.rc, K.ERROR);
    assert.equal(res.cls, K.E_ARGUMENT);
    assert.equal(utf8.decode(res.out), 'header field value cannot include CR/LF');
    res = h.call('nh_wasm_request', new Rec().u8(0).u8(1).str('GET').u8(1).str('http://exa mple/').u32(ALL_ONES).u8(K.OP_EXEC).str('1.1').done());
    assert.equal(res.rc, K.ERROR);
    assert.equal(res.cls, K.E_URI_INVALID);
    assert.match(utf8.decode(res.out), /bad URI/);
    h.free();
  });
});

describe('forms and header names', () => {
  const forms = load('form_').concat(load('capitalize'));
  test('encode_www_form, the components, decode_www_form and capitalize give MRI\'s results', () => {
    const h = new Host();
    const diffs = [];
    const count = {};
    for (const { c, e } of forms) {
      const want = e.result;
      const p = PROFILE[c.profile];
      let res;
      let got;
      if (c.op === 'encode_www_form') {
        const r = new Rec();
        if (!writePairs(r, c.pairs)) continue;
        res = h.call('nh_wasm_encode_www_form', r.done());
        if (res.rc === K.OK) {
          got = { string: utf8.decode(res.out) };
          if (encodeWwwForm(c.pairs, { profile: c.profile }) !== got.string) diffs.push(`${c.id}: the JS API differs`);
        }
      } else if (c.op === 'encode_www_form_component') {
        const s = rubyString(c.str);
        if (s === undefined) continue;
        res = h.call('nh_wasm_encode_www_form_component', bytesOf(s));
        if (res.rc === K.OK) got = { string: utf8.decode(res.out) };
      } else if (c.op === 'decode_www_form_component') {
        res = h.call('nh_wasm_decode_www_form_component', enc.encode(c.str));
        if (res.rc === K.OK) got = { base64: Buffer.from(res.out).toString('base64') };
      } else if (c.op === 'decode_www_form') {
        res = h.call('nh_wasm_decode_www_form', new Rec().str(c.str).str(c.separator ?? '&').done());
        if (res.rc === K.OK) {
          const t = textTable(res.out);
          got = { pairs: Array.from({ length: t.length / 2 }, (_, i) => [t[2 * i], t[2 * i + 1]]) };
        }
      } else if (c.op === 'capitalize') {
        res = h.call('nh_wasm_capitalize', enc.encode(c.name), p);
        if (res.rc === K.OK) got = { string: utf8.decode(res.out) };
      } else if (c.op === 'each_capitalized') {
        const r = new Rec().u32(c.fields.length);
        let skip = false;
        for (const [k, v] of c.fields) {
          const vs = fieldValues(v);
          if (!vs || typeof k !== 'string') skip = true;
          else {
            r.str(k).u32(vs.length);
            for (const s of vs) r.str(s);
          }
        }
        if (skip) continue;
        res = h.call('nh_wasm_each_capitalized', r.done(), p);
        if (res.rc === K.OK) {
          const t = textTable(res.out);
          got = { pairs: Array.from({ length: t.length / 2 }, (_, i) => [t[2 * i], t[2 * i + 1]]) };
        }
      } else continue;
      if (res.rc !== K.OK) {
        assert.equal(res.rc, K.ERROR, c.id);
        got = { error: errorOf(res) };
      }
      count[c.op] = (count[c.op] || 0) + 1;
      if (!isDeepStrictEqual(got, want)) diffs.push(`${c.id}: want ${JSON.stringify(want)} got ${JSON.stringify(got)}`);
    }
    h.free();
    for (const op of ['encode_www_form', 'encode_www_form_component', 'decode_www_form', 'decode_www_form_component', 'capitalize', 'each_capitalized'])
      assert.ok(count[op] >= 20, `${op}: ${count[op]} cases`);
    assert.deepEqual(diffs, []);
  });

  test('bad input: malformed records are NH_E_TYPE, a bad %-escape NH_E_ARGUMENT', () => {
    const h = new Host();
    const form = new Rec().u32(2).str('a').u8(1).str('1').str('b').u8(2).u32(2).u8(1).str('x').u8(0).done();
    const res = h.call('nh_wasm_encode_www_form', form);
    ok(res);
    assert.equal(utf8.decode(res.out), 'a=1&b=x&'); // MRI: a nil element leaves an empty part
    for (let n = 1; n < form.length; n++)
      assert.deepEqual(errorOf(h.call('nh_wasm_encode_www_form', form.subarray(0, n))), { class: 'TypeError', message: 'malformed form record' }, `cut at ${n}`);
    assert.deepEqual(errorOf(h.call('nh_wasm_decode_www_form', new Rec().str('a=1').done())), { class: 'TypeError', message: 'malformed form record' });
    const fields = new Rec().u32(1).str('a').u32(1).str('v').done();
    for (let n = 0; n < fields.length; n++)
      assert.deepEqual(errorOf(h.call('nh_wasm_each_capitalized', fields.subarray(0, n), 0)), { class: 'TypeError', message: 'malformed header record' }, `cut at ${n}`);
    const bad = h.call('nh_wasm_decode_www_form_component', enc.encode('a%2'));
    assert.equal(bad.rc, K.ERROR);
    assert.equal(bad.cls, K.E_ARGUMENT);
    assert.equal(utf8.decode(bad.out), 'invalid %-encoding (a%2)');
    h.free();
  });

  test('a text table counts UTF-16 units: characters past U+FFFF count two', () => {
    const h = new Host();
    const res = h.call('nh_wasm_decode_www_form', new Rec().str('%F0%9F%98%80=%C3%A9&b=').str('&').done());
    ok(res);
    const r = new Reader(res.out);
    assert.deepEqual([r.u32(), r.u32(), r.u32(), r.u32(), r.u32()], [4, 2, 1, 1, 0]);
    assert.deepEqual(textTable(res.out), ['😀', 'é', 'b', '']);
    h.free();
  });
});

// ---- responses ----

function config({ profile = 0, bodyAllowed = true, decode = false, skipInterim = false, strict = false, maxHeaderBytes = K.MAX_HEADER_BYTES, maxFields = K.MAX_HEADER_FIELDS, maxBody = Infinity, maxInflated = Infinity, offset = Infinity } = {}) {
  const r = new Rec()
    .u8(profile)
    .u8(bodyAllowed ? 1 : 0)
    .u8(decode ? 1 : 0)
    .u8((skipInterim ? K.CFG_SKIP_INTERIM : 0) | (strict ? K.CFG_STRICT : 0));
  for (const v of [maxHeaderBytes, maxFields, maxBody, maxInflated, offset]) r.u64(v);
  const b = r.done();
  assert.equal(b.length, K.CONFIG_LEN);
  return b;
}

// The events of the last call, read in place (body pieces copied out).
function events(h, res) {
  const u8 = h.u8();
  const r = new Reader(u8, res.at);
  const inBase = r.u32();
  const dataBase = r.u32();
  const out = [];
  for (;;) {
    const t = r.u8();
    if (t === 0) break;
    if (t === K.EV_BODY) {
      const src = r.u8();
      const off = r.u32();
      const len = r.u32();
      out.push({ t, body: u8.slice((src ? dataBase : inBase) + off, (src ? dataBase : inBase) + off + len) });
    } else if (t === K.EV_END) out.push({ t, at: inBase + r.u32(), inBase });
    else if (t === K.EV_LENGTH) out.push({ t, length: r.u32() + r.u32() * 2 ** 32 });
    else out.push({ t, block: r.str().slice() });
  }
  assert.equal(r.p, res.at + res.out.length, 'the events fill the output');
  return out;
}

// A head block.
function headBlock(b) {
  const r = new Reader(b);
  const flags = r.u8();
  const text = () => utf8.decode(r.str());
  const head = { flags, class: text(), version: r.str(), code: r.str(), message: r.str(), fields: [] };
  for (let i = 0, n = r.u32(); i < n; i++) {
    const id = r.u8();
    const name = r.str();
    if (id) assert.equal(utf8.decode(name), schema.commonNames[id - 1], 'a name id is its common name');
    head.fields.push([name, Array.from({ length: r.u32() }, () => r.str())]);
  }
  assert.equal(r.p, b.length);
  return head;
}

// Strings as the recorded results hold them: text when UTF-8, else base64;
// past 2048 characters, a digest.
function str(b) {
  if (b === null) return null;
  let s;
  try {
    s = utf8.decode(b);
  } catch {
    s = null;
  }
  const long = s === null ? Buffer.from(b).toString('base64').length > 2048 : s.length > 2048;
  if (long) return { sha256: createHash('sha256').update(b).digest('hex'), length: b.length };
  return s === null ? { b64: Buffer.from(b).toString('base64') } : s;
}

function capitalized(h, profile, fields) {
  const r = new Rec().u8(profile).u8(K.HQ_EACH_CAPITALIZED).str('').u32(fields.length);
  for (const [k, vs] of fields) {
    r.str(k).u32(vs.length);
    for (const v of vs) r.str(v);
  }
  const res = h.call('nh_wasm_header_query', r.done());
  ok(res);
  const q = new Reader(res.out);
  assert.equal(q.u8(), 1);
  const parts = Array.from({ length: q.u32() }, () => q.str().slice());
  return Array.from({ length: parts.length / 2 }, (_, i) => [str(parts[2 * i]), str(parts[2 * i + 1])]);
}

function responseResult(h, profile, head, final, body) {
  const f = final || head;
  return {
    class: head.class,
    code: str(head.code),
    message: head.flags & K.HEAD_MESSAGE ? str(head.message) : null,
    httpVersion: head.flags & K.HEAD_VERSION ? str(head.version) : null,
    headers: f.fields.map(([k, vs]) => [str(k), vs.map(str)]),
    capitalized: capitalized(h, profile, f.fields),
    body: head.flags & K.HEAD_BODY ? str(body) : null,
  };
}

const concat = (list) => Buffer.concat(list.map((b) => Buffer.from(b)));

// Adds a call's events to a message's state { head, final, body, end } (end:
// where the next message starts, from the start of the bytes of that call).
function message(evs, m = { head: null, final: null, body: [], end: -1 }) {
  for (const ev of evs) {
    if (ev.t === K.EV_HEAD) {
      m.head = headBlock(ev.block);
      m.body = [];
    } else if (ev.t === K.EV_FINAL) m.final = headBlock(ev.block);
    else if (ev.t === K.EV_BODY) m.body.push(ev.body);
    else if (ev.t === K.EV_END) m.end = ev.at - ev.inBase;
  }
  return m;
}

// (a case's text is its bytes as Latin-1 characters)
const caseBytes = (c) => Buffer.from(c.text !== undefined ? c.text : c.base64, c.text !== undefined ? 'latin1' : 'base64');
const caseConfig = (c, profile, more = {}) =>
  config({ profile, bodyAllowed: (c.method || 'GET') !== 'HEAD', decode: !!c.decode, skipInterim: !!c.skipInterim, ...more });

// A case through nh_wasm_resp_parse, message after message.
function oneShot(h, c, profile) {
  let bytes = caseBytes(c);
  const total = bytes.length;
  const out = { responses: [] };
  for (let i = 0; i < (c.messages || 1); i++) {
    const res = h.call('nh_wasm_resp_parse', concat([caseConfig(c, profile, { offset: total - bytes.length }), bytes]));
    if (res.rc !== K.OK) {
      assert.equal(res.rc, K.ERROR);
      out.error = { ...errorOf(res), message: str(res.out), index: i };
      return out;
    }
    const m = message(events(h, res));
    assert.ok(m.head && m.end >= 0, 'a one-shot parse ends the message');
    out.responses.push(responseResult(h, profile, m.head, m.final, concat(m.body)));
    bytes = bytes.subarray(m.end);
  }
  out.rest = str(bytes);
  return out;
}

// A case through one parser of nh_wasm_resp_new fed `step` bytes a call.
function incremental(h, c, profile, step) {
  const bytes = caseBytes(c);
  let res = h.call('nh_wasm_resp_new', caseConfig(c, profile, { offset: 0 }));
  ok(res);
  const parser = new Reader(res.out).u32();
  const out = { responses: [] };
  let at = 0; // the next byte to feed
  let m = message([]);
  try {
    for (let i = 0; i < (c.messages || 1); ) {
      const piece = bytes.subarray(at, at + step);
      const eof = at + piece.length >= bytes.length ? 1 : 0;
      res = h.call('nh_wasm_resp_feed', piece, parser, eof);
      if (res.rc !== K.OK) {
        assert.equal(res.rc, K.ERROR);
        out.error = { ...errorOf(res), message: str(res.out), index: i };
        // the parser repeats the error until reset
        assert.deepEqual(h.call('nh_wasm_resp_feed', new Uint8Array(0), parser, 1).out, res.out);
        return out;
      }
      message(events(h, res), m);
      if (m.end < 0) {
        assert.ok(!eof, 'the stream ended without an end');
        at += piece.length;
        continue;
      }
      out.responses.push(responseResult(h, profile, m.head, m.final, concat(m.body)));
      at += m.end;
      m = message([]);
      i++;
      ok(h.call('nh_wasm_resp_reset', caseConfig(c, profile), parser));
    }
    out.rest = str(bytes.subarray(at));
    return out;
  } finally {
    ok(h.call('nh_wasm_resp_free', new Uint8Array(0), parser));
  }
}

describe('responses', () => {
  const cases = load('response_');
  test('the recorded MRI cases, parsed at once and fed in pieces, give MRI\'s responses or its exception', () => {
    const h = new Host();
    const diffs = [];
    let n = 0;
    for (const { c, e } of cases) {
      for (const [profile, want] of [
        [0, e.result],
        [1, e.result34],
      ]) {
        if (!want) continue;
        n++;
        const got = oneShot(h, c, profile);
        if (!isDeepStrictEqual(got, want)) diffs.push(`${c.id}@${profile}: want ${JSON.stringify(want).slice(0, 400)}\n  got ${JSON.stringify(got).slice(0, 400)}`);
        for (const step of [1, 7, 1 << 20]) {
          const inc = incremental(h, c, profile, step);
          if (!isDeepStrictEqual(inc, want)) diffs.push(`${c.id}@${profile} fed ${step} a call: want ${JSON.stringify(want).slice(0, 400)}\n  got ${JSON.stringify(inc).slice(0, 400)}`);
        }
      }
    }
    h.free();
    assert.ok(n >= 900, `${n} comparisons`);
    assert.deepEqual(diffs.slice(0, 10), []);
  });

  test('bad input: a bad status line is NH_E_BAD_RESPONSE, a short config NH_E_TYPE, a passed bound NH_E_LIMIT', () => {
    const h = new Host();
    let res = h.call('nh_wasm_resp_parse', concat([config(), enc.encode('HTTP/1.1 abc\r\n\r\n')]));
    assert.equal(res.rc, K.ERROR);
    assert.equal(res.cls, K.E_BAD_RESPONSE);
    assert.equal(utf8.decode(res.out), 'wrong status line: "HTTP/1.1 abc"');
    for (let n = 0; n < K.CONFIG_LEN; n++) {
      assert.deepEqual(errorOf(h.call('nh_wasm_resp_parse', config().subarray(0, n))), { class: 'TypeError', message: 'malformed response-parser record' }, `cut at ${n}`);
      assert.deepEqual(errorOf(h.call('nh_wasm_resp_new', config().subarray(0, n))), { class: 'TypeError', message: 'malformed response-parser record' }, `cut at ${n}`);
    }
    res = h.call('nh_wasm_resp_parse', concat([config({ maxHeaderBytes: 10 }), enc.encode('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')]));
    assert.equal(res.rc, K.ERROR);
    assert.equal(res.cls, K.E_LIMIT);
    res = h.call('nh_wasm_resp_parse', concat([config({ maxBody: 2 }), enc.encode('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc')]));
    assert.equal(res.cls, K.E_LIMIT);
    const q = new Rec().u8(0).u8(K.HQ_CONTENT_LENGTH).str('').u32(1).str('content-length').u32(1).str('12').done();
    res = h.call('nh_wasm_header_query', q);
    ok(res);
    assert.deepEqual([...res.out], [...new Rec().u8(1).u32(1).str('12').done()]);
    for (let n = 0; n < q.length; n++)
      assert.deepEqual(errorOf(h.call('nh_wasm_header_query', q.subarray(0, n))), { class: 'TypeError', message: 'malformed header query record' }, `cut at ${n}`);
    res = h.call('nh_wasm_header_query', new Rec().u8(0).u8(K.HQ_CONTENT_LENGTH).str('').u32(1).str('content-length').u32(1).str('x').done());
    assert.deepEqual(errorOf(res), { class: 'Net::HTTPHeaderSyntaxError', message: 'wrong Content-Length format' });
    h.free();
  });

  test('a decoded body comes from the parser\'s data, and a final head without content-encoding follows it', () => {
    const h = new Host();
    const gz = Buffer.from('H4sIAAAAAAAAA8tIzcnJVyjPL8pJAQCFEUoNCwAAAA==', 'base64'); // "hello world"
    const res = h.call('nh_wasm_resp_parse', concat([config({ decode: true }), enc.encode(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`), gz]));
    ok(res);
    const m = message(events(h, res));
    assert.equal(utf8.decode(concat(m.body)), 'hello world');
    assert.ok(m.head.flags & K.HEAD_INFLATE);
    assert.deepEqual(m.head.fields.map(([k]) => utf8.decode(k)), ['content-encoding', 'content-length']);
    assert.deepEqual(m.final.fields.map(([k, v]) => [utf8.decode(k), v.map((x) => utf8.decode(x))]), [['content-length', ['11']]]);
    h.free();
  });
});

describe('the ruby.wasm bridge\'s calls', () => {
  test('nh_wasm_write_header: the per-field and the flat record', () => {
    const h = new Host();
    let res = h.call('nh_wasm_write_header', enc.encode('GET\n/x\n1.1\nhost\n1\na\nx-a\n2\n1\n2\nx-e\n0\n'), 0, schema.profiles.PROFILE_40[0]);
    ok(res);
    assert.equal(utf8.decode(res.out), 'GET /x HTTP/1.1\r\nHost: a\r\nX-A: 1, 2\r\nX-E: \r\n\r\n');
    res = h.call('nh_wasm_write_header', enc.encode('PUT\n/\n1.0\nhost\na\ncontent-length\n3\n'), sendFlags.SEND_FLAT[0], schema.profiles.PROFILE_34[0]);
    ok(res);
    assert.equal(utf8.decode(res.out), 'PUT / HTTP/1.0\r\nHost: a\r\nContent-Length: 3\r\n\r\n');
    assert.deepEqual(errorOf(h.call('nh_wasm_write_header', enc.encode('GET\n/x'), 0, 0)), { class: 'TypeError', message: 'malformed request record' });
    h.free();
  });

  test('nh_wasm_resp_feed_bridge: head records, and the length of a body still to come', () => {
    const h = new Host();
    let res = h.call('nh_wasm_resp_new', config({ offset: 0 }));
    const parser = new Reader(res.out).u32();
    const head = enc.encode('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nSet-Cookie: a\r\nSet-Cookie: b\r\n\r\n');
    res = h.call('nh_wasm_resp_feed_bridge', head, parser, 0);
    ok(res);
    const evs = events(h, res);
    assert.deepEqual(evs.map((e) => e.t), [K.EV_HEAD, K.EV_LENGTH]);
    assert.equal(evs[0].block[0], K.HEAD_VERSION | K.HEAD_MESSAGE);
    assert.equal(utf8.decode(evs[0].block.subarray(1)), '1.1\n200\nOK\n2\ncontent-length\nset-cookie\n3\na\n1\nb');
    assert.equal(evs[1].length, 3);
    res = h.call('nh_wasm_resp_feed_bridge', enc.encode('abc'), parser, 0);
    ok(res);
    const rest = events(h, res);
    assert.deepEqual(rest.map((e) => e.t), [K.EV_BODY, K.EV_END]);
    assert.equal(utf8.decode(rest[0].body), 'abc');
    ok(h.call('nh_wasm_resp_free', new Uint8Array(0), parser));
    h.free();
  });
});

describe('memory and contexts', () => {
  test('nh_alloc gives aligned blocks, 0 when the memory cannot grow; nh_ctx_input 0 likewise', () => {
    const x = instantiate();
    const blocks = [0, 1, 3, 17, 100, 70000].map((n) => x.nh_alloc(n) >>> 0);
    for (const p of blocks) {
      assert.ok(p > 0);
      assert.equal(p % 16, 0);
    }
    assert.equal(new Set(blocks).size, blocks.length);
    new Uint8Array(x.memory.buffer).fill(7, blocks[5], blocks[5] + 70000);
    for (const p of blocks) x.nh_free(p);
    x.nh_free(0);
    assert.equal(x.nh_alloc(0xfffffff0) >>> 0, 0);
    const h = new Host(x);
    assert.equal(x.nh_ctx_input(h.ctx, 0xfffffff0) >>> 0, 0);
    ok(h.call('nh_wasm_encode_www_form_component', enc.encode('a b')));
    h.free();
  });

  test('the input buffer stays put between calls; nh_ctx_trim gives memory back and asks for it again', () => {
    const h = new Host();
    const rec = enc.encode('a b');
    const p = h.x.nh_ctx_input(h.ctx, rec.length) >>> 0;
    h.u8().set(rec, p);
    assert.equal(utf8.decode(h.callAgain('nh_wasm_encode_www_form_component', rec.length).out), 'a+b');
    assert.equal(utf8.decode(h.callAgain('nh_wasm_encode_www_form_component', rec.length).out), 'a+b', 'the record is still there');
    assert.equal(h.x.nh_ctx_input(h.ctx, 2) >>> 0, p, 'a smaller record fits in the same buffer');
    // a large message, then trim
    const big = new Rec().u8(0).u8(1).str('POST').u8(0).str('/').u32(ALL_ONES).u8(K.OP_BODY).u8(1).str('x'.repeat(4 << 20)).u8(K.OP_EXEC).str('1.1').done();
    const res = h.call('nh_wasm_request', big);
    ok(res);
    assert.ok(res.out.length > 4 << 20);
    const grown = h.x.memory.buffer.byteLength;
    h.x.nh_ctx_trim(h.ctx, 4096);
    ok(h.call('nh_wasm_request', big));
    assert.equal(h.x.memory.buffer.byteLength, grown, 'the freed memory is used again');
    h.x.nh_ctx_trim(h.ctx, 4096);
    const small = h.call('nh_wasm_encode_www_form_component', enc.encode('~'));
    assert.equal(utf8.decode(small.out), '%7E');
    h.free();
  });

  test('contexts and parsers made and freed in a loop keep the memory the same size', () => {
    const x = instantiate();
    const round = () => {
      const h = new Host(x);
      ok(h.call('nh_wasm_request', new Rec().u8(0).u8(1).str('GET').u8(1).str('http://example.com/').u32(ALL_ONES).u8(K.OP_EXEC).str('1.1').done()));
      ok(h.call('nh_wasm_resp_parse', concat([config(), enc.encode('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi')])));
      const res = h.call('nh_wasm_resp_new', config());
      const parser = new Reader(res.out).u32();
      ok(h.call('nh_wasm_resp_feed', enc.encode('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n'), parser, 1));
      ok(h.call('nh_wasm_resp_free', new Uint8Array(0), parser));
      h.free();
    };
    for (let i = 0; i < 50; i++) round();
    const size = x.memory.buffer.byteLength;
    for (let i = 0; i < 2000; i++) round();
    assert.equal(x.memory.buffer.byteLength, size);
  });
});

describe('docs/abi.md', () => {
  test('its generated parts are current (node tools/gen-abi-doc.mjs --check)', () => {
    execFileSync(process.execPath, [fileURLToPath(new URL('tools/gen-abi-doc.mjs', root)), '--check'], { stdio: 'pipe' });
  });

  test('a stale table, a missing part or an export without a heading is caught', () => {
    assert.equal(render(docText, wasm), docText);
    const stale = docText.replace('| `NH_OK` | 0 |', '| `NH_OK` | 1 |');
    assert.notEqual(stale, docText);
    assert.equal(render(stale, wasm), docText);
    assert.throws(() => render(docText.replace('<!-- gen:events -->', ''), wasm), /gen:events/);
    assert.throws(() => render(docText.replace('### `nh_wasm_resp_trim`', '### trimming'), wasm), /no heading for the export nh_wasm_resp_trim/);
  });
});
