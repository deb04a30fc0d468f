#!/bin/bash
# Single-query latency of the graph search in one device call: the latency
# stage of run_grnnd_compare.sh (grnnd_bench "latency" on manifold 1M x
# 128: batch 1 and 10, small- against large-batch procedure, kernel and
# public API) and its tests stage (every GPU test, compute-sanitizer
# memcheck and racecheck on test_grnnd's small case).  Kept under this
# name for the BENCHMARKS.md sections that cite it; the figures of
# 2026-11-26 02:05 UTC came from the script's earlier, standalone form.
#   testing/gpu/run_tsdg_latency.sh OUTDIR
STAGES="latency tests" MEMCHECK_TESTS=${MEMCHECK_TESTS-test_grnnd} RACECHECK_TESTS=${RACECHECK_TESTS-test_grnnd} \
  exec "$(dirname "$0")/run_grnnd_compare.sh" "$@"
