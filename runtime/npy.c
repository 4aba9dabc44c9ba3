/*
** npy.c - reader and writer for NumPy .npy files. See npy.h for the contract.
**
** File layout (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
**   "\x93NUMPY" major minor
**   header length: uint16 LE (version 1.0) or uint32 LE (2.0, 3.0)
**   header: Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
**   raw element data
**
** Everything read from the file is distrusted: the header length, shape and
** data size are checked against the file size before anything is allocated.
*/
#define _DEFAULT_SOURCE /* madvise, for hugemem.h */
#include "npy.h"
#include "hugemem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define NPY_MAGIC       "\x93NUMPY"
#define NPY_MAGIC_LEN   6
#define NPY_ALIGN       64
#define NPY_MAX_HEADER  (1u << 20)   /* numpy itself refuses headers over 10000 bytes by default */
#define NPY_GROWTH      21           /* numpy's GROWTH_AXIS_MAX_DIGITS */
#define NPY_IO_CHUNK    ((size_t)1 << 30)

#if defined(__GNUC__)
#define NPY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NPY_PRINTF(f, a)
#endif

/* Writes "PATH: <message>" into err. Always returns -1. */
static int npy_fail(char *err, size_t errlen, const char *path, const char *fmt, ...) NPY_PRINTF(4, 5);
static int npy_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (err == NULL || errlen == 0) return -1;
    n = snprintf(err, errlen, "%s: ", path ? path : "(null)");
    if (n >= 0 && (size_t)n < errlen) {
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

size_t npy_dtype_size(npy_dtype t)
{
    switch (t) {
    case NPY_F32:  return 4;
    case NPY_F64:  return 8;
    case NPY_BOOL: return 1;
    case NPY_C64:  return 8;
    case NPY_C128: return 16;
    }
    return 0;
}

const char *npy_dtype_name(npy_dtype t)
{
    switch (t) {
    case NPY_F32:  return "<f4";
    case NPY_F64:  return "<f8";
    case NPY_BOOL: return "|b1";
    case NPY_C64:  return "<c8";
    case NPY_C128: return "<c16";
    }
    return "?";
}

void npy_free(npy_array *a)
{
    if (a == NULL) return;
    free(a->data);
    a->data = NULL;
}

static int npy_host_le(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* The numbers in one element: 2 for complex (each swapped on its own). */
static size_t npy_parts(npy_dtype t) { return t == NPY_C64 || t == NPY_C128 ? 2 : 1; }

/* Reverses the bytes of each of the N ESIZE-byte elements at P. */
static void npy_bswap(unsigned char *p, size_t n, size_t esize)
{
    size_t i, j;
    unsigned char t;

    if (esize < 2) return;
    for (i = 0; i < n; i++, p += esize) {
        for (j = 0; j < esize / 2; j++) {
            t = p[j];
            p[j] = p[esize - 1 - j];
            p[esize - 1 - j] = t;
        }
    }
}

/* Reads exactly N bytes. Returns 0, 1 at end of file, -1 on error (errno set). */
static int npy_read_full(int fd, void *buf, size_t n)
{
    unsigned char *p = buf;
    ssize_t r;

    while (n > 0) {
        r = read(fd, p, n < NPY_IO_CHUNK ? n : NPY_IO_CHUNK);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) return 1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Writes exactly N bytes. Returns 0 or -1 (errno set). */
static int npy_write_full(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    ssize_t w;

    while (n > 0) {
        w = write(fd, p, n < NPY_IO_CHUNK ? n : NPY_IO_CHUNK);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
** Header parser. The header is a Python dict literal with exactly the keys
** 'descr' (a string), 'fortran_order' (True or False) and 'shape' (a tuple of
** non-negative ints), in any order, with arbitrary white space and optional
** trailing commas, as accepted by numpy's ast.literal_eval-based reader.
*/
typedef struct {
    const char *s;          /* header text (not NUL-terminated: may contain NUL bytes) */
    size_t      n;          /* its length */
    size_t      i;          /* cursor */
    const char *path;
    char       *err;
    size_t      errlen;
} npy_hdr;

typedef struct {
    const char *descr;      /* points into the header text */
    size_t    descr_len;
    int       structured;   /* descr was a list or dict */
    npy_dtype dtype;
    int       file_le;      /* element bytes in the file are little-endian */
    int       fortran;
    int       ndim;
    int64_t   shape[NPY_MAX_DIMS];
} npy_meta;

static int hp_peek(const npy_hdr *h)
{
    return h->i < h->n ? (unsigned char)h->s[h->i] : -1;
}

static void hp_ws(npy_hdr *h)
{
    int c;
    while ((c = hp_peek(h)) == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
        h->i++;
}

/* "malformed header: expected WHAT at offset N, found X". Returns -1. */
static int hp_bad(const npy_hdr *h, const char *what)
{
    int c = hp_peek(h);
    char found[24];

    if (c < 0)
        snprintf(found, sizeof found, "end of header");
    else if (c >= 0x20 && c < 0x7f)
        snprintf(found, sizeof found, "'%c'", c);
    else
        snprintf(found, sizeof found, "byte 0x%02x", (unsigned)c);
    return npy_fail(h->err, h->errlen, h->path,
                    "malformed header: expected %s at offset %zu, found %s", what, h->i, found);
}

/* Copies at most 40 bytes of S into OUT (size >= 48) for quoting in a message. */
static void npy_quote(char *out, const char *s, size_t n)
{
    size_t i, m = n > 40 ? 40 : n;
    unsigned char c;

    for (i = 0; i < m; i++) {
        c = (unsigned char)s[i];
        out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (m < n) {
        memcpy(out + m, "...", 3);
        m += 3;
    }
    out[m] = '\0';
}

/* Parses a quoted string without escapes; sets *STR and *LEN to its contents. */
static int hp_string(npy_hdr *h, const char **str, size_t *len)
{
    int q = hp_peek(h), c;
    size_t start;

    if (q != '\'' && q != '"') return hp_bad(h, "a quoted string");
    start = ++h->i;
    while ((c = hp_peek(h)) != q) {
        if (c < 0 || c == '\n' || c == '\r')
            return npy_fail(h->err, h->errlen, h->path,
                            "malformed header: unterminated string at offset %zu", start - 1);
        if (c == '\\')
            return npy_fail(h->err, h->errlen, h->path,
                            "malformed header: escape sequence in string at offset %zu", h->i);
        h->i++;
    }
    *str = h->s + start;
    *len = h->i - start;
    h->i++;
    return 0;
}

static int hp_is(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Skips a bracketed value (a structured descr), strings included. */
static int hp_skip_nested(npy_hdr *h)
{
    size_t start = h->i, n;
    const char *s;
    int depth = 0, c;

    for (;;) {
        c = hp_peek(h);
        if (c < 0)
            return npy_fail(h->err, h->errlen, h->path,
                            "malformed header: unbalanced '%c' at offset %zu", h->s[start], start);
        if (c == '\'' || c == '"') {
            if (hp_string(h, &s, &n) != 0) return -1;
            continue;
        }
        h->i++;
        if (c == '[' || c == '(' || c == '{') depth++;
        else if ((c == ']' || c == ')' || c == '}') && --depth == 0) return 0;
    }
}

/* Syntax only; the type is checked by npy_check_descr once the whole dict has parsed. */
static int hp_descr(npy_hdr *h, npy_meta *m)
{
    int c = hp_peek(h);

    if (c == '[' || c == '{') {
        m->structured = 1;
        return hp_skip_nested(h);
    }
    return hp_string(h, &m->descr, &m->descr_len);
}

static int npy_check_descr(npy_hdr *h, npy_meta *m)
{
    const char *s = m->descr;
    size_t n = m->descr_len;
    char q[48];

    if (m->structured)
        return npy_fail(h->err, h->errlen, h->path,
                        "unsupported dtype: structured dtype; use '<f8', '<f4' or '|b1'");
    if (hp_is(s, n, "<f4") || hp_is(s, n, "=f4") || hp_is(s, n, "<f8") || hp_is(s, n, "=f8")) {
        m->dtype = s[2] == '4' ? NPY_F32 : NPY_F64;
        m->file_le = s[0] == '<' ? 1 : npy_host_le();
        return 0;
    }
    if (hp_is(s, n, "<c8") || hp_is(s, n, "=c8") || hp_is(s, n, "<c16") || hp_is(s, n, "=c16")) {
        m->dtype = s[2] == '8' ? NPY_C64 : NPY_C128;
        m->file_le = s[0] == '<' ? 1 : npy_host_le();
        return 0;
    }
    if (hp_is(s, n, "|b1")) {
        m->dtype = NPY_BOOL;
        m->file_le = 1;
        return 0;
    }
    npy_quote(q, s, n);
    if (hp_is(s, n, ">f4") || hp_is(s, n, ">f8") || hp_is(s, n, ">c8") || hp_is(s, n, ">c16"))
        return npy_fail(h->err, h->errlen, h->path,
                        "unsupported dtype '%s' (big-endian); use '<f8', '<f4', '<c16' or '<c8'", q);
    return npy_fail(h->err, h->errlen, h->path,
                    "unsupported dtype '%s'; use '<f8', '<f4', '<c16', '<c8' or '|b1'", q);
}

static int hp_bool(npy_hdr *h, int *v)
{
    size_t start = h->i;
    int c;
    char q[48];

    while ((c = hp_peek(h)) >= 0 && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                      (c >= '0' && c <= '9') || c == '_'))
        h->i++;
    if (hp_is(h->s + start, h->i - start, "True"))  { *v = 1; return 0; }
    if (hp_is(h->s + start, h->i - start, "False")) { *v = 0; return 0; }
    if (h->i == start) return hp_bad(h, "True or False for 'fortran_order'");
    npy_quote(q, h->s + start, h->i - start);
    return npy_fail(h->err, h->errlen, h->path,
                    "malformed header: 'fortran_order' must be True or False, found '%s'", q);
}

/* One dimension: decimal digits with an optional Python 2 'L' suffix. */
static int hp_dim(npy_hdr *h, int64_t *v)
{
    size_t start = h->i;
    int c, neg = 0;
    int64_t x = 0;
    char q[48];

    if (hp_peek(h) == '-') {
        neg = 1;
        h->i++;
        hp_ws(h);
    }
    c = hp_peek(h);
    if (c < '0' || c > '9') return hp_bad(h, "an integer dimension");
    if (c == '0' && h->i + 1 < h->n && h->s[h->i + 1] >= '0' && h->s[h->i + 1] <= '9')
        return npy_fail(h->err, h->errlen, h->path,
                        "malformed header: dimension with leading zero at offset %zu", h->i);
    while ((c = hp_peek(h)) >= '0' && c <= '9') {
        if (x > (INT64_MAX - (c - '0')) / 10) {
            while ((c = hp_peek(h)) >= '0' && c <= '9') h->i++;
            npy_quote(q, h->s + start, h->i - start);
            return npy_fail(h->err, h->errlen, h->path, "dimension %s in shape is too large", q);
        }
        x = x * 10 + (c - '0');
        h->i++;
    }
    if (c == 'L' || c == 'l') h->i++;
    if (neg && x != 0) {
        npy_quote(q, h->s + start, h->i - start);
        return npy_fail(h->err, h->errlen, h->path, "negative dimension %s in shape", q);
    }
    *v = x;
    return 0;
}

static int hp_shape(npy_hdr *h, npy_meta *m)
{
    int nd = 0, c;
    int64_t d = 0;

    c = hp_peek(h);
    if (c == '[')
        return npy_fail(h->err, h->errlen, h->path,
                        "malformed header: 'shape' must be a tuple, not a list");
    if (c != '(') return hp_bad(h, "a tuple for 'shape'");
    h->i++;
    hp_ws(h);
    if (hp_peek(h) == ')') {
        h->i++;
        m->ndim = 0;
        return 0;
    }
    for (;;) {
        if (hp_dim(h, &d) != 0) return -1;
        if (nd == NPY_MAX_DIMS)
            return npy_fail(h->err, h->errlen, h->path,
                            "too many dimensions in shape (limit %d)", NPY_MAX_DIMS);
        m->shape[nd++] = d;
        hp_ws(h);
        c = hp_peek(h);
        if (c == ',') {
            h->i++;
            hp_ws(h);
            if (hp_peek(h) == ')') break;
            continue;
        }
        if (c == ')') {
            if (nd == 1)
                return npy_fail(h->err, h->errlen, h->path,
                                "malformed header: 'shape' (%lld) is not a tuple; a 1-d shape is written (%lld,)",
                                (long long)d, (long long)d);
            break;
        }
        return hp_bad(h, "',' or ')' in 'shape'");
    }
    h->i++;
    m->ndim = nd;
    return 0;
}

static int hp_header(npy_hdr *h, npy_meta *m)
{
    enum { K_DESCR = 1, K_FORTRAN = 2, K_SHAPE = 4 };
    unsigned seen = 0, k;
    const char *key;
    size_t klen;
    char q[48];
    int c;

    hp_ws(h);
    if (hp_peek(h) != '{') return hp_bad(h, "'{'");
    h->i++;
    for (;;) {
        hp_ws(h);
        if (hp_peek(h) == '}') break;
        if (hp_string(h, &key, &klen) != 0) return -1;
        if (hp_is(key, klen, "descr"))              k = K_DESCR;
        else if (hp_is(key, klen, "fortran_order")) k = K_FORTRAN;
        else if (hp_is(key, klen, "shape"))         k = K_SHAPE;
        else {
            npy_quote(q, key, klen);
            return npy_fail(h->err, h->errlen, h->path,
                            "malformed header: unexpected key '%s' (expected 'descr', 'fortran_order', 'shape')", q);
        }
        if (seen & k) {
            npy_quote(q, key, klen);
            return npy_fail(h->err, h->errlen, h->path, "malformed header: duplicate key '%s'", q);
        }
        seen |= k;
        hp_ws(h);
        if (hp_peek(h) != ':') return hp_bad(h, "':' after key");
        h->i++;
        hp_ws(h);
        if (k == K_DESCR) {
            if (hp_descr(h, m) != 0) return -1;
        } else if (k == K_FORTRAN) {
            if (hp_bool(h, &m->fortran) != 0) return -1;
        } else {
            if (hp_shape(h, m) != 0) return -1;
        }
        hp_ws(h);
        c = hp_peek(h);
        if (c == ',') {
            h->i++;
            continue;
        }
        if (c != '}') return hp_bad(h, "',' or '}'");
        break;
    }
    h->i++;                                  /* '}' */
    hp_ws(h);
    if (h->i != h->n) return hp_bad(h, "end of header after '}'");
    if (!(seen & K_DESCR))
        return npy_fail(h->err, h->errlen, h->path, "malformed header: missing key 'descr'");
    if (!(seen & K_FORTRAN))
        return npy_fail(h->err, h->errlen, h->path, "malformed header: missing key 'fortran_order'");
    if (!(seen & K_SHAPE))
        return npy_fail(h->err, h->errlen, h->path, "malformed header: missing key 'shape'");
    return npy_check_descr(h, m);
}

/*
** Copies NELEM (> 0) elements stored in Fortran order at SRC to C order at
** DST. Walks SRC linearly, keeping the multi-index (dimension 0 fastest)
** and the matching C offset.
*/
static void npy_f_to_c(unsigned char *dst, const unsigned char *src, size_t esize,
                       int ndim, const int64_t *shape, size_t nelem)
{
    size_t cstride[NPY_MAX_DIMS], idx[NPY_MAX_DIMS], s = 1, off = 0, e;
    int k;

    for (k = ndim - 1; k >= 0; k--) {
        cstride[k] = s;
        s *= (size_t)shape[k];
        idx[k] = 0;
    }
    for (e = 0; e < nelem; e++, src += esize) {
        switch (esize) {
        case 8:  memcpy(dst + off * 8, src, 8); break;
        case 4:  memcpy(dst + off * 4, src, 4); break;
        default: memcpy(dst + off * esize, src, esize); break;
        }
        for (k = 0; k < ndim; k++) {
            if (++idx[k] < (size_t)shape[k]) {
                off += cstride[k];
                break;
            }
            idx[k] = 0;
            off -= ((size_t)shape[k] - 1) * cstride[k];
        }
    }
}

static int npy_read_fd(int fd, const char *path, npy_array *out, int huge, char *err, size_t errlen)
{
    struct stat st;
    unsigned char pre[12];
    size_t prelen, hlen, i;
    uint64_t fsize, avail, nbytes;
    int64_t nelem = 1;
    int major, minor, rc, k, zero = 0;
    char *hbuf;
    unsigned char *buf, *tmp;
    npy_hdr h;
    npy_meta m;

    if (fstat(fd, &st) != 0)
        return npy_fail(err, errlen, path, "cannot stat: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return npy_fail(err, errlen, path, "is a directory, not a .npy file");
    if (!S_ISREG(st.st_mode))
        return npy_fail(err, errlen, path, "not a regular file");
    if (st.st_size <= 0)
        return npy_fail(err, errlen, path, "empty file (not a .npy file)");
    fsize = (uint64_t)st.st_size;

    /* Preamble: magic, version, header length. */
    prelen = fsize < 8 ? (size_t)fsize : 8;
    rc = npy_read_full(fd, pre, prelen);
    if (rc < 0) return npy_fail(err, errlen, path, "read error: %s", strerror(errno));
    if (rc > 0) return npy_fail(err, errlen, path, "unexpected end of file (file changed while reading?)");
    if (memcmp(pre, NPY_MAGIC, prelen < NPY_MAGIC_LEN ? prelen : NPY_MAGIC_LEN) != 0)
        return npy_fail(err, errlen, path, "not a .npy file (bad magic)");
    if (prelen < 8)
        return npy_fail(err, errlen, path, "truncated header: file is only %zu bytes", prelen);
    major = pre[6];
    minor = pre[7];
    if (major < 1 || major > 3 || minor != 0)
        return npy_fail(err, errlen, path,
                        "unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor);
    prelen = major == 1 ? 10 : 12;
    if (fsize < prelen)
        return npy_fail(err, errlen, path, "truncated header: file is only %llu bytes",
                        (unsigned long long)fsize);
    rc = npy_read_full(fd, pre + 8, prelen - 8);
    if (rc < 0) return npy_fail(err, errlen, path, "read error: %s", strerror(errno));
    if (rc > 0) return npy_fail(err, errlen, path, "unexpected end of file (file changed while reading?)");
    if (major == 1)
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    else
        hlen = (size_t)((uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
                        (uint32_t)pre[11] << 24);
    if ((uint64_t)hlen > fsize - prelen)
        return npy_fail(err, errlen, path,
                        "truncated header: header length is %zu bytes but only %llu bytes follow",
                        hlen, (unsigned long long)(fsize - prelen));
    if (hlen > NPY_MAX_HEADER)
        return npy_fail(err, errlen, path, "header too large (%zu bytes, limit %u)", hlen, NPY_MAX_HEADER);

    /* Header dict. */
    hbuf = malloc(hlen + 1);
    if (hbuf == NULL) return npy_fail(err, errlen, path, "out of memory (%zu bytes)", hlen + 1);
    rc = npy_read_full(fd, hbuf, hlen);
    if (rc != 0) {
        free(hbuf);
        if (rc < 0) return npy_fail(err, errlen, path, "read error: %s", strerror(errno));
        return npy_fail(err, errlen, path, "unexpected end of file (file changed while reading?)");
    }
    hbuf[hlen] = '\0';
    memset(&m, 0, sizeof m);
    h.s = hbuf;
    h.n = hlen;
    h.i = 0;
    h.path = path;
    h.err = err;
    h.errlen = errlen;
    rc = hp_header(&h, &m);
    free(hbuf);
    if (rc != 0) return -1;

    /* Size checks, before any allocation proportional to the header's claims. */
    for (k = 0; k < m.ndim; k++) {
        if (m.shape[k] == 0) {
            zero = 1;
        } else if (nelem > INT64_MAX / m.shape[k]) {
            return npy_fail(err, errlen, path,
                            "shape too large: the number of elements overflows a 64-bit integer");
        } else {
            nelem *= m.shape[k];
        }
    }
    if (zero) nelem = 0;
    if ((uint64_t)nelem > UINT64_MAX / npy_dtype_size(m.dtype))
        return npy_fail(err, errlen, path, "shape too large: the data size overflows a 64-bit integer");
    nbytes = (uint64_t)nelem * npy_dtype_size(m.dtype);
    avail = fsize - prelen - hlen;
    if (nbytes > avail)
        return npy_fail(err, errlen, path, "truncated: header says %llu bytes of data, file has %llu",
                        (unsigned long long)nbytes, (unsigned long long)avail);
    if (nbytes < avail)
        return npy_fail(err, errlen, path, "trailing data: header says %llu bytes of data, file has %llu",
                        (unsigned long long)nbytes, (unsigned long long)avail);
    if (nbytes > SIZE_MAX - 1)
        return npy_fail(err, errlen, path, "out of memory (%llu bytes)", (unsigned long long)nbytes);

    /* Data: a large array in huge pages (hugemem.h), as numpy reads one */
    buf = tx_huge_alloc((size_t)nbytes, huge);
    if (buf == NULL)
        return npy_fail(err, errlen, path, "out of memory (%llu bytes)", (unsigned long long)nbytes);
    rc = npy_read_full(fd, buf, (size_t)nbytes);
    if (rc != 0) {
        free(buf);
        if (rc < 0) return npy_fail(err, errlen, path, "read error: %s", strerror(errno));
        return npy_fail(err, errlen, path, "unexpected end of file (file changed while reading?)");
    }
    if (m.fortran && m.ndim > 1 && nelem > 1) {
        tmp = tx_huge_alloc((size_t)nbytes, huge);
        if (tmp == NULL) {
            free(buf);
            return npy_fail(err, errlen, path, "out of memory (%llu bytes)", (unsigned long long)nbytes);
        }
        npy_f_to_c(tmp, buf, npy_dtype_size(m.dtype), m.ndim, m.shape, (size_t)nelem);
        free(buf);
        buf = tmp;
    }
    if (m.dtype == NPY_BOOL) {
        for (i = 0; i < (size_t)nbytes; i++) buf[i] = buf[i] != 0;
    } else if (m.file_le != npy_host_le()) {
        npy_bswap(buf, (size_t)nelem * npy_parts(m.dtype), npy_dtype_size(m.dtype) / npy_parts(m.dtype));
    }

    out->dtype = m.dtype;
    out->ndim = m.ndim;
    for (k = 0; k < m.ndim; k++) out->shape[k] = m.shape[k];
    out->nelem = nelem;
    out->data = buf;
    return 0;
}

int npy_read(const char *path, npy_array *out, int huge, char *err, size_t errlen)
{
    int fd, rc;

    if (err != NULL && errlen > 0) err[0] = '\0';
    if (out == NULL) return npy_fail(err, errlen, path, "npy_read: no output array");
    memset(out, 0, sizeof *out);
    if (path == NULL) return npy_fail(err, errlen, path, "npy_read: no path");
    /* O_NONBLOCK so that opening a FIFO does not hang; it is then rejected. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return npy_fail(err, errlen, path, "cannot open: %s", strerror(errno));
    rc = npy_read_fd(fd, path, out, huge, err, errlen);
    close(fd);
    if (rc != 0) memset(out, 0, sizeof *out);
    return rc;
}

/* Appends formatted text to BUF (capacity CAP) at *LEN. Returns 0, or -1 if it does not fit. */
static int npy_append(char *buf, size_t cap, size_t *len, const char *fmt, ...) NPY_PRINTF(4, 5);
static int npy_append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*len >= cap) return -1;
    va_start(ap, fmt);
    n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len) return -1;
    *len += (size_t)n;
    return 0;
}

/*
** Checks the arguments of npy_write and builds the header, byte-identical to
** numpy.lib.format._write_array_header (numpy >= 1.23), into HDR (1024 bytes):
** *LEN bytes, followed by *NBYTES bytes of data. Returns 0 or -1 with ERR.
*/
static int npy_header(char *hdr, size_t *len_out, size_t *nbytes_out, const char *path, npy_dtype dtype,
                      int ndim, const int64_t *shape, const void *data, char *err, size_t errlen)
{
    const size_t cap = 1024;
    size_t esize = npy_dtype_size(dtype), len = 0, hl, pad, nbytes;
    int64_t nelem = 1;
    int k, zero = 0;

    if (err != NULL && errlen > 0) err[0] = '\0';
    if (path == NULL) return npy_fail(err, errlen, path, "npy_write: no path");
    if (esize == 0) return npy_fail(err, errlen, path, "npy_write: invalid dtype %d", (int)dtype);
    if (ndim < 0 || ndim > NPY_MAX_DIMS)
        return npy_fail(err, errlen, path, "npy_write: invalid number of dimensions %d (limit %d)",
                        ndim, NPY_MAX_DIMS);
    if (ndim > 0 && shape == NULL) return npy_fail(err, errlen, path, "npy_write: no shape");
    for (k = 0; k < ndim; k++) {
        if (shape[k] < 0)
            return npy_fail(err, errlen, path, "npy_write: negative dimension %lld", (long long)shape[k]);
        if (shape[k] == 0)
            zero = 1;
        else if (nelem > INT64_MAX / shape[k])
            return npy_fail(err, errlen, path, "npy_write: shape too large (element count overflows)");
        else
            nelem *= shape[k];
    }
    if (zero) nelem = 0;
    if ((uint64_t)nelem > SIZE_MAX / esize)
        return npy_fail(err, errlen, path, "npy_write: shape too large (data size overflows)");
    nbytes = (size_t)nelem * esize;
    if (nbytes > 0 && data == NULL) return npy_fail(err, errlen, path, "npy_write: no data");

    memcpy(hdr, NPY_MAGIC "\x01\x00", 8);
    len = 10;
    if (npy_append(hdr, cap, &len, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   npy_dtype_name(dtype)) != 0)
        goto toolong;
    for (k = 0; k < ndim; k++)
        if (npy_append(hdr, cap, &len, "%lld%s", (long long)shape[k],
                       ndim == 1 ? "," : k + 1 < ndim ? ", " : "") != 0)
            goto toolong;
    if (npy_append(hdr, cap, &len, "), }") != 0) goto toolong;
    if (ndim > 0) {
        char digits[24];
        int nd = snprintf(digits, sizeof digits, "%lld", (long long)shape[0]);
        if (nd < 0 || nd > NPY_GROWTH) goto toolong;
        if (npy_append(hdr, cap, &len, "%*s", NPY_GROWTH - nd, "") != 0) goto toolong;
    }
    hl = len - 10 + 1;                                   /* dict text plus final '\n' */
    pad = NPY_ALIGN - (10 + hl) % NPY_ALIGN;
    if (len + pad + 1 > cap || hl + pad > 0xffff) goto toolong;
    memset(hdr + len, ' ', pad);
    len += pad;
    hdr[len++] = '\n';
    hdr[8] = (char)((hl + pad) & 0xff);
    hdr[9] = (char)((hl + pad) >> 8);
    *len_out = len;
    *nbytes_out = nbytes;
    return 0;

toolong:
    return npy_fail(err, errlen, path, "npy_write: header too long");
}

/* Writes the header and the data to FD; -1 with errno set on failure. */
static int npy_write_body(int fd, const char *hdr, size_t len, npy_dtype dtype, const void *data, size_t nbytes)
{
    unsigned char stage[8192];
    const unsigned char *src = data;
    size_t esize = npy_dtype_size(dtype), off, n, i;

    if (npy_write_full(fd, hdr, len) != 0) return -1;
    if (dtype != NPY_BOOL && npy_host_le())
        return nbytes > 0 ? npy_write_full(fd, src, nbytes) : 0;
    /* Bool normalisation or byte swapping goes through a staging buffer. */
    for (off = 0; off < nbytes; off += n) {
        n = nbytes - off < sizeof stage ? nbytes - off : sizeof stage;
        memcpy(stage, src + off, n);
        if (dtype == NPY_BOOL)
            for (i = 0; i < n; i++) stage[i] = stage[i] != 0;
        else
            npy_bswap(stage, n / esize * npy_parts(dtype), esize / npy_parts(dtype));
        if (npy_write_full(fd, stage, n) != 0) return -1;
    }
    return 0;
}

int npy_write(const char *path, npy_dtype dtype, int ndim, const int64_t *shape,
              const void *data, char *err, size_t errlen)
{
    char hdr[1024];
    size_t len, nbytes;
    int fd, regular, saved;
    struct stat st;

    if (npy_header(hdr, &len, &nbytes, path, dtype, ndim, shape, data, err, errlen) != 0) return -1;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return npy_fail(err, errlen, path, "cannot create: %s", strerror(errno));
    regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (npy_write_body(fd, hdr, len, dtype, data, nbytes) != 0) goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    return 0;

fail:
    saved = errno;
    if (fd >= 0) close(fd);
    if (regular) unlink(path);
    return npy_fail(err, errlen, path, "write failed: %s", strerror(saved));
}

int npy_write_fd(int fd, const char *path, npy_dtype dtype, int ndim, const int64_t *shape,
                 const void *data, char *err, size_t errlen)
{
    char hdr[1024];
    size_t len, nbytes;

    if (npy_header(hdr, &len, &nbytes, path, dtype, ndim, shape, data, err, errlen) != 0) return -1;
    if (npy_write_body(fd, hdr, len, dtype, data, nbytes) != 0)
        return npy_fail(err, errlen, path, "write failed: %s", strerror(errno));
    return 0;
}
