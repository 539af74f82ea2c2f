/* The response parser's events (NH_EV_*, schema/codec.mjs): head blocks and
 * body references, written into the caller's event buffer. */
#include "response.h"

static uint8_t *w32(uint8_t *q, size_t v)
{
    q[0] = (uint8_t)v;
    q[1] = (uint8_t)(v >> 8);
    q[2] = (uint8_t)(v >> 16);
    q[3] = (uint8_t)(v >> 24);
    return q + 4;
}
/* Writes a string. */
static uint8_t *wstr(uint8_t *q, const uint8_t *s, size_t n)
{
    q = w32(q, n);
    nh_copy(q, s, n);
    return q + n;
}
/* The bytes of s[0, n) ORed together (eight at a time). */
static uint64_t or_bytes(const uint8_t *s, size_t n)
{
    uint64_t a = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        a |= w;
    }
    for (; i < n; i++)
        a |= s[i];
    return a;
}
static size_t r32(const uint8_t *q)
{
    return (size_t)q[0] | (size_t)q[1] << 8 | (size_t)q[2] << 16 | (size_t)q[3] << 24;
}
/* A field name's id: its index + 1 in the common names (schema.h), or 0. */
static uint8_t name_id(const uint8_t *s, size_t n)
{
    static const char names[][32] = {NH_COMMON_NAMES};
    static const uint8_t slots[] = {NH_NAME_SLOTS};
    if (n == 0 || n >= sizeof names[0])
        return 0;
    uint8_t id = slots[NH_NAME_HASH(s, n)];
    return id && names[id - 1][n] == 0 && memcmp(names[id - 1], s, n) == 0 ? id : 0;
}
/* Hints for the JS side, from the block's bytes after its flags:
 * NH_HEAD_ASCII_BLOCK when all of them are ASCII, else NH_HEAD_ASCII when
 * the strings' bytes are. */
static int ascii_flags(const uint8_t *b, const uint8_t *end)
{
    const uint64_t highs = 0x8080808080808080u;
    if (!(or_bytes(b, (size_t)(end - b)) & highs))
        return NH_HEAD_ASCII | NH_HEAD_ASCII_BLOCK;
    uint64_t any = 0;
    for (int i = 0; i < 4; i++, b += 4 + r32(b)) /* class name, version, code, message */
        any |= or_bytes(b + 4, r32(b));
    size_t nf = r32(b);
    b += 4;
    for (size_t fi = 0; fi < nf; fi++) {
        b++; /* the name id */
        any |= or_bytes(b + 4, r32(b));
        b += 4 + r32(b);
        size_t nv = r32(b);
        b += 4;
        for (size_t v = 0; v < nv; v++, b += 4 + r32(b))
            any |= or_bytes(b + 4, r32(b));
    }
    return any & highs ? 0 : NH_HEAD_ASCII;
}
/* Appends a head event: the response as it stands now. */
int resp_put_head(feed *f, int type)
{
    nh_resp *p = f->p;
    const nh_headers *h = &p->hdr;
    const char *name = p->cls->name;
    size_t nl = strlen(name);
    size_t size = 1 + 4 + 1 + 4 * 4 + nl + p->ver_len + 3 + p->msg_len + 4;
    for (uint32_t fi = 0; fi < h->nfields; fi++) {
        const nh_field *fl = &h->fields[fi];
        if (!fl->live)
            continue;
        size += 9 + fl->name_len;
        for (uint32_t v = fl->head; v != NH_NIL; v = h->vals[v].next)
            size += 4 + h->vals[v].len;
    }
    if (nh_buf_reserve(f->ev, size))
        return NH_NOMEM;
    uint8_t *q = f->ev->data + f->ev->len;
    *q++ = (uint8_t)type;
    q = w32(q, size - 5);
    uint8_t *flags = q++;
    q = wstr(q, (const uint8_t *)name, nl);
    q = wstr(q, p->st.data, p->ver_len);
    q = wstr(q, p->code, 3);
    q = wstr(q, p->st.data + p->ver_len, p->msg_len);
    q = w32(q, h->nlive);
    for (uint32_t fi = 0; fi < h->nfields; fi++) {
        const nh_field *fl = &h->fields[fi];
        if (!fl->live)
            continue;
        *q++ = name_id(h->bytes.data + fl->name_off, fl->name_len);
        q = wstr(q, h->bytes.data + fl->name_off, fl->name_len);
        q = w32(q, fl->nvals);
        for (uint32_t v = fl->head; v != NH_NIL; v = h->vals[v].next)
            q = wstr(q, h->bytes.data + h->vals[v].off, h->vals[v].len);
    }
    *flags = (uint8_t)((p->has_ver ? NH_HEAD_VERSION : 0) | (p->has_msg ? NH_HEAD_MESSAGE : 0) |
                       (p->body_exist ? NH_HEAD_BODY : 0) | p->coding | ascii_flags(flags + 1, q));
    f->ev->len += size;
    return NH_OK;
}
int resp_put_body(feed *f, int src, size_t off, size_t len)
{
    if (len == 0)
        return NH_OK;
    if (nh_buf_putc(f->ev, NH_EV_BODY) || nh_buf_putc(f->ev, (uint8_t)src) || nh_put_u32(f->ev, off) ||
        nh_put_u32(f->ev, len))
        return NH_NOMEM;
    return NH_OK;
}
