/*
 * prims_isa.c - runtime/prims.inc compiled for one code level, chosen by
 * -DTX_ISA=4, 3 or 1 (x86-64-v4, x86-64-v3, baseline), with the flags
 * runtime.o is compiled with: what each target_clones clone of the
 * library is, but callable whatever the CPU picked for the library.
 * The elementwise functions here are prims.inc's plain libm loops (the
 * library's libmvec versions live in runtime.c).
 */
#include <math.h>
#include <stdint.h>

#include "prims_isa.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#if TX_ISA == 4
#define TX_PRIM_ATTR __attribute__((target("arch=x86-64-v4")))
#define TABLE prims_isa_v4
#include <immintrin.h>
#define TX_K512_ATTR TX_PRIM_ATTR
#define TX_K512_OK() 1
#define TX_K256_ATTR TX_PRIM_ATTR
#define TX_K256_OK() 1
#elif TX_ISA == 3
#define TX_PRIM_ATTR __attribute__((target("arch=x86-64-v3")))
#define TABLE prims_isa_v3
#include <immintrin.h>
#define TX_K256_ATTR TX_PRIM_ATTR
#define TX_K256_OK() 1
#else
#define TX_PRIM_ATTR __attribute__((target("arch=x86-64")))
#define TABLE prims_isa_v1
#endif

#include "complex.inc" /* before prims.inc, as in runtime.c: tx_p_cdiv */
#include "prims.inc"

const prims_isa_entry TABLE[] = {
#define TX_SYMBOL(g, r, n, p) TX_ISA_##g(n)
#define TX_ISA_PRIM(n) {#n, (const void *)n},
#define TX_ISA_LIBC(n)
#define TX_ISA_LIBM(n)
#define TX_ISA_RT(n)
#define TX_ISA_BLAS(n)
#define TX_ISA_LINALG(n)
#include "symbols.def"
    {0, 0},
};
#else
#if TX_ISA == 4
const prims_isa_entry prims_isa_v4[] = {{0, 0}};
#elif TX_ISA == 3
const prims_isa_entry prims_isa_v3[] = {{0, 0}};
#else
const prims_isa_entry prims_isa_v1[] = {{0, 0}};
#endif
#endif
