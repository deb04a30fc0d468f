#!/bin/bash
# Streamed kNN lists (issue 16, lists part) on the GPU machine, one call:
# build this tree and a baseline tree, the new GPU test, its
# compute-sanitizer memcheck, the n*k > 2^31 case, the exact-method GPU
# tests, then vicinity_bench before (baseline) and after on uniform3 10M and
# plummer3 60M, k = 32, lists in host memory.
#
# usage: testing/gpu/run_streamed_lists.sh OUTDIR BASELINE_SRC MAKE_SYNTHETIC_PY
# VIC_LIGHT=1 leaves out the n*k > 2^31 case and the exact-method tests;
# VIC_MORE=1 adds int32 lists and 8 host threads to the benches.
# Every step logs to OUTDIR (summary.txt, bench.jsonl, logs.tar.gz) with its
# own timeout, so a slow step cannot take the others' results with it.
set -u -x
OUT=$1
BASE=$2
GEN=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=/tmp/vic-i16a-build
BB=/tmp/vic-i16a-base
DATA=/tmp/vic-i16a-data
LOG=$(mktemp -d)
mkdir -p "$OUT" "$DATA"
SUM=$OUT/summary.txt
JSON=$OUT/bench.jsonl
: > "$SUM"
: > "$JSON"
say() { echo "$*" | tee -a "$SUM"; }
finish() { tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null; }
trap finish EXIT
step() { # step NAME TIMEOUT CMD...: runs CMD with a timeout, logs to $LOG/NAME.log
  local name=$1 t=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$t" "$@" > "$LOG/$name.log" 2>&1
  local rc=$?
  say "$name: rc=$rc in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
  return $rc
}

say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null)"
say "== this tree $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null); baseline $(git -C "$BASE" rev-parse --short HEAD 2>/dev/null)"
say "== host: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"

# ---- data in the background (CPU), builds side by side ------------------------
( python3 "$GEN" uniform3 10000000 "$DATA/uniform3.npy" --seed 0 --format npy &&
  python3 "$GEN" plummer3 60000000 "$DATA/plummer3.npy" --seed 0 --format npy ) > "$LOG/data.log" 2>&1 &
GENPID=$!
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90 \
        -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF > "$LOG/$3_configure.log" 2>&1; }
( cfg "$BASE" "$BB" base && cmake --build "$BB" -j 8 --target vicinity_bench > "$LOG/base_build.log" 2>&1 ) &
BASEPID=$!
step build 300 bash -c "cmake -S '$SRC' -B '$B' -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON \
  -DVIC_CUDA_ARCHITECTURES=90 -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF && cmake --build '$B' -j 12 --target \
  vicinity_bench gpu_test_knn_stream gpu_test_gpu_exact gpu_test_multigpu test_knn_into test_list_stream" ||
  { tail -30 "$LOG/build.log" | tee -a "$SUM"; exit 1; }
wait $BASEPID; say "base build: rc=$? $(tail -1 "$LOG/base_build.log")"

# ---- tests ----------------------------------------------------------------------
step test_knn_stream 120 "$B/bin/gpu_test_knn_stream"
grep -E "equal|pieces|check failed|SKIP|big" "$LOG/test_knn_stream.log" >> "$SUM"
step cpu_tests 120 bash -c "'$B/bin/test_knn_into' && '$B/bin/test_list_stream'"
tail -2 "$LOG/cpu_tests.log" >> "$SUM"

# ---- benches: before (baseline) and after, same data, same machine ---------------
wait $GENPID; say "data: rc=$? $(grep -c . "$LOG/data.log") lines: $(grep -i sha "$LOG/data.log" | tr '\n' ' ')"
bench() { # bench TAG BIN SET REPEATS [extra args]
  local tag=$1 bin=$2 set=$3 rep=$4; shift 4
  timeout 240 "$bin" --data "$DATA/$set.npy" --name "${set}_$tag" --method grid --backend cuda --k 32 --recall-sample 0 \
    --warmup 1 --repeats "$rep" "$@" > "$LOG/bench_${set}_$tag.log" 2> "$LOG/bench_${set}_$tag.err"
  say "bench $set $tag: rc=$? $(grep -o '"seconds":[0-9.]*' "$LOG/bench_${set}_$tag.log" | tr '\n' ' ')"
  cat "$LOG/bench_${set}_$tag.log" >> "$JSON"
}
bench before "$BB/bin/vicinity_bench" uniform3 2
bench after "$B/bin/vicinity_bench" uniform3 3
bench after_into64 "$B/bin/vicinity_bench" uniform3 2 --into int64
[ -n "${VIC_MORE:-}" ] && bench after_into32 "$B/bin/vicinity_bench" uniform3 2 --into int32
[ -n "${VIC_MORE:-}" ] && bench after_threads8 "$B/bin/vicinity_bench" uniform3 2 --threads 8
bench after "$B/bin/vicinity_bench" plummer3 2
[ -n "${VIC_MORE:-}" ] && bench after_into32 "$B/bin/vicinity_bench" plummer3 1 --into int32
bench before "$BB/bin/vicinity_bench" plummer3 1

# ---- sanitizer, the n*k > 2^31 case, the exact GPU tests -----------------------------
step memcheck 200 env VIC_TEST_SMALL=1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
  "$B/bin/gpu_test_knn_stream"
grep -E "ERROR SUMMARY|LEAK SUMMARY|check failed" "$LOG/memcheck.log" | sort | uniq -c >> "$SUM"
[ -n "${VIC_LIGHT:-}" ] && { say "== done (light) $(date -u +%FT%TZ)"; exit 0; }
step big 200 env VIC_TEST_BIG=1 "$B/bin/gpu_test_knn_stream"
grep -E "^big|check failed" "$LOG/big.log" >> "$SUM"
step test_multigpu 120 "$B/bin/gpu_test_multigpu"
grep -E "check failed|passed|SKIP" "$LOG/test_multigpu.log" | head -5 >> "$SUM"
step test_gpu_exact 240 "$B/bin/gpu_test_gpu_exact"
grep -E "check failed|passed|SKIP" "$LOG/test_gpu_exact.log" | head -8 >> "$SUM"
say "== done $(date -u +%FT%TZ)"
