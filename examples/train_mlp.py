#!/usr/bin/env python3
"""Trains examples/train_mlp.tx by gradient descent: the program does one
step (forward, grad, update of its inout weights); this script only makes
the data and calls it N times.

    PYTHONPATH=python /usr/bin/python3 examples/train_mlp.py [STEPS]
"""
import os
import sys

import numpy as np

import tensorexpr as tx


def spirals(n_per_class, classes, rng):
    X, y = [], []
    for c in range(classes):
        r = np.linspace(0.05, 1, n_per_class)
        t = np.linspace(c * 4, (c + 1) * 4, n_per_class) + rng.normal(scale=0.2, size=n_per_class)
        X.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        y.append(np.full(n_per_class, c))
    return np.concatenate(X), np.concatenate(y)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = np.random.default_rng(0)
    X, labels = spirals(100, 3, rng)
    Y = np.eye(3)[labels]
    h = 64
    W = {"W1": rng.normal(scale=1.0, size=(2, h)), "b1": np.zeros(h),
         "W2": rng.normal(scale=0.1, size=(h, 3)), "b2": np.zeros(3)}
    here = os.path.dirname(os.path.abspath(__file__))
    step = tx.load(os.path.join(here, "train_mlp.tx"))
    lr = np.array(1.0)
    for k in range(steps + 1):
        loss = float(step(X=X, Y=Y, lr=lr, **W)["loss"])  # W updated in place
        if k % (steps // 10 or 1) == 0:
            print("step %5d  loss %.4f" % (k, loss))
    H = np.tanh(X @ W["W1"] + W["b1"])
    acc = ((H @ W["W2"] + W["b2"]).argmax(1) == labels).mean()
    print("training accuracy %.3f" % acc)
    return 0 if acc > 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
