/* vic_knn_add, vic_knn_merge and vic_knn_build_sharded on the GPU (GNND
 * and GGM), every device of the machine for the sharded build: recall
 * against exact GPU brute force, ids, bad input, cancel, resume, corrupt
 * work file (core/ggm_cases.h).  VIC_TEST_SMALL: the compute-sanitizer
 * size. */
#include "../core/ggm_cases.h"

int main(int argc, char **argv) {
  const int small = vt_gpu_start(argc, argv);
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
