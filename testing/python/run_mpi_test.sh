#!/usr/bin/env bash
# The MPI test: a single-process reference with pvpython, then pvbatch on 2
# ranks; passes when both MPI cases behave (see test_mpi_pvbatch.py) and the
# refusal carries its clear message.  Usage: run_mpi_test.sh PLUGIN DATA_DIR WORKDIR
set -uo pipefail
plugin=$1 data=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v mpiexec >/dev/null || { echo "SKIP: mpiexec not found"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
pvpython "$here/test_mpi_pvbatch.py" "$plugin" "$data" "$work" serial | tee "$work/serial.log"
grep -q SERIAL-OK "$work/serial.log" || { echo "FAIL: the serial reference run failed"; exit 1; }
mpiexec --allow-run-as-root --oversubscribe -np 2 pvbatch "$here/test_mpi_pvbatch.py" \
  "$plugin" "$data" "$work" mpi >"$work/mpi.log" 2>&1
status=$?
cat "$work/mpi.log"
ok=1
grep -q MPI-ONE-RANK-OK "$work/mpi.log" || { echo "FAIL: one-rank case"; ok=0; }
grep -q MPI-REFUSAL-OK "$work/mpi.log" || { echo "FAIL: refusal case"; ok=0; }
grep -q "distributed over 2 MPI ranks" "$work/mpi.log" || { echo "FAIL: no clear refusal message"; ok=0; }
[ $status -eq 0 ] || { echo "FAIL: mpiexec exited with $status"; ok=0; }
[ $ok -eq 1 ] && echo PASS
[ $ok -eq 1 ]
