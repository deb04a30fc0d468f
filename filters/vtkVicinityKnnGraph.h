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
  /** Metric: 0 L2, 1 cosine, 2 inner product (vic_metric). */
  vtkSetClampMacro(Metric, int, 0, 2);
  vtkGetMacro(Metric, int);
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
  ///@}

  ///@{
  /** Advanced: the fields of vic_build_options (see vicinity.h). */
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
  vtkSetClampMacro(GGNNKBuild, int, 1, 4096);
  vtkGetMacro(GGNNKBuild, int);
  vtkSetClampMacro(GGNNSegment, int, 1, 4096);
  vtkGetMacro(GGNNSegment, int);
  vtkSetClampMacro(GGNNLayers, int, 1, 64);
  vtkGetMacro(GGNNLayers, int);
  vtkSetClampMacro(GGNNRefinements, int, 0, 64);
  vtkGetMacro(GGNNRefinements, int);
  vtkSetClampMacro(GGNNTauBuild, double, 0.0, 10.0);
  vtkGetMacro(GGNNTauBuild, double);
  vtkSetClampMacro(GNNDKBuild, int, 0, 4096);
  vtkGetMacro(GNNDKBuild, int);
  vtkSetClampMacro(GNNDSamples, int, 1, 4096);
  vtkGetMacro(GNNDSamples, int);
  vtkSetClampMacro(GNNDIterations, int, 1, 10000);
  vtkGetMacro(GNNDIterations, int);
  vtkSetClampMacro(GNNDConverge, double, 0.0, 1.0);
  vtkGetMacro(GNNDConverge, double);
  vtkSetClampMacro(GRNNDS, int, 1, 4096);
  vtkGetMacro(GRNNDS, int);
  vtkSetClampMacro(GRNNDR, int, 1, 4096);
  vtkGetMacro(GRNNDR, int);
  vtkSetClampMacro(GRNNDT1, int, 1, 10000);
  vtkGetMacro(GRNNDT1, int);
  vtkSetClampMacro(GRNNDT2, int, 1, 10000);
  vtkGetMacro(GRNNDT2, int);
  vtkSetClampMacro(GRNNDRho, double, 0.0, 1.0);
  vtkGetMacro(GRNNDRho, double);
  vtkSetClampMacro(TSDGAlpha, double, 1.0, 10.0);
  vtkGetMacro(TSDGAlpha, double);
  vtkSetClampMacro(TSDGLambda0, int, 0, 4096);
  vtkGetMacro(TSDGLambda0, int);
  vtkSetClampMacro(ShardSize, vtkIdType, 0, VTK_ID_MAX);
  vtkGetMacro(ShardSize, vtkIdType);
  /** Device memory budget in MiB (0 = what the device has free). */
  vtkSetClampMacro(DeviceMemoryBudgetMiB, int, 0, VTK_INT_MAX);
  vtkGetMacro(DeviceMemoryBudgetMiB, int);
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

  int Metric = 0;
  int RecallSample = 1000;
  int GenerateGraph = GraphAuto;
  // Whether the graph is built for a set of `points` (all ranks' points
  // under MPI), with the warning when Auto turns it off.
  bool WantGraph(vtkIdType points);

  // Advanced: defaults are read from vic_build_options_init in the constructor.
  vtkIdType BruteMaxN;
  int NNDescentKBuild;
  double NNDescentRho;
  double NNDescentDelta;
  int NNDescentMaxIterations;
  int GGNNKBuild;
  int GGNNSegment;
  int GGNNLayers;
  int GGNNRefinements;
  double GGNNTauBuild;
  int GNNDKBuild;
  int GNNDSamples;
  int GNNDIterations;
  double GNNDConverge;
  int GRNNDS;
  int GRNNDR;
  int GRNNDT1;
  int GRNNDT2;
  double GRNNDRho;
  double TSDGAlpha;
  int TSDGLambda0;
  vtkIdType ShardSize;
  int DeviceMemoryBudgetMiB = 0;

private:
  vtkVicinityKnnGraph(const vtkVicinityKnnGraph&) = delete;
  void operator=(const vtkVicinityKnnGraph&) = delete;
};

#endif
