#!/usr/bin/env python3
"""testing/gpu/manifold_chunks.py: the rows depend only on (seed, n, d),
not on the number of workers; every chunk is written; the set has the
moments of make_synthetic.py's manifold (same model, other draws); another
seed gives other rows.  Skips (77) without numpy."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit(77)

root = sys.argv[1]
gen = os.path.join(root, 'testing', 'gpu', 'manifold_chunks.py')
sys.path.insert(0, os.path.join(root, 'testing', 'gpu'))
import manifold_chunks as mc  # noqa: E402

n, d = 3 * mc.CHUNK // 2 + 17, 24  # a partial last chunk
with tempfile.TemporaryDirectory() as t:
    def make(name, workers, seed=0):
        p = os.path.join(t, name)
        subprocess.run([sys.executable, gen, str(n), p, '--d', str(d), '--seed', str(seed), '--workers', str(workers)],
                       check=True, stdout=subprocess.DEVNULL)
        return np.load(p)
    a, b, c = make('a.npy', 1), make('b.npy', 2), make('c.npy', 2, seed=1)
assert a.shape == (n, d) and a.dtype == np.float32, a.shape
assert np.array_equal(a, b), 'rows differ with the number of workers'
assert np.isfinite(a).all() and (np.abs(a).sum(1) > 0).all(), 'a chunk was not written'
assert not np.array_equal(a[:100], c[:100]), 'seed 1 gave the rows of seed 0'
# the model's moments: mean 0, per-coordinate spread of the 16-d latent mixture mapped to d plus 0.05 noise
mu, w = mc.model(d)
cov = w.T.astype(np.float64) @ (np.cov(mu.T.astype(np.float64), bias=True) + np.eye(16)) @ w.astype(np.float64)
want_sd = np.sqrt(np.diag(cov) + 0.05 ** 2)
got_sd = a.astype(np.float64).std(0)
assert np.allclose(got_sd, want_sd, rtol=0.03), (got_sd[:4], want_sd[:4])
assert np.abs(a.astype(np.float64).mean(0) - mu.mean(0) @ w).max() < 0.05
print('manifold_chunks: %d x %d, workers 1 and 2 identical, moments as the model' % (n, d))
