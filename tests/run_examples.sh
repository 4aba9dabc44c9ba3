#!/bin/sh
# Runs every examples/*.tx as `txc run FILE --random ARGS` and prints one
# closing line "N passed, N failed"; exits non-zero if any example failed.
#
#   sh tests/run_examples.sh          TXC=path/to/txc tests another binary
#
# ARGS are collected from the example's `#! run: ARGS` comment lines (dims
# given with -D, for instance). An example with no such line gets every
# symbolic dim set to 8, read from the header txc emits for it. An example
# passes when txc exits with status 0.
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
TXC=${TXC:-build/txc}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for ex in "$root"/examples/*.tx; do
    [ -e "$ex" ] || continue
    name=examples/$(basename "$ex")
    if grep -q '^#![[:space:]]*run:' "$ex"; then
        args=$(sed -n 's/^#![[:space:]]*run:[[:space:]]*//p' "$ex" | tr '\n' ' ')
    elif "$TXC" "$ex" -o "$tmp/ex.c" --header "$tmp/ex.h" >"$tmp/out" 2>&1; then
        args=$(sed -n 's/.*: the extent of dim \(.*\)$/-D \1=8/p' "$tmp/ex.h" | tr '\n' ' ')
    else
        status=$?
        fail=$((fail + 1))
        echo "FAIL $name: $TXC $ex (emitting C to find its dims) exited with status $status"
        sed 's/^/    /' "$tmp/out"
        continue
    fi
    # $args is split into words on purpose: plain options such as -D n=64
    # shellcheck disable=SC2086
    if "$TXC" run "$ex" --random $args >"$tmp/out" 2>&1; then
        pass=$((pass + 1))
    else
        status=$?
        fail=$((fail + 1))
        echo "FAIL $name: $TXC run $ex --random $args exited with status $status"
        sed 's/^/    /' "$tmp/out"
    fi
done

# the C programs that embed the library: built against the static library
# and run (they check their own results and print "ok")
B=${B:-build}
for ex in examples/*.c; do
    [ -e "$ex" ] || continue
    name=$(basename "$ex")
    # shellcheck disable=SC2086
    if ${CC:-cc} -std=c99 -Wall -Wextra -Werror $SAN_CFLAGS -Isrc "$ex" "$B/libtensorexpr.a" \
           -ltcc -llapacke -lopenblas -lsleef -lmvec -ldl -lm -lpthread -o "$tmp/embed" >"$tmp/out" 2>&1 &&
       "$tmp/embed" >"$tmp/out" 2>&1 && tail -1 "$tmp/out" | grep -qx ok; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name"
        sed 's/^/    /' "$tmp/out"
    fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
