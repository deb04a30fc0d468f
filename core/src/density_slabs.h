/* Exact lists and densities of a set larger than a device's memory
 * budget, slab by slab (slab_plan.h), on one or several devices (one
 * host thread each).  CUDA builds only. */
#ifndef VIC_DENSITY_SLABS_H
#define VIC_DENSITY_SLABS_H

#include "internal.h"

typedef struct {
  int64_t slabs;        /* slabs cut */
  int64_t retried;      /* own rows answered again with a wider halo */
  size_t peak_bytes;    /* most device memory one slab run held */
  int devices;          /* devices used */
  double seconds_kernel, seconds_transfer; /* the slowest device's */
} vic_slab_stats;

/* x: validated, d <= 3, L2, 2 <= k < n < 2^31 - 1.  rk (n, required)
 * receives the k-th distances; knn / sph / h (n) the densities, any
 * NULL; ids (int32) / dist (n*k) the lists, or NULL.  budget: device
 * bytes per device.  *bad_row: the first row whose list cannot give a
 * density, or -1 (nothing else is meaningful then). */
vic_status vic__slab_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                             vic_sph_convention sph, size_t budget, float *knn, float *sph_density, float *h, float *rk,
                             int32_t *ids, float *dist, int64_t *bad_row, vic_slab_stats *st);

/* The device budget the density calls run under: the context's, or 90%
 * of device `device`'s free memory when 0. */
size_t vic__density_budget(vic_ctx *c, int device);

#endif
