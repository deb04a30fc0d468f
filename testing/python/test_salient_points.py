"""pvpython: the Salient Points filter on the demo's planted n-body model
(testing/demo/nbody_model.py: five Plummer spheres, one nested inside the
largest, in a uniform background) at a quarter of its size (250,000
particles): every planted centre is found as a peak within a tenth of its
scale radius, no more spurious peaks than the core documents (one per
10^5 particles, plus one: core/src/nbody/peaks.c), the per-particle arrays are
consistent with the peak list, and a NaN mass gives a clear error."""
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa

import vic_pvtest as t

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demo"))
import nbody_model  # noqa: E402

t.setup(globals())
model = nbody_model.generate(scale_count=0.25)
xyz, n = model.positions, len(model.positions)

f = SalientPoints(Input=t.source(xyz, {"mass": model.masses}))
f.k = 32
f.UpdatePipeline()
parts = dsa.WrapDataObject(sm.Fetch(f, idx=0))
peaks = dsa.WrapDataObject(sm.Fetch(f, idx=1))
if parts.GetNumberOfPoints() != n or peaks.GetNumberOfPoints() == 0:
    t.fail("no output (n = %d, peaks %d)" % (parts.GetNumberOfPoints(), peaks.GetNumberOfPoints()))
fd = parts.FieldData
print("n = %d, k = %d, method %s, %d peaks; seconds: lists %.2f, density %.2f, peaks %.2f" % (
    n, fd["k"][0], fd["Method"].GetValue(0), fd["Peaks"][0], fd["Seconds Total"][0],
    fd["Seconds Density"][0], fd["Seconds Peaks"][0]))

centres = np.asarray(peaks.Points, dtype=np.float64)
members = np.asarray(peaks.PointData["Member Count"])
point_id = np.asarray(peaks.PointData["Point Id"])
peak_id = np.asarray(parts.PointData["Peak Id"])
density = np.asarray(parts.PointData["Density"])
saliency = np.asarray(parts.PointData["Saliency"])
delta = np.asarray(parts.PointData["Delta"])

# Consistency of the two outputs.
if members.sum() != n or not np.array_equal(np.bincount(peak_id, minlength=len(members)), members):
    t.fail("Member Count does not match the particles' Peak Id")
if not np.array_equal(peak_id[point_id], np.arange(len(point_id))):
    t.fail("a peak particle does not belong to its own peak")
if not np.allclose(saliency, density * delta, rtol=1e-5):
    t.fail("Saliency is not Density * Delta")
if np.any(np.diff(np.asarray(peaks.PointData["Saliency"])) > 0):
    t.fail("peaks are not ordered by descending saliency")

found = []
for i, s in enumerate(model.spheres):
    d = np.linalg.norm(centres - np.asarray(s.centre), axis=1)
    j = int(np.argmin(d))
    found.append(j)
    print("sphere %d (a = %.2f, %6d particles): peak %d at %.3f a, %d members" % (
        i, s.scale, int(round(s.count * 0.25)), j, d[j] / s.scale, members[j]))
    if d[j] >= 0.1 * s.scale:
        t.fail("planted sphere %d: nearest peak at %.3f scale radii (bound 0.1)" % (i, d[j] / s.scale))
if len(set(found)) != len(found):
    t.fail("two planted spheres share one peak")
spurious = len(centres) - len(model.spheres)
allowed = 1 + n // 100000
print("spurious peaks: %d (allowed %d)" % (spurious, allowed))
if spurious > allowed:
    t.fail("too many spurious peaks")

# A NaN mass: the core's message names the particle, nothing is produced.
bad = model.masses.copy()
bad[777] = np.nan
g = SalientPoints(Input=t.source(xyz[:5000], {"mass": bad[:5000]}))
g.UseMassArray = 1
g.MassArray = ["POINTS", "mass"]
g.UpdatePipeline()
if "Saliency" in dsa.WrapDataObject(sm.Fetch(g, idx=0)).PointData.keys():
    t.fail("a NaN mass was accepted")
print("PASS")
