"""pvpython check_picture.py DEMO_LOG PEAKS_VTP DEMO_PNG

The picture check behind test_demo_picture.sh: the number of peak markers
visible in demo.png (count_markers.py) equals the number of peaks the demo
printed and wrote to peaks.vtp, and every peak's marker sits where the
demo's camera projects that peak (the built-in model's view: the x-y
plane, centred on the box, 0.55 box heights above and below the centre)."""
import os
import re
import sys

import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import count_markers  # noqa: E402
import nbody_model  # noqa: E402

TOLERANCE = 4.0  # pixels between a marker's centre and its peak's projection


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


log, peaks_vtp, png = sys.argv[1:4]
m = re.search(r"^\s*peaks\s+(\d+) found", open(log).read(), re.M)
if not m:
    fail("the demo printed no peak count")
printed = int(m.group(1))
r = vtkXMLPolyDataReader()
r.SetFileName(peaks_vtp)
r.Update()
centres = np.asarray(dsa.WrapDataObject(r.GetOutput()).Points, dtype=np.float64).reshape(-1, 3)
if len(centres) != printed:
    fail("peaks.vtp holds %d peaks, the demo printed %d" % (len(centres), printed))

rgb = count_markers.read_rgb(png)
rows, cols = rgb.shape[:2]
blobs = count_markers.marker_blobs(rgb)
print("picture %d x %d: %d markers visible, %d peaks printed" % (cols, rows, len(blobs), printed))
if len(blobs) != printed:
    fail("%d peak markers visible in %s, the demo printed %d" % (len(blobs), png, printed))
# The parallel camera: the image height spans 2 * 0.55 * BOX, centred on the box.
per_unit = rows / (2 * 0.55 * nbody_model.BOX)
expected = np.column_stack([rows / 2.0 - (centres[:, 1] - nbody_model.BOX / 2) * per_unit,
                            cols / 2.0 + (centres[:, 0] - nbody_model.BOX / 2) * per_unit])
got = np.array([(b[0], b[1]) for b in blobs])
for p, e in enumerate(expected):
    d = np.linalg.norm(got - e, axis=1)
    j = int(np.argmin(d))
    print("peak %d: expected at row %.1f, column %.1f; marker %d at %.1f pixels (%d pixels)" % (
        p, e[0], e[1], j, d[j], blobs[j][2]))
    if d[j] > TOLERANCE:
        fail("no marker where peak %d projects (nearest %.1f pixels away)" % (p, d[j]))
print("PASS")
