"""pvpython test of the SPH Resample filter (issue 19).

- A Plummer sphere (20,000 particles, total mass 1) through kNN Density
  then SPH Resample (projection along z, following the data's bounds):
  the image holds the whole mass to 1e-5 and the field data says so; the
  mapped constant array comes back as that constant wherever there is
  mass and NaN elsewhere.
- Smoothing lengths computed by the filter (k = 32) give the same image
  as kNN Density's array.
- Along x the image spans y and z; a slice and a volume have the asked
  cells, and the volume integrates to the mass within 1e-4.
- Errors: no smoothing-length array, a negative smoothing length (the
  message names the particle), a missing mapped array.
"""
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa

import vic_pvtest as t

data_dir, _ = t.setup(globals())


def run(proxy):
    messages = t.update_caught(proxy)
    return sm.Fetch(proxy), messages


def image(out, name):
    dims = out.GetDimensions()
    values = np.asarray(dsa.WrapDataObject(out).PointData[name])
    return values.reshape(dims[2], dims[1], dims[0])


def field(out, name):
    a = out.GetFieldData().GetAbstractArray(name)
    return a.GetVariantValue(0).ToString() if a else None


rng = np.random.default_rng(19)
n = 20000
X = rng.uniform(1e-6, 0.999, n)
r = 1.0 / np.sqrt(X ** (-2.0 / 3.0) - 1.0)
v = rng.normal(size=(n, 3))
xyz = (r[:, None] * v / np.linalg.norm(v, axis=1)[:, None]).astype(np.float32)
xyz = xyz[np.abs(xyz).max(axis=1) < 20]  # a compact cloud: the bounds stay a few a wide
n = len(xyz)
src = t.source(xyz, {"two": np.full(n, 2.0, np.float32)})
dens = kNNDensity(Input=src)
dens.k = 32

# --- projection, mass, means ---------------------------------------------
proj = SPHResample(Input=dens)
proj.SmoothingLengthArray = ["POINTS", "Smoothing Length"]
proj.Resolution = [200, 180, 1]
proj.TotalMass = 1.0
proj.MappedArrays = ["two", "Density"]  # kNN Density's "Density": a name the volume uses too
out, log = run(proj)
if out.GetNumberOfPoints() != 200 * 180:
    t.fail("projection: %d points, expected 200 x 180; log %r" % (out.GetNumberOfPoints(), log))
sig = image(out, "Surface Density")
sp = out.GetSpacing()
total = float(sig.sum(dtype=np.float64)) * sp[0] * sp[1]
print("projection: integral %.8f (mass 1), field data Mass Deposited %s, backend %s" %
      (total, field(out, "Mass Deposited"), field(out, "Backend")))
if not abs(total - 1.0) <= 1e-5:
    t.fail("the projection holds %.8f of the mass 1" % total)
two = image(out, "two")
filled = sig > 0
if not np.allclose(two[filled], 2.0, rtol=1e-5) or not np.isnan(two[~filled]).all():
    t.fail("the mean of a constant 2 is not 2 where there is mass, NaN elsewhere")
if "Density" not in dsa.WrapDataObject(out).PointData.keys():
    t.fail("the mapped kNN Density array is missing")
if filled.mean() < 0.3:
    t.fail("only %.2f of the pixels hold mass" % filled.mean())

# --- smoothing lengths computed by the filter --------------------------------
own = SPHResample(Input=dens)
own.SmoothingSource = "From k Neighbours"
own.k = 32
own.Resolution = [200, 180, 1]
own.TotalMass = 1.0
out2, log2 = run(own)
diff = np.abs(image(out2, "Surface Density") - sig).max()
print("k = 32 in the filter vs kNN Density's array: largest difference %.3g" % diff)
if diff > 1e-6 * sig.max():
    t.fail("smoothing lengths from the filter give a different image (%g); log %r" % (diff, log2))

# --- directions, slice, volume --------------------------------------------
proj.Direction = "X"
out, _ = run(proj)
dm = out.GetDirectionMatrix()
if dm.GetElement(1, 0) != 1.0 or dm.GetElement(2, 1) != 1.0 or dm.GetElement(0, 2) != 1.0:
    t.fail("along X the image's axes are not y, z, x")
side = image(out, "Surface Density")
yz = float(side.sum(dtype=np.float64)) * out.GetSpacing()[0] * out.GetSpacing()[1]
if not abs(yz - 1.0) <= 1e-5:
    t.fail("along X the projection holds %.8f of the mass 1" % yz)
sl = SPHResample(Input=dens)
sl.SmoothingLengthArray = ["POINTS", "Smoothing Length"]
sl.Mode = "Slice"
sl.Resolution = [64, 64, 1]
out, _ = run(sl)
if out.GetDimensions() != (64, 64, 1) or image(out, "Density").max() <= 0:
    t.fail("slice: dimensions %s" % (out.GetDimensions(),))
vol = SPHResample(Input=dens)
vol.SmoothingLengthArray = ["POINTS", "Smoothing Length"]
vol.Mode = "Volume"
vol.Resolution = [40, 36, 32]
vol.TotalMass = 1.0
vol.MappedArrays = ["Density"]
out, _ = run(vol)
if "Density (mean)" not in dsa.WrapDataObject(out).PointData.keys():
    t.fail("the volume's mapped 'Density' should be 'Density (mean)'")
sp = out.GetSpacing()
vd = image(out, "Density")
vtot = float(vd.sum(dtype=np.float64)) * sp[0] * sp[1] * sp[2]
print("volume %s: integral %.6f" % (out.GetDimensions(), vtot))
if out.GetDimensions() != (40, 36, 32) or not abs(vtot - 1.0) <= 1e-4:
    t.fail("volume: dimensions %s, integral %.6f" % (out.GetDimensions(), vtot))

# --- errors --------------------------------------------------------------
bare = SPHResample(Input=src)
out, log = run(bare)
print("no smoothing lengths -> %s" % [l for l in log.splitlines() if "SPH Resample" in l][-1:])
if out.GetNumberOfPoints() or "no smoothing-length array" not in log:
    t.fail("no smoothing-length array: %r" % log)
h = np.full(n, 0.1, np.float32)
h[77] = -1
bad = SPHResample(Input=t.source(xyz, {"h": h}))
bad.SmoothingLengthArray = ["POINTS", "h"]
out, log = run(bad)
if out.GetNumberOfPoints() or "smoothing length of particle 77" not in log:
    t.fail("negative smoothing length: %r" % log)
miss = SPHResample(Input=dens)
miss.SmoothingLengthArray = ["POINTS", "Smoothing Length"]
miss.GetProperty("MappedArrays").SetData(["nosuch"])
out, log = run(miss)
if out.GetNumberOfPoints() or "no point array 'nosuch'" not in log:
    t.fail("missing mapped array: %r" % log)
print("PASS")
