#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityKdCuts.h"

#include <vtkAlgorithm.h>
#include <vtkCellArray.h>
#include <vtkCommunicator.h>
#include <vtkDataSet.h>
#include <vtkDistributedPointCloudFilter.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkMPIController.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

namespace vtkVicinity
{

const char* const GlobalIdsName = "Global Ids";

vtkMPIController* MultiProcessController()
{
  auto* c = vtkMPIController::SafeDownCast(vtkMultiProcessController::GetGlobalController());
  return c && c->GetNumberOfProcesses() > 1 ? c : nullptr;
}

double AllSum(vtkMPIController* c, double v)
{
  double out = 0;
  c->AllReduce(&v, &out, 1, vtkCommunicator::SUM_OP);
  return out;
}

double AllMax(vtkMPIController* c, double v)
{
  double out = 0;
  c->AllReduce(&v, &out, 1, vtkCommunicator::MAX_OP);
  return out;
}

vtkIdType AllSumIds(vtkMPIController* c, vtkIdType v)
{
  vtkIdType out = 0;
  c->AllReduce(&v, &out, 1, vtkCommunicator::SUM_OP);
  return out;
}

Outcome AgreeOutcome(vtkMPIController* c, vtkAlgorithm* self, const char* label, Outcome mine)
{
  // Encode as rank-tagged codes: the maximum says what won and where.
  const int nranks = c->GetNumberOfProcesses();
  const int code = (mine == Outcome::Failed ? 2 : mine == Outcome::Cancelled ? 1 : 0);
  int tagged = code * nranks + c->GetLocalProcessId(), worst = 0;
  c->AllReduce(&tagged, &worst, 1, vtkCommunicator::MAX_OP);
  const int worstCode = worst / nranks;
  if (worstCode == 2)
  {
    if (mine != Outcome::Failed)
    {
      vtkErrorWithObjectMacro(self, << label << ": stopped because MPI rank " << worst % nranks
                                    << " failed (its message says why).");
    }
    return Outcome::Failed;
  }
  return worstCode == 1 ? Outcome::Cancelled : Outcome::Done;
}

namespace
{
// Each rank's verdict from a numbered core check (status, the number of
// its first bad row or -1), agreed: every rank says the core's message
// for the lowest-numbered bad row of all and gets Failed; a problem that
// is no row's fails as AgreeOutcome does.
Outcome AgreeOnFirstBad(vtkMPIController* c, vtkAlgorithm* self, const char* label, Context& ctx,
  vic_status status, int64_t bad)
{
  const int nranks = c->GetNumberOfProcesses(), me = c->GetLocalProcessId();
  const vtkIdType none = std::numeric_limits<vtkIdType>::max();
  vtkIdType mine = none;
  Outcome local = Outcome::Done;
  if (status != VIC_OK && bad >= 0)
  {
    mine = static_cast<vtkIdType>(bad);
  }
  else if (status != VIC_OK)
  {
    vtkErrorWithObjectMacro(self, << label << ": " << ctx.Error());
    local = Outcome::Failed;
  }
  vtkIdType first = none;
  c->AllReduce(&mine, &first, 1, vtkCommunicator::MIN_OP);
  if (first == none)
  {
    return AgreeOutcome(c, self, label, local);
  }
  // The lowest rank holding that row says the core's words to the others.
  int candidate = mine == first ? me : nranks, owner = nranks;
  c->AllReduce(&candidate, &owner, 1, vtkCommunicator::MIN_OP);
  std::string message = me == owner ? ctx.Error() : std::string();
  int length = static_cast<int>(message.size());
  c->Broadcast(&length, 1, owner);
  message.resize(length);
  c->Broadcast(&message[0], length, owner);
  vtkErrorWithObjectMacro(self, << label << ": " << message);
  return Outcome::Failed;
}
} // namespace

Outcome AgreeValidRows(vtkMPIController* c, vtkAlgorithm* self, const char* label, Context& ctx,
  const vic_data& rows, const vtkIdType* globalIds)
{
  vic_status s = VIC_OK;
  int64_t bad = -1;
  if (rows.n > 0)
  {
    const std::vector<int64_t> numbers(globalIds, globalIds + rows.n);
    s = vic_data_validate_numbered(ctx.Get(), &rows, numbers.data(), &bad);
  }
  return AgreeOnFirstBad(c, self, label, ctx, s, bad);
}

Outcome AgreeValidMasses(vtkMPIController* c, vtkAlgorithm* self, const char* label, Context& ctx,
  const std::vector<float>& mass, const vtkIdType* globalIds)
{
  vic_status s = VIC_OK;
  int64_t bad = -1;
  if (!mass.empty())
  {
    const std::vector<int64_t> numbers(globalIds, globalIds + mass.size());
    s = vic_masses_validate_numbered(
      ctx.Get(), mass.data(), static_cast<int64_t>(mass.size()), numbers.data(), &bad);
  }
  return AgreeOnFirstBad(c, self, label, ctx, s, bad);
}

vtkSmartPointer<vtkIdTypeArray> PieceGlobalIds(vtkMPIController* c, vtkDataSet* piece)
{
  const vtkIdType n = piece->GetNumberOfPoints();
  vtkDataArray* given = piece->GetPointData()->GetGlobalIds();
  // Use the input's ids only when every rank that holds points has them.
  int missing = (n > 0 && !given) ? 1 : 0, anyMissing = 0;
  c->AllReduce(&missing, &anyMissing, 1, vtkCommunicator::MAX_OP);
  auto ids = vtkSmartPointer<vtkIdTypeArray>::New();
  ids->SetName(GlobalIdsName);
  ids->SetNumberOfValues(n);
  if (!anyMissing)
  {
    for (vtkIdType i = 0; i < n; ++i)
    {
      ids->SetValue(i, static_cast<vtkIdType>(given->GetComponent(i, 0)));
    }
    return ids;
  }
  // Exclusive scan of the piece sizes in rank order: rank r's points come
  // after those of ranks 0 .. r-1, as if the pieces were read in order.
  std::vector<vtkIdType> counts(c->GetNumberOfProcesses());
  c->AllGather(&n, counts.data(), 1);
  const vtkIdType first =
    std::accumulate(counts.begin(), counts.begin() + c->GetLocalProcessId(), vtkIdType(0));
  for (vtkIdType i = 0; i < n; ++i)
  {
    ids->SetValue(i, first + i);
  }
  return ids;
}

namespace
{
bool Inside(const double box[6], const double p[3])
{
  return p[0] >= box[0] && p[0] <= box[1] && p[1] >= box[2] && p[1] <= box[3] && p[2] >= box[4] &&
    p[2] <= box[5];
}

bool Empty(const double box[6])
{
  return box[0] > box[1] || box[2] > box[3] || box[4] > box[5];
}

// Float coordinates (what the core reads), point data, global ids.
vtkSmartPointer<vtkPolyData> CloudOf(vtkDataSet* input, const Rows& rows, vtkIdTypeArray* globalIds)
{
  auto coords = vtkSmartPointer<vtkFloatArray>::New();
  coords->SetNumberOfComponents(3);
  coords->SetNumberOfTuples(rows.N);
  std::copy(rows.Values.begin(), rows.Values.end(), coords->GetPointer(0));
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetData(coords);
  auto cloud = vtkSmartPointer<vtkPolyData>::New();
  cloud->SetPoints(points);
  cloud->GetPointData()->ShallowCopy(input->GetPointData());
  cloud->GetPointData()->SetGlobalIds(nullptr); // replaced by ours, under our name
  cloud->GetPointData()->RemoveArray(GlobalIdsName);
  cloud->GetPointData()->AddArray(globalIds);
  return cloud;
}

// The rows of `from` listed in `rows`, in that order, points and point data.
vtkSmartPointer<vtkPolyData> Subset(vtkPolyData* from, const std::vector<vtkIdType>& rows)
{
  const vtkIdType n = static_cast<vtkIdType>(rows.size());
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToFloat();
  points->SetNumberOfPoints(n);
  auto out = vtkSmartPointer<vtkPolyData>::New();
  out->GetPointData()->CopyAllocate(from->GetPointData(), n);
  double p[3];
  for (vtkIdType i = 0; i < n; ++i)
  {
    from->GetPoint(rows[i], p);
    points->SetPoint(i, p);
    out->GetPointData()->CopyData(from->GetPointData(), rows[i], i);
  }
  out->SetPoints(points);
  return out;
}

const vtkIdType* IdsOf(vtkPolyData* pd)
{
  auto* a = vtkIdTypeArray::SafeDownCast(pd->GetPointData()->GetArray(GlobalIdsName));
  return a ? a->GetPointer(0) : nullptr;
}

double Now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnitBallVolume(int d)
{
  return d == 1 ? 2.0 : d == 2 ? M_PI : 4.0 / 3.0 * M_PI;
}
} // namespace

DistributedPoints::DistributedPoints(vtkMPIController* controller)
  : Ctrl(controller)
{
}

DistributedPoints::~DistributedPoints() = default;

vtkIdType DistributedPoints::HaloPoints() const
{
  return this->LocalPoints
    ? this->LocalPoints->GetNumberOfPoints() - static_cast<vtkIdType>(this->Owned.size())
    : 0;
}

const vtkIdType* DistributedPoints::LocalGlobalIds() const
{
  return IdsOf(this->LocalPoints);
}

Outcome DistributedPoints::Redistribute(vtkAlgorithm* self, const char* label, Context& ctx,
  vtkDataSet* input, int k, bool useMass, vtkDataArray* mass, int massAssociation)
{
  this->Started = Now();
  auto gids = PieceGlobalIds(this->Ctrl, input);
  Rows rows;
  ExtractPointRows(input, rows);
  if (AgreeValidRows(this->Ctrl, self, label, ctx, rows.View(VIC_L2, nullptr), gids->GetPointer(0)) !=
    Outcome::Done)
  {
    return Outcome::Failed;
  }
  if (useMass)
  {
    // The masses as the core will judge them, checked before they travel.
    std::vector<float> values;
    const bool read = rows.N == 0 || SelectMass(self, label, mass, massAssociation, rows.N, values);
    if (AgreeOutcome(this->Ctrl, self, label, read ? Outcome::Done : Outcome::Failed) != Outcome::Done ||
      AgreeValidMasses(this->Ctrl, self, label, ctx, values, gids->GetPointer(0)) != Outcome::Done)
    {
      return Outcome::Failed;
    }
  }
  auto piece = CloudOf(input, rows, gids);
  rows = Rows(); // the piece holds the coordinates now
  this->TotalPoints = AllSumIds(this->Ctrl, piece->GetNumberOfPoints());

  // The spatial cuts' tight region of this rank (vtkVicinityKdCuts.h):
  // regions are separated along the axis of their cut, so the owner of a
  // point is unique.  (vtkDistributedPointCloudFilter's own pass would ship
  // the points inside those boxes widened by a float ulp, where a point on
  // a cut could land on two ranks.)
  KdRegion(this->Ctrl, piece, this->Region);
  if (Empty(this->Region))
  {
    const double none[6] = { 1, 0, 1, 0, 1, 0 };
    std::copy(none, none + 6, this->Region);
  }
  auto received = vtkSmartPointer<vtkPolyData>::New();
  vtkDistributedPointCloudFilter::GetPointsInsideBounds(this->Ctrl, piece, received, this->Region);
  // Keep the points of the tight region only (the shipped box is a float
  // ulp wider).  The coordinates are floats, compared exactly.
  std::vector<vtkIdType> keep;
  double p[3];
  for (vtkIdType i = 0; i < received->GetNumberOfPoints(); ++i)
  {
    received->GetPoint(i, p);
    if (Inside(this->Region, p))
    {
      keep.push_back(i);
    }
  }
  this->OwnedPoints = Subset(received, keep);

  // The domain (all points) and a first halo width: the k-th neighbour
  // distance of a uniform density in this region, widest over the ranks.
  double lo[3], hi[3];
  for (int j = 0; j < 3; ++j)
  {
    lo[j] = Empty(this->Region) ? std::numeric_limits<double>::max() : this->Region[2 * j];
    hi[j] = Empty(this->Region) ? -std::numeric_limits<double>::max() : this->Region[2 * j + 1];
  }
  double glo[3], ghi[3];
  this->Ctrl->AllReduce(lo, glo, 3, vtkCommunicator::MIN_OP);
  this->Ctrl->AllReduce(hi, ghi, 3, vtkCommunicator::MAX_OP);
  for (int j = 0; j < 3; ++j)
  {
    this->Domain[2 * j] = glo[j];
    this->Domain[2 * j + 1] = ghi[j];
  }
  double guess = 0;
  const vtkIdType owned = this->OwnedPoints->GetNumberOfPoints();
  if (owned > 0 && !Empty(this->Region))
  {
    double volume = 1;
    int dims = 0;
    for (int j = 0; j < 3; ++j)
    {
      const double extent = this->Region[2 * j + 1] - this->Region[2 * j];
      if (extent > 0)
      {
        volume *= extent;
        ++dims;
      }
    }
    if (dims > 0)
    {
      guess = 1.5 * std::pow(k * volume / (owned * UnitBallVolume(dims)), 1.0 / dims);
    }
  }
  this->Width = AllMax(this->Ctrl, guess);
  return Outcome::Done;
}

void DistributedPoints::FetchHalo(double width)
{
  double grown[6] = { 1, 0, 1, 0, 1, 0 };
  if (!Empty(this->Region))
  {
    for (int j = 0; j < 3; ++j)
    {
      grown[2 * j] = this->Region[2 * j] - width;
      grown[2 * j + 1] = this->Region[2 * j + 1] + width;
    }
  }
  auto received = vtkSmartPointer<vtkPolyData>::New();
  vtkDistributedPointCloudFilter::GetPointsInsideBounds(
    this->Ctrl, this->OwnedPoints, received, grown);
  // Owned sets are disjoint, so every global id arrives once.  Sorting by
  // it makes the core's tie-breaks (lower row first) those of one process.
  const vtkIdType n = received->GetNumberOfPoints();
  const vtkIdType* gid = IdsOf(received);
  std::vector<vtkIdType> order(n);
  std::iota(order.begin(), order.end(), vtkIdType(0));
  std::sort(order.begin(), order.end(), [gid](vtkIdType a, vtkIdType b) { return gid[a] < gid[b]; });
  this->LocalPoints = Subset(received, order);
  this->Owned.clear();
  this->OwnedFlag.assign(n, 0);
  double p[3];
  for (vtkIdType i = 0; i < n; ++i)
  {
    this->LocalPoints->GetPoint(i, p);
    if (Inside(this->Region, p))
    {
      this->Owned.push_back(i);
      this->OwnedFlag[i] = 1;
    }
  }
}

Outcome DistributedPoints::BuildWithHalo(vtkAlgorithm* self, const char* label, int k,
  const BuildFunction& build, const ReachFunction& reach)
{
  const vtkIdType want = std::min<vtkIdType>(k, this->TotalPoints - 1);
  double width = this->Width;
  for (this->Rounds = 1;; ++this->Rounds)
  {
    this->FetchHalo(width);
    const vic_knn* lists = nullptr;
    Outcome made = build(this->LocalPoints, &lists);
    made = AgreeOutcome(this->Ctrl, self, label, made);
    if (made != Outcome::Done)
    {
      return made;
    }
    // Does every owned point's reach fit inside the halo?  A face of the
    // region on the border of the domain has nothing beyond it.
    double needed = 0; // the widest reach of an owned point (infinite: too few neighbours)
    int misfit = 0;
    double p[3];
    for (vtkIdType i : this->Owned)
    {
      const float dk = lists->k >= want && want > 0 ? lists->dist[i * lists->k + want - 1] : 0.f;
      double r = want > 0 && (lists->k < want || lists->ids[i * lists->k + want - 1] < 0)
        ? std::numeric_limits<double>::infinity()
        : static_cast<double>(dk);
      if (reach && std::isfinite(r))
      {
        r = reach(i, r);
      }
      needed = std::max(needed, r);
      this->LocalPoints->GetPoint(i, p);
      for (int j = 0; j < 3 && !misfit; ++j)
      {
        const bool openLow = this->Region[2 * j] - width <= this->Domain[2 * j];
        const bool openHigh = this->Region[2 * j + 1] + width >= this->Domain[2 * j + 1];
        if ((!openLow && p[j] - r < this->Region[2 * j] - width) ||
          (!openHigh && p[j] + r > this->Region[2 * j + 1] + width) || !std::isfinite(r))
        {
          misfit = 1;
        }
      }
    }
    int anyMisfit = 0;
    this->Ctrl->AllReduce(&misfit, &anyMisfit, 1, vtkCommunicator::MAX_OP);
    if (!anyMisfit)
    {
      this->Width = width;
      this->Finished = Now();
      return Outcome::Done;
    }
    // The local k-th distance bounds the true one from above, so a halo as
    // wide as the widest reach holds every true neighbour: the next round
    // fits.  Too few neighbours somewhere (infinite reach): double.
    const double widest = AllMax(this->Ctrl, needed);
    width = std::isfinite(widest) ? std::max(widest, width * 1.01) : std::max(2 * width, 1e-30);
    const double span = std::max({ this->Domain[1] - this->Domain[0],
      this->Domain[3] - this->Domain[2], this->Domain[5] - this->Domain[4] });
    if (!std::isfinite(widest) && width > 2 * span + 1)
    {
      width = 2 * span + 1; // the whole domain: cannot grow further
    }
  }
}

void DistributedPoints::WriteHaloReport(vtkFieldData* fd) const
{
  const int nranks = this->Ctrl->GetNumberOfProcesses();
  const double mine[3] = { static_cast<double>(this->Owned.size()),
    static_cast<double>(this->HaloPoints()), this->Finished - this->Started };
  std::vector<double> all(3 * nranks);
  this->Ctrl->AllGather(mine, all.data(), 3);
  const char* names[3] = { "Owned Points Per Rank", "Halo Points Per Rank", "Seconds Per Rank" };
  for (int j = 0; j < 3; ++j)
  {
    auto a = vtkSmartPointer<vtkDoubleArray>::New();
    a->SetName(names[j]);
    a->SetNumberOfValues(nranks);
    for (int r = 0; r < nranks; ++r)
    {
      a->SetValue(r, all[3 * r + j]);
    }
    fd->AddArray(a);
  }
  AddFieldInt(fd, "MPI Ranks", nranks);
  AddFieldDouble(fd, "Halo Width", this->Width);
  AddFieldInt(fd, "Halo Rounds", this->Rounds);
}

vtkSmartPointer<vtkPolyData> DistributedPoints::OwnedCloud() const
{
  auto cloud = Subset(this->LocalPoints, this->Owned);
  const vtkIdType n = cloud->GetNumberOfPoints();
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfValues(n + 1);
  auto conn = vtkSmartPointer<vtkIdTypeArray>::New();
  conn->SetNumberOfValues(n);
  for (vtkIdType i = 0; i <= n; ++i)
  {
    offsets->SetValue(i, i);
    if (i < n)
    {
      conn->SetValue(i, i);
    }
  }
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  verts->SetData(offsets, conn); // one vertex per point: renderers draw them
  cloud->SetVerts(verts);
  return cloud;
}

std::vector<float> DistributedPoints::OwnedValues(const float* local, int components) const
{
  std::vector<float> out(this->Owned.size() * components);
  for (size_t i = 0; i < this->Owned.size(); ++i)
  {
    std::copy(local + this->Owned[i] * components, local + (this->Owned[i] + 1) * components,
      out.begin() + i * components);
  }
  return out;
}

vic_knn DistributedPoints::OwnedLists(const vic_knn& local) const
{
  vic_knn out;
  std::memset(&out, 0, sizeof out);
  const size_t n = this->Owned.size(), k = static_cast<size_t>(local.k);
  out.n = static_cast<int64_t>(n);
  out.k = local.k;
  out.report = local.report;
  // malloc: vic_knn_free releases these with free().
  out.ids = static_cast<int64_t*>(std::malloc(std::max<size_t>(1, n * k) * sizeof(int64_t)));
  out.dist = static_cast<float*>(std::malloc(std::max<size_t>(1, n * k) * sizeof(float)));
  if (!out.ids || !out.dist)
  {
    vic_knn_free(&out);
    return out;
  }
  const vtkIdType* gid = this->LocalGlobalIds();
  for (size_t i = 0; i < n; ++i)
  {
    const vtkIdType row = this->Owned[i];
    for (size_t r = 0; r < k; ++r)
    {
      const int64_t j = local.ids[row * k + r];
      out.ids[i * k + r] = j < 0 ? -1 : static_cast<int64_t>(gid[j]);
      out.dist[i * k + r] = local.dist[row * k + r];
    }
  }
  return out;
}

vic_report DistributedPoints::GlobalReport(const vic_knn& owned) const
{
  vic_report r = owned.report;
  double sum = 0, mx = 0;
  vtkIdType count = 0;
  for (int64_t i = 0; i < owned.n && owned.k > 0; ++i)
  {
    const float d = owned.dist[i * owned.k];
    if (std::isfinite(d))
    {
      sum += d;
      mx = std::max(mx, static_cast<double>(d));
      ++count;
    }
  }
  const vtkIdType all = AllSumIds(this->Ctrl, count);
  r.dnn1_mean = all > 0 ? AllSum(this->Ctrl, sum) / all : 0;
  r.dnn1_max = AllMax(this->Ctrl, mx);
  // The recall estimate: weighted by each rank's sample; exact lists say 1.
  const double sampled = r.recall_sample > 0 && r.recall_estimate >= 0 ? r.recall_sample : 0;
  const double samples = AllSum(this->Ctrl, sampled);
  const double hits = AllSum(this->Ctrl, sampled * r.recall_estimate);
  if (samples > 0)
  {
    r.recall_estimate = hits / samples;
    r.recall_sample = static_cast<int64_t>(samples);
  }
  r.seconds_total = AllMax(this->Ctrl, r.seconds_total);
  r.warnings = static_cast<int>(AllSum(this->Ctrl, r.warnings));
  return r;
}

} // namespace vtkVicinity
