#!/bin/bash
# One device call that checks every GPU part together: builds everything
# (no plugin) once, runs every GPU test (ctest -L gpu; on a machine with two
# GPUs test_multigpu also compares 1 and 2 devices), compute-sanitizer
# memcheck on the small case of every GPU test and racecheck on those with
# shared-memory cooperation, then (RELEASE_BENCH=1, the default) the
# foundation and density benchmarks through run_gpu.sh (same build folder,
# so its build step is incremental).  Each test is time-boxed, so a slow or
# hung one is reported and the rest still run.
#   usage: testing/gpu/run_release_check.sh OUTDIR
# The small case: argv "small" for the method tests that take it,
# VIC_TEST_SMALL=1 for the others (both are passed; each test reads its own).
# MEMCHECK_TESTS / RACECHECK_TESTS name the tests to sanitize (empty: none).
set -u
OUT=${1:?usage: run_release_check.sh OUTDIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${VIC_GPU_BUILD:-/tmp/vic-gpu-build}
DATA=${VICINITY_DATA_DIR:-$SRC/.gpu_carry/data}
mkdir -p "$OUT/tests"
export PATH=/usr/local/cuda/bin:$PATH
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sort | uniq -c | tr -s ' ')"
t0=$(date +%s)
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
  -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$DATA" > "$OUT/tests/build.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" >> "$OUT/tests/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - t0 )) s"
(cd "$BUILD" && timeout "${CTEST_LIMIT:-300}" ctest -L gpu --timeout 200 --output-on-failure) \
  > "$OUT/tests/ctest_gpu.log" 2>&1
echo "ctest -L gpu: rc=$?"; grep -E "Test +#|tests passed|tests failed" "$OUT/tests/ctest_gpu.log"
sanitize() { # tool test (racecheck is slow: test_grnnd's small case takes 160 s on an H100)
  local tool=$1 t=$2 log="$OUT/tests/$1_$2.log" limit=${SAN_LIMIT:-90}
  [ "$1" = racecheck ] && limit=${RACE_LIMIT:-240}
  [ -x "$BUILD/bin/gpu_$t" ] || { echo "$tool $t: not built"; return; }
  VIC_TEST_SMALL=1 VICINITY_DATA_DIR="$DATA" timeout "$limit" compute-sanitizer --tool "$tool" \
    --error-exitcode 9 "$BUILD/bin/gpu_$t" small > "$log" 2>&1
  echo "$tool $t: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
}
for t in ${MEMCHECK_TESTS-test_gpu_exact test_gpu_policy test_gpu_density test_gpu_peaks test_ggnn test_gnnd test_grnnd test_multigpu}; do
  sanitize memcheck "$t"
done
for t in ${RACECHECK_TESTS-test_gpu_exact test_grnnd}; do sanitize racecheck "$t"; done
[ "${RELEASE_BENCH:-1}" = 1 ] && VIC_GPU_BUILD=$BUILD "$SRC/testing/gpu/run_gpu.sh" "$OUT/exact"
echo "== $(date -u +%FT%TZ) done in $(( $(date +%s) - t0 )) s"
