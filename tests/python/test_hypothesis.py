"""Random einsum expressions and shapes against numpy.einsum (hypothesis)."""
import numpy as np
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import tensorexpr as tx

LABELS = "abcdefgAB"


@st.composite
def expressions(draw):
    nops = draw(st.integers(1, 4))
    labels = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=5, unique=True))
    ext = {c: draw(st.integers(1, 4)) for c in labels}
    use_ell = draw(st.booleans())
    ell = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    terms, shapes = [], []
    for _ in range(nops):
        t = draw(st.lists(st.sampled_from(labels), max_size=4))
        shape = [ext[c] for c in t]
        if use_ell:
            k = draw(st.integers(0, len(ell)))
            e = ell[len(ell) - k:]
            # numpy broadcasts a 1 against any extent
            e = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else n for n in e)
            pos = draw(st.integers(0, len(t)))
            t = t[:pos] + ["..."] + t[pos:]
            shape = shape[:pos] + list(e) + shape[pos:]
        terms.append("".join(t))
        shapes.append(tuple(shape))
    subs = ",".join(terms)
    if draw(st.booleans()):
        used = sorted({c for t in terms for c in t if c != "."})
        out = draw(st.lists(st.sampled_from(used), unique=True)) if used else []
        if use_ell:
            out.insert(draw(st.integers(0, len(out))), "...")
        subs += "->" + "".join(out)
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    layouts = [draw(st.sampled_from(LAYOUTS)) for _ in shapes]
    return subs, shapes, dtype, layouts


# how each operand lies in memory (the values are the same): read in place
LAYOUTS = ["C", "F", "reversed", "stepped", "transposed"]


def lay_out(a, layout):
    if a.ndim == 0:
        return a
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "reversed":
        r = np.empty_like(a)[tuple(slice(None, None, -1) for _ in a.shape)]
    elif layout == "stepped":
        r = np.empty(tuple(2 * n for n in a.shape), a.dtype)[tuple(slice(None, None, 2) for _ in a.shape)]
    elif layout == "transposed":
        return np.ascontiguousarray(a.T).T
    else:
        return a
    r[...] = a
    return r


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(expressions(), st.integers(0, 2**32 - 1), st.sampled_from([None] + LAYOUTS))
def test_random_einsum_matches_numpy(expr, seed, out_layout):
    subs, shapes, dtype, layouts = expr
    r = np.random.default_rng(seed)
    ops = [lay_out(r.standard_normal(s).astype(dtype), k) for s, k in zip(shapes, layouts)]
    try:
        ref = np.einsum(subs, *ops)
    except ValueError:
        try:
            tx.einsum(subs, *ops)
        except ValueError:
            return
        raise AssertionError("numpy rejects %r %s; tensorexpr does not" % (subs, shapes))
    got = tx.einsum(subs, *ops)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (subs, shapes)
    assert type(got) is type(ref), (subs, shapes, type(got), type(ref))
    tol = 2e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * (1 + np.abs(ref).max(initial=0)))
    if out_layout is not None and ref.ndim > 0:  # written into an array of that layout
        out = lay_out(np.full(ref.shape, np.nan, ref.dtype), out_layout)
        assert tx.einsum(subs, *ops, out=out) is out
        np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * (1 + np.abs(ref).max(initial=0)))


INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def int_values(r, shape, dtype, wide):
    """Random values of DTYPE: small ones, or (WIDE) any of its range, so
    that products and sums wrap around as numpy's do."""
    if dtype == np.bool_:
        return r.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(dtype)
    lo, hi = (int(info.min), int(info.max)) if wide else (max(int(info.min), -9), min(int(info.max), 9))
    return r.integers(lo, hi, shape, dtype=dtype, endpoint=True)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(expressions(), st.integers(0, 2**32 - 1), st.lists(st.sampled_from(INTS), min_size=4, max_size=4),
       st.booleans(), st.sampled_from([None] + LAYOUTS))
def test_random_integer_einsum_matches_numpy(expr, seed, dtypes, wide, out_layout):
    """Integer and bool operands, mixed as numpy mixes them: the same
    values (wrapping around included), dtype and type as numpy.einsum."""
    subs, shapes, _, layouts = expr
    r = np.random.default_rng(seed)
    ops = [lay_out(int_values(r, s, d, wide), k) for s, d, k in zip(shapes, dtypes, layouts)]
    try:
        ref = np.einsum(subs, *ops)
    except (ValueError, TypeError) as e:  # TypeError: an operand numpy will not cast to its result type
        try:
            tx.einsum(subs, *ops)
        except type(e):
            return
        raise AssertionError("numpy rejects %r %s (%s); tensorexpr does not" % (subs, shapes, e))
    got = tx.einsum(subs, *ops)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (subs, shapes, got.dtype, ref.dtype)
    assert type(got) is type(ref), (subs, shapes, type(got), type(ref))
    # an integer or bool result is exact; int8 with uint64 is float64 (numpy's
    # promotion), computed in floats, where the order of the products rounds
    same = (np.array_equal if ref.dtype.kind in "biu" else
            lambda a, b: np.allclose(a, b, rtol=1e-12, atol=1e-12 * (1 + np.abs(b).max(initial=0))))
    assert same(got, ref), (subs, [o.dtype for o in ops], got, ref)
    if out_layout is not None and ref.ndim > 0:
        out = lay_out(np.zeros(ref.shape, ref.dtype), out_layout)
        assert tx.einsum(subs, *ops, out=out) is out
        assert same(out, ref)
