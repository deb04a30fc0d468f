/**
 * @class vtkVicinitySphResample
 * @brief Adaptive SPH maps: particles with their own smoothing lengths
 * deposited onto a projection, a slice or a volume (vtkImageData).
 *
 * The core's vic_sph_resample: every particle spreads its mass with its
 * own kernel (cubic spline as kNN Density, or Wendland C2 / C4) of
 * support 2h (pynbody) or h (Gadget).
 *  - Projection: "Surface Density", the line-of-sight integral of the
 *    density (mass per area), along x, y, z or any direction; particles
 *    smaller than a pixel are integrated exactly over the pixels they
 *    overlap, so the map holds the mass of the particles inside it.
 *  - Slice: "Density" on the plane through the centre, normal to the
 *    direction.
 *  - Volume: "Density" in Resolution cells for volume rendering.
 * Each array named with AddMappedArray gives "<name>" ("<name> (mean)"
 * when that is the density's name) as its density-weighted mean (along the line of sight for a projection), NaN
 * where no particle reaches.  The smoothing lengths come from a point
 * array (kNN Density's "Smoothing Length", input array 0) or are
 * computed here with K neighbours (vic_knn_density).  Masses: input
 * array 1, or Total Mass shared equally, or unit masses.
 *
 * The region follows the data's bounds (grown by the largest kernel) or
 * is given as Centre and Size in world units.  Under MPI every rank
 * deposits its own particles on the same region and the images are
 * summed onto rank 0 (the others output an empty image).
 */
#ifndef vtkVicinitySphResample_h
#define vtkVicinitySphResample_h

#include "VicinityFiltersModule.h" // for the export macro
#include "vtkImageAlgorithm.h"

#include <string>
#include <vector>

class VICINITYFILTERS_EXPORT vtkVicinitySphResample : public vtkImageAlgorithm
{
public:
  static vtkVicinitySphResample* New();
  vtkTypeMacro(vtkVicinitySphResample, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /** What the image holds (vic_sph_mode). */
  enum ModeType
  {
    PROJECTION = 0,
    SLICE = 1,
    VOLUME = 2
  };
  /** The line of sight / slice normal / volume z. */
  enum DirectionType
  {
    ALONG_X = 0,
    ALONG_Y = 1,
    ALONG_Z = 2,
    CUSTOM = 3
  };
  /** Where the smoothing lengths come from. */
  enum SmoothingType
  {
    FROM_ARRAY = 0,
    FROM_NEIGHBOURS = 1
  };

  ///@{
  vtkSetClampMacro(Mode, int, PROJECTION, VOLUME);
  vtkGetMacro(Mode, int);
  /** vic_sph_kernel: 0 cubic spline, 1 Wendland C2, 2 Wendland C4. */
  vtkSetClampMacro(Kernel, int, 0, 2);
  vtkGetMacro(Kernel, int);
  /** What the smoothing lengths mean: 0 pynbody (support 2h), 1 Gadget (support h). */
  vtkSetClampMacro(SPHConvention, int, 0, 1);
  vtkGetMacro(SPHConvention, int);
  ///@}

  ///@{
  /** Direction: x, y, z, or CUSTOM with ViewDirection (into the scene)
   *  and ViewUp (the image's y, projected off the direction). */
  vtkSetClampMacro(Direction, int, ALONG_X, CUSTOM);
  vtkGetMacro(Direction, int);
  vtkSetVector3Macro(ViewDirection, double);
  vtkGetVector3Macro(ViewDirection, double);
  vtkSetVector3Macro(ViewUp, double);
  vtkGetVector3Macro(ViewUp, double);
  ///@}

  ///@{
  /** Cells along the image's x, y and (volume) z. */
  vtkSetVector3Macro(Resolution, int);
  vtkGetVector3Macro(Resolution, int);
  /** On: the region is the data's bounding box grown by the largest
   *  kernel (a projection integrates the whole line of sight).  Off:
   *  Centre and Size (world units along the image's x, y and z; a
   *  projection's Size z is its depth, 0 the whole line of sight). */
  vtkSetMacro(FollowDataBounds, bool);
  vtkGetMacro(FollowDataBounds, bool);
  vtkBooleanMacro(FollowDataBounds, bool);
  vtkSetVector3Macro(Centre, double);
  vtkGetVector3Macro(Centre, double);
  vtkSetVector3Macro(Size, double);
  vtkGetVector3Macro(Size, double);
  ///@}

  ///@{
  /** Smoothing lengths from input array 0 (FROM_ARRAY) or from the K
   *  nearest neighbours (FROM_NEIGHBOURS, vic_knn_density, one process). */
  vtkSetClampMacro(SmoothingSource, int, FROM_ARRAY, FROM_NEIGHBOURS);
  vtkGetMacro(SmoothingSource, int);
  vtkSetClampMacro(K, int, 2, 1024);
  vtkGetMacro(K, int);
  ///@}

  ///@{
  /** Masses from input array 1; off: Total Mass / n each (0: unit masses). */
  vtkSetMacro(UseMassArray, bool);
  vtkGetMacro(UseMassArray, bool);
  vtkBooleanMacro(UseMassArray, bool);
  vtkSetClampMacro(TotalMass, double, 0.0, VTK_DOUBLE_MAX);
  vtkGetMacro(TotalMass, double);
  ///@}

  ///@{
  /** Point arrays whose density-weighted means are mapped (one component). */
  void AddMappedArray(const char* name);
  void ClearMappedArrays();
  ///@}

  ///@{
  /** Periodic box (wrapped; 0 leaves an axis open). */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkSetVector3Macro(BoxLengths, double);
  vtkGetVector3Macro(BoxLengths, double);
  ///@}

  ///@{
  /** Backend (vic_backend: 0 auto, 1 CPU, 2 GPU), CUDA device, CPU threads. */
  vtkSetClampMacro(Backend, int, 0, 2);
  vtkGetMacro(Backend, int);
  vtkSetClampMacro(Device, int, 0, 64);
  vtkGetMacro(Device, int);
  vtkSetClampMacro(Threads, int, 0, 4096);
  vtkGetMacro(Threads, int);
  ///@}

protected:
  vtkVicinitySphResample();
  ~vtkVicinitySphResample() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Mode = PROJECTION;
  int Kernel = 0;
  int SPHConvention = 0;
  int Direction = ALONG_Z;
  double ViewDirection[3] = { 0, 0, -1 };
  double ViewUp[3] = { 0, 1, 0 };
  int Resolution[3] = { 256, 256, 64 };
  bool FollowDataBounds = true;
  double Centre[3] = { 0, 0, 0 };
  double Size[3] = { 1, 1, 0 };
  int SmoothingSource = FROM_ARRAY;
  int K = 32;
  bool UseMassArray = false;
  double TotalMass = 0.0;
  std::vector<std::string> MappedArrays;
  bool Periodic = false;
  double BoxLengths[3] = { 1, 1, 1 };
  int Backend = 0;
  int Device = 0;
  int Threads = 0;

private:
  vtkVicinitySphResample(const vtkVicinitySphResample&) = delete;
  void operator=(const vtkVicinitySphResample&) = delete;
};

#endif
