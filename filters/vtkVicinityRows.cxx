#include "vtkVicinityRows.h"

#include <vtkAOSDataArrayTemplate.h>
#include <vtkAlgorithm.h>
#include <vtkArrayDispatch.h>
#include <vtkDataArray.h>
#include <vtkDataArrayRange.h>
#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkInformation.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkSMPTools.h>
#include <vtkSetGet.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vtkVicinity
{

// The name of coordinate rows (SelectRows), as the report prints it.
const char* const CoordinatesSource = "Point Coordinates";

vic_data Rows::View(vic_metric metric, const double* box, const double* origin) const
{
  vic_data x;
  x.rows = this->Data();
  x.n = static_cast<int64_t>(this->N);
  x.d = this->D;
  x.stride = 0;
  x.metric = metric;
  x.box = box;
  x.origin = origin;
  return x;
}

namespace
{
// Converts any array type to float rows in parallel, without the virtual
// per-value GetComponent of the generic vtkDataArray interface.
struct ToFloatRows
{
  template <typename ArrayT>
  void operator()(ArrayT* array, float* out) const
  {
    const auto tuples = vtk::DataArrayTupleRange(array);
    const int d = array->GetNumberOfComponents();
    vtkSMPTools::For(0, array->GetNumberOfTuples(), [&](vtkIdType begin, vtkIdType end) {
      for (vtkIdType i = begin; i < end; ++i)
      {
        const auto t = tuples[i];
        float* row = out + i * d;
        for (int j = 0; j < d; ++j)
        {
          row[j] = static_cast<float>(t[j]);
        }
      }
    });
  }
};
} // namespace

void ExtractArrayRows(vtkDataArray* array, Rows& out, bool borrow)
{
  out.N = array->GetNumberOfTuples();
  out.D = array->GetNumberOfComponents();
  out.Borrowed = nullptr;
  // float32 tuples stored contiguously are already the core's rows: the
  // copy would cost 4 bytes a value for the whole call
  auto* floats = borrow ? vtkAOSDataArrayTemplate<float>::FastDownCast(array) : nullptr;
  if (floats && out.N > 0)
  {
    out.Values = std::vector<float>();
    out.Borrowed = floats->GetPointer(0);
    return;
  }
  out.Values.resize(static_cast<size_t>(out.N) * static_cast<size_t>(out.D));
  ToFloatRows worker;
  if (!vtkArrayDispatch::Dispatch::Execute(array, worker, out.Values.data()))
  {
    worker(array, out.Values.data()); // generic fallback for unusual array types
  }
}

void ExtractPointRows(vtkDataSet* input, Rows& out, bool borrow)
{
  vtkPointSet* ps = vtkPointSet::SafeDownCast(input);
  if (ps && ps->GetPoints())
  {
    ExtractArrayRows(ps->GetPoints()->GetData(), out, borrow);
    return;
  }
  // Implicit points (image data, rectilinear grids): ask the data set.
  out.Borrowed = nullptr;
  out.N = input->GetNumberOfPoints();
  out.D = 3;
  out.Values.resize(static_cast<size_t>(out.N) * 3);
  double p[3];
  for (vtkIdType i = 0; i < out.N; ++i)
  {
    input->GetPoint(i, p);
    for (int j = 0; j < 3; ++j)
    {
      out.Values[static_cast<size_t>(i) * 3 + j] = static_cast<float>(p[j]);
    }
  }
}

// Why the input array `idx` came back as no numeric array: an array of that
// name that is not numeric (strings, variants) is named as such; otherwise
// it is missing.
static std::string MissingArrayReason(vtkAlgorithm* self, int idx, vtkDataSet* input, const char* what)
{
  vtkInformation* info = self->GetInputArrayInformation(idx);
  const char* name =
    info && info->Has(vtkDataObject::FIELD_NAME()) ? info->Get(vtkDataObject::FIELD_NAME()) : nullptr;
  vtkAbstractArray* found =
    name && input && input->GetPointData() ? input->GetPointData()->GetAbstractArray(name) : nullptr;
  if (found && !vtkArrayDownCast<vtkDataArray>(found))
  {
    return std::string(": the ") + what + " array '" + name + "' is not numeric (it is a " +
      found->GetClassName() + "); choose an array of numbers";
  }
  return std::string(": the ") + what + " array was not found on the points";
}

bool SelectRows(vtkAlgorithm* self, const char* label, vtkDataSet* input, bool useFeature,
  vtkDataArray* array, int association, Rows& rows, std::string& source, bool borrow)
{
  if (!useFeature)
  {
    ExtractPointRows(input, rows, borrow);
    source = CoordinatesSource;
    return true;
  }
  if (!array)
  {
    vtkErrorWithObjectMacro(self, << label << MissingArrayReason(self, 0, input, "feature")
                                  << "; choose a numeric point-data array or turn Use Feature Array off.");
    return false;
  }
  source = array->GetName() ? array->GetName() : "(unnamed array)";
  if (association != vtkDataObject::FIELD_ASSOCIATION_POINTS)
  {
    vtkErrorWithObjectMacro(
      self, << label << ": the feature array '" << source << "' is not a point-data array.");
    return false;
  }
  ExtractArrayRows(array, rows, borrow);
  return true;
}

bool PeriodicBox(vtkAlgorithm* self, const char* label, bool periodic, bool useBoxFromData,
  const double* lengths, vtkDataSet* input, const Rows& rows, const std::string& source,
  PeriodicBoxView& box)
{
  box = PeriodicBoxView();
  vtkFieldData* fd = input ? input->GetFieldData() : nullptr;
  vtkDataArray* size = useBoxFromData && fd ? fd->GetArray("BoxSize") : nullptr;
  if (!periodic)
  {
    if (size && source == CoordinatesSource) // a box is a box of the coordinates
    {
      vtkWarningWithObjectMacro(self, << label << ": the data declare a periodic box (field data "
                                         "BoxSize) but Periodic Box is off, so distances do not "
                                         "wrap across its faces. Tick Periodic Box to use it, or "
                                         "turn Use Box From Data off for an open volume.");
    }
    return true;
  }
  if (rows.D != 3)
  {
    vtkErrorWithObjectMacro(self, << label << ": the periodic box has 3 lengths but the rows ('"
                                  << source << "') have " << rows.D
                                  << " components; turn Periodic off for feature arrays.");
    return false;
  }
  box.Periodic = true;
  std::copy(lengths, lengths + 3, box.Lengths);
  if (!size)
  {
    return true;
  }
  const int nc = size->GetNumberOfComponents() * (size->GetNumberOfTuples() > 0 ? 1 : 0);
  if (nc != 1 && nc != 3)
  {
    vtkErrorWithObjectMacro(self, << label << ": the field data BoxSize has " << nc
                                  << " values; 1 (a cube) or 3 are a box. Turn Use Box From Data "
                                     "off to give Box Lengths instead.");
    return false;
  }
  vtkDataArray* origin = fd->GetArray("BoxOrigin");
  vtkDataArray* flags = fd->GetArray("BoxPeriodic");
  const bool hasOrigin = origin && origin->GetNumberOfTuples() > 0 && origin->GetNumberOfComponents() == 3;
  const bool hasFlags = flags && flags->GetNumberOfTuples() > 0 && flags->GetNumberOfComponents() == 3;
  for (int j = 0; j < 3; ++j)
  {
    const double L = size->GetComponent(0, nc == 1 ? 0 : j);
    if (!(L > 0) || !std::isfinite(L))
    {
      vtkErrorWithObjectMacro(self, << label << ": the field data BoxSize is " << L << " along axis "
                                    << j << "; a periodic box needs a positive length.");
      return false;
    }
    box.Lengths[j] = hasFlags && flags->GetComponent(0, j) == 0 ? 0.0 : L;
    box.Origin[j] = hasOrigin ? origin->GetComponent(0, j) : 0.0;
  }
  box.HasOrigin = hasOrigin;
  return true;
}

bool SelectPointValues(vtkAlgorithm* self, const char* label, const char* what, const char* toggle,
  int components, vtkDataArray* array, int association, vtkIdType points, std::vector<float>& values)
{
  if (!array)
  {
    vtkErrorWithObjectMacro(self, << label << ": the " << what
                                  << " was not found on the points; choose a point-data array or turn "
                                  << toggle << " off.");
    return false;
  }
  const char* name = array->GetName() ? array->GetName() : "(unnamed array)";
  if (association != vtkDataObject::FIELD_ASSOCIATION_POINTS ||
    array->GetNumberOfTuples() != points || array->GetNumberOfComponents() != components)
  {
    vtkErrorWithObjectMacro(self, << label << ": the " << what << " '" << name
                                  << "' must hold one value per point (" << points << " points, "
                                  << (components == 1 ? std::string("one component")
                                                      : std::to_string(components) + " components")
                                  << "); it has " << array->GetNumberOfTuples() << " tuples of "
                                  << array->GetNumberOfComponents() << " components"
                                  << (association != vtkDataObject::FIELD_ASSOCIATION_POINTS
                                         ? " and is not a point-data array."
                                         : "."));
    return false;
  }
  Rows m;
  ExtractArrayRows(array, m);
  values.swap(m.Values);
  return true;
}

bool SelectMass(vtkAlgorithm* self, const char* label, vtkDataArray* array, int association,
  vtkIdType points, std::vector<float>& mass)
{
  return SelectPointValues(
    self, label, "mass array", "Use Mass Array", 1, array, association, points, mass);
}

} // namespace vtkVicinity
