#!/bin/sh
# The cc tier's cache and fallbacks (txc run --backend cc, src/jit_cc.c):
#  - a second process finds the object in the cache: the compiler does not
#    run again (a wrapper compiler counts its runs);
#  - two processes racing on an empty cache both succeed, with one object
#    left and no temporary file;
#  - no compiler (TX_CC=/nonexistent), a compiler that fails, a cache
#    directory that cannot be made: libtcc or an uncached object, the same
#    results, and --time says which;
#  - a broken cached file, or another program's object under its name, is
#    rebuilt, not trusted;
#  - TX_CACHE_DIR names the cache before XDG_CACHE_HOME.
# Every result is compared with the libtcc tier's, byte for byte.
# Prints "N passed, N failed".
TXC=${TXC:-build/txc}
PYTHON=${PYTHON:-/usr/bin/python3}
case $TXC in /*) ;; *) TXC=$(pwd)/$TXC ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
cd "$T" || exit 1

cat > prog.tx <<'TX'
dim n;
in  A[n,n], x[n];
out C[n,n], y[n], P[n,n];
C("i,j") = A("i,k") * A("j,k");
y("i") = exp(A("i,j") * x("j"));
P("i,j") = tanh(A("i,j")) * x("j") + 1;
TX
"$PYTHON" - <<'PY'
import numpy as np
r = np.random.default_rng(5)
np.save('A.npy', r.standard_normal((200, 200)) / 200)
np.save('x.npy', r.standard_normal(200))
PY
# the compiler, counting its runs
cat > countcc <<SH
#!/bin/sh
echo run >> "$T/cc.runs"
exec cc "\$@"
SH
chmod +x countcc
runs() { [ -f "$T/cc.runs" ] && wc -l < "$T/cc.runs" || echo 0; }

"$TXC" run prog.tx A=A.npy x=x.npy C=C0.npy y=y0.npy P=P0.npy 2>/dev/null || bad "libtcc run failed"

# run NAME [env...]: txc run --backend cc --time into NAME.npy files, stderr in NAME.err
run() {
    name=$1; shift
    env "$@" "$TXC" run prog.tx A=A.npy x=x.npy C="C$name.npy" y="y$name.npy" P="P$name.npy" \
        --backend cc --time >/dev/null 2>"$name.err"
}
same() { # NAME: its outputs equal libtcc's byte for byte
    cmp -s "C$1.npy" C0.npy && cmp -s "y$1.npy" y0.npy && cmp -s "P$1.npy" P0.npy
}
backend() { sed -n 's/^txc:   backend //p' "$1.err"; }

# cold cache, then warm: the compiler ran once
C1="$T/cache1"
if run cold XDG_CACHE_HOME="$C1" TX_CC="$T/countcc" && same cold && backend cold | grep -q '^cc: compiled by'
then ok; else bad "cold cache: $(cat cold.err)"; fi
if run warm XDG_CACHE_HOME="$C1" TX_CC="$T/countcc" && same warm && backend warm | grep -q '^cc: cached' &&
   [ "$(runs)" = 1 ]
then ok; else bad "warm cache: compiler runs $(runs): $(cat warm.err)"; fi
# the object's name: 64 hex digits; nothing else in the directory
if [ "$(ls "$C1/tensorexpr" | grep -c -E '^[0-9a-f]{64}\.so$')" = 1 ] && [ "$(ls "$C1/tensorexpr" | wc -l)" = 1 ]
then ok; else bad "cache contents: $(ls -a "$C1/tensorexpr")"; fi
# another compiler (or other flags) is another object
if run other XDG_CACHE_HOME="$C1" TX_CC="cc -g0" && same other && backend other | grep -q '^cc: compiled by' &&
   [ "$(ls "$C1/tensorexpr" | wc -l)" = 2 ]
then ok; else bad "other compiler: $(cat other.err)"; fi

# TX_CACHE_DIR (shared with txc run --mpi) comes before XDG_CACHE_HOME
if run txcache XDG_CACHE_HOME="$T/cache-unused" TX_CACHE_DIR="$T/cache-tx" && same txcache &&
   backend txcache | grep -q "^cc: compiled by .* into $T/cache-tx/" && [ ! -e "$T/cache-unused" ]
then ok; else bad "TX_CACHE_DIR: $(cat txcache.err)"; fi

# two processes racing on an empty cache
C2="$T/cache2"
run race1 XDG_CACHE_HOME="$C2" & p1=$!
run race2 XDG_CACHE_HOME="$C2" & p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
if [ $s1 = 0 ] && [ $s2 = 0 ] && same race1 && same race2 && backend race1 | grep -q '^cc:' &&
   backend race2 | grep -q '^cc:' && [ "$(ls -a "$C2/tensorexpr" | grep -v '^\.\.*$' | wc -l)" = 1 ]
then ok; else bad "race: exit $s1 $s2: $(cat race1.err race2.err; ls -a "$C2/tensorexpr")"; fi

# no compiler: libtcc, and the reason
if run nocc XDG_CACHE_HOME="$C2" TX_CC=/nonexistent && same nocc &&
   backend nocc | grep -q "^tcc: fallback to tcc: cc tier: no compiler '/nonexistent'"
then ok; else bad "TX_CC=/nonexistent: $(cat nocc.err)"; fi
# a compiler that fails: libtcc, and its message
cat > failcc <<'SH'
#!/bin/sh
echo "failcc: cannot compile today" >&2
exit 1
SH
chmod +x failcc
if run failing XDG_CACHE_HOME="$C2" TX_CC="$T/failcc" && same failing &&
   backend failing | grep -q "^tcc: fallback to tcc: .*failcc failed" && grep -q "cannot compile today" failing.err
then ok; else bad "failing compiler: $(cat failing.err)"; fi
# CC is used when TX_CC is not set
if run viacc XDG_CACHE_HOME="$C2" CC=/nonexistent/gcc && same viacc && backend viacc | grep -q "no compiler '/nonexistent/gcc'"
then ok; else bad "CC=/nonexistent/gcc: $(cat viacc.err)"; fi

# a cache directory that cannot be made (its parent is a file): compiled
# in a temporary directory, not cached, removed again
echo file > notadir
if run nodir XDG_CACHE_HOME="$T/notadir/x" && same nodir && backend nodir | grep -q '^cc: compiled by .*not cached'
then ok; else bad "uncreatable cache: $(cat nodir.err)"; fi

# a broken cached file is rebuilt
obj=$(backend warm | sed -n 's/^cc: cached //p') # the object the countcc runs use
good=$(ls "$C2"/tensorexpr/*.so | head -1)
half=$(( $(wc -c < "$good") / 2 ))
for what in garbage truncated halved; do
    rm -f "$T/cc.runs"
    case $what in
    garbage) echo "not an object" > "$obj" ;;
    truncated) head -c 3000 "$good" > "$obj" ;;
    halved) head -c $half "$good" > "$obj" ;;
    esac
    if run "broken$what" XDG_CACHE_HOME="$C1" TX_CC="$T/countcc" && same "broken$what" &&
       backend "broken$what" | grep -q '^cc: compiled by' && [ "$(runs)" = 1 ]
    then ok; else bad "$what cached file: $(cat "broken$what.err")"; fi
done
# another program's object under this program's name is not trusted
cat > other.tx <<'TX'
in  A[n];
out B[n];
B("i") = A("i") * 2;
TX
"$PYTHON" -c "import numpy as np; np.save('v.npy', np.arange(5.0))"
rm -rf "$T/cache3"
XDG_CACHE_HOME="$T/cache3" "$TXC" run other.tx A=v.npy B=B.npy --backend cc -q 2>/dev/null
run own XDG_CACHE_HOME="$T/cache3" >/dev/null 2>&1
for f in "$T"/cache3/tensorexpr/*.so; do
    case $(backend own) in *"$f"*) mine=$f ;; *) theirs=$f ;; esac
done
if [ -n "$mine" ] && [ -n "$theirs" ]; then
    cp "$theirs" "$mine"
    if run swapped XDG_CACHE_HOME="$T/cache3" && same swapped && backend swapped | grep -q '^cc: compiled by'
    then ok; else bad "another object under this name: $(cat swapped.err)"; fi
else
    bad "another object under this name: setup failed: $(ls "$T/cache3/tensorexpr")"
fi

# --backend with a bad value is a usage error
"$TXC" run prog.tx --random --backend gcc >/dev/null 2>err.txt
if [ $? = 2 ] && grep -q "unknown backend 'gcc'" err.txt; then ok; else bad "--backend gcc: $(cat err.txt)"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
