#!/bin/bash
# Issue 16 on a machine of several GPUs, in one device call: build, the
# slab test (its multi-device comparisons), density + peaks of plummer3
# 10^8 (seed 0) on 1, 2 and all GPUs (and one GPU out of core), then 10^9
# particles (plummer3_chunks.py, seed 0) on all GPUs, timed from loading
# the .npy file.  Every run prints a hash of its peaks: equal hashes,
# equal peaks.
# usage: testing/gpu/run_slabs_multi.sh CARRY OUTDIR   (CARRY: make_synthetic.py)
# env: VIC_MULTI_SECONDS (570), VIC_MULTI_BIG (1000000000), VIC_MULTI_STEPS ("build tests scale big")
set -u
CARRY=$(cd "${1:?usage}" && pwd)
OUT=${2:?usage}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=/tmp/vic-multi-build
DATA=/tmp/vic-multi-data
LOG=/tmp/vic-multi-logs
BIG=${VIC_MULTI_BIG:-1000000000}
STEPS=${VIC_MULTI_STEPS:-build tests scale big}
mkdir -p "$OUT" "$DATA" "$LOG"
trap 'tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null' EXIT
DEADLINE=$(( $(date +%s) + ${VIC_MULTI_SECONDS:-570} ))
budget() { local l=$(( DEADLINE - $(date +%s) )); [ "$l" -gt "$1" ] && l=$1; echo "$l"; }
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
export PATH=/usr/local/cuda/bin:$PATH
SUM="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUM"; }
G=$(nvidia-smi -L 2>/dev/null | wc -l)
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1) x $G, $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GB"
say "== commit ${VIC_COMMIT:-?}"
F100="$DATA/plummer3_100M.npy"
FBIG="$DATA/plummer3c_$BIG.npy"
( python3 "$CARRY/make_synthetic.py" plummer3 100000000 "$F100" --seed 0 --format npy ) > "$LOG/data100.log" 2>&1 &
P100=$!
if has big; then
  ( s=$(date +%s); python3 "$SRC/testing/gpu/plummer3_chunks.py" "$BIG" "$FBIG" --seed 0 && echo "in $(( $(date +%s) - s )) s" ) \
    > "$LOG/databig.log" 2>&1 &
  PBIG=$!
fi
if has build; then
  t0=$(date +%s)
  if ! cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90 -DVIC_PLUGIN=OFF \
       -DVIC_SANITIZE_TESTS=OFF > "$LOG/build.log" 2>&1 ||
     ! cmake --build "$BUILD" -j 32 --target gpu_test_gpu_slabs density_bench >> "$LOG/build.log" 2>&1; then
    say "BUILD FAILED"; grep -E "error" "$LOG/build.log" | head -20 | tee -a "$SUM"; exit 1
  fi
  say "build: $(( $(date +%s) - t0 )) s"
fi
if has tests; then
  s=$(date +%s)
  timeout "$(budget 90)" "$BUILD/bin/gpu_test_gpu_slabs" > "$LOG/test_gpu_slabs.log" 2>&1
  say "test_gpu_slabs: rc=$? in $(( $(date +%s) - s )) s"
  grep -E "FAIL|failed|differ|device|passed" "$LOG/test_gpu_slabs.log" | head -12 | tee -a "$SUM"
fi
bench() { # label file seconds args...
  local label=$1 file=$2 lim; lim=$(budget "$3"); shift 3
  [ "$lim" -lt 15 ] && { say "$label: skipped (no time left)"; return; }
  local s=$(date +%s)
  ( cd "$BUILD" && timeout "$lim" ./bin/density_bench --data "$file" --name "$label" --k 32 --backend cuda --verbose \
      "$@" ) > "$LOG/$label.json" 2> "$LOG/$label.log"
  say "$label: rc=$? in $(( $(date +%s) - s )) s (load + warm-up + runs)"
  grep -E "loaded|repeat|slabs on|boundary edges,|failed|GPU peaks after" "$LOG/$label.log" | grep -v "of 640000" | head -8 | tee -a "$SUM"
  cat "$LOG/$label.json" | tee -a "$SUM" >> "$OUT/density_bench.json"
}
if has scale; then
  wait $P100
  say "data: $(tail -1 "$LOG/data100.log")"
  bench p100M_1gpu "$F100" 45 --repeats 1 --devices 1
  bench p100M_1gpu_ooc "$F100" 60 --repeats 1 --devices 1 --budget-mib 20000
  bench p100M_2gpu "$F100" 60 --repeats 1 --devices 2
  [ "$G" -ge 4 ] && bench p100M_4gpu "$F100" 60 --repeats 1 --devices 4
fi
if has big; then
  wait $PBIG
  say "data: $(tail -2 "$LOG/databig.log" | tr '\n' ' ')"
  sync; s=$(date +%s)
  bench p1B_all "$FBIG" 400 --repeats 1 --devices "$G"
  say "10^9 from the .npy file to the peaks: $(( $(date +%s) - s )) s wall (incl. the 20,000-point warm-up)"
fi
say "== done $(date -u +%FT%TZ)"
