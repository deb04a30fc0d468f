#!/bin/bash
# One device call for the exact brute force (issue 4): build the two
# targets it needs, time vicinity_bench beside the PyTorch peer on the same
# manifold 1M x 128 rows while the GPU is otherwise idle, then run
# test_gpu_exact (full size) and compute-sanitizer memcheck and racecheck
# on its small cases, the three together (they only have to pass).
#
# usage: testing/gpu/run_brute_check.sh OUTDIR
#   VIC_GPU_CARRY  folder with make_synthetic.py and data/ (default
#                  SRC/.gpu_carry)
#   VIC_GPU_BASE   another source tree (an earlier commit) to time first, as
#                  "manifold-1M base", for a same-call comparison
# OUTDIR gets summary.txt, bench.jsonl and logs.tar.gz.
set -u
OUT=${1:?usage: run_brute_check.sh OUTDIR}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=${VIC_GPU_CARRY:-$SRC/.gpu_carry}
BUILD=${VIC_GPU_BUILD:-/tmp/vic-brute-build}
DATA=${VIC_GPU_DATA:-/tmp/vic-brute-data}
LOG=$(mktemp -d)
mkdir -p "$OUT" "$DATA"
SUM=$OUT/summary.txt
JSON=$OUT/bench.jsonl
: > "$SUM"; : > "$JSON"
say() { echo "$*" | tee -a "$SUM"; }
finish() { tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap finish EXIT
export PATH=/usr/local/cuda/bin:$PATH
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"

# the data on the CPU while the build runs
( [ -f "$DATA/m.npy" ] || python3 "$CARRY/make_synthetic.py" manifold 1000000 "$DATA/m.npy" --seed 0 --format npy ) \
  > "$LOG/data.log" 2>&1 &
GEN=$!

t0=$(date +%s)
if ! cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
     -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$CARRY/data" > "$LOG/configure.log" 2>&1 ||
   ! cmake --build "$BUILD" -j 16 --target gpu_test_gpu_exact vicinity_bench > "$LOG/build.log" 2>&1; then
  say "BUILD FAILED"; tail -40 "$LOG/configure.log" "$LOG/build.log" | tee -a "$SUM"; exit 1
fi
say "build: $(( $(date +%s) - t0 )) s"
BASE=${VIC_GPU_BASE:-}
if [ -n "$BASE" ] && ! { cmake -S "$BASE" -B "$BUILD-base" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON \
     -DVIC_CUDA_ARCHITECTURES=native -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF > "$LOG/configure_base.log" 2>&1 &&
     cmake --build "$BUILD-base" -j 16 --target vicinity_bench > "$LOG/build_base.log" 2>&1; }; then
  say "BASE BUILD FAILED"; BASE=
fi
wait $GEN; say "data: rc=$? $(grep sha256 "$LOG/data.log")"

# timings first, one program on the GPU at a time
B=$BUILD/bin/vicinity_bench
if [ -n "$BASE" ]; then
  timeout 120 "$BUILD-base/bin/vicinity_bench" --data "$DATA/m.npy" --name "manifold-1M base" --method brute \
    --backend cuda --k 10 --warmup 1 --repeats 3 --recall-sample 1000 >> "$JSON" 2> "$LOG/bench_base.err"
  say "base brute k=10: rc=$?"
fi
timeout 120 "$B" --data "$DATA/m.npy" --name manifold-1M --method brute --backend cuda --k 10 --warmup 1 --repeats 3 \
  --recall-sample 1000 >> "$JSON" 2> "$LOG/bench.err"
say "vicinity brute k=10: rc=$?"
timeout 120 python3 "$SRC/testing/gpu/torch_peer.py" "$DATA/m.npy" --name manifold-1M --k 10 >> "$JSON" 2>> "$LOG/bench.err"
say "torch k=10: rc=$?"
python3 - "$JSON" <<'PY' | tee -a "$SUM"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in rows:
    st = r.get("seconds_stages", {})
    print(f"{r['dataset']:17s} {r['method']:18s} {r['seconds']:8.3f} s  kernel {st.get('kernel', float('nan')):7.3f}  "
          f"transfer {st.get('transfer', float('nan')):6.3f}  recall {r.get('recall')}  "
          f"gemm/select one chunk {st.get('gemm (one chunk)')} / {st.get('select (one chunk)')}  "
          f"recomputed {st.get('recomputed rows (count)')}")
ours = [r["seconds"] for r in rows if r["method"] == "brute" and r["dataset"] == "manifold-1M"]
peer = [r["seconds"] for r in rows if r["method"].startswith("torch")]
if ours and peer:
    ours.sort()
    med = ours[len(ours) // 2]
    print(f"speed-up over PyTorch, wall to wall: median {peer[0] / med:.2f}x (best {peer[0] / ours[0]:.2f}x, "
          f"worst {peer[0] / ours[-1]:.2f}x)")
PY

# correctness: full-size tests and the sanitizers on the small cases together
t0=$(date +%s)
(cd "$BUILD" && timeout 200 ctest -R gpu.test_gpu_exact --output-on-failure -V) > "$LOG/ctest.log" 2>&1 &
CT=$!
sanit() {
  VIC_TEST_SMALL=1 VICINITY_DATA_DIR="$CARRY/data" timeout 200 compute-sanitizer --tool "$1" --error-exitcode 9 \
    "$BUILD/bin/gpu_test_gpu_exact" > "$LOG/sanitizer_$1.log" 2>&1
  echo "compute-sanitizer $1: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer_$1.log" | tail -1)" \
    > "$LOG/sanitizer_$1.sum"
}
sanit memcheck & M=$!
sanit racecheck & R=$!
wait $CT; rc=$?
say "ctest test_gpu_exact: rc=$rc: $(grep -E 'tests passed|tests failed' "$LOG/ctest.log")"
grep -E "rows differ|check failed|SKIP" "$LOG/ctest.log" | sed 's/^[0-9]*: //' >> "$SUM"
wait $M $R
cat "$LOG/sanitizer_memcheck.sum" "$LOG/sanitizer_racecheck.sum" | tee -a "$SUM"
say "tests and sanitizers: $(( $(date +%s) - t0 )) s"
