/* stream.c - the machine's memory bandwidth, for bench/peers.py: STREAM's
   copy (a = b, 16 bytes per element) and triad (a = b + s*c, 24 bytes per
   element, no write-allocate counted), over arrays far larger than the
   caches, on T threads (OpenMP, static schedule), best of R repetitions.

   usage: stream N THREADS REPS    prints "copy GB/s triad GB/s" */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    int t = argc > 2 ? atoi(argv[2]) : 1, reps = argc > 3 ? atoi(argv[3]) : 10;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c || n < 1 || t < 1) {
        fprintf(stderr, "stream: bad arguments or out of memory\n");
        return 1;
    }
    omp_set_num_threads(t);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = 1.0 + i % 7;
        c[i] = 2.0 - i % 5;
    }
    double best_copy = 1e30, best_triad = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i];
        double t1 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + 3.0 * c[i];
        double t2 = omp_get_wtime();
        if (t1 - t0 < best_copy) best_copy = t1 - t0;
        if (t2 - t1 < best_triad) best_triad = t2 - t1;
    }
    printf("%.3f %.3f\n", 16.0 * n / best_copy / 1e9, 24.0 * n / best_triad / 1e9);
    int keep = a[n / 2] == 12345.0; /* the loops' result is used */
    free(a);
    free(b);
    free(c);
    return keep;
}
