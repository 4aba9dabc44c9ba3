/*
 * main.c — txc, the command line over libtensorexpr (txc(1)). The only
 * file that prints or exits.
 *
 *   txc FILE.tx [-o OUT.c] [--header OUT.h] [--name FN] [-O0|-O1|-O2] [--no-blas]
 *   txc run FILE.tx NAME=FILE.npy ... [-D n=64 ...] [--random] [--time] [-q] [-O..]
 *   txc graph FILE.tx [--dot] [--after PASS|all] [-O0|-O1|-O2]
 *   txc check FILE.tx
 *
 * Exit status: 0 success, 1 the program has errors, 2 bad usage, 3 a
 * run-time failure or an internal error (reported, never a crash).
 * Outputs that would overwrite the program, an input or each other are
 * refused before anything is read; every destination is checked before
 * anything is written, and cli_output.c writes them all or nothing, so a
 * failed run loses nothing.
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
#include "cli_output.h"
#include "cli_report.h"
#include "cli_mpi.h"

enum { EXIT_PROGRAM = 1, EXIT_USAGE = 2, EXIT_RUNTIME = 3 };

#define EMIT_SYNOPSIS "txc FILE.tx [-o OUT.c] [--header [OUT.h]] [--name FN] [-O0|-O1|-O2] [--no-blas]\n" \
                      "           [--target c|mpi]\n"
#define RUN_SYNOPSIS                                                                                 \
    "txc run FILE.tx [NAME=FILE.npy ...] [MAP=MASK.npy ...] [-D dim=N ...] [--random] [--time]\n"  \
    "               [--profile] [-q] [-O0|-O1|-O2] [--backend tcc|cc] [--threads N] [--mpi]\n" \
    "               [--no-huge-pages]\n"
#define GRAPH_SYNOPSIS "txc graph FILE.tx [--dot] [--after PASS|all] [-D dim=N ...] [-O0|-O1|-O2]\n" \
                       "          [--target mpi [--ranks P]]\n"
#define CHECK_SYNOPSIS "txc check FILE.tx\n"

static const char usage_text[] =
    "usage: " EMIT_SYNOPSIS
    "       " RUN_SYNOPSIS
    "       " GRAPH_SYNOPSIS
    "       " CHECK_SYNOPSIS
    "       txc --help | --version | COMMAND --help\n";

static const char help_text[] =
    "\n"
    "txc FILE.tx writes the program as C; run compiles it in memory and runs it;\n"
    "graph prints its optimised operation graph; check only checks it.\n"
    "In run, NAME=FILE.npy binds tensor NAME (an input is read from the file, an\n"
    "output written to it, an inout both) and MAP=MASK.npy binds sparse map MAP\n"
    "to a mask over its source and target modes. An option's value may follow\n"
    "it or an '=' (--name=FN, -D n=64, -Dn=64). Outputs are written all or\n"
    "nothing; one that would overwrite the program, an input or another output\n"
    "is refused (exit status 2).\n"
    "\n"
    "Optimisation levels: -O0 runs no optimisation pass (each product is one\n"
    "loop nest); -O1 the passes that need no sizes (cse, fold, dce, split, fuse:\n"
    "products stay loop nests, no BLAS); -O2, the default, also the contraction\n"
    "order and BLAS calls. Every level first runs delta (a delta summed against\n"
    "selects).\n"
    "\n"
    "'txc COMMAND --help' lists a command's options. The manual is txc(1); the\n"
    "language tx(5); the library tensorexpr(3).\n";

static const char emit_help[] =
    "usage: " EMIT_SYNOPSIS
    "Writes the program as C99, to FILE.c beside it unless told otherwise.\n"
    "  -o OUT.c           write the C to OUT.c ('-' for standard output)\n"
    "  --header [OUT.h]   also write a header (OUT.h, or beside the C source);\n"
    "  --header=OUT.h     --header takes the next argument only if it ends in .h\n"
    "  --name FN          name the C function FN (default: the file's base name)\n"
    "  -O0|-O1|-O2        the optimisation level (default -O2)\n"
    "  --no-blas          loops instead of BLAS calls\n"
    "  --target mpi       C for MPI: FN(MPI_Comm, ...), pdgemm and ScaLAPACK (tx_mpi(7))\n"
    "See txc(1) for the outputs' guarantees.\n";

static const char run_help[] =
    "usage: " RUN_SYNOPSIS
    "Compiles the program in memory and runs it.\n"
    "  NAME=FILE.npy   tensor NAME: an input is read from the file, an output\n"
    "                  written to it, an inout both; an output without a file\n"
    "                  is printed\n"
    "  MAP=MASK.npy    sparse map MAP, from a mask over its (source, target) modes\n"
    "  -D dim=N        give a symbolic dim its extent (also -Ddim=N)\n"
    "  --random        fill inputs and maps without a file with seeded random data\n"
    "  --time          print the time of each phase and statement on standard error\n"
    "  --profile       print where the run's time went: each statement and each of\n"
    "                  its loop nests and BLAS/LAPACK calls, with GFLOP/s or GB/s\n"
    "  -q, --quiet     print no output values (outputs without a file are dropped)\n"
    "  -O0|-O1|-O2     the optimisation level (default -O2)\n"
    "  --backend tcc   compile with libtcc in memory, the default (also --backend=tcc)\n"
    "  --backend cc    compile with the system compiler at -O3 ($TX_CC, else $CC, else cc),\n"
    "                  cached in $XDG_CACHE_HOME/tensorexpr; libtcc if that fails\n"
    "  --threads N     threads of the program's loops and of BLAS/LAPACK together\n"
    "                  (default: TX_NUM_THREADS, else every core)\n"
    "  --mpi           under mpirun: every rank runs the program (built with mpicc,\n"
    "                  cached); rank 0 reads the inputs and writes the outputs\n"
    "  --no-huge-pages input arrays and the program's memory in small pages (by\n"
    "                  default those of 2 MiB or more are advised MADV_HUGEPAGE)\n"
    "Outputs are written all or nothing; see OUTPUTS in txc(1).\n";

static const char graph_help[] =
    "usage: " GRAPH_SYNOPSIS
    "Prints the program's optimised operation graph, one node per line.\n"
    "  --dot           as Graphviz instead\n"
    "  --after PASS    the graph right after one stage instead of the end: lower\n"
    "                  (as lowered), cse, fold, dce, order, blas or fuse (the\n"
    "                  passes the level runs); --after all: after each in turn\n"
    "  -D dim=N        the extent of a dim, for the contraction order and the costs\n"
    "                  (also -Ddim=N; other dims are taken as 64)\n"
    "  -O0|-O1|-O2     the optimisation level (default -O2)\n"
    "  --target mpi    also each statement's distribution and communication volume\n"
    "  --ranks P       ... on P ranks (default 4)\n"
    "See txc(1) for how to read the listing.\n";

static const char check_help[] =
    "usage: " CHECK_SYNOPSIS
    "Parses and checks the program, printing its errors; nothing if there are none.\n";

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

/* Matches option NAME at argv[*I], given as "NAME VALUE" or "NAME=VALUE",
   or for a one-letter NAME (-o, -D) also as "-oVALUE". Returns 0 if it is
   another argument; else 1, with *VAL the value (NULL if there is none)
   and *I on the last argument used. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == 0)
        *val = *i + 1 < argc ? argv[++*i] : NULL;
    else if (a[n] == '=')
        *val = a + n + 1;
    else if (n == 2)
        *val = a + n;
    else
        return 0;
    if (*val && !**val)
        *val = NULL;
    return 1;
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

/* A buffer to write out: the C source or the header (an out_writer). */
typedef struct {
    const char *data;
    size_t len;
} text;

static int write_text(int fd, const char *name, const void *arg, char *err, size_t errlen)
{
    const text *t = arg;
    size_t off = 0;
    (void)name, (void)err, (void)errlen;
    while (off < t->len) {
        ssize_t w = write(fd, t->data + off, t->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = EIO;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
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
        if (tx_errcode(ctx) == TX_ERR_INTERNAL) { /* our bug, not the program's */
            fprintf(stderr, "txc: %s: %s\n", file, tx_errmsg(ctx));
            *status = EXIT_RUNTIME;
            return NULL;
        }
        fputs(tx_errmsg(ctx), stderr);
        *status = EXIT_PROGRAM;
    }
    return p;
}

/* Gives P the extents of the ND "-D dim=N" arguments DIMS (each has its
   '='), in order, up to the first that fails: 0, or the exit status
   after the message (out of memory EXIT_RUNTIME; a value that is not a
   non-negative integer, or a dim that P refuses, EXIT_USAGE). */
static int set_dims(tx_program *p, tx_ctx *ctx, const char *const *dims, int nd)
{
    int status = 0;
    for (int j = 0; !status && j < nd; j++) {
        const char *eq = strchr(dims[j], '=');
        char *name = strndup(dims[j], (size_t)(eq - dims[j]));
        char *end;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (!name)
            status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
        else if (*end || end == eq + 1 || errno || v < 0)
            status = usage("-D %s: the extent must be a non-negative integer", dims[j]);
        else if (tx_set_dim(p, name, v) != TX_OK)
            status = (fprintf(stderr, "txc: -D %s: %s\n", dims[j], tx_errmsg(ctx)), EXIT_USAGE);
        free(name);
    }
    return status;
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
    const char *out = NULL, *header = NULL, *name = NULL, *val;
    int no_blas = 0, header_default = 0, mpi = 0;
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
            if (!a[9])
                return usage("--header= needs a path");
            header = a + 9;
        } else if (opt_value(argc, argv, &i, "-o", &val) || opt_value(argc, argv, &i, "--name", &val)) {
            if (!val)
                return usage("%s needs an argument", a[1] == 'o' ? "-o" : "--name");
            *(a[1] == 'o' ? &out : &name) = val;
        } else if (strcmp(a, "--no-blas") == 0)
            no_blas = 1;
        else if (opt_value(argc, argv, &i, "--target", &val)) {
            if (!val || (strcmp(val, "mpi") != 0 && strcmp(val, "c") != 0))
                return usage("--target needs 'c' (the default) or 'mpi'");
            mpi = strcmp(val, "mpi") == 0;
        }
        else if (a[0] == '-' && a[1])
            return usage("unknown option '%s'", a);
        else if (c.file)
            return usage("more than one input file ('%s' and '%s')", c.file, a);
        else
            c.file = a;
    }
    if (!c.file)
        return usage("no input file");
    if (mpi && no_blas)
        return usage("--target mpi needs BLAS: it cannot be combined with --no-blas");
    int to_stdout = out && strcmp(out, "-") == 0;
    char *out_path = out ? strdup(out) : replace_ext(c.file, ".c");
    /* the default header goes next to the output, or next to the input
       when the output is a device or standard output (also /dev/stdout
       redirected to a file) */
    struct stat ost;
    int out_special = to_stdout || (out && ((stat(out, &ost) == 0 && !S_ISREG(ost.st_mode)) ||
                                            strncmp(out, "/dev/", 5) == 0));
    char *header_path = header_default && !header && out_path
                            ? replace_ext(out_special ? c.file : out_path, ".h") : NULL;
    if (header_path)
        header = header_path;
    if (!out_path || (header_default && !header)) {
        free(out_path);
        return fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME;
    }
    /* nothing overwrites the program or each other: refused before the
       program is read */
    const char *out_dest = to_stdout ? "/dev/stdout" : out_path;
    int status = 0;
    int same_src = out_same_file(out_dest, c.file), same_hsrc = header ? out_same_file(header, c.file) : 0,
        same_hout = header ? out_same_file(header, out_dest) : 0;
    if (same_src < 0 || same_hsrc < 0 || same_hout < 0) {
        status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
    } else {
        if (same_src && out)
            status = (fprintf(stderr, "txc: -o %s would overwrite the program %s\n", out, c.file), EXIT_USAGE);
        else if (same_src)
            status = (fprintf(stderr, "txc: the C source would go to %s, the program itself; name another file "
                                      "with -o\n", out_path), EXIT_USAGE);
        if (same_hsrc)
            status = (fprintf(stderr, "txc: the header %s would overwrite the program %s\n", header, c.file),
                      EXIT_USAGE);
        else if (same_hout)
            status = (fprintf(stderr, "txc: the C source and the header would both go to %s\n", header),
                      EXIT_USAGE);
    }
    /* every destination is checked before anything is written */
    out_file outs[2] = {{.name = out_path, .write = write_text, .kind = to_stdout ? OUT_STDOUT : OUT_FILE},
                        {.name = header, .write = write_text}};
    int nout = header ? 2 : 1;
    char err[1024];
    for (int k = 0; !status && k < nout; k++)
        if (out_check(&outs[k], err, sizeof err) < 0)
            status = (fprintf(stderr, "txc: %s\n", err), EXIT_RUNTIME);
    tx_ctx *ctx = NULL;
    tx_program *p = status ? NULL : start(&c, &ctx, &status);
    char *code = NULL, *hcode = NULL;
    if (p) {
        tx_emit_options eo = {.name = name, .no_blas = no_blas, .mpi = mpi};
        size_t len = 0, hlen = 0;
        code = tx_emit(p, &eo, &len);
        eo.header = 1;
        hcode = header && code ? tx_emit(p, &eo, &hlen) : NULL;
        text tc = {code, len}, th = {hcode, hlen};
        outs[0].arg = &tc;
        outs[1].arg = &th;
        if (!code && name) {
            status = usage("--name: %s", tx_errmsg(ctx));
        } else if (!code && tx_errcode(ctx) == TX_ERR_COMPILE) { /* e.g. LAPACK calls with --no-blas */
            fputs(tx_errmsg(ctx), stderr);
            status = EXIT_PROGRAM;
        } else if (!code || (header && !hcode)) {
            fprintf(stderr, "txc: %s\n", tx_errmsg(ctx));
            status = EXIT_RUNTIME;
        } else if (out_write_all(outs, nout, err, sizeof err) < 0) {
            fprintf(stderr, "txc: %s\n", err);
            status = EXIT_RUNTIME;
        }
    }
    out_release(outs, nout);
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
    int dot = 0, nd = 0, mpi_ranks = 0, target_mpi = 0;
    const char *after = NULL;
    const char *dims[argc > 0 ? argc : 1]; /* at most one -D per argument */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!check_only && parse_opt_level(a, &c))
            continue;
        const char *val;
        if (!check_only && opt_value(argc, argv, &i, "--after", &val)) {
            if (!val)
                return usage("--after needs a pass name or 'all'");
            after = val;
        } else if (!check_only && strncmp(a, "-D", 2) == 0) {
            const char *d = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!d || !strchr(d, '='))
                return usage("-D needs dim=N");
            dims[nd++] = d;
        } else if (!check_only && strcmp(a, "--dot") == 0)
            dot = 1;
        else if (!check_only && opt_value(argc, argv, &i, "--target", &val)) {
            if (!val || (strcmp(val, "mpi") != 0 && strcmp(val, "c") != 0))
                return usage("--target needs 'c' (the default) or 'mpi'");
            target_mpi = strcmp(val, "mpi") == 0;
        } else if (!check_only && opt_value(argc, argv, &i, "--ranks", &val)) {
            char *end = NULL;
            long n = val ? strtol(val, &end, 10) : 0;
            if (!val || *end || n < 1 || n > 100000000)
                return usage("--ranks needs a number of ranks from 1 to 100000000");
            mpi_ranks = (int)n;
        }
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
    if (mpi_ranks && !target_mpi)
        return usage("--ranks goes with --target mpi");
    if (target_mpi && dot)
        return usage("--target mpi prints a listing: it cannot be combined with --dot");
    tx_program *p = start(&c, &ctx, &status);
    if (p && target_mpi)
        tx_set_option(ctx, TX_OPTION_MPI_RANKS, mpi_ranks ? mpi_ranks : 4);
    if (p)
        status = set_dims(p, ctx, dims, nd);
    if (p && !check_only && !status) {
        char *g = tx_graph_after(p, after, dot, NULL);
        if (g)
            fputs(g, stdout);
        else if (tx_errcode(ctx) == TX_ERR_ARG) /* a pass that is none, or not at this level */
            status = usage("--after: %s", tx_errmsg(ctx));
        else
            status = (fprintf(stderr, "txc: %s: %s\n", c.file, tx_errmsg(ctx)), EXIT_RUNTIME);
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
    int rows; /* --mpi: data is cli_mpi_share's (maybe by rows over the ranks) */
    int64_t shape[32];
} run_binding;

static size_t elem_size(tx_dtype t) { return t == TX_F32 ? 4 : t == TX_C128 ? 16 : 8; }
static int is_complex(tx_dtype t) { return t == TX_C64 || t == TX_C128; }
static const char *type_name(tx_dtype t)
{ return t == TX_F32 ? "f32" : t == TX_F64 ? "f64" : t == TX_C64 ? "c64" : "c128"; }

/* The element type of a .npy array of tensor data. */
static tx_dtype npy_tx_type(npy_dtype t)
{ return t == NPY_F32 ? TX_F32 : t == NPY_F64 ? TX_F64 : t == NPY_C64 ? TX_C64 : TX_C128; }

/* Part PART (0 real, 1 imaginary) of element I of DATA, of type T. */
static double part_at(const void *data, tx_dtype t, int64_t i, int part)
{
    switch (t) {
    case TX_F32: return part ? 0 : ((const float *)data)[i];
    case TX_F64: return part ? 0 : ((const double *)data)[i];
    case TX_C64: return ((const float *)data)[2 * i + part];
    default: return ((const double *)data)[2 * i + part];
    }
}

/* Sets part PART of element I of DATA (type T; a real one has no part 1). */
static void part_set(void *data, tx_dtype t, int64_t i, int part, double x)
{
    switch (t) {
    case TX_F32: if (!part) ((float *)data)[i] = (float)x; break;
    case TX_F64: if (!part) ((double *)data)[i] = x; break;
    case TX_C64: ((float *)data)[2 * i + part] = (float)x; break;
    default: ((double *)data)[2 * i + part] = x; break;
    }
}

/* Loads FILE as tensor B, converting f4/f8 to the declared element type;
   with HUGE, into memory advised for huge pages. */
static int load_input(run_binding *b, int huge)
{
    char err[512];
    npy_array a;
    if (npy_read(b->file, &a, huge, err, sizeof err) < 0) {
        fprintf(stderr, "txc: tensor '%s': %s\n", b->name, err);
        return -1;
    }
    if (a.dtype == NPY_BOOL) {
        fprintf(stderr, "txc: tensor '%s': %s has dtype '|b1'; tensors take '<f8', '<f4', '<c16' or '<c8'\n",
                b->name, b->file);
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
    tx_dtype have = npy_tx_type(a.dtype);
    if (is_complex(have) && !is_complex(b->info.dtype)) {
        fprintf(stderr, "txc: tensor '%s': %s is complex ('%s'), but '%s' is real (%s)\n", b->name, b->file,
                npy_dtype_name(a.dtype), b->name, type_name(b->info.dtype));
        npy_free(&a);
        return -1;
    }
    if (have == b->info.dtype) {
        b->data = a.data;
        return 0;
    }
    void *conv = malloc((size_t)(a.nelem ? a.nelem : 1) * elem_size(b->info.dtype));
    if (!conv) {
        fprintf(stderr, "txc: tensor '%s': out of memory converting %s\n", b->name, b->file);
        npy_free(&a);
        return -1;
    }
    for (int64_t i = 0; i < a.nelem; i++) /* a real file into a complex tensor: imaginary parts 0 */
        for (int part = 0; part < 2; part++)
            part_set(conv, b->info.dtype, i, part, part_at(a.data, have, i, part));
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
    const char *t = type_name(b->info.dtype);
    int cx = is_complex(b->info.dtype);
    if (b->info.ndim == 0) {
        double x = part_at(b->data, b->info.dtype, 0, 0);
        if (cx)
            printf("%s = %.17g%+.17gj (%s)\n", b->name, x, part_at(b->data, b->info.dtype, 0, 1), t);
        else
            printf("%s = %.17g (%s)\n", b->name, x, t);
        return;
    }
    printf("%s = array of shape (", b->name);
    for (int i = 0; i < b->info.ndim; i++)
        printf("%s%lld", i ? ", " : "", (long long)b->shape[i]);
    printf("%s), %s:", b->info.ndim == 1 ? "," : "", t);
    double sum = 0, sum_im = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = part_at(b->data, b->info.dtype, i, 0), y = part_at(b->data, b->info.dtype, i, 1);
        sum += x;
        sum_im += y;
        if (i < 20 && cx)
            printf(" %.10g%+.10gj", x, y);
        else if (i < 20)
            printf(" %.10g", x);
    }
    if (n > 20 && cx)
        printf(" ... (%lld elements, sum %.10g%+.10gj)", (long long)n, sum, sum_im);
    else if (n > 20)
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
        if (npy_read(b->file, &a, 0, err, sizeof err) < 0) {
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
        else
            on[i] = part_at(a.data, npy_tx_type(a.dtype), i, 0) != 0 || part_at(a.data, npy_tx_type(a.dtype), i, 1) != 0;
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

/* Refuses (exit status 2) a binding whose output would overwrite the
   program, an input (a tensor or a sparse map's mask) or another output;
   an inout tensor's own file is its own. IO[j] is the binding's TX_IN,
   TX_OUT or TX_INOUT (TX_IN for a map). */
static int check_run_aliases(const char *source, const run_binding *binds, const int *io, int nb)
{
    int status = 0, same;
    for (int j = 0; j < nb; j++) {
        int out_j = io[j] != TX_IN;
        if (out_j && (same = out_same_file(binds[j].file, source)) < 0)
            return fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME;
        if (out_j && same) {
            fprintf(stderr, "txc: output '%s' would overwrite the program %s (%s=%s)\n", binds[j].name, source,
                    binds[j].name, binds[j].file);
            status = EXIT_USAGE;
        }
        for (int k = j + 1; k < nb; k++) {
            int out_k = io[k] != TX_IN;
            if (!out_j && !out_k)
                continue;
            if ((same = out_same_file(binds[j].file, binds[k].file)) < 0)
                return fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME;
            if (!same)
                continue;
            if (out_j && out_k)
                fprintf(stderr, "txc: outputs '%s' and '%s' would both be written to one file (%s=%s, %s=%s)\n",
                        binds[j].name, binds[k].name, binds[j].name, binds[j].file, binds[k].name, binds[k].file);
            else {
                const run_binding *o = out_j ? &binds[j] : &binds[k], *in = out_j ? &binds[k] : &binds[j];
                fprintf(stderr, "txc: output '%s' would overwrite input '%s' (%s=%s, %s=%s)\n", o->name, in->name,
                        o->name, o->file, in->name, in->file);
            }
            status = EXIT_USAGE;
        }
    }
    return status;
}

/* Writes the output tensor ARG (a run_binding) to FD as .npy (an out_writer). */
static int write_npy(int fd, const char *name, const void *arg, char *err, size_t errlen)
{
    const run_binding *b = arg;
    npy_dtype t = b->info.dtype == TX_F32 ? NPY_F32 : b->info.dtype == TX_F64 ? NPY_F64 :
                  b->info.dtype == TX_C64 ? NPY_C64 : NPY_C128;
    return npy_write_fd(fd, name, t, b->info.ndim, b->shape, b->data, err, errlen);
}

/* ---- txc run --mpi (cli_mpi.c builds and loads the program) ---- */

/* Builds P for the MPI target, loads it and starts MPI: *M and *RANK. */
static int mpi_start(tx_program *p, tx_ctx *ctx, const char *file, int nmaps, int timed, cli_mpi **m, int *rank)
{
    if (nmaps > 0) {
        fprintf(stderr, "txc: %s: --mpi does not run programs with sparse maps\n", file);
        return EXIT_USAGE;
    }
    tx_emit_options eo = {.name = "txc_mpi_program", .mpi = 1};
    size_t len = 0;
    char *code = tx_emit(p, &eo, &len);
    if (!code) {
        fprintf(stderr, "txc: %s: %s\n", file, tx_errmsg(ctx));
        return EXIT_RUNTIME;
    }
    char err[1024];
    *m = cli_mpi_open(code, len, eo.name, timed, err, sizeof err);
    free(code);
    if (!*m)
        return (fprintf(stderr, "txc: %s\n", err), EXIT_RUNTIME);
    *rank = cli_mpi_rank(*m);
    return 0;
}

/* Rank 0's STATUS to every rank; then each input rank 0 read (shape, then
   data) to the others, who bind it: an input the program takes by rows
   is scattered in blocks of rows (cli_mpi_share), every other one
   broadcast. */
static int mpi_share_inputs(cli_mpi *m, tx_program *p, tx_ctx *ctx, run_binding *all, int ntensors, int status)
{
    int rank = cli_mpi_rank(m);
    int st = cli_mpi_agree(m, status);
    if (st && !status)
        fprintf(stderr, "txc: rank %d: stopped: rank 0 could not read the inputs or check the outputs\n", rank);
    for (int k = 0; !st && k < ntensors; k++) {
        run_binding *b = &all[k];
        if (b->info.io == TX_OUT || !b->file)
            continue;
        int bad = 0;
        if (cli_mpi_bcast(m, b->shape, sizeof b->shape) < 0)
            bad = 1;
        int64_t n = count_elems(b->shape, b->info.ndim);
        size_t bytes = (size_t)(n > 0 ? n : 0) * elem_size(b->info.dtype);
        if (!bad && b->info.io != TX_OUT) { /* by rows, if the program takes it so */
            void *mem = NULL;
            int sh = cli_mpi_share(m, k, rank == 0 ? b->data : NULL, bytes, b->info.ndim, b->shape, &mem);
            if (sh == 0) {
                if (rank == 0)
                    free(b->data);
                b->data = mem;
                b->rows = 1;
                if (tx_bind(p, b->name, b->data, b->info.ndim, b->shape) != TX_OK)
                    bad = (fprintf(stderr, "txc: rank %d: tensor '%s': %s\n", rank, b->name, tx_errmsg(ctx)), 1);
            } else if (sh < 0)
                bad = (fprintf(stderr, "txc: rank %d: tensor '%s': out of memory (or a failed message) sharing "
                                       "it across the ranks\n", rank, b->name), 1);
            if (sh <= 0) {
                if (cli_mpi_agree(m, bad)) {
                    fprintf(stderr, "txc: rank %d: tensor '%s' could not be shared across the ranks\n", rank,
                            b->name);
                    st = EXIT_RUNTIME;
                }
                continue;
            }
        }
        if (!bad && rank != 0) {
            b->data = malloc(bytes ? bytes : 1);
            if (!b->data)
                bad = 1;
        }
        bad = cli_mpi_agree(m, bad);
        if (!bad && cli_mpi_bcast(m, b->data, bytes) < 0)
            bad = 1;
        if (!bad && rank != 0 && tx_bind(p, b->name, b->data, b->info.ndim, b->shape) != TX_OK)
            bad = (fprintf(stderr, "txc: rank %d: tensor '%s': %s\n", rank, b->name, tx_errmsg(ctx)), 1);
        if (cli_mpi_agree(m, bad)) {
            fprintf(stderr, "txc: rank %d: tensor '%s' could not be shared across the ranks\n", rank, b->name);
            st = EXIT_RUNTIME;
        }
    }
    return st;
}

/* One line of --time: WHAT and its seconds, in milliseconds. */
static void time_line(const char *what, double sec)
{
    fprintf(stderr, "txc: %-26s%10.3f ms\n", what, 1e3 * sec);
}

/* --time's line for each of the first N statements of P: its seconds in
   T, or tx_timing's when T is NULL. */
static void time_statements(tx_program *p, const double *t, int n)
{
    for (int s = 0; s < n; s++) {
        double sec;
        int line;
        char what[48];
        tx_timing(p, s, &sec, &line);
        snprintf(what, sizeof what, "  statement %d (line %d)", s + 1, line);
        time_line(what, t ? t[s] : sec);
    }
}

/* --time under --mpi, on rank 0: the phases up to the run (seconds), the
   run on its slowest rank (RUN: this rank's), and each statement on the
   rank where it took longest (collective: every rank calls it). */
static void mpi_print_times(cli_mpi *m, tx_program *p, double compile, double build, double read, double run)
{
    int n = tx_stmt_count(p);
    double *t = calloc((size_t)(n > 0 ? n : 1), sizeof *t);
    int k = t ? cli_mpi_times(m, t, n) : 0;
    run = cli_mpi_max(m, run);
    if (cli_mpi_rank(m) == 0) {
        char what[48];
        snprintf(what, sizeof what, "run, slowest of %d rank%s", cli_mpi_size(m), cli_mpi_size(m) == 1 ? "" : "s");
        time_line("compile (parse to graph)", compile);
        time_line("build for MPI (mpicc)", build);
        time_line("read and share inputs", read);
        time_line(what, run);
        time_statements(p, t, k < n ? k : n);
    }
    free(t);
}

/* --profile under --mpi, on rank 0: each statement and each of its calls
   on the rank where it took longest, rates from the whole computation's
   work, shares of the run on its slowest rank (RUN: this rank's seconds);
   collective: every rank calls it. */
static void mpi_print_profile(cli_mpi *m, tx_program *p, double run)
{
    int nst = tx_stmt_count(p);
    cli_mpi_call_info ci;
    int ncalls = cli_mpi_call_info_at(m, -1, &ci);
    double *t = calloc((size_t)(nst + ncalls) + 1, sizeof *t);
    int *line = calloc((size_t)nst + 1, sizeof *line);
    profile_call *c = calloc((size_t)ncalls + 1, sizeof *c);
    int k = t ? cli_mpi_times(m, t, nst + ncalls) : 0; /* collective, on every rank */
    run = cli_mpi_max(m, run);
    if (cli_mpi_rank(m) == 0) {
        if (!t || !line || !c || k != nst + ncalls)
            fprintf(stderr, "txc: no profile: %s\n", t && line && c ? "the program's times do not match its calls"
                                                                     : "out of memory");
        else {
            double stmts = 0, sec;
            for (int s = 0; s < nst; s++) {
                tx_timing(p, s, &sec, &line[s]);
                stmts += t[s];
            }
            for (int i = 0; i < ncalls; i++) {
                cli_mpi_call_info_at(m, i, &ci);
                c[i] = (profile_call){ci.kind, ci.op, ci.stmt, t[nst + i], ci.flops, ci.bytes};
            }
            char head[200];
            snprintf(head, sizeof head, "txc: profile of one run on %d rank%s: %.3f ms on the slowest (statements "
                     "%.3f ms); each time the slowest rank's, each rate the whole work over it",
                     cli_mpi_size(m), cli_mpi_size(m) == 1 ? "" : "s", 1e3 * run, 1e3 * stmts);
            print_profile_table(head, 1e3 * run, nst, t, line, ncalls, c);
        }
    }
    free(t);
    free(line);
    free(c);
}

/* Runs the loaded program on every rank; its error on every rank. */
static int mpi_run(cli_mpi *m, tx_program *p, tx_ctx *ctx, const char *file, run_binding *all, int ntensors)
{
    int rank = cli_mpi_rank(m), nd = 0, bad = 0;
    int64_t dims[256];
    void **ptrs = calloc((size_t)ntensors + 1, sizeof *ptrs);
    if (!ptrs || tx_dim_values(p, dims, 256, &nd) != TX_OK) {
        fprintf(stderr, "txc: rank %d: %s\n", rank, ptrs ? tx_errmsg(ctx) : "out of memory");
        bad = 1;
    }
    /* what tx_run would check: every binding has the declared extents */
    for (int k = 0; !bad && k < ntensors; k++) {
        int64_t want[32];
        if (tx_tensor_shape(p, all[k].name, want) != TX_OK) {
            fprintf(stderr, "txc: rank %d: %s\n", rank, tx_errmsg(ctx));
            bad = 1;
        }
        for (int d = 0; !bad && d < all[k].info.ndim; d++)
            if (want[d] != all[k].shape[d]) {
                fprintf(stderr, "txc: rank %d: tensor '%s': mode %d has extent %lld, the program needs %lld\n",
                        rank, all[k].name, d, (long long)all[k].shape[d], (long long)want[d]);
                bad = 1;
            }
        ptrs[k] = all[k].data;
    }
    if (cli_mpi_agree(m, bad)) {
        free(ptrs);
        return EXIT_RUNTIME;
    }
    int code = cli_mpi_call(m, dims, ptrs);
    free(ptrs);
    if (code == 0)
        return 0;
    const char *msg = cli_mpi_error(m, code);
    if (strncmp(msg, file, strlen(file)) == 0) /* it names the file already */
        fprintf(stderr, "txc: rank %d: %s\n", rank, msg);
    else
        fprintf(stderr, "txc: rank %d: %s: %s\n", rank, file, msg);
    return EXIT_RUNTIME;
}

/* After the run (STATUS): each output or inout held by rows gathered
   whole on rank 0 for writing (its rows freed on every rank); the agreed
   status. */
static int mpi_collect_outputs(cli_mpi *m, run_binding *all, int ntensors, int status)
{
    int rank = cli_mpi_rank(m);
    for (int k = 0; !status && k < ntensors; k++) {
        run_binding *b = &all[k];
        if (!b->rows || b->info.io == TX_IN)
            continue;
        void *whole = NULL;
        int c = cli_mpi_collect(m, b->data, &whole);
        if (c < 0) {
            fprintf(stderr, "txc: rank %d: tensor '%s': out of memory gathering it on rank 0\n", rank, b->name);
            status = EXIT_RUNTIME;
        } else if (c == 0) {
            cli_mpi_free(m, b->data);
            b->data = whole; /* NULL but on rank 0 */
            b->rows = 0;
        }
    }
    return status;
}

static int cmd_run(int argc, char **argv)
{
    common_opts c = {0};
    int random_inputs = 0, timing = 0, quiet = 0, threads = 0, profile = 0, use_mpi = 0, huge_pages = 1,
        backend = TX_BACKEND_TCC;
    cli_mpi *mpi = NULL;
    int mpi_used = 0; /* --mpi ran (its times printed by rank 0) */
    int rank = 0; /* under --mpi, this process's rank: only rank 0 touches files */
    int nb = 0;
    run_binding *binds = calloc((size_t)argc + 1, sizeof *binds);
    const char **dims = calloc((size_t)argc + 1, sizeof *dims);
    int *bind_io = calloc((size_t)argc + 1, sizeof *bind_io);
    int nd = 0;
    if (!binds || !dims || !bind_io) {
        free(binds);
        free(dims);
        free(bind_io);
        return fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME;
    }
    int status = 0;
    for (int i = 1; i < argc && !status; i++) {
        const char *a = argv[i], *val;
        if (parse_opt_level(a, &c))
            continue;
        if (strcmp(a, "--random") == 0)
            random_inputs = 1;
        else if (strcmp(a, "--time") == 0)
            timing = 1;
        else if (strcmp(a, "--profile") == 0)
            profile = 1;
        else if (strcmp(a, "--mpi") == 0)
            use_mpi = 1;
        else if (strcmp(a, "--no-huge-pages") == 0)
            huge_pages = 0;
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            quiet = 1;
        else if (opt_value(argc, argv, &i, "--backend", &val)) {
            if (!val)
                status = usage("--backend needs 'tcc' or 'cc'");
            else if (strcmp(val, "cc") == 0)
                backend = TX_BACKEND_CC;
            else if (strcmp(val, "tcc") == 0)
                backend = TX_BACKEND_TCC;
            else
                status = usage("unknown backend '%s'; use tcc or cc", val);
        } else if (opt_value(argc, argv, &i, "--threads", &val)) {
            char *end = NULL;
            long n = val ? strtol(val, &end, 10) : 0;
            if (!val || !*val || *end || n < 1 || n > 256)
                status = usage("--threads needs a number of threads from 1 to 256");
            else
                threads = (int)n;
        } else if (opt_value(argc, argv, &i, "-D", &val)) {
            if (!val || !strchr(val, '='))
                status = usage("-D needs dim=N");
            else
                dims[nd++] = val;
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
        tx_set_option(ctx, TX_OPTION_TIMING, timing || profile);
        tx_set_option(ctx, TX_OPTION_THREADS, threads);
        tx_set_option(ctx, TX_OPTION_HUGE_PAGES, huge_pages);
        tx_set_option(ctx, TX_OPTION_BACKEND, backend);
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
                    bind_io[j] = all[k].info.io;
                    found = 1;
                }
            for (int k = 0; k < nmaps; k++)
                if (strcmp(maps[k].info.name, binds[j].name) == 0) {
                    maps[k].file = binds[j].file;
                    bind_io[j] = TX_IN; /* a mask is read */
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
        if (!status)
            status = set_dims(p, ctx, dims, nd);
    }
    /* --mpi: the program built for MPI and loaded; MPI started */
    if (!status && use_mpi)
        status = mpi_start(p, ctx, c.file, nmaps, timing || profile, &mpi, &rank);
    double t_built = now(), t_mpi_end = 0; /* --mpi: the program built; this rank's run done */
    /* outputs that would overwrite the program, an input or each other are
       refused, and every destination checked, before any file is read */
    if (!status)
        status = check_run_aliases(c.file, binds, bind_io, nb);
    out_file *outs = status ? NULL : calloc((size_t)ntensors + 1, sizeof *outs);
    int nouts = 0;
    char err[1024];
    if (!status && !outs)
        status = (fprintf(stderr, "txc: out of memory\n"), EXIT_RUNTIME);
    for (int k = 0; !status && k < ntensors; k++) {
        if (all[k].info.io == TX_IN || !all[k].file || rank != 0)
            continue;
        out_file *o = &outs[nouts++];
        *o = (out_file){.name = all[k].file, .write = write_npy, .arg = &all[k]};
        if (out_check(o, err, sizeof err) < 0)
            status = (fprintf(stderr, "txc: tensor '%s': %s\n", all[k].name, err), EXIT_RUNTIME);
    }
    /* inputs from files */
    for (int k = 0; !status && k < ntensors; k++) {
        run_binding *b = &all[k];
        if (b->info.io == TX_OUT || !b->file || rank != 0)
            continue;
        if (load_input(b, huge_pages) < 0)
            status = EXIT_RUNTIME;
        else if (tx_bind(p, b->name, b->data, b->info.ndim, b->shape) != TX_OK)
            status = (fprintf(stderr, "txc: tensor '%s' (%s): %s\n", b->name, b->file, tx_errmsg(ctx)),
                      EXIT_RUNTIME);
    }
    /* --mpi: rank 0's verdict and inputs to every rank */
    if (mpi)
        status = mpi_share_inputs(mpi, p, ctx, all, ntensors, status);
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
            if (mpi && !is_input) { /* --mpi: by rows, if the program takes it so */
                int sh = cli_mpi_alloc_out(mpi, k, (size_t)n * es, b->info.ndim, b->shape, &b->data);
                if (sh < 0) {
                    fprintf(stderr, "txc: rank %d: out of memory for tensor '%s'\n", rank, b->name);
                    status = EXIT_RUNTIME;
                    break;
                }
                if (sh == 0) {
                    b->rows = 1;
                    continue;
                }
            }
            b->data = calloc((size_t)(n ? n : 1), es);
            if (!b->data) {
                fprintf(stderr, "txc: out of memory for tensor '%s' (%lld elements)\n", b->name, (long long)n);
                status = EXIT_RUNTIME;
                break;
            }
            for (int64_t i = 0; is_input && i < n; i++) /* complex: both parts random */
                for (int part = 0; part < 1 + is_complex(b->info.dtype); part++)
                    part_set(b->data, b->info.dtype, i, part, rng_uniform());
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
    progress_watch pw = {.p = p};
    int watching = !status && !quiet && !getenv("TX_NO_PROGRESS") && isatty(STDERR_FILENO) &&
                   progress_start(&pw) == 0;
    int run_status = status ? TX_OK : mpi ? TX_OK : tx_run(p);
    if (watching)
        progress_stop(&pw);
    if (!status && mpi) {
        double t0 = now();
        int st = mpi_run(mpi, p, ctx, c.file, all, ntensors);
        t_mpi_end = now();
        if (timing && !st)
            mpi_print_times(mpi, p, t_compiled - t_start, t_built - t_compiled, t_read - t_built, t_mpi_end - t0);
        if (profile && !st)
            mpi_print_profile(mpi, p, t_mpi_end - t0);
        status = mpi_collect_outputs(mpi, all, ntensors, st);
    }
    else if (!status && run_status != TX_OK) {
        const char *m = tx_errmsg(ctx);
        if (strncmp(m, c.file, strlen(c.file)) == 0) /* it names the file already */
            fprintf(stderr, "txc: %s\n", m);
        else
            fprintf(stderr, "txc: %s: %s\n", c.file, m);
        status = EXIT_RUNTIME;
    }
    t_ran = now();
    /* outputs without a file are printed; those with one written all or
       nothing (cli_output.c) */
    for (int k = 0; !status && !quiet && rank == 0 && k < ntensors; k++)
        if (all[k].info.io != TX_IN && !all[k].file)
            print_tensor(&all[k]);
    if (!status && out_write_all(outs, nouts, err, sizeof err) < 0)
        status = (fprintf(stderr, "txc: %s\n", err), EXIT_RUNTIME);
    if (mpi) { /* the exit status of rank 0's writing, on every rank */
        t_written = now(); /* before MPI_Finalize */
        status = cli_mpi_agree(mpi, status);
        for (int k = 0; k < ntensors; k++) /* memory of the loaded program's, freed while it is there */
            if (all[k].rows) {
                cli_mpi_free(mpi, all[k].data);
                all[k].data = NULL;
                all[k].rows = 0;
            }
        cli_mpi_close(mpi);
        mpi_used = 1;
    }
    if (outs)
        out_release(outs, nouts);
    free(outs);
    if (!mpi_used)
        t_written = now();
    if (timing && p && !status && mpi_used) { /* rank 0 printed the rest after the run */
        if (rank == 0)
            time_line("gather and write outputs", t_written - t_mpi_end);
    } else if (timing && p && !status) {
        time_line("compile (parse to graph)", t_compiled - t_start);
        time_line("read and bind inputs", t_read - t_compiled);
        double jit = 0;
        tx_timing(p, -1, &jit, NULL);
        const char *how = NULL, *be = tx_backend(p, &how);
        char what[40];
        snprintf(what, sizeof what, "jit (emit + %s)", be && strcmp(be, "cc") == 0 ? "cc" : "libtcc");
        time_line(what, jit);
        fprintf(stderr, "txc:   backend %s: %s\n", be ? be : "?", how ? how : "");
        time_line("run", t_ran - t_read - jit);
        time_statements(p, NULL, tx_stmt_count(p));
        time_line("write outputs", t_written - t_ran);
    }
    if (profile && p && !status && !mpi_used)
        print_profile(p, 1e3 * (t_ran - t_read));
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
    free(bind_io);
    tx_program_free(p);
    tx_free(ctx);
    return status;
}

/* 1 if ARG asks for help. */
static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage("no input file");
    const char *cmd = argv[1];
    if (is_help(cmd)) {
        fputs(usage_text, stdout);
        fputs(help_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("txc %s\n", TX_VERSION_STRING);
        return 0;
    }
    const char *help = strcmp(cmd, "run") == 0     ? run_help
                       : strcmp(cmd, "graph") == 0 ? graph_help
                       : strcmp(cmd, "check") == 0 ? check_help
                                                   : emit_help;
    for (int i = 2; i < argc; i++) /* --help anywhere after the command */
        if (is_help(argv[i])) {
            fputs(help, stdout);
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
