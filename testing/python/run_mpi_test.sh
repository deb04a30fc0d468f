#!/usr/bin/env bash
# The MPI test of one rank count: the single-process references with
# pvpython (once per work folder), then pvbatch on N ranks; passes when every
# filter equals its reference (see test_mpi_pvbatch.py: 3-d kNN Graph,
# kNN Density, SPH Resample, Salient Points; test_mpi_shards.py: kNN Graph on a feature
# array and the kNN Query Probe; test_mpi_nan.py: a NaN point refused by
# every filter with one process's message on every rank, nothing output).
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
# A NaN point or mass (test_mpi_nan.py): every filter refuses it with one
# process's message, said once on every rank, and leaves its outputs empty.
messages() {  # the Vicinity filters' messages in a log, colour codes removed
  sed 's/\x1b\[[0-9;]*m//g' "$1" |
    grep -o '\(kNN Graph\|kNN Density\|Salient Points\|kNN Query Probe\): .*' | sed 's/[[:space:]]*$//'
}
nan_cases="GRAPH FEATURE-GRAPH DENSITY PEAKS PROBE DENSITY-MASS PEAKS-MASS"
pvpython "$here/test_mpi_nan.py" "$plugin" "$data" "$work" serial >"$work/test_mpi_nan.serial.log" 2>&1
if ! grep -q SERIAL-OK "$work/test_mpi_nan.serial.log"; then
  cat "$work/test_mpi_nan.serial.log"; echo "FAIL: the serial run of test_mpi_nan failed"; ok=0
else
  mpiexec --allow-run-as-root --oversubscribe -np "$ranks" pvbatch "$here/test_mpi_nan.py" \
    "$plugin" "$data" "$work" mpi >"$work/test_mpi_nan.mpi.log" 2>&1
  status=$?
  grep -v '^ERROR: In\|^$' "$work/test_mpi_nan.mpi.log" | grep 'NAN\|case\|ranks\|FAIL'
  messages "$work/test_mpi_nan.serial.log" | sort -u >"$work/nan.expected"
  messages "$work/test_mpi_nan.mpi.log" | sort | uniq -c | sed 's/^ *//' >"$work/nan.got"
  echo "one process says:"; sed 's/^/  /' "$work/nan.expected"
  echo "$ranks ranks say (count, message):"; sed 's/^/  /' "$work/nan.got"
  [ "$(wc -l <"$work/nan.expected")" -eq "$(echo $nan_cases | wc -w)" ] ||
    { echo "FAIL: one process did not give one message per case ($nan_cases)"; ok=0; }
  # each message once per rank, and nothing else (no "stopped because rank r failed")
  sed "s/^/$ranks /" "$work/nan.expected" | cmp -s - "$work/nan.got" ||
    { echo "FAIL: the messages on $ranks ranks differ from one process's (each once per rank)"; ok=0; }
  for case in $nan_cases; do
    grep -q "NAN-$case-EMPTY" "$work/test_mpi_nan.mpi.log" || { echo "FAIL: NaN case $case left output on $ranks ranks"; ok=0; }
  done
  grep -q MPI-NAN-OK "$work/test_mpi_nan.mpi.log" || { echo "FAIL: the NaN run on $ranks ranks did not finish"; ok=0; }
  [ $status -eq 0 ] || { echo "FAIL: mpiexec (test_mpi_nan) exited with $status"; ok=0; }
fi
[ $ok -eq 1 ] && echo PASS
[ $ok -eq 1 ]
