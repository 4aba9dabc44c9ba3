/*
 * unit.h — what the unit-test suites of tests/unit/ share: one Suite
 * constructor per compiler phase (tests/unit/check_<phase>.c, run by
 * main.c) and the helpers more than one suite uses (helpers.c).
 */
#ifndef TX_UNIT_H
#define TX_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"

/* one suite per phase; the name in quotes is the suite's name for
   CK_RUN_SUITE */
Suite *suite_lexer(void);  /* "lexer"   check_lexer.c  */
Suite *suite_diag(void);   /* "diag"    check_diag.c   */
Suite *suite_cst(void);    /* "cst"     check_cst.c    */
Suite *suite_sema(void);   /* "sema"    check_sema.c   */
Suite *suite_graph(void);  /* "graph"   check_graph.c  */
Suite *suite_mangle(void); /* "mangle"  check_mangle.c */
Suite *suite_emit(void);   /* "emit"    check_emit.c   */

/* ---- helpers (helpers.c) ---- */

/* D's diagnostics so far ("" if none). */
const char *diag_text(const tx_diag *d);

/* The whole front end (and optionally lowering) over one program. */
typedef struct {
    tx_arena *a;
    tx_source src;
    tx_diag diag;
    cst_program *cst;
    sema_program *S;
    graph *g;
} pipe_t;

enum { UPTO_PARSE = 1, UPTO_SEMA = 2, UPTO_LOWER = 3 };

/* Runs the phases up to UPTO over TEXT; returns 0 if each succeeded. */
int pipe_run(pipe_t *p, const char *text, int upto);
void pipe_free(pipe_t *p);
/* Runs the phases and fails the test with the diagnostics if any failed. */
void pipe_ok(pipe_t *p, const char *text, int upto);

/* The id of label NAME in P, or -1. */
int label_id(const cst_program *P, const char *name);
/* The assignment-like statement number K (0-based) among STMT_ASSIGN,
   STMT_LET, STMT_LET_TENSOR. */
cst_stmt *nth_stmt(cst_program *P, stmt_kind kind, int k);
/* The label set {A, B}; a negative label is left out. */
labelset set_of(int a, int b);
/* Whether S is a plain ASCII C identifier ([A-Za-z_][A-Za-z0-9_]*). */
int is_c_ident(const char *s);

#endif
