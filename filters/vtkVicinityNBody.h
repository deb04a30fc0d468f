// What the n-body filters (kNN Density, Salient Points) share: their
// choices of rows, box and masses, their kNN lists, and Salient Points'
// peak records and peak options.
#ifndef vtkVicinityNBody_h
#define vtkVicinityNBody_h

#include "vicinity.h"
#include "vtkVicinityContext.h"
#include "vtkVicinityRows.h"

#include <functional>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkVicinityBuildOptions;
class vtkDataArray;
class vtkDataSet;
class vtkPolyData;

namespace vtkVicinity
{

// The start both n-body filters (kNN Density, Salient Points) share: the
// rows (coordinates or a feature array), the periodic box, the optional
// mass array, and the kNN lists of the rows (the filter's method, k and
// build options).
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
  vtkVicinityBuildOptions* Options = nullptr; // the filter's advanced build options (null: the core's)
};

// The core's build options of these choices (method, k, the options).
vic_build_options NBodyBuildOptions(const NBodyChoices& choices);

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
NBodyChoices MakeNBodyChoices(int k, int method, vtkVicinityBuildOptions* options, bool useFeature,
  bool useMass, bool periodic, bool useBoxFromData, const double* boxLengths,
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

} // namespace vtkVicinity

#endif
