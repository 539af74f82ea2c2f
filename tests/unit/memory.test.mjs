// The module's life: a million mixed operations, a fifth of them raising,
// on one instance of each build. After a warm-up the module's memory does not
// grow, and every error leaves the instance working.
// NETHTTP_MEMORY_OPS sets the number of operations (default 1,000,000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { builds, freshApi } from '../support/builds.mjs';

const OPS = Number(process.env.NETHTTP_MEMORY_OPS || 1000000);
const L = (s) => new Uint8Array(Buffer.from(s, 'latin1'));

const gz = gzipSync(Buffer.from('hello, world '.repeat(200)));
const inputs = {
  chunked: L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\nX-A: 2\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nNEXT'),
  length: L('HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nabc'),
  gzip: new Uint8Array(Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`), gz])),
  badGzip: L('HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n0123456789'),
  badStatus: L('HTTQ/1.1 200 OK\r\n\r\n'),
  badChunk: L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
  smuggle: L('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
  truncated: L('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel'),
  bigHead: L(`HTTP/1.1 200 OK\r\nX: ${'v'.repeat(3000)}\r\n\r\n`),
};

// One of 20 operations; those with an odd index raise (4 of every 20 calls
// raise from C, more from argument checks).
function operation(api, i) {
  const k = i % 20;
  const raises = (fn) => assert.throws(fn, api.NetHttpError);
  switch (k) {
    case 0: {
      const r = new api.Request('POST', api.URI('http://example.com:8080/a/b?c=d'), { Accept: 'x', 'X-N': String(i) });
      r.setFormData([['q', `v ${i}`], ['z', null]]);
      return r.toBytes().length;
    }
    case 1:
      return raises(() => new api.Request('GET', api.URI('http://exa mple/')));
    case 2:
      return api.parseResponse(inputs.chunked).body.length;
    case 3:
      return raises(() => api.parseResponse(inputs.badStatus));
    case 4:
      return api.encodeWwwForm([['a', `b c ${i}`], ['ü', '€']]).length;
    case 5:
      return raises(() => api.decodeWwwFormComponent('%zz'));
    case 6:
      return api.decodeWwwForm(`a=1&b=${i}&c=%E2%82%AC`).length;
    case 7:
      return raises(() => api.parseResponse(inputs.badChunk));
    case 8:
      return api.eachCapitalized([['x-forwarded-for', String(i)], ['content-type', 'a']]).length;
    case 9:
      return raises(() => api.parseResponse(inputs.smuggle, { strict: true }));
    case 10:
      return api.parseResponse(inputs.gzip, { decodeContent: true }).body.length;
    case 11:
      return raises(() => api.parseResponse(inputs.badGzip, { decodeContent: true }));
    case 12: {
      const p = new api.ResponseParser({ skipInterim: true });
      let n = 0;
      for (let j = 0; j < inputs.length.length; j += 7) n += p.feed(inputs.length.subarray(j, j + 7)).length;
      p.close();
      return n;
    }
    case 13: {
      const p = new api.ResponseParser();
      p.feed(inputs.truncated);
      raises(() => p.finish());
      raises(() => p.feed(inputs.length)); // the error again, until reset
      p.reset();
      p.takePending();
      const n = p.feed(inputs.length).length;
      p.close();
      return n;
    }
    case 14:
      return api.capitalize(`x-header-${i % 97}`).length;
    case 15:
      return raises(() => api.parseResponse(inputs.bigHead, { maxHeaderBytes: 1024 }));
    case 16:
      return api.parseResponse(inputs.length, { strict: true, requestMethod: 'HEAD' }).code.length;
    case 17:
      return raises(() => new api.Request('GET', '/', { 'X\r\nY': 'z' }, { strict: true }));
    case 18:
      return api.encodeWwwFormComponent(`${i} ~*'()`).length;
    case 19:
      return raises(() => api.parseResponse(inputs.truncated));
    default:
      throw new Error('unreachable');
  }
}

for (const b of builds) {
  test(`${b.name}: ${OPS.toLocaleString('en')} mixed operations, errors included, leave the module's memory as it was after warm-up`, (t) => {
    // an instance of its own, so that other tests' large inputs do not hide growth
    const api = freshApi(b.file);
    const warm = Math.min(20000, OPS);
    for (let i = 0; i < warm; i++) operation(api, i);
    const before = api.codec.memorySize();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) operation(api, i);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const after = api.codec.memorySize();
    assert.equal(after, before, `memory grew from ${before} to ${after} bytes`);
    // the instance still gives the right answers
    assert.equal(api.encodeWwwFormComponent('a b'), 'a+b');
    assert.equal(Buffer.from(api.parseResponse(inputs.chunked).body).toString(), 'hello world');
    t.diagnostic(`${OPS} operations in ${ms.toFixed(0)} ms; module memory ${after} bytes after warm-up and after the run`);
  });
}
