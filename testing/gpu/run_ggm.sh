#!/bin/bash
# Issue 23 on the GPU machine (run from the repository root, programs from
# testing/gpu/build_ggm_carry.sh in build-carry/): the GGM tests, test_gnnd,
# compute-sanitizer memcheck of the add / merge / sharded paths on 3,000
# rows, then vicinity_bench on `manifold` N x 96 (k = 10): in-memory GNND
# (the rebuild), vic_knn_add of 10 %, and out-of-core builds under a
# quarter of the in-memory device need (vic_knn_build choosing it itself,
# and vic_knn_build_sharded with a memory-mapped work file).
# usage: run_ggm.sh N [tests|notests]   (writes logs and JSON lines to $OUT)
set -u
N=${1:-2000000}
B=build-carry
OUT=${OUT:-/tmp/ggm_out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/card.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/card.txt"
if [ "${2:-tests}" = tests ]; then
  { timeout 40 $B/test_ggm; echo "test_ggm rc=$?"; timeout 40 $B/test_gnnd; echo "test_gnnd rc=$?"; } > "$OUT/tests.log" 2>&1
  grep rc= "$OUT/tests.log"
fi
D=/tmp/manifold_${N}_96.fvecs
[ -f $D ] || python3 $B/make_synthetic.py manifold $N $D --d 96 > "$OUT/data_$N.txt"
# in-memory device need of GNND (vick_gnnd_bytes, K = 32, p = 16) and a quarter of it
Q=$(python3 -c "n=$N; d=96; K=32; M=32; b=n*(d*4+K*9+(K//32)*4+M*8+16+K*8)+(1<<20); print(b//4>>20)")
J="$OUT/bench_$N.jsonl"
BENCH="$B/vicinity_bench --data $D --name manifold_${N}_96 --method gnnd --k 10 --recall-sample 2000"
$BENCH --warmup 1 --repeats 2 >> "$J" 2>> "$OUT/bench.err"
$BENCH --add-fraction 0.1 --repeats 2 >> "$J" 2>> "$OUT/bench.err"
$BENCH --budget-mib "$Q" >> "$J" 2>> "$OUT/bench.err"
mkdir -p /tmp/ggm_work && $BENCH --sharded 1 --budget-mib "$Q" --work-dir /tmp/ggm_work >> "$J" 2>> "$OUT/bench.err"
echo "quarter budget: $Q MiB" >> "$OUT/bench.err"
cut -c1-400 "$J"
tail -5 "$OUT/bench.err"
if [ "${2:-tests}" = tests ]; then
  VIC_TEST_SMALL=1 timeout ${SANITIZER_S:-45} compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_ggm \
    > "$OUT/sanitizer.log" 2>&1
  echo "sanitizer rc=$?" >> "$OUT/sanitizer.log"
  tail -4 "$OUT/sanitizer.log"
fi
