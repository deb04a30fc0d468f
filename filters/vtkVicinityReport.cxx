#include "vtkVicinityReport.h"

#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkStringArray.h>
#include <vtkSmartPointer.h>

namespace vtkVicinity
{

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

} // namespace vtkVicinity
