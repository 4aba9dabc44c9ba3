/*
 * prims.c - the inner-loop primitives (prims.inc) compiled with gcc -O3
 * into libtensorexpr, and the table by which jit.c registers them with
 * libtcc. The standalone emitter copies prims.inc itself into its output.
 */
#include <math.h>
#include <stdint.h>

#include "prims.h"
#include "prims.inc"

#define PRIM(f) {#f, (const void *)f}
const tx_prim_symbol tx_prim_symbols[] = {
    PRIM(tx_p_load_f64), PRIM(tx_p_load_f32), PRIM(tx_p_fill), PRIM(tx_p_store_f64),
    PRIM(tx_p_store_f32), PRIM(tx_p_axpby), PRIM(tx_p_scale_add), PRIM(tx_p_mul), PRIM(tx_p_div),
    PRIM(tx_p_recip), PRIM(tx_p_pow), PRIM(tx_p_map), PRIM(tx_p_max), PRIM(tx_p_min), PRIM(tx_p_sum),
    PRIM(tx_rt_map_check), PRIM(tx_rt_map_has), PRIM(tx_rt_zero),
    {0, 0},
};

/* Prototypes the JIT flavour of generated code declares (it sees no
   headers); they must match prims.inc. */
const char tx_prim_prototypes[] =
    "void tx_p_load_f64(int64_t, const double *, int64_t, double *);\n"
    "void tx_p_load_f32(int64_t, const float *, int64_t, double *);\n"
    "void tx_p_fill(int64_t, double, double *);\n"
    "void tx_p_store_f64(int64_t, const double *, double *, int64_t, int);\n"
    "void tx_p_store_f32(int64_t, const double *, float *, int64_t, int);\n"
    "void tx_p_axpby(int64_t, double, const double *, double, const double *, double *);\n"
    "void tx_p_scale_add(int64_t, double, const double *, double, double *);\n"
    "void tx_p_mul(int64_t, const double *, const double *, double *);\n"
    "void tx_p_div(int64_t, const double *, const double *, double *);\n"
    "void tx_p_recip(int64_t, double, const double *, double *);\n"
    "void tx_p_pow(int64_t, const double *, double, double *);\n"
    "void tx_p_map(int64_t, int, const double *, double *);\n"
    "void tx_p_max(int64_t, const double *, const double *, double *);\n"
    "void tx_p_min(int64_t, const double *, const double *, double *);\n"
    "double tx_p_sum(int64_t, const double *);\n"
    "typedef struct { int64_t nsrc; const int64_t *offsets; const int64_t *targets; } tx_sparse_map;\n"
    "int tx_rt_map_check(const tx_sparse_map *, int64_t, int64_t);\n"
    "int tx_rt_map_has(const tx_sparse_map *, int64_t, int64_t);\n"
    "void tx_rt_zero(void *, int64_t);\n"
    "#define TX_BLOCK 256\n";
