#!/usr/bin/env python3
"""Exact 100-NN of every query row (.ivecs) for vicinity_bench --query-truth:
candidates from a float32 product on the GPU (torch, no tf32), the best 256
re-ranked in float64, ties to the lower id.  truth.py BASE QUERY OUT"""
import sys
import numpy as np
import torch


def fvecs(path):
    raw = np.fromfile(path, dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    return np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:])


x, q = fvecs(sys.argv[1]), fvecs(sys.argv[2])
torch.backends.cuda.matmul.allow_tf32 = False
X = torch.from_numpy(x).cuda()
sq = (X * X).sum(1)
K = 100
out = np.empty((q.shape[0], K + 1), np.int32)
out[:, 0] = K
for s in range(0, q.shape[0], 1024):
    Q = torch.from_numpy(q[s:s + 1024]).cuda()
    dd = (Q * Q).sum(1)[:, None] - 2 * Q @ X.T + sq[None, :]
    cand = dd.topk(256, largest=False).indices.cpu().numpy()
    for i, ci in enumerate(cand):
        ex = ((x[ci].astype(np.float64) - q[s + i].astype(np.float64)) ** 2).sum(1)
        out[s + i, 1:] = ci[np.lexsort((ci, ex))[:K]]
out.tofile(sys.argv[3])
print('truth:', x.shape, q.shape, '->', sys.argv[3])
