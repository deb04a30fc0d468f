/* Exact brute force (direct and BLAS-tiled paths) and vic_knn_query_exact
 * against the naive double-precision reference: three metrics, sizes that
 * straddle the tiles, duplicates, periodic boxes, values whose squares
 * overflow, the recall path, determinism, cancellation, bad query views and
 * MNIST. */
#include "test_util.h"
#include "vic_io.h"

#include <math.h>
#include <string.h>

static const vic_metric METRICS[3] = {VIC_L2, VIC_COSINE, VIC_INNER_PRODUCT};

static vic_ctx *ctx_opts(int threads, int (*progress)(void *, const char *, double)) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CPU;
  o.threads = threads;
  o.progress = progress;
  return vt_ctx_make(&o);
}

/* All-points lists by brute force against the reference. */
static void check_build(const char *what, const vic_data *x, int32_t k) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = k;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, x, &o, &r));
  int64_t bad = vt_naive_mismatch(&r, x, NULL, r.k, 1e-4);
  VT_CHECK(bad == 0, "%s: %lld of %lld rows differ", what, (long long)bad, (long long)x->n);
  VT_CHECK(vt_order_violations(&r) == 0, "%s: lists not ascending by (distance, id)", what);
  for (int64_t i = 0; i < x->n; ++i)
    for (int32_t t = 0; t < r.k; ++t)
      if (r.ids[i * r.k + t] == i) { VT_CHECK(0, "%s: row %lld finds itself", what, (long long)i); i = x->n; break; }
  vic_knn_free(&r);
  vic_ctx_destroy(c);
}

/* Query lists by vic_knn_query_exact against the reference. */
static void check_query(const char *what, const vic_data *x, const vic_data *q, int32_t k, vic_method expect) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_knn r;
  VT_OK(c, vic_knn_query_exact(c, x, q, k, &r));
  VT_CHECK(r.n == q->n && r.k == k, "%s: shape %lld x %d", what, (long long)r.n, (int)r.k);
  VT_CHECK(r.report.method == expect, "%s: method %s", what, vic_method_name(r.report.method));
  int64_t bad = vt_naive_mismatch(&r, x, q, k, 1e-4);
  VT_CHECK(bad == 0, "%s: %lld of %lld query rows differ", what, (long long)bad, (long long)q->n);
  VT_CHECK(vt_order_violations(&r) == 0, "%s: lists not ascending by (distance, id)", what);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
}

static void test_metrics_and_tiles(void) {
  /* n beyond one 1024-row tile so off-diagonal tiles and partial tiles run */
  int64_t n = vt_small() ? 700 : 2600;
  int32_t dims[3] = {5, 24, 100};
  for (int di = 0; di < 3; ++di) {
    int32_t d = dims[di];
    float *p = vt_clusters(n, d, 6, 40 + d);
    /* exact duplicates in different tiles: ties to the lower id */
    for (int t = 0; t < 3; ++t) memcpy(p + (n - 1 - t) * d, p + 5 * d, (size_t)d * sizeof(float));
    for (int mi = 0; mi < 3; ++mi) {
      vic_data x = {p, n, d, 0, METRICS[mi], NULL};
      char what[80];
      snprintf(what, sizeof what, "brute d=%d %s", (int)d, vic_metric_name(METRICS[mi]));
      check_build(what, &x, 10);
    }
    free(p);
  }
}

static void test_duplicates_order(void) {
  int64_t n = 1500;
  int32_t d = 32, k = 8;
  float *p = vt_uniform(n, d, 100.f, 3);
  /* a group larger than k of identical rows: the k lowest ids, in order */
  for (int t = 0; t < 12; ++t) memcpy(p + (100 + 97 * t) * d, p + 7 * d, (size_t)d * sizeof(float));
  vic_data x = {p, n, d, 0, VIC_L2, NULL};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = k;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  for (int32_t t = 0; t < k; ++t) {
    VT_CHECK(r.ids[7 * k + t] == 100 + 97 * t, "row 7 rank %d: id %lld", (int)t, (long long)r.ids[7 * k + t]);
    VT_CHECK(r.dist[7 * k + t] == 0.f, "row 7 rank %d: distance %g (must be exactly 0)", (int)t, r.dist[7 * k + t]);
  }
  VT_CHECK(r.ids[100 * k] == 7 && r.ids[100 * k + 1] == 197, "row 100: %lld %lld", (long long)r.ids[100 * k],
           (long long)r.ids[100 * k + 1]);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(p);
}

static void test_periodic_and_huge(void) {
  int64_t n = vt_small() ? 300 : 1200;
  float *p = vt_uniform(n, 3, 2.f, 8);
  double box[3] = {2, 0, 2};
  vic_data x = {p, n, 3, 0, VIC_L2, box};
  check_build("brute periodic box", &x, 7);
  free(p);
  /* squares overflow float: the product form cannot rank these, the direct path must */
  int32_t d = 20;
  float *h = vt_uniform(n, d, 1.f, 9);
  for (int64_t i = 0; i < n * d; ++i) h[i] = 1e19f + (h[i] - 0.5f) * 1e18f; /* ||x||^2 = inf, distances finite */
  vic_data xh = {h, n, d, 0, VIC_L2, NULL};
  check_build("brute, values near 1e19", &xh, 5);
  free(h);
}

static void test_queries(void) {
  int64_t n = vt_small() ? 500 : 3000, m = vt_small() ? 200 : 700;
  for (int32_t d = 1; d <= 40; d += 13) { /* d = 1, 14, 27, 40: grid, direct and tiled */
    float *p = vt_uniform(n, d, 1.f, 60 + d);
    float *qs = vt_uniform(m, d, 1.4f, 70 + d); /* some queries outside the data's box */
    for (int32_t j = 0; j < d; ++j) qs[j] = p[3 * d + j]; /* a query on a data point finds it at 0 */
    for (int mi = 0; mi < 3; ++mi) {
      if (d <= 3 && mi > 0) continue;
      vic_data x = {p, n, d, 0, METRICS[mi], NULL}, q = {qs, m, d, 0, METRICS[mi], NULL};
      char what[80];
      snprintf(what, sizeof what, "query d=%d %s", (int)d, vic_metric_name(METRICS[mi]));
      check_query(what, &x, &q, 9, d <= 3 ? VIC_METHOD_GRID : VIC_METHOD_BRUTE);
      if (mi == 0) {
        vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
        vic_knn r;
        VT_OK(c, vic_knn_query_exact(c, &x, &q, 3, &r));
        VT_CHECK(r.ids[0] == 3 && r.dist[0] == 0.f, "%s: query on point 3 finds it (%lld, %g)", what,
                 (long long)r.ids[0], r.dist[0]);
        vic_knn_free(&r);
        vic_ctx_destroy(c);
      }
    }
    free(p);
    free(qs);
  }
  /* periodic queries (grid), half of them outside [0, L) (a box's worth
   * of queries, shifted: they wrap) */
  float *p = vt_uniform(n, 3, 1.f, 90), *qs = vt_uniform(m, 3, 1.f, 91);
  for (int64_t i = 0; i < 3 * m; ++i) qs[i] -= 0.5f;
  double box[3] = {1, 1, 1};
  vic_data x = {p, n, 3, 0, VIC_L2, box}, q = {qs, m, 3, 0, VIC_L2, box};
  check_query("query periodic", &x, &q, 6, VIC_METHOD_GRID);
  vic_data q_nobox = q;
  q_nobox.box = NULL; /* the data's box applies to the queries */
  check_query("query periodic (box on the data only)", &x, &q_nobox, 6, VIC_METHOD_GRID);
  /* a single data point: every query finds it and pads the rest */
  vic_data one = {p, 1, 3, 0, VIC_L2, NULL}, qo = {qs, 5, 3, 0, VIC_L2, NULL};
  check_query("query, one data point", &one, &qo, 1, VIC_METHOD_GRID);
  vic_data one_hd = {p, 1, 20, 0, VIC_L2, NULL}, qo_hd = {qs, 5, 20, 0, VIC_L2, NULL};
  check_query("query, one data point, d = 20", &one_hd, &qo_hd, 1, VIC_METHOD_BRUTE);
  free(p);
  free(qs);
}

static void test_query_bad_input(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *p = vt_uniform(50, 4, 1.f, 1), *qs = vt_uniform(10, 4, 1.f, 2);
  vic_data x = {p, 50, 4, 0, VIC_L2, NULL}, q = {qs, 10, 4, 0, VIC_L2, NULL};
  vic_knn r;
  vic_data q3 = q;
  q3.d = 3;
  VT_CHECK(vic_knn_query_exact(c, &x, &q3, 5, &r) == VIC_E_ARGUMENT, "different d");
  VT_CHECK(strstr(vic_ctx_error(c), "d = 3") != NULL, "message: %s", vic_ctx_error(c));
  VT_CHECK(r.ids == NULL && r.n == 0, "output zeroed on failure");
  vic_data qc = q;
  qc.metric = VIC_COSINE;
  VT_CHECK(vic_knn_query_exact(c, &x, &qc, 5, &r) == VIC_E_ARGUMENT, "different metric");
  VT_CHECK(strstr(vic_ctx_error(c), "metric") != NULL, "message: %s", vic_ctx_error(c));
  double box[4] = {1, 1, 1, 1}, box2[4] = {1, 2, 1, 1};
  vic_data qb = q;
  qb.box = box;
  VT_CHECK(vic_knn_query_exact(c, &x, &qb, 5, &r) == VIC_E_ARGUMENT, "box on the queries only");
  vic_data xb = x;
  xb.box = box;
  qb.box = box2;
  VT_CHECK(vic_knn_query_exact(c, &xb, &qb, 5, &r) == VIC_E_ARGUMENT, "different boxes");
  VT_CHECK(strstr(vic_ctx_error(c), "dimension 1") != NULL, "message: %s", vic_ctx_error(c));
  qs[2 * 4 + 1] = NAN;
  VT_CHECK(vic_knn_query_exact(c, &x, &q, 5, &r) == VIC_E_NONFINITE, "NaN query");
  VT_CHECK(strstr(vic_ctx_error(c), "queries") != NULL && strstr(vic_ctx_error(c), "row 2") != NULL, "message: %s",
           vic_ctx_error(c));
  qs[2 * 4 + 1] = 0.5f;
  VT_CHECK(vic_knn_query_exact(c, &x, &q, 0, &r) == VIC_E_ARGUMENT, "k = 0");
  VT_CHECK(vic_knn_query_exact(c, &x, NULL, 5, &r) == VIC_E_ARGUMENT, "no queries");
  vic_data empty = q;
  empty.n = 0;
  VT_CHECK(vic_knn_query_exact(c, &x, &empty, 5, &r) == VIC_E_ARGUMENT, "no query rows");
  /* k > n clamps to n with a warning: every data point, none excluded */
  vt_warnings = 0;
  VT_OK(c, vic_knn_query_exact(c, &x, &q, 80, &r));
  VT_CHECK(r.k == 50 && r.report.k_requested == 80 && vt_warnings == 1, "clamped k = %d, %d warnings", (int)r.k,
           vt_warnings);
  VT_CHECK(r.ids[49] >= 0, "all 50 data points listed");
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(p);
  free(qs);
}

/* The recall path (a sample of rows through vic__cpu_brute_knn_rows). */
static void test_recall_path(void) {
  int64_t n = vt_small() ? 600 : 2000;
  int32_t d = 30, k = 10;
  float *p = vt_clusters(n, d, 4, 12);
  vic_data x = {p, n, d, 0, VIC_L2, NULL};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 5);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = k;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  double recall = 0;
  VT_OK(c, vic_knn_recall(c, &x, &r, 300, &recall));
  VT_CHECK(recall == 1.0, "exact lists have recall 1 (got %g)", recall);
  /* replace the nearest neighbour of every row by a far point: recall drops to about 0.9 */
  for (int64_t i = 0; i < n; ++i) { r.ids[i * k] = (i + n / 2) % n; r.dist[i * k] = 1e9f; }
  VT_OK(c, vic_knn_recall(c, &x, &r, 300, &recall));
  VT_CHECK(recall > 0.85 && recall < 0.95, "one wrong neighbour in ten: recall %g", recall);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(p);
}

static void test_determinism(void) {
  int64_t n = vt_small() ? 800 : 3000;
  int32_t d = 48;
  float *p = vt_clusters(n, d, 8, 77);
  vic_data x = {p, n, d, 0, VIC_COSINE, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  vic_knn a, b;
  vic_ctx *c1 = ctx_opts(1, NULL), *c2 = ctx_opts(2, NULL);
  VT_OK(c1, vic_knn_build(c1, &x, &o, &a));
  VT_OK(c2, vic_knn_build(c2, &x, &o, &b));
  VT_CHECK(memcmp(a.ids, b.ids, (size_t)n * a.k * sizeof *a.ids) == 0, "ids equal for 1 and 2 threads");
  VT_CHECK(memcmp(a.dist, b.dist, (size_t)n * a.k * sizeof *a.dist) == 0, "distances equal for 1 and 2 threads");
  vic_knn_free(&a);
  vic_knn_free(&b);
  vic_ctx_destroy(c1);
  vic_ctx_destroy(c2);
  free(p);
}

static int progress_calls;
static int cancel_midway(void *user, const char *stage, double f) {
  (void)user;
  (void)f;
  return strcmp(stage, "brute") == 0 && ++progress_calls >= 2; /* let one report through, then stop */
}

static void test_cancel(void) {
  int64_t n = vt_small() ? 1500 : 4000;
  int32_t d = 64;
  float *p = vt_uniform(n, d, 1.f, 13);
  for (int pass = 0; pass < 2; ++pass) { /* tiled (d = 64) and direct (d = 8) */
    vic_data x = {p, n, pass ? 8 : d, 0, VIC_L2, NULL};
    vic_ctx *c = ctx_opts(0, cancel_midway);
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_BRUTE;
    vic_knn r;
    progress_calls = 0;
    vic_status s = vic_knn_build(c, &x, &o, &r);
    VT_CHECK(s == VIC_E_CANCELLED, "cancel mid brute force (d = %d): %s", (int)x.d, vic_status_name(s));
    VT_CHECK(progress_calls >= 2, "progress reported before the cancel (%d)", progress_calls);
    VT_CHECK(r.ids == NULL, "nothing returned after cancel");
    vic_ctx_destroy(c);
  }
  free(p);
}

/* An image set: brute force on a subset against the naive reference, then
 * queries from the rest of the set (rows from 5,000 on). */
static void check_images(const char *label, const vio_matrix m) {
  char name[96];
  int64_t n = vt_small() ? 300 : 1500, nq = vt_small() ? 50 : 200;
  vic_data x = {m.rows, n, m.d, 0, VIC_L2, NULL};
  snprintf(name, sizeof name, "%s subset L2", label);
  check_build(name, &x, 10);
  vic_data xc = x;
  xc.metric = VIC_COSINE;
  snprintf(name, sizeof name, "%s subset cosine", label);
  check_build(name, &xc, 10);
  vic_data q = {m.rows + 5000 * (int64_t)m.d, nq, m.d, 0, VIC_L2, NULL};
  snprintf(name, sizeof name, "%s queries", label);
  check_query(name, &x, &q, 10, VIC_METHOD_BRUTE);
}

/* MNIST's stand-in (vt_digits) always, MNIST t10k when the data folder has it. */
static void test_mnist(void) {
  vio_matrix m = {vt_digits(5200, 784, 17), 5200, 784};
  check_images("synthetic digits", m);
  free(m.rows);
  if (!vt_load_data("mnist/t10k-images-idx3-ubyte.gz", &m)) return;
  VT_CHECK(m.n == 10000 && m.d == 784, "MNIST shape %lld x %d", (long long)m.n, (int)m.d);
  check_images("MNIST", m);
  vio_free(&m);
}

int main(void) {
  test_metrics_and_tiles();
  test_duplicates_order();
  test_periodic_and_huge();
  test_queries();
  test_query_bad_input();
  test_recall_path();
  test_determinism();
  test_cancel();
  test_mnist();
  return vt_finish("test_brute");
}
