#define _POSIX_C_SOURCE 200809L
/* The benchmark's native column: the codec's C compiled with -O2 and called
 * directly, doing each operation from the same inputs as the other columns.
 *   bench <inputs.txt> <ops> <passes> <min_ns> <gate|time>
 * inputs.txt is written by run.mjs: one length-prefixed field per input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/internal.h"
#include "bench_response.h"

typedef struct str {
    const uint8_t *p;
    size_t n;
} str;

static nh_buf out, tmp;
static nh_request *req_state;
static nh_error err;

static str field(FILE *f)
{
    size_t n;
    if (fscanf(f, "%zu:", &n) != 1)
        exit(2);
    uint8_t *p = malloc(n + 1);
    if (!p || fread(p, 1, n, f) != n)
        exit(2);
    fgetc(f);
    return (str){p, n};
}

static nh_str view(str s)
{
    return (nh_str){s.p, s.n};
}

/* inputs */
static str uri, hname, hvalue, form_string, response, big;
static size_t nform, npairs, nfields, feed;
static str form[8][2];
static str pairs[16][5]; /* key, kind(0 nil 1 str 2 array), then up to 3 values */
static size_t pair_nvals[16];
static str fields[32][2];

static nh_form_pair req_form[8];
static nh_form_pair enc_pairs[16];
static nh_str enc_values[16][3];

static void op_request(void)
{
    nh_str hv = view(hvalue);
    if (nh_request_init(req_state, NH_PROFILE_40, (nh_str){(const uint8_t *)"POST", 4}, view(uri), 1, 1,
                        NULL, NH_NO_INITHEADER, &out, &err) ||
        nh_request_set(req_state, view(hname), &hv, 1, &out, &err) ||
        nh_request_set_form_data(req_state, req_form, nform, (nh_str){NULL, 0}, &out, &err) ||
        nh_request_write(req_state, (nh_str){(const uint8_t *)"1.1", 3}, &out, &err))
        exit(3);
}

static void op_form_encode(void)
{
    out.len = 0;
    nh_encode_www_form(&out, enc_pairs, npairs);
}

static void op_form_decode(void)
{
    out.len = 0;
    if (nh_decode_www_form(&out, &err, form_string.p, form_string.n, (const uint8_t *)"&", 1))
        exit(3);
}

static nh_headers hdr;
static void op_canonicalize(void)
{
    nh_headers_reset(&hdr);
    for (size_t i = 0; i < nfields; i++) {
        tmp.len = 0;
        nh_headers_key(&hdr, &tmp, fields[i][0].p, fields[i][0].n);
        long fi = nh_headers_find(&hdr, tmp.data, tmp.len);
        if (fi < 0)
            fi = nh_headers_set(&hdr, tmp.data, tmp.len);
        nh_headers_push(&hdr, fi, fields[i][1].p, fields[i][1].n);
    }
    out.len = 0;
    nh_headers_write(&hdr, &out);
}

/* canonical forms, for the gate */
static void canon_form_decode(nh_buf *c)
{
    nh_reader r = {out.data, out.data + out.len, 0};
    uint32_t n = nh_rd_u32(&r);
    for (uint32_t i = 0; i < n; i++) {
        size_t kl, vl;
        const uint8_t *k = nh_rd_str(&r, &kl);
        const uint8_t *v = nh_rd_str(&r, &vl);
        nh_buf_append(c, k, kl);
        nh_buf_putc(c, 0);
        nh_buf_append(c, v, vl);
        nh_buf_putc(c, '\n');
    }
}

static void print_b64(const uint8_t *p, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        putchar(t[v >> 18]);
        putchar(t[(v >> 12) & 63]);
        putchar(i + 1 < n ? t[(v >> 6) & 63] : '=');
        putchar(i + 2 < n ? t[v & 63] : '=');
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return 2;
    uri = field(f);
    hname = field(f);
    hvalue = field(f);
    nform = (size_t)atoi((const char *)field(f).p);
    for (size_t i = 0; i < nform; i++) {
        form[i][0] = field(f);
        form[i][1] = field(f);
    }
    npairs = (size_t)atoi((const char *)field(f).p);
    for (size_t i = 0; i < npairs; i++) {
        pairs[i][0] = field(f);
        pairs[i][1] = field(f);
        pair_nvals[i] = (size_t)atoi((const char *)field(f).p);
        for (size_t j = 0; j < pair_nvals[i]; j++)
            pairs[i][2 + j] = field(f);
    }
    form_string = field(f);
    nfields = (size_t)atoi((const char *)field(f).p);
    for (size_t i = 0; i < nfields; i++) {
        fields[i][0] = field(f);
        fields[i][1] = field(f);
    }
    response = field(f);
    big = field(f);
    feed = (size_t)atoi((const char *)field(f).p);
    fclose(f);
    for (size_t i = 0; i < nform; i++)
        req_form[i] = (nh_form_pair){view(form[i][0]), view(form[i][1]), NULL, 0};
    for (size_t i = 0; i < npairs; i++) {
        uint8_t kind = pairs[i][1].p[0] - '0';
        enc_pairs[i] = (nh_form_pair){view(pairs[i][0]), {NULL, 0}, NULL, 0};
        if (kind == 1)
            enc_pairs[i].value = view(pairs[i][2]);
        if (kind == 2) {
            for (size_t j = 0; j < pair_nvals[i]; j++)
                enc_values[i][j] = view(pairs[i][2 + j]);
            enc_pairs[i].values = enc_values[i];
            enc_pairs[i].nvalues = pair_nvals[i];
        }
    }
    req_state = nh_request_new();
    nh_headers_init(&hdr, NH_PROFILE_40, 0);

    int passes = atoi(argv[3]);
    double min_ns = atof(argv[4]);
    int gate = strcmp(argv[5], "gate") == 0;
    char *ops = argv[2];
    for (char *op = strtok(ops, ","); op; op = strtok(NULL, ",")) {
        void (*work)(void) = NULL;
        if (!strcmp(op, "request"))
            work = op_request;
        else if (!strcmp(op, "formEncode"))
            work = op_form_encode;
        else if (!strcmp(op, "formDecode"))
            work = op_form_decode;
        else if (!strcmp(op, "canonicalize"))
            work = op_canonicalize;
        else
            work = bench_response_op(op, &response, &big, feed, &out);
        if (!work) {
            printf("%s -\n", op);
            continue;
        }
        if (gate) {
            work();
            printf("%s ", op);
            if (!strcmp(op, "formDecode")) {
                nh_buf c = {0};
                canon_form_decode(&c);
                print_b64(c.data, c.len);
            } else {
                print_b64(out.data, out.len);
            }
            putchar('\n');
            continue;
        }
        long iters = 1;
        for (;;) {
            double t0 = now_ns();
            for (long i = 0; i < iters; i++)
                work();
            if (now_ns() - t0 >= min_ns || iters >= 1L << 26)
                break;
            iters *= 2;
        }
        printf("%s ", op);
        for (int p = 0; p < passes; p++) {
            double t0 = now_ns();
            for (long i = 0; i < iters; i++)
                work();
            printf("%s%.1f", p ? "," : "", (now_ns() - t0) / (double)iters);
        }
        putchar('\n');
    }
    return 0;
}
