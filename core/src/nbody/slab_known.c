/* The later passes of the slab runs (slab_job.h): with every k-th
 * distance known, each slab's lists are made again on its device and
 * consumed there -- links (vick_slab_links) or boundary edges
 * (vick_slab_edges) -- and only per-point results come back. */
#include "backend_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VIC_WITH_CUDA
#include "slab_job.h"
#include "cuda_internal.h"
#include "vic_kernels_peaks.h"

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
  int rc = ok ? VICK_OK : vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's per-point values");
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
        rc = vic__slab_fail(&one, VICK_NOMEM, "no host memory for the slabs' first edges");
      free(pair);
      free(pos);
    }
    call->seconds_kernel += one.seconds_kernel;
    call->seconds_transfer += one.seconds_transfer;
    if (one.peak_bytes > call->peak_bytes) call->peak_bytes = one.peak_bytes;
    for (int i = 0; i < one.n_stages; ++i) vic__slab_add_stage(call, one.stages[i].name, one.stages[i].seconds);
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
int vic__slab_known(slab_job *j, int dev, int64_t s, unsigned char *is_row) {
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
    return vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's rows");
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
    if (++done > SLAB_TASKS) { rc = vic__slab_fail(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    int64_t n_ex = 0, lo_n = 0, hi_n = 0;
    vic_region lo_reg, hi_reg;
    vic__slab_split(x, j->rk, &tk.reg, axis, mid, tr, n_rows, tmp, ex, &n_ex, &lo_n, &lo_reg, &hi_n, &hi_reg);
    if (n_tasks + 3 > SLAB_TASKS) { rc = vic__slab_fail(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    if (hi_n) task[n_tasks++] = (slab_task){tk.off + n_ex + lo_n, hi_n, hi_reg};
    if (lo_n) task[n_tasks++] = (slab_task){tk.off + n_ex, lo_n, lo_reg};
    if (n_ex == 0) continue;
    j->retried[dev] += n_rows - n_ex;
    for (int64_t t = 0; t < n_ex; ++t) is_row[tr[t]] = 1;
    int64_t s_lo, s_hi, m = 0;
    vic__slab_span(j, &tk.reg, &s_lo, &s_hi);
    float *pts = NULL;
    uint32_t *gid = NULL;
    const double tg = vic__now();
    if (vic__slab_gather(j, &tk.reg, tr, n_ex, s_lo, s_hi, is_row, &pts, &gid, &m) != 0)
      rc = vic__slab_fail(call, VICK_NOMEM, "no host memory to gather a slab");
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

#else
/* no slab runs without CUDA (density_slabs.c answers VIC_E_NODEVICE) */
typedef int vic__slab_known_unused;
#endif
