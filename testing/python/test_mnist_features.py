"""pvpython: the kNN Graph filter in feature-array mode (784 components),
k = 10, with approximate NN-Descent: recall@10 >= 0.99 against exact brute
force (numpy, float64).
 - Always: 10,000 synthetic digits (MNIST's stand-in, as the core tests'
   vt_digits: ten classes, each a mean image plus a 16-dimensional family
   of Gaussian strokes and pixel noise).
 - When the data folder has it: MNIST t10k."""
import gzip
import struct

import numpy as np
from paraview.simple import *  # noqa: F401,F403

import vic_pvtest as t

K = 10


def read_idx_images(path):
    with gzip.open(path, "rb") as f:
        magic, n, rows, cols = struct.unpack(">iiii", f.read(16))
        if magic != 0x803:
            t.fail("%s: not an IDX image file (magic %#x)" % (path, magic))
        return np.frombuffer(f.read(n * rows * cols), dtype=np.uint8).reshape(n, rows * cols)


def synthetic_digits(n, d=784, classes=10, strokes=16, seed=29):
    rng = np.random.default_rng(seed)
    mean = rng.uniform(0, 255, size=(classes, d))
    family = rng.normal(0, 20, size=(classes, strokes, d))
    label = rng.integers(0, classes, n)
    z = rng.normal(size=(n, strokes))
    x = mean[label] + np.einsum("ns,nsd->nd", z, family[label]) + rng.normal(0, 12, size=(n, d))
    return x.astype(np.float32)


def check(label, pixels):
    n = len(pixels)
    # Spatial points are only for display here; the rows are the 784 pixels.
    xyz = np.zeros((n, 3), np.float32)
    xyz[:, 0] = np.arange(n)
    knn = kNNGraph(Input=t.source(xyz, {"pixels": pixels}))
    knn.k = K
    knn.UseFeatureArray = 1
    knn.FeatureArray = ["POINTS", "pixels"]
    knn.Method = "NN-Descent (approximate)"
    knn.Backend = "CPU"
    knn.GenerateGraph = 0
    knn.UpdatePipeline()
    ids, dist, field = t.knn_arrays(knn)
    if ids is None:
        t.fail("%s: the filter produced no output" % label)
    print("%s: method %s, backend %s, d = %s, %s s, its own recall estimate %s" % (
        label, field["Method"], field["Backend"], field["Dimension"], field["Seconds Total"],
        field["Recall Estimate"]))
    if field["Method"] != "nndescent" or field["Dimension"] != "784" or ids.shape != (n, K):
        t.fail("%s: unexpected run: %s, ids %s" % (label, field, ids.shape))
    # Exact reference: squared distances by blocks, self excluded.
    x = pixels.astype(np.float64)
    sq = (x * x).sum(axis=1)
    hits = 0
    for b in range(0, n, 1000):
        d2 = sq[b:b + 1000, None] + sq[None, :] - 2.0 * x[b:b + 1000] @ x.T
        d2[np.arange(d2.shape[0]), np.arange(b, b + d2.shape[0])] = np.inf
        ref = np.argpartition(d2, K, axis=1)[:, :K]
        kth = np.take_along_axis(d2, ref, axis=1).max(axis=1)
        for i in range(d2.shape[0]):
            # a returned neighbour counts when it is within the exact k-th distance (ties interchangeable)
            hits += min(K, int((d2[i, ids[b + i]] <= kth[i] * (1 + 1e-6)).sum()))
    recall = hits / float(n * K)
    print("%s: recall@10 against brute force: %.4f" % (label, recall))
    if recall < 0.99:
        t.fail("%s: recall@10 %.4f < 0.99" % (label, recall))


data_dir, _ = t.setup(globals())
check("synthetic digits", synthetic_digits(10000))
path = t.extra_data_file(data_dir, "mnist/t10k-images-idx3-ubyte.gz")
if path:
    check("MNIST t10k", read_idx_images(path).astype(np.float32))
print("PASS")
