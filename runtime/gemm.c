/*
 * gemm.c - the BLAS calls of generated code in the library: cblas_dgemm
 * and cblas_sgemm (OpenBLAS's, tall ones on the pool's threads in bands
 * of rows, double ones turned round when the kernel runs faster the
 * other way),
 * cblas_dgemv, cblas_ddot and cblas_sdot (our own loops, on the pool's
 * threads, where OpenBLAS's are slower or leave its threads polling; see
 * each below).
 *
 * A row-major product C = op(A) op(B) of M x N is, in memory, the same
 * as the column-major product C^T = op(B)^T op(A)^T, and that is what
 * OpenBLAS computes: its kernel's long side (SkylakeX's dgemm kernel
 * takes 16 rows of the column-major result at a time, 2 columns) runs
 * along N. For a tall, narrow C (M at least 4 N) OpenBLAS 0.3.21's
 * SkylakeX kernels are 1.1 to 1.3 times faster on the transposed
 * problem: S = op(A) op(B) written as N x M, then copied into C
 * transposed, a panel of rows at a time. On a 2-core AVX-512 Xeon, one
 * thread, medians of 7 rounds (bench/gemm_orient.py measures them):
 * 1600x64x1600 7.75 -> 6.13 ms, 2000x100x500 4.18 -> 3.32, 4096x32x4096
 * 35.9 -> 27.2, 3000x200x3000 68.7 -> 53.3; 2 threads 1.08 to 1.31.
 * The other cases are not faster that way (64x1600x1600 is 1.2 times
 * slower, square ones 1.0 to 1.1 slower), OpenBLAS's Haswell kernels
 * gain nothing (0.91 to 1.07), and sgemm is slower turned round (0.7
 * to 1.0): the wrapper turns only double products, only on the cores
 * that run the SkylakeX kernels, only for M >= 4 N, and only large ones
 * (small ones, 256x16x256, 500x8x500, vary either way by 10 to 20 %).
 *
 * The bits: the transposed problem sums in another order, so C differs
 * from plain cblas_dgemm's in the last bits, the same on every call with
 * the same shapes and core, for any number of threads: whether a product
 * is turned is decided from the whole product (turned()), and its bands
 * (below) are turned as the one call is. A band's own size had decided
 * it: 1001x100x300 went as one turned call on one thread and as two plain
 * ones of about 500 rows on two, with other bits (check_gemm under
 * OPENBLAS_CORETYPE=SkylakeX, on the first AVX-512 machine it ran on).
 *
 * On several threads a tall GEMM (M at least 2 N) is cut into one band
 * of rows of C per pool thread, each band one call on one OpenBLAS
 * thread (gemm_bands below: faster on AMD's Zen 3, and the same bits for
 * any thread count); any other is OpenBLAS's threaded one. On a 2-core
 * AVX-512 Xeon with OpenBLAS's SkylakeX kernels, bands had measured
 * slower for small products and faster for large ones (two threads,
 * bench/tx_loop, huge pages, alternated, medians of 15: 500x200x500 1.64
 * -> 2.63 ms, 100x500x500 0.85 -> 0.92, 1000x500x500 7.8 -> 7.0); that
 * machine is no longer at hand to measure the rule on.
 *
 * Generated code calls cblas_dgemm (sgemm, dgemv, ddot, sdot); runtime.c's
 * table gives it these functions under those names, for the libtcc and
 * the cc tier alike (a standalone file calls the BLAS it is linked with).
 */
#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

char *openblas_get_corename(void);

/* 1 when OpenBLAS runs the SkylakeX dgemm kernels (asked once; the
   core is fixed when OpenBLAS loads, OPENBLAS_CORETYPE included) */
static int skylakex_kernels(void)
{
    static int known = -1; /* a race only computes the same value twice */
    if (known < 0) {
        const char *c = openblas_get_corename();
        known = c && (!strcmp(c, "SkylakeX") || !strcmp(c, "skylakex") || !strcmp(c, "Cooperlake") ||
                      !strcmp(c, "cooperlake") || !strcmp(c, "SapphireRapids") || !strcmp(c, "sapphirerapids"));
    }
    return known;
}

/* C (M x N, row stride LDC) = S^T + BETA C, S being N x M (row stride
   M), in 32 x 32 tiles; C is not read when BETA is 0 (BLAS's rule) */
static void add_transposed(int m, int n, const double *s, double beta, double *c, int ldc)
{
    enum { T = 32 };
    for (int i0 = 0; i0 < m; i0 += T)
        for (int j0 = 0; j0 < n; j0 += T) {
            int i1 = i0 + T < m ? i0 + T : m, j1 = j0 + T < n ? j0 + T : n;
            for (int i = i0; i < i1; i++) {
                double *ci = c + (int64_t)i * ldc;
                const double *si = s + i;
                if (beta == 0)
                    for (int j = j0; j < j1; j++)
                        ci[j] = si[(int64_t)j * m];
                else
                    for (int j = j0; j < j1; j++)
                        ci[j] = si[(int64_t)j * m] + beta * ci[j];
            }
        }
}

/* Products smaller than this many multiply-adds (a 512x64x512 one, 0.4
   ms) gain nothing measurable turned round, and pay the copy */
#define MIN_TURNED 16777216.0

/* Rows of C per transposed call: at least 4 N (the shape that gains),
   else as many as keep S within 4 MiB: a C of any size needs only that
   much more memory */
#define SCRATCH_ELEMS ((int64_t)1 << 19)

/* The rows of C a turned product's calls start on are multiples of this:
   the SkylakeX dgemm kernel's 16 rows of its column-major result (C's
   rows turned), so that every row of C falls in the same block of the
   kernel however the product is cut (rows that end a call inside a block
   go through its edge kernels). check_gemm's shapes gave the same bits
   with cuts at 24 rows too; OpenBLAS states no rule either way. */
#define TURNED_ROWS 16

/* Is the row-major product of M x N over K (M the whole product's rows,
   not a band's) turned round? Decided once per product, so that its
   bands are turned as the one call is: the same bits on any number of
   threads. */
static int turned(int m, int n, int k)
{
    return m >= 4 * n && n >= 2 && k >= 16 && (double)m * n * k >= MIN_TURNED && skylakex_kernels();
}

/* rows [0, M) of the product, turned round if TURN (turned() of the
   whole product, of which these rows are a band starting on a multiple
   of TURNED_ROWS) */
static void dgemm_one(int turn, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                      const double *b, int ldb, double beta, double *c, int ldc)
{
    if (turn) {
        int64_t rows = SCRATCH_ELEMS / n > 4 * (int64_t)n ? SCRATCH_ELEMS / n : 4 * (int64_t)n;
        rows = (rows + TURNED_ROWS - 1) / TURNED_ROWS * TURNED_ROWS;
        int mc = rows < m ? (int)rows : m;
        double *s = malloc((size_t)mc * (size_t)n * sizeof *s);
        if (s) {
            for (int i0 = 0; i0 < m; i0 += mc) {
                int mm = m - i0 < mc ? m - i0 : mc;
                /* rows I0.. of op(A): rows of A, or columns of A stored transposed */
                const double *ai = ta == CblasNoTrans ? a + (int64_t)i0 * lda : a + i0;
                /* S = op(B)^T op(A_i)^T, N x MM */
                cblas_dgemm(CblasRowMajor, tb == CblasNoTrans ? CblasTrans : CblasNoTrans,
                            ta == CblasNoTrans ? CblasTrans : CblasNoTrans, n, mm, k, alpha, b, ldb, ai, lda, 0.0, s,
                            mm);
                add_transposed(mm, n, s, beta, c + (int64_t)i0 * ldc, ldc);
            }
            free(s);
            return;
        }
    }
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* On several threads, a tall product (M at least 2 N; row-major, as
   generated code's are) is cut into one band of rows of C per pool
   thread, each band one call on one OpenBLAS thread, rather than one call
   on OpenBLAS's threads. OpenBLAS computes C^T = op(B)^T op(A)^T: C's rows
   are the columns of its problem, its N, which it splits among its threads
   only as far as N allows, while the bands split the long side whatever N
   is, and each thread packs its own rows of A. AMD EPYC (Zen 3), OpenBLAS
   0.3.21's Haswell kernels, 2 threads, one process alternating the two
   through the library (the same program, bench/tx_loop's harness, 15
   rounds, medians; the VM's times move by 10-30 % between rounds):
   1600x64x1600 (CCSD's W T) 6.8 -> 6.2, 7.1 -> 6.9, 8.4 -> 5.8, 6.5 -> 7.0 ms;
   2000x64x2000 12.7 -> 11.1; 4000x100x100 1.97 -> 1.70, 2.43 -> 1.70,
   1.83 -> 1.57; 1000x100x500 2.50 -> 2.27; 1000x500x500 8.8 -> 8.2, 8.5 ->
   8.4, 8.8 -> 8.0; 512x128x512 1.15 -> 1.07, 1.07 -> 1.03 (and 1.13 ->
   1.19); 300x100x300 0.42 -> 0.34, 0.51 -> 0.32; 128x64x512 0.18 -> 0.14;
   a two-layer MLP (1000x500x500, 1000x100x500) 10.7 -> 9.9, 11.5 -> 9.9.
   f32: 300x100x300 0.23 -> 0.17, 0.26 -> 0.16; 256x64x256 0.097 ->
   0.076; 2000x500x500 8.3 -> 7.7; 1000x500x500 3.85 -> 3.88, 3.84 ->
   3.76 (a dense tanh layer of that shape 4.21 -> 3.80, 4.09 -> 3.94).
   Not for other shapes: square ones measured the same or slower in
   bands (512^3 5.1 -> 5.9, 700x500x300 4.2 -> 4.8), and wide ones cut
   into bands of columns slower (100x1000x500 1.8 -> 2.1, 64x512x512 0.67
   -> 0.79). (On a 2-core AVX-512 Xeon, bands had measured slower for
   small products: the file's first comment.)
   Each band sums every element of C over K in the order a one-thread
   call does (OpenBLAS cuts K by K alone, and a band starts on a block of
   its kernel's rows, BAND_ROWS), so C has the same bits on any number of
   threads (tests/check_gemm.c, check_threads.c; OpenBLAS's own threads
   give other bits on some shapes, 300x200x100 among them). Inside a
   batch on the pool (tx_rt_parallel_blas), OpenBLAS is on one thread
   already and the call is made as it is. */
typedef struct {
    int f32, ta, tb, m, n, k, lda, ldb, ldc;
    double alpha, beta;
    const void *a, *b;
    void *c;
    int turn; /* a double product turned round (turned()) */
} gemm_job;

/* rows of C per unit of the pool's range, a multiple of every x86-64
   kernel's unroll along them (OpenBLAS's N: 2 to 8 for doubles, 4 to 12
   for floats; a band that ends inside one of its blocks runs the rows
   before that end by its edge kernel, which sums in another order: at 8
   rows a unit, 4099x8x129 sgemm on Zen, where N goes 12 at a time,
   differed in rows 2040-2047), and small, so that the bands are even (at
   48, 1000 rows went 480 and 520); a band has at least BAND_MIN_ROWS,
   and the product BAND_MIN_MADDS multiply-adds */
#define BAND_ROWS 24
/* and of a turned product: a multiple of TURNED_ROWS too */
#define TURNED_BAND_ROWS 48
#define BAND_MIN_ROWS 64
#define BAND_MIN_MADDS 4194304.0

/* rows of C per unit of G's range on the pool */
static int64_t band_unit(const gemm_job *g)
{
    return g->turn ? TURNED_BAND_ROWS : BAND_ROWS;
}

/* the rows [LO, HI) * band_unit of C, one call */
static int gemm_rows(const void *args, int64_t lo, int64_t hi)
{
    const gemm_job *g = args;
    int64_t unit = band_unit(g);
    int i0 = (int)(lo * unit), i1 = hi * unit < g->m ? (int)(hi * unit) : g->m;
    /* row I0 of op(A): a row of A, or a column of A stored transposed */
    int64_t at = g->ta == CblasNoTrans ? (int64_t)i0 * g->lda : i0, ct = (int64_t)i0 * g->ldc;
    if (g->f32)
        cblas_sgemm(CblasRowMajor, g->ta, g->tb, i1 - i0, g->n, g->k, (float)g->alpha, (const float *)g->a + at,
                    g->lda, g->b, g->ldb, (float)g->beta, (float *)g->c + ct, g->ldc);
    else
        dgemm_one(g->turn, g->ta, g->tb, i1 - i0, g->n, g->k, g->alpha, (const double *)g->a + at, g->lda,
                  g->b, g->ldb, g->beta, (double *)g->c + ct, g->ldc);
    return 0;
}

/* G in bands on the pool's threads, if it is a tall product worth it
   there: 1 if done, 0 if the caller is to make the one call */
static int gemm_bands(const gemm_job *g)
{
    int nt = tx_rt_threads(), was;
    if (nt < 2 || g->m < 2 * g->n || g->m < BAND_MIN_ROWS * nt ||
        (double)g->m * g->n * g->k < BAND_MIN_MADDS || (was = openblas_get_num_threads()) < 2)
        return 0;
    openblas_set_num_threads(1);
    tx_rt_parallel_wide(gemm_rows, g, (g->m + band_unit(g) - 1) / band_unit(g));
    openblas_set_num_threads(was);
    return 1;
}

void tx_rt_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc)
{
    if (order != CblasRowMajor) {
        cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    gemm_job g = {0, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c, turned(m, n, k)};
    if (!gemm_bands(&g))
        dgemm_one(g.turn, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void tx_rt_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc)
{
    gemm_job g = {1, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c, 0};
    if (order != CblasRowMajor || !gemm_bands(&g))
        cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* The library's cblas_dgemv: y = alpha A x + beta y. A row-major,
   untransposed product (the CPU with AVX2 and FMA) is its own: four rows
   at a time, one vector of four partial sums a row, folded (lanes 0 + 1,
   2 + 3, then the two) with the tail's scalar sum last, so each row's
   bits depend on its length alone. x at a stride (A("i,j,k") * B("k,j"),
   one call per j) is first copied to unit stride, up to GEMV_XCOPY
   elements. A product of 65536 multiply-adds or more is shared among the
   pool's threads in parts of GEMV_PART rows: the same bits for any
   number of threads. Alternated in bench/tx_loop (huge pages, medians):
   - 256 batches of 256x64 (A("b,i,j") * x("b,j")), one thread: 2.4 ms
     with OpenBLAS 0.3.21's dgemv, 1.9 with this (a C loop of the calls:
     2.14 against 1.15);
   - two threads, single products: 4000x200 111 -> 57 us, 1000x100 15.1
     -> 8.2, 400000x32 5.2 -> 3.0 ms (OpenBLAS ran these on one thread);
     rows of 500 to 4096 are the same either way (500x500 21 -> 20 us,
     4096x4096 3.9 -> 3.7 ms), and one thread too (4096x4096 5.4 -> 5.0);
   - 128 calls of 128x128 with x at a stride of 128 (the bench's
     contract_ijk), two threads: 347 -> 288 us.
   And no OpenBLAS thread is left polling for work on a core the pool's
   next kernel wants (see tx_rt_ddot). A row-major transposed product (a
   vector times a matrix) with y at unit stride is its own too
   (gemv_cols). Anything else is OpenBLAS's. beta 0: y is not read
   (BLAS's rule). */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2,fma"))) static double gemv_fold(__m256d v)
{
    __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
    double l[2], h[2];
    _mm_storeu_pd(l, lo);
    _mm_storeu_pd(h, hi);
    return (l[0] + l[1]) + (h[0] + h[1]);
}

__attribute__((target("avx2,fma"))) static void gemv_rows(int m, int n, double alpha, const double *a, int lda,
                                                           const double *x, double beta, double *y, int incy)
{
    const int n4 = n & ~3;
    int i = 0;
    for (; i + 4 <= m; i += 4) {
        const double *r0 = a + (int64_t)i * lda, *r1 = r0 + lda, *r2 = r1 + lda, *r3 = r2 + lda;
        __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
        for (int j = 0; j < n4; j += 4) {
            __m256d xv = _mm256_loadu_pd(x + j);
            s0 = _mm256_fmadd_pd(_mm256_loadu_pd(r0 + j), xv, s0);
            s1 = _mm256_fmadd_pd(_mm256_loadu_pd(r1 + j), xv, s1);
            s2 = _mm256_fmadd_pd(_mm256_loadu_pd(r2 + j), xv, s2);
            s3 = _mm256_fmadd_pd(_mm256_loadu_pd(r3 + j), xv, s3);
        }
        double t[4] = {gemv_fold(s0), gemv_fold(s1), gemv_fold(s2), gemv_fold(s3)};
        const double *r[4] = {r0, r1, r2, r3};
        for (int k = 0; k < 4; k++) {
            double e = 0;
            for (int j = n4; j < n; j++)
                e += r[k][j] * x[j];
            double v = alpha * (t[k] + e);
            double *yk = y + (int64_t)(i + k) * incy;
            *yk = beta == 0 ? v : v + beta * *yk;
        }
    }
    for (; i < m; i++) {
        const double *r0 = a + (int64_t)i * lda;
        __m256d s0 = _mm256_setzero_pd();
        for (int j = 0; j < n4; j += 4)
            s0 = _mm256_fmadd_pd(_mm256_loadu_pd(r0 + j), _mm256_loadu_pd(x + j), s0);
        double e = 0;
        for (int j = n4; j < n; j++)
            e += r0[j] * x[j];
        double v = alpha * (gemv_fold(s0) + e);
        double *yi = y + (int64_t)i * incy;
        *yi = beta == 0 ? v : v + beta * *yi;
    }
}

static int gemv_avx2(void)
{
    static int known = -1; /* a race only computes the same value twice */
    if (known < 0)
        known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return known;
}
#endif

/* The library's cblas_ddot and cblas_sdot: a dot product of unit
   strides in chunks as tx_rt_reduce cuts a sum (a number fixed by N
   alone, at most 64 of 16384 or more elements), on the pool's threads, each chunk
   in sixteen lanes of partial sums (four vectors, folded pairwise), the
   chunks' results added in order: the same bits for any number of
   threads. OpenBLAS's ddot is threaded by OpenBLAS's own threads, and
   those spin for their next job after it (about 2^28 cycles) on the
   cores the pool's next kernel wants: cross-entropy over 3000x1000 (a
   row logsumexp, then the ddot of Y and X) on two threads took 4.4 ms
   (OpenBLAS's ddot), 3.4 with OPENBLAS_THREAD_TIMEOUT=4, 3.1 with this;
   one thread 6.2 -> 6.0 (bench/tx_loop, alternated, medians of 7). f32
   sums in double, as the primitives' f32 sums do, at a stride too (a
   plain loop, one thread: OpenBLAS's sdot sums in float). Other strides
   of ddot are OpenBLAS's. */
#define DOT_CHUNK 16384
#define DOT_MAXCHUNKS 64

#if defined(__x86_64__) && defined(__GNUC__)
typedef struct {
    int64_t n, nc;
    const void *x, *y;
    int f32;
    double part[DOT_MAXCHUNKS];
} dot_job;

__attribute__((target("avx2,fma"))) static double dot_f64(int64_t n, const double *x, const double *y)
{
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i), s0);
        s1 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 4), _mm256_loadu_pd(y + i + 4), s1);
        s2 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 8), _mm256_loadu_pd(y + i + 8), s2);
        s3 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 12), _mm256_loadu_pd(y + i + 12), s3);
    }
    for (; i + 4 <= n; i += 4)
        s0 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i), s0);
    double e = 0;
    for (; i < n; i++)
        e += x[i] * y[i];
    return gemv_fold(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3))) + e;
}

__attribute__((target("avx2,fma"))) static double dot_f32(int64_t n, const float *x, const float *y)
{
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(y + i);
        __m256 c = _mm256_loadu_ps(x + i + 8), d = _mm256_loadu_ps(y + i + 8);
        s0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_castps256_ps128(b)), s0);
        s1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)),
                             s1);
        s2 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(c)), _mm256_cvtps_pd(_mm256_castps256_ps128(d)), s2);
        s3 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(c, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1)),
                             s3);
    }
    double e = 0;
    for (; i < n; i++)
        e += (double)x[i] * (double)y[i];
    return gemv_fold(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3))) + e;
}

static int dot_chunks(const void *args, int64_t lo, int64_t hi)
{
    dot_job *j = (dot_job *)(uintptr_t)args; /* the job is ours, not const */
    int64_t per = (j->n / j->nc) & ~(int64_t)15;
    for (int64_t c = lo; c < hi; c++) {
        int64_t a = per * c, b = c + 1 == j->nc ? j->n : per * (c + 1);
        j->part[c] = j->f32 ? dot_f32(b - a, (const float *)j->x + a, (const float *)j->y + a)
                            : dot_f64(b - a, (const double *)j->x + a, (const double *)j->y + a);
    }
    return 0;
}

/* the dot of N elements of X and Y, unit strides, F32 for floats */
static double dot_pool(int64_t n, const void *x, const void *y, int f32)
{
    dot_job j;
    j.n = n;
    j.nc = n / DOT_CHUNK < 1 ? 1 : n / DOT_CHUNK > DOT_MAXCHUNKS ? DOT_MAXCHUNKS : n / DOT_CHUNK;
    j.x = x;
    j.y = y;
    j.f32 = f32;
    if (j.nc == 1)
        dot_chunks(&j, 0, 1);
    else
        tx_rt_parallel(dot_chunks, &j, j.nc);
    double r = j.part[0];
    for (int64_t c = 1; c < j.nc; c++)
        r += j.part[c];
    return r;
}
#endif

double tx_rt_ddot(int n, const double *x, int incx, const double *y, int incy)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (n >= 1 && incx == 1 && incy == 1 && gemv_avx2())
        return dot_pool(n, x, y, 0);
#endif
    return cblas_ddot(n, x, incx, y, incy);
}

float tx_rt_sdot(int n, const float *x, int incx, const float *y, int incy)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (n >= 1 && incx == 1 && incy == 1 && gemv_avx2())
        return (float)dot_pool(n, x, y, 1);
#endif
    if (n >= 1 && incx > 0 && incy > 0) { /* in double too (OpenBLAS's sums in float), in four lanes */
        double s[4] = {0, 0, 0, 0};
        int i = 0;
        for (; i + 4 <= n; i += 4)
            for (int j = 0; j < 4; j++)
                s[j] += (double)x[(int64_t)(i + j) * incx] * (double)y[(int64_t)(i + j) * incy];
        for (int j = 0; i < n; i++, j++)
            s[j] += (double)x[(int64_t)i * incx] * (double)y[(int64_t)i * incy];
        return (float)((s[0] + s[1]) + (s[2] + s[3]));
    }
    return cblas_sdot(n, x, incx, y, incy);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMV_PART 16    /* rows per part of the pool's range */
#define GEMV_XCOPY 4096 /* the longest x at a stride copied (32 KiB of stack) */

/* a product shared among the pool's threads: by rows (gemv_part) or,
   transposed, by columns (gemv_t_part) */
typedef struct {
    int m, n, lda, incx, incy;
    double alpha, beta;
    const double *a, *x;
    double *y;
} gemv_job;

static int gemv_part(const void *args, int64_t lo, int64_t hi)
{
    const gemv_job *j = args;
    int64_t r0 = lo * GEMV_PART, r1 = hi * GEMV_PART < j->m ? hi * GEMV_PART : j->m;
    gemv_rows((int)(r1 - r0), j->n, j->alpha, j->a + r0 * j->lda, j->lda, j->x, j->beta, j->y + r0 * j->incy,
               j->incy);
    return 0;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* y = alpha A x + beta y, x at unit stride: on the pool when large */
static void gemv_own(int m, int n, double alpha, const double *a, int lda, const double *x, double beta, double *y,
                     int incy)
{
    if ((int64_t)m * n >= 65536 && m >= 2 * GEMV_PART) {
        gemv_job j = {m, n, lda, 1, incy, alpha, beta, a, x, y};
        tx_rt_parallel(gemv_part, &j, (m + GEMV_PART - 1) / GEMV_PART);
    } else
        gemv_rows(m, n, alpha, a, lda, x, beta, y, incy);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* The transposed product, y = alpha A^T x + beta y for A M x N row-major
   (a vector times a matrix: y("j") = x("i") * A("i,j")), y at unit
   stride: its columns [C0, C1) by rows of A, eight rows at a time, each
   vector of four columns t = alpha x_i a_i + ... in two chains (rows 0,
   2, 4, 6 and 1, 3, 5, 7, fused multiply-adds) added to y, the rows
   past the last eight one at a time; the columns in blocks of
   GEMV_TBLOCK, whose part of y stays in L1 while the rows stream by; a
   last part vector of columns through masks. Every column's operations
   are the same whichever part of the columns a call computes, so any
   split gives the same bits. OpenBLAS 0.3.21's dgemv (Haswell kernels,
   AMD EPYC Zen 3, one thread, a C test, best of 9, arrays 16 bytes past
   a line): 4096x4096 5.99 -> 5.69 ms, 2000x3000 2.21 -> 1.68, 10000x500
   2.02 -> 1.81, 500x10000 1.56 -> 1.26, 1000x1000 (in L3) 153 -> 143 us. */
#define GEMV_TBLOCK 2048 /* columns of y at a time: 16 KiB */
#define GEMV_TPART 64    /* columns per part of the pool's range */

__attribute__((target("avx2,fma"))) static void gemv_cols(int m, int c0, int c1, double alpha, const double *a,
                                                           int lda, const double *x, int incx, double beta, double *y)
{
    for (int b0 = c0; b0 < c1; b0 += GEMV_TBLOCK) {
        const int b1 = c1 - b0 < GEMV_TBLOCK ? c1 : b0 + GEMV_TBLOCK;
        const __m256i tail = _mm256_cmpgt_epi64(_mm256_set1_epi64x((b1 - b0) % 4), _mm256_setr_epi64x(0, 1, 2, 3));
        const int v1 = b1 - (b1 - b0) % 4; /* the columns past V1: the masked vector */
        for (int j = b0; j < b1; j++)
            y[j] = beta == 0 ? 0.0 : beta * y[j];
        int i = 0;
        for (; i + 8 <= m; i += 8) {
            const double *r = a + (int64_t)i * lda;
            __m256d xv[8];
            for (int k = 0; k < 8; k++)
                xv[k] = _mm256_set1_pd(alpha * x[(int64_t)(i + k) * incx]);
#define GEMV_T8_(LD, j)                                                                                      \
    __m256d t = _mm256_mul_pd(xv[0], LD(r + (j))), u = _mm256_mul_pd(xv[1], LD(r + lda + (j)));           \
    t = _mm256_fmadd_pd(xv[2], LD(r + 2 * (int64_t)lda + (j)), t);                                         \
    u = _mm256_fmadd_pd(xv[3], LD(r + 3 * (int64_t)lda + (j)), u);                                         \
    t = _mm256_fmadd_pd(xv[4], LD(r + 4 * (int64_t)lda + (j)), t);                                         \
    u = _mm256_fmadd_pd(xv[5], LD(r + 5 * (int64_t)lda + (j)), u);                                         \
    t = _mm256_fmadd_pd(xv[6], LD(r + 6 * (int64_t)lda + (j)), t);                                         \
    u = _mm256_fmadd_pd(xv[7], LD(r + 7 * (int64_t)lda + (j)), u);
#define GEMV_LDU_(p) _mm256_loadu_pd(p)
#define GEMV_LDM_(p) _mm256_maskload_pd((p), tail)
            for (int j = b0; j < v1; j += 4) {
                GEMV_T8_(GEMV_LDU_, j)
                _mm256_storeu_pd(y + j, _mm256_add_pd(_mm256_loadu_pd(y + j), _mm256_add_pd(t, u)));
            }
            if (v1 < b1) {
                GEMV_T8_(GEMV_LDM_, v1)
                _mm256_maskstore_pd(y + v1, tail, _mm256_add_pd(_mm256_maskload_pd(y + v1, tail), _mm256_add_pd(t, u)));
            }
#undef GEMV_T8_
        }
        for (; i < m; i++) {
            const double *r = a + (int64_t)i * lda;
            const __m256d xi = _mm256_set1_pd(alpha * x[(int64_t)i * incx]);
            for (int j = b0; j < v1; j += 4)
                _mm256_storeu_pd(y + j, _mm256_fmadd_pd(xi, _mm256_loadu_pd(r + j), _mm256_loadu_pd(y + j)));
            if (v1 < b1)
                _mm256_maskstore_pd(y + v1, tail, _mm256_fmadd_pd(xi, GEMV_LDM_(r + v1), _mm256_maskload_pd(y + v1, tail)));
        }
#undef GEMV_LDU_
#undef GEMV_LDM_
    }
}

static int gemv_t_part(const void *args, int64_t lo, int64_t hi)
{
    const gemv_job *j = args;
    int64_t c1 = hi * GEMV_TPART < j->n ? hi * GEMV_TPART : j->n;
    gemv_cols(j->m, (int)(lo * GEMV_TPART), (int)c1, j->alpha, j->a, j->lda, j->x, j->incx, j->beta, j->y);
    return 0;
}

/* y = alpha A^T x + beta y, y at unit stride: on the pool when large,
   one run of parts of GEMV_TPART columns per thread (tx_rt_parallel_wide:
   each call goes down every row of A, so fewer, wider calls read longer
   runs of each row; two threads, tx_loop, alternated, 2000x3000 1.63-2.10
   ms with a few calls per thread, 0.98-1.30 this way, OpenBLAS's dgemv
   1.40-1.49; 10000x500 2.09-2.80, 1.40-1.69, 1.74-1.84) */
static void gemv_t_own(int m, int n, double alpha, const double *a, int lda, const double *x, int incx, double beta,
                       double *y)
{
    if ((int64_t)m * n >= 65536 && n >= 2 * GEMV_TPART) {
        gemv_job j = {m, n, lda, incx, 1, alpha, beta, a, x, y};
        tx_rt_parallel_wide(gemv_t_part, &j, (n + GEMV_TPART - 1) / GEMV_TPART);
    } else
        gemv_cols(m, 0, n, alpha, a, lda, x, incx, beta, y);
}
#endif

void tx_rt_dgemv(int order, int trans, int m, int n, double alpha, const double *a, int lda, const double *x,
                 int incx, double beta, double *y, int incy)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (order == CblasRowMajor && trans == CblasNoTrans && n >= 1 && m >= 1 &&
        (incx == 1 || (incx > 1 && n <= GEMV_XCOPY)) && incy >= 1 && lda >= n && gemv_avx2()) {
        if (incx == 1) {
            gemv_own(m, n, alpha, a, lda, x, beta, y, incy);
        } else { /* x at a stride, copied to unit stride first */
            double xc[GEMV_XCOPY];
            for (int j = 0; j < n; j++)
                xc[j] = x[(int64_t)j * incx];
            gemv_own(m, n, alpha, a, lda, xc, beta, y, incy);
        }
        return;
    }
    /* alpha 0: y = beta y, A and x not read (BLAS's rule): OpenBLAS's */
    if (order == CblasRowMajor && trans == CblasTrans && n >= 1 && m >= 1 && incx >= 1 && incy == 1 && lda >= n &&
        alpha != 0 && gemv_avx2()) {
        gemv_t_own(m, n, alpha, a, lda, x, incx, beta, y);
        return;
    }
#endif
    cblas_dgemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
