// Streamed request bodies (req.bodyStream, req.stream()): the bytes are MRI's
// recorded ones (tests/fixtures/cases/body_stream.expected.json, both profiles), and
// the body is read from the source only as the consumer asks for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCaseFiles, loadExpected } from '../support/oracle/cases.mjs';
import { jsValue } from '../support/oracle/ours.mjs';
import { Request, URI, NetHttpError } from '../../js/index.mjs';

const cases = loadCaseFiles().find((f) => f.name === 'body_stream').cases;
const expected = loadExpected('body_stream');

// The recorded cases whose ops end with a body_stream of pieces and raise no error.
const streamed = cases.filter((c) => {
  const last = c.ops[c.ops.length - 1];
  return last[0] === 'body_stream' && 'pieces' in last[1] && !expected.get(c.id).error &&
    c.ops.slice(0, -1).every((op) => op[0] === 'set');
});

function build(c, source) {
  const req = new Request(c.method, URI(c.target.uri), c.init, { profile: c.profile });
  for (const op of c.ops.slice(0, -1)) req.set(op[1], jsValue(op[2]));
  req.bodyStream = source;
  return req;
}

const readable = (pieces) => new ReadableStream({
  start(ctl) {
    for (const p of pieces) ctl.enqueue(p);
    ctl.close();
  },
});
async function* asyncGen(pieces) {
  for (const p of pieces) {
    await new Promise((r) => setImmediate(r));
    yield p;
  }
}

async function collect(req) {
  const parts = [];
  for await (const b of req.stream()) parts.push(Buffer.from(b));
  return parts;
}

test('stream(): a ReadableStream or an async iterable gives MRI\'s bytes, head first', async () => {
  assert.ok(streamed.length >= 30, `${streamed.length} cases`);
  for (const c of streamed) {
    const want = Buffer.from(expected.get(c.id).bytes, 'base64');
    const pieces = c.ops[c.ops.length - 1][1].pieces.map((p) => {
      const v = jsValue(p);
      return typeof v === 'string' ? new TextEncoder().encode(v) : v;
    });
    for (const source of [readable(pieces), asyncGen(pieces)]) {
      const parts = await collect(build(c, source));
      assert.equal(Buffer.concat(parts).toString('latin1'), want.toString('latin1'), c.id);
      const headEnd = want.indexOf('\r\n\r\n') + 4;
      assert.equal(parts[0].length, headEnd, `${c.id}: the head is the first piece`);
      for (const p of parts.slice(1)) assert.ok(p.length <= 16384 + 8, `${c.id}: a piece of ${p.length} bytes`);
    }
    // toBytesAsync collects the same
    assert.equal(Buffer.from(await build(c, readable(pieces)).toBytesAsync()).toString('latin1'), want.toString('latin1'), c.id);
  }
});

test('stream(): the source is read as the consumer goes, one piece at a time', async () => {
  const log = [];
  let made = 0;
  async function* source() {
    for (let i = 0; i < 64; i++) {
      log.push(`make ${i}`);
      made++;
      yield new Uint8Array(65536).fill(i); // 64 × 64 KiB = 4 MiB
    }
  }
  const req = new Request('PUT', URI('http://example.com/big'));
  req.set('Transfer-Encoding', 'chunked');
  req.bodyStream = source();
  const it = req.stream();
  const head = (await it.next()).value;
  assert.match(Buffer.from(head).toString('latin1'), /^PUT \/big HTTP\/1\.1\r\n[^]*Transfer-Encoding: chunked\r\n\r\n$/);
  assert.equal(made, 0, 'nothing is read before the body is asked for');
  let total = 0;
  let pieces = 0;
  let last;
  for (let r = await it.next(); !r.done; r = await it.next()) {
    pieces++;
    last = r.value;
    if (last.length > 5) {
      assert.equal(Buffer.from(last.subarray(0, 6)).toString('latin1'), '4000\r\n');
      assert.ok(made <= Math.ceil(pieces / 4), `read ahead: ${made} source pieces for ${pieces} written`);
      total += last.length - 8;
    }
  }
  assert.equal(Buffer.from(last).toString('latin1'), '0\r\n\r\n');
  assert.equal(total, 64 * 65536);
  assert.equal(pieces, 64 * 4 + 1);
});

test('stream(): MRI\'s errors, before the source is touched; the source\'s own errors pass through', async () => {
  let pulled = false;
  const source = { async *[Symbol.asyncIterator]() { pulled = true; yield 'x'; } };
  const req = new Request('POST', URI('http://example.com/up'));
  req.bodyStream = source;
  await assert.rejects(req.stream().next(), (e) => e instanceof NetHttpError && e.rubyClass === 'ArgumentError' &&
    e.message === "Content-Length not given and Transfer-Encoding is not `chunked'");
  assert.equal(pulled, false);
  req.set('Content-Length', 'abc');
  await assert.rejects(req.toBytesAsync(), (e) => e.rubyClass === 'Net::HTTPHeaderSyntaxError' && e.message === 'wrong Content-Length format');
  // toBytes() cannot wait for an async source; a sync iterable is read at once
  req.set('Content-Length', 1);
  assert.throws(() => req.toBytes(), /req\.stream\(\)/);
  req.bodyStream = ['x'];
  assert.match(Buffer.from(req.toBytes()).toString('latin1'), /Content-Length: 1\r\n\r\nx$/);
  assert.throws(() => { req.bodyStream = 'a string'; }, TypeError);
  assert.throws(() => { req.bodyStream = [42]; req.toBytes(); }, /pieces must be/);
  const failing = new ReadableStream({ pull(ctl) { ctl.error(new Error('disk gone')); } });
  const r2 = new Request('POST', URI('http://example.com/up'), { 'Transfer-Encoding': 'chunked' });
  r2.bodyStream = failing;
  await assert.rejects(collect(r2), /disk gone/);
  // a request without a body stream is one piece
  const plain = new Request('POST', URI('http://example.com/up'));
  plain.body = 'abc';
  assert.deepEqual((await collect(plain)).map(String), [Buffer.from(plain.toBytes()).toString()]);
});
