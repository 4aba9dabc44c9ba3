/*
 * pass_delta.c — a Kronecker delta summed against is a renaming.
 *
 *     C("i,k") = A("i,j") * delta("j,k")      becomes   C("i,k") = A("i,k")
 *     t = A("i,j") * delta("i,j")             becomes   t = A("j,j")
 *     E("a,c") = (B("a,j") + D("j")) * delta("j,c")   becomes   B("a,c") + D("c")
 *
 * Where a contraction sums a label s of a delta, the sum over s has one
 * non-zero term, at s = t for another label t of the delta: the other
 * operands are read with t in place of s and the delta loses s (it goes
 * when one label is left). Lowered as it is written, the delta is a
 * tensor of compared indices multiplied in: an n x n x n loop for the
 * first line above instead of a copy.
 *
 * Only where that is the same number: s and t of the same extent (a
 * rectangular delta cuts the range), the delta a factor (not a
 * denominator), and every operand read with s one that can be read with
 * t: a tensor (a diagonal read where it has t too) or an elementwise
 * value, a sum, a product or a reduce over such, none of which sums t
 * itself (t there is another index, which renaming would capture). A
 * delta whose labels are all kept (F("p,q") = h("p,q") + delta("p,q") *
 * e("p")) sums nothing and stays.
 */
#include <string.h>

#include "tx.h"

/* A copy of V not in the list yet, with operands of its own. */
static g_value *clone(graph *g, const g_value *v)
{
    g_value *c = graph_value_new(g, v->op, v->nin, v->stmt, v->span);
    g_value **in = c->in;
    double *coef_in = c->coef_in;
    *c = *v;
    c->in = in;
    c->coef_in = coef_in;
    c->in_cap = v->nin;
    c->id = -1;
    c->nuses = 0;
    c->dead = 0;
    c->replaced_by = NULL;
    for (int i = 0; i < v->nin; i++) {
        c->in[i] = v->in[i];
        c->coef_in[i] = v->coef_in[i];
    }
    return c;
}

static int has(const g_value *v, int l)
{
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] == l)
            return 1;
    return 0;
}

/* V's modes with S renamed T (merged into T's mode where V has both). */
static void rename_modes(g_value *v, int s, int t)
{
    int n = 0, label[TX_MAX_MODES];
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < v->rank; i++) {
        int l = v->label[i] == s ? t : v->label[i], seen = 0;
        for (int j = 0; j < n; j++)
            seen |= label[j] == l;
        if (!seen) {
            label[n] = l;
            ext[n++] = v->ext[i];
        }
    }
    graph_set_modes(v, n, label, ext);
}

/* V read with label S as T, queued before AT (operands first); NULL if
   some value on the way cannot be. V itself when it does not have S. */
static g_value *renamed(graph *g, g_value *v, int s, int t, g_value *at)
{
    if (!has(v, s))
        return v;
    if (v->nmaps)
        return NULL;
    switch (v->op) {
    case OP_INDEX:
        break;
    case OP_MAP:
        if (v->fn == MAP_DELTA && v->rank == 2 && has(v, t))
            return NULL; /* it would become delta("t") */
        break;
    case OP_ADD:
        break;
    case OP_CONTRACT:
    case OP_REDUCE:
        if (ls_has(&v->summed, t))
            return NULL;
        break;
    default:
        return NULL;
    }
    g_value *c = clone(g, v);
    for (int i = 0; i < c->nin; i++) {
        g_value *w = renamed(g, c->in[i], s, t, at);
        if (!w)
            return NULL;
        c->in[i] = w;
    }
    if (c->op == OP_INDEX)
        for (int m = 0; m < c->in[0]->rank; m++)
            if (c->idx_label[m] == s)
                c->idx_label[m] = t;
    rename_modes(c, s, t);
    graph_insert_before(g, at, c);
    return c;
}

/* The label of delta D other than S that S can be renamed to: the same
   extent; one of the output's labels first (the sum goes away). -1 if
   none. */
static int partner(const g_value *d, int s, const g_value *v)
{
    tx_extent es = {0, 0};
    for (int i = 0; i < d->rank; i++)
        if (d->label[i] == s)
            es = d->ext[i];
    int best = -1;
    for (int i = 0; i < d->rank; i++) {
        int l = d->label[i];
        if (l == s || !ext_eq(d->ext[i], es))
            continue;
        if (best < 0 || (has(v, l) && !has(v, best)))
            best = l;
    }
    return best;
}

/* One renaming in contraction V, if any applies: 1 done, 0 none. */
static int rename_one(graph *g, g_value *v)
{
    for (int k = 0; k < v->nin; k++) {
        g_value *d = v->in[k];
        if (d->op != OP_MAP || d->fn != MAP_DELTA || v->coef_in[k] != 1)
            continue;
        for (int m = 0; m < d->rank; m++) {
            int s = d->label[m];
            if (!ls_has(&v->summed, s))
                continue;
            int t = partner(d, s, v), others = 0;
            for (int i = 0; i < v->nin; i++)
                others += i != k && has(v->in[i], s);
            if (t < 0 || !others)
                continue;
            g_value **in = arena_alloc(g->arena, sizeof(g_value *) * (size_t)v->nin);
            double *ex = arena_alloc(g->arena, sizeof(double) * (size_t)v->nin);
            int n = 0, ok = 1, mark = g->npending;
            for (int i = 0; i < v->nin && ok; i++) {
                g_value *w = v->in[i];
                if (i == k) {
                    if (d->rank == 2)
                        continue; /* one label left: the delta is 1 */
                    w = clone(g, d);
                    rename_modes(w, s, t);
                    graph_insert_before(g, v, w);
                } else
                    w = renamed(g, w, s, t, v);
                ok = w != NULL;
                in[n] = w;
                ex[n++] = v->coef_in[i];
            }
            if (!ok) {
                g->npending = mark; /* the clones queued for this try: dropped */
                continue;
            }
            graph_set_operands(g, v, n, in, ex);
            ls_del(&v->summed, s);
            return 1;
        }
    }
    return 0;
}

void pass_delta(graph *g)
{
    int changed = 0;
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->op != OP_CONTRACT || v->nmaps || v->dead)
            continue;
        while (rename_one(g, v))
            changed = 1;
    }
    if (changed)
        graph_renumber(g); /* (the deltas and reads left unused go with dce) */
}
