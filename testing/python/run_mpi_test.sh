#!/usr/bin/env bash
# The MPI test of one rank count: the single-process reference with pvpython
# (once per work folder), then pvbatch on N ranks; passes when every filter
# equals the reference (see test_mpi_pvbatch.py).
# Usage: run_mpi_test.sh PLUGIN DATA_DIR WORKDIR RANKS
set -uo pipefail
plugin=$1 data=$2 work=$3 ranks=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v mpiexec >/dev/null || { echo "SKIP: mpiexec not found"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
pvpython "$here/test_mpi_pvbatch.py" "$plugin" "$data" "$work" serial | tee "$work/serial.log"
grep -q SERIAL-OK "$work/serial.log" || { echo "FAIL: the serial reference run failed"; exit 1; }
mpiexec --allow-run-as-root --oversubscribe -np "$ranks" pvbatch "$here/test_mpi_pvbatch.py" \
  "$plugin" "$data" "$work" mpi >"$work/mpi.log" 2>&1
status=$?
cat "$work/mpi.log"
ok=1
for case in GRAPH DENSITY PEAKS; do
  grep -q "MPI-$case-OK" "$work/mpi.log" || { echo "FAIL: $case case on $ranks ranks"; ok=0; }
done
[ $status -eq 0 ] || { echo "FAIL: mpiexec exited with $status"; ok=0; }
[ $ok -eq 1 ] && echo PASS
[ $ok -eq 1 ]
