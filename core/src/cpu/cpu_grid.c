/* Exact kNN for d <= 3 with a uniform cell grid (see grid.h).
 *
 * Layout: every point is stored with three float coordinates (unused axes
 * are 0 and have one cell), in cell order, next to its original id.  The
 * cell of a point is found by scaling; a counting sort then makes each cell
 * a contiguous range [start[c], start[c+1]).
 *
 * Search: a query scans its own cell, then shells of cells at Chebyshev
 * offset r = 1, 2, ...  The squared 1-d gap from the query to the cells at
 * each offset is computed once per axis and offset, so a cell's lower bound
 * is a sum of three table entries; planes, rows and cells whose bound
 * exceeds the current k-th distance are skipped, and the search stops when
 * the nearest slab of the next shell is beyond it; in a row of a shell, the
 * run of cells within the bound is one contiguous range of points.  Queries
 * run in stored order so that consecutive queries (one thread) touch the
 * same cells.
 *
 * When the data stay crowded at the finest grid that memory allows, the
 * stored points are handed to the kd-tree of cpu_grid_tree.c instead. */
#include "grid_internal.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

int64_t vic__grid_ids32_rows = (int64_t)UINT32_MAX + 1;

/* Mean points per cell aimed for.  Smaller cells scan fewer points but
 * visit more (mostly empty) cells; 1-1.5 measured best for k = 16 in 3-d. */
#ifndef POINTS_PER_CELL /* overridable only to tune it */
#define POINTS_PER_CELL 1.5
#endif
/* Clustered data: cells are refined while a typical point (weighted by
 * points, not by cells) shares its cell with more than this many others,
 * as long as the grid stays within CELLS_PER_POINT_MAX cells per point. */
#ifndef CROWDED_PER_CELL
#define CROWDED_PER_CELL 12.0
#endif
/* Past this crowding at the finest affordable grid, a kd-tree over the same
 * points is searched instead (cpu_grid_tree.c). */
#ifndef TREE_CROWDING
#define TREE_CROWDING (8 * CROWDED_PER_CELL)
#endif
#ifndef CELLS_PER_POINT_MAX
#define CELLS_PER_POINT_MAX 8.0
#endif


/* ---------------------------------------------------------------- helpers */

static inline float wrap_coord(float v, float period) {
  if (!(period < INFINITY)) return v;
  double w = (double)v - (double)period * floor((double)v / (double)period);
  float f = (float)w;
  return f >= period || f < 0.f ? 0.f : f;
}

/* The point's coordinates as stored: padded to 3, periodic axes wrapped. */
static inline void load_point(const vic_grid *g, const float *row, float out[3]) {
  for (int j = 0; j < 3; ++j) out[j] = j < g->d ? wrap_coord(row[j], g->period[j]) : 0.f;
}

static inline int32_t axis_cell(const vic_grid *g, int j, float v) {
  float t = (v - g->lo[j]) * g->inv_h[j];
  if (!(t > 0.f)) return 0; /* also catches a NaN-free but underflowing value */
  int64_t i = (int64_t)t;
  return i >= g->nc[j] ? g->nc[j] - 1 : (int32_t)i;
}

static inline int64_t cell_index(const vic_grid *g, const int32_t ci[3]) {
  return ((int64_t)ci[2] * g->nc[1] + ci[1]) * g->nc[0] + ci[0];
}

static inline int64_t point_cell(const vic_grid *g, const float p[3]) {
  int32_t ci[3] = {axis_cell(g, 0, p[0]), axis_cell(g, 1, p[1]), axis_cell(g, 2, p[2])};
  return cell_index(g, ci);
}

/* Cell counts per axis for a cell edge `edge` (open axes of zero extent get
 * one cell).  Returns the total number of cells. */
static int64_t size_cells(vic_grid *g, const double ext[3], double edge) {
  int64_t total = 1;
  for (int j = 0; j < 3; ++j) {
    int64_t m = 1;
    if (ext[j] > 0) {
      double f = floor(ext[j] / edge);
      m = f < 1 ? 1 : f > (double)(g->n + 1) ? g->n + 1 : (int64_t)f;
      if (m > (1 << 30)) m = 1 << 30;
    }
    g->nc[j] = (int32_t)m;
    g->h[j] = ext[j] > 0 ? (float)(ext[j] / (double)m) : 1.f;
    g->inv_h[j] = 1.f / g->h[j];
    g->slack[j] = 1e-4f * g->h[j] + 4e-6f * (fabsf(g->lo[j]) + (float)ext[j]);
    total *= m;
  }
  g->ncells = total;
  return total;
}

/* Mean occupancy of a point's own cell (sum of squared counts over n). */
static double crowding(const vic_grid *g, const int64_t *count) {
  double s = 0;
  for (int64_t cidx = 0; cidx < g->ncells; ++cidx) s += (double)count[cidx] * (double)count[cidx];
  return s / (double)g->n;
}

/* ------------------------------------------------------------------ build */

static void bounds(const vic_data *x, double mn[3], double mx[3], int threads) {
  for (int j = 0; j < 3; ++j) { mn[j] = INFINITY; mx[j] = -INFINITY; }
#pragma omp parallel num_threads(threads)
  {
    double lmn[3] = {INFINITY, INFINITY, INFINITY}, lmx[3] = {-INFINITY, -INFINITY, -INFINITY};
#pragma omp for schedule(static)
    for (int64_t i = 0; i < x->n; ++i) {
      const float *r = vic__row(x, i);
      for (int32_t j = 0; j < x->d; ++j) {
        if (r[j] < lmn[j]) lmn[j] = r[j];
        if (r[j] > lmx[j]) lmx[j] = r[j];
      }
    }
#pragma omp critical(vic_grid_bounds)
    for (int j = 0; j < 3; ++j) {
      if (lmn[j] < mn[j]) mn[j] = lmn[j];
      if (lmx[j] > mx[j]) mx[j] = lmx[j];
    }
  }
}

static void cell_of_rows(const vic_grid *g, const vic_data *x, int64_t *cell, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < x->n; ++i) {
    float p[3];
    load_point(g, vic__row(x, i), p);
    cell[i] = point_cell(g, p);
  }
}

vic_status vic__grid_build(vic_ctx *c, const vic_data *x, vic_grid **out) {
  *out = NULL;
  if (!x || x->d < 1 || x->d > 3 || x->metric != VIC_L2)
    return vic__fail(c, VIC_E_UNSUPPORTED, "the grid needs 1 to 3 dimensions and the L2 metric (d = %d, metric %s)",
                     x ? (int)x->d : 0, x ? vic_metric_name(x->metric) : "none");
  if (x->n < 1) return vic__fail(c, VIC_E_ARGUMENT, "the grid needs at least one point");
  int threads = vic__threads(c);
  vic_grid *g = vic__calloc(c, 1, sizeof *g, "grid");
  if (!g) return VIC_E_NOMEM;
  g->n = x->n;
  g->d = x->d;

  double mn[3], mx[3], ext[3];
  bounds(x, mn, mx, threads);
  for (int j = 0; j < 3; ++j) {
    g->period[j] = INFINITY;
    if (j >= x->d) { g->lo[j] = 0.f; ext[j] = 0; continue; }
    if (x->box && x->box[j] > 0) {
      g->period[j] = (float)x->box[j];
      g->any_periodic = 1;
      g->lo[j] = 0.f;
      ext[j] = x->box[j];
    } else {
      g->lo[j] = (float)mn[j];
      ext[j] = mx[j] - mn[j];
    }
  }
  double vol = 1;
  int deff = 0;
  for (int j = 0; j < 3; ++j)
    if (ext[j] > 0) { vol *= ext[j]; deff++; }
  double target = (double)x->n / POINTS_PER_CELL;
  if (target < 1) target = 1;
  double edge = deff ? pow(vol / target, 1.0 / deff) : 1.0;

  vic_status s = VIC_E_NOMEM;
  int64_t *cell = vic__malloc(c, (size_t)x->n * sizeof *cell, "grid cell of each point");
  if (!cell) goto fail;
  /* Size the grid for the bounding volume, then refine while the data are
   * so clustered that a typical point's cell is crowded (n-body halos). */
  for (int attempt = 0;; ++attempt) {
    size_cells(g, ext, edge);
    free(g->start);
    g->start = vic__calloc(c, (size_t)g->ncells + 1, sizeof *g->start, "grid cell offsets");
    if (!g->start) goto fail;
    cell_of_rows(g, x, cell, threads);
    for (int64_t i = 0; i < x->n; ++i) g->start[cell[i] + 1]++;
    double crowd = crowding(g, g->start + 1);
    double room = CELLS_PER_POINT_MAX * (double)x->n / (double)g->ncells;
    vic__log(c, VIC_LOG_DEBUG, "grid: %d x %d x %d cells for %lld points; a point shares its cell with %.1f on average",
             (int)g->nc[0], (int)g->nc[1], (int)g->nc[2], (long long)x->n, crowd - 1);
    if (attempt >= 3 || crowd <= CROWDED_PER_CELL || room <= 1.5 || deff == 0) break;
    double grow = crowd / POINTS_PER_CELL;
    if (grow > room) grow = room;
    edge /= pow(grow, 1.0 / deff);
  }
  int use_tree = crowding(g, g->start + 1) > TREE_CROWDING;
  if (use_tree)
    vic__log(c, VIC_LOG_INFO,
             "grid: the points are strongly clustered (about %.0f points in a point's cell at the finest affordable grid); "
             "searching a kd-tree instead", crowding(g, g->start + 1));
  if ((s = vic__progress(c, "grid", 0.0)) != VIC_OK) goto fail;

  for (int64_t cidx = 0; cidx < g->ncells; ++cidx) g->start[cidx + 1] += g->start[cidx];
  g->pts = vic__malloc(c, (size_t)x->n * 3 * sizeof *g->pts, "grid points");
  /* row numbers in 4 bytes where they fit: the grid is held beside the
   * lists it fills, so its bytes a point count in every build's peak */
  const int narrow = x->n <= vic__grid_ids32_rows;
  void *ids = NULL;
  if (g->pts) ids = vic__malloc(c, (size_t)x->n * (narrow ? sizeof(uint32_t) : sizeof(int64_t)), "grid ids");
  if (narrow) g->ids32 = ids;
  else g->ids = ids;
  int64_t *fill = ids ? vic__malloc(c, (size_t)g->ncells * sizeof *fill, "grid fill") : NULL;
  if (!fill) { s = VIC_E_NOMEM; goto fail; }
  memcpy(fill, g->start, (size_t)g->ncells * sizeof *fill);
  /* Serial scatter: stable (ascending ids within a cell), so the layout and
   * hence every result is independent of the thread count. */
  for (int64_t i = 0; i < x->n; ++i) {
    int64_t pos = fill[cell[i]]++;
    load_point(g, vic__row(x, i), g->pts + pos * 3);
    if (narrow) g->ids32[pos] = (uint32_t)i;
    else g->ids[pos] = i;
  }
  free(fill);
  free(cell);
#ifdef __GLIBC__
  /* glibc may have served these transients from its heap (its mmap
   * threshold grows after large frees) and would keep their pages resident
   * while the lists are written: hand them back now */
  malloc_trim(0);
#endif
  if (use_tree) { /* the cell order is a good start for the tree's partitions */
    free(g->start);
    g->start = NULL;
    if ((s = vic__grid_tree_build(c, g)) != VIC_OK) { cell = NULL; goto fail; }
  }
  *out = g;
  return VIC_OK;

fail:
  free(cell);
  vic__grid_free(g);
  return s;
}

void vic__grid_free(vic_grid *g) {
  if (!g) return;
  free(g->pts);
  free(g->ids);
  free(g->ids32);
  free(g->start);
  free(g->box);
  free(g);
}

size_t vic__grid_bytes(const vic_grid *g) {
  if (!g) return 0;
  return sizeof *g + (size_t)g->n * (3 * sizeof(float) + (g->ids32 ? sizeof(uint32_t) : sizeof(int64_t))) +
         (g->start ? ((size_t)g->ncells + 1) * sizeof(int64_t) : 0) + (size_t)g->nodes * 6 * sizeof(float);
}

/* ------------------------------------------------------------------ query */

/* Per-thread tables of squared 1-d gaps, indexed by offset + nc[j]. */
typedef struct {
  float *gap2[3];
} scratch;

/* Squared distance from q to the cells at offset o along axis j (the
 * unwrapped cell index cq + o; periodic axes take the nearest image). */
static inline float axis_gap2(const vic_grid *g, int j, float q, int32_t cq, int32_t o) {
  float a = g->lo[j] + (float)(cq + o) * g->h[j], b = a + g->h[j];
  float gap = a > q ? a - q : q > b ? q - b : 0.f;
  if (g->period[j] < INFINITY) {
    float L = g->period[j];
    float left = a - L, right = b - L; /* image one period down */
    float g1 = left > q ? left - q : q > right ? q - right : 0.f;
    left = a + L; right = b + L;       /* one period up */
    float g2 = left > q ? left - q : q > right ? q - right : 0.f;
    if (g1 < gap) gap = g1;
    if (g2 < gap) gap = g2;
  }
  gap -= g->slack[j];
  return gap > 0.f ? gap * gap : 0.f;
}

static inline void scan_cell(const vic_grid *g, int64_t cidx, const float q[3], int64_t self_pos, klist *h,
                             int periodic) {
  scan_range(g, g->start[cidx], g->start[cidx + 1], q, self_pos, h, periodic);
}

/* Cells [ua, ub] of the row whose cell 0 is `row` (ua <= ub, unwrapped
 * indices that may cross the ends of a periodic axis). */
static inline void scan_row(const vic_grid *g, int64_t row, int32_t ua, int32_t ub, const float q[3],
                            int64_t self_pos, klist *h, int periodic) {
  int32_t n = g->nc[0];
  if (ua < 0) { scan_range(g, g->start[row + ua + n], g->start[row + n], q, self_pos, h, periodic); ua = 0; }
  if (ub >= n) { scan_range(g, g->start[row], g->start[row + ub - n + 1], q, self_pos, h, periodic); ub = n - 1; }
  if (ua <= ub) scan_range(g, g->start[row + ua], g->start[row + ub + 1], q, self_pos, h, periodic);
}

static inline int32_t wrap_cell(int32_t i, int32_t n) { return i < 0 ? i + n : i >= n ? i - n : i; }

/* The k nearest stored points of q (stored-coordinate form) into h. */
static void search(const vic_grid *g, const float q[3], int64_t self_pos, klist *h, scratch *sc, int periodic) {
  int32_t cq[3], omin[3], omax[3];
  float *G[3];
  for (int j = 0; j < 3; ++j) {
    cq[j] = axis_cell(g, j, q[j]);
    G[j] = sc->gap2[j] + g->nc[j];
    if (g->period[j] < INFINITY) { /* every cell exactly once, nearest images first */
      omin[j] = -((g->nc[j] - 1) / 2);
      omax[j] = g->nc[j] - 1 + omin[j];
    } else {
      omin[j] = -cq[j];
      omax[j] = g->nc[j] - 1 - cq[j];
    }
    G[j][0] = axis_gap2(g, j, q[j], cq[j], 0); /* nonzero for a query outside the data's box */
  }
  scan_cell(g, cell_index(g, cq), q, self_pos, h, periodic);
  for (int32_t r = 1;; ++r) {
    float shell = INFINITY;
    for (int j = 0; j < 3; ++j) {
      if (-r >= omin[j]) { float v = axis_gap2(g, j, q[j], cq[j], -r); G[j][-r] = v; if (v < shell) shell = v; }
      if (r <= omax[j]) { float v = axis_gap2(g, j, q[j], cq[j], r); G[j][r] = v; if (v < shell) shell = v; }
    }
    /* shell is +inf once every axis is exhausted; ">" keeps equal-distance
     * candidates reachable because ties go to the lower id */
    if (shell == INFINITY || shell > klist_bound(h)) return;
    int32_t z0 = -r > omin[2] ? -r : omin[2], z1 = r < omax[2] ? r : omax[2];
    int32_t y0 = -r > omin[1] ? -r : omin[1], y1 = r < omax[1] ? r : omax[1];
    int32_t x0 = -r > omin[0] ? -r : omin[0], x1 = r < omax[0] ? r : omax[0];
    int32_t ci[3];
    for (int32_t dz = z0; dz <= z1; ++dz) {
      float gz = G[2][dz];
      if (gz > klist_bound(h)) continue;
      ci[2] = wrap_cell(cq[2] + dz, g->nc[2]);
      int zedge = dz == -r || dz == r;
      for (int32_t dy = y0; dy <= y1; ++dy) {
        float gyz = gz + G[1][dy];
        if (gyz > klist_bound(h)) continue;
        ci[1] = wrap_cell(cq[1] + dy, g->nc[1]);
        if (zedge || dy == -r || dy == r) {
          /* the gaps along x fall then rise, so the cells within the bound
           * are one run [xa, xb]: its points are contiguous, and the empty
           * cells inside it cost nothing */
          float lim = klist_bound(h) - gyz;
          int32_t xa = x0, xb = x1;
          while (xa <= xb && G[0][xa] > lim) ++xa;
          while (xb >= xa && G[0][xb] > lim) --xb;
          if (xa > xb) continue;
          ci[0] = 0;
          scan_row(g, cell_index(g, ci), cq[0] + xa, cq[0] + xb, q, self_pos, h, periodic);
        } else { /* interior row of the shell: only its two end cells are new */
          if (x0 == -r && gyz + G[0][-r] <= klist_bound(h)) {
            ci[0] = wrap_cell(cq[0] - r, g->nc[0]);
            scan_cell(g, cell_index(g, ci), q, self_pos, h, periodic);
          }
          if (x1 == r && gyz + G[0][r] <= klist_bound(h)) {
            ci[0] = wrap_cell(cq[0] + r, g->nc[0]);
            scan_cell(g, cell_index(g, ci), q, self_pos, h, periodic);
          }
        }
      }
    }
  }
}

/* The grid's or the tree's search, specialised for open or periodic boxes. */
static inline void search_any(const vic_grid *g, const float q[3], int64_t self_pos, klist *h, scratch *sc) {
  if (g->tree) vic__grid_tree_search(g, q, self_pos, h, g->any_periodic);
  else if (g->any_periodic) search(g, q, self_pos, h, sc, 1);
  else search(g, q, self_pos, h, sc, 0);
}

/* True distances, (distance, id) order kept where sqrt merges values, and
 * the (-1, +inf) padding of a short list. */
static void finish_row(klist *h) {
  for (int32_t t = 0; t < h->size; ++t) h->d[t] = sqrtf(h->d[t]);
  vic__sort_pairs(h->d, h->id, h->size);
  for (int32_t t = h->size; t < h->k; ++t) { h->d[t] = INFINITY; h->id[t] = -1; }
}

/* Blocks of work for the parallel loop: enough for load balance and
 * progress, few enough that the per-block overhead is negligible. */
static int64_t block_count(int64_t items, int threads) {
  int64_t b = 64 * (int64_t)threads;
  if (b < 256) b = 256;
  return items < b ? (items > 0 ? items : 1) : b;
}

/* Float entries of one thread's search tables (gap2 per axis). */
static size_t scratch_floats(const vic_grid *g) {
  size_t per = 0;
  for (int j = 0; j < 3; ++j) per += 2 * (size_t)g->nc[j] + 1;
  return per;
}

/* The m queries, in blocks shared out dynamically over the threads.  With
 * q == NULL they are the grid's own points in stored order (consecutive
 * queries are neighbours in space, and each skips itself); otherwise the
 * rows of q in `order`, which sorts them by cell for the same locality. */
static void run_queries(vic_ctx *c, const vic_grid *g, const vic_data *q, const int64_t *order, int64_t m,
                        int32_t k, int64_t *ids, float *dist, float *scratch_mem, int threads) {
  int64_t nb = block_count(m, threads), done = 0;
  size_t per = scratch_floats(g);
#pragma omp parallel num_threads(threads)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    scratch sc;
    float *mem = scratch_mem + (size_t)tid * per;
    for (int j = 0; j < 3; ++j) { sc.gap2[j] = mem; mem += 2 * (size_t)g->nc[j] + 1; }
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < nb; ++b) {
      if (vic__cancelled(c)) continue;
      for (int64_t t = m * b / nb, e = m * (b + 1) / nb; t < e; ++t) {
        float p[3];
        const float *at = p;
        int64_t row, self = -1;
        if (q) {
          row = order[t];
          load_point(g, vic__row(q, row), p);
        } else {
          row = grid_id(g, t);
          self = t;
          at = g->pts + 3 * t;
        }
        klist h = {dist + row * k, ids + row * k, k, 0};
        search_any(g, at, self, &h, &sc);
        finish_row(&h);
      }
      int64_t now;
#pragma omp atomic capture
      now = ++done;
      if (tid == 0) vic__progress(c, "grid", (double)now / (double)nb);
    }
  }
}

static int cmp_cell_query(const void *a, const void *b) {
  const int64_t *x = a, *y = b; /* (cell, query) pairs */
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The queries in cell order.  A counting sort costs a table of ncells + 1
 * counts: right for large batches, but a refined grid over clustered data
 * has millions of cells, and for a few queries (an interactive probe) that
 * table costs far more than the search; there a comparison sort of m
 * (cell, query) pairs is cheaper. */
static vic_status order_by_cell(vic_ctx *c, const vic_grid *g, const int64_t *key, int64_t m, int64_t *order) {
  if (m * 16 < g->ncells) {
    int64_t *pairs = vic__malloc(c, (size_t)m * 2 * sizeof *pairs, "query order");
    if (!pairs) return VIC_E_NOMEM;
    for (int64_t i = 0; i < m; ++i) { pairs[2 * i] = key[i]; pairs[2 * i + 1] = i; }
    qsort(pairs, (size_t)m, 2 * sizeof *pairs, cmp_cell_query);
    for (int64_t i = 0; i < m; ++i) order[i] = pairs[2 * i + 1];
    free(pairs);
    return VIC_OK;
  }
  int64_t *count = vic__calloc(c, (size_t)g->ncells + 1, sizeof *count, "query cell counts");
  if (!count) return VIC_E_NOMEM;
  for (int64_t i = 0; i < m; ++i) count[key[i] + 1]++;
  for (int64_t cidx = 0; cidx < g->ncells; ++cidx) count[cidx + 1] += count[cidx];
  for (int64_t i = 0; i < m; ++i) order[count[key[i]]++] = i;
  free(count);
  return VIC_OK;
}

/* External queries: sorted by cell first so that consecutive ones share cells. */
static vic_status query_rows(vic_ctx *c, const vic_grid *g, const vic_data *q, int32_t k, int64_t *ids,
                             float *dist, float *scratch_mem, int threads) {
  int64_t m = q->n;
  int64_t *key = vic__malloc(c, (size_t)m * sizeof *key, "query cells");
  int64_t *order = key ? vic__malloc(c, (size_t)m * sizeof *order, "query order") : NULL;
  if (!order) { free(key); return VIC_E_NOMEM; }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < m; ++i) {
    float p[3];
    load_point(g, vic__row(q, i), p);
    key[i] = point_cell(g, p);
  }
  vic_status so = order_by_cell(c, g, key, m, order);
  free(key);
  if (so != VIC_OK) { free(order); return so; }

  run_queries(c, g, q, order, m, k, ids, dist, scratch_mem, threads);
  free(order);
  return VIC_OK;
}

vic_status vic__grid_query(vic_ctx *c, const vic_grid *g, const vic_data *q, int32_t k, int64_t *ids,
                           float *dist) {
  if (!g) return vic__fail(c, VIC_E_ARGUMENT, "no grid");
  if (k < 1) return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)k);
  if (q && q->d != g->d)
    return vic__fail(c, VIC_E_ARGUMENT, "queries have d = %d but the grid's points have d = %d", (int)q->d, (int)g->d);
  int threads = vic__threads(c);
  float *scratch_mem = vic__malloc(c, scratch_floats(g) * (size_t)threads * sizeof(float), "grid search tables");
  if (!scratch_mem) return VIC_E_NOMEM;
  vic_status s = VIC_OK;
  if (q) s = query_rows(c, g, q, k, ids, dist, scratch_mem, threads);
  else run_queries(c, g, NULL, NULL, g->n, k, ids, dist, scratch_mem, threads);
  free(scratch_mem);
  if (s != VIC_OK) return s;
  if (vic__cancelled(c)) return vic__fail(c, VIC_E_CANCELLED, "cancelled during stage 'grid'");
  return VIC_OK;
}

vic_status vic__cpu_grid_knn(vic_ctx *c, const vic_data *x, int32_t k, int64_t *ids, float *dist) {
  vic_grid *g = NULL;
  vic_status s = vic__grid_build(c, x, &g);
  if (s != VIC_OK) return s;
  s = vic__grid_query(c, g, NULL, k, ids, dist);
  vic__grid_free(g);
  return s;
}
