/*
 * fuzz_compile.c — libFuzzer harness over the whole compile path:
 * lex, parse, sema, lowering, every pass, both emitters, the listing, and
 * (for programs whose tensors are small) the JIT through libtcc and a run
 * on zeroed data with every dim set to 2 or 3.
 *
 *   make fuzz FUZZ_SECONDS=60
 *
 * Any crash, sanitizer report or leak is a finding; each becomes a
 * regression test in tests/diag or tests/num.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensorexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tx_ctx *c = tx_new();
    if (!c)
        return 0;
    tx_set_option(c, TX_OPTION_OPT_LEVEL, size & 1 ? 2 : 0);
    tx_program *p = tx_compile(c, (const char *)data, size, "fuzz.tx");
    if (!p) {
        (void)tx_errmsg(c);
        tx_free(c);
        return 0;
    }
    free(tx_emit_c(p, NULL));
    tx_emit_options o = {.name = "fuzz", .no_blas = 1};
    free(tx_emit(p, &o, NULL));
    o.header = 1;
    free(tx_emit(p, &o, NULL));
    free(tx_graph(p, 0, NULL));
    free(tx_graph(p, 1, NULL));

    /* run it small: every dim 2 (or 3), zeroed inputs */
    int n = tx_tensor_count(p);
    void **bufs = calloc((size_t)n + 1, sizeof *bufs);
    int ok = bufs != NULL;
    for (int i = 0; ok && i < n; i++) {
        tx_tensor_info info;
        tx_tensor_get(p, i, &info);
        for (int m = 0; m < info.ndim; m++)
            if (info.dims[m])
                tx_set_dim(p, info.dims[m], 2 + (int64_t)(size % 2));
    }
    for (int i = 0; ok && i < n; i++) {
        tx_tensor_info info;
        int64_t shape[64], elems = 1;
        tx_tensor_get(p, i, &info);
        if (tx_tensor_shape(p, info.name, shape) != TX_OK) {
            ok = 0;
            break;
        }
        for (int m = 0; m < info.ndim; m++) {
            if (shape[m] > 0 && elems > 100000 / shape[m]) {
                ok = 0;
                break;
            }
            elems *= shape[m];
        }
        if (!ok)
            break;
        bufs[i] = calloc((size_t)(elems ? elems : 1), 16); /* the widest element: c128 */
        ok = bufs[i] && tx_bind(p, info.name, bufs[i], info.ndim, shape) == TX_OK;
    }
    /* sparse maps: every other (source, target) pair present */
    int nm = tx_map_count(p);
    int64_t *offs[16] = {0}, *tgts[16] = {0};
    tx_sparse_map maps[16];
    for (int k = 0; ok && k < nm && k < 16; k++) {
        tx_map_info mi;
        int64_t shape[64], ns = 1, nd = 1;
        tx_map_get(p, k, &mi);
        if (tx_map_shape(p, mi.name, shape) != TX_OK) {
            ok = 0;
            break;
        }
        for (int m = 0; m < mi.nsrc; m++)
            ns *= shape[m];
        for (int m = 0; m < mi.ndst; m++)
            nd *= shape[mi.nsrc + m];
        if (ns * nd > 100000) {
            ok = 0;
            break;
        }
        offs[k] = malloc(sizeof(int64_t) * (size_t)(ns + 1));
        tgts[k] = malloc(sizeof(int64_t) * (size_t)(ns * nd + 1));
        if (!offs[k] || !tgts[k]) {
            ok = 0;
            break;
        }
        int64_t e = 0;
        for (int64_t s = 0; s < ns; s++) {
            offs[k][s] = e;
            for (int64_t t = 0; t < nd; t++)
                if ((s + t + (int64_t)size) % 2)
                    tgts[k][e++] = t;
        }
        offs[k][ns] = e;
        maps[k] = (tx_sparse_map){ns, offs[k], tgts[k]};
        ok = tx_bind_sparse(p, mi.name, &maps[k]) == TX_OK;
    }
    if (ok)
        (void)tx_run(p);
    for (int k = 0; k < 16; k++) {
        free(offs[k]);
        free(tgts[k]);
    }
    for (int i = 0; bufs && i < n; i++)
        free(bufs[i]);
    free(bufs);
    tx_program_free(p);
    tx_free(c);
    return 0;
}
