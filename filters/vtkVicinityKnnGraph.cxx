#include "vtkVicinityKnnGraph.h"
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
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <string>


vtkStandardNewMacro(vtkVicinityKnnGraph);

vtkVicinityKnnGraph::vtkVicinityKnnGraph()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
  // Default feature array: the active point scalars.
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);

  // The advanced defaults are the core's, so the filter never drifts from it.
  vic_build_options o;
  vic_build_options_init(&o);
  this->K = o.k;
  this->RecallSample = o.recall_sample;
  this->BruteMaxN = o.brute_max_n;
  this->NNDescentKBuild = o.nndescent.k_build;
  this->NNDescentRho = o.nndescent.rho;
  this->NNDescentDelta = o.nndescent.delta;
  this->NNDescentMaxIterations = o.nndescent.max_iterations;
  this->GGNNKBuild = o.ggnn.k_build;
  this->GGNNSegment = o.ggnn.segment;
  this->GGNNLayers = o.ggnn.layers;
  this->GGNNRefinements = o.ggnn.refinements;
  this->GGNNTauBuild = o.ggnn.tau_build;
  this->GNNDKBuild = o.gnnd.k_build;
  this->GNNDSamples = o.gnnd.samples;
  this->GNNDIterations = o.gnnd.iterations;
  this->GNNDConverge = o.gnnd.converge;
  this->GRNNDS = o.grnnd.s;
  this->GRNNDR = o.grnnd.r;
  this->GRNNDT1 = o.grnnd.t1;
  this->GRNNDT2 = o.grnnd.t2;
  this->GRNNDRho = o.grnnd.rho;
  this->TSDGAlpha = o.tsdg.alpha;
  this->TSDGLambda0 = o.tsdg.lambda0;
  this->ShardSize = o.shard_size;
}

int vtkVicinityKnnGraph::FillInputPortInformation(int, vtkInformation* info)
{
  info->Remove(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE());
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkCompositeDataSet");
  return 1;
}

int vtkVicinityKnnGraph::FillOutputPortInformation(int port, vtkInformation* info)
{
  // Port 0 mirrors the input's type; port 1 is vtkPolyData (or a composite
  // of them).  RequestDataObject creates the concrete objects.
  (void)port;
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkDataObject");
  return 1;
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
// neighbours (-1), with the edge's distance and rank as cell data.
void BuildGraph(vtkDataSet* input, vtkPointData* pointArrays, const vic_knn& knn, vtkPolyData* graph)
{
  const int k = knn.k;
  vtkIdType edges = 0;
  for (vtkIdType e = 0; e < knn.n * k; ++e)
  {
    edges += knn.ids[e] >= 0;
  }
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfValues(edges + 1);
  auto conn = vtkSmartPointer<vtkIdTypeArray>::New();
  conn->SetNumberOfValues(2 * edges);
  auto distance = vtkSmartPointer<vtkFloatArray>::New();
  distance->SetName("Distance");
  distance->SetNumberOfValues(edges);
  auto rank = vtkSmartPointer<vtkIntArray>::New();
  rank->SetName("Rank");
  rank->SetNumberOfValues(edges);
  vtkIdType c = 0;
  for (vtkIdType i = 0; i < knn.n; ++i)
  {
    for (int r = 0; r < k; ++r)
    {
      const int64_t j = knn.ids[i * k + r];
      if (j < 0)
      {
        continue;
      }
      offsets->SetValue(c, 2 * c);
      conn->SetValue(2 * c, i);
      conn->SetValue(2 * c + 1, static_cast<vtkIdType>(j));
      distance->SetValue(c, knn.dist[i * k + r]);
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
}
} // namespace

int vtkVicinityKnnGraph::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  return vtkVicinity::MirrorOutputs(inputVector, outputVector, 2);
}

bool vtkVicinityKnnGraph::ProcessDataSet(
  vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph)
{
  vtkVicinity::Rows rows;
  std::string source;
  int association = -1;
  vtkDataArray* array =
    this->UseFeatureArray ? this->GetInputArrayToProcess(0, input, association) : nullptr;
  const double* box = nullptr;
  if (!vtkVicinity::SelectRows(
        this, "kNN Graph", input, this->UseFeatureArray, array, association, rows, source) ||
    !vtkVicinity::PeriodicBox(this, "kNN Graph", this->Periodic, this->BoxLengths, rows, source, &box))
  {
    return false;
  }
  const vic_metric metric = static_cast<vic_metric>(this->Metric);
  const vic_data x = rows.View(metric, box);

  vic_build_options o;
  vic_build_options_init(&o);
  o.method = static_cast<vic_method>(this->Method);
  o.k = this->K;
  o.recall_sample = this->RecallSample;
  o.brute_max_n = this->BruteMaxN;
  o.nndescent.k_build = this->NNDescentKBuild;
  o.nndescent.rho = static_cast<float>(this->NNDescentRho);
  o.nndescent.delta = static_cast<float>(this->NNDescentDelta);
  o.nndescent.max_iterations = this->NNDescentMaxIterations;
  o.ggnn.k_build = this->GGNNKBuild;
  o.ggnn.segment = this->GGNNSegment;
  o.ggnn.layers = this->GGNNLayers;
  o.ggnn.refinements = this->GGNNRefinements;
  o.ggnn.tau_build = static_cast<float>(this->GGNNTauBuild);
  o.gnnd.k_build = this->GNNDKBuild;
  o.gnnd.samples = this->GNNDSamples;
  o.gnnd.iterations = this->GNNDIterations;
  o.gnnd.converge = static_cast<float>(this->GNNDConverge);
  o.grnnd.s = this->GRNNDS;
  o.grnnd.r = this->GRNNDR;
  o.grnnd.t1 = this->GRNNDT1;
  o.grnnd.t2 = this->GRNNDT2;
  o.grnnd.rho = static_cast<float>(this->GRNNDRho);
  o.tsdg.alpha = static_cast<float>(this->TSDGAlpha);
  o.tsdg.lambda0 = this->TSDGLambda0;
  o.shard_size = this->ShardSize;
  o.device_memory_budget = static_cast<size_t>(this->DeviceMemoryBudgetMiB) << 20;

  vic_knn knn;
  switch (vtkVicinity::CheckCall(this, "kNN Graph", ctx, vic_knn_build(ctx.Get(), &x, &o, &knn)))
  {
    case vtkVicinity::Outcome::Cancelled:
      output->Initialize();
      return true;
    case vtkVicinity::Outcome::Failed:
      return false;
    case vtkVicinity::Outcome::Done:
      break;
  }
  rows.Values = std::vector<float>(); // release the copy before the outputs grow

  vtkPointData* pd = output->GetPointData();
  pd->AddArray(vtkVicinity::WrapIds(knn, "Neighbor Ids"));
  pd->AddArray(vtkVicinity::WrapDistances(knn, "Neighbor Distances"));
  pd->AddArray(vtkVicinity::DistanceColumn(knn, 0, "d_nn1"));

  auto fd = vtkSmartPointer<vtkFieldData>::New();
  fd->ShallowCopy(input->GetFieldData());
  vtkVicinity::WriteReport(knn.report, metric, x.d, source.c_str(), fd);
  output->SetFieldData(fd);

  if (this->GenerateGraph)
  {
    BuildGraph(input, pd, knn, graph);
    graph->SetFieldData(fd);
  }
  vic_knn_free(&knn);
  return true;
}

int vtkVicinityKnnGraph::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkVicinity::ContextSettings settings;
  settings.Backend = static_cast<vic_backend>(this->Backend);
  settings.Device = this->Device;
  settings.Threads = this->Threads;
  settings.Seed = static_cast<uint64_t>(static_cast<uint32_t>(this->Seed));
  return vtkVicinity::ProcessInput(this, "kNN Graph", settings, inputVector, outputVector, 2,
    [this](vtkVicinity::Context& ctx, vtkDataSet* in, vtkDataSet* out, vtkPolyData* graph) {
      return this->ProcessDataSet(ctx, in, out, graph);
    });
}

void vtkVicinityKnnGraph::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "K: " << this->K << "\n";
  os << indent << "Metric: " << vic_metric_name(static_cast<vic_metric>(this->Metric)) << "\n";
  os << indent << "Method: " << vic_method_name(static_cast<vic_method>(this->Method)) << "\n";
  os << indent << "Backend: " << vic_backend_name(static_cast<vic_backend>(this->Backend)) << "\n";
  os << indent << "Device: " << this->Device << "\n";
  os << indent << "UseFeatureArray: " << this->UseFeatureArray << "\n";
  os << indent << "Periodic: " << this->Periodic << " (" << this->BoxLengths[0] << ", "
     << this->BoxLengths[1] << ", " << this->BoxLengths[2] << ")\n";
  os << indent << "Seed: " << this->Seed << "\n";
  os << indent << "Threads: " << this->Threads << "\n";
  os << indent << "RecallSample: " << this->RecallSample << "\n";
  os << indent << "GenerateGraph: " << this->GenerateGraph << "\n";
  os << indent << "BruteMaxN: " << this->BruteMaxN << "\n";
}
