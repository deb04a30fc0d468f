#!/bin/bash
# Issue 23 on the GPU machine (run from the repository root, programs from
# testing/gpu/build_ggm_carry.sh in build-carry/).
#   run_ggm.sh tests            test_ggm and test_gnnd
#   run_ggm.sh sanitizer S      compute-sanitizer memcheck of test_ggm's add / merge /
#                               sharded cases on 3,000 rows, at most S seconds
#   run_ggm.sh bench N MODES    vicinity_bench on `manifold` N x 96, k = 10, recall@10 on
#                               10,000 sampled rows (exact, torch on the GPU: gnnd_truth.py).
#                               MODES, comma-separated: build (in-memory GNND, the rebuild),
#                               add (vic_knn_add of 10 %), ooc (vic_knn_build under a quarter
#                               of the in-memory device need: out of core by itself), file
#                               (vic_knn_build_sharded, same budget, memory-mapped work file),
#                               oocall (ooc on every GPU of the machine)
# Logs and JSON lines go to $OUT.
set -u
B=build-carry
OUT=${OUT:-/tmp/ggm_out}
mkdir -p "$OUT"
[ -f "$OUT/card.txt" ] || { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader;
                            date -u +%Y-%m-%dT%H:%M:%SZ; } > "$OUT/card.txt"
case "$1" in
tests)
  { timeout 40 $B/test_ggm; echo "test_ggm rc=$?"; timeout 40 $B/test_gnnd; echo "test_gnnd rc=$?"; } > "$OUT/tests.log" 2>&1
  grep rc= "$OUT/tests.log" ;;
sanitizer)
  VIC_TEST_SMALL=1 timeout "${2:-45}" compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_ggm \
    > "$OUT/sanitizer.log" 2>&1
  echo "sanitizer rc=$?" >> "$OUT/sanitizer.log"
  tail -4 "$OUT/sanitizer.log" ;;
bench)
  N=$2
  D=/tmp/manifold_${N}_96.npy
  T=/tmp/truth_$N
  t0=$(date +%s)
  [ -f $D ] || python3 $B/make_synthetic.py manifold $N $D --d 96 --format npy > "$OUT/data_$N.txt"
  [ -f $T/truth.i32 ] || python3 testing/gpu/gnnd_truth.py $D $T --sample 10000 >> "$OUT/data_$N.txt"
  rm -f $T/data.f32
  echo "data and truth: $(( $(date +%s) - t0 )) s" >> "$OUT/data_$N.txt"
  # in-memory device need of GNND (vick_gnnd_bytes, K = 32, p = 16) and a quarter of it
  Q=$(python3 -c "n=$N; d=96; K=32; M=32; b=n*(d*4+K*9+(K//32)*4+M*8+16+K*8)+(1<<20); print(b//4>>20)")
  J="$OUT/bench_$N.jsonl"
  BENCH="$B/vicinity_bench --data $D --name manifold_${N}_96 --method gnnd --k 10 --sample-rows $T/sample.i32
         --sample-truth $T/truth.i32"
  for m in ${3//,/ }; do
    case $m in
    build) $BENCH --warmup 1 --repeats 1 >> "$J" 2>> "$OUT/bench.err" ;;
    add) $BENCH --add-fraction 0.1 --repeats 1 >> "$J" 2>> "$OUT/bench.err" ;;
    ooc) $BENCH --budget-mib "$Q" >> "$J" 2>> "$OUT/bench.err" ;;
    oocall) $BENCH --budget-mib "$Q" --devices -1 >> "$J" 2>> "$OUT/bench.err" ;;
    file) mkdir -p /tmp/ggm_work && $BENCH --sharded 1 --budget-mib "$Q" --work-dir /tmp/ggm_work >> "$J" \
            2>> "$OUT/bench.err" ;;
    esac
    echo "N=$N $m done at $(( $(date +%s) - t0 )) s (quarter budget $Q MiB)" >> "$OUT/bench.err"
  done
  cut -c1-300 "$J" ;;
esac
