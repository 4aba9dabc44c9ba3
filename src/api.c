/*
 * api.c — libtensorexpr's public functions (tensorexpr.h).
 *
 * tx_compile runs the pipeline up to the optimised OpGraph and keeps it;
 * tx_run resolves the extents from the bindings, emits the JIT flavour
 * specialised on them, compiles it with libtcc (only when an extent
 * changed since the last compilation) and calls it. Nothing here prints
 * or exits: failures return a status and leave a message in the context.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "tx.h"
#include "runtime.h"

struct tx_ctx {
    tx_buf msg;
    int status;       /* of the last failure, or TX_OK */
    int opt_level;
    int timing;
    int threads;      /* TX_OPTION_THREADS */
};

typedef struct {
    void *data;
    int64_t shape[TX_MAX_MODES];
    int bound;
} binding;

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
    jit_module *jit;
    tx_arena *jit_arena;  /* the graph the JIT code was generated from */
    void *workspace;      /* the JIT code's intermediates */
    int64_t *jit_dims;    /* extents the JIT code is specialised on */
    int opt_level;
    int threads;          /* TX_OPTION_THREADS when compiled (0: the default) */
    emit_error *errs;
    int nerrs;
    int timing;
    double *times;        /* per statement */
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
    if (c)
        c->opt_level = 2;
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
    jit_free(p->jit);
    free(p->workspace);
    arena_free(p->jit_arena);
    arena_free(p->arena);
    free(p->text);
    free(p);
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
    p->src.name = arena_strndup(p->arena, filename ? filename : "<input>",
                                strlen(filename ? filename : "<input>"));
    p->src.text = p->text;
    p->src.len = len;
    tx_diag diag = {.src = &p->src};
    jmp_buf oom;
    if (setjmp(oom)) {
        buf_free(&diag.out);
        tx_program_free(p);
        fail(ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    arena_on_oom(p->arena, &oom);

    cst_program *cst = parse_program(&p->src, p->arena, &diag);
    if (cst)
        p->S = sema_check(cst, p->arena, &diag);
    graph_spec spec = {.blas = 1};
    if (p->S)
        p->g = lower_program(p->S, p->arena, &diag, &spec);
    if (!p->g || diag.nerrors) {
        if (!diag.nerrors)
            diag_error(&diag, (tx_span){0, 0, 0, 0}, "internal error: lowering failed");
        set_msg(ctx, "%s", diag.out.p ? diag.out.p : "");
        ctx->status = diag.out.oom ? TX_ERR_NOMEM : TX_ERR_COMPILE;
        buf_free(&diag.out);
        arena_on_oom(p->arena, NULL);
        tx_program_free(p);
        return NULL;
    }
    char msg[512];
    if (opt_run(p->g, ctx->opt_level, msg, sizeof msg) < 0)
        tx_assert_fail(msg, __FILE__, __LINE__); /* a broken graph is our bug */
    buf_free(&diag.out);

    sema_program *S = p->S;
    p->fn_name = function_name(p->arena, filename);
    p->bind = arena_alloc(p->arena, sizeof(binding) * (size_t)(S->ntensors + 1));
    p->maps = arena_alloc(p->arena, sizeof(tx_sparse_map *) * (size_t)(S->nmaps + 1));
    p->dim_set = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
    p->jit_dims = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(S->nsym_dims + 1));
    for (int i = 0; i < S->nsym_dims; i++)
        p->dim_set[i] = -1;
    p->timing = ctx->timing;
    p->opt_level = ctx->opt_level;
    p->threads = ctx->threads;
    p->times = arena_alloc(p->arena, sizeof(double) * (size_t)(S->nassign + 1));
    p->stmt_lines = arena_alloc(p->arena, sizeof(int) * (size_t)(S->nassign + 1));
    for (cst_stmt *st = S->cst->first; st; st = st->next)
        if (st->kind == STMT_ASSIGN || st->kind == STMT_LET_TENSOR)
            p->stmt_lines[st->index] = (int)st->span.line;
    p->dim_names = arena_alloc(p->arena, sizeof(char **) * (size_t)(S->ntensors + 1));
    p->const_ext = arena_alloc(p->arena, sizeof(int64_t *) * (size_t)(S->ntensors + 1));
    for (int i = 0; i < S->ntensors; i++) {
        sym *t = S->tensors[i];
        p->dim_names[i] = arena_alloc(p->arena, sizeof(char *) * (size_t)(t->rank + 1));
        p->const_ext[i] = arena_alloc(p->arena, sizeof(int64_t) * (size_t)(t->rank + 1));
        for (int m = 0; m < t->rank; m++) {
            p->dim_names[i][m] = t->ext[m].dim >= 0 ? S->dims[t->ext[m].dim]->name : NULL;
            p->const_ext[i][m] = t->ext[m].dim >= 0 ? -1 : t->ext[m].value;
        }
    }
    arena_on_oom(p->arena, NULL);
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

int tx_bind(tx_program *p, const char *tensor, void *data, int ndim, const int64_t *shape)
{
    if (!p)
        return TX_ERR_ARG;
    if (!tensor || !data || (ndim > 0 && !shape))
        return fail(p->ctx, TX_ERR_ARG, "tx_bind: NULL argument");
    int k = find_tensor(p, tensor);
    if (k < 0) {
        sym *s = sema_lookup(p->S, tensor);
        if (s && s->kind == SYM_TENSOR)
            return fail(p->ctx, TX_ERR_ARG, "'%s' is a tmp tensor, owned by the program; it cannot be bound",
                        tensor);
        return fail(p->ctx, TX_ERR_ARG, "the program has no tensor '%s'", tensor);
    }
    sym *t = p->S->tensors[k];
    if (ndim != t->rank)
        return fail(p->ctx, TX_ERR_BIND, "'%s' has %d mode%s; the array has %d", tensor, t->rank,
                    t->rank == 1 ? "" : "s", ndim);
    for (int m = 0; m < ndim; m++) {
        if (shape[m] < 0)
            return fail(p->ctx, TX_ERR_BIND, "'%s': extent %lld of mode %d is negative", tensor,
                        (long long)shape[m], m);
        if (t->ext[m].dim < 0 && shape[m] != t->ext[m].value)
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
    p->bind[k].bound = 1;
    p->bind[k].data = data;
    if (ndim > 0)
        memcpy(p->bind[k].shape, shape, sizeof(int64_t) * (size_t)ndim);
    return TX_OK;
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
    info->dtype = t->dt == DT_F32 ? TX_F32 : TX_F64;
    info->ndim = t->rank;
    info->dims = p->dim_names[i];
    info->extents = p->const_ext[i];
    return TX_OK;
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
        if (t->ext[m].dim < 0) {
            shape[m] = t->ext[m].value;
            continue;
        }
        int d = p->S->dims[t->ext[m].dim]->index;
        if (dims[d] < 0)
            st = fail(p->ctx, TX_ERR_BIND, "dim '%s' of '%s' is unknown: bind a tensor that has it, or set it",
                      p->S->sym_dims[d]->name, tensor);
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

/* The program's graph lowered again into a new arena (*ARENA, which the
   caller frees) and optimised for extents DIMS (NULL: estimates), with or
   without BLAS calls; NULL if out of memory. */
static graph *specialise(tx_program *p, const int64_t *dims, int blas, tx_arena **arena)
{
    tx_arena *a = arena_new();
    if (!a)
        return NULL;
    jmp_buf oom;
    if (setjmp(oom)) {
        arena_free(a);
        return NULL;
    }
    arena_on_oom(a, &oom);
    graph_spec spec = {.blas = blas, .dim_values = dims};
    /* how full the bound sparse maps are, for the contraction order */
    if (dims && p->S->nmaps) {
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
        spec.map_density = dens;
    }
    tx_diag diag = {.src = &p->src};
    graph *g = lower_program(p->S, a, &diag, &spec); /* copies the spec's arrays */
    buf_free(&diag.out);
    if (!g) { /* it lowered once already: only memory can fail now */
        arena_free(a);
        return NULL;
    }
    char msg[512];
    if (opt_run(g, p->opt_level, msg, sizeof msg) < 0)
        tx_assert_fail(msg, __FILE__, __LINE__);
    arena_on_oom(a, NULL);
    *arena = a;
    return g;
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
    int64_t *dims = malloc(sizeof(int64_t) * (size_t)(n + 1));
    const char **from = malloc(sizeof(char *) * (size_t)(n + 1));
    void **args = malloc(sizeof(void *) * (size_t)(S->ntensors + S->nmaps + 4));
    int st = TX_OK;
    if (!dims || !from || !args) {
        st = fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = resolve_dims(p, -1, dims, from);
    for (int i = 0; st == TX_OK && i < n; i++)
        if (dims[i] < 0)
            st = fail(p->ctx, TX_ERR_BIND, "dim '%s' is unknown: bind a tensor that has it, or set it",
                      S->sym_dims[i]->name);
    if (st != TX_OK)
        goto out;
    if (p->jit && memcmp(dims, p->jit_dims, sizeof(int64_t) * (size_t)n) != 0) {
        jit_free(p->jit);
        p->jit = NULL;
        arena_free(p->jit_arena);
        p->jit_arena = NULL;
    }
    p->jit_seconds = 0;
    if (!p->jit) {
        double t0 = tx_rt_now();
        /* lower again and optimise knowing the extents: the contraction
           order and the kernels are chosen for these sizes */
        graph *g = specialise(p, dims, 1, &p->jit_arena);
        if (!g) {
            st = fail(p->ctx, TX_ERR_NOMEM, "out of memory");
            goto out;
        }
        size_t ws = 0;
        emit_options o = {.fn_name = p->fn_name, .dim_values = dims, .timing = p->timing, .workspace = &ws};
        tx_buf src = {0};
        if (emit_c(g, &target_jit_tcc, &o, &src, &p->errs, &p->nerrs) < 0) {
            buf_free(&src);
            st = fail(p->ctx, TX_ERR_NOMEM, "out of memory");
            goto out;
        }
        tx_buf err = {0};
        p->jit = jit_compile(src.p, &err);
        buf_free(&src);
        if (!p->jit) {
            st = fail(p->ctx, TX_ERR_JIT, "internal error: the generated code did not compile:\n%s",
                      err.p ? err.p : "");
            buf_free(&err);
            goto out;
        }
        buf_free(&err);
        memcpy(p->jit_dims, dims, sizeof(int64_t) * (size_t)n);
        /* the intermediates' memory, planned by liveness at emission, is
           allocated once and reused by every run until extents change */
        free(p->workspace);
        p->workspace = ws ? malloc(ws) : NULL;
        if (ws && !p->workspace) {
            jit_free(p->jit);
            p->jit = NULL;
            st = fail(p->ctx, TX_ERR_NOMEM, "out of memory (a workspace of %zu bytes)", ws);
            goto out;
        }
        p->jit_seconds = tx_rt_now() - t0;
    }
    for (int k = 0; k < S->ntensors; k++)
        args[k] = p->bind[k].data;
    int64_t detail = 0;
    for (int k = 0; k < S->nmaps; k++)
        args[S->ntensors + k] = (void *)p->maps[k];
    int base = S->ntensors + S->nmaps;
    args[base] = p->times;
    args[base + 1] = p->workspace;
    args[base + 2] = &detail;
    memset(p->times, 0, sizeof(double) * (size_t)S->nassign);
    /* the program's kernels and BLAS/LAPACK share one thread count: they
       run one after the other, never at once */
    tx_rt_set_threads(p->threads);
    int nthreads = tx_rt_threads();
    if (openblas_get_num_threads() != nthreads)
        openblas_set_num_threads(nthreads);
    int code = jit_entry_point(p->jit)(args);
    if (code != 0) {
        const char *msg = "unknown error";
        for (int i = 0; i < p->nerrs; i++)
            if (p->errs[i].code == code)
                msg = p->errs[i].msg;
        if (strstr(msg, "%lld"))
            st = fail(p->ctx, code == 1 ? TX_ERR_NOMEM : TX_ERR_RUN, msg, (long long)detail);
        else
            st = fail(p->ctx, code == 1 ? TX_ERR_NOMEM : TX_ERR_RUN, "%s", msg);
        goto out;
    }
    set_msg(p->ctx, "%s", "");
    p->ctx->status = TX_OK;
out:
    free(dims);
    free(from);
    free(args);
    return st;
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
    const tx_target *T = opts->no_blas ? &target_c99 : &target_c99_blas;
    emit_options o = {.fn_name = name};
    tx_buf out = {0};
    tx_arena *a = NULL;
    graph *g = specialise(p, NULL, T->blas, &a);
    if (!g) {
        fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int k = 0; !T->blas && k < g->n; k++)
        if (g->v[k]->op == OP_LINALG) {
            tx_buf d = {0};
            tx_diag diag = {.src = &p->src};
            static const char *names[] = {"?", "cholesky", "inv", "pow", "solve", "eigh", "qr", "svd", "slice"};
            diag_error(&diag, g->v[k]->span, "'%s' needs LAPACK, which --no-blas leaves out",
                       names[g->v[k]->la]);
            fail(p->ctx, TX_ERR_COMPILE, "%s", diag.out.p ? diag.out.p : "");
            buf_free(&diag.out);
            buf_free(&d);
            arena_free(a);
            return NULL;
        }
    int r = opts->header ? emit_header(g, T, &o, &out) : emit_c(g, T, &o, &out, NULL, NULL);
    arena_free(a);
    if (r < 0 || !out.p) {
        buf_free(&out);
        fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (len)
        *len = out.len;
    return out.p;
}

char *tx_emit_c(tx_program *p, size_t *len)
{
    return tx_emit(p, NULL, len);
}

char *tx_graph(tx_program *p, int dot, size_t *len)
{
    if (!p)
        return NULL;
    tx_buf out = {0};
    /* the graph for the dims set so far (estimates for the others), and
       the naive cost: the same program lowered, no passes */
    tx_arena *a = NULL, *a0 = NULL;
    graph *g = specialise(p, p->dim_set, 1, &a);
    int level = p->opt_level;
    p->opt_level = 0;
    graph *g0 = specialise(p, p->dim_set, 0, &a0);
    p->opt_level = level;
    if (!g || !g0) {
        arena_free(a);
        arena_free(a0);
        fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    graph_print(g, &out, dot);
    if (!dot)
        buf_printf(&out, "# naive (as written, -O0): %.4g flop\n", graph_flops(g0));
    arena_free(a);
    arena_free(a0);
    if (out.oom || !out.p) {
        buf_free(&out);
        fail(p->ctx, TX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (len)
        *len = out.len;
    return out.p;
}
