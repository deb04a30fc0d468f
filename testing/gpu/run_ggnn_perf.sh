#!/bin/bash
# One GPU-machine call for GGNN speed work (issue 5): compile the GGNN
# kernels only (and, given BASE, those of an older checkout, so the baseline
# runs on the same card in the same call), test_ggnn, ggnn_bench on
# manifold 1M (k = 24 and 32) and MNIST t10k, then compute-sanitizer
# memcheck of the small test.  Data and exact truth are made on the machine
# while the kernels compile.
#
# usage (repo root, GPU machine): testing/gpu/run_ggnn_perf.sh OUT [BASE]
#   CARRY     folder with make_synthetic.py and data/mnist (default .gpu_carry)
#   CONFIGS24 / CONFIGS32   GGNN_BUILD_CONFIGS of the k = 24 / k = 32 runs
#   TAUS      tau_query sweep on manifold
set -u
OUT=${1:?usage: run_ggnn_perf.sh OUT [BASE]}
BASE=${2:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=${CARRY:-$SRC/.gpu_carry}
CONFIGS24=${CONFIGS24:-0.5:64:2}
CONFIGS32=${CONFIGS32:-0.5:32:2}
TAUS=${TAUS:-0.08 0.1 0.12 0.15 0.2}
W=/tmp/ggnn-perf
D=/tmp/ggnn-data
mkdir -p "$OUT" $W $D
SUM=$OUT/summary.txt
: > "$SUM"
say() { echo "$*" | tee -a "$SUM"; }
T0=$(date +%s)
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"

gen() { python3 "$CARRY/make_synthetic.py" "$@"; }
truth() { python3 "$SRC/testing/gpu/ggnn_truth.py" "$@"; }
( set -e
  [ -f $D/m/truth.i32 ] || { gen manifold 1000000 $D/m.fvecs --seed 0; gen manifold 10000 $D/mq.fvecs --seed 1
                            truth $D/m.fvecs $D/mq.fvecs $D/m; }
  mn=$CARRY/data/mnist/t10k-images-idx3-ubyte.gz
  python3 "$SRC/testing/gpu/mnist_fvecs.py" $mn $D/mnall.fvecs $D/mnallq.fvecs
  truth $D/mnall.fvecs $D/mnallq.fvecs $D/mnall
  python3 "$SRC/testing/gpu/mnist_fvecs.py" $mn $D/mn.fvecs $D/mnq.fvecs --split 9000
  truth $D/mn.fvecs $D/mnq.fvecs $D/mn ) > $OUT/data.log 2>&1 &
DATA=$!

kbuild() { # source tree, output folder
  mkdir -p $2
  for f in $1/kernels/src/ggnn_*.cu $1/kernels/src/common.cu; do
    nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo -I$1/kernels/include -I$1/kernels/src \
      -c $f -o $2/$(basename $f .cu).o &
  done
  wait
  for p in test_ggnn ggnn_bench; do
    nvcc -O2 -I$1/kernels/include $1/testing/gpu/$p.c $2/*.o -lcublas -o $2/$p || return 1
  done
}
t=$(date +%s)
( kbuild "$SRC" $W/new ) > $W/build.log 2>&1 &
B1=$!
[ -n "$BASE" ] && { ( kbuild "$BASE" $W/base ) > $W/build_base.log 2>&1 & }
wait $B1 || { say "BUILD FAILED"; grep -B2 -A6 error $W/build.log | head -60 | tee -a "$SUM"; exit 1; }
wait
say "build: $(( $(date +%s) - t )) s"

t=$(date +%s)
timeout 90 $W/new/test_ggnn > $OUT/test.log 2>&1
say "test_ggnn: rc=$? in $(( $(date +%s) - t )) s: $(tail -1 $OUT/test.log)"

wait $DATA
say "data: rc=$? at $(( $(date +%s) - T0 )) s"
bench() { # label, binary, configs, args...
  local l=$1 b=$2 c=$3; shift 3
  local t=$(date +%s)
  echo "#### $l: GGNN_BUILD_CONFIGS=$c ggnn_bench $*" >> $OUT/bench.txt
  GGNN_BUILD_CONFIGS=$c timeout 120 $b "$@" >> $OUT/bench.txt 2>&1
  say "$l: rc=$? in $(( $(date +%s) - t )) s"
}
bench "manifold k=24" $W/new/ggnn_bench "$CONFIGS24" $D/m 1000000 10000 128 24 10000 $TAUS
[ -x $W/base/ggnn_bench ] && bench "manifold k=24 BASE" $W/base/ggnn_bench 0.5:64:2 $D/m 1000000 10000 128 24 10000 0.1 0.15 0.2
bench "manifold k=32" $W/new/ggnn_bench "$CONFIGS32" $D/m 1000000 10000 128 32 10000 $TAUS
bench "mnist t10k all" $W/new/ggnn_bench "0.5:64:2" $D/mnall 10000 1000 784 24 10000 0.1
bench "mnist 9000/1000" $W/new/ggnn_bench "0.5:64:2" $D/mn 9000 1000 784 24 9000 0 0.05 0.1 0.2 0.3 0.5
grep -E "^(####|== config|build n|for-all|   *[0-9])" $OUT/bench.txt >> "$SUM"

t=$(date +%s)
timeout 100 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $W/new/test_ggnn small \
  > $W/memcheck.log 2>&1
say "memcheck test_ggnn small: rc=$? in $(( $(date +%s) - t )) s: $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)"
tail -30 $W/memcheck.log > $OUT/memcheck_tail.log
say "total $(( $(date +%s) - T0 )) s"
