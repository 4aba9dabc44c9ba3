/*
 * check_gemm.c — the library's cblas_dgemm (runtime/gemm.c tx_rt_dgemm)
 * against a plain triple loop: every transposition of A and B, beta 0
 * (C full of NaN beforehand: not read), 1 and -0.5, padded leading
 * dimensions, tall products that the wrapper turns round (M >= 4 N, at
 * least 2^24 multiply-adds, on the cores that run OpenBLAS's SkylakeX
 * kernels), one taller than its
 * scratch panel (several panels), and shapes it leaves alone. Each
 * element within 8 K eps of the sum of |a||b| (the bound of any order of
 * summation). tests/run_all.sh runs it with the CPU's own OpenBLAS core
 * and, on an AVX-512 CPU, with OPENBLAS_CORETYPE=SkylakeX, which takes the
 * turned path.
 * Also the library's cblas_dgemv (tx_rt_dgemv): row-major products by
 * its own loop, short rows and long, large ones on 1, 2 and 3 threads
 * (the same bits), x at a stride; transposed row-major products (a
 * vector times a matrix) by its own loop too, their columns shared among
 * 1, 2 and 3 threads (the same bits); column-major products, and
 * transposed ones with y at a stride or alpha 0, by OpenBLAS; beta 0 (y
 * full of NaN: not read), 1 and -0.5, padded rows,
 * y at a stride (the elements between untouched).
 * On 2 and 3 threads, tall products (M >= 2 N, 2^22 multiply-adds or
 * more) in bands of rows on the pool's threads, f64 (tx_rt_dgemm) and
 * f32 (tx_rt_sgemm): every transposition, a last band short, padded
 * rows, beta 0 and -0.5; the same bytes as on one thread, within the
 * bound of any order of summation; OpenBLAS's thread count as it was
 * after the call.
 * And its cblas_ddot and cblas_sdot (tx_rt_ddot, tx_rt_sdot): lengths
 * around the chunk boundaries, within the bound of any order of summation,
 * the same bits on 1, 2 and 3 threads; strided ones (sdot's in double
 * too, ddot's by OpenBLAS).
 */
#include <cblas.h>
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tx_rt_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);
void tx_rt_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
void tx_rt_dgemv(int order, int trans, int m, int n, double alpha, const double *a, int lda, const double *x,
                 int incx, double beta, double *y, int incy);
double tx_rt_ddot(int n, const double *x, int incx, const double *y, int incy);
float tx_rt_sdot(int n, const float *x, int incx, const float *y, int incy);
void tx_rt_set_threads(int n);
char *openblas_get_corename(void);

static uint64_t seed = 12345;
static double urand(void)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) * 0x1p-53 * 2 - 1;
}

/* op(X)[i][j] of a row-major X with row stride LD */
static double at(const double *x, int trans, int ld, int i, int j)
{
    return trans ? x[(int64_t)j * ld + i] : x[(int64_t)i * ld + j];
}

/* element (I, J) of op(A) op(B), summed over K terms in order; *MAG:
   the sum of their magnitudes */
static double product_sum(const double *a, int ta, int lda, const double *b, int tb, int ldb, int i, int j, int k,
                          double *mag)
{
    double s = 0;
    *mag = 0;
    for (int l = 0; l < k; l++) {
        double p = at(a, ta, lda, i, l) * at(b, tb, ldb, l, j);
        s += p;
        *mag += fabs(p);
    }
    return s;
}

/* one product: C (M x N, row stride LDC) = ALPHA op(A) op(B) + BETA C,
   checked element by element; the padding of C is left as it was */
static void check_one(int m, int n, int k, int ta, int tb, double alpha, double beta, int pad)
{
    int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    int64_t ra = ta ? k : m, rb = tb ? n : k;
    double *a = malloc(sizeof *a * (size_t)(ra * lda)), *b = malloc(sizeof *b * (size_t)(rb * ldb));
    double *c = malloc(sizeof *c * (size_t)((int64_t)m * ldc)), *c0 = malloc(sizeof *c0 * (size_t)((int64_t)m * ldc));
    ck_assert(a && b && c && c0);
    for (int64_t i = 0; i < ra * lda; i++)
        a[i] = urand();
    for (int64_t i = 0; i < rb * ldb; i++)
        b[i] = urand();
    for (int64_t i = 0; i < (int64_t)m * ldc; i++)
        c0[i] = c[i] = beta == 0 ? NAN : urand();
    tx_rt_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
                lda, b, ldb, beta, c, ldc);
    int bad = 0;
    for (int i = 0; i < m && !bad; i++) {
        /* a tall C: a sample of its rows, the panels' edges (8192 rows) among them */
        if (m > 2000 && i % 17 && (i + 2) % 8192 > 3 && i < m - 2)
            continue;
        for (int j = 0; j < ldc && !bad; j++) {
            double got = c[(int64_t)i * ldc + j];
            if (j >= n) { /* padding: untouched */
                bad = !(got == c0[(int64_t)i * ldc + j] || (isnan(got) && isnan(c0[(int64_t)i * ldc + j])));
                ck_assert_msg(!bad, "%dx%dx%d: padding C[%d][%d] written", m, n, k, i, j);
                continue;
            }
            double mag, s = product_sum(a, ta, lda, b, tb, ldb, i, j, k, &mag);
            double old = beta == 0 ? 0 : beta * c0[(int64_t)i * ldc + j]; /* NaN unread */
            double want = alpha * s + old, tol = 8 * (k + 2) * DBL_EPSILON * (fabs(alpha) * mag + fabs(old));
            bad = !(fabs(got - want) <= tol);
            ck_assert_msg(!bad, "%dx%dx%d ta=%d tb=%d beta=%g pad=%d: C[%d][%d] = %.17g, want %.17g", m, n, k, ta, tb,
                          beta, pad, i, j, got, want);
        }
    }
    free(a);
    free(b);
    free(c);
    free(c0);
}

static const int shapes[][3] = {
    {2048, 128, 64},  /* turned (M = 4 N, 2^24 multiply-adds) */
    {4096, 7, 600},   /* turned, odd sizes */
    {16384, 2, 513},  /* turned, the narrowest */
    {17000, 64, 16},  /* turned, three scratch panels of 8192 rows */
    {1000, 260, 100}, /* not turned: M < 4 N */
    {4096, 64, 15},   /* not turned: K < 16 */
    {400, 7, 33},     /* not turned: too small */
    {16, 64, 40},     /* not turned: wide */
    {50, 50, 50},     /* not turned: square */
    {30, 1, 30},      /* not turned: one column */
};

START_TEST(gemm_matches_the_sum)
{
    const int *s = shapes[_i];
    static const double betas[] = {0, 1, -0.5};
    int large = s[0] * s[1] > 500000; /* the panels' shape: one beta per transposition */
    for (int t = 0; t < 4; t++)
        for (int bi = large ? t % 3 : 0; bi < (large ? t % 3 + 1 : 3); bi++)
            check_one(s[0], s[1], s[2], t & 1, t >> 1, bi == 2 ? 0.75 : 1.0, betas[bi], (t + bi) % 3 == 0 ? 0 : 3);
}
END_TEST

/* y = ALPHA op(A) x + BETA y for A M x N (row-major with CM 0, else
   column-major; LD = its leading dimension + PAD), y at stride INCY */
static void check_gemv(int cm, int trans, int m, int n, double alpha, double beta, int pad, int incy)
{
    int ld = (cm ? m : n) + pad, rows = trans ? n : m, cols = trans ? m : n;
    int64_t na = (int64_t)(cm ? n : m) * ld;
    double *a = malloc(sizeof *a * (size_t)(na ? na : 1)), *x = malloc(sizeof *x * (size_t)cols);
    double *y = malloc(sizeof *y * (size_t)rows * (size_t)incy), *y0 = malloc(sizeof *y0 * (size_t)rows * (size_t)incy);
    ck_assert(a && x && y && y0);
    for (int64_t i = 0; i < na; i++)
        a[i] = urand();
    for (int j = 0; j < cols; j++)
        x[j] = urand();
    for (int64_t i = 0; i < (int64_t)rows * incy; i++)
        y0[i] = y[i] = beta == 0 && i % incy == 0 ? NAN : urand();
    tx_rt_dgemv(cm ? CblasColMajor : CblasRowMajor, trans ? CblasTrans : CblasNoTrans, m, n, alpha, a, ld, x, 1, beta,
                y, incy);
    for (int i = 0; i < rows; i++) {
        for (int g = 1; g < incy; g++)
            ck_assert_msg(y[(int64_t)i * incy + g] == y0[(int64_t)i * incy + g], "gemv %dx%d: y between written", m, n);
        double s = 0, mag = 0;
        for (int j = 0; j < cols; j++) {
            /* op(A)[i][j]: A[i][j] untransposed, A[j][i] transposed */
            int r = trans ? j : i, c = trans ? i : j;
            double p = (cm ? a[(int64_t)c * ld + r] : a[(int64_t)r * ld + c]) * x[j];
            s += p;
            mag += fabs(p);
        }
        double old = beta == 0 ? 0 : beta * y0[(int64_t)i * incy];
        double want = alpha * s + old, got = y[(int64_t)i * incy];
        double tol = 8 * (cols + 2) * DBL_EPSILON * (fabs(alpha) * mag + fabs(old));
        ck_assert_msg(fabs(got - want) <= tol, "gemv cm=%d trans=%d %dx%d beta=%g pad=%d incy=%d: y[%d] = %.17g, want %.17g",
                      cm, trans, m, n, beta, pad, incy, i, got, want);
    }
    free(a);
    free(x);
    free(y);
    free(y0);
}

START_TEST(gemv_matches_the_sum)
{
    static const int ms[] = {1, 3, 4, 5, 37, 256}, ns[] = {1, 3, 4, 5, 63, 64, 65, 256, 257, 600};
    for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
            for (int v = 0; v < 8; v++) /* beta 0, 1, -0.5; padded; y at a stride; transposed (v >= 4) */
                check_gemv(0, v >= 4, ms[mi], ns[ni], v % 4 == 3 ? 0.75 : 1.0, v % 4 == 0 ? 0 : v % 4 == 1 ? 1 : -0.5,
                           v & 1 ? 3 : 0, v % 4 >= 2 ? 2 : 1);
    /* transposed: rows past the last eight, columns past a block; alpha 0
       (OpenBLAS's); column-major (OpenBLAS's) */
    check_gemv(0, 1, 8 * 9 + 5, 2048 + 4 * 3 + 2, -1.5, -0.5, 1, 1);
    check_gemv(0, 1, 16, 4096 + 1, 1.0, 0, 0, 1);
    check_gemv(0, 1, 37, 64, 0.0, -0.5, 0, 1);
    check_gemv(1, 0, 37, 64, 0.75, -0.5, 2, 1);
}
END_TEST

/* y = 2 op(A) x - y, y 0.5 beforehand (7 between the elements of a
   strided y), A M x N row-major with rows LD apart, on 1, 2 and 3
   threads: the same bytes on each, within the bound of any order of
   summation of the exact products on one */
static void check_gemv_threads(int trans, int m, int n, int ld, int incx, int incy)
{
    int rows = trans ? n : m, cols = trans ? m : n;
    double *a = malloc(sizeof *a * (size_t)m * ld), *x = malloc(sizeof *x * (size_t)cols * incx);
    double *y = malloc(sizeof *y * (size_t)rows * incy), *y1 = malloc(sizeof *y1 * (size_t)rows * incy);
    ck_assert(a && x && y && y1);
    for (int64_t i = 0; i < (int64_t)m * ld; i++)
        a[i] = urand();
    for (int64_t j = 0; j < (int64_t)cols * incx; j++)
        x[j] = urand();
    for (int t = 1; t <= 3; t++) {
        tx_rt_set_threads(t);
        for (int64_t i = 0; i < (int64_t)rows * incy; i++)
            y[i] = i % incy ? 7.0 : 0.5;
        tx_rt_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, m, n, 2.0, a, ld, x, incx, -1.0, y, incy);
        if (t == 1) {
            for (int i = 0; i < rows; i++) {
                double sum = 0, mag = 0;
                for (int j = 0; j < cols; j++) {
                    double p = (trans ? a[(int64_t)j * ld + i] : a[(int64_t)i * ld + j]) * x[(int64_t)j * incx];
                    sum += p;
                    mag += fabs(p);
                }
                double want = 2 * sum - 0.5, got = y[(int64_t)i * incy];
                ck_assert_msg(fabs(got - want) <= 8 * (cols + 2) * DBL_EPSILON * (2 * mag + 0.5),
                              "gemv trans=%d %dx%d: y[%d] = %.17g, want %.17g", trans, m, n, i, got, want);
            }
            memcpy(y1, y, sizeof *y * (size_t)rows * incy);
        } else
            ck_assert_msg(memcmp(y, y1, sizeof *y * (size_t)rows * incy) == 0,
                          "gemv trans=%d %dx%d: other bits on %d threads", trans, m, n, t);
    }
    tx_rt_set_threads(0);
    free(a);
    free(x);
    free(y);
    free(y1);
}

/* rows shared among the pool's threads (at least 65536 multiply-adds):
   long rows and short, a last part of fewer rows, y at a stride; x at a
   stride (copied to one), and one too long to copy (OpenBLAS's) */
START_TEST(gemv_on_threads)
{
    static const int gv[][3] = {{1000, 700, 1}, {4099, 17, 1}, {33, 4096, 1}, {300, 2001, 1}, {128, 128, 128}, {40, 5000, 2}};
    for (size_t s = 0; s < sizeof gv / sizeof *gv; s++)
        check_gemv_threads(0, gv[s][0], gv[s][1], gv[s][1] + 1, gv[s][2], s == 3 ? 2 : 1);
}
END_TEST

/* the transposed product by the library's loop (a vector times a
   matrix), its columns shared among the pool's threads (at least 65536
   multiply-adds and 128 columns): columns not a multiple of four or of a
   part, more than a block of them, rows not a multiple of eight, x at a
   stride, padded rows */
START_TEST(gemv_t_on_threads)
{
    static const int gv[][3] = {{1000, 700, 1}, {17, 4099, 1}, {4096, 33, 1}, {301, 2001, 3}, {9, 5003, 2}, {128, 128, 128}};
    for (size_t s = 0; s < sizeof gv / sizeof *gv; s++)
        check_gemv_threads(1, gv[s][0], gv[s][1], gv[s][1] + (int)(s % 2), gv[s][2], 1);
}
END_TEST

/* C = 1.5 op(A) op(B) + BETA C (row-major, rows PAD longer than their
   elements) in f64 or F32 on 1, 2 and 3 threads, OpenBLAS on as many:
   within the bound of any order of summation on each, the padding
   untouched, OpenBLAS's thread count as it was after; with SAME (a
   product in bands), the same bytes on each */
static void check_bands(int f32, int m, int n, int k, int ta, int tb, double beta, int pad, int same)
{
    int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    int64_t na = (int64_t)(ta ? k : m) * lda, nb = (int64_t)(tb ? n : k) * ldb, nc = (int64_t)m * ldc;
    double *a = malloc(sizeof *a * (size_t)na), *b = malloc(sizeof *b * (size_t)nb);
    double *c0 = malloc(sizeof *c0 * (size_t)nc), *c = malloc(sizeof *c * (size_t)nc), *c1 = malloc(sizeof *c1 * (size_t)nc);
    float *af = malloc(sizeof *af * (size_t)na), *bf = malloc(sizeof *bf * (size_t)nb), *cf = malloc(sizeof *cf * (size_t)nc);
    ck_assert(a && b && c0 && c && c1 && af && bf && cf);
    for (int64_t i = 0; i < na; i++)
        af[i] = (float)(a[i] = f32 ? (float)urand() : urand());
    for (int64_t i = 0; i < nb; i++)
        bf[i] = (float)(b[i] = f32 ? (float)urand() : urand());
    for (int64_t i = 0; i < nc; i++)
        c0[i] = beta == 0 ? NAN : f32 ? (float)urand() : urand();
    int cta = ta ? CblasTrans : CblasNoTrans, ctb = tb ? CblasTrans : CblasNoTrans;
    for (int t = 1; t <= 3; t++) {
        tx_rt_set_threads(t);
        openblas_set_num_threads(t); /* as a run on T threads sets it (api.c) */
        if (f32) {
            for (int64_t i = 0; i < nc; i++)
                cf[i] = (float)c0[i];
            tx_rt_sgemm(CblasRowMajor, cta, ctb, m, n, k, 1.5f, af, lda, bf, ldb, (float)beta, cf, ldc);
            for (int64_t i = 0; i < nc; i++)
                c[i] = cf[i];
        } else {
            memcpy(c, c0, sizeof *c * (size_t)nc);
            tx_rt_dgemm(CblasRowMajor, cta, ctb, m, n, k, 1.5, a, lda, b, ldb, beta, c, ldc);
        }
        ck_assert_int_eq(openblas_get_num_threads(), t);
        if (t == 1)
            memcpy(c1, c, sizeof *c * (size_t)nc);
        else if (same)
            ck_assert_msg(memcmp(c, c1, sizeof *c * (size_t)nc) == 0, "%s %dx%dx%d ta=%d tb=%d: other bits on %d threads",
                          f32 ? "sgemm" : "dgemm", m, n, k, ta, tb, t);
        double eps = f32 ? FLT_EPSILON : DBL_EPSILON;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < ldc; j++) {
                double got = c[(int64_t)i * ldc + j], old = c0[(int64_t)i * ldc + j];
                if (j >= n) {
                    ck_assert_msg(isnan(old) ? isnan(got) : got == old, "%dx%dx%d: padding C[%d][%d] written", m, n,
                                  k, i, j);
                    continue;
                }
                double mag, s = product_sum(a, ta, lda, b, tb, ldb, i, j, k, &mag);
                old = beta == 0 ? 0 : beta * old;
                double want = 1.5 * s + old;
                ck_assert_msg(fabs(got - want) <= 8 * (k + 2) * eps * (1.5 * mag + fabs(old)),
                              "%s %dx%dx%d ta=%d tb=%d beta=%g: C[%d][%d] = %.9g, want %.9g", f32 ? "sgemm" : "dgemm",
                              m, n, k, ta, tb, beta, i, j, got, want);
            }
    }
    tx_rt_set_threads(0);
    free(a);
    free(b);
    free(c0);
    free(c);
    free(c1);
    free(af);
    free(bf);
    free(cf);
}

/* tall products in bands of rows (M >= 2 N, bands of 64 rows or more):
   rows not a multiple of 8 (the last band short), the smallest that
   qualifies, K of one block and of several; and, below the bounds,
   OpenBLAS's own threads (M < 2 N, too small), whose bits may depend on
   their number */
START_TEST(gemm_in_bands)
{
    static const int sh[][3] = {{1001, 100, 300}, {4099, 8, 129}, {256, 128, 128}, {600, 32, 700}, {300, 200, 100},
                                {200, 20, 50}};
    for (size_t s = 0; s < sizeof sh / sizeof *sh; s++)
        for (int f32 = 0; f32 < 2; f32++)
            check_bands(f32, sh[s][0], sh[s][1], sh[s][2], (int)(s + f32) % 2, (int)(s / 2 + f32) % 2,
                        s % 3 ? -0.5 : 0, (int)(s % 2) * 3, s < 4);
}
END_TEST

/* a dot of N (every INC-th element) in double and in float on 1, 2 and
   3 threads: the same bits on each, within the bound of any order of
   summation of the exact products */
static void check_dot(int n, int inc)
{
    int64_t len = (int64_t)n * inc;
    double *x = malloc(sizeof *x * (size_t)len), *y = malloc(sizeof *y * (size_t)len);
    float *xf = malloc(sizeof *xf * (size_t)len), *yf = malloc(sizeof *yf * (size_t)len);
    ck_assert(x && y && xf && yf);
    for (int64_t i = 0; i < len; i++) {
        xf[i] = (float)urand();
        yf[i] = (float)urand();
        x[i] = urand();
        y[i] = urand();
    }
    double s = 0, mag = 0, sf = 0, magf = 0;
    for (int64_t i = 0; i < len; i += inc) {
        s += x[i] * y[i];
        mag += fabs(x[i] * y[i]);
        sf += (double)xf[i] * yf[i];
        magf += fabs((double)xf[i] * yf[i]);
    }
    double first = 0;
    float firstf = 0;
    for (int t = 1; t <= 3; t++) {
        tx_rt_set_threads(t);
        double d = tx_rt_ddot(n, x, inc, y, inc);
        float f = tx_rt_sdot(n, xf, inc, yf, inc);
        ck_assert_msg(fabs(d - s) <= 8 * (n + 2) * DBL_EPSILON * mag, "ddot n=%d inc=%d: %.17g, want %.17g", n, inc, d, s);
        /* the sum in double, rounded to float once, at a stride too */
        double tolf = 8 * (n + 2) * DBL_EPSILON * magf + FLT_EPSILON * fabs(sf);
        ck_assert_msg(fabs(f - sf) <= tolf, "sdot n=%d inc=%d: %.9g, want %.9g", n, inc, (double)f, sf);
        if (t == 1) {
            first = d;
            firstf = f;
        } else {
            ck_assert_msg(memcmp(&d, &first, sizeof d) == 0, "ddot n=%d: %.17g on %d threads, %.17g on 1", n, d, t, first);
            ck_assert_msg(memcmp(&f, &firstf, sizeof f) == 0, "sdot n=%d: %.9g on %d threads, %.9g on 1", n, (double)f, t,
                          (double)firstf);
        }
    }
    tx_rt_set_threads(0);
    free(x);
    free(y);
    free(xf);
    free(yf);
}

START_TEST(dot_matches_the_sum)
{
    /* one chunk (short, with each tail), several, the most (64 of them) */
    static const int ns[] = {1, 3, 4, 15, 16, 17, 100, 16383, 16384, 32767, 32768, 50001, 1048576, 3000017};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        check_dot(ns[i], 1);
    check_dot(1000, 2); /* at a stride */
    check_dot(40000, 3);
}
END_TEST

int main(void)
{
    printf("check_gemm: OpenBLAS core %s\n", openblas_get_corename());
    Suite *su = suite_create("gemm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, gemm_matches_the_sum, 0, (int)(sizeof shapes / sizeof shapes[0]));
    tcase_add_test(tc, gemv_matches_the_sum);
    tcase_add_test(tc, dot_matches_the_sum);
    tcase_add_test(tc, gemv_on_threads);
    tcase_add_test(tc, gemv_t_on_threads);
    tcase_add_test(tc, gemm_in_bands);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
