"""The Vicinity demo (pvbatch): density and density peaks of an n-body
system from kNN lists, saved and rendered.

    pvbatch demo.py --plugin Vicinity.so --out out/demo [--data file] [--k 32] [--scale 1]

Without --data it generates the built-in data set (nbody_model.py: Plummer
spheres in a uniform background, about 1,000,000 particles).  --data reads
.npy (n x 3 points, or n x d feature rows), .csv (numeric columns, an
optional header line) or .vtp.  The pipeline is kNN Density -> Salient
Points; writes particles.vtp (the particles with the arrays of both
filters), peaks.vtp (one point per peak) and demo.png into --out, and
SPH Resample's surface density beside it (surface_density.png,
demo_pair.png), and
prints a summary -- for the built-in model with the peaks found against
the centres it planted.  (The kNN Graph filter is left out: each filter
builds its own kNN lists, and a third build of a million lists would
make the demo half again as slow on two cores.)
"""
import argparse
import os
import sys
import time

import numpy as np
from paraview.simple import *  # noqa: F401,F403  (pvbatch idiom)
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbody_model  # noqa: E402


def rows_to_polydata(rows, least=2):
    """Points from the first 3 columns (zero-padded); every column also as
    the point array 'features' when there are not exactly 3."""
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[0] < least:
        sys.exit(f"demo: expected an n x d table with n >= {least}, got shape {rows.shape}")
    xyz = np.zeros((rows.shape[0], 3), np.float32)
    xyz[:, :min(3, rows.shape[1])] = rows[:, :3]
    pd = dsa.WrapDataObject(vtkPolyData())
    points = vtkPoints()
    points.SetData(vtk_copy(xyz))
    pd.VTKObject.SetPoints(points)
    # One vertex cell per point, so that the points render.
    n = rows.shape[0]
    verts = vtkCellArray()
    verts.SetData(numpy_to_vtkIdTypeArray(np.arange(n + 1, dtype=np.int64), deep=True),
                  numpy_to_vtkIdTypeArray(np.arange(n, dtype=np.int64), deep=True))
    pd.VTKObject.SetVerts(verts)
    if rows.shape[1] != 3:
        pd.VTKObject.GetPointData().AddArray(vtk_copy(rows, "features"))
    return pd.VTKObject, rows.shape[1] != 3


def vtk_copy(values, name=None):
    """A VTK array that owns a copy of the values.  numpy_to_vtk without
    deep (and dsa's assignments) leave the VTK array pointing into the
    numpy buffer, kept alive only by an attribute of the array's Python
    wrapper; what is drawn must not depend on that bookkeeping."""
    arr = numpy_to_vtk(np.ascontiguousarray(values), deep=1)
    if name:
        arr.SetName(name)
    return arr


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


def surface_density_picture(dens, particle_view, out_dir, resolution=800):
    """SPH Resample on kNN Density's output: the surface density (projection
    along z over the data's bounds, each particle with its own smoothing
    length), shown in a view beside the particle picture.  Writes
    surface_density.png (the map alone) and demo_pair.png (particles |
    map); returns (seconds, mass deposited, map size)."""
    sph = SPHResample(Input=dens)
    sph.SmoothingLengthArray = ["POINTS", "Smoothing Length"]
    sph.Resolution = [resolution, resolution, 1]
    t = time.time()
    sph.UpdatePipeline()
    seconds = time.time() - t
    image = sph.GetClientSideObject().GetOutputDataObject(0)
    sigma = np.asarray(dsa.WrapDataObject(image).PointData["Surface Density"], dtype=np.float64)
    if sigma.size == 0:
        sys.exit("demo: SPH Resample produced no map (see the error above)")
    spacing = image.GetSpacing()
    deposited = float(sigma.sum()) * spacing[0] * spacing[1]
    # log10 of the surface density, the empty pixels at the floor of the colour range
    positive = sigma[sigma > 0]
    floor = float(np.percentile(positive, 1)) if positive.size else 1.0
    log_sigma = np.log10(np.maximum(sigma, floor)).astype(np.float32)
    title = "log10 surface density (SPH Resample)"
    dsa.WrapDataObject(image).PointData.append(log_sigma, title)
    shown = producer(image)
    view = CreateView("RenderView")
    view.ViewSize = list(particle_view.ViewSize)
    view.OrientationAxesVisibility = 0
    view.Background = [0.05, 0.05, 0.08]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    disp = Show(shown, view)
    disp.SetRepresentationType("Slice")
    ColorBy(disp, ("POINTS", title))
    lut = GetColorTransferFunction(title)
    lut.ApplyPreset("Inferno (matplotlib)", True)
    # from a tenth of the typical (background) column up: the kernels' tails
    # beyond the box's faces stay dark and the cores keep the contrast
    lut.RescaleTransferFunction(float(np.median(log_sigma)) - 1.0, float(np.percentile(log_sigma, 99.99)))
    lut.AutomaticRescaleRangeMode = "Never"
    disp.SetScalarBarVisibility(view, True)
    GetScalarBar(lut, view).Title = title
    GetScalarBar(lut, view).ComponentTitle = ""
    for prop in ("CameraPosition", "CameraFocalPoint", "CameraViewUp", "CameraParallelProjection",
                 "CameraParallelScale"):
        setattr(view, prop, getattr(particle_view, prop))
    size = list(particle_view.ViewSize)
    SaveScreenshot(os.path.join(out_dir, "surface_density.png"), view, ImageResolution=size)
    layout = CreateLayout("particles and surface density")
    layout.SplitHorizontal(0, 0.5)
    layout.AssignView(1, particle_view)
    layout.AssignView(2, view)
    SaveScreenshot(os.path.join(out_dir, "demo_pair.png"), layout, ImageResolution=[2 * size[0], size[1]])
    return seconds, deposited, image.GetDimensions()[:2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default="")
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="built-in model only: fraction of its particles (a quick run for tests)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    LoadPlugin(a.plugin, remote=False, ns=globals())

    t0 = time.time()
    if a.data:
        source, feature = load(a.data)
        name = a.data
    else:
        model = nbody_model.generate(scale_count=a.scale)
        pd, feature = rows_to_polydata(model.positions)
        name = "built-in n-body model (%d Plummer spheres + background)" % len(model.spheres)
        source = producer(pd)
    t_load = time.time() - t0

    # The pipeline: kNN Density (colour) -> Salient Points (peaks); their
    # arrays accumulate on the particles.
    dens = kNNDensity(Input=source)
    dens.k = a.k
    peaks = SalientPoints(Input=dens)
    peaks.k = a.k
    for f in (dens, peaks):
        if feature:
            f.UseFeatureArray = 1
            f.FeatureArray = ["POINTS", "features"]
    times = {}
    for label, f in (("density", dens), ("peaks", peaks)):
        t = time.time()
        f.UpdatePipeline()
        times[label] = time.time() - t
    # The builtin session's own objects: no copy of a million points.
    outputs = {label: f.GetClientSideObject().GetOutputDataObject(0)
               for label, f in (("density", dens), ("peaks", peaks))}
    out = outputs["peaks"]
    n = out.GetNumberOfPoints()
    if n == 0 or not out.GetPointData().GetArray("Peak Id"):
        sys.exit("demo: the Vicinity filters produced no output (see the error above)")
    found = dsa.WrapDataObject(peaks.GetClientSideObject().GetOutputDataObject(1))

    def field(label, name):
        arr = outputs[label].GetFieldData().GetAbstractArray(name)
        return arr.GetVariantValue(0).ToString() if arr else "?"

    t2 = time.time()
    # DataMode Binary (inline base64): files with appended data do not read
    # back in Debian's ParaView 5.11 (its expat rejects them).
    SaveData(os.path.join(a.out, "particles.vtp"), proxy=peaks, CompressorType="LZ4", DataMode="Binary")
    SaveData(os.path.join(a.out, "peaks.vtp"), proxy=OutputPort(peaks, 1), DataMode="Binary")
    t_save = time.time() - t2

    # Colour by log10 of the kNN Density filter's "Density".  The picture
    # is the projection onto the x-y plane with the points drawn in
    # ascending density: at equal depth the later (denser) point wins, so
    # dense cores are not hidden behind the background in front of them.
    wrapped = dsa.WrapDataObject(outputs["density"])
    logd = np.log10(np.maximum(np.asarray(wrapped.PointData["Density"], dtype=np.float64), 1e-30))
    order = np.argsort(logd, kind="stable")
    xyz = np.array(wrapped.Points)[order]
    xyz[:, 2] = 0.0
    shown, _ = rows_to_polydata(xyz)
    title = "log10 kNN density (k = %d)" % a.k
    shown.GetPointData().AddArray(vtk_copy(logd[order].astype(np.float32), title))
    dens_shown = producer(shown)
    # The peaks as spheres above the plane (the camera looks down -z),
    # every one of them, even a single peak.  Lifted by a few marker radii
    # (a 14-pixel sphere is about 1 unit across at the built-in model's
    # zoom) so that no particle of the plane can cover a marker.
    centres = np.array(found.Points, dtype=np.float32).reshape(-1, 3)
    lifted = centres.copy()
    span = float(np.ptp(xyz[:, :2], axis=0).max()) if len(xyz) else 1.0
    lifted[:, 2] = 0.02 * span if span > 0 else 1.0
    peak_shown = producer(rows_to_polydata(lifted, least=1)[0]) if len(lifted) >= 1 else None

    view = CreateView("RenderView")
    view.ViewSize = [1200, 900]
    view.OrientationAxesVisibility = 0
    view.Background = [0.05, 0.05, 0.08]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    disp = Show(dens_shown, view)
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
    if peak_shown is not None:
        pdisp = Show(peak_shown, view)
        pdisp.SetRepresentationType("Points")
        pdisp.ColorArrayName = ["POINTS", ""]  # a solid colour
        pdisp.AmbientColor = pdisp.DiffuseColor = [0.2, 0.9, 1.0]
        pdisp.RenderPointsAsSpheres = 1
        pdisp.PointSize = 14
        legend = Text(Text="cyan: %d density peaks (Salient Points, centre of each peak's core)" % len(centres))
        ldisp = Show(legend, view)
        ldisp.WindowLocation = "Upper Left Corner"
        ldisp.FontSize = 20
        ldisp.Color = [0.2, 0.9, 1.0]
    view.CameraPosition = [50.0, 50.0, 300.0]
    view.CameraFocalPoint = [50.0, 50.0, 0.0]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    view.CameraParallelProjection = 1
    view.ResetCamera()
    view.CameraParallelScale = 0.55 * nbody_model.BOX if not a.data else view.CameraParallelScale
    t3 = time.time()
    SaveScreenshot(os.path.join(a.out, "demo.png"), view, ImageResolution=[1200, 900])
    t_render = time.time() - t3
    sph_seconds, sph_mass, sph_dims = surface_density_picture(dens, view, a.out)

    print("Vicinity demo")
    print(f"  data      {name}")
    print(f"  n         {n}")
    print(f"  kNN lists k {field('density', 'k')}, {field('density', 'Method')} "
          f"({field('density', 'Method Reason')}), backend {field('density', 'Backend')}")
    print(f"  density   "
          f"d_nn1 mean {float(field('density', 'd_nn1 Mean')):.4g}, max {float(field('density', 'd_nn1 Max')):.4g}; "
          f"global density {float(field('density', 'Global Density')):.4g}")
    def stage(label, name):
        value = field(label, "Seconds " + name)
        return f"{float(value):.2f}" if value != "?" else "?"

    # Salient Points makes lists, density and peaks in one core call for
    # exact grid lists: its report's stages say where that call's time went.
    print(f"  seconds   kNN Density {times['density']:.2f} (lists {stage('density', 'Total')}, "
          f"density {stage('density', 'Density')}), "
          f"Salient Points {times['peaks']:.2f} (one call {stage('peaks', 'Total')}: lists {stage('peaks', 'grid')}, "
          f"peaks {stage('peaks', 'peaks')}); "
          f"load {t_load:.2f}, save {t_save:.2f}, render {t_render:.2f}")
    print(f"  peaks     {len(centres)} found (Salient Points, k {field('peaks', 'k')})")
    members = np.asarray(found.PointData["Member Count"]) if len(centres) else []
    rho = np.asarray(found.PointData["Density"]) if len(centres) else []
    for p in range(min(len(centres), 12)):
        c = centres[p]
        print(f"    peak {p:2d}  ({c[0]:7.2f}, {c[1]:7.2f}, {c[2]:7.2f})  density {rho[p]:9.4g}  "
              f"members {int(members[p]):7d}")
    if not a.data:
        print("  planted   sphere  centre                      scale a  nearest peak  distance")
        for i, s in enumerate(nbody_model.SPHERES):
            d = np.linalg.norm(centres - np.asarray(s.centre, np.float32), axis=1) if len(centres) else [np.inf]
            j = int(np.argmin(d))
            print(f"            {i}       ({s.centre[0]:5.1f}, {s.centre[1]:5.1f}, {s.centre[2]:5.1f})"
                  f"     {s.scale:4.1f}     {j:2d}            {d[j] / s.scale:.3f} a")
    print(f"  surface   SPH Resample {sph_dims[0]} x {sph_dims[1]} projection along z in {sph_seconds:.2f} s; "
          f"it holds mass {sph_mass:.1f} of the particles' {n}")
    print(f"  wrote     {os.path.join(a.out, 'particles.vtp')}, {os.path.join(a.out, 'peaks.vtp')}, "
          f"{os.path.join(a.out, 'demo.png')}, {os.path.join(a.out, 'surface_density.png')}, "
          f"{os.path.join(a.out, 'demo_pair.png')}")


if __name__ == "__main__":
    main()
