/* Growable byte buffers and error reporting shared by every codec file. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* the functions themselves, not internal.h's inline fast paths */
#undef nh_buf_append
#undef nh_buf_putc

/* Reserving, even 0 bytes, leaves b->data non-NULL, so callers may form
 * b->data + offset without a NULL check. */
int nh_buf_reserve(nh_buf *b, size_t extra)
{
    if (extra <= b->cap - b->len && b->data)
        return NH_OK;
    if (extra > SIZE_MAX / 2 - b->len)
        return NH_NOMEM;
    size_t need = b->len + extra;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return NH_NOMEM;
    b->data = p;
    b->cap = cap;
    return NH_OK;
}

int nh_buf_append(nh_buf *b, const void *p, size_t n)
{
    if (nh_buf_reserve(b, n))
        return NH_NOMEM;
    if (n == 0)
        return NH_OK;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return NH_OK;
}

int nh_buf_putc(nh_buf *b, uint8_t c)
{
    if (b->len == b->cap && nh_buf_reserve(b, 1))
        return NH_NOMEM;
    b->data[b->len++] = c;
    return NH_OK;
}

void nh_copy(uint8_t *d, const uint8_t *s, size_t n)
{
    nh_copy_inline(d, s, n);
}

void nh_buf_free(nh_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int nh_fail(nh_buf *out, nh_error *err, int cls, const char *msg)
{
    out->len = 0;
    if (err)
        err->cls = cls;
    if (msg && nh_buf_append(out, msg, strlen(msg)))
        return NH_NOMEM;
    return NH_ERROR;
}
