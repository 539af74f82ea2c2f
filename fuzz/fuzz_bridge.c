/* libFuzzer harness: the ruby.wasm bridge's response events
 * (wasm/abi_bridge.c).  The input's first byte picks the options; the rest
 * is the stream, fed in pieces cut at points taken from the input, in
 * lockstep to two parsers (the options and cut points as fuzz_response.c
 * takes them: response_input.h): one through nh_abi_feed (the events the JS API
 * reads), one through nh_wasm_resp_feed_bridge.  The bridge's events must be
 * the same but for heads: each head block (not a 1xx) as the record Ruby
 * reads (schema/bridge.mjs R_HEAD and R_END), rebuilt here from the block
 * field by field; a length event only right after a head; the same error. */
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "../src/response.h"
#include "response_input.h"

/* the module's exports (wasm/abi.c, wasm/abi_bridge.c), plain functions here */
uint8_t *nh_ctx_input(nh_ctx *c, size_t n);
void nh_ctx_free(nh_ctx *c);
int nh_wasm_resp_feed_bridge(nh_ctx *c, size_t len, nh_resp *p, int eof);

static void put(nh_buf *o, const uint8_t *s, size_t n, int nl)
{
    if (nh_buf_append(o, s, n) || (nl && nh_buf_putc(o, '\n')))
        abort();
}

static void put_uint(nh_buf *o, uint32_t v)
{
    char s[16];
    int n = 0;
    do
        s[15 - n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 16);
    put(o, (const uint8_t *)s + 16 - n, (size_t)n, 1);
}

/* The record of a head block (final: only its fields), as the bridge
 * documents it: flags; version, code, message; the fields' count, names,
 * first values, then (index, value) for each later value. */
static void expected_record(const uint8_t *block, size_t len, int final, nh_buf *o)
{
    nh_reader r = {block, block + len, 0};
    size_t n;
    uint8_t flags = nh_rd_u8(&r);
    nh_rd_str(&r, &n); /* class name */
    if (!final)
        put(o, (const uint8_t[]){(uint8_t)(flags & (NH_HEAD_VERSION | NH_HEAD_MESSAGE | NH_HEAD_INFLATE | NH_HEAD_DROP_ENCODING))}, 1, 0);
    for (int i = 0; i < 3; i++) {
        const uint8_t *s = nh_rd_str(&r, &n);
        if (!final)
            put(o, s, n, 1);
    }
    uint32_t nf = nh_rd_u32(&r);
    put_uint(o, nf);
    nh_buf names = {0}, firsts = {0}, later = {0};
    for (uint32_t f = 0; f < nf && !r.bad; f++) {
        nh_rd_u8(&r);
        const uint8_t *s = nh_rd_str(&r, &n);
        put(&names, s, n, 1);
        uint32_t nv = nh_rd_u32(&r);
        if (nv == 0)
            put(&firsts, NULL, 0, 1);
        for (uint32_t v = 0; v < nv && !r.bad; v++) {
            s = nh_rd_str(&r, &n);
            if (v == 0) {
                put(&firsts, s, n, 1);
            } else {
                put_uint(&later, f);
                put(&later, s, n, 1);
            }
        }
    }
    if (r.bad)
        abort(); /* a head block the parser wrote is well formed */
    put(o, names.data, names.len, 0);
    put(o, firsts.data, firsts.len, 0);
    put(o, later.data, later.len, 0);
    nh_buf_free(&names);
    nh_buf_free(&firsts);
    nh_buf_free(&later);
    o->len--; /* no "\n" after the last line */
}

/* One call's events, from offset 8 of each output, compared. */
static void compare(const nh_buf *plain, const nh_buf *bridge)
{
    const uint8_t *a = plain->data, *b = bridge->data;
    size_t i = 8, j = 8;
    int after_head = 0;
    nh_buf want = {0};
    for (;;) {
        if (i >= plain->len || j >= bridge->len)
            abort(); /* both end with a 0 event */
        uint8_t ta = a[i], tb = b[j];
        if (tb == NH_EV_LENGTH) {
            if (!after_head)
                abort();
            after_head = 0;
            j += 9;
            continue;
        }
        after_head = 0;
        if (ta == NH_EV_INTERIM) {
            i += nh_event_size(a + i);
            continue;
        }
        if (ta != tb)
            abort();
        if (ta == 0)
            break;
        if (ta == NH_EV_HEAD || ta == NH_EV_FINAL) {
            want.len = 0;
            expected_record(a + i + 5, nh_get32(a + i + 1), ta == NH_EV_FINAL, &want);
            if (nh_get32(b + j + 1) != want.len || memcmp(b + j + 5, want.data, want.len) != 0)
                abort();
            after_head = ta == NH_EV_HEAD;
        } else if (nh_event_size(a + i) != nh_event_size(b + j) || memcmp(a + i, b + j, nh_event_size(a + i)) != 0) {
            abort(); /* body and end events pass through as they are */
        }
        i += nh_event_size(a + i);
        j += nh_event_size(b + j);
    }
    if (i + 1 != plain->len || j + 1 != bridge->len)
        abort();
    nh_buf_free(&want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t o = data[0];
    nh_resp_config cfg;
    fuzz_response_config(o, &cfg, 1 << 12);
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    size_t cuts[9];
    size_t ncuts = fuzz_response_cuts(o, n, cuts);
    cuts[ncuts++] = n;

    nh_ctx *ca = calloc(1, sizeof *ca), *cb = calloc(1, sizeof *cb);
    nh_resp *pa = nh_resp_new(), *pb = nh_resp_new();
    if (!ca || !cb || !pa || !pb)
        abort();
    nh_resp_reset(pa, &cfg);
    nh_resp_reset(pb, &cfg);
    size_t off = 0;
    for (size_t c = 0; c < ncuts && !nh_resp_done(pa); c++) {
        size_t to = cuts[c], len = to - off;
        if (to < off)
            continue;
        int eof = to == n;
        uint8_t *ia = nh_ctx_input(ca, len), *ib = nh_ctx_input(cb, len);
        if (!ia || !ib)
            abort();
        memcpy(ia, in + off, len);
        memcpy(ib, in + off, len);
        ca->out.len = 0;
        ca->err.cls = NH_E_NONE;
        int ra = nh_abi_feed(ca, pa, ia, len, eof);
        int rb = nh_wasm_resp_feed_bridge(cb, len, pb, eof);
        if (ra != rb || ca->err.cls != cb->err.cls)
            abort();
        if (ra)
            break;
        compare(&ca->out, &cb->out);
        if (nh_resp_done(pa) != nh_resp_done(pb))
            abort();
        off = to;
    }
    nh_ctx_free(ca);
    nh_ctx_free(cb);
    nh_resp_free(pa);
    nh_resp_free(pb);
    return 0;
}
