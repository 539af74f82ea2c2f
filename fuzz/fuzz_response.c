/* libFuzzer harness: response parsing.  The input's first byte picks the
 * options; the rest is the stream.  Parses it whole and again split at
 * points taken from the input, and requires the same events (head blocks,
 * body bytes, end offset) and the same error. */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "response_input.h"

typedef struct result {
    nh_buf heads, body;
    int rc, cls;
    nh_buf msg;
    size_t end;
} result;

static void run(const uint8_t *in, size_t n, const nh_resp_config *cfg, const size_t *cuts, size_t ncuts,
                result *res)
{
    nh_resp *p = nh_resp_new();
    if (!p)
        abort();
    nh_resp_reset(p, cfg);
    nh_buf ev = {0};
    nh_error err = {0};
    size_t off = 0;
    res->rc = NH_OK;
    res->end = SIZE_MAX;
    for (size_t c = 0; c <= ncuts && res->rc == NH_OK && !nh_resp_done(p); c++) {
        size_t to = c < ncuts ? cuts[c] : n;
        if (to < off)
            continue;
        ev.len = 0;
        res->rc = nh_resp_feed(p, in + off, to - off, to == n, &ev, &res->msg, &err);
        nh_reader r = {ev.data, ev.data ? ev.data + ev.len : NULL, 0};
        while (res->rc == NH_OK && r.p < r.end) {
            uint8_t t = nh_rd_u8(&r);
            size_t l;
            if (t == NH_EV_HEAD || t == NH_EV_INTERIM || t == NH_EV_FINAL) {
                const uint8_t *h = nh_rd_str(&r, &l);
                nh_buf_putc(&res->heads, t);
                nh_buf_append(&res->heads, h, l);
            } else if (t == NH_EV_BODY) {
                uint8_t src = nh_rd_u8(&r);
                uint32_t o = nh_rd_u32(&r), bl = nh_rd_u32(&r);
                const uint8_t *base = src ? nh_resp_data(p) : in + off;
                nh_buf_append(&res->body, base + o, bl);
            } else if (t == NH_EV_END) {
                res->end = off + nh_rd_u32(&r);
            } else {
                abort();
            }
            if (r.bad)
                abort();
        }
        off = to;
    }
    res->cls = err.cls;
    nh_buf_free(&ev);
    nh_resp_free(p);
}

static void result_free(result *r)
{
    nh_buf_free(&r->heads);
    nh_buf_free(&r->body);
    nh_buf_free(&r->msg);
}

static int same(const nh_buf *a, const nh_buf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t o = data[0];
    nh_resp_config cfg;
    fuzz_response_config(o, &cfg, 1 << 16);
    const uint8_t *in = data + 1;
    size_t n = size - 1;

    result whole = {0}, split = {0}, bytes = {0};
    run(in, n, &cfg, NULL, 0, &whole);
    /* cut points derived from the input */
    size_t cuts[8];
    size_t ncuts = fuzz_response_cuts(o, n, cuts);
    run(in, n, &cfg, cuts, ncuts, &split);
    /* decoding output can depend on where reads fall (as Ruby's does), so
     * compare the split run's body only without decoding */
    /* events of a call that fails are not reported, so after an error only
     * the error itself is compared */
    int ok = whole.rc == NH_OK;
    if (whole.rc != split.rc || whole.cls != split.cls || !same(&whole.msg, &split.msg) ||
        (ok && (!same(&whole.heads, &split.heads) || whole.end != split.end ||
                (!cfg.decode && !same(&whole.body, &split.body)))))
        abort();
    if (n <= 512 && !cfg.decode) { /* one byte at a time */
        size_t all[512];
        for (size_t i = 0; i < n; i++)
            all[i] = i;
        run(in, n, &cfg, all, n, &bytes);
        if (whole.rc != bytes.rc || whole.cls != bytes.cls || !same(&whole.msg, &bytes.msg) ||
            (ok && (!same(&whole.heads, &bytes.heads) || !same(&whole.body, &bytes.body) ||
                    whole.end != bytes.end)))
            abort();
    }
    if (cfg.strict && ok) {
        /* strict mode only rejects: what it accepts, MRI reads the same way,
         * except that Content-Range does not frame a strict body (where
         * MRI may also raise for its format) */
        nh_resp_config lax = cfg;
        lax.strict = 0;
        result mri = {0};
        run(in, n, &lax, NULL, 0, &mri);
        int ranged = memmem(whole.heads.data, whole.heads.len, "content-range", 13) != NULL;
        if (!ranged && (mri.rc != NH_OK || !same(&whole.heads, &mri.heads) || !same(&whole.body, &mri.body) ||
                        whole.end != mri.end))
            abort();
        result_free(&mri);
    }
    result_free(&whole);
    result_free(&split);
    result_free(&bytes);
    return 0;
}
