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
# A random first display number: several xvfb-run at once on one machine
# otherwise race for :99 and one loses its X server.  -noreset: Xvfb
# otherwise restarts whenever its last client disconnects, and on a loaded
# machine pvbatch's next connection (the render view's) can land in that
# restart and fail ("bad X server connection").
exec xvfb-run -a -n $((100 + RANDOM % 800)) -s '-screen 0 1280x1024x24 -noreset' pvbatch "$here/demo.py" "${args[@]}"
