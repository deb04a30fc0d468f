"""Planted NFW halos of known M_200 and R_200 in a uniform background of
a periodic unit box, for the halo-catalogue tests and screenshots.

A halo of N particles drawn out to 2c scale radii has N m(c) / m(2c)
particles inside R_200 = c r_s on average (m(x) = ln(1 + x) - x / (1 + x));
with the background's mean density rho_bg and the box's mean density
rho_mean, M_200 = 200 rho_mean V_200 = N m(c) / m(2c) + rho_bg V_200 fixes
V_200 and so R_200.  Halo particles get the halo's bulk velocity plus a
cold isotropic dispersion (0.1 sqrt(M_200 / R_200), G = 1: bound);
background particles a hot one (unbound)."""
import numpy as np


def nfw_m(x):
    return np.log1p(x) - x / (1.0 + x)


def nfw_radii(rng, n, c):
    """n radii in units of r_s, drawn out to 2c (m(X) = u m(2c), bisection)."""
    target = rng.random(n) * nfw_m(2.0 * c)
    lo, hi = np.zeros(n), np.full(n, 2.0 * c)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = nfw_m(mid) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


class Model:
    pass


def generate(halos=((20000, 5.0, (0.3, 0.3, 0.3), (100.0, -50.0, 20.0)),
                    (8000, 8.0, (0.72, 0.35, 0.68), (-30.0, 60.0, 0.0)),
                    (4000, 4.0, (0.985, 0.99, 0.02), (0.0, 0.0, -80.0))),
             n_background=100000, seed=5):
    """halos: (particles, concentration, centre, bulk velocity) each."""
    rng = np.random.default_rng(seed)
    n = n_background + sum(h[0] for h in halos)
    rho_mean, rho_bg = float(n), float(n_background)
    pos, vel, owner, truth = [], [], [], []
    for i, (count, c, centre, bulk) in enumerate(halos):
        v200 = count * nfw_m(c) / nfw_m(2 * c) / (200 * rho_mean - rho_bg)
        r200 = (v200 / (4.0 / 3.0 * np.pi)) ** (1.0 / 3.0)
        sigma = 0.1 * np.sqrt(200 * rho_mean * v200 / r200)
        r = nfw_radii(rng, count, c) * r200 / c
        cz = 2 * rng.random(count) - 1
        phi = 2 * np.pi * rng.random(count)
        sz = np.sqrt(1 - cz * cz)
        p = np.asarray(centre) + r[:, None] * np.stack([sz * np.cos(phi), sz * np.sin(phi), cz], axis=1)
        pos.append(np.mod(p, 1.0))
        vel.append(np.asarray(bulk) + sigma * rng.standard_normal((count, 3)))
        owner.append(np.full(count, i))
        truth.append(dict(centre=np.asarray(centre), r200=r200, m200=200 * rho_mean * v200, sigma=sigma,
                          bulk=np.asarray(bulk), n=count, c=c))
    hot = 10 * np.sqrt(truth[0]["m200"] / truth[0]["r200"])
    pos.append(rng.random((n_background, 3)))
    vel.append(hot * rng.standard_normal((n_background, 3)))
    owner.append(np.full(n_background, -1))
    m = Model()
    m.positions = np.mod(np.concatenate(pos), 1.0).astype(np.float32)
    m.positions[m.positions >= 1.0] = 0.0  # float rounding of values just below 1
    m.velocities = np.concatenate(vel).astype(np.float32)
    m.owner = np.concatenate(owner)
    m.halos = truth
    m.rho_mean = rho_mean
    return m


def wrapped_distance(a, b):
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    d -= np.round(d)
    return np.sqrt((d * d).sum(axis=-1))
