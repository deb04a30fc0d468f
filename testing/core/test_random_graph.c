/* The "random" baseline method (core/src/cpu/random_graph.c), added through
 * the method table alone: named and parsed, valid lists (k distinct other
 * points, true distances, ascending), the recall estimate near k / (n - 1),
 * deterministic per seed whatever the thread count, refused where it offers
 * nothing (index, inner product, the GPU). */
#include "test_util.h"

#include <math.h>
#include <string.h>

static double l2(const float *a, const float *b, int32_t d) {
  double s = 0;
  for (int32_t j = 0; j < d; ++j) s += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
  return sqrt(s);
}

/* k distinct other points per row, distances true and ascending. */
static void check_lists(const vic_knn *r, const float *pts, int64_t n, int32_t d, int32_t k) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int32_t t = 0; t < k; ++t) {
      int64_t id = r->ids[i * k + t];
      float dd = r->dist[i * k + t];
      int ok = id >= 0 && id < n && id != i;
      for (int32_t u = 0; u < t && ok; ++u) ok = r->ids[i * k + u] != id;
      if (ok && t > 0) ok = r->dist[i * k + t - 1] <= dd;
      if (ok) ok = fabs(dd - l2(pts + i * d, pts + id * d, d)) <= 1e-4 * (1.0 + dd);
      bad += !ok;
    }
  VT_CHECK(bad == 0, "%lld bad entries", (long long)bad);
}

int main(void) {
  vic_method m;
  VT_CHECK(vic_method_parse("random", &m) == VIC_OK && m == VIC_METHOD_RANDOM, "parse");
  VT_CHECK(strcmp(vic_method_name(VIC_METHOD_RANDOM), "random") == 0, "name %s", vic_method_name(VIC_METHOD_RANDOM));

  const int64_t n = 2000;
  const int32_t d = 8, k = 10;
  float *pts = vt_uniform(n, d, 1.f, 11);
  vic_data x = {pts, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_RANDOM;
  o.k = k;
  o.recall_sample = 400;

  vic_ctx *c1 = vt_ctx_threads(1, 5), *c4 = vt_ctx_threads(4, 5), *c9 = vt_ctx_threads(4, 9);
  vic_knn a, b, e;
  VT_OK(c1, vic_knn_build(c1, &x, &o, &a));
  VT_OK(c4, vic_knn_build(c4, &x, &o, &b));
  VT_OK(c9, vic_knn_build(c9, &x, &o, &e));
  check_lists(&a, pts, n, d, k);
  VT_CHECK(a.report.method == VIC_METHOD_RANDOM && a.report.backend == VIC_BACKEND_CPU, "report method %d backend %d",
           (int)a.report.method, (int)a.report.backend);
  /* about k / (n - 1) = 0.005 of the true neighbours, by chance */
  VT_CHECK(a.report.recall_estimate >= 0.0 && a.report.recall_estimate < 0.05, "recall estimate %g",
           a.report.recall_estimate);
  VT_CHECK(memcmp(a.ids, b.ids, (size_t)n * k * sizeof *a.ids) == 0, "1 and 4 threads give the same lists");
  VT_CHECK(memcmp(a.ids, e.ids, (size_t)n * k * sizeof *a.ids) != 0, "another seed gives other lists");
  vic_knn_free(&a);
  vic_knn_free(&b);
  vic_knn_free(&e);

  /* k >= n: clamped to n - 1, every row lists all the others */
  vic_data small = {pts, 5, d, 0, VIC_L2, NULL};
  o.k = 10;
  VT_OK(c1, vic_knn_build(c1, &small, &o, &a));
  VT_CHECK(a.k == 4, "k clamped to %d", (int)a.k);
  check_lists(&a, pts, 5, d, 4);
  vic_knn_free(&a);

  /* cosine: true cosine distances in [0, 2] */
  vic_data xc = x;
  xc.metric = VIC_COSINE;
  o.k = k;
  o.recall_sample = 0;
  VT_OK(c1, vic_knn_build(c1, &xc, &o, &a));
  int in_range = 1;
  for (int64_t i = 0; i < n * k; ++i) in_range &= a.dist[i] >= 0.f && a.dist[i] <= 2.f;
  VT_CHECK(in_range, "cosine distances in [0, 2]");
  vic_knn_free(&a);

  /* refusals, each with its message */
  vic_data xi = x;
  xi.metric = VIC_INNER_PRODUCT;
  VT_CHECK(vic_knn_build(c1, &xi, &o, &a) == VIC_E_UNSUPPORTED, "inner product refused");
  vic_index *ix = NULL;
  VT_CHECK(vic_index_build(c1, &x, &o, &ix) == VIC_E_UNSUPPORTED && ix == NULL, "no index");
  VT_CHECK(strstr(vic_ctx_error(c1), "no index") != NULL, "message: %s", vic_ctx_error(c1));
  vic_ctx *cg = vt_ctx(VIC_BACKEND_CUDA, 5);
  vic_status s = vic_knn_build(cg, &x, &o, &a);
  VT_CHECK(s == VIC_E_NODEVICE || s == VIC_E_UNSUPPORTED, "GPU demanded: %s (%s)", vic_status_name(s),
           vic_ctx_error(cg));
  VT_CHECK(a.ids == NULL, "nothing returned on refusal");

  vic_ctx_destroy(c1);
  vic_ctx_destroy(c4);
  vic_ctx_destroy(c9);
  vic_ctx_destroy(cg);
  free(pts);
  return vt_finish("test_random_graph");
}
