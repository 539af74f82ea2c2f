/* The ruby.wasm bridge's records at the module's edge (schema/bridge.mjs).
 *
 * Response heads: the parser's events with each head block rewritten, here
 * in the module, into the record Ruby reads (R_HEAD, and R_END's fields), so
 * that a head crosses JS as bytes it copies and does not read.
 *
 *   head record:   u8 flags (NH_HEAD_VERSION, _MESSAGE, _INFLATE, _DROP_ENCODING), then
 *                  the lines of schema/bridge.mjs headRecord: the head's own
 *                  (NH_HEAD_LINES: version, code, message), then the fields:
 *                  their count, the names, each field's first value, then
 *                  (field index, value) for every value after a field's first
 *
 * Requests: the request record Ruby writes for a request whose @header Hash
 * it holds, read into a header store and written by the codec's one
 * write_header (request.c), as the JS API's requests are.
 *
 *   request record: lines, each ending in "\n": METHOD, path, version, then
 *                   "name\nvalue" pairs (SEND_FLAT: every field has one
 *                   value) or "name\ncount\nvalue..." per field; names are
 *                   @header's keys (downcased ASCII), values hold no "\n" */
#include "response.h"
#include "bridge.h"

static int line(nh_buf *o, const uint8_t *s, size_t n)
{
    return nh_buf_append(o, s, n) || nh_buf_putc(o, '\n');
}

/* The fields of a head block (r at its field count) as record lines. */
static int put_fields(nh_buf *o, nh_reader r)
{
    uint32_t nf = nh_rd_u32(&r);
    const nh_reader fields = r;
    const uint8_t *s;
    size_t n;
    if (nh_put_uint(o, nf) || nh_buf_putc(o, '\n'))
        return NH_NOMEM;
    /* names; first values; the values after them */
    for (int pass = 0; pass < 3; pass++) {
        r = fields;
        for (uint32_t fi = 0; fi < nf && !r.bad; fi++) {
            nh_rd_u8(&r); /* its name id */
            s = nh_rd_str(&r, &n);
            if (pass == 0 && line(o, s, n))
                return NH_NOMEM;
            uint32_t nv = nh_rd_u32(&r);
            if (pass == 1 && nv == 0 && nh_buf_putc(o, '\n'))
                return NH_NOMEM;
            for (uint32_t v = 0; v < nv; v++) {
                s = nh_rd_str(&r, &n);
                if (pass == 1 && v == 0 && line(o, s, n))
                    return NH_NOMEM;
                if (pass == 2 && v > 0 && (nh_put_uint(o, fi) || nh_buf_putc(o, '\n') || line(o, s, n)))
                    return NH_NOMEM;
            }
        }
    }
    if (r.bad)
        return NH_ERROR;
    o->len--; /* the last "\n" */
    return NH_OK;
}

/* A head block as a head record (final: only its fields, for R_END). */
static int put_head(nh_buf *o, const uint8_t *block, size_t len, int final)
{
    nh_reader r = {block, block + len, 0};
    const uint8_t *s;
    size_t n;
    uint8_t flags = nh_rd_u8(&r);
    nh_rd_str(&r, &n); /* the class name */
    if (!final) {
        if (nh_buf_putc(o, flags & (NH_HEAD_VERSION | NH_HEAD_MESSAGE | NH_HEAD_INFLATE | NH_HEAD_DROP_ENCODING)))
            return NH_NOMEM;
        for (int i = 0; i < NH_HEAD_LINES; i++) {
            s = nh_rd_str(&r, &n); /* version, code, message */
            if (line(o, s, n))
                return NH_NOMEM;
        }
    } else {
        for (int i = 0; i < NH_HEAD_LINES; i++)
            nh_rd_str(&r, &n);
    }
    return r.bad ? NH_ERROR : put_fields(o, r);
}

/* c->out's events (from offset 8, nh_abi_feed) with head blocks as head
 * records, 1xx heads left out, and after a head whose body goes on past
 * this call with a length its framing gives (not decoded) that length:
 * NH_EV_LENGTH. */
static int rewrite(nh_ctx *c, nh_resp *p)
{
    nh_buf *o = &c->tmp;
    const uint8_t *e = c->out.data;
    size_t r = 8, end = c->out.len;
    o->len = 0;
    if (nh_buf_reserve(o, end + 64) || nh_buf_append(o, e, 8))
        return NH_NOMEM;
    while (r < end) {
        uint8_t t = e[r];
        size_t size = nh_event_size(e + r);
        if (t == 0 || t == NH_EV_BODY || t == NH_EV_END) {
            if (nh_buf_append(o, e + r, size))
                return NH_NOMEM;
            r += size;
            continue;
        }
        size_t n = size - 5;
        if (t != NH_EV_INTERIM) {
            if (nh_buf_putc(o, t) || nh_put_u32(o, 0))
                return NH_NOMEM;
            size_t at = o->len;
            /* (e stays valid: o is another buffer) */
            int rc = put_head(o, e + r + 5, n, t == NH_EV_FINAL);
            if (rc)
                return rc == NH_ERROR ? nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed head block") : rc;
            nh_set32(o->data + at - 4, (uint32_t)(o->len - at));
            int framed = p->state == ST_LENGTH || p->state == ST_RANGE;
            if (t == NH_EV_HEAD && framed && !p->decoding && p->remaining != UINT64_MAX) {
                uint64_t total = p->body_bytes + p->remaining;
                if (nh_buf_putc(o, NH_EV_LENGTH) || nh_put_u32(o, (uint32_t)total) || nh_put_u32(o, (uint32_t)(total >> 32)))
                    return NH_NOMEM;
            }
        }
        r += size;
    }
    nh_buf t = c->out;
    c->out = c->tmp;
    c->tmp = t;
    return NH_OK;
}

/* nh_wasm_resp_feed for the ruby.wasm bridge: the same events, heads as
 * head records (rewrite). */
EXPORT(nh_wasm_resp_feed_bridge) int nh_wasm_resp_feed_bridge(nh_ctx *c, size_t len, nh_resp *p, int eof)
{
    c->out.len = 0;
    c->err.cls = NH_E_NONE;
    int rc = nh_abi_feed(c, p, c->in.data, len, eof);
    return rc ? rc : rewrite(c, p);
}

/* The next "\n"-terminated line of a request record (0 at its end, or where
 * the record does not end with one). */
static int next_line(nh_reader *r, nh_str *line)
{
    if (r->p >= r->end)
        return 0;
    const uint8_t *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!nl)
        return 0;
    line->ptr = r->p;
    line->len = (size_t)(nl - r->p);
    r->p = nl + 1;
    return 1;
}

static size_t line_number(nh_str s)
{
    size_t v = 0;
    for (size_t i = 0; i < s.len && s.ptr[i] >= '0' && s.ptr[i] <= '9' && v < 1u << 24; i++)
        v = v * 10 + (size_t)(s.ptr[i] - '0');
    return v;
}

/* A request record's fields (r after its version line) into h. */
static int read_fields(nh_reader *r, int flat, nh_headers *h)
{
    nh_str k, v;
    while (next_line(r, &k)) {
        size_t n = 1;
        if (!flat) {
            if (!next_line(r, &v))
                return NH_ERROR;
            n = line_number(v); /* 0: req[k] = [] writes "K: " */
        }
        int fi = nh_headers_add(h, k.ptr, k.len);
        if (fi < 0)
            return NH_NOMEM;
        for (size_t i = 0; i < n; i++) {
            if (!next_line(r, &v))
                return NH_ERROR;
            if (nh_headers_push(h, fi, v.ptr, v.len))
                return NH_NOMEM;
        }
    }
    return r->p == r->end ? NH_OK : NH_ERROR;
}

/* input: the bridge's request record; flags: its NH_SEND_*; profile: the
 * VM's (nh_profile). output: the head, as write_header writes it. */
EXPORT(nh_wasm_write_header) int nh_wasm_write_header(nh_ctx *c, size_t len, int flags, int profile)
{
    c->out.len = 0;
    c->err.cls = NH_E_NONE;
    nh_reader r = {c->in.data, c->in.data + len, 0};
    nh_str method, path, version;
    nh_headers *h = &c->fields;
    nh_headers_reset(h);
    h->profile = nh_profile_of(profile);
    h->binary = 0;
    int rc = NH_ERROR;
    if (next_line(&r, &method) && next_line(&r, &path) && next_line(&r, &version))
        rc = read_fields(&r, (flags & NH_SEND_FLAT) != 0, h);
    if (rc == NH_ERROR)
        return nh_fail(&c->out, &c->err, NH_E_TYPE, "malformed request record");
    if (rc)
        return rc;
    return nh_write_header(method, path, version, h, 0, &c->out, &c->err);
}
