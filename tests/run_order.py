#!/usr/bin/python3
"""run_order.py — the contraction order against numpy's optimal path.

For each expression below, a .tx program with constant extents is compiled
and `txc graph` reports the FLOPs of its pairwise contractions; numpy's
einsum_path(optimize='optimal') (the same count as opt_einsum's 'optimal')
must find exactly the same number. Every summed label occurs in at least
two operands, so no single-operand reduction muddies the comparison.

Beyond the exact search (more than 12 factors), LARGE: matrix chains of 25
and 115 factors (opt_einsum's test_large_path), a random 3-regular network
and a quantum-circuit-style network of about 300 tensors (tests/circuit.py).
Their FLOPs must be within GREEDY_FACTOR of numpy's greedy path (numpy's
own _greedy_path, without the memory limit einsum_path gives it; it also
takes more labels than einsum's 52 letters) and, for the chains, of the best
order (the textbook matrix-chain search), and far below one loop nest;
`txc graph` must take under COMPILE_SECONDS and list the same graph twice;
and the circuits, run by `txc run` on real gates and on complex (c128,
unitary) ones (examples/circuit_complex.tx), must match numpy contracting
pairwise along its greedy path.

    /usr/bin/python3 tests/run_order.py [--txc build/txc] [-v]
"""
import os, random, re, subprocess, sys, tempfile, time
import numpy as np
from numpy.core import einsumfunc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import circuit

GREEDY_FACTOR = 2.0
COMPILE_SECONDS = 2.0   # on a loaded shared machine; about 0.2 s alone

CASES = [  # (einsum spec, extents)
    ("ik,kj,jl->il", dict(i=10, k=30, j=5, l=60)),
    ("ij,jk,kl,lm->im", dict(i=5, j=50, k=3, l=40, m=7)),
    ("ak,bk,ck,dk->abcd", dict(a=4, b=5, c=6, d=7, k=8)),
    ("ap,bq,cr,ds,abcd->pqrs", dict(a=6, b=6, c=6, d=6, p=5, q=5, r=5, s=5)),
    ("ik,kj,k->ij", dict(i=20, k=30, j=25)),
    ("abij,cdij,cd->ab", dict(a=8, b=8, i=4, j=4, c=8, d=8)),
    ("bik,bkj,bjl->bil", dict(b=4, i=10, k=20, j=30, l=5)),
    ("ij,jk,ki->", dict(i=30, j=20, k=10)),
    ("ia,jb,ijab,ab->ij", dict(i=6, j=7, a=9, b=10)),
    ("kc,acik,bdjl,cdkl->abij", dict(k=4, c=10, a=10, i=4, b=10, d=10, j=4, l=4)),
    ("pi,qj,ijkl,rk,sl->pqrs", dict(p=4, q=5, r=6, s=7, i=8, j=8, k=8, l=8)),
    ("ab,bc,cd,de,ef,fa->", dict(a=3, b=20, c=4, d=30, e=5, f=40)),
    ("ij,ik,il,jkl->i", dict(i=10, j=11, k=12, l=13)),
]

def path_flops(spec, ext, path):
    """The FLOP count of numpy's chosen PATH, by opt_einsum's formula (the
    one numpy's einsum_path uses, without the +1 it adds to its printout):
    per pairwise step, the product of the extents of every label it
    touches, times 2 when it sums a label. SPEC is an einsum string or
    (operands' label lists, output labels)."""
    if isinstance(spec, str):
        ins, out = spec.split("->")
        ops = [set(o) for o in ins.split(",")]
    else:
        ops, out = [set(o) for o in spec[0]], spec[1]
    total = 0
    for step in path:
        step = sorted(step, reverse=True)
        taken = [ops.pop(i) for i in step]
        touched = set().union(*taken)
        rest = set(out).union(*ops) if ops else set(out)
        kept = touched & rest
        size = 1
        for c in touched:
            size *= ext[c]
        total += size * (max(1, len(taken) - 1) + (1 if touched - kept else 0))
        ops.append(kept)
    return total

def tx_program(spec, ext, dtype=""):
    """The program R = product of SPEC's operands; DTYPE "c128 " makes
    every tensor complex."""
    if isinstance(spec, str):
        ins, out = spec.split("->")
        ops = ins.split(",")
    else:
        ops, out = spec
    lines = ["dim %s = %d;" % (l, n) for l, n in sorted(ext.items())]
    names = ["T%d" % i for i in range(len(ops))]
    decl = ", ".join("%s[%s]" % (nm, ",".join(op)) for nm, op in zip(names, ops))
    lines.append("in %s%s;" % (dtype, decl))
    lines.append("out %sR%s;" % (dtype, "[%s]" % ",".join(out) if out else ""))
    rhs = " * ".join('%s("%s")' % (nm, ",".join(op)) for nm, op in zip(names, ops))
    lines.append('R%s = %s;' % ('("%s")' % ",".join(out) if out else "", rhs))
    return "\n".join(lines) + "\n"

def chain(n):
    """opt_einsum's test_large_path: N matrices, extents cycling 2, 3, 4."""
    labels = ["s%d" % t for t in range(n + 1)]
    ext = {l: (2, 3, 4)[t % 3] for t, l in enumerate(labels)}
    return "chain of %d matrices" % n, ([labels[t:t + 2] for t in range(n)], [labels[0], labels[-1]]), ext

def chain_optimum(ops, ext):
    """The cheapest order of a matrix chain (the textbook O(n^3) search),
    in the same count: 2 * d_i * d_k * d_j per product."""
    d = [ext[o[0]] for o in ops] + [ext[ops[-1][1]]]
    n = len(ops)
    c = [[0] * n for _ in range(n)]
    for span in range(2, n + 1):
        for i in range(n - span + 1):
            j = i + span - 1
            c[i][j] = min(c[i][k] + c[k + 1][j] + 2 * d[i] * d[k + 1] * d[j + 1] for k in range(i, j))
    return c[0][n - 1]

def regular(nodes, degree=3, seed=7):
    """A random DEGREE-regular network (configuration model, no loops or
    double edges), extents 2 to 4, four open legs."""
    rng = random.Random(seed)
    while True:
        stubs = [v for v in range(nodes) for _ in range(degree)]
        rng.shuffle(stubs)
        edges = set()
        ok = True
        for a, b in zip(stubs[::2], stubs[1::2]):
            e = (min(a, b), max(a, b))
            if a == b or e in edges:
                ok = False
                break
            edges.add(e)
        if ok:
            break
    ops = [[] for _ in range(nodes)]
    ext = {}
    for k, (a, b) in enumerate(sorted(edges)):
        ops[a].append("e%d" % k)
        ops[b].append("e%d" % k)
        ext["e%d" % k] = rng.choice((2, 3, 4))
    out = []
    for k, v in enumerate(rng.sample(range(nodes), 4)):
        ops[v].append("o%d" % k)
        out.append("o%d" % k)
        ext["o%d" % k] = 2
    return "random %d-regular network of %d tensors" % (degree, nodes), (ops, out), ext

def greedy_path(ops, out, ext):
    """numpy's greedy path, without the memory limit einsum_path gives it."""
    return einsumfunc._greedy_path([set(o) for o in ops], set(out), ext, float("inf"))

def contract_along(ops, out, arrays, path):
    """numpy, pairwise along PATH (each step an einsum over fewer than 52 labels)."""
    ops, arrays = [list(o) for o in ops], list(arrays)
    for step in path:
        step = sorted(step, reverse=True)
        taken = [(ops.pop(i), arrays.pop(i)) for i in step]
        rest = set(out).union(*map(set, ops))
        touched = sorted(set().union(*(set(o) for o, _ in taken)))
        kept = [l for l in touched if l in rest]
        letter = {l: chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26) for k, l in enumerate(touched)}
        spec = ",".join("".join(letter[l] for l in o) for o, _ in taken) + "->" + "".join(letter[l] for l in kept)
        ops.append(kept)
        arrays.append(np.einsum(spec, *[a for _, a in taken]))
    (o,), (a,) = ops, arrays
    return np.einsum("".join(chr(97 + o.index(l)) for l in o) + "->" + "".join(chr(97 + o.index(l)) for l in out), a)

def txc_flops(txc, path):
    t0 = time.monotonic()
    r = subprocess.run([txc, "graph", path], capture_output=True, text=True)
    seconds = time.monotonic() - t0
    m = re.search(r"# contractions: ([0-9.e+]+) flop", r.stdout)
    return (float(m.group(1)) if m else None), seconds, r.stdout + r.stderr

def large_case(txc, tmp, name, spec, ext, verbose, arrays=None):
    """Failures of one large case: FLOPs against numpy greedy and one loop
    nest, compile time, and values when ARRAYS are given."""
    ops, out = spec
    path = os.path.join(tmp, "large.tx")
    cx = arrays is not None and np.iscomplexobj(arrays[0])
    with open(path, "w") as f:
        f.write(tx_program(spec, ext, "c128 " if cx else ""))
    got, seconds, text = txc_flops(txc, path)
    gpath = greedy_path(ops, out, ext)
    greedy = path_flops(spec, ext, gpath)
    labels = set().union(*map(set, ops))
    one_nest = float(np.prod([float(ext[l]) for l in labels])) * len(ops)
    best = chain_optimum(ops, ext) if name.startswith("chain") else None
    if verbose:
        print("%s: txc %s flop in %.2f s; numpy greedy %g;%s one loop nest %.3g" % (
            name, got, seconds, greedy, " optimum %g;" % best if best else "", one_nest))
    fails = []
    if got is None:
        return ["%s: no FLOP count\n%s" % (name, text)]
    if best is not None and got > GREEDY_FACTOR * best:
        fails.append("%s: txc %g flop, the best order %g" % (name, got, best))
    if got > GREEDY_FACTOR * greedy:
        fails.append("%s: txc %g flop, numpy greedy %g" % (name, got, greedy))
    if got > one_nest * 1e-6:
        fails.append("%s: txc %g flop, one loop nest %g" % (name, got, one_nest))
    if seconds > COMPILE_SECONDS:
        fails.append("%s: txc graph took %.2f s" % (name, seconds))
    if txc_flops(txc, path)[2] != text:
        fails.append("%s: a second txc graph chose another order" % name)
    if arrays is not None:
        names = ["T%d" % i for i in range(len(ops))]
        args = []
        for nm, a in zip(names, arrays):
            np.save(os.path.join(tmp, nm + ".npy"), a)
            args.append("%s=%s" % (nm, os.path.join(tmp, nm + ".npy")))
        rpath = os.path.join(tmp, "R.npy")
        r = subprocess.run([txc, "run", path, "-q"] + args + ["R=" + rpath], capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("%s: txc run failed\n%s" % (name, r.stderr))
        else:
            want = contract_along(ops, out, arrays, gpath)
            have = np.load(rpath)
            err = float(np.max(np.abs(have - want)))
            if have.shape != want.shape or err > 1e-10 * max(1.0, float(np.max(np.abs(want)))):
                fails.append("%s: values differ from numpy by %g (max |want| %g)" % (name, err, np.max(np.abs(want))))
            elif verbose:
                print("%s: values match numpy (max |R| %g)" % (name, np.max(np.abs(want))))
    return fails

def large_cases():
    yield chain(25) + (None,)
    yield chain(115) + (None,)
    yield regular(60) + (None,)
    ops, out = circuit.network(qubits=10, depth=20, nopen=4, seed=1)
    vals = circuit.values(ops)
    yield ("circuit of %d tensors" % len(ops), ([ls for _, ls in ops], out),
           {l: 2 for _, ls in ops for l in ls}, [vals[nm] for nm, _ in ops])
    # examples/circuit_complex.tx: unitary c128 gates on 14 qubits
    ops, out = circuit.network(qubits=14, depth=14, nopen=4, seed=3)
    vals = circuit.values(ops, complex_=True)
    yield ("complex circuit of %d tensors" % len(ops), ([ls for _, ls in ops], out),
           {l: 2 for _, ls in ops for l in ls}, [vals[nm] for nm, _ in ops])

def main():
    txc = "build/txc"
    if "--txc" in sys.argv:
        txc = sys.argv[sys.argv.index("--txc") + 1]
    verbose = "-v" in sys.argv
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec, ext, arrays in large_cases():
            fails = large_case(txc, tmp, name, spec, ext, verbose, arrays)
            for f in fails:
                print("FAIL " + f)
            passed += not fails
            failed += bool(fails)
        for spec, ext in CASES:
            ins = spec.split("->")[0].split(",")
            arrays = [np.ones([ext[c] for c in op]) for op in ins]
            path_ = np.einsum_path(spec, *arrays, optimize="optimal")[0]
            want = path_flops(spec, ext, path_[1:])
            path = os.path.join(tmp, "p.tx")
            with open(path, "w") as f:
                f.write(tx_program(spec, ext))
            r = subprocess.run([txc, "graph", path], capture_output=True, text=True)
            m = re.search(r"# contractions: ([0-9.e+]+) flop", r.stdout)
            got = float(m.group(1)) if m else None
            if got is not None and abs(got - want) <= 1e-9 * want:
                passed += 1
            else:
                failed += 1
                print("FAIL %s %s: txc %s flop, numpy optimal %g%s" %
                      (spec, ext, got, want, "" if m else "\n" + r.stdout + r.stderr))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)

main()
