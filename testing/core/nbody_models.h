/* Analytic n-body models for the density tests: seeded Plummer spheres
 * (drawn by inverting the cumulative mass), radial-bin comparison with an
 * analytic profile, and the shrinking-sphere centre.  Header-only so that
 * the test_*.c glob stays one test per file. */
#ifndef VIC_NBODY_MODELS_H
#define VIC_NBODY_MODELS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h" /* vt_unif: the seeded stream */

#define NB_PI 3.14159265358979323846

/* Plummer number density of n_total particles with scale radius a:
 * 3 n_total / (4 pi a^3) (1 + r^2/a^2)^(-5/2). */
static inline double nb_plummer_density(double n_total, double a, double r) {
  return 3.0 * n_total / (4.0 * NB_PI * a * a * a) * pow(1.0 + r * r / (a * a), -2.5);
}

/* Writes n points (3 floats each) of a Plummer sphere of scale a around
 * centre into xyz.  The cumulative mass fraction X is drawn from
 * [0, x_max) and inverted, r = a / sqrt(X^(-2/3) - 1): x_max < 1 cuts the
 * far tail (x_max = 0.999: r < 38.7 a) while the density inside stays
 * nb_plummer_density(n / x_max, a, r) exactly. */
static inline void nb_plummer(float *xyz, int64_t n, double a, const double centre[3], double x_max, uint64_t seed) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    double X = vt_unif(&s) * x_max;
    while (X <= 0) X = vt_unif(&s) * x_max;
    double r = a / sqrt(pow(X, -2.0 / 3.0) - 1.0);
    double cz = 2.0 * vt_unif(&s) - 1.0, phi = 2.0 * NB_PI * vt_unif(&s);
    double sz = sqrt(1.0 - cz * cz);
    xyz[3 * i + 0] = (float)(centre[0] + r * sz * cos(phi));
    xyz[3 * i + 1] = (float)(centre[1] + r * sz * sin(phi));
    xyz[3 * i + 2] = (float)(centre[2] + r * cz);
  }
}

static int nb_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0, m) (v is reordered); NAN when m = 0. */
static inline double nb_median(double *v, int64_t m) {
  if (m == 0) return NAN;
  qsort(v, (size_t)m, sizeof *v, nb_cmp_double);
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* Compares estimates rho[i] with truth(r_i) in nbins logarithmic radial
 * bins between r_lo and r_hi around centre: per bin, the median of
 * rho_i / truth(r_i) - 1.  Writes those medians into med (nbins) and
 * returns the largest |median|; counts (optional) gets the particles per
 * bin.  Bins with fewer than 20 particles count as failing (returns 1e9). */
static inline double nb_radial_median_error(const float *xyz, const float *rho, int64_t n, const double centre[3],
                                            double r_lo, double r_hi, int nbins, double (*truth)(double r, void *u),
                                            void *user, double *med, int64_t *counts) {
  double *rel = malloc((size_t)n * sizeof *rel);
  int *bin = malloc((size_t)n * sizeof *bin);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double dx = xyz[3 * i] - centre[0], dy = xyz[3 * i + 1] - centre[1], dz = xyz[3 * i + 2] - centre[2];
    double r = sqrt(dx * dx + dy * dy + dz * dz);
    bin[i] = (r >= r_lo && r < r_hi) ? (int)(nbins * log(r / r_lo) / log(r_hi / r_lo)) : -1;
    rel[i] = (double)rho[i] / truth(r, user) - 1.0;
  }
  double *v = malloc((size_t)n * sizeof *v);
  for (int b = 0; b < nbins; ++b) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; ++i)
      if (bin[i] == b) v[m++] = rel[i];
    med[b] = nb_median(v, m);
    if (counts) counts[b] = m;
    double e = m >= 20 ? fabs(med[b]) : 1e9;
    if (e > worst) worst = e;
  }
  free(v);
  free(rel);
  free(bin);
  return worst;
}

/* The Gadget-2 test suite's gas sphere profile, M = R = 1:
 * rho(r) = 1 / (2 pi r) for r <= 1, so M(< r) = r^2.  n particles drawn
 * as a Poisson sample (r = sqrt(u), isotropic directions), each of mass
 * 1/n, into xyz and mass. */
static inline double nb_gas_sphere_density(double r) { return 1.0 / (2.0 * NB_PI * r); }
static inline void nb_gas_sphere(float *xyz, float *mass, int64_t n, uint64_t seed) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    const double r = sqrt(vt_unif(&s));
    const double cz = 2.0 * vt_unif(&s) - 1.0, phi = 2.0 * NB_PI * vt_unif(&s), sz = sqrt(1.0 - cz * cz);
    xyz[3 * i] = (float)(r * sz * cos(phi));
    xyz[3 * i + 1] = (float)(r * sz * sin(phi));
    xyz[3 * i + 2] = (float)(r * cz);
    mass[i] = (float)(1.0 / (double)n);
  }
}

/* A dark-matter halo for the tests that ran on a simulation's halo: a
 * concentrated main body (Plummer, scale 0.05, 80% of the particles),
 * three subhalos (scales 0.03 to 0.04, 4% each: central densities a fifth
 * or less of the main body's, as in a simulated halo) and a diffuse
 * envelope (Plummer, scale 0.5, 8%), each cut at about 1.5 (mass
 * fractions 0.998, 0.99 and 0.85 of the spheres).  The main body's centre
 * is the origin. */
static inline void nb_halo(float *xyz, int64_t n, uint64_t seed) {
  static const double sub[3][4] = {{0.30, 0.10, -0.05, 0.04}, {-0.20, 0.25, 0.10, 0.035}, {0.05, -0.35, 0.20, 0.03}};
  const double origin[3] = {0, 0, 0};
  const int64_t n_sub = n / 25, n_env = 2 * n / 25, n_main = n - 3 * n_sub - n_env;
  nb_plummer(xyz, n_main, 0.05, origin, 0.998, seed);
  int64_t at = n_main;
  for (int k = 0; k < 3; ++k, at += n_sub) nb_plummer(xyz + 3 * at, n_sub, sub[k][3], sub[k], 0.99, seed + 1 + k);
  nb_plummer(xyz + 3 * at, n_env, 0.5, origin, 0.85, seed + 7);
}

/* The halos of the tests that once ran on a simulation's halo only: the
 * synthetic one (nb_halo, 32000 particles) always, the simulated one
 * (nbody/halo_low_res.npy, 32314 particles) when the data folder has it. */
static inline void nb_each_halo(void (*check)(const char *label, const vio_matrix m)) {
  vio_matrix m = {0};
  m.n = 32000;
  m.d = 3;
  m.rows = malloc((size_t)m.n * 3 * sizeof(float));
  nb_halo(m.rows, m.n, 5);
  check("synthetic halo", m);
  free(m.rows);
  if (!vt_load_data("nbody/halo_low_res.npy", &m)) return;
  VT_CHECK(m.n == 32314 && m.d == 3, "halo shape %lld x %d", (long long)m.n, (int)m.d);
  check("simulated halo", m);
  vio_free(&m);
}

/* Shrinking-sphere centre (Power et al. 2003): start from the centre of
 * mass and the radius enclosing every particle, then repeatedly shrink
 * the radius by 2.5% and re-centre on the particles inside, until fewer
 * than stop_count (or 1% of n) remain. */
static inline void nb_shrinking_sphere(const float *xyz, int64_t n, int64_t stop_count, double out[3]) {
  double c[3] = {0, 0, 0};
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j) c[j] += xyz[3 * i + j];
  for (int j = 0; j < 3; ++j) c[j] /= (double)n;
  double r2max = 0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < 3; ++j) { double t = xyz[3 * i + j] - c[j]; s += t * t; }
    if (s > r2max) r2max = s;
  }
  double r = sqrt(r2max);
  if (stop_count < n / 100) stop_count = n / 100;
  for (;;) {
    r *= 0.975;
    double sum[3] = {0, 0, 0};
    int64_t m = 0;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int j = 0; j < 3; ++j) { double t = xyz[3 * i + j] - c[j]; s += t * t; }
      if (s <= r * r) { for (int j = 0; j < 3; ++j) sum[j] += xyz[3 * i + j]; m++; }
    }
    if (m < stop_count || m == 0) break;
    for (int j = 0; j < 3; ++j) c[j] = sum[j] / (double)m;
  }
  memcpy(out, c, sizeof c);
}

/* NFW mass shape m(x) = ln(1 + x) - x / (1 + x), M(<r) = M_s m(r / r_s). */
static inline double nb_nfw_m(double x) { return log1p(x) - x / (1.0 + x); }

/* Writes n points of an NFW halo of scale radius rs around centre, drawn
 * out to x_max scale radii (r = rs X with m(X) = u m(x_max), u uniform,
 * inverted by bisection); positions wrap into [0, box) when box > 0. */
static inline void nb_nfw(float *xyz, int64_t n, double rs, double x_max, const double centre[3], double box,
                          uint64_t seed) {
  uint64_t s = seed;
  const double mmax = nb_nfw_m(x_max);
  for (int64_t i = 0; i < n; ++i) {
    const double target = vt_unif(&s) * mmax;
    double lo = 0, hi = x_max;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (nb_nfw_m(mid) < target) lo = mid; else hi = mid;
    }
    const double r = rs * 0.5 * (lo + hi);
    const double cz = 2.0 * vt_unif(&s) - 1.0, phi = 2.0 * NB_PI * vt_unif(&s), sz = sqrt(1.0 - cz * cz);
    const double p[3] = {centre[0] + r * sz * cos(phi), centre[1] + r * sz * sin(phi), centre[2] + r * cz};
    for (int j = 0; j < 3; ++j) xyz[3 * i + j] = (float)(box > 0 ? p[j] - box * floor(p[j] / box) : p[j]);
  }
}

#endif
