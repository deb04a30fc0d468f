// The rows the core reads, from VTK data: a float32 row-major copy of the
// point coordinates or of a point-data array (or, where the caller asks
// and the array already is float32 rows, that array itself), the checks of the user's
// choices of rows (feature array, periodic box, mass and other per-point
// arrays), each reported on the filter as "<label>: ...".
#ifndef vtkVicinityRows_h
#define vtkVicinityRows_h

#include "vicinity.h"

#include <vtkType.h>

#include <string>
#include <vector>

class vtkAlgorithm;
class vtkDataArray;
class vtkDataSet;

namespace vtkVicinity
{

// A private float32 row-major copy (n x d) of what the core reads.  The
// core needs float32 rows; VTK arrays may be double, int, SOA, ...
// Borrowed: instead of the copy, the VTK array's own values, where they
// already are float32 rows (an AOS float array) and the caller asked for
// no copy; valid only while that array lives (one RequestData), so rows
// kept longer (index caches, shards) never borrow.
struct Rows
{
  std::vector<float> Values;
  const float* Borrowed = nullptr;
  vtkIdType N = 0;
  int D = 0;

  const float* Data() const { return this->Borrowed ? this->Borrowed : this->Values.data(); }
  vic_data View(vic_metric metric, const double* box, const double* origin = nullptr) const;
};

// Point coordinates of any vtkDataSet (vtkPointSet points or GetPoint()).
// borrow: float32 points are read in place (Rows::Borrowed), not copied.
void ExtractPointRows(vtkDataSet* input, Rows& out, bool borrow = false);
// Every tuple of a data array, all its components (feature space).
void ExtractArrayRows(vtkDataArray* array, Rows& out, bool borrow = false);

// The rows a filter works on: the point coordinates, or with useFeature
// the tuples of `array` (GetInputArrayToProcess's answer and association).
// source names the rows for the report.  A missing or non-point array is
// reported as an error on `self` ("<label>: ...") and gives false.
// borrow: as for ExtractArrayRows (rows used only within the call).
bool SelectRows(vtkAlgorithm* self, const char* label, vtkDataSet* input, bool useFeature,
  vtkDataArray* array, int association, Rows& rows, std::string& source, bool borrow = false);

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

} // namespace vtkVicinity

#endif
