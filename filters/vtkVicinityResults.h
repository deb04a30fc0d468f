// Core results into VTK arrays: kNN lists built straight into the output's
// arrays (memory estimated and every allocation checked), copies of lists
// and values, distance columns.
#ifndef vtkVicinityResults_h
#define vtkVicinityResults_h

#include "vicinity.h"
#include "vtkVicinityContext.h"

#include <vtkAbstractArray.h>
#include <vtkSmartPointer.h>
#include <vtkType.h>

#include <cstdlib>

class vtkAlgorithm;
class vtkFloatArray;
class vtkIdTypeArray;

namespace vtkVicinity
{

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

} // namespace vtkVicinity

#endif
