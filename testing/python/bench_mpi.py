"""MPI scaling of the kNN Graph filter (BENCHMARKS.md, "MPI").

    pvpython bench_mpi.py PLUGIN DATA_DIR WORKDIR make N_POINTS RANKS...
        writes N uniform 3-d points as cloud_R.pvtp with R pieces (random
        order, so the filter must move points between ranks)
    mpiexec -np R pvbatch bench_mpi.py PLUGIN DATA_DIR WORKDIR run K
        times the filter (UpdatePipeline on all ranks, seconds on rank 0)
        and prints the per-rank owned points, halo points and seconds
"""
import os
import time

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403

import vic_pvtest as t

_, extra = t.setup(globals())
workdir, mode = extra[0], extra[1]
if mode == "make":
    n = int(extra[2])
    os.makedirs(workdir, exist_ok=True)
    xyz = np.random.default_rng(3).uniform(0, 1, size=(n, 3)).astype(np.float32)
    for ranks in map(int, extra[3:]):
        t.write_pieces(workdir, "cloud_%d.pvtp" % ranks,
                       [("piece_%d_%d.vtp" % (ranks, i), part, None) for i, part in enumerate(np.array_split(xyz, ranks))])
else:
    k = int(extra[2])
    ranks = sm.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()
    src = XMLPartitionedPolydataReader(FileName=[os.path.join(workdir, "cloud_%d.pvtp" % ranks)])
    src.UpdatePipeline()
    f = kNNGraph(Input=src)
    f.k = k
    f.GenerateGraph = 0
    t0 = time.perf_counter()
    f.UpdatePipeline()
    seconds = time.perf_counter() - t0
    info = f.GetDataInformation()
    print("ranks %d  points %d  k %d  filter seconds %.2f" % (ranks, info.GetNumberOfPoints(), k, seconds))
    fd = sm.Fetch(f).GetFieldData() if ranks > 1 else None
    if fd is not None:
        for name in ("Owned Points Per Rank", "Halo Points Per Rank", "Seconds Per Rank", "Halo Width",
                     "Halo Rounds"):
            a = fd.GetArray(name)
            print("%s: %s" % (name, [a.GetValue(i) for i in range(a.GetNumberOfTuples())]))
