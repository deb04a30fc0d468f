#!/usr/bin/env python3
"""Exact k-NN of every query row in the base set as .ivecs (vicinity_bench
--query-truth): candidates from a float32 matrix product on the GPU (torch,
no tf32), the best 64 of each query re-ranked in float64, ties to the
lower id.

  ivecs_truth.py BASE.fvecs QUERY.fvecs OUT.ivecs [K]"""
import sys
import numpy as np
from knn_truth import exact_knn, fvecs

base, query, out = sys.argv[1:4]
k = int(sys.argv[4]) if len(sys.argv) > 4 else 10
x, q = fvecs(base), fvecs(query)
res = np.empty((q.shape[0], k + 1), np.int32)
res[:, 0] = k
exact_knn(x, q, k, 64, res[:, 1:])
res.tofile(out)
print('truth:', out, 'base', x.shape, 'queries', q.shape, 'k', k)
