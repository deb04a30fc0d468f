// The glue shared by the Vicinity filters, one header per concern:
//  - vtkVicinityRows.h: VTK arrays -> the core's float32 rows, and the
//    checks of the user's choices of rows (feature array, periodic box,
//    mass array);
//  - vtkVicinityContext.h: a core context talking to a vtkAlgorithm
//    (progress bar, abort button, warnings) and the outcome of a call;
//  - vtkVicinityPipeline.h: the pipeline passes every filter shares
//    (output types, composite inputs, the MPI switch, devices);
//  - vtkVicinityResults.h: core results into VTK arrays;
//  - vtkVicinityReport.h: the run's report as field data;
//  - vtkVicinityNBody.h: what kNN Density and Salient Points share.
// The filters stay small: they validate, call this glue and the core, and
// return.  No algorithm and no policy lives here.
#ifndef vtkVicinityFilterSupport_h
#define vtkVicinityFilterSupport_h

#include "vtkVicinityContext.h"
#include "vtkVicinityNBody.h"
#include "vtkVicinityPipeline.h"
#include "vtkVicinityReport.h"
#include "vtkVicinityResults.h"
#include "vtkVicinityRows.h"

#endif
