/* The WebAssembly ABI: what the JS layer calls.
 *
 * The JS side owns one nh_ctx per module instance.  For each operation it
 * writes the input record into the context's input buffer (nh_ctx_input),
 * makes one call, and reads the result as a view over wasm memory: ctx->out
 * holds the output bytes (or the error message), ctx->err.cls the error class.
 * Every entry point returns NH_OK, NH_ERROR or NH_NOMEM.
 *
 * Records are little-endian; a string is a u32 byte length and UTF-8 bytes.
 *   request:      see request.c (u8 profile, u8 response_has_body, str method,
 *                 u8 is_uri, str target, u32 n|0xFFFFFFFF, n x (str key, u8 has_value,
 *                 [str value]), then ops: 1 set / 2 add (str key, u32 n, n x str),
 *                 3 delete (str key, u8 via_aset), 4 form (pairs, u8 has_sep, [str sep]),
 *                 5 body (u8 has, [str]), 6 exec (str version), 7 get (str key),
 *                 8 dump, 9 query (u8 kind, str arg), 10 raw set (str downcased
 *                 key, str value), 0 end)
 *   header query: u8 profile, u8 kind, str arg, u32 n, n x (str downcased key,
 *                 u32 m, m x str value): a response's fields (binary strings)
 *   pairs:        u32 n, n x (str key, u8 kind: 0 nil | 1 str | 2 u32 m, m x (u8, [str]))
 * Text results come as a table: u32 n, n x u32 UTF-16 length, then the UTF-8
 * text of all n strings, so the JS side decodes once and slices. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(__wasm__)
#define EXPORT(name) __attribute__((export_name(#name))) __attribute__((used))
#else
#define EXPORT(name)
#endif

EXPORT(nh_alloc) void *nh_alloc(size_t n) { return malloc(n ? n : 1); }
EXPORT(nh_free) void nh_free(void *p) { free(p); }

EXPORT(nh_ctx_new) nh_ctx *nh_ctx_new(void) { return calloc(1, sizeof(nh_ctx)); }

EXPORT(nh_ctx_free) void nh_ctx_free(nh_ctx *c)
{
    if (!c)
        return;
    nh_buf_free(&c->out);
    nh_buf_free(&c->in);
    nh_buf_free(&c->tmp);
    nh_buf_free(&c->tmp2);
    nh_req_free(c->req);
    nh_resp_free(c->oneshot);
    free(c);
}

/* Returns an input buffer of at least n bytes (NULL when out of memory). */
EXPORT(nh_ctx_input) uint8_t *nh_ctx_input(nh_ctx *c, size_t n)
{
    c->in.len = 0;
    if (nh_buf_reserve(&c->in, n ? n : 1))
        return NULL;
    return c->in.data;
}

/* Gives back memory after an unusually large message. */
EXPORT(nh_ctx_trim) void nh_ctx_trim(nh_ctx *c, size_t keep)
{
    nh_buf *bs[] = {&c->out, &c->in, &c->tmp, &c->tmp2};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        if (bs[i]->cap > keep)
            nh_buf_free(bs[i]);
    nh_req_free(c->req);
    c->req = NULL;
}

static int begin(nh_ctx *c)
{
    c->out.len = 0;
    c->err.cls = NH_E_NONE;
    return NH_OK;
}

/* UTF-16 length of valid UTF-8. */
static size_t utf16_len(const uint8_t *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = s[i];
        if ((b & 0xC0) != 0x80)
            k += b >= 0xF0 ? 2 : 1;
    }
    return k;
}

/* Builds a text table in c->out from strings laid end to end in c->tmp with
 * their byte lengths in c->tmp2 (u32 each). */
static int text_table(nh_ctx *c)
{
    size_t n = c->tmp2.len / 4;
    c->out.len = 0;
    if (nh_buf_reserve(&c->out, 4 + 4 * n + c->tmp.len) || nh_put_u32(&c->out, n))
        return NH_NOMEM;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = c->tmp2.data + 4 * i;
        size_t len = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
        nh_put_u32(&c->out, utf16_len(c->tmp.data + off, len));
        off += len;
    }
    return nh_buf_append(&c->out, c->tmp.data, c->tmp.len);
}

static int table_add(nh_ctx *c, size_t mark)
{
    return nh_put_u32(&c->tmp2, c->tmp.len - mark);
}

EXPORT(nh_wasm_request) int nh_wasm_request(nh_ctx *c, size_t len)
{
    begin(c);
    if (!c->req && !(c->req = nh_req_new()))
        return NH_NOMEM;
    return nh_request_run(c->req, c->in.data, len, &c->out, &c->err);
}

/* input: the ruby.wasm bridge's request record.  output: the head. */
EXPORT(nh_wasm_write_header) int nh_wasm_write_header(nh_ctx *c, size_t len)
{
    begin(c);
    return nh_write_header(c->in.data, len, &c->out, &c->err);
}

/* input: pairs */
EXPORT(nh_wasm_encode_www_form) int nh_wasm_encode_www_form(nh_ctx *c, size_t len)
{
    begin(c);
    nh_reader r = {c->in.data, c->in.data + len, 0};
    int rc = nh_form_write(&c->out, &r);
    if (!rc && r.bad)
        return nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed form record");
    return rc;
}

/* input: the raw string */
EXPORT(nh_wasm_encode_www_form_component) int nh_wasm_encode_www_form_component(nh_ctx *c, size_t len)
{
    begin(c);
    return nh_encode_www_form_component(&c->out, c->in.data, len);
}

EXPORT(nh_wasm_decode_www_form_component) int nh_wasm_decode_www_form_component(nh_ctx *c, size_t len)
{
    begin(c);
    return nh_decode_www_form_component(&c->out, &c->err, c->in.data, len);
}

/* input: str s, str separator.  output: text table of key, value, ... */
EXPORT(nh_wasm_decode_www_form) int nh_wasm_decode_www_form(nh_ctx *c, size_t len)
{
    begin(c);
    nh_reader r = {c->in.data, c->in.data + len, 0};
    size_t sl, pl;
    const uint8_t *s = nh_rd_str(&r, &sl);
    const uint8_t *sep = nh_rd_str(&r, &pl);
    if (r.bad)
        return nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed form record");
    c->tmp.len = 0;
    int rc = nh_decode_www_form(&c->tmp, &c->err, s, sl, sep, pl);
    if (rc == NH_ERROR) {
        c->out.len = 0;
        return nh_buf_append(&c->out, c->tmp.data, c->tmp.len) ? NH_NOMEM : NH_ERROR;
    }
    if (rc)
        return rc;
    /* re-shape u32 count + (u32 len, bytes)* into a text table */
    nh_reader d = {c->tmp.data, c->tmp.data + c->tmp.len, 0};
    uint32_t n = nh_rd_u32(&d) * 2u;
    c->out.len = 0;
    if (nh_buf_reserve(&c->out, 4 + 4 * (size_t)n + c->tmp.len) || nh_put_u32(&c->out, n))
        return NH_NOMEM;
    for (uint32_t i = 0; i < n; i++) {
        size_t l;
        const uint8_t *p = nh_rd_str(&d, &l);
        nh_put_u32(&c->out, utf16_len(p, l));
    }
    d.p = c->tmp.data + 4;
    for (uint32_t i = 0; i < n; i++) {
        size_t l;
        const uint8_t *p = nh_rd_str(&d, &l);
        nh_buf_append(&c->out, p, l);
    }
    return NH_OK;
}

/* input: u32 n, n x (str key, u32 m, m x str value): add_field each, then
 * each_capitalized.  output: text table of name, joined value, ... */
EXPORT(nh_wasm_each_capitalized) int nh_wasm_each_capitalized(nh_ctx *c, size_t len, int profile)
{
    begin(c);
    nh_reader r = {c->in.data, c->in.data + len, 0};
    nh_headers h;
    nh_buf key = {0};
    nh_headers_init(&h, profile, 0);
    uint32_t n = nh_rd_u32(&r);
    int rc = NH_OK;
    for (uint32_t i = 0; i < n && !rc && !r.bad; i++) {
        size_t kl, vl;
        const uint8_t *k = nh_rd_str(&r, &kl);
        uint32_t nv = nh_rd_u32(&r);
        nh_reader peek = r;
        for (uint32_t j = 0; j < nv && !peek.bad; j++) {
            const uint8_t *v = nh_rd_str(&peek, &vl);
            for (size_t x = 0; x < vl; x++)
                if (v[x] == '\r' || v[x] == '\n') {
                    rc = nh_fail(&c->out, &c->err, NH_E_ARGUMENT,
                                 "header field value cannot include CR/LF");
                    goto done;
                }
        }
        key.len = 0;
        if (nh_headers_key(&h, &key, k, kl)) {
            rc = NH_NOMEM;
            break;
        }
        /* add_field: append to an existing field, else set_field */
        long fi = nh_headers_find(&h, key.data, key.len);
        if (fi < 0 && (fi = nh_headers_set(&h, key.data, key.len)) < 0) {
            rc = NH_NOMEM;
            break;
        }
        for (uint32_t j = 0; j < nv && !rc && !r.bad; j++) {
            const uint8_t *v = nh_rd_str(&r, &vl);
            rc = nh_headers_push(&h, fi, v, vl);
        }
    }
    if (!rc && r.bad)
        rc = nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed header record");
    c->tmp.len = c->tmp2.len = 0;
    for (uint32_t fi = 0; fi < h.nfields && !rc; fi++) {
        const nh_field *f = &h.fields[fi];
        if (!f->live)
            continue;
        size_t mark = c->tmp.len;
        if (nh_capitalize_name(&c->tmp, h.bytes.data + f->name_off, f->name_len, profile, 0) ||
            table_add(c, mark))
            rc = NH_NOMEM;
        mark = c->tmp.len;
        if (!rc && (nh_headers_join(&h, (long)fi, &c->tmp) || table_add(c, mark)))
            rc = NH_NOMEM;
    }
    if (!rc)
        rc = text_table(c);
done:
    nh_headers_free(&h);
    nh_buf_free(&key);
    return rc;
}

/* input: the name.  output: Net::HTTPHeader#capitalize(name) */
EXPORT(nh_wasm_capitalize) int nh_wasm_capitalize(nh_ctx *c, size_t len, int profile)
{
    begin(c);
    return nh_capitalize_name(&c->out, c->in.data, len, profile, 0);
}

/* A typed reader (header_fields.c) over a response's fields.  input: see
 * "header query" above.  output: as nh_header_query. */
EXPORT(nh_wasm_header_query) int nh_wasm_header_query(nh_ctx *c, size_t len)
{
    begin(c);
    nh_reader r = {c->in.data, c->in.data + len, 0};
    int profile = nh_rd_u8(&r) == 1 ? NH_PROFILE_34 : NH_PROFILE_40;
    int kind = nh_rd_u8(&r);
    size_t al;
    const uint8_t *arg = nh_rd_str(&r, &al);
    nh_headers h;
    nh_headers_init(&h, profile, 1);
    uint32_t n = nh_rd_u32(&r);
    int rc = NH_OK;
    for (uint32_t i = 0; i < n && !rc && !r.bad; i++) {
        size_t kl, vl;
        const uint8_t *k = nh_rd_str(&r, &kl);
        uint32_t m = nh_rd_u32(&r);
        long fi = nh_headers_find(&h, k, kl);
        if (fi < 0 && (fi = nh_headers_set(&h, k, kl)) < 0)
            rc = NH_NOMEM;
        for (uint32_t j = 0; j < m && !rc && !r.bad; j++) {
            const uint8_t *v = nh_rd_str(&r, &vl);
            rc = nh_headers_push(&h, fi, v, vl);
        }
    }
    if (!rc && r.bad)
        rc = nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed header query record");
    if (!rc)
        rc = nh_header_query(&h, kind, arg, al, &c->out, &c->err);
    nh_headers_free(&h);
    return rc;
}
