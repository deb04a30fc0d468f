#!/bin/bash
# Issue 16's scaling table and the 10^9 run in one device call on a
# machine of several GPUs: build, test_gpu_slabs on all devices, then on
# plummer3 10^8 (seed 0) density + peaks (density_bench) and exact lists
# in host memory (vicinity_bench, grid) on 1, 2 and 4 GPUs, then 10^9
# rows of plummer3_chunks.py (seed 0) with density + peaks on all GPUs
# and on one GPU out of core (equal peaks hashes: equal peaks).  Every
# step has its own time limit, so partial results come back.
# usage: testing/gpu/run_slabs_scaling.sh CARRY OUTDIR   (CARRY: make_synthetic.py)
# env: VIC_SCALE_SECONDS (470), VIC_SCALE_BIG (1000000000), VIC_SCALE_STEPS ("build tests scale lists big big1",
#      run in that order), VIC_SCALE_BUDGETS (more one-GPU slab runs, budgets in MiB, e.g. "20000"),
#      VIC_SCALE_BIN (a folder of prebuilt density_bench, vicinity_bench, gpu_test_gpu_slabs: no build step),
#      VIC_SCALE_LIST_RUNS ("1 2": --warmup and --repeats of the list runs)
set -u
CARRY=$(cd "${1:?usage}" && pwd)
OUT=${2:?usage}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=/tmp/vic-scale-build
DATA=/tmp/vic-scale-data
LOG=/tmp/vic-scale-logs
BIG=${VIC_SCALE_BIG:-1000000000}
STEPS=${VIC_SCALE_STEPS:-build tests scale lists big big1}
mkdir -p "$OUT" "$DATA" "$LOG"
trap 'tar -C "$LOG" -czf "$OUT/logs.tar.gz" . 2>/dev/null' EXIT
DEADLINE=$(( $(date +%s) + ${VIC_SCALE_SECONDS:-470} ))
budget() { local l=$(( DEADLINE - $(date +%s) )); [ "$l" -gt "$1" ] && l=$1; echo "$l"; }
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
export PATH=/usr/local/cuda/bin:$PATH
SUM="$OUT/summary.txt"
say() { echo "$*" | tee -a "$SUM"; }
G=$(nvidia-smi -L 2>/dev/null | wc -l)
say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1) x $G, $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GB"
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
if [ -n "${VIC_SCALE_BIN:-}" ]; then
  mkdir -p "$BUILD" && rm -rf "$BUILD/bin" && ln -s "$(cd "$VIC_SCALE_BIN" && pwd)" "$BUILD/bin"
  STEPS=$(echo " $STEPS " | sed 's/ build / /')
  say "prebuilt binaries: $VIC_SCALE_BIN"
fi
if has build; then
  t0=$(date +%s)
  if ! cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90 -DVIC_PLUGIN=OFF \
       -DVIC_SANITIZE_TESTS=OFF > "$LOG/build.log" 2>&1 ||
     ! cmake --build "$BUILD" -j "$(nproc)" --target gpu_test_gpu_slabs density_bench vicinity_bench >> "$LOG/build.log" 2>&1; then
    say "BUILD FAILED"; grep -E "error" "$LOG/build.log" | head -20 | tee -a "$SUM"; exit 1
  fi
  say "build: $(( $(date +%s) - t0 )) s"
fi
dbench() { # label file seconds args...
  local label=$1 file=$2 lim; lim=$(budget "$3"); shift 3
  [ "$lim" -lt 15 ] && { say "$label: skipped (no time left)"; return; }
  local s=$(date +%s)
  ( cd "$BUILD" && timeout "$lim" ./bin/density_bench --data "$file" --name "$label" --k 32 --backend cuda --verbose \
      "$@" ) > "$LOG/$label.json" 2> "$LOG/$label.log"
  say "$label: rc=$? in $(( $(date +%s) - s )) s (load + warm-up + runs)"
  grep -E "loaded|repeat|slabs|leftover|GPU peaks after|failed|error" "$LOG/$label.log" | grep -v "of 640000" | head -12 | tee -a "$SUM"
  cat "$LOG/$label.json" >> "$OUT/density_bench.jsonl"
}
lbench() { # label devices seconds
  local label=$1 dev=$2 lim; lim=$(budget "$3")
  [ "$lim" -lt 15 ] && { say "$label: skipped (no time left)"; return; }
  local s=$(date +%s)
  local runs=(${VIC_SCALE_LIST_RUNS:-1 2})
  ( cd "$BUILD" && timeout "$lim" ./bin/vicinity_bench --data "$F100" --name plummer3_100M --method grid --backend cuda \
      --k 32 --recall-sample 0 --warmup "${runs[0]}" --repeats "${runs[1]}" --devices "$dev" ) > "$LOG/$label.json" 2> "$LOG/$label.log"
  say "$label: rc=$? in $(( $(date +%s) - s )) s"
  cut -c1-400 "$LOG/$label.json" | tee -a "$SUM"
  cat "$LOG/$label.json" >> "$OUT/vicinity_bench.jsonl"
}
step_tests() {
  s=$(date +%s)
  timeout "$(budget 60)" "$BUILD/bin/gpu_test_gpu_slabs" > "$LOG/test_gpu_slabs.log" 2>&1
  say "test_gpu_slabs${VIC_TEST_SMALL:+ (VIC_TEST_SMALL=$VIC_TEST_SMALL)}: rc=$? in $(( $(date +%s) - s )) s"
  grep -E "FAIL|failed|differ|device|passed|kept" "$LOG/test_gpu_slabs.log" | head -12 | tee -a "$SUM"
}
data100() { [ -n "${P100:-}" ] && { wait $P100; say "data: $(tail -1 "$LOG/data100.log")"; P100=; }; }
step_scale() {
  data100
  # in core on one GPU; then slabs (a 40,000 MiB budget per GPU does not
  # hold the set in core) on 1, 2 and 4 GPUs
  dbench p100M_1gpu "$F100" 40 --repeats 1 --devices 1
  dbench p100M_1gpu_slabs "$F100" 60 --repeats 1 --devices 1 --budget-mib 40000
  for b in ${VIC_SCALE_BUDGETS:-}; do dbench "p100M_1gpu_b$b" "$F100" 60 --repeats 1 --devices 1 --budget-mib "$b"; done
  [ "$G" -ge 2 ] && dbench p100M_2gpu_slabs "$F100" 50 --repeats 1 --devices 2 --budget-mib 40000
  [ "$G" -ge 4 ] && dbench p100M_4gpu_slabs "$F100" 50 --repeats 1 --devices 4 --budget-mib 40000
}
step_big() {
  [ -n "${PBIG:-}" ] && { wait $PBIG; say "data: $(tail -2 "$LOG/databig.log" | tr '\n' ' ')"; PBIG=; }
  sync; s=$(date +%s)
  dbench p1B_all "$FBIG" 240 --repeats 1 --devices "$G"
  say "10^9 from the .npy file to the peaks on $G GPUs: $(( $(date +%s) - s )) s wall (incl. the 20,000-point warm-up)"
}
step_lists() {
  data100
  lbench lists100M_1gpu 1 60
  [ "$G" -ge 2 ] && lbench lists100M_2gpu 2 60
  [ "$G" -ge 4 ] && lbench lists100M_4gpu 4 60
}
step_big1() {
  [ -n "${PBIG:-}" ] && { wait $PBIG; PBIG=; }
  dbench p1B_1gpu "$FBIG" 400 --repeats 1 --devices 1
}
for st in $STEPS; do
  case $st in
    tests|scale|big|lists|big1) "step_$st" ;;
    build) ;;
    *) say "unknown step $st" ;;
  esac
done
say "== done $(date -u +%FT%TZ)"
