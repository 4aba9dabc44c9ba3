/*
 * pass_fuse.c — elementwise fusion.
 *
 * An elementwise value (a map, a linear combination, a product with
 * nothing summed) whose only user loops over exactly its labels is not
 * given a buffer: the emitter computes it inside the user's loop nest.
 * Chains such as exp(A - B) * C + D thus become one pass over memory.
 * A value with two or three such users is computed in each of them when
 * it is one addition or product of operands in memory (the centred rows
 * X - mean of a layer norm): cheaper than a pass writing it and passes
 * reading it back.
 *
 * Two things stop fusion: a user whose loops are wider than the value
 * (the value would be recomputed for every extra index), and a store
 * whose fused right-hand side reads the stored tensor at another element
 * (C("i,j") = C("j,i") + 1 must finish reading before it writes).
 *
 * Row tiles. Consecutive loop nests that each write whole rows of one
 * label of the same extent (their first output label, the loop a kernel's
 * range runs over) and read what an earlier one of them wrote only in the
 * same row are a row group: the emitter runs them tile by tile of rows
 * (for each tile: the first nest, then the second, ...), so a row a
 * reduction has just read is still in cache when the elementwise statement
 * after it reads it again. A row softmax (max, exp and sum, divide) or a
 * layer norm (mean, variance, normalise) thus reads its matrix from memory
 * once instead of three or four times. Nothing here knows softmax: any
 * program of this shape is tiled. A nest stops a group when it reads a
 * tensor or value written in the group at another row (a sum over the row
 * label, a transposed read), or writes a tensor an earlier nest of the
 * group read at another row; BLAS and LAPACK calls, copies, scans, slices,
 * sparse loops and scalar results are never in a group; a scalar that
 * reads nothing the group writes (a dim, the norm of an input) is computed
 * ahead of it instead of ending it. Rows are
 * independent, so the result is the same bits as nest after nest, on any
 * number of threads.
 *
 * Row-local tensors. A let or tmp tensor of two or more modes that one
 * plain store of its group writes whole, and that only nests of the same
 * group read (at the row, after the store), is consumed in the tile that
 * produced it: the softmax's E = exp(X - max). The emitter then keeps only
 * a tile's rows of it, at the first rows of the range each call of the
 * group runs (emit_kernel.c), so it stays in cache instead of going to
 * memory and back. Its buffer is still allocated whole.
 *
 * Row-local tensors in their reader's output. When the last nest reading
 * such a tensor E is the store of an out tensor P of E's shape and type,
 * in the group, at E's labels, reading E only where it writes P, and
 * nothing else writes or reads P, then E's rows are kept in P's rows
 * (graph.row_alias; one such tensor per output, the first declared): the
 * softmax's exp is written where P goes, the sum
 * reads it there, and P = E / sum overwrites each element with its own
 * quotient. The writes to P's memory then overlap the exp's arithmetic
 * instead of following it in a pass of their own (the last pass of a
 * row softmax of 2000x2000 f32 was 18 % of its time). Same bits.
 */
#include <string.h>

#include "tx.h"

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

static void row_groups(graph *g);
static void row_locals(graph *g);

/* Scans into the tensors they are stored in: a scan of a real tensor in
   memory of its own type (what the emitter runs through tx_p_scan),
   whose one user is a plain store of all of it into a tensor of that
   type (no sparse map, each of the tensor's modes one of the scan's
   labels) that the scan does not read, writes that tensor instead of a
   buffer that the store would then copy (half the time of a cumsum of
   2000x2000 rows). Not on MPI ranks, whose tensors go by rows. NU[k],
   AT[k] and USER: value k's users. */
static void scans_into_stores(graph *g, const int *nu, const int *at, g_value *const *user)
{
    if (g->spec.distributed)
        return;
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k], *x = v->nin ? v->in[0] : NULL;
        if (v->op != OP_SCAN || v->dead || v->nmaps || nu[k] != 1 || (v->dt != DT_F64 && v->dt != DT_F32) ||
            x->dt != v->dt || x->inlined || x->op == OP_CONST)
            continue;
        g_value *s = user[at[k]];
        if (s->op != OP_STORE || s->dead || s->store_op != '=' || s->nmaps || s->rank != v->rank ||
            g->S->vars[s->var]->dt != v->dt)
            continue;
        int whole = 1;
        for (int m = 0; m < s->rank; m++) {
            int found = 0;
            for (int q = 0; q < s->rank; q++)
                found += s->store_label[q] == v->label[m];
            whole &= found == 1;
        }
        if (!whole || (x->op == OP_INDEX && x->in[0]->var == s->var))
            continue;
        v->into = s;
        s->absorbed = 1;
    }
}

/* May USER compute V inside its loops? */
static int fusable_into(const g_value *v, const g_value *u)
{
    if (u->blas || u->op == OP_LINALG) /* BLAS and LAPACK read their operands from memory */
        return 0;
    if (!ls_eq(graph_value_labels(v), graph_iteration_labels(u)))
        return 0;
    return !(u->op == OP_STORE && store_hazard(v, u));
}

/* Is V, read by NU users up to position LAST, cheaper computed again in
   each of them than written once and read back: one addition or product
   of operands in memory (X - mean(X), the centred rows of a layer norm),
   whose tensors no store changes before the last user reads them? */
static int recompute(const graph *g, const g_value *v, int nu, int last)
{
    if (nu < 2 || nu > 3 || dt_complex(v->dt) || v->nmaps || (v->op != OP_ADD && v->op != OP_CONTRACT))
        return 0;
    for (int i = 0; i < v->nin; i++) {
        const g_value *w = v->in[i];
        if (w->inlined)
            return 0;
        if (w->op != OP_INDEX)
            continue;
        for (int k = v->id + 1; k <= last; k++)
            if (g->v[k]->op == OP_STORE && !g->v[k]->dead && g->v[k]->var == w->in[0]->var)
                return 0;
    }
    return 1;
}

void pass_fuse(graph *g)
{
    /* each value's users (a user reading it twice counts twice) */
    int *nu = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1)), *at, total = 0;
    for (int k = 0; k < g->n; k++)
        nu[k] = 0;
    for (int k = 0; k < g->n; k++)
        for (int i = 0; !g->v[k]->dead && i < g->v[k]->nin; i++)
            nu[g->v[k]->in[i]->id]++;
    at = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1));
    for (int k = 0; k < g->n; k++) {
        at[k] = total;
        total += nu[k];
    }
    g_value **user = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(total + 1));
    for (int k = 0; k < g->n; k++)
        nu[k] = 0;
    for (int k = 0; k < g->n; k++)
        for (int i = 0; !g->v[k]->dead && i < g->v[k]->nin; i++) {
            int w = g->v[k]->in[i]->id;
            user[at[w] + nu[w]++] = g->v[k];
        }
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->dead || nu[k] == 0 || !graph_is_elementwise(v))
            continue;
        int ok = 1, last = k;
        for (int j = 0; j < nu[k] && ok; j++) {
            ok = fusable_into(v, user[at[k] + j]);
            if (user[at[k] + j]->id > last)
                last = user[at[k] + j]->id;
        }
        if (ok && (nu[k] == 1 || recompute(g, v, nu[k], last)))
            v->inlined = 1;
    }
    scans_into_stores(g, nu, at, user);
    row_groups(g);
    row_locals(g);
}

/* Does V get code of its own where the emitter writes the statements? */
static int emitted(const g_value *v)
{
    return !v->dead && !v->inlined && v->op != OP_INPUT && v->op != OP_CONST && v->op != OP_INDEX &&
           v->op != OP_PART && !(v->op == OP_STORE && v->absorbed);
}

/* The label whose rows loop nest V writes (its first output label), or
   -1 if V may not be in a row group. */
static int row_label(const g_value *v)
{
    if (v->nmaps || v->blas || v->rank < 1)
        return -1;
    if (v->op == OP_STORE)
        return v->store_label[0];
    if ((v->op == OP_MAP || v->op == OP_ADD || v->op == OP_CONTRACT || v->op == OP_REDUCE) && !graph_is_copy(v))
        return v->label[0];
    return -1;
}

/* The group being built: stamps equal to CUR mark its values, the tensors
   it wrote and the tensors it read at another row than the reader's. */
typedef struct {
    int cur;
    int *val, *written, *far_read;
} row_state;

/* May nest U, whose row label is R, join the group (reads of what the
   group wrote only at the row)? Marks the tensors V reads at another row
   when MARK. */
static int reads_at_row(row_state *st, const g_value *v, int r, int mark)
{
    for (int i = 0; i < v->nin; i++) {
        const g_value *w = v->in[i];
        if (w->inlined) {
            if (!reads_at_row(st, w, r, mark))
                return 0;
            continue;
        }
        if (w->op == OP_CONST)
            continue;
        if (w->op == OP_INDEX) {
            const g_value *t = w->in[0];
            if (t->op != OP_INPUT && t->op != OP_STORE) { /* a view of a computed value */
                if (st->val[t->id] == st->cur)
                    return 0;
                continue;
            }
            int at_row = t->rank >= 1 && w->idx_label[0] == r;
            if (!at_row && st->written[t->var] == st->cur)
                return 0;
            if (!at_row && mark)
                st->far_read[t->var] = st->cur;
            continue;
        }
        if (w->op == OP_INPUT || w->op == OP_STORE) { /* a scalar tensor */
            if (st->written[w->var] == st->cur)
                return 0;
            if (mark)
                st->far_read[w->var] = st->cur;
            continue;
        }
        if (st->val[w->id] == st->cur && !(w->rank >= 1 && w->label[0] == r))
            return 0;
    }
    return 1;
}

/* Groups consecutive row nests (see the top of the file). */
static void row_groups(graph *g)
{
    int nv = g->S->nvars;
    row_state st = {0, arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1)),
                    arena_alloc(g->arena, sizeof(int) * (size_t)(nv + 1)),
                    arena_alloc(g->arena, sizeof(int) * (size_t)(nv + 1))};
    for (int k = 0; k < g->n; k++)
        st.val[k] = -1;
    for (int i = 0; i < nv; i++)
        st.written[i] = st.far_read[i] = -1;
    int first = -1, last = -1, nmem = 0;
    tx_extent ext = {0, 0};
    for (int k = 0; k <= g->n; k++) {
        g_value *v = k < g->n ? g->v[k] : NULL;
        if (v)
            v->row_group = v->row_ahead = 0;
        if (v && !emitted(v))
            continue;
        int r = v ? row_label(v) : -1;
        tx_extent e = {0, 0};
        if (r >= 0)
            e = v->ext[0];
        int join = r >= 0 && nmem > 0 && e.dim == ext.dim && e.value == ext.value && reads_at_row(&st, v, r, 0) &&
                   !(v->op == OP_STORE && st.far_read[v->var] == st.cur);
        if (v && !join && r < 0 && nmem > 0 && v->rank == 0 && !v->blas &&
            (v->op == OP_MAP || v->op == OP_ADD || v->op == OP_CONTRACT || v->op == OP_REDUCE) &&
            reads_at_row(&st, v, -2, 0)) {
            v->row_ahead = 1; /* a scalar the group does not feed (a dim, a norm of an input) */
            continue;
        }
        if (!join) { /* the group so far ends */
            if (nmem >= 2)
                for (int j = first; j <= last; j++)
                    if (st.val[j] == st.cur)
                        g->v[j]->row_group = last + 1;
            st.cur++;
            nmem = 0;
            if (r < 0)
                continue;
            first = k;
            ext = e;
        }
        reads_at_row(&st, v, r, 1);
        st.val[k] = st.cur;
        if (v->op == OP_STORE)
            st.written[v->var] = st.cur;
        last = k;
        nmem++;
    }
}

/* Does V (with the values fused into it) read variable VAR? Sets *FAR
   when a read is not at labels AT (its first N modes), or is whole. */
static int reads_var_at(const g_value *v, int var, const int *at, int n, int *far)
{
    int any = 0;
    for (int i = 0; i < v->nin; i++) {
        const g_value *w = v->in[i];
        if (w->inlined)
            any |= reads_var_at(w, var, at, n, far);
        else if (w->op == OP_INDEX && w->in[0]->var == var &&
                 (w->in[0]->op == OP_INPUT || w->in[0]->op == OP_STORE)) {
            any = 1;
            for (int m = 0; m < n; m++)
                if (w->idx_label[m] != at[m])
                    *far = 1;
        } else if ((w->op == OP_INPUT || w->op == OP_STORE) && w->var == var)
            any = *far = 1; /* whole, not by rows */
    }
    return any;
}

/* reads_var_at at row label R alone */
static int reads_var(const g_value *v, int var, int r, int *far)
{
    return reads_var_at(v, var, &r, 1, far);
}

/* The out tensor that row-local tensor VAR, written by STORE, may live
   in (see the top of the file), or -1. */
static int row_alias_of(graph *g, int var, const g_value *store)
{
    const sym *e = g->S->vars[var];
    const g_value *last = NULL;
    for (int k = 0; k < g->n; k++) {
        const g_value *v = g->v[k];
        int far = 0;
        if (v != store && !v->dead && !v->inlined && v->op != OP_INDEX && reads_var(v, var, -1, &far))
            last = v;
    }
    if (!last || last->op != OP_STORE || last->store_op != '=' || last->absorbed || last->nmaps ||
        last->row_group != store->row_group || last->var == var)
        return -1;
    int p = last->var;
    const sym *t = g->S->vars[p];
    if (t->io != IO_OUT || t->dt != e->dt || t->rank != e->rank)
        return -1;
    for (int m = 0; m < e->rank; m++)
        if (t->ext[m].dim != e->ext[m].dim || t->ext[m].value != e->ext[m].value ||
            last->store_label[m] != store->store_label[m])
            return -1;
    int elsewhere = 0; /* LAST reads E at an element other than the one it writes */
    if (reads_var_at(last, var, store->store_label, e->rank, &elsewhere) && elsewhere)
        return -1;
    for (int k = 0; k < g->n; k++) { /* P: written by LAST alone, read by nothing */
        const g_value *v = g->v[k];
        int far = 0;
        if (v->dead || v->op == OP_INDEX)
            continue;
        if ((v->op == OP_STORE && v->var == p && v != last) || (!v->inlined && reads_var(v, p, -1, &far)))
            return -1;
    }
    return p;
}

/* Marks the row-local tensors (see the top of the file). */
static void row_locals(graph *g)
{
    int nv = g->S->nvars;
    g->row_local = NULL;
    g->row_alias = NULL;
    for (int i = 0; i < nv; i++) {
        const sym *t = g->S->vars[i];
        if ((t->io != IO_LET && t->io != IO_TMP) || t->rank < 2 || dt_complex(t->dt))
            continue;
        const g_value *store = NULL;
        int ok = 1;
        for (int k = 0; k < g->n && ok; k++) {
            const g_value *v = g->v[k];
            if (v->dead || v->inlined || v->op == OP_INDEX) /* views: their readers count */
                continue;
            if (v->op == OP_STORE && v->var == i) {
                ok = !store && v->row_group && v->store_op == '=' && !v->absorbed;
                for (int m = 0; ok && m < t->rank; m++) { /* every element: distinct labels */
                    ok = v->store_label[m] >= 0;
                    for (int p = 0; ok && p < m; p++)
                        ok = v->store_label[p] != v->store_label[m];
                }
                store = v;
                continue;
            }
            int far = 0;
            if (reads_var(v, i, store ? store->store_label[0] : -1, &far))
                ok = store && !far && v->row_group == store->row_group;
        }
        if (!ok || !store)
            continue;
        if (!g->row_local) {
            g->row_local = arena_alloc(g->arena, (size_t)nv);
            memset(g->row_local, 0, (size_t)nv);
            g->row_alias = arena_alloc(g->arena, sizeof(int) * (size_t)nv);
            for (int j = 0; j < nv; j++)
                g->row_alias[j] = -1;
        }
        g->row_local[i] = 1;
        g->row_alias[i] = row_alias_of(g, i, store);
        for (int j = 0; j < i && g->row_alias[i] >= 0; j++) /* one tensor per output: two would overwrite each other */
            if (g->row_alias[j] == g->row_alias[i])
                g->row_alias[i] = -1;
    }
}
