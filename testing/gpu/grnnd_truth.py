#!/usr/bin/env python3
"""Exact 100-NN of every query row in the base set, for grnnd_bench.

  grnnd_truth.py BASE.fvecs QUERY.fvecs OUTDIR

Writes OUTDIR/base.f32, query.f32 (raw rows) and qtruth.i32 (queries x
100, ascending).  Candidates from a float32 matrix product on the GPU
(torch, no tf32); the best 256 of each query re-ranked in float64, ties
to the lower id."""
import argparse, os
import numpy as np
from knn_truth import exact_knn, fvecs


ap = argparse.ArgumentParser()
ap.add_argument('base'); ap.add_argument('query'); ap.add_argument('out')
a = ap.parse_args()
x, q = fvecs(a.base), fvecs(a.query)
os.makedirs(a.out, exist_ok=True)
x.tofile(os.path.join(a.out, 'base.f32'))
q.tofile(os.path.join(a.out, 'query.f32'))
out = exact_knn(x, q, 100, 256, np.empty((q.shape[0], 100), np.int32))
out.tofile(os.path.join(a.out, 'qtruth.i32'))
print('truth: base', x.shape, 'queries', q.shape)
