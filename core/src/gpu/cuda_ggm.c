/* The GPU side of the graph-growing steps (ggm_engine.h) in a CUDA build:
 * vick_gnnd_build and vick_gnnd_merge_blocks on one device, their codes and
 * messages kept in the step so that worker threads never write the
 * context. */
#include "cuda_internal.h"
#include "ggm_engine.h"
#include "vic_kernels_add.h"
#include "vic_kernels_ggm_pairs.h"
#include "vic_kernels_gnnd.h"

#include <stdio.h>
#include <string.h>

static vick_gnnd_params kparams(const vic_ggm_params *p) {
  vick_gnnd_params q = {p->K, p->samples, p->iterations, p->converge, 0, p->merge_iterations, 0};
  return q;
}

static vic_status finish(vic_ggm_step *st, const vick_call *call, int rc, const char *what) {
  st->seconds_kernel += call->seconds_kernel;
  st->seconds_transfer += call->seconds_transfer;
  if (call->peak_bytes > st->peak) st->peak = call->peak_bytes;
  if (st->stages && rc == VICK_OK)
    for (int i = 0; i < call->n_stages; ++i) vic__report_stage(st->stages, call->stages[i].name, call->stages[i].seconds);
  switch (rc) {
  case VICK_OK: return VIC_OK;
  case VICK_NOMEM:
    snprintf(st->message, sizeof st->message, "GPU %s ran out of device memory: %.400s", what, call->message);
    return VIC_E_NOMEM;
  case VICK_CANCELLED: snprintf(st->message, sizeof st->message, "GPU %s cancelled", what); return VIC_E_CANCELLED;
  case VICK_ARGUMENT:
    snprintf(st->message, sizeof st->message, "GPU %s: %.400s", what, call->message);
    return VIC_E_UNSUPPORTED;
  case VICK_NODEVICE:
    snprintf(st->message, sizeof st->message, "GPU %s: %.400s", what, call->message);
    return VIC_E_NODEVICE;
  default: snprintf(st->message, sizeof st->message, "GPU %s failed: %.400s", what, call->message); return VIC_E_DEVICE;
  }
}

vic_status vic__ggm_gpu_build(vic_ctx *c, vic_ggm_step *st, const float *rows, int64_t n, int32_t d,
                              const vic_ggm_params *p, int32_t *ids, float *dist) {
  vick_call call;
  vic__cuda_call_init(c, &call, st->device, 0, st->threaded);
  vick_gnnd_params q = kparams(p);
  vick_gnnd_graph g = {n, p->K, ids, dist};
  return finish(st, &call, vick_gnnd_build(&call, rows, n, d, &q, &g), "gnnd build");
}

vic_status vic__ggm_gpu_merge(vic_ctx *c, vic_ggm_step *st, const float *rows1, int64_t n1, const float *rows2,
                              int64_t n2, int32_t d, const vic_ggm_params *p, const int32_t *ids1, const float *dist1,
                              const int32_t *ids2, const float *dist2, int32_t k, int32_t *out_ids, float *out_dist) {
  vick_call call;
  vic__cuda_call_init(c, &call, st->device, 0, st->threaded);
  vick_gnnd_params q = kparams(p);
  vick_gnnd_graph g1 = {n1, p->K, (int32_t *)ids1, (float *)dist1};
  vick_gnnd_graph g2 = {n2, p->K, (int32_t *)ids2, (float *)dist2};
  vick_gnnd_graph out = {n1 + n2, k, out_ids, out_dist};
  return finish(st, &call, vick_gnnd_merge_blocks(&call, rows1, n1, rows2, n2, d, &q, &g1, &g2, &out), "ggm merge");
}

vic_status vic__ggm_gpu_add(vic_ctx *c, vic_ggm_step *st, const float *rows_old, int64_t n_old, const float *rows_new,
                            int64_t n_new, int32_t d, const int64_t *old_ids, int32_t k, const vic_add_plan *p,
                            int64_t *out_ids, float *out_dist) {
  vick_call call;
  vic__cuda_call_init(c, &call, st->device, st->budget, st->threaded);
  if (st->threads > 0) call.threads = st->threads;
  vick_add_params q = {p->width, p->degree, p->list, p->delta, p->reverse, p->join, p->refine, p->pivots, p->chunk};
  return finish(st, &call,
                vick_knn_add_search(&call, rows_old, n_old, rows_new, n_new, d, old_ids, k, &q, out_ids, out_dist),
                "add by graph search");
}

vic_status vic__ggm_gpu_pairs_open(vic_ctx *c, vic_ggm_step *st, int64_t m, int32_t d, const vic_ggm_params *p,
                                   int32_t k, vic_ggm_pairs **out) {
  vick_call call;
  vic__cuda_call_init(c, &call, st->device, 0, st->threaded);
  vick_gnnd_params q = kparams(p);
  vick_ggm_pairs *w = NULL;
  vic_status s = finish(st, &call, vick_ggm_pairs_open(&call, m, d, &q, k, &w), "ggm pair workspace");
  *out = (vic_ggm_pairs *)w;
  return s;
}

vic_status vic__ggm_gpu_pairs_merge(vic_ctx *c, vic_ggm_step *st, vic_ggm_pairs *w, const vic_ggm_params *p,
                                    const float *rows1, int64_t n1, const float *rows2, int64_t n2, const int32_t *ids1, const float *dist1,
                                    const int32_t *ids2, const float *dist2, int32_t k, int32_t *out_ids,
                                    float *out_dist) {
  vick_call call;
  vic__cuda_call_init(c, &call, st->device, 0, st->threaded);
  vick_gnnd_graph g1 = {n1, p->K, (int32_t *)ids1, (float *)dist1};
  vick_gnnd_graph g2 = {n2, p->K, (int32_t *)ids2, (float *)dist2};
  vick_gnnd_graph out = {n1 + n2, k, out_ids, out_dist};
  return finish(st, &call, vick_ggm_pairs_merge(&call, (vick_ggm_pairs *)w, rows1, n1, rows2, n2, &g1, &g2, &out),
                "ggm merge");
}

void vic__ggm_gpu_pairs_close(vic_ggm_pairs *w) { vick_ggm_pairs_close((vick_ggm_pairs *)w); }

size_t vic__ggm_gpu_pair_bytes(int64_t m, int32_t d, const vic_ggm_params *p, int32_t k) {
  vick_gnnd_params q = kparams(p);
  return vick_ggm_pairs_bytes(m, d, &q, k);
}

size_t vic__ggm_gpu_build_bytes(int64_t n, int32_t d, const vic_ggm_params *p) {
  vick_gnnd_params q = kparams(p);
  return vick_gnnd_bytes(n, d, &q, 0);
}

size_t vic__ggm_gpu_compact_bytes(int64_t n, int32_t d, int32_t k, const vic_ggm_params *p) {
  vick_gnnd_params q = kparams(p);
  q.half_rows = 1;
  return vick_gnnd_compact_bytes(n, d, k, &q);
}

vic_status vic__ggm_gpu_devices(vic_ctx *c, int *first, int *count) { return vic__cuda_devices(c, first, count); }

size_t vic__ggm_gpu_free_bytes(int device) {
  size_t free_b = 0, total_b = 0;
  char name[8];
  if (vick_device_info(device, name, sizeof name, &free_b, &total_b) != VICK_OK) return 0;
  return free_b;
}
