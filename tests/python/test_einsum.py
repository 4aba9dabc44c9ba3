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
    for _ in range(3):  # compiled, then the cached kernel (the direct call)
        got, ref = tx.einsum(subs, *ops), np.einsum(subs, *ops)
        close(got, ref, dtype)
        assert type(got) is type(ref), (subs, type(got), type(ref))  # a number is numpy's scalar, not a 0-d array


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
    # integers with floats: numpy's promotion (int64 with float32 is float64)
    for x, y in [(i, a32.T), (i.astype(np.int8), a32.T), (i > 5, b64)]:
        want, got = np.einsum("ij,jk->ik", x, y), tx.einsum("ij,jk->ik", x, y)
        assert got.dtype == want.dtype
        close(got, want, want.dtype)


def test_integer_and_bool_operands_compute_as_numpy_does(monkeypatch):
    r = np.random.default_rng(5)
    A, B = r.integers(-1000, 1000, (60, 70)), r.integers(-1000, 1000, (70, 80))
    seen = []  # numpy.einsum is only asked for the result's type (one element per operand)
    real = np.einsum
    monkeypatch.setattr(np, "einsum", lambda *a, **k: (seen.append(max(np.size(x) for x in a[1:])), real(*a, **k))[1])
    got = tx.einsum("ij,jk->ik", A, B)
    monkeypatch.undo()
    assert max(seen) == 1, seen
    assert got.dtype == np.int64 and np.array_equal(got, A @ B)
    # numpy wraps around in the operands' type, and so does the result
    i8 = np.array([100, 100], np.int8)
    assert tx.einsum("i,i->", i8, np.array([2, 2], np.int8)) == np.int8(-112)
    assert type(tx.einsum("i,i->", i8, i8)) is np.int8
    u8 = r.integers(0, 256, (5, 300)).astype(np.uint8)
    for subs, ops in [("ij->i", (u8,)), ("ij,kj->ik", (u8, u8)), ("ij,j->i", (u8, np.arange(300, dtype=np.int16))),
                      ("ij,kj", (u8.astype(np.int8), u8.astype(np.int8))), ("ii", (u8[:, :5],))]:
        want, got = np.einsum(subs, *ops), tx.einsum(subs, *ops)
        assert got.dtype == want.dtype and np.array_equal(got, want), subs
    # bool: any of the products
    M, N = r.random((7, 9)) < 0.2, r.random((9, 4)) < 0.2
    for subs, ops in [("ij,jk->ik", (M, N)), ("ij->", (M,)), ("ij->j", (M,)), ("ij,jk->ik", (M, N.astype(np.uint8)))]:
        want, got = np.einsum(subs, *ops), tx.einsum(subs, *ops)
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want), subs
    # a view of one operand is numpy's view
    v = tx.einsum("ij->ji", A)
    assert v.dtype == A.dtype and np.shares_memory(v, A) and np.array_equal(v, A.T)
    # dtype= and out= cast by casting=, with numpy's errors
    X = r.random((4, 5)) * 10
    with pytest.raises(TypeError):
        tx.einsum("ij->i", X, dtype=np.int32)
    want = np.einsum("ij->i", X, dtype=np.int32, casting="unsafe")
    got = tx.einsum("ij->i", X, dtype=np.int32, casting="unsafe")
    assert got.dtype == np.int32 and np.array_equal(got, want)
    o32 = np.zeros((60, 80), np.int32)
    with pytest.raises(TypeError):
        tx.einsum("ij,jk->ik", A, B, out=o32)
    assert tx.einsum("ij,jk->ik", A, B, out=o32, casting="same_kind") is o32
    assert np.array_equal(o32, (A @ B).astype(np.int32))
    with pytest.raises(ValueError):
        tx.einsum("ij,jk->ik", A, B, out=np.zeros((3, 3), np.int64))
    with pytest.raises(ValueError):
        tx.einsum("ij,jj->ik", A, B)
    # sums that float64 cannot hold exactly (2^62, and past 2^63: wrapped) are numpy's
    for big in (2 ** 40, 2 ** 42):
        P, Q = np.full((3, 4), big, np.int64), np.full((4, 2), 2 ** 20, np.int64)
        assert np.array_equal(tx.einsum("ij,jk->ik", P, Q), np.einsum("ij,jk->ik", P, Q))


@pytest.mark.parametrize("subs", [",ij->ij", "ij,->ij", ",ij->", "i,,i->"])
def test_number_operands_typed_as_numpy_types_them(subs):
    # a 0-d operand among operands of other dtypes: numpy before 2.0 types
    # the result by its value (a 0-d float64 holding 0.5 with a float32
    # matrix gives float32, one holding 1e300 float64; complex likewise),
    # numpy 2 by its dtype; tensorexpr asks the installed numpy. Called
    # again and again with both values, from the cache and the direct path
    m32 = arr(3, 4, dtype=np.float32)
    for value in [np.float64(0.5), np.array(1e300), np.float64(0.25), np.array(0.5 + 1j), np.float32(2), 3.0]:
        ops = [np.asarray(value) if not t else (m32 if t == "ij" else m32[0]) for t in subs.split("->")[0].split(",")]
        for _ in range(3):
            with np.errstate(all="ignore"):
                want = np.einsum(subs, *ops)
                got = tx.einsum(subs, *ops)
            assert np.asarray(got).dtype == np.asarray(want).dtype, (subs, value)
            assert type(got) is type(want), (subs, value)
            close(got, want, np.float32 if np.asarray(want).dtype in (np.float32, np.complex64) else np.float64)


@pytest.mark.filterwarnings("ignore::numpy.ComplexWarning")  # the unsafe complex to real casts, both sides
def test_dtype_argument_casts_safely_and_views_ignore_it():
    # numpy casts the operands to dtype= by casting= ('safe' by default:
    # float64 to float32 is a TypeError), except where it returns a view of
    # one operand (a transpose, a diagonal): there dtype= is not used
    x64, x32 = arr(3, 4), arr(3, 4, dtype=np.float32)
    for subs, ops, dt in [("ij,jk", (x64, x64.T), np.float32), ("ij->i", (x64,), np.float32),
                          ("ij,j->i", (arr(3, 4, dtype=np.complex128), x64[0]), np.float64)]:
        with pytest.raises(TypeError):
            np.einsum(subs, *ops, dtype=dt)
        with pytest.raises(TypeError, match="according to the rule 'safe'"):
            tx.einsum(subs, *ops, dtype=dt)
        close(tx.einsum(subs, *ops, dtype=dt, casting="unsafe"), np.einsum(subs, *ops, dtype=dt, casting="unsafe"),
              np.float32 if dt == np.float32 else np.float64)
    for subs, ops, dt in [("ij->ji", (x64,), np.float32), ("ii->i", (arr(3, 3, dtype=np.float32),), np.float64),
                          ("ij->ji", (np.arange(6).reshape(2, 3),), np.float64), ("ij", (x32,), np.complex128)]:
        want, got = np.einsum(subs, *ops, dtype=dt), tx.einsum(subs, *ops, dtype=dt)
        assert got.dtype == want.dtype == ops[0].dtype
        np.testing.assert_array_equal(got, want)


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


@pytest.mark.parametrize("subs", ["ij,jk->ik", "ij,jk->ki", "ij->j", "ij,ij->ij"])
def test_read_only_out_is_refused(subs):
    # numpy raises ValueError for a read-only out=, and writes nothing; so
    # does this, on the first call and on a repeated one (the direct path)
    a, b = arr(3, 4), arr(4, 5)
    ops = (a, b if "jk" in subs else a) if "," in subs else (a,)
    shape = np.einsum(subs, *ops).shape
    for _ in range(2):
        o = np.zeros(shape)
        tx.einsum(subs, *ops, out=np.zeros(shape))  # the program is cached
        o.flags.writeable = False
        with pytest.raises(ValueError):
            np.einsum(subs, *ops, out=o)
        with pytest.raises(ValueError, match="read-only"):
            tx.einsum(subs, *ops, out=o)
        assert not o.any()


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


def test_direct_calls_repeat_correctly_and_follow_the_cache():
    # the repeated call (one library call, _direct) for one, two and three
    # operands: new arrays of the same layout every time give their own
    # results; a scalar or a list with the same key takes the general path;
    # the cache's eviction and cache_clear keep _direct in step with it
    from tensorexpr import _einsum
    tx.cache_clear()
    assert not _einsum._direct
    for _ in range(3):
        a, b, c = arr(4, 5), arr(5, 6), arr(6)
        close(tx.einsum("ij->j", a), a.sum(0))
        close(tx.einsum("ij,jk->ik", a, b), a @ b)
        close(tx.einsum("ij,jk,k->i", a, b, c), a @ b @ c)
        x = np.array(2.0)
        close(tx.einsum(",->", x, x), 4.0)
        close(tx.einsum(",->", np.float64(3.0), np.float64(0.5)), 1.5)
        close(tx.einsum(",->", 3.0, 0.5), 1.5)
    assert len(_einsum._direct) == 4
    assert all(_einsum._direct_key(k) in _einsum._direct for k, e in _einsum._cache.items() if e.direct)
    for n in range(1, _einsum.CACHE_SIZE + 3):  # evictions
        tx.einsum("i->", arr(n))
    assert set(_einsum._direct) == {_einsum._direct_key(k) for k, e in _einsum._cache.items() if e.direct}
    tx.cache_clear()
    assert not _einsum._direct and not _einsum._cache


def test_direct_calls_with_out(monkeypatch):
    # out= a C-ordered writeable array of the result's dtype: the repeated
    # call writes into it (one library call); an out that is an operand
    # gives the product of the operands as they were; other outs (Fortran
    # order, another dtype) take the general path and give the same values
    from tensorexpr import _einsum
    tx.cache_clear()
    for _ in range(3):
        a, b = arr(6, 6), arr(6, 6)
        C = np.empty((6, 6))
        assert tx.einsum("ij,jk->ik", a, b, out=C) is C
        close(C, a @ b)
        want = a @ b
        assert tx.einsum("ij,jk->ik", a, b, out=a) is a
        close(a, want)
        s = np.empty(())
        v = arr(5)
        tx.einsum("i,i->", v, v, out=s)
        close(s, v @ v)
    assert len(_einsum._direct) == 2

    def general(*args):
        raise AssertionError("the general path was taken")
    with monkeypatch.context() as m:  # the repeated call with out= binds nothing by name
        m.setattr(_einsum, "bind_input", general)
        m.setattr(_einsum, "bind_output", general)
        a, b, C = arr(6, 6), arr(6, 6), np.empty((6, 6))
        tx.einsum("ij,jk->ik", a, b, out=C)
        close(C, a @ b)
    a, b = arr(6, 6), arr(6, 6)
    F = np.empty((6, 6), order="F")
    tx.einsum("ij,jk->ik", a, b, out=F)
    close(F, a @ b)
    c = np.empty((6, 6), np.complex128)
    tx.einsum("ij,jk->ik", a, b, out=c)
    close(c.real, a @ b)
    assert not c.imag.any()
    with pytest.raises(ValueError):
        tx.einsum("ij,jk->ik", a, b, out=np.empty((6, 5)))


# numpy's own optimize_compare cases (numpy/core/tests/test_einsum.py, from
# opt_einsum's test suite), with numpy's sizes per letter
NUMPY_OPT = ("a,ab,abc->abc a,b,ab->ab aab,fa,df,ecc->bde ab,ab ab,ab,c-> ab,ab,c->c ab,ab,cd,cd,ef,ef-> "
             "ab,ab,cd,cd-> ab,ab,cd,cd->ac ab,ab,cd,cd->cd ab,ba ab,bcd,cd->abcd ab,bcd,cd->abd ab,cd,de->abcde "
             "ab,cd,de->be ab,cd,ef->abcdef ab,cd,ef->acdf abc,abc abc,bac abc,cba abcd,ad abcd,ea,fb,gc,hd->efgh "
             "abhe,hidj,jgba,hiab,gab acdf,jbje,gihb,hfac,gfac,gifabc,hfac adb,bc,fa,cfc->d aef,fbc,dca->bde "
             "afd,ba,cc,dc->bf ba,ac,da->bcd baa,dcf,af,cde->be bb,ff,be->e bbd,bda,fc,db->acf bca,cdb,dbf,afc-> "
             "bcb,bb,fc,fff-> bcf,bbb,fbf,fc-> bd,db,eac->ace bde,cdh,agdb,hica,ibd,hgicd,hiac "
             "bdhe,acad,hiab,agac,hibd cd,bdhe,aidb,hgca,gc,hgibcd,hgac chd,bde,agbc,hiad,bdi,cgh,agdb "
             "chd,bde,agbc,hiad,hgc,hgi,hiad dba,ead,cad->bce dcc,fce,ea,dbf->ab dd,fb,be,cdb->cef "
             "ea,fb,abcd,gc,hd->efgh ea,fb,gc,hd,abcd->efgh eb,cb,fb->cef ecb,fef,bad,ed->ac ed,fcd,ff,bcf->be "
             "efc,dbc,acf,fd->abe fbb,dfd,fc,fc-> fdf,cdd,ccd,afe->ae fff,fae,bef,def->abd").split()
NUMPY_SIZES = dict(zip("abcdefghij", [2, 3, 4, 5, 4, 3, 2, 6, 5, 4]))


@pytest.mark.parametrize("subs", NUMPY_OPT)
def test_numpy_optimize_cases(subs):
    ops = [arr(*[NUMPY_SIZES[c] for c in t]) for t in subs.split("->")[0].split(",")]
    close(tx.einsum(subs, *ops), np.einsum(subs, *ops))


# numpy's test_einsum_errors (the ValueError cases): list operands as there
NUMPY_BAD = [
    ("", []), ("", [0, 0]), (",", [0, [0], [0]]), (",", [[0]]), ("i", [0]), ("ij", [[0, 0]]), ("...i", [0]),
    ("i...j", [[0, 0]]), ("i...", [0]), ("ij...", [[0, 0]]), ("i..", [[0, 0]]), (".i...", [[0, 0]]),
    ("j->..j", [[0, 0]]), ("j->.j...", [[0, 0]]), ("i%...", [[0, 0]]), ("...j$", [[0, 0]]), ("i->&", [[0, 0]]),
    ("i->ij", [[0, 0]]), ("ij->jij", [[[0, 0], [0, 0]]]), ("ii", [np.arange(6.).reshape(2, 3)]),
    ("ii->i", [np.arange(6.).reshape(2, 3)]), ("i", [np.arange(6.).reshape(2, 3)]),
    ("aabcb,abc", [np.ones((3, 3, 4, 5, 6)), np.ones((3, 4, 5))]),
]


@pytest.mark.parametrize("subs,ops", NUMPY_BAD, ids=["%s-%d" % (c[0] or "empty", i) for i, c in enumerate(NUMPY_BAD)])
def test_numpy_error_cases(subs, ops):
    ops = [np.asarray(o, dtype=float) for o in ops]
    with pytest.raises(ValueError):
        np.einsum(subs, *ops)
    with pytest.raises(ValueError):
        tx.einsum(subs, *ops)


def _layouts(a):
    """A in several layouts numpy makes, same values: C, Fortran, transposed
    copy seen through .T, a stepped slice, a reversed view."""
    yield "C", a
    yield "F", np.asfortranarray(a)
    if a.ndim >= 2:
        yield "T", np.ascontiguousarray(a.T).T
    big = np.zeros(tuple(2 * n + 1 for n in a.shape), a.dtype)
    v = big[tuple(slice(1, None, 2) for _ in a.shape)]
    v[...] = a
    yield "step", v
    r = np.zeros(a.shape, a.dtype)[tuple(slice(None, None, -1) for _ in a.shape)]
    r[...] = a
    yield "neg", r


STRIDED = [("ij,jk->ik", [(6, 5), (5, 7)]), ("ij,j->i", [(6, 5), (5,)]), ("i,i->", [(9,), (9,)]),
           ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]), ("ii->i", [(5, 5)]), ("ii->", [(5, 5)]),
           ("ijk->kij", [(3, 4, 5)]), ("ij,ij->ij", [(4, 6), (4, 6)]), ("abc,cd->abd", [(3, 4, 5), (5, 2)]),
           ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)]), ("i,j->ij", [(4,), (5,)]),
           # reductions whose loop order follows the layout (the summed label outside
           # when the output's label has the smallest stride), rows longer than a block
           ("ij->j", [(37, 300)]), ("ij->i", [(300, 37)]), ("ijk->ik", [(5, 6, 300)]),
           ("ijk,jk->ik", [(5, 6, 300), (6, 300)]), ("ijk->j", [(7, 5, 40)]),
           # dots in loops over a summed label: each call adds to the last
           # (a strided operand's dot once kept only the last call's)
           ("bcd,cb->d", [(130, 3, 3), (3, 130)]), ("bc,cb->", [(130, 3), (3, 130)])]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("subs,shapes", STRIDED, ids=[c[0] for c in STRIDED])
def test_strided_layouts_read_in_place(subs, shapes, dtype):
    base = [arr(*s) for s in shapes]
    want = np.einsum(subs, *base)
    for k in range(len(base)):
        for name, a in _layouts(base[k]):
            if dtype == np.float32:  # the same layout in f32
                a = dict(_layouts(base[k].astype(np.float32)))[name]
            ops = [a if j == k else o.astype(dtype) for j, o in enumerate(base)]
            assert ops[k].dtype == dtype
            close(tx.einsum(subs, *ops), np.einsum(subs, *ops), dtype)
            if dtype == np.float64:
                close(tx.einsum(subs, *ops), want)


def test_broadcast_inputs_zero_strides():
    x = np.broadcast_to(arr(5), (4, 5))
    B = arr(5, 3)
    for subs, ops in [("ij,jk->ik", (x, B)), ("ij->i", (x,)), ("ij,ij->", (x, x)),
                      ("ij,jk->ik", (B.T, np.broadcast_to(arr(5, 1), (5, 6)))),
                      ("ij,j->i", (np.broadcast_to(arr(1, 5), (4, 5)), arr(5)))]:
        close(tx.einsum(subs, *ops), np.einsum(subs, *ops))


@pytest.mark.parametrize("layout", ["F", "T", "step", "neg"])
def test_strided_out(layout):
    A, B = arr(5, 4), arr(4, 6)
    for subs, ops, shape in [("ij,jk->ik", (A, B), (5, 6)), ("ij->ji", (A,), (4, 5)),
                             ("ij,jk->ki", (A, B), (6, 5)), ("ij,j->i", (A, B[:, 0]), (5,))]:
        want = np.einsum(subs, *ops)
        layouts = dict(_layouts(np.zeros(shape)))
        if layout not in layouts:  # no transpose of a vector
            continue
        out = layouts[layout]
        r = tx.einsum(subs, *ops, out=out)
        assert r is out
        close(out, want)


def test_einsum_from_threads():
    # one cached program from 4 threads at once, each with its own arrays
    import threading
    A = [arr(40, 30) for _ in range(4)]
    B = [arr(30, 20) for _ in range(4)]
    errors = []

    def work(k):
        try:
            for _ in range(50):
                close(tx.einsum("ij,jk->ik", A[k], B[k]), A[k] @ B[k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_views_like_numpy():
    # numpy's test_einsum_views: one operand and nothing summed gives a view
    a = np.arange(24.).reshape(2, 3, 4)
    s = np.arange(16.).reshape(4, 4)
    for subs, x in [("ijk->kji", a), ("...", a), ("ji", s), ("ii->i", s), ("iii->i", np.arange(27.).reshape(3, 3, 3)),
                    ("...ii->...i", np.arange(18.).reshape(2, 3, 3)), ("ij->ji", s[::2, ::-1])]:
        r = tx.einsum(subs, x)
        assert np.shares_memory(r, x), subs
        assert np.shares_memory(np.einsum(subs, x), x), subs
        close(r, np.einsum(subs, x))
        o = np.zeros(r.shape)
        assert tx.einsum(subs, x, out=o) is o
        close(o, np.einsum(subs, x))


def test_einsum_releases_the_gil():
    # a long einsum kernel in one thread; the main thread counts meanwhile
    import threading
    import time
    A = arr(300, 300, 30)
    B = arr(300, 300, 30)
    tx.einsum("ijk,ijl->kl", A[:2], B[:2])  # compiled for other shapes; time the real one
    tx.einsum("ijk,ijl->kl", A, B)
    t0 = time.perf_counter()
    tx.einsum("ijk,ijl->kl", A, B)
    once = time.perf_counter() - t0
    done = threading.Event()
    th = threading.Thread(target=lambda: ([tx.einsum("ijk,ijl->kl", A, B) for _ in range(max(1, int(0.3 / once)))],
                                          done.set()))
    count = 0
    th.start()
    while not done.is_set():
        count += 1
    th.join()
    assert count > 1000, count


# opt_einsum's test_contract.py `tests` (github.com/dgasmith/opt_einsum), with
# its sizes per letter (opt_einsum/testing.py _default_dim_dict)
OPT_EINSUM = ("a,->a ab,->ab ,ab,->ab ,,-> a,ab,abc->abc a,b,ab->ab ea,fb,gc,hd,abcd->efgh ea,fb,abcd,gc,hd->efgh "
              "abcd,ea,fb,gc,hd->efgh acdf,jbje,gihb,hfac,gfac,gifabc,hfac cd,bdhe,aidb,hgca,gc,hgibcd,hgac "
              "abhe,hidj,jgba,hiab,gab bde,cdh,agdb,hica,ibd,hgicd,hiac chd,bde,agbc,hiad,hgc,hgi,hiad "
              "chd,bde,agbc,hiad,bdi,cgh,agdb bdhe,acad,hiab,agac,hibd ab,ab,c-> ab,ab,c->c ab,ab,cd,cd-> "
              "ab,ab,cd,cd->ac ab,ab,cd,cd->cd ab,ab,cd,cd,ef,ef-> ab,cd,ef->abcdef ab,cd,ef->acdf "
              "ab,cd,de->abcde ab,cd,de->be ab,bcd,cd->abcd ab,bcd,cd->abd eb,cb,fb->cef dd,fb,be,cdb->cef "
              "bca,cdb,dbf,afc-> dcc,fce,ea,dbf->ab fdf,cdd,ccd,afe->ae abcd,ad ed,fcd,ff,bcf->be "
              "baa,dcf,af,cde->be bd,db,eac->ace fff,fae,bef,def->abd efc,dbc,acf,fd->abe ab,ab ab,ba abc,abc "
              "abc,bac abc,cba ab,bc ab,cb ba,bc ba,cb abcd,cd abcd,ab abcd,cdef abcd,cdef->feba abcd,efdc "
              "aab,bc->ac ab,bcc->ac aab,bcc->ac baa,bcc->ac aab,ccb->ac aab,fa,df,ecc->bde ecb,fef,bad,ed->ac "
              "bcf,bbb,fbf,fc-> bb,ff,be->e bcb,bb,fc,fff-> fbb,dfd,fc,fc-> afd,ba,cc,dc->bf adb,bc,fa,cfc->d "
              "bbd,bda,fc,db->acf dba,ead,cad->bce aef,fbc,dca->bde").split(" ")
OPT_SIZES = dict(zip("abcdefghijklmnopqABC", [2, 3, 4, 5, 4, 3, 2, 6, 5, 4, 3, 2, 5, 7, 4, 3, 2, 3, 4, 9]))


@pytest.mark.parametrize("subs", OPT_EINSUM)
def test_opt_einsum_cases(subs):
    ops = [arr(*[OPT_SIZES[c] for c in t]) for t in subs.split("->")[0].split(",")]
    close(tx.einsum(subs, *ops), np.einsum(subs, *ops))
    F = [np.asfortranarray(o) if o.ndim else o for o in ops]  # and every operand Fortran-ordered
    close(tx.einsum(subs, *F), np.einsum(subs, *ops))


def test_scalars_and_subclasses_after_arrays():
    # the repeated call reads the data pointer of exact ndarrays only: numpy
    # scalars, 0-d arrays' look-alikes, and subclasses take the general path
    x = np.array(2.0)
    v = arr(3)
    close(tx.einsum(",i->i", x, v), 2.0 * v)
    close(tx.einsum(",i->i", x, v), 2.0 * v)
    close(tx.einsum(",i->i", np.float64(3.0), v), 3.0 * v)
    close(tx.einsum(",->", np.float64(3.0), np.float64(0.5)), np.einsum(",->", 3.0, 0.5))
    m = np.asmatrix(arr(3, 3))
    close(tx.einsum("ij,jk->ik", np.asarray(m), np.asarray(m)), np.asarray(m) @ np.asarray(m))
    close(tx.einsum("ij,jk->ik", m, m), np.einsum("ij,jk->ik", m, m))
    close(tx.einsum("ij,jk->ik", [[1.0, 2.0], [3.0, 4.0]], np.eye(2)), np.array([[1.0, 2.0], [3.0, 4.0]]))
    # the interleaved form with an array where the subscripts would be
    A = arr(3, 4)
    close(tx.einsum(A, np.array([0, 1])), np.einsum(A, [0, 1]))
    close(tx.einsum(A, [0, 1], A, [0, 1], [1]), np.einsum(A, [0, 1], A, [0, 1], [1]))


@pytest.mark.parametrize("subs,shapes", [("ikac,kjcb->ijab", [(3, 4, 5, 6), (4, 2, 6, 7)]),
                                         ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij->ji", [(3, 4)]),
                                         ("bij,bjk->ikb", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(4,), (4,)]),
                                         ("ij,kj->", [(0, 3), (2, 3)])])
@pytest.mark.parametrize("order", ["K", "C", "F", "A"])
def test_order(subs, shapes, order):
    """numpy's order=: C and F give that layout (A: F when every operand is F);
    K may give a transposed view (the layout the product makes); one operand
    with nothing summed is a view of it whatever order says (numpy's is);
    the values are numpy's whichever, and out= of any layout is written in
    place."""
    for fortran in (False, True):
        ops = [arr(*s) for s in shapes]
        if fortran:
            ops = [np.asfortranarray(o) for o in ops]
        ref = np.einsum(subs, *ops)
        view = np.shares_memory(np.einsum(subs, *ops, order=order), ops[0])
        for _ in range(3):  # compiled, then cached (the direct call for K)
            got = tx.einsum(subs, *ops, order=order)
            close(got, ref)
            want = "F" if order == "F" or (order == "A" and fortran) else "C" if order != "K" else None
            if view:
                assert np.shares_memory(got, ops[0]), (subs, order, fortran)
            elif want and np.ndim(got) > 1:
                assert got.flags[want + "_CONTIGUOUS"], (subs, order, fortran, got.strides)
        if np.ndim(ref):
            for lay in ("C", "F"):
                o = np.full(ref.shape, np.nan, order=lay)
                for _ in range(2):
                    assert tx.einsum(subs, *ops, out=o, order=order) is o
                    close(o, ref)


def test_order_spellings_and_errors():
    a, b = arr(3, 4), arr(4, 5)
    assert tx.einsum("ij,jk", a, b, order="f").flags.f_contiguous  # numpy takes lower case
    close(tx.einsum("ij,jk", a, b, order=None), np.einsum("ij,jk", a, b, order=None))
    for bad in ("X", "CF", 3):
        with pytest.raises((ValueError, TypeError)) as e:
            np.einsum("ij", a, order=bad)
        with pytest.raises(e.type) as f:
            tx.einsum("ij", a, order=bad)
        if e.type is ValueError:
            assert str(e.value) == str(f.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_staged_operands_whose_unit_stride_is_not_the_last_mode(dtype):
    """A batched product whose operands and result are Fortran-ordered
    (the batch mode has stride 1: no BLAS call reads such a matrix in
    place) is staged through row-major copies, gathered before the call
    and scattered into out after it, tile by tile across the row (api.c
    copy_across); also 4-D, with a reversed unit-stride mode, and with
    extents that are not multiples of a cache line's elements."""
    r = np.random.default_rng(7)

    def rnd(*s):
        x = r.standard_normal(s)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * r.standard_normal(s)
        return x.astype(dtype)

    tol = 2e-4 if dtype in (np.float32, np.complex64) else 1e-10

    def check(got, want):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (1 + np.abs(want).max()))
    for b, i, j, k in [(64, 64, 64, 64), (37, 19, 23, 29), (5, 9, 3, 70)]:
        A, B = np.asfortranarray(rnd(b, i, j)), np.asfortranarray(rnd(b, j, k))
        want = np.einsum("bij,bjk->bik", A, B)
        check(tx.einsum("bij,bjk->bik", A, B), want)
        out = np.asfortranarray(np.zeros((b, i, k), dtype))
        assert tx.einsum("bij,bjk->bik", A, B, out=out) is out
        check(out, want)
        Ar = np.asfortranarray(rnd(b, i, j))[::-1]  # the unit-stride mode reversed (stride -1)
        check(tx.einsum("bij,bjk->bik", Ar, B), np.einsum("bij,bjk->bik", Ar, B))
    A4, B4 = np.asfortranarray(rnd(6, 7, 9, 11)), np.asfortranarray(rnd(6, 7, 11, 5))
    check(tx.einsum("abij,abjk->abik", A4, B4), np.einsum("abij,abjk->abik", A4, B4))


def _same_outcome(args, kw):
    """numpy.einsum and tensorexpr.einsum on the same call: the same value,
    dtype and shape (out= written, and returned), or the same exception type."""
    def call(f):
        k = dict(kw)
        if isinstance(k.get("out"), np.ndarray):
            k["out"] = k["out"].copy()
        try:
            r = f(*args, **k)
            return "ok", r, k.get("out")
        except (TypeError, ValueError) as e:
            return type(e), None, None
    want, got = call(lambda *a, **k: np.einsum(*a, optimize=False, **k)), call(tx.einsum)
    assert want[0] == got[0], (args, kw, want[0], got[0])
    if want[0] == "ok":
        w, g = np.asarray(want[1]), np.asarray(got[1])
        assert w.dtype == g.dtype and w.shape == g.shape, (args, kw, w.dtype, g.dtype, w.shape, g.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6)
        if want[2] is not None:
            assert got[1] is got[2]


@pytest.mark.parametrize("args,kw", [
    # out='s type takes part in the computation's (numpy's iterator): bools
    # counted into an int out, uint8 products into int64 not wrapping,
    # float32 summed in float64, int8*uint16 into float32
    (("ij->i", np.ones((1, 3), bool)), {"out": np.zeros(1, np.int64)}),
    (("ij,ij->i", np.full((1, 2), 200, np.uint8), np.full((1, 2), 200, np.uint8)), {"out": np.zeros(1, np.int64)}),
    (("ij->i", np.array([[1e8, 1, -1e8]], np.float32)), {"out": np.zeros(1)}),
    (("i,i->i", np.ones(2, np.int8), np.ones(2, np.uint16)), {"out": np.zeros(2, np.float32)}),
    (("i,i->i", np.ones(2), np.ones(2)), {"out": np.zeros(2, np.float32)}),  # float64 into float32: TypeError
    # casting= on the operands' common type, validated
    (("i,i", np.ones(2), np.ones(2, complex)), {"casting": "equiv"}),
    (("i,i", np.ones(2), np.ones(2)), {"casting": "bogus"}),
    (("i,i", np.ones(2), np.ones(2)), {"casting": 3}),
    # out broadcast where the result has extent 1
    (("ij->i", np.ones((1, 2))), {"out": np.zeros(3)}),
    (("ij->i", np.ones((1, 2), np.int16)), {"out": np.zeros(3, np.int16)}),
    # a view of one operand written into out: dtype= and casting= apply
    (("i", np.array([1.5 + 2j])), {"dtype": "f8", "casting": "unsafe", "out": np.zeros(1, complex)}),
    (("i", np.array([1.5])), {"dtype": "i8", "out": np.zeros(1)}),
    # dtype= with out=: out must cast to dtype= and back
    (("i,i->i", np.ones(2, np.float32), np.ones(2, np.float32)), {"dtype": "f4", "out": np.zeros(2)}),
    # numpy's error order: shapes before casts
    (("ii", np.ones((2, 3), complex)), {"dtype": "i8"}),
    (("...i,...i", np.ones((2, 3)), np.ones((4, 3))), {"dtype": "f4"}),
    # another byte order; half and long double (numpy's own einsum)
    (("i,i", np.ones(2), np.ones(2, ">f8")), {}),
    (("i,i", np.ones(3, np.float16), np.ones(3, np.float16)), {}),
    (("ij,j->i", np.ones((2, 3), np.longdouble), np.ones(3, np.longdouble)), {}),
])
def test_numpy_typing_and_errors(args, kw):
    # found by a differential fuzz against numpy.einsum (310,000 calls)
    _same_outcome(args, kw)


def test_order_is_ignored_by_a_view():
    a = arr(2, 3)
    r = tx.einsum("ij->ji", a, order="C")
    assert np.shares_memory(r, a) and np.shares_memory(np.einsum("ij->ji", a, order="C"), a)
