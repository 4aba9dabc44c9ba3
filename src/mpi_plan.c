/*
 * mpi_plan.c - what the MPI target (target_mpi, runtime/mpi.inc) does
 * with each call of an optimised graph on P ranks, and the words it
 * communicates: the section `txc graph --target mpi` prints after the
 * listing. Pure arithmetic on the graph; no MPI here.
 *
 * The rules mirror runtime/mpi.inc: every tensor is replicated; an f64
 * (c128) GEMM of m*n*k >= TX_MPI_GEMM_MIN (default 2^21) runs as pdgemm
 * (pzgemm) on a 2-D block-cyclic grid, others locally on every rank; an
 * f64 matrix function of order >= TX_MPI_LA_MIN (default 256) runs in
 * ScaLAPACK; everything
 * else runs locally on every rank with no message.
 *
 * Volumes are words (elements; a c128 element is two 8-byte words)
 * received per rank, a model:
 *   pdgemm (SUMMA on pr x pc): m*k/pr + k*n/pc for the panels, plus
 *   (P-1)/P * m*n for the MPI_Allgatherv of the pieces that replicates C;
 *   ScaLAPACK factorisations: about n^2/sqrt(P) * log2(P) for the panel
 *   broadcasts (an estimate of the order, not a count), plus the
 *   Allgatherv of each result.
 *
 * After the calls it lists each tensor's distribution: replicated (its
 * words on every rank), and, for the operands and results of the
 * distributed calls, the block-cyclic pieces each rank holds during them.
 */
#include <math.h>
#include <stdio.h>

#include "tx.h"

#define GEMM_MIN 2097152.0
#define LA_MIN 256.0

/* The product of the extents of labels G in value X. */
static double group_size(const graph *g, const g_value *x, const int *G, int n)
{
    double s = 1;
    for (int i = 0; i < n; i++)
        for (int m = 0; m < x->rank; m++)
            if (x->label[m] == G[i]) {
                s *= graph_extent_estimate(g, x->ext[m]);
                break;
            }
    return s;
}

/* The grid the runtime makes for P ranks. */
static void grid(int p, int *pr, int *pc)
{
    *pr = 1;
    for (int d = 1; d * d <= p; d++)
        if (p % d == 0)
            *pr = d;
    *pc = p / *pr;
}

/* Words each rank receives replicating N words of pieces (Allgatherv). */
static double gather_words(double n, int p)
{
    return p > 1 ? (double)(p - 1) / p * n : 0;
}

/* Whether V is a BLAS call the runtime runs as pdgemm (f64) or pzgemm
   (c128) on P ranks. */
static int is_pdgemm(const graph *g, const g_value *v, int p)
{
    const blas_plan *b = v->blas;
    if (!b || b->nm <= 0 || b->nn <= 0 || p <= 1 || (v->dt != DT_F64 && v->dt != DT_C128))
        return 0;
    double m = group_size(g, v, b->m, b->nm), n = group_size(g, v, b->n, b->nn);
    return m * n * group_size(g, b->a, b->k, b->nk) >= GEMM_MIN;
}

/* Whether V is a matrix function the runtime runs in ScaLAPACK on P ranks. */
static int is_scalapack(const graph *g, const g_value *v, int p)
{
    if (v->op != OP_LINALG || p <= 1)
        return 0;
    const g_value *a = v->in[0];
    double n = graph_extent_estimate(g, a->ext[0]), n2 = a->rank > 1 ? graph_extent_estimate(g, a->ext[1]) : 1;
    return (n < n2 ? n : n2) >= LA_MIN && v->la != LA_POW && v->la != LA_GAPS &&
           !(v->la == LA_EIGH && v->nin == 2) && v->dt == DT_F64;
}

/* The tensor a call's operand X reads: X, or the value X views. */
static const g_value *base_of(const g_value *x)
{
    while (x && x->op == OP_INDEX && x->nin > 0)
        x = x->in[0];
    return x;
}

/* Distributed storage (runtime/mpi.inc's tx_mpi_alloc): which tensors the
   emitter may hold by rows of their first mode, and which statements read
   and write them without gathering. The runtime distributes a candidate
   only on more than one rank and from TX_MPI_DIST_MIN bytes; a statement
   these rules do not clear gathers the candidates it touches
   (tx_mpi_whole), so the rules decide cost, never correctness. */

int mpi_plan_rows_value(const g_value *v)
{
    return !v->dead && !v->inlined && v->rank >= 2 && (v->dt == DT_F64 || v->dt == DT_C128) && !v->nmaps &&
           (v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE) &&
           !(v->blas && v->blas->store);
}

int mpi_plan_rows_var(const sema_program *S, int var)
{
    const sym *t = S->vars[var];
    return (t->io == IO_TMP || t->io == IO_LET) && t->rank >= 2 && (t->dt == DT_F64 || t->dt == DT_C128);
}

/* Whether tensor B (a value read in memory: computed, stored or input)
   may be distributed. */
static int rows_tensor(const graph *g, const g_value *b)
{
    if (b->op == OP_STORE || b->op == OP_INPUT)
        return mpi_plan_rows_var(g->S, b->var);
    return mpi_plan_rows_value(b);
}

/* Whether every distributable tensor X's loop nest reads is read at row
   R of its first mode (the others are whole on every rank). */
static int rows_leaves(const graph *g, const g_value *x, int R)
{
    if (x->op == OP_SCAN || x->op == OP_SLICE || x->nmaps)
        return 0;
    for (int i = 0; i < x->nin; i++) {
        const g_value *w = x->in[i];
        if (w->inlined) {
            if (!rows_leaves(g, w, R))
                return 0;
        } else if (w->op == OP_INDEX) {
            if (rows_tensor(g, w->in[0]) && (w->in[0]->rank == 0 || w->idx_label[0] != R))
                return 0;
        } else if (w->op != OP_CONST && w->rank > 0 && rows_tensor(g, w) &&
                   (w->op == OP_STORE || w->op == OP_INPUT || w->label[0] != R))
            return 0;
    }
    return 1;
}

int mpi_plan_rows_kernel(const graph *g, const g_value *v, int R)
{
    if (R < 0 || v->rank < 1 || v->nmaps)
        return 0;
    if (v->op == OP_STORE) {
        for (int m = 0; m < v->rank; m++)
            if (v->store_label[m] < 0)
                return 0; /* a chip: not the whole tensor */
        if (v->store_label[0] != R)
            return 0;
    } else if (v->label[0] != R || v->op == OP_INDEX || v->op == OP_LINALG || v->op == OP_PART)
        return 0;
    return rows_leaves(g, v, R);
}

/* The tensor V sums whole, if V is the sum of every element of one
   tensor that may be distributed, else NULL. */
static const g_value *rows_sum_of(const graph *g, const g_value *v);

int mpi_plan_rows_sum(const graph *g, const g_value *v)
{
    return rows_sum_of(g, v) != NULL;
}

/* Whether operand X of a GEMM is a whole tensor (the base itself, or a
   view of every element with no fixed index). */
static int whole_operand(const graph *g, const g_value *x)
{
    const g_value *b = base_of(x);
    if (x == b)
        return 1;
    if (x->op != OP_INDEX || x->in[0] != b)
        return 0;
    for (int m = 0; m < b->rank; m++)
        if (x->idx_label[m] < 0)
            return 0;
    return graph_value_elements(g, x) == graph_value_elements(g, b);
}

static const g_value *rows_sum_of(const graph *g, const g_value *v)
{
    if (v->op != OP_CONTRACT || v->rank != 0 || v->nin != 1 || v->coef_in[0] != 1 || v->blas || v->nmaps ||
        (v->dt != DT_F64 && v->dt != DT_C128))
        return NULL;
    const g_value *x = v->in[0], *b = base_of(x);
    if (x->inlined || !b || b->dt != v->dt || !rows_tensor(g, b) || !whole_operand(g, x))
        return NULL;
    for (int i = 0; x != b && i < b->rank; i++)
        for (int j = 0; j < i; j++)
            if (x->idx_label[i] == x->idx_label[j])
                return NULL; /* a diagonal */
    return b;
}

int mpi_plan_gemm_direct(const graph *g, const g_value *v)
{
    const blas_plan *b = v->blas;
    return b && b->nm > 0 && b->nn > 0 && b->nb == 0 && b->nl == 0 && (v->dt == DT_F64 || v->dt == DT_C128) &&
           whole_operand(g, b->a) && whole_operand(g, b->b);
}

/* The distribution section: every materialised tensor, its words on each
   rank, and the distributed calls it is a piece of. */
static void print_tensors(const graph *g, int p, int pr, int pc, tx_buf *out)
{
    buf_printf(out, "# MPI tensors (words per rank):\n");
    for (int k = 0; k < g->n; k++) {
        const g_value *v = g->v[k];
        if (v->dead || v->inlined || v->op == OP_CONST || v->op == OP_INDEX || (v->blas && v->blas->store))
            continue;
        if (v->op == OP_LINALG && v->nout > 1)
            continue; /* its parts are listed */
        double w = graph_value_elements(g, v);
        if (v->op == OP_INPUT || v->op == OP_STORE)
            buf_printf(out, "#   %s (%%%d, %s)", g->S->vars[v->var]->name, v->id,
                       v->op == OP_INPUT ? "input" : "stored");
        else
            buf_printf(out, "#   %%%d (intermediate)", v->id);
        buf_printf(out, ": %.4g words, replicated (%.4g on every rank)", w, w);
        int first = 1;
        for (int j = 0; j < g->n; j++) {
            const g_value *u = g->v[j];
            if (u->dead)
                continue;
            int used = 0;
            if (is_pdgemm(g, u, p))
                used = u == v || (u->blas->store && u->blas->store == v) || base_of(u->blas->a) == v || base_of(u->blas->b) == v;
            else if (is_scalapack(g, u, p))
                used = base_of(u->in[0]) == v || (u->nin > 1 && base_of(u->in[1]) == v) || u == v ||
                       (v->op == OP_PART && v->in[0] == u);
            if (used) {
                buf_printf(out, "%s%%%d", first ? "; block-cyclic on the grid inside " : ", ", u->id);
                first = 0;
            }
        }
        if (!first)
            buf_printf(out, " (~%.4g words per rank there)", w / (pr * pc));
        buf_printf(out, "\n");
    }
}

void mpi_plan_print(const graph *g, int p, tx_buf *out)
{
    static const char *la_name[] = {"?", "pdpotrf", "pdgetrf+pdgetri", "(pow: local)", "pdgesv", "pdsyevd",
                                    "pdgeqrf+pdorgqr", "pdgesvd", "?"};
    int pr, pc;
    grid(p, &pr, &pc);
    buf_printf(out, "# MPI on %d rank%s (grid %dx%d): every tensor replicated; words received per rank\n", p,
               p == 1 ? "" : "s", pr, pc);
    double total = 0;
    for (int k = 0; k < g->n; k++) {
        const g_value *v = g->v[k];
        if (v->dead || v->inlined || v->op == OP_INPUT || v->op == OP_CONST || v->op == OP_INDEX ||
            v->op == OP_PART || (v->op == OP_STORE && v->absorbed))
            continue;
        double words = 0;
        buf_printf(out, "#   %%%d (statement %d, line %u): ", v->id, v->stmt + 1, v->span.line);
        const blas_plan *b = v->blas;
        if (b && b->nm > 0 && b->nn > 0) {
            const g_value *c = b->store ? b->store : v;
            double m = group_size(g, v, b->m, b->nm), n = group_size(g, v, b->n, b->nn);
            double kk = group_size(g, b->a, b->k, b->nk), nb = group_size(g, v, b->batch, b->nb);
            for (int i = 0; i < b->nl; i++) { /* the plan's loops: one call each, like batches */
                double in_a = group_size(g, b->a, &b->loop[i], 1);
                nb *= in_a > 1 ? in_a : group_size(g, b->b, &b->loop[i], 1);
            }
            (void)c;
            if (is_pdgemm(g, v, p)) {
                double summa = m * kk / pr + kk * n / pc, coll = gather_words(m * n, p);
                words = nb * (summa + coll);
                buf_printf(out, "%s %.0fx%.0fx%.0f%s, A, B, C block-cyclic on %dx%d: %.4g words "
                           "(panels %.4g, replicating C %.4g)\n", v->dt == DT_C128 ? "pzgemm" : "pdgemm", m, n, kk, nb > 1 ? " per batch" : "", pr, pc,
                           words, nb * summa, nb * coll);
                if (nb > 1)
                    buf_printf(out, "#       %.0f batches, one pdgemm each\n", nb);
            } else
                buf_printf(out, "%cgemm %.0fx%.0fx%.0f local on every rank (operands replicated%s): 0 words\n",
                           "sdcz"[v->dt == DT_F32 ? 0 : v->dt == DT_F64 ? 1 : v->dt == DT_C64 ? 2 : 3], m, n, kk,
                           p == 1 ? "" : v->dt == DT_F64 || v->dt == DT_C128 ? ", below TX_MPI_GEMM_MIN"
                                                                              : ", no single-precision PBLAS path");
        } else if (b) {
            buf_printf(out, "%s local on every rank (operands replicated): 0 words\n",
                       b->nm == 0 && b->nn == 0 ? "dot" : "gemv");
        } else if (v->op == OP_LINALG) {
            const g_value *a = v->in[0];
            double n = graph_extent_estimate(g, a->ext[0]), n2 = a->rank > 1 ? graph_extent_estimate(g, a->ext[1])
                                                                           : 1;
            double order = n < n2 ? n : n2;
            int dist = is_scalapack(g, v, p);
            if (dist) {
                double panels = n * n2 / sqrt((double)p) * log2((double)p);
                double result = 0;
                for (int j = k; j < g->n; j++) /* the results: the node, or its parts */
                    if (g->v[j] == v ? v->nout == 1 : (g->v[j]->op == OP_PART && g->v[j]->in[0] == v))
                        result += graph_value_elements(g, g->v[j]);
                words = panels + gather_words(result, p);
                buf_printf(out, "%s order %.0f, block-cyclic on %dx%d: %.4g words (panels ~%.4g, replicating "
                           "the result %.4g)\n", la_name[v->la], order, pr, pc, words, panels,
                           gather_words(result, p));
            } else
                buf_printf(out, "%s local on every rank (replicated%s): 0 words\n",
                           v->la == LA_POW || v->la == LA_GAPS ? graph_la_name(v->la) : la_name[v->la],
                           p == 1 ? "" : v->la == LA_POW || v->la == LA_GAPS || v->nin == 2 || v->dt != DT_F64
                                         ? ", no ScaLAPACK path"
                                                                                             : ", below TX_MPI_LA_MIN");
        } else {
            buf_printf(out, "%s local on every rank (replicated): 0 words\n",
                       v->op == OP_STORE ? "store" : graph_op_name(v->op));
        }
        total += words;
    }
    buf_printf(out, "# MPI total: %.4g words received per rank (%.4g MB at 8 bytes)\n", total, total * 8 / 1e6);
    print_tensors(g, p, pr, pc, out);
}
