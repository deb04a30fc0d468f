"""Counts the peak markers visible in the demo's picture: the connected
blobs of the markers' cyan, which no colour of the density map (Inferno)
comes near, below the legend line.

    pvpython count_markers.py demo.png      prints one line per blob and
                                            "markers N" last
"""
import os
import sys

import numpy as np
from scipy import ndimage
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOImage import vtkPNGReader

LEGEND_ROWS = 50   # the cyan legend text sits in the top rows (font size 20)
MIN_AREA = 30      # pixels: a marker is drawn 14 pixels wide


def read_rgb(path):
    if not os.path.isfile(path):
        sys.exit("count_markers: no picture at %s" % path)
    r = vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    nx, ny, _ = img.GetDimensions()
    if nx * ny == 0 or img.GetNumberOfScalarComponents() < 3:
        sys.exit("count_markers: cannot read %s" % path)
    rgb = vtk_to_numpy(img.GetPointData().GetScalars()).reshape(ny, nx, -1)[:, :, :3]
    return rgb[::-1].astype(np.int32)  # VTK's first row is the bottom one


def marker_blobs(rgb):
    """(centre row, centre column, area) of each cyan blob.  The shaded
    sphere runs from (20, 90, 100) at its rim to (50, 225, 235) at its
    highlight: green and blue far above red.  Inferno's colours all have
    red at or above green or blue."""
    r, g, b = rgb[:, :, 0], rgb[:, :, 1], rgb[:, :, 2]
    cyan = (g > 60) & (b > 60) & (g > 2 * r) & (b > 2 * r)
    cyan[:LEGEND_ROWS] = False
    labels, n = ndimage.label(cyan, structure=np.ones((3, 3)))
    blobs = []
    for i, s in enumerate(ndimage.find_objects(labels), start=1):
        area = int((labels[s] == i).sum())
        if area >= MIN_AREA:
            blobs.append(((s[0].start + s[0].stop - 1) / 2.0, (s[1].start + s[1].stop - 1) / 2.0, area))
    return blobs


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: pvpython count_markers.py PICTURE.png")
    found = marker_blobs(read_rgb(sys.argv[1]))
    for row, col, area in found:
        print("marker at row %.0f, column %.0f: %d pixels" % (row, col, area))
    print("markers %d" % len(found))
