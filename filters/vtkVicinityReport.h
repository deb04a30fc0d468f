// What a run did, as field data on the outputs: the core's report (k,
// method and reason, backend, metric, stage seconds, d_nn1 statistics,
// recall estimate, warnings) and one-value arrays a filter adds.
#ifndef vtkVicinityReport_h
#define vtkVicinityReport_h

#include "vicinity.h"

#include <vtkType.h>

#include <string>

class vtkFieldData;

namespace vtkVicinity
{

// Writes what happened (k, method and reason, backend, metric, stage
// seconds, d_nn1 statistics, recall estimate, warnings) as field data.
void WriteReport(const vic_report& report, vic_metric metric, int dimension, const char* source,
  vtkFieldData* fieldData);
// One-value field-data arrays, for what a filter adds to the report.
void AddFieldString(vtkFieldData* fieldData, const char* name, const std::string& value);
void AddFieldDouble(vtkFieldData* fieldData, const std::string& name, double value);
void AddFieldInt(vtkFieldData* fieldData, const char* name, vtkIdType value);

} // namespace vtkVicinity

#endif
