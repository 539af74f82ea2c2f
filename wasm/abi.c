/* The WebAssembly ABI: what the JS layer calls (js/core.mjs, class Codec).
 *
 * The JS side owns one nh_ctx per module instance.  For each operation it
 * writes the input record into the context's input buffer (nh_ctx_input),
 * makes one call, nh_wasm_<op>(ctx, len, ...), and reads the result as a view
 * over wasm memory: ctx->out holds the output bytes (or the error message),
 * ctx->err.cls the error class.  Every entry point returns NH_OK, NH_ERROR or
 * NH_NOMEM (schema.h).  Only the head of the context is read from JS: the
 * output buffer at offset 0 and the error class at offset 12.
 *
 * Records are little-endian; a string is a u32 byte length and UTF-8 bytes.
 *   request, pairs: see request_record.c
 *   header query: u8 profile, u8 kind, str arg, u32 n, n x (str downcased key,
 *                 u32 m, m x str value): a response's fields (binary strings)
 *   response-parser config: the config record declared in schema/codec.mjs
 *                 (records.config; nh_config_record in schema.h)
 *   response events (nh_wasm_resp_feed, nh_wasm_resp_parse): u32 address of
 *                 the input bytes, u32 address of the parser's decoded data,
 *                 then the events of nh_resp_feed (NH_EV_*; body events that
 *                 follow each other merged into one) and a 0 byte
 * Text results come as a table: u32 n, n x u32 UTF-16 length, then the UTF-8
 * text of all n strings, so the JS side decodes once and slices. */
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "internal.h"


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
    nh_request_free(c->req);
    nh_resp_free(c->oneshot);
    nh_headers_free(&c->fields);
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
    nh_request_free(c->req);
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
    if (!c->req && !(c->req = nh_request_new()))
        return NH_NOMEM;
    return nh_request_replay(c->req, &c->tmp, &c->tmp2, c->in.data, len, &c->out, &c->err);
}

/* input: pairs */
EXPORT(nh_wasm_encode_www_form) int nh_wasm_encode_www_form(nh_ctx *c, size_t len)
{
    begin(c);
    nh_reader r = {c->in.data, c->in.data + len, 0};
    int rc = nh_form_record_write(&r, &c->tmp, &c->out);
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
    int profile = nh_profile_of(nh_rd_u8(&r));
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

/* ---- the response parser (response.c) ---- */

/* The config record (schema/codec.mjs records.config) as the parser's
 * configuration and the stream offset it gives. */
static void read_config(const unsigned char *rec, nh_resp_config *cfg, uint64_t *offset)
{
    nh_config_record r;
    nh_config_record_read(rec, &r);
    nh_resp_config_default(cfg);
    cfg->profile = nh_profile_of(r.profile);
    cfg->body_allowed = r.body_allowed != 0;
    cfg->decode = r.decode != 0;
    cfg->skip_interim = (r.flags & NH_CFG_SKIP_INTERIM) != 0;
    cfg->strict = (r.flags & NH_CFG_STRICT) != 0;
    cfg->max_header_bytes = r.max_header_bytes;
    cfg->max_fields = r.max_fields;
    cfg->max_body_bytes = r.max_body_bytes;
    cfg->max_inflated_bytes = r.max_inflated_bytes;
    *offset = r.stream_offset;
}

/* Reads the config record at the start of the input into p (reset); fresh:
 * a new stream, whose position starts at 0 unless the record says. */
static int configure(nh_ctx *c, size_t len, nh_resp *p, int fresh)
{
    nh_resp_config cfg;
    uint64_t offset;
    if (len < NH_CONFIG_LEN)
        return nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed response-parser record");
    read_config(c->in.data, &cfg, &offset);
    nh_resp_reset(p, &cfg);
    if (offset != UINT64_MAX || fresh)
        nh_resp_set_stream_offset(p, offset == UINT64_MAX ? 0 : offset);
    return NH_OK;
}

/* input: config.  output: u32 the parser's address. */
EXPORT(nh_wasm_resp_new) int nh_wasm_resp_new(nh_ctx *c, size_t len)
{
    begin(c);
    nh_resp *p = nh_resp_new();
    if (!p)
        return NH_NOMEM;
    int rc = configure(c, len, p, 1);
    if (rc) {
        nh_resp_free(p);
        return rc;
    }
    return nh_put_u32(&c->out, (uint32_t)(uintptr_t)p);
}

/* input: config. */
EXPORT(nh_wasm_resp_reset) int nh_wasm_resp_reset(nh_ctx *c, size_t len, nh_resp *p)
{
    begin(c);
    return configure(c, len, p, 0);
}

EXPORT(nh_wasm_resp_free) int nh_wasm_resp_free(nh_ctx *c, size_t len, nh_resp *p)
{
    (void)len;
    begin(c);
    nh_resp_free(p);
    return NH_OK;
}

/* Body events that follow each other become one, so that JS copies a body
 * out in one piece: a piece of the input is moved down to the end of the
 * one before it, over the chunk framing between them (the input buffer is
 * ours, and that part of it is consumed); pieces of the decoded data are
 * merged where they touch.  The events from ev->data + at on are rewritten. */
static void merge_body_events(nh_buf *ev, size_t at, uint8_t *in)
{
    uint8_t *e = ev->data;
    size_t r = at, w = at, last = SIZE_MAX; /* last: the body event just written */
    while (r < ev->len) {
        uint8_t t = e[r];
        size_t size = nh_event_size(e + r);
        if (t == NH_EV_BODY && last != SIZE_MAX && e[last + 1] == e[r + 1]) {
            uint32_t lo = nh_get32(e + last + 2), ll = nh_get32(e + last + 6);
            uint32_t o = nh_get32(e + r + 2), l = nh_get32(e + r + 6);
            if (e[r + 1] == 0 && o != lo + ll)
                memmove(in + lo + ll, in + o, l);
            if (e[r + 1] == 0 || o == lo + ll) {
                nh_set32(e + last + 6, ll + l);
                r += size;
                continue;
            }
        }
        if (w != r)
            memmove(e + w, e + r, size);
        last = t == NH_EV_BODY ? w : SIZE_MAX;
        w += size;
        r += size;
    }
    ev->len = w;
}

/* Feeds p and writes the events into c->out (the layout above). */
int nh_abi_feed(nh_ctx *c, nh_resp *p, uint8_t *bytes, size_t n, int eof)
{
    if (nh_put_u32(&c->out, 0) || nh_put_u32(&c->out, 0))
        return NH_NOMEM;
    int rc = nh_resp_feed(p, bytes, n, eof, &c->out, &c->out, &c->err);
    if (rc)
        return rc;
    merge_body_events(&c->out, 8, bytes);
    if (nh_buf_putc(&c->out, 0))
        return NH_NOMEM;
    uint32_t a = (uint32_t)(uintptr_t)bytes, d = (uint32_t)(uintptr_t)nh_resp_data(p);
    uint8_t *o = c->out.data;
    for (int i = 0; i < 4; i++) {
        o[i] = (uint8_t)(a >> (8 * i));
        o[4 + i] = (uint8_t)(d >> (8 * i));
    }
    return NH_OK;
}

/* input: the bytes.  output: events. */
EXPORT(nh_wasm_resp_feed) int nh_wasm_resp_feed(nh_ctx *c, size_t len, nh_resp *p, int eof)
{
    begin(c);
    return nh_abi_feed(c, p, c->in.data, len, eof);
}

/* One-shot: input config + the whole response (the stream ends after it).
 * The parser is kept for the next call. */
EXPORT(nh_wasm_resp_parse) int nh_wasm_resp_parse(nh_ctx *c, size_t len)
{
    begin(c);
    if (!c->oneshot && !(c->oneshot = nh_resp_new()))
        return NH_NOMEM;
    int rc = configure(c, len, c->oneshot, 1);
    if (rc)
        return rc;
    return nh_abi_feed(c, c->oneshot, c->in.data + NH_CONFIG_LEN, len - NH_CONFIG_LEN, 1);
}

/* Gives back the one-shot parser's memory after an unusually large message. */
EXPORT(nh_wasm_resp_trim) int nh_wasm_resp_trim(nh_ctx *c, size_t len)
{
    (void)len;
    begin(c);
    nh_resp_free(c->oneshot);
    c->oneshot = NULL;
    return NH_OK;
}
