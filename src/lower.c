/*
 * lower.c — from the checked CST to the OpGraph: where the summation rule
 * of tx(5) §4.1 is decided.
 *
 * lower(N, K) produces a value for CST node N whose labels include K, the
 * labels of N that the rest of the statement uses ("outside" N). The rule
 * of tx(5) §4.1, in this one function and its cases:
 *
 *  - A label is summed at the lowest summing point that contains all of its
 *    occurrences. Summing points are products (* and /, one n-ary
 *    contraction per product chain), the terms of a sum (and the whole
 *    right side, the top term), and reduce (with its operator).
 *  - Transparent operations sum nothing: elementwise functions, the base
 *    of ^, the denominator of /, scan. Inside them (L->transparent) a sum
 *    keeps every label, and a product sums only what it contracts, a label
 *    open in two or more of its factors and needed nowhere else (so
 *    tanh(W("i,k") * x("k") + b("i")) is a dense layer); every other label
 *    flows out to the first summing point above. So x / y is x * y^-1,
 *    and exp(2 * A) sums like exp(a * A). Inside reduce's operand nothing
 *    sums (the reduce does, with its operator).
 *  - A sum's target is what is used outside it; each term sums its own
 *    other labels, and a target label a term lacks broadcasts it. Inside a
 *    transparent operation a sum keeps every label of its terms.
 *  - reduce sums the labels of its argument that nothing outside it uses,
 *    wherever it stands (also inside a transparent operation).
 *  - A bare let is lowered once per distinct (K, context) and shared by
 *    every such use: the DAG of the CST becomes shared SSA values.
 *
 * A value may come back with more labels than K (a transparent operation
 * keeps all of its own): the summing point that called for it sums them.
 */
#include <string.h>

#include "tx.h"
#include "parser.h"

typedef struct memo {
    cst_node *let;
    labelset keep;
    int wide, transparent;
    g_value *v;
    struct memo *next;
} memo;

/* The backward sweep of one differentiated value, shared by its grads. */
typedef struct grad_memo {
    g_value *s;
    grad_sweep *sw;
    int at;          /* the graph's length when the sweep ran */
    struct grad_memo *next;
} grad_memo;

typedef struct {
    sema_program *S;
    graph *g;
    grad_memo *grads;
    tx_diag *diag;
    g_value **cur;   /* current value of each tensor variable */
    cst_stmt *st;    /* statement being lowered */
    int stmt_no;
    int pref[TX_MAX_LABELS]; /* label order preference for this statement */
    memo *memos;
    int failed;      /* an error was reported */
    int npow_tmp;    /* hidden tmp tensors pow has asked for (S->pow_tmp) */
    int wide;        /* the statement mixes in f64: compute everything in f64 */
    tx_extent *lab_ext; /* label extents in the current scope (a call's arguments have their own) */
    int transparent; /* the context (tx(5) §4.1): NORMAL, TRANSPARENT or OPAQUE_SUMS */
} lowerer;

/* Where a node stands, for the summation rule. */
enum {
    NORMAL = 0,      /* products and terms sum what is not needed outside them */
    TRANSPARENT = 1, /* inside a function, a power's base, a denominator, scan:
                        only contractions (labels shared by factors) sum */
    OPAQUE_SUMS = 2  /* inside reduce's operand: nothing sums but inner reduces */
};

/* Attaches the statement's sparse maps whose labels V's loops all run
   over: those loops then follow the map's entries (tx(5) §7). */
static void restrict_by_maps(lowerer *L, g_value *v)
{
    if (!L->st || v->op == OP_INDEX || v->op == OP_INPUT || v->op == OP_CONST || v->op == OP_PART ||
        v->op == OP_LINALG)
        return;
    graph_restrict(L->g, v, L->st->maps, L->st->nmaps);
}

/* Appends V to the graph; in a statement that involves f64 (or c128)
   every computed value is f64, or c128 if complex (tx(5) §4.2: a
   statement mixing f32 and f64 computes in f64). */
static g_value *add(lowerer *L, g_value *v)
{
    if (L->wide && v->op != OP_INDEX && v->op != OP_INPUT && v->op != OP_STORE && v->op != OP_CONST)
        v->dt = dt_widen(v->dt);
    restrict_by_maps(L, v);
    return graph_add(L->g, v);
}

static g_value *lower(lowerer *L, cst_node *n, labelset keep);
static g_value *lower_la(lowerer *L, cst_node *n, labelset keep);

/* Fills V's labels and extents from set LS, in the statement's preferred
   order (target labels first, in target order). */
static void set_labels(lowerer *L, g_value *v, labelset ls)
{
    int ids[TX_MAX_LABELS], n = 0;
    for (int id = 0; id < L->S->cst->nlabel_names; id++)
        if (ls_has(&ls, id))
            ids[n++] = id;
    for (int i = 1; i < n; i++) /* insertion sort by preference */
        for (int j = i; j > 0 && L->pref[ids[j]] < L->pref[ids[j - 1]]; j--) {
            int t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    if (n > TX_MAX_MODES) {
        if (!L->failed)
            diag_error(L->diag, L->st->span, "an intermediate of this statement would have %d modes; "
                       "the limit is %d (split the statement with let)", n, TX_MAX_MODES);
        L->failed = 1;
        n = TX_MAX_MODES;
    }
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < n; i++)
        ext[i] = L->lab_ext[ids[i]];
    graph_set_modes(v, n, ids, ext);
}

/* A new value of the current statement with NIN operand slots. */
static g_value *new_value(lowerer *L, op_kind op, int nin, tx_span span)
{
    return graph_value_new(L->g, op, nin, L->st ? L->st->index : -1, span);
}

static dtype join_dt(dtype a, dtype b) { return dt_join(a, b); }

/* Sums V over its labels outside KEEP; V itself if there are none. */
static g_value *sum_out(lowerer *L, g_value *v, labelset keep, tx_span span)
{
    labelset have = graph_value_labels(v);
    labelset out = ls_inter(have, keep);
    if (ls_eq(out, have))
        return v;
    g_value *c = new_value(L, OP_CONTRACT, 1, span);
    graph_set_operand(c, 0, v, 1);
    c->dt = v->dt;
    c->summed = ls_minus(have, out);
    set_labels(L, c, out);
    return add(L, c);
}

static g_value *const_value(lowerer *L, double x, tx_span span)
{
    g_value *c = new_value(L, OP_CONST, 0, span);
    c->coef = x;
    c->dt = DT_F32; /* a number does not widen the computation */
    return add(L, c);
}

/* delta("i,j"): computed from the loop indices, never stored unless a
   user needs it in memory */
static g_value *lower_delta(lowerer *L, cst_node *n, labelset keep)
{
    g_value *v = new_value(L, OP_MAP, 0, n->span);
    v->fn = MAP_DELTA;
    v->dt = DT_F32; /* a number does not widen the computation */
    int r = 0, label[TX_MAX_MODES];
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < n->nlabels; i++) {
        int seen = 0;
        for (int j = 0; j < r; j++)
            seen |= label[j] == n->labels[i].label;
        if (!seen) {
            label[r] = n->labels[i].label;
            ext[r++] = L->lab_ext[n->labels[i].label];
        }
    }
    graph_set_modes(v, r, label, ext);
    add(L, v);
    return L->transparent ? v : sum_out(L, v, keep, n->span);
}

/* A dim in an expression: its extent, as a number. */
static g_value *lower_dim(lowerer *L, cst_node *n)
{
    g_value *v = new_value(L, OP_MAP, 0, n->span);
    v->fn = MAP_DIM;
    v->fn_arg = n->sym->var; /* its position in the program's dims */
    v->dt = DT_F32;
    graph_set_modes(v, 0, NULL, NULL);
    return add(L, v);
}

static g_value *lower_ref(lowerer *L, cst_node *n, labelset keep)
{
    if (n->fn == MAP_DELTA)
        return lower_delta(L, n, keep);
    sym *t = n->sym;
    g_value *base = L->cur[t->var];
    TX_ASSERT(base);
    if (t->rank == 0)
        return base;
    g_value *v = new_value(L, OP_INDEX, 1, n->span);
    graph_set_operand(v, 0, base, 1);
    v->dt = t->dt;
    int r = 0, label[TX_MAX_MODES];
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < n->nlabels; i++) {
        cst_label *l = &n->labels[i];
        v->idx_label[i] = l->label;
        v->idx_chip[i] = l->chip;
        v->chip_span[i] = l->span;
        if (l->label < 0)
            continue;
        int seen = 0;
        for (int j = 0; j < r; j++)
            if (label[j] == l->label)
                seen = 1;
        if (!seen) { /* labels in order of appearance: no copy for A("i,j") */
            label[r] = l->label;
            ext[r++] = t->ext[i];
        }
    }
    graph_set_modes(v, r, label, ext);
    add(L, v);
    return L->transparent ? v : sum_out(L, v, keep, n->span);
}

/* N lowered in context CTX or, if the current one is stronger, in that
   (NORMAL < TRANSPARENT < OPAQUE_SUMS); the context is restored after. */
static g_value *lower_ctx(lowerer *L, cst_node *n, labelset keep, int ctx)
{
    int outer = L->transparent;
    if (ctx > outer)
        L->transparent = ctx;
    g_value *v = lower(L, n, keep);
    L->transparent = outer;
    return v;
}

/* The factors of a product chain or the terms of a sum: at most
   MAX_OPERANDS, in arena arrays of the size counted first (nothing
   malloc'd is held while lowering the operands, which can longjmp). */
#define MAX_OPERANDS 4096

typedef struct {
    cst_node **node;
    double *exp;
    g_value **val;
    int n, cap;
    double coef;
} factors;

/* The number of factors collect_factors finds in N. */
static int count_factors(const cst_node *n)
{
    if (n->is_number)
        return 0;
    switch (n->kind) {
    case CST_MUL:
        return count_factors(n->a) + count_factors(n->b);
    case CST_DIV:
        return count_factors(n->a) + !n->b->is_number;
    case CST_NEG:
        return count_factors(n->a);
    default:
        return 1;
    }
}

/* Flattens a product chain into factors. Returns -1 if there are too many. */
static int collect_factors(cst_node *n, factors *f)
{
    if (n->is_number) {
        f->coef *= n->num;
        return 0;
    }
    switch (n->kind) {
    case CST_MUL:
        return collect_factors(n->a, f) < 0 ? -1 : collect_factors(n->b, f);
    case CST_DIV:
        if (collect_factors(n->a, f) < 0)
            return -1;
        if (n->b->is_number) {
            f->coef /= n->b->num;
            return 0;
        }
        if (f->n == f->cap)
            return -1;
        f->node[f->n] = n->b;
        f->exp[f->n++] = -1;
        return 0;
    case CST_NEG:
        f->coef = -f->coef;
        return collect_factors(n->a, f);
    default:
        if (f->n == f->cap)
            return -1;
        f->node[f->n] = n;
        f->exp[f->n++] = 1;
        return 0;
    }
}

static g_value *lower_product(lowerer *L, cst_node *n, labelset keep)
{
    factors fs = {.coef = 1}, *f = &fs;
    int count = count_factors(n);
    f->cap = count < MAX_OPERANDS ? count : MAX_OPERANDS;
    f->node = arena_alloc(L->g->arena, sizeof(cst_node *) * (size_t)(f->cap + 1));
    f->exp = arena_alloc(L->g->arena, sizeof(double) * (size_t)(f->cap + 1));
    f->val = arena_alloc(L->g->arena, sizeof(g_value *) * (size_t)(f->cap + 1));
    if (collect_factors(n, f) < 0) {
        diag_error(L->diag, n->span, "a product of more than %d factors", MAX_OPERANDS);
        return NULL;
    }
    g_value **vals = f->val;
    labelset all = {{0}};
    dtype dt = DT_F32;
    for (int i = 0; i < f->n; i++) {
        labelset others = {{0}};
        for (int j = 0; j < f->n; j++)
            if (j != i)
                others = ls_union(others, f->node[j]->ls);
        labelset k = ls_inter(f->node[i]->ls, ls_union(keep, others));
        /* a denominator is transparent: its labels flow out and are summed
           here, after dividing */
        vals[i] = lower_ctx(L, f->node[i], k, f->exp[i] < 0 ? TRANSPARENT : NORMAL);
        if (!vals[i])
            return NULL;
        all = ls_union(all, graph_value_labels(vals[i]));
        dt = join_dt(dt, vals[i]->dt);
    }
    if (f->n == 1 && f->exp[0] > 0 && f->coef == 1)
        return vals[0];
    if (f->n == 0)
        return const_value(L, f->coef, n->span);
    g_value *c = new_value(L, OP_CONTRACT, 0, n->span);
    graph_set_operands(L->g, c, f->n, vals, f->exp);
    c->coef = f->coef;
    c->dt = dt;
    /* a summing point: what is not needed outside. Inside a transparent
       operation only a contraction sums: a label open in two or more
       factors and needed nowhere else; one in a single factor flows out.
       Inside reduce's operand nothing sums. */
    labelset out = ls_inter(all, keep);
    if (L->transparent == TRANSPARENT) {
        labelset shared = {{0}}, seen = {{0}};
        for (int i = 0; i < f->n; i++) {
            labelset li = graph_value_labels(vals[i]);
            shared = ls_union(shared, ls_inter(seen, li));
            seen = ls_union(seen, li);
        }
        out = ls_minus(all, ls_minus(shared, keep));
    } else if (L->transparent == OPAQUE_SUMS)
        out = all;
    c->summed = ls_minus(all, out);
    set_labels(L, c, out);
    return add(L, c);
}

typedef struct {
    cst_node **node;
    double *sign;
    int n, cap;
    double constant;
} terms;

/* The number of terms collect_terms finds in N. */
static int count_terms(const cst_node *n)
{
    if (n->is_number)
        return 0;
    if (n->kind == CST_ADD || n->kind == CST_SUB)
        return count_terms(n->a) + count_terms(n->b);
    return 1;
}

static int collect_terms(cst_node *n, double sign, terms *t)
{
    if (n->is_number) {
        t->constant += sign * n->num;
        return 0;
    }
    if (n->kind == CST_ADD || n->kind == CST_SUB) {
        if (collect_terms(n->a, sign, t) < 0)
            return -1;
        return collect_terms(n->b, n->kind == CST_SUB ? -sign : sign, t);
    }
    if (t->n == t->cap)
        return -1;
    t->node[t->n] = n;
    t->sign[t->n++] = sign;
    return 0;
}

static g_value *lower_sum(lowerer *L, cst_node *n, labelset keep)
{
    terms ts = {0}, *t = &ts;
    int count = count_terms(n);
    t->cap = count < MAX_OPERANDS ? count : MAX_OPERANDS;
    t->node = arena_alloc(L->g->arena, sizeof(cst_node *) * (size_t)(t->cap + 1));
    t->sign = arena_alloc(L->g->arena, sizeof(double) * (size_t)(t->cap + 1));
    if (collect_terms(n, 1, t) < 0) {
        diag_error(L->diag, n->span, "a sum of more than %d terms", MAX_OPERANDS);
        return NULL;
    }
    /* the target: what is used outside the sum; inside a transparent
       operation, every label of every term */
    if (t->n == 0) /* only numbers, e.g. 3 - K with dim K = 3: one constant */
        return const_value(L, t->constant, n->span);
    labelset target = ls_inter(n->ls, keep);
    if (L->transparent)
        target = n->ls;
    g_value *a = new_value(L, OP_ADD, t->n, n->span);
    dtype dt = DT_F32;
    labelset have = {{0}};
    for (int i = 0; i < t->n; i++) {
        labelset k = ls_inter(t->node[i]->ls, target);
        if (L->transparent) { /* what the rest uses, for reduces inside the term */
            labelset others = keep;
            for (int j = 0; j < t->n; j++)
                if (j != i)
                    others = ls_union(others, t->node[j]->ls);
            k = ls_inter(t->node[i]->ls, others);
        }
        g_value *v = lower(L, t->node[i], k);
        if (!v)
            return NULL;
        if (!L->transparent) /* each term a summing point of its own labels */
            v = sum_out(L, v, target, t->node[i]->span);
        graph_set_operand(a, i, v, t->sign[i]);
        dt = join_dt(dt, v->dt);
        have = ls_union(have, graph_value_labels(v));
    }
    if (L->transparent)
        target = have; /* labels that inner reduces summed are gone */
    if (t->constant != 0)
        graph_add_operand(L->g, a, const_value(L, t->constant, n->span), 1);
    a->dt = dt;
    set_labels(L, a, target);
    return add(L, a);
}

static g_value *lower_pow(lowerer *L, cst_node *n, labelset keep)
{
    g_value *x = lower_ctx(L, n->a, ls_inter(n->a->ls, keep), TRANSPARENT); /* the base */
    if (!x)
        return NULL;
    g_value *m = new_value(L, OP_MAP, 1, n->span);
    graph_set_operand(m, 0, x, 1);
    m->fn = MAP_POW;
    m->fn_arg = n->num;
    m->dt = x->dt;
    graph_set_modes(m, x->rank, x->label, x->ext);
    return add(L, m);
}

/* An elementwise function of one or two arguments: transparent, like ^. */
static g_value *lower_map(lowerer *L, cst_node *n, labelset keep)
{
    int nin = n->args.n;
    g_value *m = new_value(L, OP_MAP, nin, n->span);
    m->fn = (map_fn)n->fn;
    m->dt = DT_F32;
    labelset have = {{0}};
    for (int i = 0; i < nin; i++) {
        cst_node *a = n->args.v[i];
        labelset others = keep; /* what the rest uses, for reduces inside */
        for (int j = 0; j < nin; j++)
            if (j != i)
                others = ls_union(others, n->args.v[j]->ls);
        g_value *x = lower_ctx(L, a, ls_inter(a->ls, others), TRANSPARENT);
        if (!x)
            return NULL;
        graph_set_operand(m, i, x, 1);
        m->dt = join_dt(m->dt, x->dt);
        have = ls_union(have, graph_value_labels(x));
    }
    if (m->fn == MAP_REAL || m->fn == MAP_IMAG || m->fn == MAP_ABS || (m->fn >= MAP_LT && m->fn <= MAP_NE))
        m->dt = dt_real(m->dt); /* a part, a modulus, a truth value */
    set_labels(L, m, have);
    return add(L, m); /* transparent: its labels flow out */
}

/* reduce(op, x): x is evaluated elementwise over every label it has (it
   is transparent: products inside it sum nothing); those the rest of the
   statement does not use are then reduced with op, wherever the reduce
   stands. reduce(+, x) is a plain summation, so it lowers to the same
   contraction. */
static g_value *lower_reduce(lowerer *L, cst_node *n, labelset keep)
{
    cst_node *x = n->args.v[1];
    int op = n->args.v[0]->fn;
    g_value *v = lower_ctx(L, x, ls_inter(x->ls, keep), OPAQUE_SUMS); /* nothing sums in its operand */
    if (!v)
        return NULL;
    if (op == RED_ADD)
        return sum_out(L, v, keep, n->span);
    labelset have = graph_value_labels(v), out = ls_inter(have, keep);
    if (ls_eq(out, have))
        return v;
    g_value *r = new_value(L, OP_REDUCE, 1, n->span);
    graph_set_operand(r, 0, v, 1);
    r->red = (reduce_op)op;
    r->dt = v->dt;
    r->summed = ls_minus(have, out);
    set_labels(L, r, out);
    return add(L, r);
}

/* scan(op, x, "k"): transparent like an elementwise function, with k kept. */
static g_value *lower_scan(lowerer *L, cst_node *n, labelset keep)
{
    cst_node *x = n->args.v[1];
    labelset k = ls_inter(n->ls, keep);
    ls_add(&k, n->scan_label);
    g_value *v = lower_ctx(L, x, ls_inter(x->ls, k), TRANSPARENT);
    if (!v)
        return NULL;
    g_value *s = new_value(L, OP_SCAN, 1, n->span);
    graph_set_operand(s, 0, v, 1);
    s->red = (reduce_op)n->args.v[0]->fn;
    s->scan_label = n->scan_label;
    s->scan_reverse = n->name.kind == TK_SCANR;
    s->dt = v->dt;
    set_labels(L, s, graph_value_labels(v));
    return add(L, s); /* transparent: its labels flow out */
}

/* grad(s, X("i,j")): s lowered in the call's own label scope and summed
   to a scalar; its backward sweep (grad.c), shared by every grad of the
   same value, gives X's adjoint with the call's labels. Like a tensor. */
static g_value *lower_grad(lowerer *L, cst_node *n, labelset keep)
{
    cst_node *a = n->args.v[0];
    labelset none = {{0}};
    tx_extent *outer = L->lab_ext;
    int ctx = L->transparent;
    L->lab_ext = n->scope_ext;
    L->transparent = NORMAL;
    g_value *s = lower(L, a, none);
    if (s)
        s = sum_out(L, s, none, a->span);
    L->transparent = ctx;
    L->lab_ext = outer;
    if (!s)
        return NULL;
    grad_memo *m = L->grads;
    while (m && m->s != s)
        m = m->next;
    /* an inout tensor written since the sweep: its adjoints may read the
       entry value in a later user's loops (fusion), so sweep again */
    for (int k = m ? m->at : 0; m && k < L->g->n; k++)
        if (L->g->v[k]->op == OP_STORE && L->S->vars[L->g->v[k]->var]->io == IO_INOUT)
            m = NULL;
    if (!m) {
        m = arena_alloc(L->g->arena, sizeof *m);
        m->s = s;
        m->sw = grad_sweep_run(L->g, s, n, L->st->index, n->span);
        m->at = L->g->n;
        m->next = L->grads;
        L->grads = m;
    }
    sym *x = n->args.v[1]->sym;
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < n->ncall_labels; i++)
        ext[i] = x->ext[i];
    g_value *v = grad_result(m->sw, x->var, x->rank, n->call_labels, ext, L->diag, L->st->index, n->span);
    if (!v) {
        L->failed = 1;
        return NULL;
    }
    return L->transparent || v->rank == 0 ? v : sum_out(L, v, keep, n->span); /* like a tensor */
}

static g_value *lower_let(lowerer *L, cst_node *n, labelset keep)
{
    labelset k = ls_inter(n->ls, keep);
    for (memo *m = L->memos; m; m = m->next)
        if (m->let == n && ls_eq(m->keep, k) && m->wide == L->wide && m->transparent == L->transparent)
            return m->v;
    g_value *v = lower(L, n->a, k);
    if (!v)
        return NULL;
    memo *m = arena_alloc(L->g->arena, sizeof *m);
    m->let = n;
    m->keep = k;
    m->wide = L->wide;
    m->transparent = L->transparent;
    m->v = v;
    m->next = L->memos;
    L->memos = m;
    return v;
}

static g_value *lower(lowerer *L, cst_node *n, labelset keep)
{
    if (n->is_number)
        return const_value(L, n->num, n->span);
    switch (n->kind) {
    case CST_NUM: { /* an imaginary literal: a c64 constant (it widens nothing) */
        g_value *c = new_value(L, OP_CONST, 0, n->span);
        c->coef = 0;
        c->coef_im = n->num;
        c->dt = DT_C64;
        return add(L, c);
    }
    case CST_REF:
        return lower_ref(L, n, keep);
    case CST_NAME:
        if (n->sym->kind == SYM_DIM)
            return lower_dim(L, n);
        return L->cur[n->sym->var];
    case CST_MUL: case CST_DIV: case CST_NEG:
        return lower_product(L, n, keep);
    case CST_ADD: case CST_SUB:
        return lower_sum(L, n, keep);
    case CST_POW:
        return lower_pow(L, n, keep);
    case CST_LETUSE:
        return lower_let(L, n->a, keep);
    case CST_CALL:
        if (n->la == LA_GRAD)
            return lower_grad(L, n, keep);
        if (n->la)
            return lower_la(L, n, keep);
        if (n->fn)
            return lower_map(L, n, keep);
        return n->name.kind == TK_REDUCE ? lower_reduce(L, n, keep) : lower_scan(L, n, keep);
    default:
        TX_ASSERT(!"unexpected node in lowering");
        return NULL;
    }
}

/* A value that reads variable VAR's buffer in place (a view or the
   variable itself). */
static int reads_var(const g_value *v, int var)
{
    if (v->op == OP_INDEX)
        v = v->in[0];
    return (v->op == OP_INPUT || v->op == OP_STORE) && v->var == var;
}

static void begin_stmt(lowerer *L, cst_stmt *st, cst_target *t)
{
    L->st = st;
    L->wide = st->wide;
    L->lab_ext = st->lab_ext;
    for (int i = 0; i < TX_MAX_LABELS; i++)
        L->pref[i] = TX_MAX_MODES + i;
    for (int i = 0; t && i < t->nlabels; i++)
        L->pref[t->labels[i].label] = i;
}

/* Stores V into target T of statement ST with OP. */
static void store_value(lowerer *L, cst_stmt *st, cst_target *t, int op, g_value *v)
{
    sym *var = t->sym;
    if (reads_var(v, var->var) && v->rank > 0) {
        /* C("i,j") = C("j,i"): copy before overwriting the buffer it reads */
        g_value *c = new_value(L, OP_CONTRACT, 1, st->expr->span);
        graph_set_operand(c, 0, v, 1);
        c->dt = v->dt;
        set_labels(L, c, graph_value_labels(v));
        v = add(L, c);
    }
    g_value *s = new_value(L, OP_STORE, 1, st->span);
    graph_set_operand(s, 0, v, 1);
    if (op != '=') /* accumulation reads the previous value */
        graph_add_operand(L->g, s, L->cur[var->var], 1);
    s->store_op = op;
    s->var = var->var;
    s->dt = var->dt;
    int positional[TX_MAX_MODES];
    for (int i = 0; i < var->rank; i++) {
        positional[i] = -1;
        s->store_label[i] = t->labels[i].label;
    }
    graph_set_modes(s, var->rank, positional, var->ext);
    restrict_by_maps(L, s);
    graph_add(L->g, s);
    L->cur[var->var] = s;
}

/* A view of target T's tensor as it is now, through the target's labels
   (FRESH: through its own label per mode, the whole tensor). */
static g_value *target_index(lowerer *L, cst_target *t, int fresh)
{
    g_value *base = L->cur[t->sym->var];
    TX_ASSERT(base);
    if (t->sym->rank == 0)
        return base;
    g_value *ix = new_value(L, OP_INDEX, 1, t->span);
    graph_set_operand(ix, 0, base, 1);
    ix->dt = t->sym->dt;
    int r = 0, label[TX_MAX_MODES];
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < t->nlabels; i++) {
        int l = fresh && t->fresh ? t->fresh[i] : t->labels[i].label, seen = 0;
        ix->idx_label[i] = l;
        ix->idx_chip[i] = 0;
        ix->chip_span[i] = t->labels[i].span;
        for (int j = 0; j < r; j++)
            seen |= label[j] == l;
        if (!seen) {
            label[r] = l;
            ext[r++] = t->sym->ext[i];
        }
    }
    graph_set_modes(ix, r, label, ext);
    return add(L, ix);
}

static int lower_store(lowerer *L, cst_stmt *st, cst_target *t, int op)
{
    labelset keep = {{0}};
    for (int i = 0; i < t->nlabels; i++)
        ls_add(&keep, t->labels[i].label);
    L->transparent = NORMAL;
    g_value *v = lower(L, st->expr, keep);
    if (!v)
        return -1;
    v = sum_out(L, v, keep, st->expr->span); /* the top term sums the rest */
    if (op == '*' || op == '/' || (t->fresh && op != '=')) {
        /* T *= e is T = T * e, with e summed first; likewise += on a
           diagonal (the old diagonal is read through a view) */
        g_value *old = target_index(L, t, 0);
        g_value *vals[2] = {old, v};
        g_value *c;
        if (op == '+' || op == '-') {
            c = new_value(L, OP_ADD, 2, st->span);
            graph_set_operand(c, 0, old, 1);
            graph_set_operand(c, 1, v, op == '+' ? 1 : -1);
        } else {
            double exps[2] = {1, op == '*' ? 1 : -1};
            c = new_value(L, OP_CONTRACT, 0, st->span);
            graph_set_operands(L->g, c, 2, vals, exps);
            c->coef = 1;
        }
        c->dt = join_dt(old->dt, v->dt);
        set_labels(L, c, keep);
        v = add(L, c);
        op = '=';
    }
    if (t->fresh) {
        /* A("i,i") = d("i"): every entry is written, the diagonal with the
           new value and the rest with the old, where(delta, new, old) over
           labels of its own for each mode ("i", "i#1") */
        int nf = t->nlabels;
        g_value *d = NULL;
        for (int i = 0; i < nf; i++) {
            if (t->fresh[i] == t->labels[i].label)
                continue;
            int first = 0;
            while (t->labels[first].label != t->labels[i].label)
                first++;
            g_value *e = new_value(L, OP_MAP, 0, t->span);
            e->fn = MAP_DELTA;
            e->dt = DT_F32;
            int lab[2] = {t->fresh[first], t->fresh[i]};
            tx_extent ext[2] = {t->sym->ext[first], t->sym->ext[i]};
            graph_set_modes(e, 2, lab, ext);
            e = add(L, e);
            if (d) {
                g_value *pr[2] = {d, e};
                double ex[2] = {1, 1};
                g_value *c = new_value(L, OP_CONTRACT, 0, t->span);
                graph_set_operands(L->g, c, 2, pr, ex);
                c->coef = 1;
                c->dt = DT_F32;
                labelset ls = ls_union(graph_value_labels(d), graph_value_labels(e));
                set_labels(L, c, ls);
                e = add(L, c);
            }
            d = e;
        }
        g_value *old = target_index(L, t, 1);
        g_value *w = new_value(L, OP_MAP, 3, st->span);
        w->fn = MAP_WHERE;
        graph_set_operand(w, 0, d, 1);
        graph_set_operand(w, 1, v, 1);
        graph_set_operand(w, 2, old, 1);
        w->dt = join_dt(v->dt, old->dt);
        graph_set_modes(w, old->rank, old->label, old->ext);
        v = add(L, w);
        cst_target ft = *t; /* stored through the labels of its own */
        cst_label *fl = arena_alloc(L->g->arena, sizeof *fl * (size_t)nf);
        for (int i = 0; i < nf; i++) {
            fl[i] = t->labels[i];
            fl[i].label = t->fresh[i];
        }
        ft.labels = fl;
        store_value(L, st, &ft, '=', v);
        return 0;
    }
    store_value(L, st, t, op, v);
    return 0;
}

/* Lowers the matrix arguments of linear-algebra call N, each in the
   call's own label scope and laid out row-major in its written label
   order (copied if it is not already); returns 0 or -1. */
static int lower_la_args(lowerer *L, cst_node *n, g_value **args, int *nargs)
{
    tx_extent *outer = L->lab_ext;
    L->lab_ext = n->scope_ext;
    int nmat = n->la == LA_SLICE || n->la == LA_POW ? 1 : n->args.n;
    for (int i = 0; i < nmat; i++) {
        cst_node *a = n->args.v[i];
        int nl = n->narg_labels[i];
        const int *order = n->arg_labels[i];
        labelset want = {{0}};
        for (int k = 0; k < nl; k++)
            ls_add(&want, order[k]);
        int ctx = L->transparent; /* an argument is a statement of its own */
        L->transparent = NORMAL;
        g_value *v = lower(L, a, want);
        L->transparent = ctx;
        if (v)
            v = sum_out(L, v, want, a->span);
        if (!v) {
            L->lab_ext = outer;
            return -1;
        }
        args[i] = v;
    }
    /* every matrix in the call's element type (complex if one is; f64 in
       a statement that involves f64) */
    dtype dt = 0;
    for (int i = 0; i < nmat; i++)
        dt = join_dt(dt, args[i]->dt);
    if (L->wide)
        dt = dt_widen(dt);
    for (int i = 0; i < nmat; i++) {
        g_value *v = args[i];
        int nl = n->narg_labels[i];
        const int *order = n->arg_labels[i];
        cst_node *a = n->args.v[i];
        /* already contiguous in this order, and of the call's type: a whole
           tensor, or a computed value */
        int ok = v->rank == nl && (v->dt == dt || n->la == LA_SLICE);
        for (int k = 0; ok && k < nl; k++)
            ok = v->label[k] == order[k] || (v->op == OP_INDEX && v->idx_label[k] == order[k]);
        if (v->op == OP_INDEX)
            for (int k = 0; ok && k < v->in[0]->rank; k++)
                ok = k < nl && v->idx_label[k] == order[k];
        else if (v->op == OP_INPUT || v->op == OP_STORE || v->op == OP_CONST)
            ok = 0;
        if (!ok && n->la != LA_SLICE) { /* LAPACK reads row-major, contiguous */
            g_value *c = new_value(L, OP_CONTRACT, 1, a->span);
            graph_set_operand(c, 0, v, 1);
            c->dt = dt;
            tx_extent ext[TX_MAX_MODES];
            for (int k = 0; k < nl; k++)
                ext[k] = L->lab_ext[order[k]];
            graph_set_modes(c, nl, order, ext);
            v = add(L, c);
        }
        args[i] = v;
    }
    L->lab_ext = outer;
    *nargs = nmat;
    return 0;
}

/* Matrix V (labels R, C, extents N2) stored whole into the next hidden
   tmp tensor of pow (sema_hidden_tmp), to be read back through other
   labels. */
static g_value *mpow_store(lowerer *L, cst_node *n, g_value *v, int r, int c, const tx_extent *n2)
{
    sym *t = sema_hidden_tmp(L->S, &L->S->pow_tmp, L->npow_tmp++, "pow", n->span, v->dt, 2, n2);
    int rc[2] = {r, c};
    return graph_store_whole(L->g, v, t, rc, L->st ? L->st->index : -1, n->span, NULL);
}

/* The product of the matrices stored by SA and SB: labels R, C, summed
   over label K. */
static g_value *mpow_product(lowerer *L, cst_node *n, g_value *sa, g_value *sb, int r, int c, int k)
{
    int stmt = L->st ? L->st->index : -1, rk[2] = {r, k}, kc[2] = {k, c};
    g_value *f[2] = {graph_view(L->g, sa, rk, stmt, n->span, NULL), graph_view(L->g, sb, kc, stmt, n->span, NULL)};
    double one[2] = {1, 1};
    g_value *p = new_value(L, OP_CONTRACT, 0, n->span);
    graph_set_operands(L->g, p, 2, f, one);
    p->coef = 1;
    p->dt = sa->dt;
    ls_add(&p->summed, k);
    int rc[2] = {r, c};
    graph_set_modes(p, 2, rc, sa->ext);
    return add(L, p);
}

/* pow(A, p), p != 0, with A (or inv(A) for p < 0) the matrix M: M for
   |p| = 1, else the
   products of repeated squaring over the bits of |p| from the top
   (M^j to M^2j, and a set bit then M^(2j+1)), each power stored into a
   hidden tmp tensor. In the graph rather than one runtime call, they are
   matrix products like any other (BLAS, the MPI plan), and a gradient
   differentiates them (grad.c), reusing the stored powers. NULL after an
   error. */
static g_value *lower_matrix_pow(lowerer *L, cst_node *n, g_value *a)
{
    int r = n->arg_labels[0][0], c = n->arg_labels[0][1];
    cst_program *P = L->S->cst;
    const char *name = arena_printf(L->g->arena, "%s#pow", P->label_names[r]);
    int k = cst_label_id(P, name, strlen(name));
    if (k < 0) {
        diag_error(L->diag, n->span, "too many labels in the program for 'pow' (at most %d)", TX_MAX_LABELS);
        L->failed = 1;
        return NULL;
    }
    L->g->label_names = P->label_names;
    int rc[2] = {r, c};
    tx_extent n2[2] = {a->ext[0], a->ext[1]};
    g_value *m = a;
    if (n->num < 0) {
        m = new_value(L, OP_LINALG, 1, n->span);
        m->la = LA_INV;
        m->la_pow = 1; /* its run-time error names pow (emit_linalg.c) */
        m->nout = 1;
        graph_set_operand(m, 0, a, 1);
        m->dt = a->dt;
        graph_set_modes(m, 2, rc, n2);
        add(L, m);
    }
    uint64_t e = n->num < 0 ? (uint64_t)0 - (uint64_t)(int64_t)n->num : (uint64_t)(int64_t)n->num;
    if (e == 1)
        return m; /* A itself, or inv(A) */
    int top = 63;
    while (!((e >> top) & 1))
        top--;
    g_value *x = mpow_store(L, n, m, r, c, n2), *pw = x, *v = NULL;
    for (int bit = top - 1; bit >= 0; bit--) {
        int set = (int)((e >> bit) & 1);
        v = mpow_product(L, n, pw, pw, r, c, k);
        if (set) {
            pw = mpow_store(L, n, v, r, c, n2);
            v = mpow_product(L, n, pw, x, r, c, k);
        }
        if (bit > 0)
            pw = mpow_store(L, n, v, r, c, n2);
    }
    return v;
}

/* cholesky, inv, pow, solve (one result) and slice inside an expression:
   like a tensor with the call's labels. */
static g_value *lower_la(lowerer *L, cst_node *n, labelset keep)
{
    g_value *args[2];
    int nargs = 0;
    if (lower_la_args(L, n, args, &nargs) < 0)
        return NULL;
    if (n->la == LA_POW && n->num != 0) {
        g_value *v = lower_matrix_pow(L, n, args[0]);
        return !v || L->transparent ? v : sum_out(L, v, keep, n->span);
    }
    g_value *v = new_value(L, n->la == LA_SLICE ? OP_SLICE : OP_LINALG, nargs, n->span);
    v->la = (la_fn)n->la;
    v->la_pow = (int64_t)n->num;
    v->nout = 1;
    v->dt = DT_F32;
    for (int i = 0; i < nargs; i++) {
        graph_set_operand(v, i, args[i], 1);
        v->dt = join_dt(v->dt, args[i]->dt);
    }
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < n->ncall_labels; i++) {
        ext[i] = n->la == LA_SLICE ? n->slice_ext[i] : L->lab_ext[n->call_labels[i]];
        if (n->la == LA_SLICE)
            v->slice_lo[i] = n->slice_lo[i];
    }
    graph_set_modes(v, n->ncall_labels, n->call_labels, ext);
    add(L, v);
    return L->transparent ? v : sum_out(L, v, keep, n->span); /* like a tensor */
}

/* (V("i,e"), w("e")) = eigh(A("i,j")) and the like: one node, several
   results (OP_PART), each stored into its target. */
static int lower_multi(lowerer *L, cst_stmt *st)
{
    cst_node *n = st->expr;
    g_value *args[2];
    int nargs = 0;
    if (lower_la_args(L, n, args, &nargs) < 0)
        return -1;
    int nres = n->la == LA_SVD ? 3 : 2;
    g_value *v = new_value(L, OP_LINALG, nargs, n->span);
    v->la = (la_fn)n->la;
    v->nout = nres;
    v->dt = DT_F32;
    for (int i = 0; i < nargs; i++) {
        graph_set_operand(v, i, args[i], 1);
        v->dt = join_dt(v->dt, args[i]->dt);
    }
    add(L, v);
    g_value *parts[3];
    for (int p = 0; p < nres; p++) {
        g_value *q = new_value(L, OP_PART, 1, n->span);
        graph_set_operand(q, 0, v, 1);
        q->part = p;
        /* eigh's eigenvalues and svd's singular values are real */
        q->dt = p == 1 && (n->la == LA_EIGH || n->la == LA_SVD) ? dt_real(v->dt) : v->dt;
        int label[TX_MAX_MODES];
        tx_extent ext[TX_MAX_MODES];
        int rank = sema_multi_labels(n->la, p, n->arg_labels[0][0], n->arg_labels[0][1], st->multi_new, label);
        for (int k = 0; k < rank; k++)
            ext[k] = L->lab_ext[label[k]];
        graph_set_modes(q, rank, label, ext);
        parts[p] = add(L, q);
    }
    for (int p = 0; p < nres; p++)
        store_value(L, st, &st->targets[p], '=', parts[p]);
    return 0;
}

graph *lower_program(sema_program *S, tx_arena *a, tx_diag *d, const graph_spec *spec)
{
    graph *g = graph_new(a, S, spec);
    lowerer L = {.S = S, .g = g, .diag = d};
    L.cur = arena_alloc(a, sizeof(g_value *) * (size_t)(S->nvars + 1));
    for (int i = 0; i < S->nvars; i++) {
        sym *t = S->vars[i];
        if (t->io != IO_IN && t->io != IO_INOUT)
            continue;
        g_value *v = new_value(&L, OP_INPUT, 0, t->span);
        v->var = i;
        v->dt = t->dt;
        int positional[TX_MAX_MODES];
        for (int m = 0; m < t->rank; m++)
            positional[m] = -1;
        graph_set_modes(v, t->rank, positional, t->ext);
        L.cur[i] = graph_add(g, v);
    }
    for (cst_stmt *st = S->cst->first; st; st = st->next) {
        switch (st->kind) {
        case STMT_ASSIGN:
            begin_stmt(&L, st, &st->targets[0]);
            if (lower_store(&L, st, &st->targets[0],
                            st->op == TK_EQ ? '=' : st->op == TK_PLUSEQ ? '+' : st->op == TK_MINUSEQ ? '-'
                            : st->op == TK_STAREQ ? '*' : '/') < 0)
                return NULL;
            break;
        case STMT_LET_TENSOR:
            begin_stmt(&L, st, &st->targets[0]);
            if (lower_store(&L, st, &st->targets[0], '=') < 0)
                return NULL;
            break;
        case STMT_MULTI:
            begin_stmt(&L, st, NULL);
            if (lower_multi(&L, st) < 0)
                return NULL;
            break;
        default: /* declarations; bare lets are lowered at their uses */
            break;
        }
        if (L.failed)
            return NULL;
    }
    if (g->npending) /* copies of entry values a grad's adjoints read (grad.c), in their places */
        graph_renumber(g);
    return g;
}
