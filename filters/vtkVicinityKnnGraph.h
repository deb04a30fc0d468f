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
#include "vtkDataObjectAlgorithm.h"

class vtkDataSet;
class vtkPolyData;

namespace vtkVicinity
{
class Context;
}

class VICINITYFILTERS_EXPORT vtkVicinityKnnGraph : public vtkDataObjectAlgorithm
{
public:
  static vtkVicinityKnnGraph* New();
  vtkTypeMacro(vtkVicinityKnnGraph, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Neighbours per point (default 16; clamped by the core to n-1). */
  vtkSetClampMacro(K, int, 1, 4096);
  vtkGetMacro(K, int);
  ///@}

  ///@{
  /** Metric: 0 L2, 1 cosine, 2 inner product (vic_metric). */
  vtkSetClampMacro(Metric, int, 0, 2);
  vtkGetMacro(Metric, int);
  ///@}

  ///@{
  /** Method (vic_method): 0 auto, 1 brute, 2 grid, 3 nndescent, 4 ggnn,
   *  5 gnnd, 6 grnnd, 7 tsdg. */
  vtkSetClampMacro(Method, int, 0, 7);
  vtkGetMacro(Method, int);
  ///@}

  ///@{
  /** Backend (vic_backend): 0 auto, 1 CPU, 2 GPU; and the CUDA device. */
  vtkSetClampMacro(Backend, int, 0, 2);
  vtkGetMacro(Backend, int);
  vtkSetClampMacro(Device, int, 0, 64);
  vtkGetMacro(Device, int);
  ///@}

  ///@{
  /** Use a point-data array (selected with SetInputArrayToProcess(0, ...))
   *  instead of the point coordinates as the rows. */
  vtkSetMacro(UseFeatureArray, bool);
  vtkGetMacro(UseFeatureArray, bool);
  vtkBooleanMacro(UseFeatureArray, bool);
  ///@}

  ///@{
  /** Periodic box (L2, 3-d rows): minimum-image distances in a box of
   *  BoxLengths; a length of 0 leaves that axis open. */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  vtkSetVector3Macro(BoxLengths, double);
  vtkGetVector3Macro(BoxLengths, double);
  ///@}

  ///@{
  /** Seed of every random choice, CPU threads (0 = all), points sampled to
   *  estimate recall of approximate methods (0 = skip). */
  vtkSetMacro(Seed, int);
  vtkGetMacro(Seed, int);
  vtkSetClampMacro(Threads, int, 0, 4096);
  vtkGetMacro(Threads, int);
  vtkSetClampMacro(RecallSample, int, 0, VTK_INT_MAX);
  vtkGetMacro(RecallSample, int);
  ///@}

  ///@{
  /** Also build the graph of output port 1 (n*k line cells). */
  vtkSetMacro(GenerateGraph, bool);
  vtkGetMacro(GenerateGraph, bool);
  vtkBooleanMacro(GenerateGraph, bool);
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

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  // One data set (a whole input or one leaf of a composite input).
  bool ProcessDataSet(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output,
    vtkPolyData* graph);
  // The same under MPI with several processes (vtkVicinityKnnGraphMPI.cxx):
  // the points are redistributed with a halo, every rank computes its own.
  bool ProcessDistributed(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph);
  // A feature array under MPI (vtkVicinityKnnGraphShards.cxx): each rank
  // indexes a shard of the rows, every rank's rows visit every shard.
  bool ProcessShardedFeatures(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* graph);
  // Reads the properties into the core's build options (the .cxx).
  friend struct vtkVicinityKnnGraphOptions;

  int K = 16;
  int Metric = 0;
  int Method = 0;
  int Backend = 0;
  int Device = 0;
  bool UseFeatureArray = false;
  bool Periodic = false;
  double BoxLengths[3] = { 1.0, 1.0, 1.0 };
  int Seed = 0;
  int Threads = 0;
  int RecallSample = 1000;
  bool GenerateGraph = true;

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
