// The bridge's connections (js/ruby/conn.mjs, made by a transport) by the
// id Ruby knows them by, and the codec's response parsers they read with:
// one per connection, kept for new connections when one closes, configured
// per message from the request's SEND_* flags.
import { ResponseParser } from '../response-parser.mjs';
import { SEND_RESPONSE_BODY, SEND_DECODE } from './constants.mjs';

// Parsers kept for reuse.
const PARSER_POOL = 8;

export class Connections {
  // options: the profile and codec every parser uses
  constructor({ profile, wasmCodec }) {
    this.profile = profile;
    this.wasmCodec = wasmCodec;
    this.conns = new Map(); // id → Conn
    this.parsers = []; // parsers of closed connections, for new ones
    this.nextId = 1;
    this.optionsCache = []; // messageOptions: [flags, strictness] → options
  }

  /** Registers conn under a new id, which it returns. */
  add(conn) {
    const id = this.nextId++;
    conn.id = id;
    this.conns.set(id, conn);
    return id;
  }

  /** A ResponseParser for a new connection: one a closed connection left, started on a new stream, or a new one. */
  takeParser(options) {
    const p = this.parsers.pop();
    if (!p) return new ResponseParser(options);
    p.reset({ ...options, streamOffset: 0 });
    return p;
  }

  releaseParser(p) {
    p.takePending();
    if (this.parsers.length < PARSER_POOL) this.parsers.push(p);
    else p.close();
  }

  /**
   * The options of a message's ResponseParser (one object per flags and
   * strictness: the parser keeps its configuration while they stay the same).
   */
  messageOptions(flags, strict) {
    const k = flags * 2 + (strict ? 1 : 0);
    let o = this.optionsCache[k];
    if (!o) {
      o = {
        responseHasBody: (flags & SEND_RESPONSE_BODY) !== 0,
        decodeContent: (flags & SEND_DECODE) !== 0,
        skipInterim: true,
        strict,
        profile: this.profile,
        codec: this.wasmCodec,
        bodyViews: true, // (Conn#bodyBytes)
        bridgeRecords: true, // (Conn#feed)
      };
      this.optionsCache[k] = o;
    }
    return o;
  }

  /** Closes every connection and frees the kept parsers. */
  closeAll() {
    for (const conn of [...this.conns.values()]) conn.close();
    this.conns.clear();
    for (const p of this.parsers.splice(0)) p.close();
  }
}
