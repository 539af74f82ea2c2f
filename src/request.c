/* Net::HTTPGenericRequest: building a request as Ruby user code does and
 * writing what #exec(sock, ver, path) puts on the wire.  One function per
 * method of the Ruby object (nethttp.h); the wasm ABI's record of the calls
 * made on a request is replayed through them (wasm/request_record.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct nh_request {
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

typedef struct nh_request req;

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

static int init_header(req *q, nh_buf *out, nh_error *err, const uint8_t *k, size_t klen,
                       const uint8_t *v, size_t vlen)
{
    size_t a, b;
    nh_strip(v, vlen, &a, &b);
    v += a;
    vlen = b - a;
    if (q->profile == NH_PROFILE_HEAD) {
        /* head's: validate_field_name(key), then the value's length */
        int rc = nh_validate_field_name(out, err, k, klen, 0, q->profile);
        if (!rc)
            rc = nh_check_field_length(out, err, k, klen, vlen);
        if (rc)
            return rc;
    }
    if (klen > NH_INIT_KEY_MAX) {
        out->len = 0;
        if (nh_put_str(out, "too long (") || nh_put_uint(out, klen) ||
            nh_put_str(out, " bytes) header: ") ||
            nh_inspect(out, k, nh_first_chars(k, klen, 30), 1, q->profile) || nh_put_str(out, "..."))
            return NH_NOMEM;
        err->cls = NH_E_ARGUMENT;
        return NH_ERROR;
    }
    if (vlen > NH_INIT_VALUE_MAX) {
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

static int reset(req *q)
{
    q->key.len = q->path.len = q->body.len = q->host.len = 0;
    q->has_body = 0;
    q->decode_content = 0;
    return NH_OK;
}

/* Net::HTTPGenericRequest#initialize */
int nh_request_init(nh_request *q, int profile, nh_str method, nh_str target, int is_uri,
                    int body_permitted, const nh_str *init, size_t ninit, nh_buf *out, nh_error *err)
{
    reset(q);
    err->cls = NH_E_NONE;
    q->profile = nh_profile_of(profile);
    nh_headers_reset(&q->h);
    q->h.profile = q->profile;
    q->h.binary = 0;
    q->method = method.ptr ? method.ptr : (const uint8_t *)"";
    q->method_len = method.len;
    const uint8_t *tp = target.ptr ? target.ptr : (const uint8_t *)"";
    size_t tlen = target.len;

    nh_uri *u = &q->uri;
    nh_buf *host = &q->host;
    int rc = NH_OK;
    if (is_uri) {
        if ((rc = nh_uri_parse(u, out, err, tp, tlen)))
            return rc;
        if (!u->is_http)
            return fail(out, err, "not an HTTP URI");
        size_t hl = u->host_len;
        if (q->profile == NH_PROFILE_34 && hl >= 2 && u->host[0] == '[' && u->host[hl - 1] == ']')
            hl -= 2;
        if (!u->has_host || hl == 0)
            return fail(out, err, "no host component for URI");
        /* URI::HTTP#request_uri */
        if (u->path_len == 0 || u->path[0] != '/')
            rc = nh_buf_putc(&q->path, '/');
        if (rc || nh_buf_append(&q->path, u->path, u->path_len) ||
            (u->has_query && (nh_buf_putc(&q->path, '?') ||
                              nh_buf_append(&q->path, u->query.data, u->query.len))))
            return NH_NOMEM;
        if ((rc = build_host(q, u, host)))
            return rc;
    } else {
        if (tlen == 0)
            return fail(out, err, "HTTP request path is empty");
        if ((rc = nh_buf_append(&q->path, tp, tlen)))
            return rc;
    }

    /* initheader: key, value pairs (a NULL value is nil) */
    int default_ae = 1;
    if (ninit != NH_NO_INITHEADER) {
        for (size_t i = 0; i < ninit; i++) {
            if ((rc = downcase_key(q, init[2 * i].ptr, init[2 * i].len)))
                return rc;
            if ((q->key.len == 15 && memcmp(q->key.data, "accept-encoding", 15) == 0) ||
                (q->key.len == 5 && memcmp(q->key.data, "range", 5) == 0))
                default_ae = 0;
        }
        for (size_t i = 0; i < ninit; i++) {
            const nh_str *k = &init[2 * i], *v = &init[2 * i + 1];
            if (v->ptr && (rc = init_header(q, out, err, k->ptr, k->len, v->ptr, v->len)))
                return rc;
        }
    }
    q->decode_content = 0;
    if (default_ae) {
        q->decode_content = body_permitted;
        static const char ae[] = "gzip;q=1.0,deflate;q=0.6,identity;q=0.3";
        if ((rc = set_lower(q, "accept-encoding", (const uint8_t *)ae, sizeof ae - 1)))
            return rc;
    }
    if (find_key(q, "accept") < 0 && (rc = set_lower(q, "accept", (const uint8_t *)"*/*", 3)))
        return rc;
    if (find_key(q, "user-agent") < 0 &&
        (rc = set_lower(q, "user-agent", (const uint8_t *)"Ruby", 4)))
        return rc;
    if (is_uri && find_key(q, "host") < 0)
        rc = set_lower(q, "host", host->data ? host->data : (const uint8_t *)"", host->len);
    return rc;
}

/* req[key] = values (set = 1) or add_field(key, value) for each value. */
static int store(req *q, int set, nh_str key, const nh_str *values, size_t n, nh_buf *out,
                 nh_error *err)
{
    if (downcase_key(q, key.ptr, key.len))
        return NH_NOMEM;
    long fi = set ? -1 : nh_headers_find(&q->h, q->key.data, q->key.len);
    int head = q->profile == NH_PROFILE_HEAD;
    /* head's set_field validates the name (add_field to a key that is there
     * does not); then, value by value, its length and CR/LF */
    int rc = head && fi < 0 ? nh_validate_field_name(out, err, key.ptr, key.len, 0, q->profile) : NH_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (head && (rc = nh_check_field_length(out, err, key.ptr, key.len, values[i].len)))
            break;
        if (has_crlf(values[i].ptr, values[i].len))
            rc = fail(out, err, "header field value cannot include CR/LF");
    }
    if (rc)
        return rc;
    if (fi < 0 && (fi = nh_headers_set(&q->h, q->key.data, q->key.len)) < 0)
        return NH_NOMEM;
    if (set && q->key.len == 15 && memcmp(q->key.data, "accept-encoding", 15) == 0)
        q->decode_content = 0;
    for (size_t i = 0; i < n; i++)
        if (nh_headers_push(&q->h, fi, values[i].ptr, values[i].len))
            return NH_NOMEM;
    return NH_OK;
}

int nh_request_set(nh_request *q, nh_str key, const nh_str *values, size_t n, nh_buf *out,
                   nh_error *err)
{
    return store(q, 1, key, values, n, out, err);
}

int nh_request_add_field(nh_request *q, nh_str key, const nh_str *values, size_t n, nh_buf *out,
                         nh_error *err)
{
    return store(q, 0, key, values, n, out, err);
}

int nh_request_delete(nh_request *q, nh_str key, int via_aset)
{
    if (downcase_key(q, key.ptr, key.len))
        return NH_NOMEM;
    /* req[key] = nil turns decode_content off, as []= does */
    if (via_aset && q->key.len == 15 && memcmp(q->key.data, "accept-encoding", 15) == 0)
        q->decode_content = 0;
    nh_headers_delete(&q->h, q->key.data, q->key.len);
    return NH_OK;
}

int nh_request_set_raw(nh_request *q, nh_str lkey, nh_str value)
{
    long fi = nh_headers_set(&q->h, lkey.ptr, lkey.len);
    return fi < 0 ? NH_NOMEM : nh_headers_push(&q->h, fi, value.ptr, value.len);
}

int nh_request_set_body(nh_request *q, nh_str body)
{
    q->has_body = body.ptr != NULL;
    q->body.len = 0;
    return q->has_body ? nh_buf_append(&q->body, body.ptr, body.len) : NH_OK;
}

int nh_request_get(nh_request *q, nh_str key, nh_buf *out)
{
    if (downcase_key(q, key.ptr, key.len))
        return NH_NOMEM;
    long fi = nh_headers_find(&q->h, q->key.data, q->key.len);
    if (fi < 0)
        return 0;
    return nh_headers_join(&q->h, fi, out) ? NH_NOMEM : 1;
}

int nh_request_decode_content(const nh_request *q)
{
    return q->decode_content;
}

nh_str nh_request_path(const nh_request *q)
{
    nh_str s = {q->path.data ? q->path.data : (const uint8_t *)"", q->path.len};
    return s;
}

nh_headers *nh_request_headers(nh_request *q)
{
    return &q->h;
}

/* def set_form_data(params, sep = '&')
 *   query = URI.encode_www_form(params)
 *   query.gsub!(/&/, sep) if sep != '&'
 *   self.body = query
 *   self.content_type = 'application/x-www-form-urlencoded'
 * sep.ptr NULL: the default. */
int nh_request_set_form_data(nh_request *q, const nh_form_pair *params, size_t n, nh_str sep,
                             nh_buf *out, nh_error *err)
{
    nh_buf query = {0};
    int rc = nh_encode_www_form(&query, params, n);
    if (!rc)
        rc = nh_request_set_form_query(q, query.data, query.len, sep, out, err);
    nh_buf_free(&query);
    return rc;
}

int nh_request_set_form_query(nh_request *q, const uint8_t *query, size_t qlen, nh_str sep,
                              nh_buf *out, nh_error *err)
{
    int rc;
    q->body.len = 0;
    if (sep.ptr && !(sep.len == 1 && sep.ptr[0] == '&'))
        rc = nh_form_gsub_sep(&q->body, err, query ? query : (const uint8_t *)"", qlen, sep.ptr, sep.len);
    else
        rc = nh_buf_append(&q->body, query, qlen);
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

/* supply_default_content_type (net-http 0.6.0; 0.9.1 adds none):
 *   return if content_type()
 *   set_content_type 'application/x-www-form-urlencoded' */
static int default_content_type(nh_request *q)
{
    static const char ct[] = "application/x-www-form-urlencoded";
    if (q->profile != NH_PROFILE_34 || find_key(q, "content-type") >= 0)
        return NH_OK;
    return set_lower(q, "content-type", (const uint8_t *)ct, sizeof ct - 1) ? NH_NOMEM : NH_OK;
}

/* send_request_with_body_stream, once its Content-Length / chunked check
 * passed:
 *   supply_default_content_type
 *   write_header sock, ver, path
 * (the body follows, read from the stream by the caller) */
int nh_request_write_stream_head(nh_request *q, nh_str version, nh_buf *out, nh_error *err)
{
    if (default_content_type(q))
        return NH_NOMEM;
    nh_str method = {q->method, q->method_len}, path = {q->path.data, q->path.len};
    return nh_write_header(method, path, version, &q->h, 0, out, err);
}

int nh_request_write(nh_request *q, nh_str version, nh_buf *out, nh_error *err)
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
        if (default_content_type(q))
            return NH_NOMEM;
    }
    nh_str method = {q->method, q->method_len}, path = {q->path.data, q->path.len};
    int rc = nh_write_header(method, path, version, &q->h, q->has_body ? q->body.len : 0, out, err);
    if (rc)
        return rc;
    /* (send_request_with_body: write_header sock, ver, path; sock.write body) */
    return q->has_body && nh_buf_append(out, q->body.data, q->body.len) ? NH_NOMEM : NH_OK;
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
 *   sock.write buf
 * (out replaced; room reserved for `more` bytes after the head) */
int nh_write_header(nh_str method, nh_str path, nh_str version, const nh_headers *h, size_t more,
                    nh_buf *out, nh_error *err)
{
    const uint8_t *m = method.ptr ? method.ptr : (const uint8_t *)"";
    const uint8_t *p = path.ptr ? path.ptr : (const uint8_t *)"";
    const uint8_t *v = version.ptr ? version.ptr : (const uint8_t *)"";
    if (has_crlf(m, method.len) || has_crlf(p, path.len) || has_crlf(v, version.len))
        return fail(out, err, "A Request-Line must not contain CR or LF");
    out->len = 0;
    if (nh_buf_reserve(out, method.len + path.len + version.len + 16 + h->bytes.len + h->nfields * 8u + more) ||
        nh_buf_append(out, m, method.len) || nh_buf_putc(out, ' ') || nh_buf_append(out, p, path.len) ||
        nh_put_str(out, " HTTP/") || nh_buf_append(out, v, version.len) || nh_buf_append(out, "\r\n", 2) ||
        nh_headers_write(h, out) || nh_buf_append(out, "\r\n", 2))
        return NH_NOMEM;
    return NH_OK;
}

nh_request *nh_request_new(void)
{
    return calloc(1, sizeof(nh_request));
}

void nh_request_free(nh_request *q)
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
