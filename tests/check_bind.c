/*
 * check_bind.c — bindings that are not plain row-major arrays of the
 * declared type, and runs that must not kill or fool the host (issue 15):
 * typed bindings (tx_bind_array), strided inputs and outputs (a transpose,
 * a slice with a step, a reversed or broadcast mode), outputs that share
 * memory with other bindings (C = A·B in place, a transpose written onto
 * its input), linear algebra on a NaN, and compilation under an address
 * space limit. Every expected value is computed here by plain loops over
 * small dyadic numbers, so comparisons are exact.
 */
#define _DEFAULT_SOURCE 1 /* setrlimit's RLIMIT_AS */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensorexpr.h"

/* ------------------------------------------------------------------ */
/* helpers                                                            */

static tx_program *compile_at(tx_ctx *c, const char *src, int line)
{
    tx_program *p = tx_compile(c, src, strlen(src), "bind.tx");
    ck_assert_msg(p != NULL, "line %d: compiling failed:\n%s\n--- program:\n%s", line, tx_errmsg(c), src);
    return p;
}
#define compile_ok(c, src) compile_at((c), (src), __LINE__)

static void bind_at(tx_program *p, tx_ctx *c, const char *name, void *data, tx_dtype t, int ndim,
                    const int64_t *shape, const int64_t *strides, int line)
{
    int st = tx_bind_array(p, name, data, t, ndim, shape, strides);
    ck_assert_msg(st == TX_OK, "line %d: tx_bind_array(%s) = %d: %s", line, name, st, tx_errmsg(c));
}
/* bind_ok(p, c, name, data, ndim, shape, strides): f64; strides NULL for row-major */
#define bind_ok(p, c, name, data, ndim, shape, strides) \
    bind_at((p), (c), (name), (data), TX_F64, (ndim), (shape), (strides), __LINE__)

static void run_at(tx_program *p, tx_ctx *c, int line)
{
    int st = tx_run(p);
    ck_assert_msg(st == TX_OK, "line %d: tx_run = %d (%s): %s", line, st, tx_strerror(st), tx_errmsg(c));
}
#define run_ok(p, c) run_at((p), (c), __LINE__)

static int contains(const char *s, const char *what)
{
    return s && strstr(s, what) != NULL;
}

/* A small dyadic value, different for every (i, salt). */
static double dy(int i, int salt)
{
    return (double)((i * 7 + salt * 5 + 3) % 11 - 5) * 0.5;
}

static void same_at(const double *got, const double *want, int n, const char *what, int line)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "line %d: %s[%d] = %.17g, want %.17g", line, what, i, got[i], want[i]);
}
#define same(got, want, n) same_at((got), (want), (n), #got, __LINE__)

static const char MATMUL[] = "in  A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,l\") * B(\"l,j\");\n";

/* C (n×m, row-major) = A·B for row-major A (n×k) and B (k×m). */
static void matmul_ref(int n, int k, int m, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double s = 0;
            for (int q = 0; q < k; q++)
                s += A[i * k + q] * B[q * m + j];
            C[i * m + j] = s;
        }
}

/* ------------------------------------------------------------------ */
/* typed bindings                                                     */

START_TEST(bind_dtype_checked)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in A[n]; in f32 F[n]; out y[n];\ny(\"i\") = A(\"i\") + F(\"i\");\n");
    double A[3] = {1, 2, 3}, y[3] = {0};
    float F[3] = {0.5f, 0.25f, 4};
    float Af[3] = {7, 7, 7};
    double Fd[3] = {9, 9, 9};
    const int64_t s3[1] = {3};
    /* an f32 array for the f64 tensor, and the reverse: errors naming both types */
    ck_assert_int_eq(tx_bind_array(p, "A", Af, TX_F32, 1, s3, NULL), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'A' is declared f64, but the array is f32"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_errcode(c), TX_ERR_BIND);
    ck_assert_int_eq(tx_bind_array(p, "F", Fd, TX_F64, 1, s3, NULL), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'F' is declared f32, but the array is f64"), "%s", tx_errmsg(c));
    /* no element type, or one that does not exist */
    ck_assert_int_eq(tx_bind_array(p, "A", A, (tx_dtype)0, 1, s3, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_array(p, "A", A, (tx_dtype)9, 1, s3, NULL), TX_ERR_ARG);
    ck_assert_msg(contains(tx_errmsg(c), "not an element type"), "%s", tx_errmsg(c));
    /* the right types; then a wrong one leaves the binding as it was */
    bind_at(p, c, "A", A, TX_F64, 1, s3, NULL, __LINE__);
    bind_at(p, c, "F", F, TX_F32, 1, s3, NULL, __LINE__);
    bind_at(p, c, "y", y, TX_F64, 1, s3, NULL, __LINE__);
    ck_assert_int_eq(tx_bind_array(p, "A", Af, TX_F32, 1, s3, NULL), TX_ERR_BIND);
    run_ok(p, c);
    const double want[3] = {1.5, 2.25, 7};
    same(y, want, 3);
    /* the shape checks are tx_bind's */
    const int64_t s4[1] = {4}, s33[2] = {3, 3};
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 2, s33, NULL), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'A' has 1 mode; the array has 2"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_set_dim(p, "n", 3), TX_OK);
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 1, s4, NULL), TX_ERR_BIND);
    ck_assert_int_eq(tx_bind_array(p, "T", A, TX_F64, 1, s3, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_array(p, "A", NULL, TX_F64, 1, s3, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_array(NULL, "A", A, TX_F64, 1, s3, NULL), TX_ERR_ARG);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* strided bindings                                                   */

START_TEST(bind_strided_inputs)
{
    enum { N = 5, K = 4, M = 3 };
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL);
    double A[N * K], B[K * M], want[N * M], C[N * M];
    for (int i = 0; i < N * K; i++)
        A[i] = dy(i, 1);
    for (int i = 0; i < K * M; i++)
        B[i] = dy(i, 2);
    matmul_ref(N, K, M, A, B, want);

    /* A as the transpose of a K×N array (numpy: At.T); B as every other
       column of a K×2M array (numpy: Bw[:, ::2]) */
    double At[K * N], Bw[K * 2 * M];
    for (int i = 0; i < N; i++)
        for (int q = 0; q < K; q++)
            At[q * N + i] = A[i * K + q];
    for (int q = 0; q < K; q++)
        for (int j = 0; j < M; j++) {
            Bw[q * 2 * M + 2 * j] = B[q * M + j];
            Bw[q * 2 * M + 2 * j + 1] = 1e6; /* never read */
        }
    const int64_t sA[2] = {N, K}, sB[2] = {K, M}, sC[2] = {N, M};
    bind_ok(p, c, "A", At, 2, sA, ((const int64_t[]){1, N}));
    bind_ok(p, c, "B", Bw, 2, sB, ((const int64_t[]){2 * M, 2}));
    bind_ok(p, c, "C", C, 2, sC, NULL);
    run_ok(p, c);
    same(C, want, N * M);

    /* B with its rows reversed (numpy: Br[::-1]): the pointer is element
       (0, 0), the stride negative */
    double Br[K * M];
    for (int q = 0; q < K; q++)
        for (int j = 0; j < M; j++)
            Br[(K - 1 - q) * M + j] = B[q * M + j];
    bind_ok(p, c, "B", &Br[(K - 1) * M], 2, sB, ((const int64_t[]){-M, 1}));
    memset(C, 0, sizeof C);
    run_ok(p, c);
    same(C, want, N * M);

    /* new data in the same strided arrays: read again (the staging buffer
       is reused, not stale) */
    for (int i = 0; i < N * K; i++)
        A[i] = dy(i, 3);
    for (int i = 0; i < N; i++)
        for (int q = 0; q < K; q++)
            At[q * N + i] = A[i * K + q];
    matmul_ref(N, K, M, A, B, want);
    run_ok(p, c);
    same(C, want, N * M);

    /* a broadcast input: every row of B is the same vector (stride 0) */
    double row[M] = {1.5, -2, 0.25}, Bb[K * M];
    for (int q = 0; q < K; q++)
        for (int j = 0; j < M; j++)
            Bb[q * M + j] = row[j];
    matmul_ref(N, K, M, A, Bb, want);
    bind_ok(p, c, "B", row, 2, sB, ((const int64_t[]){0, 1}));
    run_ok(p, c);
    same(C, want, N * M);
    tx_program_free(p);

    /* a 3-mode permutation and an f32 strided input */
    p = compile_ok(c, "in P[a,b,c]; in f32 x[a]; out Q[a,b,c]; out f32 y[a];\n"
                      "Q(\"i,j,k\") = P(\"i,j,k\") * 2;\ny(\"i\") = x(\"i\") + 1;\n");
    enum { PA = 2, PB = 3, PC = 4 };
    double store[PC * PA * PB], Q[PA * PB * PC], wantQ[PA * PB * PC];
    for (int i = 0; i < PC * PA * PB; i++)
        store[i] = dy(i, 4);
    /* P(i,j,k) = store[k][i][j] (numpy: store.transpose(1, 2, 0)) */
    for (int i = 0; i < PA; i++)
        for (int j = 0; j < PB; j++)
            for (int k = 0; k < PC; k++)
                wantQ[(i * PB + j) * PC + k] = 2 * store[(k * PA + i) * PB + j];
    float xs[2 * PA] = {1, -1, 2.5f, -1};
    float y[PA];
    const int64_t sP[3] = {PA, PB, PC}, sx[1] = {PA};
    bind_ok(p, c, "P", store, 3, sP, ((const int64_t[]){PB, 1, PA * PB}));
    bind_at(p, c, "x", xs, TX_F32, 1, sx, (const int64_t[]){2}, __LINE__);
    bind_ok(p, c, "Q", Q, 3, sP, NULL);
    bind_at(p, c, "y", y, TX_F32, 1, sx, NULL, __LINE__);
    run_ok(p, c);
    same(Q, wantQ, PA * PB * PC);
    ck_assert(y[0] == 2 && y[1] == 3.5f);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* complex tensors: typed binds (TX_C128, TX_C64 against a declaration),
   strides in whole complex elements, a strided complex output; values are
   dyadic, so the complex products are exact */
START_TEST(bind_complex)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in c128 Z[n,m]; in c64 w[m]; out c128 y[n]; out c64 v[m];\n"
                                  "y(\"i\") = Z(\"i,j\") * w(\"j\");\nv(\"j\") = 2 * w(\"j\");\n");
    enum { N = 3, M = 4 };
    double Zt[M][N][2]; /* Z(i,j) = Zt[j][i]: a transpose, strides (1, N) in complex elements */
    float w[M][2];
    double y[2 * N][2], want[N][2];
    float v[M][2];
    for (int j = 0; j < M; j++) {
        w[j][0] = (float)dy(j, 1);
        w[j][1] = (float)dy(j, 2);
        for (int i = 0; i < N; i++) {
            Zt[j][i][0] = dy(i * M + j, 3);
            Zt[j][i][1] = dy(i * M + j, 4);
        }
    }
    for (int i = 0; i < N; i++) {
        want[i][0] = want[i][1] = 0;
        for (int j = 0; j < M; j++) {
            want[i][0] += Zt[j][i][0] * w[j][0] - Zt[j][i][1] * w[j][1];
            want[i][1] += Zt[j][i][0] * w[j][1] + Zt[j][i][1] * w[j][0];
        }
    }
    const int64_t sZ[2] = {N, M}, sy[1] = {N}, sw[1] = {M};
    ck_assert_int_eq(tx_bind_array(p, "Z", Zt, TX_F64, 2, sZ, NULL), TX_ERR_BIND);
    ck_assert(contains(tx_errmsg(c), "declared c128") && contains(tx_errmsg(c), "f64"));
    ck_assert_int_eq(tx_bind_array(p, "w", w, TX_C128, 1, sw, NULL), TX_ERR_BIND);
    ck_assert(contains(tx_errmsg(c), "declared c64") && contains(tx_errmsg(c), "c128"));
    ck_assert_int_eq(tx_bind_array(p, "w", w, (tx_dtype)5, 1, sw, NULL), TX_ERR_ARG);
    bind_at(p, c, "Z", Zt, TX_C128, 2, sZ, (const int64_t[]){1, N}, __LINE__);
    bind_at(p, c, "w", w, TX_C64, 1, sw, NULL, __LINE__);
    bind_at(p, c, "y", y, TX_C128, 1, sy, (const int64_t[]){2}, __LINE__); /* every other element */
    bind_at(p, c, "v", v, TX_C64, 1, sw, NULL, __LINE__);
    memset(y, 0, sizeof y);
    run_ok(p, c);
    for (int i = 0; i < N; i++) {
        ck_assert(y[2 * i][0] == want[i][0] && y[2 * i][1] == want[i][1]);
        ck_assert(y[2 * i + 1][0] == 0 && y[2 * i + 1][1] == 0); /* the gaps are untouched */
    }
    for (int j = 0; j < M; j++)
        ck_assert(v[j][0] == 2 * w[j][0] && v[j][1] == 2 * w[j][1]);
    tx_tensor_info info;
    ck_assert_int_eq(tx_tensor_get(p, 0, &info), TX_OK);
    ck_assert_int_eq(info.dtype, TX_C128);
    ck_assert_int_eq(tx_tensor_get(p, 1, &info), TX_OK);
    ck_assert_int_eq(info.dtype, TX_C64);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(bind_strided_outputs)
{
    enum { N = 4, K = 3, M = 5 };
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL);
    double A[N * K], B[K * M], want[N * M];
    for (int i = 0; i < N * K; i++)
        A[i] = dy(i, 5);
    for (int i = 0; i < K * M; i++)
        B[i] = dy(i, 6);
    matmul_ref(N, K, M, A, B, want);
    const int64_t sA[2] = {N, K}, sB[2] = {K, M}, sC[2] = {N, M};
    bind_ok(p, c, "A", A, 2, sA, NULL);
    bind_ok(p, c, "B", B, 2, sB, NULL);

    /* C written into the transpose of an M×N array (numpy: Ct.T) */
    double Ct[M * N];
    bind_ok(p, c, "C", Ct, 2, sC, ((const int64_t[]){1, N}));
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            ck_assert_msg(Ct[j * N + i] == want[i * M + j], "C(%d,%d) = %g, want %g", i, j, Ct[j * N + i],
                          want[i * M + j]);

    /* C written into the odd columns of an N×2M array (numpy: W[:, 1::2]):
       the even columns are untouched */
    double W[N * 2 * M];
    for (int i = 0; i < N * 2 * M; i++)
        W[i] = -777;
    bind_ok(p, c, "C", &W[1], 2, sC, ((const int64_t[]){2 * M, 2}));
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            ck_assert_msg(W[i * 2 * M + 2 * j + 1] == want[i * M + j], "C(%d,%d)", i, j);
            ck_assert_msg(W[i * 2 * M + 2 * j] == -777, "W(%d,%d) was written", i, 2 * j);
        }

    /* C written with both modes reversed (numpy: R[::-1, ::-1]) */
    double R[N * M];
    bind_ok(p, c, "C", &R[N * M - 1], 2, sC, ((const int64_t[]){-M, -1}));
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            ck_assert(R[(N - 1 - i) * M + (M - 1 - j)] == want[i * M + j]);

    /* new extents: the staging buffer grows */
    enum { N2 = 7 };
    double A2[N2 * K], want2[N2 * M], Ct2[M * N2];
    for (int i = 0; i < N2 * K; i++)
        A2[i] = dy(i, 7);
    matmul_ref(N2, K, M, A2, B, want2);
    bind_ok(p, c, "A", A2, 2, ((const int64_t[]){N2, K}), NULL);
    bind_ok(p, c, "C", Ct2, 2, ((const int64_t[]){N2, M}), ((const int64_t[]){1, N2}));
    run_ok(p, c);
    for (int i = 0; i < N2; i++)
        for (int j = 0; j < M; j++)
            ck_assert(Ct2[j * N2 + i] == want2[i * M + j]);
    tx_program_free(p);

    /* an inout tensor through a strided view: read, then written back */
    p = compile_ok(c, "inout S[n,m]; in D[n,m];\nS(\"i,j\") += 2 * D(\"i,j\");\n");
    double St[M * N], D[N * M], S0[N * M];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            S0[i * M + j] = dy(i * M + j, 8);
            St[j * N + i] = S0[i * M + j];
            D[i * M + j] = dy(i * M + j, 9);
        }
    bind_ok(p, c, "S", St, 2, sC, ((const int64_t[]){1, N}));
    bind_ok(p, c, "D", D, 2, sC, NULL);
    run_ok(p, c);
    run_ok(p, c); /* twice: S += 2D, and again from the new S */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            ck_assert(St[j * N + i] == S0[i * M + j] + 4 * D[i * M + j]);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* The JIT code is specialised on the strides: made again when the layout
   changes, not when only the addresses do; BLAS reads transposed and
   Fortran-order operands in place, and gets staged copies of what it
   cannot read (a reversed or broadcast mode). */
START_TEST(bind_strided_layouts_specialised)
{
    enum { N = 6, K = 5, M = 4 };
    tx_ctx *c = tx_new();
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_TIMING, 1), TX_OK);
    tx_program *p = compile_ok(c, MATMUL);
    double A[N * K], B[K * M], want[N * M], At[K * N], Bt[M * K], C[N * M], Ct[M * N], A2[N * K];
    for (int i = 0; i < N * K; i++)
        A[i] = dy(i, 1), A2[i] = dy(i, 4);
    for (int i = 0; i < K * M; i++)
        B[i] = dy(i, 2);
    for (int i = 0; i < N; i++)
        for (int q = 0; q < K; q++)
            At[q * N + i] = A[i * K + q];
    for (int q = 0; q < K; q++)
        for (int j = 0; j < M; j++)
            Bt[j * K + q] = B[q * M + j];
    matmul_ref(N, K, M, A, B, want);
    const int64_t sA[2] = {N, K}, sB[2] = {K, M}, sC[2] = {N, M};
    const int64_t fA[2] = {1, N}, fB[2] = {1, K}, fC[2] = {1, N};
    double secs;
    /* every operand Fortran-ordered (numpy: A.T of a row-major K×N) */
    bind_ok(p, c, "A", At, 2, sA, fA);
    bind_ok(p, c, "B", Bt, 2, sB, fB);
    bind_ok(p, c, "C", Ct, 2, sC, fC);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs > 0); /* compiled */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            ck_assert_msg(Ct[j * N + i] == want[i * M + j], "C(%d,%d) = %g, want %g", i, j, Ct[j * N + i],
                          want[i * M + j]);
    /* the same layout elsewhere: no new code */
    double At2[K * N];
    memcpy(At2, At, sizeof At);
    bind_ok(p, c, "A", At2, 2, sA, fA);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs == 0);
    /* row-major again: new code, and the same values */
    bind_ok(p, c, "A", A, 2, sA, NULL);
    bind_ok(p, c, "B", B, 2, sB, NULL);
    bind_ok(p, c, "C", C, 2, sC, NULL);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs > 0);
    same(C, want, N * M);
    /* back to the Fortran layout, then row-major again: both codes were
       kept, neither is made again */
    memset(Ct, 0, sizeof Ct);
    bind_ok(p, c, "A", At, 2, sA, fA);
    bind_ok(p, c, "B", Bt, 2, sB, fB);
    bind_ok(p, c, "C", Ct, 2, sC, fC);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs == 0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            ck_assert(Ct[j * N + i] == want[i * M + j]);
    memset(C, 0, sizeof C);
    bind_ok(p, c, "A", A, 2, sA, NULL);
    bind_ok(p, c, "B", B, 2, sB, NULL);
    bind_ok(p, c, "C", C, 2, sC, NULL);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs == 0);
    same(C, want, N * M);
    /* new extents, then the old ones: kept too */
    enum { N3 = 3 };
    double C3[N3 * M];
    bind_ok(p, c, "A", A, 2, ((const int64_t[]){N3, K}), NULL);
    bind_ok(p, c, "C", C3, 2, ((const int64_t[]){N3, M}), NULL);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs > 0);
    same(C3, want, N3 * M);
    ck_assert_int_gt(tx_call_count(p), 0);
    bind_ok(p, c, "A", A, 2, sA, NULL);
    bind_ok(p, c, "C", C, 2, sC, NULL);
    run_ok(p, c);
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs == 0);
    same(C, want, N * M);
    /* A with its rows reversed (a negative stride BLAS cannot take): staged */
    double Ar[N * K];
    for (int i = 0; i < N; i++)
        memcpy(&Ar[(N - 1 - i) * K], &A[i * K], sizeof(double) * K);
    memset(C, 0, sizeof C);
    bind_ok(p, c, "A", &Ar[(N - 1) * K], 2, sA, ((const int64_t[]){-K, 1}));
    run_ok(p, c);
    same(C, want, N * M);
    /* B broadcast along its rows (numpy: broadcast_to(b, (K, M))) */
    double brow[M], wantb[N * M], Bb[K * M];
    for (int j = 0; j < M; j++)
        brow[j] = dy(j, 3);
    for (int q = 0; q < K; q++)
        memcpy(&Bb[q * M], brow, sizeof brow);
    matmul_ref(N, K, M, A, Bb, wantb);
    bind_ok(p, c, "A", A, 2, sA, NULL);
    bind_ok(p, c, "B", brow, 2, sB, ((const int64_t[]){0, 1}));
    run_ok(p, c);
    same(C, wantb, N * M);

    /* tx_run_arrays: every tensor at once, in declaration order (A, B, C) */
    const int64_t shapes[6] = {N, K, K, M, N, M};
    const int64_t rm[6] = {K, 1, M, 1, M, 1}, fo[6] = {1, N, 1, K, 1, N};
    memset(C, 0, sizeof C);
    ck_assert_int_eq(tx_run_arrays(p, (void *const[]){A, B, C}, shapes, NULL), TX_OK);
    same(C, want, N * M);
    double wantA2[N * M];
    matmul_ref(N, K, M, A2, B, wantA2);
    ck_assert_int_eq(tx_run_arrays(p, (void *const[]){A2, B, C}, shapes, rm), TX_OK); /* a new address */
    ck_assert(tx_timing(p, -1, &secs, NULL) == TX_OK && secs == 0);
    same(C, wantA2, N * M);
    memset(Ct, 0, sizeof Ct);
    ck_assert_int_eq(tx_run_arrays(p, (void *const[]){At, Bt, Ct}, shapes, fo), TX_OK);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            ck_assert(Ct[j * N + i] == want[i * M + j]);
    /* an output on its input's memory: computed aside, then copied */
    double Sq[N * N], Sq0[N * N], I[N * N], wantsq[N * N];
    tx_program *pq = compile_ok(c, MATMUL);
    for (int i = 0; i < N * N; i++)
        Sq[i] = Sq0[i] = dy(i, 6), I[i] = (i / N == i % N) ? 2 : 0;
    matmul_ref(N, N, N, Sq0, I, wantsq);
    const int64_t sq[6] = {N, N, N, N, N, N};
    ck_assert_int_eq(tx_run_arrays(pq, (void *const[]){Sq, I, Sq}, sq, NULL), TX_OK);
    same(Sq, wantsq, N * N);
    tx_program_free(pq);
    /* errors: a wrong shape names the tensor; NULLs are refused */
    const int64_t bad[6] = {N, K, K + 1, M, N, M};
    ck_assert_int_eq(tx_run_arrays(p, (void *const[]){A, B, C}, bad, NULL), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'B'"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_run_arrays(p, NULL, shapes, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_run_arrays(p, (void *const[]){A, NULL, C}, shapes, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_run_arrays(NULL, (void *const[]){A, B, C}, shapes, NULL), TX_ERR_ARG);
    /* tx_run_arrays_at: each data pointer read from where it is kept, at the call */
    struct { int tag; void *data; } hA = {1, A}, hB = {2, B}, hC = {3, C};
    memset(C, 0, sizeof C);
    ck_assert_int_eq(tx_run_arrays_at(p, (void *const *const[]){&hA.data, &hB.data, &hC.data}, shapes, NULL), TX_OK);
    same(C, want, N * M);
    hA.data = A2; /* the same slot, a new array: read again */
    ck_assert_int_eq(tx_run_arrays_at(p, (void *const *const[]){&hA.data, &hB.data, &hC.data}, shapes, rm), TX_OK);
    same(C, wantA2, N * M);
    ck_assert_int_eq(tx_run_arrays_at(p, NULL, shapes, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_run_arrays_at(p, (void *const *const[]){&hA.data, NULL, &hC.data}, shapes, NULL),
                     TX_ERR_ARG);
    ck_assert_msg(contains(tx_errmsg(c), "'B'"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_run_arrays_at(NULL, (void *const *const[]){&hA.data, &hB.data, &hC.data}, shapes, NULL),
                     TX_ERR_ARG);
    tx_program_free(p);

    /* matrix-vector and dot products over strided operands */
    p = compile_ok(c, "in A[n,k], x[k]; out y[n], d;\ny(\"i\") = A(\"i,l\") * x(\"l\");\n"
                      "d = x(\"l\") * x(\"l\");\n");
    double xs[2 * K], y[N], wanty[N], d, wantd = 0;
    for (int q = 0; q < K; q++)
        xs[2 * q] = dy(q, 8), xs[2 * q + 1] = 1e300, wantd += xs[2 * q] * xs[2 * q];
    for (int i = 0; i < N; i++) {
        wanty[i] = 0;
        for (int q = 0; q < K; q++)
            wanty[i] += A[i * K + q] * xs[2 * q];
    }
    bind_ok(p, c, "A", At, 2, sA, fA);
    bind_ok(p, c, "x", xs, 1, ((const int64_t[]){K}), ((const int64_t[]){2}));
    bind_ok(p, c, "y", y, 1, ((const int64_t[]){N}), NULL);
    bind_ok(p, c, "d", &d, 0, NULL, NULL);
    run_ok(p, c);
    same(y, wanty, N);
    ck_assert(d == wantd);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* tx_tensor_get on a dim expression: symbolic (no name, -1), not the
   constant 0 that made every binding of it look wrong to Python */
START_TEST(bind_tensor_info_dim_expression)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "dim o, v;\nin F[o+v, 3], g[o];\nout e[o+v];\ne(\"p\") = F(\"p,q\");\n");
    tx_tensor_info t;
    ck_assert_int_eq(tx_tensor_get(p, 0, &t), TX_OK);
    ck_assert(t.dims[0] == NULL && t.extents[0] == -1);
    ck_assert(t.dims[1] == NULL && t.extents[1] == 3);
    ck_assert_int_eq(tx_tensor_get(p, 1, &t), TX_OK);
    ck_assert(t.dims[0] != NULL && strcmp(t.dims[0], "o") == 0 && t.extents[0] == -1);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(bind_output_layouts_refused)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in A[n,n]; out C[n,n];\nC(\"i,j\") = A(\"j,i\");\n");
    double A[9] = {0}, C[9];
    const int64_t s[2] = {3, 3};
    /* a broadcast output: three elements written to one place */
    ck_assert_int_eq(tx_bind_array(p, "C", C, TX_F64, 2, s, (const int64_t[]){0, 1}), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'C'") && contains(tx_errmsg(c), "stride 0"), "%s", tx_errmsg(c));
    /* strides that make elements meet: C(0,1) and C(1,0) at one place */
    ck_assert_int_eq(tx_bind_array(p, "C", C, TX_F64, 2, s, (const int64_t[]){1, 1}), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "two elements in one place"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_bind_array(p, "C", C, TX_F64, 2, s, (const int64_t[]){2, 1}), TX_ERR_BIND);
    ck_assert_int_eq(tx_bind_array(p, "C", C, TX_F64, 2, s, (const int64_t[]){-1, 2}), TX_ERR_BIND);
    /* strides too large for any address */
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 2, s, (const int64_t[]){INT64_MAX / 2, 1}), TX_ERR_BIND);
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 2, s, (const int64_t[]){INT64_MIN, 1}), TX_ERR_BIND);
    /* the same layouts are fine for an input, which is only read */
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 2, s, (const int64_t[]){0, 1}), TX_OK);
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 2, s, (const int64_t[]){1, 1}), TX_OK);
    /* a zero stride on a mode of extent 1 places nothing twice */
    double one[3];
    ck_assert_int_eq(tx_bind_array(p, "A", A, TX_F64, 2, s, NULL), TX_OK);
    tx_program_free(p);
    p = compile_ok(c, "in x[n], u[one]; out r[one,n];\nr(\"a,i\") = u(\"a\") * x(\"i\");\n");
    double x[3] = {1, 2, 3}, u[1] = {1};
    ck_assert_int_eq(tx_bind_array(p, "x", x, TX_F64, 1, (const int64_t[]){3}, NULL), TX_OK);
    ck_assert_int_eq(tx_bind_array(p, "u", u, TX_F64, 1, (const int64_t[]){1}, NULL), TX_OK);
    ck_assert_int_eq(tx_bind_array(p, "r", one, TX_F64, 2, (const int64_t[]){1, 3}, (const int64_t[]){0, 1}),
                     TX_OK);
    run_ok(p, c);
    ck_assert(one[0] == 1 && one[1] == 2 && one[2] == 3);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* outputs that share memory with other bindings                      */

START_TEST(bind_alias_inplace_matmul)
{
    /* C = A·B with C on A's memory, then on B's; small (loops) and large
       enough for BLAS */
    static const int sizes[] = {4, 48};
    for (int t = 0; t < 2; t++) {
        int n = sizes[t];
        tx_ctx *c = tx_new();
        tx_program *p = compile_ok(c, MATMUL);
        double *A = malloc(sizeof(double) * (size_t)(n * n)), *B = malloc(sizeof(double) * (size_t)(n * n));
        double *want = malloc(sizeof(double) * (size_t)(n * n));
        for (int i = 0; i < n * n; i++) {
            A[i] = dy(i, 10);
            B[i] = dy(i, 11);
        }
        matmul_ref(n, n, n, A, B, want);
        const int64_t s[2] = {n, n};
        bind_ok(p, c, "A", A, 2, s, NULL);
        bind_ok(p, c, "B", B, 2, s, NULL);
        bind_ok(p, c, "C", A, 2, s, NULL);
        run_ok(p, c);
        same_at(A, want, n * n, "A := A·B", __LINE__);
        /* B := A·B with the new A */
        double *A2 = malloc(sizeof(double) * (size_t)(n * n));
        memcpy(A2, A, sizeof(double) * (size_t)(n * n));
        matmul_ref(n, n, n, A2, B, want);
        bind_ok(p, c, "C", B, 2, s, NULL);
        run_ok(p, c);
        same_at(B, want, n * n, "B := A·B", __LINE__);
        free(A);
        free(B);
        free(A2);
        free(want);
        tx_program_free(p);
        tx_free(c);
    }
}
END_TEST

START_TEST(bind_alias_transpose)
{
    enum { N = 5 };
    tx_ctx *c = tx_new();
    double X[N * N], X0[N * N], want[N * N];
    for (int i = 0; i < N * N; i++)
        X0[i] = dy(i, 12);
    const int64_t s[2] = {N, N};

    /* a transpose written onto its input */
    tx_program *p = compile_ok(c, "in A[n,n]; out T[n,n];\nT(\"i,j\") = A(\"j,i\");\n");
    memcpy(X, X0, sizeof X);
    bind_ok(p, c, "A", X, 2, s, NULL);
    bind_ok(p, c, "T", X, 2, s, NULL);
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            want[i * N + j] = X0[j * N + i];
    same(X, want, N * N);
    tx_program_free(p);

    /* A + Aᵀ into A: one input, read two ways, and the output on it */
    p = compile_ok(c, "in A[n,n]; out Y[n,n];\nY(\"i,j\") = A(\"i,j\") + A(\"j,i\");\n");
    memcpy(X, X0, sizeof X);
    bind_ok(p, c, "A", X, 2, s, NULL);
    bind_ok(p, c, "Y", X, 2, s, NULL);
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            want[i * N + j] = X0[i * N + j] + X0[j * N + i];
    same(X, want, N * N);
    tx_program_free(p);

    /* the same with two inputs and an output all on one array, one of
       them bound as a strided view (the transpose) */
    p = compile_ok(c, "in A[n,n], B[n,n]; out Y[n,n];\nY(\"i,j\") = A(\"i,j\") - 2 * B(\"i,j\");\n");
    memcpy(X, X0, sizeof X);
    bind_ok(p, c, "A", X, 2, s, NULL);
    bind_ok(p, c, "B", X, 2, s, ((const int64_t[]){1, N}));
    bind_ok(p, c, "Y", X, 2, s, NULL);
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            want[i * N + j] = X0[i * N + j] - 2 * X0[j * N + i];
    same(X, want, N * N);
    tx_program_free(p);

    /* an inout tensor that is also bound as an input */
    p = compile_ok(c, "inout S[n,n]; in B[n,n];\nS(\"i,j\") = S(\"i,k\") * B(\"k,j\");\n");
    memcpy(X, X0, sizeof X);
    bind_ok(p, c, "S", X, 2, s, NULL);
    bind_ok(p, c, "B", X, 2, s, NULL);
    run_ok(p, c);
    matmul_ref(N, N, N, X0, X0, want);
    same(X, want, N * N);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(bind_alias_shifted)
{
    /* outputs one element past their input, so that writing y[i] changes
       x[i+1] before it is read: a matrix-vector product, whose every
       element needs all of x, and a running sum */
    enum { N = 8 };
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in A[n,n], x[n]; out y[n];\ny(\"i\") = A(\"i,k\") * x(\"k\");\n");
    double A[N * N], buf[N + 1], x0[N], want[N];
    for (int i = 0; i < N * N; i++)
        A[i] = dy(i, 16);
    for (int i = 0; i < N; i++)
        x0[i] = dy(i, 13);
    matmul_ref(N, N, 1, A, x0, want);
    memcpy(buf, x0, sizeof x0);
    buf[N] = 0;
    const int64_t s[1] = {N}, s2[2] = {N, N};
    bind_ok(p, c, "A", A, 2, s2, NULL);
    bind_ok(p, c, "x", buf, 1, s, NULL);
    bind_ok(p, c, "y", buf + 1, 1, s, NULL);
    run_ok(p, c);
    same(buf + 1, want, N);
    ck_assert(buf[0] == x0[0]);
    tx_program_free(p);

    p = compile_ok(c, "in x[n]; out y[n];\ny(\"i\") = scan(+, x(\"i\"), \"i\");\n");
    for (int i = 0; i < N; i++)
        want[i] = (i ? want[i - 1] : 0) + x0[i];
    memcpy(buf, x0, sizeof x0);
    bind_ok(p, c, "x", buf, 1, s, NULL);
    bind_ok(p, c, "y", buf + 1, 1, s, NULL);
    run_ok(p, c);
    same(buf + 1, want, N);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(bind_alias_outputs_overlap)
{
    enum { N = 4 };
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in A[n]; out C[n], D[n];\nC(\"i\") = A(\"i\") + 1;\nD(\"i\") = 2 * A(\"i\");\n");
    double A[N], buf[N + 2];
    for (int i = 0; i < N; i++)
        A[i] = dy(i, 14);
    const int64_t s[1] = {N};
    /* both outputs on one array: each is computed right, and the one
       declared later (D) is what the array holds */
    bind_ok(p, c, "A", A, 1, s, NULL);
    bind_ok(p, c, "C", buf, 1, s, NULL);
    bind_ok(p, c, "D", buf, 1, s, NULL);
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        ck_assert_msg(buf[i] == 2 * A[i], "buf[%d] = %g", i, buf[i]);
    /* D two elements on: C's first two survive, D's all four */
    bind_ok(p, c, "D", buf + 2, 1, s, NULL);
    run_ok(p, c);
    ck_assert(buf[0] == A[0] + 1 && buf[1] == A[1] + 1);
    for (int i = 0; i < N; i++)
        ck_assert_msg(buf[2 + i] == 2 * A[i], "buf[%d] = %g", 2 + i, buf[2 + i]);
    /* both outputs on the input: D, the later, wins; C was still computed
       from the input as it was before the run */
    double X[N];
    memcpy(X, A, sizeof X);
    bind_ok(p, c, "A", X, 1, s, NULL);
    bind_ok(p, c, "C", X, 1, s, NULL);
    bind_ok(p, c, "D", X, 1, s, NULL);
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        ck_assert(X[i] == 2 * A[i]);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(bind_alias_failed_run_writes_nothing)
{
    /* B and L on A's memory: B = 2A is computed first, into a private
       buffer, so cholesky reads A itself (not 2A); A is not positive
       definite, the run fails, and A keeps its values. An output that
       overlaps nothing (D) is written in place by the statement before. */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in A[n,n]; out B[n,n], D[n,n], L[n,n];\nB(\"i,j\") = 2 * A(\"i,j\");\n"
                                  "D(\"i,j\") = A(\"j,i\");\nL(\"i,j\") = cholesky(B(\"i,j\") - A(\"i,j\"));\n");
    double A[4] = {1, 2, 2, 1}, D[4] = {0};
    const int64_t s[2] = {2, 2};
    bind_ok(p, c, "A", A, 2, s, NULL);
    bind_ok(p, c, "B", A, 2, s, NULL);
    bind_ok(p, c, "D", D, 2, s, NULL);
    bind_ok(p, c, "L", A, 2, s, NULL);
    ck_assert_int_eq(tx_run(p), TX_ERR_RUN);
    ck_assert_msg(contains(tx_errmsg(c), "not positive definite"), "%s", tx_errmsg(c));
    ck_assert_msg(A[0] == 1 && A[1] == 2 && A[2] == 2 && A[3] == 1, "A = [%g %g %g %g]", A[0], A[1], A[2], A[3]);
    ck_assert(D[0] == 1 && D[1] == 2 && D[3] == 1);
    bind_ok(p, c, "B", D, 2, s, NULL);
    bind_ok(p, c, "D", D, 2, s, NULL);
    /* a strided output is not written either */
    double Lt[4] = {5, 5, 5, 5};
    bind_ok(p, c, "L", Lt, 2, s, ((const int64_t[]){1, 2}));
    ck_assert_int_eq(tx_run(p), TX_ERR_RUN);
    ck_assert(Lt[0] == 5 && Lt[1] == 5 && Lt[2] == 5 && Lt[3] == 5);
    /* and a good matrix then works in place: L = cholesky(2A - A) */
    A[0] = 4, A[1] = 2, A[2] = 2, A[3] = 5;
    bind_ok(p, c, "L", A, 2, s, NULL);
    run_ok(p, c);
    ck_assert_msg(A[0] == 2 && A[1] == 0 && A[2] == 1 && A[3] == 2, "A = [%g %g %g %g]", A[0], A[1], A[2], A[3]);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* linear algebra on a NaN or an infinity                             */

START_TEST(bind_linalg_not_finite)
{
    /* LAPACKE's NaN check used to come back as "out of memory" (eigh, inv,
       qr, svd) or "an extent is too large" (cholesky) */
    static const struct { const char *src, *call; } prog[] = {
        {"in A[n,n]; out w[n], V[n,n];\n(V(\"i,e\"), w(\"e\")) = eigh(A(\"i,j\"));\n", "eigh"},
        {"in A[n,n]; out L[n,n];\nL(\"i,j\") = cholesky(A(\"i,j\"));\n", "cholesky"},
        {"in A[n,n]; out X[n,n];\nX(\"i,j\") = inv(A(\"i,j\"));\n", "inv"},
        {"in A[n,n], b[n]; out x[n];\nx(\"j\") = solve(A(\"i,j\"), b(\"i\"));\n", "solve"},
        {"in A[n,n]; out Q[n,n], R[n,n];\n(Q(\"i,k\"), R(\"k,j\")) = qr(A(\"i,j\"));\n", "qr"},
        {"in A[n,n]; out U[n,n], s[n], W[n,n];\n(U(\"i,k\"), s(\"k\"), W(\"k,j\")) = svd(A(\"i,j\"));\n", "svd"},
    };
    const double bad[] = {NAN, INFINITY};
    char fails[2048] = "";
    size_t nf = 0;
    for (size_t t = 0; t < sizeof prog / sizeof prog[0]; t++)
        for (int v = 0; v < 2; v++) {
            tx_ctx *c = tx_new();
            tx_program *p = compile_ok(c, prog[t].src);
            enum { N = 4 };
            double A[N * N], o[3][N * N], b[N] = {1, 2, 3, 4};
            for (int i = 0; i < N * N; i++)
                A[i] = i % (N + 1) == 0 ? 4 : 0.5;
            A[2 * N + 1] = bad[v]; /* in the lower triangle, which eigh and cholesky read */
            const int64_t s2[2] = {N, N}, s1[1] = {N};
            for (int k = 0; k < tx_tensor_count(p); k++) {
                tx_tensor_info ti;
                tx_tensor_get(p, k, &ti);
                void *data = strcmp(ti.name, "A") == 0 ? (void *)A : strcmp(ti.name, "b") == 0 ? (void *)b : o[k % 3];
                bind_ok(p, c, ti.name, data, ti.ndim, ti.ndim == 2 ? s2 : s1, NULL);
            }
            int st = tx_run(p);
            const char *m = tx_errmsg(c);
            /* "eigh: an argument has a NaN or an infinity (element 9, ...)" */
            if (st != TX_ERR_RUN || !contains(m, prog[t].call) || contains(m, "memory") ||
                contains(m, "too large") || !contains(m, "a NaN or an infinity (element "))
                nf += (size_t)snprintf(fails + nf, nf < sizeof fails ? sizeof fails - nf : 0,
                                       "%s with %g: status %d, \"%s\"; ", prog[t].call, bad[v], st, m);
            tx_program_free(p);
            tx_free(c);
            if (nf >= sizeof fails)
                nf = sizeof fails - 1;
        }
    ck_assert_msg(nf == 0, "%s", fails);
}
END_TEST

/* ------------------------------------------------------------------ */
/* compiling and running with little memory                           */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
/* A program whose generated C is some 20 KB (no BLAS at these extents:
   OpenBLAS retries its own failed allocations forever, a hang that is
   not ours to test here). */
static const char CCD[] =
    "dim o, v;\n"
    "in  eo[o], ev[v];\n"
    "in  Voooo[o,o,o,o], Voovv[o,o,v,v];\n"
    "in  Vovvo[o,v,v,o], Vvvvv[v,v,v,v];\n"
    "in  T[o,o,v,v];\n"
    "out Tn[o,o,v,v];\n"
    "out R[o,o,v,v];\n"
    "out E;\n"
    "let W(\"k,l,i,j\") = Voooo(\"k,l,i,j\") + 0.5 * Voovv(\"k,l,c,d\") * T(\"i,j,c,d\");\n"
    "let Z(\"i,j,a,b\") = Vovvo(\"k,b,c,j\") * T(\"i,k,a,c\");\n"
    "let rhs = Voovv(\"i,j,a,b\")\n"
    "        + 0.5 * Vvvvv(\"a,b,c,d\") * T(\"i,j,c,d\")\n"
    "        + 0.5 * W(\"k,l,i,j\") * T(\"k,l,a,b\")\n"
    "        + Z(\"i,j,a,b\") - Z(\"j,i,a,b\") - Z(\"i,j,b,a\") + Z(\"j,i,b,a\");\n"
    "let D = eo(\"i\") + eo(\"j\") - ev(\"a\") - ev(\"b\");\n"
    "Tn(\"i,j,a,b\") = rhs / D;\n"
    "R(\"i,j,a,b\")  = rhs - D * T(\"i,j,a,b\");\n"
    "E = 0.25 * Voovv(\"i,j,a,b\") * T(\"i,j,a,b\");\n";

static long vm_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld", &pages) != 1)
        pages = -1;
    fclose(f);
    return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

/* Compiles and runs CCD in a process limited to EXTRA bytes more address
   space than it has; a failed run is tried twice more (libtcc used to
   crash on the attempt after its own allocation failure), and the whole
   three times. The exit status: 0 ran, 10 + status for the first failure,
   97 setrlimit failed, 98 libtcc failed (TX_ERR_JIT), 99 a failure with no
   message; anything else (libtcc calls exit(1) when it runs out of memory
   outside a compilation) is the host killed. */
static int low_memory_child(long extra, double *data, const int64_t (*shapes)[4])
{
    struct rlimit r;
    r.rlim_cur = r.rlim_max = (rlim_t)(vm_bytes() + extra);
    if (setrlimit(RLIMIT_AS, &r) != 0)
        return 97;
    alarm(30); /* a hang dies by SIGALRM, and fails the test */
    int first = 0, jit_failed = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        tx_ctx *c = tx_new();
        if (!c) {
            first = first ? first : 10 + TX_ERR_NOMEM;
            continue;
        }
        tx_program *p = tx_compile(c, CCD, sizeof CCD - 1, "ccd.tx");
        int st = p ? TX_OK : tx_errcode(c);
        static const char *const names[] = {"eo", "ev", "Voooo", "Voovv", "Vovvo", "Vvvvv", "T", "Tn", "R", "E"};
        static const int nd[] = {1, 1, 4, 4, 4, 4, 4, 4, 4, 0};
        for (int k = 0; st == TX_OK && k < 10; k++)
            st = tx_bind(p, names[k], data + 1024 * k, nd[k], shapes[k]);
        for (int again = 0; st == TX_OK && again < 3; again++) {
            st = tx_run(p);
            if (st == TX_OK)
                break;
            jit_failed |= st == TX_ERR_JIT;
            if (!tx_errmsg(c)[0])
                return 99;
        }
        if (st != TX_OK && !tx_errmsg(c)[0])
            return 99;
        if (st != TX_OK && !first)
            first = 10 + st;
        tx_program_free(p);
        tx_free(c);
    }
    return jit_failed ? 98 : first;
}
#endif

START_TEST(bind_low_memory_sweep)
{
#ifdef UNDER_ASAN
    fprintf(stderr, "bind_low_memory_sweep: skipped under AddressSanitizer, which reserves more address "
                    "space than any RLIMIT_AS allows\n");
    return;
#else
    if (vm_bytes() < 0) {
        fprintf(stderr, "bind_low_memory_sweep: skipped: no /proc/self/statm\n");
        return;
    }
    enum { O = 2, V = 3 };
    static double data[10 * 1024];
    for (int i = 0; i < 10 * 1024; i++)
        data[i] = dy(i, 15) + (i % 1024 < 8 ? 20 * (i % 2 ? -1 : 1) : 0);
    static const int64_t shapes[10][4] = {{O}, {V}, {O, O, O, O}, {O, O, V, V}, {O, V, V, O}, {V, V, V, V},
                                          {O, O, V, V}, {O, O, V, V}, {O, O, V, V}, {0}};
    /* the limits: from no room at all to 8 MB (the memory check before
       libtcc asks for 4 MB and 8 bytes per byte of C), by 32 KB */
    char bad[2048] = "";
    size_t nb = 0;
    int ran = 0, nomem = 0;
    for (long extra = 0; extra <= 8L << 20; extra += 32L << 10) {
        fflush(NULL);
        pid_t pid = fork();
        ck_assert_msg(pid >= 0, "fork failed");
        if (pid == 0)
            _exit(low_memory_child(extra, data, shapes));
        int ws = 0;
        waitpid(pid, &ws, 0);
        int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
        if (code == 0)
            ran++;
        else if (code == 10 + TX_ERR_NOMEM)
            nomem++;
        else if (nb < sizeof bad) /* a signal, exit(1) inside libtcc, another status, ... */
            nb += (size_t)snprintf(bad + nb, sizeof bad - nb, "%ld KB: %s %d; ", extra >> 10,
                                   WIFSIGNALED(ws) ? "signal" : code > 10 && code < 97 ? "status" : "exit",
                                   WIFSIGNALED(ws) ? WTERMSIG(ws) : code > 10 && code < 97 ? code - 10 : code);
    }
    fprintf(stderr, "bind_low_memory_sweep: %d ran, %d out of memory\n", ran, nomem);
    ck_assert_msg(nb == 0, "children that did not run or say out of memory: %s", bad);
    ck_assert_msg(ran > 0, "no limit up to 8 MB let the program run");
#endif
}
END_TEST

/* ------------------------------------------------------------------ */

int main(void)
{
    Suite *s = suite_create("bind");
    TCase *tc = tcase_create("typed and strided");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bind_dtype_checked);
    tcase_add_test(tc, bind_strided_inputs);
    tcase_add_test(tc, bind_strided_outputs);
    tcase_add_test(tc, bind_complex);
    tcase_add_test(tc, bind_output_layouts_refused);
    tcase_add_test(tc, bind_strided_layouts_specialised);
    tcase_add_test(tc, bind_tensor_info_dim_expression);
    suite_add_tcase(s, tc);

    tc = tcase_create("aliasing");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bind_alias_inplace_matmul);
    tcase_add_test(tc, bind_alias_transpose);
    tcase_add_test(tc, bind_alias_shifted);
    tcase_add_test(tc, bind_alias_outputs_overlap);
    tcase_add_test(tc, bind_alias_failed_run_writes_nothing);
    suite_add_tcase(s, tc);

    tc = tcase_create("failures");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bind_linalg_not_finite);
    tcase_add_test(tc, bind_low_memory_sweep);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
