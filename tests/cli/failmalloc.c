/*
 * failmalloc.c — allocation failure injection for tests/run_cli.sh.
 *
 * LD_PRELOAD=build/failmalloc.so TX_FAILMALLOC=N txc ...
 * makes the N-th call to malloc, calloc or realloc (and every later one)
 * fail, counting from the program's first fopen (txc opening its .tx
 * file), so that the start-up of libc and OpenBLAS is left alone. A sweep
 * over N sees each allocation path of txc and libtensorexpr fail. Tests
 * only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long countdown = -1;
static int armed;

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    if (!armed) {
        const char *e = getenv("TX_FAILMALLOC");
        countdown = e ? atol(e) : -1;
        armed = 1;
    }
    return real(path, mode);
}

static int should_fail(void)
{
    if (!armed || countdown < 0)
        return 0;
    if (countdown == 0) {
        errno = ENOMEM;
        return 1;
    }
    countdown--;
    return 0;
}

void *malloc(size_t n)
{
    static void *(*real)(size_t);
    if (!real)
        real = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    return should_fail() ? NULL : real(n);
}

void *calloc(size_t a, size_t b)
{
    static void *(*real)(size_t, size_t);
    if (!real) {
        /* dlsym may calloc: serve that one call from a static pool */
        static char pool[4096];
        static int busy;
        if (busy)
            return memset(pool, 0, sizeof pool);
        busy = 1;
        real = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
        busy = 0;
    }
    return should_fail() ? NULL : real(a, b);
}

void *realloc(void *p, size_t n)
{
    static void *(*real)(void *, size_t);
    if (!real)
        real = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    return should_fail() ? NULL : real(p, n);
}
