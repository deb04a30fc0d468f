/* The fused grid + densities for kernel files that go on working on the
 * device (peaks.cu): lists, densities and optionally the sorted grid stay
 * in device buffers. */
#ifndef VICK_DENSITY_INTERNAL_CUH
#define VICK_DENSITY_INTERNAL_CUH

#include "grid_internal.cuh"
#include "vic_kernels_density.h"

typedef struct {
  vick_buf ids, dist;  /* n x k, true distances */
  vick_buf mass;       /* n floats when masses were given */
  vick_buf knn, sph, h;
} vick_density_dev;

/* As vick_grid_knn_density, leaving everything in out (buffers of env,
 * freed by vick_density_dev_free) and the grid in *keep when not NULL.
 * With *bad_row >= 0 the densities are not computed. */
int vick_grid_density_dev(vick_call *call, vick_env *env, const vick_points *x, int32_t k, const float *mass,
                          const vick_density_params *p, int want_knn, int want_sph, int want_h, vick_density_dev *out,
                          vick_grid_dev *keep, int64_t *bad_row);
void vick_density_dev_free(vick_env *env, vick_density_dev *d);

#endif
