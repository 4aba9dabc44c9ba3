#!/usr/bin/python3
"""grad_processes.py — the MLP or attention gradient of bench_grad.py timed in a
process of its own, tensorexpr or torch alone (so neither library shares a process
with the other): median of 25 calls after 3 warm-ups.

    /usr/bin/python3 bench/grad_processes.py tx|torch MLP|attention THREADS
"""
import os
import statistics
import sys
import time

import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'python'))
which, name, th = sys.argv[1], sys.argv[2], int(sys.argv[3])
if which == 'tx': sys.modules['torch'] = None  # keep torch out of the tx process
import bench_grad as bg
rng = np.random.default_rng(3)
D = bg.data(name, rng, False)
progs = {"MLP": (bg.MLP, bg.MLP_GRAD), "attention": (bg.ATTN, bg.ATTN_GRAD)}
if which == 'tx':
    import tensorexpr as tx
    g = tx.compile(progs[name][0] + progs[name][1], threads=th)
    fn = lambda: g(**D)
else:
    import torch
    torch.set_num_threads(th)
    def fn():
        T = {k: torch.tensor(v, requires_grad=True) for k, v in D.items()}
        loss, wrt = bg.torch_loss(name, T)
        torch.autograd.grad(loss, [T[w] for w in wrt])
for _ in range(3): fn()
t = []
for _ in range(25):
    t0 = time.perf_counter(); fn(); t.append(time.perf_counter() - t0)
print("%s %s %d threads: %.3f ms" % (which, name, th, statistics.median(t) * 1e3))
