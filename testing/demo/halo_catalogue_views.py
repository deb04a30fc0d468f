"""Salient Points' halo catalogue on planted NFW halos (testing/python/
planted_halos.py) as a user sees it: the catalogue (output port 1) in a
spreadsheet view, the radial density profiles (port 2) in a Line Chart
View (one series per halo: Table To Points, Convert To Point Cloud, then
Threshold on Halo), and
the particles coloured by log density with the peaks as spheres.

In the GUI (a spreadsheet view renders only there) the three views share
one layout; testing/demo/run_halo_gui_shots.sh starts it under Xvfb and
grabs the screen (grab_screen.py).
or without the spreadsheet under pvbatch:
  xvfb-run -a pvbatch testing/demo/halo_catalogue_views.py PLUGIN OUTDIR
It writes OUTDIR/halo_catalogue_spreadsheet.png (GUI only),
halo_profiles_linechart.png and halo_render.png, and prints what it shows."""
import os
import sys

from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.numpy_interface import dataset_adapter as dsa

try:
    here = os.path.dirname(os.path.abspath(__file__))
except NameError:  # the GUI runs scripts without __file__
    here = os.environ["VIC_DEMO_DIR"]
sys.path.insert(0, os.path.join(here, "..", "python"))
import planted_halos  # noqa: E402
import vic_pvtest as t  # noqa: E402

if len(sys.argv) > 2:
    plugin, out = sys.argv[1], sys.argv[2]
else:
    plugin, out = os.environ["VIC_PLUGIN"], os.environ["VIC_OUT"]
os.makedirs(out, exist_ok=True)
LoadPlugin(plugin, remote=False, ns=globals())
model = planted_halos.generate()
src = t.source(model.positions, {"velocity": model.velocities})
RenameSource("planted halos", src)
halos = SalientPoints(Input=src)
halos.PeriodicBox = 1
halos.BoxLengths = [1, 1, 1]
halos.UseVelocityArray = 1
halos.VelocityArray = ["POINTS", "velocity"]
halos.RemoveUnbound = 1
halos.UpdatePipeline()
RenameSource("Salient Points", halos)

# The catalogue: port 1 in a spreadsheet, halo columns first.
gui = sm.vtkProcessModule.GetProcessType() == sm.vtkProcessModule.PROCESS_CLIENT
if gui:  # one layout: the catalogue on top, the profiles and the render view below
    layout = CreateLayout("Halo catalogue")
    layout.SplitVertical(0, 0.36)
    layout.SplitHorizontal(2, 0.5)
sheet = CreateView("SpreadSheetView")
if gui:
    AssignViewToLayout(sheet, layout, 1)
sheet.ViewSize = [1500, 260]
Show(OutputPort(halos, 1), sheet)
sheet.FieldAssociation = "Point Data"
sheet.HiddenColumnLabels = ["Point ID", "Peak Particle Position", "Peak Particle Position_Magnitude", "Point Id",
                            "Delta", "Saliency", "Points", "Points_Magnitude", "Bulk Velocity",
                            "Bulk Velocity_Magnitude", "Centre Of Mass_Magnitude", "Unbound", "Density"]
sheet.ColumnToSort = "Peak Id"
Render(sheet)
# (GUI: halo_catalogue_defaults.py saves it once the window is up)

# The profiles: one series per halo against radius, log axes.
chart = CreateView("XYChartView")
chart.ViewSize = [900, 600]
points = TableToPoints(Input=OutputPort(halos, 2))
points.XColumn = "Radius"
points.YColumn = "Density"
points.ZColumn = "Halo"
points.KeepAllDataArrays = 1
# Table To Points makes one poly-vertex of all rows; Threshold keeps a cell
# only when all its points pass, so each row becomes its own vertex first.
cloud = ConvertToPointCloud(Input=points)
cloud.CellGenerationMode = "Vertex cells"
colours = [[0.85, 0.1, 0.1], [0.1, 0.45, 0.85], [0.1, 0.6, 0.2]]
for h in range(3):
    one = Threshold(Input=cloud)
    one.Scalars = ["POINTS", "Halo"]
    one.LowerThreshold = h
    one.UpperThreshold = h
    RenameSource("Halo %d profile" % h, one)
    one.UpdatePipeline()
    d = Show(one, chart)
    d.UseIndexForXAxis = 0
    d.XArrayName = "Radius"
    d.SeriesVisibility = ["Density"]
    d.SeriesLabel = ["Density", "halo %d" % h]
    d.SeriesColor = ["Density"] + [str(c) for c in colours[h]]
    d.SeriesLineThickness = ["Density", "2"]
chart.LeftAxisLogScale = 1
chart.BottomAxisLogScale = 1
chart.LeftAxisTitle = "density (particles per unit volume)"
chart.BottomAxisTitle = "radius (box units)"
chart.ChartTitle = "Radial density profiles of the three halos (Salient Points, port 2)"
if gui:
    AssignViewToLayout(chart, layout, 5)
Render(chart)
if not gui:
    SaveScreenshot(os.path.join(out, "halo_profiles_linechart.png"), chart, ImageResolution=[900, 600])

# The render view: defaults as the plugin sets them (density colouring,
# peaks' representation from the XML hint).
view = CreateView("RenderView")
if gui:
    AssignViewToLayout(view, layout, 6)
view.ViewSize = [800, 800]
parts = Show(OutputPort(halos, 0), view)
peaks = Show(OutputPort(halos, 1), view)
if not gui:  # in the GUI the plugin's display defaults apply once the event loop runs: halo_catalogue_defaults.py
    lut = GetColorTransferFunction("Density")
    print("defaults: particles %s coloured by %s (log scale %d), peaks %s of radius %g" % (
        parts.Representation, parts.ColorArrayName[1], lut.UseLogScale, peaks.Representation, peaks.GaussianRadius))
    parts.Representation = "Points"
    rng = dsa.WrapDataObject(sm.Fetch(halos, idx=0)).PointData["Density"]
    lut.RescaleTransferFunction(float(rng.min()), float(rng.max()))
    parts.SetScalarBarVisibility(view, True)
    peaks.AmbientColor = peaks.DiffuseColor = [0.2, 0.9, 1.0]
    ColorBy(peaks, None)
    view.ResetCamera()
    Render(view)
    SaveScreenshot(os.path.join(out, "halo_render.png"), view, ImageResolution=[800, 800])

else:
    parts.SetScalarBarVisibility(view, True)  # shows the plugin's log scale once it applies
    view.ResetCamera()
    Render(chart)
    Render(view)

cat = dsa.WrapDataObject(sm.Fetch(halos, idx=1))
print("catalogue: %d rows; R_Delta %s; M_Delta %s" % (cat.GetNumberOfPoints(), list(cat.PointData["R_Delta"]),
                                                     list(cat.PointData["M_Delta"])))
