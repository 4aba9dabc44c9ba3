/*
 * pipeline.c — everything after sema, driven from one function (QBE's
 * main.c): lower, run the passes of the level in order with graph_check
 * after lowering and after each pass, emit C, compile and load it with
 * the target's loader (libtcc, or the cc tier with libtcc as fallback).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"

typedef struct {
    const char *name;
    int min_level;
    void (*run)(graph *g);
} pass;

/* The passes, in order. The graph as lowered is already correct; passes
   only make it cheaper. */
static const pass passes[] = {
    {"delta", 0, pass_delta}, /* a delta summed against selects: its label renamed away (every level: it is what the program means) */
    {"cse", 1, pass_cse},     /* one value for each distinct computation */
    {"fold", 1, pass_fold},   /* constant operands into scale factors */
    {"dce", 1, pass_dce},     /* drop values nothing uses */
    {"order", 2, pass_order}, /* n-ary contractions into the cheapest pairwise order (sizes) */
    {"share", 2, pass_share}, /* cse again over the pairwise products, equal up to a scale */
    {"factor", 2, pass_factor}, /* a·t + b·t as (a + b)·t where that saves FLOPs */
    {"blas", 2, pass_blas},   /* GEMM/GEMV/DOT-shaped contractions to BLAS calls (layouts) */
    {"split", 1, pass_split}, /* scalar reductions as rows, then the rows' results (threads) */
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

/* Code generation: the one place that calls the emitter and the loaders.
   The workspace is planned only for code that is run here (tx_run
   allocates it). For PIPE_JIT, the target's loader compiles and loads
   the code; if it fails and the target names a fallback (the cc tier:
   libtcc), the code is emitted again for that target and loaded by its
   loader, and the module's detail says why (tx_backend(3)). */
static int generate(graph *g, const pipeline_options *o, pipeline_result *r, const char *fail_after)
{
    const tx_target *T = o->target;
    tx_buf why = {0};
    int st;
    for (;;) {
        emit_options eo = {.fn_name = o->fn_name, .dim_values = o->dim_values, .timing = o->timing,
                           .var_strides = o->output == PIPE_JIT ? o->var_strides : NULL,
                           .var_contiguous = o->var_contiguous,
                           .workspace = o->output == PIPE_JIT ? &r->workspace : NULL,
                           .debug_fail = fail_after && strcmp(fail_after, "emit") == 0,
                           .calls = &r->calls, .ncalls = &r->ncalls};
        r->c.len = 0;
        int failed = o->output == PIPE_HEADER ? emit_header(g, T, &eo, &r->c)
                                              : emit_c(g, T, &eo, &r->c, &r->errs, &r->nerrs);
        if (failed < 0 || r->c.oom || !r->c.p) {
            buf_puts(&r->diag.out, "out of memory");
            st = TX_ERR_NOMEM;
            break;
        }
        if (o->output != PIPE_JIT) {
            st = TX_OK;
            break;
        }
        for (int i = 0; eo.var_strides && o->var_contiguous && i < g->S->nvars; i++)
            r->restage |= o->var_contiguous[i];
        if (r->restage) { /* strides some call cannot read: the caller stages them and asks again */
            st = TX_OK;
            break;
        }
        TX_ASSERT(T->load);
        tx_buf err = {0};
        st = T->load(r->c.p, r->c.len, &r->jit, &err);
        if (st != TX_OK && T->fallback) { /* the reason goes with the fallback's module */
            why.len = 0;
            buf_printf(&why, "%s", err.p ? err.p : "failed");
            buf_free(&err);
            T = T->fallback;
            continue;
        }
        if (st == TX_OK && why.len)
            snprintf(r->jit->detail, sizeof r->jit->detail, "fallback to %s: %.480s", r->jit->backend, why.p);
        if (st == TX_ERR_NOMEM)
            buf_printf(&r->diag.out, "%s", err.p ? err.p : "out of memory");
        else if (st != TX_OK)
            buf_printf(&r->diag.out, "internal error: the generated code did not compile:\n%s", err.p ? err.p : "");
        buf_free(&err);
        break;
    }
    buf_free(&why);
    return st;
}

int pipeline_run(sema_program *S, tx_arena *a, const pipeline_options *o, pipeline_result *r)
{
    memset(r, 0, sizeof *r);
    r->diag.src = S->cst->src;
    int st = check_dump_after(o, r);
    if (st != TX_OK)
        return st;
    const char *fail_after = getenv("TX_DEBUG_FAIL_AFTER_PASS");

    graph_spec spec = {.dim_values = o->dim_values, .map_density = o->map_density, .blas = o->target->blas,
                       .distributed = o->target->distributed};
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
