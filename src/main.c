/*
 * main.c — txc, the command line over libtensorexpr (txc(1)). The only
 * file that prints or exits.
 *
 *   txc FILE.tx [-o OUT.c] [--header OUT.h] [--name FN] [-O0|-O1|-O2] [--no-blas]
 *   txc run FILE.tx NAME=FILE.npy ... [-D n=64 ...] [--random] [--time] [-O..]
 *   txc graph FILE.tx [--dot] [-O0|-O1|-O2]
 *   txc check FILE.tx
 *
 * Exit status: 0 success, 1 the program has errors, 2 bad usage, 3 a
 * run-time failure. Output files are written aside and renamed into place
 * only after everything succeeded, so a failed run loses nothing.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tensorexpr.h"
#include "npy.h"

enum { EXIT_PROGRAM = 1, EXIT_USAGE = 2, EXIT_RUNTIME = 3 };

static const char usage_text[] =
    "usage: txc FILE.tx [-o OUT.c] [--header OUT.h] [--name FN] [-O0|-O1|-O2] [--no-blas]\n"
    "       txc run FILE.tx NAME=FILE.npy ... [-D dim=N ...] [--random] [--time] [-O0|-O1|-O2]\n"
    "       txc graph FILE.tx [--dot] [-D dim=N ...] [-O0|-O1|-O2]\n"
    "       txc check FILE.tx\n"
    "       txc --help | --version\n";

static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("txc: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads a whole file; NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        errno = ENOMEM;
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (buf && err) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

/* If PATH is a symbolic link, the path it points to (whether that exists
   or not), malloc'd; else NULL. */
static char *link_target(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return NULL;
    char *real = realpath(path, NULL);
    if (real)
        return real;
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    const char *slash = strrchr(path, '/');
    size_t dir = buf[0] == '/' || !slash ? 0 : (size_t)(slash - path + 1);
    char *out = malloc(dir + (size_t)n + 1);
    if (out) {
        memcpy(out, path, dir);
        memcpy(out + dir, buf, (size_t)n + 1);
    }
    return out;
}

/* Writes DATA to PATH through a temporary file in the same directory,
   renamed into place only when complete. */
static int write_file_atomic(const char *path, const char *data, size_t len)
{
    struct stat st;
    if (strcmp(path, "-") == 0) /* standard output */
        return fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -1;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or pipe (-o /dev/stdout): write to it, never replace it */
        FILE *f = fopen(path, "wb");
        if (!f)
            return -1;
        int ok = fwrite(data, 1, len, f) == len;
        return fclose(f) == 0 && ok ? 0 : -1;
    }
    char *real = link_target(path);
    if (real) { /* a link: replace (or create) what it points to, keep the link */
        int r = write_file_atomic(real, data, len);
        free(real);
        return r;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return -1;
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        off += (size_t)w;
    }
    int ok = off == len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok) {
        chmod(tmp, 0644);
        ok = rename(tmp, path) == 0;
    }
    int saved = errno;
    if (!ok)
        unlink(tmp);
    free(tmp);
    errno = saved;
    return ok ? 0 : -1;
}

typedef struct {
    const char *file;
    int opt_level;
    int opt_set;
} common_opts;

static int parse_opt_level(const char *arg, common_opts *c)
{
    if (strcmp(arg, "-O0") == 0 || strcmp(arg, "-O1") == 0 || strcmp(arg, "-O2") == 0) {
        c->opt_level = arg[2] - '0';
        c->opt_set = 1;
        return 1;
    }
    return 0;
}

/* Compiles FILE; prints diagnostics and returns NULL on failure, with *STATUS
   the exit code. */
static tx_program *compile_file(tx_ctx *ctx, const char *file, int *status)
{
    size_t len;
    char *src = read_file(file, &len);
    if (!src) {
        fprintf(stderr, "txc: cannot read %s: %s\n", file, strerror(errno));
        *status = errno == ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
        return NULL;
    }
    tx_program *p = tx_compile(ctx, src, len, file);
    free(src);
    if (!p) {
        if (tx_errcode(ctx) == TX_ERR_NOMEM) {
            fprintf(stderr, "txc: %s: out of memory\n", file);
            *status = EXIT_RUNTIME;
            return NULL;
        }
        fputs(tx_errmsg(ctx), stderr);
        *status = EXIT_PROGRAM;
    }
    return p;
}

/* A context with C's options, and C's file compiled in it (diagnostics
   printed); NULL with *STATUS set if that failed. *CTX is NULL or the
   context, to be freed by the caller. */
static tx_program *start(const common_opts *c, tx_ctx **ctx, int *status)
{
    *ctx = tx_new();
    if (!*ctx) {
        fprintf(stderr, "txc: out of memory\n");
        *status = EXIT_RUNTIME;
        return NULL;
    }
    if (c->opt_set)
        tx_set_option(*ctx, TX_OPTION_OPT_LEVEL, c->opt_level);
    return compile_file(*ctx, c->file, status);
}

/* ---- txc FILE.tx: emit C ---- */

static char *replace_ext(const char *file, const char *ext)
{
    size_t n = strlen(file);
    const char *slash = strrchr(file, '/');
    const char *dot = strrchr(file, '.');
    if (dot && (!slash || dot > slash + 1) && dot != file)
        n = (size_t)(dot - file);
    char *out = malloc(n + strlen(ext) + 1);
    if (!out)
        return NULL;
    memcpy(out, file, n);
    strcpy(out + n, ext);
    return out;
}

static int cmd_emit(int argc, char **argv)
{
    common_opts c = {0};
    const char *out = NULL, *header = NULL, *name = NULL;
    int no_blas = 0, header_default = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (parse_opt_level(a, &c))
            continue;
        if (strcmp(a, "--header") == 0) {
            /* the path is optional: FILE.h next to the output by default */
            size_t n = i + 1 < argc ? strlen(argv[i + 1]) : 0;
            if (n > 2 && strcmp(argv[i + 1] + n - 2, ".h") == 0)
                header = argv[++i];
            else
                header_default = 1;
        } else if (strncmp(a, "--header=", 9) == 0) {
            header = a + 9;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--name") == 0)) {
            if (i + 1 >= argc)
                return usage("%s needs an argument", a);
            const char **dst = a[1] == 'o' ? &out : &name;
            *dst = argv[++i];
        } else if (strcmp(a, "--no-blas") == 0)
            no_blas = 1;
        else if (a[0] == '-' && a[1])
            return usage("unknown option '%s'", a);
        else if (c.file)
            return usage("more than one input file ('%s' and '%s')", c.file, a);
        else
            c.file = a;
    }
    if (!c.file)
        return usage("no input file");
    tx_ctx *ctx;
    int status = 0;
    tx_program *p = start(&c, &ctx, &status);
    if (!p) {
        tx_free(ctx);
        return status;
    }
    char *out_path = out ? strdup(out) : replace_ext(c.file, ".c");
    /* the default header goes next to the output, or next to the input
       when the output is a device or standard output */
    struct stat ost;
    int out_special = out && (strcmp(out, "-") == 0 || (stat(out, &ost) == 0 && !S_ISREG(ost.st_mode)));
    char *header_path = header_default && !header && out_path
                            ? replace_ext(out_special ? c.file : out_path, ".h") : NULL;
    if (header_path)
        header = header_path;
    tx_emit_options eo = {.name = name, .no_blas = no_blas};
    size_t len = 0, hlen = 0;
    char *code = tx_emit(p, &eo, &len);
    eo.header = 1;
    char *hcode = header ? tx_emit(p, &eo, &hlen) : NULL;
    if (!code && name) {
        int st = usage("--name: %s", tx_errmsg(ctx));
        tx_program_free(p);
        tx_free(ctx);
        free(out_path);
        free(header_path);
        return st;
    }
    if (!code && tx_errcode(ctx) == TX_ERR_COMPILE) { /* e.g. LAPACK calls with --no-blas */
        fputs(tx_errmsg(ctx), stderr);
        status = EXIT_PROGRAM;
    } else if (!out_path || !code || (header && !hcode)) {
        fprintf(stderr, "txc: %s\n", tx_errmsg(ctx));
        status = EXIT_RUNTIME;
    } else if (write_file_atomic(out_path, code, len) < 0) {
        fprintf(stderr, "txc: cannot write %s: %s\n", out_path, strerror(errno));
        status = EXIT_RUNTIME;
    } else if (header && write_file_atomic(header, hcode, hlen) < 0) {
        fprintf(stderr, "txc: cannot write %s: %s\n", header, strerror(errno));
        status = EXIT_RUNTIME;
    }
    free(code);
    free(hcode);
    free(out_path);
    free(header_path);
    tx_program_free(p);
    tx_free(ctx);
    return status;
}

/* ---- txc graph / check ---- */

static int cmd_graph(int argc, char **argv, int check_only)
{
    common_opts c = {0};
    int dot = 0, nd = 0;
    const char *dims[64];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!check_only && parse_opt_level(a, &c))
            continue;
        if (!check_only && strncmp(a, "-D", 2) == 0) {
            const char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!d || !strchr(d, '=') || nd == 64)
                return usage("-D needs dim=N");
            dims[nd++] = d;
        } else if (!check_only && strcmp(a, "--dot") == 0)
            dot = 1;
        else if (a[0] == '-' && a[1])
            return usage("unknown option '%s'", a);
        else if (c.file)
            return usage("more than one input file ('%s' and '%s')", c.file, a);
        else
            c.file = a;
    }
    if (!c.file)
        return usage("no input file");
    tx_ctx *ctx;
    int status = 0;
    tx_program *p = start(&c, &ctx, &status);
    for (int j = 0; p && j < nd; j++) {
        const char *eq = strchr(dims[j], '=');
        char *name = strndup(dims[j], (size_t)(eq - dims[j]));
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        if (!name || *end || end == eq + 1 || v < 0 || tx_set_dim(p, name, v) != TX_OK) {
            fprintf(stderr, "txc: -D %s: %s\n", dims[j], *end || v < 0 ? "the extent must be a non-negative integer"
                                                                      : tx_errmsg(ctx));
            status = EXIT_USAGE;
        }
        free(name);
    }
    if (p && !check_only && !status) {
        char *g = tx_graph(p, dot, NULL);
        if (g)
            fputs(g, stdout);
        else
            status = EXIT_RUNTIME;
        free(g);
    }
    tx_program_free(p);
    tx_free(ctx);
    return status;
}

/* ---- txc run ---- */

typedef struct {
    const char *name;
    const char *file;
    tx_tensor_info info;
    void *data;
    int64_t shape[32];
    char *tmp_path;
    char *real;       /* the file a link output points to */
    int direct;       /* a device or pipe: written in place, last */
} run_binding;

static size_t elem_size(tx_dtype t) { return t == TX_F32 ? 4 : 8; }

/* Loads FILE as tensor B, converting f4/f8 to the declared element type. */
static int load_input(run_binding *b)
{
    char err[512];
    npy_array a;
    if (npy_read(b->file, &a, err, sizeof err) < 0) {
        fprintf(stderr, "txc: tensor '%s': %s\n", b->name, err);
        return -1;
    }
    if (a.dtype == NPY_BOOL) {
        fprintf(stderr, "txc: tensor '%s': %s has dtype '|b1'; tensors take '<f8' or '<f4'\n", b->name, b->file);
        npy_free(&a);
        return -1;
    }
    if (a.ndim != b->info.ndim) {
        fprintf(stderr, "txc: tensor '%s': %s has %d dimension%s, but '%s' has %d mode%s\n", b->name, b->file,
                a.ndim, a.ndim == 1 ? "" : "s", b->name, b->info.ndim, b->info.ndim == 1 ? "" : "s");
        npy_free(&a);
        return -1;
    }
    memcpy(b->shape, a.shape, sizeof(int64_t) * (size_t)a.ndim);
    int want32 = b->info.dtype == TX_F32;
    if ((a.dtype == NPY_F32) == want32) {
        b->data = a.data;
        return 0;
    }
    void *conv = malloc((size_t)(a.nelem ? a.nelem : 1) * elem_size(b->info.dtype));
    if (!conv) {
        fprintf(stderr, "txc: tensor '%s': out of memory converting %s\n", b->name, b->file);
        npy_free(&a);
        return -1;
    }
    for (int64_t i = 0; i < a.nelem; i++) {
        if (want32)
            ((float *)conv)[i] = (float)((double *)a.data)[i];
        else
            ((double *)conv)[i] = (double)((float *)a.data)[i];
    }
    npy_free(&a);
    b->data = conv;
    return 0;
}

/* A small, seeded generator (splitmix64) for --random: reproducible runs. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rng_uniform(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

static int64_t count_elems(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && n > INT64_MAX / shape[i])
            return -1;
        n *= shape[i];
    }
    return n;
}

/* Prints an output that has no file: all of a small one, the start and
   the sum of a large one. */
static void print_tensor(const run_binding *b)
{
    int64_t n = count_elems(b->shape, b->info.ndim);
    const char *t = b->info.dtype == TX_F32 ? "f32" : "f64";
    if (b->info.ndim == 0) {
        double x = b->info.dtype == TX_F32 ? *(float *)b->data : *(double *)b->data;
        printf("%s = %.17g (%s)\n", b->name, x, t);
        return;
    }
    printf("%s = array of shape (", b->name);
    for (int i = 0; i < b->info.ndim; i++)
        printf("%s%lld", i ? ", " : "", (long long)b->shape[i]);
    printf("%s), %s:", b->info.ndim == 1 ? "," : "", t);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = b->info.dtype == TX_F32 ? ((float *)b->data)[i] : ((double *)b->data)[i];
        sum += x;
        if (i < 20)
            printf(" %.10g", x);
    }
    if (n > 20)
        printf(" ... (%lld elements, sum %.10g)", (long long)n, sum);
    printf("\n");
}

typedef struct {
    tx_map_info info;
    const char *file;
    int64_t *offsets, *targets;
    tx_sparse_map m;
} map_binding;

/* Binds sparse map B from its mask file (non-zero: the pair is in the
   map), or a seeded random half-full mask with --random. */
static int load_map(tx_program *p, tx_ctx *ctx, map_binding *b, int random_inputs)
{
    int64_t shape[64];
    int n = b->info.nsrc + b->info.ndst;
    if (!b->file && !random_inputs) {
        fprintf(stderr, "txc: sparse map '%s' is not bound; give %s=MASK.npy or --random\n", b->info.name,
                b->info.name);
        return -1;
    }
    if (tx_map_shape(p, b->info.name, shape) != TX_OK) {
        fprintf(stderr, "txc: %s\n", tx_errmsg(ctx));
        return -1;
    }
    int64_t nsrc = count_elems(shape, b->info.nsrc), ndst = count_elems(shape + b->info.nsrc, b->info.ndst);
    npy_array a = {0};
    char err[512];
    if (b->file) {
        if (npy_read(b->file, &a, err, sizeof err) < 0) {
            fprintf(stderr, "txc: sparse map '%s': %s\n", b->info.name, err);
            return -1;
        }
        int ok = a.ndim == n;
        for (int i = 0; ok && i < n; i++)
            ok = a.shape[i] == shape[i];
        if (!ok) {
            fprintf(stderr, "txc: sparse map '%s': %s has shape (", b->info.name, b->file);
            for (int i = 0; i < a.ndim; i++)
                fprintf(stderr, "%s%lld", i ? ", " : "", (long long)a.shape[i]);
            fprintf(stderr, "), but the map's source and target modes are (");
            for (int i = 0; i < n; i++)
                fprintf(stderr, "%s%lld", i ? ", " : "", (long long)shape[i]);
            fprintf(stderr, ")\n");
            npy_free(&a);
            return -1;
        }
    }
    if (nsrc < 0 || ndst < 0 || (ndst && nsrc > INT64_MAX / ndst)) {
        fprintf(stderr, "txc: sparse map '%s' is too large\n", b->info.name);
        npy_free(&a);
        return -1;
    }
    /* the mask as bytes, from the file or drawn */
    unsigned char *on = malloc((size_t)(nsrc > 0 && ndst > 0 ? nsrc * ndst : 1));
    b->offsets = malloc(sizeof(int64_t) * (size_t)(nsrc + 1));
    if (!on || !b->offsets) {
        fprintf(stderr, "txc: out of memory for sparse map '%s'\n", b->info.name);
        free(on);
        npy_free(&a);
        return -1;
    }
    int64_t count = 0;
    for (int64_t i = 0; i < nsrc * ndst; i++) {
        if (!b->file)
            on[i] = rng_uniform() > 0;
        else if (a.dtype == NPY_BOOL)
            on[i] = ((unsigned char *)a.data)[i] != 0;
        else if (a.dtype == NPY_F32)
            on[i] = ((float *)a.data)[i] != 0;
        else
            on[i] = ((double *)a.data)[i] != 0;
        count += on[i];
    }
    npy_free(&a);
    b->targets = malloc(sizeof(int64_t) * (size_t)(count ? count : 1));
    if (!b->targets) {
        fprintf(stderr, "txc: out of memory for sparse map '%s'\n", b->info.name);
        free(on);
        return -1;
    }
    int64_t e = 0;
    for (int64_t s = 0; s < nsrc; s++) {
        b->offsets[s] = e;
        for (int64_t t = 0; t < ndst; t++)
            if (on[s * ndst + t])
                b->targets[e++] = t;
    }
    b->offsets[nsrc] = e;
    free(on);
    b->m.nsrc = nsrc;
    b->m.offsets = b->offsets;
    b->m.targets = b->targets;
    if (tx_bind_sparse(p, b->info.name, &b->m) != TX_OK) {
        fprintf(stderr, "txc: %s\n", tx_errmsg(ctx));
        return -1;
    }
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    common_opts c = {0};
    int random_inputs = 0, timing = 0;
    int nb = 0;
    run_binding *binds = calloc((size_t)argc + 1, sizeof *binds);
    const char **dims = calloc((size_t)argc + 1, sizeof *dims);
    int nd = 0;
    if (!binds || !dims)
        return fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME;
    int status = 0;
    for (int i = 1; i < argc && !status; i++) {
        const char *a = argv[i];
        if (parse_opt_level(a, &c))
            continue;
        if (strcmp(a, "--random") == 0)
            random_inputs = 1;
        else if (strcmp(a, "--time") == 0)
            timing = 1;
        else if (strcmp(a, "--backend") == 0) {
            if (i + 1 >= argc)
                status = usage("--backend needs 'tcc' or 'cc'");
            else if (strcmp(argv[i + 1], "tcc") == 0)
                i++;
            else if (strcmp(argv[i + 1], "cc") == 0)
                status = usage("--backend cc is not available in this version; use tcc");
            else
                status = usage("unknown backend '%s'; use tcc or cc", argv[i + 1]);
        } else if (strncmp(a, "-D", 2) == 0) {
            const char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!d || !strchr(d, '='))
                status = usage("-D needs dim=N");
            else
                dims[nd++] = d;
        } else if (a[0] == '-' && a[1])
            status = usage("unknown option '%s'", a);
        else if (!c.file)
            c.file = a;
        else if (strchr(a, '=')) {
            const char *eq = strchr(a, '=');
            binds[nb].name = strndup(a, (size_t)(eq - a));
            binds[nb].file = eq + 1;
            if (!binds[nb].name || !*binds[nb].name || !*binds[nb].file)
                status = usage("'%s': a binding is NAME=FILE.npy", a);
            for (int k = 0; !status && k < nb; k++)
                if (strcmp(binds[k].name, binds[nb].name) == 0)
                    status = usage("'%s' is bound twice", binds[nb].name);
            nb++;
        } else
            status = usage("'%s': a binding is NAME=FILE.npy", a);
    }
    if (!status && !c.file)
        status = usage("no input file");
    tx_ctx *ctx = status ? NULL : tx_new();
    tx_program *p = NULL;
    double t_start = now(), t_compiled = 0, t_read = 0, t_ran = 0, t_written = 0;
    int ntensors = 0, nmaps = 0;
    run_binding *all = NULL;
    map_binding *maps = NULL;
    if (!status && !ctx)
        status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
    if (!status) {
        if (c.opt_set)
            tx_set_option(ctx, TX_OPTION_OPT_LEVEL, c.opt_level);
        tx_set_option(ctx, TX_OPTION_TIMING, timing);
        p = compile_file(ctx, c.file, &status);
        t_compiled = now();
    }
    if (!status) {
        /* every parameter tensor, with its file if one was given */
        ntensors = tx_tensor_count(p);
        all = calloc((size_t)ntensors + 1, sizeof *all);
        if (!all) {
            ntensors = 0;
            status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
        }
        for (int k = 0; !status && k < ntensors; k++) {
            tx_tensor_get(p, k, &all[k].info);
            all[k].name = all[k].info.name;
        }
        nmaps = tx_map_count(p);
        maps = calloc((size_t)nmaps + 1, sizeof *maps);
        if (!maps)
            status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
        for (int k = 0; !status && k < nmaps; k++)
            tx_map_get(p, k, &maps[k].info);
        for (int j = 0; !status && j < nb; j++) {
            int found = 0;
            for (int k = 0; k < ntensors; k++)
                if (strcmp(all[k].name, binds[j].name) == 0) {
                    all[k].file = binds[j].file;
                    found = 1;
                }
            for (int k = 0; k < nmaps; k++)
                if (strcmp(maps[k].info.name, binds[j].name) == 0) {
                    maps[k].file = binds[j].file;
                    found = 1;
                }
            if (!found) {
                fprintf(stderr, "txc: %s has no tensor '%s'; its tensors are:", c.file, binds[j].name);
                for (int k = 0; k < ntensors; k++)
                    fprintf(stderr, " %s", all[k].name);
                fprintf(stderr, "\n");
                status = EXIT_USAGE;
            }
        }
        for (int j = 0; !status && j < nd; j++) {
            const char *eq = strchr(dims[j], '=');
            char *name = strndup(dims[j], (size_t)(eq - dims[j]));
            char *end;
            errno = 0;
            long long v = strtoll(eq + 1, &end, 10);
            if (!name || *end || end == eq + 1 || errno || v < 0)
                status = usage("-D %s: the extent must be a non-negative integer", dims[j]);
            else if (tx_set_dim(p, name, v) != TX_OK)
                status = (fprintf(stderr, "txc: -D %s: %s\n", dims[j], tx_errmsg(ctx)), EXIT_USAGE);
            free(name);
        }
    }
    /* inputs from files */
    for (int k = 0; !status && k < ntensors; k++) {
        run_binding *b = &all[k];
        if (b->info.io == TX_OUT || !b->file)
            continue;
        if (load_input(b) < 0)
            status = EXIT_RUNTIME;
        else if (tx_bind(p, b->name, b->data, b->info.ndim, b->shape) != TX_OK)
            status = (fprintf(stderr, "txc: tensor '%s' (%s): %s\n", b->name, b->file, tx_errmsg(ctx)),
                      EXIT_RUNTIME);
    }
    /* random inputs, then outputs, once every dim is known */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; !status && k < ntensors; k++) {
            run_binding *b = &all[k];
            int is_input = b->info.io != TX_OUT;
            if (b->data || (pass == 0) != is_input)
                continue;
            if (is_input && !random_inputs) {
                fprintf(stderr, "txc: input tensor '%s' is not bound; give %s=FILE.npy or --random\n", b->name,
                        b->name);
                status = EXIT_RUNTIME;
                break;
            }
            if (tx_tensor_shape(p, b->name, b->shape) != TX_OK) {
                fprintf(stderr, "txc: %s\n", tx_errmsg(ctx));
                status = EXIT_RUNTIME;
                break;
            }
            int64_t n = count_elems(b->shape, b->info.ndim);
            size_t es = elem_size(b->info.dtype);
            if (n < 0 || (uint64_t)n > SIZE_MAX / es) {
                fprintf(stderr, "txc: tensor '%s' is too large\n", b->name);
                status = EXIT_RUNTIME;
                break;
            }
            b->data = calloc((size_t)(n ? n : 1), es);
            if (!b->data) {
                fprintf(stderr, "txc: out of memory for tensor '%s' (%lld elements)\n", b->name, (long long)n);
                status = EXIT_RUNTIME;
                break;
            }
            for (int64_t i = 0; is_input && i < n; i++) {
                if (b->info.dtype == TX_F32)
                    ((float *)b->data)[i] = (float)rng_uniform();
                else
                    ((double *)b->data)[i] = rng_uniform();
            }
            if (tx_bind(p, b->name, b->data, b->info.ndim, b->shape) != TX_OK) {
                fprintf(stderr, "txc: tensor '%s': %s\n", b->name, tx_errmsg(ctx));
                status = EXIT_RUNTIME;
            }
        }
    /* sparse maps, from masks over (source modes, target modes) */
    for (int k = 0; !status && k < nmaps; k++)
        if (load_map(p, ctx, &maps[k], random_inputs) < 0)
            status = EXIT_RUNTIME;
    t_read = now();
    if (!status && tx_run(p) != TX_OK) {
        const char *m = tx_errmsg(ctx);
        if (strncmp(m, c.file, strlen(c.file)) == 0) /* it names the file already */
            fprintf(stderr, "txc: %s\n", m);
        else
            fprintf(stderr, "txc: %s: %s\n", c.file, m);
        status = EXIT_RUNTIME;
    }
    t_ran = now();
    /* outputs: all written aside first, then renamed */
    for (int k = 0; !status && k < ntensors; k++) {
        run_binding *b = &all[k];
        if (b->info.io == TX_IN)
            continue;
        if (!b->file) {
            print_tensor(b);
            continue;
        }
        char err[512];
        struct stat st;
        if (stat(b->file, &st) == 0 && !S_ISREG(st.st_mode)) {
            b->direct = 1; /* a device or pipe: written last, in place */
            continue;
        }
        char *real = link_target(b->file);
        if (real) { /* a link: replace (or create) the file it points to, keep the link */
            b->real = real;
            b->file = real;
        }
        size_t n = strlen(b->file);
        b->tmp_path = malloc(n + 16);
        if (!b->tmp_path) {
            status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
            break;
        }
        memcpy(b->tmp_path, b->file, n);
        memcpy(b->tmp_path + n, ".tmp.XXXXXX", 12);
        int fd = mkstemp(b->tmp_path);
        if (fd < 0) {
            fprintf(stderr, "txc: tensor '%s': cannot write next to %s: %s\n", b->name, b->file, strerror(errno));
            free(b->tmp_path);
            b->tmp_path = NULL;
            status = EXIT_RUNTIME;
            break;
        }
        close(fd);
        if (npy_write(b->tmp_path, b->info.dtype == TX_F32 ? NPY_F32 : NPY_F64, b->info.ndim, b->shape, b->data,
                      err, sizeof err) < 0) {
            fprintf(stderr, "txc: tensor '%s': %s\n", b->name, err);
            unlink(b->tmp_path);
            free(b->tmp_path);
            b->tmp_path = NULL;
            status = EXIT_RUNTIME;
        }
    }
    for (int k = 0; k < ntensors; k++) {
        run_binding *b = &all[k];
        if (!b->tmp_path)
            continue;
        if (!status) {
            chmod(b->tmp_path, 0644);
            if (rename(b->tmp_path, b->file) != 0) {
                fprintf(stderr, "txc: cannot replace %s: %s\n", b->file, strerror(errno));
                status = EXIT_RUNTIME;
            }
        }
        if (status)
            unlink(b->tmp_path);
        free(b->tmp_path);
    }
    for (int k = 0; !status && k < ntensors; k++) {
        run_binding *b = &all[k];
        char err[512];
        if (b->direct && npy_write(b->file, b->info.dtype == TX_F32 ? NPY_F32 : NPY_F64, b->info.ndim, b->shape,
                                   b->data, err, sizeof err) < 0) {
            fprintf(stderr, "txc: tensor '%s': %s\n", b->name, err);
            status = EXIT_RUNTIME;
        }
    }
    for (int k = 0; k < ntensors; k++)
        free(all[k].real);
    t_written = now();
    if (timing && p && !status) {
        fprintf(stderr, "txc: compile (parse to graph)  %10.3f ms\n", 1e3 * (t_compiled - t_start));
        fprintf(stderr, "txc: read and bind inputs      %10.3f ms\n", 1e3 * (t_read - t_compiled));
        double jit = 0;
        tx_timing(p, -1, &jit, NULL);
        fprintf(stderr, "txc: jit (emit + libtcc)       %10.3f ms\n", 1e3 * jit);
        fprintf(stderr, "txc: run                       %10.3f ms\n", 1e3 * (t_ran - t_read - jit));
        for (int s = 0; s < tx_stmt_count(p); s++) {
            double sec;
            int line;
            tx_timing(p, s, &sec, &line);
            fprintf(stderr, "txc:   statement %d (line %d)%*s%10.3f ms\n", s + 1, line,
                    s + 1 < 10 ? 4 : 3, "", 1e3 * sec);
        }
        fprintf(stderr, "txc: write outputs             %10.3f ms\n", 1e3 * (t_written - t_ran));
    }
    for (int k = 0; k < ntensors; k++)
        free(all[k].data);
    free(all);
    for (int k = 0; k < nmaps; k++) {
        free(maps[k].offsets);
        free(maps[k].targets);
    }
    free(maps);
    for (int j = 0; j < nb; j++)
        free((char *)binds[j].name);
    free(binds);
    free(dims);
    tx_program_free(p);
    tx_free(ctx);
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage("no input file");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("txc %s\n", TX_VERSION_STRING);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "graph") == 0)
        return cmd_graph(argc - 1, argv + 1, 0);
    if (strcmp(cmd, "check") == 0)
        return cmd_graph(argc - 1, argv + 1, 1);
    return cmd_emit(argc, argv);
}
