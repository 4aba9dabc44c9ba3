"""Random elementwise programs against numpy: the block path's one-pass
forms (products with a term, quotients and squares of sums, functions of
scaled blocks, max/min/where with numbers, f32 divisions by a number)
are matched by pattern, so they are checked here on expressions nobody
wrote by hand: trees of + - * /, functions, max, min, where, squares and
sums of three terms ending in a product, over X[i,j], Y[i,j] (f32 or
f64, contiguous or strided), a column vector m[i], a row vector b[j] and
numbers, stored whole, accumulated with +=, or summed over j, at extents
around and below the 256-element block.

The reference is numpy in double with the same tree. tensorexpr may
multiply by a reciprocal and reassociate a sum (tx(5)), so the values
must agree to a few units of the last place of the largest element of
the result, not bit for bit; a wrong operand, broadcast, order of a
non-commutative operation or element type is far outside that."""
import random

import numpy as np
import pytest

import tensorexpr as tx

LEAVES = [
    ('X("i,j")', lambda e: e["X"]),
    ('Y("i,j")', lambda e: e["Y"]),
    ('b("j")', lambda e: e["b"][None, :]),
    ('m("i")', lambda e: e["m"][:, None]),
]
NUMBERS = ["2", "0.5", "1.5", "3", "0.25", "1"]


def _tree(r, depth):
    """A random expression: (its .tx text, its numpy evaluation)."""
    if depth == 0 or r.random() < 0.25:
        if r.random() < 0.2:
            c = r.choice(NUMBERS)
            return c, (lambda e, c=c: np.float64(float(c)))
        return r.choice(LEAVES)
    k = r.randrange(13)
    a, fa = _tree(r, depth - 1)
    if k == 0:
        return "exp(-abs(%s))" % a, lambda e: np.exp(-np.abs(fa(e)))
    if k == 1:
        return "tanh(%s)" % a, lambda e: np.tanh(fa(e))
    if k == 2:
        return "sqrt(abs(%s))" % a, lambda e: np.sqrt(np.abs(fa(e)))
    if k == 3:
        return "(%s)^2" % a, lambda e: np.square(fa(e))
    if k == 4:
        return "-(%s)" % a, lambda e: -fa(e)
    b, fb = _tree(r, depth - 1)
    if k in (5, 6):
        return "(%s + %s)" % (a, b), lambda e: fa(e) + fb(e)
    if k == 7:
        return "(%s - %s)" % (a, b), lambda e: fa(e) - fb(e)
    if k in (8, 9):
        return "(%s * %s)" % (a, b), lambda e: fa(e) * fb(e)
    if k == 10:
        return "(%s / (abs(%s) + 1))" % (a, b), lambda e: fa(e) / (np.abs(fb(e)) + 1)
    if k == 11:
        if r.random() < 0.5:
            return "max(%s, %s)" % (a, b), lambda e: np.maximum(fa(e), fb(e))
        return "min(%s, %s)" % (a, b), lambda e: np.minimum(fa(e), fb(e))
    c, fc = _tree(r, depth - 1)
    if r.random() < 0.5:  # a sum of three terms ending in a product of two blocks
        (x, fx), (y, fy) = r.choice(LEAVES), r.choice(LEAVES)
        return "(%s - %s + %s * %s)" % (a, b, x, y), lambda e: (fa(e) - fb(e)) + fx(e) * fy(e)
    return "where(%s > %s, %s, %s)" % (a, b, c, a), lambda e: np.where(fa(e) > fb(e), fc(e), fa(e))


def _case(seed, mode):
    """Program, inputs and numpy's result for SEED in MODE: f64, f32 (all
    f32), mixed (X and Y f32, the rest f64), strided (X a strided view, Y
    Fortran-ordered), acc (Z += ...) or sum (Z(i) = X(i,j) * (...))."""
    r = random.Random(seed)
    expr, f = _tree(r, r.randrange(1, 5))
    n, k = r.choice([(7, 2100), (1, 5), (3, 1), (5, 300), (64, 257)])
    t = "f32 " if mode == "f32" else ""
    if mode == "sum":  # X is a factor of the whole: the sum over j is the top product's (LANGUAGE.md 4.1)
        expr, f = 'X("i,j") * (%s)' % expr, (lambda e, f=f: e["X"] * f(e))
        body = 'out Z[n];\nZ("i") = %s;\n' % expr
    elif mode == "acc":
        body = 'inout Z[n,k];\nZ("i,j") += %s;\n' % expr
    else:
        body = 'out %sZ[n,k];\nZ("i,j") = %s;\n' % (t, expr)
    if mode == "mixed":
        src = "in f32 X[n,k], Y[n,k];\nin b[k], m[n];\n" + body
    else:
        src = "in %sX[n,k], Y[n,k], b[k], m[n];\n%s" % (t, body)
    g = np.random.default_rng(seed)
    env = {"X": g.standard_normal((n, k)), "Y": g.standard_normal((n, k)), "b": g.standard_normal(k),
           "m": g.standard_normal(n)}
    if mode == "f32":
        env = {q: v.astype(np.float32) for q, v in env.items()}
    if mode == "mixed":
        env["X"], env["Y"] = env["X"].astype(np.float32), env["Y"].astype(np.float32)
    if mode == "strided":
        big = g.standard_normal((2 * n, 3 * k))
        big[::2, ::3] = env["X"]
        env["X"] = big[::2, ::3]
        env["Y"] = np.asfortranarray(env["Y"])
    e64 = {q: np.asarray(v, dtype=np.float64) for q, v in env.items()}
    with np.errstate(all="ignore"):
        full = np.broadcast_to(f(e64), (n, k))
        want = full.sum(axis=1) if mode == "sum" else full
        if mode == "acc":
            env["Z"] = g.standard_normal((n, k))
            want = env["Z"] + want
    return src, env, want, full


@pytest.mark.parametrize("mode", ["f64", "f32", "mixed", "strided", "acc", "sum"])
def test_random_elementwise_programs(mode):
    checked = 0
    for seed in range(120):
        src, env, want, full = _case(seed, mode)
        try:
            prog = tx.compile(src)
        except tx.CompileError as ex:
            # a target label the right-hand side lacks is an error by
            # LANGUAGE.md 4.1 (m("i") alone cannot fill Z("i,j"))
            assert "does not appear on the right-hand side" in str(ex), (src, str(ex))
            continue
        with np.errstate(all="ignore"):
            out = prog(**env)
        got = env["Z"] if mode == "acc" else out["Z"]
        assert got.dtype == (np.float32 if mode == "f32" else np.float64), src
        tol = 1e-4 if mode in ("f32", "mixed") else 1e-10
        scale = np.abs(full).sum(axis=1).max() if mode == "sum" else np.abs(want[np.isfinite(want)]).max(initial=1)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale + 1e-300, equal_nan=True,
                                   err_msg="seed %d, %s:\n%s" % (seed, mode, src))
        checked += 1
    assert checked >= 60  # most trees use both labels
