/*
 * check_sema.c — suite "sema": sema_check of src/sema.c: symbols,
 * dims, parameter order, label extents, errors.
 */
#include "unit.h"

START_TEST(sema_symbols)
{
    static const char text[] = "dim b = 16;\n"
                               "in A[n,k], B[k,m];\n"
                               "in f32 x[b];\n"
                               "out C[n,m];\n"
                               "inout S;\n"
                               "tmp T[n];\n"
                               "let y = A(\"i,k\") * B(\"k,j\");\n"
                               "C(\"i,j\") = y;\n"
                               "T(\"i\") = C(\"i,j\");\n"
                               "S = T(\"i\") + x(\"q\");\n"
                               "let U(\"i\") = T(\"i\");\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_SEMA);
    sema_program *S = p.S;
    sym *s;

    s = sema_lookup(S, "b");
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->kind, SYM_DIM);
    ck_assert_int_eq(s->is_const, 1);
    ck_assert_int_eq(s->value, 16);
    for (int i = 0; i < 3; i++) {
        const char *nm = (const char *[]){"n", "k", "m"}[i];
        s = sema_lookup(S, nm);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(s->kind, SYM_DIM);
        ck_assert_int_eq(s->is_const, 0);
        ck_assert_int_eq(s->index, i); /* index among symbolic dims */
    }
    /* every dim, constant or not, in order of first appearance */
    ck_assert_int_eq(S->ndims, 4);
    ck_assert_str_eq(S->dims[0]->name, "b");
    ck_assert_str_eq(S->dims[1]->name, "n");
    ck_assert_str_eq(S->dims[2]->name, "k");
    ck_assert_str_eq(S->dims[3]->name, "m");
    ck_assert_int_eq(S->nsym_dims, 3);
    ck_assert_str_eq(S->sym_dims[0]->name, "n");
    ck_assert_str_eq(S->sym_dims[1]->name, "k");
    ck_assert_str_eq(S->sym_dims[2]->name, "m");

    s = sema_lookup(S, "A");
    ck_assert_int_eq(s->kind, SYM_TENSOR);
    ck_assert_int_eq(s->io, IO_IN);
    ck_assert_int_eq(s->dt, DT_F64);
    ck_assert_int_eq(s->rank, 2);
    ck_assert_int_ge(s->ext[0].dim, 0);
    ck_assert_str_eq(S->dims[s->ext[0].dim]->name, "n");
    ck_assert_str_eq(S->dims[s->ext[1].dim]->name, "k");
    s = sema_lookup(S, "x");
    ck_assert_int_eq(s->dt, DT_F32);
    ck_assert_int_eq(s->ext[0].dim, -1); /* a constant dim is a constant extent */
    ck_assert_int_eq(s->ext[0].value, 16);
    ck_assert_int_eq(sema_lookup(S, "C")->io, IO_OUT);
    s = sema_lookup(S, "S");
    ck_assert_int_eq(s->io, IO_INOUT);
    ck_assert_int_eq(s->rank, 0);
    s = sema_lookup(S, "T");
    ck_assert_int_eq(s->io, IO_TMP);
    ck_assert_int_eq(s->index, -1);
    ck_assert_int_eq(sema_lookup(S, "y")->kind, SYM_LET);
    s = sema_lookup(S, "U");
    ck_assert_int_eq(s->kind, SYM_LET_TENSOR);
    ck_assert_int_eq(s->rank, 1);
    ck_assert_str_eq(S->dims[s->ext[0].dim]->name, "n"); /* inferred */
    ck_assert_ptr_null(sema_lookup(S, "i"));             /* labels are not names */
    ck_assert_ptr_null(sema_lookup(S, "nope"));

    /* parameters: in/out/inout in declaration order, tmp and lets excluded */
    ck_assert_int_eq(S->ntensors, 5);
    const char *order[] = {"A", "B", "x", "C", "S"};
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(S->tensors[i]->name, order[i]);
        ck_assert_int_eq(S->tensors[i]->index, i);
    }
    ck_assert_int_eq(S->nvars, 7); /* + T and U */
    for (int i = 0; i < S->nvars; i++)
        ck_assert_int_eq(S->vars[i]->var, i);
    ck_assert_int_eq(S->nassign, 4); /* C, T, S, U; a bare let is not a statement that runs */
    pipe_free(&p);
}
END_TEST

/* tx(5) ELEMENT TYPES: c64 and c128 declarations, numpy's promotion
   (f64 with c64 is c128, f32 with c64 stays c64), real/imag/abs back to
   the reals, let tensors typed by what they read */
START_TEST(sema_complex_types)
{
    static const char text[] = "in c64 P[n]; in c128 Z[n]; in f32 y[n]; in x[n];\n"
                               "out c128 A[n]; out c64 B[n]; out r[n];\n"
                               "let T(\"i\") = P(\"i\") * x(\"i\");\n"
                               "let U(\"i\") = P(\"i\") * y(\"i\");\n"
                               "let V(\"i\") = imag(Z(\"i\"));\n"
                               "let W(\"i\") = real(P(\"i\"));\n"
                               "A(\"i\") = T(\"i\") + Z(\"i\");\n"
                               "B(\"i\") = U(\"i\") + conj(P(\"i\"));\n"
                               "r(\"i\") = V(\"i\") + W(\"i\") + abs(Z(\"i\"));\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_SEMA);
    sema_program *S = p.S;
    ck_assert_int_eq(sema_lookup(S, "P")->dt, DT_C64);
    ck_assert_int_eq(sema_lookup(S, "Z")->dt, DT_C128);
    ck_assert_int_eq(sema_lookup(S, "T")->dt, DT_C128); /* c64 with f64 */
    ck_assert_int_eq(sema_lookup(S, "U")->dt, DT_C64);  /* c64 with f32 */
    ck_assert_int_eq(sema_lookup(S, "V")->dt, DT_F64);
    ck_assert_int_eq(sema_lookup(S, "W")->dt, DT_F32);
    ck_assert_int_eq(dt_join(DT_F64, DT_C64), DT_C128);
    ck_assert_int_eq(dt_join(DT_F32, DT_C64), DT_C64);
    ck_assert_int_eq(dt_join(0, DT_C64), DT_C64);
    ck_assert_int_eq(dt_join(DT_C128, DT_F32), DT_C128);
    ck_assert_int_eq(dt_size(DT_C64), 8);
    ck_assert_int_eq(dt_size(DT_C128), 16);
    ck_assert_int_eq(dt_real(DT_C64), DT_F32);
    pipe_free(&p);
}
END_TEST

START_TEST(sema_implicit_dims_order)
{
    pipe_t p;
    pipe_ok(&p, "in A[z, a7], B[a7, q];\ndim w, c = 3;\nout C[z, q, w];\n"
                "C(\"i,j,l\") = 1;\n", UPTO_SEMA);
    const char *want[] = {"z", "a7", "q", "w"};
    ck_assert_int_eq(p.S->nsym_dims, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(p.S->sym_dims[i]->name, want[i]);
        ck_assert_int_eq(p.S->sym_dims[i]->index, i);
    }
    ck_assert_int_eq(p.S->ndims, 5);
    ck_assert_str_eq(p.S->dims[4]->name, "c");
    pipe_free(&p);
}
END_TEST

START_TEST(sema_param_order)
{
    pipe_t p;
    pipe_ok(&p, "tmp T0; in a; out z; tmp T1[n]; inout m; in f32 b[n]; out y[3];\n"
                "T0 = a; z = T0; T1(\"i\") = b(\"i\"); m += T1(\"i\"); y(\"i\") = 1; \n", UPTO_SEMA);
    const char *want[] = {"a", "z", "m", "b", "y"};
    ck_assert_int_eq(p.S->ntensors, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_str_eq(p.S->tensors[i]->name, want[i]);
    ck_assert_int_eq(sema_lookup(p.S, "T0")->index, -1);
    ck_assert_int_eq(sema_lookup(p.S, "T1")->index, -1);
    pipe_free(&p);
}
END_TEST

START_TEST(sema_label_extents)
{
    pipe_t p;
    pipe_ok(&p, "dim b = 5;\nin A[n,k], B[k,m], x[b];\nout C[n,m], y[b];\n"
                "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\ny(\"k\") = x(\"k\");\n", UPTO_SEMA);
    cst_program *P = p.cst;
    int li = label_id(P, "i"), lj = label_id(P, "j"), lk = label_id(P, "k");
    ck_assert_int_ge(li, 0);
    ck_assert_int_ge(lj, 0);
    ck_assert_int_ge(lk, 0);
    cst_stmt *st = nth_stmt(P, STMT_ASSIGN, 0);
    ck_assert_int_eq(st->index, 0);
    ck_assert(ls_has(&st->lab_bound, li) && ls_has(&st->lab_bound, lj) && ls_has(&st->lab_bound, lk));
    ck_assert_str_eq(p.S->dims[st->lab_ext[li].dim]->name, "n");
    ck_assert_str_eq(p.S->dims[st->lab_ext[lj].dim]->name, "m");
    ck_assert_str_eq(p.S->dims[st->lab_ext[lk].dim]->name, "k");
    ck_assert(ls_eq(st->target_ls, set_of(li, lj)));
    /* the same label in another statement has its own extent */
    st = nth_stmt(P, STMT_ASSIGN, 1);
    ck_assert_int_eq(st->index, 1);
    ck_assert(ls_has(&st->lab_bound, lk));
    ck_assert(!ls_has(&st->lab_bound, li));
    ck_assert_int_eq(st->lab_ext[lk].dim, -1);
    ck_assert_int_eq(st->lab_ext[lk].value, 5);
    ck_assert(ls_eq(st->target_ls, set_of(lk, -1)));
    pipe_free(&p);
}
END_TEST

START_TEST(sema_subtree_labels)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,n], v[n]; out w[n];\nw(\"i\") = A(\"i,j\") * v(\"j\") + 2 * v(\"i\");\n", UPTO_SEMA);
    cst_node *e = nth_stmt(p.cst, STMT_ASSIGN, 0)->expr;
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j");
    ck_assert(ls_eq(e->ls, set_of(li, lj)));
    ck_assert(ls_eq(e->a->ls, set_of(li, lj)));
    ck_assert(ls_eq(e->b->ls, set_of(li, -1)));
    ck_assert_int_eq(e->b->a->is_number, 1);
    ck_assert_int_eq(e->is_number, 0);
    pipe_free(&p);
}
END_TEST

/* Programs sema (or the parser's actions) must reject: a phrase of the
   first diagnostic and its position. */
static const struct {
    const char *src;
    unsigned line, col;
    const char *phrase;
} sema_errors[] = {
    /* 0 */ {"out C[n];\nC(\"i\") = X(\"i\");", 2, 10, "unknown tensor 'X'"},
    {"in A[n]; in A[n];", 1, 13, "'A' is already declared"},
    {"in A[n,k], B[m,k];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");", 3, 26,
     "bound to two different extents"},
    {"in A[n,m]; out C[n];\nC(\"i\") = A(\"i\");", 2, 12, "'A' has 2 modes but is indexed with 1 label"},
    {"in A[n]; out C[n,n];\nC(\"i\") = A(\"i\");", 2, 3, "'C' has 2 modes but is indexed with 1 label"},
    /* 5 */ {"in A[n]; A(\"i\") = 1;", 1, 10, "cannot write to 'A'"},
    {"out C[n]; out D[n];\nD(\"i\") = C(\"i\");", 2, 10, "'C' is read before it is written"},
    {"in A[n]; tmp T[n]; out C[n];\nC(\"i\") = T(\"i\");", 2, 10, "'T' is read before it is written"},
    {"out C[n];\nC(\"i\") += 1;", 2, 8, "not been written"},
    {"in A[n]; tmp T[n]; out C[n];\nT(\"i\") -= A(\"i\");\nC(\"i\") = T(\"i\");", 2, 8, "not been written"},
    /* 10 */ {"in A[n]; out C[n,n];\nC(\"i,j\") = A(\"i\");", 2, 6,
              "label 'j' of the target does not appear on the right-hand side"},
    {"in A[n,n]; out C[n,n];\nC(\"i,i\") = A(\"i,i\");", 2, 3, "writes only the diagonal of 'C', which has not been written yet"},
    {"in A[n,n];\nlet T(\"i,i\") = A(\"i,j\");", 2, 10, "label 'i' is repeated in the target"},
    {"in A[4]; out c;\nc = A(\"4\");", 2, 8, "out of range"},
    {"in A[n]; out C[n];\nC(\"1\") = A(\"1\");", 2, 4, "an integer label cannot be written to"},
    {"dim n; out C[n];\nC(\"i\") = n(\"i\");", 2, 10, "'n' is a dim, not a tensor"},
    /* 15 */ {"in A[n]; out C[A];", 1, 16, "not a dim"},
    {"in A[n]; out C[n]; out D[n];\nC(\"i\") = A(\"i\");", 1, 24, "output 'D' is never written"},
    {"sparse L : \"i\" -> \"j\";", 1, 8, "applies to no statement"},
    {"in A[n], B[n]; out C[n];\nC(\"i\") = A(\"i\") ^ B(\"i\");", 2, 19, "the exponent of '^' must be a number"},
    {"in A[n,n]; out c;\nc = A;", 2, 5, "'A' has 2 modes"},
    /* 20 */ {"in A[n]; out C[m];\nC(\"i\") = A(\"i\");", 2, 4, "label 'i' has extent 'n'"},
    {"in A[n]; out C[n];\nC = A(\"i\");", 2, 1, "'C' has 1 mode"},
    {"out c;\nc = y;", 2, 5, "unknown name 'y'"},
    {"in A[n,m]; out d[n];\nd(\"i\") = A(\"i,i\");", 2, 15, "bound to two different extents"},
    {"in A[n]; out C[n];\nlet T(\"i\") = A(\"i\");\nC(\"i\") = T(\"i,j\");", 3, 12, "has 1 mode but is indexed with 2"},
    /* 25 */ {"dim n; in n[3];", 1, 11, "'n' is already declared"},
    {"dim n = 2.5;", 1, 9, "non-negative integer"},
    {"in A[n]; out C[n];\nlet x = A(\"i\");\nlet x = A(\"i\");\nC(\"i\") = x;", 3, 5, "'x' is already declared"},
    {"in A[3]; out C[3];\nC(\"i\") = A(\"i\") + A(\"3\");", 2, 22, "out of range"},
    {"in A[n]; out C[n];\nC(\"i\") = A(\"i\") * B(\"i\");", 2, 19, "unknown tensor 'B'"},
    /* columns count characters: multi-byte labels and a leading tab */
    {"in A[n]; out C[n,n];\nC(\"\xce\xbb,\xce\xbc\") = A(\"\xce\xbb\");", 2, 6,
     "of the target does not appear on the right-hand side"},
    {"in A[n]; out C[n];\n\tC(\"i\") = B(\"i\");", 2, 11, "unknown tensor 'B'"},
    {"in \xce\xbb[n], B[m]; out C[n];\nC(\"i\") = \xce\xbb(\"i\") * B(\"i\");", 2, 22,
     "bound to two different extents"},
    /* 30: the culprit of a stale let is its use, not the whole statement */
    {"inout S[n]; out C[n];\nlet x = S(\"i\");\nS(\"i\") = 1;\nC(\"i\") = x;", 4, 10,
     "let 'x' is used after 'S'"},
};

START_TEST(sema_error_cases)
{
    pipe_t p;
    int r = pipe_run(&p, sema_errors[_i].src, UPTO_SEMA);
    ck_assert_msg(r == -1, "case %d was accepted:\n%s", _i, sema_errors[_i].src);
    ck_assert_ptr_null(p.S);
    const char *out = diag_text(&p.diag);
    char want[64];
    snprintf(want, sizeof want, "t.tx:%u:%u: error: ", sema_errors[_i].line, sema_errors[_i].col);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "case %d: want '%s', got:\n%s", _i, want, out);
    const char *eol = strchr(out, '\n');
    char line[512];
    snprintf(line, sizeof line, "%.*s", eol ? (int)(eol - out) : (int)strlen(out), out);
    ck_assert_msg(strstr(line, sema_errors[_i].phrase), "case %d: no '%s' in '%s'", _i,
                  sema_errors[_i].phrase, line);
    pipe_free(&p);
}
END_TEST

START_TEST(sema_accepts)
{
    /* programs the contract allows: each must pass sema */
    static const char *ok[] = {
        "in A[n,n]; out t;\nt = A(\"i,i\");",                                  /* trace */
        "in A[n,m]; out At[m,n];\nAt(\"j,i\") = A(\"i,j\");",                   /* transpose */
        "in A[n,m], b[m]; out C[n,m];\nC(\"i,j\") = A(\"i,j\") + b(\"j\");",    /* broadcast */
        "out C[n,m];\nC(\"i,j\") = 0;",                                         /* fill */
        "in A[n,m], x[m]; out r[m];\nr(\"j\") = A(\"3,j\") * x(\"j\");",        /* chip */
        "inout S[n]; in A[n,m];\nS(\"i\") += A(\"i,j\");",                      /* accumulate */
        "in s; out t;\nt = s(\"\") * 2;",                                       /* s("") */
        "in A[n]; out C[n];\nC(\"i\") = A(\"i\");\nC(\"i\") += C(\"i\") ^ 2;",  /* += after = */
        "in A[n,k]; out C[n];\nlet T(\"a,b\") = A(\"a,b\");\nC(\"i\") = T(\"i,j\");", /* let renamed */
        "dim k = 2; in A[k,k]; out c;\nc = A(\"1,1\");",                        /* chip in range */
        "in \xce\xbb[n]; out \xce\x94x[n];\n\xce\x94x(\"\xce\xbc\") = \xce\xbb(\"\xce\xbc\");",
        "in A[n]; out k;\nk = A(\"k\");", /* a label and a name are unrelated */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        pipe_t p;
        int r = pipe_run(&p, ok[i], UPTO_SEMA);
        ck_assert_msg(r == 0, "program %zu rejected:\n%s\n%s", i, ok[i], diag_text(&p.diag));
        pipe_free(&p);
    }
}
END_TEST

/* ------------------------------------------------------------------ */

Suite *suite_sema(void)
{
    Suite *s = suite_create("sema");
    TCase *tc = tcase_create("sema");
    tcase_add_test(tc, sema_symbols);
    tcase_add_test(tc, sema_complex_types);
    tcase_add_test(tc, sema_implicit_dims_order);
    tcase_add_test(tc, sema_param_order);
    tcase_add_test(tc, sema_label_extents);
    tcase_add_test(tc, sema_subtree_labels);
    tcase_add_test(tc, sema_accepts);
    tcase_add_loop_test(tc, sema_error_cases, 0, (int)(sizeof sema_errors / sizeof sema_errors[0]));
    suite_add_tcase(s, tc);
    return s;
}
