/*
 * emit_memory.c - buffers of the generated code: sizes (overflow-checked),
 * liveness of intermediates, and the JIT's one workspace planned by it.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

int emit_is_computed(const g_value *v)
{
    return (v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE ||
            v->op == OP_SCAN || v->op == OP_SLICE || v->op == OP_PART || (v->op == OP_LINALG && v->nout == 1)) &&
           !v->inlined && !v->dead && !(v->blas && v->blas->store);
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

int emit_plan_workspace(emitter *E, const int *last, workspace_plan *w)
{
    graph *g = E->g;
    sema_program *S = g->S;
    w->off = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(g->n + 1));
    w->var_off = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(S->nvars + 1));
    int64_t top = 0;
    for (int i = 0; i < S->nvars; i++) {
        sym *t = S->vars[i];
        w->var_off[i] = -1;
        if (t->io != IO_TMP && t->io != IO_LET)
            continue;
        int64_t b = known_bytes(E, t->ext, t->rank, dt_size(t->dt));
        if (b < 0 || top > INT64_MAX / 4 - b)
            return -1;
        w->var_off[i] = top;
        top += round64(b > 0 ? b : 1);
    }
    /* live blocks: [start, end) with the position after which they free */
    int64_t vars_end = top;
    int n = g->n;
    int64_t *bstart = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(n + 1));
    int64_t *bend = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(n + 1));
    int *bdies = arena_alloc(g->arena, sizeof(int) * (size_t)(n + 1));
    int nb = 0;
    for (int k = 0; k < n; k++) {
        w->off[k] = -1;
        g_value *v = g->v[k];
        if (!emit_is_computed(v))
            continue;
        int64_t b = known_bytes(E, v->ext, v->rank, dt_size(v->dt));
        if (b < 0 || top > INT64_MAX / 4 - b)
            return -1;
        b = round64(b > 0 ? b : 1);
        /* the lowest gap between blocks still live here that fits (a
           call's results are live from the call on) */
        int apos = v->op == OP_PART ? v->in[0]->id : k;
        int64_t at = vars_end;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int i = 0; i < nb; i++)
                if (bdies[i] >= apos && at < bend[i] && bstart[i] < at + b) {
                    at = bend[i];
                    moved = 1;
                }
        }
        w->off[k] = at;
        bstart[nb] = at;
        bend[nb] = at + b;
        bdies[nb++] = last[k] >= 0 ? last[k] : k;
        if (at + b > top)
            top = at + b;
    }
    w->size = top;
    return 0;
}

void emit_liveness(emitter *E, int **lastp, int **free_headp, int **free_nextp)
{
    graph *g = E->g;
    /* a fused value is read where its user is computed */
    int *pos = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1));
    int *last = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1));
    g_value **user = arena_alloc(g->arena, sizeof(g_value *) * (size_t)(g->n + 1));
    for (int k = 0; k < g->n; k++)
        for (int i = 0; i < g->v[k]->nin; i++)
            user[g->v[k]->in[i]->id] = g->v[k];
    for (int k = g->n - 1; k >= 0; k--)
        pos[k] = g->v[k]->inlined && user[k] ? pos[user[k]->id] : k;
    for (int k = 0; k < g->n; k++) {
        last[k] = -1;
        for (int i = 0; i < g->v[k]->nin; i++) {
            int w = g->v[k]->in[i]->id;
            if (pos[k] > last[w])
                last[w] = pos[k];
        }
    }
    int *free_head = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1));
    int *free_next = arena_alloc(g->arena, sizeof(int) * (size_t)(g->n + 1));
    for (int k = 0; k < g->n; k++)
        free_head[k] = -1;
    for (int k = 0; k < g->n; k++)
        if (emit_is_computed(g->v[k]) && last[k] >= 0) {
            free_next[k] = free_head[last[k]];
            free_head[last[k]] = k;
        }
    *lastp = last;
    *free_headp = free_head;
    *free_nextp = free_next;
}
