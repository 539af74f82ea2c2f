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
/* Writes a string; ORs its bytes into *any (eight at a time). */
static uint8_t *wstr(uint8_t *q, const uint8_t *s, size_t n, uint64_t *any)
{
    q = w32(q, n);
    if (n)
        memcpy(q, s, n);
    uint64_t a = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        a |= w;
    }
    for (; i < n; i++)
        a |= s[i];
    *any |= a;
    return q + n;
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
        size += 8 + fl->name_len;
        for (uint32_t v = fl->head; v != NH_NIL; v = h->vals[v].next)
            size += 4 + h->vals[v].len;
    }
    if (nh_buf_reserve(f->ev, size))
        return NH_NOMEM;
    uint8_t *q = f->ev->data + f->ev->len;
    *q++ = (uint8_t)type;
    q = w32(q, size - 5);
    *q++ = (uint8_t)((p->has_ver ? NH_HEAD_VERSION : 0) | (p->has_msg ? NH_HEAD_MESSAGE : 0) |
                     (p->body_exist ? NH_HEAD_BODY : 0) | p->coding);
    uint64_t any = 0;
    q = wstr(q, (const uint8_t *)name, nl, &any);
    q = wstr(q, p->st.data, p->ver_len, &any);
    q = wstr(q, p->code, 3, &any);
    q = wstr(q, p->st.data + p->ver_len, p->msg_len, &any);
    q = w32(q, h->nlive);
    for (uint32_t fi = 0; fi < h->nfields; fi++) {
        const nh_field *fl = &h->fields[fi];
        if (!fl->live)
            continue;
        q = wstr(q, h->bytes.data + fl->name_off, fl->name_len, &any);
        q = w32(q, fl->nvals);
        for (uint32_t v = fl->head; v != NH_NIL; v = h->vals[v].next)
            q = wstr(q, h->bytes.data + h->vals[v].off, h->vals[v].len, &any);
    }
    /* a hint for the JS side: every string byte is ASCII */
    if (!(any & 0x8080808080808080u))
        f->ev->data[f->ev->len + 5] |= NH_HEAD_ASCII;
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
