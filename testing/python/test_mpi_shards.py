"""Feature-space kNN Graph and the kNN Query Probe under MPI (run by
run_mpi_test.sh after test_mpi_pvbatch.py): the answers of one process.

    pvpython test_mpi_shards.py PLUGIN DATA_DIR WORKDIR serial
        writes 3,000 points with a 32-d clustered feature array (random
        3-d positions, a "serial" array = the point's global order) as
        feat_N.pvtp in N equal pieces and feat_uneven_N.pvtp in uneven ones
        (rank 0's piece empty on 3 ranks), 40 feature queries as fq_N.pvtp, and
        the single-process results as shards_reference.npz
    mpiexec -np N pvbatch test_mpi_shards.py PLUGIN DATA_DIR WORKDIR mpi
        kNN Graph on the feature array (NN-Descent): recall@k (against
        exact lists computed here) within 0.01 of one process, for equal
        and uneven pieces, and the filter's reduced recall estimate near
        the measured one; kNN Query Probe on 3-d points (Handle, Point Id
        and Query Points in pieces over the ranks; equal and uneven data
        pieces): identical to one process, neighbours' point data included;
        in feature space (Query Points, NN-Descent index): recall within
        0.01 of one process
"""
import os

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import vtk_to_numpy

import vic_pvtest as t

_, extra = t.setup(globals())
workdir, mode = extra[0], extra[1]
N, D, K, KP, Q = 3000, 32, 10, 8, 40
REF = os.path.join(workdir, "shards_reference.npz")
HANDLE = [0.31, 0.62, 0.45]
POINT_ID = 1234
NNDESCENT_GRAPH = "NN-Descent (approximate)"
NNDESCENT_INDEX = "NN-Descent Graph (approximate)"


def write_set(name, xyz, feats, sizes):
    """Pieces of the given sizes (in global order) and their .pvtp."""
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    t.write_pieces(workdir, name + ".pvtp",
                   [("%s_%d.vtp" % (name, i), xyz[a:b], {"features": feats[a:b], "serial": np.arange(a, b, dtype=np.float64)})
                    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))])


def fetch(proxy):
    out = sm.Fetch(proxy)
    w = dsa.WrapDataObject(out)
    n = out.GetNumberOfPoints()
    got = {name: np.asarray(w.PointData[name]).reshape(n, -1) for name in w.PointData.keys()}
    got["_points"] = np.asarray(w.Points).reshape(n, 3) if n else np.zeros((0, 3))
    fd = out.GetFieldData()
    field = {}
    for i in range(fd.GetNumberOfArrays()):
        a = fd.GetAbstractArray(i)
        field[a.GetName()] = [a.GetVariantValue(j).ToString() for j in range(a.GetNumberOfValues())]
    return got, field


def exact_lists(data, queries, k, exclude_self):
    x = data.astype(np.float64)
    q = queries.astype(np.float64)
    d2 = (q * q).sum(1)[:, None] + (x * x).sum(1)[None, :] - 2 * q @ x.T
    if exclude_self:
        np.fill_diagonal(d2, np.inf)
    return np.argsort(d2, axis=1, kind="stable")[:, :k]


def recall(ids, truth):
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ids, truth)]))


def graph_recall(src, data, graph=False):
    g = kNNGraph(Input=src)
    g.k = K
    g.UseFeatureArray = 1
    g.FeatureArray = ["POINTS", "features"]
    g.Method = NNDESCENT_GRAPH
    g.GenerateGraph = 1 if graph else 0
    got, field = fetch(g)
    if len(got.get("Neighbor Ids", [])) != N:
        t.fail("kNN Graph (features): %d rows, expected %d" % (len(got.get("Neighbor Ids", [])), N))
    gid = got["Global Ids"][:, 0] if "Global Ids" in got else np.arange(N)
    if sorted(gid) != list(range(N)):
        t.fail("kNN Graph (features): global ids are not a permutation of 0..%d" % (N - 1))
    order = np.argsort(gid)
    ids, dist = got["Neighbor Ids"][order], got["Neighbor Distances"][order]
    if (ids == np.arange(N)[:, None]).any() or ids.min() < 0 or ids.max() >= N:
        t.fail("kNN Graph (features): a point is its own neighbour or an id is out of range")
    if not np.all(np.diff(dist, axis=1) >= 0):
        t.fail("kNN Graph (features): lists are not ascending")
    true_d = np.linalg.norm(data[ids].astype(np.float64) - data[:, None, :].astype(np.float64), axis=2)
    if not np.allclose(dist, true_d, rtol=1e-4, atol=1e-5):
        t.fail("kNN Graph (features): distances are not those of the ids")
    if graph:
        check_graph(sm.Fetch(g, idx=1), ids, np.load(REF)["xyz"])
    Delete(g)
    return ids, field


def check_graph(out, ids, xyz):
    """Port 1: one line per (point, neighbour) over all ranks, from the
    point's position to the neighbour's (the far end may live on another
    rank: its position came round the ring)."""
    w = dsa.WrapDataObject(out)
    pts = np.asarray(w.Points)
    lines = vtk_to_numpy(out.GetLines().GetConnectivityArray()).reshape(-1, 2)
    if len(lines) != N * K:
        t.fail("kNN Graph (features): %d graph lines, expected %d" % (len(lines), N * K))
    # one process: the graph's points are the input's, in global order
    gid = np.asarray(w.PointData["Global Ids"]) if "Global Ids" in w.PointData.keys() else np.arange(len(pts))
    got = set(zip(gid[lines[:, 0]].tolist(), gid[lines[:, 1]].tolist()))
    want = set((i, int(j)) for i in range(N) for j in ids[i])
    if got != want:
        t.fail("kNN Graph (features): graph edges differ from the neighbour lists")
    if not np.array_equal(pts[lines[:, 1]], xyz[gid[lines[:, 1]]].astype(pts.dtype)):
        t.fail("kNN Graph (features): graph far ends are not at their points' positions")
    print("kNN Graph (features): %d graph lines match the lists and positions" % len(lines))


def probe(src, mode_name, feature=False, queries=None):
    p = kNNQueryProbe(Input=src)
    p.k = KP
    if feature:
        p.UseFeatureArray = 1
        p.FeatureArray = ["POINTS", "features"]
        p.IndexMethod = NNDESCENT_INDEX
    p.QueryMode = mode_name
    p.ProbePosition = HANDLE
    p.QueryPointId = POINT_ID
    if queries is not None:
        p.Queries = queries
    got, field = fetch(p)
    Delete(p)
    return got, field


if mode == "serial":
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(23)
    centres = rng.normal(0, 1, size=(20, D))
    feats = (centres[rng.integers(0, 20, N)] + 1.0 * rng.normal(size=(N, D))).astype(np.float32)
    xyz = rng.uniform(0, 1, size=(N, 3)).astype(np.float32)
    qfeats = (feats[rng.integers(0, N, Q)] + 0.2 * rng.normal(size=(Q, D))).astype(np.float32)
    qxyz = rng.uniform(0, 1, size=(Q, 3)).astype(np.float32)
    for ranks in (1, 2, 3):
        write_set("feat_%d" % ranks, xyz, feats, [len(a) for a in np.array_split(np.arange(N), ranks)])
        write_set("fq_%d" % ranks, qxyz, qfeats, [len(a) for a in np.array_split(np.arange(Q), ranks)])
    write_set("feat_uneven_2", xyz, feats, [2900, 100])
    write_set("feat_uneven_3", xyz, feats, [0, 2950, 50])  # rank 0, which emits the probe, holds none
    src = XMLPolyDataReader(FileName=[os.path.join(workdir, "feat_1_0.vtp")])
    truth = exact_lists(feats, feats, K, True)
    ids, field = graph_recall(src, feats)
    r_graph = recall(ids, truth)
    h, _ = probe(src, "Handle")
    pid, _ = probe(src, "Point Id")
    queries = XMLPolyDataReader(FileName=[os.path.join(workdir, "fq_1_0.vtp")])
    fq, _ = probe(src, "Query Points", True, queries)
    q3, _ = probe(src, "Query Points", False, queries)
    np.savez(REF, xyz=xyz, feats=feats, qfeats=qfeats, r_graph=r_graph,
             **{"h_" + k: v for k, v in h.items()}, **{"p_" + k: v for k, v in pid.items()},
             **{"f_" + k: v for k, v in fq.items()}, **{"q_" + k: v for k, v in q3.items()})
    print("serial: feature graph recall@%d %.4f (estimate %s)" % (K, r_graph, field["Recall Estimate"][0]))
    print("SERIAL-OK")
else:
    ref = np.load(REF)
    feats, xyz, qfeats = ref["feats"], ref["xyz"], ref["qfeats"]
    ranks = sm.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()
    print("pvbatch ranks: %d" % ranks)
    truth = exact_lists(feats, feats, K, True)
    sets = ["feat_%d" % ranks] + (["feat_uneven_%d" % ranks] if ranks > 1 else [])
    for name in sets:
        src = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, name + ".pvtp")])
        ids, field = graph_recall(src, feats, graph=name == sets[0])
        r = recall(ids, truth)
        est = float(field["Recall Estimate"][0])
        print("%s: recall@%d %.4f, one process %.4f, estimate %.4f (sample %s); %s; shards %s" % (
            name, K, r, float(ref["r_graph"]), est, field["Recall Sample"][0],
            field.get("Sharding", ["-"])[0], field.get("Shard Points Per Rank", "-")))
        if abs(r - float(ref["r_graph"])) > 0.01:
            t.fail("kNN Graph (features, %s): recall %.4f, one process %.4f" % (name, r, float(ref["r_graph"])))
        if not (0 <= est <= 1) or abs(est - r) > 0.05:
            t.fail("kNN Graph (features, %s): recall estimate %.4f, measured %.4f" % (name, est, r))
        if ranks > 1 and ("uneven" in name) != ("re-cut" in field["Sharding"][0]):
            t.fail("kNN Graph (features, %s): sharding '%s'" % (name, field["Sharding"][0]))
        Delete(src)
    print("MPI-FEATURE-GRAPH-OK")

    src = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, "feat_%d.pvtp" % ranks)])
    qsrc = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, "fq_%d.pvtp" % ranks)])
    cases = [(src, "h_", "Handle"), (src, "p_", "Point Id")]
    if ranks > 1:  # uneven pieces, on 3 ranks none on rank 0
        uneven = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, "feat_uneven_%d.pvtp" % ranks)])
        cases += [(uneven, "h_", "Handle"), (uneven, "p_", "Point Id")]
    cases.append((src, "q_", "Query Points"))  # 40 query positions, in pieces over the ranks
    for case, (data, tag, mode_name) in enumerate(cases):
        got, field = probe(data, mode_name, queries=qsrc if tag == "q_" else None)
        for key in ("Neighbor Id", "Distance", "Rank", "Query Id", "serial", "_points"):
            want = ref[tag + key]
            if got.get(key) is None or got[key].shape != want.shape or not np.array_equal(got[key], want):
                t.fail("kNN Query Probe (%s): '%s' differs from one process:\n%s\n%s" % (
                    mode_name, key, got.get(key), want))
        if tag == "q_":
            print("kNN Query Probe (Query Points, 3-d): %d queries x %d neighbours equal one process's" % (Q, KP))
            continue
        sizes = [len(a) for a in np.array_split(np.arange(N), ranks)] if case < 2 else \
            {2: [2900, 100], 3: [0, 2950, 50]}[ranks]
        pieces = np.unique(np.searchsorted(np.cumsum(sizes), got["Neighbor Id"][:KP, 0], side="right"))
        print("kNN Query Probe (%s, pieces of %s points): %d neighbours equal one process's (from pieces %s)" % (
            mode_name, sizes, KP, list(pieces)))
        if ranks > 1 and len(pieces) < 2 and case < 2:
            t.fail("kNN Query Probe (%s): all neighbours on one rank; the test must merge ranks" % mode_name)
    # The per-rank index is kept: moving the handle only searches.
    p = kNNQueryProbe(Input=src)
    p.k = KP
    p.ProbePosition = HANDLE
    fetch(p)
    p.ProbePosition = [0.7, 0.2, 0.5]
    _, field = fetch(p)
    if field["Index Builds"][0] != str(ranks) or field["Index Rebuilt"][0] != "0":
        t.fail("kNN Query Probe: moving the handle rebuilt an index (builds %s, rebuilt %s)" % (
            field["Index Builds"][0], field["Index Rebuilt"][0]))
    Delete(p)
    print("MPI-PROBE-3D-OK")

    got, field = probe(src, "Query Points", True, qsrc)
    nb = got["Rank"][:, 0] >= 0
    if nb.sum() != Q * KP:
        t.fail("kNN Query Probe (features): %d neighbours, expected %d" % (nb.sum(), Q * KP))
    if not np.array_equal(got["serial"][nb, 0].astype(np.int64), got["Neighbor Id"][nb, 0]):
        t.fail("kNN Query Probe (features): the neighbours' point data are not theirs")
    ftruth = exact_lists(feats, qfeats, KP, False)

    def lists(res):
        m = res["Rank"][:, 0] >= 0
        out = [[] for _ in range(Q)]
        for q, i in zip(res["Query Id"][m, 0], res["Neighbor Id"][m, 0]):
            out[q].append(i)
        return out

    r_mpi = recall(lists(got), ftruth)
    r_one = recall(lists({k[2:]: ref[k] for k in ref.files if k.startswith("f_")}), ftruth)
    print("kNN Query Probe (features): recall@%d %.4f, one process %.4f" % (KP, r_mpi, r_one))
    if abs(r_mpi - r_one) > 0.01:
        t.fail("kNN Query Probe (features): recall %.4f, one process %.4f" % (r_mpi, r_one))
    print("MPI-PROBE-FEATURE-OK")
