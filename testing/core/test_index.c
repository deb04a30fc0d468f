/* The search index: the kind AUTO picks and why, exact kinds equal
 * vic_knn_query_exact, graph search recall on clustered, disconnected and
 * MNIST data, bad input, cancellation. */
#include "test_util.h"
#include "vic_io.h"

#include <math.h>
#include <string.h>

/* n+m rows from one clustered distribution: the first n are indexed, the
 * last m are queries. */
static float *split_clusters(int64_t n, int64_t m, int32_t d, int clusters, float spread, uint64_t seed) {
  float *p = vt_clusters(n + m, d, clusters, seed);
  if (spread != 1.f) /* pull the clusters apart, keeping their width */
    for (int64_t i = 0; i < (n + m) * d; ++i) p[i] *= spread;
  return p;
}

/* Recall@k of r against exact results e (ties at the k-th distance count). */
static double recall(const vic_knn *r, const vic_knn *e) {
  int32_t k = e->k;
  int64_t hit = 0;
  for (int64_t i = 0; i < e->n; ++i)
    for (int32_t t = 0; t < k; ++t) {
      int found = 0;
      for (int32_t u = 0; u < k && !found; ++u) found = r->ids[i * k + u] == e->ids[i * k + t];
      if (!found) found = r->dist[i * k + t] <= e->dist[i * k + k - 1] * (1 + 1e-5f);
      hit += found;
    }
  return (double)hit / (double)(e->n * k);
}

static int64_t compare_exact(const vic_knn *got, const vic_knn *ref) {
  int64_t m = ref->n * ref->k;
  double *rd = malloc((size_t)m * sizeof *rd);
  for (int64_t e = 0; e < m; ++e) rd[e] = ref->dist[e];
  int64_t bad = vt_compare_knn(got, ref->ids, rd, 1e-4);
  free(rd);
  return bad;
}

static void test_exact_kinds(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 2);
  int64_t n = vt_small() ? 1500 : 6000, m = 300;
  struct { int32_t d; int periodic; vic_method want; } cases[3] = {
      {3, 0, VIC_METHOD_GRID}, {3, 1, VIC_METHOD_GRID}, {16, 0, VIC_METHOD_BRUTE}};
  for (int ci = 0; ci < 3; ++ci) {
    int32_t d = cases[ci].d;
    float *pts = vt_uniform(n, d, 1.f, 40 + ci);
    float *qs = vt_uniform(m, d, 1.f, 50 + ci);
    double box[3] = {1, 1, 1};
    vic_data x = {pts, n, d, 0, VIC_L2, cases[ci].periodic ? box : NULL};
    vic_data q = {qs, m, d, 0, VIC_L2, NULL};
    vic_build_options o;
    vic_build_options_init(&o);
    vic_index *ix;
    VT_OK(c, vic_index_build(c, &x, &o, &ix));
    const vic_report *rep = vic_index_report(ix);
    VT_CHECK(rep->method == cases[ci].want, "case %d: AUTO chose %s", ci, vic_method_name(rep->method));
    VT_CHECK(strlen(rep->reason) > 10 && rep->recall_estimate == 1.0, "case %d: reason '%s'", ci, rep->reason);
    VT_CHECK(vic_index_size(ix) > 0, "size");
    vic_search_options so;
    vic_search_options_init(&so);
    so.k = 12;
    vic_knn r, e;
    VT_OK(c, vic_index_search(c, ix, &q, &so, &r));
    VT_OK(c, vic_knn_query_exact(c, &x, &q, 12, &e));
    VT_CHECK(r.n == m && r.k == 12, "shape");
    VT_CHECK(compare_exact(&r, &e) == 0, "case %d: exact index differs from vic_knn_query_exact", ci);
    VT_CHECK(r.report.recall_estimate == 1.0, "exact search reports recall 1");
    vic_knn_free(&r);
    vic_knn_free(&e);
    vic_index_free(ix);
    free(pts);
    free(qs);
  }
  vic_ctx_destroy(c);
}

static void test_auto_and_fallbacks(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 3);
  int64_t n = 1200;
  float *pts = vt_clusters(n, 12, 4, 60);
  vic_data x = {pts, n, 12, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.brute_max_n = 1000; /* n above it: AUTO takes the graph */
  vic_index *ix;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  VT_CHECK(vic_index_report(ix)->method == VIC_METHOD_NNDESCENT, "AUTO above brute_max_n: %s",
           vic_method_name(vic_index_report(ix)->method));
  VT_CHECK(vic_index_report(ix)->recall_estimate == -1.0, "graph: recall not measured");
  vic_index_free(ix);

  vic_data xi = x;
  xi.metric = VIC_INNER_PRODUCT;
  VT_OK(c, vic_index_build(c, &xi, &o, &ix));
  VT_CHECK(vic_index_report(ix)->method == VIC_METHOD_BRUTE, "inner product: brute");
  vic_index_free(ix);
  o.method = VIC_METHOD_NNDESCENT;
  VT_CHECK(vic_index_build(c, &xi, &o, &ix) == VIC_E_UNSUPPORTED && ix == NULL, "inner product graph refused");

  o.method = VIC_METHOD_GGNN;
  vt_warnings = 0;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  VT_CHECK(vic_index_report(ix)->method == VIC_METHOD_NNDESCENT && vt_warnings == 1, "GGNN on the CPU: graph + warning");
  VT_CHECK(strstr(vic_index_report(ix)->reason, "ggnn") != NULL, "reason: %s", vic_index_report(ix)->reason);

  /* bad searches */
  vic_search_options so;
  vic_search_options_init(&so);
  vic_knn r;
  so.k = 0;
  VT_CHECK(vic_index_search(c, ix, &x, &so, &r) == VIC_E_ARGUMENT && r.ids == NULL, "k = 0");
  so.k = 5;
  vic_data q3 = {pts, 10, 3, 0, VIC_L2, NULL};
  VT_CHECK(vic_index_search(c, ix, &q3, &so, &r) == VIC_E_ARGUMENT, "d mismatch");
  VT_CHECK(strstr(vic_ctx_error(c), "d = 3") != NULL, "message: %s", vic_ctx_error(c));
  float bad[12];
  memcpy(bad, pts, sizeof bad);
  bad[4] = NAN;
  vic_data qn = {bad, 1, 12, 0, VIC_L2, NULL};
  VT_CHECK(vic_index_search(c, ix, &qn, &so, &r) == VIC_E_NONFINITE, "NaN query");
  so.tau = -1.f;
  VT_CHECK(vic_index_search(c, ix, &x, &so, &r) == VIC_E_ARGUMENT, "negative tau");
  so.tau = 0.5f;
  VT_CHECK(vic_index_search(c, NULL, &x, &so, &r) == VIC_E_ARGUMENT, "no index");
  /* k above n clamps with a warning */
  vic_data few = {pts, 3, 12, 0, VIC_L2, NULL};
  vic_index *small;
  o.method = VIC_METHOD_AUTO;
  VT_OK(c, vic_index_build(c, &few, &o, &small));
  so.k = 10;
  VT_OK(c, vic_index_search(c, small, &few, &so, &r));
  VT_CHECK(r.k == 3 && r.report.warnings == 1, "k clamped to n = 3 (got %d)", r.k);
  VT_CHECK(r.ids[0] == 0 && r.dist[0] == 0.f, "a query equal to a data point finds it at distance 0");
  vic_knn_free(&r);
  vic_index_free(small);
  vic_index_free(ix);
  o.method = VIC_METHOD_GRID;
  VT_CHECK(vic_index_build(c, &x, &o, &ix) == VIC_E_UNSUPPORTED, "grid for d = 12 refused");
  vic_index_free(NULL);
  vic_ctx_destroy(c);
  free(pts);
}

/* Graph search on clustered data (one cloud) and on islands far apart
 * (a disconnected kNN graph), L2 and cosine. */
static void test_graph_recall(void) {
  int64_t n = vt_small() ? 1500 : 8000, m = vt_small() ? 100 : 500;
  int32_t d = 24;
  struct { const char *name; int clusters; float spread; vic_metric metric; } cases[3] = {
      {"clustered", 10, 1.f, VIC_L2}, {"islands", 60, 100.f, VIC_L2}, {"cosine", 10, 1.f, VIC_COSINE}};
  for (int ci = 0; ci < 3; ++ci) {
    vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 4);
    float *p = split_clusters(n, m, d, cases[ci].clusters, cases[ci].spread, 70 + ci);
    vic_data x = {p, n, d, 0, cases[ci].metric, NULL};
    vic_data q = {p + n * d, m, d, 0, cases[ci].metric, NULL};
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_NNDESCENT;
    vic_index *ix;
    VT_OK(c, vic_index_build(c, &x, &o, &ix));
    vic_search_options so;
    vic_search_options_init(&so);
    vic_knn r, e;
    VT_OK(c, vic_index_search(c, ix, &q, &so, &r));
    VT_OK(c, vic_knn_query_exact(c, &x, &q, so.k, &e));
    double rec = recall(&r, &e);
    printf("graph %s: recall@10 %.4f (%s)\n", cases[ci].name, rec, r.report.reason);
    VT_CHECK(rec >= 0.95, "%s recall@10 %.4f", cases[ci].name, rec);
    /* tau = 0 with a visit budget still answers, with lower or equal effort */
    so.tau = 0.f;
    so.max_visits = 50;
    vic_knn r0;
    VT_OK(c, vic_index_search(c, ix, &q, &so, &r0));
    int64_t filled = 0;
    for (int64_t t = 0; t < r0.n * r0.k; ++t) filled += r0.ids[t] >= 0;
    VT_CHECK(filled == r0.n * r0.k, "budgeted search still fills k = 10 results");
    vic_knn_free(&r0);
    vic_knn_free(&r);
    vic_knn_free(&e);
    vic_index_free(ix);
    vic_ctx_destroy(c);
    free(p);
  }
}

/* An image set's graph index: recall@10 of 1,000 held-out queries. */
static void check_images(const char *label, const vio_matrix mx) {
  int64_t n = vt_small() ? 1800 : 9000, m = vt_small() ? 100 : 1000;
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {mx.rows, n, mx.d, 0, VIC_L2, NULL};
  vic_data q = {mx.rows + (mx.n - m) * mx.d, m, mx.d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  vic_index *ix;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  vic_search_options so;
  vic_search_options_init(&so);
  vic_knn r, e;
  VT_OK(c, vic_index_search(c, ix, &q, &so, &r));
  VT_OK(c, vic_knn_query_exact(c, &x, &q, so.k, &e));
  double rec = recall(&r, &e);
  printf("%s graph index n=%lld, %lld queries: recall@10 %.4f, build %.2f s, search %.3f s (%s)\n", label,
         (long long)n, (long long)m, rec, vic_index_report(ix)->seconds_total, r.report.seconds_total,
         r.report.reason);
  VT_CHECK(rec >= 0.95, "%s index recall@10 %.4f", label, rec);
  vic_knn_free(&r);
  vic_knn_free(&e);
  vic_index_free(ix);
  vic_ctx_destroy(c);
}

/* MNIST's stand-in (vt_digits) always, MNIST t10k when the data folder has it. */
static void test_mnist(void) {
  vio_matrix mx = {vt_digits(10000, 784, 19), 10000, 784};
  check_images("synthetic digits", mx);
  free(mx.rows);
  if (!vt_load_data("mnist/t10k-images-idx3-ubyte.gz", &mx)) return;
  check_images("MNIST", mx);
  vio_free(&mx);
}

/* Graph indexes over a handful of points still answer exactly. */
static void test_tiny_graph(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 6);
  float pts[12] = {0, 0, 0, 5, 1, 1, 9, 9, 2, 2, 4, 4};
  for (int64_t n = 2; n <= 6; n += 4) {
    vic_data x = {pts, n, 2, 0, VIC_L2, NULL};
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_NNDESCENT;
    vic_index *ix;
    VT_OK(c, vic_index_build(c, &x, &o, &ix));
    vic_search_options so;
    vic_search_options_init(&so);
    so.k = (int32_t)n;
    vic_knn r, e;
    VT_OK(c, vic_index_search(c, ix, &x, &so, &r));
    VT_OK(c, vic_knn_query_exact(c, &x, &x, (int32_t)n, &e));
    VT_CHECK(compare_exact(&r, &e) == 0, "n = %lld: graph search over every point is exact", (long long)n);
    vic_knn_free(&r);
    vic_knn_free(&e);
    vic_index_free(ix);
  }
  vic_ctx_destroy(c);
}

static int cancel_in_build(void *user, const char *stage, double f) {
  (void)user;
  return strcmp(stage, "nndescent") == 0 && f > 0.05;
}

static void test_cancel(void) {
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.progress = cancel_in_build;
  vic_ctx *c;
  if (vic_ctx_create(&co, &c) != VIC_OK) { VT_CHECK(0, "context"); return; }
  int64_t n = 3000;
  float *p = vt_clusters(n, 10, 5, 90);
  vic_data x = {p, n, 10, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  vic_index *ix = (vic_index *)&o; /* must be reset to NULL */
  vic_status s = vic_index_build(c, &x, &o, &ix);
  VT_CHECK(s == VIC_E_CANCELLED && ix == NULL, "cancelled build: %s", vic_status_name(s));
  vic_ctx_destroy(c);
  free(p);
}

int main(void) {
  test_exact_kinds();
  test_auto_and_fallbacks();
  test_graph_recall();
  test_mnist();
  test_tiny_graph();
  test_cancel();
  return vt_finish("test_index");
}
