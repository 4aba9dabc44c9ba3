/* elementwise.c — the gcc -O2 contender for E = A*B + D (bench/elementwise.tx).
   Built by bench/run.sh into build/bench/libelem.so and called via ctypes. */
#include <stddef.h>

void elem_fma(size_t n, const double *restrict a, const double *restrict b,
              const double *restrict d, double *restrict e)
{
    for (size_t i = 0; i < n; i++)
        e[i] = a[i] * b[i] + d[i];
}
