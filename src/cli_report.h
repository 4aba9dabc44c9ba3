/*
 * cli_report.h — progress and profile of txc run (txc(1)). Linked only
 * into txc.
 */
#ifndef TX_CLI_REPORT_H
#define TX_CLI_REPORT_H

#include <pthread.h>

#include "tensorexpr.h"

/* A watcher of a run of P in another thread (progress_start). */
typedef struct {
    tx_program *p;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int done, shown;
} progress_watch;

/* Starts a thread that shows W->p's progress on standard error (a
   terminal) once the run has taken a while; 0, or -1 if it cannot start. */
int progress_start(progress_watch *w);
/* Stops it and erases its line. */
void progress_stop(progress_watch *w);
/* Prints P's last run's profile on standard error; RUN_MS is the run's
   wall-clock time, compilation included. */
void print_profile(tx_program *p, double run_ms);

/* One call of a run (a loop nest, a BLAS or LAPACK call) for a profile. */
typedef struct {
    const char *kind, *op;
    int stmt;
    double seconds, flops, bytes;
} profile_call;
/* The profile's lines on standard error: HEAD, then per statement S
   (NST of them) its SEC[S] and share of RUN_MS (line LINE[S] of the
   source), and under it each of the NCALLS calls C of statement S with its
   time, share and rate (GFLOP/s where it does more than one flop per byte
   it moves, else GB/s). */
void print_profile_table(const char *head, double run_ms, int nst, const double *sec, const int *line, int ncalls,
                         const profile_call *c);

#endif
