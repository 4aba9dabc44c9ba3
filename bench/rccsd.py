#!/usr/bin/python3
"""bench/rccsd.tx against numpy: one closed-shell CCSD amplitude update.

    /usr/bin/python3 bench/rccsd.py check [--txc build/txc] [--o 4 --v 10]
    /usr/bin/python3 bench/rccsd.py bench [--txc build/txc] [--o 16 --v 100]
                                          [--threads 1] [--repeat 1] [--dir D]
                                          [--program FILE.tx] [--skip txc,numpy,api]
                                          [--no-huge-pages]

`update_amps` below is the numpy reference, written the way PySCF writes it
(pyscf/cc/rccsd.py update_amps, non-CC2 branch, and the cc_* intermediates
of pyscf/cc/rintermediates.py): einsum calls, `+=` on arrays, diagonals
shifted in place. `einsum` is numpy's with optimize=True, which like
pyscf.lib.einsum does pairwise contractions through BLAS (tensordot).

check: runs the API (tensorexpr package) twice with different amplitudes
(the second run reuses the program's memory) and compares both with
update_amps; ends with "N passed, N failed". The same program is also a
tests/run_num.py case (its #! lines call `inputs` and `update_amps` here).

bench: writes seeded inputs as .npy files to a directory, then runs, each in
a child process measured by wait4 (peak RSS, minor page faults, user and
system time, wall time):
  txc run      `txc run bench/rccsd.tx NAME=FILE.npy ...`: always a first run
  numpy        np.load, update_amps, np.save
  api-first    the Python package: compile, one run (first run) ...
  api-warm     ... and a second run in the same process (warm): its wall time
Threads: OPENBLAS_NUM_THREADS, TX_NUM_THREADS and --threads are set to
--threads (default 1) for every contender.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAM = os.path.join(HERE, 'rccsd.tx')
INPUTS = ('fock', 't1', 't2', 'oooo', 'ovoo', 'ovov', 'oovv', 'ovvo', 'ovvv', 'vvvv')
OUTPUTS = ('t1new', 't2new')


def einsum(spec, *ops):
    return np.einsum(spec, *ops, optimize=True)


# ------------------------------------------------ PySCF's update_amps --

def cc_Foo(t1, t2, eris):
    nocc, nvir = t1.shape
    foo = eris['fock'][:nocc, :nocc]
    eris_ovov = eris['ovov']
    Fki = 2*einsum('kcld,ilcd->ki', eris_ovov, t2)
    Fki -= einsum('kdlc,ilcd->ki', eris_ovov, t2)
    Fki += 2*einsum('kcld,ic,ld->ki', eris_ovov, t1, t1)
    Fki -= einsum('kdlc,ic,ld->ki', eris_ovov, t1, t1)
    Fki += foo
    return Fki


def cc_Fvv(t1, t2, eris):
    nocc, nvir = t1.shape
    fvv = eris['fock'][nocc:, nocc:]
    eris_ovov = eris['ovov']
    Fac = -2*einsum('kcld,klad->ac', eris_ovov, t2)
    Fac += einsum('kdlc,klad->ac', eris_ovov, t2)
    Fac -= 2*einsum('kcld,ka,ld->ac', eris_ovov, t1, t1)
    Fac += einsum('kdlc,ka,ld->ac', eris_ovov, t1, t1)
    Fac += fvv
    return Fac


def cc_Fov(t1, t2, eris):
    nocc, nvir = t1.shape
    fov = eris['fock'][:nocc, nocc:]
    eris_ovov = eris['ovov']
    Fkc = 2*np.einsum('kcld,ld->kc', eris_ovov, t1)
    Fkc -= np.einsum('kdlc,ld->kc', eris_ovov, t1)
    Fkc += fov
    return Fkc


def Loo(t1, t2, eris):
    nocc, nvir = t1.shape
    fov = eris['fock'][:nocc, nocc:]
    Lki = cc_Foo(t1, t2, eris) + np.einsum('kc,ic->ki', fov, t1)
    eris_ovoo = eris['ovoo']
    Lki += 2*np.einsum('lcki,lc->ki', eris_ovoo, t1)
    Lki -= np.einsum('kcli,lc->ki', eris_ovoo, t1)
    return Lki


def Lvv(t1, t2, eris):
    nocc, nvir = t1.shape
    fov = eris['fock'][:nocc, nocc:]
    Lac = cc_Fvv(t1, t2, eris) - np.einsum('kc,ka->ac', fov, t1)
    eris_ovvv = eris['ovvv']
    Lac += 2*np.einsum('kdac,kd->ac', eris_ovvv, t1)
    Lac -= np.einsum('kcad,kd->ac', eris_ovvv, t1)
    return Lac


def cc_Woooo(t1, t2, eris):
    eris_ovoo = eris['ovoo']
    Wklij = einsum('lcki,jc->klij', eris_ovoo, t1)
    Wklij += einsum('kclj,ic->klij', eris_ovoo, t1)
    eris_ovov = eris['ovov']
    Wklij += einsum('kcld,ijcd->klij', eris_ovov, t2)
    Wklij += einsum('kcld,ic,jd->klij', eris_ovov, t1, t1)
    Wklij += eris['oooo'].transpose(0, 2, 1, 3)
    return Wklij


def cc_Wvvvv(t1, t2, eris):
    eris_ovvv = eris['ovvv']
    Wabcd = einsum('kdac,kb->abcd', eris_ovvv, -t1)
    Wabcd -= einsum('kcbd,ka->abcd', eris_ovvv, t1)
    Wabcd += eris['vvvv'].transpose(0, 2, 1, 3)
    return Wabcd


def cc_Wvoov(t1, t2, eris):
    eris_ovvv = eris['ovvv']
    eris_ovoo = eris['ovoo']
    Wakic = einsum('kcad,id->akic', eris_ovvv, t1)
    Wakic -= einsum('kcli,la->akic', eris_ovoo, t1)
    Wakic += eris['ovvo'].transpose(2, 0, 3, 1)
    eris_ovov = eris['ovov']
    Wakic -= 0.5*einsum('ldkc,ilda->akic', eris_ovov, t2)
    Wakic -= 0.5*einsum('lckd,ilad->akic', eris_ovov, t2)
    Wakic -= einsum('ldkc,id,la->akic', eris_ovov, t1, t1)
    Wakic += einsum('ldkc,ilad->akic', eris_ovov, t2)
    return Wakic


def cc_Wvovo(t1, t2, eris):
    eris_ovvv = eris['ovvv']
    eris_ovoo = eris['ovoo']
    Wakci = einsum('kdac,id->akci', eris_ovvv, t1)
    Wakci -= einsum('lcki,la->akci', eris_ovoo, t1)
    Wakci += eris['oovv'].transpose(2, 0, 3, 1)
    eris_ovov = eris['ovov']
    Wakci -= 0.5*einsum('lckd,ilda->akci', eris_ovov, t2)
    Wakci -= einsum('lckd,id,la->akci', eris_ovov, t1, t1)
    return Wakci


def update_amps(t1, t2, eris):
    nocc, nvir = t1.shape
    fock = eris['fock']
    mo_e = fock.diagonal()
    mo_e_o = mo_e[:nocc]
    mo_e_v = mo_e[nocc:]
    fov = fock[:nocc, nocc:].copy()

    Foo = cc_Foo(t1, t2, eris)
    Fvv = cc_Fvv(t1, t2, eris)
    Fov = cc_Fov(t1, t2, eris)
    Foo[np.diag_indices(nocc)] -= mo_e_o
    Fvv[np.diag_indices(nvir)] -= mo_e_v

    # T1 equation
    t1new = -2*np.einsum('kc,ka,ic->ia', fov, t1, t1)
    t1new += np.einsum('ac,ic->ia', Fvv, t1)
    t1new += -np.einsum('ki,ka->ia', Foo, t1)
    t1new += 2*np.einsum('kc,kica->ia', Fov, t2)
    t1new += -np.einsum('kc,ikca->ia', Fov, t2)
    t1new += np.einsum('kc,ic,ka->ia', Fov, t1, t1)
    t1new += fov.conj()
    t1new += 2*np.einsum('kcai,kc->ia', eris['ovvo'], t1)
    t1new += -np.einsum('kiac,kc->ia', eris['oovv'], t1)
    eris_ovvv = eris['ovvv']
    t1new += 2*einsum('kdac,ikcd->ia', eris_ovvv, t2)
    t1new += -einsum('kcad,ikcd->ia', eris_ovvv, t2)
    t1new += 2*einsum('kdac,kd,ic->ia', eris_ovvv, t1, t1)
    t1new += -einsum('kcad,kd,ic->ia', eris_ovvv, t1, t1)
    eris_ovoo = eris['ovoo']
    t1new += -2*einsum('lcki,klac->ia', eris_ovoo, t2)
    t1new += einsum('kcli,klac->ia', eris_ovoo, t2)
    t1new += -2*einsum('lcki,lc,ka->ia', eris_ovoo, t1, t1)
    t1new += einsum('kcli,lc,ka->ia', eris_ovoo, t1, t1)

    # T2 equation
    tmp2 = einsum('kibc,ka->abic', eris['oovv'], -t1)
    tmp2 += eris_ovvv.conj().transpose(1, 3, 0, 2)
    tmp = einsum('abic,jc->ijab', tmp2, t1)
    t2new = tmp + tmp.transpose(1, 0, 3, 2)
    tmp2 = einsum('kcai,jc->akij', eris['ovvo'], t1)
    tmp2 += eris_ovoo.transpose(1, 3, 0, 2).conj()
    tmp = einsum('akij,kb->ijab', tmp2, t1)
    t2new -= tmp + tmp.transpose(1, 0, 3, 2)
    t2new += eris['ovov'].conj().transpose(0, 2, 1, 3)

    Loo_ = Loo(t1, t2, eris)
    Lvv_ = Lvv(t1, t2, eris)
    Loo_[np.diag_indices(nocc)] -= mo_e_o
    Lvv_[np.diag_indices(nvir)] -= mo_e_v

    Woooo = cc_Woooo(t1, t2, eris)
    Wvoov = cc_Wvoov(t1, t2, eris)
    Wvovo = cc_Wvovo(t1, t2, eris)
    Wvvvv = cc_Wvvvv(t1, t2, eris)

    tau = t2 + np.einsum('ia,jb->ijab', t1, t1)
    t2new += einsum('klij,klab->ijab', Woooo, tau)
    t2new += einsum('abcd,ijcd->ijab', Wvvvv, tau)
    tmp = einsum('ac,ijcb->ijab', Lvv_, t2)
    t2new += (tmp + tmp.transpose(1, 0, 3, 2))
    tmp = einsum('ki,kjab->ijab', Loo_, t2)
    t2new -= (tmp + tmp.transpose(1, 0, 3, 2))
    tmp = 2*einsum('akic,kjcb->ijab', Wvoov, t2)
    tmp -= einsum('akci,kjcb->ijab', Wvovo, t2)
    t2new += (tmp + tmp.transpose(1, 0, 3, 2))
    tmp = einsum('akic,kjbc->ijab', Wvoov, t2)
    t2new -= (tmp + tmp.transpose(1, 0, 3, 2))
    tmp = einsum('bkci,kjac->ijab', Wvovo, t2)
    t2new -= (tmp + tmp.transpose(1, 0, 3, 2))

    eia = mo_e_o[:, None] - mo_e_v
    eijab = eia[:, None, :, None] + eia[None, :, None, :]   # lib.direct_sum('ia,jb->ijab')
    t1new /= eia
    t2new /= eijab
    return t1new, t2new


# ------------------------------------------------------------- inputs --

def inputs(o, v, rand):
    """Inputs of one update, from RAND(*shape) (uniform in [-1, 1)): a
    symmetric Fock matrix with occupied energies in [-2, -1) and virtual
    ones in [1, 2) on its diagonal (so no denominator is near 0), ERI
    blocks and amplitudes of a CCSD-like size."""
    n = o + v
    f = 0.05 * rand(n, n)
    f = f + f.T
    f[np.diag_indices(n)] = np.concatenate([rand(o) * 0.5 - 1.5, rand(v) * 0.5 + 1.5])
    d = {'fock': f, 't1': 0.1 * rand(o, v), 't2': 0.1 * rand(o, o, v, v)}
    shapes = {'oooo': (o, o, o, o), 'ovoo': (o, v, o, o), 'ovov': (o, v, o, v), 'oovv': (o, o, v, v),
              'ovvo': (o, v, v, o), 'ovvv': (o, v, v, v), 'vvvv': (v, v, v, v)}
    for k in INPUTS[3:]:
        d[k] = 0.1 * rand(*shapes[k])
    return d


def rng_rand(seed):
    rng = np.random.default_rng(seed)
    return lambda *shape: rng.uniform(-1.0, 1.0, size=shape)


def reference(d):
    return update_amps(d['t1'], d['t2'], d)


def max_rel(got, want):
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))


# --------------------------------------------------------------- check --

def import_tensorexpr():
    sys.path.insert(0, os.path.join(ROOT, 'python'))
    os.environ.setdefault('TENSOREXPR_LIB', os.path.join(ROOT, 'build', 'libtensorexpr.so'))
    import tensorexpr
    return tensorexpr


def check(args):
    tx = import_tensorexpr()
    o, v = args.o, args.v
    prog = tx.load(PROGRAM)
    passed = failed = 0
    for run, seed in ((1, 1), (2, 2)):   # the second run reuses the first's memory
        d = inputs(o, v, rng_rand(seed))
        want = reference(d)
        got = prog(**{k: d[k] for k in INPUTS})
        for name, w in zip(OUTPUTS, want):
            err = max_rel(got[name], w)
            ok = got[name].shape == w.shape and err <= 1e-12
            print('%s run %d o=%d v=%d %s: max rel. difference %.2e' % ('ok  ' if ok else 'FAIL', run, o, v, name, err))
            passed, failed = passed + ok, failed + (not ok)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


# --------------------------------------------------------------- bench --

def child_numpy(dirname, huge):
    np.core.multiarray._set_madvise_hugepage(huge)
    t0 = time.perf_counter()
    d = {k: np.load(os.path.join(dirname, k + '.npy')) for k in INPUTS}
    t1new, t2new = reference(d)
    np.save(os.path.join(dirname, 'np_t1new.npy'), t1new)
    np.save(os.path.join(dirname, 'np_t2new.npy'), t2new)
    print(json.dumps({'seconds': time.perf_counter() - t0}))


def child_api(dirname, threads, program, huge):
    tx = import_tensorexpr()
    np.core.multiarray._set_madvise_hugepage(huge)
    d = {k: np.load(os.path.join(dirname, k + '.npy')) for k in INPUTS}
    prog = tx.load(program, threads=threads, huge_pages=huge)
    t0 = time.perf_counter()
    got = prog(**d)
    first = time.perf_counter() - t0
    warm = []
    for _ in range(2):
        t0 = time.perf_counter()
        got = prog(**d)
        warm.append(time.perf_counter() - t0)
    np.save(os.path.join(dirname, 'api_t2new.npy'), got['t2new'])
    print(json.dumps({'first': first, 'warm': min(warm)}))


def measured(cmd, env):
    """Runs CMD; returns (wall seconds, rusage of the child, its stdout)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit('%s failed (%d)' % (' '.join(cmd), p.returncode))
    return wall, ru, out.decode()


def bench(args):
    o, v, nt = args.o, args.v, args.threads
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(nt), TX_NUM_THREADS=str(nt),
               TENSOREXPR_LIB=os.environ.get('TENSOREXPR_LIB', os.path.join(ROOT, 'build', 'libtensorexpr.so')))
    dirname = args.dir or tempfile.mkdtemp(prefix='rccsd-')
    d = inputs(o, v, rng_rand(7))
    for k in INPUTS:
        np.save(os.path.join(dirname, k + '.npy'), d[k])
    del d
    gib = 1024.0 ** 3
    print('rccsd o=%d v=%d, %d thread(s), inputs in %s (%.2f GiB)' % (
        o, v, nt, dirname, sum(os.path.getsize(os.path.join(dirname, k + '.npy')) for k in INPUTS) / gib))
    print('%-10s %8s %8s %8s %10s %10s  %s' % ('', 'wall s', 'user s', 'sys s', 'peak GiB', 'minflt', 'note'))
    huge = '0' if args.no_huge_pages else '1'
    txc = [args.txc, 'run', args.program, '-q', '--threads', str(nt)] + \
          (['--no-huge-pages'] if args.no_huge_pages else []) + \
          ['%s=%s' % (k, os.path.join(dirname, k + '.npy')) for k in INPUTS] + \
          ['%s=%s' % (k, os.path.join(dirname, 'tx_' + k + '.npy')) for k in OUTPUTS]
    me = [sys.executable, os.path.abspath(__file__)]
    for r in range(args.repeat):
        for name, cmd in (('txc run', txc), ('numpy', me + ['child-numpy', dirname, huge]),
                          ('api', me + ['child-api', dirname, str(nt), args.program, huge])):
            if name.split()[0] in args.skip.split(','):
                continue
            wall, ru, out = measured(cmd, env)
            note = ''
            if name == 'api':
                j = json.loads(out.strip().splitlines()[-1])
                note = 'first run %.2f s, warm run %.2f s (in process)' % (j['first'], j['warm'])
            elif name == 'numpy':
                note = 'load + update_amps + save %.2f s' % json.loads(out.strip().splitlines()[-1])['seconds']
            print('%-10s %8.2f %8.2f %8.2f %10.2f %10d  %s' % (
                name, wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss * 1024.0 / gib, ru.ru_minflt, note), flush=True)
    for k in OUTPUTS if 'numpy' not in args.skip.split(',') else ():
        a, b = np.load(os.path.join(dirname, 'tx_' + k + '.npy')), np.load(os.path.join(dirname, 'np_' + k + '.npy'))
        print('%s: txc run vs numpy, max rel. difference %.2e' % (k, max_rel(a, b)))
    if not args.dir:
        for f in os.listdir(dirname):
            os.unlink(os.path.join(dirname, f))
        os.rmdir(dirname)


def main(argv):
    import argparse
    if argv[:1] == ['child-numpy']:
        return child_numpy(argv[1], argv[2] == '1')
    if argv[:1] == ['child-api']:
        return child_api(argv[1], int(argv[2]), argv[3], argv[4] == '1')
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('mode', choices=('check', 'bench'))
    ap.add_argument('--txc', default=os.path.join(ROOT, 'build', 'txc'))
    ap.add_argument('--o', type=int, default=None)
    ap.add_argument('--v', type=int, default=None)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--repeat', type=int, default=1)
    ap.add_argument('--dir', default=None, help='keep the inputs and outputs here')
    ap.add_argument('--program', default=PROGRAM, help='another spelling of the port (bench)')
    ap.add_argument('--skip', default='', help='contenders not to run, comma-separated: txc,numpy,api')
    ap.add_argument('--no-huge-pages', action='store_true',
                    help='every contender in small pages: txc run --no-huge-pages, TX_OPTION_HUGE_PAGES=0, '
                         "numpy's _set_madvise_hugepage(False)")
    a = ap.parse_args(argv)
    if a.mode == 'check':
        a.o, a.v = a.o or 4, a.v or 10
        return check(a)
    a.o, a.v = a.o or 16, a.v or 100
    return bench(a)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]) or 0)
