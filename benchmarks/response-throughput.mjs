// Throughput of the response parser through the JS API (not a test):
//   node benchmarks/response-throughput.mjs
// - ResponseParser: a 1 MiB chunked body (chunks of CHUNK bytes) fed in
//   16 KiB pieces, events consumed; MB/s of wire bytes.
// - parseResponse: a ~1 KiB response (status, 12 fields, 512-byte body),
//   parsed and its headers, one field and the body read.
import { existsSync, readFileSync } from 'node:fs';
import { Codec } from '../js/core.mjs';
import { bindResponse } from '../js/response-parser.mjs';

const builds = [
  ['clang', 'wasm/nethttp.wasm'],
  ['emcc', 'wasm/nethttp.emcc.wasm'],
].filter(([, file]) => existsSync(new URL(`../${file}`, import.meta.url))); // emcc: built by build.sh, not committed
const CHUNK = Number(process.env.CHUNK || 8192);

function chunkedMessage(bodySize, chunk) {
  const parts = [Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n')];
  const data = Buffer.alloc(chunk, 'x');
  for (let i = 0; i < bodySize; i += chunk) {
    const n = Math.min(chunk, bodySize - i);
    parts.push(Buffer.from(`${n.toString(16)}\r\n`), data.subarray(0, n), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return new Uint8Array(Buffer.concat(parts));
}

// CPU time (process.cpuUsage), best of 5 rounds of ~0.5 s: steadier than
// wall time on a busy machine.
function bench(label, fn, bytes) {
  for (let i = 0; i < 50; i++) fn(); // warm up
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    let n = 0;
    const c0 = process.cpuUsage();
    let t;
    do {
      for (let k = 0; k < 10; k++) fn();
      n += 10;
      const c = process.cpuUsage(c0);
      t = (c.user + c.system) / 1e6;
    } while (t < 0.5);
    best = Math.min(best, t / n);
  }
  const extra = bytes ? `, ${(bytes / best / 1e6).toFixed(0)} MB/s` : '';
  console.log(`${label}: ${(best * 1e6).toFixed(1)} µs per run (CPU)${extra}`);
}

for (const [name, file] of builds) {
  const api = bindResponse(new Codec(readFileSync(new URL(`../${file}`, import.meta.url))));
  const msg = chunkedMessage(1 << 20, CHUNK);
  const parser = new api.ResponseParser();
  bench(`${name} ResponseParser, 1 MiB chunked body (${CHUNK}-byte chunks) in 16 KiB feeds`, () => {
    parser.takePending();
    parser.reset();
    let body = 0;
    for (let i = 0; i < msg.length; i += 16384)
      for (const e of parser.feed(msg.subarray(i, i + 16384))) if (e.type === 'body') body += e.data.length;
    if (body !== 1 << 20) throw new Error(`body ${body}`);
  }, msg.length);
  parser.close();

  const small = new Uint8Array(Buffer.concat([
    Buffer.from('HTTP/1.1 200 OK\r\nDate: Sun, 30 Nov 2025 09:00:00 GMT\r\nServer: nginx/1.25.3\r\nContent-Type: application/json; charset=utf-8\r\n' +
      'Content-Length: 512\r\nConnection: keep-alive\r\nCache-Control: private, max-age=0\r\nETag: "5f2b-1a2b3c4d"\r\n' +
      'Set-Cookie: session=abcdef0123456789; Path=/; HttpOnly\r\nSet-Cookie: theme=dark; Path=/\r\nVary: Accept-Encoding\r\n' +
      'X-Request-Id: 3f1e5c2a-9b8d-4e7f-a6c5-0123456789ab\r\nStrict-Transport-Security: max-age=31536000\r\n\r\n'),
    Buffer.alloc(512, '{'),
  ]));
  bench(`${name} parseResponse, ${small.length}-byte response (headers, get, body)`, () => {
    const r = api.parseResponse(small);
    if (r.headers['content-length'][0] !== '512' || r.get('set-cookie').length < 10 || r.body.length !== 512) throw new Error('bad');
  }, small.length);
}
