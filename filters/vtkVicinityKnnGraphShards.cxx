// vtkVicinityKnnGraph on a feature array under MPI with several processes
// (approximate, high-d): the pieces stay where they are (port 0 is each
// rank's input piece with its lists), every rank indexes a shard of the
// rows with the core (vic_index_build: the NN-Descent search graph, or
// brute force where the core's AUTO finds the shard small), and every
// rank's rows go round the ring of shards (vtkVicinityShards.h) to collect
// their k nearest rows with global ids.  The recall estimate is measured
// the same way: a sample of rows searched exactly (vic_knn_query_exact)
// round the ring, hits and totals summed over the ranks.
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityKnnGraph.h"
#include "vtkVicinityShards.h"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkCommunicator.h>
#include <vtkDataSet.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkIntArray.h>
#include <vtkMPIController.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>

// Declared (and defined) in vtkVicinityKnnGraph.cxx: the properties as
// the core's build options.
struct vtkVicinityKnnGraphOptions
{
  static vic_build_options Of(const vtkVicinityKnnGraph* self);
};

namespace
{
using vtkVicinity::GlobalLists;
using vtkVicinity::Outcome;

double Now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

vtkSmartPointer<vtkIdTypeArray> IdsArray(const GlobalLists& l, const char* name)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(l.K);
  a->SetNumberOfTuples(l.N);
  std::copy(l.Ids.begin(), l.Ids.end(), a->GetPointer(0));
  return a;
}

vtkSmartPointer<vtkFloatArray> DistArray(const GlobalLists& l, const char* name, int column)
{
  auto a = vtkSmartPointer<vtkFloatArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(column < 0 ? l.K : 1);
  a->SetNumberOfTuples(l.N);
  for (vtkIdType i = 0; i < l.N; ++i)
  {
    for (int r = 0; r < l.K; ++r)
    {
      if (column < 0)
      {
        a->SetTypedComponent(i, r, l.Dist[i * l.K + r]);
      }
      else if (r == column)
      {
        a->SetValue(i, l.Dist[i * l.K + r]);
      }
    }
  }
  return a;
}

// The graph of this rank's rows: its own points (with the output's point
// data) first, then the far ends that other ranks hold, at the positions
// the ring brought back (their point data left null, their Global Ids set).
void ShardGraph(vtkDataSet* input, vtkPointData* pd, const GlobalLists& l, const vtkIdType* gids,
  vtkPolyData* graph)
{
  const vtkIdType n = input->GetNumberOfPoints();
  std::unordered_map<vtkIdType, vtkIdType> row;
  for (vtkIdType i = 0; i < n; ++i)
  {
    row[gids[i]] = i;
  }
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToFloat();
  double p[3];
  for (vtkIdType i = 0; i < n; ++i)
  {
    input->GetPoint(i, p);
    points->InsertNextPoint(p);
  }
  std::vector<vtkIdType> farGids;
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  auto conn = vtkSmartPointer<vtkIdTypeArray>::New();
  auto distance = vtkSmartPointer<vtkFloatArray>::New();
  distance->SetName("Distance");
  auto rank = vtkSmartPointer<vtkIntArray>::New();
  rank->SetName("Rank");
  for (vtkIdType i = 0; i < l.N; ++i)
  {
    for (int r = 0; r < l.K; ++r)
    {
      const size_t at = static_cast<size_t>(i) * l.K + r;
      if (l.Ids[at] < 0)
      {
        continue;
      }
      auto it = row.find(l.Ids[at]);
      if (it == row.end())
      {
        it = row.emplace(l.Ids[at], points->InsertNextPoint(&l.Pos[3 * at])).first;
        farGids.push_back(l.Ids[at]);
      }
      offsets->InsertNextValue(conn->GetNumberOfValues());
      conn->InsertNextValue(i);
      conn->InsertNextValue(it->second);
      distance->InsertNextValue(l.Dist[at]);
      rank->InsertNextValue(r);
    }
  }
  offsets->InsertNextValue(conn->GetNumberOfValues());
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  lines->SetData(offsets, conn);
  const vtkIdType total = points->GetNumberOfPoints();
  vtkPointData* gpd = graph->GetPointData();
  gpd->CopyAllocate(pd, total);
  for (vtkIdType i = 0; i < total; ++i)
  {
    if (i < n)
    {
      gpd->CopyData(pd, i, i);
    }
    else
    {
      gpd->NullData(i);
    }
  }
  if (auto* g = vtkIdTypeArray::SafeDownCast(gpd->GetArray(vtkVicinity::GlobalIdsName)))
  {
    for (size_t j = 0; j < farGids.size(); ++j)
    {
      g->SetValue(n + static_cast<vtkIdType>(j), farGids[j]);
    }
  }
  graph->SetPoints(points);
  graph->SetLines(lines);
  graph->GetCellData()->AddArray(distance);
  graph->GetCellData()->AddArray(rank);
}

// This rank's share of the recall sample: rows picked by a seeded
// shuffle, in proportion to its rows (so the ranks together sample about
// `sample` rows, as one process would).
std::vector<vtkIdType> SampleRows(vtkIdType n, vtkIdType total, int sample, int seed, int rank)
{
  const vtkIdType m = std::min<vtkIdType>(
    n, static_cast<vtkIdType>(std::llround(static_cast<double>(sample) * n / std::max<vtkIdType>(total, 1))));
  std::vector<vtkIdType> rows(n);
  std::iota(rows.begin(), rows.end(), vtkIdType(0));
  std::mt19937_64 rng(static_cast<uint64_t>(static_cast<uint32_t>(seed)) * 1000003u + rank);
  for (vtkIdType i = 0; i < m; ++i)
  {
    std::uniform_int_distribution<vtkIdType> pick(i, n - 1);
    std::swap(rows[i], rows[pick(rng)]);
  }
  rows.resize(m);
  std::sort(rows.begin(), rows.end());
  return rows;
}
} // namespace

bool vtkVicinityKnnGraph::ProcessShardedFeatures(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph)
{
  const char* label = this->GetLabel();
  const double t0 = Now();
  vtkMPIController* c = vtkVicinity::MultiProcessController();
  const vic_metric metric = static_cast<vic_metric>(this->Metric);
  if (this->Periodic) // the same property on every rank: all refuse together
  {
    vtkErrorMacro(<< label << ": a periodic box is not supported for feature arrays under MPI "
                             "with several processes; run it in a single process.");
    return false;
  }
  const vtkIdType n = input ? input->GetNumberOfPoints() : 0;
  vtkVicinity::ShardRows piece;
  std::string source;
  Outcome read = Outcome::Done;
  if (n > 0)
  {
    int association = -1;
    vtkDataArray* array = this->GetInputArrayToProcess(0, input, association);
    if (!vtkVicinity::SelectRows(this, label, input, true, array, association, piece.Data, source))
    {
      read = Outcome::Failed;
    }
  }
  if (vtkVicinity::AgreeOutcome(c, this, label, read) != Outcome::Done)
  {
    return false;
  }
  // Every rank with points must have the same number of components.
  int mine[2] = { n > 0 ? piece.Data.D : INT_MAX, n > 0 ? piece.Data.D : 0 }, dmin = 0, dmax = 0;
  c->AllReduce(&mine[0], &dmin, 1, vtkCommunicator::MIN_OP);
  c->AllReduce(&mine[1], &dmax, 1, vtkCommunicator::MAX_OP);
  const vtkIdType total = vtkVicinity::AllSumIds(c, n);
  if (total > 0 && dmin != dmax)
  {
    vtkErrorMacro(<< label << ": the feature array has " << dmin << " components on some MPI ranks and "
                  << dmax << " on others.");
    return false;
  }
  if (total < 2)
  {
    vtkErrorMacro(<< label << ": a kNN graph needs at least 2 points (got " << total
                  << " over all MPI ranks).");
    return false;
  }
  piece.Data.D = dmax;
  vtkInformation* arrayInfo = this->GetInputArrayInformation(0);
  if (source.empty())
  {
    source = arrayInfo && arrayInfo->Has(vtkDataObject::FIELD_NAME())
      ? arrayInfo->Get(vtkDataObject::FIELD_NAME())
      : "(feature array)";
  }
  auto gids = vtkVicinity::PieceGlobalIds(c, input);
  if (vtkVicinity::AgreeValidRows(c, this, label, ctx, piece.Data.View(metric, nullptr),
        gids->GetPointer(0)) != Outcome::Done)
  {
    output->Initialize();
    return false;
  }
  piece.Gids.assign(gids->GetPointer(0), gids->GetPointer(0) + n);
  vtkVicinity::Rows xyz;
  if (n > 0)
  {
    vtkVicinity::ExtractPointRows(input, xyz);
  }
  piece.Positions = std::move(xyz.Values);
  const vtkVicinity::ShardRows queries = piece; // this rank's rows, asked of every shard
  vtkVicinity::ShardRows shard;
  bool rebalanced = false;
  vtkVicinity::MakeShard(c, std::move(piece), shard, &rebalanced);

  // The shard's index (a shard of one row has none: it is searched exactly).
  const vic_build_options o = vtkVicinityKnnGraphOptions::Of(this);
  vic_index* ix = nullptr;
  Outcome made = Outcome::Done;
  const vic_data x = shard.Data.View(metric, nullptr);
  if (shard.Data.N >= 2)
  {
    ctx.SetCallRange(0.0, 0.7);
    made = vtkVicinity::CheckCall(this, label, ctx, vic_index_build(ctx.Get(), &x, &o, &ix));
  }
  made = vtkVicinity::AgreeOutcome(c, this, label, made);
  if (made != Outcome::Done)
  {
    vic_index_free(ix);
    output->Initialize();
    return made == Outcome::Cancelled;
  }
  vic_search_options so;
  vic_search_options_init(&so);
  auto search = [&](const vic_data& q, int want, vic_knn* found) {
    so.k = want;
    return vtkVicinity::CheckCall(this, label, ctx,
      ix ? vic_index_search(ctx.Get(), ix, &q, &so, found)
         : vic_knn_query_exact(ctx.Get(), &x, &q, want, found));
  };
  auto exact = [&](const vic_data& q, int want, vic_knn* found) {
    return vtkVicinity::CheckCall(
      this, label, ctx, vic_knn_query_exact(ctx.Get(), &x, &q, want, found));
  };
  const int k = static_cast<int>(std::min<vtkIdType>(this->K, total - 1));
  if (k < this->K && c->GetLocalProcessId() == 0)
  {
    vtkWarningMacro(<< label << ": k = " << this->K << " >= n = " << total
                    << " points: clamped to k = " << k << ".");
  }
  ctx.SetCallRange(0.7, 0.95);
  GlobalLists lists;
  Outcome searched = vtkVicinity::RingTopK(c, this, label, shard, queries, k, metric, search, lists);

  // Recall: only where some shard's index is approximate.
  vic_report report{};
  if (ix)
  {
    report = *vic_index_report(ix);
  }
  else
  {
    report.method = VIC_METHOD_BRUTE;
    report.backend = VIC_BACKEND_CPU;
    std::snprintf(report.reason, sizeof report.reason,
      "this rank's shard has %lld row(s), too few for an index: exact search",
      static_cast<long long>(shard.Data.N));
  }
  int approx = ix && report.method != VIC_METHOD_BRUTE && report.method != VIC_METHOD_GRID ? 1 : 0;
  int anyApprox = 0;
  c->AllReduce(&approx, &anyApprox, 1, vtkCommunicator::MAX_OP);
  double hits = 0, checked = 0, sampled = 0;
  if (searched == Outcome::Done && anyApprox && this->RecallSample > 0)
  {
    const std::vector<vtkIdType> rows =
      SampleRows(n, total, this->RecallSample, this->Seed, c->GetLocalProcessId());
    vtkVicinity::ShardRows picked;
    picked.Data.D = queries.Data.D;
    picked.Data.N = static_cast<vtkIdType>(rows.size());
    for (vtkIdType r : rows)
    {
      const float* row = queries.Data.Values.data() + r * queries.Data.D;
      picked.Data.Values.insert(picked.Data.Values.end(), row, row + queries.Data.D);
      picked.Gids.push_back(queries.Gids[r]);
    }
    ctx.SetCallRange(0.95, 1.0);
    GlobalLists truth;
    searched = vtkVicinity::RingTopK(c, this, label, shard, picked, k, metric, exact, truth);
    if (searched == Outcome::Done)
    {
      vtkVicinity::CountRecall(lists, rows, truth, &hits, &checked);
    }
    sampled = static_cast<double>(rows.size());
  }
  vic_index_free(ix);
  if (searched != Outcome::Done)
  {
    output->Initialize();
    return searched == Outcome::Cancelled;
  }

  // The report: the shard index's method and reason, global statistics.
  double sum = 0, mx = 0, count = 0;
  for (vtkIdType i = 0; i < lists.N; ++i)
  {
    if (lists.Ids[i * k] >= 0)
    {
      sum += lists.Dist[i * k];
      mx = std::max(mx, static_cast<double>(lists.Dist[i * k]));
      ++count;
    }
  }
  const double counted = vtkVicinity::AllSum(c, count);
  report.dnn1_mean = counted > 0 ? vtkVicinity::AllSum(c, sum) / counted : 0;
  report.dnn1_max = vtkVicinity::AllMax(c, mx);
  const double allChecked = vtkVicinity::AllSum(c, checked);
  const double allSampled = vtkVicinity::AllSum(c, sampled);
  const double allHits = vtkVicinity::AllSum(c, hits);
  // Exact shards everywhere: 1, as the core says of exact lists; no sample
  // asked for: -1 (not measured).
  report.recall_estimate = !anyApprox ? 1.0 : allChecked > 0 ? allHits / allChecked : -1.0;
  report.recall_sample = static_cast<int64_t>(anyApprox ? allSampled : 0);
  report.k_requested = this->K;
  report.k = k;
  report.seconds_total = vtkVicinity::AllMax(c, Now() - t0);
  report.warnings = static_cast<int>(vtkVicinity::AllSum(c, report.warnings));
  const int nranks = c->GetNumberOfProcesses();
  std::vector<double> shardSizes(nranks);
  double shardSize = static_cast<double>(shard.Data.N);
  c->AllGather(&shardSize, shardSizes.data(), 1);

  output->ShallowCopy(input);
  vtkPointData* pd = output->GetPointData();
  pd->AddArray(IdsArray(lists, "Neighbor Ids"));
  pd->AddArray(DistArray(lists, "Neighbor Distances", -1));
  pd->AddArray(DistArray(lists, "d_nn1", 0));
  pd->AddArray(gids);
  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(report, metric, queries.Data.D, source.c_str(), fd);
  vtkVicinity::AddFieldInt(fd, "MPI Ranks", nranks);
  vtkVicinity::AddFieldString(fd, "Sharding",
    rebalanced ? "feature rows sharded over the ranks, re-cut into equal blocks (the pieces were uneven)"
               : "feature rows sharded over the ranks, one shard per piece");
  auto sizes = vtkSmartPointer<vtkDoubleArray>::New();
  sizes->SetName("Shard Points Per Rank");
  sizes->SetNumberOfValues(nranks);
  std::copy(shardSizes.begin(), shardSizes.end(), sizes->GetPointer(0));
  fd->AddArray(sizes);
  output->SetFieldData(fd);
  if (this->GenerateGraph && n > 0)
  {
    ShardGraph(input, pd, lists, gids->GetPointer(0), graph);
    graph->SetFieldData(fd);
  }
  return true;
}
