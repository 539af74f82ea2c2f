// Responses: parseResponse and ResponseParser against MRI.
//
//  1. every case in tests/fixtures/cases/response_*.json, both builds, both profiles,
//     against the recorded MRI results (.expected.json);
//  2. the same cases run live through MRI (ruby.wasm 4.0 and 3.4, and the
//     native ruby for content decoding), which must still give the fixtures;
//  3. seeded random responses (NETHTTP_RANDOM_CASES, default 300) against
//     ruby.wasm 4.0 live, and random compressed bodies against native MRI;
//  4. the API itself: Response's accessors, limits, errors, options.
//
// The oracles for content decoding: ruby.wasm 4.0 / 3.4 run it only while
// the decoded body stays under 1 KiB (past that, its zlib traps: see
// tests/support/oracle/response.mjs), so every decoding case also runs in the native
// ruby (3.1) loaded with ruby.wasm 4.0's / 3.4's own net/http sources
// ('native-4.0', 'native-3.4'), and in the native ruby with its own net-http
// 0.2.0. Known difference, checked explicitly below: 0.2.0 leaves
// Content-Length as it came after decoding a body, 0.6.0 and 0.9.1 rewrite
// it to the decoded size (when Inflater#finish succeeds).
//
// NETHTTP_SKIP_LIVE=1 skips the live MRI runs (fixtures only).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { builds } from '../support/builds.mjs';
import { bindResponse } from '../../js/response-parser.mjs';
import { NetHttpError } from '../../js/errors.mjs';
import { COMMON_NAMES } from '../../js/schema.mjs';
import {
  loadResponseCases,
  oursOneShot,
  compact,
  withoutContentLength,
  runResponseCases,
  runnerCase,
  randomResponseCases,
  randomDecodeCases,
  shutdownResponseVMs,
  haveNativeRuby,
} from '../support/oracle/response.mjs';

const apis = builds.map((b) => ({ name: b.name, api: { ...bindResponse(b.api.codec), NetHttpError, codec: b.api.codec } }));
const files = loadResponseCases();
const allCases = files.flatMap((f) => f.cases);
const live = process.env.NETHTTP_SKIP_LIVE !== '1';
const RANDOM = Number(process.env.NETHTTP_RANDOM_CASES || 300);
const native = haveNativeRuby();

after(() => shutdownResponseVMs());

function show(diffs) {
  return diffs
    .slice(0, 5)
    .map((d) => `${d.id} [${d.what}]\n  want ${JSON.stringify(d.want).slice(0, 700)}\n  got  ${JSON.stringify(d.got).slice(0, 700)}`)
    .join('\n');
}

// The MRI results a case is checked against, per profile.
function wants(entry) {
  const w = { '4.0': [], '3.4': [] };
  if (entry.result) w['4.0'].push(['ruby.wasm 4.0', entry.result]);
  if (entry.result34) w['3.4'].push(['ruby.wasm 3.4', entry.result34]);
  if (entry.native40) w['4.0'].push(['native ruby + 4.0 net/http', entry.native40]);
  if (entry.native34) w['3.4'].push(['native ruby + 3.4 net/http', entry.native34]);
  return w;
}

describe('response fixtures', () => {
  test('there are at least 300 cases, all recorded', () => {
    assert.ok(allCases.length >= 300, `${allCases.length} cases`);
    for (const f of files) {
      assert.ok(f.expected, `${f.file} has no .expected.json: run node tests/support/oracle/response.mjs record`);
      for (const c of f.cases) {
        const e = f.expected.get(c.id);
        assert.ok(e, `${c.id} not recorded`);
        for (const r of [e.result, e.result34, e.native40, e.native34, e.native])
          assert.ok(!r || r.oracleBroken === undefined, `${c.id}: MRI broke: ${r && r.oracleBroken}`);
      }
    }
  });

  for (const { name, api } of apis) {
    for (const f of files) {
      test(`${name}: ${f.file} matches MRI (both profiles)`, () => {
        const diffs = [];
        let n = 0;
        for (const c of f.cases) {
          const w = wants(f.expected.get(c.id));
          for (const profile of ['4.0', '3.4']) {
            const got = compact(oursOneShot(api, c, profile));
            for (const [what, want] of w[profile]) {
              n++;
              if (!isDeepStrictEqual(got, want)) diffs.push({ id: c.id, what: `${profile} vs ${what}`, want, got });
            }
          }
        }
        assert.ok(n > 0);
        assert.equal(diffs.length, 0, `${diffs.length} of ${n} comparisons differ:\n${show(diffs)}`);
      });
    }
  }

  test('native net-http 0.2.0 differs from 0.6.0/0.9.1 only in the decoded Content-Length', () => {
    let n = 0;
    for (const f of files) {
      for (const c of f.cases) {
        const e = f.expected.get(c.id);
        if (!e.native) continue;
        n++;
        assert.deepEqual(withoutContentLength(e.native), withoutContentLength(e.native40), c.id);
        assert.deepEqual(e.native40, e.native34, c.id);
      }
    }
    assert.ok(n >= 40, `${n} decoding cases`);
  });
});

describe('response cases, live MRI', { skip: !live && 'NETHTTP_SKIP_LIVE=1' }, () => {
  const runners = (c) => (c.oracle === 'native' ? [] : ['4.0', '3.4']);
  for (const [version, key] of [
    ['4.0', 'result'],
    ['3.4', 'result34'],
  ]) {
    test(`ruby.wasm ${version} still gives the fixtures`, async () => {
      const cases = allCases.filter((c) => runners(c).includes(version));
      const got = await runResponseCases(version, cases.map(runnerCase));
      const diffs = [];
      cases.forEach((c, i) => {
        const want = files.find((f) => f.cases.includes(c)).expected.get(c.id)[key];
        if (!isDeepStrictEqual(compact(got[i]), want)) diffs.push({ id: c.id, what: version, want, got: compact(got[i]) });
        for (const { name, api } of apis) {
          const ours = oursOneShot(api, c, version);
          if (!isDeepStrictEqual(ours, got[i])) diffs.push({ id: c.id, what: `${name} vs live ${version}`, want: got[i], got: ours });
        }
      });
      assert.equal(diffs.length, 0, `${diffs.length} of ${cases.length} differ:\n${show(diffs)}`);
    });
  }
  for (const [version, key] of [
    ['native-4.0', 'native40'],
    ['native-3.4', 'native34'],
    ['native', 'native'],
  ]) {
    test(`${version} still gives the fixtures`, { skip: !native && 'no native ruby' }, async () => {
      const cases = allCases.filter((c) => c.oracle === 'native' || c.oracle === 'both');
      const got = await runResponseCases(version, cases.map(runnerCase));
      const diffs = [];
      cases.forEach((c, i) => {
        const want = files.find((f) => f.cases.includes(c)).expected.get(c.id)[key];
        if (!isDeepStrictEqual(compact(got[i]), want)) diffs.push({ id: c.id, what: version, want, got: compact(got[i]) });
        if (version === 'native') return; // net-http 0.2.0: see withoutContentLength
        for (const { name, api } of apis) {
          const ours = oursOneShot(api, c, version.slice(7));
          if (!isDeepStrictEqual(ours, got[i])) diffs.push({ id: c.id, what: `${name} vs live ${version}`, want: got[i], got: ours });
        }
      });
      assert.equal(diffs.length, 0, `${diffs.length} of ${cases.length} differ:\n${show(diffs)}`);
    });
  }
});

describe('random responses, live MRI', { skip: !live && 'NETHTTP_SKIP_LIVE=1' }, () => {
  const seed = Number(process.env.NETHTTP_RANDOM_SEED || 20251130);
  test(`${RANDOM} random responses vs ruby.wasm 4.0 (seed ${seed})`, async () => {
    const cases = randomResponseCases(seed, RANDOM);
    const want = await runResponseCases('4.0', cases.map(runnerCase));
    const diffs = [];
    let raised = 0;
    for (const { name, api } of apis) {
      cases.forEach((c, i) => {
        assert.equal(want[i].oracleBroken, undefined, `${c.id}: MRI broke`);
        if (want[i].error) raised++;
        const got = oursOneShot(api, c, '4.0');
        if (!isDeepStrictEqual(got, want[i])) diffs.push({ id: `${name} ${c.id} ${JSON.stringify(c.text ?? c.base64).slice(0, 300)}`, what: '4.0', want: want[i], got });
      });
    }
    assert.equal(diffs.length, 0, `${diffs.length} of ${cases.length * apis.length} differ:\n${show(diffs)}`);
    assert.ok(raised > 0 && raised < cases.length * apis.length, 'a mix of good and bad responses');
  });

  test(`${Math.ceil(RANDOM / 4)} random compressed bodies vs MRI's decoding`, { skip: !native && 'no native ruby' }, async () => {
    const cases = await randomDecodeCases(seed, Math.ceil(RANDOM / 4));
    const nat = await runResponseCases('native-4.0', cases.map(runnerCase));
    const small = cases.map((c, i) => [c, i]).filter(([c]) => c.oracle === 'both');
    const wasm = await runResponseCases('4.0', small.map(([c]) => runnerCase(c)));
    const diffs = [];
    for (const { name, api } of apis) {
      cases.forEach((c, i) => {
        const got = oursOneShot(api, c, '4.0');
        if (!isDeepStrictEqual(got, nat[i])) diffs.push({ id: `${name} ${c.id}`, what: 'native-4.0', want: nat[i], got });
      });
      small.forEach(([c, i], k) => {
        const got = oursOneShot(api, c, '4.0');
        if (!isDeepStrictEqual(got, wasm[k])) diffs.push({ id: `${name} ${c.id}`, what: 'ruby.wasm 4.0', want: wasm[k], got });
      });
    }
    assert.ok(small.length > 0);
    assert.equal(diffs.length, 0, `${diffs.length} differ:\n${show(diffs)}`);
  });
});

// ---------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------

const L = (s) => new Uint8Array(Buffer.from(s, 'latin1'));
const T = (u8) => Buffer.from(u8).toString('latin1');

function raises(fn, rubyClass, message) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'expected an error');
  assert.ok(err instanceof NetHttpError, `${err && err.stack}`);
  assert.equal(err.rubyClass, rubyClass);
  if (message !== undefined) assert.equal(err.message, message);
  return err;
}

for (const { name, api } of apis) {
  describe(`${name}: Response`, () => {
    const res = api.parseResponse(
      L('HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Type: text/plain\r\n2: two\r\nset-cookie: b=2\r\n1: one\r\nX-\u00c3\u00a9: \u00c3\u00a9\r\nContent-Length: 5\r\n\r\nh\u00c3\u00a9\u00ffoNEXT'),
    );

    test('status fields', () => {
      assert.equal(res.httpVersion, '1.1');
      assert.equal(res.code, '200');
      assert.equal(res.status, 200);
      assert.equal(res.message, 'OK');
      assert.equal(res.className, 'Net::HTTPOK');
      assert.equal(res.hasBody, true);
      assert.deepEqual(res.messageBytes, L('OK'));
    });

    test('headers: to_hash in a null-prototype object; headerEntries keeps MRI order', () => {
      const h = res.headers;
      assert.equal(Object.getPrototypeOf(h), null);
      assert.deepEqual(h['set-cookie'], ['a=1', 'b=2']);
      assert.deepEqual(h['x-é'], ['é']);
      // JS lists array-index keys first; MRI's order is in headerEntries()
      assert.deepEqual(Object.keys(h), ['1', '2', 'set-cookie', 'content-type', 'x-é', 'content-length']);
      assert.deepEqual(
        res.headerEntries().map((e) => e[0]),
        ['set-cookie', 'content-type', '2', '1', 'x-é', 'content-length'],
      );
      assert.equal(res.headers, h, 'built once');
    });

    test('get, getFields, has, eachCapitalized', () => {
      assert.equal(res.get('SET-COOKIE'), 'a=1, b=2');
      assert.equal(res.get('nope'), null);
      const f = res.getFields('Set-Cookie');
      assert.deepEqual(f, ['a=1', 'b=2']);
      f.push('x');
      assert.deepEqual(res.getFields('set-cookie'), ['a=1', 'b=2'], 'a fresh array each time');
      assert.equal(res.getFields('nope'), null);
      assert.equal(res.has('content-type'), true);
      assert.equal(res.has('Content-Typ'), false);
      assert.deepEqual(res.eachCapitalized(), [
        ['Set-Cookie', 'a=1, b=2'],
        ['Content-Type', 'text/plain'],
        ['2', 'two'],
        ['1', 'one'],
        ['X-é', 'é'],
        ['Content-Length', '5'],
      ]);
      assert.throws(() => res.get(1), TypeError);
    });

    test('body, bodyText, rest, rawHeaderEntries', () => {
      assert.ok(res.body instanceof Uint8Array);
      assert.deepEqual(res.body, L('h\u00c3\u00a9\u00ffo'));
      assert.equal(res.bodyText(), 'hé\ufffdo');
      assert.deepEqual(res.rest, L('NEXT'));
      const raw = res.rawHeaderEntries();
      assert.deepEqual(raw[4], [L('x-\u00c3\u00a9'), [L('\u00c3\u00a9')]]);
      const j = JSON.parse(JSON.stringify(res));
      assert.equal(j.className, 'Net::HTTPOK');
      assert.equal(j.headers.length, 6);
    });

    test('nil version, nil message, nil body', () => {
      const r = api.parseResponse(L('HTTP 204\r\n\r\nrest'));
      assert.equal(r.httpVersion, null);
      assert.equal(r.message, null);
      assert.equal(r.messageBytes, null);
      assert.equal(r.body, null);
      assert.equal(r.bodyText(), null);
      assert.equal(r.hasBody, false);
      assert.deepEqual(r.rest, L('rest'));
      const e = api.parseResponse(L('HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n'));
      assert.equal(e.message, '');
      assert.deepEqual(e.body, new Uint8Array(0));
    });

    test('input types', () => {
      const s = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhé';
      assert.equal(T(api.parseResponse(s).body), 'h\u00c3');
      const ab = L('HTTP/1.1 200 OK\r\n\r\nab').slice().buffer;
      assert.equal(T(api.parseResponse(ab).body), 'ab');
      assert.equal(T(api.parseResponse(Buffer.from('HTTP/1.1 200 OK\r\n\r\nxy')).body), 'xy');
      assert.throws(() => api.parseResponse(42), TypeError);
    });

    test('common field names (tagged by the module) read as themselves; names that differ from one in a byte do not', () => {
      const names = COMMON_NAMES.slice(1);
      // (the last: the same length, first and last bytes, the same hash slot)
      const near = names.flatMap((n) => [n.slice(0, -1), `${n}s`, `${n.slice(0, -1)}${n.at(-1) === 'x' ? 'y' : 'x'}`, `x${n.slice(1)}`, `${n[0]}${'x'.repeat(n.length - 2)}${n.at(-1)}`]);
      const all = [...new Set([...names, ...near])].filter((n) => n !== 'content-length');
      const lines = all.map((n, i) => `${i % 2 ? n.toUpperCase() : n}: v${i}\r\n`).join('');
      const r = api.parseResponse(L(`HTTP/1.1 200 OK\r\n${lines}Content-Length: 0\r\n\r\n`));
      const keys = [...all, 'content-length'];
      assert.deepEqual(r.headerEntries().map((e) => e[0]), keys);
      assert.deepEqual(r.rawHeaderEntries().map((e) => T(e[0])), keys);
      all.forEach((n, i) => assert.deepEqual(r.headers[n], [`v${i}`], n));
      assert.equal(r.get('X-Request-Id'), `v${all.indexOf('x-request-id')}`);
    });

    test('bodies: a chunked body comes out whole, and later parses leave earlier bodies alone', () => {
      const chunked = (parts) => L(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${parts.map((p) => `${p.length.toString(16)}\r\n${p}\r\n`).join('')}0\r\n\r\n`);
      const first = api.parseResponse(chunked(['abc', 'defg', 'h']));
      const bodies = [];
      for (let i = 0; i < 100; i++) bodies.push(api.parseResponse(chunked([`${i}`.repeat(50), 'x'.repeat(i + 1), 'y'])).body);
      assert.equal(T(first.body), 'abcdefgh');
      bodies.forEach((b, i) => assert.equal(T(b), `${`${i}`.repeat(50)}${'x'.repeat(i + 1)}y`));
      const big = 'z'.repeat(5000);
      const r = api.parseResponse(chunked([big, big]));
      assert.equal(T(r.body), big + big);
      assert.equal(r.body.buffer.byteLength, 10000, 'a large body has its own buffer');
    });

    test('headers is a null-prototype object whose keys are the field names, "__proto__" included', () => {
      const r = api.parseResponse(L('HTTP/1.1 200 OK\r\n__proto__: x\r\nConstructor: y\r\nToString: z\r\nContent-Length: 0\r\n\r\n'));
      const h = r.headers;
      assert.equal(Object.getPrototypeOf(h), null);
      assert.deepEqual(Object.keys(h), ['__proto__', 'constructor', 'tostring', 'content-length']);
      assert.deepEqual(Object.getOwnPropertyDescriptor(h, '__proto__').value, ['x']);
      assert.deepEqual(h.constructor, ['y']);
      assert.equal(r.headers, h);
      assert.deepEqual(r.get('__proto__'), 'x');
    });

    test('requestMethod, responseHasBody', () => {
      const b = L('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi');
      assert.equal(api.parseResponse(b, { requestMethod: 'HEAD' }).body, null);
      assert.deepEqual(api.parseResponse(b, { requestMethod: 'HEAD' }).rest, L('hi'));
      // MRI compares the method literally (reading_body(sock, method != 'HEAD'))
      assert.equal(T(api.parseResponse(b, { requestMethod: 'head' }).body), 'hi');
      assert.equal(api.parseResponse(b, { requestMethod: 'GET', responseHasBody: false }).body, null);
      assert.throws(() => api.parseResponse(b, { requestMethod: 1 }), TypeError);
      assert.throws(() => api.parseResponse(b, { profile: '3.3' }), TypeError);
    });

    test('1xx: returned as is, or skipped with skipInterim', () => {
      const b = L('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx');
      const r = api.parseResponse(b);
      assert.equal(r.className, 'Net::HTTPContinue');
      assert.equal(r.body, null);
      assert.equal(r.interim, undefined);
      const s = api.parseResponse(b, { skipInterim: true });
      assert.equal(s.className, 'Net::HTTPOK');
      assert.equal(T(s.body), 'x');
      assert.deepEqual(s.interim.map((x) => x.code), ['100', '103']);
      assert.equal(s.interim[1].get('link'), '</a>');
      const none = api.parseResponse(L('HTTP/1.1 200 OK\r\n\r\n'), { skipInterim: true });
      assert.deepEqual(none.interim, []);
    });

    test('errors carry the Ruby class, the message and its bytes', () => {
      raises(() => api.parseResponse(L('')), 'EOFError', 'end of file reached');
      raises(() => api.parseResponse(L('HTTP/1.1 2000 OK\r\n\r\n')), 'Net::HTTPBadResponse', 'wrong status line: "HTTP/1.1 2000 OK"');
      raises(() => api.parseResponse(L('HTTP/1.1 200 OK\r\nfoo\r\n\r\n')), 'Net::HTTPBadResponse', 'wrong header line format');
      raises(() => api.parseResponse(L('HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n')), 'ArgumentError', 'header field value cannot include CR/LF');
      raises(() => api.parseResponse(L('HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n')), 'Net::HTTPHeaderSyntaxError', 'wrong Content-Length format');
      raises(() => api.parseResponse(L('HTTP/1.1 200 OK\r\nContent-Range: bytes 5-1/9\r\n\r\n')), 'NoMethodError', "undefined method 'bytesize' for nil");
      const e = raises(() => api.parseResponse(L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\u00ffz\r\n')), 'Net::HTTPBadResponse');
      assert.equal(e.message, 'wrong chunk size line: z\ufffdz');
      assert.deepEqual(e.messageBytes, L('wrong chunk size line: z\u00ffz'));
    });

    test('limits: NetHttpWasm::LimitError', () => {
      const head = `HTTP/1.1 200 OK\r\nX: ${'v'.repeat(100)}\r\n\r\n`;
      assert.equal(api.parseResponse(L(head)).get('x').length, 100);
      raises(() => api.parseResponse(L(head), { maxHeaderBytes: 100 }), 'NetHttpWasm::LimitError', 'the response head exceeds the limit of 100 bytes');
      assert.equal(api.parseResponse(L(head), { maxHeaderBytes: head.length }).code, '200');
      raises(() => api.parseResponse(L(head), { maxHeaderBytes: head.length - 1 }), 'NetHttpWasm::LimitError');
      // the default: 1 MiB of head
      raises(() => api.parseResponse(L(`HTTP/1.1 200 OK\r\nX: ${'v'.repeat(1 << 20)}\r\n\r\n`)), 'NetHttpWasm::LimitError');
      const many = `HTTP/1.1 200 OK\r\n${'X: 1\r\n'.repeat(20)}\r\n`;
      raises(() => api.parseResponse(L(many), { maxHeaderFields: 19 }), 'NetHttpWasm::LimitError', 'more than 19 header fields');
      assert.deepEqual(api.parseResponse(L(many), { maxHeaderFields: 20 }).getFields('x').length, 20);
      const body = L('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789');
      raises(() => api.parseResponse(body, { maxBodyBytes: 9 }), 'NetHttpWasm::LimitError', 'the response body exceeds the limit of 9 bytes');
      assert.equal(api.parseResponse(body, { maxBodyBytes: 10 }).body.length, 10);
      raises(() => api.parseResponse(L(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;${'x'.repeat(60)}\r\n`), { maxHeaderBytes: 50 }), 'NetHttpWasm::LimitError', 'a chunk-size line exceeds the limit of 50 bytes');
      assert.throws(() => api.parseResponse(body, { maxBodyBytes: -1 }), TypeError);
      assert.throws(() => api.parseResponse(body, { maxInflatedBytes: 0 }), TypeError);
    });

    test('decodeContent: gzip made by zlib, content-length rewritten', async () => {
      const zlib = await import('node:zlib');
      const plain = Buffer.from('hello '.repeat(1000));
      const gz = zlib.gzipSync(plain);
      const b = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\nX: 1\r\n\r\n`), gz]);
      const r = api.parseResponse(b, { decodeContent: true });
      assert.equal(Buffer.from(r.body).toString(), plain.toString());
      assert.deepEqual(r.headerEntries(), [['content-length', [String(plain.length)]], ['x', ['1']]]);
      const raw = api.parseResponse(b);
      assert.equal(raw.get('content-encoding'), 'gzip');
      assert.equal(raw.body.length, gz.length);
      raises(() => api.parseResponse(b, { decodeContent: true, maxInflatedBytes: 100 }), 'NetHttpWasm::LimitError');
    });
  });

  describe(`${name}: ResponseParser`, () => {
    test('events: head, body, end with rest; then the next message after reset()', () => {
      const p = new api.ResponseParser();
      let ev = p.feed(L('HTTP/1.1 200 OK\r\nContent-Le'));
      assert.deepEqual(ev, []);
      ev = p.feed(L('ngth: 5\r\n\r\nab'));
      assert.deepEqual(ev.map((e) => e.type), ['head', 'body']);
      const res = ev[0].response;
      assert.equal(res.get('content-length'), '5');
      assert.equal(res.body, undefined);
      assert.equal(T(ev[1].data), 'ab');
      ev = p.feed(L('cdeHTTP/1.1 404 NF\r\n'));
      assert.deepEqual(ev.map((e) => e.type), ['body', 'end']);
      assert.equal(ev[1].response, res);
      assert.equal(T(ev[1].rest), 'HTTP/1.1 404 NF\r\n');
      assert.deepEqual(p.feed(L('Content-Length: 0\r\n')), [], 'kept for the next message');
      assert.equal(T(p.pending), 'HTTP/1.1 404 NF\r\nContent-Length: 0\r\n');
      assert.deepEqual(p.finish(), []);
      p.reset({ requestMethod: 'GET' });
      ev = p.feed(L('\r\n'));
      assert.deepEqual(ev.map((e) => e.type), ['head', 'end']);
      assert.equal(ev[0].response.code, '404');
      assert.equal(ev[1].rest.length, 0);
      p.close();
      p.close();
      assert.throws(() => p.feed(L('x')), /closed/);
    });

    test('decoding a feed larger than one slice: one body event, the next message kept, the same as small feeds', async () => {
      const zlib = await import('node:zlib');
      const plain = Buffer.alloc(60000);
      let x = 2463534242;
      for (let i = 0; i < plain.length; i++) {
        // xorshift32: incompressible, the same every run
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        plain[i] = x & 255;
      }
      const gz = zlib.gzipSync(plain);
      assert.ok(gz.length > 3 * 4096);
      const next = 'HTTP/1.1 204 No Content\r\n\r\n';
      const stream = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`), gz, Buffer.from(next)]);
      const whole = new api.ResponseParser({ decodeContent: true });
      const ev = whole.feed(new Uint8Array(stream));
      assert.deepEqual(ev.map((e) => e.type), ['head', 'body', 'end']);
      assert.deepEqual(Buffer.from(ev[1].data), plain);
      assert.equal(T(ev[2].rest), next);
      assert.equal(T(whole.pending), next);
      assert.equal(ev[2].response.get('content-length'), String(plain.length));
      whole.reset();
      assert.deepEqual(whole.feed(new Uint8Array(0)).map((e) => e.type), ['head', 'end']);
      whole.close();
      // fed 1000 bytes at a time: the same bytes and the same rest
      const small = new api.ResponseParser({ decodeContent: true });
      const parts = [];
      let rest = null;
      for (let i = 0; i < stream.length; i += 1000)
        for (const e of small.feed(new Uint8Array(stream.subarray(i, i + 1000)))) {
          if (e.type === 'body') parts.push(e.data);
          if (e.type === 'end') rest = e.rest;
        }
      assert.deepEqual(Buffer.concat(parts), plain);
      assert.ok(next.startsWith(T(rest)));
      assert.equal(T(small.pending), next);
      small.close();
    });

    test('decodeContent with a body that is not compressed: large feeds are not sliced', () => {
      const c = api.codec;
      const x = c.x;
      let calls = 0;
      c.x = { ...x, nh_wasm_resp_feed: (...a) => (calls++, x.nh_wasm_resp_feed(...a)) };
      try {
        const body = Buffer.alloc(1 << 20, 'p');
        const p = new api.ResponseParser({ decodeContent: true });
        const ev = p.feed(new Uint8Array(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length * 2}\r\n\r\n`), body])));
        assert.deepEqual(ev.map((e) => e.type), ['head', 'body']);
        assert.equal(calls, 2, 'one 4 KiB slice, then the rest at once');
        const ev2 = p.feed(new Uint8Array(body));
        assert.deepEqual(ev2.map((e) => e.type), ['body', 'end']);
        assert.equal(calls, 3, 'the next feed of the same message goes in at once');
        assert.equal(ev[1].data.length + ev2[0].data.length, body.length * 2);
        p.close();
      } finally {
        c.x = x;
      }
    });

    test('read-to-EOF bodies end at finish(); truncation raises at finish()', () => {
      const p = new api.ResponseParser();
      assert.deepEqual(p.feed(L('HTTP/1.0 200 OK\r\n\r\nall of it')).map((e) => e.type), ['head', 'body']);
      assert.deepEqual(p.finish().map((e) => e.type), ['end']);
      p.reset();
      p.feed(L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab'));
      raises(() => p.finish(), 'EOFError', 'end of file reached');
      raises(() => p.feed(L('x')), 'EOFError', 'end of file reached');
      p.reset();
      assert.deepEqual(p.feed(L('HTTP/1.1 204 No Content\r\n\r\n')).map((e) => e.type), ['head', 'end']);
      p.close();
    });

    test('takePending hands the kept bytes over', () => {
      const p = new api.ResponseParser();
      const ev = p.feed(L('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxSOMETHING ELSE'));
      assert.equal(ev[ev.length - 1].type, 'end');
      p.feed(L(' AND MORE'));
      assert.equal(T(p.takePending()), 'SOMETHING ELSE AND MORE');
      assert.equal(p.pending.length, 0);
      p.reset();
      assert.deepEqual(p.feed(L('HTTP/1.1 304 NM\r\n\r\n')).map((e) => e.type), ['head', 'end']);
      p.close();
    });

    test('interim responses under skipInterim', () => {
      const p = new api.ResponseParser({ skipInterim: true });
      const ev = p.feed(L('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx'));
      assert.deepEqual(ev.map((e) => e.type), ['interim', 'head', 'body', 'end']);
      assert.equal(ev[0].response.code, '100');
      p.close();
    });

    test('decoding: the head as read, the fields MRI ends with at end', async () => {
      const zlib = await import('node:zlib');
      const gz = zlib.gzipSync(Buffer.from('hello world'));
      const p = new api.ResponseParser({ decodeContent: true });
      const ev = p.feed(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`), gz.subarray(0, 10)]));
      assert.equal(ev[0].response.get('content-encoding'), 'gzip');
      assert.equal(ev[0].response.get('content-length'), String(gz.length));
      const end = p.feed(gz.subarray(10));
      assert.deepEqual(end.map((e) => e.type), ['body', 'end']);
      assert.equal(T(end[0].data), 'hello world');
      assert.equal(end[1].response, ev[0].response);
      assert.deepEqual(end[1].response.headerEntries(), [['content-length', ['11']]]);
      p.close();
    });

    test('limits apply while feeding', () => {
      const p = new api.ResponseParser({ maxHeaderBytes: 64 });
      p.feed(L('HTTP/1.1 200 OK\r\n'));
      raises(() => p.feed(L(`X: ${'v'.repeat(60)}`)), 'NetHttpWasm::LimitError');
      p.close();
      const q = new api.ResponseParser({ maxBodyBytes: 4 });
      q.feed(L('HTTP/1.1 200 OK\r\n\r\nabcd'));
      raises(() => q.feed(L('e')), 'NetHttpWasm::LimitError');
      q.close();
    });

    test('a parser that is never closed is freed by the FinalizationRegistry', async () => {
      if (typeof globalThis.gc !== 'function') return; // needs --expose-gc
      for (let i = 0; i < 1000; i++) new api.ResponseParser().feed(L('HTTP/1.1 200 OK\r\n'));
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 10));
    });
  });
}
