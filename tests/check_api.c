/*
 * check_api.c — the public library interface (tensorexpr.h), used the way
 * an embedding program uses it: compile, bind caller-owned arrays, run,
 * and compare every element with a result computed here by plain loops.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorexpr.h"

/* ------------------------------------------------------------------ */
/* helpers                                                            */

static tx_program *compile_at(tx_ctx *c, const char *src, const char *file, int line)
{
    tx_program *p = tx_compile(c, src, strlen(src), file);
    ck_assert_msg(p != NULL, "line %d: compiling failed:\n%s\n--- program:\n%s", line, tx_errmsg(c), src);
    ck_assert_msg(strcmp(tx_errmsg(c), "") == 0, "line %d: message after success: %s", line, tx_errmsg(c));
    return p;
}
#define compile_ok(c, src, file) compile_at((c), (src), (file), __LINE__)

static void bind_at(tx_program *p, tx_ctx *c, const char *name, void *data, int ndim, const int64_t *shape,
                    int line)
{
    int st = tx_bind(p, name, data, ndim, shape);
    ck_assert_msg(st == TX_OK, "line %d: tx_bind(%s) = %d: %s", line, name, st, tx_errmsg(c));
}
#define bind_ok(p, c, name, data, ndim, ...) \
    bind_at((p), (c), (name), (data), (ndim), (const int64_t[]){__VA_ARGS__}, __LINE__)

static void run_at(tx_program *p, tx_ctx *c, int line)
{
    int st = tx_run(p);
    ck_assert_msg(st == TX_OK, "line %d: tx_run = %d (%s): %s", line, st, tx_strerror(st), tx_errmsg(c));
    ck_assert_msg(strcmp(tx_errmsg(c), "") == 0, "line %d: message after success: %s", line, tx_errmsg(c));
}
#define run_ok(p, c) run_at((p), (c), __LINE__)

static int contains(const char *s, const char *what)
{
    return s && strstr(s, what) != NULL;
}

/* Exact comparison of N doubles (the tests use values whose sums and
   products are exact in binary floating point). */
static void same_at(const double *got, const double *want, int n, const char *what, int line)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "line %d: %s[%d] = %.17g, want %.17g", line, what, i, got[i], want[i]);
}
#define same(got, want, n) same_at((got), (want), (n), #got, __LINE__)

static const char MATMUL[] = "in  A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n";

/* A(n×k) B(k×m) filled with small dyadic values from SEED; C = A·B. */
static void matmul_data(int n, int k, int m, int seed, double *A, double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int q = 0; q < k; q++)
            A[i * k + q] = (double)((i * 7 + q * 3 + seed) % 11) - 5 + 0.5;
    for (int q = 0; q < k; q++)
        for (int j = 0; j < m; j++)
            B[q * m + j] = ((double)((q * 5 + j * 2 + seed * 3) % 9) - 4) * 0.25;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double s = 0;
            for (int q = 0; q < k; q++)
                s += A[i * k + q] * B[q * m + j];
            C[i * m + j] = s;
        }
}

static void fill(double *x, int n, double v)
{
    for (int i = 0; i < n; i++)
        x[i] = v;
}

/* ------------------------------------------------------------------ */
/* values                                                             */

START_TEST(api_matmul)
{
    tx_ctx *c = tx_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(tx_errmsg(c), "");
    tx_program *p = compile_ok(c, MATMUL, "matmul.tx");
    double A[3 * 4], B[4 * 5], C[3 * 5], W[3 * 5];
    matmul_data(3, 4, 5, 1, A, B, W);
    fill(C, 15, -99);
    bind_ok(p, c, "A", A, 2, 3, 4);
    bind_ok(p, c, "B", B, 2, 4, 5);
    bind_ok(p, c, "C", C, 2, 3, 5);
    run_ok(p, c);
    same(C, W, 15);
    ck_assert_int_eq(tx_stmt_count(p), 1);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_scalar_output)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in A[n,n], alpha;\nout t, f;\nout y[n];\n"
                               "t = A(\"i,i\");\n"                      /* trace */
                               "f = A(\"i,j\") * A(\"i,j\");\n"         /* Frobenius norm squared */
                               "y(\"i\") = alpha * A(\"i,j\") + t;\n",  /* scalars in expressions */
                               "scal.tx");
    enum { N = 4 };
    double A[N * N], alpha = 1.5, t = -1, f = -1, y[N];
    for (int i = 0; i < N * N; i++)
        A[i] = (double)(i % 5) - 1.5;
    bind_ok(p, c, "A", A, 2, N, N);
    ck_assert_int_eq(tx_bind(p, "alpha", &alpha, 0, NULL), TX_OK);
    int64_t none[1] = {0};
    ck_assert_int_eq(tx_bind(p, "t", &t, 0, none), TX_OK);
    ck_assert_int_eq(tx_bind(p, "f", &f, 0, none), TX_OK);
    bind_ok(p, c, "y", y, 1, N);
    run_ok(p, c);
    double wt = 0, wf = 0, wy[N];
    for (int i = 0; i < N; i++) {
        wt += A[i * N + i];
        for (int j = 0; j < N; j++)
            wf += A[i * N + j] * A[i * N + j];
    }
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < N; j++)
            s += A[i * N + j];
        wy[i] = alpha * s + wt;
    }
    ck_assert_double_eq(t, wt);
    ck_assert_double_eq(f, wf);
    same(y, wy, N);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_f32)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in f32 X[n];\nin Y[n];\nout f32 Z[n];\nout W[n];\nout f32 s;\n"
                               "Z(\"i\") = X(\"i\") * Y(\"i\") + 0.5;\n"
                               "W(\"i\") = 2 * X(\"i\");\n"
                               "s = X(\"i\");\n",
                               "f32.tx");
    enum { N = 1000 };
    float *X = malloc(N * sizeof *X), *Z = malloc(N * sizeof *Z), s = -1;
    double *Y = malloc(N * sizeof *Y), *W = malloc(N * sizeof *W);
    for (int i = 0; i < N; i++) {
        X[i] = 0.1f * (float)(i % 17 + 1);
        Y[i] = 1.0 / 3.0 + i;
    }
    bind_ok(p, c, "X", X, 1, N);
    bind_ok(p, c, "Y", Y, 1, N);
    bind_ok(p, c, "Z", Z, 1, N);
    bind_ok(p, c, "W", W, 1, N);
    ck_assert_int_eq(tx_bind(p, "s", &s, 0, NULL), TX_OK);
    run_ok(p, c);
    double exact = 0;
    for (int i = 0; i < N; i++) {
        /* mixed f32/f64: computed in f64, converted on store */
        float want = (float)((double)X[i] * Y[i] + 0.5);
        ck_assert_msg(Z[i] == want, "Z[%d] = %.9g, want %.9g", i, Z[i], want);
        ck_assert_msg(W[i] == 2.0 * (double)X[i], "W[%d] = %.17g", i, W[i]);
        exact += X[i];
    }
    ck_assert_msg(fabs(s - exact) <= 1e-4 * exact, "s = %.9g, want %.9g", s, exact);
    tx_tensor_info info;
    ck_assert_int_eq(tx_tensor_get(p, 0, &info), TX_OK);
    ck_assert_int_eq(info.dtype, TX_F32);
    ck_assert_int_eq(tx_tensor_get(p, 1, &info), TX_OK);
    ck_assert_int_eq(info.dtype, TX_F64);
    free(X);
    free(Y);
    free(Z);
    free(W);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* an extent written as a dim expression (o+v) is reported as symbolic:
   the Python package checked such a mode against a constant 0 */
START_TEST(api_tensor_get_derived_extent)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "dim o, v;\nin F[o+v, 3];\nout d[o];\nd(\"i\") = slice(F(\"i,j\"), [0,0], [o,3]);\n",
                               "derived.tx");
    tx_tensor_info info;
    ck_assert_int_eq(tx_tensor_get(p, 0, &info), TX_OK);
    ck_assert_int_eq(info.ndim, 2);
    ck_assert_ptr_null(info.dims[0]);
    ck_assert_int_eq(info.extents[0], -1);
    ck_assert_int_eq(info.extents[1], 3);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_chip)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in A[n,m];\nout r[m], col[n];\nout e;\n"
                               "r(\"j\") = A(\"2,j\");\n"
                               "col(\"i\") = A(\"i,0\") * A(\"i,4\");\n"
                               "e = A(\"1,3\");\n",
                               "chip.tx");
    enum { N = 4, M = 5 };
    double A[N * M], r[M], col[N], e = 0;
    for (int i = 0; i < N * M; i++)
        A[i] = i * 1.25 - 3;
    bind_ok(p, c, "A", A, 2, N, M);
    bind_ok(p, c, "r", r, 1, M);
    bind_ok(p, c, "col", col, 1, N);
    ck_assert_int_eq(tx_bind(p, "e", &e, 0, NULL), TX_OK);
    run_ok(p, c);
    double wr[M], wc[N];
    for (int j = 0; j < M; j++)
        wr[j] = A[2 * M + j];
    for (int i = 0; i < N; i++)
        wc[i] = A[i * M + 0] * A[i * M + 4];
    same(r, wr, M);
    same(col, wc, N);
    ck_assert_double_eq(e, A[1 * M + 3]);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_inout_accumulate)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "inout S[n], T[n];\nin A[n,m];\n"
                               "S(\"i\") += A(\"i,j\");\n"
                               "T(\"i\") -= 2 * A(\"i,j\") * A(\"i,j\");\n",
                               "acc.tx");
    enum { N = 3, M = 4 };
    double A[N * M], S[N], T[N], S0[N], T0[N];
    for (int i = 0; i < N * M; i++)
        A[i] = (i % 4) - 1.5;
    for (int i = 0; i < N; i++) {
        S[i] = S0[i] = 10 * i + 1;
        T[i] = T0[i] = -i;
    }
    bind_ok(p, c, "S", S, 1, N);
    bind_ok(p, c, "T", T, 1, N);
    bind_ok(p, c, "A", A, 2, N, M);
    for (int run = 1; run <= 3; run++) {
        run_ok(p, c);
        double ws[N], wt[N];
        for (int i = 0; i < N; i++) {
            double rs = 0, rq = 0;
            for (int j = 0; j < M; j++) {
                rs += A[i * M + j];
                rq += A[i * M + j] * A[i * M + j];
            }
            ws[i] = S0[i] + run * rs;
            wt[i] = T0[i] - run * 2 * rq;
        }
        same(S, ws, N);
        same(T, wt, N);
    }
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_einsum_forms)
{
    /* transpose, broadcast, diagonal, division, power, outer product, a
       shared let and a let tensor, all checked element by element */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in A[n,n], b[n];\n"
                               "out At[n,n], Bc[n,n], d[n], q[n,n], P[n,n], O[n,n], X[n,n], Y[n,n];\n"
                               "At(\"j,i\") = A(\"i,j\");\n"
                               "Bc(\"i,j\") = A(\"i,j\") + b(\"j\");\n"
                               "d(\"i\") = A(\"i,i\");\n"
                               "q(\"i,j\") = A(\"i,j\") / b(\"j\");\n"
                               "P(\"i,j\") = A(\"i,j\") ^ 2 - 1;\n"
                               "O(\"i,j\") = b(\"i\") * b(\"j\");\n"
                               "let x = A(\"i,k\") * A(\"k,j\");\n"
                               "X(\"i,j\") = x;\n"
                               "let T(\"i,j\") = 2 * x + b(\"i\");\n"
                               "Y(\"i,j\") = T(\"j,i\") - x;\n",
                               "forms.tx");
    enum { N = 3 };
    double A[N * N], b[N] = {0.5, -2, 4};
    double At[N * N], Bc[N * N], d[N], q[N * N], P[N * N], O[N * N], X[N * N], Y[N * N];
    for (int i = 0; i < N * N; i++)
        A[i] = (i * 5 % 7) - 2.5;
    bind_ok(p, c, "A", A, 2, N, N);
    bind_ok(p, c, "b", b, 1, N);
    double *outs[] = {At, Bc, q, P, O, X, Y};
    const char *names[] = {"At", "Bc", "q", "P", "O", "X", "Y"};
    for (int k = 0; k < 7; k++) {
        fill(outs[k], N * N, NAN);
        bind_ok(p, c, names[k], outs[k], 2, N, N);
    }
    bind_ok(p, c, "d", d, 1, N);
    run_ok(p, c);
    double wAt[N * N], wBc[N * N], wd[N], wq[N * N], wP[N * N], wO[N * N], wX[N * N], wY[N * N];
    for (int i = 0; i < N; i++) {
        wd[i] = A[i * N + i];
        for (int j = 0; j < N; j++) {
            wAt[j * N + i] = A[i * N + j];
            wBc[i * N + j] = A[i * N + j] + b[j];
            wq[i * N + j] = A[i * N + j] / b[j];
            wP[i * N + j] = A[i * N + j] * A[i * N + j] - 1;
            wO[i * N + j] = b[i] * b[j];
            double s = 0;
            for (int k = 0; k < N; k++)
                s += A[i * N + k] * A[k * N + j];
            wX[i * N + j] = s;
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) /* T(a,c) = 2x(a,c) + b(a); Y(i,j) = T(j,i) - x(i,j) */
            wY[i * N + j] = (2 * wX[j * N + i] + b[j]) - wX[i * N + j];
    same(At, wAt, N * N);
    same(Bc, wBc, N * N);
    same(d, wd, N);
    same(q, wq, N * N);
    same(P, wP, N * N);
    same(O, wO, N * N);
    same(X, wX, N * N);
    same(Y, wY, N * N);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* A small dyadic value (a multiple of 1/2 in [-2, 2]) for index I: sums
   and products of these are exact in any order, so BLAS and loops agree
   to the last bit. */
static double dy(int i, int salt)
{
    return (double)((i * 7 + salt * 3 + 3) % 9 - 4) * 0.5;
}

START_TEST(api_semantics)
{
    /* the summation rule of tx(5) §4.1 on a mix of forms, and an inout
       tensor read before and after it is updated (no stale sharing) */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in A[n,n], x[n], y[n], b[n];\n"
                               "inout S[n];\n"
                               "out a[n], bb[n], q[n], s1, s2, p1[n], p2[n], c0[n,n], c1[n,n], d;\n"
                               "a(\"i\") = 2 * S(\"i\") + A(\"i,j\") * x(\"j\");\n"
                               "S(\"i\") += x(\"i\");\n"
                               "bb(\"i\") = 2 * S(\"i\") + A(\"i,j\") * x(\"j\");\n"
                               "q(\"i\") = x(\"i\") / A(\"i,j\");\n"
                               "s1 = x(\"i\") ^ 2;\n"
                               "s2 = (x(\"i\") * y(\"i\")) ^ 2;\n"
                               "p1(\"i\") = (A(\"i,j\") + b(\"i\")) * x(\"j\");\n"
                               "p2(\"i\") = A(\"i,j\") + b(\"i\");\n"
                               "c0(\"i,j\") = 0;\n"
                               "c1(\"i,j\") = 1.5;\n"
                               "c1(\"i,j\") -= A(\"j,i\") * -2 / 4;\n"
                               "d = a(\"i\") * bb(\"i\");\n",
                               "sem.tx");
    enum { N = 5 };
    static const double pw[] = {0.5, -1, 2, -4, 1, -0.5, 4};
    double A[N * N], x[N], y[N], b[N], S[N], S0[N];
    for (int i = 0; i < N * N; i++)
        A[i] = pw[(i * 3) % 7]; /* powers of two: x / A is exact */
    for (int i = 0; i < N; i++) {
        x[i] = dy(i, 1);
        y[i] = dy(i, 2);
        b[i] = dy(i, 3);
        S[i] = S0[i] = dy(i, 4) + 10;
    }
    double a[N], bb[N], q[N], s1 = -1, s2 = -1, p1[N], p2[N], c0[N * N], c1[N * N], d = -1;
    fill(c0, N * N, 99);
    bind_ok(p, c, "A", A, 2, N, N);
    bind_ok(p, c, "x", x, 1, N);
    bind_ok(p, c, "y", y, 1, N);
    bind_ok(p, c, "b", b, 1, N);
    bind_ok(p, c, "S", S, 1, N);
    bind_ok(p, c, "a", a, 1, N);
    bind_ok(p, c, "bb", bb, 1, N);
    bind_ok(p, c, "q", q, 1, N);
    bind_ok(p, c, "p1", p1, 1, N);
    bind_ok(p, c, "p2", p2, 1, N);
    bind_ok(p, c, "c0", c0, 2, N, N);
    bind_ok(p, c, "c1", c1, 2, N, N);
    ck_assert_int_eq(tx_bind(p, "s1", &s1, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "s2", &s2, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "d", &d, 0, NULL), TX_OK);
    run_ok(p, c);
    double wa[N], wS[N], wbb[N], wq[N], ws1 = 0, dotxy = 0, wp1[N], wp2[N], wc0[N * N], wc1[N * N], wd = 0;
    for (int i = 0; i < N; i++) {
        double ax = 0, sq = 0, sp = 0, sa = 0;
        for (int j = 0; j < N; j++) {
            ax += A[i * N + j] * x[j];
            sq += x[i] / A[i * N + j];
            sp += (A[i * N + j] + b[i]) * x[j];
            sa += A[i * N + j];
            wc0[i * N + j] = 0;
            wc1[i * N + j] = 1.5 - A[j * N + i] * -2 / 4;
        }
        wa[i] = 2 * S0[i] + ax;
        wS[i] = S0[i] + x[i];
        wbb[i] = 2 * wS[i] + ax;
        wq[i] = sq;
        wp1[i] = sp;
        wp2[i] = sa + b[i];
        ws1 += x[i] * x[i];
        dotxy += x[i] * y[i];
    }
    for (int i = 0; i < N; i++)
        wd += wa[i] * wbb[i];
    same(a, wa, N);
    same(S, wS, N);
    same(bb, wbb, N);
    same(q, wq, N);
    ck_assert_double_eq(s1, ws1);
    ck_assert_double_eq(s2, dotxy * dotxy);
    same(p1, wp1, N);
    same(p2, wp2, N);
    same(c0, wc0, N * N);
    same(c1, wc1, N * N);
    ck_assert_double_eq(d, wd);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_blas_shapes)
{
    /* products big enough for a BLAS call, in every layout: plain,
       transposed operands, a transposed result, batched, matrix-vector,
       dot, f32 */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in A[n,k], B[k,m], At[k,n], Bt[m,k], X[bt,n,k], Y[bt,k,m], v[k], w[k];\n"
                               "in f32 F[n,k], G[k,m];\n"
                               "out C1[n,m], C2[n,m], C3[bt,n,m], mv[n], dot, C4[m,n];\n"
                               "out f32 Cf[n,m];\n"
                               "C1(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n"
                               "C2(\"i,j\") = At(\"k,i\") * Bt(\"j,k\");\n"
                               "C3(\"b,i,j\") = X(\"b,i,k\") * Y(\"b,k,j\");\n"
                               "mv(\"i\") = A(\"i,k\") * v(\"k\");\n"
                               "dot = v(\"k\") * w(\"k\");\n"
                               "C4(\"j,i\") = A(\"i,k\") * B(\"k,j\");\n"
                               "Cf(\"i,j\") = F(\"i,k\") * G(\"k,j\");\n",
                               "blas.tx");
    enum { N = 37, K = 53, M = 29, BT = 3 };
    double *A = malloc(sizeof(double) * N * K), *B = malloc(sizeof(double) * K * M);
    double *At = malloc(sizeof(double) * K * N), *Bt = malloc(sizeof(double) * M * K);
    double *X = malloc(sizeof(double) * BT * N * K), *Y = malloc(sizeof(double) * BT * K * M);
    double v[K], w[K], dot = -1;
    float *F = malloc(sizeof(float) * N * K), *G = malloc(sizeof(float) * K * M);
    double *C1 = malloc(sizeof(double) * N * M), *C2 = malloc(sizeof(double) * N * M);
    double *C3 = malloc(sizeof(double) * BT * N * M), *C4 = malloc(sizeof(double) * M * N), mv[N];
    float *Cf = malloc(sizeof(float) * N * M);
    for (int i = 0; i < N * K; i++) {
        A[i] = dy(i, 1);
        F[i] = (float)dy(i, 5);
    }
    for (int i = 0; i < K * M; i++) {
        B[i] = dy(i, 2);
        G[i] = (float)dy(i, 6);
    }
    for (int q = 0; q < K; q++) {
        for (int i = 0; i < N; i++)
            At[q * N + i] = A[i * K + q];
        for (int j = 0; j < M; j++)
            Bt[j * K + q] = B[q * M + j];
        v[q] = dy(q, 3);
        w[q] = dy(q, 4);
    }
    for (int i = 0; i < BT * N * K; i++)
        X[i] = dy(i, 7);
    for (int i = 0; i < BT * K * M; i++)
        Y[i] = dy(i, 8);
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "At", At, 2, K, N);
    bind_ok(p, c, "Bt", Bt, 2, M, K);
    bind_ok(p, c, "X", X, 3, BT, N, K);
    bind_ok(p, c, "Y", Y, 3, BT, K, M);
    bind_ok(p, c, "v", v, 1, K);
    bind_ok(p, c, "w", w, 1, K);
    bind_ok(p, c, "F", F, 2, N, K);
    bind_ok(p, c, "G", G, 2, K, M);
    bind_ok(p, c, "C1", C1, 2, N, M);
    bind_ok(p, c, "C2", C2, 2, N, M);
    bind_ok(p, c, "C3", C3, 3, BT, N, M);
    bind_ok(p, c, "mv", mv, 1, N);
    ck_assert_int_eq(tx_bind(p, "dot", &dot, 0, NULL), TX_OK);
    bind_ok(p, c, "C4", C4, 2, M, N);
    bind_ok(p, c, "Cf", Cf, 2, N, M);
    run_ok(p, c);
    for (int i = 0; i < N; i++) {
        double sv = 0;
        for (int q = 0; q < K; q++)
            sv += A[i * K + q] * v[q];
        ck_assert_msg(mv[i] == sv, "mv[%d] = %g, want %g", i, mv[i], sv);
        for (int j = 0; j < M; j++) {
            double s = 0, sf = 0;
            for (int q = 0; q < K; q++) {
                s += A[i * K + q] * B[q * M + j];
                sf += (double)F[i * K + q] * G[q * M + j];
            }
            ck_assert_msg(C1[i * M + j] == s, "C1[%d,%d] = %g, want %g", i, j, C1[i * M + j], s);
            ck_assert_msg(C2[i * M + j] == s, "C2[%d,%d] = %g, want %g", i, j, C2[i * M + j], s);
            ck_assert_msg(C4[j * N + i] == s, "C4[%d,%d] = %g, want %g", j, i, C4[j * N + i], s);
            ck_assert_msg(Cf[i * M + j] == (float)sf, "Cf[%d,%d] = %g, want %g", i, j, Cf[i * M + j], sf);
        }
    }
    for (int bi = 0; bi < BT; bi++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) {
                double s = 0;
                for (int q = 0; q < K; q++)
                    s += X[(bi * N + i) * K + q] * Y[(bi * K + q) * M + j];
                ck_assert_msg(C3[(bi * N + i) * M + j] == s, "C3[%d,%d,%d] = %g, want %g", bi, i, j,
                              C3[(bi * N + i) * M + j], s);
            }
    double sd = 0;
    for (int q = 0; q < K; q++)
        sd += v[q] * w[q];
    ck_assert_double_eq(dot, sd);
    free(A);
    free(B);
    free(At);
    free(Bt);
    free(X);
    free(Y);
    free(F);
    free(G);
    free(C1);
    free(C2);
    free(C3);
    free(C4);
    free(Cf);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_outputs_not_read)
{
    /* an out tensor is written before any read (tx(5) §3): whatever the
       caller's array held before the run (NaN, Inf) must not leak into
       the result, whichever kernel (loops, gemm, gemv, dot) computes it */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "in A[n,k], B[k,m], v[k], w[k], X[b,k], Y[b,k];\n"
                               "in f32 F[k], G[k];\n"
                               "out C[n,m], mv[n], d, r[b];\n"
                               "out f32 e;\n"
                               "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n"
                               "mv(\"i\") = A(\"i,k\") * v(\"k\");\n"
                               "d = v(\"k\") * w(\"k\");\n"
                               "r(\"i\") = 2 * X(\"i,j\") * Y(\"i,j\");\n"
                               "e = F(\"k\") * G(\"k\");\n",
                               "outs.tx");
    enum { N = 9, K = 33, M = 7, BB = 5 };
    double A[N * K], B[K * M], v[K], w[K], X[BB * K], Y[BB * K];
    float F[K], G[K];
    double C[N * M], mv[N], d, r[BB];
    float e;
    for (int i = 0; i < N * K; i++)
        A[i] = dy(i, 1);
    for (int i = 0; i < K * M; i++)
        B[i] = dy(i, 2);
    for (int i = 0; i < K; i++) {
        v[i] = dy(i, 3);
        w[i] = dy(i, 4);
        F[i] = (float)dy(i, 5);
        G[i] = (float)dy(i, 6);
    }
    for (int i = 0; i < BB * K; i++) {
        X[i] = dy(i, 7);
        Y[i] = dy(i, 8);
    }
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "v", v, 1, K);
    bind_ok(p, c, "w", w, 1, K);
    bind_ok(p, c, "X", X, 2, BB, K);
    bind_ok(p, c, "Y", Y, 2, BB, K);
    bind_ok(p, c, "F", F, 1, K);
    bind_ok(p, c, "G", G, 1, K);
    bind_ok(p, c, "C", C, 2, N, M);
    bind_ok(p, c, "mv", mv, 1, N);
    bind_ok(p, c, "r", r, 1, BB);
    ck_assert_int_eq(tx_bind(p, "d", &d, 0, NULL), TX_OK);
    ck_assert_int_eq(tx_bind(p, "e", &e, 0, NULL), TX_OK);
    double wC[N * M], wmv[N], wd = 0, wr[BB], we = 0;
    for (int i = 0; i < N; i++) {
        wmv[i] = 0;
        for (int q = 0; q < K; q++)
            wmv[i] += A[i * K + q] * v[q];
        for (int j = 0; j < M; j++) {
            wC[i * M + j] = 0;
            for (int q = 0; q < K; q++)
                wC[i * M + j] += A[i * K + q] * B[q * M + j];
        }
    }
    for (int q = 0; q < K; q++) {
        wd += v[q] * w[q];
        we += (double)F[q] * G[q];
    }
    for (int i = 0; i < BB; i++) {
        wr[i] = 0;
        for (int q = 0; q < K; q++)
            wr[i] += X[i * K + q] * Y[i * K + q];
        wr[i] *= 2;
    }
    /* the results are collected first and the program freed before any
       assertion, so a failure leaks nothing even without fork() */
    const double junk[] = {NAN, INFINITY, -INFINITY, 1e300};
    char bad[1024] = "";
    size_t nb = 0;
#define BAD(...) (nb < sizeof bad ? (void)(nb += (size_t)snprintf(bad + nb, sizeof bad - nb, __VA_ARGS__)) : (void)0)
    for (int t = 0; t < 4; t++) {
        fill(C, N * M, junk[t]);
        fill(mv, N, junk[t]);
        fill(r, BB, junk[t]);
        d = junk[t];
        e = (float)junk[t];
        int st = tx_run(p);
        if (st != TX_OK) {
            BAD("run: %s; ", tx_errmsg(c));
            continue;
        }
        for (int i = 0; i < N * M; i++)
            if (C[i] != wC[i]) {
                BAD("C[%d] = %g with %g before; ", i, C[i], junk[t]);
                break;
            }
        for (int i = 0; i < N; i++)
            if (mv[i] != wmv[i]) {
                BAD("mv[%d] = %g with %g before; ", i, mv[i], junk[t]);
                break;
            }
        if (d != wd)
            BAD("d = %g with %g before (dot); ", d, junk[t]);
        for (int i = 0; i < BB; i++)
            if (r[i] != wr[i]) {
                BAD("r[%d] = %g with %g before (batched dot); ", i, r[i], junk[t]);
                break;
            }
        if (e != (float)we)
            BAD("e = %g with %g before (f32 dot); ", e, junk[t]);
    }
#undef BAD
    tx_program_free(p);
    tx_free(c);
    ck_assert_msg(nb == 0, "outputs read before written: %s", bad);
}
END_TEST

START_TEST(api_unicode_names)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in \xce\xbb[n], \xce\x9b[n];\nout \xce\x94x;\n"
                                  "\xce\x94x = \xce\xbb(\"\xce\xbc\") * \xce\x9b(\"\xce\xbc\");\n",
                               "\xce\xbb.tx");
    double l[3] = {1, 2, 3}, L[3] = {4, 5, 6}, r = 0;
    bind_ok(p, c, "\xce\xbb", l, 1, 3);
    bind_ok(p, c, "\xce\x9b", L, 1, 3);
    ck_assert_int_eq(tx_bind(p, "\xce\x94x", &r, 0, NULL), TX_OK);
    run_ok(p, c);
    ck_assert_double_eq(r, 32);
    tx_tensor_info info;
    ck_assert_int_eq(tx_tensor_get(p, 1, &info), TX_OK);
    ck_assert_str_eq(info.name, "\xce\x9b");
    ck_assert_str_eq(info.dims[0], "n");
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_empty_extent)
{
    /* a sum over an empty range is 0; an empty output is fine */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in x[n];\nout s;\nout y[n];\ns = x(\"i\");\ny(\"i\") = 2 * x(\"i\");\n", "e.tx");
    double dummy[1] = {7}, ydummy[1] = {-3}, s = -1;
    bind_ok(p, c, "x", dummy, 1, 0);
    bind_ok(p, c, "y", ydummy, 1, 0);
    ck_assert_int_eq(tx_bind(p, "s", &s, 0, NULL), TX_OK);
    run_ok(p, c);
    ck_assert_double_eq(s, 0);
    ck_assert_double_eq(ydummy[0], -3); /* nothing written outside the (empty) array */
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_source_not_terminated)
{
    /* LEN bytes of SRC are the program; what follows is not read */
    tx_ctx *c = tx_new();
    char buf[256];
    const char *prog = "in x[n]; out s; s = x(\"i\");";
    size_t len = strlen(prog);
    memcpy(buf, prog, len);
    memcpy(buf + len, " @@@ \"garbage", 14);
    tx_program *p = tx_compile(c, buf, len, "nt.tx");
    ck_assert_msg(p != NULL, "%s", tx_errmsg(c));
    double x[3] = {1, 2, 4.5}, s = 0;
    bind_ok(p, c, "x", x, 1, 3);
    ck_assert_int_eq(tx_bind(p, "s", &s, 0, NULL), TX_OK);
    run_ok(p, c);
    ck_assert_double_eq(s, 7.5);
    tx_program_free(p);

    /* an exactly-sized heap buffer without a terminator (valgrind watches) */
    char *exact = malloc(len);
    memcpy(exact, prog, len);
    p = tx_compile(c, exact, len, "nt.tx");
    ck_assert_ptr_nonnull(p);
    free(exact); /* the program keeps its own copy */
    bind_ok(p, c, "x", x, 1, 3);
    ck_assert_int_eq(tx_bind(p, "s", &s, 0, NULL), TX_OK);
    s = 0;
    run_ok(p, c);
    ck_assert_double_eq(s, 7.5);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_opt_levels_agree)
{
    for (int level = 0; level <= 2; level++) {
        tx_ctx *c = tx_new();
        ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, level), TX_OK);
        tx_program *p = compile_ok(c, MATMUL, "mm.tx");
        double A[2 * 7], B[7 * 3], C[2 * 3], W[2 * 3];
        matmul_data(2, 7, 3, level, A, B, W);
        bind_ok(p, c, "A", A, 2, 2, 7);
        bind_ok(p, c, "B", B, 2, 7, 3);
        bind_ok(p, c, "C", C, 2, 2, 3);
        run_ok(p, c);
        same(C, W, 6);
        tx_program_free(p);
        tx_free(c);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* many runs, recompilation                                           */

START_TEST(api_many_runs)
{
    tx_ctx *c = tx_new();
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_TIMING, 1), TX_OK);
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    enum { N = 3, K = 4, M = 2 };
    double A[2][N * K], B[2][K * M], C[2][N * M], W[N * M];
    int bound = -1; /* the set of arrays currently bound */
    for (int run = 0; run < 30; run++) {
        if (run < 2 || run % 3 == 0) { /* rebind (same extents) only sometimes */
            bound = run % 2;
            bind_ok(p, c, "A", A[bound], 2, N, K);
            bind_ok(p, c, "B", B[bound], 2, K, M);
            bind_ok(p, c, "C", C[bound], 2, N, M);
        }
        /* new data in the bound arrays, in place */
        matmul_data(N, K, M, run, A[bound], B[bound], W);
        fill(C[bound], N * M, NAN);
        fill(C[1 - bound], N * M, -1);
        run_ok(p, c);
        same(C[bound], W, N * M);
        for (int i = 0; i < N * M; i++)
            ck_assert_double_eq(C[1 - bound][i], -1);
        double jit = -1;
        int line = -1;
        ck_assert_int_eq(tx_timing(p, -1, &jit, &line), TX_OK);
        if (run == 0)
            ck_assert_msg(jit > 0, "first run: JIT time %g", jit);
        else
            ck_assert_msg(jit == 0, "run %d recompiled (JIT time %g) with the same extents", run, jit);
        double t = -1;
        ck_assert_int_eq(tx_timing(p, 0, &t, &line), TX_OK);
        ck_assert_int_eq(line, 3);
        ck_assert(t >= 0 && t < 10);
    }
    ck_assert_int_eq(tx_timing(p, 1, NULL, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_timing(p, -2, NULL, NULL), TX_ERR_ARG);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_rebind_new_extent_recompiles)
{
    /* n occurs in one tensor only; 3 comes back after 5 */
    tx_ctx *c = tx_new();
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_TIMING, 1), TX_OK);
    tx_program *p = compile_ok(c, "in x[n];\nout s;\ns = x(\"i\") * x(\"i\");\n", "ss.tx");
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, s = 0, jit = -1;
    ck_assert_int_eq(tx_bind(p, "s", &s, 0, NULL), TX_OK);
    const int ns[] = {3, 3, 5, 5, 3, 8, 8};
    for (int r = 0; r < 7; r++) {
        bind_ok(p, c, "x", x, 1, ns[r]);
        run_ok(p, c);
        double want = 0;
        for (int i = 0; i < ns[r]; i++)
            want += x[i] * x[i];
        ck_assert_double_eq(s, want);
        ck_assert_int_eq(tx_timing(p, -1, &jit, NULL), TX_OK);
        /* compiled for each new extent; a return to one of the last few
           takes its code back (tx_run(3)) */
        int seen = 0;
        for (int q = 0; q < r; q++)
            seen |= ns[q] == ns[r];
        if (!seen)
            ck_assert_msg(jit > 0, "run %d: a new extent but no compilation", r);
        else
            ck_assert_msg(jit == 0, "run %d: compiled again for an extent compiled before", r);
    }
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_rebind_matmul_new_extents)
{
    /* the embedding user's case: the same matmul program on a bigger
       problem. Every dim is shared by two tensors, so the new shapes are
       consistent only once all three arrays are rebound. */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    double A[6 * 5], B[5 * 4], C[6 * 4], W[6 * 4];
    matmul_data(2, 3, 2, 0, A, B, W);
    bind_ok(p, c, "A", A, 2, 2, 3);
    bind_ok(p, c, "B", B, 2, 3, 2);
    bind_ok(p, c, "C", C, 2, 2, 2);
    run_ok(p, c);
    same(C, W, 4);

    matmul_data(6, 5, 4, 3, A, B, W);
    int st = tx_bind(p, "A", A, 2, (const int64_t[]){6, 5});
    ck_assert_msg(st == TX_OK, "rebinding A with new extents: %d: %s", st, tx_errmsg(c));
    bind_ok(p, c, "B", B, 2, 5, 4);
    bind_ok(p, c, "C", C, 2, 6, 4);
    run_ok(p, c);
    same(C, W, 24);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_set_dim)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "dim b = 3;\nout C[n];\nin x[b];\nC(\"i\") = 2;\n", "sd.tx");
    int64_t shape[1] = {-7};
    ck_assert_int_eq(tx_tensor_shape(p, "C", shape), TX_ERR_BIND); /* n unknown yet */
    ck_assert(contains(tx_errmsg(c), "'n'"));
    ck_assert_int_eq(tx_set_dim(p, "n", 4), TX_OK);
    ck_assert_int_eq(tx_tensor_shape(p, "C", shape), TX_OK);
    ck_assert_int_eq(shape[0], 4);
    ck_assert_int_eq(tx_tensor_shape(p, "x", shape), TX_OK);
    ck_assert_int_eq(shape[0], 3);
    double C[5] = {0, 0, 0, 0, -1}, x[3] = {0};
    /* a binding that disagrees with the dim set */
    ck_assert_int_eq(tx_bind(p, "C", C, 1, (const int64_t[]){5}), TX_ERR_BIND);
    ck_assert(contains(tx_errmsg(c), "'n'"));
    bind_ok(p, c, "C", C, 1, 4);
    bind_ok(p, c, "x", x, 1, 3);
    run_ok(p, c);
    same(C, ((double[]){2, 2, 2, 2, -1}), 5);
    /* setting it to what the binding says is fine; to something else is
       an error, either now or at the next run */
    ck_assert_int_eq(tx_set_dim(p, "n", 4), TX_OK);
    int st = tx_set_dim(p, "n", 2);
    if (st == TX_OK) {
        fill(C, 5, -1);
        ck_assert_int_eq(tx_run(p), TX_ERR_BIND);
        ck_assert_msg(contains(tx_errmsg(c), "'n'") && contains(tx_errmsg(c), "'C'"), "%s", tx_errmsg(c));
        same(C, ((double[]){-1, -1, -1, -1, -1}), 5); /* nothing written */
        ck_assert_int_eq(tx_set_dim(p, "n", 4), TX_OK);
    } else {
        ck_assert_int_eq(st, TX_ERR_BIND);
        ck_assert_msg(contains(tx_errmsg(c), "'n'") && contains(tx_errmsg(c), "'C'"), "%s", tx_errmsg(c));
    }
    ck_assert_int_eq(tx_tensor_shape(p, "C", shape), TX_OK);
    ck_assert_int_eq(shape[0], 4);
    ck_assert_int_eq(tx_set_dim(p, "nope", 4), TX_ERR_ARG);
    ck_assert(contains(tx_errmsg(c), "nope"));
    ck_assert_int_eq(tx_set_dim(p, "b", 5), TX_ERR_ARG); /* a constant */
    ck_assert_int_eq(tx_set_dim(p, "C", 3), TX_ERR_ARG); /* a tensor */
    ck_assert_int_eq(tx_set_dim(p, "n", -1), TX_ERR_ARG);
    ck_assert_int_eq(tx_set_dim(p, NULL, 1), TX_ERR_ARG);
    ck_assert_int_eq(tx_set_dim(NULL, "n", 1), TX_ERR_ARG);
    run_ok(p, c);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* introspection                                                      */

START_TEST(api_tensor_info)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c,
                               "dim b = 4;\nin f32 A[n,b];\ntmp T[n];\nout C[n];\ninout S;\n"
                               "T(\"i\") = A(\"i,j\");\nC(\"i\") = T(\"i\");\nS += C(\"i\");\n",
                               "info.tx");
    ck_assert_int_eq(tx_tensor_count(p), 3);
    ck_assert_int_eq(tx_stmt_count(p), 3);
    tx_tensor_info in;
    memset(&in, 0, sizeof in);
    ck_assert_int_eq(tx_tensor_get(p, 0, &in), TX_OK);
    ck_assert_str_eq(in.name, "A");
    ck_assert_int_eq(in.io, TX_IN);
    ck_assert_int_eq(in.dtype, TX_F32);
    ck_assert_int_eq(in.ndim, 2);
    ck_assert_ptr_nonnull(in.dims);
    ck_assert_str_eq(in.dims[0], "n");
    ck_assert_ptr_null(in.dims[1]);
    ck_assert_int_eq(in.extents[0], -1);
    ck_assert_int_eq(in.extents[1], 4);
    ck_assert_int_eq(tx_tensor_get(p, 1, &in), TX_OK);
    ck_assert_str_eq(in.name, "C");
    ck_assert_int_eq(in.io, TX_OUT);
    ck_assert_int_eq(in.dtype, TX_F64);
    ck_assert_int_eq(in.ndim, 1);
    ck_assert_str_eq(in.dims[0], "n");
    ck_assert_int_eq(tx_tensor_get(p, 2, &in), TX_OK);
    ck_assert_str_eq(in.name, "S");
    ck_assert_int_eq(in.io, TX_INOUT);
    ck_assert_int_eq(in.ndim, 0);
    ck_assert_int_eq(tx_tensor_get(p, 3, &in), TX_ERR_ARG);
    ck_assert_int_eq(tx_tensor_get(p, -1, &in), TX_ERR_ARG);
    ck_assert_int_eq(tx_tensor_get(p, 0, NULL), TX_ERR_ARG);

    int64_t shape[2] = {-5, -5};
    ck_assert_int_eq(tx_tensor_shape(p, "A", shape), TX_ERR_BIND);
    ck_assert_int_eq(tx_tensor_shape(p, "S", shape), TX_OK); /* a scalar needs nothing */
    ck_assert_int_eq(tx_tensor_shape(p, "T", shape), TX_ERR_ARG); /* tmp: not a parameter */
    ck_assert_int_eq(tx_tensor_shape(p, "zz", shape), TX_ERR_ARG);
    float A[7 * 4];
    for (int i = 0; i < 28; i++)
        A[i] = (float)i;
    bind_ok(p, c, "A", A, 2, 7, 4);
    ck_assert_int_eq(tx_tensor_shape(p, "C", shape), TX_OK);
    ck_assert_int_eq(shape[0], 7);
    ck_assert_int_eq(tx_tensor_shape(p, "A", shape), TX_OK);
    ck_assert_int_eq(shape[0], 7);
    ck_assert_int_eq(shape[1], 4);
    /* and the program runs through its tmp */
    double C[7], S = 100;
    bind_ok(p, c, "C", C, 1, 7);
    ck_assert_int_eq(tx_bind(p, "S", &S, 0, NULL), TX_OK);
    run_ok(p, c);
    double wS = 100;
    for (int i = 0; i < 7; i++) {
        double r = 0;
        for (int j = 0; j < 4; j++)
            r += A[i * 4 + j];
        ck_assert_double_eq(C[i], r);
        wS += r;
    }
    ck_assert_double_eq(S, wS);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_emit)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL, "some/dir/mm.tx");
    size_t len = 0;
    char *src = tx_emit_c(p, &len);
    ck_assert_ptr_nonnull(src);
    ck_assert_uint_eq(len, strlen(src));
    /* tx(5) §8: dims, then tensors (in ones const), named after the file */
    ck_assert_msg(contains(src, "int mm(int64_t d_n, int64_t d_k, int64_t d_m"), "%s", src);
    ck_assert(contains(src, "const double *t_A"));
    ck_assert(contains(src, "const double *t_B"));
    ck_assert(contains(src, "double *t_C"));
    ck_assert(!contains(src, "const double *t_C"));
    ck_assert(contains(src, "const char *mm_error(int code)"));
    free(src);

    tx_emit_options o = {.name = "my_matmul", .no_blas = 1};
    src = tx_emit(p, &o, &len);
    ck_assert_ptr_nonnull(src);
    ck_assert_uint_eq(len, strlen(src));
    ck_assert(contains(src, "int my_matmul(int64_t d_n"));
    ck_assert(contains(src, "my_matmul_error"));
    ck_assert(!contains(src, "int mm("));
    ck_assert(!contains(src, "cblas.h"));
    ck_assert(!contains(src, "lapacke.h"));
    free(src);

    o.header = 1;
    char *hdr = tx_emit(p, &o, NULL);
    ck_assert_ptr_nonnull(hdr);
    ck_assert_msg(contains(hdr, "int my_matmul(int64_t d_n, int64_t d_k, int64_t d_m"), "%s", hdr);
    ck_assert(contains(hdr, "const char *my_matmul_error(int code);"));
    ck_assert(contains(hdr, "#ifndef"));
    ck_assert(contains(hdr, "#endif"));
    ck_assert(contains(hdr, "#include <stdint.h>"));
    /* a declaration, not a definition */
    const char *decl = strstr(hdr, "int my_matmul(");
    const char *end = strchr(decl, ')');
    ck_assert_ptr_nonnull(end);
    ck_assert_msg(strncmp(end, ");", 2) == 0, "not a declaration: %s", decl);
    ck_assert(!contains(hdr, "tx_mul_ok"));
    ck_assert(!contains(hdr, "for ("));
    /* every parameter is documented */
    ck_assert(contains(hdr, "d_n"));
    ck_assert(contains(hdr, "d_k"));
    ck_assert(contains(hdr, "d_m"));
    ck_assert(contains(hdr, "t_A"));
    ck_assert(contains(hdr, "t_B"));
    ck_assert(contains(hdr, "t_C"));
    free(hdr);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* Writes S to PATH; returns 0 on success. */
static int write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    size_t n = strlen(s);
    int ok = fwrite(s, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

START_TEST(api_emit_bad_names)
{
    /* a function name that would not compile, or would clash, is refused */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    static const char *bad[] = {"int", "1abc", "my fn", "", "free", "main", "a-b", "\xce\xbb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tx_emit_options o = {.name = bad[i]};
        char *s = tx_emit(p, &o, NULL);
        ck_assert_msg(s == NULL, "name '%s' accepted", bad[i]);
        ck_assert(strlen(tx_errmsg(c)) > 0);
    }
    tx_emit_options o = {.name = "good_name2"};
    char *s = tx_emit(p, &o, NULL);
    ck_assert_ptr_nonnull(s);
    ck_assert(contains(s, "int good_name2("));
    free(s);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_emit_builds_and_runs)
{
    /* the emitted source and header compile with the system compiler, and
       the function computes what the JIT does */
    if (system("cc --version >/dev/null 2>&1") != 0)
        return;
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    tx_emit_options o = {.name = "my_matmul", .no_blas = 1};
    char *src = tx_emit(p, &o, NULL);
    o.header = 1;
    char *hdr = tx_emit(p, &o, NULL);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(hdr);
    char dir[] = "/tmp/tx_api_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "%s/mm.c", dir);
    ck_assert_int_eq(write_file(path, src), 0);
    snprintf(path, sizeof path, "%s/mm.h", dir);
    ck_assert_int_eq(write_file(path, hdr), 0);
    snprintf(path, sizeof path, "%s/main.c", dir);
    ck_assert_int_eq(write_file(path,
                                "#include <stdio.h>\n#include \"mm.h\"\n"
                                "int main(void) {\n"
                                "    double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {0.5, -1, 2, 0, 1, 1}, C[4];\n"
                                "    int r = my_matmul(2, 3, 2, A, B, C);\n"
                                "    if (r) return 2;\n"
                                "    printf(\"%.17g %.17g %.17g %.17g\\n\", C[0], C[1], C[2], C[3]);\n"
                                "    r = my_matmul(-1, 3, 2, A, B, C);\n"
                                "    printf(\"%d %s\\n\", r != 0, my_matmul_error(r));\n"
                                "    return 0;\n"
                                "}\n"),
                     0);
    snprintf(cmd, sizeof cmd,
             "cd %s && cc -std=c99 -pedantic -Wall -Wextra -Werror -o prog main.c mm.c -lm >build.log 2>&1 "
             "&& ./prog >out.txt",
             dir);
    int r = system(cmd);
    char out[512] = "";
    snprintf(path, sizeof path, "%s/out.txt", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = 0;
        fclose(f);
    }
    char log[2048] = "";
    snprintf(path, sizeof path, "%s/build.log", dir);
    f = fopen(path, "r");
    if (f) {
        size_t n = fread(log, 1, sizeof log - 1, f);
        log[n] = 0;
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(r == 0, "build or run failed (%d):\n%s", r, log);
    /* A = [1 2 3; 4 5 6], B = [0.5 -1; 2 0; 1 1] */
    ck_assert_str_eq(out, "7.5 2 18 2\n1 dim 'n' is negative\n");
    free(src);
    free(hdr);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_emit_function_name_from_file)
{
    /* the default function name comes from the file name; whatever the
       file is called, it must not collide with the C library or with the
       generated code's own names (a file called log.tx or free.tx) */
    if (system("cc --version >/dev/null 2>&1") != 0)
        return;
    static const char *files[] = {"log.tx", "free.tx", "exp.tx", "tx_mul_ok.tx", "int.tx", "9lives.tx",
                                  "my-prog.v2.tx", "\xce\xbb.tx"};
    tx_ctx *c = tx_new();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tx_program *p = compile_ok(c, MATMUL, files[i]);
        char *src = tx_emit_c(p, NULL);
        ck_assert_ptr_nonnull(src);
        char dir[] = "/tmp/tx_api_XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(dir));
        char path[256], cmd[512];
        snprintf(path, sizeof path, "%s/p.c", dir);
        ck_assert_int_eq(write_file(path, src), 0);
        snprintf(cmd, sizeof cmd, "cc -std=c99 -Wall -Werror -c -o %s/p.o %s >/dev/null 2>&1", dir, path);
        int r = system(cmd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
        const char *sig = strstr(src, "\nint ");
        char fn[64] = "?";
        if (sig)
            snprintf(fn, sizeof fn, "%.*s", (int)strcspn(sig + 5, "("), sig + 5);
        ck_assert_msg(r == 0, "file '%s': the function is named '%s' and the source does not compile", files[i],
                      fn);
        free(src);
        tx_program_free(p);
    }
    tx_free(c);
}
END_TEST

START_TEST(api_graph)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    size_t len = 0;
    char *g = tx_graph(p, 0, &len);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(len, strlen(g));
    ck_assert_msg(contains(g, "contract") && contains(g, "over k"), "%s", g);
    ck_assert(contains(g, "input A"));
    ck_assert(contains(g, "input B"));
    ck_assert(contains(g, "store C(\"i,j\")"));
    ck_assert(g[0] == '%');
    free(g);
    g = tx_graph(p, 1, &len);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(len, strlen(g));
    ck_assert(strncmp(g, "digraph", 7) == 0);
    ck_assert(contains(g, "->"));
    ck_assert(contains(g, "contract"));
    ck_assert_str_eq(g + len - 2, "}\n");
    free(g);
    g = tx_graph(p, 0, NULL);
    ck_assert_ptr_nonnull(g);
    free(g);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_two_programs_one_context)
{
    tx_ctx *c = tx_new();
    tx_program *p1 = compile_ok(c, MATMUL, "a.tx");
    tx_program *p2 = compile_ok(c, "in x[n]; out y[n]; y(\"i\") = 3 * x(\"i\");", "b.tx");
    double A[4] = {1, 2, 3, 4}, B[4] = {1, 0, 0, 1}, C[4], x[5] = {1, 2, 3, 4, 5}, y[5];
    bind_ok(p1, c, "A", A, 2, 2, 2);
    bind_ok(p1, c, "B", B, 2, 2, 2);
    bind_ok(p1, c, "C", C, 2, 2, 2);
    bind_ok(p2, c, "x", x, 1, 5); /* n here is another program's n */
    bind_ok(p2, c, "y", y, 1, 5);
    run_ok(p1, c);
    run_ok(p2, c);
    same(C, A, 4);
    same(y, ((double[]){3, 6, 9, 12, 15}), 5);
    tx_program_free(p1);
    tx_program_free(p2);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors                                                             */

START_TEST(api_compile_errors)
{
    tx_ctx *c = tx_new();
    const char *bad = "in A[n];\nout C[n];\nC(\"i\") = A(\"j\");\n";
    tx_program *p = tx_compile(c, bad, strlen(bad), "bad.tx");
    ck_assert_ptr_null(p);
    const char *m = tx_errmsg(c);
    ck_assert_msg(strncmp(m, "bad.tx:3:4: error: ", 19) == 0, "%s", m);
    ck_assert(contains(m, "'i'"));
    ck_assert_msg(contains(m, "\n    C(\"i\") = A(\"j\");\n       ^\n"), "%s", m); /* the line and the caret */

    /* a syntax error, a lexical error, no file name */
    p = tx_compile(c, "in A[n]\nout C;", 14, "syn.tx");
    ck_assert_ptr_null(p);
    /* the missing ';' is reported at the end of line 1 or at line 2 */
    ck_assert_msg(strncmp(tx_errmsg(c), "syn.tx:2:1: error: ", 19) == 0 ||
                      strncmp(tx_errmsg(c), "syn.tx:1:8: error: ", 19) == 0, "%s", tx_errmsg(c));
    p = tx_compile(c, "in A[n];\n  @", 12, NULL);
    ck_assert_ptr_null(p);
    ck_assert_msg(contains(tx_errmsg(c), ":2:3: error: "), "%s", tx_errmsg(c));

    /* several errors are all reported */
    const char *two = "in A[n];\nout C[n], D[n];\nC(\"i\") = X(\"i\");\nD(\"i\") = Y(\"i\");\n";
    ck_assert_ptr_null(tx_compile(c, two, strlen(two), "two.tx"));
    ck_assert(contains(tx_errmsg(c), "two.tx:3:10: error: "));
    ck_assert(contains(tx_errmsg(c), "two.tx:4:10: error: "));

    /* the next success clears the message */
    p = compile_ok(c, MATMUL, "ok.tx");
    ck_assert_str_eq(tx_errmsg(c), "");
    tx_program_free(p);

    /* an empty program is a valid program */
    p = tx_compile(c, "", 0, "empty.tx");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(tx_tensor_count(p), 0);
    ck_assert_int_eq(tx_run(p), TX_OK);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_bind_errors)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "dim b = 2;\nin A[n,k], B[k,b];\ntmp T[n,b];\nout C[n,b];\n"
                                  "T(\"i,j\") = A(\"i,k\") * B(\"k,j\");\nC(\"i,j\") = T(\"i,j\");\n",
                               "bind.tx");
    double A[12], B[8], C[6], W[6];
    for (int i = 0; i < 12; i++)
        A[i] = i - 3;
    for (int i = 0; i < 8; i++)
        B[i] = 0.5 * i;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            W[i * 2 + j] = 0;
            for (int k = 0; k < 4; k++)
                W[i * 2 + j] += A[i * 4 + k] * B[k * 2 + j];
        }

    ck_assert_int_eq(tx_bind(p, "Z", A, 2, (const int64_t[]){3, 4}), TX_ERR_ARG);
    ck_assert(contains(tx_errmsg(c), "'Z'"));
    ck_assert_int_eq(tx_bind(p, "T", A, 2, (const int64_t[]){3, 2}), TX_ERR_ARG); /* tmp */
    ck_assert(contains(tx_errmsg(c), "'T'"));
    ck_assert_int_eq(tx_bind(p, "b", A, 0, NULL), TX_ERR_ARG); /* a dim */
    ck_assert_int_eq(tx_bind(p, "A", A, 1, (const int64_t[]){12}), TX_ERR_BIND);
    ck_assert(contains(tx_errmsg(c), "'A'"));
    ck_assert_int_eq(tx_bind(p, "A", A, 3, (const int64_t[]){3, 2, 2}), TX_ERR_BIND);
    ck_assert_int_eq(tx_bind(p, "B", B, 2, (const int64_t[]){4, 3}), TX_ERR_BIND); /* b is 2 */
    ck_assert(contains(tx_errmsg(c), "'B'"));
    ck_assert_int_eq(tx_bind(p, "A", A, 2, (const int64_t[]){-3, 4}), TX_ERR_BIND);

    /* running with a tensor unbound */
    bind_ok(p, c, "A", A, 2, 3, 4);
    bind_ok(p, c, "B", B, 2, 4, 2);
    ck_assert_int_eq(tx_run(p), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'C'"), "%s", tx_errmsg(c));
    bind_ok(p, c, "C", C, 2, 3, 2);
    run_ok(p, c);
    same(C, W, 6);

    /* k is 4 from A: B with 3 rows disagrees. The library may say so at
       tx_bind or at tx_run; either way TX_ERR_BIND, naming k, A and B */
    double B3[6] = {0};
    int st = tx_bind(p, "B", B3, 2, (const int64_t[]){3, 2});
    if (st == TX_OK) {
        fill(C, 6, -1);
        st = tx_run(p);
        for (int i = 0; i < 6; i++)
            ck_assert_double_eq(C[i], -1); /* nothing written */
    }
    ck_assert_int_eq(st, TX_ERR_BIND);
    const char *m = tx_errmsg(c);
    ck_assert_msg(contains(m, "'k'") && contains(m, "'A'") && contains(m, "'B'"), "%s", m);
    ck_assert_msg(contains(m, "4") && contains(m, "3"), "%s", m);
    bind_ok(p, c, "B", B, 2, 4, 2);
    /* n is 3 from A: C with 2 rows disagrees */
    st = tx_bind(p, "C", C, 2, (const int64_t[]){2, 2});
    if (st == TX_OK)
        st = tx_run(p);
    ck_assert_int_eq(st, TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'C'") && contains(tx_errmsg(c), "'A'"), "%s", tx_errmsg(c));
    bind_ok(p, c, "C", C, 2, 3, 2);
    run_ok(p, c);
    same(C, W, 6);

    /* a bind that fails keeps the previous binding */
    double other[12] = {0};
    ck_assert_int_eq(tx_bind(p, "B", other, 2, (const int64_t[]){4, 3}), TX_ERR_BIND);
    ck_assert_int_eq(tx_bind(p, "A", other, 1, (const int64_t[]){12}), TX_ERR_BIND);
    fill(C, 6, NAN);
    run_ok(p, c);
    same(C, W, 6);

    /* sparse maps are not supported yet */
    tx_sparse_map map = {0, NULL, NULL};
    ck_assert_int_eq(tx_bind_sparse(p, "L", &map), TX_ERR_ARG);
    ck_assert(strlen(tx_errmsg(c)) > 0);
    ck_assert_int_eq(tx_bind_sparse(p, "L", NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_sparse(p, NULL, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_sparse(NULL, "L", &map), TX_ERR_ARG);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_chip_out_of_range_at_run_time)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, "in A[n,m];\nout r[m];\nr(\"j\") = A(\"3,j\");\n", "chip.tx");
    double A[4 * 4], r[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 16; i++)
        A[i] = i;
    bind_ok(p, c, "A", A, 2, 2, 4); /* row 3 of a 2-row A */
    bind_ok(p, c, "r", r, 1, 4);
    ck_assert_int_eq(tx_run(p), TX_ERR_RUN);
    const char *m = tx_errmsg(c);
    ck_assert_msg(contains(m, "chip.tx:3:13") && contains(m, "'A'"), "%s", m);
    same(r, ((double[]){-1, -1, -1, -1}), 4); /* nothing written */
    /* with 4 rows it is fine */
    bind_ok(p, c, "A", A, 2, 4, 4);
    run_ok(p, c);
    same(r, ((double[]){12, 13, 14, 15}), 4);
    /* a constant extent: a compile-time error */
    const char *k = "in A[2,m];\nout r[m];\nr(\"j\") = A(\"2,j\");\n";
    ck_assert_ptr_null(tx_compile(c, k, strlen(k), "chip2.tx"));
    ck_assert_msg(contains(tx_errmsg(c), "chip2.tx:3:13: error: "), "%s", tx_errmsg(c));
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_null_arguments)
{
    /* nothing crashes; every call that can fail reports it */
    tx_free(NULL);
    tx_program_free(NULL);
    ck_assert_ptr_nonnull(tx_errmsg(NULL));
    ck_assert_ptr_null(tx_compile(NULL, MATMUL, strlen(MATMUL), "x.tx"));
    ck_assert_int_eq(tx_set_option(NULL, TX_OPTION_OPT_LEVEL, 1), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind(NULL, "A", (double[1]){0}, 0, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_sparse(NULL, NULL, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_set_dim(NULL, NULL, 0), TX_ERR_ARG);
    ck_assert_int_eq(tx_run(NULL), TX_ERR_ARG);
    ck_assert_ptr_null(tx_emit_c(NULL, NULL));
    ck_assert_ptr_null(tx_emit(NULL, NULL, NULL));
    ck_assert_ptr_null(tx_graph(NULL, 0, NULL));
    ck_assert_int_eq(tx_tensor_count(NULL), 0);
    tx_tensor_info info;
    ck_assert_int_eq(tx_tensor_get(NULL, 0, &info), TX_ERR_ARG);
    int64_t shape[2];
    ck_assert_int_eq(tx_tensor_shape(NULL, "A", shape), TX_ERR_ARG);
    ck_assert_int_eq(tx_stmt_count(NULL), 0);
    double sec;
    int line;
    ck_assert_int_eq(tx_timing(NULL, 0, &sec, &line), TX_ERR_ARG);
    ck_assert_int_eq(tx_timing(NULL, -1, &sec, &line), TX_ERR_ARG);

    tx_ctx *c = tx_new();
    ck_assert_ptr_null(tx_compile(c, NULL, 5, "x.tx"));
    ck_assert(strlen(tx_errmsg(c)) > 0);
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    double A[4];
    ck_assert_int_eq(tx_bind(p, NULL, A, 2, (const int64_t[]){2, 2}), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind(p, "A", NULL, 2, (const int64_t[]){2, 2}), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind(p, "A", A, 2, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_tensor_shape(p, NULL, shape), TX_ERR_ARG);
    ck_assert_int_eq(tx_timing(p, 0, NULL, NULL), TX_OK);
    char *s = tx_emit(p, NULL, NULL); /* NULL options: the defaults */
    ck_assert_ptr_nonnull(s);
    free(s);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_null_shape_pointer)
{
    /* tx_tensor_shape with a NULL result pointer, once the shape is known */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    double A[4];
    bind_ok(p, c, "A", A, 2, 2, 2);
    ck_assert_int_eq(tx_tensor_shape(p, "A", NULL), TX_ERR_ARG);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(api_strerror)
{
    const int codes[] = {TX_OK, TX_ERR_NOMEM, TX_ERR_ARG, TX_ERR_COMPILE, TX_ERR_BIND, TX_ERR_RUN, TX_ERR_JIT};
    ck_assert_int_eq(TX_OK, 0);
    ck_assert_int_eq(TX_ERR_NOMEM, 1);
    ck_assert_int_eq(TX_ERR_JIT, 6);
    for (int i = 0; i < 7; i++) {
        const char *s = tx_strerror(codes[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_gt((int)strlen(s), 3);
        for (int j = 0; j < i; j++)
            ck_assert_str_ne(s, tx_strerror(codes[j]));
    }
    const int unknown[] = {-1, 7, 1000};
    for (int i = 0; i < 3; i++) {
        const char *s = tx_strerror(unknown[i]);
        ck_assert_ptr_nonnull(s);
        for (int j = 0; j < 7; j++)
            ck_assert_str_ne(s, tx_strerror(codes[j]));
    }
}
END_TEST

START_TEST(api_set_option)
{
    tx_ctx *c = tx_new();
    for (int v = 0; v <= 2; v++)
        ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, v), TX_OK);
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, -1), TX_ERR_ARG);
    ck_assert(strlen(tx_errmsg(c)) > 0);
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, 3), TX_ERR_ARG);
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, 1 << 30), TX_ERR_ARG);
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_TIMING, 0), TX_OK);
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_TIMING, 1), TX_OK);
    ck_assert_int_eq(tx_set_option(c, (tx_option)0, 1), TX_ERR_ARG);
    ck_assert_int_eq(tx_set_option(c, (tx_option)99, 1), TX_ERR_ARG);
    ck_assert(strlen(tx_errmsg(c)) > 0);
    /* the context still works */
    tx_program *p = compile_ok(c, MATMUL, "mm.tx");
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* TX_OPTION_HUGE_PAGES: 0 and 1 only; a program whose workspace is large
   enough to be advised (T: 600 x 600 doubles, 2.9 MB) computes the same
   bits either way, over two runs (the workspace is kept) */
START_TEST(api_huge_pages)
{
    enum { N = 600 };
    double *A = malloc(sizeof(double) * N * N), *C[2];
    ck_assert_ptr_nonnull(A);
    for (int i = 0; i < N * N; i++)
        A[i] = (double)(((long long)i * 7919) % 1000) / 1000.0 - 0.5;
    for (int huge = 0; huge <= 1; huge++) {
        tx_ctx *c = tx_new();
        ck_assert_int_eq(tx_set_option(c, TX_OPTION_HUGE_PAGES, 2), TX_ERR_ARG);
        ck_assert(strstr(tx_errmsg(c), "huge pages") != NULL);
        ck_assert_int_eq(tx_set_option(c, TX_OPTION_HUGE_PAGES, huge), TX_OK);
        tx_program *p = compile_ok(c,
                                   "dim n;\nin A[n,n];\nout C[n,n];\n"
                                   "let T(\"i,j\") = A(\"i,k\") * A(\"k,j\");\n"
                                   "C(\"i,j\") = T(\"i,k\") * A(\"k,j\") + T(\"j,i\");\n",
                                   "huge.tx");
        C[huge] = calloc(N * N, sizeof(double));
        ck_assert_ptr_nonnull(C[huge]);
        int64_t shape[2] = {N, N};
        ck_assert_int_eq(tx_bind(p, "A", A, 2, shape), TX_OK);
        ck_assert_int_eq(tx_bind(p, "C", C[huge], 2, shape), TX_OK);
        for (int run = 0; run < 2; run++)
            ck_assert_msg(tx_run(p) == TX_OK, "%s", tx_errmsg(c));
        /* the huge-pages option is that option only: it once fell through
           into TX_OPTION_BACKEND, and 1 asked for the cc tier */
        ck_assert_str_eq(tx_backend(p, NULL), "tcc");
        tx_program_free(p);
        tx_free(c);
    }
    ck_assert(memcmp(C[0], C[1], sizeof(double) * N * N) == 0);
    /* one entry by hand: C[1][2] = sum_k T[1][k] A[k][2] + T[2][1] */
    double t21 = 0, want = 0;
    for (int k = 0; k < N; k++)
        t21 += A[2 * N + k] * A[k * N + 1];
    for (int k = 0; k < N; k++) {
        double t1k = 0;
        for (int j = 0; j < N; j++)
            t1k += A[1 * N + j] * A[j * N + k];
        want += t1k * A[k * N + 2];
    }
    want += t21;
    ck_assert_msg(fabs(C[1][1 * N + 2] - want) <= 1e-9 * (1 + fabs(want)), "C[1][2] = %.17g, want %.17g",
                  C[1][1 * N + 2], want);
    free(A);
    free(C[0]);
    free(C[1]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads                                                            */

typedef struct {
    int id;
    int failures;
    char msg[512];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    tx_ctx *c = tx_new();
    if (!c) {
        w->failures++;
        return NULL;
    }
    for (int it = 0; it < 50 && w->failures == 0; it++) {
        /* each iteration compiles its own program (a different scale) */
        char src[256];
        int scale = w->id * 100 + it + 1;
        snprintf(src, sizeof src, "in A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = %d * A(\"i,k\") * B(\"k,j\");\n",
                 scale);
        tx_program *p = tx_compile(c, src, strlen(src), w->id ? "t1.tx" : "t0.tx");
        if (!p) {
            w->failures++;
            snprintf(w->msg, sizeof w->msg, "compile: %s", tx_errmsg(c));
            break;
        }
        int n = 2 + (it + w->id) % 4, k = 3 + it % 3, m = 2 + w->id;
        double A[5 * 5], B[5 * 5], C[5 * 5], W[5 * 5];
        matmul_data(n, k, m, it + 7 * w->id, A, B, W);
        int st = tx_bind(p, "A", A, 2, (const int64_t[]){n, k});
        if (st == TX_OK)
            st = tx_bind(p, "B", B, 2, (const int64_t[]){k, m});
        if (st == TX_OK)
            st = tx_bind(p, "C", C, 2, (const int64_t[]){n, m});
        if (st == TX_OK)
            st = tx_run(p);
        if (st != TX_OK) {
            w->failures++;
            snprintf(w->msg, sizeof w->msg, "iteration %d: status %d: %s", it, st, tx_errmsg(c));
        } else
            for (int i = 0; i < n * m; i++)
                if (C[i] != scale * W[i]) {
                    w->failures++;
                    snprintf(w->msg, sizeof w->msg, "iteration %d: C[%d] = %g, want %g", it, i, C[i],
                             scale * W[i]);
                    break;
                }
        tx_program_free(p);
    }
    tx_free(c);
    return NULL;
}

START_TEST(api_threads)
{
    pthread_t th[2];
    worker w[2];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 2; i++) {
        w[i].id = i;
        ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(w[i].failures == 0, "thread %d: %s", i, w[i].msg);
}
END_TEST

/* ------------------------------------------------------------------ */

int main(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("values");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, api_matmul);
    tcase_add_test(tc, api_scalar_output);
    tcase_add_test(tc, api_f32);
    tcase_add_test(tc, api_chip);
    tcase_add_test(tc, api_inout_accumulate);
    tcase_add_test(tc, api_einsum_forms);
    tcase_add_test(tc, api_empty_extent);
    tcase_add_test(tc, api_semantics);
    tcase_add_test(tc, api_blas_shapes);
    tcase_add_test(tc, api_unicode_names);
    tcase_add_test(tc, api_outputs_not_read);
    tcase_add_test(tc, api_source_not_terminated);
    tcase_add_test(tc, api_opt_levels_agree);
    suite_add_tcase(s, tc);

    tc = tcase_create("runs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, api_many_runs);
    tcase_add_test(tc, api_rebind_new_extent_recompiles);
    tcase_add_test(tc, api_rebind_matmul_new_extents);
    tcase_add_test(tc, api_set_dim);
    tcase_add_test(tc, api_two_programs_one_context);
    suite_add_tcase(s, tc);

    tc = tcase_create("introspection");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, api_tensor_info);
    tcase_add_test(tc, api_emit);
    tcase_add_test(tc, api_emit_bad_names);
    tcase_add_test(tc, api_emit_builds_and_runs);
    tcase_add_test(tc, api_emit_function_name_from_file);
    tcase_add_test(tc, api_graph);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, api_compile_errors);
    tcase_add_test(tc, api_bind_errors);
    tcase_add_test(tc, api_chip_out_of_range_at_run_time);
    tcase_add_test(tc, api_null_arguments);
    tcase_add_test(tc, api_null_shape_pointer);
    tcase_add_test(tc, api_strerror);
    tcase_add_test(tc, api_set_option);
    suite_add_tcase(s, tc);

    tc = tcase_create("threads");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, api_threads);
    tcase_add_test(tc, api_tensor_get_derived_extent);
    tcase_add_test(tc, api_huge_pages);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
