/* Slab planning (slab_plan.h). */
#include "slab_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double vic__slab_coord(const vic_data *x, int64_t i, int j) {
  const int64_t stride = x->stride ? x->stride : x->d;
  const float v = x->rows[i * stride + j];
  const double L = x->box ? x->box[j] : 0;
  if (!(L > 0)) return v;
  /* as the grids wrap a stored coordinate (in double, to float) */
  double w = (double)v - L * floor((double)v / L);
  float f = (float)w;
  return f >= (float)L || f < 0.f ? 0.0 : (double)f;
}

#define SLAB_BINS 65536

vic_status vic__slab_plan_make(vic_ctx *c, const vic_data *x, int64_t n_slabs, vic_slab_plan *p) {
  memset(p, 0, sizeof *p);
  const int64_t n = x->n;
  const int d = x->d;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int j = 0; j < d; ++j) {
    double a = INFINITY, b = -INFINITY;
#pragma omp parallel for reduction(min : a) reduction(max : b)
    for (int64_t i = 0; i < n; ++i) {
      double v = vic__slab_coord(x, i, j);
      if (v < a) a = v;
      if (v > b) b = v;
    }
    lo[j] = a;
    hi[j] = b;
  }
  /* the widest open axis; periodic ones only when nothing else */
  int axis = -1;
  for (int j = 0; j < d; ++j)
    if (!(x->box && x->box[j] > 0) && (axis < 0 || hi[j] - lo[j] > hi[axis] - lo[axis])) axis = j;
  const int periodic = axis < 0;
  if (periodic) axis = 0;
  const double L = periodic ? x->box[0] : 0;
  const double a = periodic ? 0 : lo[axis], w = periodic ? L : hi[axis] - lo[axis];
  p->axis = axis;
  p->n_slabs = n_slabs;
  p->cut = vic__malloc(c, (size_t)(n_slabs + 1) * sizeof *p->cut, "slab cuts");
  int64_t *hist = p->cut ? vic__calloc(c, SLAB_BINS, sizeof *hist, "slab histogram") : NULL;
  if (!hist) { vic__slab_plan_free(p); return VIC_E_NOMEM; }
  if (w > 0) {
#pragma omp parallel
    {
      int64_t *mine = calloc(SLAB_BINS, sizeof *mine);
#pragma omp for
      for (int64_t i = 0; i < n; ++i) {
        if (!mine) continue;
        int64_t b = (int64_t)((vic__slab_coord(x, i, axis) - a) / w * SLAB_BINS);
        mine[b < 0 ? 0 : b >= SLAB_BINS ? SLAB_BINS - 1 : b]++;
      }
#pragma omp critical
      for (int b = 0; mine && b < SLAB_BINS; ++b) hist[b] += mine[b];
      free(mine);
    }
  }
  /* cut s at the first bin edge where the running count reaches s n / S */
  p->cut[0] = periodic ? 0 : -INFINITY;
  p->cut[n_slabs] = periodic ? L : INFINITY;
  int64_t run = 0, b = 0;
  for (int64_t s = 1; s < n_slabs; ++s) {
    const int64_t want = n * s / n_slabs;
    while (b < SLAB_BINS && run + hist[b] <= want) run += hist[b++];
    if (w > 0 && b < SLAB_BINS && run < want && hist[b] > 0 && want - run > hist[b] / 2) run += hist[b++];
    double cut = a + w * (double)b / SLAB_BINS;
    p->cut[s] = cut > p->cut[s - 1] ? cut : p->cut[s - 1];
  }
  free(hist);
  return VIC_OK;
}

void vic__slab_plan_free(vic_slab_plan *p) {
  free(p->cut);
  memset(p, 0, sizeof *p);
}

int64_t vic__slab_of(const vic_slab_plan *p, double v) {
  int64_t a = 0, b = p->n_slabs; /* the last s with cut[s] <= v */
  while (b - a > 1) {
    int64_t m = a + (b - a) / 2;
    if (p->cut[m] <= v) a = m; else b = m;
  }
  return a;
}

static void region_open(const vic_data *x, vic_region *r) {
  r->d = x->d;
  for (int j = 0; j < 3; ++j) {
    r->period[j] = j < x->d && x->box && x->box[j] > 0 ? x->box[j] : 0;
    r->lo[j] = -INFINITY;
    r->hi[j] = INFINITY;
  }
}

void vic__slab_region(const vic_data *x, const vic_slab_plan *p, int64_t s, double h, vic_region *r) {
  region_open(x, r);
  const int j = p->axis;
  r->lo[j] = p->cut[s] - h;
  r->hi[j] = p->cut[s + 1] + h;
  if (r->period[j] > 0 && r->hi[j] - r->lo[j] >= r->period[j]) { r->lo[j] = -INFINITY; r->hi[j] = INFINITY; }
}

/* Largest coordinate magnitude of row i: the scale of its rounding. */
static double row_scale(const vic_data *x, int64_t i) {
  double m = 0;
  for (int j = 0; j < x->d; ++j) m = fmax(m, fabs(vic__slab_coord(x, i, j)));
  return m;
}

void vic__ball_region(const vic_data *x, int64_t i, double rad, vic_region *out) {
  region_open(x, out);
  /* wide enough that the gap test of vic__region_exact passes for any
   * k-th distance up to rad */
  const double e = rad * (1 + 4 * VIC_SLAB_MARGIN) + row_scale(x, i) * 1e-6 + 1e-30;
  for (int j = 0; j < x->d; ++j) {
    const double v = vic__slab_coord(x, i, j);
    out->lo[j] = v - e;
    out->hi[j] = v + e;
    if (out->period[j] > 0 && 2 * e >= out->period[j]) { out->lo[j] = -INFINITY; out->hi[j] = INFINITY; }
  }
}

/* Arc [lo, hi) of a circle of length L as an offset from 0 in [0, L). */
static double arc_pos(double v, double lo, double L) {
  double u = fmod(v - lo, L);
  return u < 0 ? u + L : u;
}

void vic__region_union(vic_region *a, const vic_region *b) {
  for (int j = 0; j < a->d; ++j) {
    if (!isfinite(a->lo[j]) || !isfinite(b->lo[j])) { a->lo[j] = -INFINITY; a->hi[j] = INFINITY; continue; }
    const double L = a->period[j];
    if (L > 0) {
      /* the shorter of the two arcs that cover both */
      const double wa = a->hi[j] - a->lo[j], wb = b->hi[j] - b->lo[j];
      const double sb = arc_pos(b->lo[j], a->lo[j], L); /* b's start from a's */
      const double w1 = fmax(wa, sb + wb);               /* from a's start */
      const double sa = arc_pos(a->lo[j], b->lo[j], L);
      const double w2 = fmax(wb, sa + wa);               /* from b's start */
      if (w1 <= w2) a->hi[j] = a->lo[j] + w1;
      else { a->lo[j] = b->lo[j]; a->hi[j] = b->lo[j] + w2; }
      if (a->hi[j] - a->lo[j] >= L) { a->lo[j] = -INFINITY; a->hi[j] = INFINITY; }
    } else {
      if (b->lo[j] < a->lo[j]) a->lo[j] = b->lo[j];
      if (b->hi[j] > a->hi[j]) a->hi[j] = b->hi[j];
    }
  }
}

/* Row i's room inside r along axis j: *below from the low side, *above
 * to the high side (+inf on an open side); 0 when the axis is open all
 * round.  A side is open where its bound is infinite (the first and last
 * slabs' outer sides); a periodic axis is a whole circle unless both
 * bounds are finite. */
static int axis_room(const vic_region *r, const vic_data *x, int64_t i, int j, double *below, double *above) {
  const int lo_f = isfinite(r->lo[j]), hi_f = isfinite(r->hi[j]);
  if (!lo_f && !hi_f) return 0;
  if (r->period[j] > 0 && (!lo_f || !hi_f)) return 0;
  const double v = vic__slab_coord(x, i, j);
  if (r->period[j] > 0) {
    *below = arc_pos(v, r->lo[j], r->period[j]);
    *above = r->hi[j] - r->lo[j] - *below;
  } else {
    *below = lo_f ? v - r->lo[j] : INFINITY;
    *above = hi_f ? r->hi[j] - v : INFINITY;
  }
  return 1;
}

/* [lo, hi) on every bounded axis. */
int vic__region_holds(const vic_region *r, const vic_data *x, int64_t i) {
  for (int j = 0; j < r->d; ++j) {
    double below, above;
    if (axis_room(r, x, i, j, &below, &above) && (below < 0 || above <= 0)) return 0;
  }
  return 1;
}

double vic__region_gap(const vic_region *r, const vic_data *x, int64_t i) {
  double g = INFINITY;
  for (int j = 0; j < r->d; ++j) {
    double below, above;
    if (!axis_room(r, x, i, j, &below, &above)) continue;
    if (below < g) g = below;
    if (above < g) g = above;
  }
  return g;
}

int vic__region_exact(const vic_region *r, const vic_data *x, int64_t i, float rk) {
  const double g = vic__region_gap(r, x, i);
  if (!isfinite(g)) return 1;
  /* every point outside is at least g away along one axis; the float
   * distances of the lists may read a few ulps short of that */
  const double slack = row_scale(x, i) * 2.4e-7 + g * VIC_SLAB_MARGIN;
  return (double)rk < g - slack;
}

void vic__slab_split(const vic_data *x, const float *rk, const vic_region *reg, int axis, double mid, int64_t *rows,
                     int64_t n, int64_t *tmp, unsigned char *flags, int64_t *n_exact, int64_t *lo_n, vic_region *lo,
                     int64_t *hi_n, vic_region *hi) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < n; ++t) flags[t] = (unsigned char)vic__region_exact(reg, x, rows[t], rk[rows[t]]);
  int64_t a = 0;
  for (int64_t t = 0; t < n; ++t)
    if (flags[t]) tmp[a++] = rows[t];
  *n_exact = a;
  *lo_n = *hi_n = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t t = 0; t < n; ++t) {
      if (flags[t]) continue;
      const int64_t i = rows[t];
      const int low = isfinite(mid) && vic__slab_coord(x, i, axis) < mid;
      if (low != (pass == 0)) continue;
      vic_region b;
      vic__ball_region(x, i, rk[i], &b);
      vic_region *g = low ? lo : hi;
      int64_t *cnt = low ? lo_n : hi_n;
      if (*cnt == 0) *g = b; else vic__region_union(g, &b);
      ++*cnt;
      tmp[a++] = i;
    }
  memcpy(rows, tmp, (size_t)n * sizeof *rows);
}

size_t vic__slab_pass_bytes(int64_t n) {
  /* densities and labels by id (4 + 4), and the first device's run
   * held between the passes (densities, maxima numbers, order keys: 16) */
  return (size_t)n * 24;
}

/* The density order and basins' arrays: densities, basin pointers (x2),
 * flags, order keys (x2), ranks, maxima numbers, labels. */
static size_t basins_arrays_bytes(int64_t n) { return (size_t)n * (4 + 8 + 4 + 16 + 4 + 4 + 4); }

size_t vic__peaks_basins_bytes(int64_t n) { return basins_arrays_bytes(n) + ((size_t)16 << 20); }

size_t vic__peaks_links_bytes(int64_t n, int d) {
  /* the density order and basins (basins_arrays_bytes); then the maxima's
   * search: the grid of all points (rows, codes and order with their sort
   * buffers, sorted points), densities, maxima numbers, k-th distances,
   * (the grid's own check, with densities and maxima numbers held; the
   * density tree comes once the sort's buffers are gone); then rows,
   * densities, maxima numbers, parents, deltas, saliencies, climb
   * labels (x2), peak ids */
  const size_t basins = basins_arrays_bytes(n);
  const size_t search = (size_t)n * ((size_t)d * 4 + 16 + 8 + 16 + 4 + 4 + 1);
  const size_t finish = (size_t)n * ((size_t)d * 4 + 4 * 6 + 8 + 8);
  size_t b = basins > search ? basins : search;
  if (finish > b) b = finish;
  return b + ((size_t)16 << 20);
}

size_t vic__slab_bytes(int64_t indexed, int64_t own, int32_t k, int d) {
  /* per indexed point: rows, codes (x2 during the sort), order (x2),
   * sorted points, list ids and the sort's workspace; per own row: the
   * lists (int32 ids, floats), row selection, outputs */
  return (size_t)indexed * ((size_t)d * 4 + 16 + 8 + 16 + 12) + (size_t)own * ((size_t)k * 8 + 32) + ((size_t)8 << 20);
}

size_t vic__peaks_lists_bytes(int64_t n, int32_t k) {
  /* the grid (rows, codes, order, sorted points, its sort), densities,
   * parents, deltas, basins, flags, order keys (x2), ranks, maxima
   * numbers, edge counts and offsets; list chunks and boundary edges come
   * on top (about k / 4 edges per point at most in clustered data) */
  (void)k;
  return (size_t)n * (12 + 8 + 4 + 16 + 12 + 4 * 6 + 16 + 4 + 4 + 16) + ((size_t)16 << 20);
}

int64_t vic__slab_count(int64_t n, int32_t k, int d, size_t budget) {
  /* halos of about half a slab's own points, and half the budget left
   * for halos that must grow */
  const size_t fixed = (size_t)8 << 20;
  const size_t per_point = vic__slab_bytes(3, 2, k, d) - fixed;
  if (budget <= 2 * (fixed + per_point)) return 0;
  const size_t room = budget / 2 - fixed;
  int64_t s = (int64_t)(((size_t)n * per_point / 2 + room - 1) / room);
  return s < 2 ? 2 : s;
}

size_t vic__in_core_bytes(int64_t n, int32_t k, int d, int peaks) {
  /* the grid run (rows, codes and order with their sort buffers, sorted
   * points, lists), the densities, and for the peaks the per-point steps
   * and the boundary edges (an eighth of the list entries) */
  size_t b = (size_t)n * ((size_t)d * 4 + 48 + 4 + 12 + (size_t)k * 8);
  if (peaks) b += (size_t)n * (80 + (size_t)k * 4);
  return b + ((size_t)16 << 20);
}
