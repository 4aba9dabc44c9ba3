/*
 * embed_lead.c - a C program of our own calling the standalone MPI-target
 * function of tests/mpi/lead.tx (Y(i,j,k) = 2 X(j,i,k) + X(i,j,k), with
 * extents 3 x 3 x 40), as tx_mpi(7) describes for tensors held by rows of
 * several leading modes: lead_rows says how many modes a row of X and of
 * Y may span, lead_alloc_lead gives memory by the rows the function picks
 * for this many ranks (*n0 rows, this rank's [lo, hi): each row one pair
 * ij), the caller fills its rows of X and checks its rows of Y; then X by
 * rows with Y whole on every rank, and X by first-mode rows
 * (lead_alloc_rows, 3 rows) with Y by its rows: the function takes any of
 * them. Each rank prints "embed_lead: ok" when every check passed.
 *
 *   mpicc -I. embed_lead.c lead_mpi.c -lscalapack-openmpi -llapacke -lopenblas -lm
 *   mpirun -np 4 ./a.out
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lead_mpi.h"

enum { A = 3, B = 3, C = 40 };

static double x_at(int64_t i, int64_t j, int64_t k) { return sin(0.3 * (double)(i * B * C + j * C + k) + 0.1); }

/* The largest error of Y's elements in flat range [E0, E1). */
static double y_error(const double *y, int64_t e0, int64_t e1, double err)
{
    for (int64_t e = e0; e < e1; e++) {
        int64_t i = e / (B * C), j = e / C % B, k = e % C;
        err = fmax(err, fabs(y[e] - (2 * x_at(j, i, k) + x_at(i, j, k))));
    }
    return err;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, code = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int64_t shape[3] = {A, B, C};
    const int64_t bytes = (int64_t)sizeof(double) * A * B * C;
    double err = 0;
    if (lead_rows(0) != 2 || lead_rows(1) != 2) /* X, Y: rows of at most their first two modes */
        code = -100;
    /* X and Y by the rows the function picks */
    int64_t xn0, xlo, xhi, yn0, ylo, yhi;
    double *x = lead_alloc_lead(MPI_COMM_WORLD, 0, bytes, shape, &xn0, &xlo, &xhi);
    double *y = lead_alloc_lead(MPI_COMM_WORLD, 1, bytes, shape, &yn0, &ylo, &yhi);
    int64_t want_n0 = 9; /* 3 first-mode rows are fewer than four per rank: pairs ij */
    if (!x || !y || xn0 != want_n0 || yn0 != want_n0 || xlo != ylo || xhi != yhi || (size > 1 && xhi - xlo == 9)) {
        printf("embed_lead: rank %d: alloc_lead gave %p %p, rows %lld..%lld of %lld\n", rank, (void *)x, (void *)y,
               (long long)xlo, (long long)xhi, (long long)xn0);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int64_t row = A * B * C / xn0;
    for (int64_t e = xlo * row; e < xhi * row; e++)
        x[e] = x_at(e / (B * C), e / C % B, e % C);
    int c1 = lead(MPI_COMM_WORLD, A, C, x, y);
    err = y_error(y, ylo * row, yhi * row, err);
    /* Y whole on every rank */
    double *yw = malloc((size_t)bytes);
    if (!yw)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int c2 = lead(MPI_COMM_WORLD, A, C, x, yw);
    err = y_error(yw, 0, A * B * C, err);
    lead_free_rows(y);
    lead_free_rows(x);
    /* X by first-mode rows only (what an older caller gives), Y by the function's rows */
    int64_t lo1, hi1;
    double *x1 = lead_alloc_rows(MPI_COMM_WORLD, bytes, A, &lo1, &hi1);
    y = lead_alloc_lead(MPI_COMM_WORLD, 1, bytes, shape, &yn0, &ylo, &yhi);
    if (!x1 || !y)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int64_t e = lo1 * B * C; e < hi1 * B * C; e++)
        x1[e] = x_at(e / (B * C), e / C % B, e % C);
    int c3 = lead(MPI_COMM_WORLD, A, C, x1, y);
    err = y_error(y, ylo * (A * B * C / yn0), yhi * (A * B * C / yn0), err);
    lead_free_rows(x1);
    lead_free_rows(y);
    free(yw);
    code = code ? code : c1 ? c1 : c2 ? c2 : c3;
    if (code != 0 || err > 1e-12)
        printf("embed_lead: rank %d: code %d (%s), max error %g\n", rank, code, lead_error(code), err);
    else
        printf("embed_lead: ok\n");
    MPI_Finalize();
    return code != 0 || err > 1e-12;
}
