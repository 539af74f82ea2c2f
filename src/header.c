/* Net::HTTPHeader: a case-insensitive, insertion-ordered, multi-valued store. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void nh_headers_init(nh_headers *h, int profile, int binary)
{
    memset(h, 0, sizeof *h);
    h->profile = profile;
    h->binary = binary;
}

void nh_headers_free(nh_headers *h)
{
    nh_buf_free(&h->bytes);
    free(h->fields);
    free(h->vals);
    free(h->index);
    nh_headers_init(h, h->profile, h->binary);
}

void nh_headers_reset(nh_headers *h)
{
    h->bytes.len = 0;
    h->nfields = h->nlive = h->nvals = 0;
    h->seen = 0;
    if (h->index)
        memset(h->index, 0, h->index_cap * sizeof *h->index);
}

int nh_headers_key(const nh_headers *h, nh_buf *out, const uint8_t *key, size_t klen)
{
    if (h->binary)
        return nh_ascii_downcase(out, key, klen);
    return nh_utf8_downcase(out, key, klen, h->profile);
}

static uint32_t hash_name(const uint8_t *s, size_t n)
{
    uint32_t x = 2166136261u;
    for (size_t i = 0; i < n; i++)
        x = (x ^ s[i]) * 16777619u;
    return x;
}

static int name_eq(const nh_headers *h, const nh_field *f, const uint8_t *s, size_t n)
{
    return f->name_len == n && nh_same_bytes(h->bytes.data + f->name_off, s, n);
}

/* Small stores are scanned; an index is built once they grow. */
#define NH_INDEX_MIN 16

static int index_insert(nh_headers *h, uint32_t fi)
{
    const nh_field *f = &h->fields[fi];
    uint32_t mask = h->index_cap - 1;
    uint32_t i = hash_name(h->bytes.data + f->name_off, f->name_len) & mask;
    while (h->index[i] != 0)
        i = (i + 1) & mask;
    h->index[i] = fi + 1;
    return NH_OK;
}

static int index_rebuild(nh_headers *h)
{
    uint32_t cap = 64;
    while (cap < h->nfields * 2u + 2u) {
        if (cap > UINT32_MAX / 4)
            return NH_NOMEM;
        cap *= 2;
    }
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return NH_NOMEM;
    free(h->index);
    h->index = ix;
    h->index_cap = cap;
    for (uint32_t fi = 0; fi < h->nfields; fi++)
        if (h->fields[fi].live)
            index_insert(h, fi);
    return NH_OK;
}

/* A name's bit in h->seen: by its length and first byte. */
static uint64_t seen_bit(const uint8_t *s, size_t n)
{
    return (uint64_t)1 << ((n + (n ? s[0] * 5u : 0)) & 63);
}

long nh_headers_find(const nh_headers *h, const uint8_t *lkey, size_t llen)
{
    if (!(h->seen & seen_bit(lkey, llen)))
        return -1;
    if (!h->index) {
        for (uint32_t fi = 0; fi < h->nfields; fi++)
            if (name_eq(h, &h->fields[fi], lkey, llen) && h->fields[fi].live)
                return (long)fi;
        return -1;
    }
    uint32_t mask = h->index_cap - 1;
    uint32_t i = hash_name(lkey, llen) & mask;
    for (;;) {
        uint32_t e = h->index[i];
        if (e == 0)
            return -1;
        if (e != NH_NIL && h->fields[e - 1].live && name_eq(h, &h->fields[e - 1], lkey, llen))
            return (long)(e - 1);
        i = (i + 1) & mask;
    }
}

static int store_bytes(nh_headers *h, const uint8_t *p, size_t n, uint32_t *off)
{
    if (h->bytes.len > UINT32_MAX - n || n > UINT32_MAX)
        return NH_NOMEM;
    *off = (uint32_t)h->bytes.len;
    return nh_buf_append(&h->bytes, p, n);
}

int nh_headers_set(nh_headers *h, const uint8_t *lkey, size_t llen)
{
    long fi = nh_headers_find(h, lkey, llen);
    if (fi >= 0) {
        nh_field *f = &h->fields[fi];
        f->head = f->tail = NH_NIL;
        f->nvals = 0;
        return (int)fi;
    }
    return nh_headers_add(h, lkey, llen);
}

/* A new field named by the store's bytes [off, off + len). */
static inline __attribute__((always_inline)) int add_named(nh_headers *h, uint32_t off, size_t llen)
{
    if (h->nfields == h->capfields) {
        uint32_t cap = h->capfields ? h->capfields * 2 : 16;
        if (cap < h->capfields)
            return NH_NOMEM;
        nh_field *nf = realloc(h->fields, (size_t)cap * sizeof *nf);
        if (!nf)
            return NH_NOMEM;
        h->fields = nf;
        h->capfields = cap;
    }
    nh_field *f = &h->fields[h->nfields];
    f->name_off = off;
    f->name_len = (uint32_t)llen;
    h->seen |= seen_bit(h->bytes.data + off, llen);
    f->head = f->tail = NH_NIL;
    f->nvals = 0;
    f->live = 1;
    uint32_t idx = h->nfields++;
    h->nlive++;
    if (h->index) {
        if ((h->nfields + 1) * 2 > h->index_cap) {
            if (index_rebuild(h))
                return NH_NOMEM;
        } else {
            index_insert(h, idx);
        }
    } else if (h->nfields > NH_INDEX_MIN) {
        if (index_rebuild(h))
            return NH_NOMEM;
    }
    return (int)idx;
}

int nh_headers_add(nh_headers *h, const uint8_t *lkey, size_t llen)
{
    uint32_t off;
    if (store_bytes(h, lkey, llen, &off))
        return NH_NOMEM;
    return add_named(h, off, llen);
}

/* Appends a value to a field's list, its bytes at the store's [off, off + vlen). */
static inline __attribute__((always_inline)) int push_at(nh_headers *h, long field, uint32_t off, size_t vlen)
{
    if (h->nvals == h->capvals) {
        uint32_t cap = h->capvals ? h->capvals * 2 : 16;
        if (cap < h->capvals)
            return NH_NOMEM;
        nh_value *nv = realloc(h->vals, (size_t)cap * sizeof *nv);
        if (!nv)
            return NH_NOMEM;
        h->vals = nv;
        h->capvals = cap;
    }
    nh_value *v = &h->vals[h->nvals];
    v->off = off;
    v->len = (uint32_t)vlen;
    v->next = NH_NIL;
    nh_field *f = &h->fields[field];
    if (f->tail == NH_NIL)
        f->head = h->nvals;
    else
        h->vals[f->tail].next = h->nvals;
    f->tail = h->nvals++;
    f->nvals++;
    return NH_OK;
}

int nh_headers_push(nh_headers *h, long field, const uint8_t *val, size_t vlen)
{
    uint32_t off;
    if (store_bytes(h, val, vlen, &off))
        return NH_NOMEM;
    return push_at(h, field, off, vlen);
}

/* add_field(key, val) of a value known to be a String without CR or LF:
 *   stringified_downcased_key = key.downcase.to_s
 *   if @header.key?(stringified_downcased_key)
 *     append_field_value(@header[stringified_downcased_key], val)
 *   else
 *     set_field(key, val)
 * The key is downcased straight into the store, where it stays if new,
 * and the value follows it. */
int nh_headers_add_field(nh_headers *h, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen)
{
    size_t at = h->bytes.len, llen = klen;
    if ((uint64_t)at + klen + vlen > UINT32_MAX)
        return NH_NOMEM;
    if (h->binary) {
        if (nh_buf_reserve_fast(&h->bytes, klen + vlen))
            return NH_NOMEM;
        nh_ascii_downcase_to(h->bytes.data + at, key, klen);
    } else {
        if (nh_headers_key(h, &h->bytes, key, klen))
            return NH_NOMEM;
        llen = h->bytes.len - at;
        h->bytes.len = at;
        if ((uint64_t)at + llen + vlen > UINT32_MAX || nh_buf_reserve_fast(&h->bytes, llen + vlen))
            return NH_NOMEM;
    }
    long fi = nh_headers_find(h, h->bytes.data + at, llen);
    if (fi < 0) {
        h->bytes.len = at + llen;
        if ((fi = add_named(h, (uint32_t)at, llen)) < 0)
            return NH_NOMEM;
    }
    uint32_t off = (uint32_t)h->bytes.len;
    nh_copy_inline(h->bytes.data + off, val, vlen);
    h->bytes.len += vlen;
    return push_at(h, fi, off, vlen);
}

int nh_headers_delete(nh_headers *h, const uint8_t *lkey, size_t llen)
{
    long fi = nh_headers_find(h, lkey, llen);
    if (fi < 0)
        return 0;
    h->fields[fi].live = 0;
    h->nlive--;
    return 1;
}

int nh_headers_join(const nh_headers *h, long field, nh_buf *out)
{
    const nh_field *f = &h->fields[field];
    for (uint32_t v = f->head; v != NH_NIL; v = h->vals[v].next) {
        if (v != f->head && nh_buf_append(out, ", ", 2))
            return NH_NOMEM;
        if (nh_buf_append(out, h->bytes.data + h->vals[v].off, h->vals[v].len))
            return NH_NOMEM;
    }
    return NH_OK;
}

#define UP1(c) (uint8_t)((c) >= 'a' && (c) <= 'z' ? (c) - 32 : (c))
#define LO1(c) (uint8_t)((c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))
#define T4(F, c) F(c), F(c + 1), F(c + 2), F(c + 3)
#define T16(F, c) T4(F, c), T4(F, c + 4), T4(F, c + 8), T4(F, c + 12)
#define T64(F, c) T16(F, c), T16(F, c + 16), T16(F, c + 32), T16(F, c + 48)
static const uint8_t UPPER[256] = {T64(UP1, 0), T64(UP1, 64), T64(UP1, 128), T64(UP1, 192)};
static const uint8_t LOWER[256] = {T64(LO1, 0), T64(LO1, 64), T64(LO1, 128), T64(LO1, 192)};

/* name.to_s.split('-').map(&:capitalize).join('-'): split drops trailing
 * empty parts, so "x-" gives "X" and "--" gives "". */
int nh_capitalize_name(nh_buf *out, const uint8_t *name, size_t n, int profile, int binary)
{
    while (n > 0 && name[n - 1] == '-')
        n--;
    /* ASCII names (all of them on the wire): table-driven, no calls */
    size_t k = 0;
    while (k < n && name[k] < 0x80)
        k++;
    if (k == n || binary) {
        if (nh_buf_reserve_fast(out, n))
            return NH_NOMEM;
        uint8_t *o = out->data + out->len;
        const uint8_t *t = UPPER;
        for (size_t i = 0; i < n; i++) {
            uint8_t c = t[name[i]];
            o[i] = c;
            t = c == '-' ? UPPER : LOWER;
        }
        out->len += n;
        return NH_OK;
    }
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < n && name[j] != '-')
            j++;
        int rc = binary ? nh_ascii_capitalize(out, name + i, j - i)
                        : nh_utf8_capitalize(out, name + i, j - i, profile);
        if (rc)
            return rc;
        if (j >= n)
            return NH_OK;
        if (nh_buf_putc(out, '-'))
            return NH_NOMEM;
        i = j + 1;
    }
}

int nh_headers_write(const nh_headers *h, nh_buf *out)
{
    for (uint32_t fi = 0; fi < h->nfields; fi++) {
        const nh_field *f = &h->fields[fi];
        if (!f->live)
            continue;
        if (nh_capitalize_name(out, h->bytes.data + f->name_off, f->name_len, h->profile, h->binary) ||
            nh_buf_append(out, ": ", 2) || nh_headers_join(h, (long)fi, out) ||
            nh_buf_append(out, "\r\n", 2))
            return NH_NOMEM;
    }
    return NH_OK;
}

/* String#[0, chars] of a UTF-8 string: the bytes of its first `chars`
 * characters. */
size_t nh_first_chars(const uint8_t *s, size_t n, size_t chars)
{
    size_t i = 0;
    while (i < n && chars > 0) {
        i++;
        while (i < n && (s[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    return i;
}

/* key.to_s[0, 30].inspect: 30 characters of a UTF-8 key, 30 bytes of a
 * binary one. */
static int put_key_head(nh_buf *out, const uint8_t *k, size_t n, int binary, int profile)
{
    if (binary)
        return nh_inspect(out, k, n < 30 ? n : 30, 0, profile);
    return nh_inspect(out, k, nh_first_chars(k, n, 30), 1, profile);
}

/* private def validate_field_name(key)       (head's net-http)
 *   if key.to_s.bytesize > MAX_KEY_LENGTH
 *     raise ArgumentError, "too long (#{key.to_s.bytesize} bytes) header: #{key.to_s[0, 30].inspect}..."
 *   end
 *   if /[\x00-\x1f\x7f:]/n.match?(key.to_s.b)
 *     raise ArgumentError, "header field name cannot include control characters or colon: #{key.to_s[0, 30].inspect}"
 *   end
 * (binary: a key read from the wire, a binary String) */
int nh_validate_field_name(nh_buf *out, nh_error *err, const uint8_t *k, size_t n, int binary, int profile)
{
    if (n > NH_HEAD_KEY_MAX) {
        out->len = 0;
        err->cls = NH_E_ARGUMENT;
        if (nh_put_str(out, "too long (") || nh_put_uint(out, n) || nh_put_str(out, " bytes) header: ") ||
            put_key_head(out, k, n, binary, profile) || nh_put_str(out, "..."))
            return NH_NOMEM;
        return NH_ERROR;
    }
    for (size_t i = 0; i < n; i++) {
        if (k[i] < 0x20 || k[i] == 0x7f || k[i] == ':') {
            out->len = 0;
            err->cls = NH_E_ARGUMENT;
            if (nh_put_str(out, "header field name cannot include control characters or colon: ") ||
                put_key_head(out, k, n, binary, profile))
                return NH_NOMEM;
            return NH_ERROR;
        }
    }
    return NH_OK;
}

/* if val.bytesize > MAX_FIELD_LENGTH         (head's net-http)
 *   raise ArgumentError, "header #{key} has too long field value: #{val.bytesize} bytes (limit #{MAX_FIELD_LENGTH})"
 * end */
int nh_check_field_length(nh_buf *out, nh_error *err, const uint8_t *k, size_t klen, size_t vlen)
{
    if (vlen <= NH_HEAD_FIELD_MAX)
        return NH_OK;
    out->len = 0;
    err->cls = NH_E_ARGUMENT;
    if (nh_put_str(out, "header ") || nh_buf_append(out, k, klen) || nh_put_str(out, " has too long field value: ") ||
        nh_put_uint(out, vlen) || nh_put_str(out, " bytes (limit ") || nh_put_uint(out, NH_HEAD_FIELD_MAX) ||
        nh_put_str(out, ")"))
        return NH_NOMEM;
    return NH_ERROR;
}
