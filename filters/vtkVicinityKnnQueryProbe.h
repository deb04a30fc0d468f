/**
 * @class vtkVicinityKnnQueryProbe
 * @brief the k nearest data points of a probe position, of query points or
 * of a data point, from a search index kept between executions.
 *
 * Input 0 holds the data: its point coordinates, or (UseFeatureArray) the
 * tuples of a chosen point-data array (feature space).  The query is, by
 * QueryMode:
 *  - Handle: ProbePosition, a 3-d position (ParaView's interactive handle);
 *    3-d rows only, so not in feature space.
 *  - QueryPoints: every point of the optional input 1 (any data set); in
 *    feature space its point-data array of the same name is read.
 *  - PointId: the data point QueryPointId ("the points most like this one").
 *    The point itself is NOT returned: rank 0 is its nearest other point,
 *    as in the core's kNN lists (a point is never its own neighbour).
 *    Duplicates of it are ordinary neighbours at distance 0.
 *
 * The index (vic_index_build: exact grid for 3-d L2, brute force, a CPU
 * NN-Descent search graph, or a GGNN, GRNND or TSDG graph, on the GPU when
 * the core finds one usable) is built once and kept (on the device for the
 * GPU graphs); it is rebuilt only when the rows' source (array and its
 * MTime), the feature array, the metric, the method, the backend, the
 * device, the seed or a build parameter (BuildOptions) changes.  Moving
 * the probe, changing k or the search parameters only searches.  Without a
 * usable GPU the core decides what a GPU index becomes (vic_index_build:
 * with Backend Auto a CPU graph and a warning, with Backend GPU an error
 * saying why); the filter adds no policy of its own.
 * The index can be saved to a file after building, or loaded from one
 * instead of building (the core's checked, versioned format).
 *
 * Output (vtkPolyData): first one point per (query, neighbour), at the
 * neighbour's 3-d position, with point data "Query Id", "Rank",
 * "Distance", "Neighbor Id" and the neighbour's input point data; then one
 * point per query at its 3-d position (Rank -1, Distance 0, Neighbor Id the
 * data point in PointId mode else -1).  Cells: a vertex per point and a
 * line from each query point to each of its neighbours.  Field data:
 * "Index Builds", "Index Loads" (counters over the filter's life), "Index
 * Rebuilt" (1 when this execution made the index), "Seconds Index Build"
 * (of the last build or load, row copy included), "Seconds Query" (this
 * execution's search), the index's method and reason, k.
 *
 * Under MPI with several processes (vtkVicinityKnnQueryProbeMPI.cxx) each
 * rank indexes its own piece, answers the same query from it, and rank 0
 * merges the candidates by (distance, global id) and emits the output;
 * ids are then global ids (vtkVicinityDistributedPoints.h).
 */
#ifndef vtkVicinityKnnQueryProbe_h
#define vtkVicinityKnnQueryProbe_h

#include "VicinityFiltersModule.h"   // for the export macro
#include "vtkPolyDataAlgorithm.h"
#include "vtkSmartPointer.h"         // for the build options
#include "vtkVicinityBuildOptions.h" // for the enums

#include <memory> // for std::unique_ptr
#include <vector> // for std::vector

namespace vtkVicinity
{
class Context;
class IndexCache;
struct IndexKey;
enum class Outcome;
}
class vtkDataArray;
class vtkDataSet;
class vtkIdTypeArray;
class vtkMPIController;

class VICINITYFILTERS_EXPORT vtkVicinityKnnQueryProbe : public vtkPolyDataAlgorithm
{
public:
  static vtkVicinityKnnQueryProbe* New();
  vtkTypeMacro(vtkVicinityKnnQueryProbe, vtkPolyDataAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum QueryModes
  {
    HANDLE = 0,
    QUERY_POINTS = 1,
    POINT_ID = 2
  };
  enum IndexFileModes
  {
    INDEX_IN_MEMORY = 0,
    INDEX_BUILD_AND_SAVE = 1,
    INDEX_LOAD = 2
  };

  /** The query points (optional input 1). */
  void SetQueryConnection(vtkAlgorithmOutput* output) { this->SetInputConnection(1, output); }

  // ---- search parameters: changing these never rebuilds the index ----
  ///@{
  /** Where the query comes from (QueryModes). */
  vtkSetClampMacro(QueryMode, int, HANDLE, POINT_ID);
  vtkGetMacro(QueryMode, int);
  void SetQueryModeToHandle() { this->SetQueryMode(HANDLE); }
  void SetQueryModeToQueryPoints() { this->SetQueryMode(QUERY_POINTS); }
  void SetQueryModeToPointId() { this->SetQueryMode(POINT_ID); }
  ///@}
  ///@{
  /** The probe position of the Handle mode. */
  vtkSetVector3Macro(ProbePosition, double);
  vtkGetVector3Macro(ProbePosition, double);
  ///@}
  ///@{
  /** The data point of the PointId mode. */
  vtkSetClampMacro(QueryPointId, vtkIdType, 0, VTK_ID_MAX);
  vtkGetMacro(QueryPointId, vtkIdType);
  ///@}
  ///@{
  /** Neighbours per query (clamped by the core to the points there are). */
  vtkSetMacro(K, int); // 1..4096; outside: an error when the filter runs
  vtkGetMacro(K, int);
  ///@}
  ///@{
  /** Graph search only: slack tau of the stopping rule and the visit
   *  budget (0 = automatic); see vic_search_options. */
  vtkSetClampMacro(SearchTau, double, 0.0, 100.0);
  vtkGetMacro(SearchTau, double);
  vtkSetClampMacro(MaxVisits, int, 0, VTK_INT_MAX);
  vtkGetMacro(MaxVisits, int);
  ///@}
  ///@{
  /** Graph search only: random entry points per query (0 = the core's
   *  choice).  More find the neighbours in data of separated clusters,
   *  whose graph has no edges between them. */
  vtkSetClampMacro(EntryPoints, int, 0, VTK_INT_MAX);
  vtkGetMacro(EntryPoints, int);
  ///@}
  ///@{
  /** CPU threads of builds and searches (0 = all); not part of the index. */
  vtkSetClampMacro(Threads, int, 0, 4096);
  vtkGetMacro(Threads, int);
  ///@}

  // ---- build parameters: changing these rebuilds the index ----
  ///@{
  /** Rows from a point-data array (SetInputArrayToProcess(0, ...)). */
  vtkSetMacro(UseFeatureArray, bool);
  vtkGetMacro(UseFeatureArray, bool);
  vtkBooleanMacro(UseFeatureArray, bool);
  ///@}
  ///@{
  /** Metric: vtkVicinityBuildOptions::Metrics (the core's vic_metric). */
  vtkSetClampMacro(Metric, int, vtkVicinityBuildOptions::METRIC_L2, vtkVicinityBuildOptions::METRIC_INNER_PRODUCT);
  vtkGetMacro(Metric, int);
  void SetMetricToL2() { this->SetMetric(vtkVicinityBuildOptions::METRIC_L2); }
  void SetMetricToCosine() { this->SetMetric(vtkVicinityBuildOptions::METRIC_COSINE); }
  void SetMetricToInnerProduct() { this->SetMetric(vtkVicinityBuildOptions::METRIC_INNER_PRODUCT); }
  ///@}
  ///@{
  /** Index method: vtkVicinityBuildOptions::Methods (the core's
   *  vic_method).  GNND builds kNN lists, not an index: the core builds the
   *  NN-Descent graph instead, with a warning. */
  vtkSetClampMacro(Method, int, vtkVicinityBuildOptions::METHOD_AUTO, vtkVicinityBuildOptions::METHOD_TSDG);
  vtkGetMacro(Method, int);
  void SetMethodToAuto() { this->SetMethod(vtkVicinityBuildOptions::METHOD_AUTO); }
  void SetMethodToBruteForce() { this->SetMethod(vtkVicinityBuildOptions::METHOD_BRUTE_FORCE); }
  void SetMethodToGrid() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GRID); }
  void SetMethodToNNDescent() { this->SetMethod(vtkVicinityBuildOptions::METHOD_NNDESCENT); }
  void SetMethodToGGNN() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GGNN); }
  void SetMethodToGRNND() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GRNND); }
  void SetMethodToTSDG() { this->SetMethod(vtkVicinityBuildOptions::METHOD_TSDG); }
  ///@}
  ///@{
  /** Backend (vtkVicinityBuildOptions::Backends) and CUDA device of the
   *  index's build and searches; changing them rebuilds.  Under MPI each
   *  rank uses Device + rank modulo the devices present. */
  vtkSetClampMacro(Backend, int, vtkVicinityBuildOptions::BACKEND_AUTO, vtkVicinityBuildOptions::BACKEND_GPU);
  vtkGetMacro(Backend, int);
  void SetBackendToAuto() { this->SetBackend(vtkVicinityBuildOptions::BACKEND_AUTO); }
  void SetBackendToCPU() { this->SetBackend(vtkVicinityBuildOptions::BACKEND_CPU); }
  void SetBackendToGPU() { this->SetBackend(vtkVicinityBuildOptions::BACKEND_GPU); }
  vtkSetClampMacro(Device, int, 0, 64);
  vtkGetMacro(Device, int);
  ///@}
  ///@{
  /** Seed of the graph build's random choices. */
  vtkSetMacro(Seed, int);
  vtkGetMacro(Seed, int);
  ///@}
  ///@{
  /** Advanced: the per-method build parameters of the index
   *  (vic_build_options), an object that may be shared with other filters.
   *  Never null: setting nullptr restores a default one.  A change that
   *  alters the build rebuilds the index. */
  void SetBuildOptions(vtkVicinityBuildOptions* options);
  vtkVicinityBuildOptions* GetBuildOptions() { return this->BuildOptions; }
  ///@}

  ///@{
  /** Index file: kept in memory only, saved to IndexFileName after each
   *  build, or loaded from IndexFileName instead of built (IndexFileModes). */
  vtkSetClampMacro(IndexFileMode, int, INDEX_IN_MEMORY, INDEX_LOAD);
  vtkGetMacro(IndexFileMode, int);
  void SetIndexFileModeToInMemory() { this->SetIndexFileMode(INDEX_IN_MEMORY); }
  void SetIndexFileModeToBuildAndSave() { this->SetIndexFileMode(INDEX_BUILD_AND_SAVE); }
  void SetIndexFileModeToLoad() { this->SetIndexFileMode(INDEX_LOAD); }
  vtkSetStringMacro(IndexFileName);
  vtkGetStringMacro(IndexFileName);
  ///@}

  /** Covers the build options. */
  vtkMTimeType GetMTime() override;

protected:
  vtkVicinityKnnQueryProbe();
  ~vtkVicinityKnnQueryProbe() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  // The index for this input, reused when its key matches, else made
  // (built or loaded, then saved when asked).
  vtkVicinity::Outcome UpdateIndex(vtkVicinity::Context& ctx, vtkDataSet* input);
  // The key of the index the current build properties describe; the rows'
  // source is `array`, or the input's points when array is null.
  vtkVicinity::IndexKey MakeKey(vtkDataSet* input, vtkDataArray* array) const;
  // Collective: the same verdict on bad points on every rank, before any
  // exchange (vtkVicinity::AgreeValidRows on the piece's rows).
  vtkVicinity::Outcome CheckPieceRows(
    vtkMPIController* c, vtkVicinity::Context& ctx, vtkDataSet* input, vtkIdTypeArray* gids);
  // The query rows and their 3-d positions for the current QueryMode.
  // False after an error.
  bool GatherQueries(vtkDataSet* input, vtkDataSet* queries, std::vector<float>& rows,
    std::vector<double>& positions);

  // Under MPI with several processes (vtkVicinityKnnQueryProbeMPI.cxx):
  // every rank answers from its own piece, rank 0 merges and emits.
  int RequestDistributed(
    vtkMPIController* c, vtkDataSet* input, vtkDataSet* queries, vtkPolyData* output);
  // The query, the same on every rank; selfRow: the query point's local
  // row on the rank that holds it (Point Id mode), else -1.
  bool DistributedQueries(vtkMPIController* c, vtkDataSet* input, vtkDataSet* queries,
    const vtkIdType* gids, const float* dataRows, int d, std::vector<float>& rows,
    std::vector<double>& positions, vtkIdType* selfRow);

  // search parameters
  int QueryMode = HANDLE;
  double ProbePosition[3] = { 0.0, 0.0, 0.0 };
  vtkIdType QueryPointId = 0;
  int K = 16;
  double SearchTau;
  int MaxVisits = 0;
  int EntryPoints = 0;
  int Threads = 0;

  // build parameters
  bool UseFeatureArray = false;
  int Metric = vtkVicinityBuildOptions::METRIC_L2;
  int Method = vtkVicinityBuildOptions::METHOD_AUTO;
  int Backend = vtkVicinityBuildOptions::BACKEND_AUTO;
  int Device = 0;
  int Seed = 0;
  vtkSmartPointer<vtkVicinityBuildOptions> BuildOptions;
  int IndexFileMode = INDEX_IN_MEMORY;
  char* IndexFileName = nullptr;

private:
  vtkVicinityKnnQueryProbe(const vtkVicinityKnnQueryProbe&) = delete;
  void operator=(const vtkVicinityKnnQueryProbe&) = delete;

  std::unique_ptr<vtkVicinity::IndexCache> Cache;
  double LastBuildSeconds = 0.0; // of the last build or load, row copy included
  bool RebuiltNow = false;        // this execution made the index
};

#endif
