// The codec's byte formats and constants: their one definition.
// tools/gen-schema.mjs writes src/schema.h (C) and js/schema.mjs (JS) from
// this file, and the bridge's constants from schema/bridge.mjs (run by
// build.sh; CI checks that the generated files are current).
//
// Each entry: NAME: [value, description].

/** Which MRI the codec reproduces (nh_profile); the JS option string is the third item. */
export const profiles = {
  PROFILE_40: [0, 'Ruby 4.0: net-http 0.9.1, uri 1.1.1', '4.0'],
  PROFILE_34: [1, 'Ruby 3.4: net-http 0.6.0, uri 1.0.2', '3.4'],
  PROFILE_HEAD: [2, "Ruby 4.1.0 as @ruby/head-wasm-wasi 2.10.1 ships it: 4.0's net-http (0.9.1) and uri with its checks of field names and sizes and of the response head's size", 'head'],
};


/** What every function of the C API and the wasm ABI returns (nh_status). */
export const status = {
  OK: [0, 'success'],
  ERROR: [-2, 'a Ruby exception: the output buffer holds its message, the error its class'],
  NOMEM: [-3, 'allocation failed'],
};

/** Ruby exception classes the codec reports (nh_error_class); the class name is the third item. */
export const errorClasses = {
  E_NONE: [0, 'no error', null],
  E_ARGUMENT: [1, 'ArgumentError', 'ArgumentError'],
  E_URI_INVALID: [2, 'URI::InvalidURIError', 'URI::InvalidURIError'],
  E_INDEX: [3, 'IndexError', 'IndexError'],
  E_BAD_RESPONSE: [4, 'Net::HTTPBadResponse', 'Net::HTTPBadResponse'],
  E_HEADER_SYNTAX: [5, 'Net::HTTPHeaderSyntaxError', 'Net::HTTPHeaderSyntaxError'],
  E_EOF: [6, 'EOFError', 'EOFError'],
  E_ZLIB_DATA: [7, 'Zlib::DataError', 'Zlib::DataError'],
  E_ZLIB_BUF: [8, 'Zlib::BufError', 'Zlib::BufError'],
  E_LIMIT: [9, 'a configured bound was exceeded', 'NetHttpWasm::LimitError'],
  E_NOMEM: [10, 'NoMemoryError', 'NoMemoryError'],
  E_ENCODING_COMPAT: [11, 'Encoding::CompatibilityError', 'Encoding::CompatibilityError'],
  E_TYPE: [12, 'TypeError (a malformed input record)', 'TypeError'],
  E_RUNTIME: [13, 'RuntimeError', 'RuntimeError'],
  E_URI_COMPONENT: [14, 'URI::InvalidComponentError', 'URI::InvalidComponentError'],
  E_ZLIB_NEED_DICT: [15, 'Zlib::NeedDict', 'Zlib::NeedDict'],
  E_NO_METHOD: [16, 'NoMethodError (type_params, a negative Content-Range length)', 'NoMethodError'],
};

/** Operations of the request record (the wasm ABI's encoding of the calls made on a request). */
export const requestOps = {
  OP_END: [0, 'end of record: returns u8 decode_content, then the path'],
  OP_SET: [1, 'req[key] = values: str key, u32 n, n x str'],
  OP_ADD: [2, 'add_field: str key, u32 n, n x str'],
  OP_DELETE: [3, 'delete: str key, u8 via_aset (req[key] = nil)'],
  OP_FORM: [4, 'set_form_data: pairs, u8 has_sep, [str sep]'],
  OP_BODY: [5, 'body=: u8 has, [str]'],
  OP_EXEC: [6, 'exec: str version; returns the bytes'],
  OP_GET: [7, 'req[key]: str key; returns u8 found, the joined value'],
  OP_DUMP: [8, 'every field: returns u32 n, n x (str name, u32 m, m x str)'],
  OP_QUERY: [9, 'a typed reader: u8 kind, str arg'],
  OP_SET_RAW: [10, '@header[lkey] = [value] (helpers): str downcased key, str value'],
  OP_EXEC_STREAM: [11, 'exec with a body stream: str version; returns the head (supply_default_content_type, write_header)'],
};

/** Typed readers of Net::HTTPHeader (header_fields.c). */
export const headerQueries = {
  HQ_RANGE: [1, 'range: pairs of Integer#to_s (begin, end)'],
  HQ_CONTENT_RANGE: [2, 'content_range: first, last'],
  HQ_CONTENT_LENGTH: [3, 'content_length'],
  HQ_CHUNKED: [4, 'chunked?'],
  HQ_CONTENT_TYPE: [5, 'content_type'],
  HQ_MAIN_TYPE: [6, 'main_type'],
  HQ_SUB_TYPE: [7, 'sub_type'],
  HQ_TYPE_PARAMS: [8, 'type_params: key, value, ...'],
  HQ_CONNECTION_CLOSE: [9, 'connection_close?'],
  HQ_KEEP_ALIVE: [10, 'connection_keep_alive?'],
  HQ_FETCH: [11, 'fetch(arg): the value, or the downcased key and KeyError\'s message'],
  HQ_GET_FIELDS: [12, 'get_fields(arg): the values'],
  HQ_EACH_CAPITALIZED: [13, 'each_capitalized: capitalized name, joined value, ...'],
};

/** Events of the response parser (nh_resp_feed). */
export const responseEvents = {
  EV_HEAD: [1, 'u32 n, head block: the response as read_new returns it'],
  EV_BODY: [2, 'u8 src, u32 off, u32 len: body bytes at in + off (src 0) or at the parser\'s data + off (src 1, decoded)'],
  EV_END: [3, 'u32 off: the message ended; in + off.. is the next one'],
  EV_INTERIM: [4, 'u32 n, head block of a 1xx skipped under skip_interim'],
  EV_FINAL: [5, 'u32 n, head block after the body, when decoding changed the fields'],
  EV_LENGTH: [6, 'u32 low, u32 high: after a head whose body goes on past this call, the length its framing gives (Content-Length, Content-Range; not decoded); nh_wasm_resp_feed_bridge only'],
};

/** Flags of a head block (its first byte). */
export const headFlags = {
  HEAD_VERSION: [1, 'http_version is set'],
  HEAD_MESSAGE: [2, 'message is set'],
  HEAD_BODY: [4, 'a body is read (body_exist)'],
  HEAD_ASCII: [8, 'every string byte of the block is below 0x80'],
  HEAD_INFLATE: [16, 'Net::HTTPResponse#inflater inflates: content-encoding deleted, the body destination made binary'],
  HEAD_DROP_ENCODING: [32, 'Net::HTTPResponse#inflater only deletes content-encoding (none, identity)'],
  HEAD_ASCII_BLOCK: [64, 'every byte of the block after this one is below 0x80 (its lengths and name ids too): it reads as one UTF-8 text'],
};

/**
 * Field names most responses carry. A head block gives each field the id of
 * its name here (index + 1; 0: another name), so that readers can use
 * constant strings instead of decoding names.
 */
export const commonNames = [
  'accept-ranges', 'access-control-allow-origin', 'age', 'alt-svc', 'cache-control', 'connection',
  'content-disposition', 'content-encoding', 'content-language', 'content-length', 'content-range',
  'content-security-policy', 'content-type', 'date', 'etag', 'expires', 'keep-alive', 'last-modified',
  'link', 'location', 'pragma', 'referrer-policy', 'retry-after', 'server', 'set-cookie',
  'strict-transport-security', 'transfer-encoding', 'vary', 'via', 'www-authenticate',
  'x-content-type-options', 'x-frame-options', 'x-powered-by', 'x-request-id', 'x-xss-protection',
];

/** Flags byte of the response-parser config record. */
export const configFlags = {
  CFG_SKIP_INTERIM: [1, 'read_new again while the response is a 1xx'],
  CFG_STRICT: [2, 'strict RFC 9112 mode'],
};

/**
 * Fixed-size records (little-endian), each field [name, type (u8, u32 or
 * u64), meaning]: tools/gen-schema.mjs writes from each its length
 * (NH_<NAME>_LEN / <NAME>_LEN), a C struct with a reader
 * (nh_<name>_record_read) and a JS writer (write<Name>Record, the fields as
 * arguments in order; a u64 is a number, Infinity all ones).
 */
export const records = {
  config: {
    doc: 'the response parser\'s configuration: the start of the input of nh_wasm_resp_new, nh_wasm_resp_reset and nh_wasm_resp_parse',
    fields: [
      ['profile', 'u8', 'PROFILE_*: 0 Ruby 4.0, 1 Ruby 3.4, 2 head (any other value 4.0)'],
      ['body_allowed', 'u8', "reading_body's second argument: 0 for a HEAD request"],
      ['decode', 'u8', 'res.decode_content = true (gzip, deflate)'],
      ['flags', 'u8', 'CFG_*'],
      ['max_header_bytes', 'u64', 'bound of the status line and header block (all ones: none)'],
      ['max_fields', 'u64', 'bound of header lines (all ones: none)'],
      ['max_body_bytes', 'u64', 'bound of body bytes as framed on the wire (all ones: none)'],
      ['max_inflated_bytes', 'u64', 'bound of body bytes after decoding (all ones: none)'],
      ['stream_offset', 'u64', "where the bytes fed start in the connection's stream (all ones: 0 for a new parser or a one-shot parse, kept by a reset)"],
    ],
  },
};

const SIZES = { u8: 1, u32: 4, u64: 8 };
/** A record's fields with their byte offsets ({ name, type, doc, at }) and its length. */
export function recordLayout(rec) {
  let at = 0;
  const fields = rec.fields.map(([name, type, doc]) => {
    if (!SIZES[type]) throw new Error(`record field ${name}: unknown type ${type}`);
    const f = { name, type, doc, at };
    at += SIZES[type];
    return f;
  });
  return { fields, len: at };
}

/** Sizes and limits. */
export const limits = {
  MAX_HEADER_BYTES: [1048576, 'default bound of the status line + header block'],
  MAX_HEADER_FIELDS: [10000, 'default bound of header lines'],
  INIT_KEY_MAX: [1024, 'initialize_http_header: longest key'],
  HEAD_KEY_MAX: [1024, "head's Net::HTTPHeader::MAX_KEY_LENGTH: longest field name (PROFILE_HEAD)"],
  HEAD_FIELD_MAX: [65536, "head's Net::HTTPHeader::MAX_FIELD_LENGTH: longest field value (PROFILE_HEAD)"],
  HEAD_RESPONSE_HEADER_MAX: [1048576, "head's Net::HTTPResponse::MAX_RESPONSE_HEADER_LENGTH: bound of the header lines (PROFILE_HEAD)"],
  HEAD_MAX_HEADER_BYTES: [2097152, "default bound of the status line + header block under PROFILE_HEAD, so that head's own bound of the header lines comes first"],
  INIT_VALUE_MAX: [65536, 'initialize_http_header: longest value'],
  ONESHOT_MAX_INFLATED: [268435456, 'parseResponse: default bound of the decoded body'],
  DECODE_SLICE: [4096, 'ResponseParser feeds compressed input in slices of this size'],
};
