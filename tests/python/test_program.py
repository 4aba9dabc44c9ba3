"""tensorexpr.compile/load and Program calls: outputs, out=, dims, sparse
maps, errors, the generated C, the graph, threads and the GIL."""
import functools
import os
import re
import threading
import time

import numpy as np
import pytest

import tensorexpr as tx

MATMUL = 'in A[n,k], B[k,m];\nout C[n,m];\nC("i,j") = A("i,k") * B("k,j");\n'
rng = np.random.default_rng(3)


def test_compile_and_call():
    p = tx.compile(MATMUL, name="matmul")
    A, B = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
    r = p(A=A, B=B)
    assert list(r) == ["C"]
    np.testing.assert_allclose(r["C"], A @ B, rtol=1e-12)
    # rebinding with new extents recompiles
    A2, B2 = rng.standard_normal((7, 2)), rng.standard_normal((2, 6))
    np.testing.assert_allclose(p(A=A2, B=B2)["C"], A2 @ B2, rtol=1e-12)
    assert [t.io for t in p.tensors.values()] == ["in", "in", "out"]
    assert p.tensors["A"].dims == ("n", "k")
    assert p.inputs == ["A", "B"] and p.outputs == ["C"]


def test_load(tmp_path):
    f = tmp_path / "mm.tx"
    f.write_text(MATMUL)
    p = tx.load(str(f))
    A, B = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    np.testing.assert_allclose(p(A=A, B=B)["C"], A @ B, rtol=1e-12)
    f.write_text("in A[n];\nout B[n];\nB(\"i\") = Q(\"i\");\n")
    with pytest.raises(tx.CompileError) as e:
        tx.load(str(f))
    assert e.value.file == str(f) and e.value.line == 3 and e.value.column == 10


def test_compile_error_located():
    with pytest.raises(tx.CompileError) as e:
        tx.compile("in A[n];\nout B[n];\n  B(\"i\") = A(\"i,j\");\n", name="bad.tx")
    err = e.value
    assert (err.file, err.line) == ("bad.tx", 3)
    assert err.column > 0 and err.msg
    assert "bad.tx:3:" in str(err)
    assert err.diagnostics[0][:2] == ("bad.tx", 3)


def test_out_and_inout():
    p = tx.compile(MATMUL)
    A, B = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
    C = np.empty((5, 3))
    r = p(A=A, B=B, out={"C": C})
    assert r["C"] is C
    np.testing.assert_allclose(C, A @ B, rtol=1e-12)
    big = np.zeros((10, 3))
    p(A=A, B=B, C=big[::2])
    np.testing.assert_allclose(big[::2], A @ B, rtol=1e-12)
    assert not big[1::2].any()
    q = tx.compile('in x[n];\ninout S[n];\nS("i") += 2 * x("i");\n')
    S = np.ones(4)
    x = np.arange(4.0)
    q(x=x, S=S)
    np.testing.assert_allclose(S, 1 + 2 * x)
    with pytest.raises(ValueError):
        q(x=x, S=np.ones(4, np.float32))


def test_dims_given_and_inferred():
    p = tx.compile('in x[n];\nout y[n], z[m];\ny("i") = 2 * x("i");\nz("j") = 1;\n')
    r = p(x=np.ones(3), m=4)
    assert r["z"].shape == (4,) and r["y"].shape == (3,)
    assert p(x=np.ones(3))["z"].shape == (4,)  # a dim given once is kept (the library keeps it)
    r = p(x=np.ones(5), m=2)
    assert r["y"].shape == (5,) and r["z"].shape == (2,)


def test_dim_only_in_an_extent_expression():
    # n appears only in z's extent 2*n-1, which does not set it: the error
    # says so (it said only "bind a tensor that has it"); given, it works
    p = tx.compile('in z[2*n-1]; out y[n]; y("i") = slice(z("i"), [0], [n]);')
    with pytest.raises(ValueError, match=r"dim 'n' of 'y' is unknown.*mode 0 of 'z' is 2\*n - 1: an extent "
                                         r"written as an expression does not set"):
        p(z=np.arange(5.0))
    np.testing.assert_array_equal(p(z=np.arange(5.0), n=3)["y"], [0, 1, 2])


def test_bad_inputs_raise_not_crash():
    p = tx.compile(MATMUL)
    A = np.ones((2, 3))
    with pytest.raises(ValueError):
        p(A=A, B=np.ones((4, 2)))   # k disagrees
    with pytest.raises(ValueError):
        p(A=np.ones(3), B=np.ones((3, 2)))  # rank
    with pytest.raises(TypeError):
        p(A=A)  # missing B
    with pytest.raises(TypeError):
        p(A=A, B=np.ones((3, 2)), Z=np.ones(2))  # unknown tensor
    with pytest.raises(ValueError, match="complex"):
        p(A=A + 1j, B=np.ones((3, 2)))   # complex into a real tensor
    with pytest.raises(ValueError):
        p(A=np.array([["a", "b", "c"]] * 2), B=np.ones((3, 2)))
    with pytest.raises(ValueError):
        p(A=A, B=np.ones((3, 2)), out={"C": np.empty((3, 3))})
    # still usable
    np.testing.assert_allclose(p(A=A, B=np.ones((3, 2)))["C"], np.full((2, 2), 3.0))


def test_run_error_names_tensor():
    p = tx.compile('in A[n,n];\nout L[n,n];\nL("i,j") = cholesky(A("i,j"));\n')
    M = rng.standard_normal((4, 4))
    np.testing.assert_allclose(p(A=M @ M.T + 4 * np.eye(4))["L"] @ p(A=M @ M.T + 4 * np.eye(4))["L"].T,
                               M @ M.T + 4 * np.eye(4), rtol=1e-10, atol=1e-10)
    with pytest.raises(tx.RunError) as e:
        p(A=-np.eye(4))
    assert "positive definite" in str(e.value)
    assert e.value.tensor in (None, "A", "L")


def test_sparse_map_from_mask():
    src = 'sparse L : "i" -> "k";\n' + MATMUL
    p = tx.compile(src)
    A, B = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
    mask = rng.random((5, 4)) < 0.5
    C = p(A=A, B=B, L=mask)["C"]
    np.testing.assert_allclose(C, (A * mask) @ B, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        p(A=A, B=B, L=mask[:, :3])


def test_c_source_and_graph():
    p = tx.compile(MATMUL, name="matmul.tx")
    c = p.c_source()
    assert "int matmul(" in c
    g = p.graph()
    assert isinstance(g, str) and "contract" in g
    assert "digraph" in g.dot
    svg = g._repr_svg_()
    if svg is not None:
        assert "<svg" in svg


def test_threads_share_one_program():
    p = tx.compile(MATMUL)
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        for _ in range(30):
            n = int(r.integers(2, 9))
            A, B = r.standard_normal((n, 5)), r.standard_normal((5, n + 1))
            try:
                np.testing.assert_allclose(p(A=A, B=B)["C"], A @ B, rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(tx.einsum("ij,jk", A, B), A @ B, rtol=1e-12, atol=1e-12)
            except Exception as e:  # pragma: no cover
                errors.append(e)

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]


def test_gil_released_while_running():
    # a slow program in one thread; the main thread keeps counting meanwhile
    p = tx.compile('in A[n,n];\nout s;\ns = exp(A("i,j") * 1e-3) + A("i,j") * A("j,k") * A("k,i");\n',
                   opt_level=0, threads=1)
    A = rng.standard_normal((400, 400)) * 0.01
    t0 = time.perf_counter()
    p(A=A)
    alone = time.perf_counter() - t0
    done = threading.Event()
    th = threading.Thread(target=lambda: (p(A=A), done.set()))
    count = 0
    th.start()
    while not done.is_set():
        count += 1
    th.join()
    assert alone > 0.02, alone
    assert count > 1000, count  # the main thread ran while tx_run ran


def test_library_path_and_bind_array_flag():
    assert os.path.exists(tx.LIBRARY_PATH) or not os.sep in tx.LIBRARY_PATH
    assert isinstance(tx.HAVE_BIND_ARRAY, bool)


def test_quickstart_example_runs():
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "python_quickstart.py")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "4 threads agree: True" in r.stdout
    assert ": False" not in r.stdout, r.stdout


def test_rebinding_same_buffer_sees_new_values():
    a, b = np.ones((3, 3)), np.ones((3, 3))
    first = tx.einsum("ij,jk", a, b).copy()
    a *= 2  # same pointer, new values: the kernel must read them
    np.testing.assert_allclose(tx.einsum("ij,jk", a, b), 2 * first)


COMPLEX = """
in c128 Z[n,m]; in c64 W[m]; in x[n];
out c128 Y[n]; out r[n]; out c64 S[m];
Y("i") = Z("i,j") * W("j") + x("i");
r("i") = abs(Z("i,j")) + imag(conj(Z("i,j")));
S("j") = 2 * W("j");
"""


def test_complex_program():
    p = tx.compile(COMPLEX)
    assert {k: p.tensors[k].dtype for k in ("Z", "W", "Y", "r", "S")} == {
        "Z": np.complex128, "W": np.complex64, "Y": np.complex128, "r": np.float64, "S": np.complex64}
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    W = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    x = rng.standard_normal(4)
    out = p(Z=Z[:, ::-1].copy()[:, ::-1], W=W, x=x)
    np.testing.assert_allclose(out["Y"], Z @ W.astype(np.complex128) + x, rtol=1e-6)
    np.testing.assert_allclose(out["r"], (np.abs(Z) - Z.imag).sum(1), rtol=1e-12)
    assert out["S"].dtype == np.complex64
    np.testing.assert_allclose(out["S"], 2 * W, rtol=1e-6)
    # a strided complex view is read in place (tx_bind_array with TX_C128)
    big = np.zeros((8, 6), np.complex128)
    big[::2, ::2] = Z
    np.testing.assert_allclose(p(Z=big[::2, ::2], W=W, x=x)["Y"], out["Y"], rtol=1e-12)
    # a real array into a complex tensor is converted, as numpy would
    np.testing.assert_allclose(p(Z=Z.real, W=W, x=x)["Y"], Z.real @ W.astype(np.complex128) + x, rtol=1e-6)


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def _layouts(a):
    """A (same values) in the layouts the library reads in place."""
    if a.ndim == 0:
        return [a]
    F = np.asfortranarray(a)
    R = np.empty_like(a)[tuple(slice(None, None, -1) for _ in a.shape)]
    R[...] = a
    S = np.empty(tuple(2 * n for n in a.shape), a.dtype)[tuple(slice(1, None, 2) for _ in a.shape)]
    S[...] = a
    return [F, R, S]


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".tx")
                                        and f != "dlpno_pair.tx"))
def test_examples_with_strided_bindings(name):
    # every example program (scans, slices, BLAS, LAPACK, reductions) gives
    # the same results with its inputs and outputs in strided layouts as
    # row-major: read and written in place, or staged where a call needs it
    path = os.path.join(EXAMPLES, name)
    p = tx.load(path)
    dims = {}
    for line in open(path):
        if line.startswith("#! run:"):
            w = line.split()
            dims = {w[i + 1].split("=")[0]: int(w[i + 1].split("=")[1]) for i in range(len(w)) if w[i] == "-D"}
    if not all(isinstance(d, int) and d >= 0 or d in dims for t in p.tensors.values() for d in t.dims):
        pytest.skip("an extent the run line does not give")
    r = np.random.default_rng(11)
    ins = {}
    for t in p.tensors.values():
        if t.io != "out":
            shape = tuple(dims[d] if isinstance(d, str) else d for d in t.dims)
            ins[t.name] = r.uniform(0.5, 1.5, shape).astype(t.dtype)
    ref = p({k: v.copy() for k, v in ins.items()}, **{d: n for d, n in dims.items() if d in p.dims})
    for k in range(3):
        args = {n: (_layouts(a)[k % len(_layouts(a))] if p.tensors[n].io == "in" else a.copy())
                for n, a in ins.items()}
        outs = {n: _layouts(np.zeros_like(v))[k % len(_layouts(v))] for n, v in ref.items()
                if p.tensors[n].io == "out" and v.ndim > 0}
        got = p(args, out=outs, **{d: n for d, n in dims.items() if d in p.dims})
        for n, v in ref.items():
            np.testing.assert_allclose(got[n], v, rtol=1e-9, atol=1e-9 * (1 + np.abs(v).max()), err_msg=n)
            if n in outs:
                assert got[n] is outs[n]


# the cc tier through ctypes, which loads libtensorexpr RTLD_LOCAL: the
# compiled object reaches the pool, BLAS and LAPACK through the table the
# library hands it, not through the global scope
CC_PROGRAM = '''
dim n;
in  A[n,n], x[n], S[n,n];
out C[n,n], y[n], L[n,n], E[n], Z[n,n];
C("i,j") = A("i,k") * A("j,k");
y("i") = exp(A("i,j") * x("j"));
L("i,j") = cholesky(S("i,j"));
E("i") = tanh(x("i")) * 2 + x("i");
Z("i,j") = tanh(A("i,j")) * x("j");
'''


def test_backend_cc_matches_tcc(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    n = 300  # Z's loop nest runs on the pool's threads, E's is too small for them
    A = rng.standard_normal((n, n)) / n
    x = rng.standard_normal(n)
    S = A @ A.T + np.eye(n)
    cc = tx.compile(CC_PROGRAM, backend="cc")
    tcc = tx.compile(CC_PROGRAM, backend="tcc")
    assert cc.backend == (None, None)
    r, r0 = cc(A=A, x=x, S=S), tcc(A=A, x=x, S=S)
    assert cc.backend[0] == "cc" and cc.backend[1].startswith("compiled by "), cc.backend
    assert tcc.backend == ("tcc", "libtcc in memory")
    for k in r0:
        assert r[k].tobytes() == r0[k].tobytes(), k
    np.testing.assert_allclose(r["L"], np.linalg.cholesky(S), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r["y"], np.exp(A @ x), rtol=1e-12)
    np.testing.assert_allclose(r["Z"], np.tanh(A) * x, rtol=1e-14)
    # a second program with the same code finds the object in the cache
    again = tx.compile(CC_PROGRAM, backend="cc")
    again(A=A, x=x, S=S)
    assert again.backend[1].startswith("cached "), again.backend
    # no compiler: libtcc, the same values, and the reason
    monkeypatch.setenv("TX_CC", "/nonexistent/cc")
    fb = tx.compile(CC_PROGRAM, backend="cc")
    r2 = fb(A=A, x=x, S=S)
    assert fb.backend[0] == "tcc" and "no compiler '/nonexistent/cc'" in fb.backend[1], fb.backend
    assert all(r2[k].tobytes() == r0[k].tobytes() for k in r0)
    with pytest.raises(ValueError):
        tx.compile(CC_PROGRAM, backend="gcc")


def test_repeated_calls_through_binding_plans():
    # the second call with the same (shape, strides, dtype) of every in
    # tensor runs through a binding plan (one tx_run_arrays): fresh results
    # from fresh arrays, tensors declared out of order (an out between the
    # ins), a Fortran-ordered operand its own plan; lists, other dtypes,
    # dims, out= and a wrong shape take the general path
    p = tx.compile('in A[n,k];\nout C[n,m], s;\nin B[k,m];\nC("i,j") = A("i,k") * B("k,j");\ns = A("i,k");\n')
    assert p._plans == {}
    for _ in range(3):
        A, B = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
        r = p(A=A, B=B)
        assert list(r) == ["C", "s"]
        np.testing.assert_allclose(r["C"], A @ B, rtol=1e-12)
        np.testing.assert_allclose(r["s"], A.sum(), rtol=1e-12)
    assert len(p._plans) == 1
    F = np.asfortranarray(rng.standard_normal((5, 4)))
    for _ in range(2):
        np.testing.assert_allclose(p(A=F, B=B)["C"], F @ B, rtol=1e-12)
    assert len(p._plans) == 2
    np.testing.assert_allclose(p(A=A.tolist(), B=B)["C"], A @ B, rtol=1e-12)
    np.testing.assert_allclose(p(A=A.astype(np.float32), B=B)["C"], A.astype(np.float32) @ B, rtol=1e-6)
    assert len(p._plans) == 2
    with pytest.raises(tx.BindError):
        p(A=A, B=rng.standard_normal((3, 3)))
    C = np.empty((5, 3))
    p(A=A, B=B, out={"C": C})
    np.testing.assert_allclose(C, A @ B, rtol=1e-12)
    np.testing.assert_allclose(p(A=A, B=B)["C"], A @ B, rtol=1e-12)
    A2, B2 = rng.standard_normal((2, 4)), rng.standard_normal((4, 6))
    np.testing.assert_allclose(p(A=A2, B=B2, n=2)["C"], A2 @ B2, rtol=1e-12)  # a dim given: general path
    np.testing.assert_allclose(p(A=A, B=B)["C"], A @ B, rtol=1e-12)
    # programs with inout tensors or sparse maps have no plans
    assert tx.compile('inout X[n];\nX("i") += 1;\n')._plans is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("expr,ref", [
    ('X("i,j") * 1.5', lambda X: X * 1.5),
    ('-X("i,j")', lambda X: -X),
    ('X("i,j") / 4', lambda X: X / 4),
    ('-3 * X("i,j") * 0.5', lambda X: X * -1.5),
    ('2 * X("i,j") * X("i,j")', lambda X: 2 * X * X),
])
def test_scaling_bits(dtype, expr, ref):
    # a product by a constant has numpy's bits, the sign of a zero included
    # (c*x + 0 turned -0.0 into +0.0), in the f32 and the f64 path, over rows
    # long enough for the block loops
    t = "f32" if dtype == np.float32 else "f64"
    p = tx.compile('in %s X[n,m];\nout %s P[n,m];\nP("i,j") = %s;\n' % (t, t, expr))
    X = np.random.default_rng(3).standard_normal((3, 1001)).astype(dtype)
    X[:, ::7] = 0.0
    X[:, ::11] = -0.0
    got = p(X=X)["P"]
    want = ref(X).astype(dtype)
    assert got.dtype == dtype
    assert np.array_equal(got.view(np.uint32 if t == "f32" else np.uint64),
                          want.view(np.uint32 if t == "f32" else np.uint64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,perm", [
    ((300, 170), (1, 0)), ((5, 9), (1, 0)), ((67, 130), (1, 0)),
    ((7, 130, 65), (2, 0, 1)), ((65, 3, 129), (2, 1, 0)), ((9, 66, 70), (0, 2, 1)),
])
@pytest.mark.parametrize("layout", ["C", "F", "view"])
def test_permuting_copies(dtype, shape, perm, layout):
    # a transposing store copies tile by tile (tx_p_tile_f64, tx_pf_tile):
    # every element where numpy's transpose puts it, for ragged tiles, any
    # input strides, and on 1 and 2 threads
    labels = "ijk"[:len(shape)]
    t = "f32" if dtype == np.float32 else "f64"
    dims = ["d%d" % i for i in range(len(shape))]
    src = 'in %s X[%s];\nout %s P[%s];\nP("%s") = X("%s");\n' % (
        t, ",".join(dims), t, ",".join(dims[p] for p in perm),
        ",".join(labels[p] for p in perm), ",".join(labels))
    X = np.random.default_rng(5).standard_normal(shape).astype(dtype)
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "view":
        X = np.random.default_rng(6).standard_normal(tuple(2 * n for n in shape)).astype(dtype)[
            tuple(slice(None, None, 2) for _ in shape)]
    want = np.transpose(X, perm)
    for threads in (1, 2):
        got = tx.compile(src, threads=threads)(X=X)["P"]
        assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_streamed_permuting_copy(dtype):
    # a permuting copy of 16 MiB or more writes with streaming stores
    # (prims.inc TX_STREAM_BYTES): rows that start on 16 bytes streamed, the
    # others (an odd row length) plain; every element where numpy puts it,
    # on 1 and 2 threads, also from a view that starts off 16 bytes
    t = "f32" if dtype == np.float32 else "f64"
    n, m = (2053, 2051) if dtype == np.float32 else (1451, 1447)
    assert n * m * np.dtype(dtype).itemsize >= 16 << 20
    src = 'in %s X[n,m];\nout %s P[m,n];\nP("j,i") = X("i,j");\n' % (t, t)
    X = np.random.default_rng(7).standard_normal((n + 1, m + 1)).astype(dtype)
    for threads in (1, 2):
        p = tx.compile(src, threads=threads)
        for x in (X[:n, :m], X[1:, 1:]):
            assert np.array_equal(p(X=x)["P"], x.T)


@pytest.mark.parametrize("layout", ["C", "padded rows", "every other column", "F"])
@pytest.mark.parametrize("m", [1, 7, 10, 15, 16])
def test_short_rows_of_functions(layout, m):
    # a reduction into rows of fewer than 16 elements whose summand calls a
    # function takes whole rows as one block (emit_dense.c
    # reduce_rows_flat) only where the rows follow each other in memory:
    # padded rows, a strided view and a column-major array go row by row;
    # the same bytes on 1 and 2 threads, numpy's values
    src = ('in X[n,m];\nout r[n], s[n];\nlet mx("i") = reduce(max, X("i,j"));\n'
           'r("i") = mx("i") + log(reduce(+, exp(X("i,k") - mx("i"))));\ns("i") = tanh(X("i,j")) / m;\n')
    g = np.random.default_rng(12)
    n = 4001
    if layout == "padded rows":
        X = g.standard_normal((n, m + 5))[:, :m]
    elif layout == "every other column":
        X = g.standard_normal((n, 2 * m))[:, ::2]
    elif layout == "F":
        X = np.asfortranarray(g.standard_normal((n, m)))
    else:
        X = g.standard_normal((n, m))
    want_r = X.max(1) + np.log(np.exp(X - X.max(1, keepdims=True)).sum(1))
    want_s = np.tanh(X).mean(1)
    got = [tx.compile(src, threads=t)(X=X) for t in (1, 2)]
    for o in got:
        np.testing.assert_allclose(o["r"], want_r, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(o["s"], want_s, rtol=1e-13, atol=1e-13)
    assert got[0]["r"].tobytes() == got[1]["r"].tobytes() and got[0]["s"].tobytes() == got[1]["s"].tobytes()


@pytest.mark.parametrize("case", ["cube", "affine", "typed", "inout", "odd rows", "row group"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_streamed_elementwise_stores(case, dtype):
    # an elementwise store of 16 MiB or more into an out or inout tensor
    # computes each block into a scratch block and streams it to the
    # target (prims.inc tx_p_stream_f64, tx_pf_stream): the nest's top
    # operation writing the target (cube, affine), an f64 value rounded
    # into an f32 target or the f32 path's block (typed), a nest that
    # reads its target (inout), rows that do not start on 16 bytes (odd
    # rows: an odd number of f32 or f64 elements, plain stores at their
    # ends), a row group's last nest (a softmax's output); every element
    # as numpy computes it, on 1 and 2 threads
    t = "f32" if dtype == np.float32 else "f64"
    n, m = (2053, 2049) if dtype == np.float32 else (1451, 1447)
    if case == "odd rows":
        m += 2
    assert n * m * np.dtype(dtype).itemsize >= 16 << 20
    g = np.random.default_rng(11)
    X, A = (g.standard_normal((n, m)).astype(dtype) for _ in range(2))
    wide = np.float64
    srcs = {
        "cube": ('in %s X[n,m];\nout %s Y[n,m];\nY("i,j") = X("i,j")^3;\n', lambda: X.astype(wide) ** 3),
        "affine": ('in %s X[n,m], A[n,m];\nout %s Y[n,m];\nY("i,j") = 2.5 * X("i,j") * A("i,j") + A("i,j");\n',
                   lambda: 2.5 * X.astype(wide) * A + A),
        "typed": ('in %s X[n,m];\nin f64 A[n,m];\nout %s Y[n,m];\nY("i,j") = exp(0.5 * X("i,j")) - A("i,j");\n',
                  lambda: np.exp(0.5 * X.astype(wide)) - A.astype(wide)),
        "inout": ('in %s X[n,m];\ninout %s Y[n,m];\nY("i,j") = Y("i,j") * 0.5 + X("i,j");\n',
                  lambda: A.astype(wide) * 0.5 + X),
        "odd rows": ('in %s X[n,m];\nout %s Y[n,m];\nY("i,j") = X("i,j") * X("i,j") - 1;\n',
                     lambda: X.astype(wide) * X - 1),
        "row group": ('in %s X[n,m];\nout %s Y[n,m];\nY("i,j") = X("i,j") - reduce(max, X("i,k"));\n',
                      lambda: X.astype(wide) - X.max(1, keepdims=True)),
    }
    src, ref = srcs[case]
    src = src % (t, t)
    if case == "typed":
        A = A.astype(np.float64)
    want = ref()
    for threads in (1, 2):
        p = tx.compile(src, threads=threads)
        args = {"X": X, "A": A} if "A[" in src else {"X": X}
        if case == "inout":
            args = {"X": X, "Y": A.copy()}
        got = p(**args)["Y"]
        assert got.dtype == dtype
        if dtype == np.float64:
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("shape,src_labels,out_labels", [
    ((1500, 300), "j,i", "i"), ((3, 1001), "j,i", "i"), ((40, 7, 600), "k,i,j", "i,j"),
    ((50, 2000), "j,i", "i"),
])
@pytest.mark.parametrize("layout", ["C", "view"])
def test_f32_sums_over_outer_label(shape, src_labels, out_labels, layout):
    # an f32 sum over a tensor's outer label runs down its rows
    # (tx_p_addf_rows): the sum in double, rounded to float once, on 1 and 2
    # threads; numpy's float32 sum (pairwise, in float) is further off
    summed = [c for c in src_labels.split(",") if c not in out_labels.split(",")]
    axis = src_labels.split(",").index(summed[0])
    dims = ["d%d" % i for i in range(len(shape))]
    out_dims = [dims[src_labels.split(",").index(c)] for c in out_labels.split(",")]
    src = 'in f32 X[%s];\nout f32 r[%s];\nr("%s") = X("%s");\n' % (
        ",".join(dims), ",".join(out_dims), out_labels, src_labels)
    X = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    if layout == "view":
        X = np.random.default_rng(9).standard_normal((shape[0],) + shape[1:-1] + (2 * shape[-1],)).astype(
            np.float32)[..., ::2]
    want = X.astype(np.float64).sum(axis=axis)
    for threads in (1, 2):
        got = tx.compile(src, threads=threads)(X=X)["r"]
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-7, atol=1e-6)


@pytest.mark.parametrize("expr,ref", [
    ('max(X("i,j"), 0)', lambda X, Y: np.maximum(X, np.float32(0))),
    ('min(X("i,j"), Y("i,j"))', lambda X, Y: np.minimum(X, Y)),
    ('max(0.5, X("i,j"))', lambda X, Y: np.maximum(np.float32(0.5), X)),
    ('X("i,j")^2', lambda X, Y: X * X),
    ('sqrt(abs(X("i,j")))', lambda X, Y: np.sqrt(np.abs(X))),
    ('abs(X("i,j"))', lambda X, Y: np.abs(X)),
    ('min(max(X("i,j"), -1), 1)', lambda X, Y: np.minimum(np.maximum(X, np.float32(-1)), np.float32(1))),
    ('sqrt(X("i,j"))', lambda X, Y: np.sqrt(X)),
])
def test_f32_select_and_roots_bits(expr, ref):
    # abs, max, min, squares and square roots of f32 values run in f32
    # blocks (tx_pf_bin 4/5, tx_pf_map 4/5) with the bits numpy's float32
    # ufuncs give, NaNs, infinities and signed zeros included (where a NaN
    # meets a NaN, any NaN)
    src = 'in f32 X[n,m], Y[n,m];\nout f32 P[n,m];\nP("i,j") = %s;\n' % expr
    rng = np.random.default_rng(11)
    X = rng.standard_normal((3, 1001)).astype(np.float32)
    Y = rng.standard_normal((3, 1001)).astype(np.float32)
    X[:, ::13] = np.nan
    Y[:, ::17] = np.nan
    X[:, 5::19] = -0.0
    X[:, 7::23] = np.inf
    X[:, 9::29] = -np.inf
    with np.errstate(invalid="ignore"):
        got = tx.compile(src)(X=X, Y=Y)["P"]
        want = ref(X, Y)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (got[~same][:5], want[~same][:5])


def test_run_error_with_percent_in_name():
    # the program's name reaches the run-time message as it is: a '%' in it
    # is not a format (the detail was printed through the message, which
    # crashed the interpreter)
    p = tx.compile('in A[n,n];\nout L[n,n];\nL("i,j") = cholesky(A("i,j"));\n', name="bad%s%n%lld.tx")
    A = np.eye(5)
    A[2, 2] = -1
    with pytest.raises(tx.RunError) as e:
        p(A=A)
    assert "bad%s%n%lld.tx:3:12: cholesky of 'A': matrix is not positive definite (leading minor 3)" in str(e.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("expr,ref", [
    ('exp(X("i,j") - m("i"))', lambda X, b, m: np.exp(X - m[:, None])),
    ('tanh(X("i,j") + b("j"))', lambda X, b, m: np.tanh(X + b)),
    ('exp(2 - X("i,j"))', lambda X, b, m: np.exp(2 - X)),
    ('log(X("i,j") * X("i,j") + 1)', lambda X, b, m: np.log(X * X + 1)),
    ('sin(X("i,j") * 0.5)', lambda X, b, m: np.sin(X * 0.5)),
    ('cos(b("j") - X("i,j"))', lambda X, b, m: np.cos(b - X)),
    ('exp(m("i") - 3 * X("i,j"))', lambda X, b, m: np.exp(m[:, None] - 3 * X)),
])
def test_functions_of_sums(dtype, expr, ref):
    # a function of a sum or product of two terms runs in one pass
    # (tx_p_map_aff, tx_pf_map_bin; c - y in f32 in two): numpy's values
    # within a few ulps, NaN and infinities where numpy has them, rows long
    # enough for spans
    src = 'in %s X[n,k], b[k], m[n];\nout %s Y[n,k];\nY("i,j") = %s;\n' % (
        ("f32", "f32", expr) if dtype == np.float32 else ("f64", "f64", expr))
    rng = np.random.default_rng(12)
    X = rng.standard_normal((5, 2100)).astype(dtype)
    X[1, ::37] = np.nan
    X[2, ::41] = np.inf
    b = rng.standard_normal(2100).astype(dtype)
    m = rng.standard_normal(5).astype(dtype)
    with np.errstate(all="ignore"):
        got = tx.compile(src)(X=X, b=b, m=m)["Y"]
        want = ref(X, b, m)  # numpy's own evaluation in the same type
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    if dtype == np.float32:
        np.testing.assert_allclose(got[fin], want[fin], rtol=4e-6, atol=1e-6)  # numpy rounds each step
    else:
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-14, atol=1e-15)


def _calls(prog, prim):
    # whether PROG's generated C calls primitive PRIM on a block (its
    # definition is in the text of every program that uses the primitives),
    # in any of its typed forms (f32 tensors read, the f32 target written)
    # or its f32 form (an f32 value, every step rounded to float)
    return re.search(r"\b%s(_fd|_ff|_df|_f32)?\(tx_" % prim, prog.c_source()) is not None


def _rows_case(expr, ref, prim, dtype, seed, extra=None):
    # Y("i,j") = EXPR over X[5,2100] (NaN, infinities and -0 in its rows),
    # b[2100], m[5], all f64 or all f32; PRIM must be in the C (None: any
    # calls); the result equals REF's numpy evaluation in the same type
    # (f32: numpy's float32 arithmetic, each step rounded, as tx(5)
    # computes an f32 statement), bit for bit, the signs of zeros included
    # (a NaN's sign is the compiler's choice). EXTRA(X, b) adds special
    # values.
    t = "f32 " if dtype == np.float32 else ""
    src = 'in %sX[n,k], b[k], m[n];\nout %sY[n,k];\nY("i,j") = %s;\n' % (t, t, expr)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((5, 2100))
    X[1, ::37] = np.nan
    X[2, ::41] = np.inf
    X[3, ::43] = -0.0
    b = rng.standard_normal(2100)
    m = rng.standard_normal(5)
    if extra:
        extra(X, b)
    if dtype == np.float32:  # all three f32, the arithmetic in float
        X, b, m = X.astype(np.float32), b.astype(np.float32), m.astype(np.float32)
    prog = tx.compile(src)
    assert prim is None or _calls(prog, prim)
    with np.errstate(all="ignore"):
        got = prog(X=X, b=b, m=m)["Y"]
        want = ref(X, b, m)
    assert want.dtype == dtype
    np.testing.assert_array_equal(got, want)
    num = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[num]), np.signbit(want[num]))


@pytest.mark.parametrize("expr,ref,prim", [
    ('(X("i,j") - m("i")) * b("j")', lambda X, b, m: (X - m[:, None]) * b, "tx_p_mul_aff"),
    ('b("j") * (X("i,j") + 2)', lambda X, b, m: b * (X + 2), "tx_p_mul_aff"),
    ('(X("i,j") - m("i")) * (X("i,j") + b("j"))', lambda X, b, m: (X - m[:, None]) * (X + b), "tx_p_mul_aff"),
    ('(X("i,j") - m("i"))^2', lambda X, b, m: np.square(X - m[:, None]), "tx_p_sq_aff"),
    ('(X("i,j") - 2 * b("j"))^2', lambda X, b, m: np.square(X - 2 * b), "tx_p_sq_aff"),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_of_sums(expr, ref, prim, dtype):
    # a product of a block and a sum of two terms, or the square of such a
    # sum, runs in one pass (the sum in a register): numpy's bits exactly
    # (the same roundings, in the same order), NaN and infinities included,
    # rows long enough for spans; f32 tensors likewise, every step rounded
    # to float (tx_p_mul_aff_f32, tx_p_sq_aff_f32)
    _rows_case(expr, ref, prim, dtype, 13)


@pytest.mark.parametrize("expr,ref", [
    ('max(X("i,j"), 0)', lambda X: np.maximum(X, 0)),
    ('max(0, X("i,j"))', lambda X: np.maximum(0, X)),
    ('min(max(X("i,j"), -1), 1)', lambda X: np.minimum(np.maximum(X, -1), 1)),
    ('min(2, X("i,j")) * 3', lambda X: np.minimum(2, X) * 3),
])
def test_max_min_of_a_number(expr, ref):
    # max and min of a block and a number run without spreading the
    # number over a block (tx_p_maxs, tx_p_mins): numpy's values, a NaN
    # wins, infinities kept
    src = 'in X[n,k];\nout Y[n,k];\nY("i,j") = %s;\n' % expr
    rng = np.random.default_rng(16)
    X = rng.standard_normal((4, 1500))
    X[1, ::37] = np.nan
    X[2, ::41] = np.inf
    X[3, ::43] = -np.inf
    prog = tx.compile(src)
    assert _calls(prog, "tx_p_maxs") or _calls(prog, "tx_p_mins")
    got = prog(X=X)["Y"]
    np.testing.assert_array_equal(got, ref(X))


@pytest.mark.parametrize("expr,ref", [
    ('1 / (X("i,j") + 2)', lambda X, b, m: 1 / (X + 2)),
    ('X("i,j") / (b("j") - m("i"))', lambda X, b, m: X / (b - m[:, None])),
    ('3 / (X("i,j") * 2 - b("j"))', lambda X, b, m: 3 / (X * 2 - b)),
    ('m("i") / (X("i,j") + X("i,j"))', lambda X, b, m: m[:, None] / (X + X)),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quotients_of_sums(expr, ref, dtype):
    # a quotient by a sum of two terms runs in one pass (tx_p_div_aff, the
    # sum in a register): numpy's bits, NaN, infinities and signed zeros
    # included, a zero denominator in the first form; f32 tensors likewise
    # (f32: tx_p_div_aff_f32, the sum, then the quotient, each rounded to
    # float)
    def zero_denominators(X, b):
        X[4, ::47] = -2.0
    _rows_case(expr, ref, "tx_p_div_aff", dtype, 17, zero_denominators)


def test_number_over_block():
    # c / x is numpy's c / x (one rounding), not (1 / x) * c
    src = 'in X[n,k];\nout Y[n,k];\nY("i,j") = 3 / X("i,j");\n'
    X = np.random.default_rng(19).standard_normal((3, 1500))
    X[1, ::7] = -0.0
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(tx.compile(src)(X=X)["Y"], 3 / X)


@pytest.mark.parametrize("expr,ref", [
    ('1 / (1 + exp(-X("i,j")))', lambda X: 1 / (1 + np.exp(-X))),
    ('X("i,j") / (1 + exp(-X("i,j")))', lambda X: X / (1 + np.exp(-X))),
    ('log(X("i,j") * 0.5)', lambda X: np.log(X * 0.5)),
    ('cos(X("i,j") * -3)', lambda X: np.cos(X * -3)),
    ('tanh(X("i,j") * 0.75)', lambda X: np.tanh(X * 0.75)),
    ('sin(-X("i,j"))', lambda X: np.sin(-X)),
])
def test_functions_of_scaled_blocks(expr, ref):
    # exp, log, sin, cos or tanh of c*x runs as f(c*x + -0.0) in one pass
    # (tx_p_map_aff; adding -0.0 changes no value): numpy's values to
    # libmvec's accuracy, NaN and infinities in place, the zeros exact with
    # their signs (tanh(-0) is -0)
    src = 'in X[n,k];\nout Y[n,k];\nY("i,j") = %s;\n' % expr
    rng = np.random.default_rng(18)
    X = np.abs(rng.standard_normal((4, 1700))) if "log" in expr else rng.standard_normal((4, 1700))
    X[1, ::37] = np.nan
    X[2, ::41] = np.inf
    X[3, ::43] = -0.0
    X[3, ::44] = 0.0
    prog = tx.compile(src)
    assert _calls(prog, "tx_p_map_aff")
    with np.errstate(all="ignore"):
        got = prog(X=X)["Y"]
        want = ref(X)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
    np.testing.assert_allclose(got[fin], want[fin], rtol=4e-16 * 8, atol=0)
    zeros = (X == 0)
    np.testing.assert_array_equal(got[zeros], want[zeros])
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


@pytest.mark.parametrize("expr,ref,prim", [
    ('where(X("i,j") > 0, X("i,j"), 0.01 * X("i,j"))', lambda X: np.where(X > 0, X, 0.01 * X), "tx_p_where_cmps"),
    ('where(X("i,j") > 0, X("i,j"), 0)', lambda X: np.where(X > 0, X, 0.0), "tx_p_where_cmps"),
    ('where(0.5 <= X("i,j"), 1, X("i,j"))', lambda X: np.where(0.5 <= X, 1.0, X), "tx_p_where_cmps"),
    ('(X("i,j") != 0) + (1 > X("i,j")) * 2', lambda X: (X != 0) + (1 > X) * 2.0, "tx_p_cmps"),
    ('where(X("i,j") == -1, 2, 3)', lambda X: np.where(X == -1, 2.0, 3.0), "tx_p_where_cmps"),
    ('where(X("i,j") > X("i,j") * 0.5, 2, 3)', lambda X: np.where(X > X * 0.5, 2.0, 3.0), "tx_p_where_s"),
])
def test_comparisons_with_a_number(expr, ref, prim):
    # a comparison with a number, and where() with a number for a branch,
    # run without spreading the number over a block (tx_p_cmps,
    # tx_p_where_s; where() of such a comparison in one pass,
    # tx_p_where_cmps): numpy's values, NaN compared as numpy compares it
    src = 'in X[n,k];\nout Y[n,k];\nY("i,j") = %s;\n' % expr
    rng = np.random.default_rng(20)
    X = rng.standard_normal((4, 1500))
    X[1, ::37] = np.nan
    X[2, ::41] = -1.0
    X[3, ::43] = -0.0
    X[3, ::44] = 0.5
    prog = tx.compile(src)
    assert _calls(prog, prim)
    with np.errstate(all="ignore"):
        got = prog(X=X)["Y"]
        want = ref(X)
    np.testing.assert_array_equal(got, want)
    num = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[num]), np.signbit(want[num]))


def _recip_times(b, m):
    # tx_p_divr's b / m: b times the reciprocal of the row's number; an f32
    # product's (tx_p_divrf, tx_pf_bin) rounds that reciprocal to float
    # first, and the product to float
    r = 1.0 / m[:, None].astype(np.float64)
    return b[None, :] * r.astype(b.dtype)


@pytest.mark.parametrize("expr,ref,prim", [
    ('X("i,j") * b("j") + m("i")', lambda X, b, m: X * b + m[:, None], "tx_p_mul_add"),
    ('X("i,j") * b("j") - 2', lambda X, b, m: X * b - 2, "tx_p_mul_add"),
    ('m("i") - X("i,j") + X("i,j") * b("j")', lambda X, b, m: (m[:, None] - X) + X * b, "tx_p_mul_add"),
    ('(X("i,j") + 0.5) * b("j") - m("i")', lambda X, b, m: (X + 0.5) * b - m[:, None], "tx_p_mul_aff_add"),
    ('(X("i,j") - m("i")) * b("j") + b("j")', lambda X, b, m: (X - m[:, None]) * b + b, "tx_p_mul_aff_add"),
    ('b("j") * (X("i,j") + 2) - X("i,j")', lambda X, b, m: b * (X + 2) - X, "tx_p_mul_aff_add"),
    ('(X("i,j") - m("i")) / m("i") * b("j") + b("j")',
     lambda X, b, m: _recip_times(b, m) * (X - m[:, None]) + b, "tx_p_mul_aff_add"),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_with_a_term(expr, ref, prim, dtype):
    # an f64 product (of two blocks, or of a block and a sum of two terms,
    # the block perhaps divided by a number) with a term added runs in one
    # pass (x * g + b, a layer norm's last step): the bits of the product
    # rounded, then the sum, NaN, infinities and signed zeros included. f32
    # tensors likewise, every step rounded to float (the f32 forms; a sum
    # of three terms in float passes); an f32 division by a number, in the
    # same pass, multiplies by the reciprocal rounded to float (tx(5))
    if dtype == np.float32 and expr.startswith('m("i") - X'):
        prim = None

    def negative_zeros(X, b):
        b[::53] = -0.0
    _rows_case(expr, ref, prim, dtype, 15, negative_zeros)


@pytest.mark.parametrize("expr,ref,prim", [
    ('X("i,j") * Z("i,j") + b("j")', lambda X, Z, b, m: X * Z + b, "tx_p_mul_add_f32"),
    ('(X("i,j") - m("i")) * b("j") + Z("i,j")', lambda X, Z, b, m: (X - m[:, None]) * b + Z, "tx_p_mul_aff_add_f32"),
    ('X("i,j") * Z("i,j") * 0.5', lambda X, Z, b, m: X * Z * np.float32(0.5), "tx_pf_bin"),
    ('(X("i,j") + Z("i,j")) / b("j")', lambda X, Z, b, m: (X + Z) / b, "tx_pf_bin"),
    ('2 * X("i,j") - 3 * Z("i,j")', lambda X, Z, b, m: 2 * X - 3 * Z, "tx_pf_bin"),
    ('m("i") / (X("i,j") + Z("i,j"))', lambda X, Z, b, m: m[:, None] / (X + Z), "tx_p_div_aff_f32"),
    ('(X("i,j") - Z("i,j"))^2', lambda X, Z, b, m: np.square(X - Z), "tx_p_sq_aff_f32"),
    ('0.1 * X("i,j") * Z("i,j") - 0.3 * b("j")', lambda X, Z, b, m: X * Z * np.float32(0.1) - np.float32(0.3) * b,
     "tx_pf_bin"),
])
def test_f32_chains_read_and_write_in_place(expr, ref, prim):
    # an f32 chain whose blocks are f32 tensors at unit stride reads them
    # where they are and its last step writes the f32 target: no tensor
    # converted into a scratch block first, and numpy's float32 bits, every
    # step rounded to float in tx(5)'s order (a product's constant factor
    # last), NaN, infinities and signed zeros among the values
    src = 'in f32 X[n,k], Z[n,k], b[k], m[n];\nout f32 Y[n,k];\nY("i,j") = %s;\n' % expr
    rng = np.random.default_rng(21)
    X = rng.standard_normal((5, 2100))
    Z = rng.standard_normal((5, 2100))
    X[1, ::37] = np.nan
    X[2, ::41] = np.inf
    Z[3, ::43] = -0.0
    X[3, ::43] = -0.0
    b, m = rng.standard_normal(2100), rng.standard_normal(5)
    X, Z, b, m = (a.astype(np.float32) for a in (X, Z, b, m))
    prog = tx.compile(src)
    assert re.search(r"\b%s\(tx_" % prim, prog.c_source()), prog.c_source()
    assert not re.search(r"\btx_p_load_f32\(tx_bn, &t_", prog.c_source())
    with np.errstate(all="ignore"):
        got = prog(X=X, Z=Z, b=b, m=m)["Y"]
        want = ref(X, Z, b, m)
    assert want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    num = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[num]), np.signbit(want[num]))
    # the same program over strided and mixed operands converts them first:
    # the same values
    Xs = np.zeros((5, 4200), np.float32)[:, ::2]
    Xs[...] = X
    got2 = prog(X=Xs, Z=np.asfortranarray(Z), b=b, m=m)["Y"]
    np.testing.assert_array_equal(got2, want)


def test_f32_chain_with_a_reciprocal_and_mixed_calls():
    # found by random programs: a product whose first factor is a
    # reciprocal (x / (|b| + 1) as (|b| + 1)^-1 * x) reads its second
    # factor in a later call, as doubles next to a double block; the
    # reciprocal's call must not count it among its own operands (the
    # emitter converted it twice and stopped with an internal error)
    src = ('in f32 X[n,k], Y[n,k], b[k];\nout f32 Z[n], W[n,k];\n'
           'Z("i") = X("i,j") * ((max(where(b("j") > 1, 1.5, b("j")), Y("i,j")) * X("i,j")) / (abs(b("j")) + 1));\n'
           'W("i,j") = Y("i,j") / (abs(b("j")) + 1) * X("i,j");\n')
    rng = np.random.default_rng(1843)
    X, Y = rng.standard_normal((7, 2100)), rng.standard_normal((7, 2100))
    b = rng.standard_normal(2100)
    X, Y, b = X.astype(np.float32), Y.astype(np.float32), b.astype(np.float32)
    out = tx.compile(src)(X=X, Y=Y, b=b)
    X, Y, b = X.astype(np.float64), Y.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(out["Z"], (X * (np.maximum(np.where(b > 1, 1.5, b), Y) * X) / (abs(b) + 1)).sum(1),
                               rtol=1e-5)
    np.testing.assert_allclose(out["W"], Y / (abs(b) + 1) * X, rtol=1e-6)


@pytest.mark.parametrize("expr,ref", [
    ('(X("i,j") - mu("i"))^2 / k', lambda X, Z: ((X - X.mean(1)[:, None]) ** 2).mean(1)),
    ('(X("i,j") - Z("i,j"))^2', lambda X, Z: ((X - Z) ** 2).sum(1)),
    ('(X("i,j") * 2 + 1)^2 / 3', lambda X, Z: ((X * 2 + 1) ** 2 / 3).sum(1)),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_of_squares(expr, ref, dtype):
    # a sum of squares of a sum of two terms (a variance, a mean square
    # error), each divided by a number or not, folds in one pass
    # (tx_p_red_sq_aff; f32 tensors: tx_p_red_sq_aff_f32, the sum and its
    # square rounded to float, then divided and added in double,
    # check_prims compares the bits): numpy's values; a NaN or an infinity
    # in a row gives numpy's NaN or infinity
    t = "f32 " if dtype == np.float32 else ""
    src = ('in %sX[n,k], Z[n,k];\nout %sv[n];\nlet mu("i") = X("i,j") / k;\nv("i") = %s;\n' % (t, t, expr))
    rng = np.random.default_rng(14)
    X = rng.standard_normal((6, 3001)).astype(dtype)
    Z = rng.standard_normal((6, 3001)).astype(dtype)
    X[1, 17] = np.nan
    X[2, 29] = np.inf
    prog = tx.compile(src)
    assert _calls(prog, "tx_p_red_sq_aff")
    with np.errstate(all="ignore"):
        got = prog(X=X, Z=Z)["v"]
        want = ref(X.astype(np.float64), Z.astype(np.float64))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-13 if dtype == np.float64 else 1e-6)


def test_tensor_named_out():
    # LANGUAGE.md 2 allows a tensor called out: prog(out=array) binds it
    # (out= is otherwise the dict of result arrays), for an in tensor and
    # for an out tensor written in place; an array given to out= of a
    # program without such a tensor is a TypeError that says what out= takes
    p = tx.compile('in out[n]; out y[n]; y("i") = 2 * out("i");')
    np.testing.assert_array_equal(p(out=np.arange(3.0))["y"], [0, 2, 4])
    q = tx.compile('in a[n]; out out[n]; out("i") = 2 * a("i");')
    o = np.zeros(3)
    assert q(a=np.arange(3.0), out=o)["out"] is o
    np.testing.assert_array_equal(o, [0, 2, 4])
    r = tx.compile('in a[n]; out y[n]; y("i") = 2 * a("i");')
    with pytest.raises(TypeError, match="dict of arrays by tensor name"):
        r(a=np.arange(3.0), out=np.zeros(3))


def test_three_label_delta_is_not_materialised():
    # a delta in a product is never a tensor handed to BLAS: for
    # delta("i,j,k") with n = 400 that tensor took 512 MB for 3 KB of
    # input; a trace's, n^2. Summed against, it is now no value at all:
    # the other factors are read on the diagonal (pass_delta.c)
    p = tx.compile('in x[n], A[n,n]; out s, d[n], t; s = x("i") * x("j") * x("k") * delta("i,j,k");\n'
                   'd("i") = x("j") * x("k") * delta("i,j,k");\nt = A("i,j") * delta("i,j");\n')
    x = np.random.default_rng(3).standard_normal(60)
    A = np.random.default_rng(4).standard_normal((60, 60))
    r = p(x=x, A=A)
    np.testing.assert_allclose(r["t"], np.trace(A), rtol=1e-12)
    np.testing.assert_allclose(r["s"], (x ** 3).sum(), rtol=1e-12)
    np.testing.assert_allclose(r["d"], x ** 2, rtol=1e-12)
    deltas = [line for line in str(p.graph()).splitlines() if "map delta" in line]
    assert not deltas, deltas


@pytest.mark.parametrize("dtype,prim", [(np.float32, "tx_pf_copy_rows"), (np.float64, "tx_p_copy_rows_f64")])
def test_permute_keeping_rows_copies_rows(dtype, prim):
    # attention's heads, b,s,h,d -> b,h,s,d: the rows of d stay rows, one
    # call copies the rows of s under each (b, h) (emit_blocks.c
    # emit_copy_rows), with the sizes bound (f64 rows of known length 24
    # do not take the flat blocks of short rows); and a slice of rows
    t = "f32" if dtype == np.float32 else "f64"
    prog = tx.compile('in %s X[b,s,h,d], A[n,m]; out %s Y[b,h,s,d], C[4,7];\n'
                      'Y("b,h,s,d") = X("b,s,h,d");\nC("i,j") = slice(A("i,j"), [1, 2], [5, 9]);\n' % (t, t))
    rng = np.random.default_rng(8)
    X = rng.standard_normal((3, 70, 5, 24)).astype(dtype)
    A = rng.standard_normal((9, 12)).astype(dtype)
    r = prog(X=X, A=A)
    np.testing.assert_array_equal(r["Y"], X.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(r["C"], A[1:5, 2:9])
    assert _calls(prog, prim)
