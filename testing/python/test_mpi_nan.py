"""A NaN point under MPI (run by run_mpi_test.sh): every filter refuses the
points with the message one process gives, on every rank, and produces
nothing -- no point is dropped silently.

    pvpython test_mpi_nan.py PLUGIN DATA_DIR WORKDIR serial
        writes 9,000 points with a 4-component feature array as
        nan_N.pvtp with N pieces for N = 1, 2, 3 (the same global order);
        the coordinates hold a NaN at row 7010 and an infinity at row
        8200, the features a NaN at row 5020 and an infinity at row 8600,
        so on 2 and 3 ranks the bad rows lie on one rank, which also holds
        a later bad row; and as mass_N.pvtp the same points with finite
        coordinates and a mass array with a NaN at row 6100 and a negative
        mass at row 8900; then runs every case in this one process
    mpiexec -np N pvbatch test_mpi_nan.py PLUGIN DATA_DIR WORKDIR mpi
        the same cases on N ranks
Each case must leave its filter's outputs empty (NAN-<case>-EMPTY);
run_mpi_test.sh compares the messages of both runs (one per rank, each
the one process's)."""
import os

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403

import vic_pvtest as t

_, extra = t.setup(globals())
workdir, mode = extra[0], extra[1]
N, D, K = 9000, 4, 8
# The rows the messages must name: coordinates, features, masses.
BAD_POINT, BAD_FEATURE, BAD_MASS = 7010, 5020, 6100


def write_pieces(prefix, xyz, feats, mass):
    for ranks in (1, 2, 3):
        t.write_pieces(workdir, "%s_%d.pvtp" % (prefix, ranks),
                       [("%s_%d_%d.vtp" % (prefix, ranks, i), xyz[rows], {"features": feats[rows], "mass": mass[rows]})
                        for i, rows in enumerate(np.array_split(np.arange(N), ranks))])


def empty(proxy, port=0):
    out = sm.Fetch(proxy, idx=port)
    return out.GetNumberOfPoints() == 0 and out.GetPointData().GetNumberOfArrays() == 0


def mass_cases(src):
    """(case, filter, ports) for the filters that read a mass array."""
    density = kNNDensity(Input=src)
    density.k = K
    peaks = SalientPoints(Input=src)
    peaks.k = K
    for f in (density, peaks):
        f.UseMassArray = 1
        f.MassArray = ["POINTS", "mass"]
    return (("DENSITY-MASS", density, (0,)), ("PEAKS-MASS", peaks, (0, 1)))


def cases(src):
    """(case, filter, ports) for every filter that reads the points."""
    graph = kNNGraph(Input=src)
    graph.k = K
    features = kNNGraph(Input=src)
    features.k = K
    features.UseFeatureArray = 1
    features.FeatureArray = ["POINTS", "features"]
    features.GenerateGraph = 0
    density = kNNDensity(Input=src)
    density.k = K
    peaks = SalientPoints(Input=src)
    peaks.k = K
    probe = kNNQueryProbe(Input=src)
    probe.k = K
    probe.ProbePosition = [0.5, 0.5, 0.5]
    return (("GRAPH", graph, (0, 1)), ("FEATURE-GRAPH", features, (0,)), ("DENSITY", density, (0,)),
            ("PEAKS", peaks, (0, 1)), ("PROBE", probe, (0,)))


if mode == "serial":
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(5)
    xyz = rng.uniform(0, 1, size=(N, 3)).astype(np.float32)
    feats = rng.standard_normal(size=(N, D)).astype(np.float32)
    mass = np.full(N, 1.0 / N, np.float32)
    mass[BAD_MASS] = np.nan
    mass[8900] = -1.0
    write_pieces("mass", xyz, feats, mass)
    xyz[BAD_POINT, 1] = np.nan
    xyz[8200, 0] = np.inf
    feats[BAD_FEATURE, 3] = np.nan
    feats[8600, 2] = -np.inf
    write_pieces("nan", xyz, feats, np.full(N, 1.0 / N, np.float32))
    src = XMLPolyDataReader(FileName=[os.path.join(workdir, "nan_1_0.vtp")])
    msrc = XMLPolyDataReader(FileName=[os.path.join(workdir, "mass_1_0.vtp")])
else:
    ranks = sm.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()
    print("pvbatch ranks: %d" % ranks)
    src = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, "nan_%d.pvtp" % ranks)])
    msrc = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, "mass_%d.pvtp" % ranks)])

failed = []
for case, f, ports in cases(src) + mass_cases(msrc):
    print("case %s" % case, flush=True)
    f.UpdatePipeline()
    if all(empty(f, p) for p in ports):
        print("NAN-%s-EMPTY" % case, flush=True)
    else:
        failed.append(case)
if failed:
    t.fail("output produced despite the non-finite point: %s" % failed)
print("SERIAL-OK" if mode == "serial" else "MPI-NAN-OK")
