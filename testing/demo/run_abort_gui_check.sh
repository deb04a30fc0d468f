#!/usr/bin/env bash
# The abort button of ParaView 5.11's GUI on a long Vicinity run
# (pqVicinityAbort.h): the GUI under Xvfb starts Salient Points with Brute
# Force (abort_gui_scene.py); after 30 s the screen is saved (the button is
# enabled, the bar moves), the button is clicked (click_screen.py; it sits
# at 533,985 in a 1600x1000 window), and 20 s later the screen is saved
# again (the run ended: "cancelled; the output is empty").
# Usage: run_abort_gui_check.sh BUILD_DIR OUTDIR
set -euo pipefail
build=$(cd "${1:?usage: run_abort_gui_check.sh BUILD_DIR OUTDIR}" && pwd)
mkdir -p "${2:?usage: run_abort_gui_check.sh BUILD_DIR OUTDIR}"
here=$(cd "$(dirname "$0")" && pwd)
export VIC_PLUGIN=$(ls "$build"/lib/paraview-*/plugins/Vicinity/Vicinity.so | head -n1)
export VIC_OUT=$(cd "$2" && pwd) VIC_DEMO_DIR=$here
xvfb-run -a -n $((100 + RANDOM % 800)) -s '-screen 0 1600x1000x24' bash -c '
  paraview --dr -geometry 1600x1000+0+0 --script="$0/abort_gui_scene.py" & pv=$!
  sleep 30
  pvpython "$0/grab_screen.py" "$VIC_OUT/abort_before.png"
  python3 "$0/click_screen.py" 533 985
  date +%s.%N > "$VIC_OUT/abort_click.txt"
  sleep 20
  pvpython "$0/grab_screen.py" "$VIC_OUT/abort_after.png"
  kill "$pv"' "$here"
