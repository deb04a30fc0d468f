#!/bin/bash
# Issue 7's remaining figures in one device call (H100, 16 cores), stages
# chosen by STAGES (default: all, in this order):
#   trace    stage times inside the fused small-batch kernel (a second
#            build with -DVIC_GS_TRACE=ON, grnnd_bench "profile");
#   profile  where a single query's small-batch time goes: grnnd_bench
#            "profile" (TSDG graph, batch 1, hop limit and t0 swept);
#            PROFILE_N="1000000 50000" also on the first 50,000 rows (the
#            data then fit in L2) for trace and profile;
#   ncu      Nsight Compute on one fused small-batch search (t0 16, 4 hops):
#            the details page and the per-SASS-line stall samples;
#   ncu_grnnd Nsight Compute on one early round of GRNND's kept-pairs
#            propagation (R 64, T1 2, T2 6): details page and per-SASS-line
#            stall samples;
#   compare  grnnd_bench "compare": GRNND settings, GGNN's bottom layers and
#            TSDG searched by the same large-batch procedure (build times at
#            equal recall), GGNN's own query at batch 10,000, k = 10 / 100;
#   grnnd    grnnd_bench "grnnd": the GRNND settings of GRNND_SETS
#            ("pairs,S,R,T1,T2,final_reverse;...", pairs k or r) against
#            GGNN's bottom layers (merge 64 and 32), same large-batch search;
#   latency  grnnd_bench "latency" (batch 1 and 10, small vs large);
#   islands  grnnd_bench "quick" on islands 1,000,000 x 128 (a disconnected
#            kNN graph): recall of every procedure;
#   tests    every GPU test and memcheck on their small cases
#            (run_release_check.sh, RELEASE_BENCH=0, no racecheck unless
#            RACECHECK_TESTS names tests).
# Data: manifold (and for "islands" islands) 1,000,000 x 128 seed 0,
# 10,000 queries seed 1, exact 100-NN (grnnd_truth.py), made while the code
# builds.
#   testing/gpu/run_grnnd_compare.sh OUTDIR
set -u
OUT=${1:?usage: run_grnnd_compare.sh OUTDIR}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
STAGES=${STAGES:-trace profile ncu compare grnnd latency islands tests}
N=1000000
M=10000
B=${VIC_GPU_BUILD:-/tmp/vic-gpu-build}
D=${DATA:-/tmp/grnnd-data}
SYN=.gpu_carry/make_synthetic.py
[ -f $SYN ] || SYN=../shared/tools/make_synthetic.py
T0=$(date +%s)
el() { echo "$(( $(date +%s) - T0 )) s"; }
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
git log -1 --format='commit %H %s' 2>/dev/null
date -u +%FT%TZ

mkdir -p $D
( [ -f $D/m/qtruth.i32 ] || { python3 $SYN manifold $N $D/m.fvecs --seed 0 &&
    python3 $SYN manifold $M $D/mq.fvecs --seed 1 &&
    python3 testing/gpu/grnnd_truth.py $D/m.fvecs $D/mq.fvecs $D/m && rm -f $D/m.fvecs; } || exit 1
  has islands || exit 0
  [ -f $D/i/qtruth.i32 ] || { python3 $SYN islands $N $D/i.fvecs --seed 0 &&
    python3 $SYN islands $M $D/iq.fvecs --seed 1 &&
    python3 testing/gpu/grnnd_truth.py $D/i.fvecs $D/iq.fvecs $D/i && rm -f $D/i.fvecs; } ) > $OUT/data.log 2>&1 &
DATA_PID=$!

# the whole build (the tests need it all); the release check's own build step is then a no-op
{ cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
    -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVICINITY_DATA_DIR="$PWD/.gpu_carry/data" &&
  cmake --build $B -j "$(nproc)"; } > $OUT/build.log 2>&1
BRC=$?
echo "build rc=$BRC ($(el))"
[ $BRC -eq 0 ] || { tail -30 $OUT/build.log; exit 1; }
BENCH=$(find $B -name grnnd_bench -type f -perm -u+x | head -1)
wait $DATA_PID
echo "data rc=$? ($(el))"
tail -2 $OUT/data.log

if has trace; then
  echo "== trace (a -DVIC_GS_TRACE=ON build of grnnd_bench)"
  { cmake -S . -B $B-trace -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native \
      -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVIC_GS_TRACE=ON && cmake --build $B-trace -j "$(nproc)" \
      --target grnnd_bench; } > $OUT/build_trace.log 2>&1 || { tail -20 $OUT/build_trace.log; exit 1; }
  for PN in ${PROFILE_N:-$N}; do
    echo "-- n = $PN (the first rows of the base set)"
    timeout 120 $(find $B-trace -name grnnd_bench -type f -perm -u+x | head -1) $D/m $PN $M 128 profile \
      > $OUT/trace.log 2>&1
    echo "trace rc=$? ($(el))"
    grep -v "^profile" $OUT/trace.log
  done
fi
if has profile; then
  echo "== profile"
  for PN in ${PROFILE_N:-$N}; do
    echo "-- n = $PN (the first rows of the base set; recall against the full set's truth only for n = $N)"
    timeout 120 $BENCH $D/m $PN $M 128 profile > $OUT/profile.log 2>&1
    echo "profile rc=$? ($(el))"
    grep "^profile" $OUT/profile.log
  done
fi
# Nsight Compute on one launch of a kernel of a grnnd_bench run: the details
# page, the per-SASS-line stall samples and the headline counters.
#   ncu_one NAME KERNEL_REGEX LAUNCHES_TO_SKIP TIMEOUT BENCH_MODE
ncu_one() {
  local name=$1 rep=$OUT/ncu_$1
  timeout $4 ncu --clock-control none -k regex:$2 --launch-skip $3 --launch-count 1 --set full \
    --import-source no -f -o $rep $BENCH $D/m $N $M 128 $5 > ${rep}_run.log 2>&1
  echo "ncu rc=$? ($(el))"
  tail -3 ${rep}_run.log
  [ -f $rep.ncu-rep ] || return
  ncu --import $rep.ncu-rep --page details > ${rep}_details.txt 2>&1
  ncu --import $rep.ncu-rep --page source --csv --print-source sass > ${rep}_source.csv 2>&1
  echo "ncu pages rc=$? ($(wc -l < ${rep}_source.csv) source lines)"
  grep -E "Duration|Elapsed Cycles|SM Frequency|Registers Per|Achieved Occupancy|Block Limit|Throughput|Hit Rate|Warp Cycles Per|Issue Slots Busy" \
    ${rep}_details.txt | head -40
  rm -f $rep.ncu-rep
}
if has ncu; then
  echo "== ncu"
  ncu_one small gs_small_kernel 20 240 ncu
fi
if has ncu_grnnd; then
  echo "== ncu_grnnd"
  GRNND_SETS="k,20,64,2,6,1" ncu_one grnnd gr_update_kept_kernel 3 300 grnnd
fi
if has compare; then
  echo "== compare"
  timeout 300 $BENCH $D/m $N $M 128 compare > $OUT/compare.log 2>&1
  echo "compare rc=$? ($(el))"
  sed -n '/==== compare/,$p' $OUT/compare.log
fi
if has grnnd; then
  echo "== grnnd (GRNND_SETS=${GRNND_SETS:-default})"
  timeout ${GRNND_LIMIT:-400} $BENCH $D/m $N $M 128 grnnd > $OUT/grnnd.log 2>&1
  echo "grnnd rc=$? ($(el))"
  grep ": build" $OUT/grnnd.log
  sed -n '/==== grnnd/,$p' $OUT/grnnd.log
fi
if has latency; then
  echo "== latency"
  timeout 200 $BENCH $D/m $N $M 128 latency > $OUT/latency.log 2>&1
  echo "latency rc=$? ($(el))"
  sed -n '/==== summary/,$p' $OUT/latency.log | tail -n +2
fi
if has islands; then
  echo "== islands (quick sweep: large batch 10,000, small batch 1 / 10 / 10,000)"
  timeout 150 $BENCH $D/i $N $M 128 quick > $OUT/islands.log 2>&1
  echo "islands rc=$? ($(el))"
  sed -n '/==== summary/,$p' $OUT/islands.log | tail -n +2
fi
if has tests; then
  echo "== tests"
  RELEASE_BENCH=0 RACECHECK_TESTS=${RACECHECK_TESTS-} VIC_GPU_BUILD=$B testing/gpu/run_release_check.sh $OUT/rc \
    > $OUT/tests.log 2>&1
  cat $OUT/tests.log
  tar czf $OUT/tests_logs.tgz -C $OUT rc && rm -rf $OUT/rc
fi
echo "== done ($(el))"
