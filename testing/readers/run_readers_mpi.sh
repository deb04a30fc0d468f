#!/usr/bin/env bash
# The readers under MPI: test_readers.py writes the snapshots and checks
# them in one pvpython process, then reads them with pvbatch on N ranks;
# passes when every format gives the same points with each rank reading
# its share.
# Usage: run_readers_mpi.sh PLUGIN WRITER WORKDIR RANKS
set -uo pipefail
plugin=$1 writer=$2 work=$3 ranks=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v mpiexec >/dev/null || { echo "SKIP: mpiexec not found"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
pvpython "$here/test_readers.py" "$plugin" "$writer" "$work" serial | tee "$work/serial.log"
grep -q SERIAL-OK "$work/serial.log" || { echo "FAIL: the serial run failed"; exit 1; }
mpiexec --allow-run-as-root --oversubscribe -np "$ranks" pvbatch "$here/test_readers.py" \
  "$plugin" "$writer" "$work" mpi >"$work/mpi.log" 2>&1
status=$?
cat "$work/mpi.log"
grep -q MPI-READERS-OK "$work/mpi.log" || { echo "FAIL: the readers on $ranks ranks"; exit 1; }
[ $status -eq 0 ] || { echo "FAIL: mpiexec exited with $status"; exit 1; }
echo PASS
