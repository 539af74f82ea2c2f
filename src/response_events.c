/* The response parser's events (NH_EV_*, schema/codec.mjs): head blocks and
 * body references, written into the caller's event buffer. */
#include "response.h"

static uint8_t *w32(uint8_t *q, size_t v)
{
    uint32_t x = (uint32_t)v; /* little-endian (internal.h) */
    memcpy(q, &x, 4);
    return q + 4;
}
/* Copies s[0, n) to d and returns the bytes ORed together (eight at a time:
 * only their high bits matter). */
static uint64_t copy_or(uint8_t *d, const uint8_t *s, size_t n)
{
    uint64_t a = 0, w;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, s + i, 8);
            memcpy(d + i, &w, 8);
            a |= w;
        }
        memcpy(&w, s + n - 8, 8); /* the last eight, overlapping */
        memcpy(d + n - 8, &w, 8);
        return a | w;
    }
    if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + n - 4, &y, 4);
        return x | y;
    }
    for (size_t i = 0; i < n; i++)
        a |= d[i] = s[i];
    return a;
}
/* The writer of a head block: where it is, and the bytes of its strings
 * and of its numbers ORed together, for the ASCII flags. */
typedef struct block {
    uint8_t *q;
    uint64_t str;
    uint32_t num;
} block;
static void put32(block *b, size_t v)
{
    b->num |= (uint32_t)v;
    b->q = w32(b->q, v);
}
static void put_str(block *b, const uint8_t *s, size_t n)
{
    put32(b, n);
    b->str |= copy_or(b->q, s, n);
    b->q += n;
}
/* A field name's id: its index + 1 in the common names (schema.h), or 0. */
static uint8_t name_id(const uint8_t *s, size_t n)
{
    static const char names[][32] = {NH_COMMON_NAMES};
    static const uint8_t slots[] = {NH_NAME_SLOTS};
    if (n == 0 || n >= sizeof names[0])
        return 0;
    uint8_t id = slots[NH_NAME_HASH(s, n)];
    return id && names[id - 1][n] == 0 && nh_same_bytes((const uint8_t *)names[id - 1], s, n) ? id : 0;
}
/* Appends a head event: the response as it stands now.  Flags
 * NH_HEAD_ASCII_BLOCK when all of the block's bytes after its flags are
 * ASCII, else NH_HEAD_ASCII when the strings' bytes are (hints for the JS
 * side). */
int nh_resp_put_head(feed *f, int type)
{
    nh_resp *p = f->p;
    const nh_headers *h = &p->hdr;
    const char *name = p->cls->name;
    size_t nl = strlen(name);
    /* at most: the store's bytes hold every live name and value */
    size_t most = 1 + 4 + 1 + 4 * 4 + nl + p->ver_len + 3 + p->msg_len + 4 + h->bytes.len +
                  9 * (size_t)h->nfields + 4 * (size_t)h->nvals;
    if (nh_buf_reserve_fast(f->ev, most))
        return NH_NOMEM;
    uint8_t *start = f->ev->data + f->ev->len;
    block b = {start + 6, 0, 0};
    put_str(&b, (const uint8_t *)name, nl);
    put_str(&b, p->st.data, p->ver_len);
    put_str(&b, p->code, 3);
    put_str(&b, p->st.data + p->ver_len, p->msg_len);
    put32(&b, h->nlive);
    const uint8_t *bytes = h->bytes.data;
    for (uint32_t fi = 0; fi < h->nfields; fi++) {
        const nh_field *fl = &h->fields[fi];
        if (!fl->live)
            continue;
        *b.q++ = name_id(bytes + fl->name_off, fl->name_len); /* below 0x80 */
        put_str(&b, bytes + fl->name_off, fl->name_len);
        put32(&b, fl->nvals);
        for (uint32_t v = fl->head; v != NH_NIL; v = h->vals[v].next)
            put_str(&b, bytes + h->vals[v].off, h->vals[v].len);
    }
    size_t size = (size_t)(b.q - start);
    start[0] = (uint8_t)type;
    w32(start + 1, size - 5);
    int ascii = b.str & NH_HIGHS      ? 0
                : b.num & 0x80808080u ? NH_HEAD_ASCII
                                      : NH_HEAD_ASCII | NH_HEAD_ASCII_BLOCK;
    start[5] = (uint8_t)((p->has_ver ? NH_HEAD_VERSION : 0) | (p->has_msg ? NH_HEAD_MESSAGE : 0) |
                         (p->body_exist ? NH_HEAD_BODY : 0) | p->coding | ascii);
    f->ev->len += size;
    return NH_OK;
}
int nh_resp_put_body(feed *f, int src, size_t off, size_t len)
{
    if (len == 0)
        return NH_OK;
    if (nh_buf_reserve_fast(f->ev, 10))
        return NH_NOMEM;
    uint8_t *q = f->ev->data + f->ev->len;
    q[0] = NH_EV_BODY;
    q[1] = (uint8_t)src;
    w32(w32(q + 2, off), len);
    f->ev->len += 10;
    return NH_OK;
}
