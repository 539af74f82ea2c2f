/*
 * net-http-wasm: Ruby's Net::HTTP message codec.
 *
 * Return convention (every function below that returns int): NH_OK (0), or
 * a non-negative count or flag where stated, on success; NH_ERROR when Ruby
 * would raise: `out` then holds the exception's message and err->cls its
 * class (nh_error_class); NH_NOMEM when an allocation failed.
 *
 * Output goes to nh_buf, a byte buffer the caller owns and the codec grows:
 * zero-initialise it, release it with nh_buf_free.  Input is passed as views
 * (nh_str) into the caller's memory; the codec keeps no pointer to them.
 * Profiles, status codes, error classes and the byte formats' constants are
 * in schema.h, generated from schema/codec.mjs.
 */
#ifndef NETHTTP_H
#define NETHTTP_H

#include <stddef.h>
#include <stdint.h>

#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nh_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} nh_buf;

void nh_buf_free(nh_buf *b);

typedef struct nh_error {
    int cls; /* nh_error_class */
} nh_error;

/* A view of bytes; where a value may be nil, ptr NULL is nil. */
typedef struct nh_str {
    const uint8_t *ptr;
    size_t len;
} nh_str;

/* ---- Forms (form.c): URI.encode_www_form & co ---- */

/* One [key, value] of encode_www_form's params: a value (value.ptr NULL: nil),
 * or, when values is not NULL, an Array of nvalues values (ptr NULL: nil). */
typedef struct nh_form_pair {
    nh_str key;
    nh_str value;
    const nh_str *values;
    size_t nvalues;
} nh_form_pair;

/* Appends URI.encode_www_form(params). */
int nh_encode_www_form(nh_buf *out, const nh_form_pair *params, size_t n);
/* Appends URI.encode_www_form_component(s). */
int nh_encode_www_form_component(nh_buf *out, const uint8_t *s, size_t n);
/* decode_www_form_component: raises on a bad %-escape, appends raw bytes. */
int nh_decode_www_form_component(nh_buf *out, nh_error *err, const uint8_t *s, size_t n);
/* decode_www_form: appends u32 count, then for each pair u32 len + key bytes,
 * u32 len + value bytes (UTF-8, scrubbed). */
int nh_decode_www_form(nh_buf *out, nh_error *err, const uint8_t *s, size_t n,
                       const uint8_t *sep, size_t seplen);

/* ---- Header names (header.c): Net::HTTPHeader#capitalize ---- */

/* Appends capitalize(name) as each_capitalized writes it; binary: a name read
 * from the wire (ASCII-only case mapping), else a UTF-8 String's. */
int nh_capitalize_name(nh_buf *out, const uint8_t *name, size_t n, int profile, int binary);

/* ---- Requests (request.c): Net::HTTPGenericRequest ---- */

typedef struct nh_request nh_request;

nh_request *nh_request_new(void);
void nh_request_free(nh_request *q);

#define NH_NO_INITHEADER ((size_t)-1) /* initheader = nil */

/* Net::HTTPGenericRequest.new(method, uri_or_path, initheader), starting q
 * over: target is URI(target) when is_uri, else a path; body_permitted is
 * response_body_permitted? (decode_content's default); init holds ninit
 * key, value pairs (2 * ninit views; a NULL value is nil). */
int nh_request_init(nh_request *q, int profile, nh_str method, nh_str target, int is_uri,
                    int body_permitted, const nh_str *init, size_t ninit, nh_buf *out, nh_error *err);
/* req[key] = values */
int nh_request_set(nh_request *q, nh_str key, const nh_str *values, size_t n, nh_buf *out,
                   nh_error *err);
/* req.add_field(key, value) for each value */
int nh_request_add_field(nh_request *q, nh_str key, const nh_str *values, size_t n, nh_buf *out,
                         nh_error *err);
/* req.delete(key), or req[key] = nil when via_aset */
int nh_request_delete(nh_request *q, nh_str key, int via_aset);
/* req.set_form_data(params, sep); sep.ptr NULL: '&' */
int nh_request_set_form_data(nh_request *q, const nh_form_pair *params, size_t n, nh_str sep,
                             nh_buf *out, nh_error *err);
/* req.body = body (body.ptr NULL: nil) */
int nh_request_set_body(nh_request *q, nh_str body);
/* req.exec(sock, version, path): replaces out with the request's bytes. */
int nh_request_write(nh_request *q, nh_str version, nh_buf *out, nh_error *err);
/* The head send_request_with_body_stream writes (its Content-Length / chunked
 * check is the caller's); the stream's bytes follow it. */
int nh_request_write_stream_head(nh_request *q, nh_str version, nh_buf *out, nh_error *err);
/* req[key]: 1 with the joined value appended to out, or 0 when absent. */
int nh_request_get(nh_request *q, nh_str key, nh_buf *out);
/* req.decode_content and req.path */
int nh_request_decode_content(const nh_request *q);
nh_str nh_request_path(const nh_request *q);

/* ---- Responses (response.c): Net::HTTPResponse.read_new + reading_body ---- */

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
 * (NH_EV_*, schema.h).  Head block: u8 flags (NH_HEAD_*), str class
 * name, str version, str code, str message, u32 nfields, nfields x (u8
 * name id (NH_COMMON_NAMES), str downcased name, u32 nvalues, nvalues x
 * str); str = u32 length + bytes. */

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
