"""Peak host memory of the kNN Graph filter against its output arrays
(issue 16: the filter path, core and VTK arrays, within 1.1x of the arrays).

Run under pvpython or pvbatch:

  pvpython knn_graph_memory.py --plugin PLUGIN --data FILE.npy [--name NAME]
           --k 16 [--method Auto] [--backend CPU] [--threads 0] [--graph 0]

The points are loaded into a pipeline source and updated first; then the
process's peak resident size is reset (Linux: "5" into
/proc/self/clear_refs) and the filter runs once.  The filter's extra
memory is the new peak minus the resident size before it; the output
arrays are what the filter leaves on its output (Neighbor Ids, Neighbor
Distances, d_nn1).  Prints one JSON line as vicinity_bench does, with
"peak_extra_mb", "output_mb" and "memory_ratio" (extra / output)."""
import argparse
import json
import os
import sys
import time

import numpy as np
from paraview.simple import LoadPlugin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import vic_pvtest as t  # noqa: E402


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise SystemExit("knn_graph_memory: /proc/self/status has no " + field)


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError as e:
        raise SystemExit("knn_graph_memory: cannot reset the peak resident size (%s); Linux >= 4.0 needed" % e)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--plugin", required=True)
    p.add_argument("--data", required=True, help=".npy of n x 3 float32 points")
    p.add_argument("--name", default=None)
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--method", default="Auto", help="the filter's Method as the panel names it")
    p.add_argument("--backend", default="Auto", help="the filter's Backend: Auto, CPU or GPU")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--graph", type=int, default=0, help="GenerateGraph (0 off, 1 on, 2 auto)")
    a = p.parse_args()

    LoadPlugin(a.plugin, remote=False, ns=globals())  # defines kNNGraph here
    xyz = np.load(a.data, mmap_mode="r")
    if xyz.ndim != 2 or xyz.shape[1] != 3:
        raise SystemExit("knn_graph_memory: %s is not n x 3" % a.data)
    src = t.source(np.asarray(xyz, dtype=np.float32))
    del xyz
    src.UpdatePipeline()
    f = globals()["kNNGraph"](Input=src)
    f.k = a.k
    f.Method = a.method
    f.Backend = a.backend
    f.Threads = a.threads
    f.GenerateGraph = a.graph
    f.RecallSample = 0

    before_kib = status_kib("VmRSS")
    reset_peak()
    t0 = time.perf_counter()
    f.UpdatePipeline()
    seconds = time.perf_counter() - t0
    peak_kib = status_kib("VmHWM")
    after_kib = status_kib("VmRSS")

    out = f.GetClientSideObject().GetOutputDataObject(0)
    pd = out.GetPointData()
    n = out.GetNumberOfPoints()
    if n == 0 or pd.GetArray("Neighbor Ids") is None:
        raise SystemExit("knn_graph_memory: the filter produced no lists")
    output_bytes = 0
    for name in ("Neighbor Ids", "Neighbor Distances", "d_nn1"):
        arr = pd.GetArray(name)
        output_bytes += arr.GetNumberOfValues() * arr.GetDataTypeSize()
    extra_mb = (peak_kib - before_kib) / 1024.0
    output_mb = output_bytes / 1048576.0
    print(json.dumps({
        "tool": "knn_graph_memory", "method": "kNN Graph filter (%s, %s)" % (a.method, a.backend), "dataset": a.name or os.path.basename(a.data),
        "n": n, "d": 3, "k": a.k, "threads": a.threads, "seconds": round(seconds, 3),
        "seconds_stages": {"update": round(seconds, 3)}, "recall": None,
        "baseline_rss_mb": round(before_kib / 1024.0, 1), "peak_rss_mb": round(peak_kib / 1024.0, 1),
        "peak_extra_mb": round(extra_mb, 1),
        "kept_extra_mb": round((after_kib - before_kib) / 1024.0, 1), "output_mb": round(output_mb, 1),
        "memory_ratio": round(extra_mb / output_mb, 3)}))


if __name__ == "__main__":
    main()
