"""GUI script for run_abort_gui_check.sh: Salient Points with Brute Force
on 100,000 random points (minutes of work), started from the script so
that the GUI is inside the update when the abort button is clicked.
Writes $VIC_OUT/abort_start.txt before and abort_result.txt after."""
import os
import sys
import time

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403

sys.path.insert(0, os.path.join(os.environ["VIC_DEMO_DIR"], "..", "python"))
import vic_pvtest as t  # noqa: E402

LoadPlugin(os.environ["VIC_PLUGIN"], remote=False, ns=globals())
src = t.source(np.random.default_rng(1).random((100000, 3)).astype(np.float32))
f = SalientPoints(Input=src)
f.Method = 1  # Brute Force: O(n^2)
f.HaloCatalogue = 0
f.UpdateVTKObjects()  # as Apply does: the properties reach the filter before the run
f.UpdatePipelineInformation()
t0 = time.time()
with open(os.path.join(os.environ["VIC_OUT"], "abort_start.txt"), "w") as out:
    out.write("%f\n" % t0)
Show(f)
with open(os.path.join(os.environ["VIC_OUT"], "abort_result.txt"), "w") as out:
    out.write("update returned after %.1f s\n" % (time.time() - t0))
