/*
 * pass_order.c — contraction order.
 *
 * Lowering makes one n-ary contraction per product chain, so that
 * A("i,k") * B("k,j") * d("k") is one three-way contraction over k, as
 * tx(5) says. Here each of three or more operands is split into pairwise
 * contractions in the cheapest order. The cost of a pairwise contraction
 * is the graph's (graph_contract_cost, opt_einsum's count): the product
 * of the extents of every label it touches, times two when it sums a
 * label. Up to 12 operands the order is exact (dynamic programming over
 * subsets: the labels a partial product keeps depend only on which
 * operands it holds); beyond, greedy, as opt_einsum.
 * Ties go to the order with the smaller intermediates (the memory term).
 * Extents are the bound ones at JIT time, estimates (64) otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "tx.h"

#define EXACT_MAX 12

typedef struct {
    const graph *g;
    int n;
    labelset lab[64];
    labelset out;
    double ext[TX_MAX_LABELS];
    int nmaps;                 /* the sparse maps restricting the contraction */
    const int *maps;
} problem;

static double size_of(const problem *P, labelset s)
{
    double z = 1;
    for (int w = 0; w < TX_MAX_LABELS / 64; w++)
        for (uint64_t b = s.w[w]; b; b &= b - 1)
            z *= P->ext[w * 64 + __builtin_ctzll(b)];
    return z;
}

/* Labels a partial product of the operands in MASK keeps: those used by
   the output or by an operand outside MASK. */
static labelset kept(const problem *P, uint64_t mask, labelset have)
{
    labelset need = P->out;
    for (int i = 0; i < P->n; i++)
        if (!(mask >> i & 1))
            need = ls_union(need, P->lab[i]);
    return ls_inter(have, need);
}

/* The graph's cost of contracting partial products with labels A and B
   into one with labels RESULT, scaled by the fill of the sparse maps whose
   entries its loops follow. */
static double pair_flops(const problem *P, labelset a, labelset b, labelset result)
{
    labelset all = ls_union(a, b);
    double z = graph_contract_cost(P->ext, all, result, 2);
    for (int k = 0; k < P->nmaps; k++) /* loops that follow a map's entries */
        if (graph_map_covers(P->g, P->maps[k], all))
            z *= graph_map_density(P->g, P->maps[k]);
    return z;
}

typedef struct {
    double flops, mem;
    uint64_t left; /* the split that achieves it; 0 for a single operand */
    labelset ls;
} best;

/* A new pairwise contraction of A and B keeping labels KEEP, of the
   statement of LIKE, whose sparse maps it keeps where they cover it. */
static g_value *make_pair(graph *g, const g_value *like, g_value *a, double ea, g_value *b, double eb,
                          labelset keep)
{
    g_value *c = graph_value_new(g, OP_CONTRACT, 2, like->stmt, like->span);
    graph_set_operand(c, 0, a, ea);
    graph_set_operand(c, 1, b, eb);
    /* a statement mixing f32 and f64 computes in f64 (tx(5) §4.2): the
       pieces of a contraction compute in its type, whatever their operands' */
    c->dt = a->dt == DT_F64 || b->dt == DT_F64 || like->dt == DT_F64 ? DT_F64 : DT_F32;
    labelset all = ls_union(graph_value_labels(a), graph_value_labels(b));
    c->summed = ls_minus(all, keep);
    int r = 0, label[TX_MAX_MODES];
    tx_extent ext[TX_MAX_MODES];
    const g_value *ops[2] = {a, b};
    for (int o = 0; o < 2; o++) /* keep the operands' label order */
        for (int m = 0; m < ops[o]->rank; m++) {
            int l = ops[o]->label[m], seen = 0;
            for (int k = 0; k < r; k++)
                seen |= label[k] == l;
            if (!seen && ls_has(&keep, l)) {
                TX_ASSERT(r < TX_MAX_MODES);
                label[r] = l;
                ext[r++] = ops[o]->ext[m];
            }
        }
    graph_set_modes(c, r, label, ext);
    graph_restrict(g, c, like->maps, like->nmaps);
    return c;
}

/* The chosen order as a program for a stack machine, children before
   parents: an operand is pushed; a pair pops two and pushes their
   contraction (keeping labels ls). Small (2n - 1 steps), so the subset
   table can be freed before any graph memory is allocated. */
typedef struct {
    int operand; /* >= 0: push this operand; -1: contract the top two */
    labelset ls;
} order_step;

static void plan_steps(const best *B, uint64_t mask, order_step *steps, int *n)
{
    if ((mask & (mask - 1)) == 0) {
        steps[(*n)++] = (order_step){.operand = __builtin_ctzll(mask)};
        return;
    }
    uint64_t l = B[mask].left;
    plan_steps(B, l, steps, n);
    plan_steps(B, mask & ~l, steps, n);
    steps[*n].operand = -1;
    steps[(*n)++].ls = B[mask].ls;
}

/* Greedy pairing for many operands: repeatedly contract the pair whose
   result is smallest relative to its inputs (opt_einsum's greedy). */
static void greedy(problem *P, best *B, uint64_t *groups, int n)
{
    int live = n;
    while (live > 1) {
        int bi = -1, bj = -1;
        double bcost = 0, bflops = 0;
        uint64_t all = 0;
        for (int i = 0; i < n; i++)
            all |= groups[i];
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                if (!groups[i] || !groups[j])
                    continue;
                uint64_t m = groups[i] | groups[j];
                labelset have = ls_union(B[groups[i]].ls, B[groups[j]].ls);
                /* labels needed beyond this pair: output and the other live groups */
                labelset need = P->out;
                for (int k = 0; k < n; k++)
                    if (groups[k] && k != i && k != j)
                        need = ls_union(need, B[groups[k]].ls);
                labelset res = ls_inter(have, need);
                double cost = size_of(P, res) - size_of(P, B[groups[i]].ls) - size_of(P, B[groups[j]].ls);
                double fl = pair_flops(P, B[groups[i]].ls, B[groups[j]].ls, res);
                if (bi < 0 || cost < bcost || (cost == bcost && fl < bflops)) {
                    bi = i;
                    bj = j;
                    bcost = cost;
                    bflops = fl;
                }
                (void)m;
            }
        uint64_t m = groups[bi] | groups[bj];
        labelset need = P->out;
        for (int k = 0; k < n; k++)
            if (groups[k] && k != bi && k != bj)
                need = ls_union(need, B[groups[k]].ls);
        B[m].ls = ls_inter(ls_union(B[groups[bi]].ls, B[groups[bj]].ls), need);
        B[m].left = groups[bi];
        groups[bi] = m;
        groups[bj] = 0;
        live--;
        (void)all;
    }
}

static void order_one(graph *g, g_value *v)
{
    problem P = {.g = g, .n = v->nin, .nmaps = v->nmaps, .maps = v->maps};
    P.out = graph_value_labels(v);
    for (int i = 0; i < v->nin; i++) {
        P.lab[i] = graph_value_labels(v->in[i]);
        for (int m = 0; m < v->in[i]->rank; m++)
            P.ext[v->in[i]->label[m]] = graph_extent_estimate(g, v->in[i]->ext[m]);
    }
    int n = v->nin;
    /* the greedy path names subsets beyond 2^n only by the masks it makes,
       so a hash would do; a dense table is fine for n <= 20 */
    size_t nsub = (size_t)1 << (n <= 20 ? n : 20);
    best *B = calloc(nsub, sizeof *B);
    if (!B)
        return; /* keep the n-ary contraction: correct, just slower */
    for (int i = 0; i < n; i++)
        B[(uint64_t)1 << i].ls = P.lab[i];
    uint64_t full = ((uint64_t)1 << n) - 1;
    if (n <= EXACT_MAX) {
        for (uint64_t m = 1; m <= full; m++) {
            if ((m & (m - 1)) == 0)
                continue;
            labelset have = {{0}};
            for (int i = 0; i < n; i++)
                if (m >> i & 1)
                    have = ls_union(have, P.lab[i]);
            B[m].ls = kept(&P, m, have);
            int first = 1;
            /* every split into (l, m\l), each unordered pair once */
            for (uint64_t l = (m - 1) & m; l; l = (l - 1) & m) {
                uint64_t r = m & ~l;
                if (l < r)
                    continue;
                double fl = B[l].flops + B[r].flops + pair_flops(&P, B[l].ls, B[r].ls, B[m].ls);
                double mem = B[l].mem + B[r].mem + size_of(&P, B[m].ls);
                if (first || fl < B[m].flops || (fl == B[m].flops && mem < B[m].mem)) {
                    B[m].flops = fl;
                    B[m].mem = mem;
                    B[m].left = l;
                    first = 0;
                }
            }
        }
    } else if (n <= 20) {
        uint64_t groups[64];
        for (int i = 0; i < n; i++)
            groups[i] = (uint64_t)1 << i;
        greedy(&P, B, groups, n);
    } else {
        free(B);
        return;
    }
    order_step steps[2 * 64];
    int nsteps = 0;
    plan_steps(B, full, steps, &nsteps);
    free(B);
    /* run the steps; the last (the whole product) is V itself */
    g_value *stack[64];
    double exp[64];
    int top = 0;
    for (int k = 0; k < nsteps - 1; k++) {
        if (steps[k].operand >= 0) {
            stack[top] = v->in[steps[k].operand];
            exp[top++] = v->coef_in[steps[k].operand];
            continue;
        }
        top--;
        g_value *c = make_pair(g, v, stack[top - 1], exp[top - 1], stack[top], exp[top], steps[k].ls);
        graph_insert_before(g, v, c);
        stack[top - 1] = c;
        exp[top - 1] = 1;
    }
    TX_ASSERT(top == 2);
    graph_set_operands(g, v, 2, stack, exp);
    v->summed = ls_minus(ls_union(graph_value_labels(stack[0]), graph_value_labels(stack[1])),
                         graph_value_labels(v));
    int maps[8], nmaps = v->nmaps; /* its loops changed: which maps still cover them */
    memcpy(maps, v->maps, sizeof maps);
    graph_restrict(g, v, maps, nmaps);
}

void pass_order(graph *g)
{
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->op == OP_CONTRACT && v->nin >= 3 && v->nin <= 20)
            order_one(g, v);
    }
    graph_renumber(g);
}
