#!/usr/bin/python3
"""Self-test of the reference evaluator txref.py against LANGUAGE.md.

    /usr/bin/python3 tests/ref/test_txref.py [-v]

Every row of the table of 4.1 must equal the numpy expression the table gives,
on random data; then the bullets of 4.1 (sums, products, transparent
operations, reduce, diagonals, scaling and fills, lets), the operands listed
under "More operands", statement forms, precedence, the worked example of
tx(5) with its printed values, and the compile-time errors of 4.1.  Needs no
compiler.  Prints one line per failure and "N passed, N failed".
"""

import os
import sys
import traceback

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np       # noqa: E402
import txref             # noqa: E402

RNG = np.random.default_rng(20261121)
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def R(*shape):
    return RNG.uniform(-1, 1, size=shape)


def P(*shape):
    return RNG.uniform(0.5, 2, size=shape)


def run(src, options=None, dims=None, **inputs):
    return txref.parse(src).run(inputs, dims, options)


def close(got, want, tol=1e-12):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, 'shape %s, expected %s' % (got.shape, want.shape)
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 0.0)
    assert err <= tol * scale, 'max error %.3g\n got  %s\n want %s' % (err, got, want)


def rejects(src, kind='compile', what=''):
    try:
        txref.parse(src)
    except txref.TxError as e:
        assert e.kind == kind, 'rejected as %s (%s), expected %s' % (e.kind, e, kind)
        assert what in e.msg, 'message %r lacks %r' % (e.msg, what)
        return
    raise AssertionError('accepted, expected a %s error (%s)' % (kind, what))


n, m, k, t = 4, 5, 3, 6
A, B, D = R(n, k), R(k, m), R(n, m)
A2, b, x = R(n, m), R(n), R(m)
y, u, v = R(t), R(n), R(m)
alpha, beta = np.array(0.7), np.array(-1.3)


# ------------------------------------------------------ the table of 4.1 --

@test
def table_row_01_matmul_plus():
    o = run('in A[n,k], B[k,m], D[n,m]; out C[n,m];'
            'C("i,j") = A("i,k") * B("k,j") + D("i,j");', A=A, B=B, D=D)
    close(o['C'], A @ B + D)


@test
def table_row_02_term_sums_its_own():
    o = run('in A[n,m], b[n]; out c[n]; c("i") = A("i,j") + b("i");', A=A2, b=b)
    close(o['c'], A2.sum(1) + b)


@test
def table_row_03_sum_in_product():
    o = run('in A[n,m], b[n], x[m]; out c[n]; c("i") = (A("i,j") + b("i")) * x("j");',
            A=A2, b=b, x=x)
    close(o['c'], (A2 + b[:, None]) @ x)


@test
def table_row_04_exp_of_scaled():
    o = run('in A[n,m], alpha; out c[n]; c("i") = exp(alpha * A("i,j"));', A=A2, alpha=alpha)
    close(o['c'], np.exp(alpha * A2).sum(1))


@test
def table_row_05_tanh_of_sum():
    o = run('in y[t], beta; out s; s = tanh(y("t") + beta * y("t"));', y=y, beta=beta)
    close(o['s'], np.tanh(y + beta * y).sum())


@test
def table_row_06_divide():
    o = run('in x[n], A[n,m]; out c[n]; c("i") = x("i") / (A("i,j")^2 + 1);', x=u, A=A2)
    close(o['c'], (u[:, None] / (A2**2 + 1)).sum(1))


@test
def table_row_07_square_of_outer():
    o = run('in u[n], v[m]; out s; s = (u("i") * v("j"))^2;', u=u, v=v)
    close(o['s'], (np.outer(u, v)**2).sum())


@test
def table_row_08_exp_plus_one():
    o = run('in x[n]; out s; s = exp(x("i")) + 1;', x=u)
    close(o['s'], np.exp(u).sum() + 1)


@test
def table_row_09_terms_sum_separately():
    o = run('in x[n], y[n]; out s; s = x("i") + 1 + y("i");', x=u, y=b)
    close(o['s'], u.sum() + 1 + b.sum())


@test
def table_row_10_exp_of_reduce():
    o = run('in A[n,m]; out c[n]; c("i") = exp(reduce(+, A("i,j")));', A=A2)
    close(o['c'], np.exp(A2.sum(1)))


@test
def table_row_11_dot():
    o = run('in x[n], y[n]; out s; s = x("i") * y("i");', x=u, y=b)
    close(o['s'], u @ b)


# ----------------------------------------------------- the bullets of 4.1 --

@test
def sums_broadcast_a_missing_target_label():
    o = run('in A[n,m], b[m]; out C[n,m]; C("i,j") = A("i,j") + b("j");', A=A2, b=x)
    close(o['C'], A2 + x[None, :])


@test
def sums_are_associative():
    o = run('in x[n], y[n]; out s1, s2, s3;'
            's1 = (x("i") + 1) + y("i"); s2 = x("i") + (1 + y("i")); s3 = x("i") - (y("i") - 1);',
            x=u, y=b)
    close(o['s1'], u.sum() + 1 + b.sum())
    close(o['s2'], o['s1'])
    close(o['s3'], u.sum() - b.sum() + 1)


@test
def sums_target_is_the_factors_labels():
    # a sum multiplied with factors: its target is the statement's plus the
    # factors' labels; a label of a term used by nothing outside is summed
    # in the term: (sum_j A + b) * y, no j outside
    o = run('in A[n,m], b[n], y[n]; out s; s = (A("i,j") + b("i")) * y("i");',
            A=A2, b=b, y=u)
    close(o['s'], (A2.sum(1) + b) @ u)


@test
def products_one_contraction():
    d = R(k)
    o = run('in A[n,k], B[k,m], d[k]; out C[n,m], E[n,m];'
            'C("i,j") = A("i,k") * B("k,j") * d("k");'
            'E("i,j") = A("i,k") * (B("k,j") * d("k"));', A=A, B=B, d=d)
    close(o['C'], np.einsum('ik,kj,k->ij', A, B, d))
    close(o['E'], o['C'])


@test
def products_lowest_product_holding_all_occurrences():
    # (A*B)^2 sums k inside the base: the product holds every k
    o = run('in A[n,k], B[k,m], x[m]; out Z[n,m], z[n];'
            'Z("i,j") = (A("i,k") * B("k,j"))^2;'
            'z("i") = exp(A("i,k") * B("k,j") * x("j"));', A=A, B=B, x=x)
    close(o['Z'], (A @ B)**2)
    close(o['z'], np.exp(A @ B @ x))


@test
def products_a_label_used_outside_waits():
    # i and k are also in the second argument of max: the product A*B does
    # not hold all their occurrences and sums nothing; max is entrywise
    Bk = R(n, k)
    o = run('in A[n,k], B[n,k]; out s; s = max(A("i,k") * B("i,k"), B("i,k"))^2;',
            A=A, B=Bk)
    close(o['s'], (np.maximum(A * Bk, Bk)**2).sum())


@test
def transparent_divide_equals_inverse_power():
    pairs = [('c("i") = x("i") / (A("i,j")^2 + 1);', 'c("i") = x("i") * (A("i,j")^2 + 1)^-1;'),
             ('c("i") = x("i") / (y("j") * y("j"));', 'c("i") = x("i") * (y("j") * y("j"))^-1;'),
             ('c("i") = A("i,j") / y("j");', 'c("i") = A("i,j") * y("j")^-1;'),
             ('c("i") = x("i") / exp(A("i,j"));', 'c("i") = x("i") * exp(A("i,j"))^-1;')]
    yv = P(m)
    for s1, s2 in pairs:
        o1 = run('in x[n], A[n,m], y[m]; out c[n];' + s1, x=u, A=A2, y=yv)
        o2 = run('in x[n], A[n,m], y[m]; out c[n];' + s2, x=u, A=A2, y=yv)
        close(o1['c'], o2['c'])
    o = run('in x[n], y[m]; out c[n]; c("i") = x("i") / (y("j") * y("j"));', x=u, y=yv)
    close(o['c'], u / (yv @ yv))


@test
def transparent_number_scaling_sums_like_tensor_scaling():
    o = run('in A[n,m], alpha; out c[n], d[n];'
            'c("i") = exp(alpha * A("i,j")); d("i") = exp(2 * A("i,j"));',
            A=A2, alpha=np.array(2.0))
    close(o['c'], o['d'])
    close(o['d'], np.exp(2 * A2).sum(1))


@test
def transparent_sum_inside_keeps_its_labels():
    o = run('in A[n,m], b[n]; out c[n], s;'
            'c("i") = exp(A("i,j") + b("i")); s = abs(x("j") - 1);'
            .replace('s = abs(x("j") - 1);', 's = abs(b("i") - 0.5);'), A=A2, b=b)
    close(o['c'], np.exp(A2 + b[:, None]).sum(1))
    close(o['s'], np.abs(b - 0.5).sum())


@test
def transparent_power_base_and_functions():
    o = run('in A[n,m]; out r[n], s, q[n];'
            'r("i") = A("i,j")^2; s = abs(A("i,j")); q("i") = sqrt(abs(A("i,j")) + 1);', A=A2)
    close(o['r'], (A2**2).sum(1))
    close(o['s'], np.abs(A2).sum())
    close(o['q'], np.sqrt(np.abs(A2) + 1).sum(1))


@test
def transparent_to_sum_inside_say_so():
    o = run('in A[n,m]; out c[n], d[n];'
            'let T("i") = A("i,j");'
            'c("i") = exp(reduce(+, A("i,j"))); d("i") = exp(T("i"));', A=A2)
    close(o['c'], np.exp(A2.sum(1)))
    close(o['d'], np.exp(A2.sum(1)))


@test
def reduce_wherever_it_stands():
    e = P(n, m)
    o = run('in e[n,m], A[n,m], x[m]; out N[n,m], mx[n], c[n], g;'
            'N("i,j") = e("i,j") / reduce(+, e("i,k"));'
            'mx("i") = reduce(max, A("i,j") * x("j"));'
            'c("i") = reduce(+, A("i,j")) * x("j");'      # j used outside: nothing reduced
            'g = reduce(max, x("j")) * reduce(min, x("j"));', e=e, A=A2, x=x)
    close(o['N'], e / e.sum(1, keepdims=True))
    close(o['mx'], (A2 * x).max(1))
    close(o['c'], A2 @ x)
    close(o['g'], x @ x)


@test
def reduce_ops():
    Pm = P(n, m)
    o = run('in A[n,m], P[n,m]; out a[n], b[n], c[n], d[n];'
            'a("i") = reduce(+, A("i,j")); b("i") = reduce(*, P("i,j"));'
            'c("i") = reduce(max, A("i,j")); d("i") = reduce(min, A("i,j"));', A=A2, P=Pm)
    close(o['a'], A2.sum(1))
    close(o['b'], Pm.prod(1))
    close(o['c'], A2.max(1))
    close(o['d'], A2.min(1))


@test
def diagonal_and_trace():
    S = R(n, n)
    T3 = R(n, n, m)
    o = run('in S[n,n], T[n,n,m]; out d[n], t, e[m];'
            'd("i") = S("i,i"); t = S("i,i"); e("j") = T("i,i,j");', S=S, T=T3)
    close(o['d'], np.diag(S))
    close(o['t'], np.trace(S))
    close(o['e'], np.einsum('iij->j', T3))


@test
def scaling_and_fills():
    o = run('in A[n,m]; out C[n,m], D[n,m], Z[n,m], s;'
            'C("i,j") = 2 * A("i,j"); D("i,j") = A("i,j") / 2; Z("i,j") = 0; s = 3;',
            A=A2)
    close(o['C'], 2 * A2)
    close(o['D'], A2 / 2)
    close(o['Z'], np.zeros((n, m)))
    close(o['s'], 3)


@test
def bare_let_is_substituted():
    o = run('in A[n,m], b[n], y[m], x[m]; out c[n], e[n], f[n];'
            'let s = A("i,j") + b("i");'
            'let ex = exp(A("i,j"));'
            'c("i") = s * y("j");'          # (A + b) y: the sum sees y's j
            'e("i") = ex;'
            'f("i") = ex * x("j");', A=A2, b=b, y=x, x=v)
    close(o['c'], (A2 + b[:, None]) @ x)
    close(o['e'], np.exp(A2).sum(1))
    close(o['f'], np.exp(A2) @ v)


@test
def let_tensor_is_its_own_statement():
    o = run('in A[n,m]; out s, Tt[m,n];'
            'let T("i,j") = A("i,j") * 2;'
            'let r("i") = A("i,j");'
            's = exp(r("i"));'
            'Tt("a,b") = T("b,a");', A=A2)
    close(o['s'], np.exp(A2.sum(1)).sum())
    close(o['Tt'], 2 * A2.T)


@test
def statement_forms():
    S0 = R(n, m)
    o = run('in A[n,m], E[n,m]; inout S[n,m]; out C[n,m], y[n];'
            'C("i,j") = A("i,j"); C("i,j") += A("i,j"); C("i,j") -= 0.5 * E("i,j");'
            'S("i,j") = S("i,j") * 2;'
            'y("i") = C("i,j"); y("i") -= E("i,j");', A=A2, E=D, S=S0)
    close(o['C'], 2 * A2 - 0.5 * D)
    close(o['S'], 2 * S0)
    close(o['y'], (2 * A2 - 0.5 * D).sum(1) - D.sum(1))


@test
def statement_reads_its_own_target():
    S0 = R(n, n)
    o = run('inout S[n,n]; S("i,j") = S("j,i");', S=S0)
    close(o['S'], S0.T)


@test
def chips_transpose_batched_outer():
    T3 = R(n, m, k)
    Pb = R(k, n, n)
    o = run('in T[n,m,p], u[p], P[z,n,n], x[n], y[m]; out M[n,p], w[m], W[p,n], z[n],'
            ' Rb[z,n,n], O[n,m], At[m,n];'
            'M("i,k") = T("i,2,k"); w("j") = T("1,j,0"); W("k,i") = T("i,1,k");'
            'z("i") = T("i,0,k") * u("k"); Rb("z,i,j") = P("z,i,k") * P("z,k,j");'
            'O("i,j") = x("i") * y("j"); At("j,i") = O("i,j");',
            T=T3, u=R(k)[:k], P=Pb, x=u, y=x)
    close(o['M'], T3[:, 2, :])
    close(o['w'], T3[1, :, 0])
    close(o['W'], T3[:, 1, :].T)
    close(o['Rb'], Pb @ Pb)
    close(o['O'], np.outer(u, x))
    close(o['At'], np.outer(u, x).T)


@test
def scan_and_scanr():
    Am = R(3, 8)
    o = run('in x[n], A[p,q]; out c[n], C[p,q], Rr[p,q], M[p,q];'
            'c("i") = scan(+, x("i"), "i"); C("i,j") = scan(+, A("i,j"), "j");'
            'Rr("i,j") = scanr(+, A("i,j"), "j"); M("i,j") = scan(max, A("i,j"), "j");',
            x=u, A=Am)
    close(o['c'], np.cumsum(u))
    close(o['C'], np.cumsum(Am, 1))
    close(o['Rr'], np.flip(np.cumsum(np.flip(Am, 1), 1), 1))
    close(o['M'], np.maximum.accumulate(Am, 1))


@test
def precedence_values():
    xv = P(n)
    o = run('in x[n]; out a[n], b, c[n], d[n];'
            'a("i") = -x("i")^2; b = 2^3^2; c("i") = x("i") - x("i") * 2 + 1;'
            'd("i") = 2 * x("i")^-1;', x=xv)
    close(o['a'], -xv**2)
    close(o['b'], 512)
    close(o['c'], xv - 2 * xv + 1)
    close(o['d'], 2 / xv)


@test
def functions():
    X = R(n, m)
    Y = R(n, m)
    o = run('in X[n,m], Y[n,m]; out a[n,m], b[n,m], c[n,m], l1, e[n];'
            'a("i,j") = max(min(X("i,j"), 0.5), -0.5); b("i,j") = sin(X("i,j")) * cos(Y("i,j"));'
            'c("i,j") = log(abs(X("i,j")) + 1) + tanh(Y("i,j"));'
            'l1 = abs(X("i,j") - Y("i,j")); e("i") = exp(X("i,k") * x("k"));'
            .replace('e("i") = exp(X("i,k") * x("k"));', 'e("i") = exp(X("i,k") * Y("i,k"));'),
            X=X, Y=Y)
    close(o['a'], np.clip(X, -0.5, 0.5))
    close(o['b'], np.sin(X) * np.cos(Y))
    close(o['c'], np.log(np.abs(X) + 1) + np.tanh(Y))
    close(o['l1'], np.abs(X - Y).sum())
    close(o['e'], np.exp((X * Y).sum(1)))


@test
def f32_store_rounds():
    X = R(n, m).astype(np.float32)
    o = run('in f32 X[n,m]; out f32 s[n]; out r[n]; s("i") = X("i,j") / 3; r("i") = X("i,j") / 3;',
            X=X)
    assert o['s'].dtype == np.float32 and o['r'].dtype == np.float64
    close(o['r'], X.astype(np.float64).sum(1) / 3)
    close(o['s'], (X.astype(np.float64).sum(1) / 3).astype(np.float32))


# ------------------------------------------------------ "More operands" --

@test
def dim_name_is_its_extent():
    X = R(n, m)
    o = run('in X[n,m]; out mu[m]; mu("j") = X("i,j") / n;', X=X)
    close(o['mu'], X.mean(0))


@test
def delta():
    h, e = R(n, n), R(n)
    o = run('in h[n,n], e[n]; out F[n,n]; F("p,q") = h("p,q") + 2 * delta("p,q") * e("p");',
            h=h, e=e)
    close(o['F'], h + 2 * np.diag(e))


@test
def comparisons_and_where():
    X = R(n, m)
    o = run('in X[n,m], x[n]; out cnt[m], relu[n], c2[n,m];'
            'cnt("j") = X("i,j") > 0; relu("i") = where(x("i") > 0, x("i"), 0);'
            'c2("i,j") = X("i,j") + 1 <= 1;', X=X, x=u)
    close(o['cnt'], (X > 0).sum(0))
    close(o['relu'], np.maximum(u, 0))
    close(o['c2'], (X <= 0).astype(float))


@test
def repeated_target_label_is_the_diagonal():
    S0, s = R(n, n), R(n)
    o = run('inout A[n,n], B[n,n]; in s[n]; A("i,i") += s("i"); B("i,i") = s("i");',
            A=S0, B=S0.copy(), s=s)
    close(o['A'], S0 + np.diag(s))
    want = S0.copy()
    np.fill_diagonal(want, s)
    close(o['B'], want)


@test
def times_and_divide_assign():
    S0 = P(n)
    o = run('inout S[n]; in x[n]; S("i") *= x("i") + 1; S("i") /= 2;', S=S0, x=u)
    close(o['S'], S0 * (u + 1) / 2)


# ------------------------------------------- tx(5)'s worked example, exactly --

@test
def worked_example_of_tx5():
    src = '''in  A[n,n], B[n,n], x[n], b[n], P[z,n,n];
out C[n,n], t, d[n], R[z,n,n], E[n,n], y[n], s[n], q[n], Z[n,n];
C("i,j")   = A("i,k") * B("k,j");
t          = A("i,i");
d("i")     = A("i,i");
R("z,i,j") = P("z,i,k") * P("z,k,j");
E("i,j")   = A("i,j") + b("j");
y("i")     = (A("i,j") + b("i")) * x("j");
s("i")     = A("i,j")^2;
q("i")     = x("i") / B("i,k");
Z("i,j")   = (A("i,k") * B("k,j"))^2;
'''
    Am, Bm = np.array([[1., 2], [3, 4]]), np.array([[1., 2], [4, 5]])
    o = run(src, A=Am, B=Bm, x=np.array([1., 10]), b=np.array([100., 200]),
            P=np.array([Am, Bm]))
    printed = {'C': [9, 12, 19, 26], 't': [5], 'd': [1, 4], 'R': [7, 10, 15, 22, 9, 12, 24, 33],
               'E': [101, 202, 103, 204], 'y': [1121, 2243], 's': [5, 25], 'q': [1.5, 4.5],
               'Z': [81, 144, 361, 676]}
    for name, vals in printed.items():
        close(o[name].ravel(), np.array(vals, dtype=float))


# --------------------------------------------------- compile-time errors --

@test
def errors_of_4_1():
    rejects('in A[n,m]; out C[n,m]; C("i,j") = A("i,k");', what="label 'j'")
    rejects('in A[n,m], B[m,p]; out C[n,p]; C("i,j") = A("i,k") * B("j,k");',
            what='two different extents')
    rejects('in A[n,m]; out c[n]; c("i") = A("i");', what='indexed with 1 labels')
    rejects('in A[n,m]; A("i,j") = 0;', what='input')
    rejects('in A[n,m]; out C[n,m], D[n,m]; D("i,j") = C("i,j"); C("i,j") = A("i,j");',
            what='read before it is written')
    rejects('in A[n,m]; out C[n,m]; C("i,j") += A("i,j");', what='updated before')
    rejects('in x[n]; out s; s = x("i")^x("i");', what='exponent')
    rejects('dim b = 3; in A[b,n]; out r[n]; r("j") = A("3,j");', what='out of range')


@test
def fill_needs_no_labels_but_a_tensor_does():
    rejects('in a; out C[n,m]; C("i,j") = a;', what="label 'i'")
    o = run('out C[n,m]; C("i,j") = 2 * 3;', dims={'n': 2, 'm': 3})
    close(o['C'], np.full((2, 3), 6.0))


# ---------------------------------------------- readings and quirk models --

@test
def alternative_readings_differ_only_where_4_1_is_silent():
    # an unambiguous program gives the same values under every reading
    src = 'in A[n,k], B[k,m], b[n], x[m]; out C[n,m], c[n];' \
          'C("i,j") = exp(A("i,k") * B("k,j")) + b("i"); c("i") = (A("i,k") * B("k,j") + 1) * x("j");'
    base = run(src, A=A, B=B, b=b, x=x)
    for o in txref.Options.alternatives():
        alt = run(src, options=o, A=A, B=B, b=b, x=x)
        for name in base:
            close(alt[name], base[name])
    # an ambiguous one: does a product inside a function's sum contract a
    # label all of whose occurrences it holds?
    src = 'in x[n], y[n]; out s; s = exp(x("i") * y("i") + 1);'
    o1 = run(src, x=u, y=b)
    o2 = run(src, txref.Options(keepall_terms='all'), x=u, y=b)
    close(o1['s'], np.exp(u @ b + 1))
    close(o2['s'], np.exp(u * b + 1).sum())


def C(*shape):
    return R(*shape) + 1j * R(*shape)


@test
def complex_4_2_promotion_functions_contractions():
    Z, W, x, v = C(3, 4), C(4, 2), R(3), C(4)
    src = ('in c128 Z[n,k], v[k]; in c64 W[k,m]; in x[n];\n'
           'out c128 A[n,m], e[n,k], s; out c64 B[k,m]; out r[n], q[n];\n'
           'A("i,j") = Z("i,k") * W("k,j") + x("i");\n'
           'e("i,k") = exp(Z("i,k")) * conj(Z("i,k")) / (2 + Z("i,k")^2) - sqrt(Z("i,k"));\n'
           's = v("k") * v("k");\n'
           'B("k,j") = 2 * W("k,j");\n'
           'r("i") = abs(Z("i,k")) + real(Z("i,k")) * imag(Z("i,k"));\n'
           'q("i") = where(x("i") > 0, real(reduce(*, Z("i,k"))), imag(Z("i,0")));\n')
    W64 = W.astype(np.complex64)
    o = run(src, Z=Z, W=W64, x=x, v=v)
    assert o['A'].dtype == np.complex128 and o['B'].dtype == np.complex64 and o['r'].dtype == np.float64
    close(np.abs(o['A'] - (Z @ W64.astype(np.complex128) + x[:, None])), 0 * x[:, None] + np.zeros((3, 2)))
    want_e = np.exp(Z) * np.conj(Z) / (2 + Z**2) - np.sqrt(Z)
    close(np.abs(o['e'] - want_e), np.zeros_like(Z, dtype=float))
    close(abs(o['s'] - v @ v), 0)                  # no conjugation: zdotu
    close(np.abs(o['B'] - 2 * W64), np.zeros((4, 2)), 1e-6)
    close(o['r'], (np.abs(Z) + Z.real * Z.imag).sum(1))
    close(o['q'], np.where(x > 0, np.prod(Z, axis=1).real, Z[:, 0].imag))


@test
def complex_4_2_errors_and_real_nodes():
    rejects('in c128 Z[n]; out y[n]; y("i") = 2 * Z("i");', what="real tensor")
    rejects('in c64 Z[n]; in x[n]; out c64 y[n]; y("i") = max(x("i"), Z("i"));', what="max")
    rejects('in c128 Z[n]; out y[n]; y("i") = Z("i") < 1;', what="<")
    rejects('in c128 Z[n]; out c128 y[n]; y("i") = where(Z("i"), Z("i"), 0);', what="where")
    rejects('in c128 Z[n,m]; out c128 y[n]; y("i") = reduce(min, Z("i,j"));', what="reduce")
    rejects('in c128 Z[n]; out y[n]; let T("i") = conj(Z("i")); y("i") = T("i");', what="real tensor")
    # a real node of a complex program stays real: sqrt of a negative real is NaN, as in C
    with np.errstate(invalid='ignore'):
        o = run('in c128 Z[n]; in x[n]; out c128 y[n]; y("i") = sqrt(x("i")) + Z("i");',
                Z=np.array([1j, 2]), x=np.array([-1.0, 4.0]))
    assert np.isnan(o['y'][0].real) and o['y'][1] == 4


@test
def complex_imaginary_literals():
    t, Z = R(4), C(4)
    o = run('in t[n]; in c128 Z[n]; out c128 y[n], f[n]; out r[n];\n'
            'y("i") = exp(1i * t("i")) + (1 + 2.5i) * Z("i") - .5i;\n'
            'f("i") = 3i;\n'
            'r("i") = imag(2i * t("i"));\n', t=t, Z=Z)
    close(np.abs(o['y'] - (np.exp(1j * t) + (1 + 2.5j) * Z - 0.5j)), np.zeros(4))
    close(np.abs(o['f'] - 3j), np.zeros(4))
    close(o['r'], 2 * t)
    rejects('in x[n]; out y[n]; y("i") = x("i") * 2i;', what="real tensor")
    rejects('in x[n]; out c128 y[n]; y("i") = x("i")^2i;', what="exponent")


@test
def quirk_models_reproduce_the_issue_examples():
    Q = lambda *q: txref.Options(quirks=q)  # noqa: E731
    o = run('in u[n], v[m]; out s; s = (u("i") * v("j"))^2;', Q('early-product'), u=u, v=x)
    close(o['s'], (u.sum() * x.sum())**2)
    o = run('in y[t], beta; out s; s = tanh(y("t") + beta * y("t"));',
            Q('early-product', 'sum-in-fn'), y=y, beta=beta)
    close(o['s'], np.tanh(y.sum() + beta * y.sum()))
    o = run('in x[n], A[n,m]; out c[n]; c("i") = x("i") / (A("i,j")^2 + 1);',
            Q('sum-in-denominator'), x=u, A=A2)
    close(o['c'], u / ((A2**2).sum(1) + 1))


def main(argv):
    verbose = '-v' in argv
    failed = 0
    for fn in TESTS:
        try:
            with np.errstate(all='raise'):
                fn()
            if verbose:
                print('ok   %s' % fn.__name__)
        except Exception as e:
            failed += 1
            print('FAIL %s: %s' % (fn.__name__, e if isinstance(e, (AssertionError, txref.TxError))
                                   else traceback.format_exc()))
    print('%d passed, %d failed' % (len(TESTS) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
