/*
 * emit.c — C source from the OpGraph, in two flavours from one emitter:
 *
 *  - standalone (tx(5) §8): `int FN(dims..., tensors...)`, `FN_error()`,
 *    standard headers only; the user's compiler builds it.
 *  - JIT: `int tx_entry(void *const *args)` for libtcc, with the extents
 *    written in as constants (the kernel is specialised on them), no
 *    headers (libtcc's are slow and cblas.h does not parse), and the few
 *    runtime symbols declared by hand and registered by jit.c.
 *
 * Every value is one loop nest over flat, row-major index arithmetic
 * (libtcc has no VLAs worth using). Loop variables are the statement's
 * labels. Every name from the .tx file is mangled (mangle_name): tensors
 * t_, dims d_, labels l_; generated names start with tx_.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tx.h"
#include "prims.h"

/* An open entry loop of a sparse map (see emitter.entries). */
typedef struct {
    int id, ndst, depth;
    const int *dst;
    const tx_extent *ext;
    size_t decode_at[TX_MAX_MODES], decode_end[TX_MAX_MODES]; /* its decode lines in out */
} entry_ctx;

typedef struct {
    graph *g;
    const emit_options *o;
    tx_buf *out;
    emit_error *errs;
    int nerrs, caperrs;
    int uses_pow, uses_fmax, uses_fmin, uses_blas, uses_blocks, uses_linalg, uses_maps;
    /* the entry loops of sparse maps open around the code being emitted:
       a tensor whose last modes are a map's targets, in order, is
       addressed with the entry's flat target index (no divisions) */
    entry_ctx entries[16];
    int nentries;
} emitter;

int emit_name_ok(const char *s)
{
    /* C keywords, and what the headers a generated file includes declare */
    static const char *taken[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
        "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
        "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
        "typedef", "union", "unsigned", "void", "volatile", "while", "main",
        "malloc", "calloc", "realloc", "free", "abort", "exit", "atexit", "getenv", "system", "abs",
        "labs", "div", "ldiv", "rand", "srand", "atof", "atoi", "atol", "strtod", "strtol", "qsort",
        "bsearch", "exp", "log", "sqrt", "fabs", "sin", "cos", "tan", "tanh", "sinh", "cosh", "pow",
        "floor", "ceil", "fmod", "fmax", "fmin", "log10", "log2", "exp2", "atan", "atan2", "asin",
        "acos", "round", "trunc", "hypot", "cbrt", "erf", "gamma", "NULL", "size_t", "wchar_t",
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
        "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", NULL};
    /* math.h functions come with f and l variants (sqrtf, expl, ...) */
    static const char *math[] = {
        "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh",
        "tanh", "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb",
        "modf", "scalbn", "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma",
        "tgamma", "ceil", "floor", "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround",
        "trunc", "fmod", "remainder", "remquo", "copysign", "nan", "nextafter", "nexttoward", "fdim",
        "fmax", "fmin", "fma", "j0", "j1", "jn", "y0", "y1", "yn", "gamma", "significand", "drem",
        "exp10", "pow10", "sincos", "finite", "scalb", NULL};
    static const char *others[] = {
        "printf", "fprintf", "sprintf", "snprintf", "puts", "putchar", "fputs", "scanf", "sscanf", "fopen",
        "fclose", "fread", "fwrite", "memcpy", "memmove", "memset", "memcmp", "strlen", "strcpy", "strncpy",
        "strcmp", "strncmp", "strcat", "strchr", "strstr", "aligned_alloc", "posix_memalign", "llabs",
        "lldiv", "strtof", "strtold", "strtoll", "strtoul", "strtoull", "mblen", "mbtowc", "wctomb",
        "mbstowcs", "wcstombs", "quick_exit", "at_quick_exit", "_Exit", "errno", "assert", "alloca",
        "openblas_set_num_threads", "openblas_get_num_threads", "goto_set_num_threads", "isnan", "isinf",
        "isfinite", "isnormal", "fpclassify", "signbit", "isgreater", "isless", "isunordered", "HUGE_VAL",
        "INFINITY", "NAN", "FP_NAN", "M_PI", "M_E", "EOF", "BUFSIZ", "INT64_MAX", "INT64_MIN", "SIZE_MAX",
        "RAND_MAX", "EXIT_SUCCESS", "EXIT_FAILURE", NULL};
    for (int i = 0; s && math[i]; i++) {
        size_t n = strlen(math[i]);
        if (strncmp(s, math[i], n) == 0 && (s[n] == 0 || ((s[n] == 'f' || s[n] == 'l') && s[n + 1] == 0)))
            return 0;
    }
    for (int i = 0; s && others[i]; i++)
        if (strcmp(s, others[i]) == 0)
            return 0;
    if (!s || !*s || (*s >= '0' && *s <= '9') || *s == '_' || strncmp(s, "tx_", 3) == 0 ||
        strncmp(s, "lapack", 6) == 0 || strncmp(s, "openblas", 8) == 0 ||
        strncmp(s, "TX_", 3) == 0 || strncmp(s, "cblas_", 6) == 0 || strncmp(s, "Cblas", 5) == 0 ||
        strncmp(s, "LAPACK", 6) == 0)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    for (int i = 0; taken[i]; i++)
        if (strcmp(s, taken[i]) == 0)
            return 0;
    return 1;
}

void mangle_name(tx_buf *out, const char *prefix, const char *name)
{
    static const char hex[] = "0123456789abcdef";
    buf_puts(out, prefix);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        unsigned c = *p;
        if (c == '_')
            buf_put(out, "__", 2);
        else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            buf_put(out, (const char *)p, 1);
        else {
            char e[3] = {'_', hex[c >> 4], hex[c & 15]};
            buf_put(out, e, 3);
        }
    }
}

static sema_program *SP(emitter *E) { return E->g->S; }

static void put(emitter *E, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(E->out, fmt, ap);
    va_end(ap);
}

static void num_literal(tx_buf *o, double x)
{
    if (isnan(x))
        buf_puts(o, "(0.0/0.0)");
    else if (isinf(x))
        buf_puts(o, x > 0 ? "(1.0/0.0)" : "(-1.0/0.0)");
    else {
        char b[64];
        snprintf(b, sizeof b, "%.17g", x);
        buf_puts(o, b);
        if (!strpbrk(b, ".eE"))
            buf_puts(o, ".0");
    }
}

/* A C string literal holding S, with everything outside printable ASCII
   (and quotes, backslashes, '?') escaped in octal. */
static void string_literal(tx_buf *o, const char *s)
{
    buf_puts(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '?')
            buf_put(o, (const char *)p, 1);
        else
            buf_printf(o, "\\%03o", *p);
    }
    buf_puts(o, "\"");
}

static int add_error(emitter *E, const char *msg)
{
    for (int i = 0; i < E->nerrs; i++)
        if (strcmp(E->errs[i].msg, msg) == 0)
            return E->errs[i].code;
    if (E->nerrs == E->caperrs) {
        int cap = E->caperrs ? E->caperrs * 2 : 8;
        emit_error *v = arena_alloc(E->g->arena, sizeof *v * (size_t)cap);
        if (E->nerrs)
            memcpy(v, E->errs, sizeof *v * (size_t)E->nerrs);
        E->errs = v;
        E->caperrs = cap;
    }
    E->errs[E->nerrs].code = E->nerrs + 1;
    E->errs[E->nerrs].msg = arena_strndup(E->g->arena, msg, strlen(msg));
    return ++E->nerrs;
}

/* The C expression of extent X. */
static void put_extent(emitter *E, tx_extent x)
{
    if (x.dim == EXT_DERIVED) {
        const dext *d = &SP(E)->derived[x.value];
        if (E->o->jit) {
            put(E, "%lld", (long long)sema_extent_eval(SP(E), x, E->o->dim_values));
            return;
        }
        if (d->kind == 1) {
            put(E, "((");
            put_extent(E, d->a);
            put(E, ") < (");
            put_extent(E, d->b);
            put(E, ") ? (");
            put_extent(E, d->a);
            put(E, ") : (");
            put_extent(E, d->b);
            put(E, "))");
            return;
        }
        put(E, "(%lld", (long long)d->c);
        for (int i = 0; i < d->nterm; i++) {
            put(E, " %c %lld*", d->coef[i] < 0 ? '-' : '+', (long long)(d->coef[i] < 0 ? -d->coef[i] : d->coef[i]));
            mangle_name(E->out, "d_", SP(E)->dims[d->dim[i]]->name);
        }
        put(E, ")");
        return;
    }
    if (x.dim < 0) {
        put(E, "%lld", (long long)x.value);
        return;
    }
    sym *d = SP(E)->dims[x.dim];
    if (E->o->jit)
        put(E, "%lld", (long long)E->o->dim_values[d->index]);
    else
        mangle_name(E->out, "d_", d->name);
}

static void put_label(emitter *E, int label)
{
    mangle_name(E->out, "l_", E->g->label_names[label]);
}

static void put_var(emitter *E, int var)
{
    mangle_name(E->out, "t_", SP(E)->vars[var]->name);
}

/* VAR's element at the loop variables of LABELS (its modes in order). */
static void put_horner(emitter *E, int n, const int *labels, const int64_t *chips, const tx_extent *ext);

static void put_var_at(emitter *E, int var, const int *labels, const tx_extent *ext, int rank)
{
    put_var(E, var);
    put(E, "[");
    put_horner(E, rank, labels, NULL, ext);
    put(E, "]");
}

static const char *ctype(dtype t) { return t == DT_F32 ? "float" : "double"; }

/* Is V stored in a buffer of its own (computed by a loop nest)? */
static int is_computed(const g_value *v)
{
    return (v->op == OP_CONTRACT || v->op == OP_ADD || v->op == OP_MAP || v->op == OP_REDUCE ||
            v->op == OP_SCAN || v->op == OP_SLICE || v->op == OP_PART || (v->op == OP_LINALG && v->nout == 1)) &&
           !v->inlined && !v->dead && !(v->blas && v->blas->store);
}

static void put_elementwise(emitter *E, const g_value *v);

/* Row-major offset of V's element at its labels' loop variables. */
/* The row-major offset of the element at LABELS (a label, or -1 for the
   integer CHIPS[i]) of a buffer with extents EXT. */
static void put_horner(emitter *E, int n, const int *labels, const int64_t *chips, const tx_extent *ext)
{
    if (n == 0) {
        put(E, "0");
        return;
    }
    int lead = n;
    int entry = -1;
    for (int k = E->nentries - 1; k >= 0 && entry < 0; k--) {
        int q = E->entries[k].ndst, ok = q >= 1 && q <= n;
        for (int i = 0; ok && i < q; i++)
            ok = labels[n - q + i] == E->entries[k].dst[i] && ext_eq(ext[n - q + i], E->entries[k].ext[i]);
        if (ok) {
            entry = k;
            lead = n - q;
        }
    }
    if (entry >= 0 && lead == 0) {
        put(E, "tx_t%d", E->entries[entry].id);
        return;
    }
    if (entry >= 0)
        put(E, "(");
    for (int i = 0; i < lead - 1; i++)
        put(E, "(");
    for (int i = 0; i < lead; i++) {
        if (i) {
            put(E, ")*");
            put_extent(E, ext[i]);
            put(E, " + ");
        }
        if (labels[i] >= 0)
            put_label(E, labels[i]);
        else
            put(E, "%lld", (long long)chips[i]);
    }
    if (entry >= 0) { /* (leading offset) * (the targets' block) + the flat target index */
        put(E, ")");
        for (int i = lead; i < n; i++) {
            put(E, "*");
            put_extent(E, ext[i]);
        }
        put(E, " + tx_t%d", E->entries[entry].id);
    }
}

static void put_offset_labels(emitter *E, const g_value *v)
{
    put_horner(E, v->rank, v->label, NULL, v->ext);
}

/* The C expression reading value V's element at the current loop indices. */
static void put_access(emitter *E, const g_value *v)
{
    if (v->inlined) { /* fused: computed right here, inside the user's loops */
        put(E, "(");
        put_elementwise(E, v);
        put(E, ")");
        return;
    }
    switch (v->op) {
    case OP_CONST:
        num_literal(E->out, v->coef);
        return;
    case OP_INPUT:
    case OP_STORE: /* a scalar variable; views cover the rest */
        TX_ASSERT(v->rank == 0);
        put_var(E, v->var);
        put(E, "[0]");
        return;
    case OP_INDEX: {
        const g_value *w = v->in[0];
        put_var(E, w->var);
        put(E, "[");
        put_horner(E, w->rank, v->idx_label, v->idx_chip, w->ext);
        put(E, "]");
        return;
    }
    default:
        put(E, "tx_v%d[", v->id);
        put_offset_labels(E, v);
        put(E, "]");
        return;
    }
}

/* "for (int64_t l_x = 0; l_x < EXT; l_x++)", opening a brace if BRACE. */
static void put_loop_head(emitter *E, int label, tx_extent ext, int depth, int brace)
{
    put(E, "%*sfor (int64_t ", 4 * depth, "");
    put_label(E, label);
    put(E, " = 0; ");
    put_label(E, label);
    put(E, " < ");
    put_extent(E, ext);
    put(E, "; ");
    put_label(E, label);
    put(E, brace ? "++) {\n" : "++)\n");
}

static void open_loops(emitter *E, const int *labels, const tx_extent *ext, int n, int *depth)
{
    for (int i = 0; i < n; i++) {
        put_loop_head(E, labels[i], ext[i], *depth, 0);
        (*depth)++;
    }
}

/* The elementwise power X^P as C: repeated products for small integers. */
static void put_pow(emitter *E, const g_value *x, double p)
{
    if (p == (double)(int)p && p >= -8 && p <= 8 && p != 0) {
        int n = p < 0 ? -(int)p : (int)p;
        put(E, p < 0 ? "1.0 / (" : "(");
        for (int i = 0; i < n; i++) {
            if (i)
                put(E, " * ");
            put(E, "(double)");
            put_access(E, x);
        }
        put(E, ")");
    } else if (p == 0) {
        put(E, "1.0");
    } else {
        E->uses_pow = 1;
        put(E, "pow(");
        put_access(E, x);
        put(E, ", ");
        num_literal(E->out, p);
        put(E, ")");
    }
}

/* The summand of a contraction: the product of its operands. */
static void put_product(emitter *E, const g_value *v)
{
    put(E, "(double)");
    for (int i = 0; i < v->nin; i++) {
        if (i == 0 && v->coef_in[i] < 0)
            put(E, "1.0 / ");
        else if (i)
            put(E, v->coef_in[i] < 0 ? " / " : " * ");
        put_access(E, v->in[i]);
    }
}

/* The C name of an elementwise function applied to double arguments. */
static const char *map_c_name(emitter *E, map_fn f)
{
    switch (f) {
    case MAP_EXP: return "exp";
    case MAP_LOG: return "log";
    case MAP_SQRT: return "sqrt";
    case MAP_ABS: return "fabs";
    case MAP_SIN: return "sin";
    case MAP_COS: return "cos";
    case MAP_TANH: return "tanh";
    case MAP_MAX: E->uses_fmax = 1; return "tx_fmax";
    case MAP_MIN: E->uses_fmin = 1; return "tx_fmin";
    default: return "?";
    }
}

/* The value of elementwise V (map, linear combination, or a product with
   nothing summed) at the current loop indices, as a double expression. */
static void put_elementwise(emitter *E, const g_value *v)
{
    switch (v->op) {
    case OP_CONTRACT:
        if (v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put_product(E, v);
        break;
    case OP_ADD:
        for (int i = 0; i < v->nin; i++) {
            double c = v->coef_in[i];
            if (i || c < 0)
                put(E, c < 0 ? " - " : " + ");
            if (c != 1 && c != -1) {
                num_literal(E->out, c < 0 ? -c : c);
                put(E, " * ");
            }
            put(E, "(double)");
            put_access(E, v->in[i]);
        }
        break;
    case OP_MAP:
        if (v->fn == MAP_POW) {
            put_pow(E, v->in[0], v->fn_arg);
            break;
        }
        put(E, "%s((double)", map_c_name(E, v->fn));
        put_access(E, v->in[0]);
        if (v->nin == 2) {
            put(E, ", (double)");
            put_access(E, v->in[1]);
        }
        put(E, ")");
        break;
    default:
        TX_ASSERT(!"not an elementwise value");
    }
}

/* The identity of a reduce/scan operator, and the update acc = acc op x. */
static const char *reduce_init(reduce_op r)
{
    switch (r) {
    case RED_ADD: return "0.0";
    case RED_MUL: return "1.0";
    case RED_MAX: return "(-1.0/0.0)";
    default: return "(1.0/0.0)";
    }
}

static void put_reduce_update(emitter *E, reduce_op r, const g_value *x)
{
    switch (r) {
    case RED_ADD: put(E, "tx_acc += (double)"); put_access(E, x); break;
    case RED_MUL: put(E, "tx_acc *= (double)"); put_access(E, x); break;
    case RED_MAX:
        E->uses_fmax = 1;
        put(E, "tx_acc = tx_fmax((double)");
        put_access(E, x);
        put(E, ", tx_acc)");
        break;
    default:
        E->uses_fmin = 1;
        put(E, "tx_acc = tx_fmin((double)");
        put_access(E, x);
        put(E, ", tx_acc)");
        break;
    }
}

/* Distinct labels of V's operands that are in SET, in order of appearance. */
static int labels_in(const g_value *v, labelset set, int *labels, tx_extent *ext)
{
    int n = 0;
    for (int i = 0; i < v->nin; i++)
        for (int m = 0; m < v->in[i]->rank; m++) {
            int l = v->in[i]->label[m], seen = 0;
            if (!ls_has(&set, l))
                continue;
            for (int k = 0; k < n; k++)
                seen |= labels[k] == l;
            if (!seen) {
                labels[n] = l;
                ext[n++] = v->in[i]->ext[m];
            }
        }
    return n;
}


static void emit_compute_sparse(emitter *E, const g_value *v);
static void emit_store_sparse(emitter *E, const g_value *s);
static void put_map(emitter *E, int map);
static void put_map_index(emitter *E, const sym *m, int side);
static const char *reduce_init(reduce_op r);
static void put_reduce_update(emitter *E, reduce_op r, const g_value *x);

static int blk_supported(const g_value *v, int *need, int base);
static void emit_block_loop(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                            int target_var, const g_value *temp, dtype tdt, int op);

static void emit_compute(emitter *E, const g_value *v)
{
    if (v->nmaps && v->op != OP_SCAN) {
        emit_compute_sparse(E, v);
        return;
    }
    if ((v->op == OP_MAP || v->op == OP_ADD || (v->op == OP_CONTRACT && ls_empty(v->summed))) && v->rank > 0) {
        /* an elementwise value: blocked, through the primitives */
        g_value root = *v;
        int need = 0;
        root.inlined = 1;
        if (blk_supported(&root, &need, 0)) {
            put(E, "    { /* %%%d */\n", v->id);
            emit_block_loop(E, &root, v->label, v->ext, v->rank, -1, v, v->dt, 0);
            put(E, "    }\n");
            return;
        }
    }
    int depth = 1;
    int summed[TX_MAX_LABELS], nsum = 0;
    tx_extent sext[TX_MAX_LABELS];
    if (v->op == OP_CONTRACT || v->op == OP_REDUCE)
        nsum = labels_in(v, v->summed, summed, sext);
    put(E, "%*s{ /* %%%d */\n", 4 * depth, "", v->id);
    depth++;
    if (v->op == OP_SCAN) {
        /* every label but the scanned one outside; the scan carries tx_acc */
        int outer[TX_MAX_MODES], no = 0, pos = 0;
        tx_extent oext[TX_MAX_MODES];
        for (int i = 0; i < v->rank; i++) {
            if (v->label[i] == v->scan_label) {
                pos = i;
                continue;
            }
            outer[no] = v->label[i];
            oext[no++] = v->ext[i];
        }
        open_loops(E, outer, oext, no, &depth);
        put(E, "%*s{\n", 4 * depth, "");
        depth++;
        put(E, "%*sdouble tx_acc = %s;\n", 4 * depth, "", reduce_init(v->red));
        put(E, "%*sfor (int64_t ", 4 * depth, "");
        put_label(E, v->scan_label);
        if (v->scan_reverse) {
            put(E, " = ");
            put_extent(E, v->ext[pos]);
            put(E, " - 1; ");
            put_label(E, v->scan_label);
            put(E, " >= 0; ");
            put_label(E, v->scan_label);
            put(E, "--) {\n");
        } else {
            put(E, " = 0; ");
            put_label(E, v->scan_label);
            put(E, " < ");
            put_extent(E, v->ext[pos]);
            put(E, "; ");
            put_label(E, v->scan_label);
            put(E, "++) {\n");
        }
        put(E, "%*s", 4 * depth + 4, "");
        if (v->nmaps) { /* a sparse map: only its entries enter the scan; the others read as zero */
            E->uses_maps = 1;
            put(E, "if (");
            for (int k = 0; k < v->nmaps; k++) {
                const sym *m = SP(E)->maps[v->maps[k]];
                put(E, "%stx_rt_map_has(", k ? " && " : "");
                put_map(E, v->maps[k]);
                put(E, ", ");
                put_map_index(E, m, 0);
                put(E, ", ");
                put_map_index(E, m, 1);
                put(E, ")");
            }
            put(E, ") {\n%*s", 4 * depth + 8, "");
            put_reduce_update(E, v->red, v->in[0]);
            put(E, ";\n%*stx_v%d[", 4 * depth + 8, "", v->id);
            put_offset_labels(E, v);
            put(E, "] = (%s)tx_acc;\n%*s} else\n%*stx_v%d[", ctype(v->dt), 4 * depth + 4, "", 4 * depth + 8, "",
                v->id);
            put_offset_labels(E, v);
            put(E, "] = 0;\n%*s}\n", 4 * depth, "");
        } else {
        put_reduce_update(E, v->red, v->in[0]);
        put(E, ";\n%*stx_v%d[", 4 * depth + 4, "", v->id);
        put_offset_labels(E, v);
        put(E, "] = (%s)tx_acc;\n%*s}\n", ctype(v->dt), 4 * depth, "");
        }
        depth--;
        put(E, "%*s}\n    }\n", 4 * depth, "");
        return;
    }
    open_loops(E, v->label, v->ext, v->rank, &depth);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    int reduces = (v->op == OP_CONTRACT && nsum) || v->op == OP_REDUCE;
    if (reduces) {
        put(E, "%*sdouble tx_acc = %s;\n", 4 * depth, "", v->op == OP_REDUCE ? reduce_init(v->red) : "0.0");
        int d2 = depth;
        open_loops(E, summed, sext, nsum, &d2);
        put(E, "%*s", 4 * d2, "");
        if (v->op == OP_REDUCE)
            put_reduce_update(E, v->red, v->in[0]);
        else {
            put(E, "tx_acc += ");
            put_product(E, v);
        }
        put(E, ";\n");
    }
    put(E, "%*stx_v%d[", 4 * depth, "", v->id);
    put_offset_labels(E, v);
    put(E, "] = (%s)(", ctype(v->dt));
    if (reduces) {
        if (v->op == OP_CONTRACT && v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put(E, "tx_acc");
    } else
        put_elementwise(E, v);
    put(E, ");\n");
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
    put(E, "    }\n");
}


/* ---- BLAS calls (plans made by pass_blas.c) ---- */

/* Position of the last mode of label group G in S (the plan made sure
   the group is consecutive there). */
static int last_of(const mode_seq *s, const int *G, int n)
{
    int last = -1;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < s->n; p++)
            if (s->label[p] == G[i] && p > last)
                last = p;
    return last;
}

/* The stride of mode P of S: the product of the extents after it. */
static void put_stride(emitter *E, const mode_seq *s, int p)
{
    int any = 0;
    for (int i = p + 1; i < s->n; i++) {
        put(E, any ? "*" : "(");
        put_extent(E, s->ext[i]);
        any = 1;
    }
    put(E, any ? ")" : "1");
}

/* max(1, stride): BLAS wants a leading dimension of at least 1. */
static void put_ld(emitter *E, const mode_seq *s, int p)
{
    put(E, "TX_LD(");
    put_stride(E, s, p);
    put(E, ")");
}

/* The product of the extents of the labels of G (as found in S). */
static void put_group_size(emitter *E, const mode_seq *s, const int *G, int n)
{
    if (n == 0) {
        put(E, "1");
        return;
    }
    put(E, "(int)(");
    for (int i = 0; i < n; i++) {
        if (i)
            put(E, "*");
        for (int p = 0; p < s->n; p++)
            if (s->label[p] == G[i]) {
                put_extent(E, s->ext[p]);
                break;
            }
    }
    put(E, ")");
}

/* y = M v as one gemv: M (layout SM) has the output's labels R and the
   summed labels K; the vector (layout SV) has K, its last at VK; the
   output's last R mode is at CR of SC. Row- or column-major by which of
   M's groups is contiguous. */
static void put_gemv(emitter *E, const char *x, const mode_seq *sm, const int *R, int nr, const int *K, int nk,
                     const char *mname, const char *vname, const mode_seq *sv, int vk, const mode_seq *sc, int cr)
{
    int rl = last_of(sm, R, nr), kl = last_of(sm, K, nk), kunit = kl == sm->n - 1;
    put(E, "cblas_%sgemv(CblasRowMajor, %s, ", x, kunit ? "CblasNoTrans" : "CblasTrans");
    put_group_size(E, sm, kunit ? R : K, kunit ? nr : nk);
    put(E, ", ");
    put_group_size(E, sm, kunit ? K : R, kunit ? nk : nr);
    put(E, ", tx_alpha, %s, ", mname);
    put_ld(E, sm, kunit ? rl : kl);
    put(E, ", %s, ", vname);
    put_stride(E, sv, vk);
    put(E, ", tx_beta, tx_c, ");
    put_stride(E, sc, cr);
    put(E, ");\n");
}

static void emit_blas(emitter *E, const g_value *v)
{
    const blas_plan *p = v->blas;
    mode_seq sa, sb, sc;
    TX_ASSERT(graph_modes(p->a, &sa) == 0 && graph_modes(p->b, &sb) == 0);
    if (p->store) {
        sc.n = p->store->rank;
        for (int i = 0; i < sc.n; i++) {
            sc.label[i] = p->store->store_label[i];
            sc.ext[i] = p->store->ext[i];
        }
    } else {
        sc.n = v->rank;
        for (int i = 0; i < sc.n; i++) {
            sc.label[i] = v->label[i];
            sc.ext[i] = v->ext[i];
        }
    }
    const char *x = v->dt == DT_F32 ? "s" : "d";
    const char *t = ctype(v->dt);
    int op = p->store ? p->store->store_op : '=';
    E->uses_blas = 1;
    int depth = 2;
    put(E, "    { /* %%%d: BLAS */\n", v->id);
    int batch_ext_labels[TX_MAX_MODES];
    tx_extent bext[TX_MAX_MODES];
    for (int i = 0; i < p->nb; i++) {
        batch_ext_labels[i] = p->batch[i];
        for (int m = 0; m < sc.n; m++)
            if (sc.label[m] == p->batch[i])
                bext[i] = sc.ext[m];
    }
    open_loops(E, batch_ext_labels, bext, p->nb, &depth);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    /* the matrix labels sit at 0: addresses below are the blocks' corners */
    int groups[3][TX_MAX_MODES], ng[3] = {p->nm, p->nn, p->nk};
    memcpy(groups[0], p->m, sizeof groups[0]);
    memcpy(groups[1], p->n, sizeof groups[1]);
    memcpy(groups[2], p->k, sizeof groups[2]);
    for (int gi = 0; gi < 3; gi++)
        for (int i = 0; i < ng[gi]; i++) {
            put(E, "%*sconst int64_t ", 4 * depth, "");
            put_label(E, groups[gi][i]);
            put(E, " = 0;\n");
        }
    put(E, "%*sconst %s *tx_a = &", 4 * depth, "", t);
    put_access(E, p->a);
    put(E, ";\n%*sconst %s *tx_b = &", 4 * depth, "", t);
    put_access(E, p->b);
    put(E, ";\n%*s%s *tx_c = &", 4 * depth, "", t);
    if (p->store) {
        put_var_at(E, p->store->var, sc.label, sc.ext, sc.n);
        put(E, ";\n");
    } else {
        put(E, "tx_v%d[", v->id);
        put_offset_labels(E, v);
        put(E, "];\n");
    }
    put(E, "%*sconst %s tx_alpha = ", 4 * depth, "", t);
    num_literal(E->out, op == '-' ? -v->coef : v->coef);
    put(E, ", tx_beta = %s;\n%*s(void)tx_beta;\n", op == '=' ? "0.0" : "1.0", 4 * depth, "");
    /* BLAS takes int sizes: every one is at most its buffer's element count */
    const mode_seq *bufs[3] = {&sa, &sb, &sc};
    put(E, "%*sif (", 4 * depth, "");
    for (int bi = 0; bi < 3; bi++) {
        put(E, bi ? " || " : "");
        put_stride(E, bufs[bi], -1);
        put(E, " > 2147483647");
    }
    put(E, ") { tx_status = %d; goto tx_done; }\n",
        add_error(E, "a matrix is too large for BLAS (more than 2^31-1 elements)"));
    int am = last_of(&sa, p->m, p->nm), ak = last_of(&sa, p->k, p->nk);
    int bk = last_of(&sb, p->k, p->nk), bn = last_of(&sb, p->n, p->nn);
    int cm = last_of(&sc, p->m, p->nm), cn = last_of(&sc, p->n, p->nn);
    put(E, "%*s", 4 * depth, "");
    if (p->nm == 0 && p->nn == 0) {
        put(E, "*tx_c = (%s)(tx_alpha * cblas_%sdot(", t, x);
        put_group_size(E, &sa, p->k, p->nk);
        put(E, ", tx_a, ");
        put_stride(E, &sa, ak);
        put(E, ", tx_b, ");
        put_stride(E, &sb, bk);
        /* beta = 0 must not read C, which may hold anything (even NaN) */
        put(E, ")%s);\n", op == '=' ? "" : " + tx_beta * *tx_c");
    } else if (p->nn == 0) { /* y[m] = A[m x k] x[k] */
        put_gemv(E, x, &sa, p->m, p->nm, p->k, p->nk, "tx_a", "tx_b", &sb, bk, &sc, cm);
    } else if (p->nm == 0) { /* y[n] = B[k x n]^T x[k] */
        put_gemv(E, x, &sb, p->n, p->nn, p->k, p->nk, "tx_b", "tx_a", &sa, ak, &sc, cn);
    } else {
        int ta = ak != sa.n - 1, tb = bn != sb.n - 1;
        put(E, "cblas_%sgemm(CblasRowMajor, %s, %s, ", x, ta ? "CblasTrans" : "CblasNoTrans",
            tb ? "CblasTrans" : "CblasNoTrans");
        put_group_size(E, &sc, p->m, p->nm);
        put(E, ", ");
        put_group_size(E, &sc, p->n, p->nn);
        put(E, ", ");
        put_group_size(E, &sa, p->k, p->nk);
        put(E, ", tx_alpha, tx_a, ");
        put_ld(E, &sa, ta ? ak : am);
        put(E, ", tx_b, ");
        put_ld(E, &sb, tb ? bn : bk);
        put(E, ", tx_beta, tx_c, ");
        put_ld(E, &sc, cm);
        put(E, ");\n");
    }
    depth--;
    put(E, "%*s}\n    }\n", 4 * depth, "");
}


/* ---- blocked inner loops through the runtime primitives (prims.inc) ---- */

#define BLK_MAX_BUFFERS 32

/* The stride of extent product after mode P of S, as a number when every
   extent is known (JIT), else -1. */
static int64_t stride_value(emitter *E, const mode_seq *s, int p)
{
    int64_t z = 1;
    for (int i = p + 1; i < s->n; i++) {
        tx_extent x = s->ext[i];
        int64_t v = sema_extent_eval(SP(E), x, E->o->jit ? E->o->dim_values : NULL);
        if (v < 0)
            return -1;
        z *= v;
    }
    return z;
}

/* Is V (with the values fused into it) something the primitives can
   evaluate? Counts its nodes into *NEED: each needs one scratch buffer at
   most. */
static int blk_supported(const g_value *v, int *need, int base)
{
    (void)base;
    if (++*need > BLK_MAX_BUFFERS)
        return 0;
    if (!v->inlined)
        return v->op == OP_CONST || v->op == OP_INDEX || is_computed(v) ||
               ((v->op == OP_INPUT || v->op == OP_STORE) && v->rank == 0);
    if (v->op != OP_MAP && v->op != OP_ADD && v->op != OP_CONTRACT)
        return 0;
    for (int i = 0; i < v->nin; i++)
        if (!blk_supported(v->in[i], need, 0))
            return 0;
    return 1;
}

typedef struct {
    int nbuf, nptr, depth, label;
} blk_state;

/* An operand of a primitive: a scratch buffer or a direct pointer. */
typedef struct {
    int buf, ptr;
} blk_op;

static void put_op(emitter *E, blk_op o)
{
    if (o.ptr >= 0)
        put(E, "tx_p%d", o.ptr);
    else
        put(E, "(tx_blk + %d * TX_BLOCK)", o.buf);
}

/* The stride of label L through memory-resident value W. */
static void put_label_stride(emitter *E, const g_value *w, int L, int64_t *known)
{
    mode_seq s;
    *known = 0;
    if (graph_modes(w, &s) < 0) { /* a scalar variable */
        put(E, "0");
        return;
    }
    int any = 0;
    for (int p = 0; p < s.n; p++)
        if (s.label[p] == L) {
            int64_t v = stride_value(E, &s, p);
            *known = any || v < 0 ? -1 : v;
            put(E, any ? " + " : "");
            put_stride(E, &s, p);
            any = 1;
        }
    if (!any)
        put(E, "0");
}

/* Emits code leaving the block of V's values in a scratch buffer (or a
   direct pointer for a unit-stride f64 leaf) and returns which. Buffers
   are a stack: those above the result are free again afterwards. */
static blk_op blk_eval(emitter *E, blk_state *B, const g_value *v)
{
    int ind = 4 * B->depth, base = B->nbuf;
    blk_op r = {base, -1};
    if (!v->inlined) {
        if (v->op == OP_CONST) {
            put(E, "%*stx_p_fill(tx_bn, ", ind, "");
            num_literal(E->out, v->coef);
            put(E, ", tx_blk + %d * TX_BLOCK);\n", base);
            B->nbuf = base + 1;
            return r;
        }
        /* a stride of exactly 1 (known in the JIT) reads the tensor in place */
        tx_buf save = *E->out;
        int64_t known;
        tx_buf stride = {0};
        tx_buf *out = E->out;
        E->out = &stride;
        put_label_stride(E, v, B->label, &known);
        E->out = out;
        (void)save;
        if (known == 1 && v->dt == DT_F64) {
            r.buf = -1;
            r.ptr = B->nptr++;
            put(E, "%*sconst double *tx_p%d = &", ind, "", r.ptr);
            put_access(E, v);
            put(E, ";\n");
        } else {
            put(E, "%*stx_p_load_%s(tx_bn, &", ind, "", v->dt == DT_F32 ? "f32" : "f64");
            put_access(E, v);
            put(E, ", %s, tx_blk + %d * TX_BLOCK);\n", stride.p ? stride.p : "0", base);
            B->nbuf = base + 1;
        }
        buf_free(&stride);
        return r;
    }
    blk_op in[64];
    for (int i = 0; i < v->nin && i < 64; i++)
        in[i] = blk_eval(E, B, v->in[i]);
    /* the result goes where the first operand is, if that is a buffer
       (the primitives work in place); else to a fresh one, so that no
       operand is overwritten before it is read */
    blk_op d = {in[0].buf >= 0 ? in[0].buf : B->nbuf++, -1};
    switch (v->op) {
    case OP_ADD:
        put(E, "%*s", ind, "");
        if (v->nin == 1) {
            put(E, "tx_p_scale_add(tx_bn, ");
            num_literal(E->out, v->coef_in[0]);
            put(E, ", ");
            put_op(E, in[0]);
            put(E, ", 0.0, ");
            put_op(E, d);
            put(E, ");\n");
            break;
        }
        put(E, "tx_p_axpby(tx_bn, ");
        num_literal(E->out, v->coef_in[0]);
        put(E, ", ");
        put_op(E, in[0]);
        put(E, ", ");
        num_literal(E->out, v->coef_in[1]);
        put(E, ", ");
        put_op(E, in[1]);
        put(E, ", ");
        put_op(E, d);
        put(E, ");\n");
        for (int i = 2; i < v->nin; i++) {
            put(E, "%*stx_p_axpby(tx_bn, 1.0, ", ind, "");
            put_op(E, d);
            put(E, ", ");
            num_literal(E->out, v->coef_in[i]);
            put(E, ", ");
            put_op(E, in[i]);
            put(E, ", ");
            put_op(E, d);
            put(E, ");\n");
        }
        break;
    case OP_CONTRACT: { /* an elementwise product */
        int first = 1;
        put(E, "%*s", ind, "");
        if (v->coef_in[0] < 0) {
            put(E, "tx_p_recip(tx_bn, 1.0, ");
            put_op(E, in[0]);
        } else if (v->nin >= 2) {
            put(E, "tx_p_%s(tx_bn, ", v->coef_in[1] < 0 ? "div" : "mul");
            put_op(E, in[0]);
            put(E, ", ");
            put_op(E, in[1]);
            first = 2;
        } else {
            put(E, "tx_p_scale_add(tx_bn, 1.0, ");
            put_op(E, in[0]);
            put(E, ", 0.0");
        }
        put(E, ", ");
        put_op(E, d);
        put(E, ");\n");
        for (int i = first; i < v->nin; i++) {
            put(E, "%*stx_p_%s(tx_bn, ", ind, "", v->coef_in[i] < 0 ? "div" : "mul");
            put_op(E, d);
            put(E, ", ");
            put_op(E, in[i]);
            put(E, ", ");
            put_op(E, d);
            put(E, ");\n");
        }
        if (v->coef != 1) {
            put(E, "%*stx_p_scale_add(tx_bn, ", ind, "");
            num_literal(E->out, v->coef);
            put(E, ", ");
            put_op(E, d);
            put(E, ", 0.0, ");
            put_op(E, d);
            put(E, ");\n");
        }
        break;
    }
    case OP_MAP:
        put(E, "%*s", ind, "");
        if (v->fn == MAP_POW) {
            put(E, "tx_p_pow(tx_bn, ");
            put_op(E, in[0]);
            put(E, ", ");
            num_literal(E->out, v->fn_arg);
        } else if (v->nin == 2) {
            put(E, "tx_p_%s(tx_bn, ", v->fn == MAP_MAX ? "max" : "min");
            put_op(E, in[0]);
            put(E, ", ");
            put_op(E, in[1]);
        } else {
            put(E, "tx_p_map(tx_bn, %d, ", (int)v->fn);
            put_op(E, in[0]);
        }
        put(E, ", ");
        put_op(E, d);
        put(E, ");\n");
        break;
    default:
        TX_ASSERT(!"not an elementwise value");
    }
    B->nbuf = d.buf + 1;
    return d;
}

/* The blocked loop nest computing elementwise value X at every index of
   LABELS/EXT (the last label blocked) into TARGET (a variable or a
   temporary, row-major over the labels' order given by its own modes),
   with OP 0 (=), 1 (+=) or 2 (-=). TARGET_VAR >= 0 writes variable
   TARGET_VAR, else temporary TEMP. */
static void emit_block_loop(emitter *E, const g_value *x, const int *labels, const tx_extent *ext, int rank,
                            int target_var, const g_value *temp, dtype tdt, int op)
{
    int depth = 2;
    E->uses_blocks = 1;
    put(E, "%*sif (!tx_blk && !(tx_blk = (double *)malloc(%d * TX_BLOCK * sizeof(double)))) "
        "{ tx_status = 1; goto tx_done; }\n", 4 * depth, "", BLK_MAX_BUFFERS);
    open_loops(E, labels, ext, rank - 1, &depth);
    int L = labels[rank - 1];
    put(E, "%*sfor (int64_t tx_i = 0; tx_i < ", 4 * depth, "");
    put_extent(E, ext[rank - 1]);
    put(E, "; tx_i += TX_BLOCK) {\n");
    depth++;
    put(E, "%*sconst int64_t tx_bn = ", 4 * depth, "");
    put_extent(E, ext[rank - 1]);
    put(E, " - tx_i < TX_BLOCK ? ");
    put_extent(E, ext[rank - 1]);
    put(E, " - tx_i : TX_BLOCK;\n%*sconst int64_t ", 4 * depth, "");
    put_label(E, L);
    put(E, " = tx_i;\n");
    blk_state B = {0, 0, depth, L};
    blk_op r = blk_eval(E, &B, x);
    put(E, "%*stx_p_store_%s(tx_bn, ", 4 * depth, "", tdt == DT_F32 ? "f32" : "f64");
    put_op(E, r);
    put(E, ", &");
    if (target_var >= 0) {
        put_var_at(E, target_var, labels, ext, rank);
    } else {
        put(E, "tx_v%d[", temp->id);
        put_offset_labels(E, temp);
        put(E, "]");
    }
    put(E, ", 1, %d);\n", op);
    depth--;
    put(E, "%*s}\n", 4 * depth, "");
}


/* ---- slices and linear-algebra calls ---- */

/* slice: loops over the box in the operand's own indices (lo .. lo+ext),
   writing the temporary at index - lo. */
static void emit_slice(emitter *E, const g_value *v)
{
    int depth = 2;
    put(E, "    { /* %%%d: slice */\n", v->id);
    for (int i = 0; i < v->rank; i++) {
        put(E, "%*sfor (int64_t ", 4 * depth, "");
        put_label(E, v->label[i]);
        put(E, " = ");
        put_extent(E, v->slice_lo[i]);
        put(E, "; ");
        put_label(E, v->label[i]);
        put(E, " < ");
        put_extent(E, v->slice_lo[i]);
        put(E, " + ");
        put_extent(E, v->ext[i]);
        put(E, "; ");
        put_label(E, v->label[i]);
        put(E, "++)\n");
        depth++;
    }
    put(E, "%*stx_v%d[", 4 * depth, "", v->id);
    for (int i = 0; i < v->rank - 1; i++)
        put(E, "(");
    for (int i = 0; i < v->rank; i++) {
        if (i) {
            put(E, ")*");
            put_extent(E, v->ext[i]);
            put(E, " + ");
        }
        put(E, "(");
        put_label(E, v->label[i]);
        put(E, " - ");
        put_extent(E, v->slice_lo[i]);
        put(E, ")");
    }
    put(E, "] = (%s)", ctype(v->dt));
    put_access(E, v->in[0]);
    put(E, ";\n    }\n");
}

/* The address of the first element of memory-resident value W. */
static void put_base(emitter *E, const g_value *w)
{
    if (w->op == OP_INDEX || w->op == OP_INPUT || w->op == OP_STORE)
        put_var(E, w->op == OP_INDEX ? w->in[0]->var : w->var);
    else
        put(E, "tx_v%d", w->id);
}

static const char *la_word(la_fn f)
{
    static const char *w[] = {"?", "cholesky", "inv", "pow", "solve", "eigh", "qr", "svd", "slice"};
    return w[f];
}

/* A LAPACK-backed call: the arguments are contiguous and row-major (the
   lowering made sure); the results are the node's own buffer, or its
   parts'. Each outcome other than success becomes an error code whose
   message names the call and its line. */
static void emit_linalg(emitter *E, const g_value *v, g_value *const *parts)
{
    const char *S_ = v->dt == DT_F32 ? "s" : "d";
    const g_value *a = v->in[0];
    E->uses_linalg = 1;
    put(E, "    { /* %%%d: %s */\n        int64_t tx_detail = 0;\n        int tx_info = ", v->id, la_word(v->la));
    switch (v->la) {
    case LA_CHOL: case LA_INV:
        put(E, "tx_la_%s_%s(", v->la == LA_CHOL ? "chol" : "inv", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", tx_v%d, &tx_detail);\n", v->id);
        break;
    case LA_POW:
        put(E, "tx_la_pow_%s(", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", %lld, tx_v%d, &tx_detail);\n", (long long)v->la_pow, v->id);
        break;
    case LA_SOLVE:
        put(E, "tx_la_solve_%s(", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        if (v->in[1]->rank == 2)
            put_extent(E, v->in[1]->ext[1]);
        else
            put(E, "1");
        put(E, ", ");
        put_base(E, a);
        put(E, ", ");
        put_base(E, v->in[1]);
        put(E, ", tx_v%d, &tx_detail);\n", v->id);
        break;
    case LA_EIGH:
        put(E, "tx_la_eigh_%s(", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", ");
        if (v->nin == 2)
            put_base(E, v->in[1]);
        else
            put(E, "0");
        put(E, ", tx_v%d, tx_v%d, &tx_detail);\n", parts[0]->id, parts[1]->id);
        break;
    case LA_QR: case LA_SVD:
        put(E, "tx_la_%s_%s(", v->la == LA_QR ? "qr" : "svd", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_extent(E, a->ext[1]);
        put(E, ", ");
        put_base(E, a);
        for (int i = 0; i < v->nout; i++)
            put(E, ", tx_v%d", parts[i]->id);
        put(E, ", &tx_detail);\n");
        break;
    default:
        TX_ASSERT(!"not a linear-algebra call");
    }
    /* the outcomes, in the words of tx(5) */
    const char *file = SP(E)->cst->src->name;
    unsigned line = v->span.line;
    const char *w = la_word(v->la);
    struct { int info; const char *what; } outcomes[] = {
        {1, "matrix is not positive definite (leading minor %lld)"},
        {2, "matrix is singular (pivot %lld is zero)"},
        {3, "the decomposition did not converge"},
        {4, "the second matrix is not positive definite (leading minor %lld)"},
        {-1, "out of memory"},
        {-2, "an extent is too large for LAPACK"},
    };
    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s:%u: %s: %s", file, line, w, outcomes[i].what);
        int code = add_error(E, msg);
        put(E, "        if (tx_info == %d) { tx_status = %d; ", outcomes[i].info, code);
        if (E->o->jit)
            put(E, "*tx_detailp = tx_detail; ");
        put(E, "goto tx_done; }\n");
    }
    put(E, "        (void)tx_detail;\n    }\n");
}

/* ---- loops that follow sparse maps (tx(5) section 7) ---- */

typedef struct {
    labelset placed;  /* labels bound by enclosing loops */
    int handled[8];   /* per v->maps: followed by an entry loop or tested */
    int nloop;        /* entry loops opened so far (for unique names) */
} sparse_state;

static void put_map(emitter *E, int map)
{
    mangle_name(E->out, "m_", SP(E)->maps[map]->name);
}

/* The row-major index of a map's source (SIDE 0) or target (1) tuple. */
static void put_map_index(emitter *E, const sym *m, int side)
{
    int n = side ? m->ndst : m->nsrc;
    const int *l = side ? m->dst : m->src;
    const tx_extent *x = side ? m->dst_ext : m->src_ext;
    for (int i = 0; i < n - 1; i++)
        put(E, "(");
    for (int i = 0; i < n; i++) {
        if (i) {
            put(E, ")*");
            put_extent(E, x[i]);
            put(E, " + ");
        }
        put_label(E, l[i]);
    }
}

/* Maps whose labels are now all bound, by other loops than their own
   entry loop: skip the iteration unless the map holds the pair. */
static void emit_map_tests(emitter *E, const g_value *v, int *depth, sparse_state *st)
{
    for (int k = 0; k < v->nmaps; k++) {
        if (st->handled[k] || !graph_map_covers(E->g, v->maps[k], st->placed))
            continue;
        const sym *m = SP(E)->maps[v->maps[k]];
        put(E, "%*sif (!tx_rt_map_has(", 4 * *depth, "");
        put_map(E, v->maps[k]);
        put(E, ", ");
        put_map_index(E, m, 0);
        put(E, ", ");
        put_map_index(E, m, 1);
        put(E, ")) continue;\n");
        st->handled[k] = 1;
    }
}

/* Opens loops over LABELS (extents EXT) for V: a map's target labels are
   visited through its entries once its source labels are bound; a map
   whose labels all end up bound by plain loops becomes a membership test.
   Every loop opens a brace; returns how many to close. */
static int open_loops_sparse(emitter *E, const g_value *v, const int *labels, const tx_extent *ext, int n,
                             int *depth, sparse_state *st)
{
    int pending[TX_MAX_LABELS], np = 0, braces = 0;
    for (int i = 0; i < n; i++)
        pending[np++] = i;
    while (np > 0) {
        int done = 0;
        for (int k = 0; k < v->nmaps && !done; k++) {
            const sym *m = SP(E)->maps[v->maps[k]];
            if (st->handled[k])
                continue;
            int ok = 1;
            for (int i = 0; i < m->nsrc; i++)
                ok &= ls_has(&st->placed, m->src[i]);
            for (int i = 0; ok && i < m->ndst; i++) {
                int in = 0;
                for (int j = 0; j < np; j++)
                    in |= labels[pending[j]] == m->dst[i];
                ok = in;
            }
            if (!ok)
                continue;
            /* for (each entry of the map for the current source tuple) */
            int e = st->nloop++;
            put(E, "%*sfor (int64_t tx_e%d = ", 4 * *depth, "", e);
            put_map(E, v->maps[k]);
            put(E, "->offsets[");
            put_map_index(E, m, 0);
            put(E, "]; tx_e%d < ", e);
            put_map(E, v->maps[k]);
            put(E, "->offsets[");
            put_map_index(E, m, 0);
            put(E, " + 1]; tx_e%d++) {\n", e);
            (*depth)++;
            braces++;
            put(E, "%*sconst int64_t tx_t%d = ", 4 * *depth, "", e);
            put_map(E, v->maps[k]);
            put(E, "->targets[tx_e%d];\n", e);
            if (E->nentries < 16) {
                E->entries[E->nentries].id = e;
                E->entries[E->nentries].ndst = m->ndst;
                E->entries[E->nentries].dst = m->dst;
                E->entries[E->nentries].ext = m->dst_ext;
                E->entries[E->nentries++].depth = *depth;
            }
            entry_ctx *ent = E->nentries > 0 && E->entries[E->nentries - 1].id == e ? &E->entries[E->nentries - 1]
                                                                                     : NULL;
            for (int i = 0; i < m->ndst; i++) { /* decode the target tuple */
                if (ent)
                    ent->decode_at[i] = E->out->len;
                put(E, "%*sconst int64_t ", 4 * *depth, "");
                put_label(E, m->dst[i]);
                put(E, " = (tx_t%d", e);
                for (int j = i + 1; j < m->ndst; j++) {
                    put(E, " / ");
                    put_extent(E, m->dst_ext[j]);
                }
                put(E, ")");
                if (i > 0) {
                    put(E, " %% ");
                    put_extent(E, m->dst_ext[i]);
                }
                put(E, ";\n");
                if (ent)
                    ent->decode_end[i] = E->out->len;
                ls_add(&st->placed, m->dst[i]);
                for (int j = 0; j < np; j++)
                    if (labels[pending[j]] == m->dst[i]) {
                        pending[j] = pending[--np];
                        break;
                    }
            }
            st->handled[k] = 1;
            done = 1;
        }
        if (done) {
            emit_map_tests(E, v, depth, st);
            continue;
        }
        /* a plain loop: preferably over a label no waiting map targets */
        int pick = 0;
        for (int j = 0; j < np; j++) {
            int targeted = 0;
            for (int k = 0; k < v->nmaps; k++)
                if (!st->handled[k])
                    for (int i = 0; i < SP(E)->maps[v->maps[k]]->ndst; i++)
                        targeted |= SP(E)->maps[v->maps[k]]->dst[i] == labels[pending[j]];
            if (!targeted) {
                pick = j;
                break;
            }
        }
        int idx = pending[pick];
        pending[pick] = pending[--np];
        put_loop_head(E, labels[idx], ext[idx], *depth, 1);
        (*depth)++;
        braces++;
        ls_add(&st->placed, labels[idx]);
        emit_map_tests(E, v, depth, st);
    }
    return braces;
}

/* Removes an entry loop's decode lines whose label the loop body never
   used (every access went through the flat target index): libtcc would
   otherwise still divide for them. */
static void drop_unused_decodes(emitter *E, const entry_ctx *en)
{
    tx_buf *o = E->out;
    for (int i = en->ndst - 1; i >= 0; i--) {
        tx_buf name = {0};
        mangle_name(&name, "l_", E->g->label_names[en->dst[i]]);
        int used = 0;
        for (const char *p = o->p + en->decode_end[i]; name.p && (p = strstr(p, name.p)) != NULL; p++) {
            char before = p[-1], after = p[name.len];
            if (!(before == '_' || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
                  (before >= '0' && before <= '9')) &&
                !(after == '_' || (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
                  (after >= '0' && after <= '9'))) {
                used = 1;
                break;
            }
        }
        buf_free(&name);
        if (!used && !o->oom) {
            size_t a = en->decode_at[i], b = en->decode_end[i];
            memmove(o->p + a, o->p + b, o->len - b + 1);
            o->len -= b - a;
        }
    }
}

static void close_braces(emitter *E, int n, int *depth)
{
    for (int i = 0; i < n; i++) {
        (*depth)--;
        put(E, "%*s}\n", 4 * *depth, "");
        while (E->nentries > 0 && E->entries[E->nentries - 1].depth > *depth)
            drop_unused_decodes(E, &E->entries[--E->nentries]); /* that entry loop is closed */
    }
}

/* Code zeroing COUNT elements of type T at P: entries no map reaches. */
static void emit_zero(emitter *E, const char *p, const tx_extent *ext, int rank, dtype t)
{
    E->uses_maps = 1;
    put(E, "    tx_rt_zero(%s, (int64_t)sizeof(%s)", p, ctype(t));
    for (int i = 0; i < rank; i++) {
        put(E, " * ");
        put_extent(E, ext[i]);
    }
    put(E, ");\n");
}

/* A value whose loops some sparse map restricts: plain scalar loops that
   follow the maps; the buffer is zeroed first, so entries no map reaches
   read as zero. */
static void emit_compute_sparse(emitter *E, const g_value *v)
{
    int depth = 2, nsum = 0, summed[TX_MAX_LABELS];
    tx_extent sext[TX_MAX_LABELS];
    if (v->op == OP_CONTRACT || v->op == OP_REDUCE)
        nsum = labels_in(v, v->summed, summed, sext);
    E->uses_maps = 1;
    put(E, "    { /* %%%d: follows sparse maps */\n", v->id);
    char name[32];
    snprintf(name, sizeof name, "tx_v%d", v->id);
    emit_zero(E, name, v->ext, v->rank, v->dt);
    sparse_state st;
    memset(&st, 0, sizeof st);
    if (v->op == OP_CONTRACT) {
        /* the buffer starts at zero, so the products can be added in in
           any loop order: one nest over output and summed labels, in the
           order the maps favour (sources, then their entries, then the
           rest innermost, contiguous) */
        int all[TX_MAX_LABELS], na = 0;
        tx_extent aext[TX_MAX_LABELS];
        for (int i = 0; i < v->rank; i++) {
            all[na] = v->label[i];
            aext[na++] = v->ext[i];
        }
        for (int i = 0; i < nsum; i++) {
            all[na] = summed[i];
            aext[na++] = sext[i];
        }
        /* the last output label, if no map involves it, runs innermost in
           blocks through the primitives: C[i,:] += A[i,k] * B[k,:] */
        int L = v->rank ? v->label[v->rank - 1] : -1;
        for (int k = 0; L >= 0 && k < v->nmaps; k++) {
            const sym *m = SP(E)->maps[v->maps[k]];
            for (int i = 0; i < m->nsrc; i++)
                L = m->src[i] == L ? -1 : L;
            for (int i = 0; L >= 0 && i < m->ndst; i++)
                L = m->dst[i] == L ? -1 : L;
        }
        g_value root = *v;
        int need = 0;
        root.inlined = 1;
        root.nmaps = 0;
        memset(&root.summed, 0, sizeof root.summed);
        if (L >= 0 && blk_supported(&root, &need, 0)) {
            put(E, "%*sif (!tx_blk && !(tx_blk = (double *)malloc(%d * TX_BLOCK * sizeof(double)))) "
                "{ tx_status = 1; goto tx_done; }\n", 4 * depth, "", BLK_MAX_BUFFERS);
            E->uses_blocks = 1;
            int outer[TX_MAX_LABELS], no = 0;
            tx_extent oext[TX_MAX_LABELS];
            for (int i = 0; i < na; i++)
                if (all[i] != L) {
                    outer[no] = all[i];
                    oext[no++] = aext[i];
                }
            int b = open_loops_sparse(E, v, outer, oext, no, &depth, &st);
            tx_extent xl = v->ext[v->rank - 1];
            put(E, "%*sfor (int64_t tx_i = 0; tx_i < ", 4 * depth, "");
            put_extent(E, xl);
            put(E, "; tx_i += TX_BLOCK) {\n");
            depth++;
            put(E, "%*sconst int64_t tx_bn = ", 4 * depth, "");
            put_extent(E, xl);
            put(E, " - tx_i < TX_BLOCK ? ");
            put_extent(E, xl);
            put(E, " - tx_i : TX_BLOCK;\n%*sconst int64_t ", 4 * depth, "");
            put_label(E, L);
            put(E, " = tx_i;\n");
            blk_state B = {0, 0, depth, L};
            blk_op r = blk_eval(E, &B, &root);
            put(E, "%*stx_p_store_f%s(tx_bn, ", 4 * depth, "", v->dt == DT_F32 ? "32" : "64");
            put_op(E, r);
            put(E, ", &tx_v%d[", v->id);
            put_offset_labels(E, v);
            put(E, "], 1, 1);\n");
            depth--;
            put(E, "%*s}\n", 4 * depth, "");
            close_braces(E, b, &depth);
            put(E, "    }\n");
            return;
        }
        int b = open_loops_sparse(E, v, all, aext, na, &depth, &st);
        put(E, "%*stx_v%d[", 4 * depth, "", v->id);
        put_offset_labels(E, v);
        put(E, "] += ");
        if (v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put_product(E, v);
        put(E, ";\n");
        close_braces(E, b, &depth);
        put(E, "    }\n");
        return;
    }
    int b1 = open_loops_sparse(E, v, v->label, v->ext, v->rank, &depth, &st);
    int reduces = (v->op == OP_CONTRACT && nsum) || v->op == OP_REDUCE;
    put(E, "%*sdouble tx_acc = %s;\n%*sint64_t tx_cnt = 0;\n", 4 * depth, "",
        v->op == OP_REDUCE ? reduce_init(v->red) : "0.0", 4 * depth, "");
    int d2 = depth, b2 = 0;
    if (reduces)
        b2 = open_loops_sparse(E, v, summed, sext, nsum, &d2, &st);
    put(E, "%*stx_cnt++;\n%*s", 4 * d2, "", 4 * d2, "");
    if (v->op == OP_REDUCE)
        put_reduce_update(E, v->red, v->in[0]);
    else if (reduces) {
        put(E, "tx_acc += ");
        put_product(E, v);
    } else {
        put(E, "tx_acc = ");
        if (v->op == OP_CONTRACT && v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put_elementwise(E, v);
    }
    put(E, ";\n");
    close_braces(E, b2, &d2);
    put(E, "%*stx_v%d[", 4 * depth, "", v->id);
    put_offset_labels(E, v);
    put(E, "] = (%s)(", ctype(v->dt));
    if (reduces && v->op == OP_CONTRACT && v->coef != 1) {
        num_literal(E->out, v->coef);
        put(E, " * ");
    }
    /* an output no map entry reaches is zero (not the identity of max) */
    put(E, "tx_cnt ? tx_acc : 0.0);\n");
    close_braces(E, b1, &depth);
    put(E, "    }\n");
}

/* A store whose loops a sparse map restricts ('=' zeroes the tensor
   first: entries no map reaches are written as zero). */
static void emit_store_sparse(emitter *E, const g_value *s)
{
    sym *var = SP(E)->vars[s->var];
    int depth = 2;
    E->uses_maps = 1;
    put(E, "    { /* %%%d: follows sparse maps */\n", s->id);
    if (s->store_op == '=') {
        tx_buf nm = {0};
        mangle_name(&nm, "t_", var->name);
        emit_zero(E, nm.p, s->ext, s->rank, var->dt);
        buf_free(&nm);
    }
    sparse_state st;
    memset(&st, 0, sizeof st);
    int b = open_loops_sparse(E, s, s->store_label, s->ext, s->rank, &depth, &st);
    put(E, "%*s", 4 * depth, "");
    put_var_at(E, s->var, s->store_label, s->ext, s->rank);
    put(E, " %s (%s)", s->store_op == '=' ? "=" : s->store_op == '+' ? "+=" : "-=", ctype(var->dt));
    put_access(E, s->in[0]);
    put(E, ";\n");
    close_braces(E, b, &depth);
    put(E, "    }\n");
}


static void emit_store(emitter *E, const g_value *s)
{
    if (s->nmaps) {
        emit_store_sparse(E, s);
        return;
    }
    sym *var = SP(E)->vars[s->var];
    int depth = 2, need = 0;
    put(E, "    { /* %%%d */\n", s->id);
    if (s->rank > 0 && blk_supported(s->in[0], &need, 0)) {
        emit_block_loop(E, s->in[0], s->store_label, s->ext, s->rank, s->var, NULL, var->dt,
                        s->store_op == '=' ? 0 : s->store_op == '+' ? 1 : 2);
        put(E, "    }\n");
        return;
    }
    open_loops(E, s->store_label, s->ext, s->rank, &depth);
    put(E, "%*s", 4 * depth, "");
    put_var_at(E, s->var, s->store_label, s->ext, s->rank);
    put(E, " %s (%s)", s->store_op == '=' ? "=" : s->store_op == '+' ? "+=" : "-=", ctype(var->dt));
    put_access(E, s->in[0]);
    put(E, ";\n    }\n");
}

/* Code that sets tx_n to the element count of a buffer with extents EXT,
   returning error CODE if it overflows. */
static void emit_size(emitter *E, const tx_extent *ext, int rank, size_t elem, int code)
{
    put(E, "    tx_n = 1;\n");
    for (int i = 0; i < rank; i++) {
        put(E, "    if (!tx_mul_ok(tx_n, ");
        put_extent(E, ext[i]);
        put(E, ", &tx_n)) { tx_status = %d; goto tx_done; }\n", code);
    }
    put(E, "    if (!tx_mul_ok(tx_n, %zu, &tx_n)) { tx_status = %d; goto tx_done; }\n", elem, code);
}

static void emit_prelude(emitter *E)
{
    put(E, "/* Generated by txc %s from a .tx program. Do not edit. */\n", TX_VERSION_STRING);
    if (E->o->jit) {
        /* no headers under libtcc: declare what jit.c registers */
        put(E, "typedef long int64_t;\n"
               "void *malloc(unsigned long);\n"
               "void free(void *);\n"
               "double pow(double, double);\n"
               "double exp(double), log(double), sqrt(double), fabs(double);\n"
               "double sin(double), cos(double), tanh(double);\n"
               "double tx_rt_now(void);\n");
        if (E->uses_blas) /* cblas.h does not parse under libtcc; enums are ints */
            put(E, "enum { CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 };\n"
                   "void cblas_dgemm(int, int, int, int, int, int, double, const double *, int,\n"
                   "                 const double *, int, double, double *, int);\n"
                   "void cblas_sgemm(int, int, int, int, int, int, float, const float *, int,\n"
                   "                 const float *, int, float, float *, int);\n"
                   "void cblas_dgemv(int, int, int, int, double, const double *, int, const double *, int,\n"
                   "                 double, double *, int);\n"
                   "void cblas_sgemv(int, int, int, int, float, const float *, int, const float *, int,\n"
                   "                 float, float *, int);\n"
                   "double cblas_ddot(int, const double *, int, const double *, int);\n"
                   "float cblas_sdot(int, const float *, int, const float *, int);\n");
    } else {
        put(E, "#include <stdint.h>\n#include <stdlib.h>\n");
        put(E, "#include <math.h>\n");
        if (E->uses_blas || E->uses_linalg)
            put(E, "#include <cblas.h>\n");
        if (E->uses_linalg)
            put(E, "#include <lapacke.h>\n");
    }
    if (E->uses_blas)
        put(E, "\n#define TX_LD(x) ((x) > 1 ? (int)(x) : 1)\n");
    put(E, "\nstatic int tx_mul_ok(int64_t a, int64_t b, int64_t *r)\n"
           "{\n"
           "    if (a < 0 || b < 0 || (b != 0 && a > (int64_t)0x7fffffffffffffff / b))\n"
           "        return 0;\n"
           "    *r = a * b;\n"
           "    return 1;\n"
           "}\n\n");
    if (E->uses_blocks || E->uses_maps || SP(E)->nmaps)
        put(E, "%s\n", E->o->jit ? tx_prim_prototypes : tx_prims_source);
    if (E->uses_linalg)
        put(E, "%s\n", E->o->jit ? tx_linalg_prototypes : tx_linalg_source);
    /* max and min as numpy's maximum and minimum: a NaN wins */
    if (E->uses_fmax)
        put(E, "static double tx_fmax(double a, double b) { return a > b || a != a ? a : b; }\n\n");
    if (E->uses_fmin)
        put(E, "static double tx_fmin(double a, double b) { return a < b || a != a ? a : b; }\n\n");
}

static void emit_signature(emitter *E)
{
    sema_program *S = SP(E);
    if (E->o->jit) {
        put(E, "int tx_entry(void *const *tx_args)\n{\n");
        int k = 0;
        for (int i = 0; i < S->ntensors; i++, k++) {
            sym *t = S->tensors[i];
            put(E, "    %s%s *", t->io == IO_IN ? "const " : "", ctype(t->dt));
            put_var(E, t->var);
            put(E, " = (%s%s *)tx_args[%d];\n", t->io == IO_IN ? "const " : "", ctype(t->dt), k);
        }
        for (int i = 0; i < S->nmaps; i++, k++) {
            put(E, "    const tx_sparse_map *");
            put_map(E, i);
            put(E, " = (const tx_sparse_map *)tx_args[%d];\n", k);
        }
        if (E->o->timing)
            put(E, "    double *tx_times = (double *)tx_args[%d];\n    double tx_t0;\n", k);
        put(E, "    int64_t *tx_detailp = (int64_t *)tx_args[%d];\n    (void)tx_detailp;\n", k + 2);
        return;
    }
    put(E, "int %s(", E->o->fn_name);
    int first = 1;
    for (int i = 0; i < S->nsym_dims; i++) {
        put(E, "%sint64_t ", first ? "" : ", ");
        mangle_name(E->out, "d_", S->sym_dims[i]->name);
        first = 0;
    }
    for (int i = 0; i < S->ntensors; i++) {
        sym *t = S->tensors[i];
        put(E, "%s%s%s *", first ? "" : ",\n        ", t->io == IO_IN ? "const " : "", ctype(t->dt));
        put_var(E, t->var);
        first = 0;
    }
    for (int i = 0; i < S->nmaps; i++) {
        put(E, "%sconst tx_sparse_map *", first ? "" : ",\n        ");
        put_map(E, i);
        first = 0;
    }
    if (first)
        put(E, "void");
    put(E, ")\n{\n");
}

/* Bytes of a buffer with extents EXT, all known (JIT); -1 if they are not
   known or the size overflows. */
static int64_t known_bytes(emitter *E, const tx_extent *ext, int rank, int64_t elem)
{
    int64_t z = elem;
    for (int i = 0; i < rank; i++) {
        tx_extent x = ext[i];
        int64_t v = sema_extent_eval(SP(E), x, E->o->jit ? E->o->dim_values : NULL);
        if (v < 0 || (v && z > INT64_MAX / 2 / v))
            return -1;
        z *= v;
    }
    return z;
}

/* A workspace plan: offsets of the scratch blocks, the tmp and let
   tensors (live throughout) and every computed intermediate (live from
   its computation to its last reader; first fit into freed space). */
typedef struct {
    int64_t *off;     /* per value id; -1: not in the workspace */
    int64_t *var_off; /* per variable */
    int64_t size;
} workspace_plan;

static int64_t round64(int64_t x) { return (x + 63) / 64 * 64; }

static int plan_workspace(emitter *E, const int *last, workspace_plan *w)
{
    graph *g = E->g;
    sema_program *S = g->S;
    w->off = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(g->n + 1));
    w->var_off = arena_alloc(g->arena, sizeof(int64_t) * (size_t)(S->nvars + 1));
    int64_t top = round64(BLK_MAX_BUFFERS * 256 * 8); /* scratch blocks at 0 */
    for (int i = 0; i < S->nvars; i++) {
        sym *t = S->vars[i];
        w->var_off[i] = -1;
        if (t->io != IO_TMP && t->io != IO_LET)
            continue;
        int64_t b = known_bytes(E, t->ext, t->rank, t->dt == DT_F32 ? 4 : 8);
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
        if (!is_computed(v))
            continue;
        int64_t b = known_bytes(E, v->ext, v->rank, v->dt == DT_F32 ? 4 : 8);
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

int emit_c(graph *g, const emit_options *o, tx_buf *out, emit_error **errs, int *nerrs)
{
    emitter E = {.g = g, .o = o, .out = out};
    sema_program *S = g->S;
    int oom = add_error(&E, "out of memory");

    /* the body first, into its own buffer: the error table it builds goes
       before it in standalone C */
    tx_buf body = {0};
    E.out = &body;
    emit_signature(&E);
    put(&E, "    int tx_status = 0;\n    int64_t tx_n;\n    double *tx_blk = 0; /* scratch blocks */\n");
    for (int i = 0; i < S->nvars; i++) {
        sym *t = S->vars[i];
        if (t->io == IO_TMP || t->io == IO_LET) {
            put(&E, "    %s *", ctype(t->dt));
            put_var(&E, i);
            put(&E, " = 0;\n");
        }
    }
    for (int k = 0; k < g->n; k++)
        if (is_computed(g->v[k]))
            put(&E, "    %s *tx_v%d = 0;\n", ctype(g->v[k]->dt), k);
    put(&E, "    (void)tx_n;\n");

    /* checks on the extents, before any memory is touched */
    for (int i = 0; !o->jit && i < S->nsym_dims; i++) {
        char msg[600];
        snprintf(msg, sizeof msg, "dim '%s' is negative", S->sym_dims[i]->name);
        put(&E, "    if (");
        mangle_name(&body, "d_", S->sym_dims[i]->name);
        put(&E, " < 0) return %d;\n", add_error(&E, msg));
    }
    /* every sparse map is checked before any loop reads through it */
    for (int i = 0; i < S->nmaps; i++) {
        const sym *m = S->maps[i];
        char msg[600];
        snprintf(msg, sizeof msg, "sparse map '%s' is invalid: it needs nsrc equal to the number of source "
                 "tuples, offsets from 0 that never decrease, and targets in range, ascending for each source",
                 m->name);
        E.uses_maps = 1;
        put(&E, "    if (tx_rt_map_check(");
        put_map(&E, i);
        put(&E, ", (int64_t)1");
        for (int j = 0; j < m->nsrc; j++) {
            put(&E, " * ");
            put_extent(&E, m->src_ext[j]);
        }
        put(&E, ", (int64_t)1");
        for (int j = 0; j < m->ndst; j++) {
            put(&E, " * ");
            put_extent(&E, m->dst_ext[j]);
        }
        put(&E, ")) return %d;\n", add_error(&E, msg));
    }
    /* extents only run time can compare: slices' boxes, min(m, n) */
    for (int i = 0; i < S->nchecks; i++) {
        const ext_check *c = &S->checks[i];
        if (ext_eq(c->a, c->b))
            continue; /* true by construction */
        put(&E, "    if (!((");
        put_extent(&E, c->a);
        put(&E, ") %s (", c->kind ? "<=" : "==");
        put_extent(&E, c->b);
        put(&E, "))) return %d;\n", add_error(&E, c->msg));
    }
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->op != OP_INDEX)
            continue;
        const g_value *w = v->in[0];
        for (int m = 0; m < w->rank; m++) {
            if (v->idx_label[m] >= 0 || w->ext[m].dim < 0)
                continue;
            char msg[800];
            snprintf(msg, sizeof msg, "%s:%u:%u: index %lld is out of range for mode %d of '%s'",
                     S->cst->src->name, v->chip_span[m].line, v->chip_span[m].col,
                     (long long)v->idx_chip[m], m, S->vars[w->var]->name);
            put(&E, "    if (!(%lld < ", (long long)v->idx_chip[m]);
            put_extent(&E, w->ext[m]);
            put(&E, ")) return %d;\n", add_error(&E, msg));
        }
    }
    /* liveness: an intermediate's buffer is allocated where it is computed
       and freed after its last reader (a fused value reads where its user
       is computed) */
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
        if (is_computed(g->v[k]) && last[k] >= 0) {
            free_next[k] = free_head[last[k]];
            free_head[last[k]] = k;
        }
    int ovf = add_error(&E, "the size of an intermediate overflows");
    workspace_plan ws = {0};
    int use_ws = o->jit && o->workspace && plan_workspace(&E, last, &ws) == 0;
    if (use_ws) {
        *o->workspace = (size_t)ws.size;
        put(&E, "    char *tx_ws = (char *)tx_args[%d];\n    tx_blk = (double *)tx_ws;\n", S->ntensors + S->nmaps + 1);
        for (int i = 0; i < S->nvars; i++)
            if (ws.var_off[i] >= 0) {
                put(&E, "    ");
                put_var(&E, i);
                put(&E, " = (%s *)(tx_ws + %lld);\n", ctype(S->vars[i]->dt), (long long)ws.var_off[i]);
            }
    } else if (o->workspace)
        *o->workspace = 0;
    /* sizes (overflow-checked) and allocations */
    for (int i = 0; i < S->nvars; i++) {
        sym *t = S->vars[i];
        char msg[600];
        snprintf(msg, sizeof msg, "the size of '%s' overflows", t->name);
        int code = add_error(&E, msg);
        emit_size(&E, t->ext, t->rank, t->dt == DT_F32 ? 4 : 8, code);
        if ((t->io == IO_TMP || t->io == IO_LET) && !use_ws) {
            put(&E, "    ");
            put_var(&E, i);
            put(&E, " = (%s *)malloc(tx_n ? (unsigned long)tx_n : 1);\n    if (!", ctype(t->dt));
            put_var(&E, i);
            put(&E, ") { tx_status = %d; goto tx_done; }\n", oom);
        }
    }

    /* the statements */
    int cur_stmt = -2;
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (v->dead || v->inlined || v->op == OP_INPUT || v->op == OP_CONST || v->op == OP_INDEX)
            continue;
        if (v->stmt != cur_stmt) {
            if (o->timing && cur_stmt >= 0)
                put(&E, "    tx_times[%d] += tx_rt_now() - tx_t0;\n", cur_stmt);
            cur_stmt = v->stmt;
            put(&E, "\n    /* statement %d, line %u */\n", v->stmt + 1, v->span.line);
            if (o->timing)
                put(&E, "    tx_t0 = tx_rt_now();\n");
        }
        /* a multi-result call writes its parts: they get memory first */
        g_value *parts[3] = {0, 0, 0}, *alloc[4] = {v, 0, 0, 0};
        int nalloc = 1;
        if (v->op == OP_PART)
            nalloc = 0; /* allocated with its call */
        if (v->op == OP_LINALG && v->nout > 1)
            for (int j = k + 1; j < g->n && nalloc <= v->nout; j++)
                if (g->v[j]->op == OP_PART && g->v[j]->in[0] == v)
                    parts[g->v[j]->part] = alloc[nalloc++] = g->v[j];
        for (int a = 0; a < nalloc; a++) {
            g_value *w = alloc[a];
            if (!is_computed(w))
                continue;
            if (use_ws) {
                put(&E, "    tx_v%d = (%s *)(tx_ws + %lld);\n", w->id, ctype(w->dt), (long long)ws.off[w->id]);
            } else {
                emit_size(&E, w->ext, w->rank, w->dt == DT_F32 ? 4 : 8, ovf);
                put(&E, "    tx_v%d = (%s *)malloc(tx_n ? (unsigned long)tx_n : 1);\n", w->id, ctype(w->dt));
                put(&E, "    if (!tx_v%d) { tx_status = %d; goto tx_done; }\n", w->id, oom);
            }
        }
        if (v->op == OP_STORE) {
            if (!v->absorbed)
                emit_store(&E, v);
        } else if (v->op == OP_PART) {
            /* written by its call */
        } else if (v->op == OP_LINALG) {
            emit_linalg(&E, v, parts);
        } else if (v->op == OP_SLICE) {
            emit_slice(&E, v);
        } else if (v->blas)
            emit_blas(&E, v);
        else
            emit_compute(&E, v);
        for (int j = free_head[k]; !use_ws && j >= 0; j = free_next[j]) /* read for the last time here */
            put(&E, "    free(tx_v%d);\n    tx_v%d = 0;\n", j, j);
    }
    if (o->timing && cur_stmt >= 0)
        put(&E, "    tx_times[%d] += tx_rt_now() - tx_t0;\n", cur_stmt);

    put(&E, "\ntx_done:\n");
    if (use_ws) {
        put(&E, "    (void)tx_blk;\n    return tx_status;\n}\n");
        goto body_done;
    }
    put(&E, "    free(tx_blk);\n");
    for (int i = 0; i < S->nvars; i++)
        if (S->vars[i]->io == IO_TMP || S->vars[i]->io == IO_LET) {
            put(&E, "    free(");
            put_var(&E, i);
            put(&E, ");\n");
        }
    for (int k = 0; k < g->n; k++)
        if (is_computed(g->v[k]))
            put(&E, "    free(tx_v%d);\n", k);
    put(&E, "    return tx_status;\n}\n");
body_done:
    E.out = out;
    emit_prelude(&E); /* after the body: it knows which helpers the body used */
    if (!o->jit) {
        put(&E, "const char *%s_error(int code)\n{\n    switch (code) {\n    case 0: return \"success\";\n",
            o->fn_name);
        for (int i = 0; i < E.nerrs; i++) {
            put(&E, "    case %d: return ", E.errs[i].code);
            /* the library fills in details like the leading minor; a
               static table cannot */
            const char *m = E.errs[i].msg, *d = strstr(m, " (");
            if (d && strstr(d, "%lld"))
                m = arena_strndup(g->arena, m, (size_t)(d - m));
            string_literal(out, m);
            put(&E, ";\n");
        }
        put(&E, "    default: return \"unknown error\";\n    }\n}\n\n");
    }
    buf_put(out, body.p ? body.p : "", body.len);
    int failed = body.oom || out->oom;
    buf_free(&body);
    if (errs)
        *errs = E.errs;
    if (nerrs)
        *nerrs = E.nerrs;
    return failed ? -1 : 0;
}

int emit_header(graph *g, const emit_options *o, tx_buf *out)
{
    emitter E = {.g = g, .o = o, .out = out};
    sema_program *S = g->S;
    tx_buf guard = {0};
    buf_puts(&guard, "TX_GENERATED_");
    for (const char *p = o->fn_name; *p; p++)
        buf_printf(&guard, "%c", (*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
    buf_puts(&guard, "_H");
    put(&E, "/* Generated by txc %s. Do not edit. */\n#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n",
        TX_VERSION_STRING, guard.p, guard.p);
    put(&E, "/*\n * %s: computes the program's outputs from its inputs.\n *\n * Parameters, in order:\n",
        o->fn_name);
    for (int i = 0; i < S->nsym_dims; i++) {
        put(&E, " *   ");
        mangle_name(out, "d_", S->sym_dims[i]->name);
        put(&E, "  int64_t: the extent of dim %s\n", S->sym_dims[i]->name);
    }
    for (int i = 0; i < S->ntensors; i++) {
        sym *t = S->tensors[i];
        put(&E, " *   ");
        put_var(&E, t->var);
        put(&E, "  %s %s *: %s %s %s[", t->io == IO_IN ? "const" : "", ctype(t->dt),
            t->io == IO_IN ? "in" : t->io == IO_OUT ? "out" : "inout", t->dt == DT_F32 ? "f32" : "f64",
            t->name);
        for (int m = 0; m < t->rank; m++) {
            if (m)
                put(&E, ",");
            if (t->ext[m].dim >= 0)
                put(&E, "%s", S->dims[t->ext[m].dim]->name);
            else
                put(&E, "%lld", (long long)t->ext[m].value);
        }
        put(&E, "], row-major%s\n", t->rank == 0 ? " (one element)" : "");
    }
    for (int i = 0; i < S->nmaps; i++) {
        const sym *m = S->maps[i];
        put(&E, " *   ");
        put_map(&E, i);
        put(&E, "  const tx_sparse_map *: sparse map %s, from %d source to %d target label%s\n", m->name, m->nsrc,
            m->ndst, m->ndst == 1 ? "" : "s");
    }
    put(&E, " *\n * Returns 0 on success, or a code that %s_error() describes.\n */\n", o->fn_name);
    if (S->nmaps)
        put(&E, "#ifndef TX_SPARSE_MAP_DEFINED\n#define TX_SPARSE_MAP_DEFINED\n"
                "typedef struct {\n    int64_t nsrc;            /* source tuples, row-major over the source extents */\n"
                "    const int64_t *offsets;  /* nsrc + 1 entries: targets of source s are targets[offsets[s]..offsets[s+1]) */\n"
                "    const int64_t *targets;  /* target tuples, row-major over the target extents, ascending */\n"
                "} tx_sparse_map;\n#endif\n\n");
    put(&E, "int %s(", o->fn_name);
    int first = 1;
    for (int i = 0; i < S->nsym_dims; i++) {
        put(&E, "%sint64_t ", first ? "" : ", ");
        mangle_name(out, "d_", S->sym_dims[i]->name);
        first = 0;
    }
    for (int i = 0; i < S->ntensors; i++) {
        sym *t = S->tensors[i];
        put(&E, "%s%s%s *", first ? "" : ",\n        ", t->io == IO_IN ? "const " : "", ctype(t->dt));
        put_var(&E, t->var);
        first = 0;
    }
    for (int i = 0; i < S->nmaps; i++) {
        put(&E, "%sconst tx_sparse_map *", first ? "" : ",\n        ");
        put_map(&E, i);
        first = 0;
    }
    if (first)
        put(&E, "void");
    put(&E, ");\n\n/* What a non-zero return code of %s() means. */\nconst char *%s_error(int code);\n\n#endif\n",
        o->fn_name, o->fn_name);
    buf_free(&guard);
    return out->oom ? -1 : 0;
}
