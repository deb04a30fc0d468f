#!/usr/bin/env bash
# GUI screenshot of Salient Points' halo catalogue (spreadsheet), profiles
# (Line Chart View) and render view with the plugin's display defaults:
# the ParaView GUI under Xvfb runs halo_catalogue_views.py, and once it
# has drawn, grab_screen.py saves the screen.
# Usage: run_halo_gui_shots.sh BUILD_DIR OUT.png [SECONDS]
set -euo pipefail
build=$(cd "${1:?usage: run_halo_gui_shots.sh BUILD_DIR OUT.png [SECONDS]}" && pwd)
out=${2:?usage: run_halo_gui_shots.sh BUILD_DIR OUT.png [SECONDS]}
wait_s=${3:-60}
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(ls "$build"/lib/paraview-*/plugins/Vicinity/Vicinity.so | head -n1)
export VIC_PLUGIN=$plugin VIC_OUT=$(dirname "$out") VIC_DEMO_DIR=$here
exec xvfb-run -a -n $((100 + RANDOM % 800)) -s '-screen 0 1600x1000x24' bash -c '
  paraview --dr -geometry 1600x1000+0+0 --script="$0/halo_catalogue_views.py" & pv=$!
  sleep "$1"
  pvpython "$0/grab_screen.py" "$2"
  kill "$pv"' "$here" "$wait_s" "$out"
