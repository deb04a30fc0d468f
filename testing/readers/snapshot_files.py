"""Small particle snapshots written by the reader tests themselves: Gadget
format 1 and 2 (struct, from the format's description, independent of the
readers), HDF5 (through the write_snapshot program, so that no h5py is
needed) and LAMMPS text dumps.  make_all() writes every file into a folder
and returns what each must read back as."""
import os
import struct
import subprocess

import numpy as np

# Types 0 and 4 have per-particle masses (MASS block / Masses dataset),
# type 1 takes its mass from the header's mass table.
NPART = [300, 500, 0, 0, 200, 0]
MASS_TABLE = [0.0, 0.5, 0.0, 0.0, 0.0, 0.0]
BOX = 50.0
REDSHIFT = 2.0
TIME = 1.0 / 3.0


def particles(seed=5, box=BOX):
    """Positions in [0, box), velocities, ids, masses and types, type by type."""
    rng = np.random.default_rng(seed)
    n = sum(NPART)
    pos = rng.uniform(0, box, size=(n, 3)).astype(np.float32)
    vel = rng.normal(0, 100, size=(n, 3)).astype(np.float32)
    ids = (rng.permutation(n) + 1000).astype(np.int64)
    types = np.repeat(np.arange(6), NPART).astype(np.int32)
    mass = np.where(np.array(MASS_TABLE)[types] > 0, np.array(MASS_TABLE)[types],
                    rng.uniform(0.01, 0.1, size=n)).astype(np.float32)
    return dict(pos=pos, vel=vel, ids=ids, type=types, mass=mass)


def split(n, f, nfiles):
    base, extra = divmod(n, nfiles)
    first = f * base + min(f, extra)
    return first, base + (1 if f < extra else 0)


def _record(e, payload, label=None):
    out = b""
    if label is not None:  # format 2: an 8-byte record with the label and next block size
        out += struct.pack(e + "I", 8) + label.ljust(4).encode() + struct.pack(e + "iI", len(payload) + 8, 8)
    return out + struct.pack(e + "I", len(payload)) + payload + struct.pack(e + "I", len(payload))


def write_gadget(base, p, fmt2=False, big_endian=False, double=False, nfiles=1, box=BOX):
    """One file (base) or nfiles files base.0 .. base.N-1, particles of each
    type split evenly over the files; box is the header's BoxSize."""
    e = ">" if big_endian else "<"
    real = e + ("f8" if double else "f4")
    starts = np.cumsum([0] + NPART)
    for f in range(nfiles):
        sel = []
        npart = []
        for t in range(6):
            a, c = split(NPART[t], f, nfiles)
            sel.append(np.arange(starts[t] + a, starts[t] + a + c))
            npart.append(c)
        sel = np.concatenate(sel).astype(np.int64)
        head = struct.pack(e + "6i", *npart) + struct.pack(e + "6d", *MASS_TABLE)
        head += struct.pack(e + "ddii", TIME, REDSHIFT, 0, 0)
        head += struct.pack(e + "6I", *NPART) + struct.pack(e + "ii", 0, nfiles)
        head += struct.pack(e + "dddd", box, 0.3, 0.7, 0.7)
        head = head.ljust(256, b"\0")
        label = (lambda name: name) if fmt2 else (lambda name: None)
        data = _record(e, head, label("HEAD"))
        data += _record(e, p["pos"][sel].astype(real).tobytes(), label("POS"))
        data += _record(e, p["vel"][sel].astype(real).tobytes(), label("VEL"))
        data += _record(e, p["ids"][sel].astype(e + "u4").tobytes(), label("ID"))
        massless = sel[np.array(MASS_TABLE)[p["type"][sel]] == 0]
        if len(massless):
            data += _record(e, p["mass"][massless].astype(real).tobytes(), label("MASS"))
        path = base if nfiles == 1 else "%s.%d" % (base, f)
        with open(path, "wb") as out:
            out.write(data)


def write_hdf5(base, p, writer, nfiles=1):
    """base.hdf5 or base.0.hdf5 ..., through the C test writer program."""
    spec = base + ".spec"
    with open(spec, "w") as out:
        out.write("box %r\ntime %r\nredshift %r\nnfiles %d\n" % (BOX, TIME, REDSHIFT, nfiles))
        out.write("masstable %s\nnpart %s\n" % (" ".join(map(repr, MASS_TABLE)), " ".join(map(str, NPART))))
        for i in range(len(p["ids"])):
            x, v = p["pos"][i], p["vel"][i]
            out.write("%.9g %.9g %.9g %.9g %.9g %.9g %d %.9g\n" % (x[0], x[1], x[2], v[0], v[1], v[2],
                                                                   p["ids"][i], p["mass"][i]))
    subprocess.run([writer, "hdf5", base, spec], check=True)
    os.remove(spec)


LAMMPS_ORIGIN = np.array([-5.0, 0.0, 2.0])
LAMMPS_BOX = np.array([10.0, 20.0, 8.0])


def lammps_atoms(seed=9, n=400):
    rng = np.random.default_rng(seed)
    scaled = rng.uniform(0, 1, size=(n, 3))
    return dict(ids=np.arange(1, n + 1, dtype=np.int64) * 2, type=rng.integers(1, 4, size=n).astype(np.int32),
                scaled=scaled, pos=(LAMMPS_ORIGIN + scaled * LAMMPS_BOX).astype(np.float32),
                mass=rng.choice([1.0, 2.5], size=n).astype(np.float32),
                pe=rng.normal(-3, 1, size=n))


def write_lammps(path, a):
    lines = ["ITEM: TIMESTEP", "2500", "ITEM: NUMBER OF ATOMS", str(len(a["ids"])), "ITEM: BOX BOUNDS pp pp fs"]
    lines += ["%r %r" % (lo, lo + L) for lo, L in zip(LAMMPS_ORIGIN, LAMMPS_BOX)]
    lines.append("ITEM: ATOMS id type xs ys zs mass c_pe")
    for i in range(len(a["ids"])):
        s = a["scaled"][i]
        lines.append("%d %d %.17g %.17g %.17g %r %.17g" % (a["ids"][i], a["type"][i], s[0], s[1], s[2],
                                                          float(a["mass"][i]), a["pe"][i]))
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def make_all(folder, writer):
    """Writes every test snapshot; returns {name: (path, reader proxy name)}."""
    os.makedirs(folder, exist_ok=True)
    p = particles()
    files = {}
    write_gadget(os.path.join(folder, "halo.gadget"), p)
    files["gadget1"] = (os.path.join(folder, "halo.gadget"), "VicinityGadgetReader")
    write_gadget(os.path.join(folder, "halo_be.g2"), p, fmt2=True, big_endian=True, double=True)
    files["gadget2"] = (os.path.join(folder, "halo_be.g2"), "VicinityGadgetReader")
    write_gadget(os.path.join(folder, "snap_005"), p, nfiles=3)
    files["gadget1-3files"] = (os.path.join(folder, "snap_005.1"), "VicinityGadgetReader")
    write_hdf5(os.path.join(folder, "snap_007"), p, writer, nfiles=2)
    files["hdf5-2files"] = (os.path.join(folder, "snap_007.0.hdf5"), "VicinityHDF5SnapshotReader")
    write_hdf5(os.path.join(folder, "halo"), p, writer)
    files["hdf5"] = (os.path.join(folder, "halo.hdf5"), "VicinityHDF5SnapshotReader")
    write_lammps(os.path.join(folder, "melt.lammpstrj"), lammps_atoms())
    files["lammps"] = (os.path.join(folder, "melt.lammpstrj"), "VicinityLammpsDumpReader")
    return files, p, lammps_atoms()
