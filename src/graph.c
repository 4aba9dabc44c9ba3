/*
 * graph.c — the OpGraph: an SSA list of values in topological order
 * (matcha's Lambda, spidr's labelled node list). Each value is one op on
 * labelled, shaped tensor values. Lowering and every pass create and edit
 * values only through the builder below (graph_value_new, graph_set_*,
 * graph_insert_before, graph_replace_uses, graph_renumber), so the list's
 * bookkeeping lives in one place. graph_check states every invariant the
 * passes and the emitter rely on; it runs after lowering and after every
 * pass. The cost model (FLOPs, bytes) is here too: the listing and the
 * contraction order count the same way.
 */
#include <stdio.h>
#include <string.h>

#include "tx.h"

graph *graph_new(tx_arena *a, sema_program *S, const graph_spec *spec)
{
    graph *g = arena_alloc(a, sizeof *g);
    g->arena = a;
    g->S = S;
    g->label_names = S->cst->label_names;
    if (spec) { /* copied: the graph outlives the caller's arrays (a kept JIT graph) */
        g->spec.blas = spec->blas;
        g->spec.distributed = spec->distributed;
        if (spec->dim_values) {
            int64_t *d = arena_alloc(a, sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
            memcpy(d, spec->dim_values, sizeof(int64_t) * (size_t)S->nsym_dims);
            g->spec.dim_values = d;
        }
        if (spec->map_density && S->nmaps) {
            double *m = arena_alloc(a, sizeof(double) * (size_t)S->nmaps);
            memcpy(m, spec->map_density, sizeof(double) * (size_t)S->nmaps);
            g->spec.map_density = m;
        }
    }
    return g;
}

/* ---- building and editing values ---- */

/* Makes room for N operands in V (the first V->nin kept). */
static void reserve_operands(graph *g, g_value *v, int n)
{
    if (n <= v->in_cap)
        return;
    int cap = v->in_cap ? v->in_cap : 2;
    while (cap < n)
        cap *= 2;
    g_value **in = arena_alloc(g->arena, sizeof(g_value *) * (size_t)cap);
    double *c = arena_alloc(g->arena, sizeof(double) * (size_t)cap);
    for (int i = 0; i < v->nin; i++) {
        in[i] = v->in[i];
        c[i] = v->coef_in[i];
    }
    v->in = in;
    v->coef_in = c;
    v->in_cap = cap;
}

g_value *graph_value_new(graph *g, op_kind op, int nin, int stmt, tx_span span)
{
    g_value *v = arena_alloc(g->arena, sizeof *v);
    v->op = op;
    v->id = -1;
    v->stmt = stmt;
    v->span = span;
    v->coef = 1;
    if (nin > 0) {
        v->in = arena_alloc(g->arena, sizeof(g_value *) * (size_t)nin);
        v->coef_in = arena_alloc(g->arena, sizeof(double) * (size_t)nin);
        v->in_cap = nin;
    }
    v->nin = nin;
    for (int i = 0; i < nin; i++)
        v->coef_in[i] = 1;
    return v;
}

/* Is V one of the values of G's list (so its operands' use counts count it)? */
static int listed(const g_value *v)
{
    return v->id >= 0;
}

void graph_set_operand(g_value *v, int i, g_value *w, double c)
{
    TX_ASSERT(i >= 0 && i < v->nin && w);
    if (listed(v)) {
        if (v->in[i])
            v->in[i]->nuses--;
        w->nuses++;
    }
    v->in[i] = w;
    v->coef_in[i] = c;
}

void graph_add_operand(graph *g, g_value *v, g_value *w, double c)
{
    reserve_operands(g, v, v->nin + 1);
    v->in[v->nin++] = NULL;
    graph_set_operand(v, v->nin - 1, w, c);
}

void graph_set_operands(graph *g, g_value *v, int n, g_value *const *in, const double *c)
{
    for (int i = 0; listed(v) && i < v->nin; i++)
        if (v->in[i])
            v->in[i]->nuses--;
    reserve_operands(g, v, n);
    v->nin = n;
    for (int i = 0; i < n; i++) {
        TX_ASSERT(in[i]);
        v->in[i] = in[i];
        v->coef_in[i] = c ? c[i] : 1;
        if (listed(v))
            in[i]->nuses++;
    }
}

void graph_set_modes(g_value *v, int rank, const int *label, const tx_extent *ext)
{
    TX_ASSERT(rank >= 0 && rank <= TX_MAX_MODES);
    int l[TX_MAX_MODES];
    tx_extent x[TX_MAX_MODES];
    if (rank > 0) { /* LABEL may be V's own; NULL for rank 0 */
        memcpy(l, label, sizeof(int) * (size_t)rank);
        memcpy(x, ext, sizeof(tx_extent) * (size_t)rank);
    }
    v->rank = rank;
    memcpy(v->label, l, sizeof(int) * (size_t)rank);
    memcpy(v->ext, x, sizeof(tx_extent) * (size_t)rank);
}

void graph_set_modes_like(g_value *v, int rank, const int *label, const g_value *from)
{
    TX_ASSERT(rank >= 0 && rank <= TX_MAX_MODES);
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < rank; i++) {
        int m = 0;
        while (m < from->rank && from->label[m] != label[i])
            m++;
        TX_ASSERT(m < from->rank);
        ext[i] = from->ext[m];
    }
    graph_set_modes(v, rank, label, ext);
}

g_value *graph_add(graph *g, g_value *v)
{
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        g_value **nv = arena_alloc(g->arena, sizeof(g_value *) * (size_t)cap);
        if (g->n)
            memcpy(nv, g->v, sizeof(g_value *) * (size_t)g->n);
        g->v = nv;
        g->cap = cap;
    }
    v->id = g->n;
    g->v[g->n++] = v;
    for (int i = 0; i < v->nin; i++)
        v->in[i]->nuses++;
    return v;
}

struct graph_pending {
    int at;     /* id of the value it goes before */
    g_value *v;
};

void graph_insert_before(graph *g, g_value *at, g_value *v)
{
    TX_ASSERT(at->id >= 0 && at->id < g->n && g->v[at->id] == at && !listed(v));
    if (g->npending == g->pending_cap) {
        int cap = g->pending_cap ? 2 * g->pending_cap : 16;
        graph_pending *p = arena_alloc(g->arena, sizeof *p * (size_t)cap);
        if (g->npending)
            memcpy(p, g->pending, sizeof *p * (size_t)g->npending);
        g->pending = p;
        g->pending_cap = cap;
    }
    g->pending[g->npending].at = at->id;
    g->pending[g->npending++].v = v;
}

/* The value standing for V once replacements are followed. */
static g_value *current(g_value *v)
{
    while (v->replaced_by)
        v = v->replaced_by;
    return v;
}

void graph_kill(graph *g, g_value *v)
{
    (void)g;
    TX_ASSERT(v->nuses == 0 && !v->dead);
    v->dead = 1;
    for (int i = 0; listed(v) && i < v->nin; i++)
        v->in[i]->nuses--;
}

void graph_replace_uses(graph *g, g_value *old, g_value *nw)
{
    nw = current(nw);
    TX_ASSERT(old != nw && old->rank == nw->rank);
    old->replaced_by = nw;
    nw->nuses += old->nuses;
    old->nuses = 0;
    graph_kill(g, old);
}

void graph_follow_replaced(g_value *v)
{
    for (int i = 0; i < v->nin; i++)
        if (v->in[i]->replaced_by)
            v->in[i] = current(v->in[i]);
}

void graph_renumber(graph *g)
{
    if (g->npending) { /* splice queued values in before their places */
        int total = g->n + g->npending;
        g_value **list = arena_alloc(g->arena, sizeof(g_value *) * (size_t)total);
        int *first = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 2));
        for (int p = 0; p < g->npending; p++) /* counting sort by place, stable */
            first[g->pending[p].at + 1]++;
        for (int k = 0; k < g->n; k++)
            first[k + 1] += first[k];
        g_value **queued = arena_alloc(g->arena, sizeof(g_value *) * (size_t)g->npending);
        for (int p = 0; p < g->npending; p++)
            queued[first[g->pending[p].at]++] = g->pending[p].v;
        /* first[k] is now the end of place k's run; its start is first[k - 1] */
        int n = 0;
        for (int k = 0; k < g->n; k++) {
            for (int q = k ? first[k - 1] : 0; q < first[k]; q++)
                list[n++] = queued[q];
            list[n++] = g->v[k];
        }
        g->v = list;
        g->n = n;
        g->cap = total;
        g->npending = 0;
    }
    int n = 0;
    for (int k = 0; k < g->n; k++)
        if (g->v[k] && !g->v[k]->dead) /* removed or dead values leave the list */
            g->v[n++] = g->v[k];
    g->n = n;
    for (int k = 0; k < n; k++) {
        g->v[k]->id = k;
        g->v[k]->nuses = 0;
        graph_follow_replaced(g->v[k]);
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < g->v[k]->nin; i++)
            g->v[k]->in[i]->nuses++;
}

int graph_modes(const g_value *v, mode_seq *s)
{
    s->stride = NULL;
    if (v->op == OP_INDEX) {
        const g_value *w = v->in[0];
        s->n = w->rank;
        for (int m = 0; m < w->rank; m++) {
            s->label[m] = v->idx_label[m];
            s->chip[m] = v->idx_chip[m];
            s->ext[m] = w->ext[m];
        }
        return 0;
    }
    if ((v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE ||
         v->op == OP_SCAN || v->op == OP_SLICE || v->op == OP_PART || (v->op == OP_LINALG && v->nout == 1)) &&
        !v->inlined) {
        s->n = v->rank;
        for (int m = 0; m < v->rank; m++) {
            s->label[m] = v->label[m];
            s->chip[m] = 0;
            s->ext[m] = v->ext[m];
        }
        return 0;
    }
    return -1;
}

labelset graph_value_labels(const g_value *v)
{
    labelset s = {{0}};
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] >= 0)
            ls_add(&s, v->label[i]);
    return s;
}

labelset graph_iteration_labels(const g_value *v)
{
    labelset it = {{0}};
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] >= 0)
            ls_add(&it, v->label[i]);
    if (v->op == OP_STORE)
        for (int i = 0; i < v->rank; i++)
            ls_add(&it, v->store_label[i]);
    if (v->op == OP_CONTRACT || v->op == OP_REDUCE)
        it = ls_union(it, v->summed);
    return it;
}

int graph_map_covers(const graph *g, int map, labelset it)
{
    const sym *m = g->S->maps[map];
    for (int i = 0; i < m->nsrc; i++)
        if (!ls_has(&it, m->src[i]))
            return 0;
    for (int i = 0; i < m->ndst; i++)
        if (!ls_has(&it, m->dst[i]))
            return 0;
    return 1;
}

void graph_restrict(const graph *g, g_value *v, const int *maps, int n)
{
    labelset it = graph_iteration_labels(v);
    v->nmaps = 0;
    for (int k = 0; k < n && v->nmaps < 8; k++)
        if (graph_map_covers(g, maps[k], it))
            v->maps[v->nmaps++] = maps[k];
}

double graph_extent_estimate(const graph *g, tx_extent x)
{
    if (x.dim == EXT_DERIVED) {
        int64_t d[TX_MAX_LABELS];
        int n = g->S->nsym_dims < TX_MAX_LABELS ? g->S->nsym_dims : TX_MAX_LABELS;
        for (int i = 0; i < n; i++)
            d[i] = g->spec.dim_values && g->spec.dim_values[i] >= 0 ? g->spec.dim_values[i] : 64;
        int64_t v = sema_extent_eval(g->S, x, d);
        return v < 0 ? 64 : (double)v;
    }
    if (x.dim < 0)
        return (double)x.value;
    if (g->spec.dim_values && g->spec.dim_values[g->S->dims[x.dim]->index] >= 0)
        return (double)g->spec.dim_values[g->S->dims[x.dim]->index];
    return 64;
}

/* V appended to G's list, or queued before BEFORE. */
static g_value *add_or_queue(graph *g, g_value *v, g_value *before)
{
    if (!before)
        return graph_add(g, v);
    graph_insert_before(g, before, v);
    return v;
}

g_value *graph_store_whole(graph *g, g_value *v, const sym *t, const int *from, int stmt, tx_span span,
                           g_value *before)
{
    g_value *s = graph_value_new(g, OP_STORE, 1, stmt, span);
    graph_set_operand(s, 0, v, 1);
    s->store_op = '=';
    s->var = t->var;
    s->dt = t->dt;
    int positional[TX_MAX_MODES];
    for (int i = 0; i < t->rank; i++) {
        positional[i] = -1;
        s->store_label[i] = from[i];
    }
    graph_set_modes(s, t->rank, positional, t->ext);
    return add_or_queue(g, s, before);
}

g_value *graph_view(graph *g, g_value *s, const int *to, int stmt, tx_span span, g_value *before)
{
    g_value *ix = graph_value_new(g, OP_INDEX, 1, stmt, span);
    graph_set_operand(ix, 0, s, 1);
    ix->dt = s->dt;
    for (int i = 0; i < s->rank; i++) {
        ix->idx_label[i] = to[i];
        ix->idx_chip[i] = 0;
        ix->chip_span[i] = span;
    }
    graph_set_modes(ix, s->rank, to, s->ext);
    return add_or_queue(g, ix, before);
}

int64_t graph_extent_known(const graph *g, tx_extent x)
{
    if (x.dim == EXT_DERIVED) {
        int64_t d[TX_MAX_LABELS];
        int n = g->S->nsym_dims < TX_MAX_LABELS ? g->S->nsym_dims : TX_MAX_LABELS;
        for (int i = 0; i < n; i++)
            d[i] = g->spec.dim_values ? g->spec.dim_values[i] : -1;
        return sema_extent_eval(g->S, x, d);
    }
    if (x.dim < 0)
        return x.value;
    if (g->spec.dim_values && g->spec.dim_values[g->S->dims[x.dim]->index] >= 0)
        return g->spec.dim_values[g->S->dims[x.dim]->index];
    return -1;
}

const char *graph_label_name(const graph *g, int label)
{
    return label >= 0 ? g->label_names[label] : "?";
}

/* Equal extents, or a derived one the program checks at run time. */
static int ext_ok(tx_extent a, tx_extent b)
{
    return ext_eq(a, b) || a.dim == EXT_DERIVED || b.dim == EXT_DERIVED;
}

static int has_label(const g_value *v, int l)
{
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] == l)
            return i;
    return -1;
}

#define FAIL(...) do { snprintf(msg, msglen, __VA_ARGS__); return -1; } while (0)

int graph_check(const graph *g, char *msg, size_t msglen)
{
    for (int k = 0; k < g->n; k++) {
        const g_value *v = g->v[k];
        if (v->id != k)
            FAIL("%%%d: id is %d", k, v->id);
        if (v->rank < 0 || v->rank > TX_MAX_MODES)
            FAIL("%%%d: rank %d", k, v->rank);
        for (int i = 0; i < v->nin; i++) {
            const g_value *w = v->in[i];
            if (!w || w->id < 0 || w->id >= k || g->v[w->id] != w)
                FAIL("%%%d: operand %d is not an earlier value", k, i);
        }
        int labelled = v->op != OP_INPUT && v->op != OP_STORE;
        for (int i = 0; i < v->rank; i++) {
            if (labelled && v->label[i] < 0)
                FAIL("%%%d: mode %d has no label", k, i);
            if (!labelled && v->label[i] != -1)
                FAIL("%%%d: a variable value has labelled modes", k);
            for (int j = 0; j < i; j++)
                if (labelled && v->label[j] == v->label[i])
                    FAIL("%%%d: label %s twice", k, graph_label_name(g, v->label[i]));
        }
        /* every operand label has the same extent here as there (a call's
           labels are its own) */
        if (labelled && v->op != OP_INDEX && v->op != OP_LINALG && v->op != OP_PART && v->op != OP_SLICE)
            for (int i = 0; i < v->nin; i++) {
                const g_value *w = v->in[i];
                for (int m = 0; m < w->rank; m++) {
                    int p = has_label(v, w->label[m]);
                    if (p >= 0 && !ext_ok(v->ext[p], w->ext[m]))
                        FAIL("%%%d: label %s has two extents", k, graph_label_name(g, w->label[m]));
                }
            }
        switch (v->op) {
        case OP_INPUT:
            if (v->nin != 0)
                FAIL("%%%d: input with operands", k);
            break;
        case OP_CONST:
            if (v->nin != 0 || v->rank != 0)
                FAIL("%%%d: const is not a scalar", k);
            break;
        case OP_INDEX: {
            const g_value *w = v->in[0];
            if (v->nin != 1 || (w->op != OP_INPUT && w->op != OP_STORE))
                FAIL("%%%d: index of a value that is not a variable", k);
            for (int m = 0; m < w->rank; m++) {
                int l = v->idx_label[m];
                if (l < 0)
                    continue;
                int p = has_label(v, l);
                if (p < 0)
                    FAIL("%%%d: index label %s is not a mode", k, graph_label_name(g, l));
                if (!ext_ok(v->ext[p], w->ext[m]))
                    FAIL("%%%d: index label %s has the wrong extent", k, graph_label_name(g, l));
            }
            break;
        }
        case OP_CONTRACT: {
            labelset all = {{0}}, out = {{0}};
            for (int i = 0; i < v->nin; i++) {
                if (v->coef_in[i] != 1 && v->coef_in[i] != -1)
                    FAIL("%%%d: exponent %g", k, v->coef_in[i]);
                for (int m = 0; m < v->in[i]->rank; m++)
                    ls_add(&all, v->in[i]->label[m]);
            }
            for (int i = 0; i < v->rank; i++)
                ls_add(&out, v->label[i]);
            if (!ls_eq(ls_inter(all, out), out))
                FAIL("%%%d: an output label comes from no operand", k);
            if (!ls_eq(ls_minus(all, out), v->summed))
                FAIL("%%%d: summed labels are not the operands' labels less the output's", k);
            break;
        }
        case OP_REDUCE: {
            labelset all = {{0}}, out = {{0}};
            if (v->nin != 1)
                FAIL("%%%d: reduce of %d operands", k, v->nin);
            for (int m = 0; m < v->in[0]->rank; m++)
                ls_add(&all, v->in[0]->label[m]);
            for (int i = 0; i < v->rank; i++)
                ls_add(&out, v->label[i]);
            if (!ls_eq(ls_inter(all, out), out) || !ls_eq(ls_minus(all, out), v->summed))
                FAIL("%%%d: reduced labels are not the operand's labels less the output's", k);
            break;
        }
        case OP_LINALG:
            if (v->nin < 1 || v->nin > 2 || (v->nout == 1 && v->rank < 1) || (v->nout > 1 && v->rank != 0))
                FAIL("%%%d: a linear-algebra node of the wrong shape", k);
            break;
        case OP_PART:
            if (v->nin != 1 || v->in[0]->op != OP_LINALG || v->part >= v->in[0]->nout)
                FAIL("%%%d: part of something that is not a multi-result call", k);
            break;
        case OP_SLICE:
            if (v->nin != 1 || v->rank != v->in[0]->rank)
                FAIL("%%%d: slice changes the rank", k);
            for (int m = 0; m < v->rank; m++)
                if (has_label(v->in[0], v->label[m]) < 0)
                    FAIL("%%%d: slice label %s is not its operand's", k, graph_label_name(g, v->label[m]));
            break;
        case OP_SCAN:
            if (v->nin != 1 || v->rank != v->in[0]->rank || has_label(v, v->scan_label) < 0)
                FAIL("%%%d: scan changes the shape or lacks its label", k);
            for (int m = 0; m < v->in[0]->rank; m++)
                if (has_label(v, v->in[0]->label[m]) < 0)
                    FAIL("%%%d: scan loses label %s", k, graph_label_name(g, v->in[0]->label[m]));
            break;
        case OP_ADD:
        case OP_MAP:
            for (int i = 0; i < v->nin; i++)
                for (int m = 0; m < v->in[i]->rank; m++)
                    if (has_label(v, v->in[i]->label[m]) < 0)
                        FAIL("%%%d: operand %d label %s is not an output label", k, i,
                             graph_label_name(g, v->in[i]->label[m]));
            if (v->op == OP_MAP && v->nin != map_arity(v->fn))
                FAIL("%%%d: map has %d operands", k, v->nin);
            break;
        case OP_STORE: {
            const g_value *w = v->in[0];
            for (int m = 0; m < w->rank; m++) {
                int found = 0;
                for (int i = 0; i < v->rank; i++)
                    if (v->store_label[i] == w->label[m]) {
                        found = 1;
                        if (!ext_ok(v->ext[i], w->ext[m]))
                            FAIL("%%%d: stored label %s has the wrong extent", k,
                                 graph_label_name(g, w->label[m]));
                    }
                if (!found)
                    FAIL("%%%d: stored value has label %s the target lacks", k,
                         graph_label_name(g, w->label[m]));
            }
            if (v->store_op != '=' && (v->nin != 2 || v->in[1]->var != v->var))
                FAIL("%%%d: accumulation without the previous value", k);
            break;
        }
        }
    }
    return 0;
}

/* ---- printing ---- */

static void print_extent(const graph *g, tx_buf *o, tx_extent e)
{
    if (e.dim == EXT_DERIVED)
        buf_puts(o, "(");
    sema_extent_print(g->S, e, o);
    if (e.dim == EXT_DERIVED)
        buf_puts(o, ")");
}

const char *graph_la_name(la_fn f)
{
    static const char *names[] = {"?", "cholesky", "inv", "pow", "solve", "eigh", "qr", "svd", "slice", "grad", "gaps", "cholgrad"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static void print_type(const graph *g, tx_buf *o, const g_value *v)
{
    buf_puts(o, dt_name(v->dt));
    buf_puts(o, "[");
    for (int i = 0; i < v->rank; i++) {
        if (i)
            buf_puts(o, ",");
        if (v->label[i] >= 0)
            buf_printf(o, "%s:", graph_label_name(g, v->label[i]));
        print_extent(g, o, v->ext[i]);
    }
    buf_puts(o, "]");
}

const char *graph_map_name(map_fn f)
{
    static const char *names[] = {"?", "pow", "exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "conj", "real",
                                  "imag", "max", "min",
                                  "<", "<=", ">", ">=", "==", "!=", "where", "dim", "delta"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

const char *graph_reduce_name(reduce_op r)
{
    static const char *names[] = {"?", "+", "*", "max", "min"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

static void print_labelset(const graph *g, tx_buf *o, labelset s)
{
    int first = 1;
    for (int id = 0; id < TX_MAX_LABELS; id++)
        if (ls_has(&s, id)) {
            buf_printf(o, "%s%s", first ? "" : ",", graph_label_name(g, id));
            first = 0;
        }
}

static const char *var_name(const graph *g, int var)
{
    return g->S->vars[var]->name;
}

static void print_op(const graph *g, tx_buf *o, const g_value *v, int dot)
{
    const char *sep = dot ? "\n" : " ";
    switch (v->op) {
    case OP_INPUT:
        buf_printf(o, "input %s", var_name(g, v->var));
        break;
    case OP_CONST:
        if (dt_complex(v->dt))
            buf_printf(o, "const %.17g%+.17gi", v->coef, v->coef_im);
        else
            buf_printf(o, "const %.17g", v->coef);
        break;
    case OP_INDEX: {
        buf_printf(o, "index %%%d(\"", v->in[0]->id);
        for (int m = 0; m < v->in[0]->rank; m++) {
            if (m)
                buf_puts(o, ",");
            if (v->idx_label[m] >= 0)
                buf_puts(o, graph_label_name(g, v->idx_label[m]));
            else
                buf_printf(o, "%lld", (long long)v->idx_chip[m]);
        }
        buf_puts(o, "\")");
        break;
    }
    case OP_CONTRACT:
        buf_puts(o, "contract ");
        if (v->coef != 1)
            buf_printf(o, "%.17g * ", v->coef);
        for (int i = 0; i < v->nin; i++)
            buf_printf(o, "%s%%%d", i == 0 ? (v->coef_in[i] < 0 ? "1 / " : "")
                                           : (v->coef_in[i] < 0 ? " / " : " * "),
                       v->in[i]->id);
        if (!ls_empty(v->summed)) {
            buf_printf(o, "%sover ", sep);
            print_labelset(g, o, v->summed);
        }
        break;
    case OP_ADD:
        buf_puts(o, "add ");
        for (int i = 0; i < v->nin; i++) {
            double c = v->coef_in[i];
            if (i)
                buf_puts(o, c < 0 ? " - " : " + ");
            else if (c < 0)
                buf_puts(o, "-");
            if (c != 1 && c != -1)
                buf_printf(o, "%.17g * ", c < 0 ? -c : c);
            buf_printf(o, "%%%d", v->in[i]->id);
        }
        break;
    case OP_MAP:
        if (v->fn == MAP_POW)
            buf_printf(o, "map %%%d ^ %.17g", v->in[0]->id, v->fn_arg);
        else if (v->fn == MAP_DIM)
            buf_printf(o, "map dim %s", g->S->dims[(int)v->fn_arg]->name);
        else if (v->fn == MAP_DELTA)
            buf_printf(o, "map delta");
        else if (v->fn >= MAP_LT && v->fn <= MAP_NE)
            buf_printf(o, "map %%%d %s %%%d", v->in[0]->id, graph_map_name(v->fn), v->in[1]->id);
        else if (v->nin == 3)
            buf_printf(o, "map %s(%%%d, %%%d, %%%d)", graph_map_name(v->fn), v->in[0]->id, v->in[1]->id,
                       v->in[2]->id);
        else if (v->nin == 2)
            buf_printf(o, "map %s(%%%d, %%%d)", graph_map_name(v->fn), v->in[0]->id, v->in[1]->id);
        else
            buf_printf(o, "map %s(%%%d)", graph_map_name(v->fn), v->in[0]->id);
        break;
    case OP_REDUCE:
        buf_printf(o, "reduce %s %%%d%sover ", graph_reduce_name(v->red), v->in[0]->id, sep);
        print_labelset(g, o, v->summed);
        break;
    case OP_LINALG:
        buf_printf(o, "%s %%%d", graph_la_name(v->la), v->in[0]->id);
        if (v->nin > 1)
            buf_printf(o, ", %%%d", v->in[1]->id);
        if (v->la == LA_POW)
            buf_printf(o, ", %lld", (long long)v->la_pow);
        if (v->nout > 1)
            buf_printf(o, " -> %d results", v->nout);
        break;
    case OP_PART:
        buf_printf(o, "result %d of %%%d", v->part + 1, v->in[0]->id);
        break;
    case OP_SLICE:
        buf_printf(o, "slice %%%d from [", v->in[0]->id);
        for (int m = 0; m < v->rank; m++) {
            if (m)
                buf_puts(o, ", ");
            sema_extent_print(g->S, v->slice_lo[m], o);
        }
        buf_puts(o, "]");
        break;
    case OP_SCAN:
        buf_printf(o, "scan%s %s %%%d along %s", v->scan_reverse ? "r" : "", graph_reduce_name(v->red),
                   v->in[0]->id, graph_label_name(g, v->scan_label));
        break;
    case OP_STORE:
        buf_printf(o, "store %s(\"", var_name(g, v->var));
        for (int i = 0; i < v->rank; i++)
            buf_printf(o, "%s%s", i ? "," : "", graph_label_name(g, v->store_label[i]));
        buf_printf(o, "\") %s %%%d", v->store_op == '=' ? "=" : v->store_op == '+' ? "+=" : "-=",
                   v->in[0]->id);
        break;
    }
}

/* Escapes text for a DOT double-quoted label. */
static void dot_escape(tx_buf *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n') {
            buf_puts(o, "\\n");
            continue;
        }
        if (*s == '"' || *s == '\\')
            buf_put(o, "\\", 1);
        buf_put(o, s, 1);
    }
}

static double elements(const graph *g, const g_value *v)
{
    double z = 1;
    for (int i = 0; i < v->rank; i++)
        z *= graph_extent_estimate(g, v->ext[i]);
    return z;
}

double graph_contract_cost(const double *ext, labelset all, labelset out, int nterms)
{
    double z = 1;
    for (int w = 0; w < TX_MAX_LABELS / 64; w++) /* in label order */
        for (uint64_t b = all.w[w]; b; b &= b - 1)
            z *= ext[w * 64 + __builtin_ctzll(b)];
    double mul = nterms > 1 ? nterms - 1 : 1;
    return z * (mul + (ls_eq(all, out) ? 0 : 1));
}

double graph_contract_flops(const graph *g, const g_value *v)
{
    labelset all = graph_value_labels(v), out = all;
    double ext[TX_MAX_LABELS];
    for (int i = 0; i < v->nin; i++)
        for (int m = 0; m < v->in[i]->rank; m++) {
            ls_add(&all, v->in[i]->label[m]);
            ext[v->in[i]->label[m]] = graph_extent_estimate(g, v->in[i]->ext[m]);
        }
    for (int m = 0; m < v->rank; m++)
        ext[v->label[m]] = graph_extent_estimate(g, v->ext[m]);
    return graph_contract_cost(ext, all, out, v->nin);
}

double graph_map_density(const graph *g, int map)
{
    return g->spec.map_density ? g->spec.map_density[map] : 0.1;
}

/* T's extents: the N modes EXT. */
static void term_modes(flops_term *t, const tx_extent *ext, int n)
{
    t->n = n;
    for (int i = 0; i < n; i++)
        t->ext[i] = ext[i];
}

void graph_value_flops_term(const graph *g, const g_value *v, flops_term *t)
{
    /* in real operations, as LAPACK counts zgemm's (8mnk against dgemm's
       2mnk): a complex multiply-add is 4 real flops per real one, a
       complex add 2 */
    double cx_mul = dt_complex(v->dt) ? 4 : 1, cx_add = dt_complex(v->dt) ? 2 : 1;
    (void)g;
    t->outer = 1;
    t->inner = 1;
    t->n = 0;
    switch (v->op) {
    case OP_CONTRACT: { /* graph_contract_cost: each label once, in label order */
        labelset all = graph_value_labels(v), out = all;
        tx_extent ext[TX_MAX_LABELS];
        for (int i = 0; i < v->nin; i++)
            for (int m = 0; m < v->in[i]->rank; m++) {
                ls_add(&all, v->in[i]->label[m]);
                ext[v->in[i]->label[m]] = v->in[i]->ext[m];
            }
        for (int m = 0; m < v->rank; m++)
            ext[v->label[m]] = v->ext[m];
        for (int w = 0; w < TX_MAX_LABELS / 64; w++)
            for (uint64_t b = all.w[w]; b; b &= b - 1)
                t->ext[t->n++] = ext[w * 64 + __builtin_ctzll(b)];
        t->outer = cx_mul;
        t->inner = (v->nin > 1 ? v->nin - 1 : 1) + (ls_eq(all, out) ? 0 : 1);
        break;
    }
    case OP_ADD:
        t->outer = cx_add;
        t->inner = v->nin > 1 ? v->nin - 1 : 1;
        term_modes(t, v->ext, v->rank);
        break;
    case OP_MAP:
    case OP_SCAN:
    case OP_SLICE:
        term_modes(t, v->ext, v->rank);
        break;
    case OP_REDUCE:
        t->outer = cx_mul;
        term_modes(t, v->in[0]->ext, v->in[0]->rank);
        break;
    case OP_LINALG: /* of the order of n^3; the gaps of n values (or their weights' check) n^2 */
        t->outer = cx_mul;
        for (int i = 0; i < (v->la == LA_GAPS ? 2 : 3) && v->in[0]->rank; i++)
            t->ext[t->n++] = v->in[0]->ext[0];
        break;
    default:
        t->outer = 0;
        break;
    }
}

double graph_value_flops(const graph *g, const g_value *v)
{
    flops_term t;
    graph_value_flops_term(g, v, &t);
    double z = 1;
    for (int i = 0; i < t.n; i++)
        z *= graph_extent_estimate(g, t.ext[i]);
    return t.outer * (z * t.inner);
}

double graph_value_bytes(const graph *g, const g_value *v)
{
    int mem = (v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE ||
               v->op == OP_SCAN || v->op == OP_SLICE || v->op == OP_PART ||
               (v->op == OP_LINALG && v->nout == 1)) && !v->inlined && !(v->blas && v->blas->store) && !v->into;
    return mem ? elements(g, v) * dt_size(v->dt) : 0;
}

double graph_flops(const graph *g)
{
    double f = 0;
    for (int k = 0; k < g->n; k++)
        f += graph_value_flops(g, g->v[k]);
    return f;
}

void graph_print(const graph *g, tx_buf *out, int dot)
{
    double total_flops = 0, total_bytes = 0;
    if (dot)
        buf_puts(out, "digraph opgraph {\n  node [shape=box, fontname=\"monospace\"];\n");
    for (int k = 0; k < g->n; k++) {
        const g_value *v = g->v[k];
        if (v->dead)
            continue;
        tx_buf line = {0};
        print_op(g, &line, v, dot);
        buf_puts(&line, dot ? "\n" : " : ");
        print_type(g, &line, v);
        double fl = graph_value_flops(g, v), by = graph_value_bytes(g, v);
        total_flops += fl;
        total_bytes += by;
        if (dot && (fl || by))
            buf_printf(&line, "\n%.3g flop, %.3g B", fl, by);
        if (dot && v->blas)
            buf_printf(&line, "\nBLAS %s%s%s", v->blas->nm == 0 && v->blas->nn == 0 ? "dot"
                                              : v->blas->nm == 0 || v->blas->nn == 0 ? "gemv" : "gemm",
                       v->blas->conj ? " of a conjugate" : "", v->blas->store ? ", into the tensor" : "");
        if (dot && v->inlined)
            buf_puts(&line, "\nfused into its user");
        if (dot && v->nmaps)
            buf_printf(&line, "\nloops follow sparse map %s%s", g->S->maps[v->maps[0]]->name,
                       v->nmaps > 1 ? ", ..." : "");
        if (dot) {
            buf_printf(out, "  v%d [label=\"%%%d = ", k, k);
            dot_escape(out, line.p ? line.p : "");
            buf_printf(out, "\"%s%s];\n", v->nuses > 1 ? ", style=bold" : "",
                       v->inlined ? ", style=dashed" : v->blas ? ", color=blue" : "");
            for (int i = 0; i < v->nin; i++)
                buf_printf(out, "  v%d -> v%d;\n", v->in[i]->id, k);
        } else {
            buf_printf(out, "%%%d = %s", k, line.p ? line.p : "");
            if (v->nuses > 1)
                buf_printf(out, "   (%d uses)", v->nuses);
            if (v->inlined)
                buf_puts(out, v->nuses > 1 ? "   (fused into its users)" : "   (fused into its user)");
            if (v->blas) {
                buf_printf(out, "   (BLAS %s%s",
                           v->blas->nm == 0 && v->blas->nn == 0 ? "dot" : v->blas->nm == 0 || v->blas->nn == 0 ? "gemv" : "gemm",
                           v->blas->store ? ", into the stored tensor" : "");
                if (v->blas->conj) /* zdotc: the operand read is x, the dot conj(x) . y */
                    buf_printf(out, ", of conj(%%%d)", v->in[v->blas->conj - 1]->id);
                for (int i = 0; i < v->blas->nl; i++)
                    buf_printf(out, "%s%s", i ? "," : ", in loops over ", graph_label_name(g, v->blas->loop[i]));
                buf_puts(out, ")");
            }
            if (v->into)
                buf_puts(out, "   (into the stored tensor)");
            if (v->absorbed)
                buf_puts(out, v->in[0]->into ? "   (written by the scan)" : "   (written by the BLAS call)");
            if (v->row_group)
                buf_printf(out, "   (row tiles with %%%d)", v->row_group - 1);
            if (v->row_ahead)
                buf_puts(out, "   (ahead of a row group)");
            for (int m = 0; m < v->nmaps; m++)
                buf_printf(out, "%s%s", m ? ", " : "   (loops follow sparse map ", g->S->maps[v->maps[m]]->name);
            if (v->nmaps)
                buf_puts(out, ")");
            if (fl || by)
                buf_printf(out, "   [%.3g flop, %.3g B]", fl, by);
            buf_puts(out, "\n");
        }
        buf_free(&line);
    }
    if (dot)
        buf_puts(out, "}\n");
    else {
        double pair = 0;
        for (int k = 0; k < g->n; k++)
            if (g->v[k]->op == OP_CONTRACT && g->v[k]->nin >= 2)
                pair += graph_contract_flops(g, g->v[k]);
        buf_printf(out, "# contractions: %.17g flop\n", pair);
        double moved = 0;
        int ncopies = graph_copies(g, &moved);
        buf_printf(out, "# copies: %d, %.4g B moved\n", ncopies, moved);
        buf_printf(out, "# total: %.4g flop, %.4g B of intermediates", total_flops, total_bytes);
        int estimated = 0;
        for (int i = 0; i < g->S->nsym_dims; i++)
            if (!g->spec.dim_values || g->spec.dim_values[i] < 0)
                estimated = 1;
        buf_puts(out, estimated ? " (extents not given are taken as 64)\n" : "\n");
    }
}

int graph_is_elementwise(const g_value *v)
{
    return v->op == OP_MAP || v->op == OP_ADD || (v->op == OP_CONTRACT && ls_empty(v->summed));
}

int graph_is_copy(const g_value *v)
{
    return v->op == OP_CONTRACT && v->nin == 1 && v->coef_in[0] == 1 && v->coef == 1 && ls_empty(v->summed) &&
           !v->inlined && !v->dead;
}

int graph_copies(const graph *g, double *bytes)
{
    int n = 0;
    double b = 0;
    for (int k = 0; k < g->n; k++)
        if (graph_is_copy(g->v[k])) {
            n++;
            b += elements(g, g->v[k]) * ((g->v[k]->dt == DT_F32 ? 4 : 8) + (g->v[k]->in[0]->dt == DT_F32 ? 4 : 8));
        }
    if (bytes)
        *bytes = b;
    return n;
}

static int views_read(const g_value *v, unsigned char *read, int depth)
{
    if (depth > 64)
        return 0;
    if (v->op == OP_INDEX) {
        read[v->in[0]->var] = 1;
        return 1;
    }
    if (v->op == OP_INPUT || v->op == OP_STORE) { /* a tensor read as the value itself (a scalar) */
        read[v->var] = 1;
        return 1;
    }
    if (!graph_is_elementwise(v) && depth > 0)
        return 1; /* computed in memory where it stands */
    for (int i = 0; i < v->nin; i++)
        if (!views_read(v->in[i], read, depth + 1))
            return 0;
    return 1;
}

int graph_views_read(const g_value *v, unsigned char *read)
{
    return views_read(v, read, 0);
}

double graph_value_elements(const graph *g, const g_value *v)
{
    return elements(g, v);
}

const char *graph_op_name(op_kind op)
{
    static const char *names[] = {"?", "input", "index", "const", "contract", "add", "map", "reduce",
                                  "scan", "linalg", "part", "slice", "store"};
    return op >= OP_INPUT && op <= OP_STORE ? names[op] : "?";
}
