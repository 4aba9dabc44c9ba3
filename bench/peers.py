#!/usr/bin/python3
"""peers.py — tensorexpr against numpy AND torch (CPU) on the kernels of
issue 13, side by side in one process, f64 (and f32 for softmax, layer
norm, a dense layer, ReLU and column sums; c128 for complex exp, log
and sin), with the machine's stream bandwidth and a
compile-latency case.

    OPENBLAS_NUM_THREADS=N /usr/bin/python3 bench/peers.py --threads N [--quick]
    /usr/bin/python3 bench/peers.py --report     (appends to bench/results.md)

`sh bench/run.sh` runs both (after bench.py). With --threads N: tensorexpr
runs N threads (TX_NUM_THREADS and OpenBLAS), torch.set_num_threads(N),
numpy's BLAS N threads, build/bench/stream N threads. Every result is checked
against numpy before timing (f64: 1e-10 of the largest magnitude, f32: 1e-4);
a mismatch exits with status 1. Without torch its column reads "-".

Memory-bound kernels report their traffic (the bytes a kernel must move at
least: each input read once, each output written once) as a share of the
stream triad bandwidth measured right after the kernel's timing (the VM's
bandwidth moves by up to 2x within minutes, so one measurement at the
start of the run is no yardstick for a kernel timed minutes later); the
header keeps the measurement at the start too.
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
argv = sys.argv[1:]
QUICK = '--quick' in argv
REPORT = '--report' in argv
THREADS = None
for i, a in enumerate(argv):
    if a == '--threads':
        THREADS = int(argv[i + 1])
if not REPORT and THREADS is None:
    sys.stderr.write('peers.py: give --threads N or --report\n')
    sys.exit(2)
# bench.py reads its own arguments on import (and fixes the environment)
sys.argv = [sys.argv[0]] + (['--report'] if REPORT else ['--threads', str(THREADS)])
sys.path.insert(0, HERE)
import bench as B          # noqa: E402
import numpy as np         # noqa: E402

try:
    import torch           # noqa: E402
except ImportError:        # the torch column reads "-"
    torch = None

JSON = os.path.join(B.OUTDIR, 'peers-t%d.json')
TX_OPTION_THREADS = 3


def tx_program(txl, src, arrays):
    p = txl.compile(src, 'peers.tx')
    for name, a in arrays.items():
        shape = (B.c_int64 * max(1, a.ndim))(*a.shape)
        if not a.flags['C_CONTIGUOUS']:
            B.die('binding %s: not contiguous' % name)
        if txl.lib.tx_bind(p, name.encode(), B.c_void_p(a.ctypes.data), a.ndim, shape) != 0:
            B.die('tx_bind(%s): %s' % (name, txl.errmsg()))
    txl.run(p, 'peers')
    return p


def check(label, got, want, f32):
    got, want = np.asarray(got), np.asarray(want)
    if not (np.iscomplexobj(got) or np.iscomplexobj(want)):
        got, want = got.astype(np.float64), want.astype(np.float64)
    tol = 1e-4 if f32 else 1e-10
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    scale = max(1.0, float(np.max(np.abs(want))))
    if got.shape != want.shape or not err <= tol * scale:
        B.die('%s: WRONG RESULT: max|got - numpy| = %.3e (scale %.3e)' % (label, err, scale))


def softmax_np(X):
    e = np.exp(X - X.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def lse_np(X):
    m = X.max(1)
    return m + np.log(np.exp(X - m[:, None]).sum(1))


def layernorm_np(X, g, b):
    mu = X.mean(1, keepdims=True)
    d = X - mu
    return d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * g + b


def attention_np(Q, K, V):
    S = Q @ K.transpose(0, 2, 1) / 8.0
    return softmax_np(S.reshape(-1, S.shape[2])).reshape(S.shape) @ V


SOFTMAX = '''in {t} X[n,m];
out {t} P[n,m];
let E("i,j") = exp(X("i,j") - reduce(max, X("i,k")));
P("i,j") = E("i,j") / reduce(+, E("i,k"));
'''
LSE = '''in X[n,m];
out r[n];
let mx("i") = reduce(max, X("i,j"));
r("i") = mx("i") + log(reduce(+, exp(X("i,k") - mx("i"))));
'''
LAYERNORM = '''in {t} X[n,m], g[m], b[m];
out {t} Y[n,m];
let mu("i") = X("i,j") / m;
let D("i,j") = X("i,j") - mu("i");
let var("i") = D("i,j")^2 / m;
Y("i,j") = D("i,j") / sqrt(var("i") + 0.00001) * g("j") + b("j");
'''
DENSE = '''in {t} X[n,k], W[k,m], b[m];
out {t} Y[n,m];
Y("i,j") = tanh(X("i,k") * W("k,j") + b("j"));
'''
MLP = '''in X[n,k], W1[k,h], b1[h], W2[h,m], b2[m];
out Y[n,m];
let H("i,l") = tanh(X("i,k") * W1("k,l") + b1("l"));
Y("i,j") = H("i,l") * W2("l,j") + b2("j");
'''
ATTENTION = '''dim d = 64;
in Q[h,s,d], K[h,s,d], V[h,s,d];
out O[h,s,d];
let S("h,s,t") = Q("h,s,e") * K("h,t,e") / 8;
let E("h,s,t") = exp(S("h,s,t") - reduce(max, S("h,s,u")));
O("h,s,e") = E("h,s,t") / reduce(+, E("h,s,u")) * V("h,t,e");
'''


def torch_einsum(spec, *ops):
    """torch.einsum pairwise along numpy's optimal path (torch 1.13 has no
    path search: a four-operand einsum left to right needs 80 GB here)."""
    ins, out = spec.split('->')
    terms = ins.split(',')
    path = np.einsum_path(spec, *[np.empty(o.shape) for o in ops], optimize='optimal')[0][1:]
    ops = list(ops)
    for pair in path:
        pair = sorted(pair, reverse=True)
        got = [(terms.pop(i), ops.pop(i)) for i in pair]
        rest = set(''.join(terms) + out)
        keep = ''.join(dict.fromkeys(c for t, _ in got for c in t if c in rest))
        ops.append(torch.einsum('%s->%s' % (','.join(t for t, _ in got), keep), *[o for _, o in got]))
        terms.append(keep)
    return torch.einsum('%s->%s' % (terms[0], out), ops[0])


def cases(rng, quick):
    """(name, size, tx source, inputs, outputs, numpy fn, torch fn, bytes moved, f32)"""
    q = (lambda a, b: b) if quick else (lambda a, b: a)
    out = []

    def add(name, size, src, ins, outs, fnp, fto, nbytes=None, f32=False):
        out.append((name, size, src, ins, outs, fnp, fto, nbytes, f32))

    n, m = q(2000, 300), q(2000, 300)
    X = rng.standard_normal((n, m))
    add('row softmax', '%dx%d' % (n, m), SOFTMAX.format(t='f64'), {'X': X}, {'P': np.zeros((n, m))},
        lambda X=X: softmax_np(X), lambda t: torch.softmax(t['X'], 1), 16.0 * n * m)
    X32 = X.astype(np.float32)
    add('row softmax f32', '%dx%d' % (n, m), SOFTMAX.format(t='f32'), {'X': X32},
        {'P': np.zeros((n, m), np.float32)}, lambda X32=X32: softmax_np(X32), lambda t: torch.softmax(t['X'], 1),
        8.0 * n * m, True)
    add('logsumexp rows', '%dx%d' % (n, m), LSE, {'X': X}, {'r': np.zeros(n)}, lambda X=X: lse_np(X),
        lambda t: torch.logsumexp(t['X'], 1), 8.0 * n * m)
    n, m = q(1000, 200), q(1024, 256)
    X = rng.standard_normal((n, m))
    g, b = rng.standard_normal(m), rng.standard_normal(m)
    add('layer norm', '%dx%d' % (n, m), LAYERNORM.format(t='f64'), {'X': X, 'g': g, 'b': b},
        {'Y': np.zeros((n, m))}, lambda X=X, g=g, b=b: layernorm_np(X, g, b),
        lambda t, m=m: torch.nn.functional.layer_norm(t['X'], (m,), t['g'], t['b'], 1e-5), 16.0 * n * m)
    X32, g32, b32 = X.astype(np.float32), g.astype(np.float32), b.astype(np.float32)
    add('layer norm f32', '%dx%d' % (n, m), LAYERNORM.format(t='f32'), {'X': X32, 'g': g32, 'b': b32},
        {'Y': np.zeros((n, m), np.float32)}, lambda X32=X32, g32=g32, b32=b32: layernorm_np(X32, g32, b32),
        lambda t, m=m: torch.nn.functional.layer_norm(t['X'], (m,), t['g'], t['b'], 1e-5), 8.0 * n * m, True)
    for (n, k, m) in [(q(1000, 200), q(500, 100), q(500, 100)), (64, 256, 256)]:
        Xd = rng.standard_normal((n, k)) / np.sqrt(k)
        W = rng.standard_normal((k, m))
        b = rng.standard_normal(m)
        add('dense tanh(XW+b)', '%dx%dx%d' % (n, k, m), DENSE.format(t='f64'), {'X': Xd, 'W': W, 'b': b},
            {'Y': np.zeros((n, m))}, lambda Xd=Xd, W=W, b=b: np.tanh(Xd @ W + b),
            lambda t: torch.tanh(torch.addmm(t['b'], t['X'], t['W'])))
    n, k, m = q(1000, 200), q(500, 100), q(500, 100)
    Xd = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
    W = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    add('dense tanh(XW+b) f32', '%dx%dx%d' % (n, k, m), DENSE.format(t='f32'), {'X': Xd, 'W': W, 'b': b},
        {'Y': np.zeros((n, m), np.float32)}, lambda Xd=Xd, W=W, b=b: np.tanh(Xd @ W + b),
        lambda t: torch.tanh(torch.addmm(t['b'], t['X'], t['W'])), None, True)
    n, k, h, m = q(1000, 200), q(500, 100), q(500, 100), q(100, 50)
    Xd = rng.standard_normal((n, k)) / np.sqrt(k)
    W1, b1 = rng.standard_normal((k, h)) / np.sqrt(k), rng.standard_normal(h)
    W2, b2 = rng.standard_normal((h, m)) / np.sqrt(h), rng.standard_normal(m)
    add('two-layer MLP', '%dx%dx%dx%d' % (n, k, h, m), MLP,
        {'X': Xd, 'W1': W1, 'b1': b1, 'W2': W2, 'b2': b2}, {'Y': np.zeros((n, m))},
        lambda Xd=Xd, W1=W1, b1=b1, W2=W2, b2=b2: np.tanh(Xd @ W1 + b1) @ W2 + b2,
        lambda t: torch.addmm(t['b2'], torch.tanh(torch.addmm(t['b1'], t['X'], t['W1'])), t['W2']))
    hh, s = 8, q(512, 128)
    Q, K, V = (rng.standard_normal((hh, s, 64)) for _ in range(3))
    add('attention', 'h=%d s=%d d=64' % (hh, s), ATTENTION, {'Q': Q, 'K': K, 'V': V},
        {'O': np.zeros((hh, s, 64))}, lambda: attention_np(Q, K, V),
        lambda t: torch.softmax(torch.bmm(t['Q'], t['K'].transpose(1, 2)) / 8.0, -1).bmm(t['V']))
    N = q(10 ** 7, 10 ** 6)
    x = rng.standard_normal(N)
    add('full sum', '%.0e' % N, 'in x[n];\nout s;\ns = x("i");\n', {'x': x}, {'s': np.zeros(())},
        lambda x=x: x.sum(), lambda t: t['x'].sum(), 8.0 * N)
    n, m = q(4000, 400), q(2500, 250)
    X = rng.standard_normal((n, m))
    add('row max', '%dx%d' % (n, m), 'in X[n,m];\nout r[n];\nr("i") = reduce(max, X("i,j"));\n',
        {'X': X}, {'r': np.zeros(n)}, lambda X=X: X.max(1), lambda t: t['X'].max(1).values, 8.0 * n * m)
    A, Bv, C = (rng.standard_normal(N) for _ in range(3))
    add('A*B+C', '%.0e' % N, 'in A[n], B[n], C[n];\nout E[n];\nE("i") = A("i") * B("i") + C("i");\n',
        {'A': A, 'B': Bv, 'C': C}, {'E': np.zeros(N)}, lambda: A * Bv + C,
        lambda t: torch.addcmul(t['C'], t['A'], t['B']), 32.0 * N)
    n = q(3000, 300)
    X32 = rng.standard_normal((n, n)).astype(np.float32)
    add('ReLU f32', '%dx%d' % (n, n), 'in f32 X[n,m];\nout f32 Y[n,m];\nY("i,j") = max(X("i,j"), 0);\n',
        {'X': X32}, {'Y': np.zeros((n, n), np.float32)}, lambda X32=X32: np.maximum(X32, np.float32(0)),
        lambda t: torch.relu(t['X']), 8.0 * n * n, True)
    add('column sums f32', '%dx%d' % (n, n), 'in f32 X[n,m];\nout f32 r[m];\nr("j") = X("i,j");\n',
        {'X': X32}, {'r': np.zeros(n, np.float32)}, lambda X32=X32: X32.sum(0), lambda t: t['X'].sum(0),
        4.0 * n * n, True)
    X = rng.standard_normal((n, n))
    add('transposed copy', '%dx%d' % (n, n), 'in X[n,m];\nout Y[m,n];\nY("j,i") = X("i,j");\n',
        {'X': X}, {'Y': np.zeros((n, n))}, lambda X=X: X.T.copy(), lambda t: t['X'].t().contiguous(),
        16.0 * n * n)
    c = q(128, 48)
    A3, B2 = rng.standard_normal((c, c, c)), rng.standard_normal((c, c))
    add('C(i,j)=A(i,j,k)B(k,j)', 'n=%d' % c, B.read_tx('contract_ijk.tx'), {'A': A3, 'B': B2},
        {'C': np.zeros((c, c))}, lambda: np.einsum('ijk,kj->ij', A3, B2, optimize=True),
        lambda t: torch.einsum('ijk,kj->ij', t['A'], t['B']), 8.0 * c ** 3)
    n = q(1000, 200)
    Z = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    for f in ('exp', 'log', 'sin'):  # the library's block functions (tx(5) ELEMENT TYPES)
        add('complex %s c128' % f, '%dx%d' % (n, n),
            'in c128 Z[n,m];\nout c128 Y[n,m];\nY("i,j") = %s(Z("i,j"));\n' % f, {'Z': Z},
            {'Y': np.zeros((n, n), np.complex128)}, lambda Z=Z, f=f: getattr(np, f)(Z),
            lambda t, f=f: getattr(torch, f)(t['Z']))
    o, v = q(8, 4), q(40, 12)
    T = {'V': rng.standard_normal((v, v, o, o)), 'W': rng.standard_normal((v, v, v, v)) * 0.1,
         'T': rng.standard_normal((v, v, o, o)) * 0.1, 'X': rng.standard_normal((o, o, o, o)),
         'F': rng.standard_normal((o, v)), 'U': rng.standard_normal((v, v, o, o))}
    s1, s2, s3 = 'abcd,cdij->abij', 'abkl,klij->abij', 'kc,acik,bdjl,cdkl->abij'

    def ccsd(e, M):
        return (M['V'] + e(s1, M['W'], M['T']) + e(s2, M['T'], M['X'])
                - e(s3, M['F'], M['T'], M['T'], M['U']))
    add('CCSD-like doubles', 'o=%d v=%d' % (o, v), B.read_tx('ccsd.tx'), T, {'R': np.zeros((v, v, o, o))},
        lambda: ccsd(lambda s, *a: np.einsum(s, *a, optimize=True), T),
        lambda t: ccsd(torch_einsum, t))
    return out


def stream(threads, n=4 * 10 ** 7, reps=10):
    exe = os.path.join(B.OUTDIR, 'stream')
    if not os.path.exists(exe):
        B.die('%s is missing: run `sh bench/run.sh`' % exe)
    r = subprocess.run([exe, str(n if not QUICK else n // 10), str(threads), str(reps)],
                       capture_output=True, text=True, check=True)
    copy, triad = (float(v) for v in r.stdout.split())
    return {'copy': copy, 'triad': triad}


def compile_latency(lib, nstmt):
    """txc on a program of NSTMT statements, and tx_compile + first tx_run."""
    src = 'dim n = 64;\ninout t[n];\n' + 't("i") = exp(-t("i")) * 0.5;\n' * nstmt
    path = os.path.join(B.OUTDIR, 'many%d.tx' % nstmt)
    with open(path, 'w') as f:
        f.write(src)
    txc = os.path.join(B.BUILD, 'txc')
    t0 = time.perf_counter()
    subprocess.run([txc, path, '-o', os.devnull], check=True)
    t_txc = time.perf_counter() - t0
    txl = B.TxLib(lib)
    t = np.zeros(64)
    t0 = time.perf_counter()
    p = tx_program(txl, src, {'t': t})
    t_jit = time.perf_counter() - t0
    want = np.zeros(64)
    for _ in range(nstmt):
        want = np.exp(-want) * 0.5
    check('many statements', t, want, False)
    txl.close()
    return {'statements': nstmt, 'txc_s': t_txc, 'compile_run_s': t_jit}


def call_overhead():
    """tx_run and tx_bind + tx_run of a 16-element program, timed in C
    (bench/tx_loop.c): the library's own cost per call, no Python."""
    exe = os.path.join(B.OUTDIR, 'tx_loop')
    path = os.path.join(B.OUTDIR, 'small.tx')
    with open(path, 'w') as f:
        f.write('in x[n];\nout y[n];\ny("i") = x("i") * 2 + 1;\n')
    r = subprocess.run([exe, path, '20000', 'x=16', 'y=16'], capture_output=True, text=True, check=True)
    run_us, bind_us = (float(v) for v in r.stdout.split())
    return {'run_us': run_us, 'bind_run_us': bind_us}


def run(threads):
    if QUICK:
        B.ROUNDS, B.MIN_MEASURE = 3, 0.005
    if torch is not None:
        torch.set_num_threads(threads)
    lib = B.load_tx()
    txl = B.TxLib(lib)
    if lib.tx_set_option(txl.ctx, TX_OPTION_THREADS, threads) != 0:
        B.die('tx_set_option(THREADS): %s' % txl.errmsg())
    snap0 = B.cpu_snapshot()
    st = stream(threads)
    rng = np.random.default_rng(13)
    rows = []
    for name, size, src, ins, outs, fnp, fto, nbytes, f32 in cases(rng, QUICK):
        arrays = dict(ins)
        arrays.update(outs)
        p = tx_program(txl, src, arrays)
        want = fnp()
        (oname, oarr), = outs.items()
        check('%s (tx)' % name, oarr, want, f32)
        contenders = [('tx', lambda p=p: lib.tx_run(p)), ('numpy', fnp)]
        if torch is not None:
            tt = {k: torch.from_numpy(a) for k, a in ins.items()}
            check('%s (torch)' % name, fto(tt).numpy(), want, f32)
            contenders.append(('torch', lambda fto=fto, tt=tt: fto(tt)))
        med, _, _ = B.time_contenders(contenders)
        check('%s (tx, after timing)' % name, oarr, want, f32)
        txl.free_program(p)
        r = {'kernel': name, 'size': size, 'f32': f32, 'bytes': nbytes}
        r.update({k: med[k] for k in med})
        if nbytes:  # the yardstick of this kernel: stream triad measured beside it
            r['triad'] = stream(threads, 2 * 10 ** 7, 5)['triad']
        rows.append(r)
        print('  %-26s %-16s tx %-10s numpy %-10s torch %-10s' % (
            name, size, B.fmt_time(r['tx']), B.fmt_time(r['numpy']),
            B.fmt_time(r['torch']) if 'torch' in r else '-'), flush=True)
    comp = compile_latency(lib, 400 if QUICK else 4000)
    comp.update(call_overhead())
    txl.close()
    data = {'threads': threads, 'quick': QUICK, 'stream': st, 'rows': rows, 'compile': comp,
            'other_load': B.other_load(snap0, B.cpu_snapshot()),
            'torch': torch.__version__ if torch is not None else None}
    import json
    with open(JSON % threads, 'w') as f:
        json.dump(data, f, indent=1)
    print(table(data))


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else float('nan')


def table(d):
    t = d['threads']
    L = ['### tensorexpr vs numpy vs torch, %d thread%s%s' % (t, '' if t == 1 else 's',
                                                              ' (QUICK)' if d['quick'] else ''), '',
         'Stream bandwidth (bench/stream.c, gcc -O2 -fopenmp, %d thread%s): copy %.1f GB/s, '
         'triad %.1f GB/s. Other processes used %.0f %% of the CPUs during this run%s.' % (
             t, '' if t == 1 else 's', d['stream']['copy'], d['stream']['triad'], 100 * d['other_load'],
             ' — NOT quiet: every figure, the stream bandwidth included, is noisy' if d['other_load'] > 0.1 else ''),
         '',
         'The last column: the traffic of a memory-bound kernel, and its share of the stream triad '
         'measured right after that kernel was timed (GB/s in brackets).', '',
         '| kernel | size | tx | numpy | torch | numpy/tx | torch/tx | best/tx | tx GB/s (% of triad beside it) |',
         '|---|---|---|---|---|---|---|---|---|']
    ratios_np, ratios_best = [], []
    for r in d['rows']:
        tn, tt = r['numpy'] / r['tx'], (r['torch'] / r['tx'] if 'torch' in r else None)
        best = min(r['numpy'], r.get('torch', r['numpy'])) / r['tx']
        ratios_np.append(tn)
        ratios_best.append(best)
        bw = ''
        if r['bytes']:
            g = r['bytes'] / r['tx'] / 1e9
            tri = r.get('triad', d['stream']['triad'])
            bw = '%.1f (%.0f %% of %.1f)' % (g, 100 * g / tri, tri)
        L.append('| %s | %s | %s | %s | %s | %.2f | %s | %s%.2f%s | %s |' % (
            r['kernel'], r['size'], B.fmt_time(r['tx']), B.fmt_time(r['numpy']),
            B.fmt_time(r['torch']) if 'torch' in r else '-', tn,
            '%.2f' % tt if tt else '-', '**' if best < 1 else '', best, '**' if best < 1 else '', bw))
    c = d['compile']
    L += ['', 'Geometric mean: numpy/tx %.2f, best/tx %.2f (best = the faster of numpy and torch; '
          '**bold**: below 1).' % (geomean(ratios_np), geomean(ratios_best)), '',
          'Compile latency, %d statements `t("i") = exp(-t("i")) * 0.5;`: txc to C %.2f s; '
          'tx_compile + first tx_run %.2f s.' % (c['statements'], c['txc_s'], c['compile_run_s']), '',
          'Per-call cost of a compiled 16-element program, timed in C (bench/tx_loop.c): tx_run %.2f µs, '
          'tx_bind of both tensors + tx_run %.2f µs.' % (c['run_us'], c['bind_run_us'])]
    return '\n'.join(L)


def report():
    import json
    runs = []
    for t in (1, 2):
        if os.path.exists(JSON % t):
            with open(JSON % t) as f:
                runs.append(json.load(f))
    if not runs:
        B.die('no build/bench/peers-t*.json: run `sh bench/run.sh`')
    with open(B.RESULTS_MD, 'a', encoding='utf-8') as f:
        f.write('\n## Against numpy and torch (bench/peers.py, torch %s)\n\n' % runs[0]['torch'])
        f.write('Times are medians of interleaved rounds in one process (each round one untimed '
                'call, then the timed ones: bench.py\'s WARM); ratios are peer time ÷ '
                'tensorexpr time (> 1: tensorexpr faster). Traffic counts each input read and '
                'each output written once.\n\n')
        for d in runs:
            f.write(table(d) + '\n\n')
        if len(runs) == 2:
            f.write(scaling(runs[0], runs[1]) + '\n\n')
    print('appended to %s' % os.path.relpath(B.RESULTS_MD, B.ROOT))


SCALING_TARGET = 1.8  # the two-thread speedup for large kernels


def scaling(d1, d2):
    """tensorexpr's two-thread time against its one-thread time, kernel by
    kernel (the issue asks 1.8 of large kernels); for a memory-bound one,
    the ceiling beside it: the two-thread triad over the one-thread triad
    measured next to that kernel."""
    one = {(r['kernel'], r['size']): r for r in d1['rows']}
    L = ['### tensorexpr on two threads against one', '',
         'Speedup: the one-thread time ÷ the two-thread time, from the two tables above (separate '
         'processes). For a memory-bound kernel (one with a traffic figure), the last column is the '
         'ceiling: the stream triad beside it on two threads ÷ the one on one thread. **Bold**: '
         'below %.1f.' % SCALING_TARGET, '',
         '| kernel | size | tx, 1 thread | tx, 2 threads | speedup | triad 2T ÷ 1T |',
         '|---|---|---|---|---|---|']
    for r in d2['rows']:
        a = one.get((r['kernel'], r['size']))
        if not a:
            continue
        sp = a['tx'] / r['tx']
        ceil = ''
        if r['bytes'] and a.get('triad') and r.get('triad'):
            ceil = '%.2f' % (r['triad'] / a['triad'])
        b = '**' if sp < SCALING_TARGET else ''
        L.append('| %s | %s | %s | %s | %s%.2f%s | %s |' % (
            r['kernel'], r['size'], B.fmt_time(a['tx']), B.fmt_time(r['tx']), b, sp, b, ceil))
    return '\n'.join(L)


if __name__ == '__main__':
    if REPORT:
        report()
    else:
        run(THREADS)
