/**
 * @class vtkVicinityKnnDensity
 * @brief kNN and SPH density at every particle, from its k nearest neighbours.
 *
 * For every point its k nearest other points (the Vicinity core: exact
 * grid for 3-d points, or any kNN Graph method), then, by the core's
 * vic_density:
 *  - "Density": the kNN estimator (k - 1) m / (V_d r_k^d), r_k the distance
 *    to the k-th neighbour (with a mass array: the mass of the k - 1
 *    nearest neighbours instead of (k - 1) m);
 *  - "SPH Density": the cubic-spline SPH density with support radius r_k,
 *    the particle itself included, as pynbody and Gadget-2 compute it;
 *  - "Smoothing Length": h = r_k / 2 (pynbody) or h = r_k (Gadget); both
 *    conventions give the same density, they differ in what h means;
 *  - "d_nn1": the distance to the nearest neighbour.
 * Field data: the kNN report (k, method and why, backend, seconds, d_nn1
 * mean and max), "Global Density" (the number density of a Poisson
 * process with that mean d_nn1), "SPH Convention", "Mass" and
 * "Seconds Density".
 *
 * The rows are the point coordinates, or a point-data array (2-d
 * positions, 6-d phase space with velocities scaled by the user, ...).
 * Periodic boxes use minimum-image distances.  Composite inputs are
 * processed leaf by leaf; under MPI one rank must hold all points.
 */
#ifndef vtkVicinityKnnDensity_h
#define vtkVicinityKnnDensity_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkDataObjectAlgorithm.h"

class vtkDataSet;
class vtkPolyData;

namespace vtkVicinity
{
class Context;
}

class VICINITYFILTERS_EXPORT vtkVicinityKnnDensity : public vtkDataObjectAlgorithm
{
public:
  static vtkVicinityKnnDensity* New();
  vtkTypeMacro(vtkVicinityKnnDensity, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Neighbours per point, the particle itself not counted (default 32).
   *  pynbody's nsmooth counts the particle: nsmooth = 32 is k = 31. */
  vtkSetClampMacro(K, int, 2, 4096);
  vtkGetMacro(K, int);
  ///@}

  ///@{
  /** kNN method (vic_method, as the kNN Graph filter) and backend
   *  (vic_backend: 0 auto, 1 CPU, 2 GPU), CUDA device, CPU threads (0 =
   *  all) and the seed of approximate methods. */
  vtkSetClampMacro(Method, int, 0, 7);
  vtkGetMacro(Method, int);
  vtkSetClampMacro(Backend, int, 0, 2);
  vtkGetMacro(Backend, int);
  vtkSetClampMacro(Device, int, 0, 64);
  vtkGetMacro(Device, int);
  vtkSetClampMacro(Threads, int, 0, 4096);
  vtkGetMacro(Threads, int);
  vtkSetMacro(Seed, int);
  vtkGetMacro(Seed, int);
  ///@}

  ///@{
  /** Rows from a point-data array (input array 0) instead of the point
   *  coordinates: 2-d positions or 6-d phase space. */
  vtkSetMacro(UseFeatureArray, bool);
  vtkGetMacro(UseFeatureArray, bool);
  vtkBooleanMacro(UseFeatureArray, bool);
  ///@}

  ///@{
  /** Per-particle masses from a one-component point-data array (input
   *  array 1).  Off: every particle weighs TotalMass / n, or 1 when
   *  TotalMass is 0. */
  vtkSetMacro(UseMassArray, bool);
  vtkGetMacro(UseMassArray, bool);
  vtkBooleanMacro(UseMassArray, bool);
  vtkSetClampMacro(TotalMass, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(TotalMass, double);
  ///@}

  ///@{
  /** SPH smoothing-length convention (vic_sph_convention): 0 pynbody
   *  (h = r_k / 2), 1 Gadget (h = r_k). */
  vtkSetClampMacro(SPHConvention, int, 0, 1);
  vtkGetMacro(SPHConvention, int);
  ///@}

  ///@{
  /** Periodic box (3-d rows): minimum-image distances in a box of
   *  BoxLengths; a length of 0 leaves that axis open. */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  vtkSetVector3Macro(BoxLengths, double);
  vtkGetVector3Macro(BoxLengths, double);
  ///@}

protected:
  vtkVicinityKnnDensity();
  ~vtkVicinityKnnDensity() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  bool ProcessDataSet(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output);
  // The same under MPI with several processes: owned points with a halo
  // (vtkVicinityDistributedPoints), the output is the rank's owned cloud.
  bool ProcessDistributed(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output);

  int K = 32;
  int Method = 0;
  int Backend = 0;
  int Device = 0;
  int Threads = 0;
  int Seed = 0;
  bool UseFeatureArray = false;
  bool UseMassArray = false;
  double TotalMass = 0.0;
  int SPHConvention = 0;
  bool Periodic = false;
  double BoxLengths[3] = { 1.0, 1.0, 1.0 };

private:
  vtkVicinityKnnDensity(const vtkVicinityKnnDensity&) = delete;
  void operator=(const vtkVicinityKnnDensity&) = delete;
};

#endif
