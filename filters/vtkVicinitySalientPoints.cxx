#include "vtkVicinitySalientPoints.h"
#include "vtkVicinityFilterSupport.h"
#include "vtkVicinityHaloOutputs.h"

#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkTable.h>

#include <chrono>
#include <vector>

vtkStandardNewMacro(vtkVicinitySalientPoints);

namespace
{
const char* const Label = "Salient Points";

double SecondsSince(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Own core results for the early returns of ProcessDataSet.
struct PeaksHolder
{
  vic_peaks P{};
  ~PeaksHolder() { vic_peaks_free(&this->P); }
};
struct HalosHolder
{
  vic_halos H{};
  ~HalosHolder() { vic_halos_free(&this->H); }
};

// Output port 1 (see the class documentation for the position rule): the
// peaks as vtkVicinity::WritePeakPoints writes them under MPI too, plus
// the centre in row space when the rows are not the 3-d coordinates.
void BuildPeakPoints(vtkDataSet* input, const vic_peaks& p, const float* density, int d,
  bool centresAreCoordinates, vtkPolyData* out)
{
  std::vector<vtkVicinity::PeakRecord> records(p.n_peaks);
  for (int64_t q = 0; q < p.n_peaks; ++q)
  {
    const int64_t i = p.peak_point[q];
    vtkVicinity::PeakRecord& r = records[q];
    input->GetPoint(static_cast<vtkIdType>(i), r.Particle);
    for (int j = 0; j < 3; ++j)
    {
      r.Centre[j] = centresAreCoordinates ? p.peak_centre[q * d + j] : r.Particle[j];
    }
    r.Saliency = p.saliency[i];
    r.GlobalId = static_cast<double>(i);
    r.Density = density[i];
    r.Delta = p.delta[i];
    r.Members = static_cast<double>(p.peak_members[q]);
  }
  vtkVicinity::WritePeakPoints(records, out);
  if (!centresAreCoordinates)
  {
    out->GetPointData()->AddArray(vtkVicinity::WrapFloats(p.peak_centre, p.n_peaks, d, "Peak Centre"));
  }
}
} // namespace

vtkVicinitySalientPoints::vtkVicinitySalientPoints()
  : vtkVicinityKnnAlgorithm(2, 2)
{
  this->K = 32;
  // Array 0: the feature rows (the superclass's); array 1: masses.
  this->SetInputArrayToProcess(
    1, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
  // The thresholds' defaults are the core's, so the filter never drifts from it.
  vic_peak_options o;
  vic_peak_options_init(&o);
  this->MinDensity = o.min_density;
  this->MinDelta = o.min_delta;
  this->DeltaFactor = o.delta_factor;
  this->MinProminence = o.min_prominence;
  this->MinMembers = o.min_members;
  vic_halo_options h;
  vic_halo_options_init(&h);
  this->Overdensity = h.overdensity;
  this->OverdensityReference = static_cast<int>(h.reference);
  this->CriticalDensity = h.critical_density;
  this->MeanDensity = h.mean_density;
  this->GravitationalConstant = h.gravitational_constant;
  this->Softening = h.softening;
  this->ProfileBins = h.profile_bins;
  this->SetNumberOfOutputPorts(3);
  // Array 2: velocities.
  this->SetInputArrayToProcess(
    2, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::VECTORS);
}

int vtkVicinitySalientPoints::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == 2)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkTable");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

int vtkVicinitySalientPoints::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  if (!vtkVicinity::MirrorOutputs(inputVector, outputVector, 2, !this->UseFeatureArray))
  {
    return 0;
  }
  vtkInformation* info = outputVector->GetInformationObject(2);
  if (!vtkTable::SafeDownCast(info->Get(vtkDataObject::DATA_OBJECT())))
  {
    info->Set(vtkDataObject::DATA_OBJECT(), vtkSmartPointer<vtkTable>::New());
  }
  return 1;
}

int vtkVicinitySalientPoints::RequestData(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  this->Profiles = vtkSmartPointer<vtkTable>::New();
  this->Leaf = 0;
  const int ok = this->Superclass::RequestData(request, inputVector, outputVector);
  vtkTable* profiles = vtkTable::GetData(outputVector, 2);
  if (profiles)
  {
    profiles->ShallowCopy(this->Profiles);
  }
  this->Profiles = nullptr;
  return ok;
}

const char* vtkVicinitySalientPoints::GetLabel() const
{
  return Label;
}

bool vtkVicinitySalientPoints::ProcessDataSet(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* peaks)
{
  const vtkVicinity::NBodyChoices choices = vtkVicinity::MakeNBodyChoices(this->K, this->Method,
    this->BuildOptions, this->UseFeatureArray, this->UseMassArray, this->Periodic, this->UseBoxFromData,
    this->BoxLengths,
    [&](int idx, int& association) { return this->GetInputArrayToProcess(idx, input, association); });

  const vic_peak_options o = vtkVicinity::MakePeakOptions(
    this->MinDensity, this->MinDelta, this->DeltaFactor, this->MinProminence, this->MinMembers);

  vtkVicinity::NBodyLists lists;
  vtkVicinity::Outcome outcome = vtkVicinity::SelectNBodyInputs(this, Label, input, choices, lists);
  const vic_data x = lists.View();
  const vtkIdType n = lists.Points.N;
  std::vector<float> density;
  double secondsDensity = 0, secondsPeaks = 0;
  PeaksHolder found;
  const vic_report* report = &lists.Knn.report;
  // Exact grid lists (AUTO picks the grid for d <= 3, as asked with GRID):
  // lists, density and peaks in one core call, which on the GPU keeps the
  // lists on the device.  Same lists, density and peaks as the three calls
  // below; its time is all "Seconds Peaks".
  const bool oneCall = (choices.Method == VIC_METHOD_AUTO || choices.Method == VIC_METHOD_GRID) &&
    x.d <= 3 && choices.K >= 2 && static_cast<vtkIdType>(choices.K) < n;
  if (outcome == vtkVicinity::Outcome::Done && oneCall)
  {
    ctx.SetCallRange(0.0, 0.9);
    density.resize(n);
    const auto t0 = std::chrono::steady_clock::now();
    outcome = vtkVicinity::CheckCall(this, Label, ctx,
      vic_knn_density_peaks(ctx.Get(), &x, choices.K, lists.MassOrNull(), nullptr, &o,
        this->FriendsOfFriends ? &lists.Knn : nullptr, density.data(), nullptr, nullptr, &found.P));
    secondsPeaks = SecondsSince(t0);
    report = &found.P.report;
  }
  else if (outcome == vtkVicinity::Outcome::Done)
  {
    // The bar: kNN lists 0-0.6, density 0.6-0.65, peaks 0.65-0.9, halos 0.9-1.
    ctx.SetCallRange(0.0, 0.6);
    const vic_build_options bo = vtkVicinity::NBodyBuildOptions(choices);
    outcome =
      vtkVicinity::CheckCall(this, Label, ctx, vic_knn_build(ctx.Get(), &x, &bo, &lists.Knn));
    if (outcome == vtkVicinity::Outcome::Done)
    {
      ctx.SetCallRange(0.6, 0.65);
      density.resize(n);
      const auto t0 = std::chrono::steady_clock::now();
      outcome = vtkVicinity::CheckCall(this, Label, ctx,
        vic_density(ctx.Get(), &x, &lists.Knn, lists.MassOrNull(), nullptr, density.data(), nullptr,
          nullptr));
      secondsDensity = SecondsSince(t0);
    }
    if (outcome == vtkVicinity::Outcome::Done)
    {
      ctx.SetCallRange(0.65, 0.9);
      const auto t0 = std::chrono::steady_clock::now();
      outcome = vtkVicinity::CheckCall(
        this, Label, ctx, vic_peaks_find(ctx.Get(), &x, &lists.Knn, density.data(), &o, &found.P));
      secondsPeaks = SecondsSince(t0);
    }
  }
  if (outcome == vtkVicinity::Outcome::Cancelled)
  {
    output->Initialize();
    return true;
  }
  if (outcome == vtkVicinity::Outcome::Failed)
  {
    return false;
  }

  // The halo catalogue and friends-of-friends groups (3-d coordinates only).
  const bool centresAreCoordinates = !this->UseFeatureArray && x.d == 3;
  HalosHolder halos;
  bool haveHalos = false;
  std::vector<int64_t> groups;
  int64_t nGroups = 0;
  double linkingLength = 0;
  if (centresAreCoordinates && this->HaloCatalogue)
  {
    std::vector<float> velocity;
    if (this->UseVelocityArray)
    {
      int association = -1;
      vtkDataArray* v = this->GetInputArrayToProcess(2, input, association);
      if (!vtkVicinity::SelectPointValues(
            this, Label, "velocity array", "Use Velocity Array", 3, v, association, n, velocity))
      {
        return false;
      }
    }
    vic_halo_options ho;
    vic_halo_options_init(&ho);
    ho.overdensity = this->Overdensity;
    ho.reference = static_cast<vic_overdensity_reference>(this->OverdensityReference);
    ho.critical_density = this->CriticalDensity;
    ho.mean_density = this->MeanDensity;
    ho.min_members = this->MinMembers > 0 ? this->MinMembers : 1;
    ho.unbind = this->RemoveUnbound ? 1 : 0;
    ho.gravitational_constant = this->GravitationalConstant;
    ho.softening = this->Softening;
    ho.profile_bins = this->ProfileBins;
    ctx.SetCallRange(0.9, this->FriendsOfFriends ? 0.95 : 1.0);
    outcome = vtkVicinity::CheckCall(this, Label, ctx,
      vic_halo_catalogue(ctx.Get(), &x, &found.P, lists.MassOrNull(),
        velocity.empty() ? nullptr : velocity.data(), &ho, &halos.H));
    haveHalos = outcome == vtkVicinity::Outcome::Done;
  }
  if (outcome == vtkVicinity::Outcome::Done && this->FriendsOfFriends && lists.Knn.ids)
  {
    ctx.SetCallRange(0.95, 1.0);
    groups.resize(n);
    outcome = vtkVicinity::CheckCall(this, Label, ctx,
      vic_fof(ctx.Get(), &x, &lists.Knn, this->LinkingLength, this->MinMembers > 0 ? this->MinMembers : 1,
        groups.data(), &nGroups, &linkingLength));
  }
  if (outcome == vtkVicinity::Outcome::Cancelled)
  {
    output->Initialize();
    return true;
  }
  if (outcome == vtkVicinity::Outcome::Failed)
  {
    return false;
  }

  vtkPointData* pd = output->GetPointData();
  pd->AddArray(vtkVicinity::WrapFloats(found.P.saliency, n, 1, "Saliency"));
  pd->AddArray(vtkVicinity::WrapFloats(found.P.delta, n, 1, "Delta"));
  pd->AddArray(vtkVicinity::WrapIdValues(found.P.peak_id, n, "Peak Id"));
  pd->AddArray(vtkVicinity::WrapFloats(density.data(), n, 1, "Density"));
  if (haveHalos)
  {
    pd->AddArray(vtkVicinity::WrapIdValues(halos.H.halo_id, n, "Halo Id"));
  }
  if (!groups.empty())
  {
    pd->AddArray(vtkVicinity::WrapIdValues(groups.data(), n, "FoF Group"));
  }
  pd->SetActiveScalars("Density");

  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(*report, VIC_L2, x.d, lists.Source.c_str(), fd);
  vtkVicinity::AddFieldInt(fd, "Peaks", found.P.n_peaks);
  vtkVicinity::AddFieldDouble(fd, "Seconds Density", secondsDensity);
  vtkVicinity::AddFieldDouble(fd, "Seconds Peaks", secondsPeaks);
  if (haveHalos)
  {
    vtkVicinity::AddFieldInt(fd, "Halos", halos.H.n_halos);
    vtkVicinity::AddFieldDouble(fd, "Mean Density", halos.H.mean_density);
    vtkVicinity::AddFieldDouble(fd, "Overdensity Threshold", halos.H.reference_density);
    vtkVicinity::AddFieldDouble(fd, "Seconds Halos", halos.H.report.seconds_total);
  }
  if (!groups.empty())
  {
    vtkVicinity::AddFieldInt(fd, "FoF Groups", nGroups);
    vtkVicinity::AddFieldDouble(fd, "FoF Linking Length", linkingLength);
  }
  output->SetFieldData(fd);

  BuildPeakPoints(input, found.P, density.data(), x.d, centresAreCoordinates, peaks);
  if (haveHalos)
  {
    vtkVicinity::AddHaloColumns(halos.H, found.P.n_peaks, peaks);
    if (this->Profiles)
    {
      vtkVicinity::AppendProfiles(halos.H, this->Leaf, this->Profiles);
    }
  }
  ++this->Leaf;
  peaks->SetFieldData(fd);
  return true;
}

void vtkVicinitySalientPoints::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "MinDensity: " << this->MinDensity << "\n";
  os << indent << "MinDelta: " << this->MinDelta << "\n";
  os << indent << "DeltaFactor: " << this->DeltaFactor << "\n";
  os << indent << "MinProminence: " << this->MinProminence << "\n";
  os << indent << "MinMembers: " << this->MinMembers << "\n";
  os << indent << "UseMassArray: " << this->UseMassArray << "\n";
  os << indent << "HaloCatalogue: " << this->HaloCatalogue << " (Delta " << this->Overdensity
     << (this->OverdensityReference ? " x critical " : " x mean ") << "density, critical "
     << this->CriticalDensity << ", mean " << this->MeanDensity << ", profile bins " << this->ProfileBins
     << ")\n";
  os << indent << "UseVelocityArray: " << this->UseVelocityArray << "\n";
  os << indent << "RemoveUnbound: " << this->RemoveUnbound << " (G " << this->GravitationalConstant
     << ", softening " << this->Softening << ")\n";
  os << indent << "FriendsOfFriends: " << this->FriendsOfFriends << " (b " << this->LinkingLength << ")\n";
}
