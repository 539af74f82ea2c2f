/* Net::HTTPGenericRequest: building a request as Ruby user code does and
 * writing what #exec(sock, ver, path) puts on the wire.
 *
 * The request arrives as a log of the calls made on it (see abi.c for the
 * record layout); it is replayed from the start on every call, so no state
 * lives between calls. */
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "internal.h"

struct nh_req {
    nh_headers h;
    nh_buf key;    /* scratch: a downcased key */
    nh_buf path;
    nh_buf body;
    nh_buf host;
    nh_uri uri;
    int has_body;
    int decode_content;
    int profile;
    const uint8_t *method;
    size_t method_len;
};

typedef struct nh_req req;

static int has_crlf(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\r' || s[i] == '\n')
            return 1;
    return 0;
}

static long find_key(req *q, const char *lkey)
{
    return nh_headers_find(&q->h, (const uint8_t *)lkey, strlen(lkey));
}

/* @header[lkey] = [val] for a name that is already downcased. */
static int set_lower(req *q, const char *lkey, const uint8_t *val, size_t vlen)
{
    int fi = nh_headers_set(&q->h, (const uint8_t *)lkey, strlen(lkey));
    if (fi < 0)
        return NH_NOMEM;
    return nh_headers_push(&q->h, fi, val, vlen);
}

static int downcase_key(req *q, const uint8_t *k, size_t klen)
{
    q->key.len = 0;
    return nh_headers_key(&q->h, &q->key, k, klen);
}

/* String#[0, 30]: the first 30 characters of a UTF-8 string. */
static size_t first_chars(const uint8_t *s, size_t n, size_t chars)
{
    size_t i = 0;
    while (i < n && chars > 0) {
        i++;
        while (i < n && (s[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    return i;
}

static int init_header(req *q, nh_buf *out, nh_error *err, const uint8_t *k, size_t klen,
                       const uint8_t *v, size_t vlen)
{
    size_t a, b;
    nh_strip(v, vlen, &a, &b);
    v += a;
    vlen = b - a;
    if (klen > 1024) {
        out->len = 0;
        if (nh_put_str(out, "too long (") || nh_put_uint(out, klen) ||
            nh_put_str(out, " bytes) header: ") ||
            nh_inspect(out, k, first_chars(k, klen, 30), 1, q->profile) || nh_put_str(out, "..."))
            return NH_NOMEM;
        err->cls = NH_E_ARGUMENT;
        return NH_ERROR;
    }
    if (vlen > 65536) {
        out->len = 0;
        if (nh_put_str(out, "header ") || nh_buf_append(out, k, klen) ||
            nh_put_str(out, " has too long field value: ") || nh_put_uint(out, vlen))
            return NH_NOMEM;
        err->cls = NH_E_ARGUMENT;
        return NH_ERROR;
    }
    if (has_crlf(v, vlen)) {
        out->len = 0;
        if (nh_put_str(out, "header ") || nh_buf_append(out, k, klen) ||
            nh_put_str(out, " has field value ") || nh_inspect(out, v, vlen, 1, q->profile) ||
            nh_put_str(out, ", this cannot include CR/LF"))
            return NH_NOMEM;
        err->cls = NH_E_ARGUMENT;
        return NH_ERROR;
    }
    if (downcase_key(q, k, klen))
        return NH_NOMEM;
    int fi = nh_headers_set(&q->h, q->key.data, q->key.len);
    if (fi < 0)
        return NH_NOMEM;
    return nh_headers_push(&q->h, fi, v, vlen);
}

/* Digits without leading zeros ("0" for all zeros): Integer#to_s of to_i. */
static void port_digits(const uint8_t **p, size_t *n)
{
    while (*n > 1 && **p == '0') {
        (*p)++;
        (*n)--;
    }
}

static int build_host(req *q, const nh_uri *u, nh_buf *host)
{
    const uint8_t *h = u->host;
    size_t hl = u->host_len;
    if (q->profile == NH_PROFILE_34 && hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++; /* URI#hostname drops the brackets of an IPv6 literal */
        hl -= 2;
    }
    if (nh_buf_append(host, h, hl))
        return NH_NOMEM;
    if (u->port) {
        const uint8_t *p = u->port;
        size_t pl = u->port_len;
        port_digits(&p, &pl);
        const char *def = u->https ? "443" : "80";
        if (!(pl == strlen(def) && memcmp(p, def, pl) == 0))
            if (nh_buf_putc(host, ':') || nh_buf_append(host, p, pl))
                return NH_NOMEM;
    }
    return NH_OK;
}

static int fail(nh_buf *out, nh_error *err, const char *msg)
{
    return nh_fail(out, err, NH_E_ARGUMENT, msg);
}

/* Net::HTTPGenericRequest#initialize */
static int construct(req *q, nh_reader *r, nh_buf *out, nh_error *err)
{
    size_t tlen;
    q->profile = nh_rd_u8(r) == 1 ? NH_PROFILE_34 : NH_PROFILE_40;
    nh_headers_reset(&q->h);
    q->h.profile = q->profile;
    q->h.binary = 0;
    int response_has_body = nh_rd_u8(r);
    q->method = nh_rd_str(r, &q->method_len);
    uint8_t is_uri = nh_rd_u8(r);
    const uint8_t *target = nh_rd_str(r, &tlen);
    if (r->bad)
        return nh_fail(out, err, NH_E_TYPE, "malformed request record");

    nh_uri *up = &q->uri;
    nh_buf *host = &q->host;
    int rc = NH_OK;
#define u (*up)
    if (is_uri) {
        rc = nh_uri_parse(&u, out, err, target, tlen);
        if (rc)
            goto done;
        if (!u.is_http) {
            rc = fail(out, err, "not an HTTP URI");
            goto done;
        }
        size_t hl = u.host_len;
        if (q->profile == NH_PROFILE_34 && hl >= 2 && u.host[0] == '[' && u.host[hl - 1] == ']')
            hl -= 2;
        if (!u.has_host || hl == 0) {
            rc = fail(out, err, "no host component for URI");
            goto done;
        }
        /* URI::HTTP#request_uri */
        if (u.path_len == 0 || u.path[0] != '/')
            rc = nh_buf_putc(&q->path, '/');
        if (rc || nh_buf_append(&q->path, u.path, u.path_len) ||
            (u.has_query && (nh_buf_putc(&q->path, '?') ||
                             nh_buf_append(&q->path, u.query.data, u.query.len)))) {
            rc = NH_NOMEM;
            goto done;
        }
        if ((rc = build_host(q, &u, host)))
            goto done;
    } else {
        if (tlen == 0) {
            rc = fail(out, err, "HTTP request path is empty");
            goto done;
        }
        if ((rc = nh_buf_append(&q->path, target, tlen)))
            goto done;
    }

    /* initheader: u32 count (NH_NIL for none), then key, flag, value. */
    uint32_t ninit = nh_rd_u32(r);
    int default_ae = 1;
    const uint8_t *init_at = r->p;
    if (ninit != NH_NIL) {
        for (uint32_t i = 0; i < ninit && !r->bad; i++) {
            size_t kl, vl;
            const uint8_t *k = nh_rd_str(r, &kl);
            if (nh_rd_u8(r))
                nh_rd_str(r, &vl);
            if ((rc = downcase_key(q, k, kl)))
                goto done;
            if ((q->key.len == 15 && memcmp(q->key.data, "accept-encoding", 15) == 0) ||
                (q->key.len == 5 && memcmp(q->key.data, "range", 5) == 0))
                default_ae = 0;
        }
        r->p = init_at;
        for (uint32_t i = 0; i < ninit && !r->bad; i++) {
            size_t kl, vl = 0;
            const uint8_t *k = nh_rd_str(r, &kl), *v = NULL;
            if (nh_rd_u8(r))
                v = nh_rd_str(r, &vl);
            if (v && (rc = init_header(q, out, err, k, kl, v, vl)))
                goto done;
        }
    }
    if (r->bad) {
        rc = nh_fail(out, err, NH_E_TYPE, "malformed request record");
        goto done;
    }
    q->decode_content = 0;
    if (default_ae) {
        q->decode_content = response_has_body;
        static const char ae[] = "gzip;q=1.0,deflate;q=0.6,identity;q=0.3";
        if ((rc = set_lower(q, "accept-encoding", (const uint8_t *)ae, sizeof ae - 1)))
            goto done;
    }
    if (find_key(q, "accept") < 0 && (rc = set_lower(q, "accept", (const uint8_t *)"*/*", 3)))
        goto done;
    if (find_key(q, "user-agent") < 0 &&
        (rc = set_lower(q, "user-agent", (const uint8_t *)"Ruby", 4)))
        goto done;
    if (is_uri && find_key(q, "host") < 0)
        rc = set_lower(q, "host", host->data ? host->data : (const uint8_t *)"", host->len);
done:
#undef u
    return rc;
}

static int values_ok(nh_reader *r, uint32_t n, nh_buf *out, nh_error *err)
{
    nh_reader peek = *r;
    for (uint32_t i = 0; i < n && !peek.bad; i++) {
        size_t vl;
        const uint8_t *v = nh_rd_str(&peek, &vl);
        if (has_crlf(v, vl))
            return fail(out, err, "header field value cannot include CR/LF");
    }
    return NH_OK;
}

static int push_values(req *q, nh_reader *r, long fi, uint32_t n)
{
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        size_t vl;
        const uint8_t *v = nh_rd_str(r, &vl);
        if (nh_headers_push(&q->h, fi, v, vl))
            return NH_NOMEM;
    }
    return NH_OK;
}

enum {
    OP_END = 0,
    OP_SET = 1,
    OP_ADD = 2,
    OP_DELETE = 3,
    OP_FORM = 4,
    OP_BODY = 5,
    OP_EXEC = 6,
    OP_GET = 7,
    OP_DUMP = 8,
    OP_QUERY = 9,
    OP_SET_RAW = 10
};

static int set_form(req *q, nh_reader *r, nh_buf *out, nh_error *err)
{
    nh_buf query = {0};
    int rc = nh_form_write(&query, r);
    size_t sl = 0;
    const uint8_t *sep = NULL;
    if (nh_rd_u8(r))
        sep = nh_rd_str(r, &sl);
    q->body.len = 0;
    if (!rc) {
        if (sep && !(sl == 1 && sep[0] == '&'))
            rc = nh_form_gsub_sep(&q->body, err, query.data ? query.data : (const uint8_t *)"",
                                  query.len, sep, sl);
        else
            rc = nh_buf_append(&q->body, query.data, query.len);
    }
    nh_buf_free(&query);
    if (rc == NH_ERROR) { /* the message is in q->body */
        out->len = 0;
        rc = nh_buf_append(out, q->body.data, q->body.len) ? NH_NOMEM : NH_ERROR;
        q->body.len = 0;
        return rc;
    }
    if (rc)
        return rc;
    q->has_body = 1;
    static const char ct[] = "application/x-www-form-urlencoded";
    return set_lower(q, "content-type", (const uint8_t *)ct, sizeof ct - 1);
}

/* Net::HTTPGenericRequest#exec -> send_request_with_body / write_header */
static int exec_request(req *q, const uint8_t *ver, size_t vlen, nh_buf *out, nh_error *err)
{
    if (q->has_body) {
        nh_buf num = {0};
        int rc = nh_put_uint(&num, q->body.len);
        if (!rc)
            rc = set_lower(q, "content-length", num.data, num.len);
        nh_buf_free(&num);
        if (rc)
            return NH_NOMEM;
        nh_headers_delete(&q->h, (const uint8_t *)"transfer-encoding", 17);
        if (q->profile == NH_PROFILE_34 && find_key(q, "content-type") < 0) {
            static const char ct[] = "application/x-www-form-urlencoded";
            if (set_lower(q, "content-type", (const uint8_t *)ct, sizeof ct - 1))
                return NH_NOMEM;
        }
    }
    if (has_crlf(q->method, q->method_len) || has_crlf(q->path.data, q->path.len) ||
        has_crlf(ver, vlen))
        return fail(out, err, "A Request-Line must not contain CR or LF");
    out->len = 0;
    if (nh_buf_reserve(out, q->method_len + q->path.len + vlen + 16 + q->body.len +
                                q->h.bytes.len + q->h.nfields * 8u) ||
        nh_buf_append(out, q->method, q->method_len) || nh_buf_putc(out, ' ') ||
        nh_buf_append(out, q->path.data, q->path.len) || nh_put_str(out, " HTTP/") ||
        nh_buf_append(out, ver, vlen) || nh_buf_append(out, "\r\n", 2) ||
        nh_headers_write(&q->h, out) || nh_buf_append(out, "\r\n", 2) ||
        (q->has_body && nh_buf_append(out, q->body.data, q->body.len)))
        return NH_NOMEM;
    return NH_OK;
}

/* Output of OP_DUMP: u32 count, then per field the downcased name, u32
 * value count and the values, each u32-length-prefixed. */
static int dump_headers(req *q, nh_buf *out)
{
    out->len = 0;
    if (nh_put_u32(out, q->h.nlive))
        return NH_NOMEM;
    for (uint32_t fi = 0; fi < q->h.nfields; fi++) {
        const nh_field *f = &q->h.fields[fi];
        if (!f->live)
            continue;
        if (nh_put_u32(out, f->name_len) ||
            nh_buf_append(out, q->h.bytes.data + f->name_off, f->name_len) ||
            nh_put_u32(out, f->nvals))
            return NH_NOMEM;
        for (uint32_t v = f->head; v != NH_NIL; v = q->h.vals[v].next)
            if (nh_put_u32(out, q->h.vals[v].len) ||
                nh_buf_append(out, q->h.bytes.data + q->h.vals[v].off, q->h.vals[v].len))
                return NH_NOMEM;
    }
    return NH_OK;
}

nh_req *nh_req_new(void)
{
    return calloc(1, sizeof(nh_req));
}

void nh_req_free(nh_req *q)
{
    if (!q)
        return;
    nh_headers_free(&q->h);
    nh_buf_free(&q->key);
    nh_buf_free(&q->path);
    nh_buf_free(&q->body);
    nh_buf_free(&q->host);
    nh_uri_free(&q->uri);
    free(q);
}

int nh_request(const uint8_t *in, size_t in_len, nh_buf *out, nh_error *err)
{
    nh_req *q = nh_req_new();
    if (!q)
        return NH_NOMEM;
    int rc = nh_request_run(q, in, in_len, out, err);
    nh_req_free(q);
    return rc;
}

int nh_request_run(nh_req *qp, const uint8_t *in, size_t in_len, nh_buf *out, nh_error *err)
{
#define q (*qp)
    q.key.len = q.path.len = q.body.len = q.host.len = 0;
    q.has_body = 0;
    q.decode_content = 0;
    nh_reader r = {in, in + in_len, 0};
    err->cls = NH_E_NONE;
    int rc = construct(&q, &r, out, err);
    while (rc == NH_OK) {
        uint8_t op = r.bad ? OP_END : nh_rd_u8(&r);
        size_t kl, vl;
        const uint8_t *k;
        if (r.bad) {
            rc = nh_fail(out, err, NH_E_TYPE, "malformed request record");
            break;
        }
        if (op == OP_END) {
            out->len = 0; /* decode_content, then path */
            if (nh_buf_putc(out, (uint8_t)q.decode_content) ||
                nh_buf_append(out, q.path.data, q.path.len))
                rc = NH_NOMEM;
            break;
        }
        if (op == OP_SET || op == OP_ADD) {
            k = nh_rd_str(&r, &kl);
            uint32_t n = nh_rd_u32(&r);
            if ((rc = values_ok(&r, n, out, err)) || (rc = downcase_key(&q, k, kl)))
                break;
            long fi = op == OP_ADD ? nh_headers_find(&q.h, q.key.data, q.key.len) : -1;
            if (fi < 0 && (fi = nh_headers_set(&q.h, q.key.data, q.key.len)) < 0) {
                rc = NH_NOMEM;
                break;
            }
            if (op == OP_SET && q.key.len == 15 &&
                memcmp(q.key.data, "accept-encoding", 15) == 0)
                q.decode_content = 0;
            rc = push_values(&q, &r, fi, n);
        } else if (op == OP_DELETE) {
            k = nh_rd_str(&r, &kl);
            uint8_t via_aset = nh_rd_u8(&r); /* req[key] = nil, not req.delete(key) */
            if (!(rc = downcase_key(&q, k, kl))) {
                if (via_aset && q.key.len == 15 && memcmp(q.key.data, "accept-encoding", 15) == 0)
                    q.decode_content = 0;
                nh_headers_delete(&q.h, q.key.data, q.key.len);
            }
        } else if (op == OP_FORM) {
            rc = set_form(&q, &r, out, err);
        } else if (op == OP_BODY) {
            q.has_body = nh_rd_u8(&r);
            q.body.len = 0;
            if (q.has_body) {
                const uint8_t *b = nh_rd_str(&r, &vl);
                rc = nh_buf_append(&q.body, b, vl);
            }
        } else if (op == OP_EXEC) {
            const uint8_t *ver = nh_rd_str(&r, &vl);
            rc = exec_request(&q, ver, vl, out, err);
            break;
        } else if (op == OP_GET) {
            k = nh_rd_str(&r, &kl);
            if ((rc = downcase_key(&q, k, kl)))
                break;
            long fi = nh_headers_find(&q.h, q.key.data, q.key.len);
            out->len = 0;
            rc = nh_buf_putc(out, fi >= 0);
            if (!rc && fi >= 0)
                rc = nh_headers_join(&q.h, fi, out);
            break;
        } else if (op == OP_SET_RAW) {
            /* @header[lkey] = [value]: the helpers (basic_auth,
             * set_content_type, set_range, content_length=) write the
             * Hash directly, with no CR/LF check */
            k = nh_rd_str(&r, &kl);
            const uint8_t *v = nh_rd_str(&r, &vl);
            long fi = nh_headers_set(&q.h, k, kl);
            rc = fi < 0 ? NH_NOMEM : nh_headers_push(&q.h, fi, v, vl);
        } else if (op == OP_QUERY) {
            uint8_t kind = nh_rd_u8(&r);
            const uint8_t *arg = nh_rd_str(&r, &vl);
            rc = nh_header_query(&q.h, kind, arg, vl, out, err);
            break;
        } else if (op == OP_DUMP) {
            rc = dump_headers(&q, out);
            break;
        } else {
            rc = nh_fail(out, err, NH_E_TYPE, "malformed request record");
        }
    }
    return rc;
#undef q
}

/* The next "\n"-terminated line of a bridge record (0 at the end or when the
 * record does not end with one). */
static int next_line(const uint8_t **p, const uint8_t *end, const uint8_t **s, size_t *n)
{
    if (*p >= end)
        return 0;
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl)
        return 0;
    *s = *p;
    *n = (size_t)(nl - *p);
    *p = nl + 1;
    return 1;
}

static size_t line_number(const uint8_t *s, size_t n)
{
    size_t v = 0;
    for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '9' && v < 1u << 24; i++)
        v = v * 10 + (size_t)(s[i] - '0');
    return v;
}

/* def write_header(sock, ver, path)
 *   reqline = "#{@method} #{path} HTTP/#{ver}"
 *   if /[\r\n]/ =~ reqline
 *     raise ArgumentError, "A Request-Line must not contain CR or LF"
 *   end
 *   buf = +''
 *   buf << reqline << "\r\n"
 *   each_capitalized do |k,v|
 *     buf << "#{k}: #{v}\r\n"
 *   end
 *   buf << "\r\n"
 * for a request whose @header Hash Ruby holds (the ruby.wasm bridge: Ruby
 * has made send_request_with_body's edits already). The record is the
 * bridge's (schema/bridge.mjs), each line ending in "\n":
 * METHOD, path, version, flags, then "name\nvalue" pairs (NH_SEND_FLAT) or
 * "name\ncount\nvalue..." per field; names are downcased ASCII, values
 * hold no "\n". */
int nh_write_header(const uint8_t *rec, size_t len, nh_buf *out, nh_error *err)
{
    const uint8_t *p = rec, *end = rec + len, *m, *path, *ver, *fl, *k, *v;
    size_t ml, pl, vl, fll, kl, n;
    out->len = 0;
    if (!next_line(&p, end, &m, &ml) || !next_line(&p, end, &path, &pl) ||
        !next_line(&p, end, &ver, &vl) || !next_line(&p, end, &fl, &fll))
        return nh_fail(out, err, NH_E_TYPE, "malformed request record");
    if (has_crlf(m, ml) || has_crlf(path, pl) || has_crlf(ver, vl))
        return fail(out, err, "A Request-Line must not contain CR or LF");
    int flat = (line_number(fl, fll) & NH_SEND_FLAT) != 0;
    if (nh_buf_reserve(out, len + len / 2 + 32) || nh_buf_append(out, m, ml) || nh_buf_putc(out, ' ') ||
        nh_buf_append(out, path, pl) || nh_put_str(out, " HTTP/") || nh_buf_append(out, ver, vl) ||
        nh_buf_append(out, "\r\n", 2))
        return NH_NOMEM;
    while (next_line(&p, end, &k, &kl)) {
        if (flat)
            n = 1;
        else if (next_line(&p, end, &v, &vl))
            n = line_number(v, vl); /* 0: req[k] = [] writes "K: " */
        else
            return nh_fail(out, err, NH_E_TYPE, "malformed request record");
        if (nh_capitalize_name(out, k, kl, NH_PROFILE_40, 0) || nh_buf_append(out, ": ", 2))
            return NH_NOMEM;
        for (size_t i = 0; i < n; i++) {
            if (!next_line(&p, end, &v, &vl))
                return nh_fail(out, err, NH_E_TYPE, "malformed request record");
            if ((i && nh_buf_append(out, ", ", 2)) || nh_buf_append(out, v, vl))
                return NH_NOMEM;
        }
        if (nh_buf_append(out, "\r\n", 2))
            return NH_NOMEM;
    }
    if (p != end)
        return nh_fail(out, err, NH_E_TYPE, "malformed request record");
    return nh_buf_append(out, "\r\n", 2) ? NH_NOMEM : NH_OK;
}
