#!/usr/bin/python3
"""transposes.py - permuting copies through the Python package, from and
into numpy's arrays (which start 16 bytes into a page, and whose
destination np.zeros gets small pages), one line of medians per run.

    TX_NUM_THREADS=N [TENSOREXPR_LIB=path/libtensorexpr.so] \\
        /usr/bin/python3 bench/transposes.py

To compare two builds, run it for each in turn, several rounds, the
rounds alternated (the machine's speed drifts within minutes):

    for r in 1 2; do for lib in OLD/build NEW/build; do
        TENSOREXPR_LIB=$lib/libtensorexpr.so /usr/bin/python3 bench/transposes.py
    done; done

Every result is checked against numpy's transpose first."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
import tensorexpr as tx  # noqa: E402

T2 = 'in {t} X[n,m];\nout {t} Y[m,n];\nY("j,i") = X("i,j");\n'
CASES = [('f64 3000x3000', T2.format(t=''), (3000, 3000), np.float64, (1, 0)),
         ('f32 4000x4000', T2.format(t='f32'), (4000, 4000), np.float32, (1, 0)),
         ('f64 3001x2999', T2.format(t=''), (3001, 2999), np.float64, (1, 0)),
         ('f64 64x256x256 batch', 'in X[p,n,m];\nout Y[p,m,n];\nY("b,j,i") = X("b,i,j");\n', (64, 256, 256),
          np.float64, (0, 2, 1)),
         ('f64 1000x1000', T2.format(t=''), (1000, 1000), np.float64, (1, 0)),
         ('f64 40^4 klij->ijkl', 'in X[a,b,c,d];\nout Y[c,d,a,b];\nY("i,j,k,l") = X("k,l,i,j");\n',
          (40, 40, 40, 40), np.float64, (2, 3, 0, 1))]


def median_ms(f):
    f()
    t0 = time.perf_counter()
    f()
    reps = max(1, int(0.05 / max(1e-6, time.perf_counter() - t0)))
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        ts.append((time.perf_counter() - t0) / reps)
    return sorted(ts)[3] * 1e3


out = []
for name, src, shape, dt, perm in CASES:
    p = tx.compile(src)
    X = np.random.default_rng(0).standard_normal(shape).astype(dt)
    want = X.transpose(perm)
    Y = np.zeros(want.shape, dt)
    p(X=X, Y=Y)
    if not (Y == want).all():
        sys.exit('%s: WRONG RESULT' % name)
    out.append('%s %.2f ms' % (name, median_ms(lambda: p(X=X, Y=Y))))
print(' | '.join(out))
