// Glue shared by the Vicinity filters: VTK arrays <-> the core's float32
// rows, a core context whose callbacks talk to a vtkAlgorithm (progress
// bar, abort button, warnings), wrapping core results into VTK arrays, the
// field-data report, and the MPI check.  The filters stay small: they
// validate, call this glue and the core once, and return.  No algorithm
// and no policy lives here.
#ifndef vtkVicinityFilterSupport_h
#define vtkVicinityFilterSupport_h

#include "vicinity.h"

#include <vtkSmartPointer.h>
#include <vtkType.h>

#include <mutex>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkDataArray;
class vtkDataSet;
class vtkFieldData;
class vtkFloatArray;
class vtkIdTypeArray;

namespace vtkVicinity
{

// A private float32 row-major copy (n x d) of what the core reads.  The
// core needs float32 rows; VTK arrays may be double, int, SOA, ...
struct Rows
{
  std::vector<float> Values;
  vtkIdType N = 0;
  int D = 0;

  vic_data View(vic_metric metric, const double* box) const;
};

// Point coordinates of any vtkDataSet (vtkPointSet points or GetPoint()).
void ExtractPointRows(vtkDataSet* input, Rows& out);
// Every tuple of a data array, all its components (feature space).
void ExtractArrayRows(vtkDataArray* array, Rows& out);

// Owns a vic_ctx whose progress callback drives algorithm->UpdateProgress
// (mapped into [lo, hi] so several core calls or blocks share one bar) and
// polls algorithm->CheckAbort() to cancel, and whose log callback collects
// warnings, later emitted with vtkWarningMacro on the algorithm.
class Context
{
public:
  explicit Context(vtkAlgorithm* algorithm);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Creates the core context; on failure Error() says why.
  bool Create(vic_backend backend, int device, int threads, uint64_t seed);
  vic_ctx* Get() const { return this->Ctx; }
  void SetProgressRange(double lo, double hi);
  // The core's message for the last failure (or a creation failure).
  std::string Error() const;
  // Emit collected warnings on the algorithm and forget them.
  void FlushWarnings();

private:
  static void Log(void* user, vic_log_level level, const char* message);
  static int Progress(void* user, const char* stage, double fraction);

  vtkAlgorithm* Algorithm;
  vic_ctx* Ctx = nullptr;
  double Lo = 0.0, Hi = 1.0;
  std::string CreateError;
  std::mutex WarningsMutex; // the core may log from worker threads
  std::vector<std::string> Warnings;
};

// Neighbour ids (k components) as a vtkIdTypeArray.
vtkSmartPointer<vtkIdTypeArray> WrapIds(const vic_knn& knn, const char* name);
// Neighbour distances (k components) as a vtkFloatArray.
vtkSmartPointer<vtkFloatArray> WrapDistances(const vic_knn& knn, const char* name);
// Column `rank` of the distances (e.g. d_nn1 for rank 0), one component.
vtkSmartPointer<vtkFloatArray> DistanceColumn(const vic_knn& knn, int rank, const char* name);

// Writes what happened (k, method and reason, backend, metric, stage
// seconds, d_nn1 statistics, recall estimate, warnings) as field data.
void WriteReport(const vic_report& report, vic_metric metric, int dimension, const char* source,
  vtkFieldData* fieldData);

// Number of MPI ranks whose piece holds points (a collective call when the
// global controller has several processes; 0 or 1 in a serial run).
int RanksWithPoints(vtkIdType localPoints);

} // namespace vtkVicinity

#endif
