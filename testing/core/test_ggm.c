/* vic_knn_add, vic_knn_merge and vic_knn_build_sharded on the CPU
 * (NN-Descent steps): recall, ids, bad input, cancel, resume, corrupt work
 * file (ggm_cases.h). */
#include "ggm_cases.h"

int main(void) {
  const int small = vt_small();
  ggm_case t = {VIC_BACKEND_CPU, 1, small ? 1200 : 3000, 16, 10, 0.9, "test_ggm"};
  float *rows = vt_clusters(t.n, t.d, 12, 5);
  vic_knn exact = {0};
  gc_exact(&t, rows, &exact);
  gc_add_merge(&t, rows, &exact);
  gc_sharded(&t, rows, &exact);
  vic_knn_free(&exact);
  free(rows);
  return vt_finish("test_ggm");
}
