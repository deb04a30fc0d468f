// Salient Points under MPI with several processes.  The points are
// redistributed with a halo (vtkVicinityDistributedPoints); the core finds
// densities and peaks on owned + halo points, and each rank decides for its
// owned points only, so a peak on a rank border is reported once, by the
// rank that owns its point.  The halo grows until, for every owned point,
// the k-th neighbour, the nearest denser point (delta, the min_delta test)
// and the k-th neighbours of its own neighbours (whose densities it is
// compared with) lie inside it; the globally densest point is the one peak
// that needs no denser point.  Member counts and prominence are the core's
// on the owned + halo points.  The peak list is merged over the ranks by
// descending saliency (ties: lower global id) and output by rank 0.
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityFilterSupport.h"
#include "vtkVicinitySalientPoints.h"

#include <vtkCommunicator.h>
#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkMPIController.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

namespace
{
const char* const Label = "Salient Points";

using vtkVicinity::PeakRecord;
constexpr int RecordDoubles = sizeof(PeakRecord) / sizeof(double);
} // namespace

bool vtkVicinitySalientPoints::ProcessDistributed(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* peaksOut)
{
  using vtkVicinity::Outcome;
  if (this->UseFeatureArray || this->Periodic)
  {
    vtkErrorMacro(<< Label << ": under MPI with several processes peaks are found on the point "
                              "coordinates, not periodic; a feature array or a periodic box needs "
                              "a single process.");
    return false;
  }
  vtkMPIController* c = vtkVicinity::MultiProcessController();
  vtkVicinity::DistributedPoints dp(c);
  int massAssociation = -1;
  vtkDataArray* massArray =
    this->UseMassArray ? this->GetInputArrayToProcess(1, input, massAssociation) : nullptr;
  if (dp.Redistribute(this, Label, ctx, input, this->K, this->UseMassArray, massArray, massAssociation) !=
    vtkVicinity::Outcome::Done)
  {
    output->Initialize();
    peaksOut->Initialize();
    return false;
  }
  if ((this->HaloCatalogue || this->FriendsOfFriends) && c->GetLocalProcessId() == 0)
  {
    // A halo's sphere and a FoF group reach beyond the halo of neighbours
    // each rank fetches; said once, by rank 0, once the points passed
    // validation (a refused input gets one process's messages only).
    vtkWarningMacro(<< Label << ": under MPI with several processes the halo catalogue (R_Delta, "
                                "masses, profiles) and friends-of-friends groups are not computed; "
                                "the peaks are. Run a single process for them.");
  }

  vtkVicinity::NBodyChoices choices;
  choices.K = this->K;
  choices.Method = static_cast<vic_method>(this->Method);
  choices.Options = this->BuildOptions;
  choices.UseMass = this->UseMassArray;
  const vic_peak_options po = vtkVicinity::MakePeakOptions(
    this->MinDensity, this->MinDelta, this->DeltaFactor, this->MinProminence, this->MinMembers);

  vtkVicinity::NBodyLists lists;
  std::vector<float> density;
  vic_peaks found{};
  vtkIdType densest = -1; // global id of the globally densest point
  auto build = [&](vtkPolyData* local, const vic_knn** out) {
    vic_knn_free(&lists.Knn);
    vic_peaks_free(&found);
    *out = &lists.Knn;
    const vtkIdType n = local->GetNumberOfPoints();
    Outcome made = Outcome::Done;
    lists.Knn.n = n;
    if (n >= 2)
    {
      if (this->UseMassArray)
      {
        choices.Mass = this->GetInputArrayToProcess(1, local, choices.MassAssociation);
      }
      made = vtkVicinity::BuildNBodyLists(this, Label, ctx, local, choices, lists);
      const vic_data x = lists.View();
      density.assign(n, 0.f);
      if (made == Outcome::Done)
      {
        made = vtkVicinity::CheckCall(this, Label, ctx,
          vic_density(
            ctx.Get(), &x, &lists.Knn, lists.MassOrNull(), nullptr, density.data(), nullptr, nullptr));
      }
      if (made == Outcome::Done)
      {
        made = vtkVicinity::CheckCall(
          this, Label, ctx, vic_peaks_find(ctx.Get(), &x, &lists.Knn, density.data(), &po, &found));
      }
    }
    // The globally densest point (ties: lower global id), reached by every
    // rank whatever happened above, so that the collective cannot hang.
    double best = -std::numeric_limits<double>::infinity();
    const bool usable = made == Outcome::Done && found.n == n;
    for (vtkIdType i : dp.OwnedRows())
    {
      best = usable ? std::max(best, static_cast<double>(density[i])) : best;
    }
    const double top = vtkVicinity::AllMax(c, best);
    vtkIdType candidate = std::numeric_limits<vtkIdType>::max(), winner = 0;
    for (vtkIdType i : dp.OwnedRows())
    {
      if (usable && density[i] == top)
      {
        candidate = std::min(candidate, dp.LocalGlobalIds()[i]);
      }
    }
    c->AllReduce(&candidate, &winner, 1, vtkCommunicator::MIN_OP);
    densest = winner;
    return made;
  };
  const double inf = std::numeric_limits<double>::infinity();
  auto reach = [&](vtkIdType row, double dk) {
    const int k = lists.Knn.k;
    double r = std::max(dk, po.min_delta > 0 ? po.min_delta : po.delta_factor * dk);
    if (found.parent[row] >= 0)
    {
      r = std::max(r, static_cast<double>(found.delta[row])); // the nearest denser point
    }
    else if (dp.LocalGlobalIds()[row] != densest)
    {
      return inf; // its denser point lies beyond the halo: grow
    }
    double neighbours = dk; // the neighbours' own k-th neighbours decide their densities
    for (int j = 0; j < k; ++j)
    {
      const int64_t id = lists.Knn.ids[row * k + j];
      neighbours = std::max(neighbours,
        id < 0 ? inf : static_cast<double>(lists.Knn.dist[id * k + k - 1]));
    }
    return r + neighbours;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome outcome = dp.BuildWithHalo(this, Label, this->K, build, reach);
  if (outcome != Outcome::Done)
  {
    vic_peaks_free(&found);
    output->Initialize();
    return outcome == Outcome::Cancelled;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The owned peaks, merged over the ranks.
  const vtkIdType* gid = dp.LocalGlobalIds();
  std::vector<double> mine;
  for (int64_t q = 0; q < found.n_peaks; ++q)
  {
    const int64_t i = found.peak_point[q];
    if (!dp.IsOwned(i))
    {
      continue;
    }
    PeakRecord p;
    p.Saliency = found.saliency[i];
    p.GlobalId = static_cast<double>(gid[i]);
    p.Density = density[i];
    p.Delta = found.delta[i];
    p.Members = static_cast<double>(found.peak_members[q]);
    double xyz[3];
    dp.Local()->GetPoint(i, xyz);
    for (int j = 0; j < 3; ++j)
    {
      p.Centre[j] = found.peak_centre[q * 3 + j];
      p.Particle[j] = xyz[j];
    }
    const double* raw = reinterpret_cast<const double*>(&p);
    mine.insert(mine.end(), raw, raw + RecordDoubles);
  }
  const int nranks = c->GetNumberOfProcesses();
  vtkIdType count = static_cast<vtkIdType>(mine.size());
  std::vector<vtkIdType> counts(nranks), offsets(nranks, 0);
  c->AllGather(&count, counts.data(), 1);
  for (int r = 1; r < nranks; ++r)
  {
    offsets[r] = offsets[r - 1] + counts[r - 1];
  }
  std::vector<double> all(offsets[nranks - 1] + counts[nranks - 1] + 1);
  c->AllGatherV(mine.data(), all.data(), count, counts.data(), offsets.data());
  std::vector<PeakRecord> peaks((all.size() - 1) / RecordDoubles);
  std::copy(all.begin(), all.end() - 1, reinterpret_cast<double*>(peaks.data()));
  std::sort(peaks.begin(), peaks.end(), [](const PeakRecord& a, const PeakRecord& b) {
    return a.Saliency != b.Saliency ? a.Saliency > b.Saliency : a.GlobalId < b.GlobalId;
  });
  std::unordered_map<vtkIdType, int64_t> rankOf;
  for (size_t q = 0; q < peaks.size(); ++q)
  {
    rankOf[static_cast<vtkIdType>(peaks[q].GlobalId)] = static_cast<int64_t>(q);
  }

  // Port 0: the owned points with their values; Peak Id in the merged list
  // (-1 where the point climbs to a peak that no rank kept).
  const std::vector<vtkIdType>& owned = dp.OwnedRows();
  const vtkIdType m = static_cast<vtkIdType>(owned.size());
  std::vector<int64_t> peakId(m);
  for (vtkIdType i = 0; i < m; ++i)
  {
    const int64_t q = found.peak_id ? found.peak_id[owned[i]] : -1;
    const auto it = q >= 0 ? rankOf.find(gid[found.peak_point[q]]) : rankOf.end();
    peakId[i] = it == rankOf.end() ? -1 : it->second;
  }
  auto* cloud = vtkPolyData::SafeDownCast(output);
  cloud->ShallowCopy(dp.OwnedCloud());
  vtkPointData* pd = cloud->GetPointData();
  if (m > 0)
  {
    pd->AddArray(vtkVicinity::WrapFloats(dp.OwnedValues(found.saliency, 1).data(), m, 1, "Saliency"));
    pd->AddArray(vtkVicinity::WrapFloats(dp.OwnedValues(found.delta, 1).data(), m, 1, "Delta"));
    pd->AddArray(vtkVicinity::WrapIdValues(peakId.data(), m, "Peak Id"));
    pd->AddArray(vtkVicinity::WrapFloats(dp.OwnedValues(density.data(), 1).data(), m, 1, "Density"));
  }
  vic_knn ownedLists = dp.OwnedLists(lists.Knn);
  const vic_report report = dp.GlobalReport(ownedLists);
  vic_knn_free(&ownedLists);
  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(report, VIC_L2, 3, "Point Coordinates", fd);
  vtkVicinity::AddFieldInt(fd, "Peaks", static_cast<vtkIdType>(peaks.size()));
  vtkVicinity::AddFieldDouble(fd, "Seconds Peaks", vtkVicinity::AllMax(c, seconds));
  dp.WriteHaloReport(fd);
  cloud->SetFieldData(fd);
  if (c->GetLocalProcessId() == 0)
  {
    vtkVicinity::WritePeakPoints(peaks, peaksOut); // once, not once per rank
  }
  peaksOut->SetFieldData(fd);
  vic_peaks_free(&found);
  return true;
}
