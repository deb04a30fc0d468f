#!/usr/bin/env bash
# Screenshots of the Vicinity snapshot readers in ParaView's GUI under Xvfb
# (docs/readers_open_with.png, docs/readers_file_dialog.png):
#  - "Open Data With...": a Gadget snapshot named particles.bin, an
#    extension no reader claims, so ParaView lists every reader;
#  - File > Open with "Files of type" set to the Gadget reader's entry,
#    in a folder of snapshots of each format.
# The GUI is driven by a ParaView test script (XML events); the screen is
# saved by xgrab.py while the dialog is open.
# Usage: reader_dialogs.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$(cd "$1" && pwd) out=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill $pv $xv 2>/dev/null || true; rm -rf "$work"' EXIT
pvpython -c "import sys; sys.path.insert(0, '$here/../readers'); import snapshot_files as sf; sf.make_all('$work/snapshots', '$build/bin/write_snapshot')" >/dev/null
cp "$work/snapshots/halo.gadget" "$work/snapshots/particles.bin"
display=:$((100 + RANDOM % 800))
Xvfb "$display" -screen 0 1280x860x24 -nolisten tcp >/dev/null 2>&1 &
xv=$!
sleep 2
shoot() { # name, then the XML events after opening the file dialog
  cat >"$work/$1.xml" <<XML
<?xml version="1.0" ?>
<pqevents>
  <pqevent object="pqClientMainWindow/MainControlsToolbar/actionOpenData" command="activate" arguments="" />
  $2
</pqevents>
XML
  (cd "$work/snapshots" && DISPLAY=$display PV_PLUGIN_PATH=$build/lib/paraview-5.11/plugins/Vicinity \
    paraview --dr -geometry 1280x860+0+0 --test-script="$work/$1.xml" >"$work/$1.log" 2>&1) &
  pv=$!
  sleep 30
  DISPLAY=$display pvpython "$here/xgrab.py" "$out/$1.png"
  kill $pv 2>/dev/null || true
  wait $pv 2>/dev/null || true
  grep -A3 "pqEventPlayer" "$work/$1.log" | head -6 || true # an event that did not play
}
shoot readers_open_with \
  "<pqevent object=\"pqClientMainWindow/FileOpenDialog\" command=\"filesSelected\" arguments=\"$work/snapshots/particles.bin\" />"
shoot readers_file_dialog \
  "<pqevent object=\"pqClientMainWindow/FileOpenDialog/mainSplitter/layoutWidget/EntityType\" command=\"set_string\" arguments=\"Gadget Snapshot (Vicinity) (*.gadget *.g1 *.g2 *.gdt *.dat snap_* snapshot_* snap.* ics_* ic_*)\" />"
