#include "vtkVicinityFilterSupport.h"
#include "vtkVicinityDeviceForRank.h"

#include <vtkAlgorithm.h>
#include <vtkArrayDispatch.h>
#include <vtkCommunicator.h>
#include <vtkCompositeDataSet.h>
#include <vtkDataObjectTree.h>
#include <vtkDataObjectTreeIterator.h>
#include <vtkDataArray.h>
#include <vtkDataArrayRange.h>
#include <vtkDataSet.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkIntArray.h>
#include <vtkMultiProcessController.h>
#include <vtkCellArray.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSMPTools.h>
#include <vtkSetGet.h>
#include <vtkStringArray.h>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <cmath>
#include <cstring>

namespace vtkVicinity
{

// The name of coordinate rows (SelectRows), as the report prints it.
const char* const CoordinatesSource = "Point Coordinates";

vic_data Rows::View(vic_metric metric, const double* box, const double* origin) const
{
  vic_data x;
  x.rows = this->Values.data();
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
  vtkDataArray* array, int association, Rows& rows, std::string& source)
{
  if (!useFeature)
  {
    ExtractPointRows(input, rows);
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
  ExtractArrayRows(array, rows);
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

// ------------------------------------------------------------------ Context
Context::Context(vtkAlgorithm* algorithm)
  : Algorithm(algorithm)
{
}

Context::~Context()
{
  vic_ctx_destroy(this->Ctx);
}

bool Context::Create(vic_backend backend, int device, int threads, uint64_t seed, int devices)
{
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = backend;
  o.device = device;
  o.devices = devices;
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
  this->CallLo = 0.0;
  this->CallHi = 1.0;
}

void Context::SetCallRange(double lo, double hi)
{
  this->CallLo = lo;
  this->CallHi = hi;
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
  f = self->CallLo + (self->CallHi - self->CallLo) * f;
  self->Algorithm->UpdateProgress(self->Lo + (self->Hi - self->Lo) * f);
  return self->Algorithm->CheckAbort() ? 1 : 0;
}

Outcome CheckCall(vtkAlgorithm* self, const char* label, Context& ctx, vic_status status)
{
  ctx.FlushWarnings();
  if (status == VIC_OK)
  {
    return Outcome::Done;
  }
  if (status == VIC_E_CANCELLED)
  {
    // The abort button: not an error.  Empty outputs, as VTK's CheckAbort
    // convention has the executive do for aborted filters.
    vtkWarningWithObjectMacro(self, << label << ": cancelled; the output is empty.");
    return Outcome::Cancelled;
  }
  vtkErrorWithObjectMacro(self, << label << ": " << ctx.Error());
  return Outcome::Failed;
}

// ----------------------------------------------------------------- n-body
void WritePeakPoints(const std::vector<PeakRecord>& peaks, vtkPolyData* out)
{
  const vtkIdType np = static_cast<vtkIdType>(peaks.size());
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToFloat();
  points->SetNumberOfPoints(np);
  auto particle = vtkSmartPointer<vtkFloatArray>::New();
  particle->SetName("Peak Particle Position");
  particle->SetNumberOfComponents(3);
  particle->SetNumberOfTuples(np);
  std::vector<float> rho(np), delta(np), saliency(np);
  std::vector<int64_t> rank(np), point(np), members(np);
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  for (vtkIdType q = 0; q < np; ++q)
  {
    const PeakRecord& p = peaks[q];
    points->SetPoint(q, p.Centre);
    particle->SetTuple(q, p.Particle);
    rho[q] = static_cast<float>(p.Density);
    delta[q] = static_cast<float>(p.Delta);
    saliency[q] = static_cast<float>(p.Saliency);
    rank[q] = q;
    point[q] = static_cast<int64_t>(p.GlobalId);
    members[q] = static_cast<int64_t>(p.Members);
    verts->InsertNextCell(1, &q);
  }
  out->SetPoints(points);
  out->SetVerts(verts);
  vtkPointData* pd = out->GetPointData();
  pd->AddArray(vtkVicinity::WrapIdValues(rank.data(), np, "Peak Id"));
  pd->AddArray(vtkVicinity::WrapIdValues(point.data(), np, "Point Id"));
  pd->AddArray(vtkVicinity::WrapFloats(rho.data(), np, 1, "Density"));
  pd->AddArray(vtkVicinity::WrapFloats(delta.data(), np, 1, "Delta"));
  pd->AddArray(vtkVicinity::WrapFloats(saliency.data(), np, 1, "Saliency"));
  pd->AddArray(vtkVicinity::WrapIdValues(members.data(), np, "Member Count"));
  pd->AddArray(particle);
  pd->SetActiveScalars("Saliency");
}

vic_peak_options MakePeakOptions(
  double minDensity, double minDelta, double deltaFactor, double minProminence, vtkIdType minMembers)
{
  vic_peak_options o;
  vic_peak_options_init(&o);
  o.min_density = minDensity;
  o.min_delta = minDelta;
  o.delta_factor = deltaFactor;
  o.min_prominence = minProminence;
  o.min_members = minMembers;
  return o;
}

NBodyChoices MakeNBodyChoices(int k, int method, bool useFeature, bool useMass, bool periodic,
  bool useBoxFromData, const double* boxLengths,
  const std::function<vtkDataArray*(int, int&)>& inputArray)
{
  NBodyChoices choices;
  choices.K = k;
  choices.Method = static_cast<vic_method>(method);
  choices.UseFeature = useFeature;
  if (useFeature)
  {
    choices.Feature = inputArray(0, choices.FeatureAssociation);
  }
  choices.UseMass = useMass;
  if (useMass)
  {
    choices.Mass = inputArray(1, choices.MassAssociation);
  }
  choices.Periodic = periodic;
  choices.UseBoxFromData = useBoxFromData;
  choices.BoxLengths = boxLengths;
  return choices;
}

Outcome SelectNBodyInputs(vtkAlgorithm* self, const char* label, vtkDataSet* input,
  const NBodyChoices& choices, NBodyLists& out)
{
  if (!SelectRows(self, label, input, choices.UseFeature, choices.Feature,
        choices.FeatureAssociation, out.Points, out.Source) ||
    !PeriodicBox(self, label, choices.Periodic, choices.UseBoxFromData, choices.BoxLengths, input,
      out.Points, out.Source, out.Box) ||
    (choices.UseMass &&
      !SelectMass(self, label, choices.Mass, choices.MassAssociation, out.Points.N, out.Mass)))
  {
    return Outcome::Failed;
  }
  return Outcome::Done;
}

Outcome BuildNBodyLists(vtkAlgorithm* self, const char* label, Context& ctx, vtkDataSet* input,
  const NBodyChoices& choices, NBodyLists& out)
{
  if (SelectNBodyInputs(self, label, input, choices, out) != Outcome::Done)
  {
    return Outcome::Failed;
  }
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = choices.Method;
  o.k = choices.K;
  const vic_data x = out.View();
  return CheckCall(self, label, ctx, vic_knn_build(ctx.Get(), &x, &o, &out.Knn));
}

// ---------------------------------------------------------------- pipeline
namespace
{
void SetOutputObject(vtkInformation* info, vtkDataObject* wanted)
{
  vtkDataObject* have = vtkDataObject::GetData(info);
  if (!have || std::strcmp(have->GetClassName(), wanted->GetClassName()) != 0)
  {
    info->Set(vtkDataObject::DATA_OBJECT(), wanted);
  }
}
} // namespace

int MirrorOutputs(vtkInformationVector** inputVector, vtkInformationVector* outputVector, int ports,
  bool pointCloudUnderMPI)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  if (!input)
  {
    return 0;
  }
  vtkMultiProcessController* c = vtkMultiProcessController::GetGlobalController();
  if (pointCloudUnderMPI && c && c->GetNumberOfProcesses() > 1 && vtkDataSet::SafeDownCast(input))
  {
    SetOutputObject(outputVector->GetInformationObject(0), vtkSmartPointer<vtkPolyData>::New());
  }
  else
  {
    SetOutputObject(
      outputVector->GetInformationObject(0), vtk::TakeSmartPointer(input->NewInstance()));
  }
  const bool composite = vtkCompositeDataSet::SafeDownCast(input) != nullptr;
  for (int port = 1; port < ports; ++port)
  {
    vtkSmartPointer<vtkDataObject> out;
    if (composite)
    {
      out = vtk::TakeSmartPointer(input->NewInstance());
    }
    else
    {
      out = vtkSmartPointer<vtkPolyData>::New();
    }
    SetOutputObject(outputVector->GetInformationObject(port), out);
  }
  return 1;
}

namespace
{
bool ProcessLeaf(Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* extra,
  const LeafFunction& process)
{
  output->ShallowCopy(input);
  if (input->GetNumberOfPoints() == 0)
  {
    return true; // nothing to do: empty in, empty out, no message
  }
  if (process(ctx, input, output, extra))
  {
    return true;
  }
  // A refusal leaves nothing behind (not the input's copy either), as
  // under MPI: a failed run never passes for a result.
  output->Initialize();
  if (extra)
  {
    extra->Initialize();
  }
  return false;
}
} // namespace

// Devices the context can open: the core says whether a given ordinal is
// usable (0 in CPU builds), the filters never talk to CUDA themselves.
int UsableDevices()
{
  int count = 0;
  for (int d = 0; d < 64; ++d)
  {
    vic_ctx_options o;
    vic_ctx_options_init(&o);
    o.backend = VIC_BACKEND_CUDA;
    o.device = d;
    vic_ctx* c = nullptr;
    if (vic_ctx_create(&o, &c) != VIC_OK)
    {
      break;
    }
    const int usable = vic_cuda_available(c);
    vic_ctx_destroy(c);
    if (!usable)
    {
      break;
    }
    ++count;
  }
  return count;
}

namespace
{
// The MPI path of ProcessInput: every rank gets here (collectives below
// need them all) and agrees on refusals before anything else.
int ProcessOnRanks(vtkAlgorithm* self, const char* label, const ContextSettings& settings,
  vtkDataObject* input, vtkDataObject* out0, vtkDataObject* out1,
  vtkMultiProcessController* controller, const LeafFunction& distributed)
{
  auto* inDS = vtkDataSet::SafeDownCast(input);
  int composite = (input && !inDS) ? 1 : 0, anyComposite = 0;
  controller->AllReduce(&composite, &anyComposite, 1, vtkCommunicator::MAX_OP);
  if (!distributed || anyComposite)
  {
    vtkErrorWithObjectMacro(self, << label << ": "
                                  << (distributed
                                         ? "composite inputs (multiblock / partitioned collections) "
                                           "are not supported under MPI with several processes; "
                                           "apply Merge Blocks first."
                                         : "this filter does not run under MPI with several "
                                           "processes; run it in a single process."));
    return 0;
  }
  int device = settings.Device;
  if (settings.Backend != VIC_BACKEND_CPU)
  {
    device = DeviceForRank(controller->GetLocalProcessId(), settings.Device, UsableDevices());
  }
  Context ctx(self);
  const bool created = ctx.Create(settings.Backend, device, settings.Threads, settings.Seed);
  if (!created)
  {
    vtkErrorWithObjectMacro(self, << label << ": " << ctx.Error());
  }
  int bad = created ? 0 : 1, anyBad = 0;
  controller->AllReduce(&bad, &anyBad, 1, vtkCommunicator::MAX_OP);
  if (anyBad)
  {
    return 0;
  }
  // No early return for empty pieces: the distributed function is
  // collective, and a rank without input points may own points after the
  // redistribution.
  return distributed(ctx, inDS, vtkDataSet::SafeDownCast(out0), vtkPolyData::SafeDownCast(out1))
    ? 1
    : 0;
}
} // namespace

int ProcessInput(vtkAlgorithm* self, const char* label, const ContextSettings& settings,
  vtkInformationVector** inputVector, vtkInformationVector* outputVector, int ports,
  const LeafFunction& process, const LeafFunction& distributed)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* out0 = vtkDataObject::GetData(outputVector, 0);
  vtkDataObject* out1 = ports > 1 ? vtkDataObject::GetData(outputVector, 1) : nullptr;
  auto* inDS = vtkDataSet::SafeDownCast(input);
  auto* inTree = vtkDataObjectTree::SafeDownCast(input);

  vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
  if (controller && controller->GetNumberOfProcesses() > 1)
  {
    return ProcessOnRanks(self, label, settings, input, out0, out1, controller, distributed);
  }
  if (!inDS && !inTree)
  {
    vtkErrorWithObjectMacro(self, << label << ": input of type "
                                  << (input ? input->GetClassName() : "(none)")
                                  << " is not supported (data sets and multiblock/partitioned "
                                     "collections are).");
    return 0;
  }

  Context ctx(self);
  if (!ctx.Create(settings.Backend, settings.Device, settings.Threads, settings.Seed, settings.Devices))
  {
    vtkErrorWithObjectMacro(self, << label << ": " << ctx.Error());
    return 0;
  }
  if (inDS)
  {
    return ProcessLeaf(
             ctx, inDS, vtkDataSet::SafeDownCast(out0), vtkPolyData::SafeDownCast(out1), process)
      ? 1
      : 0;
  }

  auto* outTree = vtkDataObjectTree::SafeDownCast(out0);
  auto* extraTree = vtkDataObjectTree::SafeDownCast(out1);
  outTree->CopyStructure(inTree);
  if (extraTree)
  {
    extraTree->CopyStructure(inTree);
  }
  vtkSmartPointer<vtkDataObjectTreeIterator> it;
  it.TakeReference(inTree->NewTreeIterator());
  it->SkipEmptyNodesOn();
  int leaves = 0;
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
  {
    ++leaves;
  }
  int leaf = 0;
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem(), ++leaf)
  {
    auto* block = vtkDataSet::SafeDownCast(it->GetCurrentDataObject());
    if (!block)
    {
      vtkWarningWithObjectMacro(self, << label << ": block " << leaf << " is a "
                                      << it->GetCurrentDataObject()->GetClassName()
                                      << ", not a data set; it is left out.");
      continue;
    }
    ctx.SetProgressRange(static_cast<double>(leaf) / leaves, static_cast<double>(leaf + 1) / leaves);
    vtkSmartPointer<vtkDataSet> outBlock = vtk::TakeSmartPointer(block->NewInstance());
    auto extra = vtkSmartPointer<vtkPolyData>::New();
    if (!ProcessLeaf(ctx, block, outBlock, extraTree ? extra.Get() : nullptr, process))
    {
      return 0;
    }
    outTree->SetDataSet(it, outBlock);
    if (extraTree)
    {
      extraTree->SetDataSet(it, extra);
    }
  }
  return 1;
}

// ----------------------------------------------------------------- results
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

// ------------------------------------------------------------------ report
void AddFieldString(vtkFieldData* fd, const char* name, const std::string& value)
{
  auto a = vtkSmartPointer<vtkStringArray>::New();
  a->SetName(name);
  a->InsertNextValue(value);
  fd->AddArray(a);
}

void AddFieldDouble(vtkFieldData* fd, const std::string& name, double value)
{
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name.c_str());
  a->InsertNextValue(value);
  fd->AddArray(a);
}

void AddFieldInt(vtkFieldData* fd, const char* name, vtkIdType value)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->InsertNextValue(value);
  fd->AddArray(a);
}

void WriteReport(const vic_report& r, vic_metric metric, int dimension, const char* source,
  vtkFieldData* fd)
{
  AddFieldInt(fd, "k", r.k);
  AddFieldInt(fd, "k Requested", r.k_requested);
  AddFieldString(fd, "Method", vic_method_name(r.method));
  AddFieldString(fd, "Method Reason", r.reason);
  AddFieldString(fd, "Backend", vic_backend_name(r.backend));
  AddFieldString(fd, "Metric", vic_metric_name(metric));
  AddFieldString(fd, "Rows", source);
  AddFieldInt(fd, "Dimension", dimension);
  for (int i = 0; i < r.n_stages && i < VIC_MAX_STAGES; ++i)
  {
    AddFieldDouble(fd, std::string("Seconds ") + r.stages[i].name, r.stages[i].seconds);
  }
  if (r.backend == VIC_BACKEND_CUDA)
  {
    AddFieldDouble(fd, "Seconds Transfer", r.seconds_transfer);
    AddFieldDouble(fd, "Seconds Kernel", r.seconds_kernel);
    if (r.device_peak_bytes > 0) // the density and peak calls: device memory, slabs, GPUs
    {
      AddFieldInt(fd, "Device Peak Bytes", static_cast<vtkIdType>(r.device_peak_bytes));
      AddFieldInt(fd, "Slabs", r.slabs);
      AddFieldInt(fd, "Devices Used", r.devices_used);
    }
  }
  AddFieldDouble(fd, "Seconds Total", r.seconds_total);
  AddFieldDouble(fd, "d_nn1 Mean", r.dnn1_mean);
  AddFieldDouble(fd, "d_nn1 Max", r.dnn1_max);
  AddFieldDouble(fd, "Recall Estimate", r.recall_estimate);
  AddFieldInt(fd, "Recall Sample", r.recall_sample);
  AddFieldInt(fd, "Warnings", r.warnings);
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
