// net-http-wasm entry point. The module's bytes are embedded, so importing
// this file works in Node, browsers and bundlers with no file or network
// access; the module is compiled synchronously on first use. Hosts that
// forbid synchronous compilation call `await init()` first.
import { Codec, setDefaultLoader, setDefaultCodec, getDefaultCodec } from './core.mjs';
import { NetHttpError } from './errors.mjs';
import { Request, URI, URIReference } from './request.mjs';
import {
  rubyNumberToString, encodeWwwForm, encodeWwwFormComponent, decodeWwwForm, decodeWwwFormComponent,
  eachCapitalized, capitalize,
} from './forms.mjs';
import { Response } from './response.mjs';
import { bindResponse, parseResponse, ResponseParser } from './response-parser.mjs';
import { fetchResponseBytes } from './fetch.mjs';
import { wasmBase64, wasmSha256 } from './wasm-bytes.mjs';

// The public API: exactly these names (index.cjs and index.d.ts export the
// same; tests/unit/module.test.mjs checks it).
export {
  Request, URI, URIReference, NetHttpError, Codec, rubyNumberToString,
  encodeWwwForm, encodeWwwFormComponent, decodeWwwForm, decodeWwwFormComponent, eachCapitalized, capitalize,
  parseResponse, ResponseParser, Response, responseFromFetch,
  createNetHttp, init, wasmBytes, wasmSha256, getDefaultCodec,
};

/** The embedded WebAssembly module's bytes. */
function wasmBytes() {
  if (typeof Buffer === 'function') {
    const b = Buffer.from(wasmBase64, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const bin = atob(wasmBase64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

setDefaultLoader(wasmBytes);

/** The request, form and header API bound to one codec (see createNetHttp in index.mjs). */
function bindCore(source) {
  const codec = source instanceof Codec ? source : new Codec(source);
  const bind = (options) => Object.assign({}, options, { codec });
  class BoundRequest extends Request {
    constructor(method, uriOrPath, initHeader, options) {
      super(method, uriOrPath, initHeader, bind(options));
    }
  }
  return {
    codec,
    Request: BoundRequest,
    URI,
    URIReference,
    NetHttpError,
    rubyNumberToString,
    encodeWwwFormComponent: (s, o) => encodeWwwFormComponent(s, bind(o)),
    encodeWwwForm: (p, sep, o) =>
      sep !== null && typeof sep === 'object' ? encodeWwwForm(p, bind(sep)) : encodeWwwForm(p, sep, bind(o)),
    decodeWwwFormComponent: (s, o) => decodeWwwFormComponent(s, bind(o)),
    decodeWwwForm: (s, o) => decodeWwwForm(s, bind(o)),
    eachCapitalized: (f, o) => eachCapitalized(f, bind(o)),
    capitalize: (n, o) => capitalize(n, bind(o)),
  };
}


/**
 * The whole API bound to its own module instance (another build, or
 * isolation): `createNetHttp(bytesOrModule)`.
 */
function createNetHttp(source) {
  const core = bindCore(source);
  return { ...core, ...bindResponse(core.codec) };
}

/** Compiles the module asynchronously (from `source`, or the embedded bytes) and makes it the default. */
async function init(source) {
  const module = source instanceof WebAssembly.Module ? source : await WebAssembly.compile(source || wasmBytes());
  setDefaultCodec(new Codec(module));
}

/**
 * Reads a fetch() Response as Net::HTTP reads a response:
 * `await responseFromFetch(await fetch(url, init), { requestMethod })`.
 * fetch() has already decoded the body, so Content-Encoding,
 * Transfer-Encoding and Content-Length are not among the fields (a
 * Content-Length of the body as read is).
 */
async function responseFromFetch(res, options) {
  const method = options && options.requestMethod != null ? options.requestMethod : 'GET';
  return parseResponse(await fetchResponseBytes(res, method), options);
}
