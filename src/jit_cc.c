/*
 * jit_cc.c — the cc tier (target_jit_cc's loader): the generated C
 * compiled by the system compiler into a shared object, cached on disk,
 * and loaded into this process with dlopen.
 *
 * The compiler is $TX_CC, else $CC, else cc (a command of words, such as
 * "ccache gcc"), run as
 *
 *     COMPILER -std=c99 -O3 -march=native -fno-tree-loop-if-convert -fPIC
 *              -shared -ffp-contract=off -fno-math-errno -DTX_USE_LIBMVEC
 *              -DTX_USE_SLEEF [-DTX_NO_PF_NOTE] -w -o OUT -x c SRC -lsleef -lm
 *
 * -std=c99 and -ffp-contract=off keep the arithmetic the C says (no FMA
 * contraction, no reassociation), and glibc's libmvec (which -lm brings)
 * and SLEEF evaluate the elementwise functions as the library's primitives
 * do (vmath.inc), at the width of the CPU (-march=native), so the object
 * computes what the libtcc tier computes, bit for bit (tests/run_num.py
 * --backend cc checks it) -- except complex products: GCC 12's vectoriser
 * turns a.re*b.re - a.im*b.im (complex.inc) into vfmaddsub even under
 * -ffp-contract=off, so complex results may differ in the last bits
 * (-fno-tree-vectorize or -march=x86-64-v2 would avoid it, at the cost
 * of all vectorisation or of AVX). -fno-tree-loop-if-convert works around a
 * miscompilation of GCC 12.2 (Debian 12.2.0-14) at -O3 with AVX-512: a
 * loop nest whose innermost loop has a constant trip count of 4 and a
 * body `d[x] = c[x] > 1e-10 ? g[x] / e[x] : 0.0` (a where() guarding a
 * division, tests/num/ccsd_denominators.tx) is if-converted into masked
 * vector code that stores other lanes' quotients; -O2, -march=x86-64-v3,
 * -fno-tree-loop-vectorize or this flag each avoid it, and this one costs
 * least (only loops with conditions stay scalar, as they are under libtcc;
 * the select primitives of prims.inc -- comparisons, where, max, min --
 * ask for if-conversion back with TX_PRIM_SELECT, or where(A > B, ...) over
 * random data ran ten times slower than the libtcc tier).
 * The object keeps prims.inc's prefetch note (a row group's next tile
 * asked into L2) in thread-local variables of its own, of the
 * general-dynamic model that an object loaded by dlopen may have (glibc's
 * static TLS, where the library keeps its note, has room for few): an
 * f32 row softmax of 2000x2000 at one thread took 2.83-3.30 ms without
 * the note, 2.74-2.84 with it, the libtcc tier 2.62-2.77 beside them
 * (tx_run, tx_loop, four or five runs each). A library
 * built with AddressSanitizer compiles its objects with -DTX_NO_PF_NOTE,
 * which leaves the note out: GCC 12's LeakSanitizer crashes at exit
 * ("Tracer caught signal 11") on the TLS of an object loaded by dlopen.
 * The bits are the same either way.
 *
 * How the object reaches the runtime. The code is emitted with
 * TX_SYMBOLS_TABLE: libc and libm through their headers, the inner-loop
 * primitives (prims.inc) pasted in so the compiler inlines and vectorises
 * them for this CPU, and everything that lives in libtensorexpr or its
 * libraries (the thread pool, BLAS, the LAPACK-backed calls) through
 * static function pointers that the generated tx_bind_runtime() fills in
 * from this library's table (tx_runtime_symbols), by name, once the object
 * is loaded. So the object links against nothing of ours and needs no
 * symbol of the host's global scope: it works when libtensorexpr itself
 * was loaded RTLD_LOCAL (Python's ctypes), and its kernels, BLAS and
 * LAPACK are exactly the ones the libtcc tier calls (one pool, one
 * OpenBLAS with its thread count set by tx_run).
 *
 * The cache: $TX_CACHE_DIR, else $XDG_CACHE_HOME/tensorexpr, else
 * $HOME/.cache/tensorexpr (absolute paths; created 0700), the directory
 * txc run --mpi also uses (its objects are named mpi-*). The object's name is the SHA-256
 * of the source, the compiler's identity (its resolved path, size and
 * modification time, and the other words of the command), the CPU (for
 * -march=native: /proc/cpuinfo's vendor, model and flags) and the flags;
 * the object carries that name as the string tx_cc_key, checked after
 * loading. Built under a temporary name in the same directory and renamed
 * into place, so processes racing on one program each compile and the
 * last rename wins with an identical file; a reader sees a whole object or
 * none. A cached file that does not load, or whose key is not its name, is
 * removed and rebuilt. When the directory cannot be made or written, the
 * object is built in a fresh temporary directory and removed once loaded
 * (the mapping stays). Every failure is a message and TX_ERR_JIT: the
 * pipeline then falls back to libtcc (target_jit_cc.fallback).
 */
#define _DEFAULT_SOURCE 1 /* realpath */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h> /* ElfW: the ELF types of this platform */
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tx.h"
#include "runtime.h"

extern char **environ;

/* The flags, before the output and the source; the libraries after. Part
   of the cache key. */
#ifdef __SANITIZE_ADDRESS__
#define CC_PF_NOTE "-DTX_NO_PF_NOTE",
#else
#define CC_PF_NOTE
#endif
static const char *const cc_flags[] = {"-std=c99", "-O3", "-march=native", "-fno-tree-loop-if-convert",
                                       "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno",
                                       "-DTX_USE_LIBMVEC", "-DTX_USE_SLEEF", CC_PF_NOTE "-w", NULL};
static const char *const cc_libs[] = {"-lsleef", "-lm", NULL};

#define CC_MAX_WORDS 16
#define CC_PATH 4096

/* ---- SHA-256 (FIPS 180-4), for the cache key ---- */
typedef struct {
    uint32_t h[8];
    unsigned char blk[64];
    size_t nblk;
    uint64_t total;
} sha256;

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(sha256 *s, const unsigned char *p)
{
    uint32_t w[64], a[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(a, s->h, sizeof a);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = a[7] + (ROR(a[4], 6) ^ ROR(a[4], 11) ^ ROR(a[4], 25)) + ((a[4] & a[5]) ^ (~a[4] & a[6])) +
                      sha_k[i] + w[i];
        uint32_t t2 = (ROR(a[0], 2) ^ ROR(a[0], 13) ^ ROR(a[0], 22)) + ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
        memmove(a + 1, a, 7 * sizeof a[0]);
        a[4] += t1;
        a[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        s->h[i] += a[i];
}

static void sha_init(sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->nblk = 0;
    s->total = 0;
}

static void sha_add(sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->total += n;
    while (n) {
        size_t k = 64 - s->nblk < n ? 64 - s->nblk : n;
        memcpy(s->blk + s->nblk, p, k);
        s->nblk += k;
        p += k;
        n -= k;
        if (s->nblk == 64) {
            sha_block(s, s->blk);
            s->nblk = 0;
        }
    }
}

/* A string and its terminating NUL, so that fields cannot run together. */
static void sha_add_str(sha256 *s, const char *str)
{
    sha_add(s, str, strlen(str) + 1);
}

/* The digest as 64 lowercase hex digits and a NUL into HEX. */
static void sha_hex(sha256 *s, char hex[65])
{
    uint64_t bits = s->total * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    sha_add(s, &pad, 1);
    while (s->nblk != 56)
        sha_add(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha_add(s, len, 8);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned)(s->h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
}

/* ---- the compiler ---- */
typedef struct {
    char text[CC_PATH];          /* the command, split in place */
    char *argv[CC_MAX_WORDS + 1];
    int n;
    char path[CC_PATH];          /* argv[0] found on PATH */
    char identity[CC_PATH + 64]; /* its resolved path, size and mtime */
} compiler;

/* Finds the compiler's command and program. -1 with a message in WHY if
   there is none. */
static int find_compiler(compiler *c, tx_buf *why)
{
    const char *cmd = getenv("TX_CC");
    if (!cmd || !*cmd)
        cmd = getenv("CC");
    if (!cmd || !*cmd)
        cmd = "cc";
    if (strlen(cmd) >= sizeof c->text) {
        buf_printf(why, "the compiler command is too long");
        return -1;
    }
    strcpy(c->text, cmd);
    c->n = 0;
    char *save = NULL;
    for (char *p = strtok_r(c->text, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
        if (c->n == CC_MAX_WORDS) {
            buf_printf(why, "the compiler command '%s' has too many words", cmd);
            return -1;
        }
        c->argv[c->n++] = p;
    }
    c->argv[c->n] = NULL;
    if (c->n == 0) {
        buf_printf(why, "the compiler command is empty");
        return -1;
    }
    const char *prog = c->argv[0];
    struct stat st;
    int found = 0;
    if (strchr(prog, '/')) {
        found = snprintf(c->path, sizeof c->path, "%s", prog) < (int)sizeof c->path && stat(c->path, &st) == 0 &&
                S_ISREG(st.st_mode) && access(c->path, X_OK) == 0;
    } else {
        const char *dirs = getenv("PATH");
        if (!dirs || !*dirs)
            dirs = "/usr/local/bin:/usr/bin:/bin";
        for (const char *d = dirs; !found && d;) {
            const char *end = strchr(d, ':');
            int len = end ? (int)(end - d) : (int)strlen(d);
            if (snprintf(c->path, sizeof c->path, "%.*s%s%s", len, d, len ? "/" : "", prog) < (int)sizeof c->path)
                found = stat(c->path, &st) == 0 && S_ISREG(st.st_mode) && access(c->path, X_OK) == 0;
            d = end ? end + 1 : NULL;
        }
    }
    if (!found) {
        buf_printf(why, "no compiler '%s' found (set TX_CC or CC)", prog);
        return -1;
    }
    char real[PATH_MAX];
    if (!realpath(c->path, real) || stat(real, &st) != 0)
        snprintf(real, sizeof real, "%s", c->path);
    snprintf(c->identity, sizeof c->identity, "%s %lld %lld.%09ld", real, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    return 0;
}

/* Runs the compiler on SRC into OUT. 0 on success; else -1 with its
   diagnostics (the first few KB) in WHY. Nothing reaches the host's
   standard streams. */
static int run_compiler(const compiler *c, const char *src, const char *out, tx_buf *why)
{
    const char *argv[CC_MAX_WORDS + 32];
    int n = 0;
    for (int i = 0; i < c->n; i++)
        argv[n++] = c->argv[i];
    for (int i = 0; cc_flags[i]; i++)
        argv[n++] = cc_flags[i];
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n++] = "-x";
    argv[n++] = "c";
    argv[n++] = src;
    for (int i = 0; cc_libs[i]; i++)
        argv[n++] = cc_libs[i];
    argv[n] = NULL;

    int fd[2];
    if (pipe(fd) != 0) {
        buf_printf(why, "cannot run the compiler: %s", strerror(errno));
        return -1;
    }
    fcntl(fd[0], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    int e = posix_spawn(&pid, c->path, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (e != 0) {
        close(fd[0]);
        buf_printf(why, "cannot run the compiler %s: %s", c->path, strerror(e));
        return -1;
    }
    char diag[4096];
    size_t nd = 0;
    for (;;) {
        char chunk[1024];
        ssize_t k = read(fd[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        size_t take = (size_t)k < sizeof diag - 1 - nd ? (size_t)k : sizeof diag - 1 - nd;
        memcpy(diag + nd, chunk, take);
        nd += take;
    }
    diag[nd] = 0;
    close(fd[0]);
    int status = 0;
    pid_t w;
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    /* a host that ignores SIGCHLD reaps for us (ECHILD): the object's
       loading is then the test */
    int ok = w < 0 ? errno == ECHILD : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok)
        buf_printf(why, "%s failed on the generated code:\n%s", c->argv[0], diag);
    return ok ? 0 : -1;
}

/* What -march=native means here: the CPU's vendor, model and feature
   flags (the first processor of /proc/cpuinfo), hashed into the key so
   that a cache shared by machines with different CPUs (a home directory
   on NFS) never hands one an object built for another's instructions.
   Where /proc/cpuinfo cannot be read, nothing is added: the compiler's
   identity still keys the object. */
static void sha_add_cpu(sha256 *h)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    while (fgets(line, sizeof line, f) && line[0] != '\n')
        if (strncmp(line, "vendor_id", 9) == 0 || strncmp(line, "model name", 10) == 0 ||
            strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0 ||
            strncmp(line, "CPU part", 8) == 0)
            sha_add_str(h, line);
    fclose(f);
}

/* ---- the cache ---- */

/* mkdir -p DIR, mode 0700 for what it creates; 0 if DIR is a writable
   directory afterwards. */
static int make_dirs(char *dir)
{
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = 0;
        int r = mkdir(dir, 0700);
        int e = errno;
        *p = c;
        if (r != 0 && e != EEXIST)
            return -1;
        if (!c)
            break;
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0 ? 0 : -1;
}

/* The cache directory into DIR. -1 with a reason in WHY if there is no
   usable one. */
static int cache_dir(char *dir, size_t n, tx_buf *why)
{
    const char *t = getenv("TX_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int len;
    if (t && t[0] == '/') /* as txc run --mpi's cache (cli_mpi.c) */
        len = snprintf(dir, n, "%s", t);
    else if (x && x[0] == '/')
        len = snprintf(dir, n, "%s/tensorexpr", x);
    else if (h && h[0] == '/')
        len = snprintf(dir, n, "%s/.cache/tensorexpr", h);
    else {
        buf_printf(why, "none of TX_CACHE_DIR, XDG_CACHE_HOME and HOME is an absolute path");
        return -1;
    }
    if (len < 0 || (size_t)len >= n) {
        buf_printf(why, "the cache directory's path is too long");
        return -1;
    }
    if (make_dirs(dir) != 0) {
        buf_printf(why, "cannot create or write the cache directory %s", dir);
        return -1;
    }
    return 0;
}

static const void *find_runtime_symbol(const char *name)
{
    for (const tx_runtime_symbol *r = tx_runtime_symbols; r->name; r++)
        if (strcmp(r->name, name) == 0)
            return r->addr;
    return NULL;
}

static void release_cc(jit_module *m)
{
    if (m->handle)
        dlclose(m->handle);
    free(m);
}

/* Is the file at PATH a whole shared object of this platform's ELF class:
   its header, and every segment and section header table it names, inside
   the file? dlopen maps segments past the end of a truncated file and the
   process dies of SIGBUS when it touches them, so a cached file is checked
   before it is loaded. 0, or -1 with the reason in WHY. */
static int whole_object(const char *path, tx_buf *why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    ElfW(Ehdr) eh;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
             memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
             eh.e_type == ET_DYN && eh.e_phentsize == sizeof(ElfW(Phdr));
    uint64_t size = ok ? (uint64_t)st.st_size : 0;
    ok = ok && (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize <= size &&
         (uint64_t)eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize <= size;
    for (int i = 0; ok && i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        ok = pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) == (ssize_t)sizeof ph &&
             (ph.p_type != PT_LOAD || (uint64_t)ph.p_offset + ph.p_filesz <= size);
    }
    if (fd >= 0)
        close(fd);
    if (!ok)
        buf_printf(why, "%s is not a whole shared object", path);
    return ok ? 0 : -1;
}

/* Loads the object at PATH into M if it is the one named KEY and its
   runtime table can be filled in. 0, or -1 with the reason in WHY. */
static int load_object(const char *path, const char *key, jit_module *m, tx_buf *why)
{
    if (whole_object(path, why) != 0)
        return -1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        buf_printf(why, "%s", e ? e : "dlopen failed");
        return -1;
    }
    const char *k = dlsym(h, "tx_cc_key");
    int (*bind)(const void *(*)(const char *));
    *(void **)&bind = dlsym(h, "tx_bind_runtime");
    jit_entry entry;
    *(void **)&entry = dlsym(h, "tx_entry");
    if (!k || strncmp(k, key, 65) != 0 || !bind || !entry) {
        dlclose(h);
        buf_printf(why, "%s is not the object its name promises", path);
        return -1;
    }
    if (bind(find_runtime_symbol) != 0) {
        dlclose(h);
        buf_printf(why, "%s calls runtime symbols this library lacks", path);
        return -1;
    }
    m->handle = h;
    m->entry = entry;
    return 0;
}

/* Writes SRC and the key line into a new temporary file made from
   TEMPLATE (mkstemp). 0, or -1 with the reason in WHY. */
static int write_source(char *template, const char *src, size_t len, const char *key, tx_buf *why)
{
    int fd = mkstemp(template);
    if (fd < 0) {
        buf_printf(why, "cannot create %s: %s", template, strerror(errno));
        return -1;
    }
    char tail[128];
    int nt = snprintf(tail, sizeof tail, "\nconst char tx_cc_key[] = \"%s\";\n", key);
    FILE *f = fdopen(fd, "w");
    int ok = f && fwrite(src, 1, len, f) == len && fwrite(tail, 1, (size_t)nt, f) == (size_t)nt;
    ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
    if (!ok) {
        unlink(template);
        buf_printf(why, "cannot write %s", template);
        return -1;
    }
    return 0;
}

/* Compiles SRC into DIR/KEY.so (through temporary files in DIR). 0, or -1
   with the reason in WHY. */
static int build(const compiler *c, const char *dir, const char *key, const char *src, size_t len,
                 const char *final, tx_buf *why)
{
    char csrc[CC_PATH], obj[CC_PATH];
    if (snprintf(csrc, sizeof csrc, "%s/%s.c.XXXXXX", dir, key) >= (int)sizeof csrc ||
        snprintf(obj, sizeof obj, "%s/%s.so.XXXXXX", dir, key) >= (int)sizeof obj) {
        buf_printf(why, "the cache directory's path is too long");
        return -1;
    }
    if (write_source(csrc, src, len, key, why) != 0)
        return -1;
    int fd = mkstemp(obj);
    if (fd < 0) {
        unlink(csrc);
        buf_printf(why, "cannot create %s: %s", obj, strerror(errno));
        return -1;
    }
    close(fd);
    int st = run_compiler(c, csrc, obj, why);
    unlink(csrc);
    if (st == 0 && rename(obj, final) != 0) {
        buf_printf(why, "cannot rename %s to %s: %s", obj, final, strerror(errno));
        st = -1;
    }
    if (st != 0)
        unlink(obj);
    return st;
}

int jit_cc_load(const char *src, size_t len, jit_module **out, tx_buf *err)
{
    *out = NULL;
    compiler *c = calloc(1, sizeof *c);
    jit_module *m = calloc(1, sizeof *m);
    tx_buf why = {0}, nocache = {0};
    char dir[CC_PATH], final[CC_PATH + 80], key[65];
    int st = TX_ERR_JIT, tmpdir = 0;
    if (!c || !m) {
        buf_puts(err, "out of memory");
        free(c);
        free(m);
        return TX_ERR_NOMEM;
    }
    m->release = release_cc;
    m->backend = "cc";
    if (find_compiler(c, &why) != 0)
        goto out;

    sha256 h;
    sha_init(&h);
    sha_add_str(&h, "tensorexpr cc tier " TX_VERSION_STRING);
    sha_add_str(&h, c->identity);
    sha_add_cpu(&h);
    for (int i = 1; i < c->n; i++)
        sha_add_str(&h, c->argv[i]);
    for (int i = 0; cc_flags[i]; i++)
        sha_add_str(&h, cc_flags[i]);
    for (int i = 0; cc_libs[i]; i++)
        sha_add_str(&h, cc_libs[i]);
    sha_add(&h, src, len);
    sha_hex(&h, key);

    if (cache_dir(dir, sizeof dir, &nocache) == 0) {
        snprintf(final, sizeof final, "%s/%s.so", dir, key);
        tx_buf stale = {0};
        if (access(final, F_OK) == 0) {
            if (load_object(final, key, m, &stale) == 0) {
                snprintf(m->detail, sizeof m->detail, "cached %.480s", final);
                st = TX_OK;
                buf_free(&stale);
                goto out;
            }
            unlink(final); /* not loadable, or not what its name says: rebuilt */
        }
        buf_free(&stale);
    } else { /* no cache: a private directory, removed once the object is loaded */
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/tensorexpr-XXXXXX", t && t[0] == '/' ? t : "/tmp");
        if (!mkdtemp(dir)) {
            buf_printf(&why, "%s; and cannot create a temporary directory: %s",
                       nocache.p ? nocache.p : "no cache", strerror(errno));
            goto out;
        }
        tmpdir = 1;
        snprintf(final, sizeof final, "%s/%s.so", dir, key);
    }
    double t0 = tx_rt_now();
    if (build(c, dir, key, src, len, final, &why) != 0)
        goto out;
    double ms = 1e3 * (tx_rt_now() - t0);
    if (load_object(final, key, m, &why) != 0) {
        unlink(final);
        goto out;
    }
    if (tmpdir)
        snprintf(m->detail, sizeof m->detail, "compiled by %.100s in %.0f ms, not cached (%.300s)", c->path, ms,
                 nocache.p ? nocache.p : "");
    else
        snprintf(m->detail, sizeof m->detail, "compiled by %.100s in %.0f ms into %.350s", c->path, ms, final);
    st = TX_OK;
out:
    if (tmpdir) {
        unlink(final);
        rmdir(dir);
    }
    if (st == TX_OK)
        *out = m;
    else {
        buf_printf(err, "cc tier: %s", why.oom ? "out of memory" : why.p ? why.p : "failed");
        free(m);
    }
    buf_free(&why);
    buf_free(&nocache);
    free(c);
    return st;
}
