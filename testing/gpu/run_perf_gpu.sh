#!/bin/bash
# One GPU-machine call for the exact methods and GGNN construction together
# (issues 4 and 5): build, GPU tests, memcheck, the benchmarks (brute force
# vs the PyTorch peer on manifold 1M, the grid on uniform3 / plummer3 10M,
# then a GGNN tau_build / merge-iteration sweep on the same manifold file),
# racecheck last.  Inputs that do not travel come from .gpu_carry/.
#
# usage: testing/gpu/run_perf_gpu.sh OUTDIR
#   GGNN_BUILD_CONFIGS  "TB:IT:R,..." (tau_build : merge iterations : refinements)
# OUTDIR gets summary.txt, bench.jsonl, ggnn.txt, logs.tar.gz.
set -u
OUT=${1:-gpu-out}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=$SRC/.gpu_carry
BUILD=/tmp/vic-perf-build
DATA=/tmp/vic-perf-data
LOG=$(mktemp -d)
mkdir -p "$OUT" "$DATA/g"
SUM=$OUT/summary.txt
JSON=$OUT/bench.jsonl
: > "$SUM"; : > "$JSON"
say() { echo "$*" | tee -a "$SUM"; }
finish() { tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap finish EXIT
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
say "== commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) $(git -C "$SRC" status --short 2>/dev/null | wc -l) files changed"

# data on the CPU while building and testing
gen() { [ -f "$DATA/$2" ] || python3 "$CARRY/make_synthetic.py" "$1" "$3" "$DATA/$2" --seed "$4" --format "$5"; }
( gen manifold m.fvecs 1000000 0 fvecs && gen manifold mq.fvecs 10000 1 fvecs &&
  gen uniform3 u3.npy 10000000 0 npy && gen plummer3 p3.npy 10000000 0 npy ) > "$LOG/data.log" 2>&1 &
GEN=$!

t0=$(date +%s)
if ! cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
     -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$CARRY/data" > "$LOG/configure.log" 2>&1 ||
   ! cmake --build "$BUILD" -j 16 --target gpu_test_gpu_exact gpu_test_gpu_policy vicinity_bench vicinity_kernels > "$LOG/build.log" 2>&1 ||
   ! nvcc -O2 -I"$SRC/kernels/include" "$SRC/testing/gpu/ggnn_bench.c" "$BUILD/lib/libvicinity_kernels.a" -lcublas -lcublasLt \
       -o /tmp/ggnn_bench >> "$LOG/build.log" 2>&1; then
  say "BUILD FAILED"; tail -40 "$LOG/build.log" "$LOG/configure.log" | tee -a "$SUM"; exit 1
fi
say "build: $(( $(date +%s) - t0 )) s"

t0=$(date +%s)
(cd "$BUILD" && timeout 200 ctest -L gpu -R "gpu.test_gpu_(exact|policy)" --output-on-failure -V) > "$LOG/ctest.log" 2>&1
say "ctest test_gpu_exact+policy: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed|tests failed' "$LOG/ctest.log")"
grep -E "rows differ|check failed|SKIP|^([0-9]+: )?timing " "$LOG/ctest.log" | sed 's/^[0-9]*: //' >> "$SUM"
sanit() {
  t0=$(date +%s)
  VIC_TEST_SMALL=1 VICINITY_DATA_DIR="$CARRY/data" timeout "$2" compute-sanitizer --tool "$1" --error-exitcode 9 \
    "$BUILD/bin/gpu_test_gpu_exact" > "$LOG/sanitizer_$1.log" 2>&1
  say "compute-sanitizer $1: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer_$1.log" | tail -1)"
}
sanit memcheck 60

wait $GEN; say "data: rc=$?"
t0=$(date +%s)
python3 "$SRC/testing/gpu/ggnn_truth.py" "$DATA/m.fvecs" "$DATA/mq.fvecs" "$DATA/g" > "$LOG/truth.log" 2>&1
say "ggnn truth: rc=$? in $(( $(date +%s) - t0 )) s"

B=$BUILD/bin/vicinity_bench
bench() { # name, file, method, k
  timeout 120 "$B" --data "$DATA/$2" --name "$1" --method "$3" --backend cuda --k "$4" --warmup 1 --repeats 1 \
    --recall-sample 1000 >> "$JSON" 2>> "$LOG/bench.err"
  say "vicinity $1 $3 k=$4: rc=$?"
}
bench manifold-1M m.fvecs brute 10
python3 - "$DATA/m.fvecs" "$DATA/m.npy" <<'PY'
import numpy as np, sys
raw = np.fromfile(sys.argv[1], dtype=np.float32); d = raw[:1].view(np.int32)[0]
np.save(sys.argv[2], np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:]))
PY
timeout 120 python3 "$SRC/testing/gpu/torch_peer.py" "$DATA/m.npy" --name manifold-1M --k 10 >> "$JSON" 2>> "$LOG/bench.err"
say "torch manifold-1M k=10: rc=$?"
bench uniform3-10M u3.npy grid 32
bench plummer3-10M p3.npy grid 32
python3 - "$JSON" <<'PY' | tee -a "$SUM"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    st = r.get("seconds_stages", {})
    print(f"{r['dataset']:14s} {r['method']:18s} k={r['k']:<3d} {r['seconds']:8.3f} s  kernel {st.get('kernel', float('nan')):7.3f}  "
          f"transfer {st.get('transfer', float('nan')):7.3f}  recall {r.get('recall')}  stages {st}")
PY

t0=$(date +%s)
GGNN_BUILD_CONFIGS=${GGNN_BUILD_CONFIGS:-0.5:64:2,0.3:64:2,0.5:32:2,0.3:32:1,0.5:128:2} \
  timeout 200 /tmp/ggnn_bench "$DATA/g" 1000000 10000 128 24 10000 0.1 0.15 0.2 0.3 > "$OUT/ggnn.txt" 2>&1
say "ggnn sweep: rc=$? in $(( $(date +%s) - t0 )) s"
sanit racecheck 100
