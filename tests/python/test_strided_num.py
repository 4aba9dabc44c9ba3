"""Every numerical test program (tests/num/*.tx, the cases tests/run_num.py
runs through `txc run`) through the Python package with its inputs, inout
and out arrays in strided layouts (Fortran order, every mode reversed,
the first and last modes stepped): the JIT code reads and writes them in place, or stages
what a BLAS or LAPACK call cannot read, and must give numpy's expectations."""
import os
import sys

import numpy as np
import pytest

import tensorexpr as tx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run_num  # noqa: E402

LAYOUTS = ["F", "reversed", "stepped"]


def lay_out(a, layout):
    """A copy of A with the same values in LAYOUT (a 0-d array stays as it is)."""
    if a.ndim == 0:
        return a.copy()
    if layout == "F":
        return np.asfortranarray(a.copy())
    if layout == "reversed":
        r = np.empty_like(a)[tuple(slice(None, None, -1) for _ in a.shape)]
    else:  # the first and last modes stepped (every mode would not fit a 16-mode array)
        step = [m in (0, a.ndim - 1) for m in range(a.ndim)]
        r = np.empty(tuple(2 * n + 1 if s else n for n, s in zip(a.shape, step)), a.dtype)
        r = r[tuple(slice(1, None, 2) if s else slice(None) for s in step)]
    r[...] = a
    return r


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("path", run_num.default_files(), ids=os.path.basename)
def test_num_case_strided(path, layout):
    case = run_num.Case(path)
    prep = run_num.Prepared(case)
    p = tx.load(path)
    args = {name: lay_out(a, layout) for name, a in prep.inputs.items()}
    args.update(prep.masks)
    outs = {}
    for d in case.io:
        if d.kind == "out":
            outs[d.name] = lay_out(np.zeros(prep.shape(d), d.np_dtype), layout)
    got = p(args, out=outs, **dict(prep.dim_args))
    for name, a in outs.items():
        assert got[name] is a
    for d in case.io:
        if d.kind == "inout":
            assert got[d.name] is args[d.name]  # updated in place
    why = run_num.check_outputs(case, prep, got, label="%s: " % layout)
    assert why is None, why
