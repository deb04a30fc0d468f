#!/usr/bin/env bash
# The demo behind `make demo`: run demo.py under pvbatch with a virtual X
# display (Debian's ParaView renders through X only).
# Usage: run_demo.sh BUILD_DIR [DATA]   (DATA: .npy, .csv or .vtp)
set -euo pipefail
build=${1:?usage: run_demo.sh BUILD_DIR [DATA]}
data=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin=$(ls "$build"/lib/paraview-*/plugins/Vicinity/Vicinity.so 2>/dev/null | head -n1 || true)
if [ -z "$plugin" ]; then
  echo "run_demo: no Vicinity plugin under $build/lib (was ParaView found when configuring?)" >&2
  exit 1
fi
if [ -n "$data" ] && [ ! -f "$data" ]; then
  echo "run_demo: data file '$data' not found" >&2
  exit 1
fi
args=(--plugin "$(cd "$(dirname "$plugin")" && pwd)/Vicinity.so" --out "$root/out/demo")
[ -n "$data" ] && args+=(--data "$(cd "$(dirname "$data")" && pwd)/$(basename "$data")")
# A display of its own (xvfb_run.sh says why the details matter).
exec "$here/xvfb_run.sh" "$root/out/demo" pvbatch "$here/demo.py" "${args[@]}"
