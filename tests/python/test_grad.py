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
