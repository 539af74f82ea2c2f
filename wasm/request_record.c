/* The request record: the wasm ABI's encoding of a request and the calls made
 * on it (js/core.mjs writes it; schema/codec.mjs names the operations).  The
 * JS Request keeps the log and each call replays it from the start through
 * the functions of nethttp.h, so no state lives in the module between calls.
 *
 * Little-endian; str = u32 byte length + bytes.
 *   u8 profile, u8 response_has_body, str method, u8 is_uri, str target,
 *   u32 n | 0xFFFFFFFF (no initheader), n x (str key, u8 has_value, [str value]),
 *   then operations (NH_OP_*), each a u8 and its arguments, up to a final one
 *   (exec, get, dump, query) or NH_OP_END.
 * pairs (set_form_data, encode_www_form):
 *   u32 n, n x (str key, u8 kind: 0 nil | 1 str | 2 u32 m, m x (u8 has, [str])) */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int malformed(nh_buf *out, nh_error *err)
{
    return nh_fail(out, err, NH_E_TYPE, "malformed request record");
}

/* Views of n strings (n bounded by what the record can hold) in scratch. */
static nh_str *read_strs(nh_reader *r, uint32_t n, nh_buf *scratch)
{
    if ((size_t)(r->end - r->p) / 4 < n) {
        r->bad = 1;
        return NULL;
    }
    scratch->len = 0;
    if (nh_buf_reserve(scratch, (size_t)n * sizeof(nh_str) + 1))
        return NULL;
    nh_str *v = (nh_str *)(void *)scratch->data;
    for (uint32_t i = 0; i < n; i++)
        v[i].ptr = nh_rd_str(r, &v[i].len);
    return v;
}

int nh_form_record_write(nh_reader *r, nh_buf *elems, nh_buf *out)
{
    uint32_t n = nh_rd_u32(r);
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        nh_form_pair fp = {{NULL, 0}, {NULL, 0}, NULL, 0};
        fp.key.ptr = nh_rd_str(r, &fp.key.len);
        uint8_t kind = nh_rd_u8(r);
        if (kind == 1) {
            fp.value.ptr = nh_rd_str(r, &fp.value.len);
        } else if (kind != 0) {
            uint32_t m = nh_rd_u32(r);
            if ((size_t)(r->end - r->p) < m) { /* each element takes a byte at least */
                r->bad = 1;
                break;
            }
            elems->len = 0;
            if (nh_buf_reserve(elems, (size_t)m * sizeof(nh_str) + 1))
                return NH_NOMEM;
            nh_str *el = (nh_str *)(void *)elems->data;
            for (uint32_t j = 0; j < m; j++) {
                el[j].ptr = NULL;
                el[j].len = 0;
                if (nh_rd_u8(r))
                    el[j].ptr = nh_rd_str(r, &el[j].len);
            }
            fp.values = el;
            fp.nvalues = m;
        }
        if (r->bad)
            break;
        if (nh_form_put_pair(out, i, &fp))
            return NH_NOMEM;
    }
    return NH_OK;
}

/* Output of NH_OP_DUMP: u32 count, then per field the downcased name, u32
 * value count and the values, each u32-length-prefixed. */
static int dump_headers(const nh_headers *h, nh_buf *out)
{
    out->len = 0;
    if (nh_put_u32(out, h->nlive))
        return NH_NOMEM;
    for (uint32_t fi = 0; fi < h->nfields; fi++) {
        const nh_field *f = &h->fields[fi];
        if (!f->live)
            continue;
        if (nh_put_u32(out, f->name_len) || nh_buf_append(out, h->bytes.data + f->name_off, f->name_len) ||
            nh_put_u32(out, f->nvals))
            return NH_NOMEM;
        for (uint32_t v = f->head; v != NH_NIL; v = h->vals[v].next)
            if (nh_put_u32(out, h->vals[v].len) ||
                nh_buf_append(out, h->bytes.data + h->vals[v].off, h->vals[v].len))
                return NH_NOMEM;
    }
    return NH_OK;
}

static nh_str rd(nh_reader *r)
{
    nh_str s;
    s.ptr = nh_rd_str(r, &s.len);
    return s;
}

int nh_request_replay(nh_request *q, nh_buf *scratch, nh_buf *scratch2, const uint8_t *in,
                      size_t len, nh_buf *out, nh_error *err)
{
    nh_reader r = {in, in + len, 0};
    err->cls = NH_E_NONE;
    int profile = nh_profile_of(nh_rd_u8(&r));
    int body_permitted = nh_rd_u8(&r);
    nh_str method = rd(&r);
    int is_uri = nh_rd_u8(&r);
    nh_str target = rd(&r);
    uint32_t ninit = nh_rd_u32(&r);
    nh_str *init = NULL;
    if (!r.bad && ninit != NH_NIL) {
        /* key, value pairs; a nil value is a NULL view */
        if ((size_t)(r.end - r.p) / 5 < ninit)
            return malformed(out, err);
        scratch->len = 0;
        if (nh_buf_reserve(scratch, (size_t)ninit * 2 * sizeof(nh_str) + 1))
            return NH_NOMEM;
        init = (nh_str *)(void *)scratch->data;
        for (uint32_t i = 0; i < ninit && !r.bad; i++) {
            init[2 * i] = rd(&r);
            init[2 * i + 1].ptr = NULL;
            init[2 * i + 1].len = 0;
            if (nh_rd_u8(&r))
                init[2 * i + 1] = rd(&r);
        }
    }
    if (r.bad)
        return malformed(out, err);
    int rc = nh_request_init(q, profile, method, target, is_uri, body_permitted, init,
                             ninit == NH_NIL ? NH_NO_INITHEADER : ninit, out, err);
    while (rc == NH_OK) {
        uint8_t op = nh_rd_u8(&r);
        if (r.bad)
            return malformed(out, err);
        if (op == NH_OP_END) {
            out->len = 0; /* decode_content, then path */
            nh_str path = nh_request_path(q);
            if (nh_buf_putc(out, (uint8_t)nh_request_decode_content(q)) ||
                nh_buf_append(out, path.ptr, path.len))
                return NH_NOMEM;
            return NH_OK;
        }
        if (op == NH_OP_SET || op == NH_OP_ADD) {
            nh_str key = rd(&r);
            uint32_t n = nh_rd_u32(&r);
            nh_str *v = r.bad ? NULL : read_strs(&r, n, scratch);
            if (r.bad)
                return malformed(out, err);
            if (!v)
                return NH_NOMEM;
            rc = op == NH_OP_SET ? nh_request_set(q, key, v, n, out, err)
                                 : nh_request_add_field(q, key, v, n, out, err);
        } else if (op == NH_OP_DELETE) {
            nh_str key = rd(&r);
            int via_aset = nh_rd_u8(&r); /* req[key] = nil, not req.delete(key) */
            rc = r.bad ? malformed(out, err) : nh_request_delete(q, key, via_aset);
        } else if (op == NH_OP_FORM) {
            scratch2->len = 0;
            if ((rc = nh_form_record_write(&r, scratch, scratch2)))
                return rc;
            nh_str sep = {NULL, 0};
            if (!r.bad && nh_rd_u8(&r))
                sep = rd(&r);
            if (r.bad)
                return malformed(out, err);
            rc = nh_request_set_form_query(q, scratch2->data, scratch2->len, sep, out, err);
        } else if (op == NH_OP_BODY) {
            nh_str body = {NULL, 0};
            if (nh_rd_u8(&r))
                body = rd(&r);
            rc = r.bad ? malformed(out, err) : nh_request_set_body(q, body);
        } else if (op == NH_OP_EXEC) {
            nh_str ver = rd(&r);
            return r.bad ? malformed(out, err) : nh_request_write(q, ver, out, err);
        } else if (op == NH_OP_EXEC_STREAM) {
            nh_str ver = rd(&r);
            return r.bad ? malformed(out, err) : nh_request_write_stream_head(q, ver, out, err);
        } else if (op == NH_OP_GET) {
            nh_str key = rd(&r);
            if (r.bad)
                return malformed(out, err);
            out->len = 0;
            if (nh_buf_putc(out, 0))
                return NH_NOMEM;
            rc = nh_request_get(q, key, out);
            if (rc < 0)
                return rc;
            out->data[0] = (uint8_t)rc;
            return NH_OK;
        } else if (op == NH_OP_SET_RAW) {
            /* @header[lkey] = [value]: the helpers (basic_auth,
             * set_content_type, set_range, content_length=) write the
             * Hash directly, with no CR/LF check */
            nh_str k = rd(&r), v = rd(&r);
            rc = r.bad ? malformed(out, err) : nh_request_set_raw(q, k, v);
        } else if (op == NH_OP_QUERY) {
            uint8_t kind = nh_rd_u8(&r);
            nh_str arg = rd(&r);
            if (r.bad)
                return malformed(out, err);
            return nh_header_query(nh_request_headers(q), kind, arg.ptr, arg.len, out, err);
        } else if (op == NH_OP_DUMP) {
            return dump_headers(nh_request_headers(q), out);
        } else {
            return malformed(out, err);
        }
    }
    return rc;
}
