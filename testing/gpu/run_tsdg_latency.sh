#!/bin/bash
# Single-query latency of the graph search (issue 7 follow-up: the pivot
# stage fused into the small-batch kernel, the index's reusable workspace,
# the core's small-batch defaults) in one device call, under 300 s on an
# H100 with 16 cores:
#  1. CMake build of the two programs it runs (gpu_test_grnnd, grnnd_bench;
#     sm_90, -j16) while the data are made;
#  2. side by side: test_grnnd (GPU results against the CPU reference) and
#     compute-sanitizer memcheck and racecheck on its small case, 90 s each
#     (racecheck is slow: a timeout leaves a partial report);
#  4. grnnd_bench in latency mode on manifold 1,000,000 x 128 (seed 0) with
#     10,000 queries (seed 1), exact 100-NN by grnnd_truth.py, no GGNN:
#     batch 1 and 10, GPU time and wall time of the whole call through the
#     kernel API (small-batch settings around recall@10 0.95, large-batch
#     lists 16-32) and through the public API (the core's defaults).
#
#   testing/gpu/run_tsdg_latency.sh OUTDIR
#
# Needs make_synthetic.py in .gpu_carry/ (or ../shared/tools), python3 with
# numpy and torch, cmake.  BUILD=dir reuses a build folder (default
# /tmp/b-tsdg-lat); BIN=dir skips the build and runs gpu_test_grnnd and
# grnnd_bench from there (only binaries built from this same tree);
# DATA=dir the data folder (default /tmp/grnnd-data, the same as
# run_grnnd_tsdg.sh's, reused when present).
set -u
OUT=${1:?usage: run_tsdg_latency.sh OUTDIR}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
N=1000000
M=10000
B=${BUILD:-/tmp/b-tsdg-lat}
D=${DATA:-/tmp/grnnd-data}
SYN=.gpu_carry/make_synthetic.py
[ -f $SYN ] || SYN=../shared/tools/make_synthetic.py
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $OUT/card.txt
git log -1 --format='commit %H %s' 2>/dev/null | tee $OUT/commit.txt

mkdir -p $D
( [ -f $D/m/qtruth.i32 ] && exit 0
  python3 $SYN manifold $N $D/m.fvecs --seed 0 && python3 $SYN manifold $M $D/mq.fvecs --seed 1 &&
  python3 testing/gpu/grnnd_truth.py $D/m.fvecs $D/mq.fvecs $D/m && rm -f $D/m.fvecs ) > $OUT/data.log 2>&1 &
DATA_PID=$!

if [ -n "${BIN:-}" ]; then
  # binaries linked elsewhere from this very tree (never older ones)
  echo "== using $BIN/gpu_test_grnnd and $BIN/grnnd_bench"
  TEST=$BIN/gpu_test_grnnd
  BENCH=$BIN/grnnd_bench
  BRC=0
else
  echo "== build ($B)"
  { cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90 -DVIC_PLUGIN=OFF \
      -DVIC_SANITIZE_TESTS=OFF && cmake --build $B -j 16 --target gpu_test_grnnd grnnd_bench; } > $OUT/build.log 2>&1
  BRC=$?
  echo "build rc=$BRC ($(el))"
  TEST=$(find $B -name gpu_test_grnnd -type f -perm -u+x | head -1)
  BENCH=$(find $B -name grnnd_bench -type f -perm -u+x | head -1)
fi
if [ $BRC -ne 0 ] || [ -z "$TEST" ] || [ -z "$BENCH" ]; then
  tail -30 $OUT/build.log
  exit 1
fi

# side by side (none of them is timed): the test, and the sanitizers on its small case
echo "== test_grnnd, compute-sanitizer memcheck and racecheck (small case; 90 s each)"
timeout 120 $TEST > $OUT/test.log 2>&1 &
TP=$!
timeout 90 compute-sanitizer --tool memcheck --leak-check no $TEST small > $OUT/memcheck.log 2>&1 &
MC=$!
timeout 90 compute-sanitizer --tool racecheck $TEST small > $OUT/racecheck.log 2>&1 &
RC=$!
wait $TP; echo "test rc=$?"
grep -h "recall\|check failed\|all checks" $OUT/test.log
wait $MC; echo "memcheck rc=$?"
wait $RC; echo "racecheck rc=$? (124: stopped by its timeout, partial) ($(el))"
grep "Race reported\|Invalid\|Misaligned\|Uninitialized" $OUT/memcheck.log $OUT/racecheck.log 2>/dev/null |
  sed 's/^[^:]*log://' | sed 's/+0x[0-9a-f]*//' | sort | uniq -c | sort -rn | head -20 > $OUT/sanitizer_distinct.txt
cat $OUT/sanitizer_distinct.txt

wait $DATA_PID
echo "data rc=$? ($(el))"
tail -3 $OUT/data.log
echo "== grnnd_bench latency (manifold $N x 128, $M queries)"
timeout ${BENCH_LIMIT:-150} $BENCH $D/m $N $M 128 latency > $OUT/bench.log 2>&1
echo "bench rc=$? ($(el))"

echo
echo "==== TSDG / GRNND latency summary ($(head -1 $OUT/card.txt); $(el)) ===="
grep -h "^test_grnnd\|check failed" $OUT/test.log | head -5
grep -h "ERROR SUMMARY" $OUT/memcheck.log
grep -h "RACECHECK SUMMARY\|ERROR SUMMARY" $OUT/racecheck.log
sed -n '/==== summary/,$p' $OUT/bench.log | tail -n +2
