/*
 * check_internal.c — the library survives its own bugs (tensorexpr(3),
 * TX_ERR_INTERNAL). The testing hook TX_DEBUG_FAIL_AFTER_PASS makes the
 * graph check after a stage fail, as a bug in that stage would: every
 * entry point that compiles (tx_compile, tx_run, tx_emit, tx_graph,
 * tx_graph_after) must return TX_ERR_INTERNAL with "internal error:
 * CONDITION (FILE:LINE)", free that compilation, and leave the context and
 * its programs working: the same context then compiles and runs programs
 * correctly. (Leaks show under `make check SANITIZE=1` and valgrind.)
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorexpr.h"

static const char MATMUL[] = "in  A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n";

static void hook(const char *stage)
{
    if (stage)
        ck_assert_int_eq(setenv("TX_DEBUG_FAIL_AFTER_PASS", stage, 1), 0);
    else
        ck_assert_int_eq(unsetenv("TX_DEBUG_FAIL_AFTER_PASS"), 0);
}

/* MSG is "internal error: ... after STAGE ... (src/FILE.c:LINE)". */
static void internal_message_at(const char *msg, const char *after, int line)
{
    ck_assert_msg(strncmp(msg, "internal error: ", 16) == 0, "line %d: message %s", line, msg);
    ck_assert_msg(strstr(msg, after) != NULL, "line %d: message lacks '%s': %s", line, after, msg);
    const char *at = strrchr(msg, '(');
    ck_assert_msg(at != NULL, "line %d: no (file:line) in %s", line, msg);
    char file[64];
    int l = 0, n = 0;
    ck_assert_msg(sscanf(at, "(src/%63[a-z_].c:%d)%n", file, &l, &n) == 2 && l > 0 && at[n] == 0,
                  "line %d: no (src/FILE.c:LINE) at the end of %s", line, msg);
}
#define internal_message(msg, after) internal_message_at((msg), (after), __LINE__)

/* Compiles MATMUL in C, runs it on 2x3 times 3x2 and checks the product. */
static void matmul_works_at(tx_ctx *c, int line)
{
    tx_program *p = tx_compile(c, MATMUL, strlen(MATMUL), "mm.tx");
    ck_assert_msg(p != NULL, "line %d: %s", line, tx_errmsg(c));
    double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {0.5, -1, 2, 0, 1, 1}, C[4] = {0};
    ck_assert_int_eq(tx_bind(p, "A", A, 2, (int64_t[]){2, 3}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "B", B, 2, (int64_t[]){3, 2}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", C, 2, (int64_t[]){2, 2}), TX_OK);
    int st = tx_run(p);
    ck_assert_msg(st == TX_OK, "line %d: tx_run %d: %s", line, st, tx_errmsg(c));
    ck_assert_msg(C[0] == 7.5 && C[1] == 2 && C[2] == 18 && C[3] == 2, "line %d: C = %g %g %g %g", line, C[0],
                  C[1], C[2], C[3]);
    tx_program_free(p);
}
#define matmul_works(c) matmul_works_at((c), __LINE__)

START_TEST(internal_status)
{
    ck_assert_int_eq(TX_ERR_INTERNAL, 7);
    ck_assert_str_eq(tx_strerror(TX_ERR_INTERNAL), "internal error (a bug in tensorexpr)");
}
END_TEST

/* tx_compile fails after each stage in turn, then the same context works. */
START_TEST(internal_compile)
{
    static const char *stages[] = {"lower", "delta", "cse", "fold", "dce", "order", "blas", "fuse"};
    tx_ctx *c = tx_new();
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < (int)(sizeof stages / sizeof stages[0]); i++) {
        hook(stages[i]);
        tx_program *p = tx_compile(c, MATMUL, strlen(MATMUL), "mm.tx");
        ck_assert_msg(p == NULL, "stage %s: compiled", stages[i]);
        ck_assert_int_eq(tx_errcode(c), TX_ERR_INTERNAL);
        char after[64];
        snprintf(after, sizeof after, i ? "after pass %s" : "after lowering", stages[i]);
        internal_message(tx_errmsg(c), after);
        hook(NULL);
        matmul_works(c);
        ck_assert_int_eq(tx_errcode(c), TX_OK);
    }
    /* a stage that the level does not run does not fail */
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_OPT_LEVEL, 1), TX_OK);
    hook("blas");
    matmul_works(c);
    hook(NULL);
    tx_free(c);
}
END_TEST

/* tx_run fails while it compiles for the extents; nothing has run; the
   next tx_run compiles again and runs. */
START_TEST(internal_run)
{
    tx_ctx *c = tx_new();
    tx_program *p = tx_compile(c, MATMUL, strlen(MATMUL), "mm.tx");
    ck_assert_msg(p != NULL, "%s", tx_errmsg(c));
    double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {0.5, -1, 2, 0, 1, 1}, C[4] = {-1, -1, -1, -1};
    ck_assert_int_eq(tx_bind(p, "A", A, 2, (int64_t[]){2, 3}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "B", B, 2, (int64_t[]){3, 2}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", C, 2, (int64_t[]){2, 2}), TX_OK);
    hook("fuse");
    for (int k = 0; k < 3; k++) { /* again and again: each failure is freed */
        ck_assert_int_eq(tx_run(p), TX_ERR_INTERNAL);
        ck_assert_int_eq(tx_errcode(c), TX_ERR_INTERNAL);
        internal_message(tx_errmsg(c), "after pass fuse");
        ck_assert(C[0] == -1 && C[3] == -1); /* nothing ran */
    }
    hook(NULL);
    ck_assert_msg(tx_run(p) == TX_OK, "%s", tx_errmsg(c));
    ck_assert(C[0] == 7.5 && C[1] == 2 && C[2] == 18 && C[3] == 2);
    /* compiled code is kept: the hook no longer matters for these extents */
    hook("lower");
    C[0] = 0;
    ck_assert_msg(tx_run(p) == TX_OK, "%s", tx_errmsg(c));
    ck_assert(C[0] == 7.5);
    /* new extents compile again, and fail again */
    double A2[3] = {1, 2, 3}, C2[2];
    ck_assert_int_eq(tx_bind(p, "A", A2, 2, (int64_t[]){1, 3}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", C2, 2, (int64_t[]){1, 2}), TX_OK);
    ck_assert_int_eq(tx_run(p), TX_ERR_INTERNAL);
    internal_message(tx_errmsg(c), "after lowering");
    hook(NULL);
    ck_assert_msg(tx_run(p) == TX_OK, "%s", tx_errmsg(c));
    ck_assert(C2[0] == 7.5 && C2[1] == 2);
    matmul_works(c); /* and the context compiles another program */
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* The emitter fails half way (its buffers allocated, kernels written):
   tx_run and tx_emit return TX_ERR_INTERNAL, free everything (LeakSanitizer
   under SANITIZE=1), and work once the hook is gone. */
START_TEST(internal_in_emitter)
{
    tx_ctx *c = tx_new();
    tx_program *p = tx_compile(c, MATMUL, strlen(MATMUL), "mm.tx");
    ck_assert_msg(p != NULL, "%s", tx_errmsg(c));
    double A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {0.5, -1, 2, 0, 1, 1}, C[4] = {-1, -1, -1, -1};
    ck_assert_int_eq(tx_bind(p, "A", A, 2, (int64_t[]){2, 3}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "B", B, 2, (int64_t[]){3, 2}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", C, 2, (int64_t[]){2, 2}), TX_OK);
    hook("emit");
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(tx_run(p), TX_ERR_INTERNAL);
        internal_message(tx_errmsg(c), "TX_DEBUG_FAIL_AFTER_PASS=emit");
        ck_assert_ptr_null(tx_emit_c(p, NULL));
        ck_assert_int_eq(tx_errcode(c), TX_ERR_INTERNAL);
        ck_assert(C[0] == -1);
    }
    hook(NULL);
    ck_assert_msg(tx_run(p) == TX_OK, "%s", tx_errmsg(c));
    ck_assert(C[0] == 7.5 && C[3] == 2);
    char *src = tx_emit_c(p, NULL);
    ck_assert_ptr_nonnull(src);
    free(src);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

/* tx_emit, tx_graph and tx_graph_after fail the same way and work after. */
START_TEST(internal_emit_graph)
{
    tx_ctx *c = tx_new();
    tx_program *p = tx_compile(c, MATMUL, strlen(MATMUL), "mm.tx");
    ck_assert_msg(p != NULL, "%s", tx_errmsg(c));
    hook("dce");
    ck_assert_ptr_null(tx_emit_c(p, NULL));
    ck_assert_int_eq(tx_errcode(c), TX_ERR_INTERNAL);
    internal_message(tx_errmsg(c), "after pass dce");
    tx_emit_options o = {.header = 1};
    ck_assert_ptr_null(tx_emit(p, &o, NULL));
    ck_assert_int_eq(tx_errcode(c), TX_ERR_INTERNAL);
    ck_assert_ptr_null(tx_graph(p, 0, NULL));
    ck_assert_int_eq(tx_errcode(c), TX_ERR_INTERNAL);
    ck_assert_ptr_null(tx_graph_after(p, "all", 1, NULL));
    internal_message(tx_errmsg(c), "after pass dce");
    /* a stage before the hook's is listed: the dump stops before dce runs */
    char *g = tx_graph_after(p, "cse", 0, NULL);
    ck_assert_msg(g != NULL, "%s", tx_errmsg(c));
    ck_assert(strncmp(g, "# after pass cse\n", 17) == 0);
    free(g);
    hook(NULL);
    char *src = tx_emit_c(p, NULL);
    ck_assert_msg(src != NULL && strstr(src, "int mm(") != NULL, "%s", tx_errmsg(c));
    free(src);
    g = tx_graph(p, 0, NULL);
    ck_assert_msg(g != NULL && strstr(g, "(BLAS gemm") != NULL, "%s", tx_errmsg(c));
    free(g);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("internal");
    TCase *tc = tcase_create("recovery");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, internal_status);
    tcase_add_test(tc, internal_compile);
    tcase_add_test(tc, internal_run);
    tcase_add_test(tc, internal_in_emitter);
    tcase_add_test(tc, internal_emit_graph);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
