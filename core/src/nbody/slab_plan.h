/* Slabs: how a point set too large for one device's memory is cut for
 * the exact kNN, densities and peaks (density_slabs.c).  Plain host
 * code, tested on the CPU (testing/core/test_slab_plan.c).
 *
 * A slab owns the points whose coordinate along one axis lies in
 * [cut[s], cut[s+1]) (cuts at quantiles of that coordinate, so slabs hold
 * about n / S points).  The device indexes a region: a box that contains
 * the slab and a halo around it; the lists of the slab's points are exact
 * where each point's k-th distance is below its gap, the distance from
 * the point to the outside of the region (every point outside is then
 * strictly farther than the k-th neighbour: same lists, same ties, as
 * over all points).  Points that fail are answered again in boxes built
 * around their own k-th distance (an upper bound of the true one), which
 * then holds all their true neighbours. */
#ifndef VIC_SLAB_PLAN_H
#define VIC_SLAB_PLAN_H

#include "internal.h"

/* A box region: per dimension [lo, hi), +-inf for unbounded; periodic
 * dimensions (period > 0) are arcs of the circle, full when hi - lo >=
 * period (coordinates are compared wrapped into [0, period)). */
typedef struct {
  int32_t d;
  double lo[3], hi[3], period[3];
} vic_region;

typedef struct {
  int axis;          /* the cut dimension */
  int64_t n_slabs;
  double *cut;       /* n_slabs + 1: slab s owns [cut[s], cut[s+1]); cut[0] / cut[S] unbounded or 0 / period */
} vic_slab_plan;

/* Relative margin of the gap test: float distances carry a few ulps. */
#define VIC_SLAB_MARGIN 1e-5

/* The coordinate of a row as the grids store it (periodic axes wrapped). */
double vic__slab_coord(const vic_data *x, int64_t i, int j);

/* The distance from point a to its neighbour b exactly as the grids put
 * it in a's list (slab_list_dist.c): the minimum-image differences of the
 * stored coordinates (cpu_grid.c scan_range, grid.cu grid_dist), their
 * squares summed in float axis by axis, a correctly rounded sqrt
 * (cpu_grid.c finish_row, density.cu true_dist_kernel) -- each step one
 * IEEE operation in both, so the list's own float, bit for bit. */
float vic__slab_list_dist(const vic_data *x, int64_t a, int64_t b);

/* Cut x into n_slabs slabs along its widest open axis (axis 0 when all
 * are periodic): equal counts up to the resolution of a fine histogram.
 * VIC_E_NOMEM on failure; vic__slab_plan_free releases. */
vic_status vic__slab_plan_make(vic_ctx *c, const vic_data *x, int64_t n_slabs, vic_slab_plan *p);
void vic__slab_plan_free(vic_slab_plan *p);
/* The slab owning coordinate v along the plan's axis. */
int64_t vic__slab_of(const vic_slab_plan *p, double v);

/* Slab s and a halo of width h along the axis (unbounded elsewhere). */
void vic__slab_region(const vic_data *x, const vic_slab_plan *p, int64_t s, double h, vic_region *r);
/* Box of half-width r around row i (its ball), grown by the margin. */
void vic__ball_region(const vic_data *x, int64_t i, double r, vic_region *out);
/* Smallest region holding both. */
void vic__region_union(vic_region *a, const vic_region *b);
int vic__region_holds(const vic_region *r, const vic_data *x, int64_t i);
/* Distance from row i (inside r) to the outside of r; +inf when r is
 * unbounded all round. */
double vic__region_gap(const vic_region *r, const vic_data *x, int64_t i);
/* Does a k-th distance rk of row i prove its list exact in r? */
int vic__region_exact(const vic_region *r, const vic_data *x, int64_t i, float rk);

/* A task of a pass whose k-th distances rk (by id) are known: rows[0, n)
 * reordered so that those reg proves exact come first (*n_exact), then
 * the others below mid along the axis (*lo_n, in a region *lo holding
 * their k-th-distance balls), then those above (*hi_n, *hi).  tmp (n)
 * and flags (n) are scratch. */
void vic__slab_split(const vic_data *x, const float *rk, const vic_region *reg, int axis, double mid, int64_t *rows,
                     int64_t n, int64_t *tmp, unsigned char *flags, int64_t *n_exact, int64_t *lo_n, vic_region *lo,
                     int64_t *hi_n, vic_region *hi);

/* The listed rows' coordinates packed into p (d floats each) and their ids
 * into ids, by `threads` threads: the own rows that start every gather. */
void vic__slab_rows_copy(const vic_data *x, const int64_t *rows, int64_t n_rows, int threads, float *p, uint32_t *ids);

/* Where a slab gather reads the points (slab_gather.c): the ids bucketed
 * by slab (slab s owns order[start[s] .. start[s+1]), ascending ids) and,
 * where it could be made, xs: the rows in that order (row t is point
 * order[t], d packed floats); NULL: the gathers read x by id. */
typedef struct {
  const vic_data *x;
  const float *xs;
  const int64_t *start, *order;
} vic_slab_source;
/* The ids bucketed by slab: start (S + 1), order (n), ascending ids in
 * each slab (a counting sort over blocks of ids by all host threads,
 * each block's points of a slab written after the earlier blocks'), and
 * where xs (n d floats) is not NULL the rows in that order, written as
 * x is read; -1 without host memory. */
int vic__slab_bucket(const vic_data *x, const vic_slab_plan *p, int64_t *start, int64_t *order, float *xs);
/* A counting sort's places: count[b * keys + s] (part b's items of key s)
 * becomes part b's first place in key s's run, keys in order, parts in
 * order within a key; start (keys + 1) the runs' bounds. */
void vic__slab_offsets(int64_t *count, int64_t parts, int64_t keys, int64_t *start);
/* Own rows (rows, in that order) then every other point of slabs s_lo ..
 * s_hi inside r, not flagged in is_row, in bucket order, packed, with
 * their ids (host arrays to free); -1 without host memory.  own >= 0:
 * the rows are exactly slab own's ids in bucket order and is_row flags
 * those only (read then as such, not looked up). */
int vic__slab_gather(const vic_slab_source *src, const vic_region *r, const int64_t *rows, int64_t n_rows,
                     int64_t s_lo, int64_t s_hi, int64_t own, const unsigned char *is_row, int threads, float **pts,
                     uint32_t **gid, int64_t *n_out);

/* Rows that no slab's region proved exact, grouped by position for
 * regions of their own (slab_groups.c): each group's region is the
 * union of its rows' k-th-distance balls (rk by id, upper bounds), so it
 * holds every point within each row's rk, however the rows are grouped.
 * Starting from one group of all L rows, count(reg, n_reg, points, user)
 * gives the points inside each waiting region (all counted at once),
 * fits(points, rows, user) says whether a group's call fits a device,
 * and a group that does not fit is halved at the median of its rows'
 * positions along their widest dimension (a k-d split), so that groups
 * of rows in different tails get regions apart.  On success rows is
 * reordered into the groups rows[off[g], off[g+1]) with regions reg[g]
 * (off: max_groups + 1, reg: max_groups) and the group count is
 * returned; 0 when a group of one row does not fit or more than
 * max_groups would be needed; -1 without host memory.  *most: the most
 * points a group's region holds (of the last regions counted). */
typedef void (*vic_group_count)(const vic_region *reg, int n_reg, int64_t *points, void *user);
typedef int (*vic_group_fits)(int64_t points, int64_t rows, void *user);
int vic__leftover_groups(const vic_data *x, const float *rk, int64_t *rows, int64_t L, int max_groups,
                         vic_group_count count, vic_group_fits fits, void *user, int64_t *off, vic_region *reg,
                         int64_t *most);

/* A coarse grid over the whole set (slab_cells.c): per bins along each
 * dimension, cut at quantiles of an even sample of the rows (coordinates
 * as vic__slab_coord gives them), every id listed cell by cell (cell
 * (a, b, c) = (a per + b) per + c), ascending within a cell.  The
 * leftover rows' regions find their points among the cells they meet. */
typedef struct {
  int d;
  int64_t per, cells;
  double *cut;    /* d (per - 1): bin b of dimension j is [cut[j (per-1) + b-1], cut[j (per-1) + b]) */
  int64_t *start; /* cells + 1 */
  int64_t *order; /* n ids */
} vic_slab_cells;
/* At most max_cells cells (about 64 points a cell or more); -1 without
 * host memory (or d outside 1..3). */
int vic__slab_cells_make(const vic_data *x, int64_t max_cells, vic_slab_cells *g);
void vic__slab_cells_free(vic_slab_cells *g);
/* Points of the cells a region meets: at least the points inside it. */
int64_t vic__slab_cells_bound(const vic_slab_cells *g, const vic_region *r);
/* Own rows (rows, in that order) then every other point inside r (not
 * flagged in is_row), packed, with their ids (host arrays to free); -1
 * without host memory. */
int vic__slab_cells_gather(const vic_slab_cells *g, const vic_data *x, const vic_region *r, const int64_t *rows,
                           int64_t n_rows, const unsigned char *is_row, int threads, float **pts, uint32_t **gid,
                           int64_t *n_out);

/* Device bytes of a slab run: per indexed point, per own row (lists and
 * outputs), and the in-core estimate for density + peaks of n points. */
size_t vic__slab_bytes(int64_t indexed, int64_t own, int32_t k, int d);
size_t vic__peaks_lists_bytes(int64_t n, int32_t k);
/* Device bytes a later pass of a slab adds to vic__slab_bytes: densities
 * and basin labels by id over all n points of the set, and the first
 * device's run held between the passes. */
size_t vic__slab_pass_bytes(int64_t n);
/* Device bytes of the per-point steps of density + peaks after the slabs
 * (vick_peaks_begin_links, vick_peaks_add_edges) for n points, the
 * slabs' first edges aside. */
size_t vic__peaks_links_bytes(int64_t n, int d);
/* The part of those bytes the density order and basins take
 * (vick_peaks_begin_links), while the slabs' lists are still kept for
 * the edges pass; the maxima's search comes after them. */
size_t vic__peaks_basins_bytes(int64_t n);
/* Device bytes of the in-core run of n points (densities, or densities
 * and peaks): more than the budget sends the call to the slabs. */
size_t vic__in_core_bytes(int64_t n, int32_t k, int d, int peaks);
/* Slabs for n points under a budget (at least 2), 0 when even one point
 * per slab does not fit. */
int64_t vic__slab_count(int64_t n, int32_t k, int d, size_t budget);

#endif
