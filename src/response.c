/* Net::HTTPResponse.read_new followed by reading_body, over a byte stream
 * fed in pieces of any size: what MRI does when it reads a response from a
 * Net::BufferedIO (net/http/response.rb, net/protocol.rb; net-http 0.9.1 for
 * Ruby 4.0 and 0.6.0 for Ruby 3.4, identical in everything used here).
 *
 * The parser is a state machine over the operations MRI performs on the
 * socket, so that feeding the same bytes split anywhere gives the same result:
 *
 *   read_status_line      sock.readline (EOFError at EOF), chop, the status regex
 *   each_response_header  readuntil("\n", true) (EOF ends the block), sub(/\s+\z/, ''),
 *                         continuation lines, strip.split(/\s*:\s*\/, 2), add_field
 *                         (a field is added when the next field line is read)
 *   read_body_0           inflater, then chunked? / content_length / range_length /
 *                         read_all, with the EOF rules of BufferedIO#read
 *   read_chunked          readline, the first hex run, read len, read 2 (any 2
 *                         bytes, in an ensure), trailer lines until an empty one
 *   inflater              (decode_content) deletes content-encoding, inflates
 *                         what BufferedIO hands over, piece by piece, keeping
 *                         only what Ruby's zlib yields (see "What Ruby's zlib
 *                         yields"); a finish error is dropped except on the
 *                         read_all path (read_body_0 leaves the block with
 *                         `return` elsewhere), and content-length is rewritten
 *                         after a successful finish
 *
 * Header names and values are binary strings in MRI: ASCII-only case mapping,
 * \s is [\t\n\v\f\r ], String#strip also removes NUL.
 *
 * Strict mode (cfg.strict, off by default) is not MRI: for a parser in front
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
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "inflate.h"

/* CODE_TO_OBJ with each class's HAS_BODY (the same in net-http 0.9.1 and
 * 0.6.0, printed from both). */
typedef struct code_class {
    char code[4];
    const char *name;
    uint8_t has_body;
} code_class;

static const code_class CODES[] = {
    {"100", "Net::HTTPContinue", 0},
    {"101", "Net::HTTPSwitchProtocol", 0},
    {"102", "Net::HTTPProcessing", 0},
    {"103", "Net::HTTPEarlyHints", 0},
    {"200", "Net::HTTPOK", 1},
    {"201", "Net::HTTPCreated", 1},
    {"202", "Net::HTTPAccepted", 1},
    {"203", "Net::HTTPNonAuthoritativeInformation", 1},
    {"204", "Net::HTTPNoContent", 0},
    {"205", "Net::HTTPResetContent", 0},
    {"206", "Net::HTTPPartialContent", 1},
    {"207", "Net::HTTPMultiStatus", 1},
    {"208", "Net::HTTPAlreadyReported", 1},
    {"226", "Net::HTTPIMUsed", 1},
    {"300", "Net::HTTPMultipleChoices", 1},
    {"301", "Net::HTTPMovedPermanently", 1},
    {"302", "Net::HTTPFound", 1},
    {"303", "Net::HTTPSeeOther", 1},
    {"304", "Net::HTTPNotModified", 0},
    {"305", "Net::HTTPUseProxy", 0},
    {"307", "Net::HTTPTemporaryRedirect", 1},
    {"308", "Net::HTTPPermanentRedirect", 1},
    {"400", "Net::HTTPBadRequest", 1},
    {"401", "Net::HTTPUnauthorized", 1},
    {"402", "Net::HTTPPaymentRequired", 1},
    {"403", "Net::HTTPForbidden", 1},
    {"404", "Net::HTTPNotFound", 1},
    {"405", "Net::HTTPMethodNotAllowed", 1},
    {"406", "Net::HTTPNotAcceptable", 1},
    {"407", "Net::HTTPProxyAuthenticationRequired", 1},
    {"408", "Net::HTTPRequestTimeout", 1},
    {"409", "Net::HTTPConflict", 1},
    {"410", "Net::HTTPGone", 1},
    {"411", "Net::HTTPLengthRequired", 1},
    {"412", "Net::HTTPPreconditionFailed", 1},
    {"413", "Net::HTTPPayloadTooLarge", 1},
    {"414", "Net::HTTPURITooLong", 1},
    {"415", "Net::HTTPUnsupportedMediaType", 1},
    {"416", "Net::HTTPRangeNotSatisfiable", 1},
    {"417", "Net::HTTPExpectationFailed", 1},
    {"421", "Net::HTTPMisdirectedRequest", 1},
    {"422", "Net::HTTPUnprocessableEntity", 1},
    {"423", "Net::HTTPLocked", 1},
    {"424", "Net::HTTPFailedDependency", 1},
    {"426", "Net::HTTPUpgradeRequired", 1},
    {"428", "Net::HTTPPreconditionRequired", 1},
    {"429", "Net::HTTPTooManyRequests", 1},
    {"431", "Net::HTTPRequestHeaderFieldsTooLarge", 1},
    {"451", "Net::HTTPUnavailableForLegalReasons", 1},
    {"500", "Net::HTTPInternalServerError", 1},
    {"501", "Net::HTTPNotImplemented", 1},
    {"502", "Net::HTTPBadGateway", 1},
    {"503", "Net::HTTPServiceUnavailable", 1},
    {"504", "Net::HTTPGatewayTimeout", 1},
    {"505", "Net::HTTPVersionNotSupported", 1},
    {"506", "Net::HTTPVariantAlsoNegotiates", 1},
    {"507", "Net::HTTPInsufficientStorage", 1},
    {"508", "Net::HTTPLoopDetected", 1},
    {"510", "Net::HTTPNotExtended", 1},
    {"511", "Net::HTTPNetworkAuthenticationRequired", 1},
    {"1xx", "Net::HTTPInformation", 0},
};

/* CODE_CLASS_TO_OBJ by the first digit, then Net::HTTPUnknownResponse. */
static const code_class CODE_CLASSES[] = {
    {"1", "Net::HTTPInformation", 0},
    {"2", "Net::HTTPSuccess", 1},
    {"3", "Net::HTTPRedirection", 1},
    {"4", "Net::HTTPClientError", 1},
    {"5", "Net::HTTPServerError", 1},
};
static const code_class UNKNOWN_CLASS = {"", "Net::HTTPUnknownResponse", 1};

static const code_class *response_class(const uint8_t code[3])
{
    for (size_t i = 0; i < sizeof CODES / sizeof CODES[0]; i++)
        if (memcmp(CODES[i].code, code, 3) == 0)
            return &CODES[i];
    if (code[0] >= '1' && code[0] <= '5')
        return &CODE_CLASSES[code[0] - '1'];
    return &UNKNOWN_CLASS;
}

enum {
    ST_STATUS,     /* reading the status line */
    ST_HEADERS,    /* reading header lines */
    ST_LENGTH,     /* Content-Length body: EOF ends it silently */
    ST_RANGE,      /* Content-Range body: EOF is an EOFError */
    ST_EOF,        /* read_all */
    ST_CH_SIZE,    /* chunk-size line */
    ST_CH_DATA,    /* chunk data */
    ST_CH_CRLF,    /* the 2 bytes after chunk data */
    ST_CH_TRAILER, /* trailer lines */
    ST_DONE,
    ST_FAILED
};

struct nh_resp {
    nh_resp_config cfg;
    int state;
    nh_buf line;          /* the unfinished line */
    uint64_t head_bytes;  /* bytes of the head's finished lines */
    /* status line */
    nh_buf st;            /* version bytes, then message bytes */
    size_t ver_len, msg_len;
    int has_ver, has_msg;
    uint8_t code[3];
    const code_class *cls;
    /* header fields */
    nh_headers hdr;
    int pending;          /* key/val read but not yet added */
    nh_buf key, val;
    uint64_t nlines;
    int body_exist;
    int changed;          /* decoding changed the fields */
    int coding;           /* what the inflater does: NH_HEAD_INFLATE,
                           * NH_HEAD_DROP_ENCODING or 0 (content_coding) */
    /* body */
    uint64_t remaining;
    uint64_t body_bytes;
    int crlf_left;
    uint64_t tl_len;      /* trailer line: bytes before "\n" so far */
    int tl_cr;            /* ... and whether the first was "\r" */
    /* content decoding */
    int decoding;
    uint64_t fed;
    nh_inflate *z;        /* allocated on first use (45 KiB), kept */
    int z_err;            /* chunked: an inflate error waits for `read 2` */
    int z_err_cls;
    uint64_t z_err_at;    /* ... which reads from here: the end of the piece */
    uint64_t zpiece_end;  /* stream position where the current piece ends */
    nh_buf z_msg;
    nh_buf data;          /* decoded bytes: [0, zemit) given out by this call, then
                           * the ones Ruby's zlib has not yielded yet */
    size_t zemit;
    int zfull;            /* zlib's buffer is full: yielded when a call begins */
    int zcall;            /* a piece (zlib call) has begun and not ended */
    int zheld;            /* zbyte is held back: maybe the piece's last */
    uint8_t zbyte;
    uint64_t base;        /* stream position of this call's first byte */
    nh_buf tmp;
    /* a failure is repeated until reset */
    int fail_cls;
    nh_buf fail_msg;
};

typedef struct feed {
    nh_resp *p;
    const uint8_t *in;
    size_t n, i;
    nh_buf *ev, *msg;
    nh_error *err;
} feed;

static int is_space(uint8_t c) /* \s in a binary regexp */
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

static int is_word(uint8_t c) /* \w in a binary regexp */
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static uint8_t lower(uint8_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

void nh_resp_config_default(nh_resp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->profile = NH_PROFILE_40;
    cfg->body_allowed = 1;
    cfg->max_header_bytes = NH_MAX_HEADER_BYTES;
    cfg->max_fields = NH_MAX_HEADER_FIELDS;
    cfg->max_body_bytes = NH_UNLIMITED;
    cfg->max_inflated_bytes = NH_UNLIMITED;
}

nh_resp *nh_resp_new(void)
{
    nh_resp *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    nh_resp_config cfg;
    nh_resp_config_default(&cfg);
    nh_headers_init(&p->hdr, cfg.profile, 1);
    nh_resp_reset(p, &cfg);
    return p;
}

void nh_resp_free(nh_resp *p)
{
    if (!p)
        return;
    free(p->z);
    nh_buf *bs[] = {&p->line, &p->st, &p->key, &p->val, &p->z_msg, &p->data, &p->tmp, &p->fail_msg};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        nh_buf_free(bs[i]);
    nh_headers_free(&p->hdr);
    free(p);
}

/* Forgets the current message's head (status line and fields). */
static void head_reset(nh_resp *p)
{
    p->line.len = 0;
    p->head_bytes = 0;
    p->st.len = 0;
    p->ver_len = p->msg_len = 0;
    p->has_ver = p->has_msg = 0;
    p->cls = NULL;
    nh_headers_reset(&p->hdr);
    p->hdr.profile = p->cfg.profile;
    p->pending = 0;
    p->key.len = p->val.len = 0;
    p->nlines = 0;
    p->coding = 0;
}

void nh_resp_reset(nh_resp *p, const nh_resp_config *cfg)
{
    p->cfg = *cfg;
    head_reset(p);
    p->state = ST_STATUS;
    p->body_exist = 0;
    p->changed = 0;
    p->remaining = p->body_bytes = 0;
    p->crlf_left = 0;
    p->tl_len = 0;
    p->tl_cr = 0;
    p->decoding = 0;
    p->fed = 0;
    p->z_err = 0;
    p->z_msg.len = 0;
    p->data.len = 0;
    p->zemit = 0;
    p->zfull = p->zcall = p->zheld = 0;
    p->fail_cls = 0;
    p->fail_msg.len = 0;
}

const uint8_t *nh_resp_data(const nh_resp *p)
{
    return p->data.data;
}

int nh_resp_done(const nh_resp *p)
{
    return p->state == ST_DONE;
}

/* ---- failing ---- */

static int fail(feed *f, int cls, const char *msg)
{
    return nh_fail(f->msg, f->err, cls, msg);
}

/* Fails with prefix + the bytes s[0..n) (as Ruby's "#{...}" interpolates them). */
static int fail_with(feed *f, int cls, const char *prefix, const uint8_t *s, size_t n)
{
    f->msg->len = 0;
    f->err->cls = cls;
    if (nh_put_str(f->msg, prefix) || nh_buf_append(f->msg, s, n))
        return NH_NOMEM;
    return NH_ERROR;
}

static int fail_limit(feed *f, const char *what, uint64_t limit)
{
    f->msg->len = 0;
    f->err->cls = NH_E_LIMIT;
    if (nh_put_str(f->msg, what) || nh_put_str(f->msg, " exceeds the limit of ") ||
        nh_put_uint(f->msg, limit) || nh_put_str(f->msg, " bytes"))
        return NH_NOMEM;
    return NH_ERROR;
}

static int fail_eof(feed *f)
{
    return fail(f, NH_E_EOF, "end of file reached");
}

/* ---- events ---- */

static uint8_t *w32(uint8_t *q, size_t v)
{
    q[0] = (uint8_t)v;
    q[1] = (uint8_t)(v >> 8);
    q[2] = (uint8_t)(v >> 16);
    q[3] = (uint8_t)(v >> 24);
    return q + 4;
}

/* Writes a string; ORs its bytes into *any. */
static uint8_t *wstr(uint8_t *q, const uint8_t *s, size_t n, uint8_t *any)
{
    q = w32(q, n);
    uint8_t a = 0;
    for (size_t i = 0; i < n; i++)
        a |= q[i] = s[i];
    *any |= a;
    return q + n;
}

/* Appends a head event: the response as it stands now. */
static int put_head(feed *f, int type)
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
    uint8_t any = 0;
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
    if (!(any & 0x80))
        f->ev->data[f->ev->len + 5] |= NH_HEAD_ASCII;
    f->ev->len += size;
    return NH_OK;
}

static int put_body(feed *f, int src, size_t off, size_t len)
{
    if (len == 0)
        return NH_OK;
    if (nh_buf_putc(f->ev, NH_EV_BODY) || nh_buf_putc(f->ev, (uint8_t)src) || nh_put_u32(f->ev, off) ||
        nh_put_u32(f->ev, len))
        return NH_NOMEM;
    return NH_OK;
}

/* ---- fields ---- */

static long field(const nh_resp *p, const char *lname)
{
    return nh_headers_find(&p->hdr, (const uint8_t *)lname, strlen(lname));
}

/* self[name]: the values joined with ", ", into p->tmp. */
static int joined(nh_resp *p, long fi)
{
    p->tmp.len = 0;
    return nh_headers_join(&p->hdr, fi, &p->tmp);
}

/* add_field(key, val) for the field read last. */
static int add_field(feed *f)
{
    nh_resp *p = f->p;
    p->pending = 0;
    /* a value never holds "\n" (lines end there), "\r" it can */
    if (p->val.len && memchr(p->val.data, '\r', p->val.len))
        return fail(f, NH_E_ARGUMENT, "header field value cannot include CR/LF");
    if (++p->nlines > p->cfg.max_fields) {
        f->msg->len = 0;
        f->err->cls = NH_E_LIMIT;
        if (nh_put_str(f->msg, "more than ") || nh_put_uint(f->msg, p->cfg.max_fields) ||
            nh_put_str(f->msg, " header fields"))
            return NH_NOMEM;
        return NH_ERROR;
    }
    p->tmp.len = 0;
    if (nh_ascii_downcase(&p->tmp, p->key.data, p->key.len))
        return NH_NOMEM;
    long fi = nh_headers_find(&p->hdr, p->tmp.data, p->tmp.len);
    if (fi < 0 && (fi = nh_headers_set(&p->hdr, p->tmp.data, p->tmp.len)) < 0)
        return NH_NOMEM;
    return nh_headers_push(&p->hdr, fi, p->val.len ? p->val.data : (const uint8_t *)"", p->val.len);
}

/* ---- lines ---- */

enum { LINE_HEAD = 1, LINE_CHUNK = 0, LINE_TRAILER = 2 };

/* Reads through the next "\n" (readuntil).  1: the line (with its "\n") is
 * at *s; 0: the input ended first, its bytes were kept in p->line.  Head
 * lines count towards max_header_bytes; other lines are limited to it each. */
static int read_line(feed *f, int kind, const uint8_t **s, size_t *len)
{
    nh_resp *p = f->p;
    const uint8_t *a = f->in + f->i;
    size_t avail = f->n - f->i;
    const uint8_t *nl = memchr(a, '\n', avail);
    size_t take = nl ? (size_t)(nl - a) + 1 : avail;
    int head = kind == LINE_HEAD;
    uint64_t total = (head ? p->head_bytes : 0) + p->line.len + take;
    if (total > p->cfg.max_header_bytes)
        return fail_limit(f, head ? "the response head" : kind == LINE_TRAILER ? "a trailer line" : "a chunk-size line",
                          p->cfg.max_header_bytes);
    f->i += take;
    if (!nl || p->line.len) {
        if (nh_buf_append(&p->line, a, take))
            return NH_NOMEM;
        if (!nl)
            return 0;
        *s = p->line.data;
        *len = p->line.len;
    } else {
        *s = a;
        *len = take;
    }
    if (head)
        p->head_bytes += *len;
    return 1;
}

/* ---- strict mode ---- */

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

static int strict_fail(feed *f, const char *what)
{
    f->msg->len = 0;
    f->err->cls = NH_E_BAD_RESPONSE;
    if (nh_put_str(f->msg, what) || nh_put_str(f->msg, " (strict)"))
        return NH_NOMEM;
    return NH_ERROR;
}

/* A line read with its "\n" must end in CRLF and hold no other CR.  Returns
 * the length without CRLF, or -1 after failing. */
static long strict_crlf(feed *f, const uint8_t *s, size_t n, int *rc)
{
    if (n < 2 || s[n - 1] != '\n' || s[n - 2] != '\r') {
        *rc = strict_fail(f, n && s[n - 1] == '\n' ? "line ends in a bare LF" : "line without CRLF");
        return -1;
    }
    if (memchr(s, '\r', n - 2)) {
        *rc = strict_fail(f, "bare CR");
        return -1;
    }
    return (long)(n - 2);
}

/* "HTTP/" DIGIT "." DIGIT SP 3DIGIT [SP reason-phrase] */
static int strict_status(feed *f, const uint8_t *s, size_t n)
{
    int rc = NH_OK;
    long m = strict_crlf(f, s, n, &rc);
    if (m < 0)
        return rc;
    if (m < 12 || memcmp(s, "HTTP/", 5) != 0 || !is_digit(s[5]) || s[6] != '.' || !is_digit(s[7]) ||
        s[8] != ' ' || !is_digit(s[9]) || !is_digit(s[10]) || !is_digit(s[11]) || (m > 12 && s[12] != ' '))
        return strict_fail(f, "malformed status line");
    for (long i = 13; i < m; i++)
        if (is_ctl(s[i]))
            return strict_fail(f, "control character in the reason phrase");
    return NH_OK;
}

/* field-name ":" OWS field-value OWS, of m bytes (CRLF already removed). */
static int strict_field(feed *f, const uint8_t *s, size_t m, int pending)
{
    if (s[0] == ' ' || s[0] == '\t')
        return strict_fail(f, pending ? "obs-fold in a header field" : "whitespace before the first header field");
    size_t i = 0;
    while (i < m && is_tchar(s[i]))
        i++;
    if (i == m || s[i] != ':') {
        if (!memchr(s + i, ':', m - i))
            return strict_fail(f, "header field without a colon");
        size_t k = i;
        while (k < m && is_ows(s[k]))
            k++;
        if (k > i && k < m && s[k] == ':')
            return strict_fail(f, "whitespace before the colon of a header field");
        return strict_fail(f, "invalid character in a header field name");
    }
    if (i == 0)
        return strict_fail(f, "empty header field name");
    for (i++; i < m; i++)
        if (is_ctl(s[i]))
            return strict_fail(f, s[i] ? "control character in a header field value"
                                       : "NUL in a header field value");
    return NH_OK;
}

/* String#chop of a line read with readuntil("\n"). */
static size_t chop(const uint8_t *s, size_t n)
{
    if (n && s[n - 1] == '\n') {
        n--;
        if (n && s[n - 1] == '\r')
            n--;
    } else if (n) {
        n--;
    }
    return n;
}

/* /\AHTTP(?:\/(\d+\.\d+))?\s+(\d\d\d)(?:\s+(.*))?\z/in */
static int status_line(feed *f, const uint8_t *s, size_t n)
{
    nh_resp *p = f->p;
    if (p->cfg.strict) {
        int rc = strict_status(f, s, n);
        if (rc)
            return rc;
    }
    n = chop(s, n);
    size_t i = 4, vs = 0, ve = 0, ms = 0;
    int has_ver = 0, has_msg = 0;
    if (n < 4 || lower(s[0]) != 'h' || lower(s[1]) != 't' || lower(s[2]) != 't' || lower(s[3]) != 'p')
        goto bad;
    if (i < n && s[i] == '/') {
        size_t j = i + 1;
        while (j < n && is_digit(s[j]))
            j++;
        if (j == i + 1 || j >= n || s[j] != '.')
            goto bad;
        size_t k = j + 1;
        while (k < n && is_digit(s[k]))
            k++;
        if (k == j + 1)
            goto bad;
        has_ver = 1;
        vs = i + 1;
        ve = k;
        i = k;
    }
    if (i >= n || !is_space(s[i]))
        goto bad;
    while (i < n && is_space(s[i]))
        i++;
    if (n - i < 3 || !is_digit(s[i]) || !is_digit(s[i + 1]) || !is_digit(s[i + 2]))
        goto bad;
    memcpy(p->code, s + i, 3);
    i += 3;
    if (i < n) {
        if (!is_space(s[i]))
            goto bad;
        while (i < n && is_space(s[i]))
            i++;
        has_msg = 1;
        ms = i;
    }
    p->st.len = 0;
    if (nh_buf_append(&p->st, s + vs, ve - vs) || nh_buf_append(&p->st, s + ms, has_msg ? n - ms : 0))
        return NH_NOMEM;
    p->ver_len = ve - vs;
    p->msg_len = has_msg ? n - ms : 0;
    p->has_ver = has_ver;
    p->has_msg = has_msg;
    p->cls = response_class(p->code);
    p->state = ST_HEADERS;
    return NH_OK;
bad:
    f->msg->len = 0;
    f->err->cls = NH_E_BAD_RESPONSE;
    if (nh_put_str(f->msg, "wrong status line: ") || nh_dump(f->msg, s, n, 0))
        return NH_NOMEM;
    return NH_ERROR;
}

static int end_of_head(feed *f);

/* One line of each_response_header (with its "\n", or the last bytes at EOF). */
static int header_line(feed *f, const uint8_t *s, size_t n)
{
    nh_resp *p = f->p;
    if (p->cfg.strict) {
        int rc = NH_OK;
        long m = strict_crlf(f, s, n, &rc);
        if (m < 0)
            return rc;
        if (m > 0 && (rc = strict_field(f, s, (size_t)m, p->pending)))
            return rc;
    }
    while (n && is_space(s[n - 1])) /* sub(/\s+\z/, '') */
        n--;
    if (n == 0)
        return end_of_head(f);
    size_t a, b;
    nh_strip(s, n, &a, &b);
    if ((s[0] == ' ' || s[0] == '\t') && p->pending) {
        if (p->val.len && nh_buf_putc(&p->val, ' '))
            return NH_NOMEM;
        return nh_buf_append(&p->val, s + a, b - a);
    }
    if (p->pending) {
        int rc = add_field(f);
        if (rc)
            return rc;
    }
    const uint8_t *colon = b > a ? memchr(s + a, ':', b - a) : NULL;
    if (!colon)
        return fail(f, NH_E_BAD_RESPONSE, "wrong header line format");
    size_t c = (size_t)(colon - s), k = c, v = c + 1;
    while (k > a && is_space(s[k - 1]))
        k--;
    while (v < b && is_space(s[v]))
        v++;
    p->key.len = p->val.len = 0;
    if (nh_buf_append(&p->key, s + a, k - a) || nh_buf_append(&p->val, s + v, b - v))
        return NH_NOMEM;
    p->pending = 1;
    return NH_OK;
}

/* ---- framing ---- */

/* A decimal digit run with leading zeros dropped. */
static void digits(const uint8_t **s, size_t *n)
{
    while (*n > 1 && **s == '0') {
        (*s)++;
        (*n)--;
    }
}

static uint64_t dec_u64(const uint8_t *s, size_t n) /* saturating */
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return UINT64_MAX;
        v = v * 10 + d;
    }
    return v;
}

/* Compares decimal digit runs without leading zeros. */
static int dec_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    if (an != bn)
        return an < bn ? -1 : 1;
    int c = memcmp(a, b, an);
    return c < 0 ? -1 : c > 0;
}

/* a - b for a >= b (no leading zeros), saturating at UINT64_MAX. */
static uint64_t dec_sub(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    /* the difference's digits, least significant first */
    uint8_t d[64];
    size_t nd = 0;
    int borrow = 0;
    for (size_t i = 0; i < an; i++) {
        int x = a[an - 1 - i] - '0' - borrow - (i < bn ? b[bn - 1 - i] - '0' : 0);
        borrow = x < 0;
        if (borrow)
            x += 10;
        if (nd < sizeof d)
            d[nd++] = (uint8_t)x;
        else if (x)
            return UINT64_MAX;
    }
    uint64_t v = 0;
    for (size_t i = nd; i-- > 0;) {
        if (v > (UINT64_MAX - d[i]) / 10)
            return UINT64_MAX;
        v = v * 10 + d[i];
    }
    return v;
}

/* chunked?: /(?:\A|[^\-\w])chunked(?![\-\w])/i on self['Transfer-Encoding'] */
static int is_chunked(const uint8_t *s, size_t n)
{
    static const char w[] = "chunked";
    for (size_t i = 0; i + 7 <= n; i++) {
        if (i > 0 && (s[i - 1] == '-' || is_word(s[i - 1])))
            continue;
        size_t k = 0;
        while (k < 7 && lower(s[i + k]) == (uint8_t)w[k])
            k++;
        if (k < 7)
            continue;
        if (i + 7 < n && (s[i + 7] == '-' || is_word(s[i + 7])))
            continue;
        return 1;
    }
    return 0;
}

static int ascii_ieq(const uint8_t *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != (uint8_t)w[i])
            return 0;
    return 1;
}

static int message_end(feed *f);

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
            return strict_fail(f, "chunked with parameters");
        nchunked += last_chunked;
        other |= !last_chunked;
    }
    if (nchunked > 1)
        return strict_fail(f, "chunked applied more than once");
    if (nchunked && !last_chunked)
        return strict_fail(f, "chunked is not the final transfer coding");
    if (other || !nchunked)
        return strict_fail(f, "unsupported transfer coding");
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
            return strict_fail(f, "invalid Content-Length");
        for (size_t k = a; k < b; k++)
            if (!is_digit(s[k]))
                return strict_fail(f, "invalid Content-Length");
        const uint8_t *d = s + a;
        size_t dn = b - a;
        digits(&d, &dn);
        uint64_t x = dec_u64(d, dn);
        if (x == UINT64_MAX)
            return strict_fail(f, "Content-Length too large");
        if (any && x != v)
            return strict_fail(f, "conflicting Content-Length values");
        v = x;
        any = 1;
    }
    *len = v;
    return NH_OK;
}

/* RFC 9112 section 6.3, for a response whose body is read. */
static int strict_framing(feed *f)
{
    nh_resp *p = f->p;
    long te = field(p, "transfer-encoding"), cl = field(p, "content-length");
    int rc;
    if (te >= 0) {
        if (cl >= 0)
            return strict_fail(f, "Transfer-Encoding with Content-Length");
        /* the version is DIGIT "." DIGIT here */
        if (p->st.data[0] < '1' || (p->st.data[0] == '1' && p->st.data[2] == '0'))
            return strict_fail(f, "Transfer-Encoding in a response before HTTP/1.1");
        if (joined(p, te))
            return NH_NOMEM;
        if ((rc = strict_codings(f, p->tmp.data, p->tmp.len)))
            return rc;
        p->state = ST_CH_SIZE;
        return NH_OK;
    }
    if (cl >= 0) {
        if (joined(p, cl))
            return NH_NOMEM;
        if ((rc = strict_length(f, p->tmp.data, p->tmp.len, &p->remaining)))
            return rc;
        p->state = ST_LENGTH;
        return p->remaining ? NH_OK : message_end(f);
    }
    p->state = ST_EOF;
    return NH_OK;
}

/* What Net::HTTPResponse#inflater will do with the head as read:
 *   return yield @socket unless @decode_content
 *   return yield @socket if self['content-range']
 *   v = self['content-encoding']
 *   case v&.downcase
 *   when 'deflate', 'gzip', 'x-gzip' then self.delete 'content-encoding'; inflate
 *   when 'none', 'identity' then self.delete 'content-encoding'
 * NH_HEAD_INFLATE, NH_HEAD_DROP_ENCODING or 0 (the head event carries it). */
static int content_coding(nh_resp *p, int *coding)
{
    long fi;
    *coding = 0;
    if (!p->cfg.decode || field(p, "content-range") >= 0 || (fi = field(p, "content-encoding")) < 0)
        return NH_OK;
    if (joined(p, fi))
        return NH_NOMEM;
    const uint8_t *v = p->tmp.data;
    size_t vn = p->tmp.len;
    if (ascii_ieq(v, vn, "deflate") || ascii_ieq(v, vn, "gzip") || ascii_ieq(v, vn, "x-gzip"))
        *coding = NH_HEAD_INFLATE;
    else if (ascii_ieq(v, vn, "none") || ascii_ieq(v, vn, "identity"))
        *coding = NH_HEAD_DROP_ENCODING;
    return NH_OK;
}

/* The inflater's choice (content_coding) and read_body_0's framing, once the head is read. */
static int start_body(feed *f)
{
    nh_resp *p = f->p;
    long fi;
    if (p->coding) {
        nh_headers_delete(&p->hdr, (const uint8_t *)"content-encoding", 16);
        p->changed = 1;
    }
    if (p->coding == NH_HEAD_INFLATE) {
        if (!p->z && !(p->z = malloc(sizeof *p->z)))
            return NH_NOMEM;
        nh_inflate_init(p->z, p->cfg.max_inflated_bytes == NH_UNLIMITED ? 0 : p->cfg.max_inflated_bytes);
        p->decoding = 1;
    }
    if (p->cfg.strict)
        return strict_framing(f);
    if ((fi = field(p, "transfer-encoding")) >= 0) {
        if (joined(p, fi))
            return NH_NOMEM;
        if (is_chunked(p->tmp.data, p->tmp.len)) {
            p->state = ST_CH_SIZE;
            return NH_OK;
        }
    }
    if ((fi = field(p, "content-length")) >= 0) {
        if (joined(p, fi))
            return NH_NOMEM;
        const uint8_t *s = p->tmp.data;
        size_t n = p->tmp.len, i = 0;
        while (i < n && !is_digit(s[i]))
            i++;
        if (i == n)
            return fail(f, NH_E_HEADER_SYNTAX, "wrong Content-Length format");
        size_t j = i;
        while (j < n && is_digit(s[j]))
            j++;
        p->remaining = dec_u64(s + i, j - i);
        p->state = ST_LENGTH;
        return p->remaining ? NH_OK : message_end(f);
    }
    if ((fi = field(p, "content-range")) >= 0) {
        /* %r<\A\s*(\w+)\s+(\d+)-(\d+)/(\d+|\*)> */
        if (joined(p, fi))
            return NH_NOMEM;
        const uint8_t *s = p->tmp.data;
        size_t n = p->tmp.len, i = 0;
        while (i < n && is_space(s[i]))
            i++;
        size_t us = i;
        while (i < n && is_word(s[i]))
            i++;
        size_t ue = i;
        if (ue == us || i >= n || !is_space(s[i]))
            goto bad_range;
        while (i < n && is_space(s[i]))
            i++;
        const uint8_t *a = s + i;
        size_t an = 0;
        while (i < n && is_digit(s[i]))
            i++, an++;
        if (!an || i >= n || s[i] != '-')
            goto bad_range;
        i++;
        const uint8_t *b = s + i;
        size_t bn = 0;
        while (i < n && is_digit(s[i]))
            i++, bn++;
        if (!bn || i >= n || s[i] != '/')
            goto bad_range;
        i++;
        if (i >= n || !(is_digit(s[i]) || s[i] == '*'))
            goto bad_range;
        if (!(ue - us == 5 && memcmp(s + us, "bytes", 5) == 0)) {
            p->state = ST_EOF; /* content_range is nil */
            return NH_OK;
        }
        digits(&a, &an);
        digits(&b, &bn);
        int c = dec_cmp(b, bn, a, an);
        if (c < 0) {
            /* r.end - r.begin + 1 <= 0: 0 reads nothing, below that
             * BufferedIO#read gets nil from rbuf_consume */
            if (dec_sub(a, an, b, bn) == 1) {
                p->state = ST_RANGE;
                p->remaining = 0;
                return message_end(f);
            }
            return fail(f, NH_E_NO_METHOD, "undefined method 'bytesize' for nil");
        }
        uint64_t d = dec_sub(b, bn, a, an);
        p->remaining = d == UINT64_MAX ? d : d + 1;
        p->state = ST_RANGE;
        return NH_OK;
    bad_range:
        return fail(f, NH_E_HEADER_SYNTAX, "wrong Content-Range format");
    }
    p->state = ST_EOF;
    return NH_OK;
}

static int end_of_head(feed *f)
{
    nh_resp *p = f->p;
    if (p->pending) {
        int rc = add_field(f);
        if (rc)
            return rc;
    }
    p->line.len = 0;
    if (p->cfg.skip_interim && p->code[0] == '1') {
        /* transport_request: read_new again while res is an HTTPInformation */
        p->body_exist = 0;
        int rc = put_head(f, NH_EV_INTERIM);
        if (rc)
            return rc;
        head_reset(p);
        p->state = ST_STATUS;
        return NH_OK;
    }
    p->body_exist = p->cfg.body_allowed && p->cls->has_body;
    int rc = content_coding(p, &p->coding);
    if (rc)
        return rc;
    rc = put_head(f, NH_EV_HEAD);
    if (rc)
        return rc;
    if (!p->body_exist)
        return message_end(f);
    return start_body(f);
}

/* ---- body ---- */

static int inflate_bytes(feed *f, const uint8_t *s, size_t n, uint64_t pos, int ends);

/* n body bytes at f->in + off; `ends`: they end the body or the chunk. */
static int body_bytes(feed *f, size_t off, size_t n, int ends)
{
    nh_resp *p = f->p;
    /* the bytes within the limit go first: an error in them comes first */
    uint64_t room = p->cfg.max_body_bytes - p->body_bytes;
    int over = n > room;
    size_t k = over ? (size_t)room : n;
    p->body_bytes += k;
    int rc = !p->decoding ? put_body(f, 0, off, k) : inflate_bytes(f, f->in + off, k, p->base + off, over ? 0 : ends);
    if (!rc && over)
        rc = fail_limit(f, "the response body", p->cfg.max_body_bytes);
    return rc;
}

/* What Ruby's zlib yields, and when.
 *
 * Inflater#inflate_adapter calls Zlib::Inflate#inflate(piece) { |out| ... }
 * once per piece that Net::BufferedIO#read hands over: the body split at the
 * stream's 16 KiB read boundaries (BufferedIO fills its buffer with
 * read_nonblock(16384); over a StringIO, or any stream that has the bytes
 * ready, those fall at multiples of 16384 from the stream's start) and, for
 * chunked bodies, at every chunk.  With a block, zlib does not yield as it
 * goes: output collects in a buffer of 16384 bytes, which is yielded
 *   - when zlib needs room for more output and input is left in the call,
 *   - at the start of a later call (with input) that finds it full,
 *   - in full when the stream ends.
 * Output still held when the body ends short of the stream's end is never
 * yielded (Inflater#finish, called without a block, drops it).
 *
 * zlib decodes the next symbol before it finds the buffer full, so output
 * past a full buffer that only the last byte of a call makes possible is not
 * yielded in that call: each piece's last byte is fed apart, and held back
 * until the piece is known to end there. */
#define ZLIB_YIELD 16384u
#define READ_SIZE 16384u

static int give(feed *f, size_t n)
{
    nh_resp *p = f->p;
    if (!n)
        return NH_OK;
    size_t off = p->zemit;
    p->zemit += n;
    return put_body(f, 1, off, n);
}

static int zfeed(feed *f, const uint8_t *s, size_t n, int last)
{
    nh_resp *p = f->p;
    int rc;
    if (!n || p->z_err)
        return NH_OK;
    if (!p->zcall) {
        /* a call begins: a full buffer goes out first */
        p->zcall = 1;
        if (p->zfull) {
            p->zfull = 0;
            if ((rc = give(f, ZLIB_YIELD)))
                return rc;
        }
    }
    if (last && p->data.len - p->zemit == ZLIB_YIELD && !nh_inflate_ended(p->z) && nh_inflate_stored_left(p->z)) {
        /* zlib copies stored bytes only into room it has: a full buffer
         * with a stored byte left in the call is yielded before it */
        if ((rc = give(f, ZLIB_YIELD)))
            return rc;
    }
    p->fed += n;
    p->z_msg.len = 0;
    nh_error e = {0};
    rc = nh_inflate_feed(p->z, s, n, &p->data, &p->z_msg, &e);
    if (rc == NH_ERROR) {
        if (p->state == ST_CH_DATA) {
            /* read_chunked's ensure reads 2 more bytes first, right after
             * the piece the error came from: an EOFError there replaces it */
            p->z_err = 1;
            p->z_err_cls = e.cls;
            p->z_err_at = p->zpiece_end;
            return NH_OK;
        }
        f->err->cls = e.cls;
        f->msg->len = 0;
        return nh_buf_append(f->msg, p->z_msg.data, p->z_msg.len) ? NH_NOMEM : NH_ERROR;
    }
    if (rc)
        return rc;
    size_t pend = p->data.len - p->zemit;
    if (nh_inflate_ended(p->z)) {
        p->zfull = 0;
        return give(f, pend);
    }
    if (!last)
        return pend > ZLIB_YIELD ? give(f, (pend - 1) / ZLIB_YIELD * ZLIB_YIELD) : NH_OK;
    /* the call ends: a full buffer waits for the next one */
    p->zcall = 0;
    p->zfull = pend >= ZLIB_YIELD;
    return NH_OK;
}

/* Ends the current piece with the byte held back, if any. */
static int zflush(feed *f)
{
    nh_resp *p = f->p;
    if (!p->zheld)
        return NH_OK;
    p->zheld = 0;
    return zfeed(f, &p->zbyte, 1, 1);
}

/* Body bytes s[0..n) at stream position pos, in pieces as BufferedIO hands
 * them over; `ends`: the body (or chunk) ends after them. */
static int inflate_bytes(feed *f, const uint8_t *s, size_t n, uint64_t pos, int ends)
{
    nh_resp *p = f->p;
    int rc;
    /* where the data ends: the chunk's end for chunked bodies */
    uint64_t data_end = pos + n + (p->state == ST_CH_DATA ? p->remaining : 0);
    while (n) {
        uint64_t to_grid = READ_SIZE - pos % READ_SIZE;
        size_t k = to_grid < n ? (size_t)to_grid : n;
        int piece_ends = k == to_grid || (k == n && ends);
        p->zpiece_end = pos + to_grid < data_end ? pos + to_grid : data_end;
        if (p->zheld) {
            /* more of the same piece: the held byte was not its last */
            p->zheld = 0;
            if ((rc = zfeed(f, &p->zbyte, 1, 0)))
                return rc;
        }
        if (piece_ends) {
            if ((rc = zfeed(f, s, k - 1, 0)) || (rc = zfeed(f, s + k - 1, 1, 1)))
                return rc;
        } else {
            if ((rc = zfeed(f, s, k - 1, 0)))
                return rc;
            p->zbyte = s[k - 1];
            p->zheld = 1;
        }
        s += k;
        n -= k;
        pos += k;
    }
    return ends ? zflush(f) : NH_OK;
}

/* The inflater's ensure clause: Inflater#finish, then the content-length
 * rewrite.  read_body_0 leaves the inflater's block with a `return` on the
 * chunked and Content-Length paths, so `success = true` is never reached
 * there and a finish error (a truncated stream's Zlib::BufError) is dropped,
 * with the rewrite after it; only read_all ends the block normally. */
static int inflate_finish(feed *f)
{
    nh_resp *p = f->p;
    if (p->fed) {
        p->z_msg.len = 0;
        nh_error e = {0};
        int rc = nh_inflate_finish(p->z, &p->z_msg, &e);
        if (rc == NH_ERROR) {
            if (p->state != ST_EOF)
                return NH_OK;
            f->err->cls = e.cls;
            f->msg->len = 0;
            return nh_buf_append(f->msg, p->z_msg.data, p->z_msg.len) ? NH_NOMEM : NH_ERROR;
        }
        if (rc)
            return rc;
    }
    {
        /* net-http 0.6.0 and 0.9.1 (not 0.2.0): the decoded size */
        long fi = field(p, "content-length");
        if (fi >= 0) {
            p->tmp.len = 0;
            if (nh_put_uint(&p->tmp, nh_inflate_total_out(p->z)))
                return NH_NOMEM;
            /* []= : set_field keeps the key's place */
            fi = nh_headers_set(&p->hdr, (const uint8_t *)"content-length", 14);
            if (fi < 0 || nh_headers_push(&p->hdr, fi, p->tmp.data, p->tmp.len))
                return NH_NOMEM;
        }
    }
    return NH_OK;
}

static int message_end(feed *f)
{
    nh_resp *p = f->p;
    if (p->decoding) {
        int rc = zflush(f); /* EOF ends the last piece */
        if (!rc)
            rc = inflate_finish(f);
        if (rc)
            return rc;
        p->data.len = p->zemit; /* never yielded */
        p->decoding = 0;
    }
    if (p->changed) {
        int rc = put_head(f, NH_EV_FINAL);
        if (rc)
            return rc;
    }
    if (nh_buf_putc(f->ev, NH_EV_END) || nh_put_u32(f->ev, f->i))
        return NH_NOMEM;
    p->state = ST_DONE;
    return NH_OK;
}

/* chunk-size line: the first hex run ("wrong chunk size line" without one). */
static int strict_chunk_size(feed *f, const uint8_t *s, size_t n)
{
    int rc = NH_OK;
    long m = strict_crlf(f, s, n, &rc);
    if (m < 0)
        return rc;
    long i = 0;
    while (i < m && s[i] == '0')
        i++;
    long d = i;
    while (i < m && nh_hex_val(s[i]) >= 0)
        i++;
    if (i == 0)
        return strict_fail(f, "malformed chunk size line");
    if (i - d > 16)
        return strict_fail(f, "chunk size too large");
    while (i < m && is_ows(s[i]))
        i++;
    if (i < m && s[i] != ';')
        return strict_fail(f, "malformed chunk size line");
    for (; i < m; i++)
        if (is_ctl(s[i]))
            return strict_fail(f, "control character in a chunk extension");
    return NH_OK;
}

static int chunk_size_line(feed *f, const uint8_t *s, size_t n)
{
    nh_resp *p = f->p;
    if (p->cfg.strict) {
        int rc = strict_chunk_size(f, s, n);
        if (rc)
            return rc;
    }
    n = chop(s, n);
    size_t i = 0;
    while (i < n && nh_hex_val(s[i]) < 0)
        i++;
    if (i == n)
        return fail_with(f, NH_E_BAD_RESPONSE, "wrong chunk size line: ", s, n);
    uint64_t v = 0;
    for (; i < n && nh_hex_val(s[i]) >= 0; i++) {
        if (v > (UINT64_MAX >> 4))
            v = UINT64_MAX;
        else
            v = v << 4 | (uint64_t)nh_hex_val(s[i]);
    }
    p->line.len = 0;
    if (v == 0) {
        p->state = ST_CH_TRAILER;
        p->tl_len = 0;
        p->tl_cr = 0;
    } else {
        p->remaining = v;
        p->state = ST_CH_DATA;
    }
    return NH_OK;
}

/* read_chunked's `read 2` after an inflate error got its 2 bytes: the error. */
static int z_error(feed *f)
{
    nh_resp *p = f->p;
    f->err->cls = p->z_err_cls;
    f->msg->len = 0;
    return nh_buf_append(f->msg, p->z_msg.data, p->z_msg.len) ? NH_NOMEM : NH_ERROR;
}

/* Consumes some input in the current state. */
static int step(feed *f)
{
    nh_resp *p = f->p;
    const uint8_t *s;
    size_t len, avail = f->n - f->i;
    int rc;
    switch (p->state) {
    case ST_STATUS:
        rc = read_line(f, LINE_HEAD, &s, &len);
        if (rc <= 0)
            return rc;
        rc = status_line(f, s, len);
        p->line.len = 0;
        return rc;
    case ST_HEADERS:
        rc = read_line(f, LINE_HEAD, &s, &len);
        if (rc <= 0)
            return rc;
        rc = header_line(f, s, len);
        p->line.len = 0;
        return rc;
    case ST_LENGTH:
    case ST_RANGE:
    case ST_CH_DATA: {
        size_t take = avail < p->remaining ? avail : (size_t)p->remaining;
        size_t off = f->i;
        f->i += take;
        p->remaining -= take;
        if ((rc = body_bytes(f, off, take, p->remaining == 0)))
            return rc;
        if (p->z_err && p->base + f->i >= p->z_err_at + 2)
            return z_error(f);
        if (p->remaining)
            return NH_OK;
        if (p->state != ST_CH_DATA)
            return message_end(f);
        p->state = ST_CH_CRLF;
        p->crlf_left = 2;
        return NH_OK;
    }
    case ST_EOF: {
        size_t off = f->i;
        f->i = f->n;
        return body_bytes(f, off, avail, 0);
    }
    case ST_CH_SIZE:
        rc = read_line(f, LINE_CHUNK, &s, &len);
        if (rc <= 0)
            return rc;
        return chunk_size_line(f, s, len);
    case ST_CH_CRLF: {
        if (p->cfg.strict) {
            for (size_t k = 0; k < avail && k < (size_t)p->crlf_left; k++)
                if (f->in[f->i + k] != ((size_t)p->crlf_left - k == 2 ? '\r' : '\n'))
                    return strict_fail(f, "chunk data not followed by CRLF");
        }
        size_t take = avail < (size_t)p->crlf_left ? avail : (size_t)p->crlf_left;
        f->i += take;
        p->crlf_left -= (int)take;
        if (p->z_err && p->base + f->i >= p->z_err_at + 2)
            return z_error(f);
        if (p->crlf_left)
            return NH_OK;
        p->state = ST_CH_SIZE;
        return NH_OK;
    }
    case ST_CH_TRAILER: {
        if (p->cfg.strict) {
            rc = read_line(f, LINE_TRAILER, &s, &len);
            if (rc <= 0)
                return rc;
            long m = strict_crlf(f, s, len, &rc);
            if (m < 0)
                return rc;
            p->line.len = 0;
            if (m == 0)
                return message_end(f);
            return strict_field(f, s, (size_t)m, 1);
        }
        const uint8_t *a = f->in + f->i;
        const uint8_t *nl = memchr(a, '\n', avail);
        size_t k = nl ? (size_t)(nl - a) : avail;
        if (k && p->tl_len == 0)
            p->tl_cr = a[0] == '\r';
        p->tl_len += k;
        if (!nl) {
            f->i = f->n;
            return NH_OK;
        }
        f->i += k + 1;
        /* readline.chop is empty for "\n" and "\r\n" */
        if (p->tl_len == 0 || (p->tl_len == 1 && p->tl_cr))
            return message_end(f);
        p->tl_len = 0;
        p->tl_cr = 0;
        return NH_OK;
    }
    default:
        return NH_OK;
    }
}

/* The stream ended in the current state. */
static int at_eof(feed *f)
{
    nh_resp *p = f->p;
    int rc;
    switch (p->state) {
    case ST_HEADERS:
        if (p->cfg.strict)
            return fail_eof(f);
        /* readuntil("\n", true) returns what is left, then "" */
        if (p->line.len) {
            nh_buf line = p->line;
            rc = header_line(f, line.data, line.len);
            p->line.len = 0;
            if (rc || p->state != ST_HEADERS)
                return rc;
        }
        return end_of_head(f);
    case ST_LENGTH: /* read(clen, dest, ignore_eof = true) */
        return p->cfg.strict ? fail_eof(f) : message_end(f);
    case ST_EOF:
        return message_end(f);
    default:
        return fail_eof(f);
    }
}

static int remember(nh_resp *p, int rc, nh_buf *msg, nh_error *err)
{
    if (rc == NH_ERROR) {
        p->fail_cls = err->cls;
        p->fail_msg.len = 0;
        if (nh_buf_append(&p->fail_msg, msg->data, msg->len))
            p->fail_msg.len = 0;
    } else {
        p->fail_cls = NH_E_NOMEM;
        p->fail_msg.len = 0;
        nh_put_str(&p->fail_msg, "failed to allocate memory");
    }
    p->state = ST_FAILED;
    return rc;
}

int nh_resp_feed(nh_resp *p, const uint8_t *in, size_t n, int eof, nh_buf *ev, nh_buf *msg,
                 nh_error *err)
{
    if (p->state == ST_FAILED) {
        err->cls = p->fail_cls;
        msg->len = 0;
        if (nh_buf_append(msg, p->fail_msg.data, p->fail_msg.len))
            return NH_NOMEM;
        return p->fail_cls == NH_E_NOMEM ? NH_NOMEM : NH_ERROR;
    }
    feed f = {p, in ? in : (const uint8_t *)"", n, 0, ev, msg, err};
    if (p->zemit) {
        /* drop what the last call gave out; keep what zlib holds back */
        memmove(p->data.data, p->data.data + p->zemit, p->data.len - p->zemit);
        p->data.len -= p->zemit;
        p->zemit = 0;
    }
    int rc = NH_OK;
    while (p->state != ST_DONE) {
        if (f.i < f.n)
            rc = step(&f);
        else if (eof)
            rc = at_eof(&f);
        else
            break;
        if (rc)
            return remember(p, rc, msg, err);
    }
    p->base += f.i;
    return NH_OK;
}

void nh_resp_set_stream_offset(nh_resp *p, uint64_t off)
{
    p->base = off;
}
