#!/usr/bin/python3
"""circuit.py — a quantum-circuit-style tensor network as a .tx program.

A brickwork circuit on Q qubits, DEPTH layers, every mode of extent 2: real
f64 gates (orthogonal), or with --complex c128 ones (unitary gates, phase
gates on the diagonals), as quantum circuits have. Each wire segment is one
label.
A layer applies a one-qubit gate to every qubit, then two-qubit gates to
neighbouring pairs (alternating offsets). Half of the gates, at random, are
diagonal: a diagonal one-qubit gate is a vector on the wire's current label
and a diagonal two-qubit gate (a CZ) a matrix on the two current labels, so
they add no label and make hyperedges (a label in more than two tensors),
as real circuit simulators do; the others are 2- and 4-mode tensors that
start new wire segments. Every qubit starts in a state vector; all but the
last OPEN end on a bra vector, and the open ones are the output's modes.

    /usr/bin/python3 tests/circuit.py [--qubits 10] [--depth 20] [--open 4]
                                      [--seed 1] [--complex] > circuit.tx

run_order.py imports network() and values(); examples/circuit.tx is this
script's output with the default arguments, examples/circuit_complex.tx
with --complex --qubits 14 --depth 14 --open 4 --seed 3.
"""
import random
import sys


def network(qubits=10, depth=20, nopen=4, seed=1):
    """([(name, [labels])], [output labels]) of one circuit."""
    rng = random.Random(seed)
    t = [0] * qubits
    lab = lambda q: "q%dt%d" % (q, t[q])
    ops = []

    def add(kind, labels):
        ops.append(("%s%d" % (kind, len(ops)), labels))

    for q in range(qubits):
        add("psi", [lab(q)])
    for layer in range(depth):
        for q in range(qubits):
            if rng.random() < 0.5:
                add("d", [lab(q)])
            else:
                old = lab(q)
                t[q] += 1
                add("u", [lab(q), old])
        for q in range(layer % 2, qubits - 1, 2):
            if rng.random() < 0.5:
                add("cz", [lab(q), lab(q + 1)])
            else:
                old = [lab(q), lab(q + 1)]
                t[q] += 1
                t[q + 1] += 1
                add("w", [lab(q), lab(q + 1)] + old)
    for q in range(qubits - nopen):
        add("bra", [lab(q)])
    return ops, [lab(q) for q in range(qubits - nopen, qubits)]


def values(ops, seed=2, complex_=False):
    """Gate tensors that keep norms: real, orthogonal matrices, sign vectors
    for diagonals, unit state vectors; complex (complex_), unitary matrices,
    phases e^(i theta) for diagonals, unit complex state vectors."""
    import numpy as np
    rng = np.random.default_rng(seed)
    gauss = (lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)) if complex_ else \
        (lambda *s: rng.standard_normal(s))
    vals = {}
    for name, labels in ops:
        kind = name.rstrip("0123456789")
        if kind in ("psi", "bra"):
            x = gauss(2)
            vals[name] = x / np.linalg.norm(x)
        elif kind in ("d", "cz") and complex_:
            vals[name] = np.exp(1j * rng.uniform(-np.pi, np.pi, (2,) * len(labels)))
        elif kind in ("d", "cz"):
            vals[name] = rng.choice([-1.0, 1.0], size=(2,) * len(labels)) * rng.uniform(0.8, 1.2, (2,) * len(labels))
        else:
            n = 2 ** (len(labels) // 2)
            qm, _ = np.linalg.qr(gauss(n, n))
            vals[name] = qm.reshape((2,) * len(labels))
    return vals


def program(ops, out, comment="", dtype=""):
    """The .tx program; DTYPE "c128 " declares every tensor complex."""
    lines = [comment] if comment else []
    lines.append("dim two = 2;")
    for k in range(0, len(ops), 8):
        lines.append("in " + dtype + ", ".join("%s[%s]" % (nm, ",".join(["two"] * len(ls)))
                                      for nm, ls in ops[k:k + 8]) + ";")
    lines.append("out %samp[%s];" % (dtype, ",".join(["two"] * len(out))))
    lines.append('amp("%s") =' % ",".join(out))
    terms = ['%s("%s")' % (nm, ",".join(ls)) for nm, ls in ops]
    for k in range(0, len(terms), 6):
        lines.append("    " + ("* " if k else "  ") + " * ".join(terms[k:k + 6]))
    lines[-1] += ";"
    return "\n".join(lines) + "\n"


def main():
    args = dict(qubits=10, depth=20, nopen=4, seed=1)
    a = sys.argv[1:]
    cx = "--complex" in a
    a = [x for x in a if x != "--complex"]
    for k in range(0, len(a), 2):
        args[{"--qubits": "qubits", "--depth": "depth", "--open": "nopen", "--seed": "seed"}[a[k]]] = int(a[k + 1])
    ops, out = network(**args)
    nlabels = len({l for _, ls in ops for l in ls})
    comment = ("# circuit%s.tx — a quantum-circuit-style tensor network: %d qubits, %d layers,\n"
               "# %d %stensors over %d labels of extent 2, one statement. Written by\n"
               "#   /usr/bin/python3 tests/circuit.py --qubits %d --depth %d --open %d --seed %d%s\n"
               "#\n"
               "#   txc run examples/circuit%s.tx --random\n"
               "#   txc graph examples/circuit%s.tx     the order: %d pairwise contractions\n"
               "#\n"
               "# The product is one n-ary contraction as written; at -O2 the contraction\n"
               "# order splits it into pairwise contractions (greedy and random greedy beyond\n"
               "# 12 factors, txc(1)), none with more than 16 modes, most of them small\n"
               "# matrix products, instead of one loop nest over all %d labels. A one-qubit\n"
               "# gate u(new,old) or w(new,new,old,old) starts wire segments; d (a vector)\n"
               "# and cz (a matrix) are diagonal gates on the current segments, so their\n"
               "# labels occur in more than two factors. psi: initial states; bra: the\n"
               "# final states of all but the last %d qubits, whose segments are amp's modes."
               % ("_complex" if cx else "", args["qubits"], args["depth"], len(ops), "c128 " if cx else "", nlabels,
                  args["qubits"], args["depth"], args["nopen"], args["seed"], " --complex" if cx else "",
                  "_complex" if cx else "", "_complex" if cx else "", len(ops) - 1, nlabels, args["nopen"]))
    if cx:
        comment += ("\n# Complex gates are unitary 2x2 and 4x4 matrices and phase gates; the\n"
                    "# pairwise contractions are complex (loops, or zgemm where they are large\n"
                    "# enough), and amp holds the amplitudes <bra|C|psi> of the open qubits.")
    sys.stdout.write(program(ops, out, comment, "c128 " if cx else ""))


if __name__ == "__main__":
    main()
