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
 */
#ifndef TX_SEMA_H
#define TX_SEMA_H

#include <stddef.h>

#include "tx.h"

/* ---- sema_extent.c ---- */

/* E as text in BUF[0..N) for a message: a dim quoted ('n'), anything else
   bare (16, n - 1, min(m, n)). */
void sema_describe_extent(sema_program *S, tx_extent e, char *buf, size_t n);
/* A + SIGN * B (SIGN 1 or -1) as an extent, derived extents interned in
   S; (tx_extent){-3, 0} if it cannot be formed (an operand is a min(),
   or more than 4 dims). */
tx_extent sema_ext_add(sema_program *S, tx_extent a, tx_extent b, int sign);
/* min(A, B) as an extent: A when they are equal, a constant when both
   are, else a derived extent interned in S. */
tx_extent sema_ext_min(sema_program *S, tx_extent a, tx_extent b);
/* Records that A == B (KIND 0) or A <= B (KIND 1) must hold at run time;
   MSG is the error if it does not. */
void sema_runtime_check(sema_program *S, int kind, tx_extent a, tx_extent b, const char *msg);
/* 1 if A and B are equal for sure, 0 if they differ for sure, -1 if only
   run time can tell (one is derived from symbolic dims). */
int sema_ext_same(sema_program *S, tx_extent a, tx_extent b);

#endif
