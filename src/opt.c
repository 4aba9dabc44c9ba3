/*
 * opt.c — the optimiser: one function that lists the passes in the order
 * they run, with graph_check between them (QBE's main.c). Each pass lives
 * in a file of its own (pass_*.c) as it is added.
 *
 * Levels: -O0 runs no pass; -O1 and -O2 run the list below (each pass
 * names the lowest level it runs at).
 */
#include <stdio.h>

#include "tx.h"

typedef struct {
    const char *name;
    int min_level;
    void (*run)(graph *g);
} pass;

/* The passes, in order. The graph as lowered is already correct; passes
   only make it cheaper. */
static const pass passes[] = {
    {"cse", 1, pass_cse},     /* one value for each distinct computation */
    {"fold", 1, pass_fold},   /* constant operands into scale factors */
    {"dce", 1, pass_dce},     /* drop values nothing uses */
    {"order", 1, pass_order}, /* n-ary contractions into the cheapest pairwise order */
    {"blas", 1, pass_blas},   /* GEMM/GEMV/DOT-shaped contractions to BLAS calls */
    {"fuse", 1, pass_fuse},   /* elementwise chains into their users' loops */
    {NULL, 0, NULL},
};

int opt_run(graph *g, int level, char *msg, size_t msglen)
{
    if (graph_check(g, msg, msglen) < 0)
        return -1;
    for (const pass *p = passes; p->name; p++) {
        if (level < p->min_level)
            continue;
        p->run(g);
        char inner[400];
        if (graph_check(g, inner, sizeof inner) < 0) {
            snprintf(msg, msglen, "after pass %s: %s", p->name, inner);
            return -1;
        }
    }
    return 0;
}
