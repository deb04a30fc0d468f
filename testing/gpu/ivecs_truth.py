#!/usr/bin/env python3
"""Exact k-NN of every query row in the base set as .ivecs (vicinity_bench
--query-truth): candidates from a float32 matrix product on the GPU (torch,
no tf32), the best 64 of each query re-ranked in float64, ties to the
lower id.

  ivecs_truth.py BASE.fvecs QUERY.fvecs OUT.ivecs [K]"""
import sys
import numpy as np
import torch


def fvecs(path):
    raw = np.fromfile(path, dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    return np.ascontiguousarray(raw.reshape(-1, d + 1)[:, 1:])


base, query, out = sys.argv[1:4]
k = int(sys.argv[4]) if len(sys.argv) > 4 else 10
x, q = fvecs(base), fvecs(query)
torch.backends.cuda.matmul.allow_tf32 = False
X = torch.from_numpy(x).cuda()
sq = (X * X).sum(1)
res = np.empty((q.shape[0], k + 1), np.int32)
res[:, 0] = k
for s in range(0, q.shape[0], 1024):
    Q = torch.from_numpy(q[s:s + 1024]).cuda()
    dd = (Q * Q).sum(1)[:, None] - 2 * Q @ X.T + sq[None, :]
    cand = dd.topk(64, largest=False).indices.cpu().numpy()
    for i, ci in enumerate(cand):
        ex = ((x[ci].astype(np.float64) - q[s + i].astype(np.float64)) ** 2).sum(1)
        res[s + i, 1:] = ci[np.lexsort((ci, ex))[:k]]
res.tofile(out)
print('truth:', out, 'base', x.shape, 'queries', q.shape, 'k', k)
