#!/usr/bin/python3
"""bench.py — the tensorexpr benchmark suite (see bench/README.md).

    OPENBLAS_NUM_THREADS=N /usr/bin/python3 bench/bench.py --threads N [--quick]
    /usr/bin/python3 bench/bench.py --report
    ... --baseline PATH/libtensorexpr.so   (also times another build of the
        library, e.g. the one before a change, side by side in the same run)

The first form runs every kernel in this one process: tensorexpr (through
build/libtensorexpr.so with ctypes), numpy (einsum and the best other numpy
spelling), OpenBLAS called directly (cblas_dgemm/cblas_dgemv via ctypes) and,
for the elementwise kernel, a gcc -O2 loop (build/bench/libelem.so). All
contenders of a kernel work on the same arrays. Every tensorexpr result (and
every other contender's) is checked against numpy before timing; a mismatch
exits with status 1. It prints the tables and writes build/bench/results-tN.json.

The second form combines the results-t*.json files into bench/results.md.
OPENBLAS_NUM_THREADS must be set before OpenBLAS loads, so it is checked (or
set) before numpy is imported.
"""

import ctypes
import datetime
import gc
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, 'build')
OUTDIR = os.path.join(BUILD, 'bench')
LIBTX = os.path.join(BUILD, 'libtensorexpr.so')
LIBELEM = os.path.join(OUTDIR, 'libelem.so')
RESULTS_MD = os.path.join(HERE, 'results.md')

ROUNDS = 7            # interleaved rounds per contender; the median is reported
MIN_MEASURE = 0.020   # seconds: one measurement lasts at least this long
RTOL = 1e-10          # f64: max|got - want| <= RTOL * max(1, max|want|)
COMPILE_REPS = 20


class BenchError(Exception):
    pass


def die(msg):
    sys.stderr.write('bench.py: FAIL: %s\n' % msg)
    sys.exit(1)


# ------------------------------------------------------------ arguments --

def parse_args(argv):
    args = {'threads': None, 'report': False, 'quick': False, 'baseline': None}
    it = iter(argv)
    for a in it:
        if a == '--threads':
            args['threads'] = int(next(it))
        elif a.startswith('--threads='):
            args['threads'] = int(a.split('=', 1)[1])
        elif a == '--report':
            args['report'] = True
        elif a == '--quick':      # smaller sizes and fewer rounds: a smoke test
            args['quick'] = True
        elif a == '--baseline':   # another libtensorexpr.so timed side by side
            args['baseline'] = next(it)
        elif a.startswith('--baseline='):
            args['baseline'] = a.split('=', 1)[1]
        else:
            die('unknown argument %r (see the docstring)' % a)
    if not args['report'] and args['threads'] is None:
        die('give --threads N (with OPENBLAS_NUM_THREADS=N) or --report')
    return args


ARGS = parse_args(sys.argv[1:])
if ARGS['threads'] is not None:
    # Must happen before numpy (and with it OpenBLAS) is loaded.
    env = os.environ.get('OPENBLAS_NUM_THREADS')
    if env is None:
        os.environ['OPENBLAS_NUM_THREADS'] = str(ARGS['threads'])
    elif env != str(ARGS['threads']):
        die('OPENBLAS_NUM_THREADS=%s but --threads %d' % (env, ARGS['threads']))
    # tensorexpr's own loops and its BLAS calls use the same count
    os.environ['TX_NUM_THREADS'] = str(ARGS['threads'])

import numpy as np  # noqa: E402  (after the environment is fixed)


# ------------------------------------------------------------- libraries --

c_int, c_int64, c_double, c_size_t = ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_size_t
c_void_p, c_char_p = ctypes.c_void_p, ctypes.c_char_p

TX_OPTION_TIMING = 2


class TxSparseMap(ctypes.Structure):
    """tx_sparse_map (tensorexpr.h): targets of source s are
    targets[offsets[s] .. offsets[s+1]), ascending."""
    _fields_ = [('nsrc', ctypes.c_int64), ('offsets', ctypes.c_void_p), ('targets', ctypes.c_void_p)]


def sparse_map_of(mask, nsrc_modes):
    """The tx_sparse_map of a boolean MASK over (source modes..., target
    modes...), the first NSRC_MODES being the source. Returns the struct and
    the arrays it points into (keep them alive while it is bound)."""
    ns = int(np.prod(mask.shape[:nsrc_modes], dtype=np.int64))
    nd = int(np.prod(mask.shape[nsrc_modes:], dtype=np.int64))
    m2 = np.ascontiguousarray(mask, dtype=bool).reshape(ns, nd)
    offsets = np.zeros(ns + 1, dtype=np.int64)
    np.cumsum(m2.sum(axis=1), out=offsets[1:])
    targets = np.nonzero(m2)[1].astype(np.int64)   # row-major: ascending within a row
    if targets.size == 0:
        targets = np.zeros(1, dtype=np.int64)
    st = TxSparseMap(ns, offsets.ctypes.data, targets.ctypes.data)
    return st, (offsets, targets)


def load_tx(path=LIBTX):
    if not os.path.exists(path):
        die('%s is missing: run `make all` first' % path)
    lib = ctypes.CDLL(path)
    sig = {
        'tx_new': (c_void_p, []),
        'tx_free': (None, [c_void_p]),
        'tx_set_option': (c_int, [c_void_p, c_int, c_int]),
        'tx_compile': (c_void_p, [c_void_p, c_char_p, c_size_t, c_char_p]),
        'tx_errmsg': (c_char_p, [c_void_p]),
        'tx_strerror': (c_char_p, [c_int]),
        'tx_bind': (c_int, [c_void_p, c_char_p, c_void_p, c_int, ctypes.POINTER(c_int64)]),
        'tx_run': (c_int, [c_void_p]),
        'tx_program_free': (None, [c_void_p]),
        'tx_timing': (c_int, [c_void_p, c_int, ctypes.POINTER(c_double), ctypes.POINTER(c_int)]),
        'tx_bind_sparse': (c_int, [c_void_p, c_char_p, ctypes.POINTER(TxSparseMap)]),
    }
    for name, (res, argt) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = argt
    return lib


def load_blas():
    lib = ctypes.CDLL('libopenblas.so.0')
    lib.cblas_dgemm.restype = None
    lib.cblas_dgemm.argtypes = [c_int, c_int, c_int, c_int, c_int, c_int, c_double,
                                c_void_p, c_int, c_void_p, c_int, c_double, c_void_p, c_int]
    lib.cblas_dgemv.restype = None
    lib.cblas_dgemv.argtypes = [c_int, c_int, c_int, c_int, c_double, c_void_p, c_int,
                                c_void_p, c_int, c_double, c_void_p, c_int]
    lib.openblas_get_num_threads.restype = c_int
    lib.openblas_get_num_threads.argtypes = []
    lib.openblas_get_config.restype = c_char_p
    lib.openblas_get_config.argtypes = []
    return lib


CblasRowMajor, CblasNoTrans = 101, 111


class TxLib:
    """A tensorexpr context and the programs compiled in it."""

    def __init__(self, lib, timing=False):
        self.lib = lib
        self.keep = []            # sparse maps bound in this context
        self.ctx = lib.tx_new()
        if not self.ctx:
            die('tx_new returned NULL')
        if timing and lib.tx_set_option(self.ctx, TX_OPTION_TIMING, 1) != 0:
            die('tx_set_option(TIMING): %s' % self.errmsg())

    def errmsg(self):
        return (self.lib.tx_errmsg(self.ctx) or b'').decode('utf-8', 'replace')

    def compile(self, src, filename):
        b = src.encode('utf-8')
        p = self.lib.tx_compile(self.ctx, b, len(b), filename.encode('utf-8'))
        if not p:
            die('tx_compile(%s):\n%s' % (filename, self.errmsg()))
        return p

    def bind(self, p, name, arr):
        if arr.dtype != np.float64 or not arr.flags['C_CONTIGUOUS']:
            die('binding %s: need a C-contiguous f64 array' % name)
        shape = (c_int64 * max(1, arr.ndim))(*arr.shape)
        st = self.lib.tx_bind(p, name.encode('utf-8'), c_void_p(arr.ctypes.data), arr.ndim, shape)
        if st != 0:
            die('tx_bind(%s): %s' % (name, self.errmsg()))

    def bind_map(self, p, name, mask, nsrc_modes):
        st, arrays = sparse_map_of(mask, nsrc_modes)
        self.keep.append((st, arrays))
        if self.lib.tx_bind_sparse(p, name.encode('utf-8'), ctypes.byref(st)) != 0:
            die('tx_bind_sparse(%s): %s' % (name, self.errmsg()))
        return int(arrays[0][-1])

    def run(self, p, what):
        st = self.lib.tx_run(p)
        if st != 0:
            die('tx_run(%s): status %d (%s): %s' % (what, st,
                self.lib.tx_strerror(st).decode(), self.errmsg()))

    def jit_seconds(self, p):
        s, line = c_double(), c_int()
        if self.lib.tx_timing(p, -1, ctypes.byref(s), ctypes.byref(line)) != 0:
            return float('nan')
        return s.value

    def free_program(self, p):
        self.lib.tx_program_free(p)

    def close(self):
        self.lib.tx_free(self.ctx)
        self.ctx = None


# -------------------------------------------------------------- checking --

def check(label, got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        raise BenchError('%s: shape %s, numpy gives %s' % (label, got.shape, want.shape))
    if not np.all(np.isfinite(got)):
        raise BenchError('%s: non-finite values in the result' % label)
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 0.0)
    if err > RTOL * scale:
        raise BenchError('%s: WRONG RESULT: max|got - numpy| = %.3e > %.0e * %.3e'
                         % (label, err, RTOL, scale))
    return err / scale


# ---------------------------------------------------------------- timing --

def per_call(fn, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def calibrate(fn):
    """Repetitions so that one measurement lasts at least MIN_MEASURE."""
    reps = 1
    while True:
        t = per_call(fn, reps)
        if t * reps >= MIN_MEASURE:
            return reps
        reps = max(reps * 2, int(math.ceil(MIN_MEASURE * 1.25 / max(t, 1e-9))))


# The pause before each measurement: a contender may leave threads
# spinning after its calls (torch's OpenMP workers spin for milliseconds),
# which would take a core from whichever contender is measured next (see
# bench_einsum.py's PAUSE for the figures).
PAUSE = 0.01

# One untimed call of a contender before each of its measurements. On a
# virtual machine the first pass over large arrays after an idle moment
# (a sleep, another contender's frees) can be many times slower than the
# next: on the 2-vCPU VM of 2026-12-02, E = A*B + C over 10^7 doubles took
# 65-137 ms on the first call after a 1 s sleep and 9-12 ms on the three
# after it, numpy's multiply and add with out= alike. A measurement of two
# or three calls then averages one such call in and the median follows
# whichever contender drew it; the call before the clock starts takes it
# out for every contender alike.
WARM = True


def time_contenders(contenders):
    """contenders: list of (label, fn). Interleaved rounds, each measurement
    PAUSE after the one before and right after one untimed call of the same
    contender (WARM); returns medians."""
    reps = {lab: calibrate(fn) for lab, fn in contenders}
    samples = {lab: [] for lab, _ in contenders}
    gc.collect()
    gc.disable()
    try:
        for r in range(ROUNDS):
            order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
            for lab, fn in order:
                time.sleep(PAUSE)
                if WARM:
                    fn()
                samples[lab].append(per_call(fn, reps[lab]))
    finally:
        gc.enable()
    return {lab: statistics.median(s) for lab, s in samples.items()}, reps, samples


# --------------------------------------------------------------- kernels --

def read_tx(name):
    with open(os.path.join(HERE, name), encoding='utf-8') as f:
        return f.read()


def flops_of_path(spec, *ops):
    """The 'Optimized FLOP count' numpy's einsum_path reports (mul + add)."""
    _, text = np.einsum_path(spec, *ops, optimize='optimal')
    m = re.search(r'Optimized FLOP count:\s*([0-9.eE+-]+)', text)
    return float(m.group(1))


class Kernel:
    """One benchmark: a .tx file, its bound arrays, the outputs numpy
    expects, the work (flops or bytes) and the non-tensorexpr contenders.
    contenders: list of (label, category, fn, result) where category is
    einsum | numpy | openblas | gcc and result() returns the array fn
    produced (for the pre-timing check)."""

    def __init__(self, name, size, txfile, inputs, outputs, expected,
                 flops=None, nbytes=None):
        self.name, self.size, self.txfile = name, size, txfile
        self.inputs, self.outputs, self.expected = inputs, outputs, expected
        self.flops, self.nbytes = flops, nbytes
        self.contenders = []

    def add(self, label, category, fn, result=None):
        self.contenders.append((label, category, fn, result))


def returning(fn):
    """fn returns its result: (timed fn, result getter) pair."""
    box = {}

    def res():
        if 'r' not in box:
            box['r'] = fn()
        return box['r']
    return fn, res


def k_matmul(rng, blas, n):
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    C = np.zeros((n, n))
    k = Kernel('matmul', 'n=%d' % n, 'matmul.tx', {'A': A, 'B': B}, {'C': C},
               {'C': A @ B}, flops=2.0 * n ** 3)
    k.add('einsum', 'einsum', *returning(lambda: np.einsum('ik,kj->ij', A, B, optimize=True)))
    k.add('A @ B', 'numpy', *returning(lambda: A @ B))
    Cn = np.zeros((n, n))
    k.add('matmul(out=)', 'numpy', lambda: np.matmul(A, B, out=Cn),
          lambda: (np.matmul(A, B, out=Cn), Cn)[1])
    Cb = np.zeros((n, n))
    pa, pb, pc = A.ctypes.data, B.ctypes.data, Cb.ctypes.data
    dgemm = blas.cblas_dgemm

    def gemm():
        dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, pa, n, pb, n, 0.0, pc, n)
    k.add('cblas_dgemm', 'openblas', gemm, lambda: (gemm(), Cb)[1])
    return k


def k_matvec(rng, blas, n):
    A = rng.standard_normal((n, n))
    x = rng.standard_normal(n)
    y = np.zeros(n)
    k = Kernel('matvec', 'n=%d' % n, 'matvec.tx', {'A': A, 'x': x}, {'y': y},
               {'y': A @ x}, flops=2.0 * n * n, nbytes=8.0 * (n * n + 2 * n))
    k.add('einsum', 'einsum', *returning(lambda: np.einsum('ij,j->i', A, x, optimize=True)))
    k.add('A @ x', 'numpy', *returning(lambda: A @ x))
    k.add('np.dot', 'numpy', *returning(lambda: np.dot(A, x)))
    yb = np.zeros(n)
    pa, px, py = A.ctypes.data, x.ctypes.data, yb.ctypes.data
    dgemv = blas.cblas_dgemv

    def gemv():
        dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, pa, n, px, 1, 0.0, py, 1)
    k.add('cblas_dgemv', 'openblas', gemv, lambda: (gemv(), yb)[1])
    return k


def torch_einsum(spec, *ops):
    """A function computing einsum SPEC over OPS (numpy arrays, whose memory
    torch shares) with torch.einsum, pairwise along numpy's optimal path (as
    torch.einsum does when opt_einsum is installed; without it torch contracts
    left to right, which for the four-factor CCSD term needs 80 GB); None if
    torch is not installed. Runs on --threads threads."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(ARGS['threads'] or 1)
    ins, out = spec.split('->')
    subs = ins.split(',')
    path = np.einsum_path(spec, *ops, optimize='optimal')[0][1:]
    ts = [torch.from_numpy(a) for a in ops]

    def run():
        cur = list(zip(ts, subs))
        for pair in path:
            picked = [cur[i] for i in pair]
            cur = [c for i, c in enumerate(cur) if i not in pair]
            keep = set(out).union(*[set(sb) for _, sb in cur])
            have = ''.join(dict.fromkeys(''.join(sb for _, sb in picked)))
            res = ''.join(c for c in have if c in keep)
            cur.append((torch.einsum(','.join(sb for _, sb in picked) + '->' + res,
                                     *[t for t, _ in picked]), res))
        t, sb = cur[0]
        return torch.einsum(sb + '->' + out, t)
    return run


def add_torch(k, spec, *ops):
    """A torch.einsum contender (category 'torch') for a contraction kernel."""
    fn = torch_einsum(spec, *ops)
    if fn:
        k.add('torch.einsum', 'torch', *returning(lambda: fn().numpy()))


def k_bmm(rng, blas, nb, n):
    A = rng.standard_normal((nb, n, n))
    B = rng.standard_normal((nb, n, n))
    C = np.zeros((nb, n, n))
    k = Kernel('batched matmul', '%d x %dx%d' % (nb, n, n), 'bmm.tx', {'A': A, 'B': B},
               {'C': C}, {'C': np.matmul(A, B)}, flops=2.0 * nb * n ** 3)
    k.add('einsum', 'einsum', *returning(lambda: np.einsum('bik,bkj->bij', A, B, optimize=True)))
    k.add('np.matmul', 'numpy', *returning(lambda: np.matmul(A, B)))
    Cn = np.zeros((nb, n, n))
    k.add('matmul(out=)', 'numpy', lambda: np.matmul(A, B, out=Cn),
          lambda: (np.matmul(A, B, out=Cn), Cn)[1])
    return k


def k_contract_ijk(rng, blas, n):
    A = rng.standard_normal((n, n, n))
    B = rng.standard_normal((n, n))
    C = np.zeros((n, n))
    want = np.einsum('ijk,kj->ij', A, B)
    k = Kernel('C(i,j)=A(i,j,k)B(k,j)', 'n=%d' % n, 'contract_ijk.tx', {'A': A, 'B': B},
               {'C': C}, {'C': want}, flops=2.0 * n ** 3)
    k.add('einsum', 'einsum', *returning(lambda: np.einsum('ijk,kj->ij', A, B, optimize=True)))
    k.add('einsum(no opt)', 'numpy', *returning(lambda: np.einsum('ijk,kj->ij', A, B)))
    add_torch(k, 'ijk,kj->ij', A, B)
    Bt = np.ascontiguousarray(B.T)
    k.add('(A*B.T).sum(2)', 'numpy', *returning(lambda: (A * Bt[None, :, :]).sum(axis=2)))
    return k


def k_ao2mo(rng, blas, n):
    g = rng.standard_normal((n, n, n, n))
    g = (g + g.transpose(1, 0, 2, 3)) * 0.5    # some of the ERI symmetry; not exploited
    g = (g + g.transpose(2, 3, 0, 1)) * 0.5
    g = np.ascontiguousarray(g)
    Cm = rng.standard_normal((n, n)) / math.sqrt(n)
    X = np.zeros((n, n, n, n))
    spec = 'ap,bq,cr,ds,abcd->pqrs'
    path, _ = np.einsum_path(spec, Cm, Cm, Cm, Cm, g, optimize='optimal')
    want = np.einsum(spec, Cm, Cm, Cm, Cm, g, optimize=path)
    k = Kernel('AO->MO transform', 'n=%d' % n, 'ao2mo.tx', {'g': g, 'C': Cm}, {'X': X},
               {'X': want}, flops=flops_of_path(spec, Cm, Cm, Cm, Cm, g))
    k.add('einsum', 'einsum', *returning(lambda: np.einsum(spec, Cm, Cm, Cm, Cm, g, optimize=True)))
    k.add('einsum(path)', 'numpy', *returning(lambda: np.einsum(spec, Cm, Cm, Cm, Cm, g, optimize=path)))

    def tdot():
        t = np.tensordot(g, Cm, axes=([3], [0]))      # a b c s
        t = np.tensordot(t, Cm, axes=([2], [0]))      # a b s r
        t = np.tensordot(t, Cm, axes=([1], [0]))      # a s r q
        t = np.tensordot(t, Cm, axes=([0], [0]))      # s r q p
        return t.transpose(3, 2, 1, 0)
    k.add('tensordot x4', 'numpy', *returning(tdot))
    add_torch(k, spec, Cm, Cm, Cm, Cm, g)
    return k


def k_elementwise(rng, blas, elem, n):
    A = rng.standard_normal(n)
    B = rng.standard_normal(n)
    D = rng.standard_normal(n)
    E = np.zeros(n)
    want = A * B + D
    k = Kernel('E=A*B+D', 'n=%dM' % (n // 1000000) if n % 1000000 == 0 else 'n=%d' % n,
               'elementwise.tx', {'A': A, 'B': B, 'D': D}, {'E': E}, {'E': want},
               flops=2.0 * n, nbytes=4 * 8.0 * n)
    k.add('einsum', 'einsum', *returning(lambda: np.einsum('i,i->i', A, B, optimize=True) + D))
    k.add('A*B+D', 'numpy', *returning(lambda: A * B + D))
    En = np.zeros(n)

    def inplace():
        np.multiply(A, B, out=En)
        np.add(En, D, out=En)
    k.add('ufuncs(out=)', 'numpy', inplace, lambda: (inplace(), En)[1])
    Eg = np.zeros(n)
    f = elem.elem_fma
    pa, pb, pd, pe = A.ctypes.data, B.ctypes.data, D.ctypes.data, Eg.ctypes.data

    def cloop():
        f(n, pa, pb, pd, pe)
    k.add('gcc -O2 loop', 'gcc', cloop, lambda: (cloop(), Eg)[1])
    return k


def k_ccsd(rng, blas, o, v):
    V = rng.standard_normal((v, v, o, o))
    W = rng.standard_normal((v, v, v, v)) * 0.1
    T = rng.standard_normal((v, v, o, o)) * 0.1
    X = rng.standard_normal((o, o, o, o))
    F = rng.standard_normal((o, v))
    U = rng.standard_normal((v, v, o, o))
    R = np.zeros((v, v, o, o))
    s1, s2, s3 = 'abcd,cdij->abij', 'abkl,klij->abij', 'kc,acik,bdjl,cdkl->abij'
    p1 = np.einsum_path(s1, W, T, optimize='optimal')[0]
    p2 = np.einsum_path(s2, T, X, optimize='optimal')[0]
    p3 = np.einsum_path(s3, F, T, T, U, optimize='optimal')[0]

    def with_paths():
        return (V + np.einsum(s1, W, T, optimize=p1) + np.einsum(s2, T, X, optimize=p2)
                - np.einsum(s3, F, T, T, U, optimize=p3))
    want = with_paths()
    flops = (flops_of_path(s1, W, T) + flops_of_path(s2, T, X)
             + flops_of_path(s3, F, T, T, U) + 3.0 * V.size)
    k = Kernel('CCSD-like doubles', 'o=%d v=%d' % (o, v), 'ccsd.tx',
               {'V': V, 'W': W, 'T': T, 'X': X, 'F': F, 'U': U}, {'R': R}, {'R': want},
               flops=flops)
    k.add('einsum', 'einsum', *returning(
        lambda: (V + np.einsum(s1, W, T, optimize=True) + np.einsum(s2, T, X, optimize=True)
                 - np.einsum(s3, F, T, T, U, optimize=True))))
    k.add('einsum(paths)', 'numpy', *returning(with_paths))
    f1, f2, f3 = torch_einsum(s1, W, T), torch_einsum(s2, T, X), torch_einsum(s3, F, T, T, U)
    if f1:
        import torch
        tV = torch.from_numpy(V)
        k.add('torch.einsum', 'torch', *returning(lambda: (tV + f1() + f2() - f3()).numpy()))
    return k


def build_kernels(rng, blas, elem, quick):
    ks = []
    for n in ((64, 256) if quick else (64, 256, 1024)):
        ks.append(lambda n=n: k_matmul(rng, blas, n))
    ks.append(lambda: k_matvec(rng, blas, 1024 if quick else 4096))
    ks.append(lambda: k_bmm(rng, blas, 64, 64))
    ks.append(lambda: k_contract_ijk(rng, blas, 64 if quick else 128))
    ks.append(lambda: k_ao2mo(rng, blas, 12 if quick else 24))
    ks.append(lambda: k_elementwise(rng, blas, elem, 1000000 if quick else 10000000))
    ks.append(lambda: k_ccsd(rng, blas, 4 if quick else 8, 16 if quick else 40))
    return ks


def add_baseline(k, base, src):
    """Times build BASE (a TxLib of another libtensorexpr.so) on kernel K's
    inputs, into outputs of its own; returns its program (to free)."""
    p = base.compile(src, k.txfile)
    outs = {name: np.zeros_like(arr) for name, arr in k.outputs.items()}
    for name, arr in list(k.inputs.items()) + list(outs.items()):
        base.bind(p, name, arr)
    base.run(p, k.txfile + ' (baseline)')
    run = base.lib.tx_run
    first = next(iter(k.expected))

    def fn():
        if run(p):
            raise BenchError('baseline tx_run failed: %s' % base.errmsg())
    k.add('tensorexpr baseline', 'baseline', fn, lambda: outs[first])
    return p


def run_kernel(txl, make, base=None):
    k = make()
    src = read_tx(k.txfile)
    p = txl.compile(src, k.txfile)
    bp = add_baseline(k, base, src) if base else None
    try:
        for name, arr in list(k.inputs.items()) + list(k.outputs.items()):
            txl.bind(p, name, arr)
        t0 = time.perf_counter()
        txl.run(p, k.txfile)                  # warm-up: JIT-compiles
        first = time.perf_counter() - t0
        errs = {}
        for name, want in k.expected.items():
            errs['tensorexpr'] = check('%s %s: tensorexpr %s' % (k.name, k.size, name),
                                       k.outputs[name], want)
        want = next(iter(k.expected.values()))
        for label, _, fn, res in k.contenders:
            errs[label] = check('%s %s: %s' % (k.name, k.size, label), res(), want)

        run = txl.lib.tx_run

        def txrun():
            if run(p):
                raise BenchError('tx_run failed during timing: %s' % txl.errmsg())
        conts = [('tensorexpr', txrun)] + [(lab, fn) for lab, _, fn, _ in k.contenders]
        med, reps, samples = time_contenders(conts)
        # The timed runs must still give the right answer.
        for name, want in k.expected.items():
            check('%s %s: tensorexpr %s (after timing)' % (k.name, k.size, name),
                  k.outputs[name], want)
    finally:
        txl.free_program(p)
        if bp:
            base.free_program(bp)
    cats = {'tensorexpr': 'tensorexpr'}
    cats.update({lab: cat for lab, cat, _, _ in k.contenders})
    return {
        'kernel': k.name, 'size': k.size, 'txfile': k.txfile,
        'flops': k.flops, 'bytes': k.nbytes, 'first_run_s': first,
        'times': med, 'reps': reps, 'samples': samples, 'category': cats,
        'maxrelerr': errs,
    }


# -------------------------------------------------------- compile latency --

def compile_latency(txl_lib, rng):
    n = 64
    src = read_tx('compile10.tx')
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    outs = {nm: np.zeros((n, n)) for nm in ('C', 'D', 'S', 'G', 'H')}
    outs.update({nm: np.zeros(n) for nm in ('z', 'w', 'mx')})
    outs.update({nm: np.zeros(()) for nm in ('s', 't')})
    C = A @ B
    D = C + 2 * A.T - B * B
    z = D @ x
    w = A @ y + 0.5 * z
    s = z @ w
    e = np.exp(A)
    S = e / e.sum(axis=1, keepdims=True)
    H = C @ D.T + S
    want = {'C': C, 'D': D, 'z': z, 'w': w, 's': s, 'S': S, 'G': np.outer(x, y) + C,
            'H': H, 't': np.trace(A) + s, 'mx': H.max(axis=1)}
    ins = {'A': A, 'B': B, 'x': x, 'y': y}
    nstmt = sum(1 for line in src.splitlines()
                if '=' in line.split('#')[0] and not line.lstrip().startswith(('dim', 'in', 'out')))

    def one(txl, check_it):
        t0 = time.perf_counter()
        p = txl.compile(src, 'compile10.tx')
        t1 = time.perf_counter()
        for nm, arr in list(ins.items()) + list(outs.items()):
            txl.bind(p, nm, arr)
        t2 = time.perf_counter()
        txl.run(p, 'compile10.tx')
        t3 = time.perf_counter()
        jit = txl.jit_seconds(p)
        if check_it:
            for nm, wv in want.items():
                check('compile10.tx: tensorexpr %s' % nm, outs[nm], wv)
        steady = []
        for _ in range(5):
            u0 = time.perf_counter()
            txl.run(p, 'compile10.tx')
            steady.append(time.perf_counter() - u0)
        txl.free_program(p)
        st = statistics.median(steady)
        return t1 - t0, t3 - t2, st, jit

    plain = TxLib(txl_lib)
    one(plain, True)                          # warm caches (and check the results)
    comp, first, steady, lat = [], [], [], []
    for _ in range(COMPILE_REPS):
        c, f, st, _ = one(plain, False)
        comp.append(c)
        first.append(f)
        steady.append(st)
        lat.append(c + f - st)
    plain.close()
    timed = TxLib(txl_lib, timing=True)      # separately: the JIT share, from tx_timing(-1)
    jits = [one(timed, False)[3] for _ in range(COMPILE_REPS)]
    timed.close()
    med = statistics.median
    return {'statements': nstmt, 'n': n, 'compile_s': med(comp), 'first_run_s': med(first),
            'steady_s': med(steady), 'latency_s': med(lat), 'jit_s': med(jits),
            'reps': COMPILE_REPS}


# ------------------------------------------------------------ sparse maps --

def dense_of(src):
    """The same program without its sparse maps (every entry visited)."""
    return '\n'.join(line for line in src.splitlines() if not line.lstrip().startswith('sparse'))


class SparseBench:
    """One sparse-map benchmark: contenders (label, fn, result getter),
    all checked against WANT before timing and the tensorexpr ones again
    after; programs compiled for it are freed at the end."""

    def __init__(self, txl, name, size, want):
        self.txl, self.name, self.size, self.want = txl, name, size, want
        self.contenders, self.tx_labels, self.programs = [], [], []
        self.notes = {}

    def tx(self, label, src, filename, tensors, maps, out):
        """A tensorexpr contender: SRC compiled, TENSORS bound, MAPS
        (name -> (mask, nsrc_modes)) bound; OUT is the output array."""
        txl = self.txl
        p = txl.compile(src, filename)
        self.programs.append(p)
        for name, arr in tensors.items():
            txl.bind(p, name, arr)
        entries = {}
        for name, (mask, nsrc) in maps.items():
            entries[name] = txl.bind_map(p, name, mask, nsrc)
        txl.run(p, filename)                  # warm-up: JIT-compiles
        run = txl.lib.tx_run

        def fn():
            if run(p):
                raise BenchError('tx_run(%s) failed during timing: %s' % (filename, txl.errmsg()))
        self.contenders.append((label, fn, lambda: out))
        self.tx_labels.append(label)
        return entries

    def other(self, label, fn, result=None):
        if result is None:
            fn, result = returning(fn)
        self.contenders.append((label, fn, result))

    def run(self):
        try:
            errs = {}
            for label, _, res in self.contenders:
                errs[label] = check('%s %s: %s' % (self.name, self.size, label), res(), self.want)
            med, reps, samples = time_contenders([(lab, fn) for lab, fn, _ in self.contenders])
            for label, _, res in self.contenders:
                if label in self.tx_labels:
                    check('%s %s: %s (after timing)' % (self.name, self.size, label), res(), self.want)
        finally:
            for p in self.programs:
                self.txl.free_program(p)
        return {'kernel': self.name, 'size': self.size, 'times': med, 'reps': reps,
                'samples': samples, 'maxrelerr': errs, 'order': [c[0] for c in self.contenders],
                'notes': self.notes}


def sparse_matmul_bench(txl, rng, n):
    """(a) C = A·B with an "i" -> "k" map, 5 % dense vs full, one process."""
    src = read_tx('sparse_matmul.tx')
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    M5 = rng.uniform(size=(n, n)) < 0.05
    full = np.ones((n, n), dtype=bool)
    want = (A * M5) @ B
    sb = SparseBench(txl, 'sparse matmul, "i" -> "k"', 'n=%d' % n, want)
    C5, Cf, Cd = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    e5 = sb.tx('tx, 5% map', src, 'sparse_matmul.tx', {'A': A, 'B': B, 'C': C5}, {'L': (M5, 1)}, C5)
    sb.notes['entries 5%'] = e5['L']
    sb.notes['entries full'] = n * n
    # the full map and the dense program compute A·B, not the 5 % product:
    # checked against A @ B here, timed with the others
    sb.tx('tx, full map', src, 'sparse_matmul.tx', {'A': A, 'B': B, 'C': Cf}, {'L': (full, 1)}, Cf)
    sb.tx('tx, no map (dense, BLAS)', dense_of(src), 'matmul_dense.tx', {'A': A, 'B': B, 'C': Cd}, {}, Cd)
    dense = A @ B
    lab_f, fn_f, _ = sb.contenders[1]
    lab_d, fn_d, _ = sb.contenders[2]
    check('sparse matmul: tx, full map', Cf, dense)
    check('sparse matmul: tx, no map', Cd, dense)
    sb.contenders[1] = (lab_f, fn_f, lambda: Cf - dense + want)     # same check as the others
    sb.contenders[2] = (lab_d, fn_d, lambda: Cd - dense + want)
    sb.other('numpy (A*M) @ B', lambda: (A * M5) @ B)
    Am = A * M5
    sb.other('numpy Am @ B (premasked)', lambda: Am @ B)
    res = sb.run()
    check('sparse matmul: tx, full map (after timing)', Cf, dense)
    t = res['times']
    res['ratio'] = t['tx, 5% map'] / t['tx, full map']
    return res


def pair_energy_bench(txl, rng, o, v, density):
    """(b) DLPNO-like pair energy with a "i,j" -> "a,b" map: random pairs,
    and pair domains (a and b both in a per-pair orbital domain)."""
    src = read_tx('pair_energy.tx')
    T = rng.standard_normal((o, o, v, v))
    K = rng.standard_normal((o, o, v, v))
    P = rng.uniform(size=(o, o, v, v)) < density
    dom = rng.uniform(size=(o, o, v)) < math.sqrt(density)
    Pd = dom[:, :, :, None] & dom[:, :, None, :]
    out = []
    for label, mask in (('random (a,b) pairs', P), ('pair domains D(i,j)xD(i,j)', Pd)):
        want = np.einsum('ijab,ijab->', T * mask, K)
        sb = SparseBench(txl, 'pair energy, %s' % label, 'o=%d v=%d' % (o, v), want)
        E, Ed = np.zeros(()), np.zeros(())
        e = sb.tx('tx, map', src, 'pair_energy.tx', {'T': T, 'K': K, 'E': E}, {'P': (mask, 2)}, E)
        sb.notes['entries'] = e['P']
        sb.notes['density'] = e['P'] / float(o * o * v * v)
        dense = np.einsum('ijab,ijab->', T, K)
        sb.tx('tx, no map (all entries)', dense_of(src), 'pair_energy_dense.tx',
              {'T': T, 'K': K, 'E': Ed}, {}, Ed)
        check('pair energy: tx, no map', Ed, dense)
        lab, fn, _ = sb.contenders[1]
        sb.contenders[1] = (lab, fn, lambda Ed=Ed, dense=dense, want=want: Ed - dense + want)
        mf = mask.astype(np.float64)
        sb.other('np.einsum(T*mask, K) (masking included)',
                 lambda mask=mask: np.einsum('ijab,ijab->', T * mask, K))
        sb.other('np.einsum(T, mask_f64, K) (3 operands)',
                 lambda mf=mf: np.einsum('ijab,ijab,ijab->', T, mf, K))
        Tm = T * mask
        sb.other('np.einsum(Tm, K) (premasked, masking excluded)',
                 lambda Tm=Tm: np.einsum('ijab,ijab->', Tm, K))
        idx = np.flatnonzero(mask)
        Tf, Kf = T.ravel(), K.ravel()
        sb.other('numpy gather: Tf[idx] @ Kf[idx]', lambda idx=idx: Tf[idx] @ Kf[idx])
        out.append(sb.run())
    return out


def pair_fock_bench(txl, rng, o, v, density):
    """(c) R_ijab = sum_c T_ijac F_cb with a, b, c in the pair domain."""
    src = read_tx('pair_fock.tx')
    T = rng.standard_normal((o, o, v, v))
    F = rng.standard_normal((v, v))
    dom = rng.uniform(size=(o, o, v)) < math.sqrt(density)
    Df = dom.astype(np.float64)
    Pab = Df[:, :, :, None] * Df[:, :, None, :]
    want = np.einsum('ijac,cb->ijab', T * Df[:, :, None, :], F, optimize=True) * Pab
    sb = SparseBench(txl, 'pair Fock term, domains', 'o=%d v=%d' % (o, v), want)
    R = np.zeros((o, o, v, v))
    e = sb.tx('tx, 3 domain maps', src, 'pair_fock.tx', {'T': T, 'F': F, 'R': R},
              {'Da': (dom, 2), 'Db': (dom, 2), 'Dc': (dom, 2)}, R)
    sb.notes['domain size'] = e['Da'] / float(o * o)
    sb.notes['density of (a,b)'] = float(Pab.mean())
    sb.other('numpy einsum(T*Dc, F)*Pab (masking included)',
             lambda: np.einsum('ijac,cb->ijab', T * Df[:, :, None, :], F, optimize=True) * Pab)
    Tm = T * Df[:, :, None, :]
    sb.other('numpy (Tm @ F)*Pab (premasked T, BLAS)', lambda: np.matmul(Tm, F) * Pab)
    return sb.run()


def sparse_suite(txl, rng, quick):
    res = [sparse_matmul_bench(txl, rng, 200 if quick else 600)]
    print('  %-40s 5%% map %-10s full map %-10s ratio %.3f' % (
        res[0]['kernel'], fmt_time(res[0]['times']['tx, 5% map']),
        fmt_time(res[0]['times']['tx, full map']), res[0]['ratio']), flush=True)
    o, v = (6, 30) if quick else (20, 100)
    for r in pair_energy_bench(txl, rng, o, v, 0.15) + [pair_fock_bench(txl, rng, o, v, 0.15)]:
        first = r['order'][0]
        print('  %-40s tx %-10s best numpy %s' % (
            r['kernel'], fmt_time(r['times'][first]),
            fmt_time(min(t for lab, t in r['times'].items() if not lab.startswith('tx'))),
        ), flush=True)
        res.append(r)
    return res


def sparse_md(results):
    out = ['#### Sparse maps (tx(5) §7)\n']
    out.append('Same timing method (medians of interleaved rounds); each row\'s ratio is its '
               'time ÷ the first tensorexpr row (< 1 = faster than tensorexpr with the map). '
               'Every result was checked against numpy\'s masked dense computation.\n')
    for r in results:
        notes = ', '.join('%s %s' % (k, ('%.3g' % v) if isinstance(v, float) else v)
                          for k, v in r['notes'].items())
        out.append('**%s**, %s%s\n' % (r['kernel'], r['size'], ' (' + notes + ')' if notes else ''))
        base = r['times'][r['order'][0]]
        out.append('| contender | time/call | ÷ %s |' % r['order'][0])
        out.append('|---|--:|--:|')
        for lab in r['order']:
            out.append('| %s | %s | %.3f |' % (lab, fmt_time(r['times'][lab]), r['times'][lab] / base))
        if 'ratio' in r:
            out.append('')
            out.append('5 %% map ÷ full map: **%.3f** (target ≤ 0.25: %s).' % (
                r['ratio'], 'met' if r['ratio'] <= 0.25 else 'NOT met'))
        out.append('')
    return '\n'.join(out)


# ---------------------------------------------------------------- output --

def fmt_time(t):
    if t is None:
        return '—'
    if t < 1e-3:
        return '%.3g µs' % (t * 1e6)
    if t < 1.0:
        return '%.3g ms' % (t * 1e3)
    return '%.3g s' % t


def fmt_ratio(r):
    return '—' if r is None else '%.2f' % r


def fmt_rate(res, t):
    if res['kernel'] in ('matvec', 'E=A*B+D') and res['bytes']:
        return '%.1f GB/s' % (res['bytes'] / t / 1e9)
    if res['flops']:
        return '%.1f GFLOP/s' % (res['flops'] / t / 1e9)
    return ''


def summarise(res):
    t = res['times']
    cat = res['category']
    tx = t['tensorexpr']

    def best(cats):
        c = [(t[lab], lab) for lab in t if cat[lab] in cats]
        return min(c) if c else (None, None)
    ein = t.get('einsum')
    bnp, bnp_lab = best(('einsum', 'numpy'))
    bl, bl_lab = best(('openblas',))
    gc_, gc_lab = best(('gcc',))
    r = lambda o: None if o is None else o / tx  # noqa: E731
    base = t.get('tensorexpr baseline')
    return {'tx': tx, 'einsum': ein, 'best_np': bnp, 'best_np_label': bnp_lab, 'baseline': base,
            'r_baseline': r(base),
            'blas': bl, 'blas_label': bl_lab, 'gcc': gc_,
            'r_einsum': r(ein), 'r_np': r(bnp), 'r_blas': r(bl), 'r_gcc': r(gc_)}


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def tables_md(data):
    """Markdown for one thread count."""
    th = data['threads']
    out = []
    out.append('### OPENBLAS_NUM_THREADS=%d\n' % th)
    if 'other_load' in data:
        out.append('Other processes used %.0f%% of the CPUs during this run (1-min load '
                   'average %s at the start, %s at the end)%s.\n' % (
                       100 * data['other_load'], data['loadavg'][0], data['loadavg'][1],
                       ' — the machine was NOT quiet, expect noise'
                       if data['other_load'] > 0.10 else ''))
    out.append('Times are medians of %d interleaved rounds (each round one untimed call, '
               'then ≥ %d ms of back-to-back calls) per call; ratios are speedups of tensorexpr '
               '(contender time / tensorexpr time, > 1 = tensorexpr faster).\n'
               % (data['rounds'], round(data['min_measure'] * 1000)))
    out.append('| kernel | size | tensorexpr | tx rate | numpy einsum | best numpy | '
               'OpenBLAS | gcc -O2 | tx/einsum | tx/best-numpy | tx/OpenBLAS | tx/gcc-O2 |')
    out.append('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
    for res in data['kernels']:
        s = summarise(res)
        out.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            res['kernel'], res['size'], fmt_time(s['tx']), fmt_rate(res, s['tx']),
            fmt_time(s['einsum']),
            '%s (%s)' % (fmt_time(s['best_np']), s['best_np_label']),
            fmt_time(s['blas']), fmt_time(s['gcc']),
            fmt_ratio(s['r_einsum']), fmt_ratio(s['r_np']), fmt_ratio(s['r_blas']),
            fmt_ratio(s['r_gcc'])))
    g = geomean([summarise(r)['r_einsum'] for r in data['kernels']])
    out.append('')
    out.append('Geometric mean of tensorexpr/einsum speedups: **%.2f** over %d kernels.\n'
               % (g, len(data['kernels'])))
    if any('tensorexpr baseline' in r['times'] for r in data['kernels']):
        out.append('Against the baseline build (%s), side by side in this run:\n' % data.get('baseline'))
        out.append('| kernel | size | tensorexpr | baseline | baseline/tensorexpr |')
        out.append('|---|---|--:|--:|--:|')
        for res in data['kernels']:
            s = summarise(res)
            out.append('| %s | %s | %s | %s | %s |' % (res['kernel'], res['size'], fmt_time(s['tx']),
                                                      fmt_time(s['baseline']), fmt_ratio(s['r_baseline'])))
        out.append('')
    out.append('All contenders, with rates:\n')
    out.append('| kernel | size | contender | time/call | rate | speedup of tensorexpr | reps×rounds |')
    out.append('|---|---|---|--:|--:|--:|--:|')
    for res in data['kernels']:
        tx = res['times']['tensorexpr']
        for lab, t in res['times'].items():
            out.append('| %s | %s | %s | %s | %s | %s | %d×%d |' % (
                res['kernel'], res['size'], lab, fmt_time(t), fmt_rate(res, t),
                '' if lab == 'tensorexpr' else '%.2f' % (t / tx),
                res['reps'][lab], data['rounds']))
    cl = data['compile']
    out.append('')
    out.append('Compile latency (bench/compile10.tx: %d statements, n=%d; medians of %d): '
               'tx_compile %.2f ms + first tx_run %.2f ms − steady run %.3f ms = '
               '**%.2f ms** (of which JIT codegen+libtcc, per tx_timing(-1): %.2f ms).\n'
               % (cl['statements'], cl['n'], cl['reps'], cl['compile_s'] * 1e3,
                  cl['first_run_s'] * 1e3, cl['steady_s'] * 1e3, cl['latency_s'] * 1e3,
                  cl['jit_s'] * 1e3))
    if data.get('sparse'):
        out.append(sparse_md(data['sparse']))
    return '\n'.join(out)


def cpu_snapshot():
    """(wall, busy CPU-seconds of the whole machine, CPU-seconds of this
    process and of the children it has waited for: bench/stream and
    bench/tx_loop, which peers.py runs, are ours, not other processes')."""
    tick = os.sysconf('SC_CLK_TCK')
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = (sum(v[:8]) - v[3] - v[4]) / tick          # all but idle and iowait
    t = os.times()
    return time.perf_counter(), busy, t.user + t.system + t.children_user + t.children_system


def other_load(a, b):
    """Share of the machine's CPUs that other processes used between snapshots."""
    wall = b[0] - a[0]
    other = (b[1] - a[1]) - (b[2] - a[2])
    return max(0.0, other / (wall * (os.cpu_count() or 1))) if wall > 0 else 0.0


def loadavg():
    with open('/proc/loadavg') as f:
        return f.read().split()[0]


def machine_info():
    model = '?'
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    flags = ''
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('flags'):
                    fl = line.split(':', 1)[1].split()
                    flags = ' '.join(x for x in ('avx2', 'fma', 'avx512f') if x in fl)
                    break
    except OSError:
        pass
    nproc = subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()
    return {'nproc': nproc, 'cpu': model, 'flags': flags, 'kernel': platform.release(),
            'python': platform.python_version(), 'numpy': np.__version__}


# ------------------------------------------------------------------ main --

def run_suite(threads, quick):
    global ROUNDS, MIN_MEASURE
    if quick:
        ROUNDS, MIN_MEASURE = 3, 0.005
    blas = load_blas()
    got = blas.openblas_get_num_threads()
    if got != threads:
        die('OpenBLAS runs %d threads, expected %d (OPENBLAS_NUM_THREADS must be set '
            'before OpenBLAS loads)' % (got, threads))
    txlib = load_tx()
    if not os.path.exists(LIBELEM):
        die('%s is missing: run `sh bench/run.sh`' % LIBELEM)
    elem = ctypes.CDLL(LIBELEM)
    elem.elem_fma.restype = None
    elem.elem_fma.argtypes = [c_size_t, c_void_p, c_void_p, c_void_p, c_void_p]

    rng = np.random.default_rng(20240601)
    txl = TxLib(txlib)
    base = TxLib(load_tx(ARGS['baseline'])) if ARGS['baseline'] else None
    results = []
    t_start = time.perf_counter()
    snap0, load0 = cpu_snapshot(), loadavg()
    try:
        for make in build_kernels(rng, blas, elem, quick):
            res = run_kernel(txl, make, base)
            s = summarise(res)
            print('  %-24s %-12s tx %-10s einsum %-10s  tx/einsum %s' % (
                res['kernel'], res['size'], fmt_time(s['tx']), fmt_time(s['einsum']),
                fmt_ratio(s['r_einsum'])), flush=True)
            results.append(res)
            gc.collect()
        comp = compile_latency(txlib, rng)
        sparse = sparse_suite(txl, rng, quick)
        snap1, load1 = cpu_snapshot(), loadavg()
    except BenchError as e:
        die(str(e))
    finally:
        txl.close()
        if base:
            base.close()
    data = {
        'threads': threads, 'quick': quick, 'rounds': ROUNDS, 'min_measure': MIN_MEASURE,
        'kernels': results, 'compile': comp, 'baseline': ARGS['baseline'], 'sparse': sparse, 'openblas_config': blas.openblas_get_config().decode(),
        'argv': [sys.executable] + sys.argv, 'elapsed_s': time.perf_counter() - t_start,
        'date': datetime.datetime.now().astimezone().isoformat(timespec='seconds'),
        'machine': machine_info(),
        'other_load': other_load(snap0, snap1), 'loadavg': [load0, load1],
    }
    print()
    print(tables_md(data))
    print('(%.0f s)' % data['elapsed_s'])
    os.makedirs(OUTDIR, exist_ok=True)
    path = os.path.join(OUTDIR, 'results-t%d.json' % threads)
    with open(path, 'w') as f:
        json.dump(data, f, indent=1)
    print('wrote %s' % os.path.relpath(path, ROOT))


def report():
    runs = []
    for name in sorted(os.listdir(OUTDIR)) if os.path.isdir(OUTDIR) else []:
        m = re.fullmatch(r'results-t(\d+)\.json', name)
        if m:
            with open(os.path.join(OUTDIR, name)) as f:
                runs.append(json.load(f))
    if not runs:
        die('no build/bench/results-t*.json: run `sh bench/run.sh`')
    runs.sort(key=lambda d: d['threads'])
    m = runs[0]['machine']
    cmd = os.environ.get('BENCH_COMMAND', 'sh bench/run.sh')
    lines = ['# tensorexpr benchmark results', '',
             '- Date: %s' % runs[-1]['date'],
             '- Machine: `nproc` = %s; CPU: %s (%s); Linux %s' % (
                 m['nproc'], m['cpu'], m['flags'], m['kernel']),
             '- Software: Python %s, numpy %s, OpenBLAS `%s`' % (
                 m['python'], m['numpy'], runs[0]['openblas_config']),
             '- Command: `%s`, which runs, one process each:' % cmd]
    if os.environ.get('OPENBLAS_CORETYPE'):  # run.sh's, where OpenBLAS took the CPU for a Prescott
        lines[-1] = ('- Command: `%s`, with OPENBLAS_CORETYPE=%s in the environment of every run (run.sh sets it '
                     'where OpenBLAS takes the CPU for a Prescott), which runs, one process each:' % (
                         cmd, os.environ['OPENBLAS_CORETYPE']))
    if os.environ.get('OPENBLAS_THREAD_TIMEOUT'):  # run.sh's: idle OpenBLAS threads sleep at once
        lines[-1] = lines[-1].replace(', which runs', ', with OPENBLAS_THREAD_TIMEOUT=%s (run.sh sets it: '
                                      'OpenBLAS\'s idle threads sleep at once rather than poll for a tenth of '
                                      'a second on the next contender\'s cores), which runs'
                                      % os.environ['OPENBLAS_THREAD_TIMEOUT'], 1)
    for d in runs:
        lines.append('  - `OPENBLAS_NUM_THREADS=%d %s`%s (%.0f s)' % (
            d['threads'], ' '.join(os.path.relpath(a, ROOT) if a.endswith('.py') else a
                                   for a in d['argv']),
            ' — QUICK smoke run, not representative' if d['quick'] else '', d['elapsed_s']))
    lines.append('  - `/usr/bin/python3 bench/bench.py --report` (writes this file)')
    lines.append('')
    lines.append('Speedups (tx/…) are contender time ÷ tensorexpr time: > 1 means '
                 'tensorexpr is faster. "best numpy" is the fastest numpy spelling '
                 '(einsum included). Rates: GFLOP/s (mul+add counted separately; for '
                 'ao2mo and the CCSD residual, the flops of numpy\'s optimal einsum '
                 'path), GB/s for matvec (A once) and E=A*B+D (3 reads + 1 write).')
    lines.append('')
    for d in runs:
        lines.append(tables_md(d))
        lines.append('')
    lines.append('Summary: geometric mean of tensorexpr/einsum speedups — ' + '; '.join(
        '%d thread%s: %.2f' % (d['threads'], '' if d['threads'] == 1 else 's',
                               geomean([summarise(r)['r_einsum'] for r in d['kernels']]))
        for d in runs) + '.')
    lines.append('')
    with open(RESULTS_MD, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines))
    print('wrote %s' % os.path.relpath(RESULTS_MD, ROOT))


if __name__ == '__main__':
    if ARGS['report']:
        report()
    else:
        run_suite(ARGS['threads'], ARGS['quick'])
