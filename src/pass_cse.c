/*
 * pass_cse.c — common subexpressions, constant factors, dead values.
 *
 * cse: two values are the same when they apply the same op with the same
 * attributes to the same operands: the same view of the same version of a
 * tensor, or the same contraction of the same values over the same labels
 * (operand order and label order do not matter, users read by label).
 * Users of the later one are pointed at the first, across statements: an
 * SSA value is never overwritten, so reusing it later is always valid.
 * This makes the b("i,j,k") of two statements one load and an identical
 * subtree one computation.
 *
 * share: cse again once the contraction order has split products into
 * pairs (pairwise products of different statements and terms meet only
 * then), with contractions equal up to their scale taken as one: the
 * later becomes the earlier times the ratio, and such a factor on an
 * operand of a contraction or a sum moves into that user's scale. A let
 * or tmp tensor that one statement writes whole and others read only as
 * written is the value itself: no store, no pass over memory.
 *
 * fold: a constant operand of a contraction becomes part of its scale.
 *
 * dce: values nothing uses (and that are not stores) are removed.
 */
#include <string.h>

#include "tx.h"

/* Operands and their coefficients in a canonical order (by id) for the
   ops where order does not matter. */
static int commutes(const g_value *v)
{
    return v->op == OP_CONTRACT || v->op == OP_ADD;
}

static int same_operands(const g_value *a, const g_value *b)
{
    if (a->nin != b->nin)
        return 0;
    if (!commutes(a)) {
        for (int i = 0; i < a->nin; i++)
            if (a->in[i] != b->in[i] || a->coef_in[i] != b->coef_in[i])
                return 0;
        return 1;
    }
    /* a multiset match: each operand of a pairs with an unused equal one of b */
    int used[64] = {0};
    if (a->nin > 64)
        return 0;
    for (int i = 0; i < a->nin; i++) {
        int found = 0;
        for (int j = 0; j < b->nin && !found; j++)
            if (!used[j] && a->in[i] == b->in[j] && a->coef_in[i] == b->coef_in[j])
                used[j] = found = 1;
        if (!found)
            return 0;
    }
    return 1;
}

/* SCALED: contractions that differ only in their scale are the same. */
static int same_value(const g_value *a, const g_value *b, int scaled)
{
    if (a->op != b->op || a->dt != b->dt || a->rank != b->rank || !same_operands(a, b) || a->nmaps != b->nmaps)
        return 0;
    for (int i = 0; i < a->nmaps; i++)
        if (a->maps[i] != b->maps[i])
            return 0;
    for (int i = 0; i < a->rank; i++) /* a label may have another extent in another statement (a broadcast) */
        if (a->label[i] == b->label[i] && !ext_eq(a->ext[i], b->ext[i]))
            return 0;
    switch (a->op) {
    case OP_INPUT:
    case OP_STORE:
    case OP_PART:
        return 0; /* variables' states are unique; results come with their call */
    case OP_LINALG: /* a deterministic function of its operands (la_pow of
                       an inverse only names the call in its error) */
        if (a->nout != 1 || a->la != b->la || (a->la != LA_INV && a->la_pow != b->la_pow))
            return 0;
        for (int i = 0; i < a->rank; i++)
            if (a->label[i] != b->label[i])
                return 0;
        return 1;
    case OP_SLICE:
        for (int i = 0; i < a->rank; i++)
            if (a->label[i] != b->label[i] || !ext_eq(a->slice_lo[i], b->slice_lo[i]) ||
                !ext_eq(a->ext[i], b->ext[i]))
                return 0;
        return 1;
    case OP_CONST:
        return a->coef == b->coef && a->coef_im == b->coef_im;
    case OP_INDEX:
        for (int m = 0; m < a->in[0]->rank; m++)
            if (a->idx_label[m] != b->idx_label[m] || (a->idx_label[m] < 0 && a->idx_chip[m] != b->idx_chip[m]))
                return 0;
        return 1;
    case OP_CONTRACT:
        return (scaled || a->coef == b->coef) && ls_eq(a->summed, b->summed) && ls_eq(graph_value_labels(a), graph_value_labels(b));
    case OP_ADD:
        return ls_eq(graph_value_labels(a), graph_value_labels(b));
    case OP_MAP:
        if (a->nin == 0) { /* delta: the same labels may have other extents in another statement */
            if (a->rank != b->rank)
                return 0;
            for (int m = 0; m < a->rank; m++)
                if (a->label[m] != b->label[m] || !ext_eq(a->ext[m], b->ext[m]))
                    return 0;
        }
        return a->fn == b->fn && a->fn_arg == b->fn_arg && ls_eq(graph_value_labels(a), graph_value_labels(b));
    case OP_REDUCE:
        return a->red == b->red && ls_eq(a->summed, b->summed) && ls_eq(graph_value_labels(a), graph_value_labels(b));
    case OP_SCAN:
        return a->red == b->red && a->scan_label == b->scan_label && a->scan_reverse == b->scan_reverse &&
               ls_eq(graph_value_labels(a), graph_value_labels(b));
    }
    return 0;
}

static unsigned value_hash(const g_value *v)
{
    unsigned h = (unsigned)v->op * 2654435761u ^ (unsigned)v->rank * 40503u;
    for (int i = 0; i < v->nin; i++)
        h += (unsigned)v->in[i]->id * 2246822519u; /* order-free */
    if (v->op == OP_CONST) {
        unsigned char b[sizeof(double)];
        memcpy(b, &v->coef, sizeof b);
        for (size_t i = 0; i < sizeof b; i++)
            h = h * 31 + b[i];
        memcpy(b, &v->coef_im, sizeof b);
        for (size_t i = 0; i < sizeof b; i++)
            h = h * 31 + b[i];
    }
    return h;
}

/* A scale: one operand, not inverted, nothing summed, the same labels and
   element type as the operand (a multiple of it, or a plain relabelling). */
static int is_scale(const g_value *v)
{
    return v->op == OP_CONTRACT && v->nin == 1 && v->coef_in[0] == 1 && ls_empty(v->summed) && !v->nmaps &&
           v->dt == v->in[0]->dt && v->rank == v->in[0]->rank && v->in[0]->op != OP_INPUT &&
           v->in[0]->op != OP_STORE;
}

static void cse_run(graph *g, int scaled)
{
    int nb = 1;
    while (nb < 2 * g->n)
        nb *= 2;
    int *next = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1)); /* chains by id */
    int *head = arena_alloc(g->arena, sizeof(int) * (size_t)nb);
    for (int b = 0; b < nb; b++)
        head[b] = -1;
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        graph_follow_replaced(v); /* compare the operands as they now are */
        if (v->op == OP_STORE || v->op == OP_INPUT)
            continue;
        unsigned b = value_hash(v) & (unsigned)(nb - 1);
        g_value *found = NULL;
        for (int j = head[b]; j >= 0 && !found; j = next[j])
            if (same_value(g->v[j], v, scaled) && (g->v[j]->op != OP_CONTRACT || g->v[j]->coef != 0))
                found = g->v[j];
        if (found && found->op == OP_CONTRACT && found->coef != v->coef) {
            /* v = (v->coef / found->coef) * found */
            g_value *sc = graph_value_new(g, OP_CONTRACT, 1, v->stmt, v->span);
            graph_set_operand(sc, 0, found, 1);
            sc->dt = v->dt;
            sc->coef = v->coef / found->coef;
            graph_set_modes_like(sc, v->rank, v->label, v);
            graph_insert_before(g, v, sc);
            found = sc;
        }
        if (found) {
            graph_replace_uses(g, v, found);
            continue;
        }
        next[k] = head[b];
        head[b] = k;
    }
    graph_renumber(g);
}

void pass_cse(graph *g)
{
    cse_run(g, 0);
}

/* Every use of a value: a list per value through NEXT (by use number). */
typedef struct {
    int *first, *next;
    g_value **user;
} use_lists;

static void use_lists_make(graph *g, use_lists *L)
{
    size_t nuse = 0;
    for (int k = 0; k < g->n; k++)
        nuse += (size_t)g->v[k]->nin;
    L->first = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1));
    L->next = arena_alloc(g->arena, sizeof(int) * (nuse + 1));
    L->user = arena_alloc(g->arena, sizeof(g_value *) * (nuse + 1));
    for (int k = 0; k < g->n; k++)
        L->first[k] = -1;
    int e = 0;
    for (int k = 0; k < g->n; k++)
        for (int i = 0; i < g->v[k]->nin; i++, e++) {
            int w = g->v[k]->in[i]->id;
            L->user[e] = g->v[k];
            L->next[e] = L->first[w];
            L->first[w] = e;
        }
}

/* Does every user of store S read S's tensor as it is, through the labels
   the store wrote (views of the same labels in the same modes)? */
static int read_as_written(const g_value *s, const use_lists *L)
{
    int n = 0;
    for (int e = L->first[s->id]; e >= 0; e = L->next[e]) {
        const g_value *w = L->user[e];
        if (w->op != OP_INDEX || w->nmaps || w->rank != s->in[0]->rank)
            return 0;
        for (int m = 0; m < s->rank; m++)
            if (w->idx_label[m] != s->store_label[m])
                return 0;
        for (int f = L->first[w->id]; f >= 0; f = L->next[f])
            if (L->user[f]->op == OP_LINALG)
                return 0; /* LAPACK reads memory in the view's order, which the value need not have */
        n++;
    }
    return n > 0;
}

/* Is user W of store S (a let or tmp tensor) a view of the whole tensor
   through other labels, one per mode, read only by plain stores ('=', no
   maps) whose modes each take one of W's labels? Such a store can store
   S's value itself, each mode through the label S wrote there: the copy
   through the tensor (grad.c relabels an adjoint that way) goes. */
static int renamed_into_stores(const g_value *s, const g_value *w, const use_lists *L)
{
    if (w->op != OP_INDEX || w->nmaps || w->rank != s->rank || w->rank != s->in[0]->rank)
        return 0;
    int n = 0;
    for (int f = L->first[w->id]; f >= 0; f = L->next[f]) {
        const g_value *t = L->user[f];
        if (t->op != OP_STORE || t->store_op != '=' || t->nin != 1 || t->nmaps)
            return 0;
        for (int i = 0; i < t->rank; i++) {
            int found = 0;
            for (int m = 0; m < w->rank; m++)
                found |= w->idx_label[m] == t->store_label[i];
            if (!found)
                return 0;
        }
        n++;
    }
    return n > 0;
}

/* Store T, which stores view W of the tensor store S wrote
   (renamed_into_stores), made to store S's value directly. */
static void store_through(g_value *s, g_value *w, g_value *t)
{
    int lab[TX_MAX_MODES];
    for (int i = 0; i < t->rank; i++)
        for (int m = 0; m < w->rank; m++)
            if (w->idx_label[m] == t->store_label[i])
                lab[i] = s->store_label[m];
    memcpy(t->store_label, lab, sizeof(int) * (size_t)t->rank);
    graph_set_operand(t, 0, s->in[0], 1);
}

/* A let or tmp tensor written whole by one store and read only as
   written (or through other labels into plain stores:
   renamed_into_stores), before anything else writes it, is its value: the
   readers read the value, and the store, which nothing reads then, goes
   (dce). */
static void forward_scratch(graph *g)
{
    use_lists L;
    use_lists_make(g, &L);
    unsigned char *read = arena_alloc(g->arena, (size_t)g->S->nvars + 1);
    for (int k = 0; k < g->n; k++) {
        g_value *s = g->v[k];
        if (s->op != OP_STORE || s->store_op != '=' || s->nmaps || s->nin != 1 || s->rank == 0)
            continue;
        sym *var = g->S->vars[s->var];
        g_value *v = s->in[0];
        if ((var->io != IO_LET && var->io != IO_TMP) || v->dt != var->dt || v->op == OP_PART || var->keep)
            continue;
        int as_written = read_as_written(s, &L);
        if (!as_written) {
            int n = 0;
            for (int e = L.first[k]; e >= 0 && (n >= 0); e = L.next[e])
                n = renamed_into_stores(s, L.user[e], &L) ? n + 1 : -1;
            if (n <= 0)
                continue;
        }
        /* the value must still be what the store wrote where it is read: no
           tensor it reads is written in between */
        int last = k;
        for (int e = L.first[k]; e >= 0; e = L.next[e])
            for (int f = L.first[L.user[e]->id]; f >= 0; f = L.next[f])
                last = L.user[f]->id > last ? L.user[f]->id : last;
        memset(read, 0, (size_t)g->S->nvars);
        int ok = graph_views_read(v, read);
        for (int j = k + 1; ok && j <= last; j++)
            ok = !(g->v[j]->op == OP_STORE && read[g->v[j]->var]);
        if (!ok)
            continue;
        for (int e = L.first[k]; e >= 0; e = L.next[e])
            if (L.user[e]->dead)
                continue;
            else if (as_written)
                graph_replace_uses(g, L.user[e], v);
            else
                for (int f = L.first[L.user[e]->id]; f >= 0; f = L.next[f])
                    store_through(s, L.user[e], L.user[f]);
    }
    graph_renumber(g);
}

void pass_share(graph *g)
{
    forward_scratch(g);
    cse_run(g, 1);
    /* a scale on an operand of a contraction or a sum moves into its user */
    for (int k = 0; k < g->n; k++) {
        g_value *u = g->v[k];
        if (u->op != OP_CONTRACT && u->op != OP_ADD)
            continue;
        for (int i = 0; i < u->nin; i++) {
            g_value *w = u->in[i];
            if (!is_scale(w))
                continue;
            if (u->op == OP_ADD)
                u->coef_in[i] *= w->coef;
            else
                u->coef = u->coef_in[i] > 0 ? u->coef * w->coef : u->coef / w->coef;
            graph_set_operand(u, i, w->in[0], u->coef_in[i]);
        }
    }
    pass_dce(g);
}

void pass_fold(graph *g)
{
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->op != OP_CONTRACT || v->nin < 2)
            continue;
        int others = 0;
        for (int i = 0; i < v->nin; i++) /* a complex number is no real scale: it stays an operand */
            others += v->in[i]->op != OP_CONST || dt_complex(v->in[i]->dt);
        if (others == 0)
            continue; /* keep a contraction of numbers as it is */
        g_value *keep[64], **kept = v->nin <= 64 ? keep : arena_alloc(g->arena, sizeof(g_value *) * (size_t)v->nin);
        double ekeep[64], *exps = v->nin <= 64 ? ekeep : arena_alloc(g->arena, sizeof(double) * (size_t)v->nin);
        int n = 0;
        for (int i = 0; i < v->nin; i++) {
            g_value *w = v->in[i];
            if (w->op == OP_CONST && !dt_complex(w->dt)) {
                v->coef = v->coef_in[i] > 0 ? v->coef * w->coef : v->coef / w->coef;
                continue;
            }
            kept[n] = w;
            exps[n++] = v->coef_in[i];
        }
        graph_set_operands(g, v, n, kept, exps);
    }
    graph_renumber(g);
}

void pass_dce(graph *g)
{
    /* backwards, so a value whose only users die dies too */
    for (int k = g->n - 1; k >= 0; k--) {
        g_value *v = g->v[k];
        /* a store is the program's effect, unless it writes a tmp or let
           tensor that nothing reads afterwards */
        int scratch = v->op == OP_STORE && (g->S->vars[v->var]->io == IO_TMP || g->S->vars[v->var]->io == IO_LET) &&
                      v->in[0]->op != OP_PART; /* a multi-result call writes all of its parts */
        if ((v->op != OP_STORE || scratch) && v->nuses == 0)
            graph_kill(g, v);
    }
    graph_renumber(g);
}
