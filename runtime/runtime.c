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
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && !defined(TX_RT_PORTABLE)
#define TX_RT_DISPATCH 1

#define TX_PRIM_ATTR __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

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
#else
const char *tx_rt_isa(void)
{
    return "portable";
}
#endif

#include "prims.inc"
#include "linalg.inc"

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

const tx_runtime_symbol tx_runtime_symbols[] = {
#define TX_SYMBOL(g, r, n, p) {#n, (const void *)n, TXS_##g, #r " " #n #p ";\n"},
#include "symbols.def"
#undef TX_SYMBOL
    {0, 0, 0, 0},
};

const tx_symbol_group tx_symbol_groups[TXS_NGROUPS] = {
    [TXS_BASE] = {"#include <stdint.h>\n", "typedef long int64_t;\ntypedef unsigned long uintptr_t;\n", NULL, 0},
    [TXS_LIBC] = {"#include <stdlib.h>\n", NULL, NULL, 0},
    [TXS_LIBM] = {"#include <math.h>\n", NULL, NULL, 0},
    [TXS_RT] = {NULL, NULL, NULL, 1},
    [TXS_BLAS] = {"#include <cblas.h>\n", "enum { CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 };\n",
                  NULL, 0},
    [TXS_PRIM] = {NULL,
                  "typedef struct { int64_t nsrc; const int64_t *offsets; const int64_t *targets; } tx_sparse_map;\n"
                  "#define TX_SPARSE_MAP_DEFINED\n#define TX_BLOCK 256\n",
                  tx_prims_source, 0},
    [TXS_LINALG] = {"#include <lapacke.h>\n", NULL, tx_linalg_source, 0},
};
