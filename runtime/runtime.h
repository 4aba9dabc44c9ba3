/*
 * runtime.h - how the compiler reaches the runtime that generated code
 * calls: one table of symbols (runtime/symbols.def) and, per group of
 * symbols, how a target that sees headers and one that does not reach it.
 */
#ifndef TX_RUNTIME_H
#define TX_RUNTIME_H

/* The groups of symbols.def, in the order a generated file declares them. */
typedef enum {
    TXS_BASE,   /* no symbols: int64_t */
    TXS_LIBC,   /* malloc, free */
    TXS_LIBM,   /* the math library */
    TXS_RT,     /* the library's own run-time helpers (the JIT only) */
    TXS_BLAS,   /* CBLAS */
    TXS_PRIM,   /* the inner-loop primitives and sparse-map checks (prims.inc) */
    TXS_LINALG, /* the LAPACKE-backed calls (linalg.inc) */
    TXS_NGROUPS
} tx_symbol_group_id;

typedef struct {
    const char *name;      /* the C name */
    const void *addr;      /* its address in this process */
    int group;             /* tx_symbol_group_id */
    const char *prototype; /* "RET NAME(PARAMS);\n" */
} tx_runtime_symbol;

typedef struct {
    const char *headers;      /* what a file that sees headers includes for it (NULL: none) */
    const char *declarations; /* what a file that sees no headers declares before the prototypes */
    const char *source;       /* what a file that sees headers pastes in as static functions (NULL: none) */
    int registered_only;      /* only a loader that registers symbols can reach it */
} tx_symbol_group;

/* Every symbol of symbols.def, ended by a NULL name. */
extern const tx_runtime_symbol tx_runtime_symbols[];
/* Per tx_symbol_group_id. */
extern const tx_symbol_group tx_symbol_groups[TXS_NGROUPS];
/* The text of prims.inc and linalg.inc (generated at build time). */
extern const char tx_prims_source[];
extern const char tx_linalg_source[];

/* Seconds on a monotonic clock (statement timing in JIT code). */
double tx_rt_now(void);

#endif
