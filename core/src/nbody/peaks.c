/* Density peaks (Rodriguez & Laio 2014, "Clustering by fast search and
 * find of density peaks") from kNN lists and a density per point.
 *
 *  parent_i  the nearest point denser than i (vic__denser: ties of
 *            density go to the lower id).  Looked up in i's kNN list
 *            first; only when none of its k neighbours is denser -- i is
 *            a local maximum -- by exact search (denser_tree.c).
 *  delta_i   the distance to parent_i; for the densest point, which has
 *            no parent, its largest distance to any point (as in the
 *            paper, so that it ranks first).
 *  saliency  rho_i * delta_i.
 *
 * Which local maxima are peaks -- the spurious-peak rule.  Noise in any
 * density estimate makes local maxima everywhere; their nearest denser
 * point lies just outside the kNN ball, while a real clump's centre is
 * far from anything denser compared with its own neighbourhood size.  A
 * local maximum i is a peak when all of
 *   rho_i   >= min_density,
 *   delta_i >= min_delta, or when min_delta is 0 (auto),
 *   delta_i >= delta_factor * r_k,i (its own k-th neighbour distance:
 *              a scale-free test that works in the dense centre and in
 *              the sparse outskirts alike),
 *   members >= min_members after membership (below),
 * and the densest point is always a peak: every point climbs to it.
 * Members: every point follows parent pointers up to the first peak it
 * meets.  Candidates with fewer than min_members members are dropped at
 * once and their members climb on to the next peak up; dropping only
 * ever adds members to the others, so one round settles it.
 * Peaks are listed by descending saliency (ties by id), each with a
 * centre (peak_centres below).
 *
 * Prominence (prominence.c) is the main guard: a noise maximum stands a
 * few standard deviations of the estimator's noise above the saddle to
 * its denser neighbour region, so the default ratio exp(6 / sqrt(k - 1))
 * (the kNN estimator's log-density deviation is about 1 / sqrt(k - 1))
 * merges them.  Measured with the defaults and k = 32 (test_density_peaks):
 * a Plummer sphere of 200,000 particles gives one peak, a uniform Poisson
 * box no more than one per 10^5 points.  The documented bound the tests
 * hold is that count. */
#include "nbody_internal.h"
#include "denser_tree.h"
#include "prominence.h"
#include "peaks_rules.h"

#include <string.h>

static void defaults(vic_peak_options *o) {
  memset(o, 0, sizeof *o);
  o->min_density = 0;
  o->min_delta = 0;
  o->min_members = 20;
  o->delta_factor = 2.0;
}

void vic_peak_options_init_sized(vic_peak_options *o, size_t struct_size) {
  vic_peak_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

void vic_peaks_free(vic_peaks *p) {
  if (!p) return;
  free(p->parent);
  free(p->delta);
  free(p->saliency);
  free(p->peak_id);
  free(p->peak_point);
  free(p->peak_members);
  free(p->peak_centre);
  memset(p, 0, sizeof *p);
}

static vic_status check_inputs(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *rho,
                               const vic_peak_options *o) {
  vic_status s = vic__check_lists_of(c, x, nn, "peak finding");
  if (s != VIC_OK) return s;
  if (!rho) return vic__fail(c, VIC_E_ARGUMENT, "peak finding needs a density per point (see vic_density)");
  if ((s = vic__check_peak_options(c, o)) != VIC_OK) return s;
  int64_t bad = INT64_MAX;
#pragma omp parallel for num_threads(vic__threads(c)) reduction(min : bad) schedule(static)
  for (int64_t i = 0; i < x->n; ++i)
    if (!(rho[i] >= 0) || !isfinite(rho[i])) bad = i < bad ? i : bad;
  if (bad != INT64_MAX)
    return vic__fail(c, VIC_E_ARGUMENT, "density of point %lld is %g; densities must be finite and >= 0", (long long)bad,
                     (double)rho[bad]);
  return VIC_OK;
}

/* parent and delta from the kNN lists; -2 marks a local maximum (no
 * denser neighbour in the list) that needs the exact search. */
static int64_t parents_from_lists(vic_ctx *c, const vic_knn *nn, const float *rho, int64_t *parent, float *delta) {
  const int64_t n = nn->n, k = nn->k;
  int64_t maxima = 0;
#pragma omp parallel for num_threads(vic__threads(c)) reduction(+ : maxima) schedule(static, 4096)
  for (int64_t i = 0; i < n; ++i) {
    parent[i] = -2;
    delta[i] = 0.f;
    for (int64_t t = 0; t < k; ++t) {
      int64_t j = nn->ids[i * k + t];
      if (j >= 0 && j < n && j != i && vic__denser(rho, j, i)) { parent[i] = j; delta[i] = nn->dist[i * k + t]; break; }
    }
    maxima += parent[i] == -2;
  }
  return maxima;
}

static vic_status parents_by_search(vic_ctx *c, const vic_data *x, const float *rho, const int64_t *maxima,
                                    int64_t m, int64_t *parent, float *delta) {
  vic__denser_tree *t = NULL;
  vic_status s = vic__denser_tree_build(c, x, rho, &t);
  if (s != VIC_OK) return s;
  if ((s = vic__progress(c, "peaks", 0.4)) != VIC_OK) { vic__denser_tree_free(t); return s; }
#pragma omp parallel for num_threads(vic__threads(c)) schedule(dynamic, 64)
  for (int64_t a = 0; a < m; ++a) {
    if (vic__cancelled(c)) continue;
    int64_t i = maxima[a];
    parent[i] = vic__denser_tree_nearest(t, i, &delta[i]);
  }
  vic__denser_tree_free(t);
  return vic__progress(c, "peaks", 0.7);
}

/* The densest point's delta: its largest distance to any point. */
static float largest_distance(vic_ctx *c, const vic_data *x, int64_t top) {
  float best = 0.f;
  const float *q = vic__row(x, top);
#pragma omp parallel for num_threads(vic__threads(c)) reduction(max : best) schedule(static)
  for (int64_t j = 0; j < x->n; ++j) {
    float dd = vic__l2sq(q, vic__row(x, j), x->d, x->box);
    if (dd > best) best = dd;
  }
  return sqrtf(best);
}

/* label[i] = the first peak (is_peak) met climbing from i.  Each point
 * is walked at most twice: once to find its peak, once to label the path. */
static void climb(int64_t n, const int64_t *parent, const unsigned char *is_peak, int64_t *label) {
  for (int64_t i = 0; i < n; ++i) label[i] = -1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = i;
    while (label[j] < 0 && !is_peak[j]) j = parent[j];
    int64_t root = label[j] >= 0 ? label[j] : j;
    for (int64_t p = i; label[p] < 0 && p != root; p = parent[p]) label[p] = root;
    label[root] = root;
  }
}

/* Marks the candidates, labels membership, drops the small ones and
 * fills the peak list of out (parent, delta, saliency already set). */
/* Each peak's centre: the mean position (minimum image, relative to the
 * peak particle) of its members at least half as dense as the peak
 * particle -- its core.  The peak particle alone is a noisy centre: in a
 * flat core the densest particle wanders over the region where the true
 * density is within the estimator's noise of the maximum, while the core
 * is nearly symmetric around the true centre. */
static vic_status peak_centres(vic_ctx *c, const vic_data *x, const float *rho, const int64_t *order, vic_peaks *out) {
  const int32_t d = x->d;
  const int64_t np = out->n_peaks;
  double *sum = vic__calloc(c, (size_t)(np * d > 0 ? np * d : 1), sizeof *sum, "peak centre sums");
  int64_t *taken = sum ? vic__calloc(c, (size_t)np, sizeof *taken, "peak centre counts") : NULL;
  out->peak_centre = taken ? vic__malloc(c, (size_t)(np * d) * sizeof *out->peak_centre, "peak centres") : NULL;
  if (!out->peak_centre) { free(sum); free(taken); return VIC_E_NOMEM; }
  for (int64_t r = 0; r < x->n; ++r) {
    int64_t i = order[r], p = out->peak_id[i];
    if (rho[i] < VIC__CORE_FRACTION * rho[out->peak_point[p]]) continue;
    taken[p]++;
    const float *a = vic__row(x, i), *b = vic__row(x, out->peak_point[p]);
    for (int32_t j = 0; j < d; ++j) {
      double t = (double)a[j] - b[j];
      if (x->box && x->box[j] > 0) t -= x->box[j] * nearbyint(t / x->box[j]);
      sum[p * d + j] += t;
    }
  }
  vic__centres_from_sums(x, out->peak_point, sum, taken, np, out->peak_centre);
  free(sum);
  free(taken);
  return VIC_OK;
}

static vic_status select_peaks(vic_ctx *c, const vic_knn *nn, const float *rho, const vic_peak_options *o,
                               const int64_t *order, const int64_t *maxima, int64_t m, int64_t top, vic_peaks *out) {
  const int64_t n = nn->n, k = nn->k;
  unsigned char *is_peak = vic__calloc(c, (size_t)n, 1, "peak flags");
  int64_t *label = is_peak ? vic__malloc(c, (size_t)n * sizeof *label, "peak labels") : NULL;
  int64_t *count = label ? vic__calloc(c, (size_t)n, sizeof *count, "peak member counts") : NULL;
  float *sal = NULL;
  vic_status s = VIC_E_NOMEM;
  if (!count) goto done;
  double ratio = vic__prominence_ratio(o, k);
  if ((s = vic__prominent_maxima(c, nn, rho, order, ratio, is_peak)) != VIC_OK) goto done;
  s = VIC_E_NOMEM;
  for (int64_t a = 0; a < m; ++a) {
    int64_t i = maxima[a];
    is_peak[i] = is_peak[i] && vic__peak_thresholds(o, rho[i], out->delta[i], nn->dist[i * k + k - 1]);
  }
  is_peak[top] = 1;
  climb(n, out->parent, is_peak, label);
  for (int64_t i = 0; i < n; ++i) count[label[i]]++;
  int dropped = 0;
  for (int64_t a = 0; a < m; ++a) {
    int64_t i = maxima[a];
    if (is_peak[i] && i != top && count[i] < o->min_members) { is_peak[i] = 0; dropped = 1; }
  }
  if (dropped) {
    climb(n, out->parent, is_peak, label);
    memset(count, 0, (size_t)n * sizeof *count);
    for (int64_t i = 0; i < n; ++i) count[label[i]]++;
  }
  int64_t np = 0;
  for (int64_t a = 0; a < m; ++a) np += is_peak[maxima[a]];
  sal = vic__malloc(c, (size_t)np * sizeof *sal, "peak saliency");
  out->peak_point = sal ? vic__malloc(c, (size_t)np * sizeof *out->peak_point, "peak points") : NULL;
  out->peak_members = out->peak_point ? vic__malloc(c, (size_t)np * sizeof *out->peak_members, "peak members") : NULL;
  if (!out->peak_members) goto done;
  np = 0;
  for (int64_t a = 0; a < m; ++a)
    if (is_peak[maxima[a]]) { out->peak_point[np] = maxima[a]; sal[np++] = out->saliency[maxima[a]]; }
  if ((s = vic__rank_by_saliency(c, out->peak_point, sal, np)) != VIC_OK) goto done;
  out->n_peaks = np;
  for (int64_t p = 0; p < np; ++p) {
    out->peak_members[p] = count[out->peak_point[p]];
    count[out->peak_point[p]] = p; /* from here on: the peak's rank */
  }
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static)
  for (int64_t i = 0; i < n; ++i) out->peak_id[i] = count[label[i]];
  s = VIC_OK;
done:
  free(is_peak);
  free(label);
  free(count);
  free(sal);
  return s;
}

vic_status vic_peaks_find(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *density,
                          const vic_peak_options *o, vic_peaks *out) {
  vic__begin_call(c);
  return vic__peaks_find(c, x, nn, density, o, out);
}

vic_status vic__peaks_find(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *density,
                           const vic_peak_options *o_in, vic_peaks *out) {
  if (!c) return VIC_E_ARGUMENT;
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "peak finding needs an output structure");
  vic__peaks_clear(out);
  c->error[0] = '\0';
  c->warnings = 0;
  const double t0 = vic__now();
  vic_peak_options o;
  vic_peak_options_init(&o);
  if (o_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o, "vic_peak_options");
    if (so_ != VIC_OK) return so_;
  }
  vic_status s = check_inputs(c, x, nn, density, &o);
  if (s != VIC_OK) return s;
  if ((s = vic__progress(c, "peaks", 0.0)) != VIC_OK) return s;
  const int64_t n = x->n;
  int64_t *maxima = NULL, *order = NULL;
  s = VIC_E_NOMEM;
  out->n = n;
  out->parent = vic__malloc(c, (size_t)n * sizeof *out->parent, "peak parents");
  out->delta = out->parent ? vic__malloc(c, (size_t)n * sizeof *out->delta, "peak deltas") : NULL;
  out->saliency = out->delta ? vic__malloc(c, (size_t)n * sizeof *out->saliency, "saliency") : NULL;
  out->peak_id = out->saliency ? vic__malloc(c, (size_t)n * sizeof *out->peak_id, "peak ids") : NULL;
  if (!out->peak_id) goto fail;

  int64_t m = parents_from_lists(c, nn, density, out->parent, out->delta);
  maxima = vic__malloc(c, (size_t)m * sizeof *maxima, "local maxima");
  if (!maxima) goto fail;
  for (int64_t i = 0, a = 0; i < n; ++i)
    if (out->parent[i] == -2) maxima[a++] = i;
  if ((s = vic__progress(c, "peaks", 0.2)) != VIC_OK) goto fail;
  if ((s = parents_by_search(c, x, density, maxima, m, out->parent, out->delta)) != VIC_OK) goto fail;

  int64_t top = -1;
  for (int64_t a = 0; a < m && top < 0; ++a)
    if (out->parent[maxima[a]] < 0) top = maxima[a];
  out->delta[top] = largest_distance(c, x, top);
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static)
  for (int64_t i = 0; i < n; ++i) out->saliency[i] = density[i] * out->delta[i];
  if (!(order = vic__malloc(c, (size_t)n * sizeof *order, "density order"))) { s = VIC_E_NOMEM; goto fail; }
  if ((s = vic__density_order(c, density, n, order)) != VIC_OK) goto fail;
  if ((s = select_peaks(c, nn, density, &o, order, maxima, m, top, out)) != VIC_OK) goto fail;
  if ((s = peak_centres(c, x, density, order, out)) != VIC_OK) goto fail;
  free(maxima);
  free(order);
  maxima = order = NULL;
  if ((s = vic__progress(c, "peaks", 1.0)) != VIC_OK) goto fail;
  out->report.backend = VIC_BACKEND_CPU;
  out->report.method = nn->report.method;
  out->report.k = out->report.k_requested = nn->k;
  out->report.warnings = c->warnings;
  out->report.seconds_total = vic__now() - t0;
  return VIC_OK;

fail:
  free(maxima);
  free(order);
  vic_peaks_free(out);
  return s;
}
