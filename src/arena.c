/*
 * arena.c — bump allocation for one compilation: tokens, CST, OpGraph.
 * Nothing is freed individually; arena_free releases every block at once.
 * Out of memory goes to the innermost recovery point (recover.c), so the
 * compiler's phases never check for NULL.
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
};

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
            recover_oom();
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
