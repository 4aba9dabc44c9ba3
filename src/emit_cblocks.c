/*
 * emit_cblocks.c - complex elementwise values through the runtime's
 * complex block primitives (prims.inc's tx_p_cmul, tx_p_cdiv, tx_p_cmap,
 * ...): the complex counterpart of emit_blocks.c's blocks, for stores
 * into c128 and c64 tensors and for computed complex temporaries.
 *
 * A block of tx_bn complex elements is 2 tx_bn doubles, (re, im) pairs
 * as a tx_c128 lays them out. A c128 tensor read at unit stride is read
 * in place; any other operand is loaded into a scratch block (two of
 * emit_blocks.c's, one after the other). Sums and real scales are
 * tx_p_axpby and tx_p_muls over the 2 tx_bn doubles; products,
 * quotients, conj and the complex functions are the complex primitives.
 * Each step computes what put_elementwise_c's scalar code computes, in
 * its order (the functions are the same functions, tx_p_cmap calling
 * them), so a block gives the scalar code's bits. The scalar code stays
 * for what the blocks do not take: real, imag, abs, where, a target
 * strided along its last label.
 *
 * A real value computed inside a complex statement is emit_blocks.c's
 * block, then made complex: it has the bits a real statement computing
 * it has, which are not always the scalar code's (the factor 2 of
 * 2*x*y multiplies last there, and exp is libmvec's).
 *
 * A product of 1e6 c128 elements took 7.7 ms in libtcc's scalar code
 * and takes 2.0 in blocks (txc(1) WHICH BACKEND).
 */
#include "emit.h"

/* At most this many complex scratch blocks (each two of emit_blocks.c's) */
#define CB_MAX_BUFFERS (BLK_MAX_BUFFERS / 2)

/* A complex block: scratch block BUF, or when BUF < 0 the pointer tx_pPTR
   (a c128 tensor read in place, or the target). */
typedef struct {
    int buf, ptr;
} cb_op;

typedef struct {
    int depth; /* indentation of the block's body */
    int label; /* the blocked label */
    int nbuf;  /* complex scratch blocks in use: 0 .. nbuf-1 */
    int nptr;  /* pointers tx_pN declared so far */
} cb_state;

/* Whether a complex map F is one of the blocks': conj, or a function of
   tx_p_cmap. */
static int cb_map(map_fn f)
{
    return f == MAP_CONJ || f == MAP_POW || f == MAP_EXP || f == MAP_LOG || f == MAP_SQRT || f == MAP_SIN ||
           f == MAP_COS || f == MAP_TANH;
}

/* Can the complex primitives evaluate V with the values fused into it
   (a real value computed inside it by emit_blocks.c's)? Counts its nodes
   into *NEED. */
static int cb_supported(const g_value *v, int *need)
{
    if (++*need > CB_MAX_BUFFERS)
        return 0;
    if (!v->inlined) /* a leaf: read or spread over the block */
        return v->op == OP_CONST || v->op == OP_INDEX || emit_is_computed(v) ||
               ((v->op == OP_INPUT || v->op == OP_STORE) && v->rank == 0);
    if (!dt_complex(v->dt)) /* a real value computed inside: emit_blocks.c's blocks */
        return blk_supported(v, need);
    if (v->op == OP_CONTRACT) {
        if (!ls_empty(v->summed))
            return 0;
    } else if (!(v->op == OP_ADD || (v->op == OP_MAP && cb_map(v->fn))))
        return 0;
    for (int i = 0; i < v->nin; i++)
        if (!cb_supported(v->in[i], need))
            return 0;
    return 1;
}

/* Complex scratch block K of the kernel: emit_blocks.c's blocks 2K and
   2K + 1. */
static void put_cscratch(emitter *E, int k)
{
    if (2 * k + 2 > E->k.blk_buffers)
        E->k.blk_buffers = 2 * k + 2;
    E->k.blk_refs++;
    put(E, "(tx_blk + %d * TX_BLOCK)", 2 * k);
}

static void put_cop(emitter *E, cb_op o)
{
    if (o.buf >= 0)
        put_cscratch(E, o.buf);
    else
        put(E, "tx_p%d", o.ptr);
}

/* A fresh scratch block for the result of an operation. */
static cb_op cb_new(cb_state *B)
{
    cb_op r = {B->nbuf++, -1};
    return r;
}

/* The destination of an operation whose first operand is A: the target
   when DEST (tx_pDEST) is given, else A's scratch block (the primitives
   work in place), else a fresh one above every operand's. */
static cb_op cb_dest(cb_state *B, cb_op a, int dest)
{
    if (dest >= 0) {
        cb_op d = {-1, dest};
        return d;
    }
    return a.buf >= 0 ? a : cb_new(B);
}

/* The end of a call writing D: the scratch blocks above D free again
   (BASE when D is none). */
static cb_op cb_call_end(emitter *E, cb_state *B, cb_op d, int base)
{
    put(E, ", ");
    put_cop(E, d);
    put(E, ");\n");
    B->nbuf = d.buf >= 0 ? d.buf + 1 : base;
    return d;
}

/* A leaf V of the block: a c128 tensor at unit stride in place, any other
   tensor loaded (a real one as complex numbers with imaginary part 0), a
   number (a constant, a scalar, an operand that does not vary along the
   block) spread over a scratch block. */
static cb_op cb_leaf(emitter *E, cb_state *B, const g_value *v)
{
    int ind = 4 * B->depth;
    int64_t known = 0;
    tx_buf stride = {0}, *out = E->out;
    if (v->op != OP_CONST && !(v->op == OP_INPUT || v->op == OP_STORE)) {
        E->out = &stride;
        put_label_stride(E, v, B->label, &known);
        E->out = out;
        if (stride.oom)
            out->oom = 1;
    }
    cb_op r = {-1, -1};
    if (known == 0) { /* one number for the whole block */
        r = cb_new(B);
        put(E, "%*s{\n%*sconst tx_c128 tx_z = ", ind, "", ind + 4, "");
        put_access_c(E, v);
        put(E, ";\n%*stx_p_cfill(tx_bn, tx_z.re, tx_z.im, ", ind + 4, "");
        put_cscratch(E, r.buf);
        put(E, ");\n%*s}\n", ind, "");
    } else if (v->dt == DT_C128 && known == 1) {
        r.ptr = B->nptr++;
        put(E, "%*sconst double *tx_p%d = (const double *)&", ind, "", r.ptr);
        put_access_raw(E, v);
        put(E, ";\n");
    } else {
        static const char *load[] = {[DT_F64] = "cfrom", [DT_F32] = "cfromf", [DT_C128] = "cload",
                                     [DT_C64] = "cloadf"};
        r = cb_new(B);
        put(E, "%*stx_p_%s(tx_bn, (const %s *)&", ind, "", load[v->dt],
            v->dt == DT_F32 || v->dt == DT_C64 ? "float" : "double");
        put_access_raw(E, v);
        put(E, ", %s, ", stride.p ? stride.p : "0");
        put_cscratch(E, r.buf);
        put(E, ");\n");
    }
    buf_free(&stride);
    return r;
}

/* V's block, the last step written to tx_pDEST when DEST >= 0 (the
   caller then finds the result there). */
static cb_op cb_eval(emitter *E, cb_state *B, const g_value *v, int dest)
{
    int ind = 4 * B->depth, base = B->nbuf;
    if (!v->inlined)
        return cb_leaf(E, B, v);
    if (!dt_complex(v->dt)) { /* real: a block of emit_blocks.c's, above the complex block it becomes */
        cb_op r = {-1, dest};
        if (dest < 0)
            r = cb_new(B);
        blk_state rb = {.depth = B->depth, .label = B->label, .nbuf = 2 * B->nbuf, .nptr = B->nptr};
        blk_op o = blk_eval(E, &rb, v);
        B->nptr = rb.nptr;
        put(E, "%*stx_p_cfrom(tx_bn, ", ind, "");
        put_op(E, o);
        put(E, ", 1");
        return cb_call_end(E, B, r, base);
    }
    if (v->op == OP_MAP) { /* conj, or a function (tx_p_cmap, as tx_p_map numbers them) */
        cb_op a = cb_eval(E, B, v->in[0], -1);
        cb_op d = cb_dest(B, a, dest);
        if (v->fn == MAP_CONJ)
            put(E, "%*stx_p_cconj(tx_bn, ", ind, "");
        else {
            put(E, "%*stx_p_cmap(tx_bn, %d, ", ind, "", (int)v->fn);
            num_literal(E->out, v->fn == MAP_POW ? v->fn_arg : 0.0);
            put(E, ", ");
        }
        put_cop(E, a);
        return cb_call_end(E, B, d, base);
    }
    if (v->op == OP_CONTRACT) {
        /* coef * x0 * x1 / x2 ...: tx_c_mul and tx_c_div from the left (1 / x0
           for a quotient first), then tx_c_scale */
        cb_op r;
        if (v->coef_in[0] < 0) {
            cb_op one = cb_new(B);
            put(E, "%*stx_p_cfill(tx_bn, 1.0, 0.0, ", ind, "");
            put_cscratch(E, one.buf);
            put(E, ");\n");
            cb_op b = cb_eval(E, B, v->in[0], -1);
            put(E, "%*stx_p_cdiv(tx_bn, ", ind, "");
            put_cop(E, one);
            put(E, ", ");
            put_cop(E, b);
            r = cb_call_end(E, B, cb_dest(B, one, v->nin == 1 && v->coef == 1 ? dest : -1), base);
        } else
            r = cb_eval(E, B, v->in[0], -1);
        for (int i = 1; i < v->nin; i++) {
            cb_op b = cb_eval(E, B, v->in[i], -1);
            cb_op d = cb_dest(B, r, i == v->nin - 1 && v->coef == 1 ? dest : -1);
            put(E, "%*stx_p_c%s(tx_bn, ", ind, "", v->coef_in[i] < 0 ? "div" : "mul");
            put_cop(E, r);
            put(E, ", ");
            put_cop(E, b);
            r = cb_call_end(E, B, d, base);
        }
        if (v->coef != 1) {
            cb_op d = cb_dest(B, r, dest);
            put(E, "%*stx_p_muls(2 * tx_bn, ", ind, "");
            put_cop(E, r);
            put(E, ", ");
            num_literal(E->out, v->coef);
            r = cb_call_end(E, B, d, base);
        }
        return r;
    }
    /* a sum c0*x0 + c1*x1 + ...: tx_c_add and tx_c_sub from the left,
       tx_c_scale by |ci| (ci*xi added is |ci|*xi subtracted, bit for bit) */
    TX_ASSERT(v->op == OP_ADD);
    cb_op r = cb_eval(E, B, v->in[0], -1);
    if (v->nin == 1 && v->coef_in[0] != 1) {
        cb_op d = cb_dest(B, r, dest);
        put(E, "%*stx_p_muls(2 * tx_bn, ", ind, "");
        put_cop(E, r);
        put(E, ", ");
        num_literal(E->out, v->coef_in[0]);
        return cb_call_end(E, B, d, base);
    }
    for (int i = 1; i < v->nin; i++) {
        cb_op b = cb_eval(E, B, v->in[i], -1);
        cb_op d = cb_dest(B, r, i == v->nin - 1 ? dest : -1);
        put(E, "%*stx_p_axpby(2 * tx_bn, ", ind, "");
        num_literal(E->out, i == 1 ? v->coef_in[0] : 1.0);
        put(E, ", ");
        put_cop(E, r);
        put(E, ", ");
        num_literal(E->out, v->coef_in[i]);
        put(E, ", ");
        put_cop(E, b);
        r = cb_call_end(E, B, d, base);
    }
    return r;
}

/* Whether V is written by a step of its own (not a leaf, not a sum of
   one term with factor 1, not a product of one factor with scale 1),
   which may then write the target directly. */
static int cb_writes(const g_value *v)
{
    if (!v->inlined)
        return 0;
    if (v->op == OP_ADD)
        return !(v->nin == 1 && v->coef_in[0] == 1);
    if (v->op == OP_CONTRACT)
        return !(v->nin == 1 && v->coef == 1 && v->coef_in[0] > 0);
    return 1;
}

int cblk_supported(emitter *E, const g_value *x, int rank, int target_var)
{
    int need = 0;
    if (rank == 0 || !dt_complex(x->dt) || !cb_supported(x, &need))
        return 0;
    const int64_t *stride = target_var >= 0 ? emit_var_strides(E, target_var) : NULL;
    return !(stride && stride[rank - 1] != 1); /* a strided target: the scalar path */
}

void emit_complex_block_loop(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                             int target_var, const g_value *temp, dtype tdt, int op)
{
    TX_ASSERT(dt_complex(tdt));
    emit_use(E, TXS_PRIM);
    int depth = 2, L = labels[rank - 1];
    open_loops(E, labels, ext, rank - 1, &depth, 1);
    if (rank == 1 && E->k.value && E->k.value->row_group && kernel_range_spans(E, L, ext[0], depth)) {
        /* a vector of a row group: its range is the group's, in elements */
        put(E, "%*sconst int64_t tx_bn = tx_hi - tx_i < TX_BLOCK ? tx_hi - tx_i : TX_BLOCK;\n%*sconst int64_t ",
            4 * depth + 4, "", 4 * depth + 4, "");
        put_label(E, L);
        put(E, " = tx_i;\n");
    } else if (rank == 1 && kernel_range_blocks(E, ext[0], depth)) {
        put(E, "%*sconst int64_t tx_i = tx_ib * TX_BLOCK;\n", 4 * depth + 4, "");
        put_block_bounds(E, L, ext[0], depth + 1);
    } else
        put_block_loop_head(E, L, ext[rank - 1], depth);
    depth++;
    cb_state B = {.depth = depth, .label = L};
    tx_buf scratch;
    const char *target = blk_target_text(E, &scratch, labels, ext, rank, target_var, temp);
    /* the last step writes a c128 target ('=') in place unless the value
       reads it (a step would overwrite what a later one reads) */
    if (op == 0 && tdt == DT_C128 && cb_writes(x) && !blk_reads_var(x, target_var)) {
        int p = B.nptr++;
        put(E, "%*sdouble *tx_p%d = (double *)&%s;\n", 4 * depth, "", p, target);
        cb_op r = cb_eval(E, &B, x, p);
        TX_ASSERT(r.buf < 0 && r.ptr == p);
    } else {
        cb_op r = cb_eval(E, &B, x, -1);
        put(E, "%*stx_p_store_%s(2 * tx_bn, ", 4 * depth, "", tdt == DT_C64 ? "f32" : "f64");
        put_cop(E, r);
        put(E, ", (%s *)&%s, 1, %d);\n", tdt == DT_C64 ? "float" : "double", target, op);
    }
    put(E, "%*s}\n", 4 * depth - 4, "");
}
