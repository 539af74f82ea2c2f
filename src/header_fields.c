/* Net::HTTPHeader's typed readers: range, content_length, chunked?,
 * content_range, content_type & co, connection_close?, fetch, get_fields,
 * each_capitalized.
 *
 * Each reads the store as header.rb does (`@header[key]` is a field's value
 * list, `self[key]` its values joined with ", ") and writes its result as
 * u8 tag, u32 n, n x (u32 length, bytes): tag 0 is nil (or false), tag 1 a
 * value (or true); the strings are the result's parts (see nh_header_query
 * in nethttp.h).  Ruby's \d, \s and \w are ASCII-only here, but /i also
 * folds U+212A KELVIN SIGN to k and U+017F LONG S to s in a UTF-8 string. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct hq {
    const nh_headers *h;
    nh_buf *out;
    nh_error *err;
    nh_buf val; /* self[key] */
    uint32_t n; /* strings written */
    size_t count_at;
} hq;

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static int is_word(uint8_t c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
/* Ruby's \s */
static int is_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int begin(hq *q, int tag)
{
    q->out->len = 0;
    q->n = 0;
    if (nh_buf_putc(q->out, (uint8_t)tag))
        return NH_NOMEM;
    q->count_at = q->out->len;
    return nh_put_u32(q->out, 0);
}

static int put(hq *q, const uint8_t *s, size_t n)
{
    if (nh_put_u32(q->out, n) || nh_buf_append(q->out, s, n))
        return NH_NOMEM;
    q->n++;
    uint8_t *c = q->out->data + q->count_at;
    c[0] = (uint8_t)q->n;
    c[1] = (uint8_t)(q->n >> 8);
    c[2] = (uint8_t)(q->n >> 16);
    c[3] = (uint8_t)(q->n >> 24);
    return NH_OK;
}

/* Integer#to_s of the digit run s[0, n) (String#to_i drops leading zeros),
 * negated when neg and not zero. */
static int put_int(hq *q, const uint8_t *s, size_t n, int neg)
{
    while (n > 1 && s[0] == '0')
        s++, n--;
    if (neg && !(n == 1 && s[0] == '0')) {
        nh_buf t = {0};
        int rc = nh_buf_putc(&t, '-') || nh_buf_append(&t, s, n) ? NH_NOMEM : put(q, t.data, t.len);
        nh_buf_free(&t);
        return rc;
    }
    return put(q, s, n);
}

static int hq_raise(hq *q, int cls, const char *pre, const uint8_t *s, size_t n, const char *post)
{
    q->out->len = 0;
    q->err->cls = cls;
    if (nh_put_str(q->out, pre) || (s && nh_buf_append(q->out, s, n)) || nh_put_str(q->out, post))
        return NH_NOMEM;
    return NH_ERROR;
}

static long field(hq *q, const char *lkey)
{
    return nh_headers_find(q->h, (const uint8_t *)lkey, strlen(lkey));
}

/* self[key] into q->val; -1 when the field is absent. */
static long joined(hq *q, const char *lkey)
{
    q->val.len = 0;
    long fi = field(q, lkey);
    if (fi >= 0 && nh_headers_join(q->h, fi, &q->val))
        return -2;
    return fi;
}

/* self[key] into q->val when the field is there (1); else 0, with *rc
 * NH_NOMEM or nil written as the result. */
static int present(hq *q, const char *lkey, int *rc)
{
    long fi = joined(q, lkey);
    if (fi >= 0)
        return 1;
    *rc = fi == -2 ? NH_NOMEM : begin(q, 0);
    return 0;
}

static const uint8_t *val(hq *q) { return q->val.data ? q->val.data : (const uint8_t *)""; }

/* The length of a character at s that /i matches with the ASCII letter c
 * (lower case), or 0. */
static size_t fold_eq(const hq *q, const uint8_t *s, const uint8_t *end, char c)
{
    if (s >= end)
        return 0;
    if (s[0] == (uint8_t)c || (c >= 'a' && c <= 'z' && s[0] == (uint8_t)(c - 32)))
        return 1;
    if (q->h->binary)
        return 0;
    if (c == 'k' && end - s >= 3 && s[0] == 0xE2 && s[1] == 0x84 && s[2] == 0xAA)
        return 3;
    if (c == 's' && end - s >= 2 && s[0] == 0xC5 && s[1] == 0xBF)
        return 2;
    return 0;
}

/* The end of `word` matched case-insensitively at s, or NULL. */
static const uint8_t *match_word(const hq *q, const uint8_t *s, const uint8_t *end, const char *word)
{
    for (; *word; word++) {
        size_t k = fold_eq(q, s, end, *word);
        if (!k)
            return NULL;
        s += k;
    }
    return s;
}

/* A byte-range-spec of range()'s pattern at s[i]: \d+-\d* or -\d+.
 * Returns where it ends, or 0 when there is none. */
static size_t range_spec_end(const uint8_t *s, size_t n, size_t i)
{
    if (i < n && is_digit(s[i])) {
        while (i < n && is_digit(s[i]))
            i++;
        if (i >= n || s[i] != '-')
            return 0;
        i++;
        while (i < n && is_digit(s[i]))
            i++;
        return i;
    }
    if (i + 1 < n && s[i] == '-' && is_digit(s[i + 1])) {
        i++;
        while (i < n && is_digit(s[i]))
            i++;
        return i;
    }
    return 0;
}

static size_t skip_blank(const uint8_t *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* def range
 *   value = self['Range']
 *   unless /\Abytes=((?:,[ \t]*)*(?:\d+-\d*|-\d+)(?:[ \t]*,(?:[ \t]*\d+-\d*|-\d+)?)*)\z/ =~ value
 * (read left to right: no choice there needs to be undone) */
static int range_syntax(const uint8_t *s, size_t n, size_t *set_at)
{
    if (n < 6 || memcmp(s, "bytes=", 6) != 0)
        return 0;
    size_t i = *set_at = 6;
    while (i < n && s[i] == ',')
        i = skip_blank(s, n, i + 1);
    if (!(i = range_spec_end(s, n, i)))
        return 0;
    while (i < n) {
        i = skip_blank(s, n, i);
        if (i >= n || s[i] != ',')
            return 0;
        i++;
        size_t j = skip_blank(s, n, i);
        if (j < n && is_digit(s[j])) {
            if (!(i = range_spec_end(s, n, j)))
                return 0;
        } else if (j == i && i < n && s[i] == '-') {
            if (!(i = range_spec_end(s, n, i)))
                return 0;
        }
    }
    return 1;
}

/* Compares two digit runs as numbers. */
static int cmp_digits(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    while (an > 1 && a[0] == '0')
        a++, an--;
    while (bn > 1 && b[0] == '0')
        b++, bn--;
    if (an != bn)
        return an < bn ? -1 : 1;
    int c = memcmp(a, b, an);
    return c < 0 ? -1 : c > 0;
}

static int all_zero(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return 0;
    return 1;
}

/* result = byte_range_set.split(/,/).map {|spec|
 *   m = /(\d+)?\s*-\s*(\d+)?/i.match(spec) or raise ... */
static int range(hq *q)
{
    int rc;
    if (!present(q, "range", &rc))
        return rc;
    const uint8_t *s = val(q);
    size_t n = q->val.len, at;
    if (!range_syntax(s, n, &at))
        return hq_raise(q, NH_E_HEADER_SYNTAX, "invalid syntax for byte-ranges-specifier: '", s, n, "'");
    if (begin(q, 1))
        return NH_NOMEM;
    /* split(/,/) drops trailing empty pieces */
    size_t end = n;
    while (end > at && s[end - 1] == ',')
        end--;
    size_t count = 0, only_zero_suffix = 0;
    for (size_t i = at; i <= end && end > at;) {
        size_t j = i;
        while (j < end && s[j] != ',')
            j++;
        const uint8_t *spec = s + i;
        size_t sl = j - i, dash = 0;
        while (dash < sl && spec[dash] != '-')
            dash++;
        if (dash == sl)
            return hq_raise(q, NH_E_HEADER_SYNTAX, "invalid byte-range-spec: '", spec, sl, "'");
        size_t a = dash; /* (\d+)? right before the dash */
        while (a > 0 && is_digit(spec[a - 1]))
            a--;
        size_t b = dash + 1;
        while (b < sl && is_digit(spec[b]))
            b++;
        const uint8_t *d1 = spec + a, *d2 = spec + dash + 1;
        size_t l1 = dash - a, l2 = b - dash - 1;
        if (l1 && l2) {
            if (cmp_digits(d1, l1, d2, l2) > 0)
                return hq_raise(q, NH_E_HEADER_SYNTAX,
                             "last-byte-pos MUST greater than or equal to first-byte-pos but '", spec,
                             sl, "'");
            rc = put_int(q, d1, l1, 0) || put_int(q, d2, l2, 0);
            only_zero_suffix = 0;
        } else if (l1) {
            rc = put_int(q, d1, l1, 0) || put(q, (const uint8_t *)"-1", 2);
            only_zero_suffix = all_zero(d1, l1);
        } else {
            rc = put_int(q, d2, l2, 1) || put(q, (const uint8_t *)"-1", 2);
            only_zero_suffix = all_zero(d2, l2);
        }
        if (rc)
            return NH_NOMEM;
        count++;
        i = j + 1;
        if (j >= end)
            break;
    }
    /* if result.size == 1 && result[0].begin == 0 && result[0].end == -1 */
    if (count == 1 && only_zero_suffix)
        return hq_raise(q, NH_E_HEADER_SYNTAX, "only one suffix-byte-range-spec with zero suffix-length",
                     NULL, 0, "");
    return NH_OK;
}

/* len = self['Content-Length'].slice(/\d+/) or
 *     raise Net::HTTPHeaderSyntaxError, 'wrong Content-Length format'
 * len.to_i */
static int content_length(hq *q)
{
    int rc;
    if (!present(q, "content-length", &rc))
        return rc;
    const uint8_t *s = val(q);
    size_t n = q->val.len, i = 0;
    while (i < n && !is_digit(s[i]))
        i++;
    if (i == n)
        return hq_raise(q, NH_E_HEADER_SYNTAX, "wrong Content-Length format", NULL, 0, "");
    size_t j = i;
    while (j < n && is_digit(s[j]))
        j++;
    return begin(q, 1) || put_int(q, s + i, j - i, 0) ? NH_NOMEM : NH_OK;
}

/* (/(?:\A|[^\-\w])chunked(?![\-\w])/i =~ field) ? true : false */
static int chunked(hq *q)
{
    long fi = joined(q, "transfer-encoding");
    if (fi == -2)
        return NH_NOMEM;
    const uint8_t *s = val(q), *end = s + q->val.len;
    if (fi >= 0)
        for (const uint8_t *p = s; p < end; p++) {
            if (p > s && (p[-1] == '-' || is_word(p[-1])))
                continue;
            const uint8_t *e = match_word(q, p, end, "chunked");
            if (e && !(e < end && (*e == '-' || is_word(*e))))
                return begin(q, 1);
        }
    return begin(q, 0);
}

/* m = %r<\A\s*(\w+)\s+(\d+)-(\d+)/(\d+|\*)>.match(self['Content-Range']) or
 *     raise Net::HTTPHeaderSyntaxError, 'wrong Content-Range format'
 * return unless m[1] == 'bytes'
 * m[2].to_i .. m[3].to_i */
static int content_range(hq *q)
{
    int rc;
    if (!present(q, "content-range", &rc))
        return rc;
    const uint8_t *s = val(q);
    size_t n = q->val.len, i = 0;
    while (i < n && is_space(s[i]))
        i++;
    size_t u = i;
    while (i < n && is_word(s[i]))
        i++;
    size_t ul = i - u, sp = i;
    while (i < n && is_space(s[i]))
        i++;
    size_t a = i;
    while (i < n && is_digit(s[i]))
        i++;
    size_t al = i - a;
    int ok = ul && i > sp && al && i < n && s[i] == '-';
    size_t b = ++i;
    while (ok && i < n && is_digit(s[i]))
        i++;
    size_t bl = i - b;
    ok = ok && bl && i < n && s[i] == '/' && i + 1 < n && (is_digit(s[i + 1]) || s[i + 1] == '*');
    if (!ok)
        return hq_raise(q, NH_E_HEADER_SYNTAX, "wrong Content-Range format", NULL, 0, "");
    if (!(ul == 5 && memcmp(s + u, "bytes", 5) == 0))
        return begin(q, 0);
    return begin(q, 1) || put_int(q, s + a, al, 0) || put_int(q, s + b, bl, 0) ? NH_NOMEM : NH_OK;
}

/* The first piece of s.split(sep) (nil when there is none): the bytes up
 * to the first separator; split drops trailing empty pieces, so a string
 * of nothing but separators has no first piece -- which, as to_s, is the
 * same empty string. */
static size_t first_piece(const uint8_t *s, size_t n, uint8_t sep)
{
    const uint8_t *p = memchr(s, sep, n);
    return p ? (size_t)(p - s) : n;
}

static int put_stripped(hq *q, const uint8_t *s, size_t n)
{
    size_t a, b;
    nh_strip(s, n, &a, &b);
    return put(q, s + a, b - a);
}

/* main:  self['Content-Type'].split(';').first.to_s.split('/')[0].to_s.strip
 * sub:   _, sub = *self['Content-Type'].split(';').first.to_s.split('/')
 *        return nil unless sub
 *        sub.strip
 * content_type: sub ? "#{main}/#{sub}" : main */
static int content_type(hq *q, int which)
{
    int rc;
    if (!present(q, "content-type", &rc))
        return rc;
    const uint8_t *s = val(q);
    size_t n = first_piece(s, q->val.len, ';');
    size_t m = first_piece(s, n, '/');
    /* the second piece of split('/'), unless it and all after it are empty */
    const uint8_t *sub = NULL;
    size_t sl = 0;
    if (m < n) {
        size_t k = m + 1;
        while (k < n && s[k] == '/')
            k++;
        if (k < n) {
            sub = s + m + 1;
            sl = first_piece(sub, n - m - 1, '/');
        }
    }
    if (which == NH_HQ_SUB_TYPE) {
        if (!sub)
            return begin(q, 0);
        return begin(q, 1) || put_stripped(q, sub, sl) ? NH_NOMEM : NH_OK;
    }
    if (begin(q, 1) || put_stripped(q, s, m))
        return NH_NOMEM;
    if (which == NH_HQ_CONTENT_TYPE && sub) {
        size_t a, b;
        nh_strip(sub, sl, &a, &b);
        nh_buf *o = q->out;
        /* "#{main}/#{sub}": one string */
        if (nh_buf_putc(o, '/') || nh_buf_append(o, sub + a, b - a))
            return NH_NOMEM;
        /* fix the length of the last string */
        size_t last = q->count_at + 4, len = o->len - last - 4;
        o->data[last] = (uint8_t)len;
        o->data[last + 1] = (uint8_t)(len >> 8);
        o->data[last + 2] = (uint8_t)(len >> 16);
        o->data[last + 3] = (uint8_t)(len >> 24);
    }
    return NH_OK;
}

/* list = self['Content-Type'].to_s.split(';')
 * list.shift
 * list.each do |param|
 *   k, v = *param.split('=', 2)
 *   result[k.strip] = v.strip
 * end
 * Out: pairs, a later duplicate key replacing the value in place. */
typedef struct span {
    size_t ko, kl, vo, vl;
} span;

static int type_params(hq *q)
{
    long fi = joined(q, "content-type");
    if (fi == -2)
        return NH_NOMEM;
    const uint8_t *s = val(q);
    size_t n = q->val.len;
    while (n > 0 && s[n - 1] == ';') /* split drops trailing empty pieces */
        n--;
    if (begin(q, 1))
        return NH_NOMEM;
    size_t i = first_piece(s, n, ';'), np = 0, cap = 0;
    span *ps = NULL;
    int rc = NH_OK;
    while (i < n) {
        const uint8_t *p = s + i + 1;
        size_t pl = first_piece(p, n - i - 1, ';');
        i += 1 + pl;
        size_t eq = first_piece(p, pl, '=');
        if (eq == pl) { /* k or v is nil */
            rc = hq_raise(q, NH_E_NO_METHOD, "undefined method 'strip' for nil", NULL, 0, "");
            break;
        }
        size_t ka, kb, va, vb;
        nh_strip(p, eq, &ka, &kb);
        nh_strip(p + eq + 1, pl - eq - 1, &va, &vb);
        span sp = {(size_t)(p - s) + ka, kb - ka, (size_t)(p - s) + eq + 1 + va, vb - va};
        size_t e = 0;
        while (e < np && !(ps[e].kl == sp.kl && memcmp(s + ps[e].ko, s + sp.ko, sp.kl) == 0))
            e++;
        if (e == np) {
            if (np == cap) {
                size_t nc = cap ? cap * 2 : 8;
                span *g = realloc(ps, nc * sizeof *g);
                if (!g) {
                    rc = NH_NOMEM;
                    break;
                }
                ps = g;
                cap = nc;
            }
            ps[np++] = sp;
        } else { /* result[k] = v: a later value, the first position */
            ps[e].vo = sp.vo;
            ps[e].vl = sp.vl;
        }
    }
    for (size_t e = 0; rc == NH_OK && e < np; e++)
        rc = put(q, s + ps[e].ko, ps[e].kl) || put(q, s + ps[e].vo, ps[e].vl) ? NH_NOMEM : NH_OK;
    free(ps);
    return rc;
}

/* token = /(?:\A|,)\s*close\s*(?:\z|,)/i
 * @header['connection']&.grep(token) {return true}
 * @header['proxy-connection']&.grep(token) {return true} */
static int has_token(hq *q, const uint8_t *s, size_t n, const char *word)
{
    const uint8_t *end = s + n;
    for (size_t i = 0; i <= n; i++) {
        if (i > 0 && s[i - 1] != ',')
            continue;
        const uint8_t *p = s + i;
        while (p < end && is_space(*p))
            p++;
        const uint8_t *e = match_word(q, p, end, word);
        if (!e)
            continue;
        while (e < end && is_space(*e))
            e++;
        if (e == end || *e == ',')
            return 1;
    }
    return 0;
}

static int connection(hq *q, const char *word)
{
    static const char *const keys[] = {"connection", "proxy-connection"};
    for (int k = 0; k < 2; k++) {
        long fi = field(q, keys[k]);
        if (fi < 0)
            continue;
        const nh_field *f = &q->h->fields[fi];
        for (uint32_t v = f->head; v != NH_NIL; v = q->h->vals[v].next)
            if (has_token(q, q->h->bytes.data + q->h->vals[v].off, q->h->vals[v].len, word))
                return begin(q, 1);
    }
    return begin(q, 0);
}

/* a = @header.fetch(key.downcase.to_s, *args, &block)
 * Found: the joined value.  Not found: the downcased key and the message of
 * Hash#fetch's KeyError, for the caller's default or block. */
static int fetch(hq *q, const uint8_t *key, size_t klen)
{
    nh_buf lk = {0}, msg = {0};
    int rc = nh_utf8_downcase(&lk, key, klen, q->h->profile);
    long fi = rc ? -1 : nh_headers_find(q->h, lk.data ? lk.data : (const uint8_t *)"", lk.len);
    if (!rc && fi >= 0) {
        q->val.len = 0;
        rc = nh_headers_join(q->h, fi, &q->val) || begin(q, 1) || put(q, val(q), q->val.len);
    } else if (!rc) {
        rc = nh_put_str(&msg, "key not found: ") ||
             nh_inspect(&msg, lk.data ? lk.data : (const uint8_t *)"", lk.len, 1, q->h->profile) ||
             begin(q, 0) || put(q, lk.data ? lk.data : (const uint8_t *)"", lk.len) ||
             put(q, msg.data, msg.len);
    }
    nh_buf_free(&lk);
    nh_buf_free(&msg);
    return rc ? NH_NOMEM : NH_OK;
}

/* return nil unless @header[stringified_downcased_key]
 * @header[stringified_downcased_key].dup */
static int get_fields(hq *q, const uint8_t *key, size_t klen)
{
    nh_buf lk = {0};
    int rc = nh_utf8_downcase(&lk, key, klen, q->h->profile);
    long fi = rc ? -1 : nh_headers_find(q->h, lk.data ? lk.data : (const uint8_t *)"", lk.len);
    nh_buf_free(&lk);
    if (rc)
        return NH_NOMEM;
    if (fi < 0)
        return begin(q, 0);
    if (begin(q, 1))
        return NH_NOMEM;
    const nh_field *f = &q->h->fields[fi];
    for (uint32_t v = f->head; v != NH_NIL; v = q->h->vals[v].next)
        if (put(q, q->h->bytes.data + q->h->vals[v].off, q->h->vals[v].len))
            return NH_NOMEM;
    return NH_OK;
}

/* def each_capitalized
 *   block_given? or return enum_for(__method__) { @header.size }
 *   @header.each do |k,v|
 *     yield capitalize(k), v.join(', ')
 *   end
 * end */
static int each_capitalized(hq *q)
{
    if (begin(q, 1))
        return NH_NOMEM;
    const nh_headers *h = q->h;
    nh_buf name = {0};
    int rc = NH_OK;
    for (uint32_t fi = 0; fi < h->nfields && !rc; fi++) {
        const nh_field *f = &h->fields[fi];
        if (!f->live)
            continue;
        name.len = q->val.len = 0;
        if (nh_capitalize_name(&name, h->bytes.data + f->name_off, f->name_len, h->profile, h->binary) ||
            nh_headers_join(h, (long)fi, &q->val) || put(q, name.data, name.len) ||
            put(q, q->val.data, q->val.len))
            rc = NH_NOMEM;
    }
    nh_buf_free(&name);
    return rc;
}

int nh_header_query(const nh_headers *h, int kind, const uint8_t *arg, size_t alen, nh_buf *out,
                    nh_error *err)
{
    hq q = {h, out, err, {0}, 0, 0};
    int rc;
    err->cls = NH_E_NONE;
    switch (kind) {
    case NH_HQ_RANGE: rc = range(&q); break;
    case NH_HQ_CONTENT_LENGTH: rc = content_length(&q); break;
    case NH_HQ_CHUNKED: rc = chunked(&q); break;
    case NH_HQ_CONTENT_RANGE: rc = content_range(&q); break;
    case NH_HQ_CONTENT_TYPE:
    case NH_HQ_MAIN_TYPE:
    case NH_HQ_SUB_TYPE: rc = content_type(&q, kind); break;
    case NH_HQ_TYPE_PARAMS: rc = type_params(&q); break;
    case NH_HQ_CONNECTION_CLOSE: rc = connection(&q, "close"); break;
    case NH_HQ_KEEP_ALIVE: rc = connection(&q, "keep-alive"); break;
    case NH_HQ_FETCH: rc = fetch(&q, arg, alen); break;
    case NH_HQ_GET_FIELDS: rc = get_fields(&q, arg, alen); break;
    case NH_HQ_EACH_CAPITALIZED: rc = each_capitalized(&q); break;
    default: rc = nh_fail(out, err, NH_E_TYPE, "unknown header query");
    }
    nh_buf_free(&q.val);
    return rc;
}
