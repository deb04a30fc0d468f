#!/usr/bin/env bash
# GUI screenshots of a Vicinity filter's properties panel: the ParaView GUI
# under Xvfb runs panel_scene.py (VIC_PANEL=graph or probe), then the
# panel's advanced-properties button (the gear beside its search box) is
# clicked and the screen saved; with SCROLL > 0 the panel is then scrolled
# down that many wheel steps and saved again (OUT with -scrolled).
# Usage: run_panel_shots.sh BUILD_DIR graph|probe OUT.png [SCROLL] [SECONDS]
set -euo pipefail
build=$(cd "${1:?usage: run_panel_shots.sh BUILD_DIR graph|probe OUT.png [SCROLL] [SECONDS]}" && pwd)
export VIC_PANEL=${2:?graph or probe}
out=${3:?OUT.png}
scroll=${4:-0}
wait_s=${5:-40}
here=$(cd "$(dirname "$0")" && pwd)
export VIC_DEMO_DIR=$here
export PV_PLUGIN_PATH=$(dirname "$(ls "$build"/lib/paraview-*/plugins/Vicinity/Vicinity.so | head -n1)")
exec xvfb-run -a -n $((100 + RANDOM % 800)) -s '-screen 0 1600x1200x24' bash -c '
  paraview --dr -geometry 1600x1200+0+0 --script="$0/panel_scene.py" & pv=$!
  sleep "$1"
  python3 "$0/click_screen.py" 271 609    # the gear: show advanced properties
  sleep 3
  pvpython "$0/grab_screen.py" "$2"
  if [ "$3" -gt 0 ]; then
    python3 "$0/click_screen.py" 140 800 5 "$3"   # wheel down over the panel
    sleep 3
    pvpython "$0/grab_screen.py" "${2%.png}-scrolled.png"
  fi
  kill "$pv"' "$here" "$wait_s" "$out" "$scroll"
