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
 * computed anyway). A chain of accumulating statements into one tensor
 * (X += ...; X -= ...;, each version read only by the next) is such a sum
 * too: the factored product goes to the last of its statements. When the factored product is all that is left of the
 * sum, the sum's users read the product.
 */
#include <string.h>

#include "tx.h"

/* Can term W of a sum take part: a pairwise product, neither operand
   inverted, used only by the sum, with no sparse map, real (a complex
   product may mix in real operands, which a sum of them would have to
   promote)? */
static int candidate(const g_value *w)
{
    return w->op == OP_CONTRACT && w->nin == 2 && w->nuses == 1 && !w->nmaps && w->coef_in[0] == 1 &&
           w->coef_in[1] == 1 && w->in[0] != w->in[1] && !w->dead && w->id >= 0 && !dt_complex(w->dt) &&
           !dt_complex(w->in[0]->dt) && !dt_complex(w->in[1]->dt);
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

/* Are the tensors that the products C[0..N) read through views (of T
   and of their other operands) unwritten from the first product up to
   position END, where the factored product will read them? */
static int unwritten(graph *g, g_value *const *c, int n, const g_value *t, int end)
{
    unsigned char *read = arena_alloc(g->arena, (size_t)g->S->nvars + 1);
    if (!graph_views_read(t, read))
        return 0;
    int from = end;
    for (int j = 0; j < n; j++) {
        if (!graph_views_read(other(c[j], t), read))
            return 0;
        from = c[j]->id < from ? c[j]->id : from;
    }
    for (int k = from; k < end; k++)
        if (g->v[k]->op == OP_STORE && read[g->v[k]->var])
            return 0;
    return 1;
}

/* The product SUM * T, with the type, summed labels and modes of LIKE (the
   first product it replaces); SUM (modes set) and the product go into G's
   list before AT. */
static g_value *factored(graph *g, g_value *sum, g_value *t, const g_value *like, g_value *at)
{
    g_value *prod = graph_value_new(g, OP_CONTRACT, 2, at->stmt, at->span);
    graph_set_operand(prod, 0, sum, 1);
    graph_set_operand(prod, 1, t, 1);
    prod->dt = like->dt;
    prod->summed = like->summed;
    graph_set_modes_like(prod, like->rank, like->label, like);
    graph_insert_before(g, at, sum);
    graph_insert_before(g, at, prod);
    return prod;
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
    g_value *prod = factored(g, sum, t, first, s);
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
            g_value *terms[64];
            for (int j = 0; j < n; j++)
                terms[j] = s->in[group[j]];
            if (n < 2 || !unwritten(g, terms, n, t, s->id))
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

/* ---- across statements: X += c1·W1·t; X -= W2·t; ... ----

   A chain of accumulating stores into one tensor, each version read only
   by the next store, is one sum: its products that share an operand are
   factored the same way, the factored product going to the last of them
   and the others' stores dropped. */

/* The store that accumulates into S's version, if it is S's only user;
   USER maps each value to a user. */
static g_value *next_store(g_value *s, g_value *const *user)
{
    g_value *u = user[s->id];
    if (s->nuses != 1 || !u || u->op != OP_STORE || u->store_op == '=' || u->nin != 2 || u->in[1] != s ||
        u->var != s->var || u->nmaps)
        return NULL;
    return u;
}

/* Does V read tensor VAR directly (a view of one of its versions)? */
static int reads_var(const g_value *v, int var)
{
    return v->op == OP_INDEX && v->in[0]->var == var;
}

/* Can accumulating store S take part, its product sharing T? */
static int store_term(const g_value *s, const g_value *t)
{
    const g_value *c = s->in[0];
    return s->op == OP_STORE && s->store_op != '=' && !s->nmaps && candidate(c) && other(c, t) &&
           !reads_var(c->in[0], s->var) && !reads_var(c->in[1], s->var);
}

/* Factors one group along the chain of stores that starts at S; 1 if it
   did. */
static int factor_chain_once(graph *g, g_value *s, g_value *const *user)
{
    g_value *chain[64];
    int n = 0;
    for (g_value *x = s; x && n < 64; x = next_store(x, user))
        chain[n++] = x;
    for (int i = 0; i < n; i++) {
        if (chain[i]->store_op == '=' || !candidate(chain[i]->in[0]))
            continue;
        g_value *a = chain[i]->in[0];
        for (int side = 0; side < 2; side++) {
            g_value *t = a->in[side];
            if (!store_term(chain[i], t))
                continue;
            int group[64], ng = 0;
            group[ng++] = i;
            for (int j = i + 1; j < n; j++)
                if (store_term(chain[j], t) && alike(a, chain[j]->in[0], t) &&
                    !memcmp(chain[j]->store_label, chain[i]->store_label, sizeof chain[i]->store_label))
                    group[ng++] = j;
            g_value *terms[64];
            for (int j = 0; j < ng; j++)
                terms[j] = chain[group[j]]->in[0];
            if (ng < 2 || !unwritten(g, terms, ng, t, chain[group[ng - 1]]->id))
                continue;
            double before = 0;
            for (int j = 0; j < ng; j++)
                before += graph_contract_flops(g, chain[group[j]]->in[0]);
            double after = graph_contract_flops(g, a) + graph_value_elements(g, other(a, t)) * (double)(ng - 1);
            if (after >= before)
                continue;
            /* the sum and the product go just before the last store, which
               keeps its operator; the factors are relative to its sign */
            g_value *last = chain[group[ng - 1]];
            double sign_last = last->store_op == '-' ? -1 : 1;
            g_value *w0 = other(a, t);
            g_value *sum = graph_value_new(g, OP_ADD, ng, last->stmt, last->span);
            sum->dt = a->dt;
            for (int j = 0; j < ng; j++) {
                g_value *sj = chain[group[j]], *c = sj->in[0];
                double sign = sj->store_op == '-' ? -1 : 1;
                graph_set_operand(sum, j, other(c, t), sign * sign_last * c->coef);
            }
            graph_set_modes_like(sum, w0->rank, w0->label, w0);
            g_value *prod = factored(g, sum, t, a, last);
            g_value *gone[64];
            for (int j = 0; j < ng; j++)
                gone[j] = chain[group[j]]->in[0];
            graph_set_operand(last, 0, prod, 1);
            for (int j = 0; j < ng - 1; j++) /* the others' versions are their previous ones */
                graph_replace_uses(g, chain[group[j]], chain[group[j]]->in[1]);
            for (int j = 0; j < ng; j++)
                graph_kill(g, gone[j]);
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
    /* chains of accumulating stores, from their first store */
    for (int again = 1; again;) {
        again = 0;
        g_value **user = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(g->n + 1));
        for (int k = 0; k < g->n; k++)
            for (int i = 0; i < g->v[k]->nin; i++)
                user[g->v[k]->in[i]->id] = g->v[k];
        for (int k = 0; k < g->n && !again; k++) {
            g_value *s = g->v[k];
            int first = s->op == OP_STORE && !s->dead && !(s->nin == 2 && s->in[1]->op == OP_STORE &&
                                                           next_store(s->in[1], user) == s);
            if (first && factor_chain_once(g, s, user)) {
                graph_renumber(g);
                again = changed = 1;
            }
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
