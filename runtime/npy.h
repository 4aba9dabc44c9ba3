/*
** npy.h - reader and writer for NumPy .npy files (format versions 1.0, 2.0, 3.0).
**
** Five element types are supported: little-endian float32 ('<f4'),
** float64 ('<f8'), complex64 ('<c8'), complex128 ('<c16') and bool ('|b1'). Arrays in memory are always
** C (row-major) order and native byte order; Fortran-ordered files are
** transposed on load. No function prints or exits: failures return -1 and a
** one-line message that names the file.
*/
#ifndef TX_NPY_H
#define TX_NPY_H

#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_DIMS 32

/* '<f4', '<f8', '|b1', '<c8' (complex64), '<c16' (complex128) */
typedef enum { NPY_F32 = 1, NPY_F64 = 2, NPY_BOOL = 3, NPY_C64 = 4, NPY_C128 = 5 } npy_dtype;

typedef struct {
    npy_dtype dtype;
    int       ndim;                   /* 0 for a 0-d array (a scalar) */
    int64_t   shape[NPY_MAX_DIMS];
    int64_t   nelem;                  /* product of shape; 1 for 0-d */
    void     *data;                   /* malloc'd, always C (row-major) order, native little-endian; caller frees with npy_free */
} npy_array;

/*
** Reads the .npy file PATH into *OUT.
**
** On success returns 0 and fills *out: dtype, ndim, shape[0..ndim-1] (the
** rest zero), nelem, and data, a malloc'd buffer of nelem*npy_dtype_size(dtype)
** bytes in C order (at least 1 byte, so data != NULL even when nelem == 0).
** Bool elements are normalised to 0 or 1.
**
** On failure returns -1, leaves *out zeroed (so data == NULL) and writes a
** one-line message naming PATH into ERR (at most ERRLEN bytes, always
** NUL-terminated when ERRLEN > 0; ERR may be NULL if ERRLEN is 0), e.g.
**   "a.npy: not a .npy file (bad magic)"
**   "a.npy: unsupported dtype '>f8' (big-endian); use '<f8' or '<f4'"
**   "a.npy: truncated: header says 120 bytes of data, file has 64"
**   "a.npy: cannot open: No such file or directory"
**   "a.npy: out of memory (N bytes)"
** The header length, shape and data size are all checked against the file
** size before anything is allocated; the data must fill the file exactly.
** With HUGE, data of 2 MiB or more goes into memory advised for huge pages
** (runtime/hugemem.h), as numpy reads it; either way it is freed by free().
*/
int  npy_read(const char *path, npy_array *out, int huge, char *err, size_t errlen);

/*
** Writes an array to exactly PATH (created or truncated, mode 0666 & ~umask)
** as a version 1.0 .npy file whose header is byte-identical to what
** numpy.save writes (C order, data starting at a multiple of 64 bytes,
** header ending in '\n').
**
** DTYPE is one of NPY_F32/NPY_F64/NPY_BOOL/NPY_C64/NPY_C128; 0 <= NDIM <= NPY_MAX_DIMS; SHAPE
** holds NDIM non-negative dims (may be NULL when NDIM == 0); DATA holds the
** product-of-shape elements in C order and native byte order (may be NULL
** when that product is 0). Bool elements are written as 0 or 1 (any nonzero
** byte means true).
**
** Returns 0, or -1 with a message naming PATH in ERR (as for npy_read). If
** writing fails after PATH was opened and PATH is a regular file, it is
** removed.
*/
int  npy_write(const char *path, npy_dtype dtype, int ndim, const int64_t *shape,
               const void *data, char *err, size_t errlen);

/*
** Writes the same bytes as npy_write to the open descriptor FD, from its
** current offset, naming PATH (which is not opened) in messages. FD is
** neither synced nor closed, and nothing is removed on failure: the caller
** owns the file (txc writes a temporary beside the output this way).
** Returns 0, or -1 with a message in ERR.
*/
int  npy_write_fd(int fd, const char *path, npy_dtype dtype, int ndim, const int64_t *shape,
                  const void *data, char *err, size_t errlen);

/* Frees a->data and sets it to NULL. Safe on a zeroed struct and on a == NULL. */
void npy_free(npy_array *a);

/* Bytes per element: 4, 8, 1, 8, 16 for NPY_F32, NPY_F64, NPY_BOOL, NPY_C64, NPY_C128; 0 for anything else. */
size_t npy_dtype_size(npy_dtype t);

/* The .npy descr string: "<f4", "<f8", "|b1", "<c8", "<c16"; "?" for anything else. Never NULL. */
const char *npy_dtype_name(npy_dtype t);

#endif /* TX_NPY_H */
