#include <stdlib.h>
#include <string.h>

#include "bench_response.h"

static const uint8_t *resp_p, *big_p;
static size_t resp_n, big_n, feed_size;
static nh_buf *result;
static nh_resp *parser;
static nh_buf ev, msg, body;
static nh_error err;

/* head block -> "code\nmessage\nname: v1\0v2\n...\n" */
static void canon_head(const uint8_t *h, size_t n)
{
    nh_reader r = {h, h + n, 0};
    size_t l;
    nh_rd_u8(&r);
    nh_rd_str(&r, &l);  /* class */
    nh_rd_str(&r, &l);  /* version */
    const uint8_t *code = nh_rd_str(&r, &l);
    nh_buf_append(result, code, l);
    nh_buf_putc(result, '\n');
    const uint8_t *m = nh_rd_str(&r, &l);
    nh_buf_append(result, m, l);
    nh_buf_putc(result, '\n');
    uint32_t nf = nh_rd_u32(&r);
    for (uint32_t i = 0; i < nf; i++) {
        nh_rd_u8(&r); /* name id */
        const uint8_t *k = nh_rd_str(&r, &l);
        nh_buf_append(result, k, l);
        nh_buf_append(result, ": ", 2);
        uint32_t nv = nh_rd_u32(&r);
        for (uint32_t j = 0; j < nv; j++) {
            const uint8_t *v = nh_rd_str(&r, &l);
            if (j)
                nh_buf_putc(result, 0);
            nh_buf_append(result, v, l);
        }
        nh_buf_putc(result, '\n');
    }
    nh_buf_putc(result, '\n');
}

static void parse(const uint8_t *in, size_t n, size_t piece)
{
    nh_resp_config cfg;
    nh_resp_config_default(&cfg);
    nh_resp_reset(parser, &cfg);
    nh_resp_set_stream_offset(parser, 0);
    result->len = 0;
    body.len = 0;
    for (size_t off = 0; off < n; off += piece) {
        size_t len = n - off < piece ? n - off : piece;
        ev.len = 0;
        if (nh_resp_feed(parser, in + off, len, off + len == n, &ev, &msg, &err))
            exit(4);
        nh_reader r = {ev.data, ev.data + ev.len, 0};
        while (r.p < r.end) {
            uint8_t t = nh_rd_u8(&r);
            if (t == NH_EV_HEAD || t == NH_EV_INTERIM || t == NH_EV_FINAL) {
                size_t l;
                const uint8_t *h = nh_rd_str(&r, &l);
                if (t == NH_EV_HEAD)
                    canon_head(h, l);
            } else if (t == NH_EV_BODY) {
                uint8_t src = nh_rd_u8(&r);
                uint32_t o = nh_rd_u32(&r), l = nh_rd_u32(&r);
                nh_buf_append(&body, (src ? nh_resp_data(parser) : in + off) + o, l);
            } else if (t == NH_EV_END) {
                nh_rd_u32(&r);
            } else {
                exit(5);
            }
        }
    }
    nh_buf_append(result, body.data, body.len);
}

static void op_response(void)
{
    parse(resp_p, resp_n, resp_n);
}

static void op_incremental(void)
{
    parse(big_p, big_n, feed_size);
}

void (*bench_response_op(const char *op, const void *response, const void *big, size_t feed,
                         nh_buf *out))(void)
{
    const bstr *rs = response, *bg = big;
    resp_p = rs->p;
    resp_n = rs->n;
    big_p = bg->p;
    big_n = bg->n;
    feed_size = feed;
    result = out;
    if (!parser)
        parser = nh_resp_new();
    if (!strcmp(op, "response"))
        return op_response;
    if (!strcmp(op, "incremental"))
        return op_incremental;
    return NULL;
}
