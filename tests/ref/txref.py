#!/usr/bin/python3
"""txref: a reference evaluator of the .tx language, in Python over numpy.

Written from the language contract (LANGUAGE.md, section 4.1 above all), not
from the compiler: it exists to check the compiler against the contract.

    import txref
    prog = txref.parse(src, 'file.tx')
    outs = prog.run({'A': a, 'x': x}, dims={'n': 4})    # {'C': array, ...}

    /usr/bin/python3 tests/ref/txref.py FILE.tx NAME=FILE.npy ... [-D n=4]
        [--random [--seed S]]   prints the outputs (like `txc run`)

What it evaluates: declarations (in out inout tmp, f32 f64 c64 c128, dim n / dim b = 16,
extents that are dim expressions such as o+v or 2*n-1); statements = += -= *=
/=, a target with repeated labels (the diagonal), `let x = e` (substituted
where used), `let T("i,j") = e` (a statement of its own); numbers, indexed
tensors with repeated labels (diagonals) and integer labels (chips), scalars,
dim names as numbers, delta("i,j,..."), unary -, + - * /, ^ with a constant
exponent, exp log sqrt abs sin cos tanh conj real imag, max min, comparisons
< <= > >= == !=, where(c, a, b), reduce(op, x) and scan/scanr(op, x, "k") with
op + * max min.  Complex (LANGUAGE.md 4.2): a node is complex when a tensor
it reads is, unless real, imag, abs or a comparison takes it back to the
reals; storing a complex value into a real tensor, max/min, comparisons,
where's condition and reduce/scan with max/min on a complex operand are
compile errors; imaginary literals (2.5i) are complex numbers; a program
with complex tensors or literals computes in complex128, real nodes on their
real parts (so sqrt(-1) of a real is NaN, as in C).
Not evaluated (TxError kind 'unsupported'): sparse maps, the linear-algebra
calls, slice, grad, multi-output statements.

The summation rule (LANGUAGE.md 4.1) lives in one recursive function,
Evaluator.ev(node, need, ...).  Every node returns an array over an ordered
list of distinct labels: its "open" labels, those not summed yet.  `need` is
the set of labels used outside the node (the target of the enclosing sum, or
the statement's, plus the labels of the sibling factors or arguments).

  * A product (a chain of * and /, flattened; a denominator is a factor of
    its own, evaluated as a transparent operand and inverted) sums, as one
    contraction, every label that is open in two or more of its factors and
    is not needed outside: that is the lowest product containing all of the
    label's occurrences.  A label open in one factor only is not summed there
    (it flows on: `(u("i") * v("j"))^2` squares the outer product,
    `exp(alpha * A("i,j"))` keeps j); it is summed by the term above.
  * A sum (a chain of + and -) has as its target the labels needed outside
    it; each term sums its open labels not in that target, and a target label
    missing from a term broadcasts it.  A sum inside a transparent operation
    (also one nested in a product there) keeps all its labels: it sums
    nothing, and each term sees the other terms' labels as used outside.
  * Transparent operations (functions, comparisons, where, the base of ^, a
    denominator, scan) sum nothing; their operands' open labels flow out.
  * reduce(op, x) evaluates x summing nothing (no product or sum inside sums;
    an inner reduce still reduces its own labels), then reduces with op every
    open label of x that is not needed outside the reduce.
  * A statement sums, at the top, every open label not in its target.

Where the wording of 4.1 leaves a choice, Options names it; the defaults are
the reading documented above, and run_diff.py evaluates the alternatives to
tell an ambiguous program from a wrong answer.  Where LANGUAGE.md is silent:
a `let T(...)` tensor is f32 when every tensor its expression reads is f32
(numpy's result type), else f64; arithmetic is f64, rounded to f32 on store.

QUIRKS are models of the compiler's known deviations from 4.1 (issue 14),
off unless Options(quirks=...) asks: run_diff.py uses them to name the cause
of a disagreement, never as the reference.
"""

import math
import re
import sys
import itertools

import numpy as np


# ------------------------------------------------------------------ errors --

class TxError(Exception):
    """kind: 'syntax' or 'compile' (the program is wrong), 'runtime' (the
    data do not fit), 'unsupported' (the evaluator does not do it)."""

    def __init__(self, kind, msg, line=0):
        Exception.__init__(self, '%s%s error: %s' % (
            ('line %d: ' % line) if line else '', kind, msg))
        self.kind, self.msg, self.line = kind, msg, line


# ------------------------------------------------------------------- lexer --

TOKEN_RE = re.compile(r'''
    (?P<ws>\s+)
  | (?P<comment>(?:\#|//)[^\n]*)
  | (?P<imag>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?i)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[^\W\d]\w*)
  | (?P<str>"[^"\n]*")
  | (?P<op>\+=|-=|\*=|/=|->|<=|>=|==|!=|[-+*/^()\[\],;:=<>])
''', re.X)

DECL_KW = ('in', 'out', 'inout', 'tmp', 'dim', 'let', 'sparse')
ELTYPES = ('f32', 'f64', 'c64', 'c128')
FUNCS1 = ('exp', 'log', 'sqrt', 'abs', 'sin', 'cos', 'tanh', 'conj', 'real', 'imag')
FUNCS2 = ('max', 'min')
LINALG = ('cholesky', 'inv', 'pow', 'solve', 'eigh', 'qr', 'svd', 'slice', 'grad')
COMPLEX = ('c64', 'c128')
REAL_OF = {'f32': 'f32', 'f64': 'f64', 'c64': 'f32', 'c128': 'f64'}
REDUCE_OPS = ('+', '*', 'max', 'min')
CMP_OPS = ('<', '<=', '>', '>=', '==', '!=')


class Tok:
    __slots__ = ('kind', 'text', 'line')

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return '%s:%r' % (self.kind, self.text)


def lex(src):
    toks, pos, line = [], 0, 1
    while pos < len(src):
        m = TOKEN_RE.match(src, pos)
        if not m:
            raise TxError('syntax', 'unexpected character %r' % src[pos], line)
        kind, text = m.lastgroup, m.group()
        if kind not in ('ws', 'comment'):
            toks.append(Tok(kind, text, line))
        line += text.count('\n')
        pos = m.end()
    toks.append(Tok('eof', '', line))
    return toks


def parse_labels(s, line):
    """The labels of an index string: a list of names (str) and chips (int)."""
    body = s[1:-1]
    if body.strip() == '':
        return []
    out = []
    for part in body.split(','):
        p = part.strip()
        if re.fullmatch(r'\d+', p):
            out.append(int(p))
        elif re.fullmatch(r'[^\W\d]\w*', p):
            out.append(p)
        else:
            raise TxError('syntax', 'bad label %r in %s' % (p, s), line)
    return out


# --------------------------------------------------------------------- AST --
# Parsed expressions are tuples:
#   ('num', value) ('imag', value: the number times i) ('name', name) ('idx', name, labels) ('neg', e)
#   ('bin', op, a, b) for + - * /        ('pow', base, exponent-expr)
#   ('cmp', op, a, b)   ('call', fname, [args])   ('delta', labels)
#   ('reduce', op, e)   ('scan', op, e, label, reverse)

class Decl:
    def __init__(self, kind, dtype, name, extents, line):
        self.kind, self.dtype, self.name, self.extents, self.line = \
            kind, dtype, name, extents, line

    def __repr__(self):
        return '%s %s %s%s' % (self.kind, self.dtype, self.name, self.extents)


class Stmt:
    def __init__(self, kind, line, **kw):
        self.kind, self.line = kind, line     # 'assign', 'let', 'lettensor'
        self.__dict__.update(kw)


class Parser:
    def __init__(self, src):
        self.toks = lex(src)
        self.i = 0

    # token helpers
    def peek(self, k=0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, text, k=0):
        t = self.peek(k)
        return t.kind in ('op', 'name') and t.text == text

    def expect(self, text):
        t = self.next()
        if t.text != text or t.kind not in ('op', 'name'):
            raise TxError('syntax', 'expected %r, found %r' % (text, t.text), t.line)
        return t

    def expect_kind(self, kind):
        t = self.next()
        if t.kind != kind:
            raise TxError('syntax', 'expected a %s, found %r' % (kind, t.text), t.line)
        return t

    # program
    def program(self):
        decls, consts, symdims, stmts = [], {}, [], []
        while self.peek().kind != 'eof':
            t = self.peek()
            if t.kind == 'name' and t.text in DECL_KW and self.starts_decl():
                self.declaration(decls, consts, symdims, stmts)
            elif t.kind == 'op' and t.text == '(':
                raise TxError('unsupported', 'multi-output statements', t.line)
            else:
                stmts.append(self.statement())
        return decls, consts, symdims, stmts

    def starts_decl(self):
        nxt = self.peek(1)
        if nxt.kind == 'op' and nxt.text in ('(', '=', '+=', '-=', '*=', '/='):
            return False          # a tensor called `in` (LANGUAGE.md 2)
        return True

    def declaration(self, decls, consts, symdims, stmts):
        kw = self.next()
        if kw.text == 'sparse':
            raise TxError('unsupported', 'sparse maps', kw.line)
        if kw.text == 'let':
            stmts.append(self.let(kw))
            return
        if kw.text == 'dim':
            while True:
                name = self.expect_kind('name').text
                if self.at('='):
                    self.next()
                    v = self.expect_kind('num').text
                    if not re.fullmatch(r'\d+', v):
                        raise TxError('compile', 'dim %s = %s: not an integer' % (name, v), kw.line)
                    consts[name] = int(v)
                else:
                    symdims.append(name)
                if self.at(','):
                    self.next()
                    continue
                self.expect(';')
                return
        dtype = 'f64'
        if self.peek().kind == 'name' and self.peek().text in ELTYPES and \
                self.peek(1).kind == 'name':
            dtype = self.next().text
        while True:
            nt = self.expect_kind('name')
            exts = []
            if self.at('['):
                self.next()
                while True:
                    exts.append(self.extent())
                    if self.at(','):
                        self.next()
                        continue
                    self.expect(']')
                    break
            decls.append(Decl(kw.text, dtype, nt.text, exts, nt.line))
            if self.at(','):
                self.next()
                continue
            self.expect(';')
            return

    def extent(self):
        """A dim expression: sums, differences, integer multiples of dims and
        integers.  Returned as a linear form {name or 1: coefficient}."""
        def term():
            sign = 1
            while self.at('-'):
                self.next()
                sign = -sign
            t = self.next()
            if t.kind == 'num':
                if not re.fullmatch(r'\d+', t.text):
                    raise TxError('compile', 'extent %s is not an integer' % t.text, t.line)
                form = {1: int(t.text)}
                if self.at('*'):
                    self.next()
                    n = self.expect_kind('name').text
                    form = {n: int(t.text)}
            elif t.kind == 'name':
                form = {t.text: 1}
                if self.at('*'):
                    self.next()
                    v = self.expect_kind('num').text
                    form = {t.text: int(v)}
            else:
                raise TxError('syntax', 'bad extent %r' % t.text, t.line)
            return {k: sign * v for k, v in form.items()}
        form = term()
        while self.at('+') or self.at('-'):
            sign = 1 if self.next().text == '+' else -1
            for k, v in term().items():
                form[k] = form.get(k, 0) + sign * v
        return form

    def let(self, kw):
        nt = self.expect_kind('name')
        if self.at('('):
            self.next()
            lab = parse_labels(self.expect_kind('str').text, nt.line)
            self.expect(')')
            self.expect('=')
            e = self.expr()
            self.expect(';')
            return Stmt('lettensor', kw.line, name=nt.text, labels=lab, rhs=e)
        self.expect('=')
        e = self.expr()
        self.expect(';')
        return Stmt('let', kw.line, name=nt.text, rhs=e)

    def statement(self):
        nt = self.expect_kind('name')
        labels = []
        if self.at('('):
            self.next()
            labels = parse_labels(self.expect_kind('str').text, nt.line)
            self.expect(')')
        op = self.next()
        if op.kind != 'op' or op.text not in ('=', '+=', '-=', '*=', '/='):
            raise TxError('syntax', "expected '=', '+=', '-=', '*=' or '/=', found %r"
                          % op.text, op.line)
        e = self.expr()
        self.expect(';')
        return Stmt('assign', nt.line, target=nt.text, labels=labels, op=op.text, rhs=e)

    # expressions
    def expr(self):
        a = self.add()
        if self.peek().kind == 'op' and self.peek().text in CMP_OPS:
            op = self.next().text
            b = self.add()
            a = ('cmp', op, a, b)
            if self.peek().kind == 'op' and self.peek().text in CMP_OPS:
                raise TxError('syntax', 'chained comparison', self.peek().line)
        return a

    def add(self):
        a = self.mul()
        while self.at('+') or self.at('-'):
            op = self.next().text
            a = ('bin', op, a, self.mul())
        return a

    def mul(self):
        a = self.unary()
        while self.at('*') or self.at('/'):
            op = self.next().text
            a = ('bin', op, a, self.unary())
        return a

    def unary(self):
        if self.at('-'):
            self.next()
            return ('neg', self.unary())
        return self.power()

    def power(self):
        a = self.primary()
        if self.at('^'):
            self.next()
            return ('pow', a, self.unary())       # right-associative, may be -1
        return a

    def primary(self):
        t = self.next()
        if t.kind == 'num':
            return ('num', float(t.text))
        if t.kind == 'imag':                      # 2.5i: tx(5), ELEMENT TYPES
            return ('imag', float(t.text[:-1]))
        if t.kind == 'op' and t.text == '(':
            e = self.expr()
            self.expect(')')
            return e
        if t.kind != 'name':
            raise TxError('syntax', 'unexpected %r' % t.text, t.line)
        if not self.at('('):
            return ('name', t.text)
        self.next()
        if self.peek().kind == 'str':
            lab = parse_labels(self.next().text, t.line)
            self.expect(')')
            if t.text == 'delta':
                return ('delta', lab, t.line)
            return ('idx', t.text, lab)
        f = t.text
        if f in ('reduce', 'scan', 'scanr'):
            op = self.next()
            if op.text not in REDUCE_OPS:
                raise TxError('compile', '%s: bad operator %r' % (f, op.text), t.line)
            self.expect(',')
            e = self.expr()
            if f == 'reduce':
                self.expect(')')
                return ('reduce', op.text, e)
            self.expect(',')
            lab = parse_labels(self.expect_kind('str').text, t.line)
            self.expect(')')
            if len(lab) != 1 or not isinstance(lab[0], str):
                raise TxError('compile', '%s needs one label' % f, t.line)
            return ('scan', op.text, e, lab[0], f == 'scanr')
        if f in LINALG:
            raise TxError('unsupported', 'the call %s(...)' % f, t.line)
        args = [self.expr()]
        while self.at(','):
            self.next()
            args.append(self.expr())
        self.expect(')')
        want = {**{k: 1 for k in FUNCS1}, **{k: 2 for k in FUNCS2}, 'where': 3}
        if f not in want:
            raise TxError('compile', 'unknown function %r' % f, t.line)
        if len(args) != want[f]:
            raise TxError('compile', '%s takes %d argument(s)' % (f, want[f]), t.line)
        return ('call', f, args)


# ------------------------------------------------------ normalised nodes --
# After name resolution and let substitution the evaluator works on these.

class Node:
    occ = frozenset()          # labels written inside the node


class Const(Node):
    def __init__(self, v):
        self.v = v


class Leaf(Node):
    def __init__(self, name, labels):
        self.name, self.labels = name, labels
        self.occ = frozenset(l for l in labels if isinstance(l, str))


class Delta(Node):
    def __init__(self, labels):
        self.labels = labels
        self.occ = frozenset(labels)


class Neg(Node):
    def __init__(self, e):
        self.e = e
        self.occ = e.occ


class Sum(Node):
    def __init__(self, terms):            # [(sign +1/-1, node)]
        self.terms = terms
        self.occ = frozenset().union(*[t.occ for _, t in terms])


class Prod(Node):
    def __init__(self, factors):          # [(inverted?, node)]
        self.factors = factors
        self.occ = frozenset().union(*[f.occ for _, f in factors])


class Fn(Node):
    """A transparent elementwise operation: a function, a comparison,
    where, or a power (name '^', with .p the exponent)."""
    def __init__(self, f, args, p=None):
        self.f, self.args, self.p = f, args, p
        self.occ = frozenset().union(*[a.occ for a in args])


class Reduce(Node):
    def __init__(self, op, e):
        self.op, self.e = op, e
        self.occ = e.occ


class Scan(Node):
    def __init__(self, op, e, label, rev):
        self.op, self.e, self.label, self.rev = op, e, label, rev
        self.occ = e.occ | {label}


def const_value(e):
    """The value of an expression of numbers, else None."""
    k = e[0]
    if k == 'num':
        return e[1]
    if k == 'neg':
        v = const_value(e[1])
        return None if v is None else -v
    if k == 'bin':
        a, b = const_value(e[2]), const_value(e[3])
        if a is None or b is None:
            return None
        return {'+': a + b, '-': a - b, '*': a * b, '/': a / b if b else math.nan}[e[1]]
    if k == 'pow':
        a, b = const_value(e[1]), const_value(e[2])
        if a is None or b is None:
            return None
        try:
            return float(a ** b) if not (a < 0 and b != int(b)) else math.nan
        except (OverflowError, ZeroDivisionError):
            return math.nan
    return None


# ------------------------------------------------------------------ program --

FEATURES_LATER = ()


class Options:
    """Readings of 4.1 where its wording leaves a choice (see run_diff.py).

    keepall_terms  'occ' (default): in a sum that keeps its labels (inside a
                   transparent operation or a reduce), a term's product still
                   contracts a label all of whose occurrences it holds:
                   exp(x("i")*y("i") + 1) is exp(x@y + 1).
                   'all': the sum's written labels are all needed, so nothing
                   inside it contracts: sum(exp(x*y + 1)).
    keepall_scope  'anywhere' (default): every sum inside a transparent
                   operation keeps its labels, also one nested in a product
                   there: exp((x("i") + 1) * y("j")) keeps i.
                   'direct': only a sum that is the operation's operand
                   (through parentheses and unary minus); one inside a product
                   sums as 4.1's Sums bullet says (target: the labels used
                   outside it).
    reduce_scope   'term' (default): the labels a reduce reduces are those not
                   used outside it within its term (a sibling term of an
                   enclosing sum sums its own labels and does not count):
                   s = reduce(max, x("i")) + y("i") is max(x) + sum(y).
                   'statement': any use elsewhere in the statement counts, so
                   that reduce reduces nothing and its term sums i.
    """

    CHOICES = {'keepall_terms': ('occ', 'all'),
               'keepall_scope': ('anywhere', 'direct'),
               'reduce_scope': ('term', 'statement')}

    def __init__(self, quirks=(), **kw):
        self.quirks = frozenset(quirks)
        for q in self.quirks:
            if q not in QUIRKS:
                raise ValueError('unknown quirk %s' % q)
        for k, v in self.CHOICES.items():
            setattr(self, k, v[0])
        for k, v in kw.items():
            if k not in self.CHOICES or v not in self.CHOICES[k]:
                raise ValueError('bad option %s=%s' % (k, v))
            setattr(self, k, v)

    def __repr__(self):
        return ', '.join('%s=%s' % (k, getattr(self, k)) for k in self.CHOICES)

    @classmethod
    def alternatives(cls):
        """Every combination other than the default, as Options."""
        keys = list(cls.CHOICES)
        out = []
        for combo in itertools.product(*[cls.CHOICES[k] for k in keys]):
            if all(v == cls.CHOICES[k][0] for k, v in zip(keys, combo)):
                continue
            out.append(cls(**dict(zip(keys, combo))))
        return out

    def differences(self):
        return ', '.join('%s=%s' % (k, getattr(self, k)) for k in self.CHOICES
                         if getattr(self, k) != self.CHOICES[k][0])


# Models of the compiler's known deviations from 4.1 (issue 14).  They are
# NOT readings of the contract: run_diff.py turns them on only after txc has
# disagreed with the reference, to name the cause of the disagreement.
QUIRKS = {
    'early-product': 'a product of two or more non-number factors sums every '
                     'label not used outside it, also one that only one factor '
                     'carries, so inside a function or a power it sums too early: '
                     '(u("i") * v("j"))^2 squares the total, exp(alpha * A("i,j")) '
                     'sums j inside exp',
    'sum-in-fn': 'in a sum inside a function or a power, a label that some '
                 'term sums inside itself (by a product or a reduce) is summed by '
                 'every term before the function: in tanh(y("t") + beta * y("t")) '
                 'the product closes t, so the result is '
                 'tanh(sum(y) + beta * sum(y))',
    'sum-in-denominator': 'a sum in a denominator sums each term\'s labels not '
                          'used outside, as a sum elsewhere: x("i") / (A("i,j")^2 + 1) '
                          'is x / (sum_j A^2 + 1)',
    'max-closes': 'max and min sum, right after the operation, each label not '
                  'used outside them that a product inside an operand carries: '
                  'max(A("i,j") * B("i,j"), B("i,j"))^2 squares the total',
    'fn-args-blind': 'the operands of max and min do not see each other\'s '
                     'labels as used outside: min(B("c,j") * B("k,j"), cos(P("j") * y("k"))) '
                     'contracts j inside the first operand',
    'reduce-hidden': 'the labels inside a reduce do not count as used outside '
                     'for its siblings (a product beside it may sum them), and '
                     'the reduce sees only the labels its siblings leave open: '
                     'max(reduce(+, x("k")), (x("k") * y("w"))^2)',
}


def form_key(form, consts):
    """A canonical, hashable extent: constants folded in."""
    out = {}
    for k, v in form.items():
        if k != 1 and k in consts:
            out[1] = out.get(1, 0) + v * consts[k]
        else:
            out[k] = out.get(k, 0) + v
    return tuple(sorted(((str(k), v) for k, v in out.items() if v != 0)))


def form_value(form, dims):
    v = 0
    for k, c in form.items():
        if k == 1:
            v += c
        else:
            if k not in dims:
                raise TxError('runtime', "dim '%s' is not known" % k)
            v += c * dims[k]
    return v


def form_text(key):
    if not key:
        return '0'
    parts = []
    for k, v in key:
        if k == '1':
            parts.append(str(v))
        else:
            parts.append(k if v == 1 else '%d*%s' % (v, k))
    return '+'.join(parts)


class Program:
    def __init__(self, src, filename='<tx>'):
        self.src, self.filename = src, filename
        p = Parser(src)
        self.has_imag = any(t.kind == 'imag' for t in p.toks)
        self.decls, self.consts, self.symdims, self.stmts = p.program()
        self.tensors = {}
        for d in self.decls:
            if d.name in self.tensors or d.name in self.consts or d.name in self.symdims:
                raise TxError('compile', "'%s' is declared twice" % d.name, d.line)
            self.tensors[d.name] = d
        self.features = set()
        self.check()

    # dims
    def dim_names(self):
        names = list(self.symdims)
        for d in self.decls:
            for f in d.extents:
                for k in f:
                    if k != 1 and k not in self.consts and k not in names:
                        names.append(k)
        return names

    def resolve_dims(self, inputs, dims=None):
        """Symbolic dims from the inputs' shapes (extents that are a bare dim
        name) and from `dims`."""
        out = dict(self.consts)
        for k, v in (dims or {}).items():
            if k in self.consts and self.consts[k] != v:
                raise TxError('runtime', 'dim %s is the constant %d, given %d'
                              % (k, self.consts[k], v))
            out[k] = int(v)
        for d in self.decls:
            if d.name not in inputs:
                continue
            shape = np.shape(inputs[d.name])
            if len(shape) != len(d.extents):
                raise TxError('runtime', '%s has shape %s, declared with %d modes'
                              % (d.name, shape, len(d.extents)))
            for f, s in zip(d.extents, shape):
                names = [k for k in f if k != 1]
                if len(names) == 1 and f[names[0]] == 1 and names[0] not in out:
                    out[names[0]] = s - sum(v for k, v in f.items() if k == 1)
        for d in self.decls:
            if d.name in inputs:
                want = tuple(form_value(f, out) for f in d.extents)
                if tuple(np.shape(inputs[d.name])) != want:
                    raise TxError('runtime', '%s has shape %s, expected %s'
                                  % (d.name, np.shape(inputs[d.name]), want))
        for n in self.dim_names():
            if n not in out:
                raise TxError('runtime', "dim '%s' is not given" % n)
        return out

    def shape(self, decl, dims):
        return tuple(form_value(f, dims) for f in decl.extents)

    # static checks: names, labels, extents (compile-time errors)
    def check(self):
        written = set(d.name for d in self.decls if d.kind == 'inout')
        self.lets = {}            # bare let name -> parsed expression
        self.lettensors = {}      # let tensor name -> (labels, extent keys)
        self.lettypes = {}        # let tensor name -> 'f32' or 'f64'
        for st in self.stmts:
            if st.kind == 'let':
                if st.name in self.tensors or st.name in self.lets or st.name in self.lettensors:
                    raise TxError('compile', "'%s' is declared twice" % st.name, st.line)
                self.lets[st.name] = st.rhs
                if self.has_complex:   # ordering a complex value is an error where it is written
                    try:
                        lnode = self.normalise(st.rhs, st.line, set(written), {})[0]
                    except TxError:
                        # anything else is checked where it is used; the
                        # order of complex values is checked where written
                        self.check_complex_raw(st.rhs, st.line)
                        continue
                    self.check_complex(lnode, st.line)
                continue
            pre = {}
            d = self.tensors.get(getattr(st, 'target', None))
            if st.kind == 'assign' and d is not None and len(st.labels) == len(d.extents):
                for l, f in zip(st.labels, d.extents):     # the target is a use too
                    if isinstance(l, str):
                        pre.setdefault(l, form_key(f, self.consts))
            node, ext = self.normalise(st.rhs, st.line, written, pre)
            st.node, st.ext = node, ext
            if st.kind == 'lettensor':
                if st.name in self.tensors or st.name in self.lets or st.name in self.lettensors:
                    raise TxError('compile', "'%s' is declared twice" % st.name, st.line)
                for l in st.labels:
                    if not isinstance(l, str):
                        raise TxError('compile', 'an integer label in a target', st.line)
                    if st.labels.count(l) > 1:
                        raise TxError('compile', "label '%s' repeated in the target" % l, st.line)
                    if l not in ext:
                        raise TxError('compile', "label '%s' of the target does not appear "
                                      "on the right-hand side" % l, st.line)
                self.lettensors[st.name] = (st.labels, [ext[l] for l in st.labels])
                # LANGUAGE.md does not say; like numpy's result type: f32 when
                # every tensor the expression reads is f32, else f64
                leaves = []
                collect(node, Leaf, leaves)
                st.dtype = 'f32' if leaves and all(self.dtype_of(l.name) in ('f32', 'c64')
                                                   for l in leaves) else 'f64'
                self.check_complex(node, st.line)
                if self.is_cx(node):
                    st.dtype = 'c64' if st.dtype == 'f32' else 'c128'
                self.lettypes[st.name] = st.dtype
                written.add(st.name)
                continue
            # assignment
            d = self.tensors.get(st.target)
            if d is None:
                raise TxError('compile', "unknown tensor '%s'" % st.target, st.line)
            if d.kind == 'in':
                raise TxError('compile', "'%s' is an input and cannot be written" % d.name, st.line)
            if len(st.labels) != len(d.extents):
                raise TxError('compile', "'%s' has %d modes, indexed with %d labels"
                              % (d.name, len(d.extents), len(st.labels)), st.line)
            for l in st.labels:
                if not isinstance(l, str):
                    raise TxError('compile', 'an integer label in the target', st.line)
            if len(set(st.labels)) != len(st.labels):
                self.features.add('repeated target label')
            if st.op in ('*=', '/='):
                self.features.add('*= or /=')
            if (st.op != '=' or len(set(st.labels)) != len(st.labels)) and d.name not in written:
                raise TxError('compile', "'%s' is updated before it is written" % d.name, st.line)
            for l, f in zip(st.labels, d.extents):
                k = form_key(f, self.consts)
                if l in ext and ext[l] != k:
                    raise TxError('compile', "label '%s' is bound to two different extents: "
                                  "%s and %s" % (l, form_text(ext[l]), form_text(k)), st.line)
                ext.setdefault(l, k)
            for l in st.labels:
                if l not in node.occ and not self.is_number(node):
                    raise TxError('compile', "label '%s' of the target does not appear on "
                                  "the right-hand side" % l, st.line)
            self.check_complex(node, st.line)
            if self.is_cx(node) and d.dtype not in COMPLEX:
                raise TxError('compile', "a complex value stored into '%s', a real tensor" % d.name, st.line)
            written.add(d.name)
        for d in self.decls:
            if d.kind == 'out' and d.name not in written:
                raise TxError('compile', "output '%s' is never written" % d.name, d.line)

    def dtype_of(self, name):
        if name in self.lettypes:
            return self.lettypes[name]
        return self.tensors[name].dtype

    @property
    def has_complex(self):
        return self.has_imag or any(d.dtype in COMPLEX for d in self.decls)

    def is_cx(self, node):
        """Is NODE's value complex (LANGUAGE.md 4.2, numpy's promotion)?"""
        if isinstance(node, Leaf):
            return self.dtype_of(node.name) in COMPLEX
        if isinstance(node, Const):
            return isinstance(node.v, complex)
        if isinstance(node, Fn):
            if node.f in ('real', 'imag', 'abs') or node.f in CMP_OPS:
                return False
            if node.f == 'where':
                return self.is_cx(node.args[1]) or self.is_cx(node.args[2])
            return any(self.is_cx(a) for a in node.args)
        return any(self.is_cx(c) for c in children(node))

    def raw_cx(self, e):
        """Is the parsed (unnormalised) expression E complex by its leaves:
        an imaginary literal or a complex tensor, not through real/imag/abs
        or a comparison?"""
        k = e[0]
        if k == 'imag':
            return True
        if k in ('idx', 'name'):
            n = e[1]
            if n in self.lettypes:                     # a let tensor written earlier
                return self.lettypes[n] in COMPLEX
            if n in self.tensors:
                return self.tensors[n].dtype in COMPLEX
            return n in self.lets and self.raw_cx(self.lets[n])
        if k == 'cmp':
            return False
        if k == 'call':
            if e[1] in ('real', 'imag', 'abs'):
                return False
            if e[1] == 'where':
                return any(self.raw_cx(a) for a in e[2][1:])
            return any(self.raw_cx(a) for a in e[2] if isinstance(a, tuple))
        if k in ('bin', 'pow'):
            return any(self.raw_cx(a) for a in e[1:] if isinstance(a, tuple))
        if k in ('neg',):
            return self.raw_cx(e[1])
        if k in ('reduce', 'scan'):
            return self.raw_cx(e[2])
        return False

    def check_complex_raw(self, e, line):
        """check_complex on a parsed expression that could not be
        normalised (an unused let): max, min, comparisons and where's
        condition with a complex operand are errors where they are written."""
        if not isinstance(e, tuple) or not e:
            return
        k = e[0]
        if k == 'call' and e[1] in ('max', 'min') and any(
                self.raw_cx(a) for a in e[2] if isinstance(a, tuple)):
            raise TxError('compile', "a complex operand of '%s'" % e[1], line)
        if k == 'call' and e[1] == 'where' and e[2] and self.raw_cx(e[2][0]):
            raise TxError('compile', "a complex condition of 'where'", line)
        if k == 'cmp' and (self.raw_cx(e[2]) or self.raw_cx(e[3])):
            raise TxError('compile', "a complex operand of '%s'" % e[1], line)
        if k in ('reduce', 'scan') and e[1] in ('max', 'min') and self.raw_cx(e[2]):
            raise TxError('compile', "%s with %s of a complex operand" % (k, e[1]), line)
        for a in e[1:]:
            if isinstance(a, tuple):
                self.check_complex_raw(a, line)
            elif isinstance(a, list):
                for b in a:
                    self.check_complex_raw(b, line)

    def check_complex(self, node, line):
        """Complex numbers have no order: max, min, the comparisons, where's
        condition, and reduce or scan with max or min reject them."""
        for c in children(node):
            self.check_complex(c, line)
        if isinstance(node, Fn) and (node.f in ('max', 'min') or node.f in CMP_OPS) and \
                any(self.is_cx(a) for a in node.args):
            raise TxError('compile', "a complex operand of '%s'" % node.f, line)
        if isinstance(node, Fn) and node.f == 'where' and self.is_cx(node.args[0]):
            raise TxError('compile', "a complex condition of 'where'", line)
        if isinstance(node, (Reduce, Scan)) and node.op in ('max', 'min') and self.is_cx(node.e):
            raise TxError('compile', "%s with %s of a complex operand" % (
                'reduce' if isinstance(node, Reduce) else 'scan', node.op), line)

    @staticmethod
    def is_number(node):
        if isinstance(node, Const):
            return True
        if isinstance(node, Neg):
            return Program.is_number(node.e)
        if isinstance(node, Sum):
            return all(Program.is_number(t) for _, t in node.terms)
        if isinstance(node, Prod):
            return all(Program.is_number(t) for _, t in node.factors)
        if isinstance(node, Fn):
            return all(Program.is_number(t) for t in node.args)
        return False

    def normalise(self, e, line, written, pre=None):
        """Resolve names, substitute bare lets, flatten sums and products.
        Returns (node, {label: extent key}) with label extents unified;
        `pre` gives the extents of the target's labels (for delta)."""
        ext = {}
        deltas = []

        def bind(label, key, what):
            if label in ext and ext[label] != key:
                raise TxError('compile', "label '%s' is bound to two different extents: "
                              "%s and %s (%s)" % (label, form_text(ext[label]),
                                                  form_text(key), what), line)
            ext[label] = key

        def leaf(name, labels):
            if name in self.lettensors:
                lab, keys = self.lettensors[name]
            elif name in self.tensors:
                d = self.tensors[name]
                if d.kind in ('out', 'tmp') and name not in written:
                    raise TxError('compile', "'%s' is read before it is written" % name, line)
                keys = [form_key(f, self.consts) for f in d.extents]
            else:
                raise TxError('compile', "unknown tensor '%s'" % name, line)
            if len(labels) != len(keys):
                raise TxError('compile', "'%s' has %d modes, indexed with %d labels"
                              % (name, len(keys), len(labels)), line)
            for l, k in zip(labels, keys):
                if isinstance(l, str):
                    bind(l, k, 'a mode of %s' % name)
                else:
                    if len(k) == 1 and k[0][0] == '1' and l >= k[0][1]:
                        raise TxError('compile', 'integer label %d out of range of %s'
                                      % (l, form_text(k)), line)
                    if not k:
                        raise TxError('compile', 'integer label of an empty mode', line)
            return Leaf(name, labels)

        def go(e, letstack):
            k = e[0]
            if k == 'num':
                return Const(e[1])
            if k == 'imag':
                return Const(complex(0, e[1]))
            if k == 'name':
                n = e[1]
                if n in self.lets:
                    if n in letstack:
                        raise TxError('compile', "let '%s' refers to itself" % n, line)
                    return go(self.lets[n], letstack + (n,))
                if n in self.tensors or n in self.lettensors:
                    return leaf(n, [])
                if n in self.consts:
                    self.features.add('dim in expression')
                    return Const(float(self.consts[n]))
                if n in self.dim_names():
                    self.features.add('dim in expression')
                    return DimConst(n)
                raise TxError('compile', "unknown name '%s'" % n, line)
            if k == 'idx':
                if e[1] in self.lets:
                    raise TxError('compile', "let '%s' cannot be indexed" % e[1], line)
                return leaf(e[1], e[2])
            if k == 'delta':
                self.features.add('delta')
                labs = e[1]
                if len(labs) < 2 or not all(isinstance(l, str) for l in labs):
                    raise TxError('compile', 'delta needs two or more labels', line)
                d = Delta(labs)
                deltas.append(d)
                return d
            if k == 'neg':
                return Neg(go(e[1], letstack))
            if k == 'bin':
                op = e[1]
                a, b = go(e[2], letstack), go(e[3], letstack)
                if op in '+-':
                    terms = []
                    for sign, x in ((1, a), (1 if op == '+' else -1, b)):
                        if isinstance(x, Sum):
                            terms += [(sign * s, t) for s, t in x.terms]
                        else:
                            terms.append((sign, x))
                    return Sum(terms)
                factors = []
                for inv, x in ((False, a), (op == '/', b)):
                    if isinstance(x, Prod) and not inv:
                        factors += x.factors
                    else:
                        factors.append((inv, x))
                return Prod(factors)
            if k == 'pow':
                p = const_value(e[2])
                if p is None:
                    raise TxError('compile', 'an exponent that is not a number', line)
                base = go(e[1], letstack)
                if self.is_number(base) and not self.is_cx(base) and not (p == int(p) and 0 <= p <= 64):
                    # tx(5): a number may be raised only to an integer power 0..64
                    raise TxError('compile', 'a number raised to the power %g' % p, line)
                return Fn('^', [base], p)
            if k == 'cmp':
                self.features.add('comparison')
                return Fn(e[1], [go(e[2], letstack), go(e[3], letstack)])
            if k == 'call':
                if e[1] == 'where':
                    self.features.add('where')
                return Fn(e[1], [go(a, letstack) for a in e[2]])
            if k == 'reduce':
                return Reduce(e[1], go(e[2], letstack))
            if k == 'scan':
                return Scan(e[1], go(e[2], letstack), e[3], e[4])
            raise AssertionError(e)

        node = go(e, ())
        for d in deltas:
            for l in d.labels:
                if l not in ext and l in (pre or {}):
                    ext[l] = pre[l]
                if l not in ext:
                    raise TxError('compile', "delta label '%s' has no extent: no other "
                                  "operand uses it" % l, line)
        scans = []
        collect(node, Scan, scans)
        for s in scans:
            if s.label not in s.e.occ:
                raise TxError('compile', "scan along '%s', a label its operand does not "
                              "have" % s.label, line)
        return node, ext

    # running
    def run(self, inputs, dims=None, options=None, dtype=np.float64):
        """Evaluate the program.  inputs: {name: array} for every in and inout
        tensor; dims: {name: int} for dims no input shape gives.  Returns
        {name: array} for every out and inout tensor, in its declared type.
        dtype is the type of the arithmetic (np.float32 to estimate rounding)."""
        options = options or Options()
        dims = self.resolve_dims(inputs, dims)
        if self.has_complex:   # complex arithmetic; real nodes keep to their real parts
            dtype = np.complex64 if dtype == np.float32 else np.complex128
        store = {}
        for d in self.decls:
            if d.kind in ('in', 'inout'):
                if d.name not in inputs:
                    raise TxError('runtime', "input '%s' is not given" % d.name)
                a = np.asarray(inputs[d.name])
                if d.dtype not in COMPLEX:
                    a = np.real(a)
                store[d.name] = np.array(a.astype(NP_TYPE[d.dtype]), dtype=dtype)
        for st in self.stmts:
            if st.kind == 'let':
                continue
            ev = Evaluator(self, st, dims, store, options, dtype)
            if st.kind == 'lettensor':
                val = ev.statement(st.labels)
                if st.dtype in ('f32', 'c64'):
                    val = rounded(val, st.dtype).astype(dtype)
                store[st.name] = val
                continue
            d = self.tensors[st.target]
            shape = self.shape(d, dims)
            distinct = list(dict.fromkeys(st.labels))
            val = ev.statement(distinct)
            # computed in f64 (or wider), converted on store: a plain = += -=
            # stores (or adds) the right side converted; *= /= and a write to
            # a diagonal combine with the old value first and convert once
            if d.dtype in ('f32', 'c64') and (st.op in ('=', '+=', '-=') and len(distinct) == len(st.labels)):
                val = rounded(val, d.dtype).astype(dtype)
            if len(distinct) == len(st.labels) and st.op == '=':
                new = val.reshape(shape) if val.shape != shape else val
                store[d.name] = np.array(new, dtype=dtype)
                continue
            old = np.array(store[d.name], dtype=dtype)
            ext = [dims_of(ev.ext_value(l)) for l in distinct]
            grids = np.indices(ext, sparse=True) if distinct else ()
            idx = tuple(grids[distinct.index(l)] for l in st.labels)
            cur = old[idx] if idx else old[()]
            newv = {'=': val, '+=': cur + val, '-=': cur - val,
                    '*=': cur * val, '/=': cur / val}[st.op]
            if d.dtype in ('f32', 'c64'):
                newv = rounded(np.asarray(newv), d.dtype).astype(dtype)
            if idx:
                old[idx] = newv
            else:
                old[()] = newv
            store[d.name] = old
        out = {}
        for d in self.decls:
            if d.kind in ('out', 'inout'):
                a = np.asarray(store[d.name])
                out[d.name] = (a if d.dtype in COMPLEX else np.real(a)).astype(NP_TYPE[d.dtype])
        return out


NP_TYPE = {'f32': np.float32, 'f64': np.float64, 'c64': np.complex64, 'c128': np.complex128}


def rounded(a, t):
    """A rounded to element type T (f32 or c64), as stored."""
    return (a if t == 'c64' else np.real(a)).astype(NP_TYPE[t])


def dims_of(v):
    return int(v)


def real_args(g):
    """G applied to the real parts of its arguments."""
    return lambda *xs: g(*[np.real(x) for x in xs])


class DimConst(Node):
    """A symbolic dim used as a number: its extent, at run time."""
    def __init__(self, name):
        self.name = name


def collect(node, cls, out):
    if isinstance(node, cls):
        out.append(node)
    for c in children(node):
        collect(c, cls, out)


def children(node):
    if isinstance(node, (Neg, Reduce, Scan)):
        return [node.e]
    if isinstance(node, Sum):
        return [t for _, t in node.terms]
    if isinstance(node, Prod):
        return [f for _, f in node.factors]
    if isinstance(node, Fn):
        return node.args
    return []


def plain_number(node):
    """A number written with numbers and + - * / only (for the quirk
    early-product: txc takes abs(2) + 2 for an operand, 2 + 2 for a number)."""
    if isinstance(node, Const):
        return True
    if isinstance(node, (Neg, Sum, Prod)):
        return all(plain_number(c) for c in children(node))
    return False


def has_product_with(node, label):
    """Whether a product of two or more non-number factors inside `node`
    carries `label` (for the quirk max-closes)."""
    if isinstance(node, Prod) and label in node.occ and \
            sum(not Program.is_number(f) for _, f in node.factors) >= 2:
        return True
    return any(has_product_with(c, label) for c in children(node))


def leaf_counts(node, acc):
    """How many times each label is written in the subtree (multiset)."""
    if isinstance(node, (Leaf, Delta)):
        for l in node.labels:
            if isinstance(l, str):
                acc[l] = acc.get(l, 0) + 1
    if isinstance(node, Scan):
        acc[node.label] = acc.get(node.label, 0) + 1
    for c in children(node):
        leaf_counts(c, acc)
    return acc


# --------------------------------------------------------------- evaluator --

class V:
    """A value: an array whose axes are the labels, in order, all distinct."""
    __slots__ = ('a', 'labels')

    def __init__(self, a, labels):
        self.a, self.labels = a, list(labels)
        assert self.a.ndim == len(self.labels), (self.a.shape, self.labels)


class Evaluator:
    def __init__(self, prog, st, dims, store, options, dtype):
        self.prog, self.st, self.dims, self.store = prog, st, dims, store
        self.opt, self.dtype = options, dtype
        self.cxprog = prog.has_complex
        self.letters = {}
        if options.reduce_scope == 'statement':
            self.total = leaf_counts(st.node, {})
            for l in getattr(st, 'labels', []) or []:
                if isinstance(l, str):
                    self.total[l] = self.total.get(l, 0) + 1

    def ext_value(self, label):
        return form_value(dict((1 if k == '1' else k, v) for k, v in self.st.ext[label]),
                          self.dims)

    def letter(self, label):
        if label not in self.letters:
            pool = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
            if len(self.letters) >= len(pool):
                raise TxError('unsupported', 'more than 52 labels in one statement')
            self.letters[label] = pool[len(self.letters)]
        return self.letters[label]

    # helpers
    def const(self, v):
        return V(np.array(v, dtype=self.dtype), [])

    def align(self, v, labels):
        """v's array viewed over `labels` (a superset of v.labels), broadcast."""
        if v.labels == labels:
            return v.a
        perm = [v.labels.index(l) for l in labels if l in v.labels]
        a = np.transpose(v.a, perm) if perm else v.a
        shape = [self.ext_value(l) if l in v.labels else 1 for l in labels]
        a = a.reshape(shape)
        return np.broadcast_to(a, [self.ext_value(l) for l in labels])

    def sum_over(self, v, labels):
        labels = [l for l in v.labels if l in labels]
        if not labels:
            return v
        ax = tuple(v.labels.index(l) for l in labels)
        return V(np.sum(v.a, axis=ax), [l for l in v.labels if l not in labels])

    def elementwise(self, vals, f):
        labels = []
        for v in vals:
            for l in v.labels:
                if l not in labels:
                    labels.append(l)
        arrs = [self.align(v, labels) for v in vals]
        with np.errstate(all='ignore'):
            r = f(*arrs)
        return V(np.asarray(r, dtype=self.dtype), labels)

    # the statement
    def statement(self, target):
        """The right-hand side as a value over the target labels, in order."""
        tset = set(target)
        v = self.ev(self.st.node, tset, keep=False, intr=False, direct=None)
        v = self.sum_over(v, set(v.labels) - tset)
        # a target label the value lacks (a number on the right) broadcasts
        return np.array(self.align(v, list(target)), dtype=self.dtype)

    def ev(self, node, need, keep, intr, direct):
        """_ev, and in a complex program a real node's real part (what a
        real computation would hold: no imaginary rounding noise, and
        1/0 is inf rather than inf+nanj)."""
        v = self._ev(node, need, keep, intr, direct)
        if self.cxprog and not self.prog.is_cx(node):
            return V(np.asarray(np.real(v.a), dtype=self.dtype), v.labels)
        return v

    # THE SUMMATION RULE
    def _ev(self, node, need, keep, intr, direct):
        """Evaluate `node`, whose labels in `need` are used outside it.
        keep:   inside a reduce's operand: no product or sum sums anything.
        intr:   inside a transparent operation (for keepall_scope=anywhere).
        direct: what the node is the operand of, when that is a transparent
                operation ('fn', '^', 'den', 'scan') or a reduce ('reduce');
                None otherwise.  Unary minus passes it through."""
        q = self.opt.quirks
        if isinstance(node, Const):
            return self.const(node.v)
        if isinstance(node, DimConst):
            return self.const(float(self.dims[node.name]))
        if isinstance(node, Leaf):
            return self.leaf(node)
        if isinstance(node, Delta):
            return self.delta(node)
        if isinstance(node, Neg):
            v = self.ev(node.e, need, keep, intr, direct)    # linear, passes through
            return V(-v.a, v.labels)

        if isinstance(node, Fn):
            # transparent: each operand sees the others' labels as used
            # outside; nothing is summed here, every open label flows out
            kind = '^' if node.f == '^' else 'fn'
            if 'fn-args-blind' in q and len(node.args) > 1:
                vals = [self.ev(a, need, keep, True, kind) for a in node.args]
            else:
                vals = self.operands(node.args, need,
                                     lambda k, a, n: self.ev(a, n, keep, True, kind))
            g = self.fn(node)
            if self.cxprog and not any(self.prog.is_cx(a) for a in node.args):
                g = real_args(g)   # sqrt(-1), log(-1), (-8)^(1/3) of reals: NaN, as in C
            v = self.elementwise(vals, g)
            if 'max-closes' in q and node.f in ('max', 'min') and not keep:
                v = self.sum_over(v, {l for l in v.labels if l not in need and any(
                    has_product_with(a, l) for a in node.args)})
            return v

        if isinstance(node, Prod):
            def factor(k, f, fneed):
                if node.factors[k][0]:   # the denominator: transparent, then inverted
                    v = self.ev(f, fneed, keep, True, 'den')
                    with np.errstate(all='ignore'):
                        return V(np.asarray(1.0 / v.a, dtype=self.dtype), v.labels)
                return self.ev(f, fneed, keep, intr, None)
            vals = self.operands([f for _, f in node.factors], need, factor)
            count = {}
            for v in vals:
                for l in v.labels:
                    count[l] = count.get(l, 0) + 1
            # the lowest product holding all of a label's occurrences: the
            # label is open in two or more factors and needed nowhere outside
            summed = set() if keep else {l for l, c in count.items()
                                         if c >= 2 and l not in need}
            if 'early-product' in q and not keep and \
                    sum(not plain_number(f) for _, f in node.factors) >= 2:
                summed = set(count) - need
            return self.contract(vals, summed)

        if isinstance(node, Sum):
            if self.opt.keepall_scope == 'anywhere':
                keepall = keep or intr
            else:
                keepall = keep or direct is not None
            if not keep and keepall and direct == 'den' and 'sum-in-denominator' in q:
                keepall = False
            if not keep and keepall and 'sum-in-fn' in q:
                # terms see only `need`; a label that some term sums inside
                # itself is summed by every term, the others flow out
                vals = [self.ev(t, need, keep, intr, None) for _, t in node.terms]
                closed, opened = set(), set()
                for (_, t), v in zip(node.terms, vals):
                    closed |= set(t.occ) - set(v.labels)
                    opened |= set(v.labels)
                target = need | (opened - closed)
                vals = [self.sum_over(v, set(v.labels) - target) for v in vals]
                vals = [v if s > 0 else V(-v.a, v.labels) for (s, _), v in zip(node.terms, vals)]
                return self.elementwise(vals, lambda *a: sum(a[1:], a[0]))
            terms = [t for _, t in node.terms]
            if keepall and self.opt.keepall_terms == 'all':
                vals = [self.ev(t, need | node.occ, keep, intr, None) for t in terms]
            elif keepall:
                # the sum keeps its labels; a term's product still sums a
                # label all of whose occurrences it holds
                vals = self.operands(terms, need,
                                     lambda k, t, n: self.ev(t, n, keep, intr, None))
            else:
                # the target is `need`; each term sums its own other labels
                vals = [self.ev(t, need, keep, intr, None) for t in terms]
                vals = [self.sum_over(v, set(v.labels) - need) for v in vals]
            vals = [v if s > 0 else V(-v.a, v.labels) for (s, _), v in zip(node.terms, vals)]
            return self.elementwise(vals, lambda *a: sum(a[1:], a[0]))

        if isinstance(node, Reduce):
            v = self.ev(node.e, need, True, True, 'reduce')
            if self.opt.reduce_scope == 'statement':
                inside = leaf_counts(node.e, {})
                outside = {l for l, c in self.total.items() if c > inside.get(l, 0)}
                used = need | outside
            else:
                used = need
            red = [l for l in v.labels if l not in used]
            if not red:
                return v
            ax = tuple(v.labels.index(l) for l in red)
            f = {'+': np.sum, '*': np.prod, 'max': np.max, 'min': np.min}[node.op]
            return V(np.asarray(f(v.a, axis=ax), dtype=self.dtype),
                     [l for l in v.labels if l not in red])

        if isinstance(node, Scan):
            v = self.ev(node.e, need | {node.label}, keep, True, 'scan')
            if node.label not in v.labels:
                raise TxError('compile', "scan along '%s', which its operand sums"
                              % node.label, self.st.line)
            ax = v.labels.index(node.label)
            a = np.flip(v.a, ax) if node.rev else v.a
            f = {'+': np.cumsum, '*': np.cumprod,
                 'max': np.maximum.accumulate, 'min': np.minimum.accumulate}[node.op]
            a = f(a, axis=ax)
            if node.rev:
                a = np.flip(a, ax)
            return V(np.asarray(a, dtype=self.dtype), v.labels)
        raise AssertionError(node)

    def operands(self, nodes, need, evaluate):
        """Evaluate sibling operands (of a product, a transparent operation,
        a sum that keeps its labels): each sees the labels written in the
        others as used outside it.  evaluate(k, node, need) -> V."""
        others = lambda k: frozenset().union(*[m.occ for j, m in enumerate(nodes) if j != k])
        if 'reduce-hidden' not in self.opt.quirks:
            return [evaluate(k, m, need | others(k)) for k, m in enumerate(nodes)]
        # quirk: a reduce's labels are invisible to its siblings, and a reduce
        # sees only what its siblings leave open
        isred = [isinstance(m.e if isinstance(m, Neg) else m, Reduce) for m in nodes]
        vals = [None] * len(nodes)
        for k, m in enumerate(nodes):
            if not isred[k]:
                vals[k] = evaluate(k, m, need | frozenset().union(
                    *[n.occ for j, n in enumerate(nodes) if j != k and not isred[j]]))
        for k, m in enumerate(nodes):
            if isred[k]:
                seen = set()
                for j, n in enumerate(nodes):
                    if j != k:
                        seen |= set(n.occ) if isred[j] else set(vals[j].labels)
                vals[k] = evaluate(k, m, need | seen)
        return vals

    def contract(self, vals, summed):
        out = []
        for v in vals:
            for l in v.labels:
                if l not in summed and l not in out:
                    out.append(l)
        spec = ','.join(''.join(self.letter(l) for l in v.labels) for v in vals)
        spec += '->' + ''.join(self.letter(l) for l in out)
        ops = [v.a for v in vals]
        if len(ops) == 1:
            r = np.einsum(spec, ops[0])
        else:
            r = np.einsum(spec, *ops, optimize='greedy')
        return V(np.asarray(r, dtype=self.dtype), out)

    def fn(self, node):
        f, p = node.f, node.p
        if f == '^':
            if p == int(p) and abs(p) <= 64:
                ip = int(p)
                return lambda a: np.power(a, ip) if ip >= 0 else 1.0 / np.power(a, -ip)
            return lambda a: np.power(a, p)
        table = {
            'exp': np.exp, 'log': np.log, 'sqrt': np.sqrt, 'abs': np.abs,
            'sin': np.sin, 'cos': np.cos, 'tanh': np.tanh,
            'max': np.maximum, 'min': np.minimum,
            'conj': np.conj, 'real': np.real, 'imag': np.imag,
            'where': lambda c, a, b: np.where(c != 0, a, b),
            '<': np.less, '<=': np.less_equal, '>': np.greater,
            '>=': np.greater_equal, '==': np.equal, '!=': np.not_equal,
        }
        g = table[f]
        if f in CMP_OPS:
            return lambda a, b: g(a, b).astype(self.dtype)
        return g

    def leaf(self, node):
        name, labels = node.name, node.labels
        if name not in self.store:
            raise TxError('runtime', "'%s' has no value" % name)
        a = self.store[name]
        idx = []
        for k, l in enumerate(labels):
            if isinstance(l, int):
                if l >= a.shape[k]:
                    raise TxError('runtime', 'integer label %d out of range of %s (extent %d)'
                                  % (l, name, a.shape[k]), self.st.line)
                idx.append(l)
            else:
                idx.append(slice(None))
        if idx:
            a = a[tuple(idx)]
        names = [l for l in labels if isinstance(l, str)]
        distinct = list(dict.fromkeys(names))
        if len(distinct) != len(names):                  # diagonals
            spec = ''.join(self.letter(l) for l in names) + '->' + \
                ''.join(self.letter(l) for l in distinct)
            a = np.einsum(spec, a)
        return V(np.array(a, dtype=self.dtype), distinct)

    def delta(self, node):
        distinct = list(dict.fromkeys(node.labels))
        ext = [self.ext_value(l) for l in distinct]
        if len(distinct) == 1:
            return V(np.ones(ext, dtype=self.dtype), distinct)
        g = np.indices(ext)
        m = np.all(g == g[0], axis=0)
        return V(m.astype(self.dtype), distinct)


def parse(src, filename='<tx>'):
    return Program(src, filename)


# --------------------------------------------------------------- command --

def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description='evaluate a .tx program with numpy')
    ap.add_argument('file')
    ap.add_argument('bind', nargs='*', help='NAME=FILE.npy')
    ap.add_argument('-D', action='append', default=[], help='dim=N')
    ap.add_argument('--random', action='store_true')
    ap.add_argument('--seed', type=int, default=0)
    for k, v in Options.CHOICES.items():
        ap.add_argument('--' + k.replace('_', '-'), choices=v, default=v[0])
    a = ap.parse_args(argv)
    with open(a.file, encoding='utf-8') as f:
        src = f.read()
    try:
        prog = parse(src, a.file)
    except TxError as e:
        print('%s: %s' % (a.file, e), file=sys.stderr)
        return 1
    files = dict(b.split('=', 1) for b in a.bind)
    dims = {k: int(v) for k, v in (d.split('=', 1) for d in a.D)}
    inputs = {}
    rng = np.random.default_rng(a.seed)
    try:
        for d in prog.decls:
            if d.kind in ('in', 'inout') and d.name in files:
                inputs[d.name] = np.load(files[d.name])
        if a.random:
            known = dict(prog.consts)
            known.update(dims)
            for d in prog.decls:
                if d.kind in ('in', 'inout') and d.name not in inputs:
                    inputs[d.name] = rng.uniform(-1, 1, prog.shape(d, known))
        opts = Options(**{k: getattr(a, k) for k in Options.CHOICES})
        outs = prog.run(inputs, dims, opts)
    except TxError as e:
        print('%s: %s' % (a.file, e), file=sys.stderr)
        return 3
    for name, v in outs.items():
        if name in files:
            np.save(files[name], v)
        else:
            print('%s = %s' % (name, np.array2string(v, precision=10)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
