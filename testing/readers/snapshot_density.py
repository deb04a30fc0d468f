# Density of a particle snapshot in the periodic box the file declares.
# pvpython snapshot_density.py SNAPSHOT   (Gadget 1/2, HDF5 or a LAMMPS dump)
import sys
from paraview.simple import *
LoadPlugin("build/lib/paraview-5.11/plugins/Vicinity/Vicinity.so", remote=False, ns=globals())
snapshot = OpenDataFile(sys.argv[1])     # picks the Vicinity reader for the format
density = kNNDensity(Input=snapshot)
density.k = 32
density.PeriodicBox = 1                  # Use Box From Data (on) takes the file's BoxSize
density.UseMassArray = 1
density.MassArray = ["POINTS", "Mass"]
density.UpdatePipeline()
out = servermanager.Fetch(density)
box = out.GetFieldData().GetArray("BoxSize").GetTuple3(0)
rho = out.GetPointData().GetArray("Density")
print("particles %d, box %g x %g x %g" % ((out.GetNumberOfPoints(),) + box))
print("density min %.4g, max %.4g" % rho.GetRange())
