/* GGNN on the GPU against exact search on small data: for-all lists and
 * query results must match a naive double-precision reference closely
 * (recall thresholds), every reported distance must be the true distance
 * of the reported id, and well-separated clusters (a disconnected kNN
 * graph) must still be found through the component entry points.
 * Exits 77 without a CUDA device. */
#include "test_util.h"
#include "vic_kernels_ggnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #c); \
  fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); failures++; } } while (0)

static double dist(const float *a, const float *b, int d) {
  double s = 0;
  for (int j = 0; j < d; ++j) { double t = (double)a[j] - b[j]; s += t * t; }
  return sqrt(s);
}

/* exact k nearest rows of x to q (self = row to exclude, or -1) */
static void naive(const float *x, int64_t n, int d, const float *q, int64_t self, int k, int64_t *ids) {
  double *best = malloc((size_t)k * sizeof *best);
  for (int t = 0; t < k; ++t) { best[t] = INFINITY; ids[t] = -1; }
  for (int64_t i = 0; i < n; ++i) {
    if (i == self) continue;
    double v = dist(x + i * d, q, d);
    if (v >= best[k - 1]) continue;
    int t = k - 1;
    while (t > 0 && best[t - 1] > v) { best[t] = best[t - 1]; ids[t] = ids[t - 1]; t--; }
    best[t] = v; ids[t] = i;
  }
  free(best);
}

static double overlap(const int64_t *got, const int64_t *ref, int k) {
  int hit = 0;
  for (int t = 0; t < k; ++t)
    for (int u = 0; u < k; ++u) if (got[u] == ref[t]) { hit++; break; }
  return (double)hit / k;
}

static void run_case(const char *name, int64_t n, int d, int clusters, double spread, double min_forall,
                     double min_r1) {
  float *x = vt_blobs(n, d, clusters, spread, 11, 0);
  int64_t m = 300;
  float *q = vt_blobs(m, d, clusters, spread, 11, 0); /* same centres: the seed draws them first */
  uint64_t s = 99;
  for (int64_t i = 0; i < m * d; ++i) q[i] += (float)(0.3 * vt_gauss(&s));
  vick_call call;
  memset(&call, 0, sizeof call);
  call.seed = 5;
  vick_ggnn_params p;
  vick_ggnn_params_init(&p);
  vick_ggnn *g = NULL;
  int rc = vick_ggnn_build(&call, x, n, d, &p, &g);
  CHECK(rc == VICK_OK, "%s build: %s", name, call.message);
  if (rc != VICK_OK) { free(x); free(q); return; }
  vick_ggnn_info info;
  vick_ggnn_info_get(g, &info);
  printf("%s: n=%lld L=%d g=%d components=%lld entries=%d dnn1 mean %.3f max %.3f\n", name, (long long)n,
         info.layers, info.growth, (long long)info.components, info.entry_points, info.dnn1_mean, info.dnn1_max);

  const int k = 10;
  int64_t *ids = malloc((size_t)n * k * sizeof *ids), ref[10];
  float *dd = malloc((size_t)n * k * sizeof *dd);
  rc = vick_ggnn_forall(&call, g, k, ids, dd);
  CHECK(rc == VICK_OK, "%s forall: %s", name, call.message);
  double c10 = 0;
  int bad_dist = 0, self = 0;
  const int sample = 400;
  for (int i = 0; i < sample; ++i) {
    int64_t r = (int64_t)i * (n / sample);
    naive(x, n, d, x + r * d, r, k, ref);
    c10 += overlap(ids + r * k, ref, k);
    for (int t = 0; t < k; ++t) {
      int64_t v = ids[r * k + t];
      self += v == r;
      if (v < 0 || fabs(dist(x + v * d, x + r * d, d) - dd[r * k + t]) > 1e-3 * (1 + dd[r * k + t])) bad_dist++;
      if (t && dd[r * k + t] < dd[r * k + t - 1]) bad_dist++;
    }
  }
  c10 /= sample;
  printf("%s: for-all C@10 %.4f\n", name, c10);
  CHECK(c10 >= min_forall, "%s for-all C@10 %.4f < %.2f", name, c10, min_forall);
  CHECK(bad_dist == 0 && self == 0, "%s: %d wrong/unsorted distances, %d self neighbours", name, bad_dist, self);

  float *dn = malloc((size_t)n * sizeof *dn);
  double mean = 0, mx = 0;
  CHECK(vick_ggnn_dnn1(&call, g, dn, &mean, &mx) == VICK_OK, "dnn1: %s", call.message);
  CHECK(fabs(dn[0] - dd[0]) < 1e-6 && mx >= mean && mean > 0, "%s d_nn1 %g vs %g, mean %g max %g", name, dn[0], dd[0],
        mean, mx);

  int64_t *qi = malloc((size_t)m * k * sizeof *qi);
  float *qd = malloc((size_t)m * k * sizeof *qd);
  rc = vick_ggnn_query(&call, g, q, m, k, 0.5f, 0, qi, qd);
  CHECK(rc == VICK_OK, "%s query: %s", name, call.message);
  double r1 = 0, qc10 = 0;
  for (int64_t i = 0; i < m; ++i) {
    naive(x, n, d, q + i * d, -1, k, ref);
    r1 += qi[i * k] == ref[0];
    qc10 += overlap(qi + i * k, ref, k);
    for (int t = 0; t < k; ++t)
      if (qi[i * k + t] < 0 || fabs(dist(x + qi[i * k + t] * d, q + i * d, d) - qd[i * k + t]) > 1e-3 * (1 + qd[i * k + t]))
        bad_dist++;
  }
  r1 /= m;
  qc10 /= m;
  printf("%s: query tau 0.5 R@1 %.4f C@10 %.4f\n", name, r1, qc10);
  CHECK(r1 >= min_r1, "%s query R@1 %.4f < %.2f", name, r1, min_r1);
  CHECK(bad_dist == 0, "%s: %d wrong query distances", name, bad_dist);

  /* bad arguments are refused with a message, not a crash */
  CHECK(vick_ggnn_query(&call, g, q, m, 0, 0.5f, 0, qi, qd) == VICK_ARGUMENT && call.message[0], "k = 0");
  CHECK(vick_ggnn_forall(&call, g, info.k + 1, ids, dd) == VICK_ARGUMENT, "for-all k > graph k");
  vick_ggnn_free(g);
  free(x); free(q); free(ids); free(dd); free(dn); free(qi); free(qd);
}

int main(int argc, char **argv) {
  const int64_t n = vt_gpu_start(argc, argv) ? 3000 : 20000;
  vick_call call;
  memset(&call, 0, sizeof call);
  vick_ggnn_params p;
  vick_ggnn_params_init(&p);
  vick_ggnn *g = NULL;
  float two[4] = {0, 0, 1, 1};
  p.k = 200;
  CHECK(vick_ggnn_build(&call, two, 2, 2, &p, &g) == VICK_ARGUMENT && g == NULL, "k > 96 refused");

  run_case("connected", n, 32, 8, 1.0, 0.95, 0.95);
  /* 100 clusters far apart: the bottom graph falls into components */
  run_case("islands", n, 32, 100, 30.0, 0.95, 0.95);
  if (failures) fprintf(stderr, "test_ggnn: %d failures\n", failures);
  else printf("test_ggnn: ok\n");
  return failures ? 1 : 0;
}
