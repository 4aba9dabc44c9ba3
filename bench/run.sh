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

# Debian 12's OpenBLAS (0.3.21) takes an x86 CPU newer than it knows for
# a Prescott and runs its slowest kernels: on an Intel model 207 (a 2-core
# AVX-512 Xeon VM) a 1024^3 dgemm ran at 15 GFLOP/s, 40-50 with SkylakeX's
# kernels. A user of such a machine sets OPENBLAS_CORETYPE (txc(1)); so do
# we, unless it is set, for every contender alike (numpy and torch load the
# same libopenblas). Each results table's header shows the core in use.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
    core=$($PY -c "import ctypes; b = ctypes.CDLL('libopenblas.so.0'); b.openblas_get_corename.restype = ctypes.c_char_p; print(b.openblas_get_corename().decode())" 2>/dev/null || true)
    if [ "$core" = "Prescott" ] || [ "$core" = "prescott" ]; then
        if grep -q avx512f /proc/cpuinfo; then OPENBLAS_CORETYPE=SkylakeX
        elif grep -q avx2 /proc/cpuinfo; then OPENBLAS_CORETYPE=Haswell; fi
        if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
            export OPENBLAS_CORETYPE
            echo "run.sh: OpenBLAS took this CPU for a Prescott; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
        fi
    fi
fi

# After a threaded call OpenBLAS 0.3.21's idle threads poll for their next
# job for 2^28 processor cycles (a tenth of a second here) before they
# sleep, and the contender timed next shares a core with one of them. On
# this 2-core VM, attention (h=8 s=512 d=64) through tensorexpr on two
# threads took 24 ms when torch's matmul had run up to 50 ms before it,
# 13 ms with the pollers asleep (one CPU stayed busy through a 100 ms
# sleep after torch's call, none with OPENBLAS_THREAD_TIMEOUT=4). The
# rounds interleave the contenders 10 ms apart, so every contender's
# OpenBLAS threads sleep as soon as they are idle, unless set: each is
# then timed on its own cores, not on the last one's leftovers.
if [ -z "${OPENBLAS_THREAD_TIMEOUT:-}" ]; then
    OPENBLAS_THREAD_TIMEOUT=4
    export OPENBLAS_THREAD_TIMEOUT
fi

for t in 1 2; do
    echo "== OPENBLAS_NUM_THREADS=$t"
    OPENBLAS_NUM_THREADS=$t $PY bench/bench.py --threads $t "$@"
    OPENBLAS_NUM_THREADS=$t $PY bench/peers.py --threads $t "$@"
done
BENCH_COMMAND="sh bench/run.sh${*:+ $*}" $PY bench/bench.py --report
# the two compiled tiers side by side (bench/backends.md)
$PY bench/backends.py
$PY bench/peers.py --report
