#!/bin/sh
# Every man page renders without a warning (man --warnings, groff -ww).
pass=0 fail=0
for f in man/*.[1357]; do
    out=$(LC_ALL=C.UTF-8 man --warnings -l "$f" 2>&1 >/dev/null)
    if [ -z "$out" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $f"; echo "$out"; fi
done
# no control character in a page's source: a font escape (backslash, f, R) written
# as a form feed and an R renders as text, without a warning (tx_emit.3 had two)
for f in man/*.[1357]; do
    if LC_ALL=C grep -q "$(printf '[\001-\010\013\014\016-\037]')" "$f"; then
        fail=$((fail + 1)); echo "FAIL $f: a control character in the source"
    else pass=$((pass + 1)); fi
done
# every function of the public header has a page of its own
for fn in $(sed -n 's/^TX_API [^(]*[ *]\(tx_[a-z_0-9]*\)(.*/\1/p' src/tensorexpr.h); do
    if [ -e "man/$fn.3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL no man/$fn.3"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
