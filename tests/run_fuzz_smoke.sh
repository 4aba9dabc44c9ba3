#!/bin/sh
# A short libFuzzer run over the whole compile path (tests/fuzz), seeded
# with every .tx file of the project: any crash, sanitizer report or leak
# fails it. `make fuzz FUZZ_SECONDS=N` runs the long campaign.
SECONDS_=${FUZZ_SMOKE_SECONDS:-10}
if ! command -v clang >/dev/null 2>&1; then
    echo "clang is missing (make deps installs it)"; echo "0 passed, 1 failed"; exit 1
fi
make -s build-fuzz/fuzz_compile >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp tests/num/*.tx tests/diag/*.tx tests/graph/*.tx examples/*.tx "$T"/ 2>/dev/null
if ASAN_OPTIONS=detect_leaks=1 build-fuzz/fuzz_compile -max_total_time="$SECONDS_" -max_len=4096 -timeout=20 \
       "$T" >"$T.log" 2>&1; then
    grep -E "^Done [0-9]+ runs" "$T.log"
    rm -f "$T.log"
    echo "1 passed, 0 failed"
else
    tail -40 "$T.log"
    rm -f "$T.log"
    echo "0 passed, 1 failed"
    exit 1
fi
