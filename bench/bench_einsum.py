#!/usr/bin/python3
"""tensorexpr.einsum vs numpy.einsum(optimize=True) vs torch.einsum (when
torch is installed): the median time per call of each case over many
subscripts, sizes and layouts (row-major, Fortran-order, transposed views),
the ratio of the better peer's time to tensorexpr's (> 1: tensorexpr is
faster), on 1 and on 2 threads (TX_NUM_THREADS, OPENBLAS_NUM_THREADS and
torch.set_num_threads alike); then the per-call cost on tiny operands.

    PYTHONPATH=python /usr/bin/python3 bench/bench_einsum.py [--repeat N] [--threads N] [--only NAME,...]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
# --threads N: every contender's threads, set before numpy, OpenBLAS and
# the library read them (a run without it starts one process per count)
for _i, _a in enumerate(sys.argv[:-1]):
    if _a == "--threads" and sys.argv[_i + 1] != "0":
        for _v in ("TX_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ[_v] = sys.argv[_i + 1]
import numpy as np  # noqa: E402

import tensorexpr as tx  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

# name, subscripts, shapes, layout: "C" every operand row-major, "F" every
# operand Fortran-ordered, "F0" the first only, "T0" the first a transposed
# view of a row-major array (the subscripts say which modes), "f32"
CASES = [
    ("tiny matmul 2x2", "ij,jk->ik", [(2, 2), (2, 2)], "C"),
    ("tiny dot 3", "i,i->", [(3,), (3,)], "C"),
    ("tiny ellipsis sum", "...i->...", [(2, 3)], "C"),
    ("matmul 64", "ij,jk->ik", [(64, 64), (64, 64)], "C"),
    ("matmul 256", "ij,jk->ik", [(256, 256), (256, 256)], "C"),
    ("matmul 1024", "ij,jk->ik", [(1024, 1024), (1024, 1024)], "C"),
    ("matmul 512, A Fortran", "ij,jk->ik", [(512, 512), (512, 512)], "F0"),
    ("matmul 512, all Fortran", "ij,jk->ik", [(512, 512), (512, 512)], "F"),
    ("matmul 512, A transposed view", "ji,jk->ik", [(512, 512), (512, 512)], "T0"),
    ("matmul 512 f32", "ij,jk->ik", [(512, 512), (512, 512)], "f32"),
    ("matmul 300x200x100", "ij,jk->ik", [(300, 200), (200, 100)], "C"),
    ("batched matmul 64x(64,64)", "bij,bjk->bik", [(64, 64, 64), (64, 64, 64)], "C"),
    ("batched matmul, Fortran", "bij,bjk->bik", [(32, 64, 64), (32, 64, 64)], "F"),
    ("ellipsis batched 32x(48,48)", "...ij,...jk->...ik", [(32, 48, 48), (32, 48, 48)], "C"),
    ("matvec 2000", "ij,j->i", [(2000, 2000), (2000,)], "C"),
    ("matvec 2000, Fortran", "ij,j->i", [(2000, 2000), (2000,)], "F0"),
    ("dot 1e6", "i,i->", [(1000000,), (1000000,)], "C"),
    ("outer 1000", "i,j->ij", [(1000,), (1000,)], "C"),
    ("trace 2000", "ii->", [(2000, 2000)], "C"),
    ("diagonal 2000", "ii->i", [(2000, 2000)], "C"),
    ("sum 1000x1000", "ij->", [(1000, 1000)], "C"),
    ("column sums 1000", "ij->j", [(1000, 1000)], "C"),
    ("row sums 1000, Fortran", "ij->i", [(1000, 1000)], "F"),
    ("middle-mode sum 200^3", "ijk->ik", [(200, 200, 200)], "C"),
    ("A(i,j,k)B(k,j) 200^3", "ijk,kj->ij", [(200, 200, 200), (200, 200)], "C"),
    ("A(i,j,k)B(j,k) 200^3", "ijk,jk->ik", [(200, 200, 200), (200, 200)], "C"),
    ("transpose 1000", "ij->ji", [(1000, 1000)], "C"),
    ("hadamard 1000", "ij,ij->ij", [(1000, 1000), (1000, 1000)], "C"),
    ("bilinear form 1000", "i,ij,j->", [(1000,), (1000, 1000), (1000,)], "C"),
    ("chain of 3 matrices 200", "ab,bc,cd->ad", [(200, 200)] * 3, "C"),
    ("chain of 4 matrices 200", "ab,bc,cd,de->ae", [(200, 200)] * 4, "C"),
    ("chain of 5, vector ends", "a,ab,bc,cd,d->", [(300,), (300, 300), (300, 300), (300, 300), (300,)], "C"),
    ("4-index transform (ao2mo) 24", "pi,qj,pqrs,rk,sl->ijkl", [(24, 24)] * 2 + [(24,) * 4] + [(24, 24)] * 2, "C"),
    ("CCSD ladder o=8 v=24", "ijab,abcd->ijcd", [(8, 8, 24, 24), (24, 24, 24, 24)], "C"),
    ("CCSD ring o=8 v=24", "ikac,kjcb->ijab", [(8, 8, 24, 24), (8, 8, 24, 24)], "C"),
    ("CCSD energy-like o=8 v=24", "ijab,ijab->", [(8, 8, 24, 24), (8, 8, 24, 24)], "C"),
    ("3-operand CCSD term", "kc,ikac,jb->ijab", [(8, 24), (8, 8, 24, 24), (8, 24)], "C"),
]


def operands(rng, shapes, layout):
    dt = np.float32 if layout == "f32" else np.float64
    ops = [rng.standard_normal(s).astype(dt) for s in shapes]
    if layout == "F":
        ops = [np.asfortranarray(o) for o in ops]
    elif layout == "F0":
        ops[0] = np.asfortranarray(ops[0])
    elif layout == "T0":
        ops[0] = np.ascontiguousarray(ops[0].T).T  # a transposed view: the same values, Fortran strides
    return ops


# The pause after each batch, before the next library's batch: a library
# may leave threads spinning after its calls (torch's OpenMP workers spin
# for milliseconds), which would take a core from whichever batch comes
# next. Measured (2 threads, hadamard 1000x1000): tensorexpr 485-560 us
# in a batch right after torch's, 399-406 us 5 ms later; torch after
# tensorexpr's batch 418-445 us either way.
PAUSE = 0.01


def timeit(fs, repeat, budget=1.5):
    """The best time per call of each function of FS, measured in rounds
    that take turns (one batch of each per round, PAUSE apart), so that the
    load of a shared machine falls on all of them alike; the minimum over
    the rounds is the least disturbed figure."""
    inner = []
    for f in fs:
        f()  # warm: compile, caches
        t0 = time.perf_counter()
        f()
        inner.append(max(1, int(0.01 / max(time.perf_counter() - t0, 1e-9))))
    best = [float("inf")] * len(fs)
    t_end = time.perf_counter() + budget
    for r in range(repeat):
        for k, f in enumerate(fs):
            time.sleep(PAUSE)
            t0 = time.perf_counter()
            for _ in range(inner[k]):
                f()
            best[k] = min(best[k], (time.perf_counter() - t0) / inner[k])
        if time.perf_counter() > t_end and r >= 2:
            break
    return best


def fmt(t):
    return "%8.1f us" % (t * 1e6) if t < 1e-3 else "%8.2f ms" % (t * 1e3)


def run(args):
    threads = args.threads
    if torch is not None:
        torch.set_num_threads(threads)
    r = np.random.default_rng(0)
    print("## %d thread%s\n" % (threads, "" if threads == 1 else "s"))
    head = "| case | subscripts | layout | tensorexpr | numpy (optimize=True) | torch | better peer / tx |"
    print(head)
    print("|---|---|---|---:|---:|---:|---:|")
    slow = []
    for name, subs, shapes, layout in CASES:
        if args.only and not any(w in name for w in args.only.split(",")):
            continue
        ops = operands(r, shapes, layout)
        ref = np.einsum(subs, *ops, optimize=True)
        got = tx.einsum(subs, *ops)
        err = np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-300)
        assert err < (1e-3 if layout == "f32" else 1e-9), (name, err)
        fs = [lambda: tx.einsum(subs, *ops), lambda: np.einsum(subs, *ops, optimize=True)]
        if torch is not None:
            tops = [torch.from_numpy(o) for o in ops]
            fs.append(lambda: torch.einsum(subs, *tops))
        ts = timeit(fs, args.repeat)
        t_tx, t_np = ts[0], ts[1]
        t_t = ts[2] if torch is not None else None
        best = min(t_np, t_t) if t_t is not None else t_np
        ratio = best / t_tx
        print("| %s | `%s` | %s | %s | %s | %s | %.2f |" % (name, subs, layout, fmt(t_tx), fmt(t_np),
                                                          fmt(t_t) if t_t is not None else "—", ratio),
              flush=True)
        if t_tx > 10e-6 and ratio < 1.0:
            slow.append("%s (%.2f)" % (name, ratio))
    print("\ncases above 10 us where tensorexpr is below 1.0x the better peer: %s\n"
          % (", ".join(slow) if slow else "none"))


def overhead():
    # per-call overhead: the cost of a call on tiny inputs, whose kernel takes
    # well under a microsecond, against numpy.einsum without and with optimize
    x, y = np.ones((2, 2)), np.ones((2, 2))
    v = np.ones(3)
    p = tx.compile('in A[2,2], B[2,2];\nout C[2,2];\nC("i,k") = A("i,j") * B("j,k");\n')
    def loop(f):
        return timeit([f], 21, budget=1.0)[0] * 1e6
    C = np.empty((2, 2))
    print("per-call cost on tiny operands (best of up to 21 rounds), us:\n")
    print("| call | tensorexpr | numpy.einsum | numpy.einsum(optimize=True) | torch.einsum |")
    print("|---|---:|---:|---:|---:|")
    for label, subs, ops in [("2x2 @ 2x2", "ij,jk->ik", (x, y)), ("dot of 3", "i,i->", (v, v)),
                             ("sum 2x2", "ij->", (x,))]:
        fs = [lambda: tx.einsum(subs, *ops), lambda: np.einsum(subs, *ops),
              lambda: np.einsum(subs, *ops, optimize=True)]
        if torch is not None:
            tops = [torch.from_numpy(o) for o in ops]
            fs.append(lambda: torch.einsum(subs, *tops))
        ts = [t * 1e6 for t in timeit(fs, 21, budget=2.0)]
        print("| %s `%s` | %.2f | %.2f | %.2f | %s |" % (
            label, subs, ts[0], ts[1], ts[2], "%.2f" % ts[3] if torch is not None else "—"))
    print("\n  tensorexpr.einsum('ij,jk->ik', out=C)   %6.2f us" % loop(lambda: tx.einsum("ij,jk->ik", x, y, out=C)))
    print("  Program call prog(A=x, B=y)             %6.2f us" % loop(lambda: p(A=x, B=y)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15, help="rounds per case (at most; 1.5 s each)")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads of every contender; 0 (default): a run with 1 and one with 2, each in a "
                         "process of its own")
    ap.add_argument("--no-overhead", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated parts of case names: run only those")
    a = ap.parse_args()
    if a.threads == 0:
        import subprocess
        for n in (1, 2):
            env = dict(os.environ, TX_NUM_THREADS=str(n), OPENBLAS_NUM_THREADS=str(n), OMP_NUM_THREADS=str(n))
            cmd = [sys.executable, os.path.abspath(__file__), "--threads", str(n), "--repeat", str(a.repeat)]
            if a.only:
                cmd += ["--only", a.only]
            if n != 1 or a.no_overhead:
                cmd.append("--no-overhead")
            subprocess.run(cmd, env=env, check=True)
        return
    print("tensorexpr %s (%s), numpy %s, torch %s" %
          (tx.__version__, tx.LIBRARY_PATH, np.__version__,
           torch.__version__ if torch is not None else "not installed"))
    run(a)
    if not a.no_overhead:
        overhead()


if __name__ == "__main__":
    main()
