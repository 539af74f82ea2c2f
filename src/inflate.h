/*
 * A streaming inflater that reproduces, byte for byte and error for error,
 * what Net::HTTP's response body decoding gets from Ruby's zlib:
 * Zlib::Inflate.new(32 + Zlib::MAX_WBITS) fed the body chunk by chunk, then
 * Net::HTTPResponse::Inflater#finish.
 *
 *   - A zlib (RFC 1950) or gzip (RFC 1952) header is detected automatically;
 *     anything else (a raw RFC 1951 stream included) is "incorrect header
 *     check".  Only the first gzip member is decoded, and every byte after
 *     the end of the stream is ignored.
 *   - Errors carry zlib's class and message: Zlib::DataError ("invalid block
 *     type", "incorrect data check", ...), Zlib::NeedDict "need dictionary"
 *     (a zlib header with FDICT set), and, from nh_inflate_finish on a
 *     truncated stream, Zlib::BufError "buffer error".  Checks run in zlib's
 *     order and need exactly as many input bits as zlib's do, so a truncated
 *     or corrupt stream fails the same way whatever the chunking.
 *   - Errors are sticky: once a call fails, every later feed and finish
 *     fails again with the same class and message.
 *
 * The state is caller-owned (embed it or allocate it; no globals, no heap
 * use of its own): a 32 KiB window, the Huffman tables and a few counters.
 * Input is consumed completely by every feed; produced bytes are appended to
 * the caller's nh_buf.
 */
#ifndef NETHTTP_INFLATE_H
#define NETHTTP_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define NH_INFLATE_WSIZE 32768u
/* Decode table sizes: root lookups of 11 bits (literal/length) and 8 bits
 * (distance) plus the largest possible set of subtables for a 15-bit code
 * (computed with zlib's examples/enough.c: "enough 288 11 15", "enough 32 8 15"). */
#define NH_INFLATE_LROOT 11
#define NH_INFLATE_DROOT 8
#define NH_INFLATE_LENOUGH 2342
#define NH_INFLATE_DENOUGH 402

typedef struct nh_inflate {
    uint64_t max_output;  /* 0: unlimited */
    uint64_t total_out;   /* bytes produced so far */
    uint64_t total_in;    /* bytes fed so far */
    uint64_t hold;        /* bit accumulator, LSB first; bits above `bits` are 0 */
    uint32_t bits;
    uint32_t mode;
    uint32_t gzip;        /* 1: gzip wrapper, 0: zlib wrapper */
    uint32_t gzflags;     /* gzip FLG byte */
    uint32_t check;       /* running adler32 / crc32 of the output */
    uint32_t hcrc;        /* crc32 of the gzip header so far */
    uint32_t length;      /* stored block / extra field bytes left, match length */
    uint32_t dist;        /* match distance */
    uint32_t extra;       /* extra bits of the pending length or distance */
    uint32_t last;        /* current block is the final one */
    uint32_t fixed;       /* tables hold the fixed codes */
    uint32_t nlen, ndist, ncode, have; /* dynamic block header */
    uint32_t whave, wnext;             /* window fill and next write position */
    int err_cls;          /* sticky error (mode == error) */
    const char *err_msg;  /* NULL for the limit error (formatted on demand) */
    uint8_t lens[320];    /* code lengths being read: 286 + 30 (+ 19 precode) */
    uint32_t cltab[128];  /* code length code (7-bit lookups) */
    uint32_t ltab[NH_INFLATE_LENOUGH];
    uint32_t dtab[NH_INFLATE_DENOUGH];
    uint8_t window[NH_INFLATE_WSIZE];
} nh_inflate;

/* max_output: 0 = unlimited; producing more than max_output bytes fails with
 * NH_E_LIMIT "inflated body exceeds the limit of N bytes". */
void nh_inflate_init(nh_inflate *z, uint64_t max_output);

/* Feeds n input bytes (any chunking, down to one byte at a time) and appends
 * the bytes they produce to out.  Returns NH_OK, NH_ERROR (err->cls set, the
 * message written to msg; out may then hold a partial, meaningless tail) or
 * NH_NOMEM (growing out failed; also sticky).  Feeding 0 bytes does nothing;
 * bytes fed after the end of the stream are ignored. */
int nh_inflate_feed(nh_inflate *z, const uint8_t *in, size_t n, nh_buf *out, nh_buf *msg,
                    nh_error *err);

/* End of the body, as Net::HTTPResponse::Inflater#finish: NH_OK if the stream
 * ended, or if no byte was ever fed (Inflater#finish skips Zlib's finish when
 * total_in is 0); the pending error if a feed failed; otherwise
 * Zlib::BufError "buffer error". */
int nh_inflate_finish(nh_inflate *z, nh_buf *msg, nh_error *err);

/* Bytes produced so far (Inflater#bytes_inflated). */
uint64_t nh_inflate_total_out(const nh_inflate *z);

/* 1 once the end of the stream (trailer included) has been decoded. */
int nh_inflate_ended(const nh_inflate *z);

/* The number of bytes of the current stored block still to come when the
 * next input byte will be copied to the output unchanged (the inflater is
 * inside a stored block's data), else 0. */
uint32_t nh_inflate_stored_left(const nh_inflate *z);

#endif
