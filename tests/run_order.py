#!/usr/bin/python3
"""run_order.py — the contraction order against numpy's optimal path.

For each expression below, a .tx program with constant extents is compiled
and `txc graph` reports the FLOPs of its pairwise contractions; numpy's
einsum_path(optimize='optimal') (the same count as opt_einsum's 'optimal')
must find exactly the same number. Every summed label occurs in at least
two operands, so no single-operand reduction muddies the comparison.

    /usr/bin/python3 tests/run_order.py [--txc build/txc]
"""
import os, re, subprocess, sys, tempfile
import numpy as np

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
    touches, times 2 when it sums a label."""
    ins, out = spec.split("->")
    ops = [set(o) for o in ins.split(",")]
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

def tx_program(spec, ext):
    ins, out = spec.split("->")
    ops = ins.split(",")
    lines = ["dim %s = %d;" % (l, n) for l, n in sorted(ext.items())]
    names = ["T%d" % i for i in range(len(ops))]
    decl = ", ".join("%s[%s]" % (nm, ",".join(op)) for nm, op in zip(names, ops))
    lines.append("in %s;" % decl)
    lines.append("out R%s;" % ("[%s]" % ",".join(out) if out else ""))
    rhs = " * ".join('%s("%s")' % (nm, ",".join(op)) for nm, op in zip(names, ops))
    lines.append('R%s = %s;' % ('("%s")' % ",".join(out) if out else "", rhs))
    return "\n".join(lines) + "\n"

def main():
    txc = "build/txc"
    if "--txc" in sys.argv:
        txc = sys.argv[sys.argv.index("--txc") + 1]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
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
