#!/usr/bin/env python3
"""Exact 10-NN (self excluded) of a seeded row sample, for gnnd_bench.

  gnnd_truth.py DATA.npy OUTDIR [--sample 10000]

Writes OUTDIR/data.f32 (the rows, raw), sample.i32 and truth.i32.  The
candidates come from a float32 matrix product on the GPU (torch); the best
64 of each row are re-ranked in float64, so rounding of the expanded form
cannot reorder the final 10."""
import argparse, os
import numpy as np
import torch

ap = argparse.ArgumentParser()
ap.add_argument('data'); ap.add_argument('out'); ap.add_argument('--sample', type=int, default=10000)
a = ap.parse_args()
x = np.load(a.data).astype(np.float32)
n = x.shape[0]
os.makedirs(a.out, exist_ok=True)
x.tofile(os.path.join(a.out, 'data.f32'))
rows = np.sort(np.random.default_rng(7).choice(n, a.sample, replace=False)).astype(np.int32)
torch.backends.cuda.matmul.allow_tf32 = False
X = torch.from_numpy(x).cuda()
sq = (X * X).sum(1)
truth = np.empty((a.sample, 10), np.int32)
for s in range(0, a.sample, 1024):
    r = torch.from_numpy(rows[s:s + 1024].astype(np.int64)).cuda()
    q = X[r]
    dd = sq[r, None] - 2 * q @ X.T + sq[None, :]
    dd[torch.arange(len(r)), r] = float('inf')
    cand = dd.topk(64, largest=False).indices.cpu().numpy()
    for i, ci in enumerate(cand):
        ex = ((x[ci].astype(np.float64) - x[rows[s + i]].astype(np.float64)) ** 2).sum(1)
        o = np.lexsort((ci, ex))[:10]
        truth[s + i] = ci[o]
rows.tofile(os.path.join(a.out, 'sample.i32'))
truth.tofile(os.path.join(a.out, 'truth.i32'))
print('truth for', a.sample, 'rows of', x.shape)
