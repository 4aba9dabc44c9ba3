#!/usr/bin/python3
"""complex_vs_numpy.py — complex (c128) programs against numpy through the
Python package: a matrix product (zgemm), an elementwise chain with a
complex exponential (the JIT's loops on (re, im) pairs and the runtime's
tx_p_cexp), a batched contraction of small matrices (loops, too small for
BLAS), and that contraction on the real parts in f64 for the ratio.
Best of several runs each, in one process; the machine may be loaded, so
compare ratios in one run, not across runs.

    PYTHONPATH=python /usr/bin/python3 bench/complex_vs_numpy.py   (after `make all`)
"""
import time

import numpy as np

import tensorexpr as tx

rng = np.random.default_rng(0)


def c(*s):
    return rng.standard_normal(s) + 1j * rng.standard_normal(s)


def best(f, n=7):
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return 1e3 * min(t)


def row(what, ours, numpy):
    print("%-46s tx %8.3f ms   numpy %8.3f ms   ratio %.2f" % (what, ours, numpy, ours / numpy))


for n in (64, 256):
    A, B = c(n, n), c(n, n)
    tx.einsum("ij,jk->ik", A, B)
    row("matmul %dx%d c128 (zgemm)" % (n, n), best(lambda: tx.einsum("ij,jk->ik", A, B)), best(lambda: A @ B))
Z = c(1000, 1000)
p = tx.compile('in c128 Z[n,m]; out c128 E[n,m]; E("i,j") = exp(Z("i,j")) * conj(Z("i,j")) + 2 * Z("i,j");')
p(Z=Z)
row("exp(Z)*conj(Z) + 2Z, 10^6 c128", best(lambda: p(Z=Z), 3), best(lambda: np.exp(Z) * np.conj(Z) + 2 * Z, 3))
X, Y = c(2000, 4, 8), c(2000, 8, 4)
q = tx.compile('in c128 X[b,i,k], Y[b,k,j]; out c128 R[b,i,j]; R("b,i,j") = X("b,i,k") * Y("b,k,j");')
q(X=X, Y=Y)
cx = best(lambda: q(X=X, Y=Y))
row("2000 x (4x8 @ 8x4) c128, loops vs einsum", cx, best(lambda: np.einsum("bik,bkj->bij", X, Y)))
Xr, Yr = X.real.copy(), Y.real.copy()
qr = tx.compile('in X[b,i,k], Y[b,k,j]; out R[b,i,j]; R("b,i,j") = X("b,i,k") * Y("b,k,j");')
qr(X=Xr, Y=Yr)
print("%-46s c128 / f64 = %.2f (4 real multiplications per complex one)" % (
    "the same contraction in f64", cx / best(lambda: qr(X=Xr, Y=Yr))))
