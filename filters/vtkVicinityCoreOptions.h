// The core's build options from a filter's vtkVicinityBuildOptions (a
// private header: vicinity.h stays out of the filters' public headers).
#ifndef vtkVicinityCoreOptions_h
#define vtkVicinityCoreOptions_h

#include "vicinity.h"

class vtkVicinityBuildOptions;

namespace vtkVicinity
{
// vic_build_options with the object's fields, the filter's method and k,
// the rest at the core's defaults.  A null object gives the defaults.
vic_build_options CoreBuildOptions(vtkVicinityBuildOptions* options, int method, int k);
// Whether two sets of options build the same index: every field but k
// and recall_sample, which only the kNN lists read (a search's k must
// never reach into the build).
bool SameIndexBuild(const vic_build_options& a, const vic_build_options& b);
} // namespace vtkVicinity

#endif
