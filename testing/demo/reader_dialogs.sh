#!/usr/bin/env bash
# A screenshot of the Vicinity snapshot readers in ParaView's GUI under Xvfb
# (docs/readers_open_with.png): File > Open on a Gadget, an HDF5 and a
# LAMMPS snapshot, each named with an extension no reader claims, so that
# ParaView asks "Open Data With..." and lists the readers that may read it
# (those whose CanReadFile accepts the content, and those without one);
# the three dialogs side by side.  The GUI is driven by ParaView test
# events (XML); grab_screen.py saves the dialog while it is open.
# Usage: reader_dialogs.sh BUILD_DIR OUT_PNG
set -euo pipefail
build=$(cd "$1" && pwd) out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill $pv $xv 2>/dev/null || true; rm -rf "$work"' EXIT
pvpython -c "import sys; sys.path.insert(0, '$here/../readers'); import snapshot_files as sf; sf.make_all('$work/snapshots', '$build/bin/write_snapshot')" >/dev/null
cp "$work/snapshots/halo.gadget" "$work/snapshots/particles.bin"
cp "$work/snapshots/halo.hdf5" "$work/snapshots/particles_h5.bin"
cp "$work/snapshots/melt.lammpstrj" "$work/snapshots/atoms.bin"
display=:$((100 + RANDOM % 800))
Xvfb "$display" -screen 0 1280x860x24 -nolisten tcp >/dev/null 2>&1 &
xv=$!
sleep 2
shoot() { # name, the file to open, the row of the Vicinity reader in the list (selected)
  cat >"$work/$1.xml" <<XML
<?xml version="1.0" ?>
<pqevents>
  <pqevent object="pqClientMainWindow/MainControlsToolbar/actionOpenData" command="activate" arguments="" />
  <pqevent object="pqClientMainWindow/FileOpenDialog" command="filesSelected" arguments="$work/snapshots/$2" />
  <pqevent object="pqClientMainWindow/pqSelectReaderDialog/listWidget" command="setCurrent" arguments="$3.0" />
</pqevents>
XML
  (cd "$work/snapshots" && DISPLAY=$display PV_PLUGIN_PATH=$build/lib/paraview-5.11/plugins/Vicinity \
    paraview --dr -geometry 1280x860+0+0 --test-script="$work/$1.xml" >"$work/$1.log" 2>&1) &
  pv=$!
  sleep 30
  DISPLAY=$display pvpython "$here/grab_screen.py" "$work/$1.png" 404 170 446 436 # the dialog
  kill $pv 2>/dev/null || true
  wait $pv 2>/dev/null || true
  grep -A3 "pqEventPlayer" "$work/$1.log" | head -6 || true # an event that did not play
}
# rows as Debian's ParaView 5.11 lists its readers
shoot gadget particles.bin 13
shoot hdf5 particles_h5.bin 18
shoot lammps atoms.bin 19
pvpython -c "
from PIL import Image
parts = [Image.open('$work/%s.png' % n) for n in ('gadget', 'hdf5', 'lammps')]
sheet = Image.new('RGB', (sum(p.width for p in parts) + 20, max(p.height for p in parts)), 'white')
x = 0
for p in parts:
    sheet.paste(p, (x, 0))
    x += p.width + 10
sheet.save('$out', optimize=True)
print('saved', '$out', sheet.size)"
