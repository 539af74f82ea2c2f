/* Native tests of the codec's C API (run under ASan/UBSan by tests/c/run.sh).
 * Expected values come from Ruby 4.0 (ruby.wasm, net-http 0.9.1, uri 1.1.1). */
#include <stdio.h>
#include <string.h>

#include "../../src/internal.h"

static int passed, failed;

static void check(const char *what, const void *got, size_t glen, const char *want)
{
    if (glen == strlen(want) && (glen == 0 || memcmp(got, want, glen) == 0)) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL %s\n  got:  %.*s\n  want: %s\n", what, (int)glen, (const char *)got, want);
}

#define S(lit) ((nh_str){(const uint8_t *)(lit), sizeof(lit) - 1})
#define NIL ((nh_str){NULL, 0})

static nh_request *q;
static nh_buf out;
static nh_error err;

static int init(int profile, const char *method, int is_uri, const char *target, const nh_str *ih,
                size_t n)
{
    nh_str m = {(const uint8_t *)method, strlen(method)}, t = {(const uint8_t *)target, strlen(target)};
    return nh_request_init(q, profile, m, t, is_uri, 1, ih, n, &out, &err);
}

static void expect(const char *what, int rc, const char *want, int want_rc)
{
    if (rc != want_rc) {
        failed++;
        printf("FAIL %s: rc %d, want %d (%.*s)\n", what, rc, want_rc, (int)out.len, (const char *)out.data);
    } else {
        check(what, out.data, out.len, want);
    }
}

static void test_requests(void)
{
    q = nh_request_new();
    nh_str ih1[] = {S("X-Trace"), S("abc123")};
    int rc = init(0, "POST", 1, "http://example.com:8080/signup?ref=demo", ih1, 1);
    nh_str langs[] = {S("ruby"), S("c")};
    nh_form_pair form[] = {
        {S("name"), S("Zo\xc3\xab Smith"), NULL, 0},
        {S("langs"), NIL, langs, 2},
        {S("note"), S("50% off ~ today"), NULL, 0},
    };
    if (!rc)
        rc = nh_request_set_form_data(q, form, 3, NIL, &out, &err);
    if (!rc)
        rc = nh_request_write(q, S("1.1"), &out, &err);
    expect("form POST", rc,
           "POST /signup?ref=demo HTTP/1.1\r\nX-Trace: abc123\r\nAccept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3\r\n"
           "Accept: */*\r\nUser-Agent: Ruby\r\nHost: example.com:8080\r\nContent-Type: application/x-www-form-urlencoded\r\n"
           "Content-Length: 63\r\n\r\nname=Zo%C3%AB+Smith&langs=ruby&langs=c&note=50%25+off+%7E+today", NH_OK);

    nh_str ih2[] = {S("x-a"), S(" v \r\n"), S("Accept"), S("1")};
    rc = init(0, "GET", 1, "http://[::1]:0080/a?b c", ih2, 2);
    nh_str xb[] = {S("1"), S("2")};
    if (!rc)
        rc = nh_request_set(q, S("x-b"), xb, 2, &out, &err);
    if (!rc)
        rc = nh_request_write(q, S("1.0"), &out, &err);
    expect("IPv6, default port with zeros, stripped initheader, escaped query", rc,
           "GET /a?b%20c HTTP/1.0\r\nX-A: v\r\nAccept: 1\r\nAccept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3\r\n"
           "User-Agent: Ruby\r\nHost: [::1]\r\nX-B: 1, 2\r\n\r\n", NH_OK);

    rc = init(0, "GET", 1, "http://a b/", NULL, NH_NO_INITHEADER);
    expect("bad URI", rc, "bad URI (is not URI?): \"http://a b/\"", NH_ERROR);

    rc = init(0, "GET", 0, "/x", NULL, NH_NO_INITHEADER);
    nh_str crlf[] = {S("a\rb")};
    if (!rc)
        rc = nh_request_set(q, S("k"), crlf, 1, &out, &err);
    expect("CR in a value", rc, "header field value cannot include CR/LF", NH_ERROR);

    /* the wasm ABI's record: a truncated one is rejected, never read past its end */
    nh_buf rec = {0}, scratch = {0}, scratch2 = {0};
    const uint8_t bytes[] = {0, 1, 3, 0, 0, 0, 'G', 'E', 'T', 0, 2, 0, 0, 0, '/', 'x', 3, 0, 0, 0};
    nh_buf_append(&rec, bytes, sizeof bytes);
    rc = nh_request_replay(q, &scratch, &scratch2, rec.data, rec.len, &out, &err);
    expect("truncated record", rc, "malformed request record", NH_ERROR);
    nh_buf_free(&rec);
    nh_buf_free(&scratch);
    nh_buf_free(&scratch2);
    nh_buf_free(&out);
    nh_request_free(q);
}

static void test_forms(void)
{
    nh_buf out = {0};
    nh_error err = {0};
    const char *s = "a+%41%e2%9c%93";
    nh_decode_www_form_component(&out, &err, (const uint8_t *)s, strlen(s));
    check("decode_www_form_component", out.data, out.len, "a A\xe2\x9c\x93");
    out.len = 0;
    s = "%zz+";
    int rc = nh_decode_www_form_component(&out, &err, (const uint8_t *)s, strlen(s));
    check("decode_www_form_component error", out.data, out.len, "invalid %-encoding (%zz+)");
    if (rc != NH_ERROR || err.cls != NH_E_ARGUMENT) {
        failed++;
        printf("FAIL decode error class\n");
    }
    out.len = 0;
    s = "a=%ff&b=%e2%9c&c=%zz+";
    nh_decode_www_form(&out, &err, (const uint8_t *)s, strlen(s), (const uint8_t *)"&", 1);
    /* count 3, then "a" "\xef\xbf\xbd" "b" "\xef\xbf\xbd" "c" "%zz " */
    const char want[] = "\3\0\0\0" "\1\0\0\0a" "\3\0\0\0\xef\xbf\xbd" "\1\0\0\0b" "\3\0\0\0\xef\xbf\xbd"
                        "\1\0\0\0c" "\4\0\0\0%zz ";
    if (out.len == sizeof want - 1 && memcmp(out.data, want, out.len) == 0)
        passed++;
    else {
        failed++;
        printf("FAIL decode_www_form scrubbing\n");
    }
    nh_buf_free(&out);
}

static void test_capitalize(void)
{
    static const char *cases[][2] = {
        {"\xc3\x9f-x", "Ss-X"}, {"x-", "X"}, {"\xc7\x86--a-", "\xc7\x85--A"}, {"--", ""}, {"content-TYPE", "Content-Type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nh_buf out = {0};
        nh_capitalize_name(&out, (const uint8_t *)cases[i][0], strlen(cases[i][0]), NH_PROFILE_40, 0);
        check(cases[i][0], out.data, out.len, cases[i][1]);
        nh_buf_free(&out);
    }
}

static void test_header_store_scales(void)
{
    nh_headers h;
    nh_headers_init(&h, NH_PROFILE_40, 1);
    char name[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(name, sizeof name, "x-field-%d", i % 50000);
        long fi = nh_headers_find(&h, (const uint8_t *)name, (size_t)n);
        if (fi < 0)
            fi = nh_headers_set(&h, (const uint8_t *)name, (size_t)n);
        nh_headers_push(&h, fi, (const uint8_t *)"v", 1);
    }
    if (h.nlive == 50000 && h.fields[49999].nvals == 2)
        passed++;
    else {
        failed++;
        printf("FAIL header store: %u live\n", h.nlive);
    }
    nh_headers_free(&h);
}

int main(void)
{
    test_requests();
    test_forms();
    test_capitalize();
    test_header_store_scales();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
