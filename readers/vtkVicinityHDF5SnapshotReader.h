/**
 * @class vtkVicinityHDF5SnapshotReader
 * @brief HDF5 snapshots in the Gadget-4 / SWIFT / AREPO layout (/Header attributes, /PartTypeN datasets), single or multi-file.
 *
 * A vtkVicinitySnapshotReader (see there for the output) that accepts
 * only this format, so that ParaView's file dialog and "Open With" list
 * it by name.
 */
#ifndef vtkVicinityHDF5SnapshotReader_h
#define vtkVicinityHDF5SnapshotReader_h

#include "VicinityReadersModule.h" // for the export macro
#include "vtkVicinitySnapshotReader.h"

class VICINITYREADERS_EXPORT vtkVicinityHDF5SnapshotReader : public vtkVicinitySnapshotReader
{
public:
  static vtkVicinityHDF5SnapshotReader* New();
  vtkTypeMacro(vtkVicinityHDF5SnapshotReader, vtkVicinitySnapshotReader);

protected:
  vtkVicinityHDF5SnapshotReader() = default;
  ~vtkVicinityHDF5SnapshotReader() override = default;
  bool AcceptsFormat(int format) const override;
  const char* FormatDescription() const override { return "an HDF5 snapshot (Gadget-4 / SWIFT / AREPO layout)"; }

private:
  vtkVicinityHDF5SnapshotReader(const vtkVicinityHDF5SnapshotReader&) = delete;
  void operator=(const vtkVicinityHDF5SnapshotReader&) = delete;
};

#endif
