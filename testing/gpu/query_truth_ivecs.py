#!/usr/bin/env python3
"""Exact 100-NN of every query row (.ivecs) for vicinity_bench --query-truth:
candidates from a float32 product on the GPU (torch, no tf32), the best 256
re-ranked in float64, ties to the lower id.  truth.py BASE QUERY OUT"""
import sys
import numpy as np
from knn_truth import exact_knn, fvecs

x, q = fvecs(sys.argv[1]), fvecs(sys.argv[2])
K = 100
out = np.empty((q.shape[0], K + 1), np.int32)
out[:, 0] = K
exact_knn(x, q, K, 256, out[:, 1:])
out.tofile(sys.argv[3])
print('truth:', x.shape, q.shape, '->', sys.argv[3])
