#!/usr/bin/python3
"""backends.py — the two compiled tiers side by side: libtcc (--backend tcc,
the default) and the system compiler (--backend cc), on the same programs
and arrays in one process.

    /usr/bin/python3 bench/backends.py [--rounds N] [--out bench/backends.md]

For each program and tier it measures
  - compile, cold: the first call of a new Program minus one steady call
    (emission + compilation + loading; for cc with an empty cache);
  - compile, warm: the same for a second Program in a new context (cc finds
    its object in the cache; libtcc compiles again);
  - run: the fastest of N steady calls (binding included, the same for both).
Everything runs on one thread (TX_OPTION_THREADS = 1).
The results of both tiers are checked against each other bit for bit and
against numpy before anything is timed. The cache is a fresh temporary
directory (XDG_CACHE_HOME), so the cold figure is a real compilation.
Writes the table to --out (default bench/backends.md) and prints it.
"""
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'python'))
os.environ.setdefault('TENSOREXPR_LIB', os.path.join(ROOT, 'build', 'libtensorexpr.so'))

import numpy as np  # noqa: E402
import tensorexpr as tx  # noqa: E402

rng = np.random.default_rng(7)
THREADS = 1  # one thread: less noise on a shared machine, and the same for both tiers


def softmax_case():
    X = rng.standard_normal((2000, 1000))
    e = np.exp(X - X.max(1, keepdims=True))
    return ('softmax, X 2000×1000', os.path.join(ROOT, 'examples', 'softmax.tx'), {'X': X},
            {'P': e / e.sum(1, keepdims=True), 'lse': X.max(1) + np.log(e.sum(1))})


def elementwise_case():
    n = 10_000_000
    A, B, D = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    return ('E = A*B + D, n = 1e7', os.path.join(HERE, 'elementwise.tx'), {'A': A, 'B': B, 'D': D},
            {'E': A * B + D})


def ccsd_case():
    o, v = 8, 40
    r = lambda *s: rng.standard_normal(s) / 10  # noqa: E731
    V, W, T, X, F, U = r(v, v, o, o), r(v, v, v, v), r(v, v, o, o), r(o, o, o, o), r(o, v), r(v, v, o, o)
    R = (V + np.einsum('abcd,cdij->abij', W, T) + np.einsum('abkl,klij->abij', T, X)
         - np.einsum('kc,acik,bdjl,cdkl->abij', F, T, T, U, optimize=True))
    return ('CCSD-like residual, o = 8, v = 40', os.path.join(HERE, 'ccsd.tx'),
            {'V': V, 'W': W, 'T': T, 'X': X, 'F': F, 'U': U}, {'R': R})


def tanh_case():
    X, W, c = rng.standard_normal((64, 256)), rng.standard_normal((256, 256)) / 16, rng.standard_normal(256)
    return ('tanh layer, 64×256 · 256×256', os.path.join(HERE, 'tanh_layer.tx'), {'X': X, 'W': W, 'c': c},
            {'Y': np.tanh(X @ W + c)})


def where_case():
    A, B = rng.standard_normal((2000, 1000)), rng.standard_normal((2000, 1000))
    return ('where(A > B, A*B, A-B), 2000×1000', os.path.join(HERE, 'where.tx'), {'A': A, 'B': B},
            {'C': np.where(A > B, A * B, A - B)})


def loops_case():
    A, B = rng.standard_normal((256, 256)), rng.standard_normal((256, 256))
    return ('matmul as a loop nest (-O1), n = 256', os.path.join(HERE, 'matmul.tx'), {'A': A, 'B': B},
            {'C': A @ B}, 1)


def first_call(src, name, backend, inputs, level=2):
    p = tx.compile(src, name=name, backend=backend, opt_level=level, threads=THREADS)
    t0 = time.perf_counter()
    out = p(**inputs)
    return p, time.perf_counter() - t0, out


def steady_pair(ps, inputs, rounds):
    """The fastest of ROUNDS steady calls of each program of PS, taken in turn."""
    outs = [p(**inputs) for p in ps]
    ts = [[] for _ in ps]
    for _ in range(rounds):
        for p, out, t in zip(ps, outs, ts):
            t0 = time.perf_counter()
            p(out=out, **inputs)
            t.append(time.perf_counter() - t0)
    return [min(t) for t in ts]


def ms(x):
    return '%.3f' % (1e3 * x) if x < 0.01 else '%.1f' % (1e3 * x)


def main(argv):
    rounds, out_path = 15, os.path.join(HERE, 'backends.md')
    it = iter(argv)
    for a in it:
        if a == '--rounds':
            rounds = int(next(it))
        elif a == '--out':
            out_path = next(it)
        else:
            print(__doc__)
            return 2
    cache = tempfile.mkdtemp(prefix='txbench.')
    os.environ['XDG_CACHE_HOME'] = cache
    rows = []
    try:
        for make in (softmax_case, elementwise_case, ccsd_case, tanh_case, where_case, loops_case):
            title, path, inputs, expect, *level = make()
            level = level[0] if level else 2
            src = open(path).read()
            res, progs = {}, {}
            for backend in ('tcc', 'cc'):
                p, cold, out = first_call(src, os.path.basename(path), backend, inputs, level)
                used, how = p.backend
                if used != backend:
                    print('%s: %s ran instead of %s: %s' % (title, used, backend, how), file=sys.stderr)
                    return 1
                for k, v in expect.items():
                    if not np.allclose(out[k], v, rtol=1e-10, atol=1e-12):
                        print('%s (%s): %s differs from numpy' % (title, backend, k), file=sys.stderr)
                        return 1
                progs[backend] = (p, cold, out)
            # steady calls alternate between the tiers, so that the load of
            # a shared machine falls on both alike
            run = steady_pair([progs['tcc'][0], progs['cc'][0]], inputs, rounds)
            for backend, r in zip(('tcc', 'cc'), run):
                p2, warm, _ = first_call(src, os.path.basename(path), backend, inputs, level)
                if backend == 'cc' and not p2.backend[1].startswith('cached'):
                    print('%s: the second cc Program did not hit the cache: %s' % (title, p2.backend[1]),
                          file=sys.stderr)
                    return 1
                p, cold, out = progs[backend]
                res[backend] = (max(cold - r, 0), max(warm - r, 0), r, out)
            for k in expect:
                if res['tcc'][3][k].tobytes() != res['cc'][3][k].tobytes():
                    print('%s: %s differs between tcc and cc' % (title, k), file=sys.stderr)
                    return 1
            rows.append((title, res))
            print('%-36s tcc: compile %8s ms, run %8s ms | cc: compile cold %8s ms, warm %8s ms, run %8s ms'
                  % (title, ms(res['tcc'][0]), ms(res['tcc'][2]), ms(res['cc'][0]), ms(res['cc'][1]),
                     ms(res['cc'][2])), flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    cc_version = subprocess.run([os.environ.get('TX_CC') or os.environ.get('CC') or 'cc', '--version'],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.split('\n')[0]
    lines = ['# libtcc vs the system compiler (--backend tcc / cc)', '',
             'Made by `/usr/bin/python3 bench/backends.py` (run by `make bench`) on %s, %s, %d cores '
             '(one thread), %s; %s.'
             % (time.strftime('%Y-%m-%d'), platform.processor() or platform.machine(), os.cpu_count(),
                'tensorexpr ' + tx.__version__, cc_version),
             'Compile = first call of a new Program minus one steady call (emission, compilation, loading); '
             'cold = empty cache, warm = a second Program (cc: the object from the cache; libtcc compiles '
             'again). Run = fastest of %d steady calls, the two tiers\' calls taken in turn. Results of both tiers equal bit for bit. The first call also allocates and first touches the outputs (80 MB for E = A*B + D: most of its compile figures). Timed on a '
             'shared machine: compare the columns of one row (same run), not runs.' % rounds, '',
             '| program | tcc compile (ms) | cc compile cold (ms) | cc compile warm (ms) | tcc run (ms) | '
             'cc run (ms) | run tcc/cc | calls before cc (cold) pays off |',
             '|---|---:|---:|---:|---:|---:|---:|---:|']
    for title, res in rows:
        (tc, _, tr, _), (cc, cw, cr, _) = res['tcc'], res['cc']
        gain = tr - cr
        pay = '%.0f' % max(1, (cc - tc) / gain) if gain > 0 else 'never'
        lines.append('| %s | %s | %s | %s | %s | %s | %.2f | %s |'
                     % (title, ms(tc), ms(cc), ms(cw), ms(tr), ms(cr), tr / cr if cr else float('nan'), pay))
    text = '\n'.join(lines) + '\n'
    with open(out_path, 'w') as f:
        f.write(text)
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
