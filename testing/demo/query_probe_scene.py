"""The kNN Query Probe on the real halo (shared data nbody/halo_low_res.npy):
a probe in the halo's outskirts, its k = 32 neighbours coloured by
distance and joined to it, the halo particles near it for context.

In the GUI (handle widget shown; docs/query_probe_gui.png):
  PV_PLUGIN_PATH=<build>/lib/paraview-5.11/plugins/Vicinity \
  xvfb-run -a -s '-screen 0 1600x1000x24' paraview -geometry 1600x1000+0+0 \
    --script=testing/demo/query_probe_scene.py
With pvbatch it also saves a render:
  xvfb-run -a pvbatch testing/demo/query_probe_scene.py PLUGIN OUT.png
Data folder: VICINITY_DATA_DIR, default ../shared/data beside the repo."""
import os
import sys

import numpy as np
from paraview.simple import *  # noqa: F401,F403

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
import vic_pvtest as t  # noqa: E402

batch = len(sys.argv) > 2
if batch:
    LoadPlugin(sys.argv[1], remote=False, ns=globals())
data = os.environ.get("VICINITY_DATA_DIR", os.path.join(here, "..", "..", "..", "shared", "data"))
xyz = np.load(os.path.join(data, "nbody", "halo_low_res.npy"))
src = t.source(xyz)
RenameSource("halo", src)
view = GetActiveViewOrCreate("RenderView")
pos = xyz.mean(axis=0) + np.array([2.6, -1.2, 0.0]) * xyz.std(axis=0)
# context: the halo particles near the probe (the GUI frames what is shown)
near = t.source(xyz[np.linalg.norm(xyz - pos, axis=1) < 0.6])
RenameSource("halo near the probe", near)
d = Show(near, view)
d.SetRepresentationType("Points")
d.AmbientColor = d.DiffuseColor = [0.75, 0.75, 0.8]
d.PointSize = 3.0
probe = kNNQueryProbe(Input=src)  # noqa: F405 (defined by the plugin)
probe.ProbePosition = [float(v) for v in pos]
probe.k = 32
pd = Show(probe, view)
ColorBy(pd, ("POINTS", "Distance"))
pd.RescaleTransferFunctionToDataRange(True, False)
pd.SetScalarBarVisibility(view, True)
pd.PointSize = 7
pd.RenderPointsAsSpheres = 1
pd.LineWidth = 1.5
pd.Opacity = 0.55
SetActiveSource(probe)
ShowInteractiveWidgets(proxy=probe)
view.ResetCamera()
Render()
if batch:
    view.ViewSize = [1000, 800]
    SaveScreenshot(sys.argv[2], view, ImageResolution=[1000, 800])
    print("saved", sys.argv[2])
