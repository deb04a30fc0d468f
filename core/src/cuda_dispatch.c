/* The core's side of the GPU backend in a CUDA build: probes the device,
 * says which methods the GPU implements, calls the kernels library and
 * turns its codes and messages into vic_status and the context's error.
 * Policy (fallbacks, method choice) stays in knn_build.c; the kernels stay
 * free of it.
 *
 * To add a GPU method: include its kernels header, add its case to
 * vic__cuda_has_method and to run_method below.  Several devices: the
 * grid in cuda_multi.c, the GGNN index and sharded builds in
 * cuda_ggnn_index.c. */
#include "backend_cuda.h"
#include "cuda_internal.h"
#include "device_set.h"
#include "ggm_common.h"
#include "vic_kernels.h"
#include "vic_kernels_exact.h"
#include "vic_kernels_gnnd.h"
#include "vic_kernels_ggnn.h"

#include <stdio.h>
#include <string.h>

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

vic_status vic__cuda_probe(vic_ctx *c) {
  char msg[512];
  int count;
  vic_status s = probe_quiet(c, &count, msg, sizeof msg);
  return s == VIC_OK ? VIC_OK : vic__fail(c, s, "%s", msg);
}

vic_status vic__cuda_devices(vic_ctx *c, int *first, int *count) {
  char msg[512];
  vic_status s = probe_quiet(c, count, msg, sizeof msg);
  *first = c->opt.device;
  return s == VIC_OK ? VIC_OK : vic__fail(c, s, "%s", msg);
}

int vic_cuda_available(vic_ctx *c) {
  if (!c) return 0;
  char msg[512];
  int count;
  return probe_quiet(c, &count, msg, sizeof msg) == VIC_OK;
}

int vic__cuda_has_method(vic_method m) {
  switch (m) {
  case VIC_METHOD_BRUTE:
  case VIC_METHOD_GRID:
  case VIC_METHOD_GNND:
  case VIC_METHOD_GGNN:
    return 1;
  /* VIC_CUDA_METHODS: each GPU method adds its case here */
  default:
    return 0;
  }
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
}

/* The graph methods take packed rows (vic__cuda_packed_rows: strided ones
 * are copied into *packed, freed by the caller); periodic boxes are refused
 * (no minimum image in their kernels). */
static int packed_rows(const vick_points *p, vick_call *call, const float **rows, float **packed) {
  *packed = NULL;
  if (p->box) {
    snprintf(call->message, sizeof call->message, "periodic boxes are not supported (use grid or brute)");
    return VICK_ARGUMENT;
  }
  const vic_data view = {p->rows, p->n, p->d, p->stride, VIC_L2, NULL, NULL};
  *rows = vic__cuda_packed_rows(&view, packed, call);
  return *rows ? VICK_OK : VICK_NOMEM;
}

/* GNND: the options' defaults resolved (k_build = max(k, 32) rounded up to
 * the 32-entry segments), strided rows packed, periodic boxes refused. */
static int run_gnnd(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                    vick_call *call) {
  int32_t kb = o->gnnd.k_build > 0 ? o->gnnd.k_build : 32;
  if (kb < k) kb = k;
  vick_gnnd_params q = {(kb + 31) / 32 * 32, o->gnnd.samples, o->gnnd.iterations, o->gnnd.converge, o->shard_size, 0};
  const float *rows;
  float *packed = NULL;
  int rc = packed_rows(p, call, &rows, &packed);
  if (rc != VICK_OK) return rc;
  rc = vick_gnnd_knn(call, rows, p->n, p->d, k, &q, ids, dist);
  free(packed);
  return rc;
}

/* GGNN: the search graph built with degree max(k_build, k), its for-all
 * lists (Sec. 6.2.4) returned as working (squared) distances like every
 * kernel; d_nn1 statistics go into the report by the caller's dnn1 pass. */
static int run_ggnn(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                    vick_call *call) {
  vick_ggnn_params q;
  vick_ggnn_params_init(&q);
  q.k = o->ggnn.k_build > k ? o->ggnn.k_build : k;
  q.segment = o->ggnn.segment;
  q.layers = o->ggnn.layers;
  q.refinements = o->ggnn.refinements;
  q.tau_build = o->ggnn.tau_build;
  q.deterministic = o->ggnn.deterministic;
  const float *rows;
  float *packed = NULL;
  int rc = packed_rows(p, call, &rows, &packed);
  if (rc != VICK_OK) return rc;
  vick_ggnn *g = NULL;
  rc = vick_ggnn_build(call, rows, p->n, p->d, &q, &g);
  free(packed);
  if (rc != VICK_OK) return rc;
  vick_call fc = *call;
  rc = vick_ggnn_forall(&fc, g, k, ids, dist);
  if (rc != VICK_OK) memcpy(call->message, fc.message, sizeof call->message);
  vick_ggnn_free(g);
  for (int64_t i = 0; rc == VICK_OK && i < p->n * (int64_t)k; ++i) dist[i] *= dist[i];
  return rc;
}

/* Run method m's kernels; returns a VICK_* code with call->message set. */
static int run_method(vic_ctx *c, const vick_points *p, const vic_build_options *o, vic_method m, int32_t k,
                      int64_t *ids, float *dist, vick_call *call) {
  (void)c;
  (void)o;
  switch (m) {
  case VIC_METHOD_BRUTE: return vick_brute_knn(call, p, k, ids, dist);
  case VIC_METHOD_GRID: return vick_grid_knn(call, p, k, ids, dist);
  case VIC_METHOD_GNND: return run_gnnd(p, o, k, ids, dist, call);
  case VIC_METHOD_GGNN: return run_ggnn(p, o, k, ids, dist, call);
  /* VIC_CUDA_METHODS: each GPU method adds its call here */
  default:
    snprintf(call->message, sizeof call->message, "method '%s' has no GPU implementation", vic_method_name(m));
    return VICK_ARGUMENT;
  }
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

static int method_max_k(vic_method m) {
  return (m == VIC_METHOD_BRUTE || m == VIC_METHOD_GRID) ? VICK_EXACT_MAX_K : 0x7fffffff;
}

vic_status vic__cuda_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                         int64_t *ids, float *dist, vic_report *rep) {
  if (!vic__cuda_has_method(m))
    return vic__fail(c, VIC_E_UNSUPPORTED, "method '%s' has no GPU implementation", vic_method_name(m));
  if (k > method_max_k(m))
    return vic__fail(c, VIC_E_UNSUPPORTED, "GPU %s supports k <= %d (got k = %d)", vic_method_name(m), method_max_k(m),
                     (int)k);
  if (x->n >= ((int64_t)1 << 31))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the GPU backend takes at most 2^31 - 1 points (got %lld)",
                     (long long)x->n);
  int first, count;
  vic_status s = vic__cuda_devices(c, &first, &count);
  if (s != VIC_OK) return s;
  vick_points p = {x->rows, x->n, x->d, x->stride ? x->stride : x->d,
                   x->metric == VIC_INNER_PRODUCT ? VICK_METRIC_IP : VICK_METRIC_L2, x->box};
  if (m == VIC_METHOD_GRID) { /* streamed, true distances already */
    const vic__lists dst = {8, ids, dist};
    return vic__cuda_grid_multi(c, &p, o, first, count, k, &dst, rep);
  }
  if (m == VIC_METHOD_GNND && !x->box) { /* beyond the device budget: out of core (knn_sharded.c) */
    int taken;
    s = vic__gnnd_out_of_core(c, x, o, k, ids, dist, rep, &taken);
    if (s != VIC_OK || taken) return s;
  }
  const int sharded = m == VIC_METHOD_GGNN && o->shard_size > 0 && x->n > o->shard_size;
  if (sharded) {
    if (x->box) {
      s = vic__fail(c, VIC_E_UNSUPPORTED, "GPU ggnn: periodic boxes are not supported (use grid or brute)");
    } else {
      s = vic__cuda_ggnn_forall_sharded(c, x, o, k, ids, dist, rep);
      /* Euclidean, as run_ggnn's lists: squared to the working distance */
      for (int64_t i = 0; s == VIC_OK && i < x->n * (int64_t)k; ++i) dist[i] *= dist[i];
    }
    if (s != VIC_OK) return s;
    vic__true_lists(c, x->metric, x->n, k, ids, dist);
    return VIC_OK;
  }

  vick_call call;
  vic__cuda_call_init(c, &call, first, o->device_memory_budget, 0);
  int rc = run_method(c, &p, o, m, k, ids, dist, &call);
  s = vic__cuda_translate(c, rc, &call, m);
  if (s != VIC_OK) return s;

  /* kernels return working distances; report true ones as the CPU does */
  vic__true_lists(c, x->metric, x->n, k, ids, dist);

  rep->seconds_transfer += call.seconds_transfer;
  rep->seconds_kernel += call.seconds_kernel;
  for (int i = 0; i < call.n_stages; ++i) vic__report_stage(rep, call.stages[i].name, call.stages[i].seconds);
  char dev[128] = "";
  vick_device_info(call.device, dev, sizeof dev, NULL, NULL);
  vic__log(c, VIC_LOG_INFO, "GPU %s on %s (device %d): %.3f s total, %.3f s kernels, %.3f s transfers",
           vic_method_name(m), dev, call.device, call.seconds_total, call.seconds_kernel, call.seconds_transfer);
  return VIC_OK;
}

/* ------------------------------------------------ shared with cuda_*.c */
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
