/* The GPU kNN lists of brute force, GNND and GGNN in a CUDA build (the
 * method table's gpu_lists): each method's kernels called on the context's
 * device, working distances made true, times into the report.  Policy
 * (fallbacks, method choice) stays in knn_build.c; the kernels stay free
 * of it.  The streamed grid is in cuda_grid_multi.c, sharded GGNN and the GGNN
 * index in cuda_ggnn_index.c, what they all share in cuda_common.c.
 *
 * To add a GPU method: its run_fn and lists entry here (or in its own
 * file), pointed to by its record. */
#include "backend_cuda.h"
#include "cuda_internal.h"
#include "ggm_common.h"
#include "vic_kernels.h"
#include "vic_kernels_exact.h"
#include "vic_kernels_gnnd.h"
#include "vic_kernels_ggnn.h"

#include <stdio.h>
#include <string.h>

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

/* GNND: the options' defaults resolved (k_build = max(k, 64) rounded up to
 * the 32-entry segments), strided rows packed, periodic boxes refused. */
static int run_gnnd(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                    vick_call *call, const void *plan) {
  int32_t kb = o->gnnd.k_build > 0 ? o->gnnd.k_build : 64;
  if (kb < k) kb = k;
  vick_gnnd_params q = {(kb + 31) / 32 * 32, o->gnnd.samples, o->gnnd.iterations, o->gnnd.converge, o->shard_size, 0, 0};
  const vic_ggm_params *compact = (const vic_ggm_params *)plan;
  if (compact) { /* vic__gnnd_out_of_core's compact build */
    q.k_build = compact->K;
    q.samples = compact->samples;
    q.iterations = compact->iterations;
    q.shard_rows = 0;
    q.half_rows = 1;
  }
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
                    vick_call *call, const void *plan) {
  (void)plan;
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

/* One method's kernel call on packed or strided points; returns a VICK_*
 * code with call->message set.  plan: the method's own parameters where
 * the core chose them (GNND's compact build), else NULL. */
typedef int (*run_fn)(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                      vick_call *call, const void *plan);

static int run_brute(const vick_points *p, const vic_build_options *o, int32_t k, int64_t *ids, float *dist,
                     vick_call *call, const void *plan) {
  (void)o;
  (void)plan;
  return vick_brute_knn(call, p, k, ids, dist);
}

/* The checks every method's lists share, before any device work. */
static vic_status admit(vic_ctx *c, const vic_data *x, vic_method m, int32_t k, int32_t max_k, int *first, int *count) {
  if (k > max_k)
    return vic__fail(c, VIC_E_UNSUPPORTED, "GPU %s supports k <= %d (got k = %d)", vic_method_name(m), max_k, (int)k);
  if (x->n >= ((int64_t)1 << 31))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the GPU backend takes at most 2^31 - 1 points (got %lld)",
                     (long long)x->n);
  return vic__cuda_devices(c, first, count);
}

/* Method m's lists on the context's first device through run: true
 * distances, stage times in rep. */
static vic_status run_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                            int64_t *ids, float *dist, vic_report *rep, int first, run_fn run, const void *plan) {
  vick_points p = {x->rows, x->n, x->d, x->stride ? x->stride : x->d,
                   x->metric == VIC_INNER_PRODUCT ? VICK_METRIC_IP : VICK_METRIC_L2, x->box};
  vick_call call;
  vic__cuda_call_init(c, &call, first, o->device_memory_budget, 0);
  int rc = run(&p, o, k, ids, dist, &call, plan);
  vic_status s = vic__cuda_translate(c, rc, &call, m);
  if (s != VIC_OK) return s;

  /* kernels return working distances; report true ones as the CPU does */
  vic__true_lists(c, x->metric, x->n, k, ids, dist);

  vic__cuda_copy_stages(rep, &call);
  vic__kernel_log(c, &call, vic_method_name(m));
  return VIC_OK;
}

vic_status vic__cuda_brute_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                 int64_t *ids, float *dist, vic_report *rep) {
  int first, count;
  vic_status s = admit(c, x, m, k, VICK_EXACT_MAX_K, &first, &count);
  return s != VIC_OK ? s : run_lists(c, x, o, m, k, ids, dist, rep, first, run_brute, NULL);
}

vic_status vic__cuda_gnnd_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                int64_t *ids, float *dist, vic_report *rep) {
  int first, count;
  vic_status s = admit(c, x, m, k, 0x7fffffff, &first, &count);
  if (s != VIC_OK) return s;
  vic_ggm_params compact;
  compact.K = 0;
  if (!x->box && count > 1) { /* several devices: shards built in parallel, joined by cross searches */
    int taken;
    const double t = vic__now();
    s = vic__cuda_gnnd_multi(c, x, o, k, first, count, ids, dist, rep, &taken);
    if (s == VIC_E_NOMEM || s == VIC_E_DEVICE || s == VIC_E_UNSUPPORTED) {
      /* a device or the host ran short, or a device refused a step: the one-device builds may still run */
      vic__log(c, VIC_LOG_WARNING, "GNND over %d GPUs failed (%s); building on device %d alone", count,
               vic_ctx_error(c), first);
      if (taken) vic__report_stage(rep, "multi-GPU attempt (failed)", vic__now() - t);
      c->error[0] = '\0';
    } else if (s != VIC_OK || taken) {
      return s;
    }
  }
  if (!x->box) { /* beyond the device budget, or shard_size: half rows or out of core (knn_sharded.c) */
    int taken;
    s = vic__gnnd_out_of_core(c, x, o, k, ids, dist, rep, &taken, &compact, vic__cuda_gnnd_one_device);
    if (s != VIC_OK || taken) return s;
  }
  return run_lists(c, x, o, m, k, ids, dist, rep, first, run_gnnd, compact.K ? &compact : NULL);
}

/* GGNN: one graph, or shards (cuda_ggnn_index.c) when shard_size cuts n */
vic_status vic__cuda_ggnn_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                int64_t *ids, float *dist, vic_report *rep) {
  int first, count;
  vic_status s = admit(c, x, m, k, 0x7fffffff, &first, &count);
  if (s != VIC_OK) return s;
  if (!(o->shard_size > 0 && x->n > o->shard_size)) return run_lists(c, x, o, m, k, ids, dist, rep, first, run_ggnn, NULL);
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
