#!/usr/bin/python3
"""Numerical test runner: runs every tests/num/*.tx through `txc run` and
compares its outputs with numpy.

    /usr/bin/python3 tests/run_num.py [--txc build/txc] [-O0 -O1 -O2 ...]
                                      [--backend tcc|cc] [-j N] [--selfcheck] [FILES...]

Each test file is a .tx program with directive comments:

    #! setup:  Python, run in order in one namespace (np, rand, rand32, spd,
               pos); every variable named like an in/inout tensor is an input
    #! expect: Python, run after setup; computes every out/inout tensor
    #! tol:    relative tolerance (default 1e-12)
    #! pass-dims   pass Python ints named like a symbolic dim as -D name=value
    #! same-bits: NAME ...  outputs that tests/run_cc.py's standalone C must
               write bit for bit as `txc run` does (tx(5): long sums)

A run passes when, for every out/inout tensor, the shape matches exactly, the
dtype is float32 (f32), float64 (f64), complex64 (c64) or complex128 (c128), and
max|got - expected| <= tol * max(1, max|expected|).

--backend cc runs each case twice, with the default backend (libtcc) and
with `--backend cc` (the system compiler, cached): both must pass, the cc
run must report that cc compiled or found its object (not a fallback to
libtcc), and its outputs must equal libtcc's bit for bit (complex outputs:
within 8 ulp, see near_complex).

--selfcheck runs only the Python side (setup, expect, shapes and dtypes of
inputs and expectations against the declarations), without txc.

This module is also imported by tests/run_cc.py.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unicodedata
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NUMDIR = os.path.join(HERE, 'num')
DEFAULT_TXC = os.path.join(ROOT, 'build', 'txc')
DEFAULT_TOL = 1e-12
TIMEOUT = 30
CC_TIMEOUT = 180   # the cc tier's first compilation of a large program at -O3

IDENT = r'[^\W\d]\w*'                # a letter (any script) or _, then \w*
TENSOR_KINDS = ('in', 'out', 'inout', 'tmp')


class TestError(Exception):
    """The test file itself is broken (bad directive, bad setup, ...)."""


class Decl:
    """One declared tensor: kind in/out/inout/tmp, dtype f64/f32/c64/c128,
    extents (each a dim name or an int)."""

    def __init__(self, kind, dtype, name, extents):
        self.kind, self.dtype, self.name, self.extents = kind, dtype, name, extents

    @property
    def np_dtype(self):
        return {'f32': np.float32, 'f64': np.float64, 'c64': np.complex64, 'c128': np.complex128}[self.dtype]

    @property
    def is_complex(self):
        return self.dtype in ('c64', 'c128')

    def __repr__(self):
        return '%s %s %s%s' % (self.kind, self.dtype, self.name, self.extents)


# ---------------------------------------------------------------- parsing --

def strip_comments(src, blank_strings=False):
    """Remove `#` and `//` comments (outside strings). With blank_strings,
    also replace the contents of "..." strings by spaces."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == '"':
            j = src.find('"', i + 1)
            if j < 0:
                j = n - 1
            body = src[i + 1:j]
            out.append('"' + (' ' * len(body) if blank_strings else body) + '"')
            i = j + 1
        elif c == '#' or src.startswith('//', i):
            j = src.find('\n', i)
            if j < 0:
                break
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def split_top(s, sep=','):
    """Split on sep outside [] brackets."""
    parts, depth, cur = [], 0, []
    for c in s:
        if c == '[':
            depth += 1
        elif c == ']':
            depth -= 1
        if c == sep and depth == 0:
            parts.append(''.join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append(''.join(cur))
    return parts


class ExtentExpr(str):
    """An extent written as a dim expression (o+v, 2*n-1)."""

    def names(self):
        return re.findall(IDENT, self)

    def value(self, dims):
        return int(eval(self, {'__builtins__': {}}, dict(dims)))


def extent_value(e, dims):
    if isinstance(e, int):
        return e
    if isinstance(e, ExtentExpr):
        return e.value(dims)
    return dims[e]


def parse_decls(src):
    """Return (tensor decls in order, const dims {name: int}, declared
    symbolic dims [names]) from the program's declaration statements."""
    text = strip_comments(src)
    decls, consts, symdims = [], {}, []
    for stmt in text.split(';'):
        stmt = stmt.strip()
        # a keyword opens a declaration only before a name (contextual keywords)
        m = re.match(r'(inout|in|out|tmp|dim)\s+(?=[^\W\d])(.*)\Z', stmt, re.S)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2).strip()
        if kind == 'dim':
            for item in split_top(rest):
                mi = re.match(r'\s*(%s)\s*(?:=\s*(\d+)\s*)?\Z' % IDENT, item)
                if not mi:
                    raise TestError('cannot parse dim declaration item %r' % item)
                if mi.group(2) is not None:
                    consts[mi.group(1)] = int(mi.group(2))
                else:
                    symdims.append(mi.group(1))
            continue
        dtype = 'f64'
        mt = re.match(r'(f32|f64|c64|c128)\s+(?=[^\W\d])(.*)\Z', rest, re.S)
        if mt:
            dtype, rest = mt.group(1), mt.group(2).strip()
        for item in split_top(rest):
            mi = re.match(r'\s*(%s)\s*(?:\[([^\]]*)\])?\s*\Z' % IDENT, item)
            if not mi:
                raise TestError('cannot parse %s declaration item %r' % (kind, item))
            exts = []
            if mi.group(2) is not None:
                for e in mi.group(2).split(','):
                    e = e.strip()
                    if re.fullmatch(r'\d+', e):
                        exts.append(int(e))
                    elif re.fullmatch(IDENT, e):
                        exts.append(e)
                    elif re.fullmatch(r'[\w\s+*()-]+', e):
                        exts.append(ExtentExpr(e))  # a dim expression: o+v, 2*n-1
                    else:
                        raise TestError('cannot parse extent %r' % e)
            decls.append(Decl(kind, dtype, mi.group(1), exts))
    return decls, consts, symdims


def dim_order(src, decls, consts, symdims):
    """Symbolic dims in order of first appearance in the source text."""
    names = set(symdims)
    for d in decls:
        for e in d.extents:
            for n in (e.names() if isinstance(e, ExtentExpr) else [e] if isinstance(e, str) else []):
                if n not in consts:
                    names.add(n)
    text = strip_comments(src, blank_strings=True)
    order = []
    for tok in re.findall(IDENT, text):
        if tok in names and tok not in order:
            order.append(tok)
    return order


class Case:
    """A parsed test file."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, encoding='utf-8') as f:
            self.src = f.read()
        self.setup, self.expect = [], []
        self.tol = DEFAULT_TOL
        self.pass_dims = False
        self.same_bits = []
        for lineno, line in enumerate(self.src.splitlines(), 1):
            s = line.lstrip()
            if not s.startswith('#!'):
                continue
            body = s[2:].strip()
            m = re.match(r'(setup|expect|tol)\s*:(.*)\Z', body)
            if m:
                key, val = m.group(1), m.group(2)
                if val.startswith(' '):
                    val = val[1:]
                if key == 'setup':
                    self.setup.append(val)
                elif key == 'expect':
                    self.expect.append(val)
                else:
                    try:
                        self.tol = float(val)
                    except ValueError:
                        raise TestError('%s:%d: bad tol %r' % (self.name, lineno, val))
            elif body == 'pass-dims':
                self.pass_dims = True
            elif body.startswith('same-bits:'):
                self.same_bits += body[len('same-bits:'):].split()
            else:
                raise TestError('%s:%d: unknown directive %r' % (self.name, lineno, body))
        self.decls, self.consts, self.symdims = parse_decls(self.src)
        self.dims = dim_order(self.src, self.decls, self.consts, self.symdims)
        self.io = [d for d in self.decls if d.kind != 'tmp']
        self.seed = zlib.crc32(self.name.encode('utf-8'))


# ------------------------------------------------------------ python side --

def make_namespace(seed):
    rng = np.random.default_rng(seed)

    def rand(*shape):
        """uniform in [-1, 1), float64"""
        return np.asarray(rng.uniform(-1.0, 1.0, size=shape), dtype=np.float64)

    def rand32(*shape):
        """uniform in [-1, 1), float32"""
        return rand(*shape).astype(np.float32)

    def pos(*shape):
        """uniform in [0.5, 2), float64 (for divisors)"""
        return np.asarray(rng.uniform(0.5, 2.0, size=shape), dtype=np.float64)

    def spd(n):
        """random symmetric positive-definite n x n float64 matrix"""
        m = rand(n, n)
        return m @ m.T + n * np.eye(n)

    def crand(*shape):
        """real and imaginary parts uniform in [-1, 1), complex128"""
        return rand(*shape) + 1j * rand(*shape)

    def crand64(*shape):
        """crand as complex64"""
        return crand(*shape).astype(np.complex64)

    def hpd(n):
        """random Hermitian positive-definite n x n complex128 matrix"""
        m = crand(n, n)
        return m @ m.conj().T + n * np.eye(n)

    return {'np': np, 'rand': rand, 'rand32': rand32, 'pos': pos, 'spd': spd, 'crand': crand,
            'crand64': crand64, 'hpd': hpd}


def ns_get(ns, name):
    if name in ns:
        return ns[name], True
    alt = unicodedata.normalize('NFKC', name)   # Python normalises identifiers
    if alt in ns:
        return ns[alt], True
    return None, False


def as_declared(value, decl, what):
    a = np.asarray(value)
    if a.dtype != decl.np_dtype:
        raise TestError('%s %s is %s, declared %s (use %s)' % (
            what, decl.name, a.dtype, decl.dtype,
            {'f32': 'rand32/np.float32', 'f64': 'float64 data', 'c64': 'crand64/np.complex64',
             'c128': 'crand/complex128 data'}[decl.dtype]))
    return np.array(a, order='C', copy=True)   # (ascontiguousarray makes 0-d 1-d)


class Prepared:
    """Inputs, resolved dims and expectations of one case."""

    def __init__(self, case):
        self.case = case
        ns = make_namespace(case.seed)
        try:
            exec(compile('\n'.join(case.setup), case.name + ':setup', 'exec'), ns)
        except Exception as e:
            raise TestError('setup raised %s: %s' % (type(e).__name__, e))
        self.inputs = {}
        for d in case.io:
            if d.kind in ('in', 'inout'):
                v, ok = ns_get(ns, d.name)
                if not ok:
                    raise TestError('setup does not define input %s' % d.name)
                self.inputs[d.name] = as_declared(v, d, 'input')
        # sparse maps: a setup variable named like a map is its mask
        self.masks = {}
        for name in re.findall(r'^\s*sparse\s+([^\s:]+)\s*:', '\n'.join(
                l.split('#')[0] for l in open(case.path, encoding='utf-8').read().split('\n')), re.M):
            v, ok = ns_get(ns, name)
            if ok:
                self.masks[name] = np.asarray(v).astype(bool)
        self.dims = self._resolve_dims(ns)
        self.dim_args = []
        if case.pass_dims:
            for name in case.dims:
                v, ok = ns_get(ns, name)
                if ok and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                    self.dim_args.append((name, int(v)))
        try:
            exec(compile('\n'.join(case.expect), case.name + ':expect', 'exec'), ns)
        except Exception as e:
            raise TestError('expect raised %s: %s' % (type(e).__name__, e))
        self.expected = {}
        for d in case.io:
            if d.kind in ('out', 'inout'):
                v, ok = ns_get(ns, d.name)
                if not ok:
                    raise TestError('expect does not define output %s' % d.name)
                a = np.asarray(v)
                if a.dtype.kind not in ('fiuc' if d.is_complex else 'fiu'):
                    raise TestError('expectation of %s has dtype %s' % (d.name, a.dtype))
                a = a.astype(np.complex128 if d.is_complex else np.float64)
                if a.shape != self.shape(d):
                    raise TestError('expectation of %s has shape %s, declared %s' % (
                        d.name, a.shape, self.shape(d)))
                if not np.all(np.isfinite(a)):
                    raise TestError('expectation of %s is not finite' % d.name)
                self.expected[d.name] = a

    def _resolve_dims(self, ns):
        case = self.case
        dims = dict(case.consts)
        for d in case.io:
            if d.name not in self.inputs:
                continue
            shape = self.inputs[d.name].shape
            if len(shape) != len(d.extents):
                raise TestError('input %s has shape %s, declared %s' % (
                    d.name, shape, d.extents))
            for e, s in zip(d.extents, shape):
                if isinstance(e, ExtentExpr):
                    continue  # checked once the dims are known (txc checks it too)
                if isinstance(e, int):
                    want = e
                elif e in dims:
                    want = dims[e]
                else:
                    dims[e] = s
                    continue
                if want != s:
                    raise TestError('input %s has shape %s, declared %s = %s' % (
                        d.name, shape, d.extents, dims))
        for name in case.dims:
            v, ok = ns_get(ns, name)
            isint = ok and isinstance(v, (int, np.integer)) and not isinstance(v, bool)
            if name in dims:
                if case.pass_dims and isint and int(v) != dims[name]:
                    raise TestError('dim %s = %d in setup, %d from input shapes' % (
                        name, v, dims[name]))
            elif case.pass_dims and isint:
                dims[name] = int(v)
            else:
                raise TestError('dim %s is not determined by any input; set it in '
                                'setup and add #! pass-dims' % name)
        return dims

    def shape(self, decl):
        return tuple(extent_value(e, self.dims) for e in decl.extents)


def compare(got, expected, decl, tol, label=''):
    """None if got matches, else a one-line reason."""
    if got.shape != expected.shape:
        return '%s%s: shape %s, expected %s' % (label, decl.name, got.shape, expected.shape)
    if got.dtype != np.dtype(decl.np_dtype):
        return '%s%s: dtype %s, expected %s' % (label, decl.name, got.dtype,
                                                np.dtype(decl.np_dtype))
    g = got.astype(np.complex128 if decl.is_complex else np.float64)
    err = float(np.max(np.abs(g - expected))) if g.size else 0.0
    bound = tol * max(1.0, float(np.max(np.abs(expected))) if expected.size else 0.0)
    if not err <= bound:           # also catches NaN
        return '%s%s: max error %.3g > %.3g (tol %g)' % (label, decl.name, err, bound, tol)
    return None


def one_line(s, limit=600):
    s = ' | '.join(x.strip() for x in s.strip().splitlines() if x.strip())
    return s if len(s) <= limit else s[:limit] + ' ...'


# ---------------------------------------------------------------- running --

def txc_run(txc, case, prep, tmpdir, extra=(), stderr=None):
    """Run `txc run` on the case's inputs in tmpdir. Returns (cmd, outputs
    dict or None, failure reason or None). If STDERR is a list, txc's
    standard error is appended to it."""
    cmd = [txc, 'run', case.path]
    files = {}
    for i, d in enumerate(case.io):
        fn = os.path.join(tmpdir, 't%d.npy' % i)
        files[d.name] = fn
        if d.kind in ('in', 'inout'):
            np.save(fn, prep.inputs[d.name])
        cmd.append('%s=%s' % (d.name, fn))
    for j, (name, mask) in enumerate(sorted(getattr(prep, 'masks', {}).items())):
        fn = os.path.join(tmpdir, 'map%d.npy' % j)
        np.save(fn, mask)
        cmd.append('%s=%s' % (name, fn))
    for name, v in prep.dim_args:
        cmd += ['-D', '%s=%d' % (name, v)]
    cmd += list(extra)
    try:
        limit = CC_TIMEOUT if 'cc' in extra else TIMEOUT
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=limit)
    except subprocess.TimeoutExpired:
        return cmd, None, 'timeout after %d s' % limit
    except OSError as e:
        return cmd, None, 'cannot run txc: %s' % e
    if stderr is not None:
        stderr.append(r.stderr.decode('utf-8', 'replace'))
    if r.returncode != 0:
        return cmd, None, 'exit %d: %s' % (r.returncode,
                                          one_line(r.stderr.decode('utf-8', 'replace')))
    outs = {}
    for d in case.io:
        if d.kind in ('out', 'inout'):
            try:
                outs[d.name] = np.load(files[d.name])
            except Exception as e:
                return cmd, None, 'cannot load output %s: %s' % (d.name, e)
    return cmd, outs, None


def check_outputs(case, prep, outs, tol=None, label=''):
    reasons = []
    for d in case.io:
        if d.kind in ('out', 'inout'):
            why = compare(outs[d.name], prep.expected[d.name], d,
                          case.tol if tol is None else tol, label)
            if why:
                reasons.append(why)
    return '; '.join(reasons) or None


def same_bits(a, b):
    """Equal arrays, NaN where NaN, bit for bit otherwise (-0.0 is not 0.0)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def near_complex(a, b):
    """Complex outputs of the two tiers: GCC 12 vectorises a complex product
    a.re*b.re - a.im*b.im (complex.inc) into vfmaddsub, one rounding fewer,
    despite -ffp-contract=off, so they may differ in the last bits: within
    8 ulp of the largest magnitude, and NaN where NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape or a.dtype.kind != 'c':
        return False
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    ok = ~np.isnan(a)
    if not ok.any():
        return True
    eps = np.finfo(a.real.dtype).eps
    return bool(np.max(np.abs(a[ok] - b[ok])) <= 8 * eps * max(1.0, float(np.max(np.abs(a[ok])))))


def run_one(txc, path, level, backend='tcc'):
    """Returns None on pass, else a failure line."""
    try:
        case = Case(path)
        prep = Prepared(case)
    except TestError as e:
        return '%s %s: bad test: %s' % (os.path.basename(path), level, e)
    with tempfile.TemporaryDirectory(prefix='txnum.') as td:
        cmd, outs, why = txc_run(txc, case, prep, td, [level])
        if why is None:
            why = check_outputs(case, prep, outs)
        if why is None and backend == 'cc':
            errs = []
            cmd, cc_outs, why = txc_run(txc, case, prep, td, [level, '--backend', 'cc', '--time'], errs)
            if why is None and 'backend cc:' not in errs[0]:
                why = 'the cc tier was not used: %s' % one_line(
                    ''.join(l for l in errs[0].splitlines(True) if 'backend' in l))
            if why is None:
                why = check_outputs(case, prep, cc_outs, label='cc ')
            if why is None:
                differ = [n for n in outs if not same_bits(outs[n], cc_outs[n]) and
                          not near_complex(outs[n], cc_outs[n])]
                if differ:
                    why = 'cc and tcc differ in the bits of %s (max |diff| %s)' % (', '.join(differ), ', '.join(
                        '%.3g' % float(np.max(np.abs(outs[n] - cc_outs[n]))) if outs[n].size else '0'
                        for n in differ))
    if why is None:
        return None
    return '%s %s%s: %s: %s' % (case.name, level, ' cc' if backend == 'cc' else '', shlex.join(cmd), why)


def selfcheck_one(path):
    try:
        case = Case(path)
        prep = Prepared(case)
    except TestError as e:
        return '%s: %s' % (os.path.basename(path), e)
    missing = [d.name for d in case.io if d.kind in ('out', 'inout')
               and d.name not in prep.expected]
    if missing:
        return '%s: no expectation for %s' % (case.name, ', '.join(missing))
    if not case.io:
        return '%s: no in/out declarations found' % case.name
    return None


def default_files():
    return sorted(os.path.join(NUMDIR, f) for f in os.listdir(NUMDIR)
                  if f.endswith('.tx'))


def main(argv):
    txc, levels, files, jobs, selfcheck = DEFAULT_TXC, [], [], os.cpu_count() or 2, False
    backend = 'tcc'
    it = iter(argv)
    for a in it:
        if a == '--txc':
            txc = next(it, None)
            if txc is None:
                print('--txc needs a path', file=sys.stderr)
                return 2
        elif a.startswith('--txc='):
            txc = a.split('=', 1)[1]
        elif re.fullmatch(r'-O[0-9]', a):
            levels.append(a)
        elif a == '-j':
            jobs = int(next(it, '1'))
        elif re.fullmatch(r'-j\d+', a):
            jobs = int(a[2:])
        elif a in ('--backend', '--backend=cc', '--backend=tcc'):
            backend = a.split('=', 1)[1] if '=' in a else next(it, None)
            if backend not in ('tcc', 'cc'):
                print('--backend needs tcc or cc', file=sys.stderr)
                return 2
        elif a == '--selfcheck':
            selfcheck = True
        elif a in ('-h', '--help'):
            print(__doc__)
            return 0
        elif a.startswith('-'):
            print('unknown option %s' % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
    files = files or default_files()
    levels = levels or ['-O0', '-O2']

    if selfcheck:
        results = [selfcheck_one(f) for f in files]
    else:
        if not (os.path.isfile(txc) and os.access(txc, os.X_OK)):
            print('txc not found or not executable: %s' % txc, file=sys.stderr)
            return 2
        txc = os.path.abspath(txc)
        work = [(f, lv) for f in files for lv in levels]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            results = list(ex.map(lambda w: run_one(txc, *w, backend=backend), work))
    failed = [r for r in results if r]
    for r in failed:
        print('FAIL ' + r)
    print('%d passed, %d failed' % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
