// Compiled by `tsc` (npm run typecheck): the declarations accept real usage.
import { Request, URI, NetHttpError, encodeWwwForm, decodeWwwForm, eachCapitalized, createNetHttp, wasmBytes } from 'net-http-wasm';

const req = new Request('POST', URI('http://example.com/p'), { 'X-A': '1', 'X-B': null }, { profile: '3.4' });
req.set('X-List', ['a', 1]).addField('x-list', 2).delete('user-agent');
req.setFormData({ q: 'a b', tags: ['x', null], n: 1.5 }, ';');
req.body = new Uint8Array([1, 2]);
const bytes: Uint8Array = req.toBytes('1.0');
const v: string | null = req.get('x-list');
const form: string = encodeWwwForm([['a', null], ['b', [1, 2]]]);
const pairs: Array<[string, string]> = decodeWwwForm('a=1', { separator: ';' });
const caps: Array<[string, string]> = eachCapitalized({ 'content-type': 'text/plain' });
const api = createNetHttp(wasmBytes());
const r2 = new api.Request('GET', '/');
try {
  r2.set('x', 'a\nb');
} catch (e) {
  if (e instanceof NetHttpError) console.log(e.rubyClass, e.message);
}
console.log(bytes.length, v, form, pairs, caps, req.path, req.decodeContent);

import { parseResponse, ResponseParser, type ResponseEvent } from 'net-http-wasm';
const res = parseResponse(new Uint8Array(0), { requestMethod: 'HEAD', decodeContent: true, maxInflatedBytes: 1 << 20 });
const ct: string | null = res.get('content-type');
const all: Record<string, string[]> = res.headers;
const p = new ResponseParser({ skipInterim: true });
const evs: ResponseEvent[] = p.feed('HTTP/1.1 200 OK\r\n\r\n');
for (const ev of [...evs, ...p.finish()]) if (ev.type === 'body') console.log(ev.data.length);
p.close();
console.log(ct, all, res.code, res.body?.length, api.parseResponse);

const hr = new Request('GET', '/');
hr.basicAuth('u', 'p').setRange({ begin: 0, end: 99 }).setRange(0, 100).setContentType('text/html', { charset: 'utf-8' }).setContentLength('12');
const rg: Array<[number | bigint, number | bigint]> | null = hr.range();
const ctype: string | null = hr.contentType();
const fv: string | number = hr.fetch('x', 1);
const fb: string = hr.fetch('x', (k) => k);
const ka: boolean = res.isConnectionKeepAlive() || res.isChunked();
console.log(rg, ctype, fv, fb, ka, res.contentLength(), res.typeParams());
hr.setForm([['a', 'b'], ['f', new Uint8Array(1), { filename: 'f.bin', contentType: 'image/png' }]], 'multipart/form-data', { boundary: 'x' });
hr.toBytesAsync().then((b: Uint8Array) => console.log(b.length));

const up = new Request('PUT', URI('http://example.com/big'), { 'Transfer-Encoding': 'chunked' });
up.bodyStream = [new Uint8Array(3), 'text'];
up.bodyStream = new ReadableStream<Uint8Array>();
async function send(w: (b: Uint8Array) => void) {
  for await (const piece of up.stream()) w(piece);
}
console.log(send);
