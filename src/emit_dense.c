/*
 * emit_dense.c - dense loop nests: a computed value (elementwise, contraction,
 * reduction, scan), a store into a tensor, a slice. Elementwise work goes
 * block by block through the primitives (emit_blocks.c) where it can.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

/* Whether the NSUM summed labels SUMMED of X, an f64 tensor in memory,
   are its last modes, L the last, laid out as one contiguous run (each
   mode's stride the run after it: row-major, or bound strides that are
   known when the code is made): then the sum over all of them is one
   reduction over the product of their extents RUN[0 .. NSUM) from their
   index 0 (a full sum of a matrix, the sum over the last two modes of a
   tensor), in the library and in standalone C alike (the same chunks,
   the same bits, whether the extents are known or not). A diagonal (a
   label twice) is not. */
static int summed_flat(emitter *E, const g_value *x, const int *summed, int nsum, int L, tx_extent *run_ext)
{
    mode_seq s;
    if (nsum < 2 || x->inlined || x->dt != DT_F64 || x->op == OP_CONST || emit_modes(E, x, &s) < 0 || s.n < nsum ||
        s.label[s.n - 1] != L)
        return 0;
    int64_t run = 1;
    for (int p = s.n - 1; p >= s.n - nsum; p--) {
        int is_summed = 0;
        for (int k = 0; k < nsum; k++)
            is_summed |= summed[k] == s.label[p];
        for (int q = 0; q < s.n; q++) /* a diagonal: the label twice, in the run or before it */
            if (q != p && s.label[q] == s.label[p])
                return 0;
        if (!is_summed)
            return 0;
        int64_t e = emit_extent_value(E, s.ext[p]);
        if (s.stride && (e < 0 || run < 0 || mode_stride_value(E, &s, p) != run))
            return 0; /* bound strides: contiguous only as the numbers say */
        run = e < 0 || run < 0 ? -1 : run * e;
        run_ext[s.n - 1 - p] = s.ext[p];
    }
    return 1;
}

/* The reduction's scalar loops: over SUMMED (NSUM labels, extents SEXT),
   tx_acc updated element by element, in order. */
static void put_scalar_reduce(emitter *E, const g_value *v, const int *summed, const tx_extent *sext, int nsum,
                              int depth)
{
    open_loops(E, summed, sext, nsum, &depth, 0);
    put(E, "%*s", 4 * depth, "");
    if (dt_complex(v->dt) && v->op == OP_REDUCE)
        put_reduce_update_c(E, v->red, v->in[0]);
    else if (dt_complex(v->dt))
        put_contract_update_c(E, v);
    else if (v->op == OP_REDUCE)
        put_reduce_update(E, v->red, v->in[0]);
    else {
        put(E, "tx_acc += ");
        put_product(E, v);
    }
    put(E, ";\n");
}

static void emit_reduce_blocks(emitter *E, const g_value *v, const g_value *x, int pick, int *summed,
                               tx_extent *sext, int nsum, int depth);

/* What reduction V folds: its operand as it is (a reduce, a plain sum of
   one operand), or ROOT made the product (or quotient) of a
   contraction's operands, which the sum scales after. */
static const g_value *reduce_summand(const g_value *v, g_value *root)
{
    *root = *v;
    if (v->op != OP_CONTRACT || (v->nin == 1 && v->coef_in[0] > 0))
        return v->in[0];
    emit_summand(v, root);
    return root;
}

/* Whether X (TOP), or a value fused into it, computes exp, log, sin, cos,
   tanh, or a power that is not a few products. */
static int summand_calls_fn(const g_value *x, int top)
{
    if (!top && !x->inlined)
        return 0;
    if (x->op == OP_MAP && ((x->fn == MAP_POW && !emit_pow_by_products(x->fn_arg)) || x->fn == MAP_EXP ||
                            x->fn == MAP_LOG || x->fn == MAP_SIN || x->fn == MAP_COS || x->fn == MAP_TANH))
        return 1;
    for (int i = 0; i < x->nin; i++)
        if (summand_calls_fn(x->in[i], 0))
            return 1;
    return 0;
}

/* The innermost loop of a reduction (contraction or reduce) folded
   block by block through the primitives: the summed label that is the
   last mode of an operand (unit stride, where the data are contiguous)
   runs innermost, in blocks. 0 if the summand is not for the primitives,
   or the loop is known to be too short to pay for them. */
static int emit_reduce_blocked(emitter *E, const g_value *v, int *summed, tx_extent *sext, int nsum, int depth)
{
    int pick = nsum - 1;
    for (int i = v->nin - 1; i >= 0; i--) {
        const g_value *w = v->in[i];
        for (int k = 0; w->rank > 0 && k < nsum; k++)
            if (w->label[w->rank - 1] == summed[k])
                pick = k;
    }
    int64_t len = emit_extent_value(E, sext[pick]);
    g_value root;
    const g_value *x = reduce_summand(v, &root);
    /* a few elements: the scalar loop is cheaper than calls, unless each
       term calls a function, which the vector functions compute several
       at a time (a log-sum-exp over rows of 10: 10.3 -> 4 ms) */
    int short_scalar = !summand_calls_fn(x, 1);
    if (len >= 0 && len < 16 && short_scalar)
        return 0;
    int need = 0;
    if (!blk_supported(x, &need))
        return 0;
    if (len < 0 && short_scalar) { /* known when the code runs: the library's choice, made then (the same bits) */
        put(E, "%*sif (", 4 * depth, "");
        put_extent(E, sext[pick]);
        put(E, " < 16) {\n");
        put_scalar_reduce(E, v, summed, sext, nsum, depth + 1);
        put(E, "%*s} else {\n", 4 * depth, "");
        emit_reduce_blocks(E, v, x, pick, summed, sext, nsum, depth + 1);
        put(E, "%*s}\n", 4 * depth, "");
        return 1;
    }
    emit_reduce_blocks(E, v, x, pick, summed, sext, nsum, depth);
    return 1;
}

/* emit_reduce_blocked's blocks: summand X, the summed label PICK
   innermost. */
static void emit_reduce_blocks(emitter *E, const g_value *v, const g_value *x, int pick, int *summed,
                               tx_extent *sext, int nsum, int depth)
{
    int L = summed[pick];
    tx_extent LE = sext[pick];
    tx_extent flat[TX_MAX_MODES];
    if (summed_flat(E, x, summed, nsum, L, flat)) {
        /* one reduction over the whole contiguous run (which the pool
           shares out in fixed chunks), every summed label at 0 */
        put(E, "%*s{\n", 4 * depth, "");
        for (int k = 0; k < nsum; k++)
            if (summed[k] != L) {
                put(E, "%*sconst int64_t ", 4 * depth + 4, "");
                put_label(E, summed[k]);
                put(E, " = 0;\n");
            }
        emit_block_reduce(E, x, L, LE, flat, nsum, v->op == OP_REDUCE ? v->red : RED_ADD, depth + 1);
        put(E, "%*s}\n", 4 * depth, "");
        return;
    }
    summed[pick] = summed[nsum - 1];
    sext[pick] = sext[nsum - 1];
    open_loops(E, summed, sext, nsum - 1, &depth, 0);
    emit_block_reduce(E, x, L, LE, NULL, 0, v->op == OP_REDUCE ? v->red : RED_ADD, depth);
}

/* The memory-resident operand with the most elements under V (through
   the values fused into it): the one whose layout orders the loops. */
static const g_value *largest_leaf(emitter *E, const g_value *v, const g_value *best, double *bestn)
{
    for (int i = 0; i < v->nin; i++) {
        const g_value *w = v->in[i];
        if (w->inlined) {
            best = largest_leaf(E, w, best, bestn);
            continue;
        }
        if (w->rank == 0 || w->op == OP_CONST)
            continue;
        double n = 1;
        for (int k = 0; k < w->rank; k++) {
            int64_t x = emit_extent_value(E, w->ext[k]);
            n *= x >= 0 ? (double)x : 1024.0; /* unknown: counted as a long mode */
        }
        if (!best || n > *bestn) {
            best = w;
            *bestn = n;
        }
    }
    return best;
}

/* Is V an f32 sum of one f32 tensor over one label whose rows (along V's
   last label) are contiguous? emit_reduce_outer then sums each span of
   the row (zeroed first) in double and stores it rounded once
   (tx_p_addf_rows): the other f32 sums keep their double accumulator in
   the nest (tx_acc). */
static int f32_sum_of_rows(emitter *E, const g_value *v, const int *summed, int nsum)
{
    if (v->dt != DT_F32 || nsum != 1 || v->nin != 1)
        return 0;
    if (!(v->op == OP_REDUCE && v->red == RED_ADD) &&
        !(v->op == OP_CONTRACT && v->coef == 1 && v->coef_in[0] > 0))
        return 0;
    return blk_rows_of(E, v->in[0], v->label[v->rank - 1], summed[0], DT_F32);
}

/* Is V a max or a min of one tensor of its own type (f64 or f32) whose
   rows along V's last label are contiguous and lie apart along the last
   of its labels SUMMED? emit_reduce_outer then folds the rows into V's
   row (tx_p_max_rows, tx_p_maxf_rows, ...): a column max. */
static int extremum_of_rows(emitter *E, const g_value *v, const int *summed, int nsum)
{
    if (v->op != OP_REDUCE || (v->red != RED_MAX && v->red != RED_MIN) || v->nin != 1 || nsum == 0 || v->rank == 0)
        return 0;
    if (v->dt != DT_F64 && v->dt != DT_F32)
        return 0;
    return blk_rows_of(E, v->in[0], v->label[v->rank - 1], summed[nsum - 1], v->dt);
}

/* Does reducing V run faster with its summed labels outside its last
   label L? Yes when the largest operand's smallest stride is L's: the
   inner loop then walks memory contiguously (a column sum, a sum over a
   middle mode, a Fortran-order input), while the summed label innermost
   would stride across it. Only real f64 values (the buffer is the
   accumulator, in double like tx_acc). */
static int reduce_outer_wanted(emitter *E, const g_value *v, const int *summed, int nsum)
{
    if (v->rank == 0 || nsum == 0 || v->nmaps ||
        (v->dt != DT_F64 && !f32_sum_of_rows(E, v, summed, nsum) && !extremum_of_rows(E, v, summed, nsum)))
        return 0;
    if (v->op != OP_CONTRACT && v->op != OP_REDUCE)
        return 0;
    double n = 0;
    const g_value *w = largest_leaf(E, v, NULL, &n);
    mode_seq s;
    if (!w || dt_complex(w->dt) || emit_modes(E, w, &s) < 0)
        return 0;
    int best = -1;
    int64_t bst = -1;
    for (int p = 0; p < s.n; p++) {
        int64_t z = mode_stride_value(E, &s, p);
        if (s.label[p] >= 0 && z > 0 && (bst < 0 || z < bst)) {
            bst = z;
            best = s.label[p];
        }
    }
    return best >= 0 && best == v->label[v->rank - 1];
}

/* The reduction V with its summed labels SUMMED/SEXT outside its last
   label L: for the other labels { buffer row = identity; for the summed
   labels { for L { row[L] op= summand } }; row *= coef }. The row is V's
   buffer (contiguous in L, and in L1 while the operands stream through);
   L runs in blocks through the primitives where the summand allows.
   A max or a min of rows (extremum_of_rows) folds them in the
   primitives too, into an f32 row for an f32 V.
   The kernel's range is over V's first label (or L's blocks): a thread
   owns whole output elements and each element is folded in the summed
   labels' order, so the bits do not depend on the thread count. */
static void emit_reduce_outer(emitter *E, const g_value *v, const int *summed, const tx_extent *sext, int nsum,
                              int depth)
{
    int L = v->label[v->rank - 1];
    tx_extent LE = v->ext[v->rank - 1];
    reduce_op red = v->op == OP_REDUCE ? v->red : RED_ADD;
    g_value root;
    const g_value *x = reduce_summand(v, &root);
    int need = 0;
    int64_t len = emit_extent_value(E, LE);
    int f32 = v->dt == DT_F32; /* f32_sum_of_rows: an f32 row, tx_p_addf_rows adding to it (or extremum_of_rows) */
    int ext = extremum_of_rows(E, v, summed, nsum);
    int blocked = ext ? f32 || !(len >= 0 && len < 16)
                      : red == RED_ADD && (f32 || (!(len >= 0 && len < 16) && blk_supported(x, &need)));
    if (blocked)
        emit_use(E, TXS_PRIM);
    open_loops(E, v->label, v->ext, v->rank - 1, &depth, 1);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    int range = v->rank == 1 ? -1 : 0;
    /* the row starts at the identity */
    int d = open_row_loop(E, L, LE, depth, blocked, &range);
    /* the range is the row's: each call runs down every summed row over
       its part of the row, so one long part per thread (pool.c) */
    E->k.range_wide = range > 0;
    put(E, "%*s", 4 * d, "");
    if (f32) { /* an f32 row: the identity through tx_pf_load of one float */
        put(E, "{\n%*sconst float tx_z = (float)%s;\n%*stx_pf_load(tx_bn, &tx_z, 0, &", 4 * d + 4, "", reduce_init(red),
            4 * d + 4, "");
        put_value_at(E, v);
        put(E, ");\n%*s}\n", 4 * d, "");
    } else if (blocked) {
        put(E, "tx_p_fill(tx_bn, %s, &", reduce_init(red));
        put_value_at(E, v);
        put(E, ");\n");
    } else {
        put_value_at(E, v);
        put(E, " = %s;\n", red == RED_ADD ? "0.0" : reduce_init(red));
    }
    put(E, "%*s}\n", 4 * depth, "");
    /* the summed labels, then the row; a tensor (or a product of two)
       summed over its rows takes the innermost summed label inside the
       row (tx_p_add_rows, tx_p_mul_acc_rows) */
    int ds = depth;
    int rows = blocked && nsum > 0 &&
               (blk_rows_of(E, x, L, summed[nsum - 1], v->dt) || blk_product_rows_of(E, x, L, summed[nsum - 1]));
    TX_ASSERT(rows || !f32);
    open_loops(E, summed, sext, nsum - rows, &ds, 0);
    d = rows && range >= 0 ? open_rows_span(E, L, LE, ds, range, ROWS_SPAN_BLOCKS)
                           : open_row_loop(E, L, LE, ds, blocked, &range);
    if (blocked) {
        blk_state B = {.depth = d, .label = L}; /* the row is f64 */
        tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
        put_value_at(E, v);
        const char *row = emit_capture_end(E, saved);
        if (rows)
            blk_accumulate_rows(E, &B, x, red, summed[nsum - 1], sext[nsum - 1], row);
        else if (!blk_accumulate_product(E, &B, x, row)) { /* not a product: its block, then += */
            blk_op r = blk_eval(E, &B, x);
            put(E, "%*stx_p_store_f64(tx_bn, ", 4 * d, "");
            put_op(E, r);
            put(E, ", &%s, 1, 1);\n", row);
        }
    } else {
        tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
        if (v->op == OP_CONTRACT)
            put_product(E, v);
        else {
            put(E, "(double)");
            put_access(E, x);
        }
        const char *val = emit_capture_end(E, saved);
        saved = emit_capture_begin(E, &scratch);
        put_value_at(E, v);
        const char *at = emit_capture_end(E, saved);
        put(E, "%*s", 4 * d, "");
        switch (red) {
        case RED_ADD: put(E, "%s += %s;\n", at, val); break;
        case RED_MUL: put(E, "%s *= %s;\n", at, val); break;
        case RED_MAX: E->uses_fmax = 1; put(E, "%s = tx_fmax(%s, %s);\n", at, val, at); break;
        default: E->uses_fmin = 1; put(E, "%s = tx_fmin(%s, %s);\n", at, val, at); break;
        }
    }
    put(E, "%*s}\n", 4 * ds, "");
    if (v->op == OP_CONTRACT && v->coef != 1) { /* the scale, after the sum as in the scalar nest */
        d = open_row_loop(E, L, LE, depth, blocked, &range); /* the range's unit: as the loops above */
        put(E, "%*s", 4 * d, "");
        if (blocked) {
            put(E, "tx_p_scale_add(tx_bn, ");
            num_literal(E->out, v->coef);
            put(E, ", &");
            put_value_at(E, v);
            put(E, ", 0.0, &");
            put_value_at(E, v);
            put(E, ");\n");
        } else {
            put_value_at(E, v);
            put(E, " *= ");
            num_literal(E->out, v->coef);
            put(E, ";\n");
        }
        put(E, "%*s}\n", 4 * depth, "");
    }
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
}

/* VALUE[at its indices] = the result text VAL (a double expression, or a
   tx_c128 one if V is complex), converted to V's type. */
static void put_result_store(emitter *E, const g_value *v, int depth, const char *val)
{
    if (dt_complex(v->dt)) {
        tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
        put_value_at(E, v);
        const char *lhs = emit_capture_end(E, saved);
        put_assign_c(E, depth, lhs, v->dt, '=', val);
        return;
    }
    put(E, "%*s", 4 * depth, "");
    put_value_at(E, v);
    put(E, " = (%s)(%s);\n", ctype(v->dt), val);
}

/* The side of the tiles of a permuting copy: two 32x32 tiles of doubles
   (16 KB) fit in L1 with room to spare. */
#define COPY_TILE 32

/* Puts the band's first element on both sides into tx_d and tx_s (ROW
   0), or their distances from those into tx_db and tx_sb (ROW 1: the step
   between the band's rows, two elements of the same tensor). */
static void put_band_row(emitter *E, int depth, int row, int a, int b, const int *dst, const tx_extent *ext, int n,
                         const g_value *v, int var, const g_value *w)
{
    put(E, "%*s%s{\n%*sconst int64_t ", 4 * depth, "", row ? "if (tx_te - tx_tb > 1) " : "", 4 * depth + 4, "");
    put_label(E, b);
    put(E, " = tx_tb%s, ", row ? " + 1" : "");
    put_label(E, a);
    put(E, " = 0;\n%*s%s = &", 4 * depth + 4, "", row ? "tx_db" : "tx_d");
    if (var >= 0)
        put_var_at(E, var, dst, ext, n);
    else
        put_value_at(E, v);
    put(E, "%s;\n%*s%s = &", row ? " - tx_d" : "", 4 * depth + 4, "", row ? "tx_sb" : "tx_s");
    put_access(E, w);
    put(E, "%s;\n%*s}\n", row ? " - tx_s" : "", 4 * depth, "");
}

/* copy_tiled's nest when primitives copy the tiles: an '=' copy between
   tensors of one real type whose destination rows (along A) are
   contiguous. One call of tx_p_tile_f64 or tx_pf_tile copies a band of
   the destination's rows (along B, W's last mode), every column, tile by
   tile in the order prims.inc gives. The band is the kernel's range, one
   part per thread (kernel_range_chunk), unless an outer label took it
   first. A copy of TX_STREAM_BYTES or more (prims.inc), all of the
   destination's EXT[0..N) counted, streams its stores past the cache. */
static void copy_tiles_prim(emitter *E, int a, int b, tx_extent ea, tx_extent eb, const int *outer,
                            const tx_extent *oext, int no, const int *dst, const tx_extent *ext, int n,
                            const g_value *v, int var, dtype dt, const g_value *w, const mode_seq *sw, int pa)
{
    int depth = 2;
    const char *ct = ctype(dt);
    emit_use(E, TXS_PRIM);
    put(E, "%*sconst int tx_stream = %d.0", 4 * depth, "", dt == DT_F32 ? 4 : 8);
    for (int i = 0; i < n; i++) {
        put(E, " * (double)");
        put_extent(E, ext[i]);
    }
    put(E, " >= (double)TX_STREAM_BYTES;\n");
    open_loops(E, outer, oext, no, &depth, 1);
    int ranged = kernel_range_chunk(E, eb, depth);
    if (!ranged)
        put(E, "%*s{\n", 4 * depth, "");
    depth++;
    put(E, "%*sconst int64_t tx_tb = %s, tx_te = ", 4 * depth, "", ranged ? "tx_lo * TX_BLOCK" : "0");
    if (ranged) {
        put(E, "tx_hi * TX_BLOCK < ");
        put_extent(E, eb);
        put(E, " ? tx_hi * TX_BLOCK : ");
    }
    put_extent(E, eb);
    put(E, ";\n%*sif (tx_tb < tx_te && ", 4 * depth, ""); /* no address of an empty band */
    put_extent(E, ea);
    put(E, " > 0) {\n");
    depth++;
    put(E, "%*s%s *tx_d;\n%*sconst %s *tx_s;\n%*sint64_t tx_db = 0, tx_sb = 0;\n", 4 * depth, "", ct, 4 * depth, "",
        ct, 4 * depth, "");
    put_band_row(E, depth, 0, a, b, dst, ext, n, v, var, w);
    put_band_row(E, depth, 1, a, b, dst, ext, n, v, var, w);
    put(E, "%*s%s(tx_te - tx_tb, ", 4 * depth, "", dt == DT_F32 ? "tx_pf_tile" : "tx_p_tile_f64");
    put_extent(E, ea);
    put(E, ", tx_s, tx_sb, ");
    put_stride(E, sw, pa);
    put(E, ", tx_d, tx_db, tx_stream);\n");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    depth--;
    put(E, "%*s}\n    }\n", 4 * depth, "");
}

/* A permuting copy of W (in memory, layout SW, strides included) into a destination with
   labels DST[0..N) and extents EXT (the copy's buffer, or tensor VAR when
   VAR >= 0, written with OP '=', '+' or '-'), as tiles over the two
   fastest modes: the inner loop writes along the destination's last mode
   while the tile's rows of W stay in cache. 0 (nothing emitted) if the
   last modes agree (rows are copied whole) or are too short to pay. */
static int copy_tiled(emitter *E, int id, const int *dst, const tx_extent *ext, int n, const g_value *v, int var,
                      dtype dt, int op, const g_value *w, const mode_seq *sw)
{
    if (n < 2 || sw->n == 0 || dt_complex(dt) || dt_complex(w->dt))
        return 0; /* (complex values are pairs: no plain cast) */
    int a = dst[n - 1], b = sw->label[sw->n - 1];
    if (b < 0 || a == b)
        return 0;
    /* the MPI target runs a nest over the destination's leading labels
       together (its rows, emit_kernel.c); tiles over one of them would
       leave it out of that loop */
    int lead = !E->T->distributed ? 0 : var >= 0 ? mpi_plan_lead_var(E->g, var) : mpi_plan_lead_value(E->g, v);
    for (int m = 0; m < lead && m < n; m++)
        if (lead > 1 && dst[m] == b)
            return 0;
    for (int m = 0; m < sw->n; m++) /* a diagonal of W (A("a,a,i")): a label's stride */
        for (int k = m + 1; k < sw->n; k++) /* is the sum of its modes': no tiles */
            if (sw->label[m] == sw->label[k])
                return 0;
    tx_extent ea = ext[n - 1], eb = sw->ext[sw->n - 1];
    int64_t na = emit_extent_value(E, ea), nb = emit_extent_value(E, eb);
    if ((na >= 0 && na < 8) || (nb >= 0 && nb < 8))
        return 0;
    /* small transposed planes (the destination's last two labels are
       the source's last two, swapped, both extents under
       FLAT_TRANSPOSED_MAX, with labels around them), an f64 '=' into a
       tensor large enough to stream: the store's flat blocks copy a
       plane's rows at a time and stream each block's span (emit_blocks.c),
       where tiles here took one call per small plane. One thread,
       alternated, medians of 5: T("a,b,j,i") into R("a,b,i,j"), 120x120x24x24,
       12.6 -> 6.9 ms; T("b,a,j,i") 14.4 -> 7.7; 300x300x8x8 8.3 -> 7.4.
       Smaller copies are faster in tiles (30x30x24x24: 259 against 397
       us; 60x60x24x24 even), and so are long 2-D panels (X("i,j") of
       40x100000 into Y("j,i"): 4.5 against 5.7 ms). */
    double bytes = 8;
    for (int i = 0; i < n && bytes > 0; i++) {
        int64_t e = emit_extent_value(E, ext[i]);
        bytes = e < 0 ? -1 : bytes * (double)e;
    }
    if (op == '=' && var >= 0 && dt == DT_F64 && w->dt == DT_F64 && n >= 3 && dst[n - 2] == b && na >= 0 &&
        na < FLAT_TRANSPOSED_MAX && nb >= 0 && nb < FLAT_TRANSPOSED_MAX && bytes >= EMIT_STREAM_BYTES)
        return 0;
    int outer[TX_MAX_MODES], no = 0, depth = 2;
    tx_extent oext[TX_MAX_MODES];
    for (int i = 0; i < n; i++)
        if (dst[i] != a && dst[i] != b) {
            outer[no] = dst[i];
            oext[no++] = ext[i];
        }
    int pa = -1; /* the position of the destination's last label in W */
    for (int m = 0; m < sw->n; m++)
        if (sw->label[m] == a)
            pa = m;
    if (pa < 0)
        return 0;
    const int64_t *dstride = var >= 0 ? emit_var_strides(E, var) : NULL;
    if (op == '=' && dt == w->dt && !(dstride && dstride[n - 1] != 1)) {
        put(E, "    { /* %%%d: copy in tiles */\n", id);
        copy_tiles_prim(E, a, b, ea, eb, outer, oext, no, dst, ext, n, v, var, dt, w, sw, pa);
        return 1;
    }
    put(E, "    { /* %%%d: copy in %dx%d tiles */\n", id, COPY_TILE, COPY_TILE);
    open_loops(E, outer, oext, no, &depth, 1);
    put(E, "%*sfor (int64_t tx_t1 = 0; tx_t1 < ", 4 * depth, "");
    put_extent(E, eb);
    put(E, "; tx_t1 += %d)\n%*sfor (int64_t tx_t0 = 0; tx_t0 < ", COPY_TILE, 4 * depth + 4, "");
    put_extent(E, ea);
    put(E, "; tx_t0 += %d) {\n", COPY_TILE);
    depth += 2;
    /* each row of the tile: a pointer to its first element on each side,
       the destination's row contiguous, the source's strided */
    put(E, "%*sconst int64_t tx_nr = ", 4 * depth, "");
    put_extent(E, ea);
    put(E, " - tx_t0 < %d ? ", COPY_TILE);
    put_extent(E, ea);
    /* the strides along the rows: the source's from its layout (a bound
       tensor's own strides where the code is specialised for them), the
       destination's 1 unless it is a tensor bound with other strides */
    put(E, " - tx_t0 : %d;\n%*sconst int64_t tx_sd = %lld, tx_st = ", COPY_TILE, 4 * depth, "",
        (long long)(dstride ? dstride[n - 1] : 1));
    put_stride(E, sw, pa);
    put(E, ";\n%*sfor (int64_t ", 4 * depth, "");
    put_label(E, b);
    put(E, " = tx_t1; ");
    put_label(E, b);
    put(E, " < tx_t1 + %d && ", COPY_TILE);
    put_label(E, b);
    put(E, " < ");
    put_extent(E, eb);
    put(E, "; ");
    put_label(E, b);
    put(E, "++) {\n%*sconst int64_t ", 4 * depth + 4, "");
    put_label(E, a);
    put(E, " = tx_t0;\n%*s%s *tx_d = &", 4 * depth + 4, "", ctype(dt));
    if (var >= 0)
        put_var_at(E, var, dst, ext, n);
    else
        put_value_at(E, v);
    put(E, ";\n%*sconst %s *tx_s = &", 4 * depth + 4, "", ctype(w->dt));
    put_access(E, w);
    put(E, ";\n%*sfor (int64_t tx_i = 0; tx_i < tx_nr; tx_i++)\n%*stx_d[tx_i * tx_sd] %s (%s)tx_s[tx_i * tx_st];\n",
        4 * depth + 4, "", 4 * depth + 8, "", op == '=' ? "=" : op == '+' ? "+=" : "-=", ctype(dt));
    put(E, "%*s}\n", 4 * depth, "");
    depth -= 2;
    put(E, "%*s}\n    }\n", 4 * depth + 4, "");
    return 1;
}

/* A copy value (graph_is_copy) that transposes, in tiles; 0 if V is not one. */
static int emit_copy_tiled(emitter *E, const g_value *v)
{
    mode_seq sw;
    if (!graph_is_copy(v) || v->in[0]->inlined || emit_modes(E, v->in[0], &sw) < 0)
        return 0;
    const g_value *w = v->in[0];
    return copy_tiled(E, v->id, v->label, v->ext, v->rank, v, -1, v->dt, '=', w, &sw);
}

/* One address pair of a primitive's call: with the labels L[0..N) set
   to the C texts AT[0..N), the address of X's element into SN and of V's
   element into DN, each less BASE_S and BASE_D when those are given (a
   step between elements, which the primitive takes as a stride); the
   whole guarded by IF when given. */
static void put_at_pair(emitter *E, int depth, const char *cond, const int *l, const char *const *at, int n,
                        const g_value *x, const g_value *v, const char *sn, const char *dn, const char *base_s,
                        const char *base_d)
{
    put(E, "%*s%s%s{\n", 4 * depth, "", cond ? cond : "", cond ? " " : "");
    for (int i = 0; i < n; i++) {
        put(E, "%*sconst int64_t ", 4 * depth + 4, "");
        put_label(E, l[i]);
        put(E, " = %s;\n", at[i]);
    }
    put(E, "%*s%s = &", 4 * depth + 4, "", sn);
    put_access(E, x);
    put(E, "%s%s;\n%*s%s = &", base_s ? " - " : "", base_s ? base_s : "", 4 * depth + 4, "", dn);
    put_value_at(E, v);
    put(E, "%s%s;\n%*s}\n", base_d ? " - " : "", base_d ? base_d : "", 4 * depth, "");
}

/* The range of lines of a primitive that runs them itself over LABEL
   (extent EXT): the kernel's range when LABEL takes it (TAKE and
   kernel_range_rows), else all of EXT; tx_r0 and tx_r1 declared. */
void put_line_range(emitter *E, int depth, int take, int label, tx_extent ext)
{
    if (take && kernel_range_rows(E, label, ext)) {
        put(E, "%*sconst int64_t tx_r0 = tx_lo, tx_r1 = tx_hi;\n", 4 * depth, "");
        return;
    }
    put(E, "%*sconst int64_t tx_r0 = 0, tx_r1 = ", 4 * depth, "");
    put_extent(E, ext);
    put(E, ";\n");
}

/* The index of the scan's element STEP places from its start: STEP, or
   the extent less 1 + STEP right to left. */
static void put_scan_index(emitter *E, const g_value *v, int pos, int step)
{
    if (v->scan_reverse) {
        put_extent(E, v->ext[pos]);
        put(E, " - %d", 1 + step);
    } else
        put(E, "%d", step);
}

/* A scan of a real tensor X of V's type in memory (no sparse map): the
   lines along the scanned label, over the innermost of the other labels,
   in one tx_p_scan (tx_p_scanf for f32) call that runs both loops with
   X's and V's strides, four lines at once, each line folded as the scalar
   loop folds it (the same bits). OUTER[0..NO) are the other labels: the
   loops over all but the last are opened here (the first taking the
   kernel's range), the last is the lines' (taking it when it is the only
   one). 0, emitting nothing, for any other scan. */
static int scan_by_prim(emitter *E, const g_value *v, int pos, const int *outer, const tx_extent *oext, int no,
                        int depth)
{
    const g_value *x = v->in[0];
    if (v->nmaps || (v->dt != DT_F64 && v->dt != DT_F32) || x->dt != v->dt || x->inlined || x->op == OP_CONST)
        return 0;
    const char *t = ctype(v->dt);
    emit_use(E, TXS_PRIM);
    open_loops(E, outer, oext, no > 0 ? no - 1 : 0, &depth, 1);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    if (no > 0)
        put_line_range(E, depth, no == 1, outer[no - 1], oext[no - 1]);
    else
        put(E, "%*sconst int64_t tx_r0 = 0, tx_r1 = 1;\n", 4 * depth, "");
    put(E, "%*sconst int64_t tx_n = ", 4 * depth, "");
    put_extent(E, v->ext[pos]);
    put(E, ";\n%*sif (tx_n > 0 && tx_r1 > tx_r0) {\n", 4 * depth, "");
    depth++;
    put(E, "%*sconst %s *tx_s;\n%*s%s *tx_d;\n%*sint64_t tx_is = 0, tx_id = 0, tx_ls = 0, tx_ld = 0;\n", 4 * depth, "",
        t, 4 * depth, "", t, 4 * depth, "");
    /* the first line's first element, its next, the next line's first */
    tx_buf first = {0}, next = {0};
    tx_buf *o = E->out;
    E->out = &first;
    put_scan_index(E, v, pos, 0);
    E->out = &next;
    put_scan_index(E, v, pos, 1);
    E->out = o;
    int l[2] = {v->scan_label, no > 0 ? outer[no - 1] : -1};
    const char *at0[2] = {first.p, "tx_r0"}, *at1[2] = {next.p, "tx_r0"}, *at2[2] = {first.p, "tx_r0 + 1"};
    int nl = no > 0 ? 2 : 1;
    put_at_pair(E, depth, NULL, l, at0, nl, x, v, "tx_s", "tx_d", NULL, NULL);
    put_at_pair(E, depth, "if (tx_n > 1)", l, at1, nl, x, v, "tx_is", "tx_id", "tx_s", "tx_d");
    put_at_pair(E, depth, "if (tx_r1 - tx_r0 > 1)", l, at2, nl, x, v, "tx_ls", "tx_ld", "tx_s", "tx_d");
    buf_free(&first);
    buf_free(&next);
    put(E, "%*s%s(tx_r1 - tx_r0, tx_n, %d, tx_s, tx_ls, tx_is, tx_d, tx_ld, tx_id);\n", 4 * depth, "",
        v->dt == DT_F32 ? "tx_p_scanf" : "tx_p_scan", (int)v->red - RED_ADD);
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    return 1;
}

/* The head of a primitive's call over the rows of V's last label: the
   loops over V's other labels at DEPTH (the first takes the kernel's
   range), the rows' range tx_r0 .. tx_r1 (the kernel's when the last
   label is V's only one), and a test that it is not empty. Returns the
   depth inside; close_rows_call closes it. */
static int open_rows_call(emitter *E, const g_value *v, int depth)
{
    emit_use(E, TXS_PRIM);
    open_loops(E, v->label, v->ext, v->rank - 1, &depth, 1);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    put_line_range(E, depth, v->rank == 1, v->label[v->rank - 1], v->ext[v->rank - 1]);
    put(E, "%*sif (tx_r1 > tx_r0) {\n", 4 * depth, "");
    return depth + 1;
}

static void close_rows_call(emitter *E, int depth)
{
    put(E, "%*s}\n%*s}\n", 4 * depth - 4, "", 4 * depth - 8, "");
}

/* A reduction of an f64 (f32) tensor X in memory over one label L, X's
   contiguous mode (a row sum, max, min or product; a plain sum), into a
   value of its type: the rows along V's last label in one call of
   tx_p_red_rows (tx_p_redf_rows),
   which folds each row as the nest below would (rows shorter than 16
   element by element in order, eight rows at once; longer ones through
   tx_p_red_chunked), so the libtcc code does not run a loop per row.
   The loops over V's other labels are opened at DEPTH (the first takes
   the kernel's range); V's last label takes it when it is V's only one
   (kernel_range_rows). 0, emitting nothing, for any other value. */
static int reduce_rows_by_prim(emitter *E, const g_value *v, const int *summed, const tx_extent *sext, int nsum,
                               int depth)
{
    if (nsum != 1 || v->rank == 0 || v->nmaps || (v->dt != DT_F64 && v->dt != DT_F32) || v->nin != 1)
        return 0;
    int red;
    if (v->op == OP_REDUCE)
        red = v->red;
    else if (v->op == OP_CONTRACT && v->coef == 1 && v->coef_in[0] == 1)
        red = RED_ADD;
    else
        return 0;
    const g_value *x = v->in[0];
    int last = v->label[v->rank - 1];
    if (!blk_rows_of(E, x, summed[0], last, v->dt))
        return 0;
    const char *t = ctype(v->dt);
    depth = open_rows_call(E, v, depth);
    put(E, "%*sconst %s *tx_s;\n%*s%s *tx_d;\n%*sint64_t tx_is = 0, tx_id = 0;\n", 4 * depth, "", t, 4 * depth, "", t,
        4 * depth, "");
    int l[2] = {last, summed[0]};
    const char *at0[2] = {"tx_r0", "0"}, *at1[2] = {"tx_r0 + 1", "0"};
    put_at_pair(E, depth, NULL, l, at0, 2, x, v, "tx_s", "tx_d", NULL, NULL);
    put_at_pair(E, depth, "if (tx_r1 - tx_r0 > 1)", l, at1, 2, x, v, "tx_is", "tx_id", "tx_s", "tx_d");
    put(E, "%*stx_p_red%s_rows(tx_r1 - tx_r0, ", 4 * depth, "", v->dt == DT_F32 ? "f" : "");
    put_extent(E, sext[0]);
    put(E, ", %d, tx_s, tx_is, tx_d, tx_id);\n", red - RED_ADD);
    close_rows_call(E, depth);
    return 1;
}

/* A sum over one label K, known to be 16 or more, of the square of a
   sum of two f64 tensors read at unit stride along K, into rows of V's
   last label J along which at least one of them steps
   (blk_square_rows_of: the pairwise squared distances of
   D("i,j") = (P("i,k") - Q("j,k"))^2): V's other labels' loops at DEPTH,
   then one tx_p_red_sq_aff_rows for J's rows (the kernel's range when J
   is V's only label), the bits of the nest's one tx_p_red_sq_aff call a
   block. 500x700 pairs of 64: one thread 7.9 -> 3.7 ms, two 4.4 ->
   2.1 (a call a pair from libtcc's code before); rows of 300 (no
   two-row AVX2 path) 43.8 -> 39.7 ms. 0, emitting nothing, for any
   other value. */
static int reduce_pairs_by_prim(emitter *E, const g_value *v, const int *summed, const tx_extent *sext, int nsum,
                                int depth)
{
    if (nsum != 1 || v->rank == 0 || v->nmaps || v->dt != DT_F64 || v->op != OP_CONTRACT || v->coef != 1 ||
        v->nin != 1 || v->coef_in[0] != 1)
        return 0;
    int64_t n = emit_extent_value(E, sext[0]);
    const g_value *a, *b;
    double ca, cb;
    int last = v->label[v->rank - 1];
    if (n < 16 || !blk_square_rows_of(E, v->in[0], summed[0], last, &a, &ca, &b, &cb))
        return 0;
    depth = open_rows_call(E, v, depth);
    put(E, "%*sconst double *tx_s, *tx_z;\n%*sdouble *tx_d;\n%*sint64_t tx_is = 0, tx_iz = 0, tx_id = 0;\n",
        4 * depth, "", 4 * depth, "", 4 * depth, "");
    int l[2] = {last, summed[0]};
    const char *at0[2] = {"tx_r0", "0"}, *at1[2] = {"tx_r0 + 1", "0"};
    put_at_pair(E, depth, NULL, l, at0, 2, a, v, "tx_s", "tx_d", NULL, NULL);
    put_at_pair(E, depth, NULL, l, at0, 2, b, v, "tx_z", "tx_d", NULL, NULL);
    put_at_pair(E, depth, "if (tx_r1 - tx_r0 > 1)", l, at1, 2, a, v, "tx_is", "tx_id", "tx_s", "tx_d");
    put_at_pair(E, depth, "if (tx_r1 - tx_r0 > 1)", l, at1, 2, b, v, "tx_iz", "tx_id", "tx_z", "tx_d");
    put(E, "%*stx_p_red_sq_aff_rows(tx_r1 - tx_r0, %lld, ", 4 * depth, "", (long long)n);
    num_literal(E->out, ca);
    put(E, ", tx_s, tx_is, ");
    num_literal(E->out, cb);
    put(E, ", tx_z, tx_iz, tx_d, tx_id);\n");
    close_rows_call(E, depth);
    return 1;
}

/* A reduction over one label L into V's only label P of a computed
   summand of f64 operands: where L's extent is under 16 (known when the
   code runs) and every operand along L has its rows one after the other,
   the rows go in blocks of TX_BLOCK / extent whole rows, each block
   evaluated once through the primitives (the numbers of each row spread
   over it: tx_p_spread_rows; a vector along L repeated:
   tx_p_repeat_rows) and its rows folded by tx_p_red_rows, which folds a
   row under 16 element by element in order from the identity. Otherwise
   the nest of emit_reduce_blocked, row after row (the scalar loop under
   16, or blocks where a term calls a function). A log-sum-exp over 100000
   rows of 10 called exp and the sum once a row for ten elements: 6.9 ms
   of its 9.0 in `txc run --profile`; a layer norm's variance over them
   ran the scalar loop in libtcc's code: 5.7 ms of 15.2. 0, emitting
   nothing, for any other value. */
static int reduce_rows_flat(emitter *E, const g_value *v, const int *summed, const tx_extent *sext, int nsum,
                            int depth)
{
    if (nsum != 1 || v->rank != 1 || v->nmaps || v->dt != DT_F64 || (v->op != OP_CONTRACT && v->op != OP_REDUCE))
        return 0;
    g_value root;
    const g_value *x = reduce_summand(v, &root);
    int L = summed[0], P = v->label[0], need = 0;
    int64_t len = emit_extent_value(E, sext[0]);
    if (len >= 16 || !x->inlined || !blk_supported(x, &need) || E->panels.n ||
        !blk_flat_ok(E, x, L))
        return 0;
    reduce_op red = v->op == OP_REDUCE ? v->red : RED_ADD;
    emit_use(E, TXS_PRIM);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    put_line_range(E, depth, 1, P, v->ext[0]);
    /* the flat block's code first: it learns the condition */
    tx_buf guard = {0}, body_buf, *saved = emit_capture_begin(E, &body_buf);
    blk_state B = {.depth = depth + 3, .label = L, .flat = 1, .flat_row = P, .flat_ext = sext[0], .flat_guard = &guard};
    blk_op r = blk_eval(E, &B, x);
    TX_ASSERT(!B.flat_fail);
    put(E, "%*stx_p_red_rows(tx_rn, ", 4 * depth + 12, "");
    put_extent(E, sext[0]);
    put(E, ", %d, ", red - RED_ADD);
    put_op(E, r);
    put(E, ", ");
    put_extent(E, sext[0]);
    put(E, ", tx_d, tx_id);\n");
    if (v->op == OP_CONTRACT && v->coef != 1) { /* the scale after the sum, as the nest's store */
        put(E, "%*sfor (int64_t tx_q = 0; tx_q < tx_rn; tx_q++)\n%*stx_d[tx_q * tx_id] = (double)(", 4 * depth + 12, "",
            4 * depth + 16, "");
        num_literal(E->out, v->coef);
        put(E, " * tx_d[tx_q * tx_id]);\n");
    }
    const char *body = emit_capture_end(E, saved);
    put(E, "%*sif (", 4 * depth, "");
    put_extent(E, sext[0]);
    put(E, " < 16%s) {\n", guard.p ? guard.p : "");
    buf_free(&guard);
    put_flat_rows_head(E, sext[0], depth + 1);
    put(E, "%*sdouble *tx_d;\n%*sint64_t tx_id = 0;\n%*s{\n%*sconst int64_t ", 4 * depth + 8, "", 4 * depth + 8, "",
        4 * depth + 8, "", 4 * depth + 12, "");
    put_label(E, P);
    put(E, " = tx_it;\n%*stx_d = &", 4 * depth + 12, "");
    put_value_at(E, v);
    put(E, ";\n%*s}\n%*sif (tx_rn > 1) {\n%*sconst int64_t ", 4 * depth + 8, "", 4 * depth + 8, "", 4 * depth + 12, "");
    put_label(E, P);
    put(E, " = tx_it + 1;\n%*stx_id = &", 4 * depth + 12, "");
    put_value_at(E, v);
    put(E, " - tx_d;\n%*s}\n", 4 * depth + 8, "");
    put_flat_rows_else(E, P, L, body, depth); /* then the rows one by one, as without this */
    put(E, "%*sdouble tx_acc = %s;\n", 4 * depth + 8, "", v->op == OP_REDUCE ? reduce_init(red) : "0.0");
    int s1[1] = {summed[0]};
    tx_extent e1[1] = {sext[0]};
    if (!emit_reduce_blocked(E, v, s1, e1, 1, depth + 2))
        put_scalar_reduce(E, v, summed, sext, nsum, depth + 2);
    put(E, "%*s", 4 * depth + 8, "");
    put_value_at(E, v);
    put(E, " = (double)(");
    if (v->op == OP_CONTRACT && v->coef != 1) {
        num_literal(E->out, v->coef);
        put(E, " * ");
    }
    put(E, "tx_acc);\n%*s}\n%*s}\n", 4 * depth + 4, "", 4 * depth, "");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    return 1;
}

/* "for" over the rows of the tile [tx_it, tx_ie) of label P, "{" */
static void put_tile_rows(emitter *E, int P, int depth)
{
    put(E, "%*sfor (int64_t ", 4 * depth, "");
    put_label(E, P);
    put(E, " = tx_it; ");
    put_label(E, P);
    put(E, " < tx_ie; ");
    put_label(E, P);
    put(E, "++) {\n");
}

/* A reduction over one label L into rows of V's last label P whose
   summand reads an operand transposed (contiguous along P, not along L:
   the diagonal of A("i,j") * B("j,i")): the rows in tiles of
   TRANSPOSED_ROWS, each block of L folded into every row of the tile in
   turn, so that the lines of the transposed operand a block gathers are
   read from L1 by the tile's next rows. Each row still folds its blocks
   in order from the identity: the bits of the nest row after row. 0,
   emitting nothing, for any other value. */
static int reduce_rows_tiled(emitter *E, const g_value *v, int *summed, tx_extent *sext, int nsum, int depth)
{
    if (nsum != 1 || v->rank == 0 || v->nmaps || (v->dt != DT_F64 && v->dt != DT_F32))
        return 0;
    if (v->op != OP_CONTRACT && v->op != OP_REDUCE)
        return 0;
    g_value root;
    const g_value *x = reduce_summand(v, &root);
    int L = summed[0], P = v->label[v->rank - 1], need = 0;
    int64_t len = emit_extent_value(E, sext[0]);
    int short_scalar = !summand_calls_fn(x, 1); /* as emit_reduce_blocked decides */
    if ((len >= 0 && len < 16 && short_scalar) || !blk_supported(x, &need) || !emit_reads_transposed(E, x, L, P))
        return 0;
    reduce_op red = v->op == OP_REDUCE ? v->red : RED_ADD;
    const char *init = v->op == OP_REDUCE ? reduce_init(red) : "0.0";
    emit_use(E, TXS_PRIM);
    open_loops(E, v->label, v->ext, v->rank - 1, &depth, 1);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    put_line_range(E, depth, v->rank == 1, P, v->ext[v->rank - 1]);
    E->k.tile_rows = TRANSPOSED_ROWS; /* a row group's tiles: at least this tall */
    put(E, "%*sfor (int64_t tx_it = tx_r0; tx_it < tx_r1; tx_it += %d) {\n", 4 * depth, "", TRANSPOSED_ROWS);
    depth++;
    put(E, "%*sconst int64_t tx_ie = tx_r1 - tx_it < %d ? tx_r1 : tx_it + %d;\n%*sdouble tx_accs[%d];\n", 4 * depth,
        "", TRANSPOSED_ROWS, TRANSPOSED_ROWS, 4 * depth, "", TRANSPOSED_ROWS);
    int runtime_len = len < 0 && short_scalar;
    if (runtime_len) { /* known when the code runs: rows under 16 by the scalar loops, as emit_reduce_blocked */
        put(E, "%*sif (", 4 * depth, "");
        put_extent(E, sext[0]);
        put(E, " < 16) {\n");
        put_tile_rows(E, P, depth + 1);
        put(E, "%*sdouble tx_acc = %s;\n", 4 * depth + 8, "", init);
        put_scalar_reduce(E, v, summed, sext, nsum, depth + 2);
        put(E, "%*stx_accs[", 4 * depth + 8, "");
        put_label(E, P);
        put(E, " - tx_it] = tx_acc;\n%*s}\n%*s} else {\n", 4 * depth + 4, "", 4 * depth, "");
        depth++;
    }
    put_tile_rows(E, P, depth);
    put(E, "%*stx_accs[", 4 * depth + 4, "");
    put_label(E, P);
    put(E, " - tx_it] = %s;\n%*s}\n", init, 4 * depth, "");
    put_block_loop_head(E, L, sext[0], depth);
    emit_panels_begin(E, x, L, P);
    emit_panels_fill(E, L, depth + 1);
    put_tile_rows(E, P, depth + 1);
    put(E, "%*sdouble tx_acc = tx_accs[", 4 * depth + 8, "");
    put_label(E, P);
    put(E, " - tx_it];\n");
    emit_block_reduce_step(E, x, L, red, depth + 2);
    E->panels.n = 0;
    put(E, "%*stx_accs[", 4 * depth + 8, "");
    put_label(E, P);
    put(E, " - tx_it] = tx_acc;\n%*s}\n%*s}\n", 4 * depth + 4, "", 4 * depth, "");
    if (runtime_len) {
        depth--;
        put(E, "%*s}\n", 4 * depth, "");
    }
    put_tile_rows(E, P, depth);
    put(E, "%*s", 4 * depth + 4, "");
    put_value_at(E, v);
    put(E, " = (%s)(", ctype(v->dt));
    if (v->op == OP_CONTRACT && v->coef != 1) {
        num_literal(E->out, v->coef);
        put(E, " * ");
    }
    put(E, "tx_accs[");
    put_label(E, P);
    put(E, " - tx_it]);\n%*s}\n", 4 * depth, "");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    return 1;
}

void emit_compute(emitter *E, const g_value *v)
{
    if (v->nmaps && v->op != OP_SCAN) {
        emit_compute_sparse(E, v);
        return;
    }
    if (emit_copy_tiled(E, v))
        return;
    if (graph_is_elementwise(v) && v->rank > 0) {
        /* an elementwise value: blocked, through the primitives */
        g_value root = *v;
        int need = 0;
        root.inlined = 1;
        if (blk_supported(&root, &need)) {
            put(E, "    { /* %%%d */\n", v->id);
            emit_block_loop(E, &root, v->label, v->ext, v->rank, -1, v, v->dt, 0);
            put(E, "    }\n");
            return;
        }
        if (cblk_supported(E, &root, v->rank, -1)) {
            put(E, "    { /* %%%d */\n", v->id);
            emit_complex_block_loop(E, &root, v->label, v->ext, v->rank, -1, v, v->dt, 0);
            put(E, "    }\n");
            return;
        }
    }
    int depth = 1;
    int summed[TX_MAX_LABELS], nsum = 0;
    tx_extent sext[TX_MAX_LABELS];
    if (v->op == OP_CONTRACT || v->op == OP_REDUCE)
        nsum = labels_in(v, v->summed, summed, sext);
    put(E, "%*s{ /* %%%d */\n", 4 * depth, "", v->id);
    depth++;
    if (v->op == OP_SCAN) {
        /* every label but the scanned one outside; the scan carries tx_acc */
        int outer[TX_MAX_MODES], no = 0, pos = 0;
        tx_extent oext[TX_MAX_MODES];
        for (int i = 0; i < v->rank; i++) {
            if (v->label[i] == v->scan_label) {
                pos = i;
                continue;
            }
            outer[no] = v->label[i];
            oext[no++] = v->ext[i];
        }
        if (scan_by_prim(E, v, pos, outer, oext, no, depth)) {
            put(E, "    }\n");
            return;
        }
        open_loops(E, outer, oext, no, &depth, 1);
        put(E, "%*s{\n", 4 * depth, "");
        depth++;
        int cx = dt_complex(v->dt);
        if (cx)
            put(E, "%*stx_c128 tx_acc = {%s, 0.0};\n", 4 * depth, "", reduce_init(v->red));
        else
            put(E, "%*sdouble tx_acc = %s;\n", 4 * depth, "", reduce_init(v->red));
        put(E, "%*sfor (int64_t ", 4 * depth, "");
        put_label(E, v->scan_label);
        if (v->scan_reverse) {
            put(E, " = ");
            put_extent(E, v->ext[pos]);
            put(E, " - 1; ");
            put_label(E, v->scan_label);
            put(E, " >= 0; ");
            put_label(E, v->scan_label);
            put(E, "--) {\n");
        } else {
            put(E, " = 0; ");
            put_label(E, v->scan_label);
            put(E, " < ");
            put_extent(E, v->ext[pos]);
            put(E, "; ");
            put_label(E, v->scan_label);
            put(E, "++) {\n");
        }
        put(E, "%*s", 4 * depth + 4, "");
        if (v->nmaps) { /* a sparse map: only its entries enter the scan; the others read as zero */
            put(E, "if (");
            for (int k = 0; k < v->nmaps; k++) {
                put(E, k ? " && " : "");
                put_map_has(E, v->maps[k]);
            }
            put(E, ") {\n%*s", 4 * depth + 8, "");
            if (cx)
                put_reduce_update_c(E, v->red, v->in[0]);
            else
                put_reduce_update(E, v->red, v->in[0]);
            put(E, ";\n");
            put_result_store(E, v, depth + 2, "tx_acc");
            put(E, "%*s} else {\n", 4 * depth + 4, "");
            put_result_store(E, v, depth + 2, cx ? "tx_c_r(0.0)" : "0");
            put(E, "%*s}\n%*s}\n", 4 * depth + 4, "", 4 * depth, "");
        } else {
            if (cx)
                put_reduce_update_c(E, v->red, v->in[0]);
            else
                put_reduce_update(E, v->red, v->in[0]);
            put(E, ";\n");
            put_result_store(E, v, depth + 1, "tx_acc");
            put(E, "%*s}\n", 4 * depth, "");
        }
        depth--;
        put(E, "%*s}\n    }\n", 4 * depth, "");
        return;
    }
    if (reduce_outer_wanted(E, v, summed, nsum)) {
        emit_reduce_outer(E, v, summed, sext, nsum, depth);
        put(E, "    }\n");
        return;
    }
    if (reduce_pairs_by_prim(E, v, summed, sext, nsum, depth) || reduce_rows_by_prim(E, v, summed, sext, nsum, depth) ||
        reduce_rows_tiled(E, v, summed, sext, nsum, depth) ||
        reduce_rows_flat(E, v, summed, sext, nsum, depth)) {
        put(E, "    }\n");
        return;
    }
    open_loops(E, v->label, v->ext, v->rank, &depth, 1);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    int reduces = (v->op == OP_CONTRACT && nsum) || v->op == OP_REDUCE;
    if (reduces) {
        if (dt_complex(v->dt))
            put(E, "%*stx_c128 tx_acc = {%s, 0.0};\n", 4 * depth, "",
                v->op == OP_REDUCE ? reduce_init(v->red) : "0.0");
        else
            put(E, "%*sdouble tx_acc = %s;\n", 4 * depth, "", v->op == OP_REDUCE ? reduce_init(v->red) : "0.0");
        int d2 = depth;
        if (!emit_reduce_blocked(E, v, summed, sext, nsum, d2))
            put_scalar_reduce(E, v, summed, sext, nsum, d2);
    }
    if (dt_complex(v->dt)) {
        tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
        if (!reduces)
            put_elementwise(E, v);
        else if (v->op == OP_CONTRACT && v->coef != 1) {
            put(E, "tx_c_scale(");
            num_literal(E->out, v->coef);
            put(E, ", tx_acc)");
        } else
            put(E, "tx_acc");
        put_result_store(E, v, depth, emit_capture_end(E, saved));
        depth--;
        put(E, "%*s}\n    }\n", 4 * depth, "");
        return;
    }
    put(E, "%*s", 4 * depth, "");
    put_value_at(E, v);
    put(E, " = (%s)(", ctype(v->dt));
    if (reduces) {
        if (v->op == OP_CONTRACT && v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put(E, "tx_acc");
    } else
        put_elementwise(E, v);
    put(E, ");\n");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    put(E, "    }\n");
}


/* slice: loops over the box in the operand's own indices (lo .. lo+ext),
   writing the temporary at index - lo. */
void emit_slice(emitter *E, const g_value *v)
{
    int depth = 2;
    put(E, "    { /* %%%d: slice */\n", v->id);
    for (int i = 0; i < v->rank; i++) {
        put(E, "%*sfor (int64_t ", 4 * depth, "");
        put_label(E, v->label[i]);
        put(E, " = ");
        put_extent(E, v->slice_lo[i]);
        put(E, "; ");
        put_label(E, v->label[i]);
        put(E, " < ");
        put_extent(E, v->slice_lo[i]);
        put(E, " + ");
        put_extent(E, v->ext[i]);
        put(E, "; ");
        put_label(E, v->label[i]);
        put(E, "++)\n");
        depth++;
    }
    tx_buf scratch, *saved = E->out; /* a complex element is written through its parts */
    if (dt_complex(v->dt))
        saved = emit_capture_begin(E, &scratch);
    else
        put(E, "%*s", 4 * depth, "");
    put_value(E, v);
    put(E, "[");
    for (int i = 0; i < v->rank - 1; i++)
        put(E, "(");
    for (int i = 0; i < v->rank; i++) {
        if (i) {
            put(E, ")*");
            put_extent(E, v->ext[i]);
            put(E, " + ");
        }
        put(E, "(");
        put_label(E, v->label[i]);
        put(E, " - ");
        put_extent(E, v->slice_lo[i]);
        put(E, ")");
    }
    if (dt_complex(v->dt)) {
        put(E, "]");
        const char *lhs = emit_capture_end(E, saved);
        tx_buf s2, *sv2 = emit_capture_begin(E, &s2);
        put_access_c(E, v->in[0]);
        put_assign_c(E, depth, lhs, v->dt, '=', emit_capture_end(E, sv2));
        put(E, "    }\n");
        return;
    }
    put(E, "] = (%s)", ctype(v->dt));
    put_access(E, v->in[0]);
    put(E, ";\n    }\n");
}


void emit_store(emitter *E, const g_value *s)
{
    if (s->nmaps) {
        emit_store_sparse(E, s);
        return;
    }
    sym *var = SP(E)->vars[s->var];
    int depth = 2, need = 0;
    mode_seq sw;
    const g_value *w = s->in[0];
    /* a transposing store of a value in memory (a view of another tensor
       than the one it writes, or a computed value) */
    int same = w->rank == s->rank && !w->nmaps && emit_modes(E, w, &sw) == 0 &&
               (w->op != OP_INDEX || w->in[0]->var != s->var);
    for (int m = 0; same && m < s->rank; m++) { /* a permutation of its labels (no diagonal) */
        int found = 0;
        for (int q = 0; q < w->rank; q++)
            found |= w->label[q] == s->store_label[m];
        same = found;
    }
    if (same && copy_tiled(E, s->id, s->store_label, s->ext, s->rank, NULL, s->var, var->dt, s->store_op, w, &sw))
        return;
    put(E, "    { /* %%%d */\n", s->id);
    if (dt_complex(var->dt) && cblk_supported(E, s->in[0], s->rank, s->var)) {
        emit_complex_block_loop(E, s->in[0], s->store_label, s->ext, s->rank, s->var, NULL, var->dt,
                                s->store_op == '=' ? 0 : s->store_op == '+' ? 1 : 2);
        put(E, "    }\n");
        return;
    }
    if (dt_complex(var->dt)) {
        open_loops(E, s->store_label, s->ext, s->rank, &depth, 1);
        put_store_c(E, s, var->dt, depth);
        put(E, "    }\n");
        return;
    }
    if (s->rank > 0 && blk_supported(s->in[0], &need)) {
        emit_block_loop(E, s->in[0], s->store_label, s->ext, s->rank, s->var, NULL, var->dt,
                        s->store_op == '=' ? 0 : s->store_op == '+' ? 1 : 2);
        put(E, "    }\n");
        return;
    }
    open_loops(E, s->store_label, s->ext, s->rank, &depth, 1);
    put(E, "%*s", 4 * depth, "");
    put_var_at(E, s->var, s->store_label, s->ext, s->rank);
    put(E, " %s (%s)", s->store_op == '=' ? "=" : s->store_op == '+' ? "+=" : "-=", ctype(var->dt));
    put_access(E, s->in[0]);
    put(E, ";\n    }\n");
}
