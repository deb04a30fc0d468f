#!/bin/bash
# GPU runner (issue 4): configure and build on the GPU machine, run the GPU
# tests (ctest -L gpu), compute-sanitizer memcheck and racecheck on small
# cases, and the GPU benchmarks beside the PyTorch peer, all in one call.
#
# usage: testing/gpu/run_gpu.sh OUTDIR      (or VIC_GPU_OUT=OUTDIR)
# Inputs that do not travel with the repository come from .gpu_carry/ (an
# ignored folder): make_synthetic.py and data/{mnist,nbody}.  Set
# VIC_GPU_SKIP_BENCH=1 for tests only, VIC_GPU_BENCH_SMALL=1 for 1/10 sizes.
# OUTDIR receives at most a few files (the device tool returns 8):
#   summary.txt, bench.jsonl, logs.tar.gz
set -u
OUT=${1:-${VIC_GPU_OUT:-gpu-out}}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=$SRC/.gpu_carry
BUILD=${VIC_GPU_BUILD:-/tmp/vic-gpu-build}
DATA=${VIC_GPU_DATA:-/tmp/vic-gpu-data}
LOG=$(mktemp -d)
mkdir -p "$OUT" "$DATA"
SUM=$OUT/summary.txt
JSON=$OUT/bench.jsonl
: > "$SUM"
: > "$JSON"
say() { echo "$*" | tee -a "$SUM"; }
finish() { tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap finish EXIT

say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
say "== commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) $(git -C "$SRC" status --short 2>/dev/null | wc -l) files changed"

# ---- build ------------------------------------------------------------------
t0=$(date +%s)
if ! cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
     -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$CARRY/data" > "$LOG/configure.log" 2>&1 ||
   ! cmake --build "$BUILD" -j 16 --target gpu_test_gpu_exact vicinity_bench gpu_test_gpu_density density_bench > "$LOG/build.log" 2>&1; then
  say "BUILD FAILED"; tail -40 "$LOG/build.log" "$LOG/configure.log" | tee -a "$SUM"; exit 1
fi
say "build: $(( $(date +%s) - t0 )) s"

# ---- data (CPU, in the background while the tests run) ------------------------
N1=1000000; N3=10000000
[ -n "${VIC_GPU_BENCH_SMALL:-}" ] && N1=100000 && N3=1000000
gen() { [ -f "$DATA/$1" ] || /usr/bin/env python3 "$CARRY/make_synthetic.py" "$2" "$3" "$DATA/$1" --seed 0 --format npy; }
if [ -z "${VIC_GPU_SKIP_BENCH:-}" ]; then
  ( gen manifold.npy manifold $N1 && gen uniform3.npy uniform3 $N3 && gen plummer3.npy plummer3 $N3 ) > "$LOG/data.log" 2>&1 &
  GEN=$!
fi

# ---- tests ------------------------------------------------------------------
t0=$(date +%s)
(cd "$BUILD" && timeout 300 ctest -L gpu -R gpu.test_gpu_exact --output-on-failure -V) > "$LOG/ctest.log" 2>&1
say "ctest -L gpu (test_gpu_exact): rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed|tests failed' "$LOG/ctest.log")"
grep -E "rows differ|check failed|SKIP|^([0-9]+: )?timing " "$LOG/ctest.log" | sed 's/^[0-9]*: //' >> "$SUM"
# GPU densities vs CPU (issue 8)
t0=$(date +%s)
(cd "$BUILD" && timeout 300 ctest -L gpu -R gpu.test_gpu_density --output-on-failure -V) > "$LOG/ctest_density.log" 2>&1
say "ctest -L gpu (test_gpu_density): rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed|tests failed' "$LOG/ctest_density.log")"
grep -E "check failed|SKIP" "$LOG/ctest_density.log" | sed 's/^[0-9]*: //' >> "$SUM"

# ---- compute-sanitizer on the small cases -----------------------------------
for tool in memcheck racecheck; do
  t0=$(date +%s)
  VIC_TEST_SMALL=1 VICINITY_DATA_DIR="$CARRY/data" timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 \
    "$BUILD/bin/gpu_test_gpu_exact" > "$LOG/sanitizer_$tool.log" 2>&1
  say "compute-sanitizer $tool: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer_$tool.log" | tail -1)"
done

# ---- benchmarks -------------------------------------------------------------
[ -n "${VIC_GPU_SKIP_BENCH:-}" ] && exit 0
wait $GEN; say "data: rc=$? $(grep -i checksum "$LOG/data.log" | tr '\n' ' ')"
B=$BUILD/bin/vicinity_bench
bench() { # name, file, method, k
  timeout 200 "$B" --data "$DATA/$2" --name "$1" --method "$3" --backend cuda --k "$4" --warmup 1 --repeats 2 \
    --recall-sample 1000 >> "$JSON" 2>> "$LOG/bench.err"
  say "vicinity $1 $3 k=$4: rc=$?"
}
bench manifold-1M manifold.npy brute 10
timeout 200 /usr/bin/env python3 "$SRC/testing/gpu/torch_peer.py" "$DATA/manifold.npy" --name manifold-1M --k 10 \
  >> "$JSON" 2>> "$LOG/bench.err"
say "torch manifold-1M k=10: rc=$?"
bench uniform3-10M uniform3.npy grid 32
bench plummer3-10M plummer3.npy grid 32
# density + peaks on plummer3 (issue 8): lists + densities on the GPU, peaks on the CPU
timeout 300 "$BUILD/bin/density_bench" --data "$DATA/plummer3.npy" --name plummer3-10M --k 32 --backend cuda \
  --repeats 2 >> "$JSON" 2>> "$LOG/bench.err"
say "density_bench plummer3-10M k=32: rc=$?"
say "== bench.jsonl"
cat "$JSON" | tee -a "$SUM" > /dev/null
/usr/bin/env python3 - "$JSON" <<'PY' | tee -a "$SUM"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    st = r.get("seconds_stages", {})
    print(f"{r['dataset']:14s} {r['method']:18s} k={r['k']:<3d} {r['seconds']:8.3f} s  kernel {st.get('kernel', float('nan')):7.3f}  "
          f"transfer {st.get('transfer', float('nan')):7.3f}  recall {r.get('recall')}")
PY
