/*
 * check_profile.c — the calls of a compiled program (tx_call_count,
 * tx_call_get; txc run --profile): which calls a program makes, their
 * flops and bytes for the run's extents, and their times with
 * TX_OPTION_TIMING.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tensorexpr.h"

enum { N = 60, K = 50, M = 40 };

static const char *program = "in  A[n,k], B[k,m], x[m];\n"
                             "out C[n,m], y[n], s;\n"
                             "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n"
                             "y(\"i\") = tanh(C(\"i,j\")) * x(\"j\") + 1;\n"
                             "s = exp(y(\"i\") / 100);\n";

static double A[N * K], B[K * M], x[M], C[N * M], y[N], s;

static tx_program *compiled(tx_ctx *c)
{
    tx_program *p = tx_compile(c, program, strlen(program), "calls.tx");
    ck_assert_msg(p != NULL, "%s", tx_errmsg(c));
    for (int i = 0; i < N * K; i++)
        A[i] = (i % 7) * 0.125;
    for (int i = 0; i < K * M; i++)
        B[i] = (i % 5) * 0.25 - 0.5;
    for (int i = 0; i < M; i++)
        x[i] = i * 0.01;
    ck_assert_int_eq(tx_bind(p, "A", A, 2, (int64_t[]){N, K}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "B", B, 2, (int64_t[]){K, M}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "x", x, 1, (int64_t[]){M}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", C, 2, (int64_t[]){N, M}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "y", y, 1, (int64_t[]){N}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "s", &s, 0, NULL), TX_OK);
    return p;
}

START_TEST(calls_with_times)
{
    tx_ctx *c = tx_new();
    ck_assert_int_eq(tx_set_option(c, TX_OPTION_TIMING, 1), TX_OK);
    tx_program *p = compiled(c);
    tx_call_info info;
    ck_assert_int_eq(tx_call_count(p), 0); /* nothing compiled yet */
    ck_assert_int_eq(tx_call_get(p, 0, &info), TX_ERR_ARG);
    ck_assert_int_eq(tx_run(p), TX_OK);
    int n = tx_call_count(p);
    ck_assert_int_ge(n, 3);
    int gemm = 0;
    double per_stmt[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(tx_call_get(p, i, &info), TX_OK);
        ck_assert(info.stmt >= 0 && info.stmt < 3);
        ck_assert_int_eq(info.line, info.stmt + 3);
        ck_assert(info.seconds >= 0 && info.flops >= 0 && info.bytes > 0);
        ck_assert_ptr_nonnull(info.kind);
        ck_assert_ptr_nonnull(info.op);
        if (strcmp(info.kind, "gemm") == 0) {
            gemm++;
            ck_assert_int_eq(info.stmt, 0);
            ck_assert_double_eq(info.flops, 2.0 * N * K * M); /* multiply and add */
            ck_assert_str_eq(info.op, "contract");
        }
        per_stmt[info.stmt] += info.seconds;
    }
    ck_assert_int_eq(gemm, 1);
    /* a statement's time covers its calls' */
    for (int st = 0; st < 3; st++) {
        double sec;
        ck_assert_int_eq(tx_timing(p, st, &sec, NULL), TX_OK);
        ck_assert_msg(per_stmt[st] <= sec + 1e-6, "statement %d: calls %g s, statement %g s", st, per_stmt[st], sec);
    }
    ck_assert_int_eq(tx_call_get(p, n, &info), TX_ERR_ARG);
    ck_assert_int_eq(tx_call_get(p, -1, &info), TX_ERR_ARG);
    ck_assert_int_eq(tx_call_get(p, 0, NULL), TX_ERR_ARG);
    ck_assert_int_eq(tx_call_count(NULL), 0);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

START_TEST(calls_without_times)
{
    tx_ctx *c = tx_new();
    tx_program *p = compiled(c);
    ck_assert_int_eq(tx_run(p), TX_OK);
    tx_call_info info;
    for (int i = 0; i < tx_call_count(p); i++) {
        ck_assert_int_eq(tx_call_get(p, i, &info), TX_OK);
        ck_assert(info.seconds == 0);
    }
    /* new extents compile again: the table follows the new code */
    static double A2[2 * K], C2[2 * M], y2[2];
    ck_assert_int_eq(tx_bind(p, "A", A2, 2, (int64_t[]){2, K}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "C", C2, 2, (int64_t[]){2, M}), TX_OK);
    ck_assert_int_eq(tx_bind(p, "y", y2, 1, (int64_t[]){2}), TX_OK);
    ck_assert_int_eq(tx_run(p), TX_OK);
    ck_assert_int_ge(tx_call_count(p), 3);
    tx_program_free(p);
    tx_free(c);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_add_test(tc, calls_with_times);
    tcase_add_test(tc, calls_without_times);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
