/* The halo catalogue (vic_halo_catalogue) on planted NFW halos of known
 * M_200 and R_200 in a uniform background of a periodic box: masses and
 * radii within 5 %, centres within 0.05 R_200 (one halo straddles the box
 * corner, so the minimum image is exercised); with velocities, the bulk
 * velocity and dispersion of the cold halos, and the energy cut removes
 * the hot background particles inside R_200 (direct pair sum on the small
 * halos, the spherical potential on the large one).  A uniform Poisson box,
 * periodic or open, and a nearly uniform perturbed lattice (initial
 * conditions) give no halo.  Friends-of-friends equals a brute-force
 * union-find over all pairs, and warns when k is too small for its links.
 *
 * Truth: a halo of N particles drawn to x_max = 2c scale radii has
 * N m(c) / m(2c) particles inside R_200 = c r_s on average; with a
 * background of mean density rho_bg and the box's mean density rho_mean,
 * M_200 = 200 rho_mean V_200 = N m(c)/m(2c) + rho_bg V_200 fixes V_200. */
#include "test_util.h"
#include "nbody_models.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

typedef struct {
  int64_t n;
  double c, centre[3], vbulk[3], sigma;
  double r200, m200; /* truth, filled in */
} planted;

static vic_peaks peaks_of(vic_ctx *c, const vic_data *x, float **rho, vic_knn *nn) {
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 32;
  o.method = VIC_METHOD_GRID;
  VT_OK(c, vic_knn_build(c, x, &o, nn));
  *rho = malloc((size_t)x->n * sizeof **rho);
  VT_OK(c, vic_density(c, x, nn, NULL, NULL, *rho, NULL, NULL));
  vic_peaks pk;
  VT_OK(c, vic_peaks_find(c, x, nn, *rho, NULL, &pk));
  return pk;
}

static double wrapped_distance(const double *a, const double *b, double box) {
  double s = 0;
  for (int j = 0; j < 3; ++j) {
    double t = a[j] - b[j];
    t -= box * nearbyint(t / box);
    s += t * t;
  }
  return sqrt(s);
}

static void test_planted(void) {
  const int small = vt_small();
  planted h[3] = {
    {small ? 12000 : 40000, 5.0, {0.3, 0.3, 0.3}, {100, -50, 20}, 0, 0, 0},
    {small ? 6000 : 15000, 8.0, {0.72, 0.35, 0.68}, {-30, 60, 0}, 0, 0, 0},
    {small ? 4000 : 8000, 4.0, {0.985, 0.99, 0.02}, {0, 0, -80}, 0, 0, 0}, /* across the corner */
  };
  const int64_t n_bg = small ? 60000 : 150000;
  const double box = 1.0;
  int64_t n = n_bg;
  for (int p = 0; p < 3; ++p) n += h[p].n;
  const double rho_mean = (double)n / (box * box * box), rho_bg = (double)n_bg / (box * box * box);
  float *xyz = malloc((size_t)n * 3 * sizeof *xyz), *vel = malloc((size_t)n * 3 * sizeof *vel);
  int *owner = malloc((size_t)n * sizeof *owner);
  uint64_t seed = 99;
  int64_t off = 0;
  for (int p = 0; p < 3; ++p) {
    const double inside = h[p].n * nb_nfw_m(h[p].c) / nb_nfw_m(2 * h[p].c);
    const double v200 = inside / (200 * rho_mean - rho_bg);
    h[p].r200 = cbrt(v200 / (4.0 / 3.0 * NB_PI));
    h[p].m200 = 200 * rho_mean * v200;
    /* cold: far below the escape speed sqrt(2 G M / R) with G = 1 */
    h[p].sigma = 0.1 * sqrt(h[p].m200 / h[p].r200);
    nb_nfw(xyz + 3 * off, h[p].n, h[p].r200 / h[p].c, 2 * h[p].c, h[p].centre, box, 7 + p);
    for (int64_t i = off; i < off + h[p].n; ++i) {
      owner[i] = p;
      for (int j = 0; j < 3; ++j) vel[3 * i + j] = (float)(h[p].vbulk[j] + h[p].sigma * vt_gauss(&seed));
    }
    off += h[p].n;
  }
  const double hot = 10 * sqrt(h[0].m200 / h[0].r200); /* unbound in every halo */
  for (int64_t i = off; i < n; ++i) {
    owner[i] = -1;
    for (int j = 0; j < 3; ++j) {
      xyz[3 * i + j] = (float)(box * vt_unif(&seed));
      vel[3 * i + j] = (float)(hot * vt_gauss(&seed));
    }
  }
  const double L[3] = {box, box, box};
  vic_data x = {xyz, n, 3, 0, VIC_L2, L};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *rho;
  vic_knn nn;
  vic_peaks pk = peaks_of(c, &x, &rho, &nn);

  vic_halo_options o;
  vic_halo_options_init(&o);
  vic_halos cat;
  VT_OK(c, vic_halo_catalogue(c, &x, &pk, NULL, vel, &o, &cat));
  printf("planted: %lld points, %lld peaks, %lld halos, mean density %.6g (truth %.6g)\n", (long long)n,
         (long long)pk.n_peaks, (long long)cat.n_halos, cat.mean_density, rho_mean);
  VT_CHECK(fabs(cat.mean_density / rho_mean - 1) < 1e-9, "mean density %g, expected %g", cat.mean_density, rho_mean);
  VT_CHECK(cat.n_halos == 3, "%lld halos, expected the 3 planted", (long long)cat.n_halos);
  for (int p = 0; p < 3; ++p) {
    int64_t best = -1;
    double bd = INFINITY;
    for (int64_t q = 0; q < cat.n_halos; ++q) {
      const double dd = wrapped_distance(cat.centre + 3 * q, h[p].centre, box);
      if (dd < bd) { bd = dd; best = q; }
    }
    VT_CHECK(best >= 0, "planted halo %d unmatched", p);
    if (best < 0) continue;
    const double dcom = wrapped_distance(cat.centre_of_mass + 3 * best, h[p].centre, box);
    printf("  halo %d: R_200 %.5f (truth %.5f, %+.2f%%), M_200 %.1f (truth %.1f, %+.2f%%), centre off %.4f R_200, "
           "centre of mass off %.4f R_200, members %lld, r_half %.4f, sigma %.2f (truth %.2f), bulk (%.1f %.1f %.1f)\n",
           p, cat.r_delta[best], h[p].r200, 100 * (cat.r_delta[best] / h[p].r200 - 1), cat.m_delta[best], h[p].m200,
           100 * (cat.m_delta[best] / h[p].m200 - 1), bd / h[p].r200, dcom / h[p].r200, (long long)cat.members[best],
           cat.r_half[best], cat.sigma_v[best], h[p].sigma, cat.bulk_velocity[3 * best], cat.bulk_velocity[3 * best + 1],
           cat.bulk_velocity[3 * best + 2]);
    VT_CHECK(fabs(cat.r_delta[best] / h[p].r200 - 1) < 0.05, "halo %d: R_200 %g vs %g", p, cat.r_delta[best],
             h[p].r200);
    VT_CHECK(fabs(cat.m_delta[best] / h[p].m200 - 1) < 0.05, "halo %d: M_200 %g vs %g", p, cat.m_delta[best],
             h[p].m200);
    VT_CHECK(bd < 0.05 * h[p].r200, "halo %d: centre %.4g R_200 away", p, bd / h[p].r200);
    VT_CHECK(dcom < 0.05 * h[p].r200, "halo %d: centre of mass %.4g R_200 away", p, dcom / h[p].r200);
    /* membership: inside R_Delta, unit masses, SO mass counts the same particles */
    VT_CHECK((double)cat.members[best] == cat.mass[best] && cat.mass[best] == cat.m_delta[best],
             "halo %d: members %lld, mass %g, M_200 %g", p, (long long)cat.members[best], cat.mass[best],
             cat.m_delta[best]);
    int64_t outside = 0, counted = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (cat.halo_id[i] != best) continue;
      ++counted;
      const double pt[3] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
      outside += wrapped_distance(pt, cat.centre + 3 * best, box) > cat.r_delta[best] * (1 + 1e-6);
    }
    VT_CHECK(outside == 0 && counted == cat.members[best], "halo %d: %lld members outside R_Delta, %lld labelled", p,
             (long long)outside, (long long)counted);
    /* NFW half-mass radius inside R_200: m(x) = m(c) / 2 */
    double lo = 0, hi = h[p].c;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (nb_nfw_m(mid) < 0.5 * nb_nfw_m(h[p].c)) lo = mid; else hi = mid;
    }
    const double rh = lo * h[p].r200 / h[p].c;
    VT_CHECK(fabs(cat.r_half[best] / rh - 1) < 0.1, "halo %d: r_half %g vs NFW %g", p, cat.r_half[best], rh);
    /* profile: log-density slope between 0.1 and 0.8 R_200 close to NFW's */
    if (cat.profile_bins > 0) {
      const double *pr = cat.profile_radius + best * cat.profile_bins, *pd = cat.profile_density + best * cat.profile_bins;
      int64_t total = 0;
      for (int b = 0; b < cat.profile_bins; ++b) total += cat.profile_count[best * cat.profile_bins + b];
      VT_CHECK(total > 0 && pr[0] > 0 && pr[cat.profile_bins - 1] < cat.r_delta[best], "halo %d: profile empty", p);
      const double rs = h[p].r200 / h[p].c;
      int worst = -1;
      double werr = 0;
      for (int b = 0; b < cat.profile_bins; ++b) {
        if (pr[b] < 0.1 * h[p].r200 || pr[b] > 0.8 * h[p].r200) continue;
        const double xx = pr[b] / rs;
        const double truth = h[p].n / (4 * NB_PI * rs * rs * rs * nb_nfw_m(2 * h[p].c)) / (xx * (1 + xx) * (1 + xx)) + rho_bg;
        const double err = fabs(pd[b] / truth - 1);
        if (err > werr) { werr = err; worst = b; }
      }
      printf("    profile: worst bin %d off NFW by %.1f%%\n", worst, 100 * werr);
      VT_CHECK(werr < 0.25, "halo %d: profile bin %d off NFW by %.0f%%", p, worst, 100 * werr);
    }
    VT_CHECK(fabs(cat.sigma_v[best] / h[p].sigma - 1) > 0.5, "halo %d: without the cut the hot background inflates sigma (%g vs %g)",
             p, cat.sigma_v[best], h[p].sigma);
  }
  vic_halos_free(&cat);

  /* The energy cut: the hot background inside R_200 goes, the cold halo stays. */
  o.unbind = 1;
  o.unbind_direct_max = small ? 3000 : 8000; /* the largest halo takes the spherical potential */
  VT_OK(c, vic_halo_catalogue(c, &x, &pk, NULL, vel, &o, &cat));
  VT_CHECK(cat.n_halos == 3, "with unbinding %lld halos", (long long)cat.n_halos);
  for (int64_t q = 0; q < cat.n_halos; ++q) {
    int p = -1;
    for (int t = 0; t < 3; ++t)
      if (wrapped_distance(cat.centre + 3 * q, h[t].centre, box) < 0.05 * h[t].r200) p = t;
    VT_CHECK(p >= 0, "halo %lld is none of the planted", (long long)q);
    if (p < 0) continue;
    int64_t bg = 0, mine = 0, kept_bg = 0, kept_mine = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double pt[3] = {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]};
      if (wrapped_distance(pt, cat.centre + 3 * q, box) > cat.r_delta[q]) continue;
      if (owner[i] < 0) { ++bg; kept_bg += cat.halo_id[i] == q; }
      if (owner[i] == p) { ++mine; kept_mine += cat.halo_id[i] == q; }
    }
    printf("  unbind halo %d: %lld unbound; background inside %lld (kept %lld), own inside %lld (kept %lld), "
           "sigma %.3f (truth %.3f), bulk (%.2f %.2f %.2f)\n",
           p, (long long)cat.unbound[q], (long long)bg, (long long)kept_bg, (long long)mine, (long long)kept_mine,
           cat.sigma_v[q], h[p].sigma, cat.bulk_velocity[3 * q], cat.bulk_velocity[3 * q + 1],
           cat.bulk_velocity[3 * q + 2]);
    VT_CHECK(kept_bg <= bg / 10, "halo %d keeps %lld of %lld hot background particles", p, (long long)kept_bg,
             (long long)bg);
    VT_CHECK(kept_mine >= mine * 99 / 100, "halo %d keeps only %lld of its %lld particles", p, (long long)kept_mine,
             (long long)mine);
    VT_CHECK(fabs(cat.sigma_v[q] / h[p].sigma - 1) < 0.05, "halo %d: sigma %g vs %g", p, cat.sigma_v[q], h[p].sigma);
    for (int j = 0; j < 3; ++j)
      VT_CHECK(fabs(cat.bulk_velocity[3 * q + j] - h[p].vbulk[j]) < 0.05 * h[p].sigma, "halo %d: bulk %d %g vs %g", p,
               j, cat.bulk_velocity[3 * q + j], h[p].vbulk[j]);
  }
  vic_halos_free(&cat);

  /* Delta times the critical density: the same halos with rho_crit = rho_mean / 0.3 at Delta 200 are smaller. */
  vic_halo_options_init(&o);
  o.reference = VIC_OVERDENSITY_CRITICAL;
  o.critical_density = rho_mean / 0.3;
  VT_OK(c, vic_halo_catalogue(c, &x, &pk, NULL, NULL, &o, &cat));
  VT_CHECK(cat.n_halos == 3 && fabs(cat.reference_density / (200 * rho_mean / 0.3) - 1) < 1e-12,
           "critical reference: %lld halos, reference %g", (long long)cat.n_halos, cat.reference_density);
  for (int64_t q = 0; q < cat.n_halos; ++q) VT_CHECK(isnan(cat.sigma_v[q]), "no velocities: sigma is NaN");
  vic_halos_free(&cat);

  /* Bad input loses nothing and says why. */
  vic_halo_options_init(&o);
  o.unbind = 1;
  VT_CHECK(vic_halo_catalogue(c, &x, &pk, NULL, NULL, &o, &cat) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "velocity"),
           "unbind without velocities: %s", vic_ctx_error(c));
  vic_halo_options_init(&o);
  o.reference = VIC_OVERDENSITY_CRITICAL;
  VT_CHECK(vic_halo_catalogue(c, &x, &pk, NULL, NULL, &o, &cat) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "critical"),
           "critical without rho_crit: %s", vic_ctx_error(c));
  vic_halo_options_init(&o);
  o.overdensity = -1;
  VT_CHECK(vic_halo_catalogue(c, &x, &pk, NULL, NULL, &o, &cat) == VIC_E_ARGUMENT, "negative Delta accepted");
  VT_CHECK(cat.n_halos == 0 && cat.halo_id == NULL, "a failed call leaves the output zeroed");
  /* the ABI: options no init call set are refused with the call to make,
   * and the catalogue says what its library knows */
  vic_halo_options_init(&o);
  o.struct_size = 0;
  VT_CHECK(vic_halo_catalogue(c, &x, &pk, NULL, NULL, &o, &cat) == VIC_E_ARGUMENT &&
               strstr(vic_ctx_error(c), "vic_halo_options_init"),
           "uninitialised options: %s", vic_ctx_error(c));
  VT_CHECK(sizeof cat == VIC_HALOS_BYTES && cat.struct_size > offsetof(vic_halos, report) &&
               cat.struct_size <= sizeof cat && cat.report.struct_size > offsetof(vic_report, warnings),
           "catalogue struct_size %zu, report.struct_size %zu", cat.struct_size, cat.report.struct_size);

  /* Friends-of-friends on the same box: the three largest groups are the halos. */
  int64_t *grp = malloc((size_t)n * sizeof *grp), ng = 0;
  double ell = 0;
  VT_OK(c, vic_fof(c, &x, &nn, 0.2, 20, grp, &ng, &ell));
  printf("fof b = 0.2: linking length %.5f, %lld groups of >= 20\n", ell, (long long)ng);
  VT_CHECK(fabs(ell - 0.2 * cbrt(1.0 / (double)n)) < 1e-12, "linking length %g", ell);
  VT_CHECK(ng >= 3, "fof found %lld groups", (long long)ng);
  for (int64_t g = 0; g < 3 && g < ng; ++g) {
    int64_t cnt[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n; ++i)
      if (grp[i] == g) cnt[owner[i] + 1]++;
    int64_t tot = cnt[0] + cnt[1] + cnt[2] + cnt[3], top = cnt[1] > cnt[2] ? (cnt[1] > cnt[3] ? 1 : 3) : (cnt[2] > cnt[3] ? 2 : 3);
    printf("  group %lld: %lld points, %lld of halo %lld\n", (long long)g, (long long)tot, (long long)cnt[top],
           (long long)(top - 1));
    VT_CHECK(cnt[top] >= tot * 9 / 10 && cnt[top] >= h[top - 1].n / 2, "group %lld is not one halo", (long long)g);
  }
  free(grp);
  vic_peaks_free(&pk);
  vic_knn_free(&nn);
  free(rho);
  free(xyz);
  free(vel);
  free(owner);
  vic_ctx_destroy(c);
}

static void test_uniform(int periodic) {
  const int64_t n = vt_small() ? 50000 : 200000;
  float *xyz = vt_uniform(n, 3, 1.f, periodic ? 123 : 321);
  const double L[3] = {1, 1, 1};
  vic_data x = {xyz, n, 3, 0, VIC_L2, periodic ? L : NULL};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *rho;
  vic_knn nn;
  vic_peaks pk = peaks_of(c, &x, &rho, &nn);
  vic_halos cat;
  VT_OK(c, vic_halo_catalogue(c, &x, &pk, NULL, NULL, NULL, &cat));
  int64_t labelled = 0;
  for (int64_t i = 0; i < n; ++i) labelled += cat.halo_id[i] >= 0;
  printf("uniform %s box, %lld points: %lld peaks, %lld halos\n", periodic ? "periodic" : "open", (long long)n,
         (long long)pk.n_peaks, (long long)cat.n_halos);
  VT_CHECK(cat.n_halos == 0 && labelled == 0, "%lld halos in a Poisson box", (long long)cat.n_halos);
  vic_halos_free(&cat);
  vic_peaks_free(&pk);
  vic_knn_free(&nn);
  free(rho);
  free(xyz);
  vic_ctx_destroy(c);
}

/* An initial-conditions box: a lattice displaced by 5 % of its spacing,
 * nearly uniform (the peak finder still names the densest point a peak):
 * no halo. */
static void test_lattice(void) {
  const int side = vt_small() ? 32 : 50;
  const int64_t n = (int64_t)side * side * side;
  float *xyz = malloc((size_t)n * 3 * sizeof *xyz);
  uint64_t seed = 3;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c[3] = {i % side, (i / side) % side, i / ((int64_t)side * side)};
    for (int j = 0; j < 3; ++j) {
      double v = (c[j] + 0.5 + 0.05 * (2 * vt_unif(&seed) - 1)) / side;
      xyz[3 * i + j] = (float)(v - floor(v));
    }
  }
  const double L[3] = {1, 1, 1};
  vic_data x = {xyz, n, 3, 0, VIC_L2, L};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *rho;
  vic_knn nn;
  vic_peaks pk = peaks_of(c, &x, &rho, &nn);
  vic_halos cat;
  VT_OK(c, vic_halo_catalogue(c, &x, &pk, NULL, NULL, NULL, &cat));
  printf("perturbed lattice, %lld points: %lld peaks, %lld halos\n", (long long)n, (long long)pk.n_peaks,
         (long long)cat.n_halos);
  VT_CHECK(cat.n_halos == 0, "%lld halos in a nearly uniform lattice", (long long)cat.n_halos);
  vic_halos_free(&cat);
  vic_peaks_free(&pk);
  vic_knn_free(&nn);
  free(rho);
  free(xyz);
  vic_ctx_destroy(c);
}

static int64_t root_of(int64_t *up, int64_t i) {
  while (up[i] != i) i = up[i] = up[up[i]];
  return i;
}

/* vic_fof against a union-find over every pair, with complete lists. */
static void test_fof_reference(void) {
  const int64_t n = 1500;
  float *xyz = vt_clusters(n, 3, 6, 5);
  vic_data x = {xyz, n, 3, 0, VIC_L2, NULL};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = (int32_t)(n - 1);
  vic_knn nn;
  VT_OK(c, vic_knn_build(c, &x, &o, &nn));
  int64_t *grp = malloc((size_t)n * sizeof *grp), *up = malloc((size_t)n * sizeof *up), ng = 0;
  double ell;
  VT_OK(c, vic_fof(c, &x, &nn, 0.3, 1, grp, &ng, &ell));
  for (int64_t i = 0; i < n; ++i) up[i] = i;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      double s = 0;
      for (int a = 0; a < 3; ++a) s += pow((double)xyz[3 * i + a] - xyz[3 * j + a], 2);
      if ((float)sqrt(s) <= ell) {
        int64_t a = root_of(up, i), b = root_of(up, j);
        if (a != b) up[a > b ? a : b] = a < b ? a : b;
      }
    }
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; j += 7) bad += (grp[i] == grp[j]) != (root_of(up, i) == root_of(up, j));
  printf("fof reference: %lld groups, %lld disagreeing pairs\n", (long long)ng, (long long)bad);
  VT_CHECK(bad == 0, "%lld pairs grouped differently from the all-pairs union-find", (long long)bad);
  for (int64_t i = 0; i < n; ++i) VT_CHECK(grp[i] >= 0 && grp[i] < ng, "min_members 1 numbers every point");
  /* too few neighbours for the linking length: a warning */
  vic_knn_free(&nn);
  o.k = 4;
  VT_OK(c, vic_knn_build(c, &x, &o, &nn));
  vt_warnings = 0;
  VT_OK(c, vic_fof(c, &x, &nn, 3.0, 1, grp, &ng, &ell));
  VT_CHECK(vt_warnings > 0 && strstr(vt_last_log, "raise k"), "no warning for short lists: %s", vt_last_log);
  VT_CHECK(vic_fof(c, &x, &nn, 0.0, 1, grp, &ng, &ell) == VIC_E_ARGUMENT, "b = 0 accepted");
  vic_knn_free(&nn);
  free(grp);
  free(up);
  free(xyz);
  vic_ctx_destroy(c);
}

int main(void) {
  test_planted();
  test_uniform(1);
  test_uniform(0);
  test_lattice();
  test_fof_reference();
  return vt_finish("test_halos");
}
