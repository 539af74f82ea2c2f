/* The response parser's state, shared by its files (not part of the API):
 *   response.c         the state machine: read_new + reading_body
 *   response_class.c   the class table (CODE_TO_OBJ)
 *   response_events.c  the events it appends (NH_EV_*, head blocks)
 *   response_strict.c  strict mode (RFC 9112)
 *   response_zlib.c    what Ruby's zlib yields, and when */
#ifndef NH_RESPONSE_H
#define NH_RESPONSE_H

#include <stdlib.h>
#include <string.h>

#include "inflate.h"
#include "internal.h"

typedef struct code_class {
    char code[4];
    const char *name;
    uint8_t has_body;
} code_class;

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
    uint64_t head_bound;  /* head_bytes past which head's net/http raises "response
                           * header too large" (NH_PROFILE_HEAD), or all ones */
    /* status line */
    nh_buf st;            /* version bytes, then message bytes */
    size_t ver_len, msg_len;
    int has_ver, has_msg;
    uint8_t code[3];
    const code_class *cls;
    /* header fields */
    nh_headers hdr;
    int pending;          /* key/value read but not yet added */
    const uint8_t *kp;    /* its key and value as read: views of this */
    size_t kn;            /* call's input, */
    const uint8_t *vp;
    size_t vn;
    int v_kept;           /* ... or (1) of key and val, where they outlive the input */
    int v_plain;          /* the value is known to hold no CR (field_line) */
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

static inline int is_space(uint8_t c) /* \s in a binary regexp */
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}
static inline int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}
static inline int is_word(uint8_t c) /* \w in a binary regexp */
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static inline uint8_t lower(uint8_t c)
{
    return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}
/* A decimal digit run with leading zeros dropped. */
static inline void digits(const uint8_t **s, size_t *n)
{
    while (*n > 1 && **s == '0') {
        (*s)++;
        (*n)--;
    }
}
static inline uint64_t dec_u64(const uint8_t *s, size_t n) /* saturating */
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
static inline int ascii_ieq(const uint8_t *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != (uint8_t)w[i])
            return 0;
    return 1;
}

/* response_class.c */
const code_class *nh_resp_class(const uint8_t code[3]);

/* response.c */
int nh_resp_fail(feed *f, int cls, const char *msg);
int nh_resp_fail_with(feed *f, int cls, const char *prefix, const uint8_t *s, size_t n);
int nh_resp_fail_limit(feed *f, const char *what, uint64_t limit);
int nh_resp_fail_eof(feed *f);
long nh_resp_field(const nh_resp *p, const char *lname);
int nh_resp_joined(nh_resp *p, long fi);
int nh_resp_message_end(feed *f);

/* response_events.c */
int nh_resp_put_head(feed *f, int type);
int nh_resp_put_body(feed *f, int src, size_t off, size_t len);

/* response_strict.c */
int nh_resp_strict_fail(feed *f, const char *what);
long nh_resp_strict_crlf(feed *f, const uint8_t *s, size_t n, int *rc);
int nh_resp_strict_status(feed *f, const uint8_t *s, size_t n);
int nh_resp_strict_field(feed *f, const uint8_t *s, size_t m, int pending);
int nh_resp_strict_framing(feed *f);
int nh_resp_strict_chunk_size(feed *f, const uint8_t *s, size_t n);

/* response_zlib.c */
int nh_resp_inflate_bytes(feed *f, const uint8_t *s, size_t n, uint64_t pos, int ends);
int nh_resp_zflush(feed *f);
int nh_resp_inflate_finish(feed *f);

#endif
