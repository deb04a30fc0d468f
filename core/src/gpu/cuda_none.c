/* The GPU backend of a build without CUDA: every request is answered with
 * a clear "not built with CUDA", so AUTO falls back to the CPU. */
#include "backend_cuda.h"

#include <stdio.h>

vic_status vic__cuda_probe(vic_ctx *c) {
  return vic__fail(c, VIC_E_NODEVICE, "this build of Vicinity has no CUDA backend (configure with VIC_CUDA=ON and nvcc)");
}

vic_status vic__cuda_gnnd_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                int64_t *ids, float *dist, vic_report *rep) {
  (void)x; (void)o; (void)m; (void)k; (void)ids; (void)dist; (void)rep;
  return vic__cuda_probe(c);
}

int vic_cuda_available(vic_ctx *c) {
  (void)c;
  return 0;
}

vic_status vic__cuda_ggnn_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, void **handle,
                                      vic_report *rep, int check_rows) {
  (void)o; (void)rep;
  *handle = NULL;
  if (check_rows) {
    vic_status s = vic_data_validate(c, x);
    if (s != VIC_OK) return s;
  }
  return vic__cuda_probe(c);
}

vic_status vic__cuda_ggnn_index_search(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                       int32_t max_visits, int64_t *ids, float *dist, vic_report *rep) {
  (void)handle; (void)q; (void)k; (void)tau; (void)max_visits; (void)ids; (void)dist; (void)rep;
  return vic__cuda_probe(c);
}

int vic__cuda_ggnn_index_fused(const void *handle, vic_metric metric, int64_t m, int32_t k) {
  (void)handle; (void)metric; (void)m; (void)k;
  return 0;
}

vic_status vic__cuda_ggnn_index_search_fused(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                             int32_t max_visits, int64_t *ids, float *dist, vic_report *rep) {
  (void)handle; (void)q; (void)k; (void)tau; (void)max_visits; (void)ids; (void)dist; (void)rep;
  return vic__cuda_probe(c);
}

int64_t vic__cuda_ggnn_index_bytes(const void *handle) {
  (void)handle;
  return 0;
}

void vic__cuda_ggnn_index_free(void *handle) { (void)handle; }

/* The graph-growing steps (ggm_engine.h): the CPU's run instead. */
#include "ggm_engine.h"

vic_status vic__ggm_gpu_build(vic_ctx *c, vic_ggm_step *st, const float *rows, int64_t n, int32_t d,
                              const vic_ggm_params *p, int32_t *ids, float *dist) {
  (void)c; (void)rows; (void)n; (void)d; (void)p; (void)ids; (void)dist;
  snprintf(st->message, sizeof st->message, "this build of Vicinity has no CUDA backend");
  return VIC_E_NODEVICE;
}

vic_status vic__ggm_gpu_merge(vic_ctx *c, vic_ggm_step *st, const float *rows1, int64_t n1, const float *rows2,
                              int64_t n2, int32_t d, const vic_ggm_params *p, const int32_t *ids1, const float *dist1,
                              const int32_t *ids2, const float *dist2, int32_t k, int32_t *out_ids, float *out_dist) {
  (void)c; (void)rows1; (void)n1; (void)rows2; (void)n2; (void)d; (void)p; (void)ids1; (void)dist1; (void)ids2;
  (void)dist2; (void)k; (void)out_ids; (void)out_dist;
  snprintf(st->message, sizeof st->message, "this build of Vicinity has no CUDA backend");
  return VIC_E_NODEVICE;
}

vic_status vic__ggm_gpu_add(vic_ctx *c, vic_ggm_step *st, const float *rows_old, int64_t n_old, const float *rows_new,
                            int64_t n_new, int32_t d, const int64_t *old_ids, int32_t k, const vic_add_plan *p,
                            int64_t *out_ids, float *out_dist) {
  (void)c; (void)rows_old; (void)n_old; (void)rows_new; (void)n_new; (void)d; (void)old_ids; (void)k; (void)p;
  (void)out_ids; (void)out_dist;
  snprintf(st->message, sizeof st->message, "this build of Vicinity has no CUDA backend");
  return VIC_E_NODEVICE;
}

vic_status vic__ggm_gpu_pairs_open(vic_ctx *c, vic_ggm_step *st, int64_t m, int32_t d, const vic_ggm_params *p,
                                   int32_t k, vic_ggm_pairs **out) {
  (void)c; (void)m; (void)d; (void)p; (void)k;
  *out = NULL;
  snprintf(st->message, sizeof st->message, "this build of Vicinity has no CUDA backend");
  return VIC_E_NODEVICE;
}
vic_status vic__ggm_gpu_pairs_merge(vic_ctx *c, vic_ggm_step *st, vic_ggm_pairs *w, const vic_ggm_params *p,
                                    const float *rows1, int64_t n1, const float *rows2, int64_t n2, const int32_t *ids1,
                                    const float *dist1, const int32_t *ids2, const float *dist2, int32_t k,
                                    int32_t *out_ids, float *out_dist) {
  (void)c; (void)w; (void)p; (void)rows1; (void)n1; (void)rows2; (void)n2; (void)ids1; (void)dist1; (void)ids2;
  (void)dist2; (void)k; (void)out_ids; (void)out_dist;
  snprintf(st->message, sizeof st->message, "this build of Vicinity has no CUDA backend");
  return VIC_E_NODEVICE;
}
void vic__ggm_gpu_pairs_close(vic_ggm_pairs *w) { (void)w; }
size_t vic__ggm_gpu_pair_bytes(int64_t m, int32_t d, const vic_ggm_params *p, int32_t k) {
  (void)m; (void)d; (void)p; (void)k;
  return 0;
}
size_t vic__ggm_gpu_build_bytes(int64_t n, int32_t d, const vic_ggm_params *p) { (void)n; (void)d; (void)p; return 0; }
size_t vic__ggm_gpu_compact_bytes(int64_t n, int32_t d, int32_t k, const vic_ggm_params *p) {
  (void)n; (void)d; (void)k; (void)p;
  return 0;
}

vic_status vic__ggm_gpu_devices(vic_ctx *c, int *first, int *count) {
  *first = 0;
  *count = 0;
  return vic__cuda_probe(c);
}
size_t vic__ggm_gpu_free_bytes(int device) { (void)device; return 0; }
