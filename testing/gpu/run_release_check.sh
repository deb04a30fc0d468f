#!/bin/bash
# One device call that checks every GPU part together: builds everything
# (no plugin) once, runs every GPU test (ctest -L gpu) and compute-sanitizer
# memcheck on the small cases of the method tests, then the foundation and
# density benchmarks through run_gpu.sh (same build folder, so its build step
# is incremental).  usage: testing/gpu/run_release_check.sh OUTDIR
set -u
OUT=${1:?usage: run_release_check.sh OUTDIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${VIC_GPU_BUILD:-/tmp/vic-gpu-build}
mkdir -p "$OUT/tests"
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
  -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$SRC/.gpu_carry/data" > "$OUT/tests/build.log" 2>&1 &&
  cmake --build "$BUILD" -j 16 >> "$OUT/tests/build.log" 2>&1
echo "build rc=$? in $(( $(date +%s) - t0 )) s"
(cd "$BUILD" && timeout 240 ctest -L gpu -E "test_gpu_exact|test_gpu_density" --output-on-failure) \
  > "$OUT/tests/ctest_methods.log" 2>&1
echo "ctest -L gpu (method tests): rc=$?"; grep -E "Test +#|tests passed|tests failed" "$OUT/tests/ctest_methods.log"
for t in test_gnnd test_gpu_policy test_gpu_density; do
  [ -x "$BUILD/bin/gpu_$t" ] || continue
  VIC_TEST_SMALL=1 VICINITY_DATA_DIR="$SRC/.gpu_carry/data" timeout 90 compute-sanitizer --tool memcheck \
    --error-exitcode 9 "$BUILD/bin/gpu_$t" > "$OUT/tests/memcheck_$t.log" 2>&1
  echo "memcheck $t: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/tests/memcheck_$t.log" | tail -1)"
done
VIC_GPU_BUILD=$BUILD "$SRC/testing/gpu/run_gpu.sh" "$OUT/exact"
