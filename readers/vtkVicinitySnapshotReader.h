/**
 * @class vtkVicinitySnapshotReader
 * @brief Particle snapshots (Gadget 1/2, HDF5, LAMMPS dumps) as one vtkPolyData.
 *
 * The parsing lives in the C library vic_snapshot (snapshot/); this class
 * turns a range of its particles into a vtkPolyData with one vertex per
 * particle:
 *  - points: the positions (float32);
 *  - point data: "ParticleType" (Gadget/HDF5: the PartType number; LAMMPS:
 *    the type column), "Mass", "Velocity" (3 components), "ParticleIds"
 *    (64-bit), and for LAMMPS every other ATOMS column under its name;
 *  - field data: "BoxSize" (3 lengths), "BoxOrigin" (3), "BoxPeriodic"
 *    (3 flags: 1 periodic), "Time", "Redshift", "MassTable", "NumPartTotal",
 *    "Timestep", "HubbleParam", "Omega0", "OmegaLambda", the unit attributes
 *    "UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s", and
 *    "SnapshotFormat" -- each only when the file has it.
 * All particle types go into one data set, told apart by ParticleType
 * (Threshold on it selects a type), because the Vicinity filters take one
 * point cloud.  Particles are ordered file by file and, within a file,
 * type by type.
 *
 * ParticleTypeSelection (Gadget, HDF5): the types to read, "PartType0",
 * "PartType1", ... for the types the file has (all on by default); the
 * others are not read at all.  LAMMPS types are a column (use Threshold).
 *
 * Parallel: the reader handles piece requests; piece p of P reads a
 * contiguous share of the particles (sizes differing by at most one), so
 * under pvbatch/pvserver each rank reads only its share.
 *
 * Subclasses accept one family of formats and answer CanReadFile for the
 * file dialog; this class reads any of them.
 */
#ifndef vtkVicinitySnapshotReader_h
#define vtkVicinitySnapshotReader_h

#include "VicinityReadersModule.h" // for the export macro
#include "vtkDataArraySelection.h"   // for the type selection
#include "vtkNew.h"                  // for the type selection
#include "vtkPolyDataAlgorithm.h"

#include <string>

class VICINITYREADERS_EXPORT vtkVicinitySnapshotReader : public vtkPolyDataAlgorithm
{
public:
  static vtkVicinitySnapshotReader* New();
  vtkTypeMacro(vtkVicinitySnapshotReader, vtkPolyDataAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /** The snapshot file; for a multi-file snapshot any one of its files
   *  (snap.0, snap.1, ... or snap.0.hdf5, ...: all are read). */
  vtkSetStdStringFromCharMacro(FileName);
  vtkGetCharFromStdStringMacro(FileName);
  ///@}

  /** 1 when the file's content is a snapshot this reader accepts. */
  virtual int CanReadFile(const char* name);

  /** The particle types to read ("PartType0", ...), filled when the file's
   *  information is read. */
  vtkDataArraySelection* GetParticleTypeSelection();

protected:
  vtkVicinitySnapshotReader();
  ~vtkVicinitySnapshotReader() override = default;

  /** The formats (vsnap_format values) this reader accepts. */
  virtual bool AcceptsFormat(int format) const;
  /** What this reader reads, for messages ("a Gadget snapshot"). */
  virtual const char* FormatDescription() const { return "a particle snapshot"; }

  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkVicinitySnapshotReader(const vtkVicinitySnapshotReader&) = delete;
  void operator=(const vtkVicinitySnapshotReader&) = delete;

  // Checks the file's format against AcceptsFormat; an error and false if not.
  bool CheckFormat();

  std::string FileName;
  vtkNew<vtkDataArraySelection> ParticleTypeSelection;
};

#endif
