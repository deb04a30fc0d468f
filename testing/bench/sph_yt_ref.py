"""yt's SPH projection of the same particles as sph_bench (issue 19's CPU
comparison; Debian's python3-yt).  Reads the points (.npy), the smoothing
lengths and vic_sph_resample's map written by sph_bench (--save-h,
--save-map), projects with yt along z over the same square (the data's
bounding box; pynbody convention: yt's kernel support is 2h; unit masses
and unit density, so yt's column "density" is the sum of the particles'
projected kernels, as in the core) onto RES x RES pixels, times it and
prints one JSON line with both maps' mass and their difference.

    python3 sph_yt_ref.py POINTS.npy H.f32 MAP.f32 RES [YT_MAP.f32]

(YT_MAP: yt's map written as raw float32, for a closer look.)
"""
import json
import sys
import time

import numpy as np
import yt


def main():
    points, hfile, mapfile, res = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    xyz = np.load(points).astype(np.float64)
    h = np.fromfile(hfile, np.float32).astype(np.float64)
    vic = np.fromfile(mapfile, np.float32).reshape(res, res).astype(np.float64)
    n = len(xyz)
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    centre = 0.5 * (lo + hi)
    side = float(max(hi[0] - lo[0], hi[1] - lo[1]))
    reach = 2.0 * h.max()
    bbox = np.array([lo - reach - 1e-3, hi + reach + 1e-3]).T
    data = {
        ("io", "particle_position_x"): (xyz[:, 0], "cm"),
        ("io", "particle_position_y"): (xyz[:, 1], "cm"),
        ("io", "particle_position_z"): (xyz[:, 2], "cm"),
        ("io", "particle_mass"): (np.ones(n), "g"),
        ("io", "density"): (np.ones(n), "g/cm**3"),
        ("io", "smoothing_length"): (2.0 * h, "cm"),
    }
    t, c = time.time(), time.process_time()
    ds = yt.load_particles(data, length_unit=1.0, mass_unit=1.0, bbox=bbox, periodicity=(False, False, False))
    prj = ds.proj(("io", "density"), 2)
    frb = prj.to_frb((side, "cm"), res, center=ds.arr(centre, "cm"))
    ref = np.asarray(frb[("io", "density")].to("g/cm**2").d, dtype=np.float64)
    seconds, cpu = time.time() - t, time.process_time() - c
    if len(sys.argv) > 5:
        ref.astype(np.float32).tofile(sys.argv[5])
    dx = side / res
    both = (ref > 0) | (vic > 0)
    print(json.dumps({
        "bench": "sph_yt_ref", "yt": yt.__version__, "n": int(n), "res": res, "yt_seconds": round(seconds, 3),
        "yt_cpu_seconds": round(cpu, 3), "mass_yt": float(ref.sum() * dx * dx), "mass_vicinity": float(vic.sum() * dx * dx),
        "l1_difference_over_mass": float(np.abs(ref - vic).sum() / vic.sum()),
        "median_relative_difference": float(np.median(np.abs(ref[both] - vic[both]) / np.maximum(vic[both], 1e-300))),
    }))


if __name__ == "__main__":
    main()
