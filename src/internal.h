/* Shared between the codec's files; not part of the public API. */
#ifndef NETHTTP_INTERNAL_H
#define NETHTTP_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "nethttp.h"

int nh_buf_reserve(nh_buf *b, size_t extra);
int nh_buf_append(nh_buf *b, const void *p, size_t n);
int nh_buf_putc(nh_buf *b, uint8_t c);
/* Sets the error class, replaces `out` with the message and returns NH_ERROR. */
int nh_fail(nh_buf *out, nh_error *err, int cls, const char *msg);

/* memcpy for the short strings of a message head (names, values, lines):
 * eight bytes a move, where the C library's memcpy moves them one by one in
 * WebAssembly.  The regions must not overlap.  nh_copy is the function, the
 * inline form is for the hottest loops (the module stays small). */
void nh_copy(uint8_t *d, const uint8_t *s, size_t n);
static inline void nh_copy_inline(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n > 64) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            memcpy(d + i, s + i, 8);
        memcpy(d + n - 8, s + n - 8, 8); /* the last eight, overlapping */
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the word-at-a-time helpers read bytes little-endian"
#endif

/* The word-at-a-time helpers' constants: 0x01 and 0x80 in each of eight bytes. */
#define NH_ONES 0x0101010101010101u
#define NH_HIGHS 0x8080808080808080u

/* memcmp(a, b, n) == 0 for the short strings of a head (names): eight
 * bytes a step, inline. */
static inline int nh_same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t x, y;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        memcpy(&x, a + n - 8, 8); /* the last eight, overlapping */
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t p, q, r, t;
        memcpy(&p, a, 4);
        memcpy(&q, b, 4);
        memcpy(&r, a + n - 4, 4);
        memcpy(&t, b + n - 4, 4);
        return p == q && r == t;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* The bytes of w (eight read little-endian) equal to c, flagged by their
 * high bit: the lowest flag is the first such byte (a borrow flags only
 * bytes above one), so that the first of several bytes is
 * __builtin_ctzll(nh_word_eq(w, c) | nh_word_eq(w, d)) >> 3. */
static inline uint64_t nh_word_eq(uint64_t w, uint8_t c)
{
    w ^= NH_ONES * c;
    return (w - NH_ONES) & ~w & NH_HIGHS;
}

/* memchr, eight bytes a step (lines and fields are short: the C library's
 * memchr spends most of its time getting started). */
static inline const uint8_t *nh_find_byte(const uint8_t *s, size_t n, uint8_t c)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t m = nh_word_eq(w, c);
        if (m)
            return s + i + (__builtin_ctzll(m) >> 3);
    }
    for (; i < n; i++)
        if (s[i] == c)
            return s + i;
    return NULL;
}

/* Inline fast paths of nh_buf_reserve / nh_buf_append / nh_buf_putc for
 * the codec's hot loops; they fall back to the functions in buf.c to grow
 * the buffer (appending and putting go through them everywhere, reserving
 * where it is called for). */
static inline int nh_buf_reserve_fast(nh_buf *b, size_t extra)
{
    if (b->data && extra <= b->cap - b->len)
        return NH_OK;
    return nh_buf_reserve(b, extra);
}

static inline int nh_buf_append_fast(nh_buf *b, const void *p, size_t n)
{
    if (b->data && n <= b->cap - b->len) {
        nh_copy(b->data + b->len, p, n);
        b->len += n;
        return NH_OK;
    }
    return nh_buf_append(b, p, n);
}

static inline int nh_buf_putc_fast(nh_buf *b, uint8_t c)
{
    if (b->data && b->len < b->cap) {
        b->data[b->len++] = c;
        return NH_OK;
    }
    return nh_buf_putc(b, c);
}

#define nh_buf_append(b, p, n) nh_buf_append_fast(b, p, n)
#define nh_buf_putc(b, c) nh_buf_putc_fast(b, c)

/* ---- Ruby String semantics (rstring.c, casemap.c) ---- */

/* String#downcase / String#capitalize with full Unicode case mapping, as
 * the profile's Ruby does it.  `s` must be valid UTF-8.  Appends to out. */
int nh_utf8_downcase(nh_buf *out, const uint8_t *s, size_t n, int profile);
int nh_utf8_capitalize(nh_buf *out, const uint8_t *s, size_t n, int profile);
/* ASCII-only variants, as Ruby applies them to binary (ASCII-8BIT) strings. */
int nh_ascii_downcase(nh_buf *out, const uint8_t *s, size_t n);
/* 0x20 set in each byte of w from 'A' to 'Z' (the low seven bits plus a
 * constant reach 0x80 from 'A' on, and from past 'Z' on; no byte carries
 * into the next). */
static inline uint64_t nh_ascii_upper_bits(uint64_t w)
{
    uint64_t low7 = w & ~NH_HIGHS;
    uint64_t from_a = low7 + NH_ONES * (0x80 - 'A');
    uint64_t past_z = low7 + NH_ONES * (0x7F - 'Z');
    return (from_a & ~past_z & ~w & NH_HIGHS) >> 2;
}

/* nh_ascii_downcase into o[0, n) (not overlapping s). */
static inline void nh_ascii_downcase_to(uint8_t *o, const uint8_t *s, size_t n)
{
    uint64_t w;
    if (n >= 8) {
        /* eight bytes a step, the last eight overlapping the ones before */
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, s + i, 8);
            w |= nh_ascii_upper_bits(w);
            memcpy(o + i, &w, 8);
        }
        memcpy(&w, s + n - 8, 8);
        w |= nh_ascii_upper_bits(w);
        memcpy(o + n - 8, &w, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        w = (uint64_t)a | (uint64_t)b << 32;
        w |= nh_ascii_upper_bits(w);
        a = (uint32_t)w;
        b = (uint32_t)(w >> 32);
        memcpy(o + n - 4, &b, 4);
        memcpy(o, &a, 4);
    } else {
        for (size_t i = 0; i < n; i++) {
            uint8_t c = s[i];
            o[i] = (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
        }
    }
}

int nh_ascii_capitalize(nh_buf *out, const uint8_t *s, size_t n);
/* 1 if String#inspect shows code point `cp` literally in a UTF-8 string. */
int nh_unicode_printable(uint32_t cp, int profile);
/* String#inspect / String#dump of a UTF-8 string (utf8 = 1) or of a binary
 * string (utf8 = 0).  Appends the quoted form to out. */
int nh_inspect(nh_buf *out, const uint8_t *s, size_t n, int utf8, int profile);
int nh_dump(nh_buf *out, const uint8_t *s, size_t n, int utf8);
/* String#scrub: replaces each invalid UTF-8 sequence with U+FFFD. */
int nh_scrub_utf8(nh_buf *out, const uint8_t *s, size_t n);
/* Decodes one UTF-8 character at s: its length, or 0 when invalid. */
int nh_utf8_char(const uint8_t *s, size_t n, uint32_t *cp);
/* 1 if s is valid UTF-8. */
int nh_utf8_valid(const uint8_t *s, size_t n);
/* String#strip: the [start, end) range that remains. */
void nh_strip(const uint8_t *s, size_t n, size_t *start, size_t *end);
/* The bytes String#strip removes: NUL and ASCII whitespace. */
static inline int nh_strip_byte(uint8_t c)
{
    return c == 0 || c == ' ' || (c >= '\t' && c <= '\r');
}

/* ---- Header store (header.c): Net::HTTPHeader ---- */

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
    uint64_t seen;     /* a bit for each name added since the reset (seen_bit):
                        * a name whose bit is clear is absent */
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
/* set for a key known to be absent (nh_headers_find said -1): a new field. */
int nh_headers_add(nh_headers *h, const uint8_t *lkey, size_t llen);
int nh_headers_push(nh_headers *h, long field, const uint8_t *val, size_t vlen);
/* add_field(key, val) for a key as given (downcased here) and a value
 * without CR or LF. */
int nh_headers_add_field(nh_headers *h, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen);
int nh_headers_delete(nh_headers *h, const uint8_t *lkey, size_t llen);
/* head's Net::HTTPHeader checks (NH_PROFILE_HEAD): validate_field_name of
 * a key (binary: read from the wire), and a value's length (the message
 * names the key as given).  NH_ERROR with the ArgumentError in out/err. */
int nh_validate_field_name(nh_buf *out, nh_error *err, const uint8_t *k, size_t n, int binary, int profile);
int nh_check_field_length(nh_buf *out, nh_error *err, const uint8_t *k, size_t klen, size_t vlen);
/* String#[0, chars] of a UTF-8 string: the byte length of the first chars. */
size_t nh_first_chars(const uint8_t *s, size_t n, size_t chars);
/* A profile id as the codec takes it: 2 head, 1 Ruby 3.4, any other 4.0. */
static inline int nh_profile_of(int id)
{
    return id == NH_PROFILE_34 || id == NH_PROFILE_HEAD ? id : NH_PROFILE_40;
}
/* Appends v1, v2, ... joined with ", " (what self[key] returns). */
int nh_headers_join(const nh_headers *h, long field, nh_buf *out);
/* Appends "Name: v1, v2\r\n" for every field (each_capitalized). */
int nh_headers_write(const nh_headers *h, nh_buf *out);

/* Net::HTTPGenericRequest#write_header (request.c): the request line, h's
 * fields as each_capitalized gives them, the empty line; out replaced, room
 * kept for `more` bytes after it. The one writer of a request's head: the JS
 * API's requests and the ruby.wasm bridge's (wasm/abi_bridge.c) alike. */
int nh_write_header(nh_str method, nh_str path, nh_str version, const nh_headers *h, size_t more,
                    nh_buf *out, nh_error *err);

/* ---- Typed readers (header_fields.c): Net::HTTPHeader#range & co ---- */

/* Kinds: NH_HQ_* (schema.h). */
/* Runs a reader over the store.  Out: u8 tag (0 nil or false, 1 a value or
 * true), u32 n, n x (u32 length, bytes).  Raises as MRI does
 * (Net::HTTPHeaderSyntaxError, NoMethodError). */
int nh_header_query(const nh_headers *h, int kind, const uint8_t *arg, size_t alen, nh_buf *out,
                    nh_error *err);

/* ---- Records (wasm/abi.c, wasm/request_record.c) ---- */

/* A bounds-checked reader over the little-endian input records that the
 * JS layer writes (layouts in wasm/abi.c and wasm/request_record.c). */
typedef struct nh_reader {
    const uint8_t *p, *end;
    int bad;
} nh_reader;

static inline uint8_t nh_rd_u8(nh_reader *r)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

static inline uint32_t nh_rd_u32(nh_reader *r)
{
    if (r->end - r->p < 4) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                 (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

/* A length-prefixed byte string; returns its start and sets *len. */
static inline const uint8_t *nh_rd_str(nh_reader *r, size_t *len)
{
    uint32_t n = nh_rd_u32(r);
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        r->p = r->end;
        *len = 0;
        return (const uint8_t *)"";
    }
    const uint8_t *s = r->p;
    r->p += n;
    *len = n;
    return s;
}

static inline int nh_put_u32(nh_buf *out, size_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return nh_buf_append(out, b, 4);
}

/* Appends the decimal digits of v. */
static inline int nh_put_uint(nh_buf *out, uint64_t v)
{
    char d[20];
    int i = 20;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return nh_buf_append(out, d + i, (size_t)(20 - i));
}

static inline int nh_put_str(nh_buf *out, const char *s)
{
    return nh_buf_append(out, s, strlen(s));
}

/* The value of a hex digit, or -1. */
static inline int nh_hex_val(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Appends one [key, value] of encode_www_form's params, after a '&' unless
 * it is the first (index 0). */
int nh_form_put_pair(nh_buf *out, size_t index, const nh_form_pair *fp);
/* Appends URI.encode_www_form of the form pairs the JS layer encodes
 * (wasm/request_record.c), pair by pair; elems: scratch for Array elements. */
int nh_form_record_write(nh_reader *r, nh_buf *elems, nh_buf *out);
/* set_form_data with the query already encode_www_form'ed. */
int nh_request_set_form_query(nh_request *q, const uint8_t *query, size_t qlen, nh_str sep,
                              nh_buf *out, nh_error *err);
/* Replays a request record (wasm/request_record.c) on q and performs its final
 * operation. */
int nh_request_replay(nh_request *q, nh_buf *scratch, nh_buf *scratch2, const uint8_t *in,
                      size_t len, nh_buf *out, nh_error *err);
/* What the record's helpers reach: @header[lkey] = [value], and the store. */
int nh_request_set_raw(nh_request *q, nh_str lkey, nh_str value);
nh_headers *nh_request_headers(nh_request *q);

/* query.gsub!(/&/, sep), with sep's backslash sequences as Ruby's
 * replacement strings read them. */
int nh_form_gsub_sep(nh_buf *out, nh_error *err, const uint8_t *q, size_t qlen,
                     const uint8_t *sep, size_t seplen);

/* URI parsing (uri.c). */
typedef struct nh_uri {
    int is_http;  /* URI::HTTP === uri (http or https) */
    int https;
    int has_host;
    const uint8_t *host;
    size_t host_len;
    const uint8_t *port; /* digits, NULL when absent or empty */
    size_t port_len;
    const uint8_t *path; /* NULL when nil (opaque URIs) */
    size_t path_len;
    int has_query;
    nh_buf query;        /* escaped by URI::Generic#query= */
} nh_uri;

/* URI(str): fills u, or fails with URI::InvalidURIError. */
int nh_uri_parse(nh_uri *u, nh_buf *out, nh_error *err, const uint8_t *s, size_t n);
void nh_uri_free(nh_uri *u);

/* The WebAssembly ABI's call context, owned by the JS side (wasm/abi.c). */
typedef struct nh_ctx {
    nh_buf out;   /* offset 0: data, len, cap */
    nh_error err; /* offset 12 */
    nh_buf in;
    nh_buf tmp;
    nh_buf tmp2;
    nh_request *req;  /* the request replayed by nh_wasm_request, reused */
    nh_resp *oneshot; /* the one-shot response parser, reused */
    nh_headers fields; /* the fields of the bridge's request record, reused */
} nh_ctx;

/* A function the module exports (the wasm ABI). */
#if defined(__wasm__)
#define EXPORT(name) __attribute__((export_name(#name))) __attribute__((used))
#else
#define EXPORT(name)
#endif

/* Feeds a response parser; its events (wasm/abi.c) into c->out. */
int nh_abi_feed(nh_ctx *c, nh_resp *p, uint8_t *bytes, size_t n, int eof);

/* A u32 of a record (little-endian), read and written in place. */
static inline uint32_t nh_get32(const uint8_t *q)
{
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}
static inline void nh_set32(uint8_t *q, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        q[i] = (uint8_t)(v >> (8 * i));
}

/* The size of the parser's event at e (NH_EV_*; the 0 that ends them: 1). */
static inline size_t nh_event_size(const uint8_t *e)
{
    return e[0] == 0 ? 1 : e[0] == NH_EV_BODY ? 10 : e[0] == NH_EV_END ? 5 : 5 + (size_t)nh_get32(e + 1);
}

#endif
