"""The Vicinity demo (pvbatch): kNN graph of an n-body system, saved and rendered.

    pvbatch demo.py --plugin Vicinity.so --out out/demo [--data file] [--k 16]

Without --data it generates the built-in data set (nbody_model.py: Plummer
spheres in a uniform background, about 1,000,000 particles).  --data reads
.npy (n x 3 points, or n x d feature rows), .csv (numeric columns, an
optional header line) or .vtp.  Writes knn.vtp and demo.png into --out and
prints a short summary.
"""
import argparse
import os
import sys
import time

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403  (pvbatch idiom)
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbody_model  # noqa: E402


def rows_to_polydata(rows):
    """Points from the first 3 columns (zero-padded); every column also as
    the point array 'features' when there are not exactly 3."""
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[0] < 2:
        sys.exit(f"demo: expected an n x d table with n >= 2, got shape {rows.shape}")
    xyz = np.zeros((rows.shape[0], 3), np.float32)
    xyz[:, :min(3, rows.shape[1])] = rows[:, :3]
    pd = dsa.WrapDataObject(vtkPolyData())
    pd.Points = xyz
    # One vertex cell per point, so that the points render.
    n = rows.shape[0]
    verts = vtkCellArray()
    verts.SetData(numpy_to_vtkIdTypeArray(np.arange(n + 1, dtype=np.int64), deep=True),
                  numpy_to_vtkIdTypeArray(np.arange(n, dtype=np.int64), deep=True))
    pd.VTKObject.SetVerts(verts)
    if rows.shape[1] != 3:
        pd.PointData.append(rows, "features")
    return pd.VTKObject, rows.shape[1] != 3


def load(path):
    ext = os.path.splitext(path)[1].lower()
    if ext == ".vtp":
        return XMLPolyDataReader(FileName=[path]), False
    if ext == ".npy":
        rows = np.load(path)
    elif ext == ".csv":
        with open(path) as f:
            first = f.readline()
        header = any(c.isalpha() and c not in "eE" for c in first)
        rows = np.loadtxt(path, delimiter=",", skiprows=1 if header else 0, ndmin=2)
    else:
        sys.exit(f"demo: unknown file type '{ext}' (use .npy, .csv or .vtp)")
    return producer(rows_to_polydata(rows)[0]), rows.ndim == 2 and rows.shape[1] != 3


def producer(data):
    tp = TrivialProducer()
    tp.GetClientSideObject().SetOutput(data)
    return tp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default="")
    ap.add_argument("--k", type=int, default=16)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    LoadPlugin(a.plugin, remote=False, ns=globals())

    t0 = time.time()
    if a.data:
        source, feature = load(a.data)
        name = a.data
    else:
        model = nbody_model.generate()
        pd, feature = rows_to_polydata(model.positions)
        name = "built-in n-body model (%d Plummer spheres + background)" % len(model.spheres)
        source = producer(pd)
    t_load = time.time() - t0

    knn = kNNGraph(Input=source)
    knn.k = a.k
    knn.GenerateGraph = 0  # n*k line cells are too many to draw for a million points
    if feature:
        knn.UseFeatureArray = 1
        knn.FeatureArray = ["POINTS", "features"]
    t1 = time.time()
    knn.UpdatePipeline()
    t_knn = time.time() - t1
    out = sm.Fetch(knn)
    n = out.GetNumberOfPoints()
    if n == 0:
        sys.exit("demo: the kNN Graph filter produced no output (see the error above)")

    fd = out.GetFieldData()
    def field(name):
        arr = fd.GetAbstractArray(name)
        return arr.GetVariantValue(0).ToString() if arr else "?"

    t2 = time.time()
    # DataMode Binary (inline base64): files with appended data do not read
    # back in Debian's ParaView 5.11 (its expat rejects them).
    SaveData(os.path.join(a.out, "knn.vtp"), proxy=knn, CompressorType="LZ4", DataMode="Binary")
    t_save = time.time() - t2

    # Colour by the log10 kNN number density ~ k / r_k^3 (r_k: distance to
    # the k-th neighbour; smoother than 1/d_nn1^3).  The picture is the
    # projection onto the x-y plane with the points drawn in ascending
    # density: at equal depth the later (denser) point wins, so dense cores
    # are not hidden behind the background in front of them.
    wrapped = dsa.WrapDataObject(out)
    dist = np.asarray(wrapped.PointData["Neighbor Distances"]).reshape(n, -1)
    kk = dist.shape[1]
    logd = np.log10(kk / np.maximum(dist[:, -1], 1e-12) ** 3)
    order = np.argsort(logd, kind="stable")
    xyz = np.array(wrapped.Points)[order]
    xyz[:, 2] = 0.0
    shown, _ = rows_to_polydata(xyz)
    title = "log10 kNN density (k/r_k^3)"
    dsa.WrapDataObject(shown).PointData.append(logd[order].astype(np.float32), title)
    dens = producer(shown)

    view = CreateView("RenderView")
    view.ViewSize = [1200, 900]
    view.OrientationAxesVisibility = 0
    view.Background = [0.05, 0.05, 0.08]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    disp = Show(dens, view)
    disp.SetRepresentationType("Points")
    disp.PointSize = 1
    ColorBy(disp, ("POINTS", title))
    lut = GetColorTransferFunction(title)
    lut.ApplyPreset("Inferno (matplotlib)", True)
    lut.RescaleTransferFunction(float(np.percentile(logd, 2)), float(np.percentile(logd, 99.95)))
    lut.AutomaticRescaleRangeMode = "Never"
    disp.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
    view.CameraPosition = [50.0, 50.0, 300.0]
    view.CameraFocalPoint = [50.0, 50.0, 0.0]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    view.CameraParallelProjection = 1
    view.ResetCamera()
    view.CameraParallelScale = 0.55 * nbody_model.BOX if not a.data else view.CameraParallelScale
    t3 = time.time()
    SaveScreenshot(os.path.join(a.out, "demo.png"), view, ImageResolution=[1200, 900])
    t_render = time.time() - t3

    print("Vicinity demo")
    print(f"  data      {name}")
    print(f"  n         {n}")
    print(f"  k         {field('k')}")
    print(f"  method    {field('Method')} ({field('Method Reason')})")
    print(f"  backend   {field('Backend')}")
    print(f"  seconds   kNN {float(field('Seconds Total')):.2f} (filter {t_knn:.2f}), "
          f"load {t_load:.2f}, save {t_save:.2f}, render {t_render:.2f}")
    print(f"  recall    {field('Recall Estimate')} (estimated on {field('Recall Sample')} points; 1 = exact)")
    print(f"  d_nn1     mean {float(field('d_nn1 Mean')):.4g}, max {float(field('d_nn1 Max')):.4g}")
    print(f"  wrote     {os.path.join(a.out, 'knn.vtp')}, {os.path.join(a.out, 'demo.png')}")


if __name__ == "__main__":
    main()
