/* vic_knn_add, vic_knn_merge and vic_knn_build_sharded on the GPU (GNND
 * and GGM), every device of the machine for the sharded build: recall
 * against exact GPU brute force, ids, bad input, cancel, resume, corrupt
 * work file (core/ggm_cases.h).  VIC_TEST_SMALL: the compute-sanitizer
 * size. */
#include "../core/ggm_cases.h"

int main(void) {
  vic_ctx *probe = vt_ctx(VIC_BACKEND_AUTO, 1);
  if (!vic_cuda_available(probe)) { vic_ctx_destroy(probe); vt_skip("no CUDA device"); }
  vic_ctx_destroy(probe);
  const int small = getenv("VIC_TEST_SMALL") != NULL;
  ggm_case t = {VIC_BACKEND_CUDA, VIC_DEVICES_ALL, small ? 3000 : 30000, 32, 10, small ? 0.9 : 0.95, "gpu_test_ggm"};
  float *rows = vt_clusters(t.n, t.d, 24, 9);
  vic_knn exact = {0};
  gc_exact(&t, rows, &exact);
  gc_add_merge(&t, rows, &exact);
  gc_sharded(&t, rows, &exact);
  vic_knn_free(&exact);
  free(rows);
  return vt_finish("gpu_test_ggm");
}
