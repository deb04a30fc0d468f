# shellcheck shell=bash
# Shell functions of testing/gpu/run_device.sh (sourced, not run): the
# summary and logs of one device call, time-boxed steps against the call's
# deadline, one CMake configure + build, the GPU tests, compute-sanitizer.
# A device call returns only a few files, so everything goes to
# $VD_OUT/summary.txt (what a reader needs) and $VD_OUT/logs.tar.gz (the rest).

# vd_init OUTDIR SECONDS: the summary, the log folder, the deadline.
vd_init() {
  VD_OUT=$1
  VD_DEADLINE=$(( $(date +%s) + $2 ))
  VD_LOG=$(mktemp -d)
  mkdir -p "$VD_OUT"
  VD_SUM=$VD_OUT/summary.txt
  : > "$VD_SUM"
  trap 'tar -C "$VD_LOG" -czf "$VD_OUT/logs.tar.gz" . 2>/dev/null' EXIT
  export PATH=/usr/local/cuda/bin:$PATH
}

vd_say() { echo "$*" | tee -a "$VD_SUM"; }

# The card, the host and the code: the first lines of every summary.
vd_header() {
  vd_say "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ')"
  vd_say "== host: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; commit ${VIC_COMMIT:-$(git -C "$VD_SRC" rev-parse --short HEAD 2>/dev/null || echo '?')}"
}

# vd_budget SECONDS: SECONDS, or what is left of the call if less.
vd_budget() {
  local left=$(( VD_DEADLINE - $(date +%s) ))
  [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}

# vd_step NAME SECONDS CMD...: runs CMD time-boxed, output to the log
# folder, one summary line with its exit status and duration.  A step with
# fewer than 10 s left is skipped (and says so).
vd_step() {
  local name=$1 limit
  limit=$(vd_budget "$2"); shift 2
  if [ "$limit" -lt 10 ]; then vd_say "$name: skipped (no time left)"; return 124; fi
  local t0; t0=$(date +%s)
  timeout "$limit" "$@" > "$VD_LOG/$name.log" 2>&1
  local rc=$?
  vd_say "$name: rc=$rc in $(( $(date +%s) - t0 )) s"
  return $rc
}

# vd_build SRC BUILD [TARGET...]: configure once (Release, CUDA, no plugin)
# and build TARGETs (default: everything).  VD_CMAKE_ARGS adds options.
vd_build() {
  local src=$1 build=$2; shift 2
  local gen=""; command -v ninja > /dev/null && gen="-G Ninja"
  local targets=""; [ $# -gt 0 ] && targets="--target $*"
  # shellcheck disable=SC2086
  vd_step "build_$(basename "$build")" 900 bash -c "cmake -S '$src' -B '$build' $gen -DCMAKE_BUILD_TYPE=Release \
    -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=${VD_CUDA_ARCH:-native} -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF \
    -DVICINITY_DATA_DIR='${VD_DATA_DIR:-$src/.gpu_carry/data}' ${VD_CMAKE_ARGS:-} && cmake --build '$build' -j $(nproc) $targets"
  local rc=$?
  [ $rc -eq 0 ] || grep -E "error|Error" "$VD_LOG/build_$(basename "$build").log" | head -20 | tee -a "$VD_SUM"
  return $rc
}

# vd_gpu_tests BUILD: every GPU test (ctest -L gpu), each time-boxed.
vd_gpu_tests() {
  vd_step ctest_gpu "${CTEST_LIMIT:-400}" bash -c "cd '$1' && ctest -L gpu --timeout 200 --output-on-failure"
  grep -E "Test +#|tests passed|tests failed" "$VD_LOG/ctest_gpu.log" | tee -a "$VD_SUM"
}

# vd_sanitize TOOL BUILD TEST: compute-sanitizer on the test's small case
# (argv "small" and VIC_TEST_SMALL=1: each test reads its own).
vd_sanitize() {
  local tool=$1 build=$2 t=$3 limit=${SAN_LIMIT:-120}
  [ "$tool" = racecheck ] && limit=${RACE_LIMIT:-240}
  if [ ! -x "$build/bin/gpu_$t" ]; then vd_say "$tool $t: not built"; return 1; fi
  vd_step "${tool}_$t" "$limit" env VIC_TEST_SMALL=1 compute-sanitizer --tool "$tool" --leak-check full \
    --error-exitcode 9 "$build/bin/gpu_$t" small
  local rc=$?
  vd_say "  $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$VD_LOG/${tool}_$t.log" | tail -1)"
  return $rc
}

# vd_gpu_test_names BUILD: the GPU tests built there (test_* without gpu_).
vd_gpu_test_names() {
  for f in "$1"/bin/gpu_test_*; do [ -x "$f" ] && basename "$f" | sed 's/^gpu_//'; done
}
