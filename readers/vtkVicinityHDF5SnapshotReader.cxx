#include "vtkVicinityHDF5SnapshotReader.h"

#include "vic_snapshot.h"

#include <vtkObjectFactory.h>

vtkStandardNewMacro(vtkVicinityHDF5SnapshotReader);

bool vtkVicinityHDF5SnapshotReader::AcceptsFormat(int format) const
{
  return format == VSNAP_HDF5;
}
