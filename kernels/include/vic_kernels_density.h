/* Densities from kNN lists on the GPU: the kNN estimator and the SPH
 * cubic spline, per particle, with the same formulas, double-precision
 * accumulation and summation order as the core's CPU code (density.c), so
 * that GPU and CPU densities agree to rounding.  The constants (unit-ball
 * volume, kernel normalisation, the smoothing-length convention and the
 * unit mass) come from the core, which owns the formulas' definitions;
 * the kernels only evaluate them.
 *
 * Per particle i with true neighbour distances r_0 <= ... <= r_{k-1} and
 * ids j_t (rk = r_{k-1}, rkd = rk^d, all in double):
 *   knn_density[i] = m / (vd * rkd),  m = sum_{t < k-1} mass[j_t]
 *                    (or (k - 1) * unit_mass without masses);
 *   sph_density[i] = (m_i w(0) + sum_{t < k-1} m_{j_t} w(r_t / rk)) * sigma / rkd;
 *   smoothing_length[i] = h_of_rk * rk. */
#ifndef VIC_KERNELS_DENSITY_H
#define VIC_KERNELS_DENSITY_H

#include "vic_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t d;          /* dimension of the space (the exponent of rk) */
  double unit_mass;   /* mass of every particle when mass == NULL */
  double vd;          /* volume of the unit ball in d dimensions */
  double sigma;       /* normalisation of the cubic spline of support 1 in d dimensions */
  double h_of_rk;     /* smoothing length over rk: 0.5 (pynbody) or 1 (Gadget) */
} vick_density_params;

/* Densities from host lists (n x k, ascending, true distances, full: the
 * caller has checked ids in [0, n) and rk > 0).  Only what the outputs
 * need travels: the k-th distance alone for the kNN density and the
 * smoothing length without masses, the ids only with masses, all
 * distances only for SPH.  Rows go in chunks that fit the memory budget.
 * mass: host, n floats, or NULL.  Outputs: host, n floats each, any NULL. */
int vick_density(vick_call *call, int64_t n, int32_t k, const int64_t *ids, const float *dist, const float *mass,
                 const vick_density_params *p, float *knn_density, float *sph_density, float *smoothing_length);

/* Exact grid kNN lists (as vick_grid_knn) and the densities from them in
 * one call: the lists stay on the device between the two.  The
 * distances are turned into true (Euclidean) distances on the device and
 * each row is ordered by (distance, id) as the CPU grid orders it, so the
 * lists equal the CPU grid's.
 * ids/dist (host, n*k) receive the lists when not NULL (true distances,
 * -1 / +inf where missing).  *bad_row receives the first row whose list
 * cannot give a density (a missing neighbour or rk = 0 from duplicates),
 * or -1; the densities of such rows are not meaningful and the caller
 * decides what to say. */
int vick_grid_knn_density(vick_call *call, const vick_points *x, int32_t k, const float *mass,
                          const vick_density_params *p, float *knn_density, float *sph_density,
                          float *smoothing_length, int64_t *ids, float *dist, int64_t *bad_row);

/* A slab's own rows' list ids (in the whole set) and the rows' ids,
 * kept on their device by vick_slab_density for the later passes of
 * density + peaks (vick_slab_links_kept, vick_slab_edges_kept) so that
 * those do not make them again; the distances, which only the links
 * read (one per row), go to the host instead (keep_dist), so that a
 * device keeps twice the slabs.  vick_slab_lists_bytes: the device bytes
 * they hold (n_own * (4 k + 4)). */
typedef struct vick_slab_lists vick_slab_lists;
size_t vick_slab_lists_bytes(int64_t n_own, int32_t k);
void vick_slab_lists_free(vick_slab_lists *l); /* NULL is fine */
/* Parked lists wait in host memory (vick_slab_lists_park: their device
 * memory given back, for a step that needs it between two passes) until
 * vick_slab_lists_unpark puts them on their device again (the call's
 * device, under its budget); a failure leaves them where they were.  The
 * kept-list calls take unparked lists only. */
int vick_slab_lists_park(vick_call *call, vick_slab_lists *l);
int vick_slab_lists_unpark(vick_call *call, vick_slab_lists *l);
int vick_slab_lists_parked(const vick_slab_lists *l);

/* One slab of a set too large for the device: x holds the slab's own
 * points (rows [0, n_own)) and a halo around them; key_ids (n entries)
 * their ids in the whole set of n_all (< 2^31) points, so that the lists
 * (ids in the whole set, true distances, ordered by (distance, id)) equal
 * the whole set's wherever the halo holds the true neighbours -- the
 * caller checks that with rk.  mass: n_all entries by id, or NULL.
 * Outputs for the own rows: rk (required, the k-th distances), the
 * densities (any NULL), ids / dist (n_own*k, or NULL; with row_of, the
 * whole set's n_all*k arrays, own row r going to row row_of[r]).  *bad_row: the
 * first own row whose list cannot give a density, or -1.  keep: NULL,
 * or *keep receives the own rows' list ids left on the device (NULL when
 * *bad_row >= 0 or on failure), and keep_dist (host, n_own*k, own row r
 * at r*k; or NULL where dist has them) their distances. */
int vick_slab_density(vick_call *call, const vick_points *x, int32_t k, int64_t n_own, const uint32_t *key_ids,
                      int64_t n_all, const float *mass, const vick_density_params *p, float *knn_density,
                      float *sph_density, float *smoothing_length, float *rk, int32_t *ids, float *dist,
                      const int64_t *row_of, int64_t *bad_row, vick_slab_lists **keep, float *keep_dist);

#ifdef __cplusplus
}
#endif
#endif
