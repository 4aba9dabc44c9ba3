#!/usr/bin/python3
"""bench_grad.py — the cost of grad (tx(5) section 6.1).

    /usr/bin/python3 bench/bench_grad.py [--repeat N] [--quick]

For each program (logistic regression, a two-layer MLP with softmax
cross-entropy, multi-head attention with a loss on its output, a Cholesky
Gaussian log-likelihood):

  - the cheap-gradient ratio: the time of the program that computes the
    loss and every gradient over the time of the program that computes the
    loss alone (both tensorexpr, -O2, one thread and two);
  - for every program, tensorexpr's gradient program against
    torch.autograd (forward + backward) on 1 and 2 threads;
  - a Hessian-vector product (grad of a grad) against torch's double
    backward, n = 2000 (1000 with --quick).

Every gradient is first checked against torch.autograd (exit status 1 on a
mismatch). Times are medians of --repeat rounds after a warm-up; in each
round the contenders of one row (forward, gradient program, torch) run
once each, in turn, in one process, so a loaded machine slows them alike,
but figures still move from run to run: compare ratios.
"""
import argparse
import os
import re
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
os.environ.setdefault("TENSOREXPR_LIB", os.path.join(HERE, "..", "build", "libtensorexpr.so"))
import tensorexpr as tx  # noqa: E402

try:
    import torch
except ImportError:  # the torch columns are left out
    torch = None

LOGREG = """
in X[n,d], y[n], w[d], b;
out loss;
let z("i") = X("i,k") * w("k") + b;
loss = (log(1 + exp(z("i"))) - y("i") * z("i")) / n;
"""
LOGREG_GRAD = """
out gw[d], gb;
gw("k") = grad(loss, w("k"));
gb = grad(loss, b);
"""

MLP = """
in X[n,d], Y[n,c], W1[d,h], b1[h], W2[h,c], b2[c];
out loss;
let H("i,j") = max(X("i,k") * W1("k,j") + b1("j"), 0);
let Z("i,c") = H("i,j") * W2("j,c") + b2("c");
let m("i") = reduce(max, Z("i,c"));
let lse("i") = log(reduce(+, exp(Z("i,c") - m("i")))) + m("i");
loss = (lse("i") - Y("i,c") * Z("i,c")) / n;
"""
MLP_GRAD = """
out gW1[d,h], gb1[h], gW2[h,c], gb2[c];
gW1("a,b") = grad(loss, W1("a,b"));
gb1("a") = grad(loss, b1("a"));
gW2("a,b") = grad(loss, W2("a,b"));
gb2("a") = grad(loss, b2("a"));
"""

ATTN = """
in X[z,s,e], Wq[e,h,d], Wk[e,h,d], Wv[e,h,d], G[z,s,h,d], scale;
out loss;
let Q("z,h,s,d") = X("z,s,e") * Wq("e,h,d");
let K("z,h,t,d") = X("z,t,e") * Wk("e,h,d");
let V("z,h,t,d") = X("z,t,e") * Wv("e,h,d");
let S("z,h,s,t") = Q("z,h,s,d") * K("z,h,t,d") * scale;
let E("z,h,s,t") = exp(S("z,h,s,t") - reduce(max, S("z,h,s,u")));
let P("z,h,s,t") = E("z,h,s,t") / reduce(+, E("z,h,s,u"));
let O("z,s,h,d") = P("z,h,s,t") * V("z,h,t,d");
loss = O("z,s,h,d") * G("z,s,h,d");
"""
ATTN_GRAD = """
out gWq[e,h,d], gWk[e,h,d], gWv[e,h,d];
gWq("a,b,c") = grad(loss, Wq("a,b,c"));
gWk("a,b,c") = grad(loss, Wk("a,b,c"));
gWv("a,b,c") = grad(loss, Wv("a,b,c"));
"""

GAUSS = """
in S[n,n], Y[n,k];
out ll;
let L("i,j") = cholesky(S("i,j"));
let Z("j,r") = solve(L("i,j"), Y("i,r"));
ll = -0.5 * Z("i,r") * Z("i,r") - k * log(L("i,i"));
"""
GAUSS_GRAD = """
out gS[n,n];
gS("i,j") = grad(ll, S("i,j"));
"""


HVP = """
in A[n,n], x[n], v[n];
out hv[n];
let f = log(1 + exp(A("i,j") * x("j"))) + x("i")^4 / 4;
hv("i") = grad(grad(f, x("k")) * v("k"), x("i"));
"""


def hvp_row(rng, quick, repeat, threads):
    """A Hessian-vector product by grad of grad against torch's double backward."""
    n = 1000 if quick else 2000
    A, x, v = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)
    prog = tx.compile(HVP, threads=threads)
    got = prog(A=A, x=x, v=v)["hv"]
    tt = None
    if torch is not None:
        torch.set_num_threads(threads)
        tA, tv = torch.tensor(A), torch.tensor(v)

        def step():
            tx_ = torch.tensor(x, requires_grad=True)
            f = torch.nn.functional.softplus(tA @ tx_).sum() + (tx_ ** 4).sum() / 4
            (g,) = torch.autograd.grad(f, tx_, create_graph=True)
            return torch.autograd.grad(g @ tv, tx_)[0]
        want = step().numpy()
        if not np.allclose(got, want, rtol=1e-8, atol=1e-10 * (1 + np.abs(want).max())):
            print("MISMATCH Hessian-vector product")
            return None
        tt = median_time(step, repeat)
    return median_time(lambda: prog(A=A, x=x, v=v), repeat), tt


def data(name, rng, quick):
    f = 2 if quick else 1
    if name == "logistic regression":
        n, d = 8192 // f, 256
        return {"X": rng.standard_normal((n, d)), "y": (rng.uniform(size=n) < 0.5) * 1.0,
                "w": rng.standard_normal(d) / 16, "b": np.array(0.1)}
    if name == "MLP":
        n, d, h, c = 1024 // f, 256, 512, 10
        return {"X": rng.standard_normal((n, d)), "Y": np.eye(c)[rng.integers(0, c, n)],
                "W1": rng.standard_normal((d, h)) / 16, "b1": rng.standard_normal(h) / 16,
                "W2": rng.standard_normal((h, c)) / 16, "b2": rng.standard_normal(c) / 16}
    if name == "attention":
        z, s, e, h, d = 8 // f, 128, 64, 4, 16
        return {"X": rng.standard_normal((z, s, e)), "Wq": rng.standard_normal((e, h, d)) / 8,
                "Wk": rng.standard_normal((e, h, d)) / 8, "Wv": rng.standard_normal((e, h, d)) / 8,
                "G": rng.standard_normal((z, s, h, d)), "scale": np.array(1 / np.sqrt(d))}
    n, k = 256 // f, 32
    M = rng.standard_normal((n, n))
    return {"S": M @ M.T / n + np.eye(n), "Y": rng.standard_normal((n, k))}


def torch_loss(name, T):
    F = torch.nn.functional
    if name == "logistic regression":
        z = T["X"] @ T["w"] + T["b"]
        return (F.softplus(z) - T["y"] * z).mean(), ("w", "b")
    if name == "MLP":
        Z = torch.relu(T["X"] @ T["W1"] + T["b1"]) @ T["W2"] + T["b2"]
        return F.cross_entropy(Z, T["Y"].argmax(1)), ("W1", "b1", "W2", "b2")
    if name == "attention":
        Q = torch.einsum("zse,ehd->zhsd", T["X"], T["Wq"])
        K = torch.einsum("zte,ehd->zhtd", T["X"], T["Wk"])
        V = torch.einsum("zte,ehd->zhtd", T["X"], T["Wv"])
        P = torch.softmax(torch.einsum("zhsd,zhtd->zhst", Q, K) * T["scale"], dim=-1)
        O = torch.einsum("zhst,zhtd->zshd", P, V)
        return (O * T["G"]).sum(), ("Wq", "Wk", "Wv")
    L = torch.linalg.cholesky(T["S"])
    Z = torch.linalg.solve_triangular(L, T["Y"], upper=False)
    k = T["Y"].shape[1]
    return -0.5 * (Z * Z).sum() - k * torch.log(torch.diagonal(L)).sum(), ("S",)


def graph_flops(prog):
    """The FLOPs of the optimised graph (txc graph's "# total" line), for
    the extents of the last run."""
    m = re.search(r"# total: ([0-9.e+]+) flop", str(prog.graph()))
    return float(m.group(1)) if m else float("nan")


def median_time(fn, repeat):
    return median_times([fn], repeat)[0]


def median_times(fns, repeat):
    """The median time of each of FNS over REPEAT rounds after a warm-up;
    each round runs every one of them once, in turn, so that a machine
    loaded for a while slows them alike."""
    for fn in fns:
        fn()
    ts = [[] for _ in fns]
    for _ in range(repeat):
        for fn, t in zip(fns, ts):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in ts]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(3)
    programs = [("logistic regression", LOGREG, LOGREG_GRAD), ("MLP", MLP, MLP_GRAD),
                ("attention", ATTN, ATTN_GRAD), ("Gaussian log-likelihood", GAUSS, GAUSS_GRAD)]
    rows = []
    bad = 0
    for name, fwd_src, grad_src in programs:
        D = data(name, rng, args.quick)
        if torch is not None:  # check before timing
            T = {k: torch.tensor(v, requires_grad=True) for k, v in D.items()}
            loss, wrt = torch_loss(name, T)
            loss.backward()
            got = tx.compile(fwd_src + grad_src)(**D)
            for w in wrt:
                want = T[w].grad.numpy()
                g = got["g" + w]
                if name.startswith("Gaussian"):
                    g, want = g + g.T, want + want.T
                if not np.allclose(g, want, rtol=1e-7, atol=1e-9 * (1 + np.abs(want).max())):
                    print("MISMATCH %s: gradient of %s" % (name, w))
                    bad += 1
        for threads in (1, 2):
            fwd = tx.compile(fwd_src, threads=threads)
            grd = tx.compile(fwd_src + grad_src, threads=threads)
            fns = [lambda: fwd(**D), lambda: grd(**D)]
            if torch is not None:  # every program: torch_loss has each
                torch.set_num_threads(threads)

                def step():
                    T = {k: torch.tensor(v, requires_grad=True) for k, v in D.items()}
                    loss, wrt = torch_loss(name, T)
                    torch.autograd.grad(loss, [T[w] for w in wrt])
                fns.append(step)
            ts = median_times(fns, args.repeat)
            tf, tg, tt = ts[0], ts[1], ts[2] if len(ts) > 2 else None
            fl = graph_flops(grd) / graph_flops(fwd)  # after the runs: extents known
            rows.append((name, threads, tf, tg, fl, tt))
    print("%-26s %3s %11s %11s %7s %7s %13s %9s" % ("program", "thr", "forward ms", "+grad ms", "ratio",
                                                    "flops", "torch f+b ms", "torch/tx"))
    for name, threads, tf, tg, fl, tt in rows:
        print("%-26s %3d %11.3f %11.3f %7.2f %7.2f %13s %9s" % (
            name, threads, tf * 1e3, tg * 1e3, tg / tf, fl, "%.3f" % (tt * 1e3) if tt else "-",
            "%.2f" % (tt / tg) if tt else "-"))
    print("ratio: time of loss and gradients over loss alone; flops: the same ratio of the optimised "
          "graphs' FLOP counts")
    for threads in (1, 2):
        r = hvp_row(rng, args.quick, args.repeat, threads)
        if r is None:
            bad += 1
            continue
        th, tt = r
        print("Hessian-vector product (grad of grad), %d thread%s: tx %.3f ms, torch double backward %s" % (
            threads, "" if threads == 1 else "s", th * 1e3, "%.3f ms" % (tt * 1e3) if tt else "-"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
