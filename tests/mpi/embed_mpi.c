/*
 * embed_mpi.c - a C program of our own calling the standalone MPI-target
 * function of examples/matmul.tx (txc examples/matmul.tx --target mpi -o
 * matmul_mpi.c --header matmul_mpi.h), as tx_mpi(7) describes: every rank
 * passes the whole, identical inputs and gets the whole output. Each rank
 * checks C = A B against a triple loop and prints "embed_mpi: ok".
 *
 *   mpicc -I. embed_mpi.c matmul_mpi.c -lscalapack-openmpi -llapacke -lopenblas -lm
 *   mpirun -np 4 ./a.out
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "matmul_mpi.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    enum { N = 70, K = 50, M = 90 };
    double *a = malloc(sizeof(double) * N * K), *b = malloc(sizeof(double) * K * M);
    double *c = malloc(sizeof(double) * N * M);
    if (!a || !b || !c)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < N * K; i++)
        a[i] = sin(0.1 * i); /* the same on every rank: replicated inputs */
    for (int i = 0; i < K * M; i++)
        b[i] = cos(0.05 * i);
    int code = matmul(MPI_COMM_WORLD, N, K, M, a, b, c);
    double err = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a[i * K + k] * b[k * M + j];
            err = fmax(err, fabs(s - c[i * M + j]));
        }
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
