/**
 * @class vtkVicinitySalientPoints
 * @brief Density peaks (halos, clumps) and every particle's peak membership.
 *
 * The Vicinity core's density peaks (Rodriguez & Laio 2014) on the kNN
 * density: for every particle the nearest denser particle, the distance
 * "Delta" to it, the "Saliency" rho * delta, and the "Peak Id" of the peak
 * it climbs to (index into output port 1, peaks by descending saliency);
 * "Density" is the kNN density used (as the kNN Density filter computes
 * it, with the optional mass array).  A peak is a local density maximum
 * that passes the core's thresholds: density at least MinDensity, Delta at
 * least MinDelta (0: DeltaFactor times the peak's own k-th neighbour
 * distance), prominence over the saddle to a denser region at least
 * MinProminence (0: the core's noise-based default) and at least
 * MinMembers members; the densest particle always is a peak.  With exact
 * grid lists (d <= 3, Method AUTO or Grid) lists, density and peaks are one
 * core call (vic_knn_density_peaks), which on the GPU keeps the lists on
 * the device; the results are those of the separate calls.
 *
 * Output port 0: the input with those point arrays and the report in field
 * data.  Output port 1: one vertex per peak.  Its position is the peak
 * centre: the mean position of the peak's core (members at least half as
 * dense as the peak particle; minimum image in a periodic box), a steadier
 * centre than the densest particle; when the rows are a feature array and
 * not the 3-d coordinates, the position is the peak particle's own point
 * and the centre in row space is the array "Peak Centre".  Point data:
 * "Peak Id", "Point Id" (the peak particle in the input), "Density" (the
 * peak particle's), "Delta", "Saliency", "Member Count" and "Peak Particle
 * Position".
 *
 * Halo catalogue (HaloCatalogue, 3-d coordinates, one process): the core's
 * vic_halo_catalogue on the peaks.  Port 1 gains per peak "Halo Id" (-1:
 * no halo, i.e. fewer than MinMembers particles inside its R_Delta),
 * "Halo Members", "Halo Mass", "R_Delta", "M_Delta", "Half-Mass Radius",
 * "Centre Of Mass", and with a velocity array "Bulk Velocity" and
 * "Velocity Dispersion"; port 0 gains "Halo Id" (membership: the peak's
 * basin inside R_Delta, bound particles only with RemoveUnbound).  Output
 * port 2 is a vtkTable of radial density profiles, one row per halo and
 * log bin ("Halo", "Radius", "Radius / R_Delta", "Density", "Count").
 * FriendsOfFriends adds "FoF Group" on port 0 (vic_fof, linking length
 * LinkingLength times the mean spacing, groups of at least MinMembers).
 */
#ifndef vtkVicinitySalientPoints_h
#define vtkVicinitySalientPoints_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkVicinityKnnAlgorithm.h"

#include <vtkSmartPointer.h> // for the profiles member
#include <vtkTable.h>        // for the profiles member

class VICINITYFILTERS_EXPORT vtkVicinitySalientPoints : public vtkVicinityKnnAlgorithm
{
public:
  static vtkVicinitySalientPoints* New();
  vtkTypeMacro(vtkVicinitySalientPoints, vtkVicinityKnnAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Peak thresholds (vic_peak_options; defaults from the core). */
  vtkSetClampMacro(MinDensity, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MinDensity, double);
  vtkSetClampMacro(MinDelta, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MinDelta, double);
  vtkSetClampMacro(DeltaFactor, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(DeltaFactor, double);
  vtkSetClampMacro(MinProminence, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MinProminence, double);
  vtkSetClampMacro(MinMembers, vtkIdType, 0, VTK_ID_MAX);
  vtkGetMacro(MinMembers, vtkIdType);
  ///@}

  ///@{
  /** Halo catalogue (vic_halo_options; defaults from the core).
   *  OverdensityReference: 0 Delta times the mean density (MeanDensity, 0
   *  = from the data), 1 Delta times CriticalDensity. */
  vtkSetMacro(HaloCatalogue, bool);
  vtkGetMacro(HaloCatalogue, bool);
  vtkBooleanMacro(HaloCatalogue, bool);
  vtkSetClampMacro(Overdensity, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(Overdensity, double);
  vtkSetClampMacro(OverdensityReference, int, 0, 1);
  vtkGetMacro(OverdensityReference, int);
  vtkSetClampMacro(CriticalDensity, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(CriticalDensity, double);
  vtkSetClampMacro(MeanDensity, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(MeanDensity, double);
  vtkSetMacro(RemoveUnbound, bool);
  vtkGetMacro(RemoveUnbound, bool);
  vtkBooleanMacro(RemoveUnbound, bool);
  vtkSetClampMacro(GravitationalConstant, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(GravitationalConstant, double);
  vtkSetClampMacro(Softening, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(Softening, double);
  vtkSetClampMacro(ProfileBins, int, 0, 1000);
  vtkGetMacro(ProfileBins, int);
  /** Velocities from a three-component point-data array (input array 2). */
  vtkSetMacro(UseVelocityArray, bool);
  vtkGetMacro(UseVelocityArray, bool);
  vtkBooleanMacro(UseVelocityArray, bool);
  ///@}

  ///@{
  /** Friends-of-friends groups ("FoF Group"), linking length b times the
   *  mean interparticle spacing. */
  vtkSetMacro(FriendsOfFriends, bool);
  vtkGetMacro(FriendsOfFriends, bool);
  vtkBooleanMacro(FriendsOfFriends, bool);
  vtkSetClampMacro(LinkingLength, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(LinkingLength, double);
  ///@}

  ///@{
  /** Masses from a one-component point-data array (input array 1). */
  vtkSetMacro(UseMassArray, bool);
  vtkGetMacro(UseMassArray, bool);
  vtkBooleanMacro(UseMassArray, bool);
  ///@}

protected:
  vtkVicinitySalientPoints();
  ~vtkVicinitySalientPoints() override = default;

  const char* GetLabel() const override;
  // Port 2 is a vtkTable (the profiles); ports 0 and 1 as the superclass.
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  // One data set; peaks is output port 1.
  bool ProcessDataSet(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output,
    vtkPolyData* peaks) override;
  // Under MPI with several processes (vtkVicinitySalientPointsMPI.cxx):
  // densities on owned + halo points, peak decisions for owned points, the
  // peak list merged over the ranks (rank 0 outputs it).
  bool ProcessDistributed(vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output,
    vtkPolyData* peaks) override;

  double MinDensity;
  double MinDelta;
  double DeltaFactor;
  double MinProminence;
  vtkIdType MinMembers;
  bool UseMassArray = false;
  bool HaloCatalogue = true;
  double Overdensity;
  int OverdensityReference;
  double CriticalDensity;
  double MeanDensity;
  bool RemoveUnbound = false;
  double GravitationalConstant;
  double Softening;
  int ProfileBins;
  bool UseVelocityArray = false;
  bool FriendsOfFriends = false;
  double LinkingLength = 0.2;

private:
  // The profiles of the current RequestData (every leaf's rows), copied to port 2.
  vtkSmartPointer<vtkTable> Profiles;
  vtkIdType Leaf = 0;

  vtkVicinitySalientPoints(const vtkVicinitySalientPoints&) = delete;
  void operator=(const vtkVicinitySalientPoints&) = delete;
};

#endif
