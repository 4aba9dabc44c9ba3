/*
 * emit_kernel.c - outlining: every loop nest becomes a function of its own
 *
 *     typedef struct { <exactly what the nest references> } tx_kN_args;
 *     static int tx_kN(const tx_kN_args *tx_a, int64_t tx_lo, int64_t tx_hi);
 *
 * called from the program function over its whole range. A kernel is the
 * unit a thread pool, a profiler or a second compiler tier takes (Halide's
 * closures over a struct, TACO's and XLA's one function per kernel): the
 * range [tx_lo, tx_hi) is the outermost loop over an output label (whose
 * iterations write disjoint elements), or [0, 1) when the nest has none
 * that may be split (scalar results, loops that follow sparse maps).
 *
 * The body is emitted by the same code as before outlining, into a buffer
 * of its own; every reference to a tensor, value, dim or map goes through
 * emit_expr.c, which records it here, and the record is written after the
 * body, from those records. The function loads each field into a local of
 * the name the body uses. Scratch blocks of the primitives are the
 * kernel's own (on its stack), so a kernel shares nothing with another
 * call of itself.
 *
 * A loop nest that follows sparse maps is emitted twice: the first time
 * learns which decoded target labels the body uses (emit_sparse.c), the
 * second leaves out the decodes nobody reads. Nothing is edited after it
 * was written.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

static unsigned char *marks(emitter *E, int n)
{
    return arena_alloc(E->g->arena, (size_t)(n > 0 ? n : 1));
}

static void clear_refs(emitter *E)
{
    kernel_ctx *k = &E->k;
    sema_program *S = SP(E);
    memset(k->vars, 0, (size_t)(S->nvars > 0 ? S->nvars : 1));
    memset(k->values, 0, (size_t)(E->g->n > 0 ? E->g->n : 1));
    memset(k->dims, 0, (size_t)(S->ndims > 0 ? S->ndims : 1));
    memset(k->maps, 0, (size_t)(S->nmaps > 0 ? S->nmaps : 1));
    k->has_range = 0;
    k->range_blocks = 0;
    k->blk_buffers = 0;
    k->body.len = 0;
    if (k->body.p)
        k->body.p[0] = 0;
    E->nentries = 0;
}

static void kernel_begin(emitter *E, const g_value *v, int want_range)
{
    kernel_ctx *k = &E->k;
    TX_ASSERT(!k->active);
    sema_program *S = SP(E);
    if (!k->vars) {
        k->vars = marks(E, S->nvars);
        k->values = marks(E, E->g->n);
        k->dims = marks(E, S->ndims);
        k->maps = marks(E, S->nmaps);
    }
    k->active = 1;
    k->id = E->nkernels++;
    k->value = v;
    k->program = E->out;
    E->out = &k->body;
    clear_refs(E);
    k->want_range = want_range && !v->nmaps;
    k->decode_pass = 0;
}

/* Starts the second emission of a kernel that follows sparse maps. */
static void kernel_restart(emitter *E)
{
    clear_refs(E);
    E->k.decode_pass = 2;
}

void kernel_ref_var(emitter *E, int var)
{
    if (E->k.active)
        E->k.vars[var] = 1;
}

void kernel_ref_value(emitter *E, int id)
{
    if (E->k.active)
        E->k.values[id] = 1;
}

void kernel_ref_dim(emitter *E, int dim)
{
    if (E->k.active)
        E->k.dims[dim] = 1;
}

void kernel_ref_map(emitter *E, int map)
{
    if (E->k.active)
        E->k.maps[map] = 1;
}

int kernel_range_loop(emitter *E, int label, tx_extent ext, int depth, int brace)
{
    kernel_ctx *k = &E->k;
    if (!k->active || !k->want_range || k->has_range)
        return 0;
    k->has_range = 1;
    k->range_ext = ext;
    put(E, "%*sfor (int64_t ", 4 * depth, "");
    put_label(E, label);
    put(E, " = tx_lo; ");
    put_label(E, label);
    put(E, " < tx_hi; ");
    put_label(E, label);
    put(E, brace ? "++) {\n" : "++)\n");
    return 1;
}

int kernel_range_blocks(emitter *E, tx_extent ext, int depth)
{
    kernel_ctx *k = &E->k;
    if (!k->active || !k->want_range || k->has_range)
        return 0;
    k->has_range = 1;
    k->range_blocks = 1;
    k->range_ext = ext;
    put(E, "%*sfor (int64_t tx_ib = tx_lo; tx_ib < tx_hi; tx_ib++) {\n", 4 * depth, "");
    return 1;
}

/* The declaration of field or local NAME of the record (TYPE text). */
static void put_field(emitter *E, tx_buf *o, const char *type, const char *name, int local)
{
    (void)E;
    if (local)
        buf_printf(o, "    %s%s = tx_a->%s;\n", type, name, name);
    else
        buf_printf(o, "    %s%s;\n", type, name);
}

/* Every referenced thing as a field (LOCAL 0), a local loaded from the
   record (1) or an initialiser in the call (2). */
static void put_members(emitter *E, tx_buf *o, int local)
{
    kernel_ctx *k = &E->k;
    sema_program *S = SP(E);
    tx_buf name = {0};
    int first = 1;
    for (int i = 0; i < S->nvars; i++) {
        if (!k->vars[i])
            continue;
        name.len = 0;
        mangle_name(&name, "t_", S->vars[i]->name);
        char type[32];
        snprintf(type, sizeof type, "%s%s *", S->vars[i]->io == IO_IN ? "const " : "", ctype(S->vars[i]->dt));
        if (local == 2)
            buf_printf(o, "%s%s", first ? "" : ", ", name.p);
        else
            put_field(E, o, type, name.p, local);
        first = 0;
    }
    for (int i = 0; i < E->g->n; i++) {
        if (!k->values[i])
            continue;
        char nm[32], type[32];
        snprintf(nm, sizeof nm, "tx_v%d", i);
        snprintf(type, sizeof type, "%s *", ctype(E->g->v[i]->dt));
        if (local == 2)
            buf_printf(o, "%s%s", first ? "" : ", ", nm);
        else
            put_field(E, o, type, nm, local);
        first = 0;
    }
    for (int i = 0; i < S->ndims; i++) {
        if (!k->dims[i])
            continue;
        name.len = 0;
        mangle_name(&name, "d_", S->dims[i]->name);
        if (local == 2)
            buf_printf(o, "%s%s", first ? "" : ", ", name.p);
        else
            put_field(E, o, "int64_t ", name.p, local);
        first = 0;
    }
    for (int i = 0; i < S->nmaps; i++) {
        if (!k->maps[i])
            continue;
        name.len = 0;
        mangle_name(&name, "m_", S->maps[i]->name);
        if (local == 2)
            buf_printf(o, "%s%s", first ? "" : ", ", name.p);
        else
            put_field(E, o, "const tx_sparse_map *", name.p, local);
        first = 0;
    }
    if (first && local == 0)
        buf_puts(o, "    char tx_empty; /* a record needs a member */\n");
    if (first && local == 2)
        buf_puts(o, "0");
    buf_free(&name);
}

static void kernel_end(emitter *E)
{
    kernel_ctx *k = &E->k;
    TX_ASSERT(k->active);
    tx_buf *o = &E->kernels;
    int id = k->id;
    buf_printf(o, "/* kernel %d: value %%%d of statement %d, line %u */\ntypedef struct {\n", id, k->value->id,
               k->value->stmt + 1, k->value->span.line);
    put_members(E, o, 0);
    buf_printf(o, "} tx_k%d_args;\n\n", id);
    buf_printf(o, "static int tx_k%d(const tx_k%d_args *tx_a, int64_t tx_lo, int64_t tx_hi)\n{\n", id, id);
    put_members(E, o, 1);
    if (k->blk_buffers)
        buf_printf(o, "    double tx_blk[%d * TX_BLOCK]; /* scratch blocks of the primitives */\n", k->blk_buffers);
    if (!k->has_range)
        buf_puts(o, "    (void)tx_lo;\n    (void)tx_hi;\n");
    buf_put(o, k->body.p ? k->body.p : "", k->body.len);
    buf_puts(o, "    return 0;\n}\n\n");
    if (k->body.oom)
        o->oom = 1;

    /* the call, from the program function, over the whole range */
    E->out = k->program;
    k->active = 0;
    put(E, "    {\n        tx_k%d_args tx_k = {", id);
    k->active = 0;
    put_members(E, E->out, 2);
    put(E, "};\n        if ((tx_status = tx_k%d(&tx_k, 0, ", id);
    if (!k->has_range)
        put(E, "1");
    else if (k->range_blocks) {
        put(E, "(");
        put_extent(E, k->range_ext);
        put(E, " + TX_BLOCK - 1) / TX_BLOCK");
    } else
        put_extent(E, k->range_ext);
    put(E, ")) != 0)\n            goto tx_done;\n    }\n");
}

void emit_kernel(emitter *E, const g_value *v, void (*body)(emitter *, const g_value *))
{
    kernel_begin(E, v, 1);
    if (v->nmaps) {
        E->k.decode_pass = 1; /* learn which decoded labels are read */
        body(E, v);
        kernel_restart(E);
    }
    body(E, v);
    kernel_end(E);
}
