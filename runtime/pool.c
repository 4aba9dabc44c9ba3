/*
 * pool.c - the thread pool that runs kernels in parallel (DESIGN.md
 * section 6: Halide's halide_do_par_for).
 *
 * A kernel `int k(const void *args, int64_t lo, int64_t hi)` computes the
 * iterations [lo, hi) of its outermost loop over an output label; those
 * iterations write disjoint elements, so any split gives the same result
 * as one call over [0, n), bit for bit, whatever the number of threads.
 * tx_rt_parallel cuts [0, n) into contiguous chunks, a few per thread.
 * Each thread owns a contiguous run of them, as a static schedule would
 * give it, and takes its own in order; a thread that has run out takes
 * the next untaken chunk of another's run (work stealing): a worker that
 * wakes late, or a core that something else holds, leaves its chunks to
 * the others instead of holding up the region. The caller does not wait
 * for a worker that had not joined by the time every chunk was taken.
 * Owned runs, not chunks dealt out in turn, because two threads streaming
 * through neighbouring megabytes ran slower than two streaming through
 * their own halves: c = a*b over 10^6 doubles on 2 threads took 367-544 us
 * with 8 chunks dealt in turn, 298-423 us with halves (an OpenMP static
 * loop 330-430 us), alternated in one process.
 *
 * One process-wide pool of workers, made on first use. One parallel region
 * at a time: a caller that finds the pool busy (another thread's program
 * is using it) runs its kernel alone, so programs running in several
 * threads never oversubscribe the cores. BLAS and LAPACK calls happen
 * between kernels, never during one, and get the same thread count
 * (api.c sets OpenBLAS's), so the two never run at once either; a
 * kernel that is a batch of BLAS calls (tx_rt_parallel_blas) sets
 * OpenBLAS to one thread while the pool's threads make the calls.
 *
 * What that does not cover: after a threaded call, OpenBLAS 0.3.21's
 * workers wait for the next one by spinning for 2^28 cycles,
 * OPENBLAS_THREAD_TIMEOUT's default, which OpenBLAS reads once, when it
 * is loaded. A pool kernel right after a GEMM then shares
 * a core with that spinning thread, and in some processes (it depends on
 * where the scheduler puts the two) gets little of it: in
 * tanh(X W1 + b1) W2 + b2 (1000x500x500, then x100) on two threads, the
 * tanh kernel after the first GEMM took 1155 and 1140 us with the
 * default, 691 and 660 with OPENBLAS_THREAD_TIMEOUT=4 (one thread: 1111;
 * per-call medians of 41 runs, TX_OPTION_TIMING, huge pages); the whole
 * program's time moved within the noise (medians of 9 alternated runs,
 * 11.2 and 10.9 ms). Running each GEMM as bands on the pool's threads
 * instead (one OpenBLAS thread per band) leaves no thread spinning, but
 * GEMMs alone were slower that way (gemm.c).
 *
 * tx_rt_reduce shares a long contiguous reduction (a full sum) the same
 * way: the chunks of tx_p_red_chunked (prims.inc), fixed by the length
 * alone, one partial result each, folded in order on the calling thread.
 *
 * How many threads: tx_rt_set_threads (the library's per-run setting,
 * thread-local), else the TX_NUM_THREADS environment variable, else every
 * online core.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cblas.h>

#include "runtime.h"

#define POOL_MAX 256

static pthread_mutex_t region = PTHREAD_MUTEX_INITIALIZER; /* one parallel region at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;   /* guards the job below */
static pthread_cond_t go = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static int nworkers;        /* started so far */
static unsigned generation; /* bumped for each job */
static int pending;         /* workers running the job */
static int job_open;        /* workers may still join the job */
static tx_kernel_fn job_kernel;
static const void *job_args;
static int64_t job_n;
static int64_t job_chunks;  /* how many chunks [0, n) is cut into */
static struct {
    int64_t next;           /* the next chunk of this thread's run (atomic) */
    int64_t end;            /* one past its run's last chunk */
    char pad[48];           /* one cache line per thread */
} job_run[POOL_MAX];
static int job_threads;
static int job_status;

static __thread int thread_budget; /* 0: the default */

/* Thread ME (0: the caller) takes chunks of the job until none is left:
   those of its own run first, then those of the next threads' runs, of NT
   runs. Chunk c of NC is the iterations [n*c/nc, n*(c+1)/nc). The first
   failing status, or 0. */
static int run_chunks(int me, int nt, tx_kernel_fn k, const void *args, int64_t n, int64_t nc)
{
    int st = 0;
    for (int r = 0; r < nt; r++) {
        int t = (me + r) % nt;
        for (;;) {
            int64_t c = __atomic_fetch_add(&job_run[t].next, 1, __ATOMIC_RELAXED);
            if (c >= job_run[t].end)
                break;
            int64_t lo = n / nc * c + (n % nc) * c / nc, hi = n / nc * (c + 1) + (n % nc) * (c + 1) / nc;
            int s = lo < hi ? k(args, lo, hi) : 0;
            if (s && !st)
                st = s;
        }
    }
    return st;
}

/* How long a worker watches for the next job before it sleeps: kernels
   come in runs (the statements of a program, a program called in a loop),
   and waking a sleeping thread takes tens of microseconds, a good part of
   a kernel that is worth sharing. It watches with sched_yield, so that a
   thread that wants the core meanwhile gets it: OpenBLAS's, when a BLAS
   call follows the kernel (a busy loop there took a core from a 192^3
   dgemm: CCSD ring at 2 threads 188-232 us, with sched_yield 156). */
#define SPIN_SECONDS 50e-6

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg; /* thread number, from 1 */
    unsigned seen = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        if (__atomic_load_n(&generation, __ATOMIC_ACQUIRE) == seen) {
            pthread_mutex_unlock(&lock);
            double until = tx_rt_now() + SPIN_SECONDS;
            while (__atomic_load_n(&generation, __ATOMIC_ACQUIRE) == seen && tx_rt_now() < until)
                sched_yield(); /* a thread that wants the core (BLAS's) gets it */
            pthread_mutex_lock(&lock);
        }
        while (generation == seen)
            pthread_cond_wait(&go, &lock);
        seen = generation;
        if (me >= job_threads || !job_open)
            continue; /* not needed this time, or every chunk is taken */
        __atomic_add_fetch(&pending, 1, __ATOMIC_RELAXED);
        tx_kernel_fn k = job_kernel;
        const void *args = job_args;
        int64_t n = job_n, nc = job_chunks;
        int nt = job_threads;
        pthread_mutex_unlock(&lock);
        int st = run_chunks(me, nt, k, args, n, nc);
        pthread_mutex_lock(&lock);
        if (st && !job_status)
            job_status = st;
        if (__atomic_sub_fetch(&pending, 1, __ATOMIC_RELEASE) == 0)
            pthread_cond_signal(&done);
    }
    return NULL;
}

static int default_threads; /* TX_NUM_THREADS or the cores, read once */

static int read_default_threads(void)
{
    const char *e = getenv("TX_NUM_THREADS");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == 0 && v >= 1)
            return v > POOL_MAX ? POOL_MAX : (int)v;
    }
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c < 1 ? 1 : c > POOL_MAX ? POOL_MAX : (int)c;
}

int tx_rt_default_threads(void)
{
    /* sysconf reads /sys on every call: a run of a small program would pay
       microseconds for it. A race here only computes the same value twice. */
    int n = __atomic_load_n(&default_threads, __ATOMIC_RELAXED);
    if (!n) {
        n = read_default_threads();
        __atomic_store_n(&default_threads, n, __ATOMIC_RELAXED);
    }
    return n;
}

void tx_rt_set_threads(int n)
{
    thread_budget = n < 0 ? 0 : n > POOL_MAX ? POOL_MAX : n;
}

int tx_rt_threads(void)
{
    return thread_budget ? thread_budget : tx_rt_default_threads();
}

/* tx_rt_parallel with PER chunks per thread */
static int parallel(tx_kernel_fn k, const void *args, int64_t n, int per)
{
    int nt = tx_rt_threads();
    if (nt > n)
        nt = (int)n;
    if (nt <= 1 || pthread_mutex_trylock(&region) != 0)
        return n > 0 ? k(args, 0, n) : 0;
    pthread_mutex_lock(&lock);
    while (nworkers < nt - 1) { /* a worker that cannot start leaves fewer threads */
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int ok = pthread_create(&t, &attr, worker, (void *)(intptr_t)(nworkers + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok)
            break;
        nworkers++;
    }
    if (nt > nworkers + 1)
        nt = nworkers + 1;
    job_kernel = k;
    job_args = args;
    job_n = n;
    job_chunks = n < (int64_t)nt * per ? n : (int64_t)nt * per;
    for (int t = 0; t < nt; t++) { /* thread t's run: chunks [nc*t/nt, nc*(t+1)/nt) */
        job_run[t].next = job_chunks * t / nt;
        job_run[t].end = job_chunks * (t + 1) / nt;
    }
    job_threads = nt;
    job_status = 0;
    job_open = 1;
    pending = 0;
    __atomic_store_n(&generation, generation + 1, __ATOMIC_RELEASE); /* read by spinning workers */
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    int st = run_chunks(0, nt, k, args, n, job_chunks);
    pthread_mutex_lock(&lock);
    job_open = 0; /* every chunk is taken: a worker not in yet stays out */
    if (pending > 0) { /* the last chunks are being done: watch them end, then sleep */
        pthread_mutex_unlock(&lock);
        double until = tx_rt_now() + SPIN_SECONDS;
        while (__atomic_load_n(&pending, __ATOMIC_ACQUIRE) > 0 && tx_rt_now() < until)
            sched_yield();
        pthread_mutex_lock(&lock);
    }
    while (pending > 0)
        pthread_cond_wait(&done, &lock);
    if (!st)
        st = job_status;
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&region);
    return st;
}

int tx_rt_parallel(tx_kernel_fn k, const void *args, int64_t n)
{
    return parallel(k, args, n, 4);
}

/* One chunk per thread: a kernel whose range is the blocks of an output
   row that it runs down many input rows (a column sum, emit_dense.c's
   emit_reduce_outer) reads, per chunk, one segment of every input row;
   segments of a few blocks cost the prefetchers their streams. A column
   sum of 3000x3000 f32 on two threads took 3.1-3.6 ms with four chunks
   per thread, 1.6-2.0 ms with one (one thread: 3.2-3.7 ms), timed with
   bench/tx_loop. */
int tx_rt_parallel_wide(tx_kernel_fn k, const void *args, int64_t n)
{
    return parallel(k, args, n, 1);
}

/* BLAS calls in a loop over a batch: the calls on the pool's threads,
   each call on one BLAS thread, when the batch divides among the threads
   evenly enough (a multiple of them, or at least twice as many); else
   one after the other, BLAS threaded as set. A GEMM's own threads
   synchronise inside every call, and OpenBLAS zeroes C for beta = 0 in
   a pass of its own before the kernel, threaded again: eight
   512x512x64 products (attention's QK^T) took 7.5 ms threaded call by
   call on two cores, 6.7 ms two calls at once, in a C loop of
   cblas_dgemm calls against OpenBLAS 0.3.21. The BLAS setting is
   process-wide (OpenBLAS has no per-thread one): api.c sets it for
   each run, and this puts it back. */
int tx_rt_parallel_blas(tx_kernel_fn k, const void *args, int64_t n)
{
    int nt = tx_rt_threads();
    if (nt <= 1 || n < nt || (n % nt != 0 && n < 2 * (int64_t)nt))
        return n > 0 ? k(args, 0, n) : 0;

    int was = openblas_get_num_threads();
    if (was != 1)
        openblas_set_num_threads(1);
    int st = tx_rt_parallel(k, args, n);
    if (was != 1)
        openblas_set_num_threads(was);
    return st;
}

/* The chunks of a reduction: the rule of tx_p_red_nchunks and
   tx_p_red_chunk in prims.inc (tests/check_threads.c compares the two). */
#define RED_CHUNK 16384
#define RED_MAXCHUNKS 64

typedef double red_fn(int64_t, const double *, double);
typedef double redf_fn(int64_t, const float *, double);

/* a reduction of doubles (RED, X) or of floats (REDF, XF, their
   chunks' results folded by RED) */
typedef struct {
    red_fn *red;
    redf_fn *redf;
    tx_rt_red_pair_fn *pair;   /* RED's pair (tx_rt_red_pair), or NULL */
    tx_rt_redf_pair_fn *pairf; /* REDF's, or NULL */
    int64_t n, nc;
    const double *x;
    const float *xf;
    double acc;
    double part[RED_MAXCHUNKS];
} red_job;

static int red_chunks(const void *args, int64_t lo, int64_t hi)
{
    red_job *j = (red_job *)(uintptr_t)args; /* the job is ours, not const */
    int64_t per = (j->n / j->nc) & ~(int64_t)15;
    for (int64_t c = lo; c < hi; c++) {
        int64_t a = per * c - 1, b = c + 1 == j->nc ? j->n : per * (c + 1) - 1;
        if (c + 1 < hi && c + 2 < j->nc && (j->redf ? j->pairf != NULL : j->pair != NULL)) {
            /* chunks c and c + 1, both of PER - 1 elements, side by side
               (prims.inc's tx_p_red_sum_chunks2) */
            double *two = &j->part[c];
            if (j->redf) {
                two[0] = c == 0 ? j->acc : (double)j->xf[a];
                two[1] = (double)j->xf[b];
                j->pairf(per - 1, j->xf + a + 1, j->xf + b + 1, two);
            } else {
                two[0] = c == 0 ? j->acc : j->x[a];
                two[1] = j->x[b];
                j->pair(per - 1, j->x + a + 1, j->x + b + 1, two);
            }
            c++;
            continue;
        }
        if (j->redf)
            j->part[c] = c == 0 ? j->redf(b, j->xf, j->acc) : j->redf(b - a - 1, j->xf + a + 1, (double)j->xf[a]);
        else
            j->part[c] = c == 0 ? j->red(b, j->x, j->acc) : j->red(b - a - 1, j->x + a + 1, j->x[a]);
    }
    return 0;
}

static int64_t red_nchunks(int64_t n)
{
    int64_t nc = n / RED_CHUNK;
    return nc < 1 ? 1 : nc > RED_MAXCHUNKS ? RED_MAXCHUNKS : nc;
}

/* J's NC > 1 chunks on the pool, their results folded in order by RED
   (J's part[] is not cleared: a reduction called a row at a time pays
   nothing for it when the row is one chunk) */
static double red_run(red_job *j)
{
    tx_rt_parallel(red_chunks, j, j->nc);
    double acc = j->part[0];
    for (int64_t c = 1; c < j->nc; c++)
        acc = j->red(1, &j->part[c], acc);
    return acc;
}

/* a reduction of N doubles X by RED, or of N floats XF by REDF with the
   chunks' results folded by RED */
static double reduce(red_fn *red, redf_fn *redf, int64_t n, const double *x, const float *xf, double acc)
{
    red_job j;
    j.nc = red_nchunks(n);
    if (j.nc == 1)
        return redf ? redf(n, xf, acc) : red(n, x, acc);
    j.red = red;
    j.redf = redf;
    j.pair = redf ? NULL : tx_rt_red_pair(red);
    j.pairf = redf ? tx_rt_redf_pair(redf) : NULL;
    j.n = n;
    j.x = x;
    j.xf = xf;
    j.acc = acc;
    return red_run(&j);
}

double tx_rt_reduce(double (*red)(int64_t, const double *, double), int64_t n, const double *x, double acc)
{
    return reduce(red, NULL, n, x, NULL, acc);
}

double tx_rt_reducef(double (*red)(int64_t, const float *, double), double (*fold)(int64_t, const double *, double),
                     int64_t n, const float *x, double acc)
{
    return reduce(fold, red, n, NULL, x, acc);
}
