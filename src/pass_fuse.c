/*
 * pass_fuse.c — elementwise fusion.
 *
 * An elementwise value (a map, a linear combination, a product with
 * nothing summed) whose only user loops over exactly its labels is not
 * given a buffer: the emitter computes it inside the user's loop nest.
 * Chains such as exp(A - B) * C + D thus become one pass over memory.
 *
 * Two things stop fusion: a user whose loops are wider than the value
 * (the value would be recomputed for every extra index), and a store
 * whose fused right-hand side reads the stored tensor at another element
 * (C("i,j") = C("j,i") + 1 must finish reading before it writes).
 */
#include "tx.h"

static int elementwise(const g_value *v)
{
    return v->op == OP_MAP || v->op == OP_ADD || (v->op == OP_CONTRACT && ls_empty(v->summed));
}

/* Does computing V (with its fused operands) inside store S read S's
   tensor at an element other than the one S writes? */
static int store_hazard(const g_value *v, const g_value *s)
{
    for (int i = 0; i < v->nin; i++) {
        const g_value *w = v->in[i];
        if (w->inlined && store_hazard(w, s))
            return 1;
        if (w->op == OP_INDEX && w->in[0]->var == s->var &&
            (w->in[0]->op == OP_INPUT || w->in[0]->op == OP_STORE))
            for (int m = 0; m < s->rank; m++)
                if (w->idx_label[m] != s->store_label[m])
                    return 1;
    }
    return 0;
}

void pass_fuse(graph *g)
{
    g_value **user = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(g->n + 1));
    for (int k = 0; k < g->n; k++)
        for (int i = 0; i < g->v[k]->nin; i++)
            user[g->v[k]->in[i]->id] = g->v[k];
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k], *u = user[k];
        if (v->dead || !u || v->nuses != 1 || !elementwise(v) || u->blas || u->op == OP_LINALG)
            continue; /* BLAS and LAPACK read their operands from memory */
        if (!ls_eq(graph_value_labels(v), graph_iteration_labels(u)))
            continue;
        if (u->op == OP_STORE && store_hazard(v, u))
            continue;
        v->inlined = 1;
    }
}
