/*
 * embed_mpi.c - a C program of our own calling the standalone MPI-target
 * function of examples/matmul.tx (txc examples/matmul.tx --target mpi -o
 * matmul_mpi.c --header matmul_mpi.h), as tx_mpi(7) describes: every rank
 * passes the whole, identical inputs and gets the whole output; then again
 * with A in memory from matmul_alloc_rows (TX_MPI_DIST_MIN=0 in the test's
 * environment: held by rows), each rank writing only its own rows of it;
 * then with C by rows as well, each rank reading only its own rows of it.
 * Each rank checks C = A B against a triple loop every time and prints
 * "embed_mpi: ok".
 *
 *   mpicc -I. embed_mpi.c matmul_mpi.c -lscalapack-openmpi -llapacke -lopenblas -lm
 *   mpirun -np 4 ./a.out
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "matmul_mpi.h"

enum { N = 70, K = 50, M = 90 };

/* The largest difference between rows [LO, HI) of C and those of A B (a
   triple loop), or ERR if that is larger. */
static double row_error(const double *a, const double *b, const double *c, int64_t lo, int64_t hi, double err)
{
    for (int64_t i = lo; i < hi; i++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a[i * K + k] * b[k * M + j];
            err = fmax(err, fabs(s - c[i * M + j]));
        }
    return err;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *a = malloc(sizeof(double) * N * K), *b = malloc(sizeof(double) * K * M);
    double *c = malloc(sizeof(double) * N * M);
    if (!a || !b || !c)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < N * K; i++)
        a[i] = sin(0.1 * i); /* the same on every rank: replicated inputs */
    for (int i = 0; i < K * M; i++)
        b[i] = cos(0.05 * i);
    int code = matmul(MPI_COMM_WORLD, N, K, M, a, b, c);
    double err = row_error(a, b, c, 0, N, 0);
    /* A by rows: each rank writes its own rows only */
    int64_t lo = 0, hi = 0;
    double *ar = matmul_rows(0) ? matmul_alloc_rows(MPI_COMM_WORLD, sizeof(double) * N * K, N, &lo, &hi) : NULL;
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!ar || lo < 0 || hi > N || lo > hi || (size > 1 && hi - lo == N)) { /* by rows on several ranks */
        printf("embed_mpi: rank %d: matmul_rows(0) %d, matmul_alloc_rows gave %p, rows %lld..%lld\n", rank,
               matmul_rows(0), (void *)ar, (long long)lo, (long long)hi);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int64_t i = lo * K; i < hi * K; i++)
        ar[i] = sin(0.1 * (double)i);
    for (int i = 0; i < N * M; i++)
        c[i] = -1;
    int code2 = matmul(MPI_COMM_WORLD, N, K, M, ar, b, c);
    err = row_error(a, b, c, 0, N, err);
    matmul_free_rows(ar);
    if (!code)
        code = code2;
    if (matmul_rows(1) != 1 || matmul_rows(2) != 1 || matmul_rows(3) != 0) /* B, C; no fourth tensor */
        code = code ? code : -100;
    /* C by rows too: each rank reads its own rows of the product */
    int64_t clo = 0, chi = 0;
    double *cr = matmul_alloc_rows(MPI_COMM_WORLD, sizeof(double) * N * M, N, &clo, &chi);
    ar = matmul_alloc_rows(MPI_COMM_WORLD, sizeof(double) * N * K, N, &lo, &hi);
    if (!cr || !ar || (size > 1 && chi - clo == N) || clo != lo || chi != hi) {
        printf("embed_mpi: rank %d: C by rows: %p, rows %lld..%lld\n", rank, (void *)cr, (long long)clo,
               (long long)chi);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int64_t i = lo * K; i < hi * K; i++)
        ar[i] = sin(0.1 * (double)i);
    int code3 = matmul(MPI_COMM_WORLD, N, K, M, ar, b, cr);
    err = row_error(a, b, cr, clo, chi, err);
    matmul_free_rows(ar);
    matmul_free_rows(cr);
    if (!code)
        code = code3;
    if (code != 0 || err > 1e-10)
        printf("embed_mpi: rank %d: code %d (%s), max error %g\n", rank, code, matmul_error(code), err);
    else
        printf("embed_mpi: ok\n");
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return code != 0 || err > 1e-10;
}
