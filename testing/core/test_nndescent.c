/* CPU NN-Descent: recall against exact search on clustered data and MNIST,
 * well-formed lists, the same result for a seed whatever the thread count,
 * cancellation without leaks, tiny and degenerate sets, bad parameters. */
#include "test_util.h"
#include "vic_io.h"

#include <math.h>
#include <string.h>

/* Fraction of the exact neighbours (naive double reference) found; ties at
 * the k-th distance count as found. */
static double recall_vs_naive(const vic_data *x, const vic_knn *r) {
  int32_t k = r->k;
  int64_t *ref = malloc((size_t)x->n * k * sizeof *ref);
  double *refd = malloc((size_t)x->n * k * sizeof *refd);
  vt_naive_knn(x, NULL, k, ref, refd);
  int64_t hit = 0;
  for (int64_t i = 0; i < x->n; ++i)
    for (int32_t t = 0; t < k; ++t) {
      int found = 0;
      for (int32_t u = 0; u < k && !found; ++u) found = r->ids[i * k + u] == ref[i * k + t];
      if (!found) found = r->dist[i * k + t] <= refd[i * k + k - 1] * (1 + 1e-5);
      hit += found;
    }
  free(ref);
  free(refd);
  return (double)hit / (double)(x->n * k);
}

/* Rows ascending, ids valid and distinct, self excluded, distances true. */
static void check_lists(const vic_data *x, const vic_knn *r, const char *what) {
  int32_t k = r->k;
  int64_t bad = 0;
  for (int64_t i = 0; i < r->n; ++i)
    for (int32_t t = 0; t < k; ++t) {
      int64_t j = r->ids[i * k + t];
      float d = r->dist[i * k + t];
      if (j < 0 || j >= x->n || j == i) { bad++; continue; }
      if (t > 0 && (d < r->dist[i * k + t - 1] || (d == r->dist[i * k + t - 1] && j < r->ids[i * k + t - 1]))) bad++;
      for (int32_t u = 0; u < t; ++u) bad += r->ids[i * k + u] == j;
      /* the distance reported is the distance of that pair */
      const float *a = x->rows + i * x->d, *b = x->rows + j * x->d;
      double s = 0, na = 0, nb = 0;
      for (int32_t c = 0; c < x->d; ++c) { s += (double)a[c] * b[c]; na += (double)a[c] * a[c]; nb += (double)b[c] * b[c]; }
      double want = x->metric == VIC_COSINE ? 1 - s / sqrt(na * nb) : sqrt(fmax(na + nb - 2 * s, 0));
      if (fabs(want - d) > 1e-3 * (fabs(want) > 1 ? fabs(want) : 1)) bad++;
    }
  VT_CHECK(bad == 0, "%s: %lld malformed entries", what, (long long)bad);
}

static void test_clustered(void) {
  int64_t n = vt_small() ? 800 : 4000;
  int32_t d = 32, k = 10;
  float *pts = vt_clusters(n, d, 12, 11);
  vic_metric metrics[2] = {VIC_L2, VIC_COSINE};
  for (int mi = 0; mi < 2; ++mi) {
    vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 5);
    vic_data x = {pts, n, d, 0, metrics[mi], NULL};
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_NNDESCENT;
    o.k = k;
    o.recall_sample = 200;
    vic_knn r;
    VT_OK(c, vic_knn_build(c, &x, &o, &r));
    VT_CHECK(r.n == n && r.k == k, "shape");
    VT_CHECK(r.report.method == VIC_METHOD_NNDESCENT && r.report.backend == VIC_BACKEND_CPU, "report method");
    check_lists(&x, &r, vic_metric_name(metrics[mi]));
    double rec = recall_vs_naive(&x, &r);
    VT_CHECK(rec >= 0.97, "%s recall %.4f", vic_metric_name(metrics[mi]), rec);
    VT_CHECK(r.report.recall_estimate >= 0.95 && r.report.recall_estimate <= 1.0, "estimate %.4f",
             r.report.recall_estimate);
    printf("clustered %s n=%lld: recall@%d %.4f (estimate %.4f)\n", vic_metric_name(metrics[mi]), (long long)n, k, rec,
           r.report.recall_estimate);
    vic_knn_free(&r);
    vic_ctx_destroy(c);
  }
  free(pts);
}

/* The sampling is hashed and the joins are order independent, so threads
 * must not change the result; the seed does. */
static void test_deterministic(void) {
  int64_t n = vt_small() ? 600 : 3000;
  int32_t d = 20, k = 8;
  float *pts = vt_clusters(n, d, 6, 21);
  vic_data x = {pts, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  o.k = k;
  o.recall_sample = 0;
  o.nndescent.k_build = 12; /* short lists leave room for seed-dependent misses */
  o.nndescent.rho = 0.3f;
  vic_knn r[4];
  int threads[4] = {1, 1, 2, 3};
  uint64_t seeds[4] = {9, 9, 9, 10};
  for (int v = 0; v < 4; ++v) {
    vic_ctx *c = vt_ctx_threads(threads[v], seeds[v]);
    VT_OK(c, vic_knn_build(c, &x, &o, &r[v]));
    VT_CHECK(r[v].report.recall_estimate == -1.0, "no recall sample: estimate -1");
    vic_ctx_destroy(c);
  }
  size_t bytes = (size_t)n * k;
  VT_CHECK(memcmp(r[0].ids, r[1].ids, bytes * sizeof(int64_t)) == 0, "same seed, 1 thread: same ids");
  VT_CHECK(memcmp(r[0].dist, r[1].dist, bytes * sizeof(float)) == 0, "same seed, 1 thread: same distances");
  VT_CHECK(memcmp(r[0].ids, r[2].ids, bytes * sizeof(int64_t)) == 0, "same seed, 2 threads: same ids");
  int64_t differ = 0;
  for (size_t e = 0; e < bytes; ++e) differ += r[0].ids[e] != r[3].ids[e];
  printf("determinism: seed 9 equal across 1/2 threads; seed 10 differs in %lld of %zu entries\n", (long long)differ,
         bytes);
  for (int v = 0; v < 4; ++v) vic_knn_free(&r[v]);
  free(pts);
}

static int cancel_midway(void *user, const char *stage, double f) {
  int *calls = user;
  (*calls)++;
  return strcmp(stage, "nndescent") == 0 && f > 0.1; /* past the start, in the first round */
}

static void test_cancel(void) {
  int64_t n = vt_small() ? 1500 : 6000;
  int32_t d = 16;
  float *pts = vt_clusters(n, d, 8, 31);
  vic_data x = {pts, n, d, 0, VIC_L2, NULL};
  int calls = 0;
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.progress = cancel_midway;
  co.user = &calls;
  vic_ctx *c;
  if (vic_ctx_create(&co, &c) != VIC_OK) { VT_CHECK(0, "context"); return; }
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  o.k = 10;
  vic_knn r;
  vic_status s = vic_knn_build(c, &x, &o, &r);
  VT_CHECK(s == VIC_E_CANCELLED, "cancel mid-build: %s", vic_status_name(s));
  VT_CHECK(strstr(vic_ctx_error(c), "cancel") != NULL, "message: %s", vic_ctx_error(c));
  VT_CHECK(r.ids == NULL && r.dist == NULL && r.n == 0, "nothing returned after cancel");
  VT_CHECK(calls > 1, "progress was reported before the cancel (%d calls)", calls);
  vic_ctx_destroy(c);
  free(pts);
}

static void test_small_and_degenerate(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 3);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  o.recall_sample = 0;
  /* 5 points, k = 10: clamped to every other point, found exactly */
  float five[10] = {0, 0, 1, 0, 0, 1, 3, 3, 7, 1};
  vic_data x5 = {five, 5, 2, 0, VIC_L2, NULL};
  o.k = 10;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x5, &o, &r));
  VT_CHECK(r.k == 4, "k clamped to 4, got %d", r.k);
  VT_CHECK(vt_naive_mismatch(&r, &x5, NULL, 4, 1e-5) == 0, "5 points exact");
  vic_knn_free(&r);

  /* all points identical: every distance 0, ties resolved, no crash */
  int64_t n = 300;
  float *same = calloc((size_t)n * 8, sizeof(float));
  for (int64_t i = 0; i < n * 8; ++i) same[i] = 1.5f;
  vic_data xs = {same, n, 8, 0, VIC_L2, NULL};
  o.k = 6;
  VT_OK(c, vic_knn_build(c, &xs, &o, &r));
  int64_t bad = 0;
  for (int64_t e = 0; e < n * 6; ++e) bad += r.dist[e] != 0.f || r.ids[e] < 0 || r.ids[e] == e / 6;
  VT_CHECK(bad == 0, "duplicates: %lld bad entries", (long long)bad);
  vic_knn_free(&r);
  free(same);

  /* a strided view is read through its stride */
  float strided[5 * 4];
  for (int i = 0; i < 5; ++i) { strided[i * 4] = five[2 * i]; strided[i * 4 + 1] = five[2 * i + 1]; strided[i * 4 + 2] = strided[i * 4 + 3] = NAN; }
  vic_data xt = {strided, 5, 2, 4, VIC_L2, NULL};
  o.k = 2;
  VT_OK(c, vic_knn_build(c, &xt, &o, &r));
  VT_CHECK(vt_naive_mismatch(&r, &x5, NULL, 2, 1e-5) == 0, "strided view");
  vic_knn_free(&r);

  /* bad parameters */
  o.k = 2;
  o.nndescent.rho = 0.f;
  VT_CHECK(vic_knn_build(c, &x5, &o, &r) == VIC_E_ARGUMENT, "rho = 0");
  VT_CHECK(strstr(vic_ctx_error(c), "rho") != NULL, "message: %s", vic_ctx_error(c));
  o.nndescent.rho = 0.5f;
  o.nndescent.delta = -1.f;
  VT_CHECK(vic_knn_build(c, &x5, &o, &r) == VIC_E_ARGUMENT, "negative delta");
  o.nndescent.delta = 0.001f;
  vic_data xi = x5;
  xi.metric = VIC_INNER_PRODUCT;
  VT_CHECK(vic_knn_build(c, &xi, &o, &r) == VIC_E_UNSUPPORTED, "inner product");
  vic_ctx_destroy(c);
}

/* An image set of 10,000 rows, k = 10 with the default options:
 * recall@10 >= 0.99. */
static void check_images(const char *label, const vio_matrix m) {
  /* under sanitizers the distances are not vectorised: a subset suffices */
  int64_t n = vt_small() ? 2000 : m.n;
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {m.rows, n, m.d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  o.k = 10;
  o.recall_sample = 1000;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  printf("%s n=%lld: recall@10 estimate %.4f on %lld points, NN-Descent %.3f s\n", label, (long long)n,
         r.report.recall_estimate, (long long)r.report.recall_sample, r.report.stages[0].seconds);
  VT_CHECK(r.report.recall_estimate >= 0.99, "%s recall@10 %.4f", label, r.report.recall_estimate);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
}

/* MNIST's stand-in (vt_digits) always, MNIST t10k when the data folder has it. */
static void test_mnist(void) {
  vio_matrix m = {vt_digits(10000, 784, 23), 10000, 784};
  check_images("synthetic digits", m);
  free(m.rows);
  if (!vt_load_data("mnist/t10k-images-idx3-ubyte.gz", &m)) return;
  check_images("MNIST", m);
  vio_free(&m);
}

int main(void) {
  test_clustered();
  test_deterministic();
  test_cancel();
  test_small_and_degenerate();
  test_mnist();
  return vt_finish("test_nndescent");
}
