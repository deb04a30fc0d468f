// The pipeline passes every Vicinity filter shares: output types that
// mirror the input, one core context per execution, composite inputs leaf
// by leaf on one progress bar, and the switch to a filter's distributed
// path under MPI with several processes (one GPU per rank).
#ifndef vtkVicinityPipeline_h
#define vtkVicinityPipeline_h

#include "vicinity.h"
#include "vtkVicinityContext.h"

#include <vtkSmartPointer.h>
#include <vtkType.h>

#include <functional>

class vtkAlgorithm;
class vtkObject;
class vtkVicinityBuildOptions;
class vtkDataSet;
class vtkInformationVector;
class vtkPolyData;

namespace vtkVicinity
{

// RequestDataObject of the Vicinity filters: port 0 has the input's type;
// ports 1 .. ports-1 are vtkPolyData, or the input's composite type when
// the input is a composite (one poly data per leaf).  pointCloudUnderMPI:
// in a run with several MPI processes a data-set input's port 0 is the
// rank's owned point cloud (vtkPolyData), as the points are redistributed.
int MirrorOutputs(vtkInformationVector** inputVector, vtkInformationVector* outputVector, int ports,
  bool pointCloudUnderMPI = false);

struct ContextSettings
{
  vic_backend Backend = VIC_BACKEND_AUTO;
  int Device = 0;
  int Devices = 1; // GPUs from Device on (vic_ctx_options.devices); one per rank under MPI
  int Threads = 0;
  uint64_t Seed = 0;
};

// One filter's work on one data set: its port-0 output arrives as a
// shallow copy of the input, `extra` is the port-1 poly data (nullptr for
// one-port filters).  False after reporting an error.
using LeafFunction =
  std::function<bool(Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* extra)>;

// RequestData of the Vicinity filters: the input type check, one core
// context, then `process` on the data set or on every leaf of a composite
// input (each leaf its own point set) on one progress bar.  Inputs without
// points give empty outputs and no message.
// With several MPI processes (collective from the first line, before any
// early return): `distributed` runs on every rank, those without points
// included (the MPI glue of vtkVicinityDistributedPoints.h needs them all),
// and the context takes the rank's GPU (DeviceForRank).  Composite inputs
// across ranks, or a filter without `distributed`, are refused clearly.
int ProcessInput(vtkAlgorithm* self, const char* label, const ContextSettings& settings,
  vtkInformationVector** inputVector, vtkInformationVector* outputVector, int ports,
  const LeafFunction& process, const LeafFunction& distributed = nullptr);


// Devices the context can open: the core says whether a given ordinal is
// usable (0 in CPU builds), the filters never talk to CUDA themselves.
int UsableDevices();
// Number of MPI ranks whose piece holds points (a collective call when the
// global controller has several processes; 0 or 1 in a serial run).
int RanksWithPoints(vtkIdType localPoints);

// The build options a filter holds: slot takes options, or a fresh default
// object for nullptr.  False when slot already holds options (no change).
bool AssignBuildOptions(vtkSmartPointer<vtkVicinityBuildOptions>& slot, vtkVicinityBuildOptions* options);

// A filter's MTime that covers the options it holds, so that an edit of
// them re-executes the filter.
vtkMTimeType LaterMTime(vtkMTimeType filter, vtkObject* options);

} // namespace vtkVicinity

#endif
