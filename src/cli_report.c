/*
 * cli_report.c — what txc run tells about a run while and after it
 * happens: progress on a terminal, and the profile (txc(1) --profile).
 * Linked only into txc; it prints on standard error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorexpr.h"
#include "cli_report.h"

/* Progress of a long run on a terminal (txc(1)): after PROGRESS_AFTER
   seconds (or TXC_PROGRESS_AFTER) a line on standard error names the statement running and the
   time so far, updated a few times a second, and erased when the run
   ends. A thread of its own reads tx_progress; the run is not slowed. */
#define PROGRESS_AFTER 1.5

static void *progress_thread(void *arg)
{
    progress_watch *w = arg;
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    pthread_mutex_lock(&w->lock);
    const char *after = getenv("TXC_PROGRESS_AFTER");
    double first = after && *after ? atof(after) : PROGRESS_AFTER;
    for (double wait = first > 0 ? first : 0; !w->done; wait = 0.25) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)wait;
        until.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!w->done && pthread_cond_timedwait(&w->wake, &w->lock, &until) == 0)
            ;
        if (w->done)
            break;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec);
        int s = tx_progress(w->p), n = tx_stmt_count(w->p), line = 0;
        if (s > 0) {
            tx_timing(w->p, s - 1, NULL, &line);
            fprintf(stderr, "\rtxc: statement %d of %d (line %d), %.1f s\033[K", s, n, line, el);
        } else
            fprintf(stderr, "\rtxc: compiling, %.1f s\033[K", el);
        w->shown = 1;
    }
    if (w->shown)
        fprintf(stderr, "\r\033[K");
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int progress_start(progress_watch *w)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    return pthread_create(&w->thread, NULL, progress_thread, w) == 0 ? 0 : -1;
}

void progress_stop(progress_watch *w)
{
    pthread_mutex_lock(&w->lock);
    w->done = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
}

void print_profile_table(const char *head, double run_ms, int nst, const double *sec, const int *line, int ncalls,
                         const profile_call *c)
{
    fprintf(stderr, "%s\n", head);
    fprintf(stderr, "txc:   %-36s %12s %7s %14s\n", "where", "time", "share", "rate");
    for (int s = 0; s < nst; s++) {
        char what[64];
        snprintf(what, sizeof what, "statement %d (line %d)", s + 1, line[s]);
        fprintf(stderr, "txc:   %-36s %9.3f ms %6.1f%%\n", what, 1e3 * sec[s], run_ms > 0 ? 100 * 1e3 * sec[s] / run_ms : 0);
        for (int i = 0; i < ncalls; i++) {
            if (c[i].stmt != s)
                continue;
            char rate[32] = "";
            if (c[i].seconds > 0 && c[i].flops > c[i].bytes)
                snprintf(rate, sizeof rate, "%.2f GFLOP/s", c[i].flops / c[i].seconds * 1e-9);
            else if (c[i].seconds > 0 && c[i].bytes > 0)
                snprintf(rate, sizeof rate, "%.2f GB/s", c[i].bytes / c[i].seconds * 1e-9);
            snprintf(what, sizeof what, "  %s (%s)", c[i].kind, c[i].op);
            fprintf(stderr, "txc:   %-36s %9.3f ms %6.1f%% %14s\n", what, 1e3 * c[i].seconds,
                    run_ms > 0 ? 100 * 1e3 * c[i].seconds / run_ms : 0, rate);
        }
    }
}

/* The profile of the last run of P (txc run --profile), on standard
   error: per statement its time and share of the run (RUN_MS, binding
   and JIT compilation included), then per call in it (a loop nest, a
   BLAS or LAPACK call) its time, share and rate: GFLOP/s where it does
   more than one flop per byte it moves, else GB/s. */
void print_profile(tx_program *p, double run_ms)
{
    double jit = 0, stmts = 0;
    int nst = tx_stmt_count(p), ncalls = tx_call_count(p);
    double *sec = calloc((size_t)nst + 1, sizeof *sec);
    int *line = calloc((size_t)nst + 1, sizeof *line);
    profile_call *c = calloc((size_t)ncalls + 1, sizeof *c);
    if (!sec || !line || !c) {
        fprintf(stderr, "txc: out of memory for the profile\n");
        free(sec), free(line), free(c);
        return;
    }
    tx_timing(p, -1, &jit, NULL);
    for (int s = 0; s < nst; s++) {
        tx_timing(p, s, &sec[s], &line[s]);
        stmts += sec[s];
    }
    int n = 0;
    for (int i = 0; i < ncalls; i++) {
        tx_call_info ci;
        if (tx_call_get(p, i, &ci) != TX_OK)
            continue;
        c[n++] = (profile_call){ci.kind, ci.op, ci.stmt, ci.seconds, ci.flops, ci.bytes};
    }
    char head[160];
    snprintf(head, sizeof head, "txc: profile of one run: %.3f ms (JIT compilation %.3f ms, statements %.3f ms)",
             run_ms, 1e3 * jit, 1e3 * stmts);
    print_profile_table(head, run_ms, nst, sec, line, n, c);
    free(sec);
    free(line);
    free(c);
}

