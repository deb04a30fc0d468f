"""A plain numpy reference for the SPH projection (issue 19's CPU figures):
the surface density of particles with their own smoothing lengths, by the
textbook method -- the projected cubic spline sampled at pixel centres,
each particle's weights normalised to its mass -- vectorised with numpy
(particles grouped by footprint width, np.bincount per chunk).  Reads the
points (.npy), the smoothing lengths and vic_sph_resample's map written by
sph_bench (--save-h, --save-map), times the reference on the same
particles and region (the data's bounding box along z, pynbody
convention: support 2h) and prints one JSON line with both maps' mass and
their difference.

    pvpython sph_numpy_ref.py POINTS.npy H.f32 MAP.f32 RES [SECONDS_VICINITY]

(pvpython for its numpy; any python3 with numpy does.)
"""
import json
import sys
import time

import numpy as np


def projected_cubic(samples=2048):
    """Sigma(R) for R in [0, 1] of the cubic spline of support 1 (8/pi norm)."""
    R = np.linspace(0.0, 1.0, samples + 1)
    z = np.linspace(0.0, 1.0, 4097)
    q = np.sqrt(R[:, None] ** 2 + z[None, :] ** 2)
    w = np.where(q < 0.5, 1 - 6 * q ** 2 + 6 * q ** 3, np.where(q < 1, 2 * (1 - q) ** 3, 0.0)) * 8 / np.pi
    return 2.0 * np.trapz(w, z, axis=1)


def reference_map(xyz, h, res):
    lo, hi = xyz[:, :2].min(axis=0).astype(np.float64), xyz[:, :2].max(axis=0).astype(np.float64)
    side = float(max(hi - lo))
    centre = 0.5 * (lo + hi)
    origin = centre - side / 2
    dx = side / res
    table = projected_cubic()
    px = (xyz[:, 0] - origin[0]) / dx
    py = (xyz[:, 1] - origin[1]) / dx
    H = 2.0 * h.astype(np.float64) / dx  # support in pixels
    reach = np.ceil(H).astype(np.int64)
    image = np.zeros(res * res)
    for r in np.unique(reach):
        sel = np.nonzero(reach == r)[0]
        off = np.arange(-r, r + 1)
        w = off.size
        chunk = max(1, 20_000_000 // (w * w))
        for s in range(0, sel.size, chunk):
            ids = sel[s:s + chunk]
            ix = np.floor(px[ids]).astype(np.int64)[:, None, None] + off[None, None, :]
            iy = np.floor(py[ids]).astype(np.int64)[:, None, None] + off[None, :, None]
            ddx = ix + 0.5 - px[ids][:, None, None]
            ddy = iy + 0.5 - py[ids][:, None, None]
            q = np.sqrt(ddx ** 2 + ddy ** 2) / H[ids][:, None, None]
            k = np.interp(q, np.linspace(0, 1, table.size), table, right=0.0)
            norm = k.reshape(len(ids), -1).sum(axis=1)
            # particles smaller than a pixel centre's reach: all mass in their own pixel
            empty = norm == 0
            k[empty, r, r] = 1.0
            norm[empty] = 1.0
            k /= norm[:, None, None]
            inside = (ix >= 0) & (ix < res) & (iy >= 0) & (iy < res)
            flat = (iy * res + ix)[inside]
            image += np.bincount(flat, weights=k[inside], minlength=res * res)
    return image.reshape(res, res) / (dx * dx), dx


def main():
    points, hfile, mapfile, res = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    vic_seconds = float(sys.argv[5]) if len(sys.argv) > 5 else None
    xyz = np.load(points)
    h = np.fromfile(hfile, np.float32)
    vic = np.fromfile(mapfile, np.float32).reshape(res, res).astype(np.float64)
    t, c = time.time(), time.process_time()
    ref, dx = reference_map(xyz, h, res)
    seconds, cpu = time.time() - t, time.process_time() - c
    scale = dx * dx
    both = (ref > 0) | (vic > 0)
    print(json.dumps({
        "bench": "sph_numpy_ref", "n": int(len(xyz)), "res": res, "numpy_seconds": round(seconds, 3), "numpy_cpu_seconds": round(cpu, 3),
        "vicinity_seconds": vic_seconds,
        "mass_numpy": float(ref.sum() * scale), "mass_vicinity": float(vic.sum() * scale),
        "l1_difference_over_mass": float(np.abs(ref - vic).sum() / vic.sum()),
        "median_relative_difference": float(np.median(np.abs(ref[both] - vic[both]) / np.maximum(vic[both], 1e-300))),
    }))


if __name__ == "__main__":
    main()
