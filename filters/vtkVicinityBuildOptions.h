/**
 * @class vtkVicinityBuildOptions
 * @brief The advanced build parameters of the Vicinity methods, declared once.
 *
 * The per-method fields of the core's vic_build_options (NN-Descent, GGNN,
 * GNND, GRNND, TSDG, sharding, the device memory budget) as one object that
 * every filter building kNN lists or a search index holds (kNN Graph, kNN
 * Density and Salient Points through vtkVicinityKnnAlgorithm, and the kNN
 * Query Probe).  Its server-manager proxy (xml/VicinityBuildOptions.xml)
 * declares each property once with its range and documentation; a filter's
 * XML adds it as a sub-proxy (command SetBuildOptions) and exposes the
 * properties it uses, so they keep their names on the filter in Python.
 * The filters' GetMTime covers this object, so an edit re-executes them.
 *
 * It also names the core's enumerations (vic_method, vic_backend,
 * vic_metric) for the filters' SetMethodToGGNN()-style setters; the
 * values are the core's (checked at compile time in the .cxx).
 * Defaults are the core's (vic_build_options_init), so the filters never
 * drift from it.
 */
#ifndef vtkVicinityBuildOptions_h
#define vtkVicinityBuildOptions_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkObject.h"

class VICINITYFILTERS_EXPORT vtkVicinityBuildOptions : public vtkObject
{
public:
  static vtkVicinityBuildOptions* New();
  vtkTypeMacro(vtkVicinityBuildOptions, vtkObject);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** The core's methods (vic_method). */
  enum Methods
  {
    METHOD_AUTO = 0,
    METHOD_BRUTE_FORCE = 1,
    METHOD_GRID = 2,
    METHOD_NNDESCENT = 3,
    METHOD_GGNN = 4,
    METHOD_GNND = 5,
    METHOD_GRNND = 6,
    METHOD_TSDG = 7
  };
  /** The core's backends (vic_backend). */
  enum Backends
  {
    BACKEND_AUTO = 0,
    BACKEND_CPU = 1,
    BACKEND_GPU = 2
  };
  /** The core's metrics (vic_metric). */
  enum Metrics
  {
    METRIC_L2 = 0,
    METRIC_COSINE = 1,
    METRIC_INNER_PRODUCT = 2
  };

  ///@{
  /** Auto uses exact brute force up to this n for d > 3. */
  vtkSetClampMacro(BruteMaxN, vtkIdType, 0, VTK_ID_MAX);
  vtkGetMacro(BruteMaxN, vtkIdType);
  ///@}

  ///@{
  /** CPU NN-Descent (Dong et al. 2011): list length while building (0 =
   *  the core's default), sample rate, stop fraction, iterations. */
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
  /** GGNN (Groh et al.): degree, segment, layers, refinements, tau. */
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
  ///@}

  ///@{
  /** GNND (Wang et al.): list length (0 = the core's default), samples,
   *  iterations, convergence fraction. */
  vtkSetClampMacro(GNNDKBuild, int, 0, 4096);
  vtkGetMacro(GNNDKBuild, int);
  vtkSetClampMacro(GNNDSamples, int, 1, 4096);
  vtkGetMacro(GNNDSamples, int);
  vtkSetClampMacro(GNNDIterations, int, 1, 10000);
  vtkGetMacro(GNNDIterations, int);
  vtkSetClampMacro(GNNDConverge, double, 0.0, 1.0);
  vtkGetMacro(GNNDConverge, double);
  ///@}

  ///@{
  /** GRNND (Li et al.): initial pool S, capacity R, outer T1 and inner T2
   *  iterations, reverse-edge sampling ratio. */
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
  ///@}

  ///@{
  /** TSDG (Wang et al.): relaxed diversification alpha, occlusion cut. */
  vtkSetClampMacro(TSDGAlpha, double, 1.0, 10.0);
  vtkGetMacro(TSDGAlpha, double);
  vtkSetClampMacro(TSDGLambda0, int, 0, 4096);
  vtkGetMacro(TSDGLambda0, int);
  ///@}

  ///@{
  /** GPU methods: points per shard (0 = no sharding) and the device
   *  memory budget in MiB (0 = what the device has free). */
  vtkSetClampMacro(ShardSize, vtkIdType, 0, VTK_ID_MAX);
  vtkGetMacro(ShardSize, vtkIdType);
  vtkSetClampMacro(DeviceMemoryBudgetMiB, int, 0, VTK_INT_MAX);
  vtkGetMacro(DeviceMemoryBudgetMiB, int);
  ///@}

protected:
  vtkVicinityBuildOptions();
  ~vtkVicinityBuildOptions() override = default;

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
  vtkVicinityBuildOptions(const vtkVicinityBuildOptions&) = delete;
  void operator=(const vtkVicinityBuildOptions&) = delete;
};

#endif
