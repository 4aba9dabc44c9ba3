#!/usr/bin/python3
"""Standalone-C test runner: emits C for corpus programs and checks it.

    /usr/bin/python3 tests/run_cc.py [--txc build/txc] [--cc cc] [--blas] [--openmp]
                                     [--sleef | --libmvec] [--stream] [FILES...]

For each test file (default: a representative subset of tests/num):

  1. txc FILE.tx -o T/prog.c --header T/prog.h --name prog --no-blas
  2. write a driver T/main.c that includes prog.h, reads every in/inout
     tensor from a raw little-endian file, fills every out tensor with NaN,
     calls prog(dims..., tensors...) positionally (symbolic dims in order of
     first appearance in the source, then in/out/inout tensors in declaration
     order), checks the return code (printing prog_error(code) otherwise) and
     writes every out/inout tensor to a raw file
  3. cc -std=c99 -pedantic -Wall -Wextra -Werror T/prog.c T/main.c -lm (-O2
     and BLAS and LAPACK with --blas)
     (any warning fails the test), run it
  4. compare with the numpy expectation of the file's directives (same rules
     as run_num.py), and with `txc run` on the same inputs (1e-12 relative for
     f64 outputs, the file's tolerance for f32 ones)

With --openmp the C is compiled with -fopenmp and run with OMP_NUM_THREADS=1
and =2; both runs must write the same bytes (kernels split their outer loop
over threads, and every element is computed by one thread in one order).

With --sleef the C is compiled with -DTX_USE_SLEEF and linked with -lsleef
three times: plain (SSE2), -O2 -mavx2 -mfma and -O2 -march=x86-64-v4, so
that prims.inc's SLEEF code at 2, 4 and 8 doubles compiles cleanly; a
program whose kernels call exp, log, sin, cos or tanh must import a Sleef_
function; each build runs and is checked as above when the CPU can run it.

With --libmvec the same with -DTX_USE_LIBMVEC (glibc's vector functions,
which -lm brings) four times: plain (SSE2), -O2 -mavx, -O2 -mavx2 -mfma and
-O2 -march=x86-64-v4; then -DTX_USE_LIBMVEC -DTX_USE_SLEEF (the library's
mix of the two, vmath.inc) plain, with AVX2 and with AVX-512; such a
program must import a _ZGV function (with both macros, a _ZGV or a Sleef_
one: exp at 4 doubles and 8 floats is then vmath.inc's, inlined).

With --stream the C is compiled with -DTX_STREAM_BYTES=0, plain (SSE2) and
with -O2 -march=x86-64-v4: every copy and elementwise store that may
stream does (prims.inc tx_p_stream_f64, tx_pf_stream, tx_p_tile_f64), at
sizes a test can afford; each program must call a streaming copy.

Prints one line per failure and a final `N passed, N failed`.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_num as rn                                    # noqa: E402

import numpy as np                                      # noqa: E402

DEFAULT_FILES = [
    'matmul.tx',            # the first program
    'decl_example.tx',      # dim n,m; dim b = 16; f32 in, inout, tmp, scalar in
    'explicit_dims.tx',     # dims declared m, n: parameter order by first appearance
    'const_dim.tx',         # constant dim and literal extents are not parameters
    'f32_basic.tx',         # f32 tensors
    'mixed_precision.tx',   # f32 and f64 mixed, f32 inout
    'scalar_in.tx',         # scalar inputs as pointers to one element
    'scalar_out.tx',        # scalar out and inout
    'accumulate_inout.tx',  # inout += / -=
    'tmp_scratch.tx',       # tmp tensors
    'unicode_names.tx',     # non-ASCII tensor, label and dim names
    'c_keywords.tx',        # int, double, main, free, printf, NULL
    'c_names2.tx',          # static, const, errno, EOF, NAN, sizeof; dims for, while, int64_t
    'four_index.tx',        # five-operand contraction
    'chip_3d.tx',           # chips
    'let_tensor.tx',        # let intermediates
    'nested_add_sum_within.tx',
    'fill_only.tx',         # no inputs, dims only as parameters
    'complex_elementwise.tx',  # c128: double _Complex arrays passed as tx_c128 *
    'complex_promotion.tx',    # c64 and c128 mixed with f32 and f64
    'grad_lstsq.tx',        # grad: adjoint contractions, hidden tmp tensors relabelling
    'grad_hvp.tx',          # grad of a grad
    'row_groups.tx',        # row groups: kernels tile by tile of rows (records of records)
    'row_local.tx',         # row-local tensors: a tile's rows at the first rows of each call's range
    'f32_blocks.tx',        # f32 blocks (tx_pf_*), also with -DTX_USE_SLEEF
    'sum_flat_bits.tx',     # full sums of row-major tensors: one run, the library's bits
    'reduce_rows_flat.tx',  # short rows of functions as whole blocks (a condition checked at run time)
]

# complex tensors live in C99 complex arrays, passed cast to the header's
# pair types: the layout tx(5) promises
CTYPE = {'f64': 'double', 'f32': 'float', 'c64': 'float _Complex', 'c128': 'double _Complex'}
PARAMTYPE = {'c64': 'tx_c64', 'c128': 'tx_c128'}
RAWTYPE = {'f64': '<f8', 'f32': '<f4', 'c64': '<c8', 'c128': '<c16'}


def c_string(path):
    return '"' + path.replace('\\', '\\\\').replace('"', '\\"') + '"'


def driver_source(case, prep, tmpdir):
    """The C driver and the raw file paths of each io tensor."""
    raw = {d.name: os.path.join(tmpdir, 'r%d.bin' % i) for i, d in enumerate(case.io)}
    L = []
    L.append('#include "prog.h"')
    L.append('#include <stdint.h>')
    L.append('#include <stdio.h>')
    L.append('#include <stdlib.h>')
    L.append('#include <string.h>')
    L.append('')
    kinds = {d.kind for d in case.io}
    if kinds & {'in', 'inout'}:
        L.append('static void *load(const char *path, size_t bytes)')
        L.append('{')
        L.append('    FILE *f = fopen(path, "rb");')
        L.append('    void *p = malloc(bytes ? bytes : 1);')
        L.append('    if (!f || !p || fread(p, 1, bytes, f) != bytes) {')
        L.append('        fprintf(stderr, "driver: cannot read %s\\n", path);')
        L.append('        exit(2);')
        L.append('    }')
        L.append('    fclose(f);')
        L.append('    return p;')
        L.append('}')
        L.append('')

    if 'out' in kinds:
        L.append('static void *fresh(size_t bytes)')
        L.append('{')
        L.append('    void *p = malloc(bytes ? bytes : 1);')
        L.append('    if (!p) {')
        L.append('        fprintf(stderr, "driver: out of memory\\n");')
        L.append('        exit(2);')
        L.append('    }')
        L.append('    memset(p, 0xff, bytes);   /* NaN: outputs must be written, not read */')
        L.append('    return p;')
        L.append('}')
        L.append('')

    if kinds & {'out', 'inout'}:
        L.append('static void store(const char *path, const void *p, size_t bytes)')
        L.append('{')
        L.append('    FILE *f = fopen(path, "wb");')
        L.append('    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f) != 0) {')
        L.append('        fprintf(stderr, "driver: cannot write %s\\n", path);')
        L.append('        exit(2);')
        L.append('    }')
        L.append('}')
        L.append('')

    L.append('int main(void)')
    L.append('{')
    args = []
    for name in case.dims:
        args.append('(int64_t)%d' % prep.dims[name])
    for i, d in enumerate(case.io):
        ctype = CTYPE[d.dtype]
        count = int(np.prod(prep.shape(d), dtype=np.int64))
        nbytes = '(size_t)%d * sizeof(%s)' % (count, ctype)
        if d.kind in ('in', 'inout'):
            L.append('    %s *t%d = load(%s, %s);' % (ctype, i, c_string(raw[d.name]), nbytes))
        else:
            L.append('    %s *t%d = fresh(%s);' % (ctype, i, nbytes))
        args.append('(%s *)t%d' % (PARAMTYPE[d.dtype], i) if d.dtype in PARAMTYPE else 't%d' % i)
    L.append('    int rc = prog(%s);' % ', '.join(args))
    L.append('    if (rc != 0) {')
    L.append('        const char *msg = prog_error(rc);')
    L.append('        fprintf(stderr, "prog returned %d: %s\\n", rc, msg ? msg : "(null)");')
    L.append('        return 1;')
    L.append('    }')
    for i, d in enumerate(case.io):
        if d.kind in ('out', 'inout'):
            count = int(np.prod(prep.shape(d), dtype=np.int64))
            L.append('    store(%s, t%d, (size_t)%d * sizeof(%s));' % (
                c_string(raw[d.name]), i, count, CTYPE[d.dtype]))
    for i, d in enumerate(case.io):
        L.append('    free(t%d);' % i)
    L.append('    return 0;')
    L.append('}')
    return '\n'.join(L) + '\n', raw


def run(cmd, what, env=None):
    """None on success, else a reason."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=rn.TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return '%s: %s: timeout after %d s' % (what, shlex.join(cmd), rn.TIMEOUT)
    except OSError as e:
        return '%s: %s: %s' % (what, shlex.join(cmd), e)
    if r.returncode != 0:
        out = (r.stderr + r.stdout).decode('utf-8', 'replace')
        return '%s: %s: exit %d: %s' % (what, shlex.join(cmd), r.returncode,
                                        rn.one_line(out, 1500))
    return None


def cc_one(txc, cc, path):
    """None on pass, else a failure line."""
    name = os.path.basename(path)
    try:
        case = rn.Case(path)
        prep = rn.Prepared(case)
    except rn.TestError as e:
        return '%s: bad test: %s' % (name, e)
    with tempfile.TemporaryDirectory(prefix='txcc.') as td:
        progc, progh = os.path.join(td, 'prog.c'), os.path.join(td, 'prog.h')
        why = run([txc, case.path, '-o', progc, '--header', progh,
                   '--name', 'prog'] + ([] if BLAS else ['--no-blas']), 'emit')
        if why:
            return '%s: %s' % (name, why)
        src, raw = driver_source(case, prep, td)
        mainc = os.path.join(td, 'main.c')
        with open(mainc, 'w') as f:
            f.write(src)
        for d in case.io:
            if d.kind in ('in', 'inout'):
                prep.inputs[d.name].astype(RAWTYPE[d.dtype]).tofile(raw[d.name])
        rundir = os.path.join(td, 'run')
        os.mkdir(rundir)
        run_cmd, run_outs, run_why = rn.txc_run(txc, case, prep, rundir)
        # with BLAS at -O2, as a user builds it: GCC's flow warnings (a
        # buffer a kernel fills handed to BLAS as a const pointer) need it
        plain = (('', ['-O2'] if BLAS else [], ()),)
        if STREAM:
            plain = (('stream, SSE2', ['-DTX_STREAM_BYTES=0'], ()),
                     ('stream, AVX-512', ['-DTX_STREAM_BYTES=0', '-O2', '-march=x86-64-v4'], V4_NEEDS))
            with open(progc) as f:
                if not re.search(r'\btx_p(f)?_(stream(_f64)?|tile(_f64)?)\(', f.read()):
                    return '%s: --stream: the C calls no streaming copy' % name
        for tag, flags, needs in VMATH_VARIANTS.get(VMATH, plain):
            why = build_and_check(txc, cc, case, prep, td, progc, mainc, raw, flags, needs,
                                  run_cmd, run_outs, run_why)
            if why:
                return '%s: %s%s' % (name, '[%s] ' % tag if tag else '', why)
    return None


def cpu_has(flags):
    """Does this CPU have every /proc/cpuinfo flag of FLAGS?"""
    try:
        with open('/proc/cpuinfo') as f:
            have = set()
            for line in f:
                if line.startswith('flags'):
                    have = set(line.split(':', 1)[1].split())
                    break
    except OSError:
        return False
    return all(x in have for x in flags)


def build_and_check(txc, cc, case, prep, td, progc, mainc, raw, flags, needs, run_cmd, run_outs, run_why):
    """Compiles prog.c and main.c with FLAGS, runs the program (when the CPU
    has the /proc/cpuinfo flags NEEDS) and compares its outputs with numpy
    and with `txc run`. None on pass, else a reason."""
    exe = os.path.join(td, 'prog')
    why = run([cc, '-std=c99', '-pedantic', '-Wall', '-Wextra', '-Werror'] + (['-fopenmp'] if OPENMP else []) +
              flags + [progc, mainc] + (['-llapacke', '-lopenblas'] if BLAS else []) +
              (['-lsleef'] if '-DTX_USE_SLEEF' in flags else []) + ['-lm', '-o', exe], 'compile')
    if why:
        return why
    if VMATH:
        with open(progc) as f:                      # exp, log, sin, cos, tanh through tx_p_map
            uses = re.search(r'\btx_p_map\([^,;]*, [23678],', f.read())
        r = subprocess.run(['nm', '-u', exe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        # with both, exp at 4 doubles (AVX2 and FMA) and 8 floats is
        # vmath.inc's, inlined, and calls only SLEEF's (for odd lanes)
        marks, macro = (((b'Sleef_',), 'TX_USE_SLEEF') if VMATH == 'sleef' else
                        ((b'_ZGV', b'Sleef_') if '-DTX_USE_SLEEF' in flags else (b'_ZGV',), 'TX_USE_LIBMVEC'))
        if uses and not any(m in r.stdout for m in marks):
            return 'built with -D%s but calls no %s function' % (macro, ' or '.join(m.decode() for m in marks))
    if not cpu_has(needs):
        return None                                 # compiled; this CPU cannot run it
    outs_by_threads = []
    for nt in ((1, 2) if OPENMP else (None,)):
        env = dict(os.environ, OMP_NUM_THREADS=str(nt)) if nt else None
        why = run([exe], 'run', env=env)
        if why:
            return why
        outs_by_threads.append({d.name: open(raw[d.name], 'rb').read() for d in case.io
                                if d.kind in ('out', 'inout')})
        for d in case.io:                   # the inputs again for the next run
            if d.kind in ('in', 'inout'):
                prep.inputs[d.name].astype(RAWTYPE[d.dtype]).tofile(raw[d.name])
    if OPENMP and outs_by_threads[0] != outs_by_threads[1]:
        differ = [k for k in outs_by_threads[0] if outs_by_threads[0][k] != outs_by_threads[1][k]]
        return 'OMP_NUM_THREADS=1 and 2 wrote different %s' % ', '.join(differ)
    got = {}
    for d in case.io:
        if d.kind in ('out', 'inout'):
            a = np.frombuffer(outs_by_threads[-1][d.name], dtype=RAWTYPE[d.dtype])
            shape = prep.shape(d)
            if a.size != int(np.prod(shape, dtype=np.int64)):
                return 'output %s has %d elements, expected shape %s' % (d.name, a.size, shape)
            got[d.name] = a.reshape(shape).astype(d.np_dtype)
    reasons = []
    why = rn.check_outputs(case, prep, got, label='C vs numpy: ')
    if why:
        reasons.append(why)
    if run_why:
        reasons.append('txc run failed: %s: %s' % (shlex.join(run_cmd), run_why))
    else:
        for d in case.io:
            if d.kind not in ('out', 'inout'):
                continue
            tol = case.tol if d.dtype in ('f32', 'c64') else 1e-12
            ref = run_outs[d.name]
            if ref.shape != got[d.name].shape:
                reasons.append('C vs txc run: %s: shapes %s vs %s' % (
                    d.name, got[d.name].shape, ref.shape))
                continue
            why = rn.compare(got[d.name], ref.astype(np.complex128 if d.is_complex else np.float64), d, tol,
                             'C vs txc run: ')
            if why:
                reasons.append(why)
            elif d.name in case.same_bits and not rn.same_bits(got[d.name], ref.astype(d.np_dtype)):
                reasons.append('C vs txc run: %s: not the same bits (%r vs %r)' % (
                    d.name, got[d.name].ravel()[:4].tolist(), ref.ravel()[:4].tolist()))
    return '; '.join(reasons) if reasons else None


BLAS = False  # --blas: emit with BLAS/LAPACK calls and link -llapacke -lopenblas
OPENMP = False  # --openmp: compile with -fopenmp, run with 1 and 2 threads
VMATH = None    # --sleef or --libmvec: the vector functions asked for, at several widths
STREAM = False  # --stream: every store that may stream does (-DTX_STREAM_BYTES=0)
V4_NEEDS = ('avx2', 'fma', 'bmi2', 'avx512f', 'avx512bw', 'avx512cd', 'avx512dq', 'avx512vl')
# (name, extra cc flags, /proc/cpuinfo flags needed to run it)
VMATH_VARIANTS = {
    'sleef': (
        ('SLEEF, SSE2', ['-DTX_USE_SLEEF'], ()),
        ('SLEEF, AVX2', ['-DTX_USE_SLEEF', '-O2', '-mavx2', '-mfma'], ('avx2', 'fma')),
        ('SLEEF, AVX-512', ['-DTX_USE_SLEEF', '-O2', '-march=x86-64-v4'], V4_NEEDS),
    ),
    'libmvec': (
        ('libmvec, SSE2', ['-DTX_USE_LIBMVEC'], ()),
        ('libmvec, AVX', ['-DTX_USE_LIBMVEC', '-O2', '-mavx'], ('avx',)),
        ('libmvec, AVX2', ['-DTX_USE_LIBMVEC', '-O2', '-mavx2', '-mfma'], ('avx2', 'fma')),
        ('libmvec, AVX-512', ['-DTX_USE_LIBMVEC', '-O2', '-march=x86-64-v4'], V4_NEEDS),
        ('libmvec and SLEEF, SSE2', ['-DTX_USE_LIBMVEC', '-DTX_USE_SLEEF'], ()),
        ('libmvec and SLEEF, AVX2', ['-DTX_USE_LIBMVEC', '-DTX_USE_SLEEF', '-O2', '-mavx2', '-mfma'], ('avx2', 'fma')),
        ('libmvec and SLEEF, AVX-512', ['-DTX_USE_LIBMVEC', '-DTX_USE_SLEEF', '-O2', '-march=x86-64-v4'], V4_NEEDS),
    ),
}


def main(argv):
    txc, cc, files = rn.DEFAULT_TXC, os.environ.get('CC', 'cc'), []
    it = iter(argv)
    for a in it:
        if a == '--txc':
            txc = next(it, None)
        elif a.startswith('--txc='):
            txc = a.split('=', 1)[1]
        elif a == '--cc':
            cc = next(it, None)
        elif a.startswith('--cc='):
            cc = a.split('=', 1)[1]
        elif a == '--blas':
            global BLAS
            BLAS = True
        elif a == '--openmp':
            global OPENMP
            OPENMP = True
        elif a == '--stream':
            global STREAM
            STREAM = True
        elif a in ('--sleef', '--libmvec'):
            global VMATH
            VMATH = a[2:]
        elif a in ('-h', '--help'):
            print(__doc__)
            return 0
        elif a.startswith('-'):
            print('unknown option %s' % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
    if not txc or not cc:
        print('--txc and --cc need a value', file=sys.stderr)
        return 2
    files = files or [os.path.join(rn.NUMDIR, f) for f in DEFAULT_FILES]
    if not (os.path.isfile(txc) and os.access(txc, os.X_OK)):
        print('txc not found or not executable: %s' % txc, file=sys.stderr)
        return 2
    txc = os.path.abspath(txc)
    results = [cc_one(txc, cc, f) for f in files]
    failed = [r for r in results if r]
    for r in failed:
        print('FAIL ' + r)
    print('%d passed, %d failed' % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
