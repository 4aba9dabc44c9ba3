"""Random pairwise contractions through Programs, against numpy.einsum:
C(...) = A(...) * B(...), with =, += or -=, f64 or f32, extents from 1
to 130 (BLAS calls, dots and matrix-vector products in loops over other
labels, and loop nests), and each operand, the updated C included, in a
random layout that is read and written in place (C order, Fortran order,
a stepped slice, reversed strides: the JIT is specialised on them). A dot
in loops over a summed label with a strided operand once kept only its
last call's value; this is the test that found it."""
import random

import numpy as np
import pytest

import tensorexpr as tx


def _layout(r, a):
    v = r.randrange(4)
    if v == 0 or a.ndim == 0:
        return a
    if v == 1:
        return np.asfortranarray(a)
    if v == 2:
        big = np.zeros(tuple(2 * n for n in a.shape), a.dtype)
        step = tuple(slice(None, None, 2) for _ in a.shape)
        big[step] = a
        return big[step]
    rev = np.zeros(a.shape, a.dtype)[tuple(slice(None, None, -1) for _ in a.shape)]
    rev[...] = a
    return rev


def _case(seed):
    r = random.Random(seed)
    g = np.random.default_rng(seed)
    ext = {c: r.choice([1, 3, 64, 70, 130]) for c in "ijkl"}
    la = "".join(r.sample("ijkl", r.randrange(1, 4)))
    lb = "".join(r.sample("ijkl", r.randrange(1, 4)))
    lc = "".join(c for c in sorted(set(la + lb)) if r.random() < 0.5)
    lc = "".join(r.sample(lc, len(lc)))
    op = r.choice(["=", "+=", "-="])
    dt = r.choice(["f64", "f32"])
    npdt = np.float64 if dt == "f64" else np.float32

    def decl(name, labels):
        return "%s[%s]" % (name, ",".join("n" + c for c in labels)) if labels else name

    def use(name, labels):
        return '%s("%s")' % (name, ",".join(labels)) if labels else name

    src = "dim %s;\nin %s %s, %s;\n%s %s %s;\n%s %s %s * %s;\n" % (
        ", ".join("n%s = %d" % (c, ext[c]) for c in "ijkl"), dt, decl("A", la), decl("B", lb),
        "out" if op == "=" else "inout", dt, decl("C", lc), use("C", lc), op, use("A", la), use("B", lb))
    A = g.standard_normal([ext[c] for c in la]).astype(npdt)
    B = g.standard_normal([ext[c] for c in lb]).astype(npdt)
    C = g.standard_normal([ext[c] for c in lc]).astype(npdt)
    ref = np.einsum("%s,%s->%s" % (la, lb, lc), A.astype(np.float64), B.astype(np.float64))
    want = ref if op == "=" else C + ref if op == "+=" else C - ref
    args = {"A": _layout(r, A), "B": _layout(r, B)}
    if op != "=":
        args["C"] = _layout(r, C) if lc else C.copy()
    return src, args, op, want, npdt


@pytest.mark.parametrize("block", range(4))
def test_random_contractions_in_any_layout(block):
    for seed in range(60 * block, 60 * (block + 1)):
        src, args, op, want, npdt = _case(seed)
        out = tx.compile(src)(**args)
        got = out["C"] if op == "=" else args["C"]
        assert got.dtype == npdt
        tol = 1e-3 if npdt == np.float32 else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max(initial=1),
                                   err_msg="seed %d:\n%s" % (seed, src))
