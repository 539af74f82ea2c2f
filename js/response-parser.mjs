// net-http-wasm: reading HTTP responses as Ruby's Net::HTTP does.
//
//   parseResponse(bytes, options)  → Response     one crossing into WebAssembly
//   new ResponseParser(options)                   incremental: feed(chunk) → events
//
// Both reproduce, byte for byte and error for error, what MRI gives for
//   res = Net::HTTPResponse.read_new(sock)        # (looped over 1xx with skipInterim)
//   res.decode_content = decodeContent
//   res.reading_body(sock, requestMethod != 'HEAD') {}
// over sock = Net::BufferedIO.new(StringIO.new(bytes)): Ruby 4.0 (net-http
// 0.9.1) by default, profile '3.4' for net-http 0.6.0 (they agree on all of it).
import { concatAll } from './bytes.mjs';
import { getDefaultCodec, profileId } from './core.mjs';
import { EMPTY, Response, keepBlock, keepBody, rd32 } from './response.mjs';
import { CFG_SKIP_INTERIM, CFG_STRICT, CONFIG_LEN, DECODE_SLICE, EV_BODY, EV_END, EV_FINAL, EV_HEAD, EV_INTERIM, EV_LENGTH, HEAD_BODY, HEAD_MAX_HEADER_BYTES, MAX_HEADER_BYTES, PROFILES, MAX_HEADER_FIELDS, ONESHOT_MAX_INFLATED, writeConfigRecord } from './schema.mjs';

const encoder = new TextEncoder();
function codecOf(options) {
  return (options && options.codec) || getDefaultCodec();
}

function toBytes(b, what) {
  if (b instanceof Uint8Array) return b;
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (typeof b === 'string') return encoder.encode(b);
  throw new TypeError(`${what} must be a Uint8Array, an ArrayBuffer or a string`);
}

// ---- options ----

// parseResponse holds the whole decoded body in memory, so it bounds it by
// default (ONESHOT_MAX_INFLATED); ResponseParser hands the body over feed by
// feed and has no bound, but feeds compressed input in DECODE_SLICE slices,
// so that the module's memory stays bounded (deflate expands at most about
// 1032:1) whatever the size of a feed.

const DEFAULTS = {
  maxHeaderBytes: MAX_HEADER_BYTES,
  maxHeaderFields: MAX_HEADER_FIELDS,
  maxBodyBytes: Infinity,
  maxInflatedBytes: Infinity,
};

function limit(options, name) {
  const v = options && options[name] != null ? options[name] : DEFAULTS[name];
  if (v === Infinity) return v;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < (name === 'maxInflatedBytes' ? 1 : 0))
    throw new TypeError(`${name} must be a non-negative integer or Infinity`);
  return v;
}

function streamOffsetOf(v) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new TypeError('streamOffset must be a non-negative integer');
  return v;
}

let defaultConfig = null;

function config(options) {
  if (options == null || (options.codec && Object.keys(options).length === 1)) {
    if (!defaultConfig) defaultConfig = Object.freeze(makeConfig({}));
    return defaultConfig;
  }
  return makeConfig(options);
}

function makeConfig(o) {
  const profile = profileId(o);
  const method = o.requestMethod == null ? 'GET' : o.requestMethod;
  if (typeof method !== 'string') throw new TypeError('requestMethod must be a string');
  // reading_body(sock, method != 'HEAD'): as Net::HTTP#send_request decides
  // it, a literal comparison ('head' gets a body read)
  const bodyAllowed = o.responseHasBody != null ? !!o.responseHasBody : method !== 'HEAD';
  return {
    profile,
    bodyAllowed,
    decode: !!o.decodeContent,
    skipInterim: !!o.skipInterim,
    expectContinue: !!o.expectContinue,
    strict: !!o.strict,
    bodyViews: !!o.bodyViews,
    // the ruby.wasm bridge's parsers (js/ruby/conn.mjs): heads come as the
    // records Ruby reads, written by the module (wasm/abi_bridge.c), not as
    // Response objects
    bridgeRecords: !!o.bridgeRecords,
    // under 'head', net/http's own bound of the header lines (1 MiB,
    // Net::HTTPBadResponse) comes before the codec's default one
    maxHeaderBytes: o.maxHeaderBytes == null && profile === PROFILES.head ? HEAD_MAX_HEADER_BYTES : limit(o, 'maxHeaderBytes'),
    maxHeaderFields: limit(o, 'maxHeaderFields'),
    maxBodyBytes: limit(o, 'maxBodyBytes'),
    maxInflatedBytes: limit(o, 'maxInflatedBytes'),
    streamOffset: o.streamOffset == null ? Infinity : streamOffsetOf(o.streamOffset), // Infinity: 0 / keep
  };
}

// The configuration for a message's first response: with expectContinue,
// read_new reads exactly one, so no 1xx is skipped.
function firstConfig(cfg) {
  return cfg.expectContinue && cfg.skipInterim ? { ...cfg, skipInterim: false } : cfg;
}

let defaultConfigBytes = null;

function writeConfig(c, cfg) {
  c.ensure(CONFIG_LEN);
  const u8 = c.u8;
  let p = c.inPtr + c.pos;
  if (cfg === defaultConfig) {
    if (defaultConfigBytes === null) {
      // written once the long way, then copied
      defaultConfigBytes = new Uint8Array(CONFIG_LEN);
      writeConfigBytes(defaultConfigBytes, 0, cfg);
    }
    u8.set(defaultConfigBytes, p);
  } else {
    writeConfigBytes(u8, p, cfg);
  }
  c.pos += CONFIG_LEN;
}

function writeConfigBytes(u8, p, cfg) {
  writeConfigRecord(u8, p, cfg.profile, cfg.bodyAllowed ? 1 : 0, cfg.decode ? 1 : 0,
    (cfg.skipInterim ? CFG_SKIP_INTERIM : 0) | (cfg.strict ? CFG_STRICT : 0),
    cfg.maxHeaderBytes, cfg.maxHeaderFields, cfg.maxBodyBytes, cfg.maxInflatedBytes, cfg.streamOffset);
}

// ---- Response ----

// Reads the events of the last call: `onHead(type, bytes)` gets each head
// block (a copy; a head record from nh_wasm_resp_feed_bridge) and
// `onHead(EV_LENGTH, length)` the body length that follows one there; body
// pieces are collected as [address, length] pairs in `pieces`. Returns the
// address where the next message starts (-1: the message goes on).
function readEvents(c, onHead, pieces) {
  const u8 = c.u8;
  let p = c.outPtr();
  const inBase = rd32(u8, p);
  const dataBase = rd32(u8, p + 4);
  p += 8;
  let end = -1;
  for (;;) {
    const t = u8[p++];
    if (t === 0) break;
    if (t === EV_BODY) {
      const src = u8[p];
      const off = rd32(u8, p + 1);
      const len = rd32(u8, p + 5);
      p += 9;
      if (pieces.length && pieces.src !== src) pieces.mixed = true;
      pieces.src = src;
      pieces.push((src ? dataBase : inBase) + off, len);
    } else if (t === EV_END) {
      end = inBase + rd32(u8, p);
      p += 4;
    } else if (t === EV_LENGTH) {
      onHead(t, rd32(u8, p) + rd32(u8, p + 4) * 4294967296);
      p += 8;
    } else {
      const n = rd32(u8, p);
      onHead(t, keepBlock(c.buffer, p + 4, p + 4 + n));
      p += 4 + n;
    }
  }
  return end;
}


function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// Body pieces [address, length, ...] from `from` to `to` as one new array
// (a small one in the bodies' slab, keepBody; `view`: a view of the
// module's memory when they lie together). Pieces of one message lie in
// one buffer (the input, or the decoded data), in order; the ones in the
// input are compacted in place (the bytes between them are chunk framing
// this call has consumed) and copied out once.
function gather(c, pieces, from, to, view = false) {
  const u8 = c.u8;
  if (to - from === 2) return view ? new Uint8Array(c.buffer, pieces[from], pieces[from + 1]) : keepBody(c.buffer, pieces[from], pieces[from] + pieces[from + 1]);
  const start = pieces[from];
  let ordered = !pieces.mixed;
  for (let i = from + 2; ordered && i < to; i += 2) ordered = pieces[i] >= pieces[i - 2] + pieces[i - 1];
  if (ordered) {
    let dst = start;
    for (let i = from; i < to; i += 2) {
      const src = pieces[i];
      const len = pieces[i + 1];
      if (src !== dst) u8.copyWithin(dst, src, src + len);
      dst += len;
    }
    return view ? new Uint8Array(c.buffer, start, dst - start) : keepBody(c.buffer, start, dst);
  }
  let total = 0;
  for (let i = from; i < to; i += 2) total += pieces[i + 1];
  const out = new Uint8Array(total);
  let o = 0;
  for (let i = from; i < to; i += 2) {
    out.set(u8.subarray(pieces[i], pieces[i] + pieces[i + 1]), o);
    o += pieces[i + 1];
  }
  return out;
}

/**
 * Parses one response from `bytes` (the stream ends after them):
 * `parseResponse(bytes, { requestMethod: 'GET', decodeContent: false,
 * skipInterim: false, profile: '4.0', maxHeaderBytes: 1 MiB (2 MiB under 'head'),
 * maxHeaderFields: 10000, maxBodyBytes: Infinity, maxInflatedBytes: 256 MiB, strict: false })`.
 *
 * A 1xx response is returned as it is (MRI's read_new does that); with
 * `skipInterim: true` they are read and skipped as Net::HTTP#request does
 * (all of 1xx, 101 included) and listed in `response.interim`.
 * `streamOffset`: where `bytes` start in the connection's stream (for the
 * next message of a keep-alive connection, the bytes read before it). Only
 * decoding uses it: a compressed body cut short loses the output that Ruby's
 * zlib had not yet yielded, and that depends on where Net::BufferedIO's
 * 16 KiB reads fall.
 * `strict: true` (not MRI) rejects what RFC 9112 says a recipient must
 * reject, with Net::HTTPBadResponse (see README, "Strict response parsing").
 * Errors: NetHttpError with MRI's class (`rubyClass`) and message.
 */
export function parseResponse(bytes, options) {
  return parseWith(codecOf(options), bytes, options);
}

function parseWith(c, bytes, options) {
  const data = toBytes(bytes, 'bytes');
  let cfg = config(options);
  if (cfg.decode && cfg.maxInflatedBytes === Infinity && (options == null || options.maxInflatedBytes == null))
    cfg = { ...cfg, maxInflatedBytes: ONESHOT_MAX_INFLATED };
  c.begin(CONFIG_LEN + data.length);
  writeConfig(c, cfg);
  c.u8.set(data, c.inPtr + c.pos);
  c.pos += data.length;
  c.call('nh_wasm_resp_parse');
  // the events, read in place: the head blocks are copied out, the body
  // pieces noted (one piece, the usual case, is copied out as it is)
  const u8 = c.u8;
  let p = c.outPtr();
  const inBase = rd32(u8, p);
  const dataBase = rd32(u8, p + 4);
  p += 8;
  let head = null;
  let end = -1;
  let first = -1; // the body's first piece: [address, length]
  let firstLen = 0;
  let firstSrc = 0;
  let pieces = null; // more pieces: as readEvents collects them
  const interim = cfg.skipInterim ? [] : undefined;
  for (;;) {
    const t = u8[p++];
    if (t === 0) break;
    if (t === EV_BODY) {
      const src = u8[p];
      const at = (src ? dataBase : inBase) + rd32(u8, p + 1);
      const len = rd32(u8, p + 5);
      p += 9;
      if (first < 0) {
        first = at;
        firstLen = len;
        firstSrc = src;
      } else {
        if (pieces === null) {
          pieces = [first, firstLen];
          pieces.src = firstSrc;
        }
        if (pieces.src !== src) pieces.mixed = true;
        pieces.src = src;
        pieces.push(at, len);
      }
    } else if (t === EV_END) {
      end = inBase + rd32(u8, p);
      p += 4;
    } else {
      const n = rd32(u8, p);
      const block = keepBlock(c.buffer, p + 4, p + 4 + n);
      p += 4 + n;
      if (t === EV_INTERIM) {
        const res = new Response(block, null, undefined);
        res._codec = c;
        res._profile = cfg.profile;
        interim.push(res);
      }
      else {
        head = block;
        if (t === EV_HEAD) {
          first = -1; // the body follows the final head
          pieces = null;
        }
      }
    }
  }
  if (head === null || end < 0) throw new Error('net-http-wasm: the response parser stopped short');
  const hasBody = (head[0] & HEAD_BODY) !== 0;
  let body = null;
  if (hasBody) {
    if (first < 0) body = new Uint8Array(0);
    else if (pieces === null) body = keepBody(c.buffer, first, first + firstLen);
    else body = gather(c, pieces, 0, pieces.length);
  }
  const restStart = end - c.inPtr - CONFIG_LEN;
  const res = new Response(head, body, restStart < data.length ? data.slice(restStart) : EMPTY);
  res._codec = c;
  res._profile = cfg.profile;
  if (interim) res.interim = interim;
  if (data.length > 1 << 24) c.call('nh_wasm_resp_trim');
  return res;
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry(({ codec, ptr }) => {
        try {
          codec.begin(0);
          codec.call('nh_wasm_resp_free', ptr);
        } catch {
          // the instance is gone or broken: nothing to give back
        }
      })
    : null;

/**
 * An incremental response parser. Feed it the bytes as they arrive, in
 * pieces of any size:
 *
 *   const parser = new ResponseParser({ requestMethod: 'GET', decodeContent: true });
 *   for (const ev of parser.feed(chunk)) ...   // then parser.finish() at EOF
 *
 * Events, in order:
 *   { type: 'continue', response }  with expectContinue: a 100 Continue came
 *                                   first; send the body, the final response
 *                                   follows (any other first response is the
 *                                   final one: do not send the body)
 *   { type: 'interim', response }   a 1xx skipped under skipInterim
 *   { type: 'head', response }      the head is complete (fields as read; MRI
 *                                   changes them while reading the body when
 *                                   decoding, and so does this object by 'end')
 *   { type: 'body', data }          body bytes (decoded with decodeContent);
 *                                   one event per feed at most
 *   { type: 'end', response, rest } the message is complete; `rest` holds the
 *                                   bytes after it (a copy)
 * finish() says the stream ended: read-to-EOF bodies end there, a truncated
 * message raises MRI's EOFError. Errors are thrown as NetHttpError and thrown
 * again by later calls until reset().
 *
 * After 'end' the parser keeps the bytes after the message (and any fed
 * later: feed() then returns no events) as the start of the next one; call
 * reset(options) to read it: the kept bytes are read first by the next
 * feed() (feed(new Uint8Array(0)) reads them alone) or finish().
 * Memory: in the module, the longest head line, the header store, one
 * feed's input and (decoding) what 4 KiB of it inflate to; in JS, the feed's
 * body event; never the whole body. close() frees the WebAssembly side (a
 * FinalizationRegistry does it too if you forget).
 * `bodyViews: true`: a body event's data is a view of the module's memory
 * (no copy), valid until the next call into the parser or its codec.
 */
export class ResponseParser {
  constructor(options) {
    this._codec = codecOf(options);
    this._cfg = config(options);
    const c = this._codec;
    c.begin(CONFIG_LEN);
    writeConfig(c, firstConfig(this._cfg));
    c.call('nh_wasm_resp_new');
    this._awaitContinue = this._cfg.expectContinue;
    this._ptr = rd32(c.u8, c.outPtr());
    this._token = {};
    if (registry) registry.register(this, { codec: c, ptr: this._ptr }, this._token);
    this._response = null;
    this._fields = null;
    this._pending = null;
    this._done = false;
    this._plain = false; // the current message's body is not inflated
  }

  _run(chunk, eof) {
    if (!this._ptr) throw new Error('ResponseParser: closed');
    if (this._done) {
      // the next message's bytes: kept until reset()
      if (chunk.length) this._pending = this._pending ? concat(this._pending, chunk) : chunk.slice();
      return [];
    }
    let data = chunk;
    if (this._pending) {
      data = chunk.length ? concat(this._pending, chunk) : this._pending;
      this._pending = null;
    }
    // (a body shown not to be inflated goes in at once)
    if (!this._cfg.decode || this._plain || data.length <= DECODE_SLICE) return this._feedOnce(data, eof);
    // decoding: slice by slice (the result does not depend on how the
    // stream is cut), one body event for the whole feed; once the body shows
    // it is not being inflated, the rest goes in at once
    const events = [];
    const bodies = [];
    for (let off = 0, to = 0; off < data.length; off = to) {
      to = this._plain ? data.length : Math.min(off + DECODE_SLICE, data.length);
      for (const e of this._feedOnce(data.subarray(off, to), eof && to === data.length)) {
        if (e.type === 'body') {
          // (a view is overwritten by the next slice)
          bodies.push(this._cfg.bodyViews ? keepBody(this._codec.buffer, e.data.byteOffset, e.data.byteOffset + e.data.byteLength) : e.data);
          continue;
        }
        if (e.type === 'end') {
          if (bodies.length) events.push({ type: 'body', data: concatAll(bodies) });
          bodies.length = 0;
          if (to < data.length) {
            // the next message's bytes: this slice's rest and the slices after it
            e.rest = concat(e.rest, data.subarray(to));
            this._pending = e.rest;
          }
          events.push(e);
          return events;
        }
        events.push(e);
      }
    }
    if (bodies.length) events.push({ type: 'body', data: concatAll(bodies) });
    return events;
  }

  _feedOnce(data, eof) {
    const c = this._codec;
    c.begin(data.length);
    c.u8.set(data, c.inPtr);
    c.pos = data.length;
    const records = this._cfg.bridgeRecords;
    c.call(records ? 'nh_wasm_resp_feed_bridge' : 'nh_wasm_resp_feed', this._ptr, eof ? 1 : 0);
    const events = [];
    const pieces = [];
    const flush = (at) => {
      if (at > 0) events.push({ type: 'body', data: gather(c, pieces, 0, at, this._cfg.bodyViews) });
      pieces.length = 0;
    };
    const end = readEvents(
      c,
      (t, block) => {
        if (records) {
          // { type: 'head', record, length }; the fields after decoding
          // come with 'end'
          if (t === EV_HEAD) events.push({ type: 'head', record: block, length: -1 });
          else if (t === EV_LENGTH) events[events.length - 1].length = block;
          else if (t === EV_FINAL) this._fields = block;
        } else if (t === EV_FINAL) this._response._setHead(block);
        else {
          const res = new Response(block, undefined, undefined);
          // the helpers (and each_capitalized) ask this parser's codec
          res._codec = c;
          res._profile = this._cfg.profile;
          if (t === EV_HEAD) this._response = res;
          events.push({ type: t === EV_HEAD ? 'head' : 'interim', response: res });
        }
      },
      pieces,
    );
    // body bytes straight from the input: this message is not inflated
    if (pieces.length && !pieces.mixed && pieces.src === 0) this._plain = true;
    flush(pieces.length);
    if (end >= 0) {
      const rest = end < c.inPtr + data.length ? c.u8.slice(end, c.inPtr + data.length) : EMPTY;
      this._done = true;
      this._pending = rest.length ? rest : null;
      events.push(records ? { type: 'end', fields: this._fields, rest } : { type: 'end', response: this._response, rest });
    }
    if (data.length > 1 << 24) c.call('nh_wasm_resp_trim');
    return events;
  }

  /** Feeds the next bytes of the stream; returns the events they complete. */
  feed(chunk) {
    return this._continued(this._run(toBytes(chunk, 'chunk'), false), false);
  }

  /** The stream ended: returns the last events, or throws MRI's EOFError. */
  finish() {
    return this._continued(this._run(EMPTY, true), true);
  }

  // expectContinue: Net::HTTPGenericRequest#wait_for_continue reads one
  // response with read_new; a 100 (Net::HTTPContinue) becomes a 'continue'
  // event and the final response is read next; any other response is the
  // final one (the body is not sent), a 1xx included (throw :response).
  _continued(events, eof) {
    if (!this._awaitContinue) return events;
    const head = events.find((e) => e.type === 'head');
    if (!head) return events;
    this._awaitContinue = false;
    if (head.response.className !== 'Net::HTTPContinue') return events;
    // a 100 has no body: its head and end are in these events
    const out = [{ type: 'continue', response: head.response }];
    this._rearm(this._cfg);
    return out.concat(this._run(EMPTY, eof));
  }

  _rearm(cfg) {
    const c = this._codec;
    c.begin(CONFIG_LEN);
    writeConfig(c, cfg);
    c.call('nh_wasm_resp_reset', this._ptr);
    this._response = null;
    this._fields = null;
    this._done = false;
    this._plain = false;
  }

  /**
   * Starts the next message on the same stream (options as the
   * constructor's; default: the same). The stream position carries on, as
   * the next message follows this one; `{ streamOffset: 0 }` starts a new
   * stream (better: a new parser per connection).
   */
  reset(options) {
    if (!this._ptr) throw new Error('ResponseParser: closed');
    if (options !== undefined) this._cfg = config(options);
    const cfg = firstConfig(this._cfg);
    this._rearm(options && options.streamOffset != null ? cfg : { ...cfg, streamOffset: Infinity });
    this._awaitContinue = this._cfg.expectContinue;
  }

  /** The bytes after the completed message that the next message will start with. */
  get pending() {
    return this._pending ? this._pending.slice() : new Uint8Array(0);
  }

  /** Removes the kept bytes and returns them (to hand the stream to something else). */
  takePending() {
    const p = this._pending || new Uint8Array(0);
    this._pending = null;
    return p;
  }

  /** Frees the WebAssembly side; the parser cannot be used after. */
  close() {
    if (!this._ptr) return;
    if (registry) registry.unregister(this._token);
    const c = this._codec;
    c.begin(0);
    c.call('nh_wasm_resp_free', this._ptr);
    this._ptr = 0;
  }
}

/** The response API bound to one codec (merged into createNetHttp's result). */
export function bindResponse(codec) {
  const bind = (options) => Object.assign({}, options, { codec });
  class BoundResponseParser extends ResponseParser {
    constructor(options) {
      super(bind(options));
    }
  }
  return {
    parseResponse: (bytes, options) => parseWith(codec, bytes, options),
    ResponseParser: BoundResponseParser,
    Response,
  };
}
