#!/usr/bin/env bash
# The MPI test of one rank count: the single-process references with
# pvpython (once per work folder), then pvbatch on N ranks; passes when every
# filter equals its reference (see test_mpi_pvbatch.py: 3-d kNN Graph,
# kNN Density, SPH Resample, Salient Points; test_mpi_shards.py: kNN Graph on a feature
# array and the kNN Query Probe).
# Usage: run_mpi_test.sh PLUGIN DATA_DIR WORKDIR RANKS
set -uo pipefail
plugin=$1 data=$2 work=$3 ranks=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v mpiexec >/dev/null || { echo "SKIP: mpiexec not found"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
ok=1
# script: the cases it must report as MPI-<case>-OK
for spec in "test_mpi_pvbatch:GRAPH DENSITY SPH PEAKS" "test_mpi_shards:FEATURE-GRAPH PROBE-3D PROBE-FEATURE"; do
  script=${spec%%:*} cases=${spec#*:}
  pvpython "$here/$script.py" "$plugin" "$data" "$work" serial | tee "$work/$script.serial.log"
  grep -q SERIAL-OK "$work/$script.serial.log" || { echo "FAIL: the serial reference run of $script failed"; ok=0; continue; }
  mpiexec --allow-run-as-root --oversubscribe -np "$ranks" pvbatch "$here/$script.py" \
    "$plugin" "$data" "$work" mpi >"$work/$script.mpi.log" 2>&1
  status=$?
  cat "$work/$script.mpi.log"
  for case in $cases; do
    grep -q "MPI-$case-OK" "$work/$script.mpi.log" || { echo "FAIL: $case case on $ranks ranks"; ok=0; }
  done
  [ $status -eq 0 ] || { echo "FAIL: mpiexec ($script) exited with $status"; ok=0; }
done
[ $ok -eq 1 ] && echo PASS
[ $ok -eq 1 ]
