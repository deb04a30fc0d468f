/* The device run of density + peaks (peaks_cuda.h): the kernels do the
 * per-point work (vic_kernels_peaks.h), the core applies its rules to the
 * local maxima in between, exactly as select_peaks in peaks.c does:
 * prominence (from the merge events), thresholds, the densest point
 * always a peak, members, small peaks dropped and climbed past once,
 * ranking by saliency, core centres. */
#include "peaks_cuda.h"
#include "backend_cuda.h"
#include "density_cuda.h"
#include "density_slabs.h"
#include "slab_plan.h"
#include "nbody_internal.h"
#include "peaks_rules.h"
#include "prominence.h"
#include "slab_rows.h"
#include "list_dest.h"

#include <pthread.h>
#include <string.h>

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "vic_kernels_peaks.h"

/* Index of point id among the maxima (ascending ids), -1 when absent. */
static int64_t maximum_index(const int64_t *max_point, int64_t m, int64_t id) {
  int64_t a = 0, b = m;
  while (a < b) {
    int64_t h = a + (b - a) / 2;
    if (max_point[h] < id) a = h + 1; else b = h;
  }
  return a < m && max_point[a] == id ? a : -1;
}

typedef struct {
  unsigned char *survive, *cand;
  int64_t *members, *rank, *core_count;
  float *sal;
  double *core_offset;
} host_ws;

static void host_ws_free(host_ws *h) {
  free(h->survive);
  free(h->cand);
  free(h->members);
  free(h->rank);
  free(h->core_count);
  free(h->sal);
  free(h->core_offset);
}

/* The core's rules between the kernel steps; rc of the last kernel call
 * in *rc when a kernel failed (status VIC_E_DEVICE then, translated by
 * the caller).  h->survive, when set, was filled by the caller (from
 * the same events, beside the device); else it is made here.
 * links_parent, links_delta, links_rho (n each, or NULL): the links and
 * densities the device was given, whose links it changes only at the
 * maxima (their nearest denser points, in info): the parents, deltas and
 * saliencies (rho * delta, one IEEE product as on the device; the
 * maxima's from info) are made here instead of crossing back. */
static vic_status decide(vic_ctx *c, vick_call *call, vick_peaks_run *run, const vick_peaks_info *info,
                         const vic_data *x, int32_t k, const vic_peak_options *o, vic_peaks *out, host_ws *h,
                         const int32_t *links_parent, const float *links_delta, const float *links_rho,
                         int *rc) {
  const int64_t m = info->m, n = info->n;
  const int have_survive = h->survive != NULL; /* the slab runs find them beside the maxima's search */
  const int threads = vic__threads(c);
  if (!have_survive) h->survive = vic__malloc(c, (size_t)m, "prominent maxima");
  h->cand = h->survive ? vic__malloc(c, (size_t)m, "peak candidates") : NULL;
  h->members = h->cand ? vic__malloc(c, (size_t)m * sizeof *h->members, "peak members") : NULL;
  h->rank = h->members ? vic__malloc(c, (size_t)m * sizeof *h->rank, "peak ranks") : NULL;
  if (!h->rank) return VIC_E_NOMEM;
  vic_status s = VIC_OK;
  if (!have_survive)
    s = vic__prominent_from_events(c, m, info->max_rho, info->n_events, info->event_a, info->event_b, info->event_rho,
                                   vic__prominence_ratio(o, k), h->survive);
  if (s != VIC_OK) return s;
  const int64_t top = maximum_index(info->max_point, m, info->top);
  if (top < 0) return vic__fail(c, VIC_E_DEVICE, "GPU peaks: the densest point is not among the local maxima");
  /* the maxima come by the ten million at 10^9 points: every loop over them on all threads */
#pragma omp parallel for num_threads(threads) schedule(static) if (m > 65536)
  for (int64_t q = 0; q < m; ++q)
    h->cand[q] = h->survive[q] && vic__peak_thresholds(o, info->max_rho[q], info->max_delta[q], info->max_rk[q]);
  h->cand[top] = 1;
  if ((*rc = vick_peaks_climb(call, run, h->cand, h->members)) != VICK_OK) return VIC_E_DEVICE;
  int dropped = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(| : dropped) if (m > 65536)
  for (int64_t q = 0; q < m; ++q)
    if (h->cand[q] && q != top && h->members[q] < o->min_members) { h->cand[q] = 0; dropped = 1; }
  if (dropped && (*rc = vick_peaks_climb(call, run, h->cand, h->members)) != VICK_OK) return VIC_E_DEVICE;
  if ((s = vic__progress(c, "peaks", 0.8)) != VIC_OK) return s;

  int64_t np = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : np) if (m > 65536)
  for (int64_t q = 0; q < m; ++q) np += h->cand[q];
  const int32_t d = x->d;
  out->n = n;
  out->parent = vic__malloc(c, (size_t)n * sizeof *out->parent, "peak parents");
  out->delta = out->parent ? vic__malloc(c, (size_t)n * sizeof *out->delta, "peak deltas") : NULL;
  out->saliency = out->delta ? vic__malloc(c, (size_t)n * sizeof *out->saliency, "saliency") : NULL;
  out->peak_id = out->saliency ? vic__malloc(c, (size_t)n * sizeof *out->peak_id, "peak ids") : NULL;
  out->peak_point = out->peak_id ? vic__malloc(c, (size_t)np * sizeof *out->peak_point, "peak points") : NULL;
  out->peak_members = out->peak_point ? vic__malloc(c, (size_t)np * sizeof *out->peak_members, "peak members") : NULL;
  out->peak_centre = out->peak_members ? vic__malloc(c, (size_t)(np * d) * sizeof *out->peak_centre, "peak centres") : NULL;
  h->sal = out->peak_centre ? vic__malloc(c, (size_t)np * sizeof *h->sal, "peak saliency") : NULL;
  h->core_count = h->sal ? vic__malloc(c, (size_t)np * sizeof *h->core_count, "peak core counts") : NULL;
  h->core_offset = h->core_count ? vic__malloc(c, (size_t)(np * d) * sizeof *h->core_offset, "peak core sums") : NULL;
  if (!h->core_offset) return VIC_E_NOMEM;
  np = 0;
  for (int64_t q = 0; q < m; ++q)
    if (h->cand[q]) { out->peak_point[np] = info->max_point[q]; h->sal[np++] = info->max_saliency[q]; }
  if ((s = vic__rank_by_saliency(c, out->peak_point, h->sal, np)) != VIC_OK) return s;
  out->n_peaks = np;
#pragma omp parallel for num_threads(threads) schedule(static) if (m > 65536)
  for (int64_t q = 0; q < m; ++q) h->rank[q] = -1;
  for (int64_t p = 0; p < np; ++p) {
    const int64_t q = maximum_index(info->max_point, m, out->peak_point[p]);
    h->rank[q] = p;
    out->peak_members[p] = h->members[q];
  }
  const int from_links = links_parent && links_delta && links_rho;
  if ((*rc = vick_peaks_finish(call, run, h->rank, out->peak_point, np, VIC__CORE_FRACTION,
                               from_links ? NULL : out->parent, from_links ? NULL : out->delta,
                               from_links ? NULL : out->saliency, out->peak_id, h->core_count, h->core_offset)) !=
      VICK_OK)
    return VIC_E_DEVICE;
  if (from_links)
    vic__peaks_from_links(n, links_parent, links_delta, links_rho, m, info->max_point, info->max_parent,
                          info->max_delta, info->max_saliency, threads, out->parent, out->delta, out->saliency);
  vic__centres_from_sums(x, out->peak_point, h->core_offset, h->core_count, np, out->peak_centre);
  return VIC_OK;
}

/* Out of core: three passes over the slabs on every device
 * (density_slabs.h) -- densities; links (parents, deltas, basin
 * pointers); boundary edges -- whose lists are made on the slab's device
 * and consumed there.  Between them the first device orders the points
 * by density and finds the basins, and after them turns the slabs' first
 * edges into merge events and searches the maxima's parents.  Only
 * per-point results cross to the host. */
typedef struct {
  float *rk, *delta;
  int32_t *lid, *parent, *up, *is_max, *lab, *rank;
  uint64_t *pair, *pos;
} slab_host;

/* GBs each at large n: given back beside the caller's next steps */
static void slab_host_free(slab_host *h) {
  void *const all[] = {h->rk, h->delta, h->lid, h->parent, h->up, h->is_max, h->lab, h->rank, h->pair, h->pos};
  vic__free_beside(all, sizeof all / sizeof all[0]);
  memset(h, 0, sizeof *h);
}

/* The prominence of the maxima (host, one thread: a chain of random
 * reads over the events) runs while the first device sorts the points
 * and searches the maxima's parents: both need only the events and the
 * maxima's densities, which the host has (the densities it uploaded, at
 * the maxima's ids).  Where no thread can start it runs after.  Its
 * densities are checked against the device's afterwards; were they to
 * differ, the prominence is run again from the device's (the results
 * are then those of the plain order). */
typedef struct {
  int64_t m, n_events;
  const float *rho_max, *rho_e;
  const int32_t *a, *b;
  double ratio;
  int32_t *forest;
  unsigned char *survive;
  double seconds;
} prominence_job;

static void *prominence_main(void *arg) {
  prominence_job *j = arg;
  const double t0 = vic__now();
  vic__prominent_events_run(j->m, j->rho_max, j->n_events, j->a, j->b, j->rho_e, j->ratio, j->forest, j->survive);
  j->seconds += vic__now() - t0;
  return NULL;
}

static vic_status maxima_beside_prominence(vic_ctx *c, vick_call *call, vick_peaks_run *run, const vick_points *pts,
                                           const slab_host *h, const float *knn_density, double ratio,
                                           vick_peaks_info *info, host_ws *hw, double *t_prominence,
                                           double *t_device, int *rc) {
  const int64_t m = info->m;
  if (m > INT32_MAX) return vic__fail(c, VIC_E_UNSUPPORTED, "GPU peaks: %lld local maxima pass int32", (long long)m);
  const size_t mb = (size_t)(m > 0 ? m : 1);
  hw->survive = vic__malloc(c, mb, "prominent maxima");
  int32_t *forest = hw->survive ? vic__malloc(c, mb * sizeof *forest, "region forest") : NULL;
  float *rho_max = forest ? vic__malloc(c, mb * sizeof *rho_max, "densities of maxima") : NULL;
  if (!rho_max) { free(forest); return VIC_E_NOMEM; }
  const int threads = vic__threads(c);
#pragma omp parallel for num_threads(threads) schedule(static) if (m > 65536)
  for (int64_t q = 0; q < m; ++q) rho_max[q] = knn_density[info->max_point[q]];
  prominence_job job = {m, info->n_events, rho_max, info->event_rho, info->event_a, info->event_b, ratio, forest,
                        hw->survive, 0.0};
  pthread_t th;
  const int started = pthread_create(&th, NULL, prominence_main, &job) == 0;
  const double t0 = vic__now();
  *rc = vick_peaks_maxima(call, run, pts, h->rk, h->parent, h->delta, info);
  *t_device = vic__now() - t0;
  if (started) pthread_join(th, NULL);
  if (*rc == VICK_OK) {
    if (!started) prominence_main(&job);
    if (m > 0 && memcmp(rho_max, info->max_rho, (size_t)m * sizeof *rho_max) != 0) {
      vic__log(c, VIC_LOG_WARNING, "GPU peaks: the maxima's densities differ from the host's; prominence again");
      job.rho_max = info->max_rho;
      prominence_main(&job);
    }
  }
  *t_prominence = job.seconds;
  free(forest);
  free(rho_max);
  return VIC_OK;
}

static vic_status slabs_density_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                      vic_sph_convention sph, const vic_peak_options *o, size_t budget,
                                      float *knn_density, float *sph_density, float *smoothing_length, int64_t *ids,
                                      float *dist, vic_report *rep, int64_t *bad_row, vic_peaks *out) {
  const int64_t n = x->n;
  const size_t need = vic__peaks_links_bytes(n, x->d);
  if (need > budget)
    return vic__fail(c, VIC_E_NOMEM,
                     "density peaks of %lld points need at least %.0f MiB of device memory for their per-point steps "
                     "(the lists go in slabs); the budget is %.0f MiB",
                     (long long)n, need / 1048576.0, budget / 1048576.0);
  const size_t entries = (size_t)n * (size_t)k, b4 = (size_t)n * 4;
  slab_host h;
  memset(&h, 0, sizeof h);
  /* with the huge-page advice: the passes' writers fault these in
   * (scattered by id, or copied from the device) a few 2 MiB pages at a
   * time instead of a million 4 KiB ones a slab */
  h.rk = vic__malloc_lists(c, b4, "k-th distances");
  h.delta = h.rk ? vic__malloc_lists(c, b4, "deltas (slabs)") : NULL;
  h.parent = h.delta ? vic__malloc_lists(c, b4, "parents (slabs)") : NULL;
  h.up = h.parent ? vic__malloc_lists(c, b4, "basin pointers (slabs)") : NULL;
  h.is_max = h.up ? vic__malloc_lists(c, b4, "local maxima (slabs)") : NULL;
  h.lab = h.is_max ? vic__malloc_lists(c, b4, "basin labels (slabs)") : NULL;
  h.rank = h.lab ? vic__malloc_lists(c, b4, "density ranks (slabs)") : NULL;
  if (h.rank && ids) h.lid = vic__malloc(c, entries * sizeof *h.lid, "neighbour ids (int32)");
  if (!h.rank || (ids && !h.lid)) { slab_host_free(&h); return VIC_E_NOMEM; }
  /* where the time went between the passes' own lines */
  double t = vic__now(), t_basins = 0, t_room = 0;
  vic_slabs *z = NULL;
  vic_status s = vic__slabs_open(c, x, k, budget, vic__slab_pass_bytes(n), 1, &z);
  const double t_open = vic__now() - t;
  t = vic__now();
  if (s == VIC_OK)
    s = vic__slabs_density(z, mass, unit_mass, sph, knn_density, sph_density, smoothing_length, h.rk, h.lid, dist,
                           bad_row);
  if (s == VIC_OK && *bad_row < 0) s = vic__progress(c, "peaks", 0.2);
  const double t_density = vic__now() - t;
  t = vic__now();
  if (s == VIC_OK && *bad_row < 0) s = vic__slabs_links(z, knn_density, h.rk, h.parent, h.delta, h.up, h.is_max);
  const double t_links = vic__now() - t;
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, budget, 0);
  vick_peaks_run *run = NULL;
  vick_peaks_info info;
  memset(&info, 0, sizeof info);
  host_ws hw;
  memset(&hw, 0, sizeof hw);
  int rc = VICK_OK;
  int64_t n_max = 0, n_edges = 0;
  size_t kept0 = 0, peak_between = 0; /* lists the slabs keep on the first device meanwhile */
  if (s == VIC_OK && *bad_row < 0) {
    /* the lists kept on the first device make room for the density order
     * and basins; the maxima's search comes once the edges pass has
     * consumed them */
    t = vic__now();
    vic__slabs_release(z, 0, vic__peaks_basins_bytes(n));
    kept0 = vic__slabs_kept_bytes(z, 0);
    t_room = vic__now() - t;
    t = vic__now();
    call.memory_budget = budget > kept0 ? budget - kept0 : 1;
    rc = vick_peaks_begin_links(&call, n, k, knn_density, h.up, h.is_max, h.lab, h.rank, &n_max, &run);
    if (rc == VICK_NOMEM && kept0) { /* no room beside them: the edges pass makes them again */
      vic__slabs_release(z, 0, budget);
      kept0 = 0;
      call.memory_budget = budget;
      rc = vick_peaks_begin_links(&call, n, k, knn_density, h.up, h.is_max, h.lab, h.rank, &n_max, &run);
    }
    if (rc != VICK_OK) s = vic__kernel_status(c, rc, &call, "peaks between the slabs");
    peak_between = call.peak_bytes + kept0;
    call.memory_budget = budget;
    t_basins = vic__now() - t;
  }
  /* the basins are on the device now */
  free(h.up);
  free(h.is_max);
  h.up = h.is_max = NULL;
  t = vic__now();
  if (s == VIC_OK && *bad_row < 0) s = vic__slabs_edges(z, knn_density, h.rk, h.lab, h.rank, n_max, &h.pair, &h.pos,
                                                         &n_edges);
  const double t_edges = vic__now() - t;
  vic_slab_stats st;
  memset(&st, 0, sizeof st);
  if (z) vic__slabs_stats(z, &st);
  t = vic__now();
  vic__slabs_close(z);
  const double t_close = vic__now() - t;
  double t_after = 0;
  if (s == VIC_OK && *bad_row < 0) {
    vick_points pts = {x->rows, n, x->d, x->stride ? x->stride : x->d, VICK_METRIC_L2, x->box};
    t_after = vic__now();
    double t_prominence = 0, t_maxima = 0;
    rc = vick_peaks_add_edges(&call, run, h.pair, h.pos, n_edges, &info);
    const double t_events = vic__now() - t_after;
    if (rc == VICK_OK) s = maxima_beside_prominence(c, &call, run, &pts, &h, knn_density, vic__prominence_ratio(o, k),
                                                    &info, &hw, &t_prominence, &t_maxima, &rc);
    if (rc != VICK_OK) s = vic__kernel_status(c, rc, &call, "peaks after the slabs");
    else if (s == VIC_OK) {
      vic__log(c, VIC_LOG_DEBUG, "GPU peaks: %lld local maxima, %lld first edges from the slabs, %lld merge events",
               (long long)info.m, (long long)info.boundary_edges, (long long)info.n_events);
      s = decide(c, &call, run, &info, x, k, o, out, &hw, h.parent, h.delta, knn_density, &rc);
      /* the device call's own line below spans the edges pass too */
      if (s == VIC_OK)
        vic__log(c, VIC_LOG_INFO, "GPU peaks after the edges pass: %.3f s (events %.3f s; the maxima's search %.3f s "
                 "beside the prominence on a host thread, %.3f s; climb and finish the rest)", vic__now() - t_after,
                 t_events, t_maxima, t_prominence);
    }
    t_after = vic__now() - t_after;
  }
  t = vic__now();
  host_ws_free(&hw);
  if (run) {
    rc = vick_peaks_end(&call, run, rc);
    if (s == VIC_E_DEVICE && rc != VICK_OK) s = vic__kernel_status(c, rc, &call, "peaks after the slabs");
  }
  if (s == VIC_OK && *bad_row < 0 && ids) vic__ids_widen(ids, h.lid, entries);
  slab_host_free(&h);
  const double t_end = vic__now() - t;
  vic__log(c, VIC_LOG_INFO, "GPU density + peaks in slabs, step by step: slabs planned and rows sorted %.3f s, density "
           "pass %.3f s, links pass %.3f s, room on the first device %.3f s, density order and basins %.3f s, edges "
           "pass %.3f s, slab runs closed %.3f s, after the edges %.3f s, the run ended and host arrays freed %.3f s",
           t_open, t_density, t_links, t_room, t_basins, t_edges, t_close, t_after, t_end);
  if (s != VIC_OK || *bad_row >= 0) {
    vic_peaks_free(out);
    return s;
  }
  rep->seconds_transfer += st.seconds_transfer + call.seconds_transfer;
  rep->seconds_kernel += st.seconds_kernel + call.seconds_kernel;
  for (int i = 0; i < call.n_stages; ++i) vic__report_stage(rep, call.stages[i].name, call.stages[i].seconds);
  size_t peak = st.peak_bytes > call.peak_bytes ? st.peak_bytes : call.peak_bytes;
  if (peak_between > peak) peak = peak_between;
  rep->device_peak_bytes = (int64_t)peak;
  rep->slabs = (int32_t)st.slabs;
  rep->devices_used = st.devices;
  vic__log(c, VIC_LOG_INFO, "GPU density + peaks in %lld slabs on %d device%s (%lld rows answered again), peak %.0f MiB "
           "of device memory", (long long)st.slabs, st.devices, st.devices == 1 ? "" : "s", (long long)st.retried,
           rep->device_peak_bytes / 1048576.0);
  vic__kernel_log(c, &call, "peaks after the slabs");
  return VIC_OK;
}

vic_status vic__cuda_density_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                   vic_sph_convention sph, const vic_peak_options *o, float *knn_density,
                                   float *sph_density, float *smoothing_length, int64_t *ids, float *dist,
                                   vic_report *rep, int64_t *bad_row, vic_peaks *out) {
  vic__peaks_clear(out);
  *bad_row = -1;
  const size_t budget = vic__density_budget(c, c->opt.device);
  int first = 0, count = 1;
  vic_status s0 = vic__cuda_devices(c, &first, &count);
  if (s0 != VIC_OK) return s0;
  /* Slabs only for a set that does not fit one device (then on every
   * device asked for): three passes over the slabs cost more than one
   * device in core. */
  if (vic__in_core_bytes(x->n, k, x->d, 1) > budget)
    return slabs_density_peaks(c, x, k, mass, unit_mass, sph, o, budget, knn_density, sph_density, smoothing_length,
                               ids, dist, rep, bad_row, out);
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, budget, 0);
  vick_density_params p = vic__density_params(x->d, unit_mass, sph);
  vick_points pts = {x->rows, x->n, x->d, x->stride ? x->stride : x->d, VICK_METRIC_L2, x->box};
  vick_peaks_run *run = NULL;
  vick_peaks_info info;
  int rc = vick_peaks_begin(&call, &pts, k, mass, &p, knn_density, sph_density, smoothing_length, ids, dist, &run,
                            &info);
  if (rc == VICK_NOMEM) { /* the estimate was short: the slabs fit any budget they can */
    vic__log(c, VIC_LOG_INFO, "GPU peaks in one piece did not fit the budget (%s); in slabs", call.message);
    return slabs_density_peaks(c, x, k, mass, unit_mass, sph, o, budget, knn_density, sph_density, smoothing_length,
                               ids, dist, rep, bad_row, out);
  }
  if (rc != VICK_OK) return vic__kernel_status(c, rc, &call, "grid + density + peaks");
  vic_status s = VIC_OK;
  host_ws h;
  memset(&h, 0, sizeof h);
  *bad_row = info.bad_row;
  if (info.bad_row < 0) {
    vic__log(c, VIC_LOG_DEBUG, "GPU peaks: %lld local maxima, %lld boundary edges of %lld, %lld merge events",
             (long long)info.m, (long long)info.boundary_edges, (long long)(x->n * (int64_t)k),
             (long long)info.n_events);
    s = decide(c, &call, run, &info, x, k, o, out, &h, NULL, NULL, NULL, &rc);
  }
  host_ws_free(&h);
  rc = vick_peaks_end(&call, run, rc);
  if (s == VIC_E_DEVICE && rc != VICK_OK) s = vic__kernel_status(c, rc, &call, "grid + density + peaks");
  if (s != VIC_OK || info.bad_row >= 0) {
    vic_peaks_free(out);
    return s;
  }
  vic__kernel_report_one(c, rep, &call, "grid + density + peaks");
  return VIC_OK;
}

#else /* no CUDA in this build */

vic_status vic__cuda_density_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                   vic_sph_convention sph, const vic_peak_options *o, float *knn_density,
                                   float *sph_density, float *smoothing_length, int64_t *ids, float *dist,
                                   vic_report *rep, int64_t *bad_row, vic_peaks *out) {
  (void)x; (void)k; (void)mass; (void)unit_mass; (void)sph; (void)o; (void)knn_density; (void)sph_density;
  (void)smoothing_length; (void)ids; (void)dist; (void)rep;
  vic__peaks_clear(out);
  *bad_row = -1;
  return vic__cuda_probe(c);
}

#endif
