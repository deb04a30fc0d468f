/* A context's messages: the last error (vic__fail), the log callback
 * (vic__log, counting warnings) and progress with the cancel poll.  Every
 * core file reports through these, so they depend on nothing in the core. */
#include "internal.h"

#include <stdio.h>

static void vlog(vic_ctx *c, vic_log_level level, const char *fmt, va_list ap) {
  if (level == VIC_LOG_WARNING) c->warnings++;
  if (!c->opt.log) return;
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  c->opt.log(c->opt.user, level, msg);
}

void vic__log(vic_ctx *c, vic_log_level level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(c, level, fmt, ap);
  va_end(ap);
}

vic_status vic__fail(vic_ctx *c, vic_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->error, sizeof c->error, fmt, ap);
  va_end(ap);
  if (c->opt.log) c->opt.log(c->opt.user, VIC_LOG_ERROR, c->error);
  return s;
}

vic_status vic__progress(vic_ctx *c, const char *stage, double fraction) {
  /* the cancel flag set as vic_ctx_cancel does */
  if (c->opt.progress && c->opt.progress(c->opt.user, stage, fraction)) atomic_store(&c->cancel, 1);
  if (vic__cancelled(c)) return vic__fail(c, VIC_E_CANCELLED, "cancelled during stage '%s'", stage);
  return VIC_OK;
}
