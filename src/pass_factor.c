/*
 * pass_factor.c — sums of products that share an operand, factored.
 *
 * After the contraction order every product is pairwise. A sum whose
 * terms include products with one operand in common, summed over the
 * same labels,
 *
 *     c1·W1·t + c2·W2·t + ...   (each Wi with the same labels)
 *
 * becomes one product of a sum, (c1·W1 + c2·W2 + ...)·t, when that costs
 * fewer FLOPs (one contraction and an elementwise sum instead of several
 * contractions), as operation-minimisation tools for coupled cluster do.
 * Only products that nothing but the sum uses are taken (the others are
 * computed anyway). When the factored product is all that is left of the
 * sum, the sum's users read the product.
 */
#include "tx.h"

/* Can term W of a sum take part: a pairwise product, neither operand
   inverted, used only by the sum, with no sparse map? */
static int candidate(const g_value *w)
{
    return w->op == OP_CONTRACT && w->nin == 2 && w->nuses == 1 && !w->nmaps && w->coef_in[0] == 1 &&
           w->coef_in[1] == 1 && w->in[0] != w->in[1] && !w->dead && w->id >= 0;
}

/* The operand of product W other than T, or NULL if T is not one. */
static g_value *other(const g_value *w, const g_value *t)
{
    return w->in[0] == t ? w->in[1] : w->in[1] == t ? w->in[0] : NULL;
}

/* Do terms A and B (products sharing operand T) factor: the same labels,
   the same sum, other operands alike in labels and type? */
static int alike(const g_value *a, const g_value *b, const g_value *t)
{
    const g_value *wa = other(a, t), *wb = other(b, t);
    if (!wa || !wb || wa == wb || a->dt != b->dt || wa->dt != wb->dt || wa->rank != wb->rank)
        return 0;
    if (!ls_eq(a->summed, b->summed) || !ls_eq(graph_value_labels(a), graph_value_labels(b)) ||
        !ls_eq(graph_value_labels(wa), graph_value_labels(wb)))
        return 0;
    for (int m = 0; m < wa->rank; m++) /* the same extents per label */
        for (int q = 0; q < wb->rank; q++)
            if (wa->label[m] == wb->label[q] && !ext_eq(wa->ext[m], wb->ext[q]))
                return 0;
    return 1;
}

/* Factors the terms of sum S in GROUP[0..N) (operand indices), which
   share T. */
static void factor_group(graph *g, g_value *s, const int *group, int n, g_value *t)
{
    g_value *first = s->in[group[0]];
    g_value *w0 = other(first, t);
    g_value *sum = graph_value_new(g, OP_ADD, n, s->stmt, s->span);
    sum->dt = first->dt;
    for (int i = 0; i < n; i++) {
        g_value *c = s->in[group[i]];
        graph_set_operand(sum, i, other(c, t), s->coef_in[group[i]] * c->coef);
    }
    graph_set_modes_like(sum, w0->rank, w0->label, w0);
    g_value *prod = graph_value_new(g, OP_CONTRACT, 2, s->stmt, s->span);
    graph_set_operand(prod, 0, sum, 1);
    graph_set_operand(prod, 1, t, 1);
    prod->dt = first->dt;
    prod->summed = first->summed;
    graph_set_modes_like(prod, first->rank, first->label, first);
    graph_insert_before(g, s, sum);
    graph_insert_before(g, s, prod);
    /* the sum keeps its other terms and the new product in the place of the first */
    g_value **in = arena_alloc(g->arena, sizeof(g_value *) * (size_t)s->nin);
    double *c = arena_alloc(g->arena, sizeof(double) * (size_t)s->nin);
    g_value **gone = arena_alloc(g->arena, sizeof(g_value *) * (size_t)n);
    int m = 0;
    for (int i = 0; i < s->nin; i++) {
        int at = -1;
        for (int j = 0; j < n; j++)
            if (group[j] == i)
                at = j;
        if (at > 0) {
            gone[at] = s->in[i];
            continue;
        }
        if (at == 0)
            gone[0] = s->in[i];
        in[m] = at == 0 ? prod : s->in[i];
        c[m++] = at == 0 ? 1 : s->coef_in[i];
    }
    graph_set_operands(g, s, m, in, c);
    for (int j = 0; j < n; j++)
        graph_kill(g, gone[j]);
}

/* Factors one group of the terms of S if one pays; 1 if it did. */
static int factor_once(graph *g, g_value *s)
{
    int group[64];
    for (int i = 0; i < s->nin && i < 64; i++) {
        g_value *a = s->in[i];
        if (!candidate(a) || !ls_eq(graph_value_labels(a), graph_value_labels(s)))
            continue;
        for (int side = 0; side < 2; side++) {
            g_value *t = a->in[side];
            int n = 0;
            group[n++] = i;
            for (int j = i + 1; j < s->nin && j < 64; j++) {
                g_value *b = s->in[j];
                if (candidate(b) && ls_eq(graph_value_labels(b), graph_value_labels(s)) && alike(a, b, t))
                    group[n++] = j;
            }
            if (n < 2)
                continue;
            double before = 0;
            for (int j = 0; j < n; j++)
                before += graph_contract_flops(g, s->in[group[j]]);
            const g_value *w = other(a, t);
            double after = graph_contract_flops(g, a) + graph_value_elements(g, w) * (double)(n - 1); /* as graph_value_flops counts a sum */
            if (after >= before)
                continue;
            factor_group(g, s, group, n, t);
            return 1;
        }
    }
    return 0;
}

void pass_factor(graph *g)
{
    int changed = 0;
    for (int k = 0; k < g->n; k++) {
        g_value *s = g->v[k];
        if (s->op != OP_ADD || s->dead || s->nmaps)
            continue;
        /* one group at a time, the list renumbered after each: use counts
           must count the new values' uses before the next group is judged
           (an operand of a new sum is not single-use any more) */
        while (factor_once(g, s)) {
            graph_renumber(g);
            changed = 1;
        }
    }
    if (!changed)
        return;
    /* a sum left with one product and factor 1: its users read the product */
    for (int k = 0; k < g->n; k++) {
        g_value *s = g->v[k];
        if (s->op == OP_ADD && s->nin == 1 && s->coef_in[0] == 1 && s->in[0]->op == OP_CONTRACT &&
            s->in[0]->nuses == 1 && s->dt == s->in[0]->dt && s->rank == s->in[0]->rank && !s->nmaps &&
            ls_eq(graph_value_labels(s), graph_value_labels(s->in[0])))
            graph_replace_uses(g, s, s->in[0]);
    }
    graph_renumber(g);
}
