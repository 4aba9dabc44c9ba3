/*
 * check_threads.c — kernels on threads through the public library
 * (tensorexpr.h TX_OPTION_THREADS, tx(5) THREADS): the same program run
 * with 1, 2 and 3 threads writes the same bytes (every kernel splits only
 * a loop over an output label (the outermost, or a column sum's row inside
 * its summed loop), so each element is computed by
 * one thread in one order; the library's ddot and dgemv, runtime/gemm.c,
 * split in chunks fixed by the length or by whole rows: OpenBLAS's own
 * ddot on its threads failed this; a tall GEMM, in bands of whole blocks
 * of OpenBLAS's rows, one call on one BLAS thread each), from one context
 * and from several threads at
 * once (the pool is busy for all but one: the others run alone), and a
 * bad thread count is refused.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorexpr.h"

/* The runtime's pool, under the public API (runtime/runtime.h) */
typedef int (*tx_kernel_fn)(const void *args, int64_t lo, int64_t hi);
int tx_rt_parallel(tx_kernel_fn k, const void *args, int64_t n);
void tx_rt_set_threads(int n);

enum { N = 301, M = 257, L = 100003, Q = 60 };

/* Work large enough for every kernel to be split (N*M > 32768). */
static const char *program =
    "in  X[n,m], v[m], w[l], W[m,q];\n"
    "out P[n,m], C[n,m], T[m,n], s[n], cm[m], e[n,m], tot, wmax, cs[m], ft, fmx, cs1[m], se, tr, dt, mv[n], G[n,q];\n"
    "let mx(\"i\") = reduce(max, X(\"i,j\"));\n"
    "let E(\"i,j\") = exp(X(\"i,j\") - mx(\"i\"));\n"
    "let S(\"i\") = E(\"i,k\");\n"
    "P(\"i,j\") = E(\"i,j\") / S(\"i\");\n"
    "C(\"i,j\") = scan(+, X(\"i,j\"), \"j\");\n"
    "T(\"j,i\") = X(\"i,j\") * v(\"j\");\n"
    "s(\"i\") = tanh(X(\"i,j\"));\n"
    "cm(\"j\") = reduce(max, X(\"i,j\"));\n"
    "e(\"i,j\") = X(\"i,j\") * X(\"i,j\") + sqrt(abs(X(\"i,j\")));\n"
    "tot = w(\"i\");\n"                       /* long reductions: shared by threads in chunks */
    "wmax = reduce(max, w(\"i\"));\n"
    "cs(\"j\") = 2 * X(\"i,j\");\n" /* summed outside j: threads own blocks of j */
    "ft = X(\"i,j\");\n"                   /* the whole matrix: one reduction in chunks */
    "fmx = reduce(max, X(\"i,j\"));\n"
    "cs1(\"j\") = X(\"i,j\");\n"          /* rows added eight at a time, blocks of j per thread */
    "se = exp(0.5 * X(\"i,j\"));\n"        /* scalars of several labels: rows on threads, then */
    "tr = X(\"i,j\") * T(\"j,i\");\n"      /* their sum in chunks (pass_split.c) */
    "dt = X(\"i,j\") * C(\"i,j\");\n"       /* the library's ddot: chunks on the threads */
    "mv(\"i\") = X(\"i,j\") * v(\"j\");\n" /* its dgemv: rows on the threads */
    "G(\"i,k\") = X(\"i,j\") * W(\"j,k\");\n"; /* tall (N >= 2 Q, 2^22 multiply-adds): bands of rows */

typedef struct {
    double X[N * M], v[M], w[L], W[M * Q];
    double P[N * M], C[N * M], T[M * N], s[N], cm[M], e[N * M], tot, wmax, cs[M], ft, fmx, cs1[M], se, tr, dt, mv[N];
    double G[N * Q];
} data;

static void fill(data *d)
{
    unsigned x = 12345;
    for (int i = 0; i < N * M; i++) {
        x = x * 1103515245u + 12345u;
        d->X[i] = (double)(x >> 8) / (double)(1u << 24) * 4 - 2;
    }
    for (int j = 0; j < M; j++)
        d->v[j] = 0.5 + j * 0.01;
    for (int j = 0; j < M * Q; j++)
        d->W[j] = (double)(j % 13) / 13 - 0.4;
    for (int i = 0; i < L; i++) {
        x = x * 1103515245u + 12345u;
        d->w[i] = (double)(x >> 8) / (double)(1u << 24) - 0.5 + 1e-9 * i;
    }
}

/* Runs the program with THREADS threads into D (its own context). */
static void run_with(data *d, int threads)
{
    tx_ctx *c = tx_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_THREADS, threads), TX_OK);
    tx_program *p = tx_compile(c, program, strlen(program), "threads.tx");
    ck_assert_msg(p != NULL, "%s", tx_errmsg(c));
    const int64_t nm[2] = {N, M}, mn[2] = {M, N}, n1[1] = {N}, m1[1] = {M}, l1[1] = {L}, mq[2] = {M, Q}, nq[2] = {N, Q};
    ck_assert_int_eq(tx_bind(p, "X", d->X, 2, nm), TX_OK);
    ck_assert_int_eq(tx_bind(p, "v", d->v, 1, m1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "P", d->P, 2, nm), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", d->C, 2, nm), TX_OK);
    ck_assert_int_eq(tx_bind(p, "T", d->T, 2, mn), TX_OK);
    ck_assert_int_eq(tx_bind(p, "s", d->s, 1, n1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "cm", d->cm, 1, m1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "e", d->e, 2, nm), TX_OK);
    ck_assert_int_eq(tx_bind(p, "w", d->w, 1, l1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "tot", &d->tot, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "wmax", &d->wmax, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "cs", d->cs, 1, m1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "ft", &d->ft, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "fmx", &d->fmx, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "cs1", d->cs1, 1, m1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "se", &d->se, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "tr", &d->tr, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "dt", &d->dt, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "mv", d->mv, 1, n1), TX_OK);
    ck_assert_int_eq(tx_bind(p, "W", d->W, 2, mq), TX_OK);
    ck_assert_int_eq(tx_bind(p, "G", d->G, 2, nq), TX_OK);
    for (int r = 0; r < 3; r++) /* again and again: the pool is reused */
        ck_assert_msg(tx_run(p) == TX_OK, "%s", tx_errmsg(c));
    tx_program_free(p);
    tx_free(c);
}

/* The outputs of D and W are equal to the bit; G only WITH_GEMM (programs
   that run at once in several threads each set OpenBLAS's process-wide
   thread count, tensorexpr(3), so one may run another's bands on OpenBLAS's
   threads, whose bits may differ) */
static int same_outputs(const data *d, const data *w, int with_gemm)
{
    if (with_gemm && memcmp(d->G, w->G, sizeof d->G) != 0)
        return 0;
    return memcmp(d->P, w->P, sizeof d->P) == 0 && memcmp(d->C, w->C, sizeof d->C) == 0 &&
           memcmp(d->T, w->T, sizeof d->T) == 0 && memcmp(d->s, w->s, sizeof d->s) == 0 &&
           memcmp(d->cm, w->cm, sizeof d->cm) == 0 && memcmp(d->e, w->e, sizeof d->e) == 0 &&
           memcmp(&d->tot, &w->tot, sizeof d->tot) == 0 && memcmp(&d->wmax, &w->wmax, sizeof d->wmax) == 0 &&
           memcmp(d->cs, w->cs, sizeof d->cs) == 0 && memcmp(&d->ft, &w->ft, sizeof d->ft) == 0 &&
           memcmp(&d->fmx, &w->fmx, sizeof d->fmx) == 0 && memcmp(d->cs1, w->cs1, sizeof d->cs1) == 0 &&
           memcmp(&d->se, &w->se, sizeof d->se) == 0 && memcmp(&d->tr, &w->tr, sizeof d->tr) == 0 &&
           memcmp(&d->dt, &w->dt, sizeof d->dt) == 0 && memcmp(d->mv, w->mv, sizeof d->mv) == 0;
}

/* Threads of this process now. */
static int task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

START_TEST(same_bytes_for_any_thread_count)
{
    data *one = calloc(1, sizeof *one), *two = calloc(1, sizeof *two), *three = calloc(1, sizeof *three);
    fill(one);
    fill(two);
    fill(three);
    int before = task_count();
    run_with(one, 1);
    run_with(two, 2);
    run_with(three, 3);
    ck_assert_msg(task_count() >= before + 2, "the pool started no workers (%d threads before, %d after)", before,
                  task_count());
    ck_assert(same_outputs(one, two, 1));
    ck_assert(same_outputs(one, three, 1));
    /* and the values are right: spot checks by hand */
    for (int i = 0; i < N; i += 37) {
        double mx = -INFINITY, sum = 0, th = 0;
        for (int j = 0; j < M; j++) {
            mx = fmax(mx, one->X[i * M + j]);
            th += tanh(one->X[i * M + j]);
        }
        for (int j = 0; j < M; j++)
            sum += exp(one->X[i * M + j] - mx);
        ck_assert_double_eq_tol(one->P[i * M + 5], exp(one->X[i * M + 5] - mx) / sum, 1e-12);
        ck_assert_double_eq_tol(one->s[i], th, 1e-9);
        ck_assert_double_eq_tol(one->T[7 * N + i], one->X[i * M + 7] * one->v[7], 1e-15);
        for (int k = 0; k < Q; k += 7) {
            double g = 0, mag = 0;
            for (int j = 0; j < M; j++) {
                g += one->X[i * M + j] * one->W[j * Q + k];
                mag += fabs(one->X[i * M + j] * one->W[j * Q + k]);
            }
            ck_assert_double_eq_tol(one->G[i * Q + k], g, 1e-14 * mag);
        }
    }
    long double tot = 0;
    double wmax = -INFINITY;
    for (int i = 0; i < L; i++) {
        tot += one->w[i];
        wmax = fmax(wmax, one->w[i]);
    }
    ck_assert_double_eq_tol(one->tot, (double)tot, 1e-10);
    ck_assert(one->wmax == wmax);
    for (int j = 0; j < M; j += 31) {
        double cs = 0;
        for (int i = 0; i < N; i++)
            cs += one->X[i * M + j];
        ck_assert_double_eq_tol(one->cs[j], 2 * cs, 1e-9);
        ck_assert(one->cs1[j] == cs); /* one row after the other, as here */
    }
    long double ft = 0;
    double fmx = -INFINITY;
    for (int i = 0; i < N * M; i++) {
        ft += one->X[i];
        fmx = fmax(fmx, one->X[i]);
    }
    ck_assert_double_eq_tol(one->ft, (double)ft, 1e-9);
    ck_assert(one->fmx == fmx);
    free(one);
    free(two);
    free(three);
}
END_TEST

static void *runner(void *arg)
{
    run_with(arg, 2);
    return NULL;
}

START_TEST(programs_in_several_threads)
{
    /* four host threads, each running the program with 2 threads: the
       pool serves one at a time, the others run alone; all agree */
    data *ref = calloc(1, sizeof *ref);
    fill(ref);
    run_with(ref, 1);
    data *d[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        d[i] = calloc(1, sizeof *d[i]);
        fill(d[i]);
        ck_assert_int_eq(pthread_create(&t[i], NULL, runner, d[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert(same_outputs(ref, d[i], 0));
        for (int k = 0; k < N * Q; k += 97) /* G right, whatever its last bits */
            ck_assert_double_eq_tol(d[i]->G[k], ref->G[k], 1e-12 * (1 + fabs(ref->G[k])));
        free(d[i]);
    }
    free(ref);
}
END_TEST

/* tx_rt_parallel runs every iteration exactly once, for any count of
   iterations and threads, also when one thread's chunks are slow and
   the others take them from its run. */
typedef struct {
    int64_t n;
    int slow; /* iterations below this sleep: the first run is slow */
    int *seen;
} visit_job;

static int visit(const void *args, int64_t lo, int64_t hi)
{
    const visit_job *j = args;
    for (int64_t i = lo; i < hi; i++) {
        if (i < j->slow) {
            struct timespec t = {0, 2000000};
            nanosleep(&t, NULL);
        }
        __atomic_add_fetch(&j->seen[i], 1, __ATOMIC_RELAXED);
    }
    return 0;
}

START_TEST(every_iteration_once)
{
    static const int64_t sizes[] = {1, 2, 3, 7, 8, 9, 31, 1000};
    static const int threads[] = {1, 2, 3, 5, 8};
    int seen[1000];
    for (size_t a = 0; a < sizeof threads / sizeof *threads; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
            for (int slow = 0; slow <= 4; slow += 4) {
                visit_job j = {sizes[b], slow, seen};
                memset(seen, 0, sizeof seen);
                tx_rt_set_threads(threads[a]);
                ck_assert_int_eq(tx_rt_parallel(visit, &j, j.n), 0);
                for (int64_t i = 0; i < j.n; i++)
                    ck_assert_msg(seen[i] == 1, "%d threads, %lld iterations: iteration %lld ran %d times",
                                  threads[a], (long long)j.n, (long long)i, seen[i]);
            }
    tx_rt_set_threads(0);
}
END_TEST

START_TEST(bad_thread_count)
{
    tx_ctx *c = tx_new();
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_THREADS, -1), TX_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(tx_errmsg(c), "threads"));
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_THREADS, 0), TX_OK);
    tx_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, same_bytes_for_any_thread_count);
    tcase_add_test(tc, programs_in_several_threads);
    tcase_add_test(tc, bad_thread_count);
    tcase_add_test(tc, every_iteration_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
