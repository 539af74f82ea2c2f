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
    NH_E_TYPE = 12              /* TypeError */
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

#ifdef __cplusplus
}
#endif
#endif
