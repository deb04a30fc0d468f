"""Vicinity from Python: the 8 nearest neighbours, kNN densities and
density peaks of two clumps of points, and a search index."""
import numpy as np

import vicinity

rng = np.random.default_rng(7)
points = np.concatenate([rng.normal(0.3, 0.03, (10000, 3)), rng.normal(0.7, 0.03, (10000, 3))]).astype(np.float32)
print("Vicinity", vicinity.version())

ids, dist, report = vicinity.knn(points, k=8)             # n x 8 int64 and float32
print("%s on %s (%s): point 0's nearest is %d at %.4f" % (
    report["method"], report["backend"], report["reason"], ids[0, 0], dist[0, 0]))

rho, rho_sph, h, _ = vicinity.density(points, k=32)       # written into numpy arrays
peaks = vicinity.peaks(points, k=32)
for p in range(peaks.n_peaks):
    print("peak %d: %d members around %s" % (p, peaks.peak_members[p], np.round(peaks.peak_centre[p], 3)))

index = vicinity.Index(points)                            # search structure over the points
near, d, _ = index.search(np.array([[0.3, 0.3, 0.3]], np.float32), k=4)
print("4 nearest to (0.3, 0.3, 0.3):", near[0])
assert peaks.n_peaks == 2 and (rho > 0).all()
