/* Density peaks on the device (the GPU side of vic_knn_density_peaks):
 * exact grid lists, densities and every per-point step of the core's
 * vic_peaks_find, with the lists kept on the device.  The kernels compute;
 * the core decides which local maxima are peaks, in three host steps
 * between the calls below:
 *
 *   vick_peaks_begin   grid lists, densities; per point the nearest and
 *                      the densest denser neighbour in its list; local
 *                      maxima (none of the list denser) and their nearest
 *                      denser point by exact search over the grid; the
 *                      densest point's largest distance; saliency; the
 *                      merge events of the prominence rule (below).
 *   (core)             prominence and thresholds -> peak candidates.
 *   vick_peaks_climb   members of each candidate: every point follows
 *                      its parents up to the first candidate (as often as
 *                      the core drops candidates).
 *   (core)             peak ranks.
 *   vick_peaks_finish  peak id per point, parents, deltas, saliency and
 *                      the sums behind the peak centres, to the host.
 *   vick_peaks_end     releases everything.
 *
 * "Denser" is the core's vic__denser: higher density, ties to the lower
 * id.  Maxima are numbered 0 .. m-1 in ascending point id.
 *
 * Merge events.  The core's prominence merge (prominence.c) visits the
 * points by descending density and, at each point i, the list neighbours
 * j denser than i in list order, merging the regions of i and j when they
 * differ.  A point's region is always that of the local maximum reached
 * by following the densest denser neighbour in the list (its basin), so
 * only edges whose two basins differ can change anything, and of those
 * only the first edge between each pair of basins in that visiting order:
 * a later edge between the same two basins has a lower density at the
 * saddle and regions whose maxima can only be denser, so it never merges
 * what the first left apart.  The events are those first edges, in the
 * visiting order: pair of maxima and the density of the point i. */
#ifndef VIC_KERNELS_PEAKS_H
#define VIC_KERNELS_PEAKS_H

#include "vic_kernels_density.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vick_peaks_run vick_peaks_run; /* device state between the calls */

/* What vick_peaks_begin hands the core (host arrays owned by the run,
 * valid until vick_peaks_end). */
typedef struct {
  int64_t n, m;               /* points, local maxima */
  int64_t top;                /* the densest point (no parent) */
  int64_t bad_row;            /* >= 0: that row's list cannot give a density; nothing else is filled */
  const int64_t *max_point;   /* m: point id of each maximum */
  const int64_t *max_parent;  /* m: its nearest denser point (-1 for top) */
  const float *max_rho;       /* m: its density */
  const float *max_delta;     /* m: distance to that parent (top: largest distance to any point) */
  const float *max_rk;        /* m: its k-th neighbour distance */
  const float *max_saliency;  /* m: rho * delta */
  int64_t n_events;
  const int32_t *event_a, *event_b; /* maxima of the two basins of each event */
  const float *event_rho;     /* density of the point where the basins meet */
  int64_t boundary_edges;     /* list edges between different basins, the first per point and basin (before keeping the first per pair) */
} vick_peaks_info;

/* x: d <= 3, L2; k >= 2; n < 2^31 - 1 (any n * k); densities as vick_grid_knn_density (mass may be
 * NULL); the peaks use the kNN density.  knn_density (required),
 * sph_density, smoothing_length: host outputs (n floats; the last two may
 * be NULL).  ids / dist: host n*k outputs for the lists, or NULL to leave
 * them on the device.  On VICK_OK *run must be released with
 * vick_peaks_end, also when info->bad_row >= 0. */
int vick_peaks_begin(vick_call *call, const vick_points *x, int32_t k, const float *mass,
                     const vick_density_params *p, float *knn_density, float *sph_density, float *smoothing_length,
                     int64_t *ids, float *dist, vick_peaks_run **run, vick_peaks_info *info);


/* A pass's per-point values by id in the whole set (rho, n_all; lab
 * too where not NULL), uploaded once to the call's device and held there
 * for every slab call of the pass on that device (the held argument of
 * the calls below, whose rho and lab may then be NULL; NULL: each call
 * uploads what it needs) --
 * the calls on kept lists would upload all n_all values each time.
 * vick_by_id_bytes: the device bytes held; vick_by_id_free: NULL is fine. */
typedef struct vick_by_id vick_by_id;
int vick_by_id_make(vick_call *call, int64_t n_all, const float *rho, const int32_t *lab, vick_by_id **out);
size_t vick_by_id_bytes(const vick_by_id *v);
void vick_by_id_free(vick_by_id *v);

/* Sets too large for one device (slab_peaks.cu), in three calls whose
 * lists stay on the devices: each slab's lists are made again where they
 * are consumed, and only per-point results cross to the host.
 *
 * vick_slab_links: one slab as vick_slab_density takes it (x = own rows
 * then halo, key_ids their ids in the set of n_all points, the lists
 * exact for every own row) with rho (x->n, by row of x) the densities of
 * its points.  Per own row (host, n_own each): parent, the nearest denser
 * list neighbour (-2: none, a local maximum), delta its distance, up the
 * densest denser list neighbour (the row's own id when none), is_max. */
int vick_slab_links(vick_call *call, const vick_points *x, int32_t k, int64_t n_own, const uint32_t *key_ids,
                    int64_t n_all, const float *rho, const vick_by_id *held, int32_t *parent, float *delta,
                    int32_t *up, int32_t *is_max);
/* vick_peaks_begin_links: the densities and links of all n points
 * (host, by id) into a run: density order, maxima (numbered in id order,
 * *n_max of them) and basins on the device.  Out (host, n each): lab,
 * the number of the maximum of each point's basin; rank, each point's
 * place in the density order.  Release with vick_peaks_end. */
int vick_peaks_begin_links(vick_call *call, int64_t n, int32_t k, const float *knn_density, const int32_t *up,
                           const int32_t *is_max, int32_t *lab, int32_t *rank, int64_t *n_max, vick_peaks_run **run);
/* vick_slab_edges: one slab as vick_slab_links, with lab (x->n, by row
 * of x) and rank (n_own) from vick_peaks_begin_links: the boundary edges
 * of the own rows and the first (smallest visiting position) of each
 * pair of basins among them: *count pairs (lower << 32 | higher maximum
 * number) and positions (rank * k + list place), in host arrays the
 * caller frees. */
int vick_slab_edges(vick_call *call, const vick_points *x, int32_t k, int64_t n_own, const uint32_t *key_ids,
                    int64_t n_all, const float *rho, const int32_t *lab, const vick_by_id *held,
                    const int32_t *rank, int64_t n_max, uint64_t **pair, uint64_t **pos, int64_t *count);
/* The same two steps from a slab's lists kept by vick_slab_density
 * (its own rows in the order it took them): rho and lab (n_all, host)
 * by id in the whole set; the outputs and rank (n_own) by own row.  The
 * kept lists hold no distances: instead of delta, col receives the place
 * of each row's parent in its list (-1: none), whose distance the caller
 * has (vick_slab_density's keep_dist).  An own row whose rank is
 * negative gives no edges (the caller answers it elsewhere); its links
 * are computed and left to the caller to ignore. */
int vick_slab_links_kept(vick_call *call, const vick_slab_lists *l, int64_t n_all, const float *rho,
                         const vick_by_id *held, int32_t *parent, int32_t *col, int32_t *up, int32_t *is_max);
int vick_slab_edges_kept(vick_call *call, const vick_slab_lists *l, int64_t n_all, const float *rho,
                         const int32_t *lab, const vick_by_id *held, const int32_t *rank, int64_t n_max,
                         uint64_t **pair, uint64_t **pos, int64_t *count);
/* vick_peaks_add_edges: every slab's first edges (count of them, a pair
 * may come from several slabs) into the merge events: info's n, m,
 * max_point, n_events, event_*, boundary_edges (the rest zero) -- enough
 * for the core's prominence, which may run on a host thread beside
 * vick_peaks_maxima.  vick_peaks_maxima (after it, same info): the
 * maxima's nearest denser points over the grid of all points x (rk: the
 * k-th distances, n), then the other points' links (parent, delta: host,
 * n each, as vick_slab_links gives them; read until it returns): the rest
 * of info as vick_peaks_begin fills it.  Then climb and finish as after
 * vick_peaks_begin.  vick_peaks_add_edges takes the run's device budget
 * again from call->memory_budget (the room the caller kept beside
 * vick_peaks_begin_links, the slabs' lists, is free by then). */
int vick_peaks_add_edges(vick_call *call, vick_peaks_run *run, const uint64_t *pair, const uint64_t *pos,
                         int64_t count, vick_peaks_info *info);
int vick_peaks_maxima(vick_call *call, vick_peaks_run *run, const vick_points *x, const float *rk,
                      const int32_t *parent, const float *delta, vick_peaks_info *info);
/* is_candidate: m flags.  members: m counts out, the number of points
 * whose climb ends at each maximum (0 for non-candidates).  The densest
 * point must be a candidate, so that every climb ends. */
int vick_peaks_climb(vick_call *call, vick_peaks_run *run, const unsigned char *is_candidate, int64_t *members);

/* After the last climb: rank: m entries, the peak index of each candidate
 * (any value for the others); peak_point: n_peaks point ids by rank;
 * core_fraction: a point counts towards its peak's centre when its
 * density is at least core_fraction times the peak's.  Outputs (host, n
 * each): parent (-1 for the densest), delta, saliency, peak_id; and per
 * peak the number of core points (core_count) and the sums over them of
 * their minimum-image offsets from the peak point, in double
 * (core_offset, n_peaks x d).  parent, delta or saliency NULL: not
 * copied (a slab run's caller makes them from its links and densities,
 * the maxima's from info). */
int vick_peaks_finish(vick_call *call, vick_peaks_run *run, const int64_t *rank, const int64_t *peak_point,
                      int64_t n_peaks, float core_fraction, int64_t *parent, float *delta, float *saliency,
                      int64_t *peak_id, int64_t *core_count, double *core_offset);

/* Releases the run (NULL is fine); returns rc unchanged. */
int vick_peaks_end(vick_call *call, vick_peaks_run *run, int rc);

#ifdef __cplusplus
}
#endif
#endif
