/* libFuzzer harness: form decoding/encoding and header-name capitalization. */
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nh_buf out = {0};
    nh_error err;
    size_t seplen = size ? data[0] % 4 : 0;
    if (seplen > size - (size ? 1 : 0))
        seplen = 0;
    const uint8_t *sep = data + (size ? 1 : 0);
    const uint8_t *s = sep + seplen;
    size_t n = size - (size_t)(s - data);

    int rc = nh_decode_www_form(&out, &err, s, n, sep, seplen);
    if (rc == NH_OK) {
        /* every decoded key and value is valid UTF-8 */
        nh_reader r = {out.data, out.data + out.len, 0};
        uint32_t count = nh_rd_u32(&r) * 2u;
        for (uint32_t i = 0; i < count; i++) {
            size_t l;
            const uint8_t *p = nh_rd_str(&r, &l);
            if (r.bad || !nh_utf8_valid(p, l))
                abort();
        }
    } else if (rc != NH_ERROR) {
        abort();
    }

    out.len = 0;
    rc = nh_decode_www_form_component(&out, &err, s, n);
    if (rc != NH_OK && rc != NH_ERROR)
        abort();

    /* encode then decode gives the input back */
    nh_buf enc = {0};
    if (nh_encode_www_form_component(&enc, s, n))
        abort();
    out.len = 0;
    if (nh_decode_www_form_component(&out, &err, enc.data, enc.len) != NH_OK || out.len != n ||
        (n && memcmp(out.data, s, n) != 0))
        abort();
    nh_buf_free(&enc);

    if (nh_utf8_valid(s, n)) {
        out.len = 0;
        if (nh_capitalize_name(&out, s, n, data[0] & 1, 0) || !nh_utf8_valid(out.data, out.len))
            abort();
        out.len = 0;
        if (nh_utf8_downcase(&out, s, n, data[0] & 1) || !nh_utf8_valid(out.data, out.len))
            abort();
    }
    out.len = 0;
    if (nh_inspect(&out, s, n, 1, 0) || nh_dump(&out, s, n, 1) || nh_scrub_utf8(&out, s, n))
        abort();
    nh_buf_free(&out);
    return 0;
}
