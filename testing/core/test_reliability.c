/* The hostile-input audit of issue 22, one check per case: numbers at the
 * edge of float's range (a coordinate-scale sweep over brute force, the
 * grid and NN-Descent; densities in 256 and 512 dimensions; tiny 3-d
 * coordinates), the recall estimate on overflowed distances, bounded
 * parameters (entry points, NN-Descent's k_build, TSDG's alpha and
 * lambda0), the context's thread count in every parallel region, a cancel
 * that applies to one call, and the message for a directory given as an
 * index file.  Each case either gives the right answer or an error that
 * names the cause; never VIC_OK with wrong numbers. */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Threads of this process now (Linux), or -1 where /proc is absent. */
static int process_threads(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int t = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &t) == 1) break;
  fclose(f);
  return t;
}

static float *scaled(const float *p, int64_t count, double s) {
  float *q = malloc((size_t)count * sizeof *q);
  for (int64_t i = 0; i < count; ++i) q[i] = (float)(p[i] * s);
  return q;
}

/* A refusal must name the cause: the range and what to do about it. */
static int names_range(const char *msg) {
  return strstr(msg, "too large") || strstr(msg, "too small") || strstr(msg, "float");
}

/* ------------------------------------------------ threads (run first) */
/* With threads = 1 no call may start a second thread: libgomp starts its
 * pool at the first region that asks for more than one, so the process's
 * thread count shows a region that ignored the context. */
static void test_threads_honoured(void) {
#ifdef _OPENMP
  omp_set_num_threads(4); /* the default a region without num_threads would take */
#endif
  const int before = process_threads();
  if (before < 0) {
    printf("note: no /proc/self/status, thread count not checked\n");
    return;
  }
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.threads = 1;
  vic_ctx *c = NULL;
  VT_OK(c, vic_ctx_create(&co, &c));
  const int64_t n = 1500;
  float *pts = vt_uniform(n, 3, 1.f, 3);
  vic_data x = {pts, n, 3, 0, VIC_L2, NULL};
  float *rho = malloc((size_t)n * sizeof *rho), *mass = malloc((size_t)n * sizeof *mass);
  for (int64_t i = 0; i < n; ++i) mass[i] = 1.f;
  vic_knn nn;
  VT_OK(c, vic_knn_density(c, &x, 8, mass, NULL, &nn, rho, NULL, NULL)); /* density.c's checks */
  vic_knn_free(&nn);
  /* TSDG on the CPU: diversification and best-first search (grnnd_tsdg_index.c) */
  float *feat = vt_clusters(n, 16, 5, 4);
  vic_data xf = {feat, n, 16, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_TSDG;
  o.k = 10;
  vic_index *ix = NULL;
  VT_OK(c, vic_index_build(c, &xf, &o, &ix));
  vic_search_options so;
  vic_search_options_init(&so);
  vic_knn r;
  VT_OK(c, vic_index_search(c, ix, &xf, &so, &r));
  vic_knn_free(&r);
  vic_index_free(ix);
  const int after = process_threads();
  VT_CHECK(after == before, "threads = 1 but the process went from %d to %d threads", before, after);
  free(pts); free(rho); free(mass); free(feat);
  vic_ctx_destroy(c);
}

/* ------------------------------------------------- scale sweep */
static const double SCALES[] = {1e-20, 1e-15, 1e-10, 1e-5, 1, 1e5, 1e10, 1e15, 1e18, 1e19, 1e20, 1e25};
enum { N_SCALES = sizeof SCALES / sizeof *SCALES };

/* Every scale either answers the unit-scale lists (ids; distances times
 * the scale) or refuses with a message naming the range; the moderate
 * scales must answer, the extreme ones (whose squared distances pass
 * float's range) must refuse. */
static void sweep(const char *label, vic_method method, int64_t n, int32_t d, int32_t k, int approximate) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  float *unit = approximate ? vt_clusters(n, d, 6, 11) : vt_uniform(n, d, 1.f, 11);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = method;
  o.k = k;
  o.recall_sample = approximate ? 300 : 0;
  vic_data x1 = {unit, n, d, 0, VIC_L2, NULL};
  vic_knn ref;
  VT_OK(c, vic_knn_build(c, &x1, &o, &ref));
  for (int si = 0; si < N_SCALES; ++si) {
    const double s = SCALES[si];
    float *p = scaled(unit, n * d, s);
    vic_data x = {p, n, d, 0, VIC_L2, NULL};
    vic_knn r;
    vic_status st = vic_knn_build(c, &x, &o, &r);
    const int moderate = s >= 1e-10 && s <= 1e10, extreme = s >= 1e20 || s <= 1e-20;
    if (st != VIC_OK) {
      VT_CHECK(!moderate, "%s, scale %g: refused a moderate scale: %s", label, s, vic_ctx_error(c));
      VT_CHECK(st == VIC_E_NONFINITE || st == VIC_E_ARGUMENT, "%s, scale %g: status %s", label, s, vic_status_name(st));
      VT_CHECK(names_range(vic_ctx_error(c)), "%s, scale %g: message does not name the range: %s", label, s,
               vic_ctx_error(c));
      free(p);
      continue;
    }
    VT_CHECK(!extreme, "%s, scale %g: VIC_OK where float distances cannot hold the data", label, s);
    int64_t nonfinite = 0, wrong = 0, far = 0;
    for (int64_t e = 0; e < n * k; ++e) {
      if (!isfinite(r.dist[e])) nonfinite++;
      else if (r.ids[e] != ref.ids[e] && !approximate) wrong++;
      if (isfinite(r.dist[e]) && fabs(r.dist[e] / s - ref.dist[e]) > 1e-3 * (ref.dist[e] + 1e-6) && !approximate) far++;
    }
    VT_CHECK(nonfinite == 0, "%s, scale %g: %lld non-finite distances with VIC_OK", label, s, (long long)nonfinite);
    /* ties may reorder under rounding; a few per mille at most */
    VT_CHECK(wrong <= n * k / 200, "%s, scale %g: %lld of %lld ids differ from scale 1", label, s, (long long)wrong,
             (long long)(n * k));
    VT_CHECK(far <= n * k / 200, "%s, scale %g: %lld distances are not scale x the unit ones", label, s, (long long)far);
    if (approximate)
      VT_CHECK(r.report.recall_estimate > 0.9 && fabs(r.report.recall_estimate - ref.report.recall_estimate) < 0.05,
               "%s, scale %g: recall estimate %.3f (scale 1: %.3f)", label, s, r.report.recall_estimate,
               ref.report.recall_estimate);
    else
      VT_CHECK(r.report.recall_estimate == 1.0, "%s, scale %g: exact lists report recall %.3f", label, s,
               r.report.recall_estimate);
    vic_knn_free(&r);
    free(p);
  }
  vic_knn_free(&ref);
  free(unit);
  vic_ctx_destroy(c);
}

static void test_scale_sweep(void) {
  sweep("brute d = 64", VIC_METHOD_BRUTE, vt_small() ? 300 : 800, 64, 8, 0);
  sweep("grid d = 3", VIC_METHOD_GRID, vt_small() ? 1000 : 4000, 3, 8, 0);
  sweep("nndescent d = 8", VIC_METHOD_NNDESCENT, vt_small() ? 1500 : 3000, 8, 10, 1);
}

/* cosine: rows of magnitude 1e25 normalised without overflow */
static void test_cosine_large(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 400;
  const int32_t d = 16, k = 6;
  float *unit = vt_clusters(n, d, 4, 5);
  float *big = scaled(unit, n * d, 1e25), *tiny = scaled(unit, n * d, 1e-30);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = k;
  vic_knn r1, rb, rt;
  vic_data x1 = {unit, n, d, 0, VIC_COSINE, NULL}, xb = {big, n, d, 0, VIC_COSINE, NULL}, xt = {tiny, n, d, 0, VIC_COSINE, NULL};
  VT_OK(c, vic_knn_build(c, &x1, &o, &r1));
  VT_OK(c, vic_knn_build(c, &xb, &o, &rb));
  VT_OK(c, vic_knn_build(c, &xt, &o, &rt));
  int64_t wrong = 0;
  for (int64_t e = 0; e < n * k; ++e)
    wrong += fabsf(rb.dist[e] - r1.dist[e]) > 1e-5f || fabsf(rt.dist[e] - r1.dist[e]) > 1e-5f;
  VT_CHECK(wrong == 0, "cosine at 1e25 and 1e-30: %lld distances differ from scale 1", (long long)wrong);
  vic_knn_free(&r1); vic_knn_free(&rb); vic_knn_free(&rt);
  free(unit); free(big); free(tiny);
  vic_ctx_destroy(c);
}

/* ------------------------------------------------ densities */
/* log of the kNN density of point i from its lists, in double */
static double ref_log_density(int32_t d, int32_t k, double rk) {
  const double log_vd = 0.5 * d * log(3.14159265358979323846) - lgamma(0.5 * d + 1.0);
  return log((double)(k - 1)) - log_vd - d * log(rk);
}

static void high_d_density(int32_t d) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = vt_small() ? 300 : 600;
  const int32_t k = 8;
  float *p = vt_uniform(n, d, 1.f, 21);
  vic_data x = {p, n, d, 0, VIC_L2, NULL};
  float *rho = malloc((size_t)n * sizeof *rho), *sph = malloc((size_t)n * sizeof *sph);
  vic_knn nn;
  vic_status st = vic_knn_density(c, &x, k, NULL, NULL, &nn, rho, sph, NULL);
  /* unit-cube points in 256 or 512 dimensions have densities near 1e-57
   * and 1e-114: a float holds neither, so the call must refuse */
  VT_CHECK(st == VIC_E_NONFINITE, "d = %d: status %s (%s); densities of unit-cube data are below float's range", (int)d,
           vic_status_name(st), vic_ctx_error(c));
  const char *m = strstr(vic_ctx_error(c), "multiplying the coordinates by ");
  VT_CHECK(m != NULL, "d = %d: the message gives no rescaling: %s", (int)d, vic_ctx_error(c));
  if (m) {
    /* the advice works: rescaled, the densities fit and are right */
    double f = atof(m + strlen("multiplying the coordinates by "));
    float *q = scaled(p, n * d, f);
    vic_data xq = {q, n, d, 0, VIC_L2, NULL};
    vic_status s2 = vic_knn_density(c, &xq, k, NULL, NULL, &nn, rho, sph, NULL);
    VT_CHECK(s2 == VIC_OK, "d = %d rescaled by %g: %s", (int)d, f, vic_ctx_error(c));
    if (s2 == VIC_OK) {
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double want = ref_log_density(d, k, nn.dist[i * k + k - 1]);
        bad += !(rho[i] > 0) || !isfinite(rho[i]) || fabs(log(rho[i]) - want) > 1e-3 * fabs(want) + 1e-4;
        bad += !(sph[i] > 0) || !isfinite(sph[i]);
      }
      VT_CHECK(bad == 0, "d = %d rescaled: %lld densities zero, non-finite or off the log-space reference", (int)d,
               (long long)bad);
      vic_knn_free(&nn);
    }
    free(q);
  }
  free(p); free(rho); free(sph);
  vic_ctx_destroy(c);
}

static void test_density_range(void) {
  high_d_density(256);
  high_d_density(512);
  /* 3-d points spread over 1e-15: lists fine, densities near 1e45 are not
   * floats; over 1e-20 the squared distances themselves are subnormal */
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 2000;
  float *unit = vt_uniform(n, 3, 1.f, 9);
  float *rho = malloc((size_t)n * sizeof *rho);
  const double scales[2] = {1e-15, 1e-20};
  for (int si = 0; si < 2; ++si) {
    float *p = scaled(unit, n * 3, scales[si]);
    vic_data x = {p, n, 3, 0, VIC_L2, NULL};
    vic_status st = vic_knn_density(c, &x, 16, NULL, NULL, NULL, rho, NULL, NULL);
    VT_CHECK(st != VIC_OK && names_range(vic_ctx_error(c)), "3-d x %g: densities %s (%s)", scales[si],
             vic_status_name(st), vic_ctx_error(c));
    /* and Salient Points' call finds no peak in them */
    vic_peaks pk;
    st = vic_knn_density_peaks(c, &x, 16, NULL, NULL, NULL, NULL, rho, NULL, NULL, &pk);
    VT_CHECK(st != VIC_OK && pk.n_peaks == 0, "3-d x %g: peaks %s with %lld peaks (%s)", scales[si],
             vic_status_name(st), (long long)pk.n_peaks, vic_ctx_error(c));
    if (st == VIC_OK) vic_peaks_free(&pk);
    free(p);
  }
  /* a density array with an infinity gives no peak */
  vic_knn nn;
  vic_data x1 = {unit, n, 3, 0, VIC_L2, NULL};
  VT_OK(c, vic_knn_density(c, &x1, 16, NULL, NULL, &nn, rho, NULL, NULL));
  rho[17] = INFINITY;
  vic_peaks pk;
  VT_CHECK(vic_peaks_find(c, &x1, &nn, rho, NULL, &pk) != VIC_OK, "peaks from an infinite density");
  vic_knn_free(&nn);
  free(unit); free(rho);
  vic_ctx_destroy(c);
}

/* the global density of d_nn1 statistics in high d: V_d underflows double
 * above d of about 780's half, so it is taken in logs */
static void test_dnn1_high_d(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 400;
  float *p = vt_uniform(n, 3, 100.f, 37);
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 2;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  vic_dnn1_stats st;
  const int32_t d = 700;
  VT_OK(c, vic_dnn1_stats_compute(c, &r, d, &st));
  const double log_vd = 0.5 * d * log(3.14159265358979323846) - lgamma(0.5 * d + 1.0);
  const double want = d * (lgamma(1.0 + 1.0 / d) - log(st.mean)) - log_vd;
  VT_CHECK(isfinite(st.global_density) && st.global_density > 0 && fabs(log(st.global_density) - want) < 1e-6 * fabs(want),
           "d = 700: global density %g, want e^%.3f", st.global_density, want);
  vic_knn_free(&r);
  free(p);
  vic_ctx_destroy(c);
}

/* ------------------------------------------------ recall */
static void test_recall_refuses_overflow(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 300;
  const int32_t d = 64, k = 5;
  float *unit = vt_uniform(n, d, 1.f, 13);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = k;
  vic_data x1 = {unit, n, d, 0, VIC_L2, NULL};
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x1, &o, &r));
  /* the same lists checked against data 1e20 times larger: every exact
   * reference distance overflows float */
  float *big = scaled(unit, n * d, 1e20);
  vic_data xb = {big, n, d, 0, VIC_L2, NULL};
  double recall = -1;
  vic_status st = vic_knn_recall(c, &xb, &r, 50, &recall);
  VT_CHECK(st == VIC_E_NONFINITE, "recall against an overflowed reference: %s, recall %.3f (%s)", vic_status_name(st),
           recall, vic_ctx_error(c));
  /* and lists with an overflowed distance */
  r.dist[3 * k + 2] = INFINITY;
  recall = -1;
  st = vic_knn_recall(c, &x1, &r, (int32_t)n, &recall);
  VT_CHECK(st == VIC_E_NONFINITE, "recall of lists with an infinite distance: %s, recall %.3f", vic_status_name(st), recall);
  vic_knn_free(&r);
  free(unit); free(big);
  vic_ctx_destroy(c);
}

/* ------------------------------------------------ parameters */
static void test_entry_points(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 1500, m = 40;
  const int32_t d = 8, k = 5;
  float *p = vt_clusters(n, d, 4, 17);
  vic_data x = {p, n, d, 0, VIC_L2, NULL};
  vic_data q = {p, m, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  o.k = 10;
  vic_index *ix = NULL;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = k;
  so.entry_points = INT32_MAX;
  vic_knn r;
  VT_OK(c, vic_index_search(c, ix, &q, &so, &r));
  int64_t missing = 0, self = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int32_t t = 0; t < k; ++t) missing += r.ids[i * k + t] < 0;
    self += r.ids[i * k] == i; /* each query is a data point: found at distance 0 */
  }
  VT_CHECK(missing == 0 && self == m, "entry_points = INT32_MAX: %lld missing ids, %lld of %lld queries find themselves",
           (long long)missing, (long long)self, (long long)m);
  VT_CHECK(r.report.warnings >= 1, "entry_points clamped without a warning");
  vic_knn_free(&r);
  vic_index_free(ix);
  free(p);
  vic_ctx_destroy(c);
}

static void test_k_build_bounded(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 3000;
  const int32_t d = 8, k = 10;
  float *p = vt_uniform(n, d, 1.f, 19);
  vic_data x = {p, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  o.k = k;
  o.nndescent.k_build = INT32_MAX;
  vic_knn r;
  clock_t t0 = clock();
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
  VT_CHECK(cpu < 60, "k_build = INT32_MAX on 3000 x 8 took %.1f s of CPU", cpu);
  VT_CHECK(r.report.method == VIC_METHOD_BRUTE && r.report.recall_estimate == 1.0 && r.report.warnings >= 1,
           "huge k_build: method %s, recall %.3f, %d warnings (want brute force, exact, a warning)",
           vic_method_name(r.report.method), r.report.recall_estimate, r.report.warnings);
  VT_CHECK(vt_naive_mismatch(&r, &x, NULL, k, 1e-5) == 0, "huge k_build: lists not exact");
  vic_knn_free(&r);
  /* the graph index with the same option: exact lists under the graph, fast */
  vic_index *ix = NULL;
  t0 = clock();
  o.k = 10;
  o.nndescent.k_build = 1 << 20;
  vic_data xs = {p, 600, d, 0, VIC_L2, NULL};
  VT_OK(c, vic_index_build(c, &xs, &o, &ix));
  cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
  VT_CHECK(cpu < 60, "graph index with a huge k_build took %.1f s of CPU", cpu);
  vic_index_free(ix);
  free(p);
  vic_ctx_destroy(c);
}

static void test_tsdg_parameters(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = 300;
  float *p = vt_clusters(n, 8, 3, 23);
  vic_data x = {p, n, 8, 0, VIC_L2, NULL};
  const float alphas[] = {NAN, INFINITY, -1.f, 0.5f};
  for (int i = 0; i < 4; ++i) {
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_TSDG;
    o.tsdg.alpha = alphas[i];
    vic_index *ix = NULL;
    vic_status st = vic_index_build(c, &x, &o, &ix);
    VT_CHECK(st == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "alpha"), "TSDG alpha = %g: %s (%s)", (double)alphas[i],
             vic_status_name(st), vic_ctx_error(c));
    vic_index_free(ix);
  }
  const int32_t lambdas[] = {-1, 255, INT32_MAX};
  for (int i = 0; i < 3; ++i) {
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_TSDG;
    o.tsdg.lambda0 = lambdas[i];
    vic_index *ix = NULL;
    vic_status st = vic_index_build(c, &x, &o, &ix);
    VT_CHECK(st == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "lambda0"), "TSDG lambda0 = %d: %s (%s)", (int)lambdas[i],
             vic_status_name(st), vic_ctx_error(c));
    vic_index_free(ix);
  }
  free(p);
  vic_ctx_destroy(c);
}

/* ------------------------------------------------ cancel, messages */
static int cancel_first(void *user, const char *stage, double fraction) {
  (void)stage; (void)fraction;
  int *calls = user;
  return (*calls)++ == 0;
}

static void test_cancel_one_call(void) {
  int calls = 0;
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.progress = cancel_first;
  co.user = &calls;
  vic_ctx *c = NULL;
  VT_OK(c, vic_ctx_create(&co, &c));
  float *p = vt_uniform(500, 3, 1.f, 29);
  vic_data x = {p, 500, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 4;
  vic_knn r;
  VT_CHECK(vic_knn_build(c, &x, &o, &r) == VIC_E_CANCELLED, "the progress callback's cancel stops the call");
  vic_status st = vic_knn_build(c, &x, &o, &r);
  VT_CHECK(st == VIC_OK, "the next call runs (cancel applies to one call): %s", vic_status_name(st));
  if (st == VIC_OK) vic_knn_free(&r);
  /* the same across functions: a cancelled density, then a build */
  calls = 0;
  float *rho = malloc(500 * sizeof *rho);
  VT_CHECK(vic_knn_density(c, &x, 5, NULL, NULL, NULL, rho, NULL, NULL) == VIC_E_CANCELLED, "density cancelled");
  st = vic_knn_build(c, &x, &o, &r);
  VT_CHECK(st == VIC_OK, "a build after a cancelled density: %s", vic_status_name(st));
  if (st == VIC_OK) vic_knn_free(&r);
  free(rho); free(p);
  vic_ctx_destroy(c);
}

static void test_directory_index(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  float *p = vt_uniform(10, 3, 1.f, 31);
  vic_data x = {p, 10, 3, 0, VIC_L2, NULL};
  char dir[512];
  vt_tmp_path("test_reliability", "", dir, sizeof dir);
  char *slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0'; /* the temporary directory itself */
  vic_index *ix = NULL;
  vic_status st = vic_index_load(c, dir, &x, &ix);
  VT_CHECK(st == VIC_E_IO && strstr(vic_ctx_error(c), "is a directory"), "a directory as index file: %s (%s)",
           vic_status_name(st), vic_ctx_error(c));
  free(p);
  vic_ctx_destroy(c);
}

int main(void) {
  test_threads_honoured(); /* first: before anything starts a thread pool */
  test_scale_sweep();
  test_cosine_large();
  test_density_range();
  test_dnn1_high_d();
  test_recall_refuses_overflow();
  test_entry_points();
  test_k_build_bounded();
  test_tsdg_parameters();
  test_cancel_one_call();
  test_directory_index();
  return vt_finish("test_reliability");
}
