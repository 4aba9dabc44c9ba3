/*
 * main.c — the unit tests of the compiler's phases: one Check suite per
 * phase, each in its own file, calling the internal functions of tx.h
 * directly. Built as the one binary build/check_unit (make build/check_unit;
 * tests/run_all.sh runs it under make check).
 *
 *   suite   file             test cases  what it covers
 *   lexer   check_lexer.c    tokens,     lex_init / lex_next / lex_label /
 *                            errors      lex_keyword / lex_kind_name
 *   diag    check_diag.c     diag        diag_error / diag_note / span_join / span_at
 *   cst     check_cst.c      cst         parse_program: the let DAG,
 *                                        index-string splitting, syntax errors
 *   sema    check_sema.c     sema        sema_check: symbols, dims, parameter
 *                                        order, label extents, errors
 *   graph   check_graph.c    graph       lower_program + graph_check (and
 *                                        corrupted graphs), graph_print
 *   mangle  check_mangle.c   mangle      mangle_name: injective, [A-Za-z0-9_],
 *                                        never a leading digit
 *   emit    check_emit.c     emit        emit_c: no .tx name reaches the C
 *                                        source unmangled; the C compiles
 *
 * Helpers more than one suite uses are in helpers.c, declared in unit.h.
 *
 * Running part of it (Check's own environment variables):
 *
 *   build/check_unit                           every suite
 *   CK_RUN_SUITE=lexer build/check_unit        one suite (a name above)
 *   CK_RUN_CASE=errors build/check_unit        one test case, in whichever
 *                                              suite has it (lexer's errors)
 *   CK_RUN_SUITE=lexer CK_RUN_CASE=tokens build/check_unit
 *   CK_VERBOSITY=verbose build/check_unit      a line per test
 *   CK_FORK=no build/check_unit                no fork per test (for gdb)
 *
 * To add a phase: write tests/unit/check_<phase>.c with one function
 * Suite *suite_<phase>(void), declare it in unit.h and list it below; the
 * Makefile builds every .c file of tests/unit into build/check_unit.
 */
#include "unit.h"

static Suite *(*const suites[])(void) = {
    suite_lexer, suite_diag, suite_cst, suite_sema, suite_graph, suite_mangle, suite_emit,
};

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY, or CK_NORMAL */
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
