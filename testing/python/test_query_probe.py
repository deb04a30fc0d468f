"""pvpython: the kNN Query Probe filter.

3-d (exact grid index): handle probes, query points and point ids against
numpy brute force (float64; ties aside); the point itself is left out in
Point Id mode.  Cache: moving the handle, changing k or the search
parameters re-runs only the search (Index Builds stays 1); changing a build
parameter or the data rebuilds.  Feature space (64-d, NN-Descent graph
index): Point Id results equal the same index's Query Points results for
that row minus the point itself, and recall@16 against brute force is at
least 0.9.  Bad choices (out-of-range id, handle in feature space, no
Queries input) give errors, not crashes."""
import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.vtkConstants import VTK_STRING

import vic_pvtest as t

t.setup(globals())
rng = np.random.default_rng(7)


def probe_result(proxy):
    """Per query: (ids, dist) of its neighbours by rank; field data dict."""
    out = sm.Fetch(proxy)
    w = dsa.WrapDataObject(out)
    fd = out.GetFieldData()
    field = {fd.GetAbstractArray(i).GetName(): fd.GetAbstractArray(i).GetVariantValue(0).ToString()
             for i in range(fd.GetNumberOfArrays())}
    if out.GetNumberOfPoints() == 0:
        return {}, field, out
    qid = np.asarray(w.PointData["Query Id"])
    rank = np.asarray(w.PointData["Rank"])
    nid = np.asarray(w.PointData["Neighbor Id"])
    dist = np.asarray(w.PointData["Distance"])
    res = {}
    for q in np.unique(qid):
        sel = (qid == q) & (rank >= 0)
        order = np.argsort(rank[sel])
        if not np.array_equal(rank[sel][order], np.arange(sel.sum())):
            t.fail("query %d: ranks are not 0..k-1: %s" % (q, rank[sel][order]))
        res[int(q)] = (nid[sel][order], dist[sel][order])
    return res, field, out


def brute(x, queries, k, exclude=None):
    x64 = np.asarray(x, np.float64)
    ids, dists = [], []
    for j, q in enumerate(np.asarray(queries, np.float64)):
        d = np.linalg.norm(x64 - q, axis=1)
        if exclude is not None:
            d[exclude[j]] = np.inf
        o = np.lexsort((np.arange(len(d)), d))[:k]
        ids.append(o)
        dists.append(d[o])
    return ids, dists


def check_exact(name, x, q, got_ids, got_d, ref_ids, ref_d):
    """Same distances as brute force, rank by rank, and the ids really at
    those distances (so ids can differ from the reference only in ties)."""
    if len(got_ids) != len(ref_ids):
        t.fail("%s: %d neighbours, expected %d" % (name, len(got_ids), len(ref_ids)))
    if not np.allclose(got_d, ref_d, rtol=1e-5, atol=1e-6):
        t.fail("%s: distances %s differ from brute force %s" % (name, got_d, ref_d))
    true_d = np.linalg.norm(np.asarray(x, np.float64)[got_ids] - np.asarray(q, np.float64), axis=1)
    if not np.allclose(true_d, got_d, rtol=1e-5, atol=1e-6) or len(set(got_ids)) != len(got_ids):
        t.fail("%s: ids %s are not at their distances (reference ids %s)" % (name, got_ids, ref_ids))


def field_int(field, name):
    return int(float(field[name]))


# ---------------------------------------------------------------- 3-d, exact
n = 40000
xyz = np.concatenate([rng.normal(0.3, 0.05, (n // 2, 3)), rng.random((n - n // 2, 3))]).astype(np.float32)
temp = np.arange(n, dtype=np.float32) * 0.5
src = t.source(xyz, {"temp": temp})
probe = kNNQueryProbe(Input=src)
probe.k = 12
probe.UpdatePipeline()
res, field, out = probe_result(probe)
if field["Index Method"] != "grid" or field_int(field, "Index Builds") != 1:
    t.fail("expected one grid build: %s" % field)
k = 12
for step in range(10):
    pos = rng.random(3) * 1.2 - 0.1
    probe.ProbePosition = list(pos)
    if step == 5:
        k = 20
        probe.k = k
    if step == 7:
        probe.SearchTau = 1.0  # search-only: must not rebuild
    probe.UpdatePipeline()
    res, field, out = probe_result(probe)
    (ref_ids,), (ref_d,) = brute(xyz, [pos], k)
    got_ids, got_d = res[0]
    check_exact("handle %d" % step, xyz, pos, got_ids, got_d, ref_ids, ref_d)
    # neighbour point data copied from the input
    w = dsa.WrapDataObject(out)
    rank = np.asarray(w.PointData["Rank"])
    if not np.array_equal(np.asarray(w.PointData["temp"])[rank >= 0],
                          temp[np.asarray(w.PointData["Neighbor Id"])[rank >= 0]]):
        t.fail("neighbour point data not copied")
    if out.GetNumberOfPoints() != k + 1 or out.GetNumberOfLines() != k:
        t.fail("expected %d points and %d lines, got %d and %d" % (k + 1, k, out.GetNumberOfPoints(), out.GetNumberOfLines()))
    if field_int(field, "Index Builds") != 1 or field_int(field, "Index Rebuilt") != 0:
        t.fail("a search-only change rebuilt the index: %s" % field)
print("handle: 10 probes exact, Index Builds stays 1")

# Point Id mode: the point itself is left out, rank 0 is its nearest other point.
probe.QueryMode = "Point Id"
for pid in (0, 123, n - 1):
    probe.QueryPointId = pid
    probe.UpdatePipeline()
    res, field, out = probe_result(probe)
    (ref_ids,), (ref_d,) = brute(xyz, [xyz[pid]], k, exclude=[pid])
    got_ids, got_d = res[0]
    if pid in got_ids:
        t.fail("point id %d returned itself" % pid)
    check_exact("point id %d" % pid, xyz, xyz[pid], got_ids, got_d, ref_ids, ref_d)
if field_int(field, "Index Builds") != 1:
    t.fail("switching to Point Id rebuilt the index")
print("point id: itself left out, exact")

# Query Points mode: every point of a second input.
qxyz = rng.random((25, 3)).astype(np.float32)
probe.Queries = t.source(qxyz)
probe.QueryMode = "Query Points"
probe.UpdatePipeline()
res, field, out = probe_result(probe)
ref_ids, ref_d = brute(xyz, qxyz, k)
if sorted(res) != list(range(25)):
    t.fail("query ids %s" % sorted(res))
for j in range(25):
    check_exact("query point %d" % j, xyz, qxyz[j], res[j][0], res[j][1], ref_ids[j], ref_d[j])
if out.GetNumberOfLines() != 25 * k or field_int(field, "Index Builds") != 1:
    t.fail("query points: %d lines, builds %s" % (out.GetNumberOfLines(), field["Index Builds"]))
print("query points: 25 queries exact")

# Build parameters and data changes rebuild; the answers stay exact.
probe.IndexMethod = "Brute Force (exact)"
probe.UpdatePipeline()
res, field, out = probe_result(probe)
if field_int(field, "Index Builds") != 2 or field["Index Method"] != "brute":
    t.fail("changing the method did not rebuild: %s" % field)
check_exact("brute index", xyz, qxyz[3], res[3][0], res[3][1], ref_ids[3], ref_d[3])
xyz2 = xyz + np.float32(0.25)
src.GetClientSideObject().SetOutput(t.polydata(xyz2))
src.MarkModified(src)
probe.UpdatePipeline()
res, field, out = probe_result(probe)
ref2_ids, ref2_d = brute(xyz2, qxyz, k)
if field_int(field, "Index Builds") != 3:
    t.fail("new data did not rebuild: %s" % field)
check_exact("new data", xyz2, qxyz[0], res[0][0], res[0][1], ref2_ids[0], ref2_d[0])
print("method change and new data rebuild (builds = 3)")

# ---------------------------------------------------------- errors, no crash
class Errors:
    """The filter's vtkErrorMacro messages (an ErrorEvent observer; pvpython
    routes print() through the output window, so that stays untouched)."""

    def __init__(self, proxy):
        self.messages = []
        proxy.GetClientSideObject().AddObserver("ErrorEvent", self.on_error)

    @calldata_type(VTK_STRING)
    def on_error(self, obj, event, message):
        self.messages.append(message)


def expect_error(proxy, errors, what, fragment):
    errors.messages.clear()
    proxy.UpdatePipeline()
    if not any(fragment in m for m in errors.messages):
        t.fail("%s: expected an error containing '%s', got: %s" % (what, fragment, errors.messages))


errors = Errors(probe)
probe.QueryMode = "Point Id"
probe.QueryPointId = n + 5
expect_error(probe, errors, "id out of range", "is out of range; the data have 40000 points")
probe.QueryPointId = 0
probe.Queries = None
probe.QueryMode = "Query Points"
expect_error(probe, errors, "no queries input", "nothing is connected to the Queries input")
print("errors: id out of range, missing Queries input")
Delete(probe)

# ------------------------------------------------------ feature space, 64-d
nf, d, kf = 30000, 64, 16
centres = rng.normal(0, 1, (40, d))
feat = (centres[rng.integers(0, 40, nf)] + 0.35 * rng.normal(0, 1, (nf, d))).astype(np.float32)
fpos = rng.random((nf, 3)).astype(np.float32)
fsrc = t.source(fpos, {"desc": feat})
fp = kNNQueryProbe(Input=fsrc)
fp.UseFeatureArray = 1
fp.FeatureArray = ["POINTS", "desc"]
fp.IndexMethod = "NN-Descent Graph (approximate)"
fp.k = kf
fp.QueryMode = "Point Id"
pids = rng.choice(nf, 60, replace=False)
by_id = {}
for pid in pids:
    fp.QueryPointId = int(pid)
    fp.UpdatePipeline()
    res, field, out = probe_result(fp)
    by_id[int(pid)] = res[0]
if field["Index Method"] != "nndescent" or field_int(field, "Index Builds") != 1 or field["Dimension"] != "64":
    t.fail("feature index: %s" % field)
# lines join the data points' 3-d positions
w = dsa.WrapDataObject(out)
rank = np.asarray(w.PointData["Rank"])
pts = np.asarray(w.Points)
if not np.allclose(pts[rank >= 0], fpos[np.asarray(w.PointData["Neighbor Id"])[rank >= 0]]) or \
        not np.allclose(pts[rank < 0], fpos[int(pids[-1])]):
    t.fail("feature mode: output points are not the data points' 3-d positions")

# The same index through Query Points: the rows themselves as queries.
qsrc = t.source(fpos[pids], {"desc": feat[pids]})
fp.Queries = qsrc
fp.QueryMode = "Query Points"
fp.k = kf + 1
fp.UpdatePipeline()
res, field, out = probe_result(fp)
if field_int(field, "Index Builds") != 1:
    t.fail("Query Points mode rebuilt the feature index")
for j, pid in enumerate(pids):
    ids_q, d_q = res[j]
    keep = ids_q != pid
    ids_q, d_q = ids_q[keep][:kf], d_q[keep][:kf]
    ids_p, d_p = by_id[int(pid)]
    if not np.array_equal(ids_q, ids_p) or not np.allclose(d_q, d_p):
        t.fail("point %d: Point Id mode %s differs from Query Points mode %s" % (pid, ids_p, ids_q))
print("feature space: Point Id = Query Points minus the point itself (60 rows)")

ref_ids, ref_d = brute(feat, feat[pids], kf, exclude=list(pids))
hits = 0
for j, pid in enumerate(pids):
    ids_p, d_p = by_id[int(pid)]
    hits += min(kf, int((d_p <= ref_d[j][-1] * (1 + 1e-5)).sum()))
recall = hits / float(len(pids) * kf)
print("feature space: recall@%d against brute force %.4f" % (kf, recall))
if recall < 0.9:
    t.fail("recall %.4f < 0.9" % recall)

fp.QueryMode = "Handle"
expect_error(fp, Errors(fp), "handle in feature space", "the handle is a position in 3-d space")
print("PASS")
