#!/bin/sh
# The compiler's stages through txc (txc(1)):
#  - `txc graph --after PASS`: a name that is no stage, or a pass the level
#    does not run, is a usage error (exit 2) that lists the stages;
#  - an internal error (forced with the testing hook TX_DEBUG_FAIL_AFTER_PASS,
#    tensorexpr(3)) is reported as "internal error: ... (FILE:LINE)" with
#    exit 3 by every command, never a crash (SIGABRT would be exit 134),
#    and no output file is touched.
# Prints "N passed, N failed".
TXC=${TXC:-build/txc}
case $TXC in /*) ;; *) TXC=$(pwd)/$TXC ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

cd "$T" || exit 1
cat > mm.tx <<'TX'
in  A[n,k], B[k,m];
out C[n,m];
C("i,j") = A("i,k") * B("k,j");
TX

# case: want-exit phrase command...
expect() {
    name=$1 want=$2 phrase=$3; shift 3
    "$@" >out.txt 2>err.txt
    rc=$?
    if [ $rc -ne "$want" ]; then bad "$name: exit $rc, want $want: $(cat err.txt)"; return; fi
    if ! grep -q -- "$phrase" err.txt; then bad "$name: stderr lacks '$phrase': $(cat err.txt)"; return; fi
    ok
}
expect after-unknown 2 "unknown pass 'fusion'; the stages are lower, delta, cse, fold, dce, order, share, factor, blas, split, fuse (or all)" \
    "$TXC" graph mm.tx --after fusion
expect after-missing 2 "--after needs a pass name" "$TXC" graph mm.tx --after
expect after-level 2 "pass 'blas' does not run at -O1" "$TXC" graph -O1 mm.tx --after blas
expect after-O0 2 "pass 'cse' does not run at -O0" "$TXC" graph -O0 --after=cse mm.tx
"$TXC" graph -O0 mm.tx --after delta >out.txt 2>err.txt && [ "$(head -1 out.txt)" = "# after pass delta" ] \
    && ok || bad "after-delta -O0 (delta runs at every level): $(cat err.txt)"
"$TXC" graph mm.tx --after lower >out.txt 2>err.txt && [ "$(head -1 out.txt)" = "# after lowering" ] \
    && ok || bad "after-lower: $(cat err.txt)"
n=$("$TXC" graph -O1 mm.tx --after all | grep -c '^# after')
[ "$n" = 7 ] && ok || bad "after-all -O1: $n listings, want 7 (lowering, delta, cse, fold, dce, split, fuse)"

# internal errors: every command reports them and exits 3
python3=${PYTHON:-/usr/bin/python3}
"$python3" -c "import numpy as np; np.save('A.npy', np.ones((2, 3))); np.save('B.npy', np.ones((3, 2)))"
echo precious > C.npy
for stage in lower cse fuse; do
    what="internal error: graph_check after .*$stage.*(src/pipeline.c:[0-9]*)"
    TX_DEBUG_FAIL_AFTER_PASS=$stage expect "internal-graph-$stage" 3 "$what" "$TXC" graph mm.tx
    TX_DEBUG_FAIL_AFTER_PASS=$stage expect "internal-check-$stage" 3 "$what" "$TXC" check mm.tx
    TX_DEBUG_FAIL_AFTER_PASS=$stage expect "internal-emit-$stage" 3 "$what" "$TXC" mm.tx -o out.c
    TX_DEBUG_FAIL_AFTER_PASS=$stage expect "internal-run-$stage" 3 "txc: mm.tx: $what" \
        "$TXC" run mm.tx A=A.npy B=B.npy C=C.npy
done
[ "$(cat C.npy)" = precious ] && [ ! -e out.c ] && ok || bad "a failed compilation touched its outputs"
TX_DEBUG_FAIL_AFTER_PASS=blas "$TXC" run -O1 mm.tx A=A.npy B=B.npy C=C.npy >/dev/null 2>err.txt \
    && ok || bad "a pass the level does not run failed: $(cat err.txt)"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
