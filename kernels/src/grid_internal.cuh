/* The exact grid kNN for other kernel files that keep working on its
 * lists (density.cu), so the lists need not cross to the host and back. */
#ifndef VICK_GRID_INTERNAL_CUH
#define VICK_GRID_INTERNAL_CUH

#include "common.cuh"

/* As vick_grid_knn, but the lists stay in device buffers allocated under
 * env's budget and stream: ids (n*k int64) and dist (n*k float, squared
 * Euclidean working distances, +inf / id -1 where missing).  The caller
 * frees them with vick_buf_free(env, ...). */
int vick_grid_knn_dev(vick_call *call, vick_env *env, const vick_points *p, int32_t k, vick_buf *ids, vick_buf *dist);

#endif
