/* The later passes of the slab runs (slab_job.h): each slab's lists --
 * kept on its device since the density pass where the budget held them,
 * else made again there with every k-th distance known -- are consumed
 * on the device -- links (vick_slab_links) or boundary edges
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

/* The pass's values by id on slot dev's device, uploaded at its first
 * call of the pass where two or more of its slabs' lists are kept there
 * (each of those calls would upload all n values; a slab made again
 * uploads only its region's), else NULL: each call uploads its own, as
 * also where they do not fit beside the kept lists. */
static const vick_by_id *held_values(slab_job *j, int dev) {
  if (!j->held || !j->kept) return NULL;
  if (j->held[dev]) return j->held[dev];
  int64_t kept = 0;
  for (int64_t s = dev; s < j->plan->n_slabs; s += j->count) kept += j->kept[s] != NULL;
  if (kept < 2) return NULL;
  const int64_t n = j->x->n;
  const size_t bytes = (size_t)n * (j->pass == PASS_EDGES ? 8 : 4);
  if (!vic__slab_room(j, dev, bytes + vic__slab_pass_bytes(n))) return NULL;
  vick_call one;
  vic__slab_call_begin(j, dev, &one);
  const double td = vic__now();
  vick_by_id *v = NULL;
  const int rc = vick_by_id_make(&one, n, j->rho, j->pass == PASS_EDGES ? j->lab : NULL, &v);
  j->t_device[dev] += vic__now() - td;
  vic__slab_call_end(j, dev, &one, VICK_OK); /* a failure leaves the calls to upload their own */
  if (rc != VICK_OK) {
    vic__log(j->c, VIC_LOG_DEBUG, "slab pass: values by id not held on device %d (%s)", j->call[dev].device,
             one.message);
    return NULL;
  }
  j->held[dev] = v;
  return v;
}

/* A later pass's per-row results put by id: links of rows tr[0, n)
 * (those the host holds, cached, left to it); the density ranks they
 * take to the device (-1 for the cached).  The deltas: de, or for a
 * slab's kept lists (de NULL) the distances of the parents' places col in
 * the rows' lists -- from the whole set's lists j->dist by id where the
 * caller asked for them, else made again from the coordinates
 * (vic__slab_list_dist). */
static void place_links(slab_job *j, const int64_t *tr, int64_t n, const int32_t *pa, const float *de,
                        const int32_t *col, const int32_t *up, const int32_t *mx) {
  const int64_t k = j->k;
#pragma omp parallel for schedule(static) num_threads(j->threads)
  for (int64_t t = 0; t < n; ++t) {
    const int64_t i = tr[t];
    if (j->cached && j->cached[i]) continue; /* the host's */
    j->parent[i] = pa[t];
    j->delta[i] = de                 ? de[t]
                  : col[t] < 0       ? 0.f
                  : j->dist          ? j->dist[i * k + col[t]]
                                     : vic__slab_list_dist(j->x, i, pa[t]);
    j->up[i] = up[t];
    j->is_max[i] = mx[t];
  }
}

static void gather_ranks(const slab_job *j, const int64_t *tr, int64_t n, int32_t *rank) {
#pragma omp parallel for schedule(static) num_threads(j->threads)
  for (int64_t t = 0; t < n; ++t) rank[t] = j->cached && j->cached[tr[t]] ? -1 : j->rank[tr[t]];
}

/* One gathered region of a later pass on its device: the per-point
 * values of its points gathered by id, the device call, the results
 * placed by id (links) or appended (edges).  Rows whose lists the host
 * holds (cached) may be among them: their results are not used. */
static int known_device(slab_job *j, int dev, const int64_t *tr, int64_t n_rows, const float *pts,
                        const uint32_t *gid, int64_t m) {
  const vic_data *x = j->x;
  vick_call *call = &j->call[dev];
  /* the region's values by id on the host, unless the device holds them all */
  const vick_by_id *held = held_values(j, dev);
  float *rho = held ? NULL : malloc((size_t)m * sizeof *rho);
  int32_t *lab = NULL, *rank = NULL, *pa = NULL, *up = NULL, *mx = NULL;
  float *de = NULL;
  int ok = held || rho != NULL;
  if (ok && j->pass == PASS_EDGES) {
    lab = held ? NULL : malloc((size_t)m * sizeof *lab);
    rank = malloc((size_t)n_rows * sizeof *rank);
    ok = (held || lab) && rank;
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
    double tp = vic__now();
    if (!held) {
#pragma omp parallel for schedule(static) num_threads(j->threads)
      for (int64_t t = 0; t < m; ++t) {
        rho[t] = j->rho[gid[t]];
        if (lab) lab[t] = j->lab[gid[t]];
      }
    }
    if (rank) gather_ranks(j, tr, n_rows, rank);
    j->t_place[dev] += vic__now() - tp;
    vick_points vp = {pts, m, x->d, x->d, VICK_METRIC_L2, x->box};
    vick_call one;
    vic__slab_call_begin(j, dev, &one);
    if (j->pass == PASS_LINKS) {
      rc = vick_slab_links(&one, &vp, j->k, n_rows, gid, x->n, rho, held, pa, de, up, mx);
      tp = vic__now();
      if (rc == VICK_OK) place_links(j, tr, n_rows, pa, de, NULL, up, mx);
      j->t_place[dev] += vic__now() - tp;
    } else {
      uint64_t *pair = NULL, *pos = NULL;
      int64_t u = 0;
      rc = vick_slab_edges(&one, &vp, j->k, n_rows, gid, x->n, rho, lab, held, rank, j->n_max, &pair, &pos, &u);
      tp = vic__now();
      if (rc == VICK_OK && edges_append(&j->edges[dev], pair, pos, u) != 0)
        rc = vic__slab_fail(&one, VICK_NOMEM, "no host memory for the slabs' first edges");
      free(pair);
      free(pos);
      j->t_place[dev] += vic__now() - tp;
    }
    vic__slab_call_end(j, dev, &one, rc);
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

/* A later pass over slab s whose lists stayed on its device: every own
 * row in the order the density pass took them; the rows whose lists the
 * host holds (cached: their slab's first region could not prove them)
 * are left out -- their links not placed, no edges from them. */
static int known_kept(slab_job *j, int dev, int64_t s) {
  const vick_by_id *held = held_values(j, dev); /* before the call: its budget leaves them out */
  const vick_slab_lists *l = j->kept[s];
  if (!l) return VICK_NOMEM; /* given back for the values' room: made again */
  const int64_t *own = j->order + j->start[s];
  const int64_t n_own = j->start[s + 1] - j->start[s]; /* the kept lists' rows */
  vick_call one;
  vic__slab_call_begin(j, dev, &one);
  int rc = VICK_OK;
  const double td = vic__now();
  if (j->pass == PASS_LINKS) {
    /* a slab's rows' results (huge-page advice: few faults) */
    int32_t *pa = vic__malloc_huge((size_t)n_own * sizeof *pa), *up = vic__malloc_huge((size_t)n_own * sizeof *up);
    int32_t *mx = vic__malloc_huge((size_t)n_own * sizeof *mx), *col = vic__malloc_huge((size_t)n_own * sizeof *col);
    if (!pa || !up || !mx || !col) rc = vic__slab_fail(&one, VICK_NOMEM, "no host memory for a slab's links");
    if (rc == VICK_OK) rc = vick_slab_links_kept(&one, l, j->x->n, j->rho, held, pa, col, up, mx);
    const double tp = vic__now();
    if (rc == VICK_OK) place_links(j, own, n_own, pa, NULL, col, up, mx);
    free(pa);
    free(up);
    free(mx);
    free(col);
    j->t_place[dev] += vic__now() - tp;
  } else {
    double tp = vic__now();
    int32_t *rank = vic__malloc_huge((size_t)n_own * sizeof *rank);
    if (!rank) rc = vic__slab_fail(&one, VICK_NOMEM, "no host memory for a slab's ranks");
    else gather_ranks(j, own, n_own, rank);
    uint64_t *pair = NULL, *pos = NULL;
    int64_t u = 0;
    j->t_place[dev] += vic__now() - tp;
    if (rc == VICK_OK)
      rc = vick_slab_edges_kept(&one, l, j->x->n, j->rho, j->lab, held, rank, j->n_max, &pair, &pos, &u);
    tp = vic__now();
    if (rc == VICK_OK && edges_append(&j->edges[dev], pair, pos, u) != 0)
      rc = vic__slab_fail(&one, VICK_NOMEM, "no host memory for the slabs' first edges");
    free(pair);
    free(pos);
    free(rank);
    j->t_place[dev] += vic__now() - tp;
  }
  j->t_device[dev] += vic__now() - td;
  vic__slab_call_end(j, dev, &one, rc);
  return rc;
}

/* The later passes' scratch for a slab's rows. */
typedef struct {
  int64_t *tmp;
  unsigned char *ex;
  double mid;
} known_pass;

/* The k-th distances are known: the rows the task's region proves exact
 * are answered there, the others go to regions around their
 * k-th-distance balls (the lists made again are the same lists, whatever
 * region proves them). */
static int known_select(slab_job *j, int dev, slab_task *tk, int64_t *tr, slab_stack *st, int64_t *n_here,
                        void *user) {
  known_pass *u = user;
  int64_t n_ex = 0, lo_n = 0, hi_n = 0;
  vic_region lo_reg, hi_reg;
  vic__slab_split(j->x, j->rk, &tk->reg, j->plan->axis, u->mid, tr, tk->count, u->tmp, u->ex, &n_ex, &lo_n, &lo_reg,
                  &hi_n, &hi_reg);
  j->retried[dev] += tk->count - n_ex;
  int rc = VICK_OK;
  if (hi_n) rc = vic__slab_push(j, dev, st, (slab_task){tk->off + n_ex + lo_n, hi_n, hi_reg, 0});
  if (rc == VICK_OK && lo_n) rc = vic__slab_push(j, dev, st, (slab_task){tk->off + n_ex, lo_n, lo_reg, 0});
  *n_here = n_ex;
  return rc;
}

static int known_answer(slab_job *j, int dev, const slab_task *tk, int64_t *tr, int64_t n, const float *pts,
                        const uint32_t *gid, int64_t m, slab_stack *st, unsigned char *is_row, void *user) {
  (void)tk; (void)st; (void)is_row; (void)user;
  return known_device(j, dev, tr, n, pts, gid, m);
}

/* A later pass over slab s: from its kept lists, or its lists made again
 * region by region. */
int vic__slab_known(slab_job *j, int dev, int64_t s, unsigned char *is_row) {
  if (j->kept && j->kept[s] && (!vick_slab_lists_parked(j->kept[s]) || vic__slab_unpark(j, dev, s))) {
    const int rc = known_kept(j, dev, s);
    if (rc == VICK_OK) j->from_kept[dev]++;
    if (rc == VICK_OK && j->pass == PASS_EDGES) vic__slab_drop(j, dev, s); /* the last pass is done with them */
    if (rc != VICK_NOMEM) return rc;
    if (j->kept[s]) vic__slab_give_back(j, dev, s); /* no room beside the kept lists: made again */
  }
  vick_call *call = &j->call[dev];
  const int64_t n_own = j->start[s + 1] - j->start[s];
  if (n_own == 0) return VICK_OK;
  if (j->remade) j->remade[dev]++;
  const slab_gathered *g = j->gathered ? &j->gathered[s] : NULL;
  if (g && g->pts) { /* the density pass's gather of the slab's first region, all own rows first */
    const size_t need = vic__slab_bytes(g->m, n_own, j->k, j->x->d) + vic__slab_pass_bytes(j->x->n);
    if (!vic__slab_room(j, dev, need)) return vic__slab_too_big(j, dev, need, g->m, n_own);
    const double td = vic__now();
    const int rc = known_device(j, dev, j->order + j->start[s], n_own, g->pts, g->gid, g->m);
    j->t_device[dev] += vic__now() - td;
    return rc;
  }
  int64_t *rows = malloc((size_t)n_own * sizeof *rows);
  known_pass u = {malloc((size_t)n_own * sizeof *u.tmp), malloc((size_t)n_own),
                  0.5 * (j->plan->cut[s] + j->plan->cut[s + 1])};
  if (!rows || !u.tmp || !u.ex) {
    free(rows); free(u.tmp); free(u.ex);
    return vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's rows");
  }
  /* the rows the density pass answered past the slab's first region are
   * the host's (their lists are cached) */
  int64_t n_dev = 0;
  for (int64_t t = 0; t < n_own; ++t) {
    const int64_t i = j->order[j->start[s] + t];
    if (!j->cached || !j->cached[i]) rows[n_dev++] = i;
  }
  int rc = VICK_OK;
  if (n_dev > 0) {
    slab_task first = {0, n_dev, {0}, 0};
    vic__slab_region(j->x, j->plan, s, j->h0, &first.reg);
    const slab_pass ps = {known_select, known_answer, vic__slab_pass_bytes(j->x->n)};
    rc = vic__slab_tasks(j, dev, rows, &first, is_row, &ps, &u);
  }
  free(rows);
  free(u.tmp);
  free(u.ex);
  return rc;
}

#else
/* no slab runs without CUDA (density_slabs.c answers VIC_E_NODEVICE) */
typedef int vic__slab_known_unused;
#endif
