#!/usr/bin/env python3
"""Exact 10-NN for ggnn_bench: of every query row in the base set, and of a
seeded sample of base rows (self excluded, for the for-all consensus).

  ggnn_truth.py BASE.fvecs QUERY.fvecs OUTDIR [--sample 10000]

Writes OUTDIR/base.f32, query.f32 (raw rows), qtruth.i32 (queries x 10),
sample.i32 and truth.i32 (sample x 10).  Candidates from a float32 matrix
product on the GPU (torch, no tf32); the best 64 re-ranked in float64."""
import argparse, os
import numpy as np
import torch


def fvecs(path):
    raw = np.fromfile(path, dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    return np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:])


def knn(x, X, sq, q, exclude):
    out = np.empty((q.shape[0], 10), np.int32)
    for s in range(0, q.shape[0], 1024):
        Q = torch.from_numpy(q[s:s + 1024]).cuda()
        dd = (Q * Q).sum(1)[:, None] - 2 * Q @ X.T + sq[None, :]
        if exclude is not None:
            r = torch.from_numpy(exclude[s:s + 1024].astype(np.int64)).cuda()
            dd[torch.arange(len(r)), r] = float('inf')
        cand = dd.topk(64, largest=False).indices.cpu().numpy()
        for i, ci in enumerate(cand):
            ex = ((x[ci].astype(np.float64) - q[s + i].astype(np.float64)) ** 2).sum(1)
            if exclude is not None:
                ex[ci == exclude[s + i]] = np.inf
            out[s + i] = ci[np.lexsort((ci, ex))[:10]]
    return out


ap = argparse.ArgumentParser()
ap.add_argument('base'); ap.add_argument('query'); ap.add_argument('out')
ap.add_argument('--sample', type=int, default=10000)
a = ap.parse_args()
x, q = fvecs(a.base), fvecs(a.query)
os.makedirs(a.out, exist_ok=True)
x.tofile(os.path.join(a.out, 'base.f32'))
q.tofile(os.path.join(a.out, 'query.f32'))
torch.backends.cuda.matmul.allow_tf32 = False
X = torch.from_numpy(x).cuda()
sq = (X * X).sum(1)
knn(x, X, sq, q, None).tofile(os.path.join(a.out, 'qtruth.i32'))
rows = np.sort(np.random.default_rng(7).choice(x.shape[0], min(a.sample, x.shape[0]), replace=False)).astype(np.int32)
rows.tofile(os.path.join(a.out, 'sample.i32'))
knn(x, X, sq, x[rows], rows).tofile(os.path.join(a.out, 'truth.i32'))
print('truth: base', x.shape, 'queries', q.shape, 'sample', len(rows))
