/*
 * mpi_plan.c - what the MPI target (target_mpi, runtime/mpi.inc) does
 * with each call of an optimised graph on P ranks, and the words it
 * communicates: the section `txc graph --target mpi` prints after the
 * listing. Pure arithmetic on the graph; no MPI here.
 *
 * The rules mirror runtime/mpi.inc: a tensor or an intermediate cleared
 * by mpi_plan_rows_value/_var (two modes or more, any element type; an input
 * or output as txc run --mpi passes it, FN_rows) is held by rows of its first mode from TX_MPI_DIST_MIN
 * bytes (default 1 MiB), and the emitter asks the predicates below which
 * statements take such tensors as they are (GEMMs of whole tensors, loop
 * nests by rows, whole sums; the rest gather them); a GEMM of whole
 * tensors runs by rows, or on the grid with its distributed tensors moved
 * by pdgemr2d when that receives fewer words (rows_gemm_of). Among replicated
 * operands, a GEMM of m*n*k >= TX_MPI_GEMM_MIN (default 2^21) runs as
 * pdgemm, pzgemm, psgemm or pcgemm (f64, c128, f32, c64) on a 2-D
 * block-cyclic grid, others locally on every rank; a matrix function of
 * order >= TX_MPI_LA_MIN (default 256) runs in ScaLAPACK (p?potrf, ...,
 * of its element type); everything else runs locally on every rank with
 * no message.
 *
 * Volumes are words (elements; a complex element is two words, of 8
 * bytes in c128, of 4 in c64 and f32)
 * received per rank, a model:
 *   pdgemm (SUMMA on pr x pc): m*k/pr + k*n/pc for the panels, plus
 *   (P-1)/P * m*n for the MPI_Allgatherv of the pieces that replicates C;
 *   ScaLAPACK factorisations: about n^2/sqrt(P) * log2(P) for the panel
 *   broadcasts (an estimate of the order, not a count), plus the
 *   Allgatherv of each result.
 *
 *   by rows: a gathered tensor or a replicated result, (P-1)/P of it; a
 *   whole sum, 2(P-1).
 *
 * After the calls it lists each tensor's distribution: by rows (its words
 * per rank) or replicated (its words on every rank), and, for the
 * operands and results of the calls on the grid, the block-cyclic pieces
 * each rank holds during them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* The PBLAS GEMM of element type T. */
static const char *pgemm_name(dtype t)
{
    return t == DT_F32 ? "psgemm" : t == DT_F64 ? "pdgemm" : t == DT_C64 ? "pcgemm" : "pzgemm";
}

/* Whether V is a BLAS call the runtime runs as PBLAS's GEMM on P ranks. */
static int is_pdgemm(const graph *g, const g_value *v, int p)
{
    const blas_plan *b = v->blas;
    if (!b || b->nm <= 0 || b->nn <= 0 || p <= 1)
        return 0;
    double m = group_size(g, v, b->m, b->nm), n = group_size(g, v, b->n, b->nn);
    return m * n * group_size(g, b->a, b->k, b->nk) >= GEMM_MIN;
}

/* The ScaLAPACK routines of matrix function LA on element type T, into BUF. */
static const char *la_calls(int la, dtype t, char *buf, size_t n)
{
    char c = t == DT_F32 ? 's' : t == DT_F64 ? 'd' : t == DT_C64 ? 'c' : 'z';
    int cx = dt_complex(t);
    switch (la) {
    case LA_CHOL: snprintf(buf, n, "p%cpotrf", c); break;
    case LA_INV: snprintf(buf, n, "p%cgetrf+p%cgetri", c, c); break;
    case LA_SOLVE: snprintf(buf, n, "p%cgesv", c); break;
    case LA_EIGH: snprintf(buf, n, cx ? "p%cheevd" : "p%csyevd", c); break;
    case LA_QR: snprintf(buf, n, cx ? "p%cgeqrf+p%cungqr" : "p%cgeqrf+p%corgqr", c, c); break;
    case LA_SVD: snprintf(buf, n, "p%cgesvd", c); break;
    default: snprintf(buf, n, "%s", graph_la_name(la)); break;
    }
    return buf;
}

/* Whether V is a matrix function the runtime runs in ScaLAPACK on P ranks. */
static int is_scalapack(const graph *g, const g_value *v, int p)
{
    if (v->op != OP_LINALG || p <= 1)
        return 0;
    const g_value *a = v->in[0];
    double n = graph_extent_estimate(g, a->ext[0]), n2 = a->rank > 1 ? graph_extent_estimate(g, a->ext[1]) : 1;
    return (n < n2 ? n : n2) >= LA_MIN && v->la != LA_POW && v->la != LA_GAPS && v->la != LA_CHOLGRAD &&
           !(v->la == LA_EIGH && v->nin == 2);
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
    return !v->dead && !v->inlined && v->rank >= 2 && !v->nmaps &&
           (v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE) &&
           !(v->blas && v->blas->store);
}

int mpi_plan_rows_var(const sema_program *S, int var)
{
    const sym *t = S->vars[var];
    return t->rank >= 2; /* any tensor (in, out, inout, tmp, let) of any element type */
}

/* The labels of X's modes as a statement reads or writes it: a view's
   (-1 for a fixed index), a store's target labels, or a value's own. */
static const int *mode_labels(const g_value *x)
{
    return x->op == OP_INDEX ? x->idx_label : x->op == OP_STORE ? x->store_label : x->label;
}

/* Whether label L is one of the N labels G. */
static int in_group(const int *G, int n, int l)
{
    for (int i = 0; i < n; i++)
        if (G[i] == l)
            return 1;
    return 0;
}

/* How many leading modes of X, an operand or the result of the GEMM of
   whole tensors B whose groups (of labels) are G1 and G2, lie in the group
   of its first mode: the matrix's rows as X lies in memory, which a
   distributed X's rows must not split (runtime/mpi.inc takes a GEMM's
   distributed tensors by whole rows of its matrices). */
static int gemm_row_modes(const g_value *x, const int *G1, int n1, const int *G2, int n2)
{
    const int *lab = mode_labels(x);
    int rank = x->op == OP_INDEX ? x->in[0]->rank : x->rank;
    const int *G = in_group(G1, n1, lab[0]) ? G1 : G2;
    int n = G == G1 ? n1 : n2, k = 0;
    while (k < rank && in_group(G, n, lab[k]))
        k++;
    return k > 0 ? k : 1;
}

/* The most leading modes a row of tensor T (variable VAR, or value VAL,
   of RANK modes) may span: all but its last, and no more than the rows of
   each GEMM of whole tensors that reads or writes it. */
static int lead_max(const graph *g, int var, const g_value *val, int rank)
{
    int lim = rank - 1 < 1 ? 1 : rank - 1;
    for (int i = 0; i < g->n && lim > 1; i++) {
        const g_value *u = g->v[i];
        if (u->dead || u->inlined || !u->blas || !mpi_plan_gemm_direct(g, u))
            continue;
        const blas_plan *b = u->blas;
        const g_value *x[3] = {b->a, b->b, b->store ? b->store : u};
        for (int r = 0; r < 3; r++) {
            const g_value *t = r == 2 ? x[r] : base_of(x[r]);
            int is = val ? t == val : (t->op == OP_STORE || t->op == OP_INPUT) && t->var == var;
            if (!is)
                continue;
            int k = r == 0   ? gemm_row_modes(x[r], b->m, b->nm, b->k, b->nk)
                    : r == 1 ? gemm_row_modes(x[r], b->k, b->nk, b->n, b->nn)
                             : gemm_row_modes(x[r], b->m, b->nm, b->n, b->nn);
            lim = k < lim ? k : lim;
        }
    }
    return lim;
}

int mpi_plan_lead_value(const graph *g, const g_value *v)
{
    return mpi_plan_rows_value(v) ? lead_max(g, -1, v, v->rank) : 0;
}

int mpi_plan_lead_var(const graph *g, int var)
{
    return mpi_plan_rows_var(g->S, var) ? lead_max(g, var, NULL, g->S->vars[var]->rank) : 0;
}

/* Whether tensor B (a value read in memory: computed, stored or input)
   may be distributed. */
static int rows_tensor(const graph *g, const g_value *b)
{
    if (b->op == OP_STORE || b->op == OP_INPUT)
        return mpi_plan_rows_var(g->S, b->var);
    return mpi_plan_rows_value(b);
}

/* Whether X's loop nest (through the values fused into it) can run on
   rows of R: no scan, slice or sparse map. */
static int rows_nest(const g_value *x)
{
    if (x->op == OP_SCAN || x->op == OP_SLICE || x->nmaps)
        return 0;
    for (int i = 0; i < x->nin; i++)
        if (x->in[i]->inlined && !rows_nest(x->in[i]))
            return 0;
    return 1;
}

/* reads_of's walk: X's inputs and the values fused into them. */
static int reads_of(const g_value *x, int var, const g_value *val, int *lab, int max, int *n)
{
    for (int i = 0; i < x->nin; i++) {
        const g_value *w = x->in[i];
        if (w->inlined) {
            if (!reads_of(w, var, val, lab, max, n))
                return 0;
            continue;
        }
        const g_value *b = w->op == OP_INDEX ? w->in[0] : w;
        int is = val ? b == val : (b->op == OP_STORE || b->op == OP_INPUT) && b->var == var;
        if (!is)
            continue;
        const int *l = w->op == OP_INDEX ? w->idx_label : b->op != OP_STORE && b->op != OP_INPUT ? b->label : NULL;
        if (!l || *n == max || b->rank > TX_MAX_MODES)
            return 0;
        for (int m = 0; m < b->rank; m++)
            lab[*n * TX_MAX_MODES + m] = l[m];
        (*n)++;
    }
    return 1;
}

int mpi_plan_reads(const g_value *v, int var, const g_value *val, int *lab, int max)
{
    int n = 0;
    return reads_of(v, var, val, lab, max, &n) ? n : -1;
}

/* Whether every read of tensor T in X's nest is at row R of its first
   mode or has R in one mode *D >= 1 (the same for all reads). */
static int rows_cross(const g_value *x, int R, int var, const g_value *val, int *d)
{
    for (int i = 0; i < x->nin; i++) {
        const g_value *w = x->in[i];
        if (w->inlined) {
            if (!rows_cross(w, R, var, val, d))
                return 0;
            continue;
        }
        const g_value *b = w->op == OP_INDEX ? w->in[0] : w;
        int is = val ? b == val : (b->op == OP_STORE || b->op == OP_INPUT) && b->var == var;
        if (!is)
            continue;
        /* the labels of its modes: the view's, or a computed value's own */
        const int *lab = w->op == OP_INDEX ? w->idx_label : b->op != OP_STORE && b->op != OP_INPUT ? b->label : NULL;
        if (!lab || b->rank == 0)
            return 0;
        if (lab[0] == R)
            continue;
        int m = 1;
        while (m < b->rank && lab[m] != R)
            m++;
        if (m == b->rank || (*d && *d != m))
            return 0;
        *d = m;
    }
    return 1;
}

int mpi_plan_rows_cross(const g_value *v, int R, int var, const g_value *val)
{
    if (val ? val == v : v->op == OP_STORE && v->var == var)
        return 0; /* written by the nest too */
    int d = 0;
    return rows_cross(v, R, var, val, &d) ? d : 0;
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
    (void)g;
    return rows_nest(v);
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
    if (v->op != OP_CONTRACT || v->rank != 0 || v->nin != 1 || v->coef_in[0] != 1 || v->blas || v->nmaps)
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
    return b && b->nm > 0 && b->nn > 0 && b->nb == 0 && b->nl == 0 && whole_operand(g, b->a) &&
           whole_operand(g, b->b);
}

int mpi_plan_la_rows(const g_value *v)
{
    return v->op == OP_LINALG && v->dt == DT_F64 &&
           (v->la == LA_CHOL || v->la == LA_INV || v->la == LA_SOLVE || v->la == LA_EIGH || v->la == LA_QR ||
            v->la == LA_SVD);
}

int mpi_plan_dot_rows(int distributed, const g_value *v)
{
    return distributed && v->blas && v->blas->nm == 0 && v->blas->nn == 0 && v->dt == DT_F64 && v->blas->nb == 0 &&
           v->blas->nl == 0;
}

#define DIST_MIN_BYTES 1048576.0

/* The most leading modes a row of tensor B may span (mpi_plan_lead_*). */
static int lead_of(const graph *g, const g_value *b)
{
    return b->op == OP_STORE || b->op == OP_INPUT ? mpi_plan_lead_var(g, b->var) : mpi_plan_lead_value(g, b);
}

/* The rows of the first LEAD of the modes EXT (RANK of them) on P ranks,
   as runtime/mpi.inc's tx_mpi_lead_rows picks them (the fewest leading
   modes giving four rows per rank, estimates for unbound extents); *GG
   how many modes. */
static double lead_rows(const graph *g, const tx_extent *ext, int rank, int lead, int p, int *gg)
{
    double n0 = 1;
    int k = 0;
    while (k < (lead < 1 ? 1 : lead) && k < rank) {
        n0 *= graph_extent_estimate(g, ext[k++]);
        if (n0 >= 4.0 * p || n0 == 0)
            break;
    }
    *gg = k > 0 ? k : 1;
    return n0;
}

/* The rows tensor B is held by on P ranks when distributed; *GG the
   modes they span. */
static double rows_of(const graph *g, const g_value *b, int p, int *gg)
{
    return lead_rows(g, b->ext, b->rank, lead_of(g, b), p, gg);
}

/* Whether the runtime holds tensor B by rows on P ranks (at the default
   TX_MPI_DIST_MIN). */
static int is_dist(const graph *g, const g_value *b, int p)
{
    int gg;
    if (p <= 1 || !b || b->rank < 1 || !rows_tensor(g, b))
        return 0;
    return rows_of(g, b, p, &gg) >= 2 && graph_value_elements(g, b) * dt_size(b->dt) >= DIST_MIN_BYTES;
}

/* Words of tensor X (a complex element is two). */
static double words_of(const graph *g, const g_value *x)
{
    return graph_value_elements(g, x) * (dt_complex(x->dt) ? 2 : 1);
}

/* The words the rank receiving most takes of tensor X read across its
   rows through mode D (tx_mpi_cross): of the rows other ranks hold, the
   indices of mode D in its part, blocks of ceil(n/P) of each extent. */
static double cross_words(const graph *g, const g_value *x, int d, int p)
{
    double n0 = graph_extent_estimate(g, x->ext[0]), nd = graph_extent_estimate(g, x->ext[d]);
    double own = ceil(n0 / p) / n0, part = ceil(nd / p) / nd;
    return p > 1 && own < 1 ? words_of(g, x) * part * (1 - own) : 0;
}

/* Adds the tensors X's loop nest reads (through the values fused into
   it) to T[*N] (at most 32, each once). */
static void touched(const g_value *x, const g_value **t, int *n)
{
    for (int i = 0; i < x->nin; i++) {
        const g_value *w = x->in[i];
        if (w->inlined) {
            touched(w, t, n);
            continue;
        }
        w = base_of(w);
        int seen = 0;
        for (int j = 0; j < *n; j++)
            seen |= t[j] == w;
        if (!seen && *n < 32)
            t[(*n)++] = w;
    }
}

/* The words gathering the distributed tensors among T[0..N) whole costs
   each rank; *ND: how many there are. */
static double gather_dist(const graph *g, const g_value **t, int n, int p, int *nd)
{
    double w = 0;
    *nd = 0;
    for (int i = 0; i < n; i++)
        if (is_dist(g, t[i], p)) {
            w += gather_words(words_of(g, t[i]), p);
            (*nd)++;
        }
    return w;
}

/* A GEMM of whole tensors that touches a distributed tensor: its sizes,
   which tensors are distributed, how the rows plan reads them, and
   whether the runtime runs it on the grid instead (tx_mpi_gemm_rows: m n
   k of TX_MPI_GEMM_MIN or more, and fewer words by the model of
   tx_mpi_gemm_grid_cheaper in runtime/mpi.inc, written again here). */
typedef struct {
    double m, n, k;
    double c_share; /* the most of C's rows a rank receives, as a fraction (1: C replicated) */
    int dA, dB, dC, a_own, b_ring, b_cols, grid;
    int a_ring; /* A distributed by rows of the GEMM's m: with B stationary, broadcast slab by slab */
} rows_gemm;

static int rows_gemm_of(const graph *g, const g_value *v, int p, rows_gemm *r)
{
    const blas_plan *b = v->blas;
    if (!b || !mpi_plan_gemm_direct(g, v))
        return 0;
    const g_value *A = base_of(b->a), *B = base_of(b->b), *C = b->store ? b->store : v;
    r->dA = is_dist(g, A, p);
    r->dB = is_dist(g, B, p);
    r->dC = is_dist(g, C, p);
    if (!r->dA && !r->dB && !r->dC)
        return 0;
    r->m = group_size(g, v, b->m, b->nm);
    r->n = group_size(g, v, b->n, b->nn);
    r->k = group_size(g, b->a, b->k, b->nk);
    int fa = mode_labels(b->a)[0];
    r->a_own = 0;
    for (int i = 0; r->dA && i < b->nm; i++)
        r->a_own |= b->m[i] == fa;
    r->a_ring = r->a_own;
    int gA = 1, gC = 1;
    double c0 = r->dC ? rows_of(g, C, p, &gC) : 1; /* C's rows */
    if (r->dA)
        rows_of(g, A, p, &gA);
    if (r->a_own && r->dC) { /* A held by the rows C is: the same leading labels */
        const int *la = mode_labels(b->a), *lc = mode_labels(C);
        r->a_own = gA == gC;
        for (int i = 0; r->a_own && i < gA; i++)
            r->a_own = la[i] == lc[i];
    }
    int fb = mode_labels(b->b)[0];
    r->b_ring = 0;
    for (int i = 0; r->dB && i < b->nk; i++)
        r->b_ring |= b->k[i] == fb; /* B held by rows of k: broadcast slab by slab, never whole */
    /* B held by rows of n (read transposed), C overwritten and B's rows on
       every rank: B may stay where it is (tx_mpi_gemm_cols), each rank
       computing a block of C's columns from the whole A */
    int cols_ok = 0;
    for (int i = 0; r->dB && i < b->nn; i++)
        cols_ok |= b->n[i] == fb;
    int gB = 1;
    cols_ok = cols_ok && !(b->store && b->store->store_op != '=') && rows_of(g, B, p, &gB) >= p;
    int pr, pc;
    grid(p, &pr, &pc);
    double f = (double)(p - 1) / p, m = r->m, n = r->n, k = r->k;
    double rows = (r->dA && !r->a_own ? f * m * k : 0) + (r->dB ? f * k * n : 0) + (r->dC ? 0 : f * m * n);
    /* C's share: a distributed C goes back to its rows, the most of which
       a rank holds is ceil(n0/P) of n0 (all P ranks only when n0 >= P) */
    double share = r->dC ? ceil(c0 / p) / c0 : 1;
    r->c_share = share;
    double cols = (r->dA ? f * m * k : 0) + f * share * m * n; /* on the rank receiving most */
    double on_grid = (r->dA ? f / p * m * k : 0) + (r->dB ? f / p * k * n : 0) + m * k / pr + k * n / pc +
                     f * share * m * n;
    double best = cols_ok && cols < rows ? cols : rows;
    r->grid = p > 1 && m * n * k >= GEMM_MIN && k > 0 && on_grid < best;
    r->b_cols = !r->grid && p > 1 && cols_ok && cols < rows;
    return 1;
}

/* The line of statement V when it touches a distributed tensor and the
   runtime takes them as they are (a GEMM of whole tensors, a loop nest by
   rows, a whole sum): its words, or -1 if V is not such a statement (it
   gathers them whole around the usual call). */
static double print_rows_statement(const graph *g, const g_value *v, int p, tx_buf *out)
{
    const g_value *t[34];
    int n = 0, nd = 0;
    const blas_plan *b = v->blas;
    rows_gemm rg;
    if (b && rows_gemm_of(g, v, p, &rg)) {
        const g_value *A = base_of(b->a), *B = base_of(b->b);
        double m = rg.m, nn = rg.n, kk = rg.k, w = dt_complex(v->dt) ? 2 : 1, f = (double)(p - 1) / p;
        if (rg.grid) {
            int pr, pc;
            grid(p, &pr, &pc);
            double moved = (rg.dA ? f / p * words_of(g, A) : 0) + (rg.dB ? f / p * words_of(g, B) : 0);
            double summa = w * (m * kk / pr + kk * nn / pc), cw = f * rg.c_share * m * nn * w;
            buf_printf(out, "%s %.0fx%.0fx%.0f on the %dx%d grid (A %s, B %s, C %s): %.4g words (pdgemr2d %.4g, "
                            "panels %.4g, C %.4g)\n", pgemm_name(v->dt), m, nn, kk, pr, pc,
                       rg.dA ? "from its rows by pdgemr2d" : "replicated", rg.dB ? "from its rows by pdgemr2d" : "replicated",
                       rg.dC ? "back to its rows by pdgemr2d" : "replicated after", moved + summa + cw, moved, summa, cw);
            return moved + summa + cw;
        }
        if (rg.b_cols) {
            double aw = rg.dA ? gather_words(words_of(g, A), p) : 0, cw = f * rg.c_share * m * nn * w;
            buf_printf(out, "rows-gemm %.0fx%.0fx%.0f with B stationary (A %s, B by its rows: C's columns, C %s "
                            "by all-to-all): %.4g words (A %.4g, C %.4g)\n", m, nn, kk,
                       rg.a_ring ? "by slabs in turn" : rg.dA ? "gathered" : "replicated",
                       rg.dC ? "to its rows" : "replicated", aw + cw, aw, cw);
            return aw + cw;
        }
        double words = (rg.dA && !rg.a_own ? gather_words(words_of(g, A), p) : 0) +
                       (rg.dB ? gather_words(words_of(g, B), p) : 0) + (rg.dC ? 0 : gather_words(m * nn * w, p));
        buf_printf(out, "rows-gemm %.0fx%.0fx%.0f by distributed rows (A %s, B %s, C %s): %.4g words\n", m, nn,
                   kk, !rg.dA ? "replicated" : rg.a_own ? "by its rows" : "gathered",
                   rg.b_ring ? "by slabs in turn" : rg.dB ? "gathered" : "replicated",
                   rg.dC ? "by its rows" : "replicated after", words);
        return words;
    }
    const g_value *da = b ? base_of(b->a) : NULL, *db = b ? base_of(b->b) : NULL;
    if (b && mpi_plan_dot_rows(1, v) && (is_dist(g, da, p) || is_dist(g, db, p)) &&
        (!is_dist(g, da, p) || !is_dist(g, db, p) ||
         (rows_of(g, da, p, &(int){0}) == rows_of(g, db, p, &(int){0}) &&
          graph_value_elements(g, da) == graph_value_elements(g, db)))) { /* else gathered (below) */
        buf_printf(out, "dot of distributed tensors: partial dots, one MPI_Allgather: %.4g words\n", (double)(p - 1));
        return p - 1;
    }
    if (b || v->op == OP_LINALG || v->op == OP_PART)
        return -1;
    touched(v, t, &n);
    t[n++] = v;
    double gw = gather_dist(g, t, n, p, &nd);
    if (!nd)
        return -1;
    const char *what = v->op == OP_STORE ? "store" : graph_op_name(v->op);
    if (mpi_plan_rows_sum(g, v)) {
        buf_printf(out, "sum of a distributed tensor: partial sums, one MPI_Allgather: %.4g words\n",
                   2.0 * (p - 1));
        return 2.0 * (p - 1);
    }
    int R = v->op == OP_STORE ? v->store_label[0] : v->rank > 0 ? v->label[0] : -1;
    if (mpi_plan_rows_kernel(g, v, R)) {
        double w = is_dist(g, v, p) ? 0 : gather_words(words_of(g, v), p), gv = 0, cv = 0, fv = 0;
        int ng = 0, nc = 0, nf = 0, gs = 1;
        const int *rl = mode_labels(v);
        /* the nest's rows (tx_mpi_nest_rows): its result's, or those the
           rule picks among the leading modes it may fuse */
        double rows = is_dist(g, v, p) ? rows_of(g, v, p, &gs)
                                       : lead_rows(g, v->ext, v->rank, lead_of(g, v), p, &gs);
        for (int i = 0; i < n - 1; i++) { /* the tensors it reads elsewhere than at its rows */
            int st = t[i]->op == OP_STORE || t[i]->op == OP_INPUT, var = st ? t[i]->var : -1;
            const g_value *val = st ? NULL : t[i];
            if (!is_dist(g, t[i], p))
                continue;
            int gt, lab[16 * TX_MAX_MODES], nr = mpi_plan_reads(v, var, val, lab, 16), own = nr >= 0;
            double touched = 0;
            rows_of(g, t[i], p, &gt);
            own = own && gt == gs;
            for (int r = 0; own && r < nr; r++)
                for (int m = 0; m < gs; m++)
                    own = own && lab[r * TX_MAX_MODES + m] == rl[m];
            if (own)
                continue;
            int d = gs == 1 && gt == 1 ? mpi_plan_rows_cross(v, R, var, val) : 0;
            if (d) { /* all-to-all: of the others' rows, the part of mode d in this rank's range */
                cv += cross_words(g, t[i], d, p);
                nc++;
                continue;
            }
            /* the elements its reads touch on the rank with the most rows:
               per read, the tuples of the nest's row labels its bound modes
               take over that rank's consecutive rows, times every index of
               its other modes; (P-1)/P of them held elsewhere */
            double h = ceil(rows / p), ext_r[TX_MAX_MODES];
            for (int q = 0; q < gs; q++) /* the nest's row labels: its result's leading modes */
                ext_r[q] = graph_extent_estimate(g, v->ext[q]);
            int pattern[16][TX_MAX_MODES];
            for (int r = 0; r < nr; r++) {
                double free_ = 1, distinct = 1, span = 1;
                int bound[TX_MAX_MODES] = {0}, last = -1, at_own = gt == gs, seen = 0;
                for (int m = 0; m < t[i]->rank; m++) {
                    int q = 0;
                    while (q < gs && lab[r * TX_MAX_MODES + m] != rl[q])
                        q++;
                    pattern[r][m] = q < gs ? q : -1;
                    at_own = at_own && (m >= gs || q == m);
                    if (q < gs) {
                        bound[q] = 1;
                        last = q > last ? q : last;
                    } else
                        free_ *= graph_extent_estimate(g, t[i]->ext[m]);
                }
                for (int r2 = 0; r2 < r && !seen; r2++) /* touches what an earlier read does */
                    seen = !memcmp(pattern[r2], pattern[r], sizeof(int) * (size_t)t[i]->rank);
                if (at_own || seen)
                    continue; /* its elements are this rank's own, or counted */
                for (int q = gs - 1; q >= 0; q--) { /* values row label q takes over h consecutive rows */
                    double took = ceil(h / span);
                    if (bound[q])
                        distinct *= took < ext_r[q] ? took : ext_r[q];
                    span *= ext_r[q];
                }
                if (last >= 0) {
                    double inner = 1;
                    for (int q = last + 1; q < gs; q++)
                        inner *= ext_r[q];
                    double tuples = ceil(h / inner) + 1; /* the distinct prefixes up to the last bound label */
                    distinct = distinct < tuples ? distinct : tuples;
                }
                touched += distinct * free_;
            }
            double elems = graph_value_elements(g, t[i]);
            if (nr >= 0 && touched < elems) { /* those elements from the other ranks */
                fv += gather_words(words_of(g, t[i]) * touched / elems, p);
                nf++;
            } else { /* gathered whole */
                gv += gather_words(words_of(g, t[i]), p);
                ng++;
            }
        }
        buf_printf(out, "%s on each rank's rows", what);
        if (gs > 1)
            buf_printf(out, " (%.0f rows over its first %d modes)", rows, gs);
        if (nc)
            buf_printf(out, ", %d distributed tensor%s read across rows by the part of the other mode in "
                            "its rows (all-to-all, %.4g words)", nc, nc == 1 ? "" : "s", cv);
        if (nf)
            buf_printf(out, ", %d distributed tensor%s read at other ranks' rows, the elements read fetched "
                            "(all-to-all, %.4g words)", nf, nf == 1 ? "" : "s", fv);
        if (ng)
            buf_printf(out, ", %d distributed tensor%s read across rows gathered whole (%.4g words)", ng,
                       ng == 1 ? "" : "s", gv);
        gv += fv;
        if (w > 0)
            buf_printf(out, ": %.4g words (replicating the result %.4g)\n", w + gv + cv, w);
        else
            buf_printf(out, ": %.4g words (the result stays distributed)\n", gv + cv);
        return w + gv + cv;
    }
    buf_printf(out, "%s local on every rank, %d distributed tensor%s gathered whole: %.4g words\n", what, nd,
               nd == 1 ? "" : "s", gw);
    return gw;
}

/* Whether GEMM V runs by distributed rows on P ranks (an operand or its
   result distributed, and the grid not cheaper). */
static int gemm_by_rows(const graph *g, const g_value *v, int p)
{
    rows_gemm rg;
    return rows_gemm_of(g, v, p, &rg) && !rg.grid;
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
        if (is_dist(g, v, p)) {
            int gg;
            double n0 = rows_of(g, v, p, &gg), most = ceil(n0 / p) * (w / n0), busy = ceil(n0 / ceil(n0 / p));
            char by[64];
            if (gg == 1)
                snprintf(by, sizeof by, "its first mode");
            else
                snprintf(by, sizeof by, "its first %d modes (%.0f rows)", gg, n0);
            if (busy >= p)
                buf_printf(out, ": %.4g words, distributed by rows of %s (~%.4g words per rank)\n", w, by, most);
            else /* too few rows: blocks of ceil(n0/P) rows on the first ranks, nothing on the others */
                buf_printf(out, ": %.4g words, distributed by rows of %s (%.4g words on each of %.0f "
                           "ranks, none on the other %.0f)\n", w, by, most, busy, p - busy);
            continue;
        }
        buf_printf(out, ": %.4g words, replicated (%.4g on every rank)", w, w);
        int first = 1;
        for (int j = 0; j < g->n; j++) {
            const g_value *u = g->v[j];
            if (u->dead)
                continue;
            int used = 0;
            if (is_pdgemm(g, u, p) && !gemm_by_rows(g, u, p))
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
    int pr, pc;
    grid(p, &pr, &pc);
    buf_printf(out, "# MPI on %d rank%s (grid %dx%d): intermediates of 1 MiB or more held by rows "
                    "(TX_MPI_DIST_MIN), every other tensor replicated; words received per rank\n", p,
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
        double rows = print_rows_statement(g, v, p, out);
        if (rows >= 0) {
            total += rows;
            continue;
        }
        { /* a statement that gathers distributed tensors whole around the usual call */
            const g_value *t[34];
            int n = 0, nd = 0;
            if (b) {
                t[n++] = base_of(b->a);
                t[n++] = base_of(b->b);
                t[n++] = b->store ? b->store : v;
            } else if (v->op == OP_LINALG) {
                for (int i = 0; i < v->nin && n < 32; i++)
                    t[n++] = base_of(v->in[i]);
                t[n++] = v;
            }
            double gw = gather_dist(g, t, n, p, &nd);
            if (nd && v->op == OP_LINALG && mpi_plan_la_rows(v) && is_scalapack(g, v, p)) {
                /* to the grid by pdgemr2d and pdtran: (P-1)/P^2 of each */
                double mw = gw / p;
                buf_printf(out, "%d distributed tensor%s moved to the grid by pdgemr2d and pdtran (%.4g words), "
                           "then ", nd, nd == 1 ? "" : "s", mw);
                total += mw;
            } else if (nd) {
                buf_printf(out, "%d distributed tensor%s gathered whole (%.4g words), then ", nd,
                           nd == 1 ? "" : "s", gw);
                total += gw;
            }
        }
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
                double w = dt_complex(v->dt) ? 2 : 1; /* words per element */
                double summa = w * (m * kk / pr + kk * n / pc), coll = gather_words(w * m * n, p);
                words = nb * (summa + coll);
                buf_printf(out, "%s %.0fx%.0fx%.0f%s, A, B, C block-cyclic on %dx%d: %.4g words "
                           "(panels %.4g, replicating C %.4g)\n", pgemm_name(v->dt), m, n, kk, nb > 1 ? " per batch" : "", pr, pc,
                           words, nb * summa, nb * coll);
                if (nb > 1)
                    buf_printf(out, "#       %.0f batches, one %s each\n", nb, pgemm_name(v->dt));
            } else
                buf_printf(out, "%cgemm %.0fx%.0fx%.0f local on every rank (operands replicated%s): 0 words\n",
                           "sdcz"[v->dt == DT_F32 ? 0 : v->dt == DT_F64 ? 1 : v->dt == DT_C64 ? 2 : 3], m, n, kk,
                           p == 1 ? "" : ", below TX_MPI_GEMM_MIN");
        } else if (b) {
            buf_printf(out, "%s local on every rank (operands replicated): 0 words\n",
                       b->nm == 0 && b->nn == 0 ? "dot" : "gemv");
        } else if (v->op == OP_LINALG) {
            const g_value *a = v->in[0];
            double n = graph_extent_estimate(g, a->ext[0]), n2 = a->rank > 1 ? graph_extent_estimate(g, a->ext[1])
                                                                           : 1;
            double order = n < n2 ? n : n2;
            int dist = is_scalapack(g, v, p);
            char calls[40];
            la_calls(v->la, a->dt, calls, sizeof calls);
            if (dist) { /* a complex element is two words */
                double panels = (dt_complex(a->dt) ? 2 : 1) * n * n2 / sqrt((double)p) * log2((double)p);
                double result = 0;
                for (int j = k; j < g->n; j++) /* the results: the node, or its parts */
                    if (g->v[j] == v ? v->nout == 1 : (g->v[j]->op == OP_PART && g->v[j]->in[0] == v))
                        result += words_of(g, g->v[j]);
                words = panels + gather_words(result, p);
                buf_printf(out, "%s order %.0f, block-cyclic on %dx%d: %.4g words (panels ~%.4g, replicating "
                           "the result %.4g)\n", calls, order, pr, pc, words, panels, gather_words(result, p));
            } else
                buf_printf(out, "%s local on every rank (replicated%s): 0 words\n", calls,
                           p == 1 ? "" : v->la == LA_POW || v->la == LA_GAPS || v->la == LA_CHOLGRAD || v->nin == 2
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
