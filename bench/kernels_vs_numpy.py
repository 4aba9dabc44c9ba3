#!/usr/bin/python3
"""kernels_vs_numpy.py — the compiler's own loop nests (not BLAS) against
numpy, one thread, and the same kernels on 1 and 2 threads (results must be
bit-identical). Medians of interleaved rounds in one process.

    /usr/bin/python3 bench/kernels_vs_numpy.py      (after `make all`)
"""
import os
import sys
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
sys.argv = [sys.argv[0], '--threads', '1']
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B          # noqa: E402  (the ctypes bindings of bench.py)
import numpy as np         # noqa: E402

TX_OPTION_THREADS = 3
lib = B.load_tx()
rng = np.random.default_rng(7)


def program(src, arrays, threads):
    t = B.TxLib(lib)
    lib.tx_set_option(t.ctx, TX_OPTION_THREADS, threads)
    p = t.compile(src, 'bench.tx')
    for name, a in arrays.items():
        t.bind(p, name, a)
    t.run(p, 'bench.tx')
    return lambda: lib.tx_run(p)


def median(fns, rounds=11):
    ts = [[] for _ in fns]
    for _ in range(rounds):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            ts[i].append(time.perf_counter() - t0)
    return [float(np.median(t)) for t in ts]


X = rng.random((4000, 2500)); r = np.zeros(4000)
x = rng.random(10**7); s = np.zeros(()); y = np.zeros(10**7)
S = rng.random((2000, 2000)); P = np.zeros((2000, 2000)); lse = np.zeros(2000)
softmax = open(os.path.join(os.path.dirname(__file__), '..', 'examples', 'softmax.tx')).read()
cases = [
    ('row max 4000x2500', 'in X[n,m];\nout r[n];\nr("i") = reduce(max, X("i,j"));\n', {'X': X, 'r': r},
     lambda: X.max(1)),
    ('sum of 1e7', 'in x[n];\nout s;\ns = x("i");\n', {'x': x, 's': s}, lambda: x.sum()),
    ('row softmax 2000x2000', softmax, {'X': S, 'P': P, 'lse': lse},
     lambda: (lambda e: e / e.sum(1, keepdims=True))(np.exp(S - S.max(1, keepdims=True)))),
    ('tanh of 1e7', 'in x[n];\nout y[n];\ny("i") = tanh(x("i"));\n', {'x': x, 'y': y}, lambda: np.tanh(x)),
]
print('%-24s %10s %10s %8s | %10s %8s %s' % ('kernel', 'tx 1t', 'numpy', 'np/tx', 'tx 2t', '1t/2t', 'same bits'))
for name, src, arrays, fnp in cases:
    outs = [k for k in arrays if k not in ('X', 'x', 'S')]
    one = program(src, arrays, 1)
    two = program(src, arrays, 2)
    one()
    first = {k: arrays[k].copy() for k in outs}
    two()
    same = all(np.array_equal(first[k], arrays[k]) for k in outs)
    t1, tn, t2 = median([one, fnp, two])
    print('%-24s %8.2f ms %8.2f ms %8.2f | %8.2f ms %8.2f %s' % (name, t1 * 1e3, tn * 1e3, tn / t1, t2 * 1e3,
                                                               t1 / t2, same))
