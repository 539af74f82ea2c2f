/*
 * net-http-wasm: Ruby's Net::HTTP message codec.
 *
 * Every entry point is stateless: the caller passes its input and an output
 * buffer (nh_buf) that the codec grows with realloc as needed.  A call returns
 * NH_OK (or a non-negative length) on success and a negative nh_status on
 * failure; on NH_ERROR the output buffer holds the message of the Ruby
 * exception that MRI raises for the same input, and err->cls names its class.
 */
#ifndef NETHTTP_H
#define NETHTTP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which MRI the codec reproduces. */
typedef enum nh_profile {
    NH_PROFILE_40 = 0, /* Ruby 4.0: net-http 0.9.1, uri 1.1.1 */
    NH_PROFILE_34 = 1  /* Ruby 3.4: net-http 0.6.0, uri 1.0.2 */
} nh_profile;

typedef enum nh_status {
    NH_OK = 0,
    NH_NEED_MORE = -1, /* incremental parsing: feed more bytes */
    NH_ERROR = -2,     /* a Ruby exception: see nh_error */
    NH_NOMEM = -3      /* allocation failed */
} nh_status;

/* Ruby exception classes the codec reports. */
typedef enum nh_error_class {
    NH_E_NONE = 0,
    NH_E_ARGUMENT = 1,          /* ArgumentError */
    NH_E_URI_INVALID = 2,       /* URI::InvalidURIError */
    NH_E_INDEX = 3,             /* IndexError */
    NH_E_BAD_RESPONSE = 4,      /* Net::HTTPBadResponse */
    NH_E_HEADER_SYNTAX = 5,     /* Net::HTTPHeaderSyntaxError */
    NH_E_EOF = 6,               /* EOFError */
    NH_E_ZLIB_DATA = 7,         /* Zlib::DataError */
    NH_E_ZLIB_BUF = 8,          /* Zlib::BufError */
    NH_E_LIMIT = 9,             /* NetHttpWasm::LimitError: a configured bound was exceeded */
    NH_E_NOMEM = 10,            /* NoMemoryError */
    NH_E_ENCODING_COMPAT = 11,  /* Encoding::CompatibilityError */
    NH_E_TYPE = 12,             /* TypeError */
    NH_E_RUNTIME = 13,          /* RuntimeError */
    NH_E_URI_COMPONENT = 14,    /* URI::InvalidComponentError */
    NH_E_ZLIB_NEED_DICT = 15    /* Zlib::NeedDict */
} nh_error_class;

/* A growable byte buffer owned by the caller.  Zero-initialise it; release it
 * with nh_buf_free. */
typedef struct nh_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} nh_buf;

int nh_buf_reserve(nh_buf *b, size_t extra);
int nh_buf_append(nh_buf *b, const void *p, size_t n);
int nh_buf_putc(nh_buf *b, uint8_t c);
void nh_buf_free(nh_buf *b);

typedef struct nh_error {
    int cls; /* nh_error_class */
} nh_error;

/* Sets the error class, replaces `out` with the message and returns NH_ERROR. */
int nh_fail(nh_buf *out, nh_error *err, int cls, const char *msg);

/* ---- Ruby String semantics (rstring.c, casemap.c) --------------------- */

/* String#downcase / String#capitalize with full Unicode case mapping, as
 * the profile's Ruby does it.  `s` must be valid UTF-8.  Appends to out. */
int nh_utf8_downcase(nh_buf *out, const uint8_t *s, size_t n, int profile);
int nh_utf8_capitalize(nh_buf *out, const uint8_t *s, size_t n, int profile);
/* ASCII-only variants, as Ruby applies them to binary (ASCII-8BIT) strings. */
int nh_ascii_downcase(nh_buf *out, const uint8_t *s, size_t n);
int nh_ascii_capitalize(nh_buf *out, const uint8_t *s, size_t n);
/* 1 if String#inspect shows code point `cp` literally in a UTF-8 string. */
int nh_unicode_printable(uint32_t cp, int profile);
/* String#inspect / String#dump of a UTF-8 string (utf8 = 1) or of a binary
 * string (utf8 = 0).  Appends the quoted form to out. */
int nh_inspect(nh_buf *out, const uint8_t *s, size_t n, int utf8, int profile);
int nh_dump(nh_buf *out, const uint8_t *s, size_t n, int utf8);
/* String#scrub: replaces each invalid UTF-8 sequence with U+FFFD. */
int nh_scrub_utf8(nh_buf *out, const uint8_t *s, size_t n);
/* 1 if s is valid UTF-8. */
int nh_utf8_valid(const uint8_t *s, size_t n);
/* String#strip: the [start, end) range that remains. */
void nh_strip(const uint8_t *s, size_t n, size_t *start, size_t *end);

/* ---- Header store (header.c): Net::HTTPHeader ------------------------- */

/* Fields keyed by their downcased name, each with a list of values, in
 * first-insertion order, as the Hash inside Net::HTTPHeader keeps them. */
typedef struct nh_field {
    uint32_t name_off, name_len; /* downcased name, in the store's bytes */
    uint32_t head, tail;         /* value list, NH_NIL-terminated */
    uint32_t nvals;
    uint32_t live;
} nh_field;

typedef struct nh_value {
    uint32_t off, len, next;
} nh_value;

#define NH_NIL UINT32_MAX

typedef struct nh_headers {
    nh_buf bytes;      /* names and values */
    nh_field *fields;
    uint32_t nfields, capfields, nlive;
    nh_value *vals;
    uint32_t nvals, capvals;
    uint32_t *index;   /* open addressing: field index + 1, 0 empty */
    uint32_t index_cap;
    int profile;
    int binary;        /* names read from the wire: ASCII-only case mapping */
} nh_headers;

void nh_headers_init(nh_headers *h, int profile, int binary);
void nh_headers_free(nh_headers *h);
void nh_headers_reset(nh_headers *h);
/* Downcases `key` as Net::HTTPHeader does (key.downcase) into `out`. */
int nh_headers_key(const nh_headers *h, nh_buf *out, const uint8_t *key, size_t klen);
/* Index of the live field with downcased name `lkey`, or -1. */
long nh_headers_find(const nh_headers *h, const uint8_t *lkey, size_t llen);
/* The Hash operations behind []=, add_field and delete; `lkey` downcased.
 * set replaces the values (keeping the position of an existing key). */
int nh_headers_set(nh_headers *h, const uint8_t *lkey, size_t llen);
int nh_headers_push(nh_headers *h, long field, const uint8_t *val, size_t vlen);
int nh_headers_delete(nh_headers *h, const uint8_t *lkey, size_t llen);
/* Appends v1, v2, ... joined with ", " (what self[key] returns). */
int nh_headers_join(const nh_headers *h, long field, nh_buf *out);
/* Appends Net::HTTPHeader#capitalize(name). */
int nh_capitalize_name(nh_buf *out, const uint8_t *name, size_t n, int profile, int binary);
/* Appends "Name: v1, v2\r\n" for every field (each_capitalized). */
int nh_headers_write(const nh_headers *h, nh_buf *out);

/* ---- Typed readers (header_fields.c): Net::HTTPHeader#range & co ------ */

enum nh_header_query_kind {
    NH_HQ_RANGE = 1,            /* range: pairs of Integer#to_s (begin, end) */
    NH_HQ_CONTENT_RANGE = 2,    /* content_range: first, last */
    NH_HQ_CONTENT_LENGTH = 3,   /* content_length */
    NH_HQ_CHUNKED = 4,          /* chunked? */
    NH_HQ_CONTENT_TYPE = 5,     /* content_type */
    NH_HQ_MAIN_TYPE = 6,        /* main_type */
    NH_HQ_SUB_TYPE = 7,         /* sub_type */
    NH_HQ_TYPE_PARAMS = 8,      /* type_params: key, value, ... */
    NH_HQ_CONNECTION_CLOSE = 9, /* connection_close? */
    NH_HQ_KEEP_ALIVE = 10,      /* connection_keep_alive? */
    NH_HQ_FETCH = 11,           /* fetch(arg): found: the value; else the
                                 * downcased key and KeyError's message */
    NH_HQ_GET_FIELDS = 12       /* get_fields(arg): the values */
};

/* Runs a reader over the store.  Out: u8 tag (0 nil or false, 1 a value or
 * true), u32 n, n x (u32 length, bytes).  Raises as MRI does
 * (Net::HTTPHeaderSyntaxError, NoMethodError). */
int nh_header_query(const nh_headers *h, int kind, const uint8_t *arg, size_t alen, nh_buf *out,
                    nh_error *err);

/* ---- Form encoding (form.c): URI.encode_www_form & co ----------------- */

int nh_encode_www_form_component(nh_buf *out, const uint8_t *s, size_t n);
/* decode_www_form_component: raises on a bad %-escape, returns raw bytes. */
int nh_decode_www_form_component(nh_buf *out, nh_error *err, const uint8_t *s, size_t n);
/* decode_www_form: appends u32 count, then for each pair u32 len + key bytes,
 * u32 len + value bytes (UTF-8, scrubbed). */
int nh_decode_www_form(nh_buf *out, nh_error *err, const uint8_t *s, size_t n,
                       const uint8_t *sep, size_t seplen);

/* ---- Requests (request.c): Net::HTTPGenericRequest ------------------ */

/* Replays a request record (the constructor's arguments and the calls made
 * on the request since; layout in abi.c) and performs its final operation:
 * exec (the request's bytes), get (a field), dump (all fields) or, when the
 * record just ends, a check that returns one byte, decode_content. */
int nh_request(const uint8_t *in, size_t in_len, nh_buf *out, nh_error *err);
/* The same with caller-owned scratch state whose buffers are reused from
 * call to call (nothing else carries over). */
typedef struct nh_req nh_req;
nh_req *nh_req_new(void);
void nh_req_free(nh_req *q);
int nh_request_run(nh_req *q, const uint8_t *in, size_t in_len, nh_buf *out, nh_error *err);
/* Net::HTTPGenericRequest#write_header for a header Hash held by Ruby (the
 * ruby.wasm bridge's request record, schema/bridge.mjs): the request line
 * and fields, in `out`. */
int nh_write_header(const uint8_t *rec, size_t len, nh_buf *out, nh_error *err);

/* ---- Responses (response.c): Net::HTTPResponse.read_new + reading_body --- */

/* Error classes only responses raise (outside the shared enum's range). */
#define NH_E_NO_METHOD 20 /* NoMethodError (a negative Content-Range length) */

#define NH_UNLIMITED UINT64_MAX

typedef struct nh_resp_config {
    int profile;              /* nh_profile */
    int body_allowed;         /* the request's response_body_permitted? (false for HEAD) */
    int decode;               /* res.decode_content = true */
    int skip_interim;         /* read_new again while the response is a 1xx, as
                               * Net::HTTP#transport_request does */
    int strict;               /* reject what RFC 9112 says a recipient must
                               * reject or may treat as invalid (see
                               * "Strict mode" in response.c); off: MRI */
    uint64_t max_header_bytes;   /* status line + header block; NH_UNLIMITED for none */
    uint64_t max_fields;         /* header lines (add_field calls) */
    uint64_t max_body_bytes;     /* body bytes as framed on the wire */
    uint64_t max_inflated_bytes; /* body bytes after content decoding */
} nh_resp_config;

/* Fills cfg with the defaults: profile 4.0, body allowed, no decoding,
 * 1 MiB of header block, 10000 header lines, bodies unlimited. */
void nh_resp_config_default(nh_resp_config *cfg);

/* An incremental response parser: bytes in chunks of any size, events out.
 * Memory: the longest line of the head (or chunk-size line) plus the header
 * store plus one call's inflated output (and up to 16 KiB that zlib would
 * hold back); never the body. */
typedef struct nh_resp nh_resp;

nh_resp *nh_resp_new(void);
void nh_resp_free(nh_resp *p);
/* Starts the next message with cfg (buffers and stream position are kept). */
void nh_resp_reset(nh_resp *p, const nh_resp_config *cfg);

/* Events appended to `ev` by nh_resp_feed, little-endian:
 *   NH_EV_HEAD     u32 n, n bytes head block: the response as read_new returns it
 *   NH_EV_INTERIM  u32 n, head block of a 1xx skipped under skip_interim
 *   NH_EV_BODY     u8 src, u32 off, u32 len: body bytes at `in` + off (src 0)
 *                  or at nh_resp_data(p) + off (src 1, decoded), valid until
 *                  the next call
 *   NH_EV_FINAL    u32 n, head block after reading the body, when decoding
 *                  changed the fields (content-encoding, content-length)
 *   NH_EV_END      u32 off: the message ended; `in` + off.. is the next one
 * Head block: u8 flags (1 has version, 2 has message, 4 body read, 8 ASCII), str class
 * name, str version, str code, str message, u32 nfields, nfields x (str
 * downcased name, u32 nvalues, nvalues x str); str = u32 length + bytes. */
enum { NH_EV_HEAD = 1, NH_EV_BODY = 2, NH_EV_END = 3, NH_EV_INTERIM = 4, NH_EV_FINAL = 5 };
#define NH_HEAD_VERSION 1
#define NH_HEAD_MESSAGE 2
#define NH_HEAD_BODY 4
#define NH_HEAD_ASCII 8 /* every string byte of the block is below 0x80 */

/* Consumes in[0..n) (eof: the stream ends after these bytes).  Returns NH_OK
 * with events appended to ev, or NH_ERROR with the Ruby exception in msg and
 * err (the parser then repeats that error until reset), or NH_NOMEM.  After
 * NH_EV_END the parser takes no more bytes until reset. */
int nh_resp_feed(nh_resp *p, const uint8_t *in, size_t n, int eof, nh_buf *ev, nh_buf *msg,
                 nh_error *err);
/* The stream position of the next byte fed (0 for a new parser; reset keeps
 * it, as the next message follows on the same stream).  Only decoding looks
 * at it: Ruby's zlib yields at boundaries that depend on where
 * Net::BufferedIO's 16 KiB reads fall (see response.c). */
void nh_resp_set_stream_offset(nh_resp *p, uint64_t off);
/* Base of src-1 body events of the last feed. */
const uint8_t *nh_resp_data(const nh_resp *p);
/* 1 once NH_EV_END was produced. */
int nh_resp_done(const nh_resp *p);

#ifdef __cplusplus
}
#endif
#endif
