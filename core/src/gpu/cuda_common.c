/* The helpers every file of the CUDA bridge shares (cuda_internal.h): the
 * device probe and device set of a context, a vick_call set up for one
 * device, the translation of vick codes into the context's status and
 * message, packed rows, stage times and the timing log line, and one host
 * thread per device.  They call into the kernels library and the context
 * only, never back into a bridge file, so the bridge has no call cycles. */
#include "cuda_internal.h"
#include "slot_threads.h"
#include "device_set.h"

#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Check the context's devices (device, and devices from it on) without
 * touching the context's error: VIC_OK with *count, or VIC_E_NODEVICE
 * with the reason in msg. */
static vic_status probe_quiet(const vic_ctx *c, int *count, char *msg, size_t size) {
  char why[256];
  *count = 0;
  int present = vick_device_count(why, sizeof why);
  if (present < 0) {
    snprintf(msg, size, "the CUDA runtime cannot be used on this machine: %s", why);
    return VIC_E_NODEVICE;
  }
  if (present == 0) {
    snprintf(msg, size, "no CUDA device found%s%s", why[0] ? ": " : "", why);
    return VIC_E_NODEVICE;
  }
  return vic__device_set(c->opt.device, c->opt.devices, present, count, msg, size);
}

/* A context that uses a GPU keeps the staged copies' pinned slots for
 * its life: pinning host memory costs more than many a call's copies. */
static void release_pinned(vic_ctx *c) {
  if (atomic_exchange(&c->pinned_held, 0)) vick_pinned_keep(0);
}

static void hold_pinned(vic_ctx *c) {
  if (atomic_exchange(&c->pinned_held, 1)) return;
  c->gpu_release = release_pinned;
  vick_pinned_keep(1);
}

vic_status vic__cuda_probe(vic_ctx *c) {
  char msg[512];
  int count;
  vic_status s = probe_quiet(c, &count, msg, sizeof msg);
  if (s == VIC_OK) hold_pinned(c);
  return s == VIC_OK ? VIC_OK : vic__fail(c, s, "%s", msg);
}

vic_status vic__cuda_devices(vic_ctx *c, int *first, int *count) {
  char msg[512];
  vic_status s = probe_quiet(c, count, msg, sizeof msg);
  *first = c->opt.device;
  if (s == VIC_OK) hold_pinned(c);
  return s == VIC_OK ? VIC_OK : vic__fail(c, s, "%s", msg);
}

int vic_cuda_available(vic_ctx *c) {
  if (!c) return 0;
  char msg[512];
  int count;
  return probe_quiet(c, &count, msg, sizeof msg) == VIC_OK;
}

/* The kernels poll this between batches; it reports progress to the
 * caller and answers nonzero once the context is cancelled. */
static int poll_ctx(void *user, const char *stage, double fraction) {
  return vic__progress((vic_ctx *)user, stage, fraction) != VIC_OK;
}

/* A worker thread's poll: the cancel flag only (atomic). */
static int poll_cancel(void *user, const char *stage, double fraction) {
  (void)stage;
  (void)fraction;
  return vic__cancelled((vic_ctx *)user);
}

void vic__cuda_call_init(vic_ctx *c, vick_call *call, int device, size_t budget, int threaded) {
  memset(call, 0, sizeof *call);
  call->device = device;
  call->memory_budget = budget;
  call->seed = c->opt.seed;
  call->progress = threaded ? poll_cancel : poll_ctx;
  call->user = c;
  call->threads = vic__threads(c);
}

vic_status vic__kernel_status(vic_ctx *c, int rc, const vick_call *call, const char *what) {
  switch (rc) {
  case VICK_OK: return VIC_OK;
  case VICK_NOMEM: return vic__fail(c, VIC_E_NOMEM, "GPU %s ran out of device memory: %s", what, call->message);
  case VICK_CANCELLED:
    /* vic__progress already worded it when the caller cancelled */
    if (vic__cancelled(c) && c->error[0]) return VIC_E_CANCELLED;
    return vic__fail(c, VIC_E_CANCELLED, "GPU %s: %s", what, call->message);
  case VICK_ARGUMENT: return vic__fail(c, VIC_E_UNSUPPORTED, "GPU %s: %s", what, call->message);
  case VICK_NODEVICE: return vic__fail(c, VIC_E_NODEVICE, "GPU %s: %s", what, call->message);
  default: return vic__fail(c, VIC_E_DEVICE, "GPU %s failed: %s", what, call->message);
  }
}

vic_status vic__cuda_translate(vic_ctx *c, int rc, const vick_call *call, vic_method m) {
  return vic__kernel_status(c, rc, call, vic_method_name(m));
}

void vic__cuda_parallel(int slots, void (*job)(void *arg, int slot), void *arg) {
  vic__slots_run(slots, 0, job, arg);
}

const float *vic__cuda_packed_rows(const vic_data *x, float **owned, vick_call *call) {
  *owned = NULL;
  int64_t stride = x->stride ? x->stride : x->d;
  if (stride == x->d) return x->rows;
  float *p = malloc((size_t)x->n * (size_t)x->d * sizeof(float));
  if (!p) {
    snprintf(call->message, sizeof call->message, "no host memory to pack strided rows");
    return NULL;
  }
  for (int64_t i = 0; i < x->n; ++i) memcpy(p + i * x->d, x->rows + i * stride, (size_t)x->d * sizeof(float));
  *owned = p;
  return p;
}

void vic__cuda_copy_stages(vic_report *rep, const vick_call *call) {
  rep->seconds_transfer += call->seconds_transfer;
  rep->seconds_kernel += call->seconds_kernel;
  for (int i = 0; i < call->n_stages; ++i) vic__report_stage(rep, call->stages[i].name, call->stages[i].seconds);
}

void vic__kernel_log(vic_ctx *c, const vick_call *call, const char *what) {
  char dev[128] = "";
  vick_device_info(call->device, dev, sizeof dev, NULL, NULL);
  vic__log(c, VIC_LOG_INFO, "GPU %s on %s (device %d): %.3f s total, %.3f s kernels, %.3f s transfers", what, dev,
           call->device, call->seconds_total, call->seconds_kernel, call->seconds_transfer);
}
