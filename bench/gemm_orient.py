#!/usr/bin/python3
"""gemm_orient.py - which way round OpenBLAS computes a row-major GEMM
fastest: C = A B as asked (cblas_dgemm RowMajor NoTrans NoTrans, M x N),
or turned round, C^T = B^T A^T written N x M (RowMajor Trans Trans), the
figures behind runtime/gemm.c's rule (turn double products with M >= 4 N
on OpenBLAS's SkylakeX kernels). Medians of interleaved rounds, through
ctypes, one line per shape.

    OPENBLAS_NUM_THREADS=N [OPENBLAS_CORETYPE=SkylakeX] \\
        /usr/bin/python3 bench/gemm_orient.py [--f32]

NN/TT above 1: turned round is faster. Debian 12's OpenBLAS takes some
new CPUs for a Prescott (bench/README.md): set OPENBLAS_CORETYPE to
measure the kernels a user would run."""
import ctypes
import os
import statistics
import sys
import time

import numpy as np

F32 = '--f32' in sys.argv[1:]
SHAPES = [(1600, 64, 1600), (1000, 100, 500), (2000, 100, 500), (2000, 500, 500), (1000, 500, 500),
          (4096, 32, 4096), (3000, 200, 3000), (512, 64, 512), (256, 16, 256), (500, 8, 500),
          (64, 1600, 1600), (1600, 1600, 64), (10000, 64, 256)]


def median_seconds(fns, rounds=7, least=0.05):
    """fns: {label: fn}; interleaved rounds, each at least LEAST seconds"""
    reps = {}
    for lab, f in fns.items():
        n = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            if time.perf_counter() - t0 >= least:
                break
            n *= 2
        reps[lab] = n
    got = {lab: [] for lab in fns}
    for _ in range(rounds):
        for lab, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(reps[lab]):
                f()
            got[lab].append((time.perf_counter() - t0) / reps[lab])
    return {lab: statistics.median(v) for lab, v in got.items()}


def main():
    blas = ctypes.CDLL('libopenblas.so.0')
    blas.openblas_get_corename.restype = ctypes.c_char_p
    real = ctypes.c_float if F32 else ctypes.c_double
    gemm = blas.cblas_sgemm if F32 else blas.cblas_dgemm
    gemm.restype = None
    gemm.argtypes = [ctypes.c_int] * 6 + [real, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                          real, ctypes.c_void_p, ctypes.c_int]
    dt = np.float32 if F32 else np.float64
    print('OpenBLAS core %s, %s threads, %s' % (blas.openblas_get_corename().decode(),
                                                os.environ.get('OPENBLAS_NUM_THREADS', '(default)'),
                                                'sgemm' if F32 else 'dgemm'))
    rng = np.random.default_rng(5)
    for (m, n, k) in SHAPES:
        a = rng.standard_normal((m, k)).astype(dt)
        b = rng.standard_normal((k, n)).astype(dt)
        c, ct = np.zeros((m, n), dt), np.zeros((n, m), dt)

        def nn():
            gemm(101, 111, 111, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data, n, 0.0, c.ctypes.data, n)

        def tt():
            gemm(101, 112, 112, n, m, k, 1.0, b.ctypes.data, n, a.ctypes.data, k, 0.0, ct.ctypes.data, m)

        nn()
        tt()
        want = a.astype(np.float64) @ b.astype(np.float64)
        tol = 1e-3 if F32 else 1e-10
        if not (np.allclose(c, want, rtol=tol, atol=tol * k) and np.allclose(ct.T, want, rtol=tol, atol=tol * k)):
            sys.exit('gemm_orient.py: %dx%dx%d: wrong result' % (m, n, k))
        med = median_seconds({'NN': nn, 'TT': tt})
        print('M=%5d N=%5d K=%5d  NN %9.3f ms  TT %9.3f ms  NN/TT %.2f' % (
            m, n, k, med['NN'] * 1e3, med['TT'] * 1e3, med['NN'] / med['TT']), flush=True)


if __name__ == '__main__':
    main()
