/**
 * @class vtkVicinityLammpsDumpReader
 * @brief LAMMPS text dumps (the first frame; ITEM: ATOMS columns as arrays, scaled coordinates unscaled, box bounds and periodic flags as field data).
 *
 * A vtkVicinitySnapshotReader (see there for the output) that accepts
 * only this format, so that ParaView's file dialog and "Open With" list
 * it by name.
 */
#ifndef vtkVicinityLammpsDumpReader_h
#define vtkVicinityLammpsDumpReader_h

#include "VicinityReadersModule.h" // for the export macro
#include "vtkVicinitySnapshotReader.h"

class VICINITYREADERS_EXPORT vtkVicinityLammpsDumpReader : public vtkVicinitySnapshotReader
{
public:
  static vtkVicinityLammpsDumpReader* New();
  vtkTypeMacro(vtkVicinityLammpsDumpReader, vtkVicinitySnapshotReader);

protected:
  vtkVicinityLammpsDumpReader() = default;
  ~vtkVicinityLammpsDumpReader() override = default;
  bool AcceptsFormat(int format) const override;
  const char* FormatDescription() const override { return "a LAMMPS text dump"; }

private:
  vtkVicinityLammpsDumpReader(const vtkVicinityLammpsDumpReader&) = delete;
  void operator=(const vtkVicinityLammpsDumpReader&) = delete;
};

#endif
