#!/bin/bash
# Issue 8 in one device call: build the targets it needs, the GPU tests of
# density + peaks (full size), compute-sanitizer memcheck on their small
# cases, then density_bench on 10^7 plummer3 particles (--check: the CPU's
# vic_peaks_find on the same lists must give the same peaks).
# usage: testing/gpu/run_peaks.sh CARRY OUTDIR   (CARRY: make_synthetic.py and data/)
set -u
CARRY=$(cd "${1:?usage: run_peaks.sh CARRY OUTDIR}" && pwd)
OUT=${2:?usage: run_peaks.sh CARRY OUTDIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${VIC_GPU_BUILD:-/tmp/vic-peaks-build}
DATA=/tmp/vic-peaks-data
N=${VIC_PEAKS_N:-10000000}
LOG=/tmp/vic-peaks-logs
mkdir -p "$OUT" "$DATA" "$LOG"
# $OUT keeps summary.txt, density_bench.json and one archive of the logs
trap 'tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null' EXIT
# the call's limit: every step gets what is left of it, so the summary always comes back
DEADLINE=$(( $(date +%s) + ${VIC_PEAKS_SECONDS:-280} ))
budget() { local l=$(( DEADLINE - $(date +%s) )); [ "$l" -gt "$1" ] && l=$1; echo "$l"; }
export PATH=/usr/local/cuda/bin:$PATH
SUM="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUM"; }
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
# a copied tree has no .git of its own: the caller names its commit
say "== commit ${VIC_COMMIT:-$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)}"

( [ -f "$DATA/plummer3.npy" ] || python3 "$CARRY/make_synthetic.py" plummer3 "$N" "$DATA/plummer3.npy" --seed 0 \
    --format npy ) > "$LOG/data.log" 2>&1 &
DATA_PID=$!

t0=$(date +%s)
if ! cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90 \
     -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$CARRY/data" > "$LOG/build.log" 2>&1 ||
   ! cmake --build "$BUILD" -j 16 --target gpu_test_gpu_peaks gpu_test_gpu_density gpu_test_gpu_exact density_bench \
     >> "$LOG/build.log" 2>&1; then
  say "BUILD FAILED"; tail -30 "$LOG/build.log" | tee -a "$SUM"; exit 1
fi
say "build: $(( $(date +%s) - t0 )) s"

run_test() { # name timeout [env]
  local t=$1 lim; lim=$(budget "$2"); shift 2
  [ "$lim" -lt 10 ] && { say "$t: skipped (no time left)"; return; }
  local s=$(date +%s)
  env VICINITY_DATA_DIR="$CARRY/data" "$@" timeout "$lim" "$BUILD/bin/gpu_$t" > "$LOG/$t.log" 2>&1
  local rc=$?
  say "$t: rc=$rc in $(( $(date +%s) - s )) s; $(grep -cE 'FAIL|differ' "$LOG/$t.log") failure lines"
  grep -E "FAIL|: .*differ" "$LOG/$t.log" | head -8 | tee -a "$SUM"
}
run_test test_gpu_peaks 120

wait $DATA_PID
say "data: $(tail -1 "$LOG/data.log")"
s=$(date +%s)
( cd "$BUILD" && OMP_NUM_THREADS=$(nproc) timeout "$(budget 120)" ./bin/density_bench --data "$DATA/plummer3.npy" \
    --name plummer3 --k 32 --backend cuda --repeats 3 --check ) > "$OUT/density_bench.json" 2> "$LOG/density_bench.log"
say "density_bench plummer3 $N: rc=$? in $(( $(date +%s) - s )) s"
cat "$LOG/density_bench.log" "$OUT/density_bench.json" | tee -a "$SUM"

run_test test_gpu_density 90
for t in test_gpu_peaks test_gpu_density; do
  lim=$(budget 90)
  [ "$lim" -lt 10 ] && { say "memcheck $t: skipped (no time left)"; continue; }
  s=$(date +%s)
  VIC_TEST_SMALL=1 VICINITY_DATA_DIR="$CARRY/data" timeout "$lim" compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BUILD/bin/gpu_$t" > "$LOG/memcheck_$t.log" 2>&1
  say "memcheck $t (small): rc=$? in $(( $(date +%s) - s )) s; $(grep -E 'ERROR SUMMARY' "$LOG/memcheck_$t.log" | tail -1)"
done
if [ -n "${VIC_PEAKS_EXACT:-}" ]; then run_test test_gpu_exact 120; fi
say "== done $(date -u +%FT%TZ)"
