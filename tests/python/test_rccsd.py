"""The CCSD port (bench/rccsd.tx) through the package against PySCF's
update_amps written in numpy (bench/rccsd.py)."""
import os
import sys

import numpy as np

import tensorexpr as tx

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import rccsd  # noqa: E402


def test_rccsd_two_runs_match_numpy():
    """Two runs of one program with different amplitudes: the second reuses
    the first's compiled code and memory and must not see its values."""
    prog = tx.load(os.path.join(BENCH, "rccsd.tx"))
    for seed in (1, 2):
        d = rccsd.inputs(4, 10, rccsd.rng_rand(seed))
        want = rccsd.reference(d)
        got = prog(**{k: d[k] for k in rccsd.INPUTS})
        for name, w in zip(rccsd.OUTPUTS, want):
            assert got[name].shape == w.shape
            assert rccsd.max_rel(got[name], w) <= 1e-12, (seed, name)


def test_derived_extent_is_not_a_constant():
    """in F[o+v, 3]: mode 0 is checked at binding time, not against 0."""
    prog = tx.compile('dim o, v;\nin F[o+v, 3], w[v];\nout d[o];\nd("i") = slice(F("i,j"), [0,0], [o,3]) + w("a");\n')
    assert prog.tensors["F"].dims == (-1, 3)
    F, w = np.arange(15.0).reshape(5, 3), np.arange(3.0)
    assert np.allclose(prog(F=F, w=w, o=2)["d"], F[:2].sum(1) + w.sum())


def test_rccsd_without_huge_pages():
    """huge_pages=False (TX_OPTION_HUGE_PAGES 0): the same numbers."""
    prog = tx.load(os.path.join(BENCH, "rccsd.tx"), huge_pages=False)
    d = rccsd.inputs(4, 10, rccsd.rng_rand(3))
    want = rccsd.reference(d)
    got = prog(**{k: d[k] for k in rccsd.INPUTS})
    for name, w in zip(rccsd.OUTPUTS, want):
        assert rccsd.max_rel(got[name], w) <= 1e-12, name
