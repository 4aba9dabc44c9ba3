#!/bin/sh
# txc's output files (txc(1), OUTPUTS): nothing lost, nothing aliased.
#  - an output that names the program, an input or another output is
#    refused with exit 2 before anything is read or written;
#  - outputs are all or nothing: every destination is checked first, a
#    device comes before any rename, a failure replaces nothing;
#  - SIGINT, SIGTERM and `ulimit -f` leave no temporary behind;
#  - a replaced file keeps its mode, a new one follows the umask, a
#    read-only one is refused;
#  - every command takes --help, every option with a value --opt=value.
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
mkdir w big
cd w || exit 1
cat > p.tx <<'TX'
in  A[n,k], B[k,m];
out C[n,m];
C("i,j") = A("i,k") * B("k,j");
TX
cat > two.tx <<'TX'
in  A[n,k], B[k,m];
out C[n,m], D[n,m];
C("i,j") = A("i,k") * B("k,j");
D("i,j") = 2 * C("i,j");
TX
cat > io.tx <<'TX'
in    A[n];
inout X[n];
X("i") = X("i") + A("i");
TX
cat > rows.tx <<'TX'
sparse L : "i" -> "k";
in  A[n,k], B[k,m];
out C[n,m];
C("i,j") = A("i,k") * B("k,j");
TX
"$PYTHON" - <<'PY'
import numpy as np
np.save('a.npy', np.ones((2, 3))); np.save('b.npy', np.ones((3, 4)))
np.save('v.npy', np.ones(3)); np.save('x.npy', np.ones(3))
np.save('l.npy', np.array([[1, 0, 1], [0, 0, 1]], dtype=bool))
PY
echo precious > c.npy
echo precious-d > d.npy
echo keep > keep.c
echo keep > keep.h
mkdir sub adir
ln -s p.tx link.c
ln p.tx hard.c
ln -s a.npy la.npy
ln a.npy ha.npy
ln -s c.npy lc.npy
cp p.tx q.c

# Every file and link below the current directory, with its mode and
# checksum: equal before and after means nothing was touched or created.
snapshot() {
    find . -mindepth 1 | LC_ALL=C sort | while read -r f; do
        if [ -L "$f" ]; then echo "L $f -> $(readlink "$f")"
        elif [ -d "$f" ]; then echo "D $f $(stat -c %a "$f")"
        else echo "F $f $(stat -c %a "$f") $(md5sum < "$f")"; fi
    done
}

# refused NAME WANT_STATUS PHRASE ARGS...: txc exits WANT_STATUS, says
# PHRASE, and every file stays as it was (no temporary, nothing new).
refused() {
    name=$1 want=$2 phrase=$3; shift 3
    before=$(snapshot)
    "$TXC" "$@" >../out.txt 2>../err.txt
    rc=$?
    after=$(snapshot)
    if [ $rc -ne "$want" ]; then bad "$name: exit $rc, want $want: $(cat ../err.txt)"; return; fi
    if ! grep -q -- "$phrase" ../err.txt; then bad "$name: message lacks '$phrase': $(cat ../err.txt)"; return; fi
    if [ "$before" != "$after" ]; then
        bad "$name: files changed:"; echo "$before" > ../before.txt; echo "$after" > ../after.txt
        diff ../before.txt ../after.txt; return
    fi
    ok
}

# ---- 1. aliasing: exit 2 before anything is read or written ----
refused "-o names the program" 2 "would overwrite the program" p.tx -o p.tx
refused "-o names the program through sub/.." 2 "would overwrite the program" p.tx -o ./sub/../p.tx
refused "-o is a symbolic link to the program" 2 "would overwrite the program" p.tx -o link.c
refused "-o is a hard link to the program" 2 "would overwrite the program" p.tx -o hard.c
refused "--header= names the program" 2 "would overwrite the program" p.tx --header=p.tx
refused "default output p.c is the program p.c" 2 "the program itself" q.c
refused "-o and --header= the same new file" 2 "would both go to" p.tx -o out.c --header=out.c
refused "-o and --header= the same new file, ./" 2 "would both go to" p.tx -o out.c --header=./out.c
refused "-o and --header the same existing file" 2 "would both go to" p.tx -o keep.h --header keep.h
refused "run: output names the program" 2 "would overwrite the program" run p.tx A=a.npy B=b.npy C=p.tx
refused "run: output names input A" 2 "would overwrite input 'A'" run p.tx A=a.npy B=b.npy C=a.npy
refused "run: output ./a.npy names input A" 2 "would overwrite input 'A'" run p.tx A=a.npy B=b.npy C=./a.npy
refused "run: output sub/../a.npy names input A" 2 "would overwrite input 'A'" run p.tx A=a.npy B=b.npy \
    C=sub/../a.npy
refused "run: output is a symbolic link to input A" 2 "would overwrite input 'A'" run p.tx A=a.npy B=b.npy C=la.npy
refused "run: output is a hard link to input A" 2 "would overwrite input 'A'" run p.tx A=a.npy B=b.npy C=ha.npy
refused "run: input is a link to the output" 2 "would overwrite input 'B'" run p.tx A=a.npy B=lc.npy C=c.npy
refused "run: two outputs, one new file" 2 "would both be written to one file" run two.tx A=a.npy B=b.npy \
    C=new.npy D=new.npy
refused "run: two outputs, one new file, ./" 2 "would both be written to one file" run two.tx A=a.npy B=b.npy \
    C=new.npy D=./new.npy
refused "run: two outputs, one through a link" 2 "would both be written to one file" run two.tx A=a.npy B=b.npy \
    C=c.npy D=lc.npy
refused "run: inout names input A" 2 "would overwrite input 'A'" run io.tx A=x.npy X=x.npy
refused "run: output names the mask of map L" 2 "would overwrite input 'L'" run rows.tx A=a.npy B=b.npy L=l.npy \
    C=l.npy
# what stays allowed: an inout's own file, one file read by two inputs,
# a mask next to its output
"$TXC" run io.tx A=v.npy X=x.npy 2>../err.txt && "$PYTHON" -c "
import numpy as np, sys; sys.exit(0 if (np.load('x.npy') == 2).all() else 1)" && ok ||
    bad "inout tensor's own file: $(cat ../err.txt)"
"$PYTHON" -c "import numpy as np; np.save('sq.npy', np.ones((3, 3)))"
"$TXC" run p.tx A=sq.npy B=sq.npy C=sq2.npy 2>../err.txt && [ -s sq2.npy ] && ok ||
    bad "one file for two inputs: $(cat ../err.txt)"
"$PYTHON" -c "import numpy as np; np.save('ra.npy', np.ones((2, 3))); np.save('rb.npy', np.ones((3, 2)))"
"$TXC" run rows.tx A=ra.npy B=rb.npy L=l.npy C=rc.npy 2>../err.txt && [ -s rc.npy ] && ok ||
    bad "a map's mask and an output: $(cat ../err.txt)"
rm -f sq.npy sq2.npy ra.npy rb.npy rc.npy

# ---- 2. all or nothing ----
refused "run: second output a directory" 3 "adir: it is a directory" run two.tx A=a.npy B=b.npy C=c.npy D=adir
refused "run: second output in no directory" 3 "nodir: No such file" run two.tx A=a.npy B=b.npy C=c.npy \
    D=nodir/d.npy
refused "run: second output /dev/full" 3 "No space left on device" run two.tx A=a.npy B=b.npy C=c.npy D=/dev/full
refused "-o then --header in no directory" 3 "nodir: No such file" p.tx -o keep.c --header=nodir/p.h
refused "-o then --header=/dev/full" 3 "No space left on device" p.tx -o keep.c --header=/dev/full
refused "-o /dev/full then --header" 3 "No space left on device" p.tx -o /dev/full --header=keep.h
refused "-o a directory" 3 "is a directory" p.tx -o adir
# standard output is written before any file is replaced
before=$(snapshot)
"$TXC" p.tx -o - --header=keep.h >/dev/full 2>../err.txt
rc=$?
[ $rc -eq 3 ] && [ "$before" = "$(snapshot)" ] && ok || bad "-o - on /dev/full: exit $rc, keep.h $(cat keep.h)"
# a device and a file that succeed: both written
"$TXC" run two.tx A=a.npy B=b.npy C=c.npy D=/dev/null 2>../err.txt && "$PYTHON" -c "
import numpy as np, sys; sys.exit(0 if (np.load('c.npy') == 3).all() else 1)" && ok ||
    bad "a file and /dev/null: $(cat ../err.txt)"
echo precious > c.npy
# an output to standard output through /dev/stdout, a pipe
"$TXC" run p.tx A=a.npy B=b.npy C=/dev/stdout | "$PYTHON" -c "
import numpy as np, sys, io; c = np.load(io.BytesIO(sys.stdin.buffer.read())); sys.exit(0 if c.shape == (2, 4) else 1)" &&
    ok || bad "C=/dev/stdout into a pipe"

# ---- 3. modes ----
chmod 600 c.npy
"$TXC" run p.tx A=a.npy B=b.npy C=c.npy 2>../err.txt
m=$(stat -c %a c.npy)
[ "$m" = 600 ] && [ "$(head -c 6 c.npy | tail -c 5)" = NUMPY ] && ok || bad "mode 0600 kept: now $m"
chmod 640 keep.c
"$TXC" p.tx -o keep.c 2>../err.txt
m=$(stat -c %a keep.c)
[ "$m" = 640 ] && grep -q "^int" keep.c && ok || bad "-o keeps mode 0640: now $m"
(umask 077; "$TXC" run p.tx A=a.npy B=b.npy C=new77.npy)
m=$(stat -c %a new77.npy 2>&1)
[ "$m" = 600 ] && ok || bad "umask 077: a new output has mode $m"
(umask 027; "$TXC" p.tx -o new27.c --header)
m=$(stat -c %a new27.c 2>&1) mh=$(stat -c %a new27.h 2>&1)
[ "$m" = 640 ] && [ "$mh" = 640 ] && ok || bad "umask 027: new outputs have modes $m, $mh"
(umask 022; "$TXC" p.tx -o new22.c)
m=$(stat -c %a new22.c 2>&1)
[ "$m" = 644 ] && ok || bad "umask 022: a new output has mode $m"
rm -f new77.npy new27.c new27.h new22.c
chmod 444 c.npy keep.h
refused "run: a read-only output" 3 "read-only" run p.tx A=a.npy B=b.npy C=c.npy
refused "a read-only --header" 3 "read-only" p.tx -o keep.c --header=keep.h
refused "run: a read-only second output" 3 "read-only" run two.tx A=a.npy B=b.npy C=new.npy D=c.npy
chmod 644 c.npy keep.h
# a link stays a link, its file keeps its mode; a link to nowhere yet
# creates the file it names
mkdir gen && echo old > gen/t.c && chmod 600 gen/t.c && ln -s gen/t.c lt.c
"$TXC" p.tx -o lt.c 2>../err.txt
[ -L lt.c ] && [ "$(stat -c %a gen/t.c)" = 600 ] && grep -q "^int" gen/t.c && ok ||
    bad "link output: $(ls -l lt.c gen/t.c) $(cat ../err.txt)"
ln -s gen/u.c lu.c
"$TXC" p.tx -o lu.c 2>../err.txt
[ -L lu.c ] && grep -q "^int" gen/u.c && ok || bad "link to a file not there yet: $(ls -l lu.c gen) $(cat ../err.txt)"
rm -rf gen lt.c lu.c

# ---- 4. --help and --opt=value ----
"$TXC" --help >../out.txt 2>../err.txt && grep -q "MAP=MASK" ../out.txt && grep -q "txc(1)" ../out.txt &&
    grep -q "tx(5)" ../out.txt && grep -q "tensorexpr(3)" ../out.txt && [ ! -s ../err.txt ] && ok ||
    bad "txc --help: $(cat ../out.txt ../err.txt)"
for cmd in run graph check; do
    "$TXC" $cmd --help >../out.txt 2>../err.txt && grep -q "^usage: txc $cmd FILE.tx" ../out.txt &&
        [ ! -s ../err.txt ] && ok || bad "txc $cmd --help: $(cat ../out.txt ../err.txt)"
done
"$TXC" p.tx --help >../out.txt 2>../err.txt && grep -q "^usage: txc FILE.tx" ../out.txt && grep -q -- "--header" \
    ../out.txt && ok || bad "txc FILE.tx --help: $(cat ../out.txt ../err.txt)"
"$TXC" run p.tx -h >../out.txt 2>&1 && grep -q -- "--quiet" ../out.txt && ok || bad "txc run FILE.tx -h"
"$TXC" p.tx --name=fa -o=o1.c --header=o1.h 2>../err.txt && grep -q "^int fa(" o1.c && grep -q "^int fa(" o1.h &&
    ok || bad "--name=FN -o=OUT.c --header=OUT.h: $(cat ../err.txt)"
"$TXC" p.tx --name fb -o o2.c --header o2.h 2>../err.txt && grep -q "^int fb(" o2.c && grep -q "^int fb(" o2.h &&
    ok || bad "--name FN -o OUT.c --header OUT.h: $(cat ../err.txt)"
"$TXC" p.tx --name=fc -oo3.c 2>../err.txt && grep -q "^int fc(" o3.c && ok || bad "-oOUT.c: $(cat ../err.txt)"
rm -f o1.c o1.h o2.c o2.h o3.c
a=$("$TXC" run p.tx --random -D n=2 -D k=3 -D m=2 --backend tcc 2>&1)
b=$("$TXC" run p.tx --random -Dn=2 -D=k=3 -D m=2 --backend=tcc 2>&1)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "-Dn=2 and --backend=tcc: '$a' vs '$b'"
c=$("$TXC" run p.tx --random -Dn=2 -Dk=3 -Dm=2 --backend=cc 2>&1)
[ -n "$c" ] && [ "$a" = "$c" ] && ok || bad "--backend=cc gives what --backend tcc gives: '$a' vs '$c'"
"$TXC" run p.tx --random -Dn=2 -Dk=3 -Dm=2 --name=x >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "run --name=x is an unknown option"
for q in -q --quiet; do
    "$TXC" run p.tx --random -D n=2 -D k=3 -D m=2 $q >../out.txt 2>../err.txt
    rc=$?
    [ $rc -eq 0 ] && [ ! -s ../out.txt ] && [ ! -s ../err.txt ] && ok || bad "run $q: exit $rc, $(cat ../out.txt)"
done
"$TXC" run p.tx A=a.npy B=b.npy C=c.npy -q 2>../err.txt && [ "$(head -c 6 c.npy | tail -c 5)" = NUMPY ] && ok ||
    bad "run -q still writes files: $(cat ../err.txt)"
echo precious > c.npy

# ---- 5. signals and limits: no temporary left behind ----
cd ../big || exit 1
cp ../w/p.tx ../w/two.tx ../w/a.npy ../w/b.npy .
cat > outer.tx <<'TX'
in  A[n], B[m];
out C[n,m];
C("i,j") = A("i") * B("j");
TX
temps() { set -- *.tmp.*; [ -e "$1" ]; }
# ends PID within about 60 s, or kills it and says so; prints nothing
bounded_wait() {
    i=0
    while kill -0 "$1" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    if kill -0 "$1" 2>/dev/null; then kill -KILL "$1"; bad "$2: still running after the signal"; fi
}

# while a ~128 MB output is written: the signal as soon as its temporary
# exists; the old file stays, or (signal too late) the new one is whole.
# (A background job of sh ignores SIGINT: python restores the default.)
n=4000
size=$((n * n * 8 + 128))
for sig in INT TERM; do
    echo old > big.npy
    if [ $sig = INT ]; then
        "$PYTHON" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
            "$TXC" run outer.tx --random -D n=$n -D m=$n C=big.npy 2>/dev/null &
    else
        "$TXC" run outer.tx --random -D n=$n -D m=$n C=big.npy 2>/dev/null &
    fi
    pid=$!
    i=0
    while [ $i -lt 6000 ] && ! temps && kill -0 $pid 2>/dev/null; do sleep 0.01; i=$((i + 1)); done
    kill -$sig $pid 2>/dev/null
    bounded_wait $pid "SIG$sig during a large write"
    wait $pid
    rc=$?
    got=$(stat -c %s big.npy)
    if temps; then bad "SIG$sig during a large write: left $(ls *.tmp.*)"; rm -f ./*.tmp.*
    elif [ "$(cat big.npy 2>/dev/null | head -c 4)" = old ] && [ $rc -gt 128 ]; then ok
    elif [ "$got" = "$size" ]; then ok; echo "(SIG$sig came after the write: exit $rc)"
    else bad "SIG$sig during a large write: exit $rc, big.npy has $got bytes"; fi
done
rm -f big.npy

# deterministic: the second output is a FIFO nobody reads, so txc waits
# there with the first output's temporary complete and not yet renamed
mkfifo fifo
for sig in INT TERM; do
    echo old > c.npy
    if [ $sig = INT ]; then
        "$PYTHON" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
            "$TXC" run two.tx A=a.npy B=b.npy C=c.npy D=fifo 2>/dev/null &
    else
        "$TXC" run two.tx A=a.npy B=b.npy C=c.npy D=fifo 2>/dev/null &
    fi
    pid=$!
    i=0
    while [ $i -lt 6000 ] && ! temps && kill -0 $pid 2>/dev/null; do sleep 0.01; i=$((i + 1)); done
    seen=no
    temps && seen=yes
    sleep 0.2
    kill -$sig $pid 2>/dev/null
    bounded_wait $pid "SIG$sig waiting on a FIFO"
    wait $pid
    rc=$?
    want=130
    [ $sig = TERM ] && want=143
    if [ $seen = no ]; then bad "SIG$sig waiting on a FIFO: no temporary appeared (exit $rc)"
    elif temps; then bad "SIG$sig waiting on a FIFO: left $(ls *.tmp.*)"; rm -f ./*.tmp.*
    elif [ $rc -ne $want ]; then bad "SIG$sig waiting on a FIFO: exit $rc, want $want"
    elif [ "$(cat c.npy)" != old ]; then bad "SIG$sig waiting on a FIFO: c.npy was replaced"
    else ok; fi
done

# a file size limit: the write fails (SIGXFSZ is not fatal), nothing is left
echo old > big.npy
(ulimit -f 1000; "$TXC" run outer.tx --random -D n=1000 -D m=1000 C=big.npy) 2>err.txt
rc=$?
if temps; then bad "ulimit -f: left $(ls *.tmp.*)"; rm -f ./*.tmp.*
elif [ $rc -ne 3 ] || ! grep -q "File too large" err.txt; then bad "ulimit -f: exit $rc: $(cat err.txt)"
elif [ "$(cat big.npy)" != old ]; then bad "ulimit -f: big.npy was replaced"
else ok; fi
echo keep > keep.c
(ulimit -f 1; "$TXC" p.tx -o keep.c --header=keep.h) 2>err.txt
rc=$?
if temps; then bad "ulimit -f, txc FILE.tx: left $(ls *.tmp.*)"; rm -f ./*.tmp.*
elif [ $rc -ne 3 ] || [ "$(cat keep.c)" != keep ] || [ -e keep.h ]; then
    bad "ulimit -f, txc FILE.tx: exit $rc: $(cat err.txt)"
else ok; fi

cd "$T" || exit 1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
