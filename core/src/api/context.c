/* Contexts: options, cancellation, threads, clocks, reports and allocation.
 * The last error, logging and progress are in ctx_messages.c. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static void defaults(vic_ctx_options *o) {
  memset(o, 0, sizeof *o);
  o->backend = VIC_BACKEND_AUTO;
  o->seed = 42;
  o->devices = 1;
}

void vic_ctx_options_init_sized(vic_ctx_options *o, size_t struct_size) {
  vic_ctx_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

vic_status vic_ctx_create(const vic_ctx_options *o, vic_ctx **out) {
  if (!out) return VIC_E_ARGUMENT;
  *out = NULL;
  vic_ctx *c = calloc(1, sizeof *c);
  if (!c) return VIC_E_NOMEM;
  vic_ctx_options_init(&c->opt);
  if (o && vic__options_in(NULL, o, &c->opt, sizeof c->opt, "vic_ctx_options") != VIC_OK) {
    free(c);
    return VIC_E_ARGUMENT;
  }
  if (c->opt.threads < 0 || c->opt.device < 0 || c->opt.devices < VIC_DEVICES_ALL || c->opt.backend > VIC_BACKEND_CUDA) {
    free(c);
    return VIC_E_ARGUMENT;
  }
  atomic_init(&c->cancel, 0);
  atomic_init(&c->pinned_held, 0);
  *out = c;
  return VIC_OK;
}

void vic_ctx_destroy(vic_ctx *c) {
  if (!c) return;
  if (c->gpu_release) c->gpu_release(c);
  free(c);
}
const char *vic_ctx_error(const vic_ctx *c) { return c ? c->error : "no context"; }
void vic_ctx_cancel(vic_ctx *c) { if (c) atomic_store(&c->cancel, 1); }
void vic_ctx_reset_cancel(vic_ctx *c) { if (c) atomic_store(&c->cancel, 0); }

int vic__threads(const vic_ctx *c) {
#ifdef _OPENMP
  return c->opt.threads > 0 ? c->opt.threads : omp_get_max_threads();
#else
  (void)c;
  return 1;
#endif
}

double vic__now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int stage_index(const vic_report *r, const char *name) {
  for (int i = 0; i < r->n_stages && i < VIC_MAX_STAGES; ++i)
    if (strncmp(r->stages[i].name, name, sizeof r->stages[i].name) == 0) return i;
  return -1;
}

double vic_report_stage_seconds(const vic_report *r, const char *name) {
  const int i = r && name ? stage_index(r, name) : -1;
  return i < 0 ? -1.0 : r->stages[i].seconds;
}

void vic__report_stage(vic_report *r, const char *name, double seconds) {
  const int i = stage_index(r, name);
  if (i >= 0) { r->stages[i].seconds += seconds; return; }
  if (r->n_stages >= VIC_MAX_STAGES) return;
  vic_stage_time *s = &r->stages[r->n_stages++];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->seconds = seconds;
}

void vic__report_reason(vic_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->reason, sizeof r->reason, fmt, ap);
  va_end(ap);
}

void *vic__malloc(vic_ctx *c, size_t bytes, const char *what) {
  void *p = bytes ? malloc(bytes) : malloc(1);
  if (!p) vic__fail(c, VIC_E_NOMEM, "out of host memory allocating %zu bytes for %s", bytes, what);
  return p;
}

void *vic__calloc(vic_ctx *c, size_t count, size_t size, const char *what) {
  if (size && count > SIZE_MAX / size) {
    vic__fail(c, VIC_E_NOMEM, "allocation size overflow for %s", what);
    return NULL;
  }
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) vic__fail(c, VIC_E_NOMEM, "out of host memory allocating %zu x %zu bytes for %s", count, size, what);
  return p;
}
