/* Density and d_nn1 statistics: bad input gets a clear status, the
 * kernel and the estimators match hand computations, the conventions and
 * mass options agree with each other, and the global density of a
 * uniform Poisson set comes back within 2% in 2-d, 3-d and 6-d. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846

static vic_knn lists(vic_ctx *c, const vic_data *x, int32_t k, vic_method m) {
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = k;
  o.method = m;
  vic_knn nn;
  VT_OK(c, vic_knn_build(c, x, &o, &nn));
  return nn;
}

static void test_bad_input(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *pts = vt_uniform(50, 3, 1.f, 3);
  vic_data x = {pts, 50, 3, 0, VIC_L2, NULL};
  vic_knn nn = lists(c, &x, 8, VIC_METHOD_BRUTE);
  float rho[50], mass[50];
  vic_dnn1_stats st;

  VT_CHECK(vic_dnn1_stats_compute(c, NULL, 3, &st) == VIC_E_ARGUMENT, "no lists");
  VT_CHECK(strstr(vic_ctx_error(c), "kNN lists") != NULL, "message: %s", vic_ctx_error(c));
  VT_CHECK(vic_dnn1_stats_compute(c, &nn, 0, &st) == VIC_E_ARGUMENT, "d = 0");
  VT_CHECK(vic_density(c, &x, NULL, NULL, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "no lists");

  vic_data fewer = x; fewer.n = 40;
  VT_CHECK(vic_density(c, &fewer, &nn, NULL, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "lists of other data");
  VT_CHECK(strstr(vic_ctx_error(c), "50 rows") != NULL, "message: %s", vic_ctx_error(c));

  vic_data cos = x; cos.metric = VIC_COSINE;
  VT_CHECK(vic_density(c, &cos, &nn, NULL, NULL, rho, NULL, NULL) == VIC_E_UNSUPPORTED, "cosine");

  for (int i = 0; i < 50; ++i) mass[i] = 1.f;
  mass[7] = NAN;
  VT_CHECK(vic_density(c, &x, &nn, mass, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "NaN mass");
  VT_CHECK(strstr(vic_ctx_error(c), "particle 7") != NULL, "message: %s", vic_ctx_error(c));
  mass[7] = -1.f;
  VT_CHECK(vic_density(c, &x, &nn, mass, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "negative mass");

  vic_density_options dop;
  vic_density_options_init(&dop);
  dop.total_mass = -2;
  VT_CHECK(vic_density(c, &x, &nn, NULL, &dop, rho, NULL, NULL) == VIC_E_ARGUMENT, "negative total mass");
  dop.total_mass = 0;
  dop.sph = (vic_sph_convention)7;
  VT_CHECK(vic_density(c, &x, &nn, NULL, &dop, rho, NULL, NULL) == VIC_E_ARGUMENT, "unknown convention");

  /* a hole in a list (fewer than k neighbours) and a list of one neighbour */
  int64_t keep = nn.ids[5 * 8 + 7];
  nn.ids[5 * 8 + 7] = -1;
  VT_CHECK(vic_density(c, &x, &nn, NULL, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "short list");
  VT_CHECK(strstr(vic_ctx_error(c), "point 5") != NULL, "message: %s", vic_ctx_error(c));
  nn.ids[5 * 8 + 7] = keep;
  vic_knn one = lists(c, &x, 1, VIC_METHOD_BRUTE);
  VT_CHECK(vic_density(c, &x, &one, NULL, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "k = 1");
  VT_CHECK(strstr(vic_ctx_error(c), "k >= 2") != NULL, "message: %s", vic_ctx_error(c));
  vic_knn_free(&one);

  /* duplicates: 4 copies of one point make r_k = 0 for k = 3 */
  float dup[15] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
  vic_data xd = {dup, 5, 3, 0, VIC_L2, NULL};
  vic_knn nd = lists(c, &xd, 3, VIC_METHOD_BRUTE);
  VT_CHECK(vic_density(c, &xd, &nd, NULL, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT, "duplicates");
  VT_CHECK(strstr(vic_ctx_error(c), "duplicate") != NULL, "message: %s", vic_ctx_error(c));
  vic_knn_free(&nd);

  /* peaks: no density, bad density, bad options */
  vic_peaks pk;
  VT_CHECK(vic_peaks_find(c, &x, &nn, NULL, NULL, &pk) == VIC_E_ARGUMENT, "no density");
  VT_OK(c, vic_density(c, &x, &nn, NULL, NULL, rho, NULL, NULL));
  rho[3] = INFINITY;
  VT_CHECK(vic_peaks_find(c, &x, &nn, rho, NULL, &pk) == VIC_E_ARGUMENT, "infinite density");
  VT_CHECK(strstr(vic_ctx_error(c), "point 3") != NULL, "message: %s", vic_ctx_error(c));
  VT_CHECK(pk.parent == NULL && pk.n_peaks == 0, "output zeroed on failure");
  VT_OK(c, vic_density(c, &x, &nn, NULL, NULL, rho, NULL, NULL));
  vic_peak_options po;
  vic_peak_options_init(&po);
  po.min_delta = -1;
  VT_CHECK(vic_peaks_find(c, &x, &nn, rho, &po, &pk) == VIC_E_ARGUMENT, "negative min_delta");

  vic_knn_free(&nn);
  free(pts);
  vic_ctx_destroy(c);
}

/* Three points on a line, k = 2: every number by hand. */
static void test_hand_computed(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float pts[9] = {0, 0, 0, 1, 0, 0, 3, 0, 0};
  vic_data x = {pts, 3, 3, 0, VIC_L2, NULL};
  vic_knn nn = lists(c, &x, 2, VIC_METHOD_BRUTE);
  float knn[3], sph[3], h[3], mass[3] = {1, 2, 4};
  VT_OK(c, vic_density(c, &x, &nn, NULL, NULL, knn, sph, h));
  /* point 0: neighbours 1 (r = 1) and 2 (r = 3 = r_k); kNN (k-1)/(4/3 pi 27) */
  double v3 = 4.0 / 3.0 * PI;
  VT_CHECK(fabs(knn[0] - 1.0 / (v3 * 27)) < 1e-6 * knn[0], "kNN density %g", knn[0]);
  /* SPH: 8/pi/27 * (w(0) + w(1/3)) with w(q) = 1 - 6q^2 + 6q^3 below q = 1/2 */
  double w13 = 1 - 6.0 / 9 + 6.0 / 27;
  double want = 8 / PI / 27 * (1 + w13);
  VT_CHECK(fabs(sph[0] - want) < 1e-6 * want, "SPH density %g want %g", sph[0], want);
  VT_CHECK(fabs(h[0] - 1.5f) < 1e-6f, "pynbody h = r_k / 2 = 1.5, got %g", h[0]);
  /* point 1: neighbours 0 (r = 1), 2 (r = 2 = r_k); w(1/2) = 1 - 6/4 + 6/8 = 0.25 */
  want = 8 / PI / 8 * (1 + 0.25);
  VT_CHECK(fabs(sph[1] - want) < 1e-6 * want, "SPH density %g want %g", sph[1], want);

  /* masses: kNN sums the k-1 nearest neighbours' masses (not self, not the k-th) */
  VT_OK(c, vic_density(c, &x, &nn, mass, NULL, knn, sph, NULL));
  VT_CHECK(fabs(knn[0] - 2.0 / (v3 * 27)) < 1e-6 * knn[0], "kNN with masses %g", knn[0]);
  want = 8 / PI / 27 * (1 * 1 + 2 * w13);
  VT_CHECK(fabs(sph[0] - want) < 1e-6 * want, "SPH with masses %g want %g", sph[0], want);

  /* Gadget: the same density, h = r_k */
  vic_density_options o;
  vic_density_options_init(&o);
  o.sph = VIC_SPH_GADGET;
  float sph_g[3];
  VT_OK(c, vic_density(c, &x, &nn, mass, &o, NULL, sph_g, h));
  VT_CHECK(sph_g[0] == sph[0] && fabs(h[0] - 3.f) < 1e-6f, "Gadget: same density, h = r_k = 3 (got %g)", h[0]);

  /* total_mass: each of the 3 particles weighs 6/3 = 2 */
  o.total_mass = 6;
  VT_OK(c, vic_density(c, &x, &nn, NULL, &o, knn, NULL, NULL));
  VT_CHECK(fabs(knn[0] - 2.0 / (v3 * 27)) < 1e-6 * knn[0], "kNN with total mass %g", knn[0]);
  vic_knn_free(&nn);
  vic_ctx_destroy(c);
}

/* Uniform Poisson points in a periodic unit box (no edges): the global
 * density from mean d_nn1 within 2% of n, and the median kNN density
 * mean kNN density as well (the k - 1 makes the estimator unbiased). */
static void check_poisson(int32_t d, int64_t n, vic_method m) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 5);
  float *pts = vt_uniform(n, d, 1.f, 100 + (uint64_t)d);
  double box[6] = {1, 1, 1, 1, 1, 1};
  vic_data x = {pts, n, d, 0, VIC_L2, box};
  vic_knn nn = lists(c, &x, 16, m);
  vic_dnn1_stats st;
  VT_OK(c, vic_dnn1_stats_compute(c, &nn, d, &st));
  double err = st.global_density / (double)n - 1;
  printf("d = %d, n = %lld: mean d_nn1 %.5g, max %.5g, global density %.6g (rel err %+.4f)\n", (int)d, (long long)n,
         st.mean, st.max, st.global_density, err);
  VT_CHECK(fabs(err) < 0.02, "d = %d: global density %g vs %lld", (int)d, st.global_density, (long long)n);
  VT_CHECK(fabs(st.mean - nn.report.dnn1_mean) < 1e-9 * st.mean, "agrees with the build report");

  float *rho = malloc((size_t)n * sizeof *rho), *sph = malloc((size_t)n * sizeof *sph);
  VT_OK(c, vic_density(c, &x, &nn, NULL, NULL, rho, sph, NULL));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += rho[i];
  /* the (k-1) estimator is unbiased for a Poisson process: E[(k-1)/Gamma(k,1)] = 1 */
  double mean = sum / (double)n / (double)n;
  printf("  mean of rho_kNN / n %.4f\n", mean);
  VT_CHECK(fabs(mean - 1) < 0.02, "d = %d: mean rho / n %g", (int)d, mean);
  free(rho);
  free(sph);
  vic_knn_free(&nn);
  free(pts);
  vic_ctx_destroy(c);
}

static int stop_now(void *user, const char *stage, double f) { (void)user; (void)f; return strcmp(stage, "density") == 0; }

static void test_cancel(void) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CPU;
  o.progress = stop_now;
  vic_ctx *c;
  VT_OK(NULL, vic_ctx_create(&o, &c));
  float *pts = vt_uniform(100, 3, 1.f, 9);
  vic_data x = {pts, 100, 3, 0, VIC_L2, NULL};
  vic_knn nn = lists(c, &x, 4, VIC_METHOD_BRUTE);
  float rho[100];
  VT_CHECK(vic_density(c, &x, &nn, NULL, NULL, rho, NULL, NULL) == VIC_E_CANCELLED, "cancelled");
  vic_knn_free(&nn);
  free(pts);
  vic_ctx_destroy(c);
}

int main(void) {
  test_bad_input();
  test_hand_computed();
  test_cancel();
  int64_t s = vt_small() ? 10 : 1;
  check_poisson(3, 200000 / s, VIC_METHOD_GRID);
  check_poisson(2, 100000 / s, VIC_METHOD_GRID);
  check_poisson(6, 20000 / s, VIC_METHOD_BRUTE);
  return vt_finish("test_density_api");
}
