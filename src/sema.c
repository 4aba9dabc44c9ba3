/*
 * sema.c — the semantic pass: names, declarations, labels, extents and the
 * read/write rules of tx(5) §3–§4.
 *
 * It walks the statements in order, as they will run, so "read before it
 * is written" and "+= on a tensor not yet written" are decided by program
 * order. For each assignment it binds every label to one extent (a label
 * bound to two different extents is an error) and records the bindings on
 * the statement for lowering. Every error points at the exact span.
 *
 * Extent arithmetic is in sema_extent.c, the linear-algebra calls and the
 * statements with several targets in sema_linalg.c; sema.h is what the
 * three files share.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sema.h"
#include "parser.h"

static unsigned hash_name(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

sym *sema_lookup(sema_program *S, const char *name)
{
    for (sym *s = S->table[hash_name(name) & 255]; s; s = s->next)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

const char *sema_tok_name(sema_program *S, const tx_token *t)
{
    return arena_strndup(S->arena, t->z, t->n);
}

const char *sema_kind_word(const sym *s)
{
    switch (s->kind) {
    case SYM_DIM: return "a dim";
    case SYM_MAP: return "a sparse map";
    case SYM_LET: return "a let";
    case SYM_LET_TENSOR: return "a let tensor";
    case SYM_TENSOR:
        switch (s->io) {
        case IO_IN: return "an input tensor";
        case IO_OUT: return "an output tensor";
        case IO_INOUT: return "an inout tensor";
        default: return "a tmp tensor";
        }
    }
    return "a name";
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64)
        return 99;
    size_t d[65][65];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[n][m];
}

/* The closest declared name of a kind accepted by WANT (a bit mask of
   1 << sym_kind), for "did you mean". */
static const char *suggest(sema_program *S, const char *name, unsigned want)
{
    const char *best = NULL;
    size_t bestd = strlen(name) <= 2 ? 1 : 2;
    for (int h = 0; h < 256; h++)
        for (sym *s = S->table[h]; s; s = s->next) {
            if (!(want & (1u << s->kind)))
                continue;
            size_t d = edit_distance(name, s->name);
            if (d <= bestd && (!best || d < bestd || strcmp(s->name, best) < 0)) {
                best = s->name;
                bestd = d;
            }
        }
    return best;
}

/* Reports an unknown NAME used with RANK labels: a let defined further
   down, a near miss, or how to declare it. */
void sema_unknown_name(sema_program *S, tx_span span, const char *what, const char *name, unsigned want,
                       int rank)
{
    for (cst_stmt *st = S->cst->first; st; st = st->next)
        if ((st->kind == STMT_LET || st->kind == STMT_LET_TENSOR) && st->name.n == strlen(name) &&
            memcmp(st->name.z, name, st->name.n) == 0 && st->span.off > span.off) {
            diag_error(S->diag, span, "'%s' is used before its definition (line %u)", name, st->span.line);
            return;
        }
    const char *s = suggest(S, name, want);
    if (s) {
        diag_error(S->diag, span, "unknown %s '%s'; did you mean '%s'?", what, name, s);
        return;
    }
    static const char *shapes[] = {"", "[n]", "[n,m]", "[n,m,k]"};
    diag_error(S->diag, span, "unknown %s '%s'; declare it first (e.g. 'in %s%s;')", what, name, name,
               rank >= 0 && rank <= 3 ? shapes[rank] : "[n,...]");
}

static sym *declare(sema_program *S, sym_kind kind, const tx_token *name)
{
    const char *n = sema_tok_name(S, name);
    sym *old = sema_lookup(S, n);
    if (old) {
        diag_error(S->diag, name->span, "'%s' is already declared", n);
        diag_note(S->diag, old->span, "'%s' was declared here as %s", n, sema_kind_word(old));
        return NULL;
    }
    sym *s = arena_alloc(S->arena, sizeof *s);
    s->kind = kind;
    s->name = n;
    s->span = name->span;
    s->last_write = -1;
    s->index = -1;
    unsigned h = hash_name(n) & 255;
    s->next = S->table[h];
    S->table[h] = s;
    return s;
}

/* Grows an array of sym pointers geometrically (arena). */
static void add_sym(sema_program *S, sym ***arr, int *n, sym *s)
{
    if ((*n & (*n - 1)) == 0 || *n == 0) {
        int cap = *n ? *n * 2 : 1;
        sym **v = arena_alloc(S->arena, sizeof(sym *) * (size_t)cap);
        if (*n)
            memcpy(v, *arr, sizeof(sym *) * (size_t)*n);
        *arr = v;
    }
    (*arr)[(*n)++] = s;
}

sym *sema_hidden_tmp(sema_program *S, hidden_tmps *h, int k, const char *tag, tx_span span, dtype dt, int rank,
                     const tx_extent *ext)
{
    TX_ASSERT(k >= 0 && k <= h->n && rank >= 0 && rank <= TX_MAX_MODES);
    if (k < h->n) {
        sym *t = h->v[k];
        TX_ASSERT(t->rank == rank);
        return t;
    }
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 8;
        sym **v = arena_alloc(S->arena, sizeof(sym *) * (size_t)cap);
        if (h->n)
            memcpy(v, h->v, sizeof(sym *) * (size_t)h->n);
        h->v = v;
        h->cap = cap;
    }
    sym *t = arena_alloc(S->arena, sizeof *t);
    t->kind = SYM_TENSOR;
    t->name = arena_printf(S->arena, "%s#%d", tag, S->nvars); /* '#': no .tx name can be it */
    t->span = span;
    t->index = -1;
    t->io = IO_TMP;
    t->dt = dt;
    t->rank = rank;
    if (rank)
        memcpy(t->ext, ext, sizeof(tx_extent) * (size_t)rank);
    t->written = 1;
    t->last_write = -1;
    t->var = S->nvars;
    add_sym(S, &S->vars, &S->nvars, t);
    h->v[h->n++] = t;
    return t;
}

/* ---- declarations ---- */

static int parse_int(const tx_token *t, int64_t *out)
{
    int64_t v = 0;
    if (t->n == 0)
        return -1;
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->z[i] < '0' || t->z[i] > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (t->z[i] - '0');
    }
    *out = v;
    return 0;
}

static sym *new_dim(sema_program *S, const tx_token *name, const tx_token *value)
{
    sym *d = declare(S, SYM_DIM, name);
    if (!d)
        return NULL;
    if (value && value->kind) {
        if (parse_int(value, &d->value) < 0) {
            diag_error(S->diag, value->span, "a dim's value is a non-negative integer, not '%.*s'",
                       (int)value->n, value->z);
            return NULL;
        }
        d->is_const = 1;
    } else {
        d->index = S->nsym_dims;
        add_sym(S, &S->sym_dims, &S->nsym_dims, d);
    }
    add_sym(S, &S->dims, &S->ndims, d);
    d->var = S->ndims - 1; /* position in S->dims */
    return d;
}

static int extent_of(sema_program *S, cst_node *e, tx_extent *out);

/* An extent written as a dim expression (tx(5) DECLARATIONS): sums,
   differences and integer multiples of dims and integers. */
static int extent_expr(sema_program *S, cst_node *e, tx_extent *out)
{
    tx_extent a, b;
    if (extent_of(S, e->a, &a) < 0 || extent_of(S, e->b, &b) < 0)
        return -1;
    if (e->kind == CST_MUL) {
        if (a.dim != -1 && b.dim != -1) {
            diag_error(S->diag, e->span, "an extent may multiply a dim by an integer only, not by a dim");
            return -1;
        }
        tx_extent x = a.dim == -1 ? b : a;
        int64_t k = a.dim == -1 ? a.value : b.value;
        *out = sema_ext_scale(S, x, k);
    } else
        *out = sema_ext_add(S, a, b, e->kind == CST_ADD ? 1 : -1);
    if (out->dim == -3) {
        diag_error(S->diag, e->span, "this extent expression is too complex (at most 4 dims)");
        return -1;
    }
    if (e->kind == CST_SUB && a.dim == -1 && b.dim == -1 && a.value < b.value) {
        diag_error(S->diag, e->span, "this extent is negative (%lld)", (long long)(a.value - b.value));
        return -1;
    }
    return 0;
}

static int extent_of(sema_program *S, cst_node *e, tx_extent *out)
{
    if (e->kind != CST_EXTENT)
        return extent_expr(S, e, out);
    if (e->name.kind == TK_NUMBER) {
        if (parse_int(&e->name, &out->value) < 0) {
            diag_error(S->diag, e->span, "an extent is a dim name or a non-negative integer, not '%.*s'",
                       (int)e->name.n, e->name.z);
            return -1;
        }
        out->dim = -1;
        return 0;
    }
    const char *n = sema_tok_name(S, &e->name);
    sym *d = sema_lookup(S, n);
    if (!d)
        d = new_dim(S, &e->name, NULL); /* any name used as an extent is a symbolic dim */
    if (!d)
        return -1;
    if (d->kind != SYM_DIM) {
        diag_error(S->diag, e->span, "'%s' is %s, not a dim", n, sema_kind_word(d));
        return -1;
    }
    if (d->is_const) {
        out->dim = -1;
        out->value = d->value;
    } else {
        out->dim = d->var;
        out->value = 0;
    }
    return 0;
}

static void check_tensor_decl(sema_program *S, cst_stmt *st)
{
    if (st->extents.n > TX_MAX_MODES) {
        diag_error(S->diag, st->span, "tensor has %d modes; the limit is %d", st->extents.n, TX_MAX_MODES);
        return;
    }
    tx_extent ext[TX_MAX_MODES] = {{0, 0}};
    for (int i = 0; i < st->extents.n; i++)
        if (extent_of(S, st->extents.v[i], &ext[i]) < 0)
            return;
    sym *t = declare(S, SYM_TENSOR, &st->name);
    if (!t)
        return;
    t->rank = st->extents.n;
    memcpy(t->ext, ext, sizeof ext);
    t->dt = st->dtype_tok == TK_F32 ? DT_F32 : st->dtype_tok == TK_C64 ? DT_C64 :
            st->dtype_tok == TK_C128 ? DT_C128 : DT_F64;
    switch (st->io) {
    case TK_IN: t->io = IO_IN; break;
    case TK_OUT: t->io = IO_OUT; break;
    case TK_INOUT: t->io = IO_INOUT; break;
    default: t->io = IO_TMP; break;
    }
    t->written = t->io == IO_IN || t->io == IO_INOUT;
    if (t->io != IO_TMP) {
        t->index = S->ntensors;
        add_sym(S, &S->tensors, &S->ntensors, t);
    }
    t->var = S->nvars;
    add_sym(S, &S->vars, &S->nvars, t);
}

/* sparse NAME : "i,j" -> "a,b"; (tx(5) §7) */
static void check_sparse_decl(sema_program *S, cst_stmt *st)
{
    const char *const *names = S->cst->label_names;
    if (st->nmap_src == 0 || st->nmap_dst == 0) {
        diag_error(S->diag, st->nmap_src == 0 ? st->src_str.span : st->dst_str.span,
                   "a sparse map relates at least one source label to at least one target label");
        return;
    }
    for (int side = 0; side < 2; side++) {
        cst_label *ls = side ? st->map_dst : st->map_src;
        int n = side ? st->nmap_dst : st->nmap_src;
        for (int i = 0; i < n; i++) {
            if (ls[i].label < 0) {
                diag_error(S->diag, ls[i].span, "a sparse map relates labels; an integer cannot be one");
                return;
            }
            for (int j = 0; j < st->nmap_src; j++)
                if ((side || j < i) && st->map_src[j].label == ls[i].label) {
                    diag_error(S->diag, ls[i].span, "label '%s' appears twice in the sparse map", names[ls[i].label]);
                    return;
                }
            for (int j = 0; side && j < i; j++)
                if (st->map_dst[j].label == ls[i].label) {
                    diag_error(S->diag, ls[i].span, "label '%s' appears twice in the sparse map", names[ls[i].label]);
                    return;
                }
        }
    }
    sym *m = declare(S, SYM_MAP, &st->name);
    if (!m)
        return;
    m->nsrc = st->nmap_src;
    m->ndst = st->nmap_dst;
    for (int i = 0; i < m->nsrc; i++)
        m->src[i] = st->map_src[i].label;
    for (int i = 0; i < m->ndst; i++)
        m->dst[i] = st->map_dst[i].label;
    m->index = S->nmaps;
    add_sym(S, &S->maps, &S->nmaps, m);
}

/* The sparse maps whose labels all occur in statement ST apply to it; the
   first statement a map applies to fixes its extents, and every later one
   must agree. */
static void apply_maps(checker *C, cst_stmt *st)
{
    sema_program *S = C->S;
    for (int k = 0; k < S->nmaps; k++) {
        sym *m = S->maps[k];
        int all = 1;
        for (int i = 0; i < m->nsrc; i++)
            all &= ls_has(&st->lab_bound, m->src[i]);
        for (int i = 0; i < m->ndst; i++)
            all &= ls_has(&st->lab_bound, m->dst[i]);
        if (!all)
            continue;
        for (int side = 0; side < 2; side++)
            for (int i = 0; i < (side ? m->ndst : m->nsrc); i++) {
                int l = side ? m->dst[i] : m->src[i];
                tx_extent *me = side ? &m->dst_ext[i] : &m->src_ext[i];
                if (!m->map_used)
                    *me = st->lab_ext[l];
                else if (!ext_eq(*me, st->lab_ext[l])) {
                    char a[300], b[300];
                    sema_describe_extent(S, *me, a, sizeof a);
                    sema_describe_extent(S, st->lab_ext[l], b, sizeof b);
                    diag_error(S->diag, st->span, "sparse map '%s' relates label '%s' of extent %s here, but %s in "
                               "an earlier statement", m->name, S->cst->label_names[l], b, a);
                    return;
                }
            }
        m->map_used = 1;
        if (st->nmaps == 8) {
            diag_error(S->diag, st->span, "more than 8 sparse maps apply to this statement");
            return;
        }
        int *v = arena_alloc(S->arena, sizeof(int) * (size_t)(st->nmaps + 1));
        if (st->nmaps)
            memcpy(v, st->maps, sizeof(int) * (size_t)st->nmaps);
        v[st->nmaps++] = k;
        st->maps = v;
    }
}

/* ---- expressions ---- */

static void note_read(checker *C, int var)
{
    for (int i = 0; i < C->nreads; i++)
        if (C->reads[i] == var)
            return;
    if (C->nreads == C->capreads) {
        int cap = C->capreads ? C->capreads * 2 : 8;
        int *v = arena_alloc(C->S->arena, sizeof(int) * (size_t)cap);
        if (C->nreads)
            memcpy(v, C->reads, sizeof(int) * (size_t)C->nreads);
        C->reads = v;
        C->capreads = cap;
    }
    C->reads[C->nreads++] = var;
}

/* Binds LABEL to extent E in the statement; reports a conflict at SPAN. */
int sema_bind_label(checker *C, int label, tx_extent e, tx_span span, const char *where)
{
    cst_stmt *st = C->stmt;
    if (ls_has(&st->lab_bound, label)) {
        tx_extent old = st->lab_ext[label];
        int same = sema_ext_same(C->S, old, e);
        if (same < 0) { /* a derived extent: equal only if run time says so */
            char a[300], b[300], *msg;
            sema_describe_extent(C->S, old, a, sizeof a);
            sema_describe_extent(C->S, e, b, sizeof b);
            msg = arena_printf(C->S->arena, "%s:%u:%u: label '%s' has extent %s and %s (%s), which differ",
                               C->S->cst->src->name, span.line, span.col, C->S->cst->label_names[label], a, b,
                               where);
            sema_runtime_check(C->S, 0, old, e, msg);
            if (old.dim == EXT_DERIVED) /* keep the simpler one */
                st->lab_ext[label] = e;
            return 0;
        }
        if (!same) {
            char a[300], b[300];
            sema_describe_extent(C->S, old, a, sizeof a);
            sema_describe_extent(C->S, e, b, sizeof b);
            diag_error(C->S->diag, span, "label '%s' is bound to two different extents: %s and %s (%s)",
                       C->S->cst->label_names[label], a, b, where);
            if (st->lab_span[label].line)
                diag_note(C->S->diag, st->lab_span[label], "'%s' was bound to %s here",
                          C->S->cst->label_names[label], a);
            return -1;
        }
        return 0;
    }
    ls_add(&st->lab_bound, label);
    st->lab_ext[label] = e;
    st->lab_span[label] = span;
    return 0;
}

static int check_tensor_read(checker *C, sym *t, tx_span span)
{
    sema_program *S = C->S;
    if (t->kind == SYM_TENSOR && !t->written) {
        diag_error(S->diag, span, "'%s' is read before it is written", t->name);
        diag_note(S->diag, t->span, "'%s' is declared here as %s; write it with '=' first%s",
                  t->name, t->io == IO_OUT ? "out" : "tmp",
                  t->io == IO_OUT ? ", or declare it inout to pass it in" : "");
        return -1;
    }
    note_read(C, t->var);
    return 0;
}

/* Evaluates a compile-time number expression. */
double sema_eval_number(cst_node *n)
{
    switch (n->kind) {
    case CST_NUM: return n->num;
    case CST_NEG: return -sema_eval_number(n->a);
    case CST_ADD: return sema_eval_number(n->a) + sema_eval_number(n->b);
    case CST_SUB: return sema_eval_number(n->a) - sema_eval_number(n->b);
    case CST_MUL: return sema_eval_number(n->a) * sema_eval_number(n->b);
    case CST_DIV: return sema_eval_number(n->a) / sema_eval_number(n->b);
    case CST_POW: return n->num; /* folded when checked */
    case CST_LET: case CST_LETUSE: return sema_eval_number(n->a);
    case CST_CALL: return n->num; /* folded when checked */
    case CST_NAME: return n->num; /* a constant dim */
    default: return 0;
    }
}

static int check_let_use(checker *C, cst_node *n, tx_span use)
{
    /* A let was checked at its definition; merge its label bindings into
       this statement and make sure nothing it reads changed since. */
    sema_program *S = C->S;
    sym *l = n->sym;
    if (C->stmt == l->stmt)
        return 0; /* the definition itself */
    for (int id = 0; id < S->cst->nlabel_names; id++)
        if (ls_has(&n->ls, id) && ls_has(&l->stmt->lab_bound, id) && /* (a delta's may be unbound) */
            sema_bind_label(C, id, l->stmt->lab_ext[id], use, "through let") < 0) {
            diag_note(S->diag, l->stmt->lab_span[id], "let '%s' binds label '%s' here", l->name,
                      S->cst->label_names[id]);
            return -1;
        }
    for (int i = 0; l->reads && l->reads[i] >= 0; i++) {
        sym *v = S->vars[l->reads[i]];
        if (v->last_write > l->def_index) {
            diag_error(S->diag, use,
                       "let '%s' is used after '%s', which it reads, was written again",
                       l->name, v->name);
            diag_note(S->diag, l->span,
                      "a let is computed where it is defined; keep a copy with 'let T(\"...\") = ...' instead");
            return -1;
        }
        note_read(C, l->reads[i]);
    }
    return 0;
}

/* ---- "did you mean "i,j"?" for labels written without commas ---- */

/* Adds to *LS the labels of every indexed tensor under N except SKIP. */
static void refs_labels(cst_node *n, const cst_node *skip, labelset *ls)
{
    if (!n)
        return;
    if (n->kind == CST_REF && n != skip)
        for (int i = 0; i < n->nlabels; i++)
            if (n->labels[i].label >= 0)
                ls_add(ls, n->labels[i].label);
    if (n->kind == CST_LETUSE) {
        refs_labels(n->a->a, skip, ls);
        return;
    }
    refs_labels(n->a, skip, ls);
    refs_labels(n->b, skip, ls);
    for (int i = 0; i < n->args.n; i++)
        refs_labels(n->args.v[i], skip, ls);
}

/* The labels statement ST writes or reads, except at SKIP (a reference)
   or its target, if SKIP_TARGET. */
static labelset stmt_labels(const cst_stmt *st, const cst_node *skip, int skip_target)
{
    labelset ls = {{0}};
    for (int k = 0; !skip_target && k < st->ntargets; k++)
        for (int i = 0; i < st->targets[k].nlabels; i++)
            if (st->targets[k].labels[i].label >= 0)
                ls_add(&ls, st->targets[k].labels[i].label);
    refs_labels(st->kind == STMT_LET ? st->expr->a : st->expr, skip, &ls);
    return ls;
}

static int label_lookup(const cst_program *P, const char *s, size_t n)
{
    for (int i = 0; i < P->nlabel_names; i++)
        if (strlen(P->label_names[i]) == n && memcmp(P->label_names[i], s, n) == 0)
            return i;
    return -1;
}

/* If label L (one label written alone) reads as RANK one-letter labels
   with the commas left out, writes "i,j" into OUT and returns 1: when
   every letter is a label used elsewhere in the statement (OTHERS), or,
   with REQUIRE_ALL 0, when L itself is used nowhere else. */
static int comma_hint(const cst_program *P, int l, int rank, labelset others, int require_all, char *out,
                      size_t outlen)
{
    const char *name = P->label_names[l];
    size_t len = strlen(name), o = 0;
    int nch = 0, all = 1;
    if (rank < 2 || len + (size_t)rank >= outlen)
        return 0;
    for (size_t i = 0; i < len;) {
        size_t k = 1;
        while (i + k < len && ((unsigned char)name[i + k] & 0xC0) == 0x80)
            k++;
        size_t ll;
        if (lex_label(name + i, k, &ll) != 1 || ll != k)
            return 0; /* a digit, which would be a chip */
        int id = label_lookup(P, name + i, k);
        all &= id >= 0 && ls_has(&others, id);
        if (o)
            out[o++] = ',';
        memcpy(out + o, name + i, k);
        o += k;
        i += k;
        nch++;
    }
    out[o] = 0;
    if (nch != rank)
        return 0;
    return all || (!require_all && !ls_has(&others, l));
}

/* After an error in statement ST: a note on each label written like "ij"
   where "i,j" (labels of the statement) was likely meant. */
static void note_comma_hints_in(sema_program *S, const cst_stmt *st, cst_node *n)
{
    if (!n)
        return;
    if (n->kind == CST_REF && n->sym && n->nlabels == n->sym->rank)
        for (int i = 0; i < n->nlabels; i++) {
            char hint[2 * TX_MAX_NAME + 2];
            int l = n->labels[i].label;
            if (l >= 0 && comma_hint(S->cst, l, (int)strlen(S->cst->label_names[l]), stmt_labels(st, n, 0), 1,
                                     hint, sizeof hint))
                diag_note(S->diag, n->labels[i].span, "did you mean \"%s\"? labels are separated by commas",
                          hint);
        }
    if (n->kind == CST_LETUSE)
        return;
    note_comma_hints_in(S, st, n->a);
    note_comma_hints_in(S, st, n->b);
    for (int i = 0; i < n->args.n; i++)
        note_comma_hints_in(S, st, n->args.v[i]);
}

static void note_comma_hints(sema_program *S, const cst_stmt *st)
{
    if (st->kind == STMT_ASSIGN || st->kind == STMT_LET_TENSOR)
        note_comma_hints_in(S, st, st->expr);
}

/* The error for tensor NAME of RANK modes indexed with the N labels
   LABELS (written STR), with the comma hint if one applies. */
static void wrong_label_count(sema_program *S, const cst_stmt *st, const cst_node *ref, const char *name, int rank,
                              const cst_label *labels, int n, tx_span span)
{
    char hint[2 * TX_MAX_NAME + 2];
    if (n == 1 && labels[0].label >= 0 &&
        comma_hint(S->cst, labels[0].label, rank, stmt_labels(st, ref, ref == NULL), 0, hint, sizeof hint)) {
        diag_error(S->diag, span, "'%s' has %d modes but is indexed with 1 label; did you mean \"%s\"? "
                   "labels are separated by commas", name, rank, hint);
        return;
    }
    diag_error(S->diag, span, "'%s' has %d mode%s but is indexed with %d label%s", name,
               rank, rank == 1 ? "" : "s", n, n == 1 ? "" : "s");
}

/* delta("i,j,..."): the Kronecker delta, unless a tensor is called delta.
   Its labels' extents come from the rest of the statement (checked at its
   end, sema_check_deltas). */
static int check_delta(checker *C, cst_node *n)
{
    sema_program *S = C->S;
    if (n->nlabels < 2) {
        diag_error(S->diag, n->str.span, "delta takes two or more labels, as delta(\"i,j\")");
        return -1;
    }
    for (int i = 0; i < n->nlabels; i++) {
        if (n->labels[i].label < 0) {
            diag_error(S->diag, n->labels[i].span, "the labels of delta are names, not integers");
            return -1;
        }
        ls_add(&n->ls, n->labels[i].label);
    }
    n->fn = MAP_DELTA;
    if (C->ndeltas == C->capdeltas) {
        int cap = C->capdeltas ? 2 * C->capdeltas : 8;
        cst_node **v = arena_alloc(S->arena, sizeof *v * (size_t)cap);
        if (C->ndeltas)
            memcpy(v, C->deltas, sizeof *v * (size_t)C->ndeltas);
        C->deltas = v;
        C->capdeltas = cap;
    }
    C->deltas[C->ndeltas++] = n;
    return 0;
}

/* Adds the deltas under N (a bare let's tree) to the statement's: a bare
   let's labels get their extents in the statement that uses it. */
static void collect_deltas(checker *C, cst_node *n)
{
    if (!n || n->kind == CST_LETUSE)
        return;
    if (n->kind == CST_REF && n->fn == MAP_DELTA && !n->sym) {
        check_delta(C, n);
        return;
    }
    collect_deltas(C, n->a);
    collect_deltas(C, n->b);
    for (int i = 0; i < n->args.n; i++)
        collect_deltas(C, n->args.v[i]);
}

int sema_check_deltas_from(checker *C, int first)
{
    cst_stmt *st = C->stmt;
    for (int k = first; k < C->ndeltas; k++) {
        cst_node *n = C->deltas[k];
        for (int i = 0; i < n->nlabels; i++)
            if (!ls_has(&st->lab_bound, n->labels[i].label)) {
                diag_error(C->S->diag, n->labels[i].span, "the extent of label '%s' of delta cannot be inferred: "
                           "no tensor of the %s has it", C->S->cst->label_names[n->labels[i].label],
                           C->scoped ? "call's argument" : "statement");
                C->ndeltas = first;
                return -1;
            }
    }
    C->ndeltas = first;
    return 0;
}

static int check_ref(checker *C, cst_node *n)
{
    sema_program *S = C->S;
    const char *name = sema_tok_name(S, &n->name);
    sym *t = sema_lookup(S, name);
    if (!t && strcmp(name, "delta") == 0)
        return check_delta(C, n);
    if (!t) {
        sema_unknown_name(S, n->name.span, "tensor", name, 1u << SYM_TENSOR | 1u << SYM_LET_TENSOR, n->nlabels);
        return -1;
    }
    if (t->kind == SYM_LET) {
        diag_error(S->diag, n->span, "'%s' is a let expression with fixed labels; use it bare, as '%s'",
                   name, name);
        return -1;
    }
    if (t->kind != SYM_TENSOR && t->kind != SYM_LET_TENSOR) {
        diag_error(S->diag, n->name.span, "'%s' is %s, not a tensor", name, sema_kind_word(t));
        return -1;
    }
    if (t->failed)
        return -1; /* its definition's error was reported */
    n->sym = t;
    if (n->nlabels != t->rank) {
        wrong_label_count(S, C->stmt, n, name, t->rank, n->labels, n->nlabels, n->str.span);
        return -1;
    }
    if (check_tensor_read(C, t, n->name.span) < 0)
        return -1;
    for (int i = 0; i < n->nlabels; i++) {
        cst_label *l = &n->labels[i];
        if (l->label < 0) {
            /* a constant extent now; a dim's or a dim expression's when the program runs */
            if (t->ext[i].dim == -1 && l->chip >= t->ext[i].value) {
                diag_error(S->diag, l->span, "index %lld is out of range for mode %d of '%s' (extent %lld: "
                           "indices 0 to %lld)", (long long)l->chip, i, name, (long long)t->ext[i].value,
                           (long long)t->ext[i].value - 1);
                return -1;
            }
            continue;
        }
        char where[400];
        snprintf(where, sizeof where, "mode %d of '%s'", i, name);
        if (sema_bind_label(C, l->label, t->ext[i], l->span, where) < 0)
            return -1;
        ls_add(&n->ls, l->label);
    }
    return 0;
}

/* An argument that must be an expression (not an operator, string or list). */
int sema_expect_expr_arg(checker *C, cst_node *call, int i)
{
    cst_node *a = call->args.v[i];
    if (a->kind == CST_ARG_OP || a->kind == CST_ARG_STR || a->kind == CST_ARG_LIST) {
        diag_error(C->S->diag, a->span, "argument %d of '%.*s' must be an expression", i + 1,
                   (int)call->name.n, call->name.z);
        return -1;
    }
    return sema_check_expr(C, a);
}

/* Complex numbers have no order (tx(5) §4.2): an error at X if it is
   complex, WHAT being the operation that needs an order. */
static int reject_complex(sema_program *S, cst_node *x, const char *what)
{
    dtype t = sema_expr_dtype(x);
    if (!dt_complex(t))
        return 0;
    if (strcmp(what, "<") == 0 || strcmp(what, "<=") == 0 || strcmp(what, ">") == 0 || strcmp(what, ">=") == 0 ||
        strcmp(what, "==") == 0 || strcmp(what, "!=") == 0)
        diag_error(S->diag, x->span, "this operand of '%s' is complex (%s), and complex numbers have no order; "
                   "compare real(...), imag(...) or abs(...)", what, dt_name(t));
    else
        diag_error(S->diag, x->span, "%s%s%s needs a real operand, and this one is complex (%s); "
                   "use real(...), imag(...) or abs(...)", what[0] == 't' ? "" : "'", what, what[0] == 't' ? "" : "'",
                   dt_name(t));
    return -1;
}

static double fold_map(int fn, double x, double y, double z)
{
    switch (fn) {
    case MAP_LT: return x < y;
    case MAP_LE: return x <= y;
    case MAP_GT: return x > y;
    case MAP_GE: return x >= y;
    case MAP_EQ: return x == y;
    case MAP_NE: return x != y;
    case MAP_WHERE: return x != 0 ? y : z;
    case MAP_EXP: return exp(x);
    case MAP_LOG: return log(x);
    case MAP_SQRT: return sqrt(x);
    case MAP_ABS: return fabs(x);
    case MAP_SIN: return sin(x);
    case MAP_COS: return cos(x);
    case MAP_TANH: return tanh(x);
    case MAP_MAX: return x > y || x != x ? x : y;
    case MAP_MIN: return x < y || x != x ? x : y;
    case MAP_CONJ: case MAP_REAL: return x; /* numbers are real */
    case MAP_IMAG: return 0;
    }
    return x;
}


/* Elementwise functions, max/min, reduce, scan, and the linear-algebra
   calls (tx(5) §6). */
static int check_call(checker *C, cst_node *n)
{
    sema_program *S = C->S;
    int nargs = n->args.n, want = 0;
    const char *fname = arena_strndup(S->arena, n->name.z, n->name.n);
    switch (n->name.kind) {
    case TK_EXP: n->fn = MAP_EXP; want = 1; break;
    case TK_LOG: n->fn = MAP_LOG; want = 1; break;
    case TK_SQRT: n->fn = MAP_SQRT; want = 1; break;
    case TK_ABS: n->fn = MAP_ABS; want = 1; break;
    case TK_SIN: n->fn = MAP_SIN; want = 1; break;
    case TK_COS: n->fn = MAP_COS; want = 1; break;
    case TK_TANH: n->fn = MAP_TANH; want = 1; break;
    case TK_CONJ: n->fn = MAP_CONJ; want = 1; break;
    case TK_REAL: n->fn = MAP_REAL; want = 1; break;
    case TK_IMAG: n->fn = MAP_IMAG; want = 1; break;
    case TK_MAX: n->fn = MAP_MAX; want = 2; break;
    case TK_MIN: n->fn = MAP_MIN; want = 2; break;
    case TK_LT: n->fn = MAP_LT; want = 2; break;
    case TK_LE: n->fn = MAP_LE; want = 2; break;
    case TK_GT: n->fn = MAP_GT; want = 2; break;
    case TK_GE: n->fn = MAP_GE; want = 2; break;
    case TK_EQEQ: n->fn = MAP_EQ; want = 2; break;
    case TK_NE: n->fn = MAP_NE; want = 2; break;
    case TK_WHERE: n->fn = MAP_WHERE; want = 3; break;
    case TK_REDUCE: want = 2; break;
    case TK_SCAN: case TK_SCANR: want = 3; break;
    case TK_GRAD:
        return sema_check_grad(C, n);
    default:
        return sema_check_la_call(C, n, fname, C->multi_call == n);
    }
    if (nargs != want) {
        static const char *forms[] = {"", "%s(x)", "%s(x, y)", "%s(op, x, \"k\")"};
        char form[64];
        snprintf(form, sizeof form, n->name.kind == TK_REDUCE ? "%s(op, x)" : n->name.kind == TK_WHERE ?
                 "%s(c, a, b)" : forms[want], fname);
        diag_error(S->diag, n->span, "'%s' takes %d argument%s, not %d: %s", fname, want,
                   want == 1 ? "" : "s", nargs, form);
        return -1;
    }
    if (n->fn) { /* elementwise: transparent to labels */
        for (int i = 0; i < nargs; i++)
            if (sema_expect_expr_arg(C, n, i) < 0)
                return -1;
        n->ls = n->args.v[0]->ls;
        n->is_number = n->args.v[0]->is_number;
        for (int i = 1; i < nargs; i++) {
            n->ls = ls_union(n->ls, n->args.v[i]->ls);
            n->is_number = n->is_number && n->args.v[i]->is_number;
        }
        if (n->fn == MAP_MAX || n->fn == MAP_MIN || (n->fn >= MAP_LT && n->fn <= MAP_NE) || n->fn == MAP_WHERE)
            for (int i = 0; i < (n->fn == MAP_WHERE ? 1 : nargs); i++)
                if (reject_complex(S, n->args.v[i], n->fn == MAP_WHERE ? "the condition of 'where'" : fname) < 0)
                    return -1;
        if (n->is_number)
            n->num = fold_map(n->fn, sema_eval_number(n->args.v[0]), nargs >= 2 ? sema_eval_number(n->args.v[1]) : 0,
                              nargs == 3 ? sema_eval_number(n->args.v[2]) : 0);
        return 0;
    }
    cst_node *op = n->args.v[0];
    if (op->kind != CST_ARG_OP) {
        diag_error(S->diag, op->span, "the first argument of '%s' is its operator: + * max or min", fname);
        return -1;
    }
    switch (op->name.kind) {
    case TK_MINUS: case TK_SLASH:
        diag_error(S->diag, op->span, "'%.*s' is not an operator '%s' can use; use + * max or min",
                   (int)op->name.n, op->name.z, fname);
        return -1;
    case TK_PLUS: op->fn = RED_ADD; break;
    case TK_STAR: op->fn = RED_MUL; break;
    case TK_MAX: op->fn = RED_MAX; break;
    default: op->fn = RED_MIN; break;
    }
    if (sema_expect_expr_arg(C, n, 1) < 0)
        return -1;
    cst_node *x = n->args.v[1];
    if (op->fn == RED_MAX || op->fn == RED_MIN) {
        char what[64];
        snprintf(what, sizeof what, "%s(%s, ...)", fname, op->fn == RED_MAX ? "max" : "min");
        if (reject_complex(S, x, what) < 0)
            return -1;
    }
    n->ls = x->ls;
    n->is_number = x->is_number;
    n->num = x->num;
    if (n->name.kind == TK_REDUCE)
        return 0;
    cst_node *k = n->args.v[2];
    if (k->kind != CST_ARG_STR || k->nlabels != 1 || k->labels[0].label < 0) {
        diag_error(S->diag, k->span, "the third argument of '%s' is the one label to scan along, e.g. \"k\"",
                   fname);
        return -1;
    }
    if (!ls_has(&x->ls, k->labels[0].label)) {
        diag_error(S->diag, k->labels[0].span, "'%s' scans along label '%s', which its argument does not have",
                   fname, S->cst->label_names[k->labels[0].label]);
        return -1;
    }
    n->scan_label = k->labels[0].label;
    return 0;
}

int sema_check_expr(checker *C, cst_node *n)
{
    sema_program *S = C->S;
    switch (n->kind) {
    case CST_NUM:
        return 0;
    case CST_REF:
        return check_ref(C, n);
    case CST_NAME: {
        const char *name = sema_tok_name(S, &n->name);
        sym *t = sema_lookup(S, name);
        if (!t) {
            sema_unknown_name(S, n->span, "name", name,
                              1u << SYM_TENSOR | 1u << SYM_LET_TENSOR | 1u << SYM_LET, 0);
            return -1;
        }
        if (t->kind == SYM_LET) { /* defined later than this use */
            diag_error(S->diag, n->span, "let '%s' is used before it is defined", name);
            return -1;
        }
        if (t->kind == SYM_DIM) { /* its extent, as a number */
            n->sym = t;
            if (t->is_const) {
                n->is_number = 1;
                n->num = (double)t->value;
            }
            return 0;
        }
        if (t->kind != SYM_TENSOR && t->kind != SYM_LET_TENSOR) {
            diag_error(S->diag, n->span, "'%s' is %s; only tensors, dims and numbers can be used in expressions",
                       name, sema_kind_word(t));
            return -1;
        }
        if (t->failed)
            return -1; /* its definition's error was reported */
        if (t->rank != 0) {
            diag_error(S->diag, n->span, "'%s' has %d mode%s; index it, e.g. %s(\"%s\")", name, t->rank,
                       t->rank == 1 ? "" : "s", name, t->rank == 1 ? "i" : t->rank == 2 ? "i,j" : "i,j,...");
            return -1;
        }
        n->sym = t;
        return check_tensor_read(C, t, n->span);
    }
    case CST_LETUSE:
        if (!n->a->sym || n->a->sym->failed)
            return -1; /* its definition failed and was reported */
        if (check_let_use(C, n->a, n->span) < 0)
            return -1;
        collect_deltas(C, n->a->a);
        n->ls = n->a->ls;
        n->num = n->a->num;
        return 0;
    case CST_NEG:
        if (sema_check_expr(C, n->a) < 0)
            return -1;
        n->ls = n->a->ls;
        if (n->is_number)
            n->num = sema_eval_number(n);
        return 0;
    case CST_ADD: case CST_SUB: case CST_MUL: case CST_DIV:
        if (sema_check_expr(C, n->a) < 0 || sema_check_expr(C, n->b) < 0)
            return -1;
        n->ls = ls_union(n->a->ls, n->b->ls);
        if (n->is_number)
            n->num = sema_eval_number(n);
        return 0;
    case CST_POW:
        if (sema_check_expr(C, n->a) < 0 || sema_check_expr(C, n->b) < 0)
            return -1;
        if (!n->b->is_number) {
            diag_error(S->diag, n->b->span, "the exponent of '^' must be a %snumber%s",
                       dt_complex(sema_expr_dtype(n->b)) ? "real " : "",
                       dt_complex(sema_expr_dtype(n->b)) ? " (a complex power is exp(p * log(x)))" : "");
            return -1;
        }
        n->num = sema_eval_number(n->b);
        if (n->a->is_number) {
            /* folded at compile time, as numpy would: any real exponent */
            double base = sema_eval_number(n->a), r = pow(base, n->num);
            if (!isfinite(r)) {
                diag_error(S->diag, n->span, "%g raised to the power %g is not a finite real number", base, n->num);
                return -1;
            }
            n->num = r;
            n->kind = CST_NUM; /* fold: the node is a number now */
            n->is_number = 1;
            return 0;
        }
        n->ls = n->a->ls;
        return 0;
    case CST_CALL:
        return check_call(C, n);
    default:
        diag_error(S->diag, n->span, "this is not an expression");
        return -1;
    }
}

/* An imaginary literal's type while an expression's type is worked out:
   complex of no precision of its own (numpy's weak Python complex), c64
   beside f32 or c64 values, c128 beside f64 or c128 ones or alone. */
#define DT_WEAK_COMPLEX ((dtype)(DT_C128 + 1))

static dtype join_weak(dtype a, dtype b)
{
    if (b == DT_WEAK_COMPLEX) {
        dtype t = a;
        a = b;
        b = t;
    }
    if (a != DT_WEAK_COMPLEX)
        return dt_join(a, b);
    if (!b || b == DT_WEAK_COMPLEX)
        return DT_WEAK_COMPLEX;
    return dt_wide(b) ? DT_C128 : DT_C64;
}

static dtype expr_dtype(cst_node *n)
{
    switch (n->kind) {
    case CST_NUM: /* a number takes the type of what it meets; 2i makes it complex */
        return n->imag ? DT_WEAK_COMPLEX : 0;
    case CST_REF: case CST_NAME: /* a dim or a delta is a number: no type of its own */
        return n->sym ? (n->sym->kind == SYM_DIM ? 0 : n->sym->dt) : n->fn == MAP_DELTA ? 0 : DT_F64;
    case CST_LET: case CST_LETUSE: case CST_NEG: return expr_dtype(n->a);
    case CST_POW: return expr_dtype(n->a);
    case CST_ADD: case CST_SUB: case CST_MUL: case CST_DIV:
        return join_weak(expr_dtype(n->a), expr_dtype(n->b));
    case CST_CALL: {
        dtype t = 0;
        for (int i = 0; i < n->args.n; i++)
            if (n->args.v[i]->kind != CST_ARG_OP && n->args.v[i]->kind != CST_ARG_STR &&
                n->args.v[i]->kind != CST_ARG_LIST)
                t = join_weak(t, expr_dtype(n->args.v[i]));
        if (n->fn == MAP_REAL || n->fn == MAP_IMAG || n->fn == MAP_ABS || (n->fn >= MAP_LT && n->fn <= MAP_NE))
            return t == DT_WEAK_COMPLEX ? 0 : dt_real(t); /* a real part, a modulus, a truth value */
        return t;
    }
    default: return DT_F64;
    }
}

/* The element type an expression computes in: f32 only if every tensor it
   reads is f32; complex if a tensor it reads is or an imaginary literal
   meets it, unless real, imag or abs takes it back to the reals (numpy's
   promotion, tx(5) ELEMENT TYPES); 0 if it reads no tensor and is real
   (a number: the type of what it meets). Complex numbers alone are c128,
   as real ones alone are f64. */
dtype sema_expr_dtype(cst_node *n)
{
    dtype t = expr_dtype(n);
    return t == DT_WEAK_COMPLEX ? DT_C128 : t;
}

static void stmt_begin(checker *C, cst_stmt *st)
{
    C->stmt = st;
    C->nreads = 0;
    C->ndeltas = 0;
    st->lab_ext = arena_alloc(C->S->arena, sizeof(tx_extent) * (size_t)(C->S->cst->nlabel_names + 1));
    st->lab_span = arena_alloc(C->S->arena, sizeof(tx_span) * (size_t)(C->S->cst->nlabel_names + 1));
}

/* Checks the labels of a target against its tensor: count, no chips, no
   repeats; binds them to the tensor's extents. LABELS_FROM_EXPR: the
   extents come from the expression (let tensors) instead. */
int sema_check_target_labels(checker *C, cst_target *t, const char *name, sym *tensor)
{
    sema_program *S = C->S;
    for (int i = 0; i < t->nlabels; i++) {
        cst_label *l = &t->labels[i];
        if (l->label < 0) {
            diag_error(S->diag, l->span, "an integer label cannot be written to; a target names every mode "
                       "with a label");
            return -1;
        }
        int repeat = 0;
        for (int j = 0; j < i && !repeat; j++)
            if (t->labels[j].label == l->label) {
                repeat = 1;
                if (!tensor || C->stmt->kind != STMT_ASSIGN) {
                    diag_error(S->diag, l->span, "label '%s' is repeated in the target of '%s'",
                               S->cst->label_names[l->label], name);
                    return -1;
                }
                /* the diagonal: the modes it joins have one extent */
                if (sema_ext_same(S, tensor->ext[j], tensor->ext[i]) != 1) {
                    char a[300], b[300];
                    sema_describe_extent(S, tensor->ext[j], a, sizeof a);
                    sema_describe_extent(S, tensor->ext[i], b, sizeof b);
                    diag_error(S->diag, l->span, "label '%s' is repeated in the target of '%s', whose modes %d "
                               "and %d have different extents (%s and %s)", S->cst->label_names[l->label], name,
                               j, i, a, b);
                    return -1;
                }
            }
        if (repeat)
            continue;
        ls_add(&C->stmt->target_ls, l->label);
        if (tensor) {
            cst_stmt *st = C->stmt;
            int same = ls_has(&st->lab_bound, l->label) ? sema_ext_same(S, st->lab_ext[l->label], tensor->ext[i]) : 1;
            char a[300], b[300];
            if (same != 1) {
                sema_describe_extent(S, st->lab_ext[l->label], a, sizeof a);
                sema_describe_extent(S, tensor->ext[i], b, sizeof b);
            }
            if (same < 0) { /* derived: known at run time */
                sema_runtime_check(S, 0, st->lab_ext[l->label], tensor->ext[i],
                                   arena_printf(S->arena, "%s:%u:%u: label '%s' has extent %s, but mode %d of "
                                                "'%s' has extent %s", S->cst->src->name, l->span.line,
                                                l->span.col, S->cst->label_names[l->label], a, i, name, b));
                st->lab_ext[l->label] = tensor->ext[i];
            } else if (!same) {
                diag_error(S->diag, l->span,
                           "label '%s' has extent %s on the right-hand side, but mode %d of '%s' has extent %s",
                           S->cst->label_names[l->label], a, i, name, b);
                return -1;
            }
        }
    }
    return 0;
}

/* Every label of the target must occur on the right (unless it is a number). */
static int check_target_covered(checker *C, cst_target *t, cst_node *e)
{
    if (e->is_number || (e->kind == CST_NUM && e->imag)) /* a fill */
        return 0;
    for (int i = 0; i < t->nlabels; i++)
        if (t->labels[i].label >= 0 && !ls_has(&e->ls, t->labels[i].label)) {
            diag_error(C->S->diag, t->labels[i].span,
                       "label '%s' of the target does not appear on the right-hand side",
                       C->S->cst->label_names[t->labels[i].label]);
            return -1;
        }
    return 0;
}

static void check_assign(checker *C, cst_stmt *st)
{
    sema_program *S = C->S;
    cst_target *t = &st->targets[0];
    const char *name = sema_tok_name(S, &t->name);
    sym *v = sema_lookup(S, name);
    if (!v) {
        sema_unknown_name(S, t->name.span, "tensor", name, 1u << SYM_TENSOR, t->nlabels);
        return;
    }
    if (v->kind != SYM_TENSOR) {
        diag_error(S->diag, t->name.span, "cannot assign to '%s', %s", name, sema_kind_word(v));
        return;
    }
    t->sym = v;
    if (v->io == IO_IN) {
        diag_error(S->diag, t->name.span, "cannot write to '%s', an input tensor", name);
        diag_note(S->diag, v->span, "declared 'in' here; declare it 'inout' to update it in place");
        return;
    }
    if (!t->has_idx && v->rank != 0) {
        diag_error(S->diag, t->name.span, "'%s' has %d mode%s; name them in the target, e.g. %s(\"%s\")",
                   name, v->rank, v->rank == 1 ? "" : "s", name, v->rank == 1 ? "i" : "i,j");
        return;
    }
    if (t->nlabels != v->rank) {
        wrong_label_count(S, st, NULL, name, v->rank, t->labels, t->nlabels, t->str.span);
        return;
    }
    /* after an error in this statement the target still counts as
       written, so one mistake does not cascade into "read before it is
       written" at every later use */
    if (st->op != TK_EQ && !v->written) {
        diag_error(S->diag, st->op_span, "'%.*s' on '%s', which has not been written yet",
                   (int)st->op_span.len, S->cst->src->text + st->op_span.off, name);
        diag_note(S->diag, v->span, "assign it with '=' first, or declare it inout to pass it in");
        v->written = 1;
        return;
    }
    if (sema_check_expr(C, st->expr) < 0 || sema_check_target_labels(C, t, name, v) < 0 ||
        check_target_covered(C, t, st->expr) < 0) {
        v->written = 1;
        return;
    }
    /* target labels that only the target has take the tensor's extents */
    for (int i = 0; i < t->nlabels; i++)
        if (!ls_has(&st->lab_bound, t->labels[i].label)) {
            ls_add(&st->lab_bound, t->labels[i].label);
            st->lab_ext[t->labels[i].label] = v->ext[i];
        }
    if (t->fresh) { /* a write to the diagonal keeps the other entries */
        if (!v->written) {
            diag_error(S->diag, t->str.span, "'%s' with a repeated label writes only the diagonal of '%s', "
                       "which has not been written yet", name, name);
            diag_note(S->diag, v->span, "assign it with '=' first, or declare it inout to pass it in");
            v->written = 1;
            return;
        }
        for (int i = 0; i < t->nlabels; i++) {
            ls_add(&st->lab_bound, t->fresh[i]);
            st->lab_ext[t->fresh[i]] = v->ext[i];
        }
    }
    v->written = 1;
    v->last_write = C->stmt_no;
    dtype et = sema_expr_dtype(st->expr);
    if (dt_complex(et) && !dt_complex(v->dt)) {
        diag_error(S->diag, st->expr->span, "this value is complex (%s), and '%s' is real (%s); store real(...), "
                   "imag(...) or abs(...) of it, or declare '%s' %s", dt_name(et), name, dt_name(v->dt), name,
                   dt_wide(v->dt) ? "c128" : "c64");
        diag_note(S->diag, v->span, "'%s' is declared here", name);
        return;
    }
    st->wide = dt_wide(v->dt) || dt_wide(et);
    st->index = S->nassign++;
}


static void check_let(checker *C, cst_stmt *st)
{
    sema_program *S = C->S;
    sym *l = declare(S, SYM_LET, &st->name);
    if (!l)
        return;
    cst_node *n = st->expr; /* the CST_LET node */
    l->let_node = n;
    l->stmt = st;
    l->def_index = C->stmt_no;
    n->sym = l;
    if (sema_check_expr(C, n->a) < 0) {
        l->failed = 1;
        return;
    }
    n->ls = n->a->ls;
    if (n->is_number)
        n->num = n->a->num;
    int *reads = arena_alloc(S->arena, sizeof(int) * (size_t)(C->nreads + 1));
    if (C->nreads)
        memcpy(reads, C->reads, sizeof(int) * (size_t)C->nreads);
    reads[C->nreads] = -1;
    l->reads = reads;
}

static void check_let_tensor(checker *C, cst_stmt *st)
{
    sema_program *S = C->S;
    cst_target *t = &st->targets[0];
    const char *name = sema_tok_name(S, &st->name);
    int failed = sema_check_expr(C, st->expr) < 0 ||
                 sema_check_target_labels(C, t, name, NULL) < 0 || check_target_covered(C, t, st->expr) < 0;
    if (!failed && st->expr->is_number && t->nlabels > 0) {
        diag_error(S->diag, t->span, "the extents of let tensor '%s' cannot be inferred from a number; "
                   "declare it 'tmp %s[...]' and assign it", name, name);
        failed = 1;
    }
    if (failed) {
        /* declared all the same, so its uses do not each report it unknown */
        sym *v = sema_lookup(S, name) ? NULL : declare(S, SYM_LET_TENSOR, &st->name);
        if (v) {
            v->io = IO_LET;
            v->rank = t->nlabels;
            v->failed = v->written = 1;
        }
        return;
    }
    sym *v = declare(S, SYM_LET_TENSOR, &st->name);
    if (!v)
        return;
    v->io = IO_LET;
    v->rank = t->nlabels;
    for (int i = 0; i < t->nlabels; i++)
        v->ext[i] = st->lab_ext[t->labels[i].label];
    dtype dt = sema_expr_dtype(st->expr);
    v->dt = dt ? dt : DT_F64; /* f32 only when everything it reads is f32 */
    st->wide = dt_wide(v->dt);
    v->written = 1;
    v->last_write = C->stmt_no;
    v->stmt = st;
    t->sym = v;
    v->var = S->nvars;
    add_sym(S, &S->vars, &S->nvars, v);
    st->index = S->nassign++;
}

sema_program *sema_check(cst_program *cst, tx_arena *a, tx_diag *d)
{
    sema_program *S = arena_alloc(a, sizeof *S);
    S->cst = cst;
    S->arena = a;
    S->diag = d;
    checker C = {.S = S};
    int errors_before = d->nerrors, decl_errors = 0;
    for (cst_stmt *st = cst->first; st; st = st->next) {
        int before = d->nerrors;
        /* statements after a failed declaration would only report its
           consequences: check declarations alone from then on */
        if (decl_errors && st->kind != STMT_DIM && st->kind != STMT_TENSOR && st->kind != STMT_SPARSE)
            continue;
        switch (st->kind) {
        case STMT_DIM:
            new_dim(S, &st->name, &st->value);
            break;
        case STMT_TENSOR:
            check_tensor_decl(S, st);
            break;
        case STMT_SPARSE:
            check_sparse_decl(S, st);
            break;
        case STMT_ASSIGN:
            stmt_begin(&C, st);
            check_assign(&C, st);
            C.stmt_no++;
            break;
        case STMT_LET:
            stmt_begin(&C, st);
            check_let(&C, st);
            C.stmt_no++;
            break;
        case STMT_LET_TENSOR:
            stmt_begin(&C, st);
            check_let_tensor(&C, st);
            C.stmt_no++;
            break;
        case STMT_MULTI:
            stmt_begin(&C, st);
            sema_check_multi(&C, st);
            /* count the targets as written, so one error does not cascade
               into "read before it is written" at every later use */
            for (int i = 0; i < st->ntargets; i++) {
                sym *t = sema_lookup(S, sema_tok_name(S, &st->targets[i].name));
                if (t && t->kind == SYM_TENSOR)
                    t->written = 1;
            }
            C.stmt_no++;
            break;
        }
        if (d->nerrors == before && (st->kind == STMT_ASSIGN || st->kind == STMT_LET_TENSOR))
            sema_check_deltas_from(&C, 0);
        if (d->nerrors > before)
            note_comma_hints(S, st);
        if (d->nerrors > before && (st->kind == STMT_DIM || st->kind == STMT_TENSOR))
            decl_errors = 1;
        if (d->nerrors > before && d->nerrors >= 50) {
            diag_error(d, st->span, "too many errors; stopping");
            break;
        }
    }
    /* a map is declared for the whole program: it applies to every
       statement that uses all of its labels, before or after it */
    for (cst_stmt *st = cst->first; st && d->nerrors == errors_before; st = st->next)
        if ((st->kind == STMT_ASSIGN || st->kind == STMT_LET_TENSOR || st->kind == STMT_MULTI) && st->lab_ext) {
            C.stmt = st;
            apply_maps(&C, st);
        }
    for (int k = 0; d->nerrors == errors_before && k < S->nmaps; k++)
        if (!S->maps[k]->map_used)
            diag_error(d, S->maps[k]->span, "sparse map '%s' applies to no statement: no statement uses all of "
                       "its labels", S->maps[k]->name);
    if (d->nerrors == errors_before)
        for (int i = 0; i < S->ntensors; i++) {
            sym *t = S->tensors[i];
            if (t->io == IO_OUT && !t->written)
                diag_error(d, t->span, "output '%s' is never written", t->name);
        }
    return d->nerrors > errors_before ? NULL : S;
}
