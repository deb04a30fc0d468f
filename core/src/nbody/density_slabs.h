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

/* The slabs of one call, kept for several passes over them: the
 * densities (and lists, where asked), then for density + peaks the
 * passes that make each slab's lists again on its device and consume
 * them there (links, then boundary edges), so that no list crosses to
 * the host.  reserve: device bytes per device the later passes add to a
 * slab (vic__slab_pass_bytes), kept out of the slab count.  later: the
 * later passes will run -- the density pass then keeps the lists of the
 * rows it answers past their slab's first region (few, in the sparse
 * outskirts, whose regions are large) on the host, and the later passes
 * take those rows there. */
typedef struct vic_slabs vic_slabs;
vic_status vic__slabs_open(vic_ctx *c, const vic_data *x, int32_t k, size_t budget, size_t reserve, int later,
                           vic_slabs **out);
/* As vic__slab_density on the open slabs. */
vic_status vic__slabs_density(vic_slabs *z, const float *mass, double unit_mass, vic_sph_convention sph, float *knn,
                              float *sph_density, float *h, float *rk, int32_t *ids, float *dist, int64_t *bad_row);
/* rho, rk (n, by id): densities and k-th distances of every point.  Out
 * (n, by id): vick_slab_links' parent, delta, up, is_max. */
vic_status vic__slabs_links(vic_slabs *z, const float *rho, float *rk, int32_t *parent, float *delta, int32_t *up,
                            int32_t *is_max);
/* lab, rank (n, by id) from vick_peaks_begin_links, n_max maxima: every
 * slab's first edges (vick_slab_edges), *count of them in *pair / *pos
 * (the caller frees). */
vic_status vic__slabs_edges(vic_slabs *z, const float *rho, float *rk, const int32_t *lab, const int32_t *rank,
                            int64_t n_max, uint64_t **pair, uint64_t **pos, int64_t *count);
void vic__slabs_stats(const vic_slabs *z, vic_slab_stats *st);
/* Device bytes of the lists the slabs keep on the device of slot (0: the
 * first device) for the later passes; vic__slabs_release parks them on
 * the host (the last slabs' first; given back where the host has no room:
 * the later passes then make those lists again) until need bytes fit
 * beside them in the budget; the next pass puts them back. */
size_t vic__slabs_kept_bytes(const vic_slabs *z, int slot);
void vic__slabs_release(vic_slabs *z, int slot, size_t need);
void vic__slabs_close(vic_slabs *z);

/* The device budget the density calls run under: the context's, or 90%
 * of device `device`'s free memory when 0. */
size_t vic__density_budget(vic_ctx *c, int device);

#endif
