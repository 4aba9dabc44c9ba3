#!/usr/bin/python3
"""tensorexpr.einsum vs numpy.einsum(optimize=True) vs torch.einsum (when
python3-torch is installed): the median time per call of each case, the
ratios, and the per-call overhead on tiny inputs.

    PYTHONPATH=python /usr/bin/python3 bench/bench_einsum.py [--repeat N] [--threads N]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import numpy as np  # noqa: E402

import tensorexpr as tx  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

CASES = [
    # name, subscripts, shapes
    ("tiny matmul 2x2", "ij,jk->ik", [(2, 2), (2, 2)]),
    ("tiny dot 3", "i,i->", [(3,), (3,)]),
    ("matmul 256", "ij,jk->ik", [(256, 256), (256, 256)]),
    ("matmul 1024", "ij,jk->ik", [(1024, 1024), (1024, 1024)]),
    ("batched matmul 64x(64,64)", "bij,bjk->bik", [(64, 64, 64), (64, 64, 64)]),
    ("matvec 2000", "ij,j->i", [(2000, 2000), (2000,)]),
    ("outer 1000", "i,j->ij", [(1000,), (1000,)]),
    ("trace 2000", "ii->", [(2000, 2000)]),
    ("diagonal 2000", "ii->i", [(2000, 2000)]),
    ("transpose-sum 1000", "ij->j", [(1000, 1000)]),
    ("4-index transform (ao2mo) 24", "pi,qj,pqrs,rk,sl->ijkl", [(24, 24)] * 2 + [(24,) * 4] + [(24, 24)] * 2),
    ("chain of 4 matrices 200", "ab,bc,cd,de->ae", [(200, 200)] * 4),
    ("ellipsis batched 32x(32,48,48)", "...ij,...jk->...ik", [(32, 48, 48), (32, 48, 48)]),
    ("strided (transposed) matmul 512", "ji,jk->ik", [(512, 512), (512, 512)]),
    ("f32 matmul 512", "ij,jk->ik", [(512, 512), (512, 512), "f32"]),
]


def timeit(f, repeat, budget=0.5):
    f()  # warm: compile, caches
    t0 = time.perf_counter()
    f()
    one = time.perf_counter() - t0
    inner = max(1, int(0.02 / max(one, 1e-9)))
    times = []
    t_end = time.perf_counter() + budget
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        times.append((time.perf_counter() - t0) / inner)
        if time.perf_counter() > t_end and len(times) >= 3:
            break
    return float(np.median(times))


def fmt(t):
    return "%8.1f us" % (t * 1e6) if t < 1e-3 else "%8.2f ms" % (t * 1e3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    a = ap.parse_args()
    if torch is not None and a.threads:
        torch.set_num_threads(a.threads)
    r = np.random.default_rng(0)
    print("tensorexpr %s (%s, tx_bind_array: %s), numpy %s, torch %s" %
          (tx.__version__, tx.LIBRARY_PATH, tx.HAVE_BIND_ARRAY, np.__version__,
           torch.__version__ if torch is not None else "not installed"))
    head = "| case | subscripts | tensorexpr | numpy (optimize=True) | numpy/tx |"
    sep = "|---|---|---:|---:|---:|"
    if torch is not None:
        head += " torch | torch/tx |"
        sep += "---:|---:|"
    print(head)
    print(sep)
    for name, subs, shapes in CASES:
        dt = np.float64
        if shapes[-1] == "f32":
            shapes, dt = shapes[:-1], np.float32
        ops = [r.standard_normal(s).astype(dt) for s in shapes]
        if name.startswith("strided"):
            ops = [ops[0].T.copy().T, ops[1]]  # a transposed (Fortran-order) view
            ops[0] = np.asfortranarray(ops[0])
        ref = np.einsum(subs, *ops, optimize=True)
        got = tx.einsum(subs, *ops)
        err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-300)
        assert err < (1e-3 if dt == np.float32 else 1e-9), (name, err)
        t_tx = timeit(lambda: tx.einsum(subs, *ops), a.repeat)
        t_np = timeit(lambda: np.einsum(subs, *ops, optimize=True), a.repeat)
        row = "| %s | `%s` | %s | %s | %.2f |" % (name, subs, fmt(t_tx), fmt(t_np), t_np / t_tx)
        if torch is not None:
            tops = [torch.from_numpy(o) for o in ops]
            t_t = timeit(lambda: torch.einsum(subs, *tops), a.repeat)
            row += " %s | %.2f |" % (fmt(t_t), t_t / t_tx)
        print(row, flush=True)
    # per-call overhead: the cost of a call on tiny inputs, whose kernel takes
    # well under a microsecond, against numpy.einsum without and with optimize
    x, y = np.ones((2, 2)), np.ones((2, 2))
    p = tx.compile('in A[2,2], B[2,2];\nout C[2,2];\nC("i,k") = A("i,j") * B("j,k");\n')
    n = 20000

    def loop(f):
        f()
        best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            best = min(best, (time.perf_counter() - t0) / n)
        return best
    lib = tx._lib.lib
    C = np.empty((2, 2))
    pp = p._p
    shp = (tx._lib.c_int64 * 2)(2, 2)
    def raw():  # the floor: three binds and a run through ctypes
        lib.tx_bind(pp, b"A", x.ctypes.data, 2, shp)
        lib.tx_bind(pp, b"B", y.ctypes.data, 2, shp)
        lib.tx_bind(pp, b"C", C.ctypes.data, 2, shp)
        lib.tx_run(pp)
    print()
    print("per-call cost on 2x2 @ 2x2 (best of 5 x %d calls):" % n)
    print("  tensorexpr.einsum('ij,jk->ik')          %6.2f us" % (loop(lambda: tx.einsum("ij,jk->ik", x, y)) * 1e6))
    print("  tensorexpr.einsum(..., out=C)           %6.2f us" % (loop(lambda: tx.einsum("ij,jk->ik", x, y, out=C)) * 1e6))
    print("  raw ctypes: 3 x tx_bind + tx_run        %6.2f us" % (loop(raw) * 1e6))
    print("  Program call prog(A=x, B=y)             %6.2f us" % (loop(lambda: p(A=x, B=y)) * 1e6))
    print("  numpy.einsum('ij,jk->ik')               %6.2f us" % (loop(lambda: np.einsum("ij,jk->ik", x, y)) * 1e6))
    print("  numpy.einsum(..., optimize=True)        %6.2f us" %
          (loop(lambda: np.einsum("ij,jk->ik", x, y, optimize=True)) * 1e6))
    if torch is not None:
        tx_, ty_ = torch.from_numpy(x), torch.from_numpy(y)
        print("  torch.einsum('ij,jk->ik')               %6.2f us" % (loop(lambda: torch.einsum("ij,jk->ik", tx_, ty_)) * 1e6))


if __name__ == "__main__":
    main()
