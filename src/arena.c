/*
 * arena.c — bump allocation for one compilation: tokens, CST, OpGraph.
 * Nothing is freed individually; arena_free releases every block at once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"

/* C99 has no max_align_t: align for the widest of the usual types. */
typedef union { long double ld; long long ll; void *p; double d; } align_t;

typedef struct block {
    struct block *next;
    size_t used, size;
    align_t data[]; /* aligned storage */
} block;

struct tx_arena {
    block *head;
    jmp_buf *on_oom;
};

void arena_on_oom(tx_arena *a, jmp_buf *on_oom)
{
    a->on_oom = on_oom;
}

tx_arena *arena_new(void)
{
    return calloc(1, sizeof(tx_arena));
}

void arena_free(tx_arena *a)
{
    if (!a)
        return;
    for (block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

void *arena_alloc(tx_arena *a, size_t size)
{
    const size_t align = sizeof(align_t);
    size = (size + align - 1) / align * align;
    if (size == 0)
        size = align;
    block *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t bsize = size > 65536 ? size : 65536;
        b = malloc(sizeof(block) + bsize);
        if (!b) {
            if (a->on_oom)
                longjmp(*a->on_oom, 1);
            return NULL;
        }
        b->size = bsize;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(tx_arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

char *arena_printf(tx_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = arena_alloc(a, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void tx_assert_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "tensorexpr: internal error: %s (%s:%d)\n", what, file, line);
    abort();
}
