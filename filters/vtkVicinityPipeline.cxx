#include "vtkVicinityPipeline.h"

#include "vtkVicinityBuildOptions.h"
#include "vtkVicinityDeviceForRank.h"

#include <vtkAlgorithm.h>
#include <vtkCommunicator.h>
#include <vtkCompositeDataSet.h>
#include <vtkDataObjectTree.h>
#include <vtkDataObjectTreeIterator.h>
#include <vtkDataSet.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkMultiProcessController.h>
#include <vtkPolyData.h>
#include <vtkSetGet.h>
#include <vtkSmartPointer.h>

#include <cstring>

namespace vtkVicinity
{

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

bool AssignBuildOptions(vtkSmartPointer<vtkVicinityBuildOptions>& slot, vtkVicinityBuildOptions* options)
{
  if (options && options == slot)
  {
    return false;
  }
  slot = options ? vtkSmartPointer<vtkVicinityBuildOptions>(options)
                 : vtkSmartPointer<vtkVicinityBuildOptions>::New();
  return true;
}

vtkMTimeType LaterMTime(vtkMTimeType filter, vtkObject* options)
{
  const vtkMTimeType theirs = options ? options->GetMTime() : 0;
  return theirs > filter ? theirs : filter;
}

} // namespace vtkVicinity
