"""VTK's own all-points kNN as a peer of Vicinity (run with pvpython):
vtkStatisticalOutlierRemoval with SampleSize k calls
vtkStaticPointLocator::FindClosestNPoints for every point, on the SMP
backend and thread count given (the issue's reference: STDThread, 2).

  pvpython vtk_peer.py --data FILE --k 16 [--threads 2] [--repeats 1]

Prints one JSON line per run in the shape of vicinity_bench.  The filter
does not expose the neighbour ids, so recall is null; the search is exact.
"""
import argparse
import os
import sys

# The backend must be chosen before vtkSMPTools is first used.
os.environ.setdefault("VTK_SMP_BACKEND_IN_USE", "STDThread")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402
from vtkmodules.util.numpy_support import numpy_to_vtk  # noqa: E402
from vtkmodules.vtkCommonCore import vtkPoints, vtkSMPTools  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkPolyData, vtkStaticPointLocator  # noqa: E402
from vtkmodules.vtkFiltersPoints import vtkStatisticalOutlierRemoval  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--name")
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args()
    name = args.name or os.path.basename(args.data).split(".")[0]
    x = bc.load(args.data, args.limit)
    if x.shape[1] != 3:
        raise SystemExit("vtk_peer: %s has d = %d; VTK's point locators need 3-d points" % (args.data, x.shape[1]))

    vtkSMPTools.Initialize(args.threads)
    backend = vtkSMPTools.GetBackend()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(x, deep=True))
    poly = vtkPolyData()
    poly.SetPoints(pts)
    for _ in range(args.repeats):
        f = vtkStatisticalOutlierRemoval()
        f.SetInputData(poly)
        f.SetSampleSize(args.k)
        f.SetLocator(vtkStaticPointLocator())
        st = bc.Stages()
        st.start()
        f.Update()
        st.stop("update")
        peak = bc.peak_rss_mb()
        bc.emit(name, x, args.k, "vtkStatisticalOutlierRemoval", vtkSMPTools.GetEstimatedNumberOfThreads(),
                st.wall["update"], st.wall, None, "vtk", peak, st.cpu, smp_backend=backend,
                note="exact; ids not exposed by the filter")


if __name__ == "__main__":
    main()
