#include "vtkVicinityLammpsDumpReader.h"

#include "vic_snapshot.h"

#include <vtkObjectFactory.h>

vtkStandardNewMacro(vtkVicinityLammpsDumpReader);

bool vtkVicinityLammpsDumpReader::AcceptsFormat(int format) const
{
  return format == VSNAP_LAMMPS;
}
