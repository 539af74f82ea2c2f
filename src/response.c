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
 * Strict mode (RFC 9112) is in response_strict.c, the zlib-yield emulation in
 * response_zlib.c, the event encoding in response_events.c, the class table
 * in response_class.c. */
#include "response.h"

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
    p->head_bound = UINT64_MAX;
    p->st.len = 0;
    p->ver_len = p->msg_len = 0;
    p->has_ver = p->has_msg = 0;
    p->cls = NULL;
    nh_headers_reset(&p->hdr);
    p->hdr.profile = p->cfg.profile;
    p->pending = 0;
    p->key.len = p->val.len = 0;
    p->kp = p->vp = NULL;
    p->kn = p->vn = 0;
    p->v_kept = p->v_plain = 0;
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

int nh_resp_fail(feed *f, int cls, const char *msg)
{
    return nh_fail(f->msg, f->err, cls, msg);
}

/* Fails with prefix + the bytes s[0..n) (as Ruby's "#{...}" interpolates them). */
int nh_resp_fail_with(feed *f, int cls, const char *prefix, const uint8_t *s, size_t n)
{
    f->msg->len = 0;
    f->err->cls = cls;
    if (nh_put_str(f->msg, prefix) || nh_buf_append(f->msg, s, n))
        return NH_NOMEM;
    return NH_ERROR;
}

int nh_resp_fail_limit(feed *f, const char *what, uint64_t limit)
{
    f->msg->len = 0;
    f->err->cls = NH_E_LIMIT;
    if (nh_put_str(f->msg, what) || nh_put_str(f->msg, " exceeds the limit of ") ||
        nh_put_uint(f->msg, limit) || nh_put_str(f->msg, " bytes"))
        return NH_NOMEM;
    return NH_ERROR;
}

int nh_resp_fail_eof(feed *f)
{
    return nh_resp_fail(f, NH_E_EOF, "end of file reached");
}

/* ---- fields ---- */

long nh_resp_field(const nh_resp *p, const char *lname)
{
    return nh_headers_find(&p->hdr, (const uint8_t *)lname, strlen(lname));
}

/* self[name]: the values joined with ", ", into p->tmp. */
int nh_resp_joined(nh_resp *p, long fi)
{
    p->tmp.len = 0;
    return nh_headers_join(&p->hdr, fi, &p->tmp);
}

/* The pending key and value copied into p->key and p->val (their line is
 * about to go away). */
static int keep_field(nh_resp *p)
{
    if (p->v_kept)
        return NH_OK;
    p->key.len = p->val.len = 0;
    if (nh_buf_append(&p->key, p->kp, p->kn) || nh_buf_append(&p->val, p->vp, p->vn))
        return NH_NOMEM;
    p->kp = p->key.data;
    p->vp = p->val.data;
    p->v_kept = 1;
    return NH_OK;
}

/* head's add_field before the value's CR/LF check: set_field validates the
 * name of a key that is not there yet (append_field_value does not), and
 * both check the value's length:
 *   if @header.key?(stringified_downcased_key)
 *     append_field_value(@header[stringified_downcased_key], val, key)
 *   else
 *     set_field(key, val)                # validate_field_name(key)
 *   end */
static int head_checks(feed *f)
{
    nh_resp *p = f->p;
    int bad_name = p->kn > NH_HEAD_KEY_MAX;
    for (size_t i = 0; i < p->kn && !bad_name; i++)
        bad_name = p->kp[i] < 0x20 || p->kp[i] == 0x7f || p->kp[i] == ':';
    if (bad_name) {
        p->tmp.len = 0;
        if (nh_ascii_downcase(&p->tmp, p->kp, p->kn))
            return NH_NOMEM;
        if (nh_headers_find(&p->hdr, p->tmp.data, p->tmp.len) < 0) {
            int rc = nh_validate_field_name(f->msg, f->err, p->kp, p->kn, 1, p->cfg.profile);
            if (rc)
                return rc;
        }
    }
    return nh_check_field_length(f->msg, f->err, p->kp, p->kn, p->vn);
}

/* add_field(key, val) for the field read last. */
static inline __attribute__((always_inline)) int add_field(feed *f)
{
    nh_resp *p = f->p;
    p->pending = 0;
    if (p->cfg.profile == NH_PROFILE_HEAD) {
        int rc = head_checks(f);
        if (rc)
            return rc;
    }
    /* a value never holds "\n" (lines end there), "\r" it can */
    if (!p->v_plain && p->vn && nh_find_byte(p->vp, p->vn, '\r'))
        return nh_resp_fail(f, NH_E_ARGUMENT, "header field value cannot include CR/LF");
    if (++p->nlines > p->cfg.max_fields) {
        f->msg->len = 0;
        f->err->cls = NH_E_LIMIT;
        if (nh_put_str(f->msg, "more than ") || nh_put_uint(f->msg, p->cfg.max_fields) ||
            nh_put_str(f->msg, " header fields"))
            return NH_NOMEM;
        return NH_ERROR;
    }
    return nh_headers_add_field(&p->hdr, p->kp, p->kn, p->vn ? p->vp : (const uint8_t *)"", p->vn);
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
    const uint8_t *nl = nh_find_byte(a, avail, '\n');
    size_t take = nl ? (size_t)(nl - a) + 1 : avail;
    int head = kind == LINE_HEAD;
    uint64_t total = (head ? p->head_bytes : 0) + p->line.len + take;
    /* head's each_response_header:
     *   remaining -= line.bytesize
     *   raise Net::HTTPBadResponse, 'response header too large' if remaining < 0
     * (a line that will pass the bound fails as soon as it has) */
    if (head && total > p->head_bound)
        return nh_resp_fail(f, NH_E_BAD_RESPONSE, "response header too large");
    if (total > p->cfg.max_header_bytes)
        return nh_resp_fail_limit(f, head ? "the response head" : kind == LINE_TRAILER ? "a trailer line" : "a chunk-size line",
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
        int rc = nh_resp_strict_status(f, s, n);
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
    p->cls = nh_resp_class(p->code);
    p->state = ST_HEADERS;
    /* head's: remaining = MAX_RESPONSE_HEADER_LENGTH (the lines after this one) */
    if (p->cfg.profile == NH_PROFILE_HEAD)
        p->head_bound = p->head_bytes + NH_HEAD_RESPONSE_HEADER_MAX;
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
        long m = nh_resp_strict_crlf(f, s, n, &rc);
        if (m < 0)
            return rc;
        if (m > 0 && (rc = nh_resp_strict_field(f, s, (size_t)m, p->pending)))
            return rc;
    }
    while (n && is_space(s[n - 1])) /* sub(/\s+\z/, '') */
        n--;
    if (n == 0)
        return end_of_head(f);
    size_t a, b;
    nh_strip(s, n, &a, &b);
    if ((s[0] == ' ' || s[0] == '\t') && p->pending) {
        if (keep_field(p) || (p->val.len && nh_buf_putc(&p->val, ' ')) || nh_buf_append(&p->val, s + a, b - a))
            return NH_NOMEM;
        p->vp = p->val.data;
        p->vn = p->val.len;
        p->v_plain = 0;
        return NH_OK;
    }
    if (p->pending) {
        int rc = add_field(f);
        if (rc)
            return rc;
    }
    const uint8_t *colon = b > a ? nh_find_byte(s + a, b - a, ':') : NULL;
    if (!colon)
        return nh_resp_fail(f, NH_E_BAD_RESPONSE, "wrong header line format");
    size_t c = (size_t)(colon - s), k = c, v = c + 1;
    while (k > a && is_space(s[k - 1]))
        k--;
    while (v < b && is_space(s[v]))
        v++;
    /* the key and value are read where they are, and copied only when
     * their line goes away first: a line kept in p->line (the next one
     * reuses it), or the input when this call ends (nh_resp_feed) */
    p->kp = s + a;
    p->kn = k - a;
    p->vp = s + v;
    p->vn = b - v;
    p->v_kept = 0;
    p->v_plain = 0;
    p->pending = 1;
    return s == p->line.data ? keep_field(p) : NH_OK;
}

/* The first of bytes c and d in s[i, n), or n. */
static size_t first_of(const uint8_t *s, size_t i, size_t n, uint8_t c, uint8_t d)
{
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t m = nh_word_eq(w, c) | nh_word_eq(w, d);
        if (m)
            return i + (__builtin_ctzll(m) >> 3);
    }
    while (i < n && s[i] != c && s[i] != d)
        i++;
    return i;
}

/* The first "\r" or "\n" in s[i, n), or n: the bytes below 0x0E are
 * flagged eight at a time (the lowest flag is exact), then looked at. */
static size_t first_cr_lf(const uint8_t *s, size_t i, size_t n)
{
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t m = (w - NH_ONES * 0x0E) & ~w & NH_HIGHS;
        if (!m) {
            i += 8;
            continue;
        }
        i += __builtin_ctzll(m) >> 3;
        if (s[i] == '\r' || s[i] == '\n')
            return i;
        i++; /* a tab, NUL or other control byte */
    }
    while (i < n && s[i] != '\r' && s[i] != '\n')
        i++;
    return i;
}

/* header_line for the usual field line, read where it is in the input:
 * "name: value" and "\r\n" or "\n", with no other CR, not folded, not
 * starting with whitespace, no "\v" or "\f" after the colon; or for the
 * empty line that ends the head.  The same rules, in one pass.  *took:
 * the line's length, or 0 when header_line must read it (the line is not
 * whole in the input, or is not one of these). */
static int field_line(feed *f, size_t *took)
{
    nh_resp *p = f->p;
    const uint8_t *s = f->in + f->i;
    size_t n = f->n - f->i;
    *took = 0;
    if (nh_strip_byte(s[0])) {
        /* the empty line that ends the head */
        size_t len = s[0] == '\n' ? 1 : s[0] == '\r' && n >= 2 && s[1] == '\n' ? 2 : 0;
        if (!len || p->head_bytes + len > p->cfg.max_header_bytes || p->head_bytes + len > p->head_bound)
            return NH_OK;
        f->i += len;
        p->head_bytes += len;
        *took = len;
        return end_of_head(f);
    }
    /* line.strip.split(/\s*:\s*\/, 2), the line stripped at neither end */
    size_t c = first_of(s, 0, n, ':', '\n');
    if (c == n || s[c] != ':')
        return NH_OK;
    size_t k = c, v = c + 1;
    while (k > 0 && is_space(s[k - 1]))
        k--;
    while (v < n && (s[v] == ' ' || s[v] == '\t'))
        v++;
    size_t e = first_cr_lf(s, v, n), len;
    if (e == n)
        return NH_OK;
    if (s[e] == '\n')
        len = e + 1;
    else if (e + 1 < n && s[e + 1] == '\n')
        len = e + 2;
    else
        return NH_OK;
    if (v < e && (s[v] == '\v' || s[v] == '\f'))
        return NH_OK;
    if (p->head_bytes + len > p->cfg.max_header_bytes || p->head_bytes + len > p->head_bound)
        return NH_OK; /* read_line fails */
    /* sub(/\s+\z/, '') and strip at the end */
    size_t b = e;
    while (b > v && nh_strip_byte(s[b - 1]))
        b--;
    f->i += len;
    p->head_bytes += len;
    *took = len;
    if (p->pending) {
        int rc = add_field(f);
        if (rc)
            return rc;
    }
    p->kp = s;
    p->kn = k;
    p->vp = s + v;
    p->vn = b - v;
    p->v_kept = 0;
    p->v_plain = 1;
    p->pending = 1;
    return NH_OK;
}

/* ---- framing ---- */

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

int nh_resp_message_end(feed *f);

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
    if (!p->cfg.decode || nh_resp_field(p, "content-range") >= 0 || (fi = nh_resp_field(p, "content-encoding")) < 0)
        return NH_OK;
    if (nh_resp_joined(p, fi))
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
        return nh_resp_strict_framing(f);
    if ((fi = nh_resp_field(p, "transfer-encoding")) >= 0) {
        if (nh_resp_joined(p, fi))
            return NH_NOMEM;
        if (is_chunked(p->tmp.data, p->tmp.len)) {
            p->state = ST_CH_SIZE;
            return NH_OK;
        }
    }
    if ((fi = nh_resp_field(p, "content-length")) >= 0) {
        if (nh_resp_joined(p, fi))
            return NH_NOMEM;
        const uint8_t *s = p->tmp.data;
        size_t n = p->tmp.len, i = 0;
        while (i < n && !is_digit(s[i]))
            i++;
        if (i == n)
            return nh_resp_fail(f, NH_E_HEADER_SYNTAX, "wrong Content-Length format");
        size_t j = i;
        while (j < n && is_digit(s[j]))
            j++;
        p->remaining = dec_u64(s + i, j - i);
        p->state = ST_LENGTH;
        return p->remaining ? NH_OK : nh_resp_message_end(f);
    }
    if ((fi = nh_resp_field(p, "content-range")) >= 0) {
        /* %r<\A\s*(\w+)\s+(\d+)-(\d+)/(\d+|\*)> */
        if (nh_resp_joined(p, fi))
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
                return nh_resp_message_end(f);
            }
            return nh_resp_fail(f, NH_E_NO_METHOD, "undefined method 'bytesize' for nil");
        }
        uint64_t d = dec_sub(b, bn, a, an);
        p->remaining = d == UINT64_MAX ? d : d + 1;
        p->state = ST_RANGE;
        return NH_OK;
    bad_range:
        return nh_resp_fail(f, NH_E_HEADER_SYNTAX, "wrong Content-Range format");
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
        int rc = nh_resp_put_head(f, NH_EV_INTERIM);
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
    rc = nh_resp_put_head(f, NH_EV_HEAD);
    if (rc)
        return rc;
    if (!p->body_exist)
        return nh_resp_message_end(f);
    return start_body(f);
}

/* ---- body ---- */

/* n body bytes at f->in + off; `ends`: they end the body or the chunk. */
static int body_bytes(feed *f, size_t off, size_t n, int ends)
{
    nh_resp *p = f->p;
    /* the bytes within the limit go first: an error in them comes first */
    uint64_t room = p->cfg.max_body_bytes - p->body_bytes;
    int over = n > room;
    size_t k = over ? (size_t)room : n;
    p->body_bytes += k;
    int rc = !p->decoding ? nh_resp_put_body(f, 0, off, k) : nh_resp_inflate_bytes(f, f->in + off, k, p->base + off, over ? 0 : ends);
    if (!rc && over)
        rc = nh_resp_fail_limit(f, "the response body", p->cfg.max_body_bytes);
    return rc;
}

int nh_resp_message_end(feed *f)
{
    nh_resp *p = f->p;
    if (p->decoding) {
        int rc = nh_resp_zflush(f); /* EOF ends the last piece */
        if (!rc)
            rc = nh_resp_inflate_finish(f);
        if (rc)
            return rc;
        p->data.len = p->zemit; /* never yielded */
        p->decoding = 0;
    }
    if (p->changed) {
        int rc = nh_resp_put_head(f, NH_EV_FINAL);
        if (rc)
            return rc;
    }
    if (nh_buf_putc(f->ev, NH_EV_END) || nh_put_u32(f->ev, f->i))
        return NH_NOMEM;
    p->state = ST_DONE;
    return NH_OK;
}

/* A chunk of v bytes comes, or the last one (0). */
static void chunk_size(nh_resp *p, uint64_t v)
{
    p->line.len = 0;
    if (v == 0) {
        p->state = ST_CH_TRAILER;
        p->tl_len = 0;
        p->tl_cr = 0;
    } else {
        p->remaining = v;
        p->state = ST_CH_DATA;
    }
}

/* read_chunked: line = @socket.readline; hexlen = line.slice(/[0-9a-fA-F]+/)
 * or raise; len = hexlen.hex */
static int chunk_size_line(feed *f, const uint8_t *s, size_t n)
{
    nh_resp *p = f->p;
    if (p->cfg.strict) {
        int rc = nh_resp_strict_chunk_size(f, s, n);
        if (rc)
            return rc;
    }
    n = chop(s, n);
    size_t i = 0;
    while (i < n && nh_hex_val(s[i]) < 0)
        i++;
    if (i == n)
        return nh_resp_fail_with(f, NH_E_BAD_RESPONSE, "wrong chunk size line: ", s, n);
    uint64_t v = 0;
    int d;
    for (; i < n && (d = nh_hex_val(s[i])) >= 0; i++)
        v = v > (UINT64_MAX >> 4) ? UINT64_MAX : v << 4 | (uint64_t)d;
    chunk_size(p, v);
    return NH_OK;
}

/* chunk_size_line for the usual line, read where it is in the input: up
 * to 16 hex digits and "\r\n".  Its length, or 0 when chunk_size_line
 * must read it. */
static size_t chunk_size_fast(feed *f)
{
    nh_resp *p = f->p;
    const uint8_t *s = f->in + f->i;
    size_t n = f->n - f->i, j = 0;
    uint64_t v = 0;
    int d;
    for (; j < n && j < 16 && (d = nh_hex_val(s[j])) >= 0; j++)
        v = v << 4 | (uint64_t)d;
    if (j == 0 || j + 2 > n || s[j] != '\r' || s[j + 1] != '\n' || j + 2 > p->cfg.max_header_bytes)
        return 0;
    f->i += j + 2;
    chunk_size(p, v);
    return j + 2;
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
        /* line after line, while the input lasts */
        do {
            if (!p->cfg.strict && !p->line.len) {
                if ((rc = field_line(f, &len)))
                    return rc;
                if (len)
                    continue;
            }
            rc = read_line(f, LINE_HEAD, &s, &len);
            if (rc <= 0)
                return rc;
            rc = header_line(f, s, len);
            p->line.len = 0;
        } while (!rc && p->state == ST_HEADERS && f->i < f->n);
        return rc;
    case ST_EOF: {
        size_t off = f->i;
        f->i = f->n;
        return body_bytes(f, off, avail, 0);
    }
    case ST_CH_SIZE:
    next_chunk:
        if (p->cfg.strict || p->line.len || !chunk_size_fast(f)) {
            rc = read_line(f, LINE_CHUNK, &s, &len);
            if (rc <= 0)
                return rc;
            if ((rc = chunk_size_line(f, s, len)))
                return rc;
        }
        if (p->state != ST_CH_DATA || f->i == f->n)
            return NH_OK;
        /* fall through: the chunk's data */
    case ST_LENGTH:
    case ST_RANGE:
    case ST_CH_DATA: {
        avail = f->n - f->i;
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
            return nh_resp_message_end(f);
        p->state = ST_CH_CRLF;
        p->crlf_left = 2;
        if (f->i == f->n)
            return NH_OK;
    }
        /* fall through: the 2 bytes after it */
    case ST_CH_CRLF: {
        avail = f->n - f->i;
        if (p->cfg.strict) {
            for (size_t k = 0; k < avail && k < (size_t)p->crlf_left; k++)
                if (f->in[f->i + k] != ((size_t)p->crlf_left - k == 2 ? '\r' : '\n'))
                    return nh_resp_strict_fail(f, "chunk data not followed by CRLF");
        }
        size_t take = avail < (size_t)p->crlf_left ? avail : (size_t)p->crlf_left;
        f->i += take;
        p->crlf_left -= (int)take;
        if (p->z_err && p->base + f->i >= p->z_err_at + 2)
            return z_error(f);
        if (p->crlf_left)
            return NH_OK;
        p->state = ST_CH_SIZE;
        if (f->i == f->n)
            return NH_OK;
        goto next_chunk;
    }
    case ST_CH_TRAILER: {
        if (p->cfg.strict) {
            rc = read_line(f, LINE_TRAILER, &s, &len);
            if (rc <= 0)
                return rc;
            long m = nh_resp_strict_crlf(f, s, len, &rc);
            if (m < 0)
                return rc;
            p->line.len = 0;
            if (m == 0)
                return nh_resp_message_end(f);
            return nh_resp_strict_field(f, s, (size_t)m, 1);
        }
        const uint8_t *a = f->in + f->i;
        const uint8_t *nl = nh_find_byte(a, avail, '\n');
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
            return nh_resp_message_end(f);
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
            return nh_resp_fail_eof(f);
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
        return p->cfg.strict ? nh_resp_fail_eof(f) : nh_resp_message_end(f);
    case ST_EOF:
        return nh_resp_message_end(f);
    default:
        return nh_resp_fail_eof(f);
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
    if (p->pending && keep_field(p))
        return remember(p, NH_NOMEM, msg, err);
    p->base += f.i;
    return NH_OK;
}

void nh_resp_set_stream_offset(nh_resp *p, uint64_t off)
{
    p->base = off;
}
