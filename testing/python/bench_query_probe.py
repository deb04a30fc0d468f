"""pvpython benchmark of the kNN Query Probe's interactive latency (not a
CTest: timings vary; the tests check behaviour).

On 1,000,000 points (uniform in a box, and the demo's clustered n-body
model): the first UpdatePipeline (index build, row copy included), then
PROBES handle moves (ProbePosition set, UpdatePipeline) and a sweep of k,
each a search-only change, timed from the property change to the end of
UpdatePipeline.  Prints medians and 90th percentiles, the core's own
search seconds and the build counter (which must stay 1).

usage: pvpython bench_query_probe.py PLUGIN [N] [K] [PROBES] [THREADS]"""
import os
import sys
import time

import numpy as np
from paraview.simple import LoadPlugin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demo"))
import nbody_model  # noqa: E402
import vic_pvtest as t  # noqa: E402

plugin = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
k = int(sys.argv[3]) if len(sys.argv) > 3 else 32
probes = int(sys.argv[4]) if len(sys.argv) > 4 else 200
threads = int(sys.argv[5]) if len(sys.argv) > 5 else 0
LoadPlugin(plugin, remote=False, ns=globals())  # defines kNNQueryProbe here


def field(proxy, name):
    fd = proxy.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
    return float(fd.GetAbstractArray(name).GetVariantValue(0).ToDouble())


def run(label, xyz, positions):
    src = t.source(xyz)
    src.UpdatePipeline()
    p = kNNQueryProbe(Input=src)
    p.k = k
    p.Threads = threads
    t0 = time.perf_counter()
    p.UpdatePipeline()
    first = time.perf_counter() - t0
    build = field(p, "Seconds Index Build")
    wall, core = [], []
    for pos in positions:
        t0 = time.perf_counter()
        p.ProbePosition = [float(v) for v in pos]
        p.UpdatePipeline()
        wall.append(time.perf_counter() - t0)
        core.append(field(p, "Seconds Query"))
    kwall = []
    for kk in list(range(8, 65, 8)) * 3:
        t0 = time.perf_counter()
        p.k = kk
        p.UpdatePipeline()
        kwall.append(time.perf_counter() - t0)
    builds = int(field(p, "Index Builds"))
    ms = lambda v, q: 1e3 * float(np.percentile(v, q))  # noqa: E731
    print("%-28s n=%d k=%d: first UpdatePipeline %.3f s (index build %.3f s, %s); probe move median %.2f ms "
          "(p90 %.2f, max %.2f; core search median %.3f ms) over %d moves; k change median %.2f ms; Index Builds %d"
          % (label, len(xyz), k, first, build, p.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
             .GetAbstractArray("Index Method").GetValue(0), ms(wall, 50), ms(wall, 90), 1e3 * max(wall),
             ms(core, 50), len(wall), ms(kwall, 50), builds))
    if builds != 1:
        t.fail("a search-only change rebuilt the index")
    return ms(wall, 50)


rng = np.random.default_rng(3)
uniform = rng.random((n, 3)).astype(np.float32) * np.float32(100.0)
run("uniform box", uniform, rng.random((probes, 3)) * 100.0)
model = nbody_model.generate()
xyz = model.positions[:n]
# where a user points: at particles (mostly in the dense spheres), jittered
at = xyz[rng.integers(0, len(xyz), probes)] + rng.normal(0, 0.5, (probes, 3))
run("n-body model (clustered)", xyz, at)
