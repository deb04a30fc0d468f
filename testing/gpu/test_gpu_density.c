/* GPU densities equal the CPU's (issue 8): the kNN and SPH densities and
 * the smoothing length from the same kNN lists, on the GPU (backend cuda)
 * and on the CPU, agree to 1e-5 relative -- pynbody and Gadget
 * conventions, unit masses, total_mass and per-particle masses, on a
 * Plummer sphere, a uniform set, a periodic box, 2-d and 6-d data.  The
 * fused call vic_knn_density (grid lists kept on the device) gives the
 * CPU's lists and densities; duplicates are refused as on the CPU.
 * Skips (exit 77) where no CUDA device is usable. */
#include "test_util.h"
#include "nbody_models.h"

#include <math.h>
#include <string.h>

#define REL 1e-5

/* Largest relative difference of a and b (n floats); where the reference
 * is 0 the absolute difference counts. */
static double max_rel(const float *got, const float *ref, int64_t n, int64_t *where) {
  double worst = 0;
  *where = -1;
  for (int64_t i = 0; i < n; ++i) {
    double r = fabs((double)ref[i]), e = fabs((double)got[i] - (double)ref[i]);
    double rel = r > 0 ? e / r : e;
    if (!(rel <= worst)) { worst = rel; *where = i; } /* NaN counts as worst */
    if (isnan(rel)) return INFINITY;
  }
  return worst;
}

static void compare(const char *what, const char *field, const float *got, const float *ref, int64_t n) {
  int64_t at = -1;
  double e = max_rel(got, ref, n, &at);
  VT_CHECK(e <= REL, "%s: %s differs from the CPU by %.3g relative at point %lld (gpu %.9g, cpu %.9g)", what, field, e,
           (long long)at, at >= 0 ? got[at] : 0.0, at >= 0 ? ref[at] : 0.0);
  printf("  %-44s %-9s max rel diff %.3g\n", what, field, e);
}

static float *random_masses(int64_t n, uint64_t seed) {
  float *m = malloc((size_t)n * sizeof *m);
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) m[i] = (float)(0.5 + vt_unif(&s)); /* 0.5 .. 1.5 */
  return m;
}

/* Densities of x from lists nn on both backends, every option variant. */
static void check_lists(const char *name, const vic_data *x, const vic_knn *nn, const float *mass) {
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 3), *gpu = vt_ctx(VIC_BACKEND_CUDA, 3);
  const int64_t n = x->n;
  float *a[3], *b[3];
  for (int j = 0; j < 3; ++j) { a[j] = malloc((size_t)n * sizeof(float)); b[j] = malloc((size_t)n * sizeof(float)); }
  static const char *fields[3] = {"kNN", "SPH", "h"};
  for (int conv = 0; conv < 2; ++conv)
    for (int mm = 0; mm < 3; ++mm) { /* unit masses, total_mass, per-particle masses */
      if (mm == 2 && !mass) continue;
      vic_density_options o;
      vic_density_options_init(&o);
      o.sph = conv ? VIC_SPH_GADGET : VIC_SPH_PYNBODY;
      o.total_mass = mm == 1 ? 3.5 : 0;
      const float *m = mm == 2 ? mass : NULL;
      char what[160];
      snprintf(what, sizeof what, "%s %s %s", name, conv ? "gadget" : "pynbody",
               mm == 0 ? "unit" : mm == 1 ? "total_mass" : "masses");
      VT_OK(cpu, vic_density(cpu, x, nn, m, &o, a[0], a[1], a[2]));
      vt_last_log[0] = '\0';
      VT_OK(gpu, vic_density(gpu, x, nn, m, &o, b[0], b[1], b[2]));
      VT_CHECK(strstr(vt_last_log, "GPU density") != NULL, "%s: the GPU did not run (last log: %s)", what, vt_last_log);
      for (int j = 0; j < 3; ++j) compare(what, fields[j], b[j], a[j], n);
      /* a single output alone takes another copy path (the k-th column only) */
      if (conv == 0 && mm == 0) {
        memset(b[0], 0, (size_t)n * sizeof(float));
        VT_OK(gpu, vic_density(gpu, x, nn, NULL, &o, b[0], NULL, NULL));
        compare(what, "kNN only", b[0], a[0], n);
      }
    }
  for (int j = 0; j < 3; ++j) { free(a[j]); free(b[j]); }
  vic_ctx_destroy(cpu);
  vic_ctx_destroy(gpu);
}

static void check_set(const char *name, const vic_data *x, int32_t k, const float *mass) {
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 3);
  vic_build_options bo;
  vic_build_options_init(&bo);
  bo.k = k;
  bo.method = x->d <= 3 ? VIC_METHOD_GRID : VIC_METHOD_BRUTE;
  vic_knn nn;
  VT_OK(cpu, vic_knn_build(cpu, x, &bo, &nn));
  printf("%s: n = %lld, d = %d, k = %d%s\n", name, (long long)x->n, x->d, k, x->box ? ", periodic" : "");
  check_lists(name, x, &nn, mass);

  if (x->d <= 3) {
    /* the fused call: grid lists and densities in one device call */
    vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 3);
    const int64_t n = x->n;
    float *ref = malloc((size_t)n * sizeof(float) * 3), *got = malloc((size_t)n * sizeof(float) * 3);
    vic_density_options o;
    vic_density_options_init(&o);
    vic_knn fused;
    VT_OK(gpu, vic_knn_density(gpu, x, k, mass, &o, &fused, got, got + n, got + 2 * n));
    /* The GPU grid computes every distance as the CPU grid does (periodic
     * coordinates wrapped, the period taken off one coordinate before the
     * difference) and orders lists by (distance, id), so its lists equal
     * the CPU grid's exactly: no tolerance, no tie rule.  (The GPU grid
     * used to take the minimum image as |a - b| mod L, the brute force's
     * form, which rounds to an ulp of L: 16 of 9.6M entries of the
     * periodic set were off by more than 1e-5 relative, all close pairs
     * across the boundary.)  The density kernel itself is checked on the
     * lists the GPU produced. */
    VT_OK(cpu, vic_density(cpu, x, &fused, mass, &o, ref, ref + n, ref + 2 * n));
    VT_CHECK(fused.report.backend == VIC_BACKEND_CUDA && fused.report.method == VIC_METHOD_GRID,
             "%s: fused call ran %s on %s", name, vic_method_name(fused.report.method),
             vic_backend_name(fused.report.backend));
    VT_CHECK(fused.report.seconds_kernel > 0, "%s: fused call reports no kernel time", name);
    int64_t diff = 0, first = -1;
    for (int64_t i = 0; i < n * k; ++i) {
      int same = fused.ids[i] == nn.ids[i] && memcmp(&fused.dist[i], &nn.dist[i], sizeof(float)) == 0;
      if (!same && first < 0) first = i;
      diff += !same;
    }
    VT_CHECK(diff == 0, "%s: fused lists differ from the CPU grid's in %lld entries (first: point %lld, gpu %lld at %.9g, "
             "cpu %lld at %.9g)", name, (long long)diff, first >= 0 ? (long long)(first / k) : -1LL,
             first >= 0 ? (long long)fused.ids[first] : -1LL, first >= 0 ? fused.dist[first] : 0.0,
             first >= 0 ? (long long)nn.ids[first] : -1LL, first >= 0 ? nn.dist[first] : 0.0);
    char what[160];
    snprintf(what, sizeof what, "%s fused%s", name, mass ? " masses" : "");
    compare(what, "kNN", got, ref, n);
    compare(what, "SPH", got + n, ref + n, n);
    compare(what, "h", got + 2 * n, ref + 2 * n, n);
    /* without the lists back */
    memset(got, 0, (size_t)n * sizeof(float));
    VT_OK(gpu, vic_knn_density(gpu, x, k, mass, &o, NULL, got, NULL, NULL));
    compare(what, "kNN, no lists", got, ref, n);
    vic_knn_free(&fused);
    free(ref);
    free(got);
    vic_ctx_destroy(gpu);
  }
  vic_knn_free(&nn);
  vic_ctx_destroy(cpu);
}

static void test_duplicates(void) {
  /* k+1 copies of one point: rk = 0, refused on the GPU as on the CPU */
  int64_t n = 2000;
  float *u = vt_uniform(n, 3, 1.f, 5);
  for (int i = 1; i < 12; ++i) memcpy(u + 3 * i, u, 3 * sizeof(float));
  vic_data x = {u, n, 3, 0, VIC_L2, NULL};
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 1);
  float *rho = malloc((size_t)n * sizeof(float));
  vic_status s = vic_knn_density(gpu, &x, 8, NULL, NULL, NULL, rho, NULL, NULL);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(vic_ctx_error(gpu), "duplicate"), "duplicates: %s: %s", vic_status_name(s),
           vic_ctx_error(gpu));
  free(rho);
  free(u);
  vic_ctx_destroy(gpu);
}

int main(int argc, char **argv) {
  const int s = vt_gpu_start(argc, argv);
  const int64_t n = s ? 20000 : 300000;

  /* Plummer sphere with per-particle masses */
  float *pl = malloc((size_t)n * 3 * sizeof(float));
  const double centre[3] = {0, 0, 0};
  nb_plummer(pl, n, 1.0, centre, 0.999, 42);
  float *mass = random_masses(n, 7);
  vic_data xp = {pl, n, 3, 0, VIC_L2, NULL};
  check_set("plummer", &xp, 32, mass);

  /* uniform cube, Gadget-like k = 63 */
  float *u = vt_uniform(n, 3, 10.f, 9);
  vic_data xu = {u, n, 3, 0, VIC_L2, NULL};
  check_set("uniform", &xu, 63, mass);

  /* periodic box: minimum-image distances in the lists */
  double box[3] = {10, 10, 10};
  vic_data xb = {u, n, 3, 0, VIC_L2, box};
  check_set("uniform periodic", &xb, 32, mass);

  /* 2-d map and 6-d phase space (host lists from the CPU) */
  float *u2 = vt_uniform(n / 4, 2, 1.f, 13);
  vic_data x2 = {u2, n / 4, 2, 0, VIC_L2, NULL};
  check_set("uniform 2-d", &x2, 16, mass);
  int64_t n6 = s ? 5000 : 30000;
  float *u6 = vt_uniform(n6, 6, 1.f, 17);
  vic_data x6 = {u6, n6, 6, 0, VIC_L2, NULL};
  check_set("uniform 6-d", &x6, 20, mass);

  test_duplicates();
  free(pl);
  free(mass);
  free(u);
  free(u2);
  free(u6);
  return vt_finish("test_gpu_density");
}
