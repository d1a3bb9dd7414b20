#!/usr/bin/env bash
# Reliability checks beyond the normal test run (.ci/run calls this after scripts/test.sh):
#  1. builds podsim with clang under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and runs the
#     test suite there; any sanitizer report fails the run;
#  2. runs each libFuzzer target (tests/fuzz) for FUZZ_SECONDS (default 20) from the checked-in corpus.
#     A crash or hang fails the run and leaves the reproducer in build-asan/fuzz-artifacts/: add it to
#     tests/fuzz/regressions/<target>/ (replayed by every normal test run) and fix the bug.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
scripts/setup.sh clang libclang-rt-14-dev
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPODSIM_SANITIZE=ON \
  -DPODSIM_FUZZ=ON -DPODSIM_BENCH=OFF -DPODSIM_CALIBRATION_TOOLS=OFF > /dev/null
cmake --build build-asan -j "$(nproc)"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp
# The validation and Slurm tests replay nothing the others do not; under the sanitizers they only cost time.
# The property test draws 120 of its 240 random configurations here (the normal run draws all 240): each
# forks a replay, which under ASan costs ~1 s of page-table copying, and 240 of them came within seconds of
# the 300 s ctest timeout on the 2-core CI machine.
export PODSIM_PROPERTY_CASES=${PODSIM_PROPERTY_CASES:-120}
ctest --test-dir build-asan -j "$(nproc)" --output-on-failure -E 'validation_megatron_sc21|slurm_sweep'

mkdir -p build-asan/fuzz-artifacts
for target in topology workload study csv nccl kernels; do
  work=build-asan/fuzz-corpus/$target
  rm -rf "$work" && mkdir -p "$work"
  cp tests/fuzz/corpus/$target/* "$work"/
  echo "fuzzing $target for ${FUZZ_SECONDS}s"
  build-asan/tests/fuzz_$target "$work" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-asan/fuzz-artifacts/$target- -print_final_stats=1 2>&1 | tail -4
done
echo "sanitizers and fuzzing: clean"
