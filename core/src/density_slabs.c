/* Slab by slab lists and densities (density_slabs.h).
 *
 * The points are bucketed by slab once (a counting sort of their ids, so
 * every slab's own points are in ascending id order).  A slab run gathers
 * its own points and the halo -- the points of the neighbouring slabs
 * inside its region -- as packed rows with their ids in the whole set,
 * and the device returns the own rows' lists, k-th distances and
 * densities.  Rows whose k-th distance reaches the edge of the region are
 * answered again in a region grown to hold their k-th-distance ball (an
 * upper bound of the true one), until none is left: every list then
 * equals the one over all points. */
#include "density_slabs.h"
#include "backend_cuda.h"
#include "slab_plan.h"
#include "slab_rows.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "density_cuda.h"
#include "vic_kernels_density.h"
#include "vic_kernels_peaks.h"

size_t vic__density_budget(vic_ctx *c, int device) {
  if (c->opt.device_memory_budget) return c->opt.device_memory_budget;
  size_t f = 0, t = 0;
  if (vick_device_info(device, NULL, 0, &f, &t) != VICK_OK) return 0;
  return f / 10 * 9;
}

enum { PASS_LINKS = 1, PASS_EDGES = 2 };

/* A device's first edges of its slabs, appended slab by slab. */
typedef struct {
  uint64_t *pair, *pos;
  int64_t count, cap;
} edge_list;

/* Rows a device answered outside their slab's first region (the halo
 * was too narrow for them: a few, in the sparse outskirts), with their
 * lists, kept on the host by the density pass so that the later passes
 * do not make these costly regions again. */
typedef struct {
  int64_t *row;
  int32_t *ids;
  float *dist;
  int64_t count, cap;
} row_cache;

typedef struct {
  int64_t *row;
  int64_t count, cap;
} row_list;

typedef struct {
  vic_ctx *c;
  const vic_data *x;
  int32_t k;
  const float *mass;
  vick_density_params p;
  size_t budget;
  float *knn, *sph, *h, *rk, *dist;
  int32_t *ids;
  const vic_slab_plan *plan;
  const int64_t *start, *order; /* slab s owns order[start[s] .. start[s+1]) */
  double h0;
  int first, count;
  int threads; /* host threads per device */
  /* per device */
  vick_call *call;
  int *rc;
  vic_status *status;
  int64_t *bad_row, *retried;
  char (*msg)[512];
  /* the passes after the densities (vic__slabs_links / _edges): known
   * k-th distances rk, densities, labels and ranks by id */
  int pass; /* 0: densities; PASS_LINKS, PASS_EDGES */
  const float *rho;
  const int32_t *lab, *rank;
  int64_t n_max;
  int32_t *parent, *up, *is_max;
  float *delta;
  edge_list *edges; /* per device */
  row_cache *cache; /* per device, or NULL: no cache */
  unsigned char *cached; /* n: the row is in a cache */
  row_list *left; /* per device, with a cache: rows the slabs' first regions could not prove */
  double *t_gather, *t_device; /* per device: seconds of host gathers and of device calls in this pass */
} slab_job;

/* Own rows (rows, in that order) then every other point of slabs
 * s_lo..s_hi inside r, packed, by the job's host threads (blocks of the
 * candidates counted, then written at their offsets). */
static int gather(const slab_job *j, const vic_region *r, const int64_t *rows, int64_t n_rows, int64_t s_lo,
                  int64_t s_hi, const unsigned char *is_row, float **pts, uint32_t **gid, int64_t *n_out) {
  const vic_data *x = j->x;
  const int d = x->d;
  const int64_t stride = x->stride ? x->stride : d;
  const int64_t c0 = j->start[s_lo], c1 = j->start[s_hi + 1], span = c1 - c0;
  const int64_t block = 1 << 16, nb = (span + block - 1) / block;
  int64_t *cnt = calloc((size_t)nb + 1, sizeof *cnt);
  if (!cnt) return -1;
#pragma omp parallel for schedule(dynamic, 4) num_threads(j->threads)
  for (int64_t b = 0; b < nb; ++b) {
    int64_t m = 0;
    for (int64_t t = c0 + b * block; t < c0 + (b + 1) * block && t < c1; ++t) {
      const int64_t i = j->order[t];
      m += !is_row[i] && vic__region_holds(r, x, i);
    }
    cnt[b + 1] = m;
  }
  for (int64_t b = 0; b < nb; ++b) cnt[b + 1] += cnt[b];
  const int64_t m = n_rows + cnt[nb];
  float *p = malloc((size_t)m * d * sizeof *p);
  uint32_t *g = malloc((size_t)m * sizeof *g);
  if (!p || !g) { free(p); free(g); free(cnt); return -1; }
#pragma omp parallel for schedule(static) num_threads(j->threads)
  for (int64_t t = 0; t < n_rows; ++t) {
    memcpy(p + t * d, x->rows + rows[t] * stride, (size_t)d * sizeof *p);
    g[t] = (uint32_t)rows[t];
  }
#pragma omp parallel for schedule(dynamic, 4) num_threads(j->threads)
  for (int64_t b = 0; b < nb; ++b) {
    int64_t at = n_rows + cnt[b];
    for (int64_t t = c0 + b * block; t < c0 + (b + 1) * block && t < c1; ++t) {
      const int64_t i = j->order[t];
      if (is_row[i] || !vic__region_holds(r, x, i)) continue;
      memcpy(p + at * d, x->rows + i * stride, (size_t)d * sizeof *p);
      g[at++] = (uint32_t)i;
    }
  }
  free(cnt);
  *pts = p;
  *gid = g;
  *n_out = m;
  return 0;
}

/* Slabs whose own range meets [lo, hi) along the axis (all of them when
 * the region wraps; open sides reach the first or last slab). */
static void slab_span(const slab_job *j, const vic_region *r, int64_t *s_lo, int64_t *s_hi) {
  const int a = j->plan->axis;
  *s_lo = 0;
  *s_hi = j->plan->n_slabs - 1;
  if (r->period[a] > 0) return;
  if (isfinite(r->lo[a])) *s_lo = vic__slab_of(j->plan, r->lo[a]);
  if (isfinite(r->hi[a])) *s_hi = vic__slab_of(j->plan, r->hi[a]);
}

static int vick_fail_host(vick_call *call, int code, const char *what) {
  snprintf(call->message, sizeof call->message, "%s", what);
  return code;
}

static void add_stage(vick_call *call, const char *name, double seconds) {
  for (int i = 0; i < call->n_stages; ++i)
    if (strcmp(call->stages[i].name, name) == 0) { call->stages[i].seconds += seconds; return; }
  if (call->n_stages >= (int)(sizeof call->stages / sizeof call->stages[0])) return;
  snprintf(call->stages[call->n_stages].name, sizeof call->stages[0].name, "%s", name);
  call->stages[call->n_stages++].seconds = seconds;
}

static int row_list_add(row_list *l, int64_t i) {
  if (l->count == l->cap) {
    const int64_t cap = l->cap ? 2 * l->cap : 1024;
    int64_t *r = realloc(l->row, (size_t)cap * sizeof *r);
    if (!r) return -1;
    l->row = r;
    l->cap = cap;
  }
  l->row[l->count++] = i;
  return 0;
}

static int cache_add(row_cache *rc, int32_t k, int64_t row, const int32_t *ids, const float *dist) {
  if (rc->count == rc->cap) {
    int64_t cap = rc->cap ? 2 * rc->cap : 1024;
    int64_t *r = realloc(rc->row, (size_t)cap * sizeof *r);
    if (r) rc->row = r;
    int32_t *a = r ? realloc(rc->ids, (size_t)cap * k * sizeof *a) : NULL;
    if (a) rc->ids = a;
    float *b = a ? realloc(rc->dist, (size_t)cap * k * sizeof *b) : NULL;
    if (b) rc->dist = b;
    if (!b) return -1;
    rc->cap = cap;
  }
  rc->row[rc->count] = row;
  memcpy(rc->ids + rc->count * k, ids, (size_t)k * sizeof *ids);
  memcpy(rc->dist + rc->count * k, dist, (size_t)k * sizeof *dist);
  ++rc->count;
  return 0;
}

/* Rows still to answer: rows[off .. off + count) of the slab, in region. */
typedef struct {
  int64_t off, count;
  vic_region reg;
} slab_task;

#define SLAB_TASKS 64 /* rounds per slab; a retry's region holds its rows' balls, so two or three are the rule */

/* One slab on the device of slot dev: its own rows in the slab's region,
 * then the rows that failed the gap test, in regions around their k-th
 * distance balls -- one for the rows by the slab's lower cut, one for
 * those by its upper cut, so that neither spans the whole slab. */
/* Rows rows_in[0, n_own) of the density pass on the device of slot dev,
 * in reg0 first, then the rows that fail the gap test in regions around
 * their k-th-distance balls -- one for the rows below mid along the
 * axis, one for those above, so that neither spans the whole slab.  With
 * from_slab, reg0 is a slab's first region: with a cache (j->left) the
 * rows it cannot prove go to the device's leftovers instead, answered
 * once all slabs are done (run_leftovers). */
static int run_rows(slab_job *j, int dev, const int64_t *rows_in, int64_t n_own, const vic_region *reg0, double mid,
                    unsigned char *is_row, int from_slab) {
  const vic_data *x = j->x;
  const int32_t k = j->k;
  vick_call *call = &j->call[dev];
  if (n_own == 0) return VICK_OK;
  int64_t *rows = malloc((size_t)n_own * sizeof *rows);
  float *rk = malloc((size_t)n_own * sizeof *rk), *knn = NULL, *sph = NULL, *h = NULL;
  if (j->knn) knn = malloc((size_t)n_own * sizeof *knn);
  if (j->sph) sph = malloc((size_t)n_own * sizeof *sph);
  if (j->h) h = malloc((size_t)n_own * sizeof *h);
  int rc = VICK_OK;
  if (!rows || !rk || (j->knn && !knn) || (j->sph && !sph) || (j->h && !h))
    rc = vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's results");
  if (rc == VICK_OK) memcpy(rows, rows_in, (size_t)n_own * sizeof *rows);
  const int axis = j->plan->axis;
  slab_task task[SLAB_TASKS];
  int n_tasks = 1, done = 0;
  task[0].off = 0;
  task[0].count = n_own;
  task[0].reg = *reg0;
  while (rc == VICK_OK && n_tasks > 0) {
    slab_task tk = task[--n_tasks];
    int64_t *tr = rows + tk.off;
    const int64_t n_rows = tk.count;
    if (++done > SLAB_TASKS) { rc = vick_fail_host(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    for (int64_t t = 0; t < n_rows; ++t) is_row[tr[t]] = 1;
    int64_t s_lo, s_hi, m = 0;
    slab_span(j, &tk.reg, &s_lo, &s_hi);
    float *pts = NULL;
    uint32_t *gid = NULL;
    const double tg = vic__now();
    if (gather(j, &tk.reg, tr, n_rows, s_lo, s_hi, is_row, &pts, &gid, &m) != 0)
      rc = vick_fail_host(call, VICK_NOMEM, "no host memory to gather a slab");
    j->t_gather[dev] += vic__now() - tg;
    for (int64_t t = 0; t < n_rows; ++t) is_row[tr[t]] = 0;
    if (rc != VICK_OK) break;
    if (m <= k) { /* a tiny region: the whole set is the region */
      free(pts);
      free(gid);
      for (int jj = 0; jj < 3; ++jj) { tk.reg.lo[jj] = -INFINITY; tk.reg.hi[jj] = INFINITY; }
      task[n_tasks++] = tk;
      continue;
    }
    const size_t need = vic__slab_bytes(m, n_rows, k, x->d) + (j->mass ? (size_t)x->n * 4 : 0);
    if (need > j->budget) {
      snprintf(call->message, sizeof call->message,
               "a slab needs %.0f MiB of device memory (%lld points with its halo, %lld rows); the budget is %.0f MiB: "
               "raise it to at least %.0f MiB", need / 1048576.0, (long long)m, (long long)n_rows,
               j->budget / 1048576.0, need / 1048576.0);
      rc = VICK_NOMEM;
      free(pts);
      free(gid);
      break;
    }
    vick_points vp = {pts, m, x->d, x->d, VICK_METRIC_L2, x->box};
    vick_call one;
    memcpy(&one, call, sizeof one);
    one.memory_budget = j->budget;
    int64_t bad = -1;
    /* the lists go straight to their rows of the whole set's arrays; rows
     * answered again overwrite theirs.  Rows past the first region, with
     * a cache, come back packed for it. */
    const int keep = j->cache && (done > 1 || !from_slab);
    int32_t *tid = keep ? malloc((size_t)n_rows * k * sizeof *tid) : NULL;
    float *tdist = keep ? malloc((size_t)n_rows * k * sizeof *tdist) : NULL;
    if (keep && (!tid || !tdist)) {
      free(tid); free(tdist); free(pts); free(gid);
      rc = vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's retried lists");
      break;
    }
    const double td = vic__now();
    rc = keep ? vick_slab_density(&one, &vp, k, n_rows, gid, x->n, j->mass, &j->p, knn, sph, h, rk, tid, tdist, NULL,
                                  &bad)
              : vick_slab_density(&one, &vp, k, n_rows, gid, x->n, j->mass, &j->p, knn, sph, h, rk, j->ids, j->dist,
                                  tr, &bad);
    j->t_device[dev] += vic__now() - td;
    call->seconds_kernel += one.seconds_kernel;
    call->seconds_transfer += one.seconds_transfer;
    if (one.peak_bytes > call->peak_bytes) call->peak_bytes = one.peak_bytes;
    for (int i = 0; i < one.n_stages; ++i) add_stage(call, one.stages[i].name, one.stages[i].seconds);
    if (rc != VICK_OK) memcpy(call->message, one.message, sizeof call->message);
    free(pts);
    free(gid);
    if (rc != VICK_OK || bad >= 0) { free(tid); free(tdist); }
    if (rc != VICK_OK) break;
    if (bad >= 0) {
      if (j->bad_row[dev] < 0 || tr[bad] < j->bad_row[dev]) j->bad_row[dev] = tr[bad];
      break;
    }
    if (keep) { /* the exact rows: into the cache, and the whole set's lists where asked */
      for (int64_t t = 0; t < n_rows && rc == VICK_OK; ++t) {
        const int64_t i = tr[t];
        if (!vic__region_exact(&tk.reg, x, i, rk[t])) continue;
        if (cache_add(&j->cache[dev], k, i, tid + t * k, tdist + t * k) != 0)
          rc = vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's retried lists");
        j->cached[i] = 1;
        if (j->ids) memcpy(j->ids + i * k, tid + t * k, (size_t)k * sizeof *tid);
        if (j->dist) memcpy(j->dist + i * k, tdist + t * k, (size_t)k * sizeof *tdist);
      }
      free(tid);
      free(tdist);
      if (rc != VICK_OK) break;
    }
    /* place the exact rows; mark the others (is_row) for another round */
    int64_t left = 0;
#pragma omp parallel for schedule(static) num_threads(j->threads) reduction(+ : left)
    for (int64_t t = 0; t < n_rows; ++t) {
      const int64_t i = tr[t];
      if (!vic__region_exact(&tk.reg, x, i, rk[t])) {
        is_row[i] = 1;
        ++left;
        continue;
      }
      j->rk[i] = rk[t];
      if (knn) j->knn[i] = knn[t];
      if (sph) j->sph[i] = sph[t];
      if (h) j->h[i] = h[t];
    }
    if (!left) continue;
    j->retried[dev] += left;
    if (from_slab && done == 1 && j->left) { /* to the leftovers, with their k-th distances so far */
      for (int64_t t = 0; t < n_rows && rc == VICK_OK; ++t) {
        const int64_t i = tr[t];
        if (!is_row[i]) continue;
        is_row[i] = 0;
        j->rk[i] = rk[t];
        if (row_list_add(&j->left[dev], i) != 0)
          rc = vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's leftover rows");
      }
      continue;
    }
    /* the rows left, those below the slab's middle first: two tasks whose
     * regions hold their rows' balls */
    int64_t lo_n = 0, hi_n = 0;
    vic_region lo_reg, hi_reg;
    int64_t *tmp = malloc((size_t)left * sizeof *tmp);
    if (!tmp) { rc = vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's retries"); break; }
    for (int64_t t = 0; t < n_rows; ++t) {
      const int64_t i = tr[t];
      if (!is_row[i]) continue;
      const int low = isfinite(mid) && vic__slab_coord(x, i, axis) < mid;
      vic_region b;
      vic__ball_region(x, i, rk[t], &b);
      vic_region *g = low ? &lo_reg : &hi_reg;
      int64_t *cnt = low ? &lo_n : &hi_n;
      if (*cnt == 0) *g = b; else vic__region_union(g, &b);
      ++*cnt;
    }
    int64_t a = 0; /* the rows left in order: low ones, then high ones */
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t t = 0; t < n_rows; ++t) {
        const int64_t i = tr[t];
        if (!is_row[i]) continue;
        const int low = isfinite(mid) && vic__slab_coord(x, i, axis) < mid;
        if (low != (pass == 0)) continue;
        tmp[a++] = i;
      }
    for (int64_t t = 0; t < left; ++t) is_row[tmp[t]] = 0;
    memcpy(tr, tmp, (size_t)left * sizeof *tr);
    free(tmp);
    if (n_tasks + 2 > SLAB_TASKS) { rc = vick_fail_host(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    if (hi_n) task[n_tasks++] = (slab_task){tk.off + lo_n, hi_n, hi_reg};
    if (lo_n) task[n_tasks++] = (slab_task){tk.off, lo_n, lo_reg};
  }
  free(rows);
  free(rk);
  free(knn);
  free(sph);
  free(h);
  return rc;
}

static int run_slab(slab_job *j, int dev, int64_t s, unsigned char *is_row) {
  vic_region reg;
  vic__slab_region(j->x, j->plan, s, j->h0, &reg);
  return run_rows(j, dev, j->order + j->start[s], j->start[s + 1] - j->start[s], &reg,
                  0.5 * (j->plan->cut[s] + j->plan->cut[s + 1]), is_row, 1);
}

/* Appends a slab's first edges to its device's list. */
static int edges_append(edge_list *l, const uint64_t *pair, const uint64_t *pos, int64_t u) {
  if (l->count + u > l->cap) {
    int64_t cap = l->cap ? l->cap : 1 << 16;
    while (cap < l->count + u) cap *= 2;
    uint64_t *a = realloc(l->pair, (size_t)cap * sizeof *a);
    if (a) l->pair = a;
    uint64_t *b = a ? realloc(l->pos, (size_t)cap * sizeof *b) : NULL;
    if (b) l->pos = b;
    if (!a || !b) return -1;
    l->cap = cap;
  }
  memcpy(l->pair + l->count, pair, (size_t)u * sizeof *pair);
  memcpy(l->pos + l->count, pos, (size_t)u * sizeof *pos);
  l->count += u;
  return 0;
}

/* One gathered region of a later pass on its device: the per-point
 * values of its points gathered by id, the device call, the results
 * placed by id (links) or appended (edges). */
static int known_device(slab_job *j, int dev, const int64_t *tr, int64_t n_rows, const float *pts,
                        const uint32_t *gid, int64_t m) {
  const vic_data *x = j->x;
  vick_call *call = &j->call[dev];
  float *rho = malloc((size_t)m * sizeof *rho);
  int32_t *lab = NULL, *rank = NULL, *pa = NULL, *up = NULL, *mx = NULL;
  float *de = NULL;
  int ok = rho != NULL;
  if (ok && j->pass == PASS_EDGES) {
    lab = malloc((size_t)m * sizeof *lab);
    rank = malloc((size_t)n_rows * sizeof *rank);
    ok = lab && rank;
  }
  if (ok && j->pass == PASS_LINKS) {
    pa = malloc((size_t)n_rows * sizeof *pa);
    up = malloc((size_t)n_rows * sizeof *up);
    mx = malloc((size_t)n_rows * sizeof *mx);
    de = malloc((size_t)n_rows * sizeof *de);
    ok = pa && up && mx && de;
  }
  int rc = ok ? VICK_OK : vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's per-point values");
  if (rc == VICK_OK) {
#pragma omp parallel for schedule(static) num_threads(j->threads)
    for (int64_t t = 0; t < m; ++t) {
      rho[t] = j->rho[gid[t]];
      if (lab) lab[t] = j->lab[gid[t]];
    }
    if (rank) {
#pragma omp parallel for schedule(static) num_threads(j->threads)
      for (int64_t t = 0; t < n_rows; ++t) rank[t] = j->rank[tr[t]];
    }
    vick_points vp = {pts, m, x->d, x->d, VICK_METRIC_L2, x->box};
    vick_call one;
    memcpy(&one, call, sizeof one);
    one.memory_budget = j->budget;
    one.seconds_kernel = one.seconds_transfer = 0;
    one.n_stages = 0;
    one.peak_bytes = 0;
    if (j->pass == PASS_LINKS) {
      rc = vick_slab_links(&one, &vp, j->k, n_rows, gid, x->n, rho, pa, de, up, mx);
      if (rc == VICK_OK) {
#pragma omp parallel for schedule(static) num_threads(j->threads)
        for (int64_t t = 0; t < n_rows; ++t) {
          const int64_t i = tr[t];
          j->parent[i] = pa[t];
          j->delta[i] = de[t];
          j->up[i] = up[t];
          j->is_max[i] = mx[t];
        }
      }
    } else {
      uint64_t *pair = NULL, *pos = NULL;
      int64_t u = 0;
      rc = vick_slab_edges(&one, &vp, j->k, n_rows, gid, x->n, rho, lab, rank, j->n_max, &pair, &pos, &u);
      if (rc == VICK_OK && edges_append(&j->edges[dev], pair, pos, u) != 0)
        rc = vick_fail_host(&one, VICK_NOMEM, "no host memory for the slabs' first edges");
      free(pair);
      free(pos);
    }
    call->seconds_kernel += one.seconds_kernel;
    call->seconds_transfer += one.seconds_transfer;
    if (one.peak_bytes > call->peak_bytes) call->peak_bytes = one.peak_bytes;
    for (int i = 0; i < one.n_stages; ++i) add_stage(call, one.stages[i].name, one.stages[i].seconds);
    if (rc != VICK_OK) memcpy(call->message, one.message, sizeof call->message);
  }
  free(rho);
  free(lab);
  free(rank);
  free(pa);
  free(up);
  free(mx);
  free(de);
  return rc;
}

/* A later pass over slab s: the k-th distances are known, so each task
 * first sets apart the rows its region cannot prove exact, which go to
 * regions around their k-th-distance balls (the lists made again are
 * the same lists, whatever region proves them). */
static int run_slab_known(slab_job *j, int dev, int64_t s, unsigned char *is_row) {
  const vic_data *x = j->x;
  const int32_t k = j->k;
  vick_call *call = &j->call[dev];
  const int64_t n_own = j->start[s + 1] - j->start[s];
  if (n_own == 0) return VICK_OK;
  int64_t *rows = malloc((size_t)n_own * sizeof *rows);
  int64_t *tmp = malloc((size_t)n_own * sizeof *tmp);
  unsigned char *ex = malloc((size_t)n_own);
  if (!rows || !tmp || !ex) {
    free(rows); free(tmp); free(ex);
    return vick_fail_host(call, VICK_NOMEM, "no host memory for a slab's rows");
  }
  /* the rows the density pass answered past the slab's first region are
   * the host's (their lists are cached) */
  int64_t n_dev = 0;
  for (int64_t t = 0; t < n_own; ++t) {
    const int64_t i = j->order[j->start[s] + t];
    if (!j->cached || !j->cached[i]) rows[n_dev++] = i;
  }
  const int axis = j->plan->axis;
  const double mid = 0.5 * (j->plan->cut[s] + j->plan->cut[s + 1]);
  slab_task task[SLAB_TASKS];
  int n_tasks = n_dev > 0, done = 0, rc = VICK_OK;
  task[0].off = 0;
  task[0].count = n_dev;
  vic__slab_region(x, j->plan, s, j->h0, &task[0].reg);
  while (rc == VICK_OK && n_tasks > 0) {
    slab_task tk = task[--n_tasks];
    int64_t *tr = rows + tk.off;
    const int64_t n_rows = tk.count;
    if (++done > SLAB_TASKS) { rc = vick_fail_host(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    int64_t n_ex = 0, lo_n = 0, hi_n = 0;
    vic_region lo_reg, hi_reg;
    vic__slab_split(x, j->rk, &tk.reg, axis, mid, tr, n_rows, tmp, ex, &n_ex, &lo_n, &lo_reg, &hi_n, &hi_reg);
    if (n_tasks + 3 > SLAB_TASKS) { rc = vick_fail_host(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    if (hi_n) task[n_tasks++] = (slab_task){tk.off + n_ex + lo_n, hi_n, hi_reg};
    if (lo_n) task[n_tasks++] = (slab_task){tk.off + n_ex, lo_n, lo_reg};
    if (n_ex == 0) continue;
    j->retried[dev] += n_rows - n_ex;
    for (int64_t t = 0; t < n_ex; ++t) is_row[tr[t]] = 1;
    int64_t s_lo, s_hi, m = 0;
    slab_span(j, &tk.reg, &s_lo, &s_hi);
    float *pts = NULL;
    uint32_t *gid = NULL;
    const double tg = vic__now();
    if (gather(j, &tk.reg, tr, n_ex, s_lo, s_hi, is_row, &pts, &gid, &m) != 0)
      rc = vick_fail_host(call, VICK_NOMEM, "no host memory to gather a slab");
    j->t_gather[dev] += vic__now() - tg;
    for (int64_t t = 0; t < n_ex; ++t) is_row[tr[t]] = 0;
    if (rc != VICK_OK) break;
    if (m <= k) { /* a tiny region: the whole set is the region */
      free(pts);
      free(gid);
      for (int jj = 0; jj < 3; ++jj) { tk.reg.lo[jj] = -INFINITY; tk.reg.hi[jj] = INFINITY; }
      tk.count = n_ex;
      task[n_tasks++] = tk;
      continue;
    }
    const size_t need = vic__slab_bytes(m, n_ex, k, x->d) + vic__slab_pass_bytes(x->n);
    if (need > j->budget) {
      snprintf(call->message, sizeof call->message,
               "a slab needs %.0f MiB of device memory (%lld points with its halo, %lld rows); the budget is %.0f MiB: "
               "raise it to at least %.0f MiB", need / 1048576.0, (long long)m, (long long)n_ex,
               j->budget / 1048576.0, need / 1048576.0);
      rc = VICK_NOMEM;
    }
    const double td = vic__now();
    if (rc == VICK_OK) rc = known_device(j, dev, tr, n_ex, pts, gid, m);
    j->t_device[dev] += vic__now() - td;
    free(pts);
    free(gid);
  }
  free(rows);
  free(tmp);
  free(ex);
  return rc;
}

static void slab_slot(void *arg, int slot) {
  slab_job *j = arg;
  unsigned char *is_row = calloc((size_t)j->x->n, 1);
  if (!is_row) {
    j->rc[slot] = vick_fail_host(&j->call[slot], VICK_NOMEM, "no host memory for slab flags");
    return;
  }
  const char *stage = j->pass ? "peaks" : "density";
  for (int64_t s = slot; s < j->plan->n_slabs && j->rc[slot] == VICK_OK; s += j->count) {
    j->rc[slot] = j->pass ? run_slab_known(j, slot, s, is_row) : run_slab(j, slot, s, is_row);
    if (j->rc[slot] == VICK_OK && j->bad_row[slot] >= 0) break;
    vick_call *cs = &j->call[slot];
    if (j->rc[slot] == VICK_OK && cs->progress && cs->progress(cs->user, stage, (double)(s + 1) / j->plan->n_slabs))
      j->rc[slot] = vick_fail_host(cs, VICK_CANCELLED, "cancelled during the slabs");
  }
  free(is_row);
}

/* Ids bucketed by slab: start (S + 1), order (n), ascending ids in each. */
static vic_status bucket(vic_ctx *c, const vic_data *x, const vic_slab_plan *p, int64_t **start, int64_t **order) {
  const int64_t n = x->n, S = p->n_slabs;
  int64_t *slab = vic__malloc(c, (size_t)n * sizeof *slab, "slab of each point");
  *start = slab ? vic__calloc(c, (size_t)S + 1, sizeof **start, "slab starts") : NULL;
  *order = *start ? vic__malloc(c, (size_t)n * sizeof **order, "points by slab") : NULL;
  if (!*order) { free(slab); free(*start); *start = NULL; return VIC_E_NOMEM; }
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) slab[i] = vic__slab_of(p, vic__slab_coord(x, i, p->axis));
  for (int64_t i = 0; i < n; ++i) (*start)[slab[i] + 1]++;
  for (int64_t s = 0; s < S; ++s) (*start)[s + 1] += (*start)[s];
  int64_t *fill = vic__malloc(c, (size_t)S * sizeof *fill, "slab fill");
  if (!fill) { free(slab); free(*start); free(*order); *start = *order = NULL; return VIC_E_NOMEM; }
  memcpy(fill, *start, (size_t)S * sizeof *fill);
  for (int64_t i = 0; i < n; ++i) (*order)[fill[slab[i]]++] = i;
  free(fill);
  free(slab);
  return VIC_OK;
}

/* A first halo: twice the k-th-neighbour spacing of a uniform set in the
 * bounding box (regions grow where that is short). */
static double first_halo(const vic_data *x, int32_t k) {
  double vol = 1;
  int dims = 0;
  for (int j = 0; j < x->d; ++j) {
    double a = INFINITY, b = -INFINITY;
    for (int64_t i = 0; i < x->n; i += 1 + x->n / 100000) {
      double v = vic__slab_coord(x, i, j);
      if (v < a) a = v;
      if (v > b) b = v;
    }
    if (b > a) { vol *= b - a; ++dims; }
  }
  if (!dims) return 0;
  return 2 * pow(vol * (double)k / (double)x->n, 1.0 / dims);
}

struct vic_slabs {
  slab_job j;
  vic_slab_plan plan;
  int64_t *start, *order;
  int levels;
};

vic_status vic__slabs_open(vic_ctx *c, const vic_data *x, int32_t k, size_t budget, size_t reserve, int later,
                           vic_slabs **out) {
  *out = NULL;
  int first = 0, count = 1;
  vic_status s = vic__cuda_devices(c, &first, &count);
  if (s != VIC_OK) return s;
  int64_t S = budget > reserve ? vic__slab_count(x->n, k, x->d, budget - reserve) : 0;
  if (S > 0 && S < count) S = count; /* every device gets a slab */
  if (S == 0)
    return vic__fail(c, VIC_E_NOMEM, "the slab runs need more than %.0f MiB of device memory (the budget is %.0f MiB)",
                     (vic__slab_bytes(3, 2, k, x->d) + reserve) / 1048576.0, budget / 1048576.0);
  vic_slabs *z = vic__calloc(c, 1, sizeof *z, "slab runs");
  if (!z) return VIC_E_NOMEM;
  if ((s = vic__slab_plan_make(c, x, S, &z->plan)) != VIC_OK) { free(z); return s; }
  if ((s = bucket(c, x, &z->plan, &z->start, &z->order)) != VIC_OK) { vic__slab_plan_free(&z->plan); free(z); return s; }
  if (count > S) count = (int)S;
  slab_job *j = &z->j;
  j->c = c;
  j->x = x;
  j->k = k;
  j->budget = budget;
  j->plan = &z->plan;
  j->start = z->start;
  j->order = z->order;
  j->h0 = first_halo(x, k);
  j->first = first;
  j->count = count;
  j->threads = 1;
#ifdef _OPENMP
  j->threads = omp_get_max_threads() / count > 1 ? omp_get_max_threads() / count : 1;
  z->levels = omp_get_max_active_levels();
  if (count > 1 && z->levels < 2) omp_set_max_active_levels(2);
#endif
  j->call = vic__calloc(c, (size_t)count, sizeof *j->call, "per-device calls");
  j->rc = j->call ? vic__calloc(c, (size_t)count, sizeof *j->rc, "per-device codes") : NULL;
  j->bad_row = j->rc ? vic__malloc(c, (size_t)count * sizeof *j->bad_row, "per-device rows") : NULL;
  j->retried = j->bad_row ? vic__calloc(c, (size_t)count, sizeof *j->retried, "per-device retries") : NULL;
  j->edges = j->retried ? vic__calloc(c, (size_t)count, sizeof *j->edges, "per-device edges") : NULL;
  if (!j->edges) { vic__slabs_close(z); return VIC_E_NOMEM; }
  j->left = vic__calloc(c, (size_t)count, sizeof *j->left, "per-device leftover rows");
  j->t_gather = j->left ? vic__calloc(c, (size_t)count, sizeof *j->t_gather, "per-device times") : NULL;
  j->t_device = j->t_gather ? vic__calloc(c, (size_t)count, sizeof *j->t_device, "per-device times") : NULL;
  if (!j->t_device) { vic__slabs_close(z); return VIC_E_NOMEM; }
  if (later) {
    j->cache = vic__calloc(c, (size_t)count, sizeof *j->cache, "per-device retried rows");
    j->cached = j->cache ? vic__calloc(c, (size_t)x->n, 1, "retried row flags") : NULL;
    if (!j->cached) { vic__slabs_close(z); return VIC_E_NOMEM; }
  }
  for (int d = 0; d < count; ++d) {
    vic__cuda_call_init(c, &j->call[d], first + d, budget, count > 1);
    j->bad_row[d] = -1;
  }
  vic__log(c, VIC_LOG_INFO, "%lld slabs along axis %d on %d device%s (budget %.0f MiB each)", (long long)S,
           z->plan.axis, count, count == 1 ? "" : "s", budget / 1048576.0);
  *out = z;
  return VIC_OK;
}

void vic__slabs_close(vic_slabs *z) {
  if (!z) return;
  slab_job *j = &z->j;
#ifdef _OPENMP
  if (j->count > 1) omp_set_max_active_levels(z->levels);
#endif
  if (j->edges)
    for (int d = 0; d < j->count; ++d) { free(j->edges[d].pair); free(j->edges[d].pos); }
  free(j->edges);
  if (j->cache)
    for (int d = 0; d < j->count; ++d) { free(j->cache[d].row); free(j->cache[d].ids); free(j->cache[d].dist); }
  free(j->cache);
  free(j->cached);
  if (j->left)
    for (int d = 0; d < j->count; ++d) free(j->left[d].row);
  free(j->left);
  free(j->t_gather);
  free(j->t_device);
  free(j->call);
  free(j->rc);
  free(j->bad_row);
  free(j->retried);
  free(z->start);
  free(z->order);
  vic__slab_plan_free(&z->plan);
  free(z);
}

/* The leftover rows of the density pass, in groups: rows[off[g],
 * off[g+1]) in region reg[g], group g on the device of slot g % count. */
typedef struct {
  slab_job *j;
  const int64_t *rows, *off;
  const vic_region *reg;
  int groups;
} leftover_job;

static void leftover_slot(void *arg, int slot) {
  leftover_job *lj = arg;
  slab_job *j = lj->j;
  unsigned char *is_row = calloc((size_t)j->x->n, 1);
  if (!is_row) {
    j->rc[slot] = vick_fail_host(&j->call[slot], VICK_NOMEM, "no host memory for leftover flags");
    return;
  }
  for (int g = slot; g < lj->groups && j->rc[slot] == VICK_OK; g += j->count)
    j->rc[slot] = run_rows(j, slot, lj->rows + lj->off[g], lj->off[g + 1] - lj->off[g], &lj->reg[g], NAN, is_row, 0);
  free(is_row);
}

typedef struct {
  double v;
  int64_t i;
} row_at;

static int by_coord(const void *a, const void *b) {
  const row_at *p = a, *q = b;
  return p->v < q->v ? -1 : p->v > q->v ? 1 : (p->i > q->i) - (p->i < q->i);
}

#define LEFTOVER_GROUPS 64

/* The density pass's leftover rows of every slab, answered in regions
 * holding their k-th-distance balls (the upper bounds their slabs gave):
 * the rows in order along the cut axis, in as few runs of consecutive
 * rows as let every run's region fit a device (one, mostly), the runs
 * spread over the devices; where even 64 do not fit, slab by slab in two
 * regions each (below and above the slab's middle) on the first. */
static int run_leftovers(slab_job *j) {
  const vic_data *x = j->x;
  const int64_t n = x->n;
  int64_t L = 0;
  for (int d = 0; d < j->count; ++d) L += j->left[d].count;
  if (L == 0) return VICK_OK;
  vick_call *call = &j->call[0];
  int64_t *rows = malloc((size_t)L * sizeof *rows), *tmp = malloc((size_t)L * sizeof *tmp);
  int64_t *scratch = malloc((size_t)L * sizeof *scratch);
  unsigned char *is_row = calloc((size_t)n, 1), *flags = malloc((size_t)L);
  int rc = rows && tmp && scratch && is_row && flags ? VICK_OK : vick_fail_host(call, VICK_NOMEM, "no host memory for leftovers");
  int64_t off[LEFTOVER_GROUPS + 1];
  vic_region reg[LEFTOVER_GROUPS];
  int groups = 0;
  if (rc == VICK_OK) {
    int64_t a = 0;
    for (int d = 0; d < j->count; ++d) {
      memcpy(rows + a, j->left[d].row, (size_t)j->left[d].count * sizeof *rows);
      a += j->left[d].count;
    }
    row_at *ra = malloc((size_t)L * sizeof *ra);
    if (!ra) rc = vick_fail_host(call, VICK_NOMEM, "no host memory for leftovers");
    for (int64_t t = 0; ra && t < L; ++t) ra[t] = (row_at){vic__slab_coord(x, rows[t], j->plan->axis), rows[t]};
    if (ra) qsort(ra, (size_t)L, sizeof *ra, by_coord);
    for (int64_t t = 0; ra && t < L; ++t) rows[t] = ra[t].i;
    free(ra);
    const size_t extra = (j->mass ? (size_t)n * 4 : 0) + (j->cache ? vic__slab_pass_bytes(n) : 0);
    for (int G = 1; rc == VICK_OK && G <= LEFTOVER_GROUPS && G <= L && !groups; G *= 2) {
      int64_t m[LEFTOVER_GROUPS];
      for (int g = 0; g < G; ++g) {
        off[g] = L * g / G;
        off[g + 1] = L * (g + 1) / G;
        for (int64_t t = off[g]; t < off[g + 1]; ++t) {
          vic_region b;
          vic__ball_region(x, rows[t], j->rk[rows[t]], &b);
          if (t == off[g]) reg[g] = b; else vic__region_union(&reg[g], &b);
        }
        m[g] = 0;
      }
      for (int g = 0; g < G; ++g) {
        int64_t c = 0;
#pragma omp parallel for schedule(static) reduction(+ : c)
        for (int64_t i = 0; i < n; ++i) c += vic__region_holds(&reg[g], x, i);
        m[g] = c;
      }
      int fits = 1;
      int64_t most = 0;
      for (int g = 0; g < G; ++g) {
        fits &= vic__slab_bytes(m[g], off[g + 1] - off[g], j->k, x->d) + extra <= j->budget;
        if (m[g] > most) most = m[g];
      }
      vic__log(j->c, VIC_LOG_INFO, "%lld leftover rows of the slabs in %d region%s of at most %lld points%s",
               (long long)L, G, G == 1 ? "" : "s", (long long)most, fits ? "" : ": too many for a device");
      if (fits) groups = G;
    }
  }
  if (rc == VICK_OK && groups) {
    leftover_job lj = {j, rows, off, reg, groups};
    for (int d = 0; d < j->count; ++d) j->rc[d] = VICK_OK;
    const int slots = groups < j->count ? groups : j->count;
    if (slots == 1) leftover_slot(&lj, 0);
    else vic__cuda_parallel(slots, leftover_slot, &lj);
    for (int d = 0; d < slots && rc == VICK_OK; ++d) rc = j->rc[d];
    if (rc != VICK_OK)
      for (int d = 0; d < slots; ++d)
        if (j->rc[d] != VICK_OK) { j->rc[0] = j->rc[d]; memcpy(&j->call[0].message, &j->call[d].message, sizeof j->call[0].message); break; }
  } else if (rc == VICK_OK) {
    for (int64_t s = 0; s < j->plan->n_slabs && rc == VICK_OK; ++s) {
      int64_t c = 0;
      for (int64_t t = 0; t < L; ++t)
        if (vic__slab_of(j->plan, vic__slab_coord(x, rows[t], j->plan->axis)) == s) tmp[c++] = rows[t];
      if (!c) continue;
      vic_region sreg, lo, hi;
      vic__slab_region(x, j->plan, s, j->h0, &sreg);
      const double mid = 0.5 * (j->plan->cut[s] + j->plan->cut[s + 1]);
      int64_t ne = 0, lo_n = 0, hi_n = 0;
      vic__slab_split(x, j->rk, &sreg, j->plan->axis, mid, tmp, c, scratch, flags, &ne, &lo_n, &lo, &hi_n, &hi);
      if (ne) rc = run_rows(j, 0, tmp, ne, &sreg, mid, is_row, 0);
      if (rc == VICK_OK && lo_n) rc = run_rows(j, 0, tmp + ne, lo_n, &lo, mid, is_row, 0);
      if (rc == VICK_OK && hi_n) rc = run_rows(j, 0, tmp + ne + lo_n, hi_n, &hi, mid, is_row, 0);
    }
  }
  free(rows);
  free(tmp);
  free(scratch);
  free(is_row);
  free(flags);
  return rc;
}

/* Runs the job's pass on every device; the first failure's status. */
static vic_status run_pass_timed(vic_slabs *z, const char *what);
static vic_status run_pass(vic_slabs *z, const char *what) {
  slab_job *j = &z->j;
  double k0 = 0, k1 = 0, gmax = 0, dmax = 0;
  for (int d = 0; d < j->count; ++d) {
    j->t_gather[d] = j->t_device[d] = 0;
    if (j->call[d].seconds_kernel > k0) k0 = j->call[d].seconds_kernel;
  }
  const double t0 = vic__now();
  vic_status s = run_pass_timed(z, what);
  for (int d = 0; d < j->count; ++d) {
    if (j->call[d].seconds_kernel > k1) k1 = j->call[d].seconds_kernel;
    if (j->t_gather[d] > gmax) gmax = j->t_gather[d];
    if (j->t_device[d] > dmax) dmax = j->t_device[d];
  }
  vic__log(j->c, VIC_LOG_INFO, "%s: %.3f s over %lld slabs on %d device%s (the busiest: host gathers %.3f s, device "
           "calls %.3f s; kernels %.3f s)", what, vic__now() - t0, (long long)z->plan.n_slabs, j->count,
           j->count == 1 ? "" : "s", gmax, dmax, k1 - k0);
  return s;
}

static vic_status run_pass_timed(vic_slabs *z, const char *what) {
  slab_job *j = &z->j;
  for (int d = 0; d < j->count; ++d) j->rc[d] = VICK_OK;
  if (j->count == 1) slab_slot(j, 0); /* the gathers keep all host threads */
  else vic__cuda_parallel(j->count, slab_slot, j);
  for (int d = 0; d < j->count; ++d)
    if (j->rc[d] != VICK_OK) return vic__kernel_status(j->c, j->rc[d], &j->call[d], what);
  if (!j->pass) {
    for (int d = 0; d < j->count; ++d)
      if (j->bad_row[d] >= 0) return VIC_OK;
    const int rc = run_leftovers(j);
    return rc == VICK_OK ? VIC_OK : vic__kernel_status(j->c, rc, &j->call[0], what);
  }
  if (!j->cache) return VIC_OK;
  /* the cached rows, on the host */
  for (int d = 0; d < j->count; ++d) {
    const row_cache *rc = &j->cache[d];
    if (j->pass == PASS_LINKS)
      vic__rows_links(rc->row, rc->count, j->k, rc->ids, rc->dist, j->x->n, j->rho, j->parent, j->delta, j->up,
                      j->is_max);
    else if (vic__rows_edges(rc->row, rc->count, j->k, rc->ids, j->x->n, j->rho, j->lab, j->rank, &j->edges[0].pair,
                             &j->edges[0].pos, &j->edges[0].count, &j->edges[0].cap) != 0)
      return vic__fail(j->c, VIC_E_NOMEM, "no host memory for the boundary edges of the retried rows");
  }
  return VIC_OK;
}

vic_status vic__slabs_density(vic_slabs *z, const float *mass, double unit_mass, vic_sph_convention sph, float *knn,
                              float *sph_density, float *h, float *rk, int32_t *ids, float *dist, int64_t *bad_row) {
  slab_job *j = &z->j;
  *bad_row = -1;
  j->pass = 0;
  j->mass = mass;
  j->p = vic__density_params(j->x->d, unit_mass, sph);
  j->knn = knn;
  j->sph = sph_density;
  j->h = h;
  j->rk = rk;
  j->ids = ids;
  j->dist = dist;
  vic_status s = run_pass(z, "slab density");
  for (int d = 0; d < j->count; ++d)
    if (j->bad_row[d] >= 0 && (*bad_row < 0 || j->bad_row[d] < *bad_row)) *bad_row = j->bad_row[d];
  return s;
}

vic_status vic__slabs_links(vic_slabs *z, const float *rho, float *rk, int32_t *parent, float *delta, int32_t *up,
                            int32_t *is_max) {
  slab_job *j = &z->j;
  j->pass = PASS_LINKS;
  j->rho = rho;
  j->rk = rk;
  j->parent = parent;
  j->delta = delta;
  j->up = up;
  j->is_max = is_max;
  return run_pass(z, "slab links");
}

vic_status vic__slabs_edges(vic_slabs *z, const float *rho, float *rk, const int32_t *lab, const int32_t *rank,
                            int64_t n_max, uint64_t **pair, uint64_t **pos, int64_t *count) {
  slab_job *j = &z->j;
  *pair = *pos = NULL;
  *count = 0;
  j->pass = PASS_EDGES;
  j->rho = rho;
  j->rk = rk;
  j->lab = lab;
  j->rank = rank;
  j->n_max = n_max;
  vic_status s = run_pass(z, "slab edges");
  if (s != VIC_OK) return s;
  int64_t total = 0;
  for (int d = 0; d < j->count; ++d) total += j->edges[d].count;
  uint64_t *a = vic__malloc(j->c, (size_t)total * sizeof *a + 8, "first edges of the slabs");
  uint64_t *b = a ? vic__malloc(j->c, (size_t)total * sizeof *b + 8, "first edges of the slabs") : NULL;
  if (!b) { free(a); return VIC_E_NOMEM; }
  int64_t at = 0;
  for (int d = 0; d < j->count; ++d) {
    edge_list *l = &j->edges[d];
    if (l->count) {
      memcpy(a + at, l->pair, (size_t)l->count * sizeof *a);
      memcpy(b + at, l->pos, (size_t)l->count * sizeof *b);
    }
    at += l->count;
    free(l->pair);
    free(l->pos);
    memset(l, 0, sizeof *l);
  }
  *pair = a;
  *pos = b;
  *count = total;
  return VIC_OK;
}

void vic__slabs_stats(const vic_slabs *z, vic_slab_stats *st) {
  const slab_job *j = &z->j;
  memset(st, 0, sizeof *st);
  st->slabs = z->plan.n_slabs;
  st->devices = j->count;
  for (int d = 0; d < j->count; ++d) {
    st->retried += j->retried[d];
    if (j->call[d].peak_bytes > st->peak_bytes) st->peak_bytes = j->call[d].peak_bytes;
    if (j->call[d].seconds_kernel > st->seconds_kernel) st->seconds_kernel = j->call[d].seconds_kernel;
    if (j->call[d].seconds_transfer > st->seconds_transfer) st->seconds_transfer = j->call[d].seconds_transfer;
  }
}

vic_status vic__slab_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                             vic_sph_convention sph, size_t budget, float *knn, float *sph_density, float *h, float *rk,
                             int32_t *ids, float *dist, int64_t *bad_row, vic_slab_stats *st) {
  memset(st, 0, sizeof *st);
  *bad_row = -1;
  vic_slabs *z = NULL;
  vic_status s = vic__slabs_open(c, x, k, budget, 0, 0, &z);
  if (s != VIC_OK) return s;
  s = vic__slabs_density(z, mass, unit_mass, sph, knn, sph_density, h, rk, ids, dist, bad_row);
  vic__slabs_stats(z, st);
  vic__slabs_close(z);
  return s;
}

#else

size_t vic__density_budget(vic_ctx *c, int device) {
  (void)device;
  return c->opt.device_memory_budget;
}

vic_status vic__slab_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                             vic_sph_convention sph, size_t budget, float *knn, float *sph_density, float *h, float *rk,
                             int32_t *ids, float *dist, int64_t *bad_row, vic_slab_stats *st) {
  (void)x; (void)k; (void)mass; (void)unit_mass; (void)sph; (void)budget; (void)knn; (void)sph_density; (void)h;
  (void)rk; (void)ids; (void)dist;
  memset(st, 0, sizeof *st);
  *bad_row = -1;
  return vic__cuda_probe(c);
}
#endif
