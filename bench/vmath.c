/*
 * vmath.c - the elementwise functions the library mixes (runtime/vmath.inc):
 * glibc's libmvec and SLEEF's 1-ULP functions at 8 doubles (16 floats),
 * AVX-512, on ordinary arguments and on the special ones libmvec hands to
 * glibc's scalar functions: ns per element, best of 20 rounds over 4096
 * elements in L1, and the largest error found, in ULP of a long double
 * reference, over those elements.
 *
 *     gcc -O2 -mavx512f -o build/bench/vmath bench/vmath.c -lsleef -lmvec -lm && build/bench/vmath
 *
 * Needs an AVX-512 CPU. Not part of `make bench`.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define DECL(f)                                                                                   \
    __m512d s_##f(__m512d) __asm__("Sleef_" #f "d8_u10avx512f");                                  \
    __m512d m_##f(__m512d) __asm__("_ZGVeN8v_" #f);                                               \
    __m512 sf_##f(__m512) __asm__("Sleef_" #f "f16_u10avx512f");                                  \
    __m512 mf_##f(__m512) __asm__("_ZGVeN16v_" #f "f");
DECL(exp)
DECL(log)
DECL(sin)
DECL(cos)
DECL(tanh)

enum { N = 4096 };
static double x[N], y[N];
static float xf[N], yf[N];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint64_t seed = 88172645463325252ull;
static double u01(void)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (seed >> 11) * 0x1p-53;
}

/* function FN (0 exp ... 4 tanh) at 8 doubles, LIB 0 SLEEF 1 libmvec */
static __m512d call(int fn, int lib, __m512d a)
{
    switch (fn) {
    case 0: return lib ? m_exp(a) : s_exp(a);
    case 1: return lib ? m_log(a) : s_log(a);
    case 2: return lib ? m_sin(a) : s_sin(a);
    case 3: return lib ? m_cos(a) : s_cos(a);
    default: return lib ? m_tanh(a) : s_tanh(a);
    }
}
static __m512 callf(int fn, int lib, __m512 a)
{
    switch (fn) {
    case 0: return lib ? mf_exp(a) : sf_exp(a);
    case 1: return lib ? mf_log(a) : sf_log(a);
    case 2: return lib ? mf_sin(a) : sf_sin(a);
    case 3: return lib ? mf_cos(a) : sf_cos(a);
    default: return lib ? mf_tanh(a) : sf_tanh(a);
    }
}
static long double ref(int fn, long double v)
{
    return fn == 0 ? expl(v) : fn == 1 ? logl(v) : fn == 2 ? sinl(v) : fn == 3 ? cosl(v) : tanhl(v);
}

/* ns per element, best of 20 rounds; *ulp: the largest error (f64 or f32) */
static double time_fn(int fn, int lib, int f32, double *ulp)
{
    double best = 1e9;
    for (int r = 0; r < 20; r++) {
        double t0 = now();
        for (int rep = 0; rep < 10; rep++)
            if (f32)
                for (int i = 0; i < N; i += 16)
                    _mm512_storeu_ps(yf + i, callf(fn, lib, _mm512_loadu_ps(xf + i)));
            else
                for (int i = 0; i < N; i += 8)
                    _mm512_storeu_pd(y + i, call(fn, lib, _mm512_loadu_pd(x + i)));
        double t = (now() - t0) / 10 / N * 1e9;
        best = t < best ? t : best;
    }
    *ulp = 0;
    for (int i = 0; i < N; i++) {
        long double want = ref(fn, f32 ? (long double)xf[i] : (long double)x[i]);
        double got = f32 ? yf[i] : y[i];
        if (!isfinite((double)want) || want == 0 || got == (double)want)
            continue;
        int e;
        frexp(f32 ? (double)(float)want : (double)want, &e);
        double u = ldexp(1.0, e - (f32 ? 24 : 53)), err = (double)(fabsl((long double)got - want) / u);
        *ulp = err > *ulp ? err : *ulp;
    }
    return best;
}

int main(void)
{
    static const char *names[] = {"exp", "log", "sin", "cos", "tanh"};
    static const double lo[] = {-20, 1e-3, -10, -10, -5}, hi[] = {20, 1e3, 10, 10, 5};
    printf("ordinary arguments: ns per element (largest error in ULP)\n");
    printf("%-5s  %-22s %-22s %-22s %-22s\n", "", "f64 SLEEF", "f64 libmvec", "f32 SLEEF", "f32 libmvec");
    for (int fn = 0; fn < 5; fn++) {
        for (int i = 0; i < N; i++) {
            double u = u01();
            x[i] = fn == 1 ? exp(log(lo[fn]) + (log(hi[fn]) - log(lo[fn])) * u) : lo[fn] + (hi[fn] - lo[fn]) * u;
            xf[i] = (float)x[i];
        }
        printf("%-5s ", names[fn]);
        for (int f32 = 0; f32 < 2; f32++)
            for (int lib = 0; lib < 2; lib++) {
                double e, t = time_fn(fn, lib, f32, &e);
                printf(" %6.2f ns (%4.2f ULP)     ", t, e);
            }
        printf("\n");
    }
    printf("\nspecial arguments, f64: ns per element\n");
    static const struct { int fn; double v; const char *what; } sp[] = {
        {0, -INFINITY, "exp(-inf)"}, {0, -800, "exp(-800)"}, {0, -720, "exp(-720), subnormal"}, {0, 800, "exp(800)"},
        {1, 0, "log(0)"}, {1, -1, "log(-1)"}, {1, 1e-310, "log(1e-310)"}, {2, 1e7, "sin(1e7)"},
        {2, 1e300, "sin(1e300)"}, {4, INFINITY, "tanh(inf)"}, {4, NAN, "tanh(nan)"}};
    for (unsigned k = 0; k < sizeof sp / sizeof sp[0]; k++) {
        for (int i = 0; i < N; i++)
            x[i] = sp[k].v;
        double e, ts = time_fn(sp[k].fn, 0, 0, &e), tm = time_fn(sp[k].fn, 1, 0, &e);
        printf("%-22s SLEEF %6.2f  libmvec %6.2f\n", sp[k].what, ts, tm);
    }
    return 0;
}
