// vtkVicinityKnnQueryProbe under MPI with several processes.  A query
// touches k points, so nothing is redistributed: every rank keeps the
// index of its own piece (the per-rank cache, rebuilt only when its piece
// changes), the query is made the same on every rank (the handle position
// broadcast from rank 0, the query points' pieces all-gathered, a point id
// -- a global id as the MPI filters assign them -- resolved by the rank
// that holds it and broadcast from there), every rank answers it from its
// own points, and rank 0 keeps the k best of all answers by (distance,
// global id).  For 3-d points the rank indexes are exact (the core's
// grid), so the merged top-k is exactly one process's: a true neighbour
// is in its own rank's top-k.  In feature space each rank's index is the
// core's choice (brute force or an NN-Descent graph), equal to one process
// within the recall of the graph search.  Each rank sends its k candidates
// per query as points with their point data, so rank 0 emits the winners
// with the data they carry; the other ranks' outputs are empty.
#include "vtkVicinityDeviceForRank.h"
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityIndexCache.h"
#include "vtkVicinityKnnQueryProbe.h"

#include <vtkCellArray.h>
#include <vtkCommunicator.h>
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkIntArray.h>
#include <vtkMPIController.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <string>
#include <vector>

namespace
{
using vtkVicinity::Outcome;
const char* const Label = "kNN Query Probe";
const int CandidatesTag = 7361;
// Bookkeeping arrays of the candidates shipped to rank 0 (removed there).
const char* const CandQuery = "vtkVicinity Candidate Query"; // -1: the Point Id query point itself
const char* const CandDist = "vtkVicinity Candidate Distance";
const char* const CandGid = "vtkVicinity Candidate Global Id";

double Now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This rank's answers as points: position, input point data, query,
// distance and global id; at most k per query, the query point itself
// (Point Id mode) not among them but added once, as query -1, by its owner.
vtkSmartPointer<vtkPolyData> Candidates(vtkDataSet* input, const vic_knn& knn,
  const vtkIdType* gids, vtkIdType selfGid, vtkIdType selfRow, int k)
{
  std::vector<vtkIdType> rows, query, gid;
  std::vector<float> dist;
  for (vtkIdType q = 0; q < knn.n; ++q)
  {
    int kept = 0;
    for (int r = 0; r < knn.k && kept < k; ++r)
    {
      const int64_t id = knn.ids[q * knn.k + r];
      if (id < 0 || gids[id] == selfGid)
      {
        continue;
      }
      rows.push_back(id);
      query.push_back(q);
      gid.push_back(gids[id]);
      dist.push_back(knn.dist[q * knn.k + r]);
      ++kept;
    }
  }
  if (selfRow >= 0)
  {
    rows.push_back(selfRow);
    query.push_back(-1);
    gid.push_back(selfGid);
    dist.push_back(0.f);
  }
  const vtkIdType m = static_cast<vtkIdType>(rows.size());
  auto out = vtkSmartPointer<vtkPolyData>::New();
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(m);
  out->GetPointData()->CopyAllocate(input->GetPointData(), m);
  auto qa = vtkSmartPointer<vtkIdTypeArray>::New();
  qa->SetName(CandQuery);
  auto da = vtkSmartPointer<vtkFloatArray>::New();
  da->SetName(CandDist);
  auto ga = vtkSmartPointer<vtkIdTypeArray>::New();
  ga->SetName(CandGid);
  double p[3];
  for (vtkIdType i = 0; i < m; ++i)
  {
    input->GetPoint(rows[i], p);
    points->SetPoint(i, p);
    out->GetPointData()->CopyData(input->GetPointData(), rows[i], i);
    qa->InsertNextValue(query[i]);
    da->InsertNextValue(dist[i]);
    ga->InsertNextValue(gid[i]);
  }
  out->SetPoints(points);
  out->GetPointData()->AddArray(qa);
  out->GetPointData()->AddArray(da);
  out->GetPointData()->AddArray(ga);
  return out;
}

struct Pick
{
  float Dist;
  vtkIdType Gid;
  size_t Part;
  vtkIdType Row;
};

// Rank 0: the k best candidates of every query over all ranks, by
// (distance, global id), then the probe's output (the layout of one
// process: neighbour points, then query points; vertices and lines).
void MergeAndAssemble(const std::vector<vtkSmartPointer<vtkPolyData>>& parts, vtkIdType queries,
  const std::vector<double>& queryPos, vtkIdType selfGid, int k, vtkPolyData* output)
{
  std::vector<std::vector<Pick>> perQuery(queries);
  const Pick* self = nullptr;
  Pick selfPick{};
  for (size_t part = 0; part < parts.size(); ++part)
  {
    vtkPointData* pd = parts[part]->GetPointData();
    auto* qa = vtkIdTypeArray::SafeDownCast(pd->GetArray(CandQuery));
    auto* da = vtkFloatArray::SafeDownCast(pd->GetArray(CandDist));
    auto* ga = vtkIdTypeArray::SafeDownCast(pd->GetArray(CandGid));
    for (vtkIdType i = 0; qa && da && ga && i < parts[part]->GetNumberOfPoints(); ++i)
    {
      const Pick pick{ da->GetValue(i), ga->GetValue(i), part, i };
      if (qa->GetValue(i) < 0)
      {
        selfPick = pick;
        self = &selfPick;
      }
      else
      {
        perQuery[qa->GetValue(i)].push_back(pick);
      }
    }
  }
  std::vector<std::pair<vtkIdType, Pick>> hits; // (query, pick) in output order
  for (vtkIdType q = 0; q < queries; ++q)
  {
    auto& c = perQuery[q];
    std::sort(c.begin(), c.end(), [](const Pick& a, const Pick& b) {
      return a.Dist < b.Dist || (a.Dist == b.Dist && a.Gid < b.Gid);
    });
    for (int r = 0; r < k && r < static_cast<int>(c.size()); ++r)
    {
      hits.emplace_back(q, c[r]);
    }
  }
  // The point data layout: the arrays of the first part with points (rank
  // 0 may hold none) less the bookkeeping.  The parts come from the same
  // pipeline on every rank, so their arrays are alike.
  size_t first = 0;
  while (first + 1 < parts.size() && parts[first]->GetNumberOfPoints() == 0)
  {
    ++first;
  }
  vtkSmartPointer<vtkPointData> layout = vtkSmartPointer<vtkPointData>::New();
  layout->ShallowCopy(parts[first]->GetPointData());
  for (const char* name : { CandQuery, CandDist, CandGid })
  {
    layout->RemoveArray(name);
  }
  const vtkIdType m = static_cast<vtkIdType>(hits.size());
  const vtkIdType total = m + queries;
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(total);
  vtkPointData* outPD = output->GetPointData();
  outPD->CopyAllocate(layout, total);
  auto queryId = vtkSmartPointer<vtkIdTypeArray>::New();
  queryId->SetName("Query Id");
  auto rank = vtkSmartPointer<vtkIntArray>::New();
  rank->SetName("Rank");
  auto distance = vtkSmartPointer<vtkFloatArray>::New();
  distance->SetName("Distance");
  auto neighborId = vtkSmartPointer<vtkIdTypeArray>::New();
  neighborId->SetName("Neighbor Id");
  double p[3];
  vtkIdType previous = -1;
  int r = 0;
  for (vtkIdType i = 0; i < m; ++i)
  {
    const vtkIdType q = hits[i].first;
    const Pick& h = hits[i].second;
    r = q == previous ? r + 1 : 0;
    previous = q;
    parts[h.Part]->GetPoint(h.Row, p);
    points->SetPoint(i, p);
    outPD->CopyData(parts[h.Part]->GetPointData(), h.Row, i);
    queryId->InsertNextValue(q);
    rank->InsertNextValue(r);
    distance->InsertNextValue(h.Dist);
    neighborId->InsertNextValue(h.Gid);
  }
  for (vtkIdType j = 0; j < queries; ++j)
  {
    const vtkIdType i = m + j;
    points->SetPoint(i, &queryPos[3 * j]);
    if (self)
    {
      outPD->CopyData(parts[self->Part]->GetPointData(), self->Row, i);
    }
    else
    {
      outPD->NullData(i);
    }
    queryId->InsertNextValue(j);
    rank->InsertNextValue(-1);
    distance->InsertNextValue(0.f);
    neighborId->InsertNextValue(selfGid);
  }
  outPD->AddArray(queryId);
  outPD->AddArray(rank);
  outPD->AddArray(distance);
  outPD->AddArray(neighborId);
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  for (vtkIdType i = 0; i < total; ++i)
  {
    verts->InsertNextCell(1, &i);
  }
  for (vtkIdType i = 0; i < m; ++i)
  {
    const vtkIdType line[2] = { m + hits[i].first, i };
    lines->InsertNextCell(2, line);
  }
  output->SetPoints(points);
  output->SetVerts(verts);
  output->SetLines(lines);
}
} // namespace

bool vtkVicinityKnnQueryProbe::DistributedQueries(vtkMPIController* c, vtkDataSet* input,
  vtkDataSet* queries, const vtkIdType* gids, const float* dataRows, int d,
  std::vector<float>& rows, std::vector<double>& positions, vtkIdType* selfRow)
{
  *selfRow = -1;
  const int me = c->GetLocalProcessId(), nranks = c->GetNumberOfProcesses();
  const vtkIdType n = input->GetNumberOfPoints();
  if (this->QueryMode == HANDLE)
  {
    double p[3] = { this->ProbePosition[0], this->ProbePosition[1], this->ProbePosition[2] };
    c->Broadcast(p, 3, 0); // rank 0's handle is the one the user moved
    rows.assign(p, p + 3);
    positions.assign(p, p + 3);
    return true;
  }
  if (this->QueryMode == POINT_ID)
  {
    for (vtkIdType i = 0; i < n && *selfRow < 0; ++i)
    {
      *selfRow = gids[i] == this->QueryPointId ? i : -1;
    }
    int mine = *selfRow >= 0 ? me : -1, owner = -1;
    c->AllReduce(&mine, &owner, 1, vtkCommunicator::MAX_OP);
    if (owner < 0)
    {
      vtkErrorMacro(<< Label << ": Query Point Id " << this->QueryPointId
                    << " is not a global point id of the data (their ids are 0 to "
                    << vtkVicinity::AllSumIds(c, n) - 1 << " unless the input has its own).");
      return false;
    }
    if (me != owner)
    {
      *selfRow = -1; // a global id held twice: the highest rank's copy is the query
    }
    rows.resize(d);
    positions.resize(3);
    if (me == owner)
    {
      std::copy(dataRows + *selfRow * d, dataRows + (*selfRow + 1) * d, rows.begin());
      input->GetPoint(*selfRow, positions.data());
    }
    c->Broadcast(rows.data(), d, owner);
    c->Broadcast(positions.data(), 3, owner);
    return true;
  }
  // Query Points: every rank's piece of input 1, gathered in rank order.
  int have = queries ? 1 : 0, anyHave = 0;
  c->AllReduce(&have, &anyHave, 1, vtkCommunicator::MAX_OP);
  if (!anyHave)
  {
    vtkErrorMacro(<< Label << ": Query Mode is 'Query Points' but nothing is connected to the "
                              "Queries input.");
    return false;
  }
  vtkVicinity::Rows q;
  q.D = d;
  Outcome read = Outcome::Done;
  const vtkIdType nq = queries ? queries->GetNumberOfPoints() : 0;
  if (nq > 0 && this->UseFeatureArray)
  {
    vtkInformation* info = this->GetInputArrayInformation(0);
    const char* name = info && info->Has(vtkDataObject::FIELD_NAME()) ? info->Get(vtkDataObject::FIELD_NAME()) : nullptr;
    vtkDataArray* qa = name ? queries->GetPointData()->GetArray(name) : nullptr;
    if (!qa || qa->GetNumberOfComponents() != d)
    {
      vtkErrorMacro(<< Label << ": the query points need a point-data array '" << (name ? name : "")
                    << "' with " << d << " components, like the data's feature array.");
      read = Outcome::Failed;
    }
    else
    {
      vtkVicinity::ExtractArrayRows(qa, q);
    }
  }
  else if (nq > 0)
  {
    vtkVicinity::ExtractPointRows(queries, q);
  }
  if (vtkVicinity::AgreeOutcome(c, this, Label, read) != Outcome::Done)
  {
    return false;
  }
  std::vector<double> pos(3 * nq);
  for (vtkIdType i = 0; i < nq; ++i)
  {
    queries->GetPoint(i, &pos[3 * i]);
  }
  std::vector<vtkIdType> counts(nranks), offsets(nranks, 0);
  vtkIdType mine = nq;
  c->AllGather(&mine, counts.data(), 1);
  vtkIdType all = 0;
  for (int r = 0; r < nranks; ++r)
  {
    offsets[r] = all;
    all += counts[r];
  }
  std::vector<vtkIdType> rowCounts(nranks), rowOffsets(nranks), posCounts(nranks), posOffsets(nranks);
  for (int r = 0; r < nranks; ++r)
  {
    rowCounts[r] = counts[r] * d;
    rowOffsets[r] = offsets[r] * d;
    posCounts[r] = counts[r] * 3;
    posOffsets[r] = offsets[r] * 3;
  }
  rows.resize(all * d);
  positions.resize(all * 3);
  q.Values.resize(nq * d); // an empty piece sends nothing
  c->AllGatherV(q.Values.data(), rows.data(), nq * d, rowCounts.data(), rowOffsets.data());
  c->AllGatherV(pos.data(), positions.data(), 3 * nq, posCounts.data(), posOffsets.data());
  return true;
}

vtkVicinity::Outcome vtkVicinityKnnQueryProbe::CheckPieceRows(
  vtkMPIController* c, vtkVicinity::Context& ctx, vtkDataSet* input, vtkIdTypeArray* gids)
{
  // Rows that a current index was built from passed when it was built; the
  // others are read (a copy) only to be checked.  A missing feature array
  // is left to UpdateIndex, which says so.
  vtkVicinity::Rows rows;
  const vtkIdType n = input->GetNumberOfPoints();
  vtkDataArray* array = nullptr;
  int association = -1;
  if (this->UseFeatureArray)
  {
    array = this->GetInputArrayToProcess(0, input, association);
  }
  const bool current = n >= 2 && this->Cache->Matches(this->MakeKey(input, array));
  if (n > 0 && !current)
  {
    if (!this->UseFeatureArray)
    {
      vtkVicinity::ExtractPointRows(input, rows);
    }
    else if (array && association == vtkDataObject::FIELD_ASSOCIATION_POINTS &&
      array->GetNumberOfTuples() == n)
    {
      vtkVicinity::ExtractArrayRows(array, rows);
    }
  }
  return vtkVicinity::AgreeValidRows(c, this, Label, ctx,
    rows.View(static_cast<vic_metric>(this->Metric), nullptr), gids->GetPointer(0));
}

int vtkVicinityKnnQueryProbe::RequestDistributed(
  vtkMPIController* c, vtkDataSet* input, vtkDataSet* queries, vtkPolyData* output)
{
  const double t0 = Now();
  const int me = c->GetLocalProcessId(), nranks = c->GetNumberOfProcesses();
  // Properties are the same on every rank: these refusals agree.
  if (this->IndexFileMode != INDEX_IN_MEMORY)
  {
    vtkErrorMacro(<< Label << ": an index file is for a single process; under MPI every rank "
                              "indexes its own piece in memory. Set Index File to 'In Memory'.");
    return 0;
  }
  if (this->QueryMode == HANDLE && this->UseFeatureArray)
  {
    vtkErrorMacro(<< Label << ": the handle is a position in 3-d space, but the index is in "
                              "feature space; choose Query Mode 'Point Id' (points most like a "
                              "data point) or 'Query Points'.");
    return 0;
  }
  const vtkIdType n = input->GetNumberOfPoints();
  auto gids = vtkVicinity::PieceGlobalIds(c, input);
  const vtkIdType total = vtkVicinity::AllSumIds(c, n);

  vtkVicinity::Context ctx(this);
  // One GPU per rank, as the other filters' MPI paths take it.
  const int device = vtkVicinity::DeviceForRank(me, this->Device, vtkVicinity::UsableDevices());
  int bad = ctx.Create(static_cast<vic_backend>(this->Backend), device, this->Threads,
              static_cast<uint64_t>(static_cast<uint32_t>(this->Seed)))
    ? 0
    : 1;
  if (bad)
  {
    vtkErrorMacro(<< Label << ": " << ctx.Error());
  }
  if (!bad && this->CheckPieceRows(c, ctx, input, gids) != Outcome::Done)
  {
    return 0;
  }
  // Each rank's index of its own piece; a piece of one point has no index
  // (the core needs two) and is searched exactly.
  Outcome indexed = bad ? Outcome::Failed : Outcome::Done;
  vtkVicinity::Rows single;
  this->RebuiltNow = false;
  if (!bad && n >= 2)
  {
    indexed = this->UpdateIndex(ctx, input);
  }
  else if (!bad && n == 1)
  {
    int association = -1;
    vtkDataArray* array =
      this->UseFeatureArray ? this->GetInputArrayToProcess(0, input, association) : nullptr;
    std::string source;
    indexed = vtkVicinity::SelectRows(
                this, Label, input, this->UseFeatureArray, array, association, single, source)
      ? Outcome::Done
      : Outcome::Failed;
  }
  indexed = vtkVicinity::AgreeOutcome(c, this, Label, indexed);
  if (indexed != Outcome::Done)
  {
    return indexed == Outcome::Cancelled ? 1 : 0;
  }
  const vic_data x =
    n >= 2 ? this->Cache->View() : single.View(static_cast<vic_metric>(this->Metric), nullptr);
  int dims[2] = { n > 0 ? x.d : INT_MAX, n > 0 ? x.d : 0 }, dmin = 0, dmax = 0;
  c->AllReduce(&dims[0], &dmin, 1, vtkCommunicator::MIN_OP);
  c->AllReduce(&dims[1], &dmax, 1, vtkCommunicator::MAX_OP);
  if (total == 0)
  {
    return 1; // nothing to search: empty in, empty out
  }
  if (dmin != dmax)
  {
    vtkErrorMacro(<< Label << ": the rows have " << dmin << " components on some MPI ranks and "
                  << dmax << " on others.");
    return 0;
  }

  std::vector<float> rows;
  std::vector<double> positions;
  vtkIdType selfRow = -1;
  if (!this->DistributedQueries(
        c, input, queries, gids->GetPointer(0), x.rows, dmax, rows, positions, &selfRow))
  {
    return 0;
  }
  const vtkIdType selfGid = this->QueryMode == POINT_ID ? this->QueryPointId : -1;
  const vtkIdType nq = static_cast<vtkIdType>(rows.size()) / dmax;
  vic_knn knn = {};
  Outcome searched = Outcome::Done;
  const double ts = Now();
  if (n > 0 && nq > 0)
  {
    vic_data q = x;
    q.rows = rows.data();
    q.n = nq;
    q.stride = 0;
    vic_search_options so;
    vic_search_options_init(&so);
    // Point Id mode: one more, as the owner's point finds itself (dropped).
    const vtkIdType want = this->K + (selfGid >= 0 ? 1 : 0);
    so.k = static_cast<int32_t>(std::min(want, n));
    so.tau = static_cast<float>(this->SearchTau);
    so.max_visits = this->MaxVisits;
    so.entry_points = this->EntryPoints;
    ctx.SetCallRange(0.95, 1.0);
    searched = vtkVicinity::CheckCall(this, Label, ctx,
      n >= 2 ? vic_index_search(ctx.Get(), this->Cache->Get(), &q, &so, &knn)
             : vic_knn_query_exact(ctx.Get(), &x, &q, so.k, &knn));
  }
  searched = vtkVicinity::AgreeOutcome(c, this, Label, searched);
  if (searched != Outcome::Done)
  {
    vic_knn_free(&knn);
    return searched == Outcome::Cancelled ? 1 : 0;
  }
  const double querySeconds = Now() - ts;
  auto mine = Candidates(input, knn, gids->GetPointer(0), selfGid, selfRow, this->K);
  vic_knn_free(&knn);
  if (me != 0)
  {
    c->Send(mine, 0, CandidatesTag);
  }
  else
  {
    std::vector<vtkSmartPointer<vtkPolyData>> parts{ mine };
    for (int r = 1; r < nranks; ++r)
    {
      auto part = vtkSmartPointer<vtkPolyData>::New();
      c->Receive(part, r, CandidatesTag);
      parts.push_back(part);
    }
    MergeAndAssemble(parts, nq, positions, selfGid, this->K, output);
  }

  // Field data, the same on every rank: counters summed, seconds the
  // slowest rank's, the index's method as rank 0 (or the rank) built it.
  vtkFieldData* fd = output->GetFieldData();
  const vic_report* built = n >= 2 ? vic_index_report(this->Cache->Get()) : nullptr;
  vtkVicinity::AddFieldInt(fd, "Index Builds", vtkVicinity::AllSumIds(c, this->Cache->Builds()));
  vtkVicinity::AddFieldInt(fd, "Index Loads", vtkVicinity::AllSumIds(c, this->Cache->Loads()));
  vtkVicinity::AddFieldInt(fd, "Index Rebuilt", vtkVicinity::AllMax(c, this->RebuiltNow ? 1 : 0) > 0);
  vtkVicinity::AddFieldDouble(fd, "Seconds Index Build", vtkVicinity::AllMax(c, this->LastBuildSeconds));
  vtkVicinity::AddFieldDouble(fd, "Seconds Query", vtkVicinity::AllMax(c, querySeconds));
  vtkVicinity::AddFieldString(fd, "Index Method", built ? vic_method_name(built->method) : "brute");
  vtkVicinity::AddFieldString(fd, "Index Reason",
    built ? built->reason : "this rank holds fewer than 2 points: exact search");
  vtkVicinity::AddFieldInt(fd, "Index Points", total);
  vtkVicinity::AddFieldInt(fd, "Dimension", dmax);
  vtkVicinity::AddFieldString(fd, "Metric", vic_metric_name(static_cast<vic_metric>(this->Metric)));
  vtkVicinity::AddFieldString(fd, "Query Mode",
    this->QueryMode == HANDLE ? "Handle" : this->QueryMode == QUERY_POINTS ? "Query Points" : "Point Id");
  vtkVicinity::AddFieldInt(fd, "Queries", nq);
  vtkVicinity::AddFieldInt(fd, "k", this->K);
  vtkVicinity::AddFieldInt(fd, "MPI Ranks", nranks);
  vtkVicinity::AddFieldDouble(fd, "Seconds Execute", vtkVicinity::AllMax(c, Now() - t0));
  return 1;
}
