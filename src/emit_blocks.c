/*
 * emit_blocks.c - inner loops through the runtime primitives (prims.inc): a
 * fused elementwise expression is evaluated a block of TX_BLOCK elements
 * at a time through scratch buffers that stay in L1.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"


int64_t mode_stride_value(emitter *E, const mode_seq *s, int p)
{
    if (s->stride) /* bound strides: known, but a negative one counts as unknown here */
        return s->stride[p] >= 0 ? s->stride[p] : -1;
    int64_t z = 1;
    for (int i = p + 1; i < s->n; i++) {
        tx_extent x = s->ext[i];
        int64_t v = emit_extent_value(E, x);
        if (v < 0)
            return -1;
        z *= v;
    }
    return z;
}

/* Is V (with the values fused into it) something the primitives can
   evaluate? Counts its nodes into *NEED: each needs one scratch buffer at
   most. */
int blk_supported(const g_value *v, int *need)
{
    if (++*need > BLK_MAX_BUFFERS)
        return 0;
    if (dt_complex(v->dt)) /* blocks hold reals: complex values take the scalar path */
        return 0;
    if (!v->inlined)
        return v->op == OP_CONST || v->op == OP_INDEX || emit_is_computed(v) ||
               ((v->op == OP_INPUT || v->op == OP_STORE) && v->rank == 0);
    if (v->op != OP_MAP && v->op != OP_ADD && v->op != OP_CONTRACT)
        return 0;
    if (v->op == OP_MAP && v->fn != MAP_DELTA && (v->fn >= MAP_DIM || (v->fn >= MAP_CONJ && v->fn <= MAP_IMAG)))
        return 0; /* dims, complex parts: the scalar path */
    for (int i = 0; i < v->nin; i++)
        if (!blk_supported(v->in[i], need))
            return 0;
    return 1;
}

/* Scratch block I of the kernel (its own, on its stack). */
static void put_scratch(emitter *E, int i)
{
    if (i + 1 > E->k.blk_buffers)
        E->k.blk_buffers = i + 1;
    E->k.blk_refs++;
    put(E, "(tx_blk + %d * TX_BLOCK)", i);
}

void put_op(emitter *E, blk_op o)
{
    TX_ASSERT(o.f32 != 1); /* a float pointer only where blk_typed chose a typed form */
    if (o.ptr >= 0)
        put(E, "tx_p%d", o.ptr);
    else
        put_scratch(E, o.buf);
}

void put_label_stride(emitter *E, const g_value *w, int L, int64_t *known)
{
    mode_seq s;
    *known = 0;
    if (emit_modes(E, w, &s) < 0) { /* a scalar variable */
        put(E, "0");
        return;
    }
    int any = 0;
    for (int p = 0; p < s.n; p++)
        if (s.label[p] == L) {
            int64_t v = mode_stride_value(E, &s, p);
            *known = any || v < 0 ? -1 : v;
            put(E, any ? " + " : "");
            put_stride(E, &s, p);
            any = 1;
        }
    if (!any)
        put(E, "0");
}

/* The stride of label L through memory-resident value W as
   put_label_stride knows it (-1: known only when the code runs; 0: L is
   not among W's modes), without writing it: nothing is emitted, so no
   dimension of the kernel's record is referenced for a text thrown away
   (an unused member is a warning, an error under -Werror). */
int64_t emit_known_stride(emitter *E, const g_value *w, int L)
{
    mode_seq s;
    int64_t known = 0;
    if (emit_modes(E, w, &s) < 0)
        return 0;
    for (int p = 0, any = 0; p < s.n; p++)
        if (s.label[p] == L) {
            int64_t v = mode_stride_value(E, &s, p);
            known = any || v < 0 ? -1 : v;
            any = 1;
        }
    return known;
}

/* An operand inside blk_eval: a block (O) or, when S >= 0, one number
   for the whole block, the local tx_sS (a literal or an operand that does
   not vary along the blocked label). A primitive takes the number as it
   is (tx_p_scale_add, tx_p_muls, tx_p_divs, tx_p_recip): a broadcast
   operand is never spread over a block only to be read back. */
typedef struct {
    blk_op o;
    int s;
} blk_val;

static blk_val blk_val_of(blk_op o)
{
    blk_val r = {o, -1};
    return r;
}

/* Whether V is its one operand as it is: a copy (a relayout for BLAS,
   1*x) or a sum of one term with the factor 1 (the value of R += V), whose
   block is the operand's, not 1*x+0 or a product by 1 into a scratch
   block (R += V over rows of 8 called two primitives a row). */
static int blk_is_copy(const g_value *v)
{
    return v->nin == 1 && ((v->op == OP_CONTRACT && v->coef_in[0] > 0 && v->coef == 1) ||
                           (v->op == OP_ADD && v->coef_in[0] == 1));
}

/* The number tx_sS as a block: filled into a fresh scratch buffer. */
static blk_op blk_spread(emitter *E, blk_state *B, blk_val v)
{
    if (v.s < 0)
        return v.o;
    blk_op r = {B->nbuf++, -1, 0};
    put(E, "%*stx_p_fill(tx_bn, tx_s%d, ", 4 * B->depth, "", v.s);
    put_scratch(E, r.buf);
    put(E, ");\n");
    return r;
}

/* The destination of an operation whose first operand is A: A's buffer
   (the primitives work in place), else a fresh one, above every operand's
   buffer so that no operand is overwritten before it is read. */
static blk_op blk_dest(blk_state *B, blk_val a)
{
    blk_op d = {a.s < 0 && a.o.buf >= 0 ? a.o.buf : B->nbuf++, -1, 0};
    return d;
}

/* The destination of a top operation (TOP set, TARGET the store's
   target) that a primitive computes in MULTI steps (a later step reading
   what the first wrote) or not, with TYPED forms or not: the target,
   unless it is the f32 target and the primitive cannot write it (a
   result rounded to float between steps would change the bits), or the
   steps are several and the target may stream (B->streams: each later
   step read back from memory what the one before had streamed there;
   A + B + C over 2000x2000 doubles took twice as long as A * B * C),
   else blk_dest for first operand A. */
static blk_op blk_out(blk_state *B, int top, blk_op target, blk_val a, int typed, int multi)
{
    if (top && !(multi && B->streams) && (!target.f32 || (typed && !multi)))
        return target;
    return blk_dest(B, a);
}

/* The destination of the last step of such an operation whose first
   step blk_out kept off a streaming target: the target (f64), which
   that step's loop streams; else D, where the steps before it went. */
static blk_op blk_last_out(const blk_state *B, int top, blk_op target, blk_op d)
{
    return top && B->streams && !target.f32 ? target : d;
}

/* The entry of B->pend for the f32 tensor read in place as tx_pPTR. */
static int blk_pending(const blk_state *B, int ptr)
{
    int k = 0;
    while (k < B->npend && B->pend[k].ptr != ptr)
        k++;
    TX_ASSERT(k < B->npend);
    return k;
}

/* Records the float pointer tx_pPTR just declared (an f32 tensor read in
   place, or an f32 value's block) with scratch block BUF for its
   conversion should a call need it as doubles (blk_double): the
   conversion goes here in the text. */
static void blk_pend(emitter *E, blk_state *B, int ptr, int buf)
{
    TX_ASSERT(B->npend < BLK_MAX_BUFFERS);
    B->pend[B->npend].ptr = ptr;
    B->pend[B->npend].buf = buf;
    B->pend[B->npend].done = 0;
    B->pend[B->npend].out = E->out;
    B->pend[B->npend].pos = E->out->len;
    B->npend++;
}

/* Operand V as doubles: an f32 tensor read in place converted into the
   scratch block its leaf kept (blk_eval_), the conversion put where the
   leaf is, so code that takes no typed form is what it was without them;
   anything else as it is. */
static blk_val blk_double(emitter *E, blk_state *B, blk_val v)
{
    if (v.s >= 0 || !v.o.f32)
        return v;
    int k = blk_pending(B, v.o.ptr);
    TX_ASSERT(!B->pend[k].done);
    TX_ASSERT(B->pend[k].out == E->out);
    blk_op r = {B->pend[k].buf, -1, 0};
    tx_buf text = {0}, *out = E->out;
    E->out = &text;
    put(E, "%*stx_p_load_f32(tx_bn, tx_p%d, 1, ", 4 * B->depth, "", v.o.ptr);
    put_scratch(E, r.buf);
    put(E, ");\n");
    E->out = out;
    if (text.oom)
        out->oom = 1;
    buf_insert(out, B->pend[k].pos, text.p ? text.p : "", text.len);
    for (int j = 0; j < B->npend; j++)
        if (j != k && B->pend[j].out == out && B->pend[j].pos >= B->pend[k].pos)
            B->pend[j].pos += text.len;
    B->pend[k].done = 1;
    buf_free(&text);
    return blk_val_of(r);
}

/* Whether a primitive with TYPED forms reads its operands OPS (N of
   them; NULLs, numbers and absent blocks ignored) as floats: every block
   among them an f32 tensor read in place. */
static int blk_reads_floats(blk_val *ops[], int n, int typed)
{
    int nf = 0, nd = 0;
    for (int i = 0; i < n; i++)
        if (ops[i] && ops[i]->s < 0 && (ops[i]->o.buf >= 0 || ops[i]->o.ptr >= 0)) {
            if (ops[i]->o.f32)
                nf++;
            else
                nd++;
        }
    return typed && nf > 0 && nd == 0;
}

/* The form of the primitive about to be put, given its operands OPS (N
   of them) and its destination D (NULL for a reduction), TYPED when it
   has prims.inc's TX_P_TYPED forms. When it reads them as floats
   (blk_reads_floats): "_fd", or "_ff" when D is the f32 target. Else the
   operands are made doubles (blk_double) and the form is "_df" when D is
   the f32 target, "" otherwise. The operands and D that a typed form
   takes as floats are marked for put_op (F32 2). */
static const char *blk_typed(emitter *E, blk_state *B, blk_val *ops[], int n, blk_op *d, int typed)
{
    int in_f = blk_reads_floats(ops, n, typed), out_f = d && d->f32;
    TX_ASSERT(typed || !out_f);
    for (int i = 0; i < n; i++)
        if (ops[i] && ops[i]->s < 0 && ops[i]->o.f32) {
            if (in_f)
                ops[i]->o.f32 = 2;
            else
                *ops[i] = blk_double(E, B, *ops[i]);
        }
    if (out_f)
        d->f32 = 2;
    return in_f ? (out_f ? "_ff" : "_fd") : out_f ? "_df" : "";
}

/* blk_typed for a call whose destination is still to be chosen: the
   operands made doubles first unless a typed form reads them all as
   floats, then *D = blk_out(B, TOP, TARGET, *OPS[FIRST], TYPED, MULTI),
   FIRST the operand the result may overwrite (-1: none). */
static const char *blk_call(emitter *E, blk_state *B, blk_val *ops[], int n, int first, int typed, int multi,
                            int top, blk_op target, blk_op *d)
{
    if (!blk_reads_floats(ops, n, typed)) {
        for (int i = 0; i < n; i++)
            if (ops[i])
                *ops[i] = blk_double(E, B, *ops[i]);
    } else { /* read as floats: the blocks their leaves kept are not needed, those on top free again */
        int kept[8], nkept = 0; /* a call reads at most four blocks */
        for (int i = 0; i < n; i++)
            if (ops[i] && ops[i]->s < 0 && ops[i]->o.f32) {
                int k = blk_pending(B, ops[i]->o.ptr);
                if (!B->pend[k].done && nkept < 8) {
                    B->pend[k].done = 2;
                    kept[nkept++] = B->pend[k].buf;
                }
            }
        for (int j = 0; j < nkept; j++)
            if (kept[j] == B->nbuf - 1) {
                B->nbuf--;
                j = -1; /* another may now be on top */
            }
    }
    blk_val none = {{-1, -1, 0}, -1};
    *d = blk_out(B, top, target, first >= 0 ? *ops[first] : none, typed, multi);
    return blk_typed(E, B, ops, n, d, typed);
}

static blk_val blk_eval_(emitter *E, blk_state *B, const g_value *v);
static blk_val blk_from_f32(emitter *E, blk_state *B, const g_value *v);

/* The terms A (times CA) and B (times CB) of a sum, a block first: A
   spread into a block when both are numbers, else swapped with B when A
   is the number (x + c and c + x are the same bits) */
static void blk_block_first(emitter *E, blk_state *B, blk_val *a, double *ca, blk_val *b, double *cb)
{
    if (a->s >= 0 && b->s >= 0)
        *a = blk_val_of(blk_spread(E, B, *a));
    if (a->s >= 0) {
        blk_val t = *a;
        double tc = *ca;
        *a = *b, *ca = *cb, *b = t, *cb = tc;
    }
}

/* exp, log, sin, cos or tanh (the vector functions of tx_p_map) */
static int map_vector_fn(map_fn f)
{
    return f == MAP_EXP || f == MAP_LOG || f == MAP_SIN || f == MAP_COS || f == MAP_TANH;
}

/* Whether the one-pass forms below may compute a value of type D with
   the values fused into it in double registers: f64 only. An f32
   operation rounds every step to float (the f32 path); an f32 tensor
   or number they read as it is. */
static int real_dt(dtype d)
{
    return d == DT_F64;
}

/* An f64 sum of two terms, which tx_p_map_aff takes in registers. */
static int f64_sum(const g_value *w)
{
    return w->dt == DT_F64;
}

/* Whether W is an inlined sum of two terms (a*x + b*y, a*x + c). */
static int is_sum_of_two(const g_value *w)
{
    return w->inlined && w->op == OP_ADD && w->nin == 2;
}

/* The terms of SUM, an inlined sum of two terms, evaluated and put block
   first (blk_block_first): *A times *CA, *B times *CB. */
static void blk_sum_terms(emitter *E, blk_state *B, const g_value *sum, blk_val *a, double *ca, blk_val *b,
                          double *cb)
{
    *a = blk_eval_(E, B, sum->in[0]);
    *b = blk_eval_(E, B, sum->in[1]);
    *ca = sum->coef_in[0];
    *cb = sum->coef_in[1];
    blk_block_first(E, B, a, ca, b, cb);
}

/* The arguments "b, y, c" of a primitive's term CB*B: y the block B and
   c 0, or y NULL and c = CB times B when B is a number. */
static void put_term_args(emitter *E, blk_val b, double cb)
{
    num_literal(E->out, cb);
    if (b.s >= 0) {
        put(E, ", 0, ");
        num_literal(E->out, cb);
        put(E, " * tx_s%d", b.s);
    } else {
        put(E, ", ");
        put_op(E, b.o);
        put(E, ", 0.0");
    }
}

/* The arguments "a, x, b, y, c" of a primitive that takes the sum a*x +
   b*y, or a*x + c with y NULL (tx_p_map_aff, tx_p_mul_aff, tx_p_sq_aff),
   for the terms blk_sum_terms gave. */
static void put_sum_args(emitter *E, blk_val a, double ca, blk_val b, double cb)
{
    num_literal(E->out, ca);
    put(E, ", ");
    put_op(E, a.o);
    put(E, ", ");
    put_term_args(E, b, cb);
}

/* The end of a primitive's call, its result D: the scratch blocks above
   D free again (BASE when D is no block). */
static blk_val put_call_end(emitter *E, blk_state *B, blk_op d, int base)
{
    put(E, ", ");
    put_op(E, d);
    put(E, ");\n");
    B->nbuf = d.buf >= 0 ? d.buf + 1 : base;
    return blk_val_of(d);
}

/* The end of a call that takes a sum (put_sum_args), its result D. */
static blk_val put_sum_call_end(emitter *E, blk_state *B, blk_val a, double ca, blk_val b, double cb, blk_op d,
                                int base)
{
    put_sum_args(E, a, ca, b, cb);
    return put_call_end(E, B, d, base);
}

/* F(a*x + b*y) for V a function of an inlined sum of two terms, in one
   tx_p_map_aff (the bits of OP_ADD's tx_p_axpby or tx_p_scale_add, then
   tx_p_map): the sum goes into F in registers instead of through a
   scratch block. TOP/TARGET and BASE as in blk_eval_. */
static blk_val blk_map_of_sum(emitter *E, blk_state *B, const g_value *v, int top, blk_op target, int base)
{
    blk_val a, b;
    double ca, cb;
    blk_sum_terms(E, B, v->in[0], &a, &ca, &b, &cb);
    blk_val *ops[] = {&a, &b};
    blk_op d;
    blk_call(E, B, ops, 2, 0, 0, 0, top, target, &d);
    put(E, "%*stx_p_map_aff(tx_bn, %d, ", 4 * B->depth, "", (int)v->fn);
    return put_sum_call_end(E, B, a, ca, b, cb, d, base);
}

/* Whether V is a real (real_dt) product of two factors (no scale, no
   division) one of which is an inlined real sum of two terms (x - mean in
   a variance or a normalisation, (x - y) * w), or the square of such a
   sum: computed in one pass with the sum in registers (blk_product_of_sum). */
static int product_of_sum(const g_value *v)
{
    if (!real_dt(v->dt))
        return 0;
    if (v->op == OP_MAP)
        return v->fn == MAP_POW && v->fn_arg == 2 && v->nin == 1 && is_sum_of_two(v->in[0]) &&
               real_dt(v->in[0]->dt);
    return v->op == OP_CONTRACT && v->nin == 2 && v->coef == 1 && v->coef_in[0] == 1 && v->coef_in[1] == 1 &&
           ((is_sum_of_two(v->in[1]) && real_dt(v->in[1]->dt)) || (is_sum_of_two(v->in[0]) && real_dt(v->in[0]->dt)));
}

/* V as product_of_sum clears it: y * (a*x + b*z) (the sum the second
   factor, or the first: the order of tx_p_mul's operands kept) in one
   tx_p_mul_aff, (a*x + b*z)^2 in one tx_p_sq_aff: the bits of the sum
   through a scratch block, then tx_p_mul or tx_p_pow. TOP/TARGET and BASE
   as in blk_eval_. */
static blk_val blk_product_of_sum(emitter *E, blk_state *B, const g_value *v, int top, blk_op target, int base)
{
    blk_val a, b, y = {{-1, -1, 0}, -1};
    double ca, cb;
    int sq = v->op == OP_MAP, si = !sq && is_sum_of_two(v->in[1]); /* the sum's factor */
    if (!sq)
        y = blk_val_of(blk_spread(E, B, blk_eval_(E, B, v->in[1 - si])));
    blk_sum_terms(E, B, v->in[si], &a, &ca, &b, &cb);
    blk_val *ops[] = {&a, &b, &y};
    blk_op d;
    const char *f = blk_call(E, B, ops, 3, sq ? 0 : 2, 1, 0, top, target, &d);
    if (sq)
        put(E, "%*stx_p_sq_aff%s(tx_bn, ", 4 * B->depth, "", f);
    else {
        put(E, "%*stx_p_mul_aff%s(tx_bn, %d, ", 4 * B->depth, "", f, si == 0);
        put_op(E, y.o);
        put(E, ", ");
    }
    return put_sum_call_end(E, B, a, ca, b, cb, d, base);
}

/* Whether V is a real quotient by an inlined real sum of two terms, y / t
   (no scale) or c / t: computed in one pass with the sum in a register
   (blk_quotient_of_sum). */
static int quotient_of_sum(const g_value *v)
{
    if (v->op != OP_CONTRACT || !real_dt(v->dt) || (v->coef != 1 && v->nin != 1))
        return 0;
    const g_value *t = v->in[v->nin - 1];
    return ((v->nin == 1 && v->coef_in[0] < 0) || (v->nin == 2 && v->coef_in[0] > 0 && v->coef_in[1] < 0)) &&
           is_sum_of_two(t) && real_dt(t->dt);
}

/* V as quotient_of_sum clears it: y / (a*x + b*z), or c / (a*x + b*z)
   for a number c (an operand or the product's constant), in one
   tx_p_div_aff (the bits of the sum through a scratch block, then
   tx_p_div or tx_p_recip). TOP/TARGET and BASE as in blk_eval_. */
static blk_val blk_quotient_of_sum(emitter *E, blk_state *B, const g_value *v, int top, blk_op target, int base)
{
    blk_val y = {{-1, -1, 0}, -1}, a, b;
    double ca, cb;
    if (v->nin == 2)
        y = blk_eval_(E, B, v->in[0]);
    blk_sum_terms(E, B, v->in[v->nin - 1], &a, &ca, &b, &cb);
    blk_val *ops[] = {&a, &b, &y};
    blk_op d;
    const char *f = blk_call(E, B, ops, 3, 0, 1, 0, top, target, &d);
    put(E, "%*stx_p_div_aff%s(tx_bn, ", 4 * B->depth, "", f);
    if (v->nin == 1) {
        put(E, "0, ");
        num_literal(E->out, v->coef);
        put(E, ", ");
    } else if (y.s >= 0)
        put(E, "0, tx_s%d, ", y.s);
    else {
        put_op(E, y.o);
        put(E, ", 0.0, ");
    }
    return put_sum_call_end(E, B, a, ca, b, cb, d, base);
}

/* For V exp, log, sin, cos or tanh of an inlined f64 block times a
   number (exp(-x) in a logistic, tanh(c*u) in a GELU): the number, else 0.
   Computed as tx_p_map_aff's f(c*x + -0.0) in one pass: adding -0.0 is
   exact for every value, zeros of either sign included, so the bits are
   those of tx_p_muls then tx_p_map. */
static double map_of_scaled(const g_value *v)
{
    if (v->op != OP_MAP || v->nin != 1 || v->dt != DT_F64 || !map_vector_fn(v->fn))
        return 0;
    const g_value *x = v->in[0];
    if (!x->inlined || x->dt != DT_F64 || x->nin != 1)
        return 0;
    if (x->op == OP_CONTRACT && x->coef_in[0] > 0 && x->coef != 1)
        return x->coef;
    return x->op == OP_ADD && x->coef_in[0] != 1 ? x->coef_in[0] : 0;
}

/* V as map_of_scaled clears it, f(c*x) for the number SCALE: one
   tx_p_map_aff of c*x + -0.0. TOP/TARGET and BASE as in blk_eval_. */
static blk_val blk_map_of_scaled(emitter *E, blk_state *B, const g_value *v, double scale, int top, blk_op target,
                                 int base)
{
    blk_val x = blk_val_of(blk_spread(E, B, blk_eval_(E, B, v->in[0]->in[0])));
    blk_val *ops[] = {&x};
    blk_op d;
    blk_call(E, B, ops, 1, 0, 0, 0, top, target, &d);
    put(E, "%*stx_p_map_aff(tx_bn, %d, ", 4 * B->depth, "", (int)v->fn);
    num_literal(E->out, scale);
    put(E, ", ");
    put_op(E, x.o);
    put(E, ", 0.0, (const double *)0, -0.0");
    return put_call_end(E, B, d, base);
}

/* Whether blk_eval_ gives V as one number for the block (tx_sS), not a
   block: a constant, an operand that does not vary along the blocked
   label, or a copy of one. */
static int blk_is_number(emitter *E, blk_state *B, const g_value *v)
{
    if (v->inlined)
        return v->op == OP_CONTRACT && v->nin == 1 && v->coef_in[0] > 0 && v->coef == 1 &&
               blk_is_number(E, B, v->in[0]);
    if (v->op == OP_CONST)
        return 1;
    return emit_known_stride(E, v, B->label) == 0 && (!B->flat || emit_known_stride(E, v, B->flat_row) == 0);
}

/* Whether V is where(x OP y, a, b) of real values with the comparison
   inlined into it and exactly one of x and y a number: one
   tx_p_where_cmps (blk_where_of_compare). */
static int where_of_compare(emitter *E, blk_state *B, const g_value *v)
{
    if (v->op != OP_MAP || v->fn != MAP_WHERE || v->nin != 3 || !real_dt(v->dt))
        return 0;
    const g_value *c = v->in[0];
    return c->inlined && c->op == OP_MAP && c->fn >= MAP_LT && c->fn <= MAP_NE && c->nin == 2 &&
           blk_is_number(E, B, c->in[0]) != blk_is_number(E, B, c->in[1]);
}

/* V as where_of_compare clears it: where(x OP k, a, b), k a number (k OP
   x as x OP' k, mirrored), a and b blocks or numbers, in one
   tx_p_where_cmps: the bits of tx_p_cmps into a scratch block, then
   tx_p_where_s. TOP/TARGET and BASE as in blk_eval_. */
static blk_val blk_where_of_compare(emitter *E, blk_state *B, const g_value *v, int top, blk_op target, int base)
{
    static const int mirror[] = {2, 3, 0, 1, 4, 5};
    const g_value *c = v->in[0];
    int cfirst = blk_is_number(E, B, c->in[0]), op = (int)(c->fn - MAP_LT);
    blk_val x = blk_val_of(blk_spread(E, B, blk_eval_(E, B, c->in[cfirst])));
    blk_val k = blk_eval_(E, B, c->in[!cfirst]);
    TX_ASSERT(k.s >= 0);
    blk_val br[2] = {blk_eval_(E, B, v->in[1]), blk_eval_(E, B, v->in[2])};
    blk_val *ops[] = {&x, &br[0], &br[1]};
    blk_op d;
    blk_call(E, B, ops, 3, 0, 0, 0, top, target, &d);
    put(E, "%*stx_p_where_cmps(tx_bn, %d, ", 4 * B->depth, "", cfirst ? mirror[op] : op);
    put_op(E, x.o);
    put(E, ", tx_s%d", k.s);
    for (int i = 0; i < 2; i++)
        if (br[i].s >= 0)
            put(E, ", (const double *)0, tx_s%d", br[i].s);
        else {
            put(E, ", ");
            put_op(E, br[i].o);
            put(E, ", 0.0");
        }
    return put_call_end(E, B, d, base);
}

/* Whether V is an inlined real product of two factors (no scale, no
   division) that are both blocks. */
static int product_of_blocks(emitter *E, blk_state *B, const g_value *v)
{
    return v->inlined && v->op == OP_CONTRACT && real_dt(v->dt) && v->nin == 2 && v->coef == 1 &&
           v->coef_in[0] == 1 && v->coef_in[1] == 1 && !blk_is_number(E, B, v->in[0]) &&
           !blk_is_number(E, B, v->in[1]);
}

/* How a real product of type DT divides by a number, as the DIV of
   tx_p_mul_aff_add and tx_p_red_sq_aff (tx_p_div_recip): 1 an f64 one
   (tx_p_divr's division), 2 an f32 one (tx_p_divrf's). */
static int number_division(dtype dt)
{
    return dt == DT_F64 ? 1 : 2;
}

/* Whether Y is an inlined real block divided by a number (y / c: g / s
   in a normalisation): its number_division, else 0. */
static int block_over_number(emitter *E, blk_state *B, const g_value *y)
{
    if (!(y->inlined && y->op == OP_CONTRACT && real_dt(y->dt) && y->nin == 2 && y->coef == 1 &&
          y->coef_in[0] == 1 && y->coef_in[1] < 0 && !blk_is_number(E, B, y->in[0]) &&
          blk_is_number(E, B, y->in[1])))
        return 0;
    return number_division(y->dt);
}

/* For V an inlined real sum of two terms: the term (0 or 1) that is, with
   coefficient 1, a product blk_product_with_a_term computes with the other
   term added, or -1. */
static int product_term(emitter *E, blk_state *B, const g_value *v)
{
    if (!v->inlined || v->op != OP_ADD || v->nin != 2 || !real_dt(v->dt))
        return -1;
    for (int i = 0; i < 2; i++) {
        const g_value *p = v->in[i];
        if (v->coef_in[i] == 1 && p->inlined && p->op == OP_CONTRACT &&
            (product_of_sum(p) || product_of_blocks(E, B, p)))
            return i;
    }
    return -1;
}

/* For V an inlined real sum of three terms or more: its last term when
   that is a product of two blocks with coefficient 1, which then joins the
   sum of the others in their last pass (tx_p_mul_add: x*y + 1*d is
   d + x*y, the same bits), else NULL. */
static const g_value *last_product_term(emitter *E, blk_state *B, const g_value *v)
{
    if (!v->inlined || v->op != OP_ADD || v->nin < 3 || !real_dt(v->dt) || v->coef_in[v->nin - 1] != 1)
        return NULL;
    return product_of_blocks(E, B, v->in[v->nin - 1]) ? v->in[v->nin - 1] : NULL;
}

/* V as product_term clears it, p + c*w with p its term PI: one
   tx_p_mul_add (p = x * y) or tx_p_mul_aff_add (p = y * (a*x + b*z), y
   divided by a number in the same pass when block_over_number), the other
   term added in the same pass: the bits of the product through a scratch
   block, then OP_ADD's tx_p_axpby or tx_p_scale_add (1*p is p, and the
   sum's operands may be swapped). TOP/TARGET and BASE as in blk_eval_. */
static blk_val blk_product_with_a_term(emitter *E, blk_state *B, const g_value *v, int pi, int top, blk_op target,
                                       int base)
{
    const g_value *p = v->in[pi];
    blk_val w;
    blk_op d;
    if (!product_of_sum(p)) { /* x * y + c*w */
        blk_val x = blk_eval_(E, B, p->in[0]), y = blk_eval_(E, B, p->in[1]);
        w = blk_eval_(E, B, v->in[1 - pi]);
        blk_val *ops[] = {&x, &y, &w};
        const char *f = blk_call(E, B, ops, 3, 0, 1, 0, top, target, &d);
        put(E, "%*stx_p_mul_add%s(tx_bn, ", 4 * B->depth, "", f);
        put_op(E, x.o);
        put(E, ", ");
        put_op(E, y.o);
    } else { /* y * (a*x + b*z) + c*w, y perhaps divided by a number */
        blk_val a, b, y, dv = {{-1, -1, 0}, -1};
        double ca, cb;
        int si = is_sum_of_two(p->in[1]), div = block_over_number(E, B, p->in[1 - si]);
        if (div) {
            y = blk_eval_(E, B, p->in[1 - si]->in[0]);
            dv = blk_eval_(E, B, p->in[1 - si]->in[1]);
        } else
            y = blk_val_of(blk_spread(E, B, blk_eval_(E, B, p->in[1 - si])));
        blk_sum_terms(E, B, p->in[si], &a, &ca, &b, &cb);
        w = blk_eval_(E, B, v->in[1 - pi]);
        blk_val *ops[] = {&y, &a, &b, &w};
        const char *f = blk_call(E, B, ops, 4, 0, 1, 0, top, target, &d);
        put(E, "%*stx_p_mul_aff_add%s(tx_bn, %d, ", 4 * B->depth, "", f, si == 0);
        put_op(E, y.o);
        if (div)
            put(E, ", %d, tx_s%d, ", div, dv.s);
        else
            put(E, ", 0, 0.0, ");
        put_sum_args(E, a, ca, b, cb);
    }
    put(E, ", "); /* the term: e, w, f */
    put_term_args(E, w, v->coef_in[1 - pi]);
    return put_call_end(E, B, d, base);
}

/* The address of the current row's block in panel K, of type DT. */
static void put_panel_row(emitter *E, int k, dtype dt)
{
    E->k.blk_refs++;
    if (dt == DT_F32)
        put(E, "(const float *)(tx_blk + %d * TX_BLOCK) + (", TRANSPOSED_ROWS * k);
    else
        put(E, "tx_blk + (%d + ", TRANSPOSED_ROWS * k);
    put_label(E, E->panels.P);
    put(E, " - tx_it) * TX_BLOCK");
}

/* The panel holding V's blocks (emitter.panels), or -1. */
static int panel_of(const emitter *E, const g_value *v)
{
    for (int k = 0; k < E->panels.n; k++)
        if (E->panels.v[k] == v)
            return k;
    return -1;
}

/* Whether tensor V (not inlined) is an f64 one that a flat block over
   rows of P, blocked along L, reads transposed: stride 1 along P, some
   other along L (the stride along P known when the code is emitted) */
static int blk_flat_transposed(emitter *E, const g_value *v, int L, int P)
{
    if (v->inlined || v->op == OP_CONST || v->dt != DT_F64)
        return 0;
    int64_t kl = emit_known_stride(E, v, L);
    return kl != 0 && kl != 1 && emit_known_stride(E, v, P) == 1;
}

/* delta(...) over the block: one number (1 where its labels are equal)
   when the block's label is not among them, else a block of zeros with
   a 1 where the block's label meets the others (if they are equal and
   that index is in the block): F("p,q") = h("p,q") + 2 * delta("p,q") *
   e("p") in blocks along q, not one scalar comparison an element. */
static blk_val blk_delta(emitter *E, blk_state *B, const g_value *v, int base)
{
    int ind = 4 * B->depth, along = 0, first = -1;
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] == B->label)
            along = 1;
        else if (first < 0)
            first = v->label[i];
    blk_op r = {base, -1, 0};
    blk_val c = {r, -1};
    if (v->rank < 2) { /* delta("j,j"): 1 (the block's label perhaps read by nothing else) */
        c.s = B->nptr++;
        put(E, "%*sconst double tx_s%d = 1.0;\n", ind, "", c.s);
        if (along) {
            put(E, "%*s(void)", ind, "");
            put_label(E, B->label);
            put(E, ";\n");
        }
        return c;
    }
    if (!along)
        c.s = B->nptr++;
    put(E, "%*s", ind, "");
    if (!along)
        put(E, "const double tx_s%d = ", c.s);
    else {
        put(E, "tx_p_fill(tx_bn, 0.0, ");
        put_scratch(E, base);
        put(E, ");\n%*sif (", ind, "");
        put_label(E, first);
        put(E, " >= ");
        put_label(E, B->label);
        put(E, " && ");
        put_label(E, first);
        put(E, " - ");
        put_label(E, B->label);
        put(E, " < tx_bn");
    }
    for (int i = 0, n = 0; i < v->rank; i++)
        if (v->label[i] != B->label && v->label[i] != first) {
            put(E, "%s", along || n++ ? " && " : "");
            put_label(E, v->label[i]);
            put(E, " == ");
            put_label(E, first);
        }
    if (!along) {
        put(E, " ? 1.0 : 0.0;\n"); /* (two labels or more besides the block's) */
        return c;
    }
    put(E, ")\n%*s", ind + 4, "");
    put_scratch(E, base);
    put(E, "[");
    put_label(E, first);
    put(E, " - ");
    put_label(E, B->label);
    put(E, "] = 1.0;\n");
    B->nbuf = base + 1;
    return c;
}

static blk_val blk_eval_(emitter *E, blk_state *B, const g_value *v)
{
    int ind = 4 * B->depth, base = B->nbuf, top = E->blk_dest;
    blk_op r = {base, -1, 0}, target = {-1, top - 1, top && E->blk_dest_f32};
    E->blk_dest = E->blk_dest_f32 = 0; /* for the top operation only */
    int pk = v->inlined ? -1 : panel_of(E, v);
    if (pk >= 0) { /* the row's block of a transposed operand, copied into its panel */
        r.buf = -1;
        r.ptr = B->nptr++;
        r.f32 = v->dt == DT_F32;
        put(E, "%*sconst %s *tx_p%d = ", ind, "", r.f32 ? "float" : "double", r.ptr);
        put_panel_row(E, pk, v->dt);
        put(E, ";\n");
        if (r.f32) { /* its scratch block, should a call need it as doubles (as an f32 tensor read in place) */
            blk_pend(E, B, r.ptr, base);
            B->nbuf = base + 1;
        }
        return blk_val_of(r);
    }
    if (!v->inlined) {
        if (v->op == OP_CONST) {
            blk_val c = {r, B->nptr++};
            put(E, "%*sconst double tx_s%d = ", ind, "", c.s);
            num_literal(E->out, v->coef);
            put(E, ";\n");
            return c;
        }
        /* a stride of exactly 1 (known in the JIT) reads the tensor in
           place; a stride of 0 (the label is not among its modes) is one
           number */
        int64_t known;
        tx_buf stride = {0};
        tx_buf *out = E->out;
        E->out = &stride;
        put_label_stride(E, v, B->label, &known);
        E->out = out;
        if (B->flat && (known == 0 || known == 1)) { /* rows one after the other */
            int64_t kr;
            tx_buf rs = {0};
            E->out = &rs;
            put_label_stride(E, v, B->flat_row, &kr);
            E->out = out;
            if (known == 1 || kr != 0) {
                if (v->dt != DT_F64) {
                    B->flat_fail = 1;
                } else if (known == 1 && kr == 0) { /* one row for all: repeated */
                    put(E, "%*stx_p_repeat_rows(tx_rn, ", ind, "");
                    put_extent(E, B->flat_ext);
                    put(E, ", &");
                    put_access(E, v);
                    put(E, ", ");
                    put_scratch(E, base);
                    put(E, ");\n");
                    B->nbuf = base + 1;
                } else if (known == 1) { /* in place: its rows must follow each other */
                    tx_buf ext = {0};
                    E->out = &ext;
                    put(E, "(");
                    put_extent(E, B->flat_ext);
                    put(E, ")");
                    E->out = out;
                    if (rs.oom || ext.oom) /* out of memory: reported as the emitter's, not a crash */
                        out->oom = 1;
                    else if (strcmp(rs.p, ext.p) != 0) /* (a stride the extent itself is no condition) */
                        buf_printf(B->flat_guard, " && (%s) == %s", rs.p, ext.p);
                    buf_free(&ext);
                    r.buf = -1;
                    r.ptr = B->nptr++;
                    put(E, "%*sconst double *tx_p%d = &", ind, "", r.ptr);
                    put_access(E, v);
                    put(E, ";\n");
                } else { /* one number a row */
                    put(E, "%*stx_p_spread_rows(tx_rn, ", ind, "");
                    put_extent(E, B->flat_ext);
                    put(E, ", &");
                    put_access(E, v);
                    put(E, ", %s, ", rs.p ? rs.p : "0");
                    if (rs.oom)
                        out->oom = 1;
                    put_scratch(E, base);
                    put(E, ");\n");
                    B->nbuf = base + 1;
                }
                buf_free(&rs);
                buf_free(&stride);
                return blk_val_of(r);
            }
            buf_free(&rs);
        } else if (B->flat && blk_flat_transposed(E, v, B->label, B->flat_row)) {
            /* read transposed (stride 1 along the rows' label): the
               block's rows of it copied into rows one after the other,
               the same rows of the next iteration around asked for */
            int64_t kn;
            tx_buf next = {0};
            if (B->flat_next) {
                E->out = &next;
                put_label_stride(E, v, B->flat_next - 1, &kn);
                E->out = out;
            }
            put(E, "%*stx_p_tile_next_f64(tx_rn, ", ind, "");
            put_extent(E, B->flat_ext);
            put(E, ", &");
            put_access(E, v);
            put(E, ", %s, %s, ", stride.p ? stride.p : "0", next.p ? next.p : "0");
            if (stride.oom || next.oom)
                out->oom = 1;
            buf_free(&next);
            put_scratch(E, base);
            put(E, ", ");
            put_extent(E, B->flat_ext);
            put(E, ");\n");
            B->nbuf = base + 1;
            buf_free(&stride);
            return blk_val_of(r);
        } else if (B->flat)
            B->flat_fail = 1;
        if (known == 0) {
            blk_val c = {r, B->nptr++};
            put(E, "%*sconst double tx_s%d = (double)", ind, "", c.s);
            put_access(E, v);
            put(E, ";\n");
            buf_free(&stride);
            return c;
        }
        if (known == 1 && (v->dt == DT_F64 || v->dt == DT_F32)) {
            /* read in place: an f32 tensor by the typed forms (blk_typed) */
            r.buf = -1;
            r.ptr = B->nptr++;
            r.f32 = v->dt == DT_F32;
            put(E, "%*sconst %s *tx_p%d = &", ind, "", r.f32 ? "float" : "double", r.ptr);
            put_access(E, v);
            put(E, ";\n");
            if (r.f32) { /* its scratch block, should a call need it as doubles */
                blk_pend(E, B, r.ptr, base);
                B->nbuf = base + 1;
            }
        } else {
            put(E, "%*stx_p_load_%s(tx_bn, &", ind, "", v->dt == DT_F32 ? "f32" : "f64");
            put_access(E, v);
            put(E, ", %s, ", stride.p ? stride.p : "0");
            put_scratch(E, base);
            put(E, ");\n");
            B->nbuf = base + 1;
        }
        buf_free(&stride);
        return blk_val_of(r);
    }
    if (v->op == OP_MAP && v->fn == MAP_DELTA)
        return blk_delta(E, B, v, base);
    /* an f32 operation: in float, each step rounded (the f32 path) */
    if (emit_f32_rounds(v) && !(v->op == OP_MAP && v->fn == MAP_DIM)) {
        E->blk_dest = 0;
        return blk_from_f32(E, B, v);
    }
    /* a function of a sum of two terms (exp(x - m), tanh(x + b)) in one
       pass */
    if (v->op == OP_MAP && v->nin == 1 && map_vector_fn(v->fn) && is_sum_of_two(v->in[0]) && f64_sum(v->in[0]))
        return blk_map_of_sum(E, B, v, top, target, base);
    if (product_of_sum(v))
        return blk_product_of_sum(E, B, v, top, target, base);
    if (quotient_of_sum(v))
        return blk_quotient_of_sum(E, B, v, top, target, base);
    double scale = map_of_scaled(v);
    if (scale != 0)
        return blk_map_of_scaled(E, B, v, scale, top, target, base);
    if (where_of_compare(E, B, v))
        return blk_where_of_compare(E, B, v, top, target, base);
    int pi = product_term(E, B, v);
    if (pi >= 0)
        return blk_product_with_a_term(E, B, v, pi, top, target, base);
    const g_value *lp = last_product_term(E, B, v);
    blk_val in[64];
    in[0] = in[1] = blk_val_of(r);
    for (int i = 0; i < v->nin - (lp != NULL) && i < 64; i++)
        in[i] = blk_eval_(E, B, v->in[i]);
    if (blk_is_copy(v))
        return in[0]; /* the operand's block as it is, not 1*x+0 */
    blk_op d;
    switch (v->op) {
    case OP_ADD: {
        /* the first two terms: a*x + b*y, a number taking tx_p_scale_add's
           constant (x + c and c + x are the same bits) */
        blk_val a = in[0], b = v->nin > 1 ? in[1] : in[0];
        double ca = v->coef_in[0], cb = v->nin > 1 ? v->coef_in[1] : 0;
        blk_block_first(E, B, &a, &ca, &b, &cb);
        blk_val *ops[] = {&a, v->nin > 1 ? &b : NULL};
        const char *f = blk_call(E, B, ops, 2, 0, 1, v->nin > 2 || lp, top, target, &d);
        put(E, "%*s", ind, "");
        if (v->nin == 1) { /* c * x: one product (c*x + 0 would lose the sign of a zero) */
            put(E, "tx_p_muls%s(tx_bn, ", f);
            put_op(E, a.o);
            put(E, ", ");
            num_literal(E->out, ca);
        } else if (b.s >= 0) {
            put(E, "tx_p_scale_add%s(tx_bn, ", f);
            num_literal(E->out, ca);
            put(E, ", ");
            put_op(E, a.o);
            put(E, ", ");
            num_literal(E->out, cb);
            put(E, " * tx_s%d", b.s);
        } else {
            put(E, "tx_p_axpby%s(tx_bn, ", f);
            num_literal(E->out, ca);
            put(E, ", ");
            put_op(E, a.o);
            put(E, ", ");
            num_literal(E->out, cb);
            put(E, ", ");
            put_op(E, b.o);
        }
        put(E, ", ");
        put_op(E, d);
        put(E, ");\n");
        for (int i = 2; i < v->nin - (lp != NULL); i++) {
            blk_val dv = blk_val_of(d), *ops_i[] = {&dv, &in[i]};
            blk_typed(E, B, ops_i, 2, &d, 0);
            blk_op o = i == v->nin - 1 ? blk_last_out(B, top, target, d) : d;
            if (in[i].s >= 0) {
                put(E, "%*stx_p_scale_add(tx_bn, 1.0, ", ind, "");
                put_op(E, d);
                put(E, ", ");
                num_literal(E->out, v->coef_in[i]);
                put(E, " * tx_s%d, ", in[i].s);
            } else {
                put(E, "%*stx_p_axpby(tx_bn, 1.0, ", ind, "");
                put_op(E, d);
                put(E, ", ");
                num_literal(E->out, v->coef_in[i]);
                put(E, ", ");
                put_op(E, in[i].o);
                put(E, ", ");
            }
            put_op(E, o);
            put(E, ");\n");
            d = o;
        }
        if (lp) {
            blk_val x = blk_eval_(E, B, lp->in[0]), y = blk_eval_(E, B, lp->in[1]), dv = blk_val_of(d);
            blk_val *ops_p[] = {&x, &y, &dv};
            blk_typed(E, B, ops_p, 3, &d, 0);
            blk_op o = blk_last_out(B, top, target, d);
            put(E, "%*stx_p_mul_add(tx_bn, ", ind, "");
            put_op(E, x.o);
            put(E, ", ");
            put_op(E, y.o);
            put(E, ", ");
            put_term_args(E, blk_val_of(d), 1.0);
            put(E, ", ");
            put_op(E, o);
            put(E, ");\n");
            d = o;
        }
        break;
    }
    case OP_CONTRACT: { /* an elementwise product */
        int first = 1, scaled = 0;
        /* by a number: a product multiplies by its reciprocal (tx_p_divr),
           an f32 one by the reciprocal rounded to float (tx_p_divrf, the
           f32 path's bits) */
        const char *divs = v->dt == DT_F64 ? "r" : v->dt == DT_F32 ? "rf" : "s";
        if (v->coef_in[0] < 0 || v->nin < 2 || (in[0].s >= 0 && in[1].s >= 0))
            in[0] = blk_val_of(blk_spread(E, B, in[0]));
        /* more than one call: a third factor, a scale after two, or a
           second factor after a reciprocal */
        int multi = v->nin > 2 || (v->nin == 2 && (v->coef != 1 || v->coef_in[0] < 0));
        /* the first call's operands: a reciprocal 1 / x reads x alone */
        blk_val *ops[] = {&in[0], v->nin > 1 && (in[0].s >= 0 || v->coef_in[0] > 0) ? &in[1] : NULL};
        if (in[0].s >= 0) { /* c * y, c / y */
            const char *f = blk_call(E, B, ops, 2, 1, real_dt(v->dt), multi, top, target, &d);
            put(E, "%*s", ind, "");
            if (v->coef_in[1] < 0)
                put(E, "tx_p_recip%s(tx_bn, tx_s%d, ", f, in[0].s);
            else
                put(E, "tx_p_muls%s(tx_bn, ", f);
            put_op(E, in[1].o);
            if (v->coef_in[1] >= 0)
                put(E, ", tx_s%d", in[0].s);
            first = 2;
        } else {
            const char *f = blk_call(E, B, ops, 2, 0, real_dt(v->dt), multi, top, target, &d);
            put(E, "%*s", ind, "");
            if (v->coef_in[0] < 0) { /* c / x, numpy's c / x (not (1 / x) * c) when it is all */
                put(E, "tx_p_recip%s(tx_bn, ", f);
                num_literal(E->out, v->nin == 1 ? v->coef : 1.0);
                put(E, ", ");
                put_op(E, in[0].o);
                scaled = v->nin == 1;
            } else if (v->nin >= 2) {
                int sc = in[1].s >= 0;
                put(E, "tx_p_%s%s%s(tx_bn, ", v->coef_in[1] < 0 ? "div" : "mul",
                    !sc ? "" : v->coef_in[1] < 0 ? divs : "s", f);
                put_op(E, in[0].o);
                if (sc)
                    put(E, ", tx_s%d", in[1].s);
                else {
                    put(E, ", ");
                    put_op(E, in[1].o);
                }
                first = 2;
            } else { /* c * x: one product (x + 0 would lose the sign of a zero) */
                put(E, "tx_p_muls%s(tx_bn, ", f);
                put_op(E, in[0].o);
                put(E, ", ");
                num_literal(E->out, v->coef);
                scaled = 1;
            }
        }
        put(E, ", ");
        put_op(E, d);
        put(E, ");\n");
        const int rescale = v->coef != 1 && !scaled;
        for (int i = first; i < v->nin; i++) {
            int sc = in[i].s >= 0;
            blk_val dv = blk_val_of(d), *ops_i[] = {&dv, &in[i]};
            blk_typed(E, B, ops_i, 2, &d, 0);
            blk_op o = i == v->nin - 1 && !rescale ? blk_last_out(B, top, target, d) : d;
            put(E, "%*stx_p_%s%s(tx_bn, ", ind, "", v->coef_in[i] < 0 ? "div" : "mul",
                !sc ? "" : v->coef_in[i] < 0 ? divs : "s");
            put_op(E, d);
            if (sc)
                put(E, ", tx_s%d, ", in[i].s);
            else {
                put(E, ", ");
                put_op(E, in[i].o);
                put(E, ", ");
            }
            put_op(E, o);
            put(E, ");\n");
            d = o;
        }
        if (rescale) {
            blk_op o = blk_last_out(B, top, target, d);
            put(E, "%*stx_p_muls(tx_bn, ", ind, "");
            put_op(E, d);
            put(E, ", ");
            num_literal(E->out, v->coef);
            put(E, ", ");
            put_op(E, o);
            put(E, ");\n");
            d = o;
        }
        break;
    }
    case OP_MAP: {
        if ((v->fn == MAP_MAX || v->fn == MAP_MIN) && v->nin == 2 && (in[0].s >= 0 || in[1].s >= 0)) {
            /* with a number: tx_p_maxs, tx_p_mins, the number not spread */
            int cfirst = in[1].s < 0;
            blk_val xv = blk_val_of(blk_spread(E, B, cfirst ? in[1] : in[0])), *ops[] = {&xv};
            blk_call(E, B, ops, 1, 0, 0, 0, top, target, &d);
            put(E, "%*stx_p_%ss(tx_bn, ", ind, "", v->fn == MAP_MAX ? "max" : "min");
            put_op(E, xv.o);
            put(E, ", tx_s%d, %d, ", cfirst ? in[0].s : in[1].s, cfirst);
            put_op(E, d);
            put(E, ");\n");
            break;
        }
        if (v->fn >= MAP_LT && v->fn <= MAP_NE && v->nin == 2 && (in[0].s >= 0 || in[1].s >= 0)) {
            /* against a number: tx_p_cmps, c OP x as x OP' c (OP' mirrored) */
            static const int mirror[] = {2, 3, 0, 1, 4, 5};
            int cfirst = in[1].s < 0, op = (int)(v->fn - MAP_LT);
            blk_val xv = blk_val_of(blk_spread(E, B, cfirst ? in[1] : in[0])), *ops[] = {&xv};
            blk_call(E, B, ops, 1, 0, 0, 0, top, target, &d);
            put(E, "%*stx_p_cmps(tx_bn, %d, ", ind, "", cfirst ? mirror[op] : op);
            put_op(E, xv.o);
            put(E, ", tx_s%d, ", cfirst ? in[0].s : in[1].s);
            put_op(E, d);
            put(E, ");\n");
            break;
        }
        if (v->fn == MAP_WHERE && v->nin == 3 && (in[1].s >= 0 || in[2].s >= 0)) {
            /* a branch a number: tx_p_where_s, the number not spread */
            blk_val cv = blk_val_of(blk_spread(E, B, in[0])), *ops[] = {&cv, &in[1], &in[2]};
            blk_call(E, B, ops, 3, 0, 0, 0, top, target, &d);
            put(E, "%*stx_p_where_s(tx_bn, ", ind, "");
            put_op(E, cv.o);
            for (int k = 1; k <= 2; k++) {
                if (in[k].s >= 0)
                    put(E, ", (const double *)0, tx_s%d", in[k].s);
                else {
                    put(E, ", ");
                    put_op(E, in[k].o);
                    put(E, ", 0.0");
                }
            }
            put(E, ", ");
            put_op(E, d);
            put(E, ");\n");
            break;
        }
        blk_val xv = blk_val_of(blk_spread(E, B, in[0])), yv = {{-1, -1, 0}, -1}, zv = yv;
        if (v->nin >= 2)
            yv = blk_val_of(blk_spread(E, B, in[1]));
        if (v->nin == 3)
            zv = blk_val_of(blk_spread(E, B, in[2]));
        blk_val *ops[] = {&xv, &yv, &zv};
        blk_call(E, B, ops, 3, 0, 0, 0, top, target, &d);
        blk_op x = xv.o, y = yv.o, z = zv.o;
        put(E, "%*s", ind, "");
        if (v->fn == MAP_WHERE) { /* both branches, for every element: no traps, the same values */
            put(E, "tx_p_where(tx_bn, ");
            put_op(E, x);
            put(E, ", ");
            put_op(E, y);
            put(E, ", ");
            put_op(E, z);
        } else if (v->fn >= MAP_LT && v->fn <= MAP_NE) {
            put(E, "tx_p_cmp(tx_bn, %d, ", (int)(v->fn - MAP_LT));
            put_op(E, x);
            put(E, ", ");
            put_op(E, y);
        } else if (v->fn == MAP_POW) {
            put(E, "tx_p_pow(tx_bn, ");
            put_op(E, x);
            put(E, ", ");
            num_literal(E->out, v->fn_arg);
        } else if (v->nin == 2) {
            put(E, "tx_p_%s(tx_bn, ", v->fn == MAP_MAX ? "max" : "min");
            put_op(E, x);
            put(E, ", ");
            put_op(E, y);
        } else {
            put(E, "tx_p_map(tx_bn, %d, ", (int)v->fn);
            put_op(E, x);
        }
        put(E, ", ");
        put_op(E, d);
        put(E, ");\n");
        break;
    }
    default:
        TX_ASSERT(!"not an elementwise value");
        d = r;
    }
    B->nbuf = d.buf >= 0 ? d.buf + 1 : base;
    return blk_val_of(d);
}

/* What summand X squares: X, or when X is an f64 quotient by a number
   (a variance's (x - mean)^2 / n; the number X->in[1]) its numerator,
   *DIV then 1. */
static const g_value *summed_square(const g_value *x, int *div)
{
    *div = x->inlined && x->op == OP_CONTRACT && real_dt(x->dt) && x->nin == 2 && x->coef == 1 &&
           x->coef_in[0] == 1 && x->coef_in[1] == -1 && x->in[1]->rank == 0 && !x->in[1]->inlined &&
           (x->in[1]->op == OP_CONST || x->in[1]->dt == DT_F64 || x->in[1]->dt == DT_F32); /* a number, not a block */
    return *div ? x->in[0] : x;
}

/* A sum over the block of X, the square of a real sum of two terms, or
   such a square divided by a number (a variance's (x - mean)^2 / n, a mean
   square error's): one tx_p_red_sq_aff into tx_acc (the bits of
   tx_p_sq_aff, tx_p_divr or tx_p_divrf, and tx_p_red_sum). 0 if X is not
   of that shape (nothing emitted). */
static int blk_sum_of_squares(emitter *E, blk_state *B, const g_value *x)
{
    int div;
    const g_value *sq = summed_square(x, &div);
    if (div)
        div = number_division(x->dt);
    /* the square of one block (an L2 norm's X^2): as 1*x + 0, which is x
       (-0 + 0 is +0, whose square is -0's), the prim's plain-square path */
    int plain = sq->inlined && sq->op == OP_MAP && sq->fn == MAP_POW && sq->fn_arg == 2 && sq->nin == 1 &&
                sq->dt == DT_F64 && !is_sum_of_two(sq->in[0]) && !blk_is_number(E, B, sq->in[0]);
    if (!plain && (!sq->inlined || sq->op != OP_MAP || !product_of_sum(sq)))
        return 0;
    blk_val a, b, dv = {{-1, -1, 0}, -1};
    double ca, cb;
    if (div)
        dv = blk_eval_(E, B, x->in[1]);
    if (div && dv.s < 0)
        TX_ASSERT(!"a number of rank 0 is not a number");
    if (plain) {
        blk_op o = blk_eval(E, B, sq->in[0]);
        put(E, "%*stx_acc = tx_p_red_sq_aff(tx_bn, 1.0, ", 4 * B->depth, "");
        put_op(E, o);
        put(E, ", 0.0, 0, 0.0");
        if (div)
            put(E, ", %d, tx_s%d, tx_acc);\n", div, dv.s);
        else
            put(E, ", 0, 0.0, tx_acc);\n");
        return 1;
    }
    blk_sum_terms(E, B, sq->in[0], &a, &ca, &b, &cb);
    blk_val *ops[] = {&a, &b};
    const char *f = blk_typed(E, B, ops, 2, NULL, 1);
    put(E, "%*stx_acc = tx_p_red_sq_aff%s(tx_bn, ", 4 * B->depth, "", f);
    put_sum_args(E, a, ca, b, cb);
    if (div)
        put(E, ", %d, tx_s%d, tx_acc);\n", div, dv.s);
    else
        put(E, ", 0, 0.0, tx_acc);\n");
    return 1;
}

/* Emits code leaving the block of V's values in a scratch buffer (or a
   direct pointer for a unit-stride f64 leaf, or the store's target) and
   returns which. Buffers
   are a stack: those above the result are free again afterwards. */
blk_op blk_eval(emitter *E, blk_state *B, const g_value *v)
{
    blk_val r = blk_val_of(blk_spread(E, B, blk_eval_(E, B, v)));
    return r.o.f32 == 1 ? blk_double(E, B, r).o : r.o; /* an f32 tensor as doubles; the f32 target as it is */
}

int blk_accumulate_product(emitter *E, blk_state *B, const g_value *x, const char *row)
{
    if (x->op != OP_CONTRACT || !x->inlined || x->nin != 2 || x->coef != 1 || x->coef_in[0] < 0 ||
        x->coef_in[1] < 0 || dt_complex(x->dt))
        return 0;
    blk_val a = blk_eval_(E, B, x->in[0]), b = blk_eval_(E, B, x->in[1]), *ops[] = {&a, &b};
    if (a.s >= 0 && b.s >= 0)
        a = blk_val_of(blk_spread(E, B, a));
    blk_typed(E, B, ops, 2, NULL, 0);
    put(E, "%*s", 4 * B->depth, "");
    if (a.s >= 0 || b.s >= 0) { /* a number times a block: row = c * block + 1 * row */
        blk_val c = a.s >= 0 ? a : b, o = a.s >= 0 ? b : a;
        put(E, "tx_p_axpby(tx_bn, tx_s%d, ", c.s);
        put_op(E, o.o);
        put(E, ", 1.0, &%s, &%s);\n", row, row);
    } else {
        put(E, "tx_p_mul_acc(tx_bn, ");
        put_op(E, a.o);
        put(E, ", ");
        put_op(E, b.o);
        put(E, ", 1.0, &%s);\n", row);
    }
    return 1;
}

static void known_strides(emitter *E, const g_value *x, int a, int b, int64_t *ka, int64_t *kb)
{
    *ka = emit_known_stride(E, x, a);
    *kb = emit_known_stride(E, x, b);
}

int blk_rows_of(emitter *E, const g_value *x, int label, int outer, dtype dt)
{
    if (x->inlined || x->dt != dt || x->op == OP_CONST)
        return 0;
    int64_t known, kouter;
    known_strides(E, x, label, outer, &known, &kouter);
    return known == 1 && kouter != 0;
}

int blk_square_rows_of(emitter *E, const g_value *x, int label, int outer, const g_value **a, double *ca,
                       const g_value **b, double *cb)
{
    if (!x->inlined || x->op != OP_MAP || x->fn != MAP_POW || x->fn_arg != 2 || x->nin != 1 || x->dt != DT_F64 ||
        !is_sum_of_two(x->in[0]) || x->in[0]->dt != DT_F64)
        return 0;
    const g_value *s = x->in[0];
    for (int i = 0; i < 2; i++) {
        const g_value *w = s->in[i];
        if (w->inlined || w->dt != DT_F64 || w->op == OP_CONST || emit_known_stride(E, w, label) != 1)
            return 0;
    }
    if (emit_known_stride(E, s->in[0], outer) == 0 && emit_known_stride(E, s->in[1], outer) == 0)
        return 0; /* neither steps from row to row: one number per row */
    *a = s->in[0];
    *b = s->in[1];
    *ca = s->coef_in[0];
    *cb = s->coef_in[1];
    return 1;
}

int blk_product_rows_of(emitter *E, const g_value *x, int label, int outer)
{
    return x->op == OP_CONTRACT && x->inlined && x->nin == 2 && x->coef == 1 && x->coef_in[0] > 0 &&
           x->coef_in[1] > 0 && !dt_complex(x->dt) && blk_rows_of(E, x->in[0], label, outer, DT_F64) &&
           blk_rows_of(E, x->in[1], label, outer, DT_F64);
}

void blk_accumulate_rows(emitter *E, const blk_state *B, const g_value *x, reduce_op red, int outer, tx_extent ext,
                         const char *row)
{
    int ind = 4 * B->depth;
    int64_t known;
    const char *op = red == RED_MAX ? "max" : red == RED_MIN ? "min" : "add";
    TX_ASSERT(red != RED_MUL && (red == RED_ADD || !x->inlined));
    put(E, "%*s{\n%*sconst int64_t ", ind, "", ind + 4, "");
    put_label(E, outer);
    put(E, " = 0;\n%*stx_p_%s%s_rows(tx_bn, ", ind + 4, "", x->inlined ? "mul_acc" : op,
        x->inlined ? "" : x->dt == DT_F32 ? "f" : "");
    put_extent(E, ext);
    for (int i = 0; i < (x->inlined ? 2 : 1); i++) { /* the tensor, or the product's two */
        const g_value *w = x->inlined ? x->in[i] : x;
        put(E, ", &");
        put_access(E, w);
        put(E, ", ");
        put_label_stride(E, w, outer, &known);
    }
    put(E, ", &%s);\n%*s}\n", row, ind, "");
}

/* ---- the f32 path ----
   An f32 value (tx(5) ELEMENT TYPES) is computed one operation at a time
   in float blocks (tx_pf_*), each result rounded to float, at twice the
   lanes of the double blocks and without conversions: a store of an f32
   value into an f32 tensor runs here whole (f32_store), and the double
   blocks take an f32 operation's value from here (blk_from_f32). The
   steps are put_elementwise's (emit_expr.c): a sum term after term, a
   product factor after factor with its constant last, an integer power
   by repeated products. What has no float form here (a comparison, a
   where, a power that is not an integer) is computed by the double
   blocks and rounded, which is exact for a selection or a comparison of
   floats, and one rounding of the double result for a power. */

/* An operand in the f32 path: one number tx_fN (S), a pointer tx_qN
   into a tensor (Q), or scratch block BUF as floats, which an operation
   on it may overwrite with its result unless KEEP (an operand read
   again after that operation). */
typedef struct {
    int s, q, buf, keep;
} f32_val;

static const f32_val f32_none = {-1, -1, -1, 0};

static void put_f32_ptr(emitter *E, f32_val o)
{
    if (o.s >= 0)
        put(E, "&tx_f%d", o.s);
    else if (o.q >= 0)
        put(E, "tx_q%d", o.q);
    else {
        put(E, "(float *)");
        put_scratch(E, o.buf);
    }
}

/* O as a tx_pf_bin operand: its pointer and increment. */
static void put_f32(emitter *E, f32_val o)
{
    put_f32_ptr(E, o);
    put(E, o.s >= 0 ? ", 0" : ", 1");
}

/* The destination block of an operation on A (and B): A's or B's scratch
   block, else a fresh one. */
static void put_f32_dest(emitter *E, blk_state *B, f32_val a, f32_val b, f32_val *d)
{
    d->s = d->q = -1;
    if (E->blk_dest) { /* the top operation: the store's target */
        d->buf = -1;
        d->q = E->blk_dest - 1;
        E->blk_dest = 0;
        put(E, "tx_q%d", d->q);
        return;
    }
    d->keep = 0;
    d->buf = a.buf >= 0 && a.s < 0 && a.q < 0 && !a.keep   ? a.buf
             : b.buf >= 0 && b.s < 0 && b.q < 0 && !b.keep ? b.buf
                                                            : B->nbuf++;
    put(E, "(float *)");
    put_scratch(E, d->buf);
}

/* The end of a call on A and B: its destination *R (the store's target
   when TOP, as put_f32_dest), then ");" */
static void put_f32_call_end(emitter *E, blk_state *B, f32_val a, f32_val b, int top, f32_val *r)
{
    E->blk_dest = top;
    put_f32_dest(E, B, a, b, r);
    put(E, ");\n");
}

/* A new number of the f32 path: "const float tx_fN = " put, the caller
   puts its value and ";\n". */
static f32_val f32_new_number(emitter *E, blk_state *B)
{
    f32_val r = {B->nptr++, -1, -1, 0};
    put(E, "%*sconst float tx_f%d = ", 4 * B->depth, "", r.s);
    return r;
}

/* The constant C as an f32 operation takes it: a number rounded to float. */
static f32_val f32_constant(emitter *E, blk_state *B, double c)
{
    f32_val r = f32_new_number(E, B);
    put(E, "(float)");
    num_literal(E->out, c);
    put(E, ";\n");
    return r;
}

/* A OP B, OP tx_pf_bin's (0 + 1 - 2 * 3 / 4 max 5 min), into *R: a
   tx_pf_bin call, or a number when both are (the float operation through
   double: the same float). TOP as put_f32_call_end. */
static void f32_bin(emitter *E, blk_state *B, int op, f32_val a, f32_val b, int top, f32_val *r)
{
    if (a.s >= 0 && b.s >= 0) {
        *r = f32_new_number(E, B);
        if (op <= 3)
            put(E, "(float)((double)tx_f%d %c (double)tx_f%d);\n", a.s, "+-*/"[op], b.s);
        else
            put(E, "tx_f%d %c tx_f%d || tx_f%d != tx_f%d ? tx_f%d : tx_f%d;\n", a.s, op == 4 ? '>' : '<', b.s, a.s,
                a.s, a.s, b.s);
        return;
    }
    put(E, "%*stx_pf_bin(tx_bn, %d, ", 4 * B->depth, "", op);
    put_f32(E, a);
    put(E, ", ");
    put_f32(E, b);
    put(E, ", ");
    put_f32_call_end(E, B, a, b, top, r);
}

/* FN (exp, log, sqrt, abs, sin, cos, tanh) of A into *R: tx_pf_map, or
   for a number the double function rounded to float. */
static void f32_fn(emitter *E, blk_state *B, map_fn fn, f32_val a, int top, f32_val *r)
{
    if (a.s >= 0) {
        static const char *name[] = {"?", "?", "exp", "log", "sqrt", "fabs", "sin", "cos", "tanh"};
        TX_ASSERT(fn >= MAP_EXP && fn <= MAP_TANH);
        *r = f32_new_number(E, B);
        put(E, "(float)%s((double)tx_f%d);\n", name[fn], a.s);
        return;
    }
    put(E, "%*stx_pf_map(tx_bn, %d, ", 4 * B->depth, "", (int)fn);
    put_f32_ptr(E, a);
    put(E, ", ");
    put_f32_call_end(E, B, a, f32_none, top, r);
}

static int f32_eval(emitter *E, blk_state *B, const g_value *v, f32_val *r);

/* For W one +, - or * of two values, or a value times a constant: the
   operator (tx_pf_bin's 0, 1, 2) and the constant (*C, else 0); -1 for
   any other W. */
static int f32_single_op(const g_value *w, double *c)
{
    *c = 0;
    if (!w->inlined || !emit_f32_rounds(w))
        return -1;
    if (w->op == OP_ADD && w->nin == 2 && w->coef_in[0] == 1 && (w->coef_in[1] == 1 || w->coef_in[1] == -1))
        return w->coef_in[1] == 1 ? 0 : 1;
    if (w->op == OP_ADD && w->nin == 1 && w->coef_in[0] != 1) {
        *c = w->coef_in[0];
        return 2;
    }
    if (w->op == OP_CONTRACT && w->nin == 2 && w->coef == 1 && w->coef_in[0] == 1 && w->coef_in[1] == 1)
        return 2;
    if (w->op == OP_CONTRACT && w->nin == 1 && w->coef_in[0] == 1 && w->coef != 1) {
        *c = w->coef;
        return 2;
    }
    return -1;
}

/* F(x OP y) for V exp, log, sin, cos or tanh of one +, - or * (or a
   scaling) whose operands are not both numbers, in one tx_pf_map_bin
   (the bits of tx_pf_bin, then tx_pf_map); c - y, which has no such form,
   as those two. 0 if V is not of that shape (nothing emitted). */
static int f32_map_of_op(emitter *E, blk_state *B, const g_value *v, int top, f32_val *r)
{
    double c;
    const g_value *w = v->in[0];
    int op = map_vector_fn(v->fn) ? f32_single_op(w, &c) : -1;
    if (op < 0)
        return 0;
    f32_val a, b, t;
    f32_eval(E, B, w->in[0], &a);
    if (c != 0)
        b = f32_constant(E, B, c);
    else
        f32_eval(E, B, w->in[1], &b);
    if (a.s >= 0 && b.s >= 0) { /* a number: the operation, then the function */
        f32_bin(E, B, op, a, b, 0, &t);
        f32_fn(E, B, v->fn, t, top, r);
        return 1;
    }
    if (a.s >= 0 && op != 1) { /* c + y, c * y: the block first */
        t = a, a = b, b = t;
    }
    if (a.s >= 0) { /* c - y */
        f32_bin(E, B, op, a, b, 0, &t);
        f32_fn(E, B, v->fn, t, top, r);
        return 1;
    }
    put(E, "%*stx_pf_map_bin(tx_bn, %d, %d, ", 4 * B->depth, "", (int)v->fn, op);
    put_f32_ptr(E, a);
    if (b.s >= 0)
        put(E, ", (const float *)0, tx_f%d, ", b.s);
    else {
        put(E, ", ");
        put_f32_ptr(E, b);
        put(E, ", 0.0f, ");
    }
    put_f32_call_end(E, B, a, b, top, r);
    return 1;
}

/* V computed by the double blocks, rounded to float into *R: a value
   the f32 path has no form for (a comparison, a where, a non-integer
   power), exact when it is a selection of floats. */
static void f32_from_double(emitter *E, blk_state *B, const g_value *v, f32_val *r)
{
    blk_val d = blk_eval_(E, B, v);
    if (d.s >= 0) {
        *r = f32_new_number(E, B);
        put(E, "(float)tx_s%d;\n", d.s);
        return;
    }
    blk_op o = d.o.f32 == 1 ? blk_double(E, B, d).o : d.o;
    r->s = r->q = -1;
    r->buf = B->nbuf++;
    put(E, "%*stx_p_store_f32(tx_bn, ", 4 * B->depth, "");
    put_op(E, o);
    put(E, ", (float *)");
    put_scratch(E, r->buf);
    put(E, ", 1, 0);\n");
}

/* X^P for an f32 value X (A): x*x*... for an integer P in [-8, 8] (then
   1 / that when negative), 1 for 0, else pow in double rounded once (V
   the power). */
static void f32_pow(emitter *E, blk_state *B, const g_value *v, f32_val a, int top, f32_val *r)
{
    double p = v->fn_arg;
    if (p == 0) {
        *r = f32_constant(E, B, 1.0);
        return;
    }
    if (!emit_pow_by_products(p)) {
        if (a.s >= 0) {
            *r = f32_new_number(E, B);
            put(E, "(float)pow((double)tx_f%d, ", a.s);
            num_literal(E->out, p);
            put(E, ");\n");
            return;
        }
        int dbuf = B->nbuf++;
        put(E, "%*stx_p_load_f32(tx_bn, ", 4 * B->depth, "");
        put_f32_ptr(E, a);
        put(E, ", 1, ");
        put_scratch(E, dbuf);
        put(E, ");\n%*stx_p_pow(tx_bn, ", 4 * B->depth, "");
        put_scratch(E, dbuf);
        put(E, ", ");
        num_literal(E->out, p);
        put(E, ", ");
        put_scratch(E, dbuf);
        put(E, ");\n%*stx_p_store_f32(tx_bn, ", 4 * B->depth, "");
        put_scratch(E, dbuf);
        put(E, ", ");
        E->blk_dest = top;
        put_f32_dest(E, B, f32_none, f32_none, r);
        put(E, ", 1, 0);\n");
        return;
    }
    int n = p < 0 ? -(int)p : (int)p;
    f32_val t = a;
    a.keep = 1; /* read by every product */
    for (int i = 1; i < n; i++)
        f32_bin(E, B, 2, i == 1 ? a : t, a, i == n - 1 && p > 0 ? top : 0, &t);
    if (p < 0) {
        f32_val one = f32_constant(E, B, 1.0);
        f32_bin(E, B, 3, one, t, top, &t);
    }
    *r = t;
}

/* The sum of the N values X[i] times C[i], term after term from the
   first, into *R: c*x rounded before it is added (-x exact), each sum
   rounded. TOP as put_f32_call_end, for the last operation. */
static void f32_add_vals(emitter *E, blk_state *B, const f32_val *x, const double *c, int n, int top, f32_val *r)
{
    f32_val t = x[0], a;
    for (int i = 0; i < n; i++) {
        double m = i && c[i] < 0 ? -c[i] : c[i];
        int last = i == n - 1;
        a = x[i];
        if (m != 1) /* c*x, and -x as x * -1 (exact, the sign of a zero included) */
            f32_bin(E, B, 2, a, f32_constant(E, B, m), last && i == 0 ? top : 0, &a);
        if (i == 0)
            t = a;
        else
            f32_bin(E, B, c[i] < 0 ? 1 : 0, t, a, last ? top : 0, &t);
    }
    *r = t;
}

/* The product of the N values X[i] to the powers P[i] (1 or -1) times
   COEF, factor after factor from the first, the constant last (c / x
   first when that is all), each step rounded, into *R. */
static void f32_mul_vals(emitter *E, blk_state *B, const f32_val *x, const double *p, int n, double coef, int top,
                         f32_val *r)
{
    int scaled = p[0] < 0 && n == 1, last_c = coef != 1 && !scaled;
    f32_val t = x[0];
    if (p[0] < 0) /* c / x */
        f32_bin(E, B, 3, f32_constant(E, B, scaled ? coef : 1.0), t, n == 1 ? top : 0, &t);
    for (int i = 1; i < n; i++)
        f32_bin(E, B, p[i] < 0 ? 3 : 2, t, x[i], i == n - 1 && !last_c ? top : 0, &t);
    if (last_c)
        f32_bin(E, B, 2, t, f32_constant(E, B, coef), top, &t);
    *r = t;
}

/* Whether W is an inlined f32 sum of two terms. */
static int f32_sum_of_two(const g_value *w)
{
    return w->inlined && w->op == OP_ADD && w->nin == 2 && w->dt == DT_F32;
}

/* Whether W is an inlined f32 product of two factors, no scale, the
   second to the power P2 (1 or -1). */
static int f32_product_of_two(const g_value *w, double p2)
{
    return w->inlined && w->op == OP_CONTRACT && ls_empty(w->summed) && w->dt == DT_F32 && w->nin == 2 &&
           w->coef == 1 && w->coef_in[0] == 1 && w->coef_in[1] == p2;
}

/* The sum of two terms W evaluated: its terms into *A, *B (times *CA,
   *CB), a block first (x + c and c + x are the same float). 0 if both
   are numbers. */
static int f32_sum_terms(emitter *E, blk_state *Bs, const g_value *w, f32_val *a, double *ca, f32_val *b, double *cb)
{
    f32_eval(E, Bs, w->in[0], a);
    f32_eval(E, Bs, w->in[1], b);
    *ca = w->coef_in[0];
    *cb = w->coef_in[1];
    if (a->s >= 0) {
        f32_val t = *a;
        double tc = *ca;
        *a = *b, *ca = *cb, *b = t, *cb = tc;
    }
    return a->s < 0;
}

/* The number term C of an f32 form's sum when B is a number: B times CB
   rounded to float (f32_add_vals's term), else B. */
static f32_val f32_sum_number(emitter *E, blk_state *Bs, f32_val b, double cb)
{
    f32_val c = b;
    if (b.s >= 0 && cb != 1)
        f32_bin(E, Bs, 2, b, f32_constant(E, Bs, cb), 0, &c);
    return c;
}

/* The arguments "a, x, b, z, c" of an f32 form's sum a*x + b*z (A and
   B, times CA and CB), or a*x + c with z NULL when B is a number (C its
   f32_sum_number). */
static void put_f32_sum_args(emitter *E, f32_val a, double ca, f32_val b, double cb, f32_val c)
{
    num_literal(E->out, (double)(float)ca);
    put(E, ", ");
    put_f32_ptr(E, a);
    if (b.s >= 0)
        put(E, ", 0.0f, (const float *)0, tx_f%d", c.s);
    else {
        put(E, ", ");
        num_literal(E->out, (double)(float)cb);
        put(E, ", ");
        put_f32_ptr(E, b);
        put(E, ", 0.0f");
    }
}

/* V, k / (a*x + b*z) or y / (a*x + b*z) (k the product's constant, y a
   block or a number), in one tx_p_div_aff_f32 (the sum, then the quotient,
   each rounded to float: f32_add_vals's and tx_pf_bin's floats), into *R;
   when both terms of the sum are numbers, as those steps. */
static void f32_quotient_of_sum(emitter *E, blk_state *B, const g_value *v, int top, f32_val *r)
{
    f32_val y = f32_none, a, b, t, c;
    double ca, cb;
    if (v->nin == 2)
        f32_eval(E, B, v->in[0], &y);
    else
        y = f32_constant(E, B, v->coef);
    if (!f32_sum_terms(E, B, v->in[v->nin - 1], &a, &ca, &b, &cb)) {
        f32_val terms[2] = {a, b};
        double cs[2] = {ca, cb};
        f32_add_vals(E, B, terms, cs, 2, 0, &t);
        f32_bin(E, B, 3, y, t, top, r);
        return;
    }
    c = f32_sum_number(E, B, b, cb);
    put(E, "%*stx_p_div_aff_f32(tx_bn, ", 4 * B->depth, "");
    if (y.s >= 0)
        put(E, "(const float *)0, tx_f%d, ", y.s);
    else {
        put_f32_ptr(E, y);
        put(E, ", 0.0f, ");
    }
    put_f32_sum_args(E, a, ca, b, cb, c);
    put(E, ", ");
    put_f32_call_end(E, B, a, b.s < 0 ? b : y, top, r);
}

/* A value the f32 forms (tx_p_NAME_f32) compute in one pass, into *R:
   y*(a*x + b*z) [+ e*w] (y perhaps y/c), x*y + e*w, (a*x + b*z)^2,
   k/(a*x + b*z) and y/(a*x + b*z). The
   same floats as the steps of f32_add_vals and f32_mul_vals. 0 (nothing
   emitted) if V is of no such shape. */
static int f32_fused(emitter *E, blk_state *B, const g_value *v, int top, f32_val *r)
{
    const g_value *p = NULL, *w = NULL, *sum = NULL, *y = NULL;
    double e = 0;
    int first = 0;
    if (v->op == OP_CONTRACT && ls_empty(v->summed) && f32_sum_of_two(v->in[v->nin - 1]) &&
        ((v->nin == 1 && v->coef_in[0] < 0) ||
         (v->nin == 2 && v->coef == 1 && v->coef_in[0] == 1 && v->coef_in[1] == -1))) { /* k / t, y / t */
        f32_quotient_of_sum(E, B, v, top, r);
        return 1;
    }
    if (v->op == OP_ADD && v->nin == 2) { /* p + e*w */
        for (int i = 0; i < 2 && !p; i++)
            if (v->coef_in[i] == 1 && f32_product_of_two(v->in[i], 1)) {
                p = v->in[i];
                w = v->in[1 - i];
                e = v->coef_in[1 - i];
            }
    } else if (f32_product_of_two(v, 1) || (v->op == OP_MAP && v->fn == MAP_POW && v->fn_arg == 2 && v->inlined))
        p = v;
    if (!p)
        return 0;
    if (p->op == OP_MAP) {
        sum = f32_sum_of_two(p->in[0]) ? p->in[0] : NULL;
        if (!sum)
            return 0;
    } else if (f32_sum_of_two(p->in[1]) || f32_sum_of_two(p->in[0])) {
        int si = f32_sum_of_two(p->in[1]);
        sum = p->in[si];
        y = p->in[1 - si];
        first = si == 0;
    } else if (!w)
        return 0; /* x*y alone: one tx_pf_bin */
    /* evaluate: y (y / c), the sum's terms or the two factors, then w */
    f32_val yv = f32_none, dv = f32_none, a, b, wv = f32_none, x0, x1;
    double ca = 1, cb = 0;
    int div = 0, ok = 1;
    if (sum) {
        if (y) {
            div = f32_product_of_two(y, -1);
            if (div) {
                f32_eval(E, B, y->in[0], &yv);
                f32_eval(E, B, y->in[1], &dv);
                div = dv.s >= 0 && yv.s < 0 ? 2 : 0;
                if (!div) { /* not a block over a number: the quotient first */
                    f32_val q[2] = {yv, dv};
                    double pw[2] = {1, -1};
                    f32_mul_vals(E, B, q, pw, 2, 1, 0, &yv);
                }
            } else
                f32_eval(E, B, y, &yv);
            ok = yv.s < 0;
        }
        ok = f32_sum_terms(E, B, sum, &a, &ca, &b, &cb) && ok;
    } else {
        f32_eval(E, B, p->in[0], &x0);
        f32_eval(E, B, p->in[1], &x1);
        ok = x0.s < 0 && x1.s < 0;
    }
    if (w)
        f32_eval(E, B, w, &wv);
    if (!ok) { /* a number where a block is needed: the steps one by one */
        f32_val t;
        if (sum) {
            f32_val terms[2] = {a, b};
            double cs[2] = {ca, cb};
            f32_add_vals(E, B, terms, cs, 2, 0, &t);
            if (p->op == OP_MAP)
                f32_bin(E, B, 2, t, t, w ? 0 : top, &t);
            else {
                f32_val dq = yv;
                if (div)
                    f32_bin(E, B, 3, yv, dv, 0, &dq);
                f32_bin(E, B, 2, first ? t : dq, first ? dq : t, w ? 0 : top, &t);
            }
        } else
            f32_bin(E, B, 2, x0, x1, w ? 0 : top, &t);
        if (w) {
            f32_val tw[2] = {t, wv};
            double cw[2] = {1, e};
            f32_add_vals(E, B, tw, cw, 2, top, &t);
        }
        *r = t;
        return 1;
    }
    f32_val cval = sum ? f32_sum_number(E, B, b, cb) : b; /* a number term: c = b*y rounded */
    f32_val fval = wv; /* a number w: f = e*w rounded */
    if (w && wv.s >= 0 && e != 1)
        f32_bin(E, B, 2, wv, f32_constant(E, B, e), 0, &fval);
    int ind = 4 * B->depth;
    if (!sum)
        put(E, "%*stx_p_mul_add_f32(tx_bn, ", ind, "");
    else if (p->op == OP_MAP)
        put(E, "%*stx_p_sq_aff_f32(tx_bn, ", ind, "");
    else if (w)
        put(E, "%*stx_p_mul_aff_add_f32(tx_bn, %d, ", ind, "", first);
    else
        put(E, "%*stx_p_mul_aff_f32(tx_bn, %d, ", ind, "", first);
    if (!sum) {
        put_f32_ptr(E, x0);
        put(E, ", ");
        put_f32_ptr(E, x1);
    } else {
        if (p->op != OP_MAP) {
            put_f32_ptr(E, yv);
            if (w) {
                if (div)
                    put(E, ", 2, tx_f%d", dv.s);
                else
                    put(E, ", 0, 0.0f");
            }
            put(E, ", ");
        }
        put_f32_sum_args(E, a, ca, b, cb, cval);
    }
    if (w) {
        put(E, ", ");
        if (wv.s >= 0)
            put(E, "0.0f, (const float *)0, tx_f%d", fval.s);
        else {
            num_literal(E->out, (double)(float)e);
            put(E, ", ");
            put_f32_ptr(E, wv);
            put(E, ", 0.0f");
        }
    }
    put(E, ", ");
    put_f32_call_end(E, B, sum ? a : x0, sum ? (b.s < 0 ? b : yv) : x1, top, r);
    return 1;
}

/* Emits V's block (or number) in the f32 path into *R. Returns 1 (every
   value has a way here). */
static int f32_eval(emitter *E, blk_state *B, const g_value *v, f32_val *r)
{
    int ind = 4 * B->depth, top = E->blk_dest;
    *r = f32_none;
    E->blk_dest = 0; /* for the top operation only (put_f32_dest) */
    if (v->op == OP_CONST) {
        *r = f32_constant(E, B, v->coef);
        return 1;
    }
    if (!v->inlined && v->dt == DT_F32 && panel_of(E, v) >= 0) { /* a transposed operand's panel, in place */
        r->q = B->nptr++;
        put(E, "%*sconst float *tx_q%d = ", ind, "", r->q);
        put_panel_row(E, panel_of(E, v), DT_F32);
        put(E, ";\n");
        return 1;
    }
    if (!v->inlined && v->dt == DT_F32) {
        int64_t known;
        tx_buf stride = {0}, *out = E->out;
        E->out = &stride;
        put_label_stride(E, v, B->label, &known);
        E->out = out;
        if (known == 0) {
            r->s = B->nptr++;
            put(E, "%*sconst float tx_f%d = ", ind, "", r->s);
            put_access_raw(E, v);
            put(E, ";\n");
        } else if (known == 1) {
            r->q = B->nptr++;
            put(E, "%*sconst float *tx_q%d = &", ind, "", r->q);
            put_access_raw(E, v);
            put(E, ";\n");
        } else {
            r->buf = B->nbuf++;
            put(E, "%*stx_pf_load(tx_bn, &", ind, "");
            put_access_raw(E, v);
            put(E, ", %s, (float *)", stride.p ? stride.p : "0");
            put_scratch(E, r->buf);
            put(E, ");\n");
        }
        buf_free(&stride);
        return 1;
    }
    f32_val a, b;
    if (v->inlined && emit_f32_rounds(v) && f32_fused(E, B, v, top, r))
        return 1;
    if (v->inlined && v->op == OP_MAP && v->dt == DT_F32 &&
        (v->fn == MAP_MAX || v->fn == MAP_MIN || v->fn == MAP_ABS || v->fn == MAP_POW || v->fn == MAP_SQRT ||
         map_vector_fn(v->fn))) {
        if (f32_map_of_op(E, B, v, top, r))
            return 1;
        f32_eval(E, B, v->in[0], &a);
        if (v->fn == MAP_MAX || v->fn == MAP_MIN) {
            f32_eval(E, B, v->in[1], &b);
            f32_bin(E, B, v->fn == MAP_MAX ? 4 : 5, a, b, top, r);
        } else if (v->fn == MAP_POW)
            f32_pow(E, B, v, a, top, r);
        else
            f32_fn(E, B, v->fn, a, top, r);
        return 1;
    }
    if (!v->inlined || !emit_f32_rounds(v) || v->op == OP_MAP) { /* the double blocks' */
        f32_from_double(E, B, v, r);
        return 1;
    }
    f32_val in[64];
    int n = v->nin < 64 ? v->nin : 64;
    for (int i = 0; i < n; i++)
        f32_eval(E, B, v->in[i], &in[i]);
    if (v->op == OP_ADD)
        f32_add_vals(E, B, in, v->coef_in, n, top, r);
    else
        f32_mul_vals(E, B, in, v->coef_in, n, v->coef, top, r);
    return 1;
}

/* The f32 path's block loop body for store X, an f32 value, into the
   f32 element at &TARGET (text) with stride INC: 1 if taken (X varies
   along the block). DIRECT: the last operation may write the target. */
/* "T *tx_XN = &TARGET;": the pointer a store's top operation writes
   (X 'p' or 'q', T float when F32); where the store may stream (NT >= 0,
   put_stream_flag), the note that its block streams while tx_ntNT is set
   (prims.inc's tx_p_nt_note: the top operation's loops stream what they
   compute), which put_dest_end clears after the top operation */
static void put_dest_ptr(emitter *E, int depth, int f32, char x, int n, int nt, const char *target)
{
    put(E, "%*s%s *tx_%c%d = &%s;\n", 4 * depth, "", f32 ? "float" : "double", x, n, target);
    if (nt >= 0)
        put(E, "%*sif (tx_nt%d)\n%*stx_p_nt_note(tx_%c%d, tx_bn * %d);\n", 4 * depth, "", nt, 4 * depth + 4, "", x,
            n, f32 ? 4 : 8);
}

/* the end of put_dest_ptr's note */
static void put_dest_end(emitter *E, int depth, int nt)
{
    if (nt >= 0)
        put(E, "%*sif (tx_nt%d)\n%*stx_p_nt_note(0, 0);\n", 4 * depth, "", nt, 4 * depth + 4, "");
}

/* "if (tx_ntNT)" and the streaming copy of the block at SRC to TARGET,
   "else" the plain store the caller puts after it */
static void put_stream_if(emitter *E, int depth, int nt, int f32, const char *src, const char *target)
{
    put(E, "%*sif (tx_nt%d)\n%*s%s(tx_bn, %s, &%s);\n%*selse\n    ", 4 * depth, "", nt, 4 * depth + 4, "",
        f32 ? "tx_pf_stream" : "tx_p_stream_f64", src, target, 4 * depth, "");
}

static int f32_store(emitter *E, blk_state *B, const g_value *x, const char *target, int64_t inc, int direct, int nt)
{
    if (x->dt != DT_F32 || x->op == OP_CONST)
        return 0;
    tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
    blk_state b0 = *B;
    int q = direct ? B->nptr++ : -1;
    E->blk_dest = direct ? 1 + q : 0;
    f32_val r;
    f32_eval(E, B, x, &r);
    E->blk_dest = 0;
    const char *text = emit_capture_end(E, saved);
    if (r.s >= 0) {
        *B = b0;
        return 0;
    }
    emit_use(E, TXS_PRIM);
    direct = direct && r.q == q; /* the last operation wrote the target (or the block streamed) */
    if (direct)
        put_dest_ptr(E, B->depth, 1, 'q', q, nt, target);
    put(E, "%s", text);
    tx_buf src = {0}, *out = E->out;
    E->out = &src;
    put_f32_ptr(E, r);
    E->out = out;
    if (direct)
        put_dest_end(E, B->depth, nt);
    else if (nt >= 0)
        put_stream_if(E, B->depth, nt, 1, src.p, target);
    if (!direct)
        put(E, "%*stx_pf_store(tx_bn, %s, &%s, %lld);\n", 4 * B->depth, "", src.p, target, (long long)inc);
    buf_free(&src);
    return 1;
}

/* The block of V, an f32 operation (emit_f32_rounds), for the double
   blocks: computed in the f32 path (a number as a double tx_sN), a block
   read as floats by the typed forms, like an f32 tensor in place. */
static blk_val blk_from_f32(emitter *E, blk_state *B, const g_value *v)
{
    f32_val r;
    E->blk_dest = 0;
    f32_eval(E, B, v, &r);
    blk_val o = {{-1, -1, 0}, -1};
    if (r.s >= 0) {
        o.s = B->nptr++;
        put(E, "%*sconst double tx_s%d = (double)tx_f%d;\n", 4 * B->depth, "", o.s, r.s);
        return o;
    }
    o.o.ptr = B->nptr++;
    o.o.f32 = 1;
    put(E, "%*sconst float *tx_p%d = ", 4 * B->depth, "", o.o.ptr);
    put_f32_ptr(E, r);
    put(E, ";\n");
    blk_pend(E, B, o.o.ptr, B->nbuf); /* its scratch block, should a call need it as doubles */
    B->nbuf++;
    return o;
}

/* A sum over the block of X, the square of an f32 sum of two terms, or
   (X the f64 summand of an f32 contraction) such a square divided by a
   number: one tx_p_red_sq_aff_f32 into tx_acc (the sum and the square
   rounded to float, as f32_add_vals and tx_pf_bin round them, then
   tx_p_divr's division and tx_p_red_sum's lanes in double). 0 if X is not
   of that shape (nothing emitted). */
static int f32_sum_of_squares(emitter *E, blk_state *B, const g_value *x)
{
    int div;
    const g_value *sq = summed_square(x, &div);
    if (!(sq->inlined && sq->op == OP_MAP && sq->fn == MAP_POW && sq->fn_arg == 2 && sq->dt == DT_F32 &&
          f32_sum_of_two(sq->in[0])))
        return 0;
    blk_val dv = {{-1, -1, 0}, -1};
    if (div)
        dv = blk_eval_(E, B, x->in[1]);
    TX_ASSERT(!div || dv.s >= 0);
    f32_val a, b, c;
    double ca, cb;
    if (!f32_sum_terms(E, B, sq->in[0], &a, &ca, &b, &cb)) { /* two numbers: the first spread over a block */
        int buf = B->nbuf++;
        put(E, "%*stx_pf_load(tx_bn, &tx_f%d, 0, (float *)", 4 * B->depth, "", a.s);
        put_scratch(E, buf);
        put(E, ");\n");
        a.s = -1;
        a.buf = buf;
    }
    c = f32_sum_number(E, B, b, cb);
    put(E, "%*stx_acc = tx_p_red_sq_aff_f32(tx_bn, ", 4 * B->depth, "");
    put_f32_sum_args(E, a, ca, b, cb, c);
    if (div)
        put(E, ", 1, tx_s%d, tx_acc);\n", dv.s);
    else
        put(E, ", 0, 0.0, tx_acc);\n");
    return 1;
}

int blk_reads_var(const g_value *v, int var)
{
    if (var < 0)
        return 0;
    if ((v->op == OP_INPUT || v->op == OP_STORE) && v->var == var)
        return 1;
    if (v->op == OP_INDEX)
        return v->in[0]->var == var;
    for (int i = 0; v->inlined && i < v->nin; i++)
        if (blk_reads_var(v->in[i], var))
            return 1;
    return 0;
}

/* May the top operation of X's blocks write the store's target (stride 1,
   '=') directly, saving the scratch block's copy: X is an operation that
   writes its result (not a copy of its operand, not a leaf) and does not
   read the target (a multi-step operation writes it more than once)? */
static int blk_direct(const g_value *x, int target_var, int64_t inc, int op)
{
    return inc == 1 && op == 0 && x->inlined && !blk_reads_var(x, target_var) &&
           (x->op == OP_MAP || x->op == OP_ADD || x->op == OP_CONTRACT) && !blk_is_copy(x);
}

void put_block_loop_head(emitter *E, int label, tx_extent ext, int depth)
{
    put(E, "%*sfor (int64_t tx_i = 0; tx_i < ", 4 * depth, "");
    put_extent(E, ext);
    put(E, "; tx_i += TX_BLOCK) {\n");
    put_block_bounds(E, label, ext, depth + 1);
}

/* The end of open_rows_span's loop: EXT, or with RANGE the end of the
   kernel's range of blocks, in elements, within EXT. */
static void put_span_end(emitter *E, tx_extent ext, int range)
{
    if (range) {
        put(E, "(tx_hi * TX_BLOCK < ");
        put_extent(E, ext);
        put(E, " ? tx_hi * TX_BLOCK : ");
        put_extent(E, ext);
        put(E, ")");
    } else
        put_extent(E, ext);
}

int open_rows_span(emitter *E, int label, tx_extent ext, int depth, int range, int blocks)
{
    put(E, "%*sfor (int64_t tx_i = %s; tx_i < ", 4 * depth, "", range ? "tx_lo * TX_BLOCK" : "0");
    put_span_end(E, ext, range);
    put(E, "; tx_i += %d * TX_BLOCK) {\n%*sconst int64_t tx_bn = ", blocks, 4 * depth + 4, "");
    put_span_end(E, ext, range);
    put(E, " - tx_i < %d * TX_BLOCK ? ", blocks);
    put_span_end(E, ext, range);
    put(E, " - tx_i : %d * TX_BLOCK;\n%*sconst int64_t ", blocks, 4 * depth + 4, "");
    put_label(E, label);
    put(E, " = tx_i;\n");
    return depth + 1;
}

void put_block_bounds(emitter *E, int label, tx_extent ext, int depth)
{
    put(E, "%*sconst int64_t tx_bn = ", 4 * depth, "");
    put_extent(E, ext);
    put(E, " - tx_i < TX_BLOCK ? ");
    put_extent(E, ext);
    put(E, " - tx_i : TX_BLOCK;\n%*sconst int64_t ", 4 * depth, "");
    put_label(E, label);
    put(E, " = tx_i;\n");
}

/* The blocked loop nest computing elementwise value X at every index of
   LABELS/EXT (the last label blocked) into TARGET (a variable or a
   temporary, row-major over the labels' order given by its own modes),
   with OP 0 (=), 1 (+=) or 2 (-=). TARGET_VAR >= 0 writes variable
   TARGET_VAR, else temporary TEMP. */
/* Whether X, or a tensor X reads through the values fused into it (TOP:
   X itself is being computed), is read across its rows along the block's
   label L and along its rows (stride 1) along P: a transposed operand
   (A("i,j") + B("j,i") over j in blocks, i outside). */
static int reads_transposed(emitter *E, const g_value *x, int L, int P, int top)
{
    if (top || x->inlined) {
        for (int i = 0; i < x->nin; i++)
            if (reads_transposed(E, x->in[i], L, P, 0))
                return 1;
        return 0;
    }
    if (x->op == OP_CONST || dt_complex(x->dt))
        return 0;
    int64_t kl, kp;
    known_strides(E, x, L, P, &kl, &kp);
    return kl != 0 && kl != 1 && kp == 1;
}

int emit_reads_transposed(emitter *E, const g_value *x, int L, int P)
{
    return reads_transposed(E, x, L, P, 0);
}

/* The f64 and f32 tensors X reads transposed (reads_transposed), into
   E->panels, up to BLK_MAX_PANELS. */
static void find_panels(emitter *E, const g_value *x, int L, int P)
{
    if (x->inlined) {
        for (int i = 0; i < x->nin; i++)
            find_panels(E, x->in[i], L, P);
        return;
    }
    if ((x->dt != DT_F64 && x->dt != DT_F32) || x->op == OP_CONST || E->panels.n == BLK_MAX_PANELS ||
        panel_of(E, x) >= 0)
        return;
    int64_t kl, kp;
    known_strides(E, x, L, P, &kl, &kp);
    if (kl != 0 && kl != 1 && kp == 1)
        E->panels.v[E->panels.n++] = x;
}

int emit_panels_begin(emitter *E, const g_value *x, int L, int P)
{
    E->panels.n = 0;
    E->panels.P = P;
    find_panels(E, x, L, P);
    if (E->panels.n * TRANSPOSED_ROWS > E->k.blk_buffers)
        E->k.blk_buffers = E->panels.n * TRANSPOSED_ROWS;
    return E->panels.n;
}

void emit_panels_fill(emitter *E, int L, int depth)
{
    for (int k = 0; k < E->panels.n; k++) {
        const g_value *v = E->panels.v[k];
        int64_t known;
        put(E, "%*s{\n%*sconst int64_t ", 4 * depth, "", 4 * depth + 4, "");
        put_label(E, E->panels.P);
        put(E, " = tx_it;\n%*s%s(tx_ie - tx_it, tx_bn, &", 4 * depth + 4, "",
            v->dt == DT_F32 ? "tx_pf_tile" : "tx_p_tile_f64");
        put_access_raw(E, v);
        put(E, ", 1, ");
        put_label_stride(E, v, L, &known);
        put(E, ", %s(tx_blk + %d * TX_BLOCK), TX_BLOCK, 0);\n%*s}\n", v->dt == DT_F32 ? "(float *)" : "",
            TRANSPOSED_ROWS * k, 4 * depth, "");
    }
    E->k.blk_refs++;
}

int blk_flat_ok(emitter *E, const g_value *v, int L)
{
    if (v->op == OP_CONST)
        return 1;
    if (v->dt != DT_F64 || (v->op == OP_MAP && v->fn == MAP_DELTA)) /* (blk_delta: one row's block) */
        return 0;
    if (!v->inlined) {
        int64_t k = emit_known_stride(E, v, L);
        return k == 0 || k == 1;
    }
    for (int i = 0; i < v->nin; i++)
        if (!blk_flat_ok(E, v->in[i], L))
            return 0;
    return 1;
}

/* A store that streams (prims.inc's tx_p_stream_f64) when it writes
   TX_STREAM_BYTES or more: a plain '=' of f64 or f32 elements, one after
   the other, into an out or inout tensor (a let or a buffer is read again
   soon, from the cache) whose memory holds no row-local tensor's rows
   (pass_fuse.c: those are in the cache, and a streaming store to a line
   in the cache costs more than a plain one: a 2000x2000 softmax, whose
   exponentials wait in its output's rows, took 1.6 times as long).
   Declares tx_ntN, whether it does, from the store's extents EXT[0..RANK)
   at run time; N, or -1 where it may not. */
static int put_stream_flag(emitter *E, int target_var, dtype tdt, int64_t inc, int op, const tx_extent *ext,
                           int rank)
{
    if (target_var < 0 || inc != 1 || op != 0 || (tdt != DT_F64 && tdt != DT_F32))
        return -1;
    io_kind io = SP(E)->vars[target_var]->io;
    if (io != IO_OUT && io != IO_INOUT)
        return -1;
    for (int v = 0; E->g->row_alias && v < SP(E)->nvars; v++)
        if (E->g->row_alias[v] == target_var)
            return -1;
    int nt = E->k.streams++;
    put(E, "        const int tx_nt%d = %d.0", nt, dt_size(tdt));
    for (int i = 0; i < rank; i++) {
        put(E, " * (double)");
        put_extent(E, ext[i]);
    }
    put(E, " >= (double)TX_STREAM_BYTES;\n");
    return nt;
}

void put_flat_rows_head(emitter *E, tx_extent ext, int depth)
{
    put(E, "%*sconst int64_t tx_fr = ", 4 * depth, "");
    put_extent(E, ext);
    put(E, " > 0 ? TX_BLOCK / ");
    put_extent(E, ext);
    put(E, " : TX_BLOCK;\n%*sfor (int64_t tx_it = tx_r0; tx_it < tx_r1; tx_it += tx_fr) {\n", 4 * depth, "");
    put(E, "%*sconst int64_t tx_rn = tx_r1 - tx_it < tx_fr ? tx_r1 - tx_it : tx_fr, tx_bn = tx_rn * ", 4 * depth + 4,
        "");
    put_extent(E, ext);
    put(E, ";\n");
}

void put_flat_rows_else(emitter *E, int P, int L, const char *body, int depth)
{
    put(E, "%*s{\n%*sconst int64_t ", 4 * depth + 8, "", 4 * depth + 12, "");
    put_label(E, P);
    put(E, " = tx_it;\n%*sconst int64_t ", 4 * depth + 12, "");
    put_label(E, L);
    put(E, " = 0;\n%s%*s}\n%*s}\n%*s} else {\n", body, 4 * depth + 8, "", 4 * depth + 4, "", 4 * depth, "");
    put(E, "%*sfor (int64_t ", 4 * depth + 4, "");
    put_label(E, P);
    put(E, " = tx_r0; ");
    put_label(E, P);
    put(E, " < tx_r1; ");
    put_label(E, P);
    put(E, "++) {\n");
}

/* X's tensors as a flat block over rows of P reads them (blk_flat_ok,
   and an f64 tensor read transposed, blk_flat_transposed): 0 if one is
   neither, else 1 + the number read transposed */
static int flat_reads(emitter *E, const g_value *v, int L, int P)
{
    if (v->op == OP_CONST)
        return 1;
    if (v->dt != DT_F64 || (v->op == OP_MAP && v->fn == MAP_DELTA)) /* (blk_delta: one row's block) */
        return 0;
    if (!v->inlined)
        return blk_flat_transposed(E, v, L, P) ? 2 : blk_flat_ok(E, v, L);
    int n = 1;
    for (int i = 0; i < v->nin; i++) {
        int k = flat_reads(E, v->in[i], L, P);
        if (!k)
            return 0;
        n += k - 1;
    }
    return n;
}

/* Rows shorter than this, known or not when the code is emitted, go in
   flat blocks; with an operand read transposed, shorter than
   FLAT_TRANSPOSED_MAX (emit.h), known (an antisymmetrised amplitude
   T(a,b,i,j) - T(a,b,j,i), v = 120, o = 24, one thread: 15.6 ms row by
   row with the transposed operand copied 8 rows at a time into panels,
   42 % of it in those copies of 8x24 tiles) */
#define FLAT_ROWS_MAX 16

/* Rows too short for a block of their own (the last label's extent under
   16, known when the code runs): where the target's rows along the label
   before it, P, follow one another as every operand's do, an elementwise
   store goes in flat blocks of TX_BLOCK / extent whole rows, as
   emit_dense.c's reduce_rows_flat does for a reduction (blk_state.flat:
   an operand along P alone spread over its rows, one along the last
   label alone repeated). A CCSD-like R("a,b,i,j") += V("a,b,i,j") over
   o = 8 called two primitives for every 8 elements. Whether it may: an f64
   value into an f64 target at unit stride, no tile of transposed rows,
   no panels, no sparse map, not in a row group (its tiles of rows), and
   every operand f64 with stride 0 or 1 along the last label, or read
   transposed (stride 1 along P) where the extent is known and under
   FLAT_TRANSPOSED_MAX. A target large enough to stream streams each
   block's span whole (the rows follow one another): row by row, each
   short row was streamed apart, its first and last lines in parts. One
   thread, alternated, medians of 5, T 300x300x8x8: T * D("i,j") 12.7 ->
   5.3 ms, T / (e("i") + e("j")) 12.0 -> 5.3, T - T("a,b,j,i") 16.6 ->
   9.3; in cache (30x30x8x8) 63 -> 64 us. Returns 0, or the bound on the
   last label's extent under which the rows go in flat blocks
   (FLAT_ROWS_MAX, FLAT_TRANSPOSED_MAX). */
static int flat_rows_ok(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank, dtype tdt,
                        int64_t inc)
{
    int need = 0;
    const g_value *kv = E->k.value;
    if (rank < 2 || tdt != DT_F64 || x->dt != DT_F64 || inc != 1 || E->panels.n || x->op == OP_CONST ||
        (kv && (kv->row_group || kv->nmaps)) || !blk_supported(x, &need))
        return 0;
    int64_t len = emit_extent_value(E, ext[rank - 1]);
    int k = flat_reads(E, x, labels[rank - 1], labels[rank - 2]);
    if (k == 1)
        return len < FLAT_ROWS_MAX ? FLAT_ROWS_MAX : 0;
    return k > 1 && len >= 0 && len < FLAT_TRANSPOSED_MAX ? FLAT_TRANSPOSED_MAX : 0;
}

/* The target's element at row P_AT of the last label but one and 0 of
   the last, as "&..." (put_var_at or put_value_at inside a scope that
   sets the two labels). */
static void put_flat_target(emitter *E, const int *labels, const tx_extent *ext, int rank, int target_var,
                            const g_value *temp, const char *p_at, int depth)
{
    put(E, "%*s{\n%*sconst int64_t ", 4 * depth, "", 4 * depth + 4, "");
    put_label(E, labels[rank - 2]);
    put(E, " = %s, ", p_at);
    put_label(E, labels[rank - 1]);
    put(E, " = 0;\n%*stx_fd = &", 4 * depth + 4, "");
    if (target_var >= 0)
        put_var_at(E, target_var, labels, ext, rank);
    else
        put_value_at(E, temp);
    put(E, ";\n%*s}\n", 4 * depth, "");
}

/* flat_rows_ok's blocks of rows, and the else of rows one by one: opens
   the scope of the rows [tx_r0, tx_r1) of P (the kernel's range when P is
   the first label), computes the flat blocks where the rows follow each
   other (the target's, tx_fs, and the operands', as blk_eval learns),
   and opens "} else { for (P over the rows) {", in which emit_block_loop
   goes on as for one row. Returns the depth inside. */
static int flat_rows_begin(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                           int target_var, const g_value *temp, int op, int nt, int bound, int depth)
{
    int L = labels[rank - 1], P = labels[rank - 2];
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    put_line_range(E, depth, rank == 2, P, ext[rank - 2]);
    /* the target's rows: tx_fs apart */
    put(E, "%*sint64_t tx_fs = ", 4 * depth, "");
    put_extent(E, ext[rank - 1]);
    put(E, ";\n%*sif (tx_r1 - tx_r0 > 1) {\n%*sdouble *tx_fd, *tx_f0;\n", 4 * depth, "", 4 * depth + 4, "");
    put_flat_target(E, labels, ext, rank, target_var, temp, "tx_r0", depth + 1);
    put(E, "%*stx_f0 = tx_fd;\n", 4 * depth + 4, "");
    put_flat_target(E, labels, ext, rank, target_var, temp, "tx_r0 + 1", depth + 1);
    put(E, "%*stx_fs = tx_fd - tx_f0;\n%*s}\n", 4 * depth + 4, "", 4 * depth, "");
    /* the flat block's code first: it learns the condition */
    tx_buf guard = {0}, body_buf, *saved = emit_capture_begin(E, &body_buf);
    blk_state B = {.depth = depth + 3, .label = L, .flat = 1, .flat_row = P, .flat_ext = ext[rank - 1],
                   .flat_guard = &guard, .flat_next = rank >= 3 ? 1 + labels[rank - 3] : 0};
    blk_op r = blk_eval(E, &B, x);
    TX_ASSERT(!B.flat_fail);
    put(E, "%*sdouble *tx_fd;\n", 4 * depth + 12, "");
    put_flat_target(E, labels, ext, rank, target_var, temp, "tx_it", depth + 3);
    if (nt >= 0) { /* the block's rows are one span of the target: streamed whole */
        put(E, "%*sif (tx_nt%d)\n%*stx_p_stream_f64(tx_bn, ", 4 * depth + 12, "", nt, 4 * depth + 16, "");
        put_op(E, r);
        put(E, ", tx_fd);\n%*selse\n    ", 4 * depth + 12, "");
    }
    put(E, "%*stx_p_store_f64(tx_bn, ", 4 * depth + 12, "");
    put_op(E, r);
    put(E, ", tx_fd, 1, %d);\n", op);
    const char *body = emit_capture_end(E, saved);
    put(E, "%*sif (", 4 * depth, "");
    put_extent(E, ext[rank - 1]);
    put(E, " < %d && tx_fs == ", bound);
    put_extent(E, ext[rank - 1]);
    put(E, "%s) {\n", guard.p ? guard.p : "");
    buf_free(&guard);
    put_flat_rows_head(E, ext[rank - 1], depth + 1);
    put_flat_rows_else(E, P, L, body, depth);
    return depth + 2;
}

static void put_flat_target(emitter *E, const int *labels, const tx_extent *ext, int rank, int target_var,
                            const g_value *temp, const char *p_at, int depth);

/* The tensor a plain '=' copy X reads (through copies fused into it), if
   its rows along the last label are rows in memory as the target's are
   (stride 1 there, TDT its type): a permutation that keeps the last mode
   last (b,s,h,d -> b,h,s,d), a slice of rows, a broadcast of a row. NULL
   otherwise. */
static const g_value *copied_rows(emitter *E, const g_value *x, const int *labels, int rank, dtype tdt, int64_t inc,
                                  int op)
{
    const g_value *kv = E->k.value;
    if (rank < 2 || op != 0 || inc != 1 || E->panels.n || (kv && (kv->row_group || kv->nmaps)) ||
        (tdt != DT_F64 && tdt != DT_F32))
        return NULL;
    while (x->inlined && blk_is_copy(x))
        x = x->in[0];
    if (x->inlined || x->dt != tdt || x->op == OP_CONST || x->rank == 0 || x->nmaps)
        return NULL;
    return emit_known_stride(E, x, labels[rank - 1]) == 1 ? x : NULL;
}

/* X (copied_rows' tensor) into the target, a call of tx_p_copy_rows_f64
   or tx_pf_copy_rows for the rows of the last label but one under each
   index of the labels before: a libtcc loop of one call a row (64 floats
   a call for attention's heads, b,s,h,d -> b,h,s,d) ran at 70 % of
   torch's permute. NT: the store's stream flag, or -1. */
static void emit_copy_rows(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                           int target_var, const g_value *temp, dtype tdt, int nt)
{
    int depth = 2, P = labels[rank - 2], L = labels[rank - 1], f32 = tdt == DT_F32;
    const char *t = f32 ? "float" : "double";
    open_loops(E, labels, ext, rank - 2, &depth, 1);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    put_line_range(E, depth, rank == 2, P, ext[rank - 2]);
    put(E, "%*sif (tx_r1 > tx_r0) {\n%*s%s *tx_fd, *tx_f0;\n%*sint64_t tx_fs = 0;\n", 4 * depth, "", 4 * depth + 4,
        "", t, 4 * depth + 4, "");
    put_flat_target(E, labels, ext, rank, target_var, temp, "tx_r0", depth + 1);
    put(E, "%*stx_f0 = tx_fd;\n%*sif (tx_r1 - tx_r0 > 1) {\n", 4 * depth + 4, "", 4 * depth + 4, "");
    put_flat_target(E, labels, ext, rank, target_var, temp, "tx_r0 + 1", depth + 2);
    put(E, "%*stx_fs = tx_fd - tx_f0;\n%*s}\n%*s{\n%*sconst int64_t ", 4 * depth + 8, "", 4 * depth + 4, "",
        4 * depth + 4, "", 4 * depth + 8, "");
    put_label(E, P);
    put(E, " = tx_r0, ");
    put_label(E, L);
    put(E, " = 0;\n%*s%s(tx_r1 - tx_r0, ", 4 * depth + 8, "", f32 ? "tx_pf_copy_rows" : "tx_p_copy_rows_f64");
    put_extent(E, ext[rank - 1]);
    put(E, ", &");
    put_access_raw(E, x);
    int64_t known;
    put(E, ", ");
    put_label_stride(E, x, P, &known);
    put(E, ", tx_f0, tx_fs, ");
    if (nt >= 0)
        put(E, "tx_nt%d", nt);
    else
        put(E, "0");
    put(E, ");\n%*s}\n%*s}\n%*s}\n", 4 * depth + 4, "", 4 * depth, "", 4 * depth - 4, "");
}

const char *blk_target_text(emitter *E, tx_buf *scratch, const int *labels, const tx_extent *ext, int rank,
                            int target_var, const g_value *temp)
{
    tx_buf *saved = emit_capture_begin(E, scratch);
    if (target_var >= 0)
        put_var_at(E, target_var, labels, ext, rank);
    else
        put_value_at(E, temp);
    return emit_capture_end(E, saved);
}

void emit_block_loop(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                     int target_var, const g_value *temp, dtype tdt, int op)
{
    int depth = 2, span = 0, blk_refs = 0, rows = 0;
    tx_buf body_buf, *saved_body = NULL;
    emit_use(E, TXS_PRIM);
    int L = labels[rank - 1];
    const int64_t *stride = emit_var_strides(E, target_var);
    int64_t inc = stride ? stride[rank - 1] : 1;
    int nt = put_stream_flag(E, target_var, tdt, inc, op, ext, rank);
    /* an operand read transposed: the rows of the label before L in tiles
       of TRANSPOSED_ROWS, each block of L run down the tile's rows */
    const g_value *rows_of = copied_rows(E, x, labels, rank, tdt, inc, op);
    if (rows_of) { /* (short rows too: one run where they follow each other) */
        emit_copy_rows(E, rows_of, labels, ext, rank, target_var, temp, tdt, nt);
        return;
    }
    int bound = flat_rows_ok(E, x, labels, ext, rank, tdt, inc), flat = bound > 0;
    rows = !flat && rank >= 2 && reads_transposed(E, x, L, labels[rank - 2], 1);
    /* (flat: the loop over the rows of the last label but one is flat_rows_begin's) */
    open_loops(E, labels, ext, rank - 1 - rows - flat, &depth, 1);
    if (flat)
        depth = flat_rows_begin(E, x, labels, ext, rank, target_var, temp, op, nt, bound, depth);
    if (rows) {
        int P = labels[rank - 2];
        E->k.tile_rows = TRANSPOSED_ROWS; /* a row group's tiles: at least this tall */
        put(E, "%*s{\n", 4 * depth, "");
        depth++;
        if (kernel_range_rows(E, P, ext[rank - 2]))
            put(E, "%*sconst int64_t tx_t0 = tx_lo, tx_t1 = tx_hi;\n", 4 * depth, "");
        else {
            put(E, "%*sconst int64_t tx_t0 = 0, tx_t1 = ", 4 * depth, "");
            put_extent(E, ext[rank - 2]);
            put(E, ";\n");
        }
        /* the columns in chunks (TRANSPOSED_CHUNK), each down every tile of rows */
        put(E, "%*sfor (int64_t tx_jc = 0; tx_jc < ", 4 * depth, "");
        put_extent(E, ext[rank - 1]);
        put(E, "; tx_jc += %d) {\n%*sconst int64_t tx_je = ", TRANSPOSED_CHUNK, 4 * depth + 4, "");
        put_extent(E, ext[rank - 1]);
        put(E, " - tx_jc < %d ? ", TRANSPOSED_CHUNK);
        put_extent(E, ext[rank - 1]);
        put(E, " : tx_jc + %d;\n", TRANSPOSED_CHUNK);
        depth++;
        put(E, "%*sfor (int64_t tx_it = tx_t0; tx_it < tx_t1; tx_it += %d) {\n", 4 * depth, "", TRANSPOSED_ROWS);
        depth++;
        put(E, "%*sconst int64_t tx_ie = tx_t1 - tx_it < %d ? tx_t1 : tx_it + %d;\n", 4 * depth, "", TRANSPOSED_ROWS,
            TRANSPOSED_ROWS);
    }
    if (rows) { /* the loop head waits for the body (see below), which runs inside the loop over the tile's rows */
        span = 1;
        depth += 2;
        blk_refs = E->k.blk_refs;
        saved_body = emit_capture_begin(E, &body_buf);
    } else if (rank == 1 && E->k.value && E->k.value->row_group && kernel_range_spans(E, L, ext[0], depth)) {
        depth++; /* a vector of a row group: its range is the group's, in elements */
        put(E, "%*sconst int64_t tx_bn = tx_hi - tx_i < TX_BLOCK ? tx_hi - tx_i : TX_BLOCK;\n%*sconst int64_t ",
            4 * depth, "", 4 * depth, "");
        put_label(E, L);
        put(E, " = tx_i;\n");
    } else if (rank == 1 && kernel_range_blocks(E, ext[0], depth)) {
        depth++;
        put(E, "%*sconst int64_t tx_i = tx_ib * TX_BLOCK;\n", 4 * depth, "");
        put_block_bounds(E, L, ext[rank - 1], depth);
    } else { /* the loop head waits for the body: see below */
        span = 1;
        depth++;
        blk_refs = E->k.blk_refs;
        saved_body = emit_capture_begin(E, &body_buf);
    }
    if (rows) /* the transposed f64 operands: copied a block at a time into panels */
        emit_panels_begin(E, x, L, labels[rank - 2]);
    blk_state B = {.depth = depth, .label = L, .nbuf = E->panels.n * TRANSPOSED_ROWS, .streams = nt >= 0};
    tx_buf scratch;
    const char *target = blk_target_text(E, &scratch, labels, ext, rank, target_var, temp);
    int in_f32 = tdt == DT_F32 && op == 0 && f32_store(E, &B, x, target, inc, blk_direct(x, target_var, inc, op), nt);
    if (!in_f32) {
        /* an f32 value (the f32 path's block) is stored by a call of its own */
        int direct = blk_direct(x, target_var, inc, op) && x->dt != DT_F32, p = direct ? B.nptr++ : -1;
        /* the top operation writes the target if blk_out lets it: f64,
           unless it takes several steps and the target may stream; f32,
           if it has a typed form */
        tx_buf body, *saved_eval = NULL;
        if (direct) {
            E->blk_dest = 1 + p;
            E->blk_dest_f32 = tdt == DT_F32;
            saved_eval = emit_capture_begin(E, &body);
        }
        blk_op r = blk_eval(E, &B, x);
        E->blk_dest = E->blk_dest_f32 = 0;
        if (saved_eval) {
            const char *text = emit_capture_end(E, saved_eval);
            direct = r.buf < 0 && r.ptr == p;
            if (direct)
                put_dest_ptr(E, depth, tdt == DT_F32, 'p', p, nt, target);
            put(E, "%s", text);
        }
        TX_ASSERT(!direct || (r.buf < 0 && r.ptr == p));
        tx_buf src = {0}, *out = E->out;
        E->out = &src;
        if (direct)
            put(E, "tx_p%d", p);
        else
            put_op(E, r);
        E->out = out;
        if (direct)
            put_dest_end(E, depth, nt);
        else if (nt >= 0 && tdt == DT_F64)
            put_stream_if(E, depth, nt, 0, src.p, target);
        else if (nt >= 0) /* rounded to float in the stream's block, then streamed */
            put(E, "%*sif (tx_nt%d) {\n%*stx_p_store_f32(tx_bn, %s, (float *)tx_ntb, 1, 0);\n"
                   "%*stx_pf_stream(tx_bn, (float *)tx_ntb, &%s);\n%*s} else\n    ",
                4 * depth, "", nt, 4 * depth + 4, "", src.p, 4 * depth + 4, "", target, 4 * depth, "");
        if (!direct)
            put(E, "%*stx_p_store_%s(tx_bn, %s, &%s, %lld, %d);\n", 4 * depth, "", tdt == DT_F32 ? "f32" : "f64", src.p,
                target, (long long)inc, op);
        buf_free(&src);
    }
    depth -= 1 + rows;
    if (span) {
        /* primitives that read and write memory directly, with no scratch
           block (f64 or f32), run over spans of up to eight blocks of the
           row: fewer calls, longer runs (i,j->ij of 1000^2 on this
           machine's EPYC, through the library: 422 us in blocks; f32
           X*1.5 over 2000^2 ...) */
        const char *body = emit_capture_end(E, saved_body);
        int blocks = E->k.blk_refs == blk_refs ? SPAN_BLOCKS : 1;
        if (rows) { /* the chunk's columns [tx_jc, tx_je) */
            char step[32] = "TX_BLOCK";
            if (blocks > 1)
                snprintf(step, sizeof step, "%d * TX_BLOCK", blocks);
            put(E, "%*sfor (int64_t tx_i = tx_jc; tx_i < tx_je; tx_i += %s) {\n%*sconst int64_t tx_bn = "
                   "tx_je - tx_i < %s ? tx_je - tx_i : %s;\n%*sconst int64_t ",
                4 * depth, "", step, 4 * depth + 4, "", step, step, 4 * depth + 4, "");
            put_label(E, L);
            put(E, " = tx_i;\n");
        } else if (blocks > 1)
            open_rows_span(E, L, ext[rank - 1], depth, 0, SPAN_BLOCKS);
        else
            put_block_loop_head(E, L, ext[rank - 1], depth);
        if (rows) {
            emit_panels_fill(E, L, depth + 1);
            E->panels.n = 0;
            put(E, "%*sfor (int64_t ", 4 * depth + 4, "");
            put_label(E, labels[rank - 2]);
            put(E, " = tx_it; ");
            put_label(E, labels[rank - 2]);
            put(E, " < tx_ie; ");
            put_label(E, labels[rank - 2]);
            put(E, "++) {\n%s%*s}\n", body, 4 * depth + 4, "");
        } else
            put(E, "%s", body);
    }
    put(E, "%*s}\n", 4 * depth, "");
    if (rows) /* the tile's loop, the chunk's, the rows' block */
        put(E, "%*s}\n%*s}\n%*s}\n", 4 * depth - 4, "", 4 * depth - 8, "", 4 * depth - 12, "");
    if (flat) /* the row loop, the else and the rows' block */
        put(E, "%*s}\n%*s}\n%*s}\n", 4 * depth - 4, "", 4 * depth - 8, "", 4 * depth - 12, "");
}

int open_row_loop(emitter *E, int label, tx_extent ext, int depth, int blocked, int *range)
{
    if (*range < 0) { /* the first row loop: it may take the kernel's range */
        *range = blocked ? kernel_range_blocks(E, ext, depth) : kernel_range_loop(E, label, ext, depth, 1);
        if (*range && blocked) {
            put(E, "%*sconst int64_t tx_i = tx_ib * TX_BLOCK;\n", 4 * depth + 4, "");
            put_block_bounds(E, label, ext, depth + 1);
        }
        if (*range)
            return depth + 1;
    } else if (*range) { /* a later one: over the range the first took */
        kernel_put_range_for(E, blocked ? -1 : label, depth, 1);
        if (blocked) {
            put(E, "%*sconst int64_t tx_i = tx_ib * TX_BLOCK;\n", 4 * depth + 4, "");
            put_block_bounds(E, label, ext, depth + 1);
        }
        return depth + 1;
    }
    if (blocked)
        put_block_loop_head(E, label, ext, depth);
    else
        put_loop_head(E, label, ext, depth, 1);
    return depth + 1;
}

void emit_block_reduce(emitter *E, const g_value *x, int label, tx_extent ext, const tx_extent *flat, int nflat,
                       reduce_op red, int depth)
{
    static const char *name[] = {"?", "sum", "prod", "max", "min"};
    emit_use(E, TXS_PRIM);
    if (!x->inlined && x->dt == DT_F64 && x->op != OP_CONST) {
        /* contiguous f64 in memory: one call over the whole loop */
        if (emit_known_stride(E, x, label) == 1) {
            /* in chunks that threads of the pool share (same bits on one
               thread, and in standalone C) */
            int pool = E->T->threads == TX_THREADS_POOL;
            if (pool)
                emit_use(E, TXS_RT);
            put(E, "%*s{\n%*sconst int64_t ", 4 * depth, "", 4 * depth + 4, "");
            put_label(E, label);
            put(E, " = 0;\n%*stx_acc = %s(tx_p_red_%s, ", 4 * depth + 4, "", pool ? "tx_rt_reduce" : "tx_p_red_chunked",
                name[red]);
            int64_t all = 1;
            for (int i = 0; i < nflat && all >= 0; i++) {
                int64_t e = emit_extent_value(E, flat[i]);
                all = e < 0 ? -1 : all * e;
            }
            if (nflat == 0)
                put_extent(E, ext);
            else if (all >= 0) /* known: one number */
                put(E, "%lld", (long long)all);
            else
                for (int i = 0; i < nflat; i++) {
                    put(E, i ? " * " : "");
                    put_extent(E, flat[i]);
                }
            put(E, ", &");
            put_access(E, x);
            put(E, ", tx_acc);\n%*s}\n", 4 * depth, "");
            return;
        }
    }
    TX_ASSERT(nflat == 0); /* a flat run is a contiguous f64 one */
    int f32 = 0;
    if (!x->inlined && x->dt == DT_F32 && (x->op == OP_INDEX || emit_is_computed(x))) {
        /* contiguous f32 in memory: folded from the floats, converted as
           they are read (a max or a min: the same value as through
           blocks; a sum or a product: the same bits on every build and
           thread count, other bits than the fold of an f32 value through
           blocks) */
        f32 = emit_known_stride(E, x, label) == 1;
    }
    if (f32) {
        /* one fold over the run, in the chunks of a long one that the
           pool shares (tx_rt_reducef; tx_p_redf_chunked in standalone C,
           the same bits): a sum of 10^7 floats on two threads took 1.78
           ms in spans of eight blocks on one thread, 0.93 in chunks */
        int pool = E->T->threads == TX_THREADS_POOL;
        if (pool)
            emit_use(E, TXS_RT);
        put(E, "%*s{\n%*sconst int64_t ", 4 * depth, "", 4 * depth + 4, "");
        put_label(E, label);
        put(E, " = 0;\n%*stx_acc = %s(tx_p_redf_%s, tx_p_red_%s, ", 4 * depth + 4, "",
            pool ? "tx_rt_reducef" : "tx_p_redf_chunked", name[red], name[red]);
        put_extent(E, ext);
        put(E, ", &");
        put_access(E, x);
        put(E, ", tx_acc);\n%*s}\n", 4 * depth, "");
        return;
    }
    put_block_loop_head(E, label, ext, depth);
    depth++;
    emit_block_reduce_step(E, x, label, red, depth);
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
}

void emit_block_reduce_step(emitter *E, const g_value *x, int label, reduce_op red, int depth)
{
    static const char *name[] = {"?", "sum", "prod", "max", "min"};
    blk_state B = {.depth = depth, .label = label, .nbuf = E->panels.n * TRANSPOSED_ROWS};
    if (red == RED_ADD && (f32_sum_of_squares(E, &B, x) || blk_sum_of_squares(E, &B, x)))
        return;
    blk_op r = blk_eval(E, &B, x);
    put(E, "%*stx_acc = tx_p_red_%s(tx_bn, ", 4 * depth, "", name[red]);
    put_op(E, r);
    put(E, ", tx_acc);\n");
}
