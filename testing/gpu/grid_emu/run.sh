#!/bin/bash
# CPU check of the grid traversal: per-query work (shell-loop steps, binary
# searches, distances) and rows equal to brute force, for d = 1, 2, 3, open
# and periodic, close pairs, clustered sets.
# usage: testing/gpu/grid_emu/run.sh [GRID_CU] [N] [MODE]
#   MODE 0: all cases (sampled rows)   2: d=2 only   3: plummer3   4: every row
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${1:-$HERE/../../../kernels/src/grid.cu}
TMP=$(mktemp -d)
python3 "$HERE/gen_body.py" "$SRC" "$TMP/body.inc"
g++ -O2 -ffp-contract=off -std=c++17 -I"$TMP" -DBODY='"body.inc"' "$HERE/grid_emu.cpp" -o "$TMP/grid_emu"
"$TMP/grid_emu" "${2:-60000}" "${3:-0}"
