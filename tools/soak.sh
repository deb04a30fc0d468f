#!/usr/bin/env bash
# The soak of the pvpython/pvbatch tests: runs the CTest labels python and
# mpi (every pvpython and pvbatch test) RUNS times in a row, one test at a
# time, and prints after each run its verdict and the count so far; at the
# end the runs, the failures and the passes in a row.  A flake is a bug:
# each failing run keeps its log and every core file the run left (core
# dumps are switched on here), with a gdb backtrace of each.
# Usage: tools/soak.sh BUILD_DIR [RUNS (50)] [OUT (BUILD_DIR/soak)]
# Run it under nice on a shared machine: one run takes several minutes.
set -uo pipefail
build=$(cd "${1:?usage: tools/soak.sh BUILD_DIR [RUNS] [OUT]}" && pwd)
runs=${2:-50}
out=${3:-$build/soak}
mkdir -p "$out"
ulimit -c unlimited 2>/dev/null || echo "soak: core dumps stay off (ulimit -c refused)"
passed=0 failed=0 streak=0
for ((i = 1; i <= runs; ++i)); do
  marker="$out/.start_$i"
  touch "$marker"
  t0=$(date +%s)
  (cd "$build" && ctest -L 'python|mpi' -j1 --output-on-failure) >"$out/run_$i.log" 2>&1
  status=$?
  seconds=$(($(date +%s) - t0))
  cores=$(find "$build" -name 'core*' -type f -newer "$marker" 2>/dev/null)
  rm -f "$marker"
  if [ $status -eq 0 ] && [ -z "$cores" ]; then
    passed=$((passed + 1)) streak=$((streak + 1))
    rm -f "$out/run_$i.log"
    echo "run $i: pass (${seconds} s); $passed passed, $failed failed, $streak in a row"
    continue
  fi
  failed=$((failed + 1)) streak=0
  mkdir -p "$out/failed_$i"
  mv "$out/run_$i.log" "$out/failed_$i/ctest.log"
  for c in $cores; do
    name=$(echo "$c" | sed "s|^$build/||; s|/|_|g")
    mv "$c" "$out/failed_$i/$name"
    exe=$(file "$out/failed_$i/$name" | sed -n "s/.*execfn: '\([^']*\)'.*/\1/p")
    if command -v gdb >/dev/null && [ -n "$exe" ]; then
      gdb -batch -ex 'thread apply all bt' "$exe" "$out/failed_$i/$name" >"$out/failed_$i/$name.bt" 2>&1
    fi
  done
  echo "run $i: FAIL (${seconds} s; $(grep -c 'Failed\|Exception\|aborted\|Timeout' "$out/failed_$i/ctest.log") failing lines, $(echo $cores | wc -w) core files) -> $out/failed_$i"
  grep -E '^[ 0-9/]+Test +#.*(Failed|Exception|aborted|Timeout|Not Run)' "$out/failed_$i/ctest.log" | sed 's/^/    /'
  echo "    $passed passed, $failed failed"
done
echo "soak: $runs runs of ctest -L 'python|mpi': $passed passed, $failed failed; the last $streak in a row passed"
[ $failed -eq 0 ]
