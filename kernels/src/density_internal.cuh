/* The fused grid + densities for kernel files that go on working on the
 * device (peaks.cu): lists, densities and optionally the sorted grid stay
 * in device buffers. */
#ifndef VICK_DENSITY_INTERNAL_CUH
#define VICK_DENSITY_INTERNAL_CUH

#include "grid_internal.cuh"
#include "vic_kernels_density.h"

typedef struct {
  vick_buf ids, dist;  /* rows x k: int32 ids, true distances */
  vick_buf mass;       /* n_all floats when masses were given */
  vick_buf knn, sph, h;
  vick_buf self;       /* a slab's rows: their ids in the whole set (with masses) */
} vick_density_dev;

/* A slab's lists kept on its device (vic_kernels_density.h): rows x k
 * int32 ids (their distances went to the host), the rows' ids in the
 * whole set. */
struct vick_slab_lists {
  int device;
  int64_t rows;
  int32_t k;
  void *ids, *self;
  void *host_ids, *host_self; /* while parked (vick_slab_lists_park): ids, self NULL */
};

/* As vick_grid_knn_density, leaving everything in out (buffers of env,
 * freed by vick_density_dev_free) and the grid in *keep when not NULL.
 * rows (NULL: all of x): a slab of a set of n_all points (mass, when
 * given, has n_all entries, by id in that set), whose lists and
 * densities are those of rows [q0, q1) of x.  With *bad_row >= 0 (a row
 * of the slab) the densities are not computed. */
int vick_grid_density_dev(vick_call *call, vick_env *env, const vick_points *x, int32_t k, const vick_grid_rows *rows,
                          int64_t n_all, const float *mass, const vick_density_params *p, int want_knn, int want_sph,
                          int want_h, vick_density_dev *out, vick_grid_dev *keep, int64_t *bad_row);
void vick_density_dev_free(vick_env *env, vick_density_dev *d);

#endif
