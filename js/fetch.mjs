// From a built Request to fetch(), and from a fetch() Response to ours.
//
// fetch() writes the request line, Host, Content-Length and the other
// forbidden headers itself (https://fetch.spec.whatwg.org/#forbidden-request-header)
// and decodes compressed bodies; so the request's own forbidden fields are
// left out (and reported), and a fetched response is read with the framing
// fields that no longer describe its (decoded) body removed.

// Forbidden request header names, downcased; and the prefixes.
const FETCH_FORBIDDEN = new Set(['accept-charset', 'accept-encoding', 'access-control-request-headers',
  'access-control-request-method', 'connection', 'content-length', 'cookie', 'cookie2', 'date', 'dnt', 'expect',
  'host', 'keep-alive', 'origin', 'referer', 'set-cookie', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'via']);
const FETCH_FORBIDDEN_PREFIX = /^(proxy-|sec-)/;

/** Whether a page may not set this request header (a downcased name). */
export function isForbiddenRequestHeader(lower) {
  return FETCH_FORBIDDEN.has(lower) || FETCH_FORBIDDEN_PREFIX.test(lower);
}

const fetchLatin1 = new TextDecoder('latin1');

// The head and body of the bytes Net::HTTPGenericRequest#exec writes.
function fetchSplit(bytes) {
  for (let i = 0; i + 3 < bytes.length; i++)
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10)
      return [bytes.subarray(0, i), bytes.subarray(i + 4)];
  return [bytes, bytes.subarray(bytes.length)];
}

/**
 * What fetch() takes for `req`: { url, init: { method, headers, body }, dropped }.
 * `url` defaults to the request's URI (a request built from a path needs
 * one); headers are the fields Net::HTTP writes (each_capitalized) except the
 * forbidden ones, listed in `dropped` by their written names.
 */
export function requestToFetch(req, url, bytes) {
  let target = url;
  if (target == null) {
    if (!req._isUri) throw new TypeError('a request built from a path needs a URL: req.toFetch(url)');
    target = req._target;
  }
  target = String(target);
  const [head, body] = fetchSplit(bytes);
  const lines = fetchLatin1.decode(head).split('\r\n');
  lines.shift();
  const headers = [];
  const dropped = [];
  let chunked = false;
  for (const line of lines) {
    const c = line.indexOf(': ');
    const name = line.slice(0, c);
    const value = line.slice(c + 2);
    const lower = name.toLowerCase();
    if (lower === 'transfer-encoding' && /(?:^|[^\-\w])chunked(?![\-\w])/i.test(value)) chunked = true;
    if (isForbiddenRequestHeader(lower)) dropped.push(name);
    else headers.push([name, value]);
  }
  // the head was written as UTF-8 bytes; Headers takes ByteStrings
  if (chunked) throw new TypeError('fetch() frames the body itself: a chunked request cannot be sent as bytes');
  const init = { method: req.method, headers };
  if (body.length || (req.requestBodyPermitted && req.method !== 'GET' && req.method !== 'HEAD' && req._body !== null)) init.body = body.slice();
  return { url: target, init, dropped };
}

/**
 * Reads a fetch() Response into the bytes of an HTTP/1.1 response that
 * parseResponse reads: its status, fields (without Content-Encoding,
 * Transfer-Encoding and Content-Length, which described the body before
 * fetch() decoded it; Content-Length is written again for the body read)
 * and body.
 */
export async function fetchResponseBytes(res, requestMethod) {
  const body = new Uint8Array(await res.arrayBuffer());
  let head = `HTTP/1.1 ${res.status} ${res.statusText || ''}`.replace(/ $/, '') + '\r\n';
  const cookies = typeof res.headers.getSetCookie === 'function' ? res.headers.getSetCookie() : [];
  for (const [name, value] of res.headers) {
    if (name === 'content-encoding' || name === 'transfer-encoding' || name === 'content-length') continue;
    if (name === 'set-cookie' && cookies.length) continue;
    head += `${name}: ${value}\r\n`;
  }
  for (const c of cookies) head += `set-cookie: ${c}\r\n`;
  if (requestMethod !== 'HEAD') head += `content-length: ${body.length}\r\n`;
  head += '\r\n';
  // Headers hold ByteStrings: one byte per character
  const h = new Uint8Array(head.length);
  for (let i = 0; i < head.length; i++) h[i] = head.charCodeAt(i) & 0xff;
  const out = new Uint8Array(h.length + body.length);
  out.set(h);
  out.set(body, h.length);
  return out;
}
