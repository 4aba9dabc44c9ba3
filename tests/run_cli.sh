#!/bin/sh
# Command-line failure behaviour of `txc run` (tx(5), txc(1)):
#  - every bad run-time input gives exit 3 and a message naming the tensor
#    and the file, and leaves existing output files untouched;
#  - an allocation failure at any point (LD_PRELOAD tests/cli/failmalloc.c)
#    gives exit 3, never a crash, and also loses no output.
# Prints "N passed, N failed".
TXC=${TXC:-build/txc}
B=${B:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
case $TXC in /*) ;; *) TXC=$(pwd)/$TXC ;; esac
ROOT=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -shared -fPIC -O2 -o "$T/failmalloc.so" tests/cli/failmalloc.c -ldl || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

cd "$T" || exit 1
cat > mm.tx <<'TX'
in  A[n,k], B[k,m];
out C[n,m];
C("i,j") = A("i,k") * B("k,j");
TX
"$PYTHON" - <<'PY'
import numpy as np
np.save('A.npy', np.ones((4, 3))); np.save('B.npy', np.ones((3, 5)))
np.save('A3.npy', np.ones((2, 3, 4))); np.save('Bk.npy', np.ones((7, 5)))
np.save('Abe.npy', np.ones((4, 3), dtype='>f8')); np.save('Ai.npy', np.ones((4, 3), dtype='<i8'))
np.save('Ab.npy', np.ones((4, 3), dtype='|b1'))
np.save('Ac.npy', np.ones((4, 3)) + 1j); np.save('Acbe.npy', np.ones((4, 3), dtype='>c16'))
open('trunc.npy', 'wb').write(open('A.npy', 'rb').read()[:100])
open('text.npy', 'w').write('not an array\n')
open('empty.npy', 'w').close()
open('C.npy', 'w').write('precious')
PY

# case: args... -- expected phrase
check() {
    name=$1 phrase=$2; shift 2
    "$TXC" run mm.tx "$@" >out.txt 2>err.txt
    rc=$?
    if [ $rc -ne 3 ]; then bad "$name: exit $rc, want 3: $(cat err.txt)"; return; fi
    if ! grep -q -- "$phrase" err.txt; then bad "$name: message lacks '$phrase': $(cat err.txt)"; return; fi
    if [ "$(cat C.npy)" != precious ]; then bad "$name: C.npy was touched"; return; fi
    ok
}
check truncated "'A'.*trunc.npy.*truncated" A=trunc.npy B=B.npy C=C.npy
check not-npy "'A'.*text.npy.*not a .npy" A=text.npy B=B.npy C=C.npy
check empty "'A'.*empty.npy" A=empty.npy B=B.npy C=C.npy
check big-endian "'A'.*Abe.npy.*big-endian" A=Abe.npy B=B.npy C=C.npy
check int-dtype "'A'.*Ai.npy.*<i8" A=Ai.npy B=B.npy C=C.npy
check bool-dtype "'A'.*Ab.npy.*|b1" A=Ab.npy B=B.npy C=C.npy
check wrong-rank "'A'.*A3.npy.*3 dimensions" A=A3.npy B=B.npy C=C.npy
check inconsistent "dim 'k'" A=A.npy B=Bk.npy C=C.npy
check missing-file "'A'.*nothere.npy" A=nothere.npy B=B.npy C=C.npy
check missing-binding "'B' is not bound" A=A.npy C=C.npy
check set-dim-conflict "dim 'n'" A=A.npy B=B.npy C=C.npy -D n=9
check complex-into-real "'A'.*Ac.npy is complex ('<c16'), but 'A' is real (f64)" A=Ac.npy B=B.npy C=C.npy
check complex-big-endian "'A'.*Acbe.npy.*'>c16' (big-endian)" A=Acbe.npy B=B.npy C=C.npy
check overflow "overflow\|too large" --random -D n=4611686018427387904 -D k=4 -D m=4 C=C.npy

# -D: txc run and txc graph read it alike (graph took an extent past the
# range of long long as the largest one; run refused it)
for cmd in run graph; do
    for d in n=99999999999999999999999 n=-1 n=4x n= q=5; do
        "$TXC" $cmd mm.tx -D "$d" >out.txt 2>err.txt
        rc=$?
        if [ $rc -ne 2 ]; then bad "$cmd -D $d: exit $rc, want 2: $(cat err.txt)"
        elif ! grep -q -- "-D $d: \(the extent must be a non-negative integer\|the program has no dim 'q'\)" err.txt; then
            bad "$cmd -D $d: $(head -1 err.txt)"
        else ok; fi
    done
done

# complex tensors: a real file into a c128 one (imaginary parts 0), a c64
# file into a c128 one, outputs as <c16 and <c8; --random fills both parts
cat > cx.tx <<'TX'
in c128 Z[n,k]; in c64 W[k,m];
out c128 C[n,m]; out c64 D[n,m];
C("i,j") = Z("i,k") * W("k,j");
D("i,j") = conj(C("i,j"));
TX
"$PYTHON" -c "import numpy as np; np.save('W.npy', (np.arange(15).reshape(3, 5) * (1 - 2j)).astype(np.complex64))"
if "$TXC" run cx.tx Z=A.npy W=W.npy C=Cx.npy D=Dx.npy 2>err.txt && "$PYTHON" -c "
import numpy as np
C, D, W = np.load('Cx.npy'), np.load('Dx.npy'), np.load('W.npy')
assert C.dtype == np.complex128 and D.dtype == np.complex64, (C.dtype, D.dtype)
assert np.array_equal(C, np.ones((4, 3)) @ W.astype(np.complex128)) and np.array_equal(D, np.conj(C).astype(np.complex64))
"; then ok; else bad "complex run: $(cat err.txt)"; fi
if "$TXC" run cx.tx --random -D n=2 -D k=2 -D m=2 >out.txt 2>err.txt && grep -q 'C = array of shape (2, 2), c128: .*[0-9][+-][0-9.]*j' out.txt &&
   ! grep -q '[+-]0j' out.txt; then ok; else bad "complex --random: $(cat out.txt err.txt)"; fi

# the MPI target computes complex values: a c128 GEMM goes to pzgemm (run under mpirun by tests/run_mpi.py)
"$TXC" cx.tx --target mpi -o cxm.c >out.txt 2>err.txt
rc=$?
if [ $rc -eq 0 ] && grep -q "tx_mpi_zgemm(tx_comm, CblasRowMajor" cxm.c; then ok; else
    bad "complex under --target mpi: exit $rc: $(cat err.txt)"; fi

# an index into a mode whose extent is a dim expression: checked when the
# program runs, against the expression's value (it was once taken for a
# constant: F("1") of F[n+1] rejected, B("7") of B[n-1] read past B)
cat > chip.tx <<'TX'
in F[n+1], x[n], B[n-1];
out r, s;
r = F("1") + x("i");
s = B("7");
TX
"$PYTHON" -c "import numpy as np; np.save('F.npy', np.array([1., 2., 3.])); np.save('x.npy', np.array([5., 6.])); np.save('Bs.npy', np.array([1.]))
np.save('Bl.npy', np.arange(8.))"
"$TXC" run chip.tx F=F.npy x=x.npy B=Bs.npy >out.txt 2>err.txt
rc=$?
if [ $rc -eq 3 ] && grep -q "chip.tx:4:8: index 7 is out of range for mode 0 of 'B'" err.txt; then ok; else
    bad "chip past a dim expression's extent: exit $rc: $(cat out.txt err.txt)"; fi
"$PYTHON" -c "import numpy as np; np.save('F9.npy', np.arange(10.)); np.save('x9.npy', np.ones(9))"
"$TXC" run chip.tx F=F9.npy x=x9.npy B=Bl.npy >out.txt 2>err.txt
rc=$?
if [ $rc -eq 0 ] && grep -q "^r = 10 " out.txt && grep -q "^s = 7 " out.txt; then ok; else
    bad "chips within dim expressions' extents: exit $rc: $(cat out.txt err.txt)"; fi

# the header documents those extents as written (they printed as A[0,1], B[2])
"$TXC" chip.tx -o chip.c --header chip.h 2>err.txt
if grep -q "in f64 F\[n + 1\], row-major" chip.h && grep -q "in f64 B\[n - 1\], row-major" chip.h; then ok; else
    bad "header extents: $(grep row-major chip.h) $(cat err.txt)"; fi

# --threads: a bad count is a usage error; 1 and 2 threads write the same bytes
"$TXC" run mm.tx --random --threads 0 >out.txt 2>err.txt
rc=$?
if [ $rc -eq 2 ] && grep -q -- '--threads' err.txt; then ok; else bad "--threads 0: exit $rc: $(cat err.txt)"; fi
for t in 1 2; do
    TX_NUM_THREADS=3 "$TXC" run "$ROOT/tests/num/par_kernels.tx" --random -D n=301 -D m=257 --threads $t \
        P=P$t.npy C=C$t.npy T=T$t.npy s=s$t.npy cm=cm$t.npy >/dev/null 2>err.txt || bad "--threads $t: $(cat err.txt)"
done
same=1
for o in P C T s cm; do cmp -s $o''1.npy $o''2.npy || same=0; done
if [ $same = 1 ]; then ok; else bad "--threads 1 and 2 wrote different outputs"; fi

# --profile: each statement, and its calls with their rates
"$TXC" run mm.tx --random -D n=64 -D k=64 -D m=64 -q --profile >out.txt 2>err.txt
if grep -q 'statement 1 (line 3)' err.txt && grep -q 'gemm (contract).*GFLOP/s' err.txt &&
   grep -q 'profile of one run' err.txt && [ ! -s out.txt ]; then ok; else bad "--profile: $(cat err.txt)"; fi

# progress on a terminal: shown for a long run, erased at the end; never
# into a pipe, never with -q (script(1) gives txc a terminal). The run
# must outlast the second tick (0.26 s) whatever the compile takes: n=400
# runs for about 1 s (n=220 took 0.16 s on an AVX2 EPYC, and under ASan
# the compile outlasted the first tick, so no statement was ever shown)
cat > slow.tx <<'TX'
in A[n,n];
out D[n,n];
D("i,j") = tanh(A("i,k") * A("k,j")) * sqrt(abs(A("i,k")) + 1);
TX
if command -v script >/dev/null; then
    TXC_PROGRESS_AFTER=0.01 script -q -c "$TXC run slow.tx --random -D n=400 D=D.npy" /dev/null >tty.txt 2>&1
    if grep -q 'statement 1 of 1 (line 3)' tty.txt && grep -q "$(printf '\r\033\[K')" tty.txt; then ok
    else bad "progress on a terminal: $(cat -v tty.txt | head -c 300)"; fi
    TXC_PROGRESS_AFTER=0.02 script -q -c "$TXC run slow.tx --random -D n=150 -q D=D.npy" /dev/null >tty.txt 2>&1
    if grep -q 'statement' tty.txt; then bad "progress with -q: $(cat -v tty.txt | head -c 300)"; else ok; fi
fi
TXC_PROGRESS_AFTER=0.02 "$TXC" run slow.tx --random -D n=150 D=D.npy >out.txt 2>err.txt
if grep -q 'statement' err.txt; then bad "progress into a file: $(cat -v err.txt | head -c 300)"; else ok; fi

# allocation failures: sweep until the run succeeds (not under ASan,
# whose allocator must come first)
if [ "${SAN:-0}" = 1 ]; then
    echo "$pass passed, $fail failed"
    [ $fail = 0 ]
    exit
fi
n=0
while [ $n -lt 3000 ]; do
    TX_FAILMALLOC=$n LD_PRELOAD="$T/failmalloc.so" "$TXC" run mm.tx A=A.npy B=B.npy C=C.npy >/dev/null 2>err.txt
    rc=$?
    if [ $rc -eq 0 ]; then break; fi
    if [ $rc -eq 3 ] && [ "$(cat C.npy)" = precious ]; then :
    elif [ $rc -eq 1 ] && grep -q "tcc: error: memory full" err.txt; then : # libtcc exits on OOM itself
    else bad "allocation failure $n: exit $rc, C.npy $(head -c 8 C.npy): $(head -c 200 err.txt)"; fi
    n=$((n + 1))
done
if [ $rc -eq 0 ]; then ok; echo "(allocation failures injected at each of $n allocations)"; else bad "run never succeeded"; fi
# the same through a program whose store goes in flat blocks of short rows
# (emit_blocks.c flat_rows_begin: a failed allocation there crashed the
# emitter) and extents given by -D (a failed one was told as a bad extent)
cat > flat.tx <<'TX'
in V[a,b,i,j], W[a,b,i,j];
inout R[a,b,i,j];
R("a,b,i,j") += V("a,b,i,j") * 2 + W("a,b,i,j");
TX
n=0
while [ $n -lt 3000 ]; do
    TX_FAILMALLOC=$n LD_PRELOAD="$T/failmalloc.so" "$TXC" run flat.tx --random -D a=5 -D b=4 -D i=7 -D j=3 -q \
        >/dev/null 2>err.txt
    rc=$?
    if [ $rc -eq 0 ]; then break; fi
    if [ $rc -eq 3 ]; then :
    elif [ $rc -eq 1 ] && grep -q "tcc: error: memory full" err.txt; then :
    else bad "flat rows, allocation failure $n: exit $rc: $(head -c 200 err.txt)"; fi
    n=$((n + 1))
done
if [ $rc -eq 0 ]; then ok; echo "(flat rows: allocation failures injected at each of $n allocations)"
else bad "flat rows: run never succeeded"; fi
cd "$ROOT" || exit 1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
