#!/usr/bin/env bash
# The demo's picture shows what the demo prints: run demo.py on a tenth of
# the built-in model (as run_demo.sh runs it: pvbatch under a virtual X
# display), then read demo.png back and require one visible cyan marker per
# peak printed, each where its peak projects (check_picture.py).
# Usage: test_demo_picture.sh PLUGIN WORKDIR
set -uo pipefail
plugin=${1:?usage: test_demo_picture.sh PLUGIN WORKDIR} work=${2:?usage: test_demo_picture.sh PLUGIN WORKDIR}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$here/xvfb_run.sh" "$work" pvbatch "$here/demo.py" --plugin "$plugin" --out "$work" --scale 0.1 >"$work/demo.log" 2>&1
status=$?
cat "$work/demo.log"
[ $status -eq 77 ] && exit 77 # no Xvfb here (xvfb_run.sh said so)
[ $status -eq 0 ] || { echo "FAIL: the demo exited with $status"; exit 1; }
exec pvpython "$here/check_picture.py" "$work/demo.log" "$work/peaks.vtp" "$work/demo.png"
