#!/usr/bin/python3
"""shapes.py -- kernels and shapes beyond `make bench`'s, tensorexpr against
numpy and torch side by side in one process (bench.py's interleaved rounds):
reductions over every axis and over short and long rows, scans, transposed
operands, broadcasts, functions, softmax / log-sum-exp / layer norm from rows of
10 to rows of 80000. Every tensorexpr result is compared with numpy first.

    OPENBLAS_CORETYPE=SkylakeX T=1 ROUNDS=7 /usr/bin/python3 bench/shapes.py [NAME ...]

T: threads (tensorexpr, OpenBLAS, torch); ROUNDS: interleaved rounds; NAMEs:
run only the cases whose name contains one of them. Prints one line per case:
the three medians, numpy/tx and best/tx ("<<<" where a peer is faster), and
the largest error relative to numpy's result. Not part of `make bench`.
"""
import os
import sys
T = int(os.environ.get('T', '1'))
os.environ['OPENBLAS_NUM_THREADS'] = str(T)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ONLY = sys.argv[1:]; sys.argv = [sys.argv[0], '--threads', str(T)]
import bench as B
import numpy as np
import torch
torch.set_num_threads(T)
B.ROUNDS = int(os.environ.get('ROUNDS', '5'))
lib = B.load_tx(); txl = B.TxLib(lib)
lib.tx_set_option(txl.ctx, 3, T)
rng = np.random.default_rng(5)
def prog(src, arrays):
    p = txl.compile(src, 's.tx')
    for name, a in arrays.items():
        lib.tx_bind(p, name.encode(), B.c_void_p(a.ctypes.data), a.ndim, (B.c_int64 * max(1, a.ndim))(*a.shape))
    return p
cases = []
def add(name, src, ins, out, fnp, fto):
    cases.append((name, src, ins, out, fnp, fto))
n = 2000
X = rng.standard_normal((n, n)); v = rng.standard_normal(n); w = rng.standard_normal(n)
Y = rng.standard_normal((n, n))
add('col softmax', 'in X[n,m];\nout P[n,m];\nlet E("i,j") = exp(X("i,j") - reduce(max, X("k,j")));\nP("i,j") = E("i,j") / reduce(+, E("k,j"));\n',
    {'X': X}, ('P', (n, n)), lambda: (lambda e: e / e.sum(0))(np.exp(X - X.max(0))), lambda t: torch.softmax(t['X'], 0))
add('colsum f64', 'in X[n,m];\nout s[m];\ns("j") = X("i,j");\n', {'X': X}, ('s', (n,)), lambda: X.sum(0), lambda t: t['X'].sum(0))
add('row mean sq', 'in X[n,m];\nout s[n];\ns("i") = X("i,j")^2 / m;\n', {'X': X}, ('s', (n,)), lambda: (X * X).mean(1), lambda t: (t['X'] ** 2).mean(1))
add('row bcast add', 'in X[n,m], v[n];\nout Y[n,m];\nY("i,j") = X("i,j") + v("i");\n', {'X': X, 'v': v}, ('Y', (n, n)), lambda: X + v[:, None], lambda t: t['X'] + t['v'][:, None])
add('outer', 'in a[n], b[m];\nout Y[n,m];\nY("i,j") = a("i") * b("j");\n', {'a': v, 'b': w}, ('Y', (n, n)), lambda: np.multiply.outer(v, w), lambda t: torch.outer(t['a'], t['b']))
add('sigmoid', 'in X[n,m];\nout Y[n,m];\nY("i,j") = 1 / (1 + exp(-X("i,j")));\n', {'X': X}, ('Y', (n, n)), lambda: 1 / (1 + np.exp(-X)), lambda t: torch.sigmoid(t['X']))
add('gelu tanh', 'in X[n,m];\nout Y[n,m];\nY("i,j") = 0.5 * X("i,j") * (1 + tanh(0.7978845608 * (X("i,j") + 0.044715 * X("i,j")^3)));\n', {'X': X}, ('Y', (n, n)),
    lambda: 0.5 * X * (1 + np.tanh(0.7978845608 * (X + 0.044715 * X ** 3))), lambda t: torch.nn.functional.gelu(t['X'], approximate='tanh'))
add('where relu grad', 'in X[n,m], G[n,m];\nout Y[n,m];\nY("i,j") = where(X("i,j") > 0, G("i,j"), 0);\n', {'X': X, 'G': Y}, ('Y', (n, n)), lambda: np.where(X > 0, Y, 0), lambda t: torch.where(t['X'] > 0, t['G'], 0.))
add('sum sq 2d', 'in X[n,m];\nout s;\ns = X("i,j")^2;\n', {'X': X}, ('s', ()), lambda: np.sum(X * X), lambda t: (t['X'] ** 2).sum())
add('frob inner', 'in A[n,m], B[n,m];\nout s;\ns = A("i,j") * B("i,j");\n', {'A': X, 'B': Y}, ('s', ()), lambda: np.vdot(X, Y), lambda t: (t['A'] * t['B']).sum())
add('sum exp 2d', 'in X[n,m];\nout s;\ns = exp(X("i,j"));\n', {'X': X}, ('s', ()), lambda: np.sum(np.exp(X)), lambda t: torch.exp(t['X']).sum())
add('mse', 'in A[n,m], B[n,m];\nout s;\ns = (A("i,j") - B("i,j"))^2 / (n * m);\n', {'A': X, 'B': Y}, ('s', ()), lambda: np.mean((X - Y) ** 2), lambda t: torch.nn.functional.mse_loss(t['A'], t['B']))
Pp = rng.random((n, n)) + 0.01
add('xent sum', 'in T[n,m], P[n,m];\nout s;\ns = -T("i,j") * log(P("i,j"));\n', {'T': X, 'P': Pp}, ('s', ()), lambda: -np.sum(X * np.log(Pp)), lambda t: -(t['T'] * torch.log(t['P'])).sum())
add('trace AB', 'in A[n,m], B[m,n];\nout s;\ns = A("i,j") * B("j,i");\n', {'A': X, 'B': Y}, ('s', ()), lambda: np.einsum('ij,ji->', X, Y), lambda t: torch.einsum('ij,ji->', t['A'], t['B']))
add('log softmax', 'in X[n,m];\nout P[n,m];\nlet mx("i") = reduce(max, X("i,j"));\nP("i,j") = X("i,j") - mx("i") - log(reduce(+, exp(X("i,k") - mx("i"))));\n', {'X': X}, ('P', (n, n)),
    lambda: (lambda s: s - np.log(np.exp(s).sum(1, keepdims=True)))(X - X.max(1, keepdims=True)), lambda t: torch.log_softmax(t['X'], 1))
add('l2 normalize rows', 'in X[n,m];\nout Y[n,m];\nY("i,j") = X("i,j") / sqrt(reduce(+, X("i,k")^2));\n', {'X': X}, ('Y', (n, n)),
    lambda: X / np.sqrt((X * X).sum(1, keepdims=True)), lambda t: torch.nn.functional.normalize(t['X'], dim=1))
add('exp matvec', 'in A[n,m], x[m];\nout y[n];\ny("i") = exp(A("i,j")) * x("j");\n', {'A': X, 'x': w}, ('y', (n,)), lambda: np.exp(X) @ w, lambda t: torch.exp(t['A']) @ t['x'])
add('cumsum rows', 'in X[n,m];\nout Y[n,m];\nY("i,j") = scan(+, X("i,j"), "j");\n', {'X': X}, ('Y', (n, n)), lambda: np.cumsum(X, 1), lambda t: torch.cumsum(t['X'], 1))
add('col min', 'in X[n,m];\nout s[m];\ns("j") = reduce(min, X("i,j"));\n', {'X': X}, ('s', (n,)), lambda: X.min(0), lambda t: t['X'].min(0).values)
add('abs sqrt', 'in X[n,m];\nout Y[n,m];\nY("i,j") = sqrt(abs(X("i,j")));\n', {'X': X}, ('Y', (n, n)), lambda: np.sqrt(np.abs(X)), lambda t: torch.sqrt(torch.abs(t['X'])))
add('cube', 'in X[n,m];\nout Y[n,m];\nY("i,j") = X("i,j")^3;\n', {'X': X}, ('Y', (n, n)), lambda: X ** 3, lambda t: t['X'] ** 3)
add('transpose add', 'in A[n,m], B[m,n];\nout Y[n,m];\nY("i,j") = A("i,j") + B("j,i");\n', {'A': X, 'B': Y}, ('Y', (n, n)), lambda: X + Y.T, lambda t: t['A'] + t['B'].T)
Z = rng.standard_normal((200, 200, 200))
add('permute 3d kji', 'in X[a,b,c];\nout Y[c,b,a];\nY("k,j,i") = X("i,j,k");\n', {'X': Z}, ('Y', (200, 200, 200)), lambda: np.ascontiguousarray(Z.transpose(2, 1, 0)), lambda t: t['X'].permute(2, 1, 0).contiguous())
add('permute 3d ikj', 'in X[a,b,c];\nout Y[a,c,b];\nY("i,k,j") = X("i,j,k");\n', {'X': Z}, ('Y', (200, 200, 200)), lambda: np.ascontiguousarray(Z.transpose(0, 2, 1)), lambda t: t['X'].permute(0, 2, 1).contiguous())
add('sum mid axis', 'in X[a,b,c];\nout Y[a,c];\nY("i,k") = X("i,j,k");\n', {'X': Z}, ('Y', (200, 200)), lambda: Z.sum(1), lambda t: t['X'].sum(1))
add('sum first axis', 'in X[a,b,c];\nout Y[b,c];\nY("j,k") = X("i,j,k");\n', {'X': Z}, ('Y', (200, 200)), lambda: Z.sum(0), lambda t: t['X'].sum(0))
add('max last axis 3d', 'in X[a,b,c];\nout Y[a,b];\nY("i,j") = reduce(max, X("i,j,k"));\n', {'X': Z}, ('Y', (200, 200)), lambda: Z.max(2), lambda t: t['X'].max(2).values)
S = rng.standard_normal((100000, 10))
add('softmax narrow rows', 'in X[n,m];\nout P[n,m];\nlet E("i,j") = exp(X("i,j") - reduce(max, X("i,k")));\nP("i,j") = E("i,j") / reduce(+, E("i,k"));\n',
    {'X': S}, ('P', S.shape), lambda: (lambda e: e / e.sum(1, keepdims=True))(np.exp(S - S.max(1, keepdims=True))), lambda t: torch.softmax(t['X'], 1))
add('rowsum narrow', 'in X[n,m];\nout s[n];\ns("i") = X("i,j");\n', {'X': S}, ('s', (100000,)), lambda: S.sum(1), lambda t: t['X'].sum(1))
SOFTMAX = 'in X[n,m];\nout P[n,m];\nlet E("i,j") = exp(X("i,j") - reduce(max, X("i,k")));\nP("i,j") = E("i,j") / reduce(+, E("i,k"));\n'
LSE = 'in X[n,m];\nout r[n];\nlet mx("i") = reduce(max, X("i,j"));\nr("i") = mx("i") + log(reduce(+, exp(X("i,k") - mx("i"))));\n'
LN = 'in X[n,m], g[m], b[m];\nout Y[n,m];\nlet mu("i") = X("i,j") / m;\nlet D("i,j") = X("i,j") - mu("i");\nlet var("i") = D("i,j")^2 / m;\nY("i,j") = D("i,j") / sqrt(var("i") + 0.00001) * g("j") + b("j");\n'
RMAX = 'in X[n,m];\nout r[n];\nr("i") = reduce(max, X("i,j"));\n'
RSUM = 'in X[n,m];\nout r[n];\nr("i") = X("i,j");\n'
def sm(X):
    e = np.exp(X - X.max(1, keepdims=True)); return e / e.sum(1, keepdims=True)
def lse(X):
    m = X.max(1); return m + np.log(np.exp(X - m[:, None]).sum(1))
def ln(X, g, b):
    mu = X.mean(1, keepdims=True); d = X - mu; return d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * g + b
# rows from 10 to 80000 elements (the cases above read the globals X, Y, ...: other names here)
for (rn, rm) in ((100000, 10), (20000, 50), (4000, 500), (500, 8000), (50, 80000)):
    R = rng.standard_normal((rn, rm)); g = rng.standard_normal(rm); b = rng.standard_normal(rm)
    add('softmax %dx%d' % (rn, rm), SOFTMAX, {'X': R}, ('P', (rn, rm)), lambda R=R: sm(R), lambda t: torch.softmax(t['X'], 1))
    add('lse %dx%d' % (rn, rm), LSE, {'X': R}, ('r', (rn,)), lambda R=R: lse(R), lambda t: torch.logsumexp(t['X'], 1))
    add('ln %dx%d' % (rn, rm), LN, {'X': R, 'g': g, 'b': b}, ('Y', (rn, rm)), lambda R=R, g=g, b=b: ln(R, g, b),
        lambda t, rm=rm: torch.nn.functional.layer_norm(t['X'], (rm,), t['g'], t['b'], 1e-5))
    add('rowmax %dx%d' % (rn, rm), RMAX, {'X': R}, ('r', (rn,)), lambda R=R: R.max(1), lambda t: t['X'].max(1).values)
    add('rowsum %dx%d' % (rn, rm), RSUM, {'X': R}, ('r', (rn,)), lambda R=R: R.sum(1), lambda t: t['X'].sum(1))
for name, src, ins, (on, osh), fnp, fto in cases:
    if ONLY and not any(o in name for o in ONLY):
        continue
    outa = np.zeros(osh)
    arrays = dict(ins); arrays[on] = outa
    try:
        p = prog(src, arrays)
        if lib.tx_run(p) != 0:
            print(name, 'RUN FAIL', txl.errmsg()); continue
    except SystemExit:
        print(name, 'COMPILE FAIL'); continue
    want = fnp()
    err = np.max(np.abs(outa - want)) / max(1, np.max(np.abs(want)))
    if not err <= 1e-10:
        print(name, 'WRONG RESULT: %.1e' % err)
        continue
    tt = {k: torch.from_numpy(a) for k, a in ins.items()}
    med, _, _ = B.time_contenders([('tx', lambda p=p: lib.tx_run(p)), ('numpy', fnp), ('torch', lambda fto=fto, tt=tt: fto(tt))])
    best = min(med['numpy'], med['torch'])
    print('%-20s tx %8.3f ms  np %8.3f  torch %8.3f   np/tx %5.2f  best/tx %5.2f %s err %.1e' % (name, med['tx'] * 1e3, med['numpy'] * 1e3, med['torch'] * 1e3,
          med['numpy'] / med['tx'], best / med['tx'], '<<<' if best < med['tx'] else '', err), flush=True)
    txl.free_program(p)
