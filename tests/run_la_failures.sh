#!/bin/sh
# Run-time failures of the linear-algebra calls (tx(5) §6, §9): a matrix that
# is not positive definite (cholesky) or is singular (inv, solve, pow with a
# negative power) is a result, not a crash:
#  - `txc run` exits 3;
#  - the message names the file and line of the call (FILE:LINE:) and the call,
#    and says what is wrong ("not positive definite", "singular");
#  - every output file that existed before the run is left untouched, also
#    outputs of statements that ran before the failing one;
#  - a '%' in the file's name reaches the message as it is.
# A control run with good matrices must succeed (exit 0) and replace the file.
# Prints "N passed, N failed"; exits non-zero if anything failed.
#
#   sh tests/run_la_failures.sh          TXC=path/to/txc tests another binary
TXC=${TXC:-build/txc}
PYTHON=${PYTHON:-/usr/bin/python3}
case $TXC in /*) ;; *) TXC=$(pwd)/$TXC ;; esac
ROOT=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

cd "$T" || exit 1

# The failing call is on line 6 of each program, after a statement that
# succeeds (so its output must not be written either).
cat > chol.tx <<'TX'
# cholesky of a matrix that may not be positive definite
in  A[n,n];
out B[n,n], L[n,n];
B("i,j") = 2 * A("i,j");

L("i,j") = cholesky(A("i,j"));
TX
cat > chol32.tx <<'TX'
# the same in f32
in  f32 A[n,n];
out f32 B[n,n], L[n,n];
B("i,j") = 2 * A("i,j");

L("i,j") = cholesky(A("i,j"));
TX
cat > cholexpr.tx <<'TX'
# cholesky inside a product: L·Lᵀ
in  A[n,n];
out B[n,n], C[n,n];
B("i,j") = 2 * A("i,j");

C("i,j") = cholesky(A("i,k")) * cholesky(A("j,k"));
TX
cat > inv.tx <<'TX'
# inverse of a matrix that may be singular
in  A[n,n];
out B[n,n], X[n,n];
B("i,j") = 2 * A("i,j");

X("i,j") = inv(A("i,j"));
TX
cat > solve.tx <<'TX'
# A·x = b for an A that may be singular
in  A[n,n], b[n];
out B[n,n], x[n];
B("i,j") = 2 * A("i,j");

x("j") = solve(A("i,j"), b("i"));
TX
cat > solvemat.tx <<'TX'
# A·X = B with a matrix right-hand side
in  A[n,n], R[n,m];
out B[n,n], X[n,m];
B("i,j") = 2 * A("i,j");

X("j,r") = solve(A("i,j"), R("i,r"));
TX
cat > powneg.tx <<'TX'
# a negative matrix power goes through the inverse
in  A[n,n];
out B[n,n], P[n,n];
B("i,j") = 2 * A("i,j");

P("i,j") = pow(A("i,j"), -2);
TX

"$PYTHON" - <<'PY' || exit 1
import numpy as np
# symmetric, leading minors 1, 1, -3: not positive definite at minor 3
A = np.array([[1.0, 0.0, 0.0, 0.0],
              [0.0, 1.0, 0.0, 0.0],
              [0.0, 0.0, -3.0, 0.0],
              [0.0, 0.0, 0.0, 1.0]])
A[2, 0] = A[0, 2] = 0.5
np.save('notpd.npy', A)
np.save('notpd32.npy', A.astype(np.float32))
# symmetric indefinite: leading minors 2, -9, ...
np.save('indef.npy', np.array([[2.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 3.0]]))
# exactly singular: row 1 is twice row 0 and column 3 is zero, so elimination
# leaves an exact zero pivot whatever the pivoting
S = np.array([[1.0, 2.0, 0.5, 0.0],
              [2.0, 4.0, 1.0, 0.0],
              [0.0, 1.0, 3.0, 0.0],
              [1.0, 0.0, 2.0, 0.0]])
np.save('sing.npy', S)
np.save('zero.npy', np.zeros((3, 3)))
np.save('b.npy', np.ones(4))
np.save('b3.npy', np.ones(3))
np.save('R.npy', np.ones((4, 2)))
m = np.array([[2.0, 0.5, 0.0, 0.1], [0.5, 3.0, 0.2, 0.0], [0.0, 0.2, 4.0, 0.3], [0.1, 0.0, 0.3, 5.0]])
np.save('spd.npy', m)
PY

precious() { for f in "$@"; do printf 'precious' > "$f"; done; }

# check NAME PROGRAM LINE CALL PHRASE ARGS...: exit 3, "PROGRAM:LINE" + CALL +
# PHRASE in the message, and the precious output files (out*.npy) untouched.
check() {
    name=$1 prog=$2 line=$3 call=$4 phrase=$5; shift 5
    precious out1.npy out2.npy
    "$TXC" run "$prog" "$@" >out.txt 2>err.txt
    rc=$?
    if [ $rc -ne 3 ]; then bad "$name: exit $rc, want 3: $(head -c 400 err.txt)"; return; fi
    if ! grep -q -- "$prog:$line" err.txt; then bad "$name: message lacks '$prog:$line': $(head -c 400 err.txt)"; return; fi
    if ! grep -q -- "$call" err.txt; then bad "$name: message does not name '$call': $(head -c 400 err.txt)"; return; fi
    if ! grep -qi -- "$phrase" err.txt; then bad "$name: message lacks '$phrase': $(head -c 400 err.txt)"; return; fi
    if [ "$(cat out1.npy)" != precious ] || [ "$(cat out2.npy)" != precious ]; then
        bad "$name: an output file was touched"; return
    fi
    ok
}

check cholesky-not-pd chol.tx 6 cholesky "not positive definite" A=notpd.npy B=out1.npy L=out2.npy
check cholesky-minor chol.tx 6 cholesky "minor 3" A=notpd.npy B=out1.npy L=out2.npy
check cholesky-indefinite chol.tx 6 cholesky "not positive definite" A=indef.npy B=out1.npy L=out2.npy
check cholesky-zero chol.tx 6 cholesky "not positive definite" A=zero.npy B=out1.npy L=out2.npy
check cholesky-f32 chol32.tx 6 cholesky "not positive definite" A=notpd32.npy B=out1.npy L=out2.npy
check cholesky-in-product cholexpr.tx 6 cholesky "not positive definite" A=notpd.npy B=out1.npy C=out2.npy
check inv-singular inv.tx 6 inv "singular" A=sing.npy B=out1.npy X=out2.npy
check inv-zero inv.tx 6 inv "singular" A=zero.npy B=out1.npy X=out2.npy
check solve-singular solve.tx 6 solve "singular" A=sing.npy b=b.npy B=out1.npy x=out2.npy
check solve-zero solve.tx 6 solve "singular" A=zero.npy b=b3.npy B=out1.npy x=out2.npy
check solve-matrix-rhs solvemat.tx 6 solve "singular" A=sing.npy R=R.npy B=out1.npy X=out2.npy
check pow-negative-singular powneg.tx 6 "pow\|inv" "singular" A=sing.npy B=out1.npy P=out2.npy
# a file name with '%' in it: the message is no format (it crashed txc, a
# segmentation fault, while the detail was put into the message)
cp chol.tx 'c%s%n%lld.tx'
check percent-in-file-name 'c%s%n%lld.tx' 6 cholesky "minor 3)" A=notpd.npy B=out1.npy L=out2.npy

# controls: the same programs on good matrices succeed and write their outputs
control() {
    name=$1 prog=$2; shift 2
    precious out1.npy out2.npy
    "$TXC" run "$prog" "$@" >out.txt 2>err.txt
    rc=$?
    if [ $rc -ne 0 ]; then bad "$name: exit $rc, want 0: $(head -c 400 err.txt)"; return; fi
    if [ "$(cat out1.npy)" = precious ] || [ "$(cat out2.npy)" = precious ]; then
        bad "$name: outputs were not written"; return
    fi
    ok
}
control cholesky-ok chol.tx A=spd.npy B=out1.npy L=out2.npy
control inv-ok inv.tx A=spd.npy B=out1.npy X=out2.npy
control solve-ok solve.tx A=spd.npy b=b.npy B=out1.npy x=out2.npy
control pow-ok powneg.tx A=spd.npy B=out1.npy P=out2.npy

cd "$ROOT" || exit 1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
