/**
 * @class vtkVicinityKnnGraph
 * @brief k nearest neighbours of every point, in space or in a feature array.
 *
 * For every point of the input its k nearest other points, computed by the
 * Vicinity core (exact grid or brute force, CPU NN-Descent, GPU methods).
 * The rows are the point coordinates, or, with UseFeatureArray on, the
 * tuples of a chosen point-data array with any number of components.
 *
 * Output port 0: the input (shallow copy) with point arrays
 * "Neighbor Ids" (vtkIdTypeArray, k components), "Neighbor Distances"
 * (vtkFloatArray, k components) and "d_nn1", and field data describing the
 * run (k, method and why, backend, seconds per stage, d_nn1 mean and max,
 * estimated recall).  Output port 1: the graph as vtkPolyData with one line
 * cell per directed edge and cell data "Distance" and "Rank".
 *
 * Composite inputs are processed leaf by leaf.  Under MPI with several
 * processes the point coordinates are redistributed by spatial cuts with a
 * halo (exact, vtkVicinityDistributedPoints.h), and a feature array is
 * sharded over the ranks with a ring of queries (approximate,
 * vtkVicinityShards.h); neighbour ids are then global ids.
 */
#ifndef vtkVicinityKnnGraph_h
#define vtkVicinityKnnGraph_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkVicinityKnnAlgorithm.h"

class VICINITYFILTERS_EXPORT vtkVicinityKnnGraph : public vtkVicinityKnnAlgorithm
{
public:
  static vtkVicinityKnnGraph* New();
  vtkTypeMacro(vtkVicinityKnnGraph, vtkVicinityKnnAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Metric: vtkVicinityBuildOptions::Metrics (the core's vic_metric). */
  vtkSetClampMacro(Metric, int, vtkVicinityBuildOptions::METRIC_L2, vtkVicinityBuildOptions::METRIC_INNER_PRODUCT);
  vtkGetMacro(Metric, int);
  void SetMetricToL2() { this->SetMetric(vtkVicinityBuildOptions::METRIC_L2); }
  void SetMetricToCosine() { this->SetMetric(vtkVicinityBuildOptions::METRIC_COSINE); }
  void SetMetricToInnerProduct() { this->SetMetric(vtkVicinityBuildOptions::METRIC_INNER_PRODUCT); }
  ///@}

  ///@{
  /** Points sampled to estimate recall of approximate methods (0 = skip). */
  vtkSetClampMacro(RecallSample, int, 0, VTK_INT_MAX);
  vtkGetMacro(RecallSample, int);
  ///@}

  ///@{
  /** Also build the graph of output port 1 (n*k line cells): GraphOff,
   *  GraphOn, or GraphAuto (the default): on up to GraphAutoMaxPoints
   *  points, off above with a warning saying how to turn it on (millions
   *  of lines take gigabytes in the GUI). */
  enum GraphMode
  {
    GraphOff = 0,
    GraphOn = 1,
    GraphAuto = 2
  };
  static constexpr vtkIdType GraphAutoMaxPoints = 100000;
  vtkSetClampMacro(GenerateGraph, int, GraphOff, GraphAuto);
  vtkGetMacro(GenerateGraph, int);
  void GenerateGraphOn() { this->SetGenerateGraph(GraphOn); }
  void GenerateGraphOff() { this->SetGenerateGraph(GraphOff); }
  void SetGenerateGraphToAuto() { this->SetGenerateGraph(GraphAuto); }
  ///@}

protected:
  vtkVicinityKnnGraph();
  ~vtkVicinityKnnGraph() override = default;

  const char* GetLabel() const override;
  // One data set; graph is output port 1.
  bool ProcessDataSet(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output,
    vtkPolyData* graph) override;
  // Under MPI with several processes the points are redistributed with a
  // halo and every rank computes its own (or, for a feature array, the
  // shards below).
  bool ProcessDistributed(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output,
    vtkPolyData* graph) override;
  // A feature array under MPI (vtkVicinityKnnGraphShards.cxx): each rank
  // indexes a shard of the rows, every rank's rows visit every shard.
  bool ProcessShardedFeatures(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph);
  // Reads the properties into the core's build options (the .cxx).
  friend struct vtkVicinityKnnGraphOptions;

  int Metric = vtkVicinityBuildOptions::METRIC_L2;
  int RecallSample = 1000;
  int GenerateGraph = GraphAuto;
  // Whether the graph is built for a set of `points` (all ranks' points
  // under MPI), with the warning when Auto turns it off.
  bool WantGraph(vtkIdType points);

private:
  vtkVicinityKnnGraph(const vtkVicinityKnnGraph&) = delete;
  void operator=(const vtkVicinityKnnGraph&) = delete;
};

#endif
