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
 * equals the one over all points.  Rows the slab's first region cannot
 * prove wait until all slabs are done (slab_leftovers.c); the passes of
 * density + peaks after the densities are slab_known.c's; all share the
 * job of slab_job.h. */
#include "density_slabs.h"
#include "backend_cuda.h"
#include "slab_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "density_cuda.h"
#include "vic_kernels_density.h"
#include "vic_kernels_peaks.h"
#include "slab_job.h"
#include "slab_rows.h"

size_t vic__density_budget(vic_ctx *c, int device) {
  if (c->opt.device_memory_budget) return c->opt.device_memory_budget;
  size_t f = 0, t = 0;
  if (vick_device_info(device, NULL, 0, &f, &t) != VICK_OK) return 0;
  return f / 10 * 9;
}

static int run_slab(slab_job *j, int dev, int64_t s, unsigned char *is_row) {
  vic_region reg;
  vic__slab_region(j->x, j->plan, s, j->h0, &reg);
  return vic__slab_rows(j, dev, j->order + j->start[s], j->start[s + 1] - j->start[s], &reg,
                        0.5 * (j->plan->cut[s] + j->plan->cut[s + 1]), is_row, s);
}

static void slab_slot(void *arg, int slot) {
  slab_job *j = arg;
#ifdef _OPENMP
  /* the device's parallel regions without a team size of their own (the
   * kernels' host loops) in its share too; a slot on a team's thread
   * (several devices) sets only that thread's */
  if (j->count > 1) omp_set_num_threads(j->threads);
#endif
  unsigned char *is_row = calloc((size_t)j->x->n, 1);
  if (!is_row) {
    j->rc[slot] = vic__slab_fail(&j->call[slot], VICK_NOMEM, "no host memory for slab flags");
    return;
  }
  const char *stage = j->pass ? "peaks" : "density";
  const int64_t S = j->plan->n_slabs;
  vick_call *cs = &j->call[slot];
  /* the device's own slabs (in a later pass on several devices, those
   * whose lists it kept), then any slab no device kept, as it comes free:
   * a device that keeps none would otherwise make its slabs' lists again
   * while the others wait */
  for (int64_t s = slot; s < S && j->rc[slot] == VICK_OK; s += j->count) {
    if (j->kept_at_start && !j->kept_at_start[s]) continue;
    j->rc[slot] = j->pass ? vic__slab_known(j, slot, s, is_row) : run_slab(j, slot, s, is_row);
    if (j->rc[slot] == VICK_OK && j->bad_row[slot] >= 0) break;
    if (j->rc[slot] == VICK_OK && cs->progress && cs->progress(cs->user, stage, (double)(s + 1) / S))
      j->rc[slot] = vic__slab_fail(cs, VICK_CANCELLED, "cancelled during the slabs");
  }
  while (j->kept_at_start && j->rc[slot] == VICK_OK) {
    int64_t s;
#pragma omp atomic capture
    s = j->next_free++;
    if (s >= S) break;
    if (j->kept_at_start[s]) continue;
    j->rc[slot] = vic__slab_known(j, slot, s, is_row);
    if (j->rc[slot] == VICK_OK && cs->progress && cs->progress(cs->user, stage, (double)(s + 1) / S))
      j->rc[slot] = vic__slab_fail(cs, VICK_CANCELLED, "cancelled during the slabs");
  }
  vic__slab_prefetch_drop(j, slot); /* a next slab not run (a bad row, a failure) */
  if (j->held) { /* the pass's values by id leave the device with it */
    vick_by_id_free(j->held[slot]);
    j->held[slot] = NULL;
  }
  free(is_row);
}

/* Ids bucketed by slab (vic__slab_bucket) and, where the host has the
 * room, the rows in that order for the gathers (xs NULL otherwise). */
static vic_status bucket(vic_ctx *c, const vic_data *x, const vic_slab_plan *p, int64_t **start, int64_t **order,
                         float **xs) {
  const int64_t n = x->n, S = p->n_slabs;
  *xs = NULL;
  *start = vic__calloc(c, (size_t)S + 1, sizeof **start, "slab starts");
  *order = *start ? vic__malloc_huge((size_t)n * sizeof **order) : NULL;
  if (*start && !*order) {
    free(*start);
    *start = NULL;
    return vic__fail(c, VIC_E_NOMEM, "out of host memory for the points by slab (%.0f MiB)", n * 8 / 1048576.0);
  }
  if (!*order) return VIC_E_NOMEM;
  *xs = vic__malloc_huge((size_t)n * (size_t)x->d * sizeof **xs);
  if (vic__slab_bucket(x, p, *start, *order, *xs) != 0) {
    free(*start); free(*order); free(*xs);
    *start = NULL; *order = NULL; *xs = NULL;
    return vic__fail(c, VIC_E_NOMEM, "out of host memory bucketing the points by slab");
  }
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

/* Host bytes the slabs' gathers and their parked lists may keep
 * between the passes: a quarter of the machine's memory (none when it
 * cannot be read). */
static size_t host_room(void) {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) return (size_t)pages / 4 * (size_t)size;
#endif
  return 0;
}

struct vic_slabs {
  slab_job j;
  vic_slab_plan plan;
  int64_t *start, *order;
  float *xs; /* the rows in bucket order, or NULL */
  int levels;
  int pinned; /* holds the kept pinned slots (vick_pinned_keep) */
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
  const double t_bucket = vic__now();
  if ((s = bucket(c, x, &z->plan, &z->start, &z->order, &z->xs)) != VIC_OK) {
    vic__slab_plan_free(&z->plan);
    free(z);
    return s;
  }
  const double s_bucket = vic__now() - t_bucket;
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
  /* the rows in bucket order: every region's gather reads its slabs'
   * stretch of them instead of the whole set by id (without the host
   * memory, the gathers read x) */
  j->xs = z->xs;
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
  j->t_place = j->t_device ? vic__calloc(c, (size_t)count, sizeof *j->t_place, "per-device times") : NULL;
  j->prefetch = j->t_place ? vic__calloc(c, (size_t)count, sizeof *j->prefetch, "per-device gathers ahead") : NULL;
  if (!j->prefetch) { vic__slabs_close(z); return VIC_E_NOMEM; }
  if (later) {
    j->cache = vic__calloc(c, (size_t)count, sizeof *j->cache, "per-device retried rows");
    j->cached = j->cache ? vic__calloc(c, (size_t)x->n, 1, "retried row flags") : NULL;
    j->kept = j->cached ? vic__calloc(c, (size_t)S, sizeof *j->kept, "kept slab lists") : NULL;
    j->kept_bytes = j->kept ? vic__calloc(c, (size_t)count, sizeof *j->kept_bytes, "kept list bytes") : NULL;
    j->released = j->kept_bytes ? vic__calloc(c, (size_t)count, sizeof *j->released, "released lists") : NULL;
    j->host_bytes = j->released ? vic__calloc(c, (size_t)count, sizeof *j->host_bytes, "kept host bytes") : NULL;
    j->parked = j->host_bytes ? vic__calloc(c, (size_t)count, sizeof *j->parked, "parked lists") : NULL;
    j->from_kept = j->parked ? vic__calloc(c, (size_t)count, sizeof *j->from_kept, "slabs from kept lists") : NULL;
    j->remade = j->from_kept ? vic__calloc(c, (size_t)count, sizeof *j->remade, "slabs made again") : NULL;
    if (!j->remade) { vic__slabs_close(z); return VIC_E_NOMEM; }
    /* beside kept lists: the later passes' values by id (densities and
     * labels), a slab's ranks and first edges (a kept slab whose edges do
     * not fit gives its lists back and makes them again); on the first
     * device also the run held between the passes (reserve) -- the
     * per-point steps between the passes take the room they need from
     * the kept lists (vic__slabs_release) */
    const size_t edges = (size_t)(x->n / S + 1) * 64;
    j->hold = (size_t)x->n * 8 + edges;
    j->hold0 = reserve + edges;
    j->gathered = vic__calloc(c, (size_t)S, sizeof *j->gathered, "kept slab gathers");
    j->gathered_bytes = j->gathered ? vic__calloc(c, (size_t)count, sizeof *j->gathered_bytes, "gather bytes") : NULL;
    if (!j->gathered_bytes) { vic__slabs_close(z); return VIC_E_NOMEM; }
    j->gathered_cap = host_room() / (size_t)count;
    j->held = vic__calloc(c, (size_t)count, sizeof *j->held, "per-device values by id");
    if (!j->held) { vic__slabs_close(z); return VIC_E_NOMEM; }
  }
  for (int d = 0; d < count; ++d) {
    vic__cuda_call_init(c, &j->call[d], first + d, budget, count > 1);
    /* each device's copies and host loops in its share of the threads:
     * every device with all of them would run count teams of all */
    j->call[d].threads = j->threads;
    j->bad_row[d] = -1;
  }
  /* the slabs' dozens of device calls reuse each device's pinned slots */
  vick_pinned_keep(1);
  z->pinned = 1;
  vic__log(c, VIC_LOG_INFO, "%lld slabs along axis %d on %d device%s (budget %.0f MiB each); rows sorted by slab %s "
           "with their ids in %.3f s", (long long)S, z->plan.axis, count, count == 1 ? "" : "s", budget / 1048576.0,
           z->xs ? "on the host" : "not kept (no host memory)", s_bucket);
  *out = z;
  return VIC_OK;
}

void vic__slabs_close(vic_slabs *z) {
  if (!z) return;
  slab_job *j = &z->j;
  vic__slab_cells_end(j);
  if (j->prefetch)
    for (int d = 0; d < j->count; ++d) vic__slab_prefetch_drop(j, d);
  free(j->prefetch);
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
  if (j->kept)
    for (int64_t s = 0; s < z->plan.n_slabs; ++s) vick_slab_lists_free(j->kept[s]);
  free(j->kept);
  free(j->kept_bytes);
  free(j->host_bytes);
  free(j->parked);
  free(j->from_kept);
  free(j->remade);
  free(j->released);
  /* the slabs' gathers and the rows in slab order: the set's size several
   * times over, given back beside the caller's next steps */
  vic__free_batch *big = vic__free_batch_new(2 + (j->gathered ? 2 * (size_t)z->plan.n_slabs : 0));
  if (j->gathered)
    for (int64_t s = 0; s < z->plan.n_slabs; ++s) {
      vic__free_batch_add(big, j->gathered[s].pts);
      vic__free_batch_add(big, j->gathered[s].gid);
    }
  free(j->gathered);
  free(j->gathered_bytes);
  if (j->held)
    for (int d = 0; d < j->count; ++d) vick_by_id_free(j->held[d]);
  free(j->held);
  free(j->t_gather);
  free(j->t_device);
  free(j->t_place);
  free(j->call);
  free(j->rc);
  free(j->bad_row);
  free(j->retried);
  free(z->start);
  vic__free_batch_add(big, z->order);
  vic__free_batch_add(big, z->xs);
  vic__free_batch_go(big);
  if (z->pinned) vick_pinned_keep(0);
  vic__slab_plan_free(&z->plan);
  free(z);
}

/* The most over the devices of a per-device value. */
static double most(const slab_job *j, const double *v) {
  double m = 0;
  for (int d = 0; d < j->count; ++d)
    if (v[d] > m) m = v[d];
  return m;
}

static double kernel_seconds(const slab_job *j) {
  double m = 0;
  for (int d = 0; d < j->count; ++d)
    if (j->call[d].seconds_kernel > m) m = j->call[d].seconds_kernel;
  return m;
}

/* The job's pass on every device, then the density pass's leftover rows
 * or a later pass's cached rows on the host; the first failure's status. */
static vic_status run_pass_work(vic_slabs *z, const char *what) {
  slab_job *j = &z->j;
  for (int d = 0; d < j->count; ++d) j->rc[d] = VICK_OK;
  j->kept_at_start = NULL;
  j->next_free = 0;
  if (j->pass && j->count > 1 && j->kept) {
    j->kept_at_start = malloc((size_t)j->plan->n_slabs);
    if (!j->kept_at_start) return vic__fail(j->c, VIC_E_NOMEM, "out of host memory for the slabs' places");
    for (int64_t s = 0; s < j->plan->n_slabs; ++s) j->kept_at_start[s] = j->kept[s] != NULL;
  }
  if (j->count == 1) slab_slot(j, 0); /* the gathers keep all host threads */
  else vic__cuda_parallel(j->count, slab_slot, j);
  free(j->kept_at_start);
  j->kept_at_start = NULL;
  for (int d = 0; d < j->count; ++d)
    if (j->rc[d] != VICK_OK) return vic__kernel_status(j->c, j->rc[d], &j->call[d], what);
  if (!j->pass) {
    for (int d = 0; d < j->count; ++d)
      if (j->bad_row[d] >= 0) return VIC_OK;
    const int rc = vic__slab_leftovers(j);
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

/* A pass's times and what the slabs keep after it.  k0 / x0: each
 * device's kernel and transfer seconds before the pass (or NULL). */
static void log_pass(const vic_slabs *z, const char *what, double seconds, double kernels, const double *k0,
                     const double *x0) {
  const slab_job *j = &z->j;
  int64_t kept = 0, released = 0, parked = 0, gathered = 0, from_kept = 0, remade = 0;
  size_t kept_bytes = 0, gathered_bytes = 0, host_bytes = 0;
  if (j->kept) {
    for (int64_t q = 0; q < z->plan.n_slabs; ++q) { kept += j->kept[q] != NULL; gathered += j->gathered[q].pts != NULL; }
    for (int d = 0; d < j->count; ++d) {
      released += j->released[d];
      parked += j->parked[d];
      from_kept += j->from_kept[d];
      remade += j->remade[d];
      kept_bytes += j->kept_bytes[d];
      gathered_bytes += j->gathered_bytes[d];
      host_bytes += j->host_bytes[d];
    }
  }
  char used[96] = "";
  if (j->pass)
    snprintf(used, sizeof used, "slabs from kept lists: %lld, made again: %lld; ", (long long)from_kept,
             (long long)remade);
  /* where the busiest device's call time went: the host's work around
   * the calls, kernels, copies, and the rest (allocations, waits) */
  int b = 0;
  for (int d = 1; d < j->count; ++d)
    if (j->t_device[d] > j->t_device[b]) b = d;
  char split[160] = "";
  if (k0 && x0) {
    const double kb = j->call[b].seconds_kernel - k0[b], xb = j->call[b].seconds_transfer - x0[b];
    snprintf(split, sizeof split, " (on device %d: host work around the calls %.3f s, kernels %.3f s, copies %.3f s, "
             "the rest %.3f s)", j->call[b].device, j->t_place[b], kb, xb, j->t_device[b] - j->t_place[b] - kb - xb);
  }
  vic__log(j->c, VIC_LOG_INFO, "%s: %.3f s over %lld slabs on %d device%s (the busiest: host gathers %.3f s, device "
           "calls %.3f s%s; kernels %.3f s); %slists kept: %lld slabs, %.0f MiB on the devices (so far %lld given back "
           "for room, %lld parked on the host), %.0f MiB of parked lists on the host; gathers kept "
           "on the host: %lld slabs, %.0f MiB", what, seconds, (long long)z->plan.n_slabs, j->count,
           j->count == 1 ? "" : "s", most(j, j->t_gather), most(j, j->t_device), split, kernels, used, (long long)kept,
           kept_bytes / 1048576.0, (long long)released, (long long)parked, host_bytes / 1048576.0,
           (long long)gathered, gathered_bytes / 1048576.0);
}

/* Runs the job's pass on every device and logs its times; the first
 * failure's status. */
static vic_status run_pass(vic_slabs *z, const char *what) {
  slab_job *j = &z->j;
  for (int d = 0; d < j->count; ++d) j->t_gather[d] = j->t_device[d] = j->t_place[d] = 0;
  for (int d = 0; j->from_kept && d < j->count; ++d) j->from_kept[d] = j->remade[d] = 0;
  double *k0 = malloc(2 * (size_t)j->count * sizeof *k0), *x0 = k0 ? k0 + j->count : NULL;
  for (int d = 0; k0 && d < j->count; ++d) {
    k0[d] = j->call[d].seconds_kernel;
    x0[d] = j->call[d].seconds_transfer;
  }
  const double kern = kernel_seconds(j), t0 = vic__now();
  vic_status s = run_pass_work(z, what);
  log_pass(z, what, vic__now() - t0, kernel_seconds(j) - kern, k0, x0);
  free(k0);
  return s;
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
  vic__slab_cells_begin(j); /* for the leftovers, beside the slabs */
  vic_status s = run_pass(z, "slab density");
  vic__slab_cells_end(j); /* where the leftovers did not take it */
  for (int d = 0; d < j->count; ++d)
    if (j->bad_row[d] >= 0 && (*bad_row < 0 || j->bad_row[d] < *bad_row)) *bad_row = j->bad_row[d];
  return s;
}

/* A pass after the densities: every density and k-th distance known. */
static vic_status later_pass(vic_slabs *z, int pass, const float *rho, float *rk, const char *what) {
  z->j.pass = pass;
  z->j.rho = rho;
  z->j.rk = rk;
  return run_pass(z, what);
}

vic_status vic__slabs_links(vic_slabs *z, const float *rho, float *rk, int32_t *parent, float *delta, int32_t *up,
                            int32_t *is_max) {
  slab_job *j = &z->j;
  j->parent = parent;
  j->delta = delta;
  j->up = up;
  j->is_max = is_max;
  return later_pass(z, PASS_LINKS, rho, rk, "slab links");
}

vic_status vic__slabs_edges(vic_slabs *z, const float *rho, float *rk, const int32_t *lab, const int32_t *rank,
                            int64_t n_max, uint64_t **pair, uint64_t **pos, int64_t *count) {
  slab_job *j = &z->j;
  *pair = *pos = NULL;
  *count = 0;
  j->lab = lab;
  j->rank = rank;
  j->n_max = n_max;
  vic_status s = later_pass(z, PASS_EDGES, rho, rk, "slab edges");
  if (s != VIC_OK) return s;
  int64_t total = 0;
  for (int d = 0; d < j->count; ++d) total += j->edges[d].count;
  uint64_t *a = vic__malloc(j->c, (size_t)total * sizeof *a + 8, "first edges of the slabs");
  uint64_t *b = a ? vic__malloc(j->c, (size_t)total * sizeof *b + 8, "first edges of the slabs") : NULL;
  if (!b) { free(a); return VIC_E_NOMEM; }
  int64_t *at = vic__malloc(j->c, (size_t)j->count * sizeof *at, "edge offsets");
  if (!at) { free(a); free(b); return VIC_E_NOMEM; }
  for (int d = 0; d < j->count; ++d) at[d] = d ? at[d - 1] + j->edges[d - 1].count : 0;
  /* a device's edges into their place, the devices' side by side: each
   * copy also faults in its part of the fresh arrays */
#pragma omp parallel for schedule(static, 1) num_threads(j->count) if (j->count > 1)
  for (int d = 0; d < j->count; ++d) {
    edge_list *l = &j->edges[d];
    if (l->count) {
      memcpy(a + at[d], l->pair, (size_t)l->count * sizeof *a);
      memcpy(b + at[d], l->pos, (size_t)l->count * sizeof *b);
    }
    free(l->pair);
    free(l->pos);
    memset(l, 0, sizeof *l);
  }
  free(at);
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

size_t vic__slabs_kept_bytes(const vic_slabs *z, int slot) {
  return z && z->j.kept_bytes && slot < z->j.count ? z->j.kept_bytes[slot] : 0;
}

void vic__slabs_release(vic_slabs *z, int slot, size_t need) {
  if (z && z->j.kept && slot < z->j.count) vic__slab_park(&z->j, slot, need);
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
