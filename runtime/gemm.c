/*
 * gemm.c - the library's cblas_dgemm: OpenBLAS's, turned round when its
 * kernel runs faster the other way.
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
 * the same shapes, core and thread count.
 *
 * On several threads a product is shared out by the wrapper itself
 * (tx_rt_dgemm, tx_rt_sgemm): the rows of C (or its columns, when C is
 * wider than tall) are cut into one part per thread of the pool, each a
 * multiple of 16 long, and each part is one single-threaded OpenBLAS
 * call on a thread of the pool (tx_rt_parallel_blas), where OpenBLAS's
 * own threads would share out the product call by call, zero C in a
 * threaded pass of their own first (beta = 0), and stay awake after
 * it. On the 2-core AVX-512 Xeon, OpenBLAS 0.3.21, a C loop of calls,
 * medians of 21, in a C model of the two (not kept; its parts on OpenMP
 * threads): 64x256x256 161 -> 122 us,
 * 256x256x256 468 -> 340, 1000x500x500 5.75 -> 5.00 ms. In the library,
 * alternated with the one-call build (tx_loop, medians, a noisy
 * machine): a 64x256x256 dense tanh layer 167 -> 155 and 175 -> 159
 * us, 256x256x256 413 -> 392 us, bench/ccsd.tx 7.47 -> 6.68 ms in 11
 * rounds but 6.51 -> 7.00 in 7, a 1000x500x500 + 500x100 MLP and a
 * 1024^3 product unchanged within the noise. Products
 * smaller than MIN_SHARED multiply-adds are one call, with OpenBLAS's
 * threads as api.c set them. Each element of C is computed by the same
 * kernel loop as in one call over the whole of C, summed in the same
 * order, except for the rows (columns) of a part's edge, which OpenBLAS
 * may compute with its narrower edge kernels: the bits are the same on
 * every call with the same shapes, core and thread count.
 *
 * Generated code calls cblas_dgemm and cblas_sgemm; runtime.c's table
 * gives it these functions under those names, for the libtcc and the cc
 * tier alike (a standalone file calls the BLAS it is linked with).
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

static void dgemm_one(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                      const double *b, int ldb, double beta, double *c, int ldc)
{
    if (order == CblasRowMajor && m >= 4 * n && n >= 2 && k >= 16 && (double)m * n * k >= MIN_TURNED &&
        skylakex_kernels()) {
        int64_t rows = SCRATCH_ELEMS / n > 4 * (int64_t)n ? SCRATCH_ELEMS / n : 4 * (int64_t)n;
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
    cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* Products of at least this many multiply-adds are shared out between
   the pool's threads (a 128x128x64 one, about 30 us on one thread) */
#define MIN_SHARED 1048576.0
/* a part's rows (columns): a multiple of this */
#define PART_ALIGN 16

/* A product C = op(A) op(B) (row-major, M x N) shared out: part P of
   PARTS is the rows [P0, P1) of C (ROWS) or its columns */
typedef struct {
    int single, ta, tb, m, n, k, lda, ldb, ldc, rows, parts;
    double alpha, beta;
    const void *a, *b;
    void *c;
} gemm_job;

/* where part P of a job's rows (columns) begins */
static int part_start(const gemm_job *j, int64_t p)
{
    int64_t total = j->rows ? j->m : j->n;
    int64_t s = (total * p / j->parts + PART_ALIGN / 2) / PART_ALIGN * PART_ALIGN;
    return (int)(p >= j->parts || s > total ? total : s);
}

static int gemm_parts(const void *args, int64_t lo, int64_t hi)
{
    const gemm_job *j = args;
    for (int64_t p = lo; p < hi; p++) {
        int p0 = part_start(j, p), p1 = part_start(j, p + 1);
        if (p0 >= p1)
            continue;
        /* rows P0.. of op(A) are rows of A, or its columns when stored
           transposed; columns P0.. of op(B) likewise */
        int64_t ao = j->rows ? (j->ta == CblasNoTrans ? (int64_t)p0 * j->lda : p0) : 0;
        int64_t bo = j->rows ? 0 : (j->tb == CblasNoTrans ? p0 : (int64_t)p0 * j->ldb);
        int64_t co = j->rows ? (int64_t)p0 * j->ldc : p0;
        int m = j->rows ? p1 - p0 : j->m, n = j->rows ? j->n : p1 - p0;
        if (j->single)
            cblas_sgemm(CblasRowMajor, j->ta, j->tb, m, n, j->k, (float)j->alpha, (const float *)j->a + ao, j->lda,
                        (const float *)j->b + bo, j->ldb, (float)j->beta, (float *)j->c + co, j->ldc);
        else
            dgemm_one(CblasRowMajor, j->ta, j->tb, m, n, j->k, j->alpha, (const double *)j->a + ao, j->lda,
                      (const double *)j->b + bo, j->ldb, j->beta, (double *)j->c + co, j->ldc);
    }
    return 0;
}

/* 1 when the product was shared out and computed; 0: the caller makes
   the one call. Not on one thread, not inside a batch of BLAS calls on
   the pool's threads (OpenBLAS set to one thread there), not for a small
   product or one with neither side long enough for two parts. */
static int gemm_shared(gemm_job *j)
{
    int nt = tx_rt_threads();
    if (nt <= 1 || openblas_get_num_threads() <= 1 || (double)j->m * j->n * j->k < MIN_SHARED)
        return 0;
    j->rows = j->m >= j->n;
    if ((j->rows ? j->m : j->n) < 2 * PART_ALIGN)
        return 0;
    j->parts = nt;
    tx_rt_parallel_blas(gemm_parts, j, nt);
    return 1;
}

void tx_rt_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc)
{
    gemm_job j = {0, ta, tb, m, n, k, lda, ldb, ldc, 0, 0, alpha, beta, a, b, c};
    if (order != CblasRowMajor || !gemm_shared(&j))
        dgemm_one(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void tx_rt_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc)
{
    gemm_job j = {1, ta, tb, m, n, k, lda, ldb, ldc, 0, 0, alpha, beta, a, b, c};
    if (order != CblasRowMajor || !gemm_shared(&j))
        cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
