/* URI.encode_www_form & co, as uri/common.rb defines them. */
#include <string.h>

#include "internal.h"

static const char HEX[] = "0123456789ABCDEF";

/* /[^*\-.0-9A-Z_a-z]/ -> %XX, with ' ' -> '+'. */
#define KEEP(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9') || \
                 (c) == '*' || (c) == '-' || (c) == '.' || (c) == '_')
#define K4(c) KEEP(c), KEEP(c + 1), KEEP(c + 2), KEEP(c + 3)
#define K16(c) K4(c), K4(c + 4), K4(c + 8), K4(c + 12)
#define K64(c) K16(c), K16(c + 16), K16(c + 32), K16(c + 48)
static const uint8_t KEPT[256] = {K64(0), K64(64), K64(128), K64(192)};

/* /[^*\-.0-9A-Z_a-z]/ -> %XX, with ' ' -> '+'. */
int nh_encode_www_form_component(nh_buf *out, const uint8_t *s, size_t n)
{
    if (n > (SIZE_MAX - 16) / 3 || nh_buf_reserve(out, n * 3))
        return NH_NOMEM;
    uint8_t *o = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (KEPT[c]) {
            *o++ = c;
        } else if (c == ' ') {
            *o++ = '+';
        } else {
            o[0] = '%';
            o[1] = (uint8_t)HEX[c >> 4];
            o[2] = (uint8_t)HEX[c & 15];
            o += 3;
        }
    }
    out->len = (size_t)(o - out->data);
    return NH_OK;
}

/* gsub(/\+|%\h\h/, TBLDECWWWCOMP_) */
static int decode_plus_pct(nh_buf *out, const uint8_t *s, size_t n)
{
    if (nh_buf_reserve(out, n))
        return NH_NOMEM;
    uint8_t *o = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        int hi, lo;
        if (c == '+') {
            *o++ = ' ';
        } else if (c == '%' && n - i >= 3 && (hi = nh_hex_val(s[i + 1])) >= 0 && (lo = nh_hex_val(s[i + 2])) >= 0) {
            *o++ = (uint8_t)(hi << 4 | lo);
            i += 2;
        } else {
            *o++ = c;
        }
    }
    out->len = (size_t)(o - out->data);
    return NH_OK;
}

int nh_decode_www_form_component(nh_buf *out, nh_error *err, const uint8_t *s, size_t n)
{
    /* raise ArgumentError, "invalid %-encoding (#{str})" if /%(?!\h\h)/ */
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && (n - i < 3 || nh_hex_val(s[i + 1]) < 0 || nh_hex_val(s[i + 2]) < 0)) {
            out->len = 0;
            if (nh_buf_append(out, "invalid %-encoding (", 20) || nh_buf_append(out, s, n) ||
                nh_buf_putc(out, ')'))
                return NH_NOMEM;
            err->cls = NH_E_ARGUMENT;
            return NH_ERROR;
        }
    }
    return decode_plus_pct(out, s, n);
}


/* Decodes one key or value into out as a u32-prefixed, scrubbed UTF-8 string. */
static int put_decoded(nh_buf *out, nh_buf *tmp, const uint8_t *s, size_t n)
{
    tmp->len = 0;
    if (decode_plus_pct(tmp, s, n))
        return NH_NOMEM;
    size_t at = out->len;
    if (nh_put_u32(out, 0))
        return NH_NOMEM;
    if (nh_utf8_valid(tmp->data, tmp->len) ? nh_buf_append(out, tmp->data, tmp->len)
                                           : nh_scrub_utf8(out, tmp->data, tmp->len))
        return NH_NOMEM;
    size_t len = out->len - at - 4;
    if (len > UINT32_MAX)
        return NH_NOMEM;
    out->data[at] = (uint8_t)len;
    out->data[at + 1] = (uint8_t)(len >> 8);
    out->data[at + 2] = (uint8_t)(len >> 16);
    out->data[at + 3] = (uint8_t)(len >> 24);
    return NH_OK;
}

/* A newline unit for paragraph mode: "\n" or "\r\n". */
static size_t newline_at(const uint8_t *s, size_t n, size_t i)
{
    if (i < n && s[i] == '\n')
        return 1;
    if (i + 1 < n && s[i] == '\r' && s[i + 1] == '\n')
        return 2;
    return 0;
}

static const uint8_t *find_sep(const uint8_t *s, size_t n, const uint8_t *sep, size_t seplen)
{
    if (seplen == 0 || seplen > n)
        return NULL;
    const uint8_t *end = s + (n - seplen);
    for (const uint8_t *p = s; p <= end; p++) {
        p = memchr(p, sep[0], (size_t)(end - p) + 1);
        if (!p)
            return NULL;
        if (memcmp(p, sep, seplen) == 0)
            return p;
    }
    return NULL;
}

/* String#chomp!(sep) for the separators decode_www_form passes. */
static size_t chomp_len(const uint8_t *s, size_t n, const uint8_t *sep, size_t seplen)
{
    if (seplen == 0) { /* remove every trailing "\n" or "\r\n" */
        while (n > 0 && s[n - 1] == '\n') {
            n--;
            if (n > 0 && s[n - 1] == '\r')
                n--;
        }
        return n;
    }
    if (seplen == 1 && sep[0] == '\n') { /* "\n", "\r\n" or "\r" */
        if (n > 0 && s[n - 1] == '\n') {
            n--;
            if (n > 0 && s[n - 1] == '\r')
                n--;
        } else if (n > 0 && s[n - 1] == '\r') {
            n--;
        }
        return n;
    }
    if (n >= seplen && memcmp(s + n - seplen, sep, seplen) == 0)
        return n - seplen;
    return n;
}

static int decode_pair(nh_buf *out, nh_buf *tmp, const uint8_t *s, size_t n)
{
    const uint8_t *eq = memchr(s, '=', n);
    size_t klen = eq ? (size_t)(eq - s) : n;
    if (put_decoded(out, tmp, s, klen))
        return NH_NOMEM;
    if (eq)
        return put_decoded(out, tmp, eq + 1, n - klen - 1);
    return nh_put_u32(out, 0);
}

int nh_decode_www_form(nh_buf *out, nh_error *err, const uint8_t *s, size_t n,
                       const uint8_t *sep, size_t seplen)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 0x80)
            return nh_fail(out, err, NH_E_ARGUMENT,
                           "the input of URI.decode_www_form must be ASCII only string");
    }
    nh_buf tmp = {0};
    size_t count_at = out->len;
    uint32_t count = 0;
    int rc = nh_put_u32(out, 0);
    size_t pos = 0;
    while (rc == NH_OK && pos < n) {
        size_t end;
        size_t next;
        if (seplen == 0) { /* paragraph mode: up to two consecutive newlines */
            size_t i = pos;
            int prev_nl = 0;
            end = n;
            while (i < n) {
                size_t nl = newline_at(s, n, i);
                if (nl) {
                    i += nl;
                    if (prev_nl) {
                        end = i;
                        break;
                    }
                    prev_nl = 1;
                } else {
                    prev_nl = 0;
                    i++;
                }
            }
            next = end;
            if (end < n) {
                size_t nl;
                while ((nl = newline_at(s, n, next)) != 0)
                    next += nl;
            }
        } else {
            const uint8_t *hit = find_sep(s + pos, n - pos, sep, seplen);
            end = hit ? (size_t)(hit - s) + seplen : n;
            next = end;
        }
        rc = decode_pair(out, &tmp, s + pos, chomp_len(s + pos, end - pos, sep, seplen));
        count++;
        pos = next;
    }
    nh_buf_free(&tmp);
    if (rc)
        return rc;
    out->data[count_at] = (uint8_t)count;
    out->data[count_at + 1] = (uint8_t)(count >> 8);
    out->data[count_at + 2] = (uint8_t)(count >> 16);
    out->data[count_at + 3] = (uint8_t)(count >> 24);
    return NH_OK;
}

int nh_form_put_pair(nh_buf *out, size_t index, const nh_form_pair *fp)
{
    const uint8_t *k = fp->key.ptr;
    size_t klen = fp->key.len;
    if (index > 0 && nh_buf_putc(out, '&'))
        return NH_NOMEM;
    if (!fp->values) {
        if (nh_encode_www_form_component(out, k, klen))
            return NH_NOMEM;
        if (fp->value.ptr && (nh_buf_putc(out, '=') ||
                              nh_encode_www_form_component(out, fp->value.ptr, fp->value.len)))
            return NH_NOMEM;
        return NH_OK;
    }
    /* v.to_ary.map { |w| ... unless w.nil? }.join('&'): a nil
     * element maps to nil, which joins as an empty string. */
    for (size_t j = 0; j < fp->nvalues; j++) {
        if (j > 0 && nh_buf_putc(out, '&'))
            return NH_NOMEM;
        const nh_str *w = &fp->values[j];
        if (!w->ptr)
            continue;
        if (nh_encode_www_form_component(out, k, klen) || nh_buf_putc(out, '=') ||
            nh_encode_www_form_component(out, w->ptr, w->len))
            return NH_NOMEM;
    }
    return NH_OK;
}

int nh_encode_www_form(nh_buf *out, const nh_form_pair *params, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (nh_form_put_pair(out, i, &params[i]))
            return NH_NOMEM;
    return NH_OK;
}

int nh_form_gsub_sep(nh_buf *out, nh_error *err, const uint8_t *q, size_t qlen,
                     const uint8_t *sep, size_t seplen)
{
    for (size_t i = 0; i < qlen; i++) {
        if (q[i] != '&') {
            if (nh_buf_putc(out, q[i]))
                return NH_NOMEM;
            continue;
        }
        for (size_t j = 0; j < seplen; j++) {
            uint8_t c = sep[j];
            if (c != '\\' || j + 1 == seplen) {
                if (nh_buf_putc(out, c))
                    return NH_NOMEM;
                continue;
            }
            c = sep[++j];
            int rc = NH_OK;
            switch (c) {
            case '0':
            case '&':
                rc = nh_buf_putc(out, '&');
                break;
            case '`':
                rc = nh_buf_append(out, q, i);
                break;
            case '\'':
                rc = nh_buf_append(out, q + i + 1, qlen - i - 1);
                break;
            case '\\':
                rc = nh_buf_putc(out, '\\');
                break;
            case '1': case '2': case '3': case '4': case '5':
            case '6': case '7': case '8': case '9':
            case '+':
                break; /* no such group: empty */
            case 'k': {
                const uint8_t *gt = NULL;
                if (j + 1 < seplen && sep[j + 1] == '<')
                    gt = memchr(sep + j + 2, '>', seplen - j - 2);
                if (gt) {
                    nh_buf msg = {0};
                    const uint8_t *name = sep + j + 2;
                    if (nh_put_str(&msg, "undefined group name reference: ") ||
                        nh_buf_append(&msg, name, (size_t)(gt - name))) {
                        nh_buf_free(&msg);
                        return NH_NOMEM;
                    }
                    out->len = 0;
                    rc = nh_buf_append(out, msg.data, msg.len);
                    nh_buf_free(&msg);
                    if (rc)
                        return rc;
                    err->cls = NH_E_INDEX;
                    return NH_ERROR;
                }
                if (j + 1 < seplen && sep[j + 1] == '<') {
                    out->len = 0;
                    err->cls = NH_E_RUNTIME;
                    return nh_put_str(out, "invalid group name reference format") ? NH_NOMEM
                                                                                   : NH_ERROR;
                }
                rc = nh_buf_append(out, "\\k", 2);
                break;
            }
            default:
                if (nh_buf_putc(out, '\\') || nh_buf_putc(out, c))
                    return NH_NOMEM;
            }
            if (rc)
                return rc;
        }
    }
    return NH_OK;
}
