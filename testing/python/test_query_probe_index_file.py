"""pvpython: the kNN Query Probe's index files.

A graph index over 64-d features is built and saved ("Build and Save");
a second probe loads it ("Load": Index Loads 1, Index Builds 0) and answers
exactly as the probe that built it.  Damaged files (payload bytes flipped,
truncated, not an index) and a file saved for other rows are loaded by a
child pvpython: each must print the core's message as a kNN Query Probe
error in the output window (stderr), give an empty output, and exit
normally (no crash).

argv: PLUGIN DATA_DIR PVPYTHON, or, in the child, PLUGIN DATA_DIR --child
ROWS.npy INDEX_FILE."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa

import vic_pvtest as t

data_dir, extra = t.setup(globals())


def make_probe(feat, index_mode, path):
    src = t.source(np.zeros((len(feat), 3), np.float32), {"desc": feat})
    p = kNNQueryProbe(Input=src)
    p.UseFeatureArray = 1
    p.FeatureArray = ["POINTS", "desc"]
    p.IndexMethod = "NN-Descent Graph (approximate)"
    p.QueryMode = "Point Id"
    p.k = 10
    p.IndexFile = index_mode
    p.IndexFileName = path
    return p


def neighbours(p, pid):
    p.QueryPointId = pid
    p.UpdatePipeline()
    out = sm.Fetch(p)
    w = dsa.WrapDataObject(out)
    fd = out.GetFieldData()
    field = {fd.GetAbstractArray(i).GetName(): fd.GetAbstractArray(i).GetVariantValue(0).ToString()
             for i in range(fd.GetNumberOfArrays())}
    if out.GetNumberOfPoints() == 0:
        return None, None, field
    rank = np.asarray(w.PointData["Rank"])
    return np.asarray(w.PointData["Neighbor Id"])[rank >= 0], np.asarray(w.PointData["Distance"])[rank >= 0], field


if extra and extra[0] == "--child":
    # Load a (bad) file; the parent reads our stderr.  Reaching the end means no crash.
    feat = np.load(extra[1])
    ids, _, field = neighbours(make_probe(feat, "Load", extra[2]), 0)
    print("CHILD-DONE output points: %s" % (0 if ids is None else len(ids)))
    sys.exit(0)

if not extra:
    t.fail("usage: %s PLUGIN DATA_DIR PVPYTHON" % sys.argv[0])
pvpython = extra[0]
rng = np.random.default_rng(11)
n, d = 25000, 64
centres = rng.normal(0, 1, (30, d))
feat = (centres[rng.integers(0, 30, n)] + 0.4 * rng.normal(0, 1, (n, d))).astype(np.float32)
work = tempfile.mkdtemp(prefix="vic_probe_index_")
path = os.path.join(work, "desc.vicidx")
rows_file = os.path.join(work, "desc.npy")
np.save(rows_file, feat)

# Build and save, then load into a second probe: same answers, no build.
builder = make_probe(feat, "Build and Save", path)
pids = [0, 17, 4242, n - 1]
built = [neighbours(builder, pid) for pid in pids]
field = built[-1][2]
if not os.path.isfile(path) or int(field["Index Builds"]) != 1 or field["Index Method"] != "nndescent":
    t.fail("build and save: file %s, field %s" % (os.path.isfile(path), field))
print("saved %s (%d bytes) after one build" % (path, os.path.getsize(path)))
loader = make_probe(feat, "Load", path)
for pid, (ids_b, d_b, _) in zip(pids, built):
    ids_l, d_l, field = neighbours(loader, pid)
    if ids_l is None or not np.array_equal(ids_l, ids_b) or not np.array_equal(d_l, d_b):
        t.fail("point %d: loaded index gives %s, built index %s" % (pid, ids_l, ids_b))
if int(field["Index Loads"]) != 1 or int(field["Index Builds"]) != 0:
    t.fail("load: expected 1 load and no build, field %s" % field)
print("loaded index answers as the built one (4 point ids), Index Loads 1, Index Builds 0")


def child_load(name, index_file, rows, fragment):
    r = subprocess.run([pvpython, os.path.abspath(__file__), sys.argv[1], data_dir, "--child", rows, index_file],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or "CHILD-DONE output points: 0" not in r.stdout:
        t.fail("%s: the child did not finish cleanly with an empty output (rc %d)\nstdout: %s\nstderr: %s"
               % (name, r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
    lines = [line for line in r.stderr.splitlines() if "kNN Query Probe:" in line]
    if not any(fragment in line for line in lines):
        t.fail("%s: no 'kNN Query Probe: ...%s...' error in the output window; stderr:\n%s"
               % (name, fragment, r.stderr[-3000:]))
    message = re.sub(r"\x1b\[[0-9;]*m", "", lines[0].split("kNN Query Probe:", 1)[1]).strip()
    print("%s: %s" % (name, message))


raw = open(path, "rb").read()
corrupt = os.path.join(work, "corrupt.vicidx")
damaged = bytearray(raw)
for off in range(len(raw) // 2, len(raw) // 2 + 64):
    damaged[off] ^= 0x5A
open(corrupt, "wb").write(bytes(damaged))
child_load("payload bytes flipped", corrupt, rows_file, "is corrupt")

truncated = os.path.join(work, "truncated.vicidx")
open(truncated, "wb").write(raw[: len(raw) // 3])
child_load("truncated file", truncated, rows_file, "truncated")

not_index = os.path.join(work, "not_index.vicidx")
open(not_index, "wb").write(b"# not an index\n" * 20)
child_load("not an index", not_index, rows_file, "not a Vicinity index file")

other_rows = os.path.join(work, "other.npy")
other = feat.copy()
other[123, 5] += 1.0
np.save(other_rows, other)
child_load("saved for other rows", path, other_rows, "was built over different data")

child_load("missing file", os.path.join(work, "absent.vicidx"), rows_file, "cannot open")
shutil.rmtree(work)
print("PASS")
