/*
 * pass_blas.c — pairwise contractions to BLAS.
 *
 * A contraction of two operands is GEMM-shaped once its labels are sorted
 * into four groups: batch (both operands and the result), m (A and the
 * result), n (B and the result), k (A and B, summed). It maps to one BLAS
 * call per batch index when each group occupies consecutive modes of its
 * operand in one order (so the group is one matrix dimension with one
 * stride) and one of each matrix's two dimensions has unit stride (row-
 * or column-major, a transposition flag). Strides and flags are chosen so
 * that no copy is made where the layouts allow; an operand computed by a
 * loop nest for this contraction alone is laid out as the call wants it;
 * otherwise the operand is first copied into [batch, m, k] or
 * [batch, k, n] order (TTGT), one copy for every contraction that needs
 * the same operand in the same order. Remaining copies that transpose
 * run in cache tiles (emit_dense.c).
 *
 * The result is laid out [batch, m, n]; when its only user stores it
 * into a tensor whose layout fits (possibly as Cᵀ = Bᵀ·Aᵀ), the BLAS call
 * writes the tensor directly, with beta = 1 for += and alpha negated for
 * -=, and the store emits nothing.
 *
 * Shapes: m and n empty is a dot product, one of them empty a GEMV,
 * otherwise a GEMM; batch labels become loops around the call.
 */
#include <string.h>

#include "tx.h"

#define TX_MAX_OPERANDS_SPLIT 64

static int count_in(const mode_seq *s, int label, int *pos)
{
    int c = 0;
    for (int i = 0; i < s->n; i++)
        if (s->label[i] == label) {
            c++;
            *pos = i;
        }
    return c;
}

/* Position of the last mode of group G in S if G occupies consecutive
   modes in this order, each once; -1 if not; -2 for an empty group. */
static int group_last(const mode_seq *s, const int *G, int n)
{
    if (n == 0)
        return -2;
    int prev = -1, p = 0;
    for (int i = 0; i < n; i++) {
        if (count_in(s, G[i], &p) != 1 || (i > 0 && p != prev + 1))
            return -1;
        prev = p;
    }
    return prev;
}

/* Can S serve as the matrix [rows R × cols C] (either may be empty)? */
static int matrix_ok(const mode_seq *s, const int *R, int nr, const int *C, int nc)
{
    int lr = group_last(s, R, nr), lc = group_last(s, C, nc);
    if (lr == -1 || lc == -1)
        return 0;
    if (nr == 0 || nc == 0)
        return 1; /* a vector: any stride */
    return lc == s->n - 1 || lr == s->n - 1;
}

static int batch_ok(const mode_seq *s, const int *B, int nb)
{
    int p;
    for (int i = 0; i < nb; i++)
        if (count_in(s, B[i], &p) != 1)
            return 0;
    return 1;
}

/* Labels of GROUP sorted by their position in S. */
static void sort_by(const mode_seq *s, int *group, int n)
{
    int pos[TX_MAX_MODES];
    for (int i = 0; i < n; i++) {
        pos[i] = s->n;
        count_in(s, group[i], &pos[i]);
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && pos[j] < pos[j - 1]; j--) {
            int t = pos[j]; pos[j] = pos[j - 1]; pos[j - 1] = t;
            t = group[j]; group[j] = group[j - 1]; group[j - 1] = t;
        }
}

static int has(const g_value *v, int l)
{
    for (int i = 0; i < v->rank; i++)
        if (v->label[i] == l)
            return 1;
    return 0;
}

/* The copies made so far: a second contraction that needs the same
   operand in the same layout reads the first one's copy. */
typedef struct {
    g_value **v;
    int n, cap;
} copy_list;

/* A copy of W with its labels in the order B, then G1, then G2, in
   LIKE's element type: the one made before for another contraction if
   there is one (*NEW 0), else a new value (*NEW 1) the caller puts into
   the list. */
static g_value *copy_as(graph *g, copy_list *made, g_value *w, const g_value *like, const blas_plan *p,
                        const int *g1, int n1, const int *g2, int n2, int *new)
{
    int order[3 * TX_MAX_MODES], n = 0;
    for (int i = 0; i < p->nb; i++) order[n++] = p->batch[i];
    for (int i = 0; i < n1; i++) order[n++] = g1[i];
    for (int i = 0; i < n2; i++) order[n++] = g2[i];
    for (int k = 0; k < made->n; k++) {
        g_value *c = made->v[k];
        if (c->in[0] != w || c->dt != like->dt || c->rank != n ||
            memcmp(c->label, order, sizeof(int) * (size_t)n) != 0)
            continue;
        *new = 0;
        return c;
    }
    g_value *c = graph_value_new(g, OP_CONTRACT, 1, like->stmt, like->span);
    graph_set_operand(c, 0, w, 1);
    c->dt = like->dt;
    graph_set_modes_like(c, n, order, w);
    if (made->n == made->cap) {
        int cap = made->cap ? 2 * made->cap : 16;
        g_value **v = arena_alloc(g->arena, sizeof(g_value *) * (size_t)cap);
        if (made->n)
            memcpy(v, made->v, sizeof(g_value *) * (size_t)made->n);
        made->v = v;
        made->cap = cap;
    }
    made->v[made->n++] = c;
    *new = 1;
    return c;
}

/* Removes label L from group G[0..*N) if it is there; 1 if it was. */
static int drop(int *G, int *n, int l)
{
    for (int i = 0; i < *n; i++)
        if (G[i] == l) {
            memmove(G + i, G + i + 1, sizeof(int) * (size_t)(*n - i - 1));
            (*n)--;
            return 1;
        }
    return 0;
}

static double group_size(const graph *g, const g_value *A, const g_value *B, const int *G, int n);
static double group_extent(const graph *g, const g_value *v, int label);

/* The smallest matrix dimension a looped call may have: below it, the
   calls are too small for BLAS to beat one copy and one large call. */
#define LOOP_MIN_DIM 32

/* Where A (layout SA) or B (SB) cannot be read as matrices, one or two of
   the m, n and k labels taken out into loops around the call may leave
   groups that can: P gets them (in LOOP) if the calls keep every matrix
   dimension at least LOOP_MIN_DIM (the fewest calls win). 1 if P
   changed. */
static int plan_loops(const graph *g, blas_plan *p, const mode_seq *sa, const mode_seq *sb)
{
    int cand[3 * TX_MAX_MODES], nc = 0;
    for (int i = 0; i < p->nm; i++) cand[nc++] = p->m[i];
    for (int i = 0; i < p->nn; i++) cand[nc++] = p->n[i];
    for (int i = 0; i < p->nk; i++) cand[nc++] = p->k[i];
    blas_plan best = {0};
    double best_calls = 0;
    for (int x = 0; x < nc; x++)
        for (int y = x; y < nc; y++) { /* y == x: one label */
            blas_plan q = *p;
            int ls[2] = {cand[x], cand[y]}, nls = x == y ? 1 : 2;
            for (int i = 0; i < nls; i++) {
                if (!drop(q.m, &q.nm, ls[i]) && !drop(q.n, &q.nn, ls[i]))
                    drop(q.k, &q.nk, ls[i]);
                q.loop[q.nl++] = ls[i];
            }
            if (q.nk == 0 || !matrix_ok(sa, q.m, q.nm, q.k, q.nk) || !matrix_ok(sb, q.k, q.nk, q.n, q.nn))
                continue;
            double ms = group_size(g, p->a, p->b, q.m, q.nm), ns = group_size(g, p->a, p->b, q.n, q.nn),
                   ks = group_size(g, p->a, p->b, q.k, q.nk);
            if (ks < LOOP_MIN_DIM || (q.nm && ms < LOOP_MIN_DIM) || (q.nn && ns < LOOP_MIN_DIM))
                continue;
            double calls = group_size(g, p->a, p->b, q.loop, q.nl);
            if (calls < 1 || (best.nl && calls >= best_calls))
                continue;
            best = q;
            best_calls = calls;
        }
    if (!best.nl)
        return 0;
    *p = best;
    return 1;
}

/* Does a call of plan P read W (its layout S) along its contiguous mode,
   or near enough? Not when W's last mode is a batch label or a label
   taken out into loops around the calls and as long as a cache line (each
   call then reads a line per element, and the lines of the other calls
   wait in the cache, or do not). */
static int read_along(const graph *g, const g_value *w, const mode_seq *s, const blas_plan *p)
{
    if (s->n == 0)
        return 1;
    int l = s->label[s->n - 1];
    for (int i = 0; i < p->nm; i++) if (p->m[i] == l) return 1;
    for (int i = 0; i < p->nn; i++) if (p->n[i] == l) return 1;
    for (int i = 0; i < p->nk; i++) if (p->k[i] == l) return 1;
    return group_extent(g, w, l) * dt_size(w->dt) < 64;
}

/* Is W an elementwise value that only its one user reads (log(P) in
   -T("i,j") * log(P("i,j")))? A loop nest computes it inside its loops
   (pass_fuse), reading W's operands once; a BLAS call would read it after
   a pass that writes it: exp(A("i,j")) * x("j") over 2000x2000 on one
   thread took 7.5 and 7.9 ms as that pass and a dgemv, 5.9 and 6.5 as one
   nest (build/bench/tx_loop, the two libraries alternated). */
static int fused_in_a_nest(const g_value *w)
{
    return graph_is_elementwise(w) && w->nuses == 1 && !w->nmaps && !w->blas;
}

/* The cost model of a memory-bound call (a DOT or a GEMV: about one
   multiply-add per element read, so its time is the bytes it reads): the
   call is worth making only if it reads its operands as they lie, each
   along its contiguous mode. A copy first (TTGT) reads and writes the
   operand once more, as much as the product itself; calls per batch or
   looped index that walk an operand with the stride of a whole row or
   plane read a cache line per element (A(i,j,k)B(j,k) -> C(i,k) as 40000
   ddot of stride 200 was 6x slower than numpy's one pass). A loop nest
   reads each operand once in the order it is stored, the summed labels
   outside a contiguous output row where that fits (emit_dense.c). Only
   the larger operand's reads count (both when they are equal, as in a
   DOT): A(i,j,k)B(k,j) -> C(i,j) stays a GEMV per j, B's column read with
   the stride of a row but from the cache. 1 if the plan P (operands A and B, layouts SA and SB) may stay BLAS calls. */
static int memory_bound_fits(const graph *g, const blas_plan *p, const g_value *A, const mode_seq *sa,
                             const g_value *B, const mode_seq *sb)
{
    if (p->nm && p->nn)
        return 1; /* a GEMM: compute-bound, a copy pays for itself */
    if (fused_in_a_nest(A) || fused_in_a_nest(B))
        return 0;
    if (!matrix_ok(sa, p->m, p->nm, p->k, p->nk) || !matrix_ok(sb, p->k, p->nk, p->n, p->nn))
        return 0; /* it would need a copy */
    /* the larger operand's bytes are the call's time; the smaller one (a
       GEMV's vector) is read again by every call from the cache */
    double za = graph_value_elements(g, A), zb = graph_value_elements(g, B);
    return (za < zb || read_along(g, A, sa, p)) && (zb < za || read_along(g, B, sb, p));
}

/* Lays W, a computed value whose layout nothing relies on yet (one user,
   computed by a loop nest, not by BLAS), out as B, then G1, then G2, so
   that its user reads it without a copy; 0 if W is not such a value. */
static int can_relayout(const g_value *w)
{
    return w->nuses == 1 && !w->blas && !w->nmaps && !w->inlined &&
           (w->op == OP_ADD || w->op == OP_MAP || w->op == OP_CONTRACT || w->op == OP_REDUCE);
}

static int relayout(g_value *w, const blas_plan *p, const int *g1, int n1, const int *g2, int n2)
{
    if (!can_relayout(w))
        return 0;
    int order[3 * TX_MAX_MODES], n = 0;
    for (int i = 0; i < p->nb; i++) order[n++] = p->batch[i];
    for (int i = 0; i < n1; i++) order[n++] = g1[i];
    for (int i = 0; i < n2; i++) order[n++] = g2[i];
    if (n != w->rank)
        return 0;
    graph_set_modes_like(w, n, order, w);
    return 1;
}

/* The store V's value goes to, if V can write it directly. */
static g_value *direct_store(graph *g, g_value *v)
{
    if (v->nuses != 1 || v->id + 1 >= g->n)
        return NULL;
    g_value *s = g->v[v->id + 1];
    if (s->op != OP_STORE || s->in[0] != v || s->dt != v->dt || s->nmaps)
        return NULL;
    for (int i = 0; i < 2; i++) { /* it must not read the tensor it writes */
        const g_value *w = v->in[i];
        if (w->op == OP_INDEX && w->in[0]->var == s->var)
            return NULL;
    }
    return s;
}

static void store_modes(const g_value *s, mode_seq *ms)
{
    ms->n = s->rank;
    for (int i = 0; i < s->rank; i++) {
        ms->label[i] = s->store_label[i];
        ms->chip[i] = 0;
        ms->ext[i] = s->ext[i];
    }
}

/* Would a result laid out ORDER (N labels) let USER, an elementwise
   operation (nothing of V's summed), read it in its own loop order (USER's
   modes, those V has, in ORDER)? Reading it the other way round walks one
   of the two with a stride of a whole row. */
static int follows_user(const g_value *v, const g_value *user, const int *order, int n)
{
    if (!user || !(user->op == OP_ADD || user->op == OP_MAP || user->op == OP_CONTRACT))
        return 0;
    if (user->op == OP_CONTRACT)
        for (int i = 0; i < n; i++)
            if (!has(user, order[i]))
                return 0; /* it sums V: suits_user's case */
    int k = 0;
    for (int i = 0; i < user->rank; i++)
        if (has(v, user->label[i])) {
            if (k >= n || order[k] != user->label[i])
                return 0;
            k++;
        }
    return k == n;
}

/* Would a result laid out ORDER (N labels) let USER, a contraction that
   sums some of them with its other operand, read it as a matrix whose
   summed labels are the last ones (no copy)? */
static int suits_user(const g_value *v, const g_value *user, const int *order, int n)
{
    if (!user || user->op != OP_CONTRACT || user->nin != 2)
        return 0;
    const g_value *other = user->in[0] == v ? user->in[1] : user->in[0];
    int nk = 0;
    for (int i = 0; i < n; i++)
        if (has(other, order[i]) && !has(user, order[i]))
            nk++;
    if (nk == 0)
        return 0;
    for (int i = n - nk; i < n; i++) /* the summed labels form the suffix */
        if (!(has(other, order[i]) && !has(user, order[i])))
            return 0;
    return 1;
}

/* The plan of Cᵀ = Bᵀ·Aᵀ: operands and the m and n groups exchanged. */
static blas_plan transposed(const blas_plan *p)
{
    blas_plan q = *p;
    q.a = p->b;
    q.b = p->a;
    q.nm = p->nn;
    q.nn = p->nm;
    memcpy(q.m, p->n, sizeof q.m);
    memcpy(q.n, p->m, sizeof q.n);
    return q;
}

static double group_extent(const graph *g, const g_value *v, int label)
{
    for (int m = 0; m < v->rank; m++)
        if (v->label[m] == label)
            return graph_extent_estimate(g, v->ext[m]);
    return 1;
}

/* The product of the extents of the labels G[0..N) (each in A or B). */
static double group_size(const graph *g, const g_value *A, const g_value *B, const int *G, int n)
{
    double z = 1;
    for (int i = 0; i < n; i++)
        z *= has(A, G[i]) ? group_extent(g, A, G[i]) : group_extent(g, B, G[i]);
    return z;
}

/* At most this many multiply-adds, a product known to be that small is
   a loop nest: a 2x2 matrix product or a dot of 3 costs less than
   the BLAS call's own overhead (about 150 ns). */
#define TINY_PRODUCT 64

/* Is the product of A and B (every label once) known to be at most
   TINY_PRODUCT multiply-adds? */
static int tiny_product(const graph *g, const g_value *A, const g_value *B)
{
    double work = 1;
    for (int i = 0; i < A->rank; i++) {
        int64_t e = graph_extent_known(g, A->ext[i]);
        if (e < 0)
            return 0;
        work *= (double)e;
    }
    for (int i = 0; i < B->rank; i++)
        if (!has(A, B->label[i])) {
            int64_t e = graph_extent_known(g, B->ext[i]);
            if (e < 0)
                return 0;
            work *= (double)e;
        }
    return work <= TINY_PRODUCT;
}

/* The operand K of complex product V that conj(X) of a value X of V's
   type is, used by V alone: X (a dot reads it and conjugates, zdotc);
   else the operand itself. */
static g_value *unconjugated(g_value *v, int k, int *conj)
{
    g_value *w = v->in[k];
    if (!dt_complex(v->dt) || w->op != OP_MAP || w->fn != MAP_CONJ || w->nuses != 1 || w->nmaps ||
        w->in[0]->dt != v->dt || w->in[0]->rank != w->rank)
        return w;
    *conj = 1 + k;
    return w->in[0];
}

static void plan_one(graph *g, copy_list *made, g_value *v, const g_value *user)
{
    if (v->coef_in[0] != 1 || v->coef_in[1] != 1 || v->nmaps)
        return; /* (a sparse map makes it a sparse loop nest, not a GEMM) */
    int conj = 0;
    g_value *A = unconjugated(v, 0, &conj), *B = conj ? v->in[1] : unconjugated(v, 1, &conj);
    /* an operand of another type: a complex matrix product converts it
       (a copy, then zgemm/cgemm, which pays for the copy); a complex
       GEMV or DOT (memory-bound: the copy would cost as much as the
       product), and a real product mixing f32 and f64, stay in loops */
    int mixed = A->dt != v->dt || B->dt != v->dt;
    if (mixed && !dt_complex(v->dt))
        return;
    if (A->rank == 0 || B->rank == 0 || A->inlined || B->inlined)
        return;
    /* a delta: BLAS would need it in memory (n^3 elements for
       delta("i,j,k"), n^2 for a trace's), a loop nest compares the indices
       and reads only the entries it selects (tx(5): never from memory) */
    for (int k = 0; k < 2; k++)
        if (v->in[k]->op == OP_MAP && v->in[k]->fn == MAP_DELTA)
            return;
    blas_plan p = {0};
    for (int i = 0; i < A->rank; i++) {
        int l = A->label[i];
        if (has(B, l) && has(v, l)) p.batch[p.nb++] = l;
        else if (has(B, l)) p.k[p.nk++] = l;
        else if (has(v, l)) p.m[p.nm++] = l;
        else return; /* a label only A has and sums: not a product shape */
    }
    for (int i = 0; i < B->rank; i++) {
        int l = B->label[i];
        if (!has(A, l)) {
            if (!has(v, l))
                return;
            p.n[p.nn++] = l;
        }
    }
    if (p.nk == 0)
        return; /* nothing summed: an elementwise or outer product, fused instead */
    if (conj && (p.nm || p.nn || p.nb || A == B))
        return; /* conj(x) in a dot only (cblas has no conjugate without a transpose) */
    p.conj = conj;
    if (tiny_product(g, A, B))
        return;
    if (mixed && (p.nm == 0 || p.nn == 0))
        return;
    mode_seq sa, sb;
    if (graph_modes(A, &sa) < 0 || graph_modes(B, &sb) < 0)
        return;
    if (!batch_ok(&sa, p.batch, p.nb) || !batch_ok(&sb, p.batch, p.nb))
        return;
    sort_by(&sa, p.m, p.nm);
    sort_by(&sb, p.n, p.nn);
    /* k order: A's, else B's; whichever operand then does not fit is copied */
    sort_by(&sa, p.k, p.nk);
    if (!matrix_ok(&sa, p.m, p.nm, p.k, p.nk) || !matrix_ok(&sb, p.k, p.nk, p.n, p.nn)) {
        int kb[TX_MAX_MODES];
        memcpy(kb, p.k, sizeof kb);
        sort_by(&sb, kb, p.nk);
        if ((matrix_ok(&sb, kb, p.nk, p.n, p.nn) && matrix_ok(&sa, p.m, p.nm, kb, p.nk)) ||
            (matrix_ok(&sb, kb, p.nk, p.n, p.nn) && can_relayout(A))) /* A is laid out to fit B */
            memcpy(p.k, kb, sizeof kb);
    }
    int fresh = 0;
    if (!matrix_ok(&sa, p.m, p.nm, p.k, p.nk) && A->dt == v->dt && relayout(A, &p, p.m, p.nm, p.k, p.nk))
        graph_modes(A, &sa);
    if (!matrix_ok(&sb, p.k, p.nk, p.n, p.nn) && A != B && B->dt == v->dt && relayout(B, &p, p.k, p.nk, p.n, p.nn))
        graph_modes(B, &sb);
    if ((!matrix_ok(&sa, p.m, p.nm, p.k, p.nk) || !matrix_ok(&sb, p.k, p.nk, p.n, p.nn)) && !mixed &&
        !dt_complex(v->dt)) {
        p.a = A;
        p.b = B;
        plan_loops(g, &p, &sa, &sb); /* strided calls in loops rather than a copy */
    }
    if (!memory_bound_fits(g, &p, A, &sa, B, &sb))
        return; /* a loop nest streams the operands once, contiguously */
    if (!matrix_ok(&sa, p.m, p.nm, p.k, p.nk) || A->dt != v->dt) {
        A = copy_as(g, made, A, v, &p, p.m, p.nm, p.k, p.nk, &fresh);
        if (fresh)
            graph_insert_before(g, v, A);
        graph_set_operand(v, 0, A, 1);
    }
    if (!matrix_ok(&sb, p.k, p.nk, p.n, p.nn) || B->dt != v->dt) {
        B = copy_as(g, made, B, v, &p, p.k, p.nk, p.n, p.nn, &fresh);
        if (fresh)
            graph_insert_before(g, v, B);
        graph_set_operand(v, 1, B, 1);
    }
    p.a = A;
    p.b = B;
    if (conj) { /* the dot reads x in place of conj(x), which nothing else uses */
        g_value *c = v->in[conj - 1];
        graph_set_operand(v, conj - 1, conj == 1 ? A : B, 1);
        if (c->nuses == 0 && !c->dead)
            graph_kill(g, c);
    }

    /* the result: straight into the stored tensor if its layout fits */
    g_value *s = direct_store(g, v);
    if (s) {
        mode_seq sc;
        store_modes(s, &sc);
        if (batch_ok(&sc, p.batch, p.nb) && group_last(&sc, p.m, p.nm) != -1 &&
            group_last(&sc, p.n, p.nn) != -1) {
            int lm = group_last(&sc, p.m, p.nm), ln = group_last(&sc, p.n, p.nn);
            if (p.nm == 0 || p.nn == 0 || ln == sc.n - 1) {
                p.store = s;
            } else if (lm == sc.n - 1) { /* Cᵀ = Bᵀ·Aᵀ */
                p = transposed(&p);
                p.store = s;
            }
        }
    }
    if (!p.store) { /* a temporary laid out [batch, m, n], or [batch, n, m] as
                       Cᵀ = Bᵀ·Aᵀ when that is how its user wants to read it */
        int order[TX_MAX_MODES], n = 0, swapped[TX_MAX_MODES], ns = 0;
        for (int i = 0; i < p.nb; i++) order[n++] = p.batch[i];
        for (int i = 0; i < p.nl; i++) /* the looped labels the result keeps, outside */
            if (has(v, p.loop[i]))
                order[n++] = p.loop[i];
        ns = n;
        memcpy(swapped, order, sizeof(int) * (size_t)n);
        for (int i = 0; i < p.nm; i++) order[n++] = p.m[i];
        for (int i = 0; i < p.nn; i++) order[n++] = p.n[i];
        for (int i = 0; i < p.nn; i++) swapped[ns++] = p.n[i];
        for (int i = 0; i < p.nm; i++) swapped[ns++] = p.m[i];
        /* with no preference from the user (a contraction summing it, or
           an elementwise one reading it in its own order), the larger side
           goes to N:
           OpenBLAS runs a 64x1600 by 1600x1600 product about 17% faster
           than the 1600x1600 by 1600x64 one (measured on this machine) */
        double msz = 1, nsz = 1;
        for (int i = 0; i < p.nm; i++)
            msz *= group_extent(g, v, p.m[i]);
        for (int i = 0; i < p.nn; i++)
            nsz *= group_extent(g, v, p.n[i]);
        int want_order = suits_user(v, user, order, n) || follows_user(v, user, order, n);
        int want_swap = suits_user(v, user, swapped, ns) || follows_user(v, user, swapped, ns);
        if (p.nm && p.nn && !want_order && (want_swap || msz > nsz)) {
            p = transposed(&p);
            memcpy(order, swapped, sizeof order);
        }
        graph_set_modes_like(v, n, order, v);
    } else {
        p.store->absorbed = 1;
    }
    v->blas = arena_alloc(g->arena, sizeof *v->blas);
    *v->blas = p;
}

/* Is W a version of variable VAR, or a view of one? */
static int version_of(const g_value *w, int var)
{
    while (w->op == OP_INDEX)
        w = w->in[0];
    return (w->op == OP_INPUT || w->op == OP_STORE) && w->var == var;
}

/* Does W read a version of variable VAR, itself or through the values it
   is computed from (which fusion may compute where W is used)? */
static int reads_version(const g_value *w, int var, int depth)
{
    if (version_of(w, var))
        return 1;
    if (w->op == OP_INPUT || w->op == OP_STORE || w->op == OP_INDEX || depth > 64)
        return depth > 64; /* too deep to tell: say yes */
    for (int i = 0; i < w->nin; i++)
        if (reads_version(w->in[i], var, depth + 1))
            return 1;
    return 0;
}

/* A sum stored whole, T = Σ c_i·t_i (or +=, -=), whose terms include
   pairwise contractions used nowhere else: one store per contraction,
   right after it (the first as the statement's store, the others
   accumulating), and the remaining terms stored last, so that each
   contraction's BLAS call writes T itself (alpha c_i, beta 1 after the
   first) instead of a buffer of its own added in a loop afterwards
   (matrix products only: a GEMV or a dot stays in its fused row loop).
   Not where anything from the first such contraction to the store reads
   or writes T, nor where a remaining term reads T (X = 0.5 X + A A: the
   terms stored last would read the X the first call wrote): T now
   changes earlier. */
static void split_stored_sum(graph *g, g_value *s)
{
    g_value *a = s->in[0];
    if (a->op != OP_ADD || a->nuses != 1 || a->nmaps || s->nmaps || a->dt != s->dt || a->rank != s->rank ||
        (s->store_op != '=' && s->store_op != '+' && s->store_op != '-'))
        return;
    g_value *term[TX_MAX_OPERANDS_SPLIT];
    int nt = 0, nother = 0;
    for (int i = 0; i < a->nin; i++) {
        g_value *c = a->in[i];
        int ok = c->op == OP_CONTRACT && c->nin == 2 && !ls_empty(c->summed) && c->nuses == 1 && !c->nmaps &&
                 c->dt == s->dt && c->rank == a->rank && nt < TX_MAX_OPERANDS_SPLIT;
        if (ok) { /* GEMM-shaped: each operand has a label of the result the other lacks */
            labelset l0 = graph_value_labels(c->in[0]), l1 = graph_value_labels(c->in[1]),
                     out = graph_value_labels(c);
            ok = !ls_empty(ls_inter(ls_minus(l0, l1), out)) && !ls_empty(ls_inter(ls_minus(l1, l0), out));
        }
        for (int j = 0; ok && j < i; j++)
            ok = a->in[j] != c;
        if (ok)
            term[nt++] = c;
        else
            nother++;
    }
    if (nt == 0 || nt + (nother > 0) < 2)
        return;
    for (int i = 1; i < nt; i++) /* in list order */
        for (int j = i; j > 0 && term[j - 1]->id > term[j]->id; j--) {
            g_value *t = term[j];
            term[j] = term[j - 1];
            term[j - 1] = t;
        }
    for (int k = term[0]->id; k < s->id; k++) {
        const g_value *w = g->v[k];
        if (w == a || w->dead)
            continue;
        if (w->op == OP_STORE && w->var == s->var)
            return;
        for (int i = 0; i < w->nin; i++)
            if (version_of(w->in[i], s->var))
                return;
    }
    for (int i = 0; i < a->nin; i++) {
        int is_term = 0;
        for (int j = 0; j < nt; j++)
            is_term |= a->in[i] == term[j];
        if (!is_term && reads_version(a->in[i], s->var, 0))
            return;
    }
    int acc = s->store_op == '-' ? '-' : '+';
    g_value *prev = s->nin > 1 ? s->in[1] : NULL, *other[64];
    double ocoef[64];
    int no = 0;
    if (nother > 64)
        return;
    for (int i = 0; i < a->nin; i++) {
        int is_term = 0;
        for (int j = 0; j < nt; j++)
            is_term |= a->in[i] == term[j];
        if (is_term)
            a->in[i]->coef *= a->coef_in[i]; /* the term's factor into its scale: BLAS's alpha */
        else {
            other[no] = a->in[i];
            ocoef[no++] = a->coef_in[i];
        }
    }
    for (int j = 0; j < nt; j++) {
        g_value *st = graph_value_new(g, OP_STORE, 1, s->stmt, s->span);
        graph_set_operand(st, 0, term[j], 1);
        st->store_op = j == 0 && s->store_op == '=' ? '=' : j == 0 ? s->store_op : acc;
        if (prev)
            graph_add_operand(g, st, prev, 1);
        st->var = s->var;
        st->dt = s->dt;
        memcpy(st->store_label, s->store_label, sizeof s->store_label);
        graph_set_modes(st, s->rank, s->label, s->ext);
        graph_insert_before(g, g->v[term[j]->id + 1], st);
        prev = st;
    }
    if (no == 0) {
        graph_replace_uses(g, s, prev);
        graph_kill(g, a);
        return;
    }
    graph_set_operands(g, a, no, other, ocoef);
    if (s->store_op == '=')
        s->store_op = '+';
    if (s->nin > 1)
        graph_set_operand(s, 1, prev, 1);
    else
        graph_add_operand(g, s, prev, 1);
}

void pass_blas(graph *g)
{
    if (!g->spec.blas)
        return;
    for (int k = 0; k < g->n; k++)
        if (g->v[k]->op == OP_STORE && !g->v[k]->dead)
            split_stored_sum(g, g->v[k]);
    graph_renumber(g);
    g_value **user = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(g->n + 1));
    for (int k = 0; k < g->n; k++)
        for (int i = 0; i < g->v[k]->nin; i++)
            user[g->v[k]->in[i]->id] = g->v[k];
    copy_list made = {0};
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->op == OP_CONTRACT && v->nin == 2 && !v->dead)
            plan_one(g, &made, v, v->nuses == 1 ? user[k] : NULL);
    }
    graph_renumber(g);
}
