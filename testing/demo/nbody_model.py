"""The demo's built-in data set: a synthetic n-body system.

Several Plummer spheres of different scale and mass (one small sphere
nested inside the largest one) in a uniform background, with a fixed seed so
that every run gives the same particles.  Plain numpy, so that pvbatch
scripts and tests (e.g. density and peak checks) can import it and compare
what they find with the planted centres and scales.

    import nbody_model
    m = nbody_model.generate()          # about 1,000,000 particles
    m.positions   # (n, 3) float32
    m.masses      # (n,) float32, total mass of each component spread evenly
    m.component   # (n,) int16: index into m.spheres, -1 for the background
    m.spheres     # list of Sphere(centre, scale, mass, count)
"""
from dataclasses import dataclass, field

import numpy as np

BOX = 100.0  # the background fills [0, BOX)^3; sphere centres lie well inside


@dataclass(frozen=True)
class Sphere:
    centre: tuple   # (x, y, z)
    scale: float    # Plummer scale radius a
    mass: float     # total mass of the sphere
    count: int      # particles drawn for it


# The planted spheres (counts sum with the background to 1,000,000).
# The nested sphere sits 1.48 host scale radii from the host's centre,
# where the host is 10x less dense than at its centre.  Nearer in, the
# host's own centre stops being a separate density peak: at 0.875 a (its
# first position) the host's central density was only 1.39 times that of
# the saddle towards the small sphere, below any prominence that noise
# maxima of a k = 32 density estimate cannot reach (the Salient Points
# default is exp(6/sqrt(31)) = 2.9); here the ratio is 5.4.
SPHERES = (
    Sphere((50.0, 50.0, 50.0), 8.0, 40.0, 400_000),   # the large halo
    Sphere((60.0, 45.0, 54.0), 0.8, 2.0, 60_000),     # small, nested in the large one
    Sphere((22.0, 70.0, 30.0), 4.0, 12.0, 200_000),
    Sphere((75.0, 25.0, 70.0), 2.5, 6.0, 120_000),
    Sphere((30.0, 25.0, 75.0), 1.2, 1.5, 40_000),
)
BACKGROUND_COUNT = 180_000
BACKGROUND_MASS = 4.0
TRUNCATION = 5.0  # spheres are cut at TRUNCATION * scale


@dataclass
class Model:
    positions: np.ndarray
    masses: np.ndarray
    component: np.ndarray
    spheres: list = field(default_factory=list)


def plummer(rng, count, scale, truncation=TRUNCATION):
    """Positions of a Plummer sphere centred at 0: the enclosed mass fraction
    of radius r is u = r^3 / (r^2 + a^2)^(3/2), so r = a / sqrt(u^(-2/3) - 1)
    for u uniform; u is drawn below the truncation radius's fraction."""
    rt = truncation
    u_max = rt ** 3 / (rt ** 2 + 1.0) ** 1.5
    u = rng.uniform(0.0, u_max, count)
    r = scale / np.sqrt(u ** (-2.0 / 3.0) - 1.0)
    v = rng.normal(size=(count, 3))
    v /= np.linalg.norm(v, axis=1)[:, None]
    return v * r[:, None]


def generate(scale_count=1.0, seed=20240611):
    """The model; scale_count < 1 draws proportionally fewer particles
    (for quick tests) with the same centres, scales and masses."""
    rng = np.random.default_rng(seed)
    pos, mass, comp = [], [], []
    for i, s in enumerate(SPHERES):
        n = max(2, int(round(s.count * scale_count)))
        pos.append(plummer(rng, n, s.scale) + np.asarray(s.centre))
        mass.append(np.full(n, s.mass / n))
        comp.append(np.full(n, i, dtype=np.int16))
    n = max(2, int(round(BACKGROUND_COUNT * scale_count)))
    pos.append(rng.uniform(0.0, BOX, size=(n, 3)))
    mass.append(np.full(n, BACKGROUND_MASS / n))
    comp.append(np.full(n, -1, dtype=np.int16))
    return Model(np.concatenate(pos).astype(np.float32), np.concatenate(mass).astype(np.float32),
                 np.concatenate(comp), list(SPHERES))


if __name__ == "__main__":
    m = generate()
    print(f"{len(m.positions)} particles, {len(m.spheres)} Plummer spheres + background")
