/*
 * check_sparse.c — sparse maps through the public library interface
 * (tensorexpr.h, tx(5) §7 and §8): tx_bind_sparse, tx_map_count,
 * tx_map_get, tx_map_shape, and what tx_run does with good and bad maps.
 *
 * Good maps give exactly the values of plain loops written here (the data
 * are small dyadic numbers, so every sum is exact in any order). Every bad
 * map (wrong nsrc, offsets[0] != 0, decreasing offsets, a target out of
 * range, targets not ascending or repeated, NULL pointers) makes tx_run
 * return TX_ERR_RUN with a message naming the map, writes no output, and
 * leaves the program usable. Run it once under valgrind as well:
 *     CK_FORK=no valgrind --error-exitcode=9 build/check_sparse
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorexpr.h"

/* ------------------------------------------------------------------ */
/* helpers                                                            */

static tx_program *compile_at(tx_ctx *c, const char *src, const char *file, int line)
{
    tx_program *p = tx_compile(c, src, strlen(src), file);
    ck_assert_msg(p != NULL, "line %d: compiling failed:\n%s\n--- program:\n%s", line, tx_errmsg(c), src);
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

static void bind_map_at(tx_program *p, tx_ctx *c, const char *name, const tx_sparse_map *m, int line)
{
    int st = tx_bind_sparse(p, name, m);
    ck_assert_msg(st == TX_OK, "line %d: tx_bind_sparse(%s) = %d: %s", line, name, st, tx_errmsg(c));
}
#define bind_map_ok(p, c, name, m) bind_map_at((p), (c), (name), (m), __LINE__)

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

static void same_at(const double *got, const double *want, int n, const char *what, int line)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "line %d: %s[%d] = %.17g, want %.17g", line, what, i, got[i], want[i]);
}
#define same(got, want, n) same_at((got), (want), (n), #got, __LINE__)

static void fill(double *x, int n, double v)
{
    for (int i = 0; i < n; i++)
        x[i] = v;
}

/* Small dyadic values from a seed. */
static void data(double *x, int n, int seed)
{
    for (int i = 0; i < n; i++)
        x[i] = ((double)((i * 7 + seed * 5 + 3) % 13) - 6) * 0.25;
}

/* A map in CSR form built from a dense mask (nsrc x ndst, row-major). */
typedef struct {
    int64_t offsets[4097];
    int64_t targets[4096];
    tx_sparse_map m;
} csr;

static void csr_from_mask(csr *r, const unsigned char *mask, int64_t nsrc, int64_t ndst)
{
    int64_t e = 0;
    r->offsets[0] = 0;
    for (int64_t s = 0; s < nsrc; s++) {
        for (int64_t t = 0; t < ndst; t++)
            if (mask[s * ndst + t])
                r->targets[e++] = t;
        r->offsets[s + 1] = e;
    }
    r->m.nsrc = nsrc;
    r->m.offsets = r->offsets;
    r->m.targets = r->targets;
}

/* A deterministic mask with roughly DENSITY percent of entries set. */
static void mask_make(unsigned char *mask, int n, int density, int seed)
{
    unsigned x = 2463534242u + (unsigned)seed * 7919u;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        mask[i] = (int)(x % 100) < density;
    }
}

/* ------------------------------------------------------------------ */
/* programs                                                           */

/* i -> k on a contraction over k */
static const char MM[] = "sparse L : \"i\" -> \"k\";\n"
                         "in  A[n,k], B[k,m];\n"
                         "out C[n,m];\n"
                         "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n";

enum { N = 5, K = 6, M = 4 };

/* C = sum over the k in L(i) of A(i,k) B(k,j) */
static void mm_want(const double *A, const double *B, const unsigned char *mask, double *C)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                if (mask[i * K + k])
                    s += A[i * K + k] * B[k * M + j];
            C[i * M + j] = s;
        }
}

/* ------------------------------------------------------------------ */
/* introspection                                                      */

START_TEST(sparse_map_info)
{
    tx_ctx *c = tx_new();
    const char *src = "sparse L : \"i\" -> \"k\";\n"
                      "sparse Pair : \"i,j\" -> \"a,b\";\n"
                      "in  A[n,k], B[k,m], T[n,n,v,w], U[n,n,v,w];\n"
                      "out C[n,m], E;\n"
                      "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n"
                      "E = T(\"i,j,a,b\") * U(\"i,j,a,b\");\n";
    tx_program *p = compile_ok(c, src, "info.tx");
    ck_assert_int_eq(tx_map_count(p), 2);
    ck_assert_int_eq(tx_map_count(NULL), 0);

    tx_map_info info;
    memset(&info, 0, sizeof info);
    ck_assert_int_eq(tx_map_get(p, 0, &info), TX_OK);
    ck_assert_str_eq(info.name, "L");
    ck_assert_int_eq(info.nsrc, 1);
    ck_assert_int_eq(info.ndst, 1);
    ck_assert_int_eq(tx_map_get(p, 1, &info), TX_OK);
    ck_assert_str_eq(info.name, "Pair");
    ck_assert_int_eq(info.nsrc, 2);
    ck_assert_int_eq(info.ndst, 2);
    ck_assert_int_eq(tx_map_get(p, 2, &info), TX_ERR_ARG);
    ck_assert_int_eq(tx_map_get(p, -1, &info), TX_ERR_ARG);
    ck_assert_int_eq(tx_map_get(p, 0, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_map_get(NULL, 0, &info), TX_ERR_ARG);

    /* shapes: unknown until the tensors (or dims) say */
    int64_t shape[4] = {-7, -7, -7, -7};
    ck_assert_int_eq(tx_map_shape(p, "L", shape), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'L'"), "%s", tx_errmsg(c));
    double A[3 * 4], B[4 * 2], T[3 * 3 * 5 * 6], U[3 * 3 * 5 * 6], C[3 * 2], E[1];
    bind_ok(p, c, "A", A, 2, 3, 4);
    ck_assert_int_eq(tx_map_shape(p, "L", shape), TX_OK);
    ck_assert_int_eq(shape[0], 3);
    ck_assert_int_eq(shape[1], 4);
    ck_assert_int_eq(tx_map_shape(p, "Pair", shape), TX_ERR_BIND);
    ck_assert_msg(contains(tx_errmsg(c), "'Pair'"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_set_dim(p, "v", 5), TX_OK);
    bind_ok(p, c, "T", T, 4, 3, 3, 5, 6);
    ck_assert_int_eq(tx_map_shape(p, "Pair", shape), TX_OK);
    ck_assert_int_eq(shape[0], 3);
    ck_assert_int_eq(shape[1], 3);
    ck_assert_int_eq(shape[2], 5);
    ck_assert_int_eq(shape[3], 6);
    /* bad arguments */
    ck_assert_int_eq(tx_map_shape(p, "Nope", shape), TX_ERR_ARG);
    ck_assert_msg(contains(tx_errmsg(c), "Nope"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_map_shape(p, "A", shape), TX_ERR_ARG); /* a tensor, not a map */
    ck_assert_int_eq(tx_map_shape(p, NULL, shape), TX_ERR_ARG);
    ck_assert_int_eq(tx_map_shape(p, "L", NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_map_shape(NULL, "L", shape), TX_ERR_ARG);

    /* binding: unknown names and NULLs are refused at once */
    tx_sparse_map empty = {0, NULL, NULL};
    ck_assert_int_eq(tx_bind_sparse(p, "Nope", &empty), TX_ERR_ARG);
    ck_assert_msg(contains(tx_errmsg(c), "Nope"), "%s", tx_errmsg(c));
    ck_assert_int_eq(tx_bind_sparse(p, "A", &empty), TX_ERR_ARG); /* a tensor */
    ck_assert_int_eq(tx_bind_sparse(p, "L", NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_sparse(p, NULL, &empty), TX_ERR_ARG);
    ck_assert_int_eq(tx_bind_sparse(NULL, "L", &empty), TX_ERR_ARG);
    /* a map is not a tensor */
    ck_assert_int_eq(tx_tensor_count(p), 6);
    ck_assert_int_ne(tx_bind(p, "L", A, 2, (const int64_t[]){3, 4}), TX_OK);

    /* an unbound map: tx_run refuses, naming it */
    bind_ok(p, c, "B", B, 2, 4, 2);
    bind_ok(p, c, "U", U, 4, 3, 3, 5, 6);
    bind_ok(p, c, "C", C, 2, 3, 2);
    bind_ok(p, c, "E", E, 0, 0);
    int st = tx_run(p);
    ck_assert_int_ne(st, TX_OK);
    ck_assert_msg(contains(tx_errmsg(c), "'L'") || contains(tx_errmsg(c), "'Pair'"), "%s", tx_errmsg(c));
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* good maps                                                          */

START_TEST(sparse_contract_values)
{
    for (int level = 0; level <= 2; level += 2) {
        tx_ctx *c = tx_new();
        ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, level), TX_OK);
        tx_program *p = compile_ok(c, MM, "mm.tx");
        double A[N * K], B[K * M], C[N * M], W[N * M];
        data(A, N * K, 1);
        data(B, K * M, 2);
        unsigned char mask[N * K];
        mask_make(mask, N * K, 40, level);
        for (int k = 0; k < K; k++)
            mask[2 * K + k] = 0; /* row 2: no entries */
        mask[0] = 1;
        static csr r;
        csr_from_mask(&r, mask, N, K);
        /* A entries outside the map are never read */
        for (int i = 0; i < N * K; i++)
            if (!mask[i])
                A[i] = NAN;
        bind_ok(p, c, "A", A, 2, N, K);
        bind_ok(p, c, "B", B, 2, K, M);
        bind_ok(p, c, "C", C, 2, N, M);
        bind_map_ok(p, c, "L", &r.m);
        fill(C, N * M, NAN);
        run_ok(p, c);
        mm_want(A, B, mask, W);
        same(C, W, N * M);
        tx_program_free(p);
        tx_free(c);
    }
}
END_TEST

START_TEST(sparse_free_label_values)
{
    /* "i" -> "j" on C = 2 A: unreached outputs zero, unreached A unread */
    tx_ctx *c = tx_new();
    const char *src = "sparse L : \"i\" -> \"j\";\nin A[n,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,j\") * 2;\n";
    tx_program *p = compile_ok(c, src, "free.tx");
    double A[N * M], C[N * M], W[N * M];
    data(A, N * M, 3);
    unsigned char mask[N * M];
    mask_make(mask, N * M, 50, 7);
    static csr r;
    csr_from_mask(&r, mask, N, M);
    for (int i = 0; i < N * M; i++) {
        W[i] = mask[i] ? 2 * A[i] : 0.0;
        if (!mask[i])
            A[i] = NAN;
    }
    bind_ok(p, c, "A", A, 2, N, M);
    bind_ok(p, c, "C", C, 2, N, M);
    bind_map_ok(p, c, "L", &r.m);
    fill(C, N * M, NAN);
    run_ok(p, c);
    same(C, W, N * M);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_pair_values)
{
    /* the pair map "i,j" -> "a,b": e(i,j) = sum over its (a,b) of T K, and E */
    enum { O = 3, V = 4 };
    tx_ctx *c = tx_new();
    const char *src = "sparse P : \"i,j\" -> \"a,b\";\n"
                      "in  T[o,o,v,v], K[o,o,v,v];\n"
                      "out e[o,o], E;\n"
                      "e(\"i,j\") = T(\"i,j,a,b\") * K(\"i,j,b,a\");\n"
                      "E = T(\"i,j,a,b\") * K(\"i,j,a,b\");\n";
    tx_program *p = compile_ok(c, src, "pair.tx");
    double T[O * O * V * V], Kt[O * O * V * V], e[O * O], E[1], We[O * O], WE = 0;
    data(T, O * O * V * V, 4);
    data(Kt, O * O * V * V, 5);
    unsigned char mask[O * O * V * V];
    mask_make(mask, O * O * V * V, 30, 11);
    static csr r;
    csr_from_mask(&r, mask, O * O, V * V);
    for (int ij = 0; ij < O * O; ij++) {
        double s = 0;
        for (int a = 0; a < V; a++)
            for (int b = 0; b < V; b++)
                if (mask[ij * V * V + a * V + b]) {
                    s += T[ij * V * V + a * V + b] * Kt[ij * V * V + b * V + a];
                    WE += T[ij * V * V + a * V + b] * Kt[ij * V * V + a * V + b];
                }
        We[ij] = s;
    }
    for (int i = 0; i < O * O * V * V; i++)
        if (!mask[i])
            T[i] = NAN;
    bind_ok(p, c, "T", T, 4, O, O, V, V);
    bind_ok(p, c, "K", Kt, 4, O, O, V, V);
    bind_ok(p, c, "e", e, 2, O, O);
    bind_ok(p, c, "E", E, 0, 0);
    int64_t shape[4];
    ck_assert_int_eq(tx_map_shape(p, "P", shape), TX_OK);
    ck_assert(shape[0] == O && shape[1] == O && shape[2] == V && shape[3] == V);
    bind_map_ok(p, c, "P", &r.m);
    fill(e, O * O, NAN);
    E[0] = NAN;
    run_ok(p, c);
    same(e, We, O * O);
    same(E, &WE, 1);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_rebind_changes_result)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MM, "mm.tx");
    double A[N * K], B[K * M], C[N * M], W1[N * M], W2[N * M];
    data(A, N * K, 6);
    data(B, K * M, 7);
    unsigned char m1[N * K], m2[N * K];
    mask_make(m1, N * K, 30, 1);
    mask_make(m2, N * K, 70, 2);
    static csr r1, r2;
    csr_from_mask(&r1, m1, N, K);
    csr_from_mask(&r2, m2, N, K);
    mm_want(A, B, m1, W1);
    mm_want(A, B, m2, W2);
    ck_assert_msg(memcmp(W1, W2, sizeof W1) != 0, "the two maps should give different results");
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "C", C, 2, N, M);
    bind_map_ok(p, c, "L", &r1.m);
    run_ok(p, c);
    same(C, W1, N * M);
    bind_map_ok(p, c, "L", &r2.m);
    run_ok(p, c);
    same(C, W2, N * M);
    bind_map_ok(p, c, "L", &r1.m);
    run_ok(p, c);
    same(C, W1, N * M);
    /* the map stays caller-owned: new contents are seen by the next run */
    csr_from_mask(&r1, m2, N, K);
    run_ok(p, c);
    same(C, W2, N * M);
    /* a bad map between good runs: refused, then the good one works again */
    static csr bad;
    bad = r2;
    bad.m.offsets = bad.offsets;
    bad.m.targets = bad.targets;
    bad.m.nsrc = N + 1;
    bind_map_ok(p, c, "L", &bad.m);
    fill(C, N * M, -3);
    ck_assert_int_eq(tx_run(p), TX_ERR_RUN);
    for (int i = 0; i < N * M; i++)
        ck_assert(C[i] == -3);
    bind_map_ok(p, c, "L", &r2.m);
    run_ok(p, c);
    same(C, W2, N * M);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_new_extents)
{
    /* new extents: recompiled, and the map must fit the new source count */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MM, "mm.tx");
    enum { N2 = 7, K2 = 3, M2 = 2 };
    double A[N2 * K2], B[K2 * M2], C[N2 * M2], W[N2 * M2];
    data(A, N2 * K2, 8);
    data(B, K2 * M2, 9);
    unsigned char mask[N2 * K2];
    mask_make(mask, N2 * K2, 50, 3);
    static csr r;
    csr_from_mask(&r, mask, N2, K2);
    /* first at the old extents: the map has 7 sources, not 5 */
    double A5[N * K], B5[K * M], C5[N * M];
    data(A5, N * K, 1);
    data(B5, K * M, 1);
    bind_ok(p, c, "A", A5, 2, N, K);
    bind_ok(p, c, "B", B5, 2, K, M);
    bind_ok(p, c, "C", C5, 2, N, M);
    bind_map_ok(p, c, "L", &r.m);
    ck_assert_int_eq(tx_run(p), TX_ERR_RUN);
    ck_assert_msg(contains(tx_errmsg(c), "'L'"), "%s", tx_errmsg(c));
    bind_ok(p, c, "A", A, 2, N2, K2);
    bind_ok(p, c, "B", B, 2, K2, M2);
    bind_ok(p, c, "C", C, 2, N2, M2);
    run_ok(p, c);
    for (int i = 0; i < N2; i++)
        for (int j = 0; j < M2; j++) {
            double s = 0;
            for (int k = 0; k < K2; k++)
                if (mask[i * K2 + k])
                    s += A[i * K2 + k] * B[k * M2 + j];
            W[i * M2 + j] = s;
        }
    same(C, W, N2 * M2);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_empty_maps)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MM, "mm.tx");
    double A[N * K], B[K * M], C[N * M], Z[N * M] = {0};
    fill(A, N * K, NAN);
    data(B, K * M, 2);
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "C", C, 2, N, M);
    /* no entries; targets may then be NULL */
    int64_t off[N + 1] = {0};
    tx_sparse_map e1 = {N, off, NULL};
    bind_map_ok(p, c, "L", &e1);
    fill(C, N * M, NAN);
    run_ok(p, c);
    same(C, Z, N * M);
    int64_t tg[1] = {0};
    tx_sparse_map e2 = {N, off, tg};
    bind_map_ok(p, c, "L", &e2);
    fill(C, N * M, NAN);
    run_ok(p, c);
    same(C, Z, N * M);
    tx_program_free(p);

    /* zero extents: no sources at all (offsets = {0}) */
    p = compile_ok(c, MM, "mm.tx");
    double dummy[1];
    bind_ok(p, c, "A", dummy, 2, 0, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "C", dummy, 2, 0, M);
    tx_sparse_map e3 = {0, off, NULL};
    bind_map_ok(p, c, "L", &e3);
    run_ok(p, c);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* bad maps                                                           */

/* Binds M as map NAME of P (other bindings done), runs, and expects
   TX_ERR_RUN naming the map, with OUT (n doubles) untouched. */
static void bad_at(tx_program *p, tx_ctx *c, const char *name, const tx_sparse_map *m, double *out, int n,
                   const char *what, int line)
{
    ck_assert_msg(tx_bind_sparse(p, name, m) == TX_OK, "line %d (%s): tx_bind_sparse refused: %s", line, what,
                  tx_errmsg(c));
    fill(out, n, -5.5);
    int st = tx_run(p);
    ck_assert_msg(st == TX_ERR_RUN, "line %d (%s): tx_run = %d, want TX_ERR_RUN (%d): %s", line, what, st,
                  TX_ERR_RUN, tx_errmsg(c));
    char want[64];
    snprintf(want, sizeof want, "'%s'", name);
    ck_assert_msg(contains(tx_errmsg(c), want), "line %d (%s): message does not name %s: %s", line, what, want,
                  tx_errmsg(c));
    for (int i = 0; i < n; i++)
        ck_assert_msg(out[i] == -5.5, "line %d (%s): output [%d] was written (%g)", line, what, i, out[i]);
}
#define bad(p, c, name, m, out, n, what) bad_at((p), (c), (name), (m), (out), (n), (what), __LINE__)

START_TEST(sparse_bad_maps_one_to_one)
{
    /* L : "i" -> "k", nsrc = N = 5, targets in [0, K = 6) */
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MM, "mm.tx");
    double A[N * K], B[K * M], C[N * M];
    data(A, N * K, 1);
    data(B, K * M, 2);
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "C", C, 2, N, M);

    /* a good map to start from: row s has targets {s, s+1} */
    int64_t off[N + 1] = {0, 2, 4, 6, 8, 10};
    int64_t tg[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 5};
    tx_sparse_map good = {N, off, tg};
    bind_map_ok(p, c, "L", &good);
    run_ok(p, c);

    tx_sparse_map m;
    m = good, m.nsrc = N - 1;
    bad(p, c, "L", &m, C, N * M, "nsrc too small");
    m = good, m.nsrc = N + 1;
    bad(p, c, "L", &m, C, N * M, "nsrc too large");
    m = good, m.nsrc = 0;
    bad(p, c, "L", &m, C, N * M, "nsrc 0");
    m = good, m.nsrc = -1;
    bad(p, c, "L", &m, C, N * M, "nsrc negative");
    m = good, m.nsrc = INT64_MAX;
    bad(p, c, "L", &m, C, N * M, "nsrc huge");

    int64_t o1[N + 1] = {1, 2, 4, 6, 8, 10};
    m = good, m.offsets = o1;
    bad(p, c, "L", &m, C, N * M, "offsets[0] = 1");
    int64_t o2[N + 1] = {-2, 2, 4, 6, 8, 10};
    m = good, m.offsets = o2;
    bad(p, c, "L", &m, C, N * M, "offsets[0] negative");
    int64_t o3[N + 1] = {0, 2, 4, 3, 8, 10};
    m = good, m.offsets = o3;
    bad(p, c, "L", &m, C, N * M, "decreasing offsets");
    int64_t o4[N + 1] = {0, 2, 4, 6, 8, 7};
    m = good, m.offsets = o4;
    bad(p, c, "L", &m, C, N * M, "decreasing last offset");
    int64_t o5[N + 1] = {0, 2, 4, 6, 8, -1};
    m = good, m.offsets = o5;
    bad(p, c, "L", &m, C, N * M, "negative last offset");

    int64_t t1[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 6};
    m = good, m.targets = t1;
    bad(p, c, "L", &m, C, N * M, "target == extent");
    int64_t t2[10] = {-1, 1, 1, 2, 2, 3, 3, 4, 4, 5};
    m = good, m.targets = t2;
    bad(p, c, "L", &m, C, N * M, "negative target");
    int64_t t3[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, INT64_MAX};
    m = good, m.targets = t3;
    bad(p, c, "L", &m, C, N * M, "huge target");
    int64_t t4[10] = {0, 1, 2, 1, 2, 3, 3, 4, 4, 5};
    m = good, m.targets = t4;
    bad(p, c, "L", &m, C, N * M, "targets descending");
    int64_t t5[10] = {0, 1, 1, 2, 3, 3, 3, 4, 4, 5};
    m = good, m.targets = t5;
    bad(p, c, "L", &m, C, N * M, "duplicate targets");

    m = good, m.offsets = NULL;
    bad(p, c, "L", &m, C, N * M, "NULL offsets");
    m = good, m.targets = NULL;
    bad(p, c, "L", &m, C, N * M, "NULL targets with entries");
    m = good, m.offsets = NULL, m.targets = NULL;
    bad(p, c, "L", &m, C, N * M, "NULL offsets and targets");

    /* after all that, the program still runs with a good map */
    bind_map_ok(p, c, "L", &good);
    run_ok(p, c);
    double W[N * M];
    unsigned char mask[N * K] = {0};
    for (int s = 0; s < N; s++)
        for (int64_t e = off[s]; e < off[s + 1]; e++)
            mask[s * K + tg[e]] = 1;
    mm_want(A, B, mask, W);
    same(C, W, N * M);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_bad_maps_pair)
{
    /* P : "i,j" -> "a,b": nsrc = O*O = 4, targets in [0, V*V = 9) */
    enum { O = 2, V = 3 };
    tx_ctx *c = tx_new();
    const char *src = "sparse P : \"i,j\" -> \"a,b\";\n"
                      "in  T[o,o,v,v], K[o,o,v,v];\n"
                      "out e[o,o];\n"
                      "e(\"i,j\") = T(\"i,j,a,b\") * K(\"i,j,b,a\");\n";
    tx_program *p = compile_ok(c, src, "pair.tx");
    double T[O * O * V * V], Kt[O * O * V * V], e[O * O];
    data(T, O * O * V * V, 1);
    data(Kt, O * O * V * V, 2);
    bind_ok(p, c, "T", T, 4, O, O, V, V);
    bind_ok(p, c, "K", Kt, 4, O, O, V, V);
    bind_ok(p, c, "e", e, 2, O, O);
    int64_t off[O * O + 1] = {0, 2, 3, 3, 5};
    int64_t tg[5] = {0, 8, 4, 1, 7};
    tx_sparse_map good = {O * O, off, tg};
    bind_map_ok(p, c, "P", &good);
    run_ok(p, c);
    double W[O * O];
    for (int ij = 0; ij < O * O; ij++) {
        double s = 0;
        for (int64_t x = off[ij]; x < off[ij + 1]; x++) {
            int a = (int)(tg[x] / V), b = (int)(tg[x] % V);
            s += T[ij * V * V + a * V + b] * Kt[ij * V * V + b * V + a];
        }
        W[ij] = s;
    }
    same(e, W, O * O);

    tx_sparse_map m;
    m = good, m.nsrc = O; /* the number of i values, not of (i,j) pairs */
    bad(p, c, "P", &m, e, O * O, "nsrc = o");
    int64_t t1[5] = {0, 9, 4, 1, 7}; /* a = 3 */
    m = good, m.targets = t1;
    bad(p, c, "P", &m, e, O * O, "target tuple out of range");
    int64_t t2[5] = {0, 8, 4, 7, 1};
    m = good, m.targets = t2;
    bad(p, c, "P", &m, e, O * O, "target tuples not ascending");
    int64_t o1[O * O + 1] = {0, 2, 3, 3, 6}; /* one entry past the source */
    int64_t t3[6] = {0, 8, 4, 1, 7, 7};
    m = good, m.offsets = o1, m.targets = t3;
    bad(p, c, "P", &m, e, O * O, "repeated target tuple");
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_bad_map_names_the_right_one)
{
    /* two maps, one membership-style ("j" -> "i"), one good: the message
       names the bad one */
    tx_ctx *c = tx_new();
    const char *src = "sparse Good : \"i\" -> \"k\";\n"
                      "sparse Memb : \"j\" -> \"i\";\n"
                      "in  A[n,k], B[k,m];\n"
                      "out C[n,m];\n"
                      "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n";
    tx_program *p = compile_ok(c, src, "two.tx");
    double A[N * K], B[K * M], C[N * M], W[N * M];
    data(A, N * K, 3);
    data(B, K * M, 4);
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "C", C, 2, N, M);
    unsigned char mg[N * K], mm[M * N];
    mask_make(mg, N * K, 60, 5);
    mask_make(mm, M * N, 50, 6);
    static csr rg, rm;
    csr_from_mask(&rg, mg, N, K);
    csr_from_mask(&rm, mm, M, N);
    bind_map_ok(p, c, "Good", &rg.m);
    bind_map_ok(p, c, "Memb", &rm.m);
    fill(C, N * M, NAN);
    run_ok(p, c);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            if (mm[j * N + i])
                for (int k = 0; k < K; k++)
                    if (mg[i * K + k])
                        s += A[i * K + k] * B[k * M + j];
            W[i * M + j] = s;
        }
    same(C, W, N * M);

    /* the membership map's targets out of range (i < N) */
    int64_t off[M + 1] = {0, 1, 1, 1, 1};
    int64_t tg[1] = {N};
    tx_sparse_map m = {M, off, tg};
    bad(p, c, "Memb", &m, C, N * M, "membership map target out of range");
    ck_assert_msg(!contains(tx_errmsg(c), "'Good'"), "%s", tx_errmsg(c));
    tx_sparse_map m2 = {N, off, tg}; /* nsrc: sources of Memb are j (M of them) */
    bad(p, c, "Memb", &m2, C, N * M, "membership map nsrc");
    /* a good Memb and a bad Good */
    bind_map_ok(p, c, "Memb", &rm.m);
    tx_sparse_map g = rg.m;
    g.nsrc = K;
    bad(p, c, "Good", &g, C, N * M, "first map bad");
    ck_assert_msg(!contains(tx_errmsg(c), "'Memb'"), "%s", tx_errmsg(c));
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(sparse_unbound_map)
{
    tx_ctx *c = tx_new();
    tx_program *p = compile_ok(c, MM, "mm.tx");
    double A[N * K], B[K * M], C[N * M];
    data(A, N * K, 1);
    data(B, K * M, 2);
    bind_ok(p, c, "A", A, 2, N, K);
    bind_ok(p, c, "B", B, 2, K, M);
    bind_ok(p, c, "C", C, 2, N, M);
    fill(C, N * M, 9);
    int st = tx_run(p);
    ck_assert_msg(st == TX_ERR_BIND || st == TX_ERR_RUN, "tx_run = %d", st);
    ck_assert_msg(contains(tx_errmsg(c), "'L'"), "%s", tx_errmsg(c));
    for (int i = 0; i < N * M; i++)
        ck_assert(C[i] == 9);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* ------------------------------------------------------------------ */

int main(void)
{
    Suite *s = suite_create("sparse maps");
    TCase *tc = tcase_create("info");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sparse_map_info);
    suite_add_tcase(s, tc);

    tc = tcase_create("values");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sparse_contract_values);
    tcase_add_test(tc, sparse_free_label_values);
    tcase_add_test(tc, sparse_pair_values);
    tcase_add_test(tc, sparse_rebind_changes_result);
    tcase_add_test(tc, sparse_new_extents);
    tcase_add_test(tc, sparse_empty_maps);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad maps");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sparse_bad_maps_one_to_one);
    tcase_add_test(tc, sparse_bad_maps_pair);
    tcase_add_test(tc, sparse_bad_map_names_the_right_one);
    tcase_add_test(tc, sparse_unbound_map);
    suite_add_tcase(s, tc);

    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
