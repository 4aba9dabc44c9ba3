#!/bin/sh
# Strong scaling of txc run --mpi from 1 to 2 ranks on this machine
# (docs/mpi-scaling.md), with the intermediates distributed (the default)
# and with every tensor replicated (TX_MPI_DIST_MIN huge), and each
# rank's peak memory both ways. Each case runs REPEAT times, the rank counts
# alternating, and the best wall time of each is kept (the machine is
# shared: the best is the least disturbed). OpenBLAS runs one thread per
# rank, so 2 ranks use the 2 cores.
#
#   sh bench/mpi_scaling.sh [REPEAT]      (default 3)
set -e
TXC=${TXC:-build/txc}
REPEAT=${1:-3}
PY=${PYTHON:-/usr/bin/python3}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 TX_CACHE_DIR=$D/cache
cat > $D/chain.tx <<'TX'
in A[n,n], B[n,n], C[n,n];
tmp T[n,n], U[n,n];
out D[n,n];
T("i,j") = A("i,k") * B("k,j");
U("i,j") = exp(T("i,j") * 0.001) * 0.5 + T("i,j");
D("i,j") = U("i,k") * C("k,j");
TX
cat > $D/chol.tx <<'TX'
in A[n,n];
out L[n,n];
L("i,j") = cholesky(A("i,j"));
TX
$PY - "$D" <<'PYEOF'
import sys, numpy as np
d = sys.argv[1]; r = np.random.default_rng(1)
np.save(d + '/A.npy', r.standard_normal((2000, 2000))); np.save(d + '/B.npy', r.standard_normal((2000, 2000)))
m = r.standard_normal((2500, 2500)); np.save(d + '/S.npy', m @ m.T + 2500 * np.eye(2500))
o, v = 6, 70  # ccd.tx from files: 6 occupied indices, fewer than 4P on 2 ranks: rows of pairs ij
for n, s in {'eo': (o,), 'ev': (v,), 'Voooo': (o, o, o, o), 'Voovv': (o, o, v, v), 'Vovvo': (o, v, v, o),
             'Vvvvv': (v, v, v, v), 'T': (o, o, v, v)}.items():
    np.save(d + '/cc_%s.npy' % n, r.standard_normal(s) * 0.1 + {'eo': -2, 'ev': 2}.get(n, 0))
PYEOF
CC_IN="eo=$D/cc_eo.npy ev=$D/cc_ev.npy Voooo=$D/cc_Voooo.npy Voovv=$D/cc_Voovv.npy Vovvo=$D/cc_Vovvo.npy"
CC_IN="$CC_IN Vvvvv=$D/cc_Vvvvv.npy T=$D/cc_T.npy"
run() { # np args...: wall seconds of one run
    np=$1; shift
    s=$(date +%s.%N)
    mpirun --oversubscribe -np "$np" "$TXC" run --mpi -q "$@" >/dev/null
    e=$(date +%s.%N)
    echo "$s $e" | awk '{printf "%.3f", $2 - $1}'
}
case_() { # name args...
    name=$1; shift
    run 1 "$@" >/dev/null   # builds the object once (cached)
    b1=999999; b2=999999
    i=0
    while [ $i -lt "$REPEAT" ]; do
        t=$(run 1 "$@"); b1=$(echo "$t $b1" | awk '{print ($1 < $2) ? $1 : $2}')
        t=$(run 2 "$@"); b2=$(echo "$t $b2" | awk '{print ($1 < $2) ? $1 : $2}')
        i=$((i + 1))
    done
    echo "$name $b1 $b2" | awk '{printf "| %-40s | %8.3f | %8.3f | %5.2f |\n", $1, $2, $3, $2 / $3}'
}
echo "| case | 1 rank (s) | 2 ranks (s) | speed-up |"
echo "|---|---|---|---|"
case_ "matmul_2000^3_(inputs_by_rows)" examples/matmul.tx A=$D/A.npy B=$D/B.npy C=$D/C.npy
export TX_MPI_GEMM=pdgemm   # the grid, its operands moved by pdgemr2d
case_ "matmul_2000^3_(by_rows,_on_the_grid)" examples/matmul.tx A=$D/A.npy B=$D/B.npy C=$D/C.npy
unset TX_MPI_GEMM
case_ "cholesky_2500_(pdpotrf,_A_by_rows)" $D/chol.tx A=$D/S.npy L=$D/L.npy
case_ "ccd_o=12_v=60_(distributed)" examples/ccd.tx --random -D o=12 -D v=60 Tn=$D/Tn.npy R=$D/R.npy E=$D/E.npy
case_ "chain_n=2000_(distributed)" $D/chain.tx A=$D/A.npy B=$D/B.npy C=$D/B.npy D=$D/D.npy
# shellcheck disable=SC2086
case_ "ccd_o=6_v=70_(files,_rows_of_ij)" examples/ccd.tx $CC_IN Tn=$D/Tn.npy R=$D/R.npy E=$D/E.npy
export TX_MPI_DIST_MIN=1152921504606846976   # every tensor replicated (phase 2)
case_ "matmul_2000^3_(replicated,_pdgemm)" examples/matmul.tx A=$D/A.npy B=$D/B.npy C=$D/C.npy
case_ "cholesky_2500_(replicated)" $D/chol.tx A=$D/S.npy L=$D/L.npy
case_ "ccd_o=12_v=60_(replicated)" examples/ccd.tx --random -D o=12 -D v=60 Tn=$D/Tn.npy R=$D/R.npy E=$D/E.npy
case_ "chain_n=2000_(replicated)" $D/chain.tx A=$D/A.npy B=$D/B.npy C=$D/B.npy D=$D/D.npy
export TX_MPI_GEMM=rows   # the other plan: slabs of C's rows, no panels
case_ "matmul_2000^3_(rows)" examples/matmul.tx A=$D/A.npy B=$D/B.npy C=$D/C.npy
case_ "ccd_o=12_v=60_(rows)" examples/ccd.tx --random -D o=12 -D v=60 Tn=$D/Tn.npy R=$D/R.npy E=$D/E.npy
unset TX_MPI_GEMM TX_MPI_DIST_MIN
# memory: each rank's peak resident set (GNU time), the chain with its
# inputs and intermediates distributed and replicated, 2 ranks
echo
for dm in 1048576 1152921504606846976; do
    TX_MPI_DIST_MIN=$dm mpirun --oversubscribe -np 2 /usr/bin/time -f "%M" "$TXC" run --mpi -q $D/chain.tx \
        A=$D/A.npy B=$D/B.npy C=$D/B.npy D=$D/D.npy 2>&1 | tr '\n' ' ' |
        awk -v dm=$dm '{printf "    chain n=2000, 2 ranks, TX_MPI_DIST_MIN=%s: peak RSS per rank %s %s kB\n", dm, $1, $2}'
done
for dm in 1048576 1152921504606846976; do
    TX_MPI_DIST_MIN=$dm mpirun --oversubscribe -np 2 /usr/bin/time -f "%M" "$TXC" run --mpi -q $D/chol.tx \
        A=$D/S.npy L=$D/L.npy 2>&1 | tr '\n' ' ' |
        awk -v dm=$dm '{printf "    cholesky 2500, 2 ranks, TX_MPI_DIST_MIN=%s: peak RSS per rank %s %s kB\n", dm, $1, $2}'
done
for dm in 1048576 1152921504606846976; do
    # shellcheck disable=SC2086
    TX_MPI_DIST_MIN=$dm mpirun --oversubscribe -np 2 /usr/bin/time -f "%M" "$TXC" run --mpi -q examples/ccd.tx \
        $CC_IN Tn=$D/Tn.npy R=$D/R.npy E=$D/E.npy 2>&1 | tr '\n' ' ' |
        awk -v dm=$dm '{printf "    ccd o=6 v=70 from files, 2 ranks, TX_MPI_DIST_MIN=%s: peak RSS per rank %s %s kB\n", dm, $1, $2}'
done
# where the time of the 2-rank GEMM goes (rank 0's trace), both plans
echo
for plan in pdgemm rows; do
    TX_MPI_GEMM=$plan TX_MPI_TRACE=1 mpirun --oversubscribe -np 2 "$TXC" run --mpi -q examples/matmul.tx \
        A=$D/A.npy B=$D/B.npy C=$D/C.npy 2>&1 | grep '^tx_mpi' | sed 's/^/    /'
done
# the control: what two cores give two independent single-thread GEMMs
# (numpy, no MPI) right now, alone and side by side
cat > $D/mm.py <<'PYEOF'
import numpy as np, time
a = np.random.rand(2000, 2000); b = np.random.rand(2000, 1000)
t = time.time(); a @ b; a @ b
print('%.3f' % (time.time() - t))
PYEOF
one=$($PY $D/mm.py)
two=$( ($PY $D/mm.py; ) & $PY $D/mm.py; wait)
echo
echo "control, numpy 2000x1000x2000 twice, one thread: alone ${one} s; two processes at once: $(echo $two | tr '\n' ' ')s"
