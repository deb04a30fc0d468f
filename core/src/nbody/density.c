/* Densities from kNN lists: the kNN estimator and SPH with the cubic
 * spline, at every point, on the CPU (OpenMP).
 *
 * kNN density (Casertano & Hut 1985): rho_i = (k - 1) m / (V_d r_k^d),
 * r_k the distance to the k-th neighbour, self excluded.  The k-th
 * neighbour sits on the boundary of the ball and is not counted, which
 * makes 1/rho unbiased for a Poisson process.  With a mass array the
 * (k - 1) m becomes the mass of the k - 1 nearest neighbours (not the
 * particle itself, not the k-th): the same estimator with each counted
 * particle weighted by its own mass.
 *
 * SPH density (gather form, as pynbody and Gadget-2 compute it):
 * rho_i = sum_j m_j W(|x_i - x_j|, R_i) over the particle itself (W(0),
 * the self contribution both codes include) and its k neighbours, with
 * the cubic-spline kernel of support radius R_i = r_k.  The k-th
 * neighbour lies on the support's edge and adds nothing.  The two
 * conventions are the same kernel; they differ in what they call the
 * smoothing length and in the usual neighbour count:
 *   pynbody: h = r_k / 2, support 2h; nsmooth = 32 counts the particle
 *            itself, so build lists with k = 31 to match it;
 *   Gadget:  h = r_k, support h; 60-64 neighbours (k = 63 with self).
 * Periodic boxes need nothing here: the lists carry minimum-image
 * distances.  Any d: V_d and the kernel normalisation come from
 * density_math.h (3-d space, 2-d maps, 6-d phase space). */
#include "nbody_internal.h"
#include "backend_cuda.h"
#include "density_cuda.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

static void defaults(vic_density_options *o) {
  memset(o, 0, sizeof *o);
  o->sph = VIC_SPH_PYNBODY;
  o->total_mass = 0; /* unit masses */
}

void vic_density_options_init_sized(vic_density_options *o, size_t struct_size) {
  vic_density_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

/* The first row whose list cannot give a density (a missing neighbour, an
 * id out of range, or a zero k-th distance from duplicates), or -1. */
static int64_t first_bad_row(vic_ctx *c, const vic_knn *nn, int64_t n, int *why) {
  const int64_t k = nn->k;
  int64_t bad = INT64_MAX;
#pragma omp parallel for num_threads(vic__threads(c)) reduction(min : bad) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t *id = nn->ids + i * k;
    int ok = nn->dist[i * k + k - 1] > 0 && isfinite(nn->dist[i * k + k - 1]);
    for (int64_t t = 0; t < k && ok; ++t) ok = id[t] >= 0 && id[t] < n;
    if (!ok && i < bad) bad = i;
  }
  if (bad == INT64_MAX) return -1;
  const int64_t *id = nn->ids + bad * k;
  *why = 0;
  for (int64_t t = 0; t < k; ++t)
    if (id[t] < 0 || id[t] >= n) *why = 1;
  return bad;
}

vic_status vic__check_density_options(vic_ctx *c, int64_t n, const float *mass, const vic_density_options *o) {
  if ((unsigned)o->sph > VIC_SPH_GADGET) return vic__fail(c, VIC_E_ARGUMENT, "unknown SPH convention %d", (int)o->sph);
  if (!(o->total_mass >= 0) || !isfinite(o->total_mass))
    return vic__fail(c, VIC_E_ARGUMENT, "total_mass must be >= 0 and finite (got %g; 0 = unit masses)", o->total_mass);
  if (mass) {
    int64_t badm = INT64_MAX;
#pragma omp parallel for num_threads(vic__threads(c)) reduction(min : badm) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      if (!(mass[i] >= 0) || !isfinite(mass[i])) badm = i < badm ? i : badm;
    if (badm != INT64_MAX)
      return vic__fail(c, VIC_E_ARGUMENT, "mass of particle %lld is %g; masses must be finite and >= 0", (long long)badm,
                       (double)mass[badm]);
  }
  return VIC_OK;
}

/* The context's backend policy for the densities: *gpu = 1 when the GPU
 * runs (CUDA forced or AUTO with a usable device); a forced GPU without
 * one is VIC_E_NODEVICE with the probe's reason. */
vic_status vic__density_use_gpu(vic_ctx *c, const char *what, int *gpu) {
  *gpu = 0;
  if (c->opt.backend == VIC_BACKEND_CPU) return VIC_OK;
  vic_status s = vic__cuda_probe(c);
  if (s == VIC_OK) { *gpu = 1; return VIC_OK; }
  if (c->opt.backend == VIC_BACKEND_CUDA) {
    char why[sizeof c->error];
    snprintf(why, sizeof why, "%s", c->error);
    return vic__fail(c, VIC_E_NODEVICE, "%s on the GPU was requested (backend 'cuda') but the GPU is unusable: %s", what,
                     why);
  }
  c->error[0] = '\0';
  return VIC_OK;
}

/* After a failed GPU attempt: VIC_OK to go on with the CPU (AUTO, with a
 * warning), or the failure itself (forced CUDA, cancellation). */
vic_status vic__density_after_gpu(vic_ctx *c, vic_status s, const char *what) {
  if (s == VIC_E_CANCELLED || c->opt.backend == VIC_BACKEND_CUDA) return s;
  vic__log(c, VIC_LOG_WARNING, "GPU %s failed (%s); falling back to the CPU", what, c->error);
  c->error[0] = '\0';
  return VIC_OK;
}

static vic_status check_inputs(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass,
                               const vic_density_options *o) {
  vic_status s = vic__check_lists_of(c, x, nn, "density");
  if (s != VIC_OK) return s;
  if (nn->k < 2)
    return vic__fail(c, VIC_E_ARGUMENT, "density needs k >= 2 neighbours per point (got k = %d)", (int)nn->k);
  int why = 0;
  int64_t bad = first_bad_row(c, nn, x->n, &why);
  if (bad >= 0) {
    if (why)
      return vic__fail(c, VIC_E_ARGUMENT, "point %lld has fewer than k = %d valid neighbours; densities need full lists",
                       (long long)bad, (int)nn->k);
    return vic__fail(c, VIC_E_ARGUMENT,
                     "point %lld has its k = %d nearest neighbours at distance 0 (duplicate points): its density is "
                     "infinite; remove duplicates or raise k",
                     (long long)bad, (int)nn->k);
  }
  return vic__check_density_options(c, x->n, mass, o);
}

/* A density from the log of its numerator (a mass, or a kernel sum times
 * sigma_d) and of its volume: in logs because r_k^d and V_d leave double's
 * range in high d (r_k^512) and the ratio then is 0 or NaN.  *out gets
 * the float, or 0 with *out_log the log10 when a float cannot hold it. */
static inline int density_from_logs(double num, double log_num_extra, double log_volume, float *out, double *out_log10) {
  if (num == 0) { *out = 0.f; return 1; } /* zero mass: an exact zero density */
  const double l = log(num) + log_num_extra - log_volume;
  if (l > log((double)FLT_MAX) || l < log((double)FLT_MIN)) {
    *out = 0.f;
    *out_log10 = l / log(10.0);
    return 0;
  }
  *out = (float)exp(l);
  return 1;
}

vic_status vic__cpu_density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass, double unit_mass,
                            vic_sph_convention sph, float *knn_density, float *sph_density, float *smoothing_length) {
  const int64_t n = x->n, k = nn->k;
  const int32_t d = x->d;
  const double log_vd = vic__log_unit_ball_volume(d), log_sigma = vic__log_m4_norm(d);
  const double h_of_rk = sph == VIC_SPH_PYNBODY ? 0.5 : 1.0;
  int64_t bad = INT64_MAX;               /* first point whose density a float cannot hold */
  double lo = INFINITY, hi = -INFINITY;  /* log10 range of the densities, held or not */
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static, 4096) reduction(min : bad, lo) reduction(max : hi)
  for (int64_t i = 0; i < n; ++i) {
    if (vic__cancelled(c)) continue;
    const int64_t *id = nn->ids + i * k;
    const float *r = nn->dist + i * k;
    const double rk = r[k - 1], log_rkd = d * log(rk);
    double l10 = 0;
    int ok = 1;
    if (knn_density) {
      double m = 0;
      if (mass) for (int64_t t = 0; t < k - 1; ++t) m += mass[id[t]];
      else m = (double)(k - 1) * unit_mass;
      ok = density_from_logs(m, 0.0, log_vd + log_rkd, &knn_density[i], &l10);
      if (m > 0) {
        const double lv = ok ? log10((double)knn_density[i]) : l10;
        lo = lv < lo ? lv : lo;
        hi = lv > hi ? lv : hi;
      }
    }
    if (sph_density) {
      double sum = (mass ? mass[i] : unit_mass) * vic__m4_shape(0.0);
      for (int64_t t = 0; t < k - 1; ++t) sum += (mass ? mass[id[t]] : unit_mass) * vic__m4_shape(r[t] / rk);
      double ls = 0;
      if (!density_from_logs(sum, log_sigma, log_rkd, &sph_density[i], &ls)) {
        ok = 0;
        lo = ls < lo ? ls : lo;
        hi = ls > hi ? ls : hi;
      }
    }
    if (!ok && i < bad) bad = i;
    if (smoothing_length) smoothing_length[i] = (float)(h_of_rk * rk);
  }
  if (!vic__cancelled(c) && bad != INT64_MAX) {
    /* densities scale as length^-d: a factor s on the coordinates moves
     * log10 rho by -d log10 s, which centres the range when it fits */
    const double span = hi - lo, lmin = log10((double)FLT_MIN), lmax = log10((double)FLT_MAX);
    char fix[160];
    if (span < lmax - lmin - 2)
      snprintf(fix, sizeof fix, "multiplying the coordinates by %.3g would bring them into range", pow(10.0, 0.5 * (lo + hi) / d));
    else
      snprintf(fix, sizeof fix, "they span more than a float holds even after rescaling; use fewer dimensions");
    return vic__fail(c, VIC_E_NONFINITE,
                     "densities in d = %d: point %lld has r_k = %g, and the densities span 10^%.1f .. 10^%.1f, outside "
                     "what a float holds (10^%.0f .. 10^%.0f); %s",
                     (int)d, (long long)bad, (double)nn->dist[bad * k + k - 1], lo, hi, lmin, lmax, fix);
  }
  return vic__progress(c, "density", 1.0);
}

/* Densities from the GPU that a float did not hold (inf, NaN, or 0 from an
 * underflow: r_k^d leaves the range in high d) are recomputed on the CPU,
 * which works in logs and names the cause. */
int vic__density_needs_cpu_check(vic_ctx *c, int64_t n, const float *mass, const float *knn_density,
                                 const float *sph_density) {
  int bad = 0;
#pragma omp parallel for schedule(static) num_threads(vic__threads(c)) reduction(| : bad) if (n > 1000000)
  for (int64_t i = 0; i < n; ++i) {
    if (knn_density && (!isfinite(knn_density[i]) || (knn_density[i] < FLT_MIN && !mass))) bad |= 1;
    if (sph_density && (!isfinite(sph_density[i]) || (sph_density[i] < FLT_MIN && !mass))) bad |= 1;
  }
  return bad;
}

vic_status vic_density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass,
                       const vic_density_options *o, float *knn_density, float *sph_density,
                       float *smoothing_length) {
  vic__begin_call(c);
  return vic__density(c, x, nn, mass, o, knn_density, sph_density, smoothing_length);
}

vic_status vic__density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass,
                        const vic_density_options *o_in, float *knn_density, float *sph_density,
                        float *smoothing_length) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  vic_density_options o;
  vic_density_options_init(&o);
  if (o_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o, "vic_density_options");
    if (so_ != VIC_OK) return so_;
  }
  vic_status s = check_inputs(c, x, nn, mass, &o);
  if (s != VIC_OK) return s;
  if (!knn_density && !sph_density && !smoothing_length) return VIC_OK; /* nothing asked */
  if ((s = vic__progress(c, "density", 0.0)) != VIC_OK) return s;
  double unit_mass = o.total_mass > 0 ? o.total_mass / (double)x->n : 1.0;
  int gpu = 0;
  if ((s = vic__density_use_gpu(c, "density", &gpu)) != VIC_OK) return s;
  if (gpu) {
    s = vic__cuda_density(c, x, nn, mass, unit_mass, o.sph, knn_density, sph_density, smoothing_length);
    if (s == VIC_OK && !vic__density_needs_cpu_check(c, x->n, mass, knn_density, sph_density)) return vic__progress(c, "density", 1.0);
    if (s == VIC_OK) return vic__cpu_density(c, x, nn, mass, unit_mass, o.sph, knn_density, sph_density, smoothing_length);
    if ((s = vic__density_after_gpu(c, s, "density")) != VIC_OK) return s;
  }
  return vic__cpu_density(c, x, nn, mass, unit_mass, o.sph, knn_density, sph_density, smoothing_length);
}

vic_status vic__check_density_input(vic_ctx *c, const vic_data *x, int32_t k) {
  vic_status s = vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  if (x->metric != VIC_L2)
    return vic__fail(c, VIC_E_UNSUPPORTED, "density needs the L2 metric (got %s): densities are volumes in Euclidean space",
                     vic_metric_name(x->metric));
  if (k < 2 || (int64_t)k >= x->n)
    return vic__fail(c, VIC_E_ARGUMENT, "density needs 2 <= k < n neighbours per point (got k = %d, n = %lld)", (int)k,
                     (long long)x->n);
  return VIC_OK;
}

vic_status vic__device_grid_lists(vic_ctx *c, const vic_data *x, int32_t k, int keep, const char *on_device,
                                  vic_knn *out) {
  vic__knn_clear(out);
  out->n = x->n;
  out->k = k;
  if (keep) {
    out->ids = vic__malloc(c, (size_t)x->n * (size_t)k * sizeof *out->ids, "neighbour ids");
    out->dist = out->ids ? vic__malloc(c, (size_t)x->n * (size_t)k * sizeof *out->dist, "neighbour distances") : NULL;
    if (!out->dist) { vic_knn_free(out); return VIC_E_NOMEM; }
  }
  vic_report *rep = &out->report;
  rep->method = VIC_METHOD_GRID;
  rep->backend = VIC_BACKEND_CUDA;
  rep->k_requested = rep->k = k;
  vic__report_reason(rep, "d = %d <= 3 with the L2 metric: exact cell grid, %s on the device", (int)x->d, on_device);
  return VIC_OK;
}

vic_status vic__fail_duplicate_row(vic_ctx *c, int64_t row, int32_t k) {
  return vic__fail(c, VIC_E_ARGUMENT,
                   "point %lld has its k = %d nearest neighbours at distance 0 (duplicate points): its density is "
                   "infinite; remove duplicates or raise k",
                   (long long)row, (int)k);
}

void vic__finish_device_lists(vic_ctx *c, vic_knn *lists, int kept, double t0) {
  vic_report *rep = &lists->report;
  if (kept) vic__report_dnn1(lists, rep);
  rep->recall_estimate = 1.0;
  rep->seconds_total = vic__now() - t0;
  rep->warnings = c->warnings;
}

vic_status vic_knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass,
                           const vic_density_options *o, vic_knn *nn, float *knn_density, float *sph_density,
                           float *smoothing_length) {
  vic__begin_call(c);
  return vic__knn_density(c, x, k, mass, o, nn, knn_density, sph_density, smoothing_length);
}

vic_status vic__knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass,
                            const vic_density_options *o_in, vic_knn *nn, float *knn_density, float *sph_density,
                            float *smoothing_length) {
  if (!c) return VIC_E_ARGUMENT;
  if (nn) vic__knn_clear(nn);
  c->error[0] = '\0';
  c->warnings = 0;
  const double t0 = vic__now();
  vic_density_options o;
  vic_density_options_init(&o);
  if (o_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o, "vic_density_options");
    if (so_ != VIC_OK) return so_;
  }
  vic_status s = vic__check_density_input(c, x, k);
  if (s != VIC_OK) return s;
  if ((s = vic__check_density_options(c, x->n, mass, &o)) != VIC_OK) return s;
  if ((s = vic__progress(c, "density", 0.0)) != VIC_OK) return s;
  const double unit_mass = o.total_mass > 0 ? o.total_mass / (double)x->n : 1.0;
  int gpu = 0;
  if ((s = vic__density_use_gpu(c, "kNN density", &gpu)) != VIC_OK) return s;
  if (gpu && x->d <= 3) {
    /* grid lists and densities in one device call: the lists stay there */
    vic_knn out;
    if ((s = vic__device_grid_lists(c, x, k, nn != NULL, "densities", &out)) != VIC_OK) return s;
    int64_t bad = -1;
    s = vic__cuda_knn_density(c, x, k, mass, unit_mass, o.sph, knn_density, sph_density, smoothing_length, out.ids,
                              out.dist, &out.report, &bad);
    if (s == VIC_OK && bad >= 0) {
      vic_knn_free(&out);
      return vic__fail_duplicate_row(c, bad, k);
    }
    if (s == VIC_OK && !vic__density_needs_cpu_check(c, x->n, mass, knn_density, sph_density)) {
      if (nn) {
        vic__finish_device_lists(c, &out, 1, t0);
        *nn = out;
      }
      return vic__progress(c, "density", 1.0);
    }
    vic_knn_free(&out);
    /* a density out of float range goes on to the CPU path, which names it */
    if (s != VIC_OK && (s = vic__density_after_gpu(c, s, "grid + density")) != VIC_OK) return s;
  }
  /* the general path: exact lists (their own backend policy), then densities */
  vic_build_options bo;
  vic_build_options_init(&bo);
  bo.k = k;
  bo.method = x->d <= 3 ? VIC_METHOD_GRID : VIC_METHOD_BRUTE;
  bo.recall_sample = 0;
  vic_knn tmp;
  const int warned = c->warnings;
  s = vic__knn_build(c, x, &bo, &tmp);
  int warnings = warned + c->warnings;
  if (s == VIC_OK) {
    s = vic__density(c, x, &tmp, mass, &o, knn_density, sph_density, smoothing_length);
    warnings += c->warnings;
  }
  c->warnings = warnings;
  if (s == VIC_OK && nn) {
    tmp.report.seconds_total = vic__now() - t0;
    tmp.report.warnings = warnings;
    *nn = tmp;
  } else {
    vic_knn_free(&tmp);
  }
  return s;
}
