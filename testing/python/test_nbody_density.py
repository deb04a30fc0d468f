"""pvpython: the kNN Density filter against analytic densities, and its
errors for bad mass arrays.

 - Gadget-2 gas sphere (rho = 1/(2 pi r), M = R = 1, the masses as a mass
   array): kNN and SPH densities within 10% median relative error in three
   radial bins between r = 0.2 and 0.8 (the core test's bound, through the
   filter).  Always on 20,000 particles drawn from the profile, written by
   this test as a Gadget-1 snapshot and read back (for this Poisson sample
   the SPH sum is compared without the particle's own term, a third of the
   density at k = 32: see core/test_density_gassphere.c); also on the
   Gadget-2 suite's own snapshot (1,472 particles in a glass) when the
   data folder has it.
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


def write_gadget(path, pos, mass):
    """A Gadget-2 format-1 snapshot (little endian, one file) of type-1
    particles with per-particle masses (massarr 0), zero velocities."""
    n = len(pos)
    header = np.zeros(256, np.uint8)
    header[0:24] = np.frombuffer(np.array([0, n, 0, 0, 0, 0], "<i4").tobytes(), np.uint8)
    header[96:120] = np.frombuffer(np.array([0, n, 0, 0, 0, 0], "<u4").tobytes(), np.uint8)  # npartTotal
    header[160:164] = np.frombuffer(np.array([1], "<i4").tobytes(), np.uint8)  # num_files
    blocks = [header.tobytes(), np.asarray(pos, "<f4").tobytes(), np.zeros((n, 3), "<f4").tobytes(),
              np.arange(1, n + 1, dtype="<u4").tobytes(), np.asarray(mass, "<f4").tobytes()]
    with open(path, "wb") as f:
        for b in blocks:
            marker = np.array([len(b)], "<i4").tobytes()
            f.write(marker + b + marker)


def gas_sphere(n, seed=11):
    """n particles of rho = 1/(2 pi r) inside r = 1 (M(r) = r^2), mass 1/n each."""
    rng = np.random.default_rng(seed)
    r = np.sqrt(rng.uniform(0, 1, n))
    v = rng.normal(size=(n, 3))
    v /= np.linalg.norm(v, axis=1)[:, None]
    return (v * r[:, None]).astype(np.float32), np.full(n, 1.0 / n, np.float32)


def density(xyz, arrays, **props):
    f = kNNDensity(Input=t.source(xyz, arrays))
    for name, value in props.items():
        setattr(f, name, value)
    messages = t.update_caught(f)
    return dsa.WrapDataObject(sm.Fetch(f)), messages


def radial_medians(xyz, rho, profile, r_lo, r_hi, bins):
    r = np.linalg.norm(xyz.astype(np.float64), axis=1)
    edges = np.geomspace(r_lo, r_hi, bins + 1)
    med = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (r >= lo) & (r < hi)
        med.append(float(np.median(rho[sel] / profile(r[sel]) - 1.0)))
    return np.array(med)


# --- gas sphere ----------------------------------------------------------
def check_gas_sphere(label, path, poisson):
    pos, mass = read_gadget(path)
    total = float(mass.astype(np.float64).sum())
    if abs(total - 1.0) > 1e-3:
        t.fail("%s: total mass %g, not 1" % (label, total))
    out, log = density(pos, {"mass": mass}, k=32, UseMassArray=1, MassArray=["POINTS", "mass"])
    if out.GetNumberOfPoints() != len(pos):
        t.fail("%s: no output (%s)" % (label, log))
    h = np.asarray(out.PointData["Smoothing Length"])
    dist_k = 2 * h  # pynbody: h = r_k / 2
    if not np.all(dist_k >= np.asarray(out.PointData["d_nn1"])):
        t.fail("%s: smoothing length below the nearest-neighbour distance" % label)
    sph = np.asarray(out.PointData["SPH Density"], dtype=np.float64)
    if poisson:  # the particle's own term m W(0) = 8 m / (pi r_k^3)
        sph = sph - 8.0 * mass / (np.pi * dist_k.astype(np.float64) ** 3)
    for name, rho in (("Density", np.asarray(out.PointData["Density"])), ("SPH Density", sph)):
        med = radial_medians(pos, rho, lambda r: 1.0 / (2 * np.pi * r), 0.2, 0.8, 3)
        print("%s %-11s median relative error per bin (0.2 .. 0.8): %s" % (label, name, np.round(med, 3)))
        if np.abs(med).max() >= 0.10:
            t.fail("%s %s: worst bin %.3f (bound 0.10)" % (label, name, np.abs(med).max()))


written = os.path.join(os.environ.get("TMPDIR", "/tmp"), "vic_test_nbody_density_%d.dat" % os.getpid())
write_gadget(written, *gas_sphere(20000))
try:
    check_gas_sphere("synthetic gas sphere (Poisson, Gadget-1 written here)", written, poisson=True)
finally:
    os.remove(written)
real = t.extra_data_file(data_dir, "nbody/gassphere_littleendian.dat")
if real:
    check_gas_sphere("Gadget-2 suite gas sphere (glass)", real, poisson=False)

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
