// How Salient Points presents the core's halo catalogue (vic_halos): the
// catalogue's columns on the peak output and the radial profiles as rows
// of one table.  Presentation only; the numbers are the core's.
#ifndef vtkVicinityHaloOutputs_h
#define vtkVicinityHaloOutputs_h

#include "vicinity.h"

#include <vtkType.h>

class vtkPolyData;
class vtkTable;

namespace vtkVicinity
{
// One value per peak on `peaks` (n_peaks points, by the peaks' order):
// "Halo Id" (-1: the peak is no halo), "Halo Members", "Halo Mass",
// "R_Delta", "M_Delta", "Half-Mass Radius", "Centre Of Mass", "Bulk
// Velocity", "Velocity Dispersion", "Unbound" (NaN, 0 or -1 for peaks that
// are no halo; NaN velocities without a velocity array).
void AddHaloColumns(const vic_halos& halos, vtkIdType nPeaks, vtkPolyData* peaks);

// The profiles as rows of `table` (created with the columns when empty):
// "Block" (the composite leaf, 0 for a data set), "Halo", "Bin",
// "Radius", "Radius / R_Delta", "Density", "Count"; a halo's rows in
// ascending radius.
void AppendProfiles(const vic_halos& halos, vtkIdType block, vtkTable* table);
} // namespace vtkVicinity

#endif
