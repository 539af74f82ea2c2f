/* Shared between the codec's files; not part of the public API. */
#ifndef NETHTTP_INTERNAL_H
#define NETHTTP_INTERNAL_H

#include <string.h>

#include "nethttp.h"

/* Inline fast paths of nh_buf_append / nh_buf_putc for the codec's hot
 * loops; they fall back to the functions in buf.c to grow the buffer. */
static inline int nh_buf_append_fast(nh_buf *b, const void *p, size_t n)
{
    if (b->data && n <= b->cap - b->len) {
        if (n) {
            memcpy(b->data + b->len, p, n);
            b->len += n;
        }
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

/* A bounds-checked reader over the little-endian input records that the
 * JS layer writes (see abi.c for the layout). */
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

/* Form pairs as encoded by the JS layer: u32 count, then per pair a key
 * string and a kind byte: 0 nil, 1 a value string, 2 an array (u32 count,
 * then per element a byte 0 nil / 1 followed by a string). Writes
 * URI.encode_www_form of them. */
int nh_form_write(nh_buf *out, nh_reader *r);
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

/* The WebAssembly ABI's call context, owned by the JS side (abi.c). */
typedef struct nh_ctx {
    nh_buf out;   /* offset 0: data, len, cap */
    nh_error err; /* offset 12 */
    nh_buf in;
    nh_buf tmp;
    nh_buf tmp2;
    nh_req *req;      /* request scratch state, reused */
    nh_resp *oneshot; /* the one-shot response parser, reused */
} nh_ctx;

#endif
