#!/usr/bin/env python3
"""Exact 10-NN for ggnn_bench: of every query row in the base set, and of a
seeded sample of base rows (self excluded, for the for-all consensus).

  ggnn_truth.py BASE.fvecs QUERY.fvecs OUTDIR [--sample 10000]

Writes OUTDIR/base.f32, query.f32 (raw rows), qtruth.i32 (queries x 10),
sample.i32 and truth.i32 (sample x 10).  Candidates from a float32 matrix
product on the GPU (torch, no tf32); the best 64 re-ranked in float64
(knn_truth.exact_knn)."""
import argparse, os, sys
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from knn_truth import exact_knn, fvecs  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('base'); ap.add_argument('query'); ap.add_argument('out')
ap.add_argument('--sample', type=int, default=10000)
a = ap.parse_args()
x, q = fvecs(a.base), fvecs(a.query)
os.makedirs(a.out, exist_ok=True)
x.tofile(os.path.join(a.out, 'base.f32'))
q.tofile(os.path.join(a.out, 'query.f32'))
exact_knn(x, q, 10, 64, np.empty((q.shape[0], 10), np.int32)).tofile(os.path.join(a.out, 'qtruth.i32'))
rows = np.sort(np.random.default_rng(7).choice(x.shape[0], min(a.sample, x.shape[0]), replace=False)).astype(np.int32)
rows.tofile(os.path.join(a.out, 'sample.i32'))
exact_knn(x, x[rows], 10, 64, np.empty((len(rows), 10), np.int32), self_rows=rows).tofile(os.path.join(a.out, 'truth.i32'))
print('truth: base', x.shape, 'queries', q.shape, 'sample', len(rows))
