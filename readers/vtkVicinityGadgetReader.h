/**
 * @class vtkVicinityGadgetReader
 * @brief Gadget format 1 and 2 snapshots (single or multi-file, either byte order, single or double precision).
 *
 * A vtkVicinitySnapshotReader (see there for the output) that accepts
 * only this format, so that ParaView's file dialog and "Open With" list
 * it by name.
 */
#ifndef vtkVicinityGadgetReader_h
#define vtkVicinityGadgetReader_h

#include "VicinityReadersModule.h" // for the export macro
#include "vtkVicinitySnapshotReader.h"

class VICINITYREADERS_EXPORT vtkVicinityGadgetReader : public vtkVicinitySnapshotReader
{
public:
  static vtkVicinityGadgetReader* New();
  vtkTypeMacro(vtkVicinityGadgetReader, vtkVicinitySnapshotReader);

protected:
  vtkVicinityGadgetReader() = default;
  ~vtkVicinityGadgetReader() override = default;
  bool AcceptsFormat(int format) const override;
  const char* FormatDescription() const override { return "a Gadget format 1 or 2 snapshot"; }

private:
  vtkVicinityGadgetReader(const vtkVicinityGadgetReader&) = delete;
  void operator=(const vtkVicinityGadgetReader&) = delete;
};

#endif
