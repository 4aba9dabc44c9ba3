/*
 * check_cst.c — suite "cst": parse_program (grammar/parser.y and
 * src/cst.c): the let DAG, index-string splitting, syntax errors.
 */
#include "unit.h"
#include "parser.h"

/* The CST_LET node a use of a bare let reaches: the node itself, or the
   node a use node points at. */
static cst_node *let_target(cst_node *n)
{
    if (n->kind == CST_LET)
        return n;
    if (n->kind == CST_LETUSE)
        return n->a;
    return NULL;
}

START_TEST(cst_let_is_one_node)
{
    static const char text[] = "in A[n], b[n];\n"
                               "out B[n], C[n];\n"
                               "let x = A(\"i\") * b(\"i\");\n"
                               "B(\"i\") = x;\n"
                               "C(\"i\") = 2 * x + (x);\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_PARSE);
    ck_assert_int_eq(p.cst->nstmts, 7); /* one per declared tensor */
    cst_stmt *let = nth_stmt(p.cst, STMT_LET, 0);
    ck_assert_ptr_nonnull(let);
    cst_node *x = let->expr;
    ck_assert_int_eq(x->kind, CST_LET);
    ck_assert_int_eq(x->a->kind, CST_MUL);
    ck_assert_int_eq(x->a->a->kind, CST_REF);
    ck_assert_uint_eq(let->span.line, 3);
    cst_stmt *sb = nth_stmt(p.cst, STMT_ASSIGN, 0), *sc = nth_stmt(p.cst, STMT_ASSIGN, 1);
    ck_assert_ptr_nonnull(sb);
    ck_assert_ptr_nonnull(sc);
    /* B("i") = x: the right side reaches the let node itself */
    ck_assert_ptr_eq(let_target(sb->expr), x);
    /* C("i") = 2 * x + (x): both uses reach the same node, parentheses too */
    ck_assert_int_eq(sc->expr->kind, CST_ADD);
    ck_assert_int_eq(sc->expr->a->kind, CST_MUL);
    ck_assert_int_eq(sc->expr->a->a->kind, CST_NUM);
    ck_assert_ptr_eq(let_target(sc->expr->a->b), x);
    ck_assert_ptr_eq(let_target(sc->expr->b), x);
    /* a use keeps its own location (for diagnostics) */
    ck_assert_uint_eq(sb->expr->span.line, 4);
    ck_assert_uint_eq(sb->expr->span.col, 10);
    ck_assert_uint_eq(sc->expr->a->b->span.line, 5);
    ck_assert_uint_eq(sc->expr->a->b->span.col, 14);
    /* a name that is not a let is a CST_NAME node of its own */
    pipe_free(&p);

    pipe_ok(&p, "in s; out t, u; t = s; u = s;", UPTO_PARSE);
    cst_node *n1 = nth_stmt(p.cst, STMT_ASSIGN, 0)->expr, *n2 = nth_stmt(p.cst, STMT_ASSIGN, 1)->expr;
    ck_assert_int_eq(n1->kind, CST_NAME);
    ck_assert_int_eq(n2->kind, CST_NAME);
    ck_assert_ptr_ne(n1, n2);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_statement_kinds)
{
    static const char text[] = "dim n, b = 16;\n"
                               "in f32 A[n, b], s;\n"
                               "out C[n];\n"
                               "let T(\"i,j\") = A(\"i,j\");\n"
                               "C(\"i\") -= T(\"i,j\") ^ 2;\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_PARSE);
    cst_stmt *s = p.cst->first;
    ck_assert_int_eq(s->kind, STMT_DIM);
    ck_assert_int_eq(s->value.kind, 0);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_DIM);
    ck_assert_int_eq(s->value.kind, TK_NUMBER);
    ck_assert_int_eq((int)s->value.n, 2);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_TENSOR);
    ck_assert_int_eq(s->io, TK_IN);
    ck_assert_int_eq(s->dtype_tok, TK_F32);
    ck_assert_int_eq(s->extents.n, 2);
    s = s->next; /* 's': the dtype carries over inside one declaration */
    ck_assert_int_eq(s->kind, STMT_TENSOR);
    ck_assert_int_eq(s->dtype_tok, TK_F32);
    ck_assert_int_eq(s->extents.n, 0);
    s = s->next;
    ck_assert_int_eq(s->io, TK_OUT);
    ck_assert_int_eq(s->dtype_tok, 0);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_LET_TENSOR);
    ck_assert_int_eq(s->targets[0].nlabels, 2);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_ASSIGN);
    ck_assert_int_eq(s->op, TK_MINUSEQ);
    ck_assert_int_eq(s->expr->kind, CST_POW);
    ck_assert_ptr_null(s->next);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_precedence)
{
    /* -a^2*b + c/d - e  ==  ((-(a^2))*b + c/d) - e */
    pipe_t p;
    pipe_ok(&p, "x = -a^2*b + c/d - e;", UPTO_PARSE);
    cst_node *e = p.cst->first->expr;
    ck_assert_int_eq(e->kind, CST_SUB);
    ck_assert_int_eq(e->b->kind, CST_NAME);
    ck_assert_int_eq(e->a->kind, CST_ADD);
    cst_node *m = e->a->a;
    ck_assert_int_eq(m->kind, CST_MUL);
    ck_assert_int_eq(m->a->kind, CST_NEG);
    ck_assert_int_eq(m->a->a->kind, CST_POW);
    ck_assert_int_eq(e->a->b->kind, CST_DIV);
    pipe_free(&p);
    /* '^' is right-associative: a^2^3 == a^(2^3) */
    pipe_ok(&p, "x = a^2^3;", UPTO_PARSE);
    e = p.cst->first->expr;
    ck_assert_int_eq(e->kind, CST_POW);
    ck_assert_int_eq(e->a->kind, CST_NAME);
    ck_assert_int_eq(e->b->kind, CST_POW);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_label_splitting)
{
    /* col: X=1 '='=3 A=5 '('=6 '"'=7 mu=9 nu=13 0=16 12=19 λ=23 */
    static const char text[] = "X = A(\" mu ,nu,0, 12 ,\xce\xbb \") * B(\"nu,mu\") * s(\"\") * t(\"  \");";
    pipe_t p;
    pipe_ok(&p, text, UPTO_PARSE);
    ck_assert_int_eq(p.cst->nlabel_names, 3);
    ck_assert_str_eq(p.cst->label_names[0], "mu");
    ck_assert_str_eq(p.cst->label_names[1], "nu");
    ck_assert_str_eq(p.cst->label_names[2], "\xce\xbb");
    cst_node *e = p.cst->first->expr; /* ((A * B) * s) * t */
    cst_node *t = e->b, *s = e->a->b, *b = e->a->a->b, *a = e->a->a->a;
    ck_assert_int_eq(a->kind, CST_REF);
    ck_assert_int_eq(a->nlabels, 5);
    ck_assert_int_eq(a->labels[0].label, 0);
    ck_assert_uint_eq(a->labels[0].span.col, 9);
    ck_assert_uint_eq(a->labels[0].span.off, 8);
    ck_assert_uint_eq(a->labels[0].span.len, 2);
    ck_assert_int_eq(a->labels[1].label, 1);
    ck_assert_uint_eq(a->labels[1].span.col, 13);
    ck_assert_int_eq(a->labels[2].label, -1);
    ck_assert_int_eq(a->labels[2].chip, 0);
    ck_assert_uint_eq(a->labels[2].span.col, 16);
    ck_assert_int_eq(a->labels[3].label, -1);
    ck_assert_int_eq(a->labels[3].chip, 12);
    ck_assert_uint_eq(a->labels[3].span.col, 19);
    ck_assert_uint_eq(a->labels[3].span.len, 2);
    ck_assert_int_eq(a->labels[4].label, 2);
    ck_assert_uint_eq(a->labels[4].span.col, 23);
    ck_assert_uint_eq(a->labels[4].span.off, 22);
    ck_assert_uint_eq(a->labels[4].span.len, 2);
    /* the same names are the same ids in another string */
    ck_assert_int_eq(b->nlabels, 2);
    ck_assert_int_eq(b->labels[0].label, 1);
    ck_assert_int_eq(b->labels[1].label, 0);
    /* "" and "  " are the empty label list */
    ck_assert_int_eq(s->kind, CST_REF);
    ck_assert_int_eq(s->nlabels, 0);
    ck_assert_int_eq(t->nlabels, 0);
    /* a target's labels are split too */
    pipe_free(&p);
    pipe_ok(&p, "C(\"j , i\") = 1;", UPTO_PARSE);
    cst_target *tg = &p.cst->first->targets[0];
    ck_assert_int_eq(tg->has_idx, 1);
    ck_assert_int_eq(tg->nlabels, 2);
    ck_assert_str_eq(p.cst->label_names[tg->labels[0].label], "j");
    ck_assert_str_eq(p.cst->label_names[tg->labels[1].label], "i");
    ck_assert_uint_eq(tg->labels[1].span.col, 8);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_big_chip)
{
    pipe_t p;
    pipe_ok(&p, "x = A(\"1000000000000000000\");", UPTO_PARSE);
    ck_assert_int_eq(p.cst->first->expr->labels[0].chip, INT64_C(1000000000000000000));
    pipe_free(&p);
    ck_assert_int_eq(pipe_run(&p, "x = A(\"99999999999999999999\");", UPTO_PARSE), -1);
    ck_assert_ptr_nonnull(strstr(diag_text(&p.diag), "t.tx:1:8: error: "));
    ck_assert_ptr_nonnull(strstr(diag_text(&p.diag), "too large"));
    pipe_free(&p);
}
END_TEST

/* Syntax errors: the program, the position and phrases of the message. */
static const struct {
    const char *src;
    unsigned line, col;
    const char *phrase1, *phrase2;
} parse_errors[] = {
    {"in A[n;", 1, 7, "expected ']' or ','", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"i\"", 3, 15, "unexpected end of input", "expected ')'"},
    {"in A[n];\nout C[n];\nC(\"i\") A(\"i\");", 3, 8, "unexpected name 'A'", "expected '=', '+=', '-=', '*=' or '/='"},
    {"dim n = ;", 1, 9, "unexpected ';'", "expected number"},
    {"let x 3;", 1, 7, "unexpected number '3'", "expected"},
    {"in A[n+];", 1, 8, "unexpected ']'", NULL},
    {"sparse L : \"i\" \"j\";", 1, 16, "unexpected index string", "expected '->'"},
    {"out C;\nC = (1 + 2;", 2, 11, "unexpected ';'", "expected ')'"},
    {"out C;\nC = 1 2;", 2, 7, "unexpected number '2'", "expected ';'"},
    {"in A[n] B;", 1, 9, "unexpected name 'B'", "expected"},
    {"in A[n];\nout C[n];\nC(\"i,,j\") = A(\"i\");", 3, 6, "empty label", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"i j\");", 3, 15, "expected ','", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"i,\");", 3, 14, "trailing ','", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"-1\");", 3, 13, "'-1' is not a label", NULL},
    {"in A[2.5];", 1, 6, "an extent is a dim name or a non-negative integer", NULL},
};

START_TEST(cst_parse_errors)
{
    pipe_t p;
    int r = pipe_run(&p, parse_errors[_i].src, UPTO_PARSE);
    ck_assert_msg(r == -1, "case %d parsed", _i);
    ck_assert_ptr_null(p.cst);
    ck_assert_int_ge(p.diag.nerrors, 1);
    const char *out = diag_text(&p.diag);
    char want[64];
    snprintf(want, sizeof want, "t.tx:%u:%u: error: ", parse_errors[_i].line, parse_errors[_i].col);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "case %d: want '%s', got:\n%s", _i, want, out);
    const char *eol = strchr(out, '\n');
    size_t first = eol ? (size_t)(eol - out) : strlen(out);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)first, out);
    ck_assert_msg(strstr(line, parse_errors[_i].phrase1), "case %d: no '%s' in '%s'", _i,
                  parse_errors[_i].phrase1, line);
    if (parse_errors[_i].phrase2)
        ck_assert_msg(strstr(line, parse_errors[_i].phrase2), "case %d: no '%s' in '%s'", _i,
                      parse_errors[_i].phrase2, line);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_one_syntax_error)
{
    /* the parser stops at the first syntax error: one diagnostic */
    pipe_t p;
    ck_assert_int_eq(pipe_run(&p, "in A[n;\nout ;\nC = = ;", UPTO_PARSE), -1);
    ck_assert_int_eq(p.diag.nerrors, 1);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_deep_nesting)
{
    /* absurd nesting is an error, never a crash */
    size_t depth = 5000;
    char *text = malloc(depth * 2 + 32);
    ck_assert_ptr_nonnull(text);
    strcpy(text, "out x; x = ");
    size_t n = strlen(text);
    for (size_t i = 0; i < depth; i++)
        text[n++] = '(';
    text[n++] = '1';
    for (size_t i = 0; i < depth; i++)
        text[n++] = ')';
    text[n++] = ';';
    text[n] = 0;
    pipe_t p;
    ck_assert_int_eq(pipe_run(&p, text, UPTO_PARSE), -1);
    ck_assert_ptr_nonnull(strstr(diag_text(&p.diag), "nested too deeply"));
    pipe_free(&p);
    free(text);
}
END_TEST

/* ------------------------------------------------------------------ */

Suite *suite_cst(void)
{
    Suite *s = suite_create("cst");
    TCase *tc = tcase_create("cst");
    tcase_add_test(tc, cst_let_is_one_node);
    tcase_add_test(tc, cst_statement_kinds);
    tcase_add_test(tc, cst_precedence);
    tcase_add_test(tc, cst_label_splitting);
    tcase_add_test(tc, cst_big_chip);
    tcase_add_loop_test(tc, cst_parse_errors, 0, (int)(sizeof parse_errors / sizeof parse_errors[0]));
    tcase_add_test(tc, cst_one_syntax_error);
    tcase_add_test(tc, cst_deep_nesting);
    suite_add_tcase(s, tc);
    return s;
}
