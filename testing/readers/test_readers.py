"""The Vicinity snapshot readers in ParaView (pvpython / pvbatch).

    pvpython test_readers.py PLUGIN WRITER WORKDIR serial
        writes Gadget 1, Gadget 2 (big endian, double), a 3-file Gadget
        snapshot, HDF5 (one file and two) and a LAMMPS dump; opens each
        through ParaView's reader factory (OpenDataFile must pick the
        Vicinity reader) and checks particle counts per type, masses, ids,
        positions, velocities, box, redshift and time against what was
        written; a damaged file gives an error, not a crash; saves the
        points as reference.npz
    mpiexec -np N pvbatch test_readers.py PLUGIN WRITER WORKDIR mpi
        opens the same files on N ranks: every rank reads a share (none
        empty, none overlapping) and together they give the same points
"""
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import LoadPlugin, OpenDataFile, ProcessIdScalars
from vtkmodules.numpy_interface import dataset_adapter as dsa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import snapshot_files as sf  # noqa: E402
import vic_pvtest as t  # noqa: E402

plugin, writer, workdir, mode = sys.argv[1:5]
LoadPlugin(plugin, remote=False, ns=globals())
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL: " + message)


def field_values(data):
    fd = data.GetFieldData()
    out = {}
    for i in range(fd.GetNumberOfArrays()):
        a = fd.GetAbstractArray(i)
        if a.IsNumeric():
            out[a.GetName()] = np.array([a.GetVariantValue(j).ToDouble() for j in range(a.GetNumberOfValues())])
        else:
            out[a.GetName()] = [a.GetVariantValue(j).ToString() for j in range(a.GetNumberOfValues())]
    return out


def read(path, proxy_name):
    reader = OpenDataFile(path)
    check(reader is not None and reader.GetXMLName() == proxy_name,
          "%s: OpenDataFile chose %s, expected %s" % (path, reader and reader.GetXMLName(), proxy_name))
    data = sm.Fetch(reader)
    w = dsa.WrapDataObject(data)
    arrays = {name: np.asarray(w.PointData[name]) for name in w.PointData.keys()}
    return reader, np.asarray(w.Points), arrays, field_values(data)


def by_id(points, arrays):
    order = np.argsort(arrays["ParticleIds"])
    return points[order], {k: v[order] for k, v in arrays.items()}


def check_nbody(name, points, arrays, field, p):
    n = sum(sf.NPART)
    check(len(points) == n, "%s: %d particles, wrote %d" % (name, len(points), n))
    if len(points) != n:
        return
    pts, arr = by_id(points, arrays)
    want = np.argsort(p["ids"])
    check(np.array_equal(arr["ParticleIds"], p["ids"][want]), name + ": ids differ")
    check(np.array_equal(pts, p["pos"][want]), name + ": positions differ")
    check(np.array_equal(arr["Velocity"], p["vel"][want]), name + ": velocities differ")
    check(np.array_equal(arr["ParticleType"], p["type"][want]), name + ": types differ")
    check(np.allclose(arr["Mass"], p["mass"][want], rtol=1e-6, atol=0), name + ": masses differ")
    counts = np.bincount(arrays["ParticleType"], minlength=6)
    check(list(counts) == sf.NPART, "%s: particles per type %s, wrote %s" % (name, list(counts), sf.NPART))
    check(np.all(arrays["Mass"][arrays["ParticleType"] == 1] == 0.5), name + ": type 1 mass from the table")
    check(list(field["BoxSize"]) == [sf.BOX] * 3, "%s: BoxSize %s" % (name, field.get("BoxSize")))
    check(list(field["BoxOrigin"]) == [0, 0, 0], "%s: BoxOrigin %s" % (name, field.get("BoxOrigin")))
    check(field["Redshift"][0] == sf.REDSHIFT, "%s: Redshift %s" % (name, field.get("Redshift")))
    check(abs(field["Time"][0] - sf.TIME) < 1e-15, "%s: Time %s" % (name, field.get("Time")))
    check(list(field["MassTable"]) == sf.MASS_TABLE, "%s: MassTable %s" % (name, field.get("MassTable")))
    check(list(field["NumPartTotal"]) == sf.NPART, "%s: NumPartTotal %s" % (name, field.get("NumPartTotal")))


def check_lammps(points, arrays, field, a):
    n = len(a["ids"])
    check(len(points) == n, "lammps: %d atoms, wrote %d" % (len(points), n))
    if len(points) != n:
        return
    pts, arr = by_id(points, arrays)
    check(np.array_equal(arr["ParticleIds"], a["ids"]), "lammps: ids differ")
    check(np.allclose(pts, a["pos"], rtol=0, atol=1e-5), "lammps: unscaled positions differ")
    check(np.array_equal(arr["ParticleType"], a["type"]), "lammps: types differ")
    check(np.array_equal(arr["Mass"], a["mass"]), "lammps: masses differ")
    check(np.allclose(arr["c_pe"], a["pe"], rtol=1e-15), "lammps: the c_pe column differs")
    check(list(field["BoxSize"]) == list(sf.LAMMPS_BOX), "lammps: BoxSize %s" % field.get("BoxSize"))
    check(list(field["BoxOrigin"]) == list(sf.LAMMPS_ORIGIN), "lammps: BoxOrigin %s" % field.get("BoxOrigin"))
    check(list(field["BoxPeriodic"]) == [1, 1, 0], "lammps: BoxPeriodic %s" % field.get("BoxPeriodic"))
    check(field["Timestep"][0] == 2500, "lammps: Timestep %s" % field.get("Timestep"))


if mode == "serial":
    files, p, atoms = sf.make_all(workdir, writer)
    ref = {}
    for name, (path, proxy) in sorted(files.items()):
        _, points, arrays, field = read(path, proxy)
        if name == "lammps":
            check_lammps(points, arrays, field, atoms)
        else:
            check_nbody(name, points, arrays, field, p)
            if name.startswith("hdf5"):
                check(abs(field["UnitLength_in_cm"][0] - 3.085678e21) < 1e12, name + ": unit length")
        print("%-15s %5d particles, box %s, redshift %s: read back as written" % (
            name, len(points), list(field.get("BoxSize", [])), list(field.get("Redshift", ["-"]))))
        ref[name] = points
    # only some particle types: the others are not read
    for name in ("gadget1-3files", "hdf5-2files"):
        path, proxy = files[name]
        reader = OpenDataFile(path)
        check(sorted(reader.GetProperty("ParticleTypeInfo")[::2]) == ["PartType0", "PartType1", "PartType4"],
              "%s: type list %s" % (name, list(reader.GetProperty("ParticleTypeInfo"))))
        reader.ParticleTypes = ["PartType1", "PartType4"]
        w = dsa.WrapDataObject(sm.Fetch(reader))
        types = np.asarray(w.PointData["ParticleType"])
        want = np.isin(p["type"], [1, 4])
        check(len(types) == want.sum() and set(types) == {1, 4}, "%s: types 1 and 4 only: %d points, types %s" % (
            name, len(types), sorted(set(types))))
        got_ids = np.sort(np.asarray(w.PointData["ParticleIds"]))
        check(np.array_equal(got_ids, np.sort(p["ids"][want])), name + ": the selected types' ids")
        print("%-15s ParticleTypes = PartType1, PartType4: %d particles" % (name, len(types)))
    # a damaged file: an error message from the reader, no crash, no points
    bad = os.path.join(workdir, "broken.gadget")
    with open(files["gadget1"][0], "rb") as f:
        blob = f.read()
    with open(bad, "wb") as f:
        f.write(blob[: len(blob) // 2])
    broken = GadgetSnapshotReaderVicinity(FileName=bad)  # noqa: F821 (LoadPlugin's proxy)
    message = t.update_caught(broken)
    check("truncated Gadget file" in message and "broken.gadget" in message,
          "a truncated file's message: %r" % message[-300:])
    check(sm.Fetch(broken).GetNumberOfPoints() == 0, "a truncated file gives no points")
    print("truncated file: %s" % [m for m in message.splitlines() if "truncated" in m][:1])
    np.savez(os.path.join(workdir, "reference.npz"), **ref)
    if not failures:
        print("SERIAL-OK")
else:
    ref = np.load(os.path.join(workdir, "reference.npz"))
    ranks = sm.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()
    print("pvbatch ranks: %d" % ranks)
    names = {"gadget1": ("halo.gadget", "VicinityGadgetReader"), "gadget2": ("halo_be.g2", "VicinityGadgetReader"),
             "gadget1-3files": ("snap_005.1", "VicinityGadgetReader"),
             "hdf5-2files": ("snap_007.0.hdf5", "VicinityHDF5SnapshotReader"),
             "hdf5": ("halo.hdf5", "VicinityHDF5SnapshotReader"),
             "lammps": ("melt.lammpstrj", "VicinityLammpsDumpReader")}
    for name, (base, proxy) in sorted(names.items()):
        reader, points, arrays, field = read(os.path.join(workdir, base), proxy)
        want = ref[name]
        same = len(points) == len(want) and np.array_equal(points[np.lexsort(points.T)], want[np.lexsort(want.T)])
        check(same, "%s: %d ranks give %d points, not the same as one process's %d" % (
            name, ranks, len(points), len(want)))
        owner = np.asarray(dsa.WrapDataObject(sm.Fetch(ProcessIdScalars(Input=reader))).PointData["ProcessId"])
        shares = np.bincount(owner.astype(np.int64), minlength=ranks)
        expect = [len(want) // ranks + (1 if r < len(want) % ranks else 0) for r in range(ranks)]
        check(list(shares) == expect, "%s: particles per rank %s, expected %s" % (name, list(shares), expect))
        print("%-15s %d ranks read %s particles (the same %d points as one process)" % (
            name, ranks, list(shares), len(want)))
    # a type selection: the ranks share the chosen particles
    reader = OpenDataFile(os.path.join(workdir, "snap_005.1"))
    reader.ParticleTypes = ["PartType1", "PartType4"]
    owner = np.asarray(dsa.WrapDataObject(sm.Fetch(ProcessIdScalars(Input=reader))).PointData["ProcessId"])
    shares = np.bincount(owner.astype(np.int64), minlength=ranks)
    expect = [700 // ranks + (1 if r < 700 % ranks else 0) for r in range(ranks)]
    check(list(shares) == expect, "types 1 and 4 on %d ranks: %s, expected %s" % (ranks, list(shares), expect))
    print("PartType1+4      %d ranks read %s particles" % (ranks, list(shares)))
    if not failures:
        print("MPI-READERS-OK")
if failures:  # a clean end needs no exit call: under pvbatch it would skip MPI's finalisation
    sys.exit(1)
