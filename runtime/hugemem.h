/*
 * hugemem.h - memory for large arrays: 2 MiB aligned and marked for
 * transparent huge pages.
 *
 * Linux maps fresh anonymous memory on first touch, one 4 KiB page per
 * fault, unless the range was advised MADV_HUGEPAGE (THP "madvise" mode,
 * a common default): then one fault maps 2 MiB. A first run that touches
 * gigabytes of intermediates or reads gigabytes of input spends seconds of
 * system time in faults otherwise (measured on bench/rccsd.tx: 928k faults,
 * 5 s). numpy advises its large arrays the same way. Not everywhere a
 * gain: under a hypervisor that takes back free guest memory, a fresh 2 MiB
 * page can cost more than 512 small ones (measured: bench/README.md), so
 * callers let the user say no (TX_OPTION_HUGE_PAGES, txc run
 * --no-huge-pages).
 *
 * The including file defines _DEFAULT_SOURCE before its first #include
 * (madvise is not POSIX); elsewhere, or without MADV_HUGEPAGE, this is
 * plain malloc. Memory from tx_huge_alloc is freed with free().
 */
#ifndef TX_HUGEMEM_H
#define TX_HUGEMEM_H

#include <stdlib.h>
#include <sys/mman.h>

#define TX_HUGE_PAGE ((size_t)2 << 20)

/* N bytes (at least 1), or NULL if out of memory. With ADVISE, from
   TX_HUGE_PAGE bytes on: aligned to TX_HUGE_PAGE and advised MADV_HUGEPAGE
   (advice only: if the kernel refuses it, the memory is still good). */
static inline void *tx_huge_alloc(size_t n, int advise)
{
#ifdef MADV_HUGEPAGE
    if (advise && n >= TX_HUGE_PAGE) {
        void *p = NULL;
        if (posix_memalign(&p, TX_HUGE_PAGE, n) != 0)
            return NULL;
        (void)madvise(p, n, MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(n ? n : 1);
}

#endif /* TX_HUGEMEM_H */
