/* The core's side of the GPU backend in a CUDA build: probes the device,
 * says which methods the GPU implements, calls the kernels library and
 * turns its codes and messages into vic_status and the context's error.
 * Policy (fallbacks, method choice) stays in knn_build.c; the kernels stay
 * free of it.
 *
 * To add a GPU method: include its kernels header, add its case to
 * vic__cuda_has_method and to run_method below. */
#include "backend_cuda.h"
#include "vic_kernels.h"
#include "vic_kernels_exact.h"
#include "vic_kernels_gnnd.h"
#include "vic_kernels_ggnn.h"

#include <stdio.h>
#include <string.h>

/* Check the context's device without touching the context's error:
 * VIC_OK, or VIC_E_NODEVICE with the reason in msg. */
static vic_status probe_quiet(const vic_ctx *c, char *msg, size_t size) {
  char why[256];
  int count = vick_device_count(why, sizeof why);
  if (count < 0) {
    snprintf(msg, size, "the CUDA runtime cannot be used on this machine: %s", why);
    return VIC_E_NODEVICE;
  }
  if (count == 0) {
    snprintf(msg, size, "no CUDA device found%s%s", why[0] ? ": " : "", why);
    return VIC_E_NODEVICE;
  }
  if (c->opt.device < 0 || c->opt.device >= count) {
    snprintf(msg, size, "CUDA device %d was requested but this machine has %d device%s (0..%d)", c->opt.device, count,
             count == 1 ? "" : "s", count - 1);
    return VIC_E_NODEVICE;
  }
  return VIC_OK;
}

vic_status vic__cuda_probe(vic_ctx *c) {
  char msg[512];
  vic_status s = probe_quiet(c, msg, sizeof msg);
  return s == VIC_OK ? VIC_OK : vic__fail(c, s, "%s", msg);
}

int vic_cuda_available(vic_ctx *c) {
  if (!c) return 0;
  char msg[512];
  return probe_quiet(c, msg, sizeof msg) == VIC_OK;
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

/* GNND: the options' defaults resolved (k_build = max(k, 32) rounded up to
 * the 32-entry segments), strided rows packed, periodic boxes refused. */
static int run_gnnd(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                    vick_call *call) {
  if (p->box) {
    snprintf(call->message, sizeof call->message, "periodic boxes are not supported (use grid or brute)");
    return VICK_ARGUMENT;
  }
  int32_t kb = o->gnnd.k_build > 0 ? o->gnnd.k_build : 32;
  if (kb < k) kb = k;
  vick_gnnd_params q = {(kb + 31) / 32 * 32, o->gnnd.samples, o->gnnd.iterations, o->gnnd.converge, o->shard_size, 0};
  const float *rows = p->rows;
  float *packed = NULL;
  if (p->stride != p->d) {
    packed = malloc((size_t)p->n * (size_t)p->d * sizeof(float));
    if (!packed) {
      snprintf(call->message, sizeof call->message, "no host memory to pack strided rows");
      return VICK_NOMEM;
    }
    for (int64_t i = 0; i < p->n; ++i) memcpy(packed + i * p->d, p->rows + i * p->stride, (size_t)p->d * sizeof(float));
    rows = packed;
  }
  int rc = vick_gnnd_knn(call, rows, p->n, p->d, k, &q, ids, dist);
  free(packed);
  return rc;
}

/* GGNN: the search graph built with degree max(k_build, k), its for-all
 * lists (Sec. 6.2.4) returned as working (squared) distances like every
 * kernel; d_nn1 statistics go into the report by the caller's dnn1 pass. */
static int run_ggnn(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                    vick_call *call) {
  if (p->box) {
    snprintf(call->message, sizeof call->message, "periodic boxes are not supported (use grid or brute)");
    return VICK_ARGUMENT;
  }
  vick_ggnn_params q;
  vick_ggnn_params_init(&q);
  q.k = o->ggnn.k_build > k ? o->ggnn.k_build : k;
  q.segment = o->ggnn.segment;
  q.layers = o->ggnn.layers;
  q.refinements = o->ggnn.refinements;
  q.tau_build = o->ggnn.tau_build;
  const float *rows = p->rows;
  float *packed = NULL;
  if (p->stride != p->d) {
    packed = malloc((size_t)p->n * (size_t)p->d * sizeof(float));
    if (!packed) {
      snprintf(call->message, sizeof call->message, "no host memory to pack strided rows");
      return VICK_NOMEM;
    }
    for (int64_t i = 0; i < p->n; ++i) memcpy(packed + i * p->d, p->rows + i * p->stride, (size_t)p->d * sizeof(float));
    rows = packed;
  }
  vick_ggnn *g = NULL;
  int rc = vick_ggnn_build(call, rows, p->n, p->d, &q, &g);
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

/* A vick code as the context's status and message. */
static vic_status translate(vic_ctx *c, int rc, const vick_call *call, vic_method m) {
  const char *name = vic_method_name(m);
  switch (rc) {
  case VICK_OK: return VIC_OK;
  case VICK_NOMEM: return vic__fail(c, VIC_E_NOMEM, "GPU %s ran out of device memory: %s", name, call->message);
  case VICK_CANCELLED:
    /* vic__progress already worded it when the caller cancelled */
    if (vic__cancelled(c) && c->error[0]) return VIC_E_CANCELLED;
    return vic__fail(c, VIC_E_CANCELLED, "GPU %s: %s", name, call->message);
  case VICK_ARGUMENT: return vic__fail(c, VIC_E_UNSUPPORTED, "GPU %s: %s", name, call->message);
  case VICK_NODEVICE: return vic__fail(c, VIC_E_NODEVICE, "GPU %s: %s", name, call->message);
  default: return vic__fail(c, VIC_E_DEVICE, "GPU %s failed: %s", name, call->message);
  }
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
  vick_call call;
  memset(&call, 0, sizeof call);
  call.device = c->opt.device;
  call.memory_budget = o->device_memory_budget;
  call.seed = c->opt.seed;
  call.progress = poll_ctx;
  call.user = c;
  vick_points p = {x->rows, x->n, x->d, x->stride ? x->stride : x->d,
                   x->metric == VIC_INNER_PRODUCT ? VICK_METRIC_IP : VICK_METRIC_L2, x->box};

  int rc = run_method(c, &p, o, m, k, ids, dist, &call);
  vic_status s = translate(c, rc, &call, m);
  if (s != VIC_OK) return s;

  /* kernels return working distances; report true ones as the CPU does */
  int64_t total = x->n * (int64_t)k;
  for (int64_t i = 0; i < total; ++i) dist[i] = ids[i] < 0 ? INFINITY : vic__true_dist(x->metric, dist[i]);

  rep->seconds_transfer += call.seconds_transfer;
  rep->seconds_kernel += call.seconds_kernel;
  for (int i = 0; i < call.n_stages; ++i) vic__report_stage(rep, call.stages[i].name, call.stages[i].seconds);
  char dev[128] = "";
  vick_device_info(call.device, dev, sizeof dev, NULL, NULL);
  vic__log(c, VIC_LOG_INFO, "GPU %s on %s (device %d): %.3f s total, %.3f s kernels, %.3f s transfers",
           vic_method_name(m), dev, call.device, call.seconds_total, call.seconds_kernel, call.seconds_transfer);
  return VIC_OK;
}

/* ------------------------------------------------------- GGNN search index */
/* Rows as the kernels take them: packed row-major (a copy when strided). */
static const float *packed_rows(const vic_data *x, float **owned, vick_call *call) {
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

static void copy_stages(vic_report *rep, const vick_call *call) {
  rep->seconds_transfer += call->seconds_transfer;
  rep->seconds_kernel += call->seconds_kernel;
  for (int i = 0; i < call->n_stages; ++i) vic__report_stage(rep, call->stages[i].name, call->stages[i].seconds);
}

vic_status vic__cuda_ggnn_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, void **handle,
                                      vic_report *rep) {
  *handle = NULL;
  vic_status s = vic__cuda_probe(c);
  if (s != VIC_OK) return s;
  if (x->box) return vic__fail(c, VIC_E_UNSUPPORTED, "the GGNN index does not support periodic boxes (use grid or brute)");
  if (x->n >= ((int64_t)1 << 31))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the GGNN index takes at most 2^31 - 1 points (got %lld)", (long long)x->n);
  vick_call call;
  memset(&call, 0, sizeof call);
  call.device = c->opt.device;
  call.memory_budget = o->device_memory_budget;
  call.seed = c->opt.seed;
  call.progress = poll_ctx;
  call.user = c;
  vick_ggnn_params q;
  vick_ggnn_params_init(&q);
  if (o->ggnn.k_build > 0) q.k = o->ggnn.k_build;
  if (o->ggnn.segment > 0) q.segment = o->ggnn.segment;
  if (o->ggnn.layers > 0) q.layers = o->ggnn.layers;
  q.refinements = o->ggnn.refinements;
  q.tau_build = o->ggnn.tau_build;
  float *owned = NULL;
  const float *rows = packed_rows(x, &owned, &call);
  int rc = rows ? VICK_OK : VICK_NOMEM;
  vick_ggnn *g = NULL;
  if (rc == VICK_OK) rc = vick_ggnn_build(&call, rows, x->n, x->d, &q, &g);
  free(owned);
  if ((s = translate(c, rc, &call, VIC_METHOD_GGNN)) != VIC_OK) return s;
  vick_ggnn_info info;
  memset(&info, 0, sizeof info);
  vick_ggnn_info_get(g, &info);
  copy_stages(rep, &call);
  rep->method = VIC_METHOD_GGNN;
  rep->backend = VIC_BACKEND_CUDA;
  rep->k = info.k;
  /* d_nn1 is Euclidean in the prepared rows: the true distance for L2, the
   * chord for cosine (1 - cos = chord^2 / 2) */
  rep->dnn1_mean = x->metric == VIC_COSINE ? 0.5 * info.dnn1_mean * info.dnn1_mean : info.dnn1_mean;
  rep->dnn1_max = x->metric == VIC_COSINE ? 0.5 * info.dnn1_max * info.dnn1_max : info.dnn1_max;
  char dev[128] = "";
  vick_device_info(call.device, dev, sizeof dev, NULL, NULL);
  vic__log(c, VIC_LOG_INFO,
           "GPU GGNN index on %s (device %d): %.3f s, L = %d, g = %d, %lld upper points, %d entry points, %.1f MiB",
           dev, call.device, call.seconds_total, (int)info.layers, (int)info.growth, (long long)info.upper_points,
           (int)info.entry_points, info.device_bytes / 1048576.0);
  *handle = g;
  return VIC_OK;
}

vic_status vic__cuda_ggnn_index_search(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                       int32_t max_visits, int64_t *ids, float *dist, vic_report *rep) {
  vick_ggnn *g = (vick_ggnn *)handle;
  if (!g) return vic__fail(c, VIC_E_ARGUMENT, "GGNN index without its device graph");
  if (k > 256) return vic__fail(c, VIC_E_UNSUPPORTED, "GGNN index search supports k <= 256 (got k = %d)", (int)k);
  vick_call call;
  memset(&call, 0, sizeof call);
  call.device = c->opt.device;
  float *owned = NULL;
  const float *rows = packed_rows(q, &owned, &call);
  int rc = rows ? vick_ggnn_query(&call, g, rows, q->n, k, tau, max_visits, ids, dist) : VICK_NOMEM;
  free(owned);
  vic_status s = translate(c, rc, &call, VIC_METHOD_GGNN);
  if (s != VIC_OK) return s;
  /* Euclidean in the prepared rows: square to the working distance, then
   * the metric's true distance as everywhere else */
  for (int64_t i = 0; i < q->n * (int64_t)k; ++i)
    dist[i] = ids[i] < 0 ? INFINITY : vic__true_dist(q->metric, dist[i] * dist[i]);
  copy_stages(rep, &call);
  rep->backend = VIC_BACKEND_CUDA;
  return VIC_OK;
}

int64_t vic__cuda_ggnn_index_bytes(const void *handle) {
  vick_ggnn_info info;
  if (!handle || vick_ggnn_info_get((const vick_ggnn *)handle, &info) != VICK_OK) return 0;
  return (int64_t)info.device_bytes;
}

void vic__cuda_ggnn_index_free(void *handle) { vick_ggnn_free((vick_ggnn *)handle); }
