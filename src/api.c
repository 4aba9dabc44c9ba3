/*
 * api.c — libtensorexpr's public functions (tensorexpr.h).
 *
 * tx_compile parses and checks the program and runs the pipeline
 * (pipeline.c) up to the optimised OpGraph, so that every error of the
 * program is reported there; tx_run resolves the extents from the
 * bindings and, only when an extent changed since the last compilation,
 * runs the pipeline again specialised on them through emission and
 * libtcc, then calls the code. tx_emit and tx_graph run it to C and to the
 * graph. Each of them runs the compiler under a recovery point
 * (recover_run): out of memory and our own bugs come back as a status,
 * with the compilation's memory freed. Nothing here prints or exits:
 * failures return a status and leave a message in the context.
 */
#define _DEFAULT_SOURCE /* madvise, for hugemem.h */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "tx.h"
#include "runtime.h"
#include "hugemem.h"

struct tx_ctx {
    tx_buf msg;
    int status;       /* of the last failure, or TX_OK */
    int opt_level;
    int timing;
    int threads;      /* TX_OPTION_THREADS */
    int mpi_ranks;    /* TX_OPTION_MPI_RANKS */
    int huge_pages;   /* TX_OPTION_HUGE_PAGES */
    int backend;      /* TX_OPTION_BACKEND */
};

/* One parameter tensor's binding: the caller's array, its layout, and
   the staging buffer through which tx_run may pass it (see "Staging"). */
typedef struct {
    void *data;                   /* element (0, ..., 0) of the caller's array */
    int64_t shape[TX_MAX_MODES];
    int64_t stride[TX_MAX_MODES]; /* in elements */
    int strided;                  /* not row-major contiguous */
    uintptr_t lo, hi;             /* the bytes the array spans, [lo, hi); empty if lo == hi */
    int bound;
    int staged;                   /* the current run passes STAGE instead of DATA */
    int overlaps;                 /* out or inout whose bytes overlap another binding's */
    uintptr_t below, above;       /* the span's bytes below element (0, ..., 0) and from it */
    int layout_given;             /* strides were given (GIVEN), else row-major */
    int64_t given[TX_MAX_MODES];  /* the strides as given */
    void *stage;                  /* contiguous staging buffer, kept for later runs */
    size_t stage_cap;             /* its size in bytes */
} binding;

/* Code made for other extents or layouts than the current ones, kept for
   a return to them (a program called with two shapes or two layouts in
   turn compiles each once). Its workspace is not kept: it is allocated
   again when the code is taken back. */
#define JIT_PARKED 4

/* Compiled code and what a run needs of it: the current code of a
   program, or code parked for later. */
typedef struct {
    jit_module *jit;      /* NULL: none */
    tx_arena *arena;      /* the graph its error table and calls are in */
    emit_error *errs;
    int nerrs;
    emit_call *calls;
    int ncalls;
    size_t workspace;     /* bytes of its workspace */
} jit_code;

typedef struct {
    jit_code code;        /* code.jit NULL: an empty slot */
    int64_t *dims, *layout;
    char *inplace;        /* as the program's jit_dims, jit_layout, jit_inplace */
    unsigned long used;   /* when it was parked: the oldest goes first */
} jit_parked;

struct tx_program {
    tx_ctx *ctx;
    tx_arena *arena;
    char *text;           /* the source (tokens point into it) */
    tx_source src;
    sema_program *S;
    graph *g;
    char *fn_name;        /* default C function name */
    binding *bind;        /* per parameter tensor */
    const tx_sparse_map **maps; /* per sparse map */
    int64_t *dim_set;     /* per symbolic dim: value given by tx_set_dim, or -1 */
    jit_code code;        /* the current code (code.jit NULL: none yet) */
    void *workspace;      /* its intermediates, code.workspace bytes */
    jit_parked parked[JIT_PARKED];
    unsigned long clock;  /* counts parkings */
    int64_t *jit_dims;    /* extents the JIT code is specialised on */
    int64_t *jit_layout;  /* per tensor, the layout asked for when the JIT code was made:
                             1 + TX_MAX_MODES entries, [0] 1 if strided and read in
                             place, then its strides (see layout_key) */
    int64_t *layout;      /* the same for the current bindings */
    char *jit_inplace;    /* per tensor: the JIT code reads its strides in place */
    int opt_level;
    int threads;          /* TX_OPTION_THREADS when compiled (0: the default) */
    int huge_pages;       /* TX_OPTION_HUGE_PAGES when compiled */
    int backend;          /* TX_OPTION_BACKEND when compiled */
    int timing;
    double *times;        /* per statement, then per call (malloc'd) */
    volatile int running; /* the statement the compiled code runs now (from 1), 0 outside tx_run */
    double jit_seconds;   /* emit + libtcc time of the last run (0 if none) */
    int *stmt_lines;
    /* for tx_tensor_get */
    const char ***dim_names;
    int64_t **const_ext;
};

static void set_msg(tx_ctx *ctx, const char *fmt, ...)
{
    if (!ctx)
        return;
    ctx->msg.len = 0;
    if (ctx->msg.p)
        ctx->msg.p[0] = 0;
    ctx->msg.oom = 0;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&ctx->msg, fmt, ap);
    va_end(ap);
}

/* set_msg(ctx, "") without printf: a run's success costs nothing here */
static void clear_msg(tx_ctx *ctx)
{
    ctx->msg.len = 0;
    ctx->msg.oom = 0;
    if (ctx->msg.p)
        ctx->msg.p[0] = 0;
}

static int fail(tx_ctx *ctx, int status, const char *fmt, ...)
{
    if (!ctx)
        return status;
    ctx->status = status;
    ctx->msg.len = 0;
    ctx->msg.oom = 0;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&ctx->msg, fmt, ap);
    va_end(ap);
    return status;
}

tx_ctx *tx_new(void)
{
    tx_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->opt_level = 2;
        c->huge_pages = 1;
    }
    return c;
}

void tx_free(tx_ctx *ctx)
{
    if (!ctx)
        return;
    buf_free(&ctx->msg);
    free(ctx);
}

int tx_set_option(tx_ctx *ctx, tx_option option, int value)
{
    if (!ctx)
        return TX_ERR_ARG;
    switch (option) {
    case TX_OPTION_OPT_LEVEL:
        if (value < 0 || value > 2)
            return fail(ctx, TX_ERR_ARG, "optimisation level %d: use 0, 1 or 2", value);
        ctx->opt_level = value;
        return TX_OK;
    case TX_OPTION_TIMING:
        ctx->timing = value != 0;
        return TX_OK;
    case TX_OPTION_THREADS:
        if (value < 0)
            return fail(ctx, TX_ERR_ARG, "tx_set_option: threads must be 0 (the default) or more, not %d", value);
        ctx->threads = value;
        return TX_OK;
    case TX_OPTION_MPI_RANKS:
        if (value < 0)
            return fail(ctx, TX_ERR_ARG, "tx_set_option: MPI ranks must be 0 (none) or more, not %d", value);
        ctx->mpi_ranks = value;
        return TX_OK;
    case TX_OPTION_HUGE_PAGES:
        if (value != 0 && value != 1)
            return fail(ctx, TX_ERR_ARG, "tx_set_option: huge pages are 1 (the default) or 0, not %d", value);
        ctx->huge_pages = value;
        return TX_OK;
    case TX_OPTION_BACKEND:
        if (value != TX_BACKEND_TCC && value != TX_BACKEND_CC)
            return fail(ctx, TX_ERR_ARG, "tx_set_option: backend %d: use TX_BACKEND_TCC (0) or TX_BACKEND_CC (1)",
                        value);
        ctx->backend = value;
        return TX_OK;
    }
    return fail(ctx, TX_ERR_ARG, "unknown option %d", (int)option);
}

const char *tx_errmsg(const tx_ctx *ctx)
{
    if (!ctx)
        return "no context";
    if (ctx->msg.oom)
        return "out of memory";
    return ctx->msg.p ? ctx->msg.p : "";
}

int tx_errcode(const tx_ctx *ctx)
{
    return ctx ? ctx->status : TX_ERR_ARG;
}

const char *tx_strerror(int status)
{
    switch (status) {
    case TX_OK: return "success";
    case TX_ERR_NOMEM: return "out of memory";
    case TX_ERR_ARG: return "bad argument";
    case TX_ERR_COMPILE: return "the program has errors";
    case TX_ERR_BIND: return "a binding does not fit the program";
    case TX_ERR_RUN: return "a run-time check failed";
    case TX_ERR_JIT: return "the generated code did not compile";
    case TX_ERR_INTERNAL: return "internal error (a bug in tensorexpr)";
    }
    return "unknown status";
}

/* The default C function name: the file's base name without extension,
   made a valid identifier that is not a C keyword. */
static char *function_name(tx_arena *a, const char *filename)
{
    const char *base = filename ? filename : "program";
    const char *slash = strrchr(base, '/');
    if (slash)
        base = slash + 1;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        n = (size_t)(dot - base);
    tx_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        char c = base[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        buf_put(&b, ok ? &c : "_", 1);
    }
    int bad = !b.p || !emit_name_ok(b.p);
    /* tx_ + a name is never one of the generated tx_ names, which do not
       nest the prefix */
    char *out = bad ? arena_printf(a, "tx_%s", b.p ? b.p : "program") : arena_strndup(a, b.p, b.len);
    buf_free(&b);
    return out;
}

void tx_program_free(tx_program *p)
{
    if (!p)
        return;
    jit_free(p->code.jit);
    for (int i = 0; i < JIT_PARKED; i++) {
        jit_free(p->parked[i].code.jit);
        arena_free(p->parked[i].code.arena);
    }
    for (int k = 0; p->S && p->bind && k < p->S->ntensors; k++)
        free(p->bind[k].stage);
    free(p->workspace);
    free(p->times);
    arena_free(p->code.arena);
    arena_free(p->arena);
    free(p->text);
    free(p);
}

/* Runs WORK(ARG) under a recovery point (recover_run). On failure the
   status and its message go to CTX: the pipeline's message in R for the
   statuses it reports, else "out of memory" or the internal error. */
static int guarded(tx_ctx *ctx, int (*work)(void *), void *arg, const pipeline_result *r)
{
    char what[512];
    int st = recover_run(work, arg, what, sizeof what);
    if (st == TX_OK)
        return st;
    if (st == TX_ERR_INTERNAL)
        return fail(ctx, st, "%s", what);
    if (st == TX_ERR_NOMEM && r && !r->diag.out.oom && r->diag.out.p && *r->diag.out.p)
        return fail(ctx, st, "%s", r->diag.out.p); /* a message that says how much */
    if (st == TX_ERR_NOMEM || (r && r->diag.out.oom))
        return fail(ctx, TX_ERR_NOMEM, "out of memory");
    return fail(ctx, st, "%s", r && r->diag.out.p ? r->diag.out.p : "");
}

typedef struct {
    tx_program *p;
    const char *filename;
    tx_diag diag;         /* parse and sema */
    pipeline_result r;
} compile_job;

static int compile_work(void *arg)
{
    compile_job *j = arg;
    tx_program *p = j->p;
    const char *name = j->filename ? j->filename : "<input>";
    p->src.name = arena_strndup(p->arena, name, strlen(name));
    cst_program *cst = parse_program(&p->src, p->arena, &j->diag);
    if (cst)
        p->S = sema_check(cst, p->arena, &j->diag);
    if (!p->S || j->diag.nerrors) { /* the diagnostics become the pipeline's message */
        j->r.diag.out = j->diag.out;
        j->diag.out = (tx_buf){0};
        return TX_ERR_COMPILE;
    }
    /* lowered and optimised once now: lowering's errors (limits) belong
       to compilation; tx_run specialises the graph again on the extents */
    pipeline_options o = {.output = PIPE_GRAPH, .target = &target_jit_tcc, .opt_level = p->ctx->opt_level};
    int st = pipeline_run(p->S, p->arena, &o, &j->r);
    if (st != TX_OK)
        return st;
    p->g = j->r.g;

    sema_program *S = p->S;
    p->fn_name = function_name(p->arena, j->filename);
    p->bind = arena_alloc(p->arena, sizeof(binding) * (size_t)(S->ntensors + 1));
    p->maps = arena_alloc(p->arena, sizeof(tx_sparse_map *) * (size_t)(S->nmaps + 1));
    p->dim_set = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
    p->jit_dims = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
    p->jit_layout = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->ntensors + 1) * (1 + TX_MAX_MODES));
    p->layout = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->ntensors + 1) * (1 + TX_MAX_MODES));
    p->jit_inplace = arena_alloc(p->arena, (size_t)(S->ntensors + 1));
    memset(p->jit_layout, 0, sizeof(int64_t) * (size_t)(S->ntensors + 1) * (1 + TX_MAX_MODES));
    memset(p->layout, 0, sizeof(int64_t) * (size_t)(S->ntensors + 1) * (1 + TX_MAX_MODES));
    memset(p->jit_inplace, 0, (size_t)(S->ntensors + 1));
    for (int i = 0; i < JIT_PARKED; i++) {
        p->parked[i].dims = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
        p->parked[i].layout = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->ntensors + 1) * (1 + TX_MAX_MODES));
        p->parked[i].inplace = arena_alloc(p->arena, (size_t)(S->ntensors + 1));
    }
    for (int i = 0; i < S->nsym_dims; i++)
        p->dim_set[i] = -1;
    p->timing = p->ctx->timing;
    p->opt_level = p->ctx->opt_level;
    p->threads = p->ctx->threads;
    p->huge_pages = p->ctx->huge_pages;
    p->backend = p->ctx->backend;
    p->times = calloc((size_t)S->nassign + 1, sizeof(double));
    if (!p->times)
        recover_oom();
    p->stmt_lines = arena_alloc(p->arena, sizeof(int) * (size_t)(S->nassign + 1));
    for (cst_stmt *stmt = S->cst->first; stmt; stmt = stmt->next)
        if (stmt->kind == STMT_ASSIGN || stmt->kind == STMT_LET_TENSOR)
            p->stmt_lines[stmt->index] = (int)stmt->span.line;
    p->dim_names = arena_alloc(p->arena, sizeof(char **) * (size_t)(S->ntensors + 1));
    p->const_ext = arena_alloc(p->arena, sizeof(int64_t *) * (size_t)(S->ntensors + 1));
    for (int i = 0; i < S->ntensors; i++) {
        sym *t = S->tensors[i];
        p->dim_names[i] = arena_alloc(p->arena, sizeof(char *) * (size_t)(t->rank + 1));
        p->const_ext[i] = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(t->rank + 1));
        for (int m = 0; m < t->rank; m++) {
            p->dim_names[i][m] = t->ext[m].dim >= 0 ? S->dims[t->ext[m].dim]->name : NULL;
            /* a dim expression (o+v) is symbolic too: no name, extent -1 */
            p->const_ext[i][m] = t->ext[m].dim == -1 ? t->ext[m].value : -1;
        }
    }
    return TX_OK;
}

tx_program *tx_compile(tx_ctx *ctx, const char *src, size_t len, const char *filename)
{
    if (!ctx)
        return NULL;
    if (!src && len) {
        fail(ctx, TX_ERR_ARG, "tx_compile: source is NULL");
        return NULL;
    }
    if (len > UINT32_MAX / 2) {
        fail(ctx, TX_ERR_ARG, "%s: the source is too large (%zu bytes)", filename ? filename : "<input>", len);
        return NULL;
    }
    tx_program *p = calloc(1, sizeof *p);
    if (!p) {
        fail(ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    p->ctx = ctx;
    p->arena = arena_new();
    p->text = malloc(len + 1);
    if (!p->arena || !p->text) {
        tx_program_free(p);
        fail(ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (len)
        memcpy(p->text, src, len);
    p->text[len] = 0;
    p->src.text = p->text;
    p->src.len = len;
    compile_job job = {.p = p, .filename = filename, .diag = {.src = &p->src}};
    int st = guarded(ctx, compile_work, &job, &job.r);
    buf_free(&job.diag.out);
    pipeline_result_free(&job.r);
    if (st != TX_OK) {
        tx_program_free(p);
        return NULL;
    }
    set_msg(ctx, "%s", "");
    ctx->status = TX_OK;
    return p;
}

static int find_tensor(const tx_program *p, const char *name)
{
    for (int i = 0; i < p->S->ntensors; i++)
        if (strcmp(p->S->tensors[i]->name, name) == 0)
            return i;
    return -1;
}

static int find_dim(const tx_program *p, const char *name)
{
    for (int i = 0; i < p->S->nsym_dims; i++)
        if (strcmp(p->S->sym_dims[i]->name, name) == 0)
            return i;
    return -1;
}

/* Works out every symbolic dim from tx_set_dim and the bindings (skipping
   tensor SKIP). Fills DIMS (-1 where unknown). Returns TX_OK or
   TX_ERR_BIND with a message naming the two sources that disagree. */
static int resolve_dims(tx_program *p, int skip, int64_t *dims, const char **from)
{
    sema_program *S = p->S;
    for (int i = 0; i < S->nsym_dims; i++) {
        dims[i] = p->dim_set[i];
        from[i] = NULL; /* NULL: set explicitly */
    }
    for (int k = 0; k < S->ntensors; k++) {
        if (k == skip || !p->bind[k].bound)
            continue;
        sym *t = S->tensors[k];
        for (int m = 0; m < t->rank; m++) {
            if (t->ext[m].dim < 0)
                continue;
            int d = S->dims[t->ext[m].dim]->index;
            int64_t v = p->bind[k].shape[m];
            if (dims[d] < 0) {
                dims[d] = v;
                from[d] = t->name;
            } else if (dims[d] != v) {
                if (!from[d])
                    return fail(p->ctx, TX_ERR_BIND, "dim '%s' is set to %lld, but mode %d of '%s' is %lld",
                                S->sym_dims[d]->name, (long long)dims[d], m, t->name, (long long)v);
                return fail(p->ctx, TX_ERR_BIND,
                            "dim '%s' is %lld in '%s' but %lld in mode %d of '%s'", S->sym_dims[d]->name,
                            (long long)dims[d], from[d], (long long)v, m, t->name);
            }
        }
    }
    return TX_OK;
}

/* The failure for dim D (an index into sym_dims), unknown when TENSOR
   (NULL: none) needs it: with, where a bound tensor has an extent that is
   an expression of D (2*n - 1), that such an extent does not set it. */
static int unknown_dim(tx_program *p, int d, const char *tensor)
{
    sema_program *S = p->S;
    char hint[320] = "";
    int64_t *probe = malloc(sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
    for (int i = 0; probe && i < S->nsym_dims; i++)
        probe[i] = i == d ? -1 : 1; /* an extent that reads D evaluates to -1 */
    for (int k = 0; probe && !hint[0] && k < S->ntensors; k++)
        for (int m = 0; p->bind[k].bound && !hint[0] && m < S->tensors[k]->rank; m++) {
            tx_extent e = S->tensors[k]->ext[m];
            if (e.dim == EXT_DERIVED && sema_extent_eval(S, e, probe) < 0) {
                tx_buf text = {0};
                sema_extent_print(S, e, &text);
                snprintf(hint, sizeof hint, " (mode %d of '%s' is %.100s: an extent written as an expression "
                         "does not set the dims in it)", m, S->tensors[k]->name, text.p ? text.p : "?");
                buf_free(&text);
            }
        }
    free(probe);
    return fail(p->ctx, TX_ERR_BIND, "dim '%s'%s%s%s is unknown: bind a tensor that has it, or set it%s",
                S->sym_dims[d]->name, tensor ? " of '" : "", tensor ? tensor : "", tensor ? "'" : "", hint);
}

/* The public element type of DT (the values are the same). */
static tx_dtype api_dtype(dtype dt)
{
    return dt == DT_F32 ? TX_F32 : dt == DT_F64 ? TX_F64 : dt == DT_C64 ? TX_C64 : TX_C128;
}

/* Complex elements, copied whole. */
typedef struct { double re, im; } tx_c128_elem;
typedef struct { float re, im; } tx_c64_elem;

static const char *dtype_name(tx_dtype d)
{
    return d == TX_F32 ? "f32" : d == TX_F64 ? "f64" : d == TX_C64 ? "c64" : d == TX_C128 ? "c128" : "?";
}

/* The layout of a binding: whether it is row-major contiguous, and the
   bytes it spans. Strides that cannot be addressed (the span overflows)
   are TX_ERR_BIND. An out or inout tensor must not have two elements in
   one place: no zero stride on a mode of extent above 1, and, taking the
   modes by increasing |stride|, each stride must pass the farthest
   element the smaller ones reach (which rules out every overlap, and
   refuses only exotic interleavings numpy's slicing never makes). */
static int binding_layout(tx_program *p, const char *tensor, const sym *t, binding *b, void *data,
                          int ndim, const int64_t *shape, const int64_t *strides)
{
    int64_t esz = dt_size(t->dt);
    int empty = 0;
    for (int m = 0; m < ndim; m++)
        empty |= shape[m] == 0;
    /* row-major strides; a mode of extent 1 may have any stride */
    int64_t c = 1;
    int huge = 0; /* more elements than an int64_t counts */
    b->strided = 0;
    for (int m = ndim - 1; m >= 0; m--) {
        b->stride[m] = strides ? strides[m] : c;
        if (shape[m] > 1 && b->stride[m] != c)
            b->strided = 1;
        if (shape[m] > 1 && c > INT64_MAX / shape[m])
            huge = 1;
        else if (shape[m] > 1)
            c *= shape[m];
    }
    if (empty) /* nothing to read or write: used as it is */
        b->strided = 0;
    else if (huge && !strides)
        return fail(p->ctx, TX_ERR_BIND, "'%s': the array's extents multiply beyond any address", tensor);
    else if (huge)
        b->strided = 1;
    /* the span, in elements below and above element (0, ..., 0) */
    const int64_t lim = INT64_MAX / 16;
    int64_t below = 0, above = 0;
    for (int m = 0; !empty && m < ndim; m++) {
        int64_t s = b->stride[m], n = shape[m] - 1;
        int64_t mag = s < 0 ? (s == INT64_MIN ? lim : -s) : s;
        if (n > 0 && mag > (lim - (s < 0 ? below : above)) / n)
            return fail(p->ctx, TX_ERR_BIND, "'%s': mode %d (extent %lld, stride %lld) reaches beyond any "
                        "address", tensor, m, (long long)shape[m], (long long)s);
        if (s < 0)
            below += mag * n;
        else
            above += mag * n;
    }
    uintptr_t base = (uintptr_t)data;
    if (!empty && ((uintptr_t)(below * esz) > base || (uintptr_t)((above + 1) * esz) > UINTPTR_MAX - base))
        return fail(p->ctx, TX_ERR_BIND, "'%s': the array's strides reach beyond any address", tensor);
    b->lo = empty ? 0 : base - (uintptr_t)(below * esz);
    b->hi = empty ? 0 : base + (uintptr_t)((above + 1) * esz);
    b->below = empty ? 0 : (uintptr_t)(below * esz);
    b->above = empty ? 0 : (uintptr_t)((above + 1) * esz);
    b->layout_given = strides != NULL;
    if (strides && ndim > 0)
        memcpy(b->given, strides, sizeof(int64_t) * (size_t)ndim);
    if (t->io == IO_IN || empty || !b->strided)
        return TX_OK;
    int order[TX_MAX_MODES], n = 0;
    for (int m = 0; m < ndim; m++) {
        if (shape[m] <= 1)
            continue;
        if (b->stride[m] == 0)
            return fail(p->ctx, TX_ERR_BIND, "'%s' is written by the program, but its mode %d has stride 0 "
                        "(a broadcast): its %lld elements would be written to one place", tensor, m,
                        (long long)shape[m]);
        int i = n++;
        while (i > 0 && llabs(b->stride[order[i - 1]]) > llabs(b->stride[m])) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = m;
    }
    int64_t reach = 0;
    for (int i = 0; i < n; i++) {
        int m = order[i];
        int64_t mag = llabs(b->stride[m]);
        if (mag <= reach)
            return fail(p->ctx, TX_ERR_BIND, "'%s' is written by the program, but its strides may place two "
                        "elements in one place (mode %d has stride %lld, within the %lld elements its "
                        "smaller strides span)", tensor, m, (long long)b->stride[m], (long long)reach + 1);
        reach += mag * (shape[m] - 1);
    }
    return TX_OK;
}

/* tx_bind and tx_bind_array: FN names the caller in messages; TYPE 0
   takes the declared type. */
static int bind_array(tx_program *p, const char *fn, const char *tensor, void *data, tx_dtype type, int ndim,
                      const int64_t *shape, const int64_t *strides)
{
    if (!p)
        return TX_ERR_ARG;
    if (!tensor || !data || (ndim > 0 && !shape))
        return fail(p->ctx, TX_ERR_ARG, "%s: NULL argument", fn);
    int k = find_tensor(p, tensor);
    if (k < 0) {
        sym *s = sema_lookup(p->S, tensor);
        if (s && s->kind == SYM_TENSOR)
            return fail(p->ctx, TX_ERR_ARG, "'%s' is a tmp tensor, owned by the program; it cannot be bound",
                        tensor);
        return fail(p->ctx, TX_ERR_ARG, "the program has no tensor '%s'", tensor);
    }
    sym *t = p->S->tensors[k];
    tx_dtype declared = api_dtype(t->dt);
    if (type && type != TX_F32 && type != TX_F64 && type != TX_C64 && type != TX_C128)
        return fail(p->ctx, TX_ERR_ARG, "%s: '%s': %d is not an element type (TX_F32, TX_F64, TX_C64 or TX_C128)",
                    fn, tensor, (int)type);
    if (type && type != declared)
        return fail(p->ctx, TX_ERR_BIND, "'%s' is declared %s, but the array is %s", tensor,
                    dtype_name(declared), dtype_name(type));
    if (ndim != t->rank)
        return fail(p->ctx, TX_ERR_BIND, "'%s' has %d mode%s; the array has %d", tensor, t->rank,
                    t->rank == 1 ? "" : "s", ndim);
    for (int m = 0; m < ndim; m++) {
        if (shape[m] < 0)
            return fail(p->ctx, TX_ERR_BIND, "'%s': extent %lld of mode %d is negative", tensor,
                        (long long)shape[m], m);
        if (t->ext[m].dim == -1 && shape[m] != t->ext[m].value)
            return fail(p->ctx, TX_ERR_BIND, "'%s': mode %d has extent %lld, but the array's is %lld", tensor,
                        m, (long long)t->ext[m].value, (long long)shape[m]);
    }
    /* a dim set with tx_set_dim must agree now; agreement between
       bindings is checked by tx_run, so that a caller can rebind every
       tensor with new extents one after the other */
    for (int m = 0; m < ndim; m++) {
        if (t->ext[m].dim < 0)
            continue;
        int d = p->S->dims[t->ext[m].dim]->index;
        if (p->dim_set[d] >= 0 && p->dim_set[d] != shape[m])
            return fail(p->ctx, TX_ERR_BIND, "dim '%s' is set to %lld, but mode %d of '%s' is %lld",
                        p->S->sym_dims[d]->name, (long long)p->dim_set[d], m, tensor, (long long)shape[m]);
    }
    binding b = p->bind[k]; /* the staging buffer carries over */
    int st = binding_layout(p, tensor, t, &b, data, ndim, shape, strides);
    if (st != TX_OK)
        return st;
    b.bound = 1;
    b.data = data;
    if (ndim > 0)
        memcpy(b.shape, shape, sizeof(int64_t) * (size_t)ndim);
    p->bind[k] = b;
    return TX_OK;
}

int tx_bind(tx_program *p, const char *tensor, void *data, int ndim, const int64_t *shape)
{
    return bind_array(p, "tx_bind", tensor, data, 0, ndim, shape, NULL);
}

int tx_bind_array(tx_program *p, const char *tensor, void *data, tx_dtype type, int ndim,
                  const int64_t *shape, const int64_t *strides)
{
    if (p && !type)
        return fail(p->ctx, TX_ERR_ARG, "tx_bind_array: '%s': 0 is not an element type (TX_F32, TX_F64, TX_C64 or TX_C128)",
                    tensor ? tensor : "(null)");
    return bind_array(p, "tx_bind_array", tensor, data, type, ndim, shape, strides);
}

int tx_run_arrays(tx_program *p, void *const *data, const int64_t *shapes, const int64_t *strides)
{
    if (!p)
        return TX_ERR_ARG;
    if (!data || (!shapes && p->S->ntensors))
        return fail(p->ctx, TX_ERR_ARG, "tx_run_arrays: NULL argument");
    size_t o = 0;
    for (int k = 0; k < p->S->ntensors; k++) {
        const sym *t = p->S->tensors[k];
        binding *b = &p->bind[k];
        const int64_t *shape = shapes + o, *stride = strides ? strides + o : NULL;
        o += (size_t)t->rank;
        /* the same layout at a new address: only the span moves */
        if (b->bound && data[k] && b->layout_given == (stride != NULL) &&
            memcmp(b->shape, shape, sizeof(int64_t) * (size_t)t->rank) == 0 &&
            (!stride || memcmp(b->given, stride, sizeof(int64_t) * (size_t)t->rank) == 0)) {
            uintptr_t base = (uintptr_t)data[k];
            if (b->lo != b->hi && base >= b->below && base <= UINTPTR_MAX - b->above) {
                b->lo = base - b->below;
                b->hi = base + b->above;
                b->data = data[k];
                continue;
            }
        }
        int st = bind_array(p, "tx_run_arrays", t->name, data[k], 0, t->rank, shape, stride);
        if (st != TX_OK)
            return st;
    }
    return tx_run(p);
}

int tx_run_arrays_at(tx_program *p, void *const *const *where, const int64_t *shapes, const int64_t *strides)
{
    if (!p)
        return TX_ERR_ARG;
    if (!where)
        return fail(p->ctx, TX_ERR_ARG, "tx_run_arrays_at: NULL argument");
    enum { LOCAL = 16 };
    void *local[LOCAL];
    int n = p->S->ntensors;
    void **data = n <= LOCAL ? local : malloc(sizeof(void *) * (size_t)n);
    if (!data)
        return fail(p->ctx, TX_ERR_NOMEM, "out of memory");
    int st = TX_OK;
    for (int k = 0; k < n && st == TX_OK; k++)
        if (where[k])
            data[k] = *where[k];
        else
            st = fail(p->ctx, TX_ERR_ARG, "tx_run_arrays_at: NULL address for tensor '%s'", p->S->tensors[k]->name);
    if (st == TX_OK)
        st = tx_run_arrays(p, data, shapes, strides);
    if (data != local)
        free(data);
    return st;
}

int tx_bind_sparse(tx_program *p, const char *map, const tx_sparse_map *m)
{
    if (!p)
        return TX_ERR_ARG;
    if (!map || !m)
        return fail(p->ctx, TX_ERR_ARG, "tx_bind_sparse: NULL argument");
    for (int k = 0; k < p->S->nmaps; k++)
        if (strcmp(p->S->maps[k]->name, map) == 0) {
            p->maps[k] = m; /* checked by the generated code before every run */
            return TX_OK;
        }
    return fail(p->ctx, TX_ERR_ARG, "the program has no sparse map '%s'", map);
}

int tx_map_count(const tx_program *p)
{
    return p ? p->S->nmaps : 0;
}

int tx_map_get(const tx_program *p, int i, tx_map_info *info)
{
    if (!p || !info || i < 0 || i >= p->S->nmaps)
        return TX_ERR_ARG;
    const sym *m = p->S->maps[i];
    info->name = m->name;
    info->nsrc = m->nsrc;
    info->ndst = m->ndst;
    return TX_OK;
}

int tx_map_shape(tx_program *p, const char *map, int64_t *shape)
{
    if (!p || !map || !shape)
        return TX_ERR_ARG;
    for (int k = 0; k < p->S->nmaps; k++) {
        const sym *m = p->S->maps[k];
        if (strcmp(m->name, map) != 0)
            continue;
        int n = p->S->nsym_dims;
        int64_t *dims = malloc(sizeof(int64_t) * (size_t)(n + 1));
        const char **from = malloc(sizeof(char *) * (size_t)(n + 1));
        int st = dims && from ? resolve_dims(p, -1, dims, from) : fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        for (int j = 0; st == TX_OK && j < m->nsrc + m->ndst; j++) {
            tx_extent x = j < m->nsrc ? m->src_ext[j] : m->dst_ext[j - m->nsrc];
            int64_t v = sema_extent_eval(p->S, x, dims);
            if (v < 0)
                st = fail(p->ctx, TX_ERR_BIND, "the extents of sparse map '%s' are not known yet: bind the tensors "
                          "or set the dims first", map);
            shape[j] = v;
        }
        free(dims);
        free(from);
        return st;
    }
    return fail(p->ctx, TX_ERR_ARG, "the program has no sparse map '%s'", map);
}

int tx_set_dim(tx_program *p, const char *dim, int64_t extent)
{
    if (!p)
        return TX_ERR_ARG;
    if (!dim)
        return fail(p->ctx, TX_ERR_ARG, "tx_set_dim: NULL name");
    int d = find_dim(p, dim);
    if (d < 0) {
        sym *s = sema_lookup(p->S, dim);
        if (s && s->kind == SYM_DIM && s->value == extent)
            return TX_OK; /* setting a constant dim to its own value is harmless */
        if (s && s->kind == SYM_DIM)
            return fail(p->ctx, TX_ERR_ARG, "dim '%s' is the constant %lld; it cannot be set to %lld", dim,
                        (long long)s->value, (long long)extent);
        return fail(p->ctx, TX_ERR_ARG, "the program has no dim '%s'", dim);
    }
    if (extent < 0)
        return fail(p->ctx, TX_ERR_ARG, "dim '%s': extent %lld is negative", dim, (long long)extent);
    p->dim_set[d] = extent; /* bindings are checked against it by tx_run */
    return TX_OK;
}

int tx_tensor_count(const tx_program *p)
{
    return p ? p->S->ntensors : 0;
}

int tx_tensor_get(const tx_program *p, int i, tx_tensor_info *info)
{
    if (!p || !info || i < 0 || i >= p->S->ntensors)
        return TX_ERR_ARG;
    sym *t = p->S->tensors[i];
    info->name = t->name;
    info->io = t->io == IO_IN ? TX_IN : t->io == IO_OUT ? TX_OUT : TX_INOUT;
    info->dtype = api_dtype(t->dt);
    info->ndim = t->rank;
    info->dims = p->dim_names[i];
    info->extents = p->const_ext[i];
    return TX_OK;
}

int tx_dim_values(tx_program *p, int64_t *values, int max, int *count)
{
    if (!p)
        return TX_ERR_ARG;
    int n = p->S->nsym_dims;
    if (count)
        *count = n;
    if (n > max || (n > 0 && !values))
        return fail(p->ctx, TX_ERR_ARG, "tx_dim_values: the program has %d symbolic dims, room for %d", n,
                    max < 0 ? 0 : max);
    const char **from = malloc(sizeof(char *) * (size_t)(n + 1));
    if (!from)
        return fail(p->ctx, TX_ERR_NOMEM, "out of memory");
    int64_t dummy;
    int st = resolve_dims(p, -1, n ? values : &dummy, from);
    for (int i = 0; st == TX_OK && i < n; i++)
        if (values[i] < 0)
            st = unknown_dim(p, i, NULL);
    free(from);
    return st;
}

int tx_tensor_shape(tx_program *p, const char *tensor, int64_t *shape)
{
    if (!p)
        return TX_ERR_ARG;
    int k = tensor ? find_tensor(p, tensor) : -1;
    if (k < 0)
        return fail(p->ctx, TX_ERR_ARG, "the program has no tensor '%s'", tensor ? tensor : "(null)");
    if (!shape && p->S->tensors[k]->rank > 0)
        return fail(p->ctx, TX_ERR_ARG, "tx_tensor_shape: NULL shape");
    int n = p->S->nsym_dims;
    int64_t *dims = malloc(sizeof(int64_t) * (size_t)(n + 1));
    const char **from = malloc(sizeof(char *) * (size_t)(n + 1));
    if (!dims || !from) {
        free(dims);
        free(from);
        return fail(p->ctx, TX_ERR_NOMEM, "out of memory");
    }
    int st = resolve_dims(p, -1, dims, from);
    sym *t = p->S->tensors[k];
    for (int m = 0; st == TX_OK && m < t->rank; m++) {
        if (t->ext[m].dim == EXT_DERIVED) { /* a dim expression: o+v */
            shape[m] = sema_extent_eval(p->S, t->ext[m], dims);
            if (shape[m] < 0)
                st = fail(p->ctx, TX_ERR_BIND, "mode %d of '%s' depends on a dim that is unknown: set it", m,
                          tensor);
            continue;
        }
        if (t->ext[m].dim < 0) {
            shape[m] = t->ext[m].value;
            continue;
        }
        int d = p->S->dims[t->ext[m].dim]->index;
        if (dims[d] < 0)
            st = unknown_dim(p, d, tensor);
        else
            shape[m] = dims[d];
    }
    free(dims);
    free(from);
    return st;
}

int tx_stmt_count(const tx_program *p)
{
    return p ? p->S->nassign : 0;
}

int tx_timing(const tx_program *p, int i, double *seconds, int *line)
{
    if (p && i == -1) {
        if (seconds)
            *seconds = p->jit_seconds;
        if (line)
            *line = 0;
        return TX_OK;
    }
    if (!p || i < 0 || i >= p->S->nassign)
        return TX_ERR_ARG;
    if (seconds)
        *seconds = p->times[i];
    if (line)
        *line = p->stmt_lines[i];
    return TX_OK;
}

int tx_progress(const tx_program *p)
{
    return p ? p->running : 0;
}

int tx_call_count(const tx_program *p)
{
    return p && p->code.jit ? p->code.ncalls : 0;
}

int tx_call_get(const tx_program *p, int i, tx_call_info *info)
{
    if (!p || !info || !p->code.jit || i < 0 || i >= p->code.ncalls)
        return TX_ERR_ARG;
    const emit_call *c = &p->code.calls[i];
    info->stmt = c->stmt;
    info->line = (int)c->line;
    info->kind = c->kind;
    info->op = c->what;
    info->seconds = p->timing ? p->times[p->S->nassign + i] : 0;
    info->flops = c->flops;
    info->bytes = c->bytes;
    return TX_OK;
}

/* How full the bound sparse maps are for extents DIMS (per symbolic dim,
   -1 if unknown), for the contraction order: per map, entries over the
   dense size, or 0.1 when not known; in arena A. NULL without maps. */
static const double *map_densities(const tx_program *p, const int64_t *dims, tx_arena *a)
{
    if (!dims || !p->S->nmaps)
        return NULL;
    double *dens = arena_alloc(a, sizeof(double) * (size_t)p->S->nmaps);
    for (int k = 0; k < p->S->nmaps; k++) {
        const sym *m = p->S->maps[k];
        double ns = 1, nd = 1;
        for (int j = 0; j < m->nsrc; j++)
            ns *= (double)sema_extent_eval(p->S, m->src_ext[j], dims);
        for (int j = 0; j < m->ndst; j++)
            nd *= (double)sema_extent_eval(p->S, m->dst_ext[j], dims);
        const tx_sparse_map *b = p->maps[k];
        dens[k] = 0.1;
        if (b && b->offsets && (double)b->nsrc == ns && ns * nd > 0)
            dens[k] = (double)b->offsets[b->nsrc] / (ns * nd);
    }
    return dens;
}

typedef struct {
    tx_program *p;
    const int64_t *dims;
    const int64_t **strides; /* per variable: bound strides read in place, or NULL */
    int *contiguous;         /* per variable: set where the code needs it row-major */
    tx_arena *arena;
    pipeline_result r;
} run_job;

/* tx_run's compilation: the graph lowered again and optimised knowing the
   extents (the contraction order and the kernels are chosen for these
   sizes), emitted as the JIT flavour and compiled. */
static int run_compile_work(void *arg)
{
    run_job *j = arg;
    tx_program *p = j->p;
    pipeline_options o = {.output = PIPE_JIT, .target = p->backend == TX_BACKEND_CC ? &target_jit_cc : &target_jit_tcc,
                          .opt_level = p->opt_level, .dim_values = j->dims, .fn_name = p->fn_name,
                          .timing = p->timing, .var_strides = j->strides, .var_contiguous = j->contiguous};
    o.map_density = map_densities(p, j->dims, j->arena);
    return pipeline_run(p->S, j->arena, &o, &j->r);
}

/* ---- Layouts and staging: how tx_run hands the bindings to the code ----

   The JIT code is specialised on the strides of the bindings as it is on
   their extents: a strided binding (tx_bind_array with strides other than
   row-major: a numpy slice, transpose, Fortran-order or broadcast array)
   is passed as it is and addressed through its strides, written into the
   code as numbers (emit_expr.c); BLAS calls take their leading dimensions
   and transposition from them (emit_blas.c). The code is made again only
   when the layout asked for changes (layout_key), as when an extent does.

   A binding is still copied through a contiguous staging buffer, gathered
   from the caller's array before the call (in, inout) and scattered back
   after a successful one (out, inout), when

   - the code cannot read its strides: a BLAS call whose operand's modes do
     not merge into a matrix with a unit-stride side and positive strides
     (a negative stride, a broadcast operand), a LAPACK call, or an output
     a sparse loop zeroes as one block. The emitter says so
     (emit_need_contiguous) and the code is made again with that tensor
     row-major and staged;
   - it is an out or inout tensor whose bytes overlap another binding's
     (C = A·B with C on A's memory, a transpose written onto its input):
     then the code writes a private buffer (for inout, a copy of the
     caller's array), copied into the caller's array after a successful
     call. Every input is thus read before any output is written, and an
     output that overlaps nothing costs nothing. Overlap is judged by the
     address ranges the arrays span, which is safe, not exact: interleaved
     arrays that never share an element are copied too.

   After a failed call, nothing staged is copied back: those outputs keep
   the caller's contents. Outputs are copied back in declaration order, so
   where two outputs overlap, the one declared later wins. Staging buffers
   are kept for the next run (regrown when too small) and freed with the
   program. The standalone C (tx_emit) is always row-major. */

/* copy_strided when the innermost mode LAST is not the strided array's
   unit-stride mode U (a Fortran-ordered or transposed array): LAST is
   copied a cache line of the row-major side at a time (a block of 64
   bytes of elements), and inside each block U runs over its whole extent
   for every index of the other modes. The strided side is then read (or
   written) as a few sequential streams, one per element of the block,
   which the hardware prefetches, and every row-major line is written (or
   read) whole at once. An element-by-element copy along the row reads
   one element per line of the strided side, from memory when the array
   is not in cache; tiles of both modes fetch lines the prefetcher cannot
   foresee. */
static void copy_across(char *strided, char *dense, int ndim, const int64_t *shape, const int64_t *stride,
                        size_t esz, int to_dense, int u)
{
    int last = ndim - 1;
    int64_t dstr[TX_MAX_MODES]; /* the row-major side's strides, in elements */
    dstr[last] = 1;
    for (int m = last - 1; m >= 0; m--)
        dstr[m] = dstr[m + 1] * shape[m + 1];
    const int64_t nu = shape[u], nl = shape[last], su = stride[u], sl = stride[last], du = dstr[u];
    const int64_t blk = esz < 64 ? (int64_t)(64 / esz) : 1;
    for (int64_t l0 = 0; l0 < nl; l0 += blk) {
        const int64_t l1 = nl - l0 < blk ? nl : l0 + blk;
        int64_t idx[TX_MAX_MODES] = {0}, soff = 0, doff = 0; /* the other modes' indices, offsets */
        for (;;) {
#define TX_COPY_ACROSS(T)                                                                      \
            {                                                                                  \
                T *d = (T *)(void *)dense + doff, *x = (T *)(void *)strided + soff;            \
                if (to_dense)                                                                  \
                    for (int64_t i = 0; i < nu; i++)                                           \
                        for (int64_t l = l0; l < l1; l++)                                      \
                            d[i * du + l] = x[i * su + l * sl];                                \
                else                                                                           \
                    for (int64_t i = 0; i < nu; i++)                                           \
                        for (int64_t l = l0; l < l1; l++)                                      \
                            x[i * su + l * sl] = d[i * du + l];                                \
            }
            if (esz == sizeof(tx_c128_elem))
                TX_COPY_ACROSS(tx_c128_elem)
            else if (esz == sizeof(double)) /* an f64, or a c64 pair: the bits */
                TX_COPY_ACROSS(tx_c64_elem)
            else
                TX_COPY_ACROSS(float)
#undef TX_COPY_ACROSS
            int m = last - 1; /* the next index of the other modes */
            for (; m >= 0; m--) {
                if (m == u)
                    continue;
                soff += stride[m];
                doff += dstr[m];
                if (++idx[m] < shape[m])
                    break;
                soff -= stride[m] * shape[m];
                doff -= dstr[m] * shape[m];
                idx[m] = 0;
            }
            if (m < 0)
                break;
        }
    }
}

/* Copies between a strided array (STRIDED, element (0, ..., 0)) and a
   row-major contiguous one (DENSE): TO_DENSE 1 gathers, 0 scatters. */
static void copy_strided(char *strided, char *dense, int ndim, const int64_t *shape, const int64_t *stride,
                         size_t esz, int to_dense)
{
    if (ndim == 0) {
        memcpy(to_dense ? dense : strided, to_dense ? strided : dense, esz);
        return;
    }
    for (int m = 0; m < ndim; m++)
        if (shape[m] == 0)
            return;
    /* the innermost mode read across lines, another mode along them */
    if (ndim >= 2 && stride[ndim - 1] != 1 && stride[ndim - 1] != -1 && shape[ndim - 1] >= 4)
        for (int u = ndim - 2; u >= 0; u--)
            if ((stride[u] == 1 || stride[u] == -1) && shape[u] >= 4) {
                copy_across(strided, dense, ndim, shape, stride, esz, to_dense, u);
                return;
            }
    int64_t idx[TX_MAX_MODES] = {0}, off = 0; /* in elements, from STRIDED */
    int64_t n = shape[ndim - 1], s = stride[ndim - 1];
    for (;;) {
        /* the innermost mode: one row, in the element type's width */
#define TX_COPY_ROW(T)                                                        \
        {                                                                     \
            T *d = (T *)(void *)dense, *x = (T *)(void *)strided + off;       \
            if (to_dense)                                                     \
                for (int64_t i = 0; i < n; i++)                               \
                    d[i] = x[i * s];                                          \
            else                                                              \
                for (int64_t i = 0; i < n; i++)                               \
                    x[i * s] = d[i];                                          \
        }
        if (esz == sizeof(tx_c128_elem))
            TX_COPY_ROW(tx_c128_elem)
        else if (esz == sizeof(double)) /* an f64, or a c64 pair (4-byte aligned): the bits */
            TX_COPY_ROW(tx_c64_elem)
        else
            TX_COPY_ROW(float)
#undef TX_COPY_ROW
        dense += (size_t)n * esz;
        int m = ndim - 2;
        for (; m >= 0; m--) {
            off += stride[m];
            if (++idx[m] < shape[m])
                break;
            off -= stride[m] * shape[m];
            idx[m] = 0;
        }
        if (m < 0)
            return;
    }
}

static size_t elem_size(const sym *t)
{
    return (size_t)dt_size(t->dt);
}

/* The elements of binding B of tensor T, or -1 if their bytes do not fit
   in a size_t. */
static int64_t binding_elems(const binding *b, const sym *t)
{
    int64_t n = 1;
    for (int m = 0; m < t->rank; m++) {
        if (b->shape[m] == 0)
            return 0;
        if (n > (int64_t)(SIZE_MAX / 16) / b->shape[m])
            return -1;
        n *= b->shape[m];
    }
    return n;
}

static int ranges_overlap(const binding *a, const binding *b)
{
    return a->lo < b->hi && b->lo < a->hi;
}

/* The layout the current bindings ask of the code, into P->layout: per
   tensor [1, its strides] if it is strided and may be read in place (not
   an output that overlaps another binding, which is staged), else zeros. */
static void layout_key(tx_program *p)
{
    sema_program *S = p->S;
    for (int k = 0; k < S->ntensors; k++) {
        binding *b = &p->bind[k];
        const sym *t = S->tensors[k];
        int64_t *key = p->layout + (size_t)k * (1 + TX_MAX_MODES);
        b->overlaps = 0;
        for (int j = 0; !b->overlaps && t->io != IO_IN && j < S->ntensors; j++)
            b->overlaps = j != k && ranges_overlap(b, &p->bind[j]);
        /* entries past the rank stay 0 from the start */
        key[0] = b->strided && !b->overlaps;
        for (int m = 0; m < t->rank; m++)
            key[1 + m] = key[0] ? b->stride[m] : 0;
    }
}

/* Before the call: fills ARGS[k] with the array each parameter tensor k is
   passed as, staging what must be (see above). TX_ERR_NOMEM if a staging
   buffer cannot be had. */
static int stage_bindings(tx_program *p, void **args)
{
    sema_program *S = p->S;
    for (int k = 0; k < S->ntensors; k++) {
        binding *b = &p->bind[k];
        const sym *t = S->tensors[k];
        b->staged = (b->strided && !p->jit_inplace[k]) || b->overlaps;
        args[k] = b->data;
        if (!b->staged)
            continue;
        int64_t n = binding_elems(b, t);
        size_t bytes = n > 0 ? (size_t)n * elem_size(t) : 1;
        if (n < 0)
            return fail(p->ctx, TX_ERR_NOMEM, "out of memory: '%s' is too large to stage", t->name);
        if (b->stage_cap < bytes) {
            free(b->stage);
            b->stage = tx_huge_alloc(bytes, p->huge_pages);
            b->stage_cap = b->stage ? bytes : 0;
            if (!b->stage)
                return fail(p->ctx, TX_ERR_NOMEM, "out of memory (%zu bytes to stage '%s', which %s)", bytes,
                            t->name, b->overlaps ? "overlaps another binding" : "is strided");
        }
        args[k] = b->stage;
        if (t->io != IO_OUT) /* in and inout: the code reads the caller's values */
            copy_strided(b->data, b->stage, t->rank, b->shape, b->stride, elem_size(t), 1);
    }
    return TX_OK;
}

/* After a successful call: copies every staged out and inout tensor into
   the caller's array, in declaration order. */
static void finish_bindings(tx_program *p)
{
    sema_program *S = p->S;
    for (int k = 0; k < S->ntensors; k++) {
        binding *b = &p->bind[k];
        const sym *t = S->tensors[k];
        if (b->staged && t->io != IO_IN)
            copy_strided(b->data, b->stage, t->rank, b->shape, b->stride, elem_size(t), 0);
    }
}

/* Sets the current code aside (evicting the slot parked longest ago) and
   frees its workspace: tx_run is about to need other code. */
static void park_current(tx_program *p, size_t layout_bytes)
{
    int victim = 0;
    for (int i = 0; i < JIT_PARKED; i++) {
        if (!p->parked[i].code.jit) {
            victim = i;
            break;
        }
        if (p->parked[i].used < p->parked[victim].used)
            victim = i;
    }
    jit_parked *v = &p->parked[victim];
    jit_free(v->code.jit);
    arena_free(v->code.arena);
    v->code = p->code;
    memcpy(v->dims, p->jit_dims, sizeof(int64_t) * (size_t)p->S->nsym_dims);
    memcpy(v->layout, p->jit_layout, layout_bytes);
    memcpy(v->inplace, p->jit_inplace, (size_t)p->S->ntensors);
    v->used = ++p->clock;
    p->code.jit = NULL; /* its error table and calls stay readable until new code comes */
    p->code.arena = NULL;
    p->code.workspace = 0;
    free(p->workspace);
    p->workspace = NULL;
}

/* Takes back parked code made for DIMS and the current layout, if there
   is some. TX_ERR_NOMEM if its workspace cannot be had (it stays parked). */
static int unpark(tx_program *p, const int64_t *dims, size_t layout_bytes)
{
    sema_program *S = p->S;
    for (int i = 0; i < JIT_PARKED; i++) {
        jit_parked *v = &p->parked[i];
        if (!v->code.jit || memcmp(v->dims, dims, sizeof(int64_t) * (size_t)S->nsym_dims) != 0 ||
            memcmp(v->layout, p->layout, layout_bytes) != 0)
            continue;
        void *ws = v->code.workspace ? tx_huge_alloc(v->code.workspace, p->huge_pages) : NULL;
        double *times = realloc(p->times, sizeof(double) * (size_t)(S->nassign + v->code.ncalls + 1));
        if (times)
            p->times = times;
        if ((v->code.workspace && !ws) || !times) {
            free(ws);
            return fail(p->ctx, TX_ERR_NOMEM, "out of memory (a workspace of %zu bytes)", v->code.workspace);
        }
        p->code = v->code;
        p->workspace = ws;
        memcpy(p->jit_dims, v->dims, sizeof(int64_t) * (size_t)S->nsym_dims);
        memcpy(p->jit_layout, v->layout, layout_bytes);
        memcpy(p->jit_inplace, v->inplace, (size_t)S->ntensors);
        v->code.jit = NULL;
        v->code.arena = NULL;
        return TX_OK;
    }
    return TX_OK;
}

int tx_run(tx_program *p)
{
    if (!p)
        return TX_ERR_ARG;
    sema_program *S = p->S;
    for (int k = 0; k < S->ntensors; k++)
        if (!p->bind[k].bound)
            return fail(p->ctx, TX_ERR_BIND, "tensor '%s' is not bound", S->tensors[k]->name);
    for (int k = 0; k < S->nmaps; k++)
        if (!p->maps[k])
            return fail(p->ctx, TX_ERR_BIND, "sparse map '%s' is not bound", S->maps[k]->name);
    int n = S->nsym_dims;
    /* small programs (every einsum) run without a malloc */
    enum { LOCAL = 32 };
    int64_t dims_local[LOCAL];
    const char *from_local[LOCAL];
    void *args_local[LOCAL];
    int nargs = S->ntensors + S->nmaps + 5;
    int64_t *dims = n < LOCAL ? dims_local : malloc(sizeof(int64_t) * (size_t)(n + 1));
    const char **from = n < LOCAL ? from_local : malloc(sizeof(char *) * (size_t)(n + 1));
    void **args = nargs <= LOCAL ? args_local : malloc(sizeof(void *) * (size_t)nargs);
    int st = TX_OK;
    if (!dims || !from || !args) {
        st = fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = resolve_dims(p, -1, dims, from);
    for (int i = 0; st == TX_OK && i < n; i++)
        if (dims[i] < 0)
            st = unknown_dim(p, i, NULL);
    /* an extent written as a dim expression (o+v) must match the array */
    for (int k = 0; st == TX_OK && k < S->ntensors; k++)
        for (int m = 0; st == TX_OK && p->bind[k].bound && m < S->tensors[k]->rank; m++) {
            sym *t = S->tensors[k];
            if (t->ext[m].dim != EXT_DERIVED)
                continue;
            int64_t want = sema_extent_eval(S, t->ext[m], dims);
            if (want != p->bind[k].shape[m]) {
                tx_buf e = {0};
                sema_extent_print(S, t->ext[m], &e);
                st = fail(p->ctx, TX_ERR_BIND, "'%s': mode %d has extent %s = %lld, but the array's is %lld",
                          t->name, m, e.p ? e.p : "?", (long long)want, (long long)p->bind[k].shape[m]);
                buf_free(&e);
            }
        }
    if (st != TX_OK)
        goto out;
    layout_key(p);
    size_t layout_bytes = sizeof(int64_t) * (size_t)S->ntensors * (1 + TX_MAX_MODES);
    if (p->code.jit && (memcmp(dims, p->jit_dims, sizeof(int64_t) * (size_t)n) != 0 ||
                   memcmp(p->layout, p->jit_layout, layout_bytes) != 0))
        park_current(p, layout_bytes);
    p->jit_seconds = 0;
    if (!p->code.jit && (st = unpark(p, dims, layout_bytes)) != TX_OK)
        goto out;
    if (!p->code.jit) {
        arena_free(p->code.arena); /* left by a compilation whose workspace could not be had */
        p->code.arena = NULL;
        double t0 = tx_rt_now();
        /* per variable, the strides its tensor's code reads in place */
        const int64_t **strides = calloc((size_t)S->nvars + 1, sizeof *strides);
        int *contiguous = calloc((size_t)S->nvars + 1, sizeof *contiguous);
        run_job job = {.p = p, .dims = dims, .strides = strides, .contiguous = contiguous};
        for (int k = 0; strides && k < S->ntensors; k++)
            if (p->layout[(size_t)k * (1 + TX_MAX_MODES)])
                strides[S->tensors[k]->var] = p->bind[k].stride;
        for (int tries = 0; tries <= S->ntensors; tries++) {
            job.arena = strides && contiguous ? arena_new() : NULL;
            st = job.arena ? guarded(p->ctx, run_compile_work, &job, &job.r)
                           : fail(p->ctx, TX_ERR_NOMEM, "out of memory");
            if (st != TX_OK || !job.r.restage)
                break;
            /* a call cannot read some strides: those tensors are staged */
            for (int i = 0; i < S->nvars; i++)
                if (contiguous[i])
                    strides[i] = NULL;
            memset(contiguous, 0, sizeof *contiguous * (size_t)S->nvars);
            pipeline_result_free(&job.r);
            job.r = (pipeline_result){0};
            arena_free(job.arena);
            job.arena = NULL;
        }
        if (st == TX_OK && !job.r.jit)
            st = fail(p->ctx, TX_ERR_INTERNAL, "internal error: the strides of the bindings were never settled");
        for (int k = 0; st == TX_OK && k < S->ntensors; k++)
            p->jit_inplace[k] = strides[S->tensors[k]->var] != NULL;
        free(strides);
        free(contiguous);
        size_t ws = job.r.workspace;
        if (st == TX_OK) { /* the program keeps the code and the arena its error table is in */
            p->code.jit = job.r.jit;
            job.r.jit = NULL;
            p->code.arena = job.arena;
            p->code.errs = job.r.errs;
            p->code.nerrs = job.r.nerrs;
            p->code.calls = job.r.calls;
            p->code.ncalls = job.r.ncalls;
        } else
            arena_free(job.arena);
        pipeline_result_free(&job.r);
        if (st != TX_OK)
            goto out;
        memcpy(p->jit_dims, dims, sizeof(int64_t) * (size_t)n);
        memcpy(p->jit_layout, p->layout, layout_bytes);
        /* the intermediates' memory, planned by liveness at emission, is
           allocated once and reused by every run until extents change; in
           huge pages, so its first run does not fault on every 4 KiB */
        free(p->workspace);
        p->workspace = ws ? tx_huge_alloc(ws, p->huge_pages) : NULL;
        p->code.workspace = ws;
        double *times = realloc(p->times, sizeof(double) * (size_t)(S->nassign + p->code.ncalls + 1));
        if (times)
            p->times = times;
        if ((ws && !p->workspace) || !times) {
            jit_free(p->code.jit);
            p->code.jit = NULL;
            st = fail(p->ctx, TX_ERR_NOMEM, "out of memory (a workspace of %zu bytes)", ws);
            goto out;
        }
        p->jit_seconds = tx_rt_now() - t0;
    }
    st = stage_bindings(p, args);
    if (st != TX_OK)
        goto out;
    int64_t detail = 0;
    for (int k = 0; k < S->nmaps; k++)
        args[S->ntensors + k] = (void *)p->maps[k];
    int base = S->ntensors + S->nmaps;
    args[base] = p->times;
    args[base + 1] = p->workspace;
    args[base + 2] = &detail;
    args[base + 3] = (void *)&p->running;
    memset(p->times, 0, sizeof(double) * (size_t)(S->nassign + p->code.ncalls));
    /* the program's kernels and BLAS/LAPACK share one thread count: they
       run one after the other, never at once */
    tx_rt_set_threads(p->threads);
    int nthreads = tx_rt_threads();
    if (openblas_get_num_threads() != nthreads)
        openblas_set_num_threads(nthreads);
    p->running = 0;
    int code = jit_entry_point(p->code.jit)(args);
    p->running = 0;
    if (code != 0) {
        const char *msg = "unknown error";
        int nomem = 0;
        for (int i = 0; i < p->code.nerrs; i++)
            if (p->code.errs[i].code == code) {
                msg = p->code.errs[i].msg;
                nomem = p->code.errs[i].nomem;
            }
        /* the detail goes where the message's last "%lld" is; the message
           is never a format (it holds the .tx file's name, which may
           have a '%' of its own) */
        const char *slot = NULL;
        for (const char *q = strstr(msg, "%lld"); q; q = strstr(q + 1, "%lld"))
            slot = q;
        if (slot)
            st = fail(p->ctx, nomem ? TX_ERR_NOMEM : TX_ERR_RUN, "%.*s%lld%s", (int)(slot - msg), msg,
                      (long long)detail, slot + 4);
        else
            st = fail(p->ctx, nomem ? TX_ERR_NOMEM : TX_ERR_RUN, "%s", msg);
        goto out;
    }
    finish_bindings(p);
    clear_msg(p->ctx);
    p->ctx->status = TX_OK;
out:
    if (dims != dims_local)
        free(dims);
    if (from != from_local)
        free(from);
    if (args != args_local)
        free(args);
    return st;
}

typedef struct {
    tx_program *p;
    pipeline_options o;
    tx_arena *arena;
    pipeline_result r;
} emit_job;

static int emit_work(void *arg)
{
    emit_job *j = arg;
    return pipeline_run(j->p->S, j->arena, &j->o, &j->r);
}

const char *tx_backend(const tx_program *p, const char **detail)
{
    if (detail)
        *detail = p && p->code.jit ? p->code.jit->detail : NULL;
    return p && p->code.jit ? p->code.jit->backend : NULL;
}

char *tx_emit(tx_program *p, const tx_emit_options *opts, size_t *len)
{
    if (!p)
        return NULL;
    tx_emit_options def = {0};
    if (!opts)
        opts = &def;
    const char *name = opts->name ? opts->name : p->fn_name;
    if (opts->name && !emit_name_ok(opts->name)) {
        fail(p->ctx, TX_ERR_ARG, "'%s' cannot name the generated function: use a C identifier that is not a "
             "keyword or a C library name, and does not start with '_' or 'tx_'", opts->name);
        return NULL;
    }
    if (opts->mpi && opts->no_blas) {
        fail(p->ctx, TX_ERR_ARG, "the MPI target needs BLAS: it cannot be combined with no_blas");
        return NULL;
    }
    emit_job job = {.p = p, .arena = arena_new()};
    job.o = (pipeline_options){.output = opts->header ? PIPE_HEADER : PIPE_C,
                               .target = opts->mpi ? &target_mpi : opts->no_blas ? &target_c99 : &target_c99_blas,
                               .opt_level = p->opt_level, .fn_name = name,
                               /* the MPI target's C records statement times (FN_times) when P does */
                               .timing = opts->mpi && p->timing};
    int st = job.arena ? guarded(p->ctx, emit_work, &job, &job.r) : fail(p->ctx, TX_ERR_NOMEM, "out of memory");
    char *out = st == TX_OK ? job.r.c.p : NULL;
    if (out) {
        if (len)
            *len = job.r.c.len;
        job.r.c = (tx_buf){0}; /* the caller's now */
    }
    pipeline_result_free(&job.r);
    arena_free(job.arena);
    return out;
}

char *tx_emit_c(tx_program *p, size_t *len)
{
    return tx_emit(p, NULL, len);
}

typedef struct {
    tx_program *p;
    int dot;
    const char *after;
    tx_arena *a, *a0;
    tx_buf out;
    pipeline_result r, r0;
} graph_job;

/* The graph for the dims set so far (estimates for the others); with
   AFTER, the listings after that stage or each; else the optimised graph
   and the naive cost: the same program lowered, no passes. */
static int graph_work(void *arg)
{
    graph_job *j = arg;
    tx_program *p = j->p;
    pipeline_options o = {.output = PIPE_GRAPH, .target = &target_jit_tcc, .opt_level = p->opt_level,
                          .dim_values = p->dim_set, .dump_after = j->after, .dump_dot = j->dot,
                          .dump = &j->out};
    o.map_density = map_densities(p, p->dim_set, j->a);
    int st = pipeline_run(p->S, j->a, &o, &j->r);
    if (st != TX_OK || j->after)
        return st;
    pipeline_options o0 = o;
    o0.opt_level = 0;
    o0.target = &target_c99; /* as written: no BLAS */
    st = pipeline_run(p->S, j->a0, &o0, &j->r0);
    if (st != TX_OK) {
        j->r.diag.out = j->r0.diag.out; /* the message guarded() reports */
        j->r0.diag.out = (tx_buf){0};
        return st;
    }
    graph_print(j->r.g, &j->out, j->dot);
    if (!j->dot)
        buf_printf(&j->out, "# naive (as written, -O0): %.4g flop\n", graph_flops(j->r0.g));
    if (!j->dot && p->ctx->mpi_ranks > 0)
        mpi_plan_print(j->r.g, p->ctx->mpi_ranks, &j->out);
    return TX_OK;
}

char *tx_graph_after(tx_program *p, const char *pass, int dot, size_t *len)
{
    if (!p)
        return NULL;
    graph_job job = {.p = p, .dot = dot, .after = pass, .a = arena_new(), .a0 = arena_new()};
    int st = job.a && job.a0 ? guarded(p->ctx, graph_work, &job, &job.r)
                             : fail(p->ctx, TX_ERR_NOMEM, "out of memory");
    if (st == TX_OK && (job.out.oom || !job.out.p))
        st = fail(p->ctx, TX_ERR_NOMEM, "out of memory");
    pipeline_result_free(&job.r);
    pipeline_result_free(&job.r0);
    arena_free(job.a);
    arena_free(job.a0);
    if (st != TX_OK) {
        buf_free(&job.out);
        return NULL;
    }
    if (len)
        *len = job.out.len;
    return job.out.p;
}

char *tx_graph(tx_program *p, int dot, size_t *len)
{
    return tx_graph_after(p, NULL, dot, len);
}
