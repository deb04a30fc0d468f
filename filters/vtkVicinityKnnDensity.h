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
 * processed leaf by leaf.  Under MPI with several processes the points
 * are redistributed: each rank computes its owned points' densities with a
 * halo of its neighbours' points (ProcessDistributed), equal to one
 * process's; feature arrays and periodic boxes need a single process.
 */
#ifndef vtkVicinityKnnDensity_h
#define vtkVicinityKnnDensity_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkVicinityKnnAlgorithm.h"

class VICINITYFILTERS_EXPORT vtkVicinityKnnDensity : public vtkVicinityKnnAlgorithm
{
public:
  static vtkVicinityKnnDensity* New();
  vtkTypeMacro(vtkVicinityKnnDensity, vtkVicinityKnnAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

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

protected:
  vtkVicinityKnnDensity();
  ~vtkVicinityKnnDensity() override = default;

  const char* GetLabel() const override;
  bool ProcessDataSet(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData*) override;
  // Under MPI with several processes: owned points with a halo
  // (vtkVicinityDistributedPoints), the output is the rank's owned cloud.
  bool ProcessDistributed(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData*) override;

  bool UseMassArray = false;
  double TotalMass = 0.0;
  int SPHConvention = 0;

private:
  vtkVicinityKnnDensity(const vtkVicinityKnnDensity&) = delete;
  void operator=(const vtkVicinityKnnDensity&) = delete;
};

#endif
