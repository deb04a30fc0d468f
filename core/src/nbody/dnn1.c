/* d_nn1 statistics of kNN lists: the mean and maximum distance to the
 * nearest neighbour, as GGNN keeps them, and the number density of a
 * uniform Poisson process that would have that mean.
 *
 * For a Poisson process of number density nu in d dimensions the nearest
 * neighbour distance has E[d_nn1] = Gamma(1 + 1/d) / (nu V_d)^(1/d)
 * (V_d the unit-ball volume), hence nu = (Gamma(1 + 1/d) / mean)^d / V_d.
 * It is the density a user would quote for a homogeneous box; on clustered
 * data it is a scale, not a density anywhere in particular. */

#include "nbody_internal.h"

vic_status vic__check_lists(vic_ctx *c, const vic_knn *nn, const char *what) {
  if (!nn || !nn->ids || !nn->dist || nn->n <= 0 || nn->k <= 0)
    return vic__fail(c, VIC_E_ARGUMENT, "%s needs filled kNN lists (build them with vic_knn_build first)", what);
  return VIC_OK;
}

vic_status vic__check_lists_of(vic_ctx *c, const vic_data *x, const vic_knn *nn, const char *what) {
  vic_status s = vic__check_lists(c, nn, what);
  if (s != VIC_OK) return s;
  if ((s = vic_data_validate(c, x)) != VIC_OK) return s;
  if (x->metric != VIC_L2)
    return vic__fail(c, VIC_E_UNSUPPORTED, "%s needs the L2 metric (got %s): densities are volumes in Euclidean space",
                     what, vic_metric_name(x->metric));
  if (nn->n != x->n)
    return vic__fail(c, VIC_E_ARGUMENT, "%s: the kNN lists have %lld rows but the data has %lld points", what,
                     (long long)nn->n, (long long)x->n);
  return VIC_OK;
}

vic_status vic_dnn1_stats_compute(vic_ctx *c, const vic_knn *nn, int32_t d, vic_dnn1_stats *out) {
  if (!c) return VIC_E_ARGUMENT;
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "d_nn1 statistics need an output structure");
  out->mean = out->max = out->global_density = 0;
  vic_status s = vic__check_lists(c, nn, "d_nn1 statistics");
  if (s != VIC_OK) return s;
  if (d <= 0) return vic__fail(c, VIC_E_ARGUMENT, "d_nn1 statistics need the dimension d >= 1 (got %d)", (int)d);

  double sum = 0, mx = 0;
  int64_t cnt = 0;
  const int64_t n = nn->n, k = nn->k;
#pragma omp parallel for num_threads(vic__threads(c)) reduction(+ : sum, cnt) reduction(max : mx) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    if (nn->ids[i * k] < 0) continue; /* a point without neighbours has no d_nn1 */
    double r = nn->dist[i * k];
    sum += r;
    cnt++;
    if (r > mx) mx = r;
  }
  if (cnt == 0) return vic__fail(c, VIC_E_ARGUMENT, "no point of the kNN lists has a neighbour");
  if (!isfinite(sum)) return vic__fail(c, VIC_E_NONFINITE, "the kNN lists hold non-finite distances");
  out->mean = sum / (double)cnt;
  out->max = mx;
  if (out->mean > 0) {
    /* in logarithms: (Gamma/mean)^d overflows for d = 6 and tiny distances */
    double ln = (double)d * (lgamma(1.0 + 1.0 / d) - log(out->mean)) - vic__log_unit_ball_volume(d);
    out->global_density = exp(ln);
    if (out->global_density == 0 || !isfinite(out->global_density))
      vic__log(c, VIC_LOG_WARNING, "the global density in d = %d is 10^%.1f, outside what a double holds", (int)d,
               ln / log(10.0));
  } else {
    out->global_density = INFINITY;
    vic__log(c, VIC_LOG_WARNING, "every nearest neighbour is at distance 0 (duplicate points): the global density is infinite");
  }
  return VIC_OK;
}
