#define _GNU_SOURCE
/* tx_loop.c - the cost of one call through the library, measured in C (no
   Python between the calls): a program compiled once, its tensors bound,
   then tx_run (and tx_bind of every tensor + tx_run) in a loop.

   usage: tx_loop FILE.tx REPS NAME=D0xD1x... ...   (NAME= alone: a scalar,
   NAME=f32:D0x... an f32 tensor, NAME=c128:D0x... a c128 one)
   Every named tensor gets a buffer of that shape (f64 unless f32: or c128:,
   filled with 0.5 + i mod 7 / 10, each part of a complex element); prints the median over 9 rounds of REPS calls, in µs:
   "run µs  bind+run µs" (with TX_LOOP_CPU=1: CPU time, steadier on a
   busy machine for one thread; with TX_LOOP_BACKEND=cc: the program compiled
   by the cc tier; with TX_LOOP_TIMING=1, each call's time in one more run,
   to stderr; with TX_LOOP_OPT=N, optimisation level N). Built by bench/run.sh, linked with the library. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tensorexpr.h"

#define MAXT 16

/* With TX_LOOP_HUGE=1 a buffer is 2 MiB aligned and asked for as huge
   pages, as numpy does for arrays of 4 MiB and more; TX_LOOP_OFFSET=16
   then starts it 16 bytes past that boundary, where numpy's large arrays
   start (malloc's header: 16 mod 64, so that every 64-byte vector of a
   row straddles two cache lines). One thread, alternated, medians of 5
   to 9: softmax 2000x2000 6571 -> 7154 us, f32 3093 -> 3406, layer norm
   1000x1024 879 -> 1047, row max 4000x2500 5090 -> 5526, A*B+C 1e7
   19545 -> 20974, log-sum-exp unchanged. */
static void *huge_alloc(size_t bytes)
{
    const char *e = getenv("TX_LOOP_HUGE");
    if (!e || *e != '1')
        return malloc(bytes);
    void *p = NULL;
    const char *o = getenv("TX_LOOP_OFFSET"); /* bytes past the 2 MiB boundary (numpy's arrays: 16) */
    size_t off = o ? (size_t)atoi(o) : 0;
    if (posix_memalign(&p, (size_t)1 << 21, bytes + off))
        return NULL;
    madvise(p, bytes + off, MADV_HUGEPAGE);
    return (char *)p + off;
}

static int bind(tx_program *p, const char *name, void *data, tx_dtype dt, int ndim, const int64_t *shape)
{
    return tx_bind_array(p, name, data, dt, ndim, shape, NULL);
}

static int cpu_clock; /* TX_LOOP_CPU=1: the process's CPU time (one thread, a busy machine) */

static double now(void)
{
    struct timespec t;
    clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = malloc(1 << 20);
    *len = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tx_loop FILE.tx REPS NAME=D0xD1 ...\n");
        return 2;
    }
    size_t len = 0;
    cpu_clock = getenv("TX_LOOP_CPU") && atoi(getenv("TX_LOOP_CPU")) == 1;
    char *src = slurp(argv[1], &len);
    long reps = atol(argv[2]);
    char *name[MAXT];
    int ndim[MAXT], nt = 0;
    tx_dtype dt[MAXT];
    int64_t shape[MAXT][8];
    double *data[MAXT];
    for (int a = 3; a < argc && nt < MAXT; a++, nt++) {
        char *eq = strchr(argv[a], '=');
        if (!eq)
            return 2;
        *eq = 0;
        name[nt] = argv[a];
        ndim[nt] = 0;
        dt[nt] = strncmp(eq + 1, "f32:", 4) == 0 ? TX_F32 : strncmp(eq + 1, "c128:", 5) == 0 ? TX_C128 : TX_F64;
        int64_t size = 1;
        for (char *p = eq + 1 + (dt[nt] == TX_F32 ? 4 : dt[nt] == TX_C128 ? 5 : 0); *p && ndim[nt] < 8;) {
            shape[nt][ndim[nt]] = strtoll(p, &p, 10);
            size *= shape[nt][ndim[nt]++];
            if (*p == 'x')
                p++;
        }
        if (dt[nt] == TX_C128)
            size *= 2; /* (re, im) pairs */
        data[nt] = huge_alloc(sizeof(double) * (size_t)(size ? size : 1));
        for (int64_t i = 0; i < size; i++) {
            if (dt[nt] == TX_F32)
                ((float *)data[nt])[i] = 0.5f + (float)(i % 7) / 10;
            else
                data[nt][i] = 0.5 + (double)(i % 7) / 10;
        }
    }
    tx_ctx *c = tx_new();
    const char *be = getenv("TX_LOOP_BACKEND"); /* cc: the compiled tier */
    if (c && be && strcmp(be, "cc") == 0 && tx_set_option(c, TX_OPTION_BACKEND, TX_BACKEND_CC) != 0) {
        fprintf(stderr, "tx_loop: %s\n", tx_errmsg(c));
        return 1;
    }
    /* TX_LOOP_TIMING=1: after the timing, each call's time in one more
       run (tx_call_get), to stderr */
    const int timing = getenv("TX_LOOP_TIMING") != NULL;
    if (c && timing && tx_set_option(c, TX_OPTION_TIMING, 1) != 0) {
        fprintf(stderr, "tx_loop: %s\n", tx_errmsg(c));
        return 1;
    }
    const char *opt = getenv("TX_LOOP_OPT"); /* 0, 1 or 2: TX_OPTION_OPT_LEVEL */
    if (c && opt && tx_set_option(c, TX_OPTION_OPT_LEVEL, atoi(opt)) != 0) {
        fprintf(stderr, "tx_loop: %s\n", tx_errmsg(c));
        return 1;
    }
    tx_program *p = src && c ? tx_compile(c, src, len, argv[1]) : NULL;
    if (!p) {
        fprintf(stderr, "tx_loop: %s\n", c ? tx_errmsg(c) : "no context");
        return 1;
    }
    for (int t = 0; t < nt; t++)
        if (bind(p, name[t], data[t], dt[t], ndim[t], shape[t]) != 0) {
            fprintf(stderr, "tx_loop: bind %s: %s\n", name[t], tx_errmsg(c));
            return 1;
        }
    if (tx_run(p) != 0) {
        fprintf(stderr, "tx_loop: run: %s\n", tx_errmsg(c));
        return 1;
    }
    double run[9], bindrun[9];
    for (int r = 0; r < 9; r++) {
        double t0 = now();
        for (long i = 0; i < reps; i++)
            tx_run(p);
        double t1 = now();
        for (long i = 0; i < reps; i++) {
            for (int t = 0; t < nt; t++)
                bind(p, name[t], data[t], dt[t], ndim[t], shape[t]);
            tx_run(p);
        }
        double t2 = now();
        run[r] = (t1 - t0) / reps * 1e6;
        bindrun[r] = (t2 - t1) / reps * 1e6;
    }
    qsort(run, 9, sizeof *run, cmp);
    qsort(bindrun, 9, sizeof *bindrun, cmp);
    printf("%.3f %.3f\n", run[4], bindrun[4]);
    if (timing && tx_run(p) == 0)
        for (int i = 0; i < tx_call_count(p); i++) {
            tx_call_info ci;
            if (tx_call_get(p, i, &ci) == 0)
                fprintf(stderr, "  stmt %d line %d %-14s %-9s %10.1f us\n", ci.stmt + 1, ci.line, ci.kind, ci.op,
                        ci.seconds * 1e6);
        }
    tx_program_free(p);
    tx_free(c);
    return 0;
}
