// The benchmark's JS side: one runtime per process.
//   node js-driver.mjs <runtime> <ops> <passes> <minNs> <gate|time>
// Prints "op value" lines: in gate mode the sha256 of the op's canonical
// output (or "-" when the runtime does not do the op), in time mode the ns/op
// of each pass.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { inputs } from './inputs.mjs';

const require = createRequire(import.meta.url);
const { Codec, createNetHttp } = await import('../js/index.mjs');
const [runtime, opList, passesArg, minNsArg, mode] = process.argv.slice(2);
const root = new URL('../', import.meta.url);
const enc = new TextEncoder();
const dec = new TextDecoder();

const responseBytes = enc.encode(inputs.response);
const bigBytes = enc.encode(inputs.bigResponse);
const bigPieces = [];
for (let i = 0; i < bigBytes.length; i += inputs.feedSize) bigPieces.push(bigBytes.subarray(i, i + inputs.feedSize));

const canonResponse = (code, message, headers, body) => {
  let s = `${code}\n${message}\n`;
  for (const [k, v] of headers) s += `${k}: ${v.join('\u0000')}\n`;
  const head = enc.encode(`${s}\n`);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
};
const entriesOf = (h) => (h instanceof Map ? [...h] : Object.entries(h));

function concat(parts) {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

// ---- net-http-wasm through its public API ----
function ours(file, api = createNetHttp(readFileSync(new URL(file, root)))) {
  const { uri, header, form } = inputs.request;
  const ops = {
    request: () => {
      const req = new api.Request('POST', api.URI(uri));
      req.set(header[0], header[1]);
      req.setFormData(form);
      return req.toBytes();
    },
    formEncode: () => api.encodeWwwForm(inputs.formPairs),
    formDecode: () => api.decodeWwwForm(inputs.formString),
    canonicalize: () => api.eachCapitalized(inputs.fields),
  };
  const canon = {
    request: (b) => b,
    formEncode: (s) => s,
    formDecode: (pairs) => pairs.map(([k, v]) => `${k}\u0000${v}\n`).join(''),
    canonicalize: (pairs) => pairs.map(([k, v]) => `${k}: ${v}\r\n`).join(''),
  };
  if (api.parseResponse) {
    ops.response = () => {
      const r = api.parseResponse(responseBytes);
      return [r.code, r.message, r.headers, r.body];
    };
    canon.response = ([c, m, h, b]) => canonResponse(c, m, entriesOf(h), b);
  }
  if (api.ResponseParser) {
    ops.incremental = () => {
      const parser = new api.ResponseParser(); // a new connection each time
      let head = null;
      const body = [];
      for (const piece of bigPieces) {
        for (const ev of parser.feed(piece)) {
          if (ev.type === 'head') head = ev.response;
          else if (ev.type === 'body') body.push(ev.data);
        }
      }
      parser.close();
      return [head, body];
    };
    canon.incremental = ([h, body]) => canonResponse(h.code, h.message, entriesOf(h.headers), concat(body));
  }
  return { ops, canon };
}

// ---- comparable work in JS, different output ----
function peers() {
  const ops = {};
  const canon = {};
  const pairs = inputs.formPairs.flatMap(([k, v]) => (Array.isArray(v) ? v.map((w) => [k, w]) : [[k, v ?? '']]));
  ops.formEncode = () => new URLSearchParams(pairs).toString();
  ops.formDecode = () => [...new URLSearchParams(inputs.formString)];
  ops.canonicalize = () => [...new Headers(inputs.fields)];
  // Node's own parser (llhttp compiled natively into node)
  const { HTTPParser } = process.binding('http_parser');
  const nodeParse = (pieces) => {
    const parser = new HTTPParser();
    parser.initialize(HTTPParser.RESPONSE, {});
    let head = null;
    const body = [];
    parser[HTTPParser.kOnHeadersComplete] = (_v1, _v2, headers, _m, _u, code, message) => {
      head = { code, message, headers };
    };
    parser[HTTPParser.kOnBody] = (b) => body.push(Buffer.from(b));
    parser[HTTPParser.kOnMessageComplete] = () => {};
    for (const p of pieces) parser.execute(Buffer.from(p.buffer, p.byteOffset, p.length));
    parser.finish();
    return [head, body];
  };
  ops.response = () => nodeParse([responseBytes]);
  ops.incremental = () => nodeParse(bigPieces);
  return { ops, canon };
}

function undiciLlhttp() {
  const bin = Buffer.from(require('undici/lib/llhttp/llhttp-wasm.js'), 'base64');
  const constants = require('undici/lib/llhttp/constants.js');
  let cur = null;
  const mem = () => inst.exports.memory.buffer;
  const inst = new WebAssembly.Instance(new WebAssembly.Module(bin), {
    env: {
      wasm_on_url: () => 0,
      wasm_on_status: (p, at, len) => {
        cur.status = Buffer.from(mem(), at, len).toString('latin1');
        return 0;
      },
      wasm_on_message_begin: () => 0,
      wasm_on_header_field: (p, at, len) => {
        cur.headers.push(Buffer.from(mem(), at, len).toString('latin1'));
        return 0;
      },
      wasm_on_header_value: (p, at, len) => {
        cur.headers.push(Buffer.from(mem(), at, len).toString('latin1'));
        return 0;
      },
      wasm_on_headers_complete: (p, code) => {
        cur.code = code;
        return 0;
      },
      wasm_on_body: (p, at, len) => {
        cur.body.push(new Uint8Array(mem(), at, len).slice());
        return 0;
      },
      wasm_on_message_complete: () => 0,
    },
  });
  const x = inst.exports;
  const ptr = x.llhttp_alloc(constants.TYPE.RESPONSE);
  let buf = 0;
  let cap = 0;
  const run = (pieces) => {
    x.llhttp_reset ? x.llhttp_reset(ptr) : null;
    cur = { status: '', headers: [], body: [], code: 0 };
    for (const p of pieces) {
      if (p.length > cap) {
        if (buf) x.free(buf);
        cap = p.length;
        buf = x.malloc(cap);
      }
      new Uint8Array(mem(), buf, p.length).set(p);
      const rc = x.llhttp_execute(ptr, buf, p.length);
      if (rc !== 0) throw new Error(`llhttp error ${rc}`);
    }
    return cur;
  };
  return { ops: { response: () => run([responseBytes]), incremental: () => run(bigPieces) }, canon: {} };
}

// ---- the marshalling floor: move the same bytes in and out, do no work ----
function floor() {
  const api = createNetHttp(readFileSync(new URL('wasm/nethttp.wasm', root)));
  const c = api.codec;
  const { uri, header, form } = inputs.request;
  const strIn = (s) => c.strw(s);
  const outText = (n) => dec.decode(c.u8.subarray(c.inPtr, c.inPtr + n));
  const outBytes = (n) => c.u8.slice(c.inPtr, c.inPtr + n);
  // sizes of each op's real output, so the floor copies as much
  const sizes = {};
  {
    const o = ours('wasm/nethttp.wasm');
    for (const [k, f] of Object.entries(o.ops)) sizes[k] = o.canon[k](f()).length;
  }
  const ops = {
    request: () => {
      c.begin(256);
      strIn('POST');
      strIn(uri);
      strIn(header[0]);
      strIn(header[1]);
      for (const [k, v] of form) {
        strIn(k);
        strIn(v);
      }
      return outBytes(sizes.request);
    },
    formEncode: () => {
      c.begin(256);
      for (const [k, v] of inputs.formPairs) {
        strIn(k);
        if (Array.isArray(v)) v.forEach(strIn);
        else if (v != null) strIn(v);
      }
      return outText(sizes.formEncode);
    },
    formDecode: () => {
      c.begin(256);
      strIn(inputs.formString);
      return outText(sizes.formDecode);
    },
    canonicalize: () => {
      c.begin(512);
      for (const [k, v] of inputs.fields) {
        strIn(k);
        strIn(v);
      }
      return outText(sizes.canonicalize);
    },
    response: () => {
      c.begin(responseBytes.length + 8);
      c.bytesw(responseBytes);
      return [outText(sizes.response - 1024), outBytes(1024)];
    },
    incremental: () => {
      const parts = [];
      for (const p of bigPieces) {
        c.begin(p.length + 8);
        c.bytesw(p);
        parts.push(c.u8.slice(c.inPtr + 4, c.inPtr + 4 + p.length));
      }
      return parts;
    },
  };
  return { ops, canon: {} };
}

// ---- the module's calls alone: the calls each op of the JS API makes into
// WebAssembly, with the input records it wrote for them, replayed; nothing
// is read back. The JS API's time less this is its JS. (incremental keeps a
// parser between calls: not replayed)
function callsAlone() {
  const api = createNetHttp(readFileSync(new URL('wasm/nethttp.wasm', root)));
  const c = api.codec;
  const own = ours('wasm/nethttp.wasm', api).ops;
  const ops = {};
  for (const op of ['request', 'response', 'formEncode', 'formDecode', 'canonicalize']) {
    const calls = [];
    c.call = (name, ...args) => {
      calls.push([name, c.u8.slice(c.inPtr, c.inPtr + c.pos), args]);
      return Codec.prototype.call.call(c, name, ...args);
    };
    own[op]();
    delete c.call;
    ops[op] = () => {
      for (const [name, input, args] of calls) {
        c.begin(input.length);
        c.u8.set(input, c.inPtr);
        c.pos = input.length;
        c.call(name, ...args);
      }
    };
  }
  return { ops, canon: {} };
}

const table = {
  'wasm-clang': () => ours('wasm/nethttp.wasm'),
  'wasm-emcc': () => ours('wasm/nethttp.emcc.wasm'),
  'js-peers': peers,
  'undici-llhttp': undiciLlhttp,
  floor,
  'wasm-calls': callsAlone,
};

const { ops, canon } = table[runtime]();
const sha = (v) => createHash('sha256').update(typeof v === 'string' ? enc.encode(v) : v).digest('hex');
const now = process.hrtime.bigint;
for (const op of opList.split(',')) {
  const work = ops[op];
  if (!work) {
    console.log(`${op} -`);
    continue;
  }
  if (mode === 'gate') {
    console.log(`${op} ${canon[op] ? sha(canon[op](work())) : 'nocheck'}`);
    continue;
  }
  const minNs = BigInt(minNsArg);
  let iters = 1;
  for (;;) {
    const t0 = now();
    for (let i = 0; i < iters; i++) work();
    if (now() - t0 >= minNs || iters >= 1 << 24) break;
    iters *= 2;
  }
  const samples = [];
  for (let p = 0; p < Number(passesArg); p++) {
    const t0 = now();
    for (let i = 0; i < iters; i++) work();
    samples.push(Number(now() - t0) / iters);
  }
  console.log(`${op} ${samples.map((s) => s.toFixed(1)).join(',')}`);
}
