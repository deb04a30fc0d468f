#include "vtkVicinityFilterSupport.h"

#include <vtkAlgorithm.h>
#include <vtkArrayDispatch.h>
#include <vtkCommunicator.h>
#include <vtkDataArray.h>
#include <vtkDataArrayRange.h>
#include <vtkDataSet.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkMultiProcessController.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkSMPTools.h>
#include <vtkSetGet.h>
#include <vtkStringArray.h>

#include <algorithm>
#include <cmath>

namespace vtkVicinity
{

vic_data Rows::View(vic_metric metric, const double* box) const
{
  vic_data x;
  x.rows = this->Values.data();
  x.n = static_cast<int64_t>(this->N);
  x.d = this->D;
  x.stride = 0;
  x.metric = metric;
  x.box = box;
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

void ExtractArrayRows(vtkDataArray* array, Rows& out)
{
  out.N = array->GetNumberOfTuples();
  out.D = array->GetNumberOfComponents();
  out.Values.resize(static_cast<size_t>(out.N) * static_cast<size_t>(out.D));
  ToFloatRows worker;
  if (!vtkArrayDispatch::Dispatch::Execute(array, worker, out.Values.data()))
  {
    worker(array, out.Values.data()); // generic fallback for unusual array types
  }
}

void ExtractPointRows(vtkDataSet* input, Rows& out)
{
  vtkPointSet* ps = vtkPointSet::SafeDownCast(input);
  if (ps && ps->GetPoints())
  {
    ExtractArrayRows(ps->GetPoints()->GetData(), out);
    return;
  }
  // Implicit points (image data, rectilinear grids): ask the data set.
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

// ------------------------------------------------------------------ Context
Context::Context(vtkAlgorithm* algorithm)
  : Algorithm(algorithm)
{
}

Context::~Context()
{
  vic_ctx_destroy(this->Ctx);
}

bool Context::Create(vic_backend backend, int device, int threads, uint64_t seed)
{
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = backend;
  o.device = device;
  o.threads = threads;
  o.seed = seed;
  o.log = &Context::Log;
  o.progress = &Context::Progress;
  o.user = this;
  vic_status s = vic_ctx_create(&o, &this->Ctx);
  if (s != VIC_OK)
  {
    this->CreateError = std::string("could not create a Vicinity context: ") + vic_status_name(s);
    this->Ctx = nullptr;
    return false;
  }
  return true;
}

void Context::SetProgressRange(double lo, double hi)
{
  this->Lo = lo;
  this->Hi = hi;
}

std::string Context::Error() const
{
  if (!this->Ctx)
  {
    return this->CreateError;
  }
  return vic_ctx_error(this->Ctx);
}

void Context::FlushWarnings()
{
  std::vector<std::string> w;
  {
    std::lock_guard<std::mutex> lock(this->WarningsMutex);
    w.swap(this->Warnings);
  }
  for (const std::string& message : w)
  {
    vtkWarningWithObjectMacro(this->Algorithm, << message);
  }
}

void Context::Log(void* user, vic_log_level level, const char* message)
{
  auto* self = static_cast<Context*>(user);
  // Errors come back through the status and vic_ctx_error; the filter
  // reports them once with vtkErrorMacro.  Debug/info stay quiet.
  if (level != VIC_LOG_WARNING)
  {
    return;
  }
  std::lock_guard<std::mutex> lock(self->WarningsMutex);
  self->Warnings.emplace_back(message);
}

int Context::Progress(void* user, const char* /*stage*/, double fraction)
{
  // The core calls this from the calling thread only (its contract), so
  // UpdateProgress and CheckAbort run on the pipeline's thread.
  auto* self = static_cast<Context*>(user);
  double f = std::min(1.0, std::max(0.0, fraction));
  self->Algorithm->UpdateProgress(self->Lo + (self->Hi - self->Lo) * f);
  return self->Algorithm->CheckAbort() ? 1 : 0;
}

// ----------------------------------------------------------------- results
vtkSmartPointer<vtkIdTypeArray> WrapIds(const vic_knn& knn, const char* name)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(knn.k);
  a->SetNumberOfTuples(knn.n);
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
  auto a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(knn.k);
  a->SetNumberOfTuples(knn.n);
  std::copy(knn.dist, knn.dist + knn.n * knn.k, a->GetPointer(0));
  return a;
}

vtkSmartPointer<vtkFloatArray> DistanceColumn(const vic_knn& knn, int rank, const char* name)
{
  auto a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(knn.n);
  float* dst = a->GetPointer(0);
  for (int64_t i = 0; i < knn.n; ++i)
  {
    dst[i] = knn.dist[i * knn.k + rank];
  }
  return a;
}

// ------------------------------------------------------------------ report
namespace
{
void AddString(vtkFieldData* fd, const char* name, const std::string& value)
{
  auto a = vtkSmartPointer<vtkStringArray>::New();
  a->SetName(name);
  a->InsertNextValue(value);
  fd->AddArray(a);
}

void AddDouble(vtkFieldData* fd, const std::string& name, double value)
{
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name.c_str());
  a->InsertNextValue(value);
  fd->AddArray(a);
}

void AddInt(vtkFieldData* fd, const char* name, vtkIdType value)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->InsertNextValue(value);
  fd->AddArray(a);
}
} // namespace

void WriteReport(const vic_report& r, vic_metric metric, int dimension, const char* source,
  vtkFieldData* fd)
{
  AddInt(fd, "k", r.k);
  AddInt(fd, "k Requested", r.k_requested);
  AddString(fd, "Method", vic_method_name(r.method));
  AddString(fd, "Method Reason", r.reason);
  AddString(fd, "Backend", vic_backend_name(r.backend));
  AddString(fd, "Metric", vic_metric_name(metric));
  AddString(fd, "Rows", source);
  AddInt(fd, "Dimension", dimension);
  for (int i = 0; i < r.n_stages && i < VIC_MAX_STAGES; ++i)
  {
    AddDouble(fd, std::string("Seconds ") + r.stages[i].name, r.stages[i].seconds);
  }
  if (r.backend == VIC_BACKEND_CUDA)
  {
    AddDouble(fd, "Seconds Transfer", r.seconds_transfer);
    AddDouble(fd, "Seconds Kernel", r.seconds_kernel);
  }
  AddDouble(fd, "Seconds Total", r.seconds_total);
  AddDouble(fd, "d_nn1 Mean", r.dnn1_mean);
  AddDouble(fd, "d_nn1 Max", r.dnn1_max);
  AddDouble(fd, "Recall Estimate", r.recall_estimate);
  AddInt(fd, "Recall Sample", r.recall_sample);
  AddInt(fd, "Warnings", r.warnings);
}

// --------------------------------------------------------------------- MPI
int RanksWithPoints(vtkIdType localPoints)
{
  int mine = localPoints > 0 ? 1 : 0;
  vtkMultiProcessController* c = vtkMultiProcessController::GetGlobalController();
  if (!c || c->GetNumberOfProcesses() <= 1)
  {
    return mine;
  }
  int total = 0;
  c->AllReduce(&mine, &total, 1, vtkCommunicator::SUM_OP);
  return total;
}

} // namespace vtkVicinity
