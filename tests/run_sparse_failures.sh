#!/bin/sh
# Bad sparse maps (tx(5) §7, txc(1) `run`):
#  - every bad mask given to `txc run` (wrong rank, wrong shape, wrong dtype,
#    big-endian, truncated, not a .npy file, missing file) and a missing map
#    binding gives exit 3 and a message naming the map, and leaves the
#    existing output file untouched;
#  - good masks (bool, f8, f4, Fortran order, --random) run and agree;
#  - the standalone C function (txc FILE.tx --no-blas) refuses a bad
#    tx_sparse_map with a non-zero code whose prog_error() names the map,
#    and writes no output.
# Prints "N passed, N failed".
TXC=${TXC:-build/txc}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
case $TXC in /*) ;; *) TXC=$(pwd)/$TXC ;; esac
ROOT=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

cd "$T" || exit 1
cat > mm.tx <<'TX'
sparse L : "i" -> "k";
in  A[n,k], B[k,m];
out C[n,m];
C("i,j") = A("i,k") * B("k,j");
TX
cat > pair.tx <<'TX'
sparse Pair : "i,j" -> "a,b";
in  T[o,o,v,v], K[o,o,v,v];
out E;
E = T("i,j,a,b") * K("i,j,a,b");
TX
"$PYTHON" - <<'PY' || exit 1
import numpy as np
r = np.random.default_rng(5)
np.save('A.npy', r.uniform(-1, 1, (4, 3))); np.save('B.npy', r.uniform(-1, 1, (3, 5)))
m = r.uniform(size=(4, 3)) > 0.5
np.save('L.npy', m)                                   # |b1
np.save('Lf8.npy', np.where(m, 3.5, 0.0))            # <f8, non-zero = present
np.save('Lf4.npy', m.astype('<f4'))
np.save('LF.npy', np.asfortranarray(m.astype('<f8')))  # Fortran order
np.save('L3.npy', np.ones((4, 3, 1), dtype=bool))
np.save('L1.npy', np.ones(12, dtype=bool))
np.save('L0.npy', np.array(True))
np.save('Lt.npy', np.ones((3, 4), dtype=bool))       # transposed
np.save('L5.npy', np.ones((5, 3), dtype=bool))
np.save('Li8.npy', np.ones((4, 3), dtype='<i8'))
np.save('Li1.npy', np.ones((4, 3), dtype='|i1'))
np.save('Lbe.npy', np.ones((4, 3), dtype='>f8'))
open('Ltrunc.npy', 'wb').write(open('Lf8.npy', 'rb').read()[:-5])
open('Ltext.npy', 'w').write('not an array\n')
open('C.npy', 'w').write('precious')
np.save('T.npy', r.uniform(-1, 1, (3, 3, 4, 4))); np.save('K.npy', r.uniform(-1, 1, (3, 3, 4, 4)))
np.save('P.npy', r.uniform(size=(3, 3, 4, 4)) > 0.8)
np.save('P3.npy', np.ones((3, 4, 4), dtype=bool))
np.save('Pt.npy', np.ones((4, 4, 3, 3), dtype=bool))
open('E.npy', 'w').write('precious')
PY

# check NAME PHRASE PROGRAM OUT ARGS...: exit 3, stderr matches PHRASE, OUT untouched
check() {
    name=$1 phrase=$2 prog=$3 out=$4; shift 4
    "$TXC" run "$prog" "$@" >out.txt 2>err.txt
    rc=$?
    if [ $rc -ne 3 ]; then bad "$name: exit $rc, want 3: $(cat err.txt)"; return; fi
    if ! grep -q -- "$phrase" err.txt; then bad "$name: message lacks '$phrase': $(cat err.txt)"; return; fi
    if [ "$(cat "$out")" != precious ]; then bad "$name: $out was touched"; return; fi
    ok
}
MM="mm.tx C.npy A=A.npy B=B.npy C=C.npy"
# shellcheck disable=SC2086
{
check wrong-rank-3 "map 'L'.*L3.npy.*shape" $MM L=L3.npy
check wrong-rank-1 "map 'L'.*L1.npy.*shape" $MM L=L1.npy
check wrong-rank-0 "map 'L'.*L0.npy" $MM L=L0.npy
check wrong-shape-transposed "map 'L'.*Lt.npy.*(4, 3)" $MM L=Lt.npy
check wrong-shape-rows "map 'L'.*L5.npy.*(4, 3)" $MM L=L5.npy
check wrong-shape-vs-D "map 'L'\|dim 'n'" $MM L=L5.npy -D n=5
check dtype-i8 "map 'L'.*Li8.npy.*<i8" $MM L=Li8.npy
check dtype-i1 "map 'L'.*Li1.npy.*i1" $MM L=Li1.npy
check big-endian "map 'L'.*Lbe.npy.*>f8" $MM L=Lbe.npy
check truncated "map 'L'.*Ltrunc.npy.*truncated" $MM L=Ltrunc.npy
check not-npy "map 'L'.*Ltext.npy" $MM L=Ltext.npy
check missing-file "map 'L'.*nothere.npy" $MM L=nothere.npy
check missing-binding "map 'L'.*not bound" $MM
check pair-wrong-rank "map 'Pair'.*P3.npy" pair.tx E.npy T=T.npy K=K.npy E=E.npy Pair=P3.npy
check pair-wrong-shape "map 'Pair'.*Pt.npy.*(3, 3, 4, 4)" pair.tx E.npy T=T.npy K=K.npy E=E.npy Pair=Pt.npy
check pair-missing-binding "map 'Pair'.*not bound" pair.tx E.npy T=T.npy K=K.npy E=E.npy
}

# good masks: every dtype and order gives numpy's masked product; --random runs
good() { # name args...
    name=$1; shift
    if "$TXC" run mm.tx A=A.npy B=B.npy C="$name.out.npy" "$@" >out.txt 2>err.txt; then :
    else bad "$name: exit $?: $(cat err.txt)"; return 1; fi
}
for L in L Lf8 Lf4 LF; do
    if good "good-$L" L=$L.npy; then
        if "$PYTHON" -c "
import numpy as np, sys
A, B, m = np.load('A.npy'), np.load('B.npy'), np.load('L.npy')
C = np.load('good-$L.out.npy'); want = (A * m) @ B
sys.exit(0 if C.shape == want.shape and np.max(np.abs(C - want)) <= 1e-12 else 1)"; then ok
        else bad "good-$L: result differs from numpy's masked product"; fi
    fi
done
if good random-map --random; then ok; fi
if "$TXC" run pair.tx T=T.npy K=K.npy E=Epair.npy Pair=P.npy >out.txt 2>err.txt &&
   "$PYTHON" -c "
import numpy as np, sys
T, K, P, E = np.load('T.npy'), np.load('K.npy'), np.load('P.npy'), np.load('Epair.npy')
sys.exit(0 if E.shape == () and abs(E - np.sum(T * K * P)) <= 1e-12 * max(1, abs(E)) else 1)"; then ok
else bad "good-pair: exit or value wrong: $(cat err.txt)"; fi

# the standalone C function refuses a bad map, names it, writes nothing
if "$TXC" mm.tx --no-blas -o prog.c --header prog.h --name prog 2>err.txt; then
    cat > main.c <<'C'
#include "prog.h"
#include <stdio.h>
#include <string.h>
static int try(const char *what, int64_t nsrc, const int64_t *off, const int64_t *tg, int want_ok)
{
    double A[4 * 3], B[3 * 5], C[4 * 5];
    for (int i = 0; i < 12; i++) A[i] = i;
    for (int i = 0; i < 15; i++) B[i] = i - 7;
    for (int i = 0; i < 20; i++) C[i] = -1;
    tx_sparse_map m = {nsrc, off, tg};
    int rc = prog(4, 3, 5, A, B, C, &m);
    if (want_ok) {
        if (rc != 0) { printf("FAIL %s: code %d: %s\n", what, rc, prog_error(rc)); return 1; }
        /* row s has target s % 3 only */
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                if (C[i * 5 + j] != A[i * 3 + i % 3] * B[(i % 3) * 5 + j]) {
                    printf("FAIL %s: C[%d,%d] = %g\n", what, i, j, C[i * 5 + j]); return 1; }
        return 0;
    }
    if (rc == 0) { printf("FAIL %s: accepted\n", what); return 1; }
    if (!strstr(prog_error(rc), "'L'")) { printf("FAIL %s: %s\n", what, prog_error(rc)); return 1; }
    for (int i = 0; i < 20; i++)
        if (C[i] != -1) { printf("FAIL %s: output written\n", what); return 1; }
    return 0;
}
int main(void)
{
    const int64_t off[5] = {0, 1, 2, 3, 4}, tg[4] = {0, 1, 2, 0};
    const int64_t off_dec[5] = {0, 1, 0, 3, 4}, off_1[5] = {1, 1, 2, 3, 4}, off_dup[5] = {0, 2, 2, 3, 4};
    const int64_t tg_range[4] = {0, 1, 3, 0}, tg_neg[4] = {0, -1, 2, 0}, tg_dup[4] = {1, 1, 2, 0};
    const int64_t off_desc[5] = {0, 2, 2, 3, 4}, tg_desc[4] = {2, 1, 2, 0};
    int f = 0;
    f += try("good map", 4, off, tg, 1);
    f += try("nsrc wrong", 3, off, tg, 0);
    f += try("offsets[0] != 0", 4, off_1, tg, 0);
    f += try("decreasing offsets", 4, off_dec, tg, 0);
    f += try("target out of range", 4, off, tg_range, 0);
    f += try("negative target", 4, off, tg_neg, 0);
    f += try("duplicate targets", 4, off_dup, tg_dup, 0);
    f += try("targets descending", 4, off_desc, tg_desc, 0);
    f += try("NULL offsets", 4, NULL, tg, 0);
    f += try("NULL targets", 4, off, NULL, 0);
    printf("%d\n", f);
    return f != 0;
}
C
    if $CC -std=c99 -Wall -Wextra -o prog prog.c main.c -lm 2>err.txt; then
        if ./prog >out.txt 2>&1; then ok; else bad "standalone C: $(cat out.txt)"; fi
    else bad "standalone C does not compile: $(head -c 600 err.txt)"; fi
else bad "txc mm.tx --no-blas: $(cat err.txt)"; fi

cd "$ROOT" || exit 1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
