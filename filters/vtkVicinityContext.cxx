#include "vtkVicinityContext.h"

#include <vtkAlgorithm.h>
#include <vtkSetGet.h>

namespace vtkVicinity
{

Context::Context(vtkAlgorithm* algorithm)
  : Algorithm(algorithm)
{
}

Context::~Context()
{
  vic_ctx_destroy(this->Ctx);
}

bool Context::Create(vic_backend backend, int device, int threads, uint64_t seed, int devices)
{
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = backend;
  o.device = device;
  o.devices = devices;
  o.threads = threads;
  o.seed = seed;
  o.log = &Context::Log;
  o.progress = &Context::Progress;
  o.user = this;
  vic_status s = vic_ctx_create(&o, &this->Ctx);
  if (s != VIC_OK)
  {
    this->CreateError = std::string("could not create a Vicinity context: ") + vic_status_name(s);
    this->Ctx = nullptr;
    return false;
  }
  return true;
}

void Context::SetProgressRange(double lo, double hi)
{
  this->Lo = lo;
  this->Hi = hi;
  this->CallLo = 0.0;
  this->CallHi = 1.0;
}

void Context::SetCallRange(double lo, double hi)
{
  this->CallLo = lo;
  this->CallHi = hi;
}

std::string Context::Error() const
{
  if (!this->Ctx)
  {
    return this->CreateError;
  }
  return vic_ctx_error(this->Ctx);
}

void Context::FlushWarnings()
{
  std::vector<std::string> w;
  {
    std::lock_guard<std::mutex> lock(this->WarningsMutex);
    w.swap(this->Warnings);
  }
  for (const std::string& message : w)
  {
    vtkWarningWithObjectMacro(this->Algorithm, << message);
  }
}

void Context::Log(void* user, vic_log_level level, const char* message)
{
  auto* self = static_cast<Context*>(user);
  // Errors come back through the status and vic_ctx_error; the filter
  // reports them once with vtkErrorMacro.  Debug/info stay quiet.
  if (level != VIC_LOG_WARNING)
  {
    return;
  }
  std::lock_guard<std::mutex> lock(self->WarningsMutex);
  self->Warnings.emplace_back(message);
}

int Context::Progress(void* user, const char* /*stage*/, double fraction)
{
  // The core calls this from the calling thread only (its contract), so
  // UpdateProgress and CheckAbort run on the pipeline's thread.
  auto* self = static_cast<Context*>(user);
  double f = std::min(1.0, std::max(0.0, fraction));
  f = self->CallLo + (self->CallHi - self->CallLo) * f;
  self->Algorithm->UpdateProgress(self->Lo + (self->Hi - self->Lo) * f);
  return self->Algorithm->CheckAbort() ? 1 : 0;
}

Outcome CheckCall(vtkAlgorithm* self, const char* label, Context& ctx, vic_status status)
{
  ctx.FlushWarnings();
  if (status == VIC_OK)
  {
    return Outcome::Done;
  }
  if (status == VIC_E_CANCELLED)
  {
    // The abort button: not an error.  Empty outputs, as VTK's CheckAbort
    // convention has the executive do for aborted filters.
    vtkWarningWithObjectMacro(self, << label << ": cancelled; the output is empty.");
    return Outcome::Cancelled;
  }
  vtkErrorWithObjectMacro(self, << label << ": " << ctx.Error());
  return Outcome::Failed;
}

} // namespace vtkVicinity
