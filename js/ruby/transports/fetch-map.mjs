// How the browser transports (fetch-async.mjs, fetch-sync.mjs and its
// helper Worker, xhr-sync.mjs) map the bytes the codec wrote to a browser
// request, and the browser's response back to HTTP/1.1 bytes. Nothing here
// needs the codec: the helper Worker imports this file alone.
import { concatAll } from '../../bytes.mjs';
import { isForbiddenRequestHeader } from '../../fetch.mjs';

const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

// The request's fields given to append(name, value) but those a page may
// not set (and those the browser refuses): the names of the fields left
// out (Bridge#droppedHeaders).
export function requestFields(req, append) {
  const dropped = [];
  for (const [name, value] of req.headers) {
    if (isForbiddenRequestHeader(name.toLowerCase())) {
      dropped.push(name);
      continue;
    }
    try {
      append(name, value);
    } catch {
      dropped.push(name);
    }
  }
  return dropped;
}

// The head of an HTTP/1.1 response, as bytes, from what the browser gives:
// its status and fields (forEach(each) calls each(lowercased name, value)).
// A body the browser decoded (gzip) loses Content-Encoding and
// Content-Length. Transfer-Encoding is kept only when `chunked` (the
// transport frames the body again with chunks: framing's CHUNKED).
export function responseHead(status, statusText, forEach, chunked = false) {
  const fields = [];
  forEach((name, value) => fields.push([name, value]));
  const decoded = decodedBody(fields.find(([name]) => name === 'content-encoding')?.[1]);
  let head = `HTTP/1.1 ${status} ${statusText || ''}\r\n`;
  for (const [name, value] of fields) {
    if (decoded && (name === 'content-encoding' || name === 'content-length')) continue;
    if (name === 'transfer-encoding' && !chunked) continue;
    // the browser joins repeated fields with ", " (set-cookie is never visible)
    head += `${name}: ${value}\r\n`;
  }
  return encoder.encode(`${head}\r\n`);
}

// Whether the browser decoded a body of this Content-Encoding (the head
// Ruby reads then has neither Content-Encoding nor Content-Length).
function decodedBody(encoding) {
  return encoding != null && !/^\s*(identity|none)?\s*$/i.test(encoding);
}

// How the head Ruby reads frames the body of a response (fetch-async.mjs,
// xhr-sync.mjs, fetch-sync-worker.mjs): a length (0: no body; a Content-Length the browser did not
// decode away), CHUNKED (the server sent it chunked, which the browser
// undid: the body is chunked again, each piece the browser gives one chunk,
// with body-stream.mjs's chunkFrame and CHUNK_END), or BY_END (the stream's
// end frames it: the connection ends with it).
export const CHUNKED = 'chunked';
export const BY_END = null;
export function framing(method, status, headers) {
  if (method === 'HEAD' || status === 204 || status === 304) return 0;
  if (/^\s*chunked\s*$/i.test(headers.get('transfer-encoding') || '')) return CHUNKED;
  const length = headers.get('content-length');
  return length != null && /^\d+$/.test(length) && !decodedBody(headers.get('content-encoding')) ? Number(length) : BY_END;
}

// The URL's start for a connection to host:port (an IPv6 address in brackets).
export function origin(scheme, host, port) {
  return `${scheme}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

// The body the browser sends (none for GET and HEAD, which may not have one).
export function requestBody(req) {
  return req.body && req.body.length && req.method !== 'GET' && req.method !== 'HEAD' ? req.body : null;
}

// NetHttpWasm::FetchError's messages: the browser's request failed, or was redirected.
export function fetchFailed(e) {
  return `fetch failed: ${e && e.message ? e.message : String(e)} (a network error, or a response CORS does not let the page read)`;
}
export const REDIRECTED = 'fetch failed: the server answered with a redirect, which a page cannot read (Net::HTTP does not follow redirects)';

// Splits the bytes the codec wrote back into method, target, headers, body
// (null until the head and its body are all there). The body is framed by
// Content-Length, or chunked (a body_stream with no length): its chunks
// joined, the browser frames it again.
export function splitRequest(bytes) {
  const head = parseHead(bytes);
  return head && takeBody(head, bytes);
}

// The bytes the codec writes for one request, gathered as they come:
// push(bytes) gives splitRequest's answer once the request is whole, else
// null (a large body written in many pieces is joined once, when its last
// one has come).
export class RequestBytes {
  constructor() {
    this.parts = [];
    this.size = 0;
    this.head = null;
  }

  push(bytes) {
    this.parts.push(bytes);
    this.size += bytes.length;
    if (!this.head) {
      const all = concatAll(this.parts);
      this.parts = [all];
      this.head = parseHead(all);
      if (!this.head) return null;
    }
    const h = this.head;
    if (h.chunked ? !endsLastChunk(this.parts) : this.size < h.start + h.length) return null;
    const all = concatAll(this.parts);
    this.parts = [all];
    const req = takeBody(h, all);
    if (!req) return null;
    this.parts = req.rest.length ? [req.rest] : [];
    this.size = req.rest.length;
    this.head = null;
    return req;
  }
}

// The request's head, once it is all there: { method, target, headers,
// start (of the body), length, chunked }.
function parseHead(bytes) {
  let end = -1;
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      end = i;
      break;
    }
  }
  if (end < 0) return null;
  const lines = utf8.decode(bytes.subarray(0, end)).split('\r\n');
  const [method, target] = lines[0].split(' ');
  const headers = [];
  let length = 0;
  let chunked = false;
  for (let i = 1; i < lines.length; i++) {
    const k = lines[i].indexOf(':');
    const name = lines[i].slice(0, k);
    const value = lines[i].slice(k + 1).trim();
    headers.push([name, value]);
    const lower = name.toLowerCase();
    if (lower === 'content-length') length = Number(value) || 0;
    else if (lower === 'transfer-encoding' && /(?:^|[^-\w])chunked(?![-\w])/i.test(value)) chunked = true;
  }
  return { method, target, headers, start: end + 4, length, chunked };
}

function takeBody(h, bytes) {
  const { method, target, headers, start, length } = h;
  if (h.chunked) {
    const body = dechunk(bytes, start);
    return body && { method, target, headers, body: body.data, rest: bytes.subarray(body.end) };
  }
  if (bytes.length < start + length) return null;
  return { method, target, headers, body: bytes.slice(start, start + length), rest: bytes.subarray(start + length) };
}

// Whether the bytes end as a chunked body's last chunk does ("0\r\n\r\n",
// no trailer): only then is the body worth reading.
function endsLastChunk(parts) {
  const want = [48, 13, 10, 13, 10];
  let k = want.length - 1;
  for (let i = parts.length - 1; i >= 0 && k >= 0; i--) {
    const p = parts[i];
    for (let j = p.length - 1; j >= 0 && k >= 0; j--, k--) if (p[j] !== want[k]) return false;
  }
  return k < 0;
}

// A chunked body from `at` (as the codec writes one: hex size, CRLF, data,
// CRLF; a last chunk of 0 and an empty line): { data, end }, or null while
// it is not all there.
function dechunk(bytes, at) {
  const parts = [];
  let total = 0;
  let p = at;
  for (;;) {
    const eol = lineEnd(bytes, p);
    if (eol < 0) return null;
    const size = parseInt(utf8.decode(bytes.subarray(p, eol)), 16) || 0;
    p = eol + 2;
    if (size === 0) {
      // trailer lines up to an empty one
      for (;;) {
        const e = lineEnd(bytes, p);
        if (e < 0) return null;
        const empty = e === p;
        p = e + 2;
        if (empty) break;
      }
      break;
    }
    if (bytes.length < p + size + 2) return null;
    parts.push(bytes.subarray(p, p + size));
    total += size;
    p += size + 2;
  }
  const data = new Uint8Array(total);
  let o = 0;
  for (const c of parts) {
    data.set(c, o);
    o += c.length;
  }
  return { data, end: p };
}

function lineEnd(bytes, from) {
  for (let i = from; i + 1 < bytes.length; i++) if (bytes[i] === 13 && bytes[i + 1] === 10) return i;
  return -1;
}
