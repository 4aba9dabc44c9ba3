/*
 * sema_linalg.c - the semantic checks of the linear-algebra calls
 * (cholesky, inv, pow, solve, eigh, qr, svd, slice; tx(5) §6) and of the
 * statements with several targets, (V("i,e"), w("e")) = eigh(A("i,j"))
 * and the like: arguments in a label scope of their own, square and
 * matching shapes, slice corners, and the labels and extents of results.
 */
#include <string.h>

#include "sema.h"
#include "parser.h"

/* The labels an expression carries on its own (those not summed inside
   it: outside nested reduce calls, and a nested linear-algebra call's
   result labels), in the order they are first written. */
static void written_labels(cst_node *n, int *out, int *nout)
{
    switch (n->kind) {
    case CST_REF:
        for (int i = 0; i < n->nlabels; i++) {
            int l = n->labels[i].label, seen = 0;
            for (int k = 0; k < *nout; k++)
                seen |= out[k] == l;
            if (l >= 0 && !seen && *nout < TX_MAX_LABELS)
                out[(*nout)++] = l;
        }
        return;
    case CST_CALL:
        if (n->la) {
            for (int i = 0; i < n->ncall_labels; i++) {
                int l = n->call_labels[i], seen = 0;
                for (int k = 0; k < *nout; k++)
                    seen |= out[k] == l;
                if (!seen)
                    out[(*nout)++] = l;
            }
            return;
        }
        if (n->name.kind == TK_REDUCE)
            return;
        for (int i = 0; i < n->args.n; i++)
            if (n->args.v[i]->kind != CST_ARG_OP && n->args.v[i]->kind != CST_ARG_STR)
                written_labels(n->args.v[i], out, nout);
        return;
    case CST_LETUSE:
        written_labels(n->a->a, out, nout);
        return;
    default:
        if (n->a)
            written_labels(n->a, out, nout);
        if (n->b)
            written_labels(n->b, out, nout);
    }
}

/* A corner entry of slice: an integer, a dim, or sums, differences and
   integer multiples of those. */
static int dim_expr(checker *C, cst_node *n, tx_extent *out)
{
    sema_program *S = C->S;
    switch (n->kind) {
    case CST_NUM:
        if (n->imag || n->num < 0 || n->num != (double)(int64_t)n->num) {
            diag_error(S->diag, n->span, "a corner is a non-negative integer or a dim expression");
            return -1;
        }
        *out = (tx_extent){-1, (int64_t)n->num};
        return 0;
    case CST_NAME: {
        const char *name = sema_tok_name(S, &n->name);
        sym *d = sema_lookup(S, name);
        if (!d || d->kind != SYM_DIM) {
            diag_error(S->diag, n->span, "'%s' is not a dim; a corner is an integer or a dim expression", name);
            return -1;
        }
        *out = d->is_const ? (tx_extent){-1, d->value} : (tx_extent){d->var, 0};
        return 0;
    }
    case CST_ADD: case CST_SUB: {
        tx_extent a, b;
        if (dim_expr(C, n->a, &a) < 0 || dim_expr(C, n->b, &b) < 0)
            return -1;
        *out = sema_ext_add(S, a, b, n->kind == CST_ADD ? 1 : -1);
        break;
    }
    case CST_MUL: {
        cst_node *num = n->a->kind == CST_NUM && !n->a->imag ? n->a :
                        n->b->kind == CST_NUM && !n->b->imag ? n->b : NULL;
        tx_extent x;
        if (!num || dim_expr(C, num == n->a ? n->b : n->a, &x) < 0) {
            if (!num)
                diag_error(S->diag, n->span, "a corner may multiply a dim by an integer only");
            return -1;
        }
        tx_extent acc = {-1, 0};
        for (int64_t k = 0; k < (int64_t)num->num && k < 64; k++)
            acc = sema_ext_add(S, acc, x, 1);
        *out = acc;
        break;
    }
    default:
        diag_error(S->diag, n->span, "a corner is an integer or a dim expression (like n-1)");
        return -1;
    }
    if (out->dim == -3) {
        diag_error(S->diag, n->span, "this corner expression is too complex");
        return -1;
    }
    return 0;
}

/* Checks the arguments of linear-algebra call N in a label scope of their
   own (labels inside the call are local to it, tx(5) §6), and binds the
   result's labels in the statement. MULTI: the call is the right side of
   a statement with several targets. */
int sema_check_la_call(checker *C, cst_node *n, const char *fname, int multi)
{
    sema_program *S = C->S;
    cst_stmt *st = C->stmt;
    int nargs = n->args.n, lo = 1, hi = 1;
    switch (n->name.kind) {
    case TK_CHOLESKY: n->la = LA_CHOL; break;
    case TK_INV: n->la = LA_INV; break;
    case TK_POW: n->la = LA_POW; lo = hi = 2; break;
    case TK_SOLVE: n->la = LA_SOLVE; lo = hi = 2; break;
    case TK_EIGH: n->la = LA_EIGH; hi = 2; break;
    case TK_QR: n->la = LA_QR; break;
    case TK_SVD: n->la = LA_SVD; break;
    default: n->la = LA_SLICE; lo = hi = 3; break;
    }
    int nres = n->la == LA_EIGH || n->la == LA_QR ? 2 : n->la == LA_SVD ? 3 : 1;
    if (nres > 1 && !multi) {
        diag_error(S->diag, n->span, "'%s' has %d results; assign them all at once, as %s", fname, nres,
                   n->la == LA_EIGH ? "(V(\"i,e\"), w(\"e\")) = eigh(A(\"i,j\"))"
                   : n->la == LA_QR ? "(Q(\"i,r\"), R(\"r,j\")) = qr(A(\"i,j\"))"
                                    : "(U(\"i,r\"), s(\"r\"), Vt(\"r,j\")) = svd(A(\"i,j\"))");
        return -1;
    }
    if (nargs < lo || nargs > hi) {
        diag_error(S->diag, n->span, "'%s' takes %d%s argument%s, not %d", fname, lo,
                   hi > lo ? " or 2" : "", hi > 1 ? "s" : "", nargs);
        return -1;
    }
    /* the arguments, in a scope of their own */
    tx_extent *outer_ext = st->lab_ext;
    tx_span *outer_span = st->lab_span;
    labelset outer_bound = st->lab_bound;
    size_t nl = (size_t)S->cst->nlabel_names + 1;
    st->lab_ext = arena_alloc(S->arena, sizeof(tx_extent) * nl);
    st->lab_span = arena_alloc(S->arena, sizeof(tx_span) * nl);
    memset(&st->lab_bound, 0, sizeof st->lab_bound);
    int r = 0, nmat = n->la == LA_SLICE || n->la == LA_POW ? 1 : nargs;
    int lab[2][TX_MAX_LABELS], nlab[2] = {0, 0};
    int deltas0 = C->ndeltas, scoped0 = C->scoped;
    C->scoped = 1;
    for (int i = 0; i < nmat && r == 0; i++) {
        r = sema_expect_expr_arg(C, n, i);
        if (r == 0) /* a delta's labels: bound within the argument */
            r = sema_check_deltas_from(C, deltas0);
        if (r == 0) {
            written_labels(n->args.v[i], lab[i], &nlab[i]);
            int want = n->la == LA_SLICE || (n->la == LA_SOLVE && i == 1) ? -1 : 2;
            if ((want == 2 && nlab[i] != 2) || nlab[i] > TX_MAX_MODES || (want == -1 && nlab[i] < 1) ||
                (n->la == LA_SOLVE && i == 1 && nlab[i] > 2)) {
                diag_error(S->diag, n->args.v[i]->span, "argument %d of '%s' must be %s; it has %d label%s", i + 1,
                           fname, n->la == LA_SLICE ? "a tensor with labels"
                                  : n->la == LA_SOLVE && i == 1 ? "a vector or a matrix (one or two labels)"
                                                                : "a matrix (two labels)",
                           nlab[i], nlab[i] == 1 ? "" : "s");
                r = -1;
            }
            memcpy(n->arg_labels[i], lab[i], sizeof(int) * (size_t)(nlab[i] < TX_MAX_MODES ? nlab[i] : TX_MAX_MODES));
            n->narg_labels[i] = nlab[i] < TX_MAX_MODES ? nlab[i] : TX_MAX_MODES;
        }
    }
    C->scoped = scoped0;
    tx_extent *inner = st->lab_ext;
    st->lab_ext = outer_ext;
    st->lab_span = outer_span;
    st->lab_bound = outer_bound;
    n->scope_ext = inner;
    if (r < 0)
        return -1;
    const char *const *names = S->cst->label_names;
    tx_extent e0 = inner[lab[0][0]], e1 = nlab[0] > 1 ? inner[lab[0][1]] : e0;
    int square = n->la == LA_CHOL || n->la == LA_INV || n->la == LA_POW || n->la == LA_EIGH || n->la == LA_SOLVE;
    if (square) {
        int same = sema_ext_same(S, e0, e1);
        char a[300], b[300];
        sema_describe_extent(S, e0, a, sizeof a);
        sema_describe_extent(S, e1, b, sizeof b);
        if (same == 0) {
            diag_error(S->diag, n->args.v[0]->span, "'%s' needs a square matrix; '%s' has extent %s and '%s' %s",
                       fname, names[lab[0][0]], a, names[lab[0][1]], b);
            return -1;
        }
        if (same < 0)
            sema_runtime_check(S, 0, e0, e1,
                               arena_printf(S->arena, "%s:%u:%u: %s: the matrix is not square (%s by %s)",
                                            S->cst->src->name, n->span.line, n->span.col, fname, a, b));
    }
    if (n->la == LA_SOLVE) {
        if (lab[1][0] != lab[0][0]) {
            diag_error(S->diag, n->args.v[1]->span, "the right-hand side of 'solve' must start with the matrix's "
                       "first label '%s' (solve(A(\"%s,%s\"), B(\"%s,r\")) solves A X = B)", names[lab[0][0]],
                       names[lab[0][0]], names[lab[0][1]], names[lab[0][0]]);
            return -1;
        }
        if (nlab[1] == 2 && (lab[1][1] == lab[0][1])) {
            diag_error(S->diag, n->args.v[1]->span, "the right-hand side of 'solve' must not reuse the label '%s'",
                       names[lab[0][1]]);
            return -1;
        }
    }
    if (n->la == LA_EIGH && nargs == 2) {
        if (nlab[1] != 2 || lab[1][0] != lab[0][0] || lab[1][1] != lab[0][1]) {
            diag_error(S->diag, n->args.v[1]->span, "the second matrix of 'eigh' must have the labels of the "
                       "first, in the same order");
            return -1;
        }
    }
    if (n->la == LA_POW) {
        cst_node *p = n->args.v[1];
        if (p->kind == CST_ARG_OP || p->kind == CST_ARG_STR || p->kind == CST_ARG_LIST ||
            sema_check_expr(C, p) < 0 || !p->is_number || sema_eval_number(p) != (double)(int64_t)sema_eval_number(p)) {
            diag_error(S->diag, p->span, "the power of 'pow' must be an integer");
            return -1;
        }
        n->num = sema_eval_number(p);
    }
    /* the result's labels and extents */
    n->ncall_labels = 0;
    memset(&n->ls, 0, sizeof n->ls);
    if (n->la == LA_SLICE) {
        for (int c = 1; c <= 2; c++)
            if (n->args.v[c]->kind != CST_ARG_LIST || n->args.v[c]->args.n != nlab[0]) {
                diag_error(S->diag, n->args.v[c]->span, "the %s corner of 'slice' is a list of %d entr%s, "
                           "as [0, 1]", c == 1 ? "first" : "second", nlab[0], nlab[0] == 1 ? "y" : "ies");
                return -1;
            }
        for (int i = 0; i < nlab[0]; i++) {
            tx_extent l, h, x = inner[lab[0][i]];
            if (dim_expr(C, n->args.v[1]->args.v[i], &l) < 0 || dim_expr(C, n->args.v[2]->args.v[i], &h) < 0)
                return -1;
            tx_extent len = sema_ext_add(S, h, l, -1);
            int64_t lv = sema_extent_eval(S, l, NULL), hv = sema_extent_eval(S, h, NULL),
                    xv = sema_extent_eval(S, x, NULL);
            if ((lv >= 0 && hv >= 0 && lv > hv) || (hv >= 0 && xv >= 0 && hv > xv) || len.dim == -3) {
                char xs[300];
                sema_describe_extent(S, x, xs, sizeof xs);
                diag_error(S->diag, n->args.v[2]->args.v[i]->span, "slice corner out of range for label '%s' "
                           "(extent %s): the box must satisfy 0 <= lo <= hi <= extent", names[lab[0][i]], xs);
                return -1;
            }
            char *msg = arena_printf(S->arena, "%s:%u:%u: slice: the box is out of range for label '%s'",
                                     S->cst->src->name, n->span.line, n->span.col, names[lab[0][i]]);
            if (lv < 0) /* a dim expression like n - 5 may go below 0 */
                sema_runtime_check(S, 1, (tx_extent){-1, 0}, l, msg);
            if (!(lv >= 0 && hv >= 0))
                sema_runtime_check(S, 1, l, h, msg);
            if (!(hv >= 0 && xv >= 0))
                sema_runtime_check(S, 1, h, x, msg);
            n->slice_lo[i] = l;
            n->slice_ext[i] = len;
            n->call_labels[n->ncall_labels++] = lab[0][i];
        }
    } else if (n->la == LA_SOLVE) {
        n->call_labels[n->ncall_labels++] = lab[0][1];
        if (nlab[1] == 2)
            n->call_labels[n->ncall_labels++] = lab[1][1];
    } else if (nres == 1) {
        n->call_labels[n->ncall_labels++] = lab[0][0];
        n->call_labels[n->ncall_labels++] = lab[0][1];
    } else { /* multi: the statement binds the results; record the matrix labels */
        n->call_labels[n->ncall_labels++] = lab[0][0];
        n->call_labels[n->ncall_labels++] = lab[0][1];
        return 0;
    }
    for (int i = 0; i < n->ncall_labels; i++) {
        int l = n->call_labels[i];
        tx_extent x = n->la == LA_SLICE ? n->slice_ext[i] : n->la == LA_SOLVE && i == 1 ? inner[l] : inner[l];
        if (sema_bind_label(C, l, x, n->span, "the result of the call") < 0)
            return -1;
        ls_add(&n->ls, l);
    }
    return 0;
}

/* The result modes of a multi-output call, in terms of its matrix's row
   label (R), column label (C) and the new label the left side names (N). */
static const char *multi_template(int la, int part)
{
    static const char *eigh[] = {"RN", "N"}, *qr[] = {"RN", "NC"}, *svd[] = {"RN", "N", "NC"};
    return la == LA_EIGH ? eigh[part] : la == LA_QR ? qr[part] : svd[part];
}

int sema_multi_labels(int la, int part, int r, int c, int nw, int *labels)
{
    const char *t = multi_template(la, part);
    int n = 0;
    for (; *t; t++)
        labels[n++] = *t == 'R' ? r : *t == 'C' ? c : nw;
    return n;
}

/* Whether expression N (checked) reads a tensor: a reference, a scalar
   tensor by name, a let (whatever it reads); numbers, dims and delta do
   not. */
static int reads_a_tensor(const cst_node *n)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case CST_REF:
        if (n->fn == MAP_DELTA)
            return 0;
        return 1;
    case CST_NAME:
        return !n->sym || n->sym->kind != SYM_DIM;
    case CST_LET:
    case CST_LETUSE:
        return 1;
    case CST_NUM:
        return 0;
    default:
        break;
    }
    if (reads_a_tensor(n->a) || reads_a_tensor(n->b))
        return 1;
    for (int i = 0; i < n->args.n; i++)
        if (reads_a_tensor(n->args.v[i]))
            return 1;
    return 0;
}

/* (V("i,e"), w("e")) = eigh(A("i,j")) and the like. */
void sema_check_multi(checker *C, cst_stmt *st)
{
    sema_program *S = C->S;
    cst_node *call = st->expr;
    int kind = call->kind == CST_CALL ? call->name.kind : 0;
    if (kind != TK_EIGH && kind != TK_QR && kind != TK_SVD) {
        diag_error(S->diag, st->span, "a parenthesised list of targets needs a multi-output call (eigh, qr or svd)");
        return;
    }
    C->multi_call = call;
    int r = sema_check_expr(C, call);
    C->multi_call = NULL;
    if (r < 0)
        return;
    int nres = call->la == LA_SVD ? 3 : 2;
    const char *fname = kind == TK_EIGH ? "eigh" : kind == TK_QR ? "qr" : "svd";
    if (st->ntargets != nres) {
        diag_error(S->diag, st->span, "'%s' has %d results but the left side names %d", fname, nres, st->ntargets);
        return;
    }
    int rl = call->arg_labels[0][0], cl = call->arg_labels[0][1];
    /* the new label: the one the left side adds to the matrix's labels */
    int nw = -1;
    for (int i = 0; i < st->ntargets && nw < 0; i++)
        for (int k = 0; k < st->targets[i].nlabels; k++) {
            int l = st->targets[i].labels[k].label;
            if (l >= 0 && l != rl && l != cl) {
                nw = l;
                break;
            }
        }
    if (nw < 0) {
        diag_error(S->diag, st->targets[0].span, "the left side of '%s' must name the new label of its "
                   "results, e.g. e in (V(\"%s,e\"), w(\"e\"))", fname, S->cst->label_names[rl]);
        return;
    }
    tx_extent er = call->scope_ext[rl], ec = call->scope_ext[cl];
    tx_extent en = call->la == LA_EIGH ? er : sema_ext_min(S, er, ec);
    if (sema_bind_label(C, rl, er, call->span, "the matrix's rows") < 0 ||
        sema_bind_label(C, cl, ec, call->span, "the matrix's columns") < 0 ||
        sema_bind_label(C, nw, en, call->span, "the new label of the results") < 0)
        return;
    for (int i = 0; i < st->ntargets; i++) {
        cst_target *t = &st->targets[i];
        const char *name = sema_tok_name(S, &t->name);
        sym *v = sema_lookup(S, name);
        if (!v || v->kind != SYM_TENSOR) {
            if (!v)
                sema_unknown_name(S, t->name.span, "tensor", name, 1u << SYM_TENSOR, t->nlabels);
            else
                diag_error(S->diag, t->name.span, "cannot assign to '%s', %s", name, sema_kind_word(v));
            return;
        }
        if (v->io == IO_IN) {
            diag_error(S->diag, t->name.span, "cannot write to '%s', an input tensor", name);
            return;
        }
        t->sym = v;
        int want[3], nwant = sema_multi_labels(call->la, i, rl, cl, nw, want);
        int ok = t->nlabels == nwant && v->rank == nwant;
        for (int k = 0; ok && k < nwant; k++) {
            int found = 0;
            for (int j = 0; j < t->nlabels; j++)
                found |= t->labels[j].label == want[k];
            ok = found;
        }
        if (!ok) {
            tx_buf b = {0};
            for (int k = 0; k < nwant; k++)
                buf_printf(&b, "%s%s", k ? "," : "", S->cst->label_names[want[k]]);
            diag_error(S->diag, t->span, "result %d of '%s' has the labels \"%s\" (in any order), and '%s' "
                       "must have as many modes", i + 1, fname, b.p ? b.p : "", name);
            buf_free(&b);
            return;
        }
        if (sema_check_target_labels(C, t, name, v) < 0)
            return;
        /* complex results (all but eigh's w and svd's s, which are real)
           go into complex tensors */
        dtype pt = sema_expr_dtype(call);
        if (dt_complex(pt) && !dt_complex(v->dt) && !(i == 1 && (kind == TK_EIGH || kind == TK_SVD))) {
            diag_error(S->diag, t->span, "result %d of '%s' is complex (%s), and '%s' is real (%s); declare '%s' %s",
                       i + 1, fname, dt_name(pt), name, dt_name(v->dt), name, dt_wide(v->dt) ? "c128" : "c64");
            return;
        }
        v->written = 1;
        v->last_write = C->stmt_no;
        if (dt_wide(v->dt))
            st->wide = 1;
    }
    if (dt_wide(sema_expr_dtype(call)))
        st->wide = 1;
    st->multi_new = nw;
    st->index = S->nassign++;
}

int sema_check_grad(checker *C, cst_node *n)
{
    sema_program *S = C->S;
    cst_stmt *st = C->stmt;
    const char *const *names = S->cst->label_names;
    n->la = LA_GRAD;
    if (n->args.n != 2) {
        diag_error(S->diag, n->span, "'grad' takes 2 arguments, not %d: grad(s, X(\"i,j\"))", n->args.n);
        return -1;
    }
    /* X: an in or inout tensor, its modes named by distinct labels */
    cst_node *x = n->args.v[1];
    if (x->kind != CST_REF && x->kind != CST_NAME) {
        diag_error(S->diag, x->span, "the second argument of 'grad' is the input it differentiates with "
                   "respect to, as X(\"i,j\") (or a bare scalar)");
        return -1;
    }
    const char *name = sema_tok_name(S, &x->name);
    sym *t = sema_lookup(S, name);
    if (!t) {
        sema_unknown_name(S, x->name.span, "tensor", name, 1u << SYM_TENSOR, x->kind == CST_REF ? x->nlabels : 0);
        return -1;
    }
    if (t->kind != SYM_TENSOR || (t->io != IO_IN && t->io != IO_INOUT)) {
        diag_error(S->diag, x->name.span, "'grad' differentiates with respect to an in or inout tensor; "
                   "'%s' is %s", name, sema_kind_word(t));
        return -1;
    }
    int nl = x->kind == CST_REF ? x->nlabels : 0;
    if (nl != t->rank) {
        diag_error(S->diag, x->span, "'%s' has %d mode%s; grad needs one label per mode, as %s(\"%s\")", name,
                   t->rank, t->rank == 1 ? "" : "s", name,
                   t->rank == 0 ? "" : t->rank == 1 ? "i" : t->rank == 2 ? "i,j" : "i,j,...");
        return -1;
    }
    for (int i = 0; i < nl; i++) {
        cst_label *l = &x->labels[i];
        if (l->label < 0) {
            diag_error(S->diag, l->span, "the labels of grad's '%s' name the modes of the result; an integer "
                       "(a chip) cannot be one", name);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (x->labels[j].label == l->label) {
                diag_error(S->diag, l->span, "label '%s' names two modes of the result of grad; use a label "
                           "per mode", names[l->label]);
                return -1;
            }
    }
    x->sym = t;
    /* s: in a scope of its own, like a linear-algebra argument */
    tx_extent *outer_ext = st->lab_ext;
    tx_span *outer_span = st->lab_span;
    labelset outer_bound = st->lab_bound;
    size_t nlab = (size_t)S->cst->nlabel_names + 1;
    st->lab_ext = arena_alloc(S->arena, sizeof(tx_extent) * nlab);
    st->lab_span = arena_alloc(S->arena, sizeof(tx_span) * nlab);
    memset(&st->lab_bound, 0, sizeof st->lab_bound);
    int deltas0 = C->ndeltas, scoped0 = C->scoped;
    C->scoped = 1;
    int r = sema_expect_expr_arg(C, n, 0);
    if (r == 0) /* a delta's labels: bound within the expression */
        r = sema_check_deltas_from(C, deltas0);
    C->scoped = scoped0;
    n->scope_ext = st->lab_ext;
    st->lab_ext = outer_ext;
    st->lab_span = outer_span;
    st->lab_bound = outer_bound;
    if (r < 0)
        return -1;
    if (dt_complex(sema_expr_dtype(n->args.v[0]))) {
        diag_error(S->diag, n->args.v[0]->span, "'grad' differentiates a real scalar; this expression is "
                   "complex (take real(...) or abs(...) of it)");
        return -1;
    }
    if (n->args.v[0]->is_number || !reads_a_tensor(n->args.v[0])) { /* 3, n * 2 */
        diag_error(S->diag, n->args.v[0]->span, "'grad' differentiates an expression that reads tensors; "
                   "this one is a number");
        return -1;
    }
    /* the result: X's modes, named by the labels written in the call */
    n->ncall_labels = 0;
    memset(&n->ls, 0, sizeof n->ls);
    n->is_number = 0;
    for (int i = 0; i < nl; i++) {
        int l = x->labels[i].label;
        n->call_labels[n->ncall_labels++] = l;
        if (sema_bind_label(C, l, t->ext[i], x->labels[i].span, "the result of grad") < 0)
            return -1;
        ls_add(&n->ls, l);
    }
    return 0;
}
