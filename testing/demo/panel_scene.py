"""A scene for screenshots of a Vicinity filter's properties panel in the
ParaView GUI (run_panel_shots.sh takes them under Xvfb):
  VIC_PANEL=graph  kNN Graph on a sphere's points (docs/knn_graph_panel.png)
  VIC_PANEL=probe  kNN Query Probe in feature space: "points most like
                   this one" over a 32-component descriptor array with a
                   TSDG graph index (docs/query_probe_panel.png)
Run with: paraview --script=testing/demo/panel_scene.py (the plugin on
PV_PLUGIN_PATH)."""
import os
import sys

import numpy as np
from paraview.simple import *  # noqa: F401,F403

try:
    here = os.path.dirname(os.path.abspath(__file__))
except NameError:  # the GUI runs scripts without __file__
    here = os.environ["VIC_DEMO_DIR"]
sys.path.insert(0, os.path.join(here, "..", "python"))
import vic_pvtest as t  # noqa: E402

view = GetActiveViewOrCreate("RenderView")
if os.environ.get("VIC_PANEL", "graph") == "graph":
    sphere = Sphere(ThetaResolution=64, PhiResolution=64)
    Show(sphere, view)
    graph = kNNGraph(Input=sphere)  # noqa: F405 (defined by the plugin)
    graph.k = 8
    Show(graph, view)
    Hide(sphere, view)
    SetActiveSource(graph)
else:
    rng = np.random.default_rng(3)
    n, d = 6000, 32
    latent = rng.normal(0, 1, (n, 6))
    desc = (latent @ rng.normal(0, 1, (6, d)) + 0.1 * rng.normal(0, 1, (n, d))).astype(np.float32)
    pos = (latent[:, :3] + 0.05 * rng.normal(0, 1, (n, 3))).astype(np.float32)
    src = t.source(pos, {"descriptor": desc})
    RenameSource("descriptors", src)
    shown = Show(src, view)
    shown.SetRepresentationType("Points")
    shown.AmbientColor = shown.DiffuseColor = [0.75, 0.75, 0.8]
    probe = kNNQueryProbe(Input=src)  # noqa: F405 (defined by the plugin)
    probe.UseFeatureArray = 1
    probe.FeatureArray = ["POINTS", "descriptor"]
    probe.QueryMode = "Point Id"
    probe.QueryPointId = 1234
    probe.IndexMethod = "TSDG Graph (GPU or CPU)"
    probe.k = 24
    d = Show(probe, view)
    ColorBy(d, ("POINTS", "Distance"))
    d.SetScalarBarVisibility(view, True)
    SetActiveSource(probe)
ResetCamera(view)
Render(view)
