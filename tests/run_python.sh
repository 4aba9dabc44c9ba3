#!/bin/sh
# The Python package's pytest suite (tests/python), from the build tree:
# PYTHONPATH=python and the library in build/ (or $TENSOREXPR_LIB). Ends
# with "N passed, N failed" from pytest's summary (failures and errors
# counted as failed); exits with pytest's status, so a failure fails make check.
PYTHON=${PYTHON:-/usr/bin/python3}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# the library of this build (build-san under SANITIZE=1, whose sanitizers
# must be loaded before Python itself; Python's own leaks are not ours)
export TENSOREXPR_LIB=${TENSOREXPR_LIB:-$(pwd)/${B:-build}/libtensorexpr.so}
if [ "${SAN:-0}" = 1 ]; then
    LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export LD_PRELOAD ASAN_OPTIONS=detect_leaks=0
fi
PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} "$PYTHON" -m pytest -q -p no:cacheprovider tests/python "$@" >"$log" 2>&1
status=$?
cat "$log"
last=$(grep -E '[0-9]+ (passed|failed|error)' "$log" | tail -1)
num() { echo "$last" | sed -n "s/.*\b\([0-9][0-9]*\) $1.*/\1/p"; }
p=$(num passed); f=$(num failed); e=$(num error)
echo "${p:-0} passed, $(( ${f:-0} + ${e:-0} )) failed"
exit $status
