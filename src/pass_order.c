/*
 * pass_order.c — contraction order.
 *
 * Lowering makes one n-ary contraction per product chain, so that
 * A("i,k") * B("k,j") * d("k") is one three-way contraction over k, as
 * tx(5) says. Here each of three or more operands is split into pairwise
 * contractions in the cheapest order. The cost of a pairwise contraction
 * is the graph's (graph_contract_cost, opt_einsum's count): the product
 * of the extents of every label it touches, times two when it sums a
 * label. Extents are the bound ones at JIT time, estimates (64) otherwise.
 *
 *  - Up to EXACT_MAX operands the order is exact: dynamic programming over
 *    subsets (the labels a partial product keeps depend only on which
 *    operands it holds). Ties go to the smaller intermediates.
 *  - Beyond, greedy as opt_einsum: repeatedly the pairwise contraction
 *    of two groups sharing a label that is best by a size heuristic (the
 *    result's size less its inputs'), outer products of the smallest
 *    groups when none share a label; then random greedy: further greedy
 *    runs choosing among the few best candidates with Boltzmann weights
 *    and a perturbed heuristic, from a fixed seed, within a budget counted
 *    in candidate evaluations (not time), keeping the fewest flops. The
 *    order is a function of the program (and the bound extents) alone.
 *  - No pairwise step makes an intermediate of more than TX_MAX_MODES
 *    labels. If the search gets stuck (every remaining step would), the
 *    groups left stay one n-ary contraction, one loop nest, which needs
 *    only its operands and result to fit; so does the whole product if
 *    that is cheaper.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"

#define EXACT_MAX 12
#define NBRANCH 8              /* random greedy: candidates it chooses among */
#define MAX_TRIALS 64          /* random greedy: runs after the plain ones */
#define WORK_BUDGET 20000000.0 /* random greedy: candidate evaluations in all */

typedef struct {
    const graph *g;
    int n;
    labelset *lab; /* per operand */
    labelset out;
    double ext[TX_MAX_LABELS];
    int nmaps; /* the sparse maps restricting the contraction */
    const int *maps;
} problem;

/* One pairwise step of a plan, in SSA form: operands are 0..n-1, step t
   makes group n + t from groups x and y, keeping labels ls. */
typedef struct {
    int x, y;
    labelset ls;
} merge;

typedef struct {
    merge *m;   /* room for n - 1 */
    int nm;     /* n - 1 when complete; fewer leaves an n-ary contraction */
    double flops;
} plan;

static double size_of(const problem *P, labelset s)
{
    double z = 1;
    for (int w = 0; w < TX_MAX_LABELS / 64; w++)
        for (uint64_t b = s.w[w]; b; b &= b - 1)
            z *= P->ext[w * 64 + __builtin_ctzll(b)];
    return z;
}

/* The graph's cost of contracting groups with labels A and B into one
   with labels RESULT (NTERMS of them for an n-ary rest), scaled by the
   fill of the sparse maps whose entries its loops follow. */
static double nary_flops(const problem *P, labelset all, labelset result, int nterms)
{
    double z = graph_contract_cost(P->ext, all, result, nterms);
    for (int k = 0; k < P->nmaps; k++) /* loops that follow a map's entries */
        if (graph_map_covers(P->g, P->maps[k], all))
            z *= graph_map_density(P->g, P->maps[k]);
    return z;
}

static double pair_flops(const problem *P, labelset a, labelset b, labelset result)
{
    return nary_flops(P, ls_union(a, b), result, 2);
}

/* ---- exact: dynamic programming over subsets ---- */

typedef struct {
    double flops, mem;
    uint64_t left; /* the split that achieves it; 0 for a single operand */
    labelset ls;
    int ok;        /* fits TX_MAX_MODES and has an order that does */
} best;

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

static int dp_emit(const best *B, uint64_t mask, int n, plan *pl)
{
    if ((mask & (mask - 1)) == 0)
        return __builtin_ctzll(mask);
    int x = dp_emit(B, B[mask].left, n, pl);
    int y = dp_emit(B, mask & ~B[mask].left, n, pl);
    pl->m[pl->nm] = (merge){.x = x, .y = y, .ls = B[mask].ls};
    return n + pl->nm++;
}

/* The exact order into PL; 0 if no order keeps to TX_MAX_MODES (or no memory). */
static int exact(const problem *P, plan *pl)
{
    int n = P->n;
    uint64_t full = ((uint64_t)1 << n) - 1;
    best *B = calloc((size_t)full + 1, sizeof *B);
    if (!B)
        return 0;
    for (int i = 0; i < n; i++) {
        B[(uint64_t)1 << i].ls = P->lab[i];
        B[(uint64_t)1 << i].ok = 1;
    }
    for (uint64_t m = 1; m <= full; m++) {
        if ((m & (m - 1)) == 0)
            continue;
        labelset have = {{0}};
        for (int i = 0; i < n; i++)
            if (m >> i & 1)
                have = ls_union(have, P->lab[i]);
        B[m].ls = kept(P, m, have);
        if (ls_count(B[m].ls) > TX_MAX_MODES)
            continue; /* no step may make it */
        /* every split into (l, m\l), each unordered pair once */
        for (uint64_t l = (m - 1) & m; l; l = (l - 1) & m) {
            uint64_t r = m & ~l;
            if (l < r || !B[l].ok || !B[r].ok)
                continue;
            double fl = B[l].flops + B[r].flops + pair_flops(P, B[l].ls, B[r].ls, B[m].ls);
            double mem = B[l].mem + B[r].mem + size_of(P, B[m].ls);
            if (!B[m].ok || fl < B[m].flops || (fl == B[m].flops && mem < B[m].mem)) {
                B[m].flops = fl;
                B[m].mem = mem;
                B[m].left = l;
                B[m].ok = 1;
            }
        }
    }
    int ok = B[full].ok;
    if (ok) {
        pl->nm = 0;
        dp_emit(B, full, n, pl);
        pl->flops = B[full].flops;
    }
    free(B);
    return ok;
}

/* ---- greedy and random greedy ---- */

typedef struct {
    int x, y;
    double cost, flops;
} cand;

typedef struct {
    const problem *P;
    int ngroups;       /* groups made so far: n operands, then merges */
    labelset *ls;      /* per group */
    double *size;      /* per group */
    char *alive;
    int *count;        /* per label: live groups holding it */
    cand *c;           /* candidate pairs sharing a label */
    int nc, capc;
    int *stamp;        /* per group, for listing neighbours once */
    int **holders;     /* per label: groups ever holding it (dead ones skipped) */
    int *nholders, *capholders;
    double work;       /* candidate evaluations, the budget's unit */
    /* the heuristic of this run */
    int removed_first; /* numpy's: the most removed size first, then flops */
    double alpha;      /* size(result) - alpha * (size(a) + size(b)) */
    double temperature;/* 0: always the best candidate */
    uint64_t rng;
} greedy_state;

static double rnd(uint64_t *s) /* xorshift64*, in [0, 1) */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* The labels the contraction of live groups X and Y keeps. */
static labelset pair_result(const greedy_state *G, int x, int y)
{
    labelset a = G->ls[x], b = G->ls[y], all = ls_union(a, b), res = G->P->out;
    for (int w = 0; w < TX_MAX_LABELS / 64; w++)
        for (uint64_t bits = all.w[w]; bits; bits &= bits - 1) {
            int l = w * 64 + __builtin_ctzll(bits);
            if (G->count[l] - ls_has(&a, l) - ls_has(&b, l) > 0)
                ls_add(&res, l);
        }
    return ls_inter(res, all);
}

/* Adds X-Y as a candidate unless its result is over the mode limit. */
static void add_cand(greedy_state *G, int x, int y)
{
    const problem *P = G->P;
    G->work += 1;
    labelset res = pair_result(G, x, y);
    if (ls_count(res) > TX_MAX_MODES)
        return;
    double fl = pair_flops(P, G->ls[x], G->ls[y], res), sz = size_of(P, res), cost;
    if (G->removed_first)
        cost = -size_of(P, ls_minus(ls_union(G->ls[x], G->ls[y]), res));
    else
        cost = sz - G->alpha * (G->size[x] + G->size[y]);
    if (G->nc == G->capc) {
        G->capc = G->capc ? 2 * G->capc : 64;
        G->c = realloc(G->c, sizeof *G->c * (size_t)G->capc);
        TX_ASSERT(G->c);
    }
    G->c[G->nc++] = (cand){.x = x, .y = y, .cost = cost, .flops = fl};
}

static int cand_less(const cand *a, const cand *b)
{
    if (a->cost != b->cost)
        return a->cost < b->cost;
    if (a->flops != b->flops)
        return a->flops < b->flops;
    if (a->x != b->x)
        return a->x < b->x;
    return a->y < b->y;
}

static void hold(greedy_state *G, int l, int group)
{
    if (G->nholders[l] == G->capholders[l]) {
        G->capholders[l] = G->capholders[l] ? 2 * G->capholders[l] : 4;
        G->holders[l] = realloc(G->holders[l], sizeof(int) * (size_t)G->capholders[l]);
        TX_ASSERT(G->holders[l]);
    }
    G->holders[l][G->nholders[l]++] = group;
}

/* Candidates of group X with every live group sharing a label. */
static void add_neighbours(greedy_state *G, int x)
{
    labelset s = G->ls[x];
    G->stamp[x] = x + 1;
    for (int w = 0; w < TX_MAX_LABELS / 64; w++)
        for (uint64_t bits = s.w[w]; bits; bits &= bits - 1) {
            int l = w * 64 + __builtin_ctzll(bits);
            int k = 0;
            for (int h = 0; h < G->nholders[l]; h++) { /* drop the dead as we go */
                int y = G->holders[l][h];
                if (!G->alive[y])
                    continue;
                G->holders[l][k++] = y;
                if (G->stamp[y] != x + 1) {
                    G->stamp[y] = x + 1;
                    add_cand(G, y < x ? y : x, y < x ? x : y);
                }
            }
            G->nholders[l] = k;
        }
}

static void do_merge(greedy_state *G, plan *pl, int x, int y, labelset res)
{
    const problem *P = G->P;
    int z = G->ngroups++;
    pl->flops += pair_flops(P, G->ls[x], G->ls[y], res);
    pl->m[pl->nm++] = (merge){.x = x, .y = y, .ls = res};
    labelset gone = ls_union(G->ls[x], G->ls[y]);
    for (int w = 0; w < TX_MAX_LABELS / 64; w++)
        for (uint64_t bits = gone.w[w]; bits; bits &= bits - 1) {
            int l = w * 64 + __builtin_ctzll(bits);
            G->count[l] -= ls_has(&G->ls[x], l) + ls_has(&G->ls[y], l);
        }
    G->alive[x] = G->alive[y] = 0;
    G->ls[z] = res;
    G->size[z] = size_of(P, res);
    G->alive[z] = 1;
    for (int w = 0; w < TX_MAX_LABELS / 64; w++)
        for (uint64_t bits = res.w[w]; bits; bits &= bits - 1) {
            int l = w * 64 + __builtin_ctzll(bits);
            G->count[l]++;
            hold(G, l, z);
        }
    add_neighbours(G, z);
}

/* One greedy run into PL; stops early (returning 0) once it costs more
   than BOUND. */
static int greedy_run(greedy_state *G, plan *pl, double bound)
{
    const problem *P = G->P;
    int n = P->n;
    G->ngroups = n;
    G->nc = 0;
    pl->nm = 0;
    pl->flops = 0;
    memset(G->count, 0, sizeof(int) * TX_MAX_LABELS);
    memset(G->nholders, 0, sizeof(int) * TX_MAX_LABELS);
    for (int i = 0; i < 2 * n; i++) {
        G->alive[i] = i < n;
        G->stamp[i] = 0;
    }
    for (int i = 0; i < n; i++) {
        G->ls[i] = P->lab[i];
        G->size[i] = size_of(P, P->lab[i]);
        for (int w = 0; w < TX_MAX_LABELS / 64; w++)
            for (uint64_t bits = P->lab[i].w[w]; bits; bits &= bits - 1) {
                int l = w * 64 + __builtin_ctzll(bits);
                G->count[l]++;
                hold(G, l, i);
            }
    }
    for (int i = 0; i < n; i++) { /* each pair once: with the later group */
        labelset s = G->ls[i];
        G->stamp[i] = i + 1;
        for (int w = 0; w < TX_MAX_LABELS / 64; w++)
            for (uint64_t bits = s.w[w]; bits; bits &= bits - 1) {
                int l = w * 64 + __builtin_ctzll(bits);
                for (int h = 0; h < G->nholders[l]; h++) {
                    int y = G->holders[l][h];
                    if (y > i && G->stamp[y] != i + 1) {
                        G->stamp[y] = i + 1;
                        add_cand(G, i, y);
                    }
                }
            }
    }
    for (int live = n; live > 1;) {
        if (pl->flops > bound)
            return 0;
        /* the NBRANCH best live candidates, best first */
        cand top[NBRANCH];
        int ntop = 0, k = 0;
        for (int i = 0; i < G->nc; i++) {
            cand c = G->c[i];
            if (!G->alive[c.x] || !G->alive[c.y])
                continue;
            G->c[k++] = c;
            int want = G->temperature > 0 ? NBRANCH : 1;
            if (ntop == want && !cand_less(&c, &top[ntop - 1]))
                continue;
            int p = ntop < want ? ntop++ : ntop - 1;
            for (; p > 0 && cand_less(&c, &top[p - 1]); p--)
                top[p] = top[p - 1];
            top[p] = c;
        }
        G->nc = k;
        G->work += k;
        if (ntop) {
            int pick = 0;
            if (G->temperature > 0 && ntop > 1) { /* Boltzmann weights on the heuristic */
                double scale = G->temperature * fmax(1.0, fabs(top[0].cost)), wsum = 0, wt[NBRANCH];
                for (int i = 0; i < ntop; i++)
                    wsum += wt[i] = exp(-(top[i].cost - top[0].cost) / scale);
                double r = rnd(&G->rng) * wsum;
                for (pick = 0; pick < ntop - 1 && (r -= wt[pick]) >= 0; pick++)
                    ;
            }
            do_merge(G, pl, top[pick].x, top[pick].y, pair_result(G, top[pick].x, top[pick].y));
            live--;
            continue;
        }
        /* no two live groups share a label: the outer product of the two
           smallest that fits the mode limit */
        int bx = -1, by = -1;
        double bsz = 0;
        for (int x = 0; x < G->ngroups; x++) {
            if (!G->alive[x])
                continue;
            for (int y = x + 1; y < G->ngroups; y++) {
                if (!G->alive[y])
                    continue;
                G->work += 1;
                double sz = G->size[x] * G->size[y];
                if ((bx < 0 || sz < bsz) && ls_count(pair_result(G, x, y)) <= TX_MAX_MODES) {
                    bx = x;
                    by = y;
                    bsz = sz;
                }
            }
        }
        if (bx < 0)
            break; /* stuck: the rest stays one n-ary contraction */
        do_merge(G, pl, bx, by, pair_result(G, bx, by));
        live--;
    }
    if (pl->nm < n - 1) { /* the n-ary rest */
        labelset all = {{0}};
        int nterms = 0;
        for (int x = 0; x < G->ngroups; x++)
            if (G->alive[x]) {
                all = ls_union(all, G->ls[x]);
                nterms++;
            }
        pl->flops += nary_flops(P, all, P->out, nterms);
    }
    return pl->flops <= bound;
}

static void copy_plan(plan *to, const plan *from)
{
    memcpy(to->m, from->m, sizeof *from->m * (size_t)from->nm);
    to->nm = from->nm;
    to->flops = from->flops;
}

/* The best of plain greedy (two heuristics) and random greedy into BEST. */
static void greedy(const problem *P, plan *bestp)
{
    int n = P->n;
    greedy_state G = {.P = P};
    G.ls = malloc(sizeof *G.ls * 2 * (size_t)n);
    G.size = malloc(sizeof *G.size * 2 * (size_t)n);
    G.alive = malloc(2 * (size_t)n);
    G.stamp = malloc(sizeof(int) * 2 * (size_t)n);
    G.count = malloc(sizeof(int) * TX_MAX_LABELS);
    G.holders = calloc(TX_MAX_LABELS, sizeof *G.holders);
    G.nholders = calloc(TX_MAX_LABELS, sizeof(int));
    G.capholders = calloc(TX_MAX_LABELS, sizeof(int));
    plan trial = {.m = malloc(sizeof(merge) * (size_t)n)};
    TX_ASSERT(G.ls && G.size && G.alive && G.stamp && G.count && G.holders && G.nholders && G.capholders &&
              trial.m);
    bestp->nm = -1;
    for (int t = 0; t < 2 + MAX_TRIALS; t++) {
        if (t >= 2 && G.work > WORK_BUDGET)
            break;
        G.removed_first = t == 1;
        G.alpha = 1;
        G.temperature = 0;
        if (t >= 2) { /* a perturbed heuristic, choosing among the best few */
            G.rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(t + 1);
            G.alpha = 0.5 + 1.5 * rnd(&G.rng);
            G.temperature = 0.01 * pow(100.0, rnd(&G.rng)); /* 0.01 .. 1 */
        }
        double bound = bestp->nm < 0 ? INFINITY : bestp->flops;
        if (greedy_run(&G, &trial, bound) &&
            (bestp->nm < 0 || trial.flops < bestp->flops || (trial.flops == bestp->flops && trial.nm > bestp->nm)))
            copy_plan(bestp, &trial);
    }
    for (int l = 0; l < TX_MAX_LABELS; l++)
        free(G.holders[l]);
    free(G.holders);
    free(G.nholders);
    free(G.capholders);
    free(G.ls);
    free(G.size);
    free(G.alive);
    free(G.stamp);
    free(G.count);
    free(G.c);
    free(trial.m);
}

/* ---- the graph ---- */

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
    c->dt = dt_join(dt_join(a->dt, b->dt), dt_wide(like->dt) ? DT_F64 : DT_F32);
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
                TX_ASSERT(r < TX_MAX_MODES); /* the search keeps to the limit */
                label[r] = l;
                ext[r++] = ops[o]->ext[m];
            }
        }
    graph_set_modes(c, r, label, ext);
    graph_restrict(g, c, like->maps, like->nmaps);
    return c;
}

static void order_one(graph *g, g_value *v)
{
    int n = v->nin;
    problem P = {.g = g, .n = n, .nmaps = v->nmaps, .maps = v->maps};
    P.lab = malloc(sizeof *P.lab * (size_t)n);
    plan pl = {.m = malloc(sizeof(merge) * (size_t)n)};
    g_value **val = malloc(sizeof *val * 2 * (size_t)n);
    double *exp_ = malloc(sizeof *exp_ * 2 * (size_t)n);
    char *used = calloc(2 * (size_t)n, 1);
    if (!P.lab || !pl.m || !val || !exp_ || !used)
        goto done; /* keep the n-ary contraction: correct, just slower */
    P.out = graph_value_labels(v);
    labelset all = P.out;
    for (int i = 0; i < n; i++) {
        P.lab[i] = graph_value_labels(v->in[i]);
        all = ls_union(all, P.lab[i]);
        for (int m = 0; m < v->in[i]->rank; m++)
            P.ext[v->in[i]->label[m]] = graph_extent_estimate(g, v->in[i]->ext[m]);
    }
    if (!(n <= EXACT_MAX && exact(&P, &pl)))
        greedy(&P, &pl);
    /* stuck part way: the whole product as one loop nest if that is cheaper */
    if (pl.nm < n - 1 && nary_flops(&P, all, P.out, n) <= pl.flops)
        pl.nm = 0;
    if (pl.nm == 0)
        goto done;
    /* run the merges; the last of a complete plan is V itself */
    for (int i = 0; i < n; i++) {
        val[i] = v->in[i];
        exp_[i] = v->coef_in[i];
    }
    int complete = pl.nm == n - 1;
    for (int t = 0; t < pl.nm - complete; t++) {
        merge *m = &pl.m[t];
        g_value *c = make_pair(g, v, val[m->x], exp_[m->x], val[m->y], exp_[m->y], m->ls);
        graph_insert_before(g, v, c);
        val[n + t] = c;
        exp_[n + t] = 1;
        used[m->x] = used[m->y] = 1;
    }
    g_value **ops = malloc(sizeof *ops * (size_t)n);
    double *ex = malloc(sizeof *ex * (size_t)n);
    TX_ASSERT(ops && ex);
    int k = 0;
    if (complete) {
        merge *m = &pl.m[pl.nm - 1];
        ops[k] = val[m->x], ex[k++] = exp_[m->x];
        ops[k] = val[m->y], ex[k++] = exp_[m->y];
    } else
        for (int x = 0; x < n + pl.nm; x++)
            if (!used[x])
                ops[k] = val[x], ex[k++] = exp_[x];
    graph_set_operands(g, v, k, ops, ex);
    free(ops);
    free(ex);
    labelset have = {{0}};
    for (int i = 0; i < k; i++)
        have = ls_union(have, graph_value_labels(v->in[i]));
    v->summed = ls_minus(have, graph_value_labels(v));
    int maps[8], nmaps = v->nmaps; /* its loops changed: which maps still cover them */
    memcpy(maps, v->maps, sizeof maps);
    graph_restrict(g, v, maps, nmaps);
done:
    free(P.lab);
    free(pl.m);
    free(val);
    free(exp_);
    free(used);
}

void pass_order(graph *g)
{
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->op == OP_CONTRACT && v->nin >= 3)
            order_one(g, v);
    }
    graph_renumber(g);
}
