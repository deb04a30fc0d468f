"""Periodic boxes from the data (pvpython).

    pvpython test_box_from_data.py PLUGIN_DIR_PARENT README WORKDIR

- the issue's case: a Gadget snapshot of a 50,000-wide box, kNN Density with
  Periodic Box ticked and Box Lengths left at 1 1 1: with Use Box From Data
  (the default) the box is the file's and the density is the mean density
  M / V, equal to an explicit 50,000 box; with it off the unit box is an
  error naming the points' span and the length 1 -- not 3e4 instead of
  2.4e-10 without a word;
- a snapshot whose header BoxSize is smaller than its points: an error
  naming both numbers; a LAMMPS box with an origin and an open axis works;
- kNN Graph and Salient Points take the box from the data too;
- README's snapshot example is this folder's snapshot_density.py, verbatim,
  and runs on a snapshot written here.
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import LoadPlugin, OpenDataFile
from vtkmodules.numpy_interface import dataset_adapter as dsa

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "python"))
import snapshot_files as sf  # noqa: E402
import vic_pvtest as t  # noqa: E402

build_dir, readme, workdir = sys.argv[1:4]
plugin = os.path.join(build_dir, "lib/paraview-5.11/plugins/Vicinity/Vicinity.so")
LoadPlugin(plugin, remote=False, ns=globals())
os.makedirs(workdir, exist_ok=True)
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL: " + message)


def run(proxy):
    """Updates proxy; returns (point arrays, error messages)."""
    messages = t.update_caught(proxy)
    w = dsa.WrapDataObject(sm.Fetch(proxy))
    return {name: np.asarray(w.PointData[name]) for name in w.PointData.keys()}, messages


BIG = 50000.0
p = sf.particles(seed=21, box=BIG)
big = os.path.join(workdir, "snap_big.gadget")
sf.write_gadget(big, p, box=BIG)
snap = OpenDataFile(big)
total_mass = float(p["mass"].astype(np.float64).sum())

d = kNNDensity(Input=snap)  # noqa: F821 (LoadPlugin's proxies)
d.k = 16
d.PeriodicBox = 1
d.UseMassArray = 1
d.MassArray = ["POINTS", "Mass"]
check(list(d.BoxLengths) == [1, 1, 1] and d.UseBoxFromData == 1, "defaults: Box Lengths 1 1 1, box from data on")
got, log = run(d)
rho = got.get("Density", np.zeros(0))
mean = total_mass / BIG ** 3
check(len(rho) == len(p["ids"]) and not log, "box from the data: %d densities, messages %r" % (len(rho), log[-300:]))
if len(rho):
    ratio = float(np.median(rho)) / mean
    print("box from the data: median density %.4g, M/V %.4g (ratio %.3f)" % (np.median(rho), mean, ratio))
    check(0.7 < ratio < 1.3, "median density / (M/V) = %.3f" % ratio)
d.UseBoxFromData = 0
got, log = run(d)
check("the points span" in log and "but the box length is 1;" in log,
      "a unit box on a 50000 box must be an error naming both: %r" % log[-400:])
check(len(got.get("Density", [])) == 0, "no densities from a box that does not hold the data")
print("unit box, Use Box From Data off: %s" % [m.strip() for m in log.splitlines() if "span" in m][:1])
d.BoxLengths = [BIG] * 3
got, log = run(d)
check(len(got.get("Density", [])) == len(rho) and np.array_equal(got["Density"], rho),
      "the box from the data equals an explicit 50000 box")

# Periodic Box off on data that declare a box: a warning, and open distances
d.PeriodicBox = 0
d.UseBoxFromData = 1
got, log = run(d)
check("declare a periodic box" in log and len(got.get("Density", [])) == len(rho),
      "periodic off on a snapshot with a box: expected a warning, got %r" % log[-300:])

# a header that declares a box smaller than the points
small = os.path.join(workdir, "snap_small.gadget")
sf.write_gadget(small, p, box=20000.0)
d2 = kNNDensity(Input=OpenDataFile(small))  # noqa: F821
d2.PeriodicBox = 1
_, log = run(d2)
check("but the box length is 20000;" in log and "the points span 4" in log,
      "a header box smaller than the data: %r" % log[-400:])

# LAMMPS: an origin and an open (fs) z axis from the dump
atoms = sf.lammps_atoms()
dump = os.path.join(workdir, "melt.lammpstrj")
sf.write_lammps(dump, atoms)
lmp = OpenDataFile(dump)
d3 = kNNDensity(Input=lmp)  # noqa: F821
d3.k = 8
d3.PeriodicBox = 1
got, log = run(d3)
check(len(got.get("Density", [])) == len(atoms["ids"]) and not log, "LAMMPS box from the data: %r" % log[-300:])
g = kNNGraph(Input=lmp)  # noqa: F821
g.k = 4
g.GenerateGraph = 0
g.PeriodicBox = 1
got, log = run(g)
ids, dist = got.get("Neighbor Ids"), got.get("Neighbor Distances")
check(ids is not None and not log, "kNN Graph with the LAMMPS box: %r" % log[-300:])
if ids is not None:
    # the reference: minimum image in x and y (pp), open z (fs)
    xyz = atoms["pos"].astype(np.float64)
    L = np.array([sf.LAMMPS_BOX[0], sf.LAMMPS_BOX[1], 0.0])
    diff = np.abs(xyz[:, None, :] - xyz[None, :, :])
    diff = np.where(L > 0, np.minimum(diff, np.where(L > 0, L, 1) - diff), diff)
    ref = np.sqrt((diff ** 2).sum(-1))
    np.fill_diagonal(ref, np.inf)
    order = np.argsort(atoms["ids"])  # the reader keeps the dump's order: ids ascending
    want = np.sort(ref, axis=1)[:, :4]
    check(np.allclose(np.asarray(dist)[order], want[order], rtol=1e-4),
          "kNN Graph distances in the LAMMPS box (pp pp fs) differ from minimum image in x, y only")
s = SalientPoints(Input=OpenDataFile(big))  # noqa: F821
s.PeriodicBox = 1
got, log = run(s)
check(len(got.get("Saliency", [])) == len(p["ids"]) and not log, "Salient Points with the box from data: %r" % log[-300:])
print("kNN Graph, kNN Density, Salient Points: box from the data accepted; LAMMPS pp pp fs distances checked")

# README's example, verbatim: the file is the README's block, and it runs
with open(os.path.join(here, "snapshot_density.py")) as f:
    example = f.read()
with open(readme) as f:
    blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
check(example in blocks, "README has no python block equal to testing/readers/snapshot_density.py")
ex_dir = os.path.join(workdir, "example")
os.makedirs(ex_dir, exist_ok=True)
if not os.path.exists(os.path.join(ex_dir, "build")):
    os.symlink(build_dir, os.path.join(ex_dir, "build"))  # the example names build/lib/... as from a checkout
sf.write_gadget(os.path.join(ex_dir, "snap_010"), sf.particles(seed=3), nfiles=2)
res = subprocess.run([shutil.which("pvpython"), os.path.join(here, "snapshot_density.py"), "snap_010.0"], cwd=ex_dir,
                     capture_output=True, text=True, timeout=300)
print(res.stdout.strip())
check(res.returncode == 0 and "particles 1000, box 50 x 50 x 50" in res.stdout and "density min" in res.stdout,
      "the README example: rc %d, %s %s" % (res.returncode, res.stdout[-300:], res.stderr[-500:]))
if failures:
    sys.exit(1)
print("BOX-FROM-DATA-OK")
