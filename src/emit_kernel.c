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
 * iterations write disjoint elements; a reduction with its summed labels
 * outside takes it on the output row's loop, inside them), or [0, 1) when the nest has none
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
#include <stdlib.h>
#include <string.h>

#include "emit.h"

enum { REF_VAR, REF_VALUE, REF_DIM, REF_MAP };

/* The number of indices of reference kind KIND. */
static int ref_space(emitter *E, int kind)
{
    sema_program *S = SP(E);
    int n = kind == REF_VAR ? S->nvars : kind == REF_VALUE ? E->g->n : kind == REF_DIM ? S->ndims : S->nmaps;
    return n > 0 ? n : 1;
}

static void clear_refs(emitter *E)
{
    kernel_ctx *k = &E->k;
    k->gen++;
    for (int r = 0; r < 4; r++)
        k->refs[r].n = 0;
    k->has_range = 0;
    k->range_blocks = 0;
    k->range_wide = 0;
    k->range_n = 0;
    k->blk_buffers = 0;
    k->row_local = 0;
    k->tile_rows = 0;
    k->streams = 0;
    k->body.len = 0;
    if (k->body.p)
        k->body.p[0] = 0;
    E->nentries = 0;
}

/* Records that the kernel's body references index I of kind KIND. */
static void add_ref(emitter *E, int kind, int i)
{
    kernel_ctx *k = &E->k;
    if (!k->active || k->refs[kind].stamp[i] == k->gen)
        return;
    k->refs[kind].stamp[i] = k->gen;
    k->refs[kind].list[k->refs[kind].n++] = i;
}

static void kernel_begin(emitter *E, const g_value *v, int want_range)
{
    kernel_ctx *k = &E->k;
    TX_ASSERT(!k->active);
    if (!k->refs[0].stamp)
        for (int r = 0; r < 4; r++) { /* zeroed: no stamp is a generation, which start at 1 */
            k->refs[r].stamp = arena_alloc(E->g->arena, sizeof(int) * (size_t)ref_space(E, r));
            k->refs[r].list = arena_alloc(E->g->arena, sizeof(int) * (size_t)ref_space(E, r));
        }
    k->active = 1;
    k->id = E->nkernels++;
    k->value = v;
    k->program = E->out;
    E->out = &k->body;
    clear_refs(E);
    k->want_range = want_range && !v->nmaps;
    k->decode_pass = 0;
    /* the MPI target: a nest over a result that may be held by rows of
       several leading modes runs over them together (its rows) */
    int lead = !E->T->distributed ? 1
               : v->op == OP_STORE ? mpi_plan_lead_var(E->g, v->var)
                                   : mpi_plan_lead_value(E->g, v);
    k->fuse_max = lead > 1 ? lead : 1;
}

/* Starts the second emission of a kernel that follows sparse maps. */
static void kernel_restart(emitter *E)
{
    clear_refs(E);
    E->k.decode_pass = 2;
}

void kernel_ref_var(emitter *E, int var) { add_ref(E, REF_VAR, var); }
void kernel_ref_value(emitter *E, int id) { add_ref(E, REF_VALUE, id); }
void kernel_ref_dim(emitter *E, int dim) { add_ref(E, REF_DIM, dim); }
void kernel_ref_map(emitter *E, int map) { add_ref(E, REF_MAP, map); }

/* Whether the loop about to open takes the kernel's range (the first one
   that may, of a kernel that may be split): records it if so. */
static int take_range(emitter *E, int label, tx_extent ext, int blocks)
{
    kernel_ctx *k = &E->k;
    if (!k->active || !k->want_range || k->has_range)
        return 0;
    k->has_range = 1;
    k->range_blocks = blocks;
    k->range_label = label;
    k->range_ext = ext;
    k->range_n = 1;
    k->range_labels[0] = label;
    k->range_exts[0] = ext;
    return 1;
}

/* The labels of the result of V's nest, in its order (a store's target
   labels). */
static const int *result_labels(const g_value *v)
{
    return v->op == OP_STORE ? v->store_label : v->label;
}

int kernel_range_fused(emitter *E, const int *labels, const tx_extent *ext, int n, int depth)
{
    kernel_ctx *k = &E->k;
    int f = k->fuse_max < n ? k->fuse_max : n;
    if (!k->active || !k->want_range || k->has_range || f < 2)
        return 0;
    const int *rl = result_labels(k->value);
    for (int m = 0; m < f; m++)
        if (m >= k->value->rank || labels[m] != rl[m] || labels[m] < 0)
            return 0;
    take_range(E, labels[0], ext[0], 0);
    k->range_n = f;
    for (int m = 0; m < f; m++) {
        k->range_labels[m] = labels[m];
        k->range_exts[m] = ext[m];
    }
    /* one loop over the index tuples [tx_lo, tx_hi) of the F modes, each
       label's variable stepped like an odometer */
    put(E, "%*sfor (int64_t tx_f = tx_lo", 4 * depth, "");
    for (int m = 0; m < f; m++) {
        put(E, ", ");
        put_label(E, labels[m]);
        put(E, " = tx_lo < tx_hi ? tx_lo");
        for (int j = m + 1; j < f; j++) {
            put(E, " / ");
            put_extent(E, ext[j]);
        }
        if (m > 0) {
            put(E, " %% ");
            put_extent(E, ext[m]);
        }
        put(E, " : 0");
    }
    put(E, "; tx_f < tx_hi; tx_f++, ");
    for (int m = f - 1; m >= 1; m--) {
        put(E, "++");
        put_label(E, labels[m]);
        put(E, " == ");
        put_extent(E, ext[m]);
        put(E, " ? (");
        put_label(E, labels[m]);
        put(E, " = 0, ");
    }
    put(E, "++");
    put_label(E, labels[0]);
    for (int m = 1; m < f; m++)
        put(E, ") : 0");
    put(E, ")\n");
    return f;
}

void kernel_put_range_for(emitter *E, int label, int depth, int brace)
{
    if (label < 0) {
        put(E, "%*sfor (int64_t tx_ib = tx_lo; tx_ib < tx_hi; tx_ib++) {\n", 4 * depth, "");
        return;
    }
    put(E, "%*sfor (int64_t ", 4 * depth, "");
    put_label(E, label);
    put(E, " = tx_lo; ");
    put_label(E, label);
    put(E, " < tx_hi; ");
    put_label(E, label);
    put(E, brace ? "++) {\n" : "++)\n");
}

int kernel_range_loop(emitter *E, int label, tx_extent ext, int depth, int brace)
{
    if (!take_range(E, label, ext, 0))
        return 0;
    kernel_put_range_for(E, label, depth, brace);
    return 1;
}

int kernel_range_spans(emitter *E, int label, tx_extent ext, int depth)
{
    if (!take_range(E, label, ext, 0))
        return 0;
    put(E, "%*sfor (int64_t tx_i = tx_lo; tx_i < tx_hi; tx_i += TX_BLOCK) {\n", 4 * depth, "");
    return 1;
}

int kernel_range_blocks(emitter *E, tx_extent ext, int depth)
{
    if (!take_range(E, -1, ext, 1))
        return 0;
    kernel_put_range_for(E, -1, depth, 1);
    return 1;
}

int kernel_range_rows(emitter *E, int label, tx_extent ext)
{
    return take_range(E, label, ext, 0);
}

int kernel_range_chunk(emitter *E, tx_extent ext, int depth)
{
    if (!take_range(E, -1, ext, 1))
        return 0;
    E->k.range_wide = 1;
    put(E, "%*s{\n", 4 * depth, "");
    return 1;
}

/* One member of a kernel's record. */
typedef struct {
    char type[40];
    const char *name; /* in the graph's arena */
} member;

/* NAME mangled with PREFIX, in the graph's arena. */
static const char *mangled(emitter *E, const char *prefix, const char *name)
{
    tx_buf b = {0};
    mangle_name(&b, prefix, name);
    const char *r = arena_strndup(E->g->arena, b.p ? b.p : "", b.len);
    buf_free(&b);
    return r;
}

/* Everything the body referenced, in a fixed order (variables, values,
   dims, maps): *N members in arena memory. */
static int by_index(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static member *members(emitter *E, int *n)
{
    kernel_ctx *k = &E->k;
    sema_program *S = SP(E);
    int total = 2;
    for (int r = 0; r < 4; r++) { /* in index order, whatever the order of first use */
        qsort(k->refs[r].list, (size_t)k->refs[r].n, sizeof(int), by_index);
        total += k->refs[r].n;
    }
    member *m = arena_alloc(E->g->arena, sizeof *m * (size_t)total);
    *n = 0;
    for (int j = 0; j < k->refs[REF_VAR].n; j++) {
        const sym *t = S->vars[k->refs[REF_VAR].list[j]];
        snprintf(m[*n].type, sizeof m->type, "%s%s *", t->io == IO_IN ? "const " : "", ctype(t->dt));
        m[(*n)++].name = mangled(E, "t_", t->name);
    }
    for (int j = 0; j < k->refs[REF_VALUE].n; j++) {
        int i = k->refs[REF_VALUE].list[j];
        snprintf(m[*n].type, sizeof m->type, "%s *", ctype(E->g->v[i]->dt));
        m[(*n)++].name = arena_printf(E->g->arena, "tx_v%d", i);
    }
    for (int j = 0; j < k->refs[REF_DIM].n; j++) {
        snprintf(m[*n].type, sizeof m->type, "int64_t ");
        m[(*n)++].name = mangled(E, "d_", S->dims[k->refs[REF_DIM].list[j]]->name);
    }
    for (int j = 0; j < k->refs[REF_MAP].n; j++) {
        snprintf(m[*n].type, sizeof m->type, "const tx_sparse_map *");
        m[(*n)++].name = mangled(E, "m_", S->maps[k->refs[REF_MAP].list[j]]->name);
    }
    if (k->row_local) { /* where its row-local tensors' rows lie: -1 (as they are) but in its row group's call */
        snprintf(m[*n].type, sizeof m->type, "int64_t ");
        m[(*n)++].name = "tx_rbase";
    }
    return m;
}

/* A call's range: [0, N) as a C expression, N = 1 without a range, EXT
   or EXT's blocks of TX_BLOCK. */
typedef struct {
    int has_range, blocks, wide;
    tx_extent ext;
    const g_value *const *value; /* the values whose nests the call runs */
    int nvalue;
    int nfused;                  /* > 1: the range is the product of FEXT[0 .. nfused) (ext is FEXT[0]) */
    const tx_extent *fext;
} call_range;

static void put_range(emitter *E, const call_range *c)
{
    if (!c->has_range)
        put(E, "1");
    else if (c->blocks) {
        put(E, "(");
        put_extent(E, c->ext);
        put(E, " + TX_BLOCK - 1) / TX_BLOCK");
    } else if (c->nfused > 1) {
        put(E, "(");
        for (int m = 0; m < c->nfused; m++) {
            put(E, m ? " * " : "");
            put_extent(E, c->fext[m]);
        }
        put(E, ")");
    } else
        put_extent(E, c->ext);
}

/* The range's extent if the target knows it, else -1. */
static int64_t known_range(emitter *E, const call_range *c)
{
    int64_t r = 1;
    for (int m = 0; m < (c->nfused > 1 ? c->nfused : 1); m++) {
        int64_t x = emit_extent_value(E, c->nfused > 1 ? c->fext[m] : c->ext);
        if (x < 0)
            return -1;
        r *= x;
    }
    return r;
}

/* The extents of every loop of value V's nest: its labels (a store's
   target labels) and the labels it sums. */
static int nest_extents(const g_value *v, tx_extent *ext)
{
    int n = 0, labels[TX_MAX_LABELS];
    for (int i = 0; i < v->rank; i++)
        ext[n++] = v->ext[i];
    if (v->op == OP_CONTRACT || v->op == OP_REDUCE)
        n += labels_in(v, v->summed, labels, ext + n);
    return n;
}

/* What an iteration that computes an elementwise function (exp, log,
   sin, cos, tanh, a power other than an integer one from -8 to 8, which
   is products) counts for, in the work that decides whether
   a kernel runs on threads, per function: libmvec's exp takes about 0.6 ns
   an element on an AVX-512 Xeon, its sin 0.7, tanh 1.7, SLEEF's pow 5.9
   (SLEEF's others, which the weight was set for: 1, 1.4, 3.7), a product streamed from
   memory about 0.35. A 64x256 tanh layer's 16384 tanhs were below
   TX_PARALLEL_WORK and ran on one thread. */
#define FN_WORK 8

/* The weight of one iteration of V's nest: 1, and FN_WORK for each
   function computed in it (V's own and those of the values fused into
   it; a value computed elsewhere is only read). */
static double iteration_weight(const g_value *v, int top)
{
    if (!top && !v->inlined)
        return 0;
    double w = top ? 1 : 0;
    if (v->op == OP_MAP && ((v->fn == MAP_POW && !emit_pow_by_products(v->fn_arg)) || v->fn == MAP_EXP ||
                            v->fn == MAP_LOG || v->fn == MAP_SIN || v->fn == MAP_COS || v->fn == MAP_TANH))
        w += FN_WORK;
    for (int i = 0; i < v->nin; i++)
        w += iteration_weight(v->in[i], 0);
    return w;
}

/* The call's work as a C expression of doubles, for targets that decide
   at run time: the iterations of its nests, each counted 1 (FN ==
   0: the row tiles' measure of memory) or by its weight (FN == 1: the
   threads' measure of time). */
static void put_work(emitter *E, const call_range *c, int fn)
{
    put(E, "(0.0");
    for (int j = 0; j < c->nvalue; j++) {
        tx_extent ext[TX_MAX_LABELS + TX_MAX_MODES];
        int n = nest_extents(c->value[j], ext);
        put(E, " + ");
        num_literal(E->out, fn ? iteration_weight(c->value[j], 1) : 1.0);
        for (int i = 0; i < n; i++) {
            put(E, " * (double)");
            put_extent(E, ext[i]);
        }
    }
    put(E, ")");
}

/* The call's work (FN 1 above) if the target knows every extent, else -1. */
static double known_work(emitter *E, const call_range *c)
{
    double total = 0;
    for (int j = 0; j < c->nvalue; j++) {
        tx_extent ext[TX_MAX_LABELS + TX_MAX_MODES];
        int n = nest_extents(c->value[j], ext);
        double w = iteration_weight(c->value[j], 1);
        for (int i = 0; i < n; i++) {
            int64_t x = emit_extent_value(E, ext[i]);
            if (x < 0)
                return -1;
            w *= (double)x;
        }
        total += w;
    }
    return total;
}

/* The call of kernel ID (its record tx_k in scope) over C's range, on
   the target's threads when its work is large enough. */
static void emit_kernel_call(emitter *E, int id, const call_range *c, int close)
{
    tx_threading th = c->has_range ? E->T->threads : TX_THREADS_NONE;
    if (th == TX_THREADS_POOL) {
        double w = known_work(E, c);
        int64_t r = known_range(E, c);
        if (w >= 0 && (w < TX_PARALLEL_WORK || r < 2))
            th = TX_THREADS_NONE; /* too small: threads would cost more than they give */
    }
    if (th == TX_THREADS_POOL) {
        emit_use(E, TXS_RT);
        put(E, "        tx_status = tx_rt_parallel%s(tx_k%d, &tx_k, ",
            c->value[0]->blas ? "_blas" : c->wide ? "_wide" : "", id);
        put_range(E, c);
        put(E, ");\n");
    } else if (th == TX_THREADS_OPENMP) {
        E->uses_openmp = 1;
        put(E, "#ifdef _OPENMP\n        if (");
        put_range(E, c);
        put(E, " >= 2 && ");
        put_work(E, c, 1);
        put(E, " >= %d.0) {\n", TX_PARALLEL_WORK);
        put(E, "            int tx_st = 0;\n"
               "            const int64_t tx_cn = ");
        put_range(E, c);
        put(E, ";\n#pragma omp parallel reduction(max : tx_st)\n"
               "            {\n"
               "                const int64_t tx_t = omp_get_thread_num(), tx_nt = omp_get_num_threads();\n"
               "                const int64_t tx_clo = tx_cn / tx_nt * tx_t + tx_cn %% tx_nt * tx_t / tx_nt;\n"
               "                const int64_t tx_chi = tx_cn / tx_nt * (tx_t + 1) + tx_cn %% tx_nt * (tx_t + 1) / tx_nt;\n"
               "                int tx_s = tx_clo < tx_chi ? tx_k%d(&tx_k, tx_clo, tx_chi) : 0;\n"
               "                if (tx_s > tx_st)\n"
               "                    tx_st = tx_s;\n"
               "            }\n"
               "            tx_status = tx_st;\n"
               "        } else\n#endif\n", id);
        put(E, "            tx_status = tx_k%d(&tx_k, 0, ", id);
        put_range(E, c);
        put(E, ");\n");
    } else {
        put(E, "        tx_status = tx_k%d(&tx_k, 0, ", id);
        put_range(E, c);
        put(E, ");\n");
    }
    if (close)
        put(E, "        if (tx_status != 0)\n            goto tx_done;\n    }\n");
}

/* Whether member J (its variables, then its values) is a tensor that
   may be distributed. */
static int mpi_candidate(emitter *E, int j)
{
    kernel_ctx *k = &E->k;
    int nv = k->refs[REF_VAR].n;
    return j < nv ? mpi_plan_rows_var(SP(E), k->refs[REF_VAR].list[j])
                  : mpi_plan_rows_value(E->g->v[k->refs[REF_VALUE].list[j - nv]]);
}

/* Each member that may be distributed (of M) through runtime call FN,
   "NAME = FN(NAME)", or with COMM "NAME = FN(tx_comm, NAME)". */
static void put_candidates(emitter *E, const member *m, const char *indent, const char *fn, int comm)
{
    kernel_ctx *k = &E->k;
    for (int j = 0; j < k->refs[REF_VAR].n + k->refs[REF_VALUE].n; j++)
        if (mpi_candidate(E, j))
            put(E, "%s%s = %s(%s%s);\n", indent, m[j].name, fn, comm ? "tx_comm, " : "", m[j].name);
}

/* Whether member J is the tensor the kernel writes. */
static int mpi_is_result(emitter *E, int j)
{
    kernel_ctx *k = &E->k;
    const g_value *v = k->value;
    int nv = k->refs[REF_VAR].n;
    return j < nv ? v->op == OP_STORE && v->var == k->refs[REF_VAR].list[j]
                  : v == E->g->v[k->refs[REF_VALUE].list[j - nv]];
}

/* The pointer of the kernel's result, in the program function. */
static void put_result(emitter *E)
{
    const g_value *v = E->k.value;
    if (v->op == OP_STORE)
        put_var(E, v->var);
    else
        put(E, "tx_v%d", v->id);
}

#define MPI_MAX_READS 16

/* The take of candidate member J (named NAME) for a nest by rows
   (runtime/mpi.inc tx_mpi_take_rows): how each read of it indexes its
   modes by the nest's range modes, its shape, the mode tx_mpi_cross may
   bring it by. A tensor whose reads cannot be described, or the result
   read anywhere but at its own rows, is taken whole. */
static void put_mpi_take(emitter *E, int j, const char *name)
{
    kernel_ctx *k = &E->k;
    int nv = k->refs[REF_VAR].n, var = j < nv ? k->refs[REF_VAR].list[j] : -1;
    const sym *t = j < nv ? SP(E)->vars[var] : NULL;
    const g_value *val = j < nv ? NULL : E->g->v[k->refs[REF_VALUE].list[j - nv]];
    int rank = t ? t->rank : val->rank;
    const tx_extent *ext = t ? t->ext : val->ext;
    int lab[MPI_MAX_READS * TX_MAX_MODES];
    int nr = mpi_plan_reads(k->value, var, val, lab, MPI_MAX_READS), result = mpi_is_result(E, j);
    int read[(MPI_MAX_READS + 1) * TX_MAX_MODES], n = 0;
    for (int r = 0; r < nr; r++, n++)
        for (int m = 0; m < rank; m++) {
            read[n * rank + m] = -1;
            for (int q = 0; q < k->range_n; q++)
                if (lab[r * TX_MAX_MODES + m] == k->range_labels[q])
                    read[n * rank + m] = q;
        }
    if (result) { /* its writes: at its own rows */
        for (int r = 0; r < n && nr >= 0; r++)
            for (int m = 0; m < k->range_n && m < rank; m++)
                if (read[r * rank + m] != m)
                    nr = -1;
        for (int m = 0; m < rank; m++)
            read[n * rank + m] = m < k->range_n ? m : -1;
        n++;
    }
    if (nr < 0 || rank == 0) {
        put(E, "            %s = tx_mpi_whole(tx_comm, %s);\n", name, name);
        return;
    }
    int d = result ? 0 : mpi_plan_rows_cross(k->value, k->range_labels[0], var, val);
    put(E, "            %s = tx_mpi_take_rows(tx_comm, %s, tx_rg, %d, tx_rx, tx_rlo, tx_rhi, %d, (const int[]){", name,
        name, k->range_n, n);
    for (int i = 0; i < n * rank; i++)
        put(E, "%s%d", i ? ", " : "", read[i]);
    put(E, "}, %d, (const int64_t[]){", rank);
    for (int m = 0; m < rank; m++) {
        put(E, m ? ", " : "");
        put_extent(E, ext[m]);
    }
    put(E, "}, %d, %d);\n", d, dt_size(t ? t->dt : val->dt));
}

/* The MPI target's call of a kernel (members M[0..NM)) when it touches
   tensors that may be distributed by rows (runtime/mpi.inc): on each
   rank's rows alone when the loop nest writes its result by its range
   (mpi_plan_rows_kernel; the rows, and how it takes each distributed
   tensor it reads, decided at run time: tx_mpi_nest_rows,
   tx_mpi_take_rows), as partial sums (mpi_plan_rows_sum), else with those
   tensors gathered whole around the call. 0 if it touches none (the usual
   call). */
static int emit_kernel_call_mpi(emitter *E, const member *m)
{
    kernel_ctx *k = &E->k;
    const g_value *v = k->value;
    int nc = 0, nv = k->refs[REF_VAR].n, nval = k->refs[REF_VALUE].n;
    for (int j = 0; j < nv + nval; j++)
        nc += mpi_candidate(E, j);
    if (nc == 0)
        return 0;
    if (nc == 1 && mpi_plan_rows_sum(E->g, v))
        return 3;
    int rows = k->has_range && !k->range_blocks && mpi_plan_rows_kernel(E->g, v, k->range_label);
    if (!rows) { /* gathered whole: all of them */
        put_candidates(E, m, "        ", "tx_mpi_whole", 1);
        return 1;
    }
    put(E, "        const void *tx_rp[] = {");
    for (int j = 0, first = 1; j < nv + nval; j++)
        if (mpi_candidate(E, j)) {
            put(E, "%s%s", first ? "" : ", ", m[j].name);
            first = 0;
        }
    put(E, "};\n        const int64_t tx_rx[] = {");
    for (int q = 0; q < k->range_n; q++) {
        put(E, q ? ", " : "");
        put_extent(E, k->range_exts[q]);
    }
    put(E, "};\n        int64_t tx_rlo = 0, tx_rhi = 0, tx_rn0 = 0;\n"
           "        const int tx_rg = tx_mpi_any_rows((int)(sizeof tx_rp / sizeof tx_rp[0]), tx_rp)\n"
           "            ? tx_mpi_nest_rows(tx_comm, ");
    put_result(E);
    put(E, ", %d, tx_rx, &tx_rlo, &tx_rhi, &tx_rn0) : -1;\n", k->range_n);
    put(E, "        if (tx_rg > 0) {\n");
    for (int j = 0; j < nv + nval; j++)
        if (mpi_candidate(E, j))
            put_mpi_take(E, j, m[j].name);
    put(E, "        } else if (tx_rg == 0) {\n");
    put_candidates(E, m, "            ", "tx_mpi_whole", 1);
    put(E, "        }\n");
    return 2;
}

/* The rest of emit_kernel_call_mpi's call, after the record: PLAN 1 (the
   gathered call), 2 (by rows) or 3 (a sum of a whole tensor); C the
   usual call's range. */
static void emit_kernel_call_mpi_end(emitter *E, int id, const member *m, int plan, const call_range *c)
{
    kernel_ctx *k = &E->k;
    sema_program *S = SP(E);
    const g_value *v = k->value;
    int nv = k->refs[REF_VAR].n, nval = k->refs[REF_VALUE].n;
    if (plan == 1) {
        emit_kernel_call(E, id, c, 0);
        put_candidates(E, m, "        ", "tx_mpi_unwhole", 0);
        put(E, "        if (tx_status != 0)\n            goto tx_done;\n    }\n");
        return;
    }
    if (plan == 3) { /* a sum of everything: partial sums on the ranks, then one exchange */
        for (int j = 0; j < nv + nval; j++)
            if (mpi_candidate(E, j)) {
                put(E, "        if (tx_mpi_slab_at(%s))\n", m[j].name);
                put(E, "            tx_mpi_sum_rows%s(tx_comm, %s, %d, %.17g, (%s *)tx_v%d);\n",
                    v->dt == DT_F32 || v->dt == DT_C64 ? "_f" : "", m[j].name,
                    v->dt == DT_C128 || v->dt == DT_C64 ? 2 : 1, v->coef,
                    v->dt == DT_F32 || v->dt == DT_C64 ? "float" : "double", v->id);
                put(E, "        else {\n");
            }
        emit_kernel_call(E, id, c, 0);
        put(E, "        }\n        if (tx_status != 0)\n            goto tx_done;\n    }\n");
        return;
    }
    /* by rows: the result's rows written here, replicated after unless it
       is itself distributed */
    const sym *t = v->op == OP_STORE ? S->vars[v->var] : NULL;
    int rank = t ? t->rank : v->rank;
    const tx_extent *ext = t ? t->ext : v->ext;
    put(E, "        if (tx_rg > 0) {\n"
           "            tx_status = tx_rlo < tx_rhi ? tx_k%d(&tx_k, tx_rlo, tx_rhi) : 0;\n"
           "            tx_status = tx_mpi_rows_done(tx_comm, tx_status, ", id);
    put_result(E);
    put(E, ", tx_rn0, tx_rn0 > 0 ? (int64_t)%d", dt_size(t ? t->dt : v->dt));
    for (int i = 0; i < rank; i++) {
        put(E, " * ");
        put_extent(E, ext[i]);
    }
    put(E, " / tx_rn0 : 0);\n        } else {\n");
    emit_kernel_call(E, id, c, 0);
    put(E, "        }\n        if (tx_rg >= 0) {\n");
    put_candidates(E, m, "            ", "tx_mpi_uncross", 0);
    put(E, "        }\n        if (tx_status != 0)\n            goto tx_done;\n    }\n");
}

/* Iterations of a row group's nests per tile of rows: a tile of each
   operand's rows stays in L1 or L2 (16 KiB of doubles per nest) between
   the nest that reads it first and those after it (2048 measured a little
   faster than 1024, 4096, 8192 and 32768 on bench/peers.py's row softmax
   and layer norm, within the noise of a shared machine). */
#define ROW_TILE_WORK 2048

void emit_rows_flush(emitter *E)
{
    row_pending *P = &E->rows;
    int n = P->n;
    if (n == 0)
        return;
    P->n = 0;
    call_range c = {1, 0, 0, P->ext, P->value, n, 1, NULL};
    if (n == 1) { /* alone: its own call */
        put(E, "    {\n        tx_k%d_args tx_k = %s;\n", P->id[0], P->init[0]);
        emit_kernel_call(E, P->id[0], &c, 1);
        return;
    }
    tx_buf *o = &E->kernels;
    int id = E->nkernels++;
    buf_printf(o, "/* kernel %d: kernels", id);
    for (int j = 0; j < n; j++)
        buf_printf(o, "%s %d", j ? "," : "", P->id[j]);
    buf_printf(o, " tile by tile of rows (a row group) */\ntypedef struct {\n");
    for (int j = 0; j < n; j++)
        buf_printf(o, "    tx_k%d_args tx_a%d;\n", P->id[j], j);
    buf_printf(o, "    int64_t tx_tile;\n} tx_k%d_args;\n\n", id);
    buf_printf(o, "static int tx_k%d(const void *tx_ap, int64_t tx_lo, int64_t tx_hi)\n{\n", id);
    buf_printf(o, "    const tx_k%d_args *tx_a = (const tx_k%d_args *)tx_ap;\n", id, id);
    /* row-local tensors (pass_fuse.c): each tile's rows at the first rows
       of this call's range, when every nest of the group is in the call */
    int whole = 1, local[ROW_GROUP_MAX];
    for (int k = 0; k < E->g->n && whole; k++)
        if (E->g->v[k]->row_group == P->group) {
            whole = 0;
            for (int j = 0; j < n && !whole; j++)
                whole = P->value[j] == E->g->v[k];
        }
    for (int j = 0; j < n; j++) {
        local[j] = whole && P->row_local[j];
        if (local[j])
            buf_printf(o, "    tx_k%d_args tx_c%d = tx_a->tx_a%d;\n    tx_c%d.tx_rbase = tx_lo;\n", P->id[j], j, j, j);
    }
    buf_printf(o, "    for (int64_t tx_r = tx_lo; tx_r < tx_hi; tx_r += tx_a->tx_tile) {\n"
                  "        const int64_t tx_re = tx_hi - tx_r < tx_a->tx_tile ? tx_hi : tx_r + tx_a->tx_tile;\n"
                  "        int tx_s;\n");
    for (int j = 0; j < n; j++)
        buf_printf(o, "        if ((tx_s = tx_k%d(%s%d, tx_r, tx_re)) != 0)\n            return tx_s;\n",
                   P->id[j], local[j] ? "&tx_c" : "&tx_a->tx_a", j);
    buf_puts(o, "    }\n    return 0;\n}\n\n");

    /* the call: rows per tile from the largest nest's work per row */
    put(E, "    {\n        double tx_rw = 1.0, tx_w;\n");
    for (int j = 0; j < n; j++) {
        call_range one = {1, 0, 0, P->ext, &P->value[j], 1, 1, NULL};
        put(E, "        tx_w = ");
        put_work(E, &one, 0);
        put(E, " / (double)");
        put_extent(E, P->ext);
        put(E, ";\n        if (tx_w > tx_rw)\n            tx_rw = tx_w;\n");
    }
    put(E, "        tx_k%d_args tx_k = {", id);
    for (int j = 0; j < n; j++)
        put(E, "%s, ", P->init[j]);
    /* at least the rows a kernel of the group runs together (TRANSPOSED_ROWS) */
    if (P->tile_rows > 1)
        put(E, "tx_rw * %d.0 >= %d.0 ? %d : (int64_t)(%d.0 / tx_rw)};\n", P->tile_rows, ROW_TILE_WORK, P->tile_rows,
            ROW_TILE_WORK);
    else
        put(E, "tx_rw >= %d.0 ? 1 : (int64_t)(%d.0 / tx_rw)};\n", ROW_TILE_WORK, ROW_TILE_WORK);
    emit_kernel_call(E, id, &c, 1);
}

static void kernel_end(emitter *E)
{
    kernel_ctx *k = &E->k;
    TX_ASSERT(k->active);
    tx_buf *o = &E->kernels;
    int id = k->id, nm;
    member *m = members(E, &nm);
    buf_printf(o, "/* kernel %d: value %%%d of statement %d, line %u */\ntypedef struct {\n", id, k->value->id,
               k->value->stmt + 1, k->value->span.line);
    for (int i = 0; i < nm; i++)
        buf_printf(o, "    %s%s;\n", m[i].type, m[i].name);
    if (nm == 0)
        buf_puts(o, "    char tx_empty; /* a record needs a member */\n");
    buf_printf(o, "} tx_k%d_args;\n\n", id);
    buf_printf(o, "static int tx_k%d(const void *tx_ap, int64_t tx_lo, int64_t tx_hi)\n{\n", id);
    buf_printf(o, "    const tx_k%d_args *tx_a = (const tx_k%d_args *)tx_ap;\n", id, id);
    for (int i = 0; i < nm; i++)
        buf_printf(o, "    %s%s = tx_a->%s;\n", m[i].type, m[i].name, m[i].name);
    if (k->blk_buffers)
        /* on a cache line: unaligned blocks cost the primitives 10-30% */
        buf_printf(o, "    double tx_blk_mem[%d * TX_BLOCK + 8]; /* scratch blocks of the primitives */\n"
                      "    double *tx_blk = (double *)((char *)tx_blk_mem + (64 - (uintptr_t)tx_blk_mem %% 64) %% 64);\n",
                   k->blk_buffers);
    if (k->streams) /* a streamed store's block: a span of them (emit_blocks.c) */
        buf_printf(o, "    double tx_ntb_mem[%d * TX_BLOCK + 8];\n"
                      "    double *tx_ntb = (double *)((char *)tx_ntb_mem + (64 - (uintptr_t)tx_ntb_mem %% 64) %% 64);\n"
                      "    (void)tx_ntb;\n",
                   SPAN_BLOCKS);
    if (!k->has_range)
        buf_puts(o, "    (void)tx_lo;\n    (void)tx_hi;\n");
    if (k->row_local) /* a row-local tensor's row l is at l + tx_rs */
        buf_puts(o, "    const int64_t tx_rs = tx_rbase < 0 ? 0 : tx_rbase - tx_lo;\n");
    buf_put(o, k->body.p ? k->body.p : "", k->body.len);
    if (k->streams)
        buf_puts(o, "    tx_p_stream_fence();\n");
    buf_puts(o, "    return 0;\n}\n\n");
    if (k->body.oom)
        o->oom = 1;

    /* the call, from the program function, over the whole range; a
       kernel of a row group waits for the group's call */
    E->out = k->program;
    k->active = 0;
    tx_buf init = {0};
    buf_puts(&init, "{");
    for (int i = 0; i < nm; i++)
        buf_printf(&init, "%s%s", i ? ", " : "", strcmp(m[i].name, "tx_rbase") ? m[i].name : "-1");
    buf_puts(&init, nm ? "}" : "0}");
    const char *init_s = arena_strndup(E->g->arena, init.p ? init.p : "", init.len);
    if (init.oom)
        o->oom = 1;
    buf_free(&init);
    const g_value *v = k->value;
    row_pending *P = &E->rows;
    int row = v->op == OP_STORE ? v->store_label[0] : v->label[0];
    /* the MPI target calls every nest alone (its rows, its gathers) */
    int joins = v->row_group && !v->blas && !(E->o->timing && E->T->entry == TX_ENTRY_ARGV) && !E->T->distributed && k->has_range &&
                 !k->range_blocks && k->range_label == row;
    if (joins && P->n > 0 &&
        (P->group != v->row_group || P->n == ROW_GROUP_MAX || P->ext.dim != k->range_ext.dim ||
         P->ext.value != k->range_ext.value))
        emit_rows_flush(E);
    if (joins) {
        if (P->n == 0) {
            P->group = v->row_group;
            P->ext = k->range_ext;
            P->tile_rows = 0;
        }
        if (k->tile_rows > P->tile_rows)
            P->tile_rows = k->tile_rows;
        P->id[P->n] = id;
        P->row_local[P->n] = k->row_local;
        P->init[P->n] = init_s;
        P->value[P->n++] = v;
        return;
    }
    if (!v->row_ahead)
        emit_rows_flush(E);
    call_range c = {k->has_range, k->range_blocks, k->range_wide, k->range_ext, &k->value, 1, k->range_n, k->range_exts};
    put(E, "    {\n");
    int mpi = E->T->distributed ? emit_kernel_call_mpi(E, m) : 0;
    put(E, "        tx_k%d_args tx_k = %s;\n", id, init_s);
    if (mpi)
        emit_kernel_call_mpi_end(E, id, m, mpi, &c);
    else
        emit_kernel_call(E, id, &c, 1);
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
