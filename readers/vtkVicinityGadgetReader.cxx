#include "vtkVicinityGadgetReader.h"

#include "vic_snapshot.h"

#include <vtkObjectFactory.h>

vtkStandardNewMacro(vtkVicinityGadgetReader);

bool vtkVicinityGadgetReader::AcceptsFormat(int format) const
{
  return format == VSNAP_GADGET1 || format == VSNAP_GADGET2;
}
