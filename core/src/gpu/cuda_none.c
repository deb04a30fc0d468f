/* The GPU backend of a build without CUDA: every request is answered with
 * a clear "not built with CUDA", so AUTO falls back to the CPU. */
#include "backend_cuda.h"

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
                                      vic_report *rep) {
  (void)x; (void)o; (void)rep;
  *handle = NULL;
  return vic__cuda_probe(c);
}

vic_status vic__cuda_ggnn_index_search(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                       int32_t max_visits, int64_t *ids, float *dist, vic_report *rep) {
  (void)handle; (void)q; (void)k; (void)tau; (void)max_visits; (void)ids; (void)dist; (void)rep;
  return vic__cuda_probe(c);
}

int64_t vic__cuda_ggnn_index_bytes(const void *handle) {
  (void)handle;
  return 0;
}

void vic__cuda_ggnn_index_free(void *handle) { (void)handle; }
