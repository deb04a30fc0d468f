#!/usr/bin/env python3
"""MNIST images (idx3-ubyte, gzipped or not) as fvecs for ggnn_truth.py:
rows [0, split) become BASE, rows [split, n) QUERY (pixel values 0..255 as
float32).  split = n gives the whole set as BASE and its last 1,000 rows as
QUERY (those are in BASE: for build and for-all figures only).

  mnist_fvecs.py IMAGES BASE.fvecs QUERY.fvecs [--split N]"""
import argparse, gzip
import numpy as np


def idx_images(path):
    with (gzip.open if path.endswith('.gz') else open)(path, 'rb') as f:
        raw = f.read()
    magic, n, rows, cols = np.frombuffer(raw[:16], dtype='>i4')
    if magic != 2051:
        raise SystemExit(f'{path}: not an idx3-ubyte image file (magic {magic})')
    return np.frombuffer(raw[16:16 + n * rows * cols], np.uint8).reshape(n, rows * cols).astype(np.float32)


def write_fvecs(path, x):
    out = np.empty((x.shape[0], x.shape[1] + 1), np.float32)
    out[:, 0] = np.array([x.shape[1]], np.int32).view(np.float32)[0]
    out[:, 1:] = x
    out.tofile(path)


ap = argparse.ArgumentParser()
ap.add_argument('images'); ap.add_argument('base'); ap.add_argument('query')
ap.add_argument('--split', type=int, default=None)
a = ap.parse_args()
x = idx_images(a.images)
s = x.shape[0] if a.split is None else a.split
write_fvecs(a.base, x[:s])
write_fvecs(a.query, x[s:] if s < x.shape[0] else x[-1000:])
print(f'{a.images}: {x.shape[0]} x {x.shape[1]}, base {s} rows, query {x.shape[0] - s if s < x.shape[0] else 1000} rows')
