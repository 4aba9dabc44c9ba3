#!/usr/bin/python3
"""gen: a seeded generator of random, valid .tx programs.

    /usr/bin/python3 tests/ref/gen.py [--seed S] [--count K] [--ext] [--complex] [-o DIR]

prints (or writes to DIR/gen_S_I.tx) K programs.  Each program starts with
comment lines that run_diff.py reads:

    # dims: n=3 m=5          the value of every symbolic dim
    # pos: P Q               inputs filled with values in [0.5, 2) (else [-1, 1))

Programs mix sums, products, divisions by positive denominators, nested
elementwise functions, powers (integer ones on anything, fractional and
negative ones on positive bases), reductions, scans, bare and tensor lets,
+= and -=, several statements reading earlier outputs, f32 and f64, chips and
diagonals.  With --ext they also use what the compiler does not implement yet
(txref.FEATURES_LATER: dims as numbers, delta, comparisons, where, *= and /=,
repeated target labels).  With --complex about half of the inputs that are
not kept positive are c128 (c64 where they would be f32) and every output,
tmp and inout tensor is complex (LANGUAGE.md 4.2), and some numbers are
imaginary literals (0.5i, tx(5)); a program that orders a
complex value (max, min, a comparison, where's condition) is rejected by the
reference, and run_diff.py draws another.  Without it the random stream, and
so every program, is what it was before complex types.

The generator keeps values tame (log and sqrt and fractional powers of
positive values only, denominators >= 1 or exponentials of bounded values)
but does not promise it: run_diff.py evaluates each program with the reference
and draws another one when the values are not finite, too large, or
ill-conditioned.
"""

import os
import random
import re
import sys

DIM_NAMES = ['n', 'm', 'p', 'q']
# every label always means the same dim in a program (so lets and statements
# never disagree): two or three labels per dim
LABELS = {'n': ['i', 'a', 'u'], 'm': ['j', 'b', 'v'], 'p': ['k', 'c', 'w'],
          'q': ['l', 'd', 'e'], 'K': ['r', 's']}
LABEL_DIM = {l: d for d, ls in LABELS.items() for l in ls}
NUMBERS = ['2', '0.5', '3', '1.5', '0.25', '1']


class Tensor:
    def __init__(self, name, kind, dims, dtype='f64', pos=False):
        self.name, self.kind, self.dims, self.dtype, self.pos = name, kind, dims, dtype, pos

    @property
    def rank(self):
        return len(self.dims)


class Gen:
    def __init__(self, seed, ext=False, complex_=False):
        self.r = random.Random(seed)
        self.ext = ext
        self.complex_ = complex_
        self.seed = seed

    # ------------------------------------------------------------ helpers --
    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq, weights=None):
        return self.r.choices(seq, weights=weights)[0] if weights else self.r.choice(seq)

    def label_for(self, dim, env, fresh_ok=True):
        """A label of dim `dim`: preferably one the statement already uses."""
        used = [l for l in env if env[l] == dim]
        if used and (not fresh_ok or self.chance(0.7)):
            return self.pick(used)
        free = [l for l in LABELS[dim] if l not in env]
        if not free:
            return self.pick(used)
        l = free[0]
        env[l] = dim
        return l

    # ----------------------------------------------------------- program --
    def program(self):
        r = self.r
        ndims = r.randint(2, 4)
        self.dimlist = DIM_NAMES[:ndims]
        self.dims = {d: r.randint(1, 6) for d in self.dimlist}
        self.const = None
        if self.chance(0.25):
            self.const = 'K'
            self.dims['K'] = r.randint(1, 5)
            self.dimlist = self.dimlist + ['K']
        self.tensors = []           # readable tensors
        self.lets = []              # (name, occ labels)
        self.let_text = {}
        stmts = []
        # inputs
        pools = {'mat': ['A', 'B', 'C', 'D', 'E', 'F', 'G'], 'vec': ['x', 'y', 'z', 'w', 'g', 'h'],
                 'sca': ['alpha', 'beta', 'gam', 'eta', 'rho'], 'pos': ['P', 'Q', 'R', 'U', 'W']}
        for _ in range(r.randint(2, 5)):
            rank = self.pick([0, 1, 2, 3, 4], [1, 4, 5, 2, 1])
            dims = [self.pick(self.dimlist) for _ in range(rank)]
            pos = self.chance(0.25)
            pool = pools['pos' if pos else 'sca' if rank == 0 else 'vec' if rank == 1 else 'mat']
            name = pool.pop(0)
            dt = 'f32' if self.chance(0.12) else 'f64'
            if self.complex_ and not pos and self.chance(0.5):
                dt = cx(dt)
            self.tensors.append(Tensor(name, 'in', dims, dt, pos))
        if self.chance(0.3):
            dims = [self.pick(self.dimlist) for _ in range(self.pick([0, 1, 2]))]
            self.tensors.append(Tensor('S', 'inout', dims,
                                       self.written('f32' if self.chance(0.15) else 'f64')))
        outs = []
        onames = iter(['out%d' % k for k in range(1, 20)])
        tnames = iter(['t%d' % k for k in range(1, 20)])
        lnames = iter(['e%d' % k for k in range(1, 20)])
        Lnames = iter(['T%d' % k for k in range(1, 20)])
        nstmt = r.randint(1, 4)
        for s in range(nstmt):
            what = self.pick(['out', 'out', 'out', 'tmp', 'let', 'lett', 'acc'])
            updatable = [t for t in self.tensors if t.kind in ('out', 'inout')]
            if what == 'acc' and not updatable:
                what = 'out'
            if what == 'let':
                env = {}
                e = self.expr(env, 2)
                name = next(lnames)
                stmts.append('let %s = %s;' % (name, e))
                self.lets.append((name, {l: LABEL_DIM[l] for l in self.occ_of(e)}))
                self.let_text[name] = e
                continue
            if what == 'acc':
                t = self.pick(updatable)
                env = {}
                labs = [self.label_for(d, env, fresh_ok=True) for d in t.dims]
                if len(set(labs)) != len(labs):
                    if not self.ext:
                        labs = self.distinct_labels(t.dims, env)
                ops = ['+=', '-=']
                if self.ext:
                    ops += ['*=', '/=']
                op = self.pick(ops)
                e = self.statement_rhs(env, labs, positive=(op == '/='))
                stmts.append('%s%s %s %s;' % (t.name, self.index(labs), op, e))
                # a bare let that reads t is not used from here on: LANGUAGE.md
                # 4.1 substitutes it where used, 4.3 computes it once where it
                # is defined; txc rejects the use (a question for the contract)
                self.lets = [(n, v) for n, v in self.lets if not self.let_reads(n, t.name)]
                continue
            rank = self.pick([0, 1, 2, 3], [3, 4, 4, 1])
            dims = [self.pick(self.dimlist) for _ in range(rank)]
            env = {}
            labs = self.distinct_labels(dims, env)
            e = self.statement_rhs(env, labs)
            if what == 'lett':
                name = next(Lnames)
                stmts.append('let %s%s = %s;' % (name, self.index(labs, always=True), e))
                self.tensors.append(Tensor(name, 'lett', dims))
                continue
            kind = 'tmp' if what == 'tmp' else 'out'
            name = next(tnames) if kind == 'tmp' else next(onames)
            t = Tensor(name, kind, dims, self.written('f32' if self.chance(0.12) else 'f64'))
            stmts.append('%s%s = %s;' % (name, self.index(labs), e))
            self.tensors.append(t)
            if kind == 'out':
                outs.append(t)
        if not outs:
            # at least one output
            dims = [self.pick(self.dimlist) for _ in range(self.pick([0, 1, 2]))]
            env = {}
            labs = self.distinct_labels(dims, env)
            e = self.statement_rhs(env, labs)
            t = Tensor(next(onames), 'out', dims, self.written('f64'))
            stmts.append('%s%s = %s;' % (t.name, self.index(labs), e))
            self.tensors.append(t)
        return self.render(stmts)

    def written(self, dt):
        """The type of a tensor statements write: complex with --complex."""
        return cx(dt) if self.complex_ else dt

    def let_reads(self, let, tensor):
        text = self.let_text[let]
        if re.search(r'\b%s\b' % re.escape(tensor), text):
            return True
        return any(re.search(r'\b%s\b' % n, text) and self.let_reads(n, tensor)
                   for n in self.let_text if n != let)

    def distinct_labels(self, dims, env):
        labs = []
        for d in dims:
            free = [l for l in LABELS[d] if l not in labs]
            if not free:
                return None
            l = free[0] if self.chance(0.7) else self.pick(free)
            env[l] = d
            labs.append(l)
        return labs

    def index(self, labs, always=False):
        if labs is None:
            raise Retry()
        if not labs and not always:
            return self.pick(['', '("")'])
        return '("%s")' % ','.join(labs)

    def render(self, stmts):
        lines = []
        syms = [d for d in self.dimlist if d != 'K']
        lines.append('# dims: ' + ' '.join('%s=%d' % (d, self.dims[d]) for d in syms))
        pos = [t.name for t in self.tensors if t.pos]
        if pos:
            lines.append('# pos: ' + ' '.join(pos))
        if self.const:
            lines.append('dim K = %d;' % self.dims['K'])
        if self.ext:  # a dim may be used as a number without being an extent
            lines.append('dim %s;' % ', '.join(syms))

        def decl(t):
            return t.name + ('[%s]' % ','.join(t.dims) if t.dims else '')
        for kind in ('in', 'inout', 'out', 'tmp'):
            for dt in ('f64', 'f32', 'c128', 'c64'):
                ts = [t for t in self.tensors if t.kind == kind and t.dtype == dt]
                if ts:
                    lines.append('%s %s%s;' % (kind, '' if dt == 'f64' else dt + ' ',
                                               ', '.join(decl(t) for t in ts)))
        lines += stmts
        return '\n'.join(lines) + '\n'

    # -------------------------------------------------------- expressions --
    def statement_rhs(self, env, target, positive=False):
        """An expression in which every target label appears."""
        if target is None:
            raise Retry()
        e = self.pos_expr(env, 3) if positive else self.expr(env, self.pick([1, 2, 3, 3]))
        occ = self.occ_of(e)
        for l in target:
            if l not in occ:
                leaf = self.leaf_with(env, l)
                if positive:
                    e = '(%s) * %s' % (e, self.pos_leaf_with(env, l))
                elif self.chance(0.5):
                    e = '%s + %s' % (e, leaf)
                else:
                    e = '(%s) * %s' % (e, leaf)
                occ = self.occ_of(e)
        return e

    def occ_of(self, e):
        """Labels written in an expression text (approximation: inside the
        quoted index strings, and in lets)."""
        import re
        out = set()
        for s in re.findall(r'"([^"]*)"', e):
            for l in s.split(','):
                l = l.strip()
                if l and not l.isdigit():
                    out.add(l)
        for name, env in self.lets:
            if re.search(r'\b%s\b' % name, e):
                out |= set(env)
        return out

    def leaf(self, env, positive=False):
        ts = self.tensors
        if positive:
            ts = [t for t in ts if t.pos] or None
            if ts is None:
                return None
        t = self.pick(ts, [3 if t.kind == 'in' else 2 for t in ts])
        if not t.dims:
            return t.name if self.chance(0.6) else t.name + '("")'
        labs = []
        for d in t.dims:
            if self.chance(0.04):
                labs.append(str(self.r.randint(0, self.dims[d] - 1)) if d == 'K' else '0')
                continue
            labs.append(self.label_for(d, env))
        return '%s("%s")' % (t.name, ','.join(labs))

    def leaf_with(self, env, label):
        d = env[label]
        cands = [t for t in self.tensors if d in t.dims]
        if not cands:
            # a fresh vector input of that dim
            t = Tensor(self.fresh_vec(), 'in', [d])
            self.tensors.insert(0, t)
            cands = [t]
        t = self.pick(cands)
        labs, placed = [], False
        for dd in t.dims:
            if dd == d and not placed:
                labs.append(label)
                placed = True
            else:
                labs.append(self.label_for(dd, env))
        return '%s("%s")' % (t.name, ','.join(labs))

    def pos_leaf_with(self, env, label):
        return 'exp(%s)' % self.wrap_bounded(self.leaf_with(env, label))

    def fresh_vec(self):
        used = {t.name for t in self.tensors}
        for n in ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8']:
            if n not in used:
                return n
        raise Retry()

    def number(self):
        """A number; with --complex, now and then an imaginary one (0.5i)."""
        x = self.pick(NUMBERS)
        if self.complex_ and self.chance(0.3):
            return x + 'i'
        return x

    def wrap_bounded(self, e):
        return self.pick(['tanh(%s)', 'sin(%s)', 'cos(%s)', '0.5 * tanh(%s)']) % e

    def expr(self, env, depth):
        """Any real expression."""
        if depth <= 0 or self.chance(0.15):
            if self.chance(0.12):
                return self.number()
            if self.lets and self.chance(0.15):
                name, lenv = self.pick(self.lets)
                env.update(lenv)
                return name
            if self.ext and self.chance(0.08):
                return self.ext_leaf(env)
            return self.leaf(env)
        d = depth - 1
        kind = self.pick(
            ['add', 'sub', 'mul', 'mul3', 'div', 'fn', 'exp', 'maxmin', 'pow', 'powf',
             'logsqrt', 'reduce', 'neg', 'scale', 'scan', 'ext'],
            [5, 3, 8, 2, 3, 4, 2, 2, 3, 2, 2, 3, 1, 2, 1, 3 if self.ext else 0])
        if kind == 'add':
            return '%s + %s' % (self.expr(env, d), self.expr(env, d))
        if kind == 'sub':
            return '%s - %s' % (self.expr(env, d), self.paren(self.expr(env, d)))
        if kind == 'mul':
            return '%s * %s' % (self.paren(self.expr(env, d)), self.paren(self.expr(env, d)))
        if kind == 'mul3':
            return '%s * %s * %s' % (self.leaf(env), self.leaf(env), self.leaf(env))
        if kind == 'div':
            return '%s / %s' % (self.paren(self.expr(env, d)), self.paren(self.pos_expr(env, d)))
        if kind == 'fn':
            f = self.pick(['sin', 'cos', 'tanh', 'abs'])
            return '%s(%s)' % (f, self.expr(env, d))
        if kind == 'exp':
            return 'exp(%s)' % self.wrap_bounded(self.expr(env, d))
        if kind == 'maxmin':
            return '%s(%s, %s)' % (self.pick(['max', 'min']), self.expr(env, d),
                                   self.expr(env, d) if self.chance(0.7) else self.pick(NUMBERS))
        if kind == 'pow':
            return '%s^%s' % (self.paren(self.expr(env, d), True), self.pick(['2', '2', '3']))
        if kind == 'powf':
            return self.power(self.pos_expr(env, d), ['0.5', '-1', '1.5', '-0.5', '-2'])
        if kind == 'logsqrt':
            return '%s(%s)' % (self.pick(['log', 'sqrt']), self.pos_expr(env, d))
        if kind == 'reduce':
            op = self.pick(['+', '+', 'max', 'min', '*'])
            inner = self.pos_expr(env, d) if op == '*' else self.expr(env, d)
            if op == '*':
                inner = 'exp(%s)' % self.wrap_bounded(inner)
            return 'reduce(%s, %s)' % (op, inner)
        if kind == 'neg':
            return '-%s' % self.paren(self.expr(env, d), True)
        if kind == 'scale':
            return '%s * %s' % (self.number(), self.paren(self.expr(env, d)))
        if kind == 'scan':
            inner = self.expr(env, d)
            occ = sorted(self.occ_of(inner))
            if not occ:
                return inner
            op = self.pick(['+', 'max', 'min'])
            return '%s(%s, %s, "%s")' % (self.pick(['scan', 'scanr']), op, inner,
                                         self.pick(occ))
        if kind == 'ext':
            return self.ext_expr(env, d)
        raise AssertionError(kind)

    def power(self, base, exponents):
        """base^p; a base without labels is a number, which tx(5) lets be
        raised only to an integer power 0..64."""
        p = self.pick(exponents)
        if not self.occ_of(base) and not re.search(r'[A-Za-z_]\w*("|\b(?!\())', base):
            p = '2'
        return '%s^%s' % (self.paren(base, True), p)

    def paren(self, e, tight=False):
        """Parenthesise e unless it is a leaf or a call."""
        import re
        if re.fullmatch(r'[\w.]+(\("[^"]*"\))?', e) or re.fullmatch(r'\w+\(.*\)', e) and \
                self.balanced_call(e):
            return e
        return '(%s)' % e

    @staticmethod
    def balanced_call(e):
        depth = 0
        for k, c in enumerate(e):
            if c == '(':
                depth += 1
            elif c == ')':
                depth -= 1
                if depth == 0 and k != len(e) - 1:
                    return False
        return True

    def pos_expr(self, env, depth):
        """An expression whose every entry is >= about 0.1 (a denominator, the
        argument of log or sqrt, the base of a fractional power)."""
        if depth <= 0 or self.chance(0.2):
            lf = self.leaf(env, positive=True)
            if lf is not None and self.chance(0.6):
                return lf
            return self.pick(['exp(%s)' % self.wrap_bounded(self.leaf(env)),
                              'abs(%s) + 1' % self.leaf(env),
                              '%s^2 + 1' % self.paren(self.leaf(env), True)])
        d = depth - 1
        kind = self.pick(['exp', 'abs1', 'sq1', 'mul', 'add', 'sqrt', 'max', 'red', 'powf'],
                         [3, 3, 2, 2, 2, 1, 1, 1, 1])
        if kind == 'exp':
            return 'exp(%s)' % self.wrap_bounded(self.expr(env, d))
        if kind == 'abs1':
            return 'abs(%s) + %s' % (self.expr(env, d), self.pick(['1', '0.5', '2']))
        if kind == 'sq1':
            return '%s^2 + 1' % self.paren(self.expr(env, d), True)
        if kind == 'mul':
            return '%s * %s' % (self.paren(self.pos_expr(env, d)), self.paren(self.pos_expr(env, d)))
        if kind == 'add':
            return '%s + %s' % (self.pos_expr(env, d), self.pos_expr(env, d))
        if kind == 'sqrt':
            return 'sqrt(%s)' % self.pos_expr(env, d)
        if kind == 'max':
            return 'max(%s, %s)' % (self.pos_expr(env, d), self.expr(env, d))
        if kind == 'red':
            return 'reduce(%s, %s)' % (self.pick(['+', 'max', 'min']), self.pos_expr(env, d))
        if kind == 'powf':
            return self.power(self.pos_expr(env, d), ['0.5', '-1', '2', '1.5'])
        raise AssertionError(kind)

    # features the compiler does not have yet
    def ext_leaf(self, env):
        k = self.pick(['dim', 'delta'])
        if k == 'dim':
            return self.pick([d for d in self.dimlist])
        d = self.pick(self.dimlist)
        labs = [self.label_for(d, env), self.label_for(d, env)]
        return 'delta("%s")' % ','.join(labs)

    def ext_expr(self, env, d):
        k = self.pick(['cmp', 'where', 'dimdiv', 'delta'])
        if k == 'cmp':
            return '(%s %s %s)' % (self.expr(env, d), self.pick(['<', '>', '<=', '>=']),
                                   self.pick(['0', '0.5', '-0.5']))
        if k == 'where':
            return 'where(%s > 0, %s, %s)' % (self.leaf(env), self.expr(env, d), self.expr(env, d))
        if k == 'dimdiv':
            return '%s / %s' % (self.paren(self.expr(env, d)), self.pick(self.dimlist))
        dd = self.pick(self.dimlist)
        labs = [self.label_for(dd, env), self.label_for(dd, env)]
        return 'delta("%s") * %s' % (','.join(labs), self.paren(self.expr(env, d)))


class Retry(Exception):
    pass


def cx(dt):
    """The complex type of real type DT."""
    return 'c64' if dt == 'f32' else 'c128'


def generate(seed, ext=False, complex_=False):
    """A program (text) for `seed`; deterministic."""
    k = 0
    while True:
        try:
            return Gen('%s/%d' % (seed, k), ext, complex_).program()
        except Retry:
            k += 1


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', default='1')
    ap.add_argument('--count', type=int, default=1)
    ap.add_argument('--ext', action='store_true')
    ap.add_argument('--complex', action='store_true')
    ap.add_argument('-o', dest='outdir')
    a = ap.parse_args(argv)
    for i in range(a.count):
        src = generate('%s:%d' % (a.seed, i), a.ext, a.complex)
        if a.outdir:
            os.makedirs(a.outdir, exist_ok=True)
            with open(os.path.join(a.outdir, 'gen_%s_%d.tx' % (a.seed, i)), 'w') as f:
                f.write(src)
        else:
            print('## program %s:%d' % (a.seed, i))
            print(src)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
