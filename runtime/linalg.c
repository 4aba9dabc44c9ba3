/*
 * linalg.c - the linear-algebra calls (linalg.inc) compiled into
 * libtensorexpr, and the table by which jit.c registers them. The
 * standalone emitter copies linalg.inc itself into its output.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cblas.h>
#include <lapacke.h>

#include "prims.h"
#include "linalg.inc"

#define LA(f) {#f, (const void *)f}
const tx_prim_symbol tx_linalg_symbols[] = {
    LA(tx_la_chol_d), LA(tx_la_inv_d), LA(tx_la_pow_d), LA(tx_la_solve_d), LA(tx_la_eigh_d),
    LA(tx_la_qr_d), LA(tx_la_svd_d), LA(tx_la_chol_s), LA(tx_la_inv_s), LA(tx_la_pow_s),
    LA(tx_la_solve_s), LA(tx_la_eigh_s), LA(tx_la_qr_s), LA(tx_la_svd_s), {0, 0},
};

#define PROTOS(T, S)                                                                              \
    "int tx_la_chol_" S "(int64_t, const " T " *, " T " *, int64_t *);\n"                          \
    "int tx_la_inv_" S "(int64_t, const " T " *, " T " *, int64_t *);\n"                           \
    "int tx_la_pow_" S "(int64_t, const " T " *, int64_t, " T " *, int64_t *);\n"                   \
    "int tx_la_solve_" S "(int64_t, int64_t, const " T " *, const " T " *, " T " *, int64_t *);\n"  \
    "int tx_la_eigh_" S "(int64_t, const " T " *, const " T " *, " T " *, " T " *, int64_t *);\n"   \
    "int tx_la_qr_" S "(int64_t, int64_t, const " T " *, " T " *, " T " *, int64_t *);\n"           \
    "int tx_la_svd_" S "(int64_t, int64_t, const " T " *, " T " *, " T " *, " T " *, int64_t *);\n"
const char tx_linalg_prototypes[] = PROTOS("double", "d") PROTOS("float", "s");
