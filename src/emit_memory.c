/*
 * emit_memory.c - buffers of the generated code: sizes (overflow-checked),
 * liveness of intermediates and of tmp and let tensors, and the JIT's one
 * workspace planned by it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

int emit_is_computed(const g_value *v)
{
    return (v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE ||
            v->op == OP_SCAN || v->op == OP_SLICE || v->op == OP_PART || (v->op == OP_LINALG && v->nout == 1)) &&
           !v->inlined && !v->dead && !(v->blas && v->blas->store) && !v->into;
}

void emit_size(emitter *E, const tx_extent *ext, int rank, size_t elem, int code)
{
    put(E, "    tx_n = 1;\n");
    for (int i = 0; i < rank; i++) {
        put(E, "    if (!tx_mul_ok(tx_n, ");
        put_extent(E, ext[i]);
        put(E, ", &tx_n)) { tx_status = %d; goto tx_done; }\n", code);
    }
    put(E, "    if (!tx_mul_ok(tx_n, %zu, &tx_n)) { tx_status = %d; goto tx_done; }\n", elem, code);
}

static int64_t known_bytes(emitter *E, const tx_extent *ext, int rank, int64_t elem)
{
    int64_t z = elem;
    for (int i = 0; i < rank; i++) {
        tx_extent x = ext[i];
        int64_t v = emit_extent_value(E, x);
        if (v < 0 || (v && z > INT64_MAX / 2 / v))
            return -1;
        z *= v;
    }
    return z;
}

static int64_t round64(int64_t x) { return (x + 63) / 64 * 64; }

/* A buffer of the workspace: its bytes, the positions it is live over, and
   where its offset goes. */
typedef struct {
    int64_t bytes;
    int born, dies;
    int64_t *off;
} block;

/* A byte range [s, e) of a placed block. */
typedef struct {
    int64_t s, e;
} span64;

static int larger_first(const void *a, const void *b)
{
    const block *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return (x->born > y->born) - (x->born < y->born);
}

static int by_start(const void *a, const void *b)
{
    int64_t x = ((const span64 *)a)->s, y = ((const span64 *)b)->s;
    return (x > y) - (x < y);
}

int emit_plan_workspace(emitter *E, const liveness *L, workspace_plan *w)
{
    graph *g = E->g;
    sema_program *S = g->S;
    int n = g->n;
    w->off = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(n + 1));
    w->var_off = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(S->nvars + 1));
    int cap = n + S->nvars + 1, nb = 0;
    block *B = arena_alloc(g->arena, sizeof(block) * (size_t)cap);
    for (int i = 0; i < S->nvars; i++)
        w->var_off[i] = -1;
    for (int k = 0; k < n; k++) {
        /* the tmp and let tensors first written here, then the value */
        for (int j = L->var_born_head[k]; j >= 0; j = L->var_born_next[j]) {
            sym *t = S->vars[j];
            B[nb++] = (block){known_bytes(E, t->ext, t->rank, dt_size(t->dt)), k, L->var_last[j],
                              &w->var_off[j]};
        }
        g_value *v = g->v[k];
        w->off[k] = -1;
        if (!emit_is_computed(v))
            continue;
        /* a call's results are live from the call on */
        B[nb++] = (block){known_bytes(E, v->ext, v->rank, dt_size(v->dt)),
                          v->op == OP_PART ? v->in[0]->id : k, L->last[k] >= 0 ? L->last[k] : k, &w->off[k]};
    }
    int64_t *delta = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(n + 2)); /* live bytes: births - deaths */
    for (int k = 0; k <= n + 1; k++)
        delta[k] = 0;
    int64_t total = 0;
    for (int i = 0; i < nb; i++) {
        if (B[i].bytes < 0 || total > INT64_MAX / 4 - B[i].bytes)
            return -1;
        B[i].bytes = round64(B[i].bytes > 0 ? B[i].bytes : 1);
        total += B[i].bytes;
        delta[B[i].born] += B[i].bytes;
        delta[B[i].dies + 1] -= B[i].bytes;
    }
    /* greedy by size: the largest first, each into the smallest gap left
       by the blocks placed before that are live at the same time (the
       lowest of equal gaps), else above them */
    qsort(B, (size_t)nb, sizeof *B, larger_first);
    span64 *live = arena_alloc(g->arena, sizeof(span64) * (size_t)cap);
    int64_t top = 0;
    for (int i = 0; i < nb; i++) {
        int nl = 0;
        for (int j = 0; j < i; j++)
            if (B[j].born <= B[i].dies && B[i].born <= B[j].dies)
                live[nl++] = (span64){*B[j].off, *B[j].off + B[j].bytes};
        qsort(live, (size_t)nl, sizeof *live, by_start);
        int64_t at = -1, best = INT64_MAX, cur = 0;
        for (int j = 0; j < nl; j++) {
            if (live[j].s - cur >= B[i].bytes && live[j].s - cur < best) {
                best = live[j].s - cur;
                at = cur;
            }
            if (live[j].e > cur)
                cur = live[j].e;
        }
        *B[i].off = at >= 0 ? at : cur;
        if (*B[i].off + B[i].bytes > top)
            top = *B[i].off + B[i].bytes;
    }
    int64_t now = 0;
    w->live_max = 0;
    for (int k = 0; k <= n; k++) {
        now += delta[k];
        if (now > w->live_max)
            w->live_max = now;
    }
    w->size = top;
    return 0;
}

/* Is V's position one where the program function emits code? */
static int emitted(const g_value *v)
{
    return !v->dead && !v->inlined && v->op != OP_INPUT && v->op != OP_CONST && v->op != OP_INDEX;
}

void emit_liveness(emitter *E, liveness *L)
{
    graph *g = E->g;
    sema_program *S = g->S;
    int n = g->n;
    /* a fused value is read where its user is computed */
    int *pos = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    int *last = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    g_value **user = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        for (int i = 0; i < g->v[k]->nin; i++)
            user[g->v[k]->in[i]->id] = g->v[k];
    /* where V reads: a nest of a row group (pass_fuse.c) reads tile by
       tile until the group's last nest is done. A value fused into
       several users is computed in each of them (and in their users',
       where they are fused in turn): it is read from the first of them
       (POS) to the last (RD). Users come after what they read, so going
       down the ids each value's users are final before it is. */
    int *rd = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        pos[k] = rd[k] = -1;
    for (int k = n - 1; k >= 0; k--) {
        g_value *v = g->v[k];
        if (!v->inlined || !user[k] || rd[k] < 0) {
            pos[k] = k;
            rd[k] = v->row_group ? v->row_group - 1 : k;
        }
        for (int i = 0; i < v->nin; i++) {
            int w = v->in[i]->id;
            if (!v->in[i]->inlined)
                continue;
            if (pos[w] < 0 || pos[k] < pos[w])
                pos[w] = pos[k];
            if (rd[k] > rd[w])
                rd[w] = rd[k];
        }
    }
    for (int k = 0; k < n; k++) {
        last[k] = -1;
        for (int i = 0; i < g->v[k]->nin; i++) {
            int w = g->v[k]->in[i]->id;
            if (rd[k] > last[w])
                last[w] = rd[k];
        }
    }
    int *free_head = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    int *free_next = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        free_head[k] = -1;
    for (int k = 0; k < n; k++)
        if (emit_is_computed(g->v[k]) && last[k] >= 0) {
            free_next[k] = free_head[last[k]];
            free_head[last[k]] = k;
        }
    /* a variable's reads: its stores' users, and the readers of its views
       (OP_INDEX), which come after them: backwards, every value's
       position reaches what it reads */
    int *reach = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        reach[k] = rd[k];
    for (int k = n - 1; k >= 0; k--) {
        g_value *v = g->v[k];
        int at = v->op == OP_INDEX ? reach[k] : rd[k];
        for (int i = 0; i < v->nin; i++) {
            g_value *w = v->in[i];
            if ((w->op == OP_INDEX || w->op == OP_STORE) && at > reach[w->id])
                reach[w->id] = at;
        }
    }
    int nv = S->nvars;
    L->var_first = arena_alloc(g->arena, sizeof(int) * (size_t)(nv + 1));
    L->var_last = arena_alloc(g->arena, sizeof(int) * (size_t)(nv + 1));
    L->var_born_head = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    L->var_free_head = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    L->var_born_next = arena_alloc(g->arena, sizeof(int) * (size_t)(nv + 1));
    L->var_free_next = arena_alloc(g->arena, sizeof(int) * (size_t)(nv + 1));
    for (int i = 0; i < nv; i++)
        L->var_first[i] = L->var_last[i] = -1;
    for (int k = 0; k < n; k++) {
        g_value *s = g->v[k];
        if (s->op != OP_STORE || s->dead || (S->vars[s->var]->io != IO_TMP && S->vars[s->var]->io != IO_LET))
            continue;
        /* the first write may come before the store: a BLAS call or a call
           that writes the tensor in place */
        int first = pos[k];
        g_value *w = s->in[0];
        if (w->op == OP_PART)
            w = w->in[0];
        if (emitted(w) && pos[w->id] < first)
            first = pos[w->id];
        int v = s->var;
        if (L->var_first[v] < 0 || first < L->var_first[v])
            L->var_first[v] = first;
        if (reach[k] > L->var_last[v])
            L->var_last[v] = reach[k];
    }
    for (int k = 0; k < n; k++)
        L->var_born_head[k] = L->var_free_head[k] = -1;
    for (int i = nv - 1; i >= 0; i--)
        if (L->var_first[i] >= 0) {
            L->var_born_next[i] = L->var_born_head[L->var_first[i]];
            L->var_born_head[L->var_first[i]] = i;
            L->var_free_next[i] = L->var_free_head[L->var_last[i]];
            L->var_free_head[L->var_last[i]] = i;
        }
    L->last = last;
    L->free_head = free_head;
    L->free_next = free_next;
}
