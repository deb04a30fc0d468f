// The core context of a filter's execution: its progress and abort
// callbacks talk to the vtkAlgorithm (progress bar, abort button), its
// warnings become vtkWarningMacro, and a call's outcome (done, cancelled,
// failed with the core's message) is said once on the filter.
#ifndef vtkVicinityContext_h
#define vtkVicinityContext_h

#include "vicinity.h"

#include <mutex>
#include <string>
#include <vector>

class vtkAlgorithm;

namespace vtkVicinity
{

// Owns a vic_ctx whose progress callback drives algorithm->UpdateProgress
// (mapped into [lo, hi] so several core calls or blocks share one bar) and
// polls algorithm->CheckAbort() to cancel, and whose log callback collects
// warnings, later emitted with vtkWarningMacro on the algorithm.
class Context
{
public:
  explicit Context(vtkAlgorithm* algorithm);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Creates the core context; on failure Error() says why.
  bool Create(vic_backend backend, int device, int threads, uint64_t seed, int devices = 1);
  vic_ctx* Get() const { return this->Ctx; }
  // The share of the bar of the data set being processed (a composite
  // input's leaf), and within it the share of the next core call, so
  // that a filter making several calls (kNN lists, density, peaks) and
  // several leaves fill one bar in order.  SetProgressRange resets the
  // call's share to the whole leaf.
  void SetProgressRange(double lo, double hi);
  void SetCallRange(double lo, double hi);
  // The core's message for the last failure (or a creation failure).
  std::string Error() const;
  // Emit collected warnings on the algorithm and forget them.
  void FlushWarnings();

private:
  static void Log(void* user, vic_log_level level, const char* message);
  static int Progress(void* user, const char* stage, double fraction);

  vtkAlgorithm* Algorithm;
  vic_ctx* Ctx = nullptr;
  double Lo = 0.0, Hi = 1.0;         // the leaf's share of the bar
  double CallLo = 0.0, CallHi = 1.0; // the call's share of the leaf
  std::string CreateError;
  std::mutex WarningsMutex; // the core may log from worker threads
  std::vector<std::string> Warnings;
};

// How a core call ended, for the filter: Done, or Cancelled by the abort
// button (a warning "<label>: cancelled; the output is empty." -- not an
// error; the filter empties its outputs and returns 1), or Failed (the
// core's message as an error; the filter returns 0).  Collected core
// warnings are emitted first in every case.
enum class Outcome
{
  Done,
  Cancelled,
  Failed
};
Outcome CheckCall(vtkAlgorithm* self, const char* label, Context& ctx, vic_status status);

} // namespace vtkVicinity

#endif
