#!/bin/bash
# The one device script: the named stages in order, in one call.
#
#   testing/gpu/run_device.sh OUTDIR [STAGE...]     (default: build tests memcheck sweeps)
#
# Stages:
#   link       (on the GPU-less machine, before a call) links the programs
#              of a CUDA build here, LINK_FROM, into $BUILD/bin with
#              netlib's static BLAS and no HDF5, so a call runs them without
#              compiling: LINK_PROGRAMS (default "vicinity_bench
#              density_bench probe_latency") and the GPU tests matching
#              LINK_TESTS (a regex, default every one; "none" for none);
#              make_synthetic.py goes beside them; LINK_XZ=FILE also packs
#              the folder into FILE (.tar.xz) for a small carry.
#   build      CMake configure + build of this tree (no plugin) in $BUILD
#              (default /tmp/vic-device-build): BUILD_TARGETS (default
#              all); BASE_SRC=<another tree> also builds that one in
#              $BUILD-base for a before/after comparison.  Without this
#              stage, $BUILD must hold the programs already (a build, or a
#              folder of the link stage; PREBUILT_XZ=FILE unpacks one).
#   tests      the GPU tests matching TESTS (a regex on the name, e.g.
#              "gpu_slabs" or "ggm|gnnd"; default all): ctest -L gpu in a
#              build, each bin/gpu_test_* of a linked folder otherwise
#              (CTEST_LIMIT seconds in all, TEST_LIMIT each).
#   memcheck   compute-sanitizer memcheck on the small case of MEMCHECK_TESTS
#              (default: every GPU test built).
#   racecheck  compute-sanitizer racecheck on RACECHECK_TESTS (default
#              test_gpu_exact test_grnnd).
#   sweeps     benchmarks/run.py over SWEEPS (names in benchmarks/sweeps/,
#              default "gpu-exact gpu-density"): JSON lines in
#              OUTDIR/bench.jsonl; with BASE_SRC or BASE_BUILD (a base
#              build or linked folder) the base runs them first (tag
#              "base"), same card, same call.  The data are made while the
#              code builds.  Runs a sweep gives min_devices are skipped on
#              a machine with fewer GPUs; no run passes the call's deadline.
#   trace      a -DVIC_GS_TRACE=ON build of grnnd_bench, then the
#              graph-search-profile sweep on it (in-kernel stage times).
#   ncu        Nsight Compute on one launch: NCU_PROGRAM (grnnd_bench),
#              NCU_ARGS (its arguments, default the graph-search data in
#              "ncu" mode), NCU_KERNEL (regex, default gs_small_kernel),
#              NCU_SKIP (launches to skip, 20); details page and per-SASS-line
#              samples go to the logs.
#
# What the former per-issue scripts ran (each step time-boxed, so partial
# results come back):
#   run_slabs_scaling.sh  SWEEPS=slabs-scaling TESTS=gpu_slabs
#                         BUILD_TARGETS="gpu_test_gpu_slabs density_bench vicinity_bench"
#                         run_device.sh OUT build tests sweeps   (on nvidia-h100-x4)
#   run_ggm.sh            SWEEPS=ggm-public TESTS='ggm|gnnd' MEMCHECK_TESTS=test_ggm
#                         run_device.sh OUT build tests memcheck sweeps
#   run_index_builds.sh   SWEEPS=index-builds TESTS='grnnd|gnnd|ggnn|gpu_policy'
#                         MEMCHECK_TESTS=test_grnnd BASE_SRC=<base tree>
#                         run_device.sh OUT build tests memcheck sweeps
#   build_*_carry.sh      LINK_FROM=build BUILD=<folder to carry> run_device.sh OUT link
#                         (here), then BUILD=<that folder> run_device.sh OUT tests sweeps
#
# Environment: DEVICE_SECONDS (the call's limit, default 570: each step gets
# what is left), VIC_COMMIT (the commit of a copied tree without .git),
# VD_CUDA_ARCH (default native), VD_CMAKE_ARGS, CARRY (a folder with
# make_synthetic.py and data/, default $BUILD if it holds make_synthetic.py,
# else .gpu_carry), SHARED (default ../shared), VD_DRY_RUN=1 (print the plan
# and the sweeps' commands, run nothing).  OUTDIR receives summary.txt,
# bench.jsonl and logs.tar.gz.  Unknown stages, missing sweeps, GPU stages
# without a GPU, or no programs without the build stage stop the call
# before anything runs (exit 2).
set -u
OUT=${1:?usage: run_device.sh OUTDIR [STAGE...]}
shift
STAGES=${*:-build tests memcheck sweeps}
VD_SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$VD_SRC/testing/gpu/device_lib.sh"
vd_init "$OUT" "${DEVICE_SECONDS:-570}"
BUILD=${BUILD:-/tmp/vic-device-build}
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }
UNPACK=""
[ -n "${PREBUILT_XZ:-}" ] && ! has build && UNPACK=$PREBUILT_XZ
if [ -z "${CARRY:-}" ]; then
  CARRY=$VD_SRC/.gpu_carry
  { [ -f "$BUILD/make_synthetic.py" ] || [ -n "$UNPACK" ]; } && CARRY=$BUILD
fi
SHARED=${SHARED:-$VD_SRC/../shared}
[ -f "$SHARED/tools/make_synthetic.py" ] || SHARED=$CARRY
VD_DATA_DIR=${VD_DATA_DIR:-$CARRY/data}
CACHE=${CACHE:-/tmp/vic-device-data}
SWEEPS=${SWEEPS:-gpu-exact gpu-density}
BASE_BUILD=${BASE_BUILD:-}
[ -n "${BASE_SRC:-}" ] && BASE_BUILD=$BUILD-base
sweep_files() { for s in $1; do echo "$VD_SRC/benchmarks/sweeps/$s.toml"; done; }
GPUS=$(vd_gpu_count)
RUN_PY=(python3 "$VD_SRC/benchmarks/run.py" --cache "$CACHE" --shared "$SHARED" --logs "$VD_LOG/bench"
        --deadline "$VD_DEADLINE" --gpus "$GPUS")

# Everything a stage needs is checked first: a call either runs or stops
# here with the reason, never half-way for a typo or a missing GPU.
vd_check_stages "$STAGES" link build tests memcheck racecheck sweeps trace ncu || exit 2
GPU_STAGES=""
for s in tests memcheck racecheck sweeps trace ncu; do has "$s" && GPU_STAGES="$GPU_STAGES $s"; done
if [ -n "$GPU_STAGES" ] && [ "$GPUS" -eq 0 ]; then
  vd_say "run_device.sh: no GPU here (nvidia-smi lists none) for the stages:$GPU_STAGES; nothing run"
  [ "${VD_DRY_RUN:-0}" = 1 ] || exit 2
fi
if has link && [ ! -f "${LINK_FROM:-/nonexistent}/CMakeCache.txt" ]; then
  vd_say "run_device.sh: the link stage needs LINK_FROM=<a CUDA build of this tree>; nothing run"; exit 2
fi
if has sweeps || has trace || has ncu; then
  files=$(sweep_files "$SWEEPS")
  has trace || has ncu && files="$files $(sweep_files graph-search-profile)"
  for f in $files; do
    [ -f "$f" ] || { vd_say "run_device.sh: no sweep $f (SWEEPS=\"$SWEEPS\"); nothing run"; exit 2; }
  done
  # shellcheck disable=SC2086
  "${RUN_PY[@]}" $files --build "$BUILD" --dry-run > "$VD_LOG/plan.txt" 2>&1 ||
    { vd_say "run_device.sh: the sweeps do not expand:"; tee -a "$VD_SUM" < "$VD_LOG/plan.txt"; exit 2; }
fi
if [ -n "$UNPACK" ] && [ ! -f "$UNPACK" ]; then
  vd_say "run_device.sh: no $UNPACK (PREBUILT_XZ); nothing run"; exit 2
fi
if ! has build && ! has link && [ -z "$UNPACK" ] && [ -n "$GPU_STAGES" ] && ! ls "$BUILD"/bin/* > /dev/null 2>&1; then
  vd_say "run_device.sh: no programs in $BUILD/bin and no build stage; nothing run"; exit 2
fi
if has sweeps && [ -n "$BASE_BUILD" ] && ! { [ -n "${BASE_SRC:-}" ] && has build; } && ! ls "$BASE_BUILD"/bin/* > /dev/null 2>&1; then
  vd_say "run_device.sh: no programs in the base $BASE_BUILD/bin (BASE_SRC needs the build stage); nothing run"; exit 2
fi

vd_header
vd_say "== stages: $STAGES"
if [ "${VD_DRY_RUN:-0}" = 1 ]; then
  vd_say "== dry run: BUILD=$BUILD SWEEPS=\"$SWEEPS\" TESTS=\"${TESTS:-}\" BASE_BUILD=$BASE_BUILD"
  [ -f "$VD_LOG/plan.txt" ] && tee -a "$VD_SUM" < "$VD_LOG/plan.txt"
  exit 0
fi
if has link; then
  gen=$SHARED/tools/make_synthetic.py; [ -f "$gen" ] || gen=$SHARED/make_synthetic.py
  vd_link "$VD_SRC" "$LINK_FROM" "$BUILD" "$gen" || exit 1
fi
if [ -n "$UNPACK" ]; then
  if ! mkdir -p "$BUILD" || ! tar -C "$BUILD" -xJf "$UNPACK"; then vd_say "cannot unpack $UNPACK"; exit 1; fi
fi
DATA_PID=""
if has sweeps || has trace || has ncu; then
  # shellcheck disable=SC2086
  "${RUN_PY[@]}" $files --build "$BUILD" --data-only > "$VD_LOG/data.log" 2>&1 &
  DATA_PID=$!
fi
if has build; then
  # shellcheck disable=SC2086
  vd_build "$VD_SRC" "$BUILD" ${BUILD_TARGETS:-} || exit 1
  if [ -n "${BASE_SRC:-}" ]; then
    # shellcheck disable=SC2086
    vd_build "$BASE_SRC" "$BASE_BUILD" ${BUILD_TARGETS:-} || { vd_say "base build failed: no before/after"; BASE_BUILD=""; }
  fi
fi
if has tests; then
  vd_gpu_tests "$BUILD" "${TESTS:-}"
fi
if has memcheck; then
  for t in ${MEMCHECK_TESTS-$(vd_gpu_test_names "$BUILD")}; do vd_sanitize memcheck "$BUILD" "$t"; done
fi
if has racecheck; then
  for t in ${RACECHECK_TESTS-test_gpu_exact test_grnnd}; do vd_sanitize racecheck "$BUILD" "$t"; done
fi
if [ -n "$DATA_PID" ]; then
  wait "$DATA_PID"; vd_say "data: rc=$? ($(grep -c '^run.py: making [^ ]*:' "$VD_LOG/data.log") made)"
fi
if has sweeps; then
  if [ -n "$BASE_BUILD" ]; then
    # shellcheck disable=SC2046
    vd_step sweeps_base 3600 "${RUN_PY[@]}" $(sweep_files "$SWEEPS") --build "$BASE_BUILD" --tag base \
      --out "$OUT/bench.jsonl"
  fi
  # shellcheck disable=SC2046
  vd_step sweeps 3600 "${RUN_PY[@]}" $(sweep_files "$SWEEPS") --build "$BUILD" --out "$OUT/bench.jsonl"
  grep -h "^run.py:" "$VD_LOG"/sweeps*.log | tail -40 >> "$VD_SUM"
  n=0; [ -f "$OUT/bench.jsonl" ] && n=$(grep -c . "$OUT/bench.jsonl")
  vd_say "records: $n lines in bench.jsonl"
fi
if has trace; then
  VD_CMAKE_ARGS="${VD_CMAKE_ARGS:-} -DVIC_GS_TRACE=ON" vd_build "$VD_SRC" "$BUILD-trace" grnnd_bench &&
    vd_step trace 200 "${RUN_PY[@]}" "$(sweep_files graph-search-profile)" --build "$BUILD-trace" --out "$OUT/bench.jsonl"
fi
if has ncu; then
  rep=$VD_LOG/ncu
  # shellcheck disable=SC2086
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
