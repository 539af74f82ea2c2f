/* Strict mode (cfg.strict, off by default) is not MRI: for a parser in front
 * of a proxy or a cache, it fails with Net::HTTPBadResponse where RFC 9112
 * says a recipient must reject a message or may treat it as invalid, and
 * frames bodies as RFC 9112 section 6.3 does.  Checked before MRI's own
 * processing, which then sees only well-formed input:
 *   - every line of the head, chunk-size line and trailer line ends in CRLF;
 *     a CR anywhere else (bare CR) or a lone LF is rejected
 *   - status line: "HTTP/" DIGIT "." DIGIT SP 3DIGIT [SP reason-phrase],
 *     the reason without control characters other than HTAB
 *   - field lines: a token, the colon right after it (no whitespace before
 *     the colon), a value without control characters other than HTAB (so no
 *     NUL); a line that starts with whitespace (obs-fold, or whitespace
 *     before the first field) is rejected; the head must end with an empty
 *     line before the stream ends
 *   - framing (when a body is read): Transfer-Encoding with Content-Length,
 *     Transfer-Encoding in a response older than HTTP/1.1, any transfer
 *     coding but a single "chunked" (others are not implemented), and a
 *     Content-Length that is not one decimal number (a list of identical
 *     numbers is that number; different ones are rejected) are rejected;
 *     Content-Range does not frame the body
 *   - chunked: the size is 1*HEXDIG below 2^64 right at the line's start,
 *     followed only by whitespace and chunk extensions; chunk data must be
 *     followed by CRLF; trailer lines are field lines
 *   - a body cut short by the end of the stream (Content-Length) is an
 *     EOFError rather than a short body */
#include "response.h"

static int is_tchar(uint8_t c) /* RFC 9110 token character */
{
    if (is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}
static int is_ows(uint8_t c)
{
    return c == ' ' || c == '\t';
}
static int is_ctl(uint8_t c) /* a control character other than HTAB */
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}
int nh_resp_strict_fail(feed *f, const char *what)
{
    f->msg->len = 0;
    f->err->cls = NH_E_BAD_RESPONSE;
    if (nh_put_str(f->msg, what) || nh_put_str(f->msg, " (strict)"))
        return NH_NOMEM;
    return NH_ERROR;
}
/* A line read with its "\n" must end in CRLF and hold no other CR.  Returns
 * the length without CRLF, or -1 after failing. */
long nh_resp_strict_crlf(feed *f, const uint8_t *s, size_t n, int *rc)
{
    if (n < 2 || s[n - 1] != '\n' || s[n - 2] != '\r') {
        *rc = nh_resp_strict_fail(f, n && s[n - 1] == '\n' ? "line ends in a bare LF" : "line without CRLF");
        return -1;
    }
    if (memchr(s, '\r', n - 2)) {
        *rc = nh_resp_strict_fail(f, "bare CR");
        return -1;
    }
    return (long)(n - 2);
}
/* "HTTP/" DIGIT "." DIGIT SP 3DIGIT [SP reason-phrase] */
int nh_resp_strict_status(feed *f, const uint8_t *s, size_t n)
{
    int rc = NH_OK;
    long m = nh_resp_strict_crlf(f, s, n, &rc);
    if (m < 0)
        return rc;
    if (m < 12 || memcmp(s, "HTTP/", 5) != 0 || !is_digit(s[5]) || s[6] != '.' || !is_digit(s[7]) ||
        s[8] != ' ' || !is_digit(s[9]) || !is_digit(s[10]) || !is_digit(s[11]) || (m > 12 && s[12] != ' '))
        return nh_resp_strict_fail(f, "malformed status line");
    for (long i = 13; i < m; i++)
        if (is_ctl(s[i]))
            return nh_resp_strict_fail(f, "control character in the reason phrase");
    return NH_OK;
}
/* field-name ":" OWS field-value OWS, of m bytes (CRLF already removed). */
int nh_resp_strict_field(feed *f, const uint8_t *s, size_t m, int pending)
{
    if (s[0] == ' ' || s[0] == '\t')
        return nh_resp_strict_fail(f, pending ? "obs-fold in a header field" : "whitespace before the first header field");
    size_t i = 0;
    while (i < m && is_tchar(s[i]))
        i++;
    if (i == m || s[i] != ':') {
        if (!memchr(s + i, ':', m - i))
            return nh_resp_strict_fail(f, "header field without a colon");
        size_t k = i;
        while (k < m && is_ows(s[k]))
            k++;
        if (k > i && k < m && s[k] == ':')
            return nh_resp_strict_fail(f, "whitespace before the colon of a header field");
        return nh_resp_strict_fail(f, "invalid character in a header field name");
    }
    if (i == 0)
        return nh_resp_strict_fail(f, "empty header field name");
    for (i++; i < m; i++)
        if (is_ctl(s[i]))
            return nh_resp_strict_fail(f, s[i] ? "control character in a header field value"
                                       : "NUL in a header field value");
    return NH_OK;
}
/* The next element of a comma-separated list (RFC 9110 section 5.6.1) from
 * *i: [*a, *b) without surrounding whitespace, possibly empty.  0 when the
 * list is done. */
static int list_next(const uint8_t *s, size_t n, size_t *i, size_t *a, size_t *b)
{
    if (*i > n)
        return 0;
    size_t e = *i;
    while (e < n && s[e] != ',')
        e++;
    *a = *i;
    *b = e;
    while (*a < *b && is_ows(s[*a]))
        (*a)++;
    while (*b > *a && is_ows(s[*b - 1]))
        (*b)--;
    *i = e + 1;
    return 1;
}
/* Transfer-Encoding: chunked, once, and nothing else (other codings are
 * not implemented, and a name MRI would read as chunked, "%chunked" say, is
 * one of them). */
static int strict_codings(feed *f, const uint8_t *s, size_t n)
{
    int nchunked = 0, last_chunked = 0, other = 0;
    size_t i = 0, a, b;
    while (list_next(s, n, &i, &a, &b)) {
        if (a == b)
            continue; /* empty elements do not count */
        size_t k = a;
        while (k < b && is_tchar(s[k]))
            k++;
        last_chunked = ascii_ieq(s + a, k - a, "chunked");
        if (last_chunked && k < b)
            return nh_resp_strict_fail(f, "chunked with parameters");
        nchunked += last_chunked;
        other |= !last_chunked;
    }
    if (nchunked > 1)
        return nh_resp_strict_fail(f, "chunked applied more than once");
    if (nchunked && !last_chunked)
        return nh_resp_strict_fail(f, "chunked is not the final transfer coding");
    if (other || !nchunked)
        return nh_resp_strict_fail(f, "unsupported transfer coding");
    return NH_OK;
}
/* Content-Length: one decimal number, or a list of the same number. */
static int strict_length(feed *f, const uint8_t *s, size_t n, uint64_t *len)
{
    int any = 0;
    uint64_t v = 0;
    size_t i = 0, a, b;
    while (list_next(s, n, &i, &a, &b)) {
        if (a == b)
            return nh_resp_strict_fail(f, "invalid Content-Length");
        for (size_t k = a; k < b; k++)
            if (!is_digit(s[k]))
                return nh_resp_strict_fail(f, "invalid Content-Length");
        const uint8_t *d = s + a;
        size_t dn = b - a;
        digits(&d, &dn);
        uint64_t x = dec_u64(d, dn);
        if (x == UINT64_MAX)
            return nh_resp_strict_fail(f, "Content-Length too large");
        if (any && x != v)
            return nh_resp_strict_fail(f, "conflicting Content-Length values");
        v = x;
        any = 1;
    }
    *len = v;
    return NH_OK;
}
/* RFC 9112 section 6.3, for a response whose body is read. */
int nh_resp_strict_framing(feed *f)
{
    nh_resp *p = f->p;
    long te = nh_resp_field(p, "transfer-encoding"), cl = nh_resp_field(p, "content-length");
    int rc;
    if (te >= 0) {
        if (cl >= 0)
            return nh_resp_strict_fail(f, "Transfer-Encoding with Content-Length");
        /* the version is DIGIT "." DIGIT here */
        if (p->st.data[0] < '1' || (p->st.data[0] == '1' && p->st.data[2] == '0'))
            return nh_resp_strict_fail(f, "Transfer-Encoding in a response before HTTP/1.1");
        if (nh_resp_joined(p, te))
            return NH_NOMEM;
        if ((rc = strict_codings(f, p->tmp.data, p->tmp.len)))
            return rc;
        p->state = ST_CH_SIZE;
        return NH_OK;
    }
    if (cl >= 0) {
        if (nh_resp_joined(p, cl))
            return NH_NOMEM;
        if ((rc = strict_length(f, p->tmp.data, p->tmp.len, &p->remaining)))
            return rc;
        p->state = ST_LENGTH;
        return p->remaining ? NH_OK : nh_resp_message_end(f);
    }
    p->state = ST_EOF;
    return NH_OK;
}
/* chunk-size line: the first hex run ("wrong chunk size line" without one). */
int nh_resp_strict_chunk_size(feed *f, const uint8_t *s, size_t n)
{
    int rc = NH_OK;
    long m = nh_resp_strict_crlf(f, s, n, &rc);
    if (m < 0)
        return rc;
    long i = 0;
    while (i < m && s[i] == '0')
        i++;
    long d = i;
    while (i < m && nh_hex_val(s[i]) >= 0)
        i++;
    if (i == 0)
        return nh_resp_strict_fail(f, "malformed chunk size line");
    if (i - d > 16)
        return nh_resp_strict_fail(f, "chunk size too large");
    while (i < m && is_ows(s[i]))
        i++;
    if (i < m && s[i] != ';')
        return nh_resp_strict_fail(f, "malformed chunk size line");
    for (; i < m; i++)
        if (is_ctl(s[i]))
            return nh_resp_strict_fail(f, "control character in a chunk extension");
    return NH_OK;
}
