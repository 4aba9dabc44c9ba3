#!/usr/bin/python3
"""Differential test: txc against the reference evaluator tests/ref/txref.py.

    /usr/bin/python3 tests/run_diff.py [--txc build/txc] [--count K] [--seed S]
        [--seconds T] [--levels 0,1,2] [--cc [--cflags FLAGS]] [--keep DIR]
        [--ext] [--complex] [--skip-known] [-j N] [--programs FILE.tx ...] [--quiet]

Without --programs it draws random programs from tests/ref/gen.py (program i
of seed S is generate("S:i"); --count programs, or as many as --seconds
allow, whichever ends first).  With --programs it checks the given files
(tests/ref/known/*.tx, or programs saved by --keep).

For every program:
  * inputs are random (seeded by the program's text without its comment
    lines): values in [-1, 1), or
    [0.5, 2) for the inputs named on a `# pos: P Q` line; symbolic dims come
    from a `# dims: n=3 m=4` line (else from the same seed, 2..5);
  * the reference evaluates it (in f64; once more in f32 to estimate how much
    rounding the program amplifies; and under each alternative reading of the
    rule, txref.Options, to see whether the program depends on a point that
    4.1 leaves open: such a random program is drawn again, a given one is
    reported as ambiguous when txc matches only an alternative);
  * every `# expect: NAME = numpy expression` (or `# expect: expression` for a
    program with one output) is checked against the reference first: a
    disagreement there is a bug of the reference or of the expectation and
    fails the program;
  * `txc run` runs it at every level of --levels (and with --cc the standalone
    C, compiled like tests/run_cc.py does, is run too), and every output is
    compared with the reference: max|got - ref| <= tol, with
    tol = 1e-10 * max(1, max|ref|) + 100 * 2^-29 * max|ref32 - ref| for f64
    outputs (the second term is the rounding the f32 evaluation shows, scaled
    to f64: sums of many terms, cancellations), and
    tol = 1e-5 * max(1, max|ref|) + 20 * max|ref32 - ref| for f32 ones,
    and for f64 outputs of a program that stores f32 values (an f32 target,
    or a `let` of f32 operands): 4.2 lets such a statement accumulate in
    f32, and that rounding, of the size of the terms, flows into whatever
    reads it.

A disagreement is then named: txref.QUIRKS are models of txc's known
deviations from 4.1 (issue 14); the smallest set of them under which the
reference reproduces txc's values is printed as its cause ("unexplained" if
none does; "f32-arithmetic" for an error of f32 size in a program with f32
data).  With --skip-known, a random program whose values change under any
quirk is skipped instead of run, and f64 outputs of programs with any f32
data get the f32 tolerance: what txc should pass today.  --keep DIR saves each
failing program, its reasons as comments: `--programs DIR/*.tx` reruns them
on the same data.

A compile error of txc on a program the reference accepts is a failure,
unless the program uses a feature txc does not implement yet
(txref.FEATURES_LATER: dims as numbers, delta, comparisons, where, *= /=,
repeated target labels): then it is skipped.  So is a program the reference
cannot evaluate (sparse maps, linear algebra).  Complex programs (c64, c128:
complex inputs, both parts uniform like real ones, compared by the modulus
of the error) come from --complex (gen.py --complex) and from --programs
(tests/ref/known/complex_*.tx).

Prints each disagreement (the program, the output, the max error) and a
closing line "N passed, N failed".  Exit status 1 if any failed.
"""

import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, 'ref'))
sys.path.insert(0, HERE)

import numpy as np            # noqa: E402
import txref                  # noqa: E402
import gen                    # noqa: E402

TIMEOUT = 60
EPS_RATIO = 2.0 ** -29        # f64 epsilon / f32 epsilon
HUGE = 1e8
ILL = 1e-3                    # f32 evaluation off by more than this (relative): ill-conditioned


class Prog:
    """A program, its inputs and the reference's results."""

    def __init__(self, src, name, path=None):
        self.src, self.name, self.path = src, name, path
        self.dims_line, self.pos, self.expect = {}, set(), []
        for line in src.splitlines():
            m = re.match(r'\s*#\s*(dims|pos|expect)\s*:(.*)$', line)
            if not m:
                continue
            key, val = m.group(1), m.group(2).strip()
            if key == 'dims':
                for item in val.split():
                    k, v = item.split('=')
                    self.dims_line[k] = int(v)
            elif key == 'pos':
                self.pos |= set(val.split())
            else:
                self.expect.append(val)
        self.prog = txref.parse(src, name)      # TxError propagates
        # seeded by the program without its comment lines, so that a program
        # saved by --keep (its reasons prepended as comments) gets the same data
        body = '\n'.join(l for l in src.splitlines() if not l.lstrip().startswith('#'))
        rng = np.random.default_rng(zlib.crc32(body.encode('utf-8')))
        dims = dict(self.prog.consts)
        for d in self.prog.dim_names():
            dims[d] = self.dims_line.get(d) or int(rng.integers(2, 6))
        self.dims = dims
        self.inputs = {}
        for d in self.prog.decls:
            if d.kind in ('in', 'inout'):
                shape = self.prog.shape(d, dims)
                lo, hi = (0.5, 2.0) if d.name in self.pos else (-1.0, 1.0)
                a = rng.uniform(lo, hi, size=shape)
                if d.dtype in ('c64', 'c128'):   # both parts in the same range
                    a = a + 1j * rng.uniform(lo, hi, size=shape)
                self.inputs[d.name] = np.array(a, dtype={'f32': np.float32, 'f64': np.float64,
                                                         'c64': np.complex64, 'c128': np.complex128}[d.dtype])
        self.symdims = {k: v for k, v in dims.items() if k not in self.prog.consts}
        self.has_f32 = any(d.dtype in ('f32', 'c64') for d in self.prog.decls)
        # 4.2: a statement whose target is f32 may accumulate in f32, so its
        # stored values carry f32 rounding of the terms' size (not of the
        # result's, which cancellation can make small), and every output
        # computed from them inherits it: f64 outputs then get the f32
        # tolerance.  f32 inputs alone do not loosen anything: both sides
        # read the same rounded values and compute in f64.
        # A `let` whose operands are all f32 is an f32 value too.
        f32_lets = set()
        let_names = {s.name for s in self.prog.stmts if s.kind in ('let', 'lettensor')}
        for s in self.prog.stmts:
            if s.kind in ('let', 'lettensor'):
                names = {n for n in leaf_names(s.rhs)       # dims are numbers
                         if n in self.prog.tensors or n in f32_lets or n in let_names}
                if names and all(n in f32_lets or (n in self.prog.tensors and
                                                   self.prog.tensors[n].dtype in ('f32', 'c64'))
                                 for n in names):
                    f32_lets.add(s.name)
        self.writes_f32 = bool(f32_lets) or any(
            s.kind == 'assign' and self.prog.tensors[s.target].dtype in ('f32', 'c64')
            for s in self.prog.stmts)
        self.loose_mixed = self.writes_f32

    def evaluate(self):
        """Reference results: self.ref, self.ref32, self.alts [(Options, outs)]."""
        with np.errstate(all='ignore'):
            self.ref = self.prog.run(self.inputs, self.symdims)
            self.ref32 = self.prog.run(self.inputs, self.symdims, dtype=np.float32)
            self.alts = []
            for o in txref.Options.alternatives():
                try:
                    self.alts.append((o, self.prog.run(self.inputs, self.symdims, o)))
                except txref.TxError as e:
                    self.alts.append((o, e))

    def decl(self, name):
        return self.prog.tensors[name]

    def tol(self, name):
        ref, r32 = wide(self.ref[name]), wide(self.ref32[name])
        scale = max(1.0, float(np.max(np.abs(ref))) if ref.size else 0.0)
        d32 = float(np.max(np.abs(ref - r32))) if ref.size else 0.0
        if not np.isfinite(d32):
            d32 = scale
        if self.decl(name).dtype in ('f32', 'c64') or (self.loose_mixed and self.has_f32):
            return 1e-5 * scale + 20 * d32
        return 1e-10 * scale + 100 * EPS_RATIO * d32

    def sane(self):
        """None if the program's values are tame enough to compare, else why."""
        for name, v in self.ref.items():
            v = wide(v)
            if not np.all(np.isfinite(v)):
                return '%s is not finite' % name
            if v.size and np.max(np.abs(v)) > HUGE:
                return '%s is huge (%.3g)' % (name, np.max(np.abs(v)))
            r32 = wide(self.ref32[name])
            scale = max(1.0, float(np.max(np.abs(v))) if v.size else 0.0)
            d = float(np.max(np.abs(v - r32))) if v.size else 0.0
            if not d <= ILL * scale:
                return '%s is ill-conditioned (f32 evaluation off by %.3g)' % (name, d)
        return None

    def known_quirks(self):
        """The known deviations of the compiler (txref.QUIRKS) that change
        this program's values."""
        out = []
        for qk in sorted(txref.QUIRKS):
            try:
                with np.errstate(all='ignore'):
                    r = self.prog.run(self.inputs, self.symdims, txref.Options(quirks=[qk]))
            except txref.TxError:
                out.append(qk)
                continue
            if any(differs(r[n], self.ref[n], self.tol(n)) for n in self.ref):
                out.append(qk)
        return out

    def ambiguous(self):
        """The alternative readings under which some output differs."""
        out = []
        for o, res in self.alts:
            if isinstance(res, txref.TxError):
                out.append(o)
                continue
            for name in self.ref:
                if differs(res[name], self.ref[name], self.tol(name)):
                    out.append(o)
                    break
        return out


STATS_LOCK = threading.Lock()


def bump(stats, key):
    with STATS_LOCK:
        stats[key] = stats.get(key, 0) + 1


def leaf_names(node):
    """The tensor and let names a parsed expression (txref's nested tuples,
    ('idx', name, labels) for a reference) reads."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        if isinstance(n, tuple) and n:
            if n[0] == 'idx' and len(n) >= 2 and isinstance(n[1], str):
                out.add(n[1])
            elif n[0] == 'name' and len(n) >= 2 and isinstance(n[1], str):
                out.add(n[1])
            todo.extend(x for x in n[1:] if isinstance(x, (tuple, list)))
        elif isinstance(n, list):
            todo.extend(x for x in n if isinstance(x, (tuple, list)))
    return out


def wide(a):
    """A as float64, or complex128 if it is complex."""
    a = np.asarray(a)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def differs(got, ref, tol):
    got, ref = wide(got), wide(ref)
    if got.shape != ref.shape:
        return True
    if not got.size:
        return False
    err = float(np.max(np.abs(got - ref)))
    return not err <= tol


def maxerr(got, ref):
    got, ref = wide(got), wide(ref)
    if got.shape != ref.shape:
        return float('inf')
    return float(np.max(np.abs(got - ref))) if got.size else 0.0


def one_line(s, limit=800):
    s = ' | '.join(x.strip() for x in s.strip().splitlines() if x.strip())
    return s if len(s) <= limit else s[:limit] + ' ...'


# ------------------------------------------------------------------ checks --

def check_expect(p):
    """The `# expect:` lines against the reference; a list of problems."""
    probs = []
    ns = {'np': np}
    ns.update({k: wide(v) for k, v in p.inputs.items()})
    ns.update({k: v for k, v in p.dims.items()})
    outs = [d.name for d in p.prog.decls if d.kind in ('out', 'inout')]
    for e in p.expect:
        m = re.match(r'([^\W\d]\w*)\s*=(?!=)\s*(.*)$', e)
        if m and m.group(1) in outs:
            name, expr = m.group(1), m.group(2)
        elif len(outs) == 1:
            name, expr = outs[0], e
        else:
            probs.append('cannot tell which output "# expect: %s" is about' % e)
            continue
        try:
            want = wide(eval(expr, ns))
        except Exception as ex:
            probs.append('expect %s: %s: %s' % (name, type(ex).__name__, ex))
            continue
        ref = wide(p.ref[name])
        if want.shape != ref.shape:
            want = np.broadcast_to(want, ref.shape) if want.size == 1 else want
        if differs(ref, want, max(p.tol(name), 1e-9 * max(1.0, float(np.max(np.abs(want)))
                                                          if want.size else 1.0))):
            probs.append('REFERENCE disagrees with "# expect: %s": max error %.3g'
                         % (e, maxerr(ref, want)))
    return probs


def run_txc(txc, p, tmpdir, level):
    """(outputs dict, None) or (None, (exit code, message))."""
    path = os.path.join(tmpdir, 'prog.tx')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(p.src)
    cmd = [txc, 'run', path]
    files = {}
    for k, d in enumerate(p.prog.decls):
        if d.kind == 'tmp':
            continue
        fn = os.path.join(tmpdir, 't%d.npy' % k)
        files[d.name] = fn
        if d.kind in ('in', 'inout'):
            np.save(fn, p.inputs[d.name])
        elif os.path.exists(fn):
            os.unlink(fn)
        cmd.append('%s=%s' % (d.name, fn))
    for k, v in p.symdims.items():
        cmd += ['-D', '%s=%d' % (k, v)]
    cmd.append('-O%s' % level)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, (-1, 'timeout after %d s' % TIMEOUT)
    if r.returncode != 0:
        return None, (r.returncode, one_line(r.stderr.decode('utf-8', 'replace')))
    outs = {}
    for d in p.prog.decls:
        if d.kind in ('out', 'inout'):
            outs[d.name] = np.load(files[d.name])
    return outs, None


def run_cc(txc, cc, cflags, p, tmpdir):
    """The standalone C, as tests/run_cc.py builds it: (outputs, None) or
    (None, (code, message))."""
    import run_num as rn
    import run_cc as rc
    path = os.path.join(tmpdir, 'prog.tx')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(p.src)
    case = rn.Case(path)

    class Prep:
        dims = p.dims
        inputs = p.inputs

        def shape(self, d):
            return p.prog.shape(p.prog.tensors[d.name], p.dims)
    prep = Prep()
    progc, progh = os.path.join(tmpdir, 'prog.c'), os.path.join(tmpdir, 'prog.h')
    why = rc.run([txc, path, '-o', progc, '--header', progh, '--name', 'prog', '--no-blas'],
                 'emit')
    if why:
        return None, (1, why)
    src, raw = rc.driver_source(case, prep, tmpdir)
    mainc = os.path.join(tmpdir, 'main.c')
    with open(mainc, 'w') as f:
        f.write(src)
    for d in case.io:
        if d.kind in ('in', 'inout'):
            p.inputs[d.name].astype(rc.RAWTYPE[d.dtype]).tofile(raw[d.name])
    exe = os.path.join(tmpdir, 'prog')
    why = rc.run([cc, '-std=c99', '-pedantic', '-Wall', '-Wextra', '-Werror'] + cflags +
                 [progc, mainc, '-lm', '-o', exe], 'compile')
    if why:
        return None, ('cc', why)
    why = rc.run([exe], 'run')
    if why:
        return None, (3, why)
    outs = {}
    for d in case.io:
        if d.kind in ('out', 'inout'):
            a = np.fromfile(raw[d.name], dtype=rc.RAWTYPE[d.dtype])
            outs[d.name] = a.reshape(p.prog.shape(p.prog.tensors[d.name], p.dims))
    return outs, None


class Result:
    def __init__(self, name, src):
        self.name, self.src = name, src
        self.status = 'pass'         # pass, fail, skip
        self.lines = []
        self.why_skip = ''
        self.causes = []             # short tags, for the campaign's summary
        self.explained = ''

    def fail(self, line, cause=''):
        self.status = 'fail'
        self.lines.append(line)
        if cause:
            self.causes.append(cause)


def explain(p, outs):
    """The smallest sets of txref.QUIRKS (models of the compiler's known
    deviations) under which the reference reproduces every output of `outs`;
    under the default reading of 4.1 if possible, else under an alternative
    one (named after the quirks)."""
    if any(d.dtype == 'f32' for d in p.prog.decls) and all(
            not differs(outs[n], p.ref[n], 1e-5 * max(1.0, float(np.max(np.abs(p.ref[n])))
                                                      if p.ref[n].size else 1.0)
                        + 20 * maxerr(p.ref32[n], p.ref[n])) for n in p.ref):
        return ['f32-arithmetic']
    names = sorted(txref.QUIRKS)
    readings = [txref.Options()] + txref.Options.alternatives()
    for size in range(0, len(names) + 1):
        for rd in readings:
            found = []
            for combo in itertools.combinations(names, size):
                if not combo and not rd.differences():
                    continue
                o = txref.Options(quirks=combo, **{k: getattr(rd, k) for k in rd.CHOICES})
                try:
                    with np.errstate(all='ignore'):
                        r = p.prog.run(p.inputs, p.symdims, o)
                except txref.TxError:
                    continue
                if all(not differs(outs[n], r[n], p.tol(n)) for n in p.ref):
                    found.append('+'.join(combo) + (' (reading %s)' % rd.differences()
                                                    if rd.differences() else ''))
            if found:
                return found
    return []


def check_program(p, opts, res):
    """Run txc (and cc) on a prepared program and compare."""
    unsupported = [f for f in p.prog.features if f in txref.FEATURES_LATER]
    amb = p.ambiguous()
    runs = [('-O%s' % lv, lambda td, lv=lv: run_txc(opts.txc, p, td, lv))
            for lv in opts.levels]
    if opts.cc:
        runs.append(('standalone C', lambda td: run_cc(opts.txc, opts.ccomp, opts.cflags, p, td)))
    for what, fn in runs:
        with tempfile.TemporaryDirectory(prefix='txdiff.') as td:
            outs, err = fn(td)
        if err:
            code, msg = err
            if code == 1 and unsupported:
                res.status = 'skip' if res.status == 'pass' else res.status
                res.why_skip = 'txc does not implement %s yet' % ', '.join(sorted(unsupported))
                return
            if code == 'cc':
                res.fail('%s: the generated C does not compile cleanly: %s' % (what, msg),
                         'standalone C does not compile')
            else:
                res.fail('%s: txc failed (exit %s) on a program the reference evaluates: %s'
                         % (what, code, msg), 'txc rejects' if code == 1 else 'txc run fails')
            continue
        bad = [n for n in p.ref if differs(outs[n], p.ref[n], p.tol(n))]
        if bad and not res.causes:
            why = explain(p, outs)
            res.explained = ' or '.join(why) if why else 'unexplained'
            res.lines.append('cause: %s' % (
                'an error of f32 size: f32 arithmetic where 4.2 wants f64 (or a '
                'wider-than-expected f32 rounding)' if why == ['f32-arithmetic'] else
                'the compiler behaves as the reference with the quirk ' + res.explained
                if why else 'no known quirk reproduces txc\'s values'))
        for name, ref in p.ref.items():
            got = outs[name]
            tol = p.tol(name)
            if name not in bad:
                continue
            note = ''
            if amb:
                alt = [o for o, r in p.alts if not isinstance(r, txref.TxError)
                       and o in amb and not differs(got, r[name], tol)]
                if alt:
                    note = ' (ambiguous program: txc matches the reading %s)' % \
                        alt[0].differences()
            err = maxerr(got, ref)
            res.fail('%s: %s: max error %.3g > tol %.3g (max|ref| %.3g)%s\n      got %s\n      ref %s'
                     % (what, name, err, tol, float(np.max(np.abs(ref))) if ref.size else 0,
                        note, brief(got), brief(ref)), 'wrong value: ' + res.explained)


def brief(a, n=6):
    a = wide(a).ravel()
    s = ' '.join(('%.10g%+.10gj' % (x.real, x.imag)) if np.iscomplexobj(a) else '%.10g' % x for x in a[:n])
    return s + (' ... (%d values)' % a.size if a.size > n else '')


def given_program(path, opts):
    with open(path, encoding='utf-8') as f:
        src = f.read()
    res = Result(os.path.relpath(path), src)
    try:
        p = Prog(src, os.path.basename(path), path)
        p.evaluate()
    except txref.TxError as e:
        if e.kind == 'unsupported':
            res.status, res.why_skip = 'skip', 'the reference does not evaluate it: %s' % e.msg
            return res
        # the reference rejects it: txc must reject it too
        with tempfile.TemporaryDirectory(prefix='txdiff.') as td:
            fn = os.path.join(td, 'prog.tx')
            with open(fn, 'w', encoding='utf-8') as f:
                f.write(src)
            r = subprocess.run([opts.txc, 'check', fn], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        if e.kind in ('syntax', 'compile') and r.returncode == 0:
            res.fail('the reference rejects it (%s) but txc check accepts it' % e, 'txc accepts')
        elif e.kind == 'runtime':
            res.status, res.why_skip = 'skip', 'the reference cannot run it: %s' % e
        return res
    for prob in check_expect(p):
        res.fail(prob, 'reference vs expect')
    amb = p.ambiguous()
    if amb:
        res.lines.append('note: ambiguous under 4.1: differs with %s' %
                         '; '.join(o.differences() for o in amb))
    check_program(p, opts, res)
    return res


def random_program(seed, opts, stats):
    """Draw programs for `seed` until one is tame and unambiguous; check it."""
    for k in range(50):
        src = gen.generate('%s/%d' % (seed, k) if k else seed, opts.ext, opts.complex)
        try:
            p = Prog(src, 'gen_%s' % seed.replace(':', '_'))
            p.evaluate()
        except txref.TxError as e:
            bump(stats, 'redrawn: the reference rejects it (%s)' % e.kind)
            if opts.verbose:
                print('generator produced a program the reference rejects: %s\n%s' % (e, src))
            continue
        why = p.sane()
        if why:
            bump(stats, 'redrawn: ' + why.split(' ', 1)[1].split(' (')[0])
            continue
        amb = p.ambiguous()
        if amb:
            single = sorted({o.differences() for o in amb if ',' not in o.differences()})
            bump(stats, 'redrawn: ambiguous under 4.1 (depends on %s)'
                 % (' and '.join(s.split('=')[0] for s in single) or 'a combination of readings'))
            continue
        res = Result('random program %s' % seed, src)
        if opts.skip_known:
            # known: f32 arithmetic (or f32 accumulation) in statements whose
            # target is f64; compare those outputs with the f32 tolerance
            p.loose_mixed = True
            known = p.known_quirks()
            if known:
                res.status = 'skip'
                res.why_skip = 'its values depend on the known deviation(s) %s' % ', '.join(known)
                bump(stats, 'skipped: depends on known deviation %s' % '+'.join(known))
                return res
        check_program(p, opts, res)
        return res
    res = Result('random program %s' % seed, '')
    res.status, res.why_skip = 'skip', 'no tame program in 50 draws'
    return res


def report(res, keep):
    if res.status != 'fail':
        return
    print('FAIL %s' % res.name)
    for line in res.lines:
        print('    ' + line)
    print('    program:')
    for line in res.src.rstrip('\n').split('\n'):
        print('      | ' + line)
    if keep:
        os.makedirs(keep, exist_ok=True)
        base = re.sub(r'[^\w.-]+', '_', res.name)
        with open(os.path.join(keep, base + '.tx'), 'w', encoding='utf-8') as f:
            for line in res.lines:
                for l in line.split('\n'):
                    f.write('# %s\n' % l.strip())
            f.write(res.src)


def main(argv):
    ap = argparse.ArgumentParser(description='txc against the reference evaluator')
    ap.add_argument('--txc', default=os.path.join(ROOT, 'build', 'txc'))
    ap.add_argument('--count', type=int, default=None)
    ap.add_argument('--seed', default='1')
    ap.add_argument('--seconds', type=float, default=None)
    ap.add_argument('--levels', default='0,2')
    ap.add_argument('--cc', action='store_true', help='also the standalone C')
    ap.add_argument('--ccomp', default=os.environ.get('CC', 'cc'), help='the C compiler for --cc')
    ap.add_argument('--cflags', default='', help='more flags for --cc (e.g. -Wno-unused-parameter)')
    ap.add_argument('--keep', default=None, help='save failing programs in DIR')
    ap.add_argument('--complex', action='store_true',
                    help='random programs with complex tensors (gen.py --complex)')
    ap.add_argument('--ext', action='store_true',
                    help='random programs also use features txc does not have yet')
    ap.add_argument('-j', type=int, default=2)
    ap.add_argument('--programs', nargs='+', default=None)
    ap.add_argument('--skip-known', action='store_true',
                    help='skip random programs whose values depend on a known deviation '
                         'of the compiler (txref.QUIRKS): what passes today')
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('--quiet', action='store_true', help='no per-cause summary')
    opts = ap.parse_args(argv)
    opts.levels = [l.strip().lstrip('-O') for l in opts.levels.split(',') if l.strip()]
    opts.cflags = opts.cflags.split()
    if not (os.path.isfile(opts.txc) and os.access(opts.txc, os.X_OK)):
        print('txc not found or not executable: %s' % opts.txc, file=sys.stderr)
        return 2
    opts.txc = os.path.abspath(opts.txc)
    start = time.time()
    stats = {}
    results = []
    if opts.programs:
        with ThreadPoolExecutor(max_workers=max(1, opts.j)) as ex:
            for res in ex.map(lambda f: given_program(f, opts), opts.programs):
                report(res, opts.keep)
                results.append(res)
    else:
        count = opts.count if opts.count is not None else (None if opts.seconds else 100)
        deadline = start + opts.seconds if opts.seconds else None

        def seeds():
            i = 0
            while (count is None or i < count) and (deadline is None or time.time() < deadline):
                yield '%s:%d' % (opts.seed, i)
                i += 1
        with ThreadPoolExecutor(max_workers=max(1, opts.j)) as ex:
            pending = []
            it = seeds()
            for s in it:
                pending.append(ex.submit(random_program, s, opts, stats))
                if len(pending) >= 2 * max(1, opts.j):
                    res = pending.pop(0).result()
                    report(res, opts.keep)
                    results.append(res)
            for f in pending:
                res = f.result()
                report(res, opts.keep)
                results.append(res)
    passed = sum(r.status == 'pass' for r in results)
    failed = sum(r.status == 'fail' for r in results)
    skipped = [r for r in results if r.status == 'skip']
    for r in skipped:
        if opts.verbose or opts.programs:
            print('skip %s: %s' % (r.name, r.why_skip))
    if not opts.quiet:
        for k in sorted(stats):
            print('# %s: %d' % (k, stats[k]))
        causes = {}
        for r in results:
            for c in set(r.causes):
                causes[c] = causes.get(c, 0) + 1
        for k in sorted(causes):
            print('# failures by kind: %s: %d' % (k, causes[k]))
        print('# %d programs in %.1f s, levels %s%s' % (
            len(results), time.time() - start, ','.join('-O' + l for l in opts.levels),
            ', standalone C' if opts.cc else ''))
    print('%d passed, %d failed%s' % (passed, failed,
                                       ' (%d skipped)' % len(skipped) if skipped else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
