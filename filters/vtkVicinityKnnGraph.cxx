#include "vtkVicinityKnnGraph.h"
#include "vtkVicinityCoreOptions.h"
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityFilterSupport.h"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkIntArray.h>
#include <vtkMPIController.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <numeric>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkVicinityKnnGraph);

namespace
{
const char* const Label = "kNN Graph";
}

vtkVicinityKnnGraph::vtkVicinityKnnGraph()
  : vtkVicinityKnnAlgorithm(2, 1)
{
  // k and the recall sample default to the core's, as the build options do.
  vic_build_options o;
  vic_build_options_init(&o);
  this->K = o.k;
  this->RecallSample = o.recall_sample;
}

const char* vtkVicinityKnnGraph::GetLabel() const
{
  return Label;
}

namespace
{
// Points of the graph: the input's own vtkPoints when it has them (shared,
// not copied), else the implicit points of image data and the like.
vtkSmartPointer<vtkPoints> PointsOf(vtkDataSet* input)
{
  if (auto* ps = vtkPointSet::SafeDownCast(input))
  {
    if (ps->GetPoints())
    {
      return ps->GetPoints();
    }
  }
  auto pts = vtkSmartPointer<vtkPoints>::New();
  pts->SetNumberOfPoints(input->GetNumberOfPoints());
  double p[3];
  for (vtkIdType i = 0; i < input->GetNumberOfPoints(); ++i)
  {
    input->GetPoint(i, p);
    pts->SetPoint(i, p);
  }
  return pts;
}

// One line cell per directed edge i -> ids[i][r], skipping missing
// neighbours (-1), with the edge's distance and rank as cell data.  rows:
// the rows i that get edges (nullptr: all; under MPI the owned rows of the
// owned + halo points, so that each edge is drawn by one rank only).
// Bytes per list entry of the graph at most (offsets, two connectivity
// ids, distance, rank), for the up-front memory estimate.
constexpr double GraphBytesPerEntry = 3 * sizeof(vtkIdType) + sizeof(float) + sizeof(int);

// Returns false (with an error on self) when the graph's arrays cannot be
// allocated.  IdT: the lists' id type (vtkIdType or int64_t).
template <typename IdT>
bool BuildGraph(vtkAlgorithm* self, vtkDataSet* input, vtkPointData* pointArrays, const IdT* ids,
  const float* dists, vtkIdType n, int k, const std::vector<vtkIdType>* rows, vtkPolyData* graph)
{
  std::vector<vtkIdType> all;
  if (!rows)
  {
    all.resize(n);
    std::iota(all.begin(), all.end(), vtkIdType(0));
    rows = &all;
  }
  vtkIdType edges = 0;
  for (vtkIdType i : *rows)
  {
    for (int r = 0; r < k; ++r)
    {
      edges += ids[i * k + r] >= 0;
    }
  }
  auto offsets = vtkVicinity::CheckedArray<vtkIdTypeArray>(edges + 1);
  auto conn = offsets ? vtkVicinity::CheckedArray<vtkIdTypeArray>(2 * edges) : nullptr;
  auto distance = conn ? vtkVicinity::CheckedArray<vtkFloatArray>(edges) : nullptr;
  auto rank = distance ? vtkVicinity::CheckedArray<vtkIntArray>(edges) : nullptr;
  if (!rank)
  {
    vtkErrorWithObjectMacro(self, << Label << ": out of memory allocating the graph of " << edges
                                  << " edges; turn Generate Graph off or lower k.");
    return false;
  }
  distance->SetName("Distance");
  rank->SetName("Rank");
  vtkIdType c = 0;
  for (vtkIdType i : *rows)
  {
    for (int r = 0; r < k; ++r)
    {
      const int64_t j = static_cast<int64_t>(ids[i * k + r]);
      if (j < 0)
      {
        continue;
      }
      offsets->SetValue(c, 2 * c);
      conn->SetValue(2 * c, i);
      conn->SetValue(2 * c + 1, static_cast<vtkIdType>(j));
      distance->SetValue(c, dists[i * k + r]);
      rank->SetValue(c, r);
      ++c;
    }
  }
  offsets->SetValue(edges, 2 * edges);
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  lines->SetData(offsets, conn);
  graph->SetPoints(PointsOf(input));
  graph->SetLines(lines);
  graph->GetCellData()->AddArray(distance);
  graph->GetCellData()->AddArray(rank);
  graph->GetPointData()->ShallowCopy(pointArrays); // colour the graph by d_nn1 etc.
  return true;
}
} // namespace

// The friend that reads the properties (the header cannot name
// vic_build_options: vicinity.h is private to the module).
struct vtkVicinityKnnGraphOptions
{
  static vic_build_options Of(const vtkVicinityKnnGraph* self);
};

vic_build_options vtkVicinityKnnGraphOptions::Of(const vtkVicinityKnnGraph* self)
{
  vic_build_options o = vtkVicinity::CoreBuildOptions(self->BuildOptions, self->Method, self->K);
  o.recall_sample = self->RecallSample;
  return o;
}

bool vtkVicinityKnnGraph::ProcessDataSet(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph)
{
  vtkVicinity::Rows rows;
  std::string source;
  int association = -1;
  vtkDataArray* array =
    this->UseFeatureArray ? this->GetInputArrayToProcess(0, input, association) : nullptr;
  vtkVicinity::PeriodicBoxView box;
  // float32 rows are read in place: the lists are the call's only large
  // allocation (the coordinates of double points are still copied to float)
  if (!vtkVicinity::SelectRows(
        this, Label, input, this->UseFeatureArray, array, association, rows, source, true) ||
    !vtkVicinity::PeriodicBox(this, Label, this->Periodic, this->UseBoxFromData, this->BoxLengths,
      input, rows, source, box))
  {
    return false;
  }
  const vic_metric metric = static_cast<vic_metric>(this->Metric);
  const vic_data x = rows.View(metric, box.Box(), box.OriginOrNull());

  const vic_build_options o = vtkVicinityKnnGraphOptions::Of(this);

  // The core writes the lists into the output's own arrays: no second copy.
  vtkVicinity::KnnArrays lists;
  switch (vtkVicinity::BuildKnnIntoArrays(this, Label, ctx, x, o, this->GenerateGraph ? GraphBytesPerEntry : 0,
    "Neighbor Ids", "Neighbor Distances", lists))
  {
    case vtkVicinity::Outcome::Cancelled:
      output->Initialize();
      return true;
    case vtkVicinity::Outcome::Failed:
      return false;
    case vtkVicinity::Outcome::Done:
      break;
  }
  rows = vtkVicinity::Rows(); // release any copy before the outputs grow
  const vic_knn& knn = lists.View;

  vtkPointData* pd = output->GetPointData();
  auto dnn1 = vtkVicinity::DistanceColumn(knn, 0, "d_nn1");
  if (!dnn1)
  {
    vtkErrorMacro(<< Label << ": out of memory allocating d_nn1 for " << knn.n << " points.");
    return false;
  }
  pd->AddArray(lists.Ids);
  pd->AddArray(lists.Distances);
  pd->AddArray(dnn1);

  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(knn.report, metric, x.d, source.c_str(), fd);
  output->SetFieldData(fd);

  if (this->WantGraph(static_cast<vtkIdType>(knn.n)))
  {
    if (!BuildGraph(this, input, pd, lists.Ids->GetPointer(0), knn.dist, knn.n, knn.k, nullptr, graph))
    {
      return false;
    }
    graph->SetFieldData(fd);
  }
  return true;
}

bool vtkVicinityKnnGraph::ProcessDistributed(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph)
{
  vtkMPIController* c = vtkVicinity::MultiProcessController();
  // Every rank sees the same properties, so these choices agree.
  if (this->UseFeatureArray)
  {
    return this->ProcessShardedFeatures(ctx, input, output, graph);
  }
  if (this->Periodic || this->Metric != VIC_L2)
  {
    vtkErrorMacro(<< Label << ": under MPI with several processes the graph on the point "
                             "coordinates uses the L2 metric, not periodic; a periodic box or "
                             "another metric on coordinates needs a single process (feature "
                             "arrays take any metric).");
    return false;
  }
  auto* cloud = vtkPolyData::SafeDownCast(output);
  vtkVicinity::DistributedPoints dp(c);
  if (dp.Redistribute(this, Label, ctx, input, this->K) != vtkVicinity::Outcome::Done)
  {
    output->Initialize();
    return false;
  }

  const vic_build_options o = vtkVicinityKnnGraphOptions::Of(this);
  vtkVicinity::Rows rows;
  vic_knn knn{};
  auto build = [&](vtkPolyData* local, const vic_knn** lists) {
    vic_knn_free(&knn);
    vtkVicinity::ExtractPointRows(local, rows);
    *lists = &knn;
    if (rows.N < 2)
    {
      knn.n = rows.N; // no neighbours here: the halo check grows the halo
      return vtkVicinity::Outcome::Done;
    }
    const vic_data x = rows.View(VIC_L2, nullptr);
    return vtkVicinity::CheckCall(this, Label, ctx, vic_knn_build(ctx.Get(), &x, &o, &knn));
  };
  const vtkVicinity::Outcome outcome = dp.BuildWithHalo(this, Label, this->K, build);
  if (outcome != vtkVicinity::Outcome::Done)
  {
    vic_knn_free(&knn);
    output->Initialize();
    return outcome == vtkVicinity::Outcome::Cancelled;
  }

  vic_knn owned = dp.OwnedLists(knn);
  const vic_report report = dp.GlobalReport(owned);
  cloud->ShallowCopy(dp.OwnedCloud());
  vtkPointData* pd = cloud->GetPointData();
  auto ids = vtkVicinity::WrapIds(owned, "Neighbor Ids");
  auto dists = ids ? vtkVicinity::WrapDistances(owned, "Neighbor Distances") : nullptr;
  auto dnn1 = dists ? vtkVicinity::DistanceColumn(owned, 0, "d_nn1") : nullptr;
  if (!dnn1)
  {
    vtkErrorMacro(<< Label << ": out of memory allocating the output arrays of " << owned.n << " points x "
                  << owned.k << " neighbours.");
    vic_knn_free(&owned);
    vic_knn_free(&knn);
    cloud->Initialize();
    return false;
  }
  pd->AddArray(ids);
  pd->AddArray(dists);
  pd->AddArray(dnn1);
  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(report, VIC_L2, 3, "Point Coordinates", fd);
  dp.WriteHaloReport(fd);
  cloud->SetFieldData(fd);
  if (this->WantGraph(dp.GlobalPoints()))
  {
    // Edges of the owned points; their far ends may be halo points, so the
    // graph's points are owned + halo (with the input's point arrays).
    if (!BuildGraph(this, dp.Local(), dp.Local()->GetPointData(), knn.ids, knn.dist, knn.n, knn.k,
          &dp.OwnedRows(), graph))
    {
      vic_knn_free(&owned);
      vic_knn_free(&knn);
      return false;
    }
    graph->SetFieldData(fd);
  }
  vic_knn_free(&owned);
  vic_knn_free(&knn);
  return true;
}

bool vtkVicinityKnnGraph::WantGraph(vtkIdType points)
{
  if (this->GenerateGraph != GraphAuto)
  {
    return this->GenerateGraph == GraphOn;
  }
  if (points <= GraphAutoMaxPoints)
  {
    return true;
  }
  vtkWarningMacro(<< Label << ": the graph output (port 1, " << points << " x " << this->K
                  << " lines) is not built above " << GraphAutoMaxPoints
                  << " points by default; the neighbour arrays are on port 0. Set Generate "
                     "Graph to On to build it.");
  return false;
}

void vtkVicinityKnnGraph::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Metric: " << vic_metric_name(static_cast<vic_metric>(this->Metric)) << "\n";
  os << indent << "RecallSample: " << this->RecallSample << "\n";
  os << indent << "GenerateGraph: " << this->GenerateGraph << "\n";
}
