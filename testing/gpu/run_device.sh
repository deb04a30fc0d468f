#!/bin/bash
# One device call: configure and build once, then the named stages in order.
#
#   testing/gpu/run_device.sh OUTDIR [STAGE...]     (default: build tests memcheck sweeps)
#
# Stages:
#   build      CMake configure + build of this tree (no plugin) in $BUILD
#              (default /tmp/vic-device-build); BASE_SRC=<another tree> also
#              builds that one in $BUILD-base for a before/after comparison.
#   tests      every GPU test, ctest -L gpu (CTEST_LIMIT seconds).
#   memcheck   compute-sanitizer memcheck on the small case of MEMCHECK_TESTS
#              (default: every GPU test built).
#   racecheck  compute-sanitizer racecheck on RACECHECK_TESTS (default
#              test_gpu_exact test_grnnd).
#   sweeps     benchmarks/run.py over SWEEPS (names in benchmarks/sweeps/,
#              default "gpu-exact gpu-density"): JSON lines in
#              OUTDIR/bench.jsonl; with BASE_SRC the base build runs them
#              first (tag "base"), same card, same call.  The data are made
#              while the code builds.
#   trace      a -DVIC_GS_TRACE=ON build of grnnd_bench, then the
#              graph-search-profile sweep on it (in-kernel stage times).
#   ncu        Nsight Compute on one launch: NCU_PROGRAM (grnnd_bench),
#              NCU_ARGS (its arguments, default the graph-search data in
#              "ncu" mode), NCU_KERNEL (regex, default gs_small_kernel),
#              NCU_SKIP (launches to skip, 20); details page and per-SASS-line
#              samples go to the logs.
#
# Environment: DEVICE_SECONDS (the call's limit, default 570: each step gets
# what is left), VIC_COMMIT (the commit of a copied tree without .git),
# VD_CUDA_ARCH (default native), VD_CMAKE_ARGS, CARRY (a folder with
# make_synthetic.py and data/, default .gpu_carry), SHARED (default
# ../shared).  OUTDIR receives summary.txt, bench.jsonl and logs.tar.gz.
set -u
OUT=${1:?usage: run_device.sh OUTDIR [STAGE...]}
shift
STAGES=${*:-build tests memcheck sweeps}
VD_SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$VD_SRC/testing/gpu/device_lib.sh"
vd_init "$OUT" "${DEVICE_SECONDS:-570}"
BUILD=${BUILD:-/tmp/vic-device-build}
CARRY=${CARRY:-$VD_SRC/.gpu_carry}
SHARED=${SHARED:-$VD_SRC/../shared}
[ -f "$SHARED/tools/make_synthetic.py" ] || SHARED=$CARRY
VD_DATA_DIR=${VD_DATA_DIR:-$CARRY/data}
CACHE=${CACHE:-/tmp/vic-device-data}
SWEEPS=${SWEEPS:-gpu-exact gpu-density}
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }
sweep_files() { for s in $1; do echo "$VD_SRC/benchmarks/sweeps/$s.toml"; done; }
RUN_PY=(python3 "$VD_SRC/benchmarks/run.py" --cache "$CACHE" --shared "$SHARED" --logs "$VD_LOG/bench")

vd_header
vd_say "== stages: $STAGES"
DATA_PID=""
if has sweeps || has trace || has ncu; then
  files=$(sweep_files "$SWEEPS")
  has trace || has ncu && files="$files $(sweep_files graph-search-profile)"
  # shellcheck disable=SC2086
  "${RUN_PY[@]}" $files --build "$BUILD" --data-only > "$VD_LOG/data.log" 2>&1 &
  DATA_PID=$!
fi
if has build; then
  vd_build "$VD_SRC" "$BUILD" || exit 1
  if [ -n "${BASE_SRC:-}" ]; then
    vd_build "$BASE_SRC" "$BUILD-base" || { vd_say "base build failed: no before/after"; BASE_SRC=""; }
  fi
fi
if has tests; then
  vd_gpu_tests "$BUILD"
fi
if has memcheck; then
  for t in ${MEMCHECK_TESTS-$(vd_gpu_test_names "$BUILD")}; do vd_sanitize memcheck "$BUILD" "$t"; done
fi
if has racecheck; then
  for t in ${RACECHECK_TESTS-test_gpu_exact test_grnnd}; do vd_sanitize racecheck "$BUILD" "$t"; done
fi
if [ -n "$DATA_PID" ]; then
  wait "$DATA_PID"; vd_say "data: rc=$? ($(grep -c 'making' "$VD_LOG/data.log") made)"
fi
if has sweeps; then
  if [ -n "${BASE_SRC:-}" ]; then
    # shellcheck disable=SC2046
    vd_step sweeps_base 3600 "${RUN_PY[@]}" $(sweep_files "$SWEEPS") --build "$BUILD-base" --tag base \
      --out "$OUT/bench.jsonl"
  fi
  # shellcheck disable=SC2046
  vd_step sweeps 3600 "${RUN_PY[@]}" $(sweep_files "$SWEEPS") --build "$BUILD" --out "$OUT/bench.jsonl"
  grep "^run.py:" "$VD_LOG/sweeps.log" | tail -40 >> "$VD_SUM"
  vd_say "records: $(grep -c . "$OUT/bench.jsonl" 2>/dev/null || echo 0) lines in bench.jsonl"
fi
if has trace; then
  VD_CMAKE_ARGS="${VD_CMAKE_ARGS:-} -DVIC_GS_TRACE=ON" vd_build "$VD_SRC" "$BUILD-trace" grnnd_bench &&
    vd_step trace 200 "${RUN_PY[@]}" "$(sweep_files graph-search-profile)" --build "$BUILD-trace" --out "$OUT/bench.jsonl"
fi
if has ncu; then
  rep=$VD_LOG/ncu
  vd_step ncu "${NCU_LIMIT:-240}" ncu --clock-control none -k "regex:${NCU_KERNEL:-gs_small_kernel}" \
    --launch-skip "${NCU_SKIP:-20}" --launch-count 1 --set full --import-source no -f -o "$rep" \
    "$BUILD/bin/${NCU_PROGRAM:-grnnd_bench}" ${NCU_ARGS:-$CACHE/grnnd_m 1000000 10000 128 ncu}
  if [ -f "$rep.ncu-rep" ]; then
    ncu --import "$rep.ncu-rep" --page details > "${rep}_details.txt" 2>&1
    ncu --import "$rep.ncu-rep" --page source --csv --print-source sass > "${rep}_source.csv" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Throughput|Warp Cycles Per|Issue Slots Busy" \
      "${rep}_details.txt" | head -20 | tee -a "$VD_SUM"
    rm -f "$rep.ncu-rep"
  fi
fi
vd_say "== done $(date -u +%FT%TZ)"
