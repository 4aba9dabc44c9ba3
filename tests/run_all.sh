#!/bin/sh
# Runs every test suite and prints one closing line "N passed, N failed".
# Called by `make check` with TXC, B and PYTHON set.
B=${B:-build}
TXC=${TXC:-$B/txc}
PYTHON=${PYTHON:-/usr/bin/python3}
# under `make check SANITIZE=1` (build-san), programs linked against the
# library need the sanitizer runtime, and the allocation-failure sweep
# (LD_PRELOAD) cannot sit in front of ASan's own allocator
case $B in *-san) SAN_CFLAGS="-fsanitize=address,undefined"; SAN=1 ;; *) SAN_CFLAGS=""; SAN=0 ;; esac
export TXC B SAN SAN_CFLAGS
total_pass=0 total_fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() { # name: reads "N passed, N failed" or Check's summary from $log
    suite=$1
    p=$(sed -n 's/.*\b\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/.*\b\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\2/p' "$log" | tail -1)
    if [ -z "$p" ]; then # Check: "100%: Checks: 29, Failures: 0, Errors: 0"
        n=$(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$log" | tail -1)
        set -- $n
        p=$(( ${1:-0} - ${2:-0} - ${3:-0} )); f=$(( ${2:-0} + ${3:-0} ))
    fi
    [ "$status" != 0 ] && [ "${f:-0}" = 0 ] && f=1   # a crash counts
    total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0}))
    echo "== $suite: ${p:-0} passed, ${f:-0} failed"
}
run() { # name command...
    name=$1; shift
    "$@" >"$log" 2>&1; status=$?
    [ "$status" != 0 ] && cat "$log"
    count "$name"
}
run "npy (Check)" "$B/check_npy"
run "unit (Check)" "$B/check_unit"
run "library API (Check)" "$B/check_api"
run "sparse maps through the library (Check)" "$B/check_sparse"
run "kernels on threads: same bytes for any thread count (Check)" "$B/check_threads"
run "the calls of a compiled program, for profiles (Check)" "$B/check_profile"
run "internal errors through the library (Check)" "$B/check_internal"
run "inner-loop primitives vs scalar references, every ISA clone (Check)" "$B/check_prims"
run "typed, strided and aliased bindings, failures that spare the host (Check)" "$B/check_bind"
run "the library's cblas_dgemm vs the sum, OpenBLAS's own core (Check)" "$B/check_gemm"
if grep -q avx512f /proc/cpuinfo; then # the turned products run on SkylakeX's kernels
    run "the library's cblas_dgemm vs the sum, OpenBLAS's SkylakeX kernels (Check)" \
        env OPENBLAS_CORETYPE=SkylakeX "$B/check_gemm"
fi
run "golden diagnostics and listings" sh tests/run_golden.sh
run "numerical vs numpy, -O0, -O1 and -O2" "$PYTHON" tests/run_num.py --txc "$TXC" -j 2 -O0 -O1 -O2
# Python loads the library: under SANITIZE=1 its sanitizers must be loaded
# before Python itself, and Python's own leaks are not ours (as run_python.sh)
if [ "$SAN" = 1 ]; then
    san_preload="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    run "grad vs central finite differences, -O0, -O1 and -O2" env TENSOREXPR_LIB="$(pwd)/$B/libtensorexpr.so" \
        LD_PRELOAD="$san_preload" ASAN_OPTIONS=detect_leaks=0 "$PYTHON" tests/run_grad.py
else
    run "grad vs central finite differences, -O0, -O1 and -O2" env TENSOREXPR_LIB="$(pwd)/$B/libtensorexpr.so" \
        "$PYTHON" tests/run_grad.py
fi
# the cc tier on a representative subset (BLAS, LAPACK, the pool, libmvec's
# functions, scans, sparse maps, f32, where()): the first make check
# compiles them (cached in $XDG_CACHE_HOME/tensorexpr), later ones load them
run "cc tier (--backend cc) vs numpy and bit for bit vs libtcc, -O0 and -O2" "$PYTHON" tests/run_num.py \
    --txc "$TXC" -j 2 -O0 -O2 --backend cc tests/num/matmul.tx tests/num/batched_matmul.tx tests/num/reduce_rows_flat.tx \
    tests/num/four_index.tx tests/num/par_kernels.tx tests/num/fn_softmax.tx tests/num/fn_f32_softmax.tx \
    tests/num/fn_tanh.tx tests/num/fn_cumsum.tx tests/num/fn_reduce_normalise.tx tests/num/la_cholesky.tx \
    tests/num/la_svd_tall.tx tests/num/la_solve_f32.tx tests/num/ccsd_denominators.tx \
    tests/num/sp_pair_energy.tx tests/num/sp_masked_softmax.tx tests/num/comparisons_where.tx \
    tests/num/complex_contract.tx tests/num/complex_updates.tx tests/num/complex_blocks.tx tests/num/row_groups.tx tests/num/row_local.tx \
    tests/num/f32_blocks.tx tests/num/blocks_where.tx tests/num/fn_max.tx tests/num/blocks_maxmin_nan.tx \
    tests/num/reduce_mul_acc.tx tests/num/reduce_add_rows.tx tests/num/blas_batches.tx tests/num/f32_steps.tx \
    tests/num/f32_exp_odd_lanes.tx tests/num/f64_exp_odd_lanes.tx tests/num/tanh_odd_lanes.tx \
    tests/num/flat_rows_store.tx tests/num/stream_note.tx
run "cc tier: cache hits, racing processes, broken cache files, fallback to libtcc" sh tests/run_backend_cc.sh
run "standalone C vs numpy and txc run" "$PYTHON" tests/run_cc.py --txc "$TXC"
run "standalone C compiled by Clang, -Wall -Wextra -Werror" "$PYTHON" tests/run_cc.py --txc "$TXC" --cc clang \
    tests/num/fn_softmax.tx tests/num/row_groups.tx tests/num/f32_blocks.tx tests/num/complex_updates.tx tests/num/complex_blocks.tx \
    tests/num/transpose_lines.tx tests/num/fn_cumsum.tx tests/num/flat_rows_store.tx tests/num/stream_note.tx
run "standalone C compiled by Clang, with BLAS and LAPACK" "$PYTHON" tests/run_cc.py --txc "$TXC" --cc clang --blas \
    tests/num/matmul.tx tests/num/la_cholesky.tx tests/num/complex_linalg.tx tests/num/delta_blas.tx
run "standalone C under OpenMP, 1 and 2 threads" "$PYTHON" tests/run_cc.py --txc "$TXC" --openmp \
    tests/num/par_kernels.tx tests/num/fn_cumsum.tx tests/num/matmul.tx tests/num/row_groups.tx \
    tests/num/elementwise_spans.tx tests/num/flat_rows_store.tx tests/num/stream_note.tx tests/num/copy_rows.tx
run "standalone C with -DTX_STREAM_BYTES=0: every store that may stream does" "$PYTHON" tests/run_cc.py --txc "$TXC" \
    --stream tests/num/elementwise_mix.tx tests/num/elementwise_spans.tx tests/num/elementwise_transposed.tx \
    tests/num/f32_basic.tx tests/num/f32_blocks.tx tests/num/f32_steps.tx tests/num/transpose.tx \
    tests/num/transposed_panels.tx tests/num/accumulate_inout.tx tests/num/row_groups.tx \
    tests/num/transpose_lines.tx tests/num/flat_rows_store.tx tests/num/stream_note.tx tests/num/stream_multi_step.tx \
    tests/num/stream_select.tx tests/num/blocks_maxmin_nan.tx tests/num/blocks_where.tx tests/num/fn_max.tx tests/num/fn_clip.tx \
    tests/num/flat_transposed.tx tests/num/copy_rows.tx
run "standalone C with -DTX_USE_SLEEF, at 2, 4 and 8 doubles" "$PYTHON" tests/run_cc.py --txc "$TXC" --sleef \
    tests/num/fn_exp.tx tests/num/fn_tanh.tx tests/num/fn_softmax.tx tests/num/fn_logsumexp.tx \
    tests/num/fn_log.tx tests/num/fn_sin.tx tests/num/fn_f32_softmax.tx tests/num/f32_blocks.tx tests/num/f32_steps.tx \
    tests/num/elementwise_spans.tx
run "standalone C with -DTX_USE_LIBMVEC, alone and with -DTX_USE_SLEEF, at 2, 4 and 8 doubles" "$PYTHON" tests/run_cc.py \
    --txc "$TXC" --libmvec tests/num/fn_exp.tx tests/num/fn_tanh.tx tests/num/fn_softmax.tx \
    tests/num/fn_logsumexp.tx tests/num/fn_log.tx tests/num/fn_sin.tx tests/num/fn_f32_softmax.tx \
    tests/num/f32_blocks.tx tests/num/f32_steps.tx tests/num/elementwise_spans.tx tests/num/power_frac.tx \
    tests/num/fn_cos.tx tests/num/fn_f32_unary.tx tests/num/f64_exp_odd_lanes.tx tests/num/f32_exp_odd_lanes.tx \
    tests/num/tanh_odd_lanes.tx
run "standalone C with BLAS and LAPACK" "$PYTHON" tests/run_cc.py --txc "$TXC" --blas tests/num/matmul.tx \
    tests/num/four_index.tx tests/num/batched_matmul.tx tests/num/f32_basic.tx $(ls tests/num/la_*.tx) \
    tests/num/complex_contract.tx tests/num/complex_linalg.tx tests/num/complex64_linalg.tx \
    tests/num/complex_mixed_blas.tx tests/num/delta_blas.tx tests/num/blas_empty_sum.tx tests/num/inout_split_sum.tx \
    tests/num/blas_batches.tx
# the CCSD port (bench/rccsd.tx, o=4 v=10) against PySCF's update_amps written
# in numpy (bench/rccsd.py): through txc run at each level, as standalone C
# with and without BLAS (twice through the Python package: tests/python)
run "RCCSD port vs numpy: txc run -O0, -O1, -O2" "$PYTHON" tests/run_num.py --txc "$TXC" -O0 -O1 -O2 bench/rccsd.tx
run "RCCSD port vs numpy: standalone C" "$PYTHON" tests/run_cc.py --txc "$TXC" bench/rccsd.tx
run "RCCSD port vs numpy: standalone C with BLAS" "$PYTHON" tests/run_cc.py --txc "$TXC" --blas bench/rccsd.tx
run "contraction order vs numpy's optimal path" "$PYTHON" tests/run_order.py --txc "$TXC"
run "reference evaluator of .tx vs LANGUAGE.md 4.1 (self-test)" "$PYTHON" tests/ref/test_txref.py
# txc against the reference evaluator (tests/run_diff.py, issue 14): every
# row of 4.1's table, the issue's cases and one program per cause found
# (tests/ref/known; the question_*.tx there is a point LANGUAGE.md leaves
# open, which txc rejects with an error), at every level and as standalone
# C; then 200 random programs, seeded.
run "txc vs reference: 4.1 table rows, issue cases, causes" "$PYTHON" tests/run_diff.py \
    --txc "$TXC" --levels 0,1,2 --cc --programs $(ls tests/ref/known/*.tx | grep -v /question_)
run "txc vs reference: 200 random programs (seed 1, -O0 -O1 -O2, standalone C)" "$PYTHON" \
    tests/run_diff.py --txc "$TXC" --count 200 --seed 1 --levels 0,1,2 --cc
run "Python package (pytest: einsum vs numpy, programs, threads)" sh tests/run_python.sh
run "txc vs reference: 150 random programs with dims, delta, comparisons, where, *= /=, diagonals (--ext)" \
    "$PYTHON" tests/run_diff.py --txc "$TXC" --count 150 --seed 1 --ext --levels 0,1,2 --cc
run "txc vs reference: 120 random complex programs (c64, c128; --ext; -O0 -O1 -O2, standalone C)" \
    "$PYTHON" tests/run_diff.py --txc "$TXC" --count 120 --seed 1 --complex --ext --levels 0,1,2 --cc
run "examples (.tx and embedding C)" sh tests/run_examples.sh
run "make install, pkg-config builds" sh tests/run_install.sh
run "man pages render cleanly, one per function" sh tests/run_man.sh
run "bad run-time input and allocation failures" sh tests/run_cli.sh
run "output files: aliases refused, all or nothing, signals, modes, options" sh tests/run_outputs.sh
run "compiler stages through txc (graph --after, internal errors)" sh tests/run_pipeline.sh
run "linear-algebra failures (not positive definite, singular)" sh tests/run_la_failures.sh
run "bad sparse maps" sh tests/run_sparse_failures.sh
run "MPI: txc run --mpi on 1, 2, 4 ranks vs numpy and one process; --target mpi C (skipped without MPI)" \
    "$PYTHON" tests/run_mpi.py --txc "$TXC"
run "fuzzing smoke run (libFuzzer, ASan, UBSan)" sh tests/run_fuzz_smoke.sh
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
