#!/usr/bin/python3
"""grad_ratios.py — the cheap-gradient ratio (the program computing a loss and
its gradient, over the one computing the loss alone) for programs beyond
bench_grad.py's: least squares, a ReLU layer, softmax cross-entropy, inv,
solve, eigh, qr, svd, pow (exponents 2, 3, 8, 100, 1000, -3, -100) and scan. tensorexpr
only, medians of 9 rounds alternating the two programs in one process.

    /usr/bin/python3 bench/grad_ratios.py [THREADS]
"""
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tensorexpr as tx  # noqa: E402

th = int(sys.argv[1]) if len(sys.argv) > 1 else 1
rng = np.random.default_rng(7)
n = 300
A = rng.standard_normal((n, n)) / np.sqrt(n) + 2 * np.eye(n)
Ssym = A @ A.T
X = rng.standard_normal((2000, 300)); W = rng.standard_normal((300, 200)) / 16; y = rng.standard_normal(2000)
B = rng.standard_normal((n, 20))
progs = {
 "least squares": ("in X[m,d], W[d,h], y[m];\nout s;\ns = (X(\"i,a\") * W(\"a,b\") * W(\"c,b\") * X(\"j,c\") - y(\"i\"))^2;\n", "out gW[d,h];\ngW(\"a,b\") = grad(s, W(\"a,b\"));\n", {"X": X, "W": W, "y": y}),
 "relu net": ("in X[m,d], W[d,h], y[m];\nout s;\nlet H(\"i,b\") = max(X(\"i,a\") * W(\"a,b\"), 0);\ns = (H(\"i,b\") * H(\"i,b\") - y(\"i\"))^2;\n", "out gW[d,h];\ngW(\"a,b\") = grad(s, W(\"a,b\"));\n", {"X": X, "W": W, "y": y}),
 "softmax xent": ("in X[m,d], W[d,h];\nout s;\nlet Z(\"i,b\") = X(\"i,a\") * W(\"a,b\");\nlet mx(\"i\") = reduce(max, Z(\"i,b\"));\ns = mx(\"i\") + log(reduce(+, exp(Z(\"i,b\") - mx(\"i\")))) - Z(\"i,0\");\n", "out gW[d,h];\ngW(\"a,b\") = grad(s, W(\"a,b\"));\n", {"X": X, "W": W}),
 "inv": ("in A[n,n];\nout s;\ns = inv(A(\"i,j\"))^2;\n", "out gA[n,n];\ngA(\"i,j\") = grad(s, A(\"i,j\"));\n", {"A": A}),
 "solve": ("in A[n,n], B[n,k];\nout s;\ns = solve(A(\"i,j\"), B(\"i,r\"))^2;\n", "out gA[n,n];\ngA(\"i,j\") = grad(s, A(\"i,j\"));\n", {"A": A, "B": B}),
 "eigh": ("in S[n,n];\ntmp V[n,n], w[n];\nout s;\n(V(\"i,e\"), w(\"e\")) = eigh(S(\"i,j\"));\ns = w(\"e\")^3 + V(\"0,e\")^2 * w(\"e\");\n", "out gS[n,n];\ngS(\"i,j\") = grad(s, S(\"i,j\"));\n", {"S": Ssym}),
 "qr": ("in A[n,n];\ntmp Q[n,n], R[n,n];\nout s;\n(Q(\"i,k\"), R(\"k,j\")) = qr(A(\"i,j\"));\ns = R(\"i,i\")^2 + Q(\"i,0\")^2;\n", "out gA[n,n];\ngA(\"i,j\") = grad(s, A(\"i,j\"));\n", {"A": A}),
 "svd": ("in A[n,n];\ntmp U[n,n], sv[n], Vt[n,n];\nout s;\n(U(\"i,k\"), sv(\"k\"), Vt(\"k,j\")) = svd(A(\"i,j\"));\ns = sv(\"k\")^3;\n", "out gA[n,n];\ngA(\"i,j\") = grad(s, A(\"i,j\"));\n", {"A": A}),
 "cumsum": ("in X[m,d];\nout s;\ns = scan(+, X(\"i,a\"), \"a\")^2;\n", "out gX[m,d];\ngX(\"i,a\") = grad(s, X(\"i,a\"));\n", {"X": X}),
}
rng2 = np.random.default_rng(1)
Ap = rng2.standard_normal((n, n)) / np.sqrt(n) * 0.9 + 0.1 * np.eye(n)
for p in (2, 3, 8, 100, 1000, -3, -100):
    progs["pow %d" % p] = ("in A[n,n], W[n,n];\nout s;\ns = pow(A(\"i,j\"), %d) * W(\"i,j\");\n" % p,
                           "out gA[n,n];\ngA(\"i,j\") = grad(s, A(\"i,j\"));\n",
                           {"A": Ap, "W": rng2.standard_normal((n, n))})
for name, (f, g, D) in progs.items():
    try:
        pf = tx.compile(f, threads=th); pg = tx.compile(f + g, threads=th)
        pf(**D); pg(**D)
    except Exception as e:
        print("%-14s error: %s" % (name, str(e).splitlines()[0])); continue
    ts = [[], []]
    for _ in range(9):
        for fn, t in zip((pf, pg), ts):
            t0 = time.perf_counter(); fn(**D); t.append(time.perf_counter() - t0)
    a, b = statistics.median(ts[0]) * 1e3, statistics.median(ts[1]) * 1e3
    print("%-14s forward %8.3f ms  +grad %8.3f ms  ratio %.2f" % (name, a, b, b / a))
