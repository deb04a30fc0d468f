#include "vtkVicinityKnnDensity.h"
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityFilterSupport.h"

#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkMPIController.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <chrono>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkVicinityKnnDensity);

namespace
{
const char* const Label = "kNN Density";
}

vtkVicinityKnnDensity::vtkVicinityKnnDensity()
  : vtkVicinityKnnAlgorithm(1, 2)
{
  this->K = 32;
  // Array 0: the feature rows (the superclass's); array 1: masses.
  this->SetInputArrayToProcess(
    1, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
  vic_density_options o;
  vic_density_options_init(&o);
  this->SPHConvention = o.sph;
  this->TotalMass = o.total_mass;
}

const char* vtkVicinityKnnDensity::GetLabel() const
{
  return Label;
}

bool vtkVicinityKnnDensity::ProcessDataSet(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData*)
{
  const vtkVicinity::NBodyChoices choices = vtkVicinity::MakeNBodyChoices(this->K, this->Method,
    this->BuildOptions, this->UseFeatureArray, this->UseMassArray, this->Periodic, this->UseBoxFromData,
    this->BoxLengths,
    [&](int idx, int& association) { return this->GetInputArrayToProcess(idx, input, association); });

  // The bar: kNN lists 0-0.8, densities 0.8-1 (the lists dominate).
  ctx.SetCallRange(0.0, 0.8);
  vtkVicinity::NBodyLists lists;
  vtkVicinity::Outcome outcome = vtkVicinity::BuildNBodyLists(this, Label, ctx, input, choices, lists);
  if (outcome == vtkVicinity::Outcome::Done)
  {
    ctx.SetCallRange(0.8, 1.0);
    const vic_data x = lists.View();
    const vtkIdType n = lists.Points.N;
    std::vector<float> knnDensity(n), sphDensity(n), h(n);
    vic_density_options o;
    vic_density_options_init(&o);
    o.sph = static_cast<vic_sph_convention>(this->SPHConvention);
    o.total_mass = this->TotalMass;
    vic_dnn1_stats stats;
    const auto t0 = std::chrono::steady_clock::now();
    vic_status s = vic_density(ctx.Get(), &x, &lists.Knn, lists.MassOrNull(), &o,
      knnDensity.data(), sphDensity.data(), h.data());
    const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s == VIC_OK)
    {
      s = vic_dnn1_stats_compute(ctx.Get(), &lists.Knn, x.d, &stats);
    }
    outcome = vtkVicinity::CheckCall(this, Label, ctx, s);
    if (outcome == vtkVicinity::Outcome::Done)
    {
      vtkPointData* pd = output->GetPointData();
      pd->AddArray(vtkVicinity::WrapFloats(knnDensity.data(), n, 1, "Density"));
      pd->AddArray(vtkVicinity::WrapFloats(sphDensity.data(), n, 1, "SPH Density"));
      pd->AddArray(vtkVicinity::DistanceColumn(lists.Knn, 0, "d_nn1"));
      pd->AddArray(vtkVicinity::WrapFloats(h.data(), n, 1, "Smoothing Length"));
      pd->SetActiveScalars("Density");

      auto fd = vtkSmartPointer<vtkFieldData>::New();
      fd->ShallowCopy(input->GetFieldData());
      vtkVicinity::WriteReport(lists.Knn.report, VIC_L2, x.d, lists.Source.c_str(), fd);
      vtkVicinity::AddFieldDouble(fd, "Global Density", stats.global_density);
      vtkVicinity::AddFieldString(
        fd, "SPH Convention", this->SPHConvention == VIC_SPH_GADGET ? "Gadget" : "pynbody");
      std::string mass = "unit masses";
      if (this->UseMassArray)
      {
        mass = std::string("array ") + (choices.Mass->GetName() ? choices.Mass->GetName() : "");
      }
      else if (this->TotalMass > 0)
      {
        mass = "total mass " + std::to_string(this->TotalMass) + " shared equally";
      }
      vtkVicinity::AddFieldString(fd, "Mass", mass);
      vtkVicinity::AddFieldDouble(fd, "Seconds Density", seconds);
      output->SetFieldData(fd);
    }
  }
  if (outcome == vtkVicinity::Outcome::Cancelled)
  {
    output->Initialize();
  }
  return outcome != vtkVicinity::Outcome::Failed;
}

bool vtkVicinityKnnDensity::ProcessDistributed(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData*)
{
  using vtkVicinity::Outcome;
  if (this->UseFeatureArray || this->Periodic)
  {
    vtkErrorMacro(<< Label << ": under MPI with several processes densities are computed on the "
                              "point coordinates, not periodic; a feature array or a periodic box "
                              "needs a single process.");
    return false;
  }
  vtkVicinity::DistributedPoints dp(vtkVicinity::MultiProcessController());
  int massAssociation = -1;
  vtkDataArray* massArray =
    this->UseMassArray ? this->GetInputArrayToProcess(1, input, massAssociation) : nullptr;
  if (dp.Redistribute(this, Label, ctx, input, this->K, this->UseMassArray, massArray, massAssociation) !=
    vtkVicinity::Outcome::Done)
  {
    output->Initialize();
    return false;
  }
  vtkVicinity::NBodyChoices choices;
  choices.K = this->K;
  choices.Method = static_cast<vic_method>(this->Method);
  choices.Options = this->BuildOptions;
  choices.UseMass = this->UseMassArray;
  vtkVicinity::NBodyLists lists;
  auto build = [&](vtkPolyData* local, const vic_knn** out) {
    vic_knn_free(&lists.Knn);
    *out = &lists.Knn;
    if (local->GetNumberOfPoints() < 2)
    {
      lists.Knn.n = local->GetNumberOfPoints(); // no neighbours here: the halo grows
      return Outcome::Done;
    }
    if (this->UseMassArray) // the array travels with the points, by name
    {
      choices.Mass = this->GetInputArrayToProcess(1, local, choices.MassAssociation);
    }
    return vtkVicinity::BuildNBodyLists(this, Label, ctx, local, choices, lists);
  };
  Outcome outcome = dp.BuildWithHalo(this, Label, this->K, build);
  const vtkIdType n = lists.Points.N;
  std::vector<float> knnDensity(n), sphDensity(n), h(n);
  vic_density_options o;
  vic_density_options_init(&o);
  o.sph = static_cast<vic_sph_convention>(this->SPHConvention);
  std::vector<float> shared;
  if (!this->UseMassArray && this->TotalMass > 0)
  {
    // The total mass is shared by all points of all ranks, not this rank's.
    shared.assign(n, static_cast<float>(this->TotalMass / dp.GlobalPoints()));
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (outcome == Outcome::Done && n >= 2)
  {
    const vic_data x = lists.View();
    outcome = vtkVicinity::CheckCall(this, Label, ctx,
      vic_density(ctx.Get(), &x, &lists.Knn, shared.empty() ? lists.MassOrNull() : shared.data(), &o,
        knnDensity.data(), sphDensity.data(), h.data()));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (outcome != Outcome::Failed && outcome != Outcome::Cancelled)
  {
    outcome = Outcome::Done;
  }
  outcome = vtkVicinity::AgreeOutcome(dp.Controller(), this, Label, outcome);
  if (outcome != Outcome::Done)
  {
    output->Initialize();
    return outcome == Outcome::Cancelled;
  }

  vic_knn owned = dp.OwnedLists(lists.Knn);
  const vic_report report = dp.GlobalReport(owned);
  const vtkIdType m = owned.n;
  auto* cloud = vtkPolyData::SafeDownCast(output);
  cloud->ShallowCopy(dp.OwnedCloud());
  vtkPointData* pd = cloud->GetPointData();
  pd->AddArray(vtkVicinity::WrapFloats(dp.OwnedValues(knnDensity.data(), 1).data(), m, 1, "Density"));
  pd->AddArray(
    vtkVicinity::WrapFloats(dp.OwnedValues(sphDensity.data(), 1).data(), m, 1, "SPH Density"));
  pd->AddArray(vtkVicinity::DistanceColumn(owned, 0, "d_nn1"));
  pd->AddArray(vtkVicinity::WrapFloats(dp.OwnedValues(h.data(), 1).data(), m, 1, "Smoothing Length"));
  pd->SetActiveScalars("Density");

  // The global density is the core's function of the global mean d_nn1:
  // ask it on a one-row list holding that mean.
  int64_t oneId = 0;
  float oneDist = static_cast<float>(report.dnn1_mean);
  vic_knn one{};
  one.n = 1;
  one.k = 1;
  one.ids = &oneId;
  one.dist = &oneDist;
  vic_dnn1_stats stats{};
  vic_dnn1_stats_compute(ctx.Get(), &one, 3, &stats);

  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(report, VIC_L2, 3, "Point Coordinates", fd);
  vtkVicinity::AddFieldDouble(fd, "Global Density", stats.global_density);
  vtkVicinity::AddFieldString(
    fd, "SPH Convention", this->SPHConvention == VIC_SPH_GADGET ? "Gadget" : "pynbody");
  std::string mass = "unit masses";
  if (this->UseMassArray)
  {
    mass = std::string("array ") + (choices.Mass && choices.Mass->GetName() ? choices.Mass->GetName() : "");
  }
  else if (this->TotalMass > 0)
  {
    mass = "total mass " + std::to_string(this->TotalMass) + " shared equally";
  }
  vtkVicinity::AddFieldString(fd, "Mass", mass);
  vtkVicinity::AddFieldDouble(fd, "Seconds Density", vtkVicinity::AllMax(dp.Controller(), seconds));
  dp.WriteHaloReport(fd);
  cloud->SetFieldData(fd);
  vic_knn_free(&owned);
  return true;
}

void vtkVicinityKnnDensity::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "UseMassArray: " << this->UseMassArray << "\n";
  os << indent << "TotalMass: " << this->TotalMass << "\n";
  os << indent << "SPHConvention: " << (this->SPHConvention == VIC_SPH_GADGET ? "Gadget" : "pynbody")
     << "\n";
}
