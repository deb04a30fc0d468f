# shellcheck shell=bash
# Shell functions of testing/gpu/run_device.sh (sourced, not run): the
# summary and logs of one device call, the check of the stages asked for,
# time-boxed steps against the call's deadline, one CMake configure +
# build, the programs linked for a carry, the GPU tests, compute-sanitizer.
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

# vd_check_stages "STAGES" KNOWN...: fails (and says which) when a stage
# asked for is not one of KNOWN.
vd_check_stages() {
  local asked=$1 s bad=""; shift
  for s in $asked; do
    case " $* " in *" $s "*) ;; *) bad="$bad $s";; esac
  done
  [ -z "$bad" ] && return 0
  vd_say "run_device.sh: unknown stage(s):$bad (stages: $*); nothing run"
  return 1
}

# vd_gpu_count: the GPUs nvidia-smi lists (0 without one; VD_NVIDIA_SMI
# names another program, e.g. for a test of the checks).
vd_gpu_count() {
  local n; n=$("${VD_NVIDIA_SMI:-nvidia-smi}" -L 2>/dev/null | grep -c '^GPU')
  echo "${n:-0}"
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

# vd_gpu_tests BUILD [REGEX]: the GPU tests (those whose name matches
# REGEX), each time-boxed: ctest -L gpu in a CMake build, else every
# BUILD/bin/gpu_test_* (a folder of vd_link), one after the other within
# CTEST_LIMIT; exit status 77 is a skip, as in ctest.
vd_gpu_tests() {
  local build=$1 re=${2:-} t rc ok=0 bad=0 skip=0 t0
  if [ -f "$build/CTestTestfile.cmake" ]; then
    # shellcheck disable=SC2016  # the outer double quotes expand $build and $re
    vd_step ctest_gpu "${CTEST_LIMIT:-400}" bash -c "cd '$build' && ctest -L gpu ${re:+-R '$re'} \
      --timeout ${TEST_LIMIT:-200} --output-on-failure"
    grep -E "Test +#|tests passed|tests failed|No tests were found" "$VD_LOG/ctest_gpu.log" | tee -a "$VD_SUM"
    return
  fi
  t0=$(date +%s)
  for t in $(vd_gpu_test_names "$build"); do
    [ -n "$re" ] && ! echo "$t" | grep -Eq -- "$re" && continue
    if [ $(( $(date +%s) - t0 )) -ge "${CTEST_LIMIT:-400}" ]; then vd_say "$t: skipped (CTEST_LIMIT)"; continue; fi
    VICINITY_DATA_DIR=$VD_DATA_DIR vd_step "$t" "${TEST_LIMIT:-200}" "$build/bin/gpu_$t"
    rc=$?
    case $rc in 0) ok=$((ok + 1));; 77) skip=$((skip + 1));; *) bad=$((bad + 1)); tail -5 "$VD_LOG/$t.log" | tee -a "$VD_SUM";; esac
  done
  vd_say "GPU tests: $ok passed, $skip skipped, $bad failed${re:+ (matching $re)}"
}

# vd_link SRC FROM OUT [GEN]: the programs of a CUDA build FROM (made on this
# machine) linked into OUT/bin with netlib's static BLAS and the snapshot
# readers compiled without HDF5, which the GPU machine lacks, so a call
# runs them without compiling; GEN (make_synthetic.py) beside them.
# LINK_PROGRAMS, LINK_TESTS (regex, "none" for none), LINK_XZ (pack OUT).
vd_link() {
  local src=$1 from=$2 out=$3 gen=${4:-} cu=/usr/local/cuda tmp p d f
  mkdir -p "$out/bin"
  tmp=$(mktemp -d)
  for f in snap snap_gadget snap_lammps snap_hdf5; do
    gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_FILE_OFFSET_BITS=64 -c -I "$src/snapshot/include" \
      -I "$src/snapshot/src" "$src/snapshot/src/$f.c" -o "$tmp/$f.o" || { vd_say "link: $f.c failed"; return 1; }
  done
  ar rcs "$tmp/libsnap.a" "$tmp"/*.o
  # shellcheck disable=SC2054  # -Wl,-rpath,DIR is one argument
  local libs=("$from/lib/libvicinity.a" "$from/lib/libvic_io.a" "$tmp/libsnap.a" "$from/lib/libvicinity_kernels.a"
              /usr/lib/x86_64-linux-gnu/blas/libblas.a -lz -lgomp -L"$cu/lib64" -Wl,-rpath,"$cu/lib64"
              -lcudart_static -lcublas -lcublasLt -lstdc++ -lm -ldl -lpthread -lrt)
  local progs=${LINK_PROGRAMS:-vicinity_bench density_bench probe_latency} tre=${LINK_TESTS:-.}
  if [ "$tre" != none ]; then
    for d in "$from"/testing/gpu/CMakeFiles/gpu_test_*.dir; do
      [ -d "$d" ] || continue
      p=$(basename "$d" .dir)
      echo "$p" | grep -Eq -- "$tre" && progs="$progs $p"
    done
  fi
  local n=0
  for p in $progs; do
    d=$(find "$from/testing" -type d -name "$p.dir" -path "*/CMakeFiles/*" | head -1)
    if [ -z "$d" ]; then vd_say "link: $p is not built in $from"; rm -rf "$tmp"; return 1; fi
    local extra=(); case $p in gpu_test_*) extra=("$from/lib/libvic_test_util.a");; esac
    # shellcheck disable=SC2046
    g++ -fopenmp $(find "$d" -name '*.o' | sort) "${extra[@]}" "${libs[@]}" -o "$out/bin/$p" > "$VD_LOG/link_$p.log" 2>&1 ||
      { vd_say "link: $p failed"; tail -5 "$VD_LOG/link_$p.log" | tee -a "$VD_SUM"; rm -rf "$tmp"; return 1; }
    strip "$out/bin/$p"; n=$((n + 1))
  done
  rm -rf "$tmp"
  if [ -f "$gen" ]; then cp "$gen" "$out/"; else vd_say "link: no make_synthetic.py (set SHARED): data cannot be made there"; fi
  vd_say "link: $n programs in $out/bin ($(du -sh "$out" | cut -f1))"
  if [ -n "${LINK_XZ:-}" ]; then
    tar -C "$out" -cJf "$LINK_XZ" . && vd_say "link: packed into $LINK_XZ ($(du -sh "$LINK_XZ" | cut -f1))"
  fi
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
