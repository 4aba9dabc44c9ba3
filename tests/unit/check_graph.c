/*
 * check_graph.c — suite "graph": lower_program (src/lower.c) and
 * graph_check / graph_print (src/graph.c), including corrupted graphs.
 */
#include "unit.h"

static int count_ops(const graph *g, op_kind op)
{
    int n = 0;
    for (int i = 0; i < g->n; i++)
        n += g->v[i]->op == op && !g->v[i]->dead;
    return n;
}

static g_value *nth_op(const graph *g, op_kind op, int k)
{
    for (int i = 0; i < g->n; i++)
        if (g->v[i]->op == op && !g->v[i]->dead && k-- == 0)
            return g->v[i];
    return NULL;
}

/* ------------------------------------------------------------------ */

START_TEST(graph_matmul)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j"), lk = label_id(p.cst, "k");
    ck_assert_int_eq(count_ops(p.g, OP_INPUT), 2);
    ck_assert_int_eq(count_ops(p.g, OP_CONTRACT), 1);
    ck_assert_int_eq(count_ops(p.g, OP_STORE), 1);
    g_value *c = nth_op(p.g, OP_CONTRACT, 0);
    ck_assert_int_eq(c->nin, 2);
    ck_assert(ls_eq(c->summed, set_of(lk, -1)));
    ck_assert_int_eq(c->rank, 2);
    ck_assert_int_eq(c->label[0], li); /* the target's order */
    ck_assert_int_eq(c->label[1], lj);
    ck_assert_double_eq(c->coef, 1);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(c->in[i]->op, OP_INDEX);
        ck_assert_double_eq(c->coef_in[i], 1);
    }
    ck_assert_str_eq(p.S->vars[c->in[0]->in[0]->var]->name, "A");
    ck_assert_str_eq(p.S->vars[c->in[1]->in[0]->var]->name, "B");
    g_value *s = nth_op(p.g, OP_STORE, 0);
    ck_assert_ptr_eq(s->in[0], c);
    ck_assert_int_eq(s->store_op, '=');
    ck_assert_str_eq(p.S->vars[s->var]->name, "C");
    ck_assert_int_eq(s->store_label[0], li);
    ck_assert_int_eq(s->store_label[1], lj);
    ck_assert_int_eq(s->stmt, 0);
    /* ids are positions; operands come first */
    for (int k = 0; k < p.g->n; k++) {
        ck_assert_int_eq(p.g->v[k]->id, k);
        for (int i = 0; i < p.g->v[k]->nin; i++)
            ck_assert_int_lt(p.g->v[k]->in[i]->id, k);
    }
    /* the listing */
    tx_buf b = {0};
    graph_print(p.g, &b, 0);
    ck_assert_ptr_nonnull(b.p);
    char want[64];
    snprintf(want, sizeof want, "= contract %%%d * %%%d over k", c->in[0]->id, c->in[1]->id);
    ck_assert_msg(strstr(b.p, want) != NULL, "no '%s' in:\n%s", want, b.p);
    ck_assert_ptr_nonnull(strstr(b.p, "store C(\"i,j\") ="));
    buf_free(&b);
    graph_print(p.g, &b, 1);
    ck_assert_int_eq(strncmp(b.p, "digraph", 7), 0);
    ck_assert_ptr_nonnull(strstr(b.p, "->"));
    ck_assert_str_eq(b.p + b.len - 2, "}\n");
    buf_free(&b);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_three_way)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,q], B[q,m], d[q];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\") * d(\"k\");",
            UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(count_ops(p.g, OP_CONTRACT), 1);
    g_value *c = nth_op(p.g, OP_CONTRACT, 0);
    ck_assert_int_eq(c->nin, 3);
    ck_assert(ls_eq(c->summed, set_of(label_id(p.cst, "k"), -1)));
    ck_assert_int_eq(c->rank, 2);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_let_shared)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,q], B[q,m];\nout C[n,m], D[n,m];\nlet x = A(\"i,k\") * B(\"k,j\");\n"
                "C(\"i,j\") = x;\nD(\"i,j\") = x + 1;\n", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(count_ops(p.g, OP_CONTRACT), 1); /* computed once */
    g_value *x = nth_op(p.g, OP_CONTRACT, 0);
    ck_assert_int_eq(x->nuses, 2);
    int users = 0;
    for (int k = 0; k < p.g->n; k++)
        for (int i = 0; i < p.g->v[k]->nin; i++)
            users += p.g->v[k]->in[i] == x;
    ck_assert_int_eq(users, 2);
    ck_assert_int_eq(count_ops(p.g, OP_ADD), 1);
    ck_assert_int_eq(count_ops(p.g, OP_STORE), 2);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_other_ops)
{
    pipe_t p;
    /* broadcast add, trace, accumulation, scaling */
    pipe_ok(&p, "in A[n,m], b[m], Q[n,n]; inout S[n]; out C[n,m], t;\n"
                "C(\"i,j\") = A(\"i,j\") + b(\"j\");\n"
                "t = Q(\"i,i\");\n"
                "S(\"i\") += 3 * A(\"i,j\");\n", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j");
    g_value *add = nth_op(p.g, OP_ADD, 0);
    ck_assert_ptr_nonnull(add);
    ck_assert_int_eq(add->nin, 2);
    ck_assert_int_eq(add->rank, 2);
    ck_assert_int_eq(add->label[0], li);
    ck_assert_int_eq(add->label[1], lj);
    ck_assert_int_eq(add->in[1]->rank, 1);
    ck_assert_int_eq(add->in[1]->label[0], lj);
    /* the trace: an index with one label i (the diagonal), summed to a scalar */
    g_value *tr = NULL;
    for (int k = 0; k < p.g->n; k++) {
        g_value *v = p.g->v[k];
        if (v->op == OP_CONTRACT && v->rank == 0)
            tr = v;
    }
    ck_assert_ptr_nonnull(tr);
    ck_assert(ls_eq(tr->summed, set_of(li, -1)));
    ck_assert_int_eq(tr->in[0]->op, OP_INDEX);
    ck_assert_int_eq(tr->in[0]->rank, 1);
    ck_assert_int_eq(tr->in[0]->idx_label[0], li);
    ck_assert_int_eq(tr->in[0]->idx_label[1], li);
    /* += : a store with the previous value as its second operand */
    g_value *acc = NULL;
    for (int k = 0; k < p.g->n; k++)
        if (p.g->v[k]->op == OP_STORE && p.g->v[k]->store_op == '+')
            acc = p.g->v[k];
    ck_assert_ptr_nonnull(acc);
    ck_assert_int_eq(acc->nin, 2);
    ck_assert_int_eq(acc->in[1]->op, OP_INPUT);
    ck_assert_int_eq(acc->in[1]->var, acc->var);
    ck_assert_double_eq(acc->in[0]->coef, 3);
    pipe_free(&p);
}
END_TEST

/* Lowers matmul and applies corruption WHICH; graph_check must fail. */
static void corrupt_and_check(int which, const char *phrase)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,k], B[k,m];\ninout S[n];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n"
                "S(\"z\") += A(\"z,k\");\n", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "valid graph rejected: %s", msg);
    int lz = label_id(p.cst, "z");
    ck_assert_int_ge(lz, 0);
    graph *g = p.g;
    g_value *c = nth_op(g, OP_CONTRACT, 0);
    g_value *st = nth_op(g, OP_STORE, 0);
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j"), lk = label_id(p.cst, "k");
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(c->rank, 2);
    switch (which) {
    case 0: /* an operand defined after its user */
        c->in[0] = st;
        break;
    case 1: /* two values swapped: the contraction before its operands */
    {
        int a = c->in[0]->id, b = c->id;
        g->v[a] = c;
        g->v[b] = c->in[0];
        g->v[a]->id = a;
        g->v[b]->id = b;
        break;
    }
    case 2: /* summed set missing k */
        c->summed = set_of(-1, -1);
        break;
    case 3: /* summed set with an output label as well */
        c->summed = set_of(lk, li);
        break;
    case 4: /* a duplicate label */
        c->label[1] = c->label[0];
        c->ext[1] = c->ext[0];
        break;
    case 5: /* a store of a label the target lacks */
        st->store_label[1] = lk;
        break;
    case 6: /* an exponent other than ±1 */
        c->coef_in[1] = 2;
        break;
    case 7: /* an output label no operand has */
        c->label[1] = lz;
        break;
    case 8: /* an id that is not the position */
        c->id = 0;
        break;
    case 9: /* a label with two extents */
        c->ext[0] = (tx_extent){-1, 7};
        break;
    case 10: /* accumulation without the previous value */
    {
        g_value *acc = NULL;
        for (int k = 0; k < g->n; k++)
            if (g->v[k]->op == OP_STORE && g->v[k]->store_op == '+')
                acc = g->v[k];
        ck_assert_ptr_nonnull(acc);
        acc->nin = 1;
        break;
    }
    case 11: /* a variable value with labelled modes */
        g->v[0]->label[0] = li;
        break;
    }
    (void)lj;
    msg[0] = 0;
    ck_assert_msg(graph_check(g, msg, sizeof msg) == -1, "corruption %d not detected", which);
    ck_assert_msg(msg[0] != 0, "corruption %d: no message", which);
    if (phrase)
        ck_assert_msg(strstr(msg, phrase) != NULL, "corruption %d: no '%s' in '%s'", which, phrase, msg);
    pipe_free(&p);
}

START_TEST(graph_check_corrupt)
{
    static const char *phrases[] = {
        "not an earlier value", NULL, "summed", "summed", "twice", "lacks", "exponent",
        "comes from no operand", "id", "extents", "accumulation", "labelled",
    };
    corrupt_and_check(_i, phrases[_i]);
}
END_TEST

START_TEST(graph_check_empty)
{
    pipe_t p;
    pipe_ok(&p, "", UPTO_LOWER);
    char msg[64] = "x";
    ck_assert_int_eq(graph_check(p.g, msg, sizeof msg), 0);
    ck_assert_int_eq(p.g->n, 0);
    pipe_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */

/* ---- contraction planning: pass share, pass factor, copies in pass_blas ---- */

/* The optimised graph (-O2, BLAS allowed, every dim DIM) of TEXT, in R. */
static void planned(pipe_t *p, pipeline_result *r, const char *text, int64_t dim)
{
    pipe_ok(p, text, UPTO_SEMA);
    int64_t dims[16];
    for (int i = 0; i < 16; i++)
        dims[i] = dim;
    pipeline_options o = {.output = PIPE_GRAPH, .target = &target_c99_blas, .opt_level = 2, .dim_values = dims};
    ck_assert_msg(pipeline_run(p->S, p->a, &o, r) == TX_OK, "%s", r->diag.out.p ? r->diag.out.p : "");
}

/* Pairwise (two-operand) contractions in G. */
static int pairwise(const graph *g)
{
    int n = 0;
    for (int k = 0; k < g->n; k++)
        n += g->v[k]->op == OP_CONTRACT && g->v[k]->nin == 2 && !g->v[k]->dead;
    return n;
}

START_TEST(graph_share_across_statements)
{
    /* ovov·t1 is one pairwise product in three statements, two of them
       with other scales (2x and -3x): computed once */
    pipe_t p;
    pipeline_result r;
    planned(&p, &r, "in ovov[o,v,o,v], t1[o,v], t2[o,o,v,v], W[v,v];\nout A[o,o], B[o,v];\n"
                    "A(\"k,i\") = 2 * ovov(\"k,c,l,d\") * t1(\"l,d\") * t1(\"i,c\");\n"
                    "B(\"k,a\") = ovov(\"k,c,l,d\") * t1(\"l,d\") * t2(\"k,k,a,c\")"
                    " - 3 * ovov(\"k,c,l,d\") * t1(\"l,d\") * W(\"a,c\") * t1(\"k,c\");\n", 20);
    int shared = 0;
    for (int k = 0; k < r.g->n; k++) {
        g_value *v = r.g->v[k];
        if (v->op == OP_CONTRACT && v->nin == 2 && v->rank == 2 && v->in[0]->rank + v->in[1]->rank == 6)
            shared += v->nuses == 3;
    }
    ck_assert_int_eq(shared, 1);
    /* the shared one, one more in A, three in B (with t2; with t1, then W) */
    ck_assert_int_eq(pairwise(r.g), 5);
    ck_assert_int_eq(graph_copies(r.g, NULL), 0);
    pipeline_result_free(&r);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_share_scaled)
{
    /* 3·A·B is 1.5 times 2·A·B: one product, the factor in the sum */
    pipe_t p;
    pipeline_result r;
    planned(&p, &r, "in A[n,n], B[n,n], E[n,n];\nout C[n,n], D[n,n];\n"
                    "C(\"i,j\") = 2 * A(\"i,k\") * B(\"k,j\");\n"
                    "D(\"i,j\") = E(\"i,j\") + 3 * B(\"k,j\") * A(\"i,k\");\n", 30);
    ck_assert_int_eq(pairwise(r.g), 1);
    int found = 0;
    for (int k = 0; k < r.g->n; k++) {
        g_value *v = r.g->v[k];
        for (int i = 0; v->op == OP_ADD && i < v->nin; i++)
            if (v->in[i]->op == OP_CONTRACT) {
                ck_assert_double_eq(v->coef_in[i], 1.5);
                found = 1;
            }
    }
    ck_assert(found);
    pipeline_result_free(&r);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_factor_sum)
{
    /* 2·W1·t − W2·t + u = (2·W1 − W2)·t + u: one product */
    pipe_t p;
    pipeline_result r;
    planned(&p, &r, "in W1[v,v], W2[v,v], t[o,v], u[o,v];\nout C[v,o];\n"
                    "C(\"a,i\") = 2 * W1(\"a,c\") * t(\"i,c\") - W2(\"a,c\") * t(\"i,c\") + u(\"i,a\");\n", 24);
    ck_assert_int_eq(pairwise(r.g), 1);
    int sums = 0;
    for (int k = 0; k < r.g->n; k++) {
        g_value *v = r.g->v[k];
        if (v->op == OP_ADD && v->nin == 2 && v->in[0]->op == OP_INDEX && v->in[1]->op == OP_INDEX) {
            sums++;
            ck_assert_double_eq(v->coef_in[0], 2);
            ck_assert_double_eq(v->coef_in[1], -1);
        }
    }
    ck_assert_int_eq(sums, 1);
    pipeline_result_free(&r);
    pipe_free(&p);
    /* across statements: X += 2·W1·t; X -= W2·t; X += 3·W3·t: one product,
       the others' stores gone (X = ..., then one +=) */
    planned(&p, &r, "in W1[v,v], W2[v,v], W3[v,v], t[o,v], u[o,v];\nout X[v,o];\n"
                    "X(\"a,i\") = u(\"i,a\");\nX(\"a,i\") += 2 * W1(\"a,c\") * t(\"i,c\");\n"
                    "X(\"a,i\") -= W2(\"a,c\") * t(\"i,c\");\nX(\"a,i\") += 3 * W3(\"c,a\") * t(\"i,c\");\n", 24);
    ck_assert_int_eq(pairwise(r.g), 1);
    ck_assert_int_eq(count_ops(r.g, OP_STORE), 2);
    pipeline_result_free(&r);
    pipe_free(&p);
    /* a product with nothing summed: factoring would not save FLOPs */
    planned(&p, &r, "in W1[v,o], W2[v,o], t[o];\nout C[v,o];\n"
                    "C(\"a,i\") = W1(\"a,i\") * t(\"i\") + W2(\"a,i\") * t(\"i\");\n", 24);
    int products = 0;
    for (int k = 0; k < r.g->n; k++)
        products += r.g->v[k]->op == OP_CONTRACT && r.g->v[k]->nin == 2;
    ck_assert_int_eq(products, 2);
    pipeline_result_free(&r);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_copies_shared_and_avoided)
{
    /* T("a,c,i,k") read as [a,i | c,k] by two products: one copy */
    pipe_t p;
    pipeline_result r;
    planned(&p, &r, "in T[n,n,n,n], X[n,n,n], Q[n,n,n];\nout Y[n,n,n], Z[n,n,n];\n"
                    "Y(\"a,i,b\") = T(\"a,c,i,k\") * X(\"c,k,b\");\n"
                    "Z(\"a,i,d\") = T(\"a,c,i,k\") * Q(\"c,k,d\");\n", 16);
    double bytes = 0;
    ck_assert_int_eq(graph_copies(r.g, &bytes), 1);
    ck_assert_double_eq(bytes, 16.0 * 16 * 16 * 16 * 16);
    pipeline_result_free(&r);
    pipe_free(&p);
    /* an operand sum computed for its GEMV alone is laid out for it: no copy */
    planned(&p, &r, "in t2[o,o,v,v], t1[o,v];\nout D[o,v];\n"
                    "D(\"i,a\") = (t2(\"i,j,a,b\") + t2(\"j,i,b,a\")) * t1(\"j,b\");\n", 16);
    ck_assert_int_eq(graph_copies(r.g, NULL), 0);
    ck_assert_int_eq(pairwise(r.g), 1);
    pipeline_result_free(&r);
    pipe_free(&p);
}
END_TEST

Suite *suite_graph(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("graph");
    tcase_add_test(tc, graph_matmul);
    tcase_add_test(tc, graph_three_way);
    tcase_add_test(tc, graph_let_shared);
    tcase_add_test(tc, graph_other_ops);
    tcase_add_test(tc, graph_share_across_statements);
    tcase_add_test(tc, graph_share_scaled);
    tcase_add_test(tc, graph_factor_sum);
    tcase_add_test(tc, graph_copies_shared_and_avoided);
    tcase_add_test(tc, graph_check_empty);
    tcase_add_loop_test(tc, graph_check_corrupt, 0, 12);
    suite_add_tcase(s, tc);
    return s;
}
