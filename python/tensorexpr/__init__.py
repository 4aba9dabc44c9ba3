"""tensorexpr — einsum-style tensor expressions compiled to C, for numpy users.

    import tensorexpr as tx
    C = tx.einsum("ij,jk->ik", A, B)      # numpy.einsum's signature and results
    prog = tx.compile(source)             # or tx.load("ccsd.tx"); CompileError with line, column
    res = prog(A=A, B=B)                  # {"C": array}: outputs by name (always a dict)
    prog(A=A, B=B, out={"C": C})          # or written into given arrays
    prog.c_source(); prog.graph()         # the standalone C; the graph (SVG in Jupyter)

A thin ctypes client of libtensorexpr (see tensorexpr(3), tx(5)). The GIL is
released while a program runs (ctypes.CDLL releases it around every call);
one Program may be called from several threads (calls to one Program are
serialised by its lock; different Programs run at once).
"""
from ._lib import HAVE_BIND_ARRAY, LIBRARY_PATH
from ._core import (BindError, CompileError, DTypeError, Graph, Program, RunError, TensorExprError, compile,
                    load, sparse_map_of)
from ._einsum import cache_clear, einsum, einsum_source

__version__ = "0.1.0"
__all__ = ["einsum", "compile", "load", "Program", "Graph", "CompileError", "RunError", "BindError",
           "DTypeError", "TensorExprError", "HAVE_BIND_ARRAY", "LIBRARY_PATH", "einsum_source", "cache_clear",
           "sparse_map_of"]
