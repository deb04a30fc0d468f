/* Pieces of the device peaks pipeline (peaks.cu) that live in files of
 * their own. */
#ifndef VICK_PEAKS_INTERNAL_CUH
#define VICK_PEAKS_INTERNAL_CUH

#include "grid_internal.cuh"

/* For each of the m query points queries[q] (device ids, rk[q] its k-th
 * neighbour distance), the nearest point denser than it (rho by id on the
 * device; higher density, ties to the lower id) and the distance, into
 * parent[q] / delta[q] (device); the query `skip` (the densest point, or
 * -1) gets -1 and 0 without a search.  Synchronises env's stream. */
int vick_denser_search(vick_call *call, vick_env *env, const vick_grid_dev *gd, const float *rho,
                       const int32_t *queries, const float *rk, int64_t m, int32_t skip, int32_t *parent,
                       float *delta);

#endif
