/* libFuzzer harness: the inflater, fed whole and in pieces. */
#include <stdlib.h>
#include <string.h>

#include "../src/inflate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nh_inflate z1, z2;
    nh_buf o1 = {0}, o2 = {0}, m1 = {0}, m2 = {0};
    nh_error e1 = {0}, e2 = {0};
    nh_inflate_init(&z1, 1 << 24);
    nh_inflate_init(&z2, 1 << 24);
    int r1 = nh_inflate_feed(&z1, data, size, &o1, &m1, &e1);
    if (r1 == NH_OK)
        r1 = nh_inflate_finish(&z1, &m1, &e1);
    int r2 = NH_OK;
    size_t step = size ? (size_t)data[0] % 7 + 1 : 1;
    for (size_t off = 0; off < size && r2 == NH_OK; off += step)
        r2 = nh_inflate_feed(&z2, data + off, size - off < step ? size - off : step, &o2, &m2, &e2);
    if (r2 == NH_OK)
        r2 = nh_inflate_finish(&z2, &m2, &e2);
    if (r1 != r2 || e1.cls != e2.cls || o1.len != o2.len || (o1.len && memcmp(o1.data, o2.data, o1.len)) ||
        m1.len != m2.len || (m1.len && memcmp(m1.data, m2.data, m1.len)))
        abort();
    nh_buf_free(&o1);
    nh_buf_free(&o2);
    nh_buf_free(&m1);
    nh_buf_free(&m2);
    return 0;
}
