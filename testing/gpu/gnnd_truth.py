#!/usr/bin/env python3
"""Exact 10-NN (self excluded) of a seeded row sample, for gnnd_bench and
vicinity_bench --sample-rows/--sample-truth.

  gnnd_truth.py DATA.npy OUTDIR [--sample 10000] [--no-raw]

Writes OUTDIR/sample.i32, truth.i32 and (unless --no-raw) data.f32 (the
rows, raw, for gnnd_bench).  The rows are read through a memory map and
streamed to the GPU in chunks (knn_truth.exact_knn_streamed: float32
candidates from torch, the best 64 re-ranked in float64), so sets larger
than the GPU's memory (100M x 96) work."""
import argparse, os, sys
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from knn_truth import exact_knn_streamed  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument('data'); ap.add_argument('out'); ap.add_argument('--sample', type=int, default=10000)
ap.add_argument('--no-raw', action='store_true')
a = ap.parse_args()
x = np.load(a.data, mmap_mode='r')
n = x.shape[0]
os.makedirs(a.out, exist_ok=True)
if not a.no_raw:
    np.asarray(x, dtype=np.float32).tofile(os.path.join(a.out, 'data.f32'))
rows = np.sort(np.random.default_rng(7).choice(n, a.sample, replace=False)).astype(np.int32)
q = np.asarray(x[rows], dtype=np.float32)
truth = np.empty((a.sample, 10), np.int32)
exact_knn_streamed(x, q, 10, 64, truth, self_rows=rows)
rows.tofile(os.path.join(a.out, 'sample.i32'))
truth.tofile(os.path.join(a.out, 'truth.i32'))
print('truth for', a.sample, 'rows of', x.shape)
