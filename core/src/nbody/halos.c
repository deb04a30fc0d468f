/* The halo catalogue (vic_halo_catalogue in vicinity.h): spherical-
 * overdensity radii and masses, membership inside R_Delta, centres of
 * mass, half-mass radii, velocities, the optional energy cut
 * (halo_unbind.c) and radial density profiles, one peak's basin at a time.
 *
 * Why the basin and not every particle around the centre: a subhalo sits
 * where its host is denser than Delta times the mean, so a sphere over all
 * particles would grow until it swallowed the host; the basin ends where
 * the subhalo's particles stop climbing to it. */
#include "nbody_internal.h"
#include "halo_unbind.h"

#include <string.h>

#define VIC__PI 3.14159265358979323846

static void defaults(vic_halo_options *o) {
  memset(o, 0, sizeof *o);
  o->overdensity = 200.0;
  o->reference = VIC_OVERDENSITY_MEAN;
  o->min_members = 20;
  o->gravitational_constant = 1.0;
  o->unbind_direct_max = 20000;
  o->profile_bins = 20;
  o->profile_inner = 0.02;
  o->profile_outer = 1.0;
}

void vic_halo_options_init_sized(vic_halo_options *o, size_t struct_size) {
  vic_halo_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

void vic_halos_free(vic_halos *h) {
  if (!h) return;
  free(h->halo_id);
  free(h->peak);
  free(h->members);
  free(h->mass);
  free(h->centre);
  free(h->centre_of_mass);
  free(h->r_delta);
  free(h->m_delta);
  free(h->r_half);
  free(h->bulk_velocity);
  free(h->sigma_v);
  free(h->unbound);
  free(h->profile_radius);
  free(h->profile_density);
  free(h->profile_count);
  memset(h, 0, sizeof *h);
}

static vic_status check_inputs(vic_ctx *c, const vic_data *x, const vic_peaks *p, const float *mass,
                               const float *velocity, const vic_halo_options *o) {
  vic_status s = vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  if (x->d != 3 || x->metric != VIC_L2)
    return vic__fail(c, VIC_E_ARGUMENT, "the halo catalogue needs 3-d Euclidean rows (got d = %d, metric %s)",
                     (int)x->d, vic_metric_name(x->metric));
  if (!p || p->n != x->n || !p->peak_id || (p->n_peaks > 0 && (!p->peak_point || !p->peak_centre)))
    return vic__fail(c, VIC_E_ARGUMENT, "the halo catalogue needs the peaks of these %lld points (vic_peaks_find)",
                     (long long)x->n);
  if (!(o->overdensity > 0) || !isfinite(o->overdensity))
    return vic__fail(c, VIC_E_ARGUMENT, "the overdensity Delta must be finite and > 0 (got %g)", o->overdensity);
  if (o->reference != VIC_OVERDENSITY_MEAN && o->reference != VIC_OVERDENSITY_CRITICAL)
    return vic__fail(c, VIC_E_ARGUMENT, "unknown overdensity reference %d (mean 0 or critical 1)", (int)o->reference);
  if (o->reference == VIC_OVERDENSITY_CRITICAL && (!(o->critical_density > 0) || !isfinite(o->critical_density)))
    return vic__fail(c, VIC_E_ARGUMENT,
                     "Delta times the critical density needs the critical density in the data's units (got %g)",
                     o->critical_density);
  if (!(o->mean_density >= 0) || !isfinite(o->mean_density) || !(o->total_mass >= 0) || !isfinite(o->total_mass))
    return vic__fail(c, VIC_E_ARGUMENT, "mean_density (%g) and total_mass (%g) must be finite and >= 0",
                     o->mean_density, o->total_mass);
  if (o->min_members < 1 || o->unbind_direct_max < 0)
    return vic__fail(c, VIC_E_ARGUMENT, "min_members (%lld) must be >= 1 and unbind_direct_max (%lld) >= 0",
                     (long long)o->min_members, (long long)o->unbind_direct_max);
  if (o->unbind && !velocity)
    return vic__fail(c, VIC_E_ARGUMENT, "removing unbound particles needs a velocity per particle");
  if (o->unbind && (!(o->gravitational_constant > 0) || !isfinite(o->gravitational_constant) ||
                    !(o->softening >= 0) || !isfinite(o->softening)))
    return vic__fail(c, VIC_E_ARGUMENT, "the energy cut needs G > 0 (got %g) and a softening >= 0 (got %g)",
                     o->gravitational_constant, o->softening);
  if (o->profile_bins < 0 || (o->profile_bins > 0 && !(o->profile_inner > 0 && o->profile_outer > o->profile_inner &&
                                                       isfinite(o->profile_outer))))
    return vic__fail(c, VIC_E_ARGUMENT,
                     "profiles need bins >= 0 (got %d) and 0 < inner (%g) < outer (%g) fractions of R_Delta",
                     (int)o->profile_bins, o->profile_inner, o->profile_outer);
  int64_t bad = -1;
  for (int64_t i = 0; i < x->n && bad < 0; ++i) {
    if (mass && (!(mass[i] >= 0) || !isfinite(mass[i]))) bad = i;
    if (velocity && (!isfinite(velocity[3 * i]) || !isfinite(velocity[3 * i + 1]) || !isfinite(velocity[3 * i + 2])))
      bad = i;
    if (p->peak_id[i] < 0 || p->peak_id[i] >= p->n_peaks) bad = i;
  }
  if (bad >= 0)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "point %lld has a mass or velocity that is not finite (or a negative mass), or no peak",
                     (long long)bad);
  return VIC_OK;
}

typedef struct {
  double r;
  int64_t id;
} by_r;

static int ascending_r(const void *a, const void *b) {
  const by_r *p = a, *q = b;
  if (p->r != q->r) return p->r < q->r ? -1 : 1;
  return p->id < q->id ? -1 : (p->id > q->id);
}

/* What one peak's basin gives; kept per peak, compacted into halos. */
typedef struct {
  int64_t members, unbound;
  double mass, com[3], r_delta, m_delta, r_half, vb[3], sigma;
} peak_result;

typedef struct {
  const vic_data *x;
  const float *mass, *velocity;
  double unit_mass, threshold;
  const vic_halo_options *o;
} halo_job;

static double particle_mass(const halo_job *j, int64_t i) { return j->mass ? (double)j->mass[i] : j->unit_mass; }

/* Offset of point i from centre (minimum image on periodic axes). */
static void offset(const vic_data *x, int64_t i, const double *centre, double *dx) {
  const float *a = vic__row(x, i);
  for (int j = 0; j < 3; ++j) {
    double t = (double)a[j] - centre[j];
    if (x->box && x->box[j] > 0) t -= x->box[j] * nearbyint(t / x->box[j]);
    dx[j] = t;
  }
}

/* The profile of one basin (sorted by r) in log bins of R_Delta. */
static void profile(const halo_job *j, const by_r *s, int64_t m, double r_delta, double *radius, double *density,
                    int64_t *count) {
  const int32_t nb = j->o->profile_bins;
  const double lo = j->o->profile_inner * r_delta, hi = j->o->profile_outer * r_delta, step = log(hi / lo) / nb;
  for (int32_t b = 0; b < nb; ++b) { density[b] = 0; count[b] = 0; }
  for (int64_t t = 0; t < m && s[t].r < hi; ++t) {
    if (s[t].r < lo) continue;
    int32_t b = (int32_t)(log(s[t].r / lo) / step);
    b = b < 0 ? 0 : (b >= nb ? nb - 1 : b);
    density[b] += particle_mass(j, s[t].id);
    count[b]++;
  }
  for (int32_t b = 0; b < nb; ++b) {
    const double r1 = lo * exp(step * b), r2 = lo * exp(step * (b + 1));
    radius[b] = sqrt(r1 * r2);
    density[b] /= 4.0 / 3.0 * VIC__PI * (r2 * r2 * r2 - r1 * r1 * r1);
  }
}

/* One peak: basin ids[0, m) around centre.  Returns 0 on allocation
 * failure.  label (n) gets peak index q for the halo's members. */
static int one_peak(const halo_job *j, int64_t q, const int64_t *ids, int64_t m, const double *centre,
                    peak_result *res, double *prof_r, double *prof_rho, int64_t *prof_n, int64_t *label) {
  memset(res, 0, sizeof *res);
  by_r *s = malloc((size_t)(m > 0 ? m : 1) * sizeof *s);
  if (!s) return 0;
  for (int64_t t = 0; t < m; ++t) {
    double dx[3];
    offset(j->x, ids[t], centre, dx);
    s[t].r = sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
    s[t].id = ids[t];
  }
  qsort(s, (size_t)m, sizeof *s, ascending_r);
  /* Outward until the enclosed mean density first falls below the
   * threshold; R_Delta is where the mass inside sits exactly at it. */
  double M = 0, m_delta = 0;
  int64_t inside = 0;
  for (int64_t t = 0; t < m; ++t) {
    const double Mt = M + particle_mass(j, s[t].id), r = s[t].r;
    if (r > 0 && Mt < j->threshold * (4.0 / 3.0 * VIC__PI * r * r * r)) break;
    M = Mt;
    m_delta = Mt;
    inside = t + 1;
  }
  res->m_delta = m_delta;
  res->r_delta = cbrt(m_delta / (4.0 / 3.0 * VIC__PI * j->threshold));
  if (j->o->profile_bins > 0 && res->r_delta > 0) profile(j, s, m, res->r_delta, prof_r, prof_rho, prof_n);
  if (inside < j->o->min_members) { free(s); return 1; }

  double *dx = malloc((size_t)inside * 3 * sizeof *dx), *v = NULL, *r = malloc((size_t)inside * sizeof *r),
         *mm = malloc((size_t)inside * sizeof *mm);
  unsigned char *keep = malloc((size_t)inside);
  if (j->velocity) v = malloc((size_t)inside * 3 * sizeof *v);
  int ok = dx && r && mm && keep && (!j->velocity || v);
  if (ok) {
    for (int64_t t = 0; t < inside; ++t) {
      const int64_t i = s[t].id;
      offset(j->x, i, centre, dx + 3 * t);
      r[t] = s[t].r;
      mm[t] = particle_mass(j, i);
      keep[t] = 1;
      if (v)
        for (int a = 0; a < 3; ++a) v[3 * t + a] = j->velocity[3 * i + a];
    }
    if (j->o->unbind) {
      vic__halo_members hm = {inside, r, dx, v, mm};
      const int64_t removed = vic__unbind(&hm, j->o->gravitational_constant, j->o->softening,
                                          j->o->unbind_direct_max, keep);
      ok = removed >= 0;
      res->unbound = removed > 0 ? removed : 0;
    }
  }
  if (ok) {
    double Mk = 0, c[3] = {0, 0, 0}, p[3] = {0, 0, 0};
    for (int64_t t = 0; t < inside; ++t) {
      if (!keep[t]) continue;
      Mk += mm[t];
      res->members++;
      label[s[t].id] = q;
      for (int a = 0; a < 3; ++a) {
        c[a] += mm[t] * dx[3 * t + a];
        if (v) p[a] += mm[t] * v[3 * t + a];
      }
    }
    res->mass = Mk;
    double half = 0;
    res->r_half = 0;
    for (int64_t t = 0; t < inside; ++t) {
      if (!keep[t]) continue;
      half += mm[t];
      if (half >= 0.5 * Mk) { res->r_half = r[t]; break; }
    }
    double s2 = 0;
    for (int a = 0; a < 3; ++a) {
      double w = centre[a] + (Mk > 0 ? c[a] / Mk : 0.0);
      if (j->x->box && j->x->box[a] > 0) w -= j->x->box[a] * floor(w / j->x->box[a]);
      res->com[a] = w;
      res->vb[a] = v && Mk > 0 ? p[a] / Mk : NAN;
    }
    for (int64_t t = 0; v && t < inside; ++t) {
      if (!keep[t]) continue;
      for (int a = 0; a < 3; ++a) s2 += mm[t] * pow(v[3 * t + a] - res->vb[a], 2);
    }
    res->sigma = v && Mk > 0 ? sqrt(s2 / (3.0 * Mk)) : NAN;
  }
  free(s);
  free(dx);
  free(v);
  free(r);
  free(mm);
  free(keep);
  return ok;
}

static vic_status reference(vic_ctx *c, const vic_data *x, const float *mass, const vic_halo_options *o,
                            double unit_mass, vic_halos *out, double *threshold) {
  double rho_mean = o->mean_density;
  if (o->reference == VIC_OVERDENSITY_MEAN && rho_mean == 0) {
    double volume = 0, total = 0;
    vic_status s = vic__data_volume(c, x, &volume);
    if (s != VIC_OK) return s;
    if (mass) {
#pragma omp parallel for num_threads(vic__threads(c)) reduction(+ : total) schedule(static)
      for (int64_t i = 0; i < x->n; ++i) total += mass[i];
    } else {
      total = unit_mass * (double)x->n;
    }
    rho_mean = total / volume;
    if (!(rho_mean > 0)) return vic__fail(c, VIC_E_ARGUMENT, "the total mass is 0: no mean density to compare with");
  }
  out->mean_density = rho_mean;
  *threshold = o->overdensity * (o->reference == VIC_OVERDENSITY_MEAN ? rho_mean : o->critical_density);
  out->reference_density = *threshold;
  return VIC_OK;
}

static vic_status allocate(vic_ctx *c, vic_halos *h, int64_t nh, int32_t bins) {
  const size_t m = (size_t)(nh > 0 ? nh : 1), mb = m * (size_t)(bins > 0 ? bins : 1);
  h->peak = vic__malloc(c, m * sizeof *h->peak, "halo peaks");
  h->members = vic__malloc(c, m * sizeof *h->members, "halo members");
  h->mass = vic__malloc(c, m * sizeof *h->mass, "halo masses");
  h->centre = vic__malloc(c, 3 * m * sizeof *h->centre, "halo centres");
  h->centre_of_mass = vic__malloc(c, 3 * m * sizeof *h->centre_of_mass, "halo centres of mass");
  h->r_delta = vic__malloc(c, m * sizeof *h->r_delta, "halo radii");
  h->m_delta = vic__malloc(c, m * sizeof *h->m_delta, "halo SO masses");
  h->r_half = vic__malloc(c, m * sizeof *h->r_half, "halo half-mass radii");
  h->bulk_velocity = vic__malloc(c, 3 * m * sizeof *h->bulk_velocity, "halo velocities");
  h->sigma_v = vic__malloc(c, m * sizeof *h->sigma_v, "halo dispersions");
  h->unbound = vic__malloc(c, m * sizeof *h->unbound, "halo unbound counts");
  h->profile_radius = vic__malloc(c, mb * sizeof *h->profile_radius, "profile radii");
  h->profile_density = vic__malloc(c, mb * sizeof *h->profile_density, "profile densities");
  h->profile_count = vic__malloc(c, mb * sizeof *h->profile_count, "profile counts");
  return h->profile_count && h->profile_density && h->profile_radius && h->unbound && h->sigma_v &&
                 h->bulk_velocity && h->r_half && h->m_delta && h->r_delta && h->centre_of_mass && h->centre &&
                 h->mass && h->members && h->peak
             ? VIC_OK
             : VIC_E_NOMEM;
}

vic_status vic_halo_catalogue(vic_ctx *c, const vic_data *x, const vic_peaks *p, const float *mass,
                              const float *velocity, const vic_halo_options *o_in, vic_halos *out) {
  if (!c) return VIC_E_ARGUMENT;
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "the halo catalogue needs an output structure");
  vic__halos_clear(out);
  c->error[0] = '\0';
  c->warnings = 0;
  const double t0 = vic__now();
  vic_halo_options o;
  vic_halo_options_init(&o);
  if (o_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o, "vic_halo_options");
    if (so_ != VIC_OK) return so_;
  }
  vic_status s = check_inputs(c, x, p, mass, velocity, &o);
  if (s != VIC_OK) return s;
  if ((s = vic__progress(c, "halos", 0.0)) != VIC_OK) return s;
  const int64_t n = x->n, np = p->n_peaks;
  const int32_t bins = o.profile_bins;
  halo_job job = {x, mass, velocity, o.total_mass > 0 ? o.total_mass / (double)n : 1.0, 0, &o};
  if ((s = reference(c, x, mass, &o, job.unit_mass, out, &job.threshold)) != VIC_OK) return s;

  /* The basins as one list grouped by peak (counting sort). */
  int64_t *start = vic__calloc(c, (size_t)np + 1, sizeof *start, "basin offsets");
  int64_t *ids = start ? vic__malloc(c, (size_t)n * sizeof *ids, "basin lists") : NULL;
  int64_t *fill = ids ? vic__calloc(c, (size_t)np + 1, sizeof *fill, "basin fill") : NULL;
  peak_result *res = fill ? vic__calloc(c, (size_t)(np > 0 ? np : 1), sizeof *res, "peak results") : NULL;
  const size_t pb = (size_t)(np > 0 ? np : 1) * (size_t)(bins > 0 ? bins : 1);
  double *pr = res ? vic__calloc(c, pb, sizeof *pr, "profiles") : NULL;
  double *prho = pr ? vic__calloc(c, pb, sizeof *prho, "profiles") : NULL;
  int64_t *pn = prho ? vic__calloc(c, pb, sizeof *pn, "profiles") : NULL;
  out->n = n;
  out->profile_bins = bins;
  out->halo_id = pn ? vic__malloc(c, (size_t)n * sizeof *out->halo_id, "halo ids") : NULL;
  int64_t *halo_of = out->halo_id ? vic__malloc(c, (size_t)(np > 0 ? np : 1) * sizeof *halo_of, "halo numbers") : NULL;
  s = VIC_E_NOMEM;
  if (!halo_of) goto done;
  for (int64_t i = 0; i < n; ++i) start[p->peak_id[i] + 1]++;
  for (int64_t q = 0; q < np; ++q) start[q + 1] += start[q];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t q = p->peak_id[i];
    ids[start[q] + fill[q]++] = i;
    out->halo_id[i] = -1;
  }
  int failed = 0;
#pragma omp parallel for num_threads(vic__threads(c)) schedule(dynamic, 1) reduction(| : failed)
  for (int64_t q = 0; q < np; ++q) {
    if (vic__cancelled(c)) continue;
    double centre[3];
    for (int a = 0; a < 3; ++a) centre[a] = p->peak_centre[3 * q + a];
    const size_t b0 = (size_t)q * (size_t)(bins > 0 ? bins : 1);
    if (!one_peak(&job, q, ids + start[q], start[q + 1] - start[q], centre, &res[q], pr + b0, prho + b0, pn + b0,
                  out->halo_id))
      failed = 1;
  }
  if (failed) { s = vic__fail(c, VIC_E_NOMEM, "out of memory while measuring halos"); goto done; }
  if ((s = vic__progress(c, "halos", 0.9)) != VIC_OK) goto done;
  int64_t nh = 0;
  for (int64_t q = 0; q < np; ++q) halo_of[q] = res[q].members > 0 ? nh++ : -1;
  if ((s = allocate(c, out, nh, bins)) != VIC_OK) goto done;
  out->n_halos = nh;
  for (int64_t q = 0; q < np; ++q) {
    const int64_t h = halo_of[q];
    if (h < 0) continue;
    const peak_result *r = &res[q];
    out->peak[h] = q;
    out->members[h] = r->members;
    out->mass[h] = r->mass;
    out->r_delta[h] = r->r_delta;
    out->m_delta[h] = r->m_delta;
    out->r_half[h] = r->r_half;
    out->sigma_v[h] = r->sigma;
    out->unbound[h] = r->unbound;
    for (int a = 0; a < 3; ++a) {
      out->centre[3 * h + a] = p->peak_centre[3 * q + a];
      out->centre_of_mass[3 * h + a] = r->com[a];
      out->bulk_velocity[3 * h + a] = r->vb[a];
    }
    for (int32_t b = 0; b < bins; ++b) {
      out->profile_radius[h * bins + b] = pr[q * bins + b];
      out->profile_density[h * bins + b] = prho[q * bins + b];
      out->profile_count[h * bins + b] = pn[q * bins + b];
    }
  }
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    if (out->halo_id[i] >= 0) out->halo_id[i] = halo_of[out->halo_id[i]];
  if ((s = vic__progress(c, "halos", 1.0)) != VIC_OK) goto done;
  out->report.backend = VIC_BACKEND_CPU;
  out->report.method = p->report.method;
  out->report.k = out->report.k_requested = p->report.k;
  out->report.warnings = c->warnings;
  out->report.seconds_total = vic__now() - t0;
  s = VIC_OK;
done:
  free(start);
  free(ids);
  free(fill);
  free(res);
  free(pr);
  free(prho);
  free(pn);
  free(halo_of);
  if (s != VIC_OK) vic_halos_free(out);
  return s;
}
