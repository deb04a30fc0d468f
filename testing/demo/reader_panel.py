"""The Gadget reader's properties panel in the GUI, dark matter only
(docs/reader_particle_types.png), on a 3-file snapshot that
testing/readers/snapshot_files.py writes (snap_005.0 .. .2):
  VIC_SNAPSHOT=/path/snap_005.0 PV_PLUGIN_PATH=<build>/lib/paraview-5.11/plugins/Vicinity \
  xvfb-run -a -s '-screen 0 1280x860x24' paraview -geometry 1280x860+0+0 --script=testing/demo/reader_panel.py
and the screen saved with testing/demo/grab_screen.py (cropped to x y w h = 0 140 1000 690)."""
import os

from paraview.simple import OpenDataFile, Render, SetActiveSource, Show

reader = OpenDataFile(os.environ["VIC_SNAPSHOT"])
reader.ParticleTypes = ["PartType1"]
Show(reader)
SetActiveSource(reader)
Render()
