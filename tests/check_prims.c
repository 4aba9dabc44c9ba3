/*
 * check_prims.c - the inner-loop primitives (runtime/prims.inc) as the
 * library runs them: every PRIM symbol of the table tx_runtime_symbols
 * (runtime/symbols.def), called through the address the JIT registers,
 * so through the clone the CPU picked (tx_rt_isa()), against scalar
 * references written here.
 *
 *   - every PRIM symbol has a test here (a new one fails until it has);
 *   - loads, stores, arithmetic, integer powers, sqrt, abs, max and min:
 *     the same bits as the reference, for lengths 0, 1, 3, ..., 255, 256,
 *     1000, with nothing read or written past the block (it ends at a page
 *     that may not be touched);
 *   - sum and product: the same bits as the reference's fixed association
 *     (16 lanes, folded by halves); max and min: the same bits as a
 *     sequential maximum under the total order -0 < +0, a NaN winning
 *     (acc if it is one, else the block's first);
 *   - exp, log, sin, cos and tanh (glibc's libmvec in the library, SLEEF's
 *     outside libmvec's fast domains) and pow (SLEEF's): within 4 ULP of a
 *     long double reference (the bound glibc tests libmvec to) and within
 *     5 ULP of glibc's scalar result;
 *     special arguments (NaN, +-inf, +-0, huge, tiny) give what glibc
 *     gives in kind (NaN, +-inf, +-0, finite and its sign); an element's
 *     result does not depend on where it sits in the block;
 *   - exp and tanh at x86-64-v4 the same bits as vmath.inc's AVX2 forms;
 *   - the same tests on prims.inc compiled for x86-64-v4, x86-64-v3 and
 *     baseline x86-64 (tests/prims_isa.c), where the CPU can run them: the
 *     three clones compute the same bits.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <float.h>
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prims_isa.h"
#include "runtime.h"
#include "complex.inc" /* tx_c_div's TX_C_DIV_PARTS, the reference of tx_p_cdiv */
#include "tensorexpr.h" /* tx_sparse_map */

/* ---- the primitives' types (as in symbols.def) ---- */
typedef void load_f64_fn(int64_t, const double *, int64_t, double *);
typedef void load_f32_fn(int64_t, const float *, int64_t, double *);
typedef void fill_fn(int64_t, double, double *);
typedef void store_f64_fn(int64_t, const double *, double *, int64_t, int);
typedef void store_f32_fn(int64_t, const double *, float *, int64_t, int);
typedef void axpby_fn(int64_t, double, const double *, double, const double *, double *);
typedef void scale_add_fn(int64_t, double, const double *, double, double *);
typedef void binary_fn(int64_t, const double *, const double *, double *);
typedef void recip_fn(int64_t, double, const double *, double *);
typedef void scalar_fn(int64_t, const double *, double, double *);
typedef void mul_acc_fn(int64_t, const double *, const double *, double, double *);
typedef void add_rows_fn(int64_t, int64_t, const double *, int64_t, double *);
typedef void mul_acc_rows_fn(int64_t, int64_t, const double *, int64_t, const double *, int64_t, double *);
typedef void pow_fn(int64_t, const double *, double, double *);
typedef void map_fn(int64_t, int, const double *, double *);
typedef double sum_fn(int64_t, const double *);
typedef double red_fn(int64_t, const double *, double);
typedef double redf_fn(int64_t, const float *, double);
typedef double chunked_fn(red_fn *, int64_t, const double *, double);
typedef double chunkedf_fn(redf_fn *, red_fn *, int64_t, const float *, double);
typedef int map_check_fn(const tx_sparse_map *, int64_t, int64_t);
typedef int map_has_fn(const tx_sparse_map *, int64_t, int64_t);
typedef void zero_fn(void *, int64_t);
typedef struct { double re, im; } cpair; /* tx_c128 */
typedef cpair cfun_fn(cpair);
typedef cpair cpow_fn(cpair, double);
typedef double cabs_fn(cpair);
typedef void pf_load_fn(int64_t, const float *, int64_t, float *);
typedef void pf_bin_fn(int64_t, int, const float *, int64_t, const float *, int64_t, float *);
typedef void pf_map_fn(int64_t, int, const float *, float *);
typedef void pf_store_fn(int64_t, const float *, float *, int64_t);
typedef void map_aff_fn(int64_t, int, double, const double *, double, const double *, double, double *);
typedef void mul_aff_fn(int64_t, int, const double *, double, const double *, double, const double *, double, double *);
typedef void mul_add_fn(int64_t, const double *, const double *, double, const double *, double, double *);
typedef void mul_aff_add_fn(int64_t, int, const double *, int, double, double, const double *, double, const double *,
                            double, double, const double *, double, double *);
typedef void div_aff_fn(int64_t, const double *, double, double, const double *, double, const double *, double,
                        double *);
typedef void cmps_fn(int64_t, int, const double *, double, double *);
typedef void where_s_fn(int64_t, const double *, const double *, double, const double *, double, double *);
typedef void where_cmps_fn(int64_t, int, const double *, double, const double *, double, const double *, double,
                           double *);
typedef void minmax_s_fn(int64_t, const double *, double, int, double *);
typedef void sq_aff_fn(int64_t, double, const double *, double, const double *, double, double *);
typedef double red_sq_aff_fn(int64_t, double, const double *, double, const double *, double, int, double, double);
typedef void pf_map_bin_fn(int64_t, int, int, const float *, const float *, float, float *);
typedef void addf_rows_fn(int64_t, int64_t, const float *, int64_t, float *);
typedef void tile_f64_fn(int64_t, int64_t, const double *, int64_t, int64_t, double *, int64_t, int);
typedef void tile_f32_fn(int64_t, int64_t, const float *, int64_t, int64_t, float *, int64_t, int);
typedef void cmp_fn(int64_t, int, const double *, const double *, double *);
typedef void where_fn(int64_t, const double *, const double *, const double *, double *);

/* ---- the sets of primitives under test ---- */
enum { SET_LIBRARY, SET_V4, SET_V3, SET_V1, NSETS };
static const char *const set_names[NSETS] = {"library", "x86-64-v4", "x86-64-v3", "x86-64"};

/* Can this CPU run set S? */
static int set_runs(int s)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    __builtin_cpu_init();
    if (s == SET_V4)
        return prims_isa_v4[0].name && __builtin_cpu_supports("x86-64-v4");
    if (s == SET_V3)
        return prims_isa_v3[0].name && __builtin_cpu_supports("x86-64-v3");
    if (s == SET_V1)
        return prims_isa_v1[0].name != NULL;
    return 1;
#else
    return s == SET_LIBRARY;
#endif
}

/* The address of primitive NAME in set S (fails the test if missing). */
static const void *prim(int s, const char *name)
{
    if (s == SET_LIBRARY) {
        for (const tx_runtime_symbol *e = tx_runtime_symbols; e->name; e++)
            if (e->group == TXS_PRIM && strcmp(e->name, name) == 0)
                return e->addr;
    } else {
        const prims_isa_entry *t = s == SET_V4 ? prims_isa_v4 : s == SET_V3 ? prims_isa_v3 : prims_isa_v1;
        for (; t->name; t++)
            if (strcmp(t->name, name) == 0)
                return t->addr;
    }
    ck_abort_msg("%s: no primitive %s", set_names[s], name);
    return NULL;
}

/* Returns from a test on a set this CPU cannot run. */
#define SKIP_UNLESS_RUNS(s)                                                                  \
    do {                                                                                     \
        if (!set_runs(s)) {                                                                  \
            printf("check_prims: %s: not run (the CPU lacks it)\n", set_names[s]);          \
            return;                                                                          \
        }                                                                                    \
    } while (0)

/* ---- blocks that end where memory ends: a read or write past the end
   faults (Check reports the signal) ---- */
enum { GUARD_PAGES = 10 };
typedef struct {
    unsigned char *base;
    size_t len;
} guarded;

static guarded guard_new(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    guarded g;
    g.len = (size_t)pg * (GUARD_PAGES + 1);
    g.base = mmap(NULL, g.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_msg(g.base != MAP_FAILED, "mmap");
    ck_assert_int_eq(mprotect(g.base + (size_t)pg * GUARD_PAGES, (size_t)pg, PROT_NONE), 0);
    return g;
}

static void guard_free(guarded g)
{
    munmap(g.base, g.len);
}

/* room for N elements of SIZE bytes ending at the protected page */
static void *guard_end(guarded g, int64_t n, size_t size)
{
    long pg = sysconf(_SC_PAGESIZE);
    ck_assert_msg((size_t)n * size <= (size_t)pg * GUARD_PAGES, "block too large");
    return g.base + (size_t)pg * GUARD_PAGES - (size_t)n * size;
}

/* ---- data ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double u01(void)
{
    return (double)(rng() >> 11) * 0x1p-53;
}

static double nan_with(uint64_t payload, int negative)
{
    uint64_t b = 0x7ff8000000000000ULL | (payload & 0x0007ffffffffffffULL) | (negative ? 1ULL << 63 : 0);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* random doubles of many magnitudes and both signs; with SPECIAL, also
   NaNs (several payloads), infinities and zeros of both signs */
static void fill_random(double *x, int64_t n, int special)
{
    for (int64_t i = 0; i < n; i++) {
        x[i] = ldexp(2 * u01() - 1, (int)(rng() % 41) - 20);
        if (special && rng() % 8 == 0) {
            static const double sp[] = {INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0};
            unsigned k = (unsigned)(rng() % 8);
            x[i] = k < 6 ? sp[k] : nan_with(rng(), k == 7);
        }
    }
}

static const int64_t lengths[] = {0, 1, 3, 7, 8, 15, 16, 17, 33, 255, 256, 1000};
enum { NLEN = sizeof lengths / sizeof lengths[0], MAXN = 1000 };

/* the same double: equal bits, or both NaN */
static int same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}
/* the same bits, NaN payloads included */
static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

#define CHECK_SAME(got, want, ...)                                                           \
    ck_assert_msg(same(got, want), __VA_ARGS__)

/* ---- every PRIM symbol is tested here ---- */
static const char *const tested[] = {
    "tx_p_load_f64", "tx_p_load_f32", "tx_p_fill", "tx_p_store_f64", "tx_p_store_f32",
    "tx_p_axpby", "tx_p_scale_add", "tx_p_mul", "tx_p_mul_acc", "tx_p_add_rows", "tx_p_mul_acc_rows", "tx_p_div", "tx_p_recip", "tx_p_pow",
    "tx_p_map", "tx_p_max", "tx_p_min", "tx_p_sum", "tx_p_red_sum", "tx_p_red_prod",
    "tx_p_red_max", "tx_p_red_min", "tx_rt_map_check", "tx_rt_map_has", "tx_rt_zero",
    "tx_p_cexp", "tx_p_clog", "tx_p_csqrt", "tx_p_csin", "tx_p_ccos", "tx_p_ctanh", "tx_p_cpow", "tx_p_cabs",
    "tx_p_muls", "tx_p_divs", "tx_p_map_f32", "tx_p_red_chunked", "tx_p_redf_chunked", "tx_p_red_sq_aff_rows",
    "tx_pf_load", "tx_pf_bin", "tx_pf_map", "tx_pf_store", "tx_p_cmp", "tx_p_where",
    "tx_p_divr", "tx_p_divrf", "tx_p_redf_sum", "tx_p_redf_prod", "tx_p_redf_max", "tx_p_redf_min",
    "tx_p_tile_f64", "tx_pf_tile", "tx_p_tile_next_f64", "tx_p_addf_rows", "tx_p_max_rows", "tx_p_min_rows", "tx_p_maxf_rows", "tx_p_minf_rows", "tx_p_scan", "tx_p_scanf", "tx_p_red_rows", "tx_p_redf_rows", "tx_p_map_aff", "tx_pf_map_bin",
    "tx_p_mul_aff", "tx_p_sq_aff", "tx_p_red_sq_aff", "tx_p_mul_add", "tx_p_mul_aff_add", "tx_p_maxs", "tx_p_mins", "tx_p_div_aff", "tx_p_cmps", "tx_p_where_s", "tx_p_where_cmps",
    "tx_p_mul_aff_f32", "tx_p_sq_aff_f32", "tx_p_div_aff_f32", "tx_p_mul_add_f32", "tx_p_mul_aff_add_f32",
    "tx_p_red_sq_aff_f32", "tx_p_stream_f64", "tx_pf_stream", "tx_p_stream_fence", "tx_p_nt_note",
    "tx_p_spread_rows", "tx_p_repeat_rows", "tx_p_copy_rows_f64", "tx_pf_copy_rows",
    "tx_p_cmul", "tx_p_cdiv", "tx_p_cmap", "tx_p_cconj", "tx_p_cfill", "tx_p_cload", "tx_p_cloadf", "tx_p_cfrom", "tx_p_cfromf",
};


/* ---- loads and stores ---- */
START_TEST(loads_and_fill)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    load_f64_fn *ld = (load_f64_fn *)prim(s, "tx_p_load_f64");
    load_f32_fn *ldf = (load_f32_fn *)prim(s, "tx_p_load_f32");
    fill_fn *fill = (fill_fn *)prim(s, "tx_p_fill");
    guarded gs = guard_new(), gd = guard_new();
    static const int64_t incs[] = {1, 0, 3};
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        for (int k = 0; k < 3; k++) {
            int64_t inc = incs[k], span = n == 0 ? 0 : (n - 1) * inc + 1;
            double *src = guard_end(gs, span, sizeof(double)), *d = guard_end(gd, n, sizeof(double));
            fill_random(src, span, 1);
            ld(n, src, inc, d);
            for (int64_t i = 0; i < n; i++)
                ck_assert_msg(same_bits(d[i], src[i * inc]), "%s load_f64 n=%ld inc=%ld [%ld]", set_names[s],
                              (long)n, (long)inc, (long)i);
            float *sf = guard_end(gs, span, sizeof(float));
            for (int64_t i = 0; i < span; i++)
                sf[i] = (float)ldexp(2 * u01() - 1, (int)(rng() % 21) - 10);
            ldf(n, sf, inc, d);
            for (int64_t i = 0; i < n; i++)
                ck_assert_msg(same_bits(d[i], (double)sf[i * inc]), "%s load_f32 n=%ld inc=%ld [%ld]",
                              set_names[s], (long)n, (long)inc, (long)i);
        }
        double *d = guard_end(gd, n, sizeof(double));
        fill(n, -0.0, d);
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(same_bits(d[i], -0.0), "%s fill n=%ld", set_names[s], (long)n);
    }
    guard_free(gs);
    guard_free(gd);
}
END_TEST

START_TEST(stores)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    store_f64_fn *st = (store_f64_fn *)prim(s, "tx_p_store_f64");
    store_f32_fn *stf = (store_f32_fn *)prim(s, "tx_p_store_f32");
    guarded gs = guard_new(), gt = guard_new();
    static double before[4 * MAXN];
    static float beforef[4 * MAXN];
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        double *src = guard_end(gs, n, sizeof(double));
        fill_random(src, n, 0);
        for (int64_t inc = 1; inc <= 2; inc++) {
            int64_t span = n == 0 ? 0 : (n - 1) * inc + 1;
            for (int op = 0; op < 3; op++) {
                double *t = guard_end(gt, span, sizeof(double));
                fill_random(t, span, 0);
                memcpy(before, t, (size_t)span * sizeof(double));
                st(n, src, t, inc, op);
                for (int64_t i = 0; i < span; i++) {
                    double want = before[i];
                    if (i % inc == 0)
                        want = op == 0 ? src[i / inc] : op == 1 ? before[i] + src[i / inc] : before[i] - src[i / inc];
                    ck_assert_msg(same_bits(t[i], want), "%s store_f64 n=%ld inc=%ld op=%d [%ld]", set_names[s],
                                  (long)n, (long)inc, op, (long)i);
                }
                float *tf = guard_end(gt, span, sizeof(float));
                for (int64_t i = 0; i < span; i++)
                    tf[i] = beforef[i] = (float)(2 * u01() - 1);
                stf(n, src, tf, inc, op);
                for (int64_t i = 0; i < span; i++) {
                    float want = beforef[i];
                    if (i % inc == 0)
                        want = op == 0 ? (float)src[i / inc]
                               : op == 1 ? (float)(beforef[i] + src[i / inc])
                                         : (float)(beforef[i] - src[i / inc]);
                    ck_assert_msg(memcmp(&tf[i], &want, sizeof want) == 0, "%s store_f32 n=%ld inc=%ld op=%d [%ld]",
                                  set_names[s], (long)n, (long)inc, op, (long)i);
                }
            }
        }
    }
    guard_free(gs);
    guard_free(gt);
}
END_TEST

/* ---- elementwise arithmetic ---- */
START_TEST(arithmetic)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    axpby_fn *axpby = (axpby_fn *)prim(s, "tx_p_axpby");
    scale_add_fn *scale_add = (scale_add_fn *)prim(s, "tx_p_scale_add");
    binary_fn *mul = (binary_fn *)prim(s, "tx_p_mul");
    mul_acc_fn *mul_acc = (mul_acc_fn *)prim(s, "tx_p_mul_acc");
    add_rows_fn *add_rows = (add_rows_fn *)prim(s, "tx_p_add_rows");
    mul_acc_rows_fn *mul_acc_rows = (mul_acc_rows_fn *)prim(s, "tx_p_mul_acc_rows");
    binary_fn *dv = (binary_fn *)prim(s, "tx_p_div");
    binary_fn *mx = (binary_fn *)prim(s, "tx_p_max");
    binary_fn *mn = (binary_fn *)prim(s, "tx_p_min");
    recip_fn *recip = (recip_fn *)prim(s, "tx_p_recip");
    scalar_fn *muls = (scalar_fn *)prim(s, "tx_p_muls");
    scalar_fn *divs = (scalar_fn *)prim(s, "tx_p_divs");
    scalar_fn *divr = (scalar_fn *)prim(s, "tx_p_divr");
    scalar_fn *divrf = (scalar_fn *)prim(s, "tx_p_divrf");
    guarded gx = guard_new(), gy = guard_new(), gd = guard_new();
    static const double ab[][2] = {{1, 1}, {1, -1}, {2.5, -0.75}, {0, 1}, {-3, 0.1}};
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        double *x = guard_end(gx, n, sizeof(double)), *y = guard_end(gy, n, sizeof(double));
        double *d = guard_end(gd, n, sizeof(double));
        fill_random(x, n, 1);
        fill_random(y, n, 1);
        for (int k = 0; k < 5; k++) {
            double a = ab[k][0], b = ab[k][1];
            axpby(n, a, x, b, y, d);
            for (int64_t i = 0; i < n; i++) {
                double want = a == 1 && b == 1 ? x[i] + y[i] : a == 1 && b == -1 ? x[i] - y[i] : a * x[i] + b * y[i];
                CHECK_SAME(d[i], want, "%s axpby(%g, %g) n=%ld [%ld]: %a, want %a", set_names[s], a, b, (long)n,
                           (long)i, d[i], want);
            }
            scale_add(n, a, x, b, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], a * x[i] + b, "%s scale_add n=%ld [%ld]", set_names[s], (long)n, (long)i);
            recip(n, a, x, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], a / x[i], "%s recip n=%ld [%ld]", set_names[s], (long)n, (long)i);
            muls(n, x, b, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], x[i] * b, "%s muls n=%ld [%ld]", set_names[s], (long)n, (long)i);
            divs(n, x, b, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], x[i] / b, "%s divs n=%ld [%ld]", set_names[s], (long)n, (long)i);
        }
        /* divr: x * (1 / c) when 1 / c is a normal number, else x / c */
        static const double cs[] = {3, -0.1, 0x1p-125, 0x1p125, 0x1.8p-126, 0x1p126, 0x1p-1020, 0x1p1020, 0x1.8p-1021, 0x1p1021, 1e-310, 0, -0.0,
                                    INFINITY, NAN};
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            double c = cs[k];
            int inv = fabs(c) >= 0x1p-1020 && fabs(c) <= 0x1p1020;
            divr(n, x, c, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], inv ? x[i] * (1 / c) : x[i] / c, "%s divr(%a) n=%ld [%ld]", set_names[s], c,
                           (long)n, (long)i);
            int invf = fabs(c) >= 0x1p-125 && fabs(c) <= 0x1p125;
            divrf(n, x, c, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], invf ? x[i] * (double)(float)(1 / c) : x[i] / c, "%s divrf(%a) n=%ld [%ld]",
                           set_names[s], c, (long)n, (long)i);
        }
        mul(n, x, y, d);
        for (int64_t i = 0; i < n; i++)
            CHECK_SAME(d[i], x[i] * y[i], "%s mul n=%ld [%ld]", set_names[s], (long)n, (long)i);
        /* t ± x*y: the product rounded, then the sum (no FMA) */
        for (int sign = -1; sign <= 1; sign += 2) {
            fill_random(d, n, 2);
            double *t0 = malloc((size_t)(n ? n : 1) * sizeof(double));
            memcpy(t0, d, (size_t)n * sizeof(double));
            mul_acc(n, x, y, sign, d);
            for (int64_t i = 0; i < n; i++) {
                volatile double p = x[i] * y[i];
                double want = sign > 0 ? t0[i] + p : t0[i] - p;
                CHECK_SAME(d[i], want, "%s mul_acc(%d) n=%ld [%ld]", set_names[s], sign, (long)n, (long)i);
            }
            free(t0);
        }
        /* t += the rows of a k x ld matrix, one after the other (the bits of
           k separate +=), for k around the eight rows of a pass */
        static const int64_t ks[] = {0, 1, 7, 8, 9, 17, 24};
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
            int64_t k = ks[q], ld = n + 3;
            double *m = malloc((size_t)(k * ld + 1) * sizeof(double));
            double *t0 = malloc((size_t)(n ? n : 1) * sizeof(double));
            fill_random(m, k * ld, 1);
            fill_random(d, n, 2);
            memcpy(t0, d, (size_t)n * sizeof(double));
            add_rows(n, k, m, ld, d);
            for (int64_t i = 0; i < n; i++) {
                volatile double want = t0[i];
                for (int64_t r = 0; r < k; r++)
                    want += m[r * ld + i];
                CHECK_SAME(d[i], want, "%s add_rows(k=%ld) n=%ld [%ld]", set_names[s], (long)k, (long)n, (long)i);
            }
            /* t += the products of two such matrices' rows (the second's
               rows ld - 1 apart), each rounded, added in row order */
            memcpy(d, t0, (size_t)n * sizeof(double));
            mul_acc_rows(n, k, m, ld, m + 1, ld - 1, d);
            for (int64_t i = 0; i < n; i++) {
                volatile double want = t0[i];
                for (int64_t r = 0; r < k; r++) {
                    volatile double p = m[r * ld + i] * m[1 + r * (ld - 1) + i];
                    want += p;
                }
                CHECK_SAME(d[i], want, "%s mul_acc_rows(k=%ld) n=%ld [%ld]", set_names[s], (long)k, (long)n,
                           (long)i);
            }
            free(m);
            free(t0);
        }
        dv(n, x, y, d);
        for (int64_t i = 0; i < n; i++)
            CHECK_SAME(d[i], x[i] / y[i], "%s div n=%ld [%ld]", set_names[s], (long)n, (long)i);
        mx(n, x, y, d);
        for (int64_t i = 0; i < n; i++)
            CHECK_SAME(d[i], x[i] > y[i] || x[i] != x[i] ? x[i] : y[i], "%s max n=%ld [%ld]", set_names[s],
                       (long)n, (long)i);
        mn(n, x, y, d);
        for (int64_t i = 0; i < n; i++)
            CHECK_SAME(d[i], x[i] < y[i] || x[i] != x[i] ? x[i] : y[i], "%s min n=%ld [%ld]", set_names[s],
                       (long)n, (long)i);
        /* in place, as generated code calls them */
        memcpy(d, x, (size_t)n * sizeof(double));
        mul(n, d, y, d);
        for (int64_t i = 0; i < n; i++)
            CHECK_SAME(d[i], x[i] * y[i], "%s mul in place n=%ld [%ld]", set_names[s], (long)n, (long)i);
    }
    guard_free(gx);
    guard_free(gy);
    guard_free(gd);
}
END_TEST

/* integer powers and the exact functions: the same bits as the formula */
START_TEST(exact_powers_and_maps)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    pow_fn *pw = (pow_fn *)prim(s, "tx_p_pow");
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    guarded gx = guard_new(), gd = guard_new();
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        double *x = guard_end(gx, n, sizeof(double)), *d = guard_end(gd, n, sizeof(double));
        fill_random(x, n, 1);
        static const double ps[] = {2, 3, 1, -1, 0.5};
        for (int k = 0; k < 5; k++) {
            pw(n, x, ps[k], d);
            for (int64_t i = 0; i < n; i++) {
                double v = x[i], want = k == 0 ? v * v : k == 1 ? v * v * v : k == 2 ? v : k == 3 ? 1.0 / v : sqrt(v);
                CHECK_SAME(d[i], want, "%s pow(x, %g) n=%ld [%ld]: %a, want %a", set_names[s], ps[k], (long)n,
                           (long)i, d[i], want);
            }
        }
        static const int fns[] = {4, 5, 0, 1, 99};
        for (int k = 0; k < 5; k++) {
            map(n, fns[k], x, d);
            for (int64_t i = 0; i < n; i++) {
                double want = fns[k] == 4 ? sqrt(x[i]) : fns[k] == 5 ? fabs(x[i]) : x[i];
                CHECK_SAME(d[i], want, "%s map %d n=%ld [%ld]: %a, want %a", set_names[s], fns[k], (long)n, (long)i,
                           d[i], want);
            }
        }
    }
    guard_free(gx);
    guard_free(gd);
}
END_TEST

/* ---- reductions ---- */
enum { LANES = 16 };

/* lane j folds x[i] for i = j mod 16 in order; lanes folded by halves */
static double ref_sum(int64_t n, const double *x)
{
    double s[LANES] = {0};
    for (int64_t i = 0; i < n; i++)
        s[i % LANES] = s[i % LANES] + x[i];
    for (int w = LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++)
            s[j] = s[j] + s[j + w];
    return s[0];
}

static double ref_prod(int64_t n, const double *x)
{
    double p[LANES];
    for (int j = 0; j < LANES; j++)
        p[j] = 1;
    for (int64_t i = 0; i < n; i++)
        p[i % LANES] = p[i % LANES] * x[i];
    for (int w = LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++)
            p[j] = p[j] * p[j + w];
    return p[0];
}

/* a before b in the total order -inf < ... < -0 < +0 < ... < +inf */
static int below(double a, double b)
{
    return a < b || (a == 0 && b == 0 && signbit(a) && !signbit(b));
}

/* sequential max (MAX 1) or min (0): a NaN wins, acc's first */
static double ref_maxmin(int64_t n, const double *x, double acc, int max)
{
    if (acc != acc)
        return acc;
    for (int64_t i = 0; i < n; i++)
        if (x[i] != x[i])
            return x[i];
    double m = acc;
    for (int64_t i = 0; i < n; i++)
        if (max ? below(m, x[i]) : below(x[i], m))
            m = x[i];
    return m;
}

START_TEST(reductions)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    sum_fn *sum = (sum_fn *)prim(s, "tx_p_sum");
    red_fn *rsum = (red_fn *)prim(s, "tx_p_red_sum");
    red_fn *rprod = (red_fn *)prim(s, "tx_p_red_prod");
    red_fn *rmax = (red_fn *)prim(s, "tx_p_red_max");
    red_fn *rmin = (red_fn *)prim(s, "tx_p_red_min");
    guarded gx = guard_new();
    for (int rep = 0; rep < 40; rep++)
        for (int l = 0; l < NLEN; l++) {
            int64_t n = lengths[l];
            double *x = guard_end(gx, n, sizeof(double));
            /* magnitudes far apart, so that any other association changes the bits */
            for (int64_t i = 0; i < n; i++)
                x[i] = ldexp(2 * u01() - 1, (int)(rng() % 61) - 30);
            double acc = ldexp(2 * u01() - 1, (int)(rng() % 11) - 5);
            double got = sum(n, x), want = ref_sum(n, x);
            ck_assert_msg(same_bits(got, want), "%s sum n=%ld: %a, want %a", set_names[s], (long)n, got, want);
            got = rsum(n, x, acc);
            want = acc + ref_sum(n, x);
            ck_assert_msg(same_bits(got, want), "%s red_sum n=%ld: %a, want %a", set_names[s], (long)n, got, want);
            for (int64_t i = 0; i < n; i++) /* products near 1 that neither overflow nor underflow */
                x[i] = 1 + (2 * u01() - 1) * 0x1p-3;
            got = rprod(n, x, acc);
            want = acc * ref_prod(n, x);
            ck_assert_msg(same_bits(got, want), "%s red_prod n=%ld: %a, want %a", set_names[s], (long)n, got, want);

            /* max and min: ties of -0 and +0, infinities, NaNs of several payloads */
            for (int64_t i = 0; i < n; i++) {
                unsigned k = (unsigned)(rng() % 16);
                x[i] = k == 0 ? 0.0 : k == 1 ? -0.0 : k == 2 ? INFINITY : k == 3 ? -INFINITY
                       : ldexp(2 * u01() - 1, (int)(rng() % 11) - 5);
                if (rep % 4 == 3 && rng() % 64 == 0)
                    x[i] = nan_with(rng(), (int)(rng() & 1));
            }
            static const double accs[] = {-INFINITY, INFINITY, 0.0, -0.0, 0.25};
            for (int a = 0; a < 6; a++) {
                acc = a < 5 ? accs[a] : nan_with(12345, 1);
                got = rmax(n, x, acc);
                want = ref_maxmin(n, x, acc, 1);
                ck_assert_msg(same_bits(got, want), "%s red_max n=%ld acc=%a: %a, want %a", set_names[s], (long)n,
                              acc, got, want);
                got = rmin(n, x, acc);
                want = ref_maxmin(n, x, acc, 0);
                ck_assert_msg(same_bits(got, want), "%s red_min n=%ld acc=%a: %a, want %a", set_names[s], (long)n,
                              acc, got, want);
            }
        }
    /* a sum's NaN and infinities, and the empty block */
    double *x = guard_end(gx, 3, sizeof(double));
    x[0] = 1, x[1] = NAN, x[2] = 2;
    ck_assert(isnan(sum(3, x)));
    x[1] = INFINITY;
    ck_assert(sum(3, x) == INFINITY);
    x[0] = -INFINITY;
    ck_assert(isnan(sum(3, x)));
    ck_assert(same_bits(rsum(0, x, -0.0), 0.0)); /* -0 + the empty sum, +0 */
    ck_assert(same_bits(rmax(0, x, -0.0), -0.0));
    guard_free(gx);
}
END_TEST

/* Max and min of finite blocks take the compares of the elements (prims.inc):
   still the keys' bits when the result is a zero (-0 and +0 among the
   largest), when an infinity, a NaN or a sum that overflows is in the
   block, at any place, and for a NaN acc. The f32 reductions (tx_p_redf_*)
   give the bits of the f64 ones on the block converted to double. */
/* One NaN at every position of blocks of 1 to 80 elements (and 257),
   starting 0 to 7 elements past a 64-byte line, f64 and f32: max and min
   find it wherever it sits (the vector loops test for NaNs two loaded
   vectors at a time, from an aligned point inside the first vector: each
   slot of that pattern is a position here), as the reference does. */
START_TEST(maxmin_nan_every_position)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    red_fn *rmax = (red_fn *)prim(s, "tx_p_red_max");
    red_fn *rmin = (red_fn *)prim(s, "tx_p_red_min");
    redf_fn *fmax = (redf_fn *)prim(s, "tx_p_redf_max");
    redf_fn *fmin = (redf_fn *)prim(s, "tx_p_redf_min");
    static double xm[257 + 8] __attribute__((aligned(64)));
    static float xfm[257 + 16] __attribute__((aligned(64)));
    char bad[200] = ""; /* the first failure: one assertion in all (each costs a write to Check's pipe) */
    for (int64_t n = 1; n <= 257 && !bad[0]; n = n < 80 ? n + 1 : 258)
        for (int off = 0; off < 8 && !bad[0]; off++)
            for (int64_t p = 0; p < n && !bad[0]; p++) {
                double *x = xm + off;
                float *xf = xfm + off;
                for (int64_t i = 0; i < n; i++)
                    xf[i] = (float)(x[i] = (double)(float)ldexp(2 * u01() - 1, (int)(rng() % 21) - 10));
                x[p] = nan_with(rng(), (int)(rng() & 1));
                xf[p] = (float)x[p];
                double got = rmax(n, x, -INFINITY), want = ref_maxmin(n, x, -INFINITY, 1);
                double got2 = rmin(n, x, INFINITY), want2 = ref_maxmin(n, x, INFINITY, 0);
                if (!same_bits(got, want) || !same_bits(got2, want2) || !isnan(fmax(n, xf, -INFINITY)) ||
                    !isnan(fmin(n, xf, INFINITY)))
                    snprintf(bad, sizeof bad, "n=%ld off=%d NaN at %ld: max %a (want %a), min %a (want %a)", (long)n,
                             off, (long)p, got, want, got2, want2);
            }
    ck_assert_msg(!bad[0], "%s max/min with a NaN: %s", set_names[s], bad);
}
END_TEST

START_TEST(fast_maxmin_and_f32_reductions)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    red_fn *rsum = (red_fn *)prim(s, "tx_p_red_sum");
    red_fn *rprod = (red_fn *)prim(s, "tx_p_red_prod");
    red_fn *rmax = (red_fn *)prim(s, "tx_p_red_max");
    red_fn *rmin = (red_fn *)prim(s, "tx_p_red_min");
    redf_fn *fsum = (redf_fn *)prim(s, "tx_p_redf_sum");
    redf_fn *fprod = (redf_fn *)prim(s, "tx_p_redf_prod");
    redf_fn *fmax = (redf_fn *)prim(s, "tx_p_redf_max");
    redf_fn *fmin = (redf_fn *)prim(s, "tx_p_redf_min");
    guarded gx = guard_new(), gf = guard_new();
    static const double accs[] = {-INFINITY, INFINITY, 0.0, -0.0, 0.25, -0.25};
    for (int rep = 0; rep < 60; rep++)
        for (int l = 0; l < NLEN; l++) {
            int64_t n = lengths[l];
            double *x = guard_end(gx, n, sizeof(double));
            float *xf = guard_end(gf, n, sizeof(float));
            int mode = rep % 6;
            for (int64_t i = 0; i < n; i++) {
                double v = ldexp(2 * u01() - 1, (int)(rng() % 21) - 10);
                if (mode == 1) /* nonpositive, zeros of both signs: the largest a zero */
                    v = rng() % 4 == 0 ? (rng() & 1 ? 0.0 : -0.0) : -fabs(v);
                if (mode == 2) /* nonnegative, zeros of both signs: the smallest a zero */
                    v = rng() % 4 == 0 ? (rng() & 1 ? 0.0 : -0.0) : fabs(v);
                x[i] = (double)(float)v;
            }
            if (n > 0 && mode == 3) /* one infinity */
                x[rng() % n] = rng() & 1 ? INFINITY : -INFINITY;
            if (n > 0 && mode == 4) /* one NaN */
                x[rng() % n] = nan_with(rng(), (int)(rng() & 1));
            if (n > 1 && mode == 5) { /* finite, but the sum overflows */
                x[0] = rng() & 1 ? DBL_MAX : -DBL_MAX;
                x[n - 1] = x[0];
            }
            for (int64_t i = 0; i < n; i++)
                xf[i] = (float)x[i];
            for (int a = 0; a < 7; a++) {
                double acc = a < 6 ? accs[a] : nan_with(777, 0);
                double got = rmax(n, x, acc), want = ref_maxmin(n, x, acc, 1);
                ck_assert_msg(same_bits(got, want), "%s red_max mode %d n=%ld acc=%a: %a, want %a", set_names[s],
                              mode, (long)n, acc, got, want);
                got = rmin(n, x, acc);
                want = ref_maxmin(n, x, acc, 0);
                ck_assert_msg(same_bits(got, want), "%s red_min mode %d n=%ld acc=%a: %a, want %a", set_names[s],
                              mode, (long)n, acc, got, want);
                if (mode == 4 || mode == 5) /* a NaN keeps no payload in f32; DBL_MAX is no float */
                    continue;
                got = fmax(n, xf, acc);
                want = rmax(n, x, acc);
                ck_assert_msg(same_bits(got, want), "%s redf_max mode %d n=%ld acc=%a: %a, want %a", set_names[s],
                              mode, (long)n, acc, got, want);
                got = fmin(n, xf, acc);
                want = rmin(n, x, acc);
                ck_assert_msg(same_bits(got, want), "%s redf_min mode %d n=%ld acc=%a: %a, want %a", set_names[s],
                              mode, (long)n, acc, got, want);
            }
            if (mode == 4 || mode == 5)
                continue;
            double acc = ldexp(2 * u01() - 1, (int)(rng() % 11) - 5);
            double got = fsum(n, xf, acc), want = rsum(n, x, acc);
            ck_assert_msg(same_bits(got, want), "%s redf_sum n=%ld: %a, want %a", set_names[s], (long)n, got, want);
            for (int64_t i = 0; i < n; i++)
                xf[i] = (float)(x[i] = (double)(float)(1 + (2 * u01() - 1) * 0x1p-3));
            got = fprod(n, xf, acc);
            want = rprod(n, x, acc);
            ck_assert_msg(same_bits(got, want), "%s redf_prod n=%ld: %a, want %a", set_names[s], (long)n, got, want);
        }
    guard_free(gx);
    guard_free(gf);
}
END_TEST

/* Long reductions in chunks (tx_p_red_chunked): n / 16384 chunks (1 to
   64), per = n / chunks rounded down to a multiple of 16; chunk 0 folds
   x[0 .. per - 1) into acc, chunk c starts from x[c per - 1] and folds
   the run from x[c per] (on x's vector boundary) to the next chunk's
   first element (the last to n); the results folded in order.
   The same bits as that rule written out here, for the four reductions;
   one chunk is one call of the reduction. The library's tx_rt_reduce
   (the same chunks on the pool's threads) gives the same bits on 1, 2
   and 3 threads. */
static double ref_chunked(red_fn *red, int64_t n, const double *x, double acc)
{
    int64_t nc = n / 16384;
    nc = nc < 1 ? 1 : nc > 64 ? 64 : nc;
    if (nc == 1)
        return red(n, x, acc);
    int64_t per = n / nc / 16 * 16;
    double r = red(per - 1, x, acc);
    for (int64_t c = 1; c < nc; c++) {
        int64_t lo = c * per - 1, hi = c == nc - 1 ? n : lo + per;
        double part = red(hi - lo - 1, x + lo + 1, x[lo]);
        r = red(1, &part, r);
    }
    return r;
}

START_TEST(chunked_reductions)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    chunked_fn *chunked = (chunked_fn *)prim(s, "tx_p_red_chunked");
    static const char *const names[] = {"tx_p_red_sum", "tx_p_red_prod", "tx_p_red_max", "tx_p_red_min"};
    static const int64_t ns[] = {0, 1, 100, 32767, 32768, 50001, 16384 * 5 + 3, 16384 * 64 + 17, 16384 * 70 + 5};
    int64_t nmax = 16384 * 70 + 5;
    double *x = malloc(sizeof(double) * (size_t)nmax);
    ck_assert_ptr_nonnull(x);
    for (int64_t i = 0; i < nmax; i++)
        x[i] = 1 + (u01() - 0.5) * 1e-4;
    /* a NaN at x[40000] (seen only by the lengths past it) in the second
       pass; the first checks the bits of those lengths' sums, where the
       chunks go two at a time */
    for (int nan = 0; nan < 2; nan++)
    for (int k = 0; k < 4; k++) {
        red_fn *red = (red_fn *)prim(s, names[k]);
        x[40000] = nan ? NAN : 1;
        for (size_t l = 0; l < sizeof ns / sizeof ns[0]; l++) {
            int64_t n = ns[l];
            double acc = k == 2 ? -INFINITY : k == 3 ? INFINITY : k == 1 ? 1.0 : 0.5;
            double got = chunked(red, n, x, acc), want = ref_chunked(red, n, x, acc);
            ck_assert_msg(same_bits(got, want), "%s chunked %s n=%ld: %a, want %a", set_names[s], names[k], (long)n,
                          got, want);
            if ((n <= 40000 || !nan) && k == 0) { /* and it is the sum */
                long double t = acc;
                for (int64_t i = 0; i < n; i++)
                    t += x[i];
                ck_assert_msg(fabsl(got - t) <= 1e-12 * (fabsl(t) + 1), "%s chunked sum n=%ld: %a vs %La",
                              set_names[s], (long)n, got, t);
            }
            if (n > 40000)
                ck_assert_msg(nan == isnan(got), "%s chunked %s n=%ld: %a with%s a NaN", set_names[s], names[k],
                              (long)n, got, nan ? "" : "out");
            if (s != SET_LIBRARY)
                continue;
            for (int t = 1; t <= 3; t++) {
                tx_rt_set_threads(t);
                double on = tx_rt_reduce(red, n, x, acc);
                ck_assert_msg(same_bits(on, want), "tx_rt_reduce %s n=%ld on %d threads: %a, want %a", names[k],
                              (long)n, t, on, want);
            }
            tx_rt_set_threads(0);
        }
    }
    free(x);
}
END_TEST

/* The same over floats (tx_p_redf_chunked): each chunk folded from its
   floats by tx_p_redf_OP, chunk c > 0 from its first float, the results
   folded in order by tx_p_red_OP; the library's tx_rt_reducef the same
   bits on 1, 2 and 3 threads. */
static double ref_chunkedf(redf_fn *red, red_fn *fold, int64_t n, const float *x, double acc)
{
    int64_t nc = n / 16384;
    nc = nc < 1 ? 1 : nc > 64 ? 64 : nc;
    if (nc == 1)
        return red(n, x, acc);
    int64_t per = n / nc / 16 * 16;
    double r = red(per - 1, x, acc);
    for (int64_t c = 1; c < nc; c++) {
        int64_t lo = c * per - 1, hi = c == nc - 1 ? n : lo + per;
        double part = red(hi - lo - 1, x + lo + 1, (double)x[lo]);
        r = fold(1, &part, r);
    }
    return r;
}

START_TEST(chunked_reductions_f32)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    chunkedf_fn *chunked = (chunkedf_fn *)prim(s, "tx_p_redf_chunked");
    static const char *const names[] = {"tx_p_redf_sum", "tx_p_redf_prod", "tx_p_redf_max", "tx_p_redf_min"};
    static const char *const folds[] = {"tx_p_red_sum", "tx_p_red_prod", "tx_p_red_max", "tx_p_red_min"};
    static const int64_t ns[] = {0, 1, 100, 32767, 32768, 50001, 16384 * 5 + 3, 16384 * 64 + 17, 16384 * 70 + 5};
    int64_t nmax = 16384 * 70 + 5;
    float *x = malloc(sizeof(float) * (size_t)nmax);
    ck_assert_ptr_nonnull(x);
    for (int64_t i = 0; i < nmax; i++)
        x[i] = (float)(1 + (u01() - 0.5) * 1e-4);
    x[16383] = 3;         /* for n = 32768 the first float of chunk 1, its seed */
    /* a NaN at x[40000] (seen only by the lengths past it) in the second
       pass, as above */
    for (int nan = 0; nan < 2; nan++)
    for (int k = 0; k < 4; k++) {
        redf_fn *red = (redf_fn *)prim(s, names[k]);
        red_fn *fold = (red_fn *)prim(s, folds[k]);
        x[40000] = nan ? NAN : 1;
        for (size_t l = 0; l < sizeof ns / sizeof ns[0]; l++) {
            int64_t n = ns[l];
            double acc = k == 2 ? -INFINITY : k == 3 ? INFINITY : k == 1 ? 1.0 : 0.5;
            double got = chunked(red, fold, n, x, acc), want = ref_chunkedf(red, fold, n, x, acc);
            ck_assert_msg(same_bits(got, want), "%s chunked %s n=%ld: %a, want %a", set_names[s], names[k], (long)n,
                          got, want);
            if (n == 32768 && k == 2)
                ck_assert_msg(got == 3, "%s chunked max n=32768: %a, want 3", set_names[s], got);
            if ((n <= 40000 || !nan) && k == 0) { /* and it is the sum */
                long double t = acc;
                for (int64_t i = 0; i < n; i++)
                    t += x[i];
                ck_assert_msg(fabsl(got - t) <= 1e-12 * (fabsl(t) + 1), "%s chunked f32 sum n=%ld: %a vs %La",
                              set_names[s], (long)n, got, t);
            }
            if (n > 40000)
                ck_assert_msg(nan == isnan(got), "%s chunked %s n=%ld: %a with%s a NaN", set_names[s], names[k],
                              (long)n, got, nan ? "" : "out");
            if (s != SET_LIBRARY)
                continue;
            for (int t = 1; t <= 3; t++) {
                tx_rt_set_threads(t);
                double on = tx_rt_reducef(red, fold, n, x, acc);
                ck_assert_msg(same_bits(on, want), "tx_rt_reducef %s n=%ld on %d threads: %a, want %a", names[k],
                              (long)n, t, on, want);
            }
            tx_rt_set_threads(0);
        }
    }
    free(x);
}
END_TEST

/* ---- exp, log, sin, cos, tanh, pow ---- */
typedef struct {
    int fn; /* map_fn number, 0 for pow */
    const char *name;
    double (*f)(double);
    long double (*fl)(long double);
} mathfn;

static const mathfn mathfns[] = {
    {2, "exp", exp, expl}, {3, "log", log, logl}, {6, "sin", sin, sinl},
    {7, "cos", cos, cosl}, {8, "tanh", tanh, tanhl},
};
enum { NMATH = sizeof mathfns / sizeof mathfns[0] };

/* the spacing of doubles at the magnitude of R */
static double ulp_at(long double r)
{
    double a = fabs((double)r);
    if (a < DBL_MIN)
        return 0x1p-1074;
    if (isinf(a))
        a = DBL_MAX;
    return nextafter(a, INFINITY) - a;
}

/* arguments for F: RANGE 0 the whole useful domain, 1 near the origin
   (or 1 for log), 2 the extremes (huge sin/cos arguments, subnormal exp
   results) */
static double argument(int fn, int range)
{
    double u = u01();
    switch (fn) {
    case 2: return range == 0 ? -745 + u * 1454.7 : range == 1 ? 2 * u - 1 : -745 + u * 37;
    case 3: return range == 0 ? ldexp(1 + u, (int)(rng() % 2098) - 1074) : range == 1 ? 0.5 + 1.5 * u : 1 + (u - 0.5) * 1e-6;
    case 6:
    case 7: return range == 0 ? 20 * u - 10 : range == 1 ? 2e5 * u - 1e5 : ldexp(u, (int)(rng() % 1000));
    default: return range == 0 ? 50 * u - 25 : range == 1 ? (u - 0.5) * 1e-3 : (u - 0.5) * 2;
    }
}

/* Checks D[i] = F(X[i]): at most 4 ULP (+ the reference's own error)
   from the long double result, and 5 ULP from glibc's scalar one. */
static void check_accuracy(const char *what, int64_t n, const double *x, const double *d, double (*f)(double),
                           long double (*fl)(long double), double p, double *worst)
{
    for (int64_t i = 0; i < n; i++) {
        long double ref = f ? fl(x[i]) : powl(x[i], p);
        double g = f ? f(x[i]) : pow(x[i], p);
        if (fabsl(ref) > DBL_MAX) {
            ck_assert_msg(d[i] == g, "%s(%a): %a, glibc %a", what, x[i], d[i], g);
            continue;
        }
        double e = (double)(fabsl(d[i] - ref) / ulp_at(ref)), eg = fabs(d[i] - g) / ulp_at(g);
        ck_assert_msg(e <= 4.0 + 1.0 / 128, "%s(%a): %a is %.3f ULP from %La", what, x[i], d[i], e, ref);
        ck_assert_msg(eg <= 5.0, "%s(%a): %a is %.1f ULP from glibc's %a", what, x[i], d[i], eg, g);
        if (e > *worst)
            *worst = e;
    }
}

START_TEST(vector_math_accuracy)
{
    map_fn *map = (map_fn *)prim(SET_LIBRARY, "tx_p_map");
    pow_fn *pw = (pow_fn *)prim(SET_LIBRARY, "tx_p_pow");
    enum { N = 256, ROUNDS = 60 };
    static double x[N], d[N];
    for (int k = 0; k < NMATH; k++) {
        double worst = 0;
        for (int range = 0; range < 3; range++)
            for (int r = 0; r < ROUNDS; r++) {
                for (int i = 0; i < N; i++)
                    x[i] = argument(mathfns[k].fn, range);
                map(N, mathfns[k].fn, x, d);
                check_accuracy(mathfns[k].name, N, x, d, mathfns[k].f, mathfns[k].fl, 0, &worst);
            }
        printf("check_prims: %s: at most %.3f ULP from the long double result\n", mathfns[k].name, worst);
    }
    /* pow's general case: 4, 5 and -3 are integers, but not special-cased */
    static const double ps[] = {0.7, -1.5, 2.5, 1.0 / 3, 10.3, 4, 5, -3, 0.25, 1e-3};
    double worst = 0;
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < N; i++) {
                x[i] = ldexp(1 + u01(), (int)(rng() % 41) - 20);
                if (ps[k] == floor(ps[k]) && rng() % 2)
                    x[i] = -x[i];
            }
            pw(N, x, ps[k], d);
            check_accuracy("pow", N, x, d, NULL, NULL, ps[k], &worst);
        }
    printf("check_prims: pow: at most %.3f ULP from the long double result\n", worst);
}
END_TEST

/* tx_p_map_f32, on every set: exp, log, sin, cos and tanh of (float)x in
   f32, each result a float within 4 ULP of the true value (the reference
   is the double function of the same float, rounded: within 4.5 f32 ULP
   of libmvec's, whose own bound is 4), NaN and infinities where the double
   function has them; the other functions as tx_p_map, rounded to f32. */
START_TEST(vector_math_f32)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    map_fn *mapf = (map_fn *)prim(s, "tx_p_map_f32");
    guarded gx = guard_new(), gd = guard_new();
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        double *x = guard_end(gx, n, sizeof(double)), *d = guard_end(gd, n, sizeof(double));
        for (int k = 0; k < NMATH; k++) {
            for (int64_t i = 0; i < n; i++) {
                double a = argument(mathfns[k].fn, l % 2);
                x[i] = mathfns[k].fn == 2 ? fmod(a, 100) : mathfns[k].fn == 3 ? fmin(a, 1e30) : a;
            }
            mapf(n, mathfns[k].fn, x, d);
            for (int64_t i = 0; i < n; i++) {
                float xf = (float)x[i], want = (float)mathfns[k].f((double)xf);
                ck_assert_msg((double)(float)d[i] == d[i], "%s %s_f32: %a is not a float", set_names[s],
                              mathfns[k].name, d[i]);
                if (isinf(want) || want == 0 || isnan(want)) {
                    ck_assert_msg(isinf(want) ? d[i] == want : fabs(d[i]) <= 0x1p-126,
                                  "%s %s_f32(%a) = %a, want %a", set_names[s], mathfns[k].name, xf, d[i], want);
                    continue;
                }
                float ulp = nextafterf(fabsf(want), INFINITY) - fabsf(want);
                ck_assert_msg(fabs(d[i] - want) <= 4.5 * ulp, "%s %s_f32(%a) = %a, want %a", set_names[s],
                              mathfns[k].name, xf, d[i], want);
            }
        }
        fill_random(x, n, 1);
        static const int fns[] = {4, 5, 0};
        for (int k = 0; k < 3; k++) {
            mapf(n, fns[k], x, d);
            for (int64_t i = 0; i < n; i++) {
                double want = (float)(fns[k] == 4 ? sqrt(x[i]) : fns[k] == 5 ? fabs(x[i]) : x[i]);
                CHECK_SAME(d[i], want, "%s map_f32 %d n=%ld [%ld]: %a, want %a", set_names[s], fns[k], (long)n,
                           (long)i, d[i], want);
            }
        }
    }
    guard_free(gx);
    guard_free(gd);
}
END_TEST

/* f32 exp and tanh of blocks in their fast domains but for one element,
   at every position: the library's 8-float exp and tanh take four vectors
   at a time while all their lanes are in the domain ([-87, 87]; not NaN)
   and hand the rest of the block, from the first group with a lane
   outside, to the loop that blends SLEEF's results in; every element
   comes out as the function of itself wherever the odd one sits (a NaN,
   infinities, values whose results overflow, underflow or are close to
   either, signed zeros), through tx_pf_map and tx_pf_map_bin (x - c). */
START_TEST(fast_f32_odd_lane_every_position)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    pf_map_fn *fmap = (pf_map_fn *)prim(s, "tx_pf_map");
    pf_map_bin_fn *fbin = (pf_map_bin_fn *)prim(s, "tx_pf_map_bin");
    static const int64_t ns[] = {32, 40, 64, 97, 257};
    static const struct {
        int fn;
        double (*f)(double);
        float odd[8];
    } fns[] = {
        {2, exp, {NAN, 100.0f, -100.0f, 88.5f, -87.5f, 87.0f, -87.0f, INFINITY}},
        {8, tanh, {NAN, INFINITY, -INFINITY, 1e30f, -10.5f, 9.9f, 0x1p-149f, -0.0f}},
    };
    const float c = 0.5f;
    float x[257], d[257];
    long bad = 0, checked = 0;
    char first[160] = "";
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++)
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (int64_t p = 0; p < ns[a]; p++)
                for (size_t v = 0; v < sizeof fns[f].odd / sizeof fns[f].odd[0]; v++)
                    for (int bin = 0; bin < 2; bin++) {
                        int64_t n = ns[a];
                        for (int64_t i = 0; i < n; i++)
                            x[i] = (float)(10 * u01() - 5);
                        x[p] = bin ? fns[f].odd[v] + c : fns[f].odd[v]; /* x - c: the odd value again (but the tiniest) */
                        if (bin)
                            fbin(n, fns[f].fn, 1, x, NULL, c, d);
                        else
                            fmap(n, fns[f].fn, x, d);
                        for (int64_t i = 0; i < n; i++) {
                            float u = bin ? x[i] - c : x[i];
                            double want = (double)(float)fns[f].f((double)u);
                            float ulp = nextafterf(fabsf((float)want), INFINITY) - fabsf((float)want);
                            int ok = isnan(want)              ? isnan(d[i])
                                     : isinf(want)            ? d[i] == want
                                     : fabs(want) < 0x1p-126  ? fabs(d[i] - want) <= 0x1p-126
                                                              : fabs(d[i] - want) <= 4.5 * ulp;
                            if (ok && want == 0 && fns[f].fn == 8)
                                ok = !signbit(d[i]) == !signbit(want);
                            checked++;
                            if (!ok && !bad++)
                                snprintf(first, sizeof first, "n=%ld odd %a at %ld, %s: fn %d(%a) = %a at %ld, want %a",
                                         (long)n, (double)fns[f].odd[v], (long)p, bin ? "bin" : "map", fns[f].fn,
                                         (double)u, (double)d[i], (long)i, want);
                        }
                    }
    ck_assert_msg(bad == 0, "%s: %ld of %ld wrong, the first: %s", set_names[s], bad, checked, first);
}
END_TEST

/* f64 exp and tanh of blocks in their fast domains but for one element,
   at every position, as exp_f32_odd_lane_every_position: the library's
   4-double exp and tanh take four vectors at a time while all their lanes
   are in the domain ([-700, 700]; not NaN) and blend SLEEF's results in
   from the first group with a lane outside; every element comes out as
   the function of itself, within 4 ULP of glibc's (a NaN, infinities,
   results that overflow, underflow, are subnormal or close to the
   domain's ends, signed zeros), through tx_p_map and tx_p_map_aff (x - c,
   and x - y). */
START_TEST(fast_f64_odd_lane_every_position)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    map_aff_fn *aff = (map_aff_fn *)prim(s, "tx_p_map_aff");
    static const int64_t ns[] = {16, 20, 32, 49, 129};
    static const struct {
        int fn;
        double (*f)(double);
        double odd[11];
    } fns[] = {
        {2, exp, {NAN, 800.0, -800.0, 709.5, -709.5, 700.0, -700.0, 700.5, -745.0, -740.0, INFINITY}},
        {8, tanh, {NAN, INFINITY, -INFINITY, 1e300, -20.5, 19.9, 0x1p-1074, -0.0, 0x1p-1022, -3e-9, 0.0}},
    };
    const double c = 0.5;
    double x[129], y[129], d[129];
    long bad = 0, checked = 0;
    char first[200] = "";
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++)
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (int64_t p = 0; p < ns[a]; p++)
                for (size_t v = 0; v < sizeof fns[f].odd / sizeof fns[f].odd[0]; v++)
                    for (int way = 0; way < 3; way++) {
                        int64_t n = ns[a];
                        for (int64_t i = 0; i < n; i++) {
                            x[i] = 40 * u01() - 20;
                            y[i] = 2 * u01() - 1;
                        }
                        /* x - c, x - y: the odd value again (all but the tiniest) */
                        x[p] = way == 0 ? fns[f].odd[v] : fns[f].odd[v] + (way == 1 ? c : y[p]);
                        if (way == 0)
                            map(n, fns[f].fn, x, d);
                        else
                            aff(n, fns[f].fn, 1.0, x, -1.0, way == 2 ? y : NULL, -c, d);
                        for (int64_t i = 0; i < n; i++) {
                            double u = way == 0 ? x[i] : way == 1 ? 1.0 * x[i] + -c : 1.0 * x[i] + -1.0 * y[i];
                            double want = fns[f].f(u);
                            int ok = isnan(want)             ? isnan(d[i])
                                     : isinf(want)           ? d[i] == want
                                     : fabs(want) < DBL_MIN  ? fabs(d[i] - want) <= 4 * 0x1p-1074
                                                             : fabs(d[i] - want) <= 4 * ulp_at(want);
                            if (ok && want == 0)
                                ok = !signbit(d[i]) == !signbit(want);
                            checked++;
                            if (!ok && !bad++)
                                snprintf(first, sizeof first, "n=%ld odd %a at %ld, way %d: fn %d(%a) = %a at %ld, want %a",
                                         (long)n, fns[f].odd[v], (long)p, way, fns[f].fn, u, d[i], (long)i, want);
                        }
                    }
    ck_assert_msg(bad == 0, "%s: %ld of %ld wrong, the first: %s", set_names[s], bad, checked, first);
}
END_TEST

/* The library's exp and tanh at x86-64-v4 (8 doubles, 16 floats) and at
   x86-64-v3 (4 doubles, 8 floats) are vmath.inc's polynomials, the same
   operations at both widths: the library's results in the fast domain
   are, bit for bit, those of the 4-double and 8-float forms computed here
   (every lane through tx_expd4_, tx_tanhd4_, tx_expf8_, tx_tanhf8_),
   whichever of the two levels the CPU runs, through tx_p_map, tx_pf_map,
   tx_p_map_aff and tx_pf_map_bin, at lengths that end inside a group of
   four vectors and inside a vector. A wrong constant or operation in one
   width's copy fails here though its error stays within the ULP bounds
   the tests above allow. Not run at the baseline level (libmvec's there). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include "vmath.inc"
#define CK_V3 __attribute__((target("arch=x86-64-v3")))
TX_EXPD4_DEF(CK_V3)
TX_EXPF8_DEF(CK_V3)
/* D[i] = exp (FN 2) or tanh (else) of X[i], at 4 doubles, 8 floats */
CK_V3 static void ref_v3_f64(int64_t n, int fn, const double *x, double *d)
{
    for (int64_t i = 0; i < n; i += 4) {
        double t[4] = {1, 1, 1, 1};
        for (int k = 0; k < 4 && i + k < n; k++)
            t[k] = x[i + k];
        __m256d v = _mm256_loadu_pd(t);
        _mm256_storeu_pd(t, fn == 2 ? tx_expd4_(v) : tx_tanhd4_(v));
        for (int k = 0; k < 4 && i + k < n; k++)
            d[i + k] = t[k];
    }
}
CK_V3 static void ref_v3_f32(int64_t n, int fn, const float *x, float *d)
{
    for (int64_t i = 0; i < n; i += 8) {
        float t[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        for (int k = 0; k < 8 && i + k < n; k++)
            t[k] = x[i + k];
        __m256 v = _mm256_loadu_ps(t);
        _mm256_storeu_ps(t, fn == 2 ? tx_expf8_(v) : tx_tanhf8_(v));
        for (int k = 0; k < 8 && i + k < n; k++)
            d[i + k] = t[k];
    }
}
#endif

START_TEST(exp_tanh_same_bits_at_v4_and_v3)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    if (strcmp(tx_rt_isa(), "x86-64-v4") != 0 && strcmp(tx_rt_isa(), "x86-64-v3") != 0) {
        printf("check_prims: exp and tanh against the AVX2 forms: not run at %s\n", tx_rt_isa());
        return;
    }
    map_fn *map = (map_fn *)prim(SET_LIBRARY, "tx_p_map");
    map_aff_fn *aff = (map_aff_fn *)prim(SET_LIBRARY, "tx_p_map_aff");
    pf_map_fn *fmap = (pf_map_fn *)prim(SET_LIBRARY, "tx_pf_map");
    pf_map_bin_fn *fbin = (pf_map_bin_fn *)prim(SET_LIBRARY, "tx_pf_map_bin");
    static const int64_t ns[] = {1, 7, 8, 15, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 4097};
    enum { NBIG = 4097 };
    static double x[NBIG], u[NBIG], d[NBIG], want[NBIG];
    static float xf[NBIG], uf[NBIG], df[NBIG], wantf[NBIG];
    const int fns[] = {2, 8};
    for (size_t f = 0; f < 2; f++)
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (int way = 0; way < 2; way++) {
                const int64_t n = ns[a];
                const double span = fns[f] == 2 ? 1398.0 : 60.0; /* exp: inside the domain, [-700, 700] */
                for (int64_t i = 0; i < n; i++) {
                    x[i] = span * u01() - span / 2;
                    xf[i] = (float)((fns[f] == 2 ? 170.0 : 30.0) * u01() - (fns[f] == 2 ? 85.0 : 15.0));
                }
                if (way == 0) {
                    map(n, fns[f], x, d);
                    fmap(n, fns[f], xf, df);
                    memcpy(u, x, (size_t)n * sizeof *u);
                    memcpy(uf, xf, (size_t)n * sizeof *uf);
                } else { /* x - 0.75, as map_aff and map_bin form it */
                    aff(n, fns[f], 1.0, x, -1.0, NULL, -0.75, d);
                    fbin(n, fns[f], 1, xf, NULL, 0.75f, df);
                    for (int64_t i = 0; i < n; i++) {
                        u[i] = 1.0 * x[i] + -0.75;
                        uf[i] = xf[i] - 0.75f;
                    }
                }
                ref_v3_f64(n, fns[f], u, want);
                ref_v3_f32(n, fns[f], uf, wantf);
                for (int64_t i = 0; i < n; i++) {
                    ck_assert_msg(same_bits(d[i], want[i]), "%s fn %d n=%ld way %d: f(%a) = %a at %ld, the AVX2 form %a",
                                  tx_rt_isa(), fns[f], (long)n, way, u[i], d[i], (long)i, want[i]);
                    ck_assert_msg(memcmp(&df[i], &wantf[i], sizeof(float)) == 0,
                                  "%s f32 fn %d n=%ld way %d: f(%a) = %a at %ld, the AVX2 form %a", tx_rt_isa(), fns[f],
                                  (long)n, way, (double)uf[i], (double)df[i], (long)i, (double)wantf[i]);
                }
            }
#endif
}
END_TEST

/* A function of a sum in one pass, on every set: tx_p_map_aff gives the
   bits of tx_p_axpby (or tx_p_scale_add) and then tx_p_map, and
   tx_pf_map_bin those of tx_pf_bin and then tx_pf_map, for every length,
   every function, the second operand a block or a number, special values
   included. */
START_TEST(maps_of_sums)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    map_aff_fn *aff = (map_aff_fn *)prim(s, "tx_p_map_aff");
    axpby_fn *axpby = (axpby_fn *)prim(s, "tx_p_axpby");
    scale_add_fn *scale_add = (scale_add_fn *)prim(s, "tx_p_scale_add");
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    pf_map_bin_fn *fbin = (pf_map_bin_fn *)prim(s, "tx_pf_map_bin");
    pf_bin_fn *bin = (pf_bin_fn *)prim(s, "tx_pf_bin");
    pf_map_fn *fmap = (pf_map_fn *)prim(s, "tx_pf_map");
    guarded gd = guard_new();
    static double x[MAXN], y[MAXN], t[MAXN];
    static float xf[MAXN], yf[MAXN], tf[MAXN];
    static const int fns[] = {2, 3, 6, 7, 8};
    static const double coefs[][3] = {{1, 1, -0.75}, {1, -1, 2.5}, {-2, 0.5, 0}};
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        fill_random(x, n, l % 2);
        fill_random(y, n, l % 3 == 0);
        for (int64_t i = 0; i < n; i++) {
            xf[i] = (float)x[i];
            yf[i] = (float)(y[i] * 0.5);
        }
        for (int k = 0; k < 5; k++) {
            int fn = fns[k];
            for (int q = 0; q < 3; q++)
                for (int withy = 0; withy < 2; withy++) {
                    double a = coefs[q][0], b = coefs[q][1], c = coefs[q][2];
                    double *d = guard_end(gd, n, sizeof(double));
                    aff(n, fn, a, x, b, withy ? y : NULL, c, d);
                    if (withy)
                        axpby(n, a, x, b, y, t);
                    else
                        scale_add(n, a, x, c, t);
                    map(n, fn, t, t);
                    for (int64_t i = 0; i < n; i++)
                        CHECK_SAME(d[i], t[i], "%s map_aff fn %d q %d y %d n=%ld [%ld]: %a, want %a", set_names[s],
                                   fn, q, withy, (long)n, (long)i, d[i], t[i]);
                }
            for (int op = 0; op < 3; op++)
                for (int withy = 0; withy < 2; withy++) {
                    float c = -1.25f, *d = guard_end(gd, n, sizeof(float));
                    fbin(n, fn, op, xf, withy ? yf : NULL, c, d);
                    bin(n, op, xf, 1, withy ? yf : &c, withy, tf);
                    fmap(n, fn, tf, tf);
                    for (int64_t i = 0; i < n; i++)
                        ck_assert_msg(memcmp(&d[i], &tf[i], sizeof(float)) == 0 || (d[i] != d[i] && tf[i] != tf[i]),
                                      "%s pf_map_bin fn %d op %d y %d n=%ld [%ld]: %a, want %a", set_names[s], fn,
                                      op, withy, (long)n, (long)i, d[i], tf[i]);
                }
        }
    }
    guard_free(gd);
}
END_TEST

/* A row reduction's note of the rows after it (prims.inc TX_PF_NOTE):
   while one is pending, the elementwise functions work block by block,
   asking for the noted lines between blocks. On every set, tx_p_map,
   tx_p_map_aff (with and without y), tx_pf_map, tx_pf_map_bin and
   tx_p_red_sq_aff give the same bits with a note pending as without one
   (a reduction too short to note clears it), for every length, nothing
   written past the block (floats compared as doubles: the same bits). The note points past the end of the rows read:
   into the guard page here, which a prefetch does not fault on. */
START_TEST(maps_after_a_row_reduction)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    typedef void rows_fn(int64_t, int64_t, int, const double *, int64_t, double *, int64_t);
    rows_fn *rows = (rows_fn *)prim(s, "tx_p_red_rows");
    map_aff_fn *aff = (map_aff_fn *)prim(s, "tx_p_map_aff");
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    pf_map_bin_fn *fbin = (pf_map_bin_fn *)prim(s, "tx_pf_map_bin");
    pf_map_fn *fmap = (pf_map_fn *)prim(s, "tx_pf_map");
    typedef double red_sq_fn(int64_t, double, const double *, double, const double *, double, int, double, double);
    red_sq_fn *sq = (red_sq_fn *)prim(s, "tx_p_red_sq_aff");
    guarded gd = guard_new(), gr = guard_new();
    static double x[MAXN], y[MAXN], want[MAXN];
    static float xf[MAXN], wantf[MAXN];
    double row_max, *rowd = guard_end(gr, 2000, sizeof(double));
    for (int64_t i = 0; i < 2000; i++)
        rowd[i] = (double)(i % 13) - 6;
    /* pending: one row of 2000 doubles (16000 bytes, noted); cleared: 10 */
#define NOTE(on) rows(1, (on) ? 2000 : 10, 2, rowd, 0, &row_max, 1)
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        fill_random(x, n, l % 2);
        fill_random(y, n, l % 3 == 0);
        for (int64_t i = 0; i < n; i++)
            xf[i] = (float)x[i];
        for (int fn = 2; fn <= 8; fn++) {
            double *d = guard_end(gd, n, sizeof(double));
            NOTE(0);
            map(n, fn, x, want);
            NOTE(1);
            map(n, fn, x, d);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(d[i], want[i], "%s map fn %d n=%ld [%ld] after a note", set_names[s], fn, (long)n, (long)i);
            if (fn == 4 || fn == 5)
                continue;
            for (int withy = 0; withy < 2; withy++) {
                d = guard_end(gd, n, sizeof(double));
                NOTE(0);
                aff(n, fn, 2.0, x, -1.0, withy ? y : NULL, 0.25, want);
                NOTE(1);
                aff(n, fn, 2.0, x, -1.0, withy ? y : NULL, 0.25, d);
                for (int64_t i = 0; i < n; i++)
                    CHECK_SAME(d[i], want[i], "%s map_aff fn %d y %d n=%ld [%ld] after a note", set_names[s], fn,
                               withy, (long)n, (long)i);
            }
            float *df = guard_end(gd, n, sizeof(float));
            NOTE(0);
            fmap(n, fn, xf, wantf);
            NOTE(1);
            fmap(n, fn, xf, df);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(df[i], wantf[i], "%s pf_map fn %d n=%ld [%ld] after a note", set_names[s], fn, (long)n,
                           (long)i);
            df = guard_end(gd, n, sizeof(float));
            NOTE(0);
            fbin(n, fn, 1, xf, NULL, 0.5f, wantf);
            NOTE(1);
            fbin(n, fn, 1, xf, NULL, 0.5f, df);
            for (int64_t i = 0; i < n; i++)
                CHECK_SAME(df[i], wantf[i], "%s pf_map_bin fn %d n=%ld [%ld] after a note", set_names[s], fn,
                           (long)n, (long)i);
        }
        NOTE(0);
        double a0 = sq(n, 1.0, x, -1.0, y, 0.0, 1, 3.0, 0.5);
        NOTE(1);
        double a1 = sq(n, 1.0, x, -1.0, y, 0.0, 1, 3.0, 0.5);
        CHECK_SAME(a1, a0, "%s red_sq_aff n=%ld after a note", set_names[s], (long)n);
    }
#undef NOTE
    guard_free(gd);
    guard_free(gr);
}
END_TEST

/* tx_p_red_sq_aff_rows: each of K rows the bits of the nest it replaces
   (emit_dense.c reduce_pairs_by_prim): under 16 elements (t = a x + b z)
   squared and added in order from 0, else tx_p_red_sq_aff block by block
   of 256 (prims.inc's TX_BLOCK) into the row's sum; x fixed (IX 0) or
   stepping, z stepping, d at a stride (the elements between untouched);
   infinities, NaNs and signed zeros in the data. */
typedef void sq_rows_fn(int64_t, int64_t, double, const double *, int64_t, double, const double *, int64_t, double *,
                        int64_t);
START_TEST(sum_of_squares_rows)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    sq_rows_fn *rows = (sq_rows_fn *)prim(s, "tx_p_red_sq_aff_rows");
    red_sq_aff_fn *red_sq = (red_sq_aff_fn *)prim(s, "tx_p_red_sq_aff");
    static const int64_t ns[] = {1, 15, 16, 64, 255, 256, 300, 513};
    enum { K = 7, LD = 520 };
    static double x[K * LD], z[K * LD], d[3 * K];
    static const double cs[][2] = {{1, -1}, {2, 3}, {-0.5, 1}};
    for (int special = 0; special < 2; special++) { /* without specials first: every bit of the folds seen */
    fill_random(x, K * LD, special);
    fill_random(z, K * LD, special);
    for (size_t l = 0; l < sizeof ns / sizeof *ns; l++)
        for (int c = 0; c < 3; c++)
            for (int ix = 0; ix <= LD; ix += LD) {
                int64_t n = ns[l];
                double a = cs[c][0], b = cs[c][1];
                for (int i = 0; i < 3 * K; i++)
                    d[i] = 42;
                rows(K, n, a, x, ix, b, z, LD, d, 3);
                for (int r = 0; r < K; r++) {
                    const double *xr = x + r * ix, *zr = z + r * LD;
                    double want = 0;
                    if (n < 16)
                        for (int64_t i = 0; i < n; i++) {
                            double t = a * xr[i] + b * zr[i];
                            want += t * t;
                        }
                    else
                        for (int64_t o = 0; o < n; o += 256)
                            want = red_sq(n - o < 256 ? n - o : 256, a, xr + o, b, zr + o, 0.0, 0, 0.0, want);
                    CHECK_SAME(d[3 * r], want, "%s red_sq_aff_rows n=%ld c %d ix %d row %d: %a, want %a",
                               set_names[s], (long)n, c, ix, r, d[3 * r], want);
                    ck_assert(d[3 * r + 1] == 42 && d[3 * r + 2] == 42);
                }
            }
    }
}
END_TEST

/* Products and squares of a sum in one pass, on every set: tx_p_mul_aff,
   tx_p_sq_aff and tx_p_red_sq_aff give the bits (any NaN for a NaN: which operand's
   payload a product of two NaNs keeps is the compiler's choice) of the sum
   through tx_p_axpby or tx_p_scale_add, then tx_p_mul (either operand
   order) or tx_p_pow(2) (then tx_p_divr, by numbers that take both of
   its ways, and tx_p_red_sum), for coefficients that take each case of
   tx_p_axpby, with infinities, NaNs and signed zeros in the data, in
   place too; nothing written past the block. tx_p_div_aff likewise: the
   sum, then tx_p_div or tx_p_recip. */
START_TEST(products_of_sums)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    mul_aff_fn *mul_aff = (mul_aff_fn *)prim(s, "tx_p_mul_aff");
    sq_aff_fn *sq_aff = (sq_aff_fn *)prim(s, "tx_p_sq_aff");
    axpby_fn *axpby = (axpby_fn *)prim(s, "tx_p_axpby");
    scale_add_fn *scale_add = (scale_add_fn *)prim(s, "tx_p_scale_add");
    binary_fn *mul = (binary_fn *)prim(s, "tx_p_mul");
    pow_fn *pw = (pow_fn *)prim(s, "tx_p_pow");
    red_sq_aff_fn *red_sq = (red_sq_aff_fn *)prim(s, "tx_p_red_sq_aff");
    scalar_fn *divr = (scalar_fn *)prim(s, "tx_p_divr");
    scalar_fn *divrf = (scalar_fn *)prim(s, "tx_p_divrf");
    red_fn *red_sum = (red_fn *)prim(s, "tx_p_red_sum");
    div_aff_fn *div_aff = (div_aff_fn *)prim(s, "tx_p_div_aff");
    binary_fn *dvd = (binary_fn *)prim(s, "tx_p_div");
    recip_fn *recip = (recip_fn *)prim(s, "tx_p_recip");
    guarded gd = guard_new();
    static double x[MAXN], y[MAXN], z[MAXN], t[MAXN], w[MAXN];
    /* the last two without z: a plain square (1*x + 0 and + -0, which are x) */
    static const double coefs[][3] = {{1, 1, -0.75}, {1, -1, 2.5}, {-2, 0.5, 0}, {1, 0.5, -0.0}, {1, 0.5, 0.0}};
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        fill_random(x, n, 1);
        fill_random(y, n, l % 2);
        fill_random(z, n, l % 3 != 2);
        for (int q = 0; q < 5; q++)
            for (int withz = 0; withz < 2; withz++) {
                double a = coefs[q][0], b = coefs[q][1], c = coefs[q][2];
                if (withz)
                    axpby(n, a, x, b, z, t);
                else
                    scale_add(n, a, x, c, t);
                for (int first = 0; first < 3; first++) { /* 2: sq_aff */
                    double *d = guard_end(gd, n, sizeof(double));
                    if (first < 2)
                        mul_aff(n, first, y, a, x, b, withz ? z : NULL, c, d);
                    else
                        sq_aff(n, a, x, b, withz ? z : NULL, c, d);
                    if (first == 0)
                        mul(n, y, t, w);
                    else if (first == 1)
                        mul(n, t, y, w);
                    else
                        pw(n, t, 2.0, w);
                    for (int64_t i = 0; i < n; i++)
                        CHECK_SAME(d[i], w[i], "%s %s q %d z %d first %d n=%ld [%ld]: %a, want %a",
                                      set_names[s], first < 2 ? "mul_aff" : "sq_aff", q, withz, first, (long)n,
                                      (long)i, d[i], w[i]);
                }
                /* the sum of the squares, each divided by a number or not:
                   tx_p_sq_aff, tx_p_divr (div 1) or tx_p_divrf (div 2, an
                   f32 product's: 3 and 2^-126 tell the two apart), then
                   tx_p_red_sum */
                static const double dvs[] = {1024, 3, 0x1p-1030, 0.0, -7, 0x1p-126, 0x1p126};
                for (int k = 0; k < 15; k++) {
                    int div = k < 14 ? 1 + k / 7 : 0;
                    double dv = div ? dvs[k % 7] : 0, acc = 0.375 * (q + 1), r1, r2;
                    sq_aff(n, a, x, b, withz ? z : NULL, c, w);
                    if (div)
                        (div == 1 ? divr : divrf)(n, w, dv, w);
                    r1 = red_sum(n, w, acc);
                    r2 = red_sq(n, a, x, b, withz ? z : NULL, c, div, dv, acc);
                    CHECK_SAME(r2, r1, "%s red_sq_aff q %d z %d div %d dv %a n=%ld: %a, want %a", set_names[s], q,
                               withz, div, dv, (long)n, r2, r1);
                }
                /* in place: d the block y (the product) or x (the square) */
                for (int64_t i = 0; i < n; i++)
                    w[i] = y[i];
                mul_aff(n, 0, w, a, x, b, withz ? z : NULL, c, w);
                for (int64_t i = 0; i < n; i++)
                    CHECK_SAME(w[i], y[i] * t[i], "%s mul_aff in place q %d z %d n=%ld [%ld]",
                                  set_names[s], q, withz, (long)n, (long)i);
                /* quotients: y / t (tx_p_div) and 1 / t (tx_p_recip), in place too */
                for (int withy = 0; withy < 2; withy++) {
                    double *d = guard_end(gd, n, sizeof(double));
                    div_aff(n, withy ? y : NULL, 1.0, a, x, b, withz ? z : NULL, c, d);
                    if (withy)
                        dvd(n, y, t, w);
                    else
                        recip(n, 1.0, t, w);
                    for (int64_t i = 0; i < n; i++)
                        CHECK_SAME(d[i], w[i], "%s div_aff q %d z %d y %d n=%ld [%ld]: %a, want %a", set_names[s], q,
                                   withz, withy, (long)n, (long)i, d[i], w[i]);
                }
                for (int64_t i = 0; i < n; i++)
                    w[i] = x[i];
                div_aff(n, y, 1.0, a, w, b, withz ? z : NULL, c, w);
                for (int64_t i = 0; i < n; i++)
                    CHECK_SAME(w[i], y[i] / t[i], "%s div_aff in place q %d z %d n=%ld [%ld]", set_names[s], q, withz,
                               (long)n, (long)i);
            }
    }
    guard_free(gd);
}
END_TEST

/* A product with a term added in one pass, on every set: tx_p_mul_add and
   tx_p_mul_aff_add give the bits (any NaN for a NaN) of the product
   through a scratch block (tx_p_mul; tx_p_divr then tx_p_mul_aff), then
   tx_p_axpby(1, p, e, w) or tx_p_scale_add(1, p, f), for coefficients e
   that take each case of tx_p_axpby, divisors that take both ways of
   tx_p_divr, infinities, NaNs and signed zeros in the data, in place too
   (d the block w or x); nothing written past the block. */
START_TEST(products_with_a_term)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    mul_add_fn *mul_add = (mul_add_fn *)prim(s, "tx_p_mul_add");
    mul_aff_add_fn *mul_aff_add = (mul_aff_add_fn *)prim(s, "tx_p_mul_aff_add");
    mul_aff_fn *mul_aff = (mul_aff_fn *)prim(s, "tx_p_mul_aff");
    axpby_fn *axpby = (axpby_fn *)prim(s, "tx_p_axpby");
    scale_add_fn *scale_add = (scale_add_fn *)prim(s, "tx_p_scale_add");
    binary_fn *mul = (binary_fn *)prim(s, "tx_p_mul");
    scalar_fn *divr = (scalar_fn *)prim(s, "tx_p_divr");
    scalar_fn *divrf = (scalar_fn *)prim(s, "tx_p_divrf");
    guarded gd = guard_new();
    static double x[MAXN], y[MAXN], z[MAXN], w[MAXN], p[MAXN], yd[MAXN], want[MAXN], tmp[MAXN];
    static const double coefs[][3] = {{1, 1, -0.75}, {1, -1, 2.5}, {-2, 0.5, 0}, {1, 0.5, -0.0}};
    static const double es[] = {1, -1, 0.5};
    /* div 1 divides as tx_p_divr, div 2 as tx_p_divrf (an f32 product's:
       3 and 2^-126 tell the two apart) */
    static const double dvs[] = {1024, 3, 0x1p-1030, -0.0, -7, 0x1p-126, 0x1p126};
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        fill_random(x, n, 1);
        fill_random(y, n, l % 2);
        fill_random(z, n, l % 3 != 2);
        fill_random(w, n, l % 2 == 0);
        for (int k = 0; k < 3; k++)
            for (int withw = 0; withw < 2; withw++) {
                double e = es[k], f = withw ? 0 : (k == 2 ? -0.0 : 1.25 * k);
                /* x * y + e*w */
                mul(n, x, y, p);
                if (withw)
                    axpby(n, 1.0, p, e, w, want);
                else
                    scale_add(n, 1.0, p, f, want);
                double *d = guard_end(gd, n, sizeof(double));
                mul_add(n, x, y, e, withw ? w : NULL, f, d);
                for (int64_t i = 0; i < n; i++)
                    CHECK_SAME(d[i], want[i], "%s mul_add e %g w %d n=%ld [%ld]: %a, want %a", set_names[s], e,
                               withw, (long)n, (long)i, d[i], want[i]);
                for (int64_t i = 0; i < n; i++)
                    tmp[i] = withw ? w[i] : x[i];
                if (withw)
                    mul_add(n, x, y, e, tmp, f, tmp);
                else
                    mul_add(n, tmp, y, e, NULL, f, tmp);
                for (int64_t i = 0; i < n; i++)
                    CHECK_SAME(tmp[i], want[i], "%s mul_add in place e %g w %d n=%ld [%ld]", set_names[s], e, withw,
                               (long)n, (long)i);
                /* (y or y/dv) * (a*x + b*z or a*x + c) + e*w */
                for (int q = 0; q < 4; q++)
                    for (int withz = 0; withz < 2; withz++)
                        for (int dk = 0; dk < 15; dk++) {
                            int div = dk < 14 ? 1 + dk / 7 : 0;
                            double a = coefs[q][0], b = coefs[q][1], c = coefs[q][2], dv = div ? dvs[dk % 7] : 0;
                            for (int64_t i = 0; i < n; i++)
                                yd[i] = y[i];
                            if (div)
                                (div == 1 ? divr : divrf)(n, y, dv, yd);
                            for (int first = 0; first < 2; first++) {
                                mul_aff(n, first, yd, a, x, b, withz ? z : NULL, c, p);
                                if (withw)
                                    axpby(n, 1.0, p, e, w, want);
                                else
                                    scale_add(n, 1.0, p, f, want);
                                d = guard_end(gd, n, sizeof(double));
                                mul_aff_add(n, first, y, div, dv, a, x, b, withz ? z : NULL, c, e, withw ? w : NULL, f,
                                            d);
                                for (int64_t i = 0; i < n; i++)
                                    CHECK_SAME(d[i], want[i],
                                               "%s mul_aff_add q %d z %d div %d dv %a first %d e %g w %d n=%ld [%ld]: "
                                               "%a, want %a",
                                               set_names[s], q, withz, div, dv, first, e, withw, (long)n, (long)i,
                                               d[i], want[i]);
                            }
                            /* in place: d the block w (or x without w) */
                            for (int64_t i = 0; i < n; i++)
                                tmp[i] = withw ? w[i] : x[i];
                            mul_aff(n, 0, yd, a, x, b, withz ? z : NULL, c, p);
                            if (withw)
                                axpby(n, 1.0, p, e, w, want);
                            else
                                scale_add(n, 1.0, p, f, want);
                            mul_aff_add(n, 0, y, div, dv, a, withw ? x : tmp, b, withz ? z : NULL, c, e,
                                        withw ? tmp : NULL, f, tmp);
                            for (int64_t i = 0; i < n; i++)
                                CHECK_SAME(tmp[i], want[i], "%s mul_aff_add in place q %d z %d div %d w %d n=%ld [%ld]",
                                           set_names[s], q, withz, div, withw, (long)n, (long)i);
                        }
            }
    }
    guard_free(gd);
}
END_TEST

/* ---- the typed forms (prims.inc's TX_P_TYPED) ----
   Each primitive with typed forms, called through a type that takes its
   blocks as void pointers (the same ABI): CALL runs primitive F on N
   elements of the blocks IN (4 of them, as the case uses them) into D,
   with the parameters of case C (0 .. typed_cases - 1), and returns a
   reduction's value (0 for the others). */
typedef double typed_call_fn(const void *f, int c, int64_t n, const void *const *in, void *d);
enum { TYPED_CASES = 8 };

/* the coefficients of a case: (a, b) for the sum's terms, c the number,
   e and f the added term's, dv the divisor (3 and 2^-126 tell the f64
   and f32 rules apart) */
static const double typed_a[TYPED_CASES] = {1, 1, -2, 1.5, 1, 1, 0.5, -1};
static const double typed_b[TYPED_CASES] = {1, -1, 0.5, -0.25, 1, -1, 2, 1};
static const double typed_c[TYPED_CASES] = {-0.75, 2.5, 0, -0.0, 3, 1e30, -1e-30, 7};
static const double typed_dv[TYPED_CASES] = {3, 0x1p-126, 1024, -0.0, 0x1p-1030, -7, 0x1p126, 3};

#define TYPED_Z(c) ((c) % 3 == 2 ? NULL : in[2])
#define TYPED_W(c) ((c) % 2 == 1 ? NULL : in[3])
typedef void typed_axpby(int64_t, double, const void *, double, const void *, void *);
static double call_axpby(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_axpby *)f)(n, typed_a[c], in[0], typed_b[c], in[1], d);
    return 0;
}
typedef void typed_scale_add(int64_t, double, const void *, double, void *);
static double call_scale_add(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_scale_add *)f)(n, typed_a[c], in[0], typed_c[c], d);
    return 0;
}
typedef void typed_mul_aff(int64_t, int, const void *, double, const void *, double, const void *, double, void *);
static double call_mul_aff(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_mul_aff *)f)(n, c % 2, in[1], typed_a[c], in[0], typed_b[c], TYPED_Z(c), typed_c[c], d);
    return 0;
}
typedef void typed_sq_aff(int64_t, double, const void *, double, const void *, double, void *);
static double call_sq_aff(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_sq_aff *)f)(n, typed_a[c], in[0], typed_b[c], TYPED_Z(c), typed_c[c], d);
    return 0;
}
typedef void typed_div_aff(int64_t, const void *, double, double, const void *, double, const void *, double, void *);
static double call_div_aff(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_div_aff *)f)(n, c % 4 == 3 ? NULL : in[1], typed_dv[c], typed_a[c], in[0], typed_b[c], TYPED_Z(c),
                         typed_c[c], d);
    return 0;
}
typedef void typed_mul_add(int64_t, const void *, const void *, double, const void *, double, void *);
static double call_mul_add(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_mul_add *)f)(n, in[0], in[1], typed_b[c], TYPED_W(c), typed_c[c], d);
    return 0;
}
typedef void typed_mul_aff_add(int64_t, int, const void *, int, double, double, const void *, double, const void *,
                               double, double, const void *, double, void *);
static double call_mul_aff_add(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_mul_aff_add *)f)(n, c / 4, in[1], c % 3, typed_dv[c], typed_a[c], in[0], typed_b[c], TYPED_Z(c),
                             typed_c[c], typed_b[7 - c], TYPED_W(c), typed_c[7 - c], d);
    return 0;
}
typedef void typed_binary(int64_t, const void *, const void *, void *);
static double call_binary(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    (void)c;
    ((typed_binary *)f)(n, in[0], in[1], d);
    return 0;
}
typedef void typed_scalar(int64_t, const void *, double, void *);
static double call_scalar(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_scalar *)f)(n, in[0], typed_dv[c], d);
    return 0;
}
typedef void typed_recip(int64_t, double, const void *, void *);
static double call_recip(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    ((typed_recip *)f)(n, typed_c[c], in[0], d);
    return 0;
}
typedef double typed_red_sq_aff(int64_t, double, const void *, double, const void *, double, int, double, double);
static double call_red_sq_aff(const void *f, int c, int64_t n, const void *const *in, void *d)
{
    (void)d;
    return ((typed_red_sq_aff *)f)(n, typed_a[c], in[0], typed_b[c], TYPED_Z(c), typed_c[c], c % 3, typed_dv[c],
                                   typed_c[7 - c]);
}

static const struct {
    const char *name;
    typed_call_fn *call;
    int reduction; /* returns a value, writes no block: only the _fd form */
} typed_prims[] = {
    {"tx_p_axpby", call_axpby, 0},     {"tx_p_scale_add", call_scale_add, 0}, {"tx_p_mul_aff", call_mul_aff, 0},
    {"tx_p_sq_aff", call_sq_aff, 0},   {"tx_p_div_aff", call_div_aff, 0},     {"tx_p_mul_add", call_mul_add, 0},
    {"tx_p_mul_aff_add", call_mul_aff_add, 0}, {"tx_p_mul", call_binary, 0}, {"tx_p_div", call_binary, 0},
    {"tx_p_muls", call_scalar, 0},     {"tx_p_divr", call_scalar, 0},         {"tx_p_divrf", call_scalar, 0},
    {"tx_p_recip", call_recip, 0},     {"tx_p_red_sq_aff", call_red_sq_aff, 1},
};
enum { NTYPED = sizeof typed_prims / sizeof typed_prims[0] };

/* The typed forms of every such primitive, on every set: _fd (f32
   blocks in) gives the bits of the double form on the blocks converted
   to double (tx_p_load_f32's), _ff those bits rounded to float
   (tx_p_store_f32's), _df the double form's rounded to float; NaNs,
   infinities, zeros of both signs and overflow to infinity in float
   among them; nothing read or written past a block. */
START_TEST(typed_forms)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    guarded gin[4] = {guard_new(), guard_new(), guard_new(), guard_new()}, gd = guard_new();
    static double xd[4][MAXN], want[MAXN];
    static const char *const sfx[3] = {"_fd", "_ff", "_df"};
    for (int p = 0; p < NTYPED; p++) {
        char name[64];
        const void *f0 = prim(s, typed_prims[p].name), *fv[3];
        for (int v = 0; v < (typed_prims[p].reduction ? 1 : 3); v++) {
            snprintf(name, sizeof name, "%s%s", typed_prims[p].name, sfx[v]);
            fv[v] = prim(s, name);
        }
        for (int l = 0; l < NLEN; l++) {
            int64_t n = lengths[l];
            const void *inf[4], *ind[4];
            for (int k = 0; k < 4; k++) {
                float *x = guard_end(gin[k], n, sizeof(float));
                for (int64_t i = 0; i < n; i++) {
                    double r;
                    fill_random(&r, 1, (l + k) % 2);
                    x[i] = (float)(r * 0x1p100 * (rng() % 4 == 0)) + (float)r; /* some overflow in float */
                    xd[k][i] = (double)x[i];
                }
                inf[k] = x;
                ind[k] = xd[k];
            }
            for (int c = 0; c < TYPED_CASES; c++) {
                double r0 = typed_prims[p].call(f0, c, n, ind, want);
                if (typed_prims[p].reduction) {
                    double r1 = typed_prims[p].call(fv[0], c, n, inf, NULL);
                    CHECK_SAME(r1, r0, "%s %s_fd case %d n=%ld: %a, want %a", set_names[s], typed_prims[p].name, c,
                               (long)n, r1, r0);
                    continue;
                }
                double *dd = guard_end(gd, n, sizeof(double));
                typed_prims[p].call(fv[0], c, n, inf, dd);
                for (int64_t i = 0; i < n; i++)
                    CHECK_SAME(dd[i], want[i], "%s %s_fd case %d n=%ld [%ld]: %a, want %a", set_names[s],
                               typed_prims[p].name, c, (long)n, (long)i, dd[i], want[i]);
                for (int v = 1; v < 3; v++) {
                    float *df = guard_end(gd, n, sizeof(float));
                    typed_prims[p].call(fv[v], c, n, v == 1 ? inf : ind, df);
                    for (int64_t i = 0; i < n; i++)
                        CHECK_SAME((double)df[i], (double)(float)want[i], "%s %s%s case %d n=%ld [%ld]: %a, want %a",
                                   set_names[s], typed_prims[p].name, sfx[v], c, (long)n, (long)i, (double)df[i],
                                   (double)(float)want[i]);
                }
            }
        }
    }
    for (int k = 0; k < 4; k++)
        guard_free(gin[k]);
    guard_free(gd);
}
END_TEST

/* ---- the f32 forms (tx_p_NAME_f32): every operation rounded to float ----
   The reference takes the steps one at a time, each operation on two
   floats done in double and rounded to float (the float operation's
   result: double has more than twice float's digits). */
static float f32_op(double x, char op, double y)
{
    return (float)(op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y);
}
/* the sum a*x + b*z (z NULL: a*x + c) with prims.inc's cases */
static float f32_ref_sum(float a, float x, float b, const float *z, float c)
{
    if (z && a == 1 && b == 1)
        return f32_op(x, '+', *z);
    if (z && a == 1 && b == -1)
        return f32_op(x, '-', *z);
    if (z)
        return f32_op(f32_op(a, '*', x), '+', f32_op(b, '*', *z));
    return f32_op(f32_op(a, '*', x), '+', c);
}

typedef void f32_mul_aff_fn(int64_t, int, const float *, float, const float *, float, const float *, float, float *);
typedef void f32_sq_aff_fn(int64_t, float, const float *, float, const float *, float, float *);
typedef void f32_div_aff_fn(int64_t, const float *, float, float, const float *, float, const float *, float, float *);
typedef void f32_mul_add_fn(int64_t, const float *, const float *, float, const float *, float, float *);
typedef void f32_mul_aff_add_fn(int64_t, int, const float *, int, float, float, const float *, float, const float *,
                                float, float, const float *, float, float *);
typedef double f32_red_sq_aff_fn(int64_t, float, const float *, float, const float *, float, int, double, double);
typedef void divr_fn(int64_t, const double *, double, double *);

/* tx_p_mul_aff_f32, tx_p_sq_aff_f32, tx_p_div_aff_f32, tx_p_mul_add_f32,
   tx_p_mul_aff_add_f32 and tx_p_red_sq_aff_f32 on every set, the cases
   of the typed forms (coefficients 1 and -1 among them, a divisor whose
   reciprocal is not a normal float, overflow in float): the floats of
   the steps one by one; the reduction: the squares (as doubles) divided
   as tx_p_divr or tx_p_divrf divide and summed by tx_p_red_sum */
START_TEST(f32_forms)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    f32_mul_aff_fn *mul_aff = (f32_mul_aff_fn *)prim(s, "tx_p_mul_aff_f32");
    f32_sq_aff_fn *sq_aff = (f32_sq_aff_fn *)prim(s, "tx_p_sq_aff_f32");
    f32_div_aff_fn *div_aff = (f32_div_aff_fn *)prim(s, "tx_p_div_aff_f32");
    f32_mul_add_fn *mul_add = (f32_mul_add_fn *)prim(s, "tx_p_mul_add_f32");
    f32_mul_aff_add_fn *mul_aff_add = (f32_mul_aff_add_fn *)prim(s, "tx_p_mul_aff_add_f32");
    f32_red_sq_aff_fn *red_sq = (f32_red_sq_aff_fn *)prim(s, "tx_p_red_sq_aff_f32");
    red_fn *red_sum = (red_fn *)prim(s, "tx_p_red_sum");
    divr_fn *divr = (divr_fn *)prim(s, "tx_p_divr"), *divrf = (divr_fn *)prim(s, "tx_p_divrf");
    static float in[4][MAXN], d[MAXN];
    static double q[MAXN];
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        for (int k = 0; k < 4; k++)
            for (int64_t i = 0; i < n; i++) {
                double r;
                fill_random(&r, 1, (l + k) % 2);
                in[k][i] = (float)(r * 0x1p100 * (rng() % 4 == 0)) + (float)r;
            }
        const float *x = in[0], *y = in[1], *z0 = in[2], *w0 = in[3];
        for (int c = 0; c < TYPED_CASES; c++) {
            float a = (float)typed_a[c], b = (float)typed_b[c], k = (float)typed_c[c];
            float e = (float)typed_b[7 - c], f = (float)typed_c[7 - c], dv = (float)typed_dv[c];
            const float *z = c % 3 == 2 ? NULL : z0, *w = c % 2 == 1 ? NULL : w0;
            int first = c % 2, div = c % 3 == 1 ? 2 : 0;
            double rdv = 1.0 / (double)dv;
            int recip = fabs((double)dv) >= 0x1p-125 && fabs((double)dv) <= 0x1p125;
            float r = (float)rdv;
            mul_aff(n, first, y, a, x, b, z, k, d);
            for (int64_t i = 0; i < n; i++) {
                float t = f32_ref_sum(a, x[i], b, z ? &z[i] : NULL, k);
                float want = first ? f32_op(t, '*', y[i]) : f32_op(y[i], '*', t);
                CHECK_SAME(d[i], want, "%s mul_aff_f32 case %d n=%ld [%ld]", set_names[s], c, (long)n, (long)i);
            }
            div_aff(n, c % 4 == 3 ? NULL : y, k, a, x, b, z, k, d); /* y / t, or k / t */
            for (int64_t i = 0; i < n; i++) {
                float t = f32_ref_sum(a, x[i], b, z ? &z[i] : NULL, k);
                float want = f32_op(c % 4 == 3 ? k : y[i], '/', t);
                CHECK_SAME(d[i], want, "%s div_aff_f32 case %d n=%ld [%ld]", set_names[s], c, (long)n, (long)i);
            }
            sq_aff(n, a, x, b, z, k, d);
            for (int64_t i = 0; i < n; i++) {
                float t = f32_ref_sum(a, x[i], b, z ? &z[i] : NULL, k);
                CHECK_SAME(d[i], f32_op(t, '*', t), "%s sq_aff_f32 case %d n=%ld [%ld]", set_names[s], c, (long)n,
                           (long)i);
                q[i] = (double)f32_op(t, '*', t);
            }
            if (c % 3)
                (c % 3 == 1 ? divrf : divr)(n, q, typed_dv[c], q);
            double got = red_sq(n, a, x, b, z, k, c % 3, typed_dv[c], typed_c[7 - c]);
            CHECK_SAME(got, red_sum(n, q, typed_c[7 - c]), "%s red_sq_aff_f32 case %d n=%ld", set_names[s], c,
                       (long)n);
            mul_add(n, x, y, e, w, f, d);
            for (int64_t i = 0; i < n; i++) {
                float p = f32_op(x[i], '*', y[i]);
                float want = w ? f32_op(p, '+', f32_op(e, '*', w[i])) : f32_op(p, '+', f);
                CHECK_SAME(d[i], want, "%s mul_add_f32 case %d n=%ld [%ld]", set_names[s], c, (long)n, (long)i);
            }
            mul_aff_add(n, first, y, div, dv, a, x, b, z, k, e, w, f, d);
            for (int64_t i = 0; i < n; i++) {
                float t = f32_ref_sum(a, x[i], b, z ? &z[i] : NULL, k);
                float yy = !div ? y[i] : recip ? f32_op(y[i], '*', r) : f32_op(y[i], '/', dv);
                float p = first ? f32_op(t, '*', yy) : f32_op(yy, '*', t);
                float want = w ? f32_op(p, '+', f32_op(e, '*', w[i])) : f32_op(p, '+', f);
                CHECK_SAME(d[i], want, "%s mul_aff_add_f32 case %d n=%ld [%ld]: %a, want %a", set_names[s], c,
                           (long)n, (long)i, d[i], want);
            }
        }
    }
}
END_TEST

/* every PRIM symbol of the table has a test: in tested[], or a typed
   form of a primitive in typed_prims[] */
START_TEST(every_prim_is_tested)
{
    int nprim = 0, ntyped = 0;
    for (const tx_runtime_symbol *e = tx_runtime_symbols; e->name; e++) {
        if (e->group != TXS_PRIM)
            continue;
        nprim++;
        int found = 0;
        for (size_t k = 0; k < sizeof tested / sizeof tested[0]; k++)
            found |= strcmp(tested[k], e->name) == 0;
        for (int k = 0; k < NTYPED; k++) { /* a typed form: typed_forms */
            size_t m = strlen(typed_prims[k].name);
            if (strncmp(e->name, typed_prims[k].name, m) == 0 &&
                (strcmp(e->name + m, "_fd") == 0 ||
                 (!typed_prims[k].reduction && (strcmp(e->name + m, "_ff") == 0 || strcmp(e->name + m, "_df") == 0)))) {
                found = 1;
                ntyped++;
            }
        }
        ck_assert_msg(found, "primitive %s has no test in tests/check_prims.c", e->name);
        ck_assert_msg(e->addr != NULL, "%s has no address", e->name);
    }
    ck_assert_int_eq(nprim, (int)(sizeof tested / sizeof tested[0]) + ntyped);
    printf("check_prims: the library's primitives run at %s\n", tx_rt_isa());
}
END_TEST

/* max and min of a block and a number, on every set: tx_p_maxs and
   tx_p_mins give the bits of tx_p_max and tx_p_min with the number spread
   over a block, in either operand order (which one a NaN or an equal
   zero of the other sign keeps), in place too; nothing written past the
   block. */
START_TEST(max_min_of_a_number)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    minmax_s_fn *fs[2] = {(minmax_s_fn *)prim(s, "tx_p_maxs"), (minmax_s_fn *)prim(s, "tx_p_mins")};
    binary_fn *fb[2] = {(binary_fn *)prim(s, "tx_p_max"), (binary_fn *)prim(s, "tx_p_min")};
    guarded gd = guard_new();
    static double x[MAXN], c[MAXN], want[MAXN], tmp[MAXN];
    static const double cs[] = {0, -0.0, 1.5, -1, NAN, INFINITY, -INFINITY};
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        fill_random(x, n, 1);
        for (int64_t i = 0; i < n; i += 5)
            x[i] = i % 10 ? 0.0 : -0.0; /* zeros of both signs against the zeros below */
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
            for (int op = 0; op < 2; op++)
                for (int cfirst = 0; cfirst < 2; cfirst++) {
                    for (int64_t i = 0; i < n; i++)
                        c[i] = cs[k];
                    if (cfirst)
                        fb[op](n, c, x, want);
                    else
                        fb[op](n, x, c, want);
                    double *d = guard_end(gd, n, sizeof(double));
                    fs[op](n, x, cs[k], cfirst, d);
                    for (int64_t i = 0; i < n; i++)
                        ck_assert_msg(same_bits(d[i], want[i]), "%s %s(%a) cfirst %d n=%ld [%ld]: %a, want %a",
                                      set_names[s], op ? "mins" : "maxs", cs[k], cfirst, (long)n, (long)i, d[i],
                                      want[i]);
                    for (int64_t i = 0; i < n; i++)
                        tmp[i] = x[i];
                    fs[op](n, tmp, cs[k], cfirst, tmp);
                    for (int64_t i = 0; i < n; i++)
                        ck_assert_msg(same_bits(tmp[i], want[i]), "%s %s in place n=%ld [%ld]", set_names[s],
                                      op ? "mins" : "maxs", (long)n, (long)i);
                }
    }
    guard_free(gd);
}
END_TEST

/* The f32 sum over an outer label, on every set: each element the row's
   value plus the sum of its column, in double, rows in order, rounded to
   float once, for every length (past TX_BLOCK too, and past the 4096 of
   one pass over a double row) and row counts around the eight rows of a
   pass; nothing written past the row. */
START_TEST(f32_sum_of_rows)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    addf_rows_fn *addf = (addf_rows_fn *)prim(s, "tx_p_addf_rows");
    guarded gd = guard_new();
    static const int64_t ks[] = {0, 1, 3, 4, 5, 7, 8, 9, 16, 17, 33};
    for (int l = 0; l <= NLEN; l++) /* l == NLEN: one row longer than a pass */
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
            int64_t n = l < NLEN ? lengths[l] : 4096 + 37, k = ks[q], ld = n + 5;
            float *m = malloc((size_t)(k * ld + 1) * sizeof(float));
            for (int64_t i = 0; i < k * ld; i++)
                m[i] = (float)ldexp(2 * u01() - 1, (int)(rng() % 41) - 20);
            float *d = guard_end(gd, n, sizeof(float)), *d0 = malloc((size_t)(n + 1) * sizeof(float));
            for (int64_t i = 0; i < n; i++)
                d[i] = d0[i] = (float)ldexp(2 * u01() - 1, (int)(rng() % 41) - 20);
            addf(n, k, m, ld, d);
            for (int64_t i = 0; i < n; i++) {
                volatile double want = d0[i];
                for (int64_t r = 0; r < k; r++)
                    want += (double)m[r * ld + i];
                float wf = (float)want;
                ck_assert_msg(memcmp(&d[i], &wf, sizeof wf) == 0, "%s addf_rows(k=%ld) n=%ld [%ld]: %a, want %a",
                              set_names[s], (long)k, (long)n, (long)i, d[i], wf);
            }
            free(m);
            free(d0);
        }
    guard_free(gd);
}
END_TEST

/* A max and a min over an outer label, on every set: each element the
   fold of its column into the row's value in row order, as the scalar
   reduction folds (x > acc or x a NaN takes x: the first NaN of the
   column wins, of two equal values the earlier stays, so +0 and -0 keep
   their order), in double and in float, for every length and row counts
   around the eight rows of a pass; nothing written past the row. */
typedef void ext_rows_fn(int64_t, int64_t, const double *, int64_t, double *);
typedef void extf_rows_fn(int64_t, int64_t, const float *, int64_t, float *);

static double pick_special(int64_t i)
{
    /* NaNs of two payloads, zeros of both signs, infinities, equal values */
    static const double sp[] = {0.0, -0.0, 1.0 / 0.0, -1.0 / 0.0, 0.5, -0.5};
    switch (rng() % 16) {
    case 0: return nan("1");
    case 1: return nan("2");
    case 2: case 3: case 4: return sp[rng() % 6];
    default: return ldexp(2 * u01() - 1, (int)(i % 11) - 5);
    }
}

/* A datum for a fold test of OP (0 +, 1 *, 2 max, 3 min) at index I: for
   a sum, a number of 2^(I mod SPREAD - SPREAD/2) magnitude (NaNs only
   where their order decides: which of two NaNs a sum keeps is the
   compiler's operand order); for a product, near 1; for max and min,
   specials (pick_special) and, every fourth, a zero of either sign (ties
   of +0 and -0). */
static double fold_datum(int op, int64_t i, int spread)
{
    return op == 0   ? ldexp(2 * u01() - 1, (int)(i % spread) - spread / 2)
           : op == 1 ? 1 + (u01() - 0.5) / 64
           : i % 4   ? pick_special(i)
           : rng() % 2 ? 0.0
                       : -0.0;
}

/* The identity of fold OP, and one step of the scalar fold */
static double fold_identity(int op)
{
    return op == 0 ? 0.0 : op == 1 ? 1.0 : op == 2 ? -1.0 / 0.0 : 1.0 / 0.0;
}

static double fold_step(int op, double acc, double v)
{
    switch (op) {
    case 0: return acc + v;
    case 1: return acc * v;
    case 2: return v > acc || v != v ? v : acc;
    default: return v < acc || v != v ? v : acc;
    }
}

START_TEST(extremum_of_rows)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    ext_rows_fn *fn[2] = {(ext_rows_fn *)prim(s, "tx_p_max_rows"), (ext_rows_fn *)prim(s, "tx_p_min_rows")};
    extf_rows_fn *ff[2] = {(extf_rows_fn *)prim(s, "tx_p_maxf_rows"), (extf_rows_fn *)prim(s, "tx_p_minf_rows")};
    guarded gd = guard_new();
    static const int64_t ks[] = {0, 1, 3, 7, 8, 9, 16, 17, 33};
    for (int op = 0; op < 2; op++)
        for (int l = 0; l < NLEN; l++)
            for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
                int64_t n = lengths[l], k = ks[q], ld = n + 3;
                double *m = malloc((size_t)(k * ld + 1) * sizeof(double));
                float *mf = malloc((size_t)(k * ld + 1) * sizeof(float));
                for (int64_t i = 0; i < k * ld; i++)
                    mf[i] = (float)(m[i] = i % 4 ? pick_special(i) : rng() % 2 ? 0.0 : -0.0); /* ties of zeros */
                double *d = guard_end(gd, n, sizeof(double)), *d0 = malloc((size_t)(n + 1) * sizeof(double));
                for (int64_t i = 0; i < n; i++)
                    d[i] = d0[i] = rng() % 4 ? (op ? 1.0 / 0.0 : -1.0 / 0.0) : pick_special(i);
                fn[op](n, k, m, ld, d);
                for (int64_t i = 0; i < n; i++) {
                    double want = d0[i];
                    for (int64_t r = 0; r < k; r++) {
                        double x = m[r * ld + i];
                        want = (op ? x < want : x > want) || x != x ? x : want;
                    }
                    CHECK_SAME(d[i], want, "%s %s_rows(k=%ld) n=%ld [%ld]", set_names[s], op ? "min" : "max", (long)k,
                               (long)n, (long)i);
                }
                float *e = guard_end(gd, n, sizeof(float));
                for (int64_t i = 0; i < n; i++)
                    e[i] = (float)d0[i];
                ff[op](n, k, mf, ld, e);
                for (int64_t i = 0; i < n; i++) {
                    float want = (float)d0[i];
                    for (int64_t r = 0; r < k; r++) {
                        float x = mf[r * ld + i];
                        want = (op ? x < want : x > want) || x != x ? x : want;
                    }
                    ck_assert_msg(memcmp(&e[i], &want, sizeof want) == 0, "%s %sf_rows(k=%ld) n=%ld [%ld]: %a, want %a",
                                  set_names[s], op ? "min" : "max", (long)k, (long)n, (long)i, e[i], want);
                }
                free(m);
                free(mf);
                free(d0);
            }
    guard_free(gd);
}
END_TEST

/* Scans of K lines in one call, on every set: each element the fold of
   its line up to it, from OP's identity, in double, in order (a NaN
   winning max and min from where it appears), stored in the line's type;
   lines of K = 1, 4 (one group of four) and 7 (a group and three more),
   read and written with strides of either sign (a right-to-left scan, a
   column); nothing written between the strided elements. */
typedef void scan_fn(int64_t, int64_t, int, const double *, int64_t, int64_t, double *, int64_t, int64_t);
typedef void scanf_fn(int64_t, int64_t, int, const float *, int64_t, int64_t, float *, int64_t, int64_t);

START_TEST(scans)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    scan_fn *sc = (scan_fn *)prim(s, "tx_p_scan");
    scanf_fn *sf = (scanf_fn *)prim(s, "tx_p_scanf");
    static const int64_t incs[][2] = {{1, 1}, {3, 2}, {-1, -1}, {2, -3}};
    static const int64_t ks[] = {1, 4, 7};
    for (int op = 0; op < 4; op++)
        for (int l = 0; l < NLEN; l++)
            for (size_t q = 0; q < sizeof incs / sizeof incs[0]; q++)
                for (size_t kk = 0; kk < sizeof ks / sizeof ks[0]; kk++) {
                    int64_t n = lengths[l], ix = incs[q][0], id = incs[q][1], k = ks[kk];
                    int64_t ax = ix < 0 ? -ix : ix, ad = id < 0 ? -id : id, lx = n * ax + 1, ld = n * ad + 1;
                    double *x = malloc((size_t)(k * lx) * sizeof(double)), *d = malloc((size_t)(k * ld) * sizeof(double));
                    float *xf = malloc((size_t)(k * lx) * sizeof(float)), *df = malloc((size_t)(k * ld) * sizeof(float));
                    for (int64_t i = 0; i < k * lx; i++)
                        xf[i] = (float)(x[i] = fold_datum(op, i, 11));
                    for (int64_t i = 0; i < k * ld; i++)
                        d[i] = df[i] = 42;
                    /* the first line's first element: the end a negative stride starts from */
                    int64_t ox = ix < 0 ? (n ? n - 1 : 0) * ax : 0, od = id < 0 ? (n ? n - 1 : 0) * ad : 0;
                    sc(k, n, op, x + ox, lx, ix, d + od, ld, id);
                    sf(k, n, op, xf + ox, lx, ix, df + od, ld, id);
                    for (int64_t r = 0; r < k; r++) {
                        const double *x0 = x + ox + r * lx;
                        const float *xf0 = xf + ox + r * lx;
                        const double *d0 = d + od + r * ld;
                        const float *df0 = df + od + r * ld;
                        double a = fold_identity(op), af = a;
                        for (int64_t j = 0; j < n; j++) {
                            a = fold_step(op, a, x0[j * ix]);
                            af = fold_step(op, af, (double)xf0[j * ix]);
                            float wf = (float)af;
                            CHECK_SAME(d0[j * id], a, "%s scan(op %d) k=%ld line %ld n=%ld inc %ld,%ld [%ld]", set_names[s],
                                       op, (long)k, (long)r, (long)n, (long)ix, (long)id, (long)j);
                            ck_assert_msg(memcmp(&df0[j * id], &wf, sizeof wf) == 0, "%s scanf(op %d) line %ld n=%ld [%ld]",
                                          set_names[s], op, (long)r, (long)n, (long)j);
                        }
                    }
                    int64_t touched = 0;
                    for (int64_t i = 0; i < k * ld; i++)
                        touched += d[i] != 42 || df[i] != 42;
                    ck_assert_msg(touched <= k * n, "%s scan(op %d) n=%ld: %ld elements written", set_names[s], op,
                                  (long)n, (long)touched);
                    free(x);
                    free(d);
                    free(xf);
                    free(df);
                }
}
END_TEST

/* Rows reduced in one call, on every set: a row shorter than 16 folded
   element by element in order from the identity (the scalar loop's bits:
   ties of signed zeros and NaNs decide), eight rows at once and the rest;
   a longer row exactly as tx_p_red_chunked with the set's tx_p_red_OP,
   one chunk or several; the results at a stride, nothing between them
   written. */
typedef void red_rows_fn(int64_t, int64_t, int, const double *, int64_t, double *, int64_t);
typedef void redff_rows_fn(int64_t, int64_t, int, const float *, int64_t, float *, int64_t);


/* The shapes of reductions_of_rows: case C of ROWS_CASES, K rows of N
   elements, IX apart (two elements of gap); 0 for a case too large. */
static const int64_t rows_ns[] = {0, 1, 2, 7, 10, 15, 16, 17, 31, 50, 1000, 40000};
static const int64_t rows_ks[] = {1, 3, 8, 9, 17};
enum { ROWS_KS = sizeof rows_ks / sizeof rows_ks[0], ROWS_CASES = sizeof rows_ns / sizeof rows_ns[0] * ROWS_KS };

static int rows_shape(int c, int64_t *n, int64_t *k, int64_t *ix)
{
    *n = rows_ns[c / ROWS_KS];
    *k = rows_ks[c % ROWS_KS];
    *ix = *n + 2;
    return *n * *k <= 200000;
}

START_TEST(reductions_of_rows)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    red_rows_fn *rows = (red_rows_fn *)prim(s, "tx_p_red_rows");
    chunked_fn *chunked = (chunked_fn *)prim(s, "tx_p_red_chunked");
    red_fn *red[4] = {(red_fn *)prim(s, "tx_p_red_sum"), (red_fn *)prim(s, "tx_p_red_prod"),
                      (red_fn *)prim(s, "tx_p_red_max"), (red_fn *)prim(s, "tx_p_red_min")};
    for (int op = 0; op < 4; op++)
        for (int c = 0; c < ROWS_CASES; c++) {
            int64_t n, k, ix, id = 3;
            if (!rows_shape(c, &n, &k, &ix))
                continue;
            double *x = malloc((size_t)(k * ix + 1) * sizeof(double)), *d = malloc((size_t)(k * id) * sizeof(double));
            for (int64_t i = 0; i < k * ix; i++)
                x[i] = fold_datum(op, i, 11);
            for (int64_t i = 0; i < k * id; i++)
                d[i] = 42;
            rows(k, n, op, x, ix, d, id);
            const double init = fold_identity(op);
            for (int64_t r = 0; r < k; r++) {
                const double *x0 = x + r * ix;
                double want = init;
                if (n >= 16)
                    want = chunked(red[op], n, x0, init);
                else
                    for (int64_t j = 0; j < n; j++)
                        want = fold_step(op, want, x0[j]);
                CHECK_SAME(d[r * id], want, "%s red_rows(op %d) n=%ld k=%ld row %ld", set_names[s], op, (long)n,
                           (long)k, (long)r);
                for (int64_t g = 1; g < id; g++)
                    ck_assert_msg(d[r * id + g] == 42, "%s red_rows: written between results", set_names[s]);
            }
            free(x);
            free(d);
        }
    /* f32 rows into f32 results: in double, rounded once; a long row in
       spans of 8 blocks through the set's tx_p_redf_OP */
    redff_rows_fn *rowsf = (redff_rows_fn *)prim(s, "tx_p_redf_rows");
    redf_fn *redf[4] = {(redf_fn *)prim(s, "tx_p_redf_sum"), (redf_fn *)prim(s, "tx_p_redf_prod"),
                       (redf_fn *)prim(s, "tx_p_redf_max"), (redf_fn *)prim(s, "tx_p_redf_min")};
    for (int op = 0; op < 4; op++)
        for (int c = 0; c < ROWS_CASES; c++) {
            int64_t n, k, ix, id = 3;
            if (!rows_shape(c, &n, &k, &ix))
                continue;
            float *x = malloc((size_t)(k * ix + 1) * sizeof(float)), *d = malloc((size_t)(k * id) * sizeof(float));
            for (int64_t i = 0; i < k * ix; i++)
                x[i] = (float)fold_datum(op, i, 61); /* sums that round in double */
            for (int64_t i = 0; i < k * id; i++)
                d[i] = 42;
            rowsf(k, n, op, x, ix, d, id);
            for (int64_t r = 0; r < k; r++) {
                const float *x0 = x + r * ix;
                double want = fold_identity(op);
                if (n >= 16)
                    for (int64_t o = 0; o < n; o += 8 * 256) /* 8 blocks of prims.inc's TX_BLOCK */
                        want = redf[op](n - o < 8 * 256 ? n - o : 8 * 256, x0 + o, want);
                else
                    for (int64_t j = 0; j < n; j++)
                        want = fold_step(op, want, (double)x0[j]);
                float wf = (float)want;
                ck_assert_msg(memcmp(&d[r * id], &wf, sizeof wf) == 0, "%s redf_rows(op %d) n=%ld k=%ld row %ld: %a, want %a",
                              set_names[s], op, (long)n, (long)k, (long)r, d[r * id], wf);
                for (int64_t g = 1; g < id; g++)
                    ck_assert_msg(d[r * id + g] == 42, "%s redf_rows: written between results", set_names[s]);
            }
            free(x);
            free(d);
        }
}
END_TEST

/* The tiles of a permuting copy, on every set: every element of the
   R x C tile where it belongs (d[i*ld + j] = s[i*sb + j*st]), for tile
   sides 0..9, 15..17 and 61..64 (the blocks of 4x4, 4x8 and 8x16 and
   every remainder), the source's rows contiguous (sb 1, a transpose) or
   not, and nothing of the destination's rows written past C (the gap up to ld is left alone);
   with plain and with streaming stores (an odd LD: rows that start on 16
   bytes stream, the others cannot). tx_p_tile_next_f64 (sb 1, plain
   stores), asking for the next plane's lines or nothing, likewise. */
typedef void tile_next_fn(int64_t, int64_t, const double *, int64_t, int64_t, double *, int64_t);
START_TEST(copy_tiles)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    tile_f64_fn *t64 = (tile_f64_fn *)prim(s, "tx_p_tile_f64");
    tile_f32_fn *t32 = (tile_f32_fn *)prim(s, "tx_pf_tile");
    tile_next_fn *tn = (tile_next_fn *)prim(s, "tx_p_tile_next_f64");
    static double dstn[64 * 67];
    static const int64_t sides[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 61, 63, 64};
    const int ns = (int)(sizeof sides / sizeof sides[0]);
    enum { LD = 67, ST = 70 }; /* destination row, source column steps */
    static double src[3 * 64 * ST], dst[64 * LD];
    static float srcf[3 * 64 * ST], dstf[64 * LD];
    for (int64_t i = 0; i < 3 * 64 * ST; i++) {
        src[i] = (double)i + 0.5;
        srcf[i] = (float)i + 0.25f;
    }
    for (int x = 0; x < ns; x++)
        for (int y = 0; y < ns; y++)
            for (int64_t sb = 1; sb <= 3; sb += 2)
                for (int stream = 0; stream <= 1; stream++) {
                int64_t r = sides[x], c = sides[y];
                for (int64_t i = 0; i < 64 * LD; i++) {
                    dst[i] = -1;
                    dstf[i] = -1;
                }
                t64(r, c, src, sb, ST, dst, LD, stream);
                t32(r, c, srcf, sb, ST, dstf, LD, stream);
                const int next = sb == 1 && !stream;
                if (next) {
                    for (int64_t i = 0; i < 64 * LD; i++)
                        dstn[i] = -1;
                    tn(r, c, src, ST, (x + y) % 2 ? c * ST : 0, dstn, LD);
                }
                for (int64_t i = 0; i < 64; i++)
                    for (int64_t j = 0; j < LD; j++) {
                        int in = i < r && j < c;
                        double want = in ? src[i * sb + j * ST] : -1;
                        float wantf = in ? srcf[i * sb + j * ST] : -1;
                        ck_assert_msg(same_bits(dst[i * LD + j], want) && dstf[i * LD + j] == wantf &&
                                          (!next || same_bits(dstn[i * LD + j], want)),
                                      "%s tile r=%ld c=%ld sb=%ld stream=%d at (%ld, %ld)", set_names[s], (long)r,
                                      (long)c, (long)sb, stream, (long)i, (long)j);
                    }
                }
}
END_TEST

/* Copies larger than a tile, on every set: R x C up to 200 x 200 (several
   tiles each way), into destinations whose rows are a whole number of
   64-byte lines apart (LD 208: the first band is narrower, prims.inc), a
   whole number of 32 bytes (204 doubles; its floats are not), or neither
   (201), and start 0 to 15 elements past a line, sb 1 and 3, plain and
   streaming: every element where it belongs and nothing else written.
   Where sb is 1 (a transpose), also sources whose rows are a whole number
   of lines apart (608 doubles or floats) or of 32 bytes (612 doubles),
   starting 0, 2 or 5 elements past a line: the first band of rows is
   then narrower, up to the source's first boundary (prims.inc). */
START_TEST(copy_bands)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    tile_f64_fn *t64 = (tile_f64_fn *)prim(s, "tx_p_tile_f64");
    tile_f32_fn *t32 = (tile_f32_fn *)prim(s, "tx_pf_tile");
    static const int64_t sides[] = {1, 65, 130, 200}, lds[] = {208, 204, 201};
    static const int64_t sts[] = {611, 608, 612}, soffs[] = {0, 2, 5};
    enum { MAXLD = 208, ST = 612, PAD = 16 };
    static double src[3 * 200 * ST + PAD] __attribute__((aligned(64)));
    static float srcf[3 * 200 * ST + PAD] __attribute__((aligned(64)));
    static double dst[200 * MAXLD + PAD] __attribute__((aligned(64)));
    static float dstf[200 * MAXLD + PAD] __attribute__((aligned(64)));
    for (int64_t i = 0; i < 3 * 200 * ST + PAD; i++) {
        src[i] = (double)i + 0.5;
        srcf[i] = (float)(i % 1000000) + 0.25f;
    }
    for (int l = 0; l < 3; l++)
        for (int x = 0; x < 4; x++)
            for (int y = 0; y < 4; y++)
                for (int64_t off = 0; off < PAD; off += 3)
                    for (int v = 0; v < 8; v++)
                        for (int stream = 0; stream <= 1; stream++) {
                            /* v 0: sb 3; v 1..7: sb 1, source step and offset */
                            const int64_t sb = v ? 1 : 3, st = v ? sts[(v + 2) / 3 % 3] : sts[0];
                            const int64_t so = v ? soffs[(v + 2) % 3] : 0;
                            const double *sp = src + so;
                            const float *spf = srcf + so;
                            int64_t r = sides[x], c = sides[y], ld = lds[l];
                            for (int64_t i = 0; i < 200 * MAXLD + PAD; i++) {
                                dst[i] = -1;
                                dstf[i] = -1;
                            }
                            t64(r, c, sp, sb, st, dst + off, ld, stream);
                            t32(r, c, spf, sb, st, dstf + off, ld, stream);
                            int64_t bad = -1; /* (one assertion per copy: each costs a write to Check's pipe) */
                            for (int64_t k = 0; k < 200 * MAXLD + PAD && bad < 0; k++) {
                                int64_t i = (k - off) / ld, j = (k - off) % ld;
                                int in = k >= off && i < r && j < c;
                                double want = in ? sp[i * sb + j * st] : -1;
                                float wantf = in ? spf[i * sb + j * st] : -1;
                                if (!same_bits(dst[k], want) || dstf[k] != wantf)
                                    bad = k;
                            }
                            ck_assert_msg(bad < 0,
                                          "%s band r=%ld c=%ld ld=%ld off=%ld sb=%ld st=%ld source+%ld stream=%d at %ld",
                                          set_names[s], (long)r, (long)c, (long)ld, (long)off, (long)sb, (long)st,
                                          (long)so, stream, (long)bad);
                        }
}
END_TEST

/* Streamed transposes taller than a block of bands (prims.inc's
   TX_BAND_BLOCK: 1024 rows of doubles, 2048 of floats), on every set: R
   rows of 1 to 40 columns, R 1030 and 2100 (one block and a part, two
   and a part), the source's rows a whole number of lines apart and 0 or
   2 elements past one (the first tile shorter) or neither, into rows a
   whole number of lines apart or not: every element where it belongs and
   nothing past C written; the same with plain stores. */
START_TEST(copy_band_blocks)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    tile_f64_fn *t64 = (tile_f64_fn *)prim(s, "tx_p_tile_f64");
    tile_f32_fn *t32 = (tile_f32_fn *)prim(s, "tx_pf_tile");
    static const int64_t rows[] = {1030, 2100}, cols[] = {1, 17, 40};
    enum { MAXR = 2100, MAXC = 40, ST0 = 2112, LDX = 48 };
    static double src[MAXC * (ST0 + 8) + 8] __attribute__((aligned(64)));
    static float srcf[MAXC * (ST0 + 8) + 8] __attribute__((aligned(64)));
    static double dst[MAXR * LDX] __attribute__((aligned(64)));
    static float dstf[MAXR * LDX] __attribute__((aligned(64)));
    for (int64_t i = 0; i < MAXC * (ST0 + 8) + 8; i++) {
        src[i] = (double)i + 0.5;
        srcf[i] = (float)i + 0.25f;
    }
    for (int x = 0; x < 2; x++)
        for (int y = 0; y < 3; y++)
            for (int v = 0; v < 3; v++)
                for (int l = 0; l < 2; l++)
                    for (int stream = 0; stream <= 1; stream++) {
                        const int64_t r = rows[x], c = cols[y], st = v < 2 ? ST0 : ST0 + 3, so = v == 1 ? 2 : 0;
                        const int64_t ld = l ? LDX : c + 3;
                        for (int64_t i = 0; i < MAXR * LDX; i++) {
                            dst[i] = -1;
                            dstf[i] = -1;
                        }
                        t64(r, c, src + so, 1, st, dst, ld, stream);
                        t32(r, c, srcf + so, 1, st, dstf, ld, stream);
                        int64_t bad = -1;
                        for (int64_t k = 0; k < MAXR * LDX && bad < 0; k++) {
                            int64_t i = k / ld, j = k % ld;
                            int in = i < r && j < c;
                            double want = in ? src[so + i + j * st] : -1;
                            float wantf = in ? srcf[so + i + j * st] : -1;
                            if (!same_bits(dst[k], want) || dstf[k] != wantf)
                                bad = k;
                        }
                        ck_assert_msg(bad < 0, "%s band blocks r=%ld c=%ld st=%ld source+%ld ld=%ld stream=%d at %ld",
                                      set_names[s], (long)r, (long)c, (long)st, (long)so, (long)ld, stream, (long)bad);
                    }
}
END_TEST

/* Streaming copies, on every set (the library's at the width of its
   level, 16 bytes at a time around the vectors): t[0..n) = s[0..n) bit
   for bit (NaNs too) for every length of `lengths` and 1 to 70, the target 0 to 17
   elements past a 64-byte line (plain stores before its first 16-byte
   boundary: an f32 target 4 bytes past one), and nothing written around
   it; the source read up to its end and no further (it ends where a page
   that may not be touched begins). Then the fence. */
typedef void stream_f64_fn(int64_t, const double *, double *);
typedef void stream_f32_fn(int64_t, const float *, float *);
START_TEST(streamed_copies)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    stream_f64_fn *st = (stream_f64_fn *)prim(s, "tx_p_stream_f64");
    stream_f32_fn *stf = (stream_f32_fn *)prim(s, "tx_pf_stream");
    void (*fence)(void) = (void (*)(void))prim(s, "tx_p_stream_fence");
    enum { PAD = 18, MAXS = MAXN + 2 * PAD };
    static double dst[MAXS] __attribute__((aligned(64)));
    static float dstf[MAXS] __attribute__((aligned(64)));
    guarded gs = guard_new(), gf = guard_new();
    for (int l = 0; l < NLEN + 70; l++) {
        int64_t n = l < NLEN ? lengths[l] : l - NLEN + 1;
        double *src = guard_end(gs, n, sizeof(double));
        float *srcf = guard_end(gf, n, sizeof(float));
        fill_random(src, n, 1);
        for (int64_t i = 0; i < n; i++)
            srcf[i] = (float)src[i];
        for (int64_t off = 0; off < PAD; off++) {
            for (int64_t i = 0; i < MAXS; i++) {
                dst[i] = -1;
                dstf[i] = -1;
            }
            st(n, src, dst + off);
            stf(n, srcf, dstf + off);
            fence();
            int64_t bad = -1;
            for (int64_t k = 0; k < MAXS && bad < 0; k++) {
                int in = k >= off && k < off + n;
                float wantf = in ? srcf[k - off] : -1;
                if (!same_bits(dst[k], in ? src[k - off] : -1) || memcmp(&dstf[k], &wantf, sizeof wantf) != 0)
                    bad = k;
            }
            ck_assert_msg(bad < 0, "%s stream n=%ld off=%ld at %ld", set_names[s], (long)n, (long)off, (long)bad);
        }
    }
    guard_free(gs);
    guard_free(gf);
}
END_TEST

/* The streaming note (prims.inc's tx_p_nt_note), on every set: a
   primitive whose block lies in the noted range streams it and writes the
   same numbers as without the note (bit for bit, but a NaN's payload,
   which may come from either operand of a product when both are NaN):
   f64 targets, a product, a product by a number, a cube, a select, a
   product of a sum plus a term, and exp, tanh of a product by a number
   and x^2.5 (the vector functions, which store as always); f32 targets,
   tx_p_mul_df, tx_pf_bin and tx_pf_map's exp. At every alignment from 0 to 17
   elements past a line and every length of lengths[] and 1 to 70,
   nothing written before or after the block; a block outside the range
   (the note set elsewhere) is written as always; the note cleared,
   nothing streams. */
typedef void nt_note_fn(void *, int64_t);
typedef void mul_df_fn(int64_t, const double *, const double *, float *);
START_TEST(streaming_note)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    nt_note_fn *note = (nt_note_fn *)prim(s, "tx_p_nt_note");
    void (*fence)(void) = (void (*)(void))prim(s, "tx_p_stream_fence");
    binary_fn *mul = (binary_fn *)prim(s, "tx_p_mul"), *mx = (binary_fn *)prim(s, "tx_p_max");
    scalar_fn *muls = (scalar_fn *)prim(s, "tx_p_muls");
    pow_fn *pw = (pow_fn *)prim(s, "tx_p_pow");
    mul_aff_add_fn *maa = (mul_aff_add_fn *)prim(s, "tx_p_mul_aff_add");
    mul_df_fn *muldf = (mul_df_fn *)prim(s, "tx_p_mul_df");
    pf_bin_fn *pfb = (pf_bin_fn *)prim(s, "tx_pf_bin");
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    map_aff_fn *maff = (map_aff_fn *)prim(s, "tx_p_map_aff");
    pf_map_fn *pfmap = (pf_map_fn *)prim(s, "tx_pf_map");
    enum { PAD = 18, MAXS = MAXN + 2 * PAD, NK = 11 };
    static const int f32_target[NK] = {0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1};
    static double x[MAXN], y[MAXN], z[MAXN], want[MAXS], got[MAXS] __attribute__((aligned(64)));
    static float xf[MAXN], yf[MAXN], wantf[MAXS], gotf[MAXS] __attribute__((aligned(64)));
    fill_random(x, MAXN, 1);
    fill_random(y, MAXN, 1);
    fill_random(z, MAXN, 0);
    for (int64_t i = 0; i < MAXN; i++) {
        xf[i] = (float)x[i];
        yf[i] = (float)y[i];
    }
    for (int l = 0; l < NLEN + 70; l++) {
        int64_t n = l < NLEN ? lengths[l] : l - NLEN + 1;
        for (int64_t off = 0; off < PAD; off++)
            for (int k = 0; k < NK; k++)
                for (int mode = 0; mode < 3; mode++) { /* noted, noted elsewhere, cleared */
                    for (int64_t i = 0; i < MAXS; i++) {
                        want[i] = got[i] = -1;
                        wantf[i] = gotf[i] = -1;
                    }
                    for (int pass = 0; pass < 2; pass++) {
                        double *d = (pass ? got : want) + off;
                        float *df = (pass ? gotf : wantf) + off;
                        if (pass && mode == 0)
                            note(f32_target[k] ? (void *)df : (void *)d, n * (int64_t)(f32_target[k] ? 4 : 8));
                        else if (pass && mode == 1)
                            note(f32_target[k] ? (void *)(df + n) : (void *)(d + n), 4096);
                        switch (k) {
                        case 0: mul(n, x, y, d); break;
                        case 1: muls(n, x, -1.25, d); break;
                        case 2: pw(n, x, 3.0, d); break;
                        case 3: mx(n, x, y, d); break;
                        case 4: maa(n, 1, y, 0, 1.0, 2.0, x, -1.0, z, 0.5, 1.5, z, 0.0, d); break;
                        case 5: muldf(n, x, y, df); break;
                        case 6: pfb(n, 2, xf, 1, yf, 1, df); break;
                        case 7: map(n, 2, x, d); break;
                        case 8: maff(n, 8, 0.5, x, 0.0, NULL, -0.0, d); break;
                        case 9: pw(n, x, 2.5, d); break;
                        default: pfmap(n, 2, xf, df); break;
                        }
                        note(NULL, 0);
                        fence();
                    }
                    int64_t bad = -1;
                    for (int64_t i = 0; i < MAXS && bad < 0; i++)
                        if (!same(got[i], want[i]) || !same(gotf[i], wantf[i]) ||
                            ((i < off || i >= off + n) && (got[i] != -1 || gotf[i] != -1)))
                            bad = i;
                    ck_assert_msg(bad < 0, "%s note: primitive %d, mode %d, n=%ld off=%ld: element %ld", set_names[s],
                                  k, mode, (long)n, (long)off, (long)bad);
                }
    }
}
END_TEST

/* Numbers spread over rows, on every set: d[r*m + j] = s[r*inc] for 0 to
   17 rows of 0 to 16 elements, inc 1, 3 and 0, bit for bit (NaNs too),
   nothing written past the k*m elements (the block ends at a page that
   may not be touched), nothing read past the last row's number; and a
   row repeated (tx_p_repeat_rows): d[r*m + j] = s[j], nothing read past
   the row. */
typedef void spread_rows_prim_fn(int64_t, int64_t, const double *, int64_t, double *);
START_TEST(spreads_over_rows)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    spread_rows_prim_fn *sp = (spread_rows_prim_fn *)prim(s, "tx_p_spread_rows");
    void (*rp)(int64_t, int64_t, const double *, double *) =
        (void (*)(int64_t, int64_t, const double *, double *))prim(s, "tx_p_repeat_rows");
    guarded gs = guard_new(), gd = guard_new();
    static const int64_t incs[] = {1, 3, 0};
    for (int64_t k = 0; k <= 17; k++)
        for (int64_t m = 0; m <= 16; m++)
            for (int c = 0; c < 3; c++) {
                int64_t inc = incs[c], span = k == 0 ? 0 : (k - 1) * inc + 1;
                double *src = guard_end(gs, span, sizeof(double)), *d = guard_end(gd, k * m, sizeof(double));
                fill_random(src, span, 1);
                sp(k, m, src, inc, d);
                for (int64_t r = 0; r < k; r++)
                    for (int64_t j = 0; j < m; j++)
                        ck_assert_msg(same_bits(d[r * m + j], src[r * inc]), "%s spread k=%ld m=%ld inc=%ld at %ld",
                                      set_names[s], (long)k, (long)m, (long)inc, (long)(r * m + j));
                if (c > 0)
                    continue;
                double *row = guard_end(gs, m, sizeof(double));
                fill_random(row, m, 1);
                rp(k, m, row, d);
                for (int64_t r = 0; r < k; r++)
                    for (int64_t j = 0; j < m; j++)
                        ck_assert_msg(same_bits(d[r * m + j], row[j]), "%s repeat k=%ld m=%ld at %ld", set_names[s],
                                      (long)k, (long)m, (long)(r * m + j));
            }
    guard_free(gs);
    guard_free(gd);
}
END_TEST

/* Rows copied (tx_p_copy_rows_f64, tx_pf_copy_rows), on every set:
   0 to 9 rows of 0 to 40 elements, source rows n, n + 3 or 0 apart (one
   row repeated), target rows n or n + 5 apart, streamed or not: each row
   bit for bit (NaNs too), the gaps between target rows untouched, nothing
   read or written past the ends (guard pages); rows n apart in both are
   one run. */
typedef void copy_rows_fn(int64_t, int64_t, const double *, int64_t, double *, int64_t, int);
typedef void copy_rowsf_fn(int64_t, int64_t, const float *, int64_t, float *, int64_t, int);
START_TEST(copies_rows)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    copy_rows_fn *cp = (copy_rows_fn *)prim(s, "tx_p_copy_rows_f64");
    copy_rowsf_fn *cpf = (copy_rowsf_fn *)prim(s, "tx_pf_copy_rows");
    void (*fence)(void) = (void (*)(void))prim(s, "tx_p_stream_fence");
    guarded gs = guard_new(), gd = guard_new();
    for (int64_t k = 0; k <= 9; k++)
        for (int64_t n = 0; n <= 40; n += n < 10 ? 1 : 7)
            for (int sv = 0; sv < 3; sv++)
                for (int dv = 0; dv < 2; dv++)
                    for (int nt = 0; nt < 2; nt++) {
                        int64_t ss = sv == 0 ? n : sv == 1 ? n + 3 : 0, ds = dv ? n + 5 : n;
                        int64_t sspan = k ? (k - 1) * ss + n : 0, dspan = k ? (k - 1) * ds + n : 0;
                        double *src = guard_end(gs, sspan, sizeof(double)), *d = guard_end(gd, dspan, sizeof(double));
                        fill_random(src, sspan, 1);
                        for (int64_t i = 0; i < dspan; i++)
                            d[i] = -7.25;
                        cp(k, n, src, ss, d, ds, nt);
                        fence();
                        for (int64_t r = 0; r < k; r++)
                            for (int64_t j = 0; j < ds && r * ds + j < dspan; j++)
                                ck_assert_msg(same_bits(d[r * ds + j], j < n ? src[r * ss + j] : -7.25),
                                              "%s copy_rows k=%ld n=%ld ss=%ld ds=%ld nt=%d at %ld", set_names[s],
                                              (long)k, (long)n, (long)ss, (long)ds, nt, (long)(r * ds + j));
                        float *sf = guard_end(gs, sspan, sizeof(float)), *df = guard_end(gd, dspan, sizeof(float));
                        for (int64_t i = 0; i < sspan; i++)
                            sf[i] = (float)(i * 0.37 - 3);
                        for (int64_t i = 0; i < dspan; i++)
                            df[i] = -7.25f;
                        cpf(k, n, sf, ss, df, ds, nt);
                        fence();
                        for (int64_t r = 0; r < k; r++)
                            for (int64_t j = 0; j < ds && r * ds + j < dspan; j++)
                                ck_assert_msg(df[r * ds + j] == (j < n ? sf[r * ss + j] : -7.25f),
                                              "%s pf_copy_rows k=%ld n=%ld ss=%ld ds=%ld nt=%d at %ld", set_names[s],
                                              (long)k, (long)n, (long)ss, (long)ds, nt, (long)(r * ds + j));
                    }
    guard_free(gs);
    guard_free(gd);
}
END_TEST

/* The f32 blocks, on every set: tx_pf_bin gives the bits of the double
   operation rounded to float (what the double blocks store), for blocks
   and single numbers on either side, special values included (a block
   divided by a number: multiplied by the reciprocal rounded to float, as
   tx_p_divrf, whose bits these are; max and min: tx_p_max's and
   tx_p_min's selection, NaNs included); tx_pf_map (exp, log, sqrt,
   abs, sin, cos, tanh) the bits of tx_p_map_f32 of the same floats; tx_pf_load and
   tx_pf_store copy with their increment and touch nothing else. */
START_TEST(f32_blocks)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    pf_load_fn *ld = (pf_load_fn *)prim(s, "tx_pf_load");
    pf_bin_fn *bin = (pf_bin_fn *)prim(s, "tx_pf_bin");
    pf_map_fn *map = (pf_map_fn *)prim(s, "tx_pf_map");
    pf_store_fn *st = (pf_store_fn *)prim(s, "tx_pf_store");
    map_fn *mapf = (map_fn *)prim(s, "tx_p_map_f32");
    guarded ga = guard_new(), gb = guard_new(), gd = guard_new();
    static double x[MAXN], y[MAXN];
    static float before[2 * MAXN];
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        float *a = guard_end(ga, n, sizeof(float)), *b = guard_end(gb, n, sizeof(float));
        float *d = guard_end(gd, n, sizeof(float));
        fill_random(x, n, l % 2);
        fill_random(y, n, l % 3 == 0);
        for (int64_t i = 0; i < n; i++) {
            a[i] = (float)(x[i] * 3);
            b[i] = (float)(y[i] + (i % 5 == 0 ? 0 : 0.25));
        }
        for (int op = 0; op < 6; op++)
            for (int form = 0; form < 3 && n > 0; form++) { /* blocks, a number on the right, on the left */
                bin(n, op, a, form != 2, b, form != 1, d);
                for (int64_t i = 0; i < n; i++) {
                    double p = form == 2 ? a[0] : a[i], q = form == 1 ? b[0] : b[i];
                    /* a block by a number: times the reciprocal rounded to float (tx_p_divrf) */
                    int inv = op == 3 && form == 1 && fabs(q) >= 0x1p-125 && fabs(q) <= 0x1p125;
                    float want = (float)(op == 0 ? p + q : op == 1 ? p - q : op == 2 ? p * q
                                         : op == 4 ? (p > q || p != p ? p : q) /* tx_p_max's */
                                         : op == 5 ? (p < q || p != p ? p : q)
                                         : inv ? p * (double)(float)(1 / q) : p / q);
                    ck_assert_msg(memcmp(&d[i], &want, sizeof want) == 0 || (d[i] != d[i] && want != want),
                                  "%s pf_bin op %d form %d n=%ld [%ld]: %a, want %a", set_names[s], op, form,
                                  (long)n, (long)i, d[i], want);
                }
            }
        static const int fns[] = {2, 3, 4, 5, 6, 7, 8};
        for (int k = 0; k < 7; k++) {
            for (int64_t i = 0; i < n; i++) {
                a[i] = fns[k] == 3 ? fabsf(a[i]) : a[i];
                x[i] = a[i];
            }
            map(n, fns[k], a, d);
            mapf(n, fns[k], x, y);
            for (int64_t i = 0; i < n; i++) {
                float want = (float)y[i];
                ck_assert_msg(memcmp(&d[i], &want, sizeof want) == 0 || (d[i] != d[i] && want != want),
                              "%s pf_map %d n=%ld [%ld]: %a, want %a", set_names[s], fns[k], (long)n, (long)i, d[i],
                              want);
            }
        }
        for (int64_t inc = 0; inc <= 2; inc++) {
            int64_t span = n == 0 ? 0 : (n - 1) * inc + 1;
            float *src = guard_end(gb, span, sizeof(float));
            for (int64_t i = 0; i < span; i++)
                src[i] = (float)i;
            ld(n, src, inc, d);
            for (int64_t i = 0; i < n; i++)
                ck_assert_msg(d[i] == (float)(i * inc), "%s pf_load n=%ld inc=%ld [%ld]", set_names[s], (long)n,
                              (long)inc, (long)i);
            if (inc == 0)
                continue;
            float *t = guard_end(gd, span, sizeof(float));
            for (int64_t i = 0; i < span; i++)
                t[i] = before[i] = (float)-i - 1;
            st(n, a, t, inc);
            for (int64_t i = 0; i < span; i++) {
                float want = i % inc == 0 ? a[i / inc] : before[i];
                ck_assert_msg(memcmp(&t[i], &want, sizeof want) == 0, "%s pf_store n=%ld inc=%ld [%ld]",
                              set_names[s], (long)n, (long)inc, (long)i);
            }
        }
    }
    guard_free(ga);
    guard_free(gb);
    guard_free(gd);
}
END_TEST

/* tx_p_cmp and tx_p_where, on every set, against C's scalar forms (the
   scalar path's): 1 or 0, false with a NaN but !=; where picks a where c
   is not 0 (NaN included), b else, the bits of the one it picks; their
   forms with a number, tx_p_cmps and tx_p_where_s, against them; and
   tx_p_where_cmps against tx_p_cmps then tx_p_where_s */
START_TEST(comparisons_and_where)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    cmp_fn *cmp = (cmp_fn *)prim(s, "tx_p_cmp");
    where_fn *wh = (where_fn *)prim(s, "tx_p_where");
    cmps_fn *cmps = (cmps_fn *)prim(s, "tx_p_cmps");
    where_s_fn *where_s = (where_s_fn *)prim(s, "tx_p_where_s");
    where_cmps_fn *where_cmps = (where_cmps_fn *)prim(s, "tx_p_where_cmps");
    guarded gx = guard_new(), gy = guard_new(), gz = guard_new(), gd = guard_new();
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        double *x = guard_end(gx, n, sizeof(double)), *y = guard_end(gy, n, sizeof(double));
        double *z = guard_end(gz, n, sizeof(double)), *d = guard_end(gd, n, sizeof(double));
        fill_random(x, n, 1);
        fill_random(y, n, l % 2);
        for (int64_t i = 0; i < n; i += 3) /* ties */
            y[i] = x[i];
        for (int op = 0; op < 6; op++) {
            cmp(n, op, x, y, d);
            for (int64_t i = 0; i < n; i++) {
                double a = x[i], b = y[i];
                int t = op == 0 ? a < b : op == 1 ? a <= b : op == 2 ? a > b : op == 3 ? a >= b : op == 4 ? a == b : a != b;
                CHECK_SAME(d[i], t ? 1.0 : 0.0, "%s cmp %d n=%ld [%ld]: %a, %a", set_names[s], op, (long)n, (long)i,
                           a, b);
            }
        }
        fill_random(z, n, 0);
        for (int64_t i = 0; i < n; i++)
            z[i] = i % 4 == 0 ? 0.0 : i % 4 == 1 ? -0.0 : z[i];
        wh(n, z, x, y, d);
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(same_bits(d[i], z[i] != 0 ? x[i] : y[i]), "%s where n=%ld [%ld]", set_names[s], (long)n,
                          (long)i);
        /* with a number: tx_p_cmps is tx_p_cmp against the number spread;
           tx_p_where_s is tx_p_where with the number-branch spread */
        static const double ks[] = {0, -0.0, 0.5, NAN, -INFINITY};
        static double kb[MAXN], w[MAXN];
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
            for (int64_t i = 0; i < n; i++)
                kb[i] = ks[k];
            for (int op = 0; op < 6; op++) {
                cmp(n, op, x, kb, w);
                cmps(n, op, x, ks[k], d);
                for (int64_t i = 0; i < n; i++)
                    ck_assert_msg(same_bits(d[i], w[i]), "%s cmps %d %a n=%ld [%ld]", set_names[s], op, ks[k],
                                  (long)n, (long)i);
            }
            for (int op = 0; op < 6; op++)
                for (int form = 0; form < 4; form++) { /* a number, b number, both, neither */
                    static double c[MAXN], e[MAXN];
                    cmps(n, op, x, ks[k], c);
                    const double *a = form == 0 || form == 2 ? NULL : y, *b = form == 1 || form == 2 ? NULL : z;
                    where_s(n, c, a, -ks[k], b, 0.25, e);
                    where_cmps(n, op, x, ks[k], a, -ks[k], b, 0.25, d);
                    for (int64_t i = 0; i < n; i++)
                        ck_assert_msg(same_bits(d[i], e[i]), "%s where_cmps %d form %d %a n=%ld [%ld]", set_names[s],
                                      op, form, ks[k], (long)n, (long)i);
                }
            for (int form = 0; form < 3; form++) { /* a number, b number, both */
                wh(n, z, form != 0 ? kb : x, form != 1 ? kb : y, w);
                where_s(n, z, form != 0 ? NULL : x, ks[k], form != 1 ? NULL : y, ks[k], d);
                for (int64_t i = 0; i < n; i++)
                    ck_assert_msg(same_bits(d[i], w[i]), "%s where_s form %d %a n=%ld [%ld]", set_names[s], form,
                                  ks[k], (long)n, (long)i);
            }
        }
        where_s(n, z, x, 0, y, 0, d);
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(same_bits(d[i], z[i] != 0 ? x[i] : y[i]), "%s where_s blocks n=%ld [%ld]", set_names[s],
                          (long)n, (long)i);
    }
    guard_free(gx);
    guard_free(gy);
    guard_free(gz);
    guard_free(gd);
}
END_TEST

/* NaN, +-inf, +-0 and the sign of a finite result, as glibc has them */
static int kind(double v)
{
    if (v != v)
        return 0;
    if (isinf(v))
        return v > 0 ? 1 : 2;
    if (v == 0)
        return signbit(v) ? 4 : 3;
    return v > 0 ? 5 : 6;
}

static const double specials[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1, -1, 2, -2, 0.5, -8, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
    0x1p-1074, -0x1p-1074, 1e-320, 1e-300, 1e300, -1e300, 1e22, -1e22, 709.78, 709.79, -708.5, -745.1, -745.2,
    -1000, 1000, 19.1, -19.1, 40, -40, 1e15, 0x1.921fb54442d18p+0, 0x1.921fb54442d18p+1,
};
enum { NSPECIAL = sizeof specials / sizeof specials[0] };

START_TEST(vector_math_special_values)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    pow_fn *pw = (pow_fn *)prim(s, "tx_p_pow");
    double d[NSPECIAL];
    for (int k = 0; k < NMATH; k++) {
        map(NSPECIAL, mathfns[k].fn, specials, d);
        for (int i = 0; i < NSPECIAL; i++) {
            double g = mathfns[k].f(specials[i]);
            ck_assert_msg(kind(d[i]) == kind(g), "%s %s(%a) = %a, glibc %a", set_names[s], mathfns[k].name,
                          specials[i], d[i], g);
        }
    }
    static const double ps[] = {0.7, -0.7, 2.5, -2.5, 1.0 / 3, 4, 5, -4, -5, 1e300, -1e300, 1e-300, 0.25, 0.0,
                                -0.0, INFINITY, -INFINITY, NAN, 1.5e308};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        pw(NSPECIAL, specials, ps[k], d);
        for (int i = 0; i < NSPECIAL; i++) {
            double g = pow(specials[i], ps[k]);
            ck_assert_msg(kind(d[i]) == kind(g), "%s pow(%a, %a) = %a, glibc %a", set_names[s], specials[i], ps[k],
                          d[i], g);
        }
    }
}
END_TEST

/* An element's result does not depend on the block's length or on where
   it sits (the last partial vector is padded, not computed otherwise),
   nor on its neighbours in its vector (arguments from all three ranges
   mixed: the library takes libmvec's result inside a function's fast
   domain and SLEEF's outside it, lane by lane), in place or not, and
   nothing past the block is read or written. */
START_TEST(vector_math_any_position)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    map_fn *map = (map_fn *)prim(s, "tx_p_map");
    pow_fn *pw = (pow_fn *)prim(s, "tx_p_pow");
    guarded gx = guard_new(), gd = guard_new();
    static double x[MAXN], full[MAXN];
    /* rounds enough to meet, in the tails, elements on which the library
       and glibc's scalar functions differ */
    for (int round = 0; round < 40; round++) {
        for (int k = 0; k <= NMATH; k++) {
            int fn = k < NMATH ? mathfns[k].fn : 0;
            const char *name = fn ? mathfns[k].name : "pow";
            for (int i = 0; i < MAXN; i++)
                x[i] = fn ? argument(fn, (int)(rng() % 3)) : ldexp(1 + u01(), (int)(rng() % 21) - 10);
            if (fn)
                map(MAXN, fn, x, full);
            else
                pw(MAXN, x, 0.7, full);
            for (int l = 0; l < NLEN; l++) {
                for (int64_t off = 0; off < 9; off += 4) {
                    int64_t n = lengths[l];
                    if (off + n > MAXN)
                        continue;
                    double *y = guard_end(gx, n, sizeof(double)), *d = guard_end(gd, n, sizeof(double));
                    memcpy(y, x + off, (size_t)n * sizeof(double));
                    if (fn)
                        map(n, fn, y, d);
                    else
                        pw(n, y, 0.7, d);
                    for (int64_t i = 0; i < n; i++)
                        ck_assert_msg(same_bits(d[i], full[off + i]), "%s %s n=%ld at %ld: %a, in a longer block %a",
                                      set_names[s], name, (long)n, (long)(off + i), d[i], full[off + i]);
                    if (fn) /* in place */
                        map(n, fn, y, y);
                    else
                        pw(n, y, 0.7, y);
                    for (int64_t i = 0; i < n; i++)
                        ck_assert_msg(same_bits(y[i], full[off + i]), "%s %s in place n=%ld", set_names[s], name,
                                      (long)n);
                }
            }
        }
    }
    guard_free(gx);
    guard_free(gd);
}
END_TEST

/* ---- sparse maps and zeroing ---- */
START_TEST(sparse_map_helpers)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    map_check_fn *check = (map_check_fn *)prim(s, "tx_rt_map_check");
    map_has_fn *has = (map_has_fn *)prim(s, "tx_rt_map_has");
    zero_fn *zero = (zero_fn *)prim(s, "tx_rt_zero");
    int64_t off[] = {0, 2, 2, 5}, tg[] = {1, 3, 0, 2, 4};
    tx_sparse_map m = {3, off, tg};
    ck_assert_int_eq(check(&m, 3, 5), 0);
    ck_assert_int_ne(check(&m, 4, 5), 0);   /* wrong source count */
    ck_assert_int_ne(check(&m, 3, 4), 0);   /* a target out of range */
    ck_assert_int_ne(check(NULL, 3, 5), 0);
    tg[3] = 0;                              /* not ascending */
    ck_assert_int_ne(check(&m, 3, 5), 0);
    tg[3] = 2;
    ck_assert(has(&m, 0, 1) && has(&m, 0, 3) && !has(&m, 0, 2) && !has(&m, 1, 0));
    ck_assert(has(&m, 2, 0) && has(&m, 2, 4) && !has(&m, 2, 3));
    guarded g = guard_new();
    for (int l = 0; l < NLEN; l++) {
        unsigned char *p = guard_end(g, lengths[l] + 1, 1);
        memset(p, 0xab, (size_t)lengths[l] + 1);
        zero(p + 1, lengths[l]);
        ck_assert_int_eq(p[0], 0xab);
        for (int64_t i = 0; i < lengths[l]; i++)
            ck_assert_int_eq(p[1 + i], 0);
    }
    guard_free(g);
}
END_TEST

/* ---- complex functions: against C99's <complex.h> (glibc) ---- */
static double complex as_c(cpair z) { return z.re + I * z.im; }

/* |got - want| within TOL of max(1, |want|), or both NaN in the same parts */
static int cclose(cpair got, double complex want, double tol)
{
    double scale = cabs(want) > 1 ? cabs(want) : 1;
    return cabs(as_c(got) - want) <= tol * scale;
}

START_TEST(complex_functions)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    static const char *const names[] = {"tx_p_cexp", "tx_p_clog", "tx_p_csqrt", "tx_p_csin", "tx_p_ccos", "tx_p_ctanh"};
    double complex (*const ref[])(double complex) = {cexp, clog, csqrt, csin, ccos, ctanh};
    const double vals[] = {0.0, -0.0, 0.3, -0.7, 1.0, -2.5, 3.75, 12.0, -25.0};
    int nv = (int)(sizeof vals / sizeof vals[0]);
    for (int f = 0; f < 6; f++) {
        cfun_fn *fn = (cfun_fn *)prim(s, names[f]);
        for (int a = 0; a < nv; a++)
            for (int b = 0; b < nv; b++) {
                cpair z = {vals[a], vals[b]};
                if (f == 1 && z.re == 0 && z.im == 0)
                    continue; /* log 0: -inf, tested below */
                if ((f == 3 || f == 4) && fabs(z.im) > 20)
                    continue; /* sin, cos of a large imaginary part: inf * 0 */
                double complex want = ref[f](as_c(z));
                cpair got = fn(z);
                ck_assert_msg(cclose(got, want, 1e-13), "%s: %s(%g%+gi) = %.17g%+.17gi, want %.17g%+.17gi",
                              set_names[s], names[f], z.re, z.im, got.re, got.im, creal(want), cimag(want));
            }
    }
    /* tanh of an infinite real part is +-1 whatever the imaginary part (numpy;
       C99 Annex G): it was NaN for exp(cos(t)) of a large complex t; of a
       finite real part and an infinite imaginary one it is NaN (numpy gives
       nan+nanj for 800+infj) */
    cfun_fn *th = (cfun_fn *)prim(s, "tx_p_ctanh");
    cpair t1 = th((cpair){INFINITY, NAN}), t2 = th((cpair){-INFINITY, 3.0}), t3 = th((cpair){800, INFINITY});
    cpair t4 = th((cpair){800, 1e300});
    ck_assert(t1.re == 1 && t1.im == 0 && t2.re == -1 && t2.im == 0 && isnan(t3.re) && isnan(t3.im));
    ck_assert(t4.re == 1 && t4.im == 0);
    /* near a pole of tan y: tanh(iy) = i tan(y) to a few ulps (1 + cos 2y cancelled) */
    for (double y = 1.5707963; y < 1.5707965; y += 2.5e-8) {
        cpair tp = th((cpair){0, y});
        ck_assert_msg(fabs(tp.im - tan(y)) <= 1e-14 * fabs(tan(y)) && tp.re == 0,
                      "%s: tx_p_ctanh(%.17gi) = %.17g%+.17gi, want %.17gi", set_names[s], y, tp.re, tp.im, tan(y));
    }
    /* exp of a real part of -inf (or one that underflows) is 0 whatever the
       imaginary part: it was NaN for exp(cos(z)) of a huge z (run_diff seed 10000) */
    cfun_fn *ex = (cfun_fn *)prim(s, "tx_p_cexp");
    cpair e1 = ex((cpair){-INFINITY, INFINITY}), e2 = ex((cpair){-INFINITY, NAN}), e3 = ex((cpair){-800, 2.0});
    ck_assert(e1.re == 0 && e1.im == 0 && e2.re == 0 && e2.im == 0 && e3.re == 0 && e3.im == 0);
    ck_assert(signbit(e3.re) && !signbit(e3.im)); /* the signs of cos 2, sin 2 */
    cpair l0 = ((cfun_fn *)prim(s, "tx_p_clog"))((cpair){0, 0});
    ck_assert(isinf(l0.re) && l0.re < 0 && l0.im == 0);
    cpair e = ((cfun_fn *)prim(s, "tx_p_cexp"))((cpair){800, 0}); /* a real argument stays real */
    ck_assert(isinf(e.re) && e.im == 0);
    cpair sq = ((cfun_fn *)prim(s, "tx_p_csqrt"))((cpair){-4, -0.0}); /* the branch cut: the sign of zero */
    ck_assert(sq.re == 0 && sq.im == -2);
    cpow_fn *cp = (cpow_fn *)prim(s, "tx_p_cpow");
    cabs_fn *ca = (cabs_fn *)prim(s, "tx_p_cabs");
    const double ps[] = {0, 1, 2, 3, 7, -1, -3, 0.5, -1.25, 2.5};
    for (int a = 1; a < nv - 2; a++)
        for (int b = 0; b < nv - 2; b++) {
            cpair z = {vals[a], vals[b]};
            for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
                if (z.re == 0 && z.im == 0 && ps[k] <= 0)
                    continue; /* a pole, and 0^0 (1 as numpy says; glibc says NaN): below */
                double complex want = cpow(as_c(z), ps[k]);
                cpair got = cp(z, ps[k]);
                ck_assert_msg(cclose(got, want, 1e-12), "%s: tx_p_cpow(%g%+gi, %g) = %.17g%+.17gi, want %.17g%+.17gi",
                              set_names[s], z.re, z.im, ps[k], got.re, got.im, creal(want), cimag(want));
            }
            ck_assert(fabs(ca(z) - cabs(as_c(z))) <= 1e-15 * (1 + cabs(as_c(z))));
        }
    cpair i2 = cp((cpair){0, 1}, 2); /* exactly -1: integer powers by multiplication */
    ck_assert(i2.re == -1 && i2.im == 0);
    cpair pole = cp((cpair){0, 0}, -1);
    ck_assert(!isfinite(pole.re) || !isfinite(pole.im));
    cpair one = cp((cpair){0, 0}, 0);
    ck_assert(one.re == 1 && one.im == 0);
    cpair z0 = cp((cpair){0, 0}, 2.5);
    ck_assert(z0.re == 0 && z0.im == 0);
}
END_TEST

/* ---- complex blocks (emit_cblocks.c): 2n doubles, (re, im) pairs ---- */
typedef void cconj_fn(int64_t, const double *, double *);
typedef void cmap_fn(int64_t, int, double, const double *, double *);
typedef void cfill_fn(int64_t, double, double, double *);
typedef void cload_fn(int64_t, const double *, int64_t, double *);
typedef void cloadf_fn(int64_t, const float *, int64_t, double *);

/* complex.inc's tx_c_div (Smith's division), one element at a time */
static __attribute__((noinline)) cpair ref_cdiv(cpair a, cpair b)
{
    cpair z;
    TX_C_DIV_PARTS(a.re, a.im, b.re, b.im, z.re, z.im);
    return z;
}

/* complex.inc's tx_c_mul, one element at a time (not vectorised, so
   nothing but its own operations) */
static __attribute__((noinline)) cpair ref_cmul(cpair a, cpair b)
{
    cpair z;
    z.re = a.re * b.re - a.im * b.im;
    z.im = a.re * b.im + a.im * b.re;
    return z;
}

/* F(n, x, y, d) over N complex elements X and Y (blocks ending at the
   guarded pages GA, GB) gives WANT (same()), into a third block (GD) and
   in place on either operand. */
static void check_complex_binary(int s, const char *name, binary_fn *f, int64_t n, const double *x, const double *y,
                                 const double *want, guarded ga, guarded gb, guarded gd)
{
    for (int place = 0; place < 3; place++) { /* d apart, d == x, d == y */
        double *a = guard_end(ga, 2 * n, sizeof(double)), *b = guard_end(gb, 2 * n, sizeof(double));
        double *d = place == 1 ? a : place == 2 ? b : guard_end(gd, 2 * n, sizeof(double));
        memcpy(a, x, 2 * n * sizeof(double));
        memcpy(b, y, 2 * n * sizeof(double));
        f(n, a, b, d);
        for (int64_t i = 0; i < 2 * n; i++)
            ck_assert_msg(same(d[i], want[i]), "%s %s n=%ld place %d [%ld]: %a, want %a", set_names[s], name, (long)n,
                          place, (long)i, d[i], want[i]);
    }
}

/* tx_p_cmap's exp (a block, and tx_p_cexp one element: the same bits),
   on every set: where both parts are finite and the real one at most
   709, each part within 5 ULP of e^x cos y, e^x sin y in long double
   (the library's: 3.6 at most over 4e5 such arguments; libmvec's cos
   and sin are within 4)
   (and 2 of the smallest subnormal, where it is one), real parts from
   -750 to 709 and imaginary ones from subnormal to 1e300, signed zeros
   kept; anywhere else (infinite and NaN parts, a real part past 709)
   C99's cexp's bits. With the vector functions' results put in the
   wrong part, or e^x left out for the tiny imaginary parts, it fails. */
static double ulp_of(long double v)
{
    double a = fabs((double)v);
    return a < DBL_MIN ? 0x1p-1074 : nextafter(a, INFINITY) - a;
}

START_TEST(cexp_within_ulps)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    cmap_fn *cmap = (cmap_fn *)prim(s, "tx_p_cmap");
    cfun_fn *cexp1 = (cfun_fn *)prim(s, "tx_p_cexp");
    enum { NZ = 4000 };
    static double z[2 * NZ], d[2 * NZ];
    static const double ims[] = {0.0, -0.0, 0x1p-1070, -0x1p-1023, 0x1p-1022, 1e-300, 1e-9, 0.5, 1.5707963267948966,
                                 3.141592653589793, 100.0, 1e6, 1e15, -1e300, INFINITY, -INFINITY, NAN};
    static const double res[] = {0.0, -0.0, 1.0, -1.0, 20.0, 700.0, 709.0, 709.1, 710.0, -700.0, -708.5, -745.0,
                                 -750.0, INFINITY, -INFINITY, NAN};
    const int nims = (int)(sizeof ims / sizeof *ims), nres = (int)(sizeof res / sizeof *res);
    uint64_t r = 99;
    for (int i = 0; i < NZ; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(r >> 11) * 0x1p-53;
        if (i < nims * nres) { /* every pair of the special parts */
            z[2 * i] = res[i % nres];
            z[2 * i + 1] = ims[i / nres];
        } else {
            z[2 * i] = -750.0 + 1459.0 * u;
            z[2 * i + 1] = (i % 3 ? 20.0 * u - 10.0 : ldexp(u - 0.5, (int)(r % 2000) - 1000));
        }
    }
    cmap(NZ, 2, 0.0, z, d);
    for (int i = 0; i < NZ; i++) {
        double x = z[2 * i], y = z[2 * i + 1];
        cpair one = cexp1((cpair){x, y});
        ck_assert_msg(same_bits(one.re, d[2 * i]) && same_bits(one.im, d[2 * i + 1]),
                      "%s tx_p_cexp(%a, %a) differs from the block's", set_names[s], x, y);
        if (isfinite(x) && isfinite(y) && x <= 709.0) {
            long double e = expl((long double)x), wr = e * cosl((long double)y), wi = e * sinl((long double)y);
            if (fabs(y) <= DBL_MIN) {
                wr = e;
                wi = e * (long double)y;
            }
            ck_assert_msg(fabsl((long double)d[2 * i] - wr) <= 5 * ulp_of(wr) + 0x1p-1073 &&
                              fabsl((long double)d[2 * i + 1] - wi) <= 5 * ulp_of(wi) + 0x1p-1073 &&
                              signbit(d[2 * i + 1]) == signbit((double)wi),
                          "%s exp(%a + %a i) = %a + %a i, want %La + %La i", set_names[s], x, y, d[2 * i],
                          d[2 * i + 1], wr, wi);
        } else {
            double _Complex w;
            ((double *)&w)[0] = x; /* (C99 6.2.5: the two parts, in order) */
            ((double *)&w)[1] = y;
            w = cexp(w);
            ck_assert_msg(same(d[2 * i], creal(w)) && same(d[2 * i + 1], cimag(w)) &&
                              signbit(d[2 * i]) == signbit(creal(w)) && signbit(d[2 * i + 1]) == signbit(cimag(w)),
                          "%s exp(%a + %a i) = %a + %a i, want cexp's %a + %a i", set_names[s], x, y, d[2 * i],
                          d[2 * i + 1], creal(w), cimag(w));
        }
    }
}
END_TEST

/* tx_p_cmap's log, sqrt, sin, cos and tanh (blocks, and tx_p_clog, ...
   one element: the same bits), on every set: inside each function's fast
   domain (prims.inc) each part within K ULP of glibc's long double
   function (log 5, sqrt 3, sin and cos 6, tanh 8; the largest seen over
   1e6 arguments each: see tx(5)), its sign that one's; anywhere else the
   C99 function's bits. Arguments: every pair of special parts (zeros,
   subnormal, DBL_MIN, the domains' edges, 1e300, infinities, NaN),
   random ones of moderate and of any magnitude, and for log points on
   and near the unit circle. */
enum { CF_LOG, CF_SQRT, CF_SIN, CF_COS, CF_TANH };
static int cf_fast(int f, double x, double y)
{
    double ax = fabs(x), ay = fabs(y), big = ax > ay ? ax : ay;
    switch (f) {
    case CF_LOG: {
        double p = x * x, q = y * y, s = p + q;
        return ax <= 0x1p400 && ay <= 0x1p400 && big >= 0x1p-400 && fabs(s - 1.0) >= 0x1p-40;
    }
    case CF_SQRT: return ax <= 0x1p500 && ay <= 0x1p500 && big >= 0x1p-500 && ax != 0 && ay != 0;
    case CF_SIN:
    case CF_COS: return isfinite(x) && ay <= 709.0;
    default: return ax <= 354.0 && isfinite(y);
    }
}

START_TEST(cfuncs_within_ulps)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    cmap_fn *cmap = (cmap_fn *)prim(s, "tx_p_cmap");
    static const char *const one_names[] = {"tx_p_clog", "tx_p_csqrt", "tx_p_csin", "tx_p_ccos", "tx_p_ctanh"};
    static const int cmap_no[] = {3, 4, 6, 7, 8}, ulps[] = {5, 3, 6, 6, 8};
    long double complex (*const refl[])(long double complex) = {clogl, csqrtl, csinl, ccosl, ctanhl};
    double complex (*const ref[])(double complex) = {clog, csqrt, csin, ccos, ctanh};
    enum { NZ = 6000 };
    static double z[2 * NZ], d[2 * NZ];
    static const double sp[] = {0.0, -0.0, 0x1p-1070, -0x1p-1023, 0x1p-1022, 1e-300, 0x1p-401, 1e-9, 0.5, -1.0,
                                1.5707963267948966, -3.141592653589793, 20.0, 354.0, -354.5, 709.0, -709.5, 1e15,
                                0x1p401, 0x1p501, -1e300, INFINITY, -INFINITY, NAN};
    const int nsp = (int)(sizeof sp / sizeof *sp);
    for (int f = CF_LOG; f <= CF_TANH; f++) {
        uint64_t r = 7 + (uint64_t)f;
        for (int i = 0; i < NZ; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(r >> 11) * 0x1p-53, v = (double)((r >> 3) & 0xffffff) * 0x1p-24;
            if (i < nsp * nsp) { /* every pair of the special parts */
                z[2 * i] = sp[i % nsp];
                z[2 * i + 1] = sp[i / nsp];
            } else if (i % 4 == 0) { /* moderate */
                z[2 * i] = 40.0 * u - 20.0;
                z[2 * i + 1] = 40.0 * v - 20.0;
            } else if (i % 4 == 1) { /* any magnitude */
                z[2 * i] = ldexp(u - 0.5, (int)(r % 2100) - 1050);
                z[2 * i + 1] = ldexp(v - 0.5, (int)((r >> 20) % 2100) - 1050);
            } else if (i % 4 == 2) { /* on and near the unit circle */
                static const double eps[] = {0.0, 0x1p-45, -0x1p-38, 0x1p-30, -1e-8, 1e-3};
                double e = 1.0 + eps[(r >> 40) % 6];
                z[2 * i] = e * cos(6.283185307179586 * u);
                z[2 * i + 1] = e * sin(6.283185307179586 * u);
            } else { /* one part special */
                z[2 * i] = (r >> 30) & 1 ? sp[(r >> 32) % nsp] : 4.0 * u - 2.0;
                z[2 * i + 1] = (r >> 30) & 1 ? 4.0 * v - 2.0 : sp[(r >> 32) % nsp];
            }
        }
        cmap(NZ, cmap_no[f], 0.0, z, d);
        cfun_fn *one = (cfun_fn *)prim(s, one_names[f]);
        for (int i = 0; i < NZ; i++) {
            double x = z[2 * i], y = z[2 * i + 1];
            cpair o1 = one((cpair){x, y});
            ck_assert_msg(same_bits(o1.re, d[2 * i]) && same_bits(o1.im, d[2 * i + 1]),
                          "%s %s(%a, %a) differs from the block's", set_names[s], one_names[f], x, y);
            if (cf_fast(f, x, y)) {
                long double complex w;
                ((long double *)&w)[0] = x; /* (not x + I * y: that loses the sign of a zero x) */
                ((long double *)&w)[1] = y;
                w = refl[f](w);
                long double wr = creall(w), wi = cimagl(w);
                ck_assert_msg(fabsl((long double)d[2 * i] - wr) <= ulps[f] * ulp_of(wr) + 0x1p-1073 &&
                                  fabsl((long double)d[2 * i + 1] - wi) <= ulps[f] * ulp_of(wi) + 0x1p-1073 &&
                                  signbit(d[2 * i]) == signbit((double)wr) &&
                                  signbit(d[2 * i + 1]) == signbit((double)wi),
                              "%s %s(%a + %a i) = %a + %a i, want %La + %La i", set_names[s], one_names[f], x, y,
                              d[2 * i], d[2 * i + 1], wr, wi);
            } else {
                double _Complex w;
                ((double *)&w)[0] = x; /* (C99 6.2.5: the two parts, in order) */
                ((double *)&w)[1] = y;
                w = ref[f](w);
                ck_assert_msg(same(d[2 * i], creal(w)) && same(d[2 * i + 1], cimag(w)) &&
                                  signbit(d[2 * i]) == signbit(creal(w)) &&
                                  signbit(d[2 * i + 1]) == signbit(cimag(w)),
                              "%s %s(%a + %a i) = %a + %a i, want C99's %a + %a i", set_names[s], one_names[f], x,
                              y, d[2 * i], d[2 * i + 1], creal(w), cimag(w));
            }
        }
    }
}
END_TEST

/* The complex block primitives, on every set, give the bits of the
   scalar path's operations (complex.inc): tx_p_cmul those of tx_c_mul
   (no FMA: GCC 12 vectorises the plain loop with one), a NaN where it
   gives a NaN (which of two NaNs an operation keeps depends on the
   order the compiler puts operands in), also in place on either
   operand, and tx_p_cdiv those of tx_c_div (Smith's division, zero
   parts and zero divisors among the cases); tx_p_cmap those of the one-element
   functions it calls (tx_p_cexp, ..., tx_p_cpow), in place too; tx_p_cconj negates the imaginary part; the loads,
   fill and real-to-complex conversions copy exactly, at strides 1, 3
   and 0; nothing read or written past a block. */
START_TEST(complex_blocks)
{
    int s = _i;
    SKIP_UNLESS_RUNS(s);
    binary_fn *cmul = (binary_fn *)prim(s, "tx_p_cmul"), *cdiv = (binary_fn *)prim(s, "tx_p_cdiv");
    cmap_fn *cmap = (cmap_fn *)prim(s, "tx_p_cmap");
    cconj_fn *cconj = (cconj_fn *)prim(s, "tx_p_cconj");
    cfill_fn *cfill = (cfill_fn *)prim(s, "tx_p_cfill");
    cload_fn *cload = (cload_fn *)prim(s, "tx_p_cload"), *cfrom = (cload_fn *)prim(s, "tx_p_cfrom");
    cloadf_fn *cloadf = (cloadf_fn *)prim(s, "tx_p_cloadf"), *cfromf = (cloadf_fn *)prim(s, "tx_p_cfromf");
    guarded ga = guard_new(), gb = guard_new(), gd = guard_new();
    static double x[2 * MAXN], y[2 * MAXN], src[6 * MAXN], want[2 * MAXN];
    static float srcf[6 * MAXN];
    for (int l = 0; l < NLEN; l++) {
        int64_t n = lengths[l];
        fill_random(x, 2 * n, 1);
        fill_random(y, 2 * n, 1);
        fill_random(src, 6 * n, 1);
        for (int64_t i = 0; i < 6 * n; i++)
            srcf[i] = (float)src[i];
        for (int64_t i = 0; i < n; i++) {
            cpair z = ref_cmul((cpair){x[2 * i], x[2 * i + 1]}, (cpair){y[2 * i], y[2 * i + 1]});
            want[2 * i] = z.re;
            want[2 * i + 1] = z.im;
        }
        check_complex_binary(s, "tx_p_cmul", cmul, n, x, y, want, ga, gb, gd);
        for (int64_t i = 0; i < n; i++) { /* divisors with a zero part, and zero ones, among them */
            if (i % 5 == 1)
                y[2 * i + i % 2] = 0.0;
            cpair z = ref_cdiv((cpair){x[2 * i], x[2 * i + 1]}, (cpair){y[2 * i], y[2 * i + 1]});
            want[2 * i] = z.re;
            want[2 * i + 1] = z.im;
        }
        check_complex_binary(s, "tx_p_cdiv", cdiv, n, x, y, want, ga, gb, gd);
        static const int fns[] = {1, 2, 3, 4, 6, 7, 8}; /* tx_p_map's numbers: pow exp log sqrt sin cos tanh */
        cfun_fn *one[] = {NULL, (cfun_fn *)prim(s, "tx_p_cexp"), (cfun_fn *)prim(s, "tx_p_clog"),
                          (cfun_fn *)prim(s, "tx_p_csqrt"), (cfun_fn *)prim(s, "tx_p_csin"),
                          (cfun_fn *)prim(s, "tx_p_ccos"), (cfun_fn *)prim(s, "tx_p_ctanh")};
        cpow_fn *cpow1 = (cpow_fn *)prim(s, "tx_p_cpow");
        for (int k = 0; k < 7; k++) {
            double *a = guard_end(ga, 2 * n, sizeof(double)), *d = guard_end(gd, 2 * n, sizeof(double));
            memcpy(a, x, 2 * n * sizeof(double));
            for (int inplace = 0; inplace < 2; inplace++) {
                cmap(n, fns[k], 2.5 + k % 2, a, inplace ? a : d);
                const double *got = inplace ? a : d;
                for (int64_t i = 0; i < n; i++) {
                    cpair z = {x[2 * i], x[2 * i + 1]};
                    cpair w = k ? one[k](z) : cpow1(z, 2.5 + k % 2);
                    ck_assert_msg(same_bits(got[2 * i], w.re) && same_bits(got[2 * i + 1], w.im),
                                  "%s tx_p_cmap %d n=%ld in place %d [%ld]", set_names[s], fns[k], (long)n, inplace,
                                  (long)i);
                }
            }
        }
        double *a = guard_end(ga, 2 * n, sizeof(double)), *d = guard_end(gd, 2 * n, sizeof(double));
        memcpy(a, x, 2 * n * sizeof(double));
        cconj(n, a, d);
        cconj(n, a, a);
        for (int64_t i = 0; i < 2 * n; i++) {
            double w = i % 2 ? -x[i] : x[i];
            ck_assert_msg(same_bits(d[i], w) && same_bits(a[i], w), "%s tx_p_cconj n=%ld [%ld]", set_names[s], (long)n,
                          (long)i);
        }
        cfill(n, -0.0, nan_with(5, 1), d);
        for (int64_t i = 0; i < 2 * n; i++)
            ck_assert(same_bits(d[i], i % 2 ? nan_with(5, 1) : -0.0));
        static const int64_t incs[] = {1, 3, 0};
        for (int k = 0; k < 3; k++) {
            int64_t inc = incs[k];
            d = guard_end(gd, 2 * n, sizeof(double));
            cload(n, src, inc, d);
            for (int64_t i = 0; i < 2 * n; i++)
                ck_assert_msg(same_bits(d[i], src[2 * (i / 2) * inc + i % 2]), "%s tx_p_cload n=%ld inc %ld [%ld]",
                              set_names[s], (long)n, (long)inc, (long)i);
            cloadf(n, srcf, inc, d);
            for (int64_t i = 0; i < 2 * n; i++)
                ck_assert_msg(same_bits(d[i], (double)srcf[2 * (i / 2) * inc + i % 2]),
                              "%s tx_p_cloadf n=%ld inc %ld [%ld]", set_names[s], (long)n, (long)inc, (long)i);
            cfrom(n, src, inc, d);
            for (int64_t i = 0; i < 2 * n; i++)
                ck_assert_msg(same_bits(d[i], i % 2 ? 0.0 : src[(i / 2) * inc]), "%s tx_p_cfrom n=%ld inc %ld [%ld]",
                              set_names[s], (long)n, (long)inc, (long)i);
            cfromf(n, srcf, inc, d);
            for (int64_t i = 0; i < 2 * n; i++)
                ck_assert_msg(same_bits(d[i], i % 2 ? 0.0 : (double)srcf[(i / 2) * inc]),
                              "%s tx_p_cfromf n=%ld inc %ld [%ld]", set_names[s], (long)n, (long)inc, (long)i);
        }
    }
    guard_free(ga);
    guard_free(gb);
    guard_free(gd);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("prims");
    TCase *tc = tcase_create("prims");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_prim_is_tested);
    tcase_add_loop_test(tc, loads_and_fill, 0, NSETS);
    tcase_add_loop_test(tc, stores, 0, NSETS);
    tcase_add_loop_test(tc, arithmetic, 0, NSETS);
    tcase_add_loop_test(tc, exact_powers_and_maps, 0, NSETS);
    tcase_add_loop_test(tc, reductions, 0, NSETS);
    tcase_add_loop_test(tc, fast_maxmin_and_f32_reductions, 0, NSETS);
    tcase_add_loop_test(tc, maxmin_nan_every_position, 0, NSETS);
    tcase_add_test(tc, vector_math_accuracy);
    tcase_add_loop_test(tc, vector_math_special_values, 0, NSETS);
    tcase_add_loop_test(tc, vector_math_any_position, 0, NSETS);
    tcase_add_loop_test(tc, vector_math_f32, 0, NSETS);
    tcase_add_loop_test(tc, fast_f32_odd_lane_every_position, 0, NSETS);
    tcase_add_loop_test(tc, fast_f64_odd_lane_every_position, 0, NSETS);
    tcase_add_test(tc, exp_tanh_same_bits_at_v4_and_v3);
    tcase_add_loop_test(tc, f32_blocks, 0, NSETS);
    tcase_add_loop_test(tc, copy_tiles, 0, NSETS);
    tcase_add_loop_test(tc, copy_bands, 0, NSETS);
    tcase_add_loop_test(tc, copy_band_blocks, 0, NSETS);
    tcase_add_loop_test(tc, streamed_copies, 0, NSETS);
    tcase_add_loop_test(tc, streaming_note, 0, NSETS);
    tcase_add_loop_test(tc, spreads_over_rows, 0, NSETS);
    tcase_add_loop_test(tc, copies_rows, 0, NSETS);
    tcase_add_loop_test(tc, f32_sum_of_rows, 0, NSETS);
    tcase_add_loop_test(tc, extremum_of_rows, 0, NSETS);
    tcase_add_loop_test(tc, scans, 0, NSETS);
    tcase_add_loop_test(tc, reductions_of_rows, 0, NSETS);
    tcase_add_loop_test(tc, maps_of_sums, 0, NSETS);
    tcase_add_loop_test(tc, maps_after_a_row_reduction, 0, NSETS);
    tcase_add_loop_test(tc, products_of_sums, 0, NSETS);
    tcase_add_loop_test(tc, products_with_a_term, 0, NSETS);
    tcase_add_loop_test(tc, typed_forms, 0, NSETS);
    tcase_add_loop_test(tc, f32_forms, 0, NSETS);
    tcase_add_loop_test(tc, max_min_of_a_number, 0, NSETS);
    tcase_add_loop_test(tc, comparisons_and_where, 0, NSETS);
    tcase_add_loop_test(tc, chunked_reductions, 0, NSETS);
    tcase_add_loop_test(tc, chunked_reductions_f32, 0, NSETS);
    tcase_add_loop_test(tc, sum_of_squares_rows, 0, NSETS);
    tcase_add_loop_test(tc, sparse_map_helpers, 0, NSETS);
    tcase_add_loop_test(tc, complex_functions, 0, NSETS);
    tcase_add_loop_test(tc, complex_blocks, 0, NSETS);
    tcase_add_loop_test(tc, cexp_within_ulps, 0, NSETS);
    tcase_add_loop_test(tc, cfuncs_within_ulps, 0, NSETS);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
