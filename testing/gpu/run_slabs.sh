#!/bin/bash
# Issue 16 (density + peaks beyond one GPU's memory) in one device call:
# build, the GPU tests of the slabs and of the device peaks, compute-
# sanitizer memcheck on the slab test's small cases, then density_bench on
# plummer3 (seed 0): in core, out of core under budgets that force slabs
# (the peaks hash must equal the in-core run's), and --check against the
# CPU's vic_peaks_find on a subset.
# usage: testing/gpu/run_slabs.sh CARRY OUTDIR   (CARRY: make_synthetic.py)
# env: VIC_SLABS_N (100000000), VIC_SLABS_CHECK_N (20000000), VIC_SLABS_BUDGETS ("20000 40000" MiB),
#      VIC_SLABS_SECONDS (570), VIC_SLABS_DEVICES (1), VIC_SLABS_STEPS ("build tests sanitize bench check")
set -u
CARRY=$(cd "${1:?usage: run_slabs.sh CARRY OUTDIR}" && pwd)
OUT=${2:?usage: run_slabs.sh CARRY OUTDIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${VIC_GPU_BUILD:-/tmp/vic-slabs-build}
DATA=/tmp/vic-slabs-data
N=${VIC_SLABS_N:-100000000}
CHECK_N=${VIC_SLABS_CHECK_N:-20000000}
BUDGETS=${VIC_SLABS_BUDGETS:-20000 40000}
DEVICES=${VIC_SLABS_DEVICES:-1}
STEPS=${VIC_SLABS_STEPS:-build tests sanitize bench check}
LOG=/tmp/vic-slabs-logs
mkdir -p "$OUT" "$DATA" "$LOG"
trap 'tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null' EXIT
DEADLINE=$(( $(date +%s) + ${VIC_SLABS_SECONDS:-570} ))
budget() { local l=$(( DEADLINE - $(date +%s) )); [ "$l" -gt "$1" ] && l=$1; echo "$l"; }
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
export PATH=/usr/local/cuda/bin:$PATH
SUM="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUM"; }
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1) x $(nvidia-smi -L 2>/dev/null | wc -l)"
say "== commit ${VIC_COMMIT:-$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)}"

FILE="$DATA/plummer3_$N.npy"
( [ -f "$FILE" ] || python3 "$CARRY/make_synthetic.py" plummer3 "$N" "$FILE" --seed 0 --format npy ) > "$LOG/data.log" 2>&1 &
DATA_PID=$!

if has build; then
  t0=$(date +%s)
  if ! cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90 \
       -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF > "$LOG/build.log" 2>&1 ||
     ! cmake --build "$BUILD" -j 16 --target gpu_test_gpu_slabs gpu_test_gpu_peaks gpu_test_gpu_density density_bench \
       >> "$LOG/build.log" 2>&1; then
    say "BUILD FAILED"; grep -E "error" "$LOG/build.log" | head -20 | tee -a "$SUM"; exit 1
  fi
  say "build: $(( $(date +%s) - t0 )) s"
fi

run_test() { # name timeout [env]
  local t=$1 lim; lim=$(budget "$2"); shift 2
  [ "$lim" -lt 10 ] && { say "$t: skipped (no time left)"; return; }
  local s=$(date +%s)
  env "$@" timeout "$lim" "$BUILD/bin/gpu_$t" > "$LOG/$t.log" 2>&1
  local rc=$?
  say "$t: rc=$rc in $(( $(date +%s) - s )) s"
  grep -E "FAIL|differ|slabs|devices" "$LOG/$t.log" | head -24 | tee -a "$SUM"
}
if has tests; then
  run_test test_gpu_slabs 120
  run_test test_gpu_peaks 120
  run_test test_gpu_density 90
fi
if has sanitize; then
  lim=$(budget 120); s=$(date +%s)
  VIC_TEST_SMALL=1 timeout "$lim" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$BUILD/bin/gpu_test_gpu_slabs" > "$LOG/memcheck.log" 2>&1
  say "memcheck test_gpu_slabs (small): rc=$? in $(( $(date +%s) - s )) s; $(grep -E 'ERROR SUMMARY' "$LOG/memcheck.log" | tail -1)"
fi

wait $DATA_PID
say "data: $(tail -1 "$LOG/data.log")"
bench() { # label seconds args...
  local label=$1 lim; lim=$(budget "$2"); shift 2
  [ "$lim" -lt 15 ] && { say "$label: skipped (no time left)"; return; }
  local s=$(date +%s)
  ( cd "$BUILD" && OMP_NUM_THREADS=$(nproc) timeout "$lim" ./bin/density_bench --data "$FILE" --name "plummer3" \
      --k 32 --backend cuda --verbose "$@" ) > "$LOG/$label.json" 2> "$LOG/$label.log"
  say "$label: rc=$? in $(( $(date +%s) - s )) s"
  grep -E "repeat|check|slabs|boundary|budget|failed" "$LOG/$label.log" | head -12 | tee -a "$SUM"
  cat "$LOG/$label.json" | tee -a "$SUM" >> "$OUT/density_bench.json"
}
if has bench; then
  bench incore 120 --repeats 2 --devices "$DEVICES"
  for b in $BUDGETS; do bench "budget$b" 150 --repeats 1 --budget-mib "$b" --devices "$DEVICES"; done
fi
if has check; then
  bench check 150 --repeats 1 --limit "$CHECK_N" --check
fi
say "== done $(date -u +%FT%TZ)"
