#!/usr/bin/python3
"""grad_cholesky.py — the cheap-gradient ratio of a Cholesky-based program
at three sizes, side by side with torch.autograd.

    /usr/bin/python3 bench/grad_cholesky.py [THREADS]

The program is bench_grad.py's Gaussian log-likelihood (L = cholesky(S),
Z = L^-1 Y, ll = -Z.Z/2 - k sum log L_ii; the gradient with respect to S).
For n, k = 256, 32; 512, 64; 1024, 128 it prints the forward and the
forward-plus-gradient times of tensorexpr and of torch (medians of 15
rounds, each round running the four in turn in this process), the
ratios, and torch's gradient time over ours. Set TX_NUM_THREADS,
OPENBLAS_NUM_THREADS and OMP_NUM_THREADS to THREADS as well.
"""
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import tensorexpr as tx  # noqa: E402
from bench_grad import GAUSS, GAUSS_GRAD  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def main():
    th = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    if torch is not None:
        torch.set_num_threads(th)
    rng = np.random.default_rng(3)
    for n, k in ((256, 32), (512, 64), (1024, 128)):
        M = rng.standard_normal((n, n))
        D = {"S": M @ M.T / n + np.eye(n), "Y": rng.standard_normal((n, k))}
        f = tx.compile(GAUSS, threads=th)
        g = tx.compile(GAUSS + GAUSS_GRAD, threads=th)
        fns = [lambda: f(**D), lambda: g(**D)]
        if torch is not None:
            S0, Y0 = torch.tensor(D["S"]), torch.tensor(D["Y"])

            def loss(S):
                L = torch.linalg.cholesky(S)
                Z = torch.linalg.solve_triangular(L, Y0, upper=False)
                return -0.5 * (Z * Z).sum() - k * torch.log(torch.diagonal(L)).sum()

            def tf():
                with torch.no_grad():
                    loss(S0).item()

            def tg():
                S = S0.clone().requires_grad_(True)
                torch.autograd.grad(loss(S), [S])

            fns += [tf, tg]
            gt = g(**D)["gS"]
            S = S0.clone().requires_grad_(True)
            want = torch.autograd.grad(loss(S), [S])[0].numpy()
            err = np.abs((gt + gt.T) - (want + want.T)).max() / np.abs(want).max()
            if err > 1e-9:
                print("MISMATCH n=%d: relative difference %.2e" % (n, err))
                return 1
        for fn in fns:
            fn()
        ts = [[] for _ in fns]
        for _ in range(15):
            for fn, t in zip(fns, ts):
                t0 = time.perf_counter()
                fn()
                t.append(time.perf_counter() - t0)
        m = [statistics.median(t) * 1e3 for t in ts]
        line = "n=%4d k=%3d threads=%d  tx forward %8.3f ms, +grad %8.3f ms, ratio %.2f" % (n, k, th, m[0], m[1],
                                                                                           m[1] / m[0])
        if torch is not None:
            line += " | torch %8.3f / %8.3f ms, ratio %.2f | torch / tx (gradient) %.2f" % (m[2], m[3], m[3] / m[2],
                                                                                           m[3] / m[1])
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
