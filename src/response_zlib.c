/* Content decoding in the response parser: the zlib-yield emulation. */
#include "response.h"

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
    return nh_resp_put_body(f, 1, off, n);
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
int nh_resp_zflush(feed *f)
{
    nh_resp *p = f->p;
    if (!p->zheld)
        return NH_OK;
    p->zheld = 0;
    return zfeed(f, &p->zbyte, 1, 1);
}

/* Body bytes s[0..n) at stream position pos, in pieces as BufferedIO hands
 * them over; `ends`: the body (or chunk) ends after them. */
int nh_resp_inflate_bytes(feed *f, const uint8_t *s, size_t n, uint64_t pos, int ends)
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
    return ends ? nh_resp_zflush(f) : NH_OK;
}

/* The inflater's ensure clause: Inflater#finish, then the content-length
 * rewrite.  read_body_0 leaves the inflater's block with a `return` on the
 * chunked and Content-Length paths, so `success = true` is never reached
 * there and a finish error (a truncated stream's Zlib::BufError) is dropped,
 * with the rewrite after it; only read_all ends the block normally. */
int nh_resp_inflate_finish(feed *f)
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
        long fi = nh_resp_field(p, "content-length");
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
