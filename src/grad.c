/*
 * grad.c — reverse-mode differentiation of the OpGraph (tx(5) §6.1).
 *
 * grad(s, X) is lowered at the point of the call: the graph built so far
 * holds the forward values, s among them. One backward sweep over the
 * values s depends on gives every one of them its adjoint (∂s/∂value),
 * built with the graph builder and appended after the forward values, so
 * the passes (contraction order, BLAS, fusion, CSE) treat adjoint
 * contractions like any other. The sweep of one s is kept by the lowerer
 * and shared by every grad of that s; forward values the rules need
 * (exp's result, a product's other factors) are used, not recomputed;
 * a result stored into a let tensor is read back from it (as_stored), so
 * that it is computed straight into the tensor.
 *
 * Adjoints of labelled values carry the value's labels. A variable's
 * value (an input, a store) has positional modes: its adjoint carries, per
 * mode, the label of the view that read it. Views through different labels
 * are brought to one labelling by building the adjoint again under the
 * other labels where that costs no more than a copy (views, broadcasts,
 * elementwise products and maps: relabel/renamed), else by storing it
 * into a hidden tmp tensor (sema_hidden_tmp) and reading it back through
 * the other labels: the language's own way of renaming labels, so the
 * rules only ever build contractions, sums, elementwise maps, reduces,
 * scans, stores and views, and a grad can be differentiated again.
 *
 * The rules (v = op(x, ...), dv its adjoint, every dx summed over the
 * labels x lacks and broadcast over those only x has):
 *   contract   dx_k = coef · dv · Π_{i≠k} x_i^{e_i}   (e_k = -1: · -x_k^-2)
 *   add        dx_i = c_i · dv
 *   x^p        p · x^(p-1) · dv; exp: v · dv; log: dv / x; sqrt: dv / (2v);
 *              sin: cos x · dv; cos: -sin x · dv; tanh: (1 - v²) · dv;
 *              abs: sign(x) · dv (0 at 0)
 *   max, min   the branch taken, ties to the first argument; where(c, a, b):
 *              dv where c, 0 elsewhere (and the converse for b);
 *              comparisons, delta, dims: constant
 *   reduce     +: broadcast; *: dv · (product of the others), by a count of
 *              zeros (no division by x); max, min: dv · [x == v] / #ties
 *              (PyTorch's amax/amin rule)
 *   scan       +: the scan of dv the other way; *: that of dv · v, over x,
 *              by a running count of zeros (no division by x: scan_product);
 *              max, min: each dv(k) to the position that set v(k)
 *   view, store   back through the labels of the view or the store; an
 *              accumulating store passes dv on to the previous value; a chip
 *              or a diagonal multiplies by [position == chip] or delta
 *   slice      dx(i) = sum_k dv(k) [i == k + lo] per mode that moves
 *   cholesky, inv, solve, eigh, qr, svd: the matrix-calculus results
 *              (PyTorch's for cholesky, eigh, qr, svd), built from
 *              products, inv and solve; cholesky's by one runtime call
 *              (LA_CHOLGRAD: Murray's blocked reverse-mode Cholesky in
 *              real types, a triangular product and two triangular solves
 *              in complex), which has a rule of its own for a second grad;
 *              qr of a wide matrix (or of symbolic extents) by splitting
 *              A = [X | Y] with masks, the generalised eigh by first-order
 *              perturbation. pow(A, p), p != 0, is matrix products
 *              by the time the sweep sees it (lower.c): their adjoints
 *              reuse the stored powers, two products per product
 * Complex values follow PyTorch's convention: the adjoint of z is
 * ds/dRe z + i ds/dIm z, so every derivative above is conjugated (the
 * other factors of a product, f'(z), transposes become conjugate
 * transposes); conj passes conj(dv) on, real dv, imag i·dv, abs
 * dv·z/|z|; a real value reached from a complex one takes the real part
 * (add_contrib). An operation without a rule would make grad a located
 * "not supported yet" error, reported only for a grad that needs it.
 * Positions along a label (for chips, slices, triangles) come from a
 * running sum of ones.
 */
#include <stdio.h>
#include <string.h>

#include "tx.h"

typedef struct contrib {
    g_value *v;              /* a contribution to the adjoint, labelled */
    int part;                /* multi-result calls: the result it is for */
    int map[TX_MAX_MODES];   /* positional values: v's label for each mode */
    struct contrib *next;
} contrib;

struct grad_sweep {
    graph *g;
    cst_node *owner;         /* the grad call whose hidden tensors relabel */
    int ntmp;                /* hidden tensors asked for so far */
    int stmt;                /* statement and span of the values built */
    tx_span span;
    int n;                   /* forward values: the list's length when the sweep ran */
    g_value *s;
    contrib **adj;           /* per forward value: contributions so far */
    g_value **total;         /* per forward value: its adjoint once combined */
    int (*map)[TX_MAX_MODES];/* per positional value: the labels of total */
    const g_value **bad;     /* per value: an operation on its way to s the sweep cannot differentiate */
    char *dep, *need;        /* depends on an input; on the way to s */
};

/* ---- building values ---- */

static dtype join(dtype a, dtype b) { return dt_join(a ? a : DT_F32, b ? b : DT_F32); }

static g_value *new_val(grad_sweep *sw, op_kind op, int nin)
{
    return graph_value_new(sw->g, op, nin, sw->stmt, sw->span);
}

/* X as one more term of sum SUM (an OP_ADD being built), whose type widens to take it. */
static void add_term(grad_sweep *sw, g_value *sum, g_value *x)
{
    graph_add_operand(sw->g, sum, x, 1);
    sum->dt = join(sum->dt, x->dt);
}

/* The two-term sum CA*A + CB*B, of type DT and modes (LABEL, EXT)[0..RANK). */
static g_value *sum2(grad_sweep *sw, g_value *a, double ca, g_value *b, double cb, dtype dt, int rank,
                     const int *label, const tx_extent *ext)
{
    g_value *s = new_val(sw, OP_ADD, 2);
    graph_set_operand(s, 0, a, ca);
    graph_set_operand(s, 1, b, cb);
    s->dt = dt;
    graph_set_modes(s, rank, label, ext);
    return graph_add(sw->g, s);
}

/* V's modes: the union of its operands' labels, in order of appearance. */
static void union_modes(g_value *v)
{
    int lab[TX_MAX_MODES], r = 0;
    tx_extent ext[TX_MAX_MODES];
    for (int i = 0; i < v->nin; i++)
        for (int m = 0; m < v->in[i]->rank; m++) {
            int l = v->in[i]->label[m], seen = 0;
            for (int k = 0; k < r; k++)
                seen |= lab[k] == l;
            if (!seen) {
                TX_ASSERT(r < TX_MAX_MODES);
                lab[r] = l;
                ext[r++] = v->in[i]->ext[m];
            }
        }
    graph_set_modes(v, r, lab, ext);
}

static g_value *const_val(grad_sweep *sw, double x)
{
    g_value *c = new_val(sw, OP_CONST, 0);
    c->coef = x;
    c->dt = DT_F32; /* a number does not widen */
    return graph_add(sw->g, c);
}

/* An elementwise map FN of the operands IN[0..N) (FN_ARG: the power). */
static g_value *map_val(grad_sweep *sw, map_fn fn, int n, g_value *const *in, double fn_arg)
{
    g_value *m = new_val(sw, OP_MAP, n);
    m->fn = fn;
    m->fn_arg = fn_arg;
    m->dt = DT_F32;
    for (int i = 0; i < n; i++) {
        graph_set_operand(m, i, in[i], 1);
        m->dt = join(m->dt, in[i]->dt);
    }
    if (fn == MAP_REAL || fn == MAP_IMAG || fn == MAP_ABS || (fn >= MAP_LT && fn <= MAP_NE))
        m->dt = dt_real(m->dt); /* a part, a modulus, a truth value */
    union_modes(m);
    return graph_add(sw->g, m);
}

static g_value *map1(grad_sweep *sw, map_fn fn, g_value *a) { return map_val(sw, fn, 1, &a, 0); }

/* The complex conjugate of X (X itself when it is real; a complex
   number is conjugated in place). */
static g_value *cj(grad_sweep *sw, g_value *x)
{
    if (!dt_complex(x->dt))
        return x;
    if (x->op == OP_CONST) {
        g_value *c = new_val(sw, OP_CONST, 0);
        c->coef = x->coef;
        c->coef_im = -x->coef_im;
        c->dt = x->dt;
        return graph_add(sw->g, c);
    }
    return map1(sw, MAP_CONJ, x);
}

/* The complex number RE + IM i (c64: it widens nothing). */
static g_value *cconst_val(grad_sweep *sw, double re, double im)
{
    g_value *c = new_val(sw, OP_CONST, 0);
    c->coef = re;
    c->coef_im = im;
    c->dt = DT_C64;
    return graph_add(sw->g, c);
}

static g_value *map2(grad_sweep *sw, map_fn fn, g_value *a, g_value *b)
{
    g_value *in[2] = {a, b};
    return map_val(sw, fn, 2, in, 0);
}

/* coef · Π VALS[i]^EXPS[i] over N factors, as a value with exactly the
   modes of LIKE (RANK labels LAB with extents EXT): labels LIKE lacks are
   summed, labels only LIKE has are broadcast. Loops follow the sparse
   maps MAPS[0..NMAPS) that cover them. */
static g_value *product_to(grad_sweep *sw, int n, g_value *const *vals, const double *exps, double coef, int rank,
                           const int *lab, const tx_extent *ext, const int *maps, int nmaps)
{
    /* a number factor (the seed 1 among them) goes into coef; one factor stays */
    g_value **kept = arena_alloc(sw->g->arena, sizeof(g_value *) * (size_t)n);
    double *kexp = arena_alloc(sw->g->arena, sizeof(double) * (size_t)n);
    int nk = 0;
    for (int i = 0; i < n; i++) {
        const g_value *x = vals[i];
        if (x->op == OP_CONST && !dt_complex(x->dt) && (exps[i] == 1 || (exps[i] == -1 && x->coef != 0)) &&
            nk + (n - i) > 1)
            coef *= exps[i] == 1 ? x->coef : 1 / x->coef;
        else {
            kept[nk] = vals[i];
            kexp[nk++] = exps[i];
        }
    }
    n = nk;
    vals = kept;
    exps = kexp;
    labelset all = {{0}}, want = {{0}};
    dtype dt = DT_F32;
    for (int i = 0; i < n; i++) {
        all = ls_union(all, graph_value_labels(vals[i]));
        dt = join(dt, vals[i]->dt);
    }
    for (int i = 0; i < rank; i++)
        ls_add(&want, lab[i]);
    g_value *c = NULL;
    if (n == 1 && exps[0] == 1 && coef == 1 && ls_eq(ls_inter(all, want), all))
        c = vals[0]; /* nothing to multiply or sum */
    else {
        c = new_val(sw, OP_CONTRACT, 0);
        graph_set_operands(sw->g, c, n, vals, exps);
        c->coef = coef;
        c->dt = dt;
        labelset out = ls_inter(all, want);
        c->summed = ls_minus(all, out);
        int ol[TX_MAX_MODES], r = 0;
        tx_extent oe[TX_MAX_MODES];
        for (int i = 0; i < rank; i++)
            if (ls_has(&out, lab[i])) {
                ol[r] = lab[i];
                oe[r++] = ext[i];
            }
        graph_set_modes(c, r, ol, oe);
        graph_restrict(sw->g, c, maps, nmaps);
        graph_add(sw->g, c);
    }
    if (ls_eq(ls_inter(all, want), want))
        return c;
    g_value *a = new_val(sw, OP_ADD, 1); /* broadcast over the labels only LIKE has */
    graph_set_operand(a, 0, c, 1);
    a->dt = c->dt;
    graph_set_modes(a, rank, lab, ext);
    return graph_add(sw->g, a);
}

/* product_to with the modes of value LIKE. */
static g_value *product_like(grad_sweep *sw, int n, g_value *const *vals, const double *exps, double coef,
                             const g_value *like, const g_value *at)
{
    return product_to(sw, n, vals, exps, coef, like->rank, like->label, like->ext, at->maps, at->nmaps);
}

/* V (labels FROM[m] for mode m of a RANK-mode tensor of extents EXT)
   stored into a hidden tmp tensor, to be viewed through other labels. */
static g_value *store_tmp(grad_sweep *sw, g_value *v, const int *from, int rank, const tx_extent *ext)
{
    sym *t = sema_hidden_tmp(sw->g->S, &sw->owner->grad_tmp, sw->ntmp++, "grad", sw->owner->span, v->dt, rank, ext);
    return graph_store_whole(sw->g, v, t, from, sw->stmt, sw->span, NULL);
}

/* The tensor stored by S read through labels TO[m] (distinct). */
static g_value *view(grad_sweep *sw, g_value *s, const int *to)
{
    return graph_view(sw->g, s, to, sw->stmt, sw->span, NULL);
}

static int has_label(const g_value *v, int l)
{
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] == l)
            return 1;
    return 0;
}

/* Forward value V as the rules read it: where V is stored whole into a
   let tensor (written once, '=', one label per mode), a view of that
   tensor through V's labels (nothing writing it again before the sweep),
   so V keeps the store as its only user and is
   computed straight into it (attention's E = exp(...) read again by exp's
   adjoint was a buffer of its own and a copy into E); else V. */
static g_value *as_stored(grad_sweep *sw, g_value *v)
{
    graph *g = sw->g;
    for (int k = v->id + 1; k < sw->n && v->rank > 0; k++) {
        g_value *s = g->v[k];
        if (s->op != OP_STORE || s->in[0] != v || s->store_op != '=' || s->nin != 1 || s->nmaps || v->nmaps ||
            s->rank != v->rank || s->dt != v->dt || g->S->vars[s->var]->io != IO_LET)
            continue;
        int ok = 1;
        for (int m = 0; m < s->rank && ok; m++) {
            ok = has_label(v, s->store_label[m]);
            for (int j = 0; j < m; j++)
                ok &= s->store_label[j] != s->store_label[m];
        }
        for (int j = k + 1; j < sw->n && ok; j++) /* the tensor still holds V where the sweep reads it */
            ok = !(g->v[j]->op == OP_STORE && g->v[j]->var == s->var);
        if (ok)
            return view(sw, s, s->store_label);
    }
    return v;
}

/* V built again with its labels FROM[i] named TO[i] (N pairs), or NULL
   where that would cost more than a copy; with BUILD 0 only the answer
   (V for yes). A view is viewed through the new labels, elementwise
   operations (broadcasts, products that sum nothing, maps) are rebuilt
   over their operands renamed, to DEPTH 3 and BUDGET values; a
   contraction that sums is rebuilt only as V itself (DEPTH 0), and only
   with SUMS (V has no other user now or later), so no product is computed
   twice. A label of V's (or its operands') that is not renamed but is a
   new name would be captured: NULL. */
static int fresh_label(grad_sweep *sw, int base, const char *tag);

static g_value *renamed(grad_sweep *sw, g_value *v, int n, const int *from, const int *to, int depth, int *budget,
                        int sums, int build)
{
    int f[TX_MAX_MODES], t[TX_MAX_MODES], k = 0;
    for (int i = 0; i < n; i++)
        if (from[i] != to[i] && has_label(v, from[i])) {
            f[k] = from[i];
            t[k++] = to[i];
        }
    if (k == 0)
        return v;
    if (depth > 3 || --*budget < 0 || v->nmaps)
        return NULL;
    int ok = v->op == OP_INDEX || v->op == OP_ADD || (v->op == OP_MAP && v->fn != MAP_WHERE) ||
             (v->op == OP_CONTRACT && (ls_empty(v->summed) || (depth == 0 && sums && v->nuses == 0)));
    if (!ok || dt_complex(v->dt))
        return NULL;
    labelset seen = v->op == OP_CONTRACT ? v->summed : (labelset){{0}}, fs = {{0}};
    for (int i = 0; i < v->nin; i++)
        seen = ls_union(seen, graph_value_labels(v->in[i]));
    seen = ls_union(seen, graph_value_labels(v));
    for (int i = 0; i < k; i++)
        ls_add(&fs, f[i]);
    int nk = k; /* a summed label that is a new name is summed under a fresh one */
    for (int i = 0; i < nk; i++)
        if (ls_has(&v->summed, t[i]) && v->op == OP_CONTRACT && k < TX_MAX_MODES) {
            int fr = fresh_label(sw, t[i], "r");
            if (fr < 0 || ls_has(&seen, fr))
                return NULL;
            f[k] = t[i];
            t[k++] = fr;
            ls_add(&fs, t[i]);
        }
    for (int i = 0; i < k; i++)
        if (ls_has(&seen, t[i]) && !ls_has(&fs, t[i]))
            return NULL; /* t[i] already means something here */
    int lab[TX_MAX_MODES];
    for (int m = 0; m < v->rank; m++) {
        lab[m] = v->label[m];
        for (int i = 0; i < k; i++)
            if (v->label[m] == f[i])
                lab[m] = t[i];
    }
    g_value *w = build ? new_val(sw, v->op, v->op == OP_INDEX ? 1 : v->nin) : NULL;
    if (v->op == OP_INDEX) {
        if (build) {
            graph_set_operand(w, 0, v->in[0], 1);
            for (int m = 0; m < v->in[0]->rank; m++) {
                w->idx_label[m] = v->idx_label[m];
                for (int i = 0; i < k; i++)
                    if (v->idx_label[m] == f[i])
                        w->idx_label[m] = t[i];
                w->idx_chip[m] = v->idx_chip[m];
                w->chip_span[m] = v->chip_span[m];
            }
        }
    } else
        for (int i = 0; i < v->nin; i++) {
            g_value *x = renamed(sw, v->in[i], k, f, t, depth + 1, budget, 0, build);
            if (!x)
                return NULL;
            if (build)
                graph_set_operand(w, i, x, v->coef_in[i]);
        }
    if (!build)
        return v;
    w->dt = v->dt;
    w->coef = v->coef;
    w->coef_im = v->coef_im;
    w->summed = v->summed;
    for (int i = nk; i < k; i++) {
        ls_del(&w->summed, f[i]);
        ls_add(&w->summed, t[i]);
    }
    w->fn = v->fn;
    w->fn_arg = v->fn_arg;
    graph_set_modes(w, v->rank, lab, v->ext);
    return graph_add(sw->g, w);
}

/* V (labels FROM[m] for mode m of a RANK-mode tensor of extents EXT) read
   back through labels TO[m]: V built again under the new labels where
   that is no dearer (renamed; with SUMS, V is used nowhere else, so even
   a contraction that sums is), else stored into a hidden tmp tensor and
   viewed. */
static g_value *relabel_as(grad_sweep *sw, g_value *v, const int *from, const int *to, int rank,
                           const tx_extent *ext, int sums)
{
    int budget = 12;
    if (renamed(sw, v, rank, from, to, 0, &budget, sums, 0)) {
        budget = 12;
        return renamed(sw, v, rank, from, to, 0, &budget, sums, 1);
    }
    return view(sw, store_tmp(sw, v, from, rank, ext), to);
}

/* relabel_as for a V that may have other users. */
static g_value *relabel(grad_sweep *sw, g_value *v, const int *from, const int *to, int rank, const tx_extent *ext)
{
    return relabel_as(sw, v, from, to, rank, ext, 0);
}

/* The extent of label L in V. */
static tx_extent ext_of(const g_value *v, int l)
{
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] == l)
            return v->ext[i];
    TX_ASSERT(!"label not in value");
    return (tx_extent){-1, 0};
}

/* A label of the sweep's own, named after label BASE (-1: none) and TAG
   ("i#gp"): the same id each time the program is lowered. -1 if the
   table is full. */
static int fresh_label(grad_sweep *sw, int base, const char *tag)
{
    cst_program *P = sw->g->S->cst;
    const char *name = arena_printf(sw->g->arena, "%s#g%s", base >= 0 ? P->label_names[base] : "", tag);
    int id = cst_label_id(P, name, strlen(name));
    if (id >= 0)
        sw->g->label_names = P->label_names;
    return id;
}

/* 1, 2, ..., e along label L: a running sum of ones. */
static g_value *iota1(grad_sweep *sw, int l, tx_extent e)
{
    g_value *ones = new_val(sw, OP_ADD, 1);
    graph_set_operand(ones, 0, const_val(sw, 1), 1);
    ones->dt = DT_F64;
    graph_set_modes(ones, 1, &l, &e);
    graph_add(sw->g, ones);
    g_value *sc = new_val(sw, OP_SCAN, 1);
    graph_set_operand(sc, 0, ones, 1);
    sc->red = RED_ADD;
    sc->scan_label = l;
    sc->dt = DT_F64;
    graph_set_modes(sc, 1, &l, &e);
    return graph_add(sw->g, sc);
}

/* Extent X as a number (a constant, a dim, or a sum of multiples of dims). */
static g_value *extent_val(grad_sweep *sw, tx_extent x)
{
    if (x.dim == -1)
        return const_val(sw, (double)x.value);
    g_value *a = new_val(sw, OP_ADD, 0);
    a->dt = DT_F64;
    if (x.dim >= 0) {
        g_value *d = new_val(sw, OP_MAP, 0);
        d->fn = MAP_DIM;
        d->fn_arg = x.dim;
        d->dt = DT_F32;
        graph_add_operand(sw->g, a, graph_add(sw->g, d), 1);
    } else {
        const dext *dx = &sw->g->S->derived[x.value];
        if (dx->kind != 0)
            return NULL;
        graph_add_operand(sw->g, a, const_val(sw, (double)dx->c), 1);
        for (int i = 0; i < dx->nterm; i++) {
            g_value *d = new_val(sw, OP_MAP, 0);
            d->fn = MAP_DIM;
            d->fn_arg = dx->dim[i];
            d->dt = DT_F32;
            graph_add_operand(sw->g, a, graph_add(sw->g, d), (double)dx->coef[i]);
        }
    }
    graph_set_modes(a, 0, NULL, NULL);
    return graph_add(sw->g, a);
}

/* A copy of V in type DT with modes ORDER[0..N). */
static g_value *copy_as(grad_sweep *sw, g_value *v, const int *order, int n, dtype dt)
{
    g_value *c = new_val(sw, OP_CONTRACT, 1);
    graph_set_operand(c, 0, v, 1);
    c->dt = dt;
    tx_extent ext[TX_MAX_MODES];
    for (int k = 0; k < n; k++)
        ext[k] = ext_of(v, order[k]);
    graph_set_modes(c, n, order, ext);
    return graph_add(sw->g, c);
}

/* V laid out row-major in the label order ORDER[0..N) (a LAPACK argument):
   V itself when it already is, else a copy. */
static g_value *contiguous(grad_sweep *sw, g_value *v, const int *order, int n)
{
    int ok = v->rank == n;
    for (int k = 0; ok && k < n; k++)
        ok = v->label[k] == order[k];
    if (v->op == OP_INDEX)
        for (int k = 0; ok && k < v->in[0]->rank; k++)
            ok = k < n && v->idx_label[k] == order[k];
    else if (v->op == OP_INPUT || v->op == OP_STORE || v->op == OP_CONST)
        ok = 0;
    return ok ? v : copy_as(sw, v, order, n, v->dt);
}

/* The matrix w(f) - w(e) over labels (E, F), 1 on the diagonal, for the
   vector W (label E): a run-time error if two entries of W are equal, or
   with NONZERO if one is zero (tx_la_gaps). */
static g_value *gaps_val(grad_sweep *sw, g_value *w, int e, int f, int nonzero)
{
    g_value *v = new_val(sw, OP_LINALG, 1);
    v->la = LA_GAPS;
    v->la_pow = nonzero;
    v->nout = 1;
    graph_set_operand(v, 0, contiguous(sw, w, &e, 1), 1);
    v->dt = w->dt;
    int lab[2] = {e, f};
    tx_extent ext[2] = {w->ext[0], w->ext[0]};
    graph_set_modes(v, 2, lab, ext);
    return graph_add(sw->g, v);
}

/* V laid out row-major in the label order ORDER[0..N) and of type DT (one
   copy when it is not so already, converting): a LAPACK argument, which
   the runtime reads as DT (an adjoint may be f32 where the call is f64:
   the seed, a number, does not widen the computation). */
static g_value *arg_as(grad_sweep *sw, g_value *v, const int *order, int n, dtype dt)
{
    return v->dt == dt ? contiguous(sw, v, order, n) : copy_as(sw, v, order, n, dt);
}

/* V laid out contiguously along label E and of type DT (arg_as). */
static g_value *vector_as(grad_sweep *sw, g_value *v, int e, dtype dt)
{
    return arg_as(sw, v, &e, 1, dt);
}

/* DW, the adjoint of the values W (label E) of eigh or svd, where the
   gradient goes through the values alone: checked at run time, an error
   where two equal values have different weights (the function of the
   matrix has no derivative there: tx_la_gaps with G), else DW itself.
   Complex DW (a complex chain) is taken as it is. */
static g_value *weights_val(grad_sweep *sw, g_value *w, g_value *dw, int e)
{
    if (dt_complex(dw->dt) || dt_complex(w->dt))
        return dw;
    dtype dt = join(w->dt, dw->dt);
    g_value *v = new_val(sw, OP_LINALG, 2);
    v->la = LA_GAPS;
    v->nout = 1;
    graph_set_operand(v, 0, vector_as(sw, w, e, dt), 1);
    graph_set_operand(v, 1, vector_as(sw, dw, e, dt), 1);
    v->dt = dt;
    tx_extent ext[1] = {w->ext[0]};
    graph_set_modes(v, 1, &e, ext);
    return graph_add(sw->g, v);
}

/* solve(A, B) with A laid out in labels (A0, A1) and B in (A0[, K]):
   the result has labels (A1[, K]). */
static g_value *solve_val(grad_sweep *sw, g_value *a, g_value *b)
{
    dtype dt = join(a->dt, b->dt);
    a = arg_as(sw, a, a->label, a->rank, dt);
    b = arg_as(sw, b, b->label, b->rank, dt);
    g_value *v = new_val(sw, OP_LINALG, 2);
    v->la = LA_SOLVE;
    v->nout = 1;
    graph_set_operand(v, 0, a, 1);
    graph_set_operand(v, 1, b, 1);
    v->dt = dt;
    int lab[2] = {a->label[1], b->rank == 2 ? b->label[1] : 0};
    tx_extent ext[2] = {a->ext[1], b->rank == 2 ? b->ext[1] : a->ext[0]};
    graph_set_modes(v, b->rank, lab, ext);
    return graph_add(sw->g, v);
}

/* ---- the sweep ---- */

/* A value with positional modes (a variable's value), whose adjoint is
   labelled through the views that read it. */
static int positional(const g_value *v)
{
    return (v->op == OP_INPUT || v->op == OP_STORE) && v->rank > 0;
}

/* Adds DV (MAP: its label per mode, for a positional W) to the adjoint
   of W. A real W takes the real part of a complex DV: the gradient with
   respect to a real value is the derivative along the real axis. */
static contrib *add_contrib(grad_sweep *sw, g_value *w, g_value *dv, const int *map)
{
    if (!sw->dep[w->id] || sw->bad[w->id])
        return NULL;
    if (dt_complex(dv->dt) && !dt_complex(w->dt) && !(w->op == OP_LINALG && w->nout > 1))
        dv = map1(sw, MAP_REAL, dv);
    contrib *c = arena_alloc(sw->g->arena, sizeof *c);
    c->v = dv;
    if (map)
        memcpy(c->map, map, sizeof(int) * (size_t)w->rank);
    c->next = sw->adj[w->id];
    sw->adj[w->id] = c;
    return c;
}

static void contribute(grad_sweep *sw, g_value *w, g_value *dv, const int *map) { add_contrib(sw, w, dv, map); }

/* A contribution DV to result PART of the multi-result call W. */
static void contribute_part(grad_sweep *sw, g_value *w, g_value *dv, int part)
{
    contrib *c = add_contrib(sw, w, dv, NULL);
    if (c)
        c->part = part;
}

/* The adjoint of result PART of multi-result call V (NULL: zero). */
static g_value *part_total(grad_sweep *sw, g_value *v, int part, const g_value *like)
{
    g_value *a = NULL;
    for (contrib *c = sw->adj[v->id]; c; c = c->next)
        if (c->part == part) {
            if (!a) {
                a = c->v;
                continue;
            }
            a = sum2(sw, a, 1, c->v, 1, join(a->dt, c->v->dt), like->rank, like->label, like->ext);
        }
    return a;
}

/* Is contribution C to V also a contribution elsewhere still to be read
   (one value passed on to several operands)? The values after V are
   done: a view or a store that passed C on as it was read it no more. */
static int shared(const grad_sweep *sw, const contrib *c, const g_value *v)
{
    for (int k = 0; k <= v->id; k++)
        for (const contrib *o = sw->adj[k]; o; o = o->next)
            if (o != c && o->v == c->v)
                return 1;
    return 0;
}

/* The adjoint of V from its contributions (NULL: none, it is zero). */
static g_value *combine(grad_sweep *sw, g_value *v)
{
    contrib *first = sw->adj[v->id];
    if (!first)
        return NULL;
    int n = 0;
    for (contrib *c = first; c; c = c->next)
        n++;
    if (positional(v))
        memcpy(sw->map[v->id], first->map, sizeof(int) * (size_t)v->rank);
    if (n == 1)
        return first->v;
    g_value *a = new_val(sw, OP_ADD, n);
    a->dt = DT_F32;
    int i = 0;
    for (contrib *c = first; c; c = c->next, i++) {
        g_value *x = c->v;
        if (positional(v) && memcmp(c->map, first->map, sizeof(int) * (size_t)v->rank) != 0)
            x = relabel_as(sw, x, c->map, first->map, v->rank, v->ext, c->v->nuses == 0 && !shared(sw, c, v));
        graph_set_operand(a, i, x, 1);
        a->dt = join(a->dt, x->dt);
    }
    if (positional(v))
        graph_set_modes(a, v->rank, first->map, v->ext);
    else
        graph_set_modes(a, v->rank, v->label, v->ext);
    return graph_add(sw->g, a);
}

/* Marks V's operands on the way from an input as beyond the sweep's
   reach because of AT. */
static void poison(grad_sweep *sw, const g_value *v, const g_value *at)
{
    for (int i = 0; i < v->nin; i++)
        if (sw->dep[v->in[i]->id] && !sw->bad[v->in[i]->id])
            sw->bad[v->in[i]->id] = at;
}

/* -B^H dB B^H for B = inv(A) (labels R, C, extents N2) and its adjoint
   DB; NULL if no label is left for the sweep. */
static g_value *inv_adjoint(grad_sweep *sw, g_value *b, g_value *db, int r, int c, const tx_extent *n2)
{
    int p = fresh_label(sw, r, "p"), q = fresh_label(sw, c, "q");
    if (p < 0 || q < 0)
        return NULL;
    int rc[2] = {r, c}, pr[2] = {p, r}, pq[2] = {p, q}, cq[2] = {c, q};
    g_value *sb = store_tmp(sw, b, rc, 2, n2);
    g_value *f[3] = {cj(sw, view(sw, sb, pr)), relabel(sw, db, rc, pq, 2, n2), cj(sw, view(sw, sb, cq))};
    double e[3] = {1, 1, 1};
    return product_to(sw, 3, f, e, -1, 2, rc, n2, NULL, 0);
}

/* V (labels I, E, stored in SV) times the K x K matrix MID (labels E, F)
   made Hermitian, times V^H: ½ V (MID + MID^H) V^H, labels (R, C). */
static g_value *eigh_sandwich(grad_sweep *sw, g_value *sv, g_value *mid, int r, int c, const tx_extent *n2)
{
    int e = mid->label[0], fl = mid->label[1], ef[2] = {e, fl}, fe[2] = {fl, e}, re[2] = {r, e}, cf[2] = {c, fl};
    int rc[2] = {r, c};
    g_value *h = sum2(sw, mid, 0.5, cj(sw, relabel(sw, mid, ef, fe, 2, mid->ext)), 0.5, mid->dt, 2, ef, mid->ext);
    g_value *f[3] = {view(sw, sv, re), h, cj(sw, view(sw, sv, cf))};
    double one[3] = {1, 1, 1};
    return product_to(sw, 3, f, one, 1, 2, rc, n2, NULL, 0);
}

/* The generalised eigh, A V = B V diag(w) with V^H B V = I: by first-order
   perturbation, dw(e) = v_e^H (dA - w(e) dB) v_e and
   dv_e = sum_{f != e} v_f v_f^H (dA - w(e) dB) v_e / (w(e) - w(f)) - ½ v_e v_e^H dB v_e,
   so with K = V^H dV and F = K / E off the diagonal (E(e,f) = w(f) - w(e)),
     dA = herm(V (diag(dw) + F) V^H),
     dB = -herm(V (diag(dw w) + F diag(w) + ½ diag(K)) V^H),
   herm(X) = (X + X^H) / 2 (A and B are Hermitian); B = I gives the
   one-matrix rule. */
static int propagate_eigh2(grad_sweep *sw, g_value *v, g_value *pv, g_value *pw, g_value *dV, g_value *dw)
{
    g_value *a = v->in[0], *b = v->in[1];
    int r = a->label[0], c = a->label[1], i = pv->label[0], el = pv->label[1];
    if (b->rank != 2 || b->label[0] != r || b->label[1] != c)
        return -1;
    int fl = fresh_label(sw, el, "f");
    if (fl < 0)
        return -1;
    tx_extent n2[2] = {a->ext[0], a->ext[1]}, ee[2] = {pv->ext[1], pv->ext[1]};
    int ef[2] = {el, fl}, ie[2] = {i, el}, ifl[2] = {i, fl};
    double one[3] = {1, 1, 1}, ex[3] = {1, -1, 1};
    g_value *delta = new_val(sw, OP_MAP, 0);
    delta->fn = MAP_DELTA;
    delta->dt = DT_F32;
    graph_set_modes(delta, 2, ef, ee);
    graph_add(sw->g, delta);
    g_value *wf = relabel(sw, pw, &el, &fl, 1, pw->ext);
    g_value *ma = new_val(sw, OP_ADD, 0), *mb = new_val(sw, OP_ADD, 0);
    ma->dt = mb->dt = DT_F32;
    g_value *f[3];
    if (dV) {
        f[0] = cj(sw, pv);
        f[1] = relabel(sw, dV, ie, ifl, 2, pv->ext);
        g_value *k = product_to(sw, 2, f, one, 1, 2, ef, ee, NULL, 0); /* V^H dV */
        f[0] = k;
        f[1] = gaps_val(sw, pw, el, fl, 0);
        f[2] = sum2(sw, const_val(sw, 1), 1, delta, -1, DT_F32, 2, ef, ee);
        g_value *fm = product_to(sw, 3, f, ex, 1, 2, ef, ee, NULL, 0); /* K / E off the diagonal */
        graph_add_operand(sw->g, ma, fm, 1);
        f[0] = fm;
        f[1] = wf;
        graph_add_operand(sw->g, mb, product_to(sw, 2, f, one, 1, 2, ef, ee, NULL, 0), -1);
        f[0] = k;
        f[1] = delta;
        graph_add_operand(sw->g, mb, product_to(sw, 2, f, one, 1, 2, ef, ee, NULL, 0), -0.5);
    }
    if (dw) {
        if (!dV) /* through the values alone: equal ones need equal weights */
            dw = weights_val(sw, pw, dw, pw->label[0]);
        f[0] = dw;
        f[1] = delta;
        graph_add_operand(sw->g, ma, product_to(sw, 2, f, one, 1, 2, ef, ee, NULL, 0), 1);
        f[2] = pw;
        graph_add_operand(sw->g, mb, product_to(sw, 3, f, one, 1, 2, ef, ee, NULL, 0), -1);
    }
    if (!ma->nin)
        return 0;
    for (int k = 0; k < ma->nin; k++)
        ma->dt = join(ma->dt, ma->in[k]->dt);
    for (int k = 0; k < mb->nin; k++)
        mb->dt = join(mb->dt, mb->in[k]->dt);
    graph_set_modes(ma, 2, ef, ee);
    graph_set_modes(mb, 2, ef, ee);
    graph_add(sw->g, ma);
    graph_add(sw->g, mb);
    g_value *sv = store_tmp(sw, pv, ie, 2, pv->ext);
    if (sw->dep[a->id])
        contribute(sw, a, eigh_sandwich(sw, sv, ma, r, c, n2), NULL);
    if (sw->dep[b->id])
        contribute(sw, b, eigh_sandwich(sw, sv, mb, r, c, n2), NULL);
    return 0;
}

/* eigh (one matrix): dA = V (diag(dw) + skew(V^H dV) / E) V^H with
   E(e,f) = w(f) - w(e) (1 on the diagonal): PyTorch's rule. Returns -1
   for what has no rule. */
static int propagate_eigh(grad_sweep *sw, g_value *v)
{
    g_value *a = v->in[0], *pv = NULL, *pw = NULL;
    for (int k = v->id + 1; k < sw->n; k++) {
        g_value *u = sw->g->v[k];
        if (u->op == OP_PART && u->in[0] == v)
            *(u->part == 0 ? &pv : &pw) = u;
    }
    TX_ASSERT(pv && pw);
    g_value *dV = part_total(sw, v, 0, pv), *dw = part_total(sw, v, 1, pw);
    if (v->nin == 2)
        return propagate_eigh2(sw, v, pv, pw, dV, dw);
    int r = a->label[0], c = a->label[1], i = pv->label[0], el = pv->label[1];
    int fl = fresh_label(sw, el, "f");
    if (fl < 0)
        return -1;
    tx_extent n2[2] = {a->ext[0], a->ext[1]}, ee[2] = {pv->ext[1], pv->ext[1]};
    int ef[2] = {el, fl}, fe[2] = {fl, el}, ie[2] = {i, el}, ifl[2] = {i, fl}, rc[2] = {r, c};
    double one[3] = {1, 1, 1};
    g_value *delta = new_val(sw, OP_MAP, 0);
    delta->fn = MAP_DELTA;
    delta->dt = DT_F32;
    graph_set_modes(delta, 2, ef, ee);
    graph_add(sw->g, delta);
    g_value *mid = new_val(sw, OP_ADD, 0);
    mid->dt = DT_F32;
    if (dV) {
        g_value *f[3] = {cj(sw, pv), relabel(sw, dV, ie, ifl, 2, pv->ext)};
        g_value *k = product_to(sw, 2, f, one, 1, 2, ef, ee, NULL, 0); /* V^H dV */
        g_value *sk = sum2(sw, k, 0.5, cj(sw, relabel(sw, k, ef, fe, 2, ee)), -0.5, k->dt, 2, ef, ee); /* its skew part */
        g_value *ed = gaps_val(sw, pw, el, fl, 0); /* w(f) - w(e), 1 on the diagonal */
        f[0] = sk;
        f[1] = ed;
        double ex[3] = {1, -1, 1};
        int nf = 2;
        if (dw && dt_complex(sk->dt)) /* the diagonal (i Im(V^H dV)) gives way to dw, as PyTorch's */
            f[nf++] = sum2(sw, const_val(sw, 1), 1, delta, -1, DT_F32, 2, ef, ee);
        g_value *q = product_to(sw, nf, f, ex, 1, 2, ef, ee, NULL, 0);
        add_term(sw, mid, q);
    }
    if (dw) {
        if (!dV) /* through the values alone: equal ones need equal weights */
            dw = weights_val(sw, pw, dw, pw->label[0]);
        g_value *f[2] = {dw, delta};
        g_value *d = product_to(sw, 2, f, one, 1, 2, ef, ee, NULL, 0);
        add_term(sw, mid, d);
    }
    if (!mid->nin)
        return 0;
    graph_set_modes(mid, 2, ef, ee);
    graph_add(sw->g, mid);
    int re[2] = {r, el}, cf[2] = {c, fl};
    g_value *sv = store_tmp(sw, pv, ie, 2, pv->ext);
    g_value *f[3] = {view(sw, sv, re), mid, cj(sw, view(sw, sv, cf))};
    contribute(sw, a, product_to(sw, 3, f, one, 1, 2, rc, n2, NULL, 0), NULL);
    return 0;
}

/* The square-R qr rule: for A = Q R with R (labels R, C over K x K) upper
   triangular, the adjoints DQ (labels I, R; NULL: zero) and DR (labels
   R, C; NULL: zero) give dA = (dQ + Q copyltu(M)) R^-H, labels (I, C),
   with M = R dR^H - dQ^H Q and copyltu(M) its lower triangle mirrored
   (conjugated), the diagonal's real part. NULL if no label is left. */
static g_value *qr_square(grad_sweep *sw, g_value *q, g_value *rm, g_value *dQ, g_value *dR)
{
    int i = q->label[0], r = rm->label[0], j = rm->label[1];
    int s = fresh_label(sw, r, "s");
    if (s < 0)
        return NULL;
    tx_extent kk[2] = {rm->ext[0], rm->ext[0]}, ia[2] = {q->ext[0], rm->ext[1]};
    int ir[2] = {i, r}, is[2] = {i, s}, rj[2] = {r, j}, sj[2] = {s, j}, rs[2] = {r, s}, sr[2] = {s, r};
    int ij[2] = {i, j};
    double one[3] = {1, 1, 1};
    g_value *m = new_val(sw, OP_ADD, 0); /* M = R dR^H - dQ^H Q */
    m->dt = DT_F32;
    if (dR) {
        g_value *f[2] = {rm, cj(sw, relabel(sw, dR, rj, sj, 2, rm->ext))};
        g_value *t = product_to(sw, 2, f, one, 1, 2, rs, kk, NULL, 0);
        add_term(sw, m, t);
    }
    g_value *qs = relabel(sw, q, ir, is, 2, q->ext), *dqs = NULL;
    if (dQ) {
        g_value *f[2] = {cj(sw, dQ), qs};
        g_value *t = product_to(sw, 2, f, one, 1, 2, rs, kk, NULL, 0);
        graph_add_operand(sw->g, m, t, -1);
        m->dt = join(m->dt, t->dt);
        dqs = relabel(sw, dQ, ir, is, 2, q->ext);
    }
    if (!m->nin)
        return NULL;
    graph_set_modes(m, 2, rs, kk);
    graph_add(sw->g, m);
    int cx = dt_complex(m->dt);
    g_value *c = new_val(sw, OP_ADD, 0); /* M's lower triangle, mirrored */
    g_value *f[3] = {m, map2(sw, cx ? MAP_GT : MAP_GE, iota1(sw, r, kk[0]), iota1(sw, s, kk[1]))};
    graph_add_operand(sw->g, c, product_to(sw, 2, f, one, 1, 2, rs, kk, NULL, 0), 1);
    f[0] = cj(sw, relabel(sw, m, rs, sr, 2, kk));
    f[1] = map2(sw, MAP_LT, iota1(sw, r, kk[0]), iota1(sw, s, kk[1]));
    graph_add_operand(sw->g, c, product_to(sw, 2, f, one, 1, 2, rs, kk, NULL, 0), 1);
    if (cx) { /* the diagonal's real part */
        g_value *d = new_val(sw, OP_MAP, 0);
        d->fn = MAP_DELTA;
        d->dt = DT_F32;
        graph_set_modes(d, 2, rs, kk);
        f[0] = map1(sw, MAP_REAL, m);
        f[1] = graph_add(sw->g, d);
        graph_add_operand(sw->g, c, product_to(sw, 2, f, one, 1, 2, rs, kk, NULL, 0), 1);
    }
    c->dt = m->dt;
    graph_set_modes(c, 2, rs, kk);
    graph_add(sw->g, c);
    g_value *b = new_val(sw, OP_ADD, 0); /* dQ + Q C, labels (i, s) */
    f[0] = q;
    f[1] = c;
    g_value *qc = product_to(sw, 2, f, one, 1, 2, is, q->ext, NULL, 0);
    graph_add_operand(sw->g, b, qc, 1);
    b->dt = qc->dt;
    if (dqs) {
        add_term(sw, b, dqs);
    }
    graph_set_modes(b, 2, is, q->ext);
    graph_add(sw->g, b);
    /* dA = B R^-H: X with R X = B^H (R upper triangular: one triangular
       solve, emit_linalg.c), then dA(i,j) = conj(X(j,i)) */
    int ri_[2] = {r, i};
    g_value *bh = contiguous(sw, cj(sw, relabel(sw, b, is, ir, 2, q->ext)), ri_, 2);
    g_value *x = solve_val(sw, contiguous(sw, rm, rj, 2), bh);
    f[0] = cj(sw, x);
    return product_to(sw, 1, f, one, 1, 2, ij, ia, NULL, 0);
}

/* Is result V stored (before the sweep) into a tensor whose mode for
   label L has extent E? Binding checks that extent at run time, so L's
   extent is E. */
static int stored_as(const grad_sweep *sw, const g_value *v, int l, tx_extent e)
{
    for (int k = v->id + 1; k < sw->n; k++) {
        const g_value *u = sw->g->v[k];
        if (u->op == OP_STORE && u->in[0] == v)
            for (int m = 0; m < u->rank; m++)
                if (u->store_label[m] == l && ext_eq(u->ext[m], e))
                    return 1;
    }
    return 0;
}

/* qr (reduced), PyTorch's rule. With as many rows as columns or more
   (known at compile time, or from the extents of a tensor Q or R is
   stored into), qr_square with R itself. Otherwise A = [X | Y]
   with X its first k = min(m, n) columns, R = [U | V], X = Q U and
   V = Q^H Y: qr_square with U, dU and dQ + Y dV^H gives dX, and
   dY = Q dV. The split is by masks ([j == t] for j < k), so one graph
   serves every shape when the extents are symbolic. */
static int propagate_qr(grad_sweep *sw, g_value *v)
{
    g_value *a = v->in[0], *pq = NULL, *pr = NULL;
    for (int k = v->id + 1; k < sw->n; k++) {
        g_value *u = sw->g->v[k];
        if (u->op == OP_PART && u->in[0] == v)
            *(u->part == 0 ? &pq : &pr) = u;
    }
    TX_ASSERT(pq && pr);
    sema_program *S = sw->g->S;
    int64_t rows = sema_extent_eval(S, a->ext[0], NULL), cols = sema_extent_eval(S, a->ext[1], NULL);
    g_value *dQ = part_total(sw, v, 0, pq), *dR = part_total(sw, v, 1, pr);
    int i = pq->label[0], r = pq->label[1], j = pr->label[1];
    tx_extent k = pq->ext[1], n = a->ext[1];
    g_value *da;
    if (ext_eq(k, n) || (rows >= 0 && cols >= 0 && rows >= cols) || stored_as(sw, pq, r, n) || stored_as(sw, pr, r, n)) {
        if (!(da = qr_square(sw, pq, pr, dQ, dR)))
            return dQ || dR ? -1 : 0;
        contribute(sw, a, da, NULL);
        return 0;
    }
    int t = fresh_label(sw, j, "t");
    if (t < 0)
        return -1;
    double one[3] = {1, 1, 1};
    tx_extent kk[2] = {k, k}, ia[2] = {a->ext[0], a->ext[1]};
    int rt[2] = {r, t}, ir[2] = {i, r}, ij[2] = {i, j};
    g_value *sel = map2(sw, MAP_EQ, iota1(sw, t, k), iota1(sw, j, n)); /* [j == t]: column j of X */
    g_value *f[3] = {sel};
    g_value *in_x = product_to(sw, 1, f, one, 1, 1, &j, &n, NULL, 0);
    g_value *in_y = sum2(sw, const_val(sw, 1), 1, in_x, -1, DT_F32, 1, &j, &n); /* [j >= k] */
    f[0] = pr;
    f[1] = sel;
    g_value *u = product_to(sw, 2, f, one, 1, 2, rt, kk, NULL, 0); /* U(r,t) */
    g_value *du = NULL, *dqe = dQ;
    if (dR) {
        f[0] = dR;
        f[1] = sel;
        du = product_to(sw, 2, f, one, 1, 2, rt, kk, NULL, 0);
        f[0] = a; /* dQ + Y dV^H */
        f[1] = in_y;
        f[2] = cj(sw, dR);
        g_value *ydv = product_to(sw, 3, f, one, 1, 2, ir, pq->ext, NULL, 0);
        dqe = dQ ? sum2(sw, dQ, 1, ydv, 1, join(dQ->dt, ydv->dt), 2, ir, pq->ext) : ydv;
    }
    g_value *dx = qr_square(sw, pq, u, dqe, du), *sum = new_val(sw, OP_ADD, 0);
    sum->dt = DT_F32;
    if (dx) { /* dX(i,t) into the columns j < k */
        f[0] = dx;
        f[1] = sel;
        g_value *x = product_to(sw, 2, f, one, 1, 2, ij, ia, NULL, 0);
        add_term(sw, sum, x);
    }
    if (dR) { /* dY = Q dV */
        f[0] = pq;
        f[1] = dR;
        f[2] = in_y;
        g_value *y = product_to(sw, 3, f, one, 1, 2, ij, ia, NULL, 0);
        add_term(sw, sum, y);
    }
    if (!sum->nin)
        return 0;
    graph_set_modes(sum, 2, ij, ia);
    contribute(sw, a, graph_add(sw->g, sum), NULL);
    return 0;
}

/* svd (reduced), PyTorch's rule: with E(r,t) = s(t)^2 - s(r)^2 (1 on the
   diagonal) and skew(X) = X - X^T,
     dA = U [(skew(U^T dU) s(t) + s(r) skew(V^T dV)) / E + diag(ds)] Vt
        + (dU - U U^T dU) / s · Vt + U / s · (dVt - (V^T dV)^T Vt),
   the last two terms zero when U, respectively V, is square. */
static int propagate_svd(grad_sweep *sw, g_value *v)
{
    g_value *a = v->in[0], *pu = NULL, *ps = NULL, *pvt = NULL;
    for (int k = v->id + 1; k < sw->n; k++) {
        g_value *u = sw->g->v[k];
        if (u->op == OP_PART && u->in[0] == v)
            *(u->part == 0 ? &pu : u->part == 1 ? &ps : &pvt) = u;
    }
    TX_ASSERT(pu && ps && pvt);
    g_value *dU = part_total(sw, v, 0, pu), *ds = part_total(sw, v, 1, ps), *dVt = part_total(sw, v, 2, pvt);
    int i = pu->label[0], r = pu->label[1], j = pvt->label[1];
    int t = fresh_label(sw, r, "t");
    if (t < 0)
        return -1;
    tx_extent kk[2] = {ps->ext[0], ps->ext[0]}, ia[2] = {a->ext[0], a->ext[1]};
    int ir[2] = {i, r}, it[2] = {i, t}, rj[2] = {r, j}, tj[2] = {t, j}, rt[2] = {r, t}, tr[2] = {t, r};
    int ij[2] = {i, j};
    double one[4] = {1, 1, 1, 1};
    g_value *st = relabel(sw, ps, &r, &t, 1, ps->ext);  /* s(t) */
    g_value *vtt = relabel(sw, pvt, rj, tj, 2, pvt->ext); /* Vt(t,j) */
    g_value *ga = new_val(sw, OP_ADD, 0);
    ga->dt = DT_F32;
    g_value *mid = new_val(sw, OP_ADD, 0); /* the k x k middle factor, labels (r, t) */
    mid->dt = DT_F32;
    g_value *delta = new_val(sw, OP_MAP, 0);
    delta->fn = MAP_DELTA;
    delta->dt = DT_F32;
    graph_set_modes(delta, 2, rt, kk);
    graph_add(sw->g, delta);
    g_value *e = NULL; /* s(t)^2 - s(r)^2, 1 on the diagonal: only if dU or dVt divides by it */
    if (dU || dVt)
        e = gaps_val(sw, map_val(sw, MAP_POW, 1, &ps, 2), r, t, 1);
    g_value *f[4];
    if (dU) {
        g_value *dut = relabel(sw, dU, ir, it, 2, pu->ext);
        f[0] = cj(sw, pu);
        f[1] = dut;
        g_value *utdu = product_to(sw, 2, f, one, 1, 2, rt, kk, NULL, 0); /* U^H dU */
        g_value *sk = sum2(sw, utdu, 1, cj(sw, relabel(sw, utdu, rt, tr, 2, kk)), -1, utdu->dt, 2, rt, kk);
        if (dVt && dt_complex(sk->dt)) { /* complex: + diag(skew(U^H dU)) / 2s, PyTorch's */
            f[0] = sk;
            f[1] = delta;
            f[2] = ps;
            double ex[3] = {1, 1, -1};
            g_value *d = product_to(sw, 3, f, ex, 0.5, 2, rt, kk, NULL, 0);
            add_term(sw, mid, d);
        }
        f[0] = sk;
        f[1] = st;
        f[2] = e;
        double ex[3] = {1, 1, -1};
        g_value *q = product_to(sw, 3, f, ex, 1, 2, rt, kk, NULL, 0);
        add_term(sw, mid, q);
        /* (dU - U U^T dU) / s(t) Vt(t, j) */
        f[0] = pu;
        f[1] = utdu;
        g_value *x = sum2(sw, dut, 1, product_to(sw, 2, f, one, 1, 2, it, pu->ext, NULL, 0), -1, utdu->dt, 2, it,
                          pu->ext);
        f[0] = x;
        f[1] = st;
        f[2] = vtt;
        double over_s[3] = {1, -1, 1};
        g_value *t1 = product_to(sw, 3, f, over_s, 1, 2, ij, ia, NULL, 0);
        add_term(sw, ga, t1);
    }
    if (dVt) {
        g_value *dvtt = relabel(sw, dVt, rj, tj, 2, pvt->ext);
        f[0] = pvt;
        f[1] = cj(sw, dvtt);
        g_value *vtdv = product_to(sw, 2, f, one, 1, 2, rt, kk, NULL, 0); /* V^H dV */
        g_value *sk = sum2(sw, vtdv, 1, cj(sw, relabel(sw, vtdv, rt, tr, 2, kk)), -1, vtdv->dt, 2, rt, kk);
        f[0] = ps;
        f[1] = sk;
        f[2] = e;
        double ex[3] = {1, 1, -1};
        g_value *q = product_to(sw, 3, f, ex, 1, 2, rt, kk, NULL, 0);
        add_term(sw, mid, q);
        /* U(i,t) / s(t) (dVt(t,j) - sum_r (V^T dV)(r,t) Vt(r,j)) */
        f[0] = cj(sw, vtdv);
        f[1] = pvt;
        g_value *y = sum2(sw, dvtt, 1, product_to(sw, 2, f, one, 1, 2, tj, pvt->ext, NULL, 0), -1, vtdv->dt, 2, tj,
                          pvt->ext);
        f[0] = relabel(sw, pu, ir, it, 2, pu->ext);
        f[1] = st;
        f[2] = y;
        double over_s[3] = {1, -1, 1};
        g_value *t2 = product_to(sw, 3, f, over_s, 1, 2, ij, ia, NULL, 0);
        add_term(sw, ga, t2);
    }
    if (ds) {
        if (!dU && !dVt) /* through the values alone: equal ones need equal weights */
            ds = weights_val(sw, ps, ds, ps->label[0]);
        f[0] = ds;
        f[1] = delta;
        g_value *d = product_to(sw, 2, f, one, 1, 2, rt, kk, NULL, 0);
        add_term(sw, mid, d);
    }
    if (mid->nin) {
        graph_set_modes(mid, 2, rt, kk);
        graph_add(sw->g, mid);
        f[0] = pu;
        f[1] = mid;
        f[2] = vtt;
        g_value *c = product_to(sw, 3, f, one, 1, 2, ij, ia, NULL, 0);
        add_term(sw, ga, c);
    }
    if (!ga->nin)
        return 0;
    graph_set_modes(ga, 2, ij, ia);
    contribute(sw, a, graph_add(sw->g, ga), NULL);
    return 0;
}

/* The product of the matrices stored by SA and SB (labels R, C, extents
   N2), summed over label P. */
static g_value *matmul(grad_sweep *sw, g_value *sa, g_value *sb, int r, int c, int p, const tx_extent *n2)
{
    int rp[2] = {r, p}, pc[2] = {p, c}, rc[2] = {r, c};
    g_value *f[2] = {view(sw, sa, rp), view(sw, sb, pc)};
    double one[2] = {1, 1};
    return product_to(sw, 2, f, one, 1, 2, rc, n2, NULL, 0);
}

/* Phi of the cholesky gradient as a mask over labels RC (positions IR,
   IC): 1 below the diagonal, 1/2 on it, 0 above. */
static g_value *chol_phi(grad_sweep *sw, g_value *ir, g_value *ic, const int *rc, const tx_extent *n2)
{
    g_value *mask = new_val(sw, OP_ADD, 2);
    graph_set_operand(mask, 0, map2(sw, MAP_GT, ir, ic), 1);
    g_value *d = new_val(sw, OP_MAP, 0);
    d->fn = MAP_DELTA;
    d->dt = DT_F32;
    graph_set_modes(d, 2, rc, n2);
    graph_set_operand(mask, 1, graph_add(sw->g, d), 0.5);
    mask->dt = DT_F64;
    graph_set_modes(mask, 2, rc, n2);
    return graph_add(sw->g, mask);
}

/* The adjoint of the gaps node V (gaps_val, weights_val: a first
   gradient through eigh or svd, differentiated again). With weights (two
   operands) V is its second operand, checked: DV goes to it. Else V(e, f)
   = w(f) - w(e) off the diagonal, 1 on it: dw(k) = sum over e != k of
   DV(e, k) - sum over f != k of DV(k, f). The gaps are the denominators
   of the first gradient; where two values are equal, the run-time error
   of the first gradient stands. */
static int propagate_gaps(grad_sweep *sw, g_value *v, g_value *dv)
{
    if (v->nin == 2) {
        contribute(sw, v->in[1], dv, NULL);
        return 0;
    }
    g_value *w = v->in[0];
    int ef[2] = {v->label[0], v->label[1]}, e = ef[0], f = ef[1];
    tx_extent ee[2] = {v->ext[0], v->ext[1]};
    g_value *delta = new_val(sw, OP_MAP, 0);
    delta->fn = MAP_DELTA;
    delta->dt = DT_F32;
    graph_set_modes(delta, 2, ef, ee);
    graph_add(sw->g, delta);
    double one[2] = {1, 1};
    g_value *m[2] = {dv, sum2(sw, const_val(sw, 1), 1, delta, -1, DT_F32, 2, ef, ee)}; /* DV off the diagonal */
    g_value *col = product_to(sw, 2, m, one, 1, 1, &f, &ee[1], NULL, 0); /* sum over e, label f */
    g_value *row = product_to(sw, 2, m, one, 1, 1, &e, &ee[0], NULL, 0); /* sum over f, label e */
    g_value *colk = relabel(sw, col, &f, &e, 1, &ee[0]);
    contribute(sw, w, sum2(sw, colk, 1, row, -1, join(colk->dt, row->dt), 1, &e, &ee[0]), NULL);
    return 0;
}

/* The adjoint of the argument(s) of the one-result linear-algebra call V
   (cholesky, inv, solve, the gaps of eigh's and svd's gradients, and
   cholesky's own gradient) from DV. Returns -1 for the others. */
static int propagate_linalg(grad_sweep *sw, g_value *v, g_value *dv)
{
    if (v->la == LA_GAPS)
        return propagate_gaps(sw, v, dv);
    g_value *a = v->in[0];
    int r = a->label[0], c = a->label[1];
    tx_extent n2[2] = {a->ext[0], a->ext[1]};
    int rc[2] = {r, c}, cr[2] = {c, r};
    g_value *f[4];
    double e[4] = {1, 1, 1, 1};
    switch (v->la) {
    case LA_INV: { /* dA = -B^T dB B^T, B = inv(A) */
        g_value *da = inv_adjoint(sw, v, dv, r, c, n2);
        if (!da)
            return -1;
        contribute(sw, a, da, NULL);
        return 0;
    }
    case LA_POW: /* only p = 0 (the identity) reaches here: lower.c makes other powers products */
        TX_ASSERT(v->la_pow == 0);
        return 0;
    case LA_SOLVE: { /* X = A^-1 B: dB = A^-H dX, dA = -dB X^H */
        g_value *b = v->in[1];
        g_value *at = contiguous(sw, cj(sw, a), cr, 2);
        g_value *db = solve_val(sw, at, contiguous(sw, dv, v->label, v->rank));
        if (sw->dep[b->id])
            contribute(sw, b, db, NULL);
        if (sw->dep[a->id]) {
            f[0] = db;
            f[1] = cj(sw, v);
            contribute(sw, a, product_like(sw, 2, f, e, -1, a, v), NULL);
        }
        return 0;
    }
    case LA_CHOL: { /* PyTorch's rule: S = L^-H Phi(L^H tril(dL)) L^-1, dA = (S + S^H) / 2 */
        g_value *cg = new_val(sw, OP_LINALG, 2); /* Phi(S + S^H) by the runtime (tx_la_cholgrad) */
        cg->la = LA_CHOLGRAD;
        cg->nout = 1;
        graph_set_operand(cg, 0, contiguous(sw, v, rc, 2), 1);
        graph_set_operand(cg, 1, arg_as(sw, dv, rc, 2, v->dt), 1);
        cg->dt = v->dt;
        graph_set_modes(cg, 2, rc, n2);
        g_value *sz = store_tmp(sw, graph_add(sw->g, cg), rc, 2, n2);
        g_value *zt = view(sw, sz, cr), *z = view(sw, sz, rc); /* built in this order */
        contribute(sw, a, sum2(sw, cj(sw, zt), 0.5, z, 0.5, sz->dt, 2, rc, n2), NULL); /* = (S + S^H) / 2 */
        return 0;
    }
    case LA_CHOLGRAD: { /* a gradient differentiated again: the node is Phi(S + S^H), S = Li^H P Li,
                           Li = inv(L), P = Phi(L^H T), T = tril(G): dS = Phi(dv) + Phi(dv)^H,
                           dP = Li dS Li^H, dM = Phi(dP), dG = tril(L dM),
                           dL = T dM^H - Li^H (P Li dS^H + P^H Li dS) Li^H */
        g_value *g2 = v->in[1];
        int p = fresh_label(sw, r, "p"), q = fresh_label(sw, c, "q");
        if (p < 0 || q < 0)
            return -1;
        int pr[2] = {p, r}, pc[2] = {p, c}, rp[2] = {r, p}, pq[2] = {p, q}, cq[2] = {c, q}, qc[2] = {q, c},
            cp[2] = {c, p};
        g_value *ir = iota1(sw, r, n2[0]), *ic = iota1(sw, c, n2[1]);
        g_value *sl = store_tmp(sw, a, rc, 2, n2);
        f[0] = g2;
        f[1] = map2(sw, MAP_GE, ir, ic);
        g_value *st = store_tmp(sw, product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0), rc, 2, n2);
        g_value *phi = chol_phi(sw, ir, ic, rc, n2);
        f[0] = cj(sw, view(sw, sl, pr));
        f[1] = view(sw, st, pc);
        g_value *m = product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0);
        f[0] = m;
        f[1] = phi;
        g_value *sp = store_tmp(sw, product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0), rc, 2, n2);
        g_value *li = new_val(sw, OP_LINALG, 1);
        li->la = LA_INV;
        li->nout = 1;
        graph_set_operand(li, 0, a, 1);
        li->dt = a->dt;
        graph_set_modes(li, 2, rc, n2);
        graph_add(sw->g, li);
        f[0] = dv;
        f[1] = phi;
        g_value *spd = store_tmp(sw, product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0), rc, 2, n2);
        g_value *ds = sum2(sw, view(sw, spd, rc), 1, cj(sw, view(sw, spd, cr)), 1, spd->dt, 2, rc, n2);
        g_value *sli = store_tmp(sw, li, rc, 2, n2), *sd = store_tmp(sw, ds, rc, 2, n2);
        f[0] = view(sw, sli, rp); /* dP = Li dS Li^H */
        f[1] = view(sw, sd, pq);
        f[2] = cj(sw, view(sw, sli, cq));
        f[0] = product_to(sw, 3, f, e, 1, 2, rc, n2, NULL, 0);
        f[1] = phi;
        g_value *smb = store_tmp(sw, product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0), rc, 2, n2); /* dM */
        if (sw->dep[g2->id]) {
            f[0] = matmul(sw, sl, smb, r, c, p, n2);
            f[1] = map2(sw, MAP_GE, ir, ic);
            contribute(sw, g2, product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0), NULL);
        }
        if (sw->dep[a->id]) {
            f[0] = view(sw, sp, rp); /* P Li dS^H */
            f[1] = view(sw, sli, pq);
            f[2] = cj(sw, view(sw, sd, cq));
            g_value *t1 = product_to(sw, 3, f, e, 1, 2, rc, n2, NULL, 0);
            f[0] = cj(sw, view(sw, sp, pr)); /* P^H Li dS */
            f[1] = view(sw, sli, pq);
            f[2] = view(sw, sd, qc);
            g_value *t2 = product_to(sw, 3, f, e, 1, 2, rc, n2, NULL, 0);
            g_value *dli = sum2(sw, t1, 1, t2, 1, join(t1->dt, t2->dt), 2, rc, n2);
            g_value *dl = inv_adjoint(sw, li, dli, r, c, n2);
            if (!dl)
                return -1;
            f[0] = view(sw, st, rp); /* T dM^H */
            f[1] = cj(sw, view(sw, smb, cp));
            g_value *t3 = product_to(sw, 2, f, e, 1, 2, rc, n2, NULL, 0);
            contribute(sw, a, sum2(sw, dl, 1, t3, 1, join(dl->dt, t3->dt), 2, rc, n2), NULL);
        }
        return 0;
    }
    default: /* pow, and the multi-result calls */
        return -1;
    }
}

/* A running max or min v along l: each dv(k) goes to the position j that
   set v(k), the first (in scan order) of the run of equal v it is in:
   dx(j) = [no earlier k has v(k) == v(j)] * sum_k dv(k) [v(k) == v(j)]. */
static int scan_extremum(grad_sweep *sw, g_value *v, g_value *dv)
{
    g_value *x = v->in[0];
    int l = v->scan_label, k = fresh_label(sw, l, "k");
    if (k < 0)
        return -1;
    int to[TX_MAX_MODES];
    for (int m = 0; m < v->rank; m++)
        to[m] = v->label[m] == l ? k : v->label[m];
    tx_extent e = ext_of(v, l);
    g_value *vk = relabel(sw, v, v->label, to, v->rank, v->ext);
    g_value *dvk = relabel(sw, dv, v->label, to, v->rank, v->ext);
    g_value *same = map2(sw, MAP_EQ, v, vk);
    g_value *before = map2(sw, v->scan_reverse ? MAP_GT : MAP_LT, iota1(sw, k, e), iota1(sw, l, e));
    g_value *f[2] = {same, before};
    double one[2] = {1, 1};
    g_value *earlier = product_like(sw, 2, f, one, 1, v, v);
    g_value *first = map2(sw, MAP_EQ, earlier, const_val(sw, 0));
    f[0] = dvk;
    f[1] = same;
    g_value *gathered = product_like(sw, 2, f, one, 1, v, v);
    f[0] = first;
    f[1] = gathered;
    contribute(sw, x, product_like(sw, 2, f, one, 1, x, v), NULL);
    return 0;
}

/* The adjoint of v = reduce(*, x) without dividing by x, so zeros in x
   are no trouble: with z = [x == 0], p = the product of x with its zeros
   taken as 1 and nz = the number of zeros reduced into each v,
   dx = dv · p · ([nz == 0] / x' + [nz == 1] · z), x' = x with zeros as 1:
   p / x without zeros, the product of the others at a lone zero, and 0
   where two or more zeros meet. */
static int reduce_product(grad_sweep *sw, g_value *v, g_value *dv)
{
    g_value *x = v->in[0];
    g_value *zero = const_val(sw, 0);
    g_value *z = map2(sw, MAP_EQ, dt_complex(x->dt) ? map1(sw, MAP_ABS, x) : x, zero); /* complex: |x| == 0 */
    g_value *in[3] = {z, const_val(sw, 1), x};
    g_value *xs = map_val(sw, MAP_WHERE, 3, in, 0);
    g_value *p = new_val(sw, OP_REDUCE, 1);
    graph_set_operand(p, 0, xs, 1);
    p->red = RED_MUL;
    p->dt = xs->dt;
    p->summed = v->summed;
    graph_set_modes(p, v->rank, v->label, v->ext);
    graph_restrict(sw->g, p, v->maps, v->nmaps);
    graph_add(sw->g, p);
    double one[3] = {1, 1, 1}, inv[2] = {-1, 1};
    g_value *zs[1] = {z};
    g_value *nz = product_like(sw, 1, zs, one, 1, v, v);
    g_value *f[3] = {xs, map2(sw, MAP_EQ, nz, zero), NULL};
    g_value *a = product_like(sw, 2, f, inv, 1, x, v);
    f[0] = z;
    f[1] = map2(sw, MAP_EQ, nz, const_val(sw, 1));
    g_value *b = product_like(sw, 2, f, one, 1, x, v);
    g_value *t = sum2(sw, a, 1, b, 1, join(a->dt, b->dt), x->rank, x->label, x->ext);
    f[0] = dv;
    f[1] = cj(sw, p);
    f[2] = cj(sw, t);
    contribute(sw, x, product_like(sw, 3, f, one, 1, x, v), NULL);
    return 0;
}

/* The running OP (RED) of T along V's scan label, forwards or backwards
   (REVERSE), restricted by V's maps. */
static g_value *scan_like(grad_sweep *sw, g_value *t, const g_value *v, reduce_op red, int reverse)
{
    g_value *s = new_val(sw, OP_SCAN, 1);
    graph_set_operand(s, 0, t, 1);
    s->red = red;
    s->scan_label = v->scan_label;
    s->scan_reverse = reverse;
    s->dt = t->dt;
    graph_set_modes(s, t->rank, t->label, t->ext);
    graph_restrict(sw->g, s, v->maps, v->nmaps);
    return graph_add(sw->g, s);
}

/* The adjoint of v = scan(*, x) without dividing by x (reduce_product's
   way, running): dx(i) = sum over k >= i of dv(k) times the product of
   x(j), j <= k, j != i. With z = [x == 0], x' = x with its zeros taken as
   1, P = the running product of x' and C = the running count of zeros,
   that product is P(k) / x'(i) where C(k) == z(i) (no zero up to k but
   x(i) itself, if it is one), else 0: dx = S0 / x' where x != 0, S1 where
   x == 0, Sc the sum of dv · P · [C == c] the other way. torch's cumprod
   gives the same limit at a zero. */
static int scan_product(grad_sweep *sw, g_value *v, g_value *dv)
{
    g_value *x = v->in[0];
    g_value *zero = const_val(sw, 0), *one = const_val(sw, 1);
    g_value *z = map2(sw, MAP_EQ, dt_complex(x->dt) ? map1(sw, MAP_ABS, x) : x, zero); /* complex: |x| == 0 */
    g_value *in[3] = {z, one, x};
    g_value *xs = map_val(sw, MAP_WHERE, 3, in, 0);
    g_value *p = scan_like(sw, xs, v, RED_MUL, v->scan_reverse);
    g_value *c = scan_like(sw, z, v, RED_ADD, v->scan_reverse);
    double e1[3] = {1, 1, 1}, inv[3] = {1, -1, 1};
    g_value *f[3] = {dv, cj(sw, p), map2(sw, MAP_EQ, c, zero)};
    g_value *s0 = scan_like(sw, product_like(sw, 3, f, e1, 1, v, v), v, RED_ADD, !v->scan_reverse);
    f[2] = map2(sw, MAP_EQ, c, one);
    g_value *s1 = scan_like(sw, product_like(sw, 3, f, e1, 1, v, v), v, RED_ADD, !v->scan_reverse);
    f[0] = s0; /* S0 / x' where x != 0 */
    f[1] = cj(sw, xs);
    f[2] = map2(sw, MAP_EQ, z, zero);
    g_value *a = product_like(sw, 3, f, inv, 1, x, v);
    f[0] = s1; /* S1 where x == 0 */
    f[1] = z;
    g_value *b = product_like(sw, 2, f, e1, 1, x, v);
    contribute(sw, x, sum2(sw, a, 1, b, 1, join(a->dt, b->dt), x->rank, x->label, x->ext), NULL);
    return 0;
}

/* V's number of elements, an unknown extent taken as 64 (an estimate). */
static double elements(const grad_sweep *sw, const g_value *v)
{
    double n = 1;
    for (int m = 0; m < v->rank; m++) {
        int64_t e = sema_extent_eval(sw->g->S, v->ext[m], NULL);
        n *= e >= 0 ? (double)e : 64;
    }
    return n;
}

/* Passes adjoint DV of V (MAP: its labels per mode, for positional V) on
   to V's operands. Returns -1 if V's operation has no rule yet. */
static int propagate(grad_sweep *sw, g_value *v, g_value *dv, const int *map)
{
    g_value *f[6];
    double e[6];
    switch (v->op) {
    case OP_INPUT:
    case OP_CONST:
        return 0;
    case OP_INDEX: {
        g_value *w = v->in[0];
        int map2_[TX_MAX_MODES], plain = 1, nf = 1;
        g_value *fs[TX_MAX_MODES + 1];
        double es[TX_MAX_MODES + 1];
        fs[0] = dv;
        es[0] = 1;
        for (int m = 0; m < w->rank; m++) {
            int l = v->idx_label[m], first = l >= 0;
            for (int k = 0; first && k < m; k++)
                first = v->idx_label[k] != l;
            if (first) {
                map2_[m] = l;
                continue;
            }
            /* a chip or a diagonal: a label of its own for the mode, and a
               factor that is 1 where the view reads */
            plain = 0;
            char tag[16];
            snprintf(tag, sizeof tag, "%d", m);
            int fl = fresh_label(sw, l, tag);
            if (fl < 0)
                return -1;
            map2_[m] = fl;
            es[nf] = 1;
            if (l >= 0) { /* delta(l, f) */
                g_value *d = new_val(sw, OP_MAP, 0);
                d->fn = MAP_DELTA;
                d->dt = DT_F32;
                int lab[2] = {l, fl};
                tx_extent ext[2] = {w->ext[m], w->ext[m]};
                graph_set_modes(d, 2, lab, ext);
                fs[nf++] = graph_add(sw->g, d);
            } else /* [f == chip]: 1-based positions against chip + 1 */
                fs[nf++] = map2(sw, MAP_EQ, iota1(sw, fl, w->ext[m]), const_val(sw, (double)v->idx_chip[m] + 1));
        }
        if (plain) {
            contribute(sw, w, dv, v->idx_label);
            return 0;
        }
        contribute(sw, w, product_to(sw, nf, fs, es, 1, w->rank, map2_, w->ext, v->maps, v->nmaps), map2_);
        return 0;
    }
    case OP_SLICE: { /* dx(i) = sum_k dv(k) [i == k + lo], per mode that moves */
        g_value *x = v->in[0];
        int to[TX_MAX_MODES], nf = 1;
        g_value *fs[TX_MAX_MODES + 1];
        double es[TX_MAX_MODES + 1];
        for (int m = 0; m < v->rank; m++) {
            int l = v->label[m];
            tx_extent xe = ext_of(x, l);
            to[m] = l;
            es[nf] = 1;
            if (v->slice_lo[m].dim == -1 && v->slice_lo[m].value == 0 && ext_eq(v->ext[m], xe))
                continue;
            int k = fresh_label(sw, l, "s");
            g_value *lo = extent_val(sw, v->slice_lo[m]);
            if (k < 0 || !lo)
                return -1;
            to[m] = k;
            g_value *shift = sum2(sw, iota1(sw, k, v->ext[m]), 1, lo, 1, DT_F64, 1, &k, &v->ext[m]);
            fs[nf++] = map2(sw, MAP_EQ, iota1(sw, l, xe), shift);
        }
        fs[0] = relabel(sw, dv, v->label, to, v->rank, v->ext);
        es[0] = 1;
        contribute(sw, x, product_like(sw, nf, fs, es, 1, x, v), NULL);
        return 0;
    }
    case OP_LINALG:
        return propagate_linalg(sw, v, dv);
    case OP_PART:
        contribute_part(sw, v->in[0], dv, v->part);
        return 0;
    case OP_STORE: {
        g_value *x = v->in[0];
        double sign = v->store_op == '-' ? -1 : 1;
        if (v->store_op != '=')
            contribute(sw, v->in[1], dv, map);
        if (!sw->dep[x->id])
            return 0;
        g_value *d = dv;
        if (v->rank > 0 && memcmp(map, v->store_label, sizeof(int) * (size_t)v->rank) != 0)
            d = relabel(sw, dv, map, v->store_label, v->rank, v->ext);
        f[0] = d;
        e[0] = 1;
        contribute(sw, x, product_like(sw, 1, f, e, sign, x, v), NULL);
        return 0;
    }
    case OP_CONTRACT:
        for (int k = 0; k < v->nin; k++) {
            g_value *x = v->in[k];
            if (!sw->dep[x->id])
                continue;
            int n = v->nin + 2;
            g_value **fs = arena_alloc(sw->g->arena, sizeof(g_value *) * (size_t)n);
            double *es = arena_alloc(sw->g->arena, sizeof(double) * (size_t)n);
            /* dv · conj(the others), or conj(conj(dv) · the others) where
               that conjugates fewer modes (a vector, not the matrix of a
               matrix-vector product) */
            double inside = 0, outside = elements(sw, x) + (dt_complex(dv->dt) ? elements(sw, dv) : 0);
            for (int i = 0; i < v->nin; i++)
                if ((i != k || v->coef_in[k] < 0) && dt_complex(v->in[i]->dt))
                    inside += elements(sw, v->in[i]);
            int out = outside < inside;
            int nf = 0;
            double coef = v->coef;
            fs[nf] = out ? cj(sw, dv) : dv;
            es[nf++] = 1;
            for (int i = 0; i < v->nin; i++)
                if (i != k) {
                    fs[nf] = out ? v->in[i] : cj(sw, v->in[i]);
                    es[nf++] = v->coef_in[i];
                }
            if (v->coef_in[k] < 0) { /* d(1/x) = -1/x² */
                fs[nf] = out ? x : cj(sw, x);
                es[nf++] = -1;
                fs[nf] = fs[nf - 1];
                es[nf++] = -1;
                coef = -coef;
            }
            g_value *d = product_like(sw, nf, fs, es, coef, x, v);
            contribute(sw, x, out ? cj(sw, d) : d, NULL);
        }
        return 0;
    case OP_ADD:
        for (int i = 0; i < v->nin; i++)
            if (sw->dep[v->in[i]->id]) {
                f[0] = dv;
                e[0] = 1;
                contribute(sw, v->in[i], product_like(sw, 1, f, e, v->coef_in[i], v->in[i], v), NULL);
            }
        return 0;
    case OP_MAP: {
        g_value *x = v->nin ? v->in[0] : NULL;
        f[0] = dv;
        e[0] = e[1] = e[2] = 1;
        double coef = 1;
        int nf = 2;
        switch (v->fn) {
        case MAP_POW: {
            double p = v->fn_arg;
            coef = p;
            if (p == 0)
                return 0;
            if (p == 1)
                nf = 1;
            else if (p == 2)
                f[1] = x;
            else {
                g_value *in[1] = {x};
                f[1] = map_val(sw, MAP_POW, 1, in, p - 1);
            }
            break;
        }
        case MAP_CONJ: f[0] = cj(sw, dv); nf = 1; break; /* the identity on reals */
        case MAP_REAL: nf = 1; break;
        case MAP_IMAG: /* 0 on reals; i dv for a complex x */
            if (!dt_complex(x->dt))
                return 0;
            f[1] = cconst_val(sw, 0, 1);
            break;
        case MAP_EXP: f[1] = as_stored(sw, v); break;
        case MAP_LOG: f[1] = x; e[1] = -1; break;
        case MAP_SQRT: f[1] = as_stored(sw, v); e[1] = -1; coef = 0.5; break;
        case MAP_SIN: f[1] = map1(sw, MAP_COS, x); break;
        case MAP_COS: f[1] = map1(sw, MAP_SIN, x); coef = -1; break;
        case MAP_TANH: {
            g_value *sq[1] = {as_stored(sw, v)};
            g_value *one_v = const_val(sw, 1), *sq2 = map_val(sw, MAP_POW, 1, sq, 2);
            f[1] = sum2(sw, one_v, 1, sq2, -1, v->dt, v->rank, v->label, v->ext);
            break;
        }
        case MAP_ABS: {
            g_value *zero = const_val(sw, 0);
            if (dt_complex(x->dt)) { /* dv x / |x|, 0 at 0 */
                f[1] = x;
                f[2] = v;
                e[2] = -1;
                g_value *in[3] = {map2(sw, MAP_EQ, v, zero), zero, product_like(sw, 3, f, e, 1, x, v)};
                contribute(sw, x, map_val(sw, MAP_WHERE, 3, in, 0), NULL);
                return 0;
            }
            g_value *pos = map2(sw, MAP_GT, x, zero), *neg = map2(sw, MAP_LT, x, zero);
            f[1] = sum2(sw, pos, 1, neg, -1, v->dt, x->rank, x->label, x->ext);
            break;
        }
        case MAP_MAX:
        case MAP_MIN: {
            g_value *a = v->in[0], *b = v->in[1];
            if (sw->dep[a->id]) {
                f[1] = map2(sw, v->fn == MAP_MAX ? MAP_GE : MAP_LE, a, b);
                contribute(sw, a, product_like(sw, 2, f, e, 1, a, v), NULL);
            }
            if (sw->dep[b->id]) {
                f[1] = map2(sw, v->fn == MAP_MAX ? MAP_LT : MAP_GT, a, b);
                contribute(sw, b, product_like(sw, 2, f, e, 1, b, v), NULL);
            }
            return 0;
        }
        case MAP_WHERE:
            for (int i = 1; i <= 2; i++)
                if (sw->dep[v->in[i]->id]) {
                    g_value *in[3] = {v->in[0], i == 1 ? dv : const_val(sw, 0), i == 1 ? const_val(sw, 0) : dv};
                    f[0] = map_val(sw, MAP_WHERE, 3, in, 0);
                    contribute(sw, v->in[i], product_like(sw, 1, f, e, 1, v->in[i], v), NULL);
                }
            return 0;
        default: /* comparisons, delta, dims: constant */
            return 0;
        }
        if (nf == 2 && v->fn != MAP_IMAG)
            f[1] = cj(sw, f[1]); /* the derivative of a holomorphic function, conjugated */
        contribute(sw, x, product_like(sw, nf, f, e, coef, x, v), NULL);
        return 0;
    }
    case OP_REDUCE: {
        g_value *x = v->in[0];
        f[0] = dv;
        e[0] = e[1] = 1;
        if (v->red == RED_MUL)
            return reduce_product(sw, v, dv);
        if (v->red != RED_MAX && v->red != RED_MIN)
            return -1;
        /* dv · [x == m] / #ties, m the max (min) found again on x as
           stored, so that both read the same bits: a computed x (x*x, an
           f32 product computed in double) recomputed in the test need not
           equal the v the forward pass rounded or scaled (no position
           matched: 0/0) */
        g_value *xs = x, *m = v; /* x read from memory: v is its max, bit for bit */
        if (x->op != OP_INDEX) { /* kept in memory: read by both, never computed twice */
            g_value *st = store_tmp(sw, x, x->label, x->rank, x->ext);
            sw->g->S->vars[st->var]->keep = 1;
            xs = view(sw, st, x->label);
            m = new_val(sw, OP_REDUCE, 1);
            graph_set_operand(m, 0, xs, 1);
            m->red = v->red;
            m->dt = xs->dt;
            m->summed = v->summed;
            graph_set_modes(m, v->rank, v->label, v->ext);
            graph_restrict(sw->g, m, v->maps, v->nmaps);
            graph_add(sw->g, m);
        }
        g_value *mask = map2(sw, MAP_EQ, xs, m);
        g_value *m1[1] = {mask};
        double one[1] = {1};
        g_value *count = product_like(sw, 1, m1, one, 1, v, v);
        f[1] = mask;
        f[2] = count;
        e[2] = -1;
        contribute(sw, x, product_like(sw, 3, f, e, 1, x, v), NULL);
        return 0;
    }
    case OP_SCAN: {
        g_value *x = v->in[0];
        if (v->red == RED_MAX || v->red == RED_MIN)
            return scan_extremum(sw, v, dv);
        if (v->red == RED_MUL)
            return scan_product(sw, v, dv);
        f[0] = scan_like(sw, dv, v, RED_ADD, !v->scan_reverse); /* +: the scan of dv the other way */
        e[0] = 1;
        contribute(sw, x, product_like(sw, 1, f, e, 1, x, v), NULL);
        return 0;
    }
    default:
        return -1;
    }
}

/* Does V's value depend on its operands in a differentiable way? */
static int differentiable(const g_value *v)
{
    if (v->op == OP_MAP && v->fn >= MAP_LT && v->fn <= MAP_NE)
        return 0; /* comparisons are constant where they are differentiable */
    return 1;
}

static void keep_entry_values(grad_sweep *sw);

grad_sweep *grad_sweep_run(graph *g, g_value *s, cst_node *owner, int stmt, tx_span span)
{
    tx_arena *a = g->arena;
    grad_sweep *sw = arena_alloc(a, sizeof *sw);
    sw->g = g;
    sw->owner = owner;
    sw->stmt = stmt;
    sw->span = span;
    sw->s = s;
    int n = sw->n = g->n;
    TX_ASSERT(s->id >= 0 && s->id < n && g->v[s->id] == s);
    sw->adj = arena_alloc(a, sizeof(contrib *) * (size_t)n);
    sw->total = arena_alloc(a, sizeof(g_value *) * (size_t)n);
    sw->map = arena_alloc(a, sizeof *sw->map * (size_t)n);
    sw->bad = arena_alloc(a, sizeof(g_value *) * (size_t)n);
    sw->dep = arena_alloc(a, (size_t)n);
    sw->need = arena_alloc(a, (size_t)n);
    for (int k = 0; k <= s->id; k++) {
        g_value *v = g->v[k];
        if (v->op == OP_INPUT)
            sw->dep[k] = 1;
        else if (differentiable(v))
            for (int i = 0; i < v->nin; i++)
                sw->dep[k] |= sw->dep[v->in[i]->id];
    }
    sw->need[s->id] = 1;
    for (int k = s->id; k >= 0; k--)
        if (sw->need[k] && sw->dep[k])
            for (int i = 0; i < g->v[k]->nin; i++)
                sw->need[g->v[k]->in[i]->id] = 1;
    if (sw->dep[s->id]) { /* the seed, 1, in the type of s: in an f64 program an f32 one
                             rounded what it scaled (1.4 * log(x): float(1.4) / x) where
                             the adjoints were kept in memory (-O0, -O1) */
        g_value *seed = const_val(sw, 1);
        seed->dt = dt_complex(s->dt) ? DT_F64 : s->dt;
        contribute(sw, s, seed, NULL);
    }
    for (int k = s->id; k >= 0; k--) {
        g_value *v = g->v[k];
        if (!sw->need[k] || !sw->dep[k])
            continue;
        if (sw->bad[k]) {
            poison(sw, v, sw->bad[k]);
            continue;
        }
        if (v->op == OP_LINALG && v->nout > 1) { /* the results' adjoints, together */
            if (sw->adj[k] && (v->la == LA_EIGH ? propagate_eigh(sw, v)
                               : v->la == LA_QR ? propagate_qr(sw, v) : propagate_svd(sw, v)) < 0)
                poison(sw, v, v);
            continue;
        }
        g_value *dv = combine(sw, v);
        sw->total[k] = dv;
        if (dv && propagate(sw, v, dv, positional(v) ? sw->map[k] : NULL) < 0)
            poison(sw, v, v);
    }
    keep_entry_values(sw);
    return sw;
}

/* ---- values at entry ----
   The adjoint code runs after the program has written its tensors, so a
   value it reads from the forward pass must still be in memory then. An
   intermediate is (its own buffer); a read of a variable (OP_INDEX of
   its value at that point) is not when a later statement, before the
   grad, wrote the variable again (an inout x = x^2: its rule needs x at
   entry). Nor is a computed value that reads one and may be recomputed
   where it is used (fused). Such an operand of the adjoint code is
   replaced by a view of a hidden tmp tensor stored before the first of
   those writes (a store: no pass removes it or moves it; inserted there
   with graph_insert_before, spliced in when lowering ends). */

/* The first store after value B (OP_INPUT or OP_STORE of a variable)
   that writes the same variable, among the forward values, or NULL. */
static g_value *overwritten_by(grad_sweep *sw, const g_value *b)
{
    for (int k = b->id + 1; k < sw->n; k++)
        if (sw->g->v[k]->op == OP_STORE && sw->g->v[k]->var == b->var)
            return sw->g->v[k];
    return NULL;
}

/* The earliest write that makes forward value X stale (see above), or
   NULL; memoised in STALE (0 unknown, 1 fresh, 2 stale, at STALE_AT). */
static g_value *stale_at(grad_sweep *sw, g_value *x, unsigned char *stale, g_value **at)
{
    if (stale[x->id])
        return stale[x->id] == 2 ? at[x->id] : NULL;
    g_value *first = NULL;
    if (x->op == OP_INDEX && (x->in[0]->op == OP_INPUT || x->in[0]->op == OP_STORE))
        first = overwritten_by(sw, x->in[0]);
    else if (x->op != OP_INPUT && x->op != OP_STORE && x->op != OP_LINALG && x->op != OP_PART)
        for (int i = 0; i < x->nin; i++) { /* computed where used, perhaps: its reads */
            g_value *w = stale_at(sw, x->in[i], stale, at);
            if (w && (!first || w->id < first->id))
                first = w;
        }
    if (first && first->id < x->id)
        first = NULL; /* cannot be: the value was computed after the write */
    stale[x->id] = first ? 2 : 1;
    at[x->id] = first;
    return first;
}

/* A hidden tmp tensor stored from X (labels X's) just before W, read
   back through X's labels: keep_entry_values' copy (*STORE: the store). */
static g_value *entry_copy(grad_sweep *sw, g_value *x, g_value *w, g_value **store)
{
    graph *g = sw->g;
    sym *t = sema_hidden_tmp(g->S, &sw->owner->grad_tmp, sw->ntmp++, "grad", sw->owner->span, x->dt, x->rank, x->ext);
    *store = graph_store_whole(g, x, t, x->label, w->stmt, w->span, w);
    return graph_view(g, *store, x->label, w->stmt, w->span, w);
}

/* A's operand I becomes NW. */
static void swap_operand(g_value *a, int i, g_value *nw)
{
    a->in[i]->nuses--;
    a->in[i] = nw;
    nw->nuses++;
}

/* An index A the sweep made of the value B of a variable (a relabelled
   read), when a later write overwrote B before the grad: A reads a copy
   of the variable taken before the write (WHOLE, per B, made once). */
static void redirect_whole_read(grad_sweep *sw, g_value *a, g_value **whole)
{
    g_value *b = a->in[0], *w = overwritten_by(sw, b);
    if (!w)
        return;
    for (int m = 0; m < b->rank; m++) /* its labels name the copy's modes */
        for (int q = 0; q <= m; q++)
            if (a->idx_label[m] < 0 || (q < m && a->idx_label[q] == a->idx_label[m]))
                return;
    if (!whole[b->id])
        entry_copy(sw, graph_view(sw->g, b, a->idx_label, w->stmt, w->span, w), w, &whole[b->id]);
    swap_operand(a, 0, whole[b->id]);
}

/* Replaces the stale forward operands (stale_at) of the adjoint values
   the sweep made (ids from sw->n on) by copies taken before the write
   (redirect_whole_read for the sweep's own indexes of a variable). */
static void keep_entry_values(grad_sweep *sw)
{
    graph *g = sw->g;
    int n = sw->n;
    unsigned char *stale = arena_alloc(g->arena, (size_t)n + 1);
    g_value **at = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(n + 1));
    g_value **copy = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(n + 1));
    g_value **whole = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(n + 1));
    memset(stale, 0, (size_t)n + 1);
    memset(copy, 0, sizeof(g_value *) * (size_t)(n + 1));
    memset(whole, 0, sizeof(g_value *) * (size_t)(n + 1));
    for (int k = n; k < g->n; k++) {
        g_value *a = g->v[k];
        if (a->op == OP_INDEX && a->in[0]->id < n && (a->in[0]->op == OP_INPUT || a->in[0]->op == OP_STORE)) {
            redirect_whole_read(sw, a, whole);
            continue;
        }
        for (int i = 0; i < a->nin; i++) {
            g_value *x = a->in[i];
            if (x->id >= n || x->op == OP_CONST)
                continue;
            g_value *w = stale_at(sw, x, stale, at);
            if (!w)
                continue;
            if (!copy[x->id]) {
                g_value *st;
                copy[x->id] = entry_copy(sw, x, w, &st);
            }
            swap_operand(a, i, copy[x->id]);
        }
    }
}

/* What the sweep cannot differentiate, for the message. */
static const char *what(const graph *g, const g_value *v, char *buf, size_t n)
{
    if (v->op == OP_INDEX) {
        for (int m = 0; m < v->in[0]->rank; m++)
            if (v->idx_label[m] < 0)
                return "a chip (an integer label)";
        return "a diagonal (a label repeated in one tensor)";
    }
    if (v->op == OP_SLICE)
        return "slice";
    if (v->op == OP_LINALG || v->op == OP_PART) {
        const g_value *c = v->op == OP_PART ? v->in[0] : v;
        snprintf(buf, n, "'%s'", graph_la_name(c->la));
        return buf;
    }
    if (v->op == OP_SCAN) {
        snprintf(buf, n, "scan by %s", graph_reduce_name(v->red));
        return buf;
    }
    (void)g;
    return graph_op_name(v->op);
}

g_value *grad_result(grad_sweep *sw, int var, int rank, const int *labels, const tx_extent *ext, tx_diag *d,
                     int stmt, tx_span span)
{
    graph *g = sw->g;
    g_value *x = NULL;
    for (int k = 0; k < sw->n && !x; k++)
        if (g->v[k]->op == OP_INPUT && g->v[k]->var == var)
            x = g->v[k];
    TX_ASSERT(x && x->rank == rank);
    if (sw->bad[x->id]) {
        char buf[64];
        diag_error(d, span, "grad through %s is not supported yet", what(g, sw->bad[x->id], buf, sizeof buf));
        diag_note(d, sw->bad[x->id]->span, "it is here, on the way from '%s' to the differentiated value",
                  g->S->vars[var]->name);
        return NULL;
    }
    g_value *dx = sw->total[x->id];
    sw->span = span;
    sw->stmt = stmt;
    if (!dx) { /* s does not depend on X: zero */
        g_value *z = new_val(sw, OP_ADD, 1);
        graph_set_operand(z, 0, const_val(sw, 0), 1);
        z->dt = x->dt;
        graph_set_modes(z, rank, labels, ext);
        return graph_add(g, z);
    }
    if (rank > 0 && memcmp(sw->map[x->id], labels, sizeof(int) * (size_t)rank) != 0)
        dx = relabel(sw, dx, sw->map[x->id], labels, rank, ext);
    return dx;
}
