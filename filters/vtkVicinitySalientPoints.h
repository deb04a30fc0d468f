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
 */
#ifndef vtkVicinitySalientPoints_h
#define vtkVicinitySalientPoints_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkVicinityKnnAlgorithm.h"

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
  /** Masses from a one-component point-data array (input array 1). */
  vtkSetMacro(UseMassArray, bool);
  vtkGetMacro(UseMassArray, bool);
  vtkBooleanMacro(UseMassArray, bool);
  ///@}

protected:
  vtkVicinitySalientPoints();
  ~vtkVicinitySalientPoints() override = default;

  const char* GetLabel() const override;
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

private:
  vtkVicinitySalientPoints(const vtkVicinitySalientPoints&) = delete;
  void operator=(const vtkVicinitySalientPoints&) = delete;
};

#endif
