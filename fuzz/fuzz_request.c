/* libFuzzer harness: request building (nethttp.h's functions) from fuzzed
 * methods, URIs, header names and values, forms and bodies; and raw (hostile)
 * request records, as the wasm ABI replays them.
 * Net::HTTPHeader's typed readers (header_fields.c) run over each built
 * request and over the same fields in a binary (response) store. */
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"

static nh_str view(const uint8_t *s, size_t n)
{
    nh_str v = {s, n};
    return v;
}

/* Splits the input at 0x00 0x01 pairs into fields. */
static int next_field(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *n)
{
    if (*p >= end)
        return 0;
    const uint8_t *q = *p;
    while (q + 1 < end && !(q[0] == 0 && q[1] == 1))
        q++;
    if (q + 1 >= end)
        q = end;
    *s = *p;
    *n = (size_t)(q - *p);
    *p = q < end ? q + 2 : end;
    return 1;
}

static void check_output(const nh_buf *out, int rc, const uint8_t *method, size_t mlen)
{
    if (rc == NH_OK && out->len < mlen + 1)
        abort();
    if (rc == NH_OK && memcmp(out->data, method, mlen) != 0)
        abort();
}

/* A reader's output: u8 tag, u32 n, n strings that end exactly at its end. */
static void check_query(const nh_buf *out, int rc, int kind)
{
    if (rc == NH_ERROR || rc == NH_NOMEM)
        return;
    if (rc != NH_OK || out->len < 5 || out->data[0] > 1)
        abort();
    nh_reader r = {out->data + 1, out->data + out->len, 0};
    uint32_t n = nh_rd_u32(&r);
    for (uint32_t i = 0; i < n; i++) {
        size_t l;
        const uint8_t *s = nh_rd_str(&r, &l);
        /* Integer#to_s results: an optional '-', then digits */
        if (kind == NH_HQ_CONTENT_LENGTH || kind == NH_HQ_CONTENT_RANGE || kind == NH_HQ_RANGE) {
            if (l == 0)
                abort();
            for (size_t j = s[0] == '-' ? 1 : 0; j < l; j++)
                if (s[j] < '0' || s[j] > '9')
                    abort();
        }
    }
    if (r.bad || r.p != r.end)
        abort();
    if ((kind == NH_HQ_RANGE || kind == NH_HQ_TYPE_PARAMS) && n % 2)
        abort();
}

/* Runs every reader over a request's fields. */
static void query_request(nh_request *q, const uint8_t *arg, size_t alen)
{
    nh_buf out = {0};
    nh_error err;
    for (int kind = 0; kind <= NH_HQ_EACH_CAPITALIZED + 1; kind++) {
        int rc = nh_header_query(nh_request_headers(q), kind, arg, alen, &out, &err);
        if (kind >= NH_HQ_RANGE && kind <= NH_HQ_EACH_CAPITALIZED)
            check_query(&out, rc, kind);
    }
    nh_buf_free(&out);
}

/* The readers over a binary store holding the fuzzed name/value pairs under
 * the names the readers look at. */
static void query_binary(const uint8_t *p, const uint8_t *end, int profile)
{
    static const char *const names[] = {"range", "content-range", "content-length",
                                        "transfer-encoding", "content-type", "connection",
                                        "proxy-connection"};
    nh_headers h;
    nh_headers_init(&h, profile, 1);
    const uint8_t *s;
    size_t n;
    for (size_t i = 0; next_field(&p, end, &s, &n); i++) {
        const char *k = names[i % 7];
        long fi = nh_headers_find(&h, (const uint8_t *)k, strlen(k));
        if (fi < 0)
            fi = nh_headers_set(&h, (const uint8_t *)k, strlen(k));
        if (fi < 0 || nh_headers_push(&h, fi, s, n))
            break;
    }
    nh_buf out = {0};
    nh_error err;
    for (int kind = NH_HQ_RANGE; kind <= NH_HQ_EACH_CAPITALIZED; kind++) {
        int rc = nh_header_query(&h, kind, (const uint8_t *)"Content-Type", 12, &out, &err);
        check_query(&out, rc, kind);
    }
    nh_buf_free(&out);
    nh_headers_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nh_buf out = {0}, scratch = {0}, scratch2 = {0};
    nh_error err;
    nh_request *q = nh_request_new();
    if (!q)
        return 0;

    /* 1. the raw input as a record: must be rejected or handled, never overread */
    nh_request_replay(q, &scratch, &scratch2, data, size, &out, &err);

    /* 2. a request built from the input's fields */
    if (size < 2)
        goto done;
    const uint8_t *p = data + 2, *end = data + size, *s;
    size_t n;
    uint8_t flags = data[0], ops = data[1];
    const uint8_t *method = (const uint8_t *)"GET";
    size_t mlen = 3;
    if (next_field(&p, end, &s, &n)) {
        method = s;
        mlen = n;
    }
    nh_str target = view((const uint8_t *)"/", 1);
    if (next_field(&p, end, &s, &n))
        target = view(s, n);
    size_t ninit = (flags >> 2) & 3;
    nh_str init[4];
    for (size_t i = 0; ninit != 3 && i < ninit; i++) {
        const uint8_t *k = (const uint8_t *)"k", *v = (const uint8_t *)"v";
        size_t kl = 1, vl = 1;
        next_field(&p, end, &k, &kl);
        next_field(&p, end, &v, &vl);
        init[2 * i] = view(k, kl);
        init[2 * i + 1] = view(v, vl);
    }
    int rc = nh_request_init(q, flags & 1, view(method, mlen), target, (flags >> 1) & 1, 1, init,
                             ninit == 3 ? NH_NO_INITHEADER : ninit, &out, &err);
    for (int i = 0; i < 4 && rc == NH_OK; i++, ops >>= 2) {
        const uint8_t *k = (const uint8_t *)"x", *v = (const uint8_t *)"";
        size_t kl = 1, vl = 0;
        next_field(&p, end, &k, &kl);
        next_field(&p, end, &v, &vl);
        nh_str value = view(v, vl);
        switch (ops & 3) {
        case 0:
            rc = nh_request_set(q, view(k, kl), &value, 1, &out, &err);
            break;
        case 1:
            rc = nh_request_add_field(q, view(k, kl), &value, 1, &out, &err);
            break;
        case 2: { /* a form with a separator: [[k, v], [v, [nil, k]]], sep k */
            nh_str arr[2] = {{NULL, 0}, {k, kl}};
            nh_form_pair form[2] = {{view(k, kl), value, NULL, 0}, {value, {NULL, 0}, arr, 2}};
            rc = nh_request_set_form_data(q, form, 2, view(k, kl), &out, &err);
            break;
        }
        default:
            rc = nh_request_set_body(q, value);
        }
    }
    if (rc == NH_OK) {
        const uint8_t *a = (const uint8_t *)"Range";
        size_t al = 5;
        const uint8_t *save = p;
        next_field(&p, end, &a, &al);
        p = save;
        query_request(q, a, al);
    }
    query_binary(data + 2, end, flags & 1);
    if (rc == NH_OK) {
        nh_str ver = view((const uint8_t *)"1.1", 3);
        if (next_field(&p, end, &s, &n))
            ver = view(s, n);
        rc = nh_request_write(q, ver, &out, &err);
        check_output(&out, rc, method, mlen);
    }
    if (rc != NH_OK && rc != NH_ERROR)
        abort();
done:
    nh_buf_free(&out);
    nh_buf_free(&scratch);
    nh_buf_free(&scratch2);
    nh_request_free(q);
    return 0;
}
