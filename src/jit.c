/*
 * jit.c — compiling generated C in memory with libtcc. The only file that
 * includes libtcc.h.
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
#include <libtcc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tx.h"
#include "runtime.h"

struct jit_module {
    TCCState *tcc;
    jit_entry entry;
};

static void collect_error(void *opaque, const char *msg)
{
    tx_buf *err = opaque;
    if (err) {
        buf_puts(err, "libtcc: ");
        buf_puts(err, msg);
        buf_puts(err, "\n");
    }
}

static pthread_mutex_t tcc_lock = PTHREAD_MUTEX_INITIALIZER;

static jit_module *compile_locked(const char *src, tx_buf *err);

jit_module *jit_compile(const char *src, tx_buf *err)
{
    pthread_mutex_lock(&tcc_lock);
    jit_module *m = compile_locked(src, err);
    pthread_mutex_unlock(&tcc_lock);
    return m;
}

static jit_module *compile_locked(const char *src, tx_buf *err)
{
    jit_module *m = calloc(1, sizeof *m);
    if (!m) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    m->tcc = tcc_new();
    if (!m->tcc) {
        free(m);
        buf_puts(err, "libtcc: cannot create a compiler state");
        return NULL;
    }
    tcc_set_error_func(m->tcc, err, collect_error);
    tcc_set_options(m->tcc, "-nostdlib");
    if (tcc_set_output_type(m->tcc, TCC_OUTPUT_MEMORY) < 0)
        goto fail;
    for (const tx_runtime_symbol *r = tx_runtime_symbols; r->name; r++) /* runtime/symbols.def */
        tcc_add_symbol(m->tcc, r->name, r->addr);
    if (tcc_compile_string(m->tcc, src) < 0)
        goto fail;
    if (tcc_relocate(m->tcc, TCC_RELOCATE_AUTO) < 0)
        goto fail;
    m->entry = (jit_entry)tcc_get_symbol(m->tcc, "tx_entry");
    if (!m->entry) {
        buf_puts(err, "libtcc: the generated code has no entry point");
        goto fail;
    }
    return m;
fail:
    if (m->tcc)
        tcc_delete(m->tcc);
    free(m);
    return NULL;
}

jit_entry jit_entry_point(jit_module *m)
{
    return m->entry;
}

void jit_free(jit_module *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&tcc_lock);
    if (m->tcc)
        tcc_delete(m->tcc);
    pthread_mutex_unlock(&tcc_lock);
    free(m);
}
