#!/usr/bin/python3
"""txc run --mpi under mpirun with 1, 2 and 4 ranks, against numpy and
against the single-process `txc run` of the same inputs.

    /usr/bin/python3 tests/run_mpi.py [--txc build/txc] [--ranks 1,2,4] [FILES...]

FILES: names of tests/num files, or graph, chain, chain_c128, cross, stationary,
stationary_whole, warnings, chain_grid, chain_c128_grid,
grid_trans, grid_trans_rows, grid_f32, f32_rows, la_z, la_c, la_s, la_fed, memory, ccd, lead,
pieces, failures, embed, time (default: all).
`txc graph --target mpi` is checked against hand-derived volumes first, with
or without MPI.

The test files are tests/num/*.tx (their setup and expect directives, see
run_num.py): contractions, a CCSD-like program, elementwise work,
reductions, scans and every matrix function. The distributed paths are
forced at these small sizes (TX_MPI_GEMM_MIN=0, TX_MPI_LA_MIN=0, and
TX_MPI_DIST_MIN=0: every intermediate that may be distributed by rows is)
and traced (TX_MPI_TRACE): with more than one rank, a program with a GEMM
or a matrix function must show the PBLAS/ScaLAPACK call or the GEMM by
rows it made, and the block-cyclic pieces the ranks trace must add up to
the whole matrices (each entry on one rank); a 512^3 GEMM shows each rank
holding 1/P of pdgemm's operands and result. Distributed storage:
tests/mpi/chain.tx (A·B, an elementwise step, ·C, a sum: each on the
ranks' rows, traced), tests/mpi/chain_c128.tx (the same in c128, and a
transposed read), tests/mpi/cross.tx (reads across rows: each rank
receives only its part of the mode read through, traced),
tests/mpi/stationary.tx (a GEMM with its distributed B stationary) and tests/mpi/la_fed.tx (every matrix function fed
by distributed intermediates) must show distributed tensors with each
rank holding about 1/P of each; at the default threshold a 480x480
intermediate is held exactly 1/P per rank (memory). Also: the example
examples/ccd.tx with seeded random inputs, equal to the single process,
with its intermediates distributed and with every tensor replicated; a
failure on the ranks (a matrix that is not positive definite, also fed
by a distributed intermediate) reported by every rank, exit status 3, no
output file; a program with a sparse map refused; and the standalone
`txc --target mpi` C called from a C program of our own
(tests/mpi/embed_mpi.c).

Without mpirun/mpicc it prints why and counts nothing (skipped).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run_num  # noqa: E402

TIMEOUT = 120

# (file, must it show a distributed call with more than one rank)
CASES = [
    ('matmul.tx', True), ('four_index.tx', True), ('batched_matmul.tx', True), ('contract3.tx', True),
    ('chain4.tx', True), ('contract_multi.tx', True), ('f32_basic.tx', True), ('ccsd_denominators.tx', False),
    ('fn_softmax.tx', False), ('fn_reduce_sum.tx', False), ('fn_cumsum.tx', False), ('broadcast_add.tx', False),
    ('la_cholesky.tx', True), ('la_inv.tx', True), ('la_solve_mat.tx', True), ('la_solve_vec.tx', True),
    ('la_eigh.tx', True), ('la_eigh_gen.tx', False), ('la_qr_tall.tx', True), ('la_qr_wide.tx', True),
    ('la_svd_tall.tx', True), ('la_svd_wide.tx', True), ('la_pow.tx', False), ('la_lstsq.tx', True),
    ('complex_contract.tx', True), ('complex_elementwise.tx', False), ('complex_linalg.tx', True),
    ('accumulate_inout.tx', False),  # inout tensors: scattered by rows, then gathered for writing
    # f32 and c64 tensors by rows too (GEMMs by rows through sgemm/cgemm, or on the grid through
    # psgemm/pcgemm: True where a file has a GEMM; the rest on rows or gathered)
    ('f32_blocks.tx', False), ('f32_reduce.tx', False), ('fn_f32_softmax.tx', False), ('la_cholesky_f32.tx', True),
    ('complex64_linalg.tx', True), ('complex_mixed_blas.tx', True), ('complex_reduce.tx', False),
    ('complex_updates.tx', True),
    # whole rows, lines and tiles of rows handed to one primitive call per range (tx_p_red_rows,
    # tx_p_redf_rows, tx_p_max_rows, tx_p_scan, reads_transposed): on each rank's rows
    ('reduce_rows_prim.tx', False), ('reduce_rows_f32.tx', False), ('reduce_extremum_rows.tx', False),
    ('fn_scan_nan_long.tx', False), ('elementwise_transposed.tx', False), ('fn_short_rows.tx', False),
    # scalars of several labels as rows, then the rows' results (pass_split.c): a reduction of a
    # vector held by rows on each rank
    ('reduce_scalar_split.tx', False), ('reduce_scalar_split_f32.tx', False),
    # scans into the stored tensor (pass_fuse.c): not on ranks, which keep the buffer and the store
    ('scan_into_store.tx', False),
    # transposed operands copied into panels of eight rows (emit_blocks.c), on each rank's rows
    ('transposed_panels.tx', False),
]


def mpi_env(cache):
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1', OPENBLAS_NUM_THREADS='1',
               OMPI_MCA_rmaps_base_oversubscribe='1', TX_CACHE_DIR=cache, TX_MPI_GEMM_MIN='0',
               TX_MPI_LA_MIN='0', TX_MPI_DIST_MIN='0', TX_MPI_TRACE='1', TX_NO_PROGRESS='1')
    if os.environ.get('SAN') == '1':
        # under make check SANITIZE=1: OpenMPI's plugins leak from modules it
        # has unloaded by exit (LeakSanitizer names them "<unknown module>", so
        # no suppression can match them); the leak check of our own code is
        # the rest of the suite's
        env['ASAN_OPTIONS'] = 'detect_leaks=0'
    return env


def mpirun(np_, args):
    return ['mpirun', '--oversubscribe', '--allow-run-as-root', '-np', str(np_)] + args


def run(cmd, env):
    """Exit code, stdout and stderr of CMD. Under mpirun each rank's output
    is taken from its own files (--output-filename ...:nocopy), in rank
    order, after mpirun's own messages: mpirun forwarding the ranks' pipes
    to one stream can split a line of one rank and put another rank's
    output in the middle (a trace line lost to the checks below, seen
    under load)."""
    with tempfile.TemporaryDirectory() as od:
        if cmd[0] == 'mpirun':
            cmd = cmd[:1] + ['--output-filename', od + ':nocopy'] + cmd[1:]
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            return 124, '', 'timeout after %d s' % TIMEOUT
        out, err = r.stdout.decode('utf-8', 'replace'), r.stderr.decode('utf-8', 'replace')
        ranks = sorted(glob.glob(os.path.join(od, '*', 'rank.*')), key=lambda d: int(d.rsplit('.', 1)[1]))
        for d in ranks:
            for name in ('stdout', 'stderr'):
                f = os.path.join(d, name)
                if os.path.exists(f):
                    with open(f, 'rb') as fh:
                        text = fh.read().decode('utf-8', 'replace')
                    if name == 'stdout':
                        out += text
                    else:
                        err += text
    return r.returncode, out, err


def case_args(case, prep, td, tag):
    """txc run's arguments for CASE with its inputs saved in TD; the output files."""
    args, outs = [case.path], {}
    for i, d in enumerate(case.io):
        fn = os.path.join(td, '%s_t%d.npy' % (tag, i))
        if d.kind in ('in', 'inout'):
            np.save(fn, prep.inputs[d.name])
        if d.kind in ('out', 'inout'):
            outs[d.name] = fn
        args.append('%s=%s' % (d.name, fn))
    for name, v in prep.dim_args:
        args += ['-D', '%s=%d' % (name, v)]
    return args, outs


def load(outs):
    return {k: np.load(fn) for k, fn in outs.items()}


def same(a, b, tol):
    t = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    if np.iscomplexobj(a) != np.iscomplexobj(b):
        return 'complex %s, single process complex %s' % (np.iscomplexobj(a), np.iscomplexobj(b))
    a, b = np.asarray(a, dtype=t), np.asarray(b, dtype=t)
    if a.shape != b.shape:
        return 'shape %s, single process %s' % (a.shape, b.shape)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    return None if err <= tol * scale else 'max difference %.3g from the single process (tol %.3g)' % (err, tol)


PIECES = re.compile(r'^tx_mpi: rank (\d+) of (\d+) holds (\d+) of (\d+) bytes of (\w+)\'s matrices$', re.M)


def pieces_wrong(err, p):
    """What is wrong with the traced pieces of a run on P ranks (None if
    nothing): every distributed call is traced by all P ranks, and their
    pieces add up to the whole (each entry has exactly one owner)."""
    found = [tuple(int(x) for x in m.groups()[:4]) for m in PIECES.finditer(err)]
    if not found:
        return None
    if len(found) % p or any(q != p for _, q, _, _ in found):
        return 'pieces traced by %d lines, not a multiple of %d ranks' % (len(found), p)
    mine, whole = sum(f[2] for f in found), sum(f[3] for f in found)
    if mine * p != whole:
        return 'the ranks hold %d bytes of pieces, want %d (each entry once)' % (mine, whole // p)
    return None


DIST = re.compile(r'^tx_mpi: rank (\d+) of (\d+) holds (\d+) of (\d+) bytes of a distributed tensor '
                  r'\(rows (\d+)\.\.(\d+) of (\d+)(?:, over its first \d+ modes)?\)$', re.M)


def dist_wrong(err, p):
    """What is wrong with the distributed tensors traced by a run on P > 1
    ranks (None if nothing): there are some, every rank traces the same
    number, and each holds its block of rows of each: rank r the first-mode
    indices [r b, (r+1) b), b = ceil(n0 / P), as ScaLAPACK's block
    distribution has them."""
    found = [tuple(int(x) for x in m.groups()) for m in DIST.finditer(err)]
    if not found:
        return 'no distributed tensor was traced'
    per = [sum(1 for f in found if f[0] == r) for r in range(p)]
    if len(set(per)) != 1 or any(f[1] != p for f in found):
        return 'ranks traced %s distributed tensors, want the same on each of %d' % (per, p)
    for r, _, mine, whole, lo, hi, n0 in found:
        row, b = whole // n0, -(-n0 // p)
        if mine != (hi - lo) * row or (lo, hi) != (min(n0, r * b), min(n0, (r + 1) * b)):
            return 'rank %d holds %d of %d bytes (rows %d..%d of %d), want rows %d..%d (blocks of %d)' % (
                r, mine, whole, lo, hi, n0, min(n0, r * b), min(n0, (r + 1) * b), b)
    return None


CROSS = re.compile(r'^tx_mpi: rank (\d+) of (\d+) received (\d+) of (\d+) bytes of a distributed tensor read '
                   r'across its rows \(mode (\d+), part (\d+)\.\.(\d+) of (\d+)\)$', re.M)


def cross_wrong(err, p):
    """What is wrong with the reads across rows (tx_mpi_cross) traced by a
    run on P > 1 ranks (None if nothing): there are some, on every rank
    alike, and each rank received no more than its part of the mode it
    reads through (hi - lo of nr indices): about 1/P of the tensor, where
    gathering it whole would receive (P-1)/P."""
    found = [tuple(int(x) for x in m.groups()) for m in CROSS.finditer(err)]
    if not found:
        return 'no read across rows was traced'
    per = [sum(1 for f in found if f[0] == r) for r in range(p)]
    if len(set(per)) != 1 or any(f[1] != p for f in found):
        return 'ranks traced %s reads across rows, want the same on each of %d' % (per, p)
    for r, _, got, total, d, lo, hi, nr in found:
        if got * nr > total * (hi - lo) or (lo, hi) != (min(nr, r * -(-nr // p)), min(nr, (r + 1) * -(-nr // p))):
            return 'rank %d received %d of %d bytes for part %d..%d of %d of mode %d: more than its part' % (
                r, got, total, lo, hi, nr, d)
    return None


def check_case(txc, fname, must_trace, ranks, env, td, dist=False, must=()):
    """Failure lines for one test file at every rank count (DIST: it must
    show distributed tensors, each rank holding about 1/P of each; MUST:
    trace lines it must show on more than one rank)."""
    fails = []
    case = run_num.Case(fname if os.path.isabs(fname) else os.path.join(run_num.NUMDIR, fname))
    fname = os.path.basename(fname)
    prep = run_num.Prepared(case)
    args, outs = case_args(case, prep, td, 'single')
    rc, _, err = run([txc, 'run'] + args + ['-q'], env)
    if rc != 0:
        return ['%s: single process: exit %d: %s' % (fname, rc, run_num.one_line(err))]
    single = load(outs)
    for p in ranks:
        args, outs = case_args(case, prep, td, 'np%d' % p)
        cmd = mpirun(p, [txc, 'run', '--mpi', '-q'] + args)
        rc, _, err = run(cmd, env)
        where = '%s -np %d' % (fname, p)
        if rc != 0:
            fails.append('%s: exit %d: %s' % (where, rc, run_num.one_line(err)))
            continue
        if must_trace and p > 1 and 'tx_mpi: p' not in err and 'tx_mpi: rows-gemm' not in err:
            fails.append('%s: no PBLAS/ScaLAPACK call was traced: %s' % (where, run_num.one_line(err)))
        w = pieces_wrong(err, p)
        if w:
            fails.append('%s: %s' % (where, w))
        w = dist_wrong(err, p) if dist and p > 1 else None
        if w:
            fails.append('%s: %s' % (where, w))
        w = cross_wrong(err, p) if 'read across its rows' in must and p > 1 else None
        if w:
            fails.append('%s: %s' % (where, w))
        for m in must if p > 1 else ():
            if m not in err:
                fails.append('%s: no %r traced' % (where, m))
        got = load(outs)
        why = run_num.check_outputs(case, prep, got)
        if why:
            fails.append('%s: vs numpy: %s' % (where, why))
        for k in got:
            w = same(got[k], single[k], max(case.tol, 1e-12))
            if w:
                fails.append('%s: %s: %s' % (where, k, w))
    return fails


def single_run(txc, args, names, td, tag, env):
    """The outputs NAMES of a single-process `txc run ARGS` (files in TD
    named after TAG): (a dict of arrays, None), or (None, what failed)."""
    outs = {n: os.path.join(td, '%s_%s.npy' % (tag, n)) for n in names}
    rc, _, err = run([txc, 'run'] + args + ['%s=%s' % (n, f) for n, f in outs.items()], env)
    if rc != 0:
        return None, '%s: single process: exit %d: %s' % (tag, rc, run_num.one_line(err))
    return load(outs), None


def differences(where, got, single, tol=1e-11):
    """What differs between the outputs GOT of a run under mpirun (WHERE)
    and the single process's SINGLE (by name)."""
    return ['%s: %s: %s' % (where, n, w) for n in single for w in [same(got[n], single[n], tol)] if w]


def check_ccd(txc, ranks, env, td):
    """examples/ccd.tx, seeded random inputs: every output equals the single process's."""
    names = ['Tn', 'R', 'E']
    base = [os.path.join(ROOT, 'examples', 'ccd.tx'), '--random', '-D', 'o=6', '-D', 'v=12']
    single, why = single_run(txc, base, names, td, 'ccd.tx', env)
    if why:
        return [why]
    fails = []
    # every rank count with the intermediates distributed (TX_MPI_DIST_MIN=0); then every tensor
    # replicated, with pdgemm and with the other plan (slabs of rows) on 2 and 3 ranks; and the
    # intermediates distributed with every GEMM on the grid (pdgemr2d between rows and pieces)
    for p, plan in ([(p, 'dist') for p in ranks] + [(p, 'pdgemm') for p in ranks] + [(2, 'rows'), (3, 'rows')] +
                    [(p, 'dist-grid') for p in ranks + [3] if p > 1]):
        o = {n: os.path.join(td, 'ccd%d_%s_%s.npy' % (p, plan, n)) for n in names}
        e = dict(env, TX_MPI_GEMM=plan) if not plan.startswith('dist') else dict(env)
        if plan == 'dist-grid':
            e['TX_MPI_GEMM'] = 'pdgemm'
        if not plan.startswith('dist'):
            e['TX_MPI_DIST_MIN'] = str(1 << 60)
        rc, _, err = run(mpirun(p, [txc, 'run', '--mpi'] + base + ['%s=%s' % (n, f) for n, f in o.items()]), e)
        where = 'ccd.tx -np %d (%s)' % (p, plan)
        if rc != 0:
            fails.append('%s: exit %d: %s' % (where, rc, run_num.one_line(err)))
            continue
        if plan == 'dist-grid':
            w = dist_wrong(err, p) or (None if 'pdgemm with distributed operands' in err and
                                       'from its rows by pdgemr2d' in err and 'back to its rows by pdgemr2d' in err
                                       else 'no pdgemm with operands and results moved by pdgemr2d')
            if w:
                fails.append('%s: %s' % (where, w))
        elif p > 1 and plan == 'dist':
            w = dist_wrong(err, p) or (None if 'B by slabs in turn' in err else 'no GEMM by distributed rows '
                                       'with B broadcast by slabs (the ring term)')
            if w:
                fails.append('%s: %s' % (where, w))
        elif p > 1 and ('tx_mpi: %s ' % plan not in err or 'distributed tensor' in err):
            fails.append('%s: no %s traced, or a tensor distributed: %s' % (where, plan, run_num.one_line(err)))
        fails += differences(where, load(o), single)
    return fails


FETCH = re.compile(r'^tx_mpi: rank (\d+) of (\d+) received (\d+) of (\d+) bytes of a distributed tensor fetching the '
                   r'elements its reads touch \((\d+) runs\)$', re.M)
LEAD = re.compile(r'^tx_mpi: rank \d+ of \d+ holds \d+ of \d+ bytes of a distributed tensor \(rows \d+\.\.\d+ of \d+, '
                  r'over its first (\d+) modes\)$', re.M)


def check_lead(txc, ranks, env, td):
    """examples/ccd.tx with o = 3 occupied indices, fewer than four per rank:
    the tensors are held by rows of their first two or three modes together
    (ij pairs, ija triples; no more than a GEMM's row labels), the inputs
    scattered so from .npy files, the loop nests run over those rows, and a
    read of another rank's rows (Z("j,i,a,b") in the nest over ij) fetches
    only the elements it touches. Every output equals the single process's, by
    rows and with the GEMMs on the grid (pdgemr2d from and to such rows)."""
    rng = np.random.default_rng(7)
    o, v = 3, 7
    shapes = {'eo': (o,), 'ev': (v,), 'Voooo': (o, o, o, o), 'Voovv': (o, o, v, v), 'Vovvo': (o, v, v, o),
              'Vvvvv': (v, v, v, v), 'T': (o, o, v, v)}
    args = [os.path.join(ROOT, 'examples', 'ccd.tx')]
    for n, sh in shapes.items():
        fn = os.path.join(td, 'lead_%s.npy' % n)
        a = rng.random(sh) - 0.5
        if n == 'eo':
            a -= 2  # denominators away from zero
        np.save(fn, a)
        args.append('%s=%s' % (n, fn))
    names = ['Tn', 'R', 'E']
    single, why = single_run(txc, args, names, td, 'lead', env)
    if why:
        return [why]
    fails = []
    for p, plan in [(p, 'rows') for p in sorted(set(ranks + [3])) if p > 1] + [(4, 'pdgemm')]:
        o_ = {n: os.path.join(td, 'lead%d_%s_%s.npy' % (p, plan, n)) for n in names}
        e = dict(env, TX_MPI_GEMM=plan)
        rc, _, err = run(mpirun(p, [txc, 'run', '--mpi'] + args + ['%s=%s' % (n, f) for n, f in o_.items()]), e)
        where = 'lead -np %d (%s)' % (p, plan)
        if rc != 0:
            fails.append('%s: exit %d: %s' % (where, rc, run_num.one_line(err)))
            continue
        spans = set(int(g) for g in LEAD.findall(err))
        fetched = [tuple(int(x) for x in m.groups()) for m in FETCH.finditer(err)]
        w = dist_wrong(err, p)
        if not w and 2 not in spans:
            w = 'no tensor held by rows of its first 2 modes'
        if not w and p >= 3 and 3 not in spans:
            w = 'no tensor held by rows of its first 3 modes'
        if not w and "a loop nest on each rank's rows (9 rows over its first 2 modes)" not in err:
            w = 'no loop nest over the ij rows'
        if not w and (not fetched or any(got >= total for _, _, got, total, _ in fetched)):
            w = 'no fetch of the elements a read touches, or one that received the whole tensor: %s' % fetched
        if w:
            fails.append('%s: %s' % (where, w))
        fails += differences(where, load(o_), single)
    return fails


def check_pieces(txc, ranks, env):
    """A 512^3 GEMM (blocks of 64 divide it evenly) on the grid
    (TX_MPI_GEMM=pdgemm: its output C is held by rows and comes back so by
    pdgemr2d): on P > 1 ranks every rank traces its pieces of pdgemm's
    three matrices, and each holds 1/P of them (within 5 %)."""
    fails = []
    mm = os.path.join(ROOT, 'examples', 'matmul.tx')
    for p in [q for q in ranks if q > 1]:
        rc, _, err = run(mpirun(p, [txc, 'run', '--mpi', '--random', '-q', mm, '-D', 'n=512', '-D', 'k=512',
                                    '-D', 'm=512']), dict(env, TX_MPI_GEMM='pdgemm'))
        found = [tuple(int(x) for x in m.groups()[:4]) for m in PIECES.finditer(err)]
        if rc != 0 or sorted(f[0] for f in found) != list(range(p)):
            fails.append('pieces -np %d: exit %d, traced by ranks %s: %s'
                         % (p, rc, sorted(f[0] for f in found), run_num.one_line(err)))
            continue
        for r, _, mine, whole in found:
            if whole != 3 * 512 * 512 * 8 or abs(mine - whole / p) > 0.05 * whole / p:
                fails.append('pieces -np %d: rank %d holds %d of %d bytes, want about 1/%d' % (p, r, mine, whole, p))
    return fails


def check_memory(txc, ranks, env, td):
    """Large intermediates (T = A·B and tanh(T) transposed, 480 x 480 f64,
    1.8 MB, above the default TX_MPI_DIST_MIN of 1 MiB) at the default
    threshold: on P > 1 ranks each rank holds 1/P of each (the rows of 480/P
    first-mode indices), and the result equals the single process's; with
    the inputs from files, A and B are held so too."""
    src = os.path.join(td, 'big.tx')
    with open(src, 'w') as f:
        f.write('in A[n,n], B[n,n];\ntmp T[n,n];\nout D[n,n];\nT("i,j") = A("i,k") * B("k,j");\n'
                'D("i,j") = T("i,k") * tanh(T("j,k"));\n')
    e = dict(env)
    del e['TX_MPI_DIST_MIN']
    args = [src, '--random', '-D', 'n=480']
    one = os.path.join(td, 'big1.npy')
    rc, _, err = run([txc, 'run'] + args + ['D=' + one, '-q'], e)
    if rc != 0:
        return ['memory: single process: exit %d: %s' % (rc, run_num.one_line(err))]
    fails = []
    # the same inputs from files: rank 0 reads them and scatters their rows (two more distributed tensors)
    rng = np.random.default_rng(5)
    np.save(os.path.join(td, 'bigA.npy'), rng.random((480, 480)) - 0.5)
    np.save(os.path.join(td, 'bigB.npy'), rng.random((480, 480)) - 0.5)
    files = [src, '-D', 'n=480', 'A=' + os.path.join(td, 'bigA.npy'), 'B=' + os.path.join(td, 'bigB.npy')]
    onef = os.path.join(td, 'bigf1.npy')
    rc, _, err = run([txc, 'run'] + files + ['D=' + onef, '-q'], e)
    if rc != 0:
        return ['memory: single process, inputs from files: exit %d: %s' % (rc, run_num.one_line(err))]
    for p, inputs in [(q, i) for q in ranks if q > 1 for i in ('random', 'files')]:
        out = os.path.join(td, 'big%d%s.npy' % (p, inputs))
        rc, _, err = run(mpirun(p, [txc, 'run', '--mpi', '-q'] + (args if inputs == 'random' else files) +
                                ['D=' + out]), e)
        if rc != 0:
            fails.append('memory -np %d: exit %d: %s' % (p, rc, run_num.one_line(err)))
            continue
        found = [tuple(int(x) for x in m.groups()) for m in DIST.finditer(err)]
        per = [sum(1 for f in found if f[0] == r) for r in range(p)]
        if not found or len(set(per)) != 1:
            fails.append('memory -np %d: ranks traced %s distributed tensors, want the same on each' % (p, per))
        elif inputs == 'files' and per[0] != nrandom + 2:
            fails.append('memory -np %d: %d distributed tensors with the inputs from files, want %d (A and B '
                         'scattered by rows too)' % (p, per[0], nrandom + 2))
        if inputs == 'random':
            nrandom = per[0]
        for r, _, mine, whole, lo, hi, n0 in found:
            if whole != 480 * 480 * 8 or mine != whole // p or hi - lo != 480 // p:
                fails.append('memory -np %d: rank %d holds %d of %d bytes, want 1/%d' % (p, r, mine, whole, p))
        w = same(np.load(out), np.load(one if inputs == 'random' else onef), 1e-11)
        if w:
            fails.append('memory -np %d (%s inputs): %s' % (p, inputs, w))
    return fails


def check_failure(txc, env, td):
    """A matrix that is not positive definite: exit 3, said by every rank, no output file."""
    src = os.path.join(td, 'chol.tx')
    with open(src, 'w') as f:
        f.write('in A[n,n];\nout L[n,n], C[n,n];\nC("i,j") = A("i,k") * A("k,j");\nL("i,j") = cholesky(A("i,j"));\n')
    a = np.eye(6)
    a[4, 4] = -1.0
    np.save(os.path.join(td, 'bad.npy'), a)
    outl, outc = os.path.join(td, 'badL.npy'), os.path.join(td, 'badC.npy')
    rc, _, err = run(mpirun(2, [txc, 'run', '--mpi', src, 'A=' + os.path.join(td, 'bad.npy'), 'L=' + outl,
                                'C=' + outc]), env)
    fails = []
    if rc != 3:
        fails.append('not positive definite, -np 2: exit %d, want 3: %s' % (rc, run_num.one_line(err)))
    for r in (0, 1):
        if "rank %d: %s:4:12: cholesky of 'A': matrix is not positive definite (leading minor 5)" % (r, src) not in err:
            fails.append('not positive definite, -np 2: rank %d did not say so: %s' % (r, run_num.one_line(err)))
    if os.path.exists(outl) or os.path.exists(outc):
        fails.append('not positive definite, -np 2: an output file was written')
    # the same fed by a distributed intermediate (S = 2 A, held by rows): every rank says so, no output
    src2 = os.path.join(td, 'chol2.tx')
    with open(src2, 'w') as f:
        f.write('in A[n,n];\ntmp S[n,n];\nout L[n,n], C[n,n];\nS("i,j") = A("i,j") * 2;\n'
                'C("i,j") = S("i,k") * A("k,j");\nL("i,j") = cholesky(S("i,j"));\n')
    for p in (2, 4):
        rc, _, err = run(mpirun(p, [txc, 'run', '--mpi', src2, 'A=' + os.path.join(td, 'bad.npy'), 'L=' + outl,
                                    'C=' + outc]), env)
        if rc != 3 or 'distributed tensor' not in err:
            fails.append('not positive definite, distributed, -np %d: exit %d: %s' % (p, rc, run_num.one_line(err)))
        for r in range(p):
            if "rank %d: %s:6:12: cholesky of 'S': matrix is not positive definite (leading minor 5)" % (r, src2) not in err:
                fails.append('not positive definite, distributed, -np %d: rank %d did not say so' % (p, r))
        if os.path.exists(outl) or os.path.exists(outc):
            fails.append('not positive definite, distributed, -np %d: an output file was written' % p)
    # a NaN in rows another rank holds: the input A is scattered by rows and S = 2 A is distributed, so
    # the check runs on each rank's rows (the rank holding row 4 finds it, the others learn it); every
    # rank says so with the element's index (row-major, from 0, as one process says it), exit 3, no output
    a = 3 * np.eye(6) + 0.1
    a[4, 2] = np.nan
    np.save(os.path.join(td, 'nan.npy'), a)
    for p in (2, 3):
        rc, _, err = run(mpirun(p, [txc, 'run', '--mpi', src2, 'A=' + os.path.join(td, 'nan.npy'), 'L=' + outl,
                                    'C=' + outc]), env)
        if rc != 3 or 'distributed tensor' not in err:
            fails.append('NaN, distributed, -np %d: exit %d: %s' % (p, rc, run_num.one_line(err)))
        for r in range(p):
            if ("rank %d: %s:6:12: cholesky of 'S': an argument has a NaN or an infinity (element 26, counting row-major"
                    % (r, src2)) not in err:
                fails.append('NaN, distributed, -np %d: rank %d did not say so: %s' % (p, r, run_num.one_line(err)))
        if os.path.exists(outl) or os.path.exists(outc):
            fails.append('NaN, distributed, -np %d: an output file was written' % p)
    # an allocation failing on one rank only (TX_MPI_FAIL_ALLOC=R:K, the runtime's test hook): the input
    # A's memory (the first allocation: scattered by rows), the output L's (the second; C's is the third),
    # the program's own, a whole buffer (the fourth and fifth), and one held by rows (TX_MPI_DIST_MIN=64):
    # every rank says out of memory, exit 3, no output file (without the agreement the other rank waited
    # for ever)
    good = os.path.join(td, 'good.npy')
    np.save(good, 3 * np.eye(6) + 0.1)
    for what, extra, says in (
            ('input', {'TX_MPI_FAIL_ALLOC': '1:1'}, "rank %d: tensor 'A': out of memory"),
            ('output', {'TX_MPI_FAIL_ALLOC': '1:2'}, "rank %d: out of memory for tensor 'L'"),
            ('whole, 1st', {'TX_MPI_FAIL_ALLOC': '1:4'}, 'rank %d: ' + src2 + ': out of memory'),
            ('whole, 2nd', {'TX_MPI_FAIL_ALLOC': '1:5'}, 'rank %d: ' + src2 + ': out of memory'),
            ('by rows', {'TX_MPI_FAIL_ALLOC': '1:4', 'TX_MPI_DIST_MIN': '64'}, 'rank %d: ' + src2 + ': out of memory')):
        e2 = dict(env)
        e2.update(extra)
        rc, _, err = run(mpirun(2, [txc, 'run', '--mpi', src2, 'A=' + good, 'L=' + outl, 'C=' + outc]), e2)
        if rc != 3 or any(says % r not in err for r in (0, 1)):
            fails.append('allocation failing on rank 1 (%s): exit %d: %s' % (what, rc, run_num.one_line(err)))
        if os.path.exists(outl) or os.path.exists(outc):
            fails.append('allocation failing on rank 1 (%s): an output file was written' % what)
    # a rank-0-only failure (an unreadable input) stops every rank
    rc, _, err = run(mpirun(2, [txc, 'run', '--mpi', src, 'A=' + os.path.join(td, 'missing.npy'), 'L=' + outl,
                                'C=' + outc]), env)
    if rc != 3 or 'rank 1: stopped: rank 0 could not read the inputs' not in err:
        fails.append('missing input, -np 2: exit %d: %s' % (rc, run_num.one_line(err)))
    # sparse maps are refused
    sp = os.path.join(ROOT, 'examples', 'dlpno_pair.tx')
    rc, _, err = run(mpirun(1, [txc, 'run', '--mpi', '--random', '-q', sp, '-D', 'o=2', '-D', 'v=3']), env)
    if rc != 2 or 'does not run programs with sparse maps' not in err:
        fails.append('sparse map under --mpi: exit %d: %s' % (rc, run_num.one_line(err)))
    return fails


def check_warnings(txc, td):
    """The MPI target's C of tests/mpi/*.tx and examples/ccd.tx compiles
    with mpicc -Wall -Wextra -Werror (a const input passed to the runtime's
    gathers and redistributions once warned)."""
    fails = []
    srcs = sorted(os.path.join(HERE, 'mpi', f) for f in os.listdir(os.path.join(HERE, 'mpi')) if f.endswith('.tx'))
    for src in srcs + [os.path.join(ROOT, 'examples', 'ccd.tx')]:
        c, o = os.path.join(td, 'warn_mpi.c'), os.path.join(td, 'warn_mpi.o')
        rc, _, err = run([txc, src, '--target', 'mpi', '-o', c], None)
        if rc == 0:
            rc, _, err = run(['mpicc', '-O2', '-std=c99', '-Wall', '-Wextra', '-Werror', '-c', c, '-o', o], None)
        if rc != 0:
            fails.append('%s --target mpi: %s' % (os.path.basename(src), run_num.one_line(err)))
    return fails


def flagged_run(txc, p, flag, args, env, td):
    """txc run --mpi FLAG ARGS on P ranks, and the same without FLAG:
    (stderr of the run with FLAG or None if it failed, what is wrong or
    None). The output E of both must be the same."""
    out_t, out_u = os.path.join(td, 'flag_t.npy'), os.path.join(td, 'flag_u.npy')
    rc, _, err = run(mpirun(p, [txc, 'run', '--mpi', flag] + args + ['E=' + out_t]), env)
    rc2, _, err2 = run(mpirun(p, [txc, 'run', '--mpi'] + args + ['E=' + out_u]), env)
    if rc != 0 or rc2 != 0:
        return None, 'exit %d/%d: %s' % (rc, rc2, run_num.one_line(err + err2))
    if not np.array_equal(np.load(out_t), np.load(out_u)):
        return err, 'the output differs from the run without %s' % flag
    return err, None


def check_time(txc, ranks, env, td):
    """txc run --mpi --time: rank 0 alone prints the phases, the run on its
    slowest rank and one line per statement (examples/ccd.tx: 5), with the
    outputs those of a run without --time; the timed program's C (with
    FN_times) builds. --profile: each statement and each of its calls on
    the slowest rank, a GEMM's rate from its whole work."""
    fails = []
    ccd = os.path.join(ROOT, 'examples', 'ccd.tx')
    args = [ccd, '--random', '-D', 'o=5', '-D', 'v=12', '-q']
    for p in [q for q in ranks if q > 1]:
        err, why = flagged_run(txc, p, '--time', args, env, td)
        if why:
            fails.append('time -np %d: %s' % (p, why))
        if err is None:
            continue
        lines = [l for l in err.splitlines() if l.startswith('txc: ')]
        want = ['txc: compile (parse to graph)', 'txc: build for MPI (mpicc)', 'txc: read and share inputs',
                'txc: run, slowest of %d ranks' % p, 'txc: gather and write outputs']
        for w in want:
            if sum(1 for l in lines if l.startswith(w)) != 1:
                fails.append('time -np %d: want one line %r: %s' % (p, w, run_num.one_line(err)))
        stmts = [l for l in lines if l.startswith('txc:   statement ')]
        if len(stmts) != 5 or not all(re.search(r'statement %d \(line \d+\) +\d+\.\d{3} ms$' % (i + 1), l)
                                      for i, l in enumerate(stmts)):
            fails.append('time -np %d: want statements 1-5 once each: %s' % (p, run_num.one_line(err)))
    # --profile: each statement and each of its calls on the slowest rank; the first GEMM's rate times
    # its time is its work, 2 o^4 v^2 flops (W = Voooo + 1/2 Voovv(k,l,c,d) T(i,j,c,d): labels k l i j c d)
    o, v = 6, 20
    args = [ccd, '--random', '-D', 'o=%d' % o, '-D', 'v=%d' % v, '-q']
    for p in [q for q in ranks if q > 1]:
        err, why = flagged_run(txc, p, '--profile', args, env, td)
        if why:
            fails.append('profile -np %d: %s' % (p, why))
        if err is None:
            continue
        lines = [l for l in err.splitlines() if l.startswith('txc: ')]
        heads = [l for l in lines if l.startswith('txc: profile of one run on %d ranks: ' % p)]
        stmts = [l for l in lines if l.startswith('txc:   statement ')]
        calls = [l for l in lines if l.startswith('txc:     ')]
        gemm = re.search(r'^txc:     gemm \(contract\) +(\d+\.\d{3}) ms +\d+\.\d% +(\d+\.\d{2}) GFLOP/s$', err, re.M)
        if len(heads) != 1 or len(stmts) != 5 or len(calls) < 5 or not gemm:
            fails.append('profile -np %d: want one head, statements 1-5, their calls and a GEMM rate: %s'
                         % (p, run_num.one_line(err)))
        elif abs(float(gemm.group(1)) * 1e-3 * float(gemm.group(2)) * 1e9 / (2.0 * o ** 4 * v ** 2) - 1) > 0.05:
            fails.append('profile -np %d: the first GEMM does %g flops by its rate and time, want %g: %s'
                         % (p, float(gemm.group(1)) * 1e-3 * float(gemm.group(2)) * 1e9, 2.0 * o ** 4 * v ** 2,
                            gemm.group(0)))
    return fails


def check_embed(txc, ranks, env, td):
    """The standalone --target mpi C, called by tests/mpi/embed_mpi.c."""
    c, h = os.path.join(td, 'matmul_mpi.c'), os.path.join(td, 'matmul_mpi.h')
    rc, _, err = run([txc, os.path.join(ROOT, 'examples', 'matmul.tx'), '--target', 'mpi', '-o', c,
                      '--header', h], env)
    if rc != 0:
        return ['--target mpi: exit %d: %s' % (rc, run_num.one_line(err))]
    exe = os.path.join(td, 'embed_mpi')
    rc, _, err = run(['mpicc', '-O2', '-std=c99', '-Wall', '-Werror', '-I', td, '-o', exe,
                      os.path.join(HERE, 'mpi', 'embed_mpi.c'), c, '-lscalapack-openmpi', '-llapacke',
                      '-lopenblas', '-lm'], env)
    if rc != 0:
        return ['embed_mpi.c: mpicc: %s' % run_num.one_line(err)]
    fails = []
    for p in ranks:
        rc, out, err = run(mpirun(p, [exe]), env)
        if rc != 0 or out.count('embed_mpi: ok') != p:
            fails.append('embed_mpi -np %d: exit %d: %s %s' % (p, rc, run_num.one_line(out), run_num.one_line(err)))
    # tensors held by rows of two leading modes (lead_alloc_lead), on 3 ranks too
    c, h = os.path.join(td, 'lead_mpi.c'), os.path.join(td, 'lead_mpi.h')
    rc, _, err = run([txc, os.path.join(HERE, 'mpi', 'lead.tx'), '--target', 'mpi', '-o', c, '--header', h], env)
    if rc != 0:
        return fails + ['lead.tx --target mpi: exit %d: %s' % (rc, run_num.one_line(err))]
    exe = os.path.join(td, 'embed_lead')
    rc, _, err = run(['mpicc', '-O2', '-std=c99', '-Wall', '-Werror', '-I', td, '-o', exe,
                      os.path.join(HERE, 'mpi', 'embed_lead.c'), c, '-lscalapack-openmpi', '-llapacke',
                      '-lopenblas', '-lm'], env)
    if rc != 0:
        return fails + ['embed_lead.c: mpicc: %s' % run_num.one_line(err)]
    for p in sorted(set(ranks + [3])):
        rc, out, err = run(mpirun(p, [exe]), env)
        if rc != 0 or out.count('embed_lead: ok') != p or (p > 1 and 'fetching the elements its reads touch' not in err):
            fails.append('embed_lead -np %d: exit %d: %s %s' % (p, rc, run_num.one_line(out), run_num.one_line(err)))
    return fails


def check_graph(txc):
    """txc graph --target mpi: the plan and its volume, against values derived by hand. Needs no MPI."""
    fails = []
    mm = os.path.join(ROOT, 'examples', 'matmul.tx')
    dims = ['-D', 'n=200', '-D', 'k=200', '-D', 'm=200']
    # 4 ranks: a 2x2 grid; SUMMA panels 200*200/2 + 200*200/2 = 4e4, replicating C by Allgatherv (3/4)*4e4 = 3e4
    rc, out, err = run([txc, 'graph', mm, '--target', 'mpi', '--ranks', '4'] + dims, None)
    want = 'pdgemm 200x200x200, A, B, C block-cyclic on 2x2: 7e+04 words (panels 4e+04, replicating C 3e+04)'
    if rc != 0 or want not in out or 'MPI total: 7e+04 words' not in out:
        fails.append('graph --ranks 4: exit %d: %s' % (rc, run_num.one_line(out + err)))
    # each tensor's distribution: 4e4 words replicated, a quarter of it per rank inside the pdgemm
    for t in ('A', 'B', 'C'):
        if not re.search(r'^#   %s \(%%\d+, (input|stored)\): 4e\+04 words, replicated \(4e\+04 on every rank\); '
                         r'block-cyclic on the grid inside %%\d+ \(~1e\+04 words per rank there\)$' % t, out, re.M):
            fails.append('graph --ranks 4: no distribution line for %s: %s' % (t, run_num.one_line(out)))
    # the same in f32 and in c64 (a complex element is two words): psgemm, pcgemm
    for t, want in (('f32', 'psgemm 200x200x200, A, B, C block-cyclic on 2x2: 7e+04 words (panels 4e+04, '
                            'replicating C 3e+04)'),
                    ('c64', 'pcgemm 200x200x200, A, B, C block-cyclic on 2x2: 1.4e+05 words (panels 8e+04, '
                            'replicating C 6e+04)')):
        src = os.path.join(tempfile.gettempdir(), 'txmpi_mm_%s_%d.tx' % (t, os.getpid()))
        with open(src, 'w') as f:
            f.write('in %s A[n,k], B[k,m];\nout %s C[n,m];\nC("i,j") = A("i,k") * B("k,j");\n' % (t, t))
        rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '--ranks', '4'] + dims, None)
        os.unlink(src)
        if rc != 0 or want not in out:
            fails.append('graph --ranks 4, %s: exit %d: %s' % (t, rc, run_num.one_line(out + err)))
    # 1 rank: local, nothing moves
    rc, out, err = run([txc, 'graph', mm, '--target', 'mpi', '--ranks', '1'] + dims, None)
    if rc != 0 or 'dgemm 200x200x200 local on every rank' not in out or 'MPI total: 0 words' not in out:
        fails.append('graph --ranks 1: exit %d: %s' % (rc, run_num.one_line(out + err)))
    # 8 ranks, a small GEMM: below the threshold, local
    rc, out, err = run([txc, 'graph', mm, '--target', 'mpi', '--ranks', '8', '-D', 'n=10', '-D', 'k=10',
                        '-D', 'm=10'], None)
    if rc != 0 or 'below TX_MPI_GEMM_MIN' not in out or '(grid 2x4)' not in out:
        fails.append('graph --ranks 8, small: exit %d: %s' % (rc, run_num.one_line(out + err)))
    # a matrix function of order 300 on 4 ranks: pdpotrf
    src = os.path.join(tempfile.gettempdir(), 'txmpi_chol_%d.tx' % os.getpid())
    with open(src, 'w') as f:
        f.write('in A[n,n];\nout L[n,n];\nL("i,j") = cholesky(A("i,j"));\n')
    rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '-D', 'n=300'], None)
    os.unlink(src)
    if rc != 0 or 'pdpotrf order 300, block-cyclic on 2x2' not in out:
        fails.append('graph cholesky: exit %d: %s' % (rc, run_num.one_line(out + err)))
    # in c128 (pzpotrf; a complex element is two words): panels 2 * 300^2 / sqrt(4) * log2(4) = 1.8e5,
    # replicating L (3/4) * 2 * 300^2 = 1.35e5; in f32 (pspotrf) half of the c128 figures
    for t, want in (('c128', 'pzpotrf order 300, block-cyclic on 2x2: 3.15e+05 words (panels ~1.8e+05, '
                             'replicating the result 1.35e+05)'),
                    ('f32', 'pspotrf order 300, block-cyclic on 2x2: 1.575e+05 words (panels ~9e+04, '
                            'replicating the result 6.75e+04)')):
        with open(src, 'w') as f:
            f.write('in %s A[n,n];\nout %s L[n,n];\nL("i,j") = cholesky(A("i,j"));\n' % (t, t))
        rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '-D', 'n=300'], None)
        os.unlink(src)
        if rc != 0 or want not in out:
            fails.append('graph cholesky %s: exit %d: %s' % (t, rc, run_num.one_line(out + err)))
    # distributed intermediates (tests/mpi/chain.tx, n=400: T, U and the output V are 1.28 MB, held by
    # rows), 4 ranks: A·B into T's rows and the elementwise step on the rows move nothing; U·C replicates
    # D (160 kB, below TX_MPI_DIST_MIN), (3/4)·400·50; the sum exchanges 2 words with each of 3 ranks;
    # V is written on each rank's rows and stays so
    rc, out, err = run([txc, 'graph', os.path.join(HERE, 'mpi', 'chain.tx'), '--target', 'mpi', '--ranks', '4',
                        '-D', 'n=400', '-D', 'k=300', '-D', 'm=50'], None)
    for want in ['rows-gemm 400x400x300 by distributed rows (A replicated, B replicated, C by its rows): 0 words',
                 "add on each rank's rows: 0 words (the result stays distributed)",
                 'rows-gemm 400x50x400 by distributed rows (A by its rows, B replicated, C replicated after): '
                 '1.5e+04 words',
                 'sum of a distributed tensor: partial sums, one MPI_Allgather: 6 words',
                 "store on each rank's rows: 0 words (the result stays distributed)",
                 'MPI total: 1.501e+04 words',
                 '(intermediate): 1.6e+05 words, distributed by rows of its first mode (~4e+04 words per rank)']:
        if rc != 0 or want not in out:
            fails.append('graph chain.tx --ranks 4: no %r: %s' % (want, run_num.one_line(out + err)))
    # U = T·T of distributed tensors, n = 1000 (hand-derived): by rows on 9 ranks, B broadcast by slabs:
    # (8/9)·1e6 = 8.889e5 words; on the 4x4 grid of 16 ranks: pdgemr2d (15/256)·1e6 for each of A and B
    # (1.172e5 together), panels 1e6/4 + 1e6/4 = 5e5, C back to its rows by pdgemr2d, the rank holding most
    # (63 of the 1000 rows) receiving 15/16 of them, (15/16)·0.063·1e6 = 5.906e4; 6.762e5 in all
    src = os.path.join(tempfile.gettempdir(), 'txmpi_sq_%d.tx' % os.getpid())
    with open(src, 'w') as f:
        f.write('in A[n,n], B[n,n];\ntmp T[n,n], U[n,n];\nout s;\nT("i,j") = A("i,k") * B("k,j");\n'
                'U("i,j") = T("i,k") * T("k,j");\ns = U("i,j");\n')
    for p, want in [(9, 'rows-gemm 1000x1000x1000 by distributed rows (A by its rows, B by slabs in turn, C by its '
                        'rows): 8.889e+05 words'),
                    (16, 'pdgemm 1000x1000x1000 on the 4x4 grid (A from its rows by pdgemr2d, B from its rows by '
                         'pdgemr2d, C back to its rows by pdgemr2d): 6.762e+05 words (pdgemr2d 1.172e+05, panels '
                         '5e+05, C 5.906e+04)')]:
        rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '--ranks', str(p), '-D', 'n=1000'], None)
        if rc != 0 or want not in out:
            fails.append('graph T·T --ranks %d: no %r: %s' % (p, want, run_num.one_line(out + err)))
    # cholesky of a distributed S (n = 1000) on 4 ranks: S moved to the grid by pdgemr2d and pdtran,
    # (3/4)/4 · 1e6 = 1.875e5 words, instead of gathered whole (7.5e5)
    with open(src, 'w') as f:
        f.write('in A[n,n];\ntmp S[n,n];\nout L[n,n];\nS("i,j") = A("i,j") * 2;\nL("i,j") = cholesky(S("i,j"));\n')
    rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '--ranks', '4', '-D', 'n=1000'], None)
    want = '1 distributed tensor moved to the grid by pdgemr2d and pdtran (1.875e+05 words), then pdpotrf order 1000'
    if rc != 0 or want not in out:
        fails.append('graph cholesky of a distributed tensor: no %r: %s' % (want, run_num.one_line(out + err)))
    # a transposed read of a distributed S (n = 1000, 4 ranks): W's rows i need S(j,i) for their own i
    # only: of the other ranks' rows (3/4), the quarter of mode 1 in the rank's rows, (3/4)(1/4)·1e6 =
    # 1.875e5 words by all-to-all; with 3 ranks, blocks of 334: (1 - 334/1000)(334/1000)·1e6 = 2.224e5;
    # a read of every column (S("j,k") with no i: X(i) * S(j,k)) gathers S whole, (3/4)·1e6 = 7.5e5
    with open(src, 'w') as f:
        f.write('in A[n,n], x[n];\ntmp S[n,n];\nout W[n,n], Y[n,n,n];\nS("i,j") = A("i,j") * 2;\n'
                'W("i,j") = S("i,j") - S("j,i");\nY("i,j,k") = x("i") * S("j,k");\n')
    for p, want in [(4, "store on each rank's rows, 1 distributed tensor read across rows by the part of the other "
                        "mode in its rows (all-to-all, 1.875e+05 words): 1.875e+05 words (the result stays "
                        "distributed)"),
                    (3, 'all-to-all, 2.224e+05 words'),
                    (4, 'read across rows gathered whole (7.5e+05 words)')]:
        rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '--ranks', str(p), '-D', 'n=1000'], None)
        if rc != 0 or want not in out:
            fails.append('graph transposed read --ranks %d: no %r: %s' % (p, want, run_num.one_line(out + err)))
    # B stationary: R(i,a) = T(i,c) V(a,c), i = 200, a = c = 1000, 4 ranks, every tensor distributed: by rows
    # V would be gathered, (3/4)·1e6 = 7.5e5 words; with V stationary, T is broadcast a rank's slab at a time
    # (held by rows of i, C's rows: the words of a gather, never held whole), (3/4)·2e5 = 1.5e5, and
    # each rank receives (3/4) of its quarter of R's 2e5 words, 3.75e4: 1.875e5 in all (the grid: 8.625e5)
    with open(src, 'w') as f:
        f.write('in T[i,c], V[a,c];\nout R[i,a];\nR("i,a") = T("i,c") * V("a,c");\n')
    rc, out, err = run([txc, 'graph', src, '--target', 'mpi', '--ranks', '4', '-D', 'i=200', '-D', 'a=1000',
                        '-D', 'c=1000'], None)
    want = ("rows-gemm 200x1000x1000 with B stationary (A by slabs in turn, B by its rows: C's columns, C to its "
            "rows by all-to-all): 1.875e+05 words (A 1.5e+05, C 3.75e+04)")
    if rc != 0 or want not in out:
        fails.append('graph B stationary: no %r: %s' % (want, run_num.one_line(out + err)))
    os.unlink(src)
    # rows of several modes: examples/ccd.tx at o = 50, v = 500 on 100 ranks. 50 occupied rows would
    # leave half the ranks idle (and fewer than four rows each), so Z, Tn and T are held by rows of
    # (i,j), 2500 rows, 25 per rank, 6.25e6 words each; the nest writing Tn runs on those rows and its
    # read Z("j,i,a,b") needs, for its 25 pairs ij, the 25 rows ji (6.25e6 words), (99/100) of them
    # on other ranks: 6.188e6 words fetched (Z("j,i,b,a") touches the same; Z("i,j,..") is its own)
    ccd = os.path.join(ROOT, 'examples', 'ccd.tx')
    rc, out, err = run([txc, 'graph', ccd, '--target', 'mpi', '--ranks', '100', '-D', 'o=50', '-D', 'v=500'], None)
    for want in ('Z (%17, stored): 6.25e+08 words, distributed by rows of its first 2 modes (2500 rows) '
                 '(~6.25e+06 words per rank)',
                 "store on each rank's rows (2500 rows over its first 2 modes), 1 distributed tensor read at other "
                 "ranks' rows, the elements read fetched (all-to-all, 6.188e+06 words): 6.188e+06 words (the result "
                 "stays distributed)"):
        if rc != 0 or want not in out:
            fails.append('graph ccd.tx --ranks 100: no %r: %s' % (want, run_num.one_line(out + err)))
    rc, out, err = run([txc, 'graph', mm, '--ranks', '4'], None)
    if rc != 2 or '--ranks goes with --target mpi' not in err:
        fails.append('graph --ranks without --target mpi: exit %d' % rc)
    return fails


def main(argv):
    txc, ranks, files = os.path.join(ROOT, 'build', 'txc'), [1, 2, 4], []
    it = iter(argv)
    for a in it:
        if a == '--txc':
            txc = next(it)
        elif a == '--ranks':
            ranks = [int(x) for x in next(it).split(',')]
        else:
            files.append(a)
    if files == ['graph']:
        files = ['graph', '-']  # the graph check alone
    txc = os.path.abspath(txc)
    gfails = check_graph(txc) if not files or 'graph' in files else []
    for f in gfails:
        print('FAIL ' + f)
    if not files or 'graph' in files:
        print('ok   graph --target mpi' if not gfails else '')
    gpass, gfail = (0, 1) if gfails else (1 if not files or 'graph' in files else 0, 0)
    missing = [t for t in ('mpirun', 'mpicc') if not shutil.which(t)]
    if missing or not os.path.exists('/usr/lib/x86_64-linux-gnu/libscalapack-openmpi.so'):
        print('SKIPPED: MPI is not installed (%s missing): txc run --mpi and the --target mpi C are not tested; '
              'install openmpi-bin libopenmpi-dev libscalapack-openmpi-dev (make deps)'
              % (', '.join(missing) or 'libscalapack-openmpi'))
        print('%d passed, %d failed' % (gpass, gfail))
        return 1 if gfail else 0
    cases = [c for c in CASES if not files or c[0] in files]
    npass, nfail = gpass, gfail
    with tempfile.TemporaryDirectory(prefix='txmpi.') as td:
        env = mpi_env(os.path.join(td, 'cache'))
        groups = [('%s' % f, lambda f=f, t=t: check_case(txc, f, t, ranks, env, td)) for f, t in cases]
        mpidir = os.path.join(HERE, 'mpi')
        # the inputs A, B, C come by rows too (scattered by txc run --mpi), and the outputs D and V stay by
        # rows (gathered on rank 0 to be written); ccd.tx's --random inputs stay replicated, for the GEMMs
        # of replicated operands
        chain_must = ('by distributed rows (A by its rows, B by slabs in turn, C by its rows)',
                      'by distributed rows (A by its rows, B by slabs in turn, C by its rows)',
                      'a sum of a distributed tensor by partial sums', "a loop nest on each rank's rows")
        chain_grid_must = ('pdgemm with distributed operands (C^T = op(B)^T op(A)^T): A from its rows by pdgemr2d, '
                           'B from its rows by pdgemr2d, C back to its rows by pdgemr2d',
                           'pdgemm with distributed operands (C^T = op(B)^T op(A)^T): A from its rows by pdgemr2d, '
                           'B from its rows by pdgemr2d, C back to its rows by pdgemr2d')
        extra = [('chain', lambda: check_case(txc, os.path.join(mpidir, 'chain.tx'), True, ranks, env, td, True,
                                              chain_must)),
                 ('chain_c128', lambda: check_case(txc, os.path.join(mpidir, 'chain_c128.tx'), True, ranks, env,
                                                   td, True, ('a sum of a distributed tensor by partial sums',
                                                              'read across its rows'))),
                 # reads across rows: the part of the other mode moved all-to-all (tx_mpi_cross), on 3 ranks too
                 # (uneven parts)
                 ('cross', lambda: check_case(txc, os.path.join(mpidir, 'cross.tx'), False, sorted(set(ranks + [3])),
                                              env, td, True, ('read across its rows',
                                                              "a loop nest on each rank's rows"))),
                 # a GEMM whose transposed B is held by rows of C's columns: B stationary, C's blocks to its rows
                 # by all-to-all (every tensor distributed), or to every rank (only V, Vc and Vf, 3600 bytes or more
                 # distributed, TX_MPI_DIST_MIN=3000); on 3 ranks too (uneven blocks)
                 ('stationary', lambda: check_case(txc, os.path.join(mpidir, 'stationary.tx'), True,
                                                   sorted(set(ranks + [3])), env, td, True,
                                                   ("with B stationary (A by slabs in turn, B by its rows: C's columns, C to "
                                                    "its rows)",))),
                 ('stationary_whole', lambda: check_case(txc, os.path.join(mpidir, 'stationary.tx'), True,
                                                         sorted(set(ranks + [3])), dict(env, TX_MPI_DIST_MIN='3000'),
                                                         td, True, ("with B stationary (A replicated, B by its rows: "
                                                                    "C's columns, C replicated after)",))),
                 # the GEMMs on the grid instead (TX_MPI_GEMM=pdgemm): distributed operands and results
                 # move between their rows and the block-cyclic pieces by pdgemr2d
                 ('chain_grid', lambda: check_case(txc, os.path.join(mpidir, 'chain.tx'), True, ranks,
                                                   dict(env, TX_MPI_GEMM='pdgemm'), td, True, chain_grid_must)),
                 ('chain_c128_grid', lambda: check_case(txc, os.path.join(mpidir, 'chain_c128.tx'), True, ranks,
                                                        dict(env, TX_MPI_GEMM='pdgemm'), td, True,
                                                        ('pzgemm with distributed operands',))),
                 ('grid_trans', lambda: check_case(txc, os.path.join(mpidir, 'grid_trans.tx'), True,
                                                   sorted(set(ranks + [3])), dict(env, TX_MPI_GEMM='pdgemm'), td, True,
                                                   ('from its rows by pdgemr2d', 'back to its rows by pdgemr2d'))),
                 ('grid_trans_rows', lambda: check_case(txc, os.path.join(mpidir, 'grid_trans.tx'), True,
                                                        sorted(set(ranks + [3])), env, td, True,
                                                        ('a dot of distributed tensors by partial dots',))),
                 # f32 and c64 on the grid: psgemm and pcgemm, their operands and results moved by
                 # psgemr2d and pcgemr2d
                 ('grid_f32', lambda: check_case(txc, os.path.join(mpidir, 'grid_f32.tx'), True,
                                                 sorted(set(ranks + [3])), dict(env, TX_MPI_GEMM='pdgemm'), td, True,
                                                 ('psgemm with distributed operands (C^T = op(B)^T op(A)^T): A from '
                                                  'its rows by psgemr2d, B from its rows by psgemr2d, C back to its '
                                                  'rows by psgemr2d',
                                                  'pcgemm with distributed operands (C^T = op(B)^T op(A)^T): A from '
                                                  'its rows by pcgemr2d'))),
                 ('f32_rows', lambda: check_case(txc, os.path.join(mpidir, 'f32_rows.tx'), True,
                                                 sorted(set(ranks + [3])), env, td, True,
                                                 ('rows-gemm 13x11x7 by distributed rows (A by its rows, B by slabs in '
                                                  'turn, C by its rows)', 'rows-gemm 13x6x5 by distributed rows',
                                                  'a sum of a distributed tensor by partial sums'))),
                 # every matrix function of c128, c64 and f32 matrices in ScaLAPACK (pz*, pc*, ps*)
                 ('la_z', lambda: check_case(txc, os.path.join(run_num.NUMDIR, 'complex_linalg.tx'), True, ranks, env, td,
                                             False, ('pzpotrf', 'pzgetrf+pzgetri', 'pzgesv', 'pzheevd',
                                                     'pzgeqrf+pzungqr', 'pzgesvd'))),
                 ('la_c', lambda: check_case(txc, os.path.join(run_num.NUMDIR, 'complex64_linalg.tx'), True, ranks, env, td,
                                             False, ('pcpotrf', 'pcgetrf+pcgetri', 'pcgesv', 'pcheevd',
                                                     'pcgeqrf+pcungqr', 'pcgesvd'))),
                 ('la_s', lambda: [f for name, call in (('cholesky', 'pspotrf'), ('inv', 'psgetrf+psgetri'),
                                                        ('solve', 'psgesv'), ('eigh', 'pssyevd'),
                                                        ('qr', 'psgeqrf+psorgqr'), ('svd', 'psgesvd'))
                                   for f in check_case(txc, os.path.join(run_num.NUMDIR, 'la_%s_f32.tx' % name),
                                                       True, ranks, env, td, False, (call,))]),
                 ('la_fed', lambda: check_case(txc, os.path.join(mpidir, 'la_fed.tx'), True, ranks, env, td, True,
                                               ('operand from its rows by pdgemr2d and pdtran',))),
                 ('memory', lambda: check_memory(txc, ranks, env, td)),
                 ('ccd', lambda: check_ccd(txc, ranks, env, td)),
                 ('lead', lambda: check_lead(txc, ranks, env, td)),
                 ('pieces', lambda: check_pieces(txc, ranks, env)),
                 ('failures', lambda: check_failure(txc, env, td)),
                 ('embed', lambda: check_embed(txc, ranks, env, td)),
                 ('time', lambda: check_time(txc, ranks, env, td)),
                 ('warnings', lambda: check_warnings(txc, td))]
        groups += [g for g in extra if not files or g[0] in files]
        for name, fn in groups:
            try:
                fails = fn()
            except Exception as e:  # a broken test is a failure, said
                fails = ['%s: %s: %s' % (name, type(e).__name__, e)]
            for f in fails:
                print('FAIL ' + f)
            if fails:
                nfail += 1
            else:
                npass += 1
                print('ok   ' + name)
            sys.stdout.flush()
    print('%d passed, %d failed' % (npass, nfail))
    return 1 if nfail else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
