#!/bin/bash
# One device call for issue 7 (GRNND, TSDG, small/large-batch graph search):
# the GPU test, compute-sanitizer memcheck on its small case, then the
# benchmark on manifold 1,000,000 x 128 (seed 0) with 10,000 queries (seed 1)
# and on islands (same sizes), exact 100-NN of the queries from torch
# (grnnd_truth.py).  RACECHECK=1 adds compute-sanitizer racecheck on the
# small case.  A compact table comes last.
#
#   testing/gpu/run_grnnd_tsdg.sh OUTDIR [N]
#
# Binaries: .gpu_carry/grnnd/{test_grnnd,grnnd_bench} when carried (linked
# on the CPU machine by testing/gpu/build_grnnd_carry.sh), else built here
# with CMake (only those two targets).  make_synthetic.py from
# .gpu_carry/ (or ../shared/tools).  GRNND_GGNN=0 leaves GGNN out.
set -u
OUT=${1:?usage: run_grnnd_tsdg.sh OUTDIR [N]}
N=${2:-1000000}
M=10000
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
SYN=.gpu_carry/make_synthetic.py
[ -f $SYN ] || SYN=../shared/tools/make_synthetic.py
D=/tmp/grnnd-data
B=.gpu_carry/grnnd
mkdir -p $D/m $D/i
T0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $OUT/card.txt

gen() { python3 $SYN "$@"; }
( [ -f $D/i/qtruth.i32 ] && exit 0
  gen manifold $N $D/m.fvecs --seed 0 && gen manifold $M $D/mq.fvecs --seed 1 &&
  python3 testing/gpu/grnnd_truth.py $D/m.fvecs $D/mq.fvecs $D/m && rm -f $D/m.fvecs &&
  gen islands $N $D/i.fvecs --seed 0 && gen islands $M $D/iq.fvecs --seed 1 &&
  python3 testing/gpu/grnnd_truth.py $D/i.fvecs $D/iq.fvecs $D/i && rm -f $D/i.fvecs ) > $OUT/data.log 2>&1 &
DATA=$!

if [ ! -x $B/grnnd_bench ] || [ ! -x $B/test_grnnd ]; then
  echo "== building (no carried binaries)"
  BD=/tmp/grnnd-build
  { cmake -S . -B $BD -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native -DVIC_PLUGIN=OFF \
      -DVIC_SANITIZE_TESTS=OFF && cmake --build $BD -j 16 --target gpu_test_grnnd grnnd_bench; } > $OUT/build.log 2>&1 ||
    tail -20 $OUT/build.log
  B=/tmp/grnnd-bin
  mkdir -p $B
  cp "$(find $BD -name gpu_test_grnnd -type f | head -1)" $B/test_grnnd
  cp "$(find $BD -name grnnd_bench -type f | head -1)" $B/grnnd_bench
fi

if [ -x $B/test_grnnd ]; then
  echo "== test_grnnd"
  timeout 120 $B/test_grnnd 2>&1 | tee $OUT/test.log; echo "test rc=${PIPESTATUS[0]}"
  echo "== memcheck (small case)"
  timeout 90 compute-sanitizer --tool memcheck --leak-check no $B/test_grnnd small > $OUT/memcheck.log 2>&1
  echo "memcheck rc=$?"; grep -m3 -A6 "Invalid\|Misaligned\|Uninitialized\|Race" $OUT/memcheck.log; tail -3 $OUT/memcheck.log
  if [ "${RACECHECK:-0}" = 1 ]; then
    echo "== racecheck (small case, shared-memory hazards)"
    timeout 90 compute-sanitizer --tool racecheck $B/test_grnnd small > $OUT/racecheck.log 2>&1
    echo "racecheck rc=$?"; tail -3 $OUT/racecheck.log
  fi
fi

wait $DATA; echo "data rc=$? ($(( $(date +%s) - T0 )) s)"; tail -4 $OUT/data.log
G=ggnn; [ "${GRNND_GGNN:-1}" = 0 ] && G=""
echo "== manifold"
timeout ${BENCH_LIMIT:-200} $B/grnnd_bench $D/m $N $M 128 $G 2>&1 | tee $OUT/bench_manifold.log
echo "== islands"
timeout ${ISLANDS_LIMIT:-120} $B/grnnd_bench $D/i $N $M 128 quick 2>&1 | tee $OUT/bench_islands.log
echo
echo "==== GRNND / TSDG summary ($(head -1 $OUT/card.txt); $(( $(date +%s) - T0 )) s) ===="
grep -h "^test_grnnd\|check failed" $OUT/test.log 2>/dev/null | head -5
grep -h "ERROR SUMMARY" $OUT/memcheck.log 2>/dev/null
grep -h "RACECHECK SUMMARY\|ERROR SUMMARY" $OUT/racecheck.log 2>/dev/null
for f in manifold islands; do
  echo "-- $f"
  sed -n '/==== summary/,$p' $OUT/bench_$f.log | tail -n +2
done
