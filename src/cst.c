/*
 * cst.c — building the concrete syntax tree. The grammar's actions call
 * these functions, one per rule.
 *
 * The tree is a DAG: `let x = e;` makes one CST_LET node, and every later
 * use of the bare name `x` (a CST_LETUSE, which keeps the use's location)
 * points at that same node (TensorWrapper's reusable
 * intermediates), so "computed once, shared" is visible in the structure
 * itself. Index strings are split into labels here, with a span for each,
 * so later phases can point at a single label.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"
#include "parser.h"

static tx_span tok_span(const tx_token *t) { return t->span; }

static cst_node *node_new(cst_program *P, cst_kind k, tx_span span)
{
    cst_node *n = arena_alloc(P->arena, sizeof *n);
    n->kind = k;
    n->span = span;
    n->depth = 1;
    return n;
}

static void set_depth(cst_program *P, cst_node *n)
{
    int d = 0;
    if (n->a && n->a->depth > d)
        d = n->a->depth;
    if (n->b && n->b->depth > d)
        d = n->b->depth;
    for (int i = 0; i < n->args.n; i++)
        if (n->args.v[i]->depth > d)
            d = n->args.v[i]->depth;
    n->depth = d + 1;
    if (n->depth > TX_MAX_DEPTH && !P->failed) {
        P->failed = 1;
        diag_error(P->diag, n->span, "expression too deeply nested or too long (the limit is %d levels; "
                   "split it with let)", TX_MAX_DEPTH);
    }
}

int cst_label_id(cst_program *P, const char *s, size_t n)
{
    for (int i = 0; i < P->nlabel_names; i++)
        if (strlen(P->label_names[i]) == n && memcmp(P->label_names[i], s, n) == 0)
            return i;
    if (P->nlabel_names >= TX_MAX_LABELS)
        return -1;
    P->label_names[P->nlabel_names] = arena_strndup(P->arena, s, n);
    return P->nlabel_names++;
}

/* The span of bytes [i, i+len) inside string token T (same line). */
static tx_span sub_span(const tx_token *t, size_t i, size_t len)
{
    tx_span s = t->span;
    s.off += (uint32_t)i;
    s.len = (uint32_t)len;
    for (size_t k = 0; k < i; k++)
        if (((unsigned char)t->z[k] & 0xC0) != 0x80)
            s.col++;
    return s;
}

/* Splits index string T ("i, j, 3") into labels. Reports errors; returns
   -1 on error. */
static int parse_labels(cst_program *P, const tx_token *t, int *nout, cst_label **out)
{
    const char *z = t->z + 1;         /* inside the quotes */
    size_t n = t->n - 2, i = 0;
    cst_label tmp[TX_MAX_MODES + 1];
    int count = 0;
    while (i < n && (z[i] == ' ' || z[i] == '\t'))
        i++;
    if (i == n) { /* "" or "  ": no labels, a scalar */
        *nout = 0;
        *out = NULL;
        return 0;
    }
    for (;;) {
        while (i < n && (z[i] == ' ' || z[i] == '\t'))
            i++;
        size_t len = 0;
        int kind = lex_label(z + i, n - i, &len);
        if (kind && i + len < n && z[i + len] != ',' && z[i + len] != ' ' && z[i + len] != '\t')
            kind = 0; /* "1a", "i-j": not one label */
        if (kind == 0) {
            size_t e = i;
            while (e < n && z[e] != ',')
                e++;
            tx_span sp = sub_span(t, i + 1, e > i ? e - i : 1);
            if (e == i)
                diag_error(P->diag, sp, "empty label in index string; labels are separated by single commas");
            else
                diag_error(P->diag, sp, "'%.*s' is not a label: a label is a name or a non-negative integer",
                           (int)(e - i), z + i);
            return -1;
        }
        if (count == TX_MAX_MODES) {
            diag_error(P->diag, t->span, "more than %d labels in one index string", TX_MAX_MODES);
            return -1;
        }
        cst_label *l = &tmp[count++];
        l->span = sub_span(t, i + 1, len);
        if (kind == 1) {
            if (len > TX_MAX_NAME) {
                diag_error(P->diag, l->span, "label is %zu bytes long; the limit is %d", len, TX_MAX_NAME);
                return -1;
            }
            l->label = cst_label_id(P, z + i, len);
            if (l->label < 0) {
                diag_error(P->diag, l->span, "more than %d distinct labels in one program", TX_MAX_LABELS);
                return -1;
            }
        } else {
            int64_t v = 0;
            for (size_t k = 0; k < len; k++) {
                if (v > (INT64_MAX - 9) / 10) {
                    diag_error(P->diag, l->span, "integer label is too large");
                    return -1;
                }
                v = v * 10 + (z[i + k] - '0');
            }
            l->label = -1;
            l->chip = v;
        }
        i += len;
        while (i < n && (z[i] == ' ' || z[i] == '\t'))
            i++;
        if (i == n)
            break;
        if (z[i] != ',') {
            diag_error(P->diag, sub_span(t, i + 1, 1),
                       "expected ',' between labels, found '%c'", z[i]);
            return -1;
        }
        i++;
        size_t j = i;
        while (j < n && (z[j] == ' ' || z[j] == '\t'))
            j++;
        if (j == n) {
            diag_error(P->diag, sub_span(t, i, 1), "trailing ',' in index string");
            return -1;
        }
    }
    *nout = count;
    *out = arena_alloc(P->arena, sizeof(cst_label) * (size_t)count);
    memcpy(*out, tmp, sizeof(cst_label) * (size_t)count);
    return 0;
}

static void fail(cst_program *P)
{
    P->failed = 1;
}

cst_node *cst_num(cst_program *P, const tx_token *t)
{
    cst_node *n = node_new(P, CST_NUM, tok_span(t));
    char buf[64];
    size_t len = t->n < sizeof buf - 1 ? t->n : sizeof buf - 1;
    memcpy(buf, t->z, len);
    buf[len] = 0;
    errno = 0;
    n->num = strtod(buf, NULL);
    if (errno == ERANGE && (n->num > 1 || n->num < -1)) {
        diag_error(P->diag, t->span, "number '%s' is out of range", buf);
        fail(P);
    }
    n->is_number = 1;
    return n;
}

cst_node *cst_imag(cst_program *P, const tx_token *t)
{
    tx_token real = *t;
    real.n--; /* without the i */
    cst_node *n = cst_num(P, &real);
    n->span = tok_span(t);
    n->is_number = 0;
    n->imag = 1;
    return n;
}

static sym *let_find(cst_program *P, const char *z, size_t n)
{
    for (sym *s = P->lets; s; s = s->next)
        if (strlen(s->name) == n && memcmp(s->name, z, n) == 0)
            return s;
    return NULL;
}

cst_node *cst_name(cst_program *P, const tx_token *t)
{
    sym *s = let_find(P, t->z, t->n);
    if (s) { /* the DAG: a use of a let points at the let's own node */
        cst_node *u = node_new(P, CST_LETUSE, tok_span(t));
        u->a = s->let_node;
        u->name = *t;
        u->is_number = s->let_node->is_number;
        return u;
    }
    cst_node *n = node_new(P, CST_NAME, tok_span(t));
    n->name = *t;
    return n;
}

cst_node *cst_ref(cst_program *P, const tx_token *name, const tx_token *str, const tx_token *rparen)
{
    cst_node *n = node_new(P, CST_REF, span_join(name->span, rparen->span));
    n->name = *name;
    n->str = *str;
    if (parse_labels(P, str, &n->nlabels, &n->labels) < 0)
        fail(P);
    return n;
}

cst_node *cst_unary(cst_program *P, cst_kind k, const tx_token *op, cst_node *a)
{
    cst_node *n = node_new(P, k, span_join(op->span, a->span));
    n->a = a;
    n->is_number = a->is_number;
    set_depth(P, n);
    return n;
}

cst_node *cst_binary(cst_program *P, cst_kind k, cst_node *a, cst_node *b)
{
    cst_node *n = node_new(P, k, span_join(a->span, b->span));
    n->a = a;
    n->b = b;
    n->is_number = a->is_number && b->is_number;
    set_depth(P, n);
    return n;
}

cst_node *cst_paren(cst_program *P, const tx_token *l, cst_node *e, const tx_token *r)
{
    (void)P;
    e->span = span_join(l->span, r->span);
    return e;
}

cst_node *cst_call(cst_program *P, const tx_token *fn, cst_list *args, const tx_token *rparen)
{
    cst_node *n = node_new(P, CST_CALL, span_join(fn->span, rparen->span));
    n->name = *fn;
    n->args = *args;
    set_depth(P, n);
    return n;
}

cst_node *cst_compare(cst_program *P, const tx_token *op, cst_node *a, cst_node *b)
{
    /* a comparison is an elementwise function of two arguments */
    cst_node *n = node_new(P, CST_CALL, span_join(a->span, b->span));
    n->name = *op;
    cst_list *l = cst_list_add(P, cst_list_new(P, a), b);
    n->args = *l;
    set_depth(P, n);
    return n;
}

cst_node *cst_arg_op(cst_program *P, const tx_token *op)
{
    cst_node *n = node_new(P, CST_ARG_OP, tok_span(op));
    n->name = *op;
    return n;
}

cst_node *cst_arg_str(cst_program *P, const tx_token *s)
{
    cst_node *n = node_new(P, CST_ARG_STR, tok_span(s));
    n->str = *s;
    if (parse_labels(P, s, &n->nlabels, &n->labels) < 0)
        fail(P);
    return n;
}

cst_node *cst_arg_list(cst_program *P, const tx_token *l, cst_list *items, const tx_token *r)
{
    cst_node *n = node_new(P, CST_ARG_LIST, span_join(l->span, r->span));
    n->args = *items;
    set_depth(P, n);
    return n;
}

cst_node *cst_extent(cst_program *P, const tx_token *t)
{
    cst_node *n = node_new(P, CST_EXTENT, tok_span(t));
    n->name = *t;
    if (t->kind == TK_NUMBER) {
        int64_t v = 0;
        for (uint32_t i = 0; i < t->n; i++) {
            if (t->z[i] < '0' || t->z[i] > '9' || v > (INT64_MAX - 9) / 10) {
                diag_error(P->diag, t->span, "an extent is a dim name or a non-negative integer, not '%.*s'",
                           (int)t->n, t->z);
                fail(P);
                return n;
            }
            v = v * 10 + (t->z[i] - '0');
        }
        n->num = (double)v;
        n->is_number = 1;
        n->args.n = 0;
        n->a = NULL;
        n->depth = 1;
        n->nlabels = 0;
        /* keep the exact integer in the token; sema re-reads it */
    }
    return n;
}

cst_list *cst_list_new(cst_program *P, cst_node *first)
{
    cst_list *l = arena_alloc(P->arena, sizeof *l);
    return cst_list_add(P, l, first);
}

cst_list *cst_list_add(cst_program *P, cst_list *l, cst_node *n)
{
    /* grow by doubling; old arrays stay in the arena (freed with it) */
    if ((l->n & (l->n - 1)) == 0) {
        int cap = l->n ? l->n * 2 : 1;
        cst_node **v = arena_alloc(P->arena, sizeof(cst_node *) * (size_t)cap);
        if (l->n)
            memcpy(v, l->v, sizeof(cst_node *) * (size_t)l->n);
        l->v = v;
    }
    l->v[l->n++] = n;
    return l;
}

static cst_stmt *stmt_new(cst_program *P, stmt_kind k, tx_span span)
{
    cst_stmt *s = arena_alloc(P->arena, sizeof *s);
    s->kind = k;
    s->span = span;
    if (P->nstmts >= TX_MAX_STMTS) {
        if (!P->failed)
            diag_error(P->diag, span, "more than %d statements in one program", TX_MAX_STMTS);
        fail(P);
    }
    P->nstmts++;
    if (P->last)
        P->last->next = s;
    else
        P->first = s;
    P->last = s;
    return s;
}

void cst_decl_begin(cst_program *P, const tx_token *io, const tx_token *dt)
{
    P->decl_io = io->kind;
    P->decl_dtype = dt->kind;
}

void cst_decl_tensor(cst_program *P, const tx_token *name, cst_list *extents, const tx_token *end)
{
    cst_stmt *s = stmt_new(P, STMT_TENSOR, span_join(name->span, end->span));
    s->name = *name;
    s->io = P->decl_io;
    s->dtype_tok = P->decl_dtype;
    if (extents)
        s->extents = *extents;
}

void cst_decl_dim(cst_program *P, const tx_token *name, const tx_token *value)
{
    cst_stmt *s = stmt_new(P, STMT_DIM, value ? span_join(name->span, value->span) : name->span);
    s->name = *name;
    if (value)
        s->value = *value;
}

void cst_decl_sparse(cst_program *P, const tx_token *kw, const tx_token *name,
                     const tx_token *src, const tx_token *dst)
{
    cst_stmt *s = stmt_new(P, STMT_SPARSE, span_join(kw->span, dst->span));
    s->name = *name;
    s->src_str = *src;
    s->dst_str = *dst;
    if (parse_labels(P, src, &s->nmap_src, &s->map_src) < 0 || parse_labels(P, dst, &s->nmap_dst, &s->map_dst) < 0)
        fail(P);
}

cst_target *cst_target_new(cst_program *P, const tx_token *name, const tx_token *str, const tx_token *rparen)
{
    cst_target *t = arena_alloc(P->arena, sizeof *t);
    t->name = *name;
    t->span = span_join(name->span, rparen->span);
    if (str) {
        t->has_idx = 1;
        t->str = *str;
        if (parse_labels(P, str, &t->nlabels, &t->labels) < 0)
            fail(P);
        /* a repeated label addresses the diagonal; lowering writes it
           through a label of its own per repeated mode, made here so that
           every label exists before sema sizes its tables */
        for (int i = 0; i < t->nlabels && !P->failed; i++)
            for (int j = 0; j < i; j++)
                if (t->labels[i].label >= 0 && t->labels[j].label == t->labels[i].label) {
                    if (!t->fresh) {
                        t->fresh = arena_alloc(P->arena, sizeof(int) * (size_t)t->nlabels);
                        for (int k = 0; k < t->nlabels; k++)
                            t->fresh[k] = t->labels[k].label;
                    }
                    char *nm = arena_printf(P->arena, "%s#%d", P->label_names[t->labels[i].label], i);
                    t->fresh[i] = cst_label_id(P, nm, strlen(nm));
                    if (t->fresh[i] < 0)
                        fail(P);
                    break;
                }
    }
    return t;
}

/* Target lists reuse cst_list's growth by storing targets as nodes' slots. */
cst_list *cst_targets_new(cst_program *P, cst_target *t)
{
    cst_list *l = arena_alloc(P->arena, sizeof *l);
    return cst_targets_add(P, l, t);
}

cst_list *cst_targets_add(cst_program *P, cst_list *l, cst_target *t)
{
    return cst_list_add(P, l, (cst_node *)t);
}

void cst_assign(cst_program *P, cst_target *t, const tx_token *op, cst_node *e)
{
    cst_stmt *s = stmt_new(P, STMT_ASSIGN, span_join(t->span, e->span));
    s->op = op->kind;
    s->op_span = op->span;
    s->ntargets = 1;
    s->targets = t;
    s->expr = e;
}

void cst_assign_multi(cst_program *P, const tx_token *lparen, cst_list *targets, cst_node *e)
{
    cst_stmt *s = stmt_new(P, STMT_MULTI, span_join(lparen->span, e->span));
    s->op = TK_EQ;
    s->ntargets = targets->n;
    s->targets = arena_alloc(P->arena, sizeof(cst_target) * (size_t)targets->n);
    for (int i = 0; i < targets->n; i++)
        s->targets[i] = *(cst_target *)targets->v[i];
    s->expr = e;
}

void cst_let(cst_program *P, const tx_token *kw, const tx_token *name, cst_node *e)
{
    cst_node *n = node_new(P, CST_LET, span_join(kw->span, e->span));
    n->name = *name;
    n->a = e;
    n->is_number = e->is_number;
    set_depth(P, n);
    cst_stmt *s = stmt_new(P, STMT_LET, n->span);
    s->name = *name;
    s->expr = n;
    if (!let_find(P, name->z, name->n)) {
        sym *l = arena_alloc(P->arena, sizeof *l);
        l->kind = SYM_LET;
        l->name = arena_strndup(P->arena, name->z, name->n);
        l->span = name->span;
        l->let_node = n;
        l->next = P->lets;
        P->lets = l;
    }
}

void cst_let_tensor(cst_program *P, const tx_token *kw, const tx_token *name,
                    const tx_token *str, cst_node *e)
{
    cst_stmt *s = stmt_new(P, STMT_LET_TENSOR, span_join(kw->span, e->span));
    s->name = *name;
    s->op = TK_EQ;
    s->ntargets = 1;
    s->targets = cst_target_new(P, name, str, name);
    s->targets->span = span_join(name->span, str->span);
    s->expr = e;
}
