#!/usr/bin/env python3
"""plummer3 at any size, fast: the model of make_synthetic.py's plummer3
(the same five Plummer spheres -- centres, scale radii, fractions of the
particles, the tail cut at u < 0.999 -- and the uniform background in the
box of side 100) drawn in independent chunks by all cores and written
straight into a .npy file.  Each row picks its component at random with
the model's fractions, so the set has the same distribution as
make_synthetic.py's (which fixes the counts and shuffles) but not the same
rows; the rows depend only on (seed, n).  For sets too large for
make_synthetic.py's in-memory build (10^9 particles: ~100 GB and minutes).

usage: plummer3_chunks.py N OUT.npy [--seed S] [--workers W]
"""
import argparse
import os

import numpy as np

import npy_chunks

COMPS = [  # centre, scale radius, fraction of particles (make_synthetic.py plummer3)
    ((50.0, 50.0, 50.0), 4.0, 0.40),
    ((52.5, 51.0, 50.5), 0.5, 0.05),
    ((20.0, 70.0, 30.0), 2.0, 0.20),
    ((75.0, 25.0, 65.0), 1.0, 0.10),
    ((30.0, 20.0, 80.0), 6.0, 0.10),
]
CHUNK = 1 << 22


def chunk(args):
    path, n, seed, c = args
    a, b = c * CHUNK, min(n, (c + 1) * CHUNK)
    m = b - a
    r = np.random.default_rng([seed, c])
    frac = np.array([f for _, _, f in COMPS] + [1.0 - sum(f for _, _, f in COMPS)])
    lab = r.choice(len(frac), size=m, p=frac)
    out = np.empty((m, 3), dtype=np.float64)
    for i, (centre, scale, _) in enumerate(COMPS):
        sel = np.nonzero(lab == i)[0]
        u = r.uniform(1e-6, 0.999, sel.size)
        rad = scale / np.sqrt(u ** (-2.0 / 3.0) - 1.0)
        v = r.normal(size=(sel.size, 3))
        v /= np.linalg.norm(v, axis=1)[:, None]
        out[sel] = np.asarray(centre) + rad[:, None] * v
    sel = np.nonzero(lab == len(COMPS))[0]
    out[sel] = r.uniform(0.0, 100.0, size=(sel.size, 3))
    npy_chunks.put(path, a, out.astype(np.float32))
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('n', type=int)
    ap.add_argument('out')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--workers', type=int, default=os.cpu_count())
    o = ap.parse_args()
    done = npy_chunks.generate(o.out, o.n, 3, CHUNK, chunk, (o.out, o.n, o.seed), o.workers)
    print(f"plummer3_chunks n={o.n} d=3 seed={o.seed} rows={done}")


if __name__ == '__main__':
    main()
