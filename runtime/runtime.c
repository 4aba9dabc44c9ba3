/*
 * runtime.c - the runtime that JIT-compiled code calls, compiled into
 * libtensorexpr: the inner-loop primitives (prims.inc, built with gcc -O3
 * so libtcc's code only runs the outer loops), the linear-algebra calls
 * (linalg.inc), and the one table of every symbol generated code may
 * call, made from symbols.def.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

/*
 * Run-time ISA dispatch (GCC on x86-64 ELF; other compilers get the
 * portable loops of prims.inc). Every primitive is cloned for
 * x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA) and baseline x86-64 by
 * target_clones; the dynamic loader resolves each once (an ifunc) and
 * every reference, (const void *)tx_p_mul in the symbol table included,
 * is the clone the CPU runs. -ffp-contract=off (runtime.o's flags, and
 * -std=c99 anyway) keeps FMA out of the clones, so all three compute the
 * same bits.
 *
 * The elementwise functions (tx_vm_* of prims.inc) come from glibc's
 * libmvec and from SLEEF, lane by lane (vmath.inc: libmvec inside each
 * function's fast domain, SLEEF's 1-ULP functions outside it), pow from
 * SLEEF, at the width of the same level: 8 doubles with AVX-512F, 4 with
 * AVX2+FMA, 2 with SSE2, chosen by the same test as the clones
 * (__builtin_cpu_supports of the level), also through an ifunc. Neither
 * library's headers declare these widths unless the compiler targets
 * them, so they are declared here under names of our own (asm labels):
 * libmvec's by the x86-64 vector function ABI (_ZGVeN8v_exp is exp at 8
 * doubles for AVX-512, d AVX2, b SSE2). glibc tests libmvec to 4 ULP.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && !defined(TX_RT_PORTABLE)
#define TX_RT_DISPATCH 1
#include <immintrin.h>

#define TX_PRIM_ATTR __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define TX_V4 __attribute__((target("arch=x86-64-v4")))
#define TX_V3 __attribute__((target("arch=x86-64-v3")))
/* prims.inc's AVX-512 row max and min, called by every clone when the
   CPU has x86-64-v4 */
#define TX_K512_ATTR TX_V4
#define TX_K512_OK() __builtin_cpu_supports("x86-64-v4")
/* and its AVX2 one, when the CPU has x86-64-v3 */
#define TX_K256_ATTR TX_V3
#define TX_K256_OK() __builtin_cpu_supports("x86-64-v3")

/* 4: x86-64-v4, 3: x86-64-v3, 1: baseline, by the tests target_clones
   makes. Safe in an ifunc resolver: before constructors (hence
   __builtin_cpu_init) and before a sanitizer runtime is ready (hence no
   instrumentation). */
__attribute__((no_sanitize_address, no_sanitize_undefined)) static int tx_rt_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4"))
        return 4;
    if (__builtin_cpu_supports("x86-64-v3"))
        return 3;
    return 1;
}

const char *tx_rt_isa(void)
{
    int l = tx_rt_level();
    return l == 4 ? "x86-64-v4" : l == 3 ? "x86-64-v3" : "x86-64";
}

#include "vmath.inc"

/* F at 8, 4 and 2 doubles: libmvec's (tx_mvec8_F, ...), SLEEF's 1-ULP
   ones (tx_sleef8_F, ...), and the two lane by lane (tx_vf8_F, ...); at 8
   and 4 doubles, MV8 and MV4 inside the domain (libmvec's, or vmath.inc's
   exp and tanh) */
TX_EXPD8_DEF(TX_V4)
TX_EXPD4_DEF(TX_V3)
#define TX_VFUN_DEF(f, MV8, MV4)                                                                  \
    TX_V4 __m512d tx_mvec8_##f(__m512d) __asm__("_ZGVeN8v_" #f);                                   \
    TX_V3 __m256d tx_mvec4_##f(__m256d) __asm__("_ZGVdN4v_" #f);                                   \
    __m128d tx_mvec2_##f(__m128d) __asm__("_ZGVbN2v_" #f);                                         \
    TX_V4 __m512d tx_sleef8_##f(__m512d) __asm__("Sleef_" #f "d8_u10avx512f");                     \
    TX_V3 __m256d tx_sleef4_##f(__m256d) __asm__("Sleef_" #f "d4_u10avx2");                        \
    __m128d tx_sleef2_##f(__m128d) __asm__("Sleef_" #f "d2_u10sse2");                              \
    TX_VBLEND_D8(TX_V4, tx_vf8_##f, MV8, tx_sleef8_##f, TX_DOM_##f)                                \
    TX_VBLEND_D4(TX_V3, tx_vf4_##f, MV4, tx_sleef4_##f, TX_DOM_##f)                                \
    TX_VBLEND_D2(, tx_vf2_##f, tx_mvec2_##f, tx_sleef2_##f, TX_DOM_##f)
TX_VFUN_DEF(exp, tx_expd8_, tx_expd4_)
TX_VFUN_DEF(log, tx_mvec8_log, tx_mvec4_log)
TX_VFUN_DEF(sin, tx_mvec8_sin, tx_mvec4_sin)
TX_VFUN_DEF(cos, tx_mvec8_cos, tx_mvec4_cos)
TX_VFUN_DEF(tanh, tx_tanhd8_, tx_tanhd4_)
TX_V4 __m512d tx_sleef8_pow(__m512d, __m512d) __asm__("Sleef_powd8_u10avx512f");
TX_V3 __m256d tx_sleef4_pow(__m256d, __m256d) __asm__("Sleef_powd4_u10avx2");
__m128d tx_sleef2_pow(__m128d, __m128d) __asm__("Sleef_powd2_u10sse2");

/* d = F(x) over a block at width W: FAST's loop (TX_VM_FAST8_F,
   TX_VM_FAST4_F, or nothing) over the vectors OPND loads, whole vectors,
   then the rest padded with 1.0 (every element through the same function,
   as in prims.inc) */
#define TX_VM_NOFAST(OPND)
#define TX_VM_NOOPND(j) /* the operand loader where FAST is TX_VM_NOFAST (never used) */
#define TX_VM_LD8_(j) _mm512_loadu_pd(x + (j))
#define TX_VM_LD4_(j) _mm256_loadu_pd(x + (j))
#define TX_VM_BLOCK(W, LD, ST, CALL, FAST, OPND)                                                  \
    int64_t i = 0;                                                                                \
    FAST(OPND)                                                                                    \
    for (; i + W <= n; i += W)                                                                    \
        ST(d + i, CALL(LD(x + i)));                                                               \
    if (i < n) {                                                                                  \
        double t[W];                                                                              \
        for (int k = 0; k < W; k++)                                                               \
            t[k] = i + k < n ? x[i + k] : 1.0;                                                    \
        ST(t, CALL(LD(t)));                                                                       \
        for (int k = 0; i + k < n; k++)                                                           \
            d[i + k] = t[k];                                                                      \
    }

typedef void tx_vm1_fn(int64_t, const double *, double *);
typedef void tx_vm2_fn(int64_t, const double *, double, double *);

#define TX_VM_DEF1(f)                                                                             \
    TX_V4 static void tx_vm_##f##_v4(int64_t n, const double *x, double *d)                       \
    {                                                                                             \
        TX_VM_BLOCK(8, _mm512_loadu_pd, _mm512_storeu_pd, tx_vf8_##f, TX_VM_FAST8_##f, TX_VM_LD8_) \
    }                                                                                             \
    TX_V3 static void tx_vm_##f##_v3(int64_t n, const double *x, double *d)                       \
    {                                                                                             \
        TX_VM_BLOCK(4, _mm256_loadu_pd, _mm256_storeu_pd, tx_vf4_##f, TX_VM_FAST4_##f, TX_VM_LD4_) \
    }                                                                                             \
    static void tx_vm_##f##_v1(int64_t n, const double *x, double *d)                             \
    {                                                                                             \
        TX_VM_BLOCK(2, _mm_loadu_pd, _mm_storeu_pd, tx_vf2_##f, TX_VM_NOFAST, TX_VM_NOOPND)        \
    }                                                                                             \
    __attribute__((no_sanitize_address, no_sanitize_undefined)) static tx_vm1_fn *tx_vm_##f##_pick(void) \
    {                                                                                             \
        int l = tx_rt_level();                                                                    \
        return l == 4 ? tx_vm_##f##_v4 : l == 3 ? tx_vm_##f##_v3 : tx_vm_##f##_v1;                 \
    }                                                                                             \
    static void tx_vm_##f(int64_t, const double *, double *) __attribute__((ifunc("tx_vm_" #f "_pick")));
TX_VM_DEF1(exp)
TX_VM_DEF1(log)
TX_VM_DEF1(sin)
TX_VM_DEF1(cos)
TX_VM_DEF1(tanh)

/* d = F(a*x + b*y), or F(a*x + c) where y is NULL: the product and the sum
   rounded as tx_p_axpby and tx_p_scale_add round them (no FMA), in the
   vector that goes into F (prims.inc's tx_p_map_aff) */
#define TX_VM_AFFY4_(j) _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(a), _mm256_loadu_pd(x + (j))), \
                                     _mm256_mul_pd(_mm256_set1_pd(b), _mm256_loadu_pd(y + (j))))
#define TX_VM_AFFC4_(j) _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(a), _mm256_loadu_pd(x + (j))), _mm256_set1_pd(c))
#define TX_VM_AFFY8_(j) _mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(a), _mm512_loadu_pd(x + (j))), \
                                     _mm512_mul_pd(_mm512_set1_pd(b), _mm512_loadu_pd(y + (j))))
#define TX_VM_AFFC8_(j) _mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(a), _mm512_loadu_pd(x + (j))), _mm512_set1_pd(c))
#define TX_VM_AFF_BLOCK(W, LD, ST, SET, MUL, ADD, CALL, FAST, OPNDY, OPNDC)                         \
    int64_t i = 0;                                                                                \
    if (y) {                                                                                      \
        FAST(OPNDY)                                                                               \
    } else {                                                                                      \
        FAST(OPNDC)                                                                               \
    }                                                                                             \
    if (y)                                                                                        \
        for (; i + W <= n; i += W)                                                                \
            ST(d + i, CALL(ADD(MUL(SET(a), LD(x + i)), MUL(SET(b), LD(y + i)))));                 \
    else                                                                                          \
        for (; i + W <= n; i += W)                                                                \
            ST(d + i, CALL(ADD(MUL(SET(a), LD(x + i)), SET(c))));                                 \
    if (i < n) {                                                                                  \
        double t[W];                                                                              \
        for (int k = 0; k < W; k++)                                                               \
            t[k] = i + k < n ? a * x[i + k] + (y ? b * y[i + k] : c) : 1.0;                       \
        ST(t, CALL(LD(t)));                                                                       \
        for (int k = 0; i + k < n; k++)                                                           \
            d[i + k] = t[k];                                                                      \
    }

typedef void tx_vm_aff_fn(int64_t, double, const double *, double, const double *, double, double *);

#define TX_VM_DEF_AFF(f)                                                                          \
    TX_V4 static void tx_vm_##f##_aff_v4(int64_t n, double a, const double *x, double b, const double *y, \
                                         double c, double *d)                                     \
    {                                                                                             \
        TX_VM_AFF_BLOCK(8, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_set1_pd, _mm512_mul_pd, _mm512_add_pd, \
                        tx_vf8_##f, TX_VM_FAST8_##f, TX_VM_AFFY8_, TX_VM_AFFC8_)                   \
    }                                                                                             \
    TX_V3 static void tx_vm_##f##_aff_v3(int64_t n, double a, const double *x, double b, const double *y, \
                                         double c, double *d)                                     \
    {                                                                                             \
        TX_VM_AFF_BLOCK(4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_set1_pd, _mm256_mul_pd, _mm256_add_pd, \
                        tx_vf4_##f, TX_VM_FAST4_##f, TX_VM_AFFY4_, TX_VM_AFFC4_)                   \
    }                                                                                             \
    static void tx_vm_##f##_aff_v1(int64_t n, double a, const double *x, double b, const double *y, double c, \
                                   double *d)                                                     \
    {                                                                                             \
        TX_VM_AFF_BLOCK(2, _mm_loadu_pd, _mm_storeu_pd, _mm_set1_pd, _mm_mul_pd, _mm_add_pd, tx_vf2_##f, \
                        TX_VM_NOFAST, TX_VM_NOOPND, TX_VM_NOOPND)                                 \
    }                                                                                             \
    __attribute__((no_sanitize_address, no_sanitize_undefined)) static tx_vm_aff_fn *tx_vm_##f##_aff_pick(void) \
    {                                                                                             \
        int l = tx_rt_level();                                                                    \
        return l == 4 ? tx_vm_##f##_aff_v4 : l == 3 ? tx_vm_##f##_aff_v3 : tx_vm_##f##_aff_v1;     \
    }                                                                                             \
    static void tx_vm_##f##_aff(int64_t, double, const double *, double, const double *, double, double *) \
        __attribute__((ifunc("tx_vm_" #f "_aff_pick")));
TX_VM_DEF_AFF(exp)
TX_VM_DEF_AFF(log)
TX_VM_DEF_AFF(sin)
TX_VM_DEF_AFF(cos)
TX_VM_DEF_AFF(tanh)

/* pow(x, p): the exponent broadcast */
#define TX_POW8(v) tx_sleef8_pow(v, _mm512_set1_pd(p))
#define TX_POW4(v) tx_sleef4_pow(v, _mm256_set1_pd(p))
#define TX_POW2(v) tx_sleef2_pow(v, _mm_set1_pd(p))
TX_V4 static void tx_vm_pow_v4(int64_t n, const double *x, double p, double *d)
{
    TX_VM_BLOCK(8, _mm512_loadu_pd, _mm512_storeu_pd, TX_POW8, TX_VM_NOFAST, TX_VM_NOOPND)
}
TX_V3 static void tx_vm_pow_v3(int64_t n, const double *x, double p, double *d)
{
    TX_VM_BLOCK(4, _mm256_loadu_pd, _mm256_storeu_pd, TX_POW4, TX_VM_NOFAST, TX_VM_NOOPND)
}
static void tx_vm_pow_v1(int64_t n, const double *x, double p, double *d)
{
    TX_VM_BLOCK(2, _mm_loadu_pd, _mm_storeu_pd, TX_POW2, TX_VM_NOFAST, TX_VM_NOOPND)
}
__attribute__((no_sanitize_address, no_sanitize_undefined)) static tx_vm2_fn *tx_vm_pow_pick(void)
{
    int l = tx_rt_level();
    return l == 4 ? tx_vm_pow_v4 : l == 3 ? tx_vm_pow_v3 : tx_vm_pow_v1;
}
static void tx_vm_pow(int64_t, const double *, double, double *) __attribute__((ifunc("tx_vm_pow_pick")));
#define TX_VM_DEFINED

/* sinh, cosh, and atan2(y, x) of two blocks (prims.inc's complex sin, cos
   and log): SLEEF's 1-ULP functions alone at the level's width */
#define TX_SLEEF_DECL1(f)                                                                         \
    TX_V4 __m512d tx_vf8_##f(__m512d) __asm__("Sleef_" #f "d8_u10avx512f");                        \
    TX_V3 __m256d tx_vf4_##f(__m256d) __asm__("Sleef_" #f "d4_u10avx2");                           \
    __m128d tx_vf2_##f(__m128d) __asm__("Sleef_" #f "d2_u10sse2");
TX_SLEEF_DECL1(sinh)
TX_SLEEF_DECL1(cosh)
#define TX_VM_FAST8_sinh TX_VM_NOFAST
#define TX_VM_FAST8_cosh TX_VM_NOFAST
#define TX_VM_FAST4_sinh TX_VM_NOFAST
#define TX_VM_FAST4_cosh TX_VM_NOFAST
TX_VM_DEF1(sinh)
TX_VM_DEF1(cosh)
TX_V4 __m512d tx_vf8_atan2(__m512d, __m512d) __asm__("Sleef_atan2d8_u10avx512f");
TX_V3 __m256d tx_vf4_atan2(__m256d, __m256d) __asm__("Sleef_atan2d4_u10avx2");
__m128d tx_vf2_atan2(__m128d, __m128d) __asm__("Sleef_atan2d2_u10sse2");
/* d = atan2(y, x) at width W, the last partial vector padded with 1.0 */
#define TX_VM_BLOCK2(W, LD, ST, CALL)                                                             \
    int64_t i = 0;                                                                                \
    for (; i + W <= n; i += W)                                                                    \
        ST(d + i, CALL(LD(y + i), LD(x + i)));                                                    \
    if (i < n) {                                                                                  \
        double s[W], t[W];                                                                        \
        for (int k = 0; k < W; k++) {                                                             \
            s[k] = i + k < n ? y[i + k] : 1.0;                                                    \
            t[k] = i + k < n ? x[i + k] : 1.0;                                                    \
        }                                                                                         \
        ST(t, CALL(LD(s), LD(t)));                                                                \
        for (int k = 0; i + k < n; k++)                                                           \
            d[i + k] = t[k];                                                                      \
    }
typedef void tx_vm3_fn(int64_t, const double *, const double *, double *);
TX_V4 static void tx_vm_atan2_v4(int64_t n, const double *y, const double *x, double *d)
{
    TX_VM_BLOCK2(8, _mm512_loadu_pd, _mm512_storeu_pd, tx_vf8_atan2)
}
TX_V3 static void tx_vm_atan2_v3(int64_t n, const double *y, const double *x, double *d)
{
    TX_VM_BLOCK2(4, _mm256_loadu_pd, _mm256_storeu_pd, tx_vf4_atan2)
}
static void tx_vm_atan2_v1(int64_t n, const double *y, const double *x, double *d)
{
    TX_VM_BLOCK2(2, _mm_loadu_pd, _mm_storeu_pd, tx_vf2_atan2)
}
__attribute__((no_sanitize_address, no_sanitize_undefined)) static tx_vm3_fn *tx_vm_atan2_pick(void)
{
    int l = tx_rt_level();
    return l == 4 ? tx_vm_atan2_v4 : l == 3 ? tx_vm_atan2_v3 : tx_vm_atan2_v1;
}
static void tx_vm_atan2(int64_t, const double *, const double *, double *) __attribute__((ifunc("tx_vm_atan2_pick")));
#define TX_VM_HYP_DEFINED

/* The same in f32 (tx_vmf_F of prims.inc): libmvec's and SLEEF's f32
   functions at 16, 8 and 4 floats, lane by lane (tx_vff16_F, ...); at 16
   and 8 floats, MV16 and MV8 inside the domain (libmvec's, or vmath.inc's
   exp and tanh) */
TX_EXPF16_DEF(TX_V4)
TX_EXPF8_DEF(TX_V3)
#define TX_VFUNF_DEF(f, MV16, MV8)                                                                \
    TX_V4 __m512 tx_mvec16f_##f(__m512) __asm__("_ZGVeN16v_" #f "f");                              \
    TX_V3 __m256 tx_mvec8f_##f(__m256) __asm__("_ZGVdN8v_" #f "f");                                \
    __m128 tx_mvec4f_##f(__m128) __asm__("_ZGVbN4v_" #f "f");                                      \
    TX_V4 __m512 tx_sleef16f_##f(__m512) __asm__("Sleef_" #f "f16_u10avx512f");                    \
    TX_V3 __m256 tx_sleef8f_##f(__m256) __asm__("Sleef_" #f "f8_u10avx2");                         \
    __m128 tx_sleef4f_##f(__m128) __asm__("Sleef_" #f "f4_u10sse2");                               \
    TX_VBLEND_F16(TX_V4, tx_vff16_##f, MV16, tx_sleef16f_##f, TX_DOMF_##f)                         \
    TX_VBLEND_F8(TX_V3, tx_vff8_##f, MV8, tx_sleef8f_##f, TX_DOMF_##f)                             \
    TX_VBLEND_F4(, tx_vff4_##f, tx_mvec4f_##f, tx_sleef4f_##f, TX_DOMF_##f)
TX_VFUNF_DEF(exp, tx_expf16_, tx_expf8_)
TX_VFUNF_DEF(log, tx_mvec16f_log, tx_mvec8f_log)
TX_VFUNF_DEF(sin, tx_mvec16f_sin, tx_mvec8f_sin)
TX_VFUNF_DEF(cos, tx_mvec16f_cos, tx_mvec8f_cos)
TX_VFUNF_DEF(tanh, tx_tanhf16_, tx_tanhf8_)

#define TX_VMF_NOFAST(OPND)

#define TX_VMF_LD16_(j) _mm512_loadu_ps(x + (j))
#define TX_VMF_LD8_(j) _mm256_loadu_ps(x + (j))
#define TX_VMF_BLOCK(W, LD, ST, CALL, FAST, OPND)                                                 \
    int64_t i = 0;                                                                                \
    FAST(OPND)                                                                                    \
    for (; i + W <= n; i += W)                                                                    \
        ST(d + i, CALL(LD(x + i)));                                                               \
    if (i < n) {                                                                                  \
        float t[W];                                                                               \
        for (int k = 0; k < W; k++)                                                               \
            t[k] = i + k < n ? x[i + k] : 1.0f;                                                   \
        ST(t, CALL(LD(t)));                                                                       \
        for (int k = 0; i + k < n; k++)                                                           \
            d[i + k] = t[k];                                                                      \
    }

typedef void tx_vmf1_fn(int64_t, const float *, float *);

#define TX_VMF_DEF1(f)                                                                            \
    TX_V4 static void tx_vmf_##f##_v4(int64_t n, const float *x, float *d)                        \
    {                                                                                             \
        TX_VMF_BLOCK(16, _mm512_loadu_ps, _mm512_storeu_ps, tx_vff16_##f, TX_VMF_FAST16_##f, TX_VMF_LD16_) \
    }                                                                                             \
    TX_V3 static void tx_vmf_##f##_v3(int64_t n, const float *x, float *d)                        \
    {                                                                                             \
        TX_VMF_BLOCK(8, _mm256_loadu_ps, _mm256_storeu_ps, tx_vff8_##f, TX_VMF_FAST8_##f, TX_VMF_LD8_) \
    }                                                                                             \
    static void tx_vmf_##f##_v1(int64_t n, const float *x, float *d)                              \
    {                                                                                             \
        TX_VMF_BLOCK(4, _mm_loadu_ps, _mm_storeu_ps, tx_vff4_##f, TX_VMF_NOFAST, TX_VM_NOOPND)    \
    }                                                                                             \
    __attribute__((no_sanitize_address, no_sanitize_undefined)) static tx_vmf1_fn *tx_vmf_##f##_pick(void) \
    {                                                                                             \
        int l = tx_rt_level();                                                                    \
        return l == 4 ? tx_vmf_##f##_v4 : l == 3 ? tx_vmf_##f##_v3 : tx_vmf_##f##_v1;              \
    }                                                                                             \
    static void tx_vmf_##f(int64_t, const float *, float *) __attribute__((ifunc("tx_vmf_" #f "_pick")));
TX_VMF_DEF1(exp)
TX_VMF_DEF1(log)
TX_VMF_DEF1(sin)
TX_VMF_DEF1(cos)
TX_VMF_DEF1(tanh)

/* d = F(x OP y[i]) or F(x OP c) where y is NULL, OP 0 +, 1 -, 2 *, in
   float (tx_pf_bin's), in the vector that goes into F (prims.inc's
   tx_pf_map_bin) */
#define TX_VMF_OP_(ADD, SUB, MUL, u, v) (op == 0 ? ADD(u, v) : op == 1 ? SUB(u, v) : MUL(u, v))
#define TX_VMF_OPY8_(j) TX_VMF_OP_(_mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_loadu_ps(x + (j)), _mm256_loadu_ps(y + (j)))
#define TX_VMF_OPC8_(j) TX_VMF_OP_(_mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps, _mm256_loadu_ps(x + (j)), _mm256_set1_ps(c))
#define TX_VMF_OPY16_(j) TX_VMF_OP_(_mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps, _mm512_loadu_ps(x + (j)), _mm512_loadu_ps(y + (j)))
#define TX_VMF_OPC16_(j) TX_VMF_OP_(_mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps, _mm512_loadu_ps(x + (j)), _mm512_set1_ps(c))
#define TX_VMF_BIN_BLOCK(W, LD, ST, SET, ADD, SUB, MUL, CALL, FAST, OPNDY, OPNDC)                  \
    int64_t i = 0;                                                                                \
    if (y) {                                                                                      \
        FAST(OPNDY)                                                                               \
    } else {                                                                                      \
        FAST(OPNDC)                                                                               \
    }                                                                                             \
    if (y)                                                                                        \
        for (; i + W <= n; i += W)                                                                \
            ST(d + i, CALL(TX_VMF_OP_(ADD, SUB, MUL, LD(x + i), LD(y + i))));                     \
    else                                                                                          \
        for (; i + W <= n; i += W)                                                                \
            ST(d + i, CALL(TX_VMF_OP_(ADD, SUB, MUL, LD(x + i), SET(c))));                        \
    if (i < n) {                                                                                  \
        float t[W];                                                                               \
        for (int k = 0; k < W; k++) {                                                             \
            float u = i + k < n ? x[i + k] : 0, v = i + k < n ? (y ? y[i + k] : c) : 0;           \
            t[k] = i + k < n ? (op == 0 ? u + v : op == 1 ? u - v : u * v) : 1.0f;                \
        }                                                                                         \
        ST(t, CALL(LD(t)));                                                                       \
        for (int k = 0; i + k < n; k++)                                                           \
            d[i + k] = t[k];                                                                      \
    }

typedef void tx_vmf_bin_fn(int64_t, int, const float *, const float *, float, float *);

#define TX_VMF_DEF_BIN(f)                                                                         \
    TX_V4 static void tx_vmf_##f##_bin_v4(int64_t n, int op, const float *x, const float *y, float c, float *d) \
    {                                                                                             \
        TX_VMF_BIN_BLOCK(16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_add_ps, _mm512_sub_ps, \
                         _mm512_mul_ps, tx_vff16_##f, TX_VMF_FAST16_##f, TX_VMF_OPY16_, TX_VMF_OPC16_) \
    }                                                                                             \
    TX_V3 static void tx_vmf_##f##_bin_v3(int64_t n, int op, const float *x, const float *y, float c, float *d) \
    {                                                                                             \
        TX_VMF_BIN_BLOCK(8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_add_ps, _mm256_sub_ps, \
                         _mm256_mul_ps, tx_vff8_##f, TX_VMF_FAST8_##f, TX_VMF_OPY8_, TX_VMF_OPC8_) \
    }                                                                                             \
    static void tx_vmf_##f##_bin_v1(int64_t n, int op, const float *x, const float *y, float c, float *d) \
    {                                                                                             \
        TX_VMF_BIN_BLOCK(4, _mm_loadu_ps, _mm_storeu_ps, _mm_set1_ps, _mm_add_ps, _mm_sub_ps, _mm_mul_ps, \
                         tx_vff4_##f, TX_VMF_NOFAST, TX_VM_NOOPND, TX_VM_NOOPND)                  \
    }                                                                                             \
    __attribute__((no_sanitize_address, no_sanitize_undefined)) static tx_vmf_bin_fn *tx_vmf_##f##_bin_pick(void) \
    {                                                                                             \
        int l = tx_rt_level();                                                                    \
        return l == 4 ? tx_vmf_##f##_bin_v4 : l == 3 ? tx_vmf_##f##_bin_v3 : tx_vmf_##f##_bin_v1;  \
    }                                                                                             \
    static void tx_vmf_##f##_bin(int64_t, int, const float *, const float *, float, float *)      \
        __attribute__((ifunc("tx_vmf_" #f "_bin_pick")));
TX_VMF_DEF_BIN(exp)
TX_VMF_DEF_BIN(log)
TX_VMF_DEF_BIN(sin)
TX_VMF_DEF_BIN(cos)
TX_VMF_DEF_BIN(tanh)
#define TX_VMF_DEFINED

/* Streaming copies (prims.inc's tx_p_stream_f64, tx_pf_stream) at the
   width of each level: 16 bytes at a time up to the vector's alignment,
   then whole vectors, then 16 bytes at a time again; elements before the
   first 16-byte boundary, and fewer than 16 bytes at the end, one by one
   by movnti (TX_STREAM1: prims.inc says why). */
#define TX_STREAM_COPY(T, AL, W, VSTREAM, VLOAD)                                                  \
    int64_t i = 0;                                                                                \
    const int per16 = 16 / (int)sizeof(T);                                                        \
    for (; i < n && (uintptr_t)(t + i) % 16; i++)                                                 \
        TX_STREAM1(t + i, s + i);                                                                 \
    for (; i + per16 <= n && (uintptr_t)(t + i) % (AL); i += per16)                               \
        TX_STREAM16(t + i, s + i);                                                                \
    for (; i + (W) <= n; i += (W))                                                               \
        VSTREAM(t + i, VLOAD(s + i));                                                             \
    for (; i + per16 <= n; i += per16)                                                            \
        TX_STREAM16(t + i, s + i);                                                                \
    for (; i < n; i++)                                                                            \
        TX_STREAM1(t + i, s + i);
/* NAME(n, s, t) for elements of type T: the copy at 64, 32 and 16 bytes
   (vectors of W4, W3 and W1 elements: SFX the intrinsics' suffix), and
   the ifunc that picks one for the CPU's level */
#define TX_STREAM_DEF(NAME, T, SFX, W4, W3, W1)                                                    \
    TX_V4 static void NAME##_v4(int64_t n, const T *s, T *t)                                       \
    {                                                                                             \
        TX_STREAM_COPY(T, 64, W4, _mm512_stream_##SFX, _mm512_loadu_##SFX)                       \
    }                                                                                             \
    TX_V3 static void NAME##_v3(int64_t n, const T *s, T *t)                                       \
    {                                                                                             \
        TX_STREAM_COPY(T, 32, W3, _mm256_stream_##SFX, _mm256_loadu_##SFX)                       \
    }                                                                                             \
    static void NAME##_v1(int64_t n, const T *s, T *t)                                             \
    {                                                                                             \
        TX_STREAM_COPY(T, 16, W1, _mm_stream_##SFX, _mm_loadu_##SFX)                             \
    }                                                                                             \
    typedef void NAME##_fn(int64_t, const T *, T *);                                              \
    __attribute__((no_sanitize_address, no_sanitize_undefined)) static NAME##_fn *NAME##_pick(void) \
    {                                                                                             \
        int l = tx_rt_level();                                                                    \
        return l == 4 ? NAME##_v4 : l == 3 ? NAME##_v3 : NAME##_v1;                               \
    }                                                                                             \
    static void NAME(int64_t, const T *, T *) __attribute__((ifunc(#NAME "_pick")));
#define TX_STREAM16(d, x) _mm_stream_pd(d, _mm_loadu_pd(x))
#define TX_STREAM1(d, x) _mm_stream_si64((long long *)(void *)(d), ((union { double f; long long i; }){*(x)}).i)
TX_STREAM_DEF(tx_p_stream_f64, double, pd, 8, 4, 2)
#undef TX_STREAM16
#undef TX_STREAM1
#define TX_STREAM16(d, x) _mm_stream_ps(d, _mm_loadu_ps(x))
#define TX_STREAM1(d, x) _mm_stream_si32((int *)(void *)(d), ((union { float f; int i; }){*(x)}).i)
TX_STREAM_DEF(tx_pf_stream, float, ps, 16, 8, 4)
#undef TX_STREAM16
#undef TX_STREAM1
#define TX_STREAM_DEFINED
#else
const char *tx_rt_isa(void)
{
    return "portable";
}
#endif

#include "complex.inc"
#include "prims.inc"
#include "linalg.inc"

/* A primitive's address has two values: in a static initializer (the
   symbol table's, so generated code's) the clone the CPU runs, in code
   the ifunc's PLT entry; GCC folds a comparison with a const pointer into
   the second. tx_rt_red_pair compares with both: these, set as the table
   is, are volatile so that their values are read, not folded. */
static double (*volatile tx_rt_red_sum_at)(int64_t, const double *, double) = tx_p_red_sum;
static double (*volatile tx_rt_redf_sum_at)(int64_t, const float *, double) = tx_p_redf_sum;

tx_rt_red_pair_fn *tx_rt_red_pair(double (*red)(int64_t, const double *, double))
{
    return red == tx_p_red_sum || red == tx_rt_red_sum_at ? tx_p_red_sum_pair : NULL;
}

tx_rt_redf_pair_fn *tx_rt_redf_pair(double (*red)(int64_t, const float *, double))
{
    return red == tx_p_redf_sum || red == tx_rt_redf_sum_at ? tx_p_redf_sum_pair : NULL;
}

double tx_rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Each line of symbols.def checked against the function it names: a
   prototype there that does not match is a compile error here. BLAS is
   written with int for its enums and is not checked. */
#define TX_CHECK_LIBC(r, n, p) static r(*const tx_check_##n) p __attribute__((unused)) = n;
#define TX_CHECK_LIBM TX_CHECK_LIBC
#define TX_CHECK_RT TX_CHECK_LIBC
#define TX_CHECK_PRIM TX_CHECK_LIBC
#define TX_CHECK_LINALG TX_CHECK_LIBC
#define TX_CHECK_BLAS(r, n, p)
#define TX_SYMBOL(g, r, n, p) TX_CHECK_##g(r, n, p)
#include "symbols.def"
#undef TX_SYMBOL

/* Generated code's cblas_dgemm is the library's (gemm.c): the table
   gives tx_rt_dgemm's address under OpenBLAS's name (a macro argument is
   expanded where it is an address, not where it is turned into a string). */
#define cblas_dgemm tx_rt_dgemm
#define cblas_sgemm tx_rt_sgemm
#define cblas_dgemv tx_rt_dgemv
#define cblas_ddot tx_rt_ddot
#define cblas_sdot tx_rt_sdot
const tx_runtime_symbol tx_runtime_symbols[] = {
#define TX_SYMBOL(g, r, n, p) {#n, (const void *)n, TXS_##g, #r " " #n #p ";\n", "static " #r " (*" #n ")" #p ";\n"},
#include "symbols.def"
#undef TX_SYMBOL
    {0, 0, 0, 0, 0},
};
#undef cblas_dgemm
#undef cblas_sgemm
#undef cblas_dgemv
#undef cblas_ddot
#undef cblas_sdot

#define TX_STR_(x) #x
#define TX_STR(x) TX_STR_(x) /* a macro's value as a string literal */

const tx_symbol_group tx_symbol_groups[TXS_NGROUPS] = {
    [TXS_BASE] = {"#include <stdint.h>\n", "typedef long int64_t;\ntypedef unsigned long uintptr_t;\n", NULL, 0, 0},
    [TXS_LIBC] = {"#include <stdlib.h>\n", NULL, NULL, 0, 0},
    [TXS_LIBM] = {"#include <math.h>\n", NULL, NULL, 0, 0},
    [TXS_CPLX] = {NULL, tx_complex_source, tx_complex_source, 0, 0},
    [TXS_RT] = {NULL, NULL, NULL, 1, 1},
    [TXS_BLAS] = {"#include <cblas.h>\n", "enum { CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 };\n",
                  NULL, 0, 1},
    [TXS_PRIM] = {NULL,
                  "typedef struct { int64_t nsrc; const int64_t *offsets; const int64_t *targets; } tx_sparse_map;\n"
                  "#define TX_SPARSE_MAP_DEFINED\n#define TX_BLOCK " TX_STR(TX_BLOCK) "\n"
                  "#define TX_STREAM_BYTES " TX_STR(TX_STREAM_BYTES) "\n"
                  "#ifndef TX_COMPLEX_DEFINED\n#define TX_COMPLEX_DEFINED\n"
                  "typedef struct { float re, im; } tx_c64;\ntypedef struct { double re, im; } tx_c128;\n#endif\n",
                  tx_prims_source, 0, 0},
    [TXS_LINALG] = {"#include <lapacke.h>\n",
                    "#ifndef TX_COMPLEX_DEFINED\n#define TX_COMPLEX_DEFINED\n"
                    "typedef struct { float re, im; } tx_c64;\ntypedef struct { double re, im; } tx_c128;\n#endif\n",
                    tx_linalg_source, 0, 1},
    /* standalone C for the MPI target only: the JIT never declares it */
    [TXS_MPI] = {"#include <mpi.h>\n#include <stdio.h>\n", NULL, tx_mpi_source, 0, 0},
};
