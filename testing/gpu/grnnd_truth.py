#!/usr/bin/env python3
"""Exact 100-NN of every query row in the base set, for grnnd_bench.

  grnnd_truth.py BASE.fvecs QUERY.fvecs OUTDIR

Writes OUTDIR/base.f32, query.f32 (raw rows) and qtruth.i32 (queries x
100, ascending).  Candidates from a float32 matrix product on the GPU
(torch, no tf32); the best 256 of each query re-ranked in float64, ties
to the lower id."""
import argparse, os
import numpy as np
import torch


def fvecs(path):
    raw = np.fromfile(path, dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    return np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:])


ap = argparse.ArgumentParser()
ap.add_argument('base'); ap.add_argument('query'); ap.add_argument('out')
a = ap.parse_args()
x, q = fvecs(a.base), fvecs(a.query)
os.makedirs(a.out, exist_ok=True)
x.tofile(os.path.join(a.out, 'base.f32'))
q.tofile(os.path.join(a.out, 'query.f32'))
torch.backends.cuda.matmul.allow_tf32 = False
X = torch.from_numpy(x).cuda()
sq = (X * X).sum(1)
out = np.empty((q.shape[0], 100), np.int32)
for s in range(0, q.shape[0], 1024):
    Q = torch.from_numpy(q[s:s + 1024]).cuda()
    dd = (Q * Q).sum(1)[:, None] - 2 * Q @ X.T + sq[None, :]
    cand = dd.topk(256, largest=False).indices.cpu().numpy()
    for i, ci in enumerate(cand):
        ex = ((x[ci].astype(np.float64) - q[s + i].astype(np.float64)) ** 2).sum(1)
        out[s + i] = ci[np.lexsort((ci, ex))[:100]]
out.tofile(os.path.join(a.out, 'qtruth.i32'))
print('truth: base', x.shape, 'queries', q.shape)
