/*
 * target.c - the targets code generation can be asked for, as data (QBE's
 * Target, Halide's Target): every fact the emitter consults about where
 * its output goes lives in one of these values, and nothing in emit_*.c
 * asks "am I the JIT?".
 *
 * A new target (the cc tier, MPI) is a new value here; if it needs a fact
 * the struct does not have, the fact becomes a field that every target
 * states.
 */
#include "tx.h"

#define F32_F64 ((1u << DT_F32) | (1u << DT_F64))
#define COMPLEX ((1u << DT_C64) | (1u << DT_C128))

const tx_target target_jit_tcc = {
    .name = "jit-tcc",
    .entry = TX_ENTRY_ARGV,
    .symbols = TX_SYMBOLS_REGISTERED,
    .specialised = 1,
    .blas = 1,
    .dtypes = F32_F64 | COMPLEX,
    .workspace = 1,
    .threads = TX_THREADS_POOL,
    .distributed = 0,
    .load = jit_tcc_load,
    .fallback = NULL,
};

const tx_target target_jit_cc = {
    .name = "jit-cc",
    .entry = TX_ENTRY_ARGV,
    .symbols = TX_SYMBOLS_TABLE,
    .specialised = 1,
    .blas = 1,
    .dtypes = F32_F64 | COMPLEX,
    .workspace = 1,
    .threads = TX_THREADS_POOL,
    .load = jit_cc_load,
    .fallback = &target_jit_tcc,
    .distributed = 0,
};

const tx_target target_c99_blas = {
    .name = "c99-blas",
    .entry = TX_ENTRY_NAMED,
    .symbols = TX_SYMBOLS_INLINE,
    .specialised = 0,
    .blas = 1,
    .dtypes = F32_F64 | COMPLEX,
    .workspace = 0,
    .threads = TX_THREADS_OPENMP,
    .distributed = 0,
    .load = NULL,
    .fallback = NULL,
};

const tx_target target_c99 = {
    .name = "c99",
    .entry = TX_ENTRY_NAMED,
    .symbols = TX_SYMBOLS_INLINE,
    .specialised = 0,
    .blas = 0,
    .dtypes = F32_F64 | COMPLEX,
    .workspace = 0,
    .threads = TX_THREADS_OPENMP,
    .distributed = 0,
    .load = NULL,
    .fallback = NULL,
};

const tx_target target_mpi = {
    .name = "mpi",
    .entry = TX_ENTRY_NAMED,
    .symbols = TX_SYMBOLS_INLINE,
    .specialised = 0,
    .blas = 1,
    .dtypes = F32_F64 | COMPLEX, /* c128 GEMMs through pzgemm; complex matrix functions replicated */
    .workspace = 0,
    .threads = TX_THREADS_OPENMP,
    .distributed = 1,
    .load = NULL,
    .fallback = NULL,
};
