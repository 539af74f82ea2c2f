/* Replays inflate cases (src/inflate.c) whose expected results come from
 * Ruby's zlib, as Net::HTTP drives it (see tools/verify-inflate.rb).
 *
 *   test_inflate [CASES]      replays CASES (default: the committed fixture
 *                             set tests/fixtures/inflate/cases.bin); prints
 *                             "N passed, N failed" and exits 1 on a failure
 *   test_inflate --bench FILE [MiB]
 *                             inflates FILE (gzip or zlib) repeatedly, fed
 *                             in 16 KiB chunks, for about MiB (default 512)
 *                             of output, and prints the throughput
 *
 * Every case is fed three ways: all at once, in the recorded chunks (the
 * ones Ruby was fed), and one byte at a time; each must give the expected
 * output (length and SHA-256) or the expected error class and message, as
 * nh_inflate_feed/nh_inflate_finish report them.
 *
 * Case file format (little-endian):
 *   "NHINFL1\n", u32 count, then per case:
 *   u16 name length, name; u32 max_output (0: none);
 *   u32 input length, input; u16 chunk count, u32 chunk sizes (0 chunks:
 *   fed whole);
 *   u8 expected class (0: success, else an nh_error_class number, 15 for
 *   Zlib::NeedDict); success: u32 output length, 32-byte SHA-256 of the
 *   output; error: u16 message length, message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/inflate.h"

/* ---- SHA-256 (FIPS 180-4) ---------------------------------------------- */

typedef struct sha256 {
    uint32_t h[8];
    uint8_t buf[64];
    uint64_t len;
} sha256;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))

static void sha256_block(sha256 *s, const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
    s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_init(sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->len = 0;
}

static void sha256_update(sha256 *s, const uint8_t *p, size_t n)
{
    while (n) {
        size_t have = (size_t)(s->len & 63), k = 64 - have;
        if (k > n)
            k = n;
        memcpy(s->buf + have, p, k);
        s->len += k;
        p += k;
        n -= k;
        if ((s->len & 63) == 0)
            sha256_block(s, s->buf);
    }
}

static void sha256_final(sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->len * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (size_t)((s->len & 63) < 56 ? 56 - (s->len & 63) : 120 - (s->len & 63));
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

/* ---- cases ----------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p, *end;
    int bad;
} reader;

static const uint8_t *take(reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *s = r->p;
    r->p += n;
    return s;
}

static uint32_t rd(reader *r, int size)
{
    const uint8_t *s = take(r, (size_t)size);
    uint32_t v = 0;
    for (int i = size - 1; s && i >= 0; i--)
        v = v << 8 | s[i];
    return v;
}

typedef struct result {
    int cls;            /* 0: success */
    uint64_t len;       /* output length (success) */
    uint8_t sha[32];    /* output SHA-256 (success) */
    char msg[256];      /* error message */
    int total_out_ok;   /* nh_inflate_total_out agreed with the output */
    int stored_bad;     /* a byte fed with nh_inflate_stored_left > 0 did not come out as is */
} result;

/* Feeds `in` in pieces of the sizes in `chunks` (NULL: one piece; step > 0:
 * pieces of `step` bytes), then finishes, as Net::HTTP does. */
static void inflate_case(const uint8_t *in, size_t n, uint32_t max_output, const uint32_t *chunks,
                         size_t nchunks, size_t step, result *res)
{
    static nh_inflate z;
    nh_buf out = {0}, msg = {0};
    nh_error err = {0};
    sha256 sh;
    int rc = NH_OK;
    size_t off = 0, ci = 0;

    nh_inflate_init(&z, max_output);
    sha256_init(&sh);
    memset(res, 0, sizeof *res);
    while (off < n) {
        size_t k = step ? step : chunks ? (ci < nchunks ? chunks[ci++] : n - off) : n - off;
        if (k > n - off)
            k = n - off;
        uint32_t stored = nh_inflate_stored_left(&z);
        rc = nh_inflate_feed(&z, in + off, k, &out, &msg, &err);
        off += k;
        if (rc != NH_OK)
            break;
        if (stored && k == 1 && (out.len != 1 || out.data[0] != in[off - 1]))
            res->stored_bad = 1;
        sha256_update(&sh, out.data, out.len);
        res->len += out.len;
        out.len = 0; /* a streaming consumer takes the bytes each time */
        if (!step && !chunks)
            break;
    }
    if (rc == NH_OK)
        rc = nh_inflate_finish(&z, &msg, &err);
    if (rc == NH_OK) {
        sha256_final(&sh, res->sha);
        res->total_out_ok = nh_inflate_total_out(&z) == res->len;
    } else if (rc == NH_ERROR) {
        res->cls = err.cls;
        size_t m = msg.len < sizeof res->msg - 1 ? msg.len : sizeof res->msg - 1;
        memcpy(res->msg, msg.data, m);
        res->msg[m] = 0;
    } else {
        res->cls = -1;
        strcpy(res->msg, "NH_NOMEM");
    }
    nh_buf_free(&out);
    nh_buf_free(&msg);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *data = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            data = realloc(data, cap);
        }
        size_t k = fread(data + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    fclose(f);
    *len = n;
    return data;
}

static void hex(const uint8_t *p, char *s)
{
    for (int i = 0; i < 32; i++)
        sprintf(s + 2 * i, "%02x", p[i]);
}

static int replay(const char *path)
{
    size_t flen;
    uint8_t *file = read_file(path, &flen);
    if (!file) {
        fprintf(stderr, "cannot read %s\n", path);
        return 2;
    }
    reader r = {file, file + flen, 0};
    const uint8_t *magic = take(&r, 8);
    if (!magic || memcmp(magic, "NHINFL1\n", 8)) {
        fprintf(stderr, "%s: not a case file\n", path);
        free(file);
        return 2;
    }
    uint32_t count = rd(&r, 4);
    int passed = 0, failed = 0;
    uint32_t *chunks = NULL;
    for (uint32_t i = 0; i < count && !r.bad; i++) {
        uint32_t namelen = rd(&r, 2);
        const uint8_t *name = take(&r, namelen);
        uint32_t max_output = rd(&r, 4);
        uint32_t inlen = rd(&r, 4);
        const uint8_t *in = take(&r, inlen);
        uint32_t nchunks = rd(&r, 2);
        chunks = realloc(chunks, (nchunks + 1) * sizeof *chunks);
        for (uint32_t c = 0; c < nchunks; c++)
            chunks[c] = rd(&r, 4);
        result want;
        memset(&want, 0, sizeof want);
        want.cls = (int)rd(&r, 1);
        if (want.cls == 0) {
            want.len = rd(&r, 4);
            const uint8_t *sha = take(&r, 32);
            if (sha)
                memcpy(want.sha, sha, 32);
        } else {
            uint32_t ml = rd(&r, 2);
            const uint8_t *m = take(&r, ml);
            if (m && ml < sizeof want.msg)
                memcpy(want.msg, m, ml);
        }
        if (r.bad)
            break;
        static const char *const modes[3] = {"whole", "chunks", "bytes"};
        int ok = 1;
        for (int mode = 0; mode < 3; mode++) {
            result got;
            inflate_case(in, inlen, max_output, mode == 1 ? chunks : NULL, nchunks, mode == 2 ? 1 : 0,
                         &got);
            int same = !got.stored_bad && got.cls == want.cls &&
                       (want.cls ? strcmp(got.msg, want.msg) == 0
                                 : got.len == want.len && !memcmp(got.sha, want.sha, 32) &&
                                       got.total_out_ok);
            if (!same) {
                char gh[65], wh[65];
                hex(got.sha, gh);
                hex(want.sha, wh);
                printf("FAIL %.*s [%s]\n  want: %d %s len=%llu sha=%s\n  got:  %d %s len=%llu sha=%s%s\n",
                       (int)namelen, (const char *)name, modes[mode], want.cls, want.msg,
                       (unsigned long long)want.len, want.cls ? "" : wh, got.cls, got.msg,
                       (unsigned long long)got.len, got.cls ? "" : gh,
                       got.stored_bad                 ? " (nh_inflate_stored_left wrong)"
                       : got.cls || got.total_out_ok ? ""
                                                      : " (total_out differs)");
                ok = 0;
            }
        }
        if (ok)
            passed++;
        else
            failed++;
    }
    if (r.bad) {
        fprintf(stderr, "%s: truncated case file\n", path);
        failed++;
    }
    free(chunks);
    free(file);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(const char *path, double mib)
{
    size_t n;
    uint8_t *in = read_file(path, &n);
    if (!in) {
        fprintf(stderr, "cannot read %s\n", path);
        return 2;
    }
    static nh_inflate z;
    nh_buf out = {0}, msg = {0};
    nh_error err = {0};
    uint64_t produced = 0;
    int runs = 0;
    double t0 = now();
    while (produced < (uint64_t)(mib * 1048576.0) || runs < 3) {
        nh_inflate_init(&z, 0);
        for (size_t off = 0; off < n; off += 16384) {
            size_t k = n - off < 16384 ? n - off : 16384;
            if (nh_inflate_feed(&z, in + off, k, &out, &msg, &err) != NH_OK) {
                fprintf(stderr, "error: %.*s\n", (int)msg.len, (const char *)msg.data);
                return 1;
            }
            out.len = 0;
        }
        if (nh_inflate_finish(&z, &msg, &err) != NH_OK) {
            fprintf(stderr, "error: %.*s\n", (int)msg.len, (const char *)msg.data);
            return 1;
        }
        produced += nh_inflate_total_out(&z);
        runs++;
    }
    double dt = now() - t0;
    printf("%s: %zu -> %llu bytes, %d runs, %.1f MB/s output, %.1f MB/s input\n", path, n,
           (unsigned long long)(produced / (uint64_t)runs), runs, (double)produced / dt / 1e6,
           (double)n * runs / dt / 1e6);
    nh_buf_free(&out);
    nh_buf_free(&msg);
    free(in);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--bench") == 0)
        return bench(argv[2], argc >= 4 ? atof(argv[3]) : 512);
    if (argc >= 2)
        return replay(argv[1]);
    /* run.sh runs the tests from tests/c; also work from the repository root. */
    FILE *f = fopen("../fixtures/inflate/cases.bin", "rb");
    if (f) {
        fclose(f);
        return replay("../fixtures/inflate/cases.bin");
    }
    return replay("tests/fixtures/inflate/cases.bin");
}
