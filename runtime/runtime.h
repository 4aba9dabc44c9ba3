/*
 * runtime.h - how the compiler reaches the runtime that generated code
 * calls: one table of symbols (runtime/symbols.def) and, per group of
 * symbols, how a target that sees headers and one that does not reach it.
 */
#ifndef TX_RUNTIME_H
#define TX_RUNTIME_H

#include <stdint.h>

/* The groups of symbols.def, in the order a generated file declares them. */
typedef enum {
    TXS_BASE,   /* no symbols: int64_t */
    TXS_LIBC,   /* malloc, free */
    TXS_LIBM,   /* the math library */
    TXS_CPLX,   /* no symbols: the complex types and their arithmetic (complex.inc) */
    TXS_RT,     /* the library's own run-time helpers (the JIT only) */
    TXS_BLAS,   /* CBLAS */
    TXS_PRIM,   /* the inner-loop primitives and sparse-map checks (prims.inc) */
    TXS_LINALG, /* the LAPACKE-backed calls (linalg.inc) */
    TXS_MPI,    /* the distributed calls of the MPI target (mpi.inc: PBLAS, ScaLAPACK) */
    TXS_NGROUPS
} tx_symbol_group_id;

typedef struct {
    const char *name;      /* the C name */
    const void *addr;      /* its address in this process */
    int group;             /* tx_symbol_group_id */
    const char *prototype; /* "RET NAME(PARAMS);\n" */
    const char *pointer;   /* "static RET (*NAME)(PARAMS);\n": the loader fills it in
                              (TX_SYMBOLS_TABLE) */
} tx_runtime_symbol;

typedef struct {
    const char *headers;      /* what a file that sees headers includes for it (NULL: none) */
    const char *declarations; /* what a file that sees no headers declares before the prototypes */
    const char *source;       /* what a file that sees headers pastes in as static functions (NULL: none) */
    int registered_only;      /* only a loader that registers symbols can reach it */
    int loaded;               /* it lives in libtensorexpr or its libraries (not libc, libm
                                 or a pasted source): a loaded object that links against
                                 nothing of ours reaches it through the loader's table */
} tx_symbol_group;

/* Every symbol of symbols.def, ended by a NULL name. */
extern const tx_runtime_symbol tx_runtime_symbols[];
/* Per tx_symbol_group_id. */
extern const tx_symbol_group tx_symbol_groups[TXS_NGROUPS];
/* The text of prims.inc, linalg.inc, mpi.inc and complex.inc (generated at build time). */
extern const char tx_prims_source[];
extern const char tx_linalg_source[];
extern const char tx_mpi_source[];
extern const char tx_complex_source[];

/* Seconds on a monotonic clock (statement timing in JIT code). */
double tx_rt_now(void);
/* The code level the library's primitives run at on this CPU, chosen
   when the library is loaded: "x86-64-v4" (AVX-512), "x86-64-v3" (AVX2,
   FMA), "x86-64" (SSE2), or "portable" (a build without dispatch). */
const char *tx_rt_isa(void);

/* ---- pool.c: running kernels on threads ---- */
/* A kernel: computes iterations [LO, HI) of its outermost parallel loop
   from its argument record; returns 0 or an error code. */
typedef int (*tx_kernel_fn)(const void *args, int64_t lo, int64_t hi);
/* Runs K over [0, N) split into one contiguous chunk per thread (the
   calling thread takes the first); the result is the same for any number
   of threads. Runs K alone when one thread is asked for or the pool is
   busy. Returns the first non-zero status of a chunk, or 0. */
int tx_rt_parallel(tx_kernel_fn k, const void *args, int64_t n);
/* tx_rt_parallel with one chunk per thread (each thread's share of
   [0, N) is one call of K, unless a thread took another's): for a kernel
   that reads a segment of many rows per call. */
int tx_rt_parallel_wide(tx_kernel_fn k, const void *args, int64_t n);
/* K, a loop of BLAS calls over a batch, over [0, N): on the pool's
   threads with one BLAS thread per call when N divides among them evenly
   enough, else alone with BLAS's threads as they are. Returns as
   tx_rt_parallel. */
int tx_rt_parallel_blas(tx_kernel_fn k, const void *args, int64_t n);
/* cblas_dgemm's contract, OpenBLAS's result: the GEMM generated code
   calls in the library (gemm.c says when it computes the transposed
   problem instead, and why). */
void tx_rt_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);
/* cblas_sgemm's contract, OpenBLAS's result: the library's (gemm.c: tall
   products on several threads in bands of rows, one per pool thread). */
void tx_rt_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
/* The library's cblas_dgemv (gemm.c): a row-major untransposed product
   by its own AVX2 loop, large ones on the pool's threads (the same bits
   for any number of threads), anything else OpenBLAS's. Same arguments. */
void tx_rt_dgemv(int order, int trans, int m, int n, double alpha, const double *a, int lda, const double *x,
                 int incx, double beta, double *y, int incy);
/* The library's cblas_ddot and cblas_sdot (gemm.c): unit strides on the
   pool's threads in chunks fixed by N (the same bits for any number of
   threads), summed in double; other strides OpenBLAS's. Same arguments. */
double tx_rt_ddot(int n, const double *x, int incx, const double *y, int incy);
float tx_rt_sdot(int n, const float *x, int incx, const float *y, int incy);
/* RED (tx_p_red_sum, _prod, _max, _min) over the N contiguous doubles at
   X, folded into ACC: the chunks of tx_p_red_chunked (prims.inc), on the
   pool's threads, with the same bits as tx_p_red_chunked for any number
   of threads. */
double tx_rt_reduce(double (*red)(int64_t, const double *, double), int64_t n, const double *x, double acc);
/* The same over N contiguous floats: RED (tx_p_redf_sum, _prod, _max,
   _min) folds each chunk in double, FOLD (tx_p_red_OP) the chunks'
   results in order: the bits of tx_p_redf_chunked for any number of
   threads. */
double tx_rt_reducef(double (*red)(int64_t, const float *, double), double (*fold)(int64_t, const double *, double),
                     int64_t n, const float *x, double acc);
/* For a reduction RED over doubles (REDF over floats): the primitive that
   folds two blocks of one length read side by side with the bits of RED
   (REDF) over each, A[0] and A[1] the blocks' accumulators in and their
   results out -- tx_p_red_sum_pair for tx_p_red_sum, tx_p_redf_sum_pair
   for tx_p_redf_sum -- or NULL. tx_rt_reduce's chunks go two at a time
   through it. */
typedef void tx_rt_red_pair_fn(int64_t n, const double *x, const double *y, double *a);
typedef void tx_rt_redf_pair_fn(int64_t n, const float *x, const float *y, double *a);
tx_rt_red_pair_fn *tx_rt_red_pair(double (*red)(int64_t, const double *, double));
tx_rt_redf_pair_fn *tx_rt_redf_pair(double (*red)(int64_t, const float *, double));
/* Sets the threads the calling thread's kernels may use (0: the default). */
void tx_rt_set_threads(int n);
/* The threads the calling thread's kernels use now. */
int tx_rt_threads(void);
/* The default: TX_NUM_THREADS if set to a positive number, else the
   online cores; read once, at the first call. */
int tx_rt_default_threads(void);

#endif
