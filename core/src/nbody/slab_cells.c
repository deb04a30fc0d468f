/* A coarse grid of the whole set for the slabs' leftover rows (slab_plan.h):
 * bins at quantiles of each coordinate, every point's id listed cell by
 * cell, so that a region's points are found among the cells it meets
 * rather than among all the slabs it spans along the cut axis. */
#include "slab_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define CELLS_SAMPLE ((int64_t)1 << 20)

static int by_value(const void *a, const void *b) {
  const double p = *(const double *)a, q = *(const double *)b;
  return (p > q) - (p < q);
}

/* Bin of v along dimension j: the cuts at or below it (ascending cuts;
 * none for NaN).  Without branches on the comparisons: billions of
 * points, each an unpredictable path through the cuts. */
static int64_t bin_of(const vic_slab_cells *g, int j, double v) {
  const double *c = g->cut + (size_t)j * (size_t)(g->per - 1), *base = c;
  int64_t m = g->per - 1; /* the answer is in [base - c, base - c + m] */
  if (m == 0) return 0;
  while (m > 1) {
    const int64_t half = m / 2;
    base = base[half] <= v ? base + half : base;
    m -= half;
  }
  return (base - c) + (*base <= v);
}

static int64_t cell_of(const vic_slab_cells *g, const vic_data *x, int64_t i) {
  int64_t c = 0;
  for (int j = 0; j < g->d; ++j) c = c * g->per + bin_of(g, j, vic__slab_coord(x, i, j));
  return c;
}

void vic__slab_cells_free(vic_slab_cells *g) {
  free(g->cut);
  free(g->start);
  free(g->order);
  memset(g, 0, sizeof *g);
}

/* The ids listed cell by cell (g->start, g->order), ascending within a
 * cell: a counting sort, each thread over its own stretch of ids, whose
 * counts per cell of every thread place its ids after the earlier
 * threads'.  One pass, but its counts and its writes go to every cell at
 * random (a cache miss per point once the threads' counts pass the
 * caches); place_by_bins first, this without its scratch memory. */
static int place_by_cells(vic_slab_cells *g, const vic_data *x, uint32_t *cell, int threads) {
  const int64_t n = x->n;
  int64_t *hist = calloc((size_t)threads * (size_t)g->cells, sizeof *hist);
  if (!hist) return -1;
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1; /* the team may be smaller than asked (nested) */
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    int64_t *h = hist + (size_t)t * (size_t)g->cells;
    const int64_t a = n * t / nt, b = n * (t + 1) / nt;
    for (int64_t i = a; i < b; ++i) {
      cell[i] = (uint32_t)cell_of(g, x, i);
      h[cell[i]]++;
    }
#pragma omp barrier
#pragma omp single
    vic__slab_offsets(hist, nt, g->cells, g->start);
    for (int64_t i = a; i < b; ++i) g->order[h[cell[i]]++] = i;
  }
  free(hist);
  return 0;
}

/* The same lists in passes whose counts and writes stay in the caches:
 * the points counted per bin of the first dimension (per of them) by
 * each thread over its stretch of ids; written, in id order, into their
 * bin's stretch (cell and id, a few streams per thread); then each bin's
 * stretch, by one thread, counted per cell (its per^(d-1) cells) and
 * listed cell by cell.  The same lists as place_by_cells; -1 without the
 * scratch memory (n cells and ids). */
static int place_by_bins(vic_slab_cells *g, const vic_data *x, uint32_t *cell, int threads) {
  const int64_t n = x->n, per = g->per, sub = g->cells / per;
  int64_t *top = calloc((size_t)threads * (size_t)per + (size_t)per + 1, sizeof *top);
  int64_t *count = top ? malloc((size_t)threads * (size_t)(sub + 1) * sizeof *count) : NULL;
  uint32_t *tmp_cell = count ? vic__malloc_huge((size_t)n * sizeof *tmp_cell) : NULL;
  int64_t *tmp_id = tmp_cell ? vic__malloc_huge((size_t)n * sizeof *tmp_id) : NULL;
  if (!tmp_id) {
    free(top);
    free(count);
    free(tmp_cell);
    return -1;
  }
  int64_t *bin_start = top + (size_t)threads * (size_t)per; /* per + 1 */
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    int64_t *tp = top + (size_t)t * (size_t)per;
    const int64_t a = n * t / nt, b = n * (t + 1) / nt;
    for (int64_t i = a; i < b; ++i) {
      cell[i] = (uint32_t)cell_of(g, x, i);
      tp[cell[i] / sub]++;
    }
#pragma omp barrier
#pragma omp single
    vic__slab_offsets(top, nt, per, bin_start);
    for (int64_t i = a; i < b; ++i) {
      const int64_t at = tp[cell[i] / sub]++;
      tmp_cell[at] = cell[i];
      tmp_id[at] = i;
    }
#pragma omp barrier
    int64_t *cnt = count + (size_t)t * (size_t)(sub + 1);
#pragma omp for schedule(dynamic, 1)
    for (int64_t q = 0; q < per; ++q) {
      const int64_t first = q * sub, e0 = bin_start[q], e1 = bin_start[q + 1];
      memset(cnt, 0, (size_t)sub * sizeof *cnt);
      for (int64_t at = e0; at < e1; ++at) cnt[tmp_cell[at] - first]++;
      int64_t run = e0;
      for (int64_t c = 0; c < sub; ++c) {
        const int64_t m = cnt[c];
        g->start[first + c] = run;
        cnt[c] = run;
        run += m;
      }
      for (int64_t at = e0; at < e1; ++at) g->order[cnt[tmp_cell[at] - first]++] = tmp_id[at];
    }
  }
  g->start[g->cells] = n;
  free(top);
  free(count);
  free(tmp_cell);
  free(tmp_id);
  return 0;
}

int vic__slab_cells_make(const vic_data *x, int64_t max_cells, vic_slab_cells *g) {
  memset(g, 0, sizeof *g);
  const int64_t n = x->n;
  const int d = x->d;
  if (n <= 0 || d < 1 || d > 3) return -1;
  /* bins per dimension: at most max_cells cells, about 64 points a cell or more */
  const int64_t cap = max_cells < n / 64 ? max_cells : n / 64 > 1 ? n / 64 : 1;
  int64_t per = 1;
  while (1) {
    int64_t c = 1;
    for (int j = 0; j < d; ++j) c *= per + 1;
    if (c > cap) break;
    ++per;
  }
  g->d = d;
  g->per = per;
  g->cells = 1;
  for (int j = 0; j < d; ++j) g->cells *= per;
  const int64_t S = n < CELLS_SAMPLE ? n : CELLS_SAMPLE;
  g->cut = malloc((size_t)(d * (per - 1) + 1) * sizeof *g->cut);
  double *sample = malloc((size_t)S * (size_t)d * sizeof *sample);
  g->start = calloc((size_t)g->cells + 1, sizeof *g->start);
  g->order = vic__malloc_huge((size_t)n * sizeof *g->order);
  uint32_t *cell = vic__malloc_huge((size_t)n * sizeof *cell);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (!g->cut || !sample || !g->start || !g->order || !cell) {
    free(sample);
    free(cell);
    vic__slab_cells_free(g);
    return -1;
  }
  /* cuts at quantiles of an even sample of the rows, the dimensions
   * sorted side by side */
#pragma omp parallel for num_threads(d) schedule(static, 1)
  for (int j = 0; j < d; ++j) {
    double *sj = sample + (size_t)j * (size_t)S;
    for (int64_t t = 0; t < S; ++t) sj[t] = vic__slab_coord(x, t * (n / S), j);
    qsort(sj, (size_t)S, sizeof *sj, by_value);
    for (int64_t b = 0; b + 1 < per; ++b) g->cut[j * (per - 1) + b] = sj[(b + 1) * S / per];
  }
  free(sample);
  const int rc = place_by_bins(g, x, cell, threads) == 0 ? 0 : place_by_cells(g, x, cell, threads);
  free(cell);
  if (rc != 0) vic__slab_cells_free(g);
  return rc;
}

/* The bins a region meets along dimension j (all of them where it is
 * open, or where a periodic arc wraps round the box's edge). */
static void bin_range(const vic_slab_cells *g, const vic_region *r, int j, int64_t *b0, int64_t *b1) {
  *b0 = 0;
  *b1 = g->per - 1;
  if (r->period[j] > 0 && !(r->lo[j] >= 0 && r->hi[j] <= r->period[j])) return;
  if (isfinite(r->lo[j])) *b0 = bin_of(g, j, r->lo[j]);
  if (isfinite(r->hi[j])) *b1 = bin_of(g, j, r->hi[j]);
}

/* The cells a region meets, listed into cell (NULL: counted only). */
static int64_t region_cells(const vic_slab_cells *g, const vic_region *r, int64_t *cell) {
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, m = 1;
  for (int j = 0; j < g->d; ++j) {
    bin_range(g, r, j, &lo[j], &hi[j]);
    m *= hi[j] - lo[j] + 1;
  }
  if (!cell) return m;
  int64_t at = 0;
  for (int64_t a = lo[0]; a <= hi[0]; ++a)
    for (int64_t b = g->d > 1 ? lo[1] : 0; b <= (g->d > 1 ? hi[1] : 0); ++b)
      for (int64_t c = g->d > 2 ? lo[2] : 0; c <= (g->d > 2 ? hi[2] : 0); ++c)
        cell[at++] = g->d == 1 ? a : g->d == 2 ? a * g->per + b : (a * g->per + b) * g->per + c;
  return at;
}

int64_t vic__slab_cells_bound(const vic_slab_cells *g, const vic_region *r) {
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int j = 0; j < g->d; ++j) bin_range(g, r, j, &lo[j], &hi[j]);
  int64_t sum = 0;
  for (int64_t a = lo[0]; a <= hi[0]; ++a)
    for (int64_t b = g->d > 1 ? lo[1] : 0; b <= (g->d > 1 ? hi[1] : 0); ++b) {
      const int64_t row = g->d == 1 ? a : g->d == 2 ? a * g->per + b : (a * g->per + b) * g->per;
      const int64_t c0 = g->d > 2 ? row + lo[2] : row, c1 = g->d > 2 ? row + hi[2] : row;
      sum += g->start[c1 + 1] - g->start[c0]; /* consecutive cells: one run */
    }
  return sum;
}

int vic__slab_cells_gather(const vic_slab_cells *g, const vic_data *x, const vic_region *r, const int64_t *rows,
                           int64_t n_rows, const unsigned char *is_row, int threads, float **pts, uint32_t **gid,
                           int64_t *n_out) {
  const int d = x->d;
  const int64_t stride = x->stride ? x->stride : d;
  const int64_t nc = region_cells(g, r, NULL);
  int64_t *cell = malloc((size_t)nc * sizeof *cell), *cnt = calloc((size_t)nc + 1, sizeof *cnt);
  if (!cell || !cnt) { free(cell); free(cnt); return -1; }
  region_cells(g, r, cell);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (int64_t q = 0; q < nc; ++q) {
    int64_t m = 0;
    for (int64_t t = g->start[cell[q]]; t < g->start[cell[q] + 1]; ++t) {
      const int64_t i = g->order[t];
      m += !is_row[i] && vic__region_holds(r, x, i);
    }
    cnt[q + 1] = m;
  }
  for (int64_t q = 0; q < nc; ++q) cnt[q + 1] += cnt[q];
  const int64_t m = n_rows + cnt[nc];
  float *p = malloc((size_t)(m > 0 ? m : 1) * (size_t)d * sizeof *p);
  uint32_t *ids = malloc((size_t)(m > 0 ? m : 1) * sizeof *ids);
  if (!p || !ids) { free(p); free(ids); free(cell); free(cnt); return -1; }
  vic__slab_rows_copy(x, rows, n_rows, threads, p, ids);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (int64_t q = 0; q < nc; ++q) {
    int64_t at = n_rows + cnt[q];
    for (int64_t t = g->start[cell[q]]; t < g->start[cell[q] + 1]; ++t) {
      const int64_t i = g->order[t];
      if (is_row[i] || !vic__region_holds(r, x, i)) continue;
      memcpy(p + at * d, x->rows + i * stride, (size_t)d * sizeof *p);
      ids[at++] = (uint32_t)i;
    }
  }
  free(cell);
  free(cnt);
  *pts = p;
  *gid = ids;
  *n_out = m;
  return 0;
}
