"""pvpython: the kNN Graph filter on the real halo (32,314 particles, k = 16)
gives the same neighbour ids as scipy's cKDTree, ties aside."""
import numpy as np
from paraview.simple import *  # noqa: F401,F403
from scipy.spatial import cKDTree

import vic_pvtest as t

data_dir, _ = t.setup(globals())
xyz = np.load(t.data_file(data_dir, "nbody/halo_low_res.npy")).astype(np.float32)
k = 16

knn = kNNGraph(Input=t.source(xyz))
knn.k = k
knn.GenerateGraph = 0
knn.UpdatePipeline()
ids, dist, field = t.knn_arrays(knn)
if ids is None:
    t.fail("the filter produced no output")
print("filter: n = %d, method %s (%s), backend %s, %s s" % (
    len(ids), field["Method"], field["Method Reason"], field["Backend"], field["Seconds Total"]))

# cKDTree includes the point itself: ask for k+1 and drop self (a duplicate
# point may come before self at distance 0, so remove self by id).
_, tree = cKDTree(xyz.astype(np.float64)).query(xyz.astype(np.float64), k=k + 1)
ref = np.empty((len(xyz), k), dtype=np.int64)
for i in range(len(xyz)):
    row = tree[i][tree[i] != i]
    ref[i] = row[:k]
exact_rows = int((ids == ref).all(axis=1).sum())
bad = t.mismatches_beyond_ties(xyz, ids, ref)
print("rows identical to cKDTree: %d of %d; rows differing beyond ties: %d" % (exact_rows, len(xyz), len(bad)))
if bad:
    t.fail("rows differ from cKDTree beyond ties, e.g. %s" % bad[:5])
d_ref = np.linalg.norm(xyz[ids[:, 0]].astype(np.float64) - xyz.astype(np.float64), axis=1)
if not np.allclose(dist[:, 0], d_ref, rtol=1e-5, atol=1e-6):
    t.fail("d_nn1 differs from the distance to the reported nearest neighbour")
print("PASS")
