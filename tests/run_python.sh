#!/bin/sh
# The Python package's pytest suite (tests/python), from the build tree:
# PYTHONPATH=python and the library in build/ (or $TENSOREXPR_LIB). Ends
# with "N passed, N failed" from pytest's summary (failures and errors
# counted as failed); exits with pytest's status, so a failure fails make check.
PYTHON=${PYTHON:-/usr/bin/python3}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} "$PYTHON" -m pytest -q -p no:cacheprovider tests/python "$@" >"$log" 2>&1
status=$?
cat "$log"
last=$(grep -E '[0-9]+ (passed|failed|error)' "$log" | tail -1)
num() { echo "$last" | sed -n "s/.*\b\([0-9][0-9]*\) $1.*/\1/p"; }
p=$(num passed); f=$(num failed); e=$(num error)
echo "${p:-0} passed, $(( ${f:-0} + ${e:-0} )) failed"
exit $status
