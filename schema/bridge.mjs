// The byte formats shared by the ruby.wasm bridge's JS side (js/ruby/) and
// its Ruby side (ruby/net_http_wasm/). This is their one definition:
// tools/gen-schema.mjs writes js/ruby/constants.mjs and
// ruby/net_http_wasm/constants.rb from it (run by build.sh; CI checks the
// generated files are current).
import { headFlags as codecHeadFlags } from './codec.mjs';

/** Records the bridge writes into Ruby's receive buffer: u8 type, u32 LE length, payload. */
export const records = {
  R_HEAD: [1, 'a response head (written by the module, src/abi_bridge.c): u8 flags (H_*), then "\\n"-separated lines: version, code, message, then the fields (HEAD_FIELDS_AT)'],
  R_BODY: [2, 'body bytes'],
  R_END: [3, 'the message ended; the payload is empty, or the fields after decoding, as in R_HEAD from its count on'],
  R_ERROR: [4, 'an error: "Class\\nmessage"'],
  R_SIZE: [5, 'after a head: the body is this many bytes (decimal), BODY_DIRECT or more; the records after it may be taken by body() straight into a String'],
  R_LAST: [6, 'body bytes, and the message ended with them (R_BODY then an empty R_END, in one record)'],
};

/** Return codes of the bridge's reads and writes (negative; a read returns a byte count otherwise). */
export const returnCodes = {
  RC_ERROR: [-1, 'an error; the bridge\'s error() says "Class\\nmessage"'],
  RC_TIMEOUT: [-2, 'the read timeout passed with no data arriving'],
  RC_WOULD_BLOCK: [-4, 'nothing to read yet (a write: no room)'],
  RC_EOF: [-5, 'the stream ended'],
};

/** A read that cannot place the next head record returns -(NEED_BASE + the record's size). */
export const NEED_BASE = 16;

/** Connection states answered by state(). */
export const states = {
  S_EMPTY: [0, 'nothing to read yet'],
  S_DATA: [1, 'data to read'],
  S_END: [2, 'the stream ended, or failed'],
  S_UNSETTLED: [-1, 'settle(): nothing yet, and the host has not looked since Ruby last waited (ask settleLater)'],
};

/** Flags of the request record Ruby hands to send(). */
export const sendFlags = {
  SEND_BODY: [1, 'a body follows'],
  SEND_RESPONSE_BODY: [2, 'the response may have a body (response_body_permitted?)'],
  SEND_DECODE: [4, 'decode_content'],
  SEND_FLAT: [8, 'every field has one value: "name\\nvalue" pairs'],
};

/** Flags of the head record: the codec's head flags (schema/codec.mjs) it passes on. */
export const headFlags = {
  H_VERSION: codecHeadFlags.HEAD_VERSION,
  H_MESSAGE: codecHeadFlags.HEAD_MESSAGE,
  H_INFLATE: codecHeadFlags.HEAD_INFLATE,
  H_DROP_ENCODING: codecHeadFlags.HEAD_DROP_ENCODING,
};

/**
 * The lines of a head record (R_HEAD, after its flags byte). The fields:
 * their count, the names, each field's first value, then (field index,
 * value) for every value after a field's first (Set-Cookie twice...).
 */
export const headLines = {
  HEAD_VERSION_AT: [0, 'the line of http_version (empty unless H_VERSION)'],
  HEAD_CODE_AT: [1, 'the line of the status code'],
  HEAD_MESSAGE_AT: [2, 'the line of the message (empty unless H_MESSAGE)'],
  HEAD_FIELDS_AT: [3, 'the line of the fields\' count'],
};

/** Sizes both sides use. */
export const sizes = {
  UNSENT_MAX: [64 * 1024, 'bytes written and not yet taken by the OS before a write waits for room (write_timeout)'],
  BODY_DIRECT: [64 * 1024, 'a body of known size from this size on is announced by an R_SIZE record'],
  BODY_SEGMENT: [8 * 1024 * 1024, 'the most body bytes Ruby takes into one String before it hands them to the destination'],
};
