#!/bin/sh
# Golden tests (cproc style):
#   tests/diag/X.tx  -> tests/diag/X.err   `txc check X.tx`: expected stderr; exit status 1
#   tests/graph/X.tx -> tests/graph/X.out  `txc graph -O0 X.tx` (the lowering) and
#                                          `txc graph -O2 X.tx` (optimised); exit status 0
#   with tests/graph/X.args, instead one `txc graph ARGS X.tx` per line of
#   it (e.g. `-O1 --after all`), each under "--- ARGS" and followed by its
#   exit status, stderr included (so usage errors can be tested too)
# Run from inside the directory, so file names in messages are bare.
# With UPDATE=1 the expected files are rewritten from the current output
# (review the diff before committing).
TXC=${TXC:-build/txc}
case $TXC in /*) ;; *) TXC=$(pwd)/$TXC ;; esac
pass=0 fail=0
check_one() { # dir file expected-ext exit-status command...
    dir=$1 f=$2 ext=$3 want=$4; shift 4
    exp=${f%.tx}.$ext
    args=tests/$dir/${f%.tx}.args
    out=$(cd "tests/$dir" && "$@" "$f" 2>&1 >/dev/null; echo "exit $?")
    [ "$ext" = out ] && out=$(cd "tests/$dir" && "$@" -O0 "$f" 2>&1; echo "exit $?"; echo "--- -O2";
                              "$@" -O2 "$f" 2>&1; echo "exit $?")
    if [ "$ext" = out ] && [ -e "$args" ]; then
        out=$(while IFS= read -r a; do
                  [ -n "$a" ] || continue
                  echo "--- $a"
                  # shellcheck disable=SC2086 # one line holds several arguments
                  (cd "tests/$dir" && "$@" $a "$f" 2>&1 </dev/null; echo "exit $?")
              done < "$args")
        want=${out##*exit } # every exit status is part of the expected text
    fi
    if [ "${UPDATE:-0}" = 1 ]; then
        printf '%s\n' "$out" > "tests/$dir/$exp"
    fi
    if [ "$out" = "$(cat "tests/$dir/$exp" 2>/dev/null)" ] && [ "${out##*exit }" = "$want" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL tests/$dir/$f"
        printf '%s\n' "$out" | diff -u "tests/$dir/$exp" - | head -20
    fi
}
for p in tests/diag/*.tx; do
    [ -e "$p" ] || continue
    check_one diag "$(basename "$p")" err 1 "$TXC" check
done
for p in tests/graph/*.tx; do
    [ -e "$p" ] || continue
    check_one graph "$(basename "$p")" out 0 "$TXC" graph
done
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ]
