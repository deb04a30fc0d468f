"""pvpython: the kNN Query Probe with the GPU graph indexes (GGNN, GRNND,
TSDG) for feature-space probes ("points most like this one").

Runs on any machine: what a GPU index becomes without a usable GPU is the
core's decision (vic_index_build), and the test checks the filter passes it
on -- with Backend GPU an error with the core's reason, with Backend Auto
GGNN and GRNND become the CPU NN-Descent graph with the core's warning and
reason, TSDG builds on the CPU.  With a usable GPU the same calls must give
the GPU indexes themselves.

The index is kept between probe moves: the second and third moves (Point
Id in feature space, the handle in 3-d) search the same index (Index
Builds stays 1, Index Rebuilt 0); a build parameter of the shared build
options (TSDG Alpha) or the backend rebuilds it; k does not.  Results:
recall@k against numpy brute force."""
import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.vtkConstants import VTK_STRING

import vic_pvtest as t

t.setup(globals())
rng = np.random.default_rng(11)


class Messages:
    """The filter's errors and warnings (ErrorEvent / WarningEvent)."""

    def __init__(self, proxy):
        self.errors, self.warnings = [], []
        obj = proxy.GetClientSideObject()
        obj.AddObserver("ErrorEvent", self.on_error)
        obj.AddObserver("WarningEvent", self.on_warning)

    @calldata_type(VTK_STRING)
    def on_error(self, obj, event, message):
        self.errors.append(message)

    @calldata_type(VTK_STRING)
    def on_warning(self, obj, event, message):
        self.warnings.append(message)

    def clear(self):
        self.errors.clear()
        self.warnings.clear()


def run(proxy):
    """Update; (field dict, ids by rank, distances by rank) of query 0."""
    proxy.UpdatePipeline()
    out = sm.Fetch(proxy)
    fd = out.GetFieldData()
    field = {fd.GetAbstractArray(i).GetName(): fd.GetAbstractArray(i).GetVariantValue(0).ToString()
             for i in range(fd.GetNumberOfArrays())}
    if out.GetNumberOfPoints() == 0:
        return field, np.array([], np.int64), np.array([], np.float32)
    w = dsa.WrapDataObject(out)
    rank = np.asarray(w.PointData["Rank"])
    sel = (np.asarray(w.PointData["Query Id"]) == 0) & (rank >= 0)
    order = np.argsort(rank[sel])
    return field, np.asarray(w.PointData["Neighbor Id"])[sel][order], \
        np.asarray(w.PointData["Distance"])[sel][order]


def builds(field):
    return int(float(field["Index Builds"])), int(float(field["Index Rebuilt"]))


def recall(x, query, exclude, got_d, k):
    d = np.linalg.norm(np.asarray(x, np.float64) - np.asarray(query, np.float64), axis=1)
    if exclude is not None:
        d[exclude] = np.inf
    kth = np.sort(d)[k - 1]
    return min(k, int((np.asarray(got_d, np.float64) <= kth * (1 + 1e-5) + 1e-7).sum())) / float(k)


# Feature rows: a 6-d manifold in 32-d descriptors (one connected set, as
# graph search assumes), positions in 3-d.
n, d, k = 12000, 32, 10
latent = rng.normal(0, 1, (n, 6))
feat = (latent @ rng.normal(0, 1, (6, d)) + 0.1 * rng.normal(0, 1, (n, d))).astype(np.float32)
pos = rng.random((n, 3)).astype(np.float32)
src = t.source(pos, {"desc": feat})

probe = kNNQueryProbe(Input=src)
msgs = Messages(probe)
probe.UseFeatureArray = 1
probe.FeatureArray = ["POINTS", "desc"]
probe.QueryMode = "Point Id"
probe.k = k

# Is a GPU usable here?  The core says so through Backend GPU.
probe.IndexMethod = "GGNN Graph (GPU)"
probe.Backend = "GPU"
probe.QueryPointId = 5
msgs.clear()
field, ids, dist = run(probe)
gpu = not msgs.errors
if gpu:
    if field.get("Index Method") != "ggnn":
        t.fail("Backend GPU with a usable GPU built %s, not ggnn: %s" % (field.get("Index Method"), field))
    print("GPU usable: GGNN index on the device")
else:
    # The core's reason, passed on as the filter's error (no index, no crash).
    if not any("kNN Query Probe: " in m and ("CUDA" in m or "GPU" in m or "device" in m)
               for m in msgs.errors):
        t.fail("Backend GPU without a GPU: expected the core's reason, got %s" % msgs.errors)
    print("no GPU: Backend GPU refused with the core's message: %s" % msgs.errors[-1].strip())

# Backend Auto: GGNN and GRNND on the GPU when usable, else the core's CPU graph.
probe.Backend = "Auto"
for label, method in (("GGNN Graph (GPU)", "ggnn"), ("GRNND Graph (GPU)", "grnnd")):
    probe.IndexMethod = label
    msgs.clear()
    field, ids, dist = run(probe)
    if msgs.errors:
        t.fail("%s, Backend Auto: errors %s" % (label, msgs.errors))
    want = method if gpu else "nndescent"
    if field.get("Index Method") != want:
        t.fail("%s, Backend Auto: index %s, expected %s (%s)" % (label, field.get("Index Method"), want, field))
    if not gpu:
        if "no CPU index" not in field.get("Index Reason", ""):
            t.fail("%s: the core's reason is not in the field data: %s" % (label, field.get("Index Reason")))
        if not any("not available on the CPU" in w for w in msgs.warnings):
            t.fail("%s: the core's warning did not reach the filter: %s" % (label, msgs.warnings))
    r = recall(feat, feat[5], 5, dist, k)
    if 5 in ids or r < 0.9:
        t.fail("%s: recall %.3f (or the point itself returned: %s)" % (label, r, 5 in ids))
    print("%s, Backend Auto: index %s (%s), recall@%d %.3f" % (label, field["Index Method"],
                                                              field["Index Reason"], k, r))

# TSDG (GPU or CPU): the index kept between probe moves.
probe.IndexMethod = "TSDG Graph (GPU or CPU)"
field, ids, dist = run(probe)
b0, rebuilt = builds(field)
if field.get("Index Method") != "tsdg" or rebuilt != 1:
    t.fail("TSDG index: %s" % field)
moves = rng.choice(n, 3, replace=False)
total = 0.0
for j, pid in enumerate(moves):
    probe.QueryPointId = int(pid)
    field, ids, dist = run(probe)
    b, rebuilt = builds(field)
    if b != b0 or rebuilt != 0:
        t.fail("probe move %d rebuilt the TSDG index (builds %d -> %d, rebuilt %d)" % (j + 1, b0, b, rebuilt))
    if int(pid) in ids:
        t.fail("Point Id %d returned itself" % pid)
    total += recall(feat, feat[pid], pid, dist, k)
print("TSDG: 3 probe moves searched the same index (builds %d), recall@%d %.3f, search %s s"
      % (b0, k, total / 3, field["Seconds Query"]))
if total / 3 < 0.9:
    t.fail("TSDG recall %.3f < 0.9" % (total / 3))
probe.k = k + 5
field, ids, dist = run(probe)
if builds(field) != (b0, 0) or len(ids) != k + 5:
    t.fail("changing k rebuilt or gave %d neighbours: %s" % (len(ids), field))
# A build parameter of the shared options rebuilds; so does the backend.
probe.TSDGAlpha = 1.5
field, ids, dist = run(probe)
if builds(field) != (b0 + 1, 1):
    t.fail("TSDG Alpha did not rebuild: %s" % field)
probe.Backend = "CPU"
field, ids, dist = run(probe)
if builds(field) != (b0 + 2, 1) or field.get("Index Method") != "tsdg":
    t.fail("Backend CPU did not rebuild a CPU TSDG index: %s" % field)
print("k changes search only; TSDG Alpha and Backend rebuild (builds %d)" % (b0 + 2))

# The handle in 3-d with a graph index: moves search, never rebuild.
hp = kNNQueryProbe(Input=src)
hp.IndexMethod = "TSDG Graph (GPU or CPU)"
hp.k = 8
hp.ProbePosition = [0.5, 0.5, 0.5]
field, ids, dist = run(hp)
hb, rebuilt = builds(field)
if rebuilt != 1 or field.get("Index Method") != "tsdg":
    t.fail("handle: first execution %s" % field)
for step, where in enumerate(([0.2, 0.3, 0.4], [0.8, 0.1, 0.6])):
    hp.ProbePosition = where
    field, ids, dist = run(hp)
    if builds(field) != (hb, 0):
        t.fail("handle move %d rebuilt the index: %s" % (step + 1, field))
    r = recall(pos, np.array(where, np.float32), None, dist, 8)
    if r < 0.9:
        t.fail("handle move %d: recall %.3f" % (step + 1, r))
print("handle: 2 moves searched the same 3-d TSDG index (builds %d)" % hb)
print("PASS")
