/*
 * cli_output.c — txc's output files, all or nothing (cli_output.h, txc(1)
 * OUTPUTS). Each regular output is written to NAME.tmp.XXXXXX beside it and
 * renamed into place only when every output is complete; a fatal signal
 * meanwhile removes the temporaries before it ends the process.
 */
#define _XOPEN_SOURCE 700 /* realpath, SA_RESTART */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_output.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- which file a path names ---- */

/* Where the chain of symbolic links at PATH leads (PATH itself if it is no
   link), malloc'd; the end may not exist yet. NULL if out of memory. */
static char *follow_links(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40; hops++) {
        struct stat st;
        char buf[PATH_MAX];
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break;
        ssize_t n = readlink(cur, buf, sizeof buf - 1);
        if (n <= 0)
            break;
        buf[n] = 0;
        const char *slash = strrchr(cur, '/');
        size_t dir = buf[0] == '/' || !slash ? 0 : (size_t)(slash - cur + 1);
        char *next = malloc(dir + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dir);
            memcpy(next + dir, buf, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
    return cur;
}

/* The directory part of PATH ("." if none), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* A file that may not exist yet, as an absolute path with its links and
   its directory resolved, malloc'd. */
static char *canonical(const char *path)
{
    char *p = follow_links(path);
    if (!p)
        return NULL;
    char *dir = dir_of(p);
    char *real = dir ? realpath(dir, NULL) : NULL;
    const char *slash = strrchr(p, '/');
    const char *base = slash ? slash + 1 : p;
    const char *d = real ? real : dir ? dir : "";
    size_t n = strlen(d) + strlen(base) + 2;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s%s%s", d, strcmp(d, "/") == 0 ? "" : "/", base);
    free(real);
    free(dir);
    free(p);
    return out;
}

int out_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea || eb)
        return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *ca = canonical(a), *cb = canonical(b);
    int same = !ca || !cb ? -1 : strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}

/* ---- checks before anything is written ---- */

int out_check(out_file *o, char *err, size_t errlen)
{
    struct stat st;
    o->fd = -1;
    o->tmp = NULL;
    o->target = NULL;
    o->exists = 0;
    if (o->kind == OUT_STDOUT)
        return 0;
    /* a file that exists (through its links, if any) is replaced where they
       lead; a link that leads nowhere yet creates the file it names */
    struct stat lst;
    int is_link = lstat(o->name, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (stat(o->name, &st) == 0)
        o->target = !is_link || !S_ISREG(st.st_mode) ? strdup(o->name) : realpath(o->name, NULL);
    else
        o->target = follow_links(o->name);
    if (!o->target)
        return fail(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
    if (stat(o->target, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail(err, errlen, "cannot write %s: it is a directory", o->name);
        if (S_ISSOCK(st.st_mode))
            return fail(err, errlen, "cannot write %s: it is a socket", o->name);
        if (!S_ISREG(st.st_mode)) { /* a device or a pipe: written in place */
            o->kind = OUT_DEVICE;
            if (access(o->target, W_OK) != 0)
                return fail(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
            return 0;
        }
        o->kind = OUT_FILE;
        o->exists = 1;
        o->mode = st.st_mode & 07777;
        /* like cp without -f: a file nobody may write is not replaced, not
           even by root, who could */
        if ((o->mode & 0222) == 0)
            return fail(err, errlen, "%s is read-only; txc does not replace it (make it writable or remove it)",
                        o->name);
        if (access(o->target, W_OK) != 0)
            return fail(err, errlen, "cannot replace %s: %s", o->name, strerror(errno));
    } else if (errno != ENOENT) {
        return fail(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
    } else {
        o->kind = OUT_FILE;
    }
    /* the temporary goes into the target's directory, and is renamed there */
    char *dir = dir_of(o->target);
    if (!dir)
        return fail(err, errlen, "%s: out of memory", o->name);
    int r = 0;
    if (stat(dir, &st) != 0)
        r = fail(err, errlen, "cannot write %s: %s: %s", o->name, dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        r = fail(err, errlen, "cannot write %s: %s: %s", o->name, dir, strerror(ENOTDIR));
    else if (access(dir, W_OK | X_OK) != 0)
        r = fail(err, errlen, "cannot write %s: directory %s: %s", o->name, dir, strerror(errno));
    free(dir);
    return r;
}

/* ---- temporaries and fatal signals ---- */

static const int fatal_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE};

/* 0 while outputs are written, 1 while they are renamed (a signal then
   waits in DEFERRED), 2 once a signal handler is ending the process. */
static volatile sig_atomic_t phase;
static volatile sig_atomic_t deferred;
/* the temporaries a signal must remove: NTEMPS slots, NULL when free */
static char *volatile *volatile temps;
static volatile sig_atomic_t ntemps;

/* Only async-signal-safe calls: unlink, sigaction, raise. The handler may
   run in any thread (OpenBLAS has its own). */
static void on_fatal_signal(int sig)
{
    int saved = errno;
    if (__sync_bool_compare_and_swap(&phase, 0, 2)) {
        for (int i = 0; i < ntemps; i++)
            if (temps[i])
                unlink(temps[i]);
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig); /* delivered when the handler returns: ends the process */
    } else if (phase == 1) {
        deferred = sig;
    }
    errno = saved;
}

/* Catches the fatal signals (except those ignored, as under nohup) and
   ignores SIGXFSZ, so that a write beyond `ulimit -f` fails with EFBIG and
   is reported like any other failed write. */
static void catch_signals(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        sigaddset(&sa.sa_mask, fatal_signals[i]);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(fatal_signals[i], &sa, NULL);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGXFSZ, &sa, NULL);
}

/* Creates the temporary of O, TARGET.tmp.XXXXXX, in slot I of the list the
   signal handler removes (called with signals held); O_EXCL, so never
   someone else's file. */
static int create_temp(out_file *o, int i, char *err, size_t errlen)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static uint64_t seed;
    size_t n = strlen(o->target);
    o->tmp = malloc(n + 12);
    if (!o->tmp)
        return fail(err, errlen, "%s: out of memory", o->name);
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        memcpy(o->tmp, o->target, n);
        memcpy(o->tmp + n, ".tmp.", 5);
        for (int k = 0; k < 6; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            o->tmp[n + 5 + k] = chars[(seed >> 33) % (sizeof chars - 1)];
        }
        o->tmp[n + 11] = 0;
        temps[i] = o->tmp;
        /* 0666 less the umask for a new file; a replaced file's mode below */
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd >= 0)
            break;
        temps[i] = NULL;
        if (errno != EEXIST)
            break;
    }
    if (o->fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return fail(err, errlen, "cannot create a temporary file beside %s: %s", o->name, strerror(e));
    }
    if (o->exists && fchmod(o->fd, o->mode) != 0)
        return fail(err, errlen, "cannot give the new %s the mode of the old: %s", o->name, strerror(errno));
    return 0;
}

/* Removes every temporary still there. */
static void remove_temps(out_file *o, int n)
{
    for (int i = 0; i < n; i++) {
        if (o[i].fd >= 0 && o[i].kind == OUT_FILE)
            close(o[i].fd);
        o[i].fd = -1;
        if (o[i].tmp) {
            unlink(o[i].tmp);
            temps[i] = NULL;
            free(o[i].tmp);
            o[i].tmp = NULL;
        }
    }
}

/* Holds fatal signals while the temporaries change (created, renamed,
   removed): a handler then only notes the signal. 0 if a handler is
   already ending the process. */
static int hold_signals(void)
{
    return __sync_bool_compare_and_swap(&phase, 0, 1);
}

/* Lets signals through again; one that came meanwhile removes the
   temporaries still there and ends the process, as it would have. */
static void release_signals(out_file *o, int n)
{
    __sync_bool_compare_and_swap(&phase, 1, 0);
    int sig = deferred;
    if (!sig)
        return;
    remove_temps(o, n);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* Writes output O, a device or standard output, in place. */
static int write_in_place(out_file *o, char *err, size_t errlen)
{
    int fd = STDOUT_FILENO;
    if (o->kind != OUT_STDOUT && (fd = open(o->target, O_WRONLY | O_CLOEXEC)) < 0)
        return fail(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
    err[0] = 0;
    int r = o->write(fd, o->name, o->arg, err, errlen);
    if (r != 0 && !err[0])
        fail(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
    if (fd != STDOUT_FILENO && close(fd) != 0 && r == 0)
        r = fail(err, errlen, "cannot write %s: %s", o->name, strerror(errno));
    return r;
}

int out_write_all(out_file *o, int n, char *err, size_t errlen)
{
    catch_signals();
    fflush(stdout); /* what txc printed comes before what goes to a device */
    /* the slots stay allocated (and reachable) once published: a handler
       in another thread may still be reading them */
    char *volatile *slots = calloc((size_t)n + 1, sizeof *slots);
    if (!slots)
        return fail(err, errlen, "out of memory");
    if (!hold_signals())
        return fail(err, errlen, "interrupted");
    char *volatile *old = temps;
    temps = slots;
    ntemps = n;
    free((void *)old);
    int r = 0;
    /* every temporary first: a directory that refuses one refuses before
       anything is written */
    for (int i = 0; !r && i < n; i++)
        if (o[i].kind == OUT_FILE)
            r = create_temp(&o[i], i, err, errlen);
    if (r)
        remove_temps(o, n);
    release_signals(o, n);
    for (int i = 0; !r && i < n; i++) {
        if (o[i].kind != OUT_FILE)
            continue;
        err[0] = 0;
        r = o[i].write(o[i].fd, o[i].name, o[i].arg, err, errlen);
        if (r != 0 && !err[0])
            fail(err, errlen, "cannot write %s: %s", o[i].name, strerror(errno));
        if (!r && fsync(o[i].fd) != 0)
            r = fail(err, errlen, "cannot write %s: %s", o[i].name, strerror(errno));
        int c = close(o[i].fd);
        o[i].fd = -1;
        if (!r && c != 0)
            r = fail(err, errlen, "cannot write %s: %s", o[i].name, strerror(errno));
    }
    /* devices and standard output: what reaches them cannot be taken back,
       so they come once every file is complete, before any is replaced */
    for (int i = 0; !r && i < n; i++)
        if (o[i].kind != OUT_FILE)
            r = write_in_place(&o[i], err, errlen);
    if (!hold_signals()) { /* a handler has removed the temporaries and is ending the process */
        for (int i = 0; i < n; i++)
            if (o[i].fd >= 0 && o[i].kind == OUT_FILE)
                close(o[i].fd);
        return fail(err, errlen, "interrupted");
    }
    int renamed = 0;
    for (int i = 0; !r && i < n; i++) {
        if (!o[i].tmp)
            continue;
        if (rename(o[i].tmp, o[i].target) != 0) {
            int e = errno;
            if (renamed)
                r = fail(err, errlen, "cannot replace %s: %s (%d other output%s already replaced)", o[i].name,
                         strerror(e), renamed, renamed == 1 ? " was" : "s were");
            else
                r = fail(err, errlen, "cannot replace %s: %s", o[i].name, strerror(e));
            break;
        }
        renamed++;
        temps[i] = NULL;
        free(o[i].tmp);
        o[i].tmp = NULL;
    }
    remove_temps(o, n); /* those not renamed, after a failure */
    ntemps = 0;
    release_signals(o, n);
    return r;
}

void out_release(out_file *o, int n)
{
    for (int i = 0; i < n; i++) {
        free(o[i].target);
        o[i].target = NULL;
        free(o[i].tmp);
        o[i].tmp = NULL;
    }
}
