#!/usr/bin/python3
# %% [markdown]
# # tensorexpr from Python — a notebook-style tour
#
# Run it from a checkout after `make all`:
#
#     PYTHONPATH=python /usr/bin/python3 examples/python_quickstart.py
#
# or, after `make install`, with plain `/usr/bin/python3`. Each `# %%` cell
# can be pasted into Jupyter (where `prog.graph()` draws itself as SVG).

# %%
import threading

import numpy as np

import tensorexpr as tx

rng = np.random.default_rng(0)
A = rng.standard_normal((300, 200))
B = rng.standard_normal((200, 100))

# %% [markdown]
# ## einsum: numpy.einsum's signature and results
# The first call compiles a kernel for these subscripts, shapes and dtypes;
# later calls with the same shapes reuse it.

# %%
C = tx.einsum("ij,jk->ik", A, B)
print("einsum matmul, max |tx - numpy|:", np.abs(C - A @ B).max())
print("trace:", tx.einsum("ii->", A[:100, :100]), "=", np.trace(A[:100, :100]))
X = rng.standard_normal((8, 5, 6)).astype(np.float32)
print("batched, ellipsis, float32:", tx.einsum("...ij,...kj->...ik", X, X).shape,
      tx.einsum("...ij,...kj->...ik", X, X).dtype)
print("the .tx program behind 'ij,jk->ik':")
print(tx.einsum_source("ij,jk->ik", A, B))

# %% [markdown]
# ## Any strides, read in place
# Transposes, Fortran-ordered arrays, slices with steps, reversed and
# broadcast modes are handed to the compiled code as they lie: it is
# specialised on their strides (and BLAS given its leading dimensions and
# transposition), so nothing is copied. One operand with nothing summed
# gives a view, as numpy's einsum does. A repeated call with the same
# shapes, strides and dtypes costs one library call.

# %%
F = np.asfortranarray(A)
print("Fortran A @ B:", np.allclose(tx.einsum("ij,jk->ik", F, B), A @ B))
print("A.T (a view) used as it lies:", np.allclose(tx.einsum("ji,jk->ik", A.T, B), A @ B))
print("every other row, reversed columns:", np.allclose(tx.einsum("ij->i", A[::2, ::-1]), A[::2].sum(1)))
print("broadcast row:", np.allclose(tx.einsum("ij,jk->ik", np.broadcast_to(B[0], (50, 100)), B[:100].T),
                                    np.broadcast_to(B[0], (50, 100)) @ B[:100].T))
print("'ij->ji' is a view of A:", np.shares_memory(tx.einsum("ij->ji", A), A))
W = np.zeros((100, 300)).T                # write the product into a transposed array
tx.einsum("ij,jk->ik", A, B[:, :100], out=W)
print("out= strided:", np.allclose(W, A @ B[:, :100]))

# %%
import timeit  # noqa: E402

x, y = np.ones((2, 2)), np.ones((2, 2))
n = 20000
t_tx = min(timeit.repeat(lambda: tx.einsum("ij,jk->ik", x, y), number=n, repeat=5)) / n
t_np = min(timeit.repeat(lambda: np.einsum("ij,jk->ik", x, y), number=n, repeat=5)) / n
print("a repeated 2x2 einsum: tensorexpr %.1f us, numpy %.1f us" % (t_tx * 1e6, t_np * 1e6))

# %% [markdown]
# ## Programs: compile (or load) a .tx source, call it with arrays

# %%
prog = tx.compile("""
in  A[n,k], B[k,m], b[m];
out C[n,m], s;
C("i,j") = A("i,k") * B("k,j") + b("j");
s = C("i,j") * C("i,j");
""", name="affine.tx")
b = rng.standard_normal(100)
res = prog(A=A, B=B, b=b)                 # a dict of every output, by name
print(sorted(res), res["C"].shape, float(res["s"]))
ref = A @ B + b
print("max |C - numpy|:", np.abs(res["C"] - ref).max(), " s vs numpy:", float(res["s"]), (ref ** 2).sum())

C_out = np.empty((300, 100))
prog(A=A, B=B, b=b, out={"C": C_out})      # written into a given array
print("out= wrote into C_out:", np.allclose(C_out, ref))

# %% [markdown]
# ## Errors are exceptions with the location

# %%
try:
    tx.compile('in A[n];\nout B[n];\nB("i") = A("i") * Q("i");\n', name="typo.tx")
except tx.CompileError as e:
    print("CompileError at %s:%d:%d: %s" % (e.file, e.line, e.column, e.msg))
try:
    prog(A=A, B=B[:150], b=b)
except ValueError as e:
    print("ValueError:", e)

# %% [markdown]
# ## The generated C and the graph

# %%
print(prog.c_source().splitlines()[0])
g = prog.graph()        # text; in Jupyter, g renders as SVG through Graphviz's dot
print(g)

# %% [markdown]
# ## Threads: the GIL is released while a program runs; one Program may be
# called from several threads (calls to it take turns; separate programs and
# einsum kernels of different shapes run at the same time).

# %%
results = [None] * 4


def work(i):
    results[i] = tx.einsum("ij,jk->ik", A, B)


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("4 threads agree:", all(np.array_equal(r, results[0]) for r in results))
