#include "vtkVicinitySphResample.h"

#include <vtkPolyData.h> // vtkVicinityDistributedPoints.h returns one
#include "vtkVicinityDeviceForRank.h"
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityFilterSupport.h"

#include <vtkCommunicator.h>
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkMPIController.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkStreamingDemandDrivenPipeline.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkVicinitySphResample);

namespace
{
const char* const Label = "SPH Resample";

int Cells(const int resolution[3], int mode, int axis)
{
  return axis < 2 ? resolution[axis] : (mode == vtkVicinitySphResample::VOLUME ? resolution[2] : 1);
}

// A one-component point array as float32 (n values), else an error.
bool PointFloats(vtkAlgorithm* self, vtkDataArray* a, vtkIdType n, const std::string& what,
  std::vector<float>& out)
{
  if (!a || a->GetNumberOfComponents() != 1 || a->GetNumberOfTuples() != n)
  {
    vtkErrorWithObjectMacro(self, << Label << ": the " << what
                                  << " must be a one-component point array with one value per point"
                                  << (a && a->GetName() ? std::string(" ('") + a->GetName() + "')" : std::string()));
    return false;
  }
  out.resize(n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    out[i] = static_cast<float>(a->GetComponent(i, 0));
  }
  return true;
}
}

vtkVicinitySphResample::vtkVicinitySphResample()
{
  // Array 0: smoothing lengths; array 1: masses.
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "Smoothing Length");
  this->SetInputArrayToProcess(
    1, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
  vic_sph_options o;
  vic_sph_options_init(&o);
  this->Mode = o.mode;
  this->Kernel = o.kernel;
  this->SPHConvention = o.sph;
}

void vtkVicinitySphResample::AddMappedArray(const char* name)
{
  if (name && *name)
  {
    this->MappedArrays.emplace_back(name);
    this->Modified();
  }
}

void vtkVicinitySphResample::ClearMappedArrays()
{
  if (!this->MappedArrays.empty())
  {
    this->MappedArrays.clear();
    this->Modified();
  }
}

int vtkVicinitySphResample::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
  return 1;
}

int vtkVicinitySphResample::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  // The extent is known from the resolution; origin, spacing and axes
  // follow the particles and are set in RequestData.
  vtkInformation* out = outputVector->GetInformationObject(0);
  int extent[6] = { 0, Cells(this->Resolution, this->Mode, 0) - 1, 0,
    Cells(this->Resolution, this->Mode, 1) - 1, 0, Cells(this->Resolution, this->Mode, 2) - 1 };
  out->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), extent, 6);
  return 1;
}

int vtkVicinitySphResample::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataSet* input = vtkDataSet::GetData(inputVector[0], 0);
  vtkImageData* output = vtkImageData::GetData(outputVector, 0);
  if (!input || !output)
  {
    vtkErrorMacro(<< Label << ": needs a data set with points as input");
    return 0;
  }
  // Several MPI processes: every step below is collective from here on.
  vtkMPIController* mpi = vtkVicinity::MultiProcessController();
  const int rank = mpi ? mpi->GetLocalProcessId() : 0;
  using vtkVicinity::Outcome;
  auto agree = [&](Outcome o) { return mpi ? vtkVicinity::AgreeOutcome(mpi, this, Label, o) : o; };

  vtkVicinity::Context ctx(this);
  Outcome outcome = Outcome::Done;
  const int device = mpi && this->Backend != VIC_BACKEND_CPU
    ? vtkVicinity::DeviceForRank(rank, this->Device, vtkVicinity::UsableDevices())
    : this->Device;
  if (!ctx.Create(static_cast<vic_backend>(this->Backend), device, this->Threads, 0))
  {
    vtkErrorMacro(<< Label << ": " << ctx.Error());
    outcome = Outcome::Failed;
  }
  vtkVicinity::Rows rows;
  vtkVicinity::ExtractPointRows(input, rows);
  const vtkIdType n = rows.N;
  const vtkIdType globalN = mpi ? vtkVicinity::AllSumIds(mpi, n) : n;
  const double* box = this->Periodic ? this->BoxLengths : nullptr;
  const vic_data x = rows.View(VIC_L2, box);

  // masses: an array, or the total mass shared by every particle of every rank
  std::vector<float> mass;
  if (outcome == Outcome::Done && n > 0 && this->UseMassArray)
  {
    int association = -1;
    vtkDataArray* a = this->GetInputArrayToProcess(1, input, association);
    if (!vtkVicinity::SelectMass(this, Label, a, association, n, mass))
    {
      outcome = Outcome::Failed;
    }
  }
  else if (!this->UseMassArray && this->TotalMass > 0 && n > 0)
  {
    mass.assign(n, static_cast<float>(this->TotalMass / static_cast<double>(globalN)));
  }
  const float* massOrNull = mass.empty() ? nullptr : mass.data();

  // smoothing lengths
  std::vector<float> h;
  if (outcome == Outcome::Done && n > 0)
  {
    if (this->SmoothingSource == FROM_NEIGHBOURS)
    {
      if (mpi)
      {
        vtkErrorMacro(<< Label << ": under MPI the smoothing lengths must come from a point array "
                                  "(kNN Density computes them across ranks); computing them here "
                                  "would miss the neighbours on other ranks.");
        outcome = Outcome::Failed;
      }
      else
      {
        h.resize(n);
        vic_density_options dop;
        vic_density_options_init(&dop);
        dop.sph = static_cast<vic_sph_convention>(this->SPHConvention);
        ctx.SetCallRange(0.0, 0.6);
        outcome = vtkVicinity::CheckCall(this, Label, ctx,
          vic_knn_density(ctx.Get(), &x, this->K, massOrNull, &dop, nullptr, nullptr, nullptr, h.data()));
      }
    }
    else
    {
      int association = -1;
      vtkDataArray* a = this->GetInputArrayToProcess(0, input, association);
      if (!a)
      {
        vtkErrorMacro(<< Label << ": no smoothing-length array on the points (run kNN Density first "
                                  "and pick its \"Smoothing Length\", or compute them here with k "
                                  "neighbours)");
        outcome = Outcome::Failed;
      }
      else if (!PointFloats(this, a, n, "smoothing-length array", h))
      {
        outcome = Outcome::Failed;
      }
    }
  }
  // mapped arrays
  std::vector<std::vector<float>> values(this->MappedArrays.size());
  std::vector<const float*> arrays;
  for (size_t a = 0; a < this->MappedArrays.size() && outcome == Outcome::Done; ++a)
  {
    const std::string& name = this->MappedArrays[a];
    vtkDataArray* arr = input->GetPointData()->GetArray(name.c_str());
    if (n > 0 && !arr)
    {
      vtkErrorMacro(<< Label << ": no point array '" << name << "' to map");
      outcome = Outcome::Failed;
      break;
    }
    if (n > 0 && !PointFloats(this, arr, n, "mapped array '" + name + "'", values[a]))
    {
      outcome = Outcome::Failed;
      break;
    }
    arrays.push_back(values[a].data());
  }
  outcome = agree(outcome);

  // the frame and the region
  vic_sph_options o;
  vic_sph_options_init(&o);
  o.mode = static_cast<vic_sph_mode>(this->Mode);
  o.kernel = static_cast<vic_sph_kernel>(this->Kernel);
  o.sph = static_cast<vic_sph_convention>(this->SPHConvention);
  for (int k = 0; k < 3; ++k)
  {
    o.resolution[k] = Cells(this->Resolution, this->Mode, k);
  }
  if (this->Direction == CUSTOM)
  {
    if (vic_sph_options_set_view(&o, this->ViewDirection, this->ViewUp) != VIC_OK)
    {
      vtkErrorMacro(<< Label << ": the view direction (" << this->ViewDirection[0] << ", "
                    << this->ViewDirection[1] << ", " << this->ViewDirection[2]
                    << ") must be finite and not zero");
      outcome = Outcome::Failed;
    }
  }
  else
  {
    // w along the axis; u, v the next two axes in cyclic order (u x v = w)
    const int w = this->Direction, u = (w + 1) % 3, v = (w + 2) % 3;
    std::fill(o.u, o.u + 3, 0.0);
    std::fill(o.v, o.v + 3, 0.0);
    o.u[u] = 1;
    o.v[v] = 1;
  }
  double axes[3][3];
  for (int k = 0; k < 3; ++k)
  {
    axes[0][k] = o.u[k];
    axes[1][k] = o.v[k];
  }
  axes[2][0] = o.u[1] * o.v[2] - o.u[2] * o.v[1];
  axes[2][1] = o.u[2] * o.v[0] - o.u[0] * o.v[2];
  axes[2][2] = o.u[0] * o.v[1] - o.u[1] * o.v[0];
  if (this->FollowDataBounds && outcome == Outcome::Done)
  {
    // the particles' extent along each axis, grown by the largest kernel;
    // periodic axes of a box: the box itself
    const double support = this->SPHConvention == VIC_SPH_GADGET ? 1.0 : 2.0;
    double lo[3], hi[3], reach = 0;
    for (int k = 0; k < 3; ++k)
    {
      lo[k] = std::numeric_limits<double>::infinity();
      hi[k] = -lo[k];
    }
    for (vtkIdType i = 0; i < n; ++i)
    {
      const float* p = rows.Values.data() + 3 * i;
      for (int k = 0; k < 3; ++k)
      {
        const double c = axes[k][0] * p[0] + axes[k][1] * p[1] + axes[k][2] * p[2];
        lo[k] = std::min(lo[k], c);
        hi[k] = std::max(hi[k], c);
      }
      reach = std::max(reach, support * h[i]);
    }
    if (mpi)
    {
      for (int k = 0; k < 3; ++k)
      {
        lo[k] = -vtkVicinity::AllMax(mpi, -lo[k]);
        hi[k] = vtkVicinity::AllMax(mpi, hi[k]);
      }
      reach = vtkVicinity::AllMax(mpi, reach);
    }
    if (globalN == 0)
    {
      vtkErrorMacro(<< Label << ": no particles, so no bounds to follow; give Centre and Size");
      outcome = Outcome::Failed;
    }
    const bool wholeBox = box && box[0] > 0 && box[1] > 0 && box[2] > 0;
    double centre[3] = { 0, 0, 0 };
    for (int k = 0; k < 3 && outcome == Outcome::Done; ++k)
    {
      double a = lo[k] - reach, b = hi[k] + reach;
      if (wholeBox)
      {
        // the box's extent along this axis (its corners projected)
        a = std::numeric_limits<double>::infinity();
        b = -a;
        for (int corner = 0; corner < 8; ++corner)
        {
          double c = 0;
          for (int d = 0; d < 3; ++d)
          {
            c += axes[k][d] * ((corner >> d) & 1 ? box[d] : 0.0);
          }
          a = std::min(a, c);
          b = std::max(b, c);
        }
      }
      o.size[k] = b - a;
      for (int d = 0; d < 3; ++d)
      {
        centre[d] += 0.5 * (a + b) * axes[k][d];
      }
    }
    std::copy(centre, centre + 3, o.centre);
    if (this->Mode == PROJECTION)
    {
      o.size[2] = 0; // the whole line of sight
    }
  }
  else
  {
    std::copy(this->Centre, this->Centre + 3, o.centre);
    std::copy(this->Size, this->Size + 3, o.size);
  }
  outcome = agree(outcome);

  vic_sph_image im{};
  if (outcome == Outcome::Done)
  {
    ctx.SetCallRange(this->SmoothingSource == FROM_NEIGHBOURS ? 0.6 : 0.0, mpi ? 0.9 : 1.0);
    outcome = vtkVicinity::CheckCall(this, Label, ctx,
      vic_sph_resample(ctx.Get(), &x, massOrNull, h.empty() ? nullptr : h.data(),
        static_cast<int32_t>(arrays.size()), arrays.empty() ? nullptr : arrays.data(), &o, &im));
  }
  outcome = agree(outcome);
  if (outcome != Outcome::Done)
  {
    vic_sph_image_free(&im);
    output->Initialize();
    return outcome == Outcome::Cancelled;
  }

  const vtkIdType cells = static_cast<vtkIdType>(im.nx) * im.ny * im.nz;
  const int na = im.n_arrays;
  // density and, per array, density times mean: sums over ranks
  std::vector<float> sums(static_cast<size_t>(cells) * (1 + na));
  std::copy(im.density, im.density + cells, sums.begin());
  for (int a = 0; a < na; ++a)
  {
    for (vtkIdType q = 0; q < cells; ++q)
    {
      const float mean = im.means[static_cast<size_t>(a) * cells + q];
      sums[static_cast<size_t>(a + 1) * cells + q] = std::isnan(mean) ? 0.0f : mean * im.density[q];
    }
  }
  double deposited = im.mass_deposited, seconds = im.report.seconds_total;
  if (mpi)
  {
    seconds = vtkVicinity::AllMax(mpi, seconds);
    std::vector<float> total(rank == 0 ? sums.size() : 0);
    mpi->Reduce(sums.data(), rank == 0 ? total.data() : nullptr, static_cast<vtkIdType>(sums.size()),
      vtkCommunicator::SUM_OP, 0);
    deposited = vtkVicinity::AllSum(mpi, deposited);
    sums.swap(total);
    this->UpdateProgress(1.0);
  }
  if (rank != 0)
  {
    output->Initialize(); // rank 0 holds the summed image
    vic_sph_image_free(&im);
    return 1;
  }
  output->SetExtent(0, im.nx - 1, 0, im.ny - 1, 0, im.nz - 1);
  output->SetOrigin(im.origin);
  output->SetSpacing(im.spacing);
  double m[9];
  for (int r = 0; r < 3; ++r)
  {
    for (int c = 0; c < 3; ++c)
    {
      m[3 * r + c] = im.axes[c][r]; // columns are u, v, w
    }
  }
  output->SetDirectionMatrix(m);
  vtkPointData* pd = output->GetPointData();
  pd->Initialize();
  const char* densityName = this->Mode == PROJECTION ? "Surface Density" : "Density";
  pd->AddArray(vtkVicinity::WrapFloats(sums.data(), cells, 1, densityName));
  std::vector<float> mean(cells);
  for (int a = 0; a < na; ++a)
  {
    for (vtkIdType q = 0; q < cells; ++q)
    {
      const float d = sums[q];
      mean[q] = d > 0 ? sums[static_cast<size_t>(a + 1) * cells + q] / d
                      : std::numeric_limits<float>::quiet_NaN();
    }
    std::string name = this->MappedArrays[a];
    if (name == densityName)
    {
      name += " (mean)"; // the density array keeps its name
    }
    pd->AddArray(vtkVicinity::WrapFloats(mean.data(), cells, 1, name.c_str()));
  }
  pd->SetActiveScalars(densityName);

  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::AddFieldString(fd, "SPH Map", im.report.reason);
  vtkVicinity::AddFieldString(fd, "Backend", vic_backend_name(im.report.backend));
  vtkVicinity::AddFieldString(
    fd, "SPH Convention", this->SPHConvention == VIC_SPH_GADGET ? "Gadget" : "pynbody");
  vtkVicinity::AddFieldDouble(fd, "Mass Deposited", deposited);
  vtkVicinity::AddFieldDouble(fd, "Seconds SPH Map", seconds);
  vtkVicinity::AddFieldInt(fd, "Particles", globalN);
  output->SetFieldData(fd);
  vic_sph_image_free(&im);
  return 1;
}

void vtkVicinitySphResample::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Mode: " << this->Mode << "\n";
  os << indent << "Kernel: " << this->Kernel << "\n";
  os << indent << "SPHConvention: " << this->SPHConvention << "\n";
  os << indent << "Direction: " << this->Direction << "\n";
  os << indent << "Resolution: " << this->Resolution[0] << " " << this->Resolution[1] << " "
     << this->Resolution[2] << "\n";
  os << indent << "FollowDataBounds: " << this->FollowDataBounds << "\n";
  os << indent << "SmoothingSource: " << this->SmoothingSource << "\n";
  os << indent << "K: " << this->K << "\n";
  os << indent << "MappedArrays: " << this->MappedArrays.size() << "\n";
}
