#include "vtkVicinityResults.h"

#include <vtkAlgorithm.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkSMPTools.h>
#include <vtkSetGet.h>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace vtkVicinity
{

vtkSmartPointer<vtkFloatArray> WrapFloats(
  const float* values, vtkIdType n, int components, const char* name)
{
  auto a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  a->SetNumberOfTuples(n);
  std::copy(values, values + n * components, a->GetPointer(0));
  return a;
}

vtkSmartPointer<vtkIdTypeArray> WrapIdValues(const int64_t* values, vtkIdType n, const char* name)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(n);
  vtkIdType* dst = a->GetPointer(0);
  for (vtkIdType i = 0; i < n; ++i)
  {
    dst[i] = static_cast<vtkIdType>(values[i]);
  }
  return a;
}

double PhysicalMemoryBytes()
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
  {
    return static_cast<double>(pages) * static_cast<double>(page);
  }
#endif
  return 0;
}

namespace
{
struct FreeDeleter
{
  void operator()(void* p) const { std::free(p); }
};
}

Outcome BuildKnnIntoArrays(vtkAlgorithm* self, const char* label, Context& ctx, const vic_data& x,
  const vic_build_options& o, double extra_bytes_per_entry, const char* ids_name,
  const char* distances_name, KnnArrays& out)
{
  static_assert(sizeof(vtkIdType) == 8 || sizeof(vtkIdType) == 4, "vtkIdType of 4 or 8 bytes");
  out = KnnArrays();
  // k as the core will deliver it; n < 2 and k < 1 are the core's to word
  const int32_t k = (o.k > 0 && x.n >= 2 && o.k >= x.n) ? static_cast<int32_t>(x.n - 1) : o.k;
  const double entries = x.n >= 2 && k > 0 ? static_cast<double>(x.n) * k : 0;
  const double bytes = entries * (sizeof(vtkIdType) + sizeof(float) + extra_bytes_per_entry);
  const double phys = PhysicalMemoryBytes();
  if (phys > 0 && bytes > phys)
  {
    vtkErrorWithObjectMacro(self, << label << ": " << x.n << " points with k = " << k << " neighbours need about "
                                  << bytes / 1073741824.0 << " GiB for the output arrays, more than this machine's "
                                  << phys / 1073741824.0 << " GiB of memory; lower k or the number of points.");
    return Outcome::Failed;
  }
  if (entries > static_cast<double>(SIZE_MAX / 8))
  {
    vtkErrorWithObjectMacro(self, << label << ": n*k = " << entries << " list entries cannot be addressed.");
    return Outcome::Failed;
  }
  const size_t count = entries > 0 ? static_cast<size_t>(entries) : 1;
  std::unique_ptr<void, FreeDeleter> ids(std::malloc(count * sizeof(vtkIdType)));
  std::unique_ptr<void, FreeDeleter> dist(ids ? std::malloc(count * sizeof(float)) : nullptr);
  if (!ids || !dist)
  {
    vtkErrorWithObjectMacro(self, << label << ": out of memory allocating the output arrays ("
                                  << count * (sizeof(vtkIdType) + sizeof(float)) / 1073741824.0 << " GiB for "
                                  << x.n << " points x " << k << " neighbours); lower k or the number of points.");
    return Outcome::Failed;
  }
  vic_knn_out into;
  vic_knn_out_init(&into);
  into.id_type = sizeof(vtkIdType) == 8 ? VIC_IDS_INT64 : VIC_IDS_INT32;
  into.ids = ids.get();
  into.dist = static_cast<float*>(dist.get());
  into.capacity = static_cast<int64_t>(entries);
  const Outcome outcome = CheckCall(self, label, ctx, vic_knn_build_into(ctx.Get(), &x, &o, &into));
  if (outcome != Outcome::Done)
  {
    return outcome;
  }
  try
  {
    out.Ids = vtkSmartPointer<vtkIdTypeArray>::New();
    out.Distances = vtkSmartPointer<vtkFloatArray>::New();
  }
  catch (const std::bad_alloc&)
  {
    vtkErrorWithObjectMacro(self, << label << ": out of memory creating the output arrays.");
    out = KnnArrays();
    return Outcome::Failed;
  }
  const vtkIdType n = static_cast<vtkIdType>(into.n);
  out.Ids->SetName(ids_name);
  out.Ids->SetNumberOfComponents(into.k);
  // the arrays own the memory from here on (free() when released)
  out.Ids->SetArray(static_cast<vtkIdType*>(ids.release()), n * into.k, 0, vtkAbstractArray::VTK_DATA_ARRAY_FREE);
  out.Distances->SetName(distances_name);
  out.Distances->SetNumberOfComponents(into.k);
  out.Distances->SetArray(static_cast<float*>(dist.release()), n * into.k, 0, vtkAbstractArray::VTK_DATA_ARRAY_FREE);
  out.View.n = into.n;
  out.View.k = into.k;
  // vic_knn's int64 ids alias the array only where vtkIdType is 64-bit
  out.View.ids = sizeof(vtkIdType) == 8 ? reinterpret_cast<int64_t*>(out.Ids->GetPointer(0)) : nullptr;
  out.View.dist = out.Distances->GetPointer(0);
  out.View.report = into.report;
  return Outcome::Done;
}

vtkSmartPointer<vtkIdTypeArray> WrapIds(const vic_knn& knn, const char* name)
{
  auto a = CheckedArray<vtkIdTypeArray>(knn.n * knn.k, knn.k);
  if (!a)
  {
    return nullptr;
  }
  a->SetName(name);
  vtkIdType* dst = a->GetPointer(0);
  const int64_t* src = knn.ids;
  const vtkIdType count = knn.n * knn.k;
  vtkSMPTools::For(0, count, [&](vtkIdType b, vtkIdType e) {
    for (vtkIdType i = b; i < e; ++i)
    {
      dst[i] = static_cast<vtkIdType>(src[i]);
    }
  });
  return a;
}

vtkSmartPointer<vtkFloatArray> WrapDistances(const vic_knn& knn, const char* name)
{
  auto a = CheckedArray<vtkFloatArray>(knn.n * knn.k, knn.k);
  if (!a)
  {
    return nullptr;
  }
  a->SetName(name);
  std::copy(knn.dist, knn.dist + knn.n * knn.k, a->GetPointer(0));
  return a;
}

vtkSmartPointer<vtkFloatArray> DistanceColumn(const vic_knn& knn, int rank, const char* name)
{
  auto a = CheckedArray<vtkFloatArray>(knn.n);
  if (!a)
  {
    return nullptr;
  }
  a->SetName(name);
  float* dst = a->GetPointer(0);
  for (int64_t i = 0; i < knn.n; ++i)
  {
    dst[i] = knn.dist[i * knn.k + rank];
  }
  return a;
}

} // namespace vtkVicinity
