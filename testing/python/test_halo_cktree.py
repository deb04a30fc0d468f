"""pvpython: the kNN Graph filter on a halo (k = 16) gives the same neighbour
ids as scipy's cKDTree, ties aside, and d_nn1 is the distance to the
reported nearest neighbour.
 - Always: a synthetic halo of 32,000 particles (a concentrated Plummer
   body, three subhalos and a diffuse envelope, as in a simulated halo;
   the demo's Plummer sampler).
 - When the data folder has it: the simulated halo (32,314 particles)."""
import os
import sys

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from scipy.spatial import cKDTree

import vic_pvtest as t

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demo"))
import nbody_model  # noqa: E402

K = 16


def synthetic_halo(n, seed=5):
    rng = np.random.default_rng(seed)
    parts = [nbody_model.plummer(rng, int(0.80 * n), 0.05, truncation=30.0)]
    for centre, scale in (((0.30, 0.10, -0.05), 0.04), ((-0.20, 0.25, 0.10), 0.035), ((0.05, -0.35, 0.20), 0.03)):
        parts.append(np.asarray(centre) + nbody_model.plummer(rng, int(0.04 * n), scale, truncation=10.0))
    parts.append(nbody_model.plummer(rng, n - sum(len(p) for p in parts), 0.5, truncation=3.0))
    return np.vstack(parts).astype(np.float32)


def check(label, xyz):
    knn = kNNGraph(Input=t.source(xyz))
    knn.k = K
    knn.GenerateGraph = 0
    knn.UpdatePipeline()
    ids, dist, field = t.knn_arrays(knn)
    if ids is None:
        t.fail("%s: the filter produced no output" % label)
    print("%s: n = %d, method %s (%s), backend %s, %s s" % (
        label, len(ids), field["Method"], field["Method Reason"], field["Backend"], field["Seconds Total"]))
    # cKDTree includes the point itself: ask for k+1 and drop self (a duplicate
    # point may come before self at distance 0, so remove self by id).
    _, tree = cKDTree(xyz.astype(np.float64)).query(xyz.astype(np.float64), k=K + 1)
    ref = np.empty((len(xyz), K), dtype=np.int64)
    for i in range(len(xyz)):
        row = tree[i][tree[i] != i]
        ref[i] = row[:K]
    exact_rows = int((ids == ref).all(axis=1).sum())
    bad = t.mismatches_beyond_ties(xyz, ids, ref)
    print("%s: rows identical to cKDTree: %d of %d; rows differing beyond ties: %d" % (
        label, exact_rows, len(xyz), len(bad)))
    if bad:
        t.fail("%s: rows differ from cKDTree beyond ties, e.g. %s" % (label, bad[:5]))
    d_ref = np.linalg.norm(xyz[ids[:, 0]].astype(np.float64) - xyz.astype(np.float64), axis=1)
    if not np.allclose(dist[:, 0], d_ref, rtol=1e-5, atol=1e-6):
        t.fail("%s: d_nn1 differs from the distance to the reported nearest neighbour" % label)


data_dir, _ = t.setup(globals())
check("synthetic halo", synthetic_halo(32000))
path = t.extra_data_file(data_dir, "nbody/halo_low_res.npy")
if path:
    check("simulated halo", np.load(path).astype(np.float32))
print("PASS")
