/*
 * recover.c — recovery points: how the library survives its own bugs and
 * running out of memory without taking its host process down.
 *
 * Each public entry point that runs compiler code (tx_compile, tx_run's
 * compilation, tx_emit, tx_graph) calls its work through recover_run. A
 * failed TX_ASSERT (tx_assert_fail) or an arena that cannot get memory
 * (recover_oom) longjmps back to the innermost recovery point of the
 * thread, which returns TX_ERR_INTERNAL or TX_ERR_NOMEM to the entry
 * point; that one frees the compilation's arena and buffers and reports.
 * The work function keeps its state in memory the entry point owns (not
 * in locals of recover_run's frame), so nothing is lost to the longjmp.
 *
 * Outside any recovery point (a unit test calling a phase directly) an
 * internal error still aborts with file and line, and an arena out of
 * memory returns NULL.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "tx.h"

typedef struct recover_point {
    jmp_buf jb;
    struct recover_point *prev;
    char *what;       /* where tx_assert_fail writes its message */
    size_t whatlen;
    recover_cleanup *cleanups; /* run before jumping back here */
} recover_point;

/* The innermost recovery point of this thread (each context is used by one
   thread at a time, and separate contexts may run in parallel). */
static __thread recover_point *innermost;

int recover_run(int (*work)(void *arg), void *arg, char *what, size_t whatlen)
{
    recover_point rp;
    rp.prev = innermost;
    rp.what = what;
    rp.whatlen = whatlen;
    rp.cleanups = NULL;
    if (whatlen)
        what[0] = 0;
    int jumped = setjmp(rp.jb);
    if (jumped) {
        innermost = rp.prev;
        return jumped == 1 ? TX_ERR_NOMEM : TX_ERR_INTERNAL;
    }
    innermost = &rp;
    int status = work(arg);
    innermost = rp.prev;
    return status;
}

void recover_push(recover_cleanup *c, void (*fn)(void *arg), void *arg)
{
    c->fn = fn;
    c->arg = arg;
    c->prev = innermost ? innermost->cleanups : NULL;
    if (innermost)
        innermost->cleanups = c;
}

void recover_pop(recover_cleanup *c)
{
    if (innermost && innermost->cleanups == c)
        innermost->cleanups = c->prev;
}

/* Runs the innermost point's cleanups, newest first, then jumps there. */
#ifdef __GNUC__
__attribute__((noreturn))
#endif
static void unwind(recover_point *rp, int why)
{
    while (rp->cleanups) {
        recover_cleanup *c = rp->cleanups;
        rp->cleanups = c->prev;
        c->fn(c->arg);
    }
    longjmp(rp->jb, why);
}

void recover_oom(void)
{
    if (innermost)
        unwind(innermost, 1);
}

void tx_assert_fail(const char *what, const char *file, int line)
{
    recover_point *rp = innermost;
    if (!rp) {
        fprintf(stderr, "tensorexpr: internal error: %s (%s:%d)\n", what, file, line);
        abort();
    }
    if (rp->whatlen)
        snprintf(rp->what, rp->whatlen, "internal error: %s (%s:%d)", what, file, line);
    unwind(rp, 2);
}
