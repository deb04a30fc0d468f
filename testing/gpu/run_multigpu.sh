#!/bin/bash
# Several GPUs in one process, one device call: build the targets, the CPU
# and GPU tests, then on 10,000,000 points of uniform3 and plummer3 (seed 0)
# the grid kNN (k = 32) with 1 and 2 GPUs, and sharded GGNN on manifold
# 1M x 128 (2 shards, 10,000 queries seed 1, exact truth by ggnn_truth.py)
# (deterministic construction) with 1, 1 again and 2 GPUs; compute-sanitizer
# memcheck on the small test (time-boxed); the atomic construction's 1 vs 2
# GPUs when time is left.
# Usage (repo root, on the GPU machine): testing/gpu/run_multigpu.sh [OUTDIR]
# QUICK=1: 1,000,000 3-d points and manifold 200,000 (a debugging pass).
set -u
N3=10000000; NM=1000000
[ "${QUICK:-0}" = 1 ] && { N3=1000000; NM=200000; }
LIMIT=${LIMIT:-400}   # seconds this script may take; each step's timeout is cut to what is left
tmo() { local t=$1 l=$((LIMIT - SECONDS)); [ $l -lt $t ] && t=$l; [ $t -lt 5 ] && t=1; echo $t; }
OUT=${1:-${OUT:-/tmp/out}}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CARRY=$SRC/.gpu_carry; [ -d "$CARRY" ] || CARRY=$SRC/../../.gpu_carry
B=/tmp/b-multigpu
D=/tmp/multigpu-data
mkdir -p "$OUT" $D
SUM=$OUT/summary.txt
JSON=$OUT/bench.jsonl
: > "$SUM"; : > "$JSON"
say() { echo "$*" | tee -a "$SUM"; }
say "== $(date -u +%FT%TZ) commit ${COMMIT:-$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)}"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee -a "$SUM"
nvidia-smi topo -m 2>/dev/null | head -4 >> "$SUM"

gen() { python3 "$CARRY/make_synthetic.py" "$@"; }
( gen uniform3 $N3 $D/u.npy --seed 0 --format npy && gen plummer3 $N3 $D/p.npy --seed 0 --format npy &&
  gen manifold $NM $D/m.fvecs --seed 0 && gen manifold 10000 $D/mq.fvecs --seed 1 &&
  CUDA_VISIBLE_DEVICES=0 python3 "$SRC/testing/gpu/ggnn_truth.py" $D/m.fvecs $D/mq.fvecs $D/m ) > $OUT/data.log 2>&1 &
DATA=$!

G=""; command -v ninja >/dev/null && G="-G Ninja"
cmake -S "$SRC" -B $B $G -DVIC_PLUGIN=OFF -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native -DVIC_SANITIZE_TESTS=OFF \
  -DVICINITY_DATA_DIR="$CARRY/data" > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cmake --build $B -j 16 --target test_multigpu gpu_test_multigpu multigpu_bench >> $OUT/build.log 2>&1 ||
  { grep -B2 -A12 -m3 'error' $OUT/build.log | tee -a "$SUM"; exit 1; }
say "== build ok"

say "== core test_multigpu (CPU parts)"; timeout $(tmo 60) $B/bin/test_multigpu >> "$SUM" 2>&1; say "rc=$?"
say "== gpu test_multigpu"; timeout $(tmo 200) $B/bin/gpu_test_multigpu >> "$SUM" 2>&1; say "rc=$?"

timeout $(tmo 200) tail --pid=$DATA -f /dev/null; tail -8 $OUT/data.log >> "$SUM"
MB=$B/bin/multigpu_bench
say "== grid $N3 points k=32, 1 and 2 GPUs alternately, 3 runs each"
timeout $(tmo 120) $MB grid $D/u.npy uniform3 32 1 2 1 2 1 2 2>>"$SUM" | tee -a "$JSON" >> "$SUM"
timeout $(tmo 120) $MB grid $D/p.npy plummer3 32 1 2 1 2 1 2 2>>"$SUM" | tee -a "$JSON" >> "$SUM"
say "== sharded GGNN manifold $NM x 128, k_build 24, 2 shards, tau 0.5, deterministic: 1, 1 again, 2, 2 again GPUs"
timeout $(tmo 150) $MB ggnn $D/m $NM 10000 128 24 $((NM / 2)) 0.5 1 1 1 2 2 2>>"$SUM" | tee -a "$JSON" >> "$SUM"

say "== memcheck (small, time-boxed)"
timeout $(tmo 120) compute-sanitizer --tool memcheck --leak-check full $B/bin/gpu_test_multigpu small > $OUT/memcheck.log 2>&1
say "memcheck rc=$?"; grep -m3 -A6 "Invalid\|Misaligned\|Uninitialized" $OUT/memcheck.log >> "$SUM"; tail -4 $OUT/memcheck.log >> "$SUM"

if [ $((LIMIT - SECONDS)) -gt 70 ]; then
  say "== the same with the atomic (default) construction: 1, 2 GPUs"
  timeout $(tmo 90) $MB ggnn $D/m $NM 10000 128 24 $((NM / 2)) 0.5 0 1 2 2>>"$SUM" | tee -a "$JSON" >> "$SUM"
fi
if [ $((LIMIT - SECONDS)) -gt 40 ]; then
  say "== reference: one unsharded graph (shard_size 0), deterministic, 1 GPU"
  timeout $(tmo 60) $MB ggnn $D/m $NM 10000 128 24 0 0.5 1 1 2>>"$SUM" | tee -a "$JSON" >> "$SUM"
fi
say "== $(date -u +%FT%TZ) done"
