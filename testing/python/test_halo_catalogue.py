"""pvpython: Salient Points' halo catalogue on planted NFW halos of known
M_200 and R_200 in a uniform background of a periodic box
(planted_halos.py): masses and radii within 5 %, centres within 0.05
R_200, members inside R_Delta, the profile table (port 2), the energy cut
with a velocity array (bulk velocity, dispersion of the cold halos), and
friends-of-friends groups; a uniform Poisson box gives no halo; k below
its minimum is an error; Min Members has a widget (an int property)."""
import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa

import planted_halos
import vic_pvtest as t

t.setup(globals())
model = planted_halos.generate()
xyz, n = model.positions, len(model.positions)
src = t.source(xyz, {"velocity": model.velocities})


def run(**props):
    f = SalientPoints(Input=src)
    f.k = 32
    f.PeriodicBox = 1
    f.BoxLengths = [1, 1, 1]
    for key, value in props.items():
        setattr(f, key, value)
    f.UpdatePipeline()
    return (f, dsa.WrapDataObject(sm.Fetch(f, idx=0)), dsa.WrapDataObject(sm.Fetch(f, idx=1)),
            sm.Fetch(f, idx=2))


f, parts, peaks, profiles = run()
fd = parts.FieldData
halo_id = np.asarray(peaks.PointData["Halo Id"])
is_halo = halo_id >= 0
print("n = %d: %d peaks, %d halos, mean density %.1f (truth %.1f)" % (
    n, fd["Peaks"][0], fd["Halos"][0], fd["Mean Density"][0], model.rho_mean))
if fd["Halos"][0] != 3 or is_halo.sum() != 3:
    t.fail("expected the 3 planted halos, got %d" % fd["Halos"][0])
centres = np.asarray(peaks.Points, dtype=np.float64)[is_halo]
r_delta = np.asarray(peaks.PointData["R_Delta"])[is_halo]
m_delta = np.asarray(peaks.PointData["M_Delta"])[is_halo]
members = np.asarray(peaks.PointData["Halo Members"])[is_halo]
com = np.asarray(peaks.PointData["Centre Of Mass"])[is_halo]
hid = halo_id[is_halo]
particle_halo = np.asarray(parts.PointData["Halo Id"])
for truth in model.halos:
    q = int(np.argmin(planted_halos.wrapped_distance(centres, truth["centre"])))
    off = planted_halos.wrapped_distance(centres[q], truth["centre"]) / truth["r200"]
    off_com = planted_halos.wrapped_distance(com[q], truth["centre"]) / truth["r200"]
    print("  halo: R_200 %.5f (truth %.5f), M_200 %.1f (truth %.1f), centre off %.4f R_200, "
          "centre of mass off %.4f R_200, %d members" % (r_delta[q], truth["r200"], m_delta[q], truth["m200"],
                                                        off, off_com, members[q]))
    if abs(r_delta[q] / truth["r200"] - 1) > 0.05 or abs(m_delta[q] / truth["m200"] - 1) > 0.05:
        t.fail("R_200 or M_200 more than 5 % off")
    if off > 0.05 or off_com > 0.05:
        t.fail("centre more than 0.05 R_200 off")
    mine = np.nonzero(particle_halo == hid[q])[0]
    if len(mine) != members[q]:
        t.fail("Halo Id on the particles (%d) disagrees with Halo Members (%d)" % (len(mine), members[q]))
    if planted_halos.wrapped_distance(xyz[mine], centres[q]).max() > r_delta[q] * (1 + 1e-5):
        t.fail("a member lies outside R_Delta")

# Profiles: one row per halo and bin, density falling outward.
rows = profiles.GetNumberOfRows()
if rows != 3 * f.ProfileBins:
    t.fail("profile table has %d rows, expected %d" % (rows, 3 * f.ProfileBins))
col = {profiles.GetColumnName(i): dsa.vtkDataArrayToVTKArray(profiles.GetColumn(i))
       for i in range(profiles.GetNumberOfColumns())}
for h in range(3):
    rho = np.asarray(col["Density"])[np.asarray(col["Halo"]) == h]
    if not (rho[2] > rho[-1] * 10):
        t.fail("halo %d's profile does not fall outward: %s" % (h, rho))
print("profiles: %d rows, columns %s" % (rows, sorted(col)))

# Velocities and the energy cut; friends-of-friends.
f2, parts2, peaks2, _ = run(UseVelocityArray=1, VelocityArray=["POINTS", "velocity"], RemoveUnbound=1,
                            FriendsOfFriends=1)
h2 = np.asarray(peaks2.PointData["Halo Id"]) >= 0
sig = np.asarray(peaks2.PointData["Velocity Dispersion"])[h2]
bulk = np.asarray(peaks2.PointData["Bulk Velocity"])[h2]
c2 = np.asarray(peaks2.Points, dtype=np.float64)[h2]
for truth in model.halos:
    q = int(np.argmin(planted_halos.wrapped_distance(c2, truth["centre"])))
    print("  unbound removed: sigma %.3f (truth %.3f), bulk %s (truth %s)" % (sig[q], truth["sigma"], bulk[q],
                                                                             truth["bulk"]))
    if abs(sig[q] / truth["sigma"] - 1) > 0.05 or np.abs(bulk[q] - truth["bulk"]).max() > 0.05 * truth["sigma"]:
        t.fail("velocity dispersion or bulk velocity off")
groups = np.asarray(parts2.PointData["FoF Group"])
fd2 = parts2.FieldData
print("fof: %d groups, linking length %.5f" % (fd2["FoF Groups"][0], fd2["FoF Linking Length"][0]))
for g in range(3):
    own = model.owner[groups == g]
    top = np.bincount(own + 1).argmax() - 1
    if top < 0 or (own == top).mean() < 0.9:
        t.fail("FoF group %d is not one planted halo" % g)

# A uniform Poisson box: no halo.
rng = np.random.default_rng(11)
box = t.source(rng.random((150000, 3)).astype(np.float32))
u = SalientPoints(Input=box)
u.PeriodicBox = 1
u.BoxLengths = [1, 1, 1]
u.UpdatePipeline()
ufd = dsa.WrapDataObject(sm.Fetch(u, idx=0)).FieldData
uprof = sm.Fetch(u, idx=2)
print("uniform box: %d peaks, %d halos, %d profile rows" % (ufd["Peaks"][0], ufd["Halos"][0], uprof.GetNumberOfRows()))
if ufd["Halos"][0] != 0 or uprof.GetNumberOfRows() != 0:
    t.fail("halos in a Poisson box")

# GUI: Min Members is an int property (5.11 shows no widget for IdType ones).
if f.GetProperty("MinMembers").SMProperty.GetClassName() != "vtkSMIntVectorProperty":
    t.fail("Min Members is not an int property")

# k below its minimum is an error (the filter does not run), not another k.
bad = SalientPoints(Input=src)
bad.k = 1
bad.UpdatePipeline()
if sm.Fetch(bad, idx=0).GetNumberOfPoints() != 0 or bad.k != 1:
    t.fail("k = 1 silently became another k")
# Abort from a progress observer (what ParaView 5.12's abort button does
# through CheckAbort; 5.11's GUI never enables the button): empty output.
stop = SalientPoints(Input=src)
algo = stop.GetClientSideObject()
runs = []
tag = algo.AddObserver("ProgressEvent", lambda obj, event: obj.SetAbortExecute(1))
algo.AddObserver("StartEvent", lambda obj, event: runs.append(1))
stop.UpdatePipeline()
if sm.Fetch(stop, idx=0).GetNumberOfPoints() != 0:
    t.fail("abort from the progress observer did not cancel")
# Later requests (other ports, views) stay cancelled and do not search
# again until the abort is cleared (the GUI clears it when the filter is
# edited); then it runs.
algo.RemoveObserver(tag)
t_cancelled = __import__("time").time()
sm.Fetch(stop, idx=1)
sm.Fetch(stop, idx=2)
stop.k = 33
stop.UpdatePipeline()
if sm.Fetch(stop, idx=0).GetNumberOfPoints() != 0:
    t.fail("an aborted filter ran again before its abort was cleared")
cancelled_runs = len(runs)
algo.SetAbortExecute(0)
stop.UpdatePipeline()
if sm.Fetch(stop, idx=0).GetNumberOfPoints() != n:
    t.fail("after an abort and a property change the filter does not run")
print("abort: %d requests while cancelled, then a full run after a change" % cancelled_runs)
print("test_halo_catalogue: all checks passed")
