/*
 * emit_expr.c - expressions of the generated code: extents, element
 * addresses, elementwise values, reductions' updates, loop heads. Every
 * reference to a tensor, value, dim or map goes through here, so the
 * kernel being emitted learns what its argument record must carry.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

int64_t emit_extent_value(emitter *E, tx_extent x)
{
    return sema_extent_eval(SP(E), x, E->T->specialised ? E->o->dim_values : NULL);
}

static void put_dim(emitter *E, int dim)
{
    kernel_ref_dim(E, dim);
    mangle_name(E->out, "d_", SP(E)->dims[dim]->name);
}

void put_extent(emitter *E, tx_extent x)
{
    if (E->T->specialised && x.dim != -1) {
        put(E, "%lld", (long long)sema_extent_eval(SP(E), x, E->o->dim_values));
        return;
    }
    if (x.dim == EXT_DERIVED) {
        const dext *d = &SP(E)->derived[x.value];
        if (d->kind == 1) {
            put(E, "((");
            put_extent(E, d->a);
            put(E, ") < (");
            put_extent(E, d->b);
            put(E, ") ? (");
            put_extent(E, d->a);
            put(E, ") : (");
            put_extent(E, d->b);
            put(E, "))");
            return;
        }
        put(E, "(%lld", (long long)d->c);
        for (int i = 0; i < d->nterm; i++) {
            put(E, " %c %lld*", d->coef[i] < 0 ? '-' : '+', (long long)(d->coef[i] < 0 ? -d->coef[i] : d->coef[i]));
            put_dim(E, d->dim[i]);
        }
        put(E, ")");
        return;
    }
    if (x.dim < 0)
        put(E, "%lld", (long long)x.value);
    else
        put_dim(E, x.dim);
}

void put_label(emitter *E, int label)
{
    E->label_refs[label]++;
    mangle_name(E->out, "l_", E->g->label_names[label]);
}

/* The tensor whose memory VAR's elements are in, inside kernels: VAR, or
   the out tensor a row-local VAR lives in (pass_fuse.c), unless the
   target distributes tensors or that tensor is strided. */
static int var_home(emitter *E, int var)
{
    int p = E->g->row_alias && E->k.active && var >= 0 ? E->g->row_alias[var] : -1;
    return p < 0 || E->T->distributed || emit_var_strides(E, p) ? var : p;
}

void put_var(emitter *E, int var)
{
    var = var_home(E, var);
    kernel_ref_var(E, var);
    mangle_name(E->out, "t_", SP(E)->vars[var]->name);
}

void put_map(emitter *E, int map)
{
    kernel_ref_map(E, map);
    mangle_name(E->out, "m_", SP(E)->maps[map]->name);
}

void put_value(emitter *E, const g_value *v)
{
    kernel_ref_value(E, v->id);
    put(E, "tx_v%d", v->id);
}

const int64_t *emit_var_strides(emitter *E, int var)
{
    return E->o->var_strides && var >= 0 ? E->o->var_strides[var] : NULL;
}

void emit_need_contiguous(emitter *E, int var)
{
    if (emit_var_strides(E, var) && E->o->var_contiguous)
        E->o->var_contiguous[var] = 1;
}

int emit_modes(emitter *E, const g_value *v, mode_seq *s)
{
    int st = graph_modes(v, s);
    if (st == 0 && v->op == OP_INDEX)
        s->stride = emit_var_strides(E, v->in[0]->var);
    return st;
}

/* The offset of the element at LABELS (or the integer CHIPS[i] where a
   label is -1) through the bound strides STRIDE: sum of index * stride,
   the strides written in as numbers. */
static void put_strided_offset(emitter *E, int n, const int *labels, const int64_t *chips, const int64_t *stride)
{
    int any = 0;
    int64_t c = 0;
    for (int i = 0; i < n; i++) {
        if (labels[i] < 0) {
            c += chips[i] * stride[i];
            continue;
        }
        if (stride[i] == 0)
            continue;
        put(E, any ? " + " : "");
        put_label(E, labels[i]);
        if (stride[i] != 1)
            put(E, "*(%lld)", (long long)stride[i]);
        any = 1;
    }
    if (c || !any)
        put(E, "%s(%lld)", any ? " + " : "", (long long)c);
}

/* Is VAR row-local (pass_fuse.c) where the code goes: inside a kernel that
   may run in its row group's call, which sets where its tile's rows lie?
   Records the kernel's use. The MPI target and the per-statement timing
   of the argv entry call every kernel alone: there it is an ordinary
   tensor. */
static int row_local(emitter *E, int var)
{
    if (!E->g->row_local || var < 0 || !E->g->row_local[var] || !E->k.active || emit_var_strides(E, var) ||
        E->T->distributed || (E->o->timing && E->T->entry == TX_ENTRY_ARGV) || var_home(E, var) != var)
        return 0;
    E->k.row_local = 1;
    return 1;
}

void put_var_at(emitter *E, int var, const int *labels, const tx_extent *ext, int rank)
{
    const int64_t *stride = emit_var_strides(E, var);
    put_var(E, var);
    put(E, "[");
    if (stride)
        put_strided_offset(E, rank, labels, NULL, stride);
    else {
        E->row_shift = row_local(E, var);
        put_horner(E, rank, labels, NULL, ext);
        E->row_shift = 0;
    }
    put(E, "]");
}

void put_horner(emitter *E, int n, const int *labels, const int64_t *chips, const tx_extent *ext)
{
    if (n == 0) {
        put(E, "0");
        return;
    }
    int lead = n;
    int entry = -1;
    for (int k = E->nentries - 1; k >= 0 && entry < 0; k--) {
        int q = E->entries[k].ndst, ok = q >= 1 && q <= n;
        for (int i = 0; ok && i < q; i++)
            ok = labels[n - q + i] == E->entries[k].dst[i] && ext_eq(ext[n - q + i], E->entries[k].ext[i]);
        if (ok) {
            entry = k;
            lead = n - q;
        }
    }
    if (entry >= 0 && lead == 0) {
        put(E, "tx_t%d", E->entries[entry].id);
        return;
    }
    if (entry >= 0)
        put(E, "(");
    for (int i = 0; i < lead - 1; i++)
        put(E, "(");
    for (int i = 0; i < lead; i++) {
        if (i) {
            put(E, ")*");
            put_extent(E, ext[i]);
            put(E, " + ");
        }
        if (i == 0 && E->row_shift && labels[i] >= 0) { /* a row-local tensor's row in its tile */
            put(E, "(");
            put_label(E, labels[i]);
            put(E, " + tx_rs)");
        } else if (labels[i] >= 0)
            put_label(E, labels[i]);
        else
            put(E, "%lld", (long long)chips[i]);
    }
    if (entry >= 0) { /* (leading offset) * (the targets' block) + the flat target index */
        put(E, ")");
        for (int i = lead; i < n; i++) {
            put(E, "*");
            put_extent(E, ext[i]);
        }
        put(E, " + tx_t%d", E->entries[entry].id);
    }
}

void put_value_at(emitter *E, const g_value *v)
{
    if (v->into) { /* a scan writing its store's tensor (pass_fuse) */
        put_var_at(E, v->into->var, v->into->store_label, v->into->ext, v->into->rank);
        return;
    }
    put_value(E, v);
    put(E, "[");
    put_horner(E, v->rank, v->label, NULL, v->ext);
    put(E, "]");
}

void put_access_raw(emitter *E, const g_value *v)
{
    switch (v->op) {
    case OP_CONST:
        if (dt_complex(v->dt)) { /* an imaginary literal */
            put(E, "tx_c_c(");
            num_literal(E->out, v->coef);
            put(E, ", ");
            num_literal(E->out, v->coef_im);
            put(E, ")");
            return;
        }
        num_literal(E->out, v->coef);
        return;
    case OP_INPUT:
    case OP_STORE: /* a scalar variable; views cover the rest */
        TX_ASSERT(v->rank == 0);
        put_var(E, v->var);
        put(E, "[0]");
        return;
    case OP_INDEX: {
        const g_value *w = v->in[0];
        const int64_t *stride = emit_var_strides(E, w->var);
        put_var(E, w->var);
        put(E, "[");
        if (stride)
            put_strided_offset(E, w->rank, v->idx_label, v->idx_chip, stride);
        else {
            E->row_shift = row_local(E, w->var);
            put_horner(E, w->rank, v->idx_label, v->idx_chip, w->ext);
            E->row_shift = 0;
        }
        put(E, "]");
        return;
    }
    default:
        put_value_at(E, v);
        return;
    }
}

void put_access(emitter *E, const g_value *v)
{
    if (v->inlined) { /* fused: computed right here, inside the user's loops */
        put(E, "(");
        put_elementwise(E, v);
        put(E, ")");
        return;
    }
    if (v->dt == DT_C64 && v->op != OP_CONST) { /* complex computes in tx_c128 */
        put(E, "tx_c_w(");
        put_access_raw(E, v);
        put(E, ")");
        return;
    }
    put_access_raw(E, v);
}

void put_access_c(emitter *E, const g_value *v)
{
    if (dt_complex(v->dt)) {
        put_access(E, v);
        return;
    }
    put(E, "tx_c_r((double)");
    put_access(E, v);
    put(E, ")");
}

/* Complex arithmetic written out on the parts. libtcc copies every
   tx_c128 passed to or returned from complex.inc's helpers with a call of
   memmove: an elementwise product over 1e6 c128 took 14.2 ms through
   tx_c_mul, 5.8 written on the parts (one thread). An inlined sum,
   product (no division), scale or conj of values read in place is
   written so, each part one double expression with the helpers'
   operations in their order (the same bits: a real operand's imaginary
   part is the 0.0 that tx_c_r gives it, and takes part in the
   arithmetic). Each operand's parts appear twice in a product's, so the
   expansion is bounded: PARTS_MAX reads, else the helpers. */
#define PARTS_MAX 24

/* The number of reads V written on the parts takes (ROOT: V itself is
   computed here even if not inlined), or PARTS_MAX + 1 if it cannot be. */
static int parts_size(const g_value *v, int root)
{
    if (!root && (!v->inlined || !dt_complex(v->dt)))
        return 1;
    int n = 0;
    switch (v->op) {
    case OP_ADD:
        for (int i = 0; i < v->nin && n <= PARTS_MAX; i++)
            n += parts_size(v->in[i], 0);
        return n;
    case OP_CONTRACT:
        if (!ls_empty(v->summed))
            return PARTS_MAX + 1;
        for (int i = 0; i < v->nin && n <= PARTS_MAX; i++) {
            if (v->coef_in[i] < 0)
                return PARTS_MAX + 1;
            n = i ? 2 * (n + parts_size(v->in[i], 0)) : parts_size(v->in[i], 0);
        }
        return n;
    case OP_MAP:
        return v->fn == MAP_CONJ ? parts_size(v->in[0], 0) : PARTS_MAX + 1;
    default:
        return PARTS_MAX + 1;
    }
}

static void put_parts_of(emitter *E, const g_value *v, int part, int root);

/* Part PART of the product of V's first N operands (tx_c_mul's left fold). */
static void put_product_part(emitter *E, const g_value *v, int n, int part)
{
    if (n == 1) {
        put_parts_of(E, v->in[0], part, 0);
        return;
    }
    const g_value *b = v->in[n - 1]; /* re: a.re b.re - a.im b.im; im: a.re b.im + a.im b.re */
    put(E, "(");
    put_product_part(E, v, n - 1, 0);
    put(E, " * ");
    put_parts_of(E, b, part, 0);
    put(E, part ? " + " : " - ");
    put_product_part(E, v, n - 1, 1);
    put(E, " * ");
    put_parts_of(E, b, !part, 0);
    put(E, ")");
}

/* Part PART of V written on the parts (parts_size within bounds). */
static void put_parts_of(emitter *E, const g_value *v, int part, int root)
{
    if (!root && (!v->inlined || !dt_complex(v->dt))) {
        if (v->op == OP_CONST && dt_complex(v->dt)) {
            put(E, "(");
            num_literal(E->out, part ? v->coef_im : v->coef);
            put(E, ")");
        } else
            put_part(E, v, part);
        return;
    }
    switch (v->op) {
    case OP_ADD:
        put(E, "(");
        for (int i = 0; i < v->nin; i++) {
            double c = v->coef_in[i];
            if (i) {
                put(E, c < 0 ? " - " : " + ");
                c = c < 0 ? -c : c;
            }
            if (c != 1) {
                put(E, "(");
                put_parts_of(E, v->in[i], part, 0);
                put(E, " * ");
                num_literal(E->out, c);
                put(E, ")");
            } else
                put_parts_of(E, v->in[i], part, 0);
        }
        put(E, ")");
        return;
    case OP_CONTRACT:
        if (v->coef != 1)
            put(E, "(");
        put_product_part(E, v, v->nin, part);
        if (v->coef != 1) {
            put(E, " * ");
            num_literal(E->out, v->coef);
            put(E, ")");
        }
        return;
    default: /* MAP_CONJ */
        put(E, part ? "(-" : "(");
        put_parts_of(E, v->in[0], part, 0);
        put(E, ")");
        return;
    }
}

int put_assign_parts(emitter *E, int depth, const char *lhs, dtype tdt, int op, const g_value *x, int root)
{
    if (!dt_complex(x->dt) || (!root && !x->inlined) || parts_size(x, root) > PARTS_MAX)
        return 0;
    const char *f = tdt == DT_C64 ? "(float)" : "";
    put(E, "%*s{\n%*sconst double tx_zr = ", 4 * depth, "", 4 * depth + 4, "");
    put_parts_of(E, x, 0, root);
    put(E, ";\n%*sconst double tx_zi = ", 4 * depth + 4, "");
    put_parts_of(E, x, 1, root);
    put(E, ";\n");
    for (int part = 0; part < 2; part++) {
        const char *m = part ? "im" : "re";
        put(E, "%*s%s.%s = %s(", 4 * depth + 4, "", lhs, m, f);
        if (op != '=')
            put(E, "%s.%s %c ", lhs, m, op);
        put(E, "tx_z%c);\n", part ? 'i' : 'r');
    }
    put(E, "%*s}\n", 4 * depth, "");
    return 1;
}

void put_part(emitter *E, const g_value *v, int part)
{
    if (!dt_complex(v->dt)) {
        if (part) {
            put(E, "0.0");
            return;
        }
        put(E, "(double)");
        put_access(E, v);
        return;
    }
    if (v->inlined && parts_size(v, 0) <= PARTS_MAX) {
        put_parts_of(E, v, part, 0);
        return;
    }
    if (v->inlined) {
        put(E, "(");
        put_elementwise(E, v);
        put(E, ").%s", part ? "im" : "re");
        return;
    }
    put(E, "(double)");
    put_access_raw(E, v);
    put(E, ".%s", part ? "im" : "re");
}

tx_buf *emit_capture_begin(emitter *E, tx_buf *scratch)
{
    tx_buf *saved = E->out;
    memset(scratch, 0, sizeof *scratch);
    E->out = scratch;
    return saved;
}

const char *emit_capture_end(emitter *E, tx_buf *saved)
{
    tx_buf *b = E->out;
    E->out = saved;
    const char *s = arena_strndup(E->g->arena, b->p ? b->p : "", b->p ? b->len : 0);
    if (b->oom)
        E->out->oom = 1;
    buf_free(b);
    return s;
}

void put_assign_c(emitter *E, int depth, const char *lhs, dtype tdt, int op, const char *val)
{
    TX_ASSERT(dt_complex(tdt));
    const char *f = tdt == DT_C64 ? "(float)" : "";
    put(E, "%*s{\n%*stx_c128 tx_z = %s;\n", 4 * depth, "", 4 * depth + 4, "", val);
    for (int part = 0; part < 2; part++) {
        const char *m = part ? "im" : "re";
        put(E, "%*s%s.%s = %s(", 4 * depth + 4, "", lhs, m, f);
        if (op != '=')
            put(E, "%s.%s %c ", lhs, m, op);
        put(E, "tx_z.%s);\n", m);
    }
    put(E, "%*s}\n", 4 * depth, "");
}


void put_store_c(emitter *E, const g_value *s, dtype tdt, int depth)
{
    tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
    put_var_at(E, s->var, s->store_label, s->ext, s->rank);
    const char *lhs = emit_capture_end(E, saved);
    if (put_assign_parts(E, depth, lhs, tdt, s->store_op, s->in[0], 0))
        return;
    saved = emit_capture_begin(E, &scratch);
    put_access_c(E, s->in[0]);
    put_assign_c(E, depth, lhs, tdt, s->store_op, emit_capture_end(E, saved));
}

void put_loop_head(emitter *E, int label, tx_extent ext, int depth, int brace)
{
    put(E, "%*sfor (int64_t ", 4 * depth, "");
    put_label(E, label);
    put(E, " = 0; ");
    put_label(E, label);
    put(E, " < ");
    put_extent(E, ext);
    put(E, "; ");
    put_label(E, label);
    put(E, brace ? "++) {\n" : "++)\n");
}

void open_loops(emitter *E, const int *labels, const tx_extent *ext, int n, int *depth, int range)
{
    for (int i = 0; i < n; i++) {
        int f = range && i == 0 ? kernel_range_fused(E, labels, ext, n, *depth) : 0;
        if (f > 1) {
            *depth += f;
            i += f - 1;
            continue;
        }
        if (!(range && i == 0 && kernel_range_loop(E, labels[i], ext[i], *depth, 0)))
            put_loop_head(E, labels[i], ext[i], *depth, 0);
        (*depth)++;
    }
}

int emit_pow_by_products(double p)
{
    return p >= -8 && p <= 8 && p == (double)(int)p; /* (the range first: no cast out of int's) */
}

static void put_pow(emitter *E, const g_value *x, double p)
{
    if (emit_pow_by_products(p) && p != 0) {
        int n = p < 0 ? -(int)p : (int)p;
        put(E, p < 0 ? "1.0 / (" : "(");
        for (int i = 0; i < n; i++) {
            if (i)
                put(E, " * ");
            put(E, "(double)");
            put_access(E, x);
        }
        put(E, ")");
    } else if (p == 0) {
        put(E, "1.0");
    } else {
        put(E, "pow(");
        put_access(E, x);
        put(E, ", ");
        num_literal(E->out, p);
        put(E, ")");
    }
}

void emit_summand(const g_value *v, g_value *root)
{
    *root = *v;
    root->inlined = 1;
    root->coef = 1;
    memset(&root->summed, 0, sizeof root->summed);
    if (root->dt == DT_F32)
        root->dt = DT_F64;
}

/* The summand of a contraction: the product of its operands. */
void put_product(emitter *E, const g_value *v)
{
    put(E, "(double)");
    for (int i = 0; i < v->nin; i++) {
        if (i == 0 && v->coef_in[i] < 0)
            put(E, "1.0 / ");
        else if (i)
            put(E, v->coef_in[i] < 0 ? " / " : " * ");
        put_access(E, v->in[i]);
    }
}

/* The runtime's complex function for F (prims.inc). */
static const char *map_c_complex(emitter *E, map_fn f)
{
    emit_use(E, TXS_PRIM);
    switch (f) {
    case MAP_EXP: return "tx_p_cexp";
    case MAP_LOG: return "tx_p_clog";
    case MAP_SQRT: return "tx_p_csqrt";
    case MAP_SIN: return "tx_p_csin";
    case MAP_COS: return "tx_p_ccos";
    case MAP_TANH: return "tx_p_ctanh";
    default: TX_ASSERT(!"no complex function"); return "?";
    }
}

/* The value of complex elementwise V as a tx_c128 expression: the
   arithmetic on pairs of complex.inc, the functions of prims.inc. */
static void put_elementwise_c(emitter *E, const g_value *v)
{
    switch (v->op) {
    case OP_CONTRACT:
        if (v->coef != 1) {
            put(E, "tx_c_scale(");
            num_literal(E->out, v->coef);
            put(E, ", ");
        }
        for (int i = v->nin - 1; i >= 1; i--)
            put(E, v->coef_in[i] < 0 ? "tx_c_div(" : "tx_c_mul(");
        if (v->coef_in[0] < 0)
            put(E, "tx_c_div(tx_c_r(1.0), ");
        put_access_c(E, v->in[0]);
        if (v->coef_in[0] < 0)
            put(E, ")");
        for (int i = 1; i < v->nin; i++) {
            put(E, ", ");
            put_access_c(E, v->in[i]);
            put(E, ")");
        }
        if (v->coef != 1)
            put(E, ")");
        return;
    case OP_ADD:
        for (int i = v->nin - 1; i >= 1; i--)
            put(E, v->coef_in[i] < 0 ? "tx_c_sub(" : "tx_c_add(");
        for (int i = 0; i < v->nin; i++) {
            double c = v->coef_in[i];
            if (i) {
                put(E, ", ");
                c = c < 0 ? -c : c;
            }
            if (c != 1) {
                put(E, "tx_c_scale(");
                num_literal(E->out, c);
                put(E, ", ");
            }
            put_access_c(E, v->in[i]);
            if (c != 1)
                put(E, ")");
            if (i)
                put(E, ")");
        }
        return;
    case OP_MAP:
        switch (v->fn) {
        case MAP_POW:
            emit_use(E, TXS_PRIM);
            put(E, "tx_p_cpow(");
            put_access_c(E, v->in[0]);
            put(E, ", ");
            num_literal(E->out, v->fn_arg);
            put(E, ")");
            return;
        case MAP_CONJ:
            put(E, "tx_c_conj(");
            put_access_c(E, v->in[0]);
            put(E, ")");
            return;
        case MAP_WHERE:
            put(E, "tx_c_where((double)");
            put_access(E, v->in[0]);
            put(E, ", ");
            put_access_c(E, v->in[1]);
            put(E, ", ");
            put_access_c(E, v->in[2]);
            put(E, ")");
            return;
        default:
            put(E, "%s(", map_c_complex(E, v->fn));
            put_access_c(E, v->in[0]);
            put(E, ")");
            return;
        }
    default:
        TX_ASSERT(!"not an elementwise value");
    }
}

/* The C name of an elementwise function applied to double arguments. */
static const char *map_c_name(emitter *E, map_fn f)
{
    switch (f) {
    case MAP_EXP: return "exp";
    case MAP_LOG: return "log";
    case MAP_SQRT: return "sqrt";
    case MAP_ABS: return "fabs";
    case MAP_SIN: return "sin";
    case MAP_COS: return "cos";
    case MAP_TANH: return "tanh";
    case MAP_MAX: E->uses_fmax = 1; return "tx_fmax";
    case MAP_MIN: E->uses_fmin = 1; return "tx_fmin";
    default: return "?";
    }
}

int emit_f32_rounds(const g_value *v)
{
    if (v->dt != DT_F32)
        return 0;
    if (v->op == OP_ADD || (v->op == OP_CONTRACT && ls_empty(v->summed)))
        return 1;
    return v->op == OP_MAP && (v->fn == MAP_POW || v->fn == MAP_SQRT || v->fn == MAP_EXP || v->fn == MAP_LOG ||
                               v->fn == MAP_SIN || v->fn == MAP_COS || v->fn == MAP_TANH || v->fn == MAP_DIM);
}

/* C's literal of the constant C as an f32 operation takes it: rounded to
   float (numpy's rule for a Python number with a float32 array). */
static void f32_literal(emitter *E, double c)
{
    num_literal(E->out, (double)(float)c);
}

/* N opening "(float)(" of the steps of an f32 operation, each step then
   closed by put_f32_step. */
static void put_f32_open(emitter *E, int n)
{
    for (int i = 0; i < n; i++)
        put(E, "(float)(");
}

/* One step of an f32 operation: " OP (double)X)", the operand X as it is
   accessed, or when X is NULL the float constant C. */
static void put_f32_step(emitter *E, char op, const g_value *x, double c)
{
    put(E, " %c ", op);
    if (x) {
        put(E, "(double)");
        put_access(E, x);
    } else
        f32_literal(E, c);
    put(E, ")");
}

/* Term I of f32 sum V, its coefficient's magnitude C (or C itself for
   the first term): x, -x, or the product c*x rounded to float. */
static void put_f32_term(emitter *E, const g_value *x, double c)
{
    if (c == 1 || c == -1) {
        put(E, c < 0 ? "(-(double)" : "((double)");
        put_access(E, x);
        put(E, ")");
        return;
    }
    put(E, "(float)(");
    f32_literal(E, c);
    put(E, " * (double)");
    put_access(E, x);
    put(E, ")");
}

/* V, an f32 operation (emit_f32_rounds), as an expression whose every
   step is rounded to float (tx(5) ELEMENT TYPES): a sum term after term
   from the first, a product factor after factor from the first, its
   constant last (a reciprocal c / x first, with the constant when it is
   all), an integer power by repeated products, a function of the value
   in double rounded once. The blocks (emit_blocks.c's f32 path) take the
   same steps in float. */
static void put_elementwise_f32(emitter *E, const g_value *v)
{
    switch (v->op) {
    case OP_ADD:
        put_f32_open(E, v->nin - 1);
        put_f32_term(E, v->in[0], v->coef_in[0]);
        for (int i = 1; i < v->nin; i++) {
            double c = v->coef_in[i];
            put(E, c < 0 ? " - " : " + ");
            put_f32_term(E, v->in[i], c < 0 ? -c : c);
            put(E, ")");
        }
        return;
    case OP_CONTRACT: {
        int scaled = v->coef_in[0] < 0 && v->nin == 1;
        put_f32_open(E, v->nin - 1 + (v->coef != 1 && !scaled));
        if (v->coef_in[0] < 0) {
            put(E, "(float)(");
            f32_literal(E, scaled ? v->coef : 1.0);
            put(E, " / (double)");
            put_access(E, v->in[0]);
            put(E, ")");
        } else {
            put(E, "(double)");
            put_access(E, v->in[0]);
        }
        for (int i = 1; i < v->nin; i++)
            put_f32_step(E, v->coef_in[i] < 0 ? '/' : '*', v->in[i], 0);
        if (v->coef != 1 && !scaled)
            put_f32_step(E, '*', NULL, v->coef);
        return;
    }
    default:
        break;
    }
    if (v->fn == MAP_DIM) {
        put(E, "(float)(double)");
        put_extent(E, (tx_extent){(int)v->fn_arg, 0});
        return;
    }
    if (v->fn != MAP_POW) {
        put(E, "(float)%s((double)", map_c_name(E, v->fn));
        put_access(E, v->in[0]);
        put(E, ")");
        return;
    }
    double p = v->fn_arg;
    if (p == 0) {
        put(E, "1.0");
        return;
    }
    if (!emit_pow_by_products(p)) {
        put(E, "(float)pow((double)");
        put_access(E, v->in[0]);
        put(E, ", ");
        num_literal(E->out, p);
        put(E, ")");
        return;
    }
    int n = p < 0 ? -(int)p : (int)p;
    if (p < 0)
        put(E, "(float)(1.0 / ");
    put_f32_open(E, n - 1);
    put(E, "(double)");
    put_access(E, v->in[0]);
    for (int i = 1; i < n; i++)
        put_f32_step(E, '*', v->in[0], 0);
    if (p < 0)
        put(E, ")");
}

/* The value of elementwise V (map, linear combination, or a product with
   nothing summed) at the current loop indices, as a double expression. */
void put_elementwise(emitter *E, const g_value *v)
{
    if (!dt_complex(v->dt) && emit_f32_rounds(v)) {
        put_elementwise_f32(E, v);
        return;
    }
    if (dt_complex(v->dt)) {
        put_elementwise_c(E, v);
        return;
    }
    if (v->op == OP_MAP && ((v->fn == MAP_ABS && dt_complex(v->in[0]->dt)) || v->fn == MAP_CONJ ||
                            v->fn == MAP_REAL || v->fn == MAP_IMAG)) {
        /* a real result: conj, real, imag of anything, abs of a complex value */
        if (v->fn == MAP_ABS) {
            emit_use(E, TXS_PRIM);
            put(E, "tx_p_cabs(");
            put_access_c(E, v->in[0]);
            put(E, ")");
        } else
            put_part(E, v->in[0], v->fn == MAP_IMAG);
        return;
    }
    switch (v->op) {
    case OP_CONTRACT:
        if (v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put_product(E, v);
        break;
    case OP_ADD:
        for (int i = 0; i < v->nin; i++) {
            double c = v->coef_in[i];
            if (i || c < 0)
                put(E, c < 0 ? " - " : " + ");
            if (c != 1 && c != -1) {
                num_literal(E->out, c < 0 ? -c : c);
                put(E, " * ");
            }
            put(E, "(double)");
            put_access(E, v->in[i]);
        }
        break;
    case OP_MAP:
        if (v->fn == MAP_POW) {
            put_pow(E, v->in[0], v->fn_arg);
            break;
        }
        if (v->fn >= MAP_LT && v->fn <= MAP_NE) { /* C's comparisons: false with NaN but != */
            static const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
            put(E, "((double)");
            put_access(E, v->in[0]);
            put(E, " %s (double)", ops[v->fn - MAP_LT]);
            put_access(E, v->in[1]);
            put(E, " ? 1.0 : 0.0)");
            break;
        }
        if (v->fn == MAP_WHERE) {
            put(E, "((double)");
            put_access(E, v->in[0]);
            put(E, " != 0 ? (double)");
            put_access(E, v->in[1]);
            put(E, " : (double)");
            put_access(E, v->in[2]);
            put(E, ")");
            break;
        }
        if (v->fn == MAP_DIM) {
            put(E, "(double)");
            put_extent(E, (tx_extent){(int)v->fn_arg, 0});
            break;
        }
        if (v->fn == MAP_DELTA) { /* the loop indices themselves */
            put(E, "(");
            for (int i = 1; i < v->rank; i++) {
                put(E, i > 1 ? " && " : "");
                put_label(E, v->label[0]);
                put(E, " == ");
                put_label(E, v->label[i]);
            }
            put(E, v->rank > 1 ? " ? 1.0 : 0.0)" : "1.0)");
            break;
        }
        put(E, "%s((double)", map_c_name(E, v->fn));
        put_access(E, v->in[0]);
        if (v->nin == 2) {
            put(E, ", (double)");
            put_access(E, v->in[1]);
        }
        put(E, ")");
        break;
    default:
        TX_ASSERT(!"not an elementwise value");
    }
}

/* The identity of a reduce/scan operator, and the update acc = acc op x. */
const char *reduce_init(reduce_op r)
{
    switch (r) {
    case RED_ADD: return "0.0";
    case RED_MUL: return "1.0";
    case RED_MAX: return "(-1.0/0.0)";
    default: return "(1.0/0.0)";
    }
}

void put_reduce_update(emitter *E, reduce_op r, const g_value *x)
{
    switch (r) {
    case RED_ADD: put(E, "tx_acc += (double)"); put_access(E, x); break;
    case RED_MUL: put(E, "tx_acc *= (double)"); put_access(E, x); break;
    case RED_MAX:
        E->uses_fmax = 1;
        put(E, "tx_acc = tx_fmax((double)");
        put_access(E, x);
        put(E, ", tx_acc)");
        break;
    default:
        E->uses_fmin = 1;
        put(E, "tx_acc = tx_fmin((double)");
        put_access(E, x);
        put(E, ", tx_acc)");
        break;
    }
}

/* tx_acc += complex X written on the parts (ROOT as in parts_size), if
   it can be; 0 (nothing written) if not. */
static int put_acc_parts(emitter *E, const g_value *x, int root)
{
    if (parts_size(x, root) > PARTS_MAX)
        return 0;
    put(E, "{ tx_acc.re += ");
    put_parts_of(E, x, 0, root);
    put(E, "; tx_acc.im += ");
    put_parts_of(E, x, 1, root);
    put(E, "; }");
    return 1;
}

void put_reduce_update_c(emitter *E, reduce_op r, const g_value *x)
{
    TX_ASSERT(r == RED_ADD || r == RED_MUL);
    if (r == RED_MUL) {
        put(E, "tx_acc = tx_c_mul(tx_acc, ");
        put_access_c(E, x);
        put(E, ")");
        return;
    }
    if (!x->inlined || !dt_complex(x->dt)) { /* each part read in place */
        put(E, "{ tx_acc.re += ");
        put_part(E, x, 0);
        if (dt_complex(x->dt)) {
            put(E, "; tx_acc.im += ");
            put_part(E, x, 1);
        }
        put(E, "; }");
        return;
    }
    if (put_acc_parts(E, x, 0))
        return;
    put(E, "tx_acc = tx_c_add(tx_acc, ");
    put_access_c(E, x);
    put(E, ")");
}

/* acc += the summand of complex contraction V: a product of one or two
   operands read in place is written out on the parts (no calls, no
   copies of pairs); anything else goes through complex.inc. */
void put_contract_update_c(emitter *E, const g_value *v)
{
    int simple = v->nin <= 2;
    for (int i = 0; i < v->nin; i++)
        simple = simple && v->coef_in[i] > 0 && !(v->in[i]->inlined && dt_complex(v->in[i]->dt));
    if (!simple) {
        g_value root = *v;
        root.coef = 1;
        root.summed = (labelset){{0}}; /* (the summand: nothing summed in it) */
        if (put_acc_parts(E, &root, 1))
            return;
        put(E, "tx_acc = tx_c_add(tx_acc, ");
        put_elementwise(E, &root);
        put(E, ")");
        return;
    }
    if (v->nin == 1) {
        put_reduce_update_c(E, RED_ADD, v->in[0]);
        return;
    }
    const g_value *a = v->in[0], *b = v->in[1];
    if (!dt_complex(a->dt)) { /* the real one second */
        a = v->in[1];
        b = v->in[0];
    }
    for (int part = 0; part < 2; part++) {
        put(E, part ? "; tx_acc.im += " : "{ tx_acc.re += ");
        put_part(E, a, part);
        put(E, " * ");
        put_part(E, b, 0);
        if (dt_complex(b->dt)) {
            put(E, part ? " + " : " - ");
            put_part(E, a, !part);
            put(E, " * ");
            put_part(E, b, 1);
        }
    }
    put(E, "; }");
}

void put_map_index(emitter *E, const sym *m, int side)
{
    int n = side ? m->ndst : m->nsrc;
    const int *l = side ? m->dst : m->src;
    const tx_extent *x = side ? m->dst_ext : m->src_ext;
    for (int i = 0; i < n - 1; i++)
        put(E, "(");
    for (int i = 0; i < n; i++) {
        if (i) {
            put(E, ")*");
            put_extent(E, x[i]);
            put(E, " + ");
        }
        put_label(E, l[i]);
    }
}


/* The stride of mode P of S: the product of the extents after it, or
   the bound stride. P = -1: the product of every extent (the elements). */
void put_stride(emitter *E, const mode_seq *s, int p)
{
    if (s->stride && p >= 0) {
        put(E, "(%lld)", (long long)s->stride[p]);
        return;
    }
    int any = 0;
    for (int i = p + 1; i < s->n; i++) {
        put(E, any ? "*" : "(");
        put_extent(E, s->ext[i]);
        any = 1;
    }
    put(E, any ? ")" : "1");
}

void put_map_has(emitter *E, int map)
{
    const sym *m = SP(E)->maps[map];
    emit_use(E, TXS_PRIM);
    put(E, "tx_rt_map_has(");
    put_map(E, map);
    put(E, ", ");
    put_map_index(E, m, 0);
    put(E, ", ");
    put_map_index(E, m, 1);
    put(E, ")");
}

/* Distinct labels of V's operands that are in SET, in order of appearance. */
int labels_in(const g_value *v, labelset set, int *labels, tx_extent *ext)
{
    int n = 0;
    for (int i = 0; i < v->nin; i++)
        for (int m = 0; m < v->in[i]->rank; m++) {
            int l = v->in[i]->label[m], seen = 0;
            if (!ls_has(&set, l))
                continue;
            for (int k = 0; k < n; k++)
                seen |= labels[k] == l;
            if (!seen) {
                labels[n] = l;
                ext[n++] = v->in[i]->ext[m];
            }
        }
    return n;
}
