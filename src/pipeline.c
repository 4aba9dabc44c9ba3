/*
 * pipeline.c — everything after sema, driven from one function (QBE's
 * main.c): lower, run the passes of the level in order with graph_check
 * after lowering and after each pass, emit C, compile it with libtcc.
 * tx_compile, tx_run, tx_emit and tx_graph all come through pipeline_run
 * with one pipeline_options; nothing reaches a pass or the code generator
 * another way. The target (target.c) is chosen once, in the options; the
 * graph learns what it is specialised for (known extents, sparse-map
 * fill, whether the target has BLAS) once, when it is created.
 *
 * Levels (txc(1), tx_set_option(3)):
 *   -O0  no pass: each statement as written, each product one loop nest
 *        over all of its labels;
 *   -O1  the passes that do not depend on sizes: cse, fold, dce, fuse
 *        (products stay one loop nest each, nothing calls BLAS);
 *   -O2  every pass: also the contraction order, sharing and factoring
 *        of the pairwise products, and BLAS, which are chosen for the
 *        extents (known at JIT time, estimated otherwise).
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, for the memory check before libtcc */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
    {"order", 2, pass_order}, /* n-ary contractions into the cheapest pairwise order (sizes) */
    {"share", 2, pass_share}, /* cse again over the pairwise products, equal up to a scale */
    {"factor", 2, pass_factor}, /* a·t + b·t as (a + b)·t where that saves FLOPs */
    {"blas", 2, pass_blas},   /* GEMM/GEMV/DOT-shaped contractions to BLAS calls (layouts) */
    {"fuse", 1, pass_fuse},   /* elementwise chains into their users' loops */
};
#define NPASSES ((int)(sizeof passes / sizeof passes[0]))

/* Stage 0 is lowering; stage i > 0 is passes[i - 1]. */
const char *pipeline_stage_name(int i)
{
    if (i == 0)
        return "lower";
    return i > 0 && i <= NPASSES ? passes[i - 1].name : NULL;
}

static int stage_index(const char *name)
{
    for (int i = 0; pipeline_stage_name(i); i++)
        if (strcmp(pipeline_stage_name(i), name) == 0)
            return i;
    return -1;
}

static int stage_level(int i)
{
    return i == 0 ? 0 : passes[i - 1].min_level;
}

/* "lowering" or "pass NAME", for listings and messages. */
static const char *stage_title(int i, char *buf, size_t n)
{
    if (i == 0)
        return "lowering";
    snprintf(buf, n, "pass %s", passes[i - 1].name);
    return buf;
}

/* Checks O->dump_after before anything runs; TX_ERR_ARG with a message
   naming the valid stages if it names none or one the level skips. */
static int check_dump_after(const pipeline_options *o, pipeline_result *r)
{
    if (!o->dump_after || strcmp(o->dump_after, "all") == 0)
        return TX_OK;
    int i = stage_index(o->dump_after);
    if (i >= 0 && stage_level(i) <= o->opt_level)
        return TX_OK;
    if (i >= 0) {
        buf_printf(&r->diag.out, "pass '%s' does not run at -O%d (it runs from -O%d)", o->dump_after,
                   o->opt_level, stage_level(i));
        return TX_ERR_ARG;
    }
    buf_printf(&r->diag.out, "unknown pass '%s'; the stages are", o->dump_after);
    for (int k = 0; pipeline_stage_name(k); k++)
        buf_printf(&r->diag.out, "%s %s", k ? "," : "", pipeline_stage_name(k));
    buf_puts(&r->diag.out, " (or all)");
    return TX_ERR_ARG;
}

/* After stage I: the graph must pass graph_check (a failure is our bug,
   an internal error); TX_DEBUG_FAIL_AFTER_PASS, the testing hook of
   tensorexpr(3), makes the check fail after the stage it names. Then the
   listing, if asked for. Returns 1 when the compilation ends here. */
static int after_stage(const graph *g, int i, const pipeline_options *o, const char *fail_after)
{
    const char *name = pipeline_stage_name(i);
    char msg[400], what[512], title[64];
    int bad = graph_check(g, msg, sizeof msg) < 0;
    if (!bad && fail_after && strcmp(fail_after, name) == 0) {
        snprintf(msg, sizeof msg, "TX_DEBUG_FAIL_AFTER_PASS=%s (a testing hook)", name);
        bad = 1;
    }
    if (bad) {
        snprintf(what, sizeof what, "graph_check after %s: %s", stage_title(i, title, sizeof title), msg);
        tx_assert_fail(what, __FILE__, __LINE__);
    }
    if (!o->dump_after || !o->dump)
        return 0;
    int all = strcmp(o->dump_after, "all") == 0;
    if (!all && strcmp(o->dump_after, name) != 0)
        return 0;
    buf_printf(o->dump, "%s# after %s\n", o->dump->len ? "\n" : "", stage_title(i, title, sizeof title));
    graph_print(g, o->dump, o->dump_dot);
    return !all;
}

/* A target without BLAS has no LAPACK either: each linear-algebra call
   is an error at its span. */
static int check_lapack(const graph *g, const pipeline_options *o, pipeline_result *r)
{
    if (o->target->blas)
        return TX_OK;
    for (int k = 0; k < g->n; k++)
        if (g->v[k]->op == OP_LINALG) {
            diag_error(&r->diag, g->v[k]->span, "'%s' needs LAPACK, which --no-blas leaves out",
                       graph_la_name(g->v[k]->la));
            return TX_ERR_COMPILE;
        }
    return TX_OK;
}

/* A target computes the element types of target.c's dtypes: a value of
   another type (complex under MPI) is an error at its span. */
static int check_dtypes(const graph *g, const pipeline_options *o, pipeline_result *r)
{
    for (int k = 0; k < g->n; k++)
        if (!(o->target->dtypes & (1u << g->v[k]->dt))) {
            diag_error(&r->diag, g->v[k]->span, "the %s target does not compute %s values yet; this one is %s",
                       o->target->name, dt_name(g->v[k]->dt), dt_name(g->v[k]->dt));
            return TX_ERR_COMPILE;
        }
    return TX_OK;
}

/* ---- Memory for libtcc ----

   libtcc 0.9.27 does not recover from its own allocation failures: within
   a compilation it reports the first ("memory full"), but its global state
   is left behind, and a later compilation in the same process can crash
   inside it (tccpp_delete, from tcc_compile); outside one (in
   tcc_set_output_type) it calls exit(1). So before libtcc is called, the
   memory it will need is mapped and released again, and if it is not
   there, the compilation is TX_ERR_NOMEM and libtcc is not called at all.

   What libtcc needs was measured by counting malloc's bytes in use during
   jit_compile (the examples, tests/num and generated programs of up to
   1.1 MB of C): its peak is 1.63 MB plus about 4.4 bytes per byte of
   source (1.70 MB for 20 KB of C, 6.6 MB for 1.1 MB). The check asks for
   twice that and more: 4 MB plus 8 bytes per byte of source. A mapping
   that is never touched costs no memory, only address space (and commit
   charge, under strict overcommit), which is what runs out first under a
   limit such as ulimit -v. Another thread may still take the memory
   between the check and the compilation: the check makes libtcc's failure
   unlikely, not impossible. */
#define LIBTCC_RESERVE(srclen) (((size_t)4 << 20) + 8 * (size_t)(srclen))

/* TX_OK if LIBTCC_RESERVE(SRCLEN) bytes can be had now; else a message in
   OUT and TX_ERR_NOMEM. */
static int reserve_for_libtcc(size_t srclen, tx_buf *out)
{
    size_t need = srclen < (SIZE_MAX >> 4) ? LIBTCC_RESERVE(srclen) : SIZE_MAX;
#ifdef MAP_ANONYMOUS
    /* mmap, not malloc: a large malloc that is freed would raise malloc's
       mmap threshold and change how the host's heap behaves */
    void *blk = need == SIZE_MAX ? MAP_FAILED
                                 : mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok = blk != MAP_FAILED;
    if (ok)
        munmap(blk, need);
#else
    void *blk = need == SIZE_MAX ? NULL : malloc(need);
    int ok = blk != NULL;
    free(blk);
#endif
    if (ok)
        return TX_OK;
    buf_printf(out, "out of memory: compiling the generated code (%zu bytes of C) needs about %zu MB, which "
               "is not available", srclen, (need + (1 << 20) - 1) >> 20);
    return TX_ERR_NOMEM;
}

/* Code generation: the one place that calls the emitter and libtcc. The
   workspace is planned only for code that is run here (tx_run allocates it). */
static int generate(graph *g, const pipeline_options *o, pipeline_result *r, const char *fail_after)
{
    emit_options eo = {.fn_name = o->fn_name, .dim_values = o->dim_values, .timing = o->timing,
                       .var_strides = o->output == PIPE_JIT ? o->var_strides : NULL,
                       .var_contiguous = o->var_contiguous,
                       .workspace = o->output == PIPE_JIT ? &r->workspace : NULL,
                       .debug_fail = fail_after && strcmp(fail_after, "emit") == 0,
                       .calls = &r->calls, .ncalls = &r->ncalls};
    int failed = o->output == PIPE_HEADER ? emit_header(g, o->target, &eo, &r->c)
                                          : emit_c(g, o->target, &eo, &r->c, &r->errs, &r->nerrs);
    if (failed < 0 || r->c.oom || !r->c.p) {
        buf_puts(&r->diag.out, "out of memory");
        return TX_ERR_NOMEM;
    }
    if (o->output != PIPE_JIT)
        return TX_OK;
    for (int i = 0; eo.var_strides && o->var_contiguous && i < g->S->nvars; i++)
        r->restage |= o->var_contiguous[i];
    if (r->restage) /* strides some call cannot read: the caller stages them and asks again */
        return TX_OK;
    int st = reserve_for_libtcc(r->c.len, &r->diag.out);
    if (st != TX_OK)
        return st;
    tx_buf err = {0};
    r->jit = jit_compile(r->c.p, &err);
    if (!r->jit)
        buf_printf(&r->diag.out, "internal error: the generated code did not compile:\n%s", err.p ? err.p : "");
    buf_free(&err);
    return r->jit ? TX_OK : TX_ERR_JIT;
}

int pipeline_run(sema_program *S, tx_arena *a, const pipeline_options *o, pipeline_result *r)
{
    memset(r, 0, sizeof *r);
    r->diag.src = S->cst->src;
    int st = check_dump_after(o, r);
    if (st != TX_OK)
        return st;
    const char *fail_after = getenv("TX_DEBUG_FAIL_AFTER_PASS");

    graph_spec spec = {.dim_values = o->dim_values, .map_density = o->map_density, .blas = o->target->blas};
    r->g = lower_program(S, a, &r->diag, &spec);
    if (!r->g || r->diag.nerrors) {
        TX_ASSERT(r->diag.nerrors > 0); /* lowering fails only at a limit it reports */
        return r->diag.out.oom ? TX_ERR_NOMEM : TX_ERR_COMPILE;
    }
    if (after_stage(r->g, 0, o, fail_after))
        return TX_OK;
    for (int i = 1; i <= NPASSES; i++) {
        if (o->opt_level < stage_level(i))
            continue;
        passes[i - 1].run(r->g);
        if (after_stage(r->g, i, o, fail_after))
            return TX_OK;
    }
    if (o->output == PIPE_GRAPH)
        return TX_OK;
    st = check_lapack(r->g, o, r);
    if (st == TX_OK)
        st = check_dtypes(r->g, o, r);
    return st != TX_OK ? st : generate(r->g, o, r, fail_after);
}

void pipeline_result_free(pipeline_result *r)
{
    buf_free(&r->diag.out);
    buf_free(&r->c);
    jit_free(r->jit);
    memset(r, 0, sizeof *r);
}
