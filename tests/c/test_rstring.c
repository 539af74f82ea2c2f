/* Unit tests for src/rstring.c and src/casemap.c: Ruby String semantics.
 *
 * Every expected value was copied from real Ruby 4.0.0 (profile 0) and Ruby
 * 3.4.1 (profile 1) runs (ruby.wasm).  Rows marked BOTH gave the same result
 * in both; R40 / R34 rows differ between the two Unicode versions (17 / 15).
 *
 *   cc -std=c11 -Wall -Wextra -Werror tests/c/test_rstring.c \
 *      src/rstring.c src/casemap.c src/buf.c -o test_rstring && ./test_rstring
 */
#include <stdio.h>
#include <string.h>

#include "../../src/internal.h"

enum kind { DOWN, CAP, ADOWN, ACAP, INSPECT_U, INSPECT_B, DUMP_U, DUMP_B, SCRUB, VALID, STRIP, PRINT };
static const char *const KIND[] = { "downcase", "capitalize", "downcase(binary)", "capitalize(binary)",
                                    "inspect", "inspect(binary)", "dump", "dump(binary)", "scrub",
                                    "valid_encoding?", "strip", "printable" };
enum { R40 = 1, R34 = 2, BOTH = 3 }; /* profile bits */

struct tcase {
    int kind, profiles;
    const char *in;
    size_t inlen;
    const char *want;
    size_t wantlen;
};

static const struct tcase CASES[] = {
    {DOWN, BOTH, "\xce\x91\xce\xa3 \xce\x91\xce\xa3\xce\x91", 11, "\xce\xb1\xcf\x83 \xce\xb1\xcf\x83\xce\xb1", 11},
    {DOWN, BOTH, "\xc4\xb0", 2, "i\xcc\x87", 3},
    {DOWN, BOTH, "\xc3\x80\xc3\x89\xc3\x8e Content-TYPE", 19, "\xc3\xa0\xc3\xa9\xc3\xae content-type", 19},
    {DOWN, BOTH, "\xe1\xba\x9e", 3, "\xc3\x9f", 2},
    {DOWN, BOTH, "\xe2\x84\xa6\xe2\x84\xaa\xe2\x84\xab", 9, "\xcf\x89k\xc3\xa5", 5},
    {DOWN, BOTH, "\xf0\x90\x90\x80\xf0\x90\x90\x81", 8, "\xf0\x90\x90\xa8\xf0\x90\x90\xa9", 8},
    {DOWN, BOTH, "\xe2\x92\xb6", 3, "\xe2\x93\x90", 3},
    {DOWN, R40, "\xea\x9f\x8b\xea\x9f\x8c\xea\x9f\x9c", 9, "\xc9\xa4\xea\x9f\x8d\xc6\x9b", 7},
    {DOWN, R34, "\xea\x9f\x8b\xea\x9f\x8c\xea\x9f\x9c", 9, "\xea\x9f\x8b\xea\x9f\x8c\xea\x9f\x9c", 9},
    {DOWN, R40, "\xe1\xb2\x90\xe1\xb2\x89", 6, "\xe1\x83\x90\xe1\xb2\x8a", 6},
    {DOWN, R34, "\xe1\xb2\x90\xe1\xb2\x89", 6, "\xe1\x83\x90\xe1\xb2\x89", 6},
    {DOWN, BOTH, "\xc7\x85\xc7\x84", 4, "\xc7\x86\xc7\x86", 4},
    {DOWN, R40, "\xf0\x90\xb5\x90\xf0\x90\xb5\xa5", 8, "\xf0\x90\xb5\xb0\xf0\x90\xb6\x85", 8},
    {DOWN, R34, "\xf0\x90\xb5\x90\xf0\x90\xb5\xa5", 8, "\xf0\x90\xb5\x90\xf0\x90\xb5\xa5", 8},
    {DOWN, BOTH, "\xc3\xbf\xc5\xb8", 4, "\xc3\xbf\xc3\xbf", 4},
    {CAP, BOTH, "\xc3\x9f", 2, "Ss", 2},
    {CAP, BOTH, "\xc5\x89", 2, "\xca\xbcN", 3},
    {CAP, BOTH, "\xc7\x86" "a", 3, "\xc7\x85" "a", 3},
    {CAP, BOTH, "\xc7\x85" "A", 3, "\xc7\x85" "a", 3},
    {CAP, BOTH, "hELLO wORLD", 11, "Hello world", 11},
    {CAP, BOTH, "\xef\xac\x80", 3, "Ff", 2},
    {CAP, BOTH, "\xe1\xbe\xb3", 3, "\xe1\xbe\xbc", 3},
    {CAP, BOTH, "\xce\x90", 2, "\xce\x99\xcc\x88\xcc\x81", 6},
    {CAP, BOTH, "\xc7\xb0", 2, "J\xcc\x8c", 3},
    {CAP, BOTH, "\xc4\xb0STANBUL", 9, "\xc4\xb0stanbul", 9},
    {CAP, BOTH, "\xe1\xb2\x80", 3, "\xd0\x92", 2},
    {CAP, BOTH, "\xe1\x83\x90\xe1\x83\x91", 6, "\xe1\x83\x90\xe1\x83\x91", 6},
    {CAP, BOTH, "\xe1\xb2\x90\xe1\xb2\x91", 6, "\xe1\x83\x90\xe1\x83\x91", 6},
    {CAP, R40, "\xea\x9f\x8dX", 4, "\xea\x9f\x8cx", 4},
    {CAP, R34, "\xea\x9f\x8dX", 4, "\xea\x9f\x8dx", 4},
    {CAP, BOTH, "\xc4\xb1", 2, "I", 1},
    {CAP, BOTH, "\xc5\xbfS", 3, "Ss", 2},
    {CAP, BOTH, "\xef\xac\x93", 3, "\xd5\x84\xd5\xb6", 4},
    {CAP, R40, "\xf0\x90\xb5\xb0\xf0\x90\xb5\x90", 8, "\xf0\x90\xb5\x90\xf0\x90\xb5\xb0", 8},
    {CAP, R34, "\xf0\x90\xb5\xb0\xf0\x90\xb5\x90", 8, "\xf0\x90\xb5\xb0\xf0\x90\xb5\x90", 8},
    {CAP, R40, "\xe1\xb2\x8a", 3, "\xe1\xb2\x89", 3},
    {CAP, R34, "\xe1\xb2\x8a", 3, "\xe1\xb2\x8a", 3},
    {CAP, BOTH, "1ABC", 4, "1abc", 4},
    {CAP, BOTH, "", 0, "", 0},
    {ADOWN, BOTH, "\xc3\x80" "BC\xff", 5, "\xc3\x80" "bc\xff", 5},
    {ACAP, BOTH, "\xc3\x80" "BC\xff", 5, "\xc3\x80" "bc\xff", 5},
    {ADOWN, BOTH, "aBC-dEF", 7, "abc-def", 7},
    {ACAP, BOTH, "aBC-dEF", 7, "Abc-def", 7},
    {ADOWN, BOTH, "\xe0" "bc", 3, "\xe0" "bc", 3},
    {ACAP, BOTH, "\xe0" "bc", 3, "\xe0" "bc", 3},
    {INSPECT_U, BOTH, "\x00", 1, "\"\\u0000\"", 8},
    {INSPECT_U, BOTH, "\x7f", 1, "\"\\u007F\"", 8},
    {INSPECT_U, BOTH, "\x1b\x07\x08\x0b\x0c\x0a\x0d\x09", 8, "\"\\e\\a\\b\\v\\f\\n\\r\\t\"", 18},
    {INSPECT_U, BOTH, "#{ #$ #@ #x #", 13, "\"\\#{ \\#$ \\#@ #x #\"", 18},
    {INSPECT_U, BOTH, "\"\\", 2, "\"\\\"\\\\\"", 6},
    {INSPECT_U, BOTH, "\xc3\xa9\xf0\x9f\x98\x80\xc2\x85\xe2\x80\x8b\xc2\xa0", 13, "\"\xc3\xa9\xf0\x9f\x98\x80\\u0085\xe2\x80\x8b\xc2\xa0\"", 19},
    {INSPECT_U, BOTH, "\xff\xe3\x81" "a", 4, "\"\\xFF\\xE3\\x81a\"", 15},
    {INSPECT_U, BOTH, "#\xff{", 3, "\"#\\xFF{\"", 8},
    {INSPECT_U, R40, "\xf0\x90\xb5\x90\xf0\x9f\xab\xa9\xf3\xa0\x80\x81\xef\xbf\xbe\xf4\x8f\xbf\xbf", 19, "\"\xf0\x90\xb5\x90\xf0\x9f\xab\xa9\xf3\xa0\x80\x81\\uFFFE\\u{10FFFF}\"", 30},
    {INSPECT_U, R34, "\xf0\x90\xb5\x90\xf0\x9f\xab\xa9\xf3\xa0\x80\x81\xef\xbf\xbe\xf4\x8f\xbf\xbf", 19, "\"\\u{10D50}\\u{1FAE9}\xf3\xa0\x80\x81\\uFFFE\\u{10FFFF}\"", 40},
    {INSPECT_U, BOTH, "\xd8\x80\xc2\xad\xe2\x80\xa8", 7, "\"\xd8\x80\xc2\xad\\u2028\"", 12},
    {INSPECT_B, BOTH, "\xc3\xa9\x00\x7f#{\xff", 7, "\"\\xC3\\xA9\\x00\\x7F\\#{\\xFF\"", 25},
    {INSPECT_B, BOTH, "a\"b", 3, "\"a\\\"b\"", 6},
    {DUMP_U, BOTH, "\xc3\xa9\xf0\x9f\x98\x80\x01", 7, "\"\\u00E9\\u{1F600}\\x01\"", 21},
    {DUMP_U, BOTH, "\xff#{#x", 5, "\"\\xFF\\#{#x\"", 11},
    {DUMP_U, BOTH, "\xf4\x8f\xbf\xbf\xc2\x85\x1b", 7, "\"\\u{10FFFF}\\u0085\\e\"", 20},
    {DUMP_U, BOTH, "\xe3\x81", 2, "\"\\xE3\\x81\"", 10},
    {DUMP_B, BOTH, "\xc3\xa9", 2, "\"\\xC3\\xA9\"", 10},
    {DUMP_B, BOTH, "#$\x7f", 3, "\"\\#$\\x7F\"", 9},
    {SCRUB, BOTH, "\xff\xfe\xc3", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9},
    {SCRUB, BOTH, "\xe3\x81", 2, "\xef\xbf\xbd", 3},
    {SCRUB, BOTH, "\xf0\x90\x80x", 4, "\xef\xbf\xbdx", 4},
    {SCRUB, BOTH, "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9},
    {SCRUB, BOTH, "a\xe3" "A", 3, "a\xef\xbf\xbd" "A", 5},
    {SCRUB, BOTH, "\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12},
    {SCRUB, BOTH, "\xc0\x80", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6},
    {SCRUB, BOTH, "ok \xc3\xa9", 5, "ok \xc3\xa9", 5},
    {VALID, BOTH, "\xc3\xa9", 2, "1", 1},
    {VALID, BOTH, "\xed\xa0\x80", 3, "0", 1},
    {VALID, BOTH, "\xf4\x8f\xbf\xbf", 4, "1", 1},
    {VALID, BOTH, "\xf4\x90\x80\x80", 4, "0", 1},
    {VALID, BOTH, "\xe0\x9f\xbf", 3, "0", 1},
    {VALID, BOTH, "\xc2", 1, "0", 1},
    {VALID, BOTH, "\xef\xbf\xbf", 3, "1", 1},
    {STRIP, BOTH, "  \x00" "a\x00 ", 6, "a", 1},
    {STRIP, BOTH, "\x00 a", 3, "a", 1},
    {STRIP, BOTH, "\x09\x0a\x0b\x0c\x0d x \xc2\xa0", 10, "x \xc2\xa0", 4},
    {STRIP, BOTH, "   ", 3, "", 0},
    {STRIP, BOTH, "\xe3\x80\x80" "a\xe3\x80\x80", 7, "\xe3\x80\x80" "a\xe3\x80\x80", 7},
    {STRIP, BOTH, "", 0, "", 0},
    {PRINT, BOTH, "\xc2\x85", 2, "0", 1},
    {PRINT, BOTH, "\xc2\xa0", 2, "1", 1},
    {PRINT, BOTH, "\xe2\x80\x8b", 3, "1", 1},
    {PRINT, BOTH, "\x7f", 1, "0", 1},
    {PRINT, BOTH, " ", 1, "1", 1},
    {PRINT, BOTH, "\xee\x80\x80", 3, "1", 1},
    {PRINT, BOTH, "\xf4\x8f\xbf\xbf", 4, "0", 1},
    {PRINT, R40, "\xf0\x9f\xab\xa9", 4, "1", 1},
    {PRINT, R34, "\xf0\x9f\xab\xa9", 4, "0", 1},
    {PRINT, R40, "\xf0\x90\xb5\x90", 4, "1", 1},
    {PRINT, R34, "\xf0\x90\xb5\x90", 4, "0", 1},
    {PRINT, BOTH, "\xef\xbf\xbe", 3, "0", 1},
    {PRINT, BOTH, "\xf3\xa0\x80\x81", 4, "1", 1},
    {PRINT, BOTH, "\xc2\xad", 2, "1", 1},
    {PRINT, BOTH, "\xcd\xb8", 2, "0", 1},
    {PRINT, BOTH, "\xf0\x9f\x98\x80", 4, "1", 1},
    {PRINT, BOTH, "\xe2\x80\xa8", 3, "0", 1},
    {PRINT, BOTH, "\xe3\x80\x80", 3, "1", 1},
};

static int passed, failed;

static void show(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            putchar(c);
        else
            printf("\\x%02x", c);
    }
    putchar('"');
}

static void check(const struct tcase *t, int profile, const void *got, size_t gotlen)
{
    if (gotlen == t->wantlen && memcmp(got, t->want, gotlen) == 0) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL %s profile %d of ", KIND[t->kind], profile);
    show(t->in, t->inlen);
    printf(": want ");
    show(t->want, t->wantlen);
    printf(", got ");
    show(got, gotlen);
    putchar('\n');
}

static uint32_t decode1(const uint8_t *s)
{
    if (s[0] < 0x80) return s[0];
    if (s[0] < 0xE0) return (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
    if (s[0] < 0xF0) return (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
    return (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

static void run(const struct tcase *t, int profile)
{
    const uint8_t *in = (const uint8_t *)t->in;
    nh_buf b = {0};
    int rc = NH_OK;
    size_t s, e;
    char flag;
    /* the functions append: start from a non-empty buffer */
    if (nh_buf_append(&b, "pre", 3)) {
        failed++;
        return;
    }
    switch (t->kind) {
    case DOWN: rc = nh_utf8_downcase(&b, in, t->inlen, profile); break;
    case CAP: rc = nh_utf8_capitalize(&b, in, t->inlen, profile); break;
    case ADOWN: rc = nh_ascii_downcase(&b, in, t->inlen); break;
    case ACAP: rc = nh_ascii_capitalize(&b, in, t->inlen); break;
    case INSPECT_U: rc = nh_inspect(&b, in, t->inlen, 1, profile); break;
    case INSPECT_B: rc = nh_inspect(&b, in, t->inlen, 0, profile); break;
    case DUMP_U: rc = nh_dump(&b, in, t->inlen, 1); break;
    case DUMP_B: rc = nh_dump(&b, in, t->inlen, 0); break;
    case SCRUB: rc = nh_scrub_utf8(&b, in, t->inlen); break;
    case VALID:
        flag = nh_utf8_valid(in, t->inlen) ? '1' : '0';
        rc = nh_buf_putc(&b, (uint8_t)flag);
        break;
    case STRIP:
        nh_strip(in, t->inlen, &s, &e);
        rc = nh_buf_append(&b, in + s, e - s);
        break;
    case PRINT:
        flag = nh_unicode_printable(decode1(in), profile) ? '1' : '0';
        rc = nh_buf_putc(&b, (uint8_t)flag);
        break;
    }
    if (rc != NH_OK || b.len < 3 || memcmp(b.data, "pre", 3) != 0) {
        failed++;
        printf("FAIL %s profile %d: rc %d\n", KIND[t->kind], profile, rc);
    } else {
        check(t, profile, b.data + 3, b.len - 3);
    }
    nh_buf_free(&b);
}

int main(void)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        for (int profile = 0; profile < 2; profile++)
            if (CASES[i].profiles & (1 << profile))
                run(&CASES[i], profile);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
