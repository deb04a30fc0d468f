#!/usr/bin/env python3
"""manifold at any size, fast: the model of make_synthetic.py's manifold
(the same fixed model -- 64 Gaussian centres on a 16-d latent space, the
same 16 x d linear map, both drawn from MODEL_SEED -- and the same row
law: a random centre plus unit latent noise, mapped to d dimensions, plus
isotropic noise of 0.05) drawn in independent chunks by all cores and
written straight into a .npy file.  The differences from make_synthetic.py:
each chunk has its own random stream (seeded by (seed, chunk)) and the
normals are drawn and mapped in float32, so the rows have the same
distribution but are not the same rows; they depend only on (seed, n, d).
For sets too large for make_synthetic.py's in-memory, one-core build
(100M x 96: 38.4 GB).

usage: manifold_chunks.py N OUT.npy [--d D] [--seed S] [--workers W]
"""
import argparse
import os
import time

import numpy as np

import npy_chunks

MODEL_SEED = 12345  # make_synthetic.py's fixed model
INTRINSIC, COMPS = 16, 64
CHUNK = 1 << 19


def model(d):
    m = np.random.default_rng(MODEL_SEED)
    mu = m.normal(size=(COMPS, INTRINSIC)) * 1.5
    w = m.normal(size=(INTRINSIC, d)) / np.sqrt(INTRINSIC)
    return mu.astype(np.float32), w.astype(np.float32)


def chunk(args):
    path, n, d, seed, c = args
    a, b = c * CHUNK, min(n, (c + 1) * CHUNK)
    m = b - a
    mu, w = model(d)
    r = np.random.default_rng([seed, c])
    z = mu[r.integers(0, COMPS, m)] + r.standard_normal((m, INTRINSIC), dtype=np.float32)
    out = z @ w
    out += np.float32(0.05) * r.standard_normal((m, d), dtype=np.float32)
    npy_chunks.put(path, a, out)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('n', type=int)
    ap.add_argument('out')
    ap.add_argument('--d', type=int, default=128)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--workers', type=int, default=os.cpu_count())
    o = ap.parse_args()
    t = time.time()
    done = npy_chunks.generate(o.out, o.n, o.d, CHUNK, chunk, (o.out, o.n, o.d, o.seed), o.workers)
    print(f"manifold_chunks n={o.n} d={o.d} seed={o.seed} rows={done} seconds={time.time() - t:.1f}")


if __name__ == '__main__':
    main()
