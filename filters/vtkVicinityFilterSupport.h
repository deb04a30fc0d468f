// Glue shared by the Vicinity filters: VTK arrays <-> the core's float32
// rows, a core context whose callbacks talk to a vtkAlgorithm (progress
// bar, abort button, warnings), the pipeline passes every filter shares
// (output types, the MPI check, composite inputs leaf by leaf), the checks
// of user choices (feature array, periodic box, mass array), wrapping core
// results into VTK arrays, and the field-data report.  The filters stay
// small: they validate, call this glue and the core, and return.  No
// algorithm and no policy lives here.
#ifndef vtkVicinityFilterSupport_h
#define vtkVicinityFilterSupport_h

#include "vicinity.h"

#include <vtkAbstractArray.h>
#include <vtkSmartPointer.h>
#include <vtkType.h>

#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkDataArray;
class vtkDataSet;
class vtkFieldData;
class vtkFloatArray;
class vtkIdTypeArray;
class vtkInformationVector;
class vtkPolyData;

namespace vtkVicinity
{

// A private float32 row-major copy (n x d) of what the core reads.  The
// core needs float32 rows; VTK arrays may be double, int, SOA, ...
struct Rows
{
  std::vector<float> Values;
  vtkIdType N = 0;
  int D = 0;

  vic_data View(vic_metric metric, const double* box, const double* origin = nullptr) const;
};

// Point coordinates of any vtkDataSet (vtkPointSet points or GetPoint()).
void ExtractPointRows(vtkDataSet* input, Rows& out);
// Every tuple of a data array, all its components (feature space).
void ExtractArrayRows(vtkDataArray* array, Rows& out);

// The rows a filter works on: the point coordinates, or with useFeature
// the tuples of `array` (GetInputArrayToProcess's answer and association).
// source names the rows for the report.  A missing or non-point array is
// reported as an error on `self` ("<label>: ...") and gives false.
bool SelectRows(vtkAlgorithm* self, const char* label, vtkDataSet* input, bool useFeature,
  vtkDataArray* array, int association, Rows& rows, std::string& source);

// The periodic box a filter works in: off, or lengths (0 = an open axis)
// and, when the data say where the box starts, its origin.
struct PeriodicBoxView
{
  bool Periodic = false;
  bool HasOrigin = false;
  double Lengths[3] = { 0, 0, 0 };
  double Origin[3] = { 0, 0, 0 };
  const double* Box() const { return this->Periodic ? this->Lengths : nullptr; }
  const double* OriginOrNull() const
  {
    return this->Periodic && this->HasOrigin ? this->Origin : nullptr;
  }
};

// The periodic box of these rows.  Off when periodic is off; else, with
// useBoxFromData and the input's field data "BoxSize" (1 or 3 values, as
// the Vicinity readers write), the box from the data -- "BoxOrigin" its
// origin, "BoxPeriodic" 0 leaving an axis open -- and otherwise `lengths`.
// Rows that are not 3-d cannot live in the 3-length box, and a BoxSize
// that is not positive is no box: an error on `self` and false.  Whether
// the box holds the points is the core's check (vic_data_validate).  With
// periodic off on data that declare a box, a warning says distances do
// not wrap.
bool PeriodicBox(vtkAlgorithm* self, const char* label, bool periodic, bool useBoxFromData,
  const double* lengths, vtkDataSet* input, const Rows& rows, const std::string& source,
  PeriodicBoxView& box);

// A per-particle mass array as float32: one component, on the points, one
// value per point, else an error on `self` and false.  The values
// themselves (NaN, negative) are the core's to judge.
bool SelectMass(vtkAlgorithm* self, const char* label, vtkDataArray* array, int association,
  vtkIdType points, std::vector<float>& mass);
// The same for any per-point array of `components` values (velocities:
// 3); what names it in messages ("velocity array"), toggle the property
// that turns it off ("Use Velocity Array").
bool SelectPointValues(vtkAlgorithm* self, const char* label, const char* what, const char* toggle,
  int components, vtkDataArray* array, int association, vtkIdType points, std::vector<float>& values);

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
  bool Create(vic_backend backend, int device, int threads, uint64_t seed, int devices = 1);
  vic_ctx* Get() const { return this->Ctx; }
  // The share of the bar of the data set being processed (a composite
  // input's leaf), and within it the share of the next core call, so
  // that a filter making several calls (kNN lists, density, peaks) and
  // several leaves fill one bar in order.  SetProgressRange resets the
  // call's share to the whole leaf.
  void SetProgressRange(double lo, double hi);
  void SetCallRange(double lo, double hi);
  // The core's message for the last failure (or a creation failure).
  std::string Error() const;
  // Emit collected warnings on the algorithm and forget them.
  void FlushWarnings();

private:
  static void Log(void* user, vic_log_level level, const char* message);
  static int Progress(void* user, const char* stage, double fraction);

  vtkAlgorithm* Algorithm;
  vic_ctx* Ctx = nullptr;
  double Lo = 0.0, Hi = 1.0;         // the leaf's share of the bar
  double CallLo = 0.0, CallHi = 1.0; // the call's share of the leaf
  std::string CreateError;
  std::mutex WarningsMutex; // the core may log from worker threads
  std::vector<std::string> Warnings;
};

// How a core call ended, for the filter: Done, or Cancelled by the abort
// button (a warning "<label>: cancelled; the output is empty." -- not an
// error; the filter empties its outputs and returns 1), or Failed (the
// core's message as an error; the filter returns 0).  Collected core
// warnings are emitted first in every case.
enum class Outcome
{
  Done,
  Cancelled,
  Failed
};
Outcome CheckCall(vtkAlgorithm* self, const char* label, Context& ctx, vic_status status);

// ----------------------------------------------------------------- n-body
// The start both n-body filters (kNN Density, Salient Points) share: the
// rows (coordinates or a feature array), the periodic box, the optional
// mass array, and the kNN lists of the rows (the core's default build
// options with the filter's method and k).
struct NBodyChoices
{
  int K = 32;
  vic_method Method = VIC_METHOD_AUTO;
  bool UseFeature = false;
  vtkDataArray* Feature = nullptr; // with its association, from GetInputArrayToProcess
  int FeatureAssociation = -1;
  bool UseMass = false;
  vtkDataArray* Mass = nullptr;
  int MassAssociation = -1;
  bool Periodic = false;
  bool UseBoxFromData = true;
  const double* BoxLengths = nullptr;
};

// One peak of Salient Points' output port 1 (plain doubles, so that the
// MPI path can send them between ranks as they are).
struct PeakRecord
{
  double Saliency, GlobalId, Density, Delta, Members, Centre[3], Particle[3];
};

// Output port 1 of Salient Points: one vertex per peak at its Centre, in
// the given order (the Peak Id), with the peak's values as point data.
void WritePeakPoints(const std::vector<PeakRecord>& peaks, vtkPolyData* out);

// The peak thresholds of Salient Points' properties, the rest the core's
// defaults (one place for the filter's single-process and MPI paths).
vic_peak_options MakePeakOptions(
  double minDensity, double minDelta, double deltaFactor, double minProminence, vtkIdType minMembers);

// The n-body filters' shared properties as choices.  inputArray(idx,
// association) is the filter's GetInputArrayToProcess (protected in
// vtkAlgorithm): index 0 is the feature array, index 1 the mass array; it is
// asked only for the arrays in use.
NBodyChoices MakeNBodyChoices(int k, int method, bool useFeature, bool useMass, bool periodic,
  bool useBoxFromData, const double* boxLengths,
  const std::function<vtkDataArray*(int, int&)>& inputArray);

struct NBodyLists
{
  Rows Points;
  std::string Source;
  PeriodicBoxView Box;
  std::vector<float> Mass; // empty: no mass array
  vic_knn Knn{};
  vic_data View() const
  {
    return this->Points.View(VIC_L2, this->Box.Box(), this->Box.OriginOrNull());
  }
  const float* MassOrNull() const { return this->Mass.empty() ? nullptr : this->Mass.data(); }
  NBodyLists() = default;
  NBodyLists(const NBodyLists&) = delete;
  NBodyLists& operator=(const NBodyLists&) = delete;
  ~NBodyLists() { vic_knn_free(&this->Knn); }
};

// Fills `out` (the kNN build on ctx's current call range); input errors
// and core failures are reported on `self` as CheckCall does.
Outcome BuildNBodyLists(vtkAlgorithm* self, const char* label, Context& ctx, vtkDataSet* input,
  const NBodyChoices& choices, NBodyLists& out);
// The first half of BuildNBodyLists: rows, periodic box and masses into
// `out`, no lists -- for calls that build their own (vic_knn_density_peaks).
Outcome SelectNBodyInputs(vtkAlgorithm* self, const char* label, vtkDataSet* input,
  const NBodyChoices& choices, NBodyLists& out);

// ---------------------------------------------------------------- pipeline
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

// --------------------------------------------------------------- results
// n values (components each) copied into a new vtkFloatArray.
vtkSmartPointer<vtkFloatArray> WrapFloats(
  const float* values, vtkIdType n, int components, const char* name);
// n 64-bit ids copied into a new vtkIdTypeArray.
vtkSmartPointer<vtkIdTypeArray> WrapIdValues(const int64_t* values, vtkIdType n, const char* name);

// A VTK array of `values` values whose memory is allocated here and
// checked: nullptr when it cannot be had.  (VTK's own SetNumberOfValues
// aborts the process when its allocation fails.)  The array frees the
// memory itself (free()).
template <class ArrayT>
vtkSmartPointer<ArrayT> CheckedArray(vtkIdType values, int components = 1)
{
  using T = typename ArrayT::ValueType;
  void* p = std::malloc(static_cast<size_t>(values > 0 ? values : 1) * sizeof(T));
  if (!p)
  {
    return nullptr;
  }
  auto a = vtkSmartPointer<ArrayT>::New();
  a->SetNumberOfComponents(components);
  a->SetArray(static_cast<T*>(p), values, 0, vtkAbstractArray::VTK_DATA_ARRAY_FREE);
  return a;
}

// Neighbour lists built straight into the output's VTK arrays
// (vic_knn_build_into), so the lists exist once in host memory: the
// arrays' memory is allocated here, after an up-front estimate (n*k*12
// bytes, plus extra_bytes_per_entry for what the caller builds from them,
// e.g. the graph's edges) against the machine's memory, and every
// allocation is checked: a shortfall is an error message on `self`, never
// an abort.  View points into the arrays (ids, dist, n, k, report) for
// helpers that read vic_knn; it is not freed.
struct KnnArrays
{
  vtkSmartPointer<vtkIdTypeArray> Ids;
  vtkSmartPointer<vtkFloatArray> Distances;
  vic_knn View{};
};
Outcome BuildKnnIntoArrays(vtkAlgorithm* self, const char* label, Context& ctx, const vic_data& x,
  const vic_build_options& o, double extra_bytes_per_entry, const char* ids_name,
  const char* distances_name, KnnArrays& out);
// Bytes of physical memory of this machine (0 when unknown).
double PhysicalMemoryBytes();

// Neighbour ids (k components) copied into a vtkIdTypeArray (nullptr when
// it cannot be allocated).
vtkSmartPointer<vtkIdTypeArray> WrapIds(const vic_knn& knn, const char* name);
// Neighbour distances (k components) copied into a vtkFloatArray (nullptr
// when it cannot be allocated).
vtkSmartPointer<vtkFloatArray> WrapDistances(const vic_knn& knn, const char* name);
// Column `rank` of the distances (e.g. d_nn1 for rank 0), one component
// (nullptr when it cannot be allocated).
vtkSmartPointer<vtkFloatArray> DistanceColumn(const vic_knn& knn, int rank, const char* name);

// Writes what happened (k, method and reason, backend, metric, stage
// seconds, d_nn1 statistics, recall estimate, warnings) as field data.
void WriteReport(const vic_report& report, vic_metric metric, int dimension, const char* source,
  vtkFieldData* fieldData);
// One-value field-data arrays, for what a filter adds to the report.
void AddFieldString(vtkFieldData* fieldData, const char* name, const std::string& value);
void AddFieldDouble(vtkFieldData* fieldData, const std::string& name, double value);
void AddFieldInt(vtkFieldData* fieldData, const char* name, vtkIdType value);

// Devices the context can open: the core says whether a given ordinal is
// usable (0 in CPU builds), the filters never talk to CUDA themselves.
int UsableDevices();
// Number of MPI ranks whose piece holds points (a collective call when the
// global controller has several processes; 0 or 1 in a serial run).
int RanksWithPoints(vtkIdType localPoints);

} // namespace vtkVicinity

#endif
