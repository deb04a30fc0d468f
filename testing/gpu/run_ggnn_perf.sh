#!/bin/bash
# One GPU-machine call for GGNN speed work (issue 5): compile the GGNN
# kernels once per variant (compile-time tuning flags, so alternatives run
# on the same card in the same call), then per variant test_ggnn,
# compute-sanitizer memcheck of the small test, ggnn_bench on manifold 1M
# (k = 24 and 32) and MNIST t10k; racecheck of the first variant last.  The first variant also
# gets the extra build settings (FIRST24) and k = 40.  Data and exact truth
# are made on the machine while the kernels compile.
#
# usage (repo root, GPU machine): testing/gpu/run_ggnn_perf.sh OUT
#   VARIANTS  "name:FLAG,FLAG name2:..." (default "default:"; flags go to nvcc)
#   CARRY     folder with make_synthetic.py and data/mnist (default .gpu_carry)
#   CONFIGS24 / CONFIGS32 / FIRST24 / CONFIGS40   ggnn_bench GGNN_BUILD_CONFIGS
#   TAUS / MNIST_TAUS   tau_query sweeps
#   ISLANDS   tau_query sweep on islands 1M (first variant, k = 24); empty = none
set -u
OUT=${1:?usage: run_ggnn_perf.sh OUT}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=${CARRY:-$SRC/.gpu_carry}
VARIANTS=${VARIANTS:-default:}
CONFIGS24=${CONFIGS24:-0.5:64:2}
CONFIGS32=${CONFIGS32:-0.5:64:2}
FIRST24=${FIRST24:-}
CONFIGS40=${CONFIGS40:-}
TAUS=${TAUS:-0.08 0.1 0.12 0.15 0.2}
MNIST_TAUS=${MNIST_TAUS:-0 0.02 0.05 0.1}
ISLANDS=${ISLANDS:-}
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
  truth $D/mn.fvecs $D/mnq.fvecs $D/mn
  [ -z "$ISLANDS" ] || [ -f $D/i/truth.i32 ] || { gen islands 1000000 $D/i.fvecs --seed 0
                                               gen islands 10000 $D/iq.fvecs --seed 1; truth $D/i.fvecs $D/iq.fvecs $D/i; }
  ) > $OUT/data.log 2>&1 &
DATA=$!

kbuild() { # output folder, nvcc flags...
  local o=$1; shift
  mkdir -p $o
  local pids=""
  for f in $SRC/kernels/src/ggnn_*.cu $SRC/kernels/src/common.cu; do
    nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo "$@" -I$SRC/kernels/include \
      -I$SRC/kernels/src -c $f -o $o/$(basename $f .cu).o &
    pids="$pids $!"
  done
  for p in $pids; do wait $p || return 1; done
  for p in test_ggnn ggnn_bench; do
    nvcc -O2 -I$SRC/kernels/include $SRC/testing/gpu/$p.c $o/*.o -lcublas -o $o/$p || return 1
  done
}
t=$(date +%s)
BPIDS=""
for v in $VARIANTS; do
  name=${v%%:*}; flags=${v#*:}
  ( kbuild $W/$name ${flags//,/ } ) > $W/build_$name.log 2>&1 &
  BPIDS="$BPIDS $name:$!"
done
for bp in $BPIDS; do
  wait ${bp#*:} || { say "BUILD FAILED ${bp%%:*}"; grep -B2 -A6 error $W/build_${bp%%:*}.log | head -40 | tee -a "$SUM"; exit 1; }
done
say "build: $(( $(date +%s) - t )) s"

for v in $VARIANTS; do
  t=$(date +%s)
  timeout 60 $W/${v%%:*}/test_ggnn >> $OUT/test.log 2>&1
  say "test_ggnn ${v%%:*}: rc=$? in $(( $(date +%s) - t )) s: $(tail -1 $OUT/test.log)"
done

for v in $VARIANTS; do
  t=$(date +%s)
  timeout 60 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $W/${v%%:*}/test_ggnn small \
    > $W/memcheck.log 2>&1
  say "memcheck test_ggnn small ${v%%:*}: rc=$? in $(( $(date +%s) - t )) s: $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)"
  tail -12 $W/memcheck.log >> $OUT/memcheck_tail.log
done
wait $DATA
say "data: rc=$? at $(( $(date +%s) - T0 )) s"
bench() { # label, binary, configs, args...
  local l=$1 b=$2 c=$3; shift 3
  local t=$(date +%s)
  echo "#### $l: GGNN_BUILD_CONFIGS=$c ggnn_bench $*" >> $OUT/bench.txt
  GGNN_BUILD_CONFIGS=$c timeout 100 $b "$@" >> $OUT/bench.txt 2>&1
  say "$l: rc=$? in $(( $(date +%s) - t )) s"
}
first=1
for v in $VARIANTS; do
  n=${v%%:*}; b=$W/$n/ggnn_bench
  c24=$CONFIGS24; [ $first = 1 ] && [ -n "$FIRST24" ] && c24="$CONFIGS24,$FIRST24"
  bench "$n manifold k=24" $b "$c24" $D/m 1000000 10000 128 24 10000 $TAUS
  bench "$n manifold k=32" $b "$CONFIGS32" $D/m 1000000 10000 128 32 10000 $TAUS
  [ $first = 1 ] && [ -n "$CONFIGS40" ] && bench "$n manifold k=40" $b "$CONFIGS40" $D/m 1000000 10000 128 40 10000 $TAUS
  [ $first = 1 ] && [ -n "$ISLANDS" ] && bench "$n islands k=24" $b "0.5:64:2" $D/i 1000000 10000 128 24 10000 $ISLANDS
  [ $first = 1 ] && bench "$n mnist t10k all" $b "0.5:64:2" $D/mnall 10000 1000 784 24 10000 0.1
  bench "$n mnist 9000/1000" $b "0.5:64:2" $D/mn 9000 1000 784 24 9000 $MNIST_TAUS
  first=0
done
grep -E "^(####|== config|build n|for-all|   *[0-9])" $OUT/bench.txt >> "$SUM"

v=${VARIANTS%% *}
t=$(date +%s)
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 $W/${v%%:*}/test_ggnn small > $W/racecheck.log 2>&1
say "racecheck test_ggnn small ${v%%:*}: rc=$? in $(( $(date +%s) - t )) s: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $W/racecheck.log | tail -1)"
tail -12 $W/racecheck.log >> $OUT/memcheck_tail.log
say "total $(( $(date +%s) - T0 )) s"
