"""Shared helpers of the pvpython/pvbatch tests: argument handling, the skip
convention (exit 77 with a reason), the optional real data files, numpy
rows -> a pipeline source, and reading the filter's output back as numpy
arrays."""
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import LoadPlugin, TrivialProducer
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

SKIP = 77


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def setup(ns):
    """argv: PLUGIN DATA_DIR [extra...].  Loads the plugin into ns and
    returns (data_dir, extra args)."""
    if len(sys.argv) < 3:
        fail("usage: %s PLUGIN DATA_DIR [...]" % sys.argv[0])
    plugin, data_dir = sys.argv[1], sys.argv[2]
    if not os.path.isfile(plugin):
        fail("plugin not found: " + plugin)
    LoadPlugin(plugin, remote=False, ns=ns)
    return data_dir, sys.argv[3:]


def extra_data_file(data_dir, relative):
    """The path of a real data file for a test's additional checks, or
    None (with a note) when the data folder lacks it: every test makes its
    own data for its main checks and never skips for want of these."""
    path = os.path.join(data_dir, relative)
    if not os.path.isfile(path):
        print("%s absent (set VICINITY_DATA_DIR): the real-data checks skipped" % path)
        return None
    return path


def polydata(xyz, arrays=None):
    pd = dsa.WrapDataObject(vtkPolyData())
    pd.Points = np.ascontiguousarray(xyz, dtype=np.float32)
    # One vertex cell per point: renderers and cell-based filters (e.g.
    # Redistribute DataSet) ignore points that no cell uses.
    n = len(xyz)
    verts = vtkCellArray()
    verts.SetData(numpy_to_vtkIdTypeArray(np.arange(n + 1, dtype=np.int64), deep=True),
                  numpy_to_vtkIdTypeArray(np.arange(n, dtype=np.int64), deep=True))
    pd.VTKObject.SetVerts(verts)
    for name, values in (arrays or {}).items():
        pd.PointData.append(np.ascontiguousarray(values), name)
    return pd.VTKObject


def update_caught(proxy):
    """Updates proxy with VTK's messages caught while it runs (pvpython
    prints them through the output window too); returns them."""
    from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow
    shown = vtkOutputWindow.GetInstance()
    shown.Register(None)
    messages = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(messages)
    try:
        proxy.UpdatePipeline()
    finally:
        vtkOutputWindow.SetInstance(shown)
        shown.UnRegister(None)
    return messages.GetOutput()


def write_pieces(workdir, pvtp, pieces):
    """Writes every piece, (file name, xyz, arrays or None), as a .vtp in
    workdir and the .pvtp named pvtp that lists them, its point-data
    entries from the pieces' arrays (the same names and types in each).
    Binary .vtp, inline base64: appended data trips Debian's expat (see
    README).  Fails the test when a piece cannot be written."""
    from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter
    entries, arrays = "", {}
    for name, xyz, piece_arrays in pieces:
        w = vtkXMLPolyDataWriter()
        w.SetInputData(polydata(xyz, piece_arrays))
        w.SetFileName(os.path.join(workdir, name))
        w.SetDataModeToBinary()
        if not w.Write():
            fail("could not write " + name)
        entries += '    <Piece Source="%s"/>\n' % name
        arrays = piece_arrays or {}
    point_data = ""
    if arrays:
        types = {np.dtype(np.float32): "Float32", np.dtype(np.float64): "Float64"}
        point_data = "    <PPointData>\n"
        for name, values in arrays.items():
            values = np.asarray(values)
            width = ' NumberOfComponents="%d"' % values.shape[1] if values.ndim > 1 else ""
            point_data += '      <PDataArray type="%s" Name="%s"%s/>\n' % (types[values.dtype], name, width)
        point_data += "    </PPointData>\n"
    with open(os.path.join(workdir, pvtp), "w") as f:
        f.write('<?xml version="1.0"?>\n'
                '<VTKFile type="PPolyData" version="0.1" byte_order="LittleEndian" header_type="UInt32">\n'
                '  <PPolyData GhostLevel="0">\n' + point_data +
                '    <PPoints><PDataArray type="Float32" NumberOfComponents="3"/></PPoints>\n' + entries +
                '  </PPolyData>\n'
                '</VTKFile>\n')


def source(xyz, arrays=None):
    """A pipeline source holding the points (builtin session only)."""
    tp = TrivialProducer()
    tp.GetClientSideObject().SetOutput(polydata(xyz, arrays))
    return tp


def knn_arrays(proxy):
    """(ids, dist, field) of the filter's port 0 as numpy arrays; field maps
    names to the first value of each field-data array."""
    out = sm.Fetch(proxy)
    w = dsa.WrapDataObject(out)
    if out.GetNumberOfPoints() == 0:
        return None, None, {}
    ids = np.asarray(w.PointData["Neighbor Ids"])
    dist = np.asarray(w.PointData["Neighbor Distances"])
    fd = out.GetFieldData()
    field = {}
    for i in range(fd.GetNumberOfArrays()):
        a = fd.GetAbstractArray(i)
        field[a.GetName()] = a.GetVariantValue(0).ToString()
    return ids.reshape(out.GetNumberOfPoints(), -1), dist.reshape(out.GetNumberOfPoints(), -1), field


def mismatches_beyond_ties(xyz, got_ids, ref_ids, rel=1e-5):
    """Rows whose ids differ from the reference other than by ties: every
    differing entry must sit at the reference's distance (float64)."""
    x = np.asarray(xyz, dtype=np.float64)
    bad = []
    for i in np.nonzero((got_ids != ref_ids).any(axis=1))[0]:
        dg = np.linalg.norm(x[got_ids[i]] - x[i], axis=1)
        dr = np.linalg.norm(x[ref_ids[i]] - x[i], axis=1)
        if not np.allclose(np.sort(dg), np.sort(dr), rtol=rel, atol=1e-7):
            bad.append(int(i))
    return bad
