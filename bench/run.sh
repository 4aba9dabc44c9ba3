#!/bin/sh
# bench/run.sh — build what the benchmark needs under build/bench/ and run the
# suite twice, as separate processes, with 1 and 2 OpenBLAS threads; then
# combine both into bench/results.md; then the same for bench/peers.py
# (numpy and torch peers, stream bandwidth), appended to bench/results.md.  Run from anywhere: `sh bench/run.sh`.
# Extra arguments go to bench.py (e.g. --quick for a smoke test).
set -eu
cd "$(dirname "$0")/.."
PY=/usr/bin/python3

if [ ! -f build/libtensorexpr.so ]; then
    ${MAKE:-make} -s all
fi
mkdir -p build/bench
rm -f build/bench/results-t*.json build/bench/peers-t*.json
gcc -O2 -shared -fPIC -o build/bench/libelem.so bench/elementwise.c
gcc -O2 -fopenmp -o build/bench/stream bench/stream.c
gcc -O2 -Isrc -o build/bench/tx_loop bench/tx_loop.c -Lbuild -ltensorexpr -Wl,-rpath,"$(pwd)/build"

for t in 1 2; do
    echo "== OPENBLAS_NUM_THREADS=$t"
    OPENBLAS_NUM_THREADS=$t $PY bench/bench.py --threads $t "$@"
    OPENBLAS_NUM_THREADS=$t $PY bench/peers.py --threads $t "$@"
done
BENCH_COMMAND="sh bench/run.sh${*:+ $*}" $PY bench/bench.py --report
# the two compiled tiers side by side (bench/backends.md)
$PY bench/backends.py
$PY bench/peers.py --report
