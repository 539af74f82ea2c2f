/* libFuzzer harness: the ruby.wasm bridge's request record
 * (wasm/abi_bridge.c, nh_wasm_write_header).  The input's first byte picks
 * the flags (bit 0: NH_SEND_FLAT) and the profile (bit 1: Ruby 3.4); the rest
 * is the record.  The head the module writes, through a header store and the
 * codec's write_header, must be the record as this harness reads it line by
 * line: the request line, then per field in the record's order its
 * capitalized name (nh_capitalize_name) and its values joined by ", ", then
 * the empty line.  A record it cannot read: TypeError "malformed request
 * record"; CR or LF in the request line: ArgumentError. */
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "../src/bridge.h"

/* the module's exports (wasm/abi.c, wasm/abi_bridge.c), plain functions here */
nh_ctx *nh_ctx_new(void);
uint8_t *nh_ctx_input(nh_ctx *c, size_t n);
void nh_ctx_free(nh_ctx *c);
int nh_wasm_write_header(nh_ctx *c, size_t len, int flags, int profile);

static void put(nh_buf *o, const uint8_t *s, size_t n)
{
    if (nh_buf_append(o, s, n))
        abort();
}

/* The next "\n"-terminated line (0: none, the record ends or has no "\n"). */
static int take_line(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *n)
{
    const uint8_t *nl = *p < end ? memchr(*p, '\n', (size_t)(end - *p)) : NULL;
    if (!nl)
        return 0;
    *s = *p;
    *n = (size_t)(nl - *p);
    *p = nl + 1;
    return 1;
}

/* The head the record describes (1), or 0 when it is malformed. */
static int expected(const uint8_t *rec, size_t len, int flat, int profile, nh_buf *o)
{
    const uint8_t *p = rec, *end = rec + len, *line[3], *k, *v;
    size_t n[3], kl, vl;
    for (int i = 0; i < 3; i++)
        if (!take_line(&p, end, &line[i], &n[i]))
            return 0;
    put(o, line[0], n[0]);
    put(o, (const uint8_t *)" ", 1);
    put(o, line[1], n[1]);
    put(o, (const uint8_t *)" HTTP/", 6);
    put(o, line[2], n[2]);
    put(o, (const uint8_t *)"\r\n", 2);
    while (take_line(&p, end, &k, &kl)) {
        size_t count = 1;
        if (!flat) {
            if (!take_line(&p, end, &v, &vl))
                return 0;
            count = 0;
            for (size_t i = 0; i < vl && v[i] >= '0' && v[i] <= '9' && count < 1u << 24; i++)
                count = count * 10 + (size_t)(v[i] - '0');
        }
        if (nh_capitalize_name(o, k, kl, profile, 0))
            abort();
        put(o, (const uint8_t *)": ", 2);
        for (size_t i = 0; i < count; i++) {
            if (!take_line(&p, end, &v, &vl))
                return 0;
            if (i)
                put(o, (const uint8_t *)", ", 2);
            put(o, v, vl);
        }
        put(o, (const uint8_t *)"\r\n", 2);
    }
    if (p != end)
        return 0;
    put(o, (const uint8_t *)"\r\n", 2);
    return 1;
}

static int has_crlf_line(const uint8_t *rec, size_t len)
{
    /* the request line's three lines: any CR among them (LF ends them) */
    size_t lines = 0;
    for (size_t i = 0; i < len && lines < 3; i++) {
        if (rec[i] == '\n')
            lines++;
        else if (rec[i] == '\r')
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int flat = data[0] & 1;
    int profile = data[0] & 2 ? NH_PROFILE_34 : NH_PROFILE_40;
    const uint8_t *rec = data + 1;
    size_t len = size - 1;
    nh_ctx *c = nh_ctx_new();
    uint8_t *in = c ? nh_ctx_input(c, len) : NULL;
    if (!in)
        abort();
    memcpy(in, rec, len);
    int rc = nh_wasm_write_header(c, len, flat ? NH_SEND_FLAT : 0, profile);
    nh_buf want = {0};
    if (!expected(rec, len, flat, profile, &want)) {
        if (rc != NH_ERROR || c->err.cls != NH_E_TYPE || c->out.len != 24 || memcmp(c->out.data, "malformed request record", 24))
            abort();
    } else if (has_crlf_line(rec, len)) {
        if (rc != NH_ERROR || c->err.cls != NH_E_ARGUMENT)
            abort();
    } else if (rc != NH_OK || c->out.len != want.len || (want.len && memcmp(c->out.data, want.data, want.len))) {
        abort();
    }
    nh_buf_free(&want);
    nh_ctx_free(c);
    return 0;
}
