"""pvpython: the kNN Density filter against analytic densities, and its
errors for bad mass arrays.

 - Gadget-2 gas sphere (1,472 particles with their masses as a mass array,
   rho = 1/(2 pi r)): kNN and SPH densities within 10% median relative
   error in three radial bins between r = 0.2 and 0.8 (the core test's
   bound, through the filter).
 - Plummer sphere (300,000 particles, truncated at 5 a, masses M / n as a
   mass array): the kNN density within 5% median relative error in eight
   logarithmic bins between 0.3 and 3 scale radii.  The core test holds the
   issue's 1,000,000 particles from 0.1 a; here fewer particles keep the
   test quick, and the bins start at 0.3 a because the innermost ones then
   hold only ~100 independent kNN balls: their medians scatter by a few
   percent around the estimator's -2% median bias (the median of a
   Gamma(k) variable is below its mean).  scipy's exact kNN on six seeds
   gave worst bins of 2.5-3.8% on 0.3 .. 3 a, against 5-6% from 0.1 a.
 - Global Density is the Poisson density of the mean d_nn1: checked on a
   uniform periodic box within 2%.
 - Errors: a three-component mass array and a NaN mass stop the filter with
   a message that names the problem (the NaN message names the particle).
"""
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow

import vic_pvtest as t

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demo"))
import nbody_model  # noqa: E402  (the demo's Plummer sampler)

data_dir, _ = t.setup(globals())


def read_gadget(path):
    """Positions and masses of a Gadget-2 format-1 snapshot (little endian,
    one file): Fortran records header(256) | pos | vel | ids | masses."""
    raw = open(path, "rb").read()
    off = 4
    npart = np.frombuffer(raw, np.int32, 6, off)
    massarr = np.frombuffer(raw, np.float64, 6, off + 24)
    n = int(npart.sum())
    off += 256 + 4

    def block(dtype, count):
        nonlocal off
        size = int(np.frombuffer(raw, np.int32, 1, off)[0])
        values = np.frombuffer(raw, dtype, count, off + 4)
        off += size + 8
        return values

    pos = block(np.float32, 3 * n).reshape(n, 3)
    block(np.float32, 3 * n)  # velocities
    block(np.uint32, n)       # ids
    with_mass = int(sum(npart[i] for i in range(6) if massarr[i] == 0))
    var = block(np.float32, with_mass) if with_mass else np.empty(0, np.float32)
    mass, taken = [], 0
    for i in range(6):
        if npart[i] == 0:
            continue
        if massarr[i] > 0:
            mass.append(np.full(npart[i], massarr[i], np.float32))
        else:
            mass.append(var[taken:taken + npart[i]])
            taken += npart[i]
    return np.ascontiguousarray(pos), np.concatenate(mass).astype(np.float32)


def density(xyz, arrays, **props):
    f = kNNDensity(Input=t.source(xyz, arrays))
    for name, value in props.items():
        setattr(f, name, value)
    # Catch the filter's messages only while it runs: pvpython prints
    # through the output window too.
    shown = vtkOutputWindow.GetInstance()
    shown.Register(None)
    messages = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(messages)
    try:
        f.UpdatePipeline()
    finally:
        vtkOutputWindow.SetInstance(shown)
        shown.UnRegister(None)
    out = dsa.WrapDataObject(sm.Fetch(f))
    return out, messages.GetOutput()


def radial_medians(xyz, rho, profile, r_lo, r_hi, bins):
    r = np.linalg.norm(xyz.astype(np.float64), axis=1)
    edges = np.geomspace(r_lo, r_hi, bins + 1)
    med = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (r >= lo) & (r < hi)
        med.append(float(np.median(rho[sel] / profile(r[sel]) - 1.0)))
    return np.array(med)


# --- gas sphere ----------------------------------------------------------
pos, mass = read_gadget(t.data_file(data_dir, "nbody/gassphere_littleendian.dat"))
out, log = density(pos, {"mass": mass}, k=32, UseMassArray=1, MassArray=["POINTS", "mass"])
if out.GetNumberOfPoints() != len(pos):
    t.fail("gas sphere: no output (%s)" % log)
for name in ("Density", "SPH Density"):
    med = radial_medians(pos, np.asarray(out.PointData[name]), lambda r: 1.0 / (2 * np.pi * r), 0.2, 0.8, 3)
    print("gas sphere %-11s median relative error per bin (0.2 .. 0.8): %s" % (name, np.round(med, 3)))
    if np.abs(med).max() >= 0.10:
        t.fail("gas sphere %s: worst bin %.3f (bound 0.10)" % (name, np.abs(med).max()))
h = np.asarray(out.PointData["Smoothing Length"])
dist_k = 2 * h  # pynbody: h = r_k / 2
if not np.all(dist_k >= np.asarray(out.PointData["d_nn1"])):
    t.fail("smoothing length below the nearest-neighbour distance")

# --- Plummer sphere ------------------------------------------------------
n, a, trunc = 300_000, 1.0, nbody_model.TRUNCATION
rng = np.random.default_rng(7)
xyz = nbody_model.plummer(rng, n, a).astype(np.float32)
m_total = 5.0
out, log = density(xyz, {"m": np.full(n, m_total / n, np.float32)}, k=32,
                   UseMassArray=1, MassArray=["POINTS", "m"])
if out.GetNumberOfPoints() != n:
    t.fail("Plummer: no output (%s)" % log)
u_max = trunc ** 3 / (trunc ** 2 + 1.0) ** 1.5  # mass fraction inside the truncation
plummer = lambda r: 3 * m_total / u_max / (4 * np.pi * a ** 3) * (1 + r * r / a ** 2) ** -2.5  # noqa: E731
med = radial_medians(xyz, np.asarray(out.PointData["Density"]), plummer, 0.3 * a, 3 * a, 8)
print("Plummer n = %d kNN density, median relative error per bin (0.3 .. 3 a): %s" % (n, np.round(med, 3)))
if np.abs(med).max() >= 0.05:
    t.fail("Plummer: worst bin %.3f (bound 0.05)" % np.abs(med).max())
print("Plummer: method %s, %s s lists, %s s density" % (
    out.FieldData["Method"].GetValue(0), out.FieldData["Seconds Total"][0], out.FieldData["Seconds Density"][0]))

# --- global density of a uniform box ---------------------------------------
box = rng.uniform(0, 10, size=(200_000, 3)).astype(np.float32)
out, log = density(box, None, k=8, PeriodicBox=1, BoxLengths=[10, 10, 10])
glob = float(out.FieldData["Global Density"][0])
truth = len(box) / 1000.0
print("uniform periodic box: global density %.2f, truth %.2f (%+.2f%%)" % (glob, truth, 100 * (glob / truth - 1)))
if abs(glob / truth - 1) >= 0.02:
    t.fail("global density off by more than 2%")

# --- errors --------------------------------------------------------------
small = rng.normal(size=(500, 3)).astype(np.float32)
out, log = density(small, {"m3": np.ones((500, 3), np.float32)}, UseMassArray=1, MassArray=["POINTS", "m3"])
print("three-component mass array -> %s" % [l for l in log.splitlines() if "mass array" in l][-1:])
if out.GetNumberOfPoints() and "Density" in out.PointData.keys():
    t.fail("a three-component mass array was accepted")
if "mass array 'm3' must hold one value per point" not in log:
    t.fail("three-component mass array: unclear message: %r" % log)
bad = np.ones(500, np.float32)
bad[123] = np.nan
out, log = density(small, {"m": bad}, UseMassArray=1, MassArray=["POINTS", "m"])
print("NaN mass -> %s" % [l for l in log.splitlines() if "mass" in l][-1:])
if "Density" in out.PointData.keys():
    t.fail("a NaN mass was accepted")
if "mass of particle 123 is nan" not in log:
    t.fail("NaN mass: the message does not name the particle: %r" % log)
print("PASS")
