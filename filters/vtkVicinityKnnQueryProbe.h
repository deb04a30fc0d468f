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
 * The index (vic_index_build: exact grid for 3-d L2, brute force, or an
 * NN-Descent search graph, the core's choice) is built once and kept; it is
 * rebuilt only when the rows' source (array and its MTime), the feature
 * array, the metric, the method, the seed or a build parameter changes.
 * Moving the probe, changing k or the search parameters only searches.
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

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkPolyDataAlgorithm.h"

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
  /** Metric (vic_metric: 0 L2, 1 cosine, 2 inner product). */
  vtkSetClampMacro(Metric, int, 0, 2);
  vtkGetMacro(Metric, int);
  ///@}
  ///@{
  /** Index method (vic_method: 0 auto, 1 brute, 2 grid, 3 nndescent). */
  vtkSetClampMacro(Method, int, 0, 3);
  vtkGetMacro(Method, int);
  ///@}
  ///@{
  /** Seed of the graph build's random choices. */
  vtkSetMacro(Seed, int);
  vtkGetMacro(Seed, int);
  ///@}
  ///@{
  /** Advanced build options (vic_build_options): brute force up to this n
   *  for d > 3 under Auto; NN-Descent degree (0 = core default), sample
   *  rate, stop fraction, iterations. */
  vtkSetClampMacro(BruteMaxN, vtkIdType, 0, VTK_ID_MAX);
  vtkGetMacro(BruteMaxN, vtkIdType);
  vtkSetClampMacro(NNDescentKBuild, int, 0, 4096);
  vtkGetMacro(NNDescentKBuild, int);
  vtkSetClampMacro(NNDescentRho, double, 0.0, 1.0);
  vtkGetMacro(NNDescentRho, double);
  vtkSetClampMacro(NNDescentDelta, double, 0.0, 1.0);
  vtkGetMacro(NNDescentDelta, double);
  vtkSetClampMacro(NNDescentMaxIterations, int, 1, 10000);
  vtkGetMacro(NNDescentMaxIterations, int);
  ///@}
  ///@{
  /** Index file: kept in memory only, saved to IndexFileName after each
   *  build, or loaded from IndexFileName instead of built (IndexFileModes). */
  vtkSetClampMacro(IndexFileMode, int, INDEX_IN_MEMORY, INDEX_LOAD);
  vtkGetMacro(IndexFileMode, int);
  vtkSetStringMacro(IndexFileName);
  vtkGetStringMacro(IndexFileName);
  ///@}

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
  int Threads = 0;

  // build parameters (defaults from vic_build_options_init)
  bool UseFeatureArray = false;
  int Metric = 0;
  int Method = 0;
  int Seed = 0;
  vtkIdType BruteMaxN;
  int NNDescentKBuild;
  double NNDescentRho;
  double NNDescentDelta;
  int NNDescentMaxIterations;
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
