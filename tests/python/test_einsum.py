"""tensorexpr.einsum against numpy.einsum: values, shapes, dtypes, errors."""
import numpy as np
import pytest

import tensorexpr as tx

rng = np.random.default_rng(7)


def arr(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def close(a, b, dtype=np.float64):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * (1 + np.abs(b).max(initial=0)))


# (subscripts, shapes): numpy's test_einsum.py and opt_einsum's test cases
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]), ("i,j", [(3,), (4,)]),
    ("ii->", [(4, 4)]), ("ii", [(4, 4)]), ("ii->i", [(4, 4)]), ("iii->i", [(3, 3, 3)]), ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]), ("ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ij->i", [(3, 4)]), ("ij->j", [(3, 4)]),
    ("i,i->", [(5,), (5,)]), ("i,i", [(5,), (5,)]), ("i,i->i", [(5,), (5,)]), ("ij,j->i", [(3, 4), (4,)]),
    ("ijk->kji", [(2, 3, 4)]), ("ijk->jik", [(2, 3, 4)]), ("ijk,ijk->", [(2, 3, 4), (2, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("...ij,jk->...ik", [(6, 2, 3, 4), (4, 5)]), ("...i,...i", [(2, 3), (4, 1, 3)]), ("i...->...", [(3, 4, 5)]),
    ("...->...", [(3, 4)]), ("...ii->...i", [(2, 3, 3)]), ("ii...->...i", [(3, 3, 2)]), ("...,...", [(3,), (3,)]),
    ("i,ij->j", [(1,), (3, 4)]), ("ij,jk", [(2, 1), (3, 4)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]), ("abc,bd,ce->ade", [(2, 3, 4), (3, 5), (4, 6)]),
    ("ea,fb,abcd,gc,hd->efgh", [(3, 2), (3, 2), (2, 2, 2, 2), (3, 2), (3, 2)]),
    ("ab,ab,ab->", [(3, 4)] * 3), ("abc,cba", [(2, 3, 4), (4, 3, 2)]), ("a,b,c->abc", [(2,), (3,), (4,)]),
    ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]), ("Ab,bA->", [(2, 3), (3, 2)]), ("Ba", [(2, 3)]), ("bA", [(2, 3)]),
    ("ijkl,klmn->ijmn", [(2, 3, 4, 5), (4, 5, 2, 3)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,i->ij", [(3, 4), (3,)]), ("i,i,i->", [(4,)] * 3), ("ij,jk,kl,lm,mn->in", [(2, 3), (3, 2), (2, 3), (3, 2), (2, 3)]),
    ("ab,cd,ef->abcdef", [(2, 1), (1, 2), (2, 2)]), ("ab...,bc...->ac...", [(2, 3, 4), (3, 5, 4)]),
    (",i->i", [(), (3,)]), (",->", [(), ()]), ("", [()]), ("i->", [(6,)]), ("abcdef->fedcba", [(1, 2, 1, 2, 1, 2)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("subs,shapes", CASES, ids=[c[0] or "empty" for c in CASES])
def test_vs_numpy(subs, shapes, dtype):
    ops = [arr(*s, dtype=dtype) for s in shapes]
    close(tx.einsum(subs, *ops), np.einsum(subs, *ops), dtype)
    close(tx.einsum(subs, *ops), np.einsum(subs, *ops), dtype)  # the cached kernel


def test_strided_and_transposed_inputs():
    A = arr(8, 10)
    B = arr(12, 6)
    for a, b in [(A[::2, 1:9], B[::2, ::-1][:, :6].T[:, :4]), (A.T[:4, ::2], B[:5, :4].T)]:
        s = "ij,jk->ik" if a.shape[1] == b.shape[0] else None
        if s is None:
            continue
        close(tx.einsum(s, a, b), np.einsum(s, a, b))
    x = np.broadcast_to(arr(4), (3, 4))  # zero strides
    y = arr(3, 4)
    close(tx.einsum("ij,ij->i", x, y), np.einsum("ij,ij->i", x, y))
    F = np.asfortranarray(arr(5, 6))
    close(tx.einsum("ij->ji", F), np.einsum("ij->ji", F))
    close(tx.einsum("ij,jk", F, F.T), F @ F.T)


def test_mixed_dtypes_and_dtype_argument():
    a32, b64 = arr(3, 4, dtype=np.float32), arr(4, 2)
    close(tx.einsum("ij,jk", a32, b64), np.einsum("ij,jk", a32, b64))
    i = np.arange(12).reshape(3, 4)
    close(tx.einsum("ij->j", i, dtype=np.float64), np.einsum("ij->j", i, dtype=np.float64))
    with pytest.raises(TypeError):
        tx.einsum("ij->j", i)
    with pytest.raises(ValueError):
        tx.einsum("ij->j", i)


def carr(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),      # zgemm / cgemm
    ("ij,j->i", [(6, 4), (4,)]),           # zgemv
    ("i,i->", [(7,), (7,)]),               # zdotu: no conjugation
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ii->i", [(4, 4)]),
    ("ij->", [(3, 5)]),
    ("ijk,kl,lm->im", [(2, 3, 4), (4, 5), (5, 2)]),
])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_vs_numpy(subs, shapes, dtype):
    ops = [carr(*s, dtype=dtype) for s in shapes]
    close(tx.einsum(subs, *ops), np.einsum(subs, *ops), np.float32 if dtype == np.complex64 else np.float64)


def test_complex_mixed_dtypes():
    # numpy's promotion: f32 with c64 is c64, f64 with c64 is c128, f32 with c128 is c128
    for a, b in [(np.float32, np.complex64), (np.float64, np.complex64), (np.float32, np.complex128),
                 (np.complex64, np.complex128)]:
        x = arr(3, 4, dtype=a) if np.dtype(a).kind == "f" else carr(3, 4, dtype=a)
        y = carr(4, 2, dtype=b)
        want = np.einsum("ij,jk", x, y)
        got = tx.einsum("ij,jk", x, y)
        close(got, want, np.float32 if want.dtype == np.complex64 else np.float64)
    r = arr(3, 4)
    close(tx.einsum("ij->j", r, dtype=np.complex128), np.einsum("ij->j", r, dtype=np.complex128))
    # strided complex operands and out=
    z = carr(6, 8)[::2, ::-2]
    out = np.empty((3,), np.complex128)
    assert tx.einsum("ij->i", z, out=out) is out
    close(out, np.einsum("ij->i", z))
    with pytest.raises(TypeError):
        tx.einsum("ij->i", z, out=np.empty(3))   # complex into a real out: numpy refuses too


def test_out():
    A, B = arr(3, 4), arr(4, 5)
    out = np.empty((3, 5))
    r = tx.einsum("ij,jk->ik", A, B, out=out)
    assert r is out
    close(out, A @ B)
    big = np.zeros((6, 10))
    view = big[::2, ::2]
    r = tx.einsum("ij,jk->ik", A, B, out=view)
    assert r is view
    close(big[::2, ::2], A @ B)
    assert not big[1::2].any()
    o32 = np.empty((3, 5), np.float32)
    with pytest.raises(TypeError):
        tx.einsum("ij,jk->ik", A, B, out=o32)
    with pytest.raises(ValueError):
        tx.einsum("ij,jk->ik", A, B, out=np.empty((5, 3)))
    # out overlapping an input
    S = arr(4, 4)
    ref = S @ S
    tx.einsum("ij,jk->ik", S, S, out=S)
    close(S, ref)


def test_zero_extent():
    close(tx.einsum("ij,jk->ik", arr(3, 0), arr(0, 4)), np.einsum("ij,jk->ik", arr(3, 0), arr(0, 4)))
    close(tx.einsum("ij->i", arr(0, 3)), np.einsum("ij->i", arr(0, 3)))


def test_interleaved_form():
    A, B = arr(3, 4), arr(4, 5)
    close(tx.einsum(A, [0, 1], B, [1, 2], [0, 2]), np.einsum(A, [0, 1], B, [1, 2], [0, 2]))
    C = arr(2, 3, 4)
    close(tx.einsum(C, [Ellipsis, 1], B, [1, 2]), np.einsum(C, [Ellipsis, 1], B, [1, 2]))


BAD = [
    ("ij,jk->ik->", [(2, 2), (2, 2)]), ("i.j", [(2, 2)]), ("...i...", [(2, 2)]), ("1i", [(2, 2)]),
    ("ij->ik", [(2, 2)]), ("i->ii", [(2,)]), ("i,j", [(2, 2), (2, 2)]), ("ij,jk", [(2, 3), (4, 5)]),
    ("ii", [(2, 3)]), ("ij", [(2,)]), ("i", [(2, 3)]), ("ij,jk", [(2, 3)]), ("ij", [(2, 3), (3, 4)]),
    ("...ij,jk->ik", [(5, 2, 3), (3, 4)]), ("ij->i->j", [(2, 2)]), ("i$", [(2, 2)]), ("i->i.", [(2,)]),
    ("ij,ij", [(2, 3), (3, 2)]), ("i,i", [(2,), (3,)]), ("...i,...i", [(2, 3), (3, 3)]),
]


@pytest.mark.parametrize("subs,shapes", BAD, ids=[c[0] for c in BAD])
def test_numpy_errors(subs, shapes):
    ops = [arr(*s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subs, *ops)
    with pytest.raises(ValueError):
        tx.einsum(subs, *ops)


def test_cache_reuses_the_program():
    tx.cache_clear()
    A, B = arr(3, 4), arr(4, 5)
    tx.einsum("ij,jk", A, B)
    from tensorexpr import _einsum
    n = len(_einsum._cache)
    for _ in range(5):
        tx.einsum("ij,jk", arr(3, 4), arr(4, 5))
    assert len(_einsum._cache) == n
    tx.einsum("ij,jk", arr(3, 5), arr(5, 5))
    assert len(_einsum._cache) == n + 1
