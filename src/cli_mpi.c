/*
 * cli_mpi.c - txc run --mpi (linked only into txc). The program's C for
 * the MPI target (tx_emit with .mpi), plus a small driver giving txc
 * MPI_Init, broadcasts, the inputs' scatter by rows and the call through
 * FN_argv, is compiled with
 * mpicc into a shared object cached under the user's cache directory
 * (keyed by a hash of the text and the command), and loaded with dlopen
 * into each rank's txc. So txc and libtensorexpr never link MPI: a
 * machine without it only loses --mpi, with a message saying what to
 * install.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_mpi.h"

extern char **environ;

struct cli_mpi {
    void *so;
    int rank, size;
    int (*agree)(int);
    int (*bcast)(void *, long long);
    int (*share)(int, const void *, long long, int, const int64_t *, void **);
    void (*free_rows)(void *);
    int (*alloc_out)(int, long long, int, const int64_t *, void **);
    int (*collect)(void *, void **);
    int (*call)(const int64_t *, void *const *);
    const char *(*error)(int);
    long long (*detail)(void);
    void (*finalize)(void);
    double (*dmax)(double);
    int (*times)(double *, int); /* NULL: the program records no times */
    int (*calls)(int, const char **, const char **, int *, int *, double *, double *); /* with times */
    char msg[1024]; /* cli_mpi_error's */
};

/* The driver, appended to the program's C; FN is the program function. */
static const char driver_fmt[] =
    "\n/* txc run --mpi: the driver txc calls through dlsym */\n"
    "int txc_mpi_init(int *rank, int *size)\n"
    "{\n"
    "    int init = 0;\n"
    "    MPI_Initialized(&init);\n"
    "    if (!init && MPI_Init(NULL, NULL) != MPI_SUCCESS)\n"
    "        return -1;\n"
    "    MPI_Comm_rank(MPI_COMM_WORLD, rank);\n"
    "    MPI_Comm_size(MPI_COMM_WORLD, size);\n"
    "    return 0;\n"
    "}\n"
    "int txc_mpi_agree(int s)\n"
    "{\n"
    "    int all = s;\n"
    "    MPI_Allreduce(&s, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);\n"
    "    return all;\n"
    "}\n"
    "int txc_mpi_bcast(void *p, long long n)\n"
    "{\n"
    "    for (long long off = 0; off < n; off += 1 << 30) {\n"
    "        long long c = n - off < (1 << 30) ? n - off : (1 << 30);\n"
    "        if (MPI_Bcast((char *)p + off, (int)c, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)\n"
    "            return -1;\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "/* input K of BYTES (extents SHAPE), read by rank 0 into WHOLE: into\n"
    "   memory by rows (each rank receiving its block: MPI_Scatterv) when the\n"
    "   program takes it so and it is large enough, else whole on every rank\n"
    "   (broadcast); *OUT the memory (txc_mpi_free). 1: the program takes K\n"
    "   only whole (nothing done); -1: out of memory or a failed message. */\n"
    "int txc_mpi_share(int k, const void *whole, long long bytes, int ndim, const int64_t *shape, void **out)\n"
    "{\n"
    "    int r = 0, p = 1;\n"
    "    int64_t n0, lo, hi;\n"
    "    if (!%s_rows(k) || ndim < %s_rows(k)) /* a wrong shape is refused before the call */\n"
    "        return 1;\n"
    "    MPI_Comm_rank(MPI_COMM_WORLD, &r);\n"
    "    MPI_Comm_size(MPI_COMM_WORLD, &p);\n"
    "    void *m = %s_alloc_lead(MPI_COMM_WORLD, k, bytes, shape, &n0, &lo, &hi);\n"
    "    if (!m)\n"
    "        return -1;\n"
    "    tx_mpi_slab *e = tx_mpi_slab_at(m);\n"
    "    int ok = 1;\n"
    "    if (!e) {\n"
    "        if (r == 0)\n"
    "            memcpy(m, whole, (size_t)bytes);\n"
    "        ok = txc_mpi_bcast(m, bytes) == 0;\n"
    "    } else {\n"
    "        int *cd = (int *)malloc(sizeof(int) * 2 * (size_t)p);\n"
    "        MPI_Datatype row;\n"
    "        ok = cd != NULL && e->row <= 2147483647u && n0 <= 2147483647;\n"
    "        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);\n"
    "        if (ok) {\n"
    "            tx_mpi_row_counts(n0, p, cd);\n"
    "            MPI_Type_contiguous((int)e->row, MPI_BYTE, &row);\n"
    "            MPI_Type_commit(&row);\n"
    "            ok = MPI_Scatterv(whole, cd, cd + p, row, e->base + (size_t)e->lo * e->row, cd[r], row, 0,\n"
    "                              MPI_COMM_WORLD) == MPI_SUCCESS;\n"
    "            MPI_Type_free(&row);\n"
    "        }\n"
    "        free(cd);\n"
    "    }\n"
    "    if (!ok) {\n"
    "        tx_mpi_free(m);\n"
    "        return -1;\n"
    "    }\n"
    "    *out = m;\n"
    "    return 0;\n"
    "}\n"
    "void txc_mpi_free(void *p) { tx_mpi_free(p); }\n"
    "/* output K of BYTES (extents SHAPE): zeroed memory by rows when the\n"
    "   program takes it so (0, *OUT), 1 if it takes K only whole, -1 if out\n"
    "   of memory on any rank */\n"
    "int txc_mpi_alloc_out(int k, long long bytes, int ndim, const int64_t *shape, void **out)\n"
    "{\n"
    "    int64_t n0, lo, hi;\n"
    "    if (!%s_rows(k) || ndim < %s_rows(k))\n"
    "        return 1;\n"
    "    *out = %s_alloc_lead(MPI_COMM_WORLD, k, bytes, shape, &n0, &lo, &hi);\n"
    "    return *out ? 0 : -1;\n"
    "}\n"
    "/* The whole tensor P (from txc_mpi_alloc_out or txc_mpi_share) on rank 0:\n"
    "   its rows gathered there (MPI_Gatherv) into a malloc'd *WHOLE (NULL on\n"
    "   the other ranks); 1 if P is a whole buffer already (nothing done), -1\n"
    "   if out of memory on rank 0 (agreed). */\n"
    "int txc_mpi_collect(void *p, void **whole)\n"
    "{\n"
    "    tx_mpi_slab *e = tx_mpi_slab_at(p);\n"
    "    int r = 0, np = 1, ok = 1;\n"
    "    *whole = NULL;\n"
    "    if (!e)\n"
    "        return 1;\n"
    "    MPI_Comm_rank(MPI_COMM_WORLD, &r);\n"
    "    MPI_Comm_size(MPI_COMM_WORLD, &np);\n"
    "    char *w = r == 0 ? (char *)malloc(e->total ? e->total : 1) : NULL;\n"
    "    int *cd = (int *)malloc(sizeof(int) * 2 * (size_t)np);\n"
    "    ok = (r != 0 || w) && cd && e->row <= 2147483647u && e->n0 <= 2147483647;\n"
    "    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);\n"
    "    if (ok) {\n"
    "        MPI_Datatype row;\n"
    "        tx_mpi_row_counts(e->n0, np, cd);\n"
    "        MPI_Type_contiguous((int)e->row, MPI_BYTE, &row);\n"
    "        MPI_Type_commit(&row);\n"
    "        MPI_Gatherv(e->base + (size_t)e->lo * e->row, cd[r], row, w, cd, cd + np, row, 0, MPI_COMM_WORLD);\n"
    "        MPI_Type_free(&row);\n"
    "    }\n"
    "    free(cd);\n"
    "    if (!ok) {\n"
    "        free(w);\n"
    "        return -1;\n"
    "    }\n"
    "    *whole = w;\n"
    "    return 0;\n"
    "}\n"
    "int txc_mpi_call(const int64_t *dims, void *const *ptrs) { return %s_argv(MPI_COMM_WORLD, dims, ptrs); }\n"
    "/* the largest X of any rank */\n"
    "double txc_mpi_max(double x)\n"
    "{\n"
    "    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);\n"
    "    return x;\n"
    "}\n"
    "const char *txc_mpi_error(int code) { return %s_error_format(code); }\n"
    "long long txc_mpi_detail(void) { return (long long)%s_detail(); }\n"
    "void txc_mpi_finalize(void) { MPI_Finalize(); }\n";

/* The driver's part for a program that records statement times
   (TX_OPTION_TIMING): each statement's slowest rank. FN is the program
   function. */
static const char times_fmt[] =
    "int txc_mpi_times(double *t, int n)\n"
    "{\n"
    "    int k = %s_times(t, n);\n"
    "    MPI_Allreduce(MPI_IN_PLACE, t, k < n ? k : n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);\n"
    "    return k;\n"
    "}\n"
    "int txc_mpi_calls(int i, const char **kind, const char **op, int *stmt, int *line, double *flops,\n"
    "                  double *bytes)\n"
    "{\n"
    "    return %s_calls(i, kind, op, stmt, line, flops, bytes);\n"
    "}\n";

static const char *const link_libs[] = {"-lscalapack-openmpi", "-llapacke", "-lopenblas", "-lm"};

/* 64-bit FNV-1a over N bytes, continuing from H. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

/* mkdir -p for the cache directory. */
static int make_dirs(char *path)
{
    for (char *s = path + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            int r = mkdir(path, 0755);
            *s = '/';
            if (r < 0 && errno != EEXIST)
                return -1;
        }
    return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int write_all(const char *path, const char *a, size_t na, const char *b, size_t nb)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(a, 1, na, f) == na && fwrite(b, 1, nb, f) == nb;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Runs CC ... -o OUT SRC LIBS with its output into LOG; 0 on success, -1
   if the compiler could not be started, else its exit status. */
static int run_cc(const char *cc, const char *src, const char *out, const char *log)
{
    const char *argv[24];
    int n = 0;
    argv[n++] = cc;
    argv[n++] = "-O2";
    argv[n++] = "-std=c99";
    argv[n++] = "-fPIC";
    argv[n++] = "-shared";
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n++] = src;
    for (size_t i = 0; i < sizeof link_libs / sizeof link_libs[0]; i++)
        argv[n++] = link_libs[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int r = posix_spawnp(&pid, cc, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (r != 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void *sym(cli_mpi *m, const char *name, char *err, size_t errlen)
{
    void *p = dlsym(m->so, name);
    if (!p)
        snprintf(err, errlen, "--mpi: the compiled program lacks %s", name);
    return p;
}

cli_mpi *cli_mpi_open(const char *src, size_t len, const char *fn, int timed, char *err, size_t errlen)
{
    const char *cc = getenv("MPICC") && *getenv("MPICC") ? getenv("MPICC") : "mpicc";
    size_t dlen = sizeof driver_fmt + sizeof times_fmt + 11 * strlen(fn);
    char *driver = malloc(dlen);
    if (!driver) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int dn = snprintf(driver, dlen, driver_fmt, fn, fn, fn, fn, fn, fn, fn, fn, fn);
    if (timed)
        snprintf(driver + dn, dlen - (size_t)dn, times_fmt, fn, fn);
    uint64_t h = fnv(0xcbf29ce484222325ull, src, len);
    h = fnv(h, driver, strlen(driver));
    h = fnv(h, cc, strlen(cc) + 1);
    for (size_t i = 0; i < sizeof link_libs / sizeof link_libs[0]; i++)
        h = fnv(h, link_libs[i], strlen(link_libs[i]) + 1);
    /* the cache: TX_CACHE_DIR, else $XDG_CACHE_HOME/tensorexpr, else ~/.cache/tensorexpr */
    char dir[4096], so[4200], csrc[4200], tmp[4300], log[4200], lockp[4200];
    const char *env = getenv("TX_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/tensorexpr", xdg);
    else
        snprintf(dir, sizeof dir, "%s/.cache/tensorexpr", home && *home ? home : "/tmp");
    snprintf(so, sizeof so, "%s/mpi-%016llx.so", dir, (unsigned long long)h);
    snprintf(csrc, sizeof csrc, "%s/mpi-%016llx.c", dir, (unsigned long long)h);
    snprintf(log, sizeof log, "%s/mpi-%016llx.log", dir, (unsigned long long)h);
    snprintf(lockp, sizeof lockp, "%s/mpi-%016llx.lock", dir, (unsigned long long)h);
    snprintf(tmp, sizeof tmp, "%s/mpi-%016llx.%ld.so", dir, (unsigned long long)h, (long)getpid());
    cli_mpi *m = NULL;
    int lock = -1;
    if (make_dirs(dir) < 0) {
        snprintf(err, errlen, "--mpi: cannot create the cache directory %s: %s", dir, strerror(errno));
        goto out;
    }
    /* one rank compiles; the others wait on the lock and find the object */
    lock = open(lockp, O_RDWR | O_CREAT, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) < 0) {
        snprintf(err, errlen, "--mpi: cannot lock %s: %s", lockp, strerror(errno));
        goto out;
    }
    if (access(so, R_OK) != 0) {
        int r = write_all(csrc, src, len, driver, strlen(driver));
        if (r == 0)
            r = run_cc(cc, csrc, tmp, log);
        if (r == -1 && access(csrc, R_OK) == 0) {
            snprintf(err, errlen, "--mpi needs the MPI compiler '%s' (Debian: apt-get install openmpi-bin "
                     "libopenmpi-dev libscalapack-openmpi-dev)", cc);
            goto out;
        } else if (r != 0) {
            snprintf(err, errlen, "--mpi: %s could not build the program (%s); see %s", cc,
                     r < 0 ? strerror(errno) : "compiler error", log);
            unlink(tmp);
            goto out;
        }
        if (rename(tmp, so) < 0) {
            snprintf(err, errlen, "--mpi: cannot store %s: %s", so, strerror(errno));
            unlink(tmp);
            goto out;
        }
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    /* global: Open MPI's components resolve libmpi's symbols through it */
    m->so = dlopen(so, RTLD_NOW | RTLD_GLOBAL);
    if (!m->so) {
        snprintf(err, errlen, "--mpi: cannot load %s: %s", so, dlerror());
        free(m);
        m = NULL;
        goto out;
    }
    int (*init)(int *, int *) = (int (*)(int *, int *))sym(m, "txc_mpi_init", err, errlen);
    m->agree = (int (*)(int))sym(m, "txc_mpi_agree", err, errlen);
    m->bcast = (int (*)(void *, long long))sym(m, "txc_mpi_bcast", err, errlen);
    m->call = (int (*)(const int64_t *, void *const *))sym(m, "txc_mpi_call", err, errlen);
    m->share = (int (*)(int, const void *, long long, int, const int64_t *, void **))sym(m, "txc_mpi_share", err, errlen);
    m->free_rows = (void (*)(void *))sym(m, "txc_mpi_free", err, errlen);
    m->alloc_out = (int (*)(int, long long, int, const int64_t *, void **))sym(m, "txc_mpi_alloc_out", err, errlen);
    m->collect = (int (*)(void *, void **))sym(m, "txc_mpi_collect", err, errlen);
    m->error = (const char *(*)(int))sym(m, "txc_mpi_error", err, errlen);
    m->detail = (long long (*)(void))sym(m, "txc_mpi_detail", err, errlen);
    m->finalize = (void (*)(void))sym(m, "txc_mpi_finalize", err, errlen);
    m->dmax = (double (*)(double))sym(m, "txc_mpi_max", err, errlen);
    m->times = timed ? (int (*)(double *, int))sym(m, "txc_mpi_times", err, errlen) : NULL;
    m->calls = timed ? (int (*)(int, const char **, const char **, int *, int *, double *, double *))sym(
                           m, "txc_mpi_calls", err, errlen)
                     : NULL;
    if (!init || !m->agree || !m->bcast || !m->share || !m->free_rows || !m->alloc_out || !m->collect || !m->call ||
        !m->error || !m->detail || !m->finalize || !m->dmax || (timed && (!m->times || !m->calls))) {
        free(m);
        m = NULL;
        goto out;
    }
    flock(lock, LOCK_UN);
    if (init(&m->rank, &m->size) != 0) {
        snprintf(err, errlen, "--mpi: MPI_Init failed");
        free(m);
        m = NULL;
    }
out:
    if (lock >= 0)
        close(lock);
    free(driver);
    return m;
}

int cli_mpi_rank(const cli_mpi *m) { return m->rank; }
int cli_mpi_size(const cli_mpi *m) { return m->size; }
int cli_mpi_agree(cli_mpi *m, int status) { return m->agree(status); }

double cli_mpi_max(cli_mpi *m, double x) { return m->dmax(x); }

int cli_mpi_times(cli_mpi *m, double *t, int n) { return m->times ? m->times(t, n) : 0; }

int cli_mpi_call_info_at(cli_mpi *m, int i, cli_mpi_call_info *c)
{
    if (!m->calls)
        return 0;
    return m->calls(i, &c->kind, &c->op, &c->stmt, &c->line, &c->flops, &c->bytes);
}

int cli_mpi_bcast(cli_mpi *m, void *buf, size_t bytes)
{
    return m->bcast(buf, (long long)bytes);
}

int cli_mpi_share(cli_mpi *m, int k, const void *whole, size_t bytes, int ndim, const int64_t *shape, void **out)
{
    return m->share(k, whole, (long long)bytes, ndim, shape, out);
}

void cli_mpi_free(cli_mpi *m, void *p) { m->free_rows(p); }

int cli_mpi_alloc_out(cli_mpi *m, int k, size_t bytes, int ndim, const int64_t *shape, void **out)
{
    return m->alloc_out(k, (long long)bytes, ndim, shape, out);
}

int cli_mpi_collect(cli_mpi *m, void *p, void **whole) { return m->collect(p, whole); }

int cli_mpi_call(cli_mpi *m, const int64_t *dims, void *const *ptrs)
{
    return m->call(dims, ptrs);
}

const char *cli_mpi_error(cli_mpi *m, int code)
{
    /* the detail goes where the message's last "%lld" is (the message is
       no format: it holds the .tx file's name, which may have a '%') */
    const char *f = m->error(code), *slot = NULL;
    for (const char *q = strstr(f, "%lld"); q; q = strstr(q + 1, "%lld"))
        slot = q;
    if (!slot)
        return f;
    snprintf(m->msg, sizeof m->msg, "%.*s%lld%s", (int)(slot - f), f, m->detail(), slot + 4);
    return m->msg;
}

void cli_mpi_close(cli_mpi *m)
{
    if (m)
        m->finalize();
    free(m);
}
