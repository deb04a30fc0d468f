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
 * MinMembers members; the densest particle always is a peak.
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
#include "vtkDataObjectAlgorithm.h"

class vtkDataSet;
class vtkPolyData;

namespace vtkVicinity
{
class Context;
}

class VICINITYFILTERS_EXPORT vtkVicinitySalientPoints : public vtkDataObjectAlgorithm
{
public:
  static vtkVicinitySalientPoints* New();
  vtkTypeMacro(vtkVicinitySalientPoints, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** Neighbours per point for the density and the local-maximum test
   *  (default 32). */
  vtkSetClampMacro(K, int, 2, 4096);
  vtkGetMacro(K, int);
  ///@}

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
  /** kNN method and backend, CUDA device, CPU threads, seed (as the kNN
   *  Density filter). */
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
  /** Rows from a point-data array (input array 0) instead of the
   *  coordinates; masses from a point-data array (input array 1). */
  vtkSetMacro(UseFeatureArray, bool);
  vtkGetMacro(UseFeatureArray, bool);
  vtkBooleanMacro(UseFeatureArray, bool);
  vtkSetMacro(UseMassArray, bool);
  vtkGetMacro(UseMassArray, bool);
  vtkBooleanMacro(UseMassArray, bool);
  ///@}

  ///@{
  /** Periodic box (3-d rows). */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  vtkSetVector3Macro(BoxLengths, double);
  vtkGetVector3Macro(BoxLengths, double);
  ///@}

protected:
  vtkVicinitySalientPoints();
  ~vtkVicinitySalientPoints() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  bool ProcessDataSet(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* peaks);
  // The same under MPI with several processes (vtkVicinitySalientPointsMPI.cxx):
  // densities on owned + halo points, peak decisions for owned points, the
  // peak list merged over the ranks (rank 0 outputs it).
  bool ProcessDistributed(
    vtkVicinity::Context& ctx, vtkDataSet* input, vtkDataSet* output, vtkPolyData* peaks);

  int K = 32;
  double MinDensity;
  double MinDelta;
  double DeltaFactor;
  double MinProminence;
  vtkIdType MinMembers;
  int Method = 0;
  int Backend = 0;
  int Device = 0;
  int Threads = 0;
  int Seed = 0;
  bool UseFeatureArray = false;
  bool UseMassArray = false;
  bool Periodic = false;
  double BoxLengths[3] = { 1.0, 1.0, 1.0 };

private:
  vtkVicinitySalientPoints(const vtkVicinitySalientPoints&) = delete;
  void operator=(const vtkVicinitySalientPoints&) = delete;
};

#endif
