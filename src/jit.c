/*
 * jit.c — compiling generated C in memory with libtcc (target_jit_tcc's
 * loader). The only file that includes libtcc.h.
 *
 * Generated code (target_jit_tcc) is compiled with -nostdlib and sees no
 * headers: every symbol it calls is in runtime/symbols.def, whose table
 * (tx_runtime_symbols) is registered here with tcc_add_symbol, so a kernel
 * compiles in about a tenth of a millisecond and links against nothing
 * we did not choose. libtcc reports errors through a callback, which we
 * collect into the caller's buffer (nothing is printed).
 *
 * libtcc 0.9.27 keeps global state while it compiles, so compilations are
 * serialised by one mutex; running compiled code needs no lock.
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, for the memory check before libtcc */
#include <libtcc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tx.h"
#include "runtime.h"

static void collect_error(void *opaque, const char *msg)
{
    tx_buf *err = opaque;
    if (err) {
        buf_puts(err, "libtcc: ");
        buf_puts(err, msg);
        buf_puts(err, "\n");
    }
}

/* ---- Memory for libtcc ----

   libtcc 0.9.27 does not recover from its own allocation failures: within
   a compilation it reports the first ("memory full"), but its global state
   is left behind, and a later compilation in the same process can crash
   inside it (tccpp_delete, from tcc_compile); outside one (in
   tcc_set_output_type) it calls exit(1). So before libtcc is called, the
   memory it will need is mapped and released again, and if it is not
   there, the compilation is TX_ERR_NOMEM and libtcc is not called at all.

   What libtcc needs was measured by counting malloc's bytes in use during
   jit_compile (the examples, tests/num and generated programs of up to
   1.1 MB of C): its peak is 1.63 MB plus about 4.4 bytes per byte of
   source (1.70 MB for 20 KB of C, 6.6 MB for 1.1 MB). The check asks for
   twice that and more: 4 MB plus 8 bytes per byte of source. A mapping
   that is never touched costs no memory, only address space (and commit
   charge, under strict overcommit), which is what runs out first under a
   limit such as ulimit -v. Another thread may still take the memory
   between the check and the compilation: the check makes libtcc's failure
   unlikely, not impossible. */
#define LIBTCC_RESERVE(srclen) (((size_t)4 << 20) + 8 * (size_t)(srclen))

/* TX_OK if LIBTCC_RESERVE(SRCLEN) bytes can be had now; else a message in
   OUT and TX_ERR_NOMEM. */
static int reserve_for_libtcc(size_t srclen, tx_buf *out)
{
    size_t need = srclen < (SIZE_MAX >> 4) ? LIBTCC_RESERVE(srclen) : SIZE_MAX;
#ifdef MAP_ANONYMOUS
    /* mmap, not malloc: a large malloc that is freed would raise malloc's
       mmap threshold and change how the host's heap behaves */
    void *blk = need == SIZE_MAX ? MAP_FAILED
                                 : mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok = blk != MAP_FAILED;
    if (ok)
        munmap(blk, need);
#else
    void *blk = need == SIZE_MAX ? NULL : malloc(need);
    int ok = blk != NULL;
    free(blk);
#endif
    if (ok)
        return TX_OK;
    buf_printf(out, "out of memory: compiling the generated code (%zu bytes of C) needs about %zu MB, which "
               "is not available", srclen, (need + (1 << 20) - 1) >> 20);
    return TX_ERR_NOMEM;
}

static pthread_mutex_t tcc_lock = PTHREAD_MUTEX_INITIALIZER;

static void release_tcc(jit_module *m)
{
    pthread_mutex_lock(&tcc_lock);
    if (m->handle)
        tcc_delete(m->handle);
    pthread_mutex_unlock(&tcc_lock);
    free(m);
}

static jit_module *compile_locked(const char *src, tx_buf *err);

int jit_tcc_load(const char *src, size_t len, jit_module **out, tx_buf *err)
{
    *out = NULL;
    int st = reserve_for_libtcc(len, err);
    if (st != TX_OK)
        return st;
    pthread_mutex_lock(&tcc_lock);
    jit_module *m = compile_locked(src, err);
    pthread_mutex_unlock(&tcc_lock);
    *out = m;
    return m ? TX_OK : TX_ERR_JIT;
}

static jit_module *compile_locked(const char *src, tx_buf *err)
{
    jit_module *m = calloc(1, sizeof *m);
    if (!m) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    m->release = release_tcc;
    m->backend = "tcc";
    snprintf(m->detail, sizeof m->detail, "libtcc in memory");
    TCCState *tcc = tcc_new();
    m->handle = tcc;
    if (!tcc) {
        free(m);
        buf_puts(err, "libtcc: cannot create a compiler state");
        return NULL;
    }
    tcc_set_error_func(tcc, err, collect_error);
    tcc_set_options(tcc, "-nostdlib");
    if (tcc_set_output_type(tcc, TCC_OUTPUT_MEMORY) < 0)
        goto fail;
    for (const tx_runtime_symbol *r = tx_runtime_symbols; r->name; r++) /* runtime/symbols.def */
        tcc_add_symbol(tcc, r->name, r->addr);
    if (tcc_compile_string(tcc, src) < 0)
        goto fail;
    if (tcc_relocate(tcc, TCC_RELOCATE_AUTO) < 0)
        goto fail;
    m->entry = (jit_entry)tcc_get_symbol(tcc, "tx_entry");
    if (!m->entry) {
        buf_puts(err, "libtcc: the generated code has no entry point");
        goto fail;
    }
    return m;
fail:
    tcc_delete(tcc);
    free(m);
    return NULL;
}

jit_entry jit_entry_point(jit_module *m)
{
    return m->entry;
}

void jit_free(jit_module *m)
{
    if (m)
        m->release(m);
}
