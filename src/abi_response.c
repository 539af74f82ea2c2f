/* The WebAssembly ABI of the response parser (see abi.c for the conventions).
 *
 * Every entry point takes (ctx, len, in, ...): the context, the length of the
 * input record the JS side wrote, and the record's address (the Codec's input
 * pointer).  Only the documented head of the context is used: the output
 * buffer at offset 0 and the error class at offset 12.
 *
 * Config record (44 bytes): u8 profile, u8 body_allowed, u8 decode,
 * u8 flags (1 skip_interim, 2 strict), then u64 max_header_bytes, max_fields, max_body_bytes,
 * max_inflated_bytes (each u32 low, u32 high; all ones = unlimited), and
 * u64 stream_offset (nh_resp_set_stream_offset; all ones: 0 for a new parser
 * or a one-shot parse, unchanged for a reset).
 *
 * Event output (nh_wasm_resp_feed, nh_wasm_resp_parse): u32 address of the
 * input bytes, u32 address of the parser's decoded data, then the events of
 * nh_resp_feed (nethttp.h) and a 0 byte. */
#include <stdlib.h>

#include "internal.h"

#if defined(__wasm__)
#define EXPORT(name) __attribute__((export_name(#name))) __attribute__((used))
#else
#define EXPORT(name)
#endif

typedef nh_ctx ctx_head;

#define CONFIG_LEN 44

static uint64_t rd_u64(nh_reader *r)
{
    uint64_t lo = nh_rd_u32(r);
    uint64_t hi = nh_rd_u32(r);
    return lo | hi << 32;
}

static int read_config(nh_reader *r, nh_resp_config *cfg, uint64_t *offset)
{
    nh_resp_config_default(cfg);
    cfg->profile = nh_rd_u8(r) ? NH_PROFILE_34 : NH_PROFILE_40;
    cfg->body_allowed = nh_rd_u8(r) != 0;
    cfg->decode = nh_rd_u8(r) != 0;
    uint8_t flags = nh_rd_u8(r);
    cfg->skip_interim = (flags & 1) != 0;
    cfg->strict = (flags & 2) != 0;
    cfg->max_header_bytes = rd_u64(r);
    cfg->max_fields = rd_u64(r);
    cfg->max_body_bytes = rd_u64(r);
    cfg->max_inflated_bytes = rd_u64(r);
    *offset = rd_u64(r);
    return r->bad ? -1 : 0;
}

static int bad_record(ctx_head *c)
{
    return nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed response-parser record");
}

static int begin(ctx_head *c)
{
    c->out.len = 0;
    c->err.cls = NH_E_NONE;
    return NH_OK;
}

/* input: config.  output: u32 the parser's address. */
EXPORT(nh_wasm_resp_new) int nh_wasm_resp_new(ctx_head *c, size_t len, const uint8_t *in)
{
    begin(c);
    nh_reader r = {in, in + len, 0};
    nh_resp_config cfg;
    uint64_t offset;
    if (read_config(&r, &cfg, &offset))
        return bad_record(c);
    nh_resp *p = nh_resp_new();
    if (!p)
        return NH_NOMEM;
    nh_resp_reset(p, &cfg);
    nh_resp_set_stream_offset(p, offset == UINT64_MAX ? 0 : offset);
    return nh_put_u32(&c->out, (uint32_t)(uintptr_t)p);
}

/* input: config. */
EXPORT(nh_wasm_resp_reset) int nh_wasm_resp_reset(ctx_head *c, size_t len, const uint8_t *in, nh_resp *p)
{
    begin(c);
    nh_reader r = {in, in + len, 0};
    nh_resp_config cfg;
    uint64_t offset;
    if (read_config(&r, &cfg, &offset))
        return bad_record(c);
    nh_resp_reset(p, &cfg);
    if (offset != UINT64_MAX)
        nh_resp_set_stream_offset(p, offset);
    return NH_OK;
}

EXPORT(nh_wasm_resp_free) int nh_wasm_resp_free(ctx_head *c, size_t len, const uint8_t *in, nh_resp *p)
{
    (void)len;
    (void)in;
    begin(c);
    nh_resp_free(p);
    return NH_OK;
}

static int run(ctx_head *c, nh_resp *p, const uint8_t *bytes, size_t n, int eof)
{
    if (nh_put_u32(&c->out, 0) || nh_put_u32(&c->out, 0))
        return NH_NOMEM;
    int rc = nh_resp_feed(p, bytes, n, eof, &c->out, &c->out, &c->err);
    if (rc)
        return rc;
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
EXPORT(nh_wasm_resp_feed) int nh_wasm_resp_feed(ctx_head *c, size_t len, const uint8_t *in, nh_resp *p, int eof)
{
    begin(c);
    return run(c, p, in, len, eof);
}

/* One-shot: input config + the whole response (the stream ends after it).
 * The parser is kept for the next call. */

EXPORT(nh_wasm_resp_parse) int nh_wasm_resp_parse(ctx_head *c, size_t len, const uint8_t *in)
{
    begin(c);
    nh_reader r = {in, in + len, 0};
    nh_resp_config cfg;
    uint64_t offset;
    if (len < CONFIG_LEN || read_config(&r, &cfg, &offset))
        return bad_record(c);
    if (!c->oneshot && !(c->oneshot = nh_resp_new()))
        return NH_NOMEM;
    nh_resp_reset(c->oneshot, &cfg);
    nh_resp_set_stream_offset(c->oneshot, offset == UINT64_MAX ? 0 : offset);
    return run(c, c->oneshot, in + CONFIG_LEN, len - CONFIG_LEN, 1);
}

/* Gives back the one-shot parser's memory after an unusually large message. */
EXPORT(nh_wasm_resp_trim) int nh_wasm_resp_trim(ctx_head *c, size_t len, const uint8_t *in)
{
    (void)len;
    (void)in;
    begin(c);
    nh_resp_free(c->oneshot);
    c->oneshot = NULL;
    return NH_OK;
}
