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

/* A tiny writer for the request record (see abi.c). */
static nh_buf rec;
static void u8(uint8_t v) { nh_buf_putc(&rec, v); }
static void u32(uint32_t v) { nh_put_u32(&rec, v); }
static void str(const char *s) { u32((uint32_t)strlen(s)); nh_buf_append(&rec, s, strlen(s)); }

static void begin(int profile, const char *method, int is_uri, const char *target)
{
    rec.len = 0;
    u8((uint8_t)profile);
    u8(1);
    str(method);
    u8((uint8_t)is_uri);
    str(target);
}

static void run(const char *what, const char *want, int want_rc)
{
    nh_buf out = {0};
    nh_error err = {0};
    int rc = nh_request(rec.data, rec.len, &out, &err);
    if (rc != want_rc) {
        failed++;
        printf("FAIL %s: rc %d, want %d (%.*s)\n", what, rc, want_rc, (int)out.len, (const char *)out.data);
    } else {
        check(what, out.data, out.len, want);
    }
    nh_buf_free(&out);
}

static void test_requests(void)
{
    begin(0, "POST", 1, "http://example.com:8080/signup?ref=demo");
    u32(1);
    str("X-Trace"); u8(1); str("abc123");
    u8(4); /* set_form_data */
    u32(3);
    str("name"); u8(1); str("Zo\xc3\xab Smith");
    str("langs"); u8(2); u32(2); u8(1); str("ruby"); u8(1); str("c");
    str("note"); u8(1); str("50% off ~ today");
    u8(0);
    u8(6); str("1.1");
    run("form POST",
        "POST /signup?ref=demo HTTP/1.1\r\nX-Trace: abc123\r\nAccept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3\r\n"
        "Accept: */*\r\nUser-Agent: Ruby\r\nHost: example.com:8080\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        "Content-Length: 63\r\n\r\nname=Zo%C3%AB+Smith&langs=ruby&langs=c&note=50%25+off+%7E+today", NH_OK);

    begin(0, "GET", 1, "http://[::1]:0080/a?b c");
    u32(2);
    str("x-a"); u8(1); str(" v \r\n");
    str("Accept"); u8(1); str("1");
    u8(1); str("x-b"); u32(2); str("1"); str("2");
    u8(6); str("1.0");
    run("IPv6, default port with zeros, stripped initheader, escaped query",
        "GET /a?b%20c HTTP/1.0\r\nX-A: v\r\nAccept: 1\r\nAccept-Encoding: gzip;q=1.0,deflate;q=0.6,identity;q=0.3\r\n"
        "User-Agent: Ruby\r\nHost: [::1]\r\nX-B: 1, 2\r\n\r\n", NH_OK);

    begin(0, "GET", 1, "http://a b/");
    u32(UINT32_MAX);
    u8(6); str("1.1");
    run("bad URI", "bad URI (is not URI?): \"http://a b/\"", NH_ERROR);

    begin(0, "GET", 0, "/x");
    u32(UINT32_MAX);
    u8(1); str("k"); u32(1); str("a\rb");
    u8(6); str("1.1");
    run("CR in a value", "header field value cannot include CR/LF", NH_ERROR);

    /* a truncated record is rejected, never read past its end */
    begin(0, "GET", 0, "/x");
    u32(3);
    run("truncated record", "malformed request record", NH_ERROR);
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
    nh_buf_free(&rec);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
