/*
 * sema.h - the semantic pass's private interface, shared by the sema*.c
 * files and included by nothing else. The public entry points
 * (sema_check, sema_lookup, sema_extent_print, sema_extent_eval,
 * sema_multi_labels) are in tx.h.
 *
 * The pass, by concern:
 *
 *   sema.c         the pass itself: names, declarations, labels,
 *                  expressions, statements, sema_check
 *   sema_extent.c  extent arithmetic (sums, differences, min of dims),
 *                  its printing, and the checks left for run time
 *   sema_linalg.c  the linear-algebra calls and the statements with
 *                  several targets (eigh, qr, svd)
 */
#ifndef TX_SEMA_H
#define TX_SEMA_H

#include <stddef.h>

#include "tx.h"

/* The state of the walk over the statements. */
typedef struct {
    sema_program *S;
    cst_node *multi_call; /* the call on the right of a multi-target statement */
    cst_stmt *stmt;       /* the statement being checked */
    int stmt_no;          /* its number among assignments and lets */
    int *reads;           /* variables read (for let bookkeeping) */
    int nreads, capreads;
    cst_node **deltas;    /* delta("...") nodes of the statement (of the */
    int ndeltas, capdeltas; /* call argument, while one is checked: scoped) */
    int scoped;           /* checking a call argument with labels of its own */
} checker;

/* ---- sema.c ---- */

/* The deltas C collected from FIRST on (those of the statement, FIRST 0,
   or of a call argument checked in a scope of its own since FIRST) have
   every label bound in the current scope; reports the first that is not.
   Forgets them either way. 0 or -1. */
int sema_check_deltas_from(checker *C, int first);

/* Token T's text as a NUL-terminated string in S's arena. */
const char *sema_tok_name(sema_program *S, const tx_token *t);
/* What S is, for messages: "a dim", "an input tensor", ... */
const char *sema_kind_word(const sym *s);
/* Reports NAME, used as a WHAT at SPAN with RANK labels, as unknown: a
   let defined further down, a near miss among the kinds in WANT (a bit
   mask of 1 << sym_kind), or how to declare it. */
void sema_unknown_name(sema_program *S, tx_span span, const char *what, const char *name, unsigned want,
                       int rank);
/* Binds LABEL to extent E in the statement being checked. A label bound
   before must have the same extent: when only run time can tell, a
   run-time check is recorded; when they differ, reports at SPAN (WHERE
   names the use) and returns -1. Returns 0 otherwise. */
int sema_bind_label(checker *C, int label, tx_extent e, tx_span span, const char *where);
/* The value of N, a checked compile-time number expression. */
double sema_eval_number(cst_node *n);
/* Checks argument I of CALL, which must be an expression (not an
   operator, string or list). Returns 0, or -1 after reporting. */
int sema_expect_expr_arg(checker *C, cst_node *call, int i);
/* Checks expression N in the statement being checked: resolves its
   names, binds its labels, folds numbers; sets N->ls, N->is_number and
   N->num. Returns 0, or -1 after reporting. */
int sema_check_expr(checker *C, cst_node *n);
/* The element type N computes in: f32 only if every tensor it reads is
   f32; complex if a complex tensor or an imaginary literal meets it (c128
   for numbers alone); 0 if it reads no tensor and is real (numbers only:
   the type of what they meet). */
dtype sema_expr_dtype(cst_node *n);
/* Checks the labels of target T of tensor NAME: no integers, no repeats;
   adds them to the statement's target labels and, given TENSOR, checks
   them against its extents (TENSOR NULL, a let tensor: the extents come
   from the expression). Returns 0, or -1 after reporting. */
int sema_check_target_labels(checker *C, cst_target *t, const char *name, sym *tensor);

/* ---- sema_extent.c ---- */

/* E as text in BUF[0..N) for a message: a dim quoted ('n'), anything else
   bare (16, n - 1, min(m, n)). */
void sema_describe_extent(sema_program *S, tx_extent e, char *buf, size_t n);
/* A + SIGN * B (SIGN 1 or -1) as an extent, derived extents interned in
   S; (tx_extent){-3, 0} if it cannot be formed (an operand is a min(),
   or more than 4 dims). */
tx_extent sema_ext_add(sema_program *S, tx_extent a, tx_extent b, int sign);
/* K * A, as an extent; (tx_extent){-3} if it cannot be formed. */
tx_extent sema_ext_scale(sema_program *S, tx_extent a, int64_t k);
/* min(A, B) as an extent: A when they are equal, a constant when both
   are, else a derived extent interned in S. */
tx_extent sema_ext_min(sema_program *S, tx_extent a, tx_extent b);
/* Records that A == B (KIND 0) or A <= B (KIND 1) must hold at run time;
   MSG is the error if it does not. */
void sema_runtime_check(sema_program *S, int kind, tx_extent a, tx_extent b, const char *msg);
/* 1 if A and B are equal for sure, 0 if they differ for sure, -1 if only
   run time can tell (one is derived from symbolic dims). */
int sema_ext_same(sema_program *S, tx_extent a, tx_extent b);

/* ---- sema_linalg.c ---- */

/* Checks linear-algebra call N, named FNAME (cholesky, inv, pow, solve,
   eigh, qr, svd, slice): its arguments in a label scope of their own
   (tx(5) §6), then binds the result's labels in the statement. MULTI: N
   is the right side of a statement with several targets, which binds the
   results itself (sema_check_multi). Returns 0, or -1 after reporting. */
int sema_check_la_call(checker *C, cst_node *n, const char *fname, int multi);
/* Checks grad call N, grad(s, X("i,j")) (tx(5) §6.1): s an expression in
   a label scope of its own (summed to a scalar), X an in or inout tensor
   indexed with distinct labels, one per mode, which name the result's
   modes and are bound in the statement with X's extents. Returns 0, or
   -1 after reporting. */
int sema_check_grad(checker *C, cst_node *n);
/* Checks statement ST with several targets, (V("i,e"), w("e")) =
   eigh(A("i,j")) and the like: the call, the new label, each target's
   tensor and labels; marks the targets written. Errors go to the
   diagnostics. */
void sema_check_multi(checker *C, cst_stmt *st);

#endif
