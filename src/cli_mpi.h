/*
 * cli_mpi.h - txc run --mpi: the program's MPI-target C built with mpicc
 * into a cached shared object, loaded into every rank's txc (linked only
 * into txc; txc itself does not link MPI).
 */
#ifndef TX_CLI_MPI_H
#define TX_CLI_MPI_H

#include <stddef.h>
#include <stdint.h>

typedef struct cli_mpi cli_mpi;

/* Builds (or finds in the cache) the shared object for SRC (LEN bytes: the
   C of `txc --target mpi` whose function is named FN; TIMED: emitted from a
   program compiled with TX_OPTION_TIMING, with FN_times), loads it and
   initialises MPI. Returns the handle, or NULL with a message in ERR. */
cli_mpi *cli_mpi_open(const char *src, size_t len, const char *fn, int timed, char *err, size_t errlen);
/* This process's rank and the number of ranks (MPI_COMM_WORLD). */
int cli_mpi_rank(const cli_mpi *m);
int cli_mpi_size(const cli_mpi *m);
/* The largest STATUS any rank passes: every rank learns that one failed. */
int cli_mpi_agree(cli_mpi *m, int status);
/* The largest X any rank passes. Collective. */
double cli_mpi_max(cli_mpi *m, double x);
/* The seconds each statement took in the last cli_mpi_call on the rank
   where it took longest, then each of its calls (cli_mpi_call_info_at), into
   T[0 .. N-1]; how many there are (0 if the program was opened untimed).
   Collective. */
int cli_mpi_times(cli_mpi *m, double *t, int n);
/* One call of the program (a loop nest, a BLAS or a ScaLAPACK/LAPACK
   call), as the generated FN_calls describes it. */
typedef struct {
    const char *kind, *op;
    int stmt, line;
    double flops, bytes;
} cli_mpi_call_info;
/* Call I of a timed program into *C (its seconds are cli_mpi_times'
   entry nassign + I); the number of calls (0 if untimed). */
int cli_mpi_call_info_at(cli_mpi *m, int i, cli_mpi_call_info *c);
/* Rank 0's BYTES at BUF copied to every rank's BUF. 0, or -1. */
int cli_mpi_bcast(cli_mpi *m, void *buf, size_t bytes);
/* Input tensor K (parameter order) of BYTES and NDIM extents SHAPE, the
   file's contents in WHOLE on rank 0 (ignored elsewhere), to every rank:
   by rows (rank q receiving its block, MPI_Scatterv; a row one index
   tuple of the leading modes the program picks, FN_rows) when the program
   takes K so and it is large enough (TX_MPI_DIST_MIN), else whole
   (broadcast). Collective. 0 and *OUT the memory (cli_mpi_free); 1 if the
   program takes K only whole (nothing done: broadcast it); -1 if out of
   memory or a message failed, on every rank alike. */
int cli_mpi_share(cli_mpi *m, int k, const void *whole, size_t bytes, int ndim, const int64_t *shape, void **out);

/* Frees what cli_mpi_share or cli_mpi_alloc_out gave. */
void cli_mpi_free(cli_mpi *m, void *p);
/* Output tensor K of BYTES and NDIM extents SHAPE: zeroed memory by rows
   over the ranks when the program takes K so and it is large enough (0
   and *OUT), else 1 (nothing done: allocate it whole); -1 if out of
   memory on any rank. Collective. */
int cli_mpi_alloc_out(cli_mpi *m, int k, size_t bytes, int ndim, const int64_t *shape, void **out);
/* The whole of P (cli_mpi_share's or cli_mpi_alloc_out's) on rank 0: 0
   and a malloc'd *WHOLE there (NULL elsewhere); 1 if P is whole already;
   -1 if out of memory on rank 0. Collective. */
int cli_mpi_collect(cli_mpi *m, void *p, void **whole);
/* Runs the program on every rank: the symbolic dims, then the tensors'
   pointers in parameter order. Its return code (the same on every rank). */
int cli_mpi_call(cli_mpi *m, const int64_t *dims, void *const *ptrs);
/* What code means: the program's FN_error, with the detail of the failure
   (a leading minor, a zero pivot, an element) where the message has one;
   valid until the next call. */
const char *cli_mpi_error(cli_mpi *m, int code);
/* Finalises MPI (the object stays loaded until exit). NULL: no-op. */
void cli_mpi_close(cli_mpi *m);

#endif
