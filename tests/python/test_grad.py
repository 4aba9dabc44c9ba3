"""grad (tx(5) section 6.1) in whole programs against PyTorch autograd.

Each program computes a loss and its gradients as ordinary outputs; the
same loss written in torch is differentiated by torch.autograd (double
backward for the Hessian-vector product). Skipped when torch is missing.
"""
import numpy as np
import pytest

import tensorexpr as tx

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

rng = np.random.default_rng(11)


def t(a, grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def close(a, b, tol=1e-9):
    a = np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * (1 + np.abs(b).max(initial=0)))


@pytest.mark.parametrize("level", [0, 1, 2])
def test_logistic_regression(level):
    n, d = 40, 7
    X, w, b = rng.standard_normal((n, d)), rng.standard_normal(d), rng.standard_normal(())
    y = (rng.uniform(size=n) < 0.5).astype(np.float64)
    prog = tx.compile("""
in X[n,d], y[n], w[d], b;
out loss, gw[d], gb;
let z("i") = X("i,k") * w("k") + b;
loss = (log(1 + exp(z("i"))) - y("i") * z("i")) / n;
gw("k") = grad(loss, w("k"));
gb = grad(loss, b);
""", opt_level=level)
    r = prog(X=X, y=y, w=w, b=b)
    tw, tb = t(w, True), t(b, True)
    z = t(X) @ tw + tb
    loss = (torch.nn.functional.softplus(z) - t(y) * z).mean()
    loss.backward()
    close(r["loss"], loss)
    close(r["gw"], tw.grad)
    close(r["gb"], tb.grad)


@pytest.mark.parametrize("level", [0, 2])
def test_mlp_softmax_cross_entropy(level):
    n, d, h, c = 32, 10, 16, 5
    X = rng.standard_normal((n, d))
    W1, b1 = rng.standard_normal((d, h)) / 3, rng.standard_normal(h) / 3
    W2, b2 = rng.standard_normal((h, c)) / 3, rng.standard_normal(c) / 3
    labels = rng.integers(0, c, size=n)
    Y = np.eye(c)[labels]
    prog = tx.compile("""
in X[n,d], Y[n,c], W1[d,h], b1[h], W2[h,c], b2[c];
out loss, gW1[d,h], gb1[h], gW2[h,c], gb2[c];
let H("i,j") = max(X("i,k") * W1("k,j") + b1("j"), 0);
let Z("i,c") = H("i,j") * W2("j,c") + b2("c");
let m("i") = reduce(max, Z("i,c"));
let lse("i") = log(reduce(+, exp(Z("i,c") - m("i")))) + m("i");
loss = (lse("i") - Y("i,c") * Z("i,c")) / n;
gW1("a,b") = grad(loss, W1("a,b"));
gb1("a") = grad(loss, b1("a"));
gW2("a,b") = grad(loss, W2("a,b"));
gb2("a") = grad(loss, b2("a"));
""", opt_level=level)
    r = prog(X=X, Y=Y, W1=W1, b1=b1, W2=W2, b2=b2)
    tW1, tb1, tW2, tb2 = t(W1, True), t(b1, True), t(W2, True), t(b2, True)
    Z = torch.relu(t(X) @ tW1 + tb1) @ tW2 + tb2
    loss = torch.nn.functional.cross_entropy(Z, torch.tensor(labels))
    loss.backward()
    close(r["loss"], loss)
    for name, p in (("gW1", tW1), ("gb1", tb1), ("gW2", tW2), ("gb2", tb2)):
        close(r[name], p.grad)


def test_least_squares_closed_form():
    m, n = 30, 6
    A, b, x = rng.standard_normal((m, n)), rng.standard_normal(m), rng.standard_normal(n)
    prog = tx.compile("""
in A[m,n], b[m], x[n];
out loss, g[n];
loss = 0.5 * (A("i,j") * x("j") - b("i"))^2;
g("j") = grad(loss, x("j"));
""")
    r = prog(A=A, b=b, x=x)
    close(r["g"], A.T @ (A @ x - b))  # the closed form
    tx_ = t(x, True)
    loss = 0.5 * ((t(A) @ tx_ - t(b)) ** 2).sum()
    loss.backward()
    close(r["g"], tx_.grad)


def test_cholesky_gaussian_log_likelihood():
    n = 6
    M = rng.standard_normal((n, n))
    S = M @ M.T / n + np.eye(n)
    y, mu = rng.standard_normal(n), rng.standard_normal(n)
    prog = tx.compile("""
in S[n,n], y[n], mu[n];
out ll, gS[n,n], gmu[n];
let L("i,j") = cholesky(S("i,j"));
let z("j") = solve(L("i,j"), y("i") - mu("i"));
ll = -0.5 * z("i") * z("i") - log(L("i,i")) - 0.5 * n * 1.8378770664093453;
gS("i,j") = grad(ll, S("i,j"));
gmu("i") = grad(ll, mu("i"));
""")
    r = prog(S=S, y=y, mu=mu)
    tS, tmu = t(S, True), t(mu, True)
    dist = torch.distributions.MultivariateNormal(tmu, covariance_matrix=tS)
    ll = dist.log_prob(t(y))
    ll.backward()
    close(r["ll"], ll)
    close(r["gmu"], tmu.grad)
    # torch's covariance gradient through its own Cholesky: compare the
    # symmetric part, the only part a symmetric S's perturbations see
    g = tS.grad.numpy()
    close(r["gS"] + r["gS"].T, g + g.T, tol=1e-8)


def test_hessian_vector_product_double_backward():
    n = 8
    A, x, v = rng.standard_normal((n, n)) / 3, rng.standard_normal(n), rng.standard_normal(n)
    prog = tx.compile("""
in A[n,n], x[n], v[n];
out hv[n];
let f = exp(A("i,j") * x("j")) + x("i")^4;
hv("i") = grad(grad(f, x("k")) * v("k"), x("i"));
""")
    r = prog(A=A, x=x, v=v)
    tx_ = t(x, True)
    f = torch.exp(t(A) @ tx_).sum() + (tx_ ** 4).sum()
    (g,) = torch.autograd.grad(f, tx_, create_graph=True)
    (hv,) = torch.autograd.grad(g @ t(v), tx_)
    close(r["hv"], hv)


def test_gradient_outputs_are_ordinary_outputs():
    prog = tx.compile("""
in x[n];
out g[n];
g("i") = grad(x("j") * x("j"), x("i"));
""")
    assert [o for o in prog.outputs] == ["g"] or "g" in prog.outputs
    x = rng.standard_normal(5)
    close(prog(x=x)["g"], 2 * x)


def test_errors():
    with pytest.raises(tx.CompileError, match="in or inout tensor"):
        tx.compile("in x[n]; tmp t[n]; out g[n]; t(\"i\") = x(\"i\"); g(\"i\") = grad(t(\"j\") * t(\"j\"), t(\"i\"));")
    with pytest.raises(tx.CompileError, match="one label per mode"):
        tx.compile("in A[n,n]; out g[n]; g(\"i\") = grad(A(\"i,j\") * A(\"i,j\"), A(\"i\"));")


def test_svd_and_eigh_against_torch():
    m, n = 7, 4
    A, C, u = rng.standard_normal((m, n)), rng.standard_normal((m, n)), rng.standard_normal(n)
    M = rng.standard_normal((n, n))
    S = M + M.T
    prog = tx.compile("""
in A[m,n], C[m,n], u[n], S[n,n], D[n,n];
tmp U[m,n], sv[n], Vt[n,n], V[n,n], w[n];
out f, gA[m,n], gS[n,n];
(U("i,r"), sv("r"), Vt("r,j")) = svd(A("i,j"));
(V("i,e"), w("e")) = eigh(S("i,j"));
f = sv("r")^2 * u("r") + (U("i,r") * Vt("r,j"))^2 * C("i,j") + w("e")^3 + V("a,e")^2 * D("a,e");
gA("i,j") = grad(f, A("i,j"));
gS("i,j") = grad(f, S("i,j"));
""")
    D = rng.standard_normal((n, n))
    r = prog(A=A, C=C, u=u, S=S, D=D)
    tA, tS = t(A, True), t(S, True)
    U, sv, Vh = torch.linalg.svd(tA, full_matrices=False)
    w, V = torch.linalg.eigh(tS)
    f = (sv ** 2 * t(u)).sum() + ((U @ Vh) ** 2 * t(C)).sum() + (w ** 3).sum() + (V ** 2 * t(D)).sum()
    f.backward()
    close(r["f"], f)
    close(r["gA"], tA.grad, tol=1e-8)
    g = tS.grad.numpy()
    close(r["gS"] + r["gS"].T, g + g.T, tol=1e-8)


@pytest.mark.parametrize("level", [0, 2])
def test_degenerate_spectrum_is_a_run_time_error(level):
    prog = tx.compile("""
in S[n,n], C[n,n];
tmp V[n,n], w[n];
out g[n,n], h[n,n];
(V("i,e"), w("e")) = eigh(S("i,j"));
g("i,j") = grad(V("a,e")^2 * C("a,e"), S("i,j"));
h("i,j") = grad(w("e")^2, S("i,j"));
""", opt_level=level)
    C = rng.standard_normal((4, 4))
    with pytest.raises(tx.RunError, match="distinct"):
        prog(S=np.eye(4), C=C)  # eigenvalue 1, four times
    S = np.diag([1.0, 2.0, 3.0, 4.0])
    close(prog(S=S, C=C)["h"], 2 * S)  # d/dS sum(w^2) = d/dS |S|_F^2
    prog_w = tx.compile("""
in S[n,n];
tmp V[n,n], w[n];
out h[n,n];
(V("i,e"), w("e")) = eigh(S("i,j"));
h("i,j") = grad(w("e")^2, S("i,j"));
""", opt_level=level)
    close(prog_w(S=np.eye(4))["h"], 2 * np.eye(4))  # the eigenvalues alone: defined when repeated


@pytest.mark.parametrize("level", [0, 2])
def test_repeated_values_weighted_differently_is_a_run_time_error(level):
    # through the eigenvalues (singular values) alone, sum c_e w_e has a
    # derivative at a repeated value only if c weights its copies alike
    # (LANGUAGE.md 6.1: a degenerate spectrum is an error; where the weights
    # agree the function is smooth there, and V diag(c) V^T is its gradient)
    prog = tx.compile("""
in S[n,n], c[n];
tmp V[n,n], w[n];
out h[n,n];
(V("i,e"), w("e")) = eigh(S("i,j"));
h("i,j") = grad(w("e") * c("e"), S("i,j"));
""", opt_level=level)
    with pytest.raises(tx.RunError, match="weighted differently; value 0 is repeated"):
        prog(S=np.eye(3), c=np.array([0.0, 1.0, 2.0]))
    close(prog(S=np.diag([1.0, 1.0, 3.0]), c=np.array([5.0, 5.0, 2.0]))["h"], np.diag([5.0, 5.0, 2.0]))
    close(prog(S=np.diag([1.0, 2.0, 3.0]), c=np.array([0.0, 1.0, 2.0]))["h"], np.diag([0.0, 1.0, 2.0]))
    sv = tx.compile("""
in M[m,p], c[k];
tmp U[m,k], s[k], Vt[k,p];
out G[m,p];
(U("i,r"), s("r"), Vt("r,j")) = svd(M("i,j"));
G("i,j") = grad(s("r") * c("r"), M("i,j"));
""", opt_level=level)
    M = np.zeros((3, 2))
    M[0, 0] = M[1, 1] = 2.0
    with pytest.raises(tx.RunError, match="weighted differently"):
        sv(M=M, c=np.array([1.0, 2.0]))
    close(sv(M=M, c=np.array([3.0, 3.0]))["G"], 3 * M / 2)  # U diag(c) Vt = 3 * (M / 2)


def c(a, grad=False):
    return torch.tensor(a, dtype=torch.complex128, requires_grad=grad)


def crand(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("level", [0, 2])
def test_complex_least_squares(level):
    # torch's convention: the gradient of a real loss is dL/dRe z + i dL/dIm z
    A, z, b = crand(9, 4), crand(4), crand(9)
    prog = tx.compile("""
in c128 A[n,k], z[k], b[n];
out loss;
out c128 gA[n,k], gz[k], gb[n];
loss = abs(A("i,j") * z("j") - b("i"))^2;
gA("i,j") = grad(loss, A("i,j"));
gz("j") = grad(loss, z("j"));
gb("i") = grad(loss, b("i"));
""", opt_level=level)
    r = prog(A=A, z=z, b=b)
    tA, tz, tb = c(A, True), c(z, True), c(b, True)
    loss = ((tA @ tz - tb).abs() ** 2).sum()
    loss.backward()
    close(r["loss"], loss)
    close(r["gA"], tA.grad)
    close(r["gz"], tz.grad)
    close(r["gb"], tb.grad)
    # a step of gradient descent goes downhill
    z2 = z - 0.01 * r["gz"]
    assert np.sum(np.abs(A @ z2 - b) ** 2) < r["loss"]


def test_complex_circuit_fidelity_and_phases():
    n = 6
    H = crand(n, n)
    H = H + H.conj().T
    psi, phi, th = crand(n), crand(n), rng.standard_normal(n)
    U = np.linalg.eigh(H)[1]  # a unitary
    prog = tx.compile("""
in c128 U[n,n], psi[n], phi[n];
in th[n];
out f;
out c128 gU[n,n], gpsi[n], gphi[n];
out gth[n];
let v("i") = U("i,j") * exp(1i * th("j")) * phi("j");
let amp = real(conj(psi("i")) * v("i"));
let power = abs(v("i"))^2 * th("i");
let phase = imag(exp(2i * th("i")) * psi("i"));
f = amp^2 + power + phase;
gU("i,j") = grad(f, U("i,j"));
gpsi("i") = grad(f, psi("i"));
gphi("i") = grad(f, phi("i"));
gth("i") = grad(f, th("i"));
""")
    r = prog(U=U, psi=psi, phi=phi, th=th)
    tU, tpsi, tphi, tth = c(U, True), c(psi, True), c(phi, True), t(th, True)
    # (torch 1.13 computes a dot product with a lazily conjugated vector as 0: multiply and sum)
    v = tU @ (torch.exp(1j * tth) * tphi)
    f = (tpsi.conj() * v).sum().real ** 2 + ((v.abs() ** 2) * tth).sum() + (torch.exp(2j * tth) * tpsi).imag.sum()
    f.backward()
    close(r["f"], f)
    for name, x in (("gU", tU), ("gpsi", tpsi), ("gphi", tphi), ("gth", tth)):
        close(r[name], x.grad)


def test_complex_linear_algebra_against_torch():
    m, n = 6, 4
    A, W = crand(m, n), crand(n, n)
    X = crand(n, n)
    S = X @ X.conj().T + n * np.eye(n)  # Hermitian positive definite
    K, y, Cw, Cq = crand(3, 5), crand(n), rng.standard_normal((3, 5)), crand(3, 3)
    prog = tx.compile("""
in c128 A[m,n], W[n,n], S[n,n], y[n], K[p,q], Cq[p,p];
in Cw[p,q];
tmp c128 U[m,n], Vt[n,n], Q[p,p], R[p,q], V[n,n], Qa[m,n], Ra[n,n];
tmp sv[n], w[n];
out f;
out c128 gA[m,n], gS[n,n], gK[p,q];
(U("i,r"), sv("r"), Vt("r,j")) = svd(A("i,j"));
(Qa("i,r"), Ra("r,j")) = qr(A("i,j"));
(V("i,e"), w("e")) = eigh(S("i,j"));
(Q("i,r"), R("r,j")) = qr(K("i,j"));
f = sv("r")^3 + abs(U("i,r") * Vt("r,j"))^2 + real(Ra("r,j") * W("r,j")) + imag(Qa("i,r") * A("i,r"))
  + w("e")^2 + abs(V("a,e"))^4 + abs(solve(cholesky(S("a,b")), y("a")))^2 + real(inv(S("a,b")) * W("a,b"))
  + real(Q("c,t") * Cq("c,t")) + abs(R("t,u"))^2 * Cw("t,u") + imag(pow(S("a,b"), 3) * W("b,a")) / 1000;
gA("i,j") = grad(f, A("i,j"));
gS("i,j") = grad(f, S("i,j"));
gK("i,j") = grad(f, K("i,j"));
""")
    r = prog(A=A, W=W, S=S, y=y, K=K, Cw=Cw, Cq=Cq)
    tA, tS, tK = c(A, True), c(S, True), c(K, True)
    U, sv, Vh = torch.linalg.svd(tA, full_matrices=False)
    Qa, Ra = torch.linalg.qr(tA)
    w, V = torch.linalg.eigh(tS)
    Q, R = torch.linalg.qr(tK)
    L = torch.linalg.cholesky(tS)
    tW = c(W)
    f = ((sv ** 3).sum() + ((U @ Vh).abs() ** 2).sum() + (Ra * tW).real.sum() + (Qa * tA).imag.sum()
         + (w ** 2).sum() + (V.abs() ** 4).sum()
         + (torch.linalg.solve_triangular(L, c(y)[:, None], upper=False).abs() ** 2).sum()
         + (torch.linalg.inv(tS) * tW).real.sum() + (Q * c(Cq)).real.sum() + ((R.abs() ** 2) * t(Cw)).sum()
         + (torch.linalg.matrix_power(tS, 3) * tW.T).imag.sum() / 1000)
    f.backward()
    close(r["f"], f)
    close(r["gA"], tA.grad, tol=1e-8)
    close(r["gK"], tK.grad, tol=1e-8)
    # S is Hermitian: the gradients agree on Hermitian directions
    g = tS.grad.numpy()
    close(r["gS"] + r["gS"].conj().T, g + g.conj().T, tol=1e-8)


@pytest.mark.parametrize("level", [0, 2])
def test_wide_qr_large_pow_and_generalised_eigh_against_torch(level):
    m, n = 3, 7
    A, C, W = rng.standard_normal((m, n)), rng.standard_normal((m, m)), rng.standard_normal((m, n))
    P = 0.99 * np.eye(4) + 0.03 * rng.standard_normal((4, 4))
    Wp = rng.standard_normal((4, 4))
    M = rng.standard_normal((5, 5))
    S = M + M.T
    N = rng.standard_normal((5, 5))
    B = N @ N.T / 5 + np.eye(5)
    D = rng.standard_normal((5, 5))
    prog = tx.compile("""
in A[m,n], C[m,m], W[m,n], P[k,k], Wp[k,k], S[d,d], B[d,d], D[d,d];
tmp Q[m,m], R[m,n], V[d,d], w[d];
out f, gA[m,n], gP[k,k], gS[d,d], gB[d,d];
(Q("i,r"), R("r,j")) = qr(A("i,j"));
(V("i,e"), w("e")) = eigh(S("i,j"), B("i,j"));
f = Q("i,r") * C("i,r") + R("r,j") * W("r,j") + pow(P("a,b"), 100) * Wp("a,b") + pow(P("a,b"), -70) * Wp("b,a")
  + w("e")^3 + V("c,e")^2 * D("c,e");
gA("i,j") = grad(f, A("i,j"));
gP("i,j") = grad(f, P("i,j"));
gS("i,j") = grad(f, S("i,j"));
gB("i,j") = grad(f, B("i,j"));
""", opt_level=level)
    r = prog(A=A, C=C, W=W, P=P, Wp=Wp, S=S, B=B, D=D)
    tA, tP, tS, tB = t(A, True), t(P, True), t(S, True), t(B, True)
    Q, R = torch.linalg.qr(tA)
    # the generalised problem through its reduction: B = L L^T, L^-1 S L^-T = U diag(w) U^T, V = L^-T U
    L = torch.linalg.cholesky(tB)
    Li = torch.linalg.inv(L)
    w, Uc = torch.linalg.eigh(Li @ tS @ Li.T)
    V = Li.T @ Uc
    f = ((Q * t(C)).sum() + (R * t(W)).sum() + (torch.linalg.matrix_power(tP, 100) * t(Wp)).sum()
         + (torch.linalg.matrix_power(tP, -70) * t(Wp).T).sum() + (w ** 3).sum() + (V ** 2 * t(D)).sum())
    f.backward()
    close(r["f"], f, tol=1e-8)
    close(r["gA"], tA.grad, tol=1e-8)
    close(r["gP"], tP.grad, tol=1e-8)
    for name, x in (("gS", tS), ("gB", tB)):  # symmetric matrices: compare on symmetric directions
        g = x.grad.numpy()
        close(r[name] + r[name].T, g + g.T, tol=1e-7)


@pytest.mark.parametrize("level", [0, 1, 2])
def test_linear_algebra_with_a_constant_adjoint(level):
    """solve's and cholesky's results summed as they are: their adjoint is
    the seed spread over the result, once kept as floats that the f64
    LAPACK call read as doubles (garbage, and reads past the buffer)."""
    A = np.array([[1.2, .3, -.1], [.2, .9, .4], [-.3, .1, 1.1]])
    b = np.array([.5, -1., 2.])
    S = A @ A.T + np.eye(3)
    p = tx.compile('''in A[n,n], b[n], S[n,n];
out g[n], h[n], gA[n,n], gS[n,n];
g("i") = grad(solve(A("a,c"), b("a")), b("i"));
h("i") = grad(2 * solve(A("a,c"), b("a")), b("i"));
gA("i,j") = grad(solve(A("a,c"), b("a")), A("i,j"));
gS("i,j") = grad(cholesky(S("a,c")), S("i,j"));
''', opt_level=level)
    r = p(A=A, b=b, S=S)
    tA, tb, tS = t(A, True), t(b, True), t(S, True)
    torch.linalg.solve(tA, tb).sum().backward()
    torch.linalg.cholesky(tS).sum().backward()
    close(r["g"], tb.grad)
    close(r["h"], 2 * tb.grad)
    close(r["gA"], tA.grad)
    # torch's cholesky gradient is symmetric: tensorexpr's too, (S + S^T) / 2
    close(r["gS"], tS.grad)


@pytest.mark.parametrize("level", [0, 1, 2])
def test_values_fused_into_several_users_live_until_the_last(level):
    """t^2 (kept in memory) is read by a value fused into two users, one of
    them fused again into a later kernel: its buffer was freed after the
    first user's kernel, and the later one read freed memory (-O1)."""
    src = '''in x[n], X[c,m];
tmp t;
out s, gX[c,m];
t = X("i,j");
s = x("a") * (X("0,k") * 2 + cos(t)) * t^2;
gX("i,j") = grad(s, X("i,j"));
'''
    x, X = rng.standard_normal(2), rng.standard_normal((2, 3)) * .3
    r = tx.compile(src, opt_level=level)(x=x, X=X)
    tx_, tX = t(x), t(X, True)
    tt = tX.sum()
    (tx_.sum() * (tX[0].sum() * 2 + torch.cos(tt)) * tt ** 2).backward()
    close(r["gX"], tX.grad)
    src2 = '''in x[n], X[m,n];
tmp t[n];
out s, gX[m,n];
t("j") = scan(+, x("k"), "k") * min(X("i,j"), x("j"));
s = t("j");
gX("i,j") = grad(s, X("i,j"));
'''
    x, X = np.array([.2, -.5, .9]), np.array([[.1, -.7, .3], [-.4, .8, .6]])
    r = tx.compile(src2, opt_level=level)(x=x, X=X)
    close(r["gX"], np.cumsum(x).sum() * (X <= x[None, :]))


@pytest.mark.parametrize("level", [0, 1, 2])
def test_seed_has_the_type_of_the_differentiated_value(level):
    """an f64 program's gradient is not rounded to f32 anywhere: the seed 1
    was an f32 number, and 1.4 * seed was kept as a float at -O0, -O1"""
    x = np.array([.7, .9, 1.3])
    r = tx.compile('in x[n]; out g[n]; g("i") = grad(1.4 * log(x("j")), x("i"));', opt_level=level)(x=x)
    np.testing.assert_array_equal(r["g"], 1.4 / x)


@pytest.mark.parametrize("level", [0, 1, 2])
def test_running_product_with_zeros(level):
    """scan(*) and scanr(*) differentiated where entries are 0 (one, two,
    at the ends): the limit torch's cumprod gives, never a division by the
    entry (which made NaN)"""
    p = tx.compile('''in X[m,n], W[m,n];
out gf[m,n], gr[m,n], gc[m,n];
gf("a,b") = grad(W("i,k") * scan(*, X("i,k"), "k"), X("a,b"));
gr("a,b") = grad(W("i,k") * scanr(*, X("i,k"), "k"), X("a,b"));
gc("a,b") = grad(scan(*, X("i,k"), "i"), X("a,b"));
''', opt_level=level)
    X = rng.standard_normal((4, 6))
    X[0, 1] = 0
    X[1, 0] = X[1, 5] = 0
    X[2, 2] = X[2, 3] = 0
    X[3, 4] = 0
    W = rng.standard_normal((4, 6))
    r = p(X=X, W=W)
    for name, f in (("gf", lambda a: torch.cumprod(a, 1)), ("gr", lambda a: torch.cumprod(a.flip(1), 1).flip(1))):
        tX = t(X, True)
        (t(W) * f(tX)).sum().backward()
        close(r[name], tX.grad)
    tX = t(X, True)
    torch.cumprod(tX, 0).sum().backward()
    close(r["gc"], tX.grad)
    assert np.isfinite(r["gf"]).all()


@pytest.mark.parametrize("level", [0, 2])
def test_second_grad_through_eigh_and_svd(level):
    """Hessian-vector products through eigh (values and vectors) and svd's
    values: the first gradient's gaps w(f) - w(e) have a rule of their own
    (it was "grad through 'gaps' is not supported yet", a name the user
    never wrote)"""
    n, m = 4, 5
    B = rng.standard_normal((n, n))
    S, V, C = B + B.T, rng.standard_normal((n, n)), rng.standard_normal((n, n))
    A, VA = rng.standard_normal((m, n)), rng.standard_normal((m, n))
    p = tx.compile('''in S[n,n], V[n,n], C[n,n], A[m,n], VA[m,n];
tmp Q[n,n], w[n], U[m,n], s[n], Vt[n,n];
out hw[n,n], hq[n,n], hs[m,n];
(Q("i,e"), w("e")) = eigh(S("i,j"));
(U("i,r"), s("r"), Vt("r,j")) = svd(A("i,j"));
hw("i,j") = grad(grad(w("e")^3, S("p,q")) * V("p,q"), S("i,j"));
hq("i,j") = grad(grad(C("i,e") * Q("i,e")^2, S("p,q")) * V("p,q"), S("i,j"));
hs("i,j") = grad(grad(s("r")^2, A("p,q")) * VA("p,q"), A("i,j"));
''', opt_level=level)
    r = p(S=S, V=V, C=C, A=A, VA=VA)

    def hvp(f, X, W):
        tX = t(X, True)
        g, = torch.autograd.grad(f(tX), tX, create_graph=True)
        (g * t(W)).sum().backward()
        return tX.grad

    close(r["hw"], hvp(lambda X: (torch.linalg.eigvalsh(X) ** 3).sum(), S, V))
    close(r["hq"], hvp(lambda X: (t(C) * torch.linalg.eigh(X)[1] ** 2).sum(), S, V))
    close(r["hs"], hvp(lambda X: (torch.linalg.svdvals(X) ** 2).sum(), A, VA))


@pytest.mark.parametrize("level", [0, 1, 2])
def test_inout_overwritten_means_its_value_at_entry(level):
    """a rule that needs an inout tensor's value reads it at entry, also
    after a statement has written it again (x^2's rule read the new x)"""
    p = tx.compile('''inout x[n], X0[n,m];
in X1[n,m];
out s, g[n], gX0[n,m], gX1[n,m];
x("i") = x("i")^2;
X0("i,j") = 0.5 * X0("i,j") + X1("i,j") * X0("i,j") * X0("i,j");
s = x("i") + X0("i,j")^2;
g("i") = grad(s, x("i"));
gX0("i,j") = grad(s, X0("i,j"));
gX1("i,j") = grad(s, X1("i,j"));
''', opt_level=level)
    x0, A, B = np.array([1., 2., 3.]), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    r = p(x=x0.copy(), X0=A.copy(), X1=B)
    tx_, tA, tB = t(x0, True), t(A, True), t(B, True)
    ((tx_ ** 2).sum() + ((0.5 * tA + tB * tA * tA) ** 2).sum()).backward()
    close(r["g"], tx_.grad)
    close(r["gX0"], tA.grad)
    close(r["gX1"], tB.grad)
    close(r["x"], x0 ** 2)


@pytest.mark.parametrize("level", [0, 1, 2])
def test_max_of_a_computed_operand(level):
    """reduce(max|min) of a product: its gradient's test [x == max] reads
    the operand as stored, with the max found again on it (the product was
    recomputed in other bits than the max the forward pass rounded or
    scaled: no position matched, and 0/0 gave NaN everywhere)"""
    p32 = tx.compile('''in f32 x[n];
out g[n], h[n];
g("i") = grad(reduce(max, x("j") * x("j")), x("i"));
h("i") = grad(reduce(min, x("j") * x("j")), x("i"));
''', opt_level=level)
    p64 = tx.compile('''in x[n], W[n,m];
out g[n], gW[n,m];
g("i") = grad(reduce(max, x("j") * 0.59 * x("j")), x("i"));
gW("i,j") = grad(reduce(min, W("a,b") * 1.3 * W("a,b")), W("i,j"));
''', opt_level=level)
    for _ in range(20):
        x = rng.uniform(-1, 1, 7)
        W = rng.uniform(-1, 1, (7, 5))
        r = p32(x=x.astype(np.float32))
        t32 = torch.tensor(x.astype(np.float32), dtype=torch.float32, requires_grad=True)
        torch.amax(t32 * t32).backward()
        close(r["g"], t32.grad.double(), 1e-5)
        t32.grad = None
        torch.amin(t32 * t32).backward()
        close(r["h"], t32.grad.double(), 1e-5)
        r = p64(x=x, W=W)
        tx_ = t(x, True)
        torch.amax(tx_ * 0.59 * tx_).backward()
        close(r["g"], tx_.grad)
        tW = t(W, True)
        torch.amin(tW * 1.3 * tW).backward()
        close(r["gW"], tW.grad)


_OVERWRITES = [
    ('inout x[n];\nout s, g[n];\nx("i") = x("i") + reduce(+, x("j")^2);\ns = x("i")^3;\ng("i") = grad(s, x("i"));',
     lambda a: ((a + (a ** 2).sum()) ** 3).sum()),
    ('inout x[n];\nout s, g[n];\nx("i") = x("i") + reduce(max, x("j"));\ns = x("i")^3;\ng("i") = grad(s, x("i"));',
     lambda a: ((a + a.max()) ** 3).sum()),
    ('inout x[n];\nout s, g[n];\nx("i") = x("i") + x("i") * scan(+, x("j"), "j");\ns = x("i")^3;\n'
     'g("i") = grad(s, x("i"));', lambda a: ((a + a * torch.cumsum(a, 0).sum()) ** 3).sum()),
    ('in x[n];\ntmp t[n];\nout s, g[n];\nt("i") = 2 * x("i");\nt("i") = t("i") + reduce(+, t("j")^2);\n'
     's = t("i")^3;\ng("i") = grad(s, x("i"));', lambda a: ((2 * a + ((2 * a) ** 2).sum()) ** 3).sum()),
    ('in x[n];\nout t[n], s, g[n];\nt("i") = 2 * x("i");\nt("i") += reduce(+, t("j")^2) * x("i");\n'
     's = t("i")^3;\ng("i") = grad(s, x("i"));', lambda a: ((2 * a + ((2 * a) ** 2).sum() * a) ** 3).sum()),
]


@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize("case", range(len(_OVERWRITES)))
def test_rules_read_values_from_before_an_overwrite(level, case):
    """a statement that overwrites a tensor its right side reads under
    other labels (a sum over it, its max, a running sum): the sweep's own
    reads of the tensor (relabelled) took the new value"""
    src, f = _OVERWRITES[case]
    x = np.array([.3, -.7, .5])
    r = tx.compile(src, opt_level=level)(x=x.copy())
    tx_ = t(x, True)
    v = f(tx_)
    v.backward()
    close(r["s"], v)
    close(r["g"], tx_.grad)
    X = np.array([[.3, -.7, .5], [.2, .9, -.4], [.6, -.1, .8]])
    r = tx.compile('inout X[n,n];\nout s, g[n,n];\nX("i,j") = X("i,j") + X("j,i")^2;\ns = X("i,j")^3;\n'
                   'g("i,j") = grad(s, X("i,j"));', opt_level=level)(X=X.copy())
    tX = t(X, True)
    ((tX + tX.T ** 2) ** 3).sum().backward()
    close(r["g"], tX.grad)
