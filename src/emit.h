/*
 * emit.h - the emitter's private interface, shared by the emit_*.c files
 * and included by nothing else. The public entry points (emit_c,
 * emit_header, mangle_name, emit_name_ok) are in tx.h.
 *
 * The emitter turns an optimised OpGraph into C text for a target
 * (target.c). Its files, by concern:
 *
 *   emit_program.c  the file: runtime declarations, kernels, the program
 *                   function (checks, allocation, the statements in order,
 *                   BLAS and LAPACK calls, error codes), the header
 *   emit_kernel.c   outlining: a loop nest becomes
 *                   `static int tx_kN(const tx_kN_args *, int64_t lo, int64_t hi)`
 *                   over a record of exactly what it references
 *   emit_memory.c   buffers: sizes, liveness, the JIT's workspace plan
 *   emit_dense.c    dense loop nests: computed values, stores, slices, scans;
 *                   transposing copies and stores in cache tiles
 *   emit_blocks.c   inner loops run block by block through runtime/prims.inc
 *   emit_sparse.c   loop nests that follow sparse maps
 *   emit_blas.c     contractions as CBLAS calls (plans from pass_blas.c), in
 *                   loops over batch and looped labels
 *   emit_linalg.c   the LAPACK-backed calls
 *   emit_expr.c     expressions: extents, element addresses, elementwise
 *                   values, loop heads
 *   emit_names.c    C names (mangling, names a user may choose) and literals
 *
 * Every name from the .tx file is mangled (mangle_name): tensors t_, dims
 * d_, labels l_, maps m_; generated names start with tx_. Loop variables
 * are the statement's labels; addresses are flat row-major arithmetic
 * (libtcc has no VLAs worth using).
 */
#ifndef TX_EMIT_H
#define TX_EMIT_H

#include <stdarg.h>

#include "tx.h"
#include "runtime.h"

/* An open entry loop of a sparse map (see emitter.entries). */
typedef struct {
    int id, ndst, depth;
    const int *dst;
    const tx_extent *ext;
    int refs_at_decode[TX_MAX_MODES]; /* label references when its decode was emitted */
} entry_ctx;

#define KERNEL_MAX_ENTRY_LOOPS 64

/* The kernel being emitted (emit_kernel.c). */
typedef struct {
    int active;
    int id;
    const g_value *value;    /* what it computes or stores */
    tx_buf body;             /* the loop nest's text */
    tx_buf *program;         /* where the call goes */
    /* what the body references, the record carries exactly these: per
       kind (REF_VAR, REF_VALUE, REF_DIM, REF_MAP) the indices in the order
       first referenced; stamp[i] == gen marks index i as in the list (so
       starting a kernel costs nothing, whatever the program's size) */
    struct {
        int *stamp, *list;
        int n;
    } refs[4];
    int gen;
    int want_range;          /* the next loop over an output label runs over [tx_lo, tx_hi) */
    int has_range;           /* one did */
    int range_label;         /* the label of the loop over the range, -1 if blocks */
    tx_extent range_ext;     /* the call's range is [0, range_ext) ... */
    int range_blocks;        /* ... counted in blocks of TX_BLOCK when set */
    int range_wide;          /* one chunk of the range per thread (tx_rt_parallel_wide) */
    int range_n;             /* the loops the range runs over together (the MPI target fuses a
                                result's leading loops, emit_kernel.c): range_labels[0] is
                                range_label, and the range is the product of range_exts */
    int range_labels[TX_MAX_MODES];
    tx_extent range_exts[TX_MAX_MODES];
    int fuse_max;            /* the most leading loops of the result the range may fuse (1: none) */
    int blk_buffers;         /* scratch blocks the body uses (high-water mark) */
    int blk_refs;            /* references to scratch blocks emitted so far */
    int row_local;           /* the body addresses a row-local tensor (pass_fuse.c) by tx_rs */
    int tile_rows;           /* the body runs its range in tiles of this many rows (a row
                                group's tiles are at least that tall); 0: any */
    int streams;             /* stores that may stream (emit_blocks.c, tx_ntN flags): the kernel
                                has the block tx_ntb, and fences its stores at its end */
    /* entry loops whose decoded target labels are used: learnt by a first
       emission of a sparse kernel, used by the second */
    int decode_pass;         /* 0: no sparse maps; 1: learning; 2: emitting */
    unsigned char decode_used[KERNEL_MAX_ENTRY_LOOPS][TX_MAX_MODES];
} kernel_ctx;

#define ROW_GROUP_MAX 32

/* The kernels of a row group (pass_fuse.c) whose calls wait for the
   group's one call, tile by tile of rows (emit_kernel.c). */
typedef struct {
    int n;                   /* kernels so far; 0: no group open */
    int group;               /* their values' row_group */
    int id[ROW_GROUP_MAX];   /* kernel numbers */
    const char *init[ROW_GROUP_MAX]; /* each record's initialiser */
    const g_value *value[ROW_GROUP_MAX];
    int row_local[ROW_GROUP_MAX]; /* the kernel's record has tx_rbase (emit_kernel.c) */
    int tile_rows;           /* the most of their kernel_ctx.tile_rows */
    tx_extent ext;           /* the rows: [0, ext) */
} row_pending;

#define BLK_MAX_BUFFERS 32
#define BLK_MAX_PANELS 2 /* transposed operands copied in panels (emitter.panels) */

typedef struct emitter {
    graph *g;
    const tx_target *T;
    const emit_options *o;
    tx_buf *out;             /* where put() writes */
    tx_buf kernels;          /* the kernels' definitions, before the program function */
    tx_buf *program;         /* the program function's text */
    emit_error *errs;
    int nerrs, caperrs;
    unsigned groups;         /* runtime symbol groups used: bit (1 << TXS_*) */
    int uses_fmax, uses_fmin;
    int uses_openmp;         /* a kernel call may run under OpenMP */
    const char *blas_ref;    /* "&" when the BLAS call being written takes alpha and beta by address */
    int nkernels;
    emit_call *calls;        /* the program's calls in order (profiles) */
    int ncalls, capcalls;
    kernel_ctx k;
    row_pending rows;        /* a row group's kernels waiting for their call */
    int label_refs[TX_MAX_LABELS]; /* times each label's loop variable was written */
    /* the entry loops of sparse maps open around the code being emitted:
       a tensor whose last modes are a map's targets, in order, is
       addressed with the entry's flat target index (no divisions) */
    entry_ctx entries[16];
    int nentries;
    int row_shift;           /* put_horner: the first index plus tx_rs (a row-local tensor) */
    int blk_dest;            /* emit_blocks.c: 1 + N, the next block operation writes the pointer
                                tx_pN (f64) or tx_qN (f32), the store's target, instead of a
                                scratch block; 0: none */
    int blk_dest_f32;        /* with blk_dest: tx_pN is the f32 target (float *), which only a
                                typed primitive (prims.inc's TX_P_TYPED) writes */
    struct {                 /* emit_blocks.c: a nest in tiles of rows of label P, whose f64 or
                                f32 operands V[0..N) are read transposed: each block of them is
                                copied for the tile's rows into panel K, scratch blocks
                                TRANSPOSED_ROWS K.. (one a row, an f32 one TX_BLOCK floats
                                apart), read there in place */
        int n, P;
        const g_value *v[BLK_MAX_PANELS];
    } panels;
} emitter;

static inline sema_program *SP(emitter *E) { return E->g->S; }

/* printf into the emitter's current output. */
static inline void put(emitter *E, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(E->out, fmt, ap);
    va_end(ap);
}

/* The C type of an element of type T (complex ones from runtime/complex.inc). */
static inline const char *ctype(dtype t)
{ return t == DT_F32 ? "float" : t == DT_F64 ? "double" : t == DT_C64 ? "tx_c64" : "tx_c128"; }

/* Marks runtime symbol group G (and what it needs) as used. */
static inline void emit_use(emitter *E, int g)
{
    E->groups |= 1u << g;
    if (g == TXS_MPI) /* its calls fall back on linalg.inc and CBLAS */
        E->groups |= 1u << TXS_LINALG;
    if (g == TXS_LINALG || g == TXS_MPI)
        E->groups |= 1u << TXS_BLAS;
}

/* ---- emit_names.c ---- */
/* A C literal of X (a double; inf and NaN as constant expressions). */
void num_literal(tx_buf *o, double x);
/* A C string literal holding S, everything outside printable ASCII
   escaped. */
void string_literal(tx_buf *o, const char *s);

/* ---- emit_program.c ---- */
/* The error code (from 1) the generated code returns for MSG; equal
   messages share a code. NOMEM: it means out of memory (TX_ERR_NOMEM),
   not a failed check (TX_ERR_RUN). */
int emit_add_error(emitter *E, const char *msg, int nomem);

/* ---- emit_kernel.c ---- */
/* Emits the loop nest BODY writes for V as a kernel: its argument record
   and function go to E->kernels, its call (over its whole range) to the
   program function. A nest that follows sparse maps is emitted twice
   (the first time learns which decoded labels are read). */
void emit_kernel(emitter *E, const g_value *v, void (*body)(emitter *, const g_value *));
/* Writes the call of the row group's kernels that wait for it, if any
   (the group ends, or a value of another group or none comes). */
void emit_rows_flush(emitter *E);
/* Writes the head of a loop over the kernel's range [tx_lo, tx_hi): of
   label LABEL ("for (L = tx_lo; L < tx_hi; L++)", with "{" if BRACE), or
   of blocks tx_ib if LABEL < 0 (always with "{"). */
void kernel_put_range_for(emitter *E, int label, int depth, int brace);
/* The head of the kernel's (first) loop over output label LABEL if it takes the
   kernel's range: returns 1 after writing "for (L = tx_lo; L < tx_hi; L++)",
   0 if the loop is an ordinary one. */
int kernel_range_loop(emitter *E, int label, tx_extent ext, int depth, int brace);
/* The head of the block loop of a kernel whose only loop is blocked, if
   it takes the kernel's range (counted in blocks): 1 after writing
   "for (tx_ib = tx_lo; tx_ib < tx_hi; tx_ib++) {", else 0. */
int kernel_range_blocks(emitter *E, tx_extent ext, int depth);
/* The same range, counted in blocks, taken whole: each call's blocks
   [tx_lo, tx_hi) are one part of the work, and the pool gives each
   thread one part (tx_rt_parallel_wide). 1 after writing "{", else 0. */
int kernel_range_chunk(emitter *E, tx_extent ext, int depth);
/* The range over LABEL (extent EXT) for a primitive that runs the loop
   over its indices itself (tx_p_red_rows): 1 if the kernel's range is
   taken, the call's indices then being [tx_lo, tx_hi); 0 (all of EXT)
   otherwise. Emits nothing. */
int kernel_range_rows(emitter *E, int label, tx_extent ext);
/* Opens the first of N loops over LABELS (extents EXT) at DEPTH; with the
   kernel's range still free and the MPI target fusing the result's leading
   loops, one loop over the first few together takes the range (they are
   the result's leading labels; each keeps its variable). Returns how many
   labels the opened loop covers. */
int kernel_range_fused(emitter *E, const int *labels, const tx_extent *ext, int n, int depth);
/* The head of the block loop over [tx_lo, tx_hi) of LABEL (extent EXT),
   if it takes the kernel's range (counted in elements, as a loop over
   LABEL would): 1 after writing "for (tx_i = tx_lo; tx_i < tx_hi; tx_i +=
   TX_BLOCK) {", else 0. A vector of a row group runs so, over the
   group's rows. */
int kernel_range_spans(emitter *E, int label, tx_extent ext, int depth);
/* Records that the body references variable VAR, value ID, dim D, map M. */
void kernel_ref_var(emitter *E, int var);
void kernel_ref_value(emitter *E, int id);
void kernel_ref_dim(emitter *E, int dim);
void kernel_ref_map(emitter *E, int map);

/* ---- emit_memory.c ---- */
/* Is V stored in a buffer of its own (computed by a loop nest or a call)? */
int emit_is_computed(const g_value *v);
/* Code setting tx_n to the byte size of a buffer with extents EXT of
   ELEM-byte elements, returning error CODE if it overflows. */
void emit_size(emitter *E, const tx_extent *ext, int rank, size_t elem, int code);
/* Where buffers live, by position (value index in emission order). */
typedef struct {
    int *last;                  /* per value: its last reader's position, -1 if none */
    int *free_head, *free_next; /* the computed values whose buffers die at each position */
    /* per variable: the tmp or let tensor's buffer is live from VAR_FIRST
       (the first write into it, a BLAS call or call writing in place
       included) to VAR_LAST (its last reader or writer); both -1 if no
       store of it is left (a dead or fused let needs no memory) */
    int *var_first, *var_last;
    int *var_born_head, *var_born_next; /* the variables born at each position */
    int *var_free_head, *var_free_next; /* the variables whose buffers die at each position */
} liveness;
/* Computes the liveness of every buffer of the graph into *L (arrays in the
   graph's arena). */
void emit_liveness(emitter *E, liveness *L);
/* A workspace plan: offsets of the tmp and let tensors and of every
   computed intermediate, each live over the positions L gives it; placed
   greedily by size, the largest first, each into the smallest gap that the
   buffers placed before and live at the same time leave (on bench/rccsd.tx
   the plan is as small as the most bytes live at one position). */
typedef struct {
    int64_t *off;     /* per value id; -1: not in the workspace */
    int64_t *var_off; /* per variable; -1: not in the workspace */
    int64_t size;     /* the plan's bytes */
    int64_t live_max; /* the most bytes live at one position: no plan is smaller */
} workspace_plan;
/* Plans the workspace from L (emit_liveness); -1 if a size is not known or
   overflows. */
int emit_plan_workspace(emitter *E, const liveness *L, workspace_plan *w);

/* ---- emit_expr.c ---- */
/* The C expression of extent X: a number when the target is specialised. */
void put_extent(emitter *E, tx_extent x);
/* The value of X if the target knows it (specialised), else -1. */
int64_t emit_extent_value(emitter *E, tx_extent x);
/* A label's loop variable, a tensor variable, a sparse map, a value's buffer. */
void put_label(emitter *E, int label);
void put_var(emitter *E, int var);
void put_map(emitter *E, int map);
void put_value(emitter *E, const g_value *v);
/* The row-major offset of the element at LABELS (a label, or -1 for the
   integer CHIPS[i]) of a buffer with extents EXT (through an open entry
   loop's flat index where the last modes are its map's targets). */
void put_horner(emitter *E, int n, const int *labels, const int64_t *chips, const tx_extent *ext);
/* The strides (in elements, per mode) variable VAR is bound with when the
   code is specialised on them (emit_options.var_strides), else NULL:
   row-major. */
const int64_t *emit_var_strides(emitter *E, int var);
/* Notes that the code being emitted needs VAR row-major (a call that
   cannot read its bound strides): the caller stages it and emits again. */
void emit_need_contiguous(emitter *E, int var);
/* graph_modes, with the bound strides of a variable's view. */
int emit_modes(emitter *E, const g_value *v, mode_seq *s);
/* VAR's element at the loop variables of LABELS (its modes in order). */
void put_var_at(emitter *E, int var, const int *labels, const tx_extent *ext, int rank);
/* V's buffer element at its labels' loop variables: tx_vN[offset]. */
void put_value_at(emitter *E, const g_value *v);
/* The C expression reading value V's element at the current loop indices
   (a c64 one widened to the tx_c128 complex values compute in). */
void put_access(emitter *E, const g_value *v);
/* V's element in memory (an lvalue unless V is a constant), as stored. */
void put_access_raw(emitter *E, const g_value *v);
/* The summand of a contraction: the product of its operands. */
void put_product(emitter *E, const g_value *v);
/* The value of elementwise V at the current loop indices, as a double
   (a tx_c128 if V is complex). */
void put_elementwise(emitter *E, const g_value *v);
/* V's value as a tx_c128 (a real V with imaginary part 0). */
void put_access_c(emitter *E, const g_value *v);
/* Part PART (0: real, 1: imaginary) of V's value, as a double. */
void put_part(emitter *E, const g_value *v, int part);
/* The statement "LHS OP= VAL;" for an element LHS of complex type TDT
   and VAL a tx_c128 expression (OP '=', '+' or '-'), at indent DEPTH. */
void put_assign_c(emitter *E, int depth, const char *lhs, dtype tdt, int op, const char *val);
/* put_assign_c for complex value X written on the parts (no tx_c128
   through complex.inc's helpers, which libtcc copies with memmove): X
   inlined (or ROOT: X's own operation computed here) and a sum, product,
   scale or conj of values read in place, small enough. 0 (nothing
   written) if not. */
int put_assign_parts(emitter *E, int depth, const char *lhs, dtype tdt, int op, const g_value *x, int root);
/* The element statement of complex store S into its tensor (of type TDT):
   the target at S's labels OP= S's operand, at indent DEPTH, in the loops
   the caller opened. */
void put_store_c(emitter *E, const g_value *s, dtype tdt, int depth);
/* Starts capturing what the emitter writes into SCRATCH; emit_capture_end
   returns it as a string in the graph's arena and restores the output. */
tx_buf *emit_capture_begin(emitter *E, tx_buf *scratch);
const char *emit_capture_end(emitter *E, tx_buf *saved);
/* The complex accumulator's update acc = acc op x (op + or *). */
void put_reduce_update_c(emitter *E, reduce_op r, const g_value *x);
/* The complex accumulator's update acc += the summand of contraction V. */
void put_contract_update_c(emitter *E, const g_value *v);
/* The identity of a reduce/scan operator, and the update acc = acc op x. */
const char *reduce_init(reduce_op r);
void put_reduce_update(emitter *E, reduce_op r, const g_value *x);
/* The stride of mode P of S: the product of the extents after it, or its
   bound stride (S->stride); P = -1: the element count. */
void put_stride(emitter *E, const mode_seq *s, int p);
/* The row-major index of sparse map M's source (SIDE 0) or target (1) tuple. */
void put_map_index(emitter *E, const sym *m, int side);
/* Does sparse map MAP relate the current source and target tuples?
   (tx_rt_map_has(...) at the loop variables of its labels) */
void put_map_has(emitter *E, int map);
/* "for (int64_t l_x = 0; l_x < EXT; l_x++)", opening a brace if BRACE. */
void put_loop_head(emitter *E, int label, tx_extent ext, int depth, int brace);
/* Loops over LABELS; RANGE: the first may take the kernel's range. */
void open_loops(emitter *E, const int *labels, const tx_extent *ext, int n, int *depth, int range);
/* Distinct labels of V's operands that are in SET, in order of appearance. */
int labels_in(const g_value *v, labelset set, int *labels, tx_extent *ext);

/* ---- emit_blocks.c ---- */
typedef struct {
    int nbuf, nptr, depth, label;
    /* f32 tensors read in place (blk_op F32): the scratch block each keeps
       and the place in the output where its conversion goes if a call
       needs it as doubles (blk_double); DONE 1 once converted, 2 once a
       typed form took it as floats */
    struct {
        int ptr, buf, done;
        tx_buf *out;
        size_t pos;
    } pend[BLK_MAX_BUFFERS];
    int npend;
    /* FLAT (emit_dense.c reduce_rows_flat): the block is tx_rn rows of
       label FLAT_ROW, each FLAT_EXT elements of LABEL, one after the
       other. An f64 operand along LABEL is read in place, its rows
       FLAT_EXT apart (the condition is appended to FLAT_GUARD, " && "
       before it), or repeated over the rows where it is not along
       FLAT_ROW (tx_p_repeat_rows); one along FLAT_ROW alone is spread
       over its rows (tx_p_spread_rows); any other sets FLAT_FAIL. */
    int flat, flat_row, flat_fail;
    /* FLAT_NEXT: 1 + the label of the loop around the flat blocks' (0:
       none), whose next iteration reads an operand read transposed
       again, its stride along that label further (tx_p_tile_next_f64) */
    int flat_next;
    tx_extent flat_ext;
    tx_buf *flat_guard;
    /* STREAMS: the store may stream its target past the cache (tx_ntN),
       so no operation of more than one step writes it (blk_out) */
    int streams;
} blk_state;
/* An operand of a primitive: a scratch buffer (BUF >= 0) or a direct
   pointer tx_pPTR, a double one or, when F32, a float one (an f32 tensor
   read in place, or the f32 target), which only the typed forms of the
   primitives take: F32 1 until the call that takes it has chosen its
   typed form (blk_typed), 2 after. */
typedef struct {
    int buf, ptr, f32;
} blk_op;
/* The stride of label L through memory-resident value W where the
   emitter knows it: 0 if L is not among W's modes, -1 if it is known only
   when the code runs. Writes nothing. */
int64_t emit_known_stride(emitter *E, const g_value *w, int L);
/* Can rows along label L of V be one flat block (blk_state.flat)? Every
   value computed in f64, every operand f64 with stride 0 or 1 along L. */
int blk_flat_ok(emitter *E, const g_value *v, int L);
/* The loop over blocks of whole rows of a flat block (blk_state.flat),
   at DEPTH inside the rows' scope [tx_r0, tx_r1): tx_fr rows of EXT
   elements a block, "for (tx_it ...) {", and the block's tx_rn rows,
   tx_bn elements. */
void put_flat_rows_head(emitter *E, tx_extent ext, int depth);
/* The range of lines of a primitive that runs them itself over LABEL
   (extent EXT): the kernel's range when LABEL takes it (TAKE and
   kernel_range_rows), else all of EXT; tx_r0 and tx_r1 declared at DEPTH
   (emit_dense.c). */
void put_line_range(emitter *E, int depth, int take, int label, tx_extent ext);
/* The flat block's BODY in a scope where row label P is tx_it and L 0,
   closing the block loop and the "if" of the flat case that opened at
   DEPTH, then "} else { for (P over [tx_r0, tx_r1)) {": the rows one by
   one. */
void put_flat_rows_else(emitter *E, int P, int L, const char *body, int depth);
/* Can the primitives evaluate V (with the values fused into it)? Counts
   its nodes into *NEED (scratch buffers at most). */
int blk_supported(const g_value *v, int *need);
/* Does V (with the values fused into it) read variable VAR (-1: none)? */
int blk_reads_var(const g_value *v, int var);
/* Whether V is an f32 operation whose result is rounded to float (tx(5)
   ELEMENT TYPES): a sum, an elementwise product, a power, a square root,
   exp, log, sin, cos, tanh or a dim, of type f32. The selections (abs,
   max, min, where) and comparisons of floats are floats without it. */
int emit_f32_rounds(const g_value *v);
/* *ROOT = the summand of contraction V: its product as an inlined value,
   unscaled, nothing summed, computed in double also when V is f32 (tx(5)
   ELEMENT TYPES: the products an Einstein sum adds up are not rounded to
   float). */
void emit_summand(const g_value *v, g_value *root);
/* Whether x^P is computed by repeated products (P an integer from -8 to
   8; P 0 is 1) rather than by pow: the rule of every emitter of powers,
   and of what a power costs (emit_kernel.c). */
int emit_pow_by_products(double p);
/* Code leaving the block of V's values in a scratch buffer or a direct
   double pointer; returns which. */
blk_op blk_eval(emitter *E, blk_state *B, const g_value *v);
/* Adds the block of X, a product of two operands (exponents 1, scale 1),
   to the f64 row whose element at the block's start is the C text ROW,
   in one pass: tx_p_mul_acc, or tx_p_axpby for a number times a block
   (the bits of the product's block stored with +=). Returns 0, emitting
   nothing, for any other X. */
int blk_accumulate_product(emitter *E, blk_state *B, const g_value *x, const char *row);
/* Whether the rows of X along LABEL can be summed over the label OUTER by
   blk_accumulate_rows: X a tensor of type DT (f64, or f32 for an f32
   sum) in memory, LABEL its unit-stride mode, OUTER among its modes. */
int blk_rows_of(emitter *E, const g_value *x, int label, int outer, dtype dt);
/* The same for X the product of two such tensors (exponents 1, scale 1,
   real): blk_accumulate_rows then adds the rows of the product. */
int blk_product_rows_of(emitter *E, const g_value *x, int label, int outer);
/* Whether X, a summand over LABEL, is the square of an f64 sum of two
   terms CA*A + CB*B, each an f64 tensor in memory at unit stride along
   LABEL, at least one of them stepping along OUTER: a pairwise squared
   distance (P("i,k") - Q("j,k"))^2 over k, rows j (emit_dense.c's
   reduce_pairs_by_prim). Sets the terms. */
int blk_square_rows_of(emitter *E, const g_value *x, int label, int outer, const g_value **a, double *ca,
                       const g_value **b, double *cb);
/* Opens the loop over the row LABEL (extent EXT) for blk_accumulate_rows
   and for emit_block_loop's statements whose primitives need no scratch
   block: spans of up to BLOCKS blocks (the rows of the summed tensor are
   read in longer runs, the span of the row staying in L1), over the kernel's
   range of blocks when RANGE, else the whole row; tx_bn and LABEL's
   variable set. Returns the depth inside. */
int open_rows_span(emitter *E, int label, tx_extent ext, int depth, int range, int blocks);
/* The spans: eight blocks for a statement's primitives; sixteen for a
   sum over rows (tx_p_add_rows, tx_p_addf_rows, whose double row of up to
   prims.inc's TX_ROWS_SPAN blocks is 32 KB, tx_p_mul_acc_rows), so that
   rows of up to 4096 elements are read whole, one after the other */
#define SPAN_BLOCKS 8
#define ROWS_SPAN_BLOCKS 16
/* Adds to the f64 row whose element at the block's start is the C text
   ROW the block of X summed over every index of label OUTER (extent EXT),
   with no loop over OUTER open: one tx_p_add_rows over X's rows (or
   tx_p_mul_acc_rows over the rows of a product's two tensors), the same
   bits as one += per index of OUTER in order. An f32 X goes into an f32
   row (tx_p_addf_rows: the row's value plus the sum, in double, rounded
   once). RED other than RED_ADD (max, min; X a tensor) folds the rows in
   the same order into a row of X's type (tx_p_max_rows, tx_p_minf_rows,
   ...). */
void blk_accumulate_rows(emitter *E, const blk_state *B, const g_value *x, reduce_op red, int outer, tx_extent ext,
                         const char *row);
void put_op(emitter *E, blk_op o);
/* The blocked loop nest computing elementwise X at every index of
   LABELS/EXT (the last blocked) into variable TARGET_VAR (>= 0) or the
   buffer of TEMP, with OP 0 (=), 1 (+=) or 2 (-=). */
void emit_block_loop(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                     int target_var, const g_value *temp, dtype tdt, int op);
/* The C text (in SCRATCH) of the element at LABELS/EXT's loop variables
   of variable TARGET_VAR (>= 0), else of temporary TEMP. */
const char *blk_target_text(emitter *E, tx_buf *scratch, const int *labels, const tx_extent *ext, int rank,
                            int target_var, const g_value *temp);

/* The head of a loop over LABEL (extent EXT) in blocks of TX_BLOCK:
   tx_i, tx_bn and LABEL's variable are set inside; close it with "}". */
void put_block_loop_head(emitter *E, int label, tx_extent ext, int depth);
/* The bounds of the block starting at tx_i: tx_bn (the block's length,
   up to TX_BLOCK) and LABEL's variable, at DEPTH. */
void put_block_bounds(emitter *E, int label, tx_extent ext, int depth);
/* The stride of label L through memory-resident value W, in elements of
   W (a sum where L names several modes, "0" where none); *KNOWN its value
   when the emitter knows it, -1 when only the code does. */
void put_label_stride(emitter *E, const g_value *w, int L, int64_t *known);
/* Can emit_complex_block_loop compute complex elementwise X of RANK
   labels (> 0) into variable TARGET_VAR (-1: a temporary)? Not when X
   holds what the complex blocks do not take (a real or imaginary part,
   abs, where), nor into a target strided along its last label. */
int cblk_supported(emitter *E, const g_value *x, int rank, int target_var);
/* emit_block_loop for complex X (cblk_supported), through the complex
   primitives (emit_cblocks.c): the same bits as the scalar code, but
   for a real value computed inside X, which has a real statement's. */
void emit_complex_block_loop(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                             int target_var, const g_value *temp, dtype tdt, int op);
/* The loop over LABEL (extent EXT) that folds elementwise X into tx_acc
   with RED, block by block (the other labels' loops are open). */
void emit_block_reduce(emitter *E, const g_value *x, int label, tx_extent ext, const tx_extent *flat, int nflat,
                       reduce_op red, int depth);
/* One block of emit_block_reduce's fold: elementwise X's tx_bn elements
   from LABEL's variable on (a loop over LABEL's blocks is open) folded
   into tx_acc with RED, at DEPTH. */
void emit_block_reduce_step(emitter *E, const g_value *x, int label, reduce_op red, int depth);
/* Whether X, or a tensor X reads through the values fused into it, is
   read across its rows along label L and along its rows (stride 1) along
   label P: a transposed operand (B("j,i") in a nest over i, j). */
int emit_reads_transposed(emitter *E, const g_value *x, int L, int P);
/* A nest in tiles of rows of label P (tx_it .. tx_ie), blocks of label
   L: the f64 and f32 tensors X reads transposed become E->panels (at most
   BLK_MAX_PANELS; their count returned), which emit_panels_fill copies,
   a block at a time, into scratch blocks, and blk_eval reads there in
   place. Clear E->panels.n once the nest is emitted. */
int emit_panels_begin(emitter *E, const g_value *x, int L, int P);
/* Inside the loop over L's blocks (tx_i, tx_bn, L's variable set),
   before the loop over the tile's rows: the panels' copies of the block,
   one tx_p_tile_f64 (tx_pf_tile) each. */
void emit_panels_fill(emitter *E, int L, int depth);
/* Rows shorter than this (known when the code is emitted) with an f64
   operand read transposed go in flat blocks of whole rows (emit_blocks.c
   flat_rows_ok), a permuting copy among them (emit_dense.c copy_tiled) */
#define FLAT_TRANSPOSED_MAX 64
/* prims.inc's TX_STREAM_BYTES as the library builds it: where the emitter
   knows every extent, whether a store will stream */
#define EMIT_STREAM_BYTES ((double)(16 << 20))
/* Rows of the result taken together by a nest that reads an operand
   transposed: each block of the row loop runs down this many rows, so
   that the operand's lines it gathers from (one per element of the
   block) are read from L1 again by the next rows rather than from L2 or
   memory (a cache line holds 8 doubles) */
#define TRANSPOSED_ROWS 8
/* The columns such a nest computes for every tile of rows before it moves
   to the next columns: the operand read transposed is then gathered from
   this many of its rows (a line each a tile), pages the TLB still holds
   and lines the caches still hold for the next tile, not from every row
   of a matrix larger than that (a whole-row sweep a tile missed the TLB
   on every row). A multiple of TX_BLOCK. Y = X + X^T through the library
   (bench/tx_loop, one thread, arrays 16 bytes past a line, 4 KB pages,
   alternated with the build before, best of 3-5 medians; a sanitizer
   build ran on the other core): doubles 3000x3000 36.5 -> 29.5 ms,
   2000x2000 16.1 -> 12.3, 4000x4000 64.0 -> 53.2, 1000x1000 2.3 -> 2.1;
   floats 3000x3000 26.9 -> 14.1; two threads 3000x3000 30.1 -> 21.1 */
#define TRANSPOSED_CHUNK 1024
/* The stride of mode P of S as a number: its bound stride, or the product
   of the extents after it when every one is known; -1 if unknown (or a
   negative bound stride). */
int64_t mode_stride_value(emitter *E, const mode_seq *s, int p);
/* Opens "{" a loop over LABEL (extent EXT) at DEPTH, scalar or (BLOCKED)
   in blocks of TX_BLOCK with tx_i, tx_bn and LABEL's variable set inside;
   returns the depth inside. *RANGE -1: it may take the kernel's range
   (then *RANGE becomes 1, else 0); 1: it runs over the range a loop over
   the same LABEL took before; 0: over the whole extent. Close with "}". */
int open_row_loop(emitter *E, int label, tx_extent ext, int depth, int blocked, int *range);

/* ---- emit_dense.c ---- */
/* The loop nest computing V into its buffer. */
void emit_compute(emitter *E, const g_value *v);
/* The loop nest of store S (=, +=, -=). */
void emit_store(emitter *E, const g_value *s);
/* The copy of slice V out of its operand. */
void emit_slice(emitter *E, const g_value *v);

/* ---- emit_sparse.c ---- */
/* V's loop nest when sparse maps restrict it; likewise a store. */
void emit_compute_sparse(emitter *E, const g_value *v);
void emit_store_sparse(emitter *E, const g_value *s);

/* ---- emit_blas.c ---- */
/* The BLAS call (or batch loop of calls) of contraction V; as a
   kernel's body (emit_kernel), its first loop takes the kernel's range. */
void emit_blas(emitter *E, const g_value *v);
/* Whether V's calls run in a loop over a label of its result (a batch
   label, or a label of C the plan loops over), which a kernel may split. */
int emit_blas_batched(const g_value *v);

/* ---- emit_linalg.c ---- */
/* The LAPACK-backed call V writing its result (or PARTS). */
void emit_linalg(emitter *E, const g_value *v, g_value *const *parts);

#endif
