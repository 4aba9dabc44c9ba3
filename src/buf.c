/*
 * buf.c — a growable byte buffer. Once an allocation fails the buffer is
 * marked (oom) and later appends are dropped, so callers check once at the
 * end instead of after every append.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"

static int buf_reserve(tx_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void buf_put(tx_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void buf_insert(tx_buf *b, size_t pos, const char *s, size_t n)
{
    if (pos == b->len) {
        buf_put(b, s, n);
        return;
    }
    if (pos > b->len || buf_reserve(b, n) < 0)
        return;
    memmove(b->p + pos + n, b->p + pos, b->len - pos + 1); /* the NUL too */
    memcpy(b->p + pos, s, n);
    b->len += n;
}

void buf_puts(tx_buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

void buf_vprintf(tx_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || buf_reserve(b, (size_t)n) < 0)
        return;
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void buf_printf(tx_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void buf_free(tx_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
