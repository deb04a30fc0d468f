#include "vtkVicinityKnnAlgorithm.h"
#include "vtkVicinityFilterSupport.h"

#include <vtkDataSet.h>
#include <vtkDataSetAttributes.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkPolyData.h>

vtkVicinityKnnAlgorithm::vtkVicinityKnnAlgorithm(int ports, int minimumK)
  : MinimumK(minimumK)
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(ports);
  // Default feature array: the active point scalars.
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
  this->BuildOptions = vtkSmartPointer<vtkVicinityBuildOptions>::New();
}

void vtkVicinityKnnAlgorithm::SetBuildOptions(vtkVicinityBuildOptions* options)
{
  if (vtkVicinity::AssignBuildOptions(this->BuildOptions, options))
  {
    this->Modified();
  }
}

vtkMTimeType vtkVicinityKnnAlgorithm::GetMTime()
{
  return vtkVicinity::LaterMTime(this->Superclass::GetMTime(), this->BuildOptions);
}

void vtkVicinityKnnAlgorithm::SetK(int k)
{
  // Kept as given: a k out of range is an error when the filter runs
  // (RequestData), never silently another k.
  if (k != this->K)
  {
    this->K = k;
    this->Modified();
  }
}

int vtkVicinityKnnAlgorithm::FillInputPortInformation(int, vtkInformation* info)
{
  info->Remove(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE());
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

int vtkVicinityKnnAlgorithm::FillOutputPortInformation(int, vtkInformation* info)
{
  // Port 0 mirrors the input's type, port 1 is poly data (or a composite of
  // them): RequestDataObject creates the concrete objects.
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkDataObject");
  return 1;
}

int vtkVicinityKnnAlgorithm::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  return vtkVicinity::MirrorOutputs(
    inputVector, outputVector, this->GetNumberOfOutputPorts(), !this->UseFeatureArray);
}

int vtkVicinityKnnAlgorithm::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  if (this->K < this->MinimumK || this->K > 4096)
  {
    vtkErrorMacro(<< this->GetLabel() << ": k = " << this->K << " is out of range: k must be between "
                  << this->MinimumK << " and 4096"
                  << (this->MinimumK > 1 ? " (the density needs a k-th neighbour beyond the nearest)." : "."));
    return 0;
  }
  // An abort request stays until it is cleared (SetAbortExecute(0); the
  // GUI clears it when the filter's properties are edited): VTK runs an
  // aborted filter again at every later request (another port, view or
  // render), and those runs return empty outputs at once instead of
  // starting the search again.
  if (this->Cancelled && this->GetAbortExecute())
  {
    for (int port = 0; port < this->GetNumberOfOutputPorts(); ++port)
    {
      if (vtkDataObject* out = vtkDataObject::GetData(outputVector, port))
      {
        out->Initialize();
      }
    }
    return 1;
  }
  this->Cancelled = false;
  vtkVicinity::ContextSettings settings;
  settings.Backend = static_cast<vic_backend>(this->Backend);
  settings.Device = this->Device;
  settings.Devices = this->Devices;
  settings.Threads = this->Threads;
  settings.Seed = static_cast<uint64_t>(static_cast<uint32_t>(this->Seed));
  const int ok = vtkVicinity::ProcessInput(this, this->GetLabel(), settings, inputVector, outputVector,
    this->GetNumberOfOutputPorts(),
    [this](vtkVicinity::Context& ctx, vtkDataSet* in, vtkDataSet* out, vtkPolyData* extra) {
      return this->ProcessDataSet(ctx, in, out, extra);
    },
    [this](vtkVicinity::Context& ctx, vtkDataSet* in, vtkDataSet* out, vtkPolyData* extra) {
      return this->ProcessDistributed(ctx, in, out, extra);
    });
  this->Cancelled = this->GetAbortExecute() != 0;
  return ok;
}

void vtkVicinityKnnAlgorithm::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "K: " << this->K << "\n";
  os << indent << "Method: " << vic_method_name(static_cast<vic_method>(this->Method)) << "\n";
  os << indent << "Backend: " << vic_backend_name(static_cast<vic_backend>(this->Backend)) << "\n";
  os << indent << "Device: " << this->Device << "\n";
  os << indent << "Devices: " << this->Devices << "\n";
  os << indent << "Threads: " << this->Threads << "\n";
  os << indent << "Seed: " << this->Seed << "\n";
  os << indent << "UseFeatureArray: " << this->UseFeatureArray << "\n";
  os << indent << "BuildOptions:\n";
  this->BuildOptions->PrintSelf(os, indent.GetNextIndent());
  os << indent << "Periodic: " << this->Periodic << " (" << this->BoxLengths[0] << ", "
     << this->BoxLengths[1] << ", " << this->BoxLengths[2] << ")"
     << (this->UseBoxFromData ? ", box from the data when it has one" : "") << "\n";
}
