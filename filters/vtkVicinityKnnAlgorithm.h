/**
 * @class vtkVicinityKnnAlgorithm
 * @brief Superclass of the filters that compute the kNN lists of every point.
 *
 * kNN Graph, kNN Density and Salient Points share how they are driven: the
 * same properties choose the rows (point coordinates or a point-data
 * array, an optional periodic box), the number of neighbours and how the
 * core computes them (method, backend, CUDA device, CPU threads, seed);
 * composite inputs are processed leaf by leaf, and under MPI with several
 * processes each filter's distributed path runs instead.  This class holds
 * those properties and that pipeline plumbing; a subclass only says what it
 * computes for one data set (ProcessDataSet) and for a distributed one
 * (ProcessDistributed).  Output port 0 mirrors the input's type; a second
 * port, when a subclass has one, carries poly data.
 */
#ifndef vtkVicinityKnnAlgorithm_h
#define vtkVicinityKnnAlgorithm_h

#include "VicinityFiltersModule.h"   // for the export macro
#include "vtkDataObjectAlgorithm.h"
#include "vtkSmartPointer.h"         // for the build options
#include "vtkVicinityBuildOptions.h" // for the Methods and Backends enums

class vtkDataSet;
class vtkPolyData;

namespace vtkVicinity
{
class Context;
}

class VICINITYFILTERS_EXPORT vtkVicinityKnnAlgorithm : public vtkDataObjectAlgorithm
{
public:
  vtkTypeMacro(vtkVicinityKnnAlgorithm, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Neighbours per point, the point itself not counted (clamped by the
   *  core to n-1 with a warning).  Must lie in [1, 4096], [2, 4096] for the
   *  density filters, which need a k-th neighbour beyond the nearest; a k
   *  outside is an error when the filter runs, not silently another k. */
  virtual void SetK(int k);
  vtkGetMacro(K, int);
  ///@}

  ///@{
  /** Method: vtkVicinityBuildOptions::Methods (the core's vic_method). */
  vtkSetClampMacro(Method, int, vtkVicinityBuildOptions::METHOD_AUTO, vtkVicinityBuildOptions::METHOD_TSDG);
  vtkGetMacro(Method, int);
  void SetMethodToAuto() { this->SetMethod(vtkVicinityBuildOptions::METHOD_AUTO); }
  void SetMethodToBruteForce() { this->SetMethod(vtkVicinityBuildOptions::METHOD_BRUTE_FORCE); }
  void SetMethodToGrid() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GRID); }
  void SetMethodToNNDescent() { this->SetMethod(vtkVicinityBuildOptions::METHOD_NNDESCENT); }
  void SetMethodToGGNN() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GGNN); }
  void SetMethodToGNND() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GNND); }
  void SetMethodToGRNND() { this->SetMethod(vtkVicinityBuildOptions::METHOD_GRNND); }
  void SetMethodToTSDG() { this->SetMethod(vtkVicinityBuildOptions::METHOD_TSDG); }
  ///@}

  ///@{
  /** Backend (vtkVicinityBuildOptions::Backends): auto, CPU, GPU; the CUDA device and the
   *  number of GPUs used from it on (1, N, or -1 for every device present:
   *  the exact grid splits its queries over them, a sharded GGNN build
   *  spreads its shards; results do not depend on the count; under MPI each
   *  rank uses one GPU, Device + rank mod the devices present); CPU threads
   *  (0 = all); the seed of every random choice. */
  vtkSetClampMacro(Backend, int, vtkVicinityBuildOptions::BACKEND_AUTO, vtkVicinityBuildOptions::BACKEND_GPU);
  vtkGetMacro(Backend, int);
  void SetBackendToAuto() { this->SetBackend(vtkVicinityBuildOptions::BACKEND_AUTO); }
  void SetBackendToCPU() { this->SetBackend(vtkVicinityBuildOptions::BACKEND_CPU); }
  void SetBackendToGPU() { this->SetBackend(vtkVicinityBuildOptions::BACKEND_GPU); }
  vtkSetClampMacro(Device, int, 0, 64);
  vtkGetMacro(Device, int);
  vtkSetClampMacro(Devices, int, -1, 64);
  vtkGetMacro(Devices, int);
  vtkSetClampMacro(Threads, int, 0, 4096);
  vtkGetMacro(Threads, int);
  vtkSetMacro(Seed, int);
  vtkGetMacro(Seed, int);
  ///@}

  ///@{
  /** Rows from a point-data array (input array 0, selected with
   *  SetInputArrayToProcess) instead of the point coordinates. */
  vtkSetMacro(UseFeatureArray, bool);
  vtkGetMacro(UseFeatureArray, bool);
  vtkBooleanMacro(UseFeatureArray, bool);
  ///@}

  ///@{
  /** Periodic box (L2, 3-d rows): minimum-image distances in a box of
   *  BoxLengths; a length of 0 leaves that axis open.  With
   *  UseBoxFromData (default on) the input's field data "BoxSize" (and
   *  "BoxOrigin", "BoxPeriodic"), as the Vicinity snapshot readers write
   *  them, replace BoxLengths when present.  A box that does not hold the
   *  points is an error (vic_data_validate), never a silent fold. */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  vtkSetMacro(UseBoxFromData, bool);
  vtkGetMacro(UseBoxFromData, bool);
  vtkBooleanMacro(UseBoxFromData, bool);
  vtkSetVector3Macro(BoxLengths, double);
  vtkGetVector3Macro(BoxLengths, double);
  ///@}

  ///@{
  /** Advanced: the per-method build parameters of the kNN lists
   *  (vic_build_options), an object that may be shared with other filters.
   *  Never null: setting nullptr restores a default one.  Its edits
   *  re-execute this filter. */
  void SetBuildOptions(vtkVicinityBuildOptions* options);
  vtkVicinityBuildOptions* GetBuildOptions() { return this->BuildOptions; }
  ///@}

  /** Covers the build options. */
  vtkMTimeType GetMTime() override;

protected:
  // ports: 1, or 2 when the subclass adds a poly-data output.
  vtkVicinityKnnAlgorithm(int ports, int minimumK);
  ~vtkVicinityKnnAlgorithm() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  // The name in messages and progress ("kNN Graph").
  virtual const char* GetLabel() const = 0;
  // One data set (a whole input or one leaf of a composite input); output
  // arrives as a shallow copy of input, extra is port 1 (nullptr without
  // one).  False after reporting an error.
  virtual bool ProcessDataSet(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* extra) = 0;
  // The same under MPI with several processes: the rank's piece of input.
  virtual bool ProcessDistributed(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* extra) = 0;

  const int MinimumK;
  int K = 16;
  int Method = vtkVicinityBuildOptions::METHOD_AUTO;
  int Backend = vtkVicinityBuildOptions::BACKEND_AUTO;
  int Device = 0;
  int Devices = 1;
  int Threads = 0;
  int Seed = 0;
  bool UseFeatureArray = false;
  bool Periodic = false;
  bool UseBoxFromData = true;
  double BoxLengths[3] = { 1.0, 1.0, 1.0 };
  vtkSmartPointer<vtkVicinityBuildOptions> BuildOptions;
  bool Cancelled = false; // the last run was aborted and the abort is not cleared yet

private:
  vtkVicinityKnnAlgorithm(const vtkVicinityKnnAlgorithm&) = delete;
  void operator=(const vtkVicinityKnnAlgorithm&) = delete;
};

#endif
