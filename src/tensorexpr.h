/*
 * tensorexpr.h — the public interface of libtensorexpr.
 *
 * A .tx program (see tx(5)) is compiled once with tx_compile(), its tensors
 * are bound to caller-owned arrays with tx_bind() or tx_bind_array(), and
 * tx_run() JIT-compiles it through libtcc (specialised on the bound
 * extents) and runs it.  A program can be run many times with new
 * bindings; it is recompiled only when an extent or the strides of a
 * binding change.
 *
 * Call order: tx_new → tx_compile
 * → (tx_set_dim | tx_bind | tx_bind_array | tx_bind_sparse)*
 * → tx_run → ... → tx_program_free → tx_free.
 *
 * Every function that can fail returns a status (or NULL) and leaves a
 * message for tx_errmsg(); none prints or exits.  A context is used by one
 * thread at a time; separate contexts are independent.
 */
#ifndef TENSOREXPR_H
#define TENSOREXPR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TX_VERSION_MAJOR 0
#define TX_VERSION_MINOR 1
#define TX_VERSION_PATCH 0
#define TX_VERSION_STRING "0.1.0"

#if defined(TX_BUILDING_LIBRARY) && defined(__GNUC__)
#define TX_API __attribute__((visibility("default")))
#else
#define TX_API
#endif

/* Status codes: fixed values, never renumbered. */
typedef enum {
    TX_OK = 0,
    TX_ERR_NOMEM = 1,   /* out of memory */
    TX_ERR_ARG = 2,     /* bad argument: unknown name, NULL pointer, bad value */
    TX_ERR_COMPILE = 3, /* the .tx program has errors (see tx_errmsg) */
    TX_ERR_BIND = 4,    /* a binding does not fit its declaration */
    TX_ERR_RUN = 5,     /* a run-time check failed (dims, bad data) */
    TX_ERR_JIT = 6,     /* libtcc could not compile the generated code */
    TX_ERR_INTERNAL = 7 /* a bug in tensorexpr: an internal check failed
                           ("internal error: CONDITION (FILE:LINE)"); the
                           compilation's memory is freed and the context
                           stays usable */
} tx_status;

typedef struct tx_ctx tx_ctx;
typedef struct tx_program tx_program;

/* A sparse map (tx(5) §7): the targets of source tuple s are
   targets[offsets[s] .. offsets[s+1]), sorted ascending. */
#ifndef TX_SPARSE_MAP_DEFINED
#define TX_SPARSE_MAP_DEFINED
typedef struct {
    int64_t nsrc;
    const int64_t *offsets;
    const int64_t *targets;
} tx_sparse_map;
#endif

typedef enum { TX_IN = 1, TX_OUT = 2, TX_INOUT = 3 } tx_io;
/* Element types; complex ones are (re, im) pairs, interleaved: TX_C64 is
   numpy's complex64 (float _Complex), TX_C128 complex128 (double _Complex). */
typedef enum { TX_F32 = 1, TX_F64 = 2, TX_C64 = 3, TX_C128 = 4 } tx_dtype;

/* What a program declares for one of its parameter tensors. */
typedef struct {
    const char *name;          /* as written in the .tx file (UTF-8) */
    tx_io io;
    tx_dtype dtype;
    int ndim;
    const char *const *dims;   /* per mode: the dim's name, or NULL if the extent is a constant */
    const int64_t *extents;    /* per mode: the constant extent, or -1 if symbolic */
} tx_tensor_info;

/* Options of a context; they apply to programs compiled after they are set. */
typedef enum {
    TX_OPTION_OPT_LEVEL = 1, /* 0: no pass; 1: the passes that need no sizes
                                (cse, fold, dce, fuse); 2 (default): also the
                                contraction order and BLAS */
    TX_OPTION_TIMING = 2,    /* 1: tx_run records per-statement times (tx_timing) */
    TX_OPTION_THREADS = 3,   /* threads of the program's loops and of BLAS/LAPACK together;
                                0 (default): TX_NUM_THREADS if set, else every core */
    TX_OPTION_MPI_RANKS = 4, /* P > 0: tx_graph also says what the MPI target does with each
                                call on P ranks and its communication volume (tx_mpi(7));
                                0 (default): nothing. Read when tx_graph runs */
    TX_OPTION_HUGE_PAGES = 5, /* 1 (default): tx_run's workspace and staged arrays of
                                2 MiB or more are advised MADV_HUGEPAGE; 0: not */
    TX_OPTION_BACKEND = 6    /* what tx_run compiles the code with (tx_backend):
                                TX_BACKEND_TCC (default) or TX_BACKEND_CC */
} tx_option;

/* Values of TX_OPTION_BACKEND: fixed, never renumbered. */
typedef enum {
    TX_BACKEND_TCC = 0, /* libtcc in memory: compiles in milliseconds */
    TX_BACKEND_CC = 1   /* the system compiler at -O3 for this CPU ($TX_CC, else $CC,
                           else cc), the object cached on disk; libtcc when there is
                           no compiler or it fails (tx_backend says which ran) */
} tx_backend_kind;

/* Options of tx_emit(). A zeroed struct gives the defaults. */
typedef struct {
    const char *name; /* the C function's name; NULL: derived from the file name */
    int no_blas;      /* 1: self-contained C99, no cblas.h/lapacke.h */
    int header;       /* 1: emit the header (.h) instead of the source */
    int mpi;          /* 1: the MPI target: FN(MPI_Comm, ...) on replicated tensors, with
                         pdgemm and ScaLAPACK (tx_mpi(7)); not with no_blas */
} tx_emit_options;

/* Returns a new context, or NULL if out of memory. */
TX_API tx_ctx *tx_new(void);

/* Frees a context. Programs compiled in it must be freed first. NULL is a no-op. */
TX_API void tx_free(tx_ctx *ctx);

/* Sets an option (tx_option) for later compilations. Returns TX_OK or TX_ERR_ARG. */
TX_API int tx_set_option(tx_ctx *ctx, tx_option option, int value);

/* Compiles SRC (LEN bytes, need not be NUL-terminated); FILENAME is used in
   diagnostics and to name the generated function. Returns NULL on error;
   tx_errmsg() then holds every diagnostic, one per line block. */
TX_API tx_program *tx_compile(tx_ctx *ctx, const char *src, size_t len, const char *filename);

/* The message of the last failure in CTX ("" if none). Valid until the next
   call on CTX or on a program compiled in it. */
TX_API const char *tx_errmsg(const tx_ctx *ctx);

/* The status of the last failure in CTX (TX_ERR_COMPILE after a program
   with errors, TX_ERR_NOMEM when memory ran out, ...). */
TX_API int tx_errcode(const tx_ctx *ctx);

/* A fixed description of a status code. */
TX_API const char *tx_strerror(int status);

/* Binds tensor TENSOR (an in, out or inout tensor) to DATA, a row-major
   array of the declared element type with NDIM modes of the given SHAPE.
   The shape is checked against the declaration now (rank, constant
   extents, dims set with tx_set_dim); that the bindings agree with each
   other on every symbolic dim is checked by tx_run, so all tensors can be
   rebound with new extents one after the other. The array
   stays owned by the caller and must live until the last tx_run using it.
   The array is assumed to have the declared element type (no type is
   passed, so none can be checked: use tx_bind_array for that). Same as
   tx_bind_array with the declared type and NULL strides. */
TX_API int tx_bind(tx_program *p, const char *tensor, void *data, int ndim, const int64_t *shape);

/* Binds tensor TENSOR to an array of element type DTYPE and NDIM modes of
   the given SHAPE whose element (i0, i1, ...) is at
   DATA + sum(i_m * STRIDES[m]) elements: STRIDES counts elements, not
   bytes, and may be negative or zero (a numpy slice, transpose or
   broadcast); NULL means row-major (C order). A DTYPE other than the
   declared one is TX_ERR_BIND. An out or inout tensor must not have
   elements that share memory: a zero stride on a mode of extent above 1,
   or strides that may make two elements meet, are TX_ERR_BIND. The array
   is used in place: tx_run's code is specialised on the strides (and made
   again when they change), except where a BLAS or LAPACK call cannot read
   them; such an array is copied into a contiguous buffer before each run
   (and back after a successful one, for out and inout).
   Shape checks and lifetime are those of tx_bind. */
TX_API int tx_bind_array(tx_program *p, const char *tensor, void *data, tx_dtype dtype, int ndim,
                         const int64_t *shape, const int64_t *strides);

/* Binds sparse map MAP to M (tx(5) §7), owned by the caller and alive
   until the last tx_run using it. Its contents are checked by every run
   before any loop reads through it (a bad map is TX_ERR_RUN). */
TX_API int tx_bind_sparse(tx_program *p, const char *map, const tx_sparse_map *m);

/* What a program declares for one of its sparse maps. */
typedef struct {
    const char *name;
    int nsrc, ndst; /* source and target labels */
} tx_map_info;

/* Number of sparse maps, in declaration order. */
TX_API int tx_map_count(const tx_program *p);

/* Describes sparse map I (0-based). */
TX_API int tx_map_get(const tx_program *p, int i, tx_map_info *info);

/* The extents of sparse map MAP's source then target modes (nsrc + ndst
   entries), from the dims set and the tensors bound so far. */
TX_API int tx_map_shape(tx_program *p, const char *map, int64_t *shape);

/* Sets symbolic dim DIM to EXTENT (>= 0). Later bindings must agree with
   it; earlier ones are checked by tx_run. Setting a constant dim to its own
   value is accepted. */
TX_API int tx_set_dim(tx_program *p, const char *dim, int64_t extent);

/* Runs the program on the current bindings: JIT-compiles on the first run
   and whenever an extent or the strides of a binding (tx_bind_array)
   changed since the last compilation (code made for the last four other
   extents and layouts is kept and taken back). Every
   parameter tensor must be bound. An out or inout tensor whose memory
   overlaps another binding is computed into a private buffer and copied
   into the caller's array after success, so results are as if every input
   had been read before any output was written. Returns TX_OK (0) or an
   error status. */
TX_API int tx_run(tx_program *p);

/* Binds every parameter tensor at once and runs: tensor k (declaration
   order, as tx_tensor_get's I) is bound as by tx_bind_array(p, its name,
   DATA[k], its declared type, its rank, SHAPES + o_k, STRIDES + o_k), o_k
   being the sum of the ranks of the tensors before it; STRIDES NULL means
   every array row-major. Then tx_run. The bindings stay as for later
   tx_run calls. One call instead of one per tensor and no name lookups:
   the cheap way to call a compiled program again and again (Python's
   einsum does). Returns TX_OK or the status of the failed bind or run. */
TX_API int tx_run_arrays(tx_program *p, void *const *data, const int64_t *shapes, const int64_t *strides);

/* As tx_run_arrays, but WHERE[k] is the address of a pointer that holds
   tensor k's data address, read at the call: for language bindings whose
   array objects keep their data pointer at a known place (numpy's), which
   can then pass the objects' addresses instead of reading each pointer
   out first. Returns as tx_run_arrays. */
TX_API int tx_run_arrays_at(tx_program *p, void *const *const *where, const int64_t *shapes,
                            const int64_t *strides);

/* The standalone C99 source of the program (tx(5) §8), NUL-terminated, in
   malloc'd memory the caller frees; its length in *LEN if LEN is not NULL.
   Same as tx_emit() with default options. NULL on error. */
TX_API char *tx_emit_c(tx_program *p, size_t *len);

/* Standalone C source or header with options (see tx_emit_options). */
TX_API char *tx_emit(tx_program *p, const tx_emit_options *opts, size_t *len);

/* The optimised operation graph as a text listing (DOT = 0) or Graphviz
   (DOT = 1), in malloc'd memory the caller frees. NULL on error. */
TX_API char *tx_graph(tx_program *p, int dot, size_t *len);

/* The graph after one stage of the compiler, PASS ("lower" or a pass of
   the optimisation level: "cse", "fold", "dce", "order", "blas", "fuse"),
   or after each in turn (PASS "all"), each listing under a line
   "# after ...". PASS NULL is tx_graph(). An unknown PASS, or one the
   level does not run, is TX_ERR_ARG with the valid names in tx_errmsg(). */
TX_API char *tx_graph_after(tx_program *p, const char *pass, int dot, size_t *len);

/* Number of parameter tensors (in, out, inout), in declaration order. */
TX_API int tx_tensor_count(const tx_program *p);

/* Describes parameter tensor I (0-based). Pointers stay valid while P lives. */
TX_API int tx_tensor_get(const tx_program *p, int i, tx_tensor_info *info);

/* Resolves the extents of TENSOR from the dims set and the shapes bound so
   far into SHAPE (its ndim entries). TX_ERR_BIND if a dim is still unknown. */
TX_API int tx_tensor_shape(tx_program *p, const char *tensor, int64_t *shape);

/* The extents of the program's symbolic dims, in the order the generated
   function takes them (tx(5) section 8), resolved from the dims set and
   the tensors bound so far, into VALUES (room for MAX); *COUNT gets their
   number. TX_ERR_ARG if MAX is too small, TX_ERR_BIND if one is unknown
   or two bindings disagree. */
TX_API int tx_dim_values(tx_program *p, int64_t *values, int max, int *count);

/* Number of statements of the program. */
TX_API int tx_stmt_count(const tx_program *p);

/* With TX_OPTION_TIMING: the seconds statement I took in the last run, and
   its source line. I = -1 gives the time the last run spent generating and
   JIT-compiling code (0 when it reused the compiled code). */
TX_API int tx_timing(const tx_program *p, int i, double *seconds, int *line);

/* The statement (from 1, as tx_timing's I + 1) that a tx_run of P running
   in another thread is executing now; 0 when none runs. Meant for a host
   thread that shows progress: it reads without a lock, so the answer may
   be a moment old. */
TX_API int tx_progress(const tx_program *p);

/* One call of the compiled program: a loop nest (a kernel) or a BLAS or
   LAPACK call, in the order the program makes them. */
typedef struct {
    int stmt;            /* the statement it belongs to (as tx_timing's I) */
    int line;            /* that statement's line */
    const char *kind;    /* "loop nest", "gemm", "batched gemm", "gemv", "dot", "cholesky", ... */
    const char *op;      /* what it computes, as in the listing: "contract", "map", "reduce",
                            "scan", "slice", "store", "linalg" */
    double seconds;      /* with TX_OPTION_TIMING: its time in the last run, else 0 */
    double flops;        /* its floating-point operations (multiply and add counted apart) */
    double bytes;        /* the bytes it reads and writes */
} tx_call_info;

/* The number of calls of the code the last tx_run compiled (0 before the
   first run). */
TX_API int tx_call_count(const tx_program *p);
/* Call I (0 <= I < tx_call_count) into *INFO; the strings live as long as
   the compiled code (until the extents change or the program is freed).
   TX_ERR_ARG if I is out of range. */
TX_API int tx_call_get(const tx_program *p, int i, tx_call_info *info);

/* The backend that compiled the code of P's last tx_run: "tcc" or "cc"
   (NULL before the first run). If DETAIL is not NULL, *DETAIL gets how:
   "libtcc in memory", "cached PATH" (the cc tier found the object in its
   cache and did not compile), "compiled by COMPILER in N ms into PATH",
   or "fallback to tcc: REASON" when the cc tier was asked for and could
   not be used. The strings live as long as the compiled code. */
TX_API const char *tx_backend(const tx_program *p, const char **detail);
/* Frees a program. NULL is a no-op. */
TX_API void tx_program_free(tx_program *p);

#ifdef __cplusplus
}
#endif
#endif /* TENSOREXPR_H */
