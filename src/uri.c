/* URI(str) for http and https, as URI::RFC3986_Parser and URI::Generic
 * (uri 1.0.2 and 1.1.1) read it: only what Net::HTTP needs from a URI. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_hex(uint8_t c)
{
    return nh_hex_val(c) >= 0;
}

static int is_alpha(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* [!$&-.0-9;=A-Z_a-z~] : the reg-name characters besides %XX */
static int is_regname(uint8_t c)
{
    return c == '!' || c == '$' || (c >= '&' && c <= '.') || is_digit(c) || c == ';' ||
           c == '=' || (c >= 'A' && c <= 'Z') || c == '_' || (c >= 'a' && c <= 'z') || c == '~';
}

enum { CH_REGNAME = 1, CH_USERINFO = 2, CH_SEG = 4, CH_SEG_NC = 8, CH_FRAGMENT = 16 };

/* Bit set of the classes each byte belongs to, as a constant table. */
#define REGNAME(c) ((c) == '!' || (c) == '$' || ((c) >= '&' && (c) <= '.') || ((c) >= '0' && (c) <= '9') || \
                    (c) == ';' || (c) == '=' || ((c) >= 'A' && (c) <= 'Z') || (c) == '_' ||          \
                    ((c) >= 'a' && (c) <= 'z') || (c) == '~')
#define CC(c)                                                                                     \
    (uint8_t)((REGNAME(c) ? (CH_REGNAME | CH_USERINFO | CH_SEG | CH_SEG_NC | CH_FRAGMENT) : 0) |  \
              ((c) == ':' ? (CH_USERINFO | CH_SEG | CH_FRAGMENT) : 0) |                          \
              ((c) == '@' ? (CH_SEG | CH_SEG_NC | CH_FRAGMENT) : 0) |                             \
              ((c) == '/' ? (CH_SEG | CH_FRAGMENT) : 0) | ((c) == '?' ? CH_FRAGMENT : 0))
#define CC4(c) CC(c), CC(c + 1), CC(c + 2), CC(c + 3)
#define CC16(c) CC4(c), CC4(c + 4), CC4(c + 8), CC4(c + 12)
#define CC64(c) CC16(c), CC16(c + 16), CC16(c + 32), CC16(c + 48)
static const uint8_t CHAR_CLASS[256] = {CC64(0), CC64(64), CC64(128), CC64(192)};

static int in_class(uint8_t c, int cls)
{
    return (CHAR_CLASS[c] & cls) != 0;
}

/* Length of the longest run of class characters (or %XX) from s. */
static size_t run(const uint8_t *s, size_t n, int cls)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] == '%') {
            if (n - i >= 3 && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
                i += 3;
                continue;
            }
            break;
        }
        if (!in_class(s[i], cls))
            break;
        i++;
    }
    return i;
}

/* dec-octet "." dec-octet "." dec-octet "." dec-octet, the whole of s. */
static int ipv4_whole(const uint8_t *s, size_t n)
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0) {
            if (i >= n || s[i] != '.')
                return 0;
            i++;
        }
        size_t j = i;
        while (j < n && j - i < 3 && is_digit(s[j]))
            j++;
        size_t len = j - i;
        if (len == 0)
            return 0;
        if (len > 1 && s[i] == '0')
            return 0;
        if (len == 3) {
            int v = (s[i] - '0') * 100 + (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
            if (v > 255)
                return 0;
        }
        i = j;
    }
    return i == n;
}

/* Groups of 1-4 hex digits separated by ':' ; the last may be an IPv4
 * address when allow_v4.  Returns units (IPv4 counts 2) or -1. */
static int h16_list(const uint8_t *s, size_t n, int allow_v4)
{
    if (n == 0)
        return 0;
    int units = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < n && s[j] != ':')
            j++;
        if (j == n && allow_v4 && memchr(s + i, '.', n - i))
            return ipv4_whole(s + i, n - i) ? units + 2 : -1;
        size_t len = j - i;
        if (len < 1 || len > 4)
            return -1;
        for (size_t k = i; k < j; k++)
            if (!is_hex(s[k]))
                return -1;
        units++;
        if (j == n)
            return units;
        i = j + 1;
        if (i == n)
            return -1;
    }
}

static int ipv6_valid(const uint8_t *s, size_t n)
{
    const uint8_t *dc = NULL;
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] == ':' && s[i + 1] == ':') {
            dc = s + i;
            break;
        }
    }
    if (!dc) {
        int u = h16_list(s, n, 1);
        return u == 8;
    }
    size_t l = (size_t)(dc - s);
    const uint8_t *r = dc + 2;
    size_t rn = n - l - 2;
    int lu = h16_list(s, l, 0);
    int ru = h16_list(r, rn, 1);
    if (lu < 0 || ru < 0)
        return 0;
    return lu + ru <= 7;
}

/* (?<IPvFuture>v\h++\.[!$&-.0-9:;=A-Z_a-z~]++) */
static int ipvfuture_valid(const uint8_t *s, size_t n)
{
    if (n < 4 || s[0] != 'v')
        return 0;
    size_t i = 1;
    while (i < n && is_hex(s[i]))
        i++;
    if (i == 1 || i >= n || s[i] != '.')
        return 0;
    i++;
    if (i == n)
        return 0;
    for (; i < n; i++)
        if (!(is_regname(s[i]) || s[i] == ':'))
            return 0;
    return 1;
}

typedef struct parts {
    const uint8_t *host;
    size_t host_len;
    int has_port;
    const uint8_t *port;
    size_t port_len;
    const uint8_t *path;
    size_t path_len;
} parts;

/* //authority path-abempty over the whole of p (which starts after "//"). */
static int authority_path(const uint8_t *p, size_t n, parts *o)
{
    size_t i = 0;
    size_t u = run(p, n, CH_USERINFO);
    if (u < n && p[u] == '@')
        i = u + 1;
    size_t hs = i;
    if (i < n && p[i] == '[') {
        const uint8_t *rb = memchr(p + i, ']', n - i);
        if (!rb)
            return 0;
        size_t inner = (size_t)(rb - (p + i + 1));
        if (!ipv6_valid(p + i + 1, inner) && !ipvfuture_valid(p + i + 1, inner))
            return 0;
        i = (size_t)(rb - p) + 1;
    } else {
        i += run(p + i, n - i, CH_REGNAME);
    }
    o->host = p + hs;
    o->host_len = i - hs;
    o->has_port = 0;
    o->port = NULL;
    o->port_len = 0;
    if (i < n && p[i] == ':') {
        size_t ds = ++i;
        while (i < n && is_digit(p[i]))
            i++;
        o->has_port = 1;
        o->port = p + ds;
        o->port_len = i - ds;
    }
    o->path = p + i;
    o->path_len = n - i;
    if (i == n)
        return 1;
    return p[i] == '/' && run(p + i, n - i, CH_SEG) == n - i;
}

/* Splits off "?query" and "#fragment" and checks the fragment. */
static int split_tail(const uint8_t *s, size_t n, size_t *plen, const uint8_t **q, size_t *qlen)
{
    size_t i = 0;
    while (i < n && s[i] != '?' && s[i] != '#')
        i++;
    *plen = i;
    *q = NULL;
    *qlen = 0;
    if (i < n && s[i] == '?') {
        size_t qs = ++i;
        while (i < n && s[i] != '#')
            i++;
        *q = s + qs;
        *qlen = i - qs;
    }
    if (i < n) { /* '#' */
        i++;
        if (run(s + i, n - i, CH_FRAGMENT) != n - i)
            return 0;
    }
    return 1;
}

static int relative_ref_valid(const uint8_t *s, size_t n, const uint8_t **q, size_t *qlen)
{
    size_t plen;
    parts o;
    if (!split_tail(s, n, &plen, q, qlen))
        return 0;
    if (plen >= 2 && s[0] == '/' && s[1] == '/' && authority_path(s + 2, plen - 2, &o))
        return 1;
    if (plen >= 1 && s[0] == '/')
        return run(s, plen, CH_SEG) == plen;
    if (plen == 0)
        return 1;
    size_t first = run(s, plen, CH_SEG_NC);
    if (first == 0)
        return 0;
    if (first == plen)
        return 1;
    return s[first] == '/' && run(s + first, plen - first, CH_SEG) == plen - first;
}

static int fail_quoted(nh_buf *out, nh_error *err, const char *prefix, const uint8_t *s, size_t n,
                       int dump)
{
    out->len = 0;
    err->cls = NH_E_URI_INVALID;
    if (nh_put_str(out, prefix))
        return NH_NOMEM;
    if (dump ? nh_dump(out, s, n, 1) : nh_inspect(out, s, n, 1, NH_PROFILE_40))
        return NH_NOMEM;
    return NH_ERROR;
}

static int ieq(const uint8_t *s, size_t n, const char *lit)
{
    if (strlen(lit) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (uint8_t)(c + 32);
        if (c != (uint8_t)lit[i])
            return 0;
    }
    return 1;
}

/* URI::Generic#query=: drop TAB/CR/LF, reject %\H\H, escape the rest. */
static int set_query(nh_uri *u, nh_buf *out, nh_error *err, const uint8_t *q, size_t n)
{
    nh_buf *b = &u->query;
    b->len = 0;
    for (size_t i = 0; i < n; i++)
        if (q[i] != '\t' && q[i] != '\r' && q[i] != '\n' && nh_buf_putc(b, q[i]))
            return NH_NOMEM;
    for (size_t i = 0; i + 2 < b->len; i++) {
        if (b->data[i] == '%' && !is_hex(b->data[i + 1]) && !is_hex(b->data[i + 2])) {
            out->len = 0;
            err->cls = NH_E_URI_INVALID;
            if (nh_put_str(out, "invalid percent escape: ") || nh_buf_append(out, b->data + i, 3))
                return NH_NOMEM;
            return NH_ERROR;
        }
    }
    nh_buf esc = {0};
    for (size_t i = 0; i < b->len; i++) {
        uint8_t c = b->data[i];
        int ok = c == '!' || (c >= '$' && c <= '&') || (c >= '(' && c <= ';') || c == '=' ||
                 (c >= '?' && c <= '_') || (c >= 'a' && c <= '~');
        if (ok) {
            if (nh_buf_putc(&esc, c))
                goto nomem;
        } else {
            static const char hex[] = "0123456789ABCDEF";
            uint8_t e[3] = {'%', (uint8_t)hex[c >> 4], (uint8_t)hex[c & 15]};
            if (nh_buf_append(&esc, e, 3))
                goto nomem;
        }
    }
    nh_buf_free(b);
    *b = esc;
    u->has_query = 1;
    return NH_OK;
nomem:
    nh_buf_free(&esc);
    return NH_NOMEM;
}

void nh_uri_free(nh_uri *u)
{
    nh_buf_free(&u->query);
}

/* /\A(?:[^@,;]+@[^@,;]+(?:\z|[,;]))*\z/ */
static int mailto_to_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t a = i;
        while (i < n && s[i] != '@' && s[i] != ',' && s[i] != ';')
            i++;
        if (i == a || i == n || s[i] != '@')
            return 0;
        size_t d = ++i;
        while (i < n && s[i] != '@' && s[i] != ',' && s[i] != ';')
            i++;
        if (i == d || (i < n && s[i] == '@'))
            return 0;
        if (i < n)
            i++;
    }
    return 1;
}

/* What the URI::FTP, URI::LDAP(S) and URI::MailTo constructors reject.
 * t is the part after "scheme:", plen its hier-part's length. */
static int scheme_checks(const uint8_t *scheme, size_t sl, const uint8_t *t, size_t tn,
                         size_t plen, int opaque, nh_buf *out, nh_error *err)
{
    int has_fragment = memchr(t, '#', tn) != NULL;
    if (ieq(scheme, sl, "ldap") || ieq(scheme, sl, "ldaps")) {
        if (has_fragment || opaque)
            return nh_fail(out, err, NH_E_URI_INVALID, "bad LDAP URL");
        return NH_OK;
    }
    if (!ieq(scheme, sl, "mailto"))
        return NH_OK;
    /* the opaque part: the hier-part and query of a rootless URI, or
     * "?query" of one with a path */
    size_t end = tn;
    const uint8_t *hash = memchr(t, '#', tn);
    if (hash)
        end = (size_t)(hash - t);
    const uint8_t *op = NULL;
    size_t on = 0;
    if (opaque) {
        op = t;
        on = end;
    } else if (plen < end && t[plen] == '?') {
        op = t + plen; /* "?#{@query}" */
        on = end - plen;
    }
    if (!op)
        return nh_fail(out, err, NH_E_URI_COMPONENT, "missing opaque part for mailto URL");
    const uint8_t *qm = memchr(op, '?', on);
    if (!mailto_to_valid(op, qm ? (size_t)(qm - op) : on)) {
        out->len = 0;
        err->cls = NH_E_URI_COMPONENT;
        if (nh_put_str(out, "unrecognised opaque part for mailtoURL: ") || nh_buf_append(out, op, on))
            return NH_NOMEM;
        return NH_ERROR;
    }
    return NH_OK;
}

int nh_uri_parse(nh_uri *u, nh_buf *out, nh_error *err, const uint8_t *s, size_t n)
{
    nh_buf keep = u->query;
    memset(u, 0, sizeof *u);
    u->query = keep;
    u->query.len = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x80)
            return fail_quoted(out, err, "URI must be ascii only ", s, n, 1);

    /* scheme ":" hier-part [ "?" query ] [ "#" fragment ] */
    size_t sl = 0;
    if (n > 0 && is_alpha(s[0])) {
        sl = 1;
        while (sl < n && (is_alpha(s[sl]) || is_digit(s[sl]) || s[sl] == '+' || s[sl] == '-' ||
                          s[sl] == '.'))
            sl++;
        if (sl == n || s[sl] != ':')
            sl = 0;
    }
    if (sl > 0) {
        const uint8_t *t = s + sl + 1;
        size_t tn = n - sl - 1, plen, qlen;
        const uint8_t *q;
        parts o;
        int ok = split_tail(t, tn, &plen, &q, &qlen);
        int opaque = 0, has_host = 0, rc;
        if (ok) {
            if (plen >= 2 && t[0] == '/' && t[1] == '/') {
                ok = authority_path(t + 2, plen - 2, &o);
                has_host = 1;
            } else if (plen >= 1 && t[0] == '/') {
                ok = run(t, plen, CH_SEG) == plen;
                o.path = t;
                o.path_len = plen;
            } else if (plen > 0) {
                ok = run(t, plen, CH_SEG) == plen;
                opaque = 1;
            } else {
                o.path = t;
                o.path_len = 0;
            }
        }
        if (ok) {
            /* URI::FTP.new checks before URI::Generic#initialize */
            if (ieq(s, sl, "ftp") && opaque)
                return nh_fail(out, err, NH_E_URI_INVALID, "URI::InvalidURIError");
            u->https = ieq(s, sl, "https");
            u->is_http = u->https || ieq(s, sl, "http");
            u->has_host = has_host;
            if (has_host) {
                u->host = o.host;
                u->host_len = o.host_len;
                if (o.has_port && o.port_len > 0) {
                    u->port = o.port;
                    u->port_len = o.port_len;
                }
            }
            if (!opaque) {
                u->path = o.path;
                u->path_len = o.path_len;
                if (q && (rc = set_query(u, out, err, q, qlen)))
                    return rc;
            }
            /* URI::LDAP and URI::MailTo check after it */
            return scheme_checks(s, sl, t, tn, plen, opaque, out, err);
        }
    }
    const uint8_t *q;
    size_t qlen;
    if (relative_ref_valid(s, n, &q, &qlen)) /* a URI::Generic: not an HTTP URI */
        return q ? set_query(u, out, err, q, qlen) : NH_OK;
    return fail_quoted(out, err, "bad URI (is not URI?): ", s, n, 0);
}
