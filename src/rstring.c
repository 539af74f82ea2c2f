/* Ruby String semantics that do not need Unicode tables: UTF-8 validity as
 * MRI (enc/utf_8.c) defines it, String#inspect, String#dump, String#scrub,
 * String#strip and the ASCII-only case mappings of binary strings.
 *
 * Every function is byte-exact with MRI 4.0 and 3.4 (checked against real
 * Ruby by tools/verify-rstring.mjs).  No locale or <ctype.h> is involved. */
#include "internal.h"

/* Result of MRI's rb_enc_precise_mbclen for UTF-8. */
#define MB_NEEDMORE 0  /* a valid prefix cut short by the end of the string */
#define MB_INVALID (-1)

/* MRI's UTF-8 state machine: the length of the character at s (1..4),
 * MB_NEEDMORE or MB_INVALID.  Rejects overlong forms, surrogates and code
 * points above U+10FFFF. */
static int utf8_mbclen(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    uint8_t lo = 0x80, hi = 0xBF;
    int len;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xC2)
        return MB_INVALID;
    if (c < 0xE0) {
        len = 2;
        v = c & 0x1F;
    } else if (c < 0xF0) {
        len = 3;
        v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c < 0xF5) {
        len = 4;
        v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return MB_INVALID;
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n)
            return MB_NEEDMORE;
        uint8_t b = s[i];
        if (b < lo || b > hi)
            return MB_INVALID;
        lo = 0x80;
        hi = 0xBF;
        v = (v << 6) | (b & 0x3F);
    }
    *cp = v;
    return len;
}

/* Shared with casemap.c. */
int nh_utf8_char(const uint8_t *s, size_t n, uint32_t *cp)
{
    int r = utf8_mbclen(s, n, cp);
    return r > 0 ? r : 0;
}

int nh_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    uint32_t cp;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int r = utf8_mbclen(s + i, n - i, &cp);
        if (r <= 0)
            return 0;
        i += (size_t)r;
    }
    return 1;
}

/* ---- case mapping of binary strings (enc/ascii.c) --------------------- */

int nh_ascii_downcase(nh_buf *out, const uint8_t *s, size_t n)
{
    if (nh_buf_reserve(out, n))
        return NH_NOMEM;
    nh_ascii_downcase_to(out->data + out->len, s, n);
    out->len += n;
    return NH_OK;
}

int nh_ascii_capitalize(nh_buf *out, const uint8_t *s, size_t n)
{
    if (nh_buf_reserve(out, n))
        return NH_NOMEM;
    uint8_t *o = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (i == 0 ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z'))
            c ^= 0x20;
        o[i] = c;
    }
    out->len += n;
    return NH_OK;
}

/* ---- String#inspect / String#dump -------------------------------------- */

static const char HEX[] = "0123456789ABCDEF";

static int is_print_ascii(uint32_t c)
{
    return c >= 0x20 && c < 0x7F;
}

/* The letter of a backslash escape both inspect and dump use, or 0. */
static char escape_letter(uint32_t c)
{
    switch (c) {
    case '\n': return 'n';
    case '\r': return 'r';
    case '\t': return 't';
    case '\f': return 'f';
    case '\013': return 'v';
    case '\010': return 'b';
    case '\007': return 'a';
    case 033: return 'e';
    default: return 0;
    }
}

static int put_hex_byte(nh_buf *out, uint8_t b)
{
    uint8_t e[4] = { '\\', 'x', (uint8_t)HEX[b >> 4], (uint8_t)HEX[b & 15] };
    return nh_buf_append(out, e, 4);
}

/* \uXXXX (at least four upper-case hex digits) or \u{X...} above U+FFFF. */
static int put_u_escape(nh_buf *out, uint32_t cp)
{
    uint8_t e[10];
    size_t k = 0, digits = 0;
    e[k++] = '\\';
    e[k++] = 'u';
    if (cp > 0xFFFF) {
        e[k++] = '{';
        for (uint32_t t = cp; t; t >>= 4)
            digits++;
    } else {
        digits = 4;
    }
    for (size_t d = digits; d-- > 0;)
        e[k++] = (uint8_t)HEX[(cp >> (4 * d)) & 15];
    if (cp > 0xFFFF)
        e[k++] = '}';
    return nh_buf_append(out, e, k);
}

/* '#' starts an interpolation when followed by '$', '@' or '{'. */
static int is_evstr(const uint8_t *p, const uint8_t *end)
{
    return p < end && (*p == '$' || *p == '@' || *p == '{');
}

/* rb_str_inspect, with the default external encoding UTF-8 and no default
 * internal encoding (so a UTF-8 string's printable characters stay
 * literal, a binary string shows every byte >= 0x80 as \xNN). */
int nh_inspect(nh_buf *out, const uint8_t *s, size_t n, int utf8, int profile)
{
    const uint8_t *p = s, *end = s + n;
    if (nh_buf_reserve(out, n + 2) || nh_buf_putc(out, '"'))
        return NH_NOMEM;
    while (p < end) {
        uint32_t c;
        int len;
        if (!utf8 || *p < 0x80) {
            c = *p;
            len = 1;
        } else {
            len = utf8_mbclen(p, (size_t)(end - p), &c);
            if (len <= 0) {
                /* not a character: one byte as \xNN, then go on */
                if (put_hex_byte(out, *p))
                    return NH_NOMEM;
                p++;
                continue;
            }
        }
        const uint8_t *ch = p;
        p += len;
        if (c == '"' || c == '\\' || (c == '#' && is_evstr(p, end))) {
            uint8_t e[2] = { '\\', (uint8_t)c };
            if (nh_buf_append(out, e, 2))
                return NH_NOMEM;
            continue;
        }
        char l = escape_letter(c);
        if (l) {
            uint8_t e[2] = { '\\', (uint8_t)l };
            if (nh_buf_append(out, e, 2))
                return NH_NOMEM;
            continue;
        }
        if (is_print_ascii(c) || (utf8 && c >= 0x80 && nh_unicode_printable(c, profile))) {
            if (nh_buf_append(out, ch, (size_t)len))
                return NH_NOMEM;
            continue;
        }
        if (utf8) {
            if (put_u_escape(out, c))
                return NH_NOMEM;
        } else if (put_hex_byte(out, (uint8_t)c)) {
            return NH_NOMEM;
        }
    }
    return nh_buf_putc(out, '"');
}

/* rb_str_dump: ASCII only output; in a UTF-8 string a valid non-ASCII
 * character becomes \uXXXX / \u{X}, every other byte >= 0x80 \xNN. */
int nh_dump(nh_buf *out, const uint8_t *s, size_t n, int utf8)
{
    const uint8_t *p = s, *end = s + n;
    if (nh_buf_reserve(out, n + 2) || nh_buf_putc(out, '"'))
        return NH_NOMEM;
    while (p < end) {
        uint8_t c = *p++;
        char l;
        if (c == '"' || c == '\\') {
            uint8_t e[2] = { '\\', c };
            if (nh_buf_append(out, e, 2))
                return NH_NOMEM;
        } else if ((l = escape_letter(c)) != 0) {
            uint8_t e[2] = { '\\', (uint8_t)l };
            if (nh_buf_append(out, e, 2))
                return NH_NOMEM;
        } else if (c == '#') {
            if ((is_evstr(p, end) && nh_buf_putc(out, '\\')) || nh_buf_putc(out, '#'))
                return NH_NOMEM;
        } else if (is_print_ascii(c)) {
            if (nh_buf_putc(out, c))
                return NH_NOMEM;
        } else {
            uint32_t cp;
            int len;
            if (utf8 && c >= 0x80 && (len = utf8_mbclen(p - 1, (size_t)(end - p + 1), &cp)) > 0) {
                if (put_u_escape(out, cp))
                    return NH_NOMEM;
                p += len - 1;
            } else if (put_hex_byte(out, c)) {
                return NH_NOMEM;
            }
        }
    }
    return nh_buf_putc(out, '"');
}

/* ---- String#scrub (enc_str_scrub) --------------------------------------- */

static const uint8_t REPLACEMENT[3] = { 0xEF, 0xBF, 0xBD };

int nh_scrub_utf8(nh_buf *out, const uint8_t *s, size_t n)
{
    size_t i = 0, from = 0;
    uint32_t cp;
    if (nh_buf_reserve(out, n))
        return NH_NOMEM;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int r = utf8_mbclen(s + i, n - i, &cp);
        if (r > 0) {
            i += (size_t)r;
            continue;
        }
        if (nh_buf_append(out, s + from, i - from))
            return NH_NOMEM;
        size_t clen;
        if (r == MB_NEEDMORE) {
            /* a truncated character at the end: one replacement for it */
            clen = n - i;
        } else {
            /* MRI replaces the longest prefix (of at most 3 bytes) that is
             * still an incomplete character, else a single byte. */
            clen = n - i < 4 ? n - i : 4;
            if (clen <= 2) {
                clen = 1;
            } else {
                for (clen--; clen > 1; clen--)
                    if (utf8_mbclen(s + i, clen, &cp) == MB_NEEDMORE)
                        break;
            }
        }
        if (nh_buf_append(out, REPLACEMENT, 3))
            return NH_NOMEM;
        i += clen;
        from = i;
    }
    return nh_buf_append(out, s + from, n - from);
}

/* ---- String#strip ------------------------------------------------------- */

/* MRI strips ASCII whitespace (\t \n \v \f \r and space) and NUL from both
 * ends; none of these bytes occurs inside a multibyte UTF-8 character, so
 * this works on bytes.  (MRI raises ArgumentError "invalid byte sequence in
 * UTF-8" for a string that is not valid UTF-8; this function then strips
 * as String#strip does on the same bytes as a binary string.)  The bytes:
 * nh_strip_byte. */
void nh_strip(const uint8_t *s, size_t n, size_t *start, size_t *end)
{
    size_t a = 0, b = n;
    while (a < b && nh_strip_byte(s[a]))
        a++;
    while (b > a && nh_strip_byte(s[b - 1]))
        b--;
    *start = a;
    *end = b;
}
