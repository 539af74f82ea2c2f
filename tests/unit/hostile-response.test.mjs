// Hostile responses: what the parser does with request-smuggling and
// response-splitting shapes, oversized heads, huge chunk sizes and lengths,
// and decompression bombs, by default (MRI's outcome, recorded from ruby.wasm
// in tests/fixtures/cases/response_hostile.expected.json) and in strict mode (RFC 9112).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync, deflateSync } from 'node:zlib';
import { builds, freshApi } from '../support/builds.mjs';
import { loadResponseCases, caseBytes, oursOneShot, oursIncremental, compact } from '../support/oracle/response.mjs';

const S = (m) => ({ error: ['Net::HTTPBadResponse', `${m} (strict)`] });
const EOF = { error: ['EOFError', 'end of file reached'] };
const SAME = { same: true };

// What strict mode does with each recorded shape: an error, or MRI's result.
const STRICT = {
  'cl-and-te': S('Transfer-Encoding with Content-Length'),
  'te-and-cl': S('Transfer-Encoding with Content-Length'),
  'two-cl-different': S('conflicting Content-Length values'),
  'cl-list-different': S('conflicting Content-Length values'),
  'two-cl-same': SAME,
  'cl-list-same': SAME,
  'te-chunked-not-last': S('chunked is not the final transfer coding'),
  'te-chunked-twice': S('chunked applied more than once'),
  'te-two-fields': S('unsupported transfer coding'),
  'te-percent-chunked': S('unsupported transfer coding'),
  'te-chunked-param': S('chunked with parameters'),
  'te-uppercase': SAME,
  'te-empty': S('unsupported transfer coding'),
  'te-http10': S('Transfer-Encoding in a response before HTTP/1.1'),
  'obs-fold': S('obs-fold in a header field'),
  'obs-fold-tab': S('obs-fold in a header field'),
  'fold-before-first-field': S('whitespace before the first header field'),
  'fold-into-content-length': S('obs-fold in a header field'),
  'bare-cr-status': S('bare CR'),
  'bare-cr-value': S('bare CR'),
  'bare-cr-name': S('bare CR'),
  'bare-lf': S('line ends in a bare LF'),
  'nul-in-value': S('NUL in a header field value'),
  'nul-in-name': S('invalid character in a header field name'),
  'ctl-in-value': S('control character in a header field value'),
  'space-before-colon': S('whitespace before the colon of a header field'),
  'tab-before-colon': S('whitespace before the colon of a header field'),
  'empty-name': S('empty header field name'),
  'no-colon': S('header field without a colon'),
  'chunk-size-65-bits': S('chunk size too large'),
  'chunk-size-96-bits': S('chunk size too large'),
  'chunk-size-leading-zeros': SAME,
  'chunk-size-leading-space': S('malformed chunk size line'),
  'chunk-size-0x': S('malformed chunk size line'),
  'chunk-size-negative': S('malformed chunk size line'),
  'chunk-ext': SAME,
  'chunk-ext-ctl': S('control character in a chunk extension'),
  'chunk-size-bare-lf': S('line ends in a bare LF'),
  'chunk-data-no-crlf': S('chunk data not followed by CRLF'),
  'chunk-data-lf-only': S('chunk data not followed by CRLF'),
  trailer: SAME,
  'trailer-fold': S('obs-fold in a header field'),
  'trailer-no-colon': S('header field without a colon'),
  'trailer-smuggled-response': S('header field without a colon'),
  'cl-negative': S('invalid Content-Length'),
  'cl-plus': S('invalid Content-Length'),
  'cl-hex': S('invalid Content-Length'),
  'cl-enormous': S('Content-Length too large'),
  'cl-2-pow-64': S('Content-Length too large'),
  'cl-short-body': EOF,
  'cl-empty': S('invalid Content-Length'),
  'head-cut-short': EOF,
  'head-no-empty-line': EOF,
  'status-no-version': S('malformed status line'),
  'status-lowercase': S('malformed status line'),
  'status-two-spaces': S('malformed status line'),
  'status-tab': S('malformed status line'),
  'status-no-reason': SAME,
  'status-empty-reason': SAME,
  'status-ctl-reason': S('control character in the reason phrase'),
  'status-version-10-digits': S('malformed status line'),
  // RFC 9112 section 6.3: without Transfer-Encoding or Content-Length the
  // body is read until the connection closes; Content-Range does not frame it
  'range-frames-body': { body: 'abcREST', rest: '' },
  'response-splitting-cl0': SAME,
  'head-request-with-te': SAME,
  'no-content-with-cl': SAME,
};

const hostile = loadResponseCases().find((f) => f.group === 'hostile');
const nameOf = (c) => c.id.replace(/^hostile-\d+-/, '');
const strictApi = (api) => ({
  ...api,
  parseResponse: (b, o) => api.parseResponse(b, { ...o, strict: true }),
  ResponseParser: class extends api.ResponseParser {
    constructor(o) {
      super({ ...o, strict: true });
    }

    reset(o) {
      super.reset(o === undefined ? o : { ...o, strict: true });
    }
  },
});
const text = (v) => (typeof v === 'string' ? v : Buffer.from(v.b64, 'base64').toString('latin1'));

describe('hostile response shapes', () => {
  test('every recorded shape has a strict outcome', () => {
    assert.ok(hostile && hostile.expected, 'tests/fixtures/cases/response_hostile.json is recorded');
    assert.deepEqual(hostile.cases.map(nameOf).sort(), Object.keys(STRICT).sort());
  });

  for (const { name, api } of builds) {
    test(`${name}: by default each shape gives MRI's recorded result`, () => {
      for (const c of hostile.cases) {
        const want = hostile.expected.get(c.id).result;
        assert.deepEqual(compact(oursOneShot(api, c)), want, c.id);
      }
    });

    test(`${name}: strict mode rejects what RFC 9112 says to reject and reads the rest as MRI does`, () => {
      const sapi = strictApi(api);
      for (const c of hostile.cases) {
        const want = STRICT[nameOf(c)];
        const got = oursOneShot(sapi, c);
        const mri = hostile.expected.get(c.id).result;
        if (want.same) {
          assert.equal(got.error, undefined, `${c.id}: ${got.error && got.error.message}`);
          assert.deepEqual(compact(got), mri, c.id);
        } else if (want.error) {
          assert.ok(got.error, `${c.id} is rejected`);
          assert.deepEqual([got.error.class, got.error.message], want.error, c.id);
        } else {
          assert.equal(got.error, undefined, c.id);
          assert.equal(text(got.responses[0].body), want.body, c.id);
          assert.equal(text(got.rest), want.rest, c.id);
        }
      }
    });

    test(`${name}: strict mode gives the same result for the input cut at every point`, () => {
      const sapi = strictApi(api);
      for (const c of hostile.cases) {
        const whole = oursOneShot(sapi, c);
        const n = caseBytes(c).length;
        for (let cut = 0; cut <= n; cut++) assert.deepEqual(oursIncremental(sapi, c, [cut]), whole, `${c.id} cut at ${cut}`);
      }
    });
  }
});

const L = (s) => new Uint8Array(Buffer.from(s, 'latin1'));
const raises = (fn, cls, message) =>
  assert.throws(fn, (e) => {
    assert.equal(e.rubyClass, cls);
    if (message !== undefined) assert.equal(e.message, message);
    return true;
  });

describe('oversized input', () => {
  for (const { name, file, api } of builds) {
    test(`${name}: a 4 MiB header block hits maxHeaderBytes (1 MiB) and parses when it is raised`, () => {
      const big = 'v'.repeat(4 << 20);
      const bytes = L(`HTTP/1.1 200 OK\r\nX-Big: ${big}\r\nContent-Length: 2\r\n\r\nok`);
      raises(() => api.parseResponse(bytes), 'NetHttpWasm::LimitError', 'the response head exceeds the limit of 1048576 bytes');
      raises(() => api.parseResponse(bytes, { strict: true }), 'NetHttpWasm::LimitError');
      const res = api.parseResponse(bytes, { maxHeaderBytes: 8 << 20 });
      assert.equal(res.get('x-big').length, big.length);
      assert.equal(Buffer.from(res.body).toString(), 'ok');
      // fed in 64 KiB pieces, the limit trips before the block is complete
      const p = new api.ResponseParser();
      assert.throws(() => {
        for (let i = 0; i < bytes.length; i += 65536) p.feed(bytes.subarray(i, i + 65536));
      }, /exceeds the limit of 1048576 bytes/);
      p.close();
    });

    test(`${name}: 100,000 header fields hit maxHeaderFields (10,000) and parse when it is raised`, () => {
      const lines = [];
      for (let i = 0; i < 100000; i++) lines.push(`X-F${i}: ${i}\r\n`);
      const bytes = L(`HTTP/1.1 200 OK\r\n${lines.join('')}Set-Cookie: a\r\n${'Set-Cookie: b\r\n'.repeat(20000)}Content-Length: 0\r\n\r\n`);
      raises(() => api.parseResponse(bytes), 'NetHttpWasm::LimitError', 'more than 10000 header fields');
      const res = api.parseResponse(bytes, { maxHeaderFields: Infinity, maxHeaderBytes: 8 << 20, strict: true });
      const h = res.headers;
      assert.equal(Object.keys(h).length, 100002);
      assert.deepEqual(h['x-f99999'], ['99999']);
      assert.equal(res.getFields('set-cookie').length, 20001);
    });

    test(`${name}: a million 1-byte chunks decode in one call and in 64 KiB feeds, in bounded memory`, () => {
      const n = 1000000;
      const body = Buffer.alloc(n);
      for (let i = 0; i < n; i++) body[i] = 97 + (i % 26);
      const parts = [Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')];
      for (let i = 0; i < n; i++) parts.push(Buffer.from([0x31, 13, 10, body[i], 13, 10]));
      parts.push(Buffer.from('0\r\n\r\n'));
      const bytes = new Uint8Array(Buffer.concat(parts));
      for (const strict of [false, true]) {
        assert.deepEqual(Buffer.from(api.parseResponse(bytes, { strict }).body), body);
        const own = freshApi(file); // its memory measured from the start
        const p = new own.ResponseParser({ strict });
        const before = own.codec.memorySize();
        const got = [];
        let end = false;
        for (let i = 0; i < bytes.length; i += 65536)
          for (const e of p.feed(bytes.subarray(i, i + 65536))) {
            if (e.type === 'body') got.push(e.data);
            if (e.type === 'end') end = true;
          }
        p.close();
        assert.ok(end);
        assert.deepEqual(Buffer.concat(got), body);
        assert.ok(own.codec.memorySize() - before <= 1 << 20, `the incremental parser does not hold the body (${before} -> ${own.codec.memorySize()})`);
      }
    });

    test(`${name}: huge chunk sizes and Content-Lengths wait for bytes that never come and stop at maxBodyBytes`, () => {
      const chunked = L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffffffff\r\nabc');
      raises(() => api.parseResponse(chunked), 'EOFError', 'end of file reached');
      const p = new api.ResponseParser({ maxBodyBytes: 1 << 20 });
      p.feed(chunked);
      raises(() => p.feed(new Uint8Array(2 << 20)), 'NetHttpWasm::LimitError', 'the response body exceeds the limit of 1048576 bytes');
      p.close();
      const cl = L('HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999999\r\n\r\n');
      const q = new api.ResponseParser({ maxBodyBytes: 1 << 20 });
      q.feed(cl);
      assert.equal(q.feed(new Uint8Array(1 << 20))[0].data.length, 1 << 20);
      raises(() => q.feed(new Uint8Array(1)), 'NetHttpWasm::LimitError', 'the response body exceeds the limit of 1048576 bytes');
      q.close();
    });
  }
});

describe('decompression bombs', () => {
  // 320 MiB of zeros: 0.3 MiB compressed
  const zeros = Buffer.alloc(320 << 20);
  const bombs = { gzip: gzipSync(zeros, { level: 9 }), deflate: deflateSync(zeros, { level: 9 }) };
  const response = (enc, z) =>
    new Uint8Array(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: ${enc}\r\nContent-Length: ${z.length}\r\n\r\n`), z]));

  for (const { name, file, api } of builds) {
    for (const [enc, z] of Object.entries(bombs)) {
      test(`${name}: a ${enc} bomb stops at maxInflatedBytes (parseResponse default 256 MiB)`, () => {
        const bytes = response(enc, z);
        raises(() => api.parseResponse(bytes, { decodeContent: true }), 'NetHttpWasm::LimitError',
          'inflated body exceeds the limit of 268435456 bytes');
        raises(() => api.parseResponse(bytes, { decodeContent: true, maxInflatedBytes: 1 << 20 }), 'NetHttpWasm::LimitError',
          'inflated body exceeds the limit of 1048576 bytes');
        // not decoding: the compressed bytes as they are
        assert.equal(api.parseResponse(bytes).body.length, z.length);
        // the same instance keeps working after the limit
        assert.equal(api.parseResponse(L('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx')).code, '200');
      });

      test(`${name}: streaming a ${enc} bomb through ResponseParser keeps the module's memory bounded`, () => {
        const bytes = response(enc, z);
        const own = freshApi(file); // its memory measured from the start
        const p = new own.ResponseParser({ decodeContent: true });
        let total = 0;
        let maxMem = 0;
        for (let i = 0; i < bytes.length; i += 65536) {
          for (const e of p.feed(bytes.subarray(i, i + 65536))) if (e.type === 'body') total += e.data.length;
          maxMem = Math.max(maxMem, own.codec.memorySize());
        }
        p.close();
        assert.equal(total, zeros.length);
        assert.ok(maxMem < 24 << 20, `module memory stayed below 24 MiB (${maxMem})`);
      });
    }
  }
});
